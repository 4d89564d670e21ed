//! All-scalar loops compiled into one Cranelift function with a real loop.
//!
//! A `while` whose cond and body plans hold only one-element values, or a `scan` with no xs and no ys
//! (what `fori_loop` with static bounds becomes) over such a body, is compiled into
//! `extern "C" fn(inputs, outputs, _, _)`: the consts and initial carries are loaded into SSA variables,
//! the loop header evaluates the predicate (or compares the trip counter), the body block evaluates the
//! body's kernels on the variables and jumps back, and the exit stores the carries. Values never touch
//! memory inside the loop, so a million iterations take about a millisecond. Every kernel of the sub-plans
//! is a single-point computation here: its instructions are emitted by `ops::emit`, exactly as the loop
//! kernels emit them, so results are bit-identical to the step-by-step path.
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
use crate::ir::{Aval, DType, Scalar};
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
    /// Runs the loop on the step's input buffers (in `ControlStep::inputs()` order); returns fresh output
    /// buffers of `outs`.
    pub fn run(&self, ins: &[Buffer], outs: &[Aval]) -> Result<Vec<Buffer>> {
        if ins.len() != self.in_avals.len() {
            return Err(Error::Execution(format!("fused loop: {} inputs, expected {}", ins.len(), self.in_avals.len())));
        }
        for (b, a) in ins.iter().zip(&self.in_avals) {
            if b.aval.dtype != a.dtype || b.aval.numel() != Some(1) || b.storage.len() < a.dtype.size() {
                return Err(Error::Execution("fused loop: input buffer of the wrong type".into()));
            }
        }
        let bufs = outs.iter().map(Buffer::alloc).collect::<Result<Vec<_>>>()?;
        let ip: Vec<*const u8> = ins.iter().map(|b| b.as_ptr() as *const u8).collect();
        let op: Vec<*mut u8> = bufs.iter().map(|b| b.as_ptr()).collect();
        super::counters::FUSED_LOOP_CALLS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the function reads one element of each input (checked above) and writes one element of
        // each output (fresh buffers of one-element avals, checked at compile time); the pointer arrays
        // outlive the call.
        unsafe { (self.entry)(ip.as_ptr(), op.as_ptr(), 0, 0) };
        Ok(bufs)
    }
}

fn one(a: &Aval) -> bool {
    a.numel() == Some(1)
}

/// Whether `p` is made only of single-point kernels, views and (recursively) such control steps over
/// one-element slots. Nested `cond`s become basic blocks, nested loops become inner loops.
fn scalar_plan(p: &Plan) -> bool {
    p.slots.iter().all(one)
        && p.outputs.iter().all(|&s| s < p.slots.len())
        && p.steps.iter().all(|s| match s {
            Step::View { src, dst } => *src < p.slots.len() && *dst < p.slots.len(),
            Step::Kernel(k) => {
                k.domain.iter().all(|&d| d == 1)
                    && k.inputs.iter().all(|i| i.slot < p.slots.len() && i.offset == 0)
                    && k.outputs.iter().all(|o| o.slot < p.slots.len() && o.value < k.body.len())
            }
            Step::Control(c) => {
                c.inputs().iter().chain(c.outputs()).all(|&s| s < p.slots.len()) && scalar_control(c)
            }
            _ => false,
        })
}

fn scalar_control(c: &ControlStep) -> bool {
    match c {
        ControlStep::Cond { branches, .. } => branches.iter().all(scalar_plan),
        ControlStep::While { cond, body, .. } => scalar_plan(cond) && scalar_plan(body),
        ControlStep::Scan { body, xs, outputs, init, .. } => {
            xs.is_empty() && outputs.len() == init.len() && scalar_plan(body)
        }
    }
}

/// Compiles the fused form of `c` when it qualifies (else `None`).
pub fn compile(c: &ControlStep, slots: &[Aval]) -> Result<Option<FusedLoop>> {
    if std::env::var_os("CRANAX_NO_FUSED_LOOPS").is_some_and(|v| v == "1") {
        return Ok(None);
    }
    // A lone cond is cheap to dispatch step by step; fuse loops (which may contain conds).
    if matches!(c, ControlStep::Cond { .. }) {
        return Ok(None);
    }
    let in_avals: Vec<Aval> = c.inputs().iter().filter_map(|&s| slots.get(s).cloned()).collect();
    let out_avals: Vec<Aval> = c.outputs().iter().filter_map(|&s| slots.get(s).cloned()).collect();
    if in_avals.len() != c.inputs().len()
        || out_avals.len() != c.outputs().len()
        || !in_avals.iter().chain(&out_avals).all(one)
        || !scalar_control(c)
    {
        return Ok(None);
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(c, &in_avals, &out_avals)));
    match r {
        Ok(Ok((entry, module, clif))) => {
            Ok(Some(FusedLoop { entry, in_avals, module: Mutex::new(Some(module)), clif }))
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
        let mut vals: Vec<Value> = Vec::with_capacity(in_avals.len());
        for (k, a) in in_avals.iter().enumerate() {
            let ptr = b.ins().load(types::I64, flags, inp, (8 * k) as i32);
            vals.push(b.ins().load(cl_type(a.dtype), flags, ptr, 0));
        }
        let in_types: Vec<DType> = in_avals.iter().map(|a| a.dtype).collect();
        let out_types: Vec<DType> = out_avals.iter().map(|a| a.dtype).collect();
        let outs = emit_control(&mut b, &imports, c, &vals, &in_types, &out_types)?;
        for (k, x) in outs.iter().enumerate() {
            let ptr = b.ins().load(types::I64, flags, outp, (8 * k) as i32);
            b.ins().store(flags, *x, ptr, 0);
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

/// Emits control step `c` on SSA values `ins` (in `ControlStep::inputs()` order, of dtypes `in_types`);
/// returns its outputs (of dtypes `out_types`). Loops are real loops (header, body, exit blocks); a cond is
/// a chain of tests branching to one block per branch, joined in a merge block.
fn emit_control(
    b: &mut FunctionBuilder,
    imports: &Imports,
    c: &ControlStep,
    ins: &[Value],
    in_types: &[DType],
    out_types: &[DType],
) -> Result<Vec<Value>> {
    let bad = |m: &str| Error::Codegen(format!("fused loop: {m}"));
    if ins.len() != in_types.len() {
        return Err(bad("input count"));
    }
    let outs: Vec<Variable> = out_types.iter().map(|d| b.declare_var(cl_type(*d))).collect();
    match c {
        ControlStep::Cond { branches, .. } => {
            let (idx, ops_) = ins.split_first().ok_or_else(|| bad("cond without index"))?;
            let merge = b.create_block();
            let blocks: Vec<_> = branches.iter().map(|_| b.create_block()).collect();
            let n = blocks.len();
            if n == 0 {
                return Err(bad("cond without branches"));
            }
            if in_types[0] == DType::Bool {
                if n != 2 {
                    return Err(bad("bool index needs two branches"));
                }
                b.ins().brif(*idx, blocks[1], &[], blocks[0], &[]);
            } else {
                // branch j runs when clamp(idx, 0, n-1) == j: test idx <= j in order.
                for (j, blk) in blocks.iter().enumerate().take(n - 1) {
                    let t = b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, *idx, j as i64);
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
                for (v, x) in outs.iter().zip(&r) {
                    b.def_var(*v, *x);
                }
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
            let (cconsts, rest) = ins.split_at(nc);
            let (bconsts, init) = rest.split_at(nb);
            for (v, x) in outs.iter().zip(init) {
                b.def_var(*v, *x);
            }
            let counter = b.declare_var(types::I64);
            let zero = b.ins().iconst(types::I64, 0);
            b.def_var(counter, zero);
            let header = b.create_block();
            let body_blk = b.create_block();
            let exit = b.create_block();
            b.ins().jump(header, &[]);
            b.switch_to_block(header);
            let carry: Vec<Value> = outs.iter().map(|v| b.use_var(*v)).collect();
            let go = match cond {
                Some(cp) => {
                    let cin: Vec<Value> = cconsts.iter().chain(&carry).copied().collect();
                    let p = eval_plan(b, imports, cp, &cin)?;
                    let pv = *p.first().ok_or_else(|| bad("cond plan without output"))?;
                    b.ins().icmp_imm_s(IntCC::NotEqual, pv, 0)
                }
                None => {
                    let i = b.use_var(counter);
                    b.ins().icmp_imm_s(IntCC::SignedLessThan, i, length as i64)
                }
            };
            b.ins().brif(go, body_blk, &[], exit, &[]);
            b.switch_to_block(body_blk);
            let bin: Vec<Value> = bconsts.iter().chain(&carry).copied().collect();
            let new = eval_plan(b, imports, body, &bin)?;
            if new.len() < outs.len() {
                return Err(bad("loop body gives too few carries"));
            }
            for (v, x) in outs.iter().zip(&new) {
                b.def_var(*v, *x);
            }
            let i = b.use_var(counter);
            let i1 = b.ins().iadd_imm_s(i, 1);
            b.def_var(counter, i1);
            b.ins().jump(header, &[]);
            b.switch_to_block(exit);
        }
    }
    Ok(outs.iter().map(|v| b.use_var(*v)).collect())
}

/// Emits a single-point plan on SSA values: `inputs` for its input slots; returns its outputs' values.
fn eval_plan(b: &mut FunctionBuilder, imports: &Imports, p: &Plan, inputs: &[Value]) -> Result<Vec<Value>> {
    if inputs.len() != p.num_inputs {
        return Err(Error::Codegen("fused loop: plan input count".into()));
    }
    let mut slot: Vec<Option<Value>> = vec![None; p.slots.len()];
    for (k, v) in inputs.iter().enumerate() {
        slot[k] = Some(*v);
    }
    let missing = || Error::Codegen("fused loop: slot read before it is written".into());
    for st in &p.steps {
        match st {
            Step::View { src, dst } => slot[*dst] = Some(slot[*src].ok_or_else(missing)?),
            Step::Control(c) => {
                let ins = c.inputs().iter().map(|&s| slot[s].ok_or_else(missing)).collect::<Result<Vec<_>>>()?;
                let it: Vec<DType> = c.inputs().iter().map(|&s| p.slots[s].dtype).collect();
                let ot: Vec<DType> = c.outputs().iter().map(|&s| p.slots[s].dtype).collect();
                let outs = emit_control(b, imports, c, &ins, &it, &ot)?;
                for (&s, v) in c.outputs().iter().zip(outs) {
                    slot[s] = Some(v);
                }
            }
            Step::Kernel(k) => {
                let mut vals: Vec<Option<Value>> = vec![None; k.body.len()];
                for i in 0..k.body.len() {
                    let ins = &k.body[i];
                    let v = match &ins.op {
                        KOp::Load { input } => {
                            let inp = k.inputs.get(*input).ok_or_else(missing)?;
                            slot.get(inp.slot).copied().flatten().ok_or_else(missing)?
                        }
                        KOp::Iota { .. } => ops::constant(b, ins.dtype, Scalar::Int(0)),
                        _ => ops::emit(b, imports, &k.body, i, &vals)?,
                    };
                    vals[i] = Some(v);
                }
                for o in &k.outputs {
                    let x = vals[o.value].ok_or_else(missing)?;
                    let dt = p.slots[o.slot].dtype;
                    let v = match o.kind {
                        OutputKind::Store => x,
                        OutputKind::Reduce(op) => {
                            let id = ops::reduce_identity(b, dt, op)?;
                            ops::reduce_combine(b, dt, op, id, x)?
                        }
                        OutputKind::ArgReduce { .. } => iconst(b, cl_type(dt), 0),
                    };
                    slot[o.slot] = Some(v);
                }
            }
            _ => return Err(Error::Unsupported("fused loop over a library step".into())),
        }
    }
    p.outputs.iter().map(|&o| slot.get(o).copied().flatten().ok_or_else(missing)).collect()
}
