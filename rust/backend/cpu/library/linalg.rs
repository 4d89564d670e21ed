//! Dense linear algebra (`lax.linalg`) through `faer`: cholesky, lu, qr, eigh, svd, triangular_solve, and
//! `lu_pivots_to_permutation` (an index loop). Operands are row-major; each matrix of the batch (the
//! leading axes) is factored on its own. Results are laid out as LAPACK returns them (JAX's CPU
//! lowering calls LAPACK): `lu` packs L (unit diagonal, not stored) and U in one matrix with 0-based
//! row-interchange pivots; `eigh` gives eigenvalues ascending with eigenvectors as columns; `svd` gives
//! singular values descending and `vt = V^T`. Failures follow JAX: a matrix that is not positive definite
//! gives a Cholesky factor of NaNs, a failed eigh/svd NaNs; nothing raises. `lu_solve` (made by
//! `opt::lu_solve` from what `jnp.linalg.solve` traces to) factors and solves each matrix in one pass.
//! Square matrices of order <= `small_lu::SMALL_N` take `small_lu`'s direct elimination instead of faer, and
//! Cholesky factors of order <= `small_chol::SMALL_CHOL_N` LAPACK's (OpenBLAS's) unblocked order, JAX's bits.
//! From `CHOL_BLOCKED_N` / `LU_BLOCKED_N` / `QR_BLOCKED_N` a real Cholesky / square LU / QR runs cranax's blocked
//! driver around faer's one-thread kernels (`cholesky_blocked`, `lu_blocked`, `qr_blocked` with `qr_q_chunks`),
//! whose tasks take the pool's threads.
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::{cholesky::llt, evd, householder, lu::partial_pivoting::factor as plu, qr::no_pivoting::factor as qrf, svd, triangular_solve as ts};
use faer::{c32, c64, Conj, Mat, MatMut, MatRef, Par};

use super::elem::{elems, numel, uninit, Elem};
#[cfg(test)]
use super::elem::elems_mut;
#[cfg(test)]
use faer::linalg::lu::partial_pivoting::inverse as plu_inverse;
use super::small_chol::{self, SMALL_CHOL_N};
use super::small_lu::{self, dispatch, SMALL_N};
use crate::backend::cpu::fpenv::KeepDenormals;
use crate::backend::cpu::threads;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, DType, LinalgOp};

/// The element types the factorizations run on (float32, float64; complex joins here later).
trait Real: faer::traits::RealField + Elem + Copy + small_lu::Float + small_chol::CholFloat {}
impl Real for f32 {}
impl Real for f64 {}

/// Matrices at least this large (m * n * min(m, n) flops, roughly) use faer's rayon parallelism (in cranax's
/// pool); smaller ones run sequentially and a batch of them is spread over the pool's threads instead.
const PAR_WORK: usize = 96 * 96 * 96;

/// `PAR_WORK` for QR. Below it a sequential QR is about twice as fast as faer's parallel one at n = 100
/// (its blocked Householder steps are too small to split); faer's own QR stops splitting about here too
/// (`QrParams::par_threshold`, 192 × 256 entries).
const QR_PAR_WORK: usize = 192 * 192 * 192;

/// `PAR_WORK` for eigh/svd. At n = 100 faer's parallel eigh was slower than its sequential one: the blocks
/// are too small to split.
const DECOMP_PAR_WORK: usize = 192 * 192 * 192;

/// The families whose one matrix takes the pool only from a measured size (`par_work_from`).
#[derive(Clone, Copy)]
enum ParFamily {
    /// below `CHOL_BLOCKED_N` (never reached: `par_n` is larger) or with `CRANAX_LINALG_CHOL_BLOCK=0`; from there
    /// `cholesky_blocked` takes the pool
    Cholesky,
    /// `lu`, `lu_solve` and `inv` (their `work`: n³ plus n² per right-hand column; `inv` 2n³): real
    /// non-square ones, and square ones below `LU_BLOCKED_N` (never reached: `par_n` is larger) or with
    /// `CRANAX_LINALG_LU_BLOCK=0`; from there `lu_blocked` takes the pool
    Lu,
    /// `triangular_solve` (n² per right-hand column)
    Trsm,
}

/// The order n (of a matrix whose `work` is n³) from which one factorization takes a pool of 2-3 threads,
/// then one of 4 or more: [f32, f64]. Below it faer's parallel factorization is slower than its one-thread
/// one when it runs after an idle gap, as a program's calls do: jitted calls with 0.12 s sleeps, median ms,
/// one thread / the pool, on an AVX2 EPYC (2 cores pinned; 4 pinned; 13), 2026-12-06 (benches/RESULTS.md,
/// h-linalg15): 2 threads, cholesky f64 n=1000 11.6/13.6, 1750 55.7/55.9, 2000 135/110, f32 2000 46/53;
/// solve f64 1750 93/94, 2000 172/165, f32 2000 71/82; trsm f64 1000 27/26, 1500 88/76, f32 1500 45/58.
/// 13 threads: cholesky f64 600 3.9/4.2, 800 7.4/5.7, f32 800 5.0/5.9, 1000 8.4/7.0; solve f64 800 11/13,
/// 1000 20/19, f32 1250 20/30; trsm f64 600 6.6/6.3, f32 800 7.7/8.1, 1000 13/9.6. f32's 2-thread sizes
/// lie past the sweep (one thread still won at 2000 by 13-15%). The AVX-512 host agrees where measured
/// (cholesky f64 on 2 threads: one thread faster at 1500, the pool at 2000).
fn par_n(family: ParFamily, is_f64: bool, threads: usize) -> usize {
    if let Some(n) = env_usize("CRANAX_LINALG_PAR_N") {
        return n;
    }
    let few = threads <= 3;
    let (n32, n64) = match (family, few) {
        (ParFamily::Cholesky, true) => (2400, 1800),
        (ParFamily::Cholesky, false) => (1000, 800),
        (ParFamily::Lu, true) => (2400, 1800),
        (ParFamily::Lu, false) => (1600, 1000),
        (ParFamily::Trsm, true) => (2400, 1250),
        (ParFamily::Trsm, false) => (900, 700),
    };
    if is_f64 {
        n64
    } else {
        n32
    }
}

/// A size read once from the environment variable `name` (a measurement knob: `CRANAX_LINALG_PAR_N` puts every
/// family's `par_n` there, `CRANAX_LINALG_CHOL_BLOCK` sets `cholesky_block`; benches/RESULTS.md, h-linalg18).
fn env_usize(name: &'static str) -> Option<usize> {
    static VARS: std::sync::Mutex<Vec<(&'static str, Option<usize>)>> = std::sync::Mutex::new(Vec::new());
    let mut vars = VARS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, v)) = vars.iter().find(|(k, _)| *k == name) {
        return v;
    }
    let v = std::env::var(name).ok().and_then(|v| v.trim().parse::<usize>().ok());
    vars.push((name, v));
    v
}

/// `work` from which one matrix of `family` uses faer's parallelism with `threads` threads (`par_n`³).
fn par_work_from<T: Real>(family: ParFamily, threads: usize) -> usize {
    par_n(family, std::mem::size_of::<T>() == 8, threads).pow(3)
}

/// Into how many blocks of right-hand columns a triangular solve against `c` of them is split (`rhs_blocks`):
/// a power of two, about one per `RHS_BLOCK` columns, at most 16; with `structured` (the identity's columns,
/// whose solve by a lower triangle can start at each block's first column) at least 4. A function of `c`
/// alone, never of the thread count: the blocks round as they do whether they run in order or in parallel,
/// so a result does not change with `CRANAX_NUM_THREADS` or the load.
fn rhs_block_count(c: usize, structured: bool) -> usize {
    let nb = 1usize << (c / RHS_BLOCK).clamp(1, 16).ilog2();
    if structured {
        nb.max(4).min(c.max(1))
    } else {
        nb
    }
}

/// The narrowest block of right-hand columns `rhs_block_count` aims at: faer's solve keeps its speed per column
/// down to about this width (n = 1000, one thread: 8 blocks of 125 columns within a few % of one of 1000).
const RHS_BLOCK: usize = 96;

/// The work (n² per right-hand column) from which the blocks of one solve run on the pool's threads: each
/// block is an independent solve, so two threads need no barrier between faer's steps (faer's own parallel
/// solve meets at one per product of its recursion, and lost to one thread below n = 1250-2400 on an AVX2
/// EPYC; benches/RESULTS.md, h-linalg15). Below it a wake-up of the pool costs more than half the solve.
const RHS_PAR_WORK: usize = 160 * 160 * 160;

/// Solves `f(j0, block)` for the column blocks of `rhs` (`nb` of them, the first at column `j0 = 0`), on the
/// pool's threads when `parallel` (inside a faer team, through it), else in order on this thread.
fn rhs_blocks<T: Send>(rhs: MatMut<'_, T>, nb: usize, parallel: bool, f: impl Fn(usize, MatMut<'_, T>) + Sync + Send) {
    let width = rhs.ncols().div_ceil(nb.max(1)).max(1);
    let mut jobs = Vec::with_capacity(nb);
    let (mut rest, mut j0) = (rhs, 0);
    while rest.ncols() > 0 {
        let w = width.min(rest.ncols());
        let (blk, tail) = rest.split_at_col_mut(w);
        jobs.push((j0, blk));
        (rest, j0) = (tail, j0 + w);
    }
    if parallel && jobs.len() > 1 {
        // one job per block: the pool's threads take them as they come free (a descheduled thread holds
        // back only the block it took); first, last, second, ... so that halves of the list cost about the
        // same when the blocks get cheaper from left to right (the identity's: 4.9 against 4.7 of 8
        // full-width blocks' units, where in order 5.4 against 4.2)
        let mut rest = std::collections::VecDeque::from(jobs);
        let mut zigzag = Vec::with_capacity(rest.len());
        while let Some(j) = rest.pop_front() {
            zigzag.push(j);
            zigzag.extend(rest.pop_back());
        }
        let jobs = zigzag;
        threads::parallel(|split| {
            if split {
                spindle::for_each(jobs.len(), jobs, |(j0, blk)| f(j0, blk));
            } else {
                jobs.into_iter().for_each(|(j0, blk)| f(j0, blk));
            }
        });
    } else {
        jobs.into_iter().for_each(|(j0, blk)| f(j0, blk));
    }
}

/// Whether the blocks of a solve of `work` (n² per right-hand column) run on the pool's threads.
fn rhs_parallel(work: usize) -> bool {
    work >= RHS_PAR_WORK && threads::num_threads() > 1 && !cpu_contended()
}

/// QR's block size: faer's recommendation, except 16 (instead of its 8) for matrices of 48² to 128² entries,
/// where 16-column blocks measured faster (n = 100: about 0.8× the time with 8).
fn qr_block_size<T: Real>(m: usize, n: usize) -> usize {
    let bs = qrf::recommended_block_size::<T>(m, n);
    let bs = if (48 * 48 + 1..=128 * 128).contains(&(m * n)) { bs.max(16) } else { bs };
    bs.min(m.min(n)).max(1)
}

/// Matrices that ran with faer's own parallelism (or a Cholesky with `cholesky_blocked`'s on the pool), and the thread count the last of them got (read by
/// tests: whether a big matrix gets the pool's threads is what a timing on a loaded machine cannot show).
pub static PAR_MATRICES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
pub static PAR_THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A batch whose total cost (below) is less than this runs on the calling thread: handing it to the pool (a
/// wake-up and a wait, several µs) costs more than the second core saves.
const BATCH_PAR_WORK: usize = 64 * 64 * 64;

/// What one matrix costs beyond its flops, in flops: faer's entry, dispatch and small-matrix setup and the
/// copies in and out (a few hundred ns). It is what a batch of 3×3 matrices spends its time on, so a
/// thousand of them are worth two threads although their flops are not.
const PER_MATRIX: usize = 2048;

/// `PER_MATRIX` for `small_lu`'s matrices: the loop around its elimination costs a few dozen flops.
const PER_SMALL: usize = 64;

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

/// Runs `f(ws, b, par)` for every matrix `b` of a batch. `ws` is a workspace (the factored copy, faer's
/// scratch, index vectors) that `init(par)` makes once per run of consecutive matrices, not once per
/// matrix: for a batch of 3×3 solves the allocations cost more than faer's arithmetic. Many small
/// matrices are split into a few such runs over cranax's pool (one workspace each); big ones run in
/// order, each with faer's own parallelism (`par`) in that pool. Everything stays in cranax's pool
/// (`threads::parallel`), never rayon's global one: two pools would fight over the same cores, and
/// `CRANAX_NUM_THREADS`/`serial` would not hold.
///
/// `per_matrix` is the fixed cost of one matrix (`PER_MATRIX` through faer, `PER_SMALL` through `small_lu`).
fn for_batch_ws<W>(
    batch: usize, work: usize, per_matrix: usize, par_work: usize, init: impl Fn(Par) -> Result<W> + Sync,
    f: impl Fn(&mut W, usize, Par) + Sync,
) -> Result<()> {
    for_batch_par(batch, work, par_work, true, per_matrix, init, f)
}

/// `for_batch_ws` with the size `par_work` from which one matrix uses faer's parallelism, and whether a big
/// matrix runs on one thread while the CPUs are contended (`cpu_contended`). Only factorizations whose bits
/// do not depend on the thread count may yield (cholesky, LU, triangular solves: checked 1 vs 2 threads at
/// n = 300-1600); faer's QR, eigh and SVD round differently in parallel, and a result must not change with the
/// load (a QR from `QR_BLOCKED_N` runs `qr_blocked` instead, which may: `run_blocked`).
#[allow(clippy::too_many_arguments)]
fn for_batch_par<W>(
    batch: usize, work: usize, par_work: usize, yield_cores: bool, per_matrix: usize, init: impl Fn(Par) -> Result<W> + Sync,
    f: impl Fn(&mut W, usize, Par) + Sync,
) -> Result<()> {
    use rayon::prelude::*;
    if batch == 0 {
        return Ok(());
    }
    let total = batch.saturating_mul(work.saturating_add(per_matrix));
    if work < par_work && (batch == 1 || total < BATCH_PAR_WORK) {
        let mut ws = init(Par::Seq)?;
        (0..batch).for_each(|b| f(&mut ws, b, Par::Seq));
        return Ok(());
    }
    crate::backend::cpu::threads::parallel(|split| {
        if split && batch > 1 && work < par_work {
            // a few runs per thread, so a descheduled thread's share is picked up by the others
            let runs = (4 * rayon::current_num_threads()).min(batch);
            let per = batch.div_ceil(runs);
            (0..batch.div_ceil(per)).into_par_iter().try_for_each(|r| {
                let mut ws = init(Par::Seq)?;
                (r * per..((r + 1) * per).min(batch)).for_each(|b| f(&mut ws, b, Par::Seq));
                Ok(())
            })
        } else {
            let par = if split && work >= par_work && !(yield_cores && cpu_contended()) { Par::rayon(0) } else { Par::Seq };
            if let Par::Rayon(t) = par {
                PAR_MATRICES.fetch_add(batch as u64, std::sync::atomic::Ordering::Relaxed);
                PAR_THREADS.store(t.get(), std::sync::atomic::Ordering::Relaxed);
            }
            let run = || {
                let mut ws = init(par)?;
                (0..batch).for_each(|b| f(&mut ws, b, par));
                Ok(())
            };
            match par {
                // one spindle team (faer's thread team) for the whole factorization: its threads spin between
                // faer's parallel steps instead of going back to rayon's sleep after each, and faer's gemm
                // joins it instead of starting a team per product (an AVX2 EPYC, 2 threads, after idle
                // gaps: qr n=1000 f64 83 against 104 ms, f32 59 against 70, svd f64 311 against 343; the
                // rest within 3%). Not while the CPUs are contended: the team's barriers wait for every
                // member, and a descheduled one kept eigh 1.7x and svd 8x slower at a load of 9 on 2 cores.
                Par::Rayon(t) if !cpu_contended() => spindle::with_lock(t.get(), run),
                _ => run(),
            }
        }
    })
}

/// Whether other work has kept this machine's CPUs oversubscribed lately: Linux's CPU pressure-stall average
/// over the last 10 s (`/proc/pressure/cpu`, "some avg10": the share of time some runnable task waited for a
/// CPU) of at least `CONTENDED_PSI` percent. faer's parallel kernels meet at barriers that their threads
/// spin on, so with another process on the cores a descheduled thread keeps the other spinning until the
/// scheduler swaps them: on 2 cores under a load of 5 its n = 1000 cholesky, LU and eigh took 2-5x their
/// sequential time (per-call medians, `linalg_faer_alone_vs_run`), while on idle cores the parallel ones
/// are the faster. So a big cholesky, LU or QR runs on one thread while the machine is contended, as
/// libgomp's dynamic teams shrink with the load average. Not eigh or svd: most of their parallel time is
/// in long products where a barrier is rare, and with 10 s of lag in the average they lost more in the
/// quieter stretches (1.2-1.5x main's parallel time at a load of 4-5) than they saved in the busy ones.
/// Read at most every 100 ms; false where there is no such file (not Linux, or a kernel without PSI), while
/// `IGNORE_CONTENTION` is set (tests of the parallel path) and when `CRANAX_LINALG_YIELD=0` is set (the
/// thread-count test of tests/test_linalg_thread_bits.py, or a user who wants the parallel path always).
fn cpu_contended() -> bool {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    static NEXT_MS: AtomicU64 = AtomicU64::new(0);
    static LAST: AtomicBool = AtomicBool::new(false);
    static NEVER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if IGNORE_CONTENTION.load(Relaxed) || *NEVER.get_or_init(|| std::env::var("CRANAX_LINALG_YIELD").is_ok_and(|v| v == "0")) {
        return false;
    }
    let now = BASE.get_or_init(std::time::Instant::now).elapsed().as_millis() as u64;
    if now < NEXT_MS.load(Relaxed) {
        return LAST.load(Relaxed);
    }
    NEXT_MS.store(now + 100, Relaxed);
    let avg10 = std::fs::read_to_string("/proc/pressure/cpu").ok().and_then(|s| {
        let v = s.lines().next()?.split_whitespace().find_map(|f| f.strip_prefix("avg10="))?;
        v.parse::<f64>().ok()
    });
    let c = avg10.is_some_and(|v| v >= CONTENDED_PSI);
    LAST.store(c, Relaxed);
    c
}

/// `cpu_contended`'s threshold, in percent of the last 10 s: an idle machine reads 0-5, one where another
/// helper's build or test run shares the cores 50-98.
const CONTENDED_PSI: f64 = 20.0;

/// Set by tests that check the parallel path itself: a loaded test machine must not turn it off.
pub static IGNORE_CONTENTION: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The block order of `cholesky_blocked` for an n×n matrix of `T`, or None where faer's own factorization runs
/// (below `CHOL_BLOCKED_N`). A function of n and the element type only, never of the thread count or the load,
/// so a factor has the same bits on any number of threads. `CRANAX_LINALG_CHOL_BLOCK` overrides it (0: faer's
/// own at every size; b: blocks of b from n = 2b).
fn cholesky_block<T: Real>(n: usize) -> Option<usize> {
    match env_usize("CRANAX_LINALG_CHOL_BLOCK") {
        Some(0) => None,
        Some(b) => (n >= 2 * b).then_some(b),
        None => (n >= CHOL_BLOCKED_N).then_some(CHOL_BLOCK),
    }
}

/// From this order a Cholesky factorization runs `cholesky_blocked`, in blocks of `CHOL_BLOCK`. On one thread
/// (process CPU time, AVX-512 EPYC, h-linalg18) it costs what faer's own does from n = 512 with blocks of 128-256
/// (f64 n = 2000 41-45 against 48-60 ms, n = 1000 6.5-7.1 against 6.7-7.4; f32 n = 512 0.55 against 0.56), blocks
/// of 64 more (f64 n = 2000 54-56 ms); at n = 384 its three block columns cost 7-12% more and split poorly.
const CHOL_BLOCKED_N: usize = 512;
const CHOL_BLOCK: usize = 128;

/// A column-major matrix whose blocks `cholesky_blocked`'s tasks read and write from several threads, each task
/// its own blocks.
#[derive(Clone, Copy)]
struct Blocks<T> {
    p: Ptr<T>,
    n: usize,
    cs: isize,
    b: usize,
}

impl<T: Real> Blocks<T> {
    /// Block (i, j): rows i·b.., columns j·b.. (the last ones narrower).
    ///
    /// SAFETY: the caller holds no other view of block (i, j) while it writes through this one, and reads only
    /// blocks that no task writes meanwhile.
    #[allow(clippy::mut_from_ref)]
    unsafe fn at(&self, i: usize, j: usize) -> MatMut<'_, T> {
        let (r0, c0) = (i * self.b, j * self.b);
        let (r, c) = (self.b.min(self.n - r0), self.b.min(self.n - c0));
        MatMut::from_raw_parts_mut(self.p.0.offset(r0 as isize + c0 as isize * self.cs), r, c, 1, self.cs)
    }
}

/// The lower Cholesky factor of `a` (column-major, lower triangle read and written) in b×b blocks, right-looking
/// with a look-ahead of one block column: after block column k is final, one side updates column k+1 by it,
/// factors k+1's diagonal block and solves k+1's blocks below, while the other updates every later column by
/// k; the blocks of each step are independent tasks that the pool's threads take as they come free (`pool`).
/// Each task is one of faer's own one-thread calls (`cholesky_in_place` on a diagonal block, its triangular
/// solve, its matrix products), as faer's recursive factorization makes them at its top level; only the order
/// and the split are cranax's. faer's parallel factorization splits each of its steps among the threads and
/// meets at a barrier after every product, so two threads lost to one below n = 1800 (f64) / 2400 (f32); these
/// tasks need no barrier but the end of a step. Every block is computed by the same calls whatever thread runs
/// it, so the bits do not depend on the thread count. False when a diagonal block is not positive definite.
fn cholesky_blocked<T: Real>(a: MatMut<'_, T>, b: usize, pool: bool) -> bool {
    let n = a.nrows();
    let nt = n.div_ceil(b);
    let m = Blocks { p: Ptr(a.as_ptr_mut()), n, cs: a.col_stride(), b };
    let minus_one = T::from_f64(-1.0);
    let diag = |k: usize| -> bool {
        // SAFETY: block (k, k), written by this task alone.
        let d = unsafe { m.at(k, k) };
        let mut mem = MemBuffer::new(llt::factor::cholesky_in_place_scratch::<T>(d.nrows(), Par::Seq, Default::default()));
        llt::factor::cholesky_in_place(d, Default::default(), Par::Seq, MemStack::new(&mut mem), Default::default()).is_ok()
    };
    // L_ik = A_ik L_kk^-T
    let solve = |i: usize, k: usize| {
        // SAFETY: block (i, k) written by this task alone; (k, k) final.
        let (l, x) = unsafe { (m.at(k, k), m.at(i, k)) };
        ts::solve_lower_triangular_in_place(l.as_ref(), x.transpose_mut(), Par::Seq);
    };
    // A_ij -= L_ik L_jk^T (the lower triangle only on the diagonal)
    let update = |i: usize, j: usize, k: usize| {
        // SAFETY: block (i, j) written by this task alone; column k's blocks final.
        let (li, lj, x) = unsafe { (m.at(i, k), m.at(j, k), m.at(i, j)) };
        if i == j {
            faer::linalg::matmul::triangular::matmul(
                x,
                faer::linalg::matmul::triangular::BlockStructure::TriangularLower,
                faer::Accum::Add,
                li.as_ref(),
                faer::linalg::matmul::triangular::BlockStructure::Rectangular,
                lj.as_ref().transpose(),
                faer::linalg::matmul::triangular::BlockStructure::Rectangular,
                minus_one,
                Par::Seq,
            );
        } else {
            faer::linalg::matmul::matmul(x, faer::Accum::Add, li.as_ref(), lj.as_ref().transpose(), minus_one, Par::Seq);
        }
    };
    if !diag(0) {
        return false;
    }
    block_tasks(pool, (1..nt).map(|i| (i, 0)).collect(), &solve);
    for k in 0..nt - 1 {
        let next = || {
            block_tasks(pool, (k + 1..nt).map(|i| (i, k + 1)).collect(), &|i, j| update(i, j, k));
            if !diag(k + 1) {
                return false;
            }
            block_tasks(pool, (k + 2..nt).map(|i| (i, k + 1)).collect(), &solve);
            true
        };
        let rest = || block_tasks(pool, (k + 2..nt).flat_map(|j| (j..nt).map(move |i| (i, j))).collect(), &|i, j| update(i, j, k));
        if !look_ahead(pool, next, rest) {
            return false;
        }
    }
    true
}

/// The block order of `lu_blocked` for an n×n matrix, or None where faer's own LU runs (below `LU_BLOCKED_N`, or
/// `CRANAX_LINALG_LU_BLOCK=0`). A function of n only (and of the knobs, read once), never of the thread count or
/// the load, so the factors have the same bits on any number of threads. `CRANAX_LINALG_LU_BLOCK=b` sets the
/// block, `CRANAX_LINALG_LU_BLOCKED_N=n` the order from which it runs (at least 2b).
fn lu_block(n: usize) -> Option<usize> {
    let b = env_usize("CRANAX_LINALG_LU_BLOCK").unwrap_or(LU_BLOCK);
    let from = env_usize("CRANAX_LINALG_LU_BLOCKED_N").unwrap_or(LU_BLOCKED_N).max(2 * b);
    (b > 0 && n >= from).then_some(b)
}

/// From this order an LU factorization (`lu`, `lu_solve`, so `solve`, `inv`, `det`, `slogdet`, `lu_factor`) runs
/// `lu_blocked` in blocks of `LU_BLOCK` columns, its trailing updates in tasks of `LU_ROWS` rows
/// (`CRANAX_LINALG_LU_ROWS`). On one thread it costs what faer's own LU costs with blocks of 128 (process CPU time,
/// n = 384-1000, both ISAs; 64, 192 and 256 cost more), and the row split changes neither bits nor cost. At
/// n = 256 handing the factorization to the pool (a wake-up) cost about what the second thread saved, at 384
/// the blocked driver was ahead (wall, 2 threads: f32 1.49 against faer's 1.67 ms, f64 2.12 against 2.41;
/// h-lu19), and from 256 on the AVX2-only host grad of slogdet at n = 500 took 0.92x the time (session 20);
/// benches/RESULTS.md h-lu19, Session 20, eig22.
const LU_BLOCKED_N: usize = 384;
const LU_BLOCK: usize = 128;
const LU_ROWS: usize = 256;

impl<T: Real> Blocks<T> {
    /// Rows r0..r1, columns c0..c1.
    ///
    /// SAFETY: as `at`.
    #[allow(clippy::mut_from_ref)]
    unsafe fn span(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> MatMut<'_, T> {
        MatMut::from_raw_parts_mut(self.p.0.offset(r0 as isize + c0 as isize * self.cs), r1 - r0, c1 - c0, 1, self.cs)
    }
}

/// LU with partial pivoting of the square `a` (column-major, factored in place: L below the diagonal with a unit
/// diagonal, U on and above), right-looking in column blocks of `b` with a look-ahead of one block: once panel k
/// (block column k from row k·b down) is factored, one side brings block column k+1 up to date (its rows
/// interchanged as the panel's were, its block row solved by the panel's unit lower triangle, the rows below
/// updated by a product) and factors it as panel k+1, while the other does the same for every later block column
/// (the updates in tasks of `rows` rows) and applies panel k's interchanges to the L columns left of it; the
/// tasks of a step on the pool's threads through rayon (`pool`; work stealing, no barrier but the end of a step).
/// Each task is one of faer's own one-thread calls: a panel is faer's `lu_in_place` of the tall panel (its
/// pivot is the first row of largest |a|, LAPACK's idamax, so the interchanges are getrf's), the block row
/// `solve_unit_lower_triangular_in_place`, the update `matmul`; only the order and the split are cranax's.
/// faer's parallel LU meets at a barrier after every product of its recursion and lost to one thread below
/// n = 1800 (f64) / 2400 (f32) on two threads. Every block is computed by the same calls whatever thread runs
/// it, so the bits do not depend on the thread count. Writes the row order to `fwd` (row i of the factors is
/// row fwd[i] of `a`, as faer's forward permutation).
fn lu_blocked<T: Real>(a: MatMut<'_, T>, fwd: &mut [usize], b: usize, rows: usize, pool: bool) {
    let n = a.nrows();
    assert!(a.ncols() == n && fwd.len() == n && a.row_stride() == 1 && b > 0);
    let nt = n.div_ceil(b);
    let m = Blocks { p: Ptr(a.as_ptr_mut()), n, cs: a.col_stride(), b };
    let cols = |j: usize| (j * b, ((j + 1) * b).min(n));
    // LAPACK's interchanges (0-based): row i was swapped with row piv[i] at step i; each panel writes its range
    let mut piv = vec![0usize; n];
    let pv = Ptr(piv.as_mut_ptr());
    let minus_one = T::from_f64(-1.0);
    let panel = |k: usize| {
        let pv = pv; // the whole wrapper (Sync), not its raw field
        let (r0, r1) = cols(k);
        let mk = n - r0;
        // SAFETY: panel k (block column k, rows r0..), written by this task alone.
        let p = unsafe { m.span(r0, n, r0, r1) };
        let mut idx = vec![0usize; 4 * mk];
        let (f, rest) = idx.split_at_mut(mk);
        let (inv, rest) = rest.split_at_mut(mk);
        let mut mem = MemBuffer::new(plu::lu_in_place_scratch::<usize, T>(mk, r1 - r0, Par::Seq, Default::default()));
        plu::lu_in_place(p, f, inv, Par::Seq, MemStack::new(&mut mem), Default::default());
        // faer's row order as the sequence of swaps that builds it (the interchanges faer made)
        let (cur, at) = rest.split_at_mut(mk);
        for i in 0..mk {
            (cur[i], at[i]) = (i, i); // at[row] = its position in `cur`
        }
        for i in 0..r1 - r0 {
            let p = at[f[i]];
            // SAFETY: piv[r0..r1], panel k's range, written by this task alone and read after it ends.
            unsafe { *pv.0.add(r0 + i) = r0 + p };
            let (ri, rp) = (cur[i], cur[p]);
            cur.swap(i, p);
            at[ri] = p;
            at[rp] = i;
        }
    };
    // panel k's interchanges on the rows of block column j (its L columns left of the panel, or a later one)
    let swap = |k: usize, j: usize| {
        let pv = pv;
        let (r0, r1) = cols(k);
        let (c0, c1) = cols(j);
        // SAFETY: panel k's range of piv is final; block column j written by this task alone.
        let (piv, c) = unsafe { (std::slice::from_raw_parts(pv.0.add(r0) as *const usize, r1 - r0), m.span(0, n, c0, c1)) };
        let (p, cs) = (c.as_ptr_mut(), c.col_stride());
        for col in 0..c1 - c0 {
            for (i, &r) in piv.iter().enumerate() {
                if r != r0 + i {
                    // SAFETY: rows r0 + i and r (< n) of column col, distinct.
                    unsafe {
                        let q = p.offset(col as isize * cs);
                        std::ptr::swap(q.add(r0 + i), q.add(r));
                    }
                }
            }
        }
    };
    // U_kj = L_kk^-1 A_kj (after the swap)
    let solve = |k: usize, j: usize| {
        let (r0, r1) = cols(k);
        let (c0, c1) = cols(j);
        // SAFETY: L_kk final; block (k, j) written by this task alone.
        let (l, x) = unsafe { (m.span(r0, r1, r0, r1), m.span(r0, r1, c0, c1)) };
        ts::solve_unit_lower_triangular_in_place(l.as_ref(), x, Par::Seq);
    };
    // A[i0..i1, j] -= L[i0..i1, k] U_kj
    let update = |k: usize, j: usize, i0: usize, i1: usize| {
        let (r0, r1) = cols(k);
        let (c0, c1) = cols(j);
        // SAFETY: panel k and U_kj final; rows i0..i1 of block column j written by this task alone.
        let (l, u, x) = unsafe { (m.span(i0, i1, r0, r1), m.span(r0, r1, c0, c1), m.span(i0, i1, c0, c1)) };
        faer::linalg::matmul::matmul(x, faer::Accum::Add, l.as_ref(), u.as_ref(), minus_one, Par::Seq);
    };
    let rows = rows.max(1);
    panel(0);
    for k in 0..nt {
        let below = cols(k).1;
        let next = || {
            if k + 1 < nt {
                swap(k, k + 1);
                solve(k, k + 1);
                update(k, k + 1, below, n);
                panel(k + 1);
            }
        };
        let rest = || {
            // the L columns left of panel k take its interchanges; block columns k+2.. their swaps and block rows
            block_tasks(pool, (0..k).chain(k + 2..nt).map(|j| (j, 0)).collect(), &|j, _| {
                swap(k, j);
                if j > k {
                    solve(k, j);
                }
            });
            let chunks = (below..n).step_by(rows).collect::<Vec<_>>();
            block_tasks(pool, (k + 2..nt).flat_map(|j| chunks.iter().map(move |&i| (j, i))).collect(), &|j, i| update(k, j, i, (i + rows).min(n)));
        };
        look_ahead(pool, next, rest);
    }
    fwd.iter_mut().enumerate().for_each(|(i, f)| *f = i);
    for (i, &p) in piv.iter().enumerate() {
        fwd.swap(i, p);
    }
}

/// LU of `a` in place with partial pivoting, the row order in `fwd`: `lu_blocked` in blocks of `b` through
/// `run_blocked` where `lu_block` gave one, else faer's `lu_in_place` with `par` (`inv` and `stack` are its).
fn lu_factor<T: Real>(a: MatMut<'_, T>, fwd: &mut [usize], inv: &mut [usize], par: Par, stack: &mut MemStack, blocked: Option<usize>, pool: bool) {
    match blocked {
        Some(b) => {
            let rows = env_usize("CRANAX_LINALG_LU_ROWS").unwrap_or(LU_ROWS);
            run_blocked(pool, |split| lu_blocked(a, fwd, b, rows, split))
        }
        None => {
            plu::lu_in_place(a, fwd, inv, par, stack, Default::default());
        }
    }
}

/// Runs a blocked driver `f(split)` (`cholesky_blocked`, `lu_blocked`): on the pool's threads when `pool` and the
/// CPUs are not contended (counted in `PAR_MATRICES`/`PAR_THREADS`), else with `split` false: the same blocks in
/// order on this thread.
fn run_blocked<R: Send>(pool: bool, f: impl FnOnce(bool) -> R + Send) -> R {
    if pool && !cpu_contended() {
        threads::parallel(|split| {
            if split {
                PAR_MATRICES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                PAR_THREADS.store(rayon::current_num_threads(), std::sync::atomic::Ordering::Relaxed);
            }
            f(split)
        })
    } else {
        f(false)
    }
}

/// The tasks of one step of a blocked driver: on the pool through rayon (work stealing) when `pool` and there
/// is more than one, else in order.
fn block_tasks(pool: bool, jobs: Vec<(usize, usize)>, f: &(dyn Fn(usize, usize) + Sync)) {
    use rayon::prelude::*;
    if pool && jobs.len() > 1 {
        jobs.into_par_iter().for_each(|(i, j)| f(i, j));
    } else {
        jobs.into_iter().for_each(|(i, j)| f(i, j));
    }
}

/// One look-ahead step of a blocked driver: `next` (the next block column, its result returned) beside `rest`
/// (the later columns) on the pool when `pool`, else `rest` then `next` on this thread.
fn look_ahead<R: Send>(pool: bool, next: impl FnOnce() -> R + Send, rest: impl FnOnce() + Send) -> R {
    if pool {
        rayon::join(next, rest).0
    } else {
        rest();
        next()
    }
}

/// The panel width and trailing-column width of `qr_blocked` for an m×n matrix whose reflectors come in blocks of
/// `bs` (`qr_block_size`), or None where faer's own QR runs (min(m, n) below `QR_BLOCKED_N`, or
/// `CRANAX_LINALG_QR_PANEL=0`). A function of the shape only (and of the knobs, read once), never of the thread
/// count or the load, so Q and R have the same bits on any number of threads. `CRANAX_LINALG_QR_PANEL=w` sets the
/// panel (rounded to whole blocks of `bs`), `CRANAX_LINALG_QR_BLOCKED_N=n` the order from which it runs,
/// `CRANAX_LINALG_QR_COLS=c` the column chunks of the trailing updates and of Q.
fn qr_blocking(m: usize, n: usize, bs: usize) -> Option<(usize, usize)> {
    let panel = env_usize("CRANAX_LINALG_QR_PANEL").unwrap_or(QR_PANEL);
    let from = env_usize("CRANAX_LINALG_QR_BLOCKED_N").unwrap_or(QR_BLOCKED_N);
    let cols = env_usize("CRANAX_LINALG_QR_COLS").unwrap_or(QR_COLS).max(1);
    (panel > 0 && m.min(n) >= from.max(2)).then(|| ((panel / bs).max(1) * bs, cols))
}

/// From this min(m, n) a real QR runs `qr_blocked` (panels of about `QR_PANEL` columns, whole blocks of faer's
/// reflector block size) and builds Q with `qr_q_chunks` (columns in chunks of `QR_COLS`). One thread, process
/// CPU time at n = 1000 (AVX-512 EPYC, load 6, benches/RESULTS.md eig20): the driver costs what faer's QR costs
/// (f32 17.2-18.0 against 17.7 ms, f64 31.7-33.7 against 32.6, panels of 48-144 and chunks of 96-256 alike),
/// and Q in chunks that skip the reflectors right of each chunk 17.0-17.8 against faer's 23.0 (f64 32.3-33.5
/// against 46.2): LAPACK orgqr's saving.
const QR_BLOCKED_N: usize = 384;
const QR_PANEL: usize = 96;
const QR_COLS: usize = 128;

/// QR of `a` (column-major m×n, factored in place as faer's `qr_in_place` leaves it: R on and above the diagonal,
/// the Householder vectors below, their block factors in `coeff`, bs×min(m, n)), right-looking in panels of `pw`
/// columns (a multiple of bs) with a look-ahead of one panel: once panel p is factored, one side applies its
/// reflectors to the next panel's columns and factors that panel, while the other applies them to every later
/// column, in tasks of `cols` columns (`pool`: rayon on the pool's threads, no barrier but the end of a step).
/// Each task is one of faer's own one-thread calls: a panel is faer's `qr_in_place` of the tall panel (its blocks
/// of bs are faer's, so are its factors), the update `apply_block_householder_sequence_transpose_on_the_left`;
/// only the order and the split are cranax's. faer's parallel QR meets at a barrier after every product, and
/// its rounding depends on the thread count; every task here is computed by the same calls whatever thread runs
/// it, so the bits do not. False where faer's QR would have skipped a column as dependent (its rank test: a
/// panel of lower rank, or a diagonal |r_jj| <= 16 (m - j) eps ‖r_:j‖, NaNs included): the caller runs faer's own.
fn qr_blocked<T: Real>(a: MatMut<'_, T>, coeff: MatMut<'_, T>, pw: usize, cols: usize, pool: bool) -> bool {
    let (m, n) = a.shape();
    let k = m.min(n);
    let bs = coeff.nrows();
    assert!(a.row_stride() == 1 && coeff.row_stride() == 1 && coeff.ncols() == k && pw > 0 && pw % bs == 0 && cols > 0);
    let am = Blocks { p: Ptr(a.as_ptr_mut()), n: m, cs: a.col_stride(), b: pw };
    let hm = Blocks { p: Ptr(coeff.as_ptr_mut()), n: bs, cs: coeff.col_stride(), b: pw };
    let np = k.div_ceil(pw);
    let pcols = |p: usize| (p * pw, ((p + 1) * pw).min(k));
    let full = std::sync::atomic::AtomicBool::new(true);
    let panel = |p: usize| {
        let (r0, r1) = pcols(p);
        // SAFETY: panel p (rows r0.., columns r0..r1) and its block factors, written by this task alone.
        let (x, h) = unsafe { (am.span(r0, m, r0, r1), hm.span(0, bs, r0, r1)) };
        let mut mem = MemBuffer::new(qrf::qr_in_place_scratch::<T>(m - r0, r1 - r0, bs, Par::Seq, Default::default()));
        let info = qrf::qr_in_place(x, h, Par::Seq, MemStack::new(&mut mem), Default::default());
        if info.rank < r1 - r0 {
            full.store(false, std::sync::atomic::Ordering::Relaxed);
        }
    };
    // columns c0..c1 (right of panel p) take panel p's reflectors: Q_p^T A
    let apply = |p: usize, c0: usize, c1: usize| {
        let (r0, r1) = pcols(p);
        // SAFETY: panel p and its factors final; rows r0.. of columns c0..c1 written by this task alone.
        let (v, h, x) = unsafe { (am.span(r0, m, r0, r1), hm.span(0, bs, r0, r1), am.span(r0, m, c0, c1)) };
        let mut mem = MemBuffer::new(householder::apply_block_householder_sequence_transpose_on_the_left_in_place_scratch::<T>(m - r0, bs, c1 - c0));
        householder::apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj(
            v.as_ref(),
            h.as_ref(),
            Conj::Yes,
            x,
            Par::Seq,
            MemStack::new(&mut mem),
        );
    };
    panel(0);
    for p in 0..np {
        let r1 = pcols(p).1;
        let nx = (r1 + pw).min(n);
        let next = || {
            if r1 < n {
                apply(p, r1, nx);
                if p + 1 < np {
                    panel(p + 1);
                }
            }
        };
        let rest = || block_tasks(pool, (nx..n).step_by(cols).map(|c0| (c0, (c0 + cols).min(n))).collect(), &|c0, c1| apply(p, c0, c1));
        look_ahead(pool, next, rest);
    }
    if !full.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    // faer's rank test against the whole column above (a panel saw only its own rows of it)
    let a = a.as_ref();
    let eps = <T as Elem>::to_f64(<T as faer::traits::RealField>::epsilon_impl());
    (0..k).all(|j| {
        // in float64, scaled by the largest entry (no overflow or underflow of the squares)
        let col = (0..=j).map(|i| <T as Elem>::to_f64(a[(i, j)]).abs());
        let big = col.clone().fold(0.0, f64::max);
        let norm = big * col.map(|x| (x / big) * (x / big)).sum::<f64>().sqrt();
        <T as Elem>::to_f64(a[(j, j)]).abs() > eps * (16.0 * (m - j) as f64) * norm
    })
}

/// Q (m×`q.ncols()`, any strides) of a QR that `qr_in_place`/`qr_blocked` left in `f` (m×k) and `coeff`, built in
/// column chunks of `cols` (tasks on the pool's threads when `pool`): each chunk starts as the identity's columns
/// and takes only the reflector blocks that reach it (column j of the identity is left alone by every reflector
/// right of j, so a chunk skips the blocks past its last column: LAPACK orgqr's saving, a third of faer's
/// products at n = m = k). The chunks are a function of the shape alone and each is one of faer's one-thread calls,
/// so the bits do not depend on the thread count.
fn qr_q_chunks<T: Real>(f: MatRef<'_, T>, coeff: MatRef<'_, T>, q: MatMut<'_, T>, cols: usize, pool: bool) {
    let (m, k, bs) = (f.nrows(), coeff.ncols(), coeff.nrows());
    let qc = q.ncols();
    let (qp, rs, cs) = (Ptr(q.as_ptr_mut()), q.row_stride(), q.col_stride());
    let chunk = |j0: usize, j1: usize| {
        let qp = qp;
        // SAFETY: columns j0..j1 of q, written by this task alone.
        let mut c = unsafe { MatMut::from_raw_parts_mut(qp.0.offset(j0 as isize * cs), m, j1 - j0, rs, cs) };
        c.fill(<T as Elem>::zero());
        (j0..j1.min(m)).for_each(|j| c[(j, j - j0)] = T::from_f64(1.0));
        // the blocks up to the one holding column j1 - 1 (whole blocks: faer's sequence starts from the last)
        let kk = j1.next_multiple_of(bs).min(k);
        if kk > 0 {
            let mut mem = MemBuffer::new(householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, bs, j1 - j0));
            householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
                f.get(.., ..kk),
                coeff.get(.., ..kk),
                Conj::No,
                c,
                Par::Seq,
                MemStack::new(&mut mem),
            );
        }
    };
    // the costliest chunks (the most reflectors) first
    block_tasks(pool, (0..qc).step_by(cols).rev().map(|j0| (j0, (j0 + cols).min(qc))).collect(), &chunk);
}

/// `for_batch_ws` without a workspace.
fn for_batch(batch: usize, work: usize, f: impl Fn(usize, Par) + Sync) -> Result<()> {
    for_batch_ws(batch, work, PER_MATRIX, PAR_WORK, |_| Ok(()), |_, b, par| f(b, par))
}

fn dims(a: &Aval) -> (usize, usize, usize) {
    let r = a.shape.len();
    (numel(&a.shape[..r - 2]), a.shape[r - 2], a.shape[r - 1])
}

fn stack_for(req: faer::dyn_stack::StackReq) -> MemBuffer {
    MemBuffer::new(req)
}

/// Runs `f(t)` for the tiles `t` in `0..tiles`: over the pool's threads when `par` is parallel (a big matrix
/// whose factorization gets the pool: its copies in and out, one thread's memory bandwidth each, were a
/// fixed cost the second core did not share), else in order here.
fn tiles_par(par: Par, tiles: usize, f: impl Fn(usize) + Sync) {
    use rayon::prelude::*;
    match par {
        // one job per tile, so the team's threads balance the triangles' uneven tiles
        Par::Rayon(_) if tiles > 1 => spindle::for_each(tiles, (0..tiles).into_par_iter(), f),
        _ => (0..tiles).for_each(f),
    }
}

/// Runs the copy `f(cp)` of a matrix of `elems` entries that faer factors with `par`: with the pool's threads
/// (`cp` parallel) when faer has them, and also when faer runs on one thread but the matrix has at least
/// `COPY_PAR_ELEMS` entries and the CPUs are free: the tiled copies and transposes around a factorization
/// that stays on one thread below `par_n` (n = 1000 cholesky: about 1.3 of 3.4 ms, h-linalg16) are split
/// without any barrier inside, and give the same bits on any number of threads.
fn copy_par(par: Par, elems: usize, f: impl FnOnce(Par) + Send) {
    match par {
        Par::Rayon(_) => f(par),
        _ if elems >= COPY_PAR_ELEMS && threads::num_threads() > 1 && !cpu_contended() => {
            threads::parallel(|split| f(if split { Par::rayon(0) } else { Par::Seq }))
        }
        _ => f(Par::Seq),
    }
}

/// `copy_par`'s size: a 512² copy takes about 0.1 ms on one thread, several wake-ups of the pool.
const COPY_PAR_ELEMS: usize = 512 * 512;

/// Copies `src` into `dst` (same shape, both column-major) column block by column block, the blocks over the
/// pool's threads when `par` is parallel.
fn copy_cols<T: Real>(src: MatRef<'_, T>, dst: MatMut<'_, T>, par: Par) {
    let n = src.ncols();
    let width = 64.min(n.max(1));
    let mut jobs = Vec::with_capacity(n.div_ceil(width));
    let mut rest = dst;
    while rest.ncols() > 0 {
        let w = width.min(rest.ncols());
        let j0 = n - rest.ncols();
        let (blk, tail) = rest.split_at_col_mut(w);
        jobs.push((j0, blk));
        rest = tail;
    }
    let job = |(j0, mut blk): (usize, MatMut<'_, T>)| {
        let w = blk.ncols();
        blk.copy_from(src.get(.., j0..j0 + w))
    };
    match par {
        Par::Rayon(_) if jobs.len() > 1 => spindle::for_each(jobs.len(), jobs, job),
        _ => jobs.into_iter().for_each(job),
    }
}

/// A pointer the tile copies share between threads; each thread writes its own tiles.
#[derive(Clone, Copy)]
struct Ptr<T>(*mut T);
unsafe impl<T> Send for Ptr<T> {}
unsafe impl<T> Sync for Ptr<T> {}

const TILE: usize = 32;

/// Copies `src` into `dst` (same shape, any strides) in square tiles, so that neither side is walked a
/// whole column or row at a stride: between faer's column-major matrices and cranax's row-major buffers an
/// element-by-element copy reads or writes one element per cache line, which at n = 1000 cost a few ms a
/// copy (faer's `copy_from` walks in the destination's order only).
fn copy_tiled<T: Copy + Sync>(src: MatRef<'_, T>, dst: MatMut<'_, T>, par: Par) {
    let (m, n) = src.shape();
    debug_assert_eq!(dst.shape(), (m, n));
    // walk each tile along the destination's unit stride when it has one (the writes), else the source's
    let by_rows = dst.col_stride() == 1 || (dst.row_stride() != 1 && src.col_stride() == 1);
    let (sp, srs, scs) = (Ptr(src.as_ptr() as *mut T), src.row_stride(), src.col_stride());
    let (dp, drs, dcs) = (Ptr(dst.as_ptr_mut()), dst.row_stride(), dst.col_stride());
    tiles_par(par, m.div_ceil(TILE), |t| {
        let (sp, dp) = (sp, dp);
        let (i0, i1) = (t * TILE, ((t + 1) * TILE).min(m));
        for j0 in (0..n).step_by(TILE) {
            let j1 = (j0 + TILE).min(n);
            // SAFETY: every (i, j) is inside both matrices, whose strides are their views' own; the
            // destination is borrowed mutably, so it does not overlap the source, and each tile row of it
            // is written by one thread.
            unsafe {
                if by_rows {
                    for i in i0..i1 {
                        for j in j0..j1 {
                            let (i, j) = (i as isize, j as isize);
                            *dp.0.offset(i * drs + j * dcs) = *sp.0.offset(i * srs + j * scs);
                        }
                    }
                } else {
                    for j in j0..j1 {
                        for i in i0..i1 {
                            let (i, j) = (i as isize, j as isize);
                            *dp.0.offset(i * drs + j * dcs) = *sp.0.offset(i * srs + j * scs);
                        }
                    }
                }
            }
        }
    });
}

/// Which matrix's lower triangle `lower_tiled` writes, for the row-major operand `a`: `a`'s own, `a^T`'s (`a`'s
/// upper triangle, eigh's `lower=False`), or that of `(a + a^T) / 2` (as `* half`: JAX's symmetrize).
#[derive(Clone, Copy)]
enum Tri<T> {
    Lower,
    Upper,
    Sym(T),
}

/// Writes the lower triangle that `from` names into `f` (column-major) for the row-major n×n `a`, in
/// square tiles: a read that walks `a` down a column (`Lower`, `Sym`) would pay a cache line per element a
/// whole column at a time (at n = 1000 such a copy cost about a third of faer's Cholesky before it was tiled).
fn lower_tiled<T: Real>(a: &[T], f: MatMut<'_, T>, from: Tri<T>, par: Par) {
    let n = f.nrows();
    // one loop per source, the choice made outside it
    match from {
        Tri::Lower => lower_tiled_by(a, f, par, |i, j, _| a[i * n + j]),
        Tri::Upper => lower_tiled_by(a, f, par, |i, _, row_j| row_j[i]),
        Tri::Sym(half) => lower_tiled_by(a, f, par, |i, j, row_j| (a[i * n + j] + row_j[i]) * half),
    }
}

/// `lower_tiled` with `value(i, j, row_j)` for entry (i, j) of the lower triangle, `row_j` being row j of `a`.
fn lower_tiled_by<T: Real>(a: &[T], f: MatMut<'_, T>, par: Par, value: impl Fn(usize, usize, &[T]) -> T + Sync) {
    let n = f.nrows();
    assert!(f.ncols() == n && a.len() >= n * n && f.row_stride() == 1);
    let (fp, cs) = (Ptr(f.as_ptr_mut()), f.col_stride());
    tiles_par(par, n.div_ceil(TILE), |t| {
        let fp = fp;
        let j0 = t * TILE;
        for i0 in (j0..n).step_by(TILE) {
            let (i1, j1) = ((i0 + TILE).min(n), (j0 + TILE).min(n));
            for j in j0..j1 {
                let (col, row) = (&a[j * n..(j + 1) * n], j as isize * cs);
                for i in i0.max(j)..i1 {
                    // SAFETY: i, j < n, inside f (unit row stride, column stride cs), borrowed mutably;
                    // column j is written by this tile's thread only.
                    unsafe { *fp.0.offset(row + i as isize) = value(i, j, col) };
                }
            }
        }
    });
}

/// Writes the lower triangle of the column-major n×n `f` (every entry `lower` when given) into the row-major
/// `d` and `above` over the diagonal, in square tiles that walk `d` along its rows (a transpose: `f` is
/// read down its columns), skipping the tiles above the diagonal that need no reads.
fn store_lower<T: Real>(f: MatRef<'_, T>, d: &mut [T], lower: Option<T>, above: T, par: Par) {
    let n = f.nrows();
    assert!(f.ncols() == n && d.len() >= n * n);
    let (fp, rs, cs) = (Ptr(f.as_ptr() as *mut T), f.row_stride(), f.col_stride());
    let dp = Ptr(d.as_mut_ptr());
    tiles_par(par, n.div_ceil(TILE), |t| {
        let (fp, dp) = (fp, dp);
        let (i0, i1) = (t * TILE, ((t + 1) * TILE).min(n));
        // SAFETY: rows i0..i1 of d (n * n elements), written by this tile's thread only.
        let rows = unsafe { std::slice::from_raw_parts_mut(dp.0.add(i0 * n), (i1 - i0) * n) };
        for j0 in (0..i1).step_by(TILE) {
            let j1 = (j0 + TILE).min(n);
            for i in i0..i1 {
                let row = &mut rows[(i - i0) * n..(i - i0 + 1) * n];
                for j in j0..j1.min(i + 1) {
                    // SAFETY: i, j < n, inside f.
                    row[j] = lower.unwrap_or_else(|| unsafe { *fp.0.offset(i as isize * rs + j as isize * cs) });
                }
            }
        }
        for i in i0..i1 {
            rows[(i - i0) * n + i + 1..(i - i0 + 1) * n].fill(above);
        }
    });
}

/// Writes `m` (any layout) into the row-major slice `d`.
fn store<T: Real>(m: MatRef<'_, T>, d: &mut [T], par: Par) {
    let (r, c) = m.shape();
    copy_tiled(m, MatMut::from_row_major_slice_mut(&mut d[..r * c], r, c), par);
}

/// Copies the row-major slice `s` into `f` (faer's column-major matrix).
fn load<T: Real>(s: &[T], f: MatMut<'_, T>, par: Par) {
    let (r, c) = f.shape();
    copy_tiled(MatRef::from_row_major_slice(&s[..r * c], r, c), f, par);
}

/// A column-major workspace matrix (columns padded to whole cache lines, as faer's `Mat` pads them) in cranax's
/// buffer pool, contents unspecified. A fresh 8 MB `Mat::zeros` per call (n = 1000, f64) was a new mapping that
/// every call page-faulted in and zero-filled (a few hundred µs, several ms when other processes compete for
/// memory); from the pool the previous call's block comes back already mapped and in cache.
struct PoolMat<T> {
    st: crate::buffer::Storage,
    rows: usize,
    cols: usize,
    cs: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T: Real> PoolMat<T> {
    fn new(rows: usize, cols: usize) -> Result<PoolMat<T>> {
        let cs = rows.next_multiple_of((crate::buffer::ALIGN / size_of::<T>()).max(1));
        let bytes = cs.checked_mul(cols).and_then(|e| e.checked_mul(size_of::<T>()));
        let bytes = bytes.ok_or(Error::Memory { bytes: u128::MAX, what: "linalg workspace".into() })?;
        Ok(PoolMat { st: crate::buffer::Storage::uninit(bytes)?, rows, cols, cs, _t: std::marker::PhantomData })
    }
    fn as_mut(&mut self) -> MatMut<'_, T> {
        // SAFETY: the storage holds cs * cols elements of T (ALIGN-aligned), borrowed mutably through self.
        let d = unsafe { std::slice::from_raw_parts_mut(self.st.as_ptr() as *mut T, self.cs * self.cols) };
        MatMut::from_column_major_slice_with_stride_mut(d, self.rows, self.cols, self.cs)
    }
    fn as_ref(&self) -> MatRef<'_, T> {
        // SAFETY: as in as_mut, borrowed shared; faer and the copies initialize what they read.
        let d = unsafe { std::slice::from_raw_parts(self.st.as_ptr() as *const T, self.cs * self.cols) };
        MatRef::from_column_major_slice_with_stride(d, self.rows, self.cols, self.cs)
    }
}

/// faer's scratch (`MemStack`) in cranax's buffer pool, for the reason `PoolMat` is there: eigh's is 12 MB
/// at n = 1000 (float32), which a `MemBuffer` per call allocated anew; and a failed allocation is a
/// `Memory` error here, where `MemBuffer` aborts.
struct PoolStack(crate::buffer::Storage);

impl PoolStack {
    fn new(req: faer::dyn_stack::StackReq) -> Result<PoolStack> {
        // room to align the stack's start too: the pool's blocks are ALIGN-aligned, faer may ask for more
        let bytes = req.unaligned_bytes_required();
        if bytes == usize::MAX {
            return Err(Error::Memory { bytes: u128::MAX, what: "linalg scratch".into() });
        }
        Ok(PoolStack(crate::buffer::Storage::uninit(bytes)?))
    }
    fn stack(&mut self) -> &mut MemStack {
        // SAFETY: the storage holds len() bytes, borrowed mutably through self; MemStack treats them as
        // uninitialized.
        let b = unsafe { std::slice::from_raw_parts_mut(self.0.as_ptr() as *mut std::mem::MaybeUninit<u8>, self.0.len()) };
        MemStack::new(b)
    }
}

/// Whether the row-major n×n `b` is exactly the identity (`jnp.linalg.inv`'s right-hand side). Checked on
/// the values rather than on the program: the scan stops at the first other entry, and it costs n² reads
/// against the solve's n³ flops.
fn is_identity<T: Real>(b: &[T], n: usize) -> bool {
    let (zero, one) = (<T as Elem>::zero(), T::from_f64(1.0));
    b.chunks_exact(n).enumerate().all(|(i, row)| row.iter().enumerate().all(|(j, &v)| v == if i == j { one } else { zero }))
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
    let (op, complex) = match op {
        LinalgOp::Complex(inner) => (&**inner, true),
        op => (op, false),
    };
    match (dt, complex || matches!(op, LinalgOp::Eig { .. } | LinalgOp::Hessenberg | LinalgOp::Tridiagonal)) {
        (DType::F32, false) => run_t::<f32>(op, inputs, outs),
        (DType::F64, false) => run_t::<f64>(op, inputs, outs),
        (DType::F32, true) => run_c::<c32>(op, complex, inputs, outs),
        (DType::F64, true) => run_c::<c64>(op, complex, inputs, outs),
        (d, _) => Err(Error::Unsupported(format!("{} on {}", op.name(), d.short_name()))),
    }
}

/// The per-thread workspace of a batch of real QR factorizations.
struct QrWork<T> {
    f: PoolMat<T>,
    coeff: Mat<T>,
    mem: PoolStack,
}

/// The per-thread workspace of a batch of real SVDs: the vectors, the values and
/// faer's scratch (`v` is empty when svd computes no vectors).
struct DecompWork<T> {
    u: PoolMat<T>,
    v: PoolMat<T>,
    w: faer::diag::Diag<T>,
    mem: PoolStack,
}

/// The per-thread workspace of a batch of real eigh decompositions, which run faer's `self_adjoint_evd` by
/// its steps (the same calls in the same order, so the same bits): the operand's lower triangle goes
/// straight into the copy faer tridiagonalizes (no second copy inside faer), and the steps' parameters are
/// cranax's (`EIGH_BLOCK`, `eigh_tridiag_params`).
struct EighWork<T> {
    /// the tridiagonalized copy: T on the diagonals, the Householder vectors below the subdiagonal
    f: PoolMat<T>,
    /// the block Householder factors of those vectors
    h: PoolMat<T>,
    u: PoolMat<T>,
    w: faer::diag::Diag<T>,
    d: faer::diag::Diag<T>,
    e: faer::diag::Diag<T>,
    mem: PoolStack,
}

impl<T: Real> EighWork<T> {
    /// The workspace for n×n matrices, with room for the eigenvectors when `vectors`.
    fn new(n: usize, vectors: bool, par: Par) -> Result<EighWork<T>> {
        let bs = eigh_block_size::<T>(n);
        let parts = eigh_column_blocks(n, par);
        let nu = if vectors { n } else { 0 };
        let req = faer::dyn_stack::StackReq::any_of(&[
            evd::tridiag::tridiag_in_place_scratch::<T>(n, par, eigh_tridiag_params::<T>().into()),
            // a superset of the tridiagonal eigensolver's (faer has no scratch query of its own for it)
            evd::self_adjoint_evd_scratch::<T>(n, if vectors { evd::ComputeEigenvectors::Yes } else { evd::ComputeEigenvectors::No }, par, eigh_evd_params::<T>().into()),
            eigh_apply_scratch::<T>(n, n),
            // the column blocks' shares (`run`), each aligned apart
            faer::dyn_stack::StackReq::new_aligned::<u8>(eigh_apply_scratch::<T>(n, n.div_ceil(parts)).unaligned_bytes_required(), 64)
                .array(parts),
        ]);
        Ok(EighWork {
            f: PoolMat::new(n, n)?,
            h: PoolMat::new(bs, n.saturating_sub(1))?,
            u: PoolMat::new(nu, nu)?,
            w: faer::diag::Diag::zeros(n),
            d: faer::diag::Diag::zeros(n),
            e: faer::diag::Diag::zeros(n),
            mem: PoolStack::new(req)?,
        })
    }

    /// Eigenvalues (ascending) into `w` and, when the workspace has room for them, eigenvectors (columns)
    /// into `u` of the n×n row-major `a`'s triangle `from` (n >= 1); false when the eigensolver failed.
    fn run(&mut self, a: &[T], from: Tri<T>, par: Par) -> bool {
        let n = self.f.rows;
        lower_tiled(a, self.f.as_mut(), from, par);
        evd::tridiag::tridiag_in_place(self.f.as_mut(), self.h.as_mut(), par, self.mem.stack(), eigh_tridiag_params::<T>().into());
        let f = self.f.as_ref();
        for i in 0..n {
            self.d[i] = f[(i, i)];
            self.e[i] = if i + 1 < n { f[(i + 1, i)] } else { <T as Elem>::zero() };
        }
        let vectors = self.u.rows == n;
        // u needs no clearing: the eigensolver writes all of it
        let u = vectors.then(|| self.u.as_mut());
        let ok = evd::tridiagonal_self_adjoint_evd(self.d.as_ref(), self.e.as_ref(), self.w.as_mut(), u, par, self.mem.stack(), eigh_evd_params::<T>().into())
            .is_ok();
        if ok && vectors && n > 1 {
            // u = Q u, Q = diag(1, Q') (Q' the reflectors below the subdiagonal)
            let (v, h) = (self.f.as_ref().submatrix(1, 0, n - 1, n - 1), self.h.as_ref());
            let u = self.u.as_mut().subrows_mut(1, n - 1);
            let apply = |u: MatMut<'_, T>, par: Par, stack: &mut MemStack| {
                householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(v, h, Conj::No, u, par, stack)
            };
            match eigh_column_blocks(n, par) {
                1 => apply(u, par, self.mem.stack()),
                parts => {
                    // each thread applies Q to its own block of u's columns, sequentially, with its own share
                    // of the scratch: no barrier between the blocked steps
                    let per = n.div_ceil(parts);
                    let bytes = eigh_apply_scratch::<T>(n, per).unaligned_bytes_required();
                    let mut stack = self.mem.stack();
                    let mut jobs = Vec::with_capacity(parts);
                    let mut rest = u;
                    while rest.ncols() > 0 {
                        let w = per.min(rest.ncols());
                        let (cols, tail) = rest.split_at_col_mut(w);
                        let (buf, s) = stack.make_aligned_uninit::<u8>(bytes, 64);
                        jobs.push((cols, buf));
                        (rest, stack) = (tail, s);
                    }
                    spindle::for_each(jobs.len(), jobs, |(cols, buf)| apply(cols, Par::Seq, MemStack::new(buf)));
                }
            }
        }
        ok
    }
}

/// Into how many column blocks eigh splits the eigenvectors' back-transformation (`u = Q u`) when it runs on
/// the pool: faer's parallel product meets at a barrier after each of its blocked steps, the columns need none.
/// Blocks of about `EIGH_BLOCK_COLS`, a function of n alone (not one per thread, as before): each block is the
/// same one-thread call whatever thread takes it, so this step's bits do not depend on the thread count, and
/// the pool's threads take the blocks as they come free (a descheduled thread holds back one block, not half).
fn eigh_column_blocks(n: usize, par: Par) -> usize {
    match par {
        Par::Rayon(_) if n >= 2 * EIGH_BLOCK_COLS => n.div_ceil(EIGH_BLOCK_COLS),
        _ => 1,
    }
}

/// `eigh_column_blocks`' width: one thread's CPU time of the step at n = 1000 f32 is the same with blocks of
/// 64, 128 or 256 columns as faer's whole call (25-26 ms at a load of 6, benches/RESULTS.md eig20).
const EIGH_BLOCK_COLS: usize = 128;

/// faer's scratch to apply eigh's Householder blocks to `cols` columns.
fn eigh_apply_scratch<T: Real>(n: usize, cols: usize) -> faer::dyn_stack::StackReq {
    householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(n.saturating_sub(1), eigh_block_size::<T>(n), cols)
}

/// The SVD's parameters for `k = min(m, n)`: faer's, except that below faer's divide-and-conquer threshold
/// (128) the bidiagonal SVD still divides down to 48 instead of taking the QR iteration: at n = 100
/// (`jnp.linalg.svd` of the bench's matrix, one thread, CPU time) 0.90x the time in float64, 0.88x in
/// float32; eigh measured the other way (its QR iteration at n = 100 is the faster) and keeps faer's.
/// Measurement knobs (read once): `CRANAX_LINALG_SVD_RECURSION` sets the divide-and-conquer threshold at
/// every k, `CRANAX_LINALG_BIDIAG_PAR` the bidiagonalization's `par_threshold` (faer's 192 * 256: the
/// trailing (m-k)(n-k) below which its steps run on one thread).
fn svd_params<T: Real>(k: usize) -> svd::SvdParams {
    let mut auto: svd::SvdParams = faer::Auto::<T>::auto();
    if let Some(t) = env_usize("CRANAX_LINALG_BIDIAG_PAR") {
        auto.bidiag.par_threshold = t;
    }
    if let Some(r) = env_usize("CRANAX_LINALG_SVD_RECURSION") {
        return svd::SvdParams { recursion_threshold: r.max(2), ..auto };
    }
    if k < auto.recursion_threshold {
        svd::SvdParams { recursion_threshold: SVD_SMALL_RECURSION, ..auto }
    } else {
        auto
    }
}

/// `svd_params`' divide-and-conquer threshold below 128.
const SVD_SMALL_RECURSION: usize = 48;

/// eigh's Householder block size: faer's (its QR's recommendation, what `self_adjoint_evd` uses).
fn eigh_block_size<T: Real>(n: usize) -> usize {
    qrf::recommended_block_size::<T>(n, n).max(1)
}

/// eigh's tridiagonalization parameters: faer's; `CRANAX_LINALG_TRIDIAG_PAR` (a measurement knob, read once)
/// sets its `par_threshold` (faer's 192 * 256: the trailing (n-k)²/2 below which its steps, each a
/// barrier of the pool, run on one thread).
fn eigh_tridiag_params<T: Real>() -> evd::tridiag::TridiagParams {
    let mut p: evd::tridiag::TridiagParams = faer::Auto::<T>::auto();
    if let Some(t) = env_usize("CRANAX_LINALG_TRIDIAG_PAR") {
        p.par_threshold = t;
    }
    p
}

/// The tridiagonal eigensolver's parameters: faer's (divide and conquer from n = 128, LAPACK stedc's
/// method, as JAX's syevd); `CRANAX_LINALG_EIGH_RECURSION` (a measurement knob, read once) sets the order
/// below which it takes the QR iteration.
fn eigh_evd_params<T: Real>() -> evd::SelfAdjointEvdParams {
    let mut p: evd::SelfAdjointEvdParams = faer::Auto::<T>::auto();
    p.tridiag = eigh_tridiag_params::<T>();
    if let Some(r) = env_usize("CRANAX_LINALG_EIGH_RECURSION") {
        p.recursion_threshold = r.max(2);
    }
    p
}

/// The per-thread workspace of a batch of real LU factorizations (`t`: `lu_solve`'s right-hand side, else
/// empty).
struct LuWork<T> {
    f: PoolMat<T>,
    /// `lu_solve`'s right-hand side in its row order, n×c row-major as the c×n column-major (else 0×0)
    t: PoolMat<T>,
    idx: Vec<usize>,
    mem: PoolStack,
}

fn run_t<T: Real>(op: &LinalgOp, inputs: &[&Buffer], outs: &[Aval]) -> Result<Vec<Buffer>> {
    let res: Vec<Buffer> = outs.iter().map(uninit).collect::<Result<_>>()?;
    let a = inputs[0];
    let (batch, m, n) = dims(&a.aval);
    let k = m.min(n);
    // SAFETY: the element type matches the dtype (the shape rule checked it).
    let src = unsafe { elems::<T>(a) };
    let work = m * n * k.max(1);
    let nan = T::from_f64(f64::NAN);
    match op {
        LinalgOp::Cholesky | LinalgOp::CholeskyTril { .. } if (1..=SMALL_CHOL_N).contains(&n) => {
            let o = Out::<T>::of(&res[0]);
            let (tril, sym) = match op {
                LinalgOp::CholeskyTril { symmetrize } => (true, *symmetrize),
                _ => (false, false),
            };
            let half = T::from_f64(0.5);
            // workspace: the n×n column-major copy (once per run of matrices: zeroing a 32×32 array per 3×3
            // matrix cost more than its factor)
            for_batch_ws(batch, work, PER_SMALL, PAR_WORK, |_| Ok(vec![<T as Elem>::zero(); n * n]), |w, b, _| {
                let s = &src[b * n * n..(b + 1) * n * n];
                // column-major lower triangle (what potrf reads), symmetrized as the faer path does
                for j in 0..n {
                    for i in j..n {
                        w[i + j * n] = if sym { (s[i * n + j] + s[j * n + i]) * half } else { s[i * n + j] };
                    }
                }
                let ok = small_chol::factor(w, n);
                let above = if ok || tril { <T as Elem>::zero() } else { nan };
                // SAFETY: matrix b of a fresh output, written by this call only.
                let d = unsafe { o.mat(b, n * n) };
                for i in 0..n {
                    for j in 0..n {
                        d[i * n + j] = if j > i { above } else if ok { w[i + j * n] } else { nan };
                    }
                }
            })?;
        }
        LinalgOp::Cholesky | LinalgOp::CholeskyTril { .. } => {
            let o = Out::<T>::of(&res[0]);
            // `cholesky_tril` folds JAX's `tril` (zeros above the diagonal even for a failed factor) and,
            // with `symmetrize`, its `(a + a^T) / 2` into the copies (`opt::cholesky`)
            let (tril, sym) = match op {
                LinalgOp::CholeskyTril { symmetrize } => (true, *symmetrize),
                _ => (false, false),
            };
            // x * 0.5 rounds as x / 2 (JAX's `div`) does: both are exact unless the result is subnormal, and
            // then both round the same real value
            let half = T::from_f64(0.5);
            // workspace: the column-major copy faer factors in place, and its scratch
            let init = |par| {
                Ok((PoolMat::<T>::new(n, n)?, PoolStack::new(llt::factor::cholesky_in_place_scratch::<T>(n, par, Default::default()))?))
            };
            // from `CHOL_BLOCKED_N` cranax's blocked driver around faer's kernels (`cholesky_blocked`) on the pool
            // instead of faer's parallel factorization at any size
            let blocked = cholesky_block::<T>(n);
            let par_work = if blocked.is_some() { usize::MAX } else { par_work_from::<T>(ParFamily::Cholesky, threads::num_threads()) };
            let pool = batch == 1 && threads::num_threads() > 1;
            for_batch_par(batch, work, par_work, true, PER_MATRIX, init, |(f, mem), b, par| {
                if n == 0 {
                    return;
                }
                let s = &src[b * n * n..(b + 1) * n * n];
                // SAFETY: matrix b of a fresh output, written by this call only.
                let d = unsafe { o.mat(b, n * n) };
                copy_par(par, n * n, |cp| {
                    if sym {
                        // faer reads the lower triangle only
                        lower_tiled(s, f.as_mut(), Tri::Sym(half), cp);
                    } else {
                        load(s, f.as_mut(), cp);
                    }
                });
                let ok = match blocked {
                    Some(bs) => run_blocked(pool, |split| cholesky_blocked(f.as_mut(), bs, split)),
                    None => llt::factor::cholesky_in_place(f.as_mut(), Default::default(), par, mem.stack(), Default::default()).is_ok(),
                };
                let above = if ok || tril { <T as Elem>::zero() } else { nan };
                copy_par(par, n * n, |cp| store_lower(f.as_ref(), d, if ok { None } else { Some(nan) }, above, cp));
            })?;
        }
        LinalgOp::Lu if m == n && (1..=SMALL_N).contains(&n) => {
            let (o, piv, perm) = (Out::<T>::of(&res[0]), Out::<i32>::of(&res[1]), Out::<i32>::of(&res[2]));
            for_batch_ws(batch, work, PER_SMALL, PAR_WORK, |_| Ok(()), |_, b, _| {
                // SAFETY: matrix b of fresh outputs, written by this call only.
                let (d, pv, pm) = unsafe { (o.mat(b, n * n), piv.mat(b, n), perm.mat(b, n)) };
                d.copy_from_slice(&src[b * n * n..(b + 1) * n * n]);
                dispatch!(n, |n| small_lu::factor(d, n, pv, None));
                pm.iter_mut().enumerate().for_each(|(i, x)| *x = i as i32);
                for (j, &p) in pv.iter().enumerate() {
                    pm.swap(j, p as usize);
                }
            })?;
        }
        LinalgOp::LuSolve => {
            let bsrc = unsafe { elems::<T>(inputs[1]) };
            let c = *inputs[1].aval.shape.last().unwrap_or(&0);
            let ox = Out::<T>::of(&res[0]);
            if n == 0 || c == 0 {
                return Ok(res);
            }
            if n <= SMALL_N {
                // workspace: the factored copy and the pivots (on the stack)
                for_batch_ws(batch, work, PER_SMALL, PAR_WORK, |_| Ok(()), |_, b, _| {
                    // SAFETY: matrix b of a fresh output, written by this call only.
                    let x = unsafe { ox.mat(b, n * c) };
                    x.copy_from_slice(&bsrc[b * n * c..(b + 1) * n * c]);
                    let mut lu = [<T as Elem>::zero(); SMALL_N * SMALL_N];
                    let mut piv = [0i32; SMALL_N];
                    lu[..n * n].copy_from_slice(&src[b * n * n..(b + 1) * n * n]);
                    dispatch!(n, |n| {
                        small_lu::factor(&mut lu, n, &mut piv, Some((&mut *x, c)));
                        small_lu::solve(&lu, n, x, c)
                    });
                })?;
                return Ok(res);
            }
            // A row-major `a` is `a^T` column-major: faer factors that with no transposing copy in or out
            // (at n = 1000 the tiled transposes cost several percent of a solve): P a^T = L U, so
            // a = U^T L^T P, whose triangular factors are the transposed views of the factored copy.
            // Many right-hand columns (`inv`'s identity among them) are solved in independent column blocks
            // (`rhs_blocks`), on the pool's threads from `RHS_PAR_WORK`: LAPACK getri's U^-1 L^-1 P, which
            // `inv` took before above n = 256, has as many flops (4n³/3 after the LU) but its steps are
            // whole-matrix ones that only faer's barrier-bound parallelism could split.
            let square = c == n;
            // workspace: the column-major copy faer factors, b in its row order, the row orders and scratch
            let init = |par| {
                Ok(LuWork {
                    f: PoolMat::<T>::new(n, n)?,
                    t: PoolMat::<T>::new(c, n)?,
                    idx: vec![0usize; 2 * n],
                    mem: PoolStack::new(plu::lu_in_place_scratch::<usize, T>(n, n, par, Default::default()))?,
                })
            };
            let work = work + n * n * c;
            // from `LU_BLOCKED_N` cranax's blocked driver around faer's kernels (`lu_blocked`) on the pool
            // instead of faer's parallel LU at any size
            let blocked = lu_block(n);
            let par_work = if blocked.is_some() { usize::MAX } else { par_work_from::<T>(ParFamily::Lu, threads::num_threads()) };
            let pool = batch == 1 && threads::num_threads() > 1;
            for_batch_par(batch, work, par_work, true, PER_MATRIX, init, |w, b, par| {
                // SAFETY: matrix b of a fresh output, written by this call only.
                let x = unsafe { ox.mat(b, n * c) };
                let (fwd, inv) = w.idx.split_at_mut(n);
                copy_par(par, n * n, |cp| copy_cols(MatRef::from_column_major_slice(&src[b * n * n..(b + 1) * n * n], n, n), w.f.as_mut(), cp));
                lu_factor(w.f.as_mut(), fwd, inv, par, w.mem.stack(), blocked, pool);
                let bm = &bsrc[b * n * c..(b + 1) * n * c];
                // U^T y = I: y is lower triangular (column j is zero above row j), so each block of columns
                // from j0 solves only rows j0.. (8 blocks: 0.41x the flops of a full solve)
                let ident = square && is_identity(bm, n);
                // a x = b is U^T (L^T (P x)) = b: solve for P x, whose row i is row fwd[i] of x
                // (each block fills its own columns of t: in parallel, and from the pool's block, no zeroed
                // fresh Vec of n * c)
                let tv = w.t.as_mut().transpose_mut();
                let ft = w.f.as_ref().transpose();
                // two passes, each in its own column blocks: the first fills t and solves by U^T (the
                // identity's in at least 4 blocks, for the rows each may skip), the second by L^T and writes
                // x. The second needs no more blocks than a plain solve: below 192 columns one whole solve
                // (n = 100: 4 narrow ones cost inv 6-10% more)
                let (nb1, nb2) = (rhs_block_count(c, ident), rhs_block_count(c, false));
                let parallel = rhs_parallel(n * n * c);
                let bm = MatRef::from_row_major_slice(bm, n, c);
                let par1 = if nb1 > 1 { Par::Seq } else { par };
                rhs_blocks(tv, nb1, nb1 > 1 && parallel, |j0, mut blk| {
                    let w = blk.ncols();
                    if ident {
                        blk.fill(<T as Elem>::zero());
                        (0..w).for_each(|k| blk[(j0 + k, k)] = T::from_f64(1.0));
                        ts::solve_lower_triangular_in_place(ft.get(j0.., j0..), blk.get_mut(j0.., ..), par1);
                    } else {
                        blk.copy_from(bm.get(.., j0..j0 + w));
                        ts::solve_lower_triangular_in_place(ft, blk, par1);
                    }
                });
                let tv = w.t.as_mut().transpose_mut();
                let par2 = if nb2 > 1 { Par::Seq } else { par };
                let (xp, fwd) = (Ptr(x.as_mut_ptr()), &*fwd);
                rhs_blocks(tv, nb2, nb2 > 1 && parallel, |j0, mut blk| {
                    ts::solve_unit_upper_triangular_in_place(ft, blk.as_mut(), par2);
                    // this block's columns of x, rows in a's order (each thread its own columns)
                    let (xp, w, bp, rs) = (xp, blk.ncols(), blk.as_ptr(), blk.row_stride());
                    debug_assert_eq!(blk.col_stride(), 1);
                    for (i, &r) in fwd.iter().enumerate() {
                        // SAFETY: row i of the block (w contiguous elements: t is row-major) and columns
                        // j0..j0 + w of row r of x (n x c, row-major), which only this block writes.
                        unsafe { std::ptr::copy_nonoverlapping(bp.offset(i as isize * rs), xp.0.add(r * c + j0), w) };
                    }
                });
            })?;
        }
        LinalgOp::Lu => {
            let (o, piv, perm) = (Out::<T>::of(&res[0]), Out::<i32>::of(&res[1]), Out::<i32>::of(&res[2]));
            // workspace: the column-major copy, faer's forward/inverse row orders, the swap bookkeeping
            // (`cur`, `at`) and faer's scratch
            let init = |par| {
                Ok(LuWork {
                    f: PoolMat::<T>::new(m, n)?,
                    t: PoolMat::<T>::new(0, 0)?,
                    idx: vec![0usize; 4 * m],
                    mem: PoolStack::new(plu::lu_in_place_scratch::<usize, T>(m, n, par, Default::default()))?,
                })
            };
            let blocked = if m == n { lu_block(n) } else { None };
            let par_work = if blocked.is_some() { usize::MAX } else { par_work_from::<T>(ParFamily::Lu, threads::num_threads()) };
            let pool = batch == 1 && threads::num_threads() > 1;
            for_batch_par(batch, work, par_work, true, PER_MATRIX, init, |w, b, par| {
                let s = &src[b * m * n..(b + 1) * m * n];
                // SAFETY: matrix b of fresh outputs, written by this call only.
                let (d, pv, pm) = unsafe { (o.mat(b, m * n), piv.mat(b, k), perm.mat(b, m)) };
                let (fwd, rest) = w.idx.split_at_mut(m);
                let (inv, rest) = rest.split_at_mut(m);
                let (cur, at) = rest.split_at_mut(m);
                if k > 0 {
                    copy_par(par, m * n, |cp| load(s, w.f.as_mut(), cp));
                    lu_factor(w.f.as_mut(), fwd, inv, par, w.mem.stack(), blocked, pool);
                    copy_par(par, m * n, |cp| store(w.f.as_ref(), d, cp));
                } else {
                    fwd.iter_mut().enumerate().for_each(|(i, p)| *p = i);
                    d.copy_from_slice(s);
                }
                // Row i of the factored matrix is row fwd[i] of `a`: LAPACK's interchanges are the
                // sequence of swaps that builds that order row by row.
                for i in 0..m {
                    (cur[i], at[i]) = (i, i); // at[row] = its position in `cur`
                }
                for i in 0..k {
                    let p = at[fwd[i]];
                    pv[i] = p as i32;
                    let (ri, rp) = (cur[i], cur[p]);
                    cur.swap(i, p);
                    at[ri] = p;
                    at[rp] = i;
                }
                for (x, &y) in pm.iter_mut().zip(cur.iter()) {
                    *x = y as i32;
                }
            })?;
        }
        LinalgOp::Qr { full_matrices } => {
            let q_cols = if *full_matrices { m } else { k };
            let (oq, or) = (Out::<T>::of(&res[0]), Out::<T>::of(&res[1]));
            let bs = qr_block_size::<T>(m, n);
            // workspace: the column-major copy faer factors, the reflectors' block coefficients, and one
            // scratch large enough for the factorization and for building Q
            let init = |par| {
                Ok(QrWork {
                    f: PoolMat::<T>::new(m, n)?,
                    coeff: Mat::<T>::zeros(bs, k),
                    mem: PoolStack::new(faer::dyn_stack::StackReq::any_of(&[
                        qrf::qr_in_place_scratch::<T>(m, n, bs, par, Default::default()),
                        householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, bs, q_cols),
                    ]))?,
                })
            };
            // from `QR_BLOCKED_N` cranax's blocked driver around faer's kernels (`qr_blocked`, `qr_q_chunks`) on the
            // pool instead of faer's parallel QR at any size (a batch of them: one matrix per thread, each in order)
            let blocked = qr_blocking(m, n, bs);
            let par_work = if blocked.is_some() { usize::MAX } else { QR_PAR_WORK };
            let pool = batch == 1 && threads::num_threads() > 1;
            for_batch_par(batch, work, par_work, false, PER_MATRIX, init, |w, b, par| {
                let s = &src[b * m * n..(b + 1) * m * n];
                // SAFETY: matrix b of fresh outputs, written by this call only.
                let (dq, dr) = unsafe { (oq.mat(b, m * q_cols), or.mat(b, q_cols * n)) };
                if k == 0 {
                    identity(dq, m, q_cols);
                    dr.fill(<T as Elem>::zero());
                    return;
                }
                copy_par(par, m * n, |cp| load(s, w.f.as_mut(), cp));
                let done = blocked.is_some_and(|(pw, cols)| run_blocked(pool, |split| qr_blocked(w.f.as_mut(), w.coeff.as_mut(), pw, cols, split)));
                if blocked.is_some() && !done {
                    // a column faer's QR would skip as dependent: faer's own QR and Q, on one thread (`par` is
                    // sequential here: bits of the input alone, not of the thread count)
                    load(s, w.f.as_mut(), Par::Seq);
                    qrf::qr_in_place(w.f.as_mut(), w.coeff.as_mut(), Par::Seq, w.mem.stack(), Default::default());
                } else if blocked.is_none() {
                    qrf::qr_in_place(w.f.as_mut(), w.coeff.as_mut(), par, w.mem.stack(), Default::default());
                }
                // R: the upper triangle of the first min(m, n) rows, zeros elsewhere (a tiled copy: `f` is
                // column-major, `dr` row-major)
                let rows = q_cols.min(k);
                dr[rows * n..].fill(<T as Elem>::zero());
                copy_par(par, rows * n, |cp| store(w.f.as_ref().get(..rows, ..), &mut dr[..rows * n], cp));
                for i in 1..rows {
                    dr[i * n..i * n + i].fill(<T as Elem>::zero());
                }
                // Q built straight in the row-major output (faer applies the reflectors through any strides):
                // no column-major workspace and no transposing copy out, which at n = 1000 took as long as
                // the difference (faer_alone_vs_run: 17.8 vs 20.3 ms f64, 9.1 vs 12.1 ms f32, in the pool)
                let mut q = MatMut::from_row_major_slice_mut(dq, m, q_cols);
                if let Some((_, cols)) = blocked.filter(|_| done) {
                    let (f, coeff) = (w.f.as_ref().get(.., ..k), w.coeff.as_ref());
                    run_blocked(pool, |split| qr_q_chunks(f, coeff, q, cols, split));
                    return;
                }
                q.fill(<T as Elem>::zero());
                (0..q_cols).for_each(|i| q[(i, i)] = T::from_f64(1.0));
                householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
                    w.f.as_ref().get(.., ..k),
                    w.coeff.as_ref(),
                    Conj::No,
                    q.as_mut(),
                    par,
                    w.mem.stack(),
                );
            })?;
        }
        LinalgOp::Eigh { .. } | LinalgOp::EighFolded { .. } => {
            let (lower, sym, vectors) = match op {
                LinalgOp::EighFolded { lower, symmetrize, vectors } => (*lower, *symmetrize, *vectors),
                LinalgOp::Eigh { lower, .. } => (*lower, false, true),
                _ => unreachable!(),
            };
            // `(a + a^T) / 2` computed in the copy as `* 0.5` rounds as JAX's `div` by 2 (see cholesky's)
            let from = match (sym, lower) {
                (true, _) => Tri::Sym(T::from_f64(0.5)),
                (false, true) => Tri::Lower,
                (false, false) => Tri::Upper,
            };
            let ov = vectors.then(|| Out::<T>::of(&res[0]));
            let ow = Out::<T>::of(&res[vectors as usize]);
            let init = |par| EighWork::new(n, vectors, par);
            for_batch_par(batch, work, DECOMP_PAR_WORK, false, PER_MATRIX, init, |ws, b, par| {
                let s = &src[b * n * n..(b + 1) * n * n];
                // SAFETY: matrix b of fresh outputs, written by this call only.
                let (dv, dw) = unsafe { (ov.as_ref().map(|o| o.mat(b, n * n)), ow.mat(b, n)) };
                if n == 0 {
                    return;
                }
                if ws.run(s, from, par) {
                    if let Some(dv) = dv {
                        store(ws.u.as_ref(), dv, par);
                    }
                    for (i, x) in dw.iter_mut().enumerate() {
                        *x = ws.w[i];
                    }
                } else {
                    dv.map(|d| d.fill(nan));
                    dw.fill(nan);
                }
            })?;
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
            let (uu, vv) = if *compute_uv { ((m, uc), (n, vr)) } else { ((0, 0), (0, 0)) };
            let init = |par| {
                Ok(DecompWork {
                    u: PoolMat::<T>::new(uu.0, uu.1)?,
                    v: PoolMat::<T>::new(vv.0, vv.1)?,
                    w: faer::diag::Diag::<T>::zeros(k),
                    mem: PoolStack::new(svd::svd_scratch::<T>(m, n, mode, mode, par, svd_params::<T>(k).into()))?,
                })
            };
            for_batch_par(batch, work, DECOMP_PAR_WORK, false, PER_MATRIX, init, |ws, b, par| {
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
                let DecompWork { u, v, w, mem } = ws;
                let (um, vm) = if *compute_uv {
                    u.as_mut().fill(<T as Elem>::zero());
                    v.as_mut().fill(<T as Elem>::zero());
                    (Some(u.as_mut()), Some(v.as_mut()))
                } else {
                    (None, None)
                };
                let ok = svd::svd(view, w.as_mut(), um, vm, par, mem.stack(), svd_params::<T>(k).into()).is_ok();
                for (i, x) in ds.iter_mut().enumerate() {
                    *x = if ok { w[i] } else { nan };
                }
                if let (Some(du), Some(dvt)) = (du, dvt) {
                    if ok {
                        store(u.as_ref(), du, par);
                        store(v.as_ref().transpose(), dvt, par);
                    } else {
                        du.fill(nan);
                        dvt.fill(nan);
                    }
                }
            })?;
        }
        LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal, .. } => {
            // (conjugate_a is the identity on real matrices.)
            let bsrc = unsafe { elems::<T>(inputs[1]) };
            let (_, r, c) = dims(&inputs[1].aval);
            let am = m;
            let ob = Out::<T>::of(&res[0]);
            let work = am * am * if *left_side { c } else { r };
            let par_work = par_work_from::<T>(ParFamily::Trsm, threads::num_threads());
            for_batch_ws(batch, work, PER_MATRIX, par_work, |_| Ok(()), |_, bi, par| {
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
                // independent blocks of right-hand columns (`rhs_block_count`), each solved on one thread
                let nb = rhs_block_count(rhs.ncols(), false);
                let par = if nb > 1 { Par::Seq } else { par };
                rhs_blocks(rhs, nb, nb > 1 && rhs_parallel(work), |_, rhs| match (low, *unit_diagonal) {
                    (true, false) => ts::solve_lower_triangular_in_place(tri, rhs, par),
                    (true, true) => ts::solve_unit_lower_triangular_in_place(tri, rhs, par),
                    (false, false) => ts::solve_upper_triangular_in_place(tri, rhs, par),
                    (false, true) => ts::solve_unit_upper_triangular_in_place(tri, rhs, par),
                });
            })?;
        }
        LinalgOp::LuPivotsToPermutation { .. } => unreachable!("handled in run"),
        LinalgOp::Eig { .. } | LinalgOp::Hessenberg | LinalgOp::Tridiagonal | LinalgOp::Complex(_) => {
            unreachable!("run_c runs these")
        }
    }
    Ok(res)
}

// ----------------------------------------------------------------------------------------------- complex

/// Complex element types: built from and split into their real parts (complex buffers travel as pairs).
trait Cplx: faer::traits::ComplexField<Real = Self::R> + Copy + Send + Sync {
    type R: Real;
    fn new(re: Self::R, im: Self::R) -> Self;
    fn parts(self) -> (Self::R, Self::R);
    /// faer's general eigendecomposition (`evd_cplx`, typed for `Complex<R>`); false when it failed.
    fn eig(
        a: MatRef<'_, Self>,
        w: faer::diag::DiagMut<'_, Self>,
        vl: Option<MatMut<'_, Self>>,
        vr: Option<MatMut<'_, Self>>,
        par: Par,
        stack: &mut MemStack,
    ) -> bool;
}

macro_rules! cplx_impl {
    ($c:ty, $r:ty) => {
        impl Cplx for $c {
            type R = $r;
            fn new(re: $r, im: $r) -> Self {
                <$c>::new(re, im)
            }
            fn parts(self) -> ($r, $r) {
                (self.re, self.im)
            }
            fn eig(
                a: MatRef<'_, Self>,
                w: faer::diag::DiagMut<'_, Self>,
                vl: Option<MatMut<'_, Self>>,
                vr: Option<MatMut<'_, Self>>,
                par: Par,
                stack: &mut MemStack,
            ) -> bool {
                evd::evd_cplx::<$r>(a, w, vl, vr, par, stack, Default::default()).is_ok()
            }
        }
    };
}
cplx_impl!(c32, f32);
cplx_impl!(c64, f64);
/// One result of a complex-path op: complex (two real outputs), real or int32; `len` elements per matrix.
enum Slot<R> {
    C(Out<R>, Out<R>, usize),
    R(Out<R>, usize),
    I(Out<i32>, usize),
}

impl<R: Real> Slot<R> {
    /// SAFETY (all writers): matrix `b` of a fresh output, written by one thread only.
    unsafe fn put_mat<T: Cplx<R = R>>(&self, b: usize, m: MatRef<'_, T>) {
        let c = m.ncols();
        match self {
            Slot::C(re, im, len) => {
                let (dr, di) = (re.mat(b, *len), im.mat(b, *len));
                for i in 0..m.nrows() {
                    for j in 0..c {
                        (dr[i * c + j], di[i * c + j]) = m[(i, j)].parts();
                    }
                }
            }
            Slot::R(o, len) => {
                // a real result computed in complex arithmetic (hessenberg, tridiagonal): its real part
                let d = o.mat(b, *len);
                for i in 0..m.nrows() {
                    for j in 0..c {
                        d[i * c + j] = m[(i, j)].parts().0;
                    }
                }
            }
            Slot::I(..) => unreachable!("an int32 result written as floats"),
        }
    }
    unsafe fn put_vec<T: Cplx<R = R>>(&self, b: usize, v: &[T]) {
        match self {
            Slot::C(re, im, len) => {
                let (dr, di) = (re.mat(b, *len), im.mat(b, *len));
                for (i, z) in v.iter().enumerate() {
                    (dr[i], di[i]) = z.parts();
                }
            }
            Slot::R(o, len) => {
                let d = o.mat(b, *len);
                for (i, z) in v.iter().enumerate() {
                    d[i] = z.parts().0;
                }
            }
            Slot::I(..) => unreachable!("an int32 result written as floats"),
        }
    }
    unsafe fn put_ints(&self, b: usize, v: &[i32]) {
        if let Slot::I(o, len) = self {
            o.mat(b, *len).copy_from_slice(v);
        }
    }
    unsafe fn fill_nan(&self, b: usize) {
        let nan = R::from_f64(f64::NAN);
        match self {
            Slot::C(re, im, len) => {
                re.mat(b, *len).fill(nan);
                im.mat(b, *len).fill(nan);
            }
            Slot::R(o, len) => o.mat(b, *len).fill(nan),
            Slot::I(..) => {}
        }
    }
}

/// Operand `i` (its parts when `complex`, else real) of a complex-path op.
struct Operand<'a, R> {
    re: &'a [R],
    im: Option<&'a [R]>,
    rows: usize,
    cols: usize,
}

impl<R: Real> Operand<'_, R> {
    fn mat<T: Cplx<R = R>>(&self, b: usize) -> Mat<T> {
        let (r, c) = (self.rows, self.cols);
        let off = b * r * c;
        let zero = <R as Elem>::zero();
        Mat::from_fn(r, c, |i, j| T::new(self.re[off + i * c + j], self.im.map_or(zero, |im| im[off + i * c + j])))
    }
}

/// Runs `op` on complex matrices: complex operands (`complex`) or real ones made complex (eig,
/// hessenberg and tridiagonal take this path for every dtype: their results are complex, or packed
/// alike). Results a real op gives as reals are written as the real parts.
fn run_c<T: Cplx>(op: &LinalgOp, complex: bool, inputs: &[&Buffer], outs: &[Aval]) -> Result<Vec<Buffer>> {
    type R<T> = <T as Cplx>::R;
    let res: Vec<Buffer> = outs.iter().map(uninit).collect::<Result<_>>()?;
    let per = if complex { 2 } else { 1 };
    let ops: Vec<Operand<'_, R<T>>> = inputs
        .chunks(per)
        .map(|p| {
            let (_, r, c) = dims(&p[0].aval);
            // SAFETY: the element type matches the dtype (the shape rule checked it).
            unsafe { Operand { re: elems::<R<T>>(p[0]), im: p.get(1).map(|b| elems::<R<T>>(b)), rows: r, cols: c } }
        })
        .collect();
    let (batch, m, n) = dims(&inputs[0].aval);
    let k = m.min(n);
    let n_logical = op.n_results();
    let mask = op.complex_results(complex, n_logical);
    let mut slots = Vec::with_capacity(n_logical);
    let mut i = 0;
    for &c in &mask {
        let len = numel(&outs[i].shape) / batch.max(1);
        if c {
            slots.push(Slot::C(Out::of(&res[i]), Out::of(&res[i + 1]), len));
            i += 2;
        } else if outs[i].dtype == DType::I32 {
            slots.push(Slot::I(Out::of(&res[i]), len));
            i += 1;
        } else {
            slots.push(Slot::R(Out::of(&res[i]), len));
            i += 1;
        }
    }
    let work = 4 * m * n * k.max(1);
    // Sequential within a matrix: faer's parallel tasks would run on pool threads that flush denormals,
    // where its complex reciprocal returns 0 (`KeepDenormals`); a batch is still spread over threads.
    let par = Par::Seq;
    let zero = T::new(<R<T> as Elem>::zero(), <R<T> as Elem>::zero());
    let one = T::new(<R<T>>::from_f64(1.0), <R<T> as Elem>::zero());
    let eye = |r: usize, c: usize| Mat::<T>::from_fn(r, c, |i, j| if i == j { one } else { zero });
    for_batch(batch, work, |b, _| unsafe {
        // IEEE subnormals on whichever thread runs this matrix (faer's complex reciprocal needs them)
        let _ieee = KeepDenormals::new();
        // SAFETY (every put below): matrix b of fresh outputs, written by this call only.
        match op {
            LinalgOp::Cholesky => {
                let mut f = ops[0].mat::<T>(b);
                let mut mem = stack_for(llt::factor::cholesky_in_place_scratch::<T>(n, par, Default::default()));
                let ok = llt::factor::cholesky_in_place(f.as_mut(), Default::default(), par, MemStack::new(&mut mem), Default::default())
                    .is_ok();
                if ok {
                    // a real diagonal, as LAPACK's potrf returns it: faer keeps the imaginary part that the
                    // complex updates leave on the diagonal (a few ulp of it, scaled), where potrf takes the
                    // real part before the square root and stores a real one
                    let real = |z: T| T::new(z.parts().0, <R<T> as Elem>::zero());
                    let l = Mat::from_fn(n, n, |i, j| match j.cmp(&i) {
                        std::cmp::Ordering::Less => f[(i, j)],
                        std::cmp::Ordering::Equal => real(f[(i, j)]),
                        std::cmp::Ordering::Greater => zero,
                    });
                    slots[0].put_mat(b, l.as_ref());
                } else {
                    slots[0].fill_nan(b);
                }
            }
            LinalgOp::Lu => {
                let mut f = ops[0].mat::<T>(b);
                let (mut fwd, mut inv) = (vec![0usize; m], vec![0usize; m]);
                if k > 0 {
                    let mut mem = stack_for(plu::lu_in_place_scratch::<usize, T>(m, n, par, Default::default()));
                    plu::lu_in_place(f.as_mut(), &mut fwd, &mut inv, par, MemStack::new(&mut mem), Default::default());
                } else {
                    fwd.iter_mut().enumerate().for_each(|(i, p)| *p = i);
                }
                slots[0].put_mat(b, f.as_ref());
                let (pv, pm) = pivots_of(&fwd, k);
                slots[1].put_ints(b, &pv);
                slots[2].put_ints(b, &pm);
            }
            LinalgOp::Qr { full_matrices } => {
                let q_cols = if *full_matrices { m } else { k };
                if k == 0 {
                    slots[0].put_mat(b, eye(m, q_cols).as_ref());
                    slots[1].put_mat(b, Mat::<T>::from_fn(q_cols, n, |_, _| zero).as_ref());
                    return;
                }
                let mut f = ops[0].mat::<T>(b);
                let bs = qrf::recommended_block_size::<T>(m, n);
                let mut coeff = Mat::<T>::from_fn(bs, k, |_, _| zero);
                let mut mem = stack_for(qrf::qr_in_place_scratch::<T>(m, n, bs, par, Default::default()));
                qrf::qr_in_place(f.as_mut(), coeff.as_mut(), par, MemStack::new(&mut mem), Default::default());
                let r = Mat::from_fn(q_cols, n, |i, j| if j >= i { f[(i, j)] } else { zero });
                let mut q = eye(m, q_cols);
                let mut mem =
                    stack_for(householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, bs, q_cols));
                householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
                    f.get(.., ..k),
                    coeff.as_ref(),
                    Conj::No,
                    q.as_mut(),
                    par,
                    MemStack::new(&mut mem),
                );
                slots[0].put_mat(b, q.as_ref());
                slots[1].put_mat(b, r.as_ref());
            }
            LinalgOp::Eigh { lower, .. } => {
                if n == 0 {
                    return;
                }
                let a = ops[0].mat::<T>(b);
                // faer reads the lower triangle; the Hermitian matrix of a's upper one has a^H's lower one.
                let a = if *lower { a } else { adjoint(a.as_ref()) };
                let view = a.as_ref();
                let mut u = Mat::<T>::from_fn(n, n, |_, _| zero);
                let mut w = faer::diag::Diag::<T>::zeros(n);
                let mut mem =
                    stack_for(evd::self_adjoint_evd_scratch::<T>(n, evd::ComputeEigenvectors::Yes, par, Default::default()));
                let ok = evd::self_adjoint_evd(view, w.as_mut(), Some(u.as_mut()), par, MemStack::new(&mut mem), Default::default())
                    .is_ok();
                if ok {
                    slots[0].put_mat(b, u.as_ref());
                    let wv: Vec<T> = (0..n).map(|i| w[i]).collect();
                    slots[1].put_vec(b, &wv);
                } else {
                    slots[0].fill_nan(b);
                    slots[1].fill_nan(b);
                }
            }
            LinalgOp::Svd { full_matrices, compute_uv } => {
                let (uc, vr) = if *full_matrices { (m, n) } else { (k, k) };
                if k == 0 {
                    if *compute_uv {
                        slots[1].put_mat(b, eye(m, uc).as_ref());
                        slots[2].put_mat(b, eye(vr, n).as_ref());
                    }
                    return;
                }
                let mode = match (*compute_uv, *full_matrices) {
                    (false, _) => svd::ComputeSvdVectors::No,
                    (true, true) => svd::ComputeSvdVectors::Full,
                    (true, false) => svd::ComputeSvdVectors::Thin,
                };
                let a = ops[0].mat::<T>(b);
                let mut w = faer::diag::Diag::<T>::zeros(k);
                let (mut u, mut v) = if *compute_uv {
                    (Some(Mat::<T>::from_fn(m, uc, |_, _| zero)), Some(Mat::<T>::from_fn(n, vr, |_, _| zero)))
                } else {
                    (None, None)
                };
                let mut mem = stack_for(svd::svd_scratch::<T>(m, n, mode, mode, par, Default::default()));
                let ok = svd::svd(
                    a.as_ref(),
                    w.as_mut(),
                    u.as_mut().map(|u| u.as_mut()),
                    v.as_mut().map(|v| v.as_mut()),
                    par,
                    MemStack::new(&mut mem),
                    Default::default(),
                )
                .is_ok();
                if !ok {
                    slots.iter().for_each(|s| s.fill_nan(b));
                    return;
                }
                let wv: Vec<T> = (0..k).map(|i| w[i]).collect();
                slots[0].put_vec(b, &wv);
                if let (Some(u), Some(v)) = (u, v) {
                    slots[1].put_mat(b, u.as_ref());
                    slots[2].put_mat(b, adjoint(v.as_ref()).as_ref());
                }
            }
            LinalgOp::TriangularSolve { left_side, lower, transpose_a, conjugate_a, unit_diagonal } => {
                let a = ops[0].mat::<T>(b);
                let mut x = ops[1].mat::<T>(b);
                let (r, c) = (x.nrows(), x.ncols());
                if r > 0 && c > 0 {
                    // op(a) x = b; x op(a) = b is op(a)^T x^T = b^T.
                    let flip = *transpose_a != !*left_side;
                    let tri = if flip { a.as_ref().transpose() } else { a.as_ref() };
                    let tri = if *conjugate_a { adjoint(tri.transpose()) } else { tri.to_owned() };
                    let low = *lower != flip;
                    let rhs = if *left_side { x.as_mut() } else { x.as_mut().transpose_mut() };
                    match (low, *unit_diagonal) {
                        (true, false) => ts::solve_lower_triangular_in_place(tri.as_ref(), rhs, par),
                        (true, true) => ts::solve_unit_lower_triangular_in_place(tri.as_ref(), rhs, par),
                        (false, false) => ts::solve_upper_triangular_in_place(tri.as_ref(), rhs, par),
                        (false, true) => ts::solve_unit_upper_triangular_in_place(tri.as_ref(), rhs, par),
                    }
                }
                slots[0].put_mat(b, x.as_ref());
            }
            LinalgOp::Eig { compute_left, compute_right } => {
                if n == 0 {
                    return;
                }
                let a = ops[0].mat::<T>(b);
                let mut w = faer::diag::Diag::<T>::zeros(n);
                // the left eigenvectors are the rows of vr^-1 (faer's own left ones are unreliable): the right
                // ones are computed whenever either is asked for
                let want_v = *compute_left || *compute_right;
                let mut vr = want_v.then(|| Mat::<T>::from_fn(n, n, |_, _| zero));
                let yes = |f: bool| if f { evd::ComputeEigenvectors::Yes } else { evd::ComputeEigenvectors::No };
                let mut mem = stack_for(evd::evd_scratch::<T>(n, evd::ComputeEigenvectors::No, yes(want_v), par, Default::default()));
                let ok = T::eig(a.as_ref(), w.as_mut(), None, vr.as_mut().map(|v| v.as_mut()), par, MemStack::new(&mut mem));
                if !ok {
                    slots.iter().for_each(|s| s.fill_nan(b));
                    return;
                }
                let wv: Vec<T> = (0..n).map(|i| w[i]).collect();
                slots[0].put_vec(b, &wv);
                // faer now and then returns an inaccurate eigenvector; those are refined by inverse iteration
                // (left ones as right eigenvectors of a^H, for conj(w))
                let vr = vr.map(|v| refine_eigenvectors(a.as_ref(), &wv, false, v));
                let vl = if *compute_left {
                    vr.as_ref().map(|v| {
                        use faer::linalg::solvers::Solve;
                        adjoint(v.partial_piv_lu().solve(&eye(n, n)).as_ref())
                    })
                } else {
                    None
                };
                let vr = if *compute_right { vr } else { None };
                let mut s = 1;
                for v in [vl, vr].into_iter().flatten() {
                    let v = normalize_columns(v);
                    slots[s].put_mat(b, v.as_ref());
                    s += 1;
                }
            }
            LinalgOp::Hessenberg | LinalgOp::Tridiagonal => {
                let mut f = ops[0].mat::<T>(b);
                let nm1 = n.saturating_sub(1);
                let mut hh = Mat::<T>::from_fn(1, nm1, |_, _| zero);
                if n > 1 {
                    if matches!(op, LinalgOp::Hessenberg) {
                        let mut mem = stack_for(evd::hessenberg::hessenberg_in_place_scratch::<T>(n, 1, par, Default::default()));
                        evd::hessenberg::hessenberg_in_place(f.as_mut(), hh.as_mut(), par, MemStack::new(&mut mem), Default::default());
                    } else {
                        let mut mem = stack_for(evd::tridiag::tridiag_in_place_scratch::<T>(n, par, Default::default()));
                        evd::tridiag::tridiag_in_place(f.as_mut(), hh.as_mut(), par, MemStack::new(&mut mem), Default::default());
                    }
                }
                // faer's reflectors are I - v v^H / t; LAPACK's I - tau v v^H: tau = 1 / t (0 for none).
                let taus: Vec<T> = (0..nm1)
                    .map(|j| {
                        let tau = 1.0 / <R<T> as Elem>::to_f64(hh[(0, j)].parts().0);
                        if tau.is_finite() {
                            T::new(<R<T> as Elem>::from_f64(tau), <R<T> as Elem>::zero())
                        } else {
                            zero
                        }
                    })
                    .collect();
                slots[0].put_mat(b, f.as_ref());
                if matches!(op, LinalgOp::Hessenberg) {
                    slots[1].put_vec(b, &taus);
                } else {
                    let d: Vec<T> = (0..n).map(|i| f[(i, i)]).collect();
                    let e: Vec<T> = (0..nm1).map(|i| f[(i + 1, i)]).collect();
                    slots[1].put_vec(b, &d);
                    slots[2].put_vec(b, &e);
                    slots[3].put_vec(b, &taus);
                }
            }
            LinalgOp::LuPivotsToPermutation { .. } | LinalgOp::Complex(_) => unreachable!("handled in run"),
            LinalgOp::LuSolve | LinalgOp::CholeskyTril { .. } | LinalgOp::EighFolded { .. } => {
                unreachable!("lu_solve, cholesky_tril and eigh_folded have no complex form (ir::linalg rejects it)")
            }
        }
    })?;
    Ok(res)
}

/// `m^H` as an owned matrix.
fn adjoint<T: Cplx>(m: MatRef<'_, T>) -> Mat<T> {
    Mat::from_fn(m.ncols(), m.nrows(), |i, j| {
        let (x, y) = m[(j, i)].parts();
        T::new(x, -y)
    })
}

/// LAPACK's row interchanges and the resulting order for faer's forward row permutation `fwd`.
fn pivots_of(fwd: &[usize], k: usize) -> (Vec<i32>, Vec<i32>) {
    let m = fwd.len();
    let mut cur: Vec<usize> = (0..m).collect();
    let mut at: Vec<usize> = (0..m).collect();
    let mut pv = vec![0i32; k];
    for i in 0..k {
        let p = at[fwd[i]];
        pv[i] = p as i32;
        let (ri, rp) = (cur[i], cur[p]);
        cur.swap(i, p);
        at[ri] = p;
        at[rp] = i;
    }
    (pv, cur.iter().map(|&x| x as i32).collect())
}

/// Columns `v[:, j]` whose residual `|a v - w_j v|` is large, replaced by two steps of inverse iteration with
/// `a - w_j I` (shifted slightly off the eigenvalue, so the LU is not exactly singular); `conj_w` uses
/// `conj(w_j)`.
fn refine_eigenvectors<T: Cplx>(a: MatRef<'_, T>, w: &[T], conj_w: bool, v: Mat<T>) -> Mat<T> {
    let mut v = v;
    let n = a.nrows();
    let f = |z: T| {
        let (x, y) = z.parts();
        (x.to_f64(), y.to_f64())
    };
    let mut norm_a = 0.0f64;
    for i in 0..n {
        for j in 0..n {
            let (x, y) = f(a[(i, j)]);
            norm_a += x * x + y * y;
        }
    }
    let norm_a = norm_a.sqrt().max(f64::MIN_POSITIVE);
    let eps = <T::R as Elem>::to_f64(<T::R as faer::traits::RealField>::epsilon_impl());
    let tol = 1e3 * eps * norm_a * n as f64;
    for j in 0..n {
        let (wr, wi) = f(w[j]);
        let wi = if conj_w { -wi } else { wi };
        let mut res = 0.0f64;
        for i in 0..n {
            let (mut sr, mut si) = (0.0, 0.0);
            for k in 0..n {
                let (ar, ai) = f(a[(i, k)]);
                let (vr, vi) = f(v[(k, j)]);
                sr += ar * vr - ai * vi;
                si += ar * vi + ai * vr;
            }
            let (vr, vi) = f(v[(i, j)]);
            let (er, ei) = (sr - (wr * vr - wi * vi), si - (wr * vi + wi * vr));
            res += er * er + ei * ei;
        }
        if res.sqrt() <= tol {
            continue;
        }
        let shift = (wr + 10.0 * eps * norm_a, wi);
        let m = Mat::<T>::from_fn(n, n, |i, k| {
            let (x, y) = f(a[(i, k)]);
            let (x, y) = if i == k { (x - shift.0, y - shift.1) } else { (x, y) };
            T::new(<T::R as Elem>::from_f64(x), <T::R as Elem>::from_f64(y))
        });
        let lu = m.partial_piv_lu();
        let one = T::new(<T::R as Elem>::from_f64(1.0), <T::R as Elem>::zero());
        let mut x = Mat::<T>::from_fn(n, 1, |_, _| one);
        for _ in 0..2 {
            use faer::linalg::solvers::Solve;
            x = lu.solve(&x);
            let nrm = (0..n).map(|i| {
                let (p, q) = f(x[(i, 0)]);
                p * p + q * q
            });
            let nrm = nrm.sum::<f64>().sqrt();
            if !(nrm.is_finite() && nrm > 0.0) {
                break;
            }
            x = Mat::from_fn(n, 1, |i, _| {
                let (p, q) = f(x[(i, 0)]);
                T::new(<T::R as Elem>::from_f64(p / nrm), <T::R as Elem>::from_f64(q / nrm))
            });
        }
        for i in 0..n {
            v[(i, j)] = x[(i, 0)];
        }
    }
    v
}

/// Each column scaled to unit 2-norm with its largest component real and positive (LAPACK geev's
/// normalization).
fn normalize_columns<T: Cplx>(mut v: Mat<T>) -> Mat<T> {
    for j in 0..v.ncols() {
        let (mut best, mut at, mut norm2) = (-1.0f64, 0usize, 0.0f64);
        for i in 0..v.nrows() {
            let (x, y) = v[(i, j)].parts();
            let (x, y) = (x.to_f64(), y.to_f64());
            let a = x * x + y * y;
            norm2 += a;
            if a > best {
                best = a;
                at = i;
            }
        }
        if norm2 <= 0.0 || !norm2.is_finite() {
            continue;
        }
        let (x, y) = v[(at, j)].parts();
        let (x, y) = (x.to_f64(), y.to_f64());
        let r = best.sqrt();
        // multiply by conj(v_at) / |v_at| / norm
        let s = norm2.sqrt();
        let (cr, ci) = (x / r / s, -y / r / s);
        for i in 0..v.nrows() {
            let (a, bb) = v[(i, j)].parts();
            let (a, bb) = (a.to_f64(), bb.to_f64());
            v[(i, j)] = T::new(<T::R>::from_f64(a * cr - bb * ci), <T::R>::from_f64(a * ci + bb * cr));
        }
        let (x, _) = v[(at, j)].parts();
        v[(at, j)] = T::new(x, <T::R as Elem>::zero());
    }
    v
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Relaxed;

    fn f64buf(shape: &[usize], data: &[f64]) -> Buffer {
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        Buffer::from_bytes(&Aval::new(DType::F64, shape.to_vec()), &bytes).unwrap()
    }

    /// A matrix from `par_n`'s size gets faer's parallelism (a Cholesky: `cholesky_blocked`'s) with all of cranax's pool: a count, not a
    /// timing, so it holds on a loaded machine.
    #[test]
    fn big_matrices_use_the_pools_threads() {
        // from par_n's size: smaller factorizations run on one thread on purpose
        let threads = crate::backend::cpu::threads::num_threads();
        let n = par_n(ParFamily::Cholesky, true, threads);
        assert!(n * n * n == par_work_from::<f64>(ParFamily::Cholesky, threads) && (700..=2400).contains(&n));
        // a symmetric, strictly diagonally dominant (so SPD) matrix: n I plus entries in [-0.5, 0.5)
        let off = |i: usize, j: usize| (((i.min(j) * 7919 + i.max(j) * 104729) % 1009) as f64) / 1009.0 - 0.5;
        let a: Vec<f64> = (0..n * n).map(|ij| if ij / n == ij % n { n as f64 } else { off(ij / n, ij % n) }).collect();
        let buf = f64buf(&[n, n], &a);
        let out = Aval::new(DType::F64, vec![n, n]);
        IGNORE_CONTENTION.store(true, Relaxed);
        let before = PAR_MATRICES.load(Relaxed);
        let l = run(&LinalgOp::Cholesky, &[&buf], std::slice::from_ref(&out)).unwrap();
        if threads > 1 {
            assert!(PAR_MATRICES.load(Relaxed) > before, "a {n}x{n} cholesky ran without faer's parallelism");
            assert_eq!(PAR_THREADS.load(Relaxed), threads, "faer got fewer threads than cranax's pool has");
        }
        // and the factor is right: L L^T = a (on a sample of entries), L lower triangular
        let l: Vec<f64> = l[0].as_bytes().chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
        for t in 0..400 {
            let (i, j) = ((t * 7919) % n, (t * 104729 + t / 7) % n);
            if j > i {
                assert_eq!(l[i * n + j], 0.0);
            }
            let s: f64 = (0..n).map(|k| l[i * n + k] * l[j * n + k]).sum();
            assert!((s - a[i * n + j]).abs() < 1e-9 * n as f64, "({i}, {j}): {s} vs {}", a[i * n + j]);
        }
    }

    /// QR with the 16-column blocks (m * n in 48²..128²) and on both sides of `QR_PAR_WORK`: Q R = a and
    /// Q^T Q = I (reduced), and the big one split over the pool.
    #[test]
    fn qr_block_sizes_and_split() {
        for (m, n) in [(100, 100), (60, 40), (40, 60), (200, 200)] {
            let a: Vec<f64> = (0..m * n).map(|i| ((i * 7919 % 1009) as f64) / 1009.0 - 0.5).collect();
            let buf = f64buf(&[m, n], &a);
            let k = m.min(n);
            let outs = [Aval::new(DType::F64, vec![m, k]), Aval::new(DType::F64, vec![k, n])];
            IGNORE_CONTENTION.store(true, Relaxed);
            let before = PAR_MATRICES.load(Relaxed);
            let r = run(&LinalgOp::Qr { full_matrices: false }, &[&buf], &outs).unwrap();
            if m * n * k >= QR_PAR_WORK && crate::backend::cpu::threads::num_threads() > 1 {
                assert!(PAR_MATRICES.load(Relaxed) > before, "a {m}x{n} qr ran without faer's parallelism");
            }
            let v = |b: &Buffer| -> Vec<f64> { b.as_bytes().chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect() };
            let (q, rr) = (v(&r[0]), v(&r[1]));
            for i in 0..m {
                for j in 0..n {
                    let s: f64 = (0..k).map(|l| q[i * k + l] * rr[l * n + j]).sum();
                    assert!((s - a[i * n + j]).abs() < 1e-12, "{m}x{n} QR ({i}, {j}): {s} vs {}", a[i * n + j]);
                }
            }
            for i in 0..k {
                for j in 0..k {
                    let s: f64 = (0..m).map(|l| q[l * k + i] * q[l * k + j]).sum();
                    assert!((s - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12, "{m}x{n} Q^T Q ({i}, {j}) = {s}");
                }
            }
        }
    }

    /// Not a test: per-call time distributions (min / median / p90 of `LINALG_REPS` calls, default 20, and
    /// the median of the calls during which no task waited for a CPU, by `/proc/pressure/cpu`) of faer alone
    /// (column-major input, its own scratch: sequential, and in cranax's pool) against `run` (cranax's whole step: copies between layouts,
    /// workspace, outputs) at n = `LINALG_N` (default 1000); `LINALG_OPS` filters the labels. Prints only:
    /// `cargo test --release --features gpu --lib linalg_faer_alone -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn linalg_faer_alone_vs_run() {
        fn psi() -> u64 {
            let s = std::fs::read_to_string("/proc/pressure/cpu").unwrap_or_default();
            s.lines().next().and_then(|l| l.rsplit("total=").next()).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
        }
        fn time(label: &str, mut f: impl FnMut()) {
            let reps: usize = std::env::var("LINALG_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(20);
            if let Ok(ops) = std::env::var("LINALG_OPS") {
                if !ops.split(',').any(|o| label.contains(o)) {
                    return;
                }
            }
            f();
            f();
            let (mut ts, mut quiet) = (vec![], vec![]);
            for _ in 0..reps {
                let (p, t) = (psi(), std::time::Instant::now());
                f();
                let dt = t.elapsed().as_secs_f64() * 1e3;
                ts.push(dt);
                if ((psi() - p) as f64) < 0.02 * dt * 1e3 {
                    quiet.push(dt);
                }
            }
            let q = |v: &mut Vec<f64>, f: f64| {
                v.sort_by(|a, b| a.partial_cmp(b).unwrap());
                if v.is_empty() { f64::NAN } else { v[((v.len() - 1) as f64 * f).round() as usize] }
            };
            eprintln!(
                "{label:<30} min {:7.2}  med {:7.2}  p90 {:7.2}  quiet {:2}/{reps} med {:7.2} ms",
                q(&mut ts, 0.0), q(&mut ts, 0.5), q(&mut ts, 0.9), quiet.len(), q(&mut quiet, 0.5)
            );
        }
        fn go<T: Real>(name: &str) {
            let n: usize = std::env::var("LINALG_N").ok().and_then(|r| r.parse().ok()).unwrap_or(1000);
            let as_bytes = |v: &[T]| -> Vec<u8> { v.iter().flat_map(|x| unsafe { std::slice::from_raw_parts(x as *const T as *const u8, size_of::<T>()) }.to_vec()).collect() };
            let a: Vec<T> = (0..n * n)
                .map(|ij| {
                    let (i, j) = (ij / n, ij % n);
                    let (i, j) = (i.min(j), i.max(j)); // symmetric (for eigh), diagonally dominant (for cholesky)
                    T::from_f64(((i * 7919 + j * 104729) % 1009) as f64 / 1009.0 - 0.5 + if i == j { n as f64 } else { 0.0 })
                })
                .collect();
            let dt = if size_of::<T>() == 4 { DType::F32 } else { DType::F64 };
            let sq = Aval::new(dt, vec![n, n]);
            let buf = Buffer::from_bytes(&sq, &as_bytes(&a)).unwrap();
            let eye: Vec<T> = (0..n * n).map(|ij| T::from_f64(if ij / n == ij % n { 1.0 } else { 0.0 })).collect();
            let eye = Buffer::from_bytes(&sq, &as_bytes(&eye)).unwrap();
            let rhs: Vec<T> = (0..n).map(|i| T::from_f64((i % 7) as f64 - 3.0)).collect();
            let rhs = Buffer::from_bytes(&Aval::new(dt, vec![n, 1]), &as_bytes(&rhs)).unwrap();
            let mut cm = Mat::<T>::zeros(n, n);
            load(&a, cm.as_mut(), Par::Seq);
            // how faer runs: on this thread, and in cranax's pool
            let modes: [(&str, Par); 2] = [("seq", Par::Seq), ("pool", Par::rayon(0))];
            let within = |par: Par, f: &mut (dyn FnMut(Par) + Send)| crate::backend::cpu::threads::parallel(|_| f(par));
            let mut f = cm.clone();
            let mut g = Mat::<T>::zeros(n, n);
            let mut x = Mat::<T>::zeros(n, 1);
            let (mut fwd, mut inv) = (vec![0usize; n], vec![0usize; n]);
            time(&format!("{name} copy cm"), || f.copy_from(&cm));
            time(&format!("{name} alloc Mat::zeros"), || drop(std::hint::black_box(Mat::<T>::zeros(n, n))));
            time(&format!("{name} alloc PoolMat"), || drop(std::hint::black_box(PoolMat::<T>::new(n, n).unwrap())));
            time(&format!("{name} alloc uninit+fill"), || {
                let o = uninit(&sq).unwrap();
                unsafe { elems_mut::<T>(&o) }.fill(<T as Elem>::zero());
            });
            for (pn, par) in modes {
                let mut mem = stack_for(llt::factor::cholesky_in_place_scratch::<T>(n, par, Default::default()));
                time(&format!("{name} faer chol {pn}"), || within(par, &mut |par| {
                    f.copy_from(&cm);
                    llt::factor::cholesky_in_place(f.as_mut(), Default::default(), par, MemStack::new(&mut mem), Default::default()).unwrap();
                }));
                let mut mem = stack_for(plu::lu_in_place_scratch::<usize, T>(n, n, par, Default::default()).or(plu_inverse::inverse_scratch::<usize, T>(n, par)));
                time(&format!("{name} faer lu+trsv {pn}"), || within(par, &mut |par| {
                    f.copy_from(&cm);
                    plu::lu_in_place(f.as_mut(), &mut fwd, &mut inv, par, MemStack::new(&mut mem), Default::default());
                    let ft = f.transpose();
                    ts::solve_lower_triangular_in_place(ft, x.as_mut(), par);
                    ts::solve_unit_upper_triangular_in_place(ft, x.as_mut(), par);
                }));
                time(&format!("{name} faer lu+inverse {pn}"), || within(par, &mut |par| {
                    f.copy_from(&cm);
                    let (_, p) = plu::lu_in_place(f.as_mut(), &mut fwd, &mut inv, par, MemStack::new(&mut mem), Default::default());
                    plu_inverse::inverse(g.as_mut(), f.as_ref(), f.as_ref(), p, par, MemStack::new(&mut mem));
                }));
                // QR's Q: built in a column-major workspace and copied out (what `run` does), or built straight
                // in the row-major output
                let bs = qr_block_size::<T>(n, n);
                let mut coeff = Mat::<T>::zeros(bs, n);
                let mut mem = stack_for(faer::dyn_stack::StackReq::any_of(&[
                    qrf::qr_in_place_scratch::<T>(n, n, bs, par, Default::default()),
                    householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(n, bs, n),
                ]));
                f.copy_from(&cm);
                qrf::qr_in_place(f.as_mut(), coeff.as_mut(), par, MemStack::new(&mut mem), Default::default());
                let mut dq = vec![<T as Elem>::zero(); n * n];
                for rowmajor in [false, true] {
                    time(&format!("{name} faer qr Q {} {pn}", if rowmajor { "rowmajor" } else { "col+store" }), || within(par, &mut |par| {
                        let mut q = if rowmajor { MatMut::from_row_major_slice_mut(&mut dq, n, n) } else { g.as_mut() };
                        q.fill(<T as Elem>::zero());
                        (0..n).for_each(|i| q[(i, i)] = T::from_f64(1.0));
                        householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
                            f.as_ref(), coeff.as_ref(), Conj::No, q.as_mut(), par, MemStack::new(&mut mem),
                        );
                        if !rowmajor {
                            store(g.as_ref(), &mut dq, par);
                        }
                    }));
                }
                let mut w = faer::diag::Diag::<T>::zeros(n);
                let mut mem = stack_for(evd::self_adjoint_evd_scratch::<T>(n, evd::ComputeEigenvectors::Yes, par, Default::default()));
                time(&format!("{name} faer eigh {pn}"), || within(par, &mut |par| {
                    evd::self_adjoint_evd(cm.as_ref(), w.as_mut(), Some(g.as_mut()), par, MemStack::new(&mut mem), Default::default()).unwrap();
                }));
                for rec in [32, 64, 256] {
                    let params = evd::SelfAdjointEvdParams { recursion_threshold: rec, ..faer::Auto::<T>::auto() };
                    let mut mem = stack_for(evd::self_adjoint_evd_scratch::<T>(n, evd::ComputeEigenvectors::Yes, par, params.into()));
                    time(&format!("{name} faer eigh r{rec} {pn}"), || within(par, &mut |par| {
                        evd::self_adjoint_evd(cm.as_ref(), w.as_mut(), Some(g.as_mut()), par, MemStack::new(&mut mem), params.into()).unwrap();
                    }));
                }
            }
            let vec_out = Aval::new(dt, vec![n, 1]);
            let ops: [(&str, LinalgOp, Vec<Aval>, Option<&Buffer>); 4] = [
                ("chol", LinalgOp::CholeskyTril { symmetrize: true }, vec![sq.clone()], None),
                ("solve", LinalgOp::LuSolve, vec![vec_out], Some(&rhs)),
                ("inv", LinalgOp::LuSolve, vec![sq.clone()], Some(&eye)),
                ("eigh", LinalgOp::Eigh { lower: true, sort_eigenvalues: true }, vec![sq.clone(), Aval::new(dt, vec![n])], None),
            ];
            for (on, op, outs, b) in ops {
                let ins: Vec<&Buffer> = std::iter::once(&buf).chain(b).collect();
                time(&format!("{name} run {on}"), || {
                    run(&op, &ins, &outs).unwrap();
                });
            }
        }
        go::<f64>("f64");
        go::<f32>("f32");
    }

    /// A clock's reading in ms (`clock_gettime` with Linux's ids: 2 the process's CPU time, all threads; 3
    /// this thread's), for the timing runs below.
    #[cfg(target_os = "linux")]
    fn clock_ms(clk: i32) -> f64 {
        #[repr(C)]
        struct Timespec {
            s: i64,
            ns: i64,
        }
        extern "C" {
            fn clock_gettime(clk: i32, tp: *mut Timespec) -> i32;
        }
        let mut t = Timespec { s: 0, ns: 0 };
        // SAFETY: a valid clock id into a valid timespec.
        unsafe { clock_gettime(clk, &mut t) };
        t.s as f64 * 1e3 + t.ns as f64 * 1e-6
    }

    /// `f` once, then `LINALG_REPS` (default `reps`) timed calls: their wall and `clock_ms(clk)` times in ms,
    /// each sorted; None when `LINALG_OPS` (comma-separated) names no part of `label`.
    #[cfg(target_os = "linux")]
    fn timed(label: &str, reps: usize, clk: i32, mut f: impl FnMut()) -> Option<(Vec<f64>, Vec<f64>)> {
        let reps: usize = std::env::var("LINALG_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(reps);
        if let Ok(ops) = std::env::var("LINALG_OPS") {
            if !ops.split(',').any(|o| label.contains(o)) {
                return None;
            }
        }
        f();
        let (mut wall, mut clock): (Vec<f64>, Vec<f64>) = (0..reps)
            .map(|_| {
                let (t, c) = (std::time::Instant::now(), clock_ms(clk));
                f();
                (t.elapsed().as_secs_f64() * 1e3, clock_ms(clk) - c)
            })
            .unzip();
        wall.sort_by(|a, b| a.partial_cmp(b).unwrap());
        clock.sort_by(|a, b| a.partial_cmp(b).unwrap());
        Some((wall, clock))
    }

    /// Not a test: eigh's three steps (tridiagonalization, tridiagonal eigensolver, back-transformation
    /// `u = Q u`) one by one and whole, sequential and in cranax's pool, with faer's parameters varied
    /// (wall ms: min / median of `LINALG_REPS`, default 15), on the row-major n×n matrix in the raw file
    /// `LINALG_FILE` (float32 when `LINALG_F32` is set; what the bench runs: `a @ a.T + n I`), else on a
    /// synthetic one of order `LINALG_N` (default 1000); `LINALG_OPS` filters the labels. Prints only:
    /// `LINALG_FILE=a.bin cargo test --release --features python,gpu --lib eigh_steps -- --ignored --nocapture`.
    #[test]
    #[ignore]
    #[cfg(target_os = "linux")] // clock_ms: Linux's clock ids
    fn eigh_steps() {
        fn time(label: &str, f: impl FnMut()) {
            // the process's CPU time (all threads), which a loaded machine's time slicing barely moves (it
            // counts spinning at faer's barriers too)
            if let Some((ts, cs)) = timed(label, 15, 2, f) {
                let m = ts.len() / 2;
                eprintln!("{label:<40} wall min {:7.2} med {:7.2}   cpu min {:7.2} med {:7.2} ms", ts[0], ts[m], cs[0], cs[m]);
            }
        }
        fn go<T: Real>(name: &str, a: Vec<T>, n: usize) {
            let within = |par: Par, f: &mut (dyn FnMut(Par) + Send)| crate::backend::cpu::threads::parallel(|_| f(par));
            let bs = eigh_block_size::<T>(n);
            let mut f = Mat::<T>::zeros(n, n);
            let mut h = Mat::<T>::zeros(bs, n - 1);
            let mut u = Mat::<T>::zeros(n, n);
            let mut w = faer::diag::Diag::<T>::zeros(n);
            for (pn, par) in [("seq", Par::Seq), ("pool", Par::rayon(0))] {
                let mut mem = stack_for(evd::self_adjoint_evd_scratch::<T>(n, evd::ComputeEigenvectors::Yes, par, Default::default()));
                for thr in [192 * 256, 64 * 64, 384 * 384 / 2, usize::MAX / 2] {
                    let params = evd::tridiag::TridiagParams { par_threshold: thr, ..eigh_tridiag_params::<T>() };
                    time(&format!("{name} n={n} tridiag thr{thr} {pn}"), || within(par, &mut |par| {
                        lower_tiled(&a, f.as_mut(), Tri::Lower, Par::Seq);
                        evd::tridiag::tridiag_in_place(f.as_mut(), h.as_mut(), par, MemStack::new(&mut mem), params.into());
                    }));
                }
                lower_tiled(&a, f.as_mut(), Tri::Lower, Par::Seq);
                evd::tridiag::tridiag_in_place(f.as_mut(), h.as_mut(), Par::Seq, MemStack::new(&mut mem), eigh_tridiag_params::<T>().into());
                let (mut d, mut e) = (faer::diag::Diag::<T>::zeros(n), faer::diag::Diag::<T>::zeros(n));
                for i in 0..n {
                    d[i] = f[(i, i)];
                    e[i] = if i + 1 < n { f[(i + 1, i)] } else { <T as Elem>::zero() };
                }
                for rec in [128, 32, 64, 256] {
                    let params = evd::SelfAdjointEvdParams { recursion_threshold: rec, ..faer::Auto::<T>::auto() };
                    time(&format!("{name} n={n} tridiagonal evd r{rec} {pn}"), || within(par, &mut |par| {
                        evd::tridiagonal_self_adjoint_evd(d.as_ref(), e.as_ref(), w.as_mut(), Some(u.as_mut()), par, MemStack::new(&mut mem), params.into()).unwrap();
                    }));
                }
                let g = u.clone();
                time(&format!("{name} n={n} u = Q u (faer par) {pn}"), || within(par, &mut |par| {
                    u.copy_from(&g);
                    let v = f.as_ref().submatrix(1, 0, n - 1, n - 1);
                    householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(v, h.as_ref(), Conj::No, u.as_mut().subrows_mut(1, n - 1), par, MemStack::new(&mut mem));
                }));
                time(&format!("{name} n={n} copy u"), || u.copy_from(&g));
                let mut ws = EighWork::<T>::new(n, true, par).unwrap();
                time(&format!("{name} n={n} EighWork::run {pn}"), || within(par, &mut |par| {
                    assert!(ws.run(&a, Tri::Lower, par));
                }));
            }
        }
        let n: usize = std::env::var("LINALG_N").ok().and_then(|r| r.parse().ok()).unwrap_or(1000);
        let synthetic = |n: usize| -> Vec<f64> {
            (0..n * n)
                .map(|ij| {
                    let (i, j) = (ij / n, ij % n);
                    let (i, j) = (i.min(j), i.max(j));
                    ((i * 7919 + j * 104729) % 1009) as f64 / 1009.0 - 0.5 + if i == j { n as f64 } else { 0.0 }
                })
                .collect()
        };
        match std::env::var("LINALG_FILE") {
            Ok(path) => {
                let bytes = std::fs::read(path).unwrap();
                if std::env::var("LINALG_F32").is_ok() {
                    let a: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
                    let n = (a.len() as f64).sqrt() as usize;
                    go::<f32>("f32", a, n);
                } else {
                    let a: Vec<f64> = bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
                    let n = (a.len() as f64).sqrt() as usize;
                    go::<f64>("f64", a, n);
                }
            }
            Err(_) => {
                let a = synthetic(n);
                go::<f32>("f32", a.iter().map(|&x| x as f32).collect(), n);
                go::<f64>("f64", a, n);
            }
        }
    }

    /// Not a test: faer's parameters at one size, timed by this thread's CPU time (sequential runs only: a
    /// sequential factorization's CPU time barely moves with the other processes on a shared machine, which
    /// its wall time does), min and median of `LINALG_REPS` (default 20) calls at each n of `LINALG_N`
    /// (comma-separated, default 100,1000); `LINALG_OPS` filters the labels.
    /// `cargo test --release --features gpu --lib linalg_param_sweep -- --ignored --nocapture`.
    #[test]
    #[ignore]
    #[cfg(target_os = "linux")] // clock_ms: Linux's clock ids
    fn linalg_param_sweep() {
        // CRANAX_CPU_BLOCK_MATH=avx2 sweeps faer's AVX2 kernels (as the Python module, before any detection)
        crate::backend::cpu::host_simd::init();
        eprintln!("lanes (faer, products): {:?}, {:?}", crate::backend::cpu::host_simd::library_levels(), crate::backend::cpu::host_simd::state());
        fn time(label: &str, f: impl FnMut()) {
            // this thread's CPU time, printed in us
            if let Some((wall, cpu)) = timed(label, 20, 3, f) {
                let m = wall.len() / 2;
                eprintln!(
                    "{label:<34} cpu min {:9.1} med {:9.1}   wall min {:9.1} med {:9.1} us",
                    cpu[0] * 1e3, cpu[m] * 1e3, wall[0] * 1e3, wall[m] * 1e3
                );
            }
        }
        fn go<T: Real>(name: &str, n: usize) {
            let a: Vec<T> = (0..n * n)
                .map(|ij| {
                    let (i, j) = (ij / n, ij % n);
                    let (i, j) = (i.min(j), i.max(j));
                    T::from_f64(((i * 7919 + j * 104729) % 1009) as f64 / 1009.0 - 0.5 + if i == j { n as f64 } else { 0.0 })
                })
                .collect();
            let mut cm = Mat::<T>::zeros(n, n);
            load(&a, cm.as_mut(), Par::Seq);
            let mut f = cm.clone();
            let mut g = Mat::<T>::zeros(n, n);
            let (mut fwd, mut inv) = (vec![0usize; n], vec![0usize; n]);
            // sequential runs stay on this thread (whose CPU time is the figure); parallel ones go to the pool
            let within = |par: Par, f: &mut (dyn FnMut(Par) + Send)| match par {
                Par::Seq => f(par),
                _ => crate::backend::cpu::threads::parallel(|_| f(par)),
            };
            let mut rm = vec![<T as Elem>::zero(); n * n];
            for (pn, par) in [("seq", Par::Seq), ("pool", Par::rayon(0))] {
                // cholesky in a row-major buffer (faer through row-major strides) against the column-major copy
                let mut mem = stack_for(llt::factor::cholesky_in_place_scratch::<T>(n, par, Default::default()));
                time(&format!("{name} n={n} chol rowmajor {pn}"), || within(par, &mut |par| {
                    rm.copy_from_slice(&a);
                    let v = MatMut::from_row_major_slice_mut(&mut rm, n, n);
                    llt::factor::cholesky_in_place(v, Default::default(), par, MemStack::new(&mut mem), Default::default()).unwrap();
                }));
                time(&format!("{name} n={n} chol colmajor {pn}"), || within(par, &mut |par| {
                    rm.copy_from_slice(&a);
                    let v = MatMut::from_column_major_slice_mut(&mut rm, n, n);
                    llt::factor::cholesky_in_place(v, Default::default(), par, MemStack::new(&mut mem), Default::default()).unwrap();
                }));
                for (rec, bs) in [(16, 64), (8, 64), (32, 64), (16, 32), (16, 128)] {
                    let params = plu::PartialPivLuParams { recursion_threshold: rec, block_size: bs, ..faer::Auto::<T>::auto() };
                    let mut mem = stack_for(plu::lu_in_place_scratch::<usize, T>(n, n, par, params.into()).or(plu_inverse::inverse_scratch::<usize, T>(n, par)));
                    time(&format!("{name} n={n} lu r{rec} b{bs} {pn}"), || within(par, &mut |par| {
                        f.copy_from(&cm);
                        plu::lu_in_place(f.as_mut(), &mut fwd, &mut inv, par, MemStack::new(&mut mem), params.into());
                    }));
                    time(&format!("{name} n={n} lu+inverse r{rec} b{bs} {pn}"), || within(par, &mut |par| {
                        f.copy_from(&cm);
                        let (_, p) = plu::lu_in_place(f.as_mut(), &mut fwd, &mut inv, par, MemStack::new(&mut mem), params.into());
                        plu_inverse::inverse(g.as_mut(), f.as_ref(), f.as_ref(), p, par, MemStack::new(&mut mem));
                    }));
                }
                let mut mem = stack_for(plu::lu_in_place_scratch::<usize, T>(n, n, par, Default::default()));
                time(&format!("{name} n={n} lu+trsm eye {pn}"), || within(par, &mut |par| {
                    f.copy_from(&cm);
                    plu::lu_in_place(f.as_mut(), &mut fwd, &mut inv, par, MemStack::new(&mut mem), Default::default());
                    g.fill(<T as Elem>::zero());
                    (0..n).for_each(|i| g[(i, i)] = T::from_f64(1.0));
                    ts::solve_unit_lower_triangular_in_place(f.as_ref(), g.as_mut(), par);
                    ts::solve_upper_triangular_in_place(f.as_ref(), g.as_mut(), par);
                }));
                for (rec, bs) in [(64, 128), (32, 64), (32, 128), (64, 256), (128, 256), (16, 64), (128, 128), (64, 64)] {
                    let params = faer::linalg::cholesky::llt::factor::LltParams { recursion_threshold: rec, block_size: bs, ..faer::Auto::<T>::auto() };
                    let mut mem = stack_for(llt::factor::cholesky_in_place_scratch::<T>(n, par, params.into()));
                    time(&format!("{name} n={n} chol r{rec} b{bs} {pn}"), || within(par, &mut |par| {
                        f.copy_from(&cm);
                        llt::factor::cholesky_in_place(f.as_mut(), Default::default(), par, MemStack::new(&mut mem), params.into()).unwrap();
                    }));
                }
                let mut w = faer::diag::Diag::<T>::zeros(n);
                for rec in [128, 64, 256, 32] {
                    let params = evd::SelfAdjointEvdParams { recursion_threshold: rec, ..faer::Auto::<T>::auto() };
                    let mut mem = stack_for(evd::self_adjoint_evd_scratch::<T>(n, evd::ComputeEigenvectors::Yes, par, params.into()));
                    time(&format!("{name} n={n} eigh r{rec} {pn}"), || within(par, &mut |par| {
                        evd::self_adjoint_evd(cm.as_ref(), w.as_mut(), Some(g.as_mut()), par, MemStack::new(&mut mem), params.into()).unwrap();
                    }));
                }
                let mut mem = stack_for(evd::self_adjoint_evd_scratch::<T>(n, evd::ComputeEigenvectors::No, par, Default::default()));
                time(&format!("{name} n={n} eigvalsh {pn}"), || within(par, &mut |par| {
                    evd::self_adjoint_evd(cm.as_ref(), w.as_mut(), None, par, MemStack::new(&mut mem), Default::default()).unwrap();
                }));
                let mut hh = Mat::<T>::zeros(qrf::recommended_block_size::<T>(n, n), n.max(2) - 1);
                let mut mem = stack_for(evd::tridiag::tridiag_in_place_scratch::<T>(n, par, Default::default()));
                time(&format!("{name} n={n} tridiag {pn}"), || within(par, &mut |par| {
                    f.copy_from(&cm);
                    evd::tridiag::tridiag_in_place(f.as_mut(), hh.as_mut(), par, MemStack::new(&mut mem), Default::default());
                }));
            }
        }
        let ns = std::env::var("LINALG_N").unwrap_or_else(|_| "100,1000".into());
        for n in ns.split(',').filter_map(|s| s.trim().parse().ok()) {
            go::<f64>("f64", n);
            go::<f32>("f32", n);
        }
    }
}
