//! The Cranelift CPU backend: compiles a `Plan`'s kernels to machine code and runs plans on buffers.
//! Depends on `plan`, `ir`, `buffer` and `error` only (never on `opt` or `runtime`).
//!
//! Files, from the top down (each imports only files below it, except the one recursion of nested plans:
//! a control step holds compiled sub-plans, so `control`, `loop_body` and `exec` use `CpuExecutable`):
//! - this file: `CpuExecutable` and `compile` (validate, JIT every kernel, compile control steps).
//! - `exec`: running the plan's steps on buffers; `threads`: kernels split across a thread pool;
//!   `row_chain`: runs of kernels over a large array's rows (softmax) run a block of rows at a time.
//! - `control`: control-flow steps running compiled sub-plans; `scalar_loop` (loops over small values as
//!   one Cranelift function with a real loop) and `loop_body` (loop bodies run in place on raw buffers).
//! - `library`: plain-Rust routines for library steps (gemm, concatenate, gather, sort, ...).
//! - `validate`: defensive checks of the plan (indices, dtypes, in-bounds loads, control steps).
//! - `code_store`: functions' machine code kept and defined again without compiling (the persistent cache).
//! - `jit`: compiling all kernels of a plan into one `JITModule`.
//! - `codegen`: one kernel → one Cranelift function (emitting the loop nest); `loop_plan`: the loop nest's
//!   layout decided first (axes, strides, vector mode, strip plan).
//! - `simd`: kernel instructions on vector lanes (`vdiv`: integer division on them); `ops`: one `KOp` → Cranelift instructions with XLA
//!   semantics.
//! - `math`: transcendental functions (`emit_math`); `vmath` (inline vector math in Cranelift IR),
//!   `math_f32` (the f32 algorithms, written once for every lane type), `math_f64` (lgamma/digamma in f64
//!   lanes, likewise), `mathlib` (out-of-line copies),
//!   `blockmath` (those algorithms precompiled for AVX-512/AVX2, called per strip; the streaming copy).
//! - Leaves shared by the above: `module` (host ISA, `JITModule` setup, the kernel ABI `KernelFn`),
//!   `host_simd` (avx2 mode for the libraries' own dispatch: AVX-512 hidden from feature detection),
//!   `math_fn` (the `MathFn` vocabulary and import signatures), `clif` (Cranelift type and constant
//!   helpers), `counters` (control-flow work counters read by tests).
use std::fmt::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use cranelift_jit::JITModule;

use crate::buffer::Buffer;
use crate::error::{panic_message, Error, Result};
use crate::plan::{KOp, Kernel, OutputKind, Plan, Step};

mod blockmath;
mod clif;
pub mod code_store;
mod codegen;
pub mod control;
pub mod counters;
mod scalar_loop;
mod scalar_lib;
mod vdiv;
mod kfacts;
mod exec;
pub mod fpenv;
pub mod host_simd;
mod loop_body;
mod jit;
mod loop_plan;
pub mod library;
pub mod math;
mod math_f32;
mod lanes_pair;
mod math_f64;
mod math_xla64;
mod math_fn;
mod mathlib;
mod module;
mod ops;
mod row_chain;
mod simd;
mod special;
pub mod threads;
mod threefry;
mod validate;
mod vmath;
mod wide;
mod wide_half;
#[cfg(test)]
mod tests;

pub use loop_plan::{without_simd, Mode as SimdMode};
pub use module::kernel_signature;
pub use module::KernelFn;

/// A compiled plan: one JIT module owning every kernel's machine code.
pub struct CpuExecutable {
    pub plan: Plan,
    /// One entry per plan step; `Some` for kernel steps.
    kernels: Vec<Option<jit::CompiledKernel>>,
    /// Owns the machine code; freed on drop.
    module: Mutex<Option<JITModule>>,
    /// One entry per plan step; `Some` for control-flow steps (their compiled sub-plans).
    controls: Vec<Option<control::CompiledControl>>,
    /// Per step, the slots read for the last time there (not outputs): released right after it, so their
    /// memory returns to the buffer pool and the next step of that size reuses warm pages.
    frees: Vec<Vec<usize>>,
    /// Per step, the outputs of a small kernel without inputs (a constant, an iota, a broadcast scalar)
    /// after its first run: later runs share them instead of allocating and dispatching again (a
    /// diffrax solve's top-level plan is two dozen such steps before its loop). Sharing is safe because
    /// no step writes into a buffer it did not allocate (inputs are never written either).
    /// `None` for the other steps.
    consts: Vec<Option<std::sync::OnceLock<Vec<Buffer>>>>,
    /// Per step, for library steps marked `epilogue` whose next kernel `Plan::epilogue_of` accepts and
    /// that compiled: the kernel output that takes over the library's buffer (the kernel runs in place).
    fused: Vec<Option<usize>>,
    /// Per step, the row chain starting there (`row_chain`); `None` elsewhere and under `CRANAX_NO_ROW_CHAINS=1`.
    chains: Vec<Option<row_chain::RowChain>>,
    /// Per library step, its outputs' avals (empty for other steps): built once, not cloned per run (a
    /// shaped aval's clone is a malloc, and loop-heavy programs run small library steps every call).
    lib_avals: Vec<Vec<crate::ir::Aval>>,
    /// `(input, output)` → `(step, slot)`: the kernel step that may write program output `output` into
    /// input `input`'s buffer (`Plan::write_into_inputs`, less the steps that run another way: in a row
    /// chain, as an epilogue, or from the constant cache). Used by `run_aliased`.
    aliases: std::collections::HashMap<(usize, usize), (usize, usize)>,
}

/// For each step, the slots whose last read it is (program outputs are never released).
fn last_uses(plan: &Plan) -> Vec<Vec<usize>> {
    let mut last: Vec<Option<usize>> = vec![None; plan.slots.len()];
    for (si, step) in plan.steps.iter().enumerate() {
        for s in crate::plan::step_io(step).0 {
            if let Some(l) = last.get_mut(s) {
                *l = Some(si);
            }
        }
    }
    let mut frees = vec![Vec::new(); plan.steps.len()];
    for (s, l) in last.iter().enumerate() {
        if let Some(si) = l {
            if !plan.outputs.contains(&s) {
                frees[*si].push(s);
            }
        }
    }
    frees
}

/// `CRANAX_NO_EPILOGUE=1`: marked epilogue kernels run as their own steps (for comparing the two paths;
/// read when an executable is built).
fn epilogues_disabled() -> bool {
    std::env::var_os("CRANAX_NO_EPILOGUE").is_some_and(|v| v == "1")
}

/// Validates `plan` and compiles its kernels. Never panics: Cranelift failures (and any panic inside it)
/// become `Error::Codegen`; plans the backend cannot lower are `Error::Unsupported`.
pub fn compile(plan: &Plan) -> Result<Arc<CpuExecutable>> {
    compile_with(plan, !row_chain::disabled())
}

/// `compile`, with row chains (`row_chain`) on or off.
fn compile_with(plan: &Plan, chains: bool) -> Result<Arc<CpuExecutable>> {
    validate::validate_plan(plan)?;
    let found = if chains { row_chain::find(plan) } else { Vec::new() };
    // Kernels writing a chain's scratch keep their outputs in cache: no non-temporal stores.
    let no_stream: Vec<bool> = (0..plan.steps.len()).map(|si| found.iter().any(|c| c.writes_scratch(si))).collect();
    let (module, kernels) = match catch_unwind(AssertUnwindSafe(|| jit::compile_plan(plan, &no_stream))) {
        Ok(r) => r?,
        Err(p) => return Err(Error::Codegen(format!("code generator panicked: {}", panic_message(&*p)))),
    };
    let controls = control::compile_controls(plan)?;
    let frees = last_uses(plan);
    let consts: Vec<Option<std::sync::OnceLock<Vec<Buffer>>>> = plan
        .steps
        .iter()
        .map(|s| matches!(s, Step::Kernel(k) if exec::cacheable(plan, k)).then(std::sync::OnceLock::new))
        .collect();
    let epilogues = !epilogues_disabled();
    let fused: Vec<Option<usize>> = (0..plan.steps.len())
        .map(|si| match &plan.steps[si] {
            Step::Library(l) if epilogues && l.epilogue && kernels.get(si + 1).is_some_and(|k| k.is_some()) => {
                plan.epilogue_of(si).map(|(_, target)| target)
            }
            _ => None,
        })
        .collect();
    let mut chains: Vec<Option<row_chain::RowChain>> = (0..plan.steps.len()).map(|_| None).collect();
    for c in found {
        let start = c.start;
        chains[start] = Some(c);
    }
    let lib_avals = plan
        .steps
        .iter()
        .map(|s| match s {
            Step::Library(l) => l.outputs.iter().map(|&o| plan.slots[o].clone()).collect(),
            _ => Vec::new(),
        })
        .collect();
    let plain = |si: usize| {
        kernels.get(si).is_some_and(|k| k.is_some())
            && !chains.iter().enumerate().any(|(c0, c)| c.as_ref().is_some_and(|c| c0 <= si && si < c.end))
            && !(si > 0 && fused.get(si - 1).is_some_and(|f: &Option<usize>| f.is_some()))
            && consts.get(si).is_some_and(|c: &Option<std::sync::OnceLock<Vec<Buffer>>>| c.is_none())
    };
    let aliases = plan.write_into_inputs().into_iter().filter(|&(_, (si, _))| plain(si)).collect();
    Ok(Arc::new(CpuExecutable {
        aliases,
        plan: plan.clone(),
        kernels,
        module: Mutex::new(Some(module)),
        controls,
        frees,
        consts,
        fused,
        chains,
        lib_avals,
    }))
}

impl CpuExecutable {
    /// Runs the plan on input buffers (one per program input), returns the output buffers.
    pub fn run(&self, inputs: &[Buffer]) -> Result<Vec<Buffer>> {
        let _flush = fpenv::FlushDenormals::new();
        exec::run(self, inputs)
    }

    /// `run` taking the input buffers over (`exec::run_owned`: a dead input can be updated in place).
    pub fn run_owned(&self, inputs: impl ExactSizeIterator<Item = Buffer>) -> Result<Vec<Buffer>> {
        let _flush = fpenv::FlushDenormals::new();
        exec::run_owned(self, inputs)
    }

    /// `run` writing program output `k` straight into input `j`'s buffer for each `(j, k)` of `alias` the plan
    /// allows (`aliases`; the others get fresh buffers, as `run`'s): JAX's donation, used for a `jax.Ref`'s
    /// write. The caller promises that nothing reads an aliased input's storage after this run but the run
    /// itself (the ref's buffer is private to it); the run checks that the storage is cranax's own, of the
    /// right size, shared with no other input, and (at the step) with no live slot but the input's.
    pub fn run_aliased(&self, inputs: &[Buffer], alias: &[(usize, usize)]) -> Result<Vec<Buffer>> {
        let _flush = fpenv::FlushDenormals::new();
        let mut into = Vec::new();
        for &(j, k) in alias {
            let (Some(&(step, slot)), Some(b)) = (self.aliases.get(&(j, k)), inputs.get(j)) else { continue };
            let bytes = Buffer::byte_len(&b.aval).unwrap_or(usize::MAX);
            let shared = inputs.iter().enumerate().any(|(i, o)| i != j && Arc::ptr_eq(&o.storage, &b.storage));
            if b.storage.len() == bytes && !b.storage.is_borrowed() && !shared && !into.iter().any(|e: &exec::WriteInto| e.input == j || (e.step, e.slot) == (step, slot)) {
                into.push(exec::WriteInto { step, slot, input: j, buf: b.clone() });
            }
        }
        exec::run_into(self, inputs.iter().cloned(), &mut into)
    }

    /// The compiled entry point of plan step `step` and its full-run `end`, if that step is a kernel. For
    /// callers that split `[0, end)` across threads.
    pub fn kernel_entry(&self, step: usize) -> Option<(KernelFn, u64)> {
        self.kernels.get(step)?.as_ref().map(|k| (k.entry, k.outer_len))
    }

    /// Human-readable text of the compiled kernels: the plan's steps, then each kernel's Cranelift IR.
    pub fn as_text(&self) -> String {
        let p = &self.plan;
        let mut s = String::new();
        let slot = |i: usize| format!("s{i}:{}", validate::aval_str(&p.slots[i]));
        let ins: Vec<String> = (0..p.num_inputs).map(slot).collect();
        let _ = writeln!(s, "plan {}({}) -> ({})", p.name, ins.join(", "), p.outputs.iter().map(|&o| format!("s{o}")).collect::<Vec<_>>().join(", "));
        for (si, step) in p.steps.iter().enumerate() {
            if let Some(c) = self.chains.get(si).and_then(Option::as_ref) {
                let _ = writeln!(s, "  {}", c.describe());
            }
            match step {
                Step::View { src, dst } => {
                    let _ = writeln!(s, "  step {si}: {} = view s{src}", slot(*dst));
                }
                Step::Kernel(k) => {
                    let _ = writeln!(s, "  step {si}: {}", kernel_text(k, p));
                }
                Step::Control(c) => {
                    let _ = writeln!(s, "  step {si}: {}", crate::plan::step_text(c));
                }
                Step::Library(l) => {
                    let outs: Vec<String> = l.outputs.iter().map(|&o| slot(o)).collect();
                    let ins: Vec<String> = l.inputs.iter().map(|i| format!("s{i}")).collect();
                    let op = crate::ir::print::prim_text(&crate::ir::Prim::Lib(l.op.clone()));
                    let _ = writeln!(s, "  step {si}: {} = {op} {}", outs.join(", "), ins.join(" "));
                    if self.fused.get(si).is_some_and(|f| f.is_some()) {
                        let _ = writeln!(s, "    epilogue: step {} runs in place on this step's output blocks", si + 1);
                    }
                }
            }
        }
        for (si, k) in self.kernels.iter().enumerate() {
            if let Some(k) = k {
                let _ = writeln!(s, "\n; step {si} cranelift ir\n{}", k.clif.trim_end());
            }
        }
        s
    }
}

fn kernel_text(k: &Kernel, p: &Plan) -> String {
    let mut s = format!("kernel {} domain={:?} reduce={:?}\n", k.name, k.domain, k.reduce_axes);
    for (j, inp) in k.inputs.iter().enumerate() {
        let _ = writeln!(s, "    in{j} = s{} {} strides={:?} offset={}", inp.slot, inp.dtype.short_name(), inp.strides, inp.offset);
    }
    for (i, ins) in k.body.iter().enumerate() {
        let op = match &ins.op {
            KOp::Load { input } => format!("load in{input}"),
            KOp::Const { value } => format!("const {value:?}"),
            KOp::Iota { axis } => format!("iota {axis}"),
            KOp::Unary { op, a } => format!("{op:?} %{a}"),
            KOp::Binary { op, a, b } => format!("{op:?} %{a}, %{b}"),
            KOp::Compare { op, a, b } => format!("{op:?} %{a}, %{b}"),
            KOp::Select { pred, cases } => {
                format!("select_n %{pred}, {}", cases.iter().map(|c| format!("%{c}")).collect::<Vec<_>>().join(", "))
            }
            KOp::Convert { a } => format!("convert %{a}"),
            KOp::Bitcast { a } => format!("bitcast %{a}"),
            KOp::IntegerPow { a, y } => format!("integer_pow %{a}, {y}"),
            KOp::Clamp { lo, x, hi } => format!("clamp %{lo}, %{x}, %{hi}"),
            KOp::Fma { a, b, c } => format!("fma %{a}, %{b}, %{c}"),
            KOp::Gather { input, index, stride, hi, fill } => format!(
                "gather in{input} at %{index} stride={stride} hi={hi}{}",
                fill.map(|f| format!(" fill %{f}")).unwrap_or_default()
            ),
        };
        let _ = writeln!(s, "    %{i}: {} = {op}", ins.dtype.short_name());
    }
    for o in &k.outputs {
        let kind = match o.kind {
            OutputKind::Store => "store".to_string(),
            OutputKind::Reduce(op) => format!("reduce_{op:?}").to_lowercase(),
            OutputKind::ArgReduce { is_max } => if is_max { "argmax" } else { "argmin" }.to_string(),
        };
        let _ = writeln!(s, "    s{}:{} <- {kind} %{}", o.slot, validate::aval_str(&p.slots[o.slot]), o.value);
    }
    s.trim_end().to_string()
}

impl Drop for CpuExecutable {
    fn drop(&mut self) {
        let m = match self.module.get_mut() {
            Ok(m) => m.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(m) = m {
            // SAFETY: `drop` has `&mut self`, so no `run` of this executable is in progress, and the
            // function pointers live only inside `self.kernels` (callers of `kernel_entry` must hold the
            // executable alive while calling them).
            unsafe { m.free_memory() };
        }
    }
}
