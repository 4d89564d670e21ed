//! Folds what `jnp.linalg.cholesky` (and `lax.linalg.cholesky`) trace to around the `cholesky` primitive
//! into it:
//!
//! ```text
//!   t = transpose[.., r-1, r-2] a;  s = add a t;  h = div s (broadcast 2.0)     (symmetrize_input=True)
//!   f = cholesky h
//!   mask = ge iota[r-2] (sub iota[r-1] 0)                                          (JAX's `tril`)
//!   l = select_n mask (broadcast 0.0) f
//! ```
//! becomes `l = cholesky_tril[symmetrize=True] a`. The backend's copy into faer's workspace computes
//! `(a_ij + a_ji) / 2` (the same rounding as the `div`), and its copy out writes zeros above the diagonal
//! (NaNs below it for a matrix that is not positive definite, as the select made of the NaN factor). At
//! n = 100 the three elementwise steps around the factorization cost about a third of its time. Matched on
//! the program as Python sends it (before the simplify rounds rewrite the zero broadcasts); only the
//! select is rewritten, the equations left unused are DCE's. Real operands only.
use std::collections::HashMap;

use crate::ir::{Atom, BinaryOp, CompareOp, LibOp, LinalgOp, Prim, Program, Scalar, VarId};

pub(super) fn var(a: &Atom) -> Option<VarId> {
    match a {
        Atom::Var(v) => Some(*v),
        Atom::Lit(..) => None,
    }
}

/// Which equation defines each variable (shared with `opt::eigh`).
pub(super) struct Defs<'a>(&'a Program, HashMap<VarId, usize>);

impl<'a> Defs<'a> {
    pub(super) fn new(p: &'a Program) -> Self {
        let mut d = HashMap::new();
        for (i, e) in p.eqns.iter().enumerate() {
            for (v, _) in &e.outputs {
                d.insert(*v, i);
            }
        }
        Defs(p, d)
    }

    /// The equation defining `a` (a variable made by a single-output equation).
    fn eqn(&self, a: &Atom) -> Option<&'a crate::ir::Eqn> {
        let e = &self.0.eqns[*self.1.get(&var(a)?)?];
        (e.outputs.len() == 1).then_some(e)
    }

    /// Whether `a` is the scalar `value` (a literal, or a broadcast of one).
    fn is_const(&self, a: &Atom, value: f64) -> bool {
        let lit = |a: &Atom| matches!(a, Atom::Lit(s, _) if scalar(*s) == Some(value));
        lit(a)
            || self.eqn(a).is_some_and(|e| {
                matches!(&e.prim, Prim::BroadcastInDim { broadcast_dimensions, .. } if broadcast_dimensions.is_empty())
                    && lit(&e.inputs[0])
            })
    }

    /// Whether `a` is `iota[dimension]` over `shape`, plus or minus a zero.
    fn is_iota(&self, a: &Atom, shape: &[usize], dim: usize) -> bool {
        let Some(e) = self.eqn(a) else { return false };
        match &e.prim {
            Prim::Iota { shape: s, dimension, .. } => s == shape && *dimension == dim,
            Prim::Binary(BinaryOp::Add | BinaryOp::Sub) => self.is_iota(&e.inputs[0], shape, dim) && self.is_const(&e.inputs[1], 0.0),
            _ => false,
        }
    }
}

fn scalar(s: Scalar) -> Option<f64> {
    match s {
        Scalar::Int(i) => Some(i as f64),
        Scalar::Float(f) => Some(f),
        Scalar::Bool(_) => None,
    }
}

/// `(cholesky's operand, symmetrize)` when equation `at` is the select of the pattern above.
fn matched(p: &Program, at: usize, defs: &Defs, uses: &HashMap<VarId, usize>) -> Option<(Atom, bool)> {
    let sel = &p.eqns[at];
    if !matches!(sel.prim, Prim::SelectN) || sel.inputs.len() != 3 {
        return None;
    }
    let shape = &sel.outputs[0].1.shape;
    let r = shape.len();
    let chol = defs.eqn(&sel.inputs[2])?;
    if !matches!(chol.prim, Prim::Lib(LibOp::Linalg(LinalgOp::Cholesky))) || r < 2 || uses.get(&var(&sel.inputs[2])?) != Some(&1) {
        return None;
    }
    if !defs.is_const(&sel.inputs[1], 0.0) {
        return None;
    }
    let mask = defs.eqn(&sel.inputs[0])?;
    if !matches!(mask.prim, Prim::Compare(CompareOp::Ge))
        || !defs.is_iota(&mask.inputs[0], shape, r - 2)
        || !defs.is_iota(&mask.inputs[1], shape, r - 1)
    {
        return None;
    }
    let sym = symmetrized(defs, &chol.inputs[0], r);
    Some(match sym {
        Some(a) => (a, true),
        None => (chol.inputs[0].clone(), false),
    })
}

/// `a` when `h` is `(a + transpose(a)) / 2` of rank `r` (the transpose swapping the last two axes): JAX's
/// `symmetrize_input`, as Python sends it (shared with `opt::eigh`).
pub(super) fn symmetrized(defs: &Defs, h: &Atom, r: usize) -> Option<Atom> {
    let div = defs.eqn(h)?;
    if !matches!(div.prim, Prim::Binary(BinaryOp::Div)) || !defs.is_const(&div.inputs[1], 2.0) {
        return None;
    }
    let add = defs.eqn(&div.inputs[0])?;
    if !matches!(add.prim, Prim::Binary(BinaryOp::Add)) {
        return None;
    }
    let swap: Vec<usize> = (0..r - 2).chain([r - 1, r - 2]).collect();
    let t = defs.eqn(&add.inputs[1])?;
    match &t.prim {
        Prim::Transpose { permutation } if *permutation == swap && t.inputs[0] == add.inputs[0] => Some(add.inputs[0].clone()),
        _ => None,
    }
}

pub fn run(mut p: Program) -> Program {
    if !p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::Linalg(LinalgOp::Cholesky)))) {
        return p;
    }
    let mut uses: HashMap<VarId, usize> = HashMap::new();
    for a in p.eqns.iter().flat_map(|e| e.inputs.iter()).chain(p.outvars.iter()) {
        if let Some(v) = var(a) {
            *uses.entry(v).or_default() += 1;
        }
    }
    let found: Vec<(usize, Atom, bool)> = {
        let defs = Defs::new(&p);
        (0..p.eqns.len()).filter_map(|at| matched(&p, at, &defs, &uses).map(|(a, s)| (at, a, s))).collect()
    };
    for (at, a, symmetrize) in found {
        // `a` is defined before the cholesky, so before this equation
        p.eqns[at].prim = Prim::Lib(LibOp::Linalg(LinalgOp::CholeskyTril { symmetrize }));
        p.eqns[at].inputs = vec![a];
    }
    p
}

#[cfg(test)]
mod tests {
    use crate::ir::parse::parse_program;
    use crate::ir::{Atom, LibOp, LinalgOp, Prim};

    /// `jnp.linalg.cholesky` of f64[3, 3], as cranax's Python sends it.
    const CHOL: &str = r#"{"version":1,"name":"main","invars":[[0,"f64",[3,3]]],"eqns":[{"prim":"transpose","params":{"permutation":[1,0]},"in":[0],"out":[[1,"f64",[3,3]]]},{"prim":"add","params":{},"in":[0,1],"out":[[2,"f64",[3,3]]]},{"prim":"broadcast_in_dim","params":{"shape":[3,3],"broadcast_dimensions":[]},"in":[{"lit":2.0,"dtype":"f64"}],"out":[[3,"f64",[3,3]]]},{"prim":"div","params":{},"in":[2,3],"out":[[4,"f64",[3,3]]]},{"prim":"cholesky","params":{},"in":[4],"out":[[5,"f64",[3,3]]]},{"prim":"iota","params":{"dtype":"i32","shape":[3,3],"dimension":0},"in":[],"out":[[6,"i32",[3,3]]]},{"prim":"iota","params":{"dtype":"i32","shape":[3,3],"dimension":1},"in":[],"out":[[7,"i32",[3,3]]]},{"prim":"broadcast_in_dim","params":{"shape":[3,3],"broadcast_dimensions":[]},"in":[{"lit":0,"dtype":"i32"}],"out":[[8,"i32",[3,3]]]},{"prim":"sub","params":{},"in":[7,8],"out":[[9,"i32",[3,3]]]},{"prim":"ge","params":{},"in":[6,9],"out":[[10,"bool",[3,3]]]},{"prim":"broadcast_in_dim","params":{"shape":[3,3],"broadcast_dimensions":[]},"in":[{"lit":0.0,"dtype":"f64"}],"out":[[11,"f64",[3,3]]]},{"prim":"select_n","params":{},"in":[10,11,5],"out":[[12,"f64",[3,3]]]}],"outvars":[12]}"#;

    fn optimized(json: &str) -> crate::ir::Program {
        crate::opt::optimize(parse_program(json).unwrap()).unwrap()
    }

    #[test]
    fn cholesky_tril_becomes_one_step() {
        let p = optimized(CHOL);
        assert_eq!(p.eqns.len(), 1, "{:?}", p.eqns.iter().map(|e| e.prim.name()).collect::<Vec<_>>());
        assert!(matches!(p.eqns[0].prim, Prim::Lib(LibOp::Linalg(LinalgOp::CholeskyTril { symmetrize: true }))));
        assert_eq!(p.eqns[0].inputs, [Atom::Var(0)]);
    }

    #[test]
    fn other_forms_are_left_alone_or_partly_folded() {
        // symmetrize_input=False: the tril still folds, on the operand as it is
        let json = CHOL.replace(r#""in":[4],"out":[[5"#, r#""in":[0],"out":[[5"#);
        let p = optimized(&json);
        assert!(matches!(p.eqns[0].prim, Prim::Lib(LibOp::Linalg(LinalgOp::CholeskyTril { symmetrize: false }))));
        assert_eq!(p.eqns.len(), 1);
        // the factor also read elsewhere: nothing folds (the select stays)
        let p = optimized(&CHOL.replace(r#""outvars":[12]"#, r#""outvars":[12,5]"#));
        assert!(p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::Linalg(LinalgOp::Cholesky)))));
        assert!(!p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::Linalg(LinalgOp::CholeskyTril { .. })))));
        // triu instead of tril (le): not this pattern
        let p = optimized(&CHOL.replace(r#""prim":"ge""#, r#""prim":"le""#));
        assert!(!p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::Linalg(LinalgOp::CholeskyTril { .. })))));
        // halving something else than a + a^T: the tril folds, the symmetrize stays a div
        let p = optimized(&CHOL.replace(r#""in":[0,1],"out":[[2"#, r#""in":[0,0],"out":[[2"#));
        assert!(p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::Linalg(LinalgOp::CholeskyTril { symmetrize: false })))));
    }
}
