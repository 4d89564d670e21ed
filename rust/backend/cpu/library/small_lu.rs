//! LU with partial pivoting, and the solve with it, for matrices of order `n <= SMALL_N`, row-major, one
//! matrix at a time: the small path of `linalg`'s `lu` and `lu_solve` (batches of 3×3 solves).
//!
//! Why not faer here: faer 0.24's only unblocked LU kernel (`lu_in_place_unblocked`, private) calls its
//! general `matmul` (dispatch, stride checks) once per column, and its entry point sets up permutations
//! and a scratch stack per call: for a 3×3 matrix that costs ~10× the arithmetic. This is the textbook
//! elimination LAPACK's `getf2`/`getrs` perform, in their order: pivot = the first row of largest `|a|`
//! in the column, whole rows swapped, the column scaled by the pivot's reciprocal (divided when the pivot
//! is below the smallest normal number), the trailing block updated; an exactly zero pivot column is left
//! as it is (no swap, no scaling; the solve then gives inf/NaN, as LAPACK's). The solve is `getrs`: the
//! interchanges applied to `b`, then the unit-lower and upper triangular solves (column-oriented, as the
//! reference `trsm`). Each function is `#[inline(always)]` so that `dispatch!` makes one copy per order,
//! with `n` a constant the compiler unrolls.
use super::elem::Elem;

/// The largest order the small path takes; larger matrices go to faer.
pub const SMALL_N: usize = 8;

/// Calls `$f(N)` with `N` the literal equal to `$n` (`1..=SMALL_N`), so each order gets its own
/// constant-folded copy of the `#[inline(always)]` kernel `$f` calls.
macro_rules! dispatch {
    ($n:expr, $f:expr) => {
        match $n {
            1 => $f(1),
            2 => $f(2),
            3 => $f(3),
            4 => $f(4),
            5 => $f(5),
            6 => $f(6),
            7 => $f(7),
            8 => $f(8),
            _ => unreachable!("small_lu takes n <= SMALL_N"),
        }
    };
}
pub(crate) use dispatch;

/// The float operations the kernels need (f32 and f64).
pub trait Float: Elem + Copy + PartialOrd + std::ops::Mul<Output = Self> + std::ops::Sub<Output = Self> + std::ops::Div<Output = Self> {
    const MIN_POSITIVE: Self;
    fn abs(self) -> Self;
}
impl Float for f32 {
    const MIN_POSITIVE: f32 = f32::MIN_POSITIVE;
    fn abs(self) -> f32 {
        f32::abs(self)
    }
}
impl Float for f64 {
    const MIN_POSITIVE: f64 = f64::MIN_POSITIVE;
    fn abs(self) -> f64 {
        f64::abs(self)
    }
}

/// Factors the row-major `n × n` matrix `a` in place (L below the diagonal with unit diagonal not stored,
/// U on and above it), writing LAPACK's 0-based interchanges to `piv[..n]` (row `j` was swapped with row
/// `piv[j] >= j`). When `x` is given (`n` rows of `k`, row-major), its rows are swapped with `a`'s.
#[inline(always)]
pub fn factor<T: Float>(a: &mut [T], n: usize, piv: &mut [i32], mut x: Option<(&mut [T], usize)>) {
    let a = &mut a[..n * n];
    let zero = <T as Elem>::zero();
    for j in 0..n {
        let mut p = j;
        let mut best = a[j * n + j].abs();
        for i in j + 1..n {
            let v = a[i * n + j].abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        piv[j] = p as i32;
        let d = a[p * n + j];
        if d != zero {
            if p != j {
                for c in 0..n {
                    a.swap(j * n + c, p * n + c);
                }
                if let Some((x, k)) = x.as_mut() {
                    let k = *k;
                    for c in 0..k {
                        x.swap(j * k + c, p * k + c);
                    }
                }
            }
            if d.abs() >= T::MIN_POSITIVE {
                let r = T::from_f64(1.0) / d;
                for i in j + 1..n {
                    a[i * n + j] = a[i * n + j] * r;
                }
            } else {
                for i in j + 1..n {
                    a[i * n + j] = a[i * n + j] / d;
                }
            }
        }
        for i in j + 1..n {
            let l = a[i * n + j];
            for c in j + 1..n {
                a[i * n + c] = a[i * n + c] - l * a[j * n + c];
            }
        }
    }
}

/// Solves `L U x = x` in place for the factored `lu` (from `factor`, whose interchanges `x` has already had)
/// and the row-major `n × k` right-hand side `x`.
#[inline(always)]
pub fn solve<T: Float>(lu: &[T], n: usize, x: &mut [T], k: usize) {
    let (lu, x) = (&lu[..n * n], &mut x[..n * k]);
    let zero = <T as Elem>::zero();
    for c in 0..k {
        // forward: L unit lower
        for j in 0..n {
            let v = x[j * k + c];
            if v != zero {
                for i in j + 1..n {
                    x[i * k + c] = x[i * k + c] - v * lu[i * n + j];
                }
            }
        }
        // backward: U upper
        for j in (0..n).rev() {
            let v = x[j * k + c] / lu[j * n + j];
            x[j * k + c] = v;
            if v != zero {
                for i in 0..j {
                    x[i * k + c] = x[i * k + c] - v * lu[i * n + j];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a x` for row-major `a` (n × n) and `x` (n × k).
    fn matmul(a: &[f64], x: &[f64], n: usize, k: usize) -> Vec<f64> {
        (0..n * k).map(|ij| (0..n).map(|l| a[(ij / k) * n + l] * x[l * k + ij % k]).sum()).collect()
    }

    #[test]
    fn solves_and_pivots_as_getrf() {
        // column 0's largest entry is in row 2, then (after the swap) column 1's in row 2 again
        let a = [1.0, 2.0, 3.0, 2.0, 1.0, 1.0, 4.0, 0.5, -1.0];
        let (mut lu, mut piv) = (a, [0i32; 3]);
        let b = [1.0, 0.0, 2.0, 1.0, 3.0, -1.0];
        let mut x = b;
        factor(&mut lu, 3, &mut piv, Some((&mut x, 2)));
        assert_eq!(piv, [2, 2, 2]);
        // P a = L U with P the interchanges applied in order
        let mut pa = a;
        for (j, &p) in piv.iter().enumerate() {
            for c in 0..3 {
                pa.swap(j * 3 + c, p as usize * 3 + c);
            }
        }
        let l = |i: usize, j: usize| if i == j { 1.0 } else if j < i { lu[i * 3 + j] } else { 0.0 };
        let u = |i: usize, j: usize| if j >= i { lu[i * 3 + j] } else { 0.0 };
        for i in 0..3 {
            for j in 0..3 {
                let s: f64 = (0..3).map(|m| l(i, m) * u(m, j)).sum();
                assert!((s - pa[i * 3 + j]).abs() < 1e-14, "{i} {j}");
            }
        }
        solve(&lu, 3, &mut x, 2);
        let ax = matmul(&a, &x, 3, 2);
        for (p, q) in ax.iter().zip(b.iter()) {
            assert!((p - q).abs() < 1e-13, "{ax:?}");
        }
    }

    #[test]
    fn zero_column_is_left_unscaled() {
        // LAPACK: a zero pivot column is not scaled (no NaNs in L), and U gets the zero pivot
        let mut a = [0.0f32, 1.0, 0.0, 2.0];
        let mut piv = [0i32; 2];
        factor(&mut a, 2, &mut piv, None);
        assert_eq!(piv, [0, 1]);
        assert_eq!(a, [0.0, 1.0, 0.0, 2.0]);
    }
}
