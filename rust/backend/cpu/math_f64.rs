//! The float32 functions computed in f64 lanes (`sin`/`cos`: `sincosf`, `lgamma`, `digamma`, the f64 `log`
//! they and `vmath`'s `pow` use, and the block routines' float32 `pow`: `pow_core`), written once against `Lanes64`:
//! `math_f32`'s `Lanes` on f64 lanes (its integer lanes are i64 then) plus the few operations only these
//! need. As for `math_f32`, two kinds of code run them: `vmath`'s emitter (scalar `f64` or `f64x2`: an
//! `f32x4` is two halves) and `blockmath`'s AVX-512 / AVX2 f64 lanes (`f64x8` / `f64x4`: four / two times
//! Cranelift's width), with the same IEEE operations in the same order, so block routines and inline code
//! give the same bits (`pow_core` runs in block routines only: pow's inline code calls `powf`).
//!
//! Why f64: near lgamma's zeros (1, 2) and digamma's (1.4616...) the f32 result is tiny and a 4-ulp bound
//! asks for absolute errors f32 arithmetic cannot give; f64 lanes have 29 spare bits, so the shifts x + k
//! and 1 - x are exact and only truncation error is left. Every lane takes every path (selects choose), and
//! the caller rounds once to f32.
//!
//! lgamma(x): reflection below ½ (log(π/|sin πx|) − lgamma(1 − x), sin by r = x − rint(x)), then for
//! y ∈ [½, 6) the recurrence down (or one step up) into [1.5, 2.5), where lgamma(2 + d) is its Taylor series
//! d·Σ c_k d^(k−1) (c_1 = 1 − γ, c_k = (−1)^k (ζ(k) − 1)/k: |d| ≤ ½ and 16 terms leave < 2e-11 relative),
//! and Stirling's series (7 terms, < 1e-13 at y = 6) above 6. The logs of the reflection and of the
//! recurrence's product are one log of their quotient, whose parts are kept as numerator and denominator
//! (one division). Only float32 accuracy is the aim: truncations are near 1e-10 relative, not f64's 1e-16.
//! Measured (tests/test_math_accuracy.py's sweep against math.lgamma): see that test's bound.
//!
//! digamma(x): reflection below ½ (ψ(1 − x) − π·cos(πr)/sin(πr)), the recurrence up to z ≥ 8 with its
//! sum Σ 1/z kept as one fraction that takes in the cotangent too (one division), and the asymptotic
//! series (7 terms, < 2e-15 at 8).
// The x86 kernels are cfg-gated out elsewhere: what only they use is dead there, not wrong.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_mut, unused_variables, unused_macros, unreachable_code))]
#![allow(clippy::excessive_precision)]

use super::math_f32::{Cmp, Lanes};

/// `Lanes` on f64 lanes (`c` gives f64 constants, the integer lanes are i64), plus what the f64
/// algorithms need beyond it.
pub trait Lanes64: Lanes {
    /// Rounded to the nearest integer, ties to even (as `f64::round_ties_even`).
    fn nearest(&mut self, x: Self::F) -> Self::F;
    fn mor(&mut self, a: Self::M, b: Self::M) -> Self::M;
    /// Logical shift right of the i64 lanes.
    fn ushrc(&mut self, a: Self::I, n: u32) -> Self::I;
    /// Rounded toward zero (as `f64::trunc`).
    fn trunc(&mut self, x: Self::F) -> Self::F;
    /// `a < c ? c : a` lane by lane (a NaN `a` stays): a clamp from below. One instruction on x86 lanes,
    /// whose max(c, a) is `c > a ? c : a` (the second operand when either is NaN or both are equal).
    fn maxc(&mut self, a: Self::F, c: f64) -> Self::F {
        let cv = self.c(c);
        let m = self.cmp(Cmp::Lt, a, cv);
        self.sel(m, cv, a)
    }
    /// `a > c ? c : a` lane by lane (a NaN `a` stays): a clamp from above (x86's min(c, a)).
    fn minc(&mut self, a: Self::F, c: f64) -> Self::F {
        let cv = self.c(c);
        let m = self.cmp(Cmp::Gt, a, cv);
        self.sel(m, cv, a)
    }
}

/// float32 `sin`/`cos` as the C library XLA:CPU calls computes them (glibc 2.28+'s `sinf`/`cosf`, whose
/// double-precision steps these are; JAX's bits): |x| < 0.75 is evaluated as is; below 120, n = the
/// quadrant from 2^24·(2/π)·x truncated to an integer, plus 2^23, shifted right by 24 (an arithmetic shift:
/// a floor), and r = x − n·π/2 by one fma; then sin r = (r + r³S1) + r⁵(S2 + r²S3) and cos r =
/// (1 + r²C1) + r⁴C2 + r⁶(C3 + r²C4) (fmas where glibc's FMA build has them), the one chosen by the
/// quadrant's parity, negated in quadrants 2 and 3 (glibc negates the argument or the coefficients: the
/// same bits, every step being sign-symmetric). The constants are glibc's (its `__sincosf_table`).
///
/// From 120 (`SINCOS_MID`) the C library reduces by a 192-bit 4/π in integer arithmetic; with `mid` (hosts
/// with FMA) lanes below 2^26 take n = rint(x·2/π) and r = x − n·P1 − n·P2 (π/2 as two doubles; the first
/// fma is exact) instead: a different r, but one within a few double ulps of the C library's, and the
/// float32 results are the same on every float32 in [120, 2^26) (checked exhaustively in C, sin and cos,
/// both signs; the first difference is at 2^31.75, where x·2/π lies near a half-integer). Callers give the
/// C library's own value on the lanes above (`sincos_limit`), and below 2^-12 x (sin) or 1 (cos), selected
/// on the float32 lanes, where a subnormal x keeps its bits (the f64 widening flushes it under DAZ).
/// `x` is a float32 widened exactly; non-finite x gives x − x (NaN, as the C library).
/// Checked against the C library on every float32 with |x| < 120 (0 differences, FMA host).
#[inline(always)]
pub fn sincosf<L: Lanes64>(d: &mut L, x: L::F, cos: bool, mid: bool) -> L::F {
    let ax = d.abs(x);
    let reduce = d.cmpc(Cmp::Ge, ax, 0.75);
    let r = d.mulc(x, SINCOSF_HPI_INV);
    let t = d.trunc(r);
    let t = d.addc(t, 8388608.0);
    let t = d.mulc(t, 2f64.powi(-24));
    let n = d.floor(t);
    let zero = d.c(0.0);
    let n = d.sel(reduce, n, zero);
    let far = d.cmpc(Cmp::Ge, ax, SINCOS_MID);
    let n = if mid {
        let t = d.mulc(x, std::f64::consts::FRAC_2_PI);
        let nm = d.nearest(t);
        d.sel(far, nm, n)
    } else {
        n
    };
    let nh = d.neg(n);
    let r = d.fmac(nh, SINCOSF_HPI, x);
    let r = if mid {
        let r2 = d.fmac(nh, SINCOSF_HPI_LO, r);
        d.sel(far, r2, r)
    } else {
        r
    };
    // quadrant n (+1 for cos) mod 4 as an integer: n is exact and |n| < 2^26
    let magic = d.c(6755399441055744.0);
    let nb = d.add(n, magic);
    let nb = d.bits(nb);
    let q = if cos { d.iaddc(nb, 1) } else { nb };
    let x2 = d.mul(r, r);
    let x3 = d.mul(r, x2);
    let s3 = d.c(SINCOSF_S[2]);
    let s2 = d.c(SINCOSF_S[1]);
    let s1 = d.fma(x2, s3, s2);
    let x5 = d.mul(x3, x2);
    let sc = d.c(SINCOSF_S[0]);
    let s = d.fma(x3, sc, r);
    let sin = d.fma(x5, s1, s);
    let x4 = d.mul(x2, x2);
    let c4 = d.c(SINCOSF_C[4]);
    let c3 = d.c(SINCOSF_C[3]);
    let c2 = d.fma(x2, c4, c3);
    let c1k = d.c(SINCOSF_C[1]);
    let c0 = d.c(SINCOSF_C[0]);
    let c1 = d.fma(x2, c1k, c0);
    let x6 = d.mul(x4, x2);
    let c2k = d.c(SINCOSF_C[2]);
    let c = d.fma(x4, c2k, c1);
    let cosv = d.fma(x6, c2, c);
    let odd = d.iandc(q, 1);
    let odd = d.icmpc(super::math_f32::ICmp::Ge, odd, 1);
    let v = d.sel(odd, cosv, sin);
    let neg = d.iandc(q, 2);
    let neg = d.icmpc(super::math_f32::ICmp::Ge, neg, 2);
    let nv = d.neg(v);
    let v = d.sel(neg, nv, v);
    // inf / NaN: x − x (the C library's invalid result: the default NaN, or x's NaN quieted)
    let fin = d.cmpc(Cmp::Lt, ax, f64::INFINITY);
    let nan = d.sub(x, x);
    d.sel(fin, v, nan)
}

/// float32 `tan`'s reduction as the C library XLA:CPU calls computes it (glibc 2.36's `tanf`: `sincosf`'s
/// quadrant n from 2^24·(2/π)·x truncated, plus 2^23, shifted right by 24, then r = x − n·π/2 in double
/// precision with the product rounded before the difference: `tanf` is built without fused products):
/// returns (r, iy) with iy = 1 for even n and −1 for odd n, the kernel's sign/reciprocal switch. With `mid`
/// (hosts with FMA) lanes from 120 take n = rint(x·2/π) and r = x − n·P1 − n·P2 (two fmas) in place of the C
/// library's integer reduction: the same float32 results on [120, 2^23) (checked in C on every float32 there;
/// two differ from 2^23 on, so `tan_limit` sends those lanes to the C library). Lanes with |x| ≤ π/4, ±inf and
/// NaN are the kernel's to select (`math_f32::tanf_kernel`).
#[inline(always)]
pub fn tanf_reduce<L: Lanes64>(d: &mut L, x: L::F, mid: bool) -> (L::F, L::F) {
    let r = d.mulc(x, SINCOSF_HPI_INV);
    let t = d.trunc(r);
    let t = d.addc(t, 8388608.0);
    let t = d.mulc(t, 2f64.powi(-24));
    let n = d.floor(t);
    let p = d.mulc(n, SINCOSF_HPI);
    let dx = d.sub(x, p);
    let (n, dx) = if mid {
        let ax = d.abs(x);
        let far = d.cmpc(Cmp::Ge, ax, SINCOS_MID);
        let t = d.mulc(x, std::f64::consts::FRAC_2_PI);
        let nm = d.nearest(t);
        let nh = d.neg(nm);
        let r1 = d.fmac(nh, SINCOSF_HPI, x);
        let r2 = d.fmac(nh, SINCOSF_HPI_LO, r1);
        (d.sel(far, nm, n), d.sel(far, r2, dx))
    } else {
        (n, dx)
    };
    // n's parity through its bits (n is an integer below 2^24 in magnitude: exact after the magic add)
    let magic = d.c(6755399441055744.0);
    let nb = d.add(n, magic);
    let nb = d.bits(nb);
    let odd = d.iandc(nb, 1);
    let odd = d.icmpc(super::math_f32::ICmp::Ge, odd, 1);
    let one = d.c(1.0);
    let iy = d.selc(odd, -1.0, one);
    (dx, iy)
}

/// From this |x| on, callers of `tanf_reduce` take the C library's `tanf` value (`mid`: the host fuses).
pub fn tan_limit(mid: bool) -> f64 {
    if mid {
        8388608.0 // 2^23
    } else {
        SINCOS_MID
    }
}

/// Where the C library's `sinf`/`cosf` switch to their integer reduction.
const SINCOS_MID: f64 = 120.0;

/// From this |x| on, callers of `sincosf` take the C library's `sinf`/`cosf` value (`mid`: the host fuses).
pub fn sincos_limit(mid: bool) -> f64 {
    if mid {
        67108864.0 // 2^26
    } else {
        SINCOS_MID
    }
}

/// glibc's 2/π·2^24 and π/2 (double).
const SINCOSF_HPI_INV: f64 = 10680707.430881744; // 0x1.45F306DC9C883p+23
const SINCOSF_HPI: f64 = std::f64::consts::FRAC_PI_2; // 0x1.921FB54442D18p0
/// π/2 − SINCOSF_HPI, rounded.
const SINCOSF_HPI_LO: f64 = 6.123233995736766e-17; // 0x1.1A62633145C07p-54
/// glibc's sinf/cosf polynomials (`__sincosf_table[0]`): S1..S3 and C0..C4.
const SINCOSF_S: [f64; 3] = [-0.16666654943701084, 0.008332178146138854, -0.00019517298981385725];
const SINCOSF_C: [f64; 5] =
    [1.0, -0.49999999725108224, 0.041666623324344516, -0.001388676379437604, 2.4390450703564542e-05];

/// fdlibm log coefficients: |log(1+f) - (f - hfsq + s(hfsq + R(z)))| < 2^-58.45.
const LGD: [f64; 7] = [
    6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
    1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01,
];

/// ln x for positive normal f64 lanes (finite); garbage for others (callers select specials).
#[inline(always)]
pub fn log<L: Lanes64>(d: &mut L, x: L::F) -> L::F {
    let ix = d.bits(x);
    let ix = d.iaddc(ix, 0x3ff0_0000_0000_0000 - 0x3fe6_a09e_667f_3bcd);
    // k + 1023 as a float, exactly: the exponent field OR'ed into 2^52's mantissa.
    let kb = d.ushrc(ix, 52);
    let kb = d.iaddc(kb, 0x4330_0000_0000_0000);
    let kf = d.fbits(kb);
    let k = d.addc(kf, -(4503599627370496.0 + 1023.0));
    let m = d.iandc(ix, 0x000f_ffff_ffff_ffff);
    let m = d.iaddc(m, 0x3fe6_a09e_667f_3bcd);
    let m = d.fbits(m);
    let f = d.addc(m, -1.0);
    let two = d.addc(f, 2.0);
    let s = d.div(f, two);
    let z = d.mul(s, s);
    let w = d.mul(z, z);
    let t1 = d.poly(w, &[LGD[1], LGD[3], LGD[5]]);
    let t1 = d.mul(w, t1);
    let t2 = d.poly(w, &[LGD[0], LGD[2], LGD[4], LGD[6]]);
    let t2 = d.mul(z, t2);
    let rr = d.add(t1, t2);
    let ff = d.mul(f, f);
    let hfsq = d.mulc(ff, 0.5);
    let hr = d.add(hfsq, rr);
    let sr = d.mul(s, hr);
    // k*ln2_hi - ((hfsq - (s*(hfsq+R) + k*ln2_lo)) - f)
    let lo = d.fmac(k, 1.90821492927058770002e-10, sr);
    let a = d.sub(hfsq, lo);
    let a = d.sub(a, f);
    let hi = d.mulc(k, 6.93147180369123816490e-01);
    d.sub(hi, a)
}

/// (2/ln 2)/(2k + 1), k = 0..6: log2 z = s·Σ c_k s^2k with s = (z − 1)/(z + 1) (log z = 2 atanh s). For
/// z in [0.703125, 1.40625), |s| ≤ 0.175 and the terms left out are below 2^-39 of the sum.
const LOG2_ATANH: [f64; 7] = [
    2.8853900817779268, 0.9617966939259756, 0.5770780163555853, 0.4121985831111324, 0.3205988979753252,
    0.2623081892525388, 0.22195308321368667,
];

/// (ln 2)^k / k!, k = 1..10: 2^r = 1 + r·Σ c_k r^(k−1); for |r| ≤ ½ the terms left out are below 2^-42.
const EXP2_TAYLOR: [f64; 10] = [
    0.6931471805599453, 0.24022650695910072, 0.05550410866482158, 0.009618129107628477, 0.0013333558146428443,
    0.0001540353039338161, 1.5252733804059841e-05, 1.321548679014431e-06, 1.01780860092397e-07,
    7.054911620801123e-09,
];

/// float32 `pow`'s fast lanes, on f64 lanes: |x|^y = 2^(y·log2 |x|) for |x| = z·2^k (z in [0.703125,
/// 1.40625), k an integer, both exact from x's bits: the block routines split x in its f32 lanes) and y (f32
/// values widened). Returns the value and the lanes it decides: y·log2|x| in [−125.9, 128) (normal float32
/// results or overflow) and the value not within a margin of a float32 rounding midpoint.
///
/// Why the margin: the bits must be the C library's `powf` (XLA:CPU calls it: JAX's bits), and glibc's `powf`
/// is not correctly rounded: it rounds its own double-precision estimate, off by up to ~0.16 float32 ulp
/// (measured, growing with |y ln x|), so about 6.5e-4 of random pairs are 1 ulp off the correctly rounded
/// value this computes. Where the value lies at least (1 + 2|y ln x|)·2^-8 ulp from a midpoint (4 times
/// the largest misrounding h-pow13 saw per |y ln x| range over 2.3e7 pairs), both round the same way; the
/// caller takes `powf` on the other lanes (about 2.4% for y·ln x of order 1). This code's own error is far
/// below that margin, and added to it: about 2^-39·|t| relative from the log series (t = y·log2|x|,
/// 2^-15|t| ulp) and 2^-42 from the exp series; the margin adds 2^-12|t| + 2^-16 ulp for them.
///
/// Log: s = (z − 1)/(z + 1), both exact (z has 24 significant bits), log2 z = s·P(s²) (`LOG2_ATANH`), so
/// the relative error stays small near x = 1 (k = 0, no cancellation). Exp: t = n + r with n = rint(t) from
/// the low bits of t + 1.5·2^52 + 1023 (whose bits shifted left 52 are 2^n's), r exact, 2^r by `EXP2_TAYLOR`.
/// Costs one division and 19 multiply-adds per lane vector, no table (AVX2 has no cheap lane lookup).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub fn pow_core<L: Lanes64>(d: &mut L, z: L::F, k: L::F, y: L::F) -> (L::F, L::M) {
    let f = d.addc(z, -1.0);
    let zp1 = d.addc(z, 1.0);
    let s = d.div(f, zp1);
    let s2 = d.mul(s, s);
    let p = d.poly(s2, &LOG2_ATANH);
    let l2 = d.fma(s, p, k);
    let t = d.mul(y, l2);
    const SHIFT: f64 = 6755399441055744.0 + 1023.0;
    let magic = d.c(SHIFT);
    let kk = d.add(t, magic);
    let n = d.sub(kk, magic);
    let r = d.sub(t, n);
    let q = d.poly(r, &EXP2_TAYLOR);
    let one = d.c(1.0);
    let e = d.fma(r, q, one);
    let kb = d.bits(kk);
    let sb = d.shlc(kb, 52);
    let scale = d.fbits(sb);
    let v = d.mul(e, scale);
    // outside [−125.9, 128): subnormal or zero float32 results (rounded at another bit; FTZ) and |t| beyond
    // the scale's exponent range: left to powf
    let lo = d.cmpc(Cmp::Ge, t, -125.9);
    let hi = d.cmpc(Cmp::Lt, t, 128.0);
    let in_range = d.mand(lo, hi);
    // The 29 bits below float32's precision as 1 + frac in [1, 2): |that − 1.5| is the distance to the
    // midpoint in float32 ulps (exact).
    let vb = d.bits(v);
    let low = d.shlc(vb, 23);
    let low = d.iandc(low, 0x000f_ffff_ffff_ffff);
    let low = d.iaddc(low, 0x3ff0_0000_0000_0000);
    let frac = d.fbits(low);
    let dist = d.addc(frac, -1.5);
    let dist = d.abs(dist);
    let at = d.abs(t);
    let margin = d.c(2f64.powi(-8) + 2f64.powi(-16));
    let margin = d.fmac(at, std::f64::consts::LN_2 * 2f64.powi(-7) + 2f64.powi(-12), margin);
    let far = d.cmp(Cmp::Ge, dist, margin);
    let ok = d.mand(far, in_range);
    (v, ok)
}

/// ζ(k) − 1 for k = 2..=16 (SciPy's zeta(k, 2)).
const ZETA_M1: [f64; 15] = [
    0.6449340668482266, 0.2020569031595943, 0.08232323371113821, 0.03692775514336994, 0.017343061984449137,
    0.008349277381922829, 0.0040773561979443405, 0.0020083928260822143, 0.0009945751278180857,
    0.0004941886041194647, 0.00024608655330804827, 0.00012271334757848917, 6.124813505870481e-05,
    3.058823630702049e-05, 1.5282259408651864e-05,
];
const EULER_GAMMA: f64 = 0.5772156649015329;
/// Stirling: lgamma(w) − ((w − ½)ln w − w + ½ln 2π) = (1/w)·Σ B_2k/(2k(2k−1)) w^(2−2k), in 1/w².
const STIRLING: [f64; 7] =
    [1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0, -691.0 / 360360.0, 1.0 / 156.0];
/// The asymptotic digamma series: ψ(w) − (ln w − 1/(2w)) = −Σ B_2k/(2k) w^(−2k), in 1/w² (factor 1/w² out).
const DIGAMMA_ASYM: [f64; 7] =
    [1.0 / 12.0, -1.0 / 120.0, 1.0 / 252.0, -1.0 / 240.0, 1.0 / 132.0, -691.0 / 32760.0, 1.0 / 12.0];

/// ½ ln 2π.
const HALF_LN_2PI: f64 = 0.9189385332046727;

// The coefficient tables are constants (computed at compile time) so that the block routines do not
// rebuild them per vector.

/// Taylor coefficients of lgamma(2 + d) / d: c_1 = 1 − γ, c_k = (−1)^k (ζ(k) − 1)/k.
const LGAMMA_TAYLOR: [f64; 16] = {
    let mut cs = [0.0f64; 16];
    cs[0] = 1.0 - EULER_GAMMA;
    let mut i = 0;
    while i < ZETA_M1.len() {
        let k = (i + 2) as f64;
        cs[i + 1] = if i % 2 == 0 { ZETA_M1[i] / k } else { -ZETA_M1[i] / k };
        i += 1;
    }
    cs
};

/// Taylor coefficients of sin t / t and cos t in t² (to t¹⁷ / t¹⁸): (−1)^k / (2k+1)!, (−1)^k / (2k)!.
const SIN_COS_TAYLOR: ([f64; 9], [f64; 10]) = {
    let mut sc = [0.0f64; 9];
    let mut cc = [0.0f64; 10];
    let mut fact = 1.0f64; // n!
    let mut n = 0u32;
    while n <= 18 {
        if n > 0 {
            fact *= n as f64;
        }
        let sign = if (n / 2) % 2 == 0 { 1.0 } else { -1.0 };
        if n % 2 == 0 {
            cc[(n / 2) as usize] = sign / fact;
        } else {
            sc[(n / 2) as usize] = sign / fact;
        }
        n += 1;
    }
    (sc, cc)
};

/// (sin πr, cos πr) for f64 lanes |r| ≤ ½: Taylor series in t = πr to t¹⁷ / t¹⁸ (relative error < 1e-11).
#[inline(always)]
fn sin_cos_pi<L: Lanes64>(d: &mut L, r: L::F) -> (L::F, L::F) {
    let t = d.mulc(r, std::f64::consts::PI);
    let t2 = d.mul(t, t);
    let ps = d.poly(t2, &SIN_COS_TAYLOR.0);
    let s = d.mul(t, ps);
    let c = d.poly(t2, &SIN_COS_TAYLOR.1);
    (s, c)
}

/// x − rint(x) and the lanes where x < ½ (reflected), with y = 1 − x there and x elsewhere.
#[inline(always)]
fn reflect<L: Lanes64>(d: &mut L, x: L::F) -> (L::M, L::F, L::F) {
    let refl = d.cmpc(Cmp::Lt, x, 0.5);
    let one = d.c(1.0);
    let omx = d.sub(one, x);
    let y = d.sel(refl, omx, x);
    let n = d.nearest(x);
    let r = d.sub(x, n);
    (refl, y, r)
}

/// `res`, with x's NaN lanes as x + x (quieted, payload kept). Not x itself: a compiler may move the
/// final rounding to f32 through the select onto x's f32 value (AVX2 block routines did), which would
/// give a signaling NaN back unquieted where the inline code quiets it; x + x is quiet on every path.
#[inline(always)]
fn quiet_nan_passthrough<L: Lanes64>(d: &mut L, x: L::F, res: L::F) -> L::F {
    let nan = d.cmp(Cmp::Unord, x, x);
    let xx = d.add(x, x);
    d.sel(nan, xx, res)
}

/// lgamma of f64 lanes holding f32 values (float32 accuracy, see the module docs); +inf at the poles
/// and ±inf, NaN for NaN.
#[inline(always)]
pub fn lgamma<L: Lanes64>(d: &mut L, x: L::F) -> L::F {
    let (refl, y, r) = reflect(d, x);
    let (s, _) = sin_cos_pi(d, r);
    let s = d.abs(s);
    // y < 6: z = y moved into [1.5, 2.5), lgamma(y) = ln(pn/pd) + lgamma(z) with pn/pd = Γ(y)/Γ(z).
    let small = d.cmpc(Cmp::Lt, y, 6.0);
    let one = d.c(1.0);
    let two = d.c(2.0);
    let mut z = d.sel(small, y, two);
    let mut pn = one;
    for _ in 0..4 {
        let m = d.cmpc(Cmp::Ge, z, 2.5);
        let zm1 = d.addc(z, -1.0);
        let pz = d.mul(pn, zm1);
        pn = d.sel(m, pz, pn);
        z = d.sel(m, zm1, z);
    }
    let lo = d.cmpc(Cmp::Lt, z, 1.5);
    let pd = d.sel(lo, z, one);
    let zp1 = d.addc(z, 1.0);
    z = d.sel(lo, zp1, z);
    let dd = d.addc(z, -2.0);
    let poly = d.poly(dd, &LGAMMA_TAYLOR);
    let taylor = d.mul(dd, poly);
    // y >= 6: Stirling.
    let six = d.c(6.0);
    let w = d.sel(small, six, y);
    let lw = log(d, w);
    let iw = d.div(one, w);
    let iw2 = d.mul(iw, iw);
    let q = d.poly(iw2, &STIRLING);
    let wh = d.addc(w, -0.5);
    let st = d.mul(wh, lw);
    let st = d.sub(st, w);
    let st = d.addc(st, HALF_LN_2PI);
    let st = d.fma(iw, q, st);
    // lgamma(x) = ln(num/den) ± core. Reflected: num/den = π/(|sin|·pn/pd) (small y) or π/|sin|;
    // else pn/pd (small y) or 1.
    let pn = d.sel(small, pn, one);
    let pd = d.sel(small, pd, one);
    let pi = d.c(std::f64::consts::PI);
    let pipd = d.mul(pi, pd);
    let spn = d.mul(s, pn);
    let num = d.sel(refl, pipd, pn);
    let den = d.sel(refl, spn, pd);
    let arg = d.div(num, den);
    let core = d.sel(small, taylor, st);
    let ncore = d.neg(core);
    let core = d.sel(refl, ncore, core);
    let l = log(d, arg);
    let res = d.add(l, core);
    // Poles (reflected lanes with r = 0: x a non-positive integer) and ±inf → +inf; NaN → NaN.
    let r0 = d.cmpc(Cmp::Eq, r, 0.0);
    let pole = d.mand(refl, r0);
    let res = d.selc(pole, f64::INFINITY, res);
    let ax = d.abs(x);
    let inf = d.cmpc(Cmp::Eq, ax, f64::INFINITY);
    let res = d.selc(inf, f64::INFINITY, res);
    quiet_nan_passthrough(d, x, res)
}

/// digamma of f64 lanes holding f32 values (float32 accuracy); +inf at +inf, NaN at the poles, -inf
/// and NaN.
#[inline(always)]
pub fn digamma<L: Lanes64>(d: &mut L, x: L::F) -> L::F {
    let (refl, y, r) = reflect(d, x);
    let (s, c) = sin_cos_pi(d, r);
    // Unreflected lanes drop the cotangent (s = 1, c = 0: no division by a zero sine).
    let one = d.c(1.0);
    let zero = d.c(0.0);
    let s = d.sel(refl, s, one);
    let c = d.sel(refl, c, zero);
    // ψ(y) = ψ(z) − a/b, z = y + k ≥ 8, a/b = Σ_{j<k} 1/(y + j).
    let mut z = y;
    let mut a = d.c(0.0);
    let mut b = d.c(1.0);
    for _ in 0..8 {
        let m = d.cmpc(Cmp::Lt, z, 8.0);
        let na = d.fma(a, z, b);
        let nb = d.mul(b, z);
        a = d.sel(m, na, a);
        b = d.sel(m, nb, b);
        let zp1 = d.addc(z, 1.0);
        z = d.sel(m, zp1, z);
    }
    let lw = log(d, z);
    let iw = d.div(one, z);
    let iw2 = d.mul(iw, iw);
    let q = d.poly(iw2, &DIGAMMA_ASYM);
    let psi = d.fmac(iw, -0.5, lw);
    let qq = d.mul(iw2, q);
    let psi = d.sub(psi, qq);
    // a/b + π·c/s as one fraction: (a·s + π·c·b) / (b·s).
    let pcb = d.mul(c, b);
    let pcb = d.mulc(pcb, std::f64::consts::PI);
    let num = d.fma(a, s, pcb);
    let den = d.mul(b, s);
    let frac = d.div(num, den);
    let res = d.sub(psi, frac);
    // +inf → +inf; poles, -inf and NaN → NaN.
    let inf = d.cmpc(Cmp::Eq, x, f64::INFINITY);
    let res = d.selc(inf, f64::INFINITY, res);
    let r0 = d.cmpc(Cmp::Eq, r, 0.0);
    let pole = d.mand(refl, r0);
    let ninf = d.cmpc(Cmp::Eq, x, f64::NEG_INFINITY);
    let bad = d.mor(pole, ninf);
    let res = d.selc(bad, f64::NAN, res);
    quiet_nan_passthrough(d, x, res)
}
