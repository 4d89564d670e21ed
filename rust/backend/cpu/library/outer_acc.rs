//! `outer_accumulate`: `out[i, j] = fma(rows[t, i], cols[t, j], acc[i, j])`, one `t` at a time in order (from
//! the last when `reverse`), each multiply-add rounded once: the bits of the scan loop
//! `acc = acc + outer(u_t, v_t)` it replaces (`opt::accumulate`), whose multiply-add XLA's LLVM contracts
//! (`opt::contract`; measured with JAX 0.10.2 for `u[:, None] * v[None, :]`, `jnp.outer` and `dot_general`).
//!
//! Why a routine of its own: the loop streams the whole accumulator through the cache once per
//! iteration (two 64 KB passes per step for an RNN's weight cotangent, half of its backward time); here a
//! tile of `R` rows by `W` columns stays in vector registers for all `T` steps, so the work is the
//! multiplies and adds alone (about 30 µs for 200 steps of 128x128 on AVX-512 against 280 µs for the loop).
//! Tiles: 6 rows by 4 vectors (24 zmm, or 12 ymm with 2 vectors on AVX2), chosen by measurement on the
//! AMD EPYC host; LLVM keeps the accumulator arrays in registers at these sizes (larger ones spill).
//! Which lanes follows `blockmath::isa()` (so `CRANAX_CPU_BLOCK_MATH=avx2|off` selects them), else a
//! portable instantiation.
//!
//! Batched factors (`rows` [T, B, M], `cols` [T, B, N]: a batched RNN's `acc + h_t.T @ g_t`) add per step
//! the product `sum_b rows[t, b, i] * cols[t, b, j]` as the loop's product computes it: one fused
//! multiply-add chain over `b` in order from zero (gemm's micro-kernels for 3 <= B <= 512, `tiny_dot` and
//! `small_dot` alike; XLA:CPU's product gives the same bits), rounded, then added to the tile.
// The x86 kernels are cfg-gated out elsewhere: what only they use is dead there, not wrong.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_mut, unused_variables, unused_macros, unreachable_code))]
use super::elem::{uninit, Float as Real};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, DType};

/// The operands of one call, as raw pointers (row-major: `acc`/`out` [m, n], `rows` [t, b, m], `cols`
/// [t, b, n]; `b` is 0 for the unbatched form `rows` [t, m], `cols` [t, n]).
#[derive(Clone, Copy)]
struct Args<T> {
    t: usize,
    b: usize,
    m: usize,
    n: usize,
    reverse: bool,
    acc: *const T,
    out: *mut T,
    rows: *const T,
    cols: *const T,
}

/// Rows `i0..i0 + R`, columns `j0..j0 + W`: load, accumulate every step in order, store.
///
/// SAFETY: the tile lies inside the `m x n` operands; the pointers hold their shapes' elements.
#[inline(always)]
unsafe fn tile<T: Real, const R: usize, const W: usize>(a: &Args<T>, i0: usize, j0: usize) {
    let mut s = [[T::ZERO; W]; R];
    for (r, row) in s.iter_mut().enumerate() {
        for (v, x) in row.iter_mut().enumerate() {
            *x = *a.acc.add((i0 + r) * a.n + j0 + v);
        }
    }
    for k in 0..a.t {
        let t = if a.reverse { a.t - 1 - k } else { k };
        let c = a.cols.add(t * a.n + j0);
        let x = a.rows.add(t * a.m + i0);
        for (r, row) in s.iter_mut().enumerate() {
            let xr = *x.add(r);
            for (v, y) in row.iter_mut().enumerate() {
                *y = xr.fma(*c.add(v), *y);
            }
        }
    }
    for (r, row) in s.iter().enumerate() {
        for (v, &x) in row.iter().enumerate() {
            *a.out.add((i0 + r) * a.n + j0 + v) = x;
        }
    }
}

/// The batched form of `tile`: per step, a second tile sums `rows[t, b, i] * cols[t, b, j]` over `b` as
/// one FMA chain from zero, then the accumulator adds it.
///
/// SAFETY: as `tile`, with `b >= 1`.
#[inline(always)]
unsafe fn tile_batched<T: Real, const R: usize, const W: usize>(a: &Args<T>, i0: usize, j0: usize) {
    let mut s = [[T::ZERO; W]; R];
    for (r, row) in s.iter_mut().enumerate() {
        for (v, x) in row.iter_mut().enumerate() {
            *x = *a.acc.add((i0 + r) * a.n + j0 + v);
        }
    }
    for k in 0..a.t {
        let t = if a.reverse { a.t - 1 - k } else { k };
        let mut p = [[T::ZERO; W]; R];
        for l in 0..a.b {
            let c = a.cols.add((t * a.b + l) * a.n + j0);
            let x = a.rows.add((t * a.b + l) * a.m + i0);
            for (r, row) in p.iter_mut().enumerate() {
                let xr = *x.add(r);
                for (v, y) in row.iter_mut().enumerate() {
                    *y = xr.fma(*c.add(v), *y);
                }
            }
        }
        for (srow, prow) in s.iter_mut().zip(&p) {
            for (y, &q) in srow.iter_mut().zip(prow) {
                *y = *y + q;
            }
        }
    }
    for (r, row) in s.iter().enumerate() {
        for (v, &x) in row.iter().enumerate() {
            *a.out.add((i0 + r) * a.n + j0 + v) = x;
        }
    }
}

/// Columns of rows `i0..i0 + R`: tiles of `W`, then of `L` (one vector), then single columns.
///
/// SAFETY: as `tile`.
#[inline(always)]
unsafe fn band<T: Real, const R: usize, const W: usize, const L: usize>(a: &Args<T>, i0: usize) {
    let mut j = 0;
    if a.b > 0 {
        while j + W <= a.n {
            tile_batched::<T, R, W>(a, i0, j);
            j += W;
        }
        while j + L <= a.n {
            tile_batched::<T, R, L>(a, i0, j);
            j += L;
        }
        while j < a.n {
            tile_batched::<T, R, 1>(a, i0, j);
            j += 1;
        }
        return;
    }
    while j + W <= a.n {
        tile::<T, R, W>(a, i0, j);
        j += W;
    }
    while j + L <= a.n {
        tile::<T, R, L>(a, i0, j);
        j += L;
    }
    while j < a.n {
        tile::<T, R, 1>(a, i0, j);
        j += 1;
    }
}

/// Bands of `R` rows, then single rows.
///
/// SAFETY: the pointers hold the operands' elements; `out` does not overlap the others unless it is `acc`.
#[inline(always)]
unsafe fn body<T: Real, const R: usize, const RB: usize, const W: usize, const L: usize>(a: &Args<T>) {
    if a.b > 0 {
        // two tiles live (the sum and the step's product): `RB` = R / 2 rows keep both in registers
        return rows::<T, RB, W, L>(a);
    }
    rows::<T, R, W, L>(a)
}

/// Bands of `R` rows, then single rows.
///
/// SAFETY: as `body`.
#[inline(always)]
unsafe fn rows<T: Real, const R: usize, const W: usize, const L: usize>(a: &Args<T>) {
    let mut i = 0;
    while i + R <= a.m {
        band::<T, R, W, L>(a, i);
        i += R;
    }
    while i < a.m {
        band::<T, 1, W, L>(a, i);
        i += 1;
    }
}

type Routine<T> = unsafe fn(&Args<T>);

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{body, Args};
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub unsafe fn f32_512(a: &Args<f32>) {
        body::<f32, 6, 3, 64, 16>(a)
    }
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub unsafe fn f64_512(a: &Args<f64>) {
        body::<f64, 6, 3, 32, 8>(a)
    }
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn f32_256(a: &Args<f32>) {
        body::<f32, 6, 3, 16, 8>(a)
    }
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn f64_256(a: &Args<f64>) {
        body::<f64, 6, 3, 8, 4>(a)
    }
}

unsafe fn f32_portable(a: &Args<f32>) {
    body::<f32, 2, 1, 16, 4>(a)
}
unsafe fn f64_portable(a: &Args<f64>) {
    body::<f64, 2, 1, 8, 2>(a)
}

/// Which instantiation: the block-math lanes when there are some, else the portable one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lanes {
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx512,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx2,
    Portable,
}

fn host_lanes() -> Lanes {
    use super::super::blockmath::{isa, Isa};
    match isa() {
        Some(Isa::Avx512) => Lanes::Avx512,
        Some(Isa::Avx2) => Lanes::Avx2,
        None => Lanes::Portable,
    }
}

fn f32_routine(l: Lanes) -> Routine<f32> {
    match l {
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx512 => x86::f32_512,
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx2 => x86::f32_256,
        _ => f32_portable,
    }
}

fn f64_routine(l: Lanes) -> Routine<f64> {
    match l {
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx512 => x86::f64_512,
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx2 => x86::f64_256,
        _ => f64_portable,
    }
}

/// `outer_accumulate[reverse]` of `acc` [m, n], `rows` [t, m], `cols` [t, n] into a fresh buffer of `out`.
pub fn outer_accumulate(acc: &Buffer, rows: &Buffer, cols: &Buffer, reverse: bool, out: &Aval) -> Result<Buffer> {
    run(acc, rows, cols, reverse, out, host_lanes())
}

fn run(acc: &Buffer, rows: &Buffer, cols: &Buffer, reverse: bool, out: &Aval, lanes: Lanes) -> Result<Buffer> {
    let bad = || {
        Error::Execution(
            "outer_accumulate: operands do not match acc [M, N], rows [T, M], cols [T, N] (or [T, B, M], [T, B, N])".into(),
        )
    };
    let (&[m, n], rs, cs) = (acc.aval.shape.as_slice(), rows.aval.shape.as_slice(), cols.aval.shape.as_slice()) else {
        return Err(bad());
    };
    // `b` = 0: the unbatched form
    let (t, b, m2, t2, b2, n2) = match (rs, cs) {
        (&[t, m2], &[t2, n2]) => (t, 0, m2, t2, 0, n2),
        (&[t, b, m2], &[t2, b2, n2]) => (t, b, m2, t2, b2, n2),
        _ => return Err(bad()),
    };
    if m2 != m || n2 != n || t2 != t || b2 != b || out.shape != [m, n] || [rows.dtype(), cols.dtype(), out.dtype] != [acc.dtype(); 3] {
        return Err(bad());
    }
    if rs.len() == 3 && b == 0 {
        // each step adds an empty sum (+0.0)
        let zr = Buffer::from_bytes(&Aval::new(acc.dtype(), vec![t, 1, m]), &vec![0u8; t * m * acc.dtype().size()])?;
        let zc = Buffer::from_bytes(&Aval::new(acc.dtype(), vec![t, 1, n]), &vec![0u8; t * n * acc.dtype().size()])?;
        return run(acc, &zr, &zc, reverse, out, lanes);
    }
    let res = uninit(out)?;
    if m * n == 0 {
        return Ok(res);
    }
    // SAFETY: the shapes were checked above; `res` is a fresh buffer of `out` (no overlap).
    unsafe {
        match acc.dtype() {
            DType::F32 => {
                let a = Args::<f32> {
                    t, b, m, n, reverse,
                    acc: acc.as_ptr() as *const f32, out: res.as_ptr() as *mut f32,
                    rows: rows.as_ptr() as *const f32, cols: cols.as_ptr() as *const f32,
                };
                f32_routine(lanes)(&a)
            }
            DType::F64 => {
                let a = Args::<f64> {
                    t, b, m, n, reverse,
                    acc: acc.as_ptr() as *const f64, out: res.as_ptr() as *mut f64,
                    rows: rows.as_ptr() as *const f64, cols: cols.as_ptr() as *const f64,
                };
                f64_routine(lanes)(&a)
            }
            d => return Err(Error::Execution(format!("outer_accumulate: no routine for {}", d.short_name()))),
        }
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::super::small_dot::tests::data;
    use super::*;

    fn buf<T: Copy>(shape: &[usize], d: DType, v: &[T]) -> Buffer {
        // SAFETY: plain numbers viewed as bytes.
        let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) };
        Buffer::from_bytes(&Aval::new(d, shape.to_vec()), bytes).unwrap()
    }

    fn lanes_here() -> Vec<Lanes> {
        let mut l = vec![Lanes::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                l.push(Lanes::Avx2);
            }
            if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma") {
                l.push(Lanes::Avx512);
            }
        }
        l
    }

    /// Every instantiation gives the loop's bits (f32 and f64, both orders, tails in rows and columns).
    #[test]
    fn equals_the_sequential_loop_bit_for_bit() {
        for &(t, m, n) in &[(7usize, 13usize, 37usize), (200, 128, 128), (3, 6, 64), (1, 1, 1), (0, 4, 5), (5, 17, 100)] {
            let acc = data(m * n, 1);
            let rows = data(t * m, 2);
            let cols = data(t * n, 3);
            for reverse in [false, true] {
                // f32 reference: the loop's order, one rounding per multiply-add
                let (a32, r32, c32): (Vec<f32>, Vec<f32>, Vec<f32>) = (
                    acc.iter().map(|&x| x as f32).collect(),
                    rows.iter().map(|&x| x as f32).collect(),
                    cols.iter().map(|&x| x as f32).collect(),
                );
                let mut want32 = a32.clone();
                let mut want64 = acc.clone();
                for k in 0..t {
                    let s = if reverse { t - 1 - k } else { k };
                    for i in 0..m {
                        for j in 0..n {
                            want32[i * n + j] = r32[s * m + i].mul_add(c32[s * n + j], want32[i * n + j]);
                            want64[i * n + j] = rows[s * m + i].mul_add(cols[s * n + j], want64[i * n + j]);
                        }
                    }
                }
                for lanes in lanes_here() {
                    let out = Aval::new(DType::F32, vec![m, n]);
                    let got = run(
                        &buf(&[m, n], DType::F32, &a32), &buf(&[t, m], DType::F32, &r32), &buf(&[t, n], DType::F32, &c32),
                        reverse, &out, lanes,
                    )
                    .unwrap();
                    let got: Vec<u32> = got.as_bytes().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
                    assert_eq!(got, want32.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "f32 {lanes:?} {t} {m} {n} {reverse}");
                    let out = Aval::new(DType::F64, vec![m, n]);
                    let got = run(
                        &buf(&[m, n], DType::F64, &acc), &buf(&[t, m], DType::F64, &rows), &buf(&[t, n], DType::F64, &cols),
                        reverse, &out, lanes,
                    )
                    .unwrap();
                    let got: Vec<u64> = got.as_bytes().chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
                    assert_eq!(got, want64.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "f64 {lanes:?} {t} {m} {n} {reverse}");
                }
            }
        }
    }

    /// The batched form: per step an FMA chain over the batch from zero, rounded, then added (the loop's
    /// `acc + h_t.T @ g_t`), in every instantiation; an empty batch adds +0.0 per step.
    #[test]
    fn batched_equals_the_loop_of_products_bit_for_bit() {
        for &(t, bb, m, n) in &[(7usize, 3usize, 13usize, 37usize), (20, 16, 128, 128), (4, 5, 6, 64), (2, 1, 3, 3), (3, 0, 2, 5), (5, 9, 17, 100)] {
            let acc = data(m * n, 4);
            let rows = data(t * bb * m, 5);
            let cols = data(t * bb * n, 6);
            for reverse in [false, true] {
                let (a32, r32, c32): (Vec<f32>, Vec<f32>, Vec<f32>) = (
                    acc.iter().map(|&x| x as f32).collect(),
                    rows.iter().map(|&x| x as f32).collect(),
                    cols.iter().map(|&x| x as f32).collect(),
                );
                let (mut want32, mut want64) = (a32.clone(), acc.clone());
                for k in 0..t {
                    let s = if reverse { t - 1 - k } else { k };
                    for i in 0..m {
                        for j in 0..n {
                            let (mut p32, mut p64) = (0f32, 0f64);
                            for l in 0..bb {
                                p32 = r32[(s * bb + l) * m + i].mul_add(c32[(s * bb + l) * n + j], p32);
                                p64 = rows[(s * bb + l) * m + i].mul_add(cols[(s * bb + l) * n + j], p64);
                            }
                            want32[i * n + j] = want32[i * n + j] + p32;
                            want64[i * n + j] = want64[i * n + j] + p64;
                        }
                    }
                }
                for lanes in lanes_here() {
                    let out = Aval::new(DType::F32, vec![m, n]);
                    let got = run(
                        &buf(&[m, n], DType::F32, &a32), &buf(&[t, bb, m], DType::F32, &r32), &buf(&[t, bb, n], DType::F32, &c32),
                        reverse, &out, lanes,
                    )
                    .unwrap();
                    let got: Vec<u32> = got.as_bytes().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
                    assert_eq!(got, want32.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "f32 {lanes:?} {t} {bb} {m} {n} {reverse}");
                    let out = Aval::new(DType::F64, vec![m, n]);
                    let got = run(
                        &buf(&[m, n], DType::F64, &acc), &buf(&[t, bb, m], DType::F64, &rows), &buf(&[t, bb, n], DType::F64, &cols),
                        reverse, &out, lanes,
                    )
                    .unwrap();
                    let got: Vec<u64> = got.as_bytes().chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
                    assert_eq!(got, want64.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "f64 {lanes:?} {t} {bb} {m} {n} {reverse}");
                }
            }
        }
    }

    #[test]
    fn mismatched_operands_are_errors() {
        let a = buf(&[2, 3], DType::F32, &[0f32; 6]);
        let r = buf(&[4, 2], DType::F32, &[0f32; 8]);
        let c = buf(&[5, 3], DType::F32, &[0f32; 15]);
        let Err(e) = outer_accumulate(&a, &r, &c, false, &Aval::new(DType::F32, vec![2, 3])) else { panic!("accepted") };
        let e = e.to_string();
        assert!(e.contains("outer_accumulate"), "{e}");
    }
}
