//! Dead-code elimination: drops equations none of whose outputs reach the program's outputs.
//! Effectful equations (host callbacks with effects, control flow around them) stay alive as well.
use std::collections::HashSet;

use crate::ir::{Atom, Program, VarId};

pub fn run(mut p: Program) -> Program {
    let mut live: HashSet<VarId> = p
        .outvars
        .iter()
        .filter_map(|a| match a {
            Atom::Var(v) => Some(*v),
            Atom::Lit(..) => None,
        })
        .collect();
    let mut keep = vec![false; p.eqns.len()];
    for (i, e) in p.eqns.iter().enumerate().rev() {
        if e.prim.is_effectful() || e.outputs.iter().any(|(v, _)| live.contains(v)) {
            keep[i] = true;
            for a in &e.inputs {
                if let Atom::Var(v) = a {
                    live.insert(*v);
                }
            }
        }
    }
    let mut k = keep.into_iter();
    p.eqns.retain(|_| k.next().unwrap_or(true));
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Aval, BinaryOp, DType, Eqn, Prim, UnaryOp};

    #[test]
    fn drops_unused() {
        let a = Aval::new(DType::F32, vec![2]);
        let e = |prim, inputs: Vec<Atom>, id| Eqn { prim, inputs, outputs: vec![(id, a.clone())] };
        let p = Program {
            name: "d".into(),
            invars: vec![(0, a.clone())],
            eqns: vec![
                e(Prim::Unary(UnaryOp::Sin), vec![Atom::Var(0)], 1),
                e(Prim::Unary(UnaryOp::Cos), vec![Atom::Var(0)], 2),
                e(Prim::Binary(BinaryOp::Add), vec![Atom::Var(1), Atom::Var(1)], 3),
                e(Prim::Unary(UnaryOp::Exp), vec![Atom::Var(2)], 4),
            ],
            outvars: vec![Atom::Var(3)],
        };
        let q = run(p);
        let names: Vec<&str> = q.eqns.iter().map(|e| e.prim.name()).collect();
        assert_eq!(names, vec!["sin", "add"]);
    }

    #[test]
    fn keeps_effects() {
        use crate::ir::{CallbackKind, LibOp};
        let a = Aval::new(DType::F32, vec![2]);
        let cb = |kind, id| Eqn {
            prim: Prim::Lib(LibOp::HostCallback { kind, callback: id, results: vec![] }),
            inputs: vec![Atom::Var(0)],
            outputs: vec![],
        };
        let p = Program {
            name: "e".into(),
            invars: vec![(0, a.clone())],
            eqns: vec![cb(CallbackKind::Pure, 1), cb(CallbackKind::Print, 2), cb(CallbackKind::Io, 3)],
            outvars: vec![Atom::Var(0)],
        };
        let q = crate::opt::cse::run(run(p));
        let names: Vec<&str> = q.eqns.iter().map(|e| e.prim.name()).collect();
        assert_eq!(names, vec!["debug_print", "io_callback"]);
    }
}
