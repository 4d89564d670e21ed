//! Block math routines: `math_f32`'s algorithms compiled ahead of time for 512-bit (AVX-512) or 256-bit
//! (AVX2) lanes, applied to whole arrays: `extern "C" fn(src: *const f32, dst: *mut f32, n: u64)`, and for
//! binary functions (`pow`) `extern "C" fn(a: *const f32, b: *const f32, dst: *mut f32, n: u64)`.
//!
//! Why: Cranelift emits 128-bit vectors only, and a transcendental function is 20-40 dependent
//! operations per vector, so it dominates kernels such as `selu`. Kernels cut their rows into strips, call
//! a block routine per strip for each such function (strip mode: `loop_plan` plans it, `codegen` emits
//! it), and do the rest inline. The routines run the same IEEE operations in the same order as the inline
//! code (see `math_f32`), so results are bit-identical whichever path computes an element.
//!
//! `stream` copies a strip of 32-bit values to memory with non-temporal stores: kernels whose outputs are
//! too large to stay in cache write them that way (no read-for-ownership of the destination lines, which
//! costs as much memory traffic as the writes themselves).
//!
//! Which lanes: AVX-512F when the host has it, else AVX2, both only with FMA (the inline code fuses
//! exactly when the host has FMA). `CRANAX_CPU_BLOCK_MATH=avx512|avx2|off` overrides the choice (a
//! choice the host lacks falls back to the next one); other architectures have none. `avx2` also hides
//! AVX-512 from the libraries' own dispatch (faer, gemm, Cranelift's flags) at import: `host_simd`.
// The x86 kernels are cfg-gated out elsewhere: what only they use is dead there, not wrong.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_mut, unused_variables, unused_macros, unreachable_code))]
use std::sync::OnceLock;

use super::math_fn::MathFn;

/// Functions with block routines (all f32 in and out). The first `F32_FUNCTIONS` run `math_f32` on f32
/// lanes except `Sin` and `Cos` (`math_f64::sincosf`: the C library's double-precision steps, JAX's bits) and
/// `Tan` (`math_f64::tanf_reduce` on f64 lanes, then `math_f32::tanf_kernel` on the f32 lanes: `tanf`'s bits);
/// those two, `Lgamma` and `Digamma` run `math_f64` on f64 lanes (8 per AVX-512 vector, 4 per AVX2 one,
/// against Cranelift's 2), each f32 widened exactly and the result rounded once, as the inline code does.
pub const FUNCTIONS: [MathFn; 22] = [
    MathFn::Exp, MathFn::Exp2, MathFn::Expm1, MathFn::Log, MathFn::Log1p, MathFn::Tanh, MathFn::Logistic, MathFn::Erf,
    MathFn::Sin, MathFn::Cos, MathFn::Tan, MathFn::Atan, MathFn::ErfInv, MathFn::Ndtri, MathFn::Sinh, MathFn::Cosh,
    MathFn::Asin, MathFn::Acos, MathFn::Asinh, MathFn::Atanh, MathFn::Lgamma, MathFn::Digamma,
];

/// How many of `FUNCTIONS` (the first ones) compute in f32 lanes, `Sin` and `Cos` aside.
#[cfg(target_arch = "x86_64")]
const F32_FUNCTIONS: usize = 20;

/// The lane width block routines use on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Avx512,
    Avx2,
}

/// The block routines' lanes on this host, or `None` (then kernels compute everything inline).
pub fn isa() -> Option<Isa> {
    static ISA: OnceLock<Option<Isa>> = OnceLock::new();
    *ISA.get_or_init(|| {
        let want = std::env::var("CRANAX_CPU_BLOCK_MATH").unwrap_or_default().to_ascii_lowercase();
        detect(&want)
    })
}

#[cfg(target_arch = "x86_64")]
fn detect(want: &str) -> Option<Isa> {
    // The inline code must fuse where the routines do.
    if want == "off" || !super::vmath::host_fma() {
        return None;
    }
    let avx512 = std::is_x86_feature_detected!("avx512f");
    let avx2 = std::is_x86_feature_detected!("avx2");
    match want {
        "avx2" if avx2 => Some(Isa::Avx2),
        _ if avx512 => Some(Isa::Avx512),
        _ if avx2 => Some(Isa::Avx2),
        _ => None,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect(_want: &str) -> Option<Isa> {
    None
}

/// Binary functions with block routines (`BlockFn2`): `dst[i] = f(a[i], b[i])`. float32 `pow` must give the
/// C library's `powf` bits, as XLA:CPU calls it (JAX's bits; the inline code calls it per lane; `math_f32::pow`,
/// f32 lanes, is not wired for that reason). glibc's `powf` is not correctly rounded (about 6.5e-4 of random
/// pairs are 1 ulp off), so f64 lanes alone cannot give its bits: the routines (`x86::pow_entry512` /
/// `pow_entry256`) compute 2^(y·log2 x) in f64x8 / f64x4 lanes (`math_f64::pow_core`), list the lanes near a
/// float32 rounding midpoint (~2.4% of random pairs) and the C library's special cases, and call `powf` on
/// those after the vector pass. powf's bits on 1e7 random pairs (the test); 1e6 pairs on one core: 1.2 ms
/// (AVX-512) and 2.7 ms (AVX2) against 3.6 ms for the `powf` loop (`pow_strip`). h-pow13's first version
/// was only 7% faster: a branch and `powf` calls inside the vector loop (a third of the vectors at random,
/// each call spilling the vector registers) and twice the operations (fdlibm's log, a 13-term exp,
/// constants rebroadcast after each call).
///
/// float32 `atan2` runs `math_f32::atan2` (the inline code's steps: `atan2f`'s bits) on 16 or 8 f32 lanes.
pub const BINARY: [MathFn; 2] = [MathFn::Pow, MathFn::Atan2];

/// The `powf` loop the routines are checked and timed against: `powf` with subnormal operands read as zeros
/// of their sign, as `math::symbol_ptr`'s wrapper calls it from the inline code (the bits the routines give).
#[cfg(test)]
unsafe extern "C" fn pow_strip(a: *const f32, b: *const f32, dst: *mut f32, n: u64) {
    use super::math::daz32;
    for i in 0..n as usize {
        // SAFETY: the caller passes arrays of n elements (`dst` may be `a` or `b`: each element is read first).
        unsafe { *dst.add(i) = daz32(*a.add(i)).powf(daz32(*b.add(i))) };
    }
}

/// Whether `f` has a block routine on this host.
pub fn supports(f: MathFn) -> bool {
    isa().is_some() && (FUNCTIONS.contains(&f) || BINARY.contains(&f))
}

/// The symbol kernels import `f`'s routine by.
pub fn symbol(f: MathFn) -> String {
    format!("cranax_block_{}_f32", format!("{f:?}").to_lowercase())
}

/// A block routine: `dst[i] = f(src[i])` for `i < n`; `src == dst` is allowed.
pub type BlockFn = unsafe extern "C" fn(*const f32, *mut f32, u64);

/// A binary block routine: `dst[i] = f(a[i], b[i])` for `i < n`; `dst` may be `a` or `b`.
pub type BlockFn2 = unsafe extern "C" fn(*const f32, *const f32, *mut f32, u64);

/// Binary `f`'s routine for this host's lanes.
pub fn routine2(f: MathFn) -> Option<BlockFn2> {
    #[cfg(target_arch = "x86_64")]
    {
        Some(match (f, isa()?) {
            (MathFn::Pow, Isa::Avx512) => x86::pow_entry512 as BlockFn2,
            (MathFn::Pow, Isa::Avx2) => x86::pow_entry256 as BlockFn2,
            (MathFn::Atan2, Isa::Avx512) => x86::atan2_entry512 as BlockFn2,
            (MathFn::Atan2, Isa::Avx2) => x86::atan2_entry256 as BlockFn2,
            _ => return None,
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = f;
        None
    }
}

/// `f`'s routine for this host's lanes.
pub fn routine(f: MathFn) -> Option<BlockFn> {
    #[cfg(target_arch = "x86_64")]
    {
        let i = FUNCTIONS.iter().position(|&g| g == f)?;
        match isa()? {
            Isa::Avx512 => Some(x86::AVX512[i]),
            Isa::Avx2 => Some(x86::AVX2[i]),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = f;
        None
    }
}

/// float64 functions with block routines (f64 in and out, `BlockFn64`): `math_xla64`'s steps (XLA:CPU's own
/// sequences and JAX's compositions of them) on f64x8 (AVX-512) or f64x4 (AVX2) lanes, `math_xla64::lanes`,
/// bit for bit the scalar functions the inline code calls per lane (Cranelift's f64x2 code has no vector
/// versions: one call per element). The functions XLA:CPU takes from the C library (sin, cos, tan, atan,
/// atan2, cbrt, log) and those JAX composes of them (asinh, acosh, asin, acos, erf_inv) stay per element:
/// glibc's steps are not ours to copy. `log1p` and `atanh` are XLA's rational function below √2 − 1 and the C
/// library's log above: their routines compute the first on the vector lanes, list the elements above (and
/// NaNs), and then call the C library's `log` for just those (`F64_WHOLE`; `math_xla64::log1p_large`,
/// `atanh_large`). The functions without branches run two vectors per step (`lanes_pair`).
pub const FUNCTIONS64: [MathFn; 9] = [
    MathFn::Exp, MathFn::Expm1, MathFn::Tanh, MathFn::Logistic, MathFn::Sinh, MathFn::Cosh, MathFn::Exp2,
    MathFn::Log1p, MathFn::Atanh,
];

/// How many of `FUNCTIONS64` (the first ones) are vector code on every lane.
#[cfg(target_arch = "x86_64")]
const F64_WHOLE: usize = 7;

/// A float64 block routine: `dst[i] = f(src[i])` for `i < n`; `src == dst` is allowed.
pub type BlockFn64 = unsafe extern "C" fn(*const f64, *mut f64, u64);

/// Whether float64 `f` has a block routine on this host.
pub fn supports64(f: MathFn) -> bool {
    isa().is_some() && FUNCTIONS64.contains(&f)
}

/// The symbol kernels import float64 `f`'s routine by.
pub fn symbol64(f: MathFn) -> String {
    format!("cranax_block_{}_f64", format!("{f:?}").to_lowercase())
}

/// float64 `f`'s routine for this host's lanes.
pub fn routine64(f: MathFn) -> Option<BlockFn64> {
    #[cfg(target_arch = "x86_64")]
    {
        let i = FUNCTIONS64.iter().position(|&g| g == f)?;
        match isa()? {
            Isa::Avx512 => Some(x86::AVX512_64[i]),
            Isa::Avx2 => Some(x86::AVX2_64[i]),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = f;
        None
    }
}

/// The symbol of the streaming copy.
pub const STREAM_SYMBOL: &str = "cranax_block_stream32";

/// The symbol of the store fence a kernel that streams calls before it returns.
pub const FENCE_SYMBOL: &str = "cranax_block_sfence";

/// The streaming copy for this host's lanes: `dst[i] = src[i]` (32-bit values, bits unchanged) for
/// `i < n` with non-temporal stores. They are weakly ordered: the kernel calls `fence` once before it
/// returns (a fence per strip would wait for each strip's writes to reach memory). `dst` must be 4-byte
/// aligned.
pub fn stream() -> Option<BlockFn> {
    #[cfg(target_arch = "x86_64")]
    {
        match isa()? {
            Isa::Avx512 => Some(x86::STREAM512),
            Isa::Avx2 => Some(x86::STREAM256),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// (symbol, address) of every routine, for the JIT's symbol table.
pub fn symbols() -> Vec<(String, *const u8)> {
    let mut v: Vec<(String, *const u8)> =
        FUNCTIONS.iter().filter_map(|&f| routine(f).map(|r| (symbol(f), r as *const u8))).collect();
    v.extend(BINARY.iter().filter_map(|&f| routine2(f).map(|r| (symbol(f), r as *const u8))));
    v.extend(FUNCTIONS64.iter().filter_map(|&f| routine64(f).map(|r| (symbol64(f), r as *const u8))));
    if let Some(h) = super::threefry::routine() {
        v.push((super::threefry::SYMBOL.to_string(), h as *const u8));
    }
    if let Some(s) = stream() {
        v.push((STREAM_SYMBOL.to_string(), s as *const u8));
        #[cfg(target_arch = "x86_64")]
        v.push((FENCE_SYMBOL.to_string(), x86::FENCE as *const u8));
    }
    v
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::super::math_f32::{self as m, Cmp, ICmp, Lanes};
    use super::super::lanes_pair::Two;
    use super::super::math_f64::{self as m64, Lanes64};
    use super::{BlockFn, BlockFn64, F32_FUNCTIONS, F64_WHOLE};

    /// `FUNCTIONS[i]` on lanes `L`.
    #[inline(always)]
    fn apply<L: Lanes, const F: usize>(l: &mut L, x: L::F) -> L::F {
        match F {
            0 => m::exp(l, x),
            1 => m::exp2(l, x),
            2 => m::expm1(l, x),
            3 => m::log(l, x),
            4 => m::log1p(l, x),
            5 => m::tanh(l, x),
            6 => m::logistic(l, x),
            7 => m::erf(l, x),
            // (8 and 9, sin and cos, run on f64 lanes: `apply64`)
            // (10, tan, reduces on f64 lanes: `tan512` / `tan256`)
            TAN => x,
            11 => m::atan(l, x),
            12 => m::erf_inv(l, x),
            13 => m::ndtri(l, x),
            14 => m::sinh(l, x),
            15 => m::cosh(l, x),
            16 => m::asin(l, x),
            17 => m::acos(l, x),
            18 => m::asinh(l, x),
            _ => m::atanh(l, x),
        }
    }

    /// 16 f32 lanes; masks are `__mmask16`.
    struct Avx512;

    // SAFETY (every `unsafe` block below): the intrinsics need AVX-512F, and these methods are only
    // reached from `block512`, which has that target feature and is only called when the host has it.
    impl Lanes for Avx512 {
        type F = __m512;
        /// max then min: two ops for the default's compare/select pairs, bit-identical to them (`maxps(l, x)`
        /// is `l > x ? l : x`, `minps(h, t)` is `h < t ? h : t`: NaN `x` passes through either way).
        #[inline(always)]
        fn clamp(&mut self, x: __m512, lo: f64, hi: f64) -> __m512 {
            unsafe { _mm512_min_ps(_mm512_set1_ps(hi as f32), _mm512_max_ps(_mm512_set1_ps(lo as f32), x)) }
        }
        type I = __m512i;
        type M = __mmask16;
        #[inline(always)]
        fn c(&mut self, v: f64) -> __m512 {
            unsafe { _mm512_set1_ps(v as f32) }
        }
        #[inline(always)]
        fn add(&mut self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(&mut self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(&mut self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_mul_ps(a, b) }
        }
        #[inline(always)]
        fn div(&mut self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_div_ps(a, b) }
        }
        #[inline(always)]
        fn fma(&mut self, a: __m512, b: __m512, c: __m512) -> __m512 {
            unsafe { _mm512_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn abs(&mut self, x: __m512) -> __m512 {
            let i = self.bits(x);
            let i = self.iandc(i, 0x7fff_ffff);
            self.fbits(i)
        }
        #[inline(always)]
        fn neg(&mut self, x: __m512) -> __m512 {
            unsafe { _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32(i32::MIN))) }
        }
        #[inline(always)]
        fn cmp(&mut self, cc: Cmp, a: __m512, b: __m512) -> __mmask16 {
            unsafe {
                match cc {
                    Cmp::Lt => _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b),
                    Cmp::Gt => _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b),
                    Cmp::Ge => _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, b),
                    Cmp::Eq => _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b),
                    Cmp::Unord => _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, b),
                }
            }
        }
        #[inline(always)]
        fn icmpc(&mut self, cc: ICmp, a: __m512i, c: i64) -> __mmask16 {
            unsafe {
                let c = _mm512_set1_epi32(c as i32);
                match cc {
                    ICmp::Ge => _mm512_cmpge_epi32_mask(a, c),
                    ICmp::Lt => _mm512_cmplt_epi32_mask(a, c),
                }
            }
        }
        #[inline(always)]
        fn mand(&mut self, a: __mmask16, b: __mmask16) -> __mmask16 {
            a & b
        }
        // `any` keeps the default (always true): skipping ndtri's far tail per 16-lane vector measured 5%
        // slower here (the branch splits the two-vector loop's interleaved chains), against 14% faster on
        // AVX2's 8 lanes.
        #[inline(always)]
        fn all(&mut self, m: __mmask16) -> bool {
            m == 0xffff
        }
        #[inline(always)]
        fn any_rare(&mut self, m: __mmask16) -> bool {
            m != 0
        }
        #[inline(always)]
        fn sel(&mut self, m: __mmask16, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_mask_blend_ps(m, b, a) }
        }
        #[inline(always)]
        fn bits(&mut self, x: __m512) -> __m512i {
            unsafe { _mm512_castps_si512(x) }
        }
        #[inline(always)]
        fn fbits(&mut self, i: __m512i) -> __m512 {
            unsafe { _mm512_castsi512_ps(i) }
        }
        #[inline(always)]
        fn iaddc(&mut self, a: __m512i, c: i64) -> __m512i {
            unsafe { _mm512_add_epi32(a, _mm512_set1_epi32(c as i32)) }
        }
        #[inline(always)]
        fn isub(&mut self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_sub_epi32(a, b) }
        }
        #[inline(always)]
        fn iandc(&mut self, a: __m512i, c: i64) -> __m512i {
            unsafe { _mm512_and_si512(a, _mm512_set1_epi32(c as i32)) }
        }
        #[inline(always)]
        fn shlc(&mut self, a: __m512i, n: u32) -> __m512i {
            unsafe { _mm512_sll_epi32(a, _mm_cvtsi32_si128(n as i32)) }
        }
        #[inline(always)]
        fn sshrc(&mut self, a: __m512i, n: u32) -> __m512i {
            unsafe { _mm512_sra_epi32(a, _mm_cvtsi32_si128(n as i32)) }
        }
        #[inline(always)]
        fn to_float(&mut self, i: __m512i) -> __m512 {
            unsafe { _mm512_cvtepi32_ps(i) }
        }
        #[inline(always)]
        fn sqrt(&mut self, x: __m512) -> __m512 {
            unsafe { _mm512_sqrt_ps(x) }
        }
        #[inline(always)]
        fn floor(&mut self, x: __m512) -> __m512 {
            unsafe { _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(x) }
        }
        #[inline(always)]
        fn copysign(&mut self, a: __m512, s: __m512) -> __m512 {
            let ab = self.bits(a);
            let sb = self.bits(s);
            let ab = self.iandc(ab, 0x7fff_ffff);
            let sb = self.iandc(sb, 0x8000_0000);
            unsafe { _mm512_castsi512_ps(_mm512_or_si512(ab, sb)) }
        }
    }

    /// 8 f32 lanes; masks are all-ones / all-zeros float lanes.
    struct Avx2;

    // SAFETY (every `unsafe` block below): the intrinsics need AVX2 (and FMA for `fma`); these methods are
    // only reached from `block256`, which has those target features and is only called when the host
    // has them.
    impl Lanes for Avx2 {
        type F = __m256;
        /// max then min: two ops for the default's compare/select pairs, bit-identical to them (`maxps(l, x)`
        /// is `l > x ? l : x`, `minps(h, t)` is `h < t ? h : t`: NaN `x` passes through either way).
        #[inline(always)]
        fn clamp(&mut self, x: __m256, lo: f64, hi: f64) -> __m256 {
            unsafe { _mm256_min_ps(_mm256_set1_ps(hi as f32), _mm256_max_ps(_mm256_set1_ps(lo as f32), x)) }
        }
        type I = __m256i;
        type M = __m256;
        #[inline(always)]
        fn c(&mut self, v: f64) -> __m256 {
            unsafe { _mm256_set1_ps(v as f32) }
        }
        #[inline(always)]
        fn add(&mut self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(&mut self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(&mut self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_mul_ps(a, b) }
        }
        #[inline(always)]
        fn div(&mut self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_div_ps(a, b) }
        }
        #[inline(always)]
        fn fma(&mut self, a: __m256, b: __m256, c: __m256) -> __m256 {
            unsafe { _mm256_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn abs(&mut self, x: __m256) -> __m256 {
            let i = self.bits(x);
            let i = self.iandc(i, 0x7fff_ffff);
            self.fbits(i)
        }
        #[inline(always)]
        fn neg(&mut self, x: __m256) -> __m256 {
            unsafe { _mm256_xor_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(i32::MIN))) }
        }
        #[inline(always)]
        fn cmp(&mut self, cc: Cmp, a: __m256, b: __m256) -> __m256 {
            unsafe {
                match cc {
                    Cmp::Lt => _mm256_cmp_ps::<_CMP_LT_OQ>(a, b),
                    Cmp::Gt => _mm256_cmp_ps::<_CMP_GT_OQ>(a, b),
                    Cmp::Ge => _mm256_cmp_ps::<_CMP_GE_OQ>(a, b),
                    Cmp::Eq => _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b),
                    Cmp::Unord => _mm256_cmp_ps::<_CMP_UNORD_Q>(a, b),
                }
            }
        }
        #[inline(always)]
        fn icmpc(&mut self, cc: ICmp, a: __m256i, c: i64) -> __m256 {
            unsafe {
                let c = _mm256_set1_epi32(c as i32);
                let lt = _mm256_cmpgt_epi32(c, a);
                let r = match cc {
                    ICmp::Lt => lt,
                    ICmp::Ge => _mm256_xor_si256(lt, _mm256_set1_epi32(-1)),
                };
                _mm256_castsi256_ps(r)
            }
        }
        #[inline(always)]
        fn mand(&mut self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_and_ps(a, b) }
        }
        #[inline(always)]
        fn any(&mut self, m: __m256) -> bool {
            unsafe { _mm256_movemask_ps(m) != 0 }
        }
        #[inline(always)]
        fn any_rare(&mut self, m: __m256) -> bool {
            unsafe { _mm256_movemask_ps(m) != 0 }
        }
        #[inline(always)]
        fn all(&mut self, m: __m256) -> bool {
            unsafe { _mm256_movemask_ps(m) == 0xff }
        }
        #[inline(always)]
        fn sel(&mut self, m: __m256, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_blendv_ps(b, a, m) }
        }
        #[inline(always)]
        fn bits(&mut self, x: __m256) -> __m256i {
            unsafe { _mm256_castps_si256(x) }
        }
        #[inline(always)]
        fn fbits(&mut self, i: __m256i) -> __m256 {
            unsafe { _mm256_castsi256_ps(i) }
        }
        #[inline(always)]
        fn iaddc(&mut self, a: __m256i, c: i64) -> __m256i {
            unsafe { _mm256_add_epi32(a, _mm256_set1_epi32(c as i32)) }
        }
        #[inline(always)]
        fn isub(&mut self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_sub_epi32(a, b) }
        }
        #[inline(always)]
        fn iandc(&mut self, a: __m256i, c: i64) -> __m256i {
            unsafe { _mm256_and_si256(a, _mm256_set1_epi32(c as i32)) }
        }
        #[inline(always)]
        fn shlc(&mut self, a: __m256i, n: u32) -> __m256i {
            unsafe { _mm256_sll_epi32(a, _mm_cvtsi32_si128(n as i32)) }
        }
        #[inline(always)]
        fn sshrc(&mut self, a: __m256i, n: u32) -> __m256i {
            unsafe { _mm256_sra_epi32(a, _mm_cvtsi32_si128(n as i32)) }
        }
        #[inline(always)]
        fn to_float(&mut self, i: __m256i) -> __m256 {
            unsafe { _mm256_cvtepi32_ps(i) }
        }
        #[inline(always)]
        fn sqrt(&mut self, x: __m256) -> __m256 {
            unsafe { _mm256_sqrt_ps(x) }
        }
        #[inline(always)]
        fn floor(&mut self, x: __m256) -> __m256 {
            unsafe { _mm256_round_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(x) }
        }
        #[inline(always)]
        fn copysign(&mut self, a: __m256, s: __m256) -> __m256 {
            let ab = self.bits(a);
            let sb = self.bits(s);
            let ab = self.iandc(ab, 0x7fff_ffff);
            let sb = self.iandc(sb, 0x8000_0000);
            unsafe { _mm256_castsi256_ps(_mm256_or_si256(ab, sb)) }
        }
    }

    /// 8 f64 lanes (i64 integer lanes); masks are `__mmask8`. For `math_f64` only.
    struct Avx512F64;

    // SAFETY (every `unsafe` block below): the intrinsics need AVX-512F; these methods are only reached
    // from `block512_f64`, which has that target feature and is only called when the host has it.
    impl Lanes for Avx512F64 {
        type F = __m512d;
        type I = __m512i;
        type M = __mmask8;
        #[inline(always)]
        fn c(&mut self, v: f64) -> __m512d {
            unsafe { _mm512_set1_pd(v) }
        }
        #[inline(always)]
        fn add(&mut self, a: __m512d, b: __m512d) -> __m512d {
            unsafe { _mm512_add_pd(a, b) }
        }
        #[inline(always)]
        fn sub(&mut self, a: __m512d, b: __m512d) -> __m512d {
            unsafe { _mm512_sub_pd(a, b) }
        }
        #[inline(always)]
        fn mul(&mut self, a: __m512d, b: __m512d) -> __m512d {
            unsafe { _mm512_mul_pd(a, b) }
        }
        #[inline(always)]
        fn div(&mut self, a: __m512d, b: __m512d) -> __m512d {
            unsafe { _mm512_div_pd(a, b) }
        }
        #[inline(always)]
        fn fma(&mut self, a: __m512d, b: __m512d, c: __m512d) -> __m512d {
            unsafe { _mm512_fmadd_pd(a, b, c) }
        }
        #[inline(always)]
        fn abs(&mut self, x: __m512d) -> __m512d {
            let i = self.bits(x);
            let i = self.iandc(i, 0x7fff_ffff_ffff_ffff);
            self.fbits(i)
        }
        #[inline(always)]
        fn neg(&mut self, x: __m512d) -> __m512d {
            unsafe { _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), _mm512_set1_epi64(i64::MIN))) }
        }
        #[inline(always)]
        fn cmp(&mut self, cc: Cmp, a: __m512d, b: __m512d) -> __mmask8 {
            unsafe {
                match cc {
                    Cmp::Lt => _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, b),
                    Cmp::Gt => _mm512_cmp_pd_mask::<_CMP_GT_OQ>(a, b),
                    Cmp::Ge => _mm512_cmp_pd_mask::<_CMP_GE_OQ>(a, b),
                    Cmp::Eq => _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, b),
                    Cmp::Unord => _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(a, b),
                }
            }
        }
        #[inline(always)]
        fn icmpc(&mut self, cc: ICmp, a: __m512i, c: i64) -> __mmask8 {
            unsafe {
                let c = _mm512_set1_epi64(c);
                match cc {
                    ICmp::Ge => _mm512_cmpge_epi64_mask(a, c),
                    ICmp::Lt => _mm512_cmplt_epi64_mask(a, c),
                }
            }
        }
        #[inline(always)]
        fn mand(&mut self, a: __mmask8, b: __mmask8) -> __mmask8 {
            a & b
        }
        #[inline(always)]
        fn any(&mut self, m: __mmask8) -> bool {
            m != 0
        }
        #[inline(always)]
        fn all(&mut self, m: __mmask8) -> bool {
            m == 0xff
        }
        #[inline(always)]
        fn sel(&mut self, m: __mmask8, a: __m512d, b: __m512d) -> __m512d {
            unsafe { _mm512_mask_blend_pd(m, b, a) }
        }
        #[inline(always)]
        fn bits(&mut self, x: __m512d) -> __m512i {
            unsafe { _mm512_castpd_si512(x) }
        }
        #[inline(always)]
        fn fbits(&mut self, i: __m512i) -> __m512d {
            unsafe { _mm512_castsi512_pd(i) }
        }
        #[inline(always)]
        fn iaddc(&mut self, a: __m512i, c: i64) -> __m512i {
            unsafe { _mm512_add_epi64(a, _mm512_set1_epi64(c)) }
        }
        #[inline(always)]
        fn isub(&mut self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_sub_epi64(a, b) }
        }
        #[inline(always)]
        fn iandc(&mut self, a: __m512i, c: i64) -> __m512i {
            unsafe { _mm512_and_si512(a, _mm512_set1_epi64(c)) }
        }
        #[inline(always)]
        fn shlc(&mut self, a: __m512i, n: u32) -> __m512i {
            unsafe { _mm512_sll_epi64(a, _mm_cvtsi32_si128(n as i32)) }
        }
        #[inline(always)]
        fn sshrc(&mut self, a: __m512i, n: u32) -> __m512i {
            unsafe { _mm512_sra_epi64(a, _mm_cvtsi32_si128(n as i32)) }
        }
        #[inline(always)]
        fn to_float(&mut self, i: __m512i) -> __m512d {
            // (No AVX-512DQ conversion assumed; the f64 algorithms do not convert integers.)
            let mut a = [0i64; 8];
            unsafe { _mm512_storeu_si512(a.as_mut_ptr().cast(), i) };
            let f = a.map(|v| v as f64);
            unsafe { _mm512_loadu_pd(f.as_ptr()) }
        }
        #[inline(always)]
        fn sqrt(&mut self, x: __m512d) -> __m512d {
            unsafe { _mm512_sqrt_pd(x) }
        }
        #[inline(always)]
        fn floor(&mut self, x: __m512d) -> __m512d {
            unsafe { _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(x) }
        }
        #[inline(always)]
        fn copysign(&mut self, a: __m512d, s: __m512d) -> __m512d {
            let ab = self.bits(a);
            let sb = self.bits(s);
            let ab = self.iandc(ab, 0x7fff_ffff_ffff_ffff);
            let sb = self.iandc(sb, i64::MIN);
            unsafe { _mm512_castsi512_pd(_mm512_or_si512(ab, sb)) }
        }
    }

    impl Lanes64 for Avx512F64 {
        #[inline(always)]
        fn nearest(&mut self, x: __m512d) -> __m512d {
            unsafe { _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x) }
        }
        #[inline(always)]
        fn trunc(&mut self, x: __m512d) -> __m512d {
            unsafe { _mm512_roundscale_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(x) }
        }

        #[inline(always)]
        fn mor(&mut self, a: __mmask8, b: __mmask8) -> __mmask8 {
            a | b
        }
        #[inline(always)]
        fn ushrc(&mut self, a: __m512i, n: u32) -> __m512i {
            unsafe { _mm512_srl_epi64(a, _mm_cvtsi32_si128(n as i32)) }
        }
        #[inline(always)]
        fn maxc(&mut self, a: __m512d, c: f64) -> __m512d {
            unsafe { _mm512_max_pd(_mm512_set1_pd(c), a) }
        }
        #[inline(always)]
        fn minc(&mut self, a: __m512d, c: f64) -> __m512d {
            unsafe { _mm512_min_pd(_mm512_set1_pd(c), a) }
        }
    }

    /// 4 f64 lanes (i64 integer lanes); masks are all-ones / all-zeros float lanes. For `math_f64` only,
    /// as `Avx512F64`.
    struct Avx2F64;

    // SAFETY (every `unsafe` block below): the intrinsics need AVX2 (and FMA for `fma`); these methods are
    // only reached from `block256_f64`, which has those target features and is only called when the host
    // has them.
    impl Lanes for Avx2F64 {
        type F = __m256d;
        type I = __m256i;
        type M = __m256d;
        #[inline(always)]
        fn c(&mut self, v: f64) -> __m256d {
            unsafe { _mm256_set1_pd(v) }
        }
        #[inline(always)]
        fn add(&mut self, a: __m256d, b: __m256d) -> __m256d {
            unsafe { _mm256_add_pd(a, b) }
        }
        #[inline(always)]
        fn sub(&mut self, a: __m256d, b: __m256d) -> __m256d {
            unsafe { _mm256_sub_pd(a, b) }
        }
        #[inline(always)]
        fn mul(&mut self, a: __m256d, b: __m256d) -> __m256d {
            unsafe { _mm256_mul_pd(a, b) }
        }
        #[inline(always)]
        fn div(&mut self, a: __m256d, b: __m256d) -> __m256d {
            unsafe { _mm256_div_pd(a, b) }
        }
        #[inline(always)]
        fn fma(&mut self, a: __m256d, b: __m256d, c: __m256d) -> __m256d {
            unsafe { _mm256_fmadd_pd(a, b, c) }
        }
        #[inline(always)]
        fn abs(&mut self, x: __m256d) -> __m256d {
            let i = self.bits(x);
            let i = self.iandc(i, 0x7fff_ffff_ffff_ffff);
            self.fbits(i)
        }
        #[inline(always)]
        fn neg(&mut self, x: __m256d) -> __m256d {
            unsafe { _mm256_xor_pd(x, _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MIN))) }
        }
        #[inline(always)]
        fn cmp(&mut self, cc: Cmp, a: __m256d, b: __m256d) -> __m256d {
            unsafe {
                match cc {
                    Cmp::Lt => _mm256_cmp_pd::<_CMP_LT_OQ>(a, b),
                    Cmp::Gt => _mm256_cmp_pd::<_CMP_GT_OQ>(a, b),
                    Cmp::Ge => _mm256_cmp_pd::<_CMP_GE_OQ>(a, b),
                    Cmp::Eq => _mm256_cmp_pd::<_CMP_EQ_OQ>(a, b),
                    Cmp::Unord => _mm256_cmp_pd::<_CMP_UNORD_Q>(a, b),
                }
            }
        }
        #[inline(always)]
        fn icmpc(&mut self, cc: ICmp, a: __m256i, c: i64) -> __m256d {
            unsafe {
                let c = _mm256_set1_epi64x(c);
                let lt = _mm256_cmpgt_epi64(c, a);
                let r = match cc {
                    ICmp::Lt => lt,
                    ICmp::Ge => _mm256_xor_si256(lt, _mm256_set1_epi64x(-1)),
                };
                _mm256_castsi256_pd(r)
            }
        }
        #[inline(always)]
        fn mand(&mut self, a: __m256d, b: __m256d) -> __m256d {
            unsafe { _mm256_and_pd(a, b) }
        }
        #[inline(always)]
        fn any(&mut self, m: __m256d) -> bool {
            unsafe { _mm256_movemask_pd(m) != 0 }
        }
        #[inline(always)]
        fn all(&mut self, m: __m256d) -> bool {
            unsafe { _mm256_movemask_pd(m) == 0xf }
        }
        #[inline(always)]
        fn sel(&mut self, m: __m256d, a: __m256d, b: __m256d) -> __m256d {
            unsafe { _mm256_blendv_pd(b, a, m) }
        }
        #[inline(always)]
        fn bits(&mut self, x: __m256d) -> __m256i {
            unsafe { _mm256_castpd_si256(x) }
        }
        #[inline(always)]
        fn fbits(&mut self, i: __m256i) -> __m256d {
            unsafe { _mm256_castsi256_pd(i) }
        }
        #[inline(always)]
        fn iaddc(&mut self, a: __m256i, c: i64) -> __m256i {
            unsafe { _mm256_add_epi64(a, _mm256_set1_epi64x(c)) }
        }
        #[inline(always)]
        fn isub(&mut self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_sub_epi64(a, b) }
        }
        #[inline(always)]
        fn iandc(&mut self, a: __m256i, c: i64) -> __m256i {
            unsafe { _mm256_and_si256(a, _mm256_set1_epi64x(c)) }
        }
        #[inline(always)]
        fn shlc(&mut self, a: __m256i, n: u32) -> __m256i {
            unsafe { _mm256_sll_epi64(a, _mm_cvtsi32_si128(n as i32)) }
        }
        #[inline(always)]
        fn sshrc(&mut self, a: __m256i, n: u32) -> __m256i {
            // AVX2 has no 64-bit arithmetic shift: the logical one, with the sign's copies shifted in
            // (a shift count of 64 gives 0, so n = 0 adds nothing).
            unsafe {
                let neg = _mm256_cmpgt_epi64(_mm256_setzero_si256(), a);
                let fill = _mm256_sll_epi64(neg, _mm_cvtsi32_si128(64 - n as i32));
                _mm256_or_si256(_mm256_srl_epi64(a, _mm_cvtsi32_si128(n as i32)), fill)
            }
        }
        #[inline(always)]
        fn to_float(&mut self, i: __m256i) -> __m256d {
            // (AVX2 has no i64 → f64 conversion; the f64 algorithms do not convert integers.)
            let mut a = [0i64; 4];
            unsafe { _mm256_storeu_si256(a.as_mut_ptr().cast(), i) };
            let f = a.map(|v| v as f64);
            unsafe { _mm256_loadu_pd(f.as_ptr()) }
        }
        #[inline(always)]
        fn sqrt(&mut self, x: __m256d) -> __m256d {
            unsafe { _mm256_sqrt_pd(x) }
        }
        #[inline(always)]
        fn floor(&mut self, x: __m256d) -> __m256d {
            unsafe { _mm256_round_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(x) }
        }
        #[inline(always)]
        fn copysign(&mut self, a: __m256d, s: __m256d) -> __m256d {
            let ab = self.bits(a);
            let sb = self.bits(s);
            let ab = self.iandc(ab, 0x7fff_ffff_ffff_ffff);
            let sb = self.iandc(sb, i64::MIN);
            unsafe { _mm256_castsi256_pd(_mm256_or_si256(ab, sb)) }
        }
    }

    impl Lanes64 for Avx2F64 {
        #[inline(always)]
        fn nearest(&mut self, x: __m256d) -> __m256d {
            unsafe { _mm256_round_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x) }
        }
        #[inline(always)]
        fn trunc(&mut self, x: __m256d) -> __m256d {
            unsafe { _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(x) }
        }

        #[inline(always)]
        fn mor(&mut self, a: __m256d, b: __m256d) -> __m256d {
            unsafe { _mm256_or_pd(a, b) }
        }
        #[inline(always)]
        fn ushrc(&mut self, a: __m256i, n: u32) -> __m256i {
            unsafe { _mm256_srl_epi64(a, _mm_cvtsi32_si128(n as i32)) }
        }
        #[inline(always)]
        fn maxc(&mut self, a: __m256d, c: f64) -> __m256d {
            unsafe { _mm256_max_pd(_mm256_set1_pd(c), a) }
        }
        #[inline(always)]
        fn minc(&mut self, a: __m256d, c: f64) -> __m256d {
            unsafe { _mm256_min_pd(_mm256_set1_pd(c), a) }
        }
    }

    /// `FUNCTIONS[F]` (`Sin`, `Cos`, or F >= F32_FUNCTIONS) on f64 lanes `L`.
    #[inline(always)]
    fn apply64<L: Lanes64, const F: usize>(l: &mut L, x: L::F) -> L::F {
        match F {
            SIN => m64::sincosf(l, x, false, true),
            COS => m64::sincosf(l, x, true, true),
            F32_FUNCTIONS => m64::lgamma(l, x),
            _ => m64::digamma(l, x),
        }
    }

    /// `FUNCTIONS`' indices of `Sin` and `Cos`: f64 lanes (the C library's double-precision steps).
    const SIN: usize = 8;
    const COS: usize = 9;

    /// The C library's sin/cos at the lanes (bit i for lane i) with 2^26 <= |x| < inf, as the inline code's
    /// cold block (`vmath::sincos_big_f32`).
    #[cold]
    #[inline(never)]
    fn sincos_big_lanes<const N: usize>(mask: u32, cos: bool, x: &[f32; N], y: &mut [f32; N]) {
        for l in 0..N {
            if mask >> l & 1 != 0 {
                let v = super::super::vmath::sincos_big_f32(x[l]) as u64;
                y[l] = f32::from_bits(if cos { v as u32 } else { (v >> 32) as u32 });
            }
        }
    }

    /// sin/cos's float32 steps after `m64::sincosf`, as `vmath::sincos_f32` takes them: x itself (sin) or 1
    /// (cos) below 2^-12; returns the lanes (bit i for lane i) with 2^26 <= |x| < inf, for the C library.
    #[inline(always)]
    fn sincos_tiny<L: Lanes, const F: usize>(l: &mut L, x: L::F, y: L::F) -> (L::F, L::M) {
        let y = if F == COS {
            let ax = l.abs(x);
            let tiny = l.cmpc(Cmp::Lt, ax, 2f64.powi(-12));
            l.selc(tiny, 1.0, y)
        } else {
            m::tiny_passthrough(l, x, y, 2f64.powi(-12))
        };
        let ax = l.abs(x);
        let ge = l.cmpc(Cmp::Ge, ax, m64::sincos_limit(true));
        let fin = l.cmpc(Cmp::Lt, ax, f64::INFINITY);
        (y, l.mand(ge, fin))
    }

    #[inline(always)]
    fn sincos_fix512<const F: usize>(x: __m512, y: __m512) -> __m512 {
        let (y, big) = sincos_tiny::<Avx512, F>(&mut Avx512, x, y);
        if big == 0 {
            return y;
        }
        let (mut xa, mut ya) = ([0f32; 16], [0f32; 16]);
        // SAFETY: AVX-512F (see `Avx512`); 16-lane arrays.
        unsafe {
            _mm512_storeu_ps(xa.as_mut_ptr(), x);
            _mm512_storeu_ps(ya.as_mut_ptr(), y);
        }
        sincos_big_lanes(big as u32, F == COS, &xa, &mut ya);
        unsafe { _mm512_loadu_ps(ya.as_ptr()) }
    }

    #[inline(always)]
    fn sincos_fix256<const F: usize>(x: __m256, y: __m256) -> __m256 {
        let (y, big) = sincos_tiny::<Avx2, F>(&mut Avx2, x, y);
        // SAFETY: AVX2 (see `Avx2`); 8-lane arrays.
        let bits = unsafe { _mm256_movemask_ps(big) };
        if bits == 0 {
            return y;
        }
        let (mut xa, mut ya) = ([0f32; 8], [0f32; 8]);
        unsafe {
            _mm256_storeu_ps(xa.as_mut_ptr(), x);
            _mm256_storeu_ps(ya.as_mut_ptr(), y);
        }
        sincos_big_lanes(bits as u32, F == COS, &xa, &mut ya);
        unsafe { _mm256_loadu_ps(ya.as_ptr()) }
    }

    /// 16 f32 lanes through two f64x8 halves (widened exactly, rounded once back).
    #[inline(always)]
    fn apply512_f64<const F: usize>(l: &mut Avx512F64, x: __m512) -> __m512 {
        unsafe {
            let lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
            let hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(x))));
            let ylo = _mm512_cvtpd_ps(apply64::<Avx512F64, F>(l, lo));
            let yhi = _mm512_cvtpd_ps(apply64::<Avx512F64, F>(l, hi));
            let lo256 = _mm512_castpd256_pd512(_mm256_castps_pd(ylo));
            let y = _mm512_castpd_ps(_mm512_insertf64x4::<1>(lo256, _mm256_castps_pd(yhi)));
            if F == SIN || F == COS { sincos_fix512::<F>(x, y) } else { y }
        }
    }

    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn block512_f64<const F: usize>(src: *const f32, dst: *mut f32, n: u64) {
        let n = n as usize;
        let mut l = Avx512F64;
        let mut i = 0;
        while i + 16 <= n {
            let x = unsafe { _mm512_loadu_ps(src.add(i)) };
            let y = apply512_f64::<F>(&mut l, x);
            unsafe { _mm512_storeu_ps(dst.add(i), y) };
            i += 16;
        }
        if i < n {
            // Masked lanes neither load nor store (no fault past the end).
            let k: __mmask16 = ((1u32 << (n - i)) - 1) as u16;
            let x = unsafe { _mm512_maskz_loadu_ps(k, src.add(i)) };
            let y = apply512_f64::<F>(&mut l, x);
            unsafe { _mm512_mask_storeu_ps(dst.add(i), k, y) };
        }
    }

    /// 8 f32 lanes through two f64x4 halves.
    #[inline(always)]
    fn apply256_f64<const F: usize>(l: &mut Avx2F64, x: __m256) -> __m256 {
        unsafe {
            let lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
            let hi = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x));
            let ylo = _mm256_cvtpd_ps(apply64::<Avx2F64, F>(l, lo));
            let yhi = _mm256_cvtpd_ps(apply64::<Avx2F64, F>(l, hi));
            let y = _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(ylo), yhi);
            if F == SIN || F == COS { sincos_fix256::<F>(x, y) } else { y }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn block256_f64<const F: usize>(src: *const f32, dst: *mut f32, n: u64) {
        let n = n as usize;
        let mut l = Avx2F64;
        let mut i = 0;
        while i + 8 <= n {
            let x = unsafe { _mm256_loadu_ps(src.add(i)) };
            let y = apply256_f64::<F>(&mut l, x);
            unsafe { _mm256_storeu_ps(dst.add(i), y) };
            i += 8;
        }
        if i < n {
            let mut buf = [0f32; 8];
            let rem = n - i;
            // SAFETY: `rem < 8` elements in bounds of both arrays and of `buf`.
            unsafe {
                std::ptr::copy_nonoverlapping(src.add(i), buf.as_mut_ptr(), rem);
                let y = apply256_f64::<F>(&mut l, _mm256_loadu_ps(buf.as_ptr()));
                _mm256_storeu_ps(buf.as_mut_ptr(), y);
                std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(i), rem);
            }
        }
    }

    unsafe extern "C" fn entry512_f64<const F: usize>(src: *const f32, dst: *mut f32, n: u64) {
        // SAFETY: installed only when the host has AVX-512F and FMA (`isa`); the caller passes arrays of n.
        unsafe { block512_f64::<F>(src, dst, n) }
    }

    unsafe extern "C" fn entry256_f64<const F: usize>(src: *const f32, dst: *mut f32, n: u64) {
        // SAFETY: installed only when the host has AVX2 and FMA (`isa`); the caller passes arrays of n.
        unsafe { block256_f64::<F>(src, dst, n) }
    }

    /// Points per pass of the pow routines: the vector pass lists the lanes `powf` must compute, a second
    /// pass computes them (one strip of `loop_plan::STRIP` points in kernels).
    const POW_CHUNK: usize = 512;

    /// `powf` (subnormal operands read as zeros, as `pow_strip`) at the listed points. After the vector pass,
    /// not inside it: a branch per vector (a third of them hold such a lane, at random) and the spills
    /// around each call made h-pow13's per-vector calls cost more than the vector code itself.
    #[inline(never)]
    fn pow_fix(list: &[u32], a: *const f32, b: *const f32, out: *mut f32) {
        use super::super::math::daz32;
        for &j in list {
            let j = j as usize;
            // SAFETY: the list holds points below the pass's length, inside all three arrays.
            unsafe { *out.add(j) = daz32(*a.add(j)).powf(daz32(*b.add(j))) };
        }
    }

    /// pow over 16 f32 lanes: the results of `m64::pow_core` (two f64x8 halves), and the lanes `powf` must
    /// compute (bit i for lane i): those it does not decide, and the C library's special cases (x zero,
    /// subnormal, infinite or NaN, x < 0 with y not an integer, y infinite or NaN).
    #[inline(always)]
    fn pow512_lanes(l: &mut Avx512F64, x: __m512, y: __m512) -> (__m512, u32) {
        // SAFETY: AVX-512F intrinsics (see `Avx512F64`).
        unsafe {
            let xb = _mm512_castps_si512(x);
            let ax = _mm512_and_si512(xb, _mm512_set1_epi32(0x7fff_ffff));
            let ay = _mm512_and_si512(_mm512_castps_si512(y), _mm512_set1_epi32(0x7fff_ffff));
            // |x| normal (unsigned compare of |x| − MIN_POSITIVE), y finite (a subnormal y counts as the zero
            // powf sees: 2^(y·log2|x|) rounds to 1 as powf(x, 0) = 1)
            let x_ok = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(ax, _mm512_set1_epi32(0x0080_0000)), _mm512_set1_epi32(0x7f00_0000));
            let y_ok = _mm512_cmplt_epu32_mask(ay, _mm512_set1_epi32(0x7f80_0000));
            let xneg = _mm512_cmplt_epi32_mask(xb, _mm512_setzero_si512());
            let ry = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(y);
            let yint = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(ry, y);
            // odd: bit 0 of the truncated integer (2^31 and beyond convert to 0x80000000: even, as they are)
            let odd = _mm512_test_epi32_mask(_mm512_cvttps_epi32(y), _mm512_set1_epi32(1));
            let flip = xneg & yint & odd;
            let fast = x_ok & y_ok & (!xneg | yint);
            // |x| = z·2^k with z in [0.703125, 1.40625): k from the exponent of |x| − bits(0.703125)
            let tmp = _mm512_sub_epi32(ax, _mm512_set1_epi32(0x3f34_0000));
            let k = _mm512_srai_epi32::<23>(tmp);
            let z = _mm512_castsi512_ps(_mm512_sub_epi32(ax, _mm512_and_si512(tmp, _mm512_set1_epi32(0xff80_0000u32 as i32))));
            let zlo = _mm512_cvtps_pd(_mm512_castps512_ps256(z));
            let zhi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(z))));
            let klo = _mm512_cvtepi32_pd(_mm512_castsi512_si256(k));
            let khi = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64::<1>(k));
            let ylo = _mm512_cvtps_pd(_mm512_castps512_ps256(y));
            let yhi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(y))));
            // (no closure for the halves: it would be compiled without this function's target features)
            let (vlo, oklo) = m64::pow_core(l, zlo, klo, ylo);
            let (vhi, okhi) = m64::pow_core(l, zhi, khi, yhi);
            let flo = _mm512_cvtpd_ps(vlo);
            let fhi = _mm512_cvtpd_ps(vhi);
            let v = _mm512_castpd_ps(_mm512_insertf64x4::<1>(_mm512_castpd256_pd512(_mm256_castps_pd(flo)), _mm256_castps_pd(fhi)));
            let v = _mm512_castsi512_ps(_mm512_mask_xor_epi32(_mm512_castps_si512(v), flip, _mm512_castps_si512(v), _mm512_set1_epi32(i32::MIN)));
            let ok = oklo as u32 | (okhi as u32) << 8;
            (v, !(ok & fast as u32) & 0xffff)
        }
    }

    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn pow512(a: *const f32, b: *const f32, dst: *mut f32, n: u64) {
        let n = n as usize;
        let mut l = Avx512F64;
        // Results go to `buf` when `dst` is an operand: the second pass reads the operands.
        let alias = dst as *const f32 == a || dst as *const f32 == b;
        let mut buf = [0f32; POW_CHUNK];
        let mut list = [0u32; POW_CHUNK + 16];
        let mut i = 0;
        while i < n {
            let m = (n - i).min(POW_CHUNK);
            let out = if alias { buf.as_mut_ptr() } else { unsafe { dst.add(i) } };
            let mut cnt = 0usize;
            let mut j = 0;
            while j < m {
                // Masked lanes neither load nor store (no fault past the end).
                let k: u32 = if m - j >= 16 { 0xffff } else { (1u32 << (m - j)) - 1 };
                // SAFETY: lanes below m − j are inside the arrays; `list` has 16 spare entries past POW_CHUNK.
                unsafe {
                    let x = _mm512_maskz_loadu_ps(k as u16, a.add(i + j));
                    let y = _mm512_maskz_loadu_ps(k as u16, b.add(i + j));
                    let (v, slow) = pow512_lanes(&mut l, x, y);
                    _mm512_mask_storeu_ps(out.add(j), k as u16, v);
                    // the points of the slow lanes, packed (branch-free)
                    let slow = (slow & k) as u16;
                    let at = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(j as i32));
                    _mm512_storeu_si512(list.as_mut_ptr().add(cnt).cast(), _mm512_maskz_compress_epi32(slow, at));
                    cnt += slow.count_ones() as usize;
                }
                j += 16;
            }
            // SAFETY: m points from i in all three arrays (or in `buf`).
            unsafe {
                pow_fix(&list[..cnt], a.add(i), b.add(i), out);
                if alias {
                    std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(i), m);
                }
            }
            i += m;
        }
    }

    pub unsafe extern "C" fn pow_entry512(a: *const f32, b: *const f32, dst: *mut f32, n: u64) {
        // SAFETY: installed only when the host has AVX-512F and FMA (`isa`); the caller passes arrays of n.
        unsafe { pow512(a, b, dst, n) }
    }

    /// For each 8-bit mask, the positions of its set bits, packed (AVX2 has no compress).
    static SET_BITS8: [[u32; 8]; 256] = {
        let mut t = [[0u32; 8]; 256];
        let mut m = 0;
        while m < 256 {
            let (mut c, mut bit) = (0, 0);
            while bit < 8 {
                if m >> bit & 1 != 0 {
                    t[m][c] = bit as u32;
                    c += 1;
                }
                bit += 1;
            }
            m += 1;
        }
        t
    };

    /// `pow512_lanes` on 8 f32 lanes (two f64x4 halves).
    #[inline(always)]
    fn pow256_lanes(l: &mut Avx2F64, x: __m256, y: __m256) -> (__m256, u32) {
        // SAFETY: AVX2 and FMA intrinsics (see `Avx2F64`).
        unsafe {
            let xb = _mm256_castps_si256(x);
            let ax = _mm256_and_si256(xb, _mm256_set1_epi32(0x7fff_ffff));
            let ay = _mm256_and_si256(_mm256_castps_si256(y), _mm256_set1_epi32(0x7fff_ffff));
            let x_ok = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(0x0080_0000), ax), _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7f80_0000), ax));
            let y_ok = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7f80_0000), ay);
            let ry = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(y);
            let yint = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(ry, y));
            let xpos_or_int = _mm256_or_si256(_mm256_cmpgt_epi32(xb, _mm256_set1_epi32(-1)), yint);
            let fast = _mm256_and_si256(_mm256_and_si256(x_ok, y_ok), xpos_or_int);
            // the result's sign: x's where y is an odd integer
            let oddbit = _mm256_slli_epi32::<31>(_mm256_cvttps_epi32(y));
            let flip = _mm256_and_si256(_mm256_and_si256(oddbit, yint), xb);
            let tmp = _mm256_sub_epi32(ax, _mm256_set1_epi32(0x3f34_0000));
            let k = _mm256_srai_epi32::<23>(tmp);
            let z = _mm256_castsi256_ps(_mm256_sub_epi32(ax, _mm256_and_si256(tmp, _mm256_set1_epi32(0xff80_0000u32 as i32))));
            let zlo = _mm256_cvtps_pd(_mm256_castps256_ps128(z));
            let zhi = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(z));
            let klo = _mm256_cvtepi32_pd(_mm256_castsi256_si128(k));
            let khi = _mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(k));
            let ylo = _mm256_cvtps_pd(_mm256_castps256_ps128(y));
            let yhi = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(y));
            let (vlo, oklo) = m64::pow_core(l, zlo, klo, ylo);
            let (vhi, okhi) = m64::pow_core(l, zhi, khi, yhi);
            let v = _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm256_cvtpd_ps(vlo)), _mm256_cvtpd_ps(vhi));
            let v = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(v), flip));
            let ok = (_mm256_movemask_pd(oklo) | _mm256_movemask_pd(okhi) << 4) as u32;
            let fast = _mm256_movemask_ps(_mm256_castsi256_ps(fast)) as u32;
            (v, !(ok & fast) & 0xff)
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn pow256(a: *const f32, b: *const f32, dst: *mut f32, n: u64) {
        let n = n as usize;
        let mut l = Avx2F64;
        let alias = dst as *const f32 == a || dst as *const f32 == b;
        let mut buf = [0f32; POW_CHUNK];
        let mut list = [0u32; POW_CHUNK + 8];
        let mut i = 0;
        while i < n {
            let m = (n - i).min(POW_CHUNK);
            let out = if alias { buf.as_mut_ptr() } else { unsafe { dst.add(i) } };
            let mut cnt = 0usize;
            let mut j = 0;
            while j < m {
                let rem = m - j;
                // SAFETY: lanes below `rem` are inside the arrays (the tail goes through stack copies padded
                // with 1s); `list` has 8 spare entries past POW_CHUNK.
                unsafe {
                    let (x, y) = if rem >= 8 {
                        (_mm256_loadu_ps(a.add(i + j)), _mm256_loadu_ps(b.add(i + j)))
                    } else {
                        let (mut xs, mut ys) = ([1f32; 8], [1f32; 8]);
                        std::ptr::copy_nonoverlapping(a.add(i + j), xs.as_mut_ptr(), rem);
                        std::ptr::copy_nonoverlapping(b.add(i + j), ys.as_mut_ptr(), rem);
                        (_mm256_loadu_ps(xs.as_ptr()), _mm256_loadu_ps(ys.as_ptr()))
                    };
                    let (v, slow) = pow256_lanes(&mut l, x, y);
                    if rem >= 8 {
                        _mm256_storeu_ps(out.add(j), v);
                    } else {
                        let mut vs = [0f32; 8];
                        _mm256_storeu_ps(vs.as_mut_ptr(), v);
                        std::ptr::copy_nonoverlapping(vs.as_ptr(), out.add(j), rem);
                    }
                    let slow = if rem >= 8 { slow } else { slow & ((1u32 << rem) - 1) };
                    let at = _mm256_loadu_si256(SET_BITS8[slow as usize].as_ptr().cast());
                    _mm256_storeu_si256(list.as_mut_ptr().add(cnt).cast(), _mm256_add_epi32(at, _mm256_set1_epi32(j as i32)));
                    cnt += slow.count_ones() as usize;
                }
                j += 8;
            }
            // SAFETY: m points from i in all three arrays (or in `buf`).
            unsafe {
                pow_fix(&list[..cnt], a.add(i), b.add(i), out);
                if alias {
                    std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(i), m);
                }
            }
            i += m;
        }
    }

    pub unsafe extern "C" fn pow_entry256(a: *const f32, b: *const f32, dst: *mut f32, n: u64) {
        // SAFETY: installed only when the host has AVX2 and FMA (`isa`); the caller passes arrays of n.
        unsafe { pow256(a, b, dst, n) }
    }

    /// `FUNCTIONS`' index of `Tan`: its reduction runs on f64 lanes, its kernel on the f32 lanes.
    const TAN: usize = 10;

    /// The C library's tanf at the lanes (bit i for lane i) with `tan_limit` <= |x| < inf, as the inline
    /// code's cold block (`vmath::tan_big_f32`).
    #[cold]
    #[inline(never)]
    fn tan_big_lanes<const N: usize>(mask: u32, x: &[f32; N], y: &mut [f32; N]) {
        for l in 0..N {
            if mask >> l & 1 != 0 {
                y[l] = super::super::vmath::tan_big_f32(x[l]);
            }
        }
    }

    /// float32 tan on 16 lanes as `vmath::tan_f32`: `m64::tanf_reduce` on two f64x8 halves, r split into y0 (r
    /// rounded to f32) and y1 ((r − y0) rounded), `m::tanf_kernel` on the f32 lanes, the C library past the limit.
    #[inline(always)]
    fn tan512(x: __m512) -> __m512 {
        let mut d = Avx512F64;
        // SAFETY: AVX-512F (see `Avx512`); 16-lane arrays.
        unsafe {
            let lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
            let hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(x))));
            let (rlo, iylo) = m64::tanf_reduce(&mut d, lo, true);
            let (rhi, iyhi) = m64::tanf_reduce(&mut d, hi, true);
            let join = |a: __m256, b: __m256| _mm512_castpd_ps(_mm512_insertf64x4::<1>(_mm512_castpd256_pd512(_mm256_castps_pd(a)), _mm256_castps_pd(b)));
            let (f0lo, f0hi) = (_mm512_cvtpd_ps(rlo), _mm512_cvtpd_ps(rhi));
            let y0 = join(f0lo, f0hi);
            let y1lo = _mm512_cvtpd_ps(_mm512_sub_pd(rlo, _mm512_cvtps_pd(f0lo)));
            let y1hi = _mm512_cvtpd_ps(_mm512_sub_pd(rhi, _mm512_cvtps_pd(f0hi)));
            let y1 = join(y1lo, y1hi);
            let iy = join(_mm512_cvtpd_ps(iylo), _mm512_cvtpd_ps(iyhi));
            let mut l = Avx512;
            let y = m::tanf_kernel(&mut l, x, y0, y1, iy);
            let ax = l.abs(x);
            let ge = l.cmpc(Cmp::Ge, ax, m64::tan_limit(true));
            let fin = l.cmpc(Cmp::Lt, ax, f64::INFINITY);
            let big = l.mand(ge, fin);
            if big == 0 {
                return y;
            }
            let (mut xa, mut ya) = ([0f32; 16], [0f32; 16]);
            _mm512_storeu_ps(xa.as_mut_ptr(), x);
            _mm512_storeu_ps(ya.as_mut_ptr(), y);
            tan_big_lanes(big as u32, &xa, &mut ya);
            _mm512_loadu_ps(ya.as_ptr())
        }
    }

    /// `tan512` on 8 lanes (two f64x4 halves).
    #[inline(always)]
    fn tan256(x: __m256) -> __m256 {
        let mut d = Avx2F64;
        // SAFETY: AVX2 and FMA (see `Avx2`); 8-lane arrays.
        unsafe {
            let lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
            let hi = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x));
            let (rlo, iylo) = m64::tanf_reduce(&mut d, lo, true);
            let (rhi, iyhi) = m64::tanf_reduce(&mut d, hi, true);
            let (f0lo, f0hi) = (_mm256_cvtpd_ps(rlo), _mm256_cvtpd_ps(rhi));
            let y0 = _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(f0lo), f0hi);
            let y1lo = _mm256_cvtpd_ps(_mm256_sub_pd(rlo, _mm256_cvtps_pd(f0lo)));
            let y1hi = _mm256_cvtpd_ps(_mm256_sub_pd(rhi, _mm256_cvtps_pd(f0hi)));
            let y1 = _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(y1lo), y1hi);
            let iy = _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm256_cvtpd_ps(iylo)), _mm256_cvtpd_ps(iyhi));
            let mut l = Avx2;
            let y = m::tanf_kernel(&mut l, x, y0, y1, iy);
            let ax = l.abs(x);
            let ge = l.cmpc(Cmp::Ge, ax, m64::tan_limit(true));
            let fin = l.cmpc(Cmp::Lt, ax, f64::INFINITY);
            let big = _mm256_movemask_ps(l.mand(ge, fin));
            if big == 0 {
                return y;
            }
            let (mut xa, mut ya) = ([0f32; 8], [0f32; 8]);
            _mm256_storeu_ps(xa.as_mut_ptr(), x);
            _mm256_storeu_ps(ya.as_mut_ptr(), y);
            tan_big_lanes(big as u32, &xa, &mut ya);
            _mm256_loadu_ps(ya.as_ptr())
        }
    }

    /// `FUNCTIONS[F]` on 16 f32 lanes (`tan512` for tan, else `apply`).
    #[inline(always)]
    fn apply512<const F: usize>(l: &mut Avx512, x: __m512) -> __m512 {
        if F == TAN { tan512(x) } else { apply::<Avx512, F>(l, x) }
    }

    /// `FUNCTIONS[F]` on 8 f32 lanes (`tan256` for tan, else `apply`).
    #[inline(always)]
    fn apply256<const F: usize>(l: &mut Avx2, x: __m256) -> __m256 {
        if F == TAN { tan256(x) } else { apply::<Avx2, F>(l, x) }
    }

    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn block512<const F: usize>(src: *const f32, dst: *mut f32, n: u64) {
        let n = n as usize;
        let mut l = Avx512;
        let mut i = 0;
        // Two independent vectors per iteration (about 5% faster: the algorithms are long dependency chains).
        while i + 32 <= n {
            let x0 = unsafe { _mm512_loadu_ps(src.add(i)) };
            let x1 = unsafe { _mm512_loadu_ps(src.add(i + 16)) };
            let y0 = apply512::<F>(&mut l, x0);
            let y1 = apply512::<F>(&mut l, x1);
            unsafe {
                _mm512_storeu_ps(dst.add(i), y0);
                _mm512_storeu_ps(dst.add(i + 16), y1);
            }
            i += 32;
        }
        while i + 16 <= n {
            let x = unsafe { _mm512_loadu_ps(src.add(i)) };
            let y = apply512::<F>(&mut l, x);
            unsafe { _mm512_storeu_ps(dst.add(i), y) };
            i += 16;
        }
        if i < n {
            // Masked lanes neither load nor store (no fault past the end).
            let k: __mmask16 = ((1u32 << (n - i)) - 1) as u16;
            let x = unsafe { _mm512_maskz_loadu_ps(k, src.add(i)) };
            let y = apply512::<F>(&mut l, x);
            unsafe { _mm512_mask_storeu_ps(dst.add(i), k, y) };
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn block256<const F: usize>(src: *const f32, dst: *mut f32, n: u64) {
        let n = n as usize;
        let mut l = Avx2;
        let mut i = 0;
        // Two independent vectors per iteration, as in `block512`.
        while i + 16 <= n {
            let x0 = unsafe { _mm256_loadu_ps(src.add(i)) };
            let x1 = unsafe { _mm256_loadu_ps(src.add(i + 8)) };
            let y0 = apply256::<F>(&mut l, x0);
            let y1 = apply256::<F>(&mut l, x1);
            unsafe {
                _mm256_storeu_ps(dst.add(i), y0);
                _mm256_storeu_ps(dst.add(i + 8), y1);
            }
            i += 16;
        }
        while i + 8 <= n {
            let x = unsafe { _mm256_loadu_ps(src.add(i)) };
            let y = apply256::<F>(&mut l, x);
            unsafe { _mm256_storeu_ps(dst.add(i), y) };
            i += 8;
        }
        if i < n {
            let mut buf = [0f32; 8];
            let rem = n - i;
            // SAFETY: `rem < 8` elements in bounds of both arrays and of `buf`.
            unsafe {
                std::ptr::copy_nonoverlapping(src.add(i), buf.as_mut_ptr(), rem);
                let y = apply256::<F>(&mut l, _mm256_loadu_ps(buf.as_ptr()));
                _mm256_storeu_ps(buf.as_mut_ptr(), y);
                std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(i), rem);
            }
        }
    }

    unsafe extern "C" fn entry512<const F: usize>(src: *const f32, dst: *mut f32, n: u64) {
        // SAFETY: installed only when the host has AVX-512F and FMA (`isa`); the caller passes arrays of n.
        unsafe { block512::<F>(src, dst, n) }
    }

    unsafe extern "C" fn entry256<const F: usize>(src: *const f32, dst: *mut f32, n: u64) {
        // SAFETY: installed only when the host has AVX2 and FMA (`isa`); the caller passes arrays of n.
        unsafe { block256::<F>(src, dst, n) }
    }

    /// float32 `atan2(a[i], b[i])` on 16 lanes: `math_f32::atan2`, the inline code's steps (`atan2f`'s bits).
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn atan2_512(a: *const f32, b: *const f32, dst: *mut f32, n: u64) {
        let n = n as usize;
        let mut l = Avx512;
        let mut i = 0;
        // (`dst` may be `a` or `b`: each vector is loaded before its lanes are stored.)
        while i + 16 <= n {
            // SAFETY: 16 elements from i are inside all three arrays.
            unsafe {
                let y = _mm512_loadu_ps(a.add(i));
                let x = _mm512_loadu_ps(b.add(i));
                _mm512_storeu_ps(dst.add(i), m::atan2(&mut l, y, x));
            }
            i += 16;
        }
        if i < n {
            // Masked lanes neither load nor store (no fault past the end).
            let k: __mmask16 = ((1u32 << (n - i)) - 1) as u16;
            // SAFETY: the masked lanes are inside the arrays.
            unsafe {
                let y = _mm512_maskz_loadu_ps(k, a.add(i));
                let x = _mm512_maskz_loadu_ps(k, b.add(i));
                _mm512_mask_storeu_ps(dst.add(i), k, m::atan2(&mut l, y, x));
            }
        }
    }

    /// `atan2_512` on 8 lanes.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn atan2_256(a: *const f32, b: *const f32, dst: *mut f32, n: u64) {
        let n = n as usize;
        let mut l = Avx2;
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: 8 elements from i are inside all three arrays.
            unsafe {
                let y = _mm256_loadu_ps(a.add(i));
                let x = _mm256_loadu_ps(b.add(i));
                _mm256_storeu_ps(dst.add(i), m::atan2(&mut l, y, x));
            }
            i += 8;
        }
        if i < n {
            let rem = n - i;
            let (mut ys, mut xs) = ([1f32; 8], [1f32; 8]);
            // SAFETY: `rem < 8` elements from i are inside the arrays and the stack copies.
            unsafe {
                std::ptr::copy_nonoverlapping(a.add(i), ys.as_mut_ptr(), rem);
                std::ptr::copy_nonoverlapping(b.add(i), xs.as_mut_ptr(), rem);
                let r = m::atan2(&mut l, _mm256_loadu_ps(ys.as_ptr()), _mm256_loadu_ps(xs.as_ptr()));
                _mm256_storeu_ps(ys.as_mut_ptr(), r);
                std::ptr::copy_nonoverlapping(ys.as_ptr(), dst.add(i), rem);
            }
        }
    }

    pub unsafe extern "C" fn atan2_entry512(a: *const f32, b: *const f32, dst: *mut f32, n: u64) {
        // SAFETY: installed only when the host has AVX-512F and FMA (`isa`); the caller passes arrays of n.
        unsafe { atan2_512(a, b, dst, n) }
    }

    pub unsafe extern "C" fn atan2_entry256(a: *const f32, b: *const f32, dst: *mut f32, n: u64) {
        // SAFETY: installed only when the host has AVX2 and FMA (`isa`); the caller passes arrays of n.
        unsafe { atan2_256(a, b, dst, n) }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn stream512_impl(src: *const f32, dst: *mut f32, n: usize) {
        if !(dst as usize).is_multiple_of(4) {
            // SAFETY: n elements in bounds of both (the caller's contract); unaligned plain copy.
            unsafe { std::ptr::copy(src, dst, n) };
            return;
        }
        // Plain masked stores up to the first 64-byte boundary, streaming stores after.
        let head = (((64 - (dst as usize) % 64) % 64) / 4).min(n);
        unsafe {
            if head > 0 {
                let k = ((1u32 << head) - 1) as u16;
                _mm512_mask_storeu_ps(dst, k, _mm512_maskz_loadu_ps(k, src));
            }
            let mut i = head;
            while i + 16 <= n {
                _mm512_stream_ps(dst.add(i), _mm512_loadu_ps(src.add(i)));
                i += 16;
            }
            if i < n {
                let k = ((1u32 << (n - i)) - 1) as u16;
                _mm512_mask_storeu_ps(dst.add(i), k, _mm512_maskz_loadu_ps(k, src.add(i)));
            }
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn stream256_impl(src: *const f32, dst: *mut f32, n: usize) {
        if !(dst as usize).is_multiple_of(4) {
            // SAFETY: as above.
            unsafe { std::ptr::copy(src, dst, n) };
            return;
        }
        let head = (((32 - (dst as usize) % 32) % 32) / 4).min(n);
        unsafe {
            std::ptr::copy(src, dst, head);
            let mut i = head;
            while i + 8 <= n {
                _mm256_stream_ps(dst.add(i), _mm256_loadu_ps(src.add(i)));
                i += 8;
            }
            std::ptr::copy(src.add(i), dst.add(i), n - i);
        }
    }

    unsafe extern "C" fn stream512(src: *const f32, dst: *mut f32, n: u64) {
        // SAFETY: installed only when the host has AVX-512F; the caller passes arrays of n.
        unsafe { stream512_impl(src, dst, n as usize) }
    }

    unsafe extern "C" fn stream256(src: *const f32, dst: *mut f32, n: u64) {
        // SAFETY: installed only when the host has AVX2; the caller passes arrays of n.
        unsafe { stream256_impl(src, dst, n as usize) }
    }

    extern "C" fn sfence() {
        // SAFETY: SSE is part of x86-64.
        unsafe { _mm_sfence() }
    }

    /// `FUNCTIONS64[F]` on f64 lanes `L`.
    #[inline(always)]
    fn apply_x64<L: Lanes64, const F: usize>(l: &mut L, x: L::F) -> L::F {
        use super::super::math_xla64::lanes as mx;
        match F {
            0 => mx::exp(l, x),
            1 => mx::expm1(l, x),
            2 => mx::tanh(l, x),
            3 => mx::logistic(l, x),
            4 => mx::sinh(l, x),
            5 => mx::cosh(l, x),
            _ => mx::exp2(l, x),
        }
    }

    /// `FUNCTIONS64[F]` for F ≥ `F64_WHOLE`: the vector lanes' results, and the lanes (`false`) whose
    /// result is the other branch's (`large_x64`).
    #[inline(always)]
    fn part_x64<L: Lanes64, const F: usize>(l: &mut L, x: L::F) -> (L::F, L::M) {
        use super::super::math_xla64::lanes as mx;
        match F {
            7 => mx::log1p(l, x),
            _ => mx::atanh(l, x),
        }
    }

    /// `FUNCTIONS64[F]` (F ≥ `F64_WHOLE`) at an element outside the vector lanes: the C library's log of
    /// 1 + x (log1p), of 1 + x and 1 − x (atanh), as the scalar function computes it there.
    #[inline(always)]
    fn large_x64<const F: usize>(x: f64) -> f64 {
        use super::super::math_xla64 as sx;
        if F == 7 { sx::log1p_large(x) } else { sx::atanh_large(x) }
    }

    /// Whether `FUNCTIONS64[F]` (F < `F64_WHOLE`) runs two vectors at a time (`lanes_pair::Two`): the
    /// functions without branches. expm1 and sinh skip work per vector where no lane needs it, which a
    /// pair can do less often (slower with pairs on uniform [−10, 10]).
    const fn paired(f: usize) -> bool {
        matches!(f, 0 | 2 | 3 | 5 | 6)
    }

    /// Elements a routine with scalar lanes (F ≥ `F64_WHOLE`) takes per round: the vector pass writes all of
    /// them and lists the elements outside the vector lanes (index and input: `src` may be `dst`), branch
    /// free (a branch per vector on which lanes are outside mispredicts at random and stalls the vector
    /// code's long chains); the scalar pass then overwrites those, one call each, in a loop of its own.
    const ROUND: usize = 256;

    /// The listed elements of a round: `dst[at[t]] = large_x64(xs[t])`. Plain scalar code, kept out of the
    /// vector loops (no vector registers to save around the calls, nothing for the vectorizer to scatter).
    #[inline(never)]
    unsafe fn finish_round<const F: usize>(dst: *mut f64, at: &[u64], xs: &[f64]) {
        for (&i, &x) in at.iter().zip(xs) {
            // SAFETY: the caller's indices are below its n.
            unsafe { *dst.add(i as usize) = large_x64::<F>(x) };
        }
    }

    /// `_mm256_permutevar8x32` indices that move the f64 lanes set in a 4-bit mask to the front, in order
    /// (AVX2 has no compress).
    const COMPRESS4: [[i32; 8]; 16] = {
        let mut t = [[0i32; 8]; 16];
        let mut m = 0;
        while m < 16 {
            let (mut k, mut lane) = (0, 0);
            while lane < 4 {
                if m >> lane & 1 != 0 {
                    t[m][2 * k] = 2 * lane as i32;
                    t[m][2 * k + 1] = 2 * lane as i32 + 1;
                    k += 1;
                }
                lane += 1;
            }
            m += 1;
        }
        t
    };

    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn block512_x64<const F: usize>(src: *const f64, dst: *mut f64, n: u64) {
        let n = n as usize;
        let mut i = 0;
        if F >= F64_WHOLE {
            let mut l = Avx512F64;
            // A round's list, with room for a whole vector's store past its last entry.
            let (mut at, mut xs) = ([0u64; ROUND + 8], [0f64; ROUND + 8]);
            let iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
            while i < n {
                let end = (i + ROUND).min(n);
                let mut cnt = 0;
                let mut j = i;
                while j < end {
                    // Masked lanes neither load nor store (no fault past the end) and are not listed.
                    let k: __mmask8 = if end - j >= 8 { 0xff } else { ((1u32 << (end - j)) - 1) as u8 };
                    let x = unsafe { _mm512_maskz_loadu_pd(k, src.add(j)) };
                    let (y, inside) = part_x64::<Avx512F64, F>(&mut l, x);
                    let rest = !inside & k;
                    let idx = _mm512_add_epi64(_mm512_set1_epi64(j as i64), iota);
                    // SAFETY: `cnt + 8 <= ROUND + 8` (cnt counts listed lanes of the round's earlier vectors).
                    unsafe {
                        _mm512_mask_storeu_pd(dst.add(j), k, y);
                        _mm512_storeu_pd(xs.as_mut_ptr().add(cnt), _mm512_maskz_compress_pd(rest, x));
                        _mm512_storeu_si512(at.as_mut_ptr().add(cnt).cast(), _mm512_maskz_compress_epi64(rest, idx));
                    }
                    cnt += rest.count_ones() as usize;
                    j += 8;
                }
                unsafe { finish_round::<F>(dst, &at[..cnt], &xs[..cnt]) };
                i = end;
            }
            return;
        }
        if paired(F) {
            let mut l = Two(Avx512F64);
            while i + 16 <= n {
                let x = unsafe { (_mm512_loadu_pd(src.add(i)), _mm512_loadu_pd(src.add(i + 8))) };
                let y = apply_x64::<Two<Avx512F64>, F>(&mut l, x);
                unsafe {
                    _mm512_storeu_pd(dst.add(i), y.0);
                    _mm512_storeu_pd(dst.add(i + 8), y.1);
                }
                i += 16;
            }
        }
        let mut l = Avx512F64;
        while i + 8 <= n {
            let x = unsafe { _mm512_loadu_pd(src.add(i)) };
            let y = apply_x64::<Avx512F64, F>(&mut l, x);
            unsafe { _mm512_storeu_pd(dst.add(i), y) };
            i += 8;
        }
        if i < n {
            // Masked lanes neither load nor store (no fault past the end).
            let k: __mmask8 = ((1u32 << (n - i)) - 1) as u8;
            let x = unsafe { _mm512_maskz_loadu_pd(k, src.add(i)) };
            let y = apply_x64::<Avx512F64, F>(&mut l, x);
            unsafe { _mm512_mask_storeu_pd(dst.add(i), k, y) };
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn block256_x64<const F: usize>(src: *const f64, dst: *mut f64, n: u64) {
        let n = n as usize;
        let mut i = 0;
        if F >= F64_WHOLE {
            let mut l = Avx2F64;
            let (mut at, mut xs) = ([0u64; ROUND + 4], [0f64; ROUND + 4]);
            let iota = _mm256_set_epi64x(3, 2, 1, 0);
            while i < n {
                let end = (i + ROUND).min(n);
                let mut cnt = 0;
                let mut j = i;
                while j < end {
                    // A short last vector goes through a buffer (its lanes past the end are not listed).
                    let m = (end - j).min(4);
                    let mut buf = [0f64; 4];
                    // SAFETY: `m` elements in bounds of `src` and of `buf`.
                    let x = unsafe {
                        if m == 4 {
                            _mm256_loadu_pd(src.add(j))
                        } else {
                            std::ptr::copy_nonoverlapping(src.add(j), buf.as_mut_ptr(), m);
                            _mm256_loadu_pd(buf.as_ptr())
                        }
                    };
                    let (y, inside) = part_x64::<Avx2F64, F>(&mut l, x);
                    let rest = !(_mm256_movemask_pd(inside) as u32) & ((1u32 << m) - 1);
                    let idx = _mm256_add_epi64(_mm256_set1_epi64x(j as i64), iota);
                    // SAFETY: `cnt + 4 <= ROUND + 4`; `m` elements in bounds of `dst`.
                    unsafe {
                        let p = _mm256_loadu_si256(COMPRESS4[rest as usize].as_ptr().cast());
                        let xc = _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(x), p));
                        _mm256_storeu_pd(xs.as_mut_ptr().add(cnt), xc);
                        _mm256_storeu_si256(at.as_mut_ptr().add(cnt).cast(), _mm256_permutevar8x32_epi32(idx, p));
                        if m == 4 {
                            _mm256_storeu_pd(dst.add(j), y);
                        } else {
                            _mm256_storeu_pd(buf.as_mut_ptr(), y);
                            std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(j), m);
                        }
                    }
                    cnt += rest.count_ones() as usize;
                    j += 4;
                }
                unsafe { finish_round::<F>(dst, &at[..cnt], &xs[..cnt]) };
                i = end;
            }
            return;
        }
        if paired(F) {
            let mut l = Two(Avx2F64);
            while i + 8 <= n {
                let x = unsafe { (_mm256_loadu_pd(src.add(i)), _mm256_loadu_pd(src.add(i + 4))) };
                let y = apply_x64::<Two<Avx2F64>, F>(&mut l, x);
                unsafe {
                    _mm256_storeu_pd(dst.add(i), y.0);
                    _mm256_storeu_pd(dst.add(i + 4), y.1);
                }
                i += 8;
            }
        }
        let mut l = Avx2F64;
        while i + 4 <= n {
            let x = unsafe { _mm256_loadu_pd(src.add(i)) };
            let y = apply_x64::<Avx2F64, F>(&mut l, x);
            unsafe { _mm256_storeu_pd(dst.add(i), y) };
            i += 4;
        }
        if i < n {
            let mut buf = [0f64; 4];
            let rem = n - i;
            // SAFETY: `rem < 4` elements in bounds of both arrays and of `buf`.
            unsafe {
                std::ptr::copy_nonoverlapping(src.add(i), buf.as_mut_ptr(), rem);
                let y = apply_x64::<Avx2F64, F>(&mut l, _mm256_loadu_pd(buf.as_ptr()));
                _mm256_storeu_pd(buf.as_mut_ptr(), y);
                std::ptr::copy_nonoverlapping(buf.as_ptr(), dst.add(i), rem);
            }
        }
    }

    unsafe extern "C" fn entry512_x64<const F: usize>(src: *const f64, dst: *mut f64, n: u64) {
        // SAFETY: installed only when the host has AVX-512F and FMA (`isa`); the caller passes arrays of n.
        unsafe { block512_x64::<F>(src, dst, n) }
    }

    unsafe extern "C" fn entry256_x64<const F: usize>(src: *const f64, dst: *mut f64, n: u64) {
        // SAFETY: installed only when the host has AVX2 and FMA (`isa`); the caller passes arrays of n.
        unsafe { block256_x64::<F>(src, dst, n) }
    }

    pub const AVX512_64: [BlockFn64; 9] = [
        entry512_x64::<0>, entry512_x64::<1>, entry512_x64::<2>, entry512_x64::<3>, entry512_x64::<4>,
        entry512_x64::<5>, entry512_x64::<6>, entry512_x64::<7>, entry512_x64::<8>,
    ];
    pub const AVX2_64: [BlockFn64; 9] = [
        entry256_x64::<0>, entry256_x64::<1>, entry256_x64::<2>, entry256_x64::<3>, entry256_x64::<4>,
        entry256_x64::<5>, entry256_x64::<6>, entry256_x64::<7>, entry256_x64::<8>,
    ];

    pub const FENCE: extern "C" fn() = sfence;
    pub const STREAM512: BlockFn = stream512;
    pub const STREAM256: BlockFn = stream256;

    pub const AVX512: [BlockFn; 22] = [
        entry512::<0>, entry512::<1>, entry512::<2>, entry512::<3>, entry512::<4>, entry512::<5>, entry512::<6>,
        entry512::<7>, entry512_f64::<8>, entry512_f64::<9>, entry512::<10>, entry512::<11>, entry512::<12>,
        entry512::<13>, entry512::<14>, entry512::<15>, entry512::<16>, entry512::<17>, entry512::<18>,
        entry512::<19>, entry512_f64::<20>, entry512_f64::<21>,
    ];
    pub const AVX2: [BlockFn; 22] = [
        entry256::<0>, entry256::<1>, entry256::<2>, entry256::<3>, entry256::<4>, entry256::<5>, entry256::<6>,
        entry256::<7>, entry256_f64::<8>, entry256_f64::<9>, entry256::<10>, entry256::<11>, entry256::<12>,
        entry256::<13>, entry256::<14>, entry256::<15>, entry256::<16>, entry256::<17>, entry256::<18>,
        entry256::<19>, entry256_f64::<20>, entry256_f64::<21>,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 4099th float32 bit pattern plus special values: ~1.05M inputs.
    fn inputs() -> Vec<f32> {
        let mut v: Vec<f32> = (0..=u32::MAX).step_by(4099).map(f32::from_bits).collect();
        v.extend([0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MIN_POSITIVE, 1e-45, -1e-45, 88.7, 89.0,
            -103.9, -104.0, 9.1, -9.1, 1.25, 3.93, -1.0, -0.99999994, 1.0, 2.0, 1.4616321, -2.5, -3.0, 0.5, 6.0,
            5.9999995, 8.0, 2.5, 1.5, -1e7, 1e-30, 0.41421356, -0.29289323, 2.9802322e-8,
            262143.98, 262144.0, -262144.0, 3.0e38, -1e30, 1e7, 0.7853982, 2.3561945, 1.5707964, 2.4414062e-4,
            0.13533528, 0.8646647, 0.86466473, 0.99999994, 1e-20, 1.2e-38, 0.3, 0.9]);
        // Huge and ordinary lanes side by side (the rare path patches only its own lanes).
        for i in 0..64 {
            v.push(if i % 3 == 0 { 1e6 + i as f32 * 1234.5 } else { i as f32 * 0.37 - 11.0 });
        }
        v
    }

    /// The float64 routines give the scalar `math_xla64` functions' bits (the inline code's per-lane calls) on
    /// 2^17 random bit patterns, uniform points at several scales, the functions' edges (exp's clamps, tanh's
    /// |x| = 20, expm1's ½ and 0, sinh's 1), NaN with a payload, ±inf, subnormals and ±0, exp's subnormal and
    /// overflowing results; at every length up to 40 (the masked / buffered tails), about log1p's and atanh's
    /// rounds, in place, with denormals kept and flushed, on both widths where the host has them.
    #[test]
    fn f64_block_routines_match_scalar_bit_for_bit() {
        #[cfg(target_arch = "x86_64")]
        {
            use super::super::math_xla64 as mx;
            let scalar: [fn(f64) -> f64; 9] =
                [mx::exp, mx::expm1, mx::tanh, mx::logistic, mx::sinh, mx::cosh, mx::exp2, mx::log1p, mx::atanh];
            let mut tables: Vec<(&str, [BlockFn64; 9])> = Vec::new();
            if !super::super::vmath::host_fma() {
                return;
            }
            if std::is_x86_feature_detected!("avx512f") {
                tables.push(("avx512", x86::AVX512_64));
            }
            if std::is_x86_feature_detected!("avx2") {
                tables.push(("avx2", x86::AVX2_64));
            }
            let mut xs: Vec<f64> = Vec::new();
            let mut r = 0x9E37_79B9_7F4A_7C15u64;
            let mut next = || {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                r
            };
            for _ in 0..1 << 17 {
                xs.push(f64::from_bits(next()));
            }
            for scale in [1e-3, 0.6, 1.2, 25.0, 800.0, 1100.0] {
                for _ in 0..1 << 15 {
                    let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
                    xs.push((2.0 * u - 1.0) * scale);
                }
            }
            let edges = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 20.0, -20.0, 19.999999999999996, 40.0, -40.0,
                709.782712893384, 709.7827128933841, -708.3964185322641, -745.1332191019411, -745.1332191019412,
                -746.0, 710.0, 1e-300, -1e-300, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, -1e-310,
                f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::from_bits(0x7FF0_0000_0000_1234),
                f64::from_bits(0xFFF8_0000_0000_4321), f64::MAX, f64::MIN, 0.6931471805599453, 1.1102230246251565e-16,
                1024.0, -1075.0, 1023.9999999999999, -1022.0, -1074.0, 0.25, 3.0, -3.0, 0.41421356237309503,
                -0.41421356237309503, 0.414213562373095, -0.9999999999999999, 0.9999999999999999, 1.0000000000000002];
            xs.extend(edges);
            // exp's scaling (two factors for the scalar's four): where e·2^n is subnormal, near the overflow,
            // and around the n where ⌊n/2⌋ and the scalar's n >> 2 change; plus consecutive doubles there.
            for (lo, hi) in [(-746.0, -700.0), (700.0, 711.0), (-0.1, 0.1), (-1.5, 1.5)] {
                for _ in 0..1 << 15 {
                    let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
                    xs.push(lo + (hi - lo) * u);
                }
            }
            for base in [-708.3964185322641f64, -744.4400719213812, -745.1332191019411, 709.782712893384] {
                xs.extend((0..512u64).map(|d| f64::from_bits(base.to_bits() - 256 + d)));
            }
            // Runs with and without flushing denormals (cranax executes with FTZ/DAZ set).
            for flush in [false, true] {
                let _env = flush.then(super::super::fpenv::FlushDenormals::new);
                for (name, table) in &tables {
                    for (j, &f) in FUNCTIONS64.iter().enumerate() {
                        let mut got = vec![0f64; xs.len()];
                        // SAFETY: both arrays hold xs.len() elements.
                        unsafe { table[j](xs.as_ptr(), got.as_mut_ptr(), xs.len() as u64) };
                        for (i, &x) in xs.iter().enumerate() {
                            let want = scalar[j](x);
                            assert_eq!(got[i].to_bits(), want.to_bits(), "{name} {f:?}({x:e} = {:#x}) flush {flush}", x.to_bits());
                        }
                        // Lengths about the scalar-lane routines' rounds, in place.
                        for n in [255usize, 256, 257, 517] {
                            let mut buf = xs[..n].to_vec();
                            let want: Vec<u64> = buf.iter().map(|&x| scalar[j](x).to_bits()).collect();
                            // SAFETY: n elements, in place.
                            unsafe { table[j](buf.as_ptr(), buf.as_mut_ptr(), n as u64) };
                            assert_eq!(buf.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want, "{name} {f:?} in place, {n}");
                        }
                        // Every tail length, and in place.
                        for n in 0..40usize {
                            let mut buf: Vec<f64> = edges[..n.min(edges.len())].to_vec();
                            buf.extend(xs[1000..1000 + n - buf.len()].iter());
                            let want: Vec<u64> = buf.iter().map(|&x| scalar[j](x).to_bits()).collect();
                            let mut pad = buf.clone();
                            pad.push(7.0);
                            // SAFETY: n elements, in place.
                            unsafe { table[j](pad.as_ptr(), pad.as_mut_ptr(), n as u64) };
                            let gotb: Vec<u64> = pad[..n].iter().map(|v| v.to_bits()).collect();
                            assert_eq!(gotb, want, "{name} {f:?} length {n}");
                            assert_eq!(pad[n], 7.0, "{name} {f:?} wrote past length {n}");
                        }
                    }
                }
            }
        }
    }

    /// The streaming copy keeps every bit (NaN payloads too) at every length and destination alignment.
    #[test]
    fn stream_copies_bits_at_any_alignment() {
        #[cfg(target_arch = "x86_64")]
        {
            let mut tables: Vec<BlockFn> = Vec::new();
            if std::is_x86_feature_detected!("avx512f") {
                tables.push(x86::STREAM512);
            }
            if std::is_x86_feature_detected!("avx2") {
                tables.push(x86::STREAM256);
            }
            let src: Vec<f32> = (0..300u32).map(|i| f32::from_bits(0x7fc0_0001u32.wrapping_mul(i + 1))).collect();
            for s in &tables {
                for off in 0..20 {
                    for n in [0usize, 1, 5, 15, 16, 17, 33, 100, 250] {
                        let mut dst = vec![0f32; 300];
                        // SAFETY: off + n <= 270 < 300 elements in both.
                        unsafe { s(src.as_ptr(), dst.as_mut_ptr().add(off), n as u64) };
                        (x86::FENCE)();
                        for i in 0..300 {
                            let want = if i >= off && i < off + n { src[i - off].to_bits() } else { 0 };
                            assert_eq!(dst[i].to_bits(), want, "offset {off} length {n} element {i}");
                        }
                    }
                }
            }
        }
    }

    /// pow's routines (the `powf` loop, and the AVX-512 one where the host has it) give the inline code's bits (its per-lane
    /// `powf` call) on edge grids and mixed inputs, at every length, in place included; the f32-lane
    /// `math_f32::pow` (not wired) stays within 1.5 ulp of the f64 result.
    #[test]
    fn binary_block_routines_match_inline_code_bit_for_bit() {
        let xs = inputs();
        let special = [0.0f32, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, f32::INFINITY,
            f32::NEG_INFINITY, f32::NAN, 1e-45, -1e-45, 1.1754942e-38, 1.1754944e-38, 8388609.0, 16777216.0, 1e30,
            -1e30, 1.0000001, 0.99999994, 88.0, -88.0, 104.0, -104.0, 150.0, -150.0, 1e-30];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for &x in &special {
            for &y in &special {
                a.push(x);
                b.push(y);
            }
        }
        for i in 0..xs.len() {
            a.push(xs[i]);
            b.push(xs[(i * 7919 + 13) % xs.len()]);
            a.push(xs[i].abs().sqrt().sqrt());
            b.push(special[i % special.len()]);
        }
        let p = crate::backend::cpu::math::symbol_ptr(MathFn::Pow, crate::ir::DType::F32).expect("powf");
        // SAFETY: the symbol is an `extern "C" fn(f32, f32) -> f32`.
        let lane: extern "C" fn(f32, f32) -> f32 = unsafe { std::mem::transmute(p) };
        let mut got = vec![0f32; a.len()];
        // SAFETY: the three arrays hold a.len() elements.
        unsafe { pow_strip(a.as_ptr(), b.as_ptr(), got.as_mut_ptr(), a.len() as u64) };
        for i in 0..a.len() {
            let w = lane(a[i], b[i]);
            assert_eq!(got[i].to_bits(), w.to_bits(), "pow({:e}, {:e}) = {:e}, per lane {w:e}", a[i], b[i], got[i]);
        }
        for (name, r) in pow_routines() {
            let mut got = vec![0f32; a.len()];
            // SAFETY: the three arrays hold a.len() elements.
            unsafe { r(a.as_ptr(), b.as_ptr(), got.as_mut_ptr(), a.len() as u64) };
            for i in 0..a.len() {
                let w = lane(a[i], b[i]);
                assert_eq!(got[i].to_bits(), w.to_bits(), "{name} pow({:e}, {:e}) = {:e}, powf {w:e}", a[i], b[i], got[i]);
            }
            for n in 0..=40usize {
                let mut dst: Vec<f32> = a[..n].to_vec();
                // SAFETY: in place over n elements.
                unsafe { r(dst.as_ptr(), b.as_ptr(), dst.as_mut_ptr(), n as u64) };
                for i in 0..n {
                    assert_eq!(dst[i].to_bits(), lane(a[i], b[i]).to_bits(), "{name} length {n} element {i}");
                }
                let mut dst: Vec<f32> = b[..n].to_vec();
                // SAFETY: in place (the second operand) over n elements.
                unsafe { r(a.as_ptr(), dst.as_ptr(), dst.as_mut_ptr(), n as u64) };
                for i in 0..n {
                    assert_eq!(dst[i].to_bits(), lane(a[i], b[i]).to_bits(), "{name} length {n} element {i} (in b)");
                }
            }
        }
        if crate::backend::cpu::vmath::host_fma() {
            let p = crate::backend::cpu::mathlib::routine(MathFn::Pow, false).expect("inline routine");
            // SAFETY: `routine(Pow, false)` is an `(f32, f32) -> f32` function in the host's C calling convention.
            let f32_lanes: extern "C" fn(f32, f32) -> f32 = unsafe { std::mem::transmute(p) };
            for i in 0..a.len() {
                let (x, y) = (a[i], b[i]);
                // (the large exponents added for the f64-lane routines are beyond its 1.5-ulp range)
                if x.is_subnormal() || y.is_subnormal() || y.abs() > 32.0 {
                    continue;
                }
                let want = (x as f64).powf(y as f64);
                let got = f32_lanes(x, y);
                if want.is_finite() && want.abs() >= f32::MIN_POSITIVE as f64 && want.abs() <= f32::MAX as f64 {
                    let ulp = 2f64.powi((want.abs().log2().floor() as i32) - 23);
                    assert!(((got as f64) - want).abs() <= 1.5 * ulp, "f32-lane pow({x:e}, {y:e}) = {got:e}, want {want:e}");
                } else if want.is_nan() {
                    assert!(got.is_nan(), "f32-lane pow({x:e}, {y:e}) = {got:e}, want NaN");
                }
            }
        }
    }

    /// The host's pow routines (each lane width it has), named.
    /// atan2's routines give the inline code's bits (its scalar routine, `mathlib`) on the pairs of every
    /// special value and on mixed inputs, at every length up to 40 and in place.
    #[test]
    fn atan2_block_routines_match_inline_code_bit_for_bit() {
        #[cfg(target_arch = "x86_64")]
        {
            if !crate::backend::cpu::vmath::host_fma() {
                return;
            }
            let xs = inputs();
            let special = [0.0f32, -0.0, 1.0, -1.0, 0.5, -2.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e-45,
                -1e-45, 1.1754942e-38, 1.1754944e-38, 1e30, -1e30, 1e-30, 3.0e38, -3.0e38, 2.5e-20, 4e19];
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for &x in &special {
                for &y in &special {
                    a.push(x);
                    b.push(y);
                }
            }
            for i in 0..xs.len() {
                a.push(xs[i]);
                b.push(xs[(i * 7919 + 13) % xs.len()]);
            }
            let p = crate::backend::cpu::mathlib::routine(MathFn::Atan2, false).expect("inline routine");
            // SAFETY: `routine(Atan2, false)` is an `(f32, f32) -> f32` function in the host's C calling convention.
            let lane: extern "C" fn(f32, f32) -> f32 = unsafe { std::mem::transmute(p) };
            let mut routines: Vec<(&str, BlockFn2)> = Vec::new();
            if std::is_x86_feature_detected!("avx512f") {
                routines.push(("avx512", x86::atan2_entry512));
            }
            if std::is_x86_feature_detected!("avx2") {
                routines.push(("avx2", x86::atan2_entry256));
            }
            for (name, r) in routines {
                let mut got = vec![0f32; a.len()];
                // SAFETY: the three arrays hold a.len() elements.
                unsafe { r(a.as_ptr(), b.as_ptr(), got.as_mut_ptr(), a.len() as u64) };
                // (bits, NaNs as one NaN: which operand's payload x + y keeps is the instruction encoding's)
                let key = |v: f32| if v.is_nan() { u32::MAX } else { v.to_bits() };
                for i in 0..a.len() {
                    let w = lane(a[i], b[i]);
                    assert_eq!(key(got[i]), key(w), "{name} atan2({:e}, {:e}) = {:e}, inline {w:e}", a[i], b[i], got[i]);
                }
                for n in 0..=40usize {
                    let mut dst: Vec<f32> = a[400..400 + n].to_vec();
                    // SAFETY: in place over n elements.
                    unsafe { r(dst.as_ptr(), b[400..].as_ptr(), dst.as_mut_ptr(), n as u64) };
                    for i in 0..n {
                        assert_eq!(key(dst[i]), key(lane(a[400 + i], b[400 + i])), "{name} length {n} element {i}");
                    }
                }
            }
        }
    }

    fn pow_routines() -> Vec<(&'static str, BlockFn2)> {
        let mut v: Vec<(&'static str, BlockFn2)> = Vec::new();
        #[cfg(target_arch = "x86_64")]
        if crate::backend::cpu::vmath::host_fma() {
            if std::is_x86_feature_detected!("avx512f") {
                v.push(("avx512", x86::pow_entry512));
            }
            if std::is_x86_feature_detected!("avx2") {
                v.push(("avx2", x86::pow_entry256));
            }
        }
        v
    }

    /// pow's routines against `powf` bit for bit over 1e7 random pairs per lane width (bases over all finite
    /// floats, over [0, 4] and over [2^-20, 2^20], negative ones among them; exponents over [-10, 10], [-1, 1],
    /// all magnitudes in [2^-10, 2^10] and half-integers), and how many fast lanes a random pair takes.
    #[test]
    fn pow_routines_give_powf_bits_on_1e7_random_pairs() {
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let n = 10_000_000usize;
        let (mut a, mut b) = (vec![0f32; n], vec![0f32; n]);
        for i in 0..n {
            let r = rnd();
            let (lo, hi) = (r as u32, (r >> 32) as u32);
            let x = match i % 3 {
                0 => f32::from_bits((lo & 0x007f_ffff) | ((hi % 40 + 107) << 23)),
                1 => (lo >> 8) as f32 / 16777216.0 * 4.0,
                _ => f32::from_bits((lo & 0x7fff_ffff) % 0x7f80_0000),
            };
            let x = if hi % 7 == 0 { -x } else { x };
            let r = rnd();
            let (lo, hi) = (r as u32, (r >> 32) as u32);
            let y = match i % 4 {
                0 => ((lo >> 8) as f32 / 16777216.0 - 0.5) * 20.0,
                1 => ((lo >> 8) as f32 / 16777216.0 - 0.5) * 2.0,
                2 => f32::from_bits((lo & 0x807f_ffff) | ((hi % 20 + 117) << 23)),
                _ => ((lo >> 8) % 64) as f32 * 0.5 - 16.0,
            };
            a[i] = x;
            b[i] = y;
        }
        // (the inline code's per-lane wrapper reads subnormal operands as zeros)
        let daz = crate::backend::cpu::math::daz32;
        let want: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| daz(x).powf(daz(y))).collect();
        for (name, r) in pow_routines() {
            let mut got = vec![0f32; n];
            // SAFETY: the three arrays hold n elements.
            unsafe { r(a.as_ptr(), b.as_ptr(), got.as_mut_ptr(), n as u64) };
            let diff: Vec<usize> = (0..n).filter(|&i| got[i].to_bits() != want[i].to_bits()).collect();
            for &i in diff.iter().take(5) {
                eprintln!("{name}: pow({:e}, {:e}) = {:e}, powf {:e}", a[i], b[i], got[i], want[i]);
            }
            assert!(diff.is_empty(), "{name}: {} of {n} differ from powf", diff.len());
        }
    }

    /// Each host routine gives the inline (Cranelift) code's bits for every input, at every length
    /// (0..=40 exercises the masked / buffered tails).
    #[test]
    fn block_routines_match_inline_code_bit_for_bit() {
        #[cfg(target_arch = "x86_64")]
        {
            if !crate::backend::cpu::vmath::host_fma() {
                return;
            }
            let mut tables: Vec<(&str, [BlockFn; FUNCTIONS.len()])> = Vec::new();
            if std::is_x86_feature_detected!("avx512f") {
                tables.push(("avx512", x86::AVX512));
            }
            if std::is_x86_feature_detected!("avx2") {
                tables.push(("avx2", x86::AVX2));
            }
            let xs = inputs();
            for (fi, &f) in FUNCTIONS.iter().enumerate() {
                let p = crate::backend::cpu::mathlib::routine(f, false).expect("inline routine");
                // SAFETY: `routine(f, false)` is an `f32 -> f32` function in the host's C calling convention.
                let inline: extern "C" fn(f32) -> f32 = unsafe { std::mem::transmute(p) };
                let want: Vec<u32> = xs.iter().map(|&x| inline(x).to_bits()).collect();
                for (name, table) in &tables {
                    let mut got = vec![0f32; xs.len()];
                    // SAFETY: both arrays hold xs.len() elements.
                    unsafe { table[fi](xs.as_ptr(), got.as_mut_ptr(), xs.len() as u64) };
                    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                        assert_eq!(g.to_bits(), w, "{name} {f:?}({:e}) = {g:e}, inline gives {:e}", xs[i], f32::from_bits(w));
                    }
                    for n in 0..=40usize {
                        let src: Vec<f32> = (0..n).map(|i| xs[i * 7919 % xs.len()]).collect();
                        let mut dst = src.clone();
                        // SAFETY: in place over n elements.
                        unsafe { table[fi](dst.as_ptr(), dst.as_mut_ptr(), n as u64) };
                        for (i, &g) in dst.iter().enumerate() {
                            assert_eq!(g.to_bits(), inline(src[i]).to_bits(), "{name} {f:?} length {n} element {i}");
                        }
                    }
                }
            }
        }
    }
}
