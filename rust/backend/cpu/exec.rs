//! Running a compiled plan on buffers.
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::LibOp;
use crate::plan::{LibStep, Plan, Step};

use super::CpuExecutable;
use super::validate::aval_str;

pub fn run(exe: &CpuExecutable, inputs: &[Buffer]) -> Result<Vec<Buffer>> {
    run_owned(exe, inputs.iter().cloned())
}

/// `run` taking the inputs over: an input whose handle the caller gave up is held by this run alone, so a
/// scatter reading it last writes into it (a loop's carry from one iteration to the next, see
/// `control::run_step`) instead of copying it.
pub fn run_owned(exe: &CpuExecutable, inputs: impl ExactSizeIterator<Item = Buffer>) -> Result<Vec<Buffer>> {
    run_into(exe, inputs, &mut Vec::new())
}

/// An input buffer a kernel step writes one of its outputs into (`CpuExecutable::run_aliased`): output
/// slot `slot` of step `step` takes over `buf`, the storage of input slot `input`.
pub(super) struct WriteInto {
    pub step: usize,
    pub slot: usize,
    pub input: usize,
    pub buf: Buffer,
}

/// `run_owned` writing the outputs `into` names into the given input buffers instead of fresh ones.
pub(super) fn run_into(exe: &CpuExecutable, inputs: impl ExactSizeIterator<Item = Buffer>, into: &mut Vec<WriteInto>) -> Result<Vec<Buffer>> {
    let plan = &exe.plan;
    if inputs.len() != plan.num_inputs {
        return Err(Error::Arguments(format!("{} expects {} inputs, got {}", plan.name, plan.num_inputs, inputs.len())));
    }
    let mut scratch = Scratch::take(plan.slots.len());
    let Scratch { slots, ins, outs, out_ptrs, out_bytes } = &mut *scratch;
    for (i, b) in inputs.enumerate() {
        let want = &plan.slots[i];
        if &b.aval != want {
            return Err(Error::Arguments(format!(
                "input {i} of {}: expected {}, got {}",
                plan.name,
                aval_str(want),
                aval_str(&b.aval)
            )));
        }
        // Guard against a buffer whose storage is smaller than its aval (a bad view): kernels trust sizes.
        let bytes = want.numel().unwrap_or(usize::MAX).saturating_mul(want.dtype.size());
        if b.storage.len() < bytes {
            return Err(Error::Arguments(format!(
                "input {i} of {}: {} needs {bytes} bytes, its storage has {}",
                plan.name,
                aval_str(want),
                b.storage.len()
            )));
        }
        slots[i] = Some(b);
    }
    let mut steps = plan.steps.iter().enumerate();
    while let Some((si, step)) = steps.next() {
        if let Some(chain) = exe.chains.get(si).and_then(Option::as_ref) {
            super::row_chain::run(plan, &exe.kernels, chain, slots)?;
            for sj in si..chain.end {
                release(exe, sj, slots);
            }
            if chain.end > si + 1 {
                steps.nth(chain.end - si - 2); // the chain's other steps ran too
            }
            continue;
        }
        if let (Step::Library(a), Some(Step::Library(b))) = (step, plan.steps.get(si + 1)) {
            if independent_products(plan, a, b) {
                run_pair(plan, a, b, slots)?;
                steps.next(); // `b` ran too
                release(exe, si, slots);
                release(exe, si + 1, slots);
                continue;
            }
        }
        match step {
            Step::View { src, dst } => {
                let v = slots[*src].as_ref().ok_or_else(|| missing(*src))?.view(&plan.slots[*dst]);
                slots[*dst] = Some(v);
            }
            Step::Control(c) => {
                let cc = exe.controls[si].as_ref().ok_or_else(|| Error::Execution(format!("step {si} not compiled")))?;
                super::control::run_step(plan, c, cc, slots)?;
            }
            Step::Library(l) if exe.fused[si].is_some() => {
                run_with_epilogue(exe, si, l, slots)?;
                steps.next(); // the epilogue kernel ran too
                release(exe, si, slots);
                release(exe, si + 1, slots);
                continue;
            }
            Step::Library(l) if matches!(l.op, LibOp::Scatter { .. }) && l.inputs.len() == 3 && dead_operand(exe, si, l, slots) => {
                // The operand's buffer becomes the result: no copy (XLA's in-place scatter of a dead operand).
                let buf = slots[l.inputs[0]].take().ok_or_else(|| missing(l.inputs[0]))?;
                let (Some(i), Some(u)) = (slots[l.inputs[1]].as_ref(), slots[l.inputs[2]].as_ref()) else {
                    return Err(missing(l.inputs[1]));
                };
                let res = super::library::scatter_in_place(&l.op, buf, i, u)
                    .ok_or_else(|| Error::Execution("scatter step is not a scatter".into()))??;
                slots[l.outputs[0]] = Some(res);
            }
            Step::Library(l) if matches!(l.op, LibOp::DynamicUpdateSlice) && dead_operand(exe, si, l, slots) => {
                // Only the window is written (a loop's carried accumulator updated where it lies, see
                // `opt::pad_add`).
                let buf = slots[l.inputs[0]].take().ok_or_else(|| missing(l.inputs[0]))?;
                let mut refs: Vec<&Buffer> = Vec::with_capacity(l.inputs.len() - 1);
                for &s in &l.inputs[1..] {
                    refs.push(slots[s].as_ref().ok_or_else(|| missing(s))?);
                }
                let res = super::library::update_slice_in_place(&l.op, buf, &refs)
                    .ok_or_else(|| Error::Execution("update step is not a dynamic_update_slice".into()))??;
                slots[l.outputs[0]] = Some(res);
            }
            Step::Library(l) => {
                // The operands by reference and the output avals built at compile time: no clones per run.
                let outs = {
                    let mut refs: Vec<&Buffer> = Vec::with_capacity(l.inputs.len());
                    for &s in &l.inputs {
                        refs.push(slots[s].as_ref().ok_or_else(|| missing(s))?);
                    }
                    super::library::run(&l.op, &refs, &exe.lib_avals[si])?
                };
                store(l, outs, slots);
            }
            Step::Kernel(k) => {
                let cache = exe.consts.get(si).and_then(Option::as_ref);
                if let Some(bufs) = cache.and_then(|c| c.get()) {
                    for (o, buf) in k.outputs.iter().zip(bufs) {
                        slots[o.slot] = Some(buf.clone());
                    }
                    release(exe, si, slots);
                    continue;
                }
                let ck = exe.kernels[si].as_ref().ok_or_else(|| Error::Execution(format!("step {si} not compiled")))?;
                ins.clear();
                for inp in &k.inputs {
                    ins.push(slots[inp.slot].as_ref().ok_or_else(|| missing(inp.slot))?.as_ptr() as *const u8);
                }
                outs.clear();
                for o in &k.outputs {
                    // Kernels write every element of their outputs: no zeroing.
                    match take_into(into, si, o.slot, slots) {
                        Some(b) => outs.push(b),
                        None => outs.push(Buffer::uninit(&plan.slots[o.slot])?),
                    }
                }
                out_ptrs.clear();
                out_ptrs.extend(outs.iter().map(|b| b.as_ptr()));
                out_bytes.clear();
                out_bytes.extend(outs.iter().map(|b| b.storage.len()));
                // SAFETY: the plan was validated (every address the kernel computes lies inside the
                // buffers of the slots' avals, which the inputs were checked against), outputs are
                // fresh buffers of the slots' avals (or an input's, `take_into`, which the kernel reads
                // only at the point it writes), and the pointer arrays outlive the call.
                unsafe { super::threads::run_kernel(ck, ins, out_ptrs, out_bytes) };
                if let Some(c) = cache {
                    let _ = c.set(outs.clone());
                }
                for (o, buf) in k.outputs.iter().zip(outs.drain(..)) {
                    slots[o.slot] = Some(buf);
                }
            }
        }
        release(exe, si, slots);
    }
    collect_exact(plan.outputs.iter().map(|&s| slots[s].clone().ok_or_else(|| missing(s))))
}

/// The input buffer output `slot` of step `si` is written into, if the run was asked to and no live slot
/// but the input's own shares that storage now (a view of the input, an output returning it): the step
/// reads the input, if at all, only at the point it writes (`CpuExecutable::aliases` checked that), and
/// no later step reads it.
fn take_into(into: &mut Vec<WriteInto>, si: usize, slot: usize, slots: &[Option<Buffer>]) -> Option<Buffer> {
    let at = into.iter().position(|e| e.step == si && e.slot == slot)?;
    let e = into.swap_remove(at);
    let shared = slots
        .iter()
        .enumerate()
        .any(|(s, b)| s != e.input && b.as_ref().is_some_and(|b| std::sync::Arc::ptr_eq(&b.storage, &e.buf.storage)));
    if shared {
        return None;
    }
    super::counters::ALIASED_OUTPUTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Some(e.buf)
}

/// `collect::<Result<Vec<_>>>()` with the whole capacity reserved first: that adapter reports no size, so
/// the vector grew by reallocation on every call (a diffrax solve's fused loop has thirty operands, and
/// those reallocations were a few percent of its time).
pub(super) fn collect_exact<T>(it: impl ExactSizeIterator<Item = Result<T>>) -> Result<Vec<T>> {
    let mut v = Vec::with_capacity(it.len());
    for x in it {
        v.push(x?);
    }
    Ok(v)
}

/// One run's slot table and a kernel step's pointer and size lists, kept per thread between runs: a
/// loop-heavy program runs dozens of tiny plans per call (a `cond` branch or loop body is a plan of its
/// own), and allocating these for each was a visible share of its time. Runs nest (a control step runs its
/// sub-plans inside its enclosing run), so each thread keeps a stack of them.
#[derive(Default)]
struct Scratch {
    slots: Vec<Option<Buffer>>,
    ins: Vec<*const u8>,
    outs: Vec<Buffer>,
    out_ptrs: Vec<*mut u8>,
    out_bytes: Vec<usize>,
}

/// At most this many tables are kept per thread (the nesting depth of the plans it runs), each with at
/// most `KEEP_SLOTS` slots: a one-off huge plan does not pin its table.
const KEEP_TABLES: usize = 8;
const KEEP_SLOTS: usize = 4096;

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<Scratch>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A thread's `Scratch`, given back (emptied: no buffer outlives its run) when dropped, also on an error
/// return or an unwinding panic.
struct ScratchGuard(Scratch);

impl Scratch {
    fn take(n: usize) -> ScratchGuard {
        let mut s = SCRATCH.try_with(|p| p.borrow_mut().pop()).ok().flatten().unwrap_or_default();
        s.slots.resize(n, None);
        ScratchGuard(s)
    }
}

impl std::ops::Deref for ScratchGuard {
    type Target = Scratch;
    fn deref(&self) -> &Scratch {
        &self.0
    }
}

impl std::ops::DerefMut for ScratchGuard {
    fn deref_mut(&mut self) -> &mut Scratch {
        &mut self.0
    }
}

impl Drop for ScratchGuard {
    fn drop(&mut self) {
        let mut s = std::mem::take(&mut self.0);
        // What is left is the run's inputs and outputs (held elsewhere too) and outputs no step read (a
        // fused loop's unused carries): those go to the spares for the next run's kernels.
        for b in s.slots.drain(..).flatten() {
            b.recycle();
        }
        s.outs.clear();
        s.ins.clear();
        s.out_ptrs.clear();
        if s.slots.capacity() > KEEP_SLOTS {
            return;
        }
        // `try_with`: a run during thread teardown has nowhere to keep it (dropped instead).
        let _ = SCRATCH.try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                if p.len() < KEEP_TABLES {
                    p.push(s);
                }
            }
        });
    }
}

/// The most bytes a kernel without inputs may keep alive in its executable (`CpuExecutable::consts`):
/// small values only, whose allocation and dispatch cost more than the computation.
const CONST_CACHE_BYTES: usize = 4096;

/// Whether kernel `k` reads nothing (its outputs are the same every run) and its outputs are small
/// (decided once, when the executable is built: `CpuExecutable::consts`).
pub(super) fn cacheable(plan: &Plan, k: &crate::plan::Kernel) -> bool {
    k.inputs.is_empty()
        && k.outputs.iter().map(|o| plan.slots.get(o.slot).and_then(|a| Buffer::byte_len(a).ok()).unwrap_or(usize::MAX)).fold(0usize, usize::saturating_add)
            <= CONST_CACHE_BYTES
}

/// Drops the slots read for the last time at step `si`; small intermediates nobody else holds go back
/// to this thread's spares for the next kernel's outputs (`Buffer::recycle`).
fn release(exe: &CpuExecutable, si: usize, slots: &mut [Option<Buffer>]) {
    for &s in exe.frees.get(si).map(|f| f.as_slice()).unwrap_or(&[]) {
        if let Some(b) = slots[s].take() {
            b.recycle();
        }
    }
}

/// Whether scatter or update step `si` may write into its operand's buffer: this is the plan's last read of the
/// operand slot (released after the step), no other operand of the step is that slot, its result has the
/// operand's aval, and this run holds the only handle to the storage (not an input the caller keeps, a
/// view's source still live, borrowed memory, or a cached constant).
fn dead_operand(exe: &CpuExecutable, si: usize, l: &LibStep, slots: &[Option<Buffer>]) -> bool {
    let (Some(&s0), Some(&out), true) = (l.inputs.first(), l.outputs.first(), l.inputs.len() >= 2) else { return false };
    let Some(b) = slots.get(s0).and_then(Option::as_ref) else { return false };
    let st = &b.storage;
    let bytes = Buffer::byte_len(&b.aval).unwrap_or(usize::MAX);
    exe.frees.get(si).is_some_and(|f| f.contains(&s0))
        && !l.inputs[1..].contains(&s0)
        && exe.plan.slots.get(out) == Some(&b.aval)
        && st.len() >= bytes
        && std::sync::Arc::strong_count(st) == 1
        && std::sync::Arc::weak_count(st) == 0
        && !st.is_borrowed()
}

/// Products at least this big (multiply-adds) run side by side with an independent neighbour.
const PAIR_FLOPS: usize = 1 << 22;

/// Two consecutive `dot_general`s, the second not reading the first, both big: reverse mode's weight and
/// input gradients of one layer. gemm's own threading scales poorly at these sizes, so they run at once,
/// one thread each.
fn independent_products(plan: &Plan, a: &LibStep, b: &LibStep) -> bool {
    let flops = |l: &LibStep| -> usize {
        let LibOp::DotGeneral { lhs_contracting, .. } = &l.op else { return 0 };
        let (Some(&lhs), Some(&out)) = (l.inputs.first(), l.outputs.first()) else { return 0 };
        let k: usize = lhs_contracting.iter().map(|&d| plan.slots[lhs].shape.get(d).copied().unwrap_or(0)).product();
        plan.slots[out].numel().unwrap_or(0).saturating_mul(k)
    };
    super::threads::num_threads() >= 2
        && flops(a) >= PAIR_FLOPS
        && flops(b) >= PAIR_FLOPS
        && !b.inputs.iter().any(|s| a.outputs.contains(s))
}

/// A slot read before any step wrote it (a malformed plan).
pub(super) fn missing(s: usize) -> Error {
    Error::Execution(format!("slot {s} read before it is written"))
}

/// The operand buffers of a library step and the avals of its outputs.
fn library_io(plan: &Plan, l: &LibStep, slots: &[Option<Buffer>]) -> Result<(Vec<Buffer>, Vec<crate::ir::Aval>)> {
    let ins = collect_exact(l.inputs.iter().map(|&s| slots[s].clone().ok_or_else(|| missing(s))))?;
    Ok((ins, l.outputs.iter().map(|&s| plan.slots[s].clone()).collect()))
}

fn run_library(l: &LibStep, ins: &[Buffer], outs: &[crate::ir::Aval]) -> Result<Vec<Buffer>> {
    let refs: Vec<&Buffer> = ins.iter().collect();
    super::library::run(&l.op, &refs, outs)
}

/// Library step `si` with the kernel of step `si + 1` run in place on its output (`CpuExecutable::fused`):
/// the kernel's other outputs get fresh buffers, the library's buffer becomes the target output's.
fn run_with_epilogue(exe: &CpuExecutable, si: usize, l: &LibStep, slots: &mut [Option<Buffer>]) -> Result<()> {
    let plan = &exe.plan;
    let (Some(target), Some(Step::Kernel(k)), Some(Some(ck))) = (exe.fused[si], plan.steps.get(si + 1), exe.kernels.get(si + 1))
    else {
        return Err(Error::Execution(format!("step {si}: epilogue not compiled")));
    };
    let lib_out = l.outputs[0];
    let (ins, avals) = library_io(plan, l, slots)?;
    let mut kin = Vec::with_capacity(k.inputs.len());
    for inp in &k.inputs {
        kin.push(if inp.slot == lib_out {
            None
        } else {
            Some(slots[inp.slot].as_ref().ok_or_else(|| missing(inp.slot))?.as_ptr() as *const u8)
        });
    }
    let mut fresh: Vec<Option<Buffer>> = Vec::with_capacity(k.outputs.len());
    for (j, o) in k.outputs.iter().enumerate() {
        fresh.push(if j == target { None } else { Some(Buffer::uninit(&plan.slots[o.slot])?) });
    }
    let epi = super::library::epilogue::Epilogue {
        kernel: ck,
        ins: kin,
        outs: fresh.iter().map(|b| b.as_ref().map(|b| b.as_ptr())).collect(),
        out_bytes: k
            .outputs
            .iter()
            .map(|o| plan.slots[o.slot].numel().unwrap_or(0).saturating_mul(plan.slots[o.slot].dtype.size()))
            .collect(),
    };
    let refs: Vec<&Buffer> = ins.iter().collect();
    let mut res = super::library::run_fused(&l.op, &refs, &avals, &epi)?;
    let buf = res.pop().ok_or_else(|| Error::Execution(format!("step {si}: {} gave no output", l.op.name())))?;
    fresh[target] = Some(buf);
    for (o, b) in k.outputs.iter().zip(fresh) {
        slots[o.slot] = b;
    }
    Ok(())
}

fn store(l: &LibStep, outs: Vec<Buffer>, slots: &mut [Option<Buffer>]) {
    for (&s, b) in l.outputs.iter().zip(outs) {
        slots[s] = Some(b);
    }
}

fn run_pair(plan: &Plan, a: &LibStep, b: &LibStep, slots: &mut [Option<Buffer>]) -> Result<()> {
    let (ia, oa) = library_io(plan, a, slots)?;
    let (ib, ob) = library_io(plan, b, slots)?;
    // This thread runs `a`; `b` (owned: it may run on a pool thread) is offered to the pool.
    let lb = b.clone();
    let (ra, rb) = super::threads::join_offered(
        || super::threads::serial(|| run_library(a, &ia, &oa)),
        move || super::threads::serial(|| run_library(&lb, &ib, &ob)),
    );
    store(a, ra?, slots);
    store(b, rb?, slots);
    Ok(())
}
