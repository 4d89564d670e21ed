//! The contract between the optimizer and the backends: a `Plan` of steps over value slots, where the
//! heavy steps are fused loop `Kernel`s. `opt` produces plans (`opt::fusion::lower_to_plan`); backends
//! (Cranelift CPU, WGSL GPU) compile and run them. Depends on `ir` only.
//!
//! - `control`: control-flow steps (`ControlStep`) running sub-plans.
//! - `text`: readable listings (`plan_text`, `step_text`).
mod control;
mod text;

pub use control::ControlStep;
pub use text::{plan_text, step_text};

use crate::ir::{Aval, BinaryOp, CompareOp, DType, ReduceOp, Scalar, UnaryOp};

/// An executable program after optimization and fusion.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub name: String,
    /// Slots `0..num_inputs` are the program's inputs, in order.
    pub num_inputs: usize,
    /// The aval of every slot (inputs, intermediates, outputs).
    pub slots: Vec<Aval>,
    /// Steps, run in order. Every slot is written by exactly one step (or is an input) before it is read.
    pub steps: Vec<Step>,
    /// The slot holding each program output (an input slot may appear: identity outputs share the buffer).
    pub outputs: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run a fused loop kernel, writing its output slots.
    Kernel(Kernel),
    /// `dst` is `src`'s bytes under `dst`'s shape (reshape, squeeze, expand_dims of a row-major buffer): no copy.
    View { src: usize, dst: usize },
    /// A call into a library routine (gemm, concatenate, gather, sort, ...; `backend::cpu::library`).
    Library(LibStep),
    /// Control flow (cond/while/scan) running sub-plans (`control`).
    Control(Box<ControlStep>),
}

/// A library call: reads the buffers of `inputs`, writes fresh buffers for `outputs` (row-major, of the
/// slots' avals). Inputs and outputs follow the primitive's operand and result order.
#[derive(Debug, Clone, PartialEq)]
pub struct LibStep {
    pub op: crate::ir::LibOp,
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
    /// Set by `opt::epilogue`: the next step is an elementwise kernel over this step's only output (a
    /// bias add, an activation) that `Plan::epilogue_of` accepts, so a backend may run it in place on the
    /// output tiles while they are in cache. A hint only: running both steps as written is always correct.
    pub epilogue: bool,
}

/// One fused loop nest. Iterates over every point of `domain` (row-major); axes in `reduce_axes` are reduced
/// by outputs that reduce. Loop order: all non-reduced axes outside, reduced axes inside, so reductions
/// accumulate in registers.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub domain: Vec<usize>,
    /// Sorted, unique axes of `domain` that reducing outputs reduce over. Empty for purely elementwise kernels.
    pub reduce_axes: Vec<usize>,
    pub inputs: Vec<KernelInput>,
    /// Scalar SSA program evaluated at each domain point; operands index earlier instructions.
    pub body: Vec<KInstr>,
    pub outputs: Vec<KernelOutput>,
}

/// A read of a slot's buffer: element offset `offset + sum(index[d] * strides[d])` for domain index `index`.
/// A stride of 0 broadcasts; permuted strides express transposes.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelInput {
    pub slot: usize,
    pub dtype: DType,
    /// One stride per domain axis, in elements.
    pub strides: Vec<isize>,
    pub offset: isize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KInstr {
    pub op: KOp,
    /// Result dtype of this instruction.
    pub dtype: DType,
}

/// Scalar operations. Semantics follow XLA/JAX exactly (see the backend docs): integer division by zero
/// gives -1 (all ones for unsigned) and remainder by zero gives the dividend, never a trap; `MIN / -1`
/// wraps; float→int conversion saturates with NaN → 0; shifts by ≥ bit width give 0 (logical/left) or the
/// sign fill (arithmetic); `max`/`min` on floats propagate NaN; `round` rounds half away from zero.
#[derive(Debug, Clone, PartialEq)]
pub enum KOp {
    /// The element of `inputs[input]` at the current domain point.
    Load { input: usize },
    Const { value: Scalar },
    /// The current index along domain axis `axis`, as the instruction's dtype.
    Iota { axis: usize },
    Unary { op: UnaryOp, a: usize },
    Binary { op: BinaryOp, a: usize, b: usize },
    /// Result dtype is bool; operands share a dtype.
    Compare { op: CompareOp, a: usize, b: usize },
    /// `cases[pred]`; pred is bool (two cases) or int32 (clamped into range).
    Select { pred: usize, cases: Vec<usize> },
    Convert { a: usize },
    Bitcast { a: usize },
    IntegerPow { a: usize, y: i32 },
    Clamp { lo: usize, x: usize, hi: usize },
    /// `a * b + c` rounded once (float32/float64 only).
    Fma { a: usize, b: usize, c: usize },
    /// A one-element gather (`take`, `x[i]`, searchsorted's probes): the element `Load { input }` would
    /// read, moved `clamp(index, 0, hi)` steps of `stride` elements along one axis. `index` is an integer
    /// instruction, read as signed or unsigned by its dtype; the clamp keeps every read inside the buffer
    /// (XLA's clamped gather). With `fill` (an instruction of this dtype), an index outside `0..=hi` gives
    /// `fill`'s value instead (`mode="fill"`).
    Gather { input: usize, index: usize, stride: isize, hi: u64, fill: Option<usize> },
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelOutput {
    pub slot: usize,
    /// The body instruction whose value is written.
    pub value: usize,
    pub kind: OutputKind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutputKind {
    /// Written at every domain point; the slot's shape is `domain` (row-major).
    Store,
    /// Reduced over `reduce_axes`; the slot holds the remaining axes in order (row-major).
    Reduce(ReduceOp),
    /// Index (output dtype) of the first max/min along the single reduce axis; NaN counts as the extreme.
    ArgReduce { is_max: bool },
}

impl Plan {
    /// Work estimate for the runtime's inline-vs-queued decision: domain points of kernels, library work
    /// (e.g. a product's multiply-adds), control steps as in `ControlStep::work`.
    pub fn work(&self) -> usize {
        self.steps
            .iter()
            .map(|s| match s {
                Step::Kernel(k) => k.domain.iter().fold(1usize, |a, &d| a.saturating_mul(d)),
                Step::View { .. } => 0,
                Step::Library(l) => {
                    let ins: Vec<&Aval> = l.inputs.iter().filter_map(|&i| self.slots.get(i)).collect();
                    let outs: Vec<&Aval> = l.outputs.iter().filter_map(|&i| self.slots.get(i)).collect();
                    l.op.work(&ins, &outs)
                }
                Step::Control(c) => c.work(),
            })
            .fold(0usize, |a, w| a.saturating_add(w))
    }
}

impl Kernel {
    /// Whether a `Gather` reads input `i`: at positions its strides alone do not give, so passes that
    /// reason about which elements a kernel reads (in-place epilogues, row chains) must leave it alone.
    pub fn gathers_from(&self, i: usize) -> bool {
        self.body.iter().any(|ins| matches!(ins.op, KOp::Gather { input, .. } if input == i))
    }

    /// The first place where this kernel computes on float16 values (anything but loading, storing,
    /// selecting, converting or bitcasting them): `opt::f16` rewrites such arithmetic to float32, so a
    /// backend seeing one has an unlegalized plan. `None` when there is none.
    pub fn f16_arithmetic(&self) -> Option<String> {
        let is16 = |j: usize| self.body.get(j).is_some_and(|i| i.dtype.is_half());
        for (i, ins) in self.body.iter().enumerate() {
            let bad = match &ins.op {
                KOp::Load { .. } | KOp::Const { .. } | KOp::Convert { .. } | KOp::Bitcast { .. } => false,
                KOp::Gather { .. } => false,
                KOp::Select { .. } => false,
                KOp::Iota { .. } => ins.dtype.is_half(),
                KOp::Unary { a, .. } | KOp::IntegerPow { a, .. } => ins.dtype.is_half() || is16(*a),
                KOp::Binary { a, b, .. } | KOp::Compare { a, b, .. } => ins.dtype.is_half() || is16(*a) || is16(*b),
                KOp::Clamp { lo, x, hi } => ins.dtype.is_half() || is16(*lo) || is16(*x) || is16(*hi),
                KOp::Fma { a, b, c } => ins.dtype.is_half() || is16(*a) || is16(*b) || is16(*c),
            };
            if bad {
                return Some(format!("instruction {i} ({:?})", ins.op));
            }
        }
        for (o, out) in self.outputs.iter().enumerate() {
            if !matches!(out.kind, OutputKind::Store) && is16(out.value) {
                return Some(format!("output {o} ({:?})", out.kind));
            }
        }
        None
    }
}

impl Kernel {
    /// Whether every read of slot `s` (of aval `aval`) is at the point the kernel writes (row-major strides
    /// over a domain of `aval`'s shape, no offset, no gather): then an output of `aval` may overwrite `s`'s
    /// buffer element range by element range, each point reading its own element before writing it.
    /// True when the kernel does not read `s`.
    pub fn reads_in_place(&self, s: usize, aval: &Aval) -> bool {
        let mut row_major = vec![0isize; self.domain.len()];
        let mut acc = 1isize;
        for d in (0..self.domain.len()).rev() {
            row_major[d] = acc;
            match isize::try_from(self.domain[d]).ok().and_then(|n| acc.checked_mul(n)) {
                Some(a) => acc = a,
                None => return false,
            }
        }
        self.inputs.iter().enumerate().filter(|(_, i)| i.slot == s).all(|(j, i)| {
            i.offset == 0
                && i.dtype == aval.dtype
                && i.strides.len() == self.domain.len()
                && (0..self.domain.len()).all(|d| self.domain[d] == 1 || i.strides[d] == row_major[d])
                && !self.gathers_from(j)
        })
    }
}

impl Plan {
    /// The pairs `(input, output)` where the kernel step computing program output `output` may write it
    /// straight into input `input`'s buffer, with that step and the output's slot: the input has the
    /// output's aval, is no program output, and no step after that one reads it; the kernel stores the
    /// output over a domain of its shape (no reduction) and reads the input only in place
    /// (`Kernel::reads_in_place`). What XLA's buffer assignment does for a donated input; a `jax.Ref`'s
    /// write uses it (`backend::cpu::exec::run_into`). Sharing of storage that only shows at run time (a
    /// view of the input still live) is the runner's to check.
    pub fn write_into_inputs(&self) -> Vec<((usize, usize), (usize, usize))> {
        let mut last: Vec<Option<usize>> = vec![None; self.num_inputs];
        for (si, step) in self.steps.iter().enumerate() {
            for s in step_io(step).0 {
                if let Some(l) = last.get_mut(s) {
                    *l = Some(si);
                }
            }
        }
        let mut producer: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        for (si, step) in self.steps.iter().enumerate() {
            if let Step::Kernel(k) = step {
                for o in &k.outputs {
                    producer.insert(o.slot, si);
                }
            }
        }
        let mut found = Vec::new();
        for (k_out, &o) in self.outputs.iter().enumerate() {
            let Some(&si) = producer.get(&o) else { continue };
            let Step::Kernel(k) = &self.steps[si] else { continue };
            let Some(aval) = self.slots.get(o) else { continue };
            let stored = k.outputs.iter().any(|x| x.slot == o && x.kind == OutputKind::Store);
            if !stored || !k.reduce_axes.is_empty() || k.domain != aval.shape {
                continue;
            }
            for j in 0..self.num_inputs {
                if self.slots.get(j) == Some(aval)
                    && !self.outputs.contains(&j)
                    && last[j].is_none_or(|l| l <= si)
                    && k.reads_in_place(j, aval)
                {
                    found.push(((j, k_out), (si, o)));
                }
            }
        }
        found
    }
}

/// The slots a step reads and the slots it writes.
pub fn step_io(s: &Step) -> (Vec<usize>, Vec<usize>) {
    match s {
        Step::Kernel(k) => (k.inputs.iter().map(|i| i.slot).collect(), k.outputs.iter().map(|o| o.slot).collect()),
        Step::View { src, dst } => (vec![*src], vec![*dst]),
        Step::Library(l) => (l.inputs.clone(), l.outputs.clone()),
        Step::Control(c) => (c.inputs(), c.outputs().to_vec()),
    }
}

impl Plan {
    /// The kernel that step `si` (a `conv_general_dilated` or `dot_general` library step) may run as its
    /// epilogue, in place, with the index of the kernel output that takes over the library's buffer: step
    /// `si + 1` is a kernel with no reduction, only stored outputs, one of them of the library output's
    /// aval (f32/f64), over that shape; it reads the library output `s` only at the point it writes
    /// (row-major strides, no offset), and no other step nor the plan's outputs read `s`. Under these
    /// conditions the kernel may overwrite `s` element range by element range: each point reads its own
    /// element of `s` before writing it, and nothing else sees `s`.
    pub fn epilogue_of(&self, si: usize) -> Option<(&Kernel, usize)> {
        let Some(Step::Library(l)) = self.steps.get(si) else { return None };
        if !matches!(l.op, crate::ir::LibOp::Conv(_) | crate::ir::LibOp::DotGeneral { .. }) || l.outputs.len() != 1 {
            return None;
        }
        let s = l.outputs[0];
        let Some(Step::Kernel(k)) = self.steps.get(si + 1) else { return None };
        let aval = self.slots.get(s)?;
        if !matches!(aval.dtype, DType::F32 | DType::F64) || !k.reduce_axes.is_empty() || k.domain != aval.shape {
            return None;
        }
        if k.outputs.iter().any(|o| o.kind != OutputKind::Store || o.slot == s) {
            return None;
        }
        let target = k.outputs.iter().position(|o| self.slots.get(o.slot) == Some(aval))?;
        if !k.inputs.iter().any(|i| i.slot == s) || !k.reads_in_place(s, aval) || self.outputs.contains(&s) {
            return None;
        }
        let read_elsewhere = self
            .steps
            .iter()
            .enumerate()
            .any(|(j, st)| j != si + 1 && step_io(st).0.contains(&s));
        (!read_elsewhere).then_some((k, target))
    }
}
