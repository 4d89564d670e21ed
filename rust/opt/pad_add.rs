//! `a + pad(x, 0)` as an accumulation into the window of `a`: `dynamic_update_slice(a, slice(a) + x, lo)`.
//!
//! Reverse mode writes the cotangent of a slice (`W[0]` of stacked weights, a `split`, a `concatenate`'s
//! operand) as a zero `pad` of the small cotangent, added to the accumulator of the whole array. A scan's
//! backward body does that once per slice and step over its carried accumulator (an RNN reading `W[0..2]` of
//! an f32[3,128,128]: three pads and a full-size sum per step). XLA fuses the pads into the add; here the
//! pad goes away instead: the add reads and writes only the window, and the executor writes the
//! `dynamic_update_slice` into `a`'s buffer when nothing else reads it (`exec::dead_operand`), so the loop's
//! carried accumulator is updated in place.
//!
//! Only pads with a literal zero value, no interior padding and no cropping (every `lo`, `hi` >= 0) of an
//! array of the same rank. The values are those of the add except the sign of a zero: outside the window `a`
//! is kept as it is, where `a + 0.0` would turn `-0.0` into `+0.0`. Sub-programs are rewritten too.
use std::collections::HashMap;

use crate::ir::{Atom, Aval, BinaryOp, DType, Eqn, LibOp, Prim, Program, Scalar, VarId};

pub fn run(p: Program) -> Program {
    let mut next = super::f16::max_var(&p) + 1;
    rewrite(p, &mut next)
}

/// A zero pad's operand, its shape and its offset (`lo`) per axis.
struct Window {
    x: Atom,
    shape: Vec<usize>,
    lo: Vec<usize>,
}

fn is_zero(s: &Scalar) -> bool {
    match s {
        Scalar::Float(f) => *f == 0.0,
        Scalar::Int(i) => *i == 0,
        _ => false,
    }
}

fn rewrite(mut p: Program, next: &mut VarId) -> Program {
    let mut avals: HashMap<VarId, Aval> = p.invars.iter().cloned().collect();
    let mut pads: HashMap<VarId, Window> = HashMap::new();
    let mut out: Vec<Eqn> = Vec::with_capacity(p.eqns.len());
    for mut e in std::mem::take(&mut p.eqns) {
        if let Prim::Control(op) = &mut e.prim {
            for sub in super::f16::subprograms_mut(op) {
                *sub = rewrite(std::mem::take(sub), next);
            }
        }
        if let (Prim::Lib(LibOp::Pad { config }), [x @ Atom::Var(xv), Atom::Lit(z, _)], [(o, oa)]) =
            (&e.prim, &e.inputs[..], &e.outputs[..])
        {
            let xa = avals.get(xv);
            let plain = config.iter().all(|&(lo, hi, interior)| lo >= 0 && hi >= 0 && interior == 0);
            if let (true, true, Some(xa)) = (is_zero(z), plain, xa) {
                if xa.shape.len() == oa.shape.len() && !oa.shape.is_empty() && xa.numel() < oa.numel() {
                    let lo = config.iter().map(|c| c.0 as usize).collect();
                    pads.insert(*o, Window { x: x.clone(), shape: xa.shape.clone(), lo });
                }
            }
        }
        if let (Prim::Binary(BinaryOp::Add), [a, b], [(o, oa)]) = (&e.prim, &e.inputs[..], &e.outputs[..]) {
            let acc_of = |acc: &Atom| matches!(acc, Atom::Var(v) if avals.get(v) == Some(oa));
            let pick = match (a, b) {
                (_, Atom::Var(pv)) if pads.contains_key(pv) && acc_of(a) => Some((a, pv)),
                (Atom::Var(pv), _) if pads.contains_key(pv) && acc_of(b) => Some((b, pv)),
                _ => None,
            };
            if let Some((acc, pv)) = pick {
                let w = &pads[pv];
                let (o, oa, acc) = (*o, oa.clone(), acc.clone());
                let wa = Aval::new(oa.dtype, w.shape.clone());
                let mut fresh = |prim: Prim, inputs: Vec<Atom>, out: &mut Vec<Eqn>| {
                    let v = *next;
                    *next += 1;
                    out.push(Eqn { prim, inputs, outputs: vec![(v, wa.clone())] });
                    Atom::Var(v)
                };
                let limit = w.lo.iter().zip(&w.shape).map(|(l, n)| l + n).collect();
                let strides = vec![1; w.lo.len()];
                let slice = Prim::Slice { start_indices: w.lo.clone(), limit_indices: limit, strides };
                let part = fresh(slice, vec![acc.clone()], &mut out);
                let sum = fresh(Prim::Binary(BinaryOp::Add), vec![part, w.x.clone()], &mut out);
                let mut inputs = vec![acc, sum];
                inputs.extend(w.lo.iter().map(|&l| Atom::Lit(Scalar::Int(l as i64), DType::I32)));
                e = Eqn { prim: Prim::Lib(LibOp::DynamicUpdateSlice), inputs, outputs: vec![(o, oa)] };
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
    use Atom::Var as V;

    fn t(s: &[usize]) -> Aval {
        Aval::new(DType::F32, s.to_vec())
    }
    fn e(prim: Prim, inputs: Vec<Atom>, id: VarId, a: Aval) -> Eqn {
        Eqn { prim, inputs, outputs: vec![(id, a)] }
    }
    fn zero() -> Atom {
        Atom::Lit(Scalar::Float(0.0), DType::F32)
    }
    fn pad(config: Vec<(i64, i64, i64)>) -> Prim {
        Prim::Lib(LibOp::Pad { config })
    }

    /// acc f32[3,4], x f32[1,4]: `acc + pad(x)` (either order) becomes a window update; a pad with
    /// interior padding, a cropping pad and a nonzero pad value are kept.
    fn program() -> Program {
        let add = Prim::Binary(BinaryOp::Add);
        Program {
            name: "p".into(),
            invars: vec![(0, t(&[3, 4])), (1, t(&[1, 4])), (2, t(&[2, 4]))],
            eqns: vec![
                e(pad(vec![(1, 1, 0), (0, 0, 0)]), vec![V(1), zero()], 3, t(&[3, 4])),
                e(add.clone(), vec![V(0), V(3)], 4, t(&[3, 4])),
                e(pad(vec![(0, 2, 0), (0, 0, 0)]), vec![V(1), zero()], 5, t(&[3, 4])),
                e(add.clone(), vec![V(5), V(4)], 6, t(&[3, 4])),
                e(pad(vec![(0, 0, 1), (0, 0, 0)]), vec![V(2), zero()], 7, t(&[3, 4])),
                e(add.clone(), vec![V(6), V(7)], 8, t(&[3, 4])),
                e(pad(vec![(-1, 2, 0), (0, 0, 0)]), vec![V(2), zero()], 9, t(&[3, 4])),
                e(add.clone(), vec![V(8), V(9)], 10, t(&[3, 4])),
                e(pad(vec![(2, 0, 0), (0, 0, 0)]), vec![V(1), Atom::Lit(Scalar::Float(1.0), DType::F32)], 11, t(&[3, 4])),
                e(add, vec![V(10), V(11)], 12, t(&[3, 4])),
            ],
            outvars: vec![V(12)],
        }
    }

    #[test]
    fn zero_pads_added_become_window_updates() {
        let p = program();
        verify(&p).unwrap();
        let q = crate::opt::dce::run(run(p));
        verify(&q).unwrap();
        let names: Vec<&str> = q.eqns.iter().map(|e| e.prim.name()).collect();
        assert_eq!(names.iter().filter(|n| **n == "dynamic_update_slice").count(), 2, "{names:?}");
        assert_eq!(names.iter().filter(|n| **n == "pad").count(), 3, "{names:?}");
        let dus: Vec<&Eqn> = q.eqns.iter().filter(|e| e.prim.name() == "dynamic_update_slice").collect();
        assert_eq!(dus[0].inputs[0], V(0));
        assert_eq!(dus[0].inputs[2..], [Atom::Lit(Scalar::Int(1), DType::I32), Atom::Lit(Scalar::Int(0), DType::I32)]);
        assert_eq!(dus[1].inputs[0], V(4));
        assert_eq!(dus[1].inputs[2], Atom::Lit(Scalar::Int(0), DType::I32));
    }

    /// The rewritten program computes what the pads and adds did (here on the CPU backend, every value
    /// exact: sums of small integers).
    #[test]
    fn window_updates_give_the_sums_of_the_pads() {
        let json = crate::ir::parse::to_json(&program());
        let (_, plan) = crate::opt::compile_pipeline(&json).unwrap();
        let exe = crate::backend::cpu::compile(&plan).unwrap();
        let buf = |s: &[usize], v: Vec<f32>| {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            crate::buffer::Buffer::from_bytes(&t(s), &bytes).unwrap()
        };
        let acc: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let x = vec![100.0, 200.0, 300.0, 400.0];
        let y: Vec<f32> = (0..8).map(|i| 1000.0 * (i + 1) as f32).collect();
        let out = exe.run(&[buf(&[3, 4], acc.clone()), buf(&[1, 4], x.clone()), buf(&[2, 4], y.clone())]).unwrap();
        let got: Vec<f32> = out[0].as_bytes().chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let mut want = acc;
        for j in 0..4 {
            want[4 + j] += x[j]; // pad (1, 1)
            want[j] += x[j]; // pad (0, 2)
            want[j] += y[j]; // interior 1: rows 0 and 2
            want[8 + j] += y[4 + j];
            want[j] += y[4 + j]; // cropped by one: y's second row at row 0
            for r in 0..3 {
                want[4 * r + j] += 1.0; // pad value 1
            }
            want[8 + j] += x[j] - 1.0; // pad (2, 0) of value 1: x at row 2
        }
        assert_eq!(got, want);
    }
}
