//! `dot_general` on the CPU. Each operand is seen as a batch of matrices — lhs `[B, M, K]`, rhs
//! `[B, K, N]` — described by strides into its buffer when its free and contracting dims each collapse to
//! one stride (any transposed 2-D layout does), or copied once into that layout otherwise. The output is
//! row-major `[B, M, N]`. f32/f64 call `gemm::gemm` per batch: a big product uses gemm's own threading
//! (rayon, in cranax's pool), many big batches run one per thread, many small ones in parallel; matrix-vector
//! products on a row-major matrix run `matvec`'s kernels, tiny and small products `tiny_dot`/`small_dot`;
//! integer and bool dtypes use a plain loop.
use rayon::prelude::*;

use super::elem::{convert_buffer, numel, strides, uninit, with_elem, Elem};
use crate::buffer::Buffer;
use crate::error::Result;
use crate::ir::{Aval, DType};

pub struct DotDims<'a> {
    pub lc: &'a [usize],
    pub rc: &'a [usize],
    pub lb: &'a [usize],
    pub rb: &'a [usize],
}

/// Products at or above this many multiply-adds use gemm's own threading (below, its two-thread speed-up is
/// smaller than the cost of waking the pool on a small VM).
const PAR_FLOPS: usize = 1 << 24;

/// One operand as a batch of strided matrices: element `(b, i, j)` is at `batch_off[b] + i*rs + j*cs`
/// (in elements, from the start of its buffer).
#[derive(Clone, Debug)]
struct Layout {
    batch_off: Vec<usize>,
    rows: usize,
    cols: usize,
    rs: isize,
    cs: isize,
}

/// `(size, stride)` of `dims` collapsed into one axis, if their strides allow it (size-1 dims ignored).
fn collapse(dims: &[usize], shape: &[usize], st: &[usize]) -> Option<(usize, isize)> {
    let live: Vec<usize> = dims.iter().copied().filter(|&d| shape[d] != 1).collect();
    let size: usize = dims.iter().map(|&d| shape[d]).product();
    let Some(&last) = live.last() else { return Some((size, 1)) };
    for w in live.windows(2) {
        if st[w[0]] != st[w[1]] * shape[w[1]] {
            return None;
        }
    }
    Some((size, st[last] as isize))
}

/// Offsets of every batch index (row-major over `batch` dims in order).
fn batch_offsets(batch: &[usize], shape: &[usize], st: &[usize]) -> Vec<usize> {
    let mut offs = vec![0usize];
    for &d in batch {
        let mut next = Vec::with_capacity(offs.len() * shape[d]);
        for &o in &offs {
            for i in 0..shape[d] {
                next.push(o + i * st[d]);
            }
        }
        offs = next;
    }
    offs
}

/// The layout of a row-major operand of `shape` as `[B, rows, cols]` in place, if `row_dims`/`col_dims`
/// each collapse to one stride.
fn strided_layout(shape: &[usize], batch: &[usize], row_dims: &[usize], col_dims: &[usize]) -> Option<Layout> {
    let st = strides(shape);
    let (rows, rs) = collapse(row_dims, shape, &st)?;
    let (cols, cs) = collapse(col_dims, shape, &st)?;
    Some(Layout { batch_off: batch_offsets(batch, shape, &st), rows, cols, rs, cs })
}

/// The operand as `[B, rows, cols]` with `row_dims`/`col_dims` collapsed, copying when needed.
fn as_mat<T: Elem>(b: &Buffer, batch: &[usize], row_dims: &[usize], col_dims: &[usize]) -> Result<(Buffer, Layout)> {
    let shape = &b.aval.shape;
    if let Some(l) = strided_layout(shape, batch, row_dims, col_dims) {
        return Ok((b.clone(), l));
    }
    copied_mat::<T>(b, batch, row_dims, col_dims)
}

/// The operand copied into a fresh row-major `[B, rows, cols]` buffer.
fn copied_mat<T: Elem>(b: &Buffer, batch: &[usize], row_dims: &[usize], col_dims: &[usize]) -> Result<(Buffer, Layout)> {
    let shape = &b.aval.shape;
    let perm: Vec<usize> = batch.iter().chain(row_dims).chain(col_dims).copied().collect();
    let new_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let buf = super::shape_ops::transpose_copy(b, &perm, &Aval::new(b.aval.dtype, new_shape))?;
    let rows: usize = row_dims.iter().map(|&d| shape[d]).product();
    let cols: usize = col_dims.iter().map(|&d| shape[d]).product();
    let nb: usize = batch.iter().map(|&d| shape[d]).product();
    let batch_off = (0..nb).map(|i| i * rows * cols).collect();
    Ok((buf, Layout { batch_off, rows, cols, rs: cols as isize, cs: 1 }))
}

fn free_dims(rank: usize, contract: &[usize], batch: &[usize]) -> Vec<usize> {
    (0..rank).filter(|x| !contract.contains(x) && !batch.contains(x)).collect()
}

/// A `dot_general` whose operands already have the output's dtype and can be read in place: prepared once
/// (for loop bodies), then run on raw buffer addresses with no allocation.
#[derive(Clone, Debug)]
pub struct DirectDot {
    dt: DType,
    a: Layout,
    b: Layout,
    out_elems: usize,
}

impl DirectDot {
    /// `None` when an operand needs a conversion or a copy (the general `dot_general` handles those).
    pub fn new(d: &DotDims, lhs: &Aval, rhs: &Aval, out: &Aval) -> Option<DirectDot> {
        if lhs.dtype != out.dtype || rhs.dtype != out.dtype {
            return None;
        }
        let lfree = free_dims(lhs.shape.len(), d.lc, d.lb);
        let rfree = free_dims(rhs.shape.len(), d.rc, d.rb);
        let a = strided_layout(&lhs.shape, d.lb, &lfree, d.lc)?;
        let b = strided_layout(&rhs.shape, d.rb, d.rc, &rfree)?;
        let out_elems = out.numel()?;
        if a.batch_off.len() != b.batch_off.len() || a.cols != b.rows || a.batch_off.len() * a.rows * b.cols != out_elems {
            return None;
        }
        Some(DirectDot { dt: out.dtype, a, b, out_elems })
    }

    /// Writes the product of the operands at `lhs`/`rhs` into `out`.
    ///
    /// # Safety
    /// `lhs`, `rhs` and `out` are buffers of the avals given to `new` (`out` not overlapping the operands).
    pub unsafe fn run(&self, lhs: *const u8, rhs: *const u8, out: *mut u8) {
        if self.out_elems == 0 {
            return;
        }
        with_elem!(self.dt, T => run::<T>(&self.a, &self.b, lhs as usize, rhs as usize, out as usize, self.dt));
    }
}

pub fn dot_general(d: &DotDims, lhs: &Buffer, rhs: &Buffer, out: &Aval) -> Result<Buffer> {
    let dt = out.dtype;
    let lhs = convert_buffer(lhs, dt)?;
    let rhs = convert_buffer(rhs, dt)?;
    let lfree = free_dims(lhs.aval.shape.len(), d.lc, d.lb);
    let rfree = free_dims(rhs.aval.shape.len(), d.rc, d.rb);
    let res = uninit(out)?;
    if numel(&out.shape) == 0 {
        return Ok(res);
    }
    with_elem!(dt, T => {
        let (mut abuf, mut a) = as_mat::<T>(&lhs, d.lb, &lfree, d.lc)?;
        let (mut bbuf, mut b) = as_mat::<T>(&rhs, d.rb, d.rc, &rfree)?;
        if relayout(dt, &a, abuf.as_ptr() as usize, &b, bbuf.as_ptr() as usize) {
            // A transposed operand copied row-major: gemm then makes the `x @ w` call (same bits, checked).
            if b.rs == 1 && b.cs != 1 {
                (bbuf, b) = copied_mat::<T>(&rhs, d.rb, d.rc, &rfree)?;
            }
            if a.rs == 1 && a.cs != 1 {
                (abuf, a) = copied_mat::<T>(&lhs, d.lb, &lfree, d.lc)?;
            }
        }
        // SAFETY: the layouts describe `abuf`/`bbuf` (built from their shapes); `res` is fresh, of nb*m*n
        // elements.
        unsafe { run::<T>(&a, &b, abuf.as_ptr() as usize, bbuf.as_ptr() as usize, res.as_ptr() as usize, dt) };
    });
    Ok(res)
}

/// Products of at most this many multiply-adds (512³) copy a transposed operand (`relayout`).
const RELAYOUT_MAX: usize = 1 << 27;

/// Whether a single float product on gemm's AVX2 kernels copies its transposed operands row-major first:
/// `x @ w.T` and `x.T @ w`. gemm computes a row-major output as its transpose, so for `x @ w.T` it packs
/// `w`, row-major, with a scalar gather per element (and again for every column block its cache sizes cut
/// the product into); `x.T @ w` packs `x`'s rows. On an AVX2-only Zen3 (32 KiB L1, 512 KiB L2) 256² float32
/// `x @ w.T` ran at 2.4x NumPy's time where `x @ w` ran at 1.04x, `x.T @ w` 1.35x. A copy costs 1/m of the
/// product's work and gives the same bits (gemm's arithmetic depends on the sizes, not the strides, once
/// neither side is a vector or tiny); on AVX-512 hosts the layouts already run alike and nothing is copied.
/// Products that `run` splits between threads are not copied here: each block copies its own part of the
/// transposed operand, on its own thread (the whole copy, on one thread before the split, cost 0.5x of
/// `x @ w`'s 256² time on the AVX2-only host).
fn relayout(dt: DType, a: &Layout, pa: usize, b: &Layout, pb: usize) -> bool {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    matches!(dt, DType::F32 | DType::F64)
        && super::small_dot::host_isa() == super::small_dot::Isa::Avx2
        && a.batch_off.len() == 1
        && m >= 64
        && n >= 64
        && k > 2
        && m.saturating_mul(n).saturating_mul(k) <= RELAYOUT_MAX
        && ((b.rs == 1 && b.cs != 1) || (a.rs == 1 && a.cs != 1))
        && !is_gram(a, pa, b, pb)
        && !split_mid(a.batch_off.len(), m, n, k)
}

/// The product of the operands at addresses `pa`/`pb` (laid out as `a`/`b`) into the row-major `[B, M, N]`
/// output at `po`.
///
/// SAFETY: the layouts address elements of T inside the operand buffers; `po` holds nb*m*n elements of T
/// that nothing else reads or writes during the call.
unsafe fn run<T: Elem>(a: &Layout, b: &Layout, pa: usize, pb: usize, po: usize, dt: DType) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    let nb = a.batch_off.len();
    if k == 0 {
        std::slice::from_raw_parts_mut(po as *mut T, nb * m * n).iter_mut().for_each(|x| *x = T::zero());
        return;
    }
    let flops = m.saturating_mul(n).saturating_mul(k);
    let tiny = flops <= TINY_FLOPS;
    if n == 1 && nb == 1 && a.rs == 1 && !tiny && matches!(dt, DType::F32 | DType::F64) && super::small_dot::eligible(1, m, k, 1) {
        // A matrix-vector product whose matrix is read down its columns (`V.T @ w` of a row-major V, a loop's
        // Krylov basis): its transpose `w^T V` is a vector-matrix product with contiguous rows, which the small
        // kernel runs without gemm's packing. (The output vector is the same memory either way.)
        let (lhs, rhs) = (pb + b.batch_off[0] * std::mem::size_of::<T>(), pa + a.batch_off[0] * std::mem::size_of::<T>());
        let isa = super::small_dot::host_isa();
        match dt {
            DType::F32 => super::small_dot::matmul_f32(isa, 1, m, k, po as *mut f32, lhs as *const f32, 0, b.rs, rhs as *const f32, a.cs),
            _ => super::small_dot::matmul_f64(isa, 1, m, k, po as *mut f64, lhs as *const f64, 0, b.rs, rhs as *const f64, a.cs),
        }
        return;
    }
    let small = super::small_dot::eligible(m, n, k, b.cs);
    let isa = super::small_dot::host_isa();
    if nb == 1 && !tiny && !small && k > 2 && matches!(dt, DType::F32 | DType::F64) {
        // Matrix-vector products with a row-major matrix: `matvec`'s kernels, in gemm's order for these
        // shapes (gemm's gemv before: the same bits), on every thread that is free (a run of chunks each,
        // `share_chunks`).
        let size = std::mem::size_of::<T>();
        let (pa0, pb0) = (pa + a.batch_off[0] * size, pb + b.batch_off[0] * size);
        // `A @ x`, A's rows contiguous: above 256 outputs (gemm takes another kernel at or below, kept there).
        let rows = n == 1 && a.cs == 1 && b.rs == 1 && m > 256 && a.rs >= 0;
        // `x @ A` (or `A.T @ x` read down the columns of a row-major A): an FMA chain down each column.
        let cols_x_a = m == 1 && n > 1 && b.cs == 1 && b.rs >= 0;
        let cols_at_x = n == 1 && m > 1 && a.rs == 1 && a.cs >= 0;
        match dt {
            DType::F32 if rows => super::matvec::gemv(isa, m, k, pa0 as *const f32, a.rs as usize, pb0 as *const f32, po as *mut f32),
            DType::F64 if rows => super::matvec::gemv(isa, m, k, pa0 as *const f64, a.rs as usize, pb0 as *const f64, po as *mut f64),
            DType::F32 if cols_x_a => super::matvec::gevm(isa, n, k, pb0 as *const f32, b.rs as usize, pa0 as *const f32, a.cs, po as *mut f32),
            DType::F64 if cols_x_a => super::matvec::gevm(isa, n, k, pb0 as *const f64, b.rs as usize, pa0 as *const f64, a.cs, po as *mut f64),
            DType::F32 if cols_at_x => super::matvec::gevm(isa, m, k, pa0 as *const f32, a.cs as usize, pb0 as *const f32, b.rs, po as *mut f32),
            DType::F64 if cols_at_x => super::matvec::gevm(isa, m, k, pa0 as *const f64, a.cs as usize, pb0 as *const f64, b.rs, po as *mut f64),
            _ => {}
        }
        if rows || cols_x_a || cols_at_x {
            return;
        }
    }
    // Owned copies of the layouts: `one` may run on a pool thread (`share_chunks`).
    let (la, lb) = (a.clone(), b.clone());
    let one = move |bi: usize, par: gemm::Parallelism| {
        let (a, b) = (&la, &lb);
        let size = std::mem::size_of::<T>();
        let lhs = pa + a.batch_off[bi] * size;
        let rhs = pb + b.batch_off[bi] * size;
        let dst = po + bi * m * n * size;
        // SAFETY: every (i, j, l) address lies inside the buffers: the strides and offsets come from the
        // buffers' own shapes (validated avals); the output block of batch `bi` is written by this call only.
        unsafe {
            match dt {
                DType::F32 if tiny => tiny_dot::<f32>(m, n, k, dst, lhs, a, rhs, b),
                DType::F64 if tiny => tiny_dot::<f64>(m, n, k, dst, lhs, a, rhs, b),
                DType::F32 if small => super::small_dot::matmul_f32(
                    isa, m, n, k, dst as *mut f32, lhs as *const f32, a.rs, a.cs, rhs as *const f32, b.rs,
                ),
                DType::F64 if small => super::small_dot::matmul_f64(
                    isa, m, n, k, dst as *mut f64, lhs as *const f64, a.rs, a.cs, rhs as *const f64, b.rs,
                ),
                DType::F32 | DType::F64 => gemm_block(dt, m, n, k, dst, n as isize, lhs, a, rhs, b, par),
                _ => naive::<T>(m, n, k, dst as *mut T, lhs as *const T, a.rs, a.cs, rhs as *const T, b.rs, b.cs),
            }
        }
    };
    if nb == 1 && matches!(dt, DType::F32 | DType::F64) && is_gram(a, pa, b, pb) && m >= SYRK_MIN {
        // A·Aᵀ (NumPy's `x @ x.T`, a jitted `jnp.dot(a, a.T)`): the result is symmetric, so compute its lower
        // triangle and mirror it — about half the flops, as BLAS `syrk` does.
        let size = std::mem::size_of::<T>() as isize;
        let row = |r: usize| (pa as isize + (a.batch_off[0] as isize + r as isize * a.rs) * size) as usize;
        let col = |c: usize| (pb as isize + (b.batch_off[0] as isize + c as isize * b.cs) * size) as usize;
        // C[r0.., c0..] (rows × cols) = A[r0..] · Aᵀ[.., c0..]
        let block = |r0: usize, rows: usize, c0: usize, cols: usize, split: bool| {
            let par = if split { gemm::Parallelism::Rayon(0) } else { gemm::Parallelism::None };
            let dst = po + (r0 * n + c0) * size as usize;
            // SAFETY: rows r0..r0+rows of A, columns c0..c0+cols of Aᵀ and that output block lie inside their
            // buffers (r0 + rows <= m, c0 + cols <= n); distinct calls write disjoint blocks.
            unsafe { gemm_block(dt, rows, cols, k, dst, n as isize, row(r0), a, col(c0), b, par) }
        };
        crate::backend::cpu::threads::parallel(|split| {
            let one = |r0, rows, c0, cols| block(r0, rows, c0, cols, false);
            if split && m >= 2 * SYRK_MIN {
                // Two threads, one gemm thread each (gemm's own threading syncs too often at these block
                // sizes): rows [0, r) and rows [r, m) hold equal halves of the triangle's flops.
                let r = ((m as f64 / std::f64::consts::SQRT_2) as usize).clamp(1, m - 1);
                rayon::join(
                    || lower_triangle(0, r, &one),
                    || {
                        one(r, m - r, 0, r);
                        lower_triangle(r, m - r, &one)
                    },
                );
            } else {
                lower_triangle(0, m, &|r0, rows, c0, cols| block(r0, rows, c0, cols, split));
            }
            // SAFETY: `po` holds the n×n output, written above and by nothing else now.
            mirror_lower(unsafe { std::slice::from_raw_parts_mut(po as *mut T, n * n) }, n);
        });
        return;
    }
    if nb == 1 && n == 1 && flops >= GEMV_PAR_FLOPS && !tiny && !small && matches!(dt, DType::F32 | DType::F64) {
        // Matrix-vector products read the whole matrix once: they are bound by memory, not flops, so they
        // split far below PAR_FLOPS (gemm threads none of them): each thread takes a contiguous run of the
        // output rows, as OpenBLAS's gemv does. (`x @ A` split by columns measured 1.3-1.6x slower on the
        // loaded 2-core host, the strided half-rows of A; it stays whole.)
        gemv_split(dt, m, k, pa, a, pb, b, po);
        return;
    }
    if nb == 1 && flops < PAR_FLOPS {
        one(0, gemm::Parallelism::None);
        return;
    }
    let threads = crate::backend::cpu::threads::num_threads();
    if split_mid(nb, m, n, k) && matches!(dt, DType::F32 | DType::F64) {
        // Mid-size products (256³ to 512³ multiply-adds): one block of the output per thread, each one gemm
        // call on one thread, that this thread starts on at once and the pool's threads take as they wake
        // (`share_chunks`). gemm's own threading under `install` (the caller asleep until two pool threads
        // have woken, then gemm's barriers) ran 256² float32 at 1.3x NumPy's time on two cores of an
        // AVX2-only host, against 1.0x on one. Blocks of rows, or of columns when `b` is transposed
        // (`x @ w.T`), so that each block reads only its own part of a transposed operand; on gemm's AVX2
        // kernels each block copies that part row-major first (`relayout`'s reason, its copy now split
        // between the threads: gemm's gathers ran `x @ w.T` 256² float32 at 2.2x NumPy's time there).
        // Each block computes its elements as the whole product does (gemm's depth blocks depend on k
        // alone, not on the strides), so values do not change.
        let by_cols = b.rs == 1 && b.cs != 1;
        let copy = super::small_dot::host_isa() == super::small_dot::Isa::Avx2;
        let (copy_a, copy_b) = (copy && !by_cols && a.rs == 1 && a.cs != 1, copy && by_cols);
        let total = if by_cols { n } else { m };
        let block = total.div_ceil(threads).next_multiple_of(8);
        let (la, lb) = (a.clone(), b.clone());
        crate::backend::cpu::threads::share_chunks(total.div_ceil(block), threads - 1, move |c| {
            let (i0, size) = (c * block, std::mem::size_of::<T>());
            let len = block.min(total - i0);
            let (r0, rows, c0, cols) = if by_cols { (0, m, i0, len) } else { (i0, len, 0, n) };
            let lhs = pa + (la.batch_off[0] + r0 * la.rs as usize) * size;
            let rhs = pb + (lb.batch_off[0] + c0 * lb.cs as usize) * size;
            // SAFETY: rows r0..r0+rows of the lhs, columns c0..c0+cols of the rhs and that block of the
            // output lie inside their buffers; distinct chunks write disjoint blocks; `share_chunks` returns
            // once every chunk is done. A copy holds exactly the block it replaces.
            unsafe {
                let row_major = |rows: usize, cols: usize| Layout { batch_off: vec![0], rows, cols, rs: cols as isize, cs: 1 };
                let ca = if copy_a { transposed::<T>(lhs, la.rs, la.cs, rows, k) } else { Vec::new() };
                let cb = if copy_b { transposed::<T>(rhs, lb.rs, lb.cs, k, cols) } else { Vec::new() };
                let (lhs, al) = if copy_a { (ca.as_ptr() as usize, row_major(rows, k)) } else { (lhs, la.clone()) };
                let (rhs, bl) = if copy_b { (cb.as_ptr() as usize, row_major(k, cols)) } else { (rhs, lb.clone()) };
                gemm_block(dt, rows, cols, k, po + (r0 * n + c0) * size, n as isize, lhs, &al, rhs, &bl, gemm::Parallelism::None)
            }
        });
        return;
    }
    if flops < PAR_FLOPS {
        // Many small products ([16, 64, 64] @ [16, 64, 64]): runs of whole products that this thread starts
        // on at once and the pool's threads share as they wake (`share_chunks`). Each product is the same
        // call whatever thread runs it, so values do not depend on the split.
        let total = nb.saturating_mul(flops);
        let helpers = if total >= BATCH_SPLIT_WORK { threads - 1 } else { 0 };
        let per = (BATCH_CHUNK_WORK / flops.max(1)).clamp(1, nb);
        crate::backend::cpu::threads::share_chunks(nb.div_ceil(per), helpers, move |c| {
            (c * per..((c + 1) * per).min(nb)).for_each(|bi| one(bi, gemm::Parallelism::None))
        });
        return;
    }
    let float = matches!(dt, DType::F32 | DType::F64) && !small && !tiny;
    crate::backend::cpu::threads::parallel(|split| {
        let threads = rayon::current_num_threads();
        if !split {
            (0..nb).for_each(|bi| one(bi, gemm::Parallelism::None));
        } else if float && flops >= PAR_FLOPS && nb >= 2 * threads {
            // Enough big products to keep every thread busy: one whole product each, single-threaded (no
            // barrier inside a product, each operand packed once by one thread). Fewer big products use
            // gemm's own threading, each in turn: splitting one product into independent row blocks
            // repacks the other operand per block and measured up to 15% slower at 2048².
            (0..nb).into_par_iter().with_max_len(1).for_each(|bi| one(bi, gemm::Parallelism::None));
        } else {
            (0..nb).for_each(|bi| one(bi, gemm::Parallelism::Rayon(0)));
        }
    });
}

/// The `rows × cols` matrix whose element `(i, j)` is at `src + (i*rs + j*cs)` elements, copied row-major
/// (in 16 × 16 tiles: both sides stay in cache when `src` runs down the columns).
///
/// SAFETY: every addressed element lies inside one buffer of T.
unsafe fn transposed<T: Copy>(src: usize, rs: isize, cs: isize, rows: usize, cols: usize) -> Vec<T> {
    const TILE: usize = 16;
    let (src, mut out) = (src as *const T, Vec::with_capacity(rows * cols));
    let o: *mut T = out.as_mut_ptr();
    for i0 in (0..rows).step_by(TILE) {
        for j0 in (0..cols).step_by(TILE) {
            for j in j0..(j0 + TILE).min(cols) {
                for i in i0..(i0 + TILE).min(rows) {
                    o.add(i * cols + j).write(*src.offset(i as isize * rs + j as isize * cs));
                }
            }
        }
    }
    out.set_len(rows * cols);
    out
}

/// Single products of at most this many multiply-adds (512³) split their output between threads themselves;
/// bigger ones use gemm's own threading.
const SPLIT_MAX: usize = 1 << 27;

/// Whether `run` splits a float product of these sizes into blocks of the output, one gemm call each,
/// shared between threads (with more than one).
fn split_mid(nb: usize, m: usize, n: usize, k: usize) -> bool {
    let threads = crate::backend::cpu::threads::num_threads();
    let flops = m.saturating_mul(n).saturating_mul(k);
    nb == 1 && threads > 1 && (PAR_FLOPS..=SPLIT_MAX).contains(&flops) && m.min(n) >= 32 * threads && k > 2
}

/// Batches of small products of at least this many multiply-adds in all are shared between threads (about
/// 20-40 µs on one core: more than a pool thread's wake-up).
const BATCH_SPLIT_WORK: usize = 1 << 21;
/// Multiply-adds per claimed run of small products.
const BATCH_CHUNK_WORK: usize = 1 << 18;

/// Matrix-vector products of at least this many multiply-adds (a 512² float32 matrix, 1 MiB) split their
/// output between the threads.
const GEMV_PAR_FLOPS: usize = 1 << 18;
/// The fewest outputs of one part of a split matrix-vector product (a multiple of 16 over 256).
const GEMV_MIN_PART: usize = 272;

/// A single float matrix-vector product `A @ x` (`n == 1`) cut into contiguous runs of output rows, each one
/// gemm call (gemm's gemv) on its rows of `a`. This thread computes the first run while the others are
/// offered to the pool (`join_offered`): a busy or descheduled pool costs nothing but the offer, this thread
/// then runs them itself. Every output element is computed by the same code as unsplit (one dot product
/// over `k`), so the split changes no value.
///
/// SAFETY: as `run` (one batch).
#[allow(clippy::too_many_arguments)]
unsafe fn gemv_split(dt: DType, m: usize, k: usize, pa: usize, a: &Layout, pb: usize, b: &Layout, po: usize) {
    let size = match dt {
        DType::F32 => 4,
        _ => 8,
    };
    let job = GemvJob {
        dt,
        k,
        pa: pa + a.batch_off[0] * size,
        pb: pb + b.batch_off[0] * size,
        po,
        size,
        a: Layout { batch_off: vec![0], ..a.clone() },
        b: Layout { batch_off: vec![0], ..b.clone() },
    };
    // Every part keeps more than 256 outputs: gemm takes another kernel (its horizontal one, another sum
    // order) for products of at most 256 outputs, and a part must give the bits the whole product gives.
    let parts = crate::backend::cpu::threads::num_threads().min(m / GEMV_MIN_PART).max(1);
    job.run_parts(0, m, parts);
}

/// One matrix-vector product's operands for `gemv_split` (addresses, so that a pool thread may take a part).
#[derive(Clone)]
struct GemvJob {
    dt: DType,
    k: usize,
    pa: usize,
    pb: usize,
    po: usize,
    size: usize,
    a: Layout,
    b: Layout,
}

impl GemvJob {
    /// Output rows `[lo, hi)` in `parts` runs of at least `GEMV_MIN_PART` (ends rounded to 16 outputs:
    /// whole cache lines of the output).
    fn run_parts(&self, lo: usize, hi: usize, parts: usize) {
        if parts <= 1 {
            return self.part(lo, hi);
        }
        let mid = (lo + (hi - lo) / parts / 16 * 16).clamp(lo, hi);
        let rest = self.clone();
        crate::backend::cpu::threads::join_offered(|| self.part(lo, mid), move || rest.run_parts(mid, hi, parts - 1));
    }

    fn part(&self, lo: usize, hi: usize) {
        if lo >= hi {
            return;
        }
        let (a, b, size) = (&self.a, &self.b, self.size as isize);
        // SAFETY: lo < hi <= m: the rows and outputs addressed lie inside the buffers `gemv_split` was given; distinct parts write disjoint outputs, and `run` holds the buffers
        // until every part has returned (`join_offered` waits for the offered ones).
        unsafe {
            let lhs = (self.pa as isize + lo as isize * a.rs * size) as usize;
            gemm_block(self.dt, hi - lo, 1, self.k, self.po + lo * self.size, 1, lhs, a, self.pb, b, gemm::Parallelism::None)
        }
    }
}

/// Float products of at most this many multiply-adds per batch take `tiny_dot` (10 x 10 by 10 x 10 is
/// 1000: gemm's packing costs more there, and BFGS's update in 10 dimensions then fuses into its loop).
pub const TINY_FLOPS: usize = 1024;

/// A tiny float product (`TINY_FLOPS`): each output element is one fused multiply-add chain over the
/// contracting index in order, from zero (`acc = fma(a[i, l], b[l, j], acc)`). At these sizes gemm's
/// dispatch costs more than the arithmetic, and the fixed order lets a loop compiled whole
/// (`scalar_loop`, through `scalar_lib::dot`) compute bit-identical values inline.
///
/// SAFETY: as `gemm_block`: every `(i, l)` of `a` at `lhs`, `(l, j)` of `b` at `rhs` and the row-major
/// `m × n` output at `dst` lie inside their buffers.
#[allow(clippy::too_many_arguments)]
unsafe fn tiny_dot<T: super::small_dot::Float + TinyFma>(
    m: usize, n: usize, k: usize, dst: usize, lhs: usize, a: &Layout, rhs: usize, b: &Layout,
) {
    // `mul_add` compiled without the `fma` target feature is a call into the C library's `fmaf`/`fma` per
    // multiply-add (about a quarter of gmres's time at n=40); with it, one instruction (the same bits).
    #[cfg(target_arch = "x86_64")]
    if crate::backend::cpu::vmath::host_fma() {
        return tiny_dot_fma::<T>(m, n, k, dst, lhs, a, rhs, b);
    }
    tiny_dot_loops::<T>(m, n, k, dst, lhs, a, rhs, b)
}

/// `tiny_dot` on hosts with FMA.
///
/// SAFETY: as `tiny_dot`; the host has FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn tiny_dot_fma<T: super::small_dot::Float + TinyFma>(
    m: usize, n: usize, k: usize, dst: usize, lhs: usize, a: &Layout, rhs: usize, b: &Layout,
) {
    tiny_dot_loops::<T>(m, n, k, dst, lhs, a, rhs, b)
}

/// SAFETY: as `tiny_dot`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tiny_dot_loops<T: super::small_dot::Float + TinyFma>(
    m: usize, n: usize, k: usize, dst: usize, lhs: usize, a: &Layout, rhs: usize, b: &Layout,
) {
    let (pa, pb, po) = (lhs as *const T, rhs as *const T, dst as *mut T);
    for i in 0..m {
        for j in 0..n {
            let mut acc = T::ZERO;
            for l in 0..k {
                let x = *pa.offset(i as isize * a.rs + l as isize * a.cs);
                let y = *pb.offset(l as isize * b.rs + j as isize * b.cs);
                acc = x.fma(y, acc);
            }
            *po.add(i * n + j) = acc;
        }
    }
}

/// `x * y + z` rounded once, on every host (a libm call where the CPU has no FMA).
pub trait TinyFma {
    fn fma(self, y: Self, z: Self) -> Self;
}
impl TinyFma for f32 {
    #[inline(always)]
    fn fma(self, y: f32, z: f32) -> f32 {
        self.mul_add(y, z)
    }
}
impl TinyFma for f64 {
    #[inline(always)]
    fn fma(self, y: f64, z: f64) -> f64 {
        self.mul_add(y, z)
    }
}

/// `rows × cols` of a float product through the gemm crate: `dst[i*drs + j] = Σ_l lhs[i, l] · rhs[l, j]`
/// with the operands at byte addresses `lhs`/`rhs` read through `a`'s and `b`'s strides (β = 0: the
/// output is written, never read, so it needs no zero fill).
///
/// Why gemm rather than faer 0.24's `linalg::matmul` (private-gemm-x86 kernels, already a dependency):
/// single-threaded on the 2-core AVX2 EPYC (thread CPU time, 256² to 2048²) the two are within ±10% for
/// `x @ w` and `x @ w.T` in both dtypes, and faer is 1.3–2× slower for `x.T @ w` (a column-major lhs into a
/// row-major output), so gemm serves every layout.
///
/// SAFETY: `dt` is F32 or F64; every addressed element lies in its buffer; nothing else touches the block.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_block(
    dt: DType, rows: usize, cols: usize, k: usize, dst: usize, drs: isize, lhs: usize, a: &Layout, rhs: usize,
    b: &Layout, par: gemm::Parallelism,
) {
    unsafe {
        match dt {
            DType::F32 => gemm::gemm::<f32>(
                rows, cols, k, dst as *mut f32, 1, drs, false, lhs as *const f32, a.cs, a.rs, rhs as *const f32,
                b.cs, b.rs, 0.0, 1.0, false, false, false, par,
            ),
            _ => gemm::gemm::<f64>(
                rows, cols, k, dst as *mut f64, 1, drs, false, lhs as *const f64, a.cs, a.rs, rhs as *const f64,
                b.cs, b.rs, 0.0, 1.0, false, false, false, par,
            ),
        }
    }
}

/// Square outputs at least this wide take the symmetric (`syrk`-like) path for A·Aᵀ.
const SYRK_MIN: usize = 256;
/// Diagonal blocks narrower than this are computed whole (smaller products lose more to gemm's overheads
/// than the extra upper-triangle flops cost).
const GRAM_BASE: usize = 384;

/// Fills the lower triangle (and diagonal) of the diagonal block `[r0, r0+size)²` of a Gram matrix: the
/// off-diagonal half is one product, the two diagonal quarters recurse; small blocks are computed whole.
fn lower_triangle(r0: usize, size: usize, block: &dyn Fn(usize, usize, usize, usize)) {
    if size < GRAM_BASE {
        block(r0, size, r0, size);
        return;
    }
    let h = size / 2;
    lower_triangle(r0, h, block);
    block(r0 + h, size - h, r0, h);
    lower_triangle(r0 + h, size - h, block);
}

/// Whether operand `b` (at `pb`) is operand `a` (at `pa`) transposed: the same buffer and batch offsets with
/// row and column strides swapped, so `a · b` is a Gram matrix A·Aᵀ (symmetric).
fn is_gram(a: &Layout, pa: usize, b: &Layout, pb: usize) -> bool {
    pa == pb
        && a.batch_off == b.batch_off
        && a.rows == b.cols
        && a.cols == b.rows
        && a.rs == b.cs
        && a.cs == b.rs
}

/// Copies the lower triangle of the row-major `n×n` matrix `c` onto its upper triangle, in cache-sized tiles
/// (tile rows in parallel).
fn mirror_lower<T: Elem>(c: &mut [T], n: usize) {
    const TILE: usize = 64;
    let base = c.as_mut_ptr() as usize;
    (0..n.div_ceil(TILE)).into_par_iter().for_each(|ti| {
        let p = base as *mut T;
        let i0 = ti * TILE;
        let i1 = (i0 + TILE).min(n);
        let mut j0 = i0;
        while j0 < n {
            let j1 = (j0 + TILE).min(n);
            for i in i0..i1 {
                for j in j0.max(i + 1)..j1 {
                    // SAFETY: i, j < n. Tile row `ti` writes only upper-triangle elements (i < j) of its own
                    // rows and reads only lower-triangle elements (j > i), which nobody writes here.
                    unsafe { *p.add(i * n + j) = *p.add(j * n + i) };
                }
            }
            j0 = j1;
        }
    });
}

/// `dst[i, j] = sum_l lhs[i, l] * rhs[l, j]` for integer and bool dtypes (wrapping; or/and for bool).
///
/// SAFETY: the pointers and strides address valid elements for all `i < m, j < n, l < k`; `dst` holds m*n.
#[allow(clippy::too_many_arguments)]
unsafe fn naive<T: Elem>(
    m: usize, n: usize, k: usize, dst: *mut T, lhs: *const T, lrs: isize, lcs: isize, rhs: *const T, rrs: isize,
    rcs: isize,
) {
    let out = std::slice::from_raw_parts_mut(dst, m * n);
    out.iter_mut().for_each(|x| *x = T::zero());
    for i in 0..m {
        let row = &mut out[i * n..(i + 1) * n];
        for l in 0..k {
            let x = *lhs.offset(i as isize * lrs + l as isize * lcs);
            let rrow = rhs.offset(l as isize * rrs);
            for (j, o) in row.iter_mut().enumerate() {
                *o = o.eadd(x.emul(*rrow.offset(j as isize * rcs)));
            }
        }
    }
}
