//! `conv_general_dilated` on the CPU, float32 and float64, any layout (JAX's dimension numbers read as
//! element strides), any number of spatial dimensions, strides, padding, both dilations and group counts.
//!
//! Kernels, chosen by shape:
//! - **implicit-GEMM register tiles** (`conv_direct`) for f32 with contiguous in-features (input) and
//!   out-features (output) — NHWC-style layouts, forward and input-gradient convolutions — at least
//!   `TILE_MIN_CG` in-features per group (or a reduction of at most `TILE_TINY_REDUCTION` elements: a first
//!   layer over one channel) and whole vectors of out-features per group, on AVX-512/AVX2
//!   hosts: the kernel is packed once per call and each tile reads the input in place (no patch matrix).
//! - **im2col blocks into `gemm`** (the general case): per image and group, the output positions are
//!   taken in blocks of rows whose patch matrix `[rows, kernel elements × in-features]` fits in cache;
//!   each block is one `gemm` product with the packed kernel `[kernel elements × in-features, out-features]`,
//!   written straight into the output through its strides. A 1×1 stride-1 unpadded convolution reads the
//!   input in place (no patch copy). Blocks run in parallel on cranax's pool.
//! - **implicit-GEMM tiles along the reduction** (`reduction_tiles`) for the f32 kernel gradient of a
//!   channels-last convolution on AVX-512/AVX2 hosts (one group, out-features contiguous in whole vectors):
//!   the input is copied once, transposed and zero-padded, so each tile row pointer reads a contiguous run
//!   of the last kernel dimension, and the kernel (the forward output's gradient) is read in place. The
//!   other kernel gradients take the next path (`by_reduction`).
//! - **im2col along the reduction** when there are few output positions and a long reduction (the kernel
//!   gradient of a convolution is one: its "kernel" is the forward output): the patch matrix is built in
//!   blocks of reduction rows, `[rows, batch × positions]`, and each block's product with the matching rows
//!   of the kernel accumulates into a small output, per thread, summed at the end.
//! - **direct loops across groups** when each batch group is one image with one out-feature (a depthwise
//!   convolution's kernel gradient): every output position accumulates all groups at once (contiguous
//!   channels vectorize), in-features split between threads.
//! - **direct loops** for depthwise convolutions (one in-feature per group, few out-features per group),
//!   where a `gemm` per group would be a matrix-vector product: each output position accumulates its
//!   kernel window over all channels at once (contiguous channels vectorize).
//!
//! Positions that fall in padding or in the holes of the input dilation read zero.
//!
//! An epilogue (`super::epilogue`: the bias add and activation after the layer) runs on each tile chunk or
//! im2col block as soon as it is written when those blocks are contiguous element ranges of the output
//! (one group, out-features innermost, positions next, then the batch: NHWC); otherwise once at the end.
use rayon::prelude::*;

use super::conv_direct;
use super::epilogue::Epilogue;
use super::elem::{numel, strides, uninit, Float as Real};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, ConvParams, DType};

/// Patch blocks aim at this many bytes (about half of a 1 MiB L2), within the row limits below.
const BLOCK_BYTES: usize = 1 << 19;
const MIN_ROWS: usize = 32;
const MAX_ROWS: usize = 2048;
/// Convolutions with at most this many output rows (batch × positions) per group, and a reduction
/// (kernel elements × in-features) at least 4× longer, take `by_reduction` (a kernel gradient's shape).
const REDUCTION_ROWS: usize = 8192;

/// The convolution's geometry: sizes in canonical order and element strides of each operand.
struct Geo {
    nb: usize,      // output batch (lhs batch / batch groups)
    bg: usize,      // batch groups
    groups: usize,  // feature groups × batch groups (one of them is 1)
    fg: bool,       // the groups split the features (else the batch)
    cg: usize,      // in-features per group
    oq: usize,      // out-features per group
    ksp: Vec<usize>,
    osp: Vec<usize>,
    lsp: Vec<usize>,
    x_n: usize,
    x_c: usize,
    x_s: Vec<usize>,
    w_o: usize,
    w_i: usize,
    w_s: Vec<usize>,
    o_n: usize,
    o_o: usize,
    o_s: Vec<usize>,
    /// per spatial dim, per (output index, kernel index): the input element offset, or None (padding/hole)
    taps: Vec<Vec<Option<usize>>>,
}

impl Geo {
    fn new(c: &ConvParams, l: &Aval, r: &Aval, out: &Aval) -> Geo {
        let (ls, rs, os) = (&c.lhs_spec, &c.rhs_spec, &c.out_spec);
        let (lst, rst, ost) = (strides(&l.shape), strides(&r.shape), strides(&out.shape));
        let (g, b) = (c.feature_group_count, c.batch_group_count);
        let lsp: Vec<usize> = ls[2..].iter().map(|&d| l.shape[d]).collect();
        let ksp: Vec<usize> = rs[2..].iter().map(|&d| r.shape[d]).collect();
        let osp: Vec<usize> = os[2..].iter().map(|&d| out.shape[d]).collect();
        let x_s: Vec<usize> = ls[2..].iter().map(|&d| lst[d]).collect();
        let mut taps = Vec::with_capacity(lsp.len());
        for j in 0..lsp.len() {
            let mut t = Vec::with_capacity(osp[j] * ksp[j]);
            for o in 0..osp[j] {
                for k in 0..ksp[j] {
                    let u = (o * c.window_strides[j] + k * c.rhs_dilation[j]) as i64 - c.padding[j].0;
                    let d = c.lhs_dilation[j] as i64;
                    t.push(if u >= 0 && u % d == 0 && ((u / d) as usize) < lsp[j] {
                        Some((u / d) as usize * x_s[j])
                    } else {
                        None
                    });
                }
            }
            taps.push(t);
        }
        Geo {
            nb: l.shape[ls[0]] / b,
            bg: b,
            groups: g * b,
            fg: g > 1 || b == 1,
            cg: r.shape[rs[1]],
            oq: r.shape[rs[0]] / (g * b),
            ksp,
            osp,
            lsp,
            x_n: lst[ls[0]],
            x_c: lst[ls[1]],
            x_s,
            w_o: rst[rs[0]],
            w_i: rst[rs[1]],
            w_s: rs[2..].iter().map(|&d| rst[d]).collect(),
            o_n: ost[os[0]],
            o_o: ost[os[1]],
            o_s: os[2..].iter().map(|&d| ost[d]).collect(),
            taps,
        }
    }

    fn kk(&self) -> usize {
        self.ksp.iter().product()
    }

    /// The spatial offset tables of the reduction kernels: `tap[q * kk + k]`, the input offset of output
    /// position `q` under kernel offset `k` (None where it falls in padding or a dilation hole), and
    /// `kofs[k]`, the kernel's own offset of `k`.
    fn tap_table(&self) -> (Vec<Option<usize>>, Vec<usize>) {
        let (kk, nsp) = (self.kk(), self.osp.len());
        let p_total: usize = self.osp.iter().product();
        let (mut qi, mut ki) = (vec![0usize; nsp], vec![0usize; nsp]);
        let mut tap = vec![None; p_total * kk];
        for q in 0..p_total {
            unravel(q, &self.osp, &mut qi);
            for k in 0..kk {
                unravel(k, &self.ksp, &mut ki);
                let mut off = Some(0usize);
                for j in 0..nsp {
                    off = match (off, self.taps[j][qi[j] * self.ksp[j] + ki[j]]) {
                        (Some(a), Some(b)) => Some(a + b),
                        _ => None,
                    };
                }
                tap[q * kk + k] = off;
            }
        }
        let kofs = (0..kk)
            .map(|k| {
                unravel(k, &self.ksp, &mut ki);
                ki.iter().zip(&self.w_s).map(|(a, b)| a * b).sum()
            })
            .collect();
        (tap, kofs)
    }

    /// Input offset of image `n` (of the output batch) in group `g`: (lhs batch, first in-feature).
    fn x_base(&self, n: usize, g: usize) -> usize {
        if self.fg {
            n * self.x_n + g * self.cg * self.x_c
        } else {
            (g * self.nb + n) * self.x_n
        }
    }

    /// Whether the output positions (row-major over the spatial dims) are equally spaced in `st`, and
    /// that spacing.
    fn linear(sizes: &[usize], st: &[usize]) -> Option<usize> {
        let live: Vec<usize> = (0..sizes.len()).filter(|&j| sizes[j] != 1).collect();
        for w in live.windows(2) {
            if st[w[0]] != st[w[1]] * sizes[w[1]] {
                return None;
            }
        }
        Some(live.last().map(|&j| st[j]).unwrap_or(1))
    }
}

fn unravel(mut p: usize, sizes: &[usize], idx: &mut [usize]) {
    for j in (0..sizes.len()).rev() {
        idx[j] = p % sizes[j];
        p /= sizes[j];
    }
}

/// The convolution, with `epi` (if any) applied in place to its output.
pub fn conv(c: &ConvParams, lhs: &Buffer, rhs: &Buffer, out: &Aval, epi: Option<&Epilogue>) -> Result<Buffer> {
    let res = uninit(out)?;
    if numel(&out.shape) == 0 {
        return Ok(res);
    }
    let geo = Geo::new(c, &lhs.aval, &rhs.aval, out);
    let applied = match out.dtype {
        // SAFETY: the plan validator checked the avals against the shape rule (`LibOp::infer`), so every
        // offset `Geo` computes lies inside its buffer; `res` is fresh and written only here.
        DType::F32 => unsafe { run::<f32>(&geo, c, lhs, rhs, &res, epi) },
        DType::F64 => unsafe { run::<f64>(&geo, c, lhs, rhs, &res, epi) },
        d => return Err(Error::Execution(format!("conv_general_dilated on {} is not lowered", d.short_name()))),
    };
    if let (Some(e), false) = (epi, applied) {
        // SAFETY: `res` is fully written, of the aval the plan checked the epilogue against.
        unsafe { e.whole(res.as_ptr()) };
    }
    Ok(res)
}

/// Whether output positions `[p0, p1)` of image `n`, all out-features, are the element range
/// `[n * o_n + p0 * oq, n * o_n + p1 * oq)`: one group, features innermost, then positions, then images.
fn blocks_contiguous(geo: &Geo) -> bool {
    let p_total: usize = geo.osp.iter().product();
    geo.groups == 1 && geo.o_o == 1 && Geo::linear(&geo.osp, &geo.o_s) == Some(geo.oq) && geo.o_n == p_total * geo.oq
}

/// Returns whether `epi` was applied (block by block); callers apply it otherwise.
///
/// SAFETY: `geo` describes `lhs`, `rhs` and `res` (of element type T); `res` is not shared.
unsafe fn run<T: Real>(geo: &Geo, c: &ConvParams, lhs: &Buffer, rhs: &Buffer, res: &Buffer, epi: Option<&Epilogue>) -> bool {
    let x = lhs.as_ptr() as *const T;
    let w = rhs.as_ptr() as *const T;
    let o = res.as_ptr() as *mut T;
    let kk = geo.kk();
    if kk == 0 || geo.cg == 0 {
        std::slice::from_raw_parts_mut(o, numel(&res.aval.shape)).iter_mut().for_each(|v| *v = T::ZERO);
        return false;
    }
    if geo.cg == 1 && geo.bg == 1 && geo.oq <= 8 && geo.groups > 1 {
        depthwise(geo, x, w, o);
        return false;
    }
    if geo.bg > 1 && geo.nb == 1 && geo.oq == 1 {
        batch_grouped(geo, x, w, o);
        return false;
    }
    let rows = geo.nb * geo.osp.iter().product::<usize>();
    if rows <= REDUCTION_ROWS && kk * geo.cg >= 4 * rows {
        if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>() {
            if let Some(isa) = conv_direct::isa().filter(|&isa| reduction_tiles_fit(geo, c, isa)) {
                reduction_tiles(geo, c, isa, x as *const f32, w as *const f32, o as *mut f32);
                return false;
            }
        }
        by_reduction(geo, x, w, o);
        return false;
    }
    let epi = epi.filter(|_| blocks_contiguous(geo));
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>() {
        if let Some(isa) = conv_direct::isa().filter(|&isa| tiles_fit(geo, isa)) {
            tiled(geo, isa, x as *const f32, w as *const f32, o as *mut f32, epi);
            return epi.is_some();
        }
    }
    im2col(geo, c, x, w, o, epi);
    epi.is_some()
}

/// In-features per group below which the tiles lose to im2col (each kernel offset's row pointers cost as
/// much as its few multiply-adds).
const TILE_MIN_CG: usize = 8;
/// A reduction (kernel elements × in-features) at most this long takes the tiles whatever its in-features
/// (a first layer's 3×3 window over one channel): im2col would make one `gemm` call per block of a few
/// multiply-adds per output, whose call and packing cost more than the tiles' row pointers.
const TILE_TINY_REDUCTION: usize = 32;
/// The tiles index a `[positions × kernel elements]` offset table; larger ones take im2col.
const TILE_MAX_TAPS: usize = 1 << 22;
/// Output positions per parallel task of the tiled kernel (a few tiles: enough work per task, and enough
/// tasks for every thread when the batch is small).
const TILE_CHUNK: usize = 4 * conv_direct::MAX_MR;

/// Whether the implicit-GEMM tiles (`conv_direct`) take this f32 convolution: in-features contiguous in
/// the input, out-features contiguous in the output, whole vectors of out-features per group.
fn tiles_fit(geo: &Geo, isa: conv_direct::Isa) -> bool {
    let p_total: usize = geo.osp.iter().product();
    // 1×1 windows stay on the im2col path: it reads their input in place already and measured as fast
    geo.kk() > 1
        && geo.x_c == 1
        && geo.o_o == 1
        && geo.oq % isa.lanes() == 0
        && (geo.cg >= TILE_MIN_CG || geo.kk() * geo.cg <= TILE_TINY_REDUCTION)
        && p_total.saturating_mul(geo.kk()) <= TILE_MAX_TAPS
}

/// The implicit-GEMM path: the kernel packed once per group as `[kk × cg, oq]` cut into column panels of the
/// tile widths (`conv_direct::pack_panels`: each tile streams its panel contiguously), then per (image,
/// group, chunk of `TILE_CHUNK` output positions) one `conv_direct::chunk` whose row pointers index the
/// input in place.
///
/// `epi` (given only when `blocks_contiguous`) runs on each chunk once its tiles are written.
///
/// SAFETY: as `run`, with `tiles_fit(geo, isa)`.
unsafe fn tiled(geo: &Geo, isa: conv_direct::Isa, x: *const f32, w: *const f32, o: *mut f32, epi: Option<&Epilogue>) {
    // 48 positions: against 24 and 96 (3×3 64→64, AVX2 and AVX-512) no faster, and tasks stay small
    let chunk_len = TILE_CHUNK;
    let (kk, cg, oq) = (geo.kk(), geo.cg, geo.oq);
    let mr = conv_direct::MAX_MR;
    let wp = conv_direct::pack_panels(isa, &pack_kernel(geo, w), geo.groups, kk * cg, oq);
    let (tap, _) = geo.tap_table();
    let p_total: usize = geo.osp.iter().product();
    let mut qi = vec![0usize; geo.osp.len()];
    let qoff: Vec<usize> = (0..p_total)
        .map(|q| {
            unravel(q, &geo.osp, &mut qi);
            qi.iter().zip(&geo.o_s).map(|(a, b)| a * b).sum()
        })
        .collect();
    // padding taps and unused tile rows read this
    let zeros = vec![0f32; cg];
    let per = p_total.div_ceil(chunk_len);
    let tasks = geo.nb * geo.groups * per;
    let (xa, wa, oa, za) = (x as usize, wp.as_ptr() as usize, o as usize, zeros.as_ptr() as usize);
    let (tap, qoff, glen) = (&tap, &qoff, wp.group_len);
    let task = |t: usize, a: &mut Vec<*const f32>| {
        let (x, wp, o, zp) = (xa as *const f32, wa as *const f32, oa as *mut f32, za as *const f32);
        let c = t % per;
        let g = (t / per) % geo.groups;
        let n = t / (per * geo.groups);
        let xb = x.add(geo.x_base(n, g));
        let ob = o.add(n * geo.o_n + g * oq * geo.o_o);
        let (q0, end) = (c * chunk_len, ((c + 1) * chunk_len).min(p_total));
        let rows = end - q0;
        // the row pointers, in one scratch vector per thread; rows past `rows` read the zero row
        a.clear();
        for r in 0..rows + mr {
            for k in 0..kk {
                a.push(match (r < rows).then(|| tap[(q0 + r) * kk + k]).flatten() {
                    Some(t) => xb.add(t),
                    None => zp,
                });
            }
        }
        let out: Vec<*mut f32> = (0..rows).map(|r| ob.add(qoff[q0 + r])).collect();
        conv_direct::chunk(isa, rows, a, kk, cg, wp.add(g * glen), oq, &out);
        if let Some(e) = epi {
            // one group: the chunk's positions are contiguous (`blocks_contiguous`)
            let base = n * geo.o_n;
            e.range(o as *mut u8, base + q0 * oq, base + end * oq);
        }
    };
    run_tasks(tasks, task);
}

/// The kernel of every group as `[groups][kk × cg, oq]` row-major (row = kernel offset × cg + in-feature).
unsafe fn pack_kernel<T: Real>(geo: &Geo, w: *const T) -> Vec<T> {
    let (kk, cg, oq) = (geo.kk(), geo.cg, geo.oq);
    let mut out = Vec::with_capacity(geo.groups * kk * cg * oq);
    let mut k = vec![0usize; geo.ksp.len()];
    for g in 0..geo.groups {
        for ki in 0..kk {
            unravel(ki, &geo.ksp, &mut k);
            let ks: usize = k.iter().zip(&geo.w_s).map(|(a, b)| a * b).sum();
            for ci in 0..cg {
                for q in 0..oq {
                    out.push(*w.add((g * oq + q) * geo.w_o + ci * geo.w_i + ks));
                }
            }
        }
    }
    out
}

/// `epi` (given only when `blocks_contiguous`) runs on each block once its product is written.
unsafe fn im2col<T: Real>(geo: &Geo, c: &ConvParams, x: *const T, w: *const T, o: *mut T, epi: Option<&Epilogue>) {
    let (kk, cg, oq) = (geo.kk(), geo.cg, geo.oq);
    let kdim = kk * cg;
    let wp = pack_kernel(geo, w);
    let p_total: usize = geo.osp.iter().product();
    let out_lin = Geo::linear(&geo.osp, &geo.o_s);
    // a 1×1 stride-1 convolution without padding or dilation reads its input in place
    let in_lin = Geo::linear(&geo.lsp, &geo.x_s);
    let direct = kk == 1
        && geo.osp == geo.lsp
        && c.window_strides.iter().all(|&s| s == 1)
        && c.lhs_dilation.iter().all(|&d| d == 1)
        && c.padding.iter().all(|&p| p == (0, 0))
        && out_lin.is_some()
        && in_lin.is_some();
    // blocks of output positions that stay inside one run of equally spaced outputs
    let run_len = if out_lin.is_some() { p_total } else { *geo.osp.last().unwrap_or(&1) };
    let o_step = out_lin.unwrap_or(*geo.o_s.last().unwrap_or(&1));
    let rows = (BLOCK_BYTES / (kdim * std::mem::size_of::<T>()).max(1)).clamp(MIN_ROWS, MAX_ROWS);
    let mut blocks: Vec<(usize, usize)> = vec![];
    let mut r0 = 0;
    while r0 < p_total {
        let run_end = (r0 / run_len + 1) * run_len;
        let r1 = (r0 + rows).min(run_end);
        blocks.push((r0, r1));
        r0 = r1;
    }
    let tasks = geo.nb * geo.groups * blocks.len();
    let (xa, wa, oa) = (x as usize, wp.as_ptr() as usize, o as usize);
    let task = |t: usize, scratch: &mut Vec<T>| {
        let (x, wp, o) = (xa as *const T, wa as *const T, oa as *mut T);
        let b = t % blocks.len();
        let g = (t / blocks.len()) % geo.groups;
        let n = t / (blocks.len() * geo.groups);
        let (p0, p1) = blocks[b];
        let m = p1 - p0;
        let nsp = geo.osp.len();
        let mut idx = vec![0usize; nsp];
        unravel(p0, &geo.osp, &mut idx);
        let o_off = n * geo.o_n + g * oq * geo.o_o + idx.iter().zip(&geo.o_s).map(|(a, b)| a * b).sum::<usize>();
        let xb = geo.x_base(n, g);
        let (a_ptr, a_rs, a_cs) = if direct {
            (x.add(xb + p0 * in_lin.unwrap_or(1)), in_lin.unwrap_or(1) as isize, geo.x_c as isize)
        } else {
            scratch.clear();
            scratch.resize(m * kdim, T::ZERO);
            let mut k = vec![0usize; nsp];
            for r in 0..m {
                let row = &mut scratch[r * kdim..(r + 1) * kdim];
                for ki in 0..kk {
                    unravel(ki, &geo.ksp, &mut k);
                    let mut off = Some(xb);
                    for j in 0..nsp {
                        off = match (off, geo.taps[j][idx[j] * geo.ksp[j] + k[j]]) {
                            (Some(a), Some(b)) => Some(a + b),
                            _ => None,
                        };
                    }
                    let dst = &mut row[ki * cg..(ki + 1) * cg];
                    if let Some(off) = off {
                        if geo.x_c == 1 {
                            dst.copy_from_slice(std::slice::from_raw_parts(x.add(off), cg));
                        } else {
                            for (ci, d) in dst.iter_mut().enumerate() {
                                *d = *x.add(off + ci * geo.x_c);
                            }
                        }
                    }
                }
                // next output position (row-major)
                for j in (0..nsp).rev() {
                    idx[j] += 1;
                    if idx[j] < geo.osp[j] {
                        break;
                    }
                    idx[j] = 0;
                }
            }
            (scratch.as_ptr(), kdim as isize, 1isize)
        };
        gemm::gemm::<T>(
            m, oq, kdim, o.add(o_off), geo.o_o as isize, o_step as isize, false, a_ptr, a_cs, a_rs,
            wp.add(g * kdim * oq), 1, oq as isize, T::ZERO, T::ONE, false, false, false, gemm::Parallelism::None,
        );
        if let Some(e) = epi {
            e.range(o as *mut u8, n * geo.o_n + p0 * oq, n * geo.o_n + p1 * oq);
        }
    };
    run_tasks(tasks, task);
}

/// Depthwise convolution (one in-feature per group): each output position sums its window over all
/// channels at once, `oq` out-features per channel.
unsafe fn depthwise<T: Real>(geo: &Geo, x: *const T, w: *const T, o: *mut T) {
    let (kk, oq, ch) = (geo.kk(), geo.oq, geo.groups);
    let width = ch * oq;
    // kernel as [kk, channel × oq]
    let mut wp = Vec::with_capacity(kk * width);
    let mut k = vec![0usize; geo.ksp.len()];
    for ki in 0..kk {
        unravel(ki, &geo.ksp, &mut k);
        let ks: usize = k.iter().zip(&geo.w_s).map(|(a, b)| a * b).sum();
        for c in 0..ch {
            for q in 0..oq {
                wp.push(*w.add((c * oq + q) * geo.w_o + ks));
            }
        }
    }
    let p_total: usize = geo.osp.iter().product();
    let chunk = 64usize;
    let per_image = p_total.div_ceil(chunk);
    let tasks = geo.nb * per_image;
    let (xa, oa) = (x as usize, o as usize);
    let wp = &wp;
    let task = |t: usize, acc: &mut Vec<T>| {
        let (x, o) = (xa as *const T, oa as *mut T);
        let n = t / per_image;
        let p0 = (t % per_image) * chunk;
        let p1 = (p0 + chunk).min(p_total);
        let nsp = geo.osp.len();
        let mut idx = vec![0usize; nsp];
        let mut k = vec![0usize; nsp];
        unravel(p0, &geo.osp, &mut idx);
        acc.resize(width, T::ZERO);
        for _ in p0..p1 {
            acc.iter_mut().for_each(|a| *a = T::ZERO);
            for ki in 0..kk {
                unravel(ki, &geo.ksp, &mut k);
                let mut off = Some(n * geo.x_n);
                for j in 0..nsp {
                    off = match (off, geo.taps[j][idx[j] * geo.ksp[j] + k[j]]) {
                        (Some(a), Some(b)) => Some(a + b),
                        _ => None,
                    };
                }
                let Some(off) = off else { continue };
                let wrow = &wp[ki * width..(ki + 1) * width];
                if oq == 1 && geo.x_c == 1 {
                    let xs = std::slice::from_raw_parts(x.add(off), ch);
                    for ((a, &xv), &wv) in acc.iter_mut().zip(xs).zip(wrow) {
                        *a = *a + xv * wv;
                    }
                } else {
                    for c in 0..ch {
                        let xv = *x.add(off + c * geo.x_c);
                        for q in 0..oq {
                            acc[c * oq + q] = acc[c * oq + q] + xv * wrow[c * oq + q];
                        }
                    }
                }
            }
            let base = n * geo.o_n + idx.iter().zip(&geo.o_s).map(|(a, b)| a * b).sum::<usize>();
            if geo.o_o == 1 {
                std::slice::from_raw_parts_mut(o.add(base), width).copy_from_slice(acc);
            } else {
                for (f, &a) in acc.iter().enumerate() {
                    *o.add(base + f * geo.o_o) = a;
                }
            }
            for j in (0..nsp).rev() {
                idx[j] += 1;
                if idx[j] < geo.osp[j] {
                    break;
                }
                idx[j] = 0;
            }
        }
    };
    run_tasks(tasks, task);
}

/// The last kernel ("rhs") extent below which `reduction_tiles` loses to `by_reduction`: it is the inner
/// contiguous run each row pointer of a tile covers.
const RED_TILE_MIN_RUN: usize = 4;
/// The most elements of the padded input copy `reduction_tiles` makes.
const RED_TILE_MAX_COPY: usize = 1 << 26;
/// `reduction_tiles` runs its reduction in parts whose kernel rows take about this many bytes (half of a
/// 2 MiB L2), each part over all the tiles of a task before the next: the whole kernel (for a 56×56
/// kernel gradient, 25 MB) would otherwise stream from memory once per tile of 6 rows, and under AVX2 once
/// per 16 out-features of it as well (the measured 2× regression of the avx2 mode).
const RED_TILE_PART_BYTES: usize = 1 << 20;

/// Whether `reduction_tiles` takes this f32 convolution of the kernel-gradient shape (`by_reduction`'s):
/// one group, no input dilation, an undilated last kernel dimension of at least `RED_TILE_MIN_RUN`,
/// out-features contiguous in the output in whole vectors.
fn reduction_tiles_fit(geo: &Geo, c: &ConvParams, isa: conv_direct::Isa) -> bool {
    let Some(last) = geo.osp.len().checked_sub(1) else { return false };
    let copy = red_tile_pad(geo, c).iter().map(|&(_, l)| l).fold(geo.nb.saturating_mul(geo.cg), usize::saturating_mul);
    geo.groups == 1
        && c.lhs_dilation.iter().all(|&d| d == 1)
        && c.rhs_dilation[last] == 1
        && geo.ksp[last] >= RED_TILE_MIN_RUN
        && geo.o_o == 1
        && geo.oq % isa.lanes() == 0
        && copy <= RED_TILE_MAX_COPY
}

/// Per spatial dimension of the input, (zeros before it, padded extent) such that every position a
/// (output, kernel) pair reads lies inside: `[-padding_lo, (out - 1) * stride + (k - 1) * dilation -
/// padding_lo]` shifted by the zeros before.
fn red_tile_pad(geo: &Geo, c: &ConvParams) -> Vec<(usize, usize)> {
    (0..geo.lsp.len())
        .map(|j| {
            let lo = c.padding[j].0;
            let off = lo.max(0) as usize;
            let max_u = ((geo.osp[j] - 1) * c.window_strides[j] + (geo.ksp[j] - 1) * c.rhs_dilation[j]) as i64 - lo;
            (off, geo.lsp[j].max((max_u + 1).max(0) as usize) + off)
        })
        .collect()
}

/// The kernel gradient of a channels-last convolution (few output rows, a long reduction: `by_reduction`'s
/// shape) on the implicit-GEMM tiles. Its "input" `x` has the forward channels as batch and the forward
/// images as features; its "kernel" `w` (the forward output's gradient) has the forward images as
/// in-features and the forward channels as out-features. The input is copied once into
/// `[batch][in-feature][padded spatial]` with zeros around it, so that for every output row (batch,
/// position) and every reduction row (in-feature, kernel offset but the last dimension's) the last kernel
/// dimension's taps are one contiguous run: the tiles' row pointer covers it (`cg` = that extent) and the
/// kernel rows `(in-feature, kernel offset)` are read in place when the kernel is laid out that way
/// (NHWC: it is), else packed once. Each output element is one FMA chain over the reduction in order.
///
/// SAFETY: as `run`, with `reduction_tiles_fit(geo, c, isa)`.
unsafe fn reduction_tiles(geo: &Geo, c: &ConvParams, isa: conv_direct::Isa, x: *const f32, w: *const f32, o: *mut f32) {
    let nsp = geo.osp.len();
    let last = nsp - 1;
    let (nb, nf, oq) = (geo.nb, geo.cg, geo.oq);
    let span = geo.ksp[last];
    let kpre: usize = geo.ksp[..last].iter().product();
    let kk = nf * kpre; // the tiles' row pointers per output row
    let pad = red_tile_pad(geo, c);
    let plen: Vec<usize> = pad.iter().map(|&(_, l)| l).collect();
    let pst = strides(&plen);
    let per_plane: usize = plen.iter().product();
    // the padded copy, in parallel over in-features (each writes its own planes)
    let mut xt = vec![0f32; nb * nf * per_plane];
    let lsp_total: usize = geo.lsp.iter().product();
    {
        let (xa, ta) = (x as usize, xt.as_mut_ptr() as usize);
        let (pad, pst) = (&pad, &pst);
        run_tasks(nf, |f, idx: &mut Vec<usize>| {
            let (x, t) = (xa as *const f32, ta as *mut f32);
            idx.resize(nsp, 0);
            for p in 0..lsp_total {
                unravel(p, &geo.lsp, idx);
                let src = f * geo.x_c + idx.iter().zip(&geo.x_s).map(|(a, b)| a * b).sum::<usize>();
                let dst = f * per_plane + (0..nsp).map(|j| (idx[j] + pad[j].0) * pst[j]).sum::<usize>();
                for n in 0..nb {
                    *t.add(n * nf * per_plane + dst) = *x.add(n * geo.x_n + src);
                }
            }
        });
    }
    // the kernel as rows (in-feature, kernel offset) × out-features, in place when it is laid out so
    let kst = strides(&geo.ksp);
    let in_place = geo.w_o == 1
        && (0..nsp).all(|j| geo.ksp[j] == 1 || geo.w_s[j] == kst[j] * oq)
        && (nf == 1 || geo.w_i == kst[0] * geo.ksp[0] * oq);
    let packed: Vec<f32>;
    let wb = if in_place {
        w
    } else {
        let kt: usize = geo.ksp.iter().product();
        let mut v = Vec::with_capacity(nf * kt * oq);
        let mut ki = vec![0usize; nsp];
        for f in 0..nf {
            for k in 0..kt {
                unravel(k, &geo.ksp, &mut ki);
                let ks: usize = ki.iter().zip(&geo.w_s).map(|(a, b)| a * b).sum();
                for j in 0..oq {
                    v.push(*w.add(f * geo.w_i + ks + j * geo.w_o));
                }
            }
        }
        packed = v;
        packed.as_ptr()
    };
    // row pointer parts: output position q (its stride and padding shift) and reduction row (in-feature,
    // kernel offset over all but the last dimension)
    let p_total: usize = geo.osp.iter().product();
    let mut qi = vec![0usize; nsp];
    let mut qpart = Vec::with_capacity(p_total);
    let mut qoff = Vec::with_capacity(p_total);
    for q in 0..p_total {
        unravel(q, &geo.osp, &mut qi);
        let mut part = 0usize;
        for j in 0..nsp {
            // >= 0: the zeros before cover the low padding
            part += ((qi[j] * c.window_strides[j]) as i64 - c.padding[j].0 + pad[j].0 as i64) as usize * pst[j];
        }
        qpart.push(part);
        qoff.push(qi.iter().zip(&geo.o_s).map(|(a, b)| a * b).sum::<usize>());
    }
    let pre = &geo.ksp[..last];
    let mut ki = vec![0usize; last];
    let mut kpart = Vec::with_capacity(kk);
    for f in 0..nf {
        for k in 0..kpre {
            unravel(k, pre, &mut ki);
            kpart.push(f * per_plane + (0..last).map(|j| ki[j] * c.rhs_dilation[j] * pst[j]).sum::<usize>());
        }
    }
    let mr = conv_direct::MAX_MR;
    let rows_total = nb * p_total;
    // rows per task: more than `TILE_CHUNK` so that each part of the kernel is reused by more tiles, still
    // a few tasks per thread
    let threads = rayon::current_num_threads().max(1);
    let chunk = rows_total.div_ceil(4 * threads).next_multiple_of(mr).max(TILE_CHUNK);
    let tasks = rows_total.div_ceil(chunk);
    // row pointers per part of the reduction: its kernel rows fill about `RED_TILE_PART_BYTES`
    let part = (RED_TILE_PART_BYTES / (span * oq * std::mem::size_of::<f32>()).max(1)).clamp(1, kk);
    let zeros = vec![0f32; span];
    let (ta, wa, oa, za) = (xt.as_ptr() as usize, wb as usize, o as usize, zeros.as_ptr() as usize);
    let (qpart, qoff, kpart) = (&qpart, &qoff, &kpart);
    run_tasks(tasks, |t, a: &mut Vec<*const f32>| {
        let (xt, wb, o, zp) = (ta as *const f32, wa as *const f32, oa as *mut f32, za as *const f32);
        a.clear();
        a.resize(mr * part, zp);
        let mut out = [std::ptr::null_mut::<f32>(); conv_direct::MAX_MR];
        let (start, end) = (t * chunk, ((t + 1) * chunk).min(rows_total));
        // parts of the reduction in order, each over all the task's tiles (`block_part`: bit for bit one
        // chain per element)
        let mut k0 = 0;
        while k0 < kk {
            let kl = part.min(kk - k0);
            let wpart = wb.add(k0 * span * oq);
            let mut r0 = start;
            while r0 < end {
                let rows = mr.min(end - r0);
                for r in 0..mr {
                    if r < rows {
                        let (n, q) = ((r0 + r) / p_total, (r0 + r) % p_total);
                        let base = xt.add(n * nf * per_plane + qpart[q]);
                        for (slot, &kp) in a[r * part..r * part + kl].iter_mut().zip(&kpart[k0..k0 + kl]) {
                            *slot = base.add(kp);
                        }
                        out[r] = o.add(n * geo.o_n + qoff[q]);
                    } else {
                        a[r * part..(r + 1) * part].iter_mut().for_each(|p| *p = zp);
                    }
                }
                conv_direct::block_part(isa, rows, a, part, kl, span, wpart, oq, &out, k0 > 0);
                r0 += rows;
            }
            k0 += kl;
        }
    });
}

/// Few output rows, long reduction: `out[(q, n), o] = sum_r patch[r, (q, n)] * kernel[r, o]` over blocks of
/// reduction rows `r = (in-feature, kernel offset)`, each thread accumulating its own `[rows, oq]` result.
unsafe fn by_reduction<T: Real>(geo: &Geo, x: *const T, w: *const T, o: *mut T) {
    let (kk, cg, oq, nb) = (geo.kk(), geo.cg, geo.oq, geo.nb);
    let p_total: usize = geo.osp.iter().product();
    let m = nb * p_total;
    let kdim = kk * cg;
    let rblk = (BLOCK_BYTES / (m * std::mem::size_of::<T>()).max(1)).clamp(16, 4096).min(kdim);
    let nblocks = kdim.div_ceil(rblk);
    let (tap, kofs) = geo.tap_table();
    let mut qi = vec![0usize; geo.osp.len()];
    let (xa, wa) = (x as usize, w as usize);
    for g in 0..geo.groups {
        let bases: Vec<usize> = (0..nb).map(|n| geo.x_base(n, g)).collect();
        let block = |b: usize, acc: &mut Vec<T>, pt: &mut Vec<T>, wb: &mut Vec<T>| {
            let (x, w) = (xa as *const T, wa as *const T);
            let r0 = b * rblk;
            let r1 = (r0 + rblk).min(kdim);
            let rows = r1 - r0;
            pt.clear();
            pt.resize(rows * m, T::ZERO);
            wb.clear();
            wb.reserve(rows * oq);
            for (ri, r) in (r0..r1).enumerate() {
                let (ci, k) = (r / kk, r % kk);
                let dst = &mut pt[ri * m..(ri + 1) * m];
                for q in 0..p_total {
                    if let Some(t) = tap[q * kk + k] {
                        let row = &mut dst[q * nb..(q + 1) * nb];
                        for (n, d) in row.iter_mut().enumerate() {
                            *d = *x.add(bases[n] + ci * geo.x_c + t);
                        }
                    }
                }
                for j in 0..oq {
                    wb.push(*w.add((g * oq + j) * geo.w_o + ci * geo.w_i + kofs[k]));
                }
            }
            let first = acc.is_empty();
            if first {
                acc.resize(m * oq, T::ZERO);
            }
            gemm::gemm::<T>(
                m, oq, rows, acc.as_mut_ptr(), 1, oq as isize, !first, pt.as_ptr(), m as isize, 1, wb.as_ptr(), 1,
                oq as isize, T::ONE, T::ONE, false, false, false, gemm::Parallelism::None,
            );
        };
        let sum = crate::backend::cpu::threads::parallel(|split| {
            let fresh = || (Vec::new(), Vec::new(), Vec::new());
            if split && nblocks > 1 {
                (0..nblocks)
                    .into_par_iter()
                    .fold(fresh, |(mut acc, mut pt, mut wb), b| {
                        block(b, &mut acc, &mut pt, &mut wb);
                        (acc, pt, wb)
                    })
                    .map(|(acc, _, _)| acc)
                    .reduce(Vec::new, |a, b| {
                        if a.is_empty() {
                            return b;
                        }
                        if b.is_empty() {
                            return a;
                        }
                        a.iter().zip(&b).map(|(&u, &v)| u + v).collect()
                    })
            } else {
                let (mut acc, mut pt, mut wb) = fresh();
                (0..nblocks).for_each(|b| block(b, &mut acc, &mut pt, &mut wb));
                acc
            }
        });
        // rows of `sum` are (position q, image n); write them through the output's strides
        for q in 0..p_total {
            unravel(q, &geo.osp, &mut qi);
            let qoff: usize = qi.iter().zip(&geo.o_s).map(|(a, b)| a * b).sum();
            for n in 0..nb {
                for j in 0..oq {
                    let v = if sum.is_empty() { T::ZERO } else { sum[(q * nb + n) * oq + j] };
                    *o.add(n * geo.o_n + (g * oq + j) * geo.o_o + qoff) = v;
                }
            }
        }
    }
}

/// One image and one out-feature per batch group (the kernel gradient of a depthwise convolution):
/// `out[g, q] = sum_{f, k} x[g, f, q·s + k·d] · w[g, f, k]`, vectorized across groups `g`.
unsafe fn batch_grouped<T: Real>(geo: &Geo, x: *const T, w: *const T, o: *mut T) {
    let (kk, cg, groups) = (geo.kk(), geo.cg, geo.groups);
    let p_total: usize = geo.osp.iter().product();
    let (tap, kofs) = geo.tap_table();
    let mut qi = vec![0usize; geo.osp.len()];
    // group g's image is lhs batch index g (nb == 1) and its kernel is rhs out-feature g (oq == 1)
    let (gx, gw) = (geo.x_n, geo.w_o);
    let (xa, wa) = (x as usize, w as usize);
    let part = |f: usize, acc: &mut Vec<T>| {
        let (x, w) = (xa as *const T, wa as *const T);
        if acc.is_empty() {
            acc.resize(p_total * groups, T::ZERO);
        }
        for k in 0..kk {
            let wb = f * geo.w_i + kofs[k];
            for q in 0..p_total {
                let Some(t) = tap[q * kk + k] else { continue };
                let xb = f * geo.x_c + t;
                let a = &mut acc[q * groups..(q + 1) * groups];
                if gx == 1 && gw == 1 {
                    let xs = std::slice::from_raw_parts(x.add(xb), groups);
                    let ws = std::slice::from_raw_parts(w.add(wb), groups);
                    for ((a, &xv), &wv) in a.iter_mut().zip(xs).zip(ws) {
                        *a = *a + xv * wv;
                    }
                } else {
                    for (g, a) in a.iter_mut().enumerate() {
                        *a = *a + *x.add(xb + g * gx) * *w.add(wb + g * gw);
                    }
                }
            }
        }
    };
    let sum = crate::backend::cpu::threads::parallel(|split| {
        if split && cg > 1 {
            (0..cg)
                .into_par_iter()
                .fold(Vec::new, |mut acc, f| {
                    part(f, &mut acc);
                    acc
                })
                .reduce(Vec::new, |a, b| {
                    if a.is_empty() {
                        return b;
                    }
                    if b.is_empty() {
                        return a;
                    }
                    a.iter().zip(&b).map(|(&u, &v)| u + v).collect()
                })
        } else {
            let mut acc = Vec::new();
            (0..cg).for_each(|f| part(f, &mut acc));
            acc
        }
    });
    for q in 0..p_total {
        unravel(q, &geo.osp, &mut qi);
        let qoff: usize = qi.iter().zip(&geo.o_s).map(|(a, b)| a * b).sum();
        for g in 0..groups {
            *o.add(g * geo.o_o + qoff) = if sum.is_empty() { T::ZERO } else { sum[q * groups + g] };
        }
    }
}

/// Runs `task(t, scratch)` for `t` in `0..tasks` inside cranax's pool: spread over its threads when the pool
/// splits work and there is more than one task, each thread reusing one scratch vector; else in order on
/// the calling thread with a single scratch vector.
fn run_tasks<S>(tasks: usize, task: impl Fn(usize, &mut Vec<S>) + Sync + Send) {
    crate::backend::cpu::threads::parallel(|split| {
        if split && tasks > 1 {
            (0..tasks).into_par_iter().for_each_init(Vec::new, |s, t| task(t, s));
        } else {
            let mut s = Vec::new();
            (0..tasks).for_each(|t| task(t, &mut s));
        }
    });
}
