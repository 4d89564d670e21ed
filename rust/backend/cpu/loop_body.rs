//! Loop bodies run in place: a `scan` or `while` whose body (and cond) plans hold kernels, views, library
//! steps and nested control steps runs its iterations on buffers allocated once per loop run (frames are
//! kept for the next run), calling the compiled kernels and the product routine on raw addresses; other
//! library steps and nested loops/conds run on handles borrowing their operands where they lie, their
//! results held for the iteration (`Op::Lib`, `Op::Control`). A scatter or `dynamic_update_slice` into a
//! carry whose old value nothing reads afterwards writes into the loop's own copy of that carry (made once
//! per run), as XLA updates its loop buffers in place (`Op::Update`: gmres's Arnoldi basis `V.at[:, k]`
//! set then read whole by `V.T @ w`); where the old value is still read, it runs on a copy. The generic path (`control::run_step`)
//! instead runs the sub-plan through the executor every iteration — slot tables, output buffers and
//! argument vectors allocated per step, a microsecond or more per iteration, which dominates loops over
//! small arrays (an RNN cell).
//!
//! Where each body slot lives during a run:
//! - inputs: the consts' and xs rows' own buffers (stable for the run), the carries wherever the previous
//!   iteration left them;
//! - a slot written in the body whose value becomes a carry: two buffers used on alternate iterations, so
//!   the next iteration reads the carry while writing the other one;
//! - a slot that is the body's `j`-th y output (first occurrence): row `i` of the stacked ys directly
//!   (written once, never overwritten, so a carry may also point there);
//! - any other written slot: one buffer, reused every iteration;
//! - views: their source's address.
//! A carry that is another carry's input value (a rotation of carries) is copied into its own pair of
//! buffers, since its source would be overwritten two iterations later. Other ys are copied into their
//! rows after each iteration.
//!
//! A scan whose body is one elementwise kernel over its carries runs all its iterations on one strip of
//! points before the next (`StripKernel`), the strips on the pool's threads.
//!
//! The kernels and products are the ones the generic path runs, on the same values: results are
//! bit-identical. `CRANAX_NO_DIRECT_LOOPS=1` turns this off.
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, LibOp};
use crate::plan::{ControlStep, Plan, Step};

use super::CpuExecutable;
use super::library::gemm::{DirectDot, DotDims};

/// One step of a prepared plan.
enum Op {
    View { src: usize, dst: usize },
    /// Plan step `step` (a kernel) reading `ins` and writing `outs` (`out_bytes` each).
    Kernel { step: usize, ins: Vec<usize>, outs: Vec<usize>, out_bytes: Vec<usize> },
    Dot { dot: DirectDot, lhs: usize, rhs: usize, out: usize },
    /// Library step `step` (any but an in-place product) run on its operands' buffers where they lie; its
    /// outputs are the fresh buffers it returns, held by the frame (`Frame::held`).
    Lib { step: usize, ins: Vec<usize>, outs: Vec<usize> },
    /// Library step `step`, a scatter or `dynamic_update_slice` whose operand (`ins[0]`) is a carry's own
    /// buffer and whose old value nothing reads afterwards: written there in place (XLA's in-place loop
    /// buffers), its output that buffer.
    Update { step: usize, ins: Vec<usize>, out: usize },
    /// Nested control step `step` (a loop or cond in the body), run by its compiled form
    /// (`control::run_step`) on the operands' buffers where they lie; outputs held as for `Lib`.
    Control { step: usize },
}

/// Where a slot written by the plan lives during a run (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Home {
    Single,
    Double,
    /// Row `i` of y output `j`.
    Y(usize),
}

/// A sub-plan prepared to run in place.
struct Prepared {
    exe: Arc<CpuExecutable>,
    ops: Vec<Op>,
    /// Per slot: `Some` for slots written by a kernel or product.
    homes: Vec<Option<Home>>,
    /// Per slot: the slot whose buffer it reads (itself unless a view).
    root: Vec<usize>,
    /// Per slot: its size in bytes.
    bytes: Vec<usize>,
    /// Per carry (body input `first + c`): whether an `Op::Update` writes into its buffer, which the loop
    /// then owns (a copy of the initial value, made once per run).
    in_place: Vec<bool>,
    /// Frames of earlier runs, reused (a loop nested in another loop's body runs once per outer iteration:
    /// a fresh frame's buffers and tables each time cost more than a short run itself).
    frames: std::sync::Mutex<Vec<Frame>>,
}

impl Prepared {
    /// `None` when the plan has steps that cannot run in place (library calls other than in-place
    /// products, nested control flow). `carried` are the outputs whose values outlive an iteration;
    /// `ys[j]` is the output index stacked into y `j` (written there directly when possible).
    fn new(exe: &Arc<CpuExecutable>, carried: &[usize], ys: &[usize], first: Option<usize>) -> Result<Option<Prepared>> {
        let nk = carried.len();
        let mut deny = vec![first.is_none(); nk];
        loop {
            let Some(pr) = Prepared::with(exe, carried, ys, first, &deny)? else { return Ok(None) };
            // A carry written in place must come back in its own buffer, as the current value: else the next
            // iteration's writes would land elsewhere. Such carries update by copies instead.
            let p = &exe.plan;
            let mut again = false;
            for c in (0..nk).filter(|&c| pr.prepared.in_place[c]) {
                let (r, want) = (pr.root[p.outputs[carried[c]]], first.unwrap_or(0) + c);
                if r != want || !pr.current[p.outputs[carried[c]]] {
                    deny[c] = true;
                    again = true;
                }
            }
            if !again {
                return Ok(Some(pr.prepared));
            }
        }
    }

    /// `new` with carries `deny` never written in place.
    fn with(exe: &Arc<CpuExecutable>, carried: &[usize], ys: &[usize], first: Option<usize>, deny: &[bool]) -> Result<Option<Built>> {
        let p = &exe.plan;
        let n = p.slots.len();
        let nk = carried.len();
        let mut root: Vec<usize> = (0..n).collect();
        let mut homes: Vec<Option<Home>> = vec![None; n];
        let mut ops = Vec::with_capacity(p.steps.len());
        // Writes in place: per slot, the version of its root's buffer it holds, and per root the latest.
        let mut ver = vec![0u32; n];
        let mut latest = vec![0u32; n];
        let mut in_place = vec![false; nk];
        let carry_of = |r: usize| first.and_then(|f| r.checked_sub(f)).filter(|&c| c < nk && !deny[c]);
        // Whether a step after `si` (or an output of the plan) reads a slot holding version `v` of root `r`.
        let read_later = |si: usize, r: usize, v: u32, root: &[usize], ver: &[u32]| {
            let old = |s: usize| s < n && root[s] == r && ver[s] == v;
            p.steps[si + 1..].iter().any(|st| match st {
                Step::View { src, .. } => old(*src),
                Step::Kernel(k) => k.inputs.iter().any(|i| old(i.slot)),
                Step::Library(l) => l.inputs.iter().any(|&s| old(s)),
                Step::Control(c) => c.inputs().iter().any(|&s| old(s)),
            }) || p.outputs.iter().any(|&s| old(s))
        };
        for (si, step) in p.steps.iter().enumerate() {
            match step {
                Step::View { src, dst } => {
                    root[*dst] = root[*src];
                    ver[*dst] = ver[*src];
                    ops.push(Op::View { src: *src, dst: *dst });
                }
                Step::Kernel(k) => {
                    if exe.kernels.get(si).is_none_or(|k| k.is_none()) {
                        return Ok(None);
                    }
                    let outs: Vec<usize> = k.outputs.iter().map(|o| o.slot).collect();
                    let out_bytes = outs.iter().map(|&s| Buffer::byte_len(&p.slots[s])).collect::<Result<Vec<_>>>()?;
                    for &o in &outs {
                        homes[o] = Some(Home::Single);
                    }
                    ops.push(Op::Kernel { step: si, ins: k.inputs.iter().map(|i| i.slot).collect(), outs, out_bytes });
                }
                Step::Library(l) => {
                    if l.inputs.iter().chain(&l.outputs).any(|&s| s >= n) {
                        return Ok(None);
                    }
                    let direct = match (&l.op, l.inputs.as_slice(), l.outputs.as_slice()) {
                        (LibOp::DotGeneral { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, .. }, &[lhs, rhs], &[out]) => {
                            let dims = DotDims { lc: lhs_contracting, rc: rhs_contracting, lb: lhs_batch, rb: rhs_batch };
                            DirectDot::new(&dims, &p.slots[lhs], &p.slots[rhs], &p.slots[out]).map(|dot| (dot, lhs, rhs, out))
                        }
                        _ => None,
                    };
                    let update = matches!(l.op, LibOp::Scatter { .. }) && l.inputs.len() == 3
                        || matches!(l.op, LibOp::DynamicUpdateSlice) && l.inputs.len() >= 2;
                    let x = l.inputs.first().copied();
                    let upd_carry = match (update, x, l.outputs.as_slice()) {
                        (true, Some(x), &[out]) => {
                            let r = root[x];
                            carry_of(r).filter(|_| {
                                p.slots[out] == p.slots[x]
                                    && ver[x] == latest[r]
                                    && !l.inputs[1..].iter().any(|&s| root[s] == r)
                                    && !read_later(si, r, latest[r], &root, &ver)
                            })
                        }
                        _ => None,
                    };
                    if let Some((dot, lhs, rhs, out)) = direct {
                        homes[out] = Some(Home::Single);
                        ops.push(Op::Dot { dot, lhs, rhs, out });
                    } else if let (Some(c), Some(x)) = (upd_carry, x) {
                        let (r, out) = (root[x], l.outputs[0]);
                        latest[r] += 1;
                        root[out] = r;
                        ver[out] = latest[r];
                        in_place[c] = true;
                        ops.push(Op::Update { step: si, ins: l.inputs.clone(), out });
                    } else {
                        ops.push(Op::Lib { step: si, ins: l.inputs.clone(), outs: l.outputs.clone() });
                    }
                }
                Step::Control(c) => {
                    if exe.controls.get(si).is_none_or(|c| c.is_none()) || c.inputs().iter().chain(c.outputs()).any(|&s| s >= n) {
                        return Ok(None);
                    }
                    ops.push(Op::Control { step: si });
                }
            }
        }
        for (j, &o) in ys.iter().enumerate() {
            let s = *p.outputs.get(o).ok_or_else(|| Error::Codegen("loop body output out of range".into()))?;
            if homes[s] == Some(Home::Single) {
                homes[s] = Some(Home::Y(j));
            }
        }
        for &o in carried {
            let r = root[*p.outputs.get(o).ok_or_else(|| Error::Codegen("loop body output out of range".into()))?];
            if homes[r] == Some(Home::Single) {
                homes[r] = Some(Home::Double);
            }
        }
        let bytes = p.slots.iter().map(Buffer::byte_len).collect::<Result<Vec<_>>>()?;
        let current = (0..n).map(|s| ver[s] == latest[root[s]]).collect();
        Ok(Some(Built { prepared: Prepared { exe: exe.clone(), ops, homes, root: root.clone(), bytes, in_place, frames: Default::default() }, root, current }))
    }

    fn plan(&self) -> &Plan {
        &self.exe.plan
    }

    /// A frame for a run: one a finished run gave back, or a new one.
    fn frame(&self) -> Result<Frame> {
        match self.frames.lock().ok().and_then(|mut v| v.pop()) {
            Some(f) => Ok(f),
            None => Frame::new(self),
        }
    }

    /// Takes back the frame of a finished run (whose results no longer point into it), when its buffers
    /// are small enough to keep.
    fn give_back(&self, mut f: Frame) {
        let kept: usize = (0..self.homes.len())
            .map(|s| match self.homes[s] {
                Some(Home::Single) => self.bytes[s],
                Some(Home::Double) => 2 * self.bytes[s],
                _ => 0,
            })
            .sum();
        if kept > FRAME_KEEP_BYTES {
            return;
        }
        for h in &mut f.held {
            *h = [None, None];
        }
        if let Ok(mut v) = self.frames.lock() {
            if v.len() < 2 {
                v.push(f);
            }
        }
    }
}

/// The most bytes of buffers a frame kept for reuse may hold (`Prepared::give_back`).
const FRAME_KEEP_BYTES: usize = 1 << 20;

/// A prepared plan with, per slot, its root and whether it holds its root's latest value (`Prepared::new`).
struct Built {
    prepared: Prepared,
    root: Vec<usize>,
    current: Vec<bool>,
}

/// A buffer handle on the `bytes` bytes of slot aval `aval` at `ptr` for a library routine or a nested
/// control step: borrowed where it lies (never written in place by them: `exec::dead_operand`), or a copy
/// when the address is not aligned as buffers are (a row of a scan's `xs`).
///
/// # Safety
/// `ptr` holds `aval`'s bytes, valid while the handle is used.
unsafe fn handle(ptr: usize, aval: &Aval) -> Result<Buffer> {
    let bytes = Buffer::byte_len(aval)?;
    if bytes == 0 || ptr % crate::buffer::ALIGN != 0 {
        return Buffer::from_bytes(aval, std::slice::from_raw_parts(ptr as *const u8, bytes));
    }
    let st = crate::buffer::Storage::borrowed(ptr as *mut u8, bytes, Box::new(()))?;
    Ok(Buffer { storage: Arc::new(st), aval: aval.clone() })
}

/// `b` as a buffer the frame may hold across iterations: a copy when it is borrowed memory (a routine or
/// loop that returned one of its operands), whose owner may overwrite it.
fn owned(b: Buffer) -> Result<Buffer> {
    if !b.storage.is_borrowed() {
        return Ok(b);
    }
    let n = Buffer::byte_len(&b.aval)?;
    Buffer::from_bytes(&b.aval, b.as_bytes().get(..n).ok_or_else(|| Error::Execution("loop value buffer is too small".into()))?)
}

/// Per-run state of a prepared plan: the buffers of its written slots and the argument arrays.
struct Frame {
    /// Per slot: the current address.
    ptr: Vec<usize>,
    /// Per slot: the two buffers' addresses (equal for `Single`; unused for `Y` and unwritten slots).
    home: Vec<[usize; 2]>,
    /// Keeps the buffers alive.
    _bufs: Vec<Buffer>,
    /// Per slot, per parity: the buffer a library step or nested control step returned (kept until the
    /// same parity's next iteration, as `Home::Double` buffers are, since a carry may point there).
    held: Vec<[Option<Buffer>; 2]>,
    /// The slot table nested control steps run on (their operands' handles, then their outputs).
    table: Vec<Option<Buffer>>,
    /// Per slot: the last handle made on its bytes for a library or nested control step (`Frame::handles`).
    hcache: Vec<Option<Buffer>>,
    ins: Vec<*const u8>,
    outs: Vec<*mut u8>,
}

// SAFETY: a frame owns its buffers; its raw pointers are addresses and argument arrays filled and used
// within one `step` call, so a frame kept for reuse (`Prepared::frames`) may go to another thread.
unsafe impl Send for Frame {}

impl Frame {
    fn new(p: &Prepared) -> Result<Frame> {
        let plan = p.plan();
        let n = plan.slots.len();
        let mut home = vec![[0usize; 2]; n];
        let mut bufs = Vec::new();
        for s in 0..n {
            let copies = match p.homes[s] {
                Some(Home::Single) => 1,
                Some(Home::Double) => 2,
                _ => 0,
            };
            for c in 0..copies {
                let b = Buffer::uninit(&plan.slots[s])?;
                home[s][c] = b.as_ptr() as usize;
                bufs.push(b);
            }
            if copies == 1 {
                home[s][1] = home[s][0];
            }
        }
        let width = p.ops.iter().map(|o| if let Op::Kernel { ins, outs, .. } = o { ins.len().max(outs.len()) } else { 0 }).max();
        let width = width.unwrap_or(0);
        let nested = p.ops.iter().any(|o| matches!(o, Op::Control { .. }));
        Ok(Frame {
            ptr: vec![0; n],
            home,
            _bufs: bufs,
            held: (0..n).map(|_| [None, None]).collect(),
            table: if nested { (0..n).map(|_| None).collect() } else { Vec::new() },
            hcache: (0..n).map(|_| None).collect(),
            ins: Vec::with_capacity(width),
            outs: Vec::with_capacity(width),
        })
    }

    /// Runs the plan's steps once. The input slots' addresses must be set; `parity` picks the buffer of
    /// `Double` slots, `yrow[j]` is the address of y `j`'s row for this iteration.
    ///
    /// # Safety
    /// Input addresses point at buffers of the plan's input avals that stay valid and unwritten during
    /// the call; `yrow` addresses hold their slots' bytes.
    /// Slot `o`'s value is `b` (of its aval), held for this parity's iteration.
    fn hold(&mut self, o: usize, parity: usize, b: Buffer, plan: &Plan) -> Result<()> {
        if b.aval.dtype != plan.slots[o].dtype || b.aval.numel() != plan.slots[o].numel() || b.storage.len() < Buffer::byte_len(&plan.slots[o])? {
            return Err(Error::Execution("loop step output of the wrong type".into()));
        }
        self.ptr[o] = b.as_ptr() as usize;
        self.held[o][parity] = Some(b);
        Ok(())
    }

    /// Makes `hcache[s]` a handle on each slot `s` of `slots` where it lies now (`handle`). A borrowed
    /// handle owns nothing, so one made at the same address in an earlier iteration or run is the same
    /// handle: only a slot whose address changed (a `Double` buffer, a scan's row, a fresh result) or that
    /// needed a copy (unaligned) gets a new one. Its `Arc` and aval were two allocations per operand per
    /// iteration (gmres's Arnoldi step: a column slice and three scatters, ~15 a step).
    ///
    /// # Safety
    /// As for `handle`: each slot's address holds its aval's bytes.
    unsafe fn handles(&mut self, slots: &[usize], plan: &Plan) -> Result<()> {
        for &s in slots {
            let at = self.ptr[s];
            if !self.hcache[s].as_ref().is_some_and(|b| b.storage.is_borrowed() && b.as_ptr() as usize == at) {
                self.hcache[s] = Some(handle(at, &plan.slots[s])?);
            }
        }
        Ok(())
    }

    /// The handle `handles` made for slot `s`.
    fn cached(&self, s: usize) -> Result<&Buffer> {
        self.hcache[s].as_ref().ok_or_else(|| Error::Execution("loop operand has no handle".into()))
    }

    unsafe fn step(&mut self, p: &Prepared, parity: usize, yrow: &[usize]) -> Result<()> {
        self.step_except(p, parity, yrow, None)
    }

    /// `step` without op `skip` (a strip kernel's: `DirectScan::run`).
    ///
    /// # Safety
    /// As for `step`.
    unsafe fn step_except(&mut self, p: &Prepared, parity: usize, yrow: &[usize], skip: Option<usize>) -> Result<()> {
        let plan = &p.exe.plan;
        let place = |s: usize, f: &Frame| -> usize {
            match p.homes[s] {
                Some(Home::Y(j)) => yrow[j],
                _ => f.home[s][parity],
            }
        };
        for (oi, op) in p.ops.iter().enumerate() {
            if skip == Some(oi) {
                continue;
            }
            match op {
                Op::View { src, dst } => self.ptr[*dst] = self.ptr[*src],
                Op::Kernel { step, ins, outs, out_bytes } => {
                    let ck = p.exe.kernels[*step].as_ref().ok_or_else(|| Error::Execution("kernel not compiled".into()))?;
                    self.ins.clear();
                    self.ins.extend(ins.iter().map(|&s| self.ptr[s] as *const u8));
                    self.outs.clear();
                    for &o in outs {
                        let a = place(o, self);
                        self.ptr[o] = a;
                        self.outs.push(a as *mut u8);
                    }
                    // SAFETY: the addresses hold buffers of the slots' avals (inputs by the caller, written
                    // slots by `Frame::new`/`yrow`); outputs never alias inputs (module docs).
                    super::threads::run_kernel(ck, &self.ins, &self.outs, out_bytes);
                }
                Op::Dot { dot, lhs, rhs, out } => {
                    let a = place(*out, self);
                    self.ptr[*out] = a;
                    // SAFETY: as for kernels; `DirectDot` was prepared for these slots' avals.
                    dot.run(self.ptr[*lhs] as *const u8, self.ptr[*rhs] as *const u8, a as *mut u8);
                }
                Op::Lib { step, ins, outs } => {
                    let Step::Library(l) = &plan.steps[*step] else { return Err(Error::Execution("loop step is not a library step".into())) };
                    // SAFETY: every operand address holds its slot's bytes (as for kernels).
                    self.handles(ins, plan)?;
                    let refs = ins.iter().map(|&s| self.cached(s)).collect::<Result<Vec<&Buffer>>>()?;
                    let res = super::library::run(&l.op, &refs, &p.exe.lib_avals[*step])?;
                    drop(refs);
                    if res.len() != outs.len() {
                        return Err(Error::Execution(format!("{} gave {} outputs", l.op.name(), res.len())));
                    }
                    for (&o, b) in outs.iter().zip(res) {
                        self.hold(o, parity, owned(b)?, plan)?;
                    }
                }
                Op::Update { step, ins, out } => {
                    let Step::Library(l) = &plan.steps[*step] else { return Err(Error::Execution("loop step is not a library step".into())) };
                    let at = self.ptr[ins[0]];
                    // SAFETY: the operand is the carry's own buffer (`Prepared::new`), nothing else reads its old
                    // value; the other operands hold their slots' bytes.
                    self.handles(ins, plan)?;
                    let res = self.hcache[ins[0]].take().ok_or_else(|| Error::Execution("loop operand has no handle".into()))?;
                    let hs = ins[1..].iter().map(|&s| self.cached(s)).collect::<Result<Vec<&Buffer>>>()?;
                    let r = match (&l.op, hs.as_slice()) {
                        (LibOp::Scatter { .. }, &[idx, upd]) => super::library::scatter_in_place(&l.op, res, idx, upd),
                        (LibOp::Scatter { .. }, _) => return Err(Error::Execution("loop scatter without its operands".into())),
                        _ => super::library::update_slice_in_place(&l.op, res, &hs),
                    };
                    drop(hs);
                    // the handle comes back (the routine wrote through it): kept for the next iteration
                    self.hcache[ins[0]] = Some(r.ok_or_else(|| Error::Execution("loop update is not a scatter".into()))??);
                    self.ptr[*out] = at;
                }
                Op::Control { step } => {
                    let Step::Control(c) = &plan.steps[*step] else { return Err(Error::Execution("loop step is not a control step".into())) };
                    let cc = p.exe.controls[*step].as_ref().ok_or_else(|| Error::Execution("nested loop not compiled".into()))?;
                    let cins = c.inputs();
                    // SAFETY: as for `Op::Lib`.
                    self.handles(&cins, plan)?;
                    for &s in &cins {
                        self.table[s] = Some(self.cached(s)?.clone());
                    }
                    let r = super::control::run_step(plan, c, cc, &mut self.table);
                    for s in c.inputs() {
                        self.table[s] = None;
                    }
                    r?;
                    for &o in c.outputs() {
                        let b = self.table[o].take().ok_or_else(|| Error::Execution("nested loop gave no output".into()))?;
                        self.hold(o, parity, owned(b)?, plan)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The in-place form of a loop step.
pub enum DirectLoop {
    /// A scan body.
    Scan(DirectScan),
    /// A while loop's cond and body.
    While(DirectWhile),
}

impl DirectLoop {
    /// Whether every prepared plan holds only kernels, views and in-place products (no library step run on
    /// handles, no write in place, no nested control step).
    pub fn plain(&self) -> bool {
        let plain = |p: &Prepared| p.ops.iter().all(|o| matches!(o, Op::View { .. } | Op::Kernel { .. } | Op::Dot { .. }));
        match self {
            DirectLoop::Scan(s) => plain(&s.body),
            DirectLoop::While(w) => plain(&w.cond) && plain(&w.body),
        }
    }
}

/// A prepared scan body, with the carries that must be copied each iteration.
pub struct DirectScan {
    body: Prepared,
    nconsts: usize,
    ncarry: usize,
    /// Per carry: true when its value is another carry's input (copied into its own buffers).
    copy: Vec<bool>,
    /// The body's one elementwise kernel, when the scan can run strip by strip (`strip_kernel`).
    strip: Option<StripKernel>,
}

/// A scan body whose one big elementwise kernel writes some carries (`mine`), reading them at the point it
/// writes (consts anywhere: they never change), with no xs or ys: point `q` of iteration `t` depends only
/// on point `q` of iteration `t - 1`. So the scan runs all its iterations over one strip of points before
/// the next strip (loop interchange): the strip's carries stay in cache instead of every iteration
/// streaming the whole carries through memory (searchsorted's 20 halvings of 1e6 queries: 5 arrays of
/// 4 MB per halving; a `fori_loop`'s `x * 0.99 + 1` on f32[32768], whose carry fits L2 but not L1), and
/// strips run on the pool's threads. The body's other steps (small kernels and views: a `fori_loop`'s
/// counter) neither read nor write what the kernel does: they run as a loop of their own first.
struct StripKernel {
    /// The kernel's index in `Prepared::ops`.
    op: usize,
    /// The carries it writes.
    mine: Vec<usize>,
    step: usize,
    /// Per kernel input: `Ok(j)` const input `j` of the body, `Err(c)` carry `c`.
    ins: Vec<std::result::Result<usize, usize>>,
    /// Per kernel output: its slot (a carry's output).
    outs: Vec<usize>,
}

/// Points per strip: the carries of a strip (a few arrays of 4-8 bytes a point, two buffers each) stay in
/// L1/L2.
const STRIP_POINTS: u64 = 2048;
/// Below this many points a scan runs whole iterations (a strip would be the whole array anyway).
const STRIP_MIN_POINTS: u64 = 2 * STRIP_POINTS;

/// `StripKernel` for a scan body with `nc` consts and `nk` carries, when it qualifies.
fn strip_kernel(b: &Prepared, nc: usize, nk: usize, ny: usize) -> Option<StripKernel> {
    let p = b.plan();
    if ny != 0 || p.num_inputs != nc + nk {
        return None;
    }
    // the one kernel of at least `STRIP_MIN_POINTS` points; every other step a smaller kernel or a view
    let big = |step: usize| b.exe.kernels.get(step).and_then(|k| k.as_ref()).is_some_and(|ck| ck.outer_len >= STRIP_MIN_POINTS);
    let mut found = None;
    for (i, o) in b.ops.iter().enumerate() {
        match o {
            Op::Kernel { step, .. } if big(*step) => {
                if found.replace(i).is_some() {
                    return None;
                }
            }
            Op::Kernel { .. } | Op::View { .. } => {}
            _ => return None,
        }
    }
    let op = found?;
    let Op::Kernel { step, ref ins, ref outs, .. } = b.ops[op] else { return None };
    let Step::Kernel(k) = &p.steps[step] else { return None };
    let ck = b.exe.kernels.get(step)?.as_ref()?;
    if !k.reduce_axes.is_empty() || ck.partial.is_some() {
        return None;
    }
    let points: usize = k.domain.iter().product();
    if ck.outer_len != points as u64 || k.outputs.iter().any(|o| o.kind != crate::plan::OutputKind::Store) {
        return None;
    }
    // every output is a carry's; `mine`: the carries it writes
    let mine: Vec<usize> = (0..nk).filter(|&c| outs.contains(&p.outputs[c])).collect();
    if mine.is_empty() || outs.iter().any(|o| !p.outputs[..nk].contains(o)) {
        return None;
    }
    // the other steps read none of `mine` and nothing the kernel writes, and write none of its outputs; the
    // other carries are none of those either
    let touches = |s: usize| [s, b.root[s]].iter().any(|&r| outs.contains(&r) || mine.iter().any(|&c| r == nc + c));
    for (_, o) in b.ops.iter().enumerate().filter(|&(i, _)| i != op) {
        let bad = match o {
            Op::Kernel { ins: oi, outs: oo, .. } => oi.iter().any(|&s| touches(s)) || oo.iter().any(|s| outs.contains(s)),
            Op::View { src, dst } => touches(*src) || outs.contains(dst),
            _ => true,
        };
        if bad {
            return None;
        }
    }
    if (0..nk).filter(|c| !mine.contains(c)).any(|c| touches(p.outputs[c])) {
        return None;
    }
    // carries read at the point written: row-major strides of the domain, no offset, not gathered
    let mut row_major = vec![0isize; k.domain.len()];
    let mut st = 1isize;
    for d in (0..k.domain.len()).rev() {
        row_major[d] = if k.domain[d] == 1 { row_major[d] } else { st };
        st *= k.domain[d] as isize;
    }
    let mut kins = Vec::with_capacity(ins.len());
    for (j, (inp, &s)) in k.inputs.iter().zip(ins).enumerate() {
        if s < nc {
            kins.push(Ok(s));
        } else if s < nc + nk {
            let same = inp.offset == 0
                && inp.strides.iter().zip(&row_major).zip(&k.domain).all(|((a, b), &n)| n == 1 || a == b)
                && !k.gathers_from(j);
            if !same || p.slots[s].numel() != Some(points) {
                return None;
            }
            if !mine.contains(&(s - nc)) {
                return None;
            }
            kins.push(Err(s - nc));
        } else {
            return None;
        }
    }
    Some(StripKernel { op, mine, step, ins: kins, outs: outs.clone() })
}

fn disabled() -> bool {
    std::env::var_os("CRANAX_NO_DIRECT_LOOPS").is_some_and(|v| v == "1")
}

/// The in-place form of control step `c` whose sub-plans compiled to `subs`, when it qualifies.
pub fn prepare(c: &ControlStep, subs: &[Arc<CpuExecutable>]) -> Result<Option<DirectLoop>> {
    if disabled() {
        return Ok(None);
    }
    match c {
        ControlStep::Scan { consts, init, outputs, .. } => {
            let Some(exe) = subs.first() else { return Ok(None) };
            let (nc, nk) = (consts.len(), init.len());
            let carried: Vec<usize> = (0..nk).collect();
            let ys: Vec<usize> = (nk..outputs.len()).collect();
            let Some(body) = Prepared::new(exe, &carried, &ys, Some(nc))? else { return Ok(None) };
            let copy = rotated(&body, nc, nk);
            let strip = strip_kernel(&body, nc, nk, ys.len());
            Ok(Some(DirectLoop::Scan(DirectScan { body, nconsts: nc, ncarry: nk, copy, strip })))
        }
        ControlStep::While { cond_consts, body_consts, init, .. } => {
            let (Some(cexe), Some(bexe)) = (subs.first(), subs.get(1)) else { return Ok(None) };
            let (nb, nk) = (body_consts.len(), init.len());
            let Some(cond) = Prepared::new(cexe, &[], &[], None)? else { return Ok(None) };
            let Some(body) = Prepared::new(bexe, &(0..nk).collect::<Vec<_>>(), &[], Some(nb))? else { return Ok(None) };
            let copy = rotated(&body, nb, nk);
            Ok(Some(DirectLoop::While(DirectWhile { cond, body, ncond: cond_consts.len(), nbody: nb, ncarry: nk, copy })))
        }
        ControlStep::Cond { .. } => Ok(None),
    }
}

/// Per carry of a body whose inputs are `nc` consts then `nk` carries: whether its new value is another
/// carry's old value (and must be copied; see the module docs).
fn rotated(body: &Prepared, nc: usize, nk: usize) -> Vec<bool> {
    let p = body.plan();
    (0..nk)
        .map(|c| {
            let r = body.root[p.outputs[c]];
            r >= nc && r < nc + nk && r != nc + c
        })
        .collect()
}

/// Two buffers per rotated carry (`copy[c]`), as addresses, and the buffers that own them.
fn carry_stores(p: &Plan, first: usize, copy: &[bool]) -> Result<(Vec<[usize; 2]>, Vec<Buffer>)> {
    let mut at = vec![[0usize; 2]; copy.len()];
    let mut bufs = Vec::new();
    for c in (0..copy.len()).filter(|&c| copy[c]) {
        for par in 0..2 {
            let buf = Buffer::uninit(&p.slots[first + c])?;
            at[c][par] = buf.as_ptr() as usize;
            bufs.push(buf);
        }
    }
    Ok((at, bufs))
}

/// The carries after an iteration of parity `par`: the body outputs' addresses, rotated ones copied.
///
/// # Safety
/// The frame holds the iteration's addresses; `store_at` are buffers of the carries' sizes.
unsafe fn next_carries(b: &Prepared, f: &Frame, first: usize, copy: &[bool], store_at: &[[usize; 2]], par: usize, carry: &mut [usize]) {
    let p = b.plan();
    for (c, v) in carry.iter_mut().enumerate() {
        let src = f.ptr[p.outputs[c]];
        *v = if copy[c] {
            // `store_at[c][par]` is not `src`: that is another carry's buffer from the previous iteration
            // (parity `1 - par`) or an input.
            copy_bytes(src, store_at[c][par], b.bytes[first + c]);
            store_at[c][par]
        } else {
            src
        };
    }
}

/// Fresh buffers of `avals` holding the bytes at the carries' addresses.
///
/// # Safety
/// Each address holds its aval's bytes.
unsafe fn carry_buffers(carry: &[usize], avals: &[Aval]) -> Result<Vec<Buffer>> {
    carry
        .iter()
        .zip(avals)
        .map(|(&a, aval)| Buffer::from_bytes(aval, std::slice::from_raw_parts(a as *const u8, Buffer::byte_len(aval)?)))
        .collect()
}

/// The loop's own copies of the initial values of the carries written in place (`Prepared::in_place`),
/// pointed at by `carry`.
fn own_carries(b: &Prepared, first: usize, init: &[Buffer], carry: &mut [usize]) -> Result<Vec<Option<Buffer>>> {
    let p = b.plan();
    let mut out = Vec::with_capacity(carry.len());
    for (c, a) in carry.iter_mut().enumerate() {
        if !b.in_place.get(c).copied().unwrap_or(false) {
            out.push(None);
            continue;
        }
        let n = b.bytes[first + c];
        let src = init.get(c).ok_or_else(|| Error::Execution("loop carry missing".into()))?;
        check(src, n, "carry")?;
        let buf = Buffer::from_bytes(&p.slots[first + c], &src.as_bytes()[..n])?;
        *a = buf.as_ptr() as usize;
        out.push(Some(buf));
    }
    Ok(out)
}

/// The final carries as buffers of `avals`: a carry still in the loop's own buffer is that buffer, the
/// others are copied (`carry_buffers`).
///
/// # Safety
/// As for `carry_buffers`.
unsafe fn final_carries(carry: &[usize], avals: &[Aval], own: Vec<Option<Buffer>>) -> Result<Vec<Buffer>> {
    let mut out = Vec::with_capacity(carry.len());
    for ((&a, aval), o) in carry.iter().zip(avals).zip(own.into_iter().chain(std::iter::repeat_with(|| None))) {
        out.push(match o {
            Some(b) if b.as_ptr() as usize == a && b.aval.numel() == aval.numel() && b.aval.dtype == aval.dtype => b.view(aval),
            _ => carry_buffers(&[a], std::slice::from_ref(aval))?.pop().ok_or_else(|| Error::Execution("loop carry missing".into()))?,
        });
    }
    Ok(out)
}

fn check(b: &Buffer, bytes: usize, what: &str) -> Result<()> {
    if b.storage.len() < bytes {
        return Err(Error::Execution(format!("loop {what} buffer is too small")));
    }
    Ok(())
}

/// # Safety
/// `src` and `dst` hold `n` bytes and do not overlap.
unsafe fn copy_bytes(src: usize, dst: usize, n: usize) {
    std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, n)
}

impl DirectScan {
    /// Runs the scan: `length` iterations over `consts`, `init` and the rows of `xs`; returns the final
    /// carries then the stacked ys, as fresh buffers of `out_avals`.
    pub fn run(
        &self, consts: &[Buffer], init: &[Buffer], xs: &[Buffer], length: usize, reverse: bool, out_avals: &[Aval],
    ) -> Result<Vec<Buffer>> {
        let b = &self.body;
        let p = b.plan();
        let (nc, nk, nx) = (self.nconsts, self.ncarry, xs.len());
        if consts.len() != nc || init.len() != nk || nc + nk + nx != p.num_inputs || out_avals.len() != p.outputs.len() {
            return Err(Error::Execution("scan: operands do not match the body".into()));
        }
        let ys = out_avals[nk..].iter().map(Buffer::uninit).collect::<Result<Vec<_>>>()?;
        if length == 0 {
            return Ok(init.iter().cloned().chain(ys).collect());
        }
        let ysz: Vec<usize> = p.outputs[nk..].iter().map(|&s| b.bytes[s]).collect();
        let xsz: Vec<usize> = (0..nx).map(|j| b.bytes[nc + nk + j]).collect();
        for (j, c) in consts.iter().enumerate() {
            check(c, b.bytes[j], "const")?;
        }
        for (j, c) in init.iter().enumerate() {
            check(c, b.bytes[nc + j], "carry")?;
        }
        for (x, &sz) in xs.iter().zip(&xsz) {
            check(x, sz.saturating_mul(length), "xs")?;
        }
        for (y, &sz) in ys.iter().zip(&ysz) {
            check(y, sz.saturating_mul(length), "ys")?;
        }
        let mut f = b.frame()?;
        let (store_at, _store) = carry_stores(p, nc, &self.copy)?;
        for (j, c) in consts.iter().enumerate() {
            f.ptr[j] = c.as_ptr() as usize;
        }
        let mut carry: Vec<usize> = init.iter().map(|c| c.as_ptr() as usize).collect();
        if let (Some(sk), 0) = (&self.strip, nx) {
            // the other steps' own loop (`StripKernel`: they never see the kernel's carries), then the strips
            if b.ops.len() > 1 || sk.mine.len() < nk {
                for t in 0..length {
                    let par = t & 1;
                    f.ptr[nc..nc + nk].copy_from_slice(&carry);
                    // SAFETY: as below; the skipped kernel's slots are read by no other step.
                    unsafe {
                        f.step_except(b, par, &[], Some(sk.op))?;
                        next_carries(b, &f, nc, &self.copy, &store_at, par, &mut carry);
                    }
                }
            }
            // SAFETY: consts and init hold their slots' bytes (checked above), the frame's buffers those of
            // the kernel's outputs; all live until return.
            let strips = unsafe { self.run_strips(sk, &f, consts, init, length)? };
            for &c in &sk.mine {
                carry[c] = strips[c];
            }
            // SAFETY: as below.
            let mut outs = unsafe { carry_buffers(&carry, &out_avals[..nk])? };
            outs.extend(ys);
            return Ok(outs);
        }
        let own = own_carries(b, nc, init, &mut carry)?;
        let mut yrow = vec![0usize; ys.len()];
        for t in 0..length {
            let i = if reverse { length - 1 - t } else { t };
            let par = t & 1;
            f.ptr[nc..nc + nk].copy_from_slice(&carry);
            for (j, x) in xs.iter().enumerate() {
                f.ptr[nc + nk + j] = x.as_ptr() as usize + i * xsz[j];
            }
            for (r, (y, &sz)) in yrow.iter_mut().zip(ys.iter().zip(&ysz)) {
                *r = y.as_ptr() as usize + i * sz;
            }
            // SAFETY: every input address holds its slot's bytes (checked above); the buffers live until the
            // end of this function.
            unsafe { f.step(b, par, &yrow)? };
            for (j, &o) in p.outputs[nk..].iter().enumerate() {
                if b.homes[o] != Some(Home::Y(j)) {
                    // SAFETY: the output holds `ysz[j]` bytes; row `i` of y `j` is a distinct buffer region.
                    unsafe { copy_bytes(f.ptr[o], yrow[j], ysz[j]) };
                }
            }
            // SAFETY: the frame holds this iteration's addresses.
            unsafe { next_carries(b, &f, nc, &self.copy, &store_at, par, &mut carry) };
        }
        super::counters::SUBPLAN_RUNS.fetch_add(length as u64, Ordering::Relaxed);
        super::counters::DIRECT_LOOP_CALLS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the final carries' addresses hold their bytes, in buffers alive until return.
        let mut outs = unsafe { final_carries(&carry, &out_avals[..nk], own)? };
        b.give_back(f);
        outs.extend(ys);
        Ok(outs)
    }
}

impl DirectScan {
    /// All `length` iterations strip by strip (`StripKernel`); returns the final carries' addresses (in the
    /// frame's buffers).
    ///
    /// # Safety
    /// `consts` and `init` hold the body inputs' bytes; `f` was built for this body.
    unsafe fn run_strips(&self, sk: &StripKernel, f: &Frame, consts: &[Buffer], init: &[Buffer], length: usize) -> Result<Vec<usize>> {
        let b = &self.body;
        let p = b.plan();
        let ck = b.exe.kernels[sk.step].as_ref().ok_or_else(|| Error::Execution("kernel not compiled".into()))?;
        let (entry, n) = (ck.entry, ck.outer_len);
        let consts: Vec<usize> = consts.iter().map(|c| c.as_ptr() as usize).collect();
        let init: Vec<usize> = init.iter().map(|c| c.as_ptr() as usize).collect();
        // carry c's two buffers (iteration t writes `homes[c][t & 1]`), and each output's
        let out_home: Vec<[usize; 2]> = sk.outs.iter().map(|&o| f.home[o]).collect();
        let carry_home: Vec<[usize; 2]> = (0..self.ncarry).map(|c| f.home[p.outputs[c]]).collect();
        let strips = n.div_ceil(STRIP_POINTS);
        let run = |q: u64| {
            let (begin, end) = (q * STRIP_POINTS, ((q + 1) * STRIP_POINTS).min(n));
            let mut ins: Vec<*const u8> = vec![std::ptr::null(); sk.ins.len()];
            let mut outs: Vec<*mut u8> = vec![std::ptr::null_mut(); sk.outs.len()];
            for t in 0..length {
                for (a, i) in ins.iter_mut().zip(&sk.ins) {
                    *a = match *i {
                        Ok(j) => consts[j],
                        Err(c) if t == 0 => init[c],
                        Err(c) => carry_home[c][(t - 1) & 1],
                    } as *const u8;
                }
                for (a, h) in outs.iter_mut().zip(&out_home) {
                    *a = h[t & 1] as *mut u8;
                }
                // SAFETY: the kernel's buffers (caller); `[begin, end)` lies in `[0, outer_len)`, and this
                // strip's points are written by this call alone.
                unsafe { entry(ins.as_ptr(), outs.as_ptr(), begin, end) };
            }
        };
        super::threads::parallel(|split| {
            if split && strips >= 2 {
                use rayon::prelude::*;
                (0..strips).into_par_iter().for_each(run);
            } else {
                (0..strips).for_each(run);
            }
        });
        super::counters::SUBPLAN_RUNS.fetch_add(length as u64, Ordering::Relaxed);
        super::counters::DIRECT_LOOP_CALLS.fetch_add(1, Ordering::Relaxed);
        super::counters::STRIP_LOOP_CALLS.fetch_add(1, Ordering::Relaxed);
        Ok(carry_home.iter().map(|h| h[(length - 1) & 1]).collect())
    }
}

/// A prepared while loop: cond and body, and the body's carries that must be copied each iteration.
pub struct DirectWhile {
    cond: Prepared,
    body: Prepared,
    ncond: usize,
    nbody: usize,
    ncarry: usize,
    copy: Vec<bool>,
}

impl DirectWhile {
    /// Runs the loop from `init`; returns the final carries as fresh buffers of `out_avals`.
    pub fn run(&self, cond_consts: &[Buffer], body_consts: &[Buffer], init: &[Buffer], out_avals: &[Aval]) -> Result<Vec<Buffer>> {
        let (cp, bp) = (self.cond.plan(), self.body.plan());
        let (ncc, nb, nk) = (self.ncond, self.nbody, self.ncarry);
        if cond_consts.len() != ncc || body_consts.len() != nb || init.len() != nk || out_avals.len() != nk
            || cp.num_inputs != ncc + nk || bp.num_inputs != nb + nk || cp.outputs.len() != 1
        {
            return Err(Error::Execution("while: operands do not match the cond and body".into()));
        }
        for (j, c) in cond_consts.iter().enumerate() {
            check(c, self.cond.bytes[j], "const")?;
        }
        for (j, c) in body_consts.iter().enumerate() {
            check(c, self.body.bytes[j], "const")?;
        }
        for (j, c) in init.iter().enumerate() {
            check(c, self.body.bytes[nb + j], "carry")?;
        }
        let mut cf = self.cond.frame()?;
        for (j, c) in cond_consts.iter().enumerate() {
            cf.ptr[j] = c.as_ptr() as usize;
        }
        let mut carry: Vec<usize> = init.iter().map(|c| c.as_ptr() as usize).collect();
        // The body's frame, rotation buffers and own carries are made at the first iteration (a loop that
        // runs none, as a second Gram-Schmidt pass mostly does, needs only the cond's).
        let mut body: Option<(Frame, Vec<[usize; 2]>, Vec<Buffer>)> = None;
        let mut own = Vec::new();
        let mut t = 0usize;
        loop {
            cf.ptr[ncc..ncc + nk].copy_from_slice(&carry);
            // SAFETY: the inputs hold their slots' bytes (checked above; carries are the body's outputs);
            // the predicate is a bool scalar (validated), one byte.
            let go = unsafe {
                cf.step(&self.cond, 0, &[])?;
                *(cf.ptr[cp.outputs[0]] as *const u8) != 0
            };
            if !go {
                break;
            }
            if body.is_none() {
                let mut bf = self.body.frame()?;
                for (j, c) in body_consts.iter().enumerate() {
                    bf.ptr[j] = c.as_ptr() as usize;
                }
                let (store_at, store) = carry_stores(bp, nb, &self.copy)?;
                own = own_carries(&self.body, nb, init, &mut carry)?;
                body = Some((bf, store_at, store));
            }
            let Some((bf, store_at, _)) = body.as_mut() else { return Err(Error::Execution("while: no body frame".into())) };
            bf.ptr[nb..nb + nk].copy_from_slice(&carry);
            let par = t & 1;
            // SAFETY: as above.
            unsafe {
                bf.step(&self.body, par, &[])?;
                next_carries(&self.body, bf, nb, &self.copy, store_at, par, &mut carry);
            }
            t += 1;
        }
        super::counters::SUBPLAN_RUNS.fetch_add(2 * t as u64 + 1, Ordering::Relaxed);
        super::counters::DIRECT_LOOP_CALLS.fetch_add(1, Ordering::Relaxed);
        let outs = match body {
            // no iteration: the initial values themselves
            None => Ok(init.iter().zip(out_avals).map(|(b, a)| b.view(a)).collect()),
            // SAFETY: the final carries' addresses hold their bytes, in buffers alive until return.
            Some(_) => unsafe { final_carries(&carry, out_avals, own) },
        };
        if let Some((bf, _, _)) = body {
            self.body.give_back(bf);
        }
        self.cond.give_back(cf);
        outs
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;

    use crate::ir::{Aval, DType};
    use crate::buffer::Buffer;

    fn f32s(shape: &[usize], v: &[f32]) -> Buffer {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        Buffer::from_bytes(&Aval::new(DType::F32, shape.to_vec()), &bytes).unwrap()
    }
    fn read(b: &Buffer) -> Vec<f32> {
        b.as_bytes().chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
    fn run(json: &str, ins: &[Buffer]) -> Vec<Buffer> {
        let (_, plan) = crate::opt::compile_pipeline(json).unwrap();
        // these small scans would be fused whole; this module tests the in-place path
        crate::backend::cpu::scalar_loop::NO_FUSED_LOOPS.with(|c| c.set(true));
        let exe = crate::backend::cpu::compile(&plan).unwrap();
        let before = super::super::counters::DIRECT_LOOP_CALLS.load(Relaxed);
        let out = exe.run(ins).unwrap();
        assert!(super::super::counters::DIRECT_LOOP_CALLS.load(Relaxed) > before, "the scan did not run in place");
        out
    }

    /// `h = tanh(h @ w + x @ u)` over 5 steps (both directions), against a plain loop.
    #[test]
    fn rnn_cell_scan_runs_in_place() {
        let json = |rev: bool| {
            format!(
                r#"{{"invars": [[0, "f32", [3, 3]], [1, "f32", [2, 3]], [2, "f32", [3]], [3, "f32", [5, 2]]], "eqns": [
                {{"prim": "scan", "params": {{"num_consts": 2, "num_carry": 1, "length": 5, "reverse": {rev},
                  "jaxpr": {{"invars": [[0, "f32", [3, 3]], [1, "f32", [2, 3]], [2, "f32", [3]], [3, "f32", [2]]], "eqns": [
                     {{"prim": "dot_general", "params": {{"lhs_contracting": [0], "rhs_contracting": [0], "lhs_batch": [], "rhs_batch": []}}, "in": [2, 0], "out": [[4, "f32", [3]]]}},
                     {{"prim": "dot_general", "params": {{"lhs_contracting": [0], "rhs_contracting": [0], "lhs_batch": [], "rhs_batch": []}}, "in": [3, 1], "out": [[5, "f32", [3]]]}},
                     {{"prim": "add", "in": [4, 5], "out": [[6, "f32", [3]]]}},
                     {{"prim": "tanh", "in": [6], "out": [[7, "f32", [3]]]}}],
                   "outvars": [7, 7]}}}},
                 "in": [0, 1, 2, 3], "out": [[4, "f32", [3]], [5, "f32", [5, 3]]]}}], "outvars": [4, 5]}}"#
            )
        };
        let w: Vec<f32> = (0..9).map(|i| (i as f32 - 4.0) * 0.2).collect();
        let u: Vec<f32> = (0..6).map(|i| (i as f32 * 0.7).sin()).collect();
        let xs: Vec<f32> = (0..10).map(|i| (i as f32 * 1.3).cos()).collect();
        for rev in [false, true] {
            let out = run(&json(rev), &[f32s(&[3, 3], &w), f32s(&[2, 3], &u), f32s(&[3], &[0.1, -0.2, 0.3]), f32s(&[5, 2], &xs)]);
            let mut h = [0.1f64, -0.2, 0.3];
            let mut hs = vec![0f64; 15];
            for t in 0..5 {
                let i = if rev { 4 - t } else { t };
                let mut nh = [0f64; 3];
                for (j, v) in nh.iter_mut().enumerate() {
                    let a: f64 = (0..3).map(|l| h[l] * w[l * 3 + j] as f64).sum();
                    let b: f64 = (0..2).map(|l| xs[i * 2 + l] as f64 * u[l * 3 + j] as f64).sum();
                    *v = (a + b).tanh();
                }
                h = nh;
                hs[i * 3..i * 3 + 3].copy_from_slice(&h);
            }
            for (got, want) in read(&out[0]).iter().zip(&h).chain(read(&out[1]).iter().zip(&hs)) {
                assert!((*got as f64 - want).abs() < 1e-5, "{got} vs {want} (reverse={rev})");
            }
        }
    }

    /// A `fori_loop` over a big elementwise update (`x * 0.99 + 1` on f32[5000], contracted to one `fma`)
    /// beside its counter, and a scan whose other carries rotate with no step at all: the kernel runs strip
    /// by strip, the counter and the rotation in their own loop; values as a plain loop's.
    #[test]
    fn strip_kernel_beside_a_counter_and_rotating_carries() {
        let n = 5000;
        let x0: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 10.0).collect();
        let want = |len: usize| -> Vec<f32> {
            let mut x = x0.clone();
            for _ in 0..len {
                x.iter_mut().for_each(|v| *v = v.mul_add(0.99, 1.0));
            }
            x
        };
        let counter = format!(
            r#"{{"invars": [[0, "i32", []], [1, "f32", [{n}]]], "eqns": [
            {{"prim": "scan", "params": {{"num_consts": 0, "num_carry": 2, "length": 37, "reverse": false,
              "jaxpr": {{"invars": [[0, "i32", []], [1, "f32", [{n}]]], "eqns": [
                 {{"prim": "add", "in": [0, {{"lit": 1, "dtype": "i32"}}], "out": [[2, "i32", []]]}},
                 {{"prim": "mul", "in": [1, {{"lit": 0.99, "dtype": "f32"}}], "out": [[3, "f32", [{n}]]]}},
                 {{"prim": "add", "in": [3, {{"lit": 1.0, "dtype": "f32"}}], "out": [[4, "f32", [{n}]]]}}],
               "outvars": [2, 4]}}}},
             "in": [0, 1], "out": [[2, "i32", []], [3, "f32", [{n}]]]}}], "outvars": [2, 3]}}"#
        );
        let i0 = Buffer::from_bytes(&Aval::new(DType::I32, vec![]), &5i32.to_le_bytes()).unwrap();
        let before = super::super::counters::STRIP_LOOP_CALLS.load(Relaxed);
        let out = run(&counter, &[i0, f32s(&[n], &x0)]);
        assert!(super::super::counters::STRIP_LOOP_CALLS.load(Relaxed) > before, "the kernel did not run in strips");
        assert_eq!(out[0].as_bytes(), 42i32.to_le_bytes());
        assert_eq!(read(&out[1]), want(37));
        // (x, a, b) -> (x * 0.99 + 1, b, a), 5 steps: a and b end swapped
        let rot = format!(
            r#"{{"invars": [[0, "f32", [{n}]], [1, "f32", [2]], [2, "f32", [2]]], "eqns": [
            {{"prim": "scan", "params": {{"num_consts": 0, "num_carry": 3, "length": 5, "reverse": false,
              "jaxpr": {{"invars": [[0, "f32", [{n}]], [1, "f32", [2]], [2, "f32", [2]]], "eqns": [
                 {{"prim": "mul", "in": [0, {{"lit": 0.99, "dtype": "f32"}}], "out": [[3, "f32", [{n}]]]}},
                 {{"prim": "add", "in": [3, {{"lit": 1.0, "dtype": "f32"}}], "out": [[4, "f32", [{n}]]]}}],
               "outvars": [4, 2, 1]}}}},
             "in": [0, 1, 2], "out": [[3, "f32", [{n}]], [4, "f32", [2]], [5, "f32", [2]]]}}], "outvars": [3, 4, 5]}}"#
        );
        let before = super::super::counters::STRIP_LOOP_CALLS.load(Relaxed);
        let out = run(&rot, &[f32s(&[n], &x0), f32s(&[2], &[1.0, 2.0]), f32s(&[2], &[3.0, 4.0])]);
        assert!(super::super::counters::STRIP_LOOP_CALLS.load(Relaxed) > before, "the kernel did not run in strips");
        assert_eq!(read(&out[0]), want(5));
        assert_eq!(read(&out[1]), [3.0, 4.0]);
        assert_eq!(read(&out[2]), [1.0, 2.0]);
    }

    /// Carries that rotate (`(a, b) -> (b, a + b)`), pass through unchanged, or become a view of a kernel
    /// output; ys that are an input carry, a const, an xs row and the same value twice.
    #[test]
    fn rotating_and_passthrough_carries_and_copied_ys() {
        // carries (a, b, k, d), const c, xs x: (a, b, k, d) -> (b, s, k, d + 1 + s) with s = a + b computed
        // as [1, 2] and viewed back as [2]; ys (a, c, x, s, s).
        let json = r#"{"invars": [[0, "f32", [2]], [1, "f32", [2]], [2, "f32", [2]], [3, "f32", [1, 2]], [4, "f32", [6, 2]]], "eqns": [
            {"prim": "scan", "params": {"num_consts": 1, "num_carry": 4, "length": 6,
              "jaxpr": {"invars": [[0, "f32", [2]], [1, "f32", [2]], [2, "f32", [2]], [3, "f32", [2]], [4, "f32", [1, 2]], [5, "f32", [2]]], "eqns": [
                 {"prim": "reshape", "params": {"new_sizes": [1, 2], "dimensions": null}, "in": [1], "out": [[10, "f32", [1, 2]]]},
                 {"prim": "reshape", "params": {"new_sizes": [1, 2], "dimensions": null}, "in": [2], "out": [[11, "f32", [1, 2]]]},
                 {"prim": "add", "in": [10, 11], "out": [[8, "f32", [1, 2]]]},
                 {"prim": "reshape", "params": {"new_sizes": [2], "dimensions": null}, "in": [8], "out": [[6, "f32", [2]]]},
                 {"prim": "add", "in": [4, {"lit": 1.0, "dtype": "f32"}], "out": [[7, "f32", [1, 2]]]},
                 {"prim": "add", "in": [7, 8], "out": [[9, "f32", [1, 2]]]}],
               "outvars": [2, 6, 3, 9, 1, 0, 5, 6, 6]}},
             "in": [0, 1, 2, 2, 3, 4],
             "out": [[5, "f32", [2]], [6, "f32", [2]], [7, "f32", [2]], [8, "f32", [1, 2]],
                     [9, "f32", [6, 2]], [10, "f32", [6, 2]], [11, "f32", [6, 2]], [12, "f32", [6, 2]], [13, "f32", [6, 2]]]}],
          "outvars": [5, 6, 7, 8, 9, 10, 11, 12, 13]}"#;
        let c = [5.0f32, 7.0];
        let xs: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let out = run(json, &[f32s(&[2], &c), f32s(&[2], &[0.0, 1.0]), f32s(&[2], &[1.0, 1.0]), f32s(&[1, 2], &[0.5, 0.25]), f32s(&[6, 2], &xs)]);
        let (mut a, mut b, k, mut d) = ([0.0f32, 1.0], [1.0f32, 1.0], [1.0f32, 1.0], [0.5f32, 0.25]);
        let mut ys: Vec<Vec<f32>> = vec![vec![]; 5];
        for i in 0..6 {
            let s = [a[0] + b[0], a[1] + b[1]];
            let nd = [d[0] + 1.0 + s[0], d[1] + 1.0 + s[1]];
            for (y, v) in ys.iter_mut().zip([a, c, [xs[2 * i], xs[2 * i + 1]], s, s]) {
                y.extend(v);
            }
            (a, b, d) = (b, s, nd);
        }
        assert_eq!(read(&out[0]), a);
        assert_eq!(read(&out[1]), b);
        assert_eq!(read(&out[2]), k);
        assert_eq!(read(&out[3]), d);
        for (j, y) in ys.iter().enumerate() {
            assert_eq!(&read(&out[4 + j]), y, "y {j}");
        }
    }
}
