//! Dense linear algebra (`lax.linalg`) through `faer`: cholesky, lu, qr, eigh, svd, triangular_solve, and
//! `lu_pivots_to_permutation` (an index loop). Operands are row-major; each matrix of the batch (the
//! leading axes) is factored on its own. Results are laid out as LAPACK returns them (JAX's CPU
//! lowering calls LAPACK): `lu` packs L (unit diagonal, not stored) and U in one matrix with 0-based
//! row-interchange pivots; `eigh` gives eigenvalues ascending with eigenvectors as columns; `svd` gives
//! singular values descending and `vt = V^T`. Failures follow JAX: a matrix that is not positive definite
//! gives a Cholesky factor of NaNs, a failed eigh/svd NaNs; nothing raises.
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::{cholesky::llt, evd, householder, lu::partial_pivoting::factor as plu, qr::no_pivoting::factor as qrf, svd, triangular_solve as ts};
use faer::{Conj, Mat, MatMut, MatRef, Par};

use super::elem::{elems, numel, uninit, Elem};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, DType, LinalgOp};

/// The element types the factorizations run on (float32, float64; complex joins here later).
trait Real: faer::traits::RealField + Elem + Copy {}
impl Real for f32 {}
impl Real for f64 {}

/// Matrices at least this large (m * n * min(m, n) flops, roughly) use faer's rayon parallelism; smaller
/// ones run sequentially and a batch of them is spread over threads instead.
const PAR_WORK: usize = 96 * 96 * 96;

fn par_for(work: usize) -> Par {
    if work >= PAR_WORK {
        Par::rayon(0)
    } else {
        Par::Seq
    }
}

/// A row-major output whose matrices the batch loop writes from several threads, each its own range.
struct Out<T>(*mut T, usize);
unsafe impl<T> Send for Out<T> {}
unsafe impl<T> Sync for Out<T> {}
impl<T> Out<T> {
    fn of(b: &Buffer) -> Out<T> {
        Out(b.as_ptr() as *mut T, numel(&b.aval.shape))
    }
    /// Matrix `i` of `len` elements.
    ///
    /// SAFETY: the caller writes disjoint matrices from each thread, and the buffer is fresh.
    #[allow(clippy::mut_from_ref)]
    unsafe fn mat(&self, i: usize, len: usize) -> &mut [T] {
        debug_assert!((i + 1) * len <= self.1);
        std::slice::from_raw_parts_mut(self.0.add(i * len), len)
    }
}

/// Runs `f(b)` for every matrix `b` of a batch: over rayon's threads when the matrices are small and
/// many, in order otherwise (each then uses faer's own parallelism).
fn for_batch(batch: usize, work: usize, f: impl Fn(usize) + Send + Sync) {
    use rayon::prelude::*;
    if batch > 1 && work < PAR_WORK && batch.saturating_mul(work) >= 32 * 32 * 32 {
        (0..batch).into_par_iter().for_each(f);
    } else {
        (0..batch).for_each(f);
    }
}

fn dims(a: &Aval) -> (usize, usize, usize) {
    let r = a.shape.len();
    (numel(&a.shape[..r - 2]), a.shape[r - 2], a.shape[r - 1])
}

fn stack_for(req: faer::dyn_stack::StackReq) -> MemBuffer {
    MemBuffer::new(req)
}

/// Writes `m` (any layout) into the row-major slice `d`.
fn store<T: Real>(m: MatRef<'_, T>, d: &mut [T]) {
    let c = m.ncols();
    for i in 0..m.nrows() {
        for j in 0..c {
            d[i * c + j] = m[(i, j)];
        }
    }
}

fn identity<T: Real>(d: &mut [T], rows: usize, cols: usize) {
    d.fill(<T as Elem>::zero());
    for i in 0..rows.min(cols) {
        d[i * cols + i] = T::from_f64(1.0);
    }
}

pub fn run(op: &LinalgOp, inputs: &[&Buffer], outs: &[Aval]) -> Result<Vec<Buffer>> {
    let dt = inputs.first().map(|b| b.aval.dtype).ok_or_else(|| Error::Execution(format!("{} has no operand", op.name())))?;
    if let LinalgOp::LuPivotsToPermutation { permutation_size } = op {
        return Ok(vec![pivots_to_permutation(inputs[0], *permutation_size, &outs[0])?]);
    }
    match dt {
        DType::F32 => run_t::<f32>(op, inputs, outs),
        DType::F64 => run_t::<f64>(op, inputs, outs),
        d => Err(Error::Unsupported(format!("{} on {}", op.name(), d.short_name()))),
    }
}

fn run_t<T: Real>(op: &LinalgOp, inputs: &[&Buffer], outs: &[Aval]) -> Result<Vec<Buffer>> {
    let res: Vec<Buffer> = outs.iter().map(uninit).collect::<Result<_>>()?;
    let a = inputs[0];
    let (batch, m, n) = dims(&a.aval);
    let k = m.min(n);
    // SAFETY: the element type matches the dtype (the shape rule checked it).
    let src = unsafe { elems::<T>(a) };
    let work = m * n * k.max(1);
    let par = par_for(work);
    let nan = T::from_f64(f64::NAN);
    match op {
        LinalgOp::Cholesky => {
            let o = Out::<T>::of(&res[0]);
            for_batch(batch, work, |b| {
                let s = &src[b * n * n..(b + 1) * n * n];
                // SAFETY: matrix b of a fresh output, written by this call only.
                let d = unsafe { o.mat(b, n * n) };
                let mut f = MatRef::from_row_major_slice(s, n, n).to_owned();
                let mut mem = stack_for(llt::factor::cholesky_in_place_scratch::<T>(n, par, Default::default()));
                let ok = llt::factor::cholesky_in_place(
                    f.as_mut(),
                    Default::default(),
                    par,
                    MemStack::new(&mut mem),
                    Default::default(),
                )
                .is_ok();
                for i in 0..n {
                    for j in 0..n {
                        d[i * n + j] = if !ok { nan } else if j <= i { f[(i, j)] } else { <T as Elem>::zero() };
                    }
                }
            });
        }
        LinalgOp::Lu => {
            let (o, piv, perm) = (Out::<T>::of(&res[0]), Out::<i32>::of(&res[1]), Out::<i32>::of(&res[2]));
            for_batch(batch, work, |b| {
                let s = &src[b * m * n..(b + 1) * m * n];
                // SAFETY: matrix b of fresh outputs, written by this call only.
                let (d, pv, pm) = unsafe { (o.mat(b, m * n), piv.mat(b, k), perm.mat(b, m)) };
                let mut f = MatRef::from_row_major_slice(s, m, n).to_owned();
                let (mut fwd, mut inv) = (vec![0usize; m], vec![0usize; m]);
                if k > 0 {
                    let mut mem = stack_for(plu::lu_in_place_scratch::<usize, T>(m, n, par, Default::default()));
                    plu::lu_in_place(f.as_mut(), &mut fwd, &mut inv, par, MemStack::new(&mut mem), Default::default());
                } else {
                    fwd.iter_mut().enumerate().for_each(|(i, p)| *p = i);
                }
                store(f.as_ref(), d);
                // Row i of the factored matrix is row fwd[i] of `a`: LAPACK's interchanges are the
                // sequence of swaps that builds that order row by row.
                let mut cur: Vec<usize> = (0..m).collect();
                let mut at: Vec<usize> = (0..m).collect(); // at[row] = its position in `cur`
                for i in 0..k {
                    let p = at[fwd[i]];
                    pv[i] = p as i32;
                    let (ri, rp) = (cur[i], cur[p]);
                    cur.swap(i, p);
                    at[ri] = p;
                    at[rp] = i;
                }
                for (x, &y) in pm.iter_mut().zip(&cur) {
                    *x = y as i32;
                }
            });
        }
        LinalgOp::Qr { full_matrices } => {
            let q_cols = if *full_matrices { m } else { k };
            let (oq, or) = (Out::<T>::of(&res[0]), Out::<T>::of(&res[1]));
            for_batch(batch, work, |b| {
                let s = &src[b * m * n..(b + 1) * m * n];
                // SAFETY: matrix b of fresh outputs, written by this call only.
                let (dq, dr) = unsafe { (oq.mat(b, m * q_cols), or.mat(b, q_cols * n)) };
                if k == 0 {
                    identity(dq, m, q_cols);
                    dr.fill(<T as Elem>::zero());
                    return;
                }
                let mut f = MatRef::from_row_major_slice(s, m, n).to_owned();
                let bs = qrf::recommended_block_size::<T>(m, n);
                let mut coeff = Mat::<T>::zeros(bs, k);
                let mut mem = stack_for(qrf::qr_in_place_scratch::<T>(m, n, bs, par, Default::default()));
                qrf::qr_in_place(f.as_mut(), coeff.as_mut(), par, MemStack::new(&mut mem), Default::default());
                for i in 0..q_cols {
                    for j in 0..n {
                        dr[i * n + j] = if j >= i && i < m { f[(i, j)] } else { <T as Elem>::zero() };
                    }
                }
                let mut q = Mat::<T>::identity(m, q_cols);
                let mut mem = stack_for(householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
                    m, bs, q_cols,
                ));
                householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
                    f.get(.., ..k),
                    coeff.as_ref(),
                    Conj::No,
                    q.as_mut(),
                    par,
                    MemStack::new(&mut mem),
                );
                store(q.as_ref(), dq);
            });
        }
        LinalgOp::Eigh { lower, .. } => {
            let (ov, ow) = (Out::<T>::of(&res[0]), Out::<T>::of(&res[1]));
            for_batch(batch, work, |b| {
                let s = &src[b * n * n..(b + 1) * n * n];
                // SAFETY: matrix b of fresh outputs, written by this call only.
                let (dv, dw) = unsafe { (ov.mat(b, n * n), ow.mat(b, n)) };
                if n == 0 {
                    return;
                }
                let view = MatRef::from_row_major_slice(s, n, n);
                // faer reads the lower triangle; the upper one of `a` is the lower one of its transpose.
                let view = if *lower { view } else { view.transpose() };
                let mut u = Mat::<T>::zeros(n, n);
                let mut w = faer::diag::Diag::<T>::zeros(n);
                let mut mem = stack_for(evd::self_adjoint_evd_scratch::<T>(
                    n,
                    evd::ComputeEigenvectors::Yes,
                    par,
                    Default::default(),
                ));
                let ok = evd::self_adjoint_evd(view, w.as_mut(), Some(u.as_mut()), par, MemStack::new(&mut mem), Default::default())
                    .is_ok();
                if ok {
                    store(u.as_ref(), dv);
                    for (i, x) in dw.iter_mut().enumerate() {
                        *x = w[i];
                    }
                } else {
                    dv.fill(nan);
                    dw.fill(nan);
                }
            });
        }
        LinalgOp::Svd { full_matrices, compute_uv } => {
            let (uc, vr) = if *full_matrices { (m, n) } else { (k, k) };
            let os = Out::<T>::of(&res[0]);
            let ou = res.get(1).map(Out::<T>::of);
            let ovt = res.get(2).map(Out::<T>::of);
            let mode = match (*compute_uv, *full_matrices) {
                (false, _) => svd::ComputeSvdVectors::No,
                (true, true) => svd::ComputeSvdVectors::Full,
                (true, false) => svd::ComputeSvdVectors::Thin,
            };
            for_batch(batch, work, |b| {
                let s = &src[b * m * n..(b + 1) * m * n];
                // SAFETY: matrix b of fresh outputs, written by this call only.
                let ds = unsafe { os.mat(b, k) };
                let du = ou.as_ref().map(|o| unsafe { o.mat(b, m * uc) });
                let dvt = ovt.as_ref().map(|o| unsafe { o.mat(b, vr * n) });
                if k == 0 {
                    if let (Some(du), Some(dvt)) = (du, dvt) {
                        identity(du, m, uc);
                        identity(dvt, vr, n);
                    }
                    return;
                }
                let view = MatRef::from_row_major_slice(s, m, n);
                let mut w = faer::diag::Diag::<T>::zeros(k);
                let (mut u, mut v) = if *compute_uv {
                    (Some(Mat::<T>::zeros(m, uc)), Some(Mat::<T>::zeros(n, vr)))
                } else {
                    (None, None)
                };
                let mut mem = stack_for(svd::svd_scratch::<T>(m, n, mode, mode, par, Default::default()));
                let ok = svd::svd(
                    view,
                    w.as_mut(),
                    u.as_mut().map(|u| u.as_mut()),
                    v.as_mut().map(|v| v.as_mut()),
                    par,
                    MemStack::new(&mut mem),
                    Default::default(),
                )
                .is_ok();
                for (i, x) in ds.iter_mut().enumerate() {
                    *x = if ok { w[i] } else { nan };
                }
                if let (Some(du), Some(dvt), Some(u), Some(v)) = (du, dvt, u, v) {
                    if ok {
                        store(u.as_ref(), du);
                        store(v.transpose(), dvt);
                    } else {
                        du.fill(nan);
                        dvt.fill(nan);
                    }
                }
            });
        }
        LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal, .. } => {
            // (conjugate_a is the identity on real matrices.)
            let bsrc = unsafe { elems::<T>(inputs[1]) };
            let (_, r, c) = dims(&inputs[1].aval);
            let am = m;
            let ob = Out::<T>::of(&res[0]);
            let work = am * am * if *left_side { c } else { r };
            let par = par_for(work);
            for_batch(batch, work, |bi| {
                let sa = &src[bi * am * am..(bi + 1) * am * am];
                // SAFETY: matrix bi of a fresh output, written by this call only.
                let x = unsafe { ob.mat(bi, r * c) };
                x.copy_from_slice(&bsrc[bi * r * c..(bi + 1) * r * c]);
                if r == 0 || c == 0 {
                    return;
                }
                // op(a) x = b; x op(a) = b is op(a)^T x^T = b^T.
                let a = MatRef::from_row_major_slice(sa, am, am);
                let flip = *transpose_a != !*left_side;
                let tri = if flip { a.transpose() } else { a };
                let low = *lower != flip;
                let xv = MatMut::from_row_major_slice_mut(x, r, c);
                let rhs = if *left_side { xv } else { xv.transpose_mut() };
                match (low, *unit_diagonal) {
                    (true, false) => ts::solve_lower_triangular_in_place(tri, rhs, par),
                    (true, true) => ts::solve_unit_lower_triangular_in_place(tri, rhs, par),
                    (false, false) => ts::solve_upper_triangular_in_place(tri, rhs, par),
                    (false, true) => ts::solve_unit_upper_triangular_in_place(tri, rhs, par),
                }
            });
        }
        LinalgOp::LuPivotsToPermutation { .. } => unreachable!("handled in run"),
    }
    Ok(res)
}

/// The permutation that LAPACK's row interchanges `pivots` (0-based) apply to `0..size`: swap row i with
/// row pivots[i] in order. Out-of-range pivots are skipped (data, not a program error).
fn pivots_to_permutation(p: &Buffer, size: usize, out: &Aval) -> Result<Buffer> {
    let res = uninit(out)?;
    let k = *p.aval.shape.last().unwrap_or(&0);
    let batch = numel(&out.shape) / size.max(1);
    // SAFETY: int32 pivots (the shape rule checked it); `res` is fresh.
    let (src, o) = unsafe { (elems::<i32>(p), Out::<i32>::of(&res)) };
    if size == 0 {
        return Ok(res);
    }
    for b in 0..batch {
        // SAFETY: disjoint matrices of a fresh output.
        let d = unsafe { o.mat(b, size) };
        d.iter_mut().enumerate().for_each(|(i, x)| *x = i as i32);
        for i in 0..k.min(size) {
            let j = src[b * k + i];
            if j >= 0 && (j as usize) < size {
                d.swap(i, j as usize);
            }
        }
    }
    Ok(res)
}
