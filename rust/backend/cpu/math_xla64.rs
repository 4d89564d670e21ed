//! float64 `exp`, `expm1`, `log1p` and `erf_inv` as XLA:CPU computes them, operation for operation, so
//! that f64 results (and the f64 samplers of `random`: `normal` is √2·erf_inv(u)) match JAX bit for bit.
//!
//! XLA:CPU calls the system libm for f64 `log` (so `f64::ln`, the same glibc function, already matches), but
//! expands the others itself: `exp` is Cephes' Padé form (Cody–Waite by ln 2, 2^n applied as four factors so
//! the scaling never overflows early), `expm1` is tanh(x/2)·(exp(x) + 1) below |x| = ½ with Eigen's rational
//! tanh, `log1p` is Cephes' rational function below √2 − 1 and log(1 + x) above, and `erf_inv` is Giles'
//! double-precision approximation (three polynomials in w = −log1p(−x²)). Every multiply followed by an add
//! that LLVM contracts is an fma here (`mul_add`), the others stay apart; the constants are XLA's, bit for
//! bit. Accuracy is XLA's (measured against NumPy/SciPy, tests/test_math_xla64.py): exp and expm1 ≤ 2 ulp,
//! log1p ≤ 2 except in (−0.414, −0.29), where the rational function runs outside its design range (1 + x in
//! [√½, √2]): up to 128 ulp there; erf_inv ≤ 21 ulp for |x| ≤ 0.99, worse near ±1 where −x² rounds.
//!
//! `rsqrt` too, on AVX-512 hosts (below). These run as the imported scalar functions of f64 (`math::symbol_ptr`), per lane from vector code, in
//! every block-math mode alike. Constant folding keeps libm (XLA's HLO evaluator folds with libm too).
// The x86 kernels are cfg-gated out elsewhere: what only they use is dead there, not wrong.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_mut, unused_variables, unused_macros, unreachable_code))]
#![allow(clippy::excessive_precision)]

const fn f(bits: u64) -> f64 {
    f64::from_bits(bits)
}

const EXP_LO: f64 = f(0xC086232BDD7ABCD2); // below: 0
const EXP_HI: f64 = f(0x40862E42FEFA39EF); // above: +inf
const LOG2E: f64 = f(0x3FF71547652B82FE);
const LN2_HI: f64 = f(0x3FE62E4000000000);
const LN2_LO: f64 = f(0x3EB7F7D1CF79ABCA);
const EXP_P: [f64; 2] = [f(0x3F2089CDD5E44BE8), f(0x3F9F06D10CCA2C7E)];
const EXP_Q: [f64; 3] = [f(0x3EC92EB6BC365FA0), f(0x3F64AE39B508B6C0), f(0x3FCD17099887E074)];

/// 2^k as a float from its exponent field (k in the normal range after the caller's split).
#[inline(always)]
fn pow2(k: i64) -> f64 {
    f64::from_bits((k << 52).wrapping_add(0x3FF0_0000_0000_0000) as u64)
}

/// XLA's NaN-propagating minimum / maximum (`llvm.minimum` / `llvm.maximum`).
#[inline(always)]
fn minimum(a: f64, b: f64) -> f64 {
    if a.is_nan() { a } else { a.min(b) }
}

#[inline(always)]
fn maximum(a: f64, b: f64) -> f64 {
    if a.is_nan() { a } else { a.max(b) }
}

#[inline(always)]
fn exp_(x: f64) -> f64 {
    let xc = maximum(minimum(x, EXP_HI), EXP_LO);
    let n = xc.mul_add(LOG2E, 0.5).floor();
    let g = n.mul_add(-LN2_HI, xc);
    let g = n.mul_add(-LN2_LO, g);
    let gg = g * g;
    let p = gg.mul_add(EXP_P[0], EXP_P[1]).mul_add(gg, 1.0) * g;
    let q = gg.mul_add(EXP_Q[0], EXP_Q[1]).mul_add(gg, EXP_Q[2]).mul_add(gg, 2.0);
    let e = (p / (q - p)).mul_add(2.0, 1.0);
    // n clamped to ±2099 as an int (NaN's conversion is irrelevant: e is NaN then), applied as
    // 2^b · 2^b · 2^b · 2^(n − 3b) with b = n >> 2, so no factor overflows before the product does.
    let ni = (n as i32).clamp(-2099, 2099) as i64;
    let b = ni >> 2;
    let s = pow2(b);
    let r = e * s * s * s * pow2(ni - 3 * b);
    if x > EXP_HI {
        f64::INFINITY
    } else if x < EXP_LO {
        0.0
    } else {
        r
    }
}

const TANH_CLAMP: f64 = f(0x4031B6D58F246197);
const TANH_N: [f64; 9] = [
    f(0x3B3F9F82E5D782DF), f(0x3C2C3C836C04B4C8), f(0x3CEC3379F905E662), f(0x3D929AFF6C8EDD96),
    f(0x3E2525A389DCE7C2), f(0x3EA708819BE51CD9), f(0x3F18996F4026A7FA), f(0x3F787F80B957ED00),
    f(0x3FC36FBA9B450E5A),
];
const TANH_D: [f64; 9] = [
    f(0x3BBE8630CF903250), f(0x3C90AABCA9A5FEA0), f(0x3D4232981AA2BBA8), f(0x3DDEE2F015EA8065),
    f(0x3E681F1947C52304), f(0x3EE26C82AB46D140), f(0x3F4B2E7C4D488C04), f(0x3FA1998830265B50),
    f(0x3FDF0D32A2F7DC79),
];

/// `c[0]·x^n + ... + c[n−1]·x + 1`, each step an fma (XLA's Horner form ending in 1).
#[inline(always)]
fn horner1(c: &[f64], x: f64) -> f64 {
    let mut p = x.mul_add(c[0], c[1]);
    for &k in &c[2..] {
        p = x.mul_add(p, k);
    }
    x.mul_add(p, 1.0)
}

#[inline(always)]
fn expm1_(x: f64) -> f64 {
    let e = exp_(x);
    let h = x * 0.5;
    let t = if h < -TANH_CLAMP { -TANH_CLAMP } else { h };
    let t = if t > TANH_CLAMP { TANH_CLAMP } else { t };
    let t2 = t * t;
    let th = t * horner1(&TANH_N, t2) / horner1(&TANH_D, t2);
    let th = if h.abs() >= 20.0 { 1.0f64.copysign(h) } else { th };
    let r = if x.abs() > 0.5 { e + -1.0 } else { th * (e + 1.0) };
    if h == 0.0 { x } else { r }
}

// Cephes' log1p rational function (the same digits XLA uses for f32, here kept in f64).
const LOG1P_NUM: [f64; 7] = [
    f(0x3F07BC0962B395CA), f(0x3FDFE818A0FE1A83), f(0x401A509F46F4FA53), f(0x403DE9738B8CB9C9),
    f(0x404E798EB86C3351), f(0x404C8E7597479A10), f(0x40340A202D99830A),
];
const LOG1P_DEN: [f64; 7] = [
    1.0, f(0x402E20359E903E37), f(0x4054C30B52213498), f(0x406BB86590FCFB56),
    f(0x407351945DC908A5), f(0x406B0DB13E48E066), f(0x404E0F304466448E),
];
const SQRT2_M1: f64 = f(0x3FDA827999FCEF32);

#[inline(always)]
fn log1p_(x: f64) -> f64 {
    log1p_with(x, false)
}

/// `shared_half`: the caller computes log1p(x) and log1p(−x) together (atanh), where x²·(−½) has two uses,
/// so LLVM leaves that product alone and fuses x³·(P/Q) into the sum instead.
/// log1p's branch for |x| ≥ √2 − 1 (and NaN): the C library's log of 1 + x.
#[inline(always)]
pub fn log1p_large(x: f64) -> f64 {
    (x + 1.0).ln()
}

/// `atanh_` where |x| ≥ √2 − 1 or x is NaN, where both of its log1p's take that branch (the block routines'
/// scalar lanes).
pub fn atanh_large(x: f64) -> f64 {
    let r = (log1p_large(x) - log1p_large(-x)) * 0.5;
    if x.abs() > 1.0 { f64::NAN } else { r }
}

#[inline(always)]
fn log1p_with(x: f64, shared_half: bool) -> f64 {
    let large = log1p_large(x);
    let x2 = x * x;
    // XLA's polynomial starts from 0·x + c0 (not contracted: the product has other uses)
    let z = x * 0.0;
    let mut num = z + LOG1P_NUM[0];
    let mut den = z + LOG1P_DEN[0];
    for i in 1..7 {
        num = num.mul_add(x, LOG1P_NUM[i]);
        den = den.mul_add(x, LOG1P_DEN[i]);
    }
    let small = if shared_half {
        x + (x * x2).mul_add(num / den, x2 * -0.5)
    } else {
        x + x2.mul_add(-0.5, (x * x2) * (num / den))
    };
    if x.abs() < SQRT2_M1 { small } else { large }
}

// Giles (2010), double precision: erf_inv(x) = x·p(z), p of degree 22 for w < 6.25 (z = w − 3.125),
// 18 for w < 16 (z = √w − 3.25), 16 above (z = √w − 5), w = −log1p(−x²). XLA evaluates the three as one
// Horner loop whose coefficients are selected per lane, the short ones stopping early.
const EI_A: [f64; 23] = [
    f(0xBBB135D2E746E627), f(0xBC08DDF93324D327), f(0x3C37B83EEF0B7C9F), f(0x3C69BA72CD589B91),
    f(0xBCA33689090A6B96), f(0x3C782E11898132E0), f(0x3CFDE4ACFD9E26BA), f(0xBD26D33EED66C487),
    f(0xBD36F2167040D8E2), f(0x3D872A22C2D77E20), f(0xBDAC8859C4E5C0AF), f(0xBDCDC583D118A561),
    f(0x3E120F47CCF46B3C), f(0xBE31A9E38DC84D60), f(0xBE5F36CD6D3D46A9), f(0x3E9C6B4F5D03B787),
    f(0xBEB6E8A5434AE8A2), f(0xBEED1D1F7B8736F6), f(0x3F2879C2A212F024), f(0xBF4845769484FCA8),
    f(0xBF78B6C33114F909), f(0x3FCEBD80D9B13E28), f(0x3FFA755E7C99AE86),
];
const EI_B: [f64; 19] = [
    f(0x3E23040F87DBD932), f(0x3E785CBE52878635), f(0xBE92777453DD3955), f(0x3E5395ABCD554C6C),
    f(0x3EB936388A3790AD), f(0xBED0D5DB812B5083), f(0x3EC8860CD5D652F6), f(0x3EEA29A0CACDFB23),
    f(0xBF08CEF1F80281F2), f(0x3F11E684D0B9188A), f(0x3EF932CD54C8A222), f(0xBF37448A89EF8AA3),
    f(0x3F4F3CC55AD40C25), f(0xBF5BA924132F38B1), f(0x3F6468EECA533CF8), f(0xBF6EBADABB891BBD),
    f(0x3F75FFCFE5B76AFC), f(0x3FF0158A6D641D39), f(0x4008ABCC380D5A48),
];
const EI_C: [f64; 17] = [
    f(0xBDBDCEC3A7785389), f(0xBDF18FEEC0E38727), f(0x3E19E6BF2DDA45E3), f(0xBE30468FB24E2F5F),
    f(0x3E405AC6A8FBA182), f(0xBE50102E495FB9C0), f(0x3E5F4C20E1334AF8), f(0xBE722D220FDF9C3E),
    f(0x3E8EBC8BB824CB54), f(0xBEB0A8D40EA372CC), f(0x3ED2FBD29D093D2B), f(0xBEF4A3497E1E0FAC),
    f(0x3F13EBF4EB00938F), f(0xBF2C2F36A8FC5D53), f(0xBF222EA5DF04047C), f(0x3FF02A30D1FBA0DC),
    f(0x4013664DDD1AD7FB),
];

#[inline(always)]
fn erf_inv_(x: f64) -> f64 {
    let w = -log1p_(x * -x);
    let (lt625, lt16) = (w < 6.25, w < 16.0);
    let z = if lt625 { w + -3.125 } else { w.sqrt() - if lt16 { 3.25 } else { 5.0 } };
    let table: &[f64] = if lt625 {
        &EI_A
    } else if lt16 {
        &EI_B
    } else {
        &EI_C
    };
    let mut p = table[0];
    for &c in &table[1..] {
        p = p.mul_add(z, c);
    }
    if x.abs() == 1.0 { x * f64::INFINITY } else { p * x }
}

/// Eigen's rational tanh as XLA:CPU expands f64 `tanh`: the operand clamped to ±TANH_CLAMP, t·P(t²)/Q(t²),
/// ±1 from |x| ≥ 20 (the same steps `expm1_` applies to x/2).
#[inline(always)]
fn tanh_(x: f64) -> f64 {
    let t = if x < -TANH_CLAMP { -TANH_CLAMP } else { x };
    let t = if t > TANH_CLAMP { TANH_CLAMP } else { t };
    let t2 = t * t;
    let th = t * horner1(&TANH_N, t2) / horner1(&TANH_D, t2);
    if x.abs() >= 20.0 { 1.0f64.copysign(x) } else { th }
}

// The rest are JAX's HLO compositions of the functions above (its lowering rules for sinh, cosh, asinh, acosh,
// atanh, exp2, logistic, asin, acos), operation for operation; XLA:CPU contracts none of their products into
// fmas (each product feeds a division, a square root, a select or has other uses).
const LN2: f64 = f(0x3FE62E42FEFA39EF);

/// select(|x| < 1, (e + e/(e + 1))/2 with e = expm1(x), exp(x − ln 2) − exp(−ln 2 − x)).
#[inline(always)]
fn sinh_(x: f64) -> f64 {
    let e = expm1_(x);
    let small = (e + e / (e + 1.0)) * 0.5;
    let large = exp_(x + -LN2) - exp_(-LN2 - x);
    if x.abs() < 1.0 { small } else { large }
}

/// exp(x − ln 2) + exp(−ln 2 − x).
#[inline(always)]
fn cosh_(x: f64) -> f64 {
    exp_(x + -LN2) + exp_(-LN2 - x)
}

/// sign(x)·select(|x| ≥ √max, log|x| + ln 2, log1p(|x| + x²/(√(x² + 1) + 1))).
#[inline(always)]
fn asinh_(x: f64) -> f64 {
    let a = x.abs();
    let x2 = x * x;
    let r = if a >= f(0x5FEFFFFFFFFFFFFF) {
        a.ln() + LN2
    } else {
        log1p_(a + x2 / ((x2 + 1.0).sqrt() + 1.0))
    };
    // sign(x): ±1, ±0 for zeros, NaN for NaN
    let s = if x == 0.0 || x.is_nan() { x } else { 1.0f64.copysign(x) };
    s * r
}

/// select(x ≥ max/2, log x + ln 2, log1p(√(x − 1)·(√(x + 1) + √(x − 1)))).
#[inline(always)]
fn acosh_(x: f64) -> f64 {
    let sm = (x + -1.0).sqrt();
    let small = log1p_(sm * ((x + 1.0).sqrt() + sm));
    if x >= f(0x7FDFFFFFFFFFFFFF) { x.ln() + LN2 } else { small }
}

/// select(|x| > 1, NaN, (log1p(x) − log1p(−x))/2).
#[inline(always)]
fn atanh_(x: f64) -> f64 {
    let r = (log1p_with(x, true) - log1p_with(-x, true)) * 0.5;
    if x.abs() > 1.0 { f64::NAN } else { r }
}

/// exp(x·ln 2).
#[inline(always)]
fn exp2_(x: f64) -> f64 {
    exp_(x * LN2)
}

/// 1/(exp(−x) + 1).
#[inline(always)]
fn logistic_(x: f64) -> f64 {
    1.0 / (exp_(-x) + 1.0)
}

/// 2·atan2(x, 1 + √((1 − x)(1 + x))) with the C library's atan2, which XLA:CPU calls.
#[inline(always)]
fn asin_(x: f64) -> f64 {
    let a = x.atan2(((1.0 - x) * (x + 1.0)).sqrt() + 1.0);
    a + a
}

/// atan2(√((1 − x)(1 + x)), x) with the C library's atan2.
#[inline(always)]
fn acos_(x: f64) -> f64 {
    ((1.0 - x) * (x + 1.0)).sqrt().atan2(x)
}

// The public entry points: on hosts with FMA each is compiled with the instruction enabled (`mul_add` is
// then one vfmadd, else a libm call, slower but the same bits).
macro_rules! entry {
    ($($name:ident => $body:ident),*) => {$(
        pub fn $name(x: f64) -> f64 {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx,fma,sse4.1")]
                unsafe fn fast(x: f64) -> f64 {
                    $body(x)
                }
                if std::is_x86_feature_detected!("fma") {
                    // SAFETY: the features were detected on this host.
                    return unsafe { fast(x) };
                }
            }
            $body(x)
        }
    )*};
}

entry!(exp => exp_, expm1 => expm1_, log1p => log1p_, erf_inv => erf_inv_, tanh => tanh_, sinh => sinh_,
       cosh => cosh_, asinh => asinh_, acosh => acosh_, atanh => atanh_, exp2 => exp2_, logistic => logistic_,
       asin => asin_, acos => acos_);

/// The C library's `cbrt`, which XLA:CPU calls for f64 (glibc's here). Looked up in `libm.so.6` at run time:
/// a plain `extern "C"` declaration binds to the Rust toolchain's own `cbrt` (a port of musl's, whose last
/// bit differs from glibc's on about half of all operands). Elsewhere, or if the lookup fails, `f64::cbrt`.
pub fn cbrt(x: f64) -> f64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::sync::OnceLock;
        static CBRT: OnceLock<Option<extern "C" fn(f64) -> f64>> = OnceLock::new();
        let f = CBRT.get_or_init(|| {
            // SAFETY: dlopen/dlsym with NUL-terminated names; the symbol, if found, is glibc's
            // `double cbrt(double)`, a pure function, and libm stays loaded (cranax links it).
            unsafe {
                let h = libc::dlopen(c"libm.so.6".as_ptr(), libc::RTLD_NOW);
                if h.is_null() {
                    return None;
                }
                let p = libc::dlsym(h, c"cbrt".as_ptr());
                if p.is_null() { None } else { Some(std::mem::transmute::<*mut libc::c_void, extern "C" fn(f64) -> f64>(p)) }
            }
        });
        if let Some(f) = f {
            return f(x);
        }
    }
    x.cbrt()
}

/// 1/√x as XLA:CPU computes f64 `rsqrt` on AVX-512 hosts: the hardware estimate `vrsqrt14sd` (its result is
/// specified bit for bit by Intel), refined by two Newton steps y ← y + (−y/2)·(x·y·y − 1) with fmas, for
/// positive normal x; other operands keep the estimate (±0 → ±inf, +inf → 0, negative → NaN). Elsewhere
/// the correctly rounded sqrt and a division (what this backend did before; XLA's sequence there is
/// unverified).
pub fn rsqrt(x: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,fma")]
        unsafe fn avx512(x: f64) -> f64 {
            use std::arch::x86_64::{_mm_cvtsd_f64, _mm_rsqrt14_sd, _mm_set_sd, _mm_setzero_pd};
            let y = _mm_cvtsd_f64(_mm_rsqrt14_sd(_mm_setzero_pd(), _mm_set_sd(x)));
            if !(x.is_normal() && x > 0.0) {
                return y;
            }
            let newton = |y: f64| (y * -0.5).mul_add((x * y).mul_add(y, -1.0), y);
            newton(newton(y))
        }
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the features were detected on this host.
            return unsafe { avx512(x) };
        }
    }
    1.0 / x.sqrt()
}

// The same steps on vector lanes (`blockmath`'s float64 block routines: f64x8 on AVX-512, f64x4 on AVX2),
// written against `math_f64::Lanes64`: every operation of the scalar function above, in its order, an fma
// exactly where it has `mul_add`, so each lane's bits are the scalar function's (the block routines' Rust
// test compares them on every path, NaNs, infinities, subnormals and zeros included; `exp`'s scaling by 2^n
// is the one place with fewer operations and the same bits: see there). Selects replace the branches;
// branches that every lane can skip (`any`) are skipped whole, which changes no selected lane.
pub(super) mod lanes {
    use super::super::math_f32::Cmp;
    use super::super::math_f64::Lanes64;
    use super::*;

    /// `c[0]·x^n + ... + c[n−1]·x + 1` as `horner1`.
    #[inline(always)]
    fn horner1<L: Lanes64>(l: &mut L, c: &[f64], x: L::F) -> L::F {
        let c0 = l.c(c[0]);
        let c1 = l.c(c[1]);
        let mut p = l.fma(x, c0, c1);
        for &k in &c[2..] {
            let k = l.c(k);
            p = l.fma(x, p, k);
        }
        let one = l.c(1.0);
        l.fma(x, p, one)
    }

    /// `exp_`: the clamps as `minc`/`maxc` (NaN passes both, as `minimum`/`maximum`); n, an integer in
    /// [−1075, 1025] or NaN, scales e as below.
    #[inline(always)]
    pub fn exp<L: Lanes64>(l: &mut L, x: L::F) -> L::F {
        let xc = l.minc(x, EXP_HI);
        let xc = l.maxc(xc, EXP_LO);
        let log2e = l.c(LOG2E);
        let half = l.c(0.5);
        let n = l.fma(xc, log2e, half);
        let n = l.floor(n);
        let g = l.fmac(n, -LN2_HI, xc);
        let g = l.fmac(n, -LN2_LO, g);
        let gg = l.mul(g, g);
        let (p0, p1, one) = (l.c(EXP_P[0]), l.c(EXP_P[1]), l.c(1.0));
        let p = l.fma(gg, p0, p1);
        let p = l.fma(p, gg, one);
        let p = l.mul(p, g);
        let (q0, q1, q2, two) = (l.c(EXP_Q[0]), l.c(EXP_Q[1]), l.c(EXP_Q[2]), l.c(2.0));
        let q = l.fma(gg, q0, q1);
        let q = l.fma(q, gg, q2);
        let q = l.fma(q, gg, two);
        let d = l.sub(q, p);
        let r = l.div(p, d);
        let e = l.fma(r, two, one);
        // e·2^n: the scalar's four factors 2^b, 2^b, 2^b, 2^(n − 3b) (b = n >> 2) leave every product but the
        // last exact (e is in [0.7, 1.5] and |3b| ≤ 807: normal), so it is e·2^n rounded once, subnormal,
        // flushed or overflowing alike. Here two factors, 2^(n − m) and 2^m with m = ⌊n/2⌋: the first product
        // is exact (|n − m| ≤ 538), the second rounds e·2^n once; the same bits in half the operations. A
        // factor's bits come from the float: k + (1.5·2^52 + 1023) holds k + 1023 in its low bits, which
        // the shift by 52 moves into the exponent field. Its mantissa is 0, so no factor is a NaN, and a NaN
        // e (x NaN: n is NaN too) keeps its payload through both products, as through the scalar's.
        let m = l.mulc(n, 0.5);
        let m = l.floor(m);
        let k = l.sub(n, m);
        const BIAS: f64 = 6755399441055744.0 + 1023.0;
        let kb = l.addc(k, BIAS);
        let kb = l.bits(kb);
        let kb = l.shlc(kb, 52);
        let t = l.fbits(kb);
        let mb = l.addc(m, BIAS);
        let mb = l.bits(mb);
        let mb = l.shlc(mb, 52);
        let s = l.fbits(mb);
        let r = l.mul(e, t);
        let r = l.mul(r, s);
        let under = l.cmpc(Cmp::Lt, x, EXP_LO);
        let r = l.selc(under, 0.0, r);
        let over = l.cmpc(Cmp::Gt, x, EXP_HI);
        l.selc(over, f64::INFINITY, r)
    }

    /// Eigen's t·P(t²)/Q(t²) on t = x clamped to ±TANH_CLAMP, ±1 from |x| ≥ 20 (`tanh_`, `expm1_`).
    #[inline(always)]
    fn tanh_core<L: Lanes64>(l: &mut L, x: L::F) -> L::F {
        let t = l.maxc(x, -TANH_CLAMP);
        let t = l.minc(t, TANH_CLAMP);
        let t2 = l.mul(t, t);
        let num = horner1(l, &TANH_N, t2);
        let den = horner1(l, &TANH_D, t2);
        let tn = l.mul(t, num);
        let th = l.div(tn, den);
        let ax = l.abs(x);
        let big = l.cmpc(Cmp::Ge, ax, 20.0);
        let one = l.c(1.0);
        let s = l.copysign(one, x);
        l.sel(big, s, th)
    }

    #[inline(always)]
    pub fn tanh<L: Lanes64>(l: &mut L, x: L::F) -> L::F {
        tanh_core(l, x)
    }

    /// `expm1_`; the tanh side is skipped when every lane has |x| > ½ (two thirds of the vectors of a
    /// uniform [−10, 10]).
    #[inline(always)]
    pub fn expm1<L: Lanes64>(l: &mut L, x: L::F) -> L::F {
        let e = exp(l, x);
        let h = l.mulc(x, 0.5);
        let ax = l.abs(x);
        let large = l.cmpc(Cmp::Gt, ax, 0.5);
        let em = l.addc(e, -1.0);
        if l.all(large) {
            return em;
        }
        let th = tanh_core(l, h);
        let ep = l.addc(e, 1.0);
        let small = l.mul(th, ep);
        let r = l.sel(large, em, small);
        let zero = l.cmpc(Cmp::Eq, h, 0.0);
        l.sel(zero, x, r)
    }

    /// select(|x| < 1, (e + e/(e + 1))/2 with e = expm1(x), exp(x − ln 2) − exp(−ln 2 − x)); a side no lane
    /// takes is skipped.
    #[inline(always)]
    pub fn sinh<L: Lanes64>(l: &mut L, x: L::F) -> L::F {
        let ax = l.abs(x);
        let lt1 = l.cmpc(Cmp::Lt, ax, 1.0);
        let mut small = x;
        if l.any(lt1) {
            let e = expm1(l, x);
            let ep = l.addc(e, 1.0);
            let q = l.div(e, ep);
            let s = l.add(e, q);
            small = l.mulc(s, 0.5);
        }
        if l.all(lt1) {
            return small;
        }
        let large = cosh_parts(l, x, false);
        l.sel(lt1, small, large)
    }

    /// exp(x − ln 2) ± exp(−ln 2 − x).
    #[inline(always)]
    fn cosh_parts<L: Lanes64>(l: &mut L, x: L::F, plus: bool) -> L::F {
        let a = l.addc(x, -LN2);
        let a = exp(l, a);
        let m = l.c(-LN2);
        let b = l.sub(m, x);
        let b = exp(l, b);
        if plus { l.add(a, b) } else { l.sub(a, b) }
    }

    #[inline(always)]
    pub fn cosh<L: Lanes64>(l: &mut L, x: L::F) -> L::F {
        cosh_parts(l, x, true)
    }

    #[inline(always)]
    pub fn exp2<L: Lanes64>(l: &mut L, x: L::F) -> L::F {
        let y = l.mulc(x, LN2);
        exp(l, y)
    }

    /// `log1p_with`'s rational branch on every lane, and the lanes that take the other (|x| ≥ √2 − 1, NaN: the
    /// C library's log of 1 + x, which the caller computes per element).
    #[inline(always)]
    fn log1p_small<L: Lanes64>(l: &mut L, x: L::F, shared_half: bool) -> (L::F, L::M) {
        let x2 = l.mul(x, x);
        let z = l.mulc(x, 0.0);
        let mut num = l.addc(z, LOG1P_NUM[0]);
        let mut den = l.addc(z, LOG1P_DEN[0]);
        for i in 1..7 {
            let (a, b) = (l.c(LOG1P_NUM[i]), l.c(LOG1P_DEN[i]));
            num = l.fma(num, x, a);
            den = l.fma(den, x, b);
        }
        let q = l.div(num, den);
        let xx2 = l.mul(x, x2);
        let t = if shared_half {
            let h = l.mulc(x2, -0.5);
            l.fma(xx2, q, h)
        } else {
            let p = l.mul(xx2, q);
            l.fmac(x2, -0.5, p)
        };
        let small = l.add(x, t);
        let ax = l.abs(x);
        let inside = l.cmpc(Cmp::Lt, ax, SQRT2_M1);
        (small, inside)
    }

    /// `log1p_` on the lanes where it is a rational function (|x| < √2 − 1); the others (`false` in the mask)
    /// are the caller's to compute per element.
    #[inline(always)]
    pub fn log1p<L: Lanes64>(l: &mut L, x: L::F) -> (L::F, L::M) {
        log1p_small(l, x, false)
    }

    /// `atanh_` on the lanes where both log1p's are rational (|x| < √2 − 1), as `log1p`.
    #[inline(always)]
    pub fn atanh<L: Lanes64>(l: &mut L, x: L::F) -> (L::F, L::M) {
        let (a, inside) = log1p_small(l, x, true);
        let nx = l.neg(x);
        let (b, _) = log1p_small(l, nx, true);
        let d = l.sub(a, b);
        (l.mulc(d, 0.5), inside)
    }

    /// 1/(exp(−x) + 1).
    #[inline(always)]
    pub fn logistic<L: Lanes64>(l: &mut L, x: L::F) -> L::F {
        let nx = l.neg(x);
        let e = exp(l, nx);
        let d = l.addc(e, 1.0);
        let one = l.c(1.0);
        l.div(one, d)
    }
}
