//! Loops over small values compiled into one Cranelift function with a real loop.
//!
//! A `while` whose cond and body plans hold only small values (at most `MAX_ELEMS` elements: scalars, an
//! f32[4] state; kernels over at most `MAX_POINTS` points) and the library steps `scalar_lib` emits
//! inline (dynamic slices and updates, scatters, tiny products), or a `scan` with no xs and no ys (what
//! `fori_loop` with static bounds becomes) over such a body, is compiled into `extern "C" fn(inputs, outputs, _, _)`: every element of the consts and initial
//! carries is loaded into its own SSA variable, the loop header evaluates the predicate (or compares the
//! trip counter), the body block evaluates the body's kernels on the variables and jumps back, and the exit
//! stores the carries. Values stay in SSA inside the loop (a library step indexed at run time goes through
//! a stack slot) and nothing is dispatched or allocated per iteration, so a million iterations take about a millisecond. Each kernel of the sub-plans is emitted
//! point by point (unrolled over its small domain, in its loop nest's order) with the instructions
//! `ops::emit` gives the loop kernels, whose vector and scalar points agree bit for bit: results are
//! bit-identical to the step-by-step path. Reductions accumulate in the nest's order too: sequentially along
//! the reduced axes, or, where the nest vectorizes the reduced axis, into one accumulator per vector lane
//! combined as the nest combines them. Loops with other library steps or over bigger values run as
//! sub-plans (`loop_body`, `control`).
//!
//! An outermost `scan` that reads `xs` or stacks `ys` (odeint's loop over its output times) is fused too
//! when its rows are small: the stacked values stay in the caller's buffers, each iteration loads its row
//! of `xs` and stores its row of `ys` at the counter (`emit_stacked_scan`).
//!
//! An outermost loop may also have consts and carries too big for SSA values when its plans touch them
//! only at windows and points (`resident_fits`): `x.at[i].add(v)`, `dynamic_slice`, `dynamic_update_slice`,
//! a gather of a few elements. Those stay in memory: a const is read where it is, a carry lives in its
//! output buffer (a copy of its initial value, made before the call) and the body writes into it in place,
//! as XLA updates its loop buffers, so an iteration costs a few nanoseconds instead of a sub-plan run
//! (about a microsecond) or a copy of the array. A body that still reads a value after writing its buffer,
//! returns a carry in another carry's buffer or writes into a const is not fused (`Homes`).
//!
//! `CRANAX_NO_FUSED_LOOPS=1` turns this off (the plan-level loop runs instead).
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module};

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, DType};
use crate::plan::{ControlStep, KOp, OutputKind, Plan, Step};

use super::clif::{cl_type, iconst};
use super::math_fn::Imports;
use super::module::kernel_signature;
use super::module::KernelFn;
use super::ops;

/// A compiled all-scalar loop.
pub struct FusedLoop {
    entry: KernelFn,
    in_avals: Vec<Aval>,
    out_avals: Vec<Aval>,
    /// Per output: for a carry kept in memory (`resident_fits`), the input holding its initial value,
    /// copied into the output buffer before the call (the function updates it there in place).
    resident: Vec<Option<usize>>,
    module: Mutex<Option<JITModule>>,
    /// The Cranelift IR (for `as_text`).
    pub clif: String,
}

impl Drop for FusedLoop {
    fn drop(&mut self) {
        let m = match self.module.get_mut() {
            Ok(m) => m.take(),
            Err(p) => p.into_inner().take(),
        };
        if let Some(m) = m {
            // SAFETY: `drop` has `&mut self`: no call of `entry` is running, and the pointer is not used after.
            unsafe { m.free_memory() };
        }
    }
}

impl FusedLoop {
    /// Runs the loop on the step's input buffers (in `ControlStep::inputs()` order, borrowed from the
    /// enclosing plan's slots rather than cloned: a diffrax solve's loop has thirty operands); returns
    /// fresh output buffers of `outs`.
    pub fn run(&self, ins: &[&Buffer], outs: &[&Aval]) -> Result<Vec<Buffer>> {
        if ins.len() != self.in_avals.len() || outs.len() != self.out_avals.len() {
            return Err(Error::Execution(format!("fused loop: {} inputs, expected {}", ins.len(), self.in_avals.len())));
        }
        for (b, a) in ins.iter().zip(&self.in_avals) {
            let n = a.numel().unwrap_or(usize::MAX);
            if b.aval.dtype != a.dtype || b.aval.numel() != Some(n) || b.storage.len() < n.saturating_mul(a.dtype.size()) {
                return Err(Error::Execution("fused loop: input buffer of the wrong type".into()));
            }
        }
        if outs.iter().zip(&self.out_avals).any(|(a, b)| a.dtype != b.dtype || a.numel() != b.numel()) {
            return Err(Error::Execution("fused loop: output of the wrong type".into()));
        }
        // The function writes every element of each output (a carry kept in memory starts as a copy of its
        // initial value): no zeroing.
        let bufs = super::exec::collect_exact(outs.iter().map(|a| Buffer::uninit(a)))?;
        for (o, r) in bufs.iter().zip(&self.resident) {
            if let Some(src) = r.and_then(|m| ins.get(m)) {
                let n = Buffer::byte_len(&o.aval)?;
                if src.storage.len() < n || o.storage.len() < n {
                    return Err(Error::Execution("fused loop: carry buffer is too small".into()));
                }
                // SAFETY: both hold `n` bytes (checked above); `o` is fresh, so they do not overlap.
                unsafe { std::ptr::copy_nonoverlapping(src.as_ptr() as *const u8, o.as_ptr(), n) };
            }
        }
        let ip: Vec<*const u8> = ins.iter().map(|b| b.as_ptr() as *const u8).collect();
        let op: Vec<*mut u8> = bufs.iter().map(|b| b.as_ptr()).collect();
        super::counters::FUSED_LOOP_CALLS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the function reads every element of each input and writes every element of each output,
        // all of the avals it was compiled for (checked above); the buffers and pointer arrays outlive the call.
        unsafe { (self.entry)(ip.as_ptr(), op.as_ptr(), 0, 0) };
        Ok(bufs)
    }
}

/// The most elements of any value of a fused loop: each element is its own SSA value. Values this big
/// are mostly moved rather than computed on (a Runge-Kutta tableau f32[7, 7] read a row at a time, a
/// trajectory buffer f32[10, 2] updated at an index, odeint's stage stack f32[7, 12] contracted with a
/// tableau row, BFGS's f32[10, 10] inverse Hessian: `scalar_lib`); kernels are limited to `MAX_POINTS`.
pub const MAX_ELEMS: usize = 128;
/// The most domain points of a kernel in a fused loop (each point is unrolled into scalar code, which
/// beats a vectorized kernel's dispatch only while it is short).
pub const MAX_POINTS: usize = 32;
/// A kernel over more points (up to `MAX_ELEMS`) still fits when its unrolled body stays this short:
/// moves and selects over a whole small value (odeint's f32[5, 12] interpolation coefficients kept or
/// replaced by the step's acceptance, a step on a f32[10, 10] carry), and BFGS's inverse-Hessian update
/// in 10 dimensions (`eye - rho * s y^T` and the `where(isfinite(rho), ...)` over f32[10, 10], about ten
/// instructions a point), so that its whole outer loop, line search included, is one function.
const MAX_KERNEL_UNROLLED: usize = 1024;
/// The most scalar instructions the unrolled kernels of a fused loop may emit (domain points times body
/// length, summed over its plans): bounds code size and compile time (a Dormand-Prince step of a 12-value
/// state, seven right-hand sides and the tableau products, is about 4500).
const MAX_UNROLLED: usize = 8192;

/// The most math-function evaluations (domain points times math instructions, summed over the kernels
/// of the loop's plans, each body once) a fused loop unrolls. Unrolled, each is one scalar evaluation;
/// the in-place path (`loop_body`) evaluates them 4 to 16 lanes at a time after a fixed cost per
/// iteration. Measured per iteration of a `while_loop` over f32[n] through `tanh` and `sin` (two per
/// element; RESULTS.md, "loops with 17-64-element carries"), the fused loop wins up to n = 12, the two
/// meet at n = 16 to 20, and the in-place path is 25-30% faster at n = 24 and 32; arithmetic-only bodies
/// stay fused at every size (4x faster at n = 32). A heavy loop the in-place path cannot take is still
/// fused: the step-by-step sub-plans are slower than either.
const MAX_MATH_EVALS: usize = 32;

fn small(a: &Aval) -> bool {
    a.numel().is_some_and(|n| n <= MAX_ELEMS)
}

fn points(domain: &[usize]) -> usize {
    domain.iter().product()
}

/// The element of input `inp` at every domain point (row-major), or `None` when one falls outside the
/// slot's `n` elements.
fn load_index(inp: &crate::plan::KernelInput, domain: &[usize], n: usize) -> Option<Vec<usize>> {
    let mut out = Vec::with_capacity(points(domain));
    for p in 0..points(domain) {
        let (mut rest, mut e) = (p, inp.offset);
        for (d, &len) in domain.iter().enumerate().rev() {
            e += (rest % len) as isize * *inp.strides.get(d)?;
            rest /= len;
        }
        out.push(usize::try_from(e).ok().filter(|&e| e < n)?);
    }
    Some(out)
}

/// Per domain point, the index of each domain axis.
fn point_index(domain: &[usize], p: usize) -> Vec<usize> {
    let mut idx = vec![0; domain.len()];
    let mut rest = p;
    for d in (0..domain.len()).rev() {
        idx[d] = rest % domain[d];
        rest /= domain[d];
    }
    idx
}

/// For a kernel whose loop nest vectorizes its reduced axis (`Mode::InnerRed`): the length of the innermost
/// (coalesced) reduced loop, the points per vector iteration (lanes x unroll) and the lanes.
fn inner_red(p: &Plan, k: &crate::plan::Kernel) -> Result<Option<(usize, usize, usize)>> {
    if k.outputs.iter().all(|o| o.kind == OutputKind::Store) {
        return Ok(None);
    }
    let out_dtypes: Vec<DType> = k.outputs.iter().map(|o| p.slots[o.slot].dtype).collect();
    let (mode, lanes, unroll) = super::loop_plan::plan_mode(k, &out_dtypes)?;
    if mode != super::loop_plan::Mode::InnerRed || lanes == 0 {
        return Ok(None);
    }
    let (_, red, _, _) = super::loop_plan::axes(k, &out_dtypes)?;
    let n = red.last().map(|a| a.n as usize).ok_or_else(|| Error::Codegen("fused loop: no reduced axis".into()))?;
    Ok(Some((n, (lanes * unroll) as usize, lanes as usize)))
}

/// Whether kernel `k` of plan `p` can be emitted point by point with the same values as its loop nest
/// (reductions accumulate as the nest does: `inner_red`), arg-reductions only over one point.
fn small_kernel(p: &Plan, k: &crate::plan::Kernel) -> bool {
    let n = points(&k.domain);
    let red: usize = k.reduce_axes.iter().map(|&a| k.domain.get(a).copied().unwrap_or(0)).product();
    let out_dtypes: Vec<DType> = k.outputs.iter().filter_map(|o| p.slots.get(o.slot).map(|a| a.dtype)).collect();
    let reduces = k.outputs.iter().any(|o| o.kind != OutputKind::Store);
    n >= 1
        && (n <= MAX_POINTS || (n <= MAX_ELEMS && n.saturating_mul(k.body.len()) <= MAX_KERNEL_UNROLLED))
        && out_dtypes.len() == k.outputs.len()
        && k.reduce_axes.iter().all(|&a| a < k.domain.len())
        && k.inputs.iter().all(|i| {
            i.strides.len() == k.domain.len()
                && p.slots.get(i.slot).and_then(|a| a.numel()).is_some_and(|m| load_index(i, &k.domain, m).is_some())
        })
        && k.outputs.iter().all(|o| {
            o.value < k.body.len()
                && p.slots.get(o.slot).and_then(|a| a.numel()).is_some_and(|m| match o.kind {
                    OutputKind::Store => m == n,
                    OutputKind::Reduce(_) => red >= 1 && m * red == n && p.slots[o.slot].dtype == k.body[o.value].dtype,
                    OutputKind::ArgReduce { .. } => red == 1 && m == n,
                })
        })
        && (!reduces || inner_red(p, k).is_ok())
        // (point by point the sums add left to right: XLA's order only up to 32 per row)
        && match super::loop_plan::kernel_sum_order(k, &out_dtypes) {
            Ok(None) => true,
            Ok(Some((super::loop_plan::SumOrder::Xla, n))) => n <= 32,
            _ => false,
        }
}

/// Whether `p` is made only of small kernels (`small_kernel`), views and (recursively) such control steps
/// over small slots. Nested `cond`s become basic blocks, nested loops become inner loops.
fn small_plan(p: &Plan) -> bool {
    p.slots.iter().all(small)
        && p.outputs.iter().all(|&s| s < p.slots.len())
        && p.steps.iter().all(|s| match s {
            Step::View { src, dst } => {
                *src < p.slots.len() && *dst < p.slots.len() && p.slots[*src].numel() == p.slots[*dst].numel()
            }
            Step::Kernel(k) => small_kernel(p, k),
            Step::Control(c) => {
                c.inputs().iter().chain(c.outputs()).all(|&s| s < p.slots.len()) && small_control(c)
            }
            Step::Library(l) => super::scalar_lib::supported(l, &p.slots),
        })
}

fn small_control(c: &ControlStep) -> bool {
    match c {
        ControlStep::Cond { branches, .. } => branches.iter().all(small_plan),
        ControlStep::While { cond, body, .. } => small_plan(cond) && small_plan(body),
        ControlStep::Scan { body, xs, outputs, init, .. } => {
            xs.is_empty() && outputs.len() == init.len() && small_plan(body)
        }
    }
}

/// The most elements of a stacked `xs` input or `ys` output of an outermost fused scan: these stay in
/// memory (each iteration loads its row of `xs` and stores its row of `ys` at the counter), so only the
/// rows count against `MAX_ELEMS`.
const MAX_STACKED: usize = 1 << 22;

/// Whether `c` is a scan that reads `xs` or stacks `ys` (odeint's loop over output times): fused only as
/// the outermost step, its stacked values addressed in the caller's buffers (`emit_stacked_scan`).
fn stacked(c: &ControlStep) -> bool {
    matches!(c, ControlStep::Scan { xs, init, outputs, .. } if !xs.is_empty() || outputs.len() > init.len())
}

/// Whether stacked scan `c` (`stacked`) fits: small rows, consts and carries small or kept in memory
/// (`resident_fits`), a small body (`resident_plan` with values in memory), each row the body's slot of
/// that position.
fn stacked_scan_fits(c: &ControlStep, in_avals: &[Aval], out_avals: &[Aval]) -> bool {
    let ControlStep::Scan { body, consts, init, xs, length, .. } = c else {
        return false;
    };
    let (nk, ni) = (consts.len(), init.len());
    let row_ok = |a: &Aval, row: Option<&Aval>| {
        *length >= 1
            && a.shape.first() == Some(length)
            && a.numel().is_some_and(|n| n <= MAX_STACKED)
            && row.is_some_and(|r| r.dtype == a.dtype && r.shape == a.shape[1..] && small(r))
    };
    let body_outs: Vec<Option<&Aval>> = body.outputs.iter().map(|&s| body.slots.get(s)).collect();
    in_avals.len() == nk + ni + xs.len()
        && out_avals.len() >= ni
        && body.num_inputs == in_avals.len()
        && body_outs.len() == out_avals.len()
        && in_avals[..nk + ni].iter().chain(&out_avals[..ni]).all(|a| small(a) || in_memory(a))
        && in_avals[nk..nk + ni] == out_avals[..ni]
        && in_avals[nk + ni..].iter().enumerate().all(|(j, a)| row_ok(a, body.slots.get(nk + ni + j)))
        && out_avals[ni..].iter().zip(&body_outs[ni..]).all(|(a, r)| row_ok(a, *r))
        && match in_avals[..nk + ni].iter().all(small) {
            true => small_plan(body),
            false => resident_plan(body),
        }
}

/// Whether a value too big for SSA values can stay in memory in a fused loop (`resident_fits`): its byte
/// offsets fit the 32-bit displacements of loads and stores.
fn in_memory(a: &Aval) -> bool {
    a.numel().is_some_and(|n| n.saturating_mul(a.dtype.size()) <= i32::MAX as usize)
}

/// For a `while`, or a `scan` without `xs` and `ys` (a `fori_loop`), whose consts or carries are too big
/// for SSA values (`small`) but are only read by windows and points (`dynamic_slice`, `gather`, a
/// kernel's loads of a few elements) and written by windows and points (`dynamic_update_slice`, a
/// `scatter`: `x.at[i].add(v)`): the loop is fused with those values in memory — a const read where it
/// is, a carry in its output buffer, updated there in place, so an iteration costs what its few
/// elements cost, not a copy of the array (XLA's in-place loop buffers). Everything else in the plans
/// must fit as for `small_plan`. Returns, per output, the input whose value a carry in memory starts
/// from (`FusedLoop::resident`). Whether every write lands in the carry's own buffer with no later read
/// of the old value is checked while emitting (`eval_plan_mem`: `Unsupported` otherwise).
fn resident_fits(c: &ControlStep, in_avals: &[Aval], out_avals: &[Aval]) -> Option<Vec<Option<usize>>> {
    let (first, plans) = match c {
        ControlStep::While { cond, body, cond_consts, body_consts, .. } => (cond_consts.len() + body_consts.len(), vec![cond, body]),
        ControlStep::Scan { body, consts, .. } if !stacked(c) => (consts.len(), vec![body]),
        _ => return None,
    };
    if in_avals.len() != first + out_avals.len() || !in_avals.iter().all(|a| small(a) || in_memory(a)) {
        return None;
    }
    let mut resident = Vec::with_capacity(out_avals.len());
    for (j, a) in out_avals.iter().enumerate() {
        if in_avals[first + j] != *a {
            return None;
        }
        resident.push((!small(a)).then_some(first + j));
    }
    plans.iter().all(|p| resident_plan(p)).then_some(resident)
}

/// `small_plan` for a plan of a loop fused with values in memory (`resident_fits`): its big slots are
/// inputs, views of big slots, or the results of window and point writes into them.
fn resident_plan(p: &Plan) -> bool {
    let n = p.slots.len();
    let big = |s: usize| p.slots.get(s).is_some_and(|a| !small(a));
    if !p.slots.iter().all(|a| small(a) || in_memory(a)) || !p.outputs.iter().all(|&s| s < n) {
        return false;
    }
    // Per slot: a big slot with a home (an input, or made by a view or a write in place).
    let mut homed: Vec<bool> = (0..n).map(|s| s < p.num_inputs).collect();
    for st in &p.steps {
        let ok = match st {
            Step::View { src, dst } => {
                let ok = *src < n && *dst < n && p.slots[*src].numel() == p.slots[*dst].numel() && big(*src) == big(*dst);
                if ok && big(*src) {
                    homed[*dst] = homed[*src];
                }
                ok
            }
            Step::Kernel(k) => {
                small_kernel(p, k)
                    && k.outputs.iter().all(|o| !big(o.slot))
                    && k.inputs.iter().all(|i| !big(i.slot) || homed[i.slot])
            }
            Step::Library(l) if l.inputs.iter().chain(&l.outputs).any(|&s| big(s)) => {
                let ok = super::scalar_lib::supported_in_memory(l, &p.slots, big) && homed[l.inputs[0]];
                if ok && big(l.outputs[0]) {
                    homed[l.outputs[0]] = true;
                }
                ok
            }
            Step::Library(l) => super::scalar_lib::supported(l, &p.slots),
            Step::Control(c) => {
                c.inputs().iter().chain(c.outputs()).all(|&s| s < n && !big(s)) && small_control(c)
            }
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Scalar instructions emitted for the kernels of `c` (each loop body once).
fn unrolled_size(c: &ControlStep) -> usize {
    c.plans()
        .iter()
        .map(|p| {
            p.steps
                .iter()
                .map(|s| match s {
                    Step::Kernel(k) => points(&k.domain).saturating_mul(k.body.len()),
                    Step::Control(inner) => unrolled_size(inner),
                    Step::Library(l) => super::scalar_lib::cost(l, &p.slots),
                    Step::View { .. } => 0,
                })
                .fold(0usize, usize::saturating_add)
        })
        .fold(0usize, usize::saturating_add)
}

/// Math-function evaluations unrolled for the kernels of `c` (each loop body once): `MAX_MATH_EVALS`.
fn math_evals(c: &ControlStep) -> usize {
    c.plans()
        .iter()
        .flat_map(|p| p.steps.iter())
        .map(|s| match s {
            Step::Kernel(k) => points(&k.domain).saturating_mul(super::module::math_calls(k)),
            Step::Control(inner) => math_evals(inner),
            _ => 0,
        })
        .fold(0usize, usize::saturating_add)
}

/// Whether `c` unrolls more math-function evaluations than `MAX_MATH_EVALS`: such a loop runs faster on
/// the in-place path when that path takes it (`control::compile_controls` asks this first).
pub fn heavy_math(c: &ControlStep) -> bool {
    math_evals(c) > MAX_MATH_EVALS
}

#[cfg(test)]
thread_local! {
    /// Set by unit tests of the step-by-step and in-place loop paths: loops compiled on this thread are
    /// not fused (a thread's own switch, unlike `CRANAX_NO_FUSED_LOOPS`, so parallel tests don't race).
    pub static NO_FUSED_LOOPS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Compiles the fused form of `c` when it qualifies (else `None`).
pub fn compile(c: &ControlStep, slots: &[Aval]) -> Result<Option<FusedLoop>> {
    if std::env::var_os("CRANAX_NO_FUSED_LOOPS").is_some_and(|v| v == "1") {
        return Ok(None);
    }
    #[cfg(test)]
    if NO_FUSED_LOOPS.with(|c| c.get()) {
        return Ok(None);
    }
    // A lone cond is cheap to dispatch step by step; fuse loops (which may contain conds).
    if matches!(c, ControlStep::Cond { .. }) {
        return Ok(None);
    }
    let in_avals: Vec<Aval> = c.inputs().iter().filter_map(|&s| slots.get(s).cloned()).collect();
    let out_avals: Vec<Aval> = c.outputs().iter().filter_map(|&s| slots.get(s).cloned()).collect();
    let mut resident = vec![None; out_avals.len()];
    let fits = if stacked(c) {
        if let ControlStep::Scan { consts, init, .. } = c {
            for (j, a) in out_avals.iter().enumerate().take(init.len()) {
                resident[j] = (!small(a)).then_some(consts.len() + j);
            }
        }
        stacked_scan_fits(c, &in_avals, &out_avals)
    } else if in_avals.iter().chain(&out_avals).all(small) {
        small_control(c)
    } else {
        match resident_fits(c, &in_avals, &out_avals) {
            Some(r) => {
                resident = r;
                true
            }
            None => false,
        }
    };
    if in_avals.len() != c.inputs().len()
        || out_avals.len() != c.outputs().len()
        || !fits
        || unrolled_size(c) > MAX_UNROLLED
    {
        return Ok(None);
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(c, &in_avals, &out_avals)));
    match r {
        Ok(Ok((entry, module, clif))) => {
            Ok(Some(FusedLoop { entry, in_avals, out_avals, resident, module: Mutex::new(Some(module)), clif }))
        }
        Ok(Err(Error::Unsupported(_))) => Ok(None),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Error::Codegen("code generator panicked compiling a fused loop".into())),
    }
}

fn cg<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> Error + '_ {
    move |e| Error::Codegen(format!("{what}: {e}"))
}

fn plans_of<'a>(c: &'a ControlStep, out: &mut Vec<&'a Plan>) {
    for p in c.plans() {
        out.push(p);
        for st in &p.steps {
            if let Step::Control(inner) = st {
                plans_of(inner, out);
            }
        }
    }
}

fn build(c: &ControlStep, in_avals: &[Aval], out_avals: &[Aval]) -> Result<(KernelFn, JITModule, String)> {
    let mut module = super::module::new_module()?;
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let call_conv = module.isa().default_call_conv();
    let sig = kernel_signature(call_conv);
    let id = module.declare_function("cranax_fused_loop", Linkage::Local, &sig).map_err(cg("declaring a loop"))?;
    ctx.func.signature = sig;
    let mut imports: Imports = HashMap::new();
    let mut plans = Vec::new();
    plans_of(c, &mut plans);
    for p in &plans {
        for st in &p.steps {
            if let Step::Kernel(k) = st {
                for (f, dt) in super::module::math_uses(k) {
                    if let std::collections::hash_map::Entry::Vacant(e) = imports.entry((f, dt)) {
                        let fid = module
                            .declare_function(&f.symbol_name(dt), Linkage::Import, &super::math_fn::signature(f, dt, call_conv))
                            .map_err(cg("declaring a math import"))?;
                        e.insert(module.declare_func_in_func(fid, &mut ctx.func));
                    }
                }
            }
        }
    }
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        let (inp, outp) = (params[0], params[1]);
        let flags = super::clif::trusted();
        // A stacked scan's `xs` stay in memory: their pointers, no element values.
        let resident = match c {
            ControlStep::Scan { consts, init, .. } if stacked(c) => consts.len() + init.len(),
            _ => in_avals.len(),
        };
        // Other big values (`resident_fits`) stay in memory too: their addresses, no element values.
        let mut vals: Vec<Vec<Value>> = Vec::with_capacity(in_avals.len());
        let mut in_ptrs = Vec::with_capacity(in_avals.len());
        let mut in_mem = Vec::with_capacity(in_avals.len());
        for (k, a) in in_avals.iter().enumerate() {
            let ptr = b.ins().load(types::I64, flags, inp, (8 * k) as i32);
            in_ptrs.push(ptr);
            let sz = a.dtype.size() as i32;
            let n = if k < resident && small(a) { a.numel().unwrap_or(0) as i32 } else { 0 };
            in_mem.push((k < resident && !small(a)).then_some(ptr));
            vals.push((0..n).map(|e| b.ins().load(cl_type(a.dtype), flags, ptr, e * sz)).collect());
        }
        let out_ptrs: Vec<Value> = (0..out_avals.len()).map(|k| b.ins().load(types::I64, flags, outp, (8 * k) as i32)).collect();
        // A carry kept in memory lives in its output buffer (`FusedLoop::run` copies its initial value).
        let carries = match c {
            ControlStep::Scan { init, .. } if stacked(c) => init.len(),
            _ => out_avals.len(),
        };
        let out_mem: Vec<Option<Value>> =
            out_avals.iter().zip(&out_ptrs).take(carries).map(|(a, &p)| (!small(a)).then_some(p)).collect();
        let mem = Mem { ins: &in_mem, outs: &out_mem };
        let outs = if stacked(c) {
            emit_stacked_scan(&mut b, &imports, c, &vals, &in_ptrs, &out_ptrs, in_avals, out_avals, &mem)?
        } else {
            emit_control(&mut b, &imports, c, &vals, in_avals, out_avals, &mem)?
        };
        for (k, (x, a)) in outs.iter().zip(out_avals).enumerate() {
            let ptr = out_ptrs[k];
            let sz = a.dtype.size() as i32;
            for (e, v) in x.iter().enumerate() {
                b.ins().store(flags, *v, ptr, e as i32 * sz);
            }
        }
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(module.target_config());
    }
    let clif = ctx.func.display().to_string();
    super::code_store::define(&mut module, id, &mut ctx).map_err(|e| Error::Codegen(format!("compiling a fused loop: {e}")))?;
    module.clear_context(&mut ctx);
    module.finalize_definitions().map_err(cg("finalizing"))?;
    let p = module.get_finalized_function(id);
    // SAFETY: defined with `kernel_signature`, which is this ABI.
    let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(p) };
    Ok((entry, module, clif))
}

/// Emits stacked scan `c` (`stacked`, `stacked_scan_fits`) as the whole function: consts and carries are
/// SSA values (`ins`), each iteration loads row `i` of each `xs` from its buffer (`in_ptrs`) and stores row
/// `i` of each `ys` into its output buffer (`out_ptrs`), `i` counting down when `reverse`, as the
/// step-by-step scan does; returns the final carries (the `ys` are already written).
#[allow(clippy::too_many_arguments)]
fn emit_stacked_scan(
    b: &mut FunctionBuilder,
    imports: &Imports,
    c: &ControlStep,
    ins: &[Vec<Value>],
    in_ptrs: &[Value],
    out_ptrs: &[Value],
    in_avals: &[Aval],
    out_avals: &[Aval],
    mem: &Mem,
) -> Result<Vec<Vec<Value>>> {
    let bad = |m: &str| Error::Codegen(format!("fused scan: {m}"));
    let ControlStep::Scan { body, consts, init, length, reverse, .. } = c else {
        return Err(bad("not a scan"));
    };
    let (nk, ni) = (consts.len(), init.len());
    let flags = super::clif::trusted();
    // (a carry in memory: no variables, its buffer is updated in place)
    let carry_vars: Vec<Vec<Variable>> = out_avals[..ni]
        .iter()
        .enumerate()
        .map(|(j, a)| {
            let n = if mem.output(j).is_some() { 0 } else { a.numel().unwrap_or(0) };
            (0..n).map(|_| b.declare_var(cl_type(a.dtype))).collect()
        })
        .collect();
    for (vs, xs) in carry_vars.iter().zip(&ins[nk..nk + ni]) {
        if vs.len() != xs.len() {
            return Err(bad("carry of the wrong size"));
        }
        for (v, x) in vs.iter().zip(xs) {
            b.def_var(*v, *x);
        }
    }
    let counter = b.declare_var(types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    b.def_var(counter, zero);
    let (header, body_blk, exit) = (b.create_block(), b.create_block(), b.create_block());
    b.ins().jump(header, &[]);
    b.switch_to_block(header);
    let i = b.use_var(counter);
    let go = b.ins().icmp_imm_s(IntCC::SignedLessThan, i, *length as i64);
    b.ins().brif(go, body_blk, &[], exit, &[]);
    b.switch_to_block(body_blk);
    let row = if *reverse {
        let last = b.ins().iconst(types::I64, *length as i64 - 1);
        b.ins().isub(last, i)
    } else {
        i
    };
    // Address of row `row` of a stacked value of aval `a` at `ptr`, and the row's element count.
    let row_at = |b: &mut FunctionBuilder, ptr: Value, a: &Aval| {
        let n = a.numel().unwrap_or(0) / (*length).max(1);
        let off = b.ins().imul_imm_s(row, (n * a.dtype.size()) as i64);
        (b.ins().iadd(ptr, off), n)
    };
    let mut bin: Vec<Vec<Value>> = ins[..nk].to_vec();
    bin.extend(carry_vars.iter().map(|vs| vs.iter().map(|v| b.use_var(*v)).collect::<Vec<_>>()));
    for (&ptr, a) in in_ptrs[nk + ni..].iter().zip(&in_avals[nk + ni..]) {
        let (at, n) = row_at(b, ptr, a);
        let sz = a.dtype.size() as i32;
        bin.push((0..n as i32).map(|e| b.ins().load(cl_type(a.dtype), flags, at, e * sz)).collect());
    }
    let carry_mem: Vec<Option<Value>> = (0..ni).map(|j| mem.output(j)).collect();
    let bmem: Vec<Option<Value>> = (0..nk).map(|k| mem.input(k)).chain(carry_mem.iter().copied()).collect();
    let writable: Vec<Value> = carry_mem.iter().flatten().copied().collect();
    let (new, homes) = eval_plan_mem(b, imports, body, &bin, &bmem, &writable)?;
    if new.len() != out_avals.len() || homes.len() != out_avals.len() {
        return Err(bad("body output count"));
    }
    // Each carry in memory comes back in its own buffer; rows are SSA values.
    if homes[..ni].iter().zip(&carry_mem).any(|(h, m)| h != m) || homes[ni..].iter().any(Option::is_some) {
        return Err(Error::Unsupported("a scan carry in memory not updated in its own buffer".into()));
    }
    for (vs, xs) in carry_vars.iter().zip(&new[..ni]) {
        if vs.len() != xs.len() {
            return Err(bad("carry of the wrong size"));
        }
        for (v, x) in vs.iter().zip(xs) {
            b.def_var(*v, *x);
        }
    }
    for ((&ptr, a), ys) in out_ptrs[ni..].iter().zip(&out_avals[ni..]).zip(&new[ni..]) {
        let (at, n) = row_at(b, ptr, a);
        if ys.len() != n {
            return Err(bad("row of the wrong size"));
        }
        let sz = a.dtype.size() as i32;
        for (e, v) in ys.iter().enumerate() {
            b.ins().store(flags, *v, at, e as i32 * sz);
        }
    }
    let i1 = b.ins().iadd_imm_s(i, 1);
    b.def_var(counter, i1);
    b.ins().jump(header, &[]);
    b.switch_to_block(exit);
    Ok(carry_vars.iter().map(|vs| vs.iter().map(|v| b.use_var(*v)).collect()).collect())
}

/// Emits control step `c` on SSA values `ins` (per input in `ControlStep::inputs()` order, one value per
/// element, of avals `in_avals`); returns its outputs (of avals `out_avals`). Loops are real loops (header,
/// body, exit blocks); a cond is a chain of tests branching to one block per branch, joined in a merge block.
/// Inputs and outputs of `mem` stay in memory: their value lists are empty (a loop's carry in memory is
/// its output buffer, updated in place by the body).
fn emit_control(
    b: &mut FunctionBuilder,
    imports: &Imports,
    c: &ControlStep,
    ins: &[Vec<Value>],
    in_avals: &[Aval],
    out_avals: &[Aval],
    mem: &Mem,
) -> Result<Vec<Vec<Value>>> {
    let bad = |m: &str| Error::Codegen(format!("fused loop: {m}"));
    if ins.len() != in_avals.len() {
        return Err(bad("input count"));
    }
    let outs: Vec<Vec<Variable>> = out_avals
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let n = if mem.output(k).is_some() { 0 } else { a.numel().unwrap_or(0) };
            (0..n).map(|_| b.declare_var(cl_type(a.dtype))).collect()
        })
        .collect();
    let define = |b: &mut FunctionBuilder, vars: &[Vec<Variable>], vals: &[Vec<Value>]| -> Result<()> {
        if vals.len() < vars.len() {
            return Err(bad("too few values"));
        }
        for (vs, xs) in vars.iter().zip(vals) {
            if vs.len() != xs.len() {
                return Err(bad("value of the wrong size"));
            }
            for (v, x) in vs.iter().zip(xs) {
                b.def_var(*v, *x);
            }
        }
        Ok(())
    };
    match c {
        ControlStep::Cond { .. } if !mem.is_empty() => return Err(Error::Unsupported("a cond over values in memory".into())),
        ControlStep::Cond { branches, .. } => {
            let (idx, ops_) = ins.split_first().ok_or_else(|| bad("cond without index"))?;
            let idx = *idx.first().ok_or_else(|| bad("cond index without a value"))?;
            let merge = b.create_block();
            let blocks: Vec<_> = branches.iter().map(|_| b.create_block()).collect();
            let n = blocks.len();
            if n == 0 {
                return Err(bad("cond without branches"));
            }
            if in_avals[0].dtype == DType::Bool {
                if n != 2 {
                    return Err(bad("bool index needs two branches"));
                }
                b.ins().brif(idx, blocks[1], &[], blocks[0], &[]);
            } else {
                // branch j runs when clamp(idx, 0, n-1) == j: test idx <= j in order.
                for (j, blk) in blocks.iter().enumerate().take(n - 1) {
                    let t = b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, idx, j as i64);
                    let next = b.create_block();
                    b.ins().brif(t, *blk, &[], next, &[]);
                    b.switch_to_block(next);
                }
                b.ins().jump(blocks[n - 1], &[]);
            }
            for (p, blk) in branches.iter().zip(&blocks) {
                b.switch_to_block(*blk);
                let r = eval_plan(b, imports, p, ops_)?;
                if r.len() != outs.len() {
                    return Err(bad("branch output count"));
                }
                define(b, &outs, &r)?;
                b.ins().jump(merge, &[]);
            }
            b.switch_to_block(merge);
        }
        ControlStep::While { .. } | ControlStep::Scan { .. } => {
            let (cond, body, nc, nb, length) = match c {
                ControlStep::While { cond, body, cond_consts, body_consts, .. } => {
                    (Some(cond), body, cond_consts.len(), body_consts.len(), 0)
                }
                ControlStep::Scan { body, consts, length, .. } => (None, body, 0, consts.len(), *length),
                ControlStep::Cond { .. } => return Err(bad("cond in a loop arm")),
            };
            if ins.len() < nc + nb || ins.len() - nc - nb != outs.len() {
                return Err(bad("carry count"));
            }
            let carry_mem: Vec<Option<Value>> = (0..outs.len()).map(|k| mem.output(k)).collect();
            let (cconsts, rest) = ins.split_at(nc);
            let (bconsts, init) = rest.split_at(nb);
            define(b, &outs, init)?;
            let counter = b.declare_var(types::I64);
            let zero = b.ins().iconst(types::I64, 0);
            b.def_var(counter, zero);
            let header = b.create_block();
            let body_blk = b.create_block();
            let exit = b.create_block();
            b.ins().jump(header, &[]);
            b.switch_to_block(header);
            let carry: Vec<Vec<Value>> = outs.iter().map(|vs| vs.iter().map(|v| b.use_var(*v)).collect()).collect();
            let go = match cond {
                Some(cp) => {
                    let cin: Vec<Vec<Value>> = cconsts.iter().chain(&carry).cloned().collect();
                    let cmem: Vec<Option<Value>> = (0..nc).map(|k| mem.input(k)).chain(carry_mem.iter().copied()).collect();
                    let (p, _) = eval_plan_mem(b, imports, cp, &cin, &cmem, &[])?;
                    let pv = *p.first().and_then(|v| v.first()).ok_or_else(|| bad("cond plan without output"))?;
                    b.ins().icmp_imm_s(IntCC::NotEqual, pv, 0)
                }
                None => {
                    let i = b.use_var(counter);
                    b.ins().icmp_imm_s(IntCC::SignedLessThan, i, length as i64)
                }
            };
            b.ins().brif(go, body_blk, &[], exit, &[]);
            b.switch_to_block(body_blk);
            let bin: Vec<Vec<Value>> = bconsts.iter().chain(&carry).cloned().collect();
            let bmem: Vec<Option<Value>> = (nc..nc + nb).map(|k| mem.input(k)).chain(carry_mem.iter().copied()).collect();
            let writable: Vec<Value> = carry_mem.iter().flatten().copied().collect();
            let (new, homes) = eval_plan_mem(b, imports, body, &bin, &bmem, &writable)?;
            // Each carry in memory must come back in its own buffer (updated in place or passed through).
            if homes.len() < carry_mem.len() || homes.iter().zip(&carry_mem).any(|(h, m)| h != m) {
                return Err(Error::Unsupported("a loop carry in memory not updated in its own buffer".into()));
            }
            define(b, &outs, &new)?;
            let i = b.use_var(counter);
            let i1 = b.ins().iadd_imm_s(i, 1);
            b.def_var(counter, i1);
            b.ins().jump(header, &[]);
            b.switch_to_block(exit);
        }
    }
    Ok(outs.iter().map(|vs| vs.iter().map(|v| b.use_var(*v)).collect()).collect())
}

/// Emits a plan of small values on SSA values (one per element): `inputs` for its input slots; returns
/// its outputs' values. Each kernel is emitted point by point in its loop nest's order (row-major, reduced
/// axes innermost), each point's instructions by `ops::emit` as the nest emits them.
fn eval_plan(b: &mut FunctionBuilder, imports: &Imports, p: &Plan, inputs: &[Vec<Value>]) -> Result<Vec<Vec<Value>>> {
    let (vals, homes) = eval_plan_mem(b, imports, p, inputs, &[], &[])?;
    match homes.iter().all(Option::is_none) {
        true => Ok(vals),
        false => Err(Error::Codegen("fused loop: a value in memory outside a loop kept there".into())),
    }
}

/// `eval_plan` where input `k` with `mem[k]` (an address) is in memory (its value list empty): kernels
/// read its elements and library steps their windows there (`scalar_lib::supported_in_memory`), and a
/// window or point write into it is done in place when its address is `writable` (a loop carry's own
/// buffer), making the step's result that memory. Since the old value is then gone, a step reading a
/// value in memory after a write to the same buffer is `Unsupported` (the loop runs another way). Returns
/// the outputs and, per output, its address when it is in memory.
fn eval_plan_mem(
    b: &mut FunctionBuilder,
    imports: &Imports,
    p: &Plan,
    inputs: &[Vec<Value>],
    mem: &[Option<Value>],
    writable: &[Value],
) -> Result<(Vec<Vec<Value>>, Vec<Option<Value>>)> {
    if inputs.len() != p.num_inputs {
        return Err(Error::Codegen("fused loop: plan input count".into()));
    }
    let mut slot: Vec<Option<Vec<Value>>> = vec![None; p.slots.len()];
    for (k, v) in inputs.iter().enumerate() {
        slot[k] = Some(v.clone());
    }
    let mut homes = Homes::new(p.slots.len(), mem);
    let missing = || Error::Codegen("fused loop: slot read before it is written".into());
    for st in &p.steps {
        match st {
            Step::View { src, dst } => {
                slot[*dst] = Some(slot[*src].clone().ok_or_else(missing)?);
                homes.view(*src, *dst)?;
            }
            Step::Control(c) => {
                if c.inputs().iter().chain(c.outputs()).any(|&s| homes.at.get(s).is_some_and(Option::is_some)) {
                    return Err(Error::Unsupported("a nested control step over a value in memory".into()));
                }
                let ins = c.inputs().iter().map(|&s| slot[s].clone().ok_or_else(missing)).collect::<Result<Vec<_>>>()?;
                let ia: Vec<Aval> = c.inputs().iter().map(|&s| p.slots[s].clone()).collect();
                let oa: Vec<Aval> = c.outputs().iter().map(|&s| p.slots[s].clone()).collect();
                let outs = emit_control(b, imports, c, &ins, &ia, &oa, &Mem::NONE)?;
                for (&s, v) in c.outputs().iter().zip(outs) {
                    slot[s] = Some(v);
                }
            }
            Step::Kernel(k) => {
                let n = points(&k.domain);
                let idx = k
                    .inputs
                    .iter()
                    .map(|i| load_index(i, &k.domain, p.slots[i.slot].numel().unwrap_or(0)).ok_or_else(missing))
                    .collect::<Result<Vec<_>>>()?;
                // Inputs in memory: their addresses (every element the kernel reads is in place).
                let at_mem = k.inputs.iter().map(|i| homes.read(i.slot)).collect::<Result<Vec<_>>>()?;
                let live = super::loop_plan::live_from(k, k.outputs.iter().map(|o| o.value), |_| false);
                let is_red: Vec<bool> = (0..k.domain.len()).map(|d| k.reduce_axes.contains(&d)).collect();
                let inner = inner_red(p, k)?;
                // Per output and element: its value (stores), or its accumulators (reductions: one, or for a
                // vectorized reduced axis one per vector lane and the tail), filled in point order.
                let cells = inner.map_or(1, |(_, lu, _)| lu + 1);
                let mut res: Vec<Vec<Vec<Option<Value>>>> = k
                    .outputs
                    .iter()
                    .map(|o| {
                        let c = if o.kind == OutputKind::Store { 1 } else { cells };
                        vec![vec![None; c]; p.slots[o.slot].numel().unwrap_or(0)]
                    })
                    .collect();
                // Inputs a gather reads at run-time positions: spilled to a stack slot once per kernel.
                let mut spilled: HashMap<usize, Value> = HashMap::new();
                for pt in 0..n {
                    let at = point_index(&k.domain, pt);
                    let mut vals: Vec<Option<Value>> = vec![None; k.body.len()];
                    for i in 0..k.body.len() {
                        if !live[i] {
                            continue;
                        }
                        let ins = &k.body[i];
                        let v = match &ins.op {
                            KOp::Load { input } => {
                                let inp = k.inputs.get(*input).ok_or_else(missing)?;
                                let e = idx[*input][pt];
                                match at_mem.get(*input).copied().flatten() {
                                    Some(a) => {
                                        let dt = p.slots[inp.slot].dtype;
                                        b.ins().load(cl_type(dt), super::clif::trusted(), a, (e * dt.size()) as i32)
                                    }
                                    None => *slot.get(inp.slot).and_then(|s| s.as_ref()).and_then(|s| s.get(e)).ok_or_else(missing)?,
                                }
                            }
                            KOp::Gather { input, index, stride, hi, fill } => {
                                let inp = k.inputs.get(*input).ok_or_else(missing)?;
                                let vs = slot.get(inp.slot).and_then(|s| s.as_ref()).ok_or_else(missing)?;
                                let in_mem = at_mem.get(*input).copied().flatten();
                                let len = match in_mem {
                                    Some(_) => p.slots[inp.slot].numel().unwrap_or(0),
                                    None => vs.len(),
                                };
                                let e = idx[*input][pt] as i128;
                                // (The plan validator checked this too; the slot below must hold every position.)
                                let far = e + *stride as i128 * *hi as i128;
                                if far < 0 || far >= len as i128 || e >= len as i128 {
                                    return Err(Error::Codegen("fused loop: gather outside its input".into()));
                                }
                                let base = match (in_mem, spilled.get(input)) {
                                    (Some(a), _) | (None, Some(&a)) => a,
                                    (None, None) => {
                                        let a = super::scalar_lib::spill(b, ins.dtype, vs);
                                        spilled.insert(*input, a);
                                        a
                                    }
                                };
                                let es = ins.dtype.size() as i64;
                                let at0 = b.ins().iadd_imm_s(base, e as i64 * es);
                                let iv = vals[*index].ok_or_else(missing)?;
                                let fv = match fill {
                                    Some(f) => Some(vals[*f].ok_or_else(missing)?),
                                    None => None,
                                };
                                let idt = k.body[*index].dtype;
                                let sb = *stride as i64 * es;
                                let (a, ok) = super::scalar_lib::gather_addr(b, at0, idt, iv, *hi, sb, fv.is_some(), false);
                                let x = b.ins().load(cl_type(ins.dtype), super::clif::trusted(), a, 0);
                                match (ok, fv) {
                                    (Some(c), Some(f)) => b.ins().select(c, x, f),
                                    _ => x,
                                }
                            }
                            KOp::Iota { axis } => {
                                let i = iconst(b, types::I64, *at.get(*axis).ok_or_else(missing)? as i64);
                                ops::convert(b, DType::I64, ins.dtype, i)
                            }
                            _ => ops::emit(b, imports, &k.body, i, &vals)?,
                        };
                        vals[i] = Some(v);
                    }
                    // The output element (the point's row-major index over the kept axes) and the position
                    // along the reduced axes (row-major), which picks the accumulator.
                    let (mut kept, mut red) = (0usize, 0usize);
                    for ((&i, &len), &r) in at.iter().zip(&k.domain).zip(&is_red) {
                        if r {
                            red = red * len + i;
                        } else {
                            kept = kept * len + i;
                        }
                    }
                    let acc = match inner {
                        Some((m, lu, _)) if red % m < m / lu * lu => red % m % lu,
                        Some((_, lu, _)) => lu,
                        None => 0,
                    };
                    for (o, out) in k.outputs.iter().enumerate() {
                        let x = vals[out.value].ok_or_else(missing)?;
                        let (dt, vdt) = (p.slots[out.slot].dtype, k.body[out.value].dtype);
                        let cell = match out.kind {
                            OutputKind::Store => res[o].get_mut(pt).and_then(|c| c.get_mut(0)),
                            _ => res[o].get_mut(kept).and_then(|c| c.get_mut(acc)),
                        }
                        .ok_or_else(missing)?;
                        *cell = Some(match out.kind {
                            OutputKind::Store => x,
                            OutputKind::Reduce(op) => {
                                let a = match *cell {
                                    Some(a) => a,
                                    None => ops::reduce_identity(b, vdt, op)?,
                                };
                                ops::reduce_combine(b, vdt, op, a, x)?
                            }
                            // (over one point: `small_kernel`)
                            OutputKind::ArgReduce { .. } => iconst(b, cl_type(dt), 0),
                        });
                    }
                }
                for (out, r) in k.outputs.iter().zip(res) {
                    let vdt = k.body[out.value].dtype;
                    let mut v = Vec::with_capacity(r.len());
                    for c in r {
                        v.push(match (out.kind, inner) {
                            (OutputKind::Reduce(op), Some((_, lu, lanes))) => {
                                // As the vectorized nest finishes: the vector accumulators combined in order
                                // (lane by lane), then the lanes in order, then the scalar tail; accumulators
                                // no point reached hold the identity.
                                let get = |b: &mut FunctionBuilder, j: usize| match c[j] {
                                    Some(v) => Ok(v),
                                    None => ops::reduce_identity(b, vdt, op),
                                };
                                let mut r: Option<Value> = None;
                                for l in 0..lanes {
                                    let mut x = get(b, l)?;
                                    for u in 1..lu / lanes {
                                        let y = get(b, u * lanes + l)?;
                                        x = ops::reduce_combine(b, vdt, op, x, y)?;
                                    }
                                    r = Some(match r {
                                        Some(r) => ops::reduce_combine(b, vdt, op, r, x)?,
                                        None => x,
                                    });
                                }
                                let (r, t) = (r.ok_or_else(missing)?, get(b, lu)?);
                                ops::reduce_combine(b, vdt, op, r, t)?
                            }
                            _ => c.first().copied().flatten().ok_or_else(missing)?,
                        });
                    }
                    slot[out.slot] = Some(v);
                }
            }
            Step::Library(l) => {
                let ins = l.inputs.iter().map(|&s| slot.get(s).cloned().flatten().ok_or_else(missing)).collect::<Result<Vec<_>>>()?;
                let at = l.inputs.iter().map(|&s| homes.read(s)).collect::<Result<Vec<_>>>()?;
                let x = at.first().copied().flatten();
                if (x.is_some() && !super::scalar_lib::supported_in_memory(l, &p.slots, |s| !small(&p.slots[s])))
                    || at.iter().skip(1).any(Option::is_some)
                {
                    return Err(Error::Unsupported(format!("library step {} over a value in memory", l.op.name())));
                }
                let outs = super::scalar_lib::emit(b, l, &p.slots, &ins, x)?;
                if outs.len() != l.outputs.len() {
                    return Err(Error::Codegen("fused loop: library step output count".into()));
                }
                if let (Some(a), Some(&o)) = (x, l.outputs.first()) {
                    if !small(&p.slots[o]) {
                        // (a write in place: `supported_in_memory`)
                        if !writable.contains(&a) {
                            return Err(Error::Unsupported("a write into a loop constant in memory".into()));
                        }
                        homes.write(a, o);
                        slot[o] = Some(vec![]);
                        continue;
                    }
                }
                for (&s, v) in l.outputs.iter().zip(outs) {
                    if Some(v.len()) != p.slots[s].numel() {
                        return Err(Error::Codegen("fused loop: library step output of the wrong size".into()));
                    }
                    slot[s] = Some(v);
                }
            }
        }
    }
    let vals = p.outputs.iter().map(|&o| slot.get(o).cloned().flatten().ok_or_else(missing)).collect::<Result<Vec<_>>>()?;
    let at = p.outputs.iter().map(|&o| homes.read(o)).collect::<Result<Vec<_>>>()?;
    Ok((vals, at))
}

/// Values in memory of a fused loop (`resident_fits`): per input and output of the outermost control step,
/// its address (`None`: SSA values).
struct Mem<'a> {
    ins: &'a [Option<Value>],
    outs: &'a [Option<Value>],
}

impl Mem<'_> {
    const NONE: Mem<'static> = Mem { ins: &[], outs: &[] };
    fn input(&self, k: usize) -> Option<Value> {
        self.ins.get(k).copied().flatten()
    }
    fn output(&self, k: usize) -> Option<Value> {
        self.outs.get(k).copied().flatten()
    }
    fn is_empty(&self) -> bool {
        self.ins.iter().chain(self.outs).all(Option::is_none)
    }
}

/// Where the slots of a plan in memory are while it is emitted: the address, and which write into that
/// buffer produced the slot's value (`version`), so a read of a value already overwritten in place is
/// caught.
struct Homes {
    at: Vec<Option<Value>>,
    version: Vec<u32>,
    current: HashMap<Value, u32>,
}

impl Homes {
    fn new(n: usize, mem: &[Option<Value>]) -> Homes {
        let mut at = vec![None; n];
        let mut current = HashMap::new();
        for (k, m) in mem.iter().enumerate().take(n) {
            at[k] = *m;
            if let Some(a) = m {
                current.insert(*a, 0);
            }
        }
        Homes { at, version: vec![0; n], current }
    }
    /// The address of slot `s` if it is in memory, when its value is still there.
    fn read(&self, s: usize) -> Result<Option<Value>> {
        match self.at.get(s).copied().flatten() {
            Some(a) if self.current.get(&a) == self.version.get(s) => Ok(Some(a)),
            Some(_) => Err(Error::Unsupported("a value in memory read after an update in place".into())),
            None => Ok(None),
        }
    }
    fn view(&mut self, src: usize, dst: usize) -> Result<()> {
        if let Some(a) = self.read(src)? {
            self.at[dst] = Some(a);
            self.version[dst] = self.version[src];
        }
        Ok(())
    }
    /// Slot `out` is the new value written in place at `a`.
    fn write(&mut self, a: Value, out: usize) {
        let v = self.current.entry(a).or_insert(0);
        *v += 1;
        self.version[out] = *v;
        self.at[out] = Some(a);
    }
}
