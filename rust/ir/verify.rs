//! Type-checks a program: every variable defined once before use, operand dtypes/shapes match each
//! primitive's rule, params in range. Errors name the equation.
use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::ir::shape::{check_size, fmt_aval, infer};
use crate::ir::{Atom, Aval, DType, Program, Scalar, VarId};

fn err(eqn: usize, prim: &str, msg: impl Into<String>) -> Error {
    Error::Verify { eqn, prim: prim.to_string(), msg: msg.into() }
}

/// Checks that a literal's value has the representation its dtype needs (bool ↔ Bool, ints ↔ Int in
/// range, floats ↔ Float).
pub fn check_literal(value: &Scalar, dtype: DType) -> std::result::Result<(), String> {
    let ok = match (value, dtype) {
        (Scalar::Bool(_), DType::Bool) => true,
        (Scalar::Int(_), DType::I64) => true,
        (Scalar::Int(i), d) if d.is_int() => d.int_range().is_some_and(|(lo, hi)| (lo..=hi).contains(i)),
        (Scalar::Float(_), d) if d.is_float() => true,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("literal {value:?} is not a valid {} value", dtype.short_name()))
    }
}

/// Verifies `p`. Equation-level errors carry the equation's index; errors in the program's inputs are
/// reported at equation 0 with prim `<invars>`, errors in its outputs at equation `eqns.len()` with prim
/// `<outvars>`.
pub fn verify(p: &Program) -> Result<()> {
    let mut env: HashMap<VarId, &Aval> = HashMap::with_capacity(p.invars.len() + p.eqns.len());
    for (id, aval) in &p.invars {
        check_size(aval).map_err(|m| err(0, "<invars>", format!("input {id}: {m}")))?;
        if env.insert(*id, aval).is_some() {
            return Err(err(0, "<invars>", format!("input variable {id} defined twice")));
        }
    }
    let mut ops: Vec<(Aval, bool)> = Vec::new();
    for (i, e) in p.eqns.iter().enumerate() {
        let name = e.prim.name();
        ops.clear();
        for (k, a) in e.inputs.iter().enumerate() {
            match a {
                Atom::Var(v) => match env.get(v) {
                    Some(av) => ops.push(((*av).clone(), false)),
                    None => return Err(err(i, name, format!("operand {k}: variable {v} used before it is defined"))),
                },
                Atom::Lit(s, d) => {
                    check_literal(s, *d).map_err(|m| err(i, name, format!("operand {k}: {m}")))?;
                    ops.push((Aval::scalar(*d), true));
                }
            }
        }
        let want = infer(&e.prim, &ops).map_err(|m| err(i, name, m))?;
        if want.len() != e.outputs.len() {
            return Err(err(i, name, format!("expected {} output(s), got {}", want.len(), e.outputs.len())));
        }
        for (k, ((id, aval), w)) in e.outputs.iter().zip(&want).enumerate() {
            check_size(aval).map_err(|m| err(i, name, format!("output {k}: {m}")))?;
            if aval != w {
                return Err(err(
                    i,
                    name,
                    format!("output {k} is declared {} but the operands give {}", fmt_aval(aval), fmt_aval(w)),
                ));
            }
            if env.insert(*id, aval).is_some() {
                return Err(err(i, name, format!("output {k}: variable {id} defined twice")));
            }
        }
    }
    let n = p.eqns.len();
    for (k, a) in p.outvars.iter().enumerate() {
        match a {
            Atom::Var(v) => {
                if !env.contains_key(v) {
                    return Err(err(n, "<outvars>", format!("output {k}: variable {v} is never defined")));
                }
            }
            Atom::Lit(s, d) => check_literal(s, *d).map_err(|m| err(n, "<outvars>", format!("output {k}: {m}")))?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinaryOp, CompareOp, Eqn, Prim, ReduceOp, UnaryOp};

    fn f32s(s: &[usize]) -> Aval {
        Aval::new(DType::F32, s.to_vec())
    }
    fn eqn(prim: Prim, inputs: Vec<Atom>, out: (VarId, Aval)) -> Eqn {
        Eqn { prim, inputs, outputs: vec![out] }
    }
    fn prog(invars: Vec<(VarId, Aval)>, eqns: Vec<Eqn>, out: Vec<Atom>) -> Program {
        Program { name: "t".into(), invars, eqns, outvars: out }
    }
    fn expect_err(p: &Program, eqn_idx: usize, needle: &str) {
        match verify(p) {
            Err(Error::Verify { eqn, msg, .. }) => {
                assert_eq!(eqn, eqn_idx, "wrong eqn in error: {msg}");
                assert!(msg.contains(needle), "message {msg:?} lacks {needle:?}");
            }
            other => panic!("expected a verify error, got {other:?}"),
        }
    }
    use Atom::Var as V;

    #[test]
    fn accepts_good_program() {
        let p = prog(
            vec![(0, f32s(&[3])), (1, f32s(&[3]))],
            vec![
                eqn(Prim::Binary(BinaryOp::Mul), vec![V(0), V(1)], (2, f32s(&[3]))),
                eqn(Prim::Binary(BinaryOp::Add), vec![V(2), Atom::Lit(Scalar::Float(1.0), DType::F32)], (3, f32s(&[3]))),
                eqn(Prim::Reduce { op: ReduceOp::Sum, axes: vec![0] }, vec![V(3)], (4, f32s(&[]))),
                eqn(Prim::Compare(CompareOp::Lt), vec![V(4), Atom::Lit(Scalar::Float(0.0), DType::F32)], (5, Aval::scalar(DType::Bool))),
            ],
            vec![V(4), V(5), V(0)],
        );
        verify(&p).unwrap();
    }

    #[test]
    fn catches_errors() {
        let base = |e: Eqn| prog(vec![(0, f32s(&[3])), (1, f32s(&[2, 3]))], vec![eqn(Prim::Unary(UnaryOp::Sin), vec![V(0)], (9, f32s(&[3]))), e], vec![]);
        // undefined var
        expect_err(&base(eqn(Prim::Unary(UnaryOp::Exp), vec![V(7)], (2, f32s(&[3])))), 1, "before it is defined");
        // redefinition
        expect_err(&base(eqn(Prim::Unary(UnaryOp::Exp), vec![V(0)], (9, f32s(&[3])))), 1, "defined twice");
        // shape mismatch
        expect_err(&base(eqn(Prim::Binary(BinaryOp::Add), vec![V(0), V(1)], (2, f32s(&[3])))), 1, "shapes differ");
        // rank-0 variable with array partner
        let p = prog(
            vec![(0, f32s(&[3])), (1, f32s(&[]))],
            vec![eqn(Prim::Binary(BinaryOp::Add), vec![V(0), V(1)], (2, f32s(&[3])))],
            vec![],
        );
        expect_err(&p, 0, "shapes differ");
        // dtype mismatch
        expect_err(
            &base(eqn(Prim::Binary(BinaryOp::Add), vec![V(0), Atom::Lit(Scalar::Int(1), DType::I32)], (2, f32s(&[3])))),
            1,
            "dtypes differ",
        );
        // wrong declared output
        expect_err(&base(eqn(Prim::Unary(UnaryOp::Exp), vec![V(0)], (2, f32s(&[4])))), 1, "declared");
        expect_err(&base(eqn(Prim::Compare(CompareOp::Lt), vec![V(0), V(0)], (2, f32s(&[3])))), 1, "declared f32[3]");
        // float math on ints
        let pi = prog(
            vec![(0, Aval::new(DType::I32, vec![3]))],
            vec![eqn(Prim::Unary(UnaryOp::Sin), vec![V(0)], (2, Aval::new(DType::I32, vec![3])))],
            vec![],
        );
        expect_err(&pi, 0, "floating-point");
        // integer op on floats
        expect_err(&base(eqn(Prim::Binary(BinaryOp::ShiftLeft), vec![V(0), V(0)], (2, f32s(&[3])))), 1, "integer");
        expect_err(&base(eqn(Prim::Unary(UnaryOp::Not), vec![V(0)], (2, f32s(&[3])))), 1, "integer or bool");
        // axes
        expect_err(&base(eqn(Prim::Reduce { op: ReduceOp::Sum, axes: vec![0, 0] }, vec![V(1)], (2, f32s(&[3])))), 1, "repeated");
        expect_err(&base(eqn(Prim::Reduce { op: ReduceOp::Sum, axes: vec![2] }, vec![V(1)], (2, f32s(&[3])))), 1, "out of range");
        // permutation
        expect_err(&base(eqn(Prim::Transpose { permutation: vec![0, 0] }, vec![V(1)], (2, f32s(&[2, 2])))), 1, "repeated");
        // broadcast
        expect_err(
            &base(eqn(Prim::BroadcastInDim { shape: vec![3, 2], broadcast_dimensions: vec![1] }, vec![V(0)], (2, f32s(&[3, 2])))),
            1,
            "cannot broadcast",
        );
        expect_err(
            &base(eqn(Prim::BroadcastInDim { shape: vec![2, 3, 3], broadcast_dimensions: vec![2, 1] }, vec![V(1)], (2, f32s(&[2, 3, 3])))),
            1,
            "strictly increasing",
        );
        // reshape
        expect_err(&base(eqn(Prim::Reshape { new_sizes: vec![5] }, vec![V(1)], (2, f32s(&[5])))), 1, "element count");
        // squeeze
        expect_err(&base(eqn(Prim::Squeeze { dimensions: vec![0] }, vec![V(1)], (2, f32s(&[3])))), 1, "not 1");
        // iota
        expect_err(
            &base(eqn(Prim::Iota { dtype: DType::I32, shape: vec![3], dimension: 1 }, vec![], (2, Aval::new(DType::I32, vec![3])))),
            1,
            "iota dimension",
        );
        // select_n pred
        expect_err(&base(eqn(Prim::SelectN, vec![V(0), V(0), V(0)], (2, f32s(&[3])))), 1, "predicate dtype");
        // huge shape
        let huge = prog(vec![(0, f32s(&[1 << 40, 1 << 30]))], vec![], vec![]);
        expect_err(&huge, 0, "overflows");
        let huge = prog(vec![(0, Aval::new(DType::F64, vec![1 << 61]))], vec![], vec![]);
        expect_err(&huge, 0, "larger than");
        // outvars
        expect_err(&base(eqn(Prim::Unary(UnaryOp::Exp), vec![V(0)], (2, f32s(&[3])))).with_out(vec![V(42)]), 2, "never defined");
        // literal representation
        expect_err(
            &base(eqn(Prim::Binary(BinaryOp::Add), vec![V(0), Atom::Lit(Scalar::Int(1), DType::F32)], (2, f32s(&[3])))),
            1,
            "not a valid f32",
        );
    }

    trait WithOut {
        fn with_out(self, o: Vec<Atom>) -> Self;
    }
    impl WithOut for Program {
        fn with_out(mut self, o: Vec<Atom>) -> Self {
            self.outvars = o;
            self
        }
    }

    #[test]
    fn scalar_pred_and_clamp_bounds() {
        let b = Aval::scalar(DType::Bool);
        let p = prog(
            vec![(0, b), (1, f32s(&[3])), (2, f32s(&[]))],
            vec![
                eqn(Prim::SelectN, vec![V(0), V(1), V(1)], (3, f32s(&[3]))),
                eqn(Prim::Clamp, vec![V(2), V(3), V(2)], (4, f32s(&[3]))),
            ],
            vec![V(4)],
        );
        verify(&p).unwrap();
    }
}
