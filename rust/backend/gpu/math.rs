//! WGSL helper functions: XLA integer/float semantics and the float32 math library.
//!
//! Vulkan only guarantees e.g. absolute error 2^-11 for `sin`/`cos` and 3 + 2·|x| ulp for `exp`, so the
//! functions the test suite checks to ≤ 4 ulp are our own, computed in f32 with `fma`:
//! `exp`, `exp2`, `expm1`, `log`, `log1p`, `tanh`, `logistic` are the CPU backend's algorithms
//! (`backend::cpu::vmath`: Cephes/musl, same constants, same operation order); `sin`, `cos`, `tan` use a
//! three-constant Cody–Waite reduction (|x| < 8192; larger arguments fall back to the builtins) and Cephes'
//! polynomials; `erf` is Eigen/XLA's float32 rational approximation; `erf_inv` Giles' (as XLA); `ndtri`
//! Cephes' (the CPU's float32 operation order);
//! `lgamma`/`digamma` XLA's Lanczos forms; `sinh`, `cosh`, `asinh`, `acosh`, `atanh` are composed from
//! the above; `atan`/`asin`/`acos`/`atan2` are Cephes' float32 forms. `pow` is exp2(y·log2|x|) with
//! IEEE special cases (a few ulp for moderate results; larger error when |y·log2 x| is large).
//!
//! The exact operations (rounding to integers, `sign`, `nextafter`, `rem`, `max`/`min`, comparisons, float↔int and
//! f32↔f64 conversions) are integer arithmetic on the bits, written once for f32 and f64 (`Width`; the
//! source text is expanded per width): see `super` for why no float built-in is trusted with them.
// Coefficients are kept digit for digit as published.
#![allow(clippy::excessive_precision)]
use std::collections::BTreeSet;

use crate::ir::UnaryOp;

/// The float width of a helper written once for both (its text is expanded by `expand`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Width {
    F32,
    F64,
}

/// How `Helper::Round` rounds to an integer (its `mode` argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    Trunc = 0,
    Floor = 1,
    Ceil = 2,
    HalfAway = 3,
    HalfEven = 4,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Helper {
    // Exact operations on the bits, per float width.
    IsNan(Width), Order(Width), CmpKey(Width), FMax(Width), FMin(Width), Sign(Width), Round(Width), NextAfter(Width),
    Fmod(Width), TruncMag(Width), FToI32(Width), FToU32(Width),
    // float from an integer magnitude and a sign, rounded to nearest even on the bits
    U32ToF32, U64ToF32, U64ToF64, BitLen64,
    F64ToI64, F32ToI64, F64ToF32, F32ToF64,
    ClampNan, DivI32, DivU32, RemI32, RemU32, IPowI32, IPowU32, F16ToF32, F32ToF16,
    Pow2i, Scale2, ExpReduce, Expm1Poly,
    Exp, Exp2, Expm1, LogKernel, LogSplit, Log, Log1p, Tanh, Logistic,
    Sin, Cos, Tan, TrigReduce, RemPio2Big, Erf, ErfInv, Ndtri, Cbrt,
    Atan, Asin, Acos, Atan2F32, Sinh, Cosh, Asinh, Acosh, Atanh, Lgamma, Digamma, PowF32,
    // 64-bit integers (adapters with shader-int64).
    DivI64, RemI64, IPowI64,
}

/// The `$`-tokens of a width-generic helper, longest first (no token is a prefix of a later one).
fn tokens(w: Width) -> [(&'static str, &'static str); 22] {
    match w {
        Width::F32 => [
            ("$SIGN", "0x80000000"), ("$BIAS", "127"), ("$MANT", "0x7fffff"), ("$QNAN", "0x7fc00000"),
            ("$HALF", "0x3f000000"), ("$P31", "0x4f000000"), ("$P32", "0x4f800000"), ("$ABS", "0x7fffffff"),
            ("$INF", "0x7f800000"), ("$ONE", "0x3f800000"), ("$TOP", "31"), ("$MB", "23"), ("$EM", "0xff"),
            ("$XB", "9"), ("$P", "24"), ("$W", "32"), ("$F", "f32"), ("$U", "u32"), ("$I", "i32"), ("$N", "f"),
            ("$u", "u"), ("$i", "i"),
        ],
        Width::F64 => [
            ("$SIGN", "0x8000000000000000"), ("$BIAS", "1023"), ("$MANT", "0xfffffffffffff"),
            ("$QNAN", "0x7ff8000000000000"), ("$HALF", "0x3fe0000000000000"), ("$P31", "0x41e0000000000000"),
            ("$P32", "0x41f0000000000000"), ("$ABS", "0x7fffffffffffffff"), ("$INF", "0x7ff0000000000000"),
            ("$ONE", "0x3ff0000000000000"), ("$TOP", "63"), ("$MB", "52"), ("$EM", "0x7ff"), ("$XB", "12"),
            ("$P", "53"), ("$W", "64"), ("$F", "f64"), ("$U", "u64"), ("$I", "i64"), ("$N", "d"), ("$u", "lu"),
            ("$i", "li"),
        ],
    }
}

/// Template `t` for width `w`.
fn expand(t: &str, w: Width) -> String {
    tokens(w).iter().fold(t.to_string(), |s, (k, v)| s.replace(k, v))
}

/// Width-generic sources (see `tokens`). Every value is handled on its bits: NaN, infinities, signed zeros
/// and subnormals included, whatever the device's float built-ins and flush-to-zero mode do.
const ISNAN: &str = "fn isnan_$N(x: $F) -> bool { return (bitcast<$U>(x) & $ABS$u) > $INF$u; }\n";
const ORDER: &str = "// An integer ordering floats as numbers, -0 below +0 (negatives' magnitude bits flipped).
fn order_$N(x: $F) -> $I {
  let i = bitcast<$I>(x);
  return i ^ bitcast<$I>(bitcast<$U>(i >> $TOPu) >> 1u);
}\n";
const CMP_KEY: &str = "// An integer comparing as the float does, NaN aside (-0 == +0): `order` with -0 moved onto +0.
fn cmp_key_$N(x: $F) -> $I {
  let k = order_$N(x);
  return select(k, k + 1$i, k < 0$i);
}\n";
const FMAX: &str = "fn fmax_$N(a: $F, b: $F) -> $F {
  if (isnan_$N(a) || isnan_$N(b)) { return bitcast<$F>($QNAN$u); }
  return select(b, a, order_$N(a) > order_$N(b));
}\n";
const FMIN: &str = "fn fmin_$N(a: $F, b: $F) -> $F {
  if (isnan_$N(a) || isnan_$N(b)) { return bitcast<$F>($QNAN$u); }
  return select(b, a, order_$N(a) < order_$N(b));
}\n";
const SIGN: &str = "fn sign_$N(x: $F) -> $F {
  // Zero tested on the bits: a GPU flushing subnormals would call a subnormal zero.
  let a = bitcast<$U>(x) & $ABS$u;
  if (a == 0$u || a > $INF$u) { return x; }
  return bitcast<$F>((bitcast<$U>(x) & $SIGN$u) | $ONE$u);
}\n";
const ROUND: &str = "// x rounded to an integer: mode 0 trunc, 1 floor, 2 ceil, 3 half away from zero, 4 half to even.
// The fraction bits are cleared and the magnitude moved up one unit where the mode says (a carry out of the
// significand moves into the exponent, which is the next power of two).
fn round_$N(x: $F, mode: u32) -> $F {
  let b = bitcast<$U>(x);
  let s = b & $SIGN$u;
  let a = b ^ s;
  let e = i32(u32(a >> $MBu)) - $BIAS;
  if (e >= $MB) { return x; }
  var up = false;
  if (e < 0) {
    if (mode == 1u) { up = s != 0$u && a != 0$u; }
    if (mode == 2u) { up = s == 0$u && a != 0$u; }
    if (mode == 3u) { up = a >= $HALF$u; }
    if (mode == 4u) { up = a > $HALF$u; }
    return bitcast<$F>(s | select(0$u, $ONE$u, up));
  }
  let fmask = $MANT$u >> u32(e);
  let frac = a & fmask;
  let t = a & ~fmask;
  let unit = fmask + 1$u;
  let half = unit >> 1u;
  if (mode == 1u) { up = s != 0$u && frac != 0$u; }
  if (mode == 2u) { up = s == 0$u && frac != 0$u; }
  if (mode == 3u) { up = frac >= half; }
  if (mode == 4u) { up = frac > half || (frac == half && (t & unit) != 0$u); }
  return bitcast<$F>(s | (t + select(0$u, unit, up)));
}\n";
const NEXTAFTER: &str = "fn nextafter_$N(x: $F, y: $F) -> $F {
  let bx = bitcast<$U>(x);
  let by = bitcast<$U>(y);
  let ax = bx & $ABS$u;
  let ay = by & $ABS$u;
  if (ax > $INF$u || ay > $INF$u) { return bitcast<$F>($QNAN$u); }
  if (bx == by || (ax | ay) == 0$u) { return y; }
  if (ax == 0$u) { return bitcast<$F>((by & $SIGN$u) | 1$u); }
  // the magnitude grows when y lies beyond x on x's side of zero
  let away = (bx != ax) == (by != ay) && ay > ax;
  return bitcast<$F>(select(bx - 1$u, bx + 1$u, away));
}\n";
const FMOD: &str = "fn fmod_$N(x: $F, y: $F) -> $F {
  // musl's fmod: exact, by integer long division of the significands.
  var ux = bitcast<$U>(x);
  var uy = bitcast<$U>(y);
  var ex = i32(u32(ux >> $MBu) & $EMu);
  var ey = i32(u32(uy >> $MBu) & $EMu);
  let sx = ux & $SIGN$u;
  if ((uy << 1u) == 0$u || isnan_$N(y) || ex == $EM) { return bitcast<$F>($QNAN$u); }
  if ((ux << 1u) <= (uy << 1u)) {
    if ((ux << 1u) == (uy << 1u)) { return bitcast<$F>(sx); }
    return x;
  }
  if (ex == 0) {
    var i = ux << $XBu;
    loop { if ((i >> $TOPu) != 0$u) { break; } ex = ex - 1; i = i << 1u; }
    ux = ux << u32(1 - ex);
  } else {
    ux = (ux & $MANT$u) | ($MANT$u + 1$u);
  }
  if (ey == 0) {
    var i = uy << $XBu;
    loop { if ((i >> $TOPu) != 0$u) { break; } ey = ey - 1; i = i << 1u; }
    uy = uy << u32(1 - ey);
  } else {
    uy = (uy & $MANT$u) | ($MANT$u + 1$u);
  }
  loop {
    if (ex <= ey) { break; }
    let i = ux - uy;
    if ((i >> $TOPu) == 0$u) {
      if (i == 0$u) { return bitcast<$F>(sx); }
      ux = i;
    }
    ux = ux << 1u;
    ex = ex - 1;
  }
  let i = ux - uy;
  if ((i >> $TOPu) == 0$u) {
    if (i == 0$u) { return bitcast<$F>(sx); }
    ux = i;
  }
  loop { if ((ux >> $MBu) != 0$u) { break; } ux = ux << 1u; ex = ex - 1; }
  if (ex > 0) {
    ux = (ux - ($MANT$u + 1$u)) | ($U(u32(ex)) << $MBu);
  } else {
    ux = ux >> u32(1 - ex);
  }
  return bitcast<$F>(ux | sx);
}\n";
const TRUNC_MAG: &str = "// trunc(|x|) as an integer, from |x|'s bits a (finite, below 2^$W).
fn trunc_mag_$N(a: $U) -> $U {
  let e = i32(u32(a >> $MBu)) - $BIAS;
  if (e < 0) { return 0$u; }
  let m = (a & $MANT$u) | ($MANT$u + 1$u);
  if (e >= $MB) { return m << u32(e - $MB); }
  return m >> u32($MB - e);
}\n";
// float -> int saturates, NaN -> 0 (as XLA).
const TO_I32: &str = "fn $F_to_i32(x: $F) -> i32 {
  let b = bitcast<$U>(x);
  let a = b & $ABS$u;
  if (a > $INF$u) { return 0i; }
  if (a >= $P31$u) { return select(2147483647i, bitcast<i32>(0x80000000u), b != a); }
  let m = bitcast<i32>(u32(trunc_mag_$N(a)));
  return select(m, 0i - m, b != a);
}\n";
const TO_U32: &str = "fn $F_to_u32(x: $F) -> u32 {
  let b = bitcast<$U>(x);
  let a = b & $ABS$u;
  if (a > $INF$u || b != a) { return 0u; }
  if (a >= $P32$u) { return 0xffffffffu; }
  return u32(trunc_mag_$N(a));
}\n";
// The float nearest to the integer m (ties to even), negative when `neg`: m's top $P bits are rounded in
// integer arithmetic and the exponent is put on the bits (WGSL leaves the direction of an inexact
// int -> float conversion open). $V/$v/$LEN: the integer's type, literal suffix and bit length.
const INT_TO_FLOAT: &str = "fn $V_to_$F(m: $V, neg: bool) -> $F {
  if (m == 0$v) { return bitcast<$F>(0$u); }
  let n = $LEN;
  var q = m;
  if (n <= $Pu) {
    q = m << ($Pu - n);
  } else {
    let sh = n - $Pu;
    q = m >> sh;
    let rest = m & ((1$v << sh) - 1$v);
    let half = 1$v << (sh - 1u);
    if (rest > half || (rest == half && (q & 1$v) == 1$v)) { q = q + 1$v; }
  }
  // q is in [2^($P-1), 2^$P]: its leading bit carries into the exponent field, hence the bias less 2
  let bits = ($U(n + $BIASu - 2u) << $MBu) + $U(q);
  return bitcast<$F>(bits | select(0$u, $SIGN$u, neg));
}\n";

fn int_to_float(int64: bool, w: Width) -> String {
    let (v, s, len) = if int64 { ("u64", "lu", "bitlen_u64(m)") } else { ("u32", "u", "(32u - countLeadingZeros(m))") };
    expand(&INT_TO_FLOAT.replace("$V", v).replace("$v", s).replace("$LEN", len), w)
}

impl Helper {
    pub fn for_unary(op: UnaryOp) -> Option<Helper> {
        use UnaryOp as U;
        Some(match op {
            U::Exp => Helper::Exp,
            U::Exp2 => Helper::Exp2,
            U::Expm1 => Helper::Expm1,
            U::Log => Helper::Log,
            U::Log1p => Helper::Log1p,
            U::Tanh => Helper::Tanh,
            U::Logistic => Helper::Logistic,
            U::Sin => Helper::Sin,
            U::Cos => Helper::Cos,
            U::Tan => Helper::Tan,
            U::Erf => Helper::Erf,
            U::ErfInv => Helper::ErfInv,
            U::Ndtri => Helper::Ndtri,
            U::Cbrt => Helper::Cbrt,
            U::Atan => Helper::Atan,
            U::Asin => Helper::Asin,
            U::Acos => Helper::Acos,
            U::Sinh => Helper::Sinh,
            U::Cosh => Helper::Cosh,
            U::Asinh => Helper::Asinh,
            U::Acosh => Helper::Acosh,
            U::Atanh => Helper::Atanh,
            U::Lgamma => Helper::Lgamma,
            U::Digamma => Helper::Digamma,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        use Helper::*;
        use Width::{F32 as S, F64 as D};
        match self {
            IsNan(S) => "isnan_f", IsNan(D) => "isnan_d", Order(S) => "order_f", Order(D) => "order_d",
            CmpKey(S) => "cmp_key_f", CmpKey(D) => "cmp_key_d",
            FMax(S) => "fmax_f", FMax(D) => "fmax_d", FMin(S) => "fmin_f", FMin(D) => "fmin_d",
            Sign(S) => "sign_f", Sign(D) => "sign_d", Round(S) => "round_f", Round(D) => "round_d",
            NextAfter(S) => "nextafter_f", NextAfter(D) => "nextafter_d", Fmod(S) => "fmod_f", Fmod(D) => "fmod_d",
            TruncMag(S) => "trunc_mag_f", TruncMag(D) => "trunc_mag_d", FToI32(S) => "f32_to_i32",
            FToI32(D) => "f64_to_i32", FToU32(S) => "f32_to_u32", FToU32(D) => "f64_to_u32",
            U32ToF32 => "u32_to_f32", U64ToF32 => "u64_to_f32", U64ToF64 => "u64_to_f64", BitLen64 => "bitlen_u64",
            F64ToI64 => "f64_to_i64", F32ToI64 => "f32_to_i64", F64ToF32 => "f64_to_f32", F32ToF64 => "f32_to_f64",
            ClampNan => "clamp_nan",
            DivI32 => "div_i32", DivU32 => "div_u32", RemI32 => "rem_i32", RemU32 => "rem_u32",
            IPowI32 => "ipow_i32", IPowU32 => "ipow_u32", F16ToF32 => "f16_to_f32", F32ToF16 => "f32_to_f16",
            Pow2i => "pow2i", Scale2 => "scale2", ExpReduce => "exp_reduce",
            Expm1Poly => "expm1_poly", Exp => "exp_x", Exp2 => "exp2_x", Expm1 => "expm1_x", LogKernel => "log_kernel",
            LogSplit => "log_split", Log => "log_x", Log1p => "log1p_x", Tanh => "tanh_x", Logistic => "logistic_x",
            Sin => "sin_x", Cos => "cos_x", Tan => "tan_x", TrigReduce => "trig_reduce", RemPio2Big => "rem_pio2_big", Erf => "erf_x",
            ErfInv => "erf_inv_x", Ndtri => "ndtri_x", Cbrt => "cbrt_x", Atan => "atan_x", Asin => "asin_x", Acos => "acos_x",
            Atan2F32 => "atan2_x", Sinh => "sinh_x", Cosh => "cosh_x", Asinh => "asinh_x", Acosh => "acosh_x",
            Atanh => "atanh_x", Lgamma => "lgamma_x", Digamma => "digamma_x", PowF32 => "pow_x",
            DivI64 => "div_i64", RemI64 => "rem_i64", IPowI64 => "ipow_i64",
        }
    }

    fn source(self) -> String {
        use Helper::*;
        let text: &str = match self {
            IsNan(w) => return expand(ISNAN, w),
            Order(w) => return expand(ORDER, w),
            CmpKey(w) => return expand(CMP_KEY, w),
            FMax(w) => return expand(FMAX, w),
            FMin(w) => return expand(FMIN, w),
            Sign(w) => return expand(SIGN, w),
            Round(w) => return expand(ROUND, w),
            NextAfter(w) => return expand(NEXTAFTER, w),
            Fmod(w) => return expand(FMOD, w),
            TruncMag(w) => return expand(TRUNC_MAG, w),
            FToI32(w) => return expand(TO_I32, w),
            FToU32(w) => return expand(TO_U32, w),
            U32ToF32 => return int_to_float(false, Width::F32),
            U64ToF32 => return int_to_float(true, Width::F32),
            U64ToF64 => return int_to_float(true, Width::F64),
            BitLen64 => "fn bitlen_u64(m: u64) -> u32 {
  let hi = u32(m >> 32u);
  if (hi != 0u) { return 64u - countLeadingZeros(hi); }
  return 32u - countLeadingZeros(u32(m));
}\n",
            F64ToI64 => "fn f64_to_i64(x: f64) -> i64 {
  let b = bitcast<u64>(x);
  let a = b & 0x7ffffffffffffffflu;
  if (a > 0x7ff0000000000000lu) { return 0li; }
  if (a >= 0x43e0000000000000lu) { return select(9223372036854775807li, bitcast<i64>(0x8000000000000000lu), b != a); }
  let m = bitcast<i64>(trunc_mag_d(a));
  return select(m, 0li - m, b != a);
}\n",
            F32ToI64 => "fn f32_to_i64(x: f32) -> i64 {
  let b = bitcast<u32>(x);
  let a = b & 0x7fffffffu;
  if (a > 0x7f800000u) { return 0li; }
  if (a >= 0x5f000000u) { return select(9223372036854775807li, bitcast<i64>(0x8000000000000000lu), b != a); }
  let e = i32(a >> 23u) - 127;
  if (e < 0) { return 0li; }
  let m = u64((a & 0x7fffffu) | 0x800000u);
  var r: u64;
  if (e >= 23) { r = m << u32(e - 23); } else { r = m >> u32(23 - e); }
  let v = bitcast<i64>(r);
  return select(v, 0li - v, b != a);
}\n",
            // f64 <-> f32 on the bits (WGSL defines no f64 conversions): NaN stays NaN, subnormals are kept,
            // narrowing rounds to nearest even (from MAX + half an ulp up -> inf), or to odd when `odd` (the
            // dropped bits only set the last one: rounding that f32 to float16 is then f64 -> f16 rounded once).
            F32ToF64 => "fn f32_to_f64(x: f32) -> f64 {
  let b = bitcast<u32>(x);
  let s = u64(b & 0x80000000u) << 32u;
  let a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) {
    return bitcast<f64>(s | select(0x7ff0000000000000lu, 0x7ff8000000000000lu, a > 0x7f800000u));
  }
  if (a == 0u) { return bitcast<f64>(s); }
  if (a < 0x800000u) {
    // a * 2^-149: the integer a as an f64, its exponent lowered by 149
    return bitcast<f64>(s | (bitcast<u64>(u64_to_f64(u64(a), false)) - (149lu << 52u)));
  }
  return bitcast<f64>(s | ((u64(a) << 29u) + (896lu << 52u)));
}\n",
            F64ToF32 => "fn f64_to_f32(x: f64, odd: bool) -> f32 {
  let u = bitcast<u64>(x);
  let s = u32(u >> 32u) & 0x80000000u;
  let a = u & 0x7ffffffffffffffflu;
  if (a > 0x7ff0000000000000lu) { return bitcast<f32>(s | 0x7fc00000u); }
  if (a >= 0x47effffff0000000lu) { return bitcast<f32>(s | 0x7f800000u); }
  let e = i32(u32(a >> 52u)) - 1023;
  if (e < -150) { return bitcast<f32>(s); }
  let m = (a & 0xffffffffffffflu) | 0x10000000000000lu;
  // keep 24 significant bits (fewer for a subnormal result), rounding the rest to nearest even
  var sh = 29u;
  if (e < -126) { sh = u32(29 + (-126 - e)); }
  var q = m >> sh;
  let rest = m & ((1lu << sh) - 1lu);
  let half = 1lu << (sh - 1u);
  if (odd) {
    q = q | select(0lu, 1lu, rest != 0lu);
  } else if (rest > half || (rest == half && (q & 1lu) == 1lu)) {
    q = q + 1lu;
  }
  if (e < -126) { return bitcast<f32>(s | u32(q)); }
  // q's leading bit (2^23, or 2^24 after a carry) adds to the exponent field
  return bitcast<f32>(s | ((u32(e + 126) << 23u) + u32(q)));
}\n",
            DivI64 => "fn div_i64(x: i64, y: i64) -> i64 {
  if (y == 0li) { return -1li; }
  if (y == -1li) { return 0li - x; }
  return x / y;
}\n",
            RemI64 => "fn rem_i64(x: i64, y: i64) -> i64 {
  if (y == 0li) { return x; }
  if (y == -1li) { return 0li; }
  return x % y;
}\n",
            IPowI64 => "fn ipow_i64(x0: i64, y0: i64) -> i64 {
  if (y0 < 0li) {
    if (x0 == 1li) { return 1li; }
    if (x0 == -1li) { return select(1li, -1li, (y0 & 1li) == 1li); }
    return 0li;
  }
  var x = x0; var y = y0; var acc = 1li;
  loop {
    if (y <= 0li) { break; }
    if ((y & 1li) == 1li) { acc = acc * x; }
    y = y >> 1u;
    x = x * x;
  }
  return acc;
}\n",
            ClampNan => "fn clamp_nan(x: f32, lo: f32, hi: f32) -> f32 {
  if (isnan_f(x)) { return x; }
  return min(max(x, lo), hi);
}\n",
            DivI32 => "fn div_i32(x: i32, y: i32) -> i32 {
  if (y == 0i) { return -1i; }
  if (y == -1i) { return 0i - x; }
  return x / y;
}\n",
            RemI32 => "fn rem_i32(x: i32, y: i32) -> i32 {
  if (y == 0i) { return x; }
  if (y == -1i) { return 0i; }
  return x % y;
}\n",
            DivU32 => "fn div_u32(x: u32, y: u32) -> u32 {
  if (y == 0u) { return 0xffffffffu; }
  return x / y;
}\n",
            RemU32 => "fn rem_u32(x: u32, y: u32) -> u32 {
  if (y == 0u) { return x; }
  return x % y;
}\n",
            IPowI32 => "fn ipow_i32(x0: i32, y0: i32) -> i32 {
  if (y0 < 0i) {
    if (x0 == 1i) { return 1i; }
    if (x0 == -1i) { return select(1i, -1i, (y0 & 1i) == 1i); }
    return 0i;
  }
  var x = x0; var y = y0; var acc = 1i;
  loop {
    if (y <= 0i) { break; }
    if ((y & 1i) == 1i) { acc = acc * x; }
    y = y >> 1u;
    x = x * x;
  }
  return acc;
}\n",
            IPowU32 => "fn ipow_u32(x0: u32, y0: u32) -> u32 {
  var x = x0; var y = y0; var acc = 1u;
  loop {
    if (y == 0u) { break; }
    if ((y & 1u) == 1u) { acc = acc * x; }
    y = y >> 1u;
    x = x * x;
  }
  return acc;
}\n",
            F16ToF32 => "fn f16_to_f32(x: f16) -> f32 { return f32(x); }\n",
            F32ToF16 => "fn f32_to_f16(x: f32) -> f16 {
  let u = bitcast<u32>(x);
  let sign = u & 0x80000000u;
  let a = u ^ sign;
  var o: u32;
  if (a >= 0x47800000u) {
    o = select(0x7c00u, 0x7e00u, a > 0x7f800000u);
  } else if (a < 0x33000000u) {
    o = 0u;
  } else if (a < 0x38800000u) {
    // subnormal result: the significand (with its implicit bit) shifted right by 126 - exponent (14..24)
    let s = 126u - (a >> 23u);
    let m = (a & 0x7fffffu) | 0x800000u;
    let q = m >> s;
    let rem = m & ((1u << s) - 1u);
    let half = 1u << (s - 1u);
    o = q + select(0u, 1u, rem > half || (rem == half && (q & 1u) == 1u));
  } else {
    o = (a + 0xc8000fffu + ((a >> 13u) & 1u)) >> 13u;
  }
  // the float16 value of bits o, as an f32 (exact)
  var r = (o << 13u) + 0x38000000u;
  if (o >= 0x7c00u) { r = (o << 13u) | 0x7f800000u; }
  if (o < 0x400u) { r = bitcast<u32>(f32(o) * 5.9604644775390625e-8f); }
  return f16(bitcast<f32>(r | sign));
}\n",
            Pow2i => "fn pow2i(n: i32) -> f32 { return bitcast<f32>(u32(n + 127i) << 23u); }\n",
            Scale2 => "fn scale2(y: f32, n: i32) -> f32 {
  let h = n >> 1u;
  return (y * pow2i(h)) * pow2i(n - h);
}\n",
            ExpReduce => "// x = n ln2 + r, |r| <= ln2/2 (Cephes two-constant ln2). Returns (n, r).
fn exp_reduce(x: f32) -> vec2<f32> {
  // round(), not the 1.5·2^23 trick: shader compilers may fold (a + M) - M back to a.
  let n = round(x * 1.44269504088896340736f);
  // n·C1 (C1 = 355/512) through an integer product: exact, and opaque to compilers that would merge
  // n·C1 + n·C2 into n·(C1 + C2) and lose the extra precision.
  let r1 = x - f32(i32(n) * 355i) * 0.001953125f;
  let r = fma(n, 2.12194440e-4f, r1);
  return vec2<f32>(n, r);
}\n",
            Expm1Poly => "fn expm1_poly(r: f32) -> f32 {
  var p = 1.9875691500E-4f;
  p = fma(p, r, 1.3981999507E-3f);
  p = fma(p, r, 8.3334519073E-3f);
  p = fma(p, r, 4.1665795894E-2f);
  p = fma(p, r, 1.6666665459E-1f);
  p = fma(p, r, 5.0000001201E-1f);
  return fma(p, r * r, r);
}\n",
            Exp => "fn exp_x(x: f32) -> f32 {
  let xc = clamp_nan(x, -104.0f, 89.0f);
  let nr = exp_reduce(xc);
  let y = expm1_poly(nr.y) + 1.0f;
  return scale2(y, i32(nr.x));
}\n",
            Exp2 => "fn exp2_x(x: f32) -> f32 {
  let xc = clamp_nan(x, -152.0f, 129.0f);
  let n = round(xc);
  let f = xc - n;
  let y = expm1_poly(f * 0.693147180559945309f) + 1.0f;
  return scale2(y, i32(n));
}\n",
            Expm1 => "fn expm1_x(x: f32) -> f32 {
  let xc = clamp_nan(x, -18.0f, 89.0f);
  let nr = exp_reduce(xc);
  let q = expm1_poly(nr.y);
  let t = pow2i(i32(nr.x) - 1i);
  let y = fma(t, q, t - 0.5f) * 2.0f;
  return select(y, x, abs(x) < 2.98023223876953125e-8f);
}\n",
            LogKernel => "// (s*(hfsq + R), hfsq) for f in [sqrt(1/2)-1, sqrt(2)-1] (musl logf).
fn log_kernel(f: f32) -> vec2<f32> {
  let s = f / (f + 2.0f);
  let z = s * s;
  let w = z * z;
  let t1 = w * fma(w, 0.24279078841f, 0.40000972152f);
  let t2 = z * fma(w, 0.28498786688f, 0.66666662693f);
  let rr = t2 + t1;
  let hfsq = (f * f) * 0.5f;
  return vec2<f32>(s * (hfsq + rr), hfsq);
}\n",
            LogSplit => "// u = 2^k * m, m in [sqrt(1/2), sqrt(2)): returns (k, m - 1).
fn log_split(u: f32) -> vec2<f32> {
  let iu = bitcast<i32>(u) + (0x3f800000i - 0x3f3504f3i);
  let k = (iu >> 23u) - 0x7fi;
  let m = bitcast<f32>((iu & 0x007fffffi) + 0x3f3504f3i);
  return vec2<f32>(f32(k), m - 1.0f);
}\n",
            Log => "fn log_x(x: f32) -> f32 {
  let den = x < 1.17549435e-38f;
  let xs = select(x, x * 8388608.0f, den);
  let kf = log_split(xs);
  let dk = kf.x + select(0.0f, -23.0f, den);
  let f = kf.y;
  let sh = log_kernel(f);
  var r = fma(dk, 9.0580006145e-06f, sh.x);
  r = r - sh.y;
  r = r + f;
  r = fma(dk, 6.9313812256e-01f, r);
  if (isnan_f(x)) { return x; }
  if (x < 0.0f) { return bitcast<f32>(0x7fc00000u); }
  if (x == 0.0f) { return bitcast<f32>(0xff800000u); }
  if (x == bitcast<f32>(0x7f800000u)) { return x; }
  return r;
}\n",
            Log1p => "fn log1p_x(x: f32) -> f32 {
  let u = x + 1.0f;
  let kf = log_split(u);
  let k = i32(kf.x);
  var c = select(x - (u - 1.0f), 1.0f - (u - x), k >= 2i) / u;
  c = select(0.0f, c, k < 25i);
  let small = x >= -0.29289321881f && x < 0.41421356237f;
  let f = select(kf.y, x, small);
  c = select(c, 0.0f, small);
  let dk = select(kf.x, 0.0f, small);
  let sh = log_kernel(f);
  let lo = fma(dk, 9.0580006145e-06f, c);
  var r = sh.x + lo;
  r = r - sh.y;
  r = r + f;
  r = fma(dk, 6.9313812256e-01f, r);
  if (isnan_f(x)) { return x; }
  if (x < -1.0f) { return bitcast<f32>(0x7fc00000u); }
  if (x == -1.0f) { return bitcast<f32>(0xff800000u); }
  if (x == bitcast<f32>(0x7f800000u)) { return x; }
  return select(r, x, abs(x) < 2.98023223876953125e-8f);
}\n",
            Tanh => "fn tanh_x(x: f32) -> f32 {
  let ax = abs(x);
  let em = expm1_x(ax + ax);
  var t = em / (em + 2.0f);
  t = select(t, 1.0f, ax > 9.1f);
  return bitcast<f32>((bitcast<u32>(t) & 0x7fffffffu) | (bitcast<u32>(x) & 0x80000000u));
}\n",
            Logistic => "fn logistic_x(x: f32) -> f32 {
  let e = exp_x(-abs(x));
  let d = e + 1.0f;
  return select(1.0f / d, e / d, x < 0.0f);
}\n",
            TrigReduce => "// Cephes: j = round-to-even quadrant of |x|·4/π, r = |x| - j·π/4 (three-part π/4), |x| < 8192.
// Returns (r, j as f32).
fn trig_reduce(ax: f32) -> vec2<f32> {
  var j = u32(ax * 1.27323954473516f);
  j = (j + 1u) & 0xfffffffeu;
  let y = f32(j);
  // y·DP1 = y·201/256 and y·DP2 = y·2029/2^23 as integer products (exact, and not reassociated).
  var r = ax - f32(j * 201u) * 0.00390625f;
  r = r - f32(j * 2029u) * 1.1920928955078125e-7f;
  r = fma(y, -3.77489497744594108e-8f, r);
  return vec2<f32>(r, y);
}
fn sin_poly(x: f32) -> f32 {
  let z = x * x;
  var p = -1.9515295891E-4f;
  p = fma(p, z, 8.3321608736E-3f);
  p = fma(p, z, -1.6666654611E-1f);
  return fma(x * z, p, x);
}
fn cos_poly(x: f32) -> f32 {
  let z = x * x;
  var p = 2.443315711809948E-5f;
  p = fma(p, z, -1.388731625493765E-3f);
  p = fma(p, z, 4.166664568298827E-2f);
  return fma(z * z, p, fma(-0.5f, z, 1.0f));
}\n",
            RemPio2Big => "var<private> TWO_OVER_PI: array<u32, 10> = array<u32, 10>(0xa2f9836eu, 0x4e441529u, 0xfc2757d1u,
  0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u);
// Bits [j, j + 32) of 2/pi's fraction (bit 0 weighs 2^-1); bits before the point are 0.
fn tpi_word(j: i32) -> u32 {
  if (j <= -32) { return 0u; }
  if (j < 0) { return TWO_OVER_PI[0] >> u32(-j); }
  let w = u32(j) / 32u;
  let s = u32(j) % 32u;
  if (s == 0u) { return TWO_OVER_PI[w]; }
  return (TWO_OVER_PI[w] << s) | (TWO_OVER_PI[w + 1u] >> (32u - s));
}
// a * b as (lo, hi) 32-bit words.
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}
// Payne-Hanek: finite |x| = ax >= 8192 reduced by pi/2 exactly in integer arithmetic (a 96-bit window
// of 2/pi). Returns (r, q): ax = (4k + q) pi/2 + r, |r| <= pi/4.
fn rem_pio2_big(ax: f32) -> vec2<f32> {
  let bits = bitcast<u32>(ax);
  let m = (bits & 0x7fffffu) | 0x800000u;
  let e = i32(bits >> 23u) - 150;
  let j = e - 2;
  let w0 = tpi_word(j);
  let w1 = tpi_word(j + 32);
  let w2 = tpi_word(j + 64);
  let p2 = mul_wide(m, w2);
  let p1 = mul_wide(m, w1);
  let r2 = p2.x;
  let r1 = p1.x + p2.y;
  let r0 = m * w0 + p1.y + select(0u, 1u, r1 < p1.x);
  var q = r0 >> 30u;
  var hi = (r0 << 2u) | (r1 >> 30u);
  var lo = (r1 << 2u) | (r2 >> 30u);
  var neg = false;
  if ((hi & 0x80000000u) != 0u) {
    q = q + 1u;
    neg = true;
    lo = ~lo + 1u;
    hi = ~hi + select(0u, 1u, lo == 0u);
  }
  var shift = 0i;
  if (hi == 0u) { hi = lo; lo = 0u; shift = 32i; }
  let lz = countLeadingZeros(hi);
  var top = hi;
  if (lz > 0u && lz < 32u) { top = (hi << lz) | (lo >> (32u - lz)); }
  let frac = ldexp(f32(top), -32i - i32(lz) - shift);
  var r = frac * 1.5707963267948966f;
  if (neg) { r = -r; }
  return vec2<f32>(r, f32(q & 3u));
}\n",
            Sin => "fn sin_x(x: f32) -> f32 {
  let ax = abs(x);
  if (isnan_f(x) || ax == bitcast<f32>(0x7f800000u)) { return bitcast<f32>(0x7fc00000u); }
  if (ax > 8192.0f) {
    let rq = rem_pio2_big(ax);
    let q = u32(rq.y);
    var s = select(sin_poly(rq.x), cos_poly(rq.x), (q & 1u) == 1u);
    if (q >= 2u) { s = -s; }
    return select(s, -s, x < 0.0f);
  }
  let rj = trig_reduce(ax);
  let j = u32(rj.y) & 7u;
  var s = select(sin_poly(rj.x), cos_poly(rj.x), j == 2u || j == 6u);
  if (j >= 4u) { s = -s; }
  return select(s, -s, x < 0.0f);
}\n",
            Cos => "fn cos_x(x: f32) -> f32 {
  let ax = abs(x);
  if (isnan_f(x) || ax == bitcast<f32>(0x7f800000u)) { return bitcast<f32>(0x7fc00000u); }
  if (ax > 8192.0f) {
    let rq = rem_pio2_big(ax);
    let q = u32(rq.y);
    var c = select(cos_poly(rq.x), sin_poly(rq.x), (q & 1u) == 1u);
    if (q == 1u || q == 2u) { c = -c; }
    return c;
  }
  let rj = trig_reduce(ax);
  let j = u32(rj.y) & 7u;
  var c = select(cos_poly(rj.x), sin_poly(rj.x), j == 2u || j == 6u);
  if (j == 2u || j == 4u) { c = -c; }
  return c;
}\n",
            Tan => "fn tan_poly(r: f32) -> f32 {
  let z = r * r;
  var p = 9.38540185543E-3f;
  p = fma(p, z, 3.11992232697E-3f);
  p = fma(p, z, 2.44301354525E-2f);
  p = fma(p, z, 5.34112807005E-2f);
  p = fma(p, z, 1.33387994085E-1f);
  p = fma(p, z, 3.33331568548E-1f);
  return select(fma(p * z, r, r), r, abs(r) < 1e-4f);
}
fn tan_x(x: f32) -> f32 {
  let ax = abs(x);
  if (isnan_f(x) || ax == bitcast<f32>(0x7f800000u)) { return bitcast<f32>(0x7fc00000u); }
  if (ax > 8192.0f) {
    let rq = rem_pio2_big(ax);
    var t = tan_poly(rq.x);
    if ((u32(rq.y) & 1u) == 1u) { t = -1.0f / t; }
    return select(t, -t, x < 0.0f);
  }
  let rj = trig_reduce(ax);
  let r = rj.x;
  let z = r * r;
  var p = 9.38540185543E-3f;
  p = fma(p, z, 3.11992232697E-3f);
  p = fma(p, z, 2.44301354525E-2f);
  p = fma(p, z, 5.34112807005E-2f);
  p = fma(p, z, 1.33387994085E-1f);
  p = fma(p, z, 3.33331568548E-1f);
  var t = select(fma(p * z, r, r), r, ax < 1e-4f);
  if ((u32(rj.y) & 2u) != 0u) { t = -1.0f / t; }
  return select(t, -t, x < 0.0f);
}\n",
            Erf => "fn erf_x(x0: f32) -> f32 {
  // below 2^-38 erf(x) = 2x/sqrt(pi) to f32 precision (the rational form's x * p would lose bits to underflow)
  if ((bitcast<u32>(x0) & 0x7fffffffu) < 0x2c800000u) { return x0 * 1.1283791670955126f; }
  let x = clamp_nan(x0, -4.0f, 4.0f);
  let x2 = x * x;
  var p = -2.72614225801306e-10f;
  p = fma(x2, p, 2.77068142495902e-08f);
  p = fma(x2, p, -2.10102402082508e-06f);
  p = fma(x2, p, -5.69250639462346e-05f);
  p = fma(x2, p, -7.34990630326855e-04f);
  p = fma(x2, p, -2.95459980854025e-03f);
  p = fma(x2, p, -1.60960333262415e-02f);
  p = x * p;
  var q = -1.45660718464996e-05f;
  q = fma(x2, q, -2.13374055278905e-04f);
  q = fma(x2, q, -1.68282697438203e-03f);
  q = fma(x2, q, -7.37332916720468e-03f);
  q = fma(x2, q, -1.42647390514189e-02f);
  return p / q;
}\n",
            ErfInv => "fn erf_inv_x(x: f32) -> f32 {
  if (abs(x) == 1.0f) { return x * bitcast<f32>(0x7f800000u); }
  var w = -log1p_x(-x * x);
  var p: f32;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-08f;
    p = fma(p, w, 3.43273939e-07f);
    p = fma(p, w, -3.5233877e-06f);
    p = fma(p, w, -4.39150654e-06f);
    p = fma(p, w, 0.00021858087f);
    p = fma(p, w, -0.00125372503f);
    p = fma(p, w, -0.00417768164f);
    p = fma(p, w, 0.246640727f);
    p = fma(p, w, 1.50140941f);
  } else {
    w = sqrt(w) - 3.0f;
    p = -0.000200214257f;
    p = fma(p, w, 0.000100950558f);
    p = fma(p, w, 0.00134934322f);
    p = fma(p, w, -0.00367342844f);
    p = fma(p, w, 0.00573950773f);
    p = fma(p, w, -0.0076224613f);
    p = fma(p, w, 0.00943887047f);
    p = fma(p, w, 1.00167406f);
    p = fma(p, w, 2.83297682f);
  }
  return p * x;
}\n",
            Ndtri => "fn ndtri_x(p: f32) -> f32 {
  // as the CPU (XLA): a subnormal p is 0 (recognized on the bits: GPUs may flush it before any comparison)
  if ((bitcast<u32>(p) & 0x7fffffffu) < 0x00800000u) { return bitcast<f32>(0xff800000u); }
  if (isnan_f(p) || p < 0.0f || p > 1.0f) { return bitcast<f32>(0x7fc00000u); }
  if (p == 1.0f) { return bitcast<f32>(0x7f800000u); }
  let upper = p > 0.8646647334098816f;
  let y = select(p, 1.0f - p, upper);
  var x: f32;
  var n: f32;
  var d: f32;
  if (y > 0.1353352814912796f) {
    let w = y - 0.5f;
    let ww = w * w;
    n = -5.99633501014107895267E1f;
    n = fma(n, ww, 9.80010754185999661536E1f);
    n = fma(n, ww, -5.66762857469070293439E1f);
    n = fma(n, ww, 1.39312609387279679503E1f);
    n = fma(n, ww, -1.23916583867381258016E0f);
    d = 1.0f;
    d = fma(d, ww, 1.95448858338141759834E0f);
    d = fma(d, ww, 4.67627912898881538453E0f);
    d = fma(d, ww, 8.63602421390890590575E1f);
    d = fma(d, ww, -2.25462687854119370527E2f);
    d = fma(d, ww, 2.00260212380060660359E2f);
    d = fma(d, ww, -8.20372256168333339912E1f);
    d = fma(d, ww, 1.59056225126211695515E1f);
    d = fma(d, ww, -1.18331621121330003142E0f);
    x = fma(w * ww, n / d, w) * -2.5066282749176025f;
  } else {
    let t = -2.0f * log_x(y);
    let z = sqrt(t);
    let iz = 1.0f / z;
    if (z >= 8.0f) {
      n = 3.23774891776946035970E0f;
      n = fma(n, iz, 6.91522889068984211695E0f);
      n = fma(n, iz, 3.93881025292474443415E0f);
      n = fma(n, iz, 1.33303460815807542389E0f);
      n = fma(n, iz, 2.01485389549179081538E-1f);
      n = fma(n, iz, 1.23716634817820021358E-2f);
      n = fma(n, iz, 3.01581553508235416007E-4f);
      n = fma(n, iz, 2.65806974686737550832E-6f);
      n = fma(n, iz, 6.23974539184983293730E-9f);
      d = 1.0f;
      d = fma(d, iz, 6.02427039364742014255E0f);
      d = fma(d, iz, 3.67983563856160859403E0f);
      d = fma(d, iz, 1.37702099489081330271E0f);
      d = fma(d, iz, 2.16236993594496635890E-1f);
      d = fma(d, iz, 1.34204006088543189037E-2f);
      d = fma(d, iz, 3.28014464682127739104E-4f);
      d = fma(d, iz, 2.89247864745380683936E-6f);
      d = fma(d, iz, 6.79019408009981274425E-9f);
    } else {
      n = 4.05544892305962419923E0f;
      n = fma(n, iz, 3.15251094599893866154E1f);
      n = fma(n, iz, 5.71628192246421288162E1f);
      n = fma(n, iz, 4.40805073893200834700E1f);
      n = fma(n, iz, 1.46849561928858024014E1f);
      n = fma(n, iz, 2.18663306850790267539E0f);
      n = fma(n, iz, -1.40256079171354495875E-1f);
      n = fma(n, iz, -3.50424626827848203418E-2f);
      n = fma(n, iz, -8.57456785154685413611E-4f);
      d = 1.0f;
      d = fma(d, iz, 1.57799883256466749731E1f);
      d = fma(d, iz, 4.53907635128879210584E1f);
      d = fma(d, iz, 4.13172038254672030440E1f);
      d = fma(d, iz, 1.50425385692907503408E1f);
      d = fma(d, iz, 2.50464946208309415979E0f);
      d = fma(d, iz, -1.42182922854787788574E-1f);
      d = fma(d, iz, -3.80806407691578277194E-2f);
      d = fma(d, iz, -9.33259480895457427372E-4f);
    }
    x = z - 0.5f * log_x(t) / z - n / (d * z);
  }
  return select(-x, x, upper);
}\n",
            Cbrt => "fn cbrt_x(x: f32) -> f32 {
  // Zero, NaN, inf and subnormal inputs are recognized from the bits: GPUs that flush subnormals to zero
  // would see a subnormal as 0 in any float comparison or product.
  let bits = bitcast<u32>(x) & 0x7fffffffu;
  if (bits == 0u || bits >= 0x7f800000u) { return x; }
  // A subnormal x is its mantissa times 2^-149: take a = x * 2^150 exactly (from the integer), then
  // cbrt(x) = cbrt(a) * 2^-50; above 2^120 take a = x * 2^-96 (y^3 would overflow), cbrt(x) = cbrt(a) * 2^32.
  // Estimate by exp2(log2/3), then two Newton steps.
  let den = bits < 0x00800000u;
  let big = bits >= 0x7b800000u;
  var a = select(bitcast<f32>(bits), f32(bits) * 2.0f, den);
  a = select(a, a * 1.2621774483536189e-29f, big);
  var y = exp2(log2(a) / 3.0f);
  y = y - (y * y * y - a) / (3.0f * y * y);
  y = y - (y * y * y - a) / (3.0f * y * y);
  y = select(y, y * 8.8817841970012523e-16f, den);
  y = select(y, y * 4294967296.0f, big);
  return bitcast<f32>(bitcast<u32>(y) | (bitcast<u32>(x) & 0x80000000u));
}\n",
            Atan => "fn atan_x(x: f32) -> f32 {
  // Cephes atanf.
  var ax = abs(x);
  if (isnan_f(x)) { return x; }
  var y0 = 0.0f;
  var t = ax;
  if (ax > 2.414213562373095f) {
    y0 = 1.5707963267948966f;
    t = -1.0f / ax;
  } else if (ax > 0.4142135623730950f) {
    y0 = 0.7853981633974483f;
    t = (ax - 1.0f) / (ax + 1.0f);
  }
  let z = t * t;
  var p = 8.05374449538e-2f;
  p = fma(p, z, -1.38776856032E-1f);
  p = fma(p, z, 1.99777106478E-1f);
  p = fma(p, z, -3.33329491539E-1f);
  let r = y0 + fma(p * z, t, t);
  return select(r, -r, x < 0.0f);
}\n",
            Asin => "fn asin_x(x: f32) -> f32 {
  // Cephes asinf.
  let a = abs(x);
  if (isnan_f(x) || a > 1.0f) { return bitcast<f32>(0x7fc00000u); }
  if (a < 1e-4f) { return x; }
  var z: f32;
  var t: f32;
  let big = a > 0.5f;
  if (big) { z = 0.5f * (1.0f - a); t = sqrt(z); } else { t = a; z = a * a; }
  var p = 4.2163199048E-2f;
  p = fma(p, z, 2.4181311049E-2f);
  p = fma(p, z, 4.5470025998E-2f);
  p = fma(p, z, 7.4953002686E-2f);
  p = fma(p, z, 1.6666752422E-1f);
  var r = fma(p * z, t, t);
  if (big) { r = 1.5707963267948966f - (r + r); }
  return select(r, -r, x < 0.0f);
}\n",
            Acos => "fn acos_x(x: f32) -> f32 {
  if (x < -0.5f) { return 3.14159265358979f - 2.0f * asin_x(sqrt(0.5f * (1.0f + x))); }
  if (x > 0.5f) { return 2.0f * asin_x(sqrt(0.5f * (1.0f - x))); }
  return 1.5707963267948966f - asin_x(x);
}\n",
            Atan2F32 => "fn atan2_x(y: f32, x: f32) -> f32 {
  if (isnan_f(x) || isnan_f(y)) { return bitcast<f32>(0x7fc00000u); }
  let sy = bitcast<u32>(y) & 0x80000000u;
  let pi = 3.14159265358979f;
  let inf = bitcast<f32>(0x7f800000u);
  var r: f32;
  if (y == 0.0f) {
    r = select(0.0f, pi, (bitcast<u32>(x) & 0x80000000u) != 0u);
  } else if (x == 0.0f) {
    r = 1.5707963267948966f;
  } else if (abs(x) == inf && abs(y) == inf) {
    r = select(0.7853981633974483f, 2.356194490192345f, x < 0.0f);
  } else if (abs(x) == inf) {
    r = select(0.0f, pi, x < 0.0f);
  } else if (abs(y) == inf) {
    r = 1.5707963267948966f;
  } else {
    let ay = abs(y);
    let ax = abs(x);
    var a: f32;
    if (ay > ax) {
      a = 1.5707963267948966f - atan_x(ax / ay);
    } else {
      a = atan_x(ay / ax);
    }
    r = select(a, pi - a, x < 0.0f);
  }
  return bitcast<f32>(bitcast<u32>(r) | sy);
}\n",
            Sinh => "fn sinh_x(x: f32) -> f32 {
  let a = abs(x);
  var r: f32;
  if (a < 1.0f) {
    let e = expm1_x(a);
    r = 0.5f * (e + e / (e + 1.0f));
  } else if (a < 88.0f) {
    let e = exp_x(a);
    r = 0.5f * (e - 1.0f / e);
  } else {
    let e = exp_x(0.5f * a);
    r = (0.5f * e) * e;
  }
  return select(r, -r, x < 0.0f);
}\n",
            Cosh => "fn cosh_x(x: f32) -> f32 {
  let a = abs(x);
  if (a < 88.0f) {
    let e = exp_x(a);
    return 0.5f * (e + 1.0f / e);
  }
  let e = exp_x(0.5f * a);
  return (0.5f * e) * e;
}\n",
            Asinh => "fn asinh_x(x: f32) -> f32 {
  let a = abs(x);
  var r: f32;
  if (a > 1e10f) {
    r = log_x(a) + 0.693147180559945309f;
  } else {
    let a2 = a * a;
    r = log1p_x(a + a2 / (1.0f + sqrt(1.0f + a2)));
  }
  return select(r, -r, x < 0.0f);
}\n",
            Acosh => "fn acosh_x(x: f32) -> f32 {
  if (x < 1.0f) { return bitcast<f32>(0x7fc00000u); }
  if (x > 1e10f) { return log_x(x) + 0.693147180559945309f; }
  let t = x - 1.0f;
  return log1p_x(t + sqrt(2.0f * t + t * t));
}\n",
            Atanh => "fn atanh_x(x: f32) -> f32 {
  let a = abs(x);
  if (a > 1.0f) { return bitcast<f32>(0x7fc00000u); }
  let r = 0.5f * log1p_x((a + a) / (1.0f - a));
  return select(r, -r, x < 0.0f);
}\n",
            Lgamma => "fn lgamma_x(x: f32) -> f32 {
  // XLA's Lanczos approximation (g = 7, n = 9) with reflection for x < 0.5.
  if (isnan_f(x)) { return x; }
  let inf = bitcast<f32>(0x7f800000u);
  if (abs(x) == inf) { return inf; }
  // exact zeros (as the CPU backend); near 0, -log|x| (pi x would round sin(pi x) to 0 in the reflection)
  if (x == 1.0f || x == 2.0f) { return 0.0f; }
  if ((bitcast<u32>(x) & 0x7fffffffu) < 0x30000000u) { return -log_x(abs(x)); }
  let refl = x < 0.5f;
  let z = select(x - 1.0f, -x, refl);
  var s = 0.99999999999980993227684700473478f;
  s = s + 676.520368121885098567009190444019f / (z + 1.0f);
  s = s + -1259.13921672240287047156078755283f / (z + 2.0f);
  s = s + 771.3234287776530788486528258894f / (z + 3.0f);
  s = s + -176.61502916214059906584551354f / (z + 4.0f);
  s = s + 12.507343278686904814458936853f / (z + 5.0f);
  s = s + -0.13857109526572011689554707f / (z + 6.0f);
  s = s + 9.984369578019570859563e-6f / (z + 7.0f);
  s = s + 1.50563273514931155834e-7f / (z + 8.0f);
  let t = z + 7.5f;
  let log_t = 2.0149030205422647f + log1p_x(z / 7.5f);
  let log_y = 0.91893853320467274f + (z + 0.5f - t / log_t) * log_t + log_x(s);
  if (!refl) { return log_y; }
  // lgamma(x) = log(pi) - log|sin(pi x)| - lgamma(1 - x).
  let fl = floor(x);
  if (x == fl) { return inf; }
  var frac = x - fl;
  frac = select(frac, 1.0f - frac, frac > 0.5f);
  let sp = abs(sin_x(3.14159265358979f * frac));
  return 1.1447298858494002f - log_x(sp) - log_y;
}\n",
            Digamma => "fn digamma_x(x: f32) -> f32 {
  // XLA's digamma: derivative of the Lanczos sum, reflection for x < 0.5.
  if (isnan_f(x)) { return x; }
  if (x <= 0.0f && x == floor(x)) { return bitcast<f32>(0x7fc00000u); }
  // near 0, -1/x - Euler's gamma (the reflection's tan(pi x) would lose x)
  if ((bitcast<u32>(x) & 0x7fffffffu) < 0x30000000u) { return -1.0f / x - 0.57721566490153286f; }
  let refl = x < 0.5f;
  let z = select(x - 1.0f, -x, refl);
  var num = 0.0f;
  var den = 0.99999999999980993227684700473478f;
  var c = array<f32, 8>(676.520368121885098567009190444019f, -1259.13921672240287047156078755283f,
    771.3234287776530788486528258894f, -176.61502916214059906584551354f, 12.507343278686904814458936853f,
    -0.13857109526572011689554707f, 9.984369578019570859563e-6f, 1.50563273514931155834e-7f);
  for (var i: i32 = 0; i < 8; i = i + 1) {
    let zi = z + f32(i) + 1.0f;
    num = num - c[i] / (zi * zi);
    den = den + c[i] / zi;
  }
  let t = z + 7.5f;
  let log_t = 2.0149030205422647f + log1p_x(z / 7.5f);
  let y = log_t + num / den - 7.0f / t;
  if (!refl) { return y; }
  // tan(pi x) from x less its nearest integer (exact): pi times a small remainder keeps its precision near
  // the poles, where pi * (x - floor(x)) would not
  let r = x - round_f(x, 4u);
  return y - 3.14159265358979f / tan_x(3.14159265358979f * r);
}\n",
            PowF32 => "fn pow_x(x: f32, y: f32) -> f32 {
  let inf = bitcast<f32>(0x7f800000u);
  let nan = bitcast<f32>(0x7fc00000u);
  if (y == 0.0f) { return 1.0f; }
  if (x == 1.0f) { return 1.0f; }
  if (isnan_f(x) || isnan_f(y)) { return nan; }
  let ay = abs(y);
  let yint = floor(y) == y;
  let yodd = yint && ay < 16777216.0f && (u32(ay) & 1u) == 1u;
  let ax = abs(x);
  if (ay == inf) {
    if (ax == 1.0f) { return 1.0f; }
    return select(0.0f, inf, (ax > 1.0f) == (y > 0.0f));
  }
  if (x == 0.0f) {
    let r = select(inf, 0.0f, y > 0.0f);
    return select(r, bitcast<f32>(bitcast<u32>(r) | (bitcast<u32>(x) & 0x80000000u)), yodd);
  }
  if (ax == inf) {
    let r = select(0.0f, inf, y > 0.0f);
    return select(r, -r, x < 0.0f && yodd);
  }
  if (x < 0.0f && !yint) { return nan; }
  // a subnormal |x| is its integer significand times 2^-149 (log2 may flush a subnormal input to zero)
  let bits = bitcast<u32>(ax);
  let lx = select(log2(ax), log2(f32(bits)) - 149.0f, bits < 0x00800000u);
  // a subnormal result is scaled up through exp2 and down by a product (exp2 may flush its output)
  let t = y * lx;
  let r = select(exp2(t), exp2(t + 64.0f) * 5.421010862427522e-20f, t < -126.0f);
  return select(r, -r, x < 0.0f && yodd);
}\n",
        };
        text.into()
    }
}

pub(super) const ALL: &[Helper] = {
    use Helper::*;
    use Width::{F32 as S, F64 as D};
    &[
        IsNan(S), IsNan(D), Order(S), Order(D), CmpKey(S), CmpKey(D), FMax(S), FMax(D), FMin(S), FMin(D),
        Sign(S), Sign(D), Round(S), Round(D), NextAfter(S), NextAfter(D), Fmod(S), Fmod(D), TruncMag(S),
        TruncMag(D), FToI32(S), FToI32(D), FToU32(S), FToU32(D), U32ToF32, U64ToF32, U64ToF64, BitLen64,
        F64ToI64, F32ToI64, F64ToF32, F32ToF64, ClampNan, DivI32, DivU32, RemI32, RemU32, IPowI32, IPowU32,
        F16ToF32, F32ToF16, Pow2i, Scale2, ExpReduce, Expm1Poly, Exp, Exp2, Expm1, LogKernel, LogSplit, Log,
        Log1p, Tanh, Logistic, Sin, Cos, Tan, TrigReduce, RemPio2Big, Erf, ErfInv, Ndtri, Cbrt, Atan, Asin, Acos,
        Atan2F32, Sinh, Cosh, Asinh, Acosh, Atanh, Lgamma, Digamma, PowF32, DivI64, RemI64, IPowI64,
    ]
};

/// Whether WGSL `src` calls function `name` (a call: the name followed by `(`, not part of a longer name).
fn calls(src: &str, name: &str) -> bool {
    let pat = format!("{name}(");
    src.match_indices(&pat).any(|(i, _)| {
        let before = src[..i].chars().next_back();
        !matches!(before, Some(c) if c.is_alphanumeric() || c == '_') && !src[..i].ends_with("fn ")
    })
}

/// The WGSL text of `set` and everything it depends on.
pub fn helper_source(set: &BTreeSet<Helper>) -> String {
    let mut all: BTreeSet<Helper> = BTreeSet::new();
    let mut todo: Vec<Helper> = set.iter().copied().collect();
    while let Some(h) = todo.pop() {
        if all.insert(h) {
            // Dependencies: every helper whose name the source calls.
            let src = h.source();
            todo.extend(ALL.iter().copied().filter(|&g| g != h && calls(&src, g.name())));
        }
    }
    all.iter().map(|h| h.source()).collect()
}
