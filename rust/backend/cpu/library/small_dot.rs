//! Small float products without the gemm crate: `out[i, j] = sum_l a[i, l] * b[l, j]` when the rhs rows are
//! contiguous along `j` (the vector-matrix products of an RNN cell, `x @ W`). For such sizes gemm's packing
//! and dispatch cost more than the arithmetic; here each block of output columns accumulates in registers
//! over `l` (a chain of fused multiply-adds per element, in `l` order), vectorized along `j`.
//!
//! Every element is the same FMA chain whatever the vector width, so the AVX-512, AVX2 and portable
//! versions agree bit for bit on machines with FMA; without FMA (pre-2013 x86) the portable version rounds
//! the product separately.
// The x86 kernels are cfg-gated out elsewhere: what only they use is dead there, not wrong.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_mut, unused_variables, unused_macros, unreachable_code))]

/// The element types handled here.
pub trait Float: Copy + 'static {
    const ZERO: Self;
    /// `self * b + c`, fused when `FMA` (one rounding), else multiply then add.
    fn madd<const FMA: bool>(self, b: Self, c: Self) -> Self;
}

macro_rules! float_impl {
    ($($t:ty),*) => {$(
        impl Float for $t {
            const ZERO: $t = 0.0;
            #[inline(always)]
            fn madd<const FMA: bool>(self, b: $t, c: $t) -> $t {
                if FMA {
                    self.mul_add(b, c)
                } else {
                    self * b + c
                }
            }
        }
    )*};
}
float_impl!(f32, f64);

/// Products up to this many multiply-adds (and at most `MAX_ROWS` rows) take this path.
pub const MAX_FLOPS: usize = 48 * 48 * 48;
/// Each output row re-reads the whole rhs, so only short lhs use this path.
pub const MAX_ROWS: usize = 4;
/// Column blocks narrower than this run one dependent FMA chain per vector and lose to gemm, so the
/// output width must be a multiple of it.
pub const COLUMN_MULTIPLE: usize = 16;

/// Whether a product of this shape and rhs column stride (in elements) takes this path.
pub fn eligible(m: usize, n: usize, k: usize, rhs_cs: isize) -> bool {
    rhs_cs == 1
        && m <= MAX_ROWS
        && n % COLUMN_MULTIPLE == 0
        && m.saturating_mul(n).saturating_mul(k) <= MAX_FLOPS
}

/// `W` output columns starting at `b`/`out`: accumulate over `l`, then store.
///
/// SAFETY: `a.offset(l * lcs)` for `l < k`, `b.offset(l * rrs + v)` for `v < W`, `out.add(v)` are valid.
#[inline(always)]
unsafe fn block<T: Float, const W: usize, const FMA: bool>(
    k: usize, a: *const T, lcs: isize, b: *const T, rrs: isize, out: *mut T,
) {
    let mut acc = [T::ZERO; W];
    for l in 0..k as isize {
        let x = *a.offset(l * lcs);
        let row = b.offset(l * rrs);
        for (v, acc) in acc.iter_mut().enumerate() {
            *acc = x.madd::<FMA>(*row.add(v), *acc);
        }
    }
    for (v, &acc) in acc.iter().enumerate() {
        *out.add(v) = acc;
    }
}

/// The whole product with blocks of `W` columns, then halves of it down to 8, then 1 for the rest.
///
/// SAFETY: as `matmul`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn body<T: Float, const W: usize, const FMA: bool>(
    m: usize, n: usize, k: usize, dst: *mut T, lhs: *const T, lrs: isize, lcs: isize, rhs: *const T, rrs: isize,
) {
    for i in 0..m {
        let a = lhs.offset(i as isize * lrs);
        let out = dst.add(i * n);
        let mut j = 0;
        while j + W <= n {
            block::<T, W, FMA>(k, a, lcs, rhs.add(j), rrs, out.add(j));
            j += W;
        }
        if W > 64 && j + 64 <= n {
            block::<T, 64, FMA>(k, a, lcs, rhs.add(j), rrs, out.add(j));
            j += 64;
        }
        if W > 32 && j + 32 <= n {
            block::<T, 32, FMA>(k, a, lcs, rhs.add(j), rrs, out.add(j));
            j += 32;
        }
        if W > 16 && j + 16 <= n {
            block::<T, 16, FMA>(k, a, lcs, rhs.add(j), rrs, out.add(j));
            j += 16;
        }
        while j + 8 <= n {
            block::<T, 8, FMA>(k, a, lcs, rhs.add(j), rrs, out.add(j));
            j += 8;
        }
        while j < n {
            block::<T, 1, FMA>(k, a, lcs, rhs.add(j), rrs, out.add(j));
            j += 1;
        }
    }
}

type MatmulFn<T> = unsafe fn(usize, usize, usize, *mut T, *const T, isize, isize, *const T, isize);

/// One instantiation per instruction set: the target features let LLVM vectorize the column loop with
/// that width (8 vector accumulators: 8 zmm, 8 ymm, or 8 xmm for the portable one).
macro_rules! isa_variant {
    ($name:ident, $feat:literal, $w32:literal, $w64:literal) => {
        mod $name {
            use super::body;
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn f32(
                m: usize, n: usize, k: usize, d: *mut f32, a: *const f32, lrs: isize, lcs: isize, b: *const f32,
                rrs: isize,
            ) {
                body::<f32, $w32, true>(m, n, k, d, a, lrs, lcs, b, rrs)
            }
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn f64(
                m: usize, n: usize, k: usize, d: *mut f64, a: *const f64, lrs: isize, lcs: isize, b: *const f64,
                rrs: isize,
            ) {
                body::<f64, $w64, true>(m, n, k, d, a, lrs, lcs, b, rrs)
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
isa_variant!(avx512, "avx512f,avx2,fma", 128, 64);
#[cfg(target_arch = "x86_64")]
isa_variant!(avx2, "avx2,fma", 64, 32);

#[allow(clippy::too_many_arguments)]
unsafe fn portable_f32(
    m: usize, n: usize, k: usize, d: *mut f32, a: *const f32, lrs: isize, lcs: isize, b: *const f32, rrs: isize,
) {
    body::<f32, 32, false>(m, n, k, d, a, lrs, lcs, b, rrs)
}

#[allow(clippy::too_many_arguments)]
unsafe fn portable_f64(
    m: usize, n: usize, k: usize, d: *mut f64, a: *const f64, lrs: isize, lcs: isize, b: *const f64, rrs: isize,
) {
    body::<f64, 16, false>(m, n, k, d, a, lrs, lcs, b, rrs)
}

/// Which instruction set the host offers (detected once).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Isa {
    Avx512,
    Avx2,
    Portable,
}

pub fn host_isa() -> Isa {
    static ISA: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();
    *ISA.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("fma")
            {
                return Isa::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                return Isa::Avx2;
            }
        }
        Isa::Portable
    })
}

fn f32_fn(isa: Isa) -> MatmulFn<f32> {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => avx512::f32,
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => avx2::f32,
        _ => portable_f32,
    }
}

fn f64_fn(isa: Isa) -> MatmulFn<f64> {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => avx512::f64,
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => avx2::f64,
        _ => portable_f64,
    }
}

/// `dst[i * n + j] = sum_l lhs[i * lrs + l * lcs] * rhs[l * rrs + j]` for `i < m`, `j < n`, `l < k`.
///
/// SAFETY: every address named above is valid (reads) and `dst` holds `m * n` writable elements not
/// overlapping the operands. `isa` must be one the host supports (`host_isa()` or `Portable`).
#[allow(clippy::too_many_arguments)]
pub unsafe fn matmul_f32(
    isa: Isa, m: usize, n: usize, k: usize, dst: *mut f32, lhs: *const f32, lrs: isize, lcs: isize, rhs: *const f32,
    rrs: isize,
) {
    f32_fn(isa)(m, n, k, dst, lhs, lrs, lcs, rhs, rrs)
}

/// As `matmul_f32`, for f64.
///
/// SAFETY: as `matmul_f32`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn matmul_f64(
    isa: Isa, m: usize, n: usize, k: usize, dst: *mut f64, lhs: *const f64, lrs: isize, lcs: isize, rhs: *const f64,
    rrs: isize,
) {
    f64_fn(isa)(m, n, k, dst, lhs, lrs, lcs, rhs, rrs)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Test operands in [-1, 1) from a 64-bit LCG (also `outer_acc`'s tests' data).
    pub(crate) fn data(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((s >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
            })
            .collect()
    }

    /// Every instruction set the host has, against an f64 reference; the FMA versions agree bit for bit.
    #[test]
    fn small_products_match_reference_on_every_isa() {
        let isas: Vec<Isa> = match host_isa() {
            Isa::Avx512 => vec![Isa::Avx512, Isa::Avx2, Isa::Portable],
            Isa::Avx2 => vec![Isa::Avx2, Isa::Portable],
            Isa::Portable => vec![Isa::Portable],
        };
        for &(m, n, k) in &[(1, 128, 128), (1, 1, 1), (3, 37, 5), (2, 240, 9), (8, 130, 17), (1, 7, 0), (4, 8, 64), (1, 112, 20)] {
            // lhs read transposed (lrs = 1, lcs = m) to exercise strides; rhs rows padded (rrs = n + 3).
            let a = data(m * k, 1);
            let b = data(k * (n + 3), 2);
            let (a32, b32): (Vec<f32>, Vec<f32>) =
                (a.iter().map(|&x| x as f32).collect(), b.iter().map(|&x| x as f32).collect());
            let want = |i: usize, j: usize, a: &dyn Fn(usize) -> f64, b: &dyn Fn(usize) -> f64| -> f64 {
                (0..k).map(|l| a(l * m + i) * b(l * (n + 3) + j)).sum()
            };
            let mut first32: Option<Vec<f32>> = None;
            for &isa in &isas {
                let mut d32 = vec![f32::NAN; m * n];
                let mut d64 = vec![f64::NAN; m * n];
                // SAFETY: sizes as documented: a is k x m (read transposed), b is k x (n + 3).
                unsafe {
                    matmul_f32(isa, m, n, k, d32.as_mut_ptr(), a32.as_ptr(), 1, m as isize, b32.as_ptr(), n as isize + 3);
                    matmul_f64(isa, m, n, k, d64.as_mut_ptr(), a.as_ptr(), 1, m as isize, b.as_ptr(), n as isize + 3);
                }
                for i in 0..m {
                    for j in 0..n {
                        let w = want(i, j, &|x| a[x], &|x| b[x]);
                        assert!((d64[i * n + j] - w).abs() < 1e-12, "{isa:?} f64 {m}x{n}x{k} at {i},{j}");
                        let w32 = want(i, j, &|x| a32[x] as f64, &|x| b32[x] as f64);
                        assert!((d32[i * n + j] as f64 - w32).abs() < 1e-5, "{isa:?} f32 {m}x{n}x{k} at {i},{j}");
                    }
                }
                if isa != Isa::Portable {
                    match &first32 {
                        None => first32 = Some(d32),
                        Some(f) => assert!(f.iter().zip(&d32).all(|(x, y)| x.to_bits() == y.to_bits()), "{isa:?}"),
                    }
                }
            }
        }
    }
}
