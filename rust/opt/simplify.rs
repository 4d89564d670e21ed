//! Algebraic simplification: removes equations whose output equals one of their operands.
//!
//! Rules (each only when the output aval equals the kept operand's aval):
//! `x*1`, `1*x`, `x/1` (ints and floats; the 1 a literal or a broadcast of one, as XLA's `IsAll(1)`: a
//! cotangent seed of ones then leaves no product behind, so no multiply-add is contracted there, as in XLA); `x+0`, `0+x`, `x-0` for ints only, and for floats `x + -0.0`,
//! `-0.0 + x`, `x - 0.0` (which are exact even for x = -0.0, unlike `x + 0.0`); `x & true`, `x | false`
//! on bools, and `x & false`, `x | true` on scalar bools (the literal); `integer_pow[y=1]`; convert/bitcast to the same dtype; reshape to the same shape; transpose by
//! the identity permutation; broadcast_in_dim to the same shape; squeeze/expand_dims of no dimensions;
//! reductions over no axes; `copy`; `select_n` with a literal predicate or a single case.
use std::collections::{HashMap, HashSet};

use crate::ir::{Atom, Aval, BinaryOp, DType, Eqn, Prim, Program, Scalar, VarId};

fn lit_is(a: &Atom, pred: impl Fn(&Scalar, DType) -> bool) -> bool {
    matches!(a, Atom::Lit(s, d) if pred(s, *d))
}

fn is_one(a: &Atom) -> bool {
    lit_is(a, |s, _| matches!(s, Scalar::Int(1)) || matches!(s, Scalar::Float(f) if *f == 1.0))
}

fn is_int_zero(a: &Atom) -> bool {
    lit_is(a, |s, d| d.is_int() && matches!(s, Scalar::Int(0)))
}

fn is_float(a: &Atom, neg_zero: bool) -> bool {
    lit_is(a, |s, d| {
        d.is_float() && matches!(s, Scalar::Float(f) if *f == 0.0 && f.is_sign_negative() == neg_zero)
    })
}

/// The operand an equation reduces to, if any (`ones`: variables that are broadcasts of a literal one).
fn identity_of(e: &Eqn, ones: &HashSet<VarId>) -> Option<Atom> {
    let ins = &e.inputs;
    let is_one = |a: &Atom| is_one(a) || matches!(a, Atom::Var(v) if ones.contains(v));
    let first = || ins.first().cloned();
    match &e.prim {
        Prim::Binary(op) if ins.len() == 2 => {
            let (a, b) = (&ins[0], &ins[1]);
            let keep = match op {
                BinaryOp::Mul if is_one(b) => Some(a),
                BinaryOp::Mul if is_one(a) => Some(b),
                BinaryOp::Div if is_one(b) => Some(a),
                BinaryOp::Add if is_int_zero(b) || is_float(b, true) => Some(a),
                BinaryOp::Add if is_int_zero(a) || is_float(a, true) => Some(b),
                BinaryOp::Sub if is_int_zero(b) || is_float(b, false) => Some(a),
                BinaryOp::And if lit_is(b, |s, _| *s == Scalar::Bool(true)) => Some(a),
                BinaryOp::And if lit_is(a, |s, _| *s == Scalar::Bool(true)) => Some(b),
                BinaryOp::Or if lit_is(b, |s, _| *s == Scalar::Bool(false)) => Some(a),
                BinaryOp::Or if lit_is(a, |s, _| *s == Scalar::Bool(false)) => Some(b),
                // absorbing literals (a literal is rank 0: only scalar results are replaced)
                BinaryOp::And if lit_is(b, |s, _| *s == Scalar::Bool(false)) => Some(b),
                BinaryOp::And if lit_is(a, |s, _| *s == Scalar::Bool(false)) => Some(a),
                BinaryOp::Or if lit_is(b, |s, _| *s == Scalar::Bool(true)) => Some(b),
                BinaryOp::Or if lit_is(a, |s, _| *s == Scalar::Bool(true)) => Some(a),
                _ => None,
            };
            keep.cloned()
        }
        Prim::IntegerPow { y: 1 } => first(),
        Prim::ConvertElementType { .. } | Prim::BitcastConvertType { .. } | Prim::Copy => first(),
        Prim::Reshape { .. } | Prim::BroadcastInDim { .. } => first(),
        Prim::Transpose { permutation } if permutation.iter().enumerate().all(|(i, &p)| i == p) => first(),
        Prim::Squeeze { dimensions } | Prim::ExpandDims { dimensions } if dimensions.is_empty() => first(),
        Prim::Reduce { axes, .. } if axes.is_empty() => first(),
        Prim::SelectN if ins.len() == 2 => Some(ins[1].clone()),
        Prim::SelectN => match ins.first() {
            Some(Atom::Lit(Scalar::Bool(b), _)) => ins.get(1 + *b as usize).cloned(),
            Some(Atom::Lit(Scalar::Int(i), _)) => {
                let n = ins.len() as i64 - 1;
                ins.get(1 + (*i).clamp(0, n - 1) as usize).cloned()
            }
            _ => None,
        },
        _ => None,
    }
}

/// Rewrites `p`, replacing each simplifiable equation's output by the operand it equals.
pub fn run(p: Program) -> Program {
    let mut avals: HashMap<VarId, Aval> = p.invars.iter().cloned().collect();
    let mut ones: HashSet<VarId> = HashSet::new();
    super::subst::replace_outputs(p, |e| {
        if let (Prim::BroadcastInDim { .. }, [x], [(o, _)]) = (&e.prim, &e.inputs[..], &e.outputs[..]) {
            if is_one(x) {
                ones.insert(*o);
            }
        }
        if e.outputs.len() == 1 {
            if let Some(keep) = identity_of(e, &ones) {
                let keep_aval = match &keep {
                    Atom::Var(v) => avals.get(v).cloned(),
                    Atom::Lit(_, d) => Some(Aval::scalar(*d)),
                };
                if keep_aval.as_ref() == Some(&e.outputs[0].1) {
                    return Some(vec![keep]);
                }
            }
        }
        for (v, a) in &e.outputs {
            avals.insert(*v, a.clone());
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::verify::verify;
    use crate::ir::ReduceOp;

    fn t(d: DType, s: &[usize]) -> Aval {
        Aval::new(d, s.to_vec())
    }
    fn e(prim: Prim, inputs: Vec<Atom>, id: VarId, a: Aval) -> Eqn {
        Eqn { prim, inputs, outputs: vec![(id, a)] }
    }
    fn fl(f: f64) -> Atom {
        Atom::Lit(Scalar::Float(f), DType::F32)
    }
    fn il(i: i64) -> Atom {
        Atom::Lit(Scalar::Int(i), DType::I32)
    }
    use Atom::Var as V;

    #[test]
    fn removes_identities() {
        let f = t(DType::F32, &[3]);
        let i = t(DType::I32, &[3]);
        let p = Program {
            name: "s".into(),
            invars: vec![(0, f.clone()), (1, i.clone())],
            eqns: vec![
                e(Prim::Binary(BinaryOp::Mul), vec![V(0), fl(1.0)], 2, f.clone()),
                e(Prim::Binary(BinaryOp::Add), vec![V(2), fl(0.0)], 3, f.clone()), // kept: -0.0 + 0.0 = 0.0
                e(Prim::Binary(BinaryOp::Add), vec![fl(-0.0), V(3)], 4, f.clone()),
                e(Prim::Binary(BinaryOp::Sub), vec![V(4), fl(0.0)], 5, f.clone()),
                e(Prim::Binary(BinaryOp::Add), vec![il(0), V(1)], 6, i.clone()),
                e(Prim::ConvertElementType { new_dtype: DType::F32 }, vec![V(5)], 7, f.clone()),
                e(Prim::Transpose { permutation: vec![0] }, vec![V(7)], 8, f.clone()),
                e(Prim::BroadcastInDim { shape: vec![3], broadcast_dimensions: vec![0] }, vec![V(8)], 9, f.clone()),
                e(Prim::Reshape { new_sizes: vec![3] }, vec![V(9)], 10, f.clone()),
                e(Prim::Reduce { op: ReduceOp::Sum, axes: vec![] }, vec![V(10)], 11, f.clone()),
                e(Prim::Copy, vec![V(11)], 12, f.clone()),
                e(Prim::ConvertElementType { new_dtype: DType::F32 }, vec![V(6)], 13, f.clone()), // kept
                e(Prim::Binary(BinaryOp::Mul), vec![V(12), V(13)], 14, f.clone()),
            ],
            outvars: vec![V(14), V(6)],
        };
        verify(&p).unwrap();
        let q = run(p);
        verify(&q).unwrap();
        let names: Vec<&str> = q.eqns.iter().map(|e| e.prim.name()).collect();
        assert_eq!(names, vec!["add", "convert_element_type", "mul"]);
        assert_eq!(q.eqns[0].inputs, vec![V(0), fl(0.0)]);
        assert_eq!(q.eqns[1].inputs, vec![V(1)]);
        assert_eq!(q.eqns[2].inputs, vec![V(3), V(13)]);
        assert_eq!(q.outvars, vec![V(14), V(1)]);
    }

    #[test]
    fn keeps_real_transposes() {
        let m = t(DType::F32, &[2, 2]);
        let p = Program {
            name: "s".into(),
            invars: vec![(0, m.clone())],
            eqns: vec![e(Prim::Transpose { permutation: vec![1, 0] }, vec![V(0)], 1, m.clone())],
            outvars: vec![V(1)],
        };
        assert_eq!(run(p).eqns.len(), 1);
    }

    #[test]
    fn keeps_shape_changing_ops() {
        // x:f32[] * 1.0 where the output is f32[] is removed; a broadcast to a new shape is kept.
        let p = Program {
            name: "s".into(),
            invars: vec![(0, t(DType::F32, &[]))],
            eqns: vec![
                e(Prim::BroadcastInDim { shape: vec![2], broadcast_dimensions: vec![] }, vec![V(0)], 1, t(DType::F32, &[2])),
                e(Prim::SelectN, vec![Atom::Lit(Scalar::Bool(true), DType::Bool), V(1), V(1)], 2, t(DType::F32, &[2])),
            ],
            outvars: vec![V(2)],
        };
        let q = run(p);
        assert_eq!(q.eqns.len(), 1);
        assert_eq!(q.outvars, vec![V(1)]);
    }

    #[test]
    fn products_with_a_broadcast_one_are_removed() {
        // a cotangent seed `ones` (broadcast of 1.0) times x is x, and x over it is x
        let v = t(DType::F32, &[3]);
        let one = Atom::Lit(Scalar::Float(1.0), DType::F32);
        let p = Program {
            name: "s".into(),
            invars: vec![(0, v.clone()), (1, t(DType::F32, &[]))],
            eqns: vec![
                e(Prim::BroadcastInDim { shape: vec![3], broadcast_dimensions: vec![] }, vec![one], 2, v.clone()),
                e(Prim::Binary(BinaryOp::Mul), vec![V(2), V(0)], 3, v.clone()),
                e(Prim::Binary(BinaryOp::Div), vec![V(3), V(2)], 4, v.clone()),
                e(Prim::Binary(BinaryOp::Add), vec![V(0), V(2)], 5, v.clone()), // not a product: kept
            ],
            outvars: vec![V(4), V(5)],
        };
        verify(&p).unwrap();
        let q = run(p);
        assert_eq!(q.outvars, vec![V(0), V(5)]);
        assert_eq!(q.eqns.len(), 2); // the broadcast and the add
    }
}
