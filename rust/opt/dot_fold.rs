//! Folds a `transpose` feeding a `dot_general` into the dot's dimension numbers, so `x @ y.T` reads `y`
//! in place (gemm takes any strides) instead of materializing the transpose. Valid when the operand's
//! free dimensions keep their relative order under the permutation (the output's dim order is unchanged);
//! contracting and batch dimensions may be permuted freely. The transpose, if now unused, is left to DCE.
//!
//! Also folds a `transpose` *of* a dot's result that swaps its lhs-free and rhs-free blocks (reverse-mode
//! weight gradients, `(a @ b).T`): that is the dot with its operands swapped, so gemm writes the transposed
//! layout directly instead of a copy pass over the result.
use std::collections::HashMap;

use crate::ir::{Atom, LibOp, Prim, Program, VarId};

/// The permutation of a dot's output `[batch, lhs free, rhs free]` that swaps the two free blocks.
fn swap_perm(nb: usize, nl: usize, nr: usize) -> Vec<usize> {
    (0..nb).chain(nb + nl..nb + nl + nr).chain(nb..nb + nl).collect()
}

fn fold_output_transposes(mut p: Program) -> Program {
    let mut uses: HashMap<VarId, usize> = HashMap::new();
    for a in p.eqns.iter().flat_map(|e| e.inputs.iter()).chain(p.outvars.iter()) {
        if let Atom::Var(v) = a {
            *uses.entry(*v).or_default() += 1;
        }
    }
    let mut rank: HashMap<VarId, usize> = p.invars.iter().map(|(v, a)| (*v, a.shape.len())).collect();
    let mut dot_at: HashMap<VarId, usize> = HashMap::new();
    let mut dead = vec![false; p.eqns.len()];
    for i in 0..p.eqns.len() {
        for (v, a) in &p.eqns[i].outputs {
            rank.insert(*v, a.shape.len());
        }
        if let Prim::Lib(LibOp::DotGeneral { .. }) = &p.eqns[i].prim {
            if let Some((v, _)) = p.eqns[i].outputs.first() {
                dot_at.insert(*v, i);
            }
            continue;
        }
        let Prim::Transpose { permutation } = &p.eqns[i].prim else { continue };
        let (Some(Atom::Var(d)), Some(out)) = (p.eqns[i].inputs.first(), p.eqns[i].outputs.first().cloned()) else {
            continue;
        };
        let Some(&j) = dot_at.get(d) else { continue };
        if uses.get(d) != Some(&1) {
            continue;
        }
        let dot = &p.eqns[j];
        let (Prim::Lib(LibOp::DotGeneral { lhs_contracting: lc, rhs_contracting: rc, lhs_batch: lb, .. }), [l, r]) =
            (&dot.prim, dot.inputs.as_slice())
        else {
            continue;
        };
        let rk = |a: &Atom| match a {
            Atom::Var(v) => rank.get(v).copied(),
            Atom::Lit(..) => Some(0),
        };
        let (Some(lr), Some(rr)) = (rk(l), rk(r)) else { continue };
        let nb = lb.len();
        let (Some(nl), Some(nr)) = (lr.checked_sub(lc.len() + nb), rr.checked_sub(rc.len() + nb)) else { continue };
        if *permutation != swap_perm(nb, nl, nr) {
            continue;
        }
        let dot = &mut p.eqns[j];
        if let Prim::Lib(LibOp::DotGeneral { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, .. }) = &mut dot.prim {
            std::mem::swap(lhs_contracting, rhs_contracting);
            std::mem::swap(lhs_batch, rhs_batch);
        }
        dot.inputs.swap(0, 1);
        dot.outputs[0] = out;
        dead[i] = true;
    }
    let mut k = 0;
    p.eqns.retain(|_| {
        k += 1;
        !dead[k - 1]
    });
    p
}

/// Maps `dims` of the transposed value to the transpose operand's dims; `None` if free dims reorder.
fn remap(perm: &[usize], contract: &[usize], batch: &[usize]) -> Option<(Vec<usize>, Vec<usize>)> {
    let free: Vec<usize> = (0..perm.len()).filter(|d| !contract.contains(d) && !batch.contains(d)).collect();
    if free.windows(2).any(|w| perm[w[0]] > perm[w[1]]) {
        return None;
    }
    Some((contract.iter().map(|&d| perm[d]).collect(), batch.iter().map(|&d| perm[d]).collect()))
}

pub fn run(p: Program) -> Program {
    fold_input_transposes(fold_output_transposes(p))
}

fn fold_input_transposes(mut p: Program) -> Program {
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
