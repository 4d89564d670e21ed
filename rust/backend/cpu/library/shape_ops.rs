//! Data-movement ops: `concatenate`, `pad`, `dynamic_slice`, `dynamic_update_slice`. They copy bytes
//! (any dtype), in contiguous runs along the innermost axis.
use super::elem::{numel, read_index, strides, uninit, with_elem, elems_mut};
use crate::buffer::Buffer;
use crate::error::Result;
use crate::ir::Aval;

/// Per-axis indices, on the stack up to rank 8 (what programs use), else on the heap: `dynamic_slice` and
/// `dynamic_update_slice` run once per call or loop iteration on small arrays, where their five index
/// vectors' mallocs and frees cost about as much as the copy.
enum AxisIdx {
    Inline([usize; 8], usize),
    Heap(Vec<usize>),
}

impl AxisIdx {
    fn zeros(n: usize) -> AxisIdx {
        if n <= 8 {
            AxisIdx::Inline([0; 8], n)
        } else {
            AxisIdx::Heap(vec![0; n])
        }
    }

    /// Row-major strides of `shape`.
    fn strides(shape: &[usize]) -> AxisIdx {
        let mut st = AxisIdx::zeros(shape.len());
        let mut acc = 1usize;
        for i in (0..shape.len()).rev() {
            st[i] = acc;
            acc = acc.saturating_mul(shape[i]);
        }
        st
    }
}

impl std::ops::Deref for AxisIdx {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        match self {
            AxisIdx::Inline(a, n) => &a[..*n],
            AxisIdx::Heap(v) => v,
        }
    }
}

impl std::ops::DerefMut for AxisIdx {
    fn deref_mut(&mut self) -> &mut [usize] {
        match self {
            AxisIdx::Inline(a, n) => &mut a[..*n],
            AxisIdx::Heap(v) => v,
        }
    }
}

/// Copies the box `size` (elements per axis) from `src` (shape `sshape`, at `sstart`) to `dst` (shape
/// `dshape`, at `dstart`), `es` bytes per element.
///
/// SAFETY: the box lies inside both arrays (callers clamp), the pointers hold those arrays.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn copy_box(
    src: *const u8, sshape: &[usize], sstart: &[usize], dst: *mut u8, dshape: &[usize], dstart: &[usize],
    size: &[usize], es: usize,
) {
    if size.iter().any(|&s| s == 0) {
        return;
    }
    let r = size.len();
    if r == 0 {
        std::ptr::copy_nonoverlapping(src, dst, es);
        return;
    }
    let (ss, ds) = (AxisIdx::strides(sshape), AxisIdx::strides(dshape));
    let run = size[r - 1] * es;
    if r == 1 {
        std::ptr::copy_nonoverlapping(src.add(sstart[0] * es), dst.add(dstart[0] * es), run);
        return;
    }
    // The runs along axis r-2 are copied by one strided loop, with a fixed-size move for runs of one
    // element (a matrix column `V[:, k]`: a `memcpy` call and an offset sum per element cost 10x the move).
    let (n2, s2, d2) = (size[r - 2], ss[r - 2] * es, ds[r - 2] * es);
    let mut idx = AxisIdx::zeros(r - 2);
    loop {
        let mut so = sstart[r - 1] + sstart[r - 2] * ss[r - 2];
        let mut dof = dstart[r - 1] + dstart[r - 2] * ds[r - 2];
        for d in 0..r - 2 {
            so += (sstart[d] + idx[d]) * ss[d];
            dof += (dstart[d] + idx[d]) * ds[d];
        }
        let (s0, d0) = (src.add(so * es), dst.add(dof * es));
        match run {
            4 => (0..n2).for_each(|i| (d0.add(i * d2) as *mut u32).write_unaligned((s0.add(i * s2) as *const u32).read_unaligned())),
            8 => (0..n2).for_each(|i| (d0.add(i * d2) as *mut u64).write_unaligned((s0.add(i * s2) as *const u64).read_unaligned())),
            _ => (0..n2).for_each(|i| std::ptr::copy_nonoverlapping(s0.add(i * s2), d0.add(i * d2), run)),
        }
        let mut d = r - 2;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < size[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

pub fn concatenate(inputs: &[&Buffer], dim: usize, out: &Aval) -> Result<Buffer> {
    let res = uninit(out)?;
    let es = out.dtype.size();
    let outer: usize = numel(&out.shape[..dim]);
    let inner: usize = numel(&out.shape[dim + 1..]);
    let out_row = out.shape[dim] * inner * es;
    let dst = res.as_ptr();
    let mut col = 0usize;
    for b in inputs {
        let chunk = b.aval.shape[dim] * inner * es;
        if chunk > 0 {
            let src = b.as_ptr();
            for o in 0..outer {
                // SAFETY: row `o` of the operand and its place in the output lie inside both buffers.
                unsafe { std::ptr::copy_nonoverlapping(src.add(o * chunk), dst.add(o * out_row + col), chunk) };
            }
        }
        col += chunk;
    }
    Ok(res)
}

pub fn pad(x: &Buffer, pv: &Buffer, config: &[(i64, i64, i64)], out: &Aval) -> Result<Buffer> {
    let res = uninit(out)?;
    let n_out = numel(&out.shape);
    if n_out == 0 {
        return Ok(res);
    }
    let es = out.dtype.size();
    with_elem!(out.dtype, T => {
        // SAFETY: element type matches; `res` is fresh; the padding value is a scalar buffer.
        let v = unsafe { *(pv.as_ptr() as *const T) };
        unsafe { elems_mut::<T>(&res) }.iter_mut().for_each(|e| *e = v);
    });
    let shape = &x.aval.shape;
    let n_in = numel(shape);
    if n_in == 0 {
        return Ok(res);
    }
    let r = shape.len();
    if r == 0 {
        // SAFETY: one element each.
        unsafe { std::ptr::copy_nonoverlapping(x.as_ptr(), res.as_ptr(), es) };
        return Ok(res);
    }
    let ost = strides(&out.shape);
    let (src, dst) = (x.as_ptr(), res.as_ptr());
    // Per axis, the output position of input index i is lo + i*(interior+1).
    let pos = |d: usize, i: usize| config[d].0 + i as i64 * (config[d].2 + 1);
    let in_range = |d: usize, p: i64| p >= 0 && (p as u64) < out.shape[d] as u64;
    let mut idx = vec![0usize; r];
    let mut e = 0usize; // row-major input element number
    'outer: loop {
        // the outer axes' output offset (or skip the row when cropped)
        let mut base = 0i64;
        let mut ok = true;
        for d in 0..r - 1 {
            let p = pos(d, idx[d]);
            if !in_range(d, p) {
                ok = false;
                break;
            }
            base += p * ost[d] as i64;
        }
        let last = shape[r - 1];
        if ok {
            for i in 0..last {
                let p = pos(r - 1, i);
                if in_range(r - 1, p) {
                    // SAFETY: input element e < n_in; the output offset is inside the output (checked range).
                    unsafe {
                        std::ptr::copy_nonoverlapping(src.add((e + i) * es), dst.add((base + p) as usize * es), es)
                    };
                }
            }
        }
        e += last;
        let mut d = r - 1;
        loop {
            if d == 0 {
                break 'outer;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(res)
}

/// Start indices clamped so that a window of `size` fits in `shape` (XLA's dynamic_slice rule).
fn clamped_starts(idx: &[&Buffer], shape: &[usize], size: &[usize]) -> AxisIdx {
    let mut st = AxisIdx::zeros(idx.len());
    for (d, b) in idx.iter().enumerate() {
        st[d] = read_index(b, 0).clamp(0, (shape[d] - size[d]) as i64) as usize;
    }
    st
}

pub fn dynamic_slice(x: &Buffer, idx: &[&Buffer], out: &Aval) -> Result<Buffer> {
    let res = uninit(out)?;
    let start = clamped_starts(idx, &x.aval.shape, &out.shape);
    let zeros = AxisIdx::zeros(out.shape.len());
    // SAFETY: the window at the clamped start lies inside the operand; the output is the window's shape.
    unsafe {
        copy_box(x.as_ptr(), &x.aval.shape, &start, res.as_ptr(), &out.shape, &zeros, &out.shape, out.dtype.size())
    };
    Ok(res)
}

pub fn dynamic_update_slice(x: &Buffer, upd: &Buffer, idx: &[&Buffer], out: &Aval) -> Result<Buffer> {
    let res = uninit(out)?;
    let es = out.dtype.size();
    let n = numel(&out.shape) * es;
    // SAFETY: same size, fresh destination.
    unsafe { std::ptr::copy_nonoverlapping(x.as_ptr(), res.as_ptr(), n) };
    let start = clamped_starts(idx, &x.aval.shape, &upd.aval.shape);
    let zeros = AxisIdx::zeros(out.shape.len());
    // SAFETY: the update's window at the clamped start lies inside the output.
    unsafe { copy_box(upd.as_ptr(), &upd.aval.shape, &zeros, res.as_ptr(), &out.shape, &start, &upd.aval.shape, es) };
    Ok(res)
}

/// `dynamic_update_slice` written into `res`, a buffer holding the operand that nothing else reads (the
/// executor's `dead_operand`): only the window is copied, not the whole operand.
pub fn dynamic_update_slice_in_place(res: Buffer, upd: &Buffer, idx: &[&Buffer]) -> Result<Buffer> {
    let shape = &res.aval.shape;
    let start = clamped_starts(idx, shape, &upd.aval.shape);
    let zeros = AxisIdx::zeros(shape.len());
    // SAFETY: the update's window at the clamped start lies inside the operand, whose buffer is ours alone.
    unsafe {
        copy_box(upd.as_ptr(), &upd.aval.shape, &zeros, res.as_ptr(), shape, &start, &upd.aval.shape, res.aval.dtype.size())
    };
    Ok(res)
}

/// Tile edge of the blocked transpose (elements).
const TILE: usize = 32;

/// `out[i] = x[perm-mapped i]`: output axis `d` is input axis `perm[d]`. When the innermost axes differ,
/// copies 32×32 tiles of (input's innermost axis × output's innermost axis) so that both sides are read and
/// written in cache-line runs; otherwise copies contiguous runs.
pub fn transpose_copy(x: &Buffer, perm: &[usize], out: &Aval) -> Result<Buffer> {
    let res = uninit(out)?;
    let n = numel(&out.shape);
    if n == 0 {
        return Ok(res);
    }
    let r = perm.len();
    let es = out.dtype.size();
    let xst = strides(&x.aval.shape);
    let ost = strides(&out.shape);
    // input stride of each output axis
    let ist: Vec<usize> = perm.iter().map(|&p| xst[p]).collect();
    let (src, dst) = (x.as_ptr() as *const u8, res.as_ptr());
    let oa = r - 1; // output's innermost axis
    let ia = perm.iter().position(|&p| p == r - 1).unwrap_or(oa); // output axis that is the input's innermost
    let shape = &out.shape;
    // Outer loop over all output axes except `oa` and `ia`.
    let outer_axes: Vec<usize> = (0..r).filter(|&d| d != oa && d != ia).collect();
    let outer_shape: Vec<usize> = outer_axes.iter().map(|&d| shape[d]).collect();
    let mut idx = vec![0usize; outer_axes.len()];
    loop {
        let ib: usize = outer_axes.iter().zip(&idx).map(|(&d, &i)| i * ist[d]).sum();
        let ob: usize = outer_axes.iter().zip(&idx).map(|(&d, &i)| i * ost[d]).sum();
        // SAFETY: every offset is a valid element index of its buffer (multi-indices within the shapes).
        unsafe {
            if ia == oa {
                for j in 0..shape[oa] {
                    std::ptr::copy_nonoverlapping(src.add((ib + j * ist[oa]) * es), dst.add((ob + j) * es), es);
                }
            } else {
                let (ni, no) = (shape[ia], shape[oa]);
                let mut t0 = 0;
                while t0 < ni {
                    let t1 = (t0 + TILE).min(ni);
                    let mut u0 = 0;
                    while u0 < no {
                        let u1 = (u0 + TILE).min(no);
                        match es {
                            8 => tile::<u64>(src, dst, ib, ob, ist[ia], ist[oa], ost[ia], t0, t1, u0, u1),
                            4 => tile::<u32>(src, dst, ib, ob, ist[ia], ist[oa], ost[ia], t0, t1, u0, u1),
                            2 => tile::<u16>(src, dst, ib, ob, ist[ia], ist[oa], ost[ia], t0, t1, u0, u1),
                            _ => tile::<u8>(src, dst, ib, ob, ist[ia], ist[oa], ost[ia], t0, t1, u0, u1),
                        }
                        u0 = u1;
                    }
                    t0 = t1;
                }
            }
        }
        if outer_axes.is_empty() {
            break;
        }
        let mut d = idx.len();
        let mut more = false;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            if idx[d] < outer_shape[d] {
                more = true;
                break;
            }
            idx[d] = 0;
        }
        if !more {
            break;
        }
    }
    Ok(res)
}

/// One tile: output rows `t0..t1` along axis `ia` (input-contiguous), columns `u0..u1` along the output's
/// innermost axis.
///
/// SAFETY: the caller passes offsets and strides of valid elements of `T`-sized elements.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn tile<T: Copy>(
    src: *const u8, dst: *mut u8, ib: usize, ob: usize, is_a: usize, is_o: usize, os_a: usize, t0: usize,
    t1: usize, u0: usize, u1: usize,
) {
    let (s, d) = (src as *const T, dst as *mut T);
    for t in t0..t1 {
        let so = ib + t * is_a;
        let dof = ob + t * os_a;
        for u in u0..u1 {
            *d.add(dof + u) = *s.add(so + u * is_o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::copy_box;

    /// `copy_box` against an element-by-element copy: ranks 1 to 4, element sizes 1 to 12 bytes (the
    /// fixed-size moves of 4 and 8 and the general one), boxes of one element a row (columns) and wider,
    /// at offsets in both arrays.
    #[test]
    fn copy_box_equals_elementwise_copy() {
        let cases: &[(&[usize], &[usize], &[usize], &[usize], &[usize])] = &[
            // (source shape, source start, destination shape, destination start, box)
            (&[7], &[2], &[5], &[1], &[3]),
            (&[500, 21], &[0, 4], &[500, 1], &[0, 0], &[500, 1]),
            (&[6, 5], &[1, 2], &[4, 6], &[2, 3], &[2, 3]),
            (&[6, 5], &[0, 0], &[6, 5], &[0, 0], &[6, 5]),
            (&[3, 4, 5], &[1, 0, 4], &[2, 5, 2], &[0, 1, 1], &[2, 4, 1]),
            (&[3, 4, 5, 2], &[0, 1, 2, 1], &[4, 3, 3, 2], &[1, 0, 0, 0], &[3, 3, 3, 1]),
            (&[2, 3, 4, 5], &[1, 1, 1, 1], &[2, 3, 4, 5], &[0, 0, 0, 0], &[1, 2, 3, 4]),
        ];
        for &es in &[1usize, 2, 4, 8, 12] {
            for &(ssh, sst, dsh, dst, size) in cases {
                let sn: usize = ssh.iter().product::<usize>() * es;
                let dn: usize = dsh.iter().product::<usize>() * es;
                let src: Vec<u8> = (0..sn).map(|i| (i * 31 % 251) as u8).collect();
                let mut got = vec![0xAAu8; dn];
                let mut want = got.clone();
                // SAFETY: every box lies inside both arrays.
                unsafe { copy_box(src.as_ptr(), ssh, sst, got.as_mut_ptr(), dsh, dst, size, es) };
                let flat = |shape: &[usize], start: &[usize], at: &[usize]| {
                    shape.iter().zip(start).zip(at).fold(0, |o, ((&n, &s), &a)| o * n + s + a)
                };
                let count: usize = size.iter().product();
                for k in 0..count {
                    let mut at = vec![0; size.len()];
                    let mut q = k;
                    for d in (0..size.len()).rev() {
                        at[d] = q % size[d];
                        q /= size[d];
                    }
                    let (so, dof) = (flat(ssh, sst, &at) * es, flat(dsh, dst, &at) * es);
                    want[dof..dof + es].copy_from_slice(&src[so..so + es]);
                }
                assert_eq!(got, want, "es {es}, source {ssh:?} at {sst:?}, destination {dsh:?} at {dst:?}, box {size:?}");
            }
        }
    }
}
