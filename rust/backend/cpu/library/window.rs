//! Windowed reductions on the CPU: `reduce_window_sum/max/min` and `select_and_scatter_add` (the max/min
//! pool gradient), by direct loops over output positions and window offsets.
//!
//! The trailing axes that the window leaves alone (size 1, stride 1, no padding or dilation: the channels
//! of an NHWC pool) form one contiguous lane of equal length in the operand and the output, so each window
//! offset combines a whole lane at once (a vectorizable loop). Padding and base-dilation holes hold the
//! reduction's identity, so they are skipped. Reductions run in parallel over output positions;
//! `select_and_scatter_add` runs in parallel over the leading axis when the window leaves it alone (the
//! batch of a pool: disjoint slabs of the result), otherwise serially (overlapping windows add into the
//! same elements).
use rayon::prelude::*;

use super::elem::{elems, elems_mut, numel, strides, uninit, with_elem, Elem};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, DType, ReduceOp, WindowParams};

/// The window's geometry: the outer (windowed) axes and the length of the untouched trailing lane.
struct Geo {
    outer_out: Vec<usize>,
    lane: usize,
    win: Vec<usize>,
    /// per outer axis, per (output index, window index): the operand element offset, or None
    taps: Vec<Vec<Option<usize>>>,
}

impl Geo {
    fn new(w: &WindowParams, in_shape: &[usize], out_shape: &[usize]) -> Geo {
        let n = in_shape.len();
        let trivial = |i: usize| {
            w.window_dimensions[i] == 1
                && w.window_strides[i] == 1
                && w.padding[i] == (0, 0)
                && w.base_dilation[i] == 1
                && w.window_dilation[i] == 1
        };
        let mut k = n;
        while k > 0 && trivial(k - 1) {
            k -= 1;
        }
        let st = strides(in_shape);
        let lane: usize = in_shape[k..].iter().product();
        let mut taps = Vec::with_capacity(k);
        for i in 0..k {
            let mut t = Vec::with_capacity(out_shape[i] * w.window_dimensions[i]);
            for o in 0..out_shape[i] {
                for j in 0..w.window_dimensions[i] {
                    let u = (o * w.window_strides[i] + j * w.window_dilation[i]) as i64 - w.padding[i].0;
                    let d = w.base_dilation[i] as i64;
                    t.push(if u >= 0 && u % d == 0 && ((u / d) as usize) < in_shape[i] {
                        Some((u / d) as usize * st[i])
                    } else {
                        None
                    });
                }
            }
            taps.push(t);
        }
        Geo {
            outer_out: out_shape[..k].to_vec(),
            lane,
            win: w.window_dimensions[..k].to_vec(),
            taps,
        }
    }

    /// Operand offsets of every window element of outer output position `p` (None: padding or a hole), in
    /// row-major window order, into `out`.
    fn window_offsets(&self, p: usize, idx: &mut [usize], k: &mut [usize], out: &mut Vec<Option<usize>>) {
        let nk = self.win.len();
        let mut q = p;
        for j in (0..nk).rev() {
            idx[j] = q % self.outer_out[j];
            q /= self.outer_out[j];
        }
        out.clear();
        let total: usize = self.win.iter().product();
        for w in 0..total {
            let mut r = w;
            for j in (0..nk).rev() {
                k[j] = r % self.win[j];
                r /= self.win[j];
            }
            let mut off = Some(0usize);
            for j in 0..nk {
                off = match (off, self.taps[j][idx[j] * self.win[j] + k[j]]) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
            }
            out.push(off);
        }
    }
}

pub fn reduce_window(x: &Buffer, op: ReduceOp, w: &WindowParams, out: &Aval) -> Result<Buffer> {
    let res = uninit(out)?;
    if numel(&out.shape) == 0 {
        return Ok(res);
    }
    if x.aval.dtype == DType::Bool {
        return Err(Error::Execution("reduce_window on bool is not lowered".into()));
    }
    let geo = Geo::new(w, &x.aval.shape, &out.shape);
    with_elem!(x.aval.dtype, T => {
        // SAFETY: the element type matches the dtype; `res` is fresh and written only here.
        let (s, d) = unsafe { (elems::<T>(x), elems_mut::<T>(&res)) };
        let init: T = match op {
            ReduceOp::Sum => T::zero(),
            ReduceOp::Max => T::from_f64(f64::NEG_INFINITY),
            _ => T::from_f64(f64::INFINITY),
        };
        let lane = geo.lane;
        let outer: usize = geo.outer_out.iter().product();
        // blocks of whole lanes (about 16 KiB of output each), the window bookkeeping allocated once per block
        let per_block = ((1usize << 12) / lane.max(1)).max(1);
        let work = |b: usize, dst: &mut [T]| match op {
            // one loop per op, so the lane loop has no branch on the op and vectorizes
            ReduceOp::Sum => pool_block(&geo, s, dst, b * per_block, init, |a: T, b: T| a.eadd(b)),
            ReduceOp::Max => pool_block(&geo, s, dst, b * per_block, init, |a: T, b: T| a.emax(b)),
            _ => pool_block(&geo, s, dst, b * per_block, init, |a: T, b: T| a.emin(b)),
        };
        crate::backend::cpu::threads::parallel(|split| {
            if split && outer * lane >= 1 << 14 {
                d.par_chunks_mut(lane * per_block).enumerate().for_each(|(b, dst)| work(b, dst));
            } else {
                d.chunks_mut(lane * per_block).enumerate().for_each(|(b, dst)| work(b, dst));
            }
        });
    });
    Ok(res)
}

/// The output lanes `dst` (whole lanes, from outer position `p0`) reduced over their windows with `f`.
#[inline(always)]
fn pool_block<T: Elem>(geo: &Geo, s: &[T], dst: &mut [T], p0: usize, init: T, f: impl Fn(T, T) -> T) {
    let nk = geo.win.len();
    let lane = geo.lane;
    let (mut idx, mut k, mut offs) = (vec![0; nk], vec![0; nk], Vec::new());
    for (i, lane_dst) in dst.chunks_mut(lane).enumerate() {
        geo.window_offsets(p0 + i, &mut idx, &mut k, &mut offs);
        lane_dst.iter_mut().for_each(|v| *v = init);
        for &off in offs.iter().flatten() {
            let src = &s[off..off + lane];
            for (a, &b) in lane_dst.iter_mut().zip(src) {
                *a = f(*a, b);
            }
        }
    }
}

pub fn select_and_scatter_add(src: &Buffer, x: &Buffer, ge: bool, w: &WindowParams) -> Result<Buffer> {
    let res = uninit(&x.aval)?;
    match x.aval.dtype {
        DType::F32 => sas::<f32>(src, x, ge, w, &res),
        DType::F64 => sas::<f64>(src, x, ge, w, &res),
        DType::I32 => sas::<i32>(src, x, ge, w, &res),
        DType::I64 => sas::<i64>(src, x, ge, w, &res),
        DType::U32 => sas::<u32>(src, x, ge, w, &res),
        d => return Err(Error::Execution(format!("select_and_scatter_add on {} is not lowered", d.short_name()))),
    }
    Ok(res)
}

fn sas<T: Elem + PartialOrd>(src: &Buffer, x: &Buffer, ge: bool, w: &WindowParams, res: &Buffer) {
    // SAFETY: the element type matches the dtype (the caller's match); `res` is fresh.
    let (s, xs, d) = unsafe { (elems::<T>(src), elems::<T>(x), elems_mut::<T>(res)) };
    if s.is_empty() {
        d.iter_mut().for_each(|v| *v = T::zero());
        return;
    }
    let geo = Geo::new(w, &x.aval.shape, &src.aval.shape);
    let outer: usize = geo.outer_out.iter().product();
    let n0 = x.aval.shape.first().copied().unwrap_or(1);
    // When the window leaves the leading axis alone (the batch of a pool), the windows of different leading
    // indices scatter into disjoint slabs of the result: the slabs run in parallel, each in the serial
    // order, so the sums are the same as one serial pass.
    let lead_free = !geo.win.is_empty()
        && w.window_dimensions[0] == 1
        && w.window_strides[0] == 1
        && w.padding[0] == (0, 0)
        && w.base_dilation[0] == 1
        && w.window_dilation[0] == 1;
    if lead_free && n0 > 1 && d.len() >= 1 << 14 {
        let (slab, per) = (d.len() / n0, outer / n0);
        crate::backend::cpu::threads::parallel(|split| {
            let part = |(i, dd): (usize, &mut [T])| sas_part(&geo, s, xs, dd, i * slab, i * per..(i + 1) * per, ge);
            if split {
                d.par_chunks_mut(slab).enumerate().for_each(part);
            } else {
                d.chunks_mut(slab).enumerate().for_each(part);
            }
        });
    } else {
        sas_part(&geo, s, xs, d, 0, 0..outer, ge);
    }
}

/// The scatter of outer output positions `ps` into `d`, the result's elements from offset `base` on (every
/// element those windows select lies in it).
fn sas_part<T: Elem + PartialOrd>(
    geo: &Geo, s: &[T], xs: &[T], d: &mut [T], base: usize, ps: std::ops::Range<usize>, ge: bool,
) {
    d.iter_mut().for_each(|v| *v = T::zero());
    let lane = geo.lane;
    let nk = geo.win.len();
    let (mut idx, mut k) = (vec![0; nk], vec![0; nk]);
    let mut offs = Vec::new();
    let mut best: Vec<T> = vec![T::zero(); lane];
    let mut at: Vec<usize> = vec![usize::MAX; lane];
    for p in ps {
        geo.window_offsets(p, &mut idx, &mut k, &mut offs);
        let mut valid = offs.iter().flatten();
        // a window wholly in padding selects nothing
        let Some(&first) = valid.next() else { continue };
        best.copy_from_slice(&xs[first..first + lane]);
        at.iter_mut().enumerate().for_each(|(l, a)| *a = first + l);
        for &off in valid {
            // XLA's select: the current choice stays while select(current, candidate) holds, so the first
            // extremum wins; a NaN current choice is replaced. Written without branches, so the lane
            // loop vectorizes.
            for (l, ((b, a), &v)) in best.iter_mut().zip(at.iter_mut()).zip(&xs[off..off + lane]).enumerate() {
                let keep = if ge { *b >= v } else { *b <= v };
                *b = if keep { *b } else { v };
                *a = if keep { *a } else { off + l };
            }
        }
        for (&a, &sv) in at.iter().zip(&s[p * lane..(p + 1) * lane]) {
            let e = a - base;
            d[e] = d[e].eadd(sv);
        }
    }
}
