//! Float matrix-vector products on a row-major matrix, without the gemm crate: `A @ x` (each output the dot
//! product of one contiguous row with `x`) and `x @ A` (each output a chain down one column, the rows of `A`
//! streamed as axpys). Both are bound by memory: the matrix is read once. gemm's own gemv runs them on one
//! thread; here the outputs are cut into chunks (rows of `A @ x`, columns of `x @ A`), one contiguous run of
//! them per thread (`threads::share_chunks`), so a second core helps as soon as it wakes and the bits
//! never depend on the thread count (each output is computed by the same code whatever thread runs its
//! chunk).
//!
//! The arithmetic order is the one the gemm crate (0.19) gave these products before, so values did not
//! change: `A @ x` per row is gemm's `mixed_gemv_rowmajor` — 8 vector accumulators of the host's lane width
//! (16/8 float32 lanes on AVX-512/AVX2, 8/4 float64) over blocks of 8 vectors, summed as a tree
//! ((0+1)+(2+3))+((4+5)+(6+7)), then the remaining whole vectors into that sum, its lanes added in order,
//! then the scalar tail; every multiply-add fused. `x @ A` per output is gemm's `mixed_gemv_colmajor`:
//! `x[0]·A[0, j]`, then one fused multiply-add per row in order — XLA:CPU's bits too (JAX 0.10.2 at
//! 256–3000, float32 and float64), and independent of the lane width.
// The x86 kernels are cfg-gated out elsewhere: what only they use is dead there, not wrong.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_mut, unused_variables, unused_macros, unreachable_code))]

use super::elem::Float as Real;
use super::small_dot::Isa;

/// Products of at least this many multiply-adds (a 512² float32 matrix, 1 MiB) share their chunks with
/// the pool's threads.
pub const PAR_WORK: usize = 1 << 18;
/// `A @ x` on matrices of at least this many bytes prefetches, while it reads two rows, the same block of the
/// next two into L2: four rows then stream from memory at once with the registers of two. Measured on one core
/// of AMD Zen 4 (32 MB L3 shared with other jobs): 2048² float32 0.49–0.70x the time, 1448²/2048² float64
/// 0.70–0.75x, both ISAs; at 8 MB (1024² float64, 1448² float32) 0.9–1.0x; in cache (≤ 4 MB) the hints cost
/// up to 15% (500²), hence the bound.
const STREAM_BYTES: usize = 12 << 20;
/// Multiply-adds per chunk (about 256 KiB of float32 matrix): the grain at which a thread done with its own
/// run takes over the rest of another's (`share_chunks`). Within a run, rows stream in order whatever the
/// chunk; 64 KiB chunks measured 7–12% slower than 256 KiB ones at 2048² float32 on two threads (Zen 4, AVX2
/// kernel): more hand-overs where the runs meet.
const CHUNK_WORK: usize = 1 << 16;

/// `Σ_l a[l]·x[l]` in gemm's `mixed_gemv_rowmajor` order with `W` lanes (see the module doc).
///
/// SAFETY: `a` and `x` hold `k` readable elements.
#[inline(always)]
unsafe fn dot<T: Real, const W: usize>(k: usize, a: *const T, x: *const T) -> T {
    let (k8, k1) = (k / (8 * W) * (8 * W), k / W * W);
    let mut acc = [[T::ZERO; W]; 8];
    let mut d = 0;
    while d < k8 {
        for (j, acc) in acc.iter_mut().enumerate() {
            for (v, acc) in acc.iter_mut().enumerate() {
                let i = d + j * W + v;
                *acc = (*a.add(i)).fma(*x.add(i), *acc);
            }
        }
        d += 8 * W;
    }
    let add = |p: [T; W], q: [T; W]| -> [T; W] { std::array::from_fn(|v| p[v] + q[v]) };
    let mut r = add(add(add(acc[0], acc[1]), add(acc[2], acc[3])), add(add(acc[4], acc[5]), add(acc[6], acc[7])));
    while d < k1 {
        for (v, r) in r.iter_mut().enumerate() {
            *r = (*a.add(d + v)).fma(*x.add(d + v), *r);
        }
        d += W;
    }
    let mut s = r[0];
    for &r in &r[1..] {
        s = s + r;
    }
    while d < k {
        s = (*a.add(d)).fma(*x.add(d), s);
        d += 1;
    }
    s
}

/// Rows `[lo, hi)` of `y = A @ x`.
///
/// SAFETY: rows `lo..hi` of `a` (row stride `lda`, `k` contiguous elements each), `x[..k]` and `y[lo..hi]`
/// are valid; `y` overlaps neither operand.
#[inline(always)]
unsafe fn rows<T: Real, const W: usize>(lo: usize, hi: usize, k: usize, a: *const T, lda: usize, x: *const T, y: *mut T) {
    for i in lo..hi {
        *y.add(i) = dot::<T, W>(k, a.add(i * lda), x);
    }
}

/// Columns `[lo, hi)` of `y = x @ A`: `y[j] = x[0]·A[0, j]`, then `y[j] = fma(A[l, j], x[l], y[j])` for each
/// row `l` in order (rows streamed across the chunk, `y`'s chunk staying in L1, as gemm's gemv does). Four
/// rows per pass over `y` (the same chain per element): four streams from memory at once, as OpenBLAS's
/// gemv_n reads four columns, where one stream left a core at 2/3 of OpenBLAS's speed on a 36 MB matrix
/// (AVX2-only Zen3), and a quarter of the loads and stores of `y`.
///
/// SAFETY: `A[l, lo..hi]` (row stride `lda`) for `l < k`, `x[l * incx]` and `y[lo..hi]` are valid; `k >= 1`;
/// `y` overlaps neither operand.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn cols<T: Real>(lo: usize, hi: usize, k: usize, a: *const T, lda: usize, x: *const T, incx: isize, y: *mut T) {
    let y = std::slice::from_raw_parts_mut(y.add(lo), hi - lo);
    let row = |l: usize| std::slice::from_raw_parts(a.add(l * lda + lo), hi - lo);
    let xs = |l: usize| *x.offset(l as isize * incx);
    let x0 = *x;
    for (y, &a) in y.iter_mut().zip(row(0)) {
        *y = a * x0;
    }
    let mut l = 1;
    while l + 4 <= k {
        let (x1, x2, x3, x4) = (xs(l), xs(l + 1), xs(l + 2), xs(l + 3));
        let rows = row(l).iter().zip(row(l + 1)).zip(row(l + 2)).zip(row(l + 3));
        for (y, (((&a1, &a2), &a3), &a4)) in y.iter_mut().zip(rows) {
            *y = a4.fma(x4, a3.fma(x3, a2.fma(x2, a1.fma(x1, *y))));
        }
        l += 4;
    }
    for l in l..k {
        let xl = xs(l);
        for (y, &a) in y.iter_mut().zip(row(l)) {
            *y = a.fma(xl, *y);
        }
    }
}

/// `rows` with explicit vectors (LLVM vectorized the generic float64 `dot` two lanes wide, at 0.6x gemm's
/// speed): the same operations in the same order per row, several rows side by side.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    macro_rules! rows_impl {
        ($name:ident, $feat:literal, $t:ty, $v:ty, $w:literal, $g:literal, $load:ident, $fma:ident, $add:ident, $zero:ident, $store:ident) => {
            /// SAFETY: as `super::rows`; the host has the target features.
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn $name(lo: usize, hi: usize, k: usize, a: *const $t, lda: usize, x: *const $t, y: *mut $t, stream: bool) {
                const W: usize = $w;
                /// Rows `i..i + G`, each with its own accumulators in the order of `super::dot`. Their blocks of
                /// 8 vectors two rows per pass (two streams from memory at once and one load of `x` for both;
                /// one stream left a core at 2/3 of OpenBLAS's speed on matrices out of cache), then the tails
                /// of all `G` rows side by side (tree sum, whole vectors, lanes in order, scalar tail), so that
                /// their dependent chains overlap rather than follow each other.
                #[target_feature(enable = $feat)]
                #[inline]
                #[allow(clippy::too_many_arguments)]
                unsafe fn group<const G: usize>(i: usize, k: usize, a: *const $t, lda: usize, x: *const $t, y: *mut $t, stream: bool) {
                    let (k8, k1) = (k / (8 * W) * (8 * W), k / W * W);
                    let row = |g: usize| a.add((i + g) * lda);
                    let mut r: [$v; G] = [$zero(); G];
                    let mut p = 0;
                    while p < G {
                        let two = p + 1 < G;
                        let (a0, a1) = (row(p), row(if two { p + 1 } else { p }));
                        let mut acc0: [$v; 8] = [$zero(); 8];
                        let mut acc1: [$v; 8] = [$zero(); 8];
                        let mut d = 0;
                        while d < k8 {
                            if stream {
                                // The same block of the next two rows into L2 (a hint: never faults, changes no
                                // value), so that four rows stream from memory at once (see `STREAM_BYTES`).
                                for q in [a0, a1] {
                                    let next = q.wrapping_add(2 * lda + d) as *const i8;
                                    for c in 0..8 * W * std::mem::size_of::<$t>() / 64 {
                                        _mm_prefetch::<_MM_HINT_T1>(next.wrapping_add(c * 64));
                                    }
                                }
                            }
                            for j in 0..8 {
                                let xv = $load(x.add(d + j * W));
                                acc0[j] = $fma($load(a0.add(d + j * W)), xv, acc0[j]);
                                if two {
                                    acc1[j] = $fma($load(a1.add(d + j * W)), xv, acc1[j]);
                                }
                            }
                            d += 8 * W;
                        }
                        let tree = |c: &[$v; 8]| $add($add($add(c[0], c[1]), $add(c[2], c[3])), $add($add(c[4], c[5]), $add(c[6], c[7])));
                        r[p] = tree(&acc0);
                        if two {
                            r[p + 1] = tree(&acc1);
                        }
                        p += 2;
                    }
                    let mut d = k8;
                    while d < k1 {
                        let xv = $load(x.add(d));
                        for g in 0..G {
                            r[g] = $fma($load(row(g).add(d)), xv, r[g]);
                        }
                        d += W;
                    }
                    let mut lanes = [[0.0 as $t; W]; G];
                    for g in 0..G {
                        $store(lanes[g].as_mut_ptr(), r[g]);
                    }
                    let mut s: [$t; G] = std::array::from_fn(|g| lanes[g][0]);
                    for l in 1..W {
                        for g in 0..G {
                            s[g] += lanes[g][l];
                        }
                    }
                    while d < k {
                        let xd = *x.add(d);
                        for g in 0..G {
                            s[g] = (*row(g).add(d)).mul_add(xd, s[g]);
                        }
                        d += 1;
                    }
                    for g in 0..G {
                        *y.add(i + g) = s[g];
                    }
                }
                let mut i = lo;
                while i + $g <= hi {
                    group::<$g>(i, k, a, lda, x, y, stream);
                    i += $g;
                }
                if i + 2 <= hi {
                    group::<2>(i, k, a, lda, x, y, stream);
                    i += 2;
                }
                if i < hi {
                    group::<1>(i, k, a, lda, x, y, stream);
                }
            }
        };
    }
    // Rows per group: two (`G = 2`) on both ISAs. Four rows' tails side by side ran 4–13% faster at 256²–500² in a
    // stand-alone build (AVX-512) but 2–7% slower in cranax's (a jitted power iteration, 500² float32), and four
    // rows' blocks in one pass (33 AVX-512 registers) spilled differently from build to build (0–10% either way):
    // the group width stays a parameter, at two.
    rows_impl!(rows_f32_avx2, "avx2,fma", f32, __m256, 8, 2, _mm256_loadu_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_setzero_ps, _mm256_storeu_ps);
    rows_impl!(rows_f64_avx2, "avx2,fma", f64, __m256d, 4, 2, _mm256_loadu_pd, _mm256_fmadd_pd, _mm256_add_pd, _mm256_setzero_pd, _mm256_storeu_pd);
    rows_impl!(rows_f32_avx512, "avx512f,avx2,fma", f32, __m512, 16, 2, _mm512_loadu_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_setzero_ps, _mm512_storeu_ps);
    rows_impl!(rows_f64_avx512, "avx512f,avx2,fma", f64, __m512d, 8, 2, _mm512_loadu_pd, _mm512_fmadd_pd, _mm512_add_pd, _mm512_setzero_pd, _mm512_storeu_pd);
}

/// One instantiation per instruction set, so LLVM vectorizes `x @ A`'s columns with that width (the
/// arithmetic per element is the same in each; only `A @ x`'s lane count, gemm's, differs).
macro_rules! isa_variant {
    ($name:ident, $feat:literal, $r32:ident, $r64:ident) => {
        mod $name {
            use super::cols;
            pub use super::x86::{$r32 as rows_f32, $r64 as rows_f64};
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn cols_f32(
                lo: usize, hi: usize, k: usize, a: *const f32, lda: usize, x: *const f32, incx: isize, y: *mut f32,
            ) {
                cols::<f32>(lo, hi, k, a, lda, x, incx, y)
            }
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn cols_f64(
                lo: usize, hi: usize, k: usize, a: *const f64, lda: usize, x: *const f64, incx: isize, y: *mut f64,
            ) {
                cols::<f64>(lo, hi, k, a, lda, x, incx, y)
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
isa_variant!(avx512, "avx512f,avx2,fma", rows_f32_avx512, rows_f64_avx512);
#[cfg(target_arch = "x86_64")]
isa_variant!(avx2, "avx2,fma", rows_f32_avx2, rows_f64_avx2);

/// Without AVX2+FMA: gemm's scalar fallback reduces in other orders, so these hosts keep their values only
/// up to rounding; `mul_add` is still one rounding (a C library call there).
mod portable {
    use super::{cols, rows};
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn rows_f32(lo: usize, hi: usize, k: usize, a: *const f32, lda: usize, x: *const f32, y: *mut f32, _: bool) {
        rows::<f32, 4>(lo, hi, k, a, lda, x, y)
    }
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn rows_f64(lo: usize, hi: usize, k: usize, a: *const f64, lda: usize, x: *const f64, y: *mut f64, _: bool) {
        rows::<f64, 2>(lo, hi, k, a, lda, x, y)
    }
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn cols_f32(lo: usize, hi: usize, k: usize, a: *const f32, lda: usize, x: *const f32, incx: isize, y: *mut f32) {
        cols::<f32>(lo, hi, k, a, lda, x, incx, y)
    }
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn cols_f64(lo: usize, hi: usize, k: usize, a: *const f64, lda: usize, x: *const f64, incx: isize, y: *mut f64) {
        cols::<f64>(lo, hi, k, a, lda, x, incx, y)
    }
}

/// One float matrix-vector product, as addresses (so that pool threads may take chunks of it).
#[derive(Clone, Copy)]
struct Job {
    f64: bool,
    isa: Isa,
    /// `A @ x` (outputs are rows) or `x @ A` (outputs are columns).
    by_rows: bool,
    k: usize,
    a: usize,
    lda: usize,
    x: usize,
    incx: isize,
    y: usize,
    /// Outputs per chunk, and their count.
    chunk: usize,
    outs: usize,
    /// `A @ x` on a matrix of at least `STREAM_BYTES`: prefetch the next rows.
    stream: bool,
}

impl Job {
    /// Outputs `[lo, hi)`.
    ///
    /// SAFETY: as `gemv`/`gevm` for this job.
    unsafe fn run(&self, lo: usize, hi: usize) {
        let (k, lda, incx, stream) = (self.k, self.lda, self.incx, self.stream);
        macro_rules! go {
            ($t:ty, $rows:ident, $cols:ident) => {{
                let (a, x, y) = (self.a as *const $t, self.x as *const $t, self.y as *mut $t);
                match (self.isa, self.by_rows) {
                    #[cfg(target_arch = "x86_64")]
                    (Isa::Avx512, true) => avx512::$rows(lo, hi, k, a, lda, x, y, stream),
                    #[cfg(target_arch = "x86_64")]
                    (Isa::Avx512, false) => avx512::$cols(lo, hi, k, a, lda, x, incx, y),
                    #[cfg(target_arch = "x86_64")]
                    (Isa::Avx2, true) => avx2::$rows(lo, hi, k, a, lda, x, y, stream),
                    #[cfg(target_arch = "x86_64")]
                    (Isa::Avx2, false) => avx2::$cols(lo, hi, k, a, lda, x, incx, y),
                    (_, true) => portable::$rows(lo, hi, k, a, lda, x, y, stream),
                    (_, false) => portable::$cols(lo, hi, k, a, lda, x, incx, y),
                }
            }};
        }
        if self.f64 {
            go!(f64, rows_f64, cols_f64)
        } else {
            go!(f32, rows_f32, cols_f32)
        }
    }
}

/// Runs `job` over all its outputs: alone below `PAR_WORK`, else in chunks shared by this thread and up to
/// `num_threads() - 1` pool threads (`share_chunks`: a contiguous run each, the rest taken over when done).
fn execute(job: Job, work: usize) {
    let threaded = work >= PAR_WORK;
    let helpers = if threaded { crate::backend::cpu::threads::num_threads().saturating_sub(1) } else { 0 };
    let chunks = job.outs.div_ceil(job.chunk);
    // SAFETY (both calls): the caller's contract (`gemv`/`gevm`); chunks write disjoint outputs, and
    // `share_chunks` returns only once every chunk is done, so the buffers outlive every part.
    if helpers == 0 || chunks < 2 {
        return unsafe { job.run(0, job.outs) };
    }
    crate::backend::cpu::threads::share_chunks(chunks, helpers, move |c| unsafe {
        job.run(c * job.chunk, ((c + 1) * job.chunk).min(job.outs))
    });
}

/// Outputs per chunk: about `CHUNK_WORK` multiply-adds, a multiple of `align` outputs.
fn chunk(k: usize, align: usize) -> usize {
    (CHUNK_WORK / k.max(1)).div_ceil(align).max(1) * align
}

/// `y[i] = Σ_l A[i, l]·x[l]` for `i < m`, rows of `A` contiguous (row stride `lda`), `x` contiguous.
///
/// SAFETY: `A[i, l]` at `a + i*lda + l` for `i < m`, `l < k`, `x[..k]`, `y[..m]` valid; `y` overlaps
/// neither; `isa` is one the host supports.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemv<T: Real>(isa: Isa, m: usize, k: usize, a: *const T, lda: usize, x: *const T, y: *mut T) {
    let f64 = std::mem::size_of::<T>() == 8;
    let stream = m.saturating_mul(lda).saturating_mul(std::mem::size_of::<T>()) >= STREAM_BYTES;
    let job = Job { f64, isa, by_rows: true, k, a: a as usize, lda, x: x as usize, incx: 1, y: y as usize, chunk: chunk(k, 8), outs: m, stream };
    execute(job, m.saturating_mul(k));
}

/// `y[j] = Σ_l x[l·incx]·A[l, j]` for `j < n`, rows of `A` contiguous (row stride `lda`); `k >= 1`.
///
/// SAFETY: `A[l, j]` at `a + l*lda + j` for `l < k`, `j < n`, `x[l*incx]` for `l < k`, `y[..n]` valid; `y`
/// overlaps neither; `isa` is one the host supports.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gevm<T: Real>(isa: Isa, n: usize, k: usize, a: *const T, lda: usize, x: *const T, incx: isize, y: *mut T) {
    let f64 = std::mem::size_of::<T>() == 8;
    // Column chunks, two per thread: each thread streams its slice of every row, four rows at a time, as
    // OpenBLAS's threads do. (On one core, slices of rows far apart defeat the prefetchers: whole rows
    // there, `execute`.) At least 256 columns, whole cache lines.
    let threads = crate::backend::cpu::threads::num_threads();
    let chunk = n.div_ceil(2 * threads).next_multiple_of(16).max(256);
    let job = Job { f64, isa, by_rows: false, k, a: a as usize, lda, x: x as usize, incx, y: y as usize, chunk, outs: n, stream: false };
    execute(job, n.saturating_mul(k));
}
