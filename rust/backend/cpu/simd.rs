//! Kernel body instructions on vector lanes: a kernel whose live values all have the same width computes
//! f32/i32/u32 as 4 lanes (f32x4, i32x4) or f64/i64 as 2 lanes (f64x2, i64x2); bools are lane masks of that
//! width (all ones / zero); float16/bfloat16 bits and 8/16-bit integers ride in 4-lane kernels held in
//! i32 lanes (`lane_size`). Every op either has a native vector lowering here or falls back to the scalar
//! lowering of `ops` once per lane (integer division, shifts, 64-bit integer min/max, imported math, ...),
//! so any kernel that `ops` compiles also compiles here, with the same per-lane results.
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, Endianness, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;

use crate::error::{Error, Result};
use crate::ir::{BinaryOp, CompareOp, DType, Scalar, UnaryOp};
use crate::plan::{KInstr, KOp};

use super::math_fn::{binary_math, Imports, MathFn};
use super::ops;
use super::vdiv;
use super::vmath;

/// The element width a dtype computes in on vector lanes: float16 and bfloat16 are held as their bits
/// sign-extended in an i32 lane, and 8/16-bit integers as their values in an i32 lane (signed ones
/// sign-extended, unsigned zero-extended; loads widen, stores narrow), so they ride in 4-lane kernels next
/// to f32; the rest their size.
pub fn lane_size(dt: DType) -> usize {
    if held32(dt) {
        4
    } else {
        dt.size()
    }
}

/// Whether `dt` is a 16-bit float held sign-extended in i32 lanes (see `lane_size`).
pub fn widened(dt: DType) -> bool {
    matches!(dt, DType::F16 | DType::BF16)
}

/// Whether `dt` is held in i32 lanes of 4-lane kernels (16-bit floats, 8/16-bit integers; see `lane_size`).
pub fn held32(dt: DType) -> bool {
    widened(dt) || dt.is_narrow_int()
}

/// Whether a `held32` dtype's lanes are sign-extended (float16/bfloat16 bits, i8, i16); unsigned ones are
/// zero-extended.
pub fn sign_held(dt: DType) -> bool {
    widened(dt) || matches!(dt, DType::I8 | DType::I16)
}

/// `x` (i32x4) with the low bits of each lane kept at `dt`'s width and extended as `dt` is held
/// (`lane_size`): the wrap after i32 arithmetic, and the re-extension of a bitcast or truncating convert.
fn rewrap(b: &mut FunctionBuilder, dt: DType, x: Value) -> Value {
    if !held32(dt) {
        return x;
    }
    let bits = 8 * dt.size() as i64;
    if sign_held(dt) {
        let s = b.ins().iconst(types::I32, 32 - bits);
        let t = b.ins().ishl(x, s);
        b.ins().sshr(t, s)
    } else {
        let m = isplat(b, types::I32X4, (1i64 << bits) - 1);
        b.ins().band(x, m)
    }
}

/// Lane count of a kernel whose widest (and only) non-bool element size is `size` bytes.
pub fn lanes_for(size: usize) -> Option<u32> {
    match size {
        4 => Some(4),
        8 => Some(2),
        _ => None,
    }
}

/// The vector type holding `lanes` lanes of `dt`.
pub fn vtype(dt: DType, lanes: u32) -> Type {
    match dt {
        DType::F32 => types::F32X4,
        DType::F64 => types::F64X2,
        DType::I32 | DType::U32 => types::I32X4,
        DType::I64 => types::I64X2,
        // float16/bfloat16 bits, sign-extended to 32 bits per lane (see `lane_size`).
        DType::F16 | DType::BF16 if lanes == 4 => types::I32X4,
        // 8/16-bit integers' values, extended to 32 bits per lane (see `lane_size`).
        DType::I8 | DType::U8 | DType::I16 | DType::U16 if lanes == 4 => types::I32X4,
        // Never vectorized (`lanes_for` has no entry for 1- and 2-byte elements); full-width vectors.
        DType::I8 | DType::U8 => types::I8X16,
        crate::ir::dtype::float8!() => types::I8X16,
        DType::I16 | DType::U16 | DType::F16 | DType::BF16 => types::I16X8,
        DType::Bool => {
            if lanes == 4 {
                types::I32X4
            } else {
                types::I64X2
            }
        }
    }
}

pub fn vflags() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

/// The operand indices of an instruction.
pub fn operands(op: &KOp) -> Vec<usize> {
    match op {
        KOp::Load { .. } | KOp::Const { .. } | KOp::Iota { .. } => vec![],
        KOp::Unary { a, .. } | KOp::Convert { a } | KOp::Bitcast { a } | KOp::IntegerPow { a, .. } => vec![*a],
        KOp::Binary { a, b, .. } | KOp::Compare { a, b, .. } => vec![*a, *b],
        KOp::Select { pred, cases } => std::iter::once(*pred).chain(cases.iter().copied()).collect(),
        KOp::Clamp { lo, x, hi } => vec![*lo, *x, *hi],
        KOp::Fma { a, b, c } => vec![*a, *b, *c],
        KOp::Gather { index, fill, .. } => std::iter::once(*index).chain(*fill).collect(),
    }
}

/// Scalar lane `l` of vector value `v` of dtype `dt` (bool masks become 0/1 `i8`).
pub fn lane_scalar(b: &mut FunctionBuilder, dt: DType, v: Value, l: u32) -> Value {
    let s = b.ins().extractlane(v, l as u8);
    if held32(dt) && b.func.dfg.value_type(s) == types::I32 {
        b.ins().ireduce(if dt.size() == 1 { types::I8 } else { types::I16 }, s)
    } else if dt == DType::Bool {
        let ty = b.func.dfg.value_type(s);
        let z = b.ins().iconst(ty, 0);
        b.ins().icmp(IntCC::NotEqual, s, z)
    } else {
        s
    }
}

/// The transpose of the square block whose rows are `rows` (4 f32x4 or 2 f64x2 vectors of one type): lane
/// `i` of result `j` is lane `j` of row `i`. Byte shuffles Cranelift lowers to single `punpck{l,h}{dq,qdq}`s
/// (8 for 4x4, 2 for 2x2).
pub fn transpose(b: &mut FunctionBuilder, rows: &[Value]) -> Result<Vec<Value>> {
    let Some(&r0) = rows.first() else { return Ok(Vec::new()) };
    let vt = b.func.dfg.value_type(r0);
    if vt.lane_count() as usize != rows.len() || !matches!(vt.lane_bits(), 32 | 64) || vt.bits() != 128 {
        return Err(Error::Codegen(format!("transpose of {} rows of {vt}", rows.len())));
    }
    let bytes: Vec<Value> = rows.iter().map(|&r| b.ins().bitcast(types::I8X16, vflags(), r)).collect();
    // (lo, hi) interleave of `w`-byte pieces: a0 b0 a1 b1 of the low (or high) half of a and b
    let mix = |b: &mut FunctionBuilder, x: Value, y: Value, w: u8, hi: bool| {
        let base = if hi { 8 } else { 0 };
        let mask: Vec<u8> = (0..16 / (2 * w)).flat_map(|p| [base + p * w, 16 + base + p * w]).flat_map(|s| s..s + w).collect();
        let imm = b.func.dfg.immediates.push(cranelift_codegen::ir::ConstantData::from(mask));
        b.ins().shuffle(x, y, imm)
    };
    let cols = if rows.len() == 2 {
        vec![mix(b, bytes[0], bytes[1], 8, false), mix(b, bytes[0], bytes[1], 8, true)]
    } else {
        let t0 = mix(b, bytes[0], bytes[1], 4, false);
        let t1 = mix(b, bytes[0], bytes[1], 4, true);
        let t2 = mix(b, bytes[2], bytes[3], 4, false);
        let t3 = mix(b, bytes[2], bytes[3], 4, true);
        vec![mix(b, t0, t2, 8, false), mix(b, t0, t2, 8, true), mix(b, t1, t3, 8, false), mix(b, t1, t3, 8, true)]
    };
    Ok(cols.into_iter().map(|c| b.ins().bitcast(vt, vflags(), c)).collect())
}

/// A vector of `lanes` lanes of dtype `dt` from scalar values (bools as 0/1 `i8`).
pub fn from_lanes(b: &mut FunctionBuilder, dt: DType, lanes: u32, xs: &[Value]) -> Value {
    let vt = vtype(dt, lanes);
    let conv = |b: &mut FunctionBuilder, x: Value| {
        if dt == DType::Bool {
            b.ins().bmask(vt.lane_type(), x)
        } else if held32(dt) && vt.lane_type() == types::I32 {
            extend32(b, dt, x)
        } else {
            x
        }
    };
    let x0 = conv(b, xs[0]);
    let mut v = b.ins().splat(vt, x0);
    for (l, &x) in xs.iter().enumerate().skip(1) {
        let x = conv(b, x);
        v = b.ins().insertlane(v, x, l as u8);
    }
    v
}

/// A vector constant: `x` (a scalar of `dt`'s Cranelift type; bools 0/1 `i8`) in every lane.
pub fn splat(b: &mut FunctionBuilder, dt: DType, lanes: u32, x: Value) -> Value {
    let vt = vtype(dt, lanes);
    let x = if dt == DType::Bool {
        b.ins().bmask(vt.lane_type(), x)
    } else if held32(dt) && vt.lane_type() == types::I32 {
        extend32(b, dt, x)
    } else {
        x
    };
    b.ins().splat(vt, x)
}

/// A `held32` scalar (i8/i16) extended to the i32 its lane holds.
fn extend32(b: &mut FunctionBuilder, dt: DType, x: Value) -> Value {
    if sign_held(dt) {
        b.ins().sextend(types::I32, x)
    } else {
        b.ins().uextend(types::I32, x)
    }
}

/// Emits instruction `i` once per lane through the scalar lowering.
fn per_lane(
    b: &mut FunctionBuilder, imports: &Imports, body: &[KInstr], i: usize, vals: &[Option<Value>], lanes: u32,
    scratch: &mut Vec<Option<Value>>,
) -> Result<Value> {
    let ops_ = operands(&body[i].op);
    if scratch.len() < body.len() {
        scratch.resize(body.len(), None);
    }
    let mut outs = Vec::with_capacity(lanes as usize);
    for l in 0..lanes {
        for &j in &ops_ {
            let v = vals.get(j).copied().flatten().filter(|_| j < i).ok_or_else(|| {
                Error::Codegen(format!("instruction {i} uses %{j}, which is not an earlier live value"))
            })?;
            // An integer constant stays a constant (a divisor Cranelift can strength-reduce), not a lane
            // extracted from its splat.
            scratch[j] = Some(match &body[j].op {
                KOp::Const { value } if body[j].dtype.is_int() => ops::constant(b, body[j].dtype, *value),
                _ => lane_scalar(b, body[j].dtype, v, l),
            });
        }
        let r = ops::emit(b, imports, body, i, scratch);
        for &j in &ops_ {
            scratch[j] = None;
        }
        outs.push(r?);
    }
    Ok(from_lanes(b, body[i].dtype, lanes, &outs))
}

fn fsplat(b: &mut FunctionBuilder, vt: Type, v: f64) -> Value {
    let s = if vt.lane_type() == types::F64 { b.ins().f64const(v) } else { b.ins().f32const(v as f32) };
    b.ins().splat(vt, s)
}

fn isplat(b: &mut FunctionBuilder, vt: Type, v: i64) -> Value {
    let lt = vt.lane_type();
    let v = if lt.bits() < 64 { v & ((1i64 << lt.bits()) - 1) } else { v };
    let s = b.ins().iconst(lt, v);
    b.ins().splat(vt, s)
}

/// `m ? a : c` with a lane mask `m`.
fn vsel(b: &mut FunctionBuilder, m: Value, a: Value, c: Value) -> Value {
    let vt = b.func.dfg.value_type(a);
    let mt = b.func.dfg.value_type(m);
    let m = if vt != mt { b.ins().bitcast(vt, vflags(), m) } else { m };
    b.ins().bitselect(m, a, c)
}

/// copysign(1, x) for float vectors.
fn one_with_sign(b: &mut FunctionBuilder, vt: Type, x: Value) -> Value {
    let it = vt.as_int();
    let sign = if vt.lane_type() == types::F64 { i64::MIN } else { 0x8000_0000 };
    let xb = b.ins().bitcast(it, vflags(), x);
    let sm = isplat(b, it, sign);
    let s = b.ins().band(xb, sm);
    let one = fsplat(b, vt, 1.0);
    let ob = b.ins().bitcast(it, vflags(), one);
    let r = b.ins().bor(s, ob);
    b.ins().bitcast(vt, vflags(), r)
}

fn float_cc(op: CompareOp) -> FloatCC {
    match op {
        CompareOp::Eq => FloatCC::Equal,
        CompareOp::Ne => FloatCC::NotEqual,
        CompareOp::Lt => FloatCC::LessThan,
        CompareOp::Le => FloatCC::LessThanOrEqual,
        CompareOp::Gt => FloatCC::GreaterThan,
        CompareOp::Ge => FloatCC::GreaterThanOrEqual,
    }
}

fn int_cc(op: CompareOp, signed: bool) -> IntCC {
    match (op, signed) {
        (CompareOp::Eq, _) => IntCC::Equal,
        (CompareOp::Ne, _) => IntCC::NotEqual,
        (CompareOp::Lt, true) => IntCC::SignedLessThan,
        (CompareOp::Le, true) => IntCC::SignedLessThanOrEqual,
        (CompareOp::Gt, true) => IntCC::SignedGreaterThan,
        (CompareOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
        (CompareOp::Lt, false) => IntCC::UnsignedLessThan,
        (CompareOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
        (CompareOp::Gt, false) => IntCC::UnsignedGreaterThan,
        (CompareOp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
    }
}

/// A vectorized math function: a call of its out-of-line routine when the kernel imported one, else inline.
fn vmath_call(b: &mut FunctionBuilder, imports: &Imports, f: MathFn, vt: Type, args: &[Value]) -> Result<Value> {
    if let Some(r) = imports.get(&super::mathlib::vec_key(f)) {
        let inst = b.ins().call(*r, args);
        return Ok(b.inst_results(inst)[0]);
    }
    vmath::emit(b, imports, f, vt, args)
}

/// Emits body instruction `i` (not `Load`/`Iota`) on `lanes` lanes; `vals` holds earlier live vector values.
/// `scratch` is a reusable buffer for per-lane fallbacks.
pub fn emit(
    b: &mut FunctionBuilder, imports: &Imports, body: &[KInstr], i: usize, vals: &[Option<Value>], lanes: u32,
    scratch: &mut Vec<Option<Value>>,
) -> Result<Value> {
    let instr = &body[i];
    let dt = instr.dtype;
    let vt = vtype(dt, lanes);
    let get = |j: usize| -> Result<(Value, DType)> {
        match (vals.get(j).copied().flatten(), body.get(j)) {
            (Some(v), Some(ins)) if j < i => Ok((v, ins.dtype)),
            _ => Err(Error::Codegen(format!("instruction {i} uses %{j}, which is not an earlier live value"))),
        }
    };
    let wide_int = |d: DType| d == DType::I64;
    macro_rules! fallback {
        () => {
            return per_lane(b, imports, body, i, vals, lanes, scratch)
        };
    }
    // float64 values in a 4-lane kernel (`narrow_f64_values`): each is computed where a conversion to
    // float32 uses it, as two f64x2 halves; the value itself is never read (a placeholder Cranelift drops)
    if lanes == 4 && dt == DType::F64 {
        return Ok(b.ins().f64const(0.0));
    }
    if let (4, DType::F32, KOp::Convert { a }) = (lanes, dt, &instr.op) {
        if body.get(*a).is_some_and(|x| x.dtype == DType::F64) {
            let mut memo = std::collections::HashMap::new();
            let lo = f64_half(b, body, vals, *a, 0, &mut memo)?;
            let hi = f64_half(b, body, vals, *a, 1, &mut memo)?;
            // [lo0, lo1, 0, 0] and [hi0, hi1, 0, 0] -> [lo0, lo1, hi0, hi1]
            let lo = b.ins().fvdemote(lo);
            let hi = b.ins().fvdemote(hi);
            let lo = b.ins().bitcast(types::I64X2, vflags(), lo);
            let hi = b.ins().bitcast(types::I64X2, vflags(), hi);
            let h0 = b.ins().extractlane(hi, 0);
            let v = b.ins().insertlane(lo, h0, 1);
            return Ok(b.ins().bitcast(types::F32X4, vflags(), v));
        }
    }
    Ok(match &instr.op {
        KOp::Const { value } => {
            let s = ops::constant(b, dt, *value);
            splat(b, dt, lanes, s)
        }
        KOp::Unary { op, a } => {
            let (x, adt) = get(*a)?;
            let avt = vtype(adt, lanes);
            use UnaryOp as U;
            if adt.is_float() {
                if let Some(f) = MathFn::from_unary(*op) {
                    if vmath::supports(f, adt) {
                        return vmath_call(b, imports, f, avt, &[x]);
                    }
                    // (f64 rsqrt is imported, `math_xla64::rsqrt`: per lane below)
                    if f == MathFn::Rsqrt && !imports.contains_key(&(f, adt)) {
                        let one = fsplat(b, avt, 1.0);
                        let s = b.ins().sqrt(x);
                        return Ok(b.ins().fdiv(one, s));
                    }
                    fallback!();
                }
                match op {
                    U::Neg => b.ins().fneg(x),
                    U::Abs => b.ins().fabs(x),
                    U::Floor => b.ins().floor(x),
                    U::Ceil => b.ins().ceil(x),
                    U::RoundEven => b.ins().nearest(x),
                    U::Sqrt => b.ins().sqrt(x),
                    U::Square => b.ins().fmul(x, x),
                    U::IsFinite => {
                        let a = b.ins().fabs(x);
                        let inf = fsplat(b, avt, f64::INFINITY);
                        b.ins().fcmp(FloatCC::LessThan, a, inf)
                    }
                    U::Sign => {
                        let s = one_with_sign(b, avt, x);
                        let zero = fsplat(b, avt, 0.0);
                        let eq = b.ins().fcmp(FloatCC::Equal, x, zero);
                        let nan = b.ins().fcmp(FloatCC::Unordered, x, x);
                        let keep = b.ins().bor(eq, nan);
                        // `x * 1`: subnormals read as zero come out as zeros of their sign (as ops.rs).
                        let one = fsplat(b, avt, 1.0);
                        let x1 = b.ins().fmul(x, one);
                        vsel(b, keep, x1, s)
                    }
                    U::Round => {
                        let t = b.ins().trunc(x);
                        let d = b.ins().fsub(x, t);
                        let d = b.ins().fabs(d);
                        let half = fsplat(b, avt, 0.5);
                        let ge = b.ins().fcmp(FloatCC::GreaterThanOrEqual, d, half);
                        let s = one_with_sign(b, avt, x);
                        let up = b.ins().fadd(t, s);
                        vsel(b, ge, up, t)
                    }
                    _ => fallback!(),
                }
            } else if adt == DType::Bool {
                match op {
                    U::Not => b.ins().bnot(x),
                    U::Abs | U::Sign | U::Floor | U::Ceil | U::Round | U::RoundEven | U::Square | U::PopulationCount => x,
                    U::IsFinite => isplat(b, vt, -1),
                    _ => fallback!(),
                }
            } else {
                match op {
                    U::Neg => {
                        let r = b.ins().ineg(x);
                        rewrap(b, dt, r)
                    }
                    U::Not => {
                        let r = b.ins().bnot(x);
                        rewrap(b, dt, r)
                    }
                    U::Abs if !adt.is_signed_int() => x,
                    U::Abs if !wide_int(adt) => {
                        let r = b.ins().iabs(x);
                        rewrap(b, dt, r)
                    }
                    U::Floor | U::Ceil | U::Round | U::RoundEven => x,
                    U::Square => {
                        let r = b.ins().imul(x, x);
                        rewrap(b, dt, r)
                    }
                    U::IsFinite => isplat(b, vt, -1),
                    U::Sign if adt.is_signed_int() && !wide_int(adt) => {
                        let m1 = isplat(b, avt, -1);
                        let p1 = isplat(b, avt, 1);
                        let t = b.ins().smax(x, m1);
                        b.ins().smin(t, p1)
                    }
                    U::Sign if !adt.is_signed_int() && !wide_int(adt) => {
                        let p1 = isplat(b, avt, 1);
                        b.ins().umin(x, p1)
                    }
                    _ => fallback!(),
                }
            }
        }
        KOp::Binary { op, a, b: bb } => {
            let (x, _) = get(*a)?;
            let (y, ydt) = get(*bb)?;
            use BinaryOp as B;
            if let Some(f) = binary_math(*op, dt) {
                if vmath::supports(f, dt) {
                    let y = if ydt == dt {
                        y
                    } else if ydt == DType::I32 && dt == DType::F32 {
                        b.ins().fcvt_from_sint(vt, y)
                    } else {
                        fallback!()
                    };
                    return vmath_call(b, imports, f, vt, &[x, y]);
                }
                fallback!();
            }
            if ydt != dt {
                fallback!();
            }
            if let (B::ShiftLeft | B::ShiftRightLogical | B::ShiftRightArithmetic, Some(KOp::Const { value })) =
                (op, body.get(*bb).map(|ins| &ins.op))
            {
                // A constant amount (threefry's rotations) is one vector shift; amounts that vary by lane
                // stay per lane (x86 SIMD shifts take one scalar amount).
                if let (true, Scalar::Int(n)) = (dt.is_int(), value.cast(dt)) {
                    if held32(dt) {
                        return Ok(shift_held_by_const(b, *op, dt, x, n));
                    }
                    return Ok(shift_by_const(b, *op, vt, x, n));
                }
            }
            if let (B::Div | B::Rem, true) = (op, matches!(dt, DType::I32 | DType::U32)) {
                // int32/uint32 division without extracting lanes (vdiv.rs)
                let rem = *op == B::Rem;
                if let Some(KOp::Const { value }) = body.get(*bb).map(|ins| &ins.op) {
                    if let Scalar::Int(n) = value.cast(dt) {
                        return Ok(vdiv::div_rem_by_const(b, x, n, dt.is_signed_int(), rem));
                    }
                }
                if dt == DType::I32 {
                    return Ok(vdiv::div_i32_f64(b, x, y, rem));
                }
            }
            if dt.is_float() {
                match op {
                    B::Add => b.ins().fadd(x, y),
                    B::Sub => b.ins().fsub(x, y),
                    B::Mul => b.ins().fmul(x, y),
                    B::Div => b.ins().fdiv(x, y),
                    B::Max | B::Min => ops::max_min(b, dt, x, y, *op == B::Max),
                    _ => fallback!(),
                }
            } else if dt == DType::Bool {
                match op {
                    B::Add | B::Or | B::Max => b.ins().bor(x, y),
                    B::Mul | B::And | B::Min => b.ins().band(x, y),
                    B::Xor => b.ins().bxor(x, y),
                    _ => fallback!(),
                }
            } else {
                match op {
                    // (8/16-bit lanes wrap to their width)
                    B::Add => {
                        let r = b.ins().iadd(x, y);
                        rewrap(b, dt, r)
                    }
                    B::Sub => {
                        let r = b.ins().isub(x, y);
                        rewrap(b, dt, r)
                    }
                    B::Mul => {
                        let r = b.ins().imul(x, y);
                        rewrap(b, dt, r)
                    }
                    B::And => b.ins().band(x, y),
                    B::Or => b.ins().bor(x, y),
                    B::Xor => b.ins().bxor(x, y),
                    B::Max | B::Min if !wide_int(dt) => ops::max_min(b, dt, x, y, *op == B::Max),
                    _ => fallback!(),
                }
            }
        }
        KOp::Compare { op, a, b: bb } => {
            let (x, xdt) = get(*a)?;
            let (y, _) = get(*bb)?;
            if xdt.is_float() {
                b.ins().fcmp(float_cc(*op), x, y)
            } else if xdt == DType::Bool {
                match op {
                    CompareOp::Eq | CompareOp::Ne => b.ins().icmp(int_cc(*op, true), x, y),
                    _ => fallback!(),
                }
            } else {
                b.ins().icmp(int_cc(*op, xdt.is_signed_int()), x, y)
            }
        }
        KOp::Select { pred, cases } => {
            let (p, pdt) = get(*pred)?;
            let (mut r, _) = get(*cases.first().ok_or_else(|| Error::Codegen("select_n with no cases".into()))?)?;
            if pdt == DType::Bool {
                if cases.len() > 1 {
                    let (v, _) = get(cases[1])?;
                    r = vsel(b, p, v, r);
                }
                r
            } else {
                let pvt = vtype(pdt, lanes);
                let cc = if pdt.is_signed_int() { IntCC::SignedGreaterThanOrEqual } else { IntCC::UnsignedGreaterThanOrEqual };
                for (k, &c) in cases.iter().enumerate().skip(1) {
                    let (v, _) = get(c)?;
                    let kk = isplat(b, pvt, k as i64);
                    let ge = b.ins().icmp(cc, p, kk);
                    r = vsel(b, ge, v, r);
                }
                r
            }
        }
        KOp::Convert { a } => {
            let (x, xdt) = get(*a)?;
            match vconvert(b, xdt, dt, lanes, x) {
                Some(v) => v,
                None => fallback!(),
            }
        }
        KOp::Bitcast { a } => {
            let (x, xdt) = get(*a)?;
            if xdt.size() != dt.size() || xdt == DType::Bool || dt == DType::Bool || held32(xdt) != held32(dt) {
                fallback!();
            }
            // same bits, extended as `dt` is held (uint16 zero-extended <-> float16 sign-extended)
            if held32(dt) && sign_held(xdt) != sign_held(dt) {
                return Ok(rewrap(b, dt, x));
            }
            let ft = vtype(xdt, lanes);
            if ft == vt {
                x
            } else {
                b.ins().bitcast(vt, vflags(), x)
            }
        }
        KOp::IntegerPow { a, y } => {
            let (x, _) = get(*a)?;
            let y = *y;
            if dt == DType::Bool {
                if y == 0 {
                    isplat(b, vt, -1)
                } else {
                    x
                }
            } else if (y < 0 && !dt.is_float()) || wide_int(dt) {
                fallback!()
            } else {
                let one = if dt.is_float() { fsplat(b, vt, 1.0) } else { isplat(b, vt, 1) };
                if y == 0 {
                    return Ok(one);
                }
                let r = ops::pow_by_squaring(b, dt.is_float(), x, one, y);
                rewrap(b, dt, r)
            }
        }
        KOp::Fma { a, b: m, c } => {
            // lanewise; without FMA on the host Cranelift calls `fmaf`/`fma` per lane
            let (x, _) = get(*a)?;
            let (y, _) = get(*m)?;
            let (z, _) = get(*c)?;
            b.ins().fma(x, y, z)
        }
        KOp::Clamp { lo, x, hi } => {
            if wide_int(dt) {
                fallback!();
            }
            let (l, _) = get(*lo)?;
            let (v, _) = get(*x)?;
            let (h, _) = get(*hi)?;
            let t = ops::max_min(b, dt, v, l, true);
            ops::max_min(b, dt, t, h, false)
        }
        KOp::Load { .. } | KOp::Iota { .. } | KOp::Gather { .. } => {
            return Err(Error::Codegen(format!("instruction {i}: load/iota/gather must be lowered by the loop codegen")))
        }
    })
}

/// `convert_element_type` on vector lanes, with the scalar lowering's results; `None` where there is no
/// vector lowering (the caller converts per lane).
/// Which body instructions are float64 values a 4-lane kernel can compute as f64x2 halves (`emit`): when
/// every live float64 instruction is a conversion from float32, a constant, `neg`, or `add`/`sub`/`mul`
/// of such values, none is a kernel output, and each is read only by such instructions or by a
/// conversion to float32. `None` when the body has no float64 value or one that does not qualify. The
/// halves run the same IEEE operations per lane as the scalar code (promotion is exact; `fvdemote` rounds
/// as `fdemote`), so results are bit-identical.
pub fn narrow_f64_values(body: &[KInstr], live: &[bool], outputs: impl Iterator<Item = usize>) -> Option<Vec<bool>> {
    let is_live = |i: usize| live.get(i).copied().unwrap_or(false);
    let mut narrow = vec![false; body.len()];
    let mut any = false;
    for (i, ins) in body.iter().enumerate() {
        if !is_live(i) || ins.dtype != DType::F64 {
            continue;
        }
        let ok = match &ins.op {
            KOp::Const { .. } => true,
            KOp::Convert { a } => body.get(*a).is_some_and(|x| x.dtype == DType::F32),
            KOp::Unary { op: UnaryOp::Neg, .. } => true,
            KOp::Binary { op: BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, .. } => true,
            _ => false,
        };
        if !ok {
            return None;
        }
        narrow[i] = true;
        any = true;
    }
    if !any {
        return None;
    }
    for o in outputs {
        if narrow.get(o).copied().unwrap_or(false) {
            return None;
        }
    }
    for (i, ins) in body.iter().enumerate() {
        if !is_live(i) {
            continue;
        }
        let reads_f64 = operands(&ins.op).iter().any(|&j| narrow.get(j).copied().unwrap_or(false));
        if reads_f64 && !narrow[i] && !(ins.dtype == DType::F32 && matches!(ins.op, KOp::Convert { .. })) {
            return None;
        }
        // (the operands of the float64 arithmetic are float64 values themselves)
        if narrow[i] && !matches!(ins.op, KOp::Convert { .. } | KOp::Const { .. }) {
            if !operands(&ins.op).iter().all(|&j| narrow.get(j).copied().unwrap_or(false)) {
                return None;
            }
        }
    }
    Some(narrow)
}

/// Half `h` (lanes 2h, 2h + 1) of float64 value `j` (one of `narrow_f64_values`) as an f64x2, from the
/// float32 vectors it is computed from.
fn f64_half(
    b: &mut FunctionBuilder, body: &[KInstr], vals: &[Option<Value>], j: usize, h: u8,
    memo: &mut std::collections::HashMap<(usize, u8), Value>,
) -> Result<Value> {
    if let Some(&v) = memo.get(&(j, h)) {
        return Ok(v);
    }
    let v = match body.get(j).map(|x| &x.op) {
        Some(KOp::Const { value }) => {
            let s = ops::constant(b, DType::F64, *value);
            b.ins().splat(types::F64X2, s)
        }
        Some(KOp::Convert { a }) => {
            let x = vals.get(*a).copied().flatten().filter(|_| *a < j).ok_or_else(|| {
                Error::Codegen(format!("float64 value %{j} uses %{a}, which is not an earlier live value"))
            })?;
            let x = if h == 0 {
                x
            } else {
                // lanes 2, 3 moved down to 0, 1
                let w = b.ins().bitcast(types::I64X2, vflags(), x);
                let hi = b.ins().extractlane(w, 1);
                let w = b.ins().splat(types::I64X2, hi);
                b.ins().bitcast(types::F32X4, vflags(), w)
            };
            b.ins().fvpromote_low(x)
        }
        Some(KOp::Unary { op: UnaryOp::Neg, a }) => {
            let x = f64_half(b, body, vals, *a, h, memo)?;
            b.ins().fneg(x)
        }
        Some(KOp::Binary { op, a, b: c }) if matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul) => {
            let x = f64_half(b, body, vals, *a, h, memo)?;
            let y = f64_half(b, body, vals, *c, h, memo)?;
            match op {
                BinaryOp::Add => b.ins().fadd(x, y),
                BinaryOp::Sub => b.ins().fsub(x, y),
                _ => b.ins().fmul(x, y),
            }
        }
        _ => return Err(Error::Codegen(format!("%{j} is not a float64 value of a 4-lane kernel"))),
    };
    memo.insert((j, h), v);
    Ok(v)
}

fn vconvert(b: &mut FunctionBuilder, xdt: DType, dt: DType, lanes: u32, x: Value) -> Option<Value> {
    let vt = vtype(dt, lanes);
    use DType::*;
    Some(match (xdt, dt) {
        _ if xdt == dt => x,
        // float16 (4 lanes): through f32, as `ops::convert_f16` does.
        (F16, _) if lanes == 4 => {
            let f = vf16_to_f32(b, x);
            vconvert(b, F32, dt, lanes, f)?
        }
        // bfloat16 (4 lanes): its bits are f32's upper half
        (BF16, _) if lanes == 4 => {
            let s = b.ins().iconst(types::I32, 16);
            let w = b.ins().ishl(x, s);
            let f = b.ins().bitcast(types::F32X4, vflags(), w);
            vconvert(b, F32, dt, lanes, f)?
        }
        // to either 16-bit float: 1.0's bits for true, the rest through f32
        (Bool, F16 | BF16) if lanes == 4 => {
            let one = isplat(b, vt, if dt == F16 { 0x3c00 } else { 0x3f80 });
            b.ins().band(x, one)
        }
        (F32 | I32 | U32 | I8 | U8 | I16 | U16, F16 | BF16) if lanes == 4 => {
            let f = vconvert(b, xdt, F32, lanes, x)?;
            if dt == F16 {
                vf32_to_f16(b, f)
            } else {
                vf32_to_bf16(b, f)
            }
        }
        // 8/16-bit integers (4 lanes, held as their values: `lane_size`), as `ops::convert_narrow`: int ->
        // int truncates to the target (the held value is the source extended by its signedness), float ->
        // int saturates in i32 and clamps to the target's range, int -> float is exact from i32.
        (I8 | U8 | I16 | U16 | I32 | U32, I8 | U8 | I16 | U16) if lanes == 4 => rewrap(b, dt, x),
        (I8 | U8 | I16 | U16, I32 | U32) if lanes == 4 => x,
        (I8 | U8 | I16 | U16, F32) if lanes == 4 => b.ins().fcvt_from_sint(vt, x),
        (F32, I8 | U8 | I16 | U16) if lanes == 4 => {
            let (lo, hi) = dt.int_range()?;
            let w = b.ins().fcvt_to_sint_sat(vt, x);
            let l = isplat(b, vt, lo);
            let h = isplat(b, vt, hi);
            let w = b.ins().smax(w, l);
            b.ins().smin(w, h)
        }
        (I8 | U8 | I16 | U16, Bool) if lanes == 4 => {
            let z = isplat(b, vtype(xdt, lanes), 0);
            b.ins().icmp(IntCC::NotEqual, x, z)
        }
        (Bool, I8 | U8 | I16 | U16) if lanes == 4 => {
            let one = isplat(b, vt, 1);
            b.ins().band(x, one)
        }
        (I32, U32) | (U32, I32) => x,
        (F32, I32) => b.ins().fcvt_to_sint_sat(vt, x),
        (F32, U32) => b.ins().fcvt_to_uint_sat(vt, x),
        (I32, F32) => b.ins().fcvt_from_sint(vt, x),
        (U32, F32) => b.ins().fcvt_from_uint(vt, x),
        (F32 | F64, Bool) => {
            let z = fsplat(b, vtype(xdt, lanes), 0.0);
            b.ins().fcmp(FloatCC::NotEqual, x, z)
        }
        (I32 | U32 | I64, Bool) => {
            let z = isplat(b, vtype(xdt, lanes), 0);
            b.ins().icmp(IntCC::NotEqual, x, z)
        }
        (Bool, F32 | F64) => {
            let one = fsplat(b, vt, 1.0);
            let ob = b.ins().bitcast(vt.as_int(), vflags(), one);
            let r = b.ins().band(x, ob);
            b.ins().bitcast(vt, vflags(), r)
        }
        (Bool, I32 | U32 | I64) => {
            let one = isplat(b, vt, 1);
            b.ins().band(x, one)
        }
        _ => return None,
    })
}

/// `m ? x : y` on same-typed lanes as `y ^ ((x ^ y) & m)`: three single-µop ops (Cranelift would turn
/// and/andnot/or into a variable blend, several µops on x86).
fn mask_sel(b: &mut FunctionBuilder, m: Value, x: Value, y: Value) -> Value {
    let d = b.ins().bxor(x, y);
    let d = b.ins().band(d, m);
    b.ins().bxor(y, d)
}

/// `ops::f16_to_f32` on i32x4 lanes holding float16 bits sign-extended (see `lane_size`), bit for bit:
/// normals rebias, infinities and NaNs keep their payload (no float arithmetic touches them), subnormals
/// are `m * 2^-24` (exact in f32).
pub fn vf16_to_f32(b: &mut FunctionBuilder, h: Value) -> Value {
    let it = types::I32X4;
    let m7fff = isplat(b, it, 0x7fff);
    let em = b.ins().band(h, m7fff);
    // h ^ em is 0xffff_8000 for a negative value (sign-extended), else 0.
    let sign = b.ins().bxor(h, em);
    let sign = shift_by_const(b, BinaryOp::ShiftLeft, it, sign, 16);
    let sh = shift_by_const(b, BinaryOp::ShiftLeft, it, em, 13);
    // em is in [0, 0x7fff]: signed compares are exact.
    let c7bff = isplat(b, it, 0x7bff);
    let is_big = b.ins().icmp(IntCC::SignedGreaterThan, em, c7bff);
    // normals: exponent + (127 - 15); infinities and NaNs: all ones (twice that).
    let bias = isplat(b, it, 0x3800_0000);
    let normal = b.ins().iadd(sh, bias);
    let extra = b.ins().band(is_big, bias);
    let normal = b.ins().iadd(normal, extra);
    let mf = b.ins().fcvt_from_sint(types::F32X4, em);
    let scale = fsplat(b, types::F32X4, 5.960_464_477_539_063e-8); // 2^-24
    let sub = b.ins().fmul(mf, scale);
    let sub = b.ins().bitcast(it, vflags(), sub);
    let c400 = isplat(b, it, 0x400);
    let is_sub = b.ins().icmp(IntCC::SignedGreaterThan, c400, em);
    let r = mask_sel(b, is_sub, sub, normal);
    let r = b.ins().bor(r, sign);
    b.ins().bitcast(types::F32X4, vflags(), r)
}

/// `ops::f32_to_f16` on f32x4 lanes, bit for bit (round to nearest even, overflow to infinity, subnormals,
/// NaN → 0x7e00 with the sign kept); the float16 bits come back sign-extended in i32x4 lanes.
pub fn vf32_to_f16(b: &mut FunctionBuilder, x: Value) -> Value {
    let it = types::I32X4;
    let u = b.ins().bitcast(it, vflags(), x);
    let msign = isplat(b, it, 0x8000_0000);
    let sign = b.ins().band(u, msign);
    let a = b.ins().bxor(u, sign);
    // a = |x|'s bits, in [0, 0x7fff_ffff]: signed compares are exact.
    // subnormal results (a < 2^-14): adding 0.5 aligns the 10 result bits at the bottom (rounding to even)
    let af = b.ins().bitcast(types::F32X4, vflags(), a);
    let half = fsplat(b, types::F32X4, 0.5);
    let s = b.ins().fadd(af, half);
    let s = b.ins().bitcast(it, vflags(), s);
    let half_bits = b.ins().bitcast(it, vflags(), half);
    let sub = b.ins().isub(s, half_bits);
    // other results: rebias, add 0xfff plus the kept mantissa's lowest bit (ties to even), shift. From
    // 65520 up (and for infinities and NaNs) this is at least 0x7c00, so a min gives infinity; the sum
    // cannot overflow (a ≤ 0x7fff_ffff, the addend is negative).
    let odd = shift_by_const(b, BinaryOp::ShiftLeft, it, a, 18);
    let odd = shift_by_const(b, BinaryOp::ShiftRightArithmetic, it, odd, 31); // -1 when odd
    let k = isplat(b, it, ((15i64 - 127) << 23) + 0xfff);
    let t = b.ins().iadd(a, k);
    let t = b.ins().isub(t, odd);
    let normal = shift_by_const(b, BinaryOp::ShiftRightLogical, it, t, 13);
    let lo = isplat(b, it, 113 << 23);
    let is_sub = b.ins().icmp(IntCC::SignedGreaterThan, lo, a);
    // sub is in [0, 0x400]
    let r = mask_sel(b, is_sub, sub, normal);
    let inf = isplat(b, it, 0x7c00);
    let r = b.ins().smin(r, inf);
    // NaN: 0x7c00 | 0x200
    let is_nan = b.ins().fcmp(FloatCC::Unordered, x, x);
    let is_nan = if b.func.dfg.value_type(is_nan) == it { is_nan } else { b.ins().bitcast(it, vflags(), is_nan) };
    let qbit = isplat(b, it, 0x200);
    let q = b.ins().band(is_nan, qbit);
    let r = b.ins().bor(r, q);
    // r is in [0, 0x7e00]; the sign shifted arithmetically fills the upper half too (sign-extended bits).
    let sign = shift_by_const(b, BinaryOp::ShiftRightArithmetic, it, sign, 16);
    b.ins().bor(r, sign)
}

/// `ops::f32_to_bf16` on f32x4 lanes, bit for bit (round to nearest even; NaN → the sign with 0x7fc0); the
/// bfloat16 bits come back sign-extended in i32x4 lanes.
pub fn vf32_to_bf16(b: &mut FunctionBuilder, x: Value) -> Value {
    let it = types::I32X4;
    let u = b.ins().bitcast(it, vflags(), x);
    // |x|'s bits are in [0, 0x7fff_ffff]: signed compares are exact
    let m = isplat(b, it, 0x7fff_ffff);
    let a = b.ins().band(u, m);
    let inf = isplat(b, it, 0x7f80_0000);
    let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, a, inf);
    let odd = shift_by_const(b, BinaryOp::ShiftRightLogical, it, u, 16);
    let one = isplat(b, it, 1);
    let odd = b.ins().band(odd, one);
    let k = isplat(b, it, 0x7fff);
    let t = b.ins().iadd(u, k);
    let t = b.ins().iadd(t, odd);
    // (no NaN reaches here unmasked: a finite or infinite x's sum keeps its sign bit, so the arithmetic
    // shift gives the sign-extended bits)
    let r = shift_by_const(b, BinaryOp::ShiftRightArithmetic, it, t, 16);
    let hi = shift_by_const(b, BinaryOp::ShiftRightArithmetic, it, u, 16);
    let smask = isplat(b, it, 0xffff_8000u32 as i64);
    let sign = b.ins().band(hi, smask);
    let q = isplat(b, it, 0x7fc0);
    let qnan = b.ins().bor(sign, q);
    mask_sel(b, is_nan, qnan, r)
}

/// `x` (integer lanes of `vt`) shifted by the constant `n`, with `ops::shift`'s rules: an amount ≥ the lane
/// width (negative read as unsigned) gives 0, or the sign fill for an arithmetic shift.
fn shift_by_const(b: &mut FunctionBuilder, op: BinaryOp, vt: Type, x: Value, n: i64) -> Value {
    let bits = vt.lane_type().bits();
    let amt = if bits < 64 { (n as u64) & ((1u64 << bits) - 1) } else { n as u64 };
    let in_range = amt < u64::from(bits);
    match op {
        BinaryOp::ShiftRightArithmetic => {
            let a = if in_range { amt as i64 } else { i64::from(bits) - 1 };
            let s = b.ins().iconst(types::I32, a);
            b.ins().sshr(x, s)
        }
        _ if !in_range => isplat(b, vt, 0),
        _ => {
            let s = b.ins().iconst(types::I32, amt as i64);
            if op == BinaryOp::ShiftLeft {
                b.ins().ishl(x, s)
            } else {
                b.ins().ushr(x, s)
            }
        }
    }
}

/// `shift_by_const` for a `held32` integer dtype on its i32 lanes, with `ops::shift`'s rules at the dtype's
/// width (the amount read as an unsigned `dt`; ≥ the width gives 0, or the sign fill).
fn shift_held_by_const(b: &mut FunctionBuilder, op: BinaryOp, dt: DType, x: Value, n: i64) -> Value {
    let it = types::I32X4;
    let bits = 8 * dt.size() as u64;
    let amt = (n as u64) & ((1u64 << bits) - 1);
    let in_range = amt < bits;
    match op {
        BinaryOp::ShiftRightArithmetic => {
            // on the value sign-extended from the dtype's width, then held as `dt` is
            let sx = if sign_held(dt) {
                x
            } else {
                let s = b.ins().iconst(types::I32, 32 - bits as i64);
                let t = b.ins().ishl(x, s);
                b.ins().sshr(t, s)
            };
            let a = if in_range { amt as i64 } else { bits as i64 - 1 };
            let s = b.ins().iconst(types::I32, a);
            let r = b.ins().sshr(sx, s);
            rewrap(b, dt, r)
        }
        _ if !in_range => isplat(b, it, 0),
        BinaryOp::ShiftLeft => {
            let s = b.ins().iconst(types::I32, amt as i64);
            let r = b.ins().ishl(x, s);
            rewrap(b, dt, r)
        }
        _ => {
            // the dtype's bits as unsigned, shifted, held as `dt` is
            let m = isplat(b, it, (1i64 << bits) - 1);
            let u = b.ins().band(x, m);
            let s = b.ins().iconst(types::I32, amt as i64);
            let r = b.ins().ushr(u, s);
            rewrap(b, dt, r)
        }
    }
}

/// Whether `dt`'s lanes fit the kernel's lane count (bools always do; float16 rides in 4 lanes).
pub fn fits(dt: DType, lanes: u32) -> bool {
    dt == DType::Bool || lanes_for(lane_size(dt)) == Some(lanes)
}
