//! Fuses what `jnp.linalg.solve` (and `inv`, which solves against the identity) traces to into one
//! `lu_solve` step:
//!
//! ```text
//!   lu, _, perm = lu a
//!   idx = broadcast_in_dim perm  (shape batch + (n, 1))      [+ concatenate(iota_0, ..., iota_nb-1, idx)]
//!   pb = gather b idx            (b's rows in perm's order: offset_dims = (r-1,), the rest collapsed)
//!   y = triangular_solve[left, lower, unit] lu pb
//!   x = triangular_solve[left, upper] lu y
//! ```
//! becomes `x = lu_solve a b`. The backend then factors and solves each matrix in one pass, with no LU,
//! pivot, permutation or permuted-`b` arrays in memory, and no step boundaries between them: for a batch
//! of small systems those steps, not the arithmetic, are the cost. Only when nothing else reads the
//! factors or the pivots (otherwise the `lu` would stay and run twice); real operands only (complex ones
//! travel as part pairs through another form). The equations left unused are DCE's.
use std::collections::HashMap;

use crate::ir::{Atom, DType, IndexMode, LibOp, LinalgOp, Prim, Program, VarId};

/// The equation defining each variable, with the output's position.
fn definitions(p: &Program) -> HashMap<VarId, (usize, usize)> {
    let mut d = HashMap::new();
    for (i, e) in p.eqns.iter().enumerate() {
        for (k, (v, _)) in e.outputs.iter().enumerate() {
            d.insert(*v, (i, k));
        }
    }
    d
}

fn uses(p: &Program) -> HashMap<VarId, usize> {
    let mut u: HashMap<VarId, usize> = HashMap::new();
    for a in p.eqns.iter().flat_map(|e| e.inputs.iter()).chain(p.outvars.iter()) {
        if let Atom::Var(v) = a {
            *u.entry(*v).or_default() += 1;
        }
    }
    u
}

fn var(a: &Atom) -> Option<VarId> {
    match a {
        Atom::Var(v) => Some(*v),
        Atom::Lit(..) => None,
    }
}

/// `lu_solve`'s operands `(a, b)` when equation `at` is the upper solve of the pattern above.
fn matched(p: &Program, at: usize, def: &HashMap<VarId, (usize, usize)>, uses: &HashMap<VarId, usize>) -> Option<(Atom, Atom)> {
    let used = |v: VarId| uses.get(&v).copied().unwrap_or(0);
    let eqn_of = |a: &Atom| var(a).and_then(|v| def.get(&v)).map(|&(i, k)| (&p.eqns[i], k));
    let tri = |e: &crate::ir::Eqn, want_lower: bool| match &e.prim {
        Prim::Lib(LibOp::Linalg(LinalgOp::TriangularSolve { left_side: true, lower, transpose_a: false, unit_diagonal, .. })) => {
            *lower == want_lower && *unit_diagonal == want_lower
        }
        _ => false,
    };
    let upper = &p.eqns[at];
    if !tri(upper, false) || !matches!(upper.outputs[0].1.dtype, DType::F32 | DType::F64) {
        return None;
    }
    let lu_var = var(&upper.inputs[0])?;
    let (lower, _) = eqn_of(&upper.inputs[1])?;
    if !tri(lower, true) || var(&lower.inputs[0])? != lu_var || used(var(&upper.inputs[1])?) != 1 {
        return None;
    }
    // the factors: output 0 of an `lu` read by the two solves only, its pivots by nothing
    let (lu, 0) = eqn_of(&upper.inputs[0])? else { return None };
    if !matches!(lu.prim, Prim::Lib(LibOp::Linalg(LinalgOp::Lu))) || used(lu_var) != 2 || used(lu.outputs[1].0) != 0 {
        return None;
    }
    let (perm, rank) = (lu.outputs[2].0, lu.outputs[0].1.shape.len());
    let shape = &lu.outputs[0].1.shape;
    if shape[rank - 1] != shape[rank - 2] || used(perm) != 1 {
        return None;
    }
    // the permuted right-hand side
    let (gather, _) = eqn_of(&lower.inputs[1])?;
    let Prim::Lib(LibOp::Gather { offset_dims, collapsed_slice_dims, start_index_map, slice_sizes, mode: IndexMode::Clip, .. }) =
        &gather.prim
    else {
        return None;
    };
    let b = &gather.inputs[0];
    let bv = var(b)?;
    let bv = match def.get(&bv) {
        Some(&(i, k)) => &p.eqns[i].outputs[k].1,
        None => &p.invars.iter().find(|(w, _)| *w == bv)?.1,
    };
    let lead: Vec<usize> = (0..rank - 1).collect();
    let k = *bv.shape.last()?;
    let sizes: Vec<usize> = (0..rank - 1).map(|_| 1).chain([k]).collect();
    if bv.shape.len() != rank
        || bv.shape[..rank - 1] != shape[..rank - 1]
        || *offset_dims != [rank - 1]
        || *collapsed_slice_dims != lead
        || *start_index_map != lead
        || *slice_sizes != sizes
        || gather.outputs[0].1.shape != bv.shape
    {
        return None;
    }
    // its index vectors: (batch iotas..., perm) along a last axis
    let (mut idx, _) = eqn_of(&gather.inputs[1])?;
    let mut col_shape: Vec<usize> = shape[..rank - 1].to_vec();
    col_shape.push(1);
    if rank > 2 {
        let Prim::Lib(LibOp::Concatenate { dimension }) = &idx.prim else { return None };
        if *dimension != rank - 1 || idx.inputs.len() != rank - 1 {
            return None;
        }
        for (d, it) in idx.inputs[..rank - 2].iter().enumerate() {
            let (ie, _) = eqn_of(it)?;
            match &ie.prim {
                Prim::Iota { dtype: DType::I32, shape, dimension } if *dimension == d && *shape == col_shape => {}
                _ => return None,
            }
        }
        idx = eqn_of(&idx.inputs[rank - 2])?.0;
    }
    // the pivots given a last size-1 axis: a broadcast, or the reshape `degenerate` turns it into
    let fits = match &idx.prim {
        Prim::BroadcastInDim { shape: bshape, broadcast_dimensions } => *bshape == col_shape && *broadcast_dimensions == lead,
        Prim::Reshape { new_sizes } => *new_sizes == col_shape,
        _ => false,
    };
    if !fits || var(&idx.inputs[0])? != perm {
        return None;
    }
    Some((lu.inputs[0].clone(), b.clone()))
}

pub fn run(mut p: Program) -> Program {
    if !p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::Linalg(LinalgOp::Lu)))) {
        return p;
    }
    let (def, uses) = (definitions(&p), uses(&p));
    for at in 0..p.eqns.len() {
        if let Some((a, b)) = matched(&p, at, &def, &uses) {
            // a and b are defined before the lu and the gather, so before this equation
            p.eqns[at].prim = Prim::Lib(LibOp::Linalg(LinalgOp::LuSolve));
            p.eqns[at].inputs = vec![a, b];
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use crate::ir::parse::parse_program;
    use crate::ir::{LibOp, LinalgOp, Prim};

    /// `jnp.linalg.solve` of a[2, 3, 3], b[2, 3, 1], as cranax's Python sends it.
    const SOLVE: &str = r#"{"version":1,"name":"main","invars":[[0,"f32",[2,3,3]],[1,"f32",[2,3,1]]],"eqns":[{"prim":"lu","params":{},"in":[0],"out":[[2,"f32",[2,3,3]],[3,"i32",[2,3]],[4,"i32",[2,3]]]},{"prim":"broadcast_in_dim","params":{"shape":[2,3,1],"broadcast_dimensions":[0,1]},"in":[4],"out":[[5,"i32",[2,3,1]]]},{"prim":"iota","params":{"dtype":"i32","shape":[2,3,1],"dimension":0},"in":[],"out":[[6,"i32",[2,3,1]]]},{"prim":"concatenate","params":{"dimension":2},"in":[6,5],"out":[[7,"i32",[2,3,2]]]},{"prim":"gather","params":{"offset_dims":[2],"collapsed_slice_dims":[0,1],"start_index_map":[0,1],"slice_sizes":[1,1,1],"mode":"clip","fill_value":null},"in":[1,7],"out":[[8,"f32",[2,3,1]]]},{"prim":"triangular_solve","params":{"left_side":true,"lower":true,"transpose_a":false,"conjugate_a":false,"unit_diagonal":true},"in":[2,8],"out":[[9,"f32",[2,3,1]]]},{"prim":"triangular_solve","params":{"left_side":true,"lower":false,"transpose_a":false,"conjugate_a":false,"unit_diagonal":false},"in":[2,9],"out":[[10,"f32",[2,3,1]]]}],"outvars":[10]}"#;

    fn prims(json: &str) -> Vec<String> {
        let p = crate::opt::optimize(parse_program(json).unwrap()).unwrap();
        p.eqns.iter().map(|e| e.prim.name().to_string()).collect()
    }

    #[test]
    fn solve_becomes_one_step() {
        assert_eq!(prims(SOLVE), ["lu_solve"]);
        let p = crate::opt::optimize(parse_program(SOLVE).unwrap()).unwrap();
        assert!(matches!(p.eqns[0].prim, Prim::Lib(LibOp::Linalg(LinalgOp::LuSolve))));
        assert_eq!(p.eqns[0].inputs, [crate::ir::Atom::Var(0), crate::ir::Atom::Var(1)]);
    }

    #[test]
    fn factors_used_elsewhere_are_left_alone() {
        // the LU is also an output: fusing would factor twice
        let json = SOLVE.replace(r#""outvars":[10]"#, r#""outvars":[10,2]"#);
        assert!(prims(&json).contains(&"lu".to_string()), "{:?}", prims(&json));
        assert!(!prims(&json).contains(&"lu_solve".to_string()));
        // the pivots too
        let json = SOLVE.replace(r#""outvars":[10]"#, r#""outvars":[10,3]"#);
        assert!(!prims(&json).contains(&"lu_solve".to_string()));
        // another permutation of b (iota along the wrong axis) is not this pattern
        let json = SOLVE.replace(r#""dimension":0},"in":[]"#, r#""dimension":1},"in":[]"#);
        assert!(!prims(&json).contains(&"lu_solve".to_string()));
    }
}
