//! Multiply-adds contracted into one rounding, as XLA:CPU 0.10.2 computes them: LLVM compiles XLA's fused
//! loops with floating-point contraction on, so a float32/float64 `add` or `sub` whose operand is a `mul`
//! used nowhere else becomes a fused multiply-add. Measured with JAX 0.10.2 under `jit` (10^5 random
//! triples, also for scalars and inside loop bodies; float32 and float64): `a * b + c` and `c + a * b` give
//! `fma(a, b, c)`, `a * b - c` gives `fma(a, b, -c)`, `c - a * b` gives `fma(-a, b, c)`, `a * b + c * d`
//! contracts the left product (`fma(a, b, c * d)`), and a product with a second use (or that is an output)
//! is rounded. JAX's eager operations are single primitives, so nothing there contracts (cranax's eager
//! calls are one-equation programs: nothing to rewrite). Not float16/bfloat16 (XLA computes them in float32
//! and rounds every step: `f16`), not complex. Sub-programs (loop bodies, branches) are rewritten too.
use std::collections::{HashMap, HashSet};

use crate::ir::control::ControlOp;
use crate::ir::{Atom, Aval, BinaryOp, DType, Eqn, Prim, Program, Scalar, UnaryOp, VarId};

pub fn run(p: Program) -> Program {
    let mut next = super::f16::max_var(&p) + 1;
    rewrite(p, &mut next)
}

fn count_uses(p: &Program, uses: &mut HashMap<VarId, usize>) {
    for e in &p.eqns {
        for a in &e.inputs {
            if let Atom::Var(v) = a {
                *uses.entry(*v).or_default() += 1;
            }
        }
        if let Prim::Control(op) = &e.prim {
            // (conservative: a name read inside a sub-program counts as a use here)
            for sub in subprograms(op) {
                count_uses(sub, uses);
                for a in &sub.outvars {
                    if let Atom::Var(v) = a {
                        *uses.entry(*v).or_default() += 1;
                    }
                }
            }
        }
    }
}

fn subprograms(op: &ControlOp) -> Vec<&Program> {
    match op {
        ControlOp::Cond { branches } => branches.iter().collect(),
        ControlOp::While { cond, body, .. } => vec![&**cond, &**body],
        ControlOp::Scan { body, .. } => vec![&**body],
    }
}

fn rewrite(mut p: Program, next: &mut VarId) -> Program {
    let mut uses: HashMap<VarId, usize> = HashMap::new();
    count_uses(&p, &mut uses);
    for a in &p.outvars {
        if let Atom::Var(v) = a {
            *uses.entry(*v).or_default() += 2; // an output is rounded where it is computed
        }
    }
    let mut avals: HashMap<VarId, Aval> = p.invars.iter().cloned().collect();
    // single-use float32/float64 products: their operands and shape
    let mut products: HashMap<VarId, (Atom, Atom, Vec<usize>)> = HashMap::new();
    // outputs of `broadcast_in_dim` (an operand read through a broadcast, as a smaller shape is)
    let mut broadcasts: HashSet<VarId> = HashSet::new();
    let mut out: Vec<Eqn> = Vec::with_capacity(p.eqns.len());
    let float = |d: DType| matches!(d, DType::F32 | DType::F64);
    for mut e in std::mem::take(&mut p.eqns) {
        if let Prim::Control(op) = &mut e.prim {
            for sub in super::f16::subprograms_mut(op) {
                *sub = rewrite(std::mem::take(sub), next);
            }
        }
        match (&e.prim, &e.inputs[..], &e.outputs[..]) {
            (Prim::BroadcastInDim { .. }, _, [(o, _)]) => {
                broadcasts.insert(*o);
            }
            (Prim::Binary(BinaryOp::Mul), [a, b], [(o, oa)]) if float(oa.dtype) && uses.get(o) == Some(&1) => {
                products.insert(*o, (a.clone(), b.clone(), oa.shape.clone()));
            }
            (Prim::Binary(op @ (BinaryOp::Add | BinaryOp::Sub)), [x, y], [(_, oa)]) if float(oa.dtype) => {
                let prod = |a: &Atom| match a {
                    Atom::Var(v) => products.get(v).filter(|(_, _, s)| *s == oa.shape).cloned(),
                    Atom::Lit(..) => None,
                };
                let is_sub = *op == BinaryOp::Sub;
                let dtype = oa.dtype;
                // -a as an operand: a literal negated, a variable through a `neg` (exact)
                let mut neg = |a: Atom, out: &mut Vec<Eqn>, avals: &mut HashMap<VarId, Aval>| -> Atom {
                    match a {
                        Atom::Lit(Scalar::Float(c), d) => Atom::Lit(Scalar::Float(-c), d),
                        Atom::Var(v) => {
                            let na = avals.get(&v).cloned().unwrap_or_else(|| Aval::new(dtype, vec![]));
                            let w = *next;
                            *next += 1;
                            avals.insert(w, na.clone());
                            out.push(Eqn { prim: Prim::Unary(UnaryOp::Neg), inputs: vec![Atom::Var(v)], outputs: vec![(w, na)] });
                            Atom::Var(w)
                        }
                        lit => lit,
                    }
                };
                // both operands products, one of them with a broadcast operand (a scalar or size-1 axes): which
                // one XLA contracts follows its simplifier's rewrites (measured: `a[:1] * (1 - b) + c[:1] * b`
                // contracts the right product, `a[:1] * b + c[:1] * d` the left; `jnp.linspace` is the first
                // form after XLA reassociates `stop * (iota * r)`): not predictable here, so both stay rounded
                let bcast = |a: &Atom| match a {
                    Atom::Var(v) => broadcasts.contains(v) || avals.get(v).is_some_and(|va| va.shape != oa.shape),
                    Atom::Lit(..) => false,
                };
                let uncertain = match (prod(x), prod(y)) {
                    (Some((a, b, _)), Some((c, d, _))) => [a, b, c, d].iter().any(|o| bcast(o)),
                    _ => false,
                };
                let new_inputs = if uncertain {
                    None
                } else if let Some((a, b, _)) = prod(x) {
                    // (a * b) + y = fma(a, b, y); (a * b) - y = fma(a, b, -y)
                    let c = if is_sub { neg(y.clone(), &mut out, &mut avals) } else { y.clone() };
                    Some(vec![a, b, c])
                } else if let Some((a, b, _)) = prod(y) {
                    // x + (a * b) = fma(a, b, x); x - (a * b) = fma(-a, b, x)
                    let a = if is_sub { neg(a, &mut out, &mut avals) } else { a };
                    Some(vec![a, b, x.clone()])
                } else {
                    None
                };
                if let Some(ins) = new_inputs {
                    e.prim = Prim::Fma;
                    e.inputs = ins;
                }
            }
            _ => {}
        }
        for (v, a) in &e.outputs {
            avals.insert(*v, a.clone());
        }
        out.push(e);
    }
    p.eqns = out;
    // the contracted products are now unused: DCE removes them
    super::dce::run(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::verify::verify;
    use Atom::Var as V;

    fn t(d: DType, s: &[usize]) -> Aval {
        Aval::new(d, s.to_vec())
    }
    fn e(prim: Prim, inputs: Vec<Atom>, id: VarId, a: Aval) -> Eqn {
        Eqn { prim, inputs, outputs: vec![(id, a)] }
    }
    fn bin(op: BinaryOp) -> Prim {
        Prim::Binary(op)
    }

    #[test]
    fn single_use_products_feeding_adds_and_subs_become_fmas() {
        let m = t(DType::F32, &[8]);
        let p = Program {
            name: "c".into(),
            invars: vec![(0, m.clone()), (1, m.clone()), (2, m.clone()), (3, m.clone())],
            eqns: vec![
                e(bin(BinaryOp::Mul), vec![V(0), V(1)], 4, m.clone()),
                e(bin(BinaryOp::Add), vec![V(4), V(2)], 5, m.clone()), // fma(0, 1, 2)
                e(bin(BinaryOp::Mul), vec![V(0), V(2)], 6, m.clone()),
                e(bin(BinaryOp::Sub), vec![V(3), V(6)], 7, m.clone()), // fma(-0, 2, 3)
                e(bin(BinaryOp::Mul), vec![V(1), V(2)], 8, m.clone()),
                e(bin(BinaryOp::Mul), vec![V(1), V(3)], 9, m.clone()),
                e(bin(BinaryOp::Sub), vec![V(8), V(9)], 10, m.clone()), // fma(1, 2, -(1*3)): the left product
                e(bin(BinaryOp::Mul), vec![V(2), V(3)], 11, m.clone()),
                e(bin(BinaryOp::Add), vec![V(11), V(0)], 12, m.clone()), // kept: 11 is also an output
            ],
            outvars: vec![V(5), V(7), V(10), V(12), V(11)],
        };
        verify(&p).unwrap();
        let q = run(p);
        verify(&q).unwrap();
        let names: Vec<&str> = q.eqns.iter().map(|e| e.prim.name()).collect();
        assert_eq!(names, vec!["fma", "neg", "fma", "mul", "neg", "fma", "mul", "add"]);
        assert_eq!(q.eqns[0].inputs, vec![V(0), V(1), V(2)]);
        assert_eq!(q.eqns[1].inputs, vec![V(0)]);
        assert_eq!(q.eqns[2].inputs[1..], [V(2), V(3)]);
        assert_eq!(q.eqns[5].inputs[..2], [V(1), V(2)]);
    }

    #[test]
    fn two_products_with_a_broadcast_operand_stay_rounded() {
        // linspace's `start * (1 - step) + stop * step` with start/stop broadcast: XLA's choice of product
        // depends on its simplifier, so neither is contracted; without broadcasts the left one is
        let m = t(DType::F32, &[8]);
        let p = Program {
            name: "c".into(),
            invars: vec![(0, t(DType::F32, &[])), (1, m.clone()), (2, m.clone())],
            eqns: vec![
                e(Prim::BroadcastInDim { shape: vec![8], broadcast_dimensions: vec![] }, vec![V(0)], 3, m.clone()),
                e(bin(BinaryOp::Mul), vec![V(3), V(1)], 4, m.clone()),
                e(bin(BinaryOp::Mul), vec![V(2), V(1)], 5, m.clone()),
                e(bin(BinaryOp::Add), vec![V(4), V(5)], 6, m.clone()),
                e(bin(BinaryOp::Mul), vec![V(1), V(3)], 7, m.clone()), // the broadcast as the right operand
                e(bin(BinaryOp::Mul), vec![V(2), V(2)], 8, m.clone()),
                e(bin(BinaryOp::Sub), vec![V(7), V(8)], 9, m.clone()),
                e(bin(BinaryOp::Mul), vec![V(1), V(2)], 10, m.clone()),
                e(bin(BinaryOp::Mul), vec![V(2), V(2)], 11, m.clone()),
                e(bin(BinaryOp::Add), vec![V(10), V(11)], 12, m.clone()), // fma(1, 2, 2 * 2)
            ],
            outvars: vec![V(6), V(9), V(12)],
        };
        verify(&p).unwrap();
        let q = run(p);
        let names: Vec<&str> = q.eqns.iter().map(|e| e.prim.name()).collect();
        assert_eq!(names, vec!["broadcast_in_dim", "mul", "mul", "add", "mul", "mul", "sub", "mul", "fma"]);
    }

    #[test]
    fn other_dtypes_and_shared_products_are_left() {
        let h = t(DType::F16, &[4]);
        let m = t(DType::F32, &[4]);
        let p = Program {
            name: "c".into(),
            invars: vec![(0, h.clone()), (2, m.clone())],
            eqns: vec![
                e(bin(BinaryOp::Mul), vec![V(0), V(0)], 3, h.clone()),
                e(bin(BinaryOp::Add), vec![V(3), V(0)], 4, h.clone()), // float16: rounded (opt::f16)
                e(bin(BinaryOp::Mul), vec![V(2), V(2)], 7, m.clone()),
                e(bin(BinaryOp::Add), vec![V(7), V(2)], 8, m.clone()),
                e(bin(BinaryOp::Add), vec![V(7), V(8)], 9, m.clone()), // 7 has two uses: kept
            ],
            outvars: vec![V(4), V(9)],
        };
        verify(&p).unwrap();
        let q = run(p.clone());
        assert_eq!(q, p);
    }
}
