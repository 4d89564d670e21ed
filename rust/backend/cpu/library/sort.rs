//! `sort` (multi-operand, lexicographic over the first `num_keys` operands, stable) and the cumulative
//! scans `cumsum`/`cumprod`/`cummax`/`cummin`.
use super::elem::{elems, elems_mut, numel, uninit, with_elem, Elem};
use crate::buffer::Buffer;
use crate::error::Result;
use crate::ir::ReduceOp;

/// `(outer, n, inner)`: lines along `axis` are `outer * inner` runs of `n` elements `inner` apart.
fn lines(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (numel(&shape[..axis]), shape[axis], numel(&shape[axis + 1..]))
}

pub fn sort(inputs: &[&Buffer], axis: usize, num_keys: usize) -> Result<Vec<Buffer>> {
    let shape = &inputs[0].aval.shape;
    let (outer, n, inner) = lines(shape, axis);
    let outs: Vec<Buffer> = inputs.iter().map(|b| uninit(&b.aval)).collect::<Result<_>>()?;
    if numel(shape) == 0 {
        return Ok(outs);
    }
    // Sort keys of every element of the key operands.
    let keys: Vec<Vec<u64>> = inputs[..num_keys]
        .iter()
        .map(|b| {
            with_elem!(b.aval.dtype, T => {
                // SAFETY: element type matches the dtype.
                unsafe { elems::<T>(b) }.iter().map(|x| x.sort_key()).collect()
            })
        })
        .collect();
    let mut perm: Vec<usize> = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            let base = o * n * inner + i;
            perm.clear();
            perm.extend(0..n);
            let at = |j: usize| base + j * inner;
            if num_keys == 1 {
                let k = &keys[0];
                perm.sort_by_key(|&j| k[at(j)]);
            } else {
                perm.sort_by(|&a, &b| {
                    for k in &keys {
                        match k[at(a)].cmp(&k[at(b)]) {
                            std::cmp::Ordering::Equal => continue,
                            other => return other,
                        }
                    }
                    std::cmp::Ordering::Equal
                });
            }
            for (src, dst) in inputs.iter().zip(&outs) {
                with_elem!(src.aval.dtype, T => {
                    // SAFETY: element types match; the outputs are fresh.
                    let (s, d) = unsafe { (elems::<T>(src), elems_mut::<T>(dst)) };
                    for (j, &p) in perm.iter().enumerate() {
                        d[at(j)] = s[at(p)];
                    }
                });
            }
        }
    }
    Ok(outs)
}

pub fn cumulative(x: &Buffer, op: ReduceOp, axis: usize, reverse: bool) -> Result<Buffer> {
    let res = uninit(&x.aval)?;
    let (outer, n, inner) = lines(&x.aval.shape, axis);
    with_elem!(x.aval.dtype, T => {
        // SAFETY: element type matches; `res` is fresh.
        let (s, d) = unsafe { (elems::<T>(x), elems_mut::<T>(&res)) };
        // One loop per combiner (a match and an `Option` per element made a cumsum of 1e6 int32 1 ms).
        match op {
            ReduceOp::Sum | ReduceOp::Or => cumulative_lines(s, d, (outer, n, inner), reverse, false, |a: T, b| a.eadd(b)),
            ReduceOp::Prod | ReduceOp::And => cumulative_lines(s, d, (outer, n, inner), reverse, false, |a: T, b| a.emul(b)),
            // max/min pass their first element through XLA's max (a subnormal reads as ±0)
            ReduceOp::Max => cumulative_lines(s, d, (outer, n, inner), reverse, true, |a: T, b| a.emax(b)),
            ReduceOp::Min => cumulative_lines(s, d, (outer, n, inner), reverse, true, |a: T, b| a.emin(b)),
        }
    });
    Ok(res)
}

/// `cumulative`'s scan of every line (`outer` × `inner` lines of `n`, stride `inner`) with combiner `f`;
/// `first_through` passes each line's first element through `f(x, x)`.
#[inline(always)]
fn cumulative_lines<T: Elem>(
    s: &[T], d: &mut [T], (outer, n, inner): (usize, usize, usize), reverse: bool, first_through: bool,
    f: impl Fn(T, T) -> T,
) {
    if n == 0 {
        return;
    }
    for o in 0..outer {
        for i in 0..inner {
            let base = o * n * inner + i;
            let at = |step: usize| base + if reverse { n - 1 - step } else { step } * inner;
            let p0 = at(0);
            let mut acc = if first_through { f(s[p0], s[p0]) } else { s[p0] };
            d[p0] = acc;
            if inner == 1 && !reverse {
                // the common case (`cumsum` of a vector or of rows): contiguous slices, no index arithmetic
                for (dv, &sv) in d[base + 1..base + n].iter_mut().zip(&s[base + 1..base + n]) {
                    acc = f(acc, sv);
                    *dv = acc;
                }
            } else {
                for step in 1..n {
                    let p = at(step);
                    acc = f(acc, s[p]);
                    d[p] = acc;
                }
            }
        }
    }
}
