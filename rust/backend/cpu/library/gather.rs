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

/// Operand start of batch `g`'s window: `map[k]` gets `indices[g, k]`; `Some` (clamped under `Clip`) or
/// `None` when the window does not fit (`FillOrDrop`).
fn window_start(
    indices: &Buffer, g: usize, map: &[usize], shape: &[usize], win: &[usize], mode: IndexMode,
) -> Option<Vec<usize>> {
    let nk = map.len();
    let mut start = vec![0usize; shape.len()];
    for (k, &d) in map.iter().enumerate() {
        let s = read_index(indices, g * nk + k);
        let hi = shape[d] as i64 - win[d] as i64;
        start[d] = match mode {
            IndexMode::Clip => s.clamp(0, hi.max(0)) as usize,
            IndexMode::FillOrDrop if s >= 0 && s <= hi => s as usize,
            IndexMode::FillOrDrop => return None,
        };
    }
    Some(start)
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
    with_elem!(out.dtype, T => {
        // SAFETY: element type matches; `res` is fresh.
        let (src, dst) = unsafe { (elems::<T>(x), elems_mut::<T>(&res)) };
        let fv: T = match fill { Some(f) => super::elem::scalar_from_f64::<T>(f), None => T::default_fill() };
        if s.slice_sizes.iter().any(|&z| z == 0) {
            // empty windows on collapsed axes: nothing to read
            dst.iter_mut().for_each(|e| *e = fv);
            return Ok(res);
        }
        let mut g_idx = vec![0usize; nb];
        let n_batch = numel(bshape);
        for g in 0..n_batch {
            let obase: usize = g_idx.iter().zip(&bo).map(|(i, st)| i * st).sum();
            let start = window_start(indices, g, s.start_index_map, shape, s.slice_sizes, mode);
            let mut w = vec![0usize; win_shape.len()];
            match start {
                Some(start) => {
                    let xbase: usize = start.iter().zip(&xst).map(|(a, b)| a * b).sum();
                    loop {
                        let xo: usize = xbase + w.iter().zip(&wx).map(|(i, st)| i * st).sum::<usize>();
                        let oo: usize = obase + w.iter().zip(&wo).map(|(i, st)| i * st).sum::<usize>();
                        dst[oo] = src[xo];
                        if !next(&mut w, &win_shape) {
                            break;
                        }
                    }
                }
                None => loop {
                    let oo: usize = obase + w.iter().zip(&wo).map(|(i, st)| i * st).sum::<usize>();
                    dst[oo] = fv;
                    if !next(&mut w, &win_shape) {
                        break;
                    }
                },
            }
            next(&mut g_idx, bshape);
        }
    });
    Ok(res)
}

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
    let shape = &x.aval.shape;
    let res = uninit(&x.aval)?;
    let es = x.aval.dtype.size();
    // SAFETY: same size; `res` is fresh.
    unsafe { std::ptr::copy_nonoverlapping(x.as_ptr(), res.as_ptr(), numel(shape) * es) };
    let ushape = &upd.aval.shape;
    if numel(ushape) == 0 {
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
    with_elem!(x.aval.dtype, T => {
        // SAFETY: element types match; `res` is fresh.
        let (src, dst) = unsafe { (elems::<T>(upd), elems_mut::<T>(&res)) };
        let mut g_idx = vec![0usize; nb];
        for g in 0..numel(bshape) {
            let ubase: usize = g_idx.iter().zip(&bu).map(|(i, st)| i * st).sum();
            // Under FillOrDrop, every operand axis must fit the window (not only the indexed ones).
            let start = window_start(indices, g, s.scatter_dims_to_operand_dims, shape, &win_full, mode);
            if let Some(start) = start {
                if start.iter().zip(&win_full).zip(shape).all(|((a, w), n)| a + w <= *n) {
                    let xbase: usize = start.iter().zip(&xst).map(|(a, b)| a * b).sum();
                    let mut w = vec![0usize; win_shape.len()];
                    loop {
                        let xo = xbase + w.iter().zip(&wx).map(|(i, st)| i * st).sum::<usize>();
                        let uo = ubase + w.iter().zip(&wu).map(|(i, st)| i * st).sum::<usize>();
                        dst[xo] = combine(op, dst[xo], src[uo]);
                        if !next(&mut w, &win_shape) {
                            break;
                        }
                    }
                }
            }
            next(&mut g_idx, bshape);
        }
    });
    Ok(res)
}
