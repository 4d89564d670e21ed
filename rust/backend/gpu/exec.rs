//! A plan compiled for one GPU: a pipeline per kernel step, run by encoding every step into one command
//! buffer and submitting it (the call returns before the GPU finishes; values wait on the submission).
//!
//! Control steps (cond/while/scan) run their sub-plans as GPU executables (`super::control`). Steps the
//! GPU backend does not lower run on the host in the middle of the plan: a library step (sort, gather, ...)
//! reads its inputs back, runs the CPU library routine and uploads the results. A plan whose inside the
//! GPU cannot hold (float64/int64 intermediates) runs entirely through the CPU executable, inputs read back
//! and outputs uploaded. These are correct but pay transfers; `host_steps` counts them.
use std::sync::Arc;

use crate::backend::cpu::CpuExecutable;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::plan::{Plan, Step};

use super::buffer::{check_dtype, device_bytes, GpuBuffer, GpuEvent, GpuValue};
use super::device::GpuContext;
use super::conv::conv_shader as wgsl_conv;
use super::dot::dot_shader as wgsl_dot;
use super::wgsl::{kernel_shader, KernelShader};

struct CompiledKernel {
    shader: KernelShader,
    pipeline: Arc<wgpu::ComputePipeline>,
    /// The second pass of a split reduction.
    second: Option<Arc<wgpu::ComputePipeline>>,
}

pub(super) fn dispatch(
    ctx: &GpuContext,
    enc: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    bound: &[Arc<GpuBuffer>],
    groups: [u32; 3],
) {
    let entries: Vec<wgpu::BindGroupEntry> = bound
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.raw().as_entire_binding() })
        .collect();
    let bg = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut pass = enc.begin_compute_pass(&Default::default());
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, &bg, &[]);
    pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
}

pub struct GpuExecutable {
    pub ctx: Arc<GpuContext>,
    pub plan: Plan,
    /// One entry per plan step; `Some` for kernel steps.
    kernels: Vec<Option<CompiledKernel>>,
    /// One entry per plan step; `Some` for control steps (their sub-plans compiled for this device).
    controls: Vec<Option<super::control::CompiledControl>>,
    /// The CPU executable of a top-level plan, for running the whole plan on the host.
    cpu: Option<Arc<CpuExecutable>>,
    /// True when the whole plan runs on the host (see `compile`).
    whole_on_host: bool,
    /// Steps run on the host (library/control).
    pub host_steps: usize,
}

/// Whether every value of `plan` (its slots, kernel bodies, and control sub-plans) has a dtype `ctx` holds.
fn fits(ctx: &GpuContext, plan: &Plan) -> bool {
    let holds = |d: crate::ir::DType| check_dtype(ctx, d, "").is_ok();
    plan.slots.iter().all(|a| holds(a.dtype))
        && plan.steps.iter().all(|s| match s {
            Step::Kernel(k) => k.body.iter().all(|i| holds(i.dtype)) && k.inputs.iter().all(|i| holds(i.dtype)),
            Step::Control(c) => c.plans().into_iter().all(|p| fits(ctx, p)),
            _ => true,
        })
}

/// Compiles every kernel of `plan` for `ctx` (pipelines come from the context's cache). A program whose
/// inside the GPU cannot run (float64/int64 intermediates, e.g. the random samplers' exact compositions, or
/// control flow whose sub-plans fail to compile) runs whole through the CPU executable `cpu`.
pub fn compile(ctx: &Arc<GpuContext>, plan: &Plan, cpu: Arc<CpuExecutable>) -> Result<GpuExecutable> {
    // Arrays that live on the device (inputs, outputs) must have a dtype it holds.
    for i in (0..plan.num_inputs).chain(plan.outputs.iter().copied()) {
        let a = plan.slots.get(i).ok_or_else(|| Error::Codegen(format!("plan refers to missing slot {i}")))?;
        check_dtype(ctx, a.dtype, &format!("value {i} of {}", plan.name))?;
    }
    let host = |cpu: Arc<CpuExecutable>| GpuExecutable {
        ctx: ctx.clone(),
        plan: plan.clone(),
        kernels: vec![],
        controls: vec![],
        cpu: Some(cpu),
        whole_on_host: true,
        host_steps: plan.steps.len(),
    };
    if !fits(ctx, plan) {
        return Ok(host(cpu));
    }
    let has_control = plan.steps.iter().any(|s| matches!(s, Step::Control(_)));
    match compile_steps(ctx, plan) {
        Ok(mut g) => {
            g.cpu = Some(cpu);
            Ok(g)
        }
        // An operation the shaders do not lower (e.g. float64 transcendental functions, which have no
        // 64-bit GPU instructions) or control flow they cannot hold: the whole program runs on the host.
        Err(Error::Unsupported(_)) => Ok(host(cpu)),
        Err(_) if has_control => Ok(host(cpu)),
        Err(e) => Err(e),
    }
}

/// Compiles a control step's sub-plan: everything on the GPU (no host fallback for the whole plan).
pub fn compile_sub(ctx: &Arc<GpuContext>, plan: &Plan) -> Result<GpuExecutable> {
    if !fits(ctx, plan) {
        return Err(Error::Unsupported(format!("GPU backend: sub-program {} has dtypes the device does not hold", plan.name)));
    }
    compile_steps(ctx, plan)
}

fn compile_steps(ctx: &Arc<GpuContext>, plan: &Plan) -> Result<GpuExecutable> {
    let mut controls = Vec::with_capacity(plan.steps.len());
    let mut kernels = Vec::with_capacity(plan.steps.len());
    let mut host_steps = 0;
    let max_groups = ctx.limits.max_compute_workgroups_per_dimension.max(1);
    let max_bindings = ctx.limits.max_storage_buffers_per_shader_stage as usize;
    for step in &plan.steps {
        match step {
            Step::Kernel(k) => {
                let shader = kernel_shader(k, plan, max_groups)?;
                if shader.bindings.len() > max_bindings {
                    return Err(Error::Unsupported(format!(
                        "GPU backend: kernel {} binds {} buffers; {} allows {} (max_storage_buffers_per_shader_stage)",
                        k.name,
                        shader.bindings.len(),
                        ctx.repr(),
                        max_bindings
                    )));
                }
                for b in &shader.bindings {
                    let bytes = device_bytes(&plan.slots[b.slot])?;
                    if bytes > ctx.max_binding() {
                        let a = &plan.slots[b.slot];
                        return Err(Error::Memory {
                            bytes: bytes as u128,
                            what: format!(
                                "kernel {} binds an array of shape {:?} {} larger than {}'s max_storage_buffer_binding_size limit of {} bytes",
                                k.name,
                                a.shape,
                                a.dtype.short_name(),
                                ctx.repr(),
                                ctx.max_binding()
                            ),
                        });
                    }
                }
                let pipeline = ctx.pipeline(&shader.source)?;
                let second = match &shader.second {
                    Some(p) => Some(ctx.pipeline(&p.source)?),
                    None => None,
                };
                kernels.push(Some(CompiledKernel { shader, pipeline, second }));
            }
            Step::Library(l) => match gpu_library(ctx, plan, l, max_groups)? {
                Some(shader) => {
                    let pipeline = ctx.pipeline(&shader.source)?;
                    kernels.push(Some(CompiledKernel { shader, pipeline, second: None }));
                }
                None => {
                    host_steps += 1;
                    kernels.push(None);
                }
            },
            Step::Control(_) | Step::View { .. } => kernels.push(None),
        }
        controls.push(match step {
            Step::Control(c) => Some(super::control::compile(ctx, c)?),
            _ => None,
        });
    }
    Ok(GpuExecutable { ctx: ctx.clone(), plan: plan.clone(), kernels, controls, cpu: None, whole_on_host: false, host_steps })
}

/// A shader for library step `l` when the GPU backend has one (`dot_general` on f32/i32/u32 and 64-bit
/// types where the adapter has them, `conv_general_dilated` on f32/f64); `None` runs it on the host.
fn gpu_library(ctx: &GpuContext, plan: &Plan, l: &crate::plan::LibStep, max_groups: u32) -> Result<Option<KernelShader>> {
    use crate::ir::LibOp;
    if !matches!(l.op, LibOp::DotGeneral { .. } | LibOp::Conv(_)) || l.inputs.len() != 2 || l.outputs.len() != 1 {
        return Ok(None);
    }
    let (a, b, o) = (&plan.slots[l.inputs[0]], &plan.slots[l.inputs[1]], &plan.slots[l.outputs[0]]);
    for x in [a, b, o] {
        if device_bytes(x)? > ctx.max_binding() {
            return Ok(None);
        }
    }
    let slots = [l.inputs[0], l.inputs[1], l.outputs[0]];
    match &l.op {
        LibOp::DotGeneral { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, .. } => {
            wgsl_dot(a, b, o, lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, slots, max_groups)
        }
        LibOp::Conv(c) => wgsl_conv(c, a, b, o, slots, max_groups),
        _ => Ok(None),
    }
}

fn missing(slot: usize) -> Error {
    Error::Execution(format!("slot {slot} read before it is written"))
}

fn uncompiled(step: usize) -> Error {
    Error::Execution(format!("step {step} not compiled"))
}

impl GpuExecutable {
    /// WGSL of every kernel step with its step index, control steps' sub-plans included (after their
    /// step's index); empty when the plan runs on the host.
    pub fn shaders(&self) -> Vec<(usize, &str)> {
        let mut out = vec![];
        for (i, k) in self.kernels.iter().enumerate() {
            if let Some(k) = k {
                out.push((i, k.shader.source.as_str()));
            }
            if let Some(Some(c)) = self.controls.get(i) {
                out.extend(c.fused_source().map(|s| (i, s)));
                out.extend(c.plans().iter().flat_map(|p| p.shaders()).map(|(_, s)| (i, s)));
            }
        }
        out
    }

    /// Encodes step `si` (a kernel, or a library step with a shader) into `enc`, reading and writing `slots`;
    /// the buffers it binds go to `keep` (alive until the caller submits).
    fn encode_step(
        &self,
        si: usize,
        enc: &mut wgpu::CommandEncoder,
        slots: &mut [Option<Arc<GpuBuffer>>],
        keep: &mut Vec<Arc<GpuBuffer>>,
    ) -> Result<()> {
        let (ctx, plan) = (&self.ctx, &self.plan);
        match &plan.steps[si] {
            Step::Kernel(k) => {
                let ck = self.kernels[si].as_ref().ok_or_else(|| uncompiled(si))?;
                let mut outs = vec![];
                for o in &k.outputs {
                    let a = &plan.slots[o.slot];
                    let b = Arc::new(GpuBuffer::new(ctx, device_bytes(a)?, &|| {
                        format!("array of shape {:?} {}", a.shape, a.dtype.short_name())
                    })?);
                    outs.push((o.slot, b));
                }
                // Dispatch unless there is nothing to write (an empty reduction still writes identities).
                let n: usize = k.domain.iter().enumerate().filter(|(a, _)| !k.reduce_axes.contains(a)).map(|(_, &d)| d).product();
                if n > 0 {
                    // Split reductions write partials into scratch buffers, then combine them.
                    let scratch: Vec<Arc<GpuBuffer>> = match &ck.shader.second {
                        Some(p) => {
                            let mut v = vec![];
                            for (_, b) in &outs {
                                let bytes = b.size().max(4) * p.chunks as u64;
                                v.push(Arc::new(GpuBuffer::new(ctx, bytes, &|| "reduction partials".to_string())?));
                            }
                            v
                        }
                        None => vec![],
                    };
                    let mut bound: Vec<Arc<GpuBuffer>> = vec![];
                    let mut wi = 0;
                    for b in &ck.shader.bindings {
                        let buf = if b.write {
                            wi += 1;
                            if scratch.is_empty() {
                                outs.iter().find(|(s, _)| *s == b.slot).map(|(_, b)| b.clone())
                            } else {
                                scratch.get(wi - 1).cloned()
                            }
                        } else {
                            slots[b.slot].clone()
                        };
                        bound.push(buf.ok_or_else(|| missing(b.slot))?);
                    }
                    dispatch(ctx, enc, &ck.pipeline, &bound, ck.shader.groups);
                    keep.extend(bound);
                    if let (Some(p), Some(pl)) = (&ck.shader.second, &ck.second) {
                        let mut b2: Vec<Arc<GpuBuffer>> = scratch.clone();
                        b2.extend(outs.iter().map(|(_, b)| b.clone()));
                        dispatch(ctx, enc, pl, &b2, p.groups);
                        keep.extend(b2);
                    }
                }
                for (s, b) in outs {
                    slots[s] = Some(b);
                }
            }
            Step::Library(l) if self.kernels[si].is_some() => {
                let ck = self.kernels[si].as_ref().ok_or_else(|| uncompiled(si))?;
                let s = l.outputs[0];
                let a = &plan.slots[s];
                let out = Arc::new(GpuBuffer::new(ctx, device_bytes(a)?, &|| {
                    format!("array of shape {:?} {}", a.shape, a.dtype.short_name())
                })?);
                let mut bound = vec![];
                for &i in &l.inputs {
                    bound.push(slots[i].clone().ok_or_else(|| missing(i))?);
                }
                bound.push(out.clone());
                dispatch(ctx, enc, &ck.pipeline, &bound, ck.shader.groups);
                keep.extend(bound);
                slots[s] = Some(out);
            }
            _ => return Err(Error::Execution(format!("step {si} has no shader"))),
        }
        Ok(())
    }

    /// True when the plan runs wholly as shaders (no host steps, no control flow): `encode` can put it
    /// into a caller's command buffer.
    pub fn encodable(&self) -> bool {
        !self.whole_on_host
            && self.plan.steps.iter().enumerate().all(|(si, s)| match s {
                Step::View { .. } => true,
                Step::Kernel(_) | Step::Library(_) => self.kernels.get(si).is_some_and(|k| k.is_some()),
                Step::Control(_) => false,
            })
    }

    /// Encodes the whole plan into `enc` on input buffers `inputs` (avals as the plan's inputs; written by
    /// work encoded or submitted before), returning its output buffers. Only for `encodable()` plans.
    pub fn encode(
        &self,
        enc: &mut wgpu::CommandEncoder,
        inputs: &[Arc<GpuBuffer>],
        keep: &mut Vec<Arc<GpuBuffer>>,
    ) -> Result<Vec<Arc<GpuBuffer>>> {
        let plan = &self.plan;
        if inputs.len() != plan.num_inputs || !self.encodable() {
            return Err(Error::Execution(format!("{} cannot be encoded into a caller's command buffer", plan.name)));
        }
        let mut slots: Vec<Option<Arc<GpuBuffer>>> = vec![None; plan.slots.len()];
        for (i, b) in inputs.iter().enumerate() {
            slots[i] = Some(b.clone());
        }
        for (si, step) in plan.steps.iter().enumerate() {
            match step {
                Step::View { src, dst } => slots[*dst] = Some(slots[*src].clone().ok_or_else(|| missing(*src))?),
                _ => self.encode_step(si, enc, &mut slots, keep)?,
            }
        }
        plan.outputs.iter().map(|&s| slots[s].clone().ok_or_else(|| missing(s))).collect()
    }

    /// Runs on device values; returns the outputs at once (pending until the submission finishes).
    pub fn run(&self, inputs: &[GpuValue]) -> Result<Vec<GpuValue>> {
        let plan = &self.plan;
        if inputs.len() != plan.num_inputs {
            return Err(Error::Arguments(format!("{} expects {} inputs, got {}", plan.name, plan.num_inputs, inputs.len())));
        }
        for (i, v) in inputs.iter().enumerate() {
            if v.aval != plan.slots[i] {
                return Err(Error::Arguments(format!("input {i} of {}: expected {:?}, got {:?}", plan.name, plan.slots[i], v.aval)));
            }
            if let Err(e) = &v.data {
                return Err(e.clone());
            }
        }
        if self.whole_on_host {
            let cpu = self.cpu.as_ref().ok_or_else(|| Error::Execution(format!("{}: no host executable", plan.name)))?;
            let host: Vec<Buffer> = inputs.iter().map(|v| v.to_host()).collect::<Result<_>>()?;
            let outs = cpu.run(&host)?;
            return outs.iter().map(|b| GpuValue::upload(&self.ctx, b)).collect();
        }
        let ctx = &self.ctx;
        let mut slots: Vec<Option<Arc<GpuBuffer>>> = vec![None; plan.slots.len()];
        for (i, v) in inputs.iter().enumerate() {
            slots[i] = Some(v.data.as_ref().map_err(|e| e.clone())?.clone());
        }
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        let mut keep: Vec<Arc<GpuBuffer>> = vec![];
        for (si, step) in plan.steps.iter().enumerate() {
            match step {
                Step::View { src, dst } => {
                    slots[*dst] = Some(slots[*src].clone().ok_or_else(|| missing(*src))?);
                }
                Step::Kernel(_) => self.encode_step(si, &mut enc, &mut slots, &mut keep)?,
                Step::Library(_) if self.kernels[si].is_some() => self.encode_step(si, &mut enc, &mut slots, &mut keep)?,
                Step::Library(l) => {
                    // Flush what is encoded, read the inputs back, run on the host, upload the results.
                    let done = std::mem::replace(&mut enc, ctx.device.create_command_encoder(&Default::default()));
                    let idx = ctx.queue.submit([done.finish()]);
                    let ev = GpuEvent::after_submit(ctx, idx);
                    let mut host = vec![];
                    for &s in &l.inputs {
                        let v = GpuValue {
                            ctx: ctx.clone(),
                            aval: plan.slots[s].clone(),
                            data: Ok(slots[s].clone().ok_or_else(|| missing(s))?),
                            event: Some(ev.clone()),
                        };
                        host.push(v.to_host()?);
                    }
                    let refs: Vec<&Buffer> = host.iter().collect();
                    let avals: Vec<_> = l.outputs.iter().map(|&s| plan.slots[s].clone()).collect();
                    let outs = crate::backend::cpu::library::run(&l.op, &refs, &avals)?;
                    for (&s, b) in l.outputs.iter().zip(outs) {
                        let v = GpuValue::upload(ctx, &b)?;
                        slots[s] = Some(v.data?);
                    }
                }
                Step::Control(c) => {
                    // Submit what is encoded (the step's inputs), run the sub-plans, continue after them.
                    let cc = self.controls[si].as_ref().ok_or_else(|| uncompiled(si))?;
                    let done = std::mem::replace(&mut enc, ctx.device.create_command_encoder(&Default::default()));
                    let ev = GpuEvent::after_submit(ctx, ctx.queue.submit([done.finish()]));
                    let ins = c.inputs();
                    let avals: Vec<_> = ins.iter().map(|&s| plan.slots[s].clone()).collect();
                    let bufs = ins.iter().map(|&s| slots[s].clone().ok_or_else(|| missing(s))).collect::<Result<Vec<_>>>()?;
                    let outs = super::control::run(ctx, cc, c, &avals, &bufs, &ev)?;
                    for (&s, b) in c.outputs().iter().zip(outs) {
                        slots[s] = Some(b);
                    }
                }
            }
        }
        let idx = ctx.queue.submit([enc.finish()]);
        let ev = GpuEvent::after_submit(ctx, idx);
        drop(keep);
        plan.outputs
            .iter()
            .map(|&s| {
                Ok(GpuValue {
                    ctx: ctx.clone(),
                    aval: plan.slots[s].clone(),
                    data: Ok(slots[s].clone().ok_or_else(|| missing(s))?),
                    event: Some(ev.clone()),
                })
            })
            .collect()
    }
}
