//! Math functions. `emit_math` is the one place that lowers them: float32 exp, exp2, expm1, log, log1p,
//! sin, cos, tan, asin, acos, sinh, cosh, tanh, logistic, erf and atan2 are emitted inline as IR by `vmath` (the same
//! code serves vector lanes; see its ulp table); everything else is a call to an imported `extern "C"` Rust
//! function (one per function and float dtype), per lane in vector code.
//!
//! Imported f32 functions that are not plain std calls are evaluated in f64 and rounded once (≤ 1 ulp).
// Published coefficients (Lanczos, Giles) are kept digit for digit.
#![allow(clippy::excessive_precision)]
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use crate::error::{Error, Result};
use crate::ir::{BinaryOp, DType, UnaryOp};

use super::clif::{cl_type, fconst};
use super::math_fn::{Imports, MathFn};
use super::math_xla64;

/// Emits `op(args)` for float dtype `dtype` (integer dtype for `IPow`).
pub fn emit_math(b: &mut FunctionBuilder, imports: &Imports, op: MathFn, dtype: DType, args: &[Value]) -> Result<Value> {
    if args.len() != op.arity() {
        return Err(Error::Codegen(format!("{op:?} takes {} operands, got {}", op.arity(), args.len())));
    }
    if super::vmath::supports(op, dtype) {
        // Out of line (mathlib) when the kernel imported the routine, else inline.
        if let Some(r) = imports.get(&(op, dtype)) {
            let inst = b.ins().call(*r, args);
            return Ok(b.inst_results(inst)[0]);
        }
        return super::vmath::emit(b, imports, op, cl_type(dtype), args);
    }
    match op {
        // f32/f64 rsqrt are imported (XLA's estimate + Newton sequences: `rsqrt_f32`, `math_xla64::rsqrt`) and
        // called below; a dtype without a symbol is `1 / sqrt(x)` inline
        MathFn::Rsqrt if imports.get(&(op, dtype)).is_none() => {
            if !dtype.is_float() {
                return Err(Error::Unsupported(format!("rsqrt on {}", dtype.short_name())));
            }
            let one = fconst(b, dtype, 1.0);
            let s = b.ins().sqrt(args[0]);
            Ok(b.ins().fdiv(one, s))
        }
        _ => {
            let fref = imports
                .get(&(op, dtype))
                .ok_or_else(|| Error::Unsupported(format!("CPU backend: {op:?} on {} is not lowered", dtype.short_name())))?;
            let inst = b.ins().call(*fref, args);
            Ok(b.inst_results(inst)[0])
        }
    }
}

/// float32 `rsqrt` as XLA:CPU computes it (so `jax.random.gamma`'s `c = (1/3) / sqrt(d)`, which XLA rewrites
/// to `(1/3) * rsqrt(d)`, has JAX's bits): the hardware estimate `rsqrtss` (about 12 bits; the same table as
/// `rsqrtps`, which XLA's vector code uses, also on AVX-512 hosts: not `rsqrt14ps`) refined by one
/// Newton-Raphson step whose two multiply-adds LLVM contracts into FMAs; non-positive, subnormal (read as
/// zero) and infinite operands keep the estimate (0 -> inf, negative -> NaN, inf -> 0). Checked equal to
/// JAX 0.10.2's `lax.rsqrt` on 2.1e6 inputs on an AMD EPYC host. The estimate's table is the CPU vendor's
/// (Intel's and AMD's differ), so on another host the result is XLA's there, and may differ from this one
/// in the last bit (within ~2 ulp of the exact value anyway). Without SSE (non-x86 hosts): `1 / sqrt(x)`
/// rounded once. (Called through `symbol_ptr`'s `un!`, which reads a subnormal operand as zero first.)
fn rsqrt_f32(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cvtss_f32, _mm_rsqrt_ss, _mm_set_ss};
        // SAFETY: SSE is part of the x86_64 baseline.
        let y = unsafe { _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(x))) };
        if !(x.is_nan() || (x.is_normal() && x > 0.0)) {
            return y;
        }
        // y + (-y/2) * (x*y*y - 1), as XLA's IR orders it (x*y rounded, then the two FMAs)
        let h = y * -0.5;
        h.mul_add((x * y).mul_add(y, -1.0), y)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (1.0 / (x as f64).sqrt()) as f32
    }
}

/// `x`, or the zero of its sign when `x` is subnormal.
pub(crate) fn daz32(x: f32) -> f32 {
    if x.is_subnormal() { 0.0f32.copysign(x) } else { x }
}

pub(crate) fn daz64(x: f64) -> f64 {
    if x.is_subnormal() { 0.0f64.copysign(x) } else { x }
}

/// Address of the implementation of `f` for `dt`, if there is one.
pub fn symbol_ptr(f: MathFn, dt: DType) -> Option<*const u8> {
    use DType::*;
    // Calls into scalar libraries see subnormal operands as zeros of their sign, as the kernels' own
    // arithmetic does (denormals-are-zero, `fpenv.rs`): their integer paths for subnormals (rescaling by 2^k)
    // would otherwise compute garbage under DAZ.
    macro_rules! un {
        ($e32:expr, $e64:expr) => {{
            extern "C" fn g32(x: f32) -> f32 {
                ($e32)(daz32(x))
            }
            extern "C" fn g64(x: f64) -> f64 {
                ($e64)(daz64(x))
            }
            match dt {
                F32 => Some(g32 as *const u8),
                F64 => Some(g64 as *const u8),
                _ => None,
            }
        }};
    }
    macro_rules! bin {
        ($e32:expr, $e64:expr) => {{
            extern "C" fn g32(x: f32, y: f32) -> f32 {
                ($e32)(daz32(x), daz32(y))
            }
            extern "C" fn g64(x: f64, y: f64) -> f64 {
                ($e64)(daz64(x), daz64(y))
            }
            match dt {
                F32 => Some(g32 as *const u8),
                F64 => Some(g64 as *const u8),
                _ => None,
            }
        }};
    }
    // float64 functions that XLA:CPU calls in the C library or expands itself take the operand's bits, as
    // there: the kernel runs under DAZ as XLA's does, so a subnormal reads as zero in arithmetic, but paths
    // that return x itself (sin, tan, atan, expm1 of tiny x) give the subnormal back, as JAX does.
    macro_rules! un_bits64 {
        ($e32:expr, $e64:expr) => {{
            extern "C" fn g32(x: f32) -> f32 {
                ($e32)(daz32(x))
            }
            extern "C" fn g64(x: f64) -> f64 {
                ($e64)(x)
            }
            match dt {
                F32 => Some(g32 as *const u8),
                F64 => Some(g64 as *const u8),
                _ => None,
            }
        }};
    }
    // Exact operations on the bits (as XLA's): subnormal operands pass through unchanged.
    macro_rules! bin_bits {
        ($e32:expr, $e64:expr) => {{
            extern "C" fn g32(x: f32, y: f32) -> f32 {
                ($e32)(x, y)
            }
            extern "C" fn g64(x: f64, y: f64) -> f64 {
                ($e64)(x, y)
            }
            match dt {
                F32 => Some(g32 as *const u8),
                F64 => Some(g64 as *const u8),
                _ => None,
            }
        }};
    }
    match f {
        // f64 exp, expm1, log1p, erf_inv, tanh, exp2, logistic: XLA:CPU's own sequences; sinh, cosh, asinh,
        // acosh, atanh, asin, acos: JAX's compositions of them (all `math_xla64`); sin, cos, tan, atan, atan2,
        // cbrt, log: the C library's, as XLA calls it. So f64 results are JAX's bits.
        MathFn::Exp => un!(f32::exp, math_xla64::exp),
        MathFn::Exp2 => un_bits64!(f32::exp2, math_xla64::exp2),
        MathFn::Log => un!(f32::ln, f64::ln),
        MathFn::Log1p => un!(f32::ln_1p, math_xla64::log1p),
        MathFn::Expm1 => un_bits64!(f32::exp_m1, math_xla64::expm1),
        MathFn::Tanh => un_bits64!(f32::tanh, math_xla64::tanh),
        MathFn::Sin => un_bits64!(f32::sin, f64::sin),
        MathFn::Cos => un_bits64!(f32::cos, f64::cos),
        // (float32 `tan` is `vmath`'s, the C library's tanf bits)
        MathFn::Tan => un_bits64!(f32::tan, f64::tan),
        MathFn::Cbrt => un_bits64!(f32::cbrt, math_xla64::cbrt),
        MathFn::Asin => un_bits64!(f32::asin, math_xla64::asin),
        MathFn::Acos => un_bits64!(f32::acos, math_xla64::acos),
        MathFn::Atan => un_bits64!(f32::atan, f64::atan),
        MathFn::Sinh => un_bits64!(f32::sinh, math_xla64::sinh),
        MathFn::Cosh => un_bits64!(f32::cosh, math_xla64::cosh),
        MathFn::Asinh => un_bits64!(|x: f32| asinh(x as f64) as f32, math_xla64::asinh),
        MathFn::Acosh => un_bits64!(|x: f32| acosh(x as f64) as f32, math_xla64::acosh),
        MathFn::Atanh => un_bits64!(|x: f32| atanh(x as f64) as f32, math_xla64::atanh),
        MathFn::Logistic => un_bits64!(|x: f32| logistic(x as f64) as f32, math_xla64::logistic),
        MathFn::Erf => un!(|x: f32| erf(x as f64) as f32, erf),
        MathFn::ErfInv => un!(|x: f32| erf_inv(x as f64) as f32, math_xla64::erf_inv),
        MathFn::Ndtri => un!(|x: f32| ndtri(x as f64) as f32, ndtri),
        MathFn::Lgamma => un!(|x: f32| lgamma(x as f64) as f32, lgamma),
        MathFn::Digamma => un!(|x: f32| digamma(x as f64) as f32, digamma),
        // The scalar implementations of the ops lowered as calls (`MathFn::Call`); an op missing here is
        // reported as not lowered when a kernel needs it.
        MathFn::Call(op) => match op {
            UnaryOp::Erfc => un!(|x: f32| erfc(x as f64) as f32, erfc),
            UnaryOp::BesselI0e => un!(|x: f32| bessel_i0e(x as f64) as f32, bessel_i0e),
            UnaryOp::BesselI1e => un!(|x: f32| bessel_i1e(x as f64) as f32, bessel_i1e),
            _ => None,
        },
        // float32: the C library's powf, as XLA calls it (`pow` itself is `vmath`'s)
        MathFn::Call2(BinaryOp::PowLibm) => bin!(f32::powf, f64::powf),
        MathFn::Call2(op) => call2_ptr(op, dt),
        // (through `un!`'s extern "C" wrappers: `math_xla64::rsqrt` is a Rust-ABI function)
        MathFn::Rsqrt => un!(rsqrt_f32, math_xla64::rsqrt),
        MathFn::SinCosBig => match dt {
            F32 => Some(super::vmath::sincos_big_f32 as *const u8),
            _ => None,
        },
        MathFn::TanBig => match dt {
            F32 => Some(super::vmath::tan_big_f32 as *const u8),
            _ => None,
        },
        MathFn::Pow => bin!(f32::powf, f64::powf),
        // f64: the C library's atan2 on the operands' bits, as XLA calls it
        MathFn::Atan2 => match dt {
            F64 => {
                extern "C" fn atan2_64(y: f64, x: f64) -> f64 {
                    y.atan2(x)
                }
                Some(atan2_64 as *const u8)
            }
            _ => bin!(f32::atan2, f64::atan2),
        },
        // Exact on the bits (as XLA's): subnormals pass through unchanged.
        MathFn::Fmod => bin_bits!(|x: f32, y: f32| x % y, |x: f64, y: f64| x % y),
        MathFn::NextAfter => bin_bits!(next_after_f32, next_after_f64),
        MathFn::IPow => {
            extern "C" fn p32(x: i32, y: i32) -> i32 {
                ipow_signed(x as i64, y as i64) as i32
            }
            extern "C" fn pu32(x: u32, y: u32) -> u32 {
                ipow_unsigned(x as u64, y as u64) as u32
            }
            extern "C" fn p64(x: i64, y: i64) -> i64 {
                ipow_signed(x, y)
            }
            match dt {
                I32 => Some(p32 as *const u8),
                U32 => Some(pu32 as *const u8),
                I64 => Some(p64 as *const u8),
                _ => None,
            }
        }
    }
}

/// Every (function, dtype) with an imported implementation: the JIT's symbol table.
pub fn all_symbols() -> Vec<(String, *const u8)> {
    use MathFn::*;
    const ALL: [MathFn; 32] = [
        Exp, Exp2, Log, Log1p, Expm1, Tanh, Sin, Cos, Tan, Logistic, Erf, Cbrt, Asin, Acos, Atan, Sinh, Cosh,
        Asinh, Acosh, Atanh, ErfInv, Ndtri, Lgamma, Digamma, Rsqrt, Pow, Atan2, NextAfter, Fmod, IPow, SinCosBig,
        TanBig,
    ];
    let mut out = Vec::new();
    let calls2 = BinaryOp::ALL.iter().map(|&op| Call2(op));
    for f in ALL.into_iter().chain(UnaryOp::ALL.iter().map(|&op| Call(op))).chain(calls2) {
        for dt in [DType::F32, DType::F64, DType::I32, DType::U32, DType::I64] {
            if let Some(p) = symbol_ptr(f, dt) {
                out.push((f.symbol_name(dt), p));
            }
        }
    }
    // Cranelift's libcalls for `fma` on a host without FMA (its x64 lowering calls these by name): Rust's
    // `mul_add` rounds once (the C library's software fma where the target lacks the instruction)
    extern "C" fn fmaf_sw(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    extern "C" fn fma_sw(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    out.push(("fmaf".to_string(), fmaf_sw as *const u8));
    out.push(("fma".to_string(), fma_sw as *const u8));
    out
}

/// The `extern "C"` entry point of a binary special function on `dt` (f32: evaluated in f64, rounded once).
fn call2_ptr(op: BinaryOp, dt: DType) -> Option<*const u8> {
    macro_rules! entry {
        ($($op:ident => $path:path),*) => {
            match op {
                $(BinaryOp::$op => {
                    extern "C" fn g32(x: f32, y: f32) -> f32 {
                        $path(x as f64, y as f64) as f32
                    }
                    extern "C" fn g64(x: f64, y: f64) -> f64 {
                        $path(x, y)
                    }
                    match dt {
                        DType::F32 => Some(g32 as *const u8),
                        DType::F64 => Some(g64 as *const u8),
                        _ => None,
                    }
                })*
                _ => None,
            }
        };
    }
    use super::special as sp;
    entry!(Igamma => sp::igamma, Igammac => sp::igammac, IgammaGradA => sp::igamma_grad_a,
           RandomGammaGrad => sp::random_gamma_grad, Polygamma => sp::polygamma, Zeta => sp::zeta)
}

// ---------------------------------------------------------------------------------------------------------
// Scalar implementations.

/// Integer power with wrapping multiplication; a negative exponent gives 0 unless |x| == 1 (XLA's rule).
pub fn ipow_signed(x: i64, y: i64) -> i64 {
    if y < 0 {
        return match x {
            1 => 1,
            -1 => if y & 1 == 1 { -1 } else { 1 },
            _ => 0,
        };
    }
    ipow_unsigned(x as u64, y as u64) as i64
}

pub fn ipow_unsigned(mut x: u64, mut y: u64) -> u64 {
    let mut acc: u64 = 1;
    while y > 0 {
        if y & 1 == 1 {
            acc = acc.wrapping_mul(x);
        }
        y >>= 1;
        x = x.wrapping_mul(x);
    }
    acc
}

/// 1 / (1 + exp(-x)), without overflow for large |x|.
pub fn logistic(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

pub fn next_after_f32(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return f32::NAN;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        return f32::from_bits(1).copysign(y);
    }
    let b = x.to_bits();
    let away = (y > x) == (x > 0.0);
    f32::from_bits(if away { b + 1 } else { b - 1 })
}

pub fn next_after_f64(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        return f64::from_bits(1).copysign(y);
    }
    let b = x.to_bits();
    let away = (y > x) == (x > 0.0);
    f64::from_bits(if away { b + 1 } else { b - 1 })
}

// The C library's erf/erfc: XLA:CPU calls them for f64 (so JAX's f64 results are these, bit for bit); glibc's
// and the BSDs' descend from fdlibm's s_erf.c, < 1 ulp.
extern "C" {
    #[link_name = "erf"]
    fn c_erf(x: f64) -> f64;
    #[link_name = "erfc"]
    fn c_erfc(x: f64) -> f64;
}

/// The error function (the C library's, as XLA's f64 `erf`), < 1 ulp in f64.
pub fn erf(x: f64) -> f64 {
    // SAFETY: a pure libm function of one double.
    unsafe { c_erf(x) }
}

/// The complementary error function 1 - erf(x), accurate in the tail (the C library's).
pub fn erfc(x: f64) -> f64 {
    // SAFETY: a pure libm function of one double.
    unsafe { c_erfc(x) }
}

/// c[0] + x*(c[1] + x*(c[2] + ...)) (Horner).
fn poly(x: f64, c: &[f64]) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ci| acc * x + ci)
}

/// The inverse of the standard normal CDF: Cephes' `ndtri` (a rational function of p - ½ in the centre,
/// of 1/√(-2 log p) in the tails; the coefficients are `math_f32`'s). -inf at 0, +inf at 1, NaN outside.
pub fn ndtri(p: f64) -> f64 {
    use super::math_f32::{NDTRI_P0, NDTRI_P1, NDTRI_P2, NDTRI_Q0, NDTRI_Q1, NDTRI_Q2};
    // highest degree first, as Cephes lists them
    let horner = |x: f64, c: &[f64]| c.iter().fold(0.0, |acc, &k| acc * x + k);
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let e2 = (-2.0f64).exp();
    let upper = p > 1.0 - e2;
    let y = if upper { 1.0 - p } else { p };
    if y > e2 {
        let w = y - 0.5;
        let w2 = w * w;
        let x = (w + w * (w2 * horner(w2, &NDTRI_P0) / horner(w2, &NDTRI_Q0))) * (2.0 * std::f64::consts::PI).sqrt();
        return if upper { -x } else { x };
    }
    let z = (-2.0 * y.ln()).sqrt();
    let iz = 1.0 / z;
    let t = if z < 8.0 {
        iz * horner(iz, &NDTRI_P1) / horner(iz, &NDTRI_Q1)
    } else {
        iz * horner(iz, &NDTRI_P2) / horner(iz, &NDTRI_Q2)
    };
    let x = z - z.ln() / z - t;
    if upper { x } else { -x }
}

/// Inverse error function: Giles' single-precision approximation as a start, refined by Halley steps on
/// erf (or erfc in the tail, where 1 - y is exact).
pub fn erf_inv(y: f64) -> f64 {
    if y.is_nan() || !(-1.0..=1.0).contains(&y) {
        return f64::NAN;
    }
    if y == 0.0 {
        return y;
    }
    if y.abs() == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    let a = y.abs();
    let w = -((1.0 - a) * (1.0 + a)).ln();
    let p = if w < 5.0 {
        let w = w - 2.5;
        poly(w, &[
            1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087, -4.39150654e-06,
            -3.5233877e-06, 3.43273939e-07, 2.81022636e-08,
        ])
    } else {
        let w = w.sqrt() - 3.0;
        poly(w, &[
            2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773, -0.00367342844,
            0.00134934322, 0.000100950558, -0.000200214257,
        ])
    };
    let mut x = p * a;
    let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
    for _ in 0..4 {
        // f(x) = erf(x) - a, f' = 2/sqrt(pi) exp(-x^2), Halley: x -= f / (f' + x f).
        let f = if a > 0.5 { (1.0 - a) - erfc(x) } else { erf(x) - a };
        let fp = two_over_sqrt_pi * (-x * x).exp();
        if fp == 0.0 {
            break;
        }
        let dx = f / (fp + x * f);
        if !dx.is_finite() {
            break;
        }
        x -= dx;
        if dx.abs() <= 1e-17 * x.abs() {
            break;
        }
    }
    x.copysign(y)
}

/// sin(pi * x), with the argument reduced exactly first.
fn sin_pi(x: f64) -> f64 {
    let r = x - 2.0 * (x * 0.5).round();
    (std::f64::consts::PI * r).sin()
}

/// tan(pi * x) with exact argument reduction.
fn tan_pi(x: f64) -> f64 {
    let r = x - x.round();
    (std::f64::consts::PI * r).tan()
}

const LANCZOS_G: f64 = 7.0;
const LANCZOS: [f64; 9] = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/// log|Γ(x)| by the Lanczos approximation (g = 7, as XLA), with reflection below 0.5; +inf at the poles.
pub fn lgamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    if x <= 0.0 && x == x.floor() {
        return f64::INFINITY;
    }
    if x < 0.5 {
        let s = sin_pi(x).abs();
        return (std::f64::consts::PI / s).ln() - lgamma(1.0 - x);
    }
    if x == 1.0 || x == 2.0 {
        return 0.0;
    }
    let z = x - 1.0;
    let mut a = LANCZOS[0];
    for (i, &c) in LANCZOS.iter().enumerate().skip(1) {
        a += c / (z + i as f64);
    }
    let t = z + LANCZOS_G + 0.5;
    // (z + 0.5) * ln(t) - t, with ln(t) = ln(g + 0.5) + ln1p(z / (g + 0.5)) for accuracy.
    let log_t = (LANCZOS_G + 0.5).ln() + (z / (LANCZOS_G + 0.5)).ln_1p();
    0.5 * (2.0 * std::f64::consts::PI).ln() + (z + 0.5) * log_t - t + a.ln()
}

/// The digamma function ψ(x) = Γ'(x)/Γ(x): reflection below 0.5, recurrence up to 10, asymptotic series.
/// NaN at the poles (non-positive integers), as XLA.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    if x <= 0.0 && x == x.floor() {
        return f64::NAN;
    }
    let mut r = 0.0;
    let mut x = x;
    if x < 0.5 {
        r -= std::f64::consts::PI / tan_pi(x);
        x = 1.0 - x;
    }
    while x < 10.0 {
        r -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    let series = f
        * (1.0 / 12.0
            - f * (1.0 / 120.0
                - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f * (1.0 / 132.0 - f * (691.0 / 32760.0 - f / 12.0))))));
    r + x.ln() - 0.5 / x - series
}

// std's asinh/acosh square their argument (overflow for |x| > 1e154) and its f32 atanh loses a few ulp near
// ±1; these keep full precision over the whole range (f32 versions evaluate them in f64 and round once).
fn asinh(x: f64) -> f64 {
    let a = x.abs();
    let r = if a > 1e8 {
        a.ln() + std::f64::consts::LN_2
    } else {
        (a + a * a / (1.0 + (1.0 + a * a).sqrt())).ln_1p()
    };
    r.copysign(x)
}

fn acosh(x: f64) -> f64 {
    if x < 1.0 {
        f64::NAN // also for -inf; NaN stays NaN below
    } else if x > 1e8 {
        x.ln() + std::f64::consts::LN_2
    } else {
        let t = x - 1.0;
        (t + (2.0 * t + t * t).sqrt()).ln_1p()
    }
}

fn atanh(x: f64) -> f64 {
    0.5 * (2.0 * x / (1.0 - x)).ln_1p()
}

/// Exponentially scaled modified Bessel functions of the first kind, `e^-|x| I0(x)` (`nu1`: false) and
/// `e^-|x| I1(x)` (true): the power series for |x| < 25, its terms and sum in double-double (the terms near
/// k = |x|/2 dominate and carry k roundings each in plain f64), then one rounding and the scaling; the
/// asymptotic expansion above (its smallest term, ~e^-2|x|, is below 1e-21 there).
fn bessel_ie(x: f64, nu1: bool) -> f64 {
    let a = x.abs();
    if a.is_nan() {
        return x;
    }
    let v = if a == f64::INFINITY {
        0.0
    } else if a < 25.0 {
        // q = a^2 / 4 as a double-double (qh + ql)
        let qh = 0.25 * a * a;
        let ql = (0.25 * a).mul_add(a, -qh);
        let (mut th, mut tl) = (1.0f64, 0.0f64);
        let (mut sh, mut sl) = (1.0f64, 0.0f64);
        for k in 1..200 {
            let d = (k * if nu1 { k + 1 } else { k }) as f64;
            // t *= q, then t /= d (d is an exact integer)
            let p = th * qh;
            let pl = th.mul_add(qh, -p) + (th * ql + tl * qh);
            let (h, l) = (p + pl, pl - ((p + pl) - p));
            let qt = h / d;
            let r = (-qt).mul_add(d, h);
            th = qt;
            tl = (r + l) / d;
            // s += t (two-sum)
            let s = sh + th;
            let bb = s - sh;
            let e = (sh - (s - bb)) + (th - bb);
            sl += e + tl;
            sh = s;
            if th < 1e-20 * sh {
                break;
            }
        }
        let s = (sh + sl) * (-a).exp();
        if nu1 { 0.5 * a * s } else { s }
    } else {
        let mu = if nu1 { 4.0 } else { 0.0 };
        // the terms after the leading 1 summed apart (each addition to ~1 would round at 1's ulp)
        let (mut tail, mut t) = (0.0f64, 1.0f64);
        for k in 1..60 {
            let odd = (2 * k - 1) as f64;
            t *= (odd * odd - mu) / (8.0 * k as f64 * a);
            tail += t;
            if t.abs() < 1e-18 {
                break;
            }
        }
        (1.0 + tail) / (2.0 * std::f64::consts::PI * a).sqrt()
    };
    if nu1 { v.copysign(x) } else { v }
}

pub fn bessel_i0e(x: f64) -> f64 {
    bessel_ie(x, false)
}

pub fn bessel_i1e(x: f64) -> f64 {
    bessel_ie(x, true)
}
