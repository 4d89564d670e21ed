//! Running compiled kernels on a thread pool.
//!
//! - Elementwise kernels and reductions with many outer points split their outer range `[0, outer_len)`
//!   into chunks that the calling thread and the rayon pool's workers claim in turn (`Split`). Every outer point is computed by the same code whatever the split
//!   (vector and scalar points agree bit for bit), so results do not depend on the thread count.
//! - Large reductions with few outer points (a full `sum`, a sum over the long axis of a `[2, 10^7]`) run the
//!   kernel's chunked-reduction variant: the outermost reduced axis is cut into a number of chunks that
//!   depends only on the shapes, each chunk writes partial results, and the partials are combined here in
//!   chunk order. Same input, same result, for any `CRANAX_NUM_THREADS`.
//! - Two independent library calls (a layer's two gradient products) run side by side with `join_offered`:
//!   the calling thread runs one and a pool thread the other if one is free in time.
//! - Library steps cut into independent chunks (matrix-vector outputs, blocks of a mid-size product, runs of a
//!   batch of small products) use `share_chunks`: one contiguous run of chunks per thread, the calling thread
//!   at once, pool threads as they wake, each taking what is left of the others' runs when done.
//!
//! `CRANAX_NUM_THREADS` (default: all cores) sizes the pool; 1 runs everything on the calling thread.
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};

use rayon::prelude::*;

use crate::ir::{DType, ReduceOp};

use super::jit::{CompiledKernel, PartialKernel};
use super::module::KernelFn;

/// Threads kernels may use (`CRANAX_NUM_THREADS`, else the machine's cores).
pub fn num_threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("CRANAX_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n >= 1)
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
    })
}

thread_local! {
    static SERIAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with kernels called from this thread kept on it (as with `CRANAX_NUM_THREADS=1`).
pub fn serial<R>(f: impl FnOnce() -> R) -> R {
    let old = SERIAL.with(|c| c.replace(true));
    let r = f();
    SERIAL.with(|c| c.set(old));
    r
}

fn pool() -> Option<&'static rayon::ThreadPool> {
    if SERIAL.with(|c| c.get()) {
        return None;
    }
    static P: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    P.get_or_init(|| {
        let n = num_threads();
        if n <= 1 {
            return None;
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("cranax-cpu-{i}"))
            // cranax's own threads: they flush denormals for good, as the calling thread does while a plan runs.
            .start_handler(|_| super::fpenv::flush_denormals_on_this_thread())
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `f` inside cranax's thread pool, so rayon work it starts (gemm's threads, `par_iter`) uses that one
/// pool instead of rayon's global pool: two pools would spin against each other for the same cores. `f`
/// gets whether it may split its work (false with one thread or under `serial`: then it runs here).
pub fn parallel<R: Send>(f: impl FnOnce(bool) -> R + Send) -> R {
    match pool() {
        Some(p) => p.install(|| f(true)),
        None => f(false),
    }
}

/// Runs `a` on this thread while offering `b` to one pool thread; whichever thread reaches `b` first runs it.
/// `rayon::join` inside `install` would hand both halves to the pool and sleep until they are done (three
/// threads, two wake-ups): on a small VM that costs as much as the second core saves. Here this thread never
/// waits for a pool thread to wake: if none has taken `b` by the time `a` is done (cores busy or
/// descheduled), it runs `b` itself. A panic in `b` is re-raised on this thread.
pub fn join_offered<RA, RB>(a: impl FnOnce() -> RA, b: impl FnOnce() -> RB + Send + 'static) -> (RA, RB)
where
    RB: Send + 'static,
{
    let Some(pool) = pool() else { return (a(), b()) };
    let offer = Arc::new(Offer {
        task: Mutex::new(Some(b)),
        result: Mutex::new(None),
        done: AtomicBool::new(false),
        cv: Condvar::new(),
    });
    let helper = offer.clone();
    pool.spawn(move || {
        let taken = helper.task.lock().take();
        if let Some(f) = taken {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            *helper.result.lock() = Some(r);
            helper.done.store(true, Ordering::Release);
            helper.cv.notify_one();
        }
    });
    let ra = a();
    let taken = offer.task.lock().take();
    if let Some(f) = taken {
        return (ra, f());
    }
    // A pool thread took `b` (about when `a` started, so it is nearly done): poll briefly, then sleep.
    let start = std::time::Instant::now();
    while !offer.done.load(Ordering::Acquire) && start.elapsed() < OFFER_SPIN {
        std::hint::spin_loop();
    }
    let mut g = offer.result.lock();
    let r = loop {
        if let Some(r) = g.take() {
            break r;
        }
        offer.cv.wait(&mut g);
    };
    drop(g);
    match r {
        Ok(rb) => (ra, rb),
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// Runs `f(c)` for every chunk `c < chunks`, each once, on this thread and up to `helpers` pool threads offered
/// the work (`join_offered`); the call never sleeps waiting for a pool thread to start (`pool.install` does: two
/// wake-ups before any work). The chunks are cut into one contiguous run per thread: each thread claims its
/// own run from the front, in order, then takes what is left of the others from their backs. So each thread
/// streams through neighbouring memory (handing out chunks in turn from one counter interleaved the threads'
/// rows: a matrix-vector product 2048² float32 on two threads took 1.2–1.5x the time of contiguous halves, the
/// prefetchers' streams broken at every chunk and the counter's cache line passed between the cores), and a
/// helper that wakes late or never still leaves no work undone. Returns once every chunk is done. A chunk must
/// give the same values whatever thread runs it.
pub fn share_chunks(chunks: usize, helpers: usize, f: impl Fn(usize) + Send + Sync + 'static) {
    let helpers = if pool().is_some() { helpers.min(chunks.saturating_sub(1)) } else { 0 };
    if helpers == 0 || chunks > u32::MAX as usize {
        return (0..chunks).for_each(f);
    }
    let runs = helpers + 1;
    let parts = (0..runs).map(|p| Run::new(p * chunks / runs, (p + 1) * chunks / runs)).collect();
    participate(Arc::new(Shared { parts, next: AtomicUsize::new(0), f }), helpers);
}

/// The chunks of one `share_chunks` call: one run per thread, the next thread's index, the work.
struct Shared<F> {
    parts: Vec<Run>,
    next: AtomicUsize,
    f: F,
}

/// The unclaimed chunks `[front, back)` of one run, packed in one word (front in the low half) so that its
/// owner and a thief claim from either end with one compare-and-swap; one cache line each.
#[repr(align(64))]
struct Run(AtomicU64);

impl Run {
    fn new(lo: usize, hi: usize) -> Run {
        Run(AtomicU64::new(lo as u64 | (hi as u64) << 32))
    }

    /// The first unclaimed chunk (`from_back` false) or the last, if any is left.
    fn claim(&self, from_back: bool) -> Option<usize> {
        let mut cur = self.0.load(Ordering::Relaxed);
        loop {
            let (f, b) = (cur & 0xffff_ffff, cur >> 32);
            if f >= b {
                return None;
            }
            let (next, c) = if from_back { (f | (b - 1) << 32, b - 1) } else { ((f + 1) | b << 32, f) };
            match self.0.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(c as usize),
                Err(now) => cur = now,
            }
        }
    }
}

/// This thread takes the next run (the caller the first), offers the rest of the threads' places to the pool,
/// and works: its own run from the front, then the others' from their backs.
fn participate<F: Fn(usize) + Send + Sync + 'static>(shared: Arc<Shared<F>>, helpers: usize) {
    let me = shared.next.fetch_add(1, Ordering::Relaxed) % shared.parts.len();
    let work = |s: &Shared<F>| {
        let n = s.parts.len();
        for (q, from_back) in std::iter::once((me, false)).chain((1..n).map(|d| ((me + d) % n, true))) {
            while let Some(c) = s.parts[q].claim(from_back) {
                (s.f)(c);
            }
        }
    };
    if helpers == 0 {
        return work(&shared);
    }
    let rest = shared.clone();
    join_offered(|| work(&shared), move || participate(rest, helpers - 1));
}

/// `join_offered`'s hand-over: the task until a thread takes it, then its result.
struct Offer<F, R> {
    task: Mutex<Option<F>>,
    result: Mutex<Option<std::thread::Result<R>>>,
    done: AtomicBool,
    cv: Condvar,
}

/// How long `join_offered` polls for the helper's result before sleeping.
const OFFER_SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// Work (≈ element operations) below which a kernel runs on the calling thread: waking the pool's threads
/// costs tens of µs on a busy or virtual machine, as much as ~1M operations of vector code on one core.
pub const SPLIT_WORK: u64 = 1 << 20;
/// Target work per chunk.
pub const CHUNK_WORK: u64 = 1 << 16;
/// At most this many partial chunks for a split reduction.
pub const MAX_PARTIALS: u64 = 64;

/// Pointers made sendable: the kernel ABI takes raw pointers, the buffers outlive the call.
#[derive(Clone, Copy)]
struct Addrs {
    ins: usize,
    outs: usize,
}

/// # Safety
/// `ins`/`outs` must be the buffer pointers the kernel expects (validated plan, buffers of the slots' avals).
unsafe fn call(entry: KernelFn, a: Addrs, begin: u64, end: u64) {
    entry(a.ins as *const *const u8, a.outs as *const *mut u8, begin, end)
}

/// Runs `ck` over its whole range. `out_bytes[o]` is output `o`'s buffer size.
///
/// # Safety
/// As for calling `ck.entry(ins, outs, 0, ck.outer_len)` directly.
pub unsafe fn run_kernel(ck: &CompiledKernel, ins: &[*const u8], outs: &[*mut u8], out_bytes: &[usize]) {
    if ck.outer_len == 0 {
        return;
    }
    let work = ck.outer_len.saturating_mul(ck.point_cost);
    if let Some(p) = &ck.partial {
        let chunks = partial_chunks(p, ck.outer_len, ck.point_cost);
        if chunks > 1 {
            run_partial(p, ins, outs, out_bytes, chunks);
            return;
        }
    }
    let a = Addrs { ins: ins.as_ptr() as usize, outs: outs.as_ptr() as usize };
    let pool = match pool() {
        Some(p) if work >= SPLIT_WORK && ck.outer_len >= 2 => p,
        _ => {
            call(ck.entry, a, 0, ck.outer_len);
            return;
        }
    };
    let n = ck.outer_len;
    let chunks = (num_threads() as u64 * 8).min(work / CHUNK_WORK).min(n).max(2);
    let split = Arc::new(Split {
        next: AtomicU64::new(0),
        done: AtomicU64::new(0),
        entry: ck.entry,
        a,
        n,
        chunks,
    });
    for _ in 1..num_threads() {
        let s = split.clone();
        pool.spawn(move || s.run());
    }
    split.run();
    // The chunks still running are on workers that claimed them: a short wait.
    let mut spins = 0u32;
    while split.done.load(Ordering::Acquire) < chunks {
        spins += 1;
        if spins < 1 << 12 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// An elementwise kernel's range cut into `chunks` that the calling thread and the pool's workers claim in
/// turn. The caller works from the start instead of sleeping until woken workers finish: a worker that
/// wakes late (the cores busy with other processes, a virtual machine's idle vCPU) takes what is left, and
/// one that wakes after the end finds nothing to claim, so the call never waits for a worker to start.
/// (With `pool.install` the caller slept through two wake-ups, and the second worker often joined too late
/// to help: two threads ran no faster than one.)
struct Split {
    next: AtomicU64,
    done: AtomicU64,
    entry: KernelFn,
    a: Addrs,
    n: u64,
    chunks: u64,
}

impl Split {
    fn run(&self) {
        loop {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= self.chunks {
                return;
            }
            let (b, e) = (self.n * c / self.chunks, self.n * (c + 1) / self.chunks);
            // SAFETY: disjoint outer ranges write disjoint output elements; the buffers outlive the call,
            // which returns only once every claimed chunk is done (a chunk is claimed only before then).
            unsafe { call(self.entry, self.a, b, e) }
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

/// How many chunks a split reduction uses: a function of the shapes only.
fn partial_chunks(p: &PartialKernel, outer_len: u64, point_cost: u64) -> u64 {
    let work = outer_len.saturating_mul(point_cost);
    (work / CHUNK_WORK).min(MAX_PARTIALS).min(p.axis_len / 16)
}

/// # Safety
/// As `run_kernel`.
unsafe fn run_partial(p: &PartialKernel, ins: &[*const u8], outs: &[*mut u8], out_bytes: &[usize], chunks: u64) {
    let n = p.axis_len;
    let bound = |c: u64| if c == chunks { n } else { (n * c / chunks) & !15 };
    // One partial buffer per chunk and output (u64 storage: aligned for every dtype).
    let mut bufs: Vec<Vec<Vec<u64>>> =
        (0..chunks).map(|_| out_bytes.iter().map(|&b| vec![0u64; b.div_ceil(8)]).collect()).collect();
    let ptrs: Vec<Vec<usize>> = bufs.iter_mut().map(|bs| bs.iter_mut().map(|v| v.as_mut_ptr() as usize).collect()).collect();
    let ins_addr = ins.as_ptr() as usize;
    let entry = p.entry;
    let run = |c: u64| {
        let a = Addrs { ins: ins_addr, outs: ptrs[c as usize].as_ptr() as usize };
        // SAFETY: each chunk writes only its own partial buffers.
        unsafe { call(entry, a, bound(c), bound(c + 1)) }
    };
    match pool() {
        Some(pool) => pool.install(|| (0..chunks).into_par_iter().for_each(run)),
        None => (0..chunks).for_each(run),
    }
    for (o, (&(op, dt), &bytes)) in p.ops.iter().zip(out_bytes).enumerate() {
        let parts: Vec<*const u8> = bufs.iter().map(|bs| bs[o].as_ptr() as *const u8).collect();
        combine(op, dt, &parts, outs[o], bytes);
    }
}

fn fmax64(a: f64, b: f64, is_max: bool) -> f64 {
    if a.is_nan() {
        return a;
    }
    if b.is_nan() {
        return b;
    }
    if a == b {
        // -0 < +0
        return if a.is_sign_negative() == is_max { b } else { a };
    }
    if (a > b) == is_max {
        a
    } else {
        b
    }
}

/// `out = parts[0] ⊕ parts[1] ⊕ ...` elementwise, in order.
///
/// # Safety
/// Every pointer is valid for `bytes` bytes.
unsafe fn combine(op: ReduceOp, dt: DType, parts: &[*const u8], out: *mut u8, bytes: usize) {
    macro_rules! go {
        ($t:ty, $f:expr) => {{
            let n = bytes / std::mem::size_of::<$t>();
            let f = $f;
            for i in 0..n {
                let mut acc = (parts[0] as *const $t).add(i).read_unaligned();
                for p in &parts[1..] {
                    acc = f(acc, (*p as *const $t).add(i).read_unaligned());
                }
                (out as *mut $t).add(i).write_unaligned(acc);
            }
        }};
    }
    use ReduceOp::*;
    macro_rules! int {
        ($t:ty) => {
            match op {
                Sum => go!($t, |a: $t, b: $t| a.wrapping_add(b)),
                Prod => go!($t, |a: $t, b: $t| a.wrapping_mul(b)),
                Max => go!($t, |a: $t, b: $t| a.max(b)),
                Min => go!($t, |a: $t, b: $t| a.min(b)),
                And => go!($t, |a: $t, b: $t| a & b),
                Or => go!($t, |a: $t, b: $t| a | b),
            }
        };
    }
    match dt {
        DType::I8 => int!(i8),
        DType::U8 => int!(u8),
        DType::I16 => int!(i16),
        DType::U16 => int!(u16),
        DType::F32 => match op {
            Sum => go!(f32, |a: f32, b: f32| a + b),
            Prod => go!(f32, |a: f32, b: f32| a * b),
            Max | Min => go!(f32, |a: f32, b: f32| fmax64(a as f64, b as f64, op == Max) as f32),
            And | Or => {}
        },
        DType::F16 => {
            // Never reached by a legalized plan (float16 reductions run in f32); kept total.
            use crate::backend::cpu::library::elem::{Elem, F16};
            match op {
                Sum => go!(F16, |a: F16, b: F16| a.eadd(b)),
                Prod => go!(F16, |a: F16, b: F16| a.emul(b)),
                Max => go!(F16, |a: F16, b: F16| a.emax(b)),
                Min => go!(F16, |a: F16, b: F16| a.emin(b)),
                And | Or => {}
            }
        }
        DType::BF16 => {
            // Never reached by a legalized plan (as float16); kept total.
            use crate::backend::cpu::library::elem::{Elem, BF16};
            match op {
                Sum => go!(BF16, |a: BF16, b: BF16| a.eadd(b)),
                Prod => go!(BF16, |a: BF16, b: BF16| a.emul(b)),
                Max => go!(BF16, |a: BF16, b: BF16| a.emax(b)),
                Min => go!(BF16, |a: BF16, b: BF16| a.emin(b)),
                And | Or => {}
            }
        }
        DType::F64 => match op {
            Sum => go!(f64, |a: f64, b: f64| a + b),
            Prod => go!(f64, |a: f64, b: f64| a * b),
            Max | Min => go!(f64, |a: f64, b: f64| fmax64(a, b, op == Max)),
            And | Or => {}
        },
        DType::I32 => match op {
            Sum => go!(i32, |a: i32, b: i32| a.wrapping_add(b)),
            Prod => go!(i32, |a: i32, b: i32| a.wrapping_mul(b)),
            Max => go!(i32, |a: i32, b: i32| a.max(b)),
            Min => go!(i32, |a: i32, b: i32| a.min(b)),
            And => go!(i32, |a: i32, b: i32| a & b),
            Or => go!(i32, |a: i32, b: i32| a | b),
        },
        DType::U32 => match op {
            Sum => go!(u32, |a: u32, b: u32| a.wrapping_add(b)),
            Prod => go!(u32, |a: u32, b: u32| a.wrapping_mul(b)),
            Max => go!(u32, |a: u32, b: u32| a.max(b)),
            Min => go!(u32, |a: u32, b: u32| a.min(b)),
            And => go!(u32, |a: u32, b: u32| a & b),
            Or => go!(u32, |a: u32, b: u32| a | b),
        },
        DType::I64 => match op {
            Sum => go!(i64, |a: i64, b: i64| a.wrapping_add(b)),
            Prod => go!(i64, |a: i64, b: i64| a.wrapping_mul(b)),
            Max => go!(i64, |a: i64, b: i64| a.max(b)),
            Min => go!(i64, |a: i64, b: i64| a.min(b)),
            And => go!(i64, |a: i64, b: i64| a & b),
            Or => go!(i64, |a: i64, b: i64| a | b),
        },
        d @ crate::ir::dtype::float8!() => {
            // Never reached by a legalized plan (float8 reductions run in f32, as float16); kept total.
            use crate::backend::cpu::library::elem::{with_elem, Elem};
            with_elem!(d, T => match op {
                Sum => go!(T, |a: T, b: T| a.eadd(b)),
                Prod => go!(T, |a: T, b: T| a.emul(b)),
                Max => go!(T, |a: T, b: T| a.emax(b)),
                Min => go!(T, |a: T, b: T| a.emin(b)),
                And | Or => {}
            })
        }
        DType::Bool => match op {
            Sum | Or | Max => go!(u8, |a: u8, b: u8| a | b),
            Prod | And | Min => go!(u8, |a: u8, b: u8| a & b),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sums `0..n` slowly enough that the helper thread sometimes takes the offered half first.
    fn busy_sum(n: u64) -> u64 {
        (0..n).map(std::hint::black_box).sum()
    }

    #[test]
    fn share_chunks_runs_every_chunk_once() {
        for (chunks, helpers) in [(0, 1), (1, 3), (2, 1), (7, 2), (64, 1), (100, 8)] {
            let counts: Arc<Vec<AtomicUsize>> = Arc::new((0..chunks).map(|_| AtomicUsize::new(0)).collect());
            let c2 = counts.clone();
            share_chunks(chunks, helpers, move |c| {
                busy_sum(50 * (c as u64 % 5));
                c2[c].fetch_add(1, Ordering::Relaxed);
            });
            assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1), "{chunks} chunks, {helpers} helpers");
        }
    }

    #[test]
    fn a_run_gives_each_chunk_once_from_either_end() {
        let r = Run::new(3, 9);
        let order: Vec<usize> = [false, true, true, false, true, false, false].iter().filter_map(|&b| r.claim(b)).collect();
        assert_eq!(order, vec![3, 8, 7, 4, 6, 5]);
        assert_eq!((r.claim(false), r.claim(true)), (None, None));
    }

    #[test]
    fn join_offered_returns_both_results_whoever_runs_b() {
        for i in 0..200u64 {
            let v: Vec<u64> = (0..i).collect();
            let (a, b) = join_offered(|| busy_sum(i * 100), move || v.iter().sum::<u64>() + busy_sum(i * 50));
            assert_eq!(a, (0..i * 100).sum::<u64>());
            assert_eq!(b, (0..i).sum::<u64>() + (0..i * 50).sum::<u64>());
        }
    }

    #[test]
    fn join_offered_reraises_a_panic_of_b_here() {
        for i in 0..50u64 {
            let r = std::panic::catch_unwind(|| {
                join_offered(|| busy_sum(i * 1000), move || -> u64 { panic!("offered half failed {i}") })
            });
            let p = r.expect_err("the panic of b reaches the caller");
            assert_eq!(crate::error::panic_message(&*p), format!("offered half failed {i}"));
        }
        // The pool still works afterwards.
        assert_eq!(join_offered(|| 1, || 2), (1, 2));
    }

    #[test]
    fn join_offered_under_serial_runs_both_here() {
        let me = std::thread::current().id();
        let (a, b) = serial(|| join_offered(|| std::thread::current().id(), || std::thread::current().id()));
        assert_eq!((a, b), (me, me));
    }
}
