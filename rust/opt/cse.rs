//! Common-subexpression elimination: an equation with the same primitive, params and operands (after
//! earlier replacements) as an earlier one reuses the earlier one's outputs.
use std::collections::HashMap;
use std::fmt::Write;

use crate::ir::{Atom, Prim, Program, Scalar, VarId};

fn key(e: &crate::ir::Eqn) -> String {
    let mut k = format!("{:?}|", e.prim);
    for a in &e.inputs {
        let _ = match a {
            Atom::Var(v) => write!(k, "v{v} "),
            Atom::Lit(Scalar::Float(f), d) => write!(k, "f{:x}:{d:?} ", f.to_bits()),
            Atom::Lit(s, d) => write!(k, "{s:?}:{d:?} "),
        };
    }
    k.push('|');
    for (_, a) in &e.outputs {
        let _ = write!(k, "{:?}{:?} ", a.dtype, a.shape);
    }
    k
}

pub fn run(p: Program) -> Program {
    let mut seen: HashMap<String, Vec<VarId>> = HashMap::new();
    let mut subst: HashMap<VarId, VarId> = HashMap::new();
    let mut eqns = Vec::with_capacity(p.eqns.len());
    for mut e in p.eqns {
        for a in e.inputs.iter_mut() {
            if let Atom::Var(v) = a {
                if let Some(r) = subst.get(v) {
                    *v = *r;
                }
            }
        }
        // each effect happens once per occurrence; a barrier exists to keep what follows it apart
        if e.prim.is_effectful() || e.prim == Prim::OptimizationBarrier {
            eqns.push(e);
            continue;
        }
        let k = key(&e);
        if let Some(prev) = seen.get(&k) {
            for ((v, _), r) in e.outputs.iter().zip(prev) {
                subst.insert(*v, *r);
            }
            continue;
        }
        seen.insert(k, e.outputs.iter().map(|(v, _)| *v).collect());
        eqns.push(e);
    }
    let outvars = p
        .outvars
        .into_iter()
        .map(|a| match a {
            Atom::Var(v) => Atom::Var(*subst.get(&v).unwrap_or(&v)),
            lit => lit,
        })
        .collect();
    Program { name: p.name, invars: p.invars, eqns, outvars }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Aval, BinaryOp, DType, Eqn, Prim, UnaryOp};

    #[test]
    fn merges_duplicates() {
        let a = Aval::new(DType::F32, vec![2]);
        let e = |prim, inputs: Vec<Atom>, id| Eqn { prim, inputs, outputs: vec![(id, a.clone())] };
        let lit = |f: f64| Atom::Lit(Scalar::Float(f), DType::F32);
        let p = Program {
            name: "c".into(),
            invars: vec![(0, a.clone())],
            eqns: vec![
                e(Prim::Unary(UnaryOp::Sin), vec![Atom::Var(0)], 1),
                e(Prim::Unary(UnaryOp::Sin), vec![Atom::Var(0)], 2),
                e(Prim::Binary(BinaryOp::Add), vec![Atom::Var(1), lit(0.0)], 3),
                e(Prim::Binary(BinaryOp::Add), vec![Atom::Var(2), lit(-0.0)], 4), // different literal bits
                e(Prim::Binary(BinaryOp::Add), vec![Atom::Var(2), lit(0.0)], 5),  // same as 3 after subst
                e(Prim::Binary(BinaryOp::Mul), vec![Atom::Var(3), Atom::Var(5)], 6),
            ],
            outvars: vec![Atom::Var(6), Atom::Var(4), Atom::Var(2)],
        };
        let q = run(p);
        crate::ir::verify::verify(&q).unwrap();
        assert_eq!(q.eqns.len(), 4);
        assert_eq!(q.eqns[3].inputs, vec![Atom::Var(3), Atom::Var(3)]);
        assert_eq!(q.outvars, vec![Atom::Var(6), Atom::Var(4), Atom::Var(1)]);
    }
}
