//! Row chains: a run of consecutive kernels (views between them allowed) that starts with a reduction over
//! the trailing axes of a large array (softmax's `reduce_max → sub/exp/reduce_sum → div`, log-softmax,
//! a normalization) runs a block of rows at a time, every kernel of the run on one block before the next
//! block, so what one kernel writes for a block is still in cache when the next reads it. Run one kernel at
//! a time, each pass over a 64 MB array goes through memory; as a chain, the array is read once.
//!
//! Rows: the first kernel's non-reduced points (`rows`). Every kernel of the chain must have a domain whose
//! leading axes multiply to `rows`, with its reduced axes after them, so its outer range `[begin, end)`
//! splits into rows of equal length (`per_row` outer points each). A kernel may read what an earlier kernel
//! of the chain wrote only inside the row it computes (checked on the input's strides), so running rows
//! `[b, e)` of every kernel in order computes exactly what the full runs would.
//!
//! Intermediates that nothing reads after the chain (and that are not program outputs) never get a
//! full-size buffer: each thread holds one block of them in a scratch array, and the kernels get a base
//! pointer moved back by `b` rows, so the addresses they compute for rows `[b, e)` land in the scratch.
//!
//! Results are bit-identical to running the steps one by one, for any block size and thread count: every
//! outer point of a kernel is computed by the same code whatever range it is part of (`threads`' split
//! relies on the same property). `CRANAX_NO_ROW_CHAINS=1` turns chains off (read when an executable is
//! built).
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::plan::{Kernel, Plan, Step};

use super::exec::missing;
use super::jit::{CompiledKernel, PARTIAL_MAX_OUTER};
use super::module::KernelFn;

/// Chains whose largest array is smaller than this are left alone: it stays in cache between kernels anyway,
/// and blocking only adds calls.
const MIN_BYTES: usize = 4 << 20;
/// Target bytes of one block over every array the chain touches (inputs, outputs, scratch): well inside
/// a core's L2 (512 KiB–2 MiB on current x86), leaving room for the stack strips.
const BLOCK_BYTES: usize = 256 << 10;

/// `CRANAX_NO_ROW_CHAINS=1`: every step runs on its own.
pub fn disabled() -> bool {
    std::env::var_os("CRANAX_NO_ROW_CHAINS").is_some_and(|v| v == "1")
}

/// Where a kernel's pointer for one of its inputs or outputs comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ref {
    /// A slot's buffer (written before the chain, or a chain output given a full buffer).
    Slot(usize),
    /// Scratch array `idx` holding one block of rows, `row_bytes` bytes each.
    Scratch { idx: usize, row_bytes: usize },
}

#[derive(Debug)]
struct ChainKernel {
    step: usize,
    /// Outer points per row.
    per_row: u64,
    ins: Vec<Ref>,
    outs: Vec<Ref>,
}

/// A run of steps `start..end` executed block by block (see the module docs).
#[derive(Debug)]
pub struct RowChain {
    pub start: usize,
    pub end: usize,
    rows: u64,
    /// Rows per block.
    block: u64,
    kernels: Vec<ChainKernel>,
    /// Kernel output slots that get a full buffer (read after the chain, or program outputs).
    full: Vec<usize>,
    /// Views whose source has a buffer (`src`, `dst`), made before the blocks run, in step order.
    views: Vec<(usize, usize)>,
    /// Bytes of one row of each scratch array.
    scratch_rows: Vec<usize>,
    /// Element operations of one row over all kernels, for the thread split.
    row_work: u64,
}

impl RowChain {
    /// Whether kernel step `si` writes a scratch array (it must not stream its outputs past the cache).
    pub fn writes_scratch(&self, si: usize) -> bool {
        self.kernels.iter().any(|k| k.step == si && k.outs.iter().any(|r| matches!(r, Ref::Scratch { .. })))
    }
}

impl RowChain {
    /// The `as_text` line announcing the chain.
    pub fn describe(&self) -> String {
        format!(
            "row chain: steps {}..{} run {} rows in blocks of {} ({} kernels, {} scratch arrays)",
            self.start,
            self.end,
            self.rows,
            self.block,
            self.kernels.len(),
            self.scratch_rows.len()
        )
    }
}

fn numel(plan: &Plan, s: usize) -> usize {
    plan.slots.get(s).and_then(|a| a.numel()).unwrap_or(0)
}

fn bytes(plan: &Plan, s: usize) -> usize {
    plan.slots.get(s).map_or(0, |a| numel(plan, s).saturating_mul(a.dtype.size()))
}

/// The rows of a kernel that can start a chain: it reduces, its reduced axes come after every
/// non-reduced axis longer than 1, and it has enough outer points never to take the split-reduction path.
fn chain_rows(k: &Kernel) -> Option<u64> {
    let first_red = *k.reduce_axes.first()?;
    if (first_red..k.domain.len()).any(|d| !k.reduce_axes.contains(&d) && k.domain[d] > 1) || k.inputs.is_empty() {
        return None;
    }
    let rows = k.domain[..first_red].iter().try_fold(1u64, |a, &n| a.checked_mul(n as u64))?;
    (rows >= PARTIAL_MAX_OUTER).then_some(rows)
}

/// The outer points per row of kernel `k` in a chain of `rows` rows: its leading axes must multiply to
/// `rows` (the shortest such prefix, `lead` axes), with every reduced axis after them.
fn per_row(k: &Kernel, rows: u64) -> Option<(usize, u64)> {
    let mut p = 1u64;
    let mut lead = 0;
    while p != rows {
        p = p.checked_mul(*k.domain.get(lead)? as u64)?;
        lead += 1;
        if p > rows {
            return None;
        }
    }
    if k.reduce_axes.iter().any(|&d| d < lead) || k.inputs.is_empty() {
        return None;
    }
    let outer = super::loop_plan::outer_len(k).ok()?;
    if outer < PARTIAL_MAX_OUTER || outer % rows != 0 {
        return None;
    }
    Some((lead, outer / rows))
}

/// Whether input `i` of `k` (leading `lead` axes are the rows) reads its slot only inside the row it
/// computes, the slot holding `row_len` elements per row, row-major.
fn row_local(k: &Kernel, i: usize, lead: usize, row_len: usize) -> bool {
    let inp = &k.inputs[i];
    if k.gathers_from(i) {
        return false; // (a gather reads anywhere in the slot)
    }
    let Ok(row_len) = isize::try_from(row_len) else { return false };
    let mut want = row_len;
    for d in (0..lead).rev() {
        let n = k.domain[d] as isize;
        if n > 1 && inp.strides[d] != want {
            return false;
        }
        want = want.saturating_mul(n);
    }
    let (mut lo, mut hi) = (inp.offset, inp.offset);
    for d in lead..k.domain.len() {
        let span = inp.strides[d].saturating_mul(k.domain[d].saturating_sub(1) as isize);
        if span < 0 {
            lo = lo.saturating_add(span);
        } else {
            hi = hi.saturating_add(span);
        }
    }
    lo >= 0 && hi < row_len
}

/// The row chains of `plan`, each at most once, in step order.
pub fn find(plan: &Plan) -> Vec<RowChain> {
    let mut chains = Vec::new();
    let mut si = 0;
    while si < plan.steps.len() {
        match chain_at(plan, si) {
            Some(c) => {
                si = c.end;
                chains.push(c);
            }
            None => si += 1,
        }
    }
    chains
}

fn chain_at(plan: &Plan, start: usize) -> Option<RowChain> {
    let Some(Step::Kernel(first)) = plan.steps.get(start) else { return None };
    let rows = chain_rows(first)?;
    // Per slot written inside the chain: the kernel output whose buffer it is (views share their source's).
    let mut root: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut last_kernel = start;
    let mut nkernels = 0;
    for (si, step) in plan.steps.iter().enumerate().skip(start) {
        match step {
            Step::View { src, dst } => {
                if let Some(&r) = root.get(src) {
                    root.insert(*dst, r);
                }
            }
            Step::Kernel(k) => {
                let Some((lead, _)) = per_row(k, rows) else { break };
                let local = k.inputs.iter().enumerate().all(|(i, inp)| {
                    !root.contains_key(&inp.slot) || row_local(k, i, lead, numel(plan, inp.slot) / rows as usize)
                });
                let ok_dtypes = k.inputs.iter().all(|i| plan.slots.get(i.slot).is_some_and(|a| a.dtype == i.dtype));
                if !local || !ok_dtypes {
                    break;
                }
                for o in &k.outputs {
                    root.insert(o.slot, o.slot);
                }
                last_kernel = si;
                nkernels += 1;
            }
            _ => break,
        }
    }
    let end = last_kernel + 1; // trailing views run as plain steps
    if nkernels < 2 {
        return None;
    }
    // Slots read after the chain, and program outputs, need buffers.
    let mut needed = vec![false; plan.slots.len()];
    for s in plan.steps[end..].iter().flat_map(|s| crate::plan::step_io(s).0).chain(plan.outputs.iter().copied()) {
        if let Some(n) = needed.get_mut(s) {
            *n = true;
        }
    }
    let mut full_root = std::collections::HashSet::new();
    for (&s, &r) in &root {
        if needed[s] {
            full_root.insert(r);
        }
    }
    let largest = root.values().map(|&r| bytes(plan, r)).max().unwrap_or(0);
    if largest < MIN_BYTES {
        return None;
    }
    let mut scratch_of: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut scratch_rows = Vec::new();
    let mut kernels = Vec::new();
    let mut full = Vec::new();
    let mut views = Vec::new();
    let mut touched = std::collections::HashSet::new();
    let mut row_work = 0u64;
    for si in start..end {
        match &plan.steps[si] {
            Step::View { src, dst } => {
                let scratch = root.get(src).is_some_and(|r| !full_root.contains(r));
                if !scratch {
                    views.push((*src, *dst));
                }
            }
            Step::Kernel(k) => {
                let (_, pr) = per_row(k, rows)?;
                let mut r = |s: usize| -> Ref {
                    touched.insert(root.get(&s).copied().unwrap_or(s));
                    match root.get(&s) {
                        Some(&r) if !full_root.contains(&r) => {
                            let n = scratch_rows.len();
                            let idx = *scratch_of.entry(r).or_insert(n);
                            if idx == n {
                                scratch_rows.push(bytes(plan, r) / rows as usize);
                            }
                            Ref::Scratch { idx, row_bytes: scratch_rows[idx] }
                        }
                        _ => Ref::Slot(s),
                    }
                };
                let ins = k.inputs.iter().map(|i| r(i.slot)).collect();
                let outs: Vec<Ref> = k.outputs.iter().map(|o| r(o.slot)).collect();
                full.extend(k.outputs.iter().zip(&outs).filter(|(_, r)| matches!(r, Ref::Slot(_))).map(|(o, _)| o.slot));
                row_work = row_work.saturating_add(pr.saturating_mul(k.body.len() as u64));
                kernels.push(ChainKernel { step: si, per_row: pr, ins, outs });
            }
            _ => return None,
        }
    }
    let row_bytes: usize = touched.iter().map(|&s| bytes(plan, s) / rows as usize).sum::<usize>().max(1);
    let block = ((BLOCK_BYTES / row_bytes).max(1) as u64).min(rows);
    Some(RowChain { start, end, rows, block, kernels, full, views, scratch_rows, row_work })
}

/// One kernel call of a block: its entry, outer points per row, and its input then output pointers.
struct Call {
    entry: KernelFn,
    per_row: u64,
    ptrs: Vec<Ptr>,
    nin: usize,
}

/// A buffer's address, or a scratch array of this thread (its address depends on the thread and block).
#[derive(Clone, Copy)]
enum Ptr {
    Addr(usize),
    Scratch { idx: usize, row_bytes: usize },
}

/// Runs `chain` on `slots` (the buffers of every slot it reads from before the chain), leaving in `slots`
/// the buffers of its full outputs and views.
pub fn run(plan: &Plan, kernels: &[Option<CompiledKernel>], chain: &RowChain, slots: &mut [Option<Buffer>]) -> Result<()> {
    for &s in &chain.full {
        slots[s] = Some(Buffer::uninit(&plan.slots[s])?);
    }
    for &(src, dst) in &chain.views {
        let v = slots[src].as_ref().ok_or_else(|| missing(src))?.view(&plan.slots[dst]);
        slots[dst] = Some(v);
    }
    let mut calls: Vec<Call> = Vec::with_capacity(chain.kernels.len());
    for ck in &chain.kernels {
        let entry = kernels
            .get(ck.step)
            .and_then(Option::as_ref)
            .ok_or_else(|| Error::Execution(format!("step {} not compiled", ck.step)))?
            .entry;
        let mut ptrs = Vec::with_capacity(ck.ins.len() + ck.outs.len());
        for r in ck.ins.iter().chain(&ck.outs) {
            ptrs.push(match *r {
                Ref::Slot(s) => Ptr::Addr(slots[s].as_ref().ok_or_else(|| missing(s))?.as_ptr() as usize),
                Ref::Scratch { idx, row_bytes } => Ptr::Scratch { idx, row_bytes },
            });
        }
        calls.push(Call { entry, per_row: ck.per_row, ptrs, nin: ck.ins.len() });
    }
    let nblocks = chain.rows.div_ceil(chain.block);
    let block = chain.block;
    let rows = chain.rows;
    let work = rows.saturating_mul(chain.row_work);
    let scratch_rows = &chain.scratch_rows;
    let calls = &calls;
    let run_blocks = |b0: u64, b1: u64| {
        // This thread's scratch: one block of each array, 64-byte aligned.
        let sizes: Vec<usize> = scratch_rows.iter().map(|&r| (r * block as usize).div_ceil(64) * 64).collect();
        let mut mem = vec![0u8; sizes.iter().sum::<usize>() + 64];
        let base = mem.as_mut_ptr() as usize;
        let mut at = base.div_ceil(64) * 64;
        let mut starts = Vec::with_capacity(sizes.len());
        for s in &sizes {
            starts.push(at);
            at += s;
        }
        let mut ins: Vec<*const u8> = Vec::new();
        let mut outs: Vec<*mut u8> = Vec::new();
        for bi in b0..b1 {
            let (b, e) = (bi * block, ((bi + 1) * block).min(rows));
            for call in calls.iter() {
                ins.clear();
                outs.clear();
                for (j, ptr) in call.ptrs.iter().enumerate() {
                    // A scratch array holds rows [b, e): its base moves back by b rows (never dereferenced
                    // outside the array: the kernel addresses only rows [b, e)).
                    let p = match *ptr {
                        Ptr::Scratch { idx, row_bytes } => starts[idx].wrapping_sub(b as usize * row_bytes),
                        Ptr::Addr(a) => a,
                    };
                    if j < call.nin {
                        ins.push(p as *const u8);
                    } else {
                        outs.push(p as *mut u8);
                    }
                }
                // SAFETY: the plan was validated (every address a kernel computes for its outer range lies in
                // its buffers); for rows [b, e) the scratch addresses lie in this thread's scratch arrays
                // (`row_local` and the row-major outputs), the other buffers are live slots.
                unsafe { (call.entry)(ins.as_ptr(), outs.as_ptr(), b * call.per_row, e * call.per_row) };
            }
        }
        drop(mem);
    };
    super::threads::parallel(|split| {
        let threads = super::threads::num_threads() as u64;
        if split && work >= super::threads::SPLIT_WORK && nblocks >= 2 {
            use rayon::prelude::*;
            let chunks = (threads * 4).min(nblocks);
            (0..chunks).into_par_iter().for_each(|c| run_blocks(nblocks * c / chunks, nblocks * (c + 1) / chunks));
        } else {
            run_blocks(0, nblocks);
        }
    });
    Ok(())
}
