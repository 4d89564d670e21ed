//! A `dot_general` that contracts nothing (an outer product, `jnp.outer`, reverse mode's weight cotangent
//! of a matrix-vector product) as the product of two broadcasts, as XLA's dot decomposition does: each
//! element is one multiply either way (the same bits), but as an elementwise product fusion puts it into
//! the kernel that reads it, so `acc + outer(g, h)` in a scan's backward body is one pass over `acc`
//! instead of a product call writing a temporary and an add reading it back.
//!
//! Only operands of the output's dtype (no conversion), numbers (not bool), and batch dimensions leading on
//! both sides in order (what `vmap` makes), so that both broadcasts keep their axes in order. Sub-programs
//! are rewritten too.
use std::collections::HashMap;

use crate::ir::{Atom, Aval, BinaryOp, Eqn, LibOp, Prim, Program, VarId};

pub fn run(p: Program) -> Program {
    let mut next = super::f16::max_var(&p) + 1;
    rewrite(p, &mut next)
}

/// The broadcast product `mul(broadcast(l, dl), broadcast(r, dr))` made of an outer product: a `transpose` of
/// it is the same product broadcast along permuted axes.
struct Outer {
    l: VarId,
    dl: Vec<usize>,
    r: VarId,
    dr: Vec<usize>,
}

/// `mul(broadcast(l, dl), broadcast(r, dr))` of shape `oa`, appended to `out` under fresh names but for the
/// product's own `o`.
fn product(o: VarId, oa: &Aval, w: &Outer, next: &mut VarId, out: &mut Vec<Eqn>) -> Eqn {
    let mut bcast = |x: VarId, dims: &[usize], out: &mut Vec<Eqn>| {
        let v = *next;
        *next += 1;
        let prim = Prim::BroadcastInDim { shape: oa.shape.clone(), broadcast_dimensions: dims.to_vec() };
        out.push(Eqn { prim, inputs: vec![Atom::Var(x)], outputs: vec![(v, oa.clone())] });
        Atom::Var(v)
    };
    let bl = bcast(w.l, &w.dl, out);
    let br = bcast(w.r, &w.dr, out);
    Eqn { prim: Prim::Binary(BinaryOp::Mul), inputs: vec![bl, br], outputs: vec![(o, oa.clone())] }
}

fn rewrite(mut p: Program, next: &mut VarId) -> Program {
    let mut avals: HashMap<VarId, Aval> = p.invars.iter().cloned().collect();
    let mut outers: HashMap<VarId, Outer> = HashMap::new();
    let mut out: Vec<Eqn> = Vec::with_capacity(p.eqns.len());
    for mut e in std::mem::take(&mut p.eqns) {
        if let Prim::Control(op) = &mut e.prim {
            for sub in super::f16::subprograms_mut(op) {
                *sub = rewrite(std::mem::take(sub), next);
            }
        }
        if let (
            Prim::Lib(LibOp::DotGeneral { lhs_contracting: lc, rhs_contracting: rc, lhs_batch: lb, rhs_batch: rb, .. }),
            [Atom::Var(l), Atom::Var(r)],
            [(o, oa)],
        ) = (&e.prim, &e.inputs[..], &e.outputs[..])
        {
            let leading = |b: &[usize]| b.iter().enumerate().all(|(i, &d)| i == d);
            if let (true, Some(la), Some(ra)) = (lc.is_empty() && rc.is_empty() && leading(lb) && leading(rb), avals.get(l), avals.get(r)) {
                let (nb, nl) = (lb.len(), la.shape.len());
                let numeric = oa.dtype.is_float() || oa.dtype.is_int();
                if numeric && la.dtype == oa.dtype && ra.dtype == oa.dtype && rb.len() == nb && nl + ra.shape.len() - nb == oa.shape.len() {
                    // lhs: batch and free axes in place; rhs: batch axes in place, free axes after lhs's
                    let w = Outer { l: *l, dl: (0..nl).collect(), r: *r, dr: (0..nb).chain(nl..oa.shape.len()).collect() };
                    let (o, oa) = (*o, oa.clone());
                    e = product(o, &oa, &w, next, &mut out);
                    outers.insert(o, w);
                }
            }
        }
        // (reverse mode's weight cotangent `transpose(outer(g, h))`: the product with its axes permuted)
        if let (Prim::Transpose { permutation }, [Atom::Var(x)], [(o, oa)]) = (&e.prim, &e.inputs[..], &e.outputs[..]) {
            if let Some(w) = outers.get(x) {
                // old axis j becomes new axis pos[j]
                let mut pos = vec![0; permutation.len()];
                for (k, &j) in permutation.iter().enumerate() {
                    pos[j] = k;
                }
                let moved = |d: &[usize]| -> Vec<usize> { d.iter().map(|&j| pos[j]).collect() };
                let t = Outer { l: w.l, dl: moved(&w.dl), r: w.r, dr: moved(&w.dr) };
                if t.dl.windows(2).all(|p| p[0] < p[1]) && t.dr.windows(2).all(|p| p[0] < p[1]) {
                    let (o, oa) = (*o, oa.clone());
                    e = product(o, &oa, &t, next, &mut out);
                    outers.insert(o, t);
                }
            }
        }
        for (v, a) in &e.outputs {
            avals.insert(*v, a.clone());
        }
        out.push(e);
    }
    p.eqns = out;
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::verify::verify;
    use crate::ir::DType;
    use Atom::Var as V;

    fn t(d: DType, s: &[usize]) -> Aval {
        Aval::new(d, s.to_vec())
    }
    fn dot(lb: Vec<usize>, rb: Vec<usize>) -> Prim {
        Prim::Lib(LibOp::DotGeneral { lhs_contracting: vec![], rhs_contracting: vec![], lhs_batch: lb, rhs_batch: rb, preferred: None })
    }

    /// f32 outer products (plain, and batched over a leading axis) become broadcast products giving the exact
    /// products; a bf16 x f32 one (a conversion) and a contracting one are kept.
    #[test]
    fn outer_products_become_broadcast_products() {
        let f = DType::F32;
        let contract = Prim::Lib(LibOp::DotGeneral {
            lhs_contracting: vec![1], rhs_contracting: vec![0], lhs_batch: vec![], rhs_batch: vec![], preferred: None,
        });
        let bf16_dot = Prim::Lib(LibOp::DotGeneral {
            lhs_contracting: vec![], rhs_contracting: vec![], lhs_batch: vec![], rhs_batch: vec![], preferred: Some(f),
        });
        let p = Program {
            name: "o".into(),
            invars: vec![(0, t(f, &[3])), (1, t(f, &[5])), (2, t(f, &[2, 3])), (3, t(f, &[2, 4])), (4, t(DType::BF16, &[3]))],
            eqns: vec![
                Eqn { prim: dot(vec![], vec![]), inputs: vec![V(0), V(1)], outputs: vec![(5, t(f, &[3, 5]))] },
                Eqn { prim: dot(vec![0], vec![0]), inputs: vec![V(2), V(3)], outputs: vec![(6, t(f, &[2, 3, 4]))] },
                Eqn { prim: bf16_dot, inputs: vec![V(4), V(1)], outputs: vec![(7, t(f, &[3, 5]))] },
                Eqn { prim: contract, inputs: vec![V(2), V(0)], outputs: vec![(8, t(f, &[2]))] },
                Eqn { prim: Prim::Transpose { permutation: vec![1, 0] }, inputs: vec![V(5)], outputs: vec![(9, t(f, &[5, 3]))] },
            ],
            outvars: vec![V(5), V(6), V(7), V(8), V(9)],
        };
        verify(&p).unwrap();
        let q = run(p.clone());
        verify(&q).unwrap();
        let names: Vec<&str> = q.eqns.iter().map(|e| e.prim.name()).collect();
        assert_eq!(names.iter().filter(|n| **n == "dot_general").count(), 2, "{names:?}");
        assert_eq!(names.iter().filter(|n| **n == "mul").count(), 3, "{names:?}");
        assert!(!names.contains(&"transpose"), "{names:?}");
        // exact products, one rounding per element (what the product routine gives too)
        let vals = |n: usize, k: f32| -> Vec<f32> { (0..n).map(|i| (i as f32 + 0.37) * k).collect() };
        let buf = |a: Aval, v: Vec<f32>| {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            crate::buffer::Buffer::from_bytes(&a, &bytes).unwrap()
        };
        let mut keep = p.clone();
        keep.eqns = vec![p.eqns[0].clone(), p.eqns[1].clone(), p.eqns[4].clone()];
        keep.outvars = vec![V(5), V(6), V(9)];
        keep.invars.truncate(4);
        let run_cpu = |prog: &Program| {
            let json = crate::ir::parse::to_json(prog);
            let (_, plan) = crate::opt::compile_pipeline(&json).unwrap();
            let ins = [
                buf(t(f, &[3]), vals(3, 1.1)),
                buf(t(f, &[5]), vals(5, -0.7)),
                buf(t(f, &[2, 3]), vals(6, 0.3)),
                buf(t(f, &[2, 4]), vals(8, 1.9)),
            ];
            let outs = crate::backend::cpu::compile(&plan).unwrap().run(&ins).unwrap();
            outs.iter().map(|b| b.as_bytes().to_vec()).collect::<Vec<_>>()
        };
        let got = run_cpu(&keep);
        let f32s = |b: &[u8]| -> Vec<f32> { b.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect() };
        let (a, b, c, d) = (vals(3, 1.1), vals(5, -0.7), vals(6, 0.3), vals(8, 1.9));
        let want0: Vec<f32> = (0..15).map(|e| a[e / 5] * b[e % 5]).collect();
        let want1: Vec<f32> = (0..24).map(|e| c[(e / 12) * 3 + (e / 4) % 3] * d[(e / 12) * 4 + e % 4]).collect();
        assert_eq!(f32s(&got[0]), want0);
        assert_eq!(f32s(&got[1]), want1);
        assert_eq!(f32s(&got[2]), (0..15).map(|e| a[e % 3] * b[e / 3]).collect::<Vec<_>>());
    }
}
