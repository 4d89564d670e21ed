//! Loop bodies run in place: a `scan` or `while` whose body (and cond) plans hold only kernels, views and
//! `dot_general`s readable in place runs its iterations on buffers allocated once per loop run, calling
//! the compiled kernels and the product routine on raw addresses. The generic path (`control::run_step`)
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
//! The kernels and products are the ones the generic path runs, on the same values: results are
//! bit-identical. `CRANAX_NO_DIRECT_LOOPS=1` turns this off.
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::ir::{Aval, LibOp};
use crate::opt::control_flow::ControlStep;
use crate::opt::{Plan, Step};
use crate::runtime::buffer::Buffer;

use super::library::gemm::{DirectDot, DotDims};
use super::CpuExecutable;

/// One step of a prepared plan.
enum Op {
    View { src: usize, dst: usize },
    /// Plan step `step` (a kernel) reading `ins` and writing `outs` (`out_bytes` each).
    Kernel { step: usize, ins: Vec<usize>, outs: Vec<usize>, out_bytes: Vec<usize> },
    Dot { dot: DirectDot, lhs: usize, rhs: usize, out: usize },
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
}

impl Prepared {
    /// `None` when the plan has steps that cannot run in place (library calls other than in-place
    /// products, nested control flow). `carried` are the outputs whose values outlive an iteration;
    /// `ys[j]` is the output index stacked into y `j` (written there directly when possible).
    fn new(exe: &Arc<CpuExecutable>, carried: &[usize], ys: &[usize]) -> Result<Option<Prepared>> {
        let p = &exe.plan;
        let n = p.slots.len();
        let mut root: Vec<usize> = (0..n).collect();
        let mut homes: Vec<Option<Home>> = vec![None; n];
        let mut ops = Vec::with_capacity(p.steps.len());
        for (si, step) in p.steps.iter().enumerate() {
            match step {
                Step::View { src, dst } => {
                    root[*dst] = root[*src];
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
                    let LibOp::DotGeneral { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, .. } = &l.op else {
                        return Ok(None);
                    };
                    let (&[lhs, rhs], &[out]) = (l.inputs.as_slice(), l.outputs.as_slice()) else { return Ok(None) };
                    let dims = DotDims { lc: lhs_contracting, rc: rhs_contracting, lb: lhs_batch, rb: rhs_batch };
                    let Some(dot) = DirectDot::new(&dims, &p.slots[lhs], &p.slots[rhs], &p.slots[out]) else {
                        return Ok(None);
                    };
                    homes[out] = Some(Home::Single);
                    ops.push(Op::Dot { dot, lhs, rhs, out });
                }
                Step::Control(_) => return Ok(None),
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
        Ok(Some(Prepared { exe: exe.clone(), ops, homes, root, bytes }))
    }

    fn plan(&self) -> &Plan {
        &self.exe.plan
    }
}

/// Per-run state of a prepared plan: the buffers of its written slots and the argument arrays.
struct Frame {
    /// Per slot: the current address.
    ptr: Vec<usize>,
    /// Per slot: the two buffers' addresses (equal for `Single`; unused for `Y` and unwritten slots).
    home: Vec<[usize; 2]>,
    /// Keeps the buffers alive.
    _bufs: Vec<Buffer>,
    ins: Vec<*const u8>,
    outs: Vec<*mut u8>,
}

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
        Ok(Frame { ptr: vec![0; n], home, _bufs: bufs, ins: Vec::with_capacity(width), outs: Vec::with_capacity(width) })
    }

    /// Runs the plan's steps once. The input slots' addresses must be set; `parity` picks the buffer of
    /// `Double` slots, `yrow[j]` is the address of y `j`'s row for this iteration.
    ///
    /// # Safety
    /// Input addresses point at buffers of the plan's input avals that stay valid and unwritten during
    /// the call; `yrow` addresses hold their slots' bytes.
    unsafe fn step(&mut self, p: &Prepared, parity: usize, yrow: &[usize]) -> Result<()> {
        let place = |s: usize, f: &Frame| -> usize {
            match p.homes[s] {
                Some(Home::Y(j)) => yrow[j],
                _ => f.home[s][parity],
            }
        };
        for op in &p.ops {
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
            }
        }
        Ok(())
    }
}

/// The in-place form of a loop step.
pub enum DirectLoop {
    /// A scan body.
    Scan(DirectScan),
}

/// A prepared scan body, with the carries that must be copied each iteration.
pub struct DirectScan {
    body: Prepared,
    nconsts: usize,
    ncarry: usize,
    /// Per carry: true when its value is another carry's input (copied into its own buffers).
    copy: Vec<bool>,
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
            let Some(body) = Prepared::new(exe, &carried, &ys)? else { return Ok(None) };
            let p = body.plan();
            let copy = (0..nk)
                .map(|c| {
                    let r = body.root[p.outputs[c]];
                    r >= nc && r < nc + nk && r != nc + c
                })
                .collect();
            Ok(Some(DirectLoop::Scan(DirectScan { body, nconsts: nc, ncarry: nk, copy })))
        }
        _ => Ok(None),
    }
}

fn check(b: &Buffer, bytes: usize, what: &str) -> Result<()> {
    if b.storage.len() < bytes {
        return Err(Error::Execution(format!("loop {what} buffer is too small")));
    }
    Ok(())
}

/// # Safety
/// `src` and `dst` hold `n` bytes and do not overlap.
unsafe fn copy(src: usize, dst: usize, n: usize) {
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
        let mut f = Frame::new(b)?;
        // The rotated carries' own buffers, two per carry.
        let mut store: Vec<Buffer> = Vec::new();
        let mut store_at = vec![[0usize; 2]; nk];
        for c in (0..nk).filter(|&c| self.copy[c]) {
            for par in 0..2 {
                let buf = Buffer::uninit(&p.slots[nc + c])?;
                store_at[c][par] = buf.as_ptr() as usize;
                store.push(buf);
            }
        }
        for (j, c) in consts.iter().enumerate() {
            f.ptr[j] = c.as_ptr() as usize;
        }
        let mut carry: Vec<usize> = init.iter().map(|c| c.as_ptr() as usize).collect();
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
                    unsafe { copy(f.ptr[o], yrow[j], ysz[j]) };
                }
            }
            for c in 0..nk {
                let src = f.ptr[p.outputs[c]];
                carry[c] = if self.copy[c] {
                    // SAFETY: `store_at[c][par]` holds the carry's bytes and is not `src` (another carry's
                    // buffer from the previous iteration, or an input).
                    unsafe { copy(src, store_at[c][par], b.bytes[nc + c]) };
                    store_at[c][par]
                } else {
                    src
                };
            }
        }
        super::control::SUBPLAN_RUNS.fetch_add(length as u64, Ordering::Relaxed);
        super::control::DIRECT_LOOP_CALLS.fetch_add(1, Ordering::Relaxed);
        let mut outs = Vec::with_capacity(out_avals.len());
        for c in 0..nk {
            let bytes = b.bytes[nc + c];
            // SAFETY: the final carry's address holds `bytes` bytes of a buffer alive until return.
            let src = unsafe { std::slice::from_raw_parts(carry[c] as *const u8, bytes) };
            outs.push(Buffer::from_bytes(&out_avals[c], src)?);
        }
        outs.extend(ys);
        drop(store);
        Ok(outs)
    }
}
