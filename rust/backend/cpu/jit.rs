//! Compilation of every kernel of a plan into one `JITModule` per executable (made by `module`), with
//! the block and out-of-line math routines each kernel calls.
use std::collections::HashMap;

use cranelift_codegen::ir::{types, AbiParam, FuncRef, Function, Signature};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module};

use crate::error::{Error, Result};
use crate::ir::DType;
use crate::ir::ReduceOp;
use crate::plan::{KOp, Kernel, OutputKind, Plan, Step};

use super::codegen::{build_kernel, Routines};
use super::loop_plan::{outer_len, StripPlan};
use super::math_fn::{binary_math, MathFn};
use super::module::{kernel_signature, math_uses, new_module_with, KernelFn};

fn cg<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> Error + '_ {
    move |e| Error::Codegen(format!("{what}: {e}"))
}

/// The inline-math functions a kernel should call out of line (`mathlib`): all of them when the kernel has
/// more than `OUTLINE_MIN_OPS` such operations, else none.
fn outline_uses(k: &Kernel) -> Vec<MathFn> {
    let mut fs = Vec::new();
    let mut count = 0;
    for ins in &k.body {
        let f = match &ins.op {
            KOp::Unary { op, .. } => MathFn::from_unary(*op),
            KOp::Binary { op, .. } => binary_math(*op, ins.dtype),
            _ => None,
        };
        if let Some(f) = f {
            if super::vmath::supports(f, ins.dtype) {
                count += 1;
                if !fs.contains(&f) {
                    fs.push(f);
                }
            }
        }
    }
    if count > super::mathlib::OUTLINE_MIN_OPS {
        fs
    } else {
        Vec::new()
    }
}

pub struct CompiledKernel {
    pub entry: KernelFn,
    /// The `end` of a full run (points of the non-reduced axes).
    pub outer_len: u64,
    /// Estimated work per outer point (reduced points × instruction weight), for the thread split.
    pub point_cost: u64,
    /// The chunked-reduction variant, for large reductions with few outer points.
    pub partial: Option<PartialKernel>,
    /// Cranelift IR before optimization (plus the machine code when `CRANAX_CPU_DISASM=1`).
    pub clif: String,
}

/// A kernel whose `[begin, end)` ranges over its outermost reduced axis (`axis_len` points; `rest` points of
/// the other reduced axes per step); each output gets that chunk's partial result, combined with `ops`.
pub struct PartialKernel {
    pub entry: KernelFn,
    pub axis_len: u64,
    pub rest: u64,
    pub ops: Vec<(ReduceOp, DType)>,
}

/// Reductions with fewer outer points than this, and at least `PARTIAL_MIN_WORK` work, are split along
/// their reduced axis (a decision made from the shapes alone, so results do not depend on thread count).
pub const PARTIAL_MAX_OUTER: u64 = 16;
pub const PARTIAL_MIN_WORK: u64 = 1 << 17;

fn point_cost(k: &Kernel) -> u64 {
    let inner = k.reduce_axes.iter().fold(1u64, |a, &d| a.saturating_mul(k.domain.get(d).copied().unwrap_or(1) as u64));
    let weight: u64 = k
        .body
        .iter()
        .map(|i| match &i.op {
            KOp::Unary { op, .. } if MathFn::from_unary(*op).is_some() => 12,
            KOp::Binary { op, .. } if binary_math(*op, i.dtype).is_some() => 16,
            KOp::Const { .. } => 0,
            _ => 1,
        })
        .sum();
    inner.saturating_mul(weight.max(1))
}

/// Declares in `func` the block routines strip plan `plan` calls.
fn import_routines(module: &mut JITModule, func: &mut Function, plan: &StripPlan, call_conv: CallConv) -> Result<Routines> {
    let mut import = |name: &str, params: usize| -> Result<FuncRef> {
        let mut sig = Signature::new(call_conv);
        sig.params.extend((0..params).map(|_| AbiParam::new(types::I64)));
        let fid = module.declare_function(name, Linkage::Import, &sig).map_err(cg("declaring a block routine"))?;
        Ok(module.declare_func_in_func(fid, func))
    };
    let mut r = Routines { plan: plan.clone(), ..Routines::default() };
    for &(_, f) in &plan.ops {
        // (operands, destination, length)
        let name = if plan.f64 { super::blockmath::symbol64(f) } else { super::blockmath::symbol(f) };
        r.math.insert(f, import(&name, f.arity() + 2)?);
    }
    if !plan.hashes.is_empty() {
        r.threefry = Some(import(super::threefry::SYMBOL, 5)?);
    }
    if plan.stream {
        r.stream = Some(import(super::blockmath::STREAM_SYMBOL, 3)?);
        r.fence = Some(import(super::blockmath::FENCE_SYMBOL, 0)?);
    }
    Ok(r)
}

/// The `as_text` line saying how a kernel runs in strips (empty when it does not).
fn strip_note(plan: &StripPlan) -> String {
    if plan.is_empty() {
        return String::new();
    }
    let mut fs: Vec<String> = plan.ops.iter().map(|(i, f)| format!("%{i} {f:?}")).collect();
    fs.extend(plan.hashes.iter().map(|h| format!("%{} %{} threefry2x32", h.a_out, h.b_out)));
    format!(
        "; strips of {} points ({:?}{} routines): math [{}]{}\n",
        plan.len,
        super::blockmath::isa().map_or(String::new(), |i| format!("{i:?}")),
        if plan.f64 { " float64" } else { "" },
        fs.join(", "),
        if plan.stream { ", outputs streamed (non-temporal stores)" } else { "" }
    )
}

/// Compiles every kernel step (others get `None`) into one new module. Kernels of steps where `no_stream`
/// holds write their outputs with plain stores (a row chain reads them back from cache).
pub fn compile_plan(plan: &Plan, no_stream: &[bool]) -> Result<(JITModule, Vec<Option<CompiledKernel>>)> {
    let outlined: Vec<Vec<MathFn>> =
        plan.steps.iter().map(|s| if let Step::Kernel(k) = s { outline_uses(k) } else { Vec::new() }).collect();
    let mut extra = Vec::new();
    for f in outlined.iter().flatten() {
        for vector in [false, true] {
            let name = super::mathlib::symbol(*f, vector);
            if !extra.iter().any(|(n, _)| n == &name) {
                extra.push((name, super::mathlib::routine(*f, vector)?));
            }
        }
    }
    let mut module = new_module_with(extra)?;
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let call_conv = module.isa().default_call_conv();
    let mut defined = Vec::new();
    let disasm = std::env::var_os("CRANAX_CPU_DISASM").is_some_and(|v| v == "1");
    for (si, step) in plan.steps.iter().enumerate() {
        let Step::Kernel(k) = step else {
            defined.push(None);
            continue;
        };
        let out_dtypes: Vec<DType> = k.outputs.iter().map(|o| plan.slots[o.slot].dtype).collect();
        let olen = outer_len(k)?;
        let cost = point_cost(k);
        let want_partial = olen > 0
            && olen < PARTIAL_MAX_OUTER
            && olen.saturating_mul(cost) >= PARTIAL_MIN_WORK
            && super::loop_plan::partial_eligible(k, &out_dtypes)?;
        let mut ids = Vec::new();
        let mut clif = String::new();
        let mut plan = super::loop_plan::strip_plan(k, &out_dtypes)?;
        if no_stream.get(si).copied().unwrap_or(false) {
            plan.stream = false;
        }
        // one wide operation instead of Cranelift's loop (`wide`), where no strip runs (a streamed output
        // keeps its non-temporal stores)
        let wide = if plan.is_empty() { super::wide::plan(k, &out_dtypes) } else { None };
        // a float16/bfloat16 chain through F16C's conversions (`wide_half`), likewise
        let half = if plan.is_empty() && wide.is_none() { super::wide_half::plan(k, &out_dtypes) } else { None };
        for partial in [false, true] {
            if partial && !want_partial {
                continue;
            }
            let sig = kernel_signature(call_conv);
            let name = if partial { format!("cranax_kernel_{si}_partial") } else { format!("cranax_kernel_{si}") };
            let id = module.declare_function(&name, Linkage::Local, &sig).map_err(cg("declaring a kernel"))?;
            module.clear_context(&mut ctx);
            ctx.func.signature = sig;
            let mut imports = HashMap::new();
            for (f, dt) in math_uses(k) {
                let fid = module
                    .declare_function(&f.symbol_name(dt), Linkage::Import, &super::math_fn::signature(f, dt, call_conv))
                    .map_err(cg("declaring a math import"))?;
                imports.insert((f, dt), module.declare_func_in_func(fid, &mut ctx.func));
            }
            for &f in &outlined[si] {
                for vector in [false, true] {
                    let sig = super::mathlib::signature(f, vector, call_conv);
                    let fid = module
                        .declare_function(&super::mathlib::symbol(f, vector), Linkage::Import, &sig)
                        .map_err(cg("declaring a math routine"))?;
                    let key = if vector { super::mathlib::vec_key(f) } else { (f, DType::F32) };
                    imports.insert(key, module.declare_func_in_func(fid, &mut ctx.func));
                }
            }
            let routines = import_routines(&mut module, &mut ctx.func, &plan, call_conv)?;
            let wide_ref = match &wide {
                Some(_) => {
                    let mut sig = Signature::new(call_conv);
                    sig.params.extend((0..6).map(|_| AbiParam::new(types::I64)));
                    let fid = module
                        .declare_function(super::wide::SYMBOL, Linkage::Import, &sig)
                        .map_err(cg("declaring the wide routine"))?;
                    Some(module.declare_func_in_func(fid, &mut ctx.func))
                }
                None => None,
            };
            let half_ref = match &half {
                Some(_) => {
                    let mut sig = Signature::new(call_conv);
                    sig.params.extend((0..5).map(|_| AbiParam::new(types::I64)));
                    let fid = module
                        .declare_function(super::wide_half::SYMBOL, Linkage::Import, &sig)
                        .map_err(cg("declaring the half-chain routine"))?;
                    Some(module.declare_func_in_func(fid, &mut ctx.func))
                }
                None => None,
            };
            // Code loaded from the persistent cache needs the declarations above (same ids, same names), not
            // the function body: its CLIF is not built again.
            let loading = super::code_store::replaying();
            if !loading {
                match (&wide, wide_ref, &half, half_ref) {
                    (Some(w), Some(f), _, _) => super::wide::build(&mut ctx.func, &mut fctx, w, f, module.target_config())?,
                    (_, _, Some(h), Some(f)) => super::wide_half::build(&mut ctx.func, &mut fctx, h, f, module.target_config())?,
                    _ => build_kernel(&mut ctx.func, &mut fctx, k, &out_dtypes, &imports, &routines, module.target_config(), partial)?,
                }
            }
            if loading && !partial {
                clif = "; machine code loaded from the persistent compilation cache (its CLIF is not rebuilt)\n".into();
            } else if let Some(w) = wide.as_ref().filter(|_| !partial) {
                clif = format!("{}{}", w.note(), ctx.func.display());
                ctx.set_disasm(disasm);
            } else if let Some(h) = half.as_ref().filter(|_| !partial) {
                clif = format!("{}{}", h.note(), ctx.func.display());
                ctx.set_disasm(disasm);
            } else if !partial {
                let (mode, lanes, unroll) = super::loop_plan::plan_mode(k, &out_dtypes)?;
                clif = format!("; simd: {mode:?}, {lanes} lanes x {unroll} per iteration\n{}{}", strip_note(&plan), ctx.func.display());
                ctx.set_disasm(disasm);
            } else {
                clif.push_str("\n; chunked-reduction variant (same loops; [begin, end) splits the outermost reduced axis)\n");
                ctx.set_disasm(false);
            }
            super::code_store::define(&mut module, id, &mut ctx)
                .map_err(|e| Error::Codegen(format!("compiling kernel {} (step {si}): {e}", k.name)))?;
            if !partial {
                if let Some(vcode) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
                    clif.push_str("\n; machine code\n");
                    clif.push_str(vcode);
                }
            }
            ids.push(id);
        }
        let partial_info = if want_partial {
            let (axis_len, rest) = super::loop_plan::partial_axis(k, &out_dtypes)?;
            let ops = k
                .outputs
                .iter()
                .map(|o| match o.kind {
                    OutputKind::Reduce(op) => (op, k.body[o.value].dtype),
                    _ => (ReduceOp::Sum, DType::Bool),
                })
                .collect();
            Some((axis_len, rest, ops))
        } else {
            None
        };
        defined.push(Some((ids, olen, cost, partial_info, clif)));
    }
    module.clear_context(&mut ctx);
    module.finalize_definitions().map_err(cg("finalizing"))?;
    let entry_of = |module: &JITModule, id| {
        let p = module.get_finalized_function(id);
        // SAFETY: the function was defined with `kernel_signature`, which is this ABI.
        unsafe { std::mem::transmute::<*const u8, KernelFn>(p) }
    };
    let kernels = defined
        .into_iter()
        .map(|d| {
            d.map(|(ids, outer_len, point_cost, partial_info, clif)| {
                let entry = entry_of(&module, ids[0]);
                let partial = partial_info.map(|(axis_len, rest, ops)| PartialKernel {
                    entry: entry_of(&module, ids[1]),
                    axis_len,
                    rest,
                    ops,
                });
                CompiledKernel { entry, outer_len, point_cost, partial, clif }
            })
        })
        .collect();
    Ok((module, kernels))
}
