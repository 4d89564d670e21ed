//! Folds a `transpose` feeding a `dot_general` into the dot's dimension numbers, so `x @ y.T` reads `y`
//! in place (gemm takes any strides) instead of materializing the transpose. Valid when the operand's
//! free dimensions keep their relative order under the permutation (the output's dim order is unchanged);
//! contracting and batch dimensions may be permuted freely. The transpose, if now unused, is left to DCE.
use std::collections::HashMap;

use crate::ir::{Atom, LibOp, Prim, Program, VarId};

/// Maps `dims` of the transposed value to the transpose operand's dims; `None` if free dims reorder.
fn remap(perm: &[usize], contract: &[usize], batch: &[usize]) -> Option<(Vec<usize>, Vec<usize>)> {
    let free: Vec<usize> = (0..perm.len()).filter(|d| !contract.contains(d) && !batch.contains(d)).collect();
    if free.windows(2).any(|w| perm[w[0]] > perm[w[1]]) {
        return None;
    }
    Some((contract.iter().map(|&d| perm[d]).collect(), batch.iter().map(|&d| perm[d]).collect()))
}

pub fn run(mut p: Program) -> Program {
    let mut transposes: HashMap<VarId, (Atom, Vec<usize>)> = HashMap::new();
    for e in p.eqns.iter_mut() {
        if let Prim::Transpose { permutation } = &e.prim {
            if let (Some((v, _)), Some(src)) = (e.outputs.first(), e.inputs.first()) {
                // A transpose of a transpose composes.
                let (src, perm) = match src {
                    Atom::Var(u) => match transposes.get(u) {
                        Some((s2, p2)) => (s2.clone(), permutation.iter().map(|&i| p2[i]).collect()),
                        None => (src.clone(), permutation.clone()),
                    },
                    lit => (lit.clone(), permutation.clone()),
                };
                transposes.insert(*v, (src, perm));
            }
            continue;
        }
        let Prim::Lib(LibOp::DotGeneral { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, .. }) = &mut e.prim
        else {
            continue;
        };
        for side in 0..2 {
            let Some(Atom::Var(v)) = e.inputs.get(side) else { continue };
            let Some((src, perm)) = transposes.get(v) else { continue };
            let (c, b) = if side == 0 { (&mut *lhs_contracting, &mut *lhs_batch) } else { (&mut *rhs_contracting, &mut *rhs_batch) };
            if let Some((nc, nb)) = remap(perm, c, b) {
                *c = nc;
                *b = nb;
                e.inputs[side] = src.clone();
            }
        }
    }
    p
}
