//! Degenerate axes: a reduction whose reduced axes all have size 1, and a `broadcast_in_dim` that only
//! inserts size-1 axes, move no data: both become a `reshape`, which the backends run as a view of the
//! operand's buffer instead of a kernel that copies every element.
//!
//! Why: a `pmap` over one local device wraps each member's value in exactly these (the vmap's stacked axis
//! of size 1 summed away by `psum`, the unmapped result broadcast back to it), so a 1 MiB cross-process
//! `psum` paid two 1 MiB copies around the MPI call. A reduction over size-1 axes equals its operand
//! (also for `-0.0`, which `0 + x` would turn into `+0.0`; XLA makes the same rewrite, so this matches JAX).
//!
//! A broadcast is rewritten only when its operand is already a buffer (a program input or the result of a
//! non-fusible equation): a broadcast of a fusible value stays fusible, so the fusion pass can still
//! compute the value inside its consumer's kernel rather than materialize it for the view.
use std::collections::HashMap;

use crate::ir::{Atom, Aval, Prim, Program, VarId};

/// Does `prim` leave its result in a buffer (rather than as a value fusion may inline into a consumer)?
fn materializes(prim: &Prim) -> bool {
    match prim {
        Prim::Reduce { axes, .. } => !axes.is_empty(),
        Prim::ArgReduce { .. }
        | Prim::Reshape { .. }
        | Prim::Squeeze { .. }
        | Prim::ExpandDims { .. }
        | Prim::Lib(_)
        | Prim::Control(_) => true,
        _ => false,
    }
}

/// Rewrites degenerate reductions and broadcasts of buffers into reshapes (see the module comment).
pub fn run(mut p: Program) -> Program {
    let mut avals: HashMap<VarId, Aval> = p.invars.iter().cloned().collect();
    let mut buffer: HashMap<VarId, bool> = p.invars.iter().map(|(v, _)| (*v, true)).collect();
    for e in p.eqns.iter_mut() {
        if let ([Atom::Var(x)], [(_, out)]) = (e.inputs.as_slice(), e.outputs.as_slice()) {
            if let Some(a) = avals.get(x) {
                let same_data = a.dtype == out.dtype && a.numel().is_some() && a.numel() == out.numel();
                let rewrite = same_data
                    && match &e.prim {
                        Prim::Reduce { axes, .. } => axes.iter().all(|&ax| a.shape.get(ax) == Some(&1)),
                        Prim::BroadcastInDim { broadcast_dimensions, .. } => {
                            buffer.get(x) == Some(&true)
                                && broadcast_dimensions.windows(2).all(|w| w[0] < w[1])
                        }
                        _ => false,
                    };
                if rewrite {
                    e.prim = Prim::Reshape { new_sizes: out.shape.clone() };
                }
            }
        }
        let m = materializes(&e.prim);
        for (v, a) in &e.outputs {
            avals.insert(*v, a.clone());
            buffer.insert(*v, m);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::verify::verify;
    use crate::ir::{BinaryOp, DType, Eqn, ReduceOp};
    use Atom::Var as V;

    fn t(s: &[usize]) -> Aval {
        Aval::new(DType::F32, s.to_vec())
    }
    fn e(prim: Prim, inputs: Vec<Atom>, id: VarId, a: Aval) -> Eqn {
        Eqn { prim, inputs, outputs: vec![(id, a)] }
    }
    fn names(p: &Program) -> Vec<&'static str> {
        p.eqns.iter().map(|e| e.prim.name()).collect()
    }

    #[test]
    fn degenerate_reduce_and_broadcast_of_a_buffer_become_reshapes() {
        let p = Program {
            name: "d".into(),
            invars: vec![(0, t(&[1, 4]))],
            eqns: vec![
                e(Prim::Reduce { op: ReduceOp::Sum, axes: vec![0] }, vec![V(0)], 1, t(&[4])),
                e(Prim::BroadcastInDim { shape: vec![1, 4], broadcast_dimensions: vec![1] }, vec![V(1)], 2,
                  t(&[1, 4])),
            ],
            outvars: vec![V(2)],
        };
        let q = run(p);
        verify(&q).unwrap();
        assert_eq!(names(&q), vec!["reshape", "reshape"]);
        assert_eq!(q.eqns[0].prim, Prim::Reshape { new_sizes: vec![4] });
        assert_eq!(q.eqns[1].prim, Prim::Reshape { new_sizes: vec![1, 4] });
    }

    #[test]
    fn keeps_real_reductions_and_broadcasts_of_fusible_values() {
        let p = Program {
            name: "d".into(),
            invars: vec![(0, t(&[2, 4]))],
            eqns: vec![
                e(Prim::Reduce { op: ReduceOp::Max, axes: vec![0] }, vec![V(0)], 1, t(&[4])), // size 2: kept
                e(Prim::Binary(BinaryOp::Mul), vec![V(1), V(1)], 2, t(&[4])),
                // of a fusible value: kept, so the product can fuse into the broadcast's consumer
                e(Prim::BroadcastInDim { shape: vec![1, 4], broadcast_dimensions: vec![1] }, vec![V(2)], 3,
                  t(&[1, 4])),
                // grows the data: kept
                e(Prim::BroadcastInDim { shape: vec![3, 4], broadcast_dimensions: vec![1] }, vec![V(1)], 4,
                  t(&[3, 4])),
            ],
            outvars: vec![V(3), V(4)],
        };
        let q = run(p.clone());
        assert_eq!(q, p);
    }
}
