//! Removes `optimization_barrier` equations once the optimization rounds are done: each output is replaced
//! by its operand. Until then the barrier kept CSE from merging values computed from its outputs with the
//! same values computed from its operands (a rematerialized forward computation in the backward pass). The
//! equations keep their program order, which is the order the backends run them in, so the recomputation
//! still happens where the barrier stood, after its operands (the cotangents) exist.
use crate::ir::{Prim, Program};

pub fn run(p: Program) -> Program {
    if !p.eqns.iter().any(|e| e.prim == Prim::OptimizationBarrier) {
        return p;
    }
    super::subst::replace_outputs(p, |e| (e.prim == Prim::OptimizationBarrier).then(|| e.inputs.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Atom, Aval, BinaryOp, DType, Eqn, UnaryOp, VarId};

    /// `sin(x)` computed before and after a barrier on `x` (and the cotangent `c`) stays two equations
    /// through the optimizer; once the barrier is gone the second reads `x` directly.
    #[test]
    fn keeps_recomputation_apart_then_goes() {
        let a = Aval::new(DType::F32, vec![4]);
        let e = |prim, inputs: Vec<Atom>, outs: Vec<VarId>| Eqn {
            prim,
            inputs,
            outputs: outs.into_iter().map(|v| (v, a.clone())).collect(),
        };
        let p = Program {
            name: "b".into(),
            invars: vec![(0, a.clone()), (1, a.clone())],
            eqns: vec![
                e(Prim::Unary(UnaryOp::Sin), vec![Atom::Var(0)], vec![2]),
                e(Prim::OptimizationBarrier, vec![Atom::Var(0), Atom::Var(1)], vec![3, 4]),
                e(Prim::Unary(UnaryOp::Sin), vec![Atom::Var(3)], vec![5]),
                e(Prim::Binary(BinaryOp::Mul), vec![Atom::Var(5), Atom::Var(4)], vec![6]),
            ],
            outvars: vec![Atom::Var(2), Atom::Var(6)],
        };
        crate::ir::verify::verify(&p).unwrap();
        let q = crate::opt::optimize(p).unwrap();
        let names: Vec<&str> = q.eqns.iter().map(|e| e.prim.name()).collect();
        assert_eq!(names, vec!["sin", "sin", "mul"]);
        assert_eq!(q.eqns[1].inputs, vec![Atom::Var(0)]);
        assert_eq!(q.eqns[2].inputs, vec![Atom::Var(5), Atom::Var(1)]);
        // without the barrier CSE merges the two sines
        let r = crate::opt::cse::run(Program {
            name: "c".into(),
            invars: vec![(0, a.clone()), (1, a.clone())],
            eqns: vec![
                e(Prim::Unary(UnaryOp::Sin), vec![Atom::Var(0)], vec![2]),
                e(Prim::Unary(UnaryOp::Sin), vec![Atom::Var(0)], vec![5]),
                e(Prim::Binary(BinaryOp::Mul), vec![Atom::Var(5), Atom::Var(1)], vec![6]),
            ],
            outvars: vec![Atom::Var(2), Atom::Var(6)],
        });
        assert_eq!(r.eqns.len(), 2);
    }

    #[test]
    fn barrier_output_as_program_output() {
        let a = Aval::new(DType::F32, vec![2]);
        let p = Program {
            name: "o".into(),
            invars: vec![(0, a.clone())],
            eqns: vec![Eqn { prim: Prim::OptimizationBarrier, inputs: vec![Atom::Var(0)], outputs: vec![(1, a)] }],
            outvars: vec![Atom::Var(1)],
        };
        let q = run(p);
        assert!(q.eqns.is_empty());
        assert_eq!(q.outvars, vec![Atom::Var(0)]);
    }
}
