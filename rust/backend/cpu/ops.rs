//! One scalar instruction → Cranelift instructions, with XLA/JAX semantics (see `KOp`'s docs). Values are
//! held as: bool → i8 (0/1), i8/u8 → i8, i16/u16 → i16, i32/u32 → i32, i64 → i64, f32 → f32, f64 → f64.
//! The 8/16-bit integers compute in their own Cranelift width (so arithmetic wraps by construction);
//! conversions to and from floats go through i32 (x86-64 has no narrow float conversions).
//! float16 values are held as their bits in an i16: only loads, stores, selects, bitcasts and conversions
//! see them (`opt::f16` rewrites float16 arithmetic to float32); conversions to and from f32 are exact
//! integer bit manipulation (round to nearest even, overflow to infinity, subnormals, NaN).
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;

use crate::error::{Error, Result};
use crate::ir::{BinaryOp, CompareOp, DType, ReduceOp, Scalar, UnaryOp};
use crate::plan::{KInstr, KOp};

use super::clif::{cl_type, fconst, iconst};
use super::math::emit_math;
use super::math_fn::{binary_math, Imports, MathFn};

fn unsupported(what: impl std::fmt::Display, dt: DType) -> Error {
    Error::Unsupported(format!("{what} on {}", dt.short_name()))
}

/// A scalar constant as `dt` (converted with `convert_element_type` semantics).
pub fn constant(b: &mut FunctionBuilder, dt: DType, s: Scalar) -> Value {
    match s.cast(dt) {
        Scalar::Bool(v) => iconst(b, types::I8, v as i64),
        Scalar::Int(v) => iconst(b, cl_type(dt), v),
        Scalar::Float(v) => fconst(b, dt, v),
    }
}

/// A float max/min result (scalar or vector) that compares equal to zero becomes the zero of its sign. XLA
/// reads subnormal operands as ±0 (DAZ), so `min(1e-40, 0.0)` is `0.0` and `max(1e-40, 1e-40)` is `0.0`;
/// Cranelift's `fmin`/`fmax` combine the bits of operands that compare equal (to order -0 < +0), which under
/// DAZ would hand back the subnormal. With DAZ on (every plan runs so) a subnormal compares equal to zero.
pub fn flush_zero(b: &mut FunctionBuilder, r: Value) -> Value {
    let ty = b.func.dfg.value_type(r);
    let lane = ty.lane_type();
    let z = if lane == types::F32 { b.ins().f32const(0.0) } else { b.ins().f64const(0.0) };
    let zero = if ty.is_vector() { b.ins().splat(ty, z) } else { z };
    let eq = b.ins().fcmp(FloatCC::Equal, r, zero);
    // the zero of r's sign: r's bits and the sign mask (x86 has no vector fcopysign in Cranelift)
    let sign = if lane == types::F32 { 1i64 << 31 } else { i64::MIN };
    let ity = ty.as_int();
    let flags = if ty.is_vector() { super::simd::vflags() } else { MemFlagsData::new() };
    let bits = b.ins().bitcast(ity, flags, r);
    let m = iconst(b, ity.lane_type(), sign);
    let m = if ty.is_vector() { b.ins().splat(ity, m) } else { m };
    let sbits = b.ins().band(bits, m);
    let signed = b.ins().bitcast(ty, flags, sbits);
    if ty.is_vector() {
        let mask = b.ins().bitcast(ty, flags, eq);
        b.ins().bitselect(mask, signed, r)
    } else {
        b.ins().select(eq, signed, r)
    }
}

/// `max`/`min` with XLA semantics: floats propagate NaN and order -0 < +0; ints signed or unsigned by dtype;
/// bool is or/and.
pub fn max_min(b: &mut FunctionBuilder, dt: DType, x: Value, y: Value, is_max: bool) -> Value {
    match (dt, is_max) {
        (DType::F32 | DType::F64, true) => {
            let r = b.ins().fmax(x, y);
            flush_zero(b, r)
        }
        (DType::F32 | DType::F64, false) => {
            let r = b.ins().fmin(x, y);
            flush_zero(b, r)
        }
        (DType::Bool, true) => b.ins().bor(x, y),
        (DType::Bool, false) => b.ins().band(x, y),
        (_, true) if dt.is_signed_int() => b.ins().smax(x, y),
        (_, false) if dt.is_signed_int() => b.ins().smin(x, y),
        (_, true) => b.ins().umax(x, y),
        (_, false) => b.ins().umin(x, y),
    }
}

/// The identity of a reduction (what reducing an empty set gives).
pub fn reduce_identity(b: &mut FunctionBuilder, dt: DType, op: ReduceOp) -> Result<Value> {
    let ty = cl_type(dt);
    Ok(match (op, dt) {
        (ReduceOp::Sum, DType::F32 | DType::F64) => fconst(b, dt, 0.0),
        (ReduceOp::Prod, DType::F32 | DType::F64) => fconst(b, dt, 1.0),
        (ReduceOp::Max, DType::F32 | DType::F64) => fconst(b, dt, f64::NEG_INFINITY),
        (ReduceOp::Min, DType::F32 | DType::F64) => fconst(b, dt, f64::INFINITY),
        (ReduceOp::And | ReduceOp::Or, DType::F32 | DType::F64) => return Err(unsupported(format!("reduce {op:?}"), dt)),
        (ReduceOp::Sum | ReduceOp::Or, _) => iconst(b, ty, 0),
        (ReduceOp::Prod, _) => iconst(b, ty, 1),
        (ReduceOp::And, DType::Bool) => iconst(b, ty, 1),
        (ReduceOp::And, _) => iconst(b, ty, -1),
        (ReduceOp::Max, DType::Bool) => iconst(b, ty, 0),
        (ReduceOp::Min, DType::Bool) => iconst(b, ty, 1),
        (ReduceOp::Max, _) => iconst(b, ty, dt.int_range().map_or(i64::MIN, |r| r.0)),
        (ReduceOp::Min, _) => iconst(b, ty, dt.int_range().map_or(i64::MAX, |r| r.1)),
    })
}

/// `acc ⊕ x` for a reduction.
pub fn reduce_combine(b: &mut FunctionBuilder, dt: DType, op: ReduceOp, acc: Value, x: Value) -> Result<Value> {
    Ok(match (op, dt) {
        (ReduceOp::Sum, DType::F32 | DType::F64) => b.ins().fadd(acc, x),
        (ReduceOp::Prod, DType::F32 | DType::F64) => b.ins().fmul(acc, x),
        (ReduceOp::Sum | ReduceOp::Or, DType::Bool) => b.ins().bor(acc, x),
        (ReduceOp::Prod | ReduceOp::And, DType::Bool) => b.ins().band(acc, x),
        (ReduceOp::Sum, _) => b.ins().iadd(acc, x),
        (ReduceOp::Prod, _) => b.ins().imul(acc, x),
        (ReduceOp::Max, _) => max_min(b, dt, acc, x, true),
        (ReduceOp::Min, _) => max_min(b, dt, acc, x, false),
        (ReduceOp::And | ReduceOp::Or, DType::F32 | DType::F64) => return Err(unsupported(format!("reduce {op:?}"), dt)),
        (ReduceOp::And, _) => b.ins().band(acc, x),
        (ReduceOp::Or, _) => b.ins().bor(acc, x),
    })
}

/// `convert_element_type`: floats → ints saturate with NaN → 0; x → bool is `x != 0` (NaN → true);
/// bool → x is 0/1; ints wrap to the width.
pub fn convert(b: &mut FunctionBuilder, from: DType, to: DType, x: Value) -> Value {
    use DType::*;
    if from == to {
        return x;
    }
    let tty = cl_type(to);
    if from.is_float8() || to.is_float8() {
        return convert_f8(b, from, to, x);
    }
    if from == F16 || to == F16 {
        return convert_f16(b, from, to, x);
    }
    if from == BF16 || to == BF16 {
        return convert_bf16(b, from, to, x);
    }
    if from.is_narrow_int() || to.is_narrow_int() {
        return convert_narrow(b, from, to, x);
    }
    match (from, to) {
        (F32, F64) => b.ins().fpromote(types::F64, x),
        (F64, F32) => b.ins().fdemote(types::F32, x),
        (F32 | F64, Bool) => {
            let z = fconst(b, from, 0.0);
            b.ins().fcmp(FloatCC::NotEqual, x, z)
        }
        (F32 | F64, I32 | I64) => b.ins().fcvt_to_sint_sat(tty, x),
        (F32 | F64, U32) => b.ins().fcvt_to_uint_sat(tty, x),
        (Bool, F32 | F64) => {
            let w = b.ins().uextend(types::I32, x);
            b.ins().fcvt_from_sint(tty, w)
        }
        (I32 | I64, F32 | F64) => b.ins().fcvt_from_sint(tty, x),
        (U32, F32 | F64) => b.ins().fcvt_from_uint(tty, x),
        (I32 | U32 | I64, Bool) => {
            let z = iconst(b, cl_type(from), 0);
            b.ins().icmp(IntCC::NotEqual, x, z)
        }
        (Bool, I32 | U32 | I64) => b.ins().uextend(tty, x),
        (I32, I64) => b.ins().sextend(types::I64, x),
        (U32, I64) => b.ins().uextend(types::I64, x),
        (I64, I32 | U32) => b.ins().ireduce(types::I32, x),
        // i32 <-> u32: same bits; the remaining pairs are equal dtypes, handled above.
        _ => x,
    }
}

/// `convert` where either side is an 8/16-bit integer. Int → int sign- or zero-extends by the source's
/// signedness, or truncates (wraps); float → narrow int truncates toward zero and saturates to the
/// target's range (NaN → 0), computed in i32; narrow int → float extends to i32 first.
fn convert_narrow(b: &mut FunctionBuilder, from: DType, to: DType, x: Value) -> Value {
    let (fty, tty) = (cl_type(from), cl_type(to));
    if from == DType::Bool {
        // 0/1 in an i8.
        return if tty.bits() > 8 { b.ins().uextend(tty, x) } else { x };
    }
    if to == DType::Bool {
        if from.is_float() {
            let z = fconst(b, from, 0.0);
            return b.ins().fcmp(FloatCC::NotEqual, x, z);
        }
        let z = iconst(b, fty, 0);
        return b.ins().icmp(IntCC::NotEqual, x, z);
    }
    if from.is_float() {
        // `to` is narrow: saturate in i32, then clamp to the target's range.
        // every narrow int has a range; i32's is a total fallback
        let (lo, hi) = to.int_range().unwrap_or((i32::MIN as i64, i32::MAX as i64));
        let w = b.ins().fcvt_to_sint_sat(types::I32, x);
        let l = iconst(b, types::I32, lo);
        let h = iconst(b, types::I32, hi);
        let w = b.ins().smax(w, l);
        let w = b.ins().smin(w, h);
        return b.ins().ireduce(tty, w);
    }
    if to.is_float() {
        // `from` is narrow: exact in i32.
        let w = if from.is_signed_int() { b.ins().sextend(types::I32, x) } else { b.ins().uextend(types::I32, x) };
        return b.ins().fcvt_from_sint(tty, w);
    }
    match tty.bits().cmp(&fty.bits()) {
        std::cmp::Ordering::Equal => x,
        std::cmp::Ordering::Less => b.ins().ireduce(tty, x),
        std::cmp::Ordering::Greater if from.is_signed_int() => b.ins().sextend(tty, x),
        std::cmp::Ordering::Greater => b.ins().uextend(tty, x),
    }
}

/// `convert` where either side is float16: through f32 (float16 → f32 is exact; f64 → float16 rounds once,
/// through a round-to-odd f32; integers reach f32 exactly wherever the float16 result is finite).
fn convert_f16(b: &mut FunctionBuilder, from: DType, to: DType, x: Value) -> Value {
    if from == DType::F16 {
        let f = f16_to_f32(b, x);
        return convert(b, DType::F32, to, f);
    }
    let f = match from {
        DType::F32 => x,
        DType::F64 => f64_to_f32_odd(b, x),
        _ => convert(b, from, DType::F32, x),
    };
    f32_to_f16(b, f)
}

/// `convert` where either side is bfloat16 (and neither is float16): through f32, like float16 (bfloat16 →
/// f32 is exact; f64 → bfloat16 rounds once, through a round-to-odd f32).
fn convert_bf16(b: &mut FunctionBuilder, from: DType, to: DType, x: Value) -> Value {
    if from == DType::BF16 {
        let w = b.ins().uextend(types::I32, x);
        let w = b.ins().ishl_imm_u(w, 16);
        let f = b.ins().bitcast(types::F32, MemFlagsData::new(), w);
        return convert(b, DType::F32, to, f);
    }
    let f = match from {
        DType::F32 => x,
        DType::F64 => f64_to_f32_odd(b, x),
        _ => convert(b, from, DType::F32, x),
    };
    f32_to_bf16(b, f)
}

/// `convert` where either side is a float8 format: through f32. float8 → f32 is exact, a load from the
/// format's 256-entry table (`Float8Format::table`, static, so its address is fixed for the JIT code);
/// f64 → float8 rounds once, through a round-to-odd f32.
fn convert_f8(b: &mut FunctionBuilder, from: DType, to: DType, x: Value) -> Value {
    if let Some(fmt) = from.float8_format() {
        let base = b.ins().iconst(types::I64, fmt.table().as_ptr() as i64);
        let i = b.ins().uextend(types::I64, x);
        let off = b.ins().ishl_imm_u(i, 2);
        let addr = b.ins().iadd(base, off);
        let f = b.ins().load(types::F32, super::clif::trusted(), addr, 0);
        return convert(b, DType::F32, to, f);
    }
    let f = match from {
        DType::F32 => x,
        DType::F64 => f64_to_f32_odd(b, x),
        _ => convert(b, from, DType::F32, x),
    };
    match to.float8_format() {
        Some(fmt) => f32_to_f8(b, fmt, f),
        None => f,
    }
}

/// f32 → float8 bits (i8) of format `fmt`, round to nearest even, with ml_dtypes' overflow, NaN and -0
/// rules (`Float8Format::from_f64` is the scalar twin).
fn f32_to_f8(b: &mut FunctionBuilder, fmt: &crate::ir::dtype::Float8Format, x: Value) -> Value {
    use crate::ir::dtype::Float8Kind;
    let m = fmt.man_bits as i32;
    let u = b.ins().bitcast(types::I32, MemFlagsData::new(), x);
    let a = b.ins().band_imm_u(u, 0x7fff_ffff);
    let sign = b.ins().ushr_imm_u(u, 24);
    let sign = b.ins().band_imm_u(sign, 0x80);
    let is_nan = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, a, 0x7f80_0000);
    // Subnormal range: the count of 2^(emin - m) steps, rounded to nearest even (2^m carries to the smallest
    // normal, as its bits say).
    let af = b.ins().bitcast(types::F32, MemFlagsData::new(), a);
    let scale = b.ins().f32const(2f32.powi(m - fmt.emin()));
    let sc = b.ins().fmul(af, scale);
    let sc = b.ins().nearest(sc);
    let sub = b.ins().fcvt_to_uint_sat(types::I32, sc);
    // Normal range: round the f32 bits at the format's last mantissa bit, then rebias the exponent.
    let shift = 23 - m;
    let odd = b.ins().ushr_imm_u(a, shift as i64);
    let odd = b.ins().band_imm_u(odd, 1);
    let t = b.ins().iadd_imm_s(a, (1i64 << (shift - 1)) - 1);
    let t = b.ins().iadd(t, odd);
    let t = b.ins().ushr_imm_u(t, shift as i64);
    let norm = b.ins().iadd_imm_s(t, -(((127 - fmt.bias) as i64) << m));
    let is_sub = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, a, 2f32.powi(fmt.emin()).to_bits() as i64);
    let mag = b.ins().select(is_sub, sub, norm);
    let over = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, mag, fmt.max_bits() as i64);
    let nan = match fmt.kind {
        Float8Kind::Fnuz => b.ins().iconst(types::I32, 0x80),
        _ => b.ins().bor_imm_u(sign, fmt.nan_bits(false) as i64),
    };
    let big = match fmt.kind {
        Float8Kind::Ieee => b.ins().bor_imm_u(sign, fmt.inf_bits() as i64),
        _ => nan,
    };
    let r = if fmt.kind == Float8Kind::Fnuz {
        // no -0: a zero magnitude keeps no sign
        let z = b.ins().icmp_imm_u(IntCC::Equal, mag, 0);
        let zero = b.ins().iconst(types::I32, 0);
        let s = b.ins().select(z, zero, sign);
        b.ins().bor(s, mag)
    } else {
        b.ins().bor(sign, mag)
    };
    let r = b.ins().select(over, big, r);
    let r = b.ins().select(is_nan, nan, r);
    b.ins().ireduce(types::I8, r)
}

/// f32 → bfloat16 bits (i16), round to nearest even (overflow carries into infinity); NaN becomes the quiet
/// NaN 0x7fc0 with its sign, as ml_dtypes does.
pub fn f32_to_bf16(b: &mut FunctionBuilder, x: Value) -> Value {
    let u = b.ins().bitcast(types::I32, MemFlagsData::new(), x);
    let a = b.ins().band_imm_u(u, 0x7fff_ffff);
    let is_nan = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, a, 0x7f80_0000);
    let odd = b.ins().ushr_imm_u(u, 16);
    let odd = b.ins().band_imm_u(odd, 1);
    let t = b.ins().iadd_imm_s(u, 0x7fff);
    let t = b.ins().iadd(t, odd);
    let r = b.ins().ushr_imm_u(t, 16);
    let sign = b.ins().ushr_imm_u(u, 16);
    let sign = b.ins().band_imm_u(sign, 0x8000);
    let qnan = b.ins().bor_imm_u(sign, 0x7fc0);
    let r = b.ins().select(is_nan, qnan, r);
    b.ins().ireduce(types::I16, r)
}

/// float16 bits (i16) → f32, exactly: normals rebias the exponent, infinities and NaNs keep their payload,
/// subnormals are `m * 2^-24` (exact in f32).
pub fn f16_to_f32(b: &mut FunctionBuilder, h: Value) -> Value {
    let h = b.ins().uextend(types::I32, h);
    let em = b.ins().band_imm_u(h, 0x7fff);
    let sign = b.ins().band_imm_u(h, 0x8000);
    let sign = b.ins().ishl_imm_u(sign, 16);
    let sh = b.ins().ishl_imm_u(em, 13);
    let normal = b.ins().iadd_imm_s(sh, 0x3800_0000);
    let infnan = b.ins().bor_imm_u(sh, 0x7f80_0000);
    let mf = b.ins().fcvt_from_sint(types::F32, em);
    let scale = b.ins().f32const(5.960_464_5e-8); // 2^-24
    let sub = b.ins().fmul(mf, scale);
    let sub = b.ins().bitcast(types::I32, MemFlagsData::new(), sub);
    let is_sub = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, em, 0x400);
    let is_big = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, em, 0x7c00);
    let r = b.ins().select(is_sub, sub, normal);
    let r = b.ins().select(is_big, infnan, r);
    let r = b.ins().bor(r, sign);
    b.ins().bitcast(types::F32, MemFlagsData::new(), r)
}

/// f32 → float16 bits (i16), round to nearest even; magnitudes from 65520 up become infinity, NaN the
/// quiet NaN 0x7e00 (sign kept), results below 2^-14 subnormal.
pub fn f32_to_f16(b: &mut FunctionBuilder, x: Value) -> Value {
    let u = b.ins().bitcast(types::I32, MemFlagsData::new(), x);
    let sign = b.ins().band_imm_u(u, 0x8000_0000i64);
    let a = b.ins().bxor(u, sign);
    // NaN → 0x7e00, ±inf and overflow → 0x7c00
    let is_nan = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, a, 0x7f80_0000);
    let qnan = iconst(b, types::I32, 0x7e00);
    let inf = iconst(b, types::I32, 0x7c00);
    let infnan = b.ins().select(is_nan, qnan, inf);
    // subnormal results: adding 0.5 aligns the 10 result bits at the bottom (the add rounds to even)
    let af = b.ins().bitcast(types::F32, MemFlagsData::new(), a);
    let magic = b.ins().f32const(0.5);
    let s = b.ins().fadd(af, magic);
    let s = b.ins().bitcast(types::I32, MemFlagsData::new(), s);
    let sub = b.ins().iadd_imm_s(s, -(126i64 << 23));
    // normal results: rebias, add 0xfff plus the kept mantissa's lowest bit (ties to even), shift
    let odd = b.ins().ushr_imm_u(a, 13);
    let odd = b.ins().band_imm_u(odd, 1);
    let t = b.ins().iadd_imm_s(a, ((15i64 - 127) << 23) + 0xfff);
    let t = b.ins().iadd(t, odd);
    let normal = b.ins().ushr_imm_u(t, 13);
    let is_sub = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, a, 113 << 23);
    let is_big = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, a, 143 << 23);
    let r = b.ins().select(is_sub, sub, normal);
    let r = b.ins().select(is_big, infnan, r);
    let sign = b.ins().ushr_imm_u(sign, 16);
    let r = b.ins().bor(r, sign);
    b.ins().ireduce(types::I16, r)
}

/// f64 → f32 rounded to odd (truncate, then set the lowest bit when inexact), so that rounding the result
/// to float16 equals rounding the f64 once.
fn f64_to_f32_odd(b: &mut FunctionBuilder, x: Value) -> Value {
    let r = b.ins().fdemote(types::F32, x);
    let back = b.ins().fpromote(types::F64, r);
    let inexact = b.ins().fcmp(FloatCC::OrderedNotEqual, back, x);
    let ab = b.ins().fabs(back);
    let ax = b.ins().fabs(x);
    let up = b.ins().fcmp(FloatCC::GreaterThan, ab, ax);
    let bits = b.ins().bitcast(types::I32, MemFlagsData::new(), r);
    let down = b.ins().iadd_imm_s(bits, -1);
    let t = b.ins().select(up, down, bits);
    let t = b.ins().bor_imm_u(t, 1);
    let bits = b.ins().select(inexact, t, bits);
    b.ins().bitcast(types::F32, MemFlagsData::new(), bits)
}

/// Half away from zero: trunc(x) + copysign(1, x) when |x - trunc(x)| >= 0.5.
fn round_half_away(b: &mut FunctionBuilder, dt: DType, x: Value) -> Value {
    let t = b.ins().trunc(x);
    let d = b.ins().fsub(x, t);
    let d = b.ins().fabs(d);
    let half = fconst(b, dt, 0.5);
    let ge = b.ins().fcmp(FloatCC::GreaterThanOrEqual, d, half);
    let one = fconst(b, dt, 1.0);
    let s = b.ins().fcopysign(one, x);
    let up = b.ins().fadd(t, s);
    b.ins().select(ge, up, t)
}

/// The value of `v` when it is an integer constant (`iconst`), sign-extended from its width.
fn int_const(b: &FunctionBuilder, v: Value) -> Option<i64> {
    use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
    let ValueDef::Result(inst, 0) = b.func.dfg.value_def(v) else { return None };
    let InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } = b.func.dfg.insts[inst] else { return None };
    let bits = b.func.dfg.value_type(v).bits();
    let sh = 64u32.checked_sub(bits).filter(|&s| s < 64)?;
    Some((imm.bits() << sh) >> sh)
}

/// Integer div/rem that never traps: x/0 → -1 (all ones), x%0 → x, MIN/-1 → MIN, MIN%-1 → 0.
fn int_div_rem(b: &mut FunctionBuilder, dt: DType, x: Value, y: Value, rem: bool) -> Value {
    let ty = cl_type(dt);
    // A constant divisor other than 0 and -1 needs no guard; as a bare constant operand Cranelift turns the
    // division into a multiply by its magic number (`x % 1000` in index arithmetic was ~25 cycles a lane).
    if int_const(b, y).is_some_and(|c| c != 0 && (c != -1 || !dt.is_signed_int())) {
        return match (dt.is_signed_int(), rem) {
            (true, true) => b.ins().srem(x, y),
            (true, false) => b.ins().sdiv(x, y),
            (false, true) => b.ins().urem(x, y),
            (false, false) => {
                b.ins().udiv(x, y)
            }
        };
    }
    let zero = iconst(b, ty, 0);
    let one = iconst(b, ty, 1);
    let y0 = b.ins().icmp(IntCC::Equal, y, zero);
    if dt.is_signed_int() {
        let m1 = iconst(b, ty, -1);
        let ym1 = b.ins().icmp(IntCC::Equal, y, m1);
        let bad = b.ins().bor(y0, ym1);
        let d = b.ins().select(bad, one, y);
        if rem {
            // y == -1 divides by 1 instead: remainder 0 either way.
            let r = b.ins().srem(x, d);
            b.ins().select(y0, x, r)
        } else {
            let q = b.ins().sdiv(x, d);
            let nx = b.ins().ineg(x);
            let q = b.ins().select(ym1, nx, q);
            b.ins().select(y0, m1, q)
        }
    } else {
        let d = b.ins().select(y0, one, y);
        if rem {
            let r = b.ins().urem(x, d);
            b.ins().select(y0, x, r)
        } else {
            let q = b.ins().udiv(x, d);
            let ones = iconst(b, ty, -1);
            b.ins().select(y0, ones, q)
        }
    }
}

/// Shifts by an amount ≥ the bit width (negative read as unsigned) give 0, or the sign fill for arithmetic.
fn shift(b: &mut FunctionBuilder, dt: DType, op: BinaryOp, x: Value, y: Value) -> Value {
    let ty = cl_type(dt);
    let bits = ty.bits() as i64;
    let w = iconst(b, ty, bits);
    let oob = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, y, w);
    match op {
        BinaryOp::ShiftLeft | BinaryOp::ShiftRightLogical => {
            let s = if op == BinaryOp::ShiftLeft { b.ins().ishl(x, y) } else { b.ins().ushr(x, y) };
            let zero = iconst(b, ty, 0);
            b.ins().select(oob, zero, s)
        }
        _ => {
            let last = iconst(b, ty, bits - 1);
            let amt = b.ins().select(oob, last, y);
            b.ins().sshr(x, amt)
        }
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

/// Comparison; floats are ordered except `ne`, which is true when either side is NaN.
pub fn compare(b: &mut FunctionBuilder, dt: DType, op: CompareOp, x: Value, y: Value) -> Value {
    if dt.is_float() {
        let cc = match op {
            CompareOp::Eq => FloatCC::Equal,
            CompareOp::Ne => FloatCC::NotEqual,
            CompareOp::Lt => FloatCC::LessThan,
            CompareOp::Le => FloatCC::LessThanOrEqual,
            CompareOp::Gt => FloatCC::GreaterThan,
            CompareOp::Ge => FloatCC::GreaterThanOrEqual,
        };
        b.ins().fcmp(cc, x, y)
    } else {
        b.ins().icmp(int_cc(op, dt.is_signed_int()), x, y)
    }
}

fn unary(b: &mut FunctionBuilder, imports: &Imports, op: UnaryOp, dt: DType, x: Value) -> Result<Value> {
    use UnaryOp as U;
    let float = dt.is_float();
    let ty = cl_type(dt);
    if let Some(f) = MathFn::from_unary(op) {
        if !float {
            return Err(unsupported(format!("{op:?}"), dt));
        }
        return emit_math(b, imports, f, dt, &[x]);
    }
    Ok(match op {
        U::Neg if float => b.ins().fneg(x),
        U::Neg if dt != DType::Bool => b.ins().ineg(x),
        U::Abs if float => b.ins().fabs(x),
        U::Abs if dt.is_signed_int() => b.ins().iabs(x),
        U::Abs => x,
        U::Sign if float => {
            let one = fconst(b, dt, 1.0);
            let s = b.ins().fcopysign(one, x);
            let zero = fconst(b, dt, 0.0);
            // NaN and ±0 map to themselves. (`eq | uno` rather than `UnorderedOrEqual`, which x86-64 has no
            // vector lowering for: the SIMD path emits this on f32x4/f64x2 too.)
            let eq = b.ins().fcmp(FloatCC::Equal, x, zero);
            let uno = b.ins().fcmp(FloatCC::Unordered, x, x);
            let keep = b.ins().bor(eq, uno);
            // `x * 1` rather than `x`: a subnormal that compares equal to zero (denormals-are-zero, see
            // fpenv.rs) comes out as the zero of its sign, as XLA's sign does.
            let x1 = b.ins().fmul(x, one);
            b.ins().select(keep, x1, s)
        }
        U::Sign if dt.is_signed_int() => {
            let m1 = iconst(b, ty, -1);
            let p1 = iconst(b, ty, 1);
            let t = b.ins().smax(x, m1);
            b.ins().smin(t, p1)
        }
        U::Sign if dt.is_unsigned_int() => {
            let p1 = iconst(b, ty, 1);
            b.ins().umin(x, p1)
        }
        U::Sign => x,
        U::Floor if float => b.ins().floor(x),
        U::Ceil if float => b.ins().ceil(x),
        U::Round if float => round_half_away(b, dt, x),
        U::RoundEven if float => b.ins().nearest(x),
        U::Floor | U::Ceil | U::Round | U::RoundEven => x,
        U::Sqrt if float => b.ins().sqrt(x),
        U::Square if float => b.ins().fmul(x, x),
        U::Square if dt == DType::Bool => x,
        U::Square => b.ins().imul(x, x),
        U::Not if dt == DType::Bool => b.ins().bxor_imm_s(x, 1),
        U::Not if !float => b.ins().bnot(x),
        U::IsFinite if float => {
            let a = b.ins().fabs(x);
            let inf = fconst(b, dt, f64::INFINITY);
            b.ins().fcmp(FloatCC::LessThan, a, inf)
        }
        U::IsFinite => iconst(b, types::I8, 1),
        U::PopulationCount if dt == DType::Bool => x,
        U::PopulationCount if !float => b.ins().popcnt(x),
        U::Clz if !float => b.ins().clz(x),
        _ => return Err(unsupported(format!("{op:?}"), dt)),
    })
}

fn binary(
    b: &mut FunctionBuilder, imports: &Imports, op: BinaryOp, dt: DType, x: Value, y: Value, ydt: DType,
) -> Result<Value> {
    use BinaryOp as B;
    let float = dt.is_float();
    let boolean = dt == DType::Bool;
    if let Some(f) = binary_math(op, dt) {
        // pow may take an integer exponent with a float base.
        let y = if ydt != dt { convert(b, ydt, dt, y) } else { y };
        return emit_math(b, imports, f, dt, &[x, y]);
    }
    if ydt != dt {
        return Err(Error::Codegen(format!(
            "{op:?}: operand dtypes {} and {} differ",
            dt.short_name(),
            ydt.short_name()
        )));
    }
    Ok(match op {
        B::Add if float => b.ins().fadd(x, y),
        B::Add if boolean => b.ins().bor(x, y),
        B::Add => b.ins().iadd(x, y),
        B::Sub if float => b.ins().fsub(x, y),
        B::Sub if !boolean => b.ins().isub(x, y),
        B::Mul if float => b.ins().fmul(x, y),
        B::Mul if boolean => b.ins().band(x, y),
        B::Mul => b.ins().imul(x, y),
        B::Div if float => b.ins().fdiv(x, y),
        B::Div if !boolean => int_div_rem(b, dt, x, y, false),
        B::Rem if !boolean && !float => int_div_rem(b, dt, x, y, true),
        B::Max => max_min(b, dt, x, y, true),
        B::Min => max_min(b, dt, x, y, false),
        B::And if !float => b.ins().band(x, y),
        B::Or if !float => b.ins().bor(x, y),
        B::Xor if !float => b.ins().bxor(x, y),
        B::ShiftLeft | B::ShiftRightLogical | B::ShiftRightArithmetic if dt.is_int() => shift(b, dt, op, x, y),
        _ => return Err(unsupported(format!("{op:?}"), dt)),
    })
}

/// `x ** y` for a compile-time integer `y`, by repeated squaring in JAX's order; negative `y` on floats is
/// 1 / x^|y|; on integers it is 0 unless |x| == 1.
fn integer_pow(b: &mut FunctionBuilder, dt: DType, x: Value, y: i32) -> Value {
    let ty = cl_type(dt);
    let one = if dt.is_float() { fconst(b, dt, 1.0) } else { iconst(b, ty, 1) };
    if y == 0 {
        return one;
    }
    if dt == DType::Bool {
        return x;
    }
    if y < 0 && !dt.is_float() {
        // XLA: 1 → 1, -1 → ±1, anything else → 0.
        let zero = iconst(b, ty, 0);
        let is1 = b.ins().icmp(IntCC::Equal, x, one);
        let r = b.ins().select(is1, one, zero);
        if dt.is_signed_int() {
            let m1 = iconst(b, ty, -1);
            let ism1 = b.ins().icmp(IntCC::Equal, x, m1);
            let v = if y & 1 == 1 { m1 } else { one };
            return b.ins().select(ism1, v, r);
        }
        return r;
    }
    pow_by_squaring(b, dt.is_float(), x, one, y)
}

/// `x ** y` by repeated squaring (the multiplication order scalar and vector code share, so both give the same
/// bits); `one` is 1 of `x`'s type (scalar or splat); negative `y` (floats only) is `1 / x^|y|`.
pub fn pow_by_squaring(b: &mut FunctionBuilder, float: bool, x: Value, one: Value, y: i32) -> Value {
    let mul = |b: &mut FunctionBuilder, p: Value, q: Value| if float { b.ins().fmul(p, q) } else { b.ins().imul(p, q) };
    let mut n = y.unsigned_abs();
    let mut base = x;
    let mut acc: Option<Value> = None;
    while n > 0 {
        if n & 1 == 1 {
            acc = Some(match acc {
                None => base,
                Some(a) => mul(b, a, base),
            });
        }
        n >>= 1;
        if n > 0 {
            base = mul(b, base, base);
        }
    }
    let acc = acc.unwrap_or(one);
    if y < 0 {
        b.ins().fdiv(one, acc)
    } else {
        acc
    }
}

/// Emits one body instruction other than `Load` and `Iota` (which need the loop state; see codegen).
/// `vals[i]` holds the value of every earlier live instruction.
pub fn emit(b: &mut FunctionBuilder, imports: &Imports, body: &[KInstr], i: usize, vals: &[Option<Value>]) -> Result<Value> {
    let instr = &body[i];
    let dt = instr.dtype;
    let get = |j: usize| -> Result<(Value, DType)> {
        match (vals.get(j).copied().flatten(), body.get(j)) {
            (Some(v), Some(ins)) if j < i => Ok((v, ins.dtype)),
            _ => Err(Error::Codegen(format!("instruction {i} uses %{j}, which is not an earlier live value"))),
        }
    };
    Ok(match &instr.op {
        KOp::Const { value } => constant(b, dt, *value),
        KOp::Unary { op, a } => {
            // The operand's dtype (is_finite's result is bool, the computation is on the operand).
            let (x, adt) = get(*a)?;
            unary(b, imports, *op, adt, x)?
        }
        KOp::Binary { op, a, b: bb } => {
            let (x, _) = get(*a)?;
            let (y, ydt) = get(*bb)?;
            binary(b, imports, *op, dt, x, y, ydt)?
        }
        KOp::Compare { op, a, b: bb } => {
            let (x, xdt) = get(*a)?;
            let (y, _) = get(*bb)?;
            compare(b, xdt, *op, x, y)
        }
        KOp::Select { pred, cases } => {
            let (p, pdt) = get(*pred)?;
            let (mut r, _) = get(*cases.first().ok_or_else(|| Error::Codegen("select_n with no cases".into()))?)?;
            let pty = cl_type(pdt);
            let cc = if pdt.is_signed_int() { IntCC::SignedGreaterThanOrEqual } else { IntCC::UnsignedGreaterThanOrEqual };
            // cases[clamp(pred, 0, n-1)]: each case k ≥ 1 wins when pred ≥ k.
            for (k, &c) in cases.iter().enumerate().skip(1) {
                let (v, _) = get(c)?;
                let kk = iconst(b, pty, k as i64);
                let ge = b.ins().icmp(cc, p, kk);
                r = b.ins().select(ge, v, r);
            }
            r
        }
        KOp::Convert { a } => {
            let (x, xdt) = get(*a)?;
            convert(b, xdt, dt, x)
        }
        KOp::Bitcast { a } => {
            let (x, xdt) = get(*a)?;
            if xdt.size() != dt.size() {
                return Err(Error::Unsupported(format!(
                    "bitcast from {} to {}: sizes differ",
                    xdt.short_name(),
                    dt.short_name()
                )));
            }
            let (fty, tty) = (cl_type(xdt), cl_type(dt));
            if fty == tty {
                x
            } else {
                b.ins().bitcast(tty, MemFlagsData::new(), x)
            }
        }
        KOp::IntegerPow { a, y } => {
            let (x, _) = get(*a)?;
            integer_pow(b, dt, x, *y)
        }
        KOp::Clamp { lo, x, hi } => {
            let (l, _) = get(*lo)?;
            let (v, _) = get(*x)?;
            let (h, _) = get(*hi)?;
            let t = max_min(b, dt, v, l, true);
            max_min(b, dt, t, h, false)
        }
        KOp::Fma { a, b: m, c } => {
            // Cranelift's fma: vfmadd on a host with FMA (the ISA's flags are the host's), else its libcall
            // to `fmaf`/`fma` (registered in `module.rs`), which rounds once in software
            let (x, _) = get(*a)?;
            let (y, _) = get(*m)?;
            let (z, _) = get(*c)?;
            b.ins().fma(x, y, z)
        }
        KOp::Load { .. } | KOp::Iota { .. } | KOp::Gather { .. } => {
            return Err(Error::Codegen(format!("instruction {i}: load/iota/gather must be lowered by the loop codegen")))
        }
    })
}
