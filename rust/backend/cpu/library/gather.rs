//! XLA `gather` and `scatter`, with index vectors along the last axis of `indices`.
//!
//! gather: for each batch index `g` (the indices' leading axes) the start vector `indices[g, :]` places
//! a window of `slice_sizes` in the operand (axis `start_index_map[k]` starts at component `k`); the
//! window's non-collapsed axes become the output's `offset_dims`, the batch axes fill the other output
//! axes in order. Out-of-range starts are clamped (`Clip`) or give a window of the fill value
//! (`FillOrDrop`, the check being that the whole window fits).
//!
//! scatter: for each batch index `g` of the updates (their axes not in `update_window_dims`), the start
//! vector places the update window (axes `update_window_dims` of the updates, mapped onto the operand axes
//! not in `inserted_window_dims`) in the operand; each element is combined with the operand's. Windows
//! that do not fit are clamped (`Clip`) or dropped (`FillOrDrop`), as JAX documents.
use super::elem::{elems, elems_mut, numel, read_index, strides, uninit, with_elem, Elem};
use crate::buffer::Buffer;
use crate::error::Result;
use crate::ir::{Aval, IndexMode, ScatterOp};

pub struct GatherSpec<'a> {
    pub offset_dims: &'a [usize],
    pub collapsed_slice_dims: &'a [usize],
    pub start_index_map: &'a [usize],
    pub slice_sizes: &'a [usize],
}

pub struct ScatterSpec<'a> {
    pub update_window_dims: &'a [usize],
    pub inserted_window_dims: &'a [usize],
    pub scatter_dims_to_operand_dims: &'a [usize],
}

/// Advances a row-major multi-index over `shape`; false when it wraps around.
fn next(idx: &mut [usize], shape: &[usize]) -> bool {
    let mut d = idx.len();
    while d > 0 {
        d -= 1;
        idx[d] += 1;
        if idx[d] < shape[d] {
            return true;
        }
        idx[d] = 0;
    }
    false
}

/// The index buffer as `i64`s, read with one dtype match (a match per element was most of a point gather's
/// time).
fn read_indices(indices: &Buffer) -> Vec<i64> {
    let n = numel(&indices.aval.shape);
    // SAFETY: dtypes matched to the element types.
    unsafe {
        match indices.aval.dtype {
            crate::ir::DType::I32 => elems::<i32>(indices).iter().map(|&v| v as i64).collect(),
            crate::ir::DType::U32 => elems::<u32>(indices).iter().map(|&v| v as i64).collect(),
            crate::ir::DType::I64 => elems::<i64>(indices).to_vec(),
            _ => (0..n).map(|i| read_index(indices, i)).collect(),
        }
    }
}

/// Operand offset of batch `g`'s window: `map[k]` starts at `idx[g * nk + k]` (clamped under `Clip`), or
/// `None` when the window does not fit (`FillOrDrop`).
fn window_start(
    idx: &[i64], g: usize, map: &[usize], shape: &[usize], win: &[usize], mode: IndexMode, xst: &[usize],
) -> Option<usize> {
    let nk = map.len();
    let mut off = 0;
    for (k, &d) in map.iter().enumerate() {
        let s = idx[g * nk + k];
        let hi = shape[d] as i64 - win[d] as i64;
        let a = match mode {
            IndexMode::Clip => s.clamp(0, hi.max(0)) as usize,
            IndexMode::FillOrDrop if s >= 0 && s <= hi => s as usize,
            IndexMode::FillOrDrop => return None,
        };
        off += a * xst[d];
    }
    Some(off)
}

/// A window's innermost axis as one run when it is contiguous in both arrays (`a[idx]` of rows copies whole
/// rows): (run length, the window axes left to step over).
fn inner_run<'a>(win_shape: &'a [usize], s1: &[usize], s2: &[usize]) -> (usize, &'a [usize]) {
    match (win_shape.last(), s1.last(), s2.last()) {
        (Some(&l), Some(&1), Some(&1)) if l > 1 => (l, &win_shape[..win_shape.len() - 1]),
        _ => (1, win_shape),
    }
}

fn dot(a: &[usize], b: &[usize]) -> usize {
    a.iter().zip(b).map(|(i, st)| i * st).sum()
}

pub fn gather(
    s: &GatherSpec, mode: IndexMode, fill: Option<f64>, x: &Buffer, indices: &Buffer, out: &Aval,
) -> Result<Buffer> {
    let res = uninit(out)?;
    if numel(&out.shape) == 0 {
        return Ok(res);
    }
    let shape = &x.aval.shape;
    let r = shape.len();
    let xst = strides(shape);
    let ost = strides(&out.shape);
    let nb = indices.aval.shape.len() - 1;
    let bshape = &indices.aval.shape[..nb];
    let batch_axes: Vec<usize> = (0..out.shape.len()).filter(|d| !s.offset_dims.contains(d)).collect();
    let win_axes: Vec<usize> = (0..r).filter(|d| !s.collapsed_slice_dims.contains(d)).collect();
    let win_shape: Vec<usize> = win_axes.iter().map(|&d| s.slice_sizes[d]).collect();
    // strides of the window's axes in the operand and in the output
    let wx: Vec<usize> = win_axes.iter().map(|&d| xst[d]).collect();
    let wo: Vec<usize> = s.offset_dims.iter().map(|&d| ost[d]).collect();
    let bo: Vec<usize> = batch_axes.iter().map(|&d| ost[d]).collect();
    let (run, outer) = inner_run(&win_shape, &wx, &wo);
    if numel(&win_shape) == 1 && s.slice_sizes.iter().all(|&z| z == 1) {
        // SAFETY: `res` is fresh and holds one element per batch index (the window is one element).
        if unsafe { point_gather(s.start_index_map, mode, fill, x, indices, &res) } {
            return Ok(res);
        }
    }
    let idx = read_indices(indices);
    with_elem!(out.dtype, T => {
        // SAFETY: element type matches; `res` is fresh.
        let (src, dst) = unsafe { (elems::<T>(x), elems_mut::<T>(&res)) };
        let fv: T = match fill { Some(f) => super::elem::scalar_from_f64::<T>(f), None => T::default_fill() };
        if s.slice_sizes.iter().any(|&z| z == 0) {
            // empty windows on collapsed axes: nothing to read
            dst.iter_mut().for_each(|e| *e = fv);
            return Ok(res);
        }
        // `next` leaves a multi-index all zeros when it wraps, so neither needs resetting
        let mut g_idx = vec![0usize; nb];
        let mut w = vec![0usize; outer.len()];
        for g in 0..numel(bshape) {
            let obase = dot(&g_idx, &bo);
            let xbase = window_start(&idx, g, s.start_index_map, shape, s.slice_sizes, mode, &xst);
            match (xbase, run) {
                // one element per start (`a[i]` of a vector): no window loop
                (Some(xb), 1) if outer.is_empty() => dst[obase] = src[xb],
                (Some(xb), _) => loop {
                    let (oo, xo) = (obase + dot(&w, &wo), xb + dot(&w, &wx));
                    dst[oo..oo + run].copy_from_slice(&src[xo..xo + run]);
                    if !next(&mut w, outer) {
                        break;
                    }
                },
                (None, _) => loop {
                    let oo = obase + dot(&w, &wo);
                    dst[oo..oo + run].iter_mut().for_each(|e| *e = fv);
                    if !next(&mut w, outer) {
                        break;
                    }
                },
            }
            next(&mut g_idx, bshape);
        }
    });
    Ok(res)
}

/// The operand offset of one start vector (component `k` on the axis `axes[k]` = (length, stride)): clamped
/// under `Clip`; `None` under `FillOrDrop` when a component is out of range (a one-element window fits iff
/// every component is in range).
#[inline(always)]
fn point_offset<I: Copy + Into<i64>>(starts: &[I], axes: &[(i64, usize)], mode: IndexMode) -> Option<usize> {
    let mut off = 0usize;
    for (&s, &(len, st)) in starts.iter().zip(axes) {
        let s: i64 = s.into();
        let a = match mode {
            IndexMode::Clip => s.clamp(0, len - 1),
            IndexMode::FillOrDrop if (0..len).contains(&s) => s,
            IndexMode::FillOrDrop => return None,
        };
        off = off.wrapping_add((a as usize).wrapping_mul(st));
    }
    Some(off)
}

/// Gathers of one element per start (`x[i]`, `take`, the halvings of `searchsorted`): the output is the
/// batch in row-major order, so element `g` reads `x` at the offset of start vector `g`. This loop reads the
/// index buffer in its own dtype and keeps nothing else per point, so several loads are in flight at once
/// (the general loop's per-point bookkeeping made a random `take` of 1e6 points 8× XLA's time). Large
/// batches are split in two halves across the pool; each element is computed the same way on any thread.
/// Returns false for index dtypes it does not read (the general path handles them).
///
/// SAFETY: `res` is a fresh buffer of `numel(indices' batch shape)` elements of `x`'s dtype.
unsafe fn point_gather(
    map: &[usize], mode: IndexMode, fill: Option<f64>, x: &Buffer, indices: &Buffer, res: &Buffer,
) -> bool {
    const PAR_POINTS: usize = 1 << 16;
    let shape = &x.aval.shape;
    let xst = strides(shape);
    let nk = map.len();
    let n = numel(&indices.aval.shape[..indices.aval.shape.len() - 1]);
    // (axis length, stride) per start component
    let axes: Vec<(i64, usize)> = map.iter().map(|&d| (shape[d] as i64, xst[d])).collect();
    macro_rules! run {
        ($I:ty) => {{
            let idx = elems::<$I>(indices);
            with_elem!(x.aval.dtype, T => {
                let src = elems::<T>(x);
                let dst = elems_mut::<T>(res);
                let fv: T = match fill { Some(f) => super::elem::scalar_from_f64::<T>(f), None => T::default_fill() };
                // One start component (a vector's `x[i]`) gets loops of its own, the mode tested once.
                let fill_run = |dst: &mut [T], g0: usize| match (nk, mode) {
                    (1, IndexMode::Clip) => {
                        let (len, st) = axes[0];
                        for (d, &s) in dst.iter_mut().zip(&idx[g0..]) {
                            *d = src[(s as i64).clamp(0, len - 1) as usize * st];
                        }
                    }
                    (1, IndexMode::FillOrDrop) => {
                        let (len, st) = axes[0];
                        for (d, &s) in dst.iter_mut().zip(&idx[g0..]) {
                            let s = s as i64;
                            *d = if (0..len).contains(&s) { src[s as usize * st] } else { fv };
                        }
                    }
                    _ => {
                        for (j, d) in dst.iter_mut().enumerate() {
                            let starts = &idx[(g0 + j) * nk..(g0 + j + 1) * nk];
                            *d = point_offset(starts, &axes, mode).map_or(fv, |off| src[off]);
                        }
                    }
                };
                if n >= PAR_POINTS {
                    let h = n / 2;
                    crate::backend::cpu::threads::parallel(|split| {
                        let (lo, hi) = dst.split_at_mut(h);
                        if split {
                            rayon::join(|| fill_run(lo, 0), || fill_run(hi, h));
                        } else {
                            fill_run(lo, 0);
                            fill_run(hi, h);
                        }
                    });
                } else {
                    fill_run(dst, 0);
                }
            });
            true
        }};
    }
    match indices.aval.dtype {
        crate::ir::DType::I32 => run!(i32),
        crate::ir::DType::U32 => run!(u32),
        crate::ir::DType::I64 => run!(i64),
        _ => false,
    }
}

#[inline]
fn combine<T: Elem>(op: ScatterOp, a: T, b: T) -> T {
    match op {
        ScatterOp::Set => b,
        ScatterOp::Add => a.eadd(b),
        ScatterOp::Mul => a.emul(b),
        ScatterOp::Min => a.emin(b),
        ScatterOp::Max => a.emax(b),
    }
}

pub fn scatter(
    s: &ScatterSpec, op: ScatterOp, mode: IndexMode, x: &Buffer, indices: &Buffer, upd: &Buffer,
) -> Result<Buffer> {
    let res = uninit(&x.aval)?;
    // SAFETY: same size; `res` is fresh.
    unsafe { std::ptr::copy_nonoverlapping(x.as_ptr(), res.as_ptr(), numel(&x.aval.shape) * x.aval.dtype.size()) };
    scatter_in_place(s, op, mode, res, indices, upd)
}

/// `scatter` into `res`, which holds the operand and which no one else reads (the runtime hands over an
/// operand buffer the plan no longer needs: XLA's in-place scatter, without the operand's copy).
pub fn scatter_in_place(
    s: &ScatterSpec, op: ScatterOp, mode: IndexMode, res: Buffer, indices: &Buffer, upd: &Buffer,
) -> Result<Buffer> {
    let shape = &res.aval.shape;
    let ushape = &upd.aval.shape;
    if numel(ushape) == 0 {
        return Ok(res);
    }
    if one_window(s, op, mode, &res, indices, upd) {
        return Ok(res);
    }
    let r = shape.len();
    let xst = strides(shape);
    let ust = strides(ushape);
    let nb = indices.aval.shape.len() - 1;
    let bshape = &indices.aval.shape[..nb];
    let upd_batch_axes: Vec<usize> = (0..ushape.len()).filter(|d| !s.update_window_dims.contains(d)).collect();
    let op_win_axes: Vec<usize> = (0..r).filter(|d| !s.inserted_window_dims.contains(d)).collect();
    let win_shape: Vec<usize> = s.update_window_dims.iter().map(|&d| ushape[d]).collect();
    // window extent per operand axis (1 on inserted axes)
    let mut win_full = vec![1usize; r];
    for (j, &d) in op_win_axes.iter().enumerate() {
        win_full[d] = win_shape[j];
    }
    let wx: Vec<usize> = op_win_axes.iter().map(|&d| xst[d]).collect();
    let wu: Vec<usize> = s.update_window_dims.iter().map(|&d| ust[d]).collect();
    let bu: Vec<usize> = upd_batch_axes.iter().map(|&d| ust[d]).collect();
    // A window wider than its operand axis fits nowhere (clamping cannot help); a start that `window_start`
    // accepts otherwise always fits, so this is the whole of the "every operand axis must fit" check: when it
    // fails, no window is applied and the result is the operand's copy.
    if !win_full.iter().zip(shape).all(|(w, n)| w <= n) {
        return Ok(res);
    }
    // SAFETY: `res` holds the operand and is ours alone; one update element per start (window of one).
    if numel(&win_shape) == 1 && unsafe { point_scatter(s.scatter_dims_to_operand_dims, op, mode, &res, indices, upd) } {
        return Ok(res);
    }
    let idx = read_indices(indices);
    with_elem!(res.aval.dtype, T => {
        // SAFETY: element types match; `res` is ours alone.
        let (src, dst) = unsafe { (elems::<T>(upd), elems_mut::<T>(&res)) };
        // `next` leaves a multi-index all zeros when it wraps, so neither needs resetting
        let mut g_idx = vec![0usize; nb];
        let mut w = vec![0usize; win_shape.len()];
        for g in 0..numel(bshape) {
            let ubase = dot(&g_idx, &bu);
            let xbase = window_start(&idx, g, s.scatter_dims_to_operand_dims, shape, &win_full, mode, &xst);
            if let Some(xbase) = xbase {
                loop {
                    let xo = xbase + dot(&w, &wx);
                    let uo = ubase + dot(&w, &wu);
                    dst[xo] = combine(op, dst[xo], src[uo]);
                    if !next(&mut w, &win_shape) {
                        break;
                    }
                }
            }
            next(&mut g_idx, bshape);
        }
    });
    Ok(res)
}

/// Scatters of one element per start (`x.at[i].add(u)`, the counting step of `nonzero(size=)`): update `g`
/// combines into the operand at the offset of start vector `g`, in batch order (so repeated indices combine
/// in the same order as the general loop). The index buffer is read in its own dtype.
/// Returns false for index dtypes it does not read.
///
/// SAFETY: `res` holds the operand and no one else reads it; `upd` has one element per start.
/// The most operand axes `one_window` handles (its index tables are fixed arrays).
const ONE_WINDOW_RANK: usize = 8;

/// `scatter_in_place` of a single window, the update without batch axes (`x.at[:, k].set(col)`, a row of
/// a loop's carry per iteration): the start read directly and the window walked row by row, with none of
/// the general path's index tables (their allocations were most of a small update's time). False when the
/// scatter is not of that form (nothing written).
fn one_window(s: &ScatterSpec, op: ScatterOp, mode: IndexMode, res: &Buffer, indices: &Buffer, upd: &Buffer) -> bool {
    let (shape, ushape) = (&res.aval.shape, &upd.aval.shape);
    let (r, map) = (shape.len(), s.scatter_dims_to_operand_dims);
    if r == 0
        || r > ONE_WINDOW_RANK
        || numel(&indices.aval.shape) != map.len()
        || indices.aval.shape.len() > 2
        || indices.aval.shape.first().is_some_and(|&n| indices.aval.shape.len() == 2 && n != 1)
        || s.update_window_dims.len() != ushape.len()
        || s.update_window_dims.iter().enumerate().any(|(j, &d)| j != d)
        || s.inserted_window_dims.len() + ushape.len() != r
        || map.iter().any(|&d| d >= r)
        || upd.aval.dtype != res.aval.dtype
    {
        return false;
    }
    // the window's extent per operand axis (1 on inserted axes), the update's axes in order
    let mut win = [1usize; ONE_WINDOW_RANK];
    let mut j = 0;
    for (d, w) in win.iter_mut().enumerate().take(r) {
        if !s.inserted_window_dims.contains(&d) {
            match ushape.get(j) {
                Some(&n) => *w = n,
                None => return false,
            }
            j += 1;
        }
    }
    if j != ushape.len() {
        return false;
    }
    if (0..r).any(|d| win[d] > shape[d]) {
        return true; // fits nowhere: nothing written, as on the general path
    }
    let mut xst = [1usize; ONE_WINDOW_RANK];
    for d in (0..r.saturating_sub(1)).rev() {
        xst[d] = xst[d + 1] * shape[d + 1];
    }
    let mut base = 0usize;
    for (k, &d) in map.iter().enumerate() {
        let v = read_index(indices, k);
        let hi = shape[d] as i64 - win[d] as i64;
        let a = match mode {
            IndexMode::Clip => v.clamp(0, hi.max(0)),
            IndexMode::FillOrDrop if v >= 0 && v <= hi => v,
            IndexMode::FillOrDrop => return true, // dropped
        };
        base += a as usize * xst[d];
    }
    let run = win[r - 1];
    let rows = numel(&win[..r - 1]);
    with_elem!(res.aval.dtype, T => {
        // SAFETY: element types match (checked); every offset lies in the window, inside the operand (each
        // axis fits); `res` is the caller's alone.
        let (src, dst) = unsafe { (elems::<T>(upd), elems_mut::<T>(res)) };
        if run == 1 && r == 2 {
            // A matrix column (`V.at[:, k].set(w)`): one element a row, the combiner chosen once, not per
            // element (its match in the loop cost more than the moves).
            let step = xst[0];
            let (xs, us) = (&mut dst[base..], &src[..rows]);
            match op {
                ScatterOp::Set => us.iter().enumerate().for_each(|(q, &b)| xs[q * step] = b),
                ScatterOp::Add => us.iter().enumerate().for_each(|(q, &b)| xs[q * step] = xs[q * step].eadd(b)),
                _ => us.iter().enumerate().for_each(|(q, &b)| xs[q * step] = combine(op, xs[q * step], b)),
            }
            return true;
        }
        let mut at = [0usize; ONE_WINDOW_RANK];
        for q in 0..rows {
            let x0 = match r {
                1 => base,
                2 => base + q * xst[0],
                _ => base + (0..r - 1).map(|d| at[d] * xst[d]).sum::<usize>(),
            };
            if run == 1 {
                // (a column: one element a row)
                dst[x0] = combine(op, dst[x0], src[q]);
            } else {
                let (xs, us) = (&mut dst[x0..x0 + run], &src[q * run..(q + 1) * run]);
                match op {
                    ScatterOp::Set => xs.copy_from_slice(us),
                    _ => xs.iter_mut().zip(us).for_each(|(a, &b)| *a = combine(op, *a, b)),
                }
            }
            if r > 2 {
                next(&mut at[..r - 1], &win[..r - 1]);
            }
        }
    });
    true
}

unsafe fn point_scatter(map: &[usize], op: ScatterOp, mode: IndexMode, res: &Buffer, indices: &Buffer, upd: &Buffer) -> bool {
    let shape = &res.aval.shape;
    let xst = strides(shape);
    let axes: Vec<(i64, usize)> = map.iter().map(|&d| (shape[d] as i64, xst[d])).collect();
    macro_rules! run {
        ($I:ty) => {{
            let idx = elems::<$I>(indices);
            with_elem!(res.aval.dtype, T => {
                let src = elems::<T>(upd);
                let dst = elems_mut::<T>(res);
                // One loop per combiner (a match per element was a jump table in the loop).
                match op {
                    ScatterOp::Set => point_scatter_loop(dst, src, idx, &axes, mode, |_, b| b),
                    ScatterOp::Add => point_scatter_loop(dst, src, idx, &axes, mode, |a: T, b| a.eadd(b)),
                    ScatterOp::Mul => point_scatter_loop(dst, src, idx, &axes, mode, |a: T, b| a.emul(b)),
                    ScatterOp::Min => point_scatter_loop(dst, src, idx, &axes, mode, |a: T, b| a.emin(b)),
                    ScatterOp::Max => point_scatter_loop(dst, src, idx, &axes, mode, |a: T, b| a.emax(b)),
                }
            });
            true
        }};
    }
    match indices.aval.dtype {
        crate::ir::DType::I32 => run!(i32),
        crate::ir::DType::U32 => run!(u32),
        crate::ir::DType::I64 => run!(i64),
        _ => false,
    }
}

/// `point_scatter`'s loop for one combiner `f`, in batch order. A dropped update (`FillOrDrop`, a start out
/// of range) combines into a scratch element instead of branching around the write: `nonzero(size=)`'s
/// counting scatter drops about half of its points in data order, which a branch mispredicts (a third of
/// its time). A one-component start (`x.at[i]`) has its own loops, the mode tested once.
#[inline(always)]
fn point_scatter_loop<T: Elem, I: Copy + Into<i64>>(
    dst: &mut [T], src: &[T], idx: &[I], axes: &[(i64, usize)], mode: IndexMode, f: impl Fn(T, T) -> T,
) {
    let Some(&first) = src.first() else { return };
    let n = dst.len();
    let base = dst.as_mut_ptr();
    let mut sink = first;
    // Opaque, so that the compiler keeps the write through the selected pointer rather than turning the
    // dead scratch write into a branch around the real one.
    let sink_ptr: *mut T = std::hint::black_box(&mut sink as *mut T);
    let nk = axes.len();
    match (nk, mode) {
        (1, IndexMode::Clip) => {
            let (len, st) = axes[0];
            for (&u, &s) in src.iter().zip(idx) {
                let o = s.into().clamp(0, len - 1) as usize * st;
                debug_assert!(o < n);
                // SAFETY: a clamped start's offset lies inside the operand.
                unsafe {
                    let p = base.add(o);
                    *p = f(*p, u);
                }
            }
        }
        (1, IndexMode::FillOrDrop) => {
            let (len, st) = axes[0];
            for (&u, &s) in src.iter().zip(idx) {
                let s: i64 = s.into();
                let p = if (s as u64) < len as u64 { base.wrapping_add(s as usize * st) } else { sink_ptr };
                // SAFETY: `p` is an in-range element of the operand or the scratch element.
                unsafe { *p = f(*p, u) };
            }
        }
        _ => {
            for (g, &u) in src.iter().enumerate() {
                let p = match point_offset(&idx[g * nk..(g + 1) * nk], axes, mode) {
                    Some(o) if o < n => base.wrapping_add(o),
                    _ => sink_ptr,
                };
                // SAFETY: as above.
                unsafe { *p = f(*p, u) };
            }
        }
    }
}
