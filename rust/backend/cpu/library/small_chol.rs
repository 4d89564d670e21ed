//! Cholesky (lower) of matrices of order `n <= SMALL_CHOL_N`, in the exact order of the potrf JAX's CPU
//! lowering calls, so small factors (and `random.multivariate_normal`'s) carry JAX's bits: the small path
//! of `linalg`'s `cholesky`/`cholesky_tril`; larger matrices go to faer (blocked, its own order).
//!
//! jaxlib takes LAPACK from SciPy's bundled OpenBLAS (0.3.30, `DYNAMIC_ARCH`), whose `potrf` runs its own
//! unblocked `potf2_L` for `n <= DTB_ENTRIES / 2 = 32`: column by column (left-looking),
//! `d = a[j,j] - dot(L[j,:j], L[j,:j])`, `L[j,j] = sqrt(d)`, then the column below
//! `a[j+1:,j] - L[j+1:,:j] @ L[j,:j]` (gemv) scaled by `1 / L[j,j]`. The dot and gemv orders are those of
//! OpenBLAS's Haswell kernels (the kernels an AVX2 host and this host, with `OPENBLAS_CORETYPE=Haswell`, run;
//! the C parts are built without FMA contraction, the assembly parts use FMA as written below):
//! - dot with stride `lda`, float32: products rounded to float32, added in float32 pairs, the pairs (and an
//!   odd last product) summed in float64, rounded to float32 at the end; float64: products rounded, two
//!   accumulators over blocks of four (`t1 += p0 + p2`, `t2 += p1 + p3`), the tail into `t1`, `t1 + t2`.
//! - gemv (`y -= A x`, `x` strided): rows in a multiple of four first, columns in groups of four, each row
//!   `y - (fma(a2, x2, fma(a0, x0, 0)) + fma(a3, x3, fma(a1, x1, 0)))` ("pairs"; float32 rows past the
//!   first 4 + 8 of the block take one FMA chain `fma(a3, x3, fma(a2, x2, fma(a1, x1, fma(a0, x0, 0))))`),
//!   the remaining columns one at a time `y + a * (-x)`; the last `m % 4` rows sum `a * x` left to right
//!   (rounded products) from 0 and subtract the sum.
//!
//! Checked against `jnp.linalg.cholesky` of JAX 0.10.2 (60 random SPD matrices per order and dtype, every
//! order 1..32: all equal; from 33 OpenBLAS blocks and this order no longer holds).
//! Failure as potrf: a pivot `d <= 0` stops the factorization (a NaN pivot does not: it propagates).
use super::elem::Elem;

/// The largest order the small path takes (OpenBLAS's unblocked limit).
pub const SMALL_CHOL_N: usize = 32;

/// The float operations the kernel needs, with the per-dtype kernel differences.
pub trait CholFloat:
    Elem + Copy + PartialOrd + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> + std::ops::Sub<Output = Self> + std::ops::Div<Output = Self> + std::ops::Neg<Output = Self>
{
    fn fma(a: Self, b: Self, c: Self) -> Self;
    fn sqrt(self) -> Self;
    /// `sum_c x(c)^2` for `c < j` in OpenBLAS's strided-dot order.
    fn sq_dot(x: impl Fn(usize) -> Self, j: usize) -> Self;
    /// How many leading rows of a gemv block of `m2` rows take the "pairs" order (the rest one FMA chain).
    fn pair_rows(m2: usize) -> usize;
}

impl CholFloat for f32 {
    #[inline(always)]
    fn fma(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn sq_dot(x: impl Fn(usize) -> f32, j: usize) -> f32 {
        let mut acc = 0f64;
        let mut c = 0;
        while c + 2 <= j {
            let (p, q) = (x(c) * x(c), x(c + 1) * x(c + 1));
            acc += (p + q) as f64;
            c += 2;
        }
        if c < j {
            acc += (x(c) * x(c)) as f64;
        }
        acc as f32
    }
    fn pair_rows(m2: usize) -> usize {
        // sgemv_kernel_4x4: a block of 4 rows (when m2 & 4), one of 8 (m2 & 8), then 16 at a time as chains
        (m2 & 4) + (m2 & 8)
    }
}

impl CholFloat for f64 {
    #[inline(always)]
    fn fma(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn sq_dot(x: impl Fn(usize) -> f64, j: usize) -> f64 {
        let (mut t1, mut t2) = (0f64, 0f64);
        let mut c = 0;
        while c + 4 <= j {
            let (p0, p1, p2, p3) = (x(c) * x(c), x(c + 1) * x(c + 1), x(c + 2) * x(c + 2), x(c + 3) * x(c + 3));
            t1 += p0 + p2;
            t2 += p1 + p3;
            c += 4;
        }
        while c < j {
            t1 += x(c) * x(c);
            c += 1;
        }
        t1 + t2
    }
    fn pair_rows(m2: usize) -> usize {
        // dgemv_kernel_4x4 takes every row the same way
        m2
    }
}

/// Factors the column-major `n × n` `w` (lower triangle read) in place: L on and below the diagonal, the
/// upper triangle untouched. Returns false when a pivot is `<= 0` (potrf's `info > 0`; `w` is then partly
/// factored).
pub fn factor<T: CholFloat>(w: &mut [T], n: usize) -> bool {
    // the same operations either way (an FMA is exact-then-rounded in both); without the feature enabled
    // `mul_add` is a call into libm per multiply-add, 5x the time of a 32x32 factor
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("fma") {
        // SAFETY: the host has FMA (checked just above).
        return unsafe { factor_fma(w, n) };
    }
    factor_any(w, n)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn factor_fma<T: CholFloat>(w: &mut [T], n: usize) -> bool {
    factor_any(w, n)
}

#[inline(always)]
fn factor_any<T: CholFloat>(w: &mut [T], n: usize) -> bool {
    debug_assert!(n <= SMALL_CHOL_N && w.len() >= n * n);
    let zero = <T as Elem>::zero();
    for j in 0..n {
        let d = w[j + j * n] - T::sq_dot(|c| w[j + c * n], j);
        if d <= zero {
            w[j + j * n] = d;
            return false;
        }
        let d = d.sqrt();
        w[j + j * n] = d;
        let m = n - j - 1;
        if m == 0 {
            continue;
        }
        if j > 0 {
            gemv(w, n, j, m);
        }
        let r = T::from_f64(1.0) / d;
        for i in j + 1..n {
            w[i + j * n] = w[i + j * n] * r;
        }
    }
    true
}

/// `w[j+1.., j] -= w[j+1.., ..j] @ w[j, ..j]` (`m` rows) in OpenBLAS's gemv_n order (module docs).
#[inline(always)]
fn gemv<T: CholFloat>(w: &mut [T], n: usize, j: usize, m: usize) {
    let zero = <T as Elem>::zero();
    let x = |c: usize| w[j + c * n];
    let a = |r: usize, c: usize| w[j + 1 + r + c * n];
    let m3 = m & 3;
    let m2 = m - m3;
    let mut y: [T; SMALL_CHOL_N] = [zero; SMALL_CHOL_N];
    for (r, v) in y[..m].iter_mut().enumerate() {
        *v = w[j + 1 + r + j * n];
    }
    if m2 > 0 {
        let pairs = T::pair_rows(m2);
        let groups = j / 4;
        for g in 0..groups {
            let c = 4 * g;
            let (x0, x1, x2, x3) = (x(c), x(c + 1), x(c + 2), x(c + 3));
            for (r, v) in y[..m2].iter_mut().enumerate() {
                let (a0, a1, a2, a3) = (a(r, c), a(r, c + 1), a(r, c + 2), a(r, c + 3));
                let s = if r < pairs {
                    T::fma(a2, x2, T::fma(a0, x0, zero)) + T::fma(a3, x3, T::fma(a1, x1, zero))
                } else {
                    T::fma(a3, x3, T::fma(a2, x2, T::fma(a1, x1, T::fma(a0, x0, zero))))
                };
                *v = *v - s;
            }
        }
        for c in 4 * groups..j {
            let xn = -x(c);
            for (r, v) in y[..m2].iter_mut().enumerate() {
                *v = *v + a(r, c) * xn;
            }
        }
    }
    for (r, v) in y[..m].iter_mut().enumerate().skip(m2) {
        let mut t = zero;
        for c in 0..j {
            t = t + a(r, c) * x(c);
        }
        *v = *v - t;
    }
    for (r, v) in y[..m].iter().enumerate() {
        w[j + 1 + r + j * n] = *v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The factor of a 3×3 SPD matrix reproduces it (to rounding), and a non-positive pivot fails.
    #[test]
    fn factors_and_fails_as_potrf() {
        // column-major, symmetric
        let a = [4.0, 2.0, -2.0, 2.0, 10.0, 1.0, -2.0, 1.0, 9.0f64];
        let mut w = a;
        assert!(factor(&mut w, 3));
        let l = |i: usize, j: usize| if j <= i { w[i + j * 3] } else { 0.0 };
        for i in 0..3 {
            for j in 0..=i {
                let s: f64 = (0..3).map(|k| l(i, k) * l(j, k)).sum();
                assert!((s - a[i + j * 3]).abs() < 1e-13, "{i} {j}");
            }
        }
        assert_eq!(w[0], 2.0);
        let mut bad = [1.0, 2.0, 2.0, 1.0f32];
        assert!(!factor(&mut bad, 2));
        assert_eq!(bad[3], -3.0);
    }

    /// float32's dot of squares sums its pairs in float64: 1 + 2^-24 + 2^-24 keeps both small terms (a
    /// float32 sum would round each away, ties to even).
    #[test]
    fn f32_dot_sums_in_f64() {
        let e = (2f32).powi(-12);
        let row = [1.0f32, 0.0, e, 0.0, e, 0.0];
        assert_eq!(<f32 as CholFloat>::sq_dot(|c| row[c], 6), 1.0 + (2f32).powi(-23));
    }
}
