//! Folds what `jnp.linalg.eigh` and `jnp.linalg.eigvalsh` trace to around the `eigh` primitive into one
//! `eigh_folded` step:
//!
//! ```text
//!   t = transpose[.., r-1, r-2] a;  s = add a t;  h = div s (broadcast 2.0)     (symmetrize_input=True)
//!   v, w = eigh h
//! ```
//! becomes `v, w = eigh_folded[symmetrize=True] a`: the backend's copy into faer's workspace computes
//! `(a_ij + a_ji) / 2` (the same rounding as the `div`), so the elementwise step and its n×n buffer go (at
//! n = 1000 about 0.7 ms of the decomposition's 50). `symmetrize` runs before the simplify rounds (the
//! form Python sends, as `opt::cholesky`); `values_only` after them: an `eigh` whose eigenvectors nothing
//! reads (`eigvalsh`) loses that result and computes the eigenvalues alone (faer's tridiagonal QR without
//! vectors: about 0.6x the time at n = 1000). Real operands only.
use std::collections::HashMap;

use super::cholesky::{symmetrized, var, Defs};
use crate::ir::{LibOp, LinalgOp, Prim, Program, VarId};

/// `eigh` of `(a + a^T) / 2` becomes `eigh_folded[symmetrize=True]` of `a`.
pub fn symmetrize(mut p: Program) -> Program {
    if !p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::Linalg(LinalgOp::Eigh { .. })))) {
        return p;
    }
    let found: Vec<(usize, crate::ir::Atom, bool)> = {
        let defs = Defs::new(&p);
        p.eqns
            .iter()
            .enumerate()
            .filter_map(|(at, e)| match e.prim {
                Prim::Lib(LibOp::Linalg(LinalgOp::Eigh { lower, .. })) if e.inputs.len() == 1 => {
                    let r = e.outputs.first()?.1.shape.len();
                    (r >= 2).then_some(())?;
                    symmetrized(&defs, &e.inputs[0], r).map(|a| (at, a, lower))
                }
                _ => None,
            })
            .collect()
    };
    for (at, a, lower) in found {
        // `a` is defined before the symmetrize, so before this equation
        p.eqns[at].prim = Prim::Lib(LibOp::Linalg(LinalgOp::EighFolded { lower, symmetrize: true, vectors: true }));
        p.eqns[at].inputs = vec![a];
    }
    p
}

/// An `eigh` (or `eigh_folded`) whose eigenvectors nothing reads keeps only its eigenvalues.
pub fn values_only(mut p: Program) -> Program {
    let is_eigh = |prim: &Prim| {
        matches!(prim, Prim::Lib(LibOp::Linalg(LinalgOp::Eigh { .. } | LinalgOp::EighFolded { vectors: true, .. })))
    };
    if !p.eqns.iter().any(|e| is_eigh(&e.prim)) {
        return p;
    }
    let mut uses: HashMap<VarId, usize> = HashMap::new();
    for a in p.eqns.iter().flat_map(|e| e.inputs.iter()).chain(p.outvars.iter()) {
        if let Some(v) = var(a) {
            *uses.entry(v).or_default() += 1;
        }
    }
    for e in p.eqns.iter_mut() {
        if !is_eigh(&e.prim) || e.outputs.len() != 2 || uses.contains_key(&e.outputs[0].0) {
            continue;
        }
        let (lower, symmetrize) = match e.prim {
            Prim::Lib(LibOp::Linalg(LinalgOp::Eigh { lower, .. })) => (lower, false),
            Prim::Lib(LibOp::Linalg(LinalgOp::EighFolded { lower, symmetrize, .. })) => (lower, symmetrize),
            _ => continue,
        };
        e.prim = Prim::Lib(LibOp::Linalg(LinalgOp::EighFolded { lower, symmetrize, vectors: false }));
        e.outputs.remove(0);
    }
    p
}

#[cfg(test)]
mod tests {
    use crate::ir::parse::parse_program;
    use crate::ir::{Atom, LibOp, LinalgOp, Prim};

    /// `jnp.linalg.eigh` of f32[3, 3], as cranax's Python sends it; `outvars` [6, 5] (w, v).
    const EIGH: &str = r#"{"version":1,"name":"main","invars":[[0,"f32",[3,3]]],"eqns":[{"prim":"transpose","params":{"permutation":[1,0]},"in":[0],"out":[[1,"f32",[3,3]]]},{"prim":"add","params":{},"in":[0,1],"out":[[2,"f32",[3,3]]]},{"prim":"broadcast_in_dim","params":{"shape":[3,3],"broadcast_dimensions":[]},"in":[{"lit":2.0,"dtype":"f32"}],"out":[[3,"f32",[3,3]]]},{"prim":"div","params":{},"in":[2,3],"out":[[4,"f32",[3,3]]]},{"prim":"eigh","params":{"lower":true,"sort_eigenvalues":true},"in":[4],"out":[[5,"f32",[3,3]],[6,"f32",[3]]]}],"outvars":[6,5]}"#;

    fn optimized(json: &str) -> crate::ir::Program {
        crate::opt::optimize(parse_program(json).unwrap()).unwrap()
    }

    fn folded(p: &crate::ir::Program) -> Option<(bool, bool, bool)> {
        p.eqns.iter().find_map(|e| match e.prim {
            Prim::Lib(LibOp::Linalg(LinalgOp::EighFolded { lower, symmetrize, vectors })) => Some((lower, symmetrize, vectors)),
            _ => None,
        })
    }

    #[test]
    fn eigh_of_the_symmetrized_operand_becomes_one_step() {
        let p = optimized(EIGH);
        assert_eq!(p.eqns.len(), 1, "{:?}", p.eqns.iter().map(|e| e.prim.name()).collect::<Vec<_>>());
        assert_eq!(folded(&p), Some((true, true, true)));
        assert_eq!(p.eqns[0].inputs, [Atom::Var(0)]);
        assert_eq!(p.eqns[0].outputs.len(), 2);
    }

    #[test]
    fn unread_eigenvectors_are_not_computed() {
        // eigvalsh: only w is returned
        let p = optimized(&EIGH.replace(r#""outvars":[6,5]"#, r#""outvars":[6]"#));
        assert_eq!(folded(&p), Some((true, true, false)));
        assert_eq!(p.eqns.len(), 1);
        assert_eq!(p.eqns[0].outputs.len(), 1);
        assert_eq!(p.eqns[0].outputs[0].0, 6);
        // symmetrize_input=False, lower=False: still values only, of the operand as it is
        let json = EIGH.replace(r#""in":[4],"out":[[5"#, r#""in":[0],"out":[[5"#).replace(r#""lower":true"#, r#""lower":false"#);
        let p = optimized(&json.replace(r#""outvars":[6,5]"#, r#""outvars":[6]"#));
        assert_eq!(folded(&p), Some((false, false, false)));
        assert_eq!(p.eqns[0].inputs, [Atom::Var(0)]);
    }

    #[test]
    fn other_forms_are_left_alone() {
        // halving something else than a + a^T: the eigh stays as it is
        let p = optimized(&EIGH.replace(r#""in":[0,1],"out":[[2"#, r#""in":[0,0],"out":[[2"#));
        assert_eq!(folded(&p), None);
        assert!(p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::Linalg(LinalgOp::Eigh { .. })))));
        // the symmetrized matrix also returned: the eigh folds, the symmetrize stays for the other reader
        let p = optimized(&EIGH.replace(r#""outvars":[6,5]"#, r#""outvars":[6,5,4]"#));
        assert_eq!(folded(&p), Some((true, true, true)));
        assert!(p.eqns.iter().any(|e| matches!(e.prim, Prim::Binary(crate::ir::BinaryOp::Div))));
    }
}
