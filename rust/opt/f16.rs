//! float16 and bfloat16 legalization (both "half" types below are treated alike; "float16" in this file
//! means either): every equation that computes on float16 values is rewritten to compute in float32,
//! with its float16 operands converted up (exact) and its float16 results converted back down (rounded to
//! nearest even). This is XLA's CPU semantics: each operation rounds its result to float16, while
//! reductions, cumulative sums and `dot_general` accumulate in float32 and round once at the end.
//!
//! What stays float16 is what only moves or converts values: `select_n`, the shape primitives, `copy`,
//! `convert_element_type`, `bitcast_convert_type`, the data-movement library primitives (concatenate, pad,
//! dynamic slices, gather, scatter, sort) and control flow (whose sub-programs are legalized in turn). So
//! the backends see float16 only in loads, stores, selects and conversions, and the fusion pass merges the
//! inserted conversions into the neighbouring loops: a float16 array is read as float16 and widened in
//! registers, never materialized as float32.
//!
//! `nextafter` on float16 has no float32 formulation and is reported as unsupported.
//!
//! bfloat16 and the float8 formats follow the same rules (XLA's CPU backend upcasts bfloat16 arithmetic to f32 the same way).
use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::ir::control::ControlOp;
use crate::ir::{Atom, Aval, BinaryOp, DType, Eqn, LibOp, Prim, Program, Scalar, VarId};

const F32: DType = DType::F32;

/// The largest variable id used anywhere in `p` (sub-programs included).
pub(super) fn max_var(p: &Program) -> VarId {
    let mut m = p.invars.iter().map(|(v, _)| *v).max().unwrap_or(0);
    for e in &p.eqns {
        for (v, _) in &e.outputs {
            m = m.max(*v);
        }
        if let Prim::Control(op) = &e.prim {
            for sub in subprograms(op) {
                m = m.max(max_var(sub));
            }
        }
    }
    m
}

fn subprograms(op: &ControlOp) -> Vec<&Program> {
    match op {
        ControlOp::Cond { branches } => branches.iter().collect(),
        ControlOp::While { cond, body, .. } => vec![cond, body],
        ControlOp::Scan { body, .. } => vec![body],
    }
}

pub(super) fn subprograms_mut(op: &mut ControlOp) -> Vec<&mut Program> {
    match op {
        ControlOp::Cond { branches } => branches.iter_mut().collect(),
        ControlOp::While { cond, body, .. } => vec![cond, body],
        ControlOp::Scan { body, .. } => vec![body],
    }
}

/// Whether any float16 value appears anywhere in `p` (the common case is none: then `run` is free).
fn mentions_f16(p: &Program) -> bool {
    let lit16 = |a: &Atom| matches!(a, Atom::Lit(_, d) if d.is_half());
    p.invars.iter().any(|(_, a)| a.dtype.is_half())
        || p.outvars.iter().any(lit16)
        || p.eqns.iter().any(|e| {
            e.outputs.iter().any(|(_, a)| a.dtype.is_half())
                || e.inputs.iter().any(lit16)
                || match &e.prim {
                    Prim::Control(op) => subprograms(op).into_iter().any(mentions_f16),
                    Prim::Iota { dtype, .. } => dtype.is_half(),
                    Prim::Lib(LibOp::DotGeneral { preferred, .. }) => preferred.is_some_and(|d| d.is_half()),
                    _ => false,
                }
        })
}

/// Whether `prim` only moves, selects or converts element values (no arithmetic): such equations keep
/// float16 as it is, and constant folding may fold them on float16.
pub fn moves_values(prim: &Prim) -> bool {
    matches!(
        prim,
        Prim::SelectN
            | Prim::ConvertElementType { .. }
            | Prim::BitcastConvertType { .. }
            | Prim::BroadcastInDim { .. }
            | Prim::Reshape { .. }
            | Prim::Squeeze { .. }
            | Prim::ExpandDims { .. }
            | Prim::Transpose { .. }
            | Prim::Slice { .. }
            | Prim::Rev { .. }
            | Prim::Copy
            | Prim::OptimizationBarrier
    )
}

/// Whether `prim` keeps float16 operands and results as they are (it moves or converts values only).
fn keeps_f16(prim: &Prim) -> bool {
    match prim {
        p if moves_values(p) => true,
        Prim::Control(_) => true,
        // conv accumulates in f32 like dot (the CPU library has no 16-bit conv kernel)
        Prim::Lib(op) => !matches!(op, LibOp::DotGeneral { .. } | LibOp::Cumulative { .. } | LibOp::Conv(_)),
        _ => false,
    }
}

/// Rewrites float16 arithmetic in `p` (and its sub-programs) to float32. A program without float16 is
/// returned unchanged.
pub fn run(p: Program) -> Result<Program> {
    if !mentions_f16(&p) {
        return Ok(p);
    }
    // Common subexpressions first, so that a product computed twice in the jaxpr counts as one product
    // with two uses (as XLA sees it) when deciding whether it contracts into a multiply-add.
    let p = super::dce::run(super::cse::run(p));
    let mut next = max_var(&p) + 1;
    legalize(p, &mut next)
}

/// A float16 `integer_pow` as JAX lowers it: square-and-multiply in the dtype (then `1 / acc` for a negative
/// exponent), each product its own operation, so each rounds to float16 (x**-2 of bfloat16 1.8046875 is
/// 0.30859375 in JAX, not the once-rounded 0.306640625). Other equations are returned as they are.
fn expand_half_integer_pow(e: Eqn, next: &mut VarId) -> Vec<Eqn> {
    let (Prim::IntegerPow { y }, [x], [(o, oa)]) = (&e.prim, &e.inputs[..], &e.outputs[..]) else { return vec![e] };
    let (y, d) = (*y, oa.dtype);
    if !d.is_half() || !(y < 0 || y >= 2) {
        return vec![e];
    }
    let mut eqns = Vec::new();
    let mut fresh = || {
        let v = *next;
        *next += 1;
        v
    };
    let mul = |eqns: &mut Vec<Eqn>, a: Atom, b: Atom, out: VarId| {
        eqns.push(Eqn { prim: Prim::Binary(BinaryOp::Mul), inputs: vec![a, b], outputs: vec![(out, oa.clone())] });
        Atom::Var(out)
    };
    let (mut n, mut base, mut acc) = (y.unsigned_abs(), x.clone(), None::<Atom>);
    while n > 0 {
        if n & 1 == 1 {
            acc = Some(match acc {
                None => base.clone(),
                Some(a) => mul(&mut eqns, a, base.clone(), fresh()),
            });
        }
        n >>= 1;
        if n > 0 {
            base = mul(&mut eqns, base.clone(), base, fresh());
        }
    }
    let acc = acc.unwrap_or_else(|| x.clone());
    let last = if y < 0 {
        Eqn { prim: Prim::Binary(BinaryOp::Div), inputs: vec![Atom::Lit(Scalar::Float(1.0), d), acc], outputs: vec![(*o, oa.clone())] }
    } else {
        // the last product writes the equation's own output
        match eqns.pop() {
            Some(mut m) => {
                m.outputs = vec![(*o, oa.clone())];
                m
            }
            None => return vec![e],
        }
    };
    eqns.push(last);
    eqns
}

fn legalize(mut p: Program, next: &mut VarId) -> Result<Program> {
    let eqns = std::mem::take(&mut p.eqns);
    p.eqns = eqns.into_iter().flat_map(|e| expand_half_integer_pow(e, next)).collect();
    let mut out: Vec<Eqn> = Vec::with_capacity(p.eqns.len());
    // The shape of every float16 variable defined so far.
    let mut f16_vars: HashMap<VarId, Vec<usize>> =
        p.invars.iter().filter(|(_, a)| a.dtype.is_half()).map(|(v, a)| (*v, a.shape.clone())).collect();
    // XLA's CPU backend contracts a float16 `mul` feeding only an `add`/`sub` into one multiply-add where
    // the host does float16 arithmetic natively (`host_contracts_f16`): the product is not rounded to
    // float16. (A product of two float16 values is exact in float32, so keeping the float32 product and
    // rounding after the add/sub is exactly that.) `contracted` maps such a product to the float32 variable
    // holding it. Elsewhere every float16 operation rounds, the product too.
    let fma_products = if host_contracts_f16() { contractible_products(&p) } else { Default::default() };
    let mut contracted: HashMap<VarId, VarId> = HashMap::new();
    let emit = |out: &mut Vec<Eqn>, f16_vars: &mut HashMap<VarId, Vec<usize>>, e: Eqn| {
        for (v, a) in &e.outputs {
            if a.dtype.is_half() {
                f16_vars.insert(*v, a.shape.clone());
            }
        }
        out.push(e);
    };
    for mut e in std::mem::take(&mut p.eqns) {
        if let Prim::Control(op) = &mut e.prim {
            for sub in subprograms_mut(op) {
                let q = legalize(std::mem::take(sub), next)?;
                *sub = q;
            }
            emit(&mut out, &mut f16_vars, e);
            continue;
        }
        let is16 = |a: &Atom| match a {
            Atom::Lit(_, d) => d.is_half(),
            Atom::Var(v) => f16_vars.contains_key(v),
        };
        let touches = e.outputs.iter().any(|(_, a)| a.dtype.is_half())
            || e.inputs.iter().any(is16)
            || matches!(&e.prim, Prim::Iota { dtype, .. } if dtype.is_half())
            || matches!(&e.prim, Prim::Lib(LibOp::DotGeneral { preferred: Some(d), .. }) if d.is_half());
        if !touches || keeps_f16(&e.prim) {
            emit(&mut out, &mut f16_vars, e);
            continue;
        }
        if matches!(e.prim, Prim::Binary(BinaryOp::NextAfter)) {
            let d = e.outputs.first().map_or("float16", |(_, a)| a.dtype.numpy_name());
            return Err(Error::Unsupported(format!("nextafter on {d}")));
        }
        // Operands: float16 variables widened by a conversion, float16 literals retyped (exact).
        let mut inputs = Vec::with_capacity(e.inputs.len());
        for a in std::mem::take(&mut e.inputs) {
            inputs.push(match a {
                Atom::Lit(s, d) if d.is_half() => Atom::Lit(widen_lit(s, d), F32),
                Atom::Var(v) => match (contracted.get(&v), f16_vars.get(&v)) {
                    (Some(w), _) => Atom::Var(*w),
                    (None, Some(shape)) => {
                        let w = *next;
                        *next += 1;
                        let wa = Aval::new(F32, shape.clone());
                        out.push(Eqn { prim: Prim::ConvertElementType { new_dtype: F32 }, inputs: vec![Atom::Var(v)], outputs: vec![(w, wa)] });
                        Atom::Var(w)
                    }
                    (None, None) => Atom::Var(v),
                },
                lit => lit,
            });
        }
        e.inputs = inputs;
        match &mut e.prim {
            Prim::Iota { dtype, .. } if dtype.is_half() => *dtype = F32,
            Prim::Lib(LibOp::DotGeneral { preferred, .. }) if preferred.is_some_and(|d| d.is_half()) => *preferred = Some(F32),
            _ => {}
        }
        // Results: computed as float32 into fresh variables, rounded back into the original ones.
        let mut narrow = Vec::new();
        for (v, a) in e.outputs.iter_mut() {
            if a.dtype.is_half() {
                let w = *next;
                *next += 1;
                narrow.push((w, *v, a.shape.clone(), a.dtype));
                *v = w;
                a.dtype = F32;
            }
        }
        out.push(e);
        if let [(w, v, _, _)] = narrow.as_slice() {
            if fma_products.contains(v) {
                contracted.insert(*v, *w);
                continue;
            }
        }
        for (w, v, shape, dt) in narrow {
            let c = Eqn {
                prim: Prim::ConvertElementType { new_dtype: dt },
                inputs: vec![Atom::Var(w)],
                outputs: vec![(v, Aval::new(dt, shape))],
            };
            emit(&mut out, &mut f16_vars, c);
        }
    }
    p.eqns = out;
    Ok(p)
}

/// Whether XLA:CPU contracts float16 multiply-adds on this host. Measured: JAX 0.10.2 on an AMD EPYC with
/// AVX-512F/FMA but no AVX512-FP16 rounds every float16 op, the product too (0 of 200000 `a * b + c` triples
/// contracted, constants or not; the 20-step `c * 1.1 + 0.01` chain gives bits 18242), while values recorded
/// earlier in `tests/test_float16.py` (18239) show the contraction. LLVM can only form a float16 FMA where the
/// ISA has float16 arithmetic, so that is taken as the rule: x86-64 AVX512-FP16, aarch64 FP16.
pub fn host_contracts_f16() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512fp16")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("fp16")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// The float16 `mul` results of `p` used exactly once, by a float16 `add` or `sub` (not by a sub-program or
/// an output). Never bfloat16: JAX 0.10.2's CPU backend rounds a bfloat16 product before the add (checked
/// against it bit for bit).
fn contractible_products(p: &Program) -> std::collections::HashSet<VarId> {
    let mut uses: HashMap<VarId, (usize, bool)> = HashMap::new();
    let mut bump = |a: &Atom, into_add: bool| {
        if let Atom::Var(v) = a {
            let u = uses.entry(*v).or_insert((0, true));
            u.0 += 1;
            u.1 &= into_add;
        }
    };
    for e in &p.eqns {
        let is_add = matches!(e.prim, Prim::Binary(BinaryOp::Add | BinaryOp::Sub))
            && e.outputs.iter().all(|(_, a)| a.dtype == DType::F16);
        for a in &e.inputs {
            bump(a, is_add);
        }
    }
    for a in &p.outvars {
        bump(a, false);
    }
    p.eqns
        .iter()
        .filter(|e| matches!(e.prim, Prim::Binary(BinaryOp::Mul)))
        .filter_map(|e| match e.outputs.as_slice() {
            [(v, a)] if a.dtype == DType::F16 && uses.get(v) == Some(&(1, true)) => Some(*v),
            _ => None,
        })
        .collect()
}

fn widen_lit(s: Scalar, d: DType) -> Scalar {
    match s {
        Scalar::Float(f) if d == DType::BF16 => Scalar::Float(crate::ir::dtype::round_to_bf16(f)),
        Scalar::Float(_) if d.is_float8() => s.cast(d),
        Scalar::Float(f) => Scalar::Float(crate::ir::dtype::round_to_f16(f)),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ReduceOp, UnaryOp};
    const F16: DType = DType::F16;

    fn v(i: VarId) -> Atom {
        Atom::Var(i)
    }
    fn h(shape: &[usize]) -> Aval {
        Aval::new(F16, shape.to_vec())
    }
    fn eqn(prim: Prim, inputs: Vec<Atom>, out: VarId, a: Aval) -> Eqn {
        Eqn { prim, inputs, outputs: vec![(out, a)] }
    }

    /// exp, a contracted multiply-add and a sum: every arithmetic equation computes in f32, float16 appears
    /// only in conversions, the reshape stays float16, and the result verifies with the original signature.
    #[test]
    fn rewrites_arithmetic_to_f32() {
        let p = Program {
            name: "t".into(),
            invars: vec![(0, h(&[4])), (1, h(&[4]))],
            eqns: vec![
                eqn(Prim::Unary(UnaryOp::Exp), vec![v(0)], 2, h(&[4])),
                eqn(Prim::Binary(BinaryOp::Mul), vec![v(2), v(1)], 3, h(&[4])),
                eqn(Prim::Binary(BinaryOp::Add), vec![v(3), Atom::Lit(Scalar::Float(0.5), F16)], 4, h(&[4])),
                eqn(Prim::Reshape { new_sizes: vec![2, 2] }, vec![v(4)], 5, h(&[2, 2])),
                eqn(Prim::Reduce { op: ReduceOp::Sum, axes: vec![0, 1] }, vec![v(5)], 6, h(&[])),
            ],
            outvars: vec![v(5), v(6)],
        };
        let q = run(p).unwrap();
        crate::ir::verify::verify(&q).unwrap();
        for e in &q.eqns {
            match &e.prim {
                Prim::ConvertElementType { .. } | Prim::Reshape { .. } => {}
                other => assert!(
                    e.outputs.iter().all(|(_, a)| a.dtype == F32) && !e.inputs.iter().any(|a| matches!(a, Atom::Lit(_, F16))),
                    "{other:?} still computes in float16"
                ),
            }
        }
        // the product feeds only the add: on a host with float16 arithmetic it is not rounded to float16 (one
        // conversion fewer), elsewhere it is
        let downs = q.eqns.iter().filter(|e| matches!(e.prim, Prim::ConvertElementType { new_dtype: F16 })).count();
        assert_eq!(downs, if host_contracts_f16() { 3 } else { 4 }, "{q:#?}"); // exp, (mul,) add, sum
        assert_eq!(crate::ir::control::out_avals(&q).unwrap(), vec![h(&[2, 2]), h(&[])]);
        // idempotent, and free for programs without float16
        let q2 = run(q.clone()).unwrap();
        assert_eq!(q2.eqns.iter().filter(|e| matches!(e.prim, Prim::ConvertElementType { .. })).count(),
                   q.eqns.iter().filter(|e| matches!(e.prim, Prim::ConvertElementType { .. })).count());
    }

    #[test]
    fn nextafter_is_unsupported() {
        let p = Program {
            name: "t".into(),
            invars: vec![(0, h(&[2]))],
            eqns: vec![eqn(Prim::Binary(BinaryOp::NextAfter), vec![v(0), v(0)], 1, h(&[2]))],
            outvars: vec![v(1)],
        };
        assert!(run(p).unwrap_err().to_string().contains("float16"));
    }
}
