//! Integer `div`/`rem` on int32/uint32 vector lanes (i32x4). Cranelift has no vector integer division (its
//! lowering would extract, divide and reinsert each lane), so:
//! - a constant divisor divides by multiplying with a magic number (Granlund & Montgomery, "Division by
//!   invariant integers using multiplication", 1994, figures 4.1 and 5.2), the 32×32→64 products as
//!   widening vector multiplies (`pmuldq`/`pmuludq` on x86);
//! - a per-lane int32 divisor divides in float64 (exact, see `div_i32_f64`); uint32 stays per lane.
//!
//! Results are `ops::int_div_rem`'s bit for bit, its (XLA's CPU) conventions included: x/0 → -1 (all ones),
//! x%0 → x, MIN/-1 → MIN, MIN%-1 → 0; remainders are `x - q*d` with the sign of `x` (truncating division).
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, ConstantData, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use super::simd::vflags;

/// Signed magic number for a constant divisor `d != 0` (G&M figure 5.2): `(m, sh)` with
/// `q = ((x + mulsh(m, x)) >> sh) - xsign(x)`, then negated when `d < 0`.
pub fn signed_magic(d: i32) -> (i32, u32) {
    let ad = u64::from(d.unsigned_abs());
    // l = max(ceil(log2 |d|), 1)
    let l = (64 - (ad - 1).leading_zeros()).max(1);
    let m = 1 + (1u64 << (32 + l - 1)) / ad;
    ((m as i64 - (1i64 << 32)) as i32, l - 1)
}

/// Unsigned magic number for a constant divisor `d != 0` (G&M figure 4.1): `(m, sh1, sh2)` with
/// `t = mulhu(m, x)`, `q = (t + ((x - t) >> sh1)) >> sh2`.
pub fn unsigned_magic(d: u32) -> (u32, u32, u32) {
    let d64 = u64::from(d);
    // l = ceil(log2 d), 0..=32
    let l = 64 - (d64 - 1).leading_zeros();
    let num = ((1u128 << l) - u128::from(d)) << 32;
    let m = (num / u128::from(d)) as u64 + 1;
    (m as u32, l.min(1), l.saturating_sub(1))
}

/// The scalar model of the vector code for a signed constant divisor (tests check it against `/`).
#[cfg(test)]
pub fn sdiv_by_magic(x: i32, d: i32) -> i32 {
    let (m, sh) = signed_magic(d);
    let hi = ((i64::from(m) * i64::from(x)) >> 32) as i32;
    let q0 = x.wrapping_add(hi);
    let q0 = (q0 >> sh).wrapping_sub(x >> 31);
    let ds = d >> 31;
    (q0 ^ ds).wrapping_sub(ds)
}

/// The scalar model of the vector code for an unsigned constant divisor.
#[cfg(test)]
pub fn udiv_by_magic(x: u32, d: u32) -> u32 {
    let (m, sh1, sh2) = unsigned_magic(d);
    let t = ((u64::from(m) * u64::from(x)) >> 32) as u32;
    (t.wrapping_add(x.wrapping_sub(t) >> sh1)) >> sh2
}

/// The high 32 bits of each lane's 64-bit product `x * m` (i32x4 operands).
fn mulhi(b: &mut FunctionBuilder, x: Value, m: Value, signed: bool) -> Value {
    let (xl, ml, xh, mh) = if signed {
        (b.ins().swiden_low(x), b.ins().swiden_low(m), b.ins().swiden_high(x), b.ins().swiden_high(m))
    } else {
        (b.ins().uwiden_low(x), b.ins().uwiden_low(m), b.ins().uwiden_high(x), b.ins().uwiden_high(m))
    };
    let lo = b.ins().imul(xl, ml);
    let hi = b.ins().imul(xh, mh);
    // the odd 32-bit halves (bytes 4..8 and 12..16 of each product vector)
    let lo = b.ins().bitcast(types::I8X16, vflags(), lo);
    let hi = b.ins().bitcast(types::I8X16, vflags(), hi);
    let mask: Vec<u8> = [4u8, 12, 20, 28].iter().flat_map(|&s| s..s + 4).collect();
    let imm = b.func.dfg.immediates.push(ConstantData::from(mask));
    let r = b.ins().shuffle(lo, hi, imm);
    b.ins().bitcast(types::I32X4, vflags(), r)
}

/// A multiplier in every lane as a constant-pool vector: a `splat` would be folded into a splat of the
/// widened value and the product lowered as a full 64-bit multiply (`vpmullq`, or three `pmuludq` without
/// AVX-512DQ) instead of one `pmuldq`/`pmuludq`.
fn lanes32(b: &mut FunctionBuilder, v: i32) -> Value {
    let bytes: Vec<u8> = (0..4).flat_map(|_| v.to_le_bytes()).collect();
    let c = b.func.dfg.constants.insert(ConstantData::from(bytes));
    b.ins().vconst(types::I32X4, c)
}

fn splat32(b: &mut FunctionBuilder, v: i64) -> Value {
    let s = b.ins().iconst(types::I32, v & 0xffff_ffff);
    b.ins().splat(types::I32X4, s)
}

fn sh32(b: &mut FunctionBuilder, n: u32) -> Value {
    b.ins().iconst(types::I32, i64::from(n))
}

/// `x / d` or `x % d` on i32x4 lanes for a constant `d` (int32 when `signed`, else uint32 bits).
pub fn div_rem_by_const(b: &mut FunctionBuilder, x: Value, d: i64, signed: bool, rem: bool) -> Value {
    let d32 = d as i32;
    let q = if d32 == 0 {
        // x/0 → all ones, x%0 → x
        return if rem { x } else { splat32(b, -1) };
    } else if signed {
        let (m, sh) = signed_magic(d32);
        let mv = lanes32(b, m as i32);
        let hi = mulhi(b, x, mv, true);
        let q0 = b.ins().iadd(x, hi);
        let s = sh32(b, sh);
        let q0 = b.ins().sshr(q0, s);
        let s31 = sh32(b, 31);
        let xs = b.ins().sshr(x, s31);
        let q0 = b.ins().isub(q0, xs);
        if d32 < 0 {
            b.ins().ineg(q0)
        } else {
            q0
        }
    } else if (d32 as u32).count_ones() == 1 {
        // uint32 by a power of two: a shift, the remainder the low bits
        let du = d32 as u32;
        return if rem {
            let mask = splat32(b, i64::from(du - 1));
            b.ins().band(x, mask)
        } else {
            let k = sh32(b, du.trailing_zeros());
            b.ins().ushr(x, k)
        };
    } else {
        let (m, sh1, sh2) = unsigned_magic(d32 as u32);
        let mv = lanes32(b, m as i32);
        let t = mulhi(b, x, mv, false);
        let u = b.ins().isub(x, t);
        let s1 = sh32(b, sh1);
        let u = b.ins().ushr(u, s1);
        let u = b.ins().iadd(t, u);
        let s2 = sh32(b, sh2);
        b.ins().ushr(u, s2)
    };
    if rem {
        let dv = splat32(b, i64::from(d32));
        let p = b.ins().imul(q, dv);
        b.ins().isub(x, p)
    } else {
        q
    }
}

/// Magic number for dividing 31-bit dividends `0 <= n < 2^31` by a constant `d >= 2` (G&M theorem 4.2 with
/// N = 31): `(m, sh)` with `n / d = mulhu(n, m) >> sh`. With `l = ceil(log2 d)` and
/// `m = floor(2^(31+l) / d) + 1`: `2^(31+l) < m·d <= 2^(31+l) + d <= 2^(31+l) + 2^l`, which is the theorem's
/// condition, and `m < 2^32` (`2^(31+l) / d < 2^32` as `d > 2^(l-1)`, or `d = 2^l` and `m = 2^31 + 1`).
pub fn nonneg_magic(d: u32) -> (u32, u32) {
    let l = 32 - (d - 1).leading_zeros();
    let m = (1u64 << (31 + l)) / u64::from(d) + 1;
    (m as u32, l - 1)
}

/// The scalar model of `floor_div_rem_pos_const` (tests check it against floor division).
#[cfg(test)]
pub fn floor_div_by_magic(x: i32, d: i32) -> i32 {
    if d == 1 {
        return x;
    }
    let (m, sh) = nonneg_magic(d as u32);
    let s = x >> 31;
    let t = (x ^ s) as u32;
    let q = ((u64::from(t) * u64::from(m)) >> 32) as u32 >> sh;
    (q as i32) ^ s
}

/// `floor(x / d)` or `x - d * floor(x / d)` (JAX's `//` and `%`) on int32x4 lanes for a constant `d > 0`.
/// For `x < 0`, `floor(x / d) = -1 - (-1 - x) / d = !((!x) / d)`, and `!x = x ^ (x >> 31)` is then
/// non-negative, so one unsigned magic multiply for 31-bit dividends serves both signs: about 12
/// instructions for both results, against ~35 for the truncating quotient, remainder and JAX's selects.
pub fn floor_div_rem_pos_const(b: &mut FunctionBuilder, x: Value, d: i32, rem: bool) -> Value {
    if d == 1 {
        return if rem { splat32(b, 0) } else { x };
    }
    if d.count_ones() == 1 {
        // a power of two: an arithmetic shift floors, the low bits are the floor remainder
        return if rem {
            let mask = splat32(b, i64::from(d - 1));
            b.ins().band(x, mask)
        } else {
            let k = sh32(b, d.trailing_zeros());
            b.ins().sshr(x, k)
        };
    }
    let (m, sh) = nonneg_magic(d as u32);
    let s31 = sh32(b, 31);
    let s = b.ins().sshr(x, s31);
    let t = b.ins().bxor(x, s);
    let mv = lanes32(b, m as i32);
    let q = mulhi(b, t, mv, false);
    let q = if sh > 0 {
        let k = sh32(b, sh);
        b.ins().ushr(q, k)
    } else {
        q
    };
    let q = b.ins().bxor(q, s);
    if rem {
        let dv = splat32(b, i64::from(d));
        let p = b.ins().imul(q, dv);
        b.ins().isub(x, p)
    } else {
        q
    }
}

/// `x / y` or `x % y` on int32x4 lanes with a divisor per lane, in float64.
///
/// Why exact: both operands convert to f64 exactly. If `t = x/y` is an integer, |t| ≤ 2^31 is representable
/// and the correctly rounded quotient is `t`. Otherwise every integer `k` is at least `1/|y|` from `t`
/// (|x - k·y| ≥ 1), while the rounding error is at most |t|·2^-53 < 2^31/|y|·2^-53 = 2^-22/|y|, so the
/// rounded quotient stays strictly between the same two integers as `t` and truncating it gives
/// trunc(x / y). The one quotient out of int32's range, MIN / -1, and y = 0 are replaced by selects.
pub fn div_i32_f64(b: &mut FunctionBuilder, x: Value, y: Value, rem: bool) -> Value {
    let half = |b: &mut FunctionBuilder, v: Value, h: bool| {
        let v = if h {
            // lanes 2, 3 moved down to 0, 1
            let bytes = b.ins().bitcast(types::I8X16, vflags(), v);
            let mask: Vec<u8> = (8..16).chain(8..16).collect();
            let imm = b.func.dfg.immediates.push(ConstantData::from(mask));
            let s = b.ins().shuffle(bytes, bytes, imm);
            b.ins().bitcast(types::I32X4, vflags(), s)
        } else {
            v
        };
        let w = b.ins().swiden_low(v);
        b.ins().fcvt_from_sint(types::F64X2, w)
    };
    let quot = |b: &mut FunctionBuilder, h: bool| {
        let xf = half(b, x, h);
        let yf = half(b, y, h);
        let q = b.ins().fdiv(xf, yf);
        let q = to_i32_low(b, q);
        b.ins().bitcast(types::I8X16, vflags(), q)
    };
    // [q0, q1, _, _] and [q2, q3, _, _] → [q0, q1, q2, q3]
    let lo = quot(b, false);
    let hi = quot(b, true);
    let mask: Vec<u8> = (0..8).chain(16..24).collect();
    let imm = b.func.dfg.immediates.push(ConstantData::from(mask));
    let q = b.ins().shuffle(lo, hi, imm);
    let q = b.ins().bitcast(types::I32X4, vflags(), q);
    let zero = splat32(b, 0);
    let y0 = b.ins().icmp(IntCC::Equal, y, zero);
    let m1 = splat32(b, -1);
    // MIN / -1 wraps to MIN, as -x does (the conversion above is out of range there)
    let ym1 = b.ins().icmp(IntCC::Equal, y, m1);
    let nx = b.ins().ineg(x);
    let q = b.ins().bitselect(ym1, nx, q);
    if rem {
        let p = b.ins().imul(q, y);
        let r = b.ins().isub(x, p);
        b.ins().bitselect(y0, x, r)
    } else {
        b.ins().bitselect(y0, m1, q)
    }
}

/// f64x2 → i32 lanes 0 and 1 (truncating; lanes 2, 3 zero or unspecified) for values whose truncation
/// fits in int32 (the caller replaces the others).
fn to_i32_low(b: &mut FunctionBuilder, q: Value) -> Value {
    let zero = b.func.dfg.constants.insert(ConstantData::from(vec![0u8; 16]));
    let z = b.ins().vconst(types::I64X2, zero);
    #[cfg(target_arch = "x86_64")]
    {
        // one `cvttpd2dq` (the saturating form adds a compare, a mask and a min)
        let t = b.ins().x86_cvtt2dq(types::I64X2, q);
        b.ins().snarrow(t, z)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let t = b.ins().fcvt_to_sint_sat(types::I64X2, q);
        b.ins().snarrow(t, z)
    }
}
