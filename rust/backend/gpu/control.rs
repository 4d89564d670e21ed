//! Control flow on the GPU: `cond`, `while` and `scan` steps run their sub-plans as GPU executables, so
//! the loop state never leaves the device. A `cond` index and a `while` predicate (a scalar) are read back
//! to the host each time they are needed; a `scan` slices its `xs` rows and writes its `ys` rows with
//! buffer-to-buffer copies on the queue. When the sub-plans are all shaders (`GpuExecutable::encodable`),
//! a scan's steps are encoded into shared command buffers with no host round trip, and a while loop's
//! iteration is a single submission plus a 4-byte read back. A while loop whose cond and body fit in one
//! kernel (`super::loop_kernel`) is one dispatch on a hardware GPU (nothing read back); on a software
//! adapter one dispatch per `SOFTWARE_MAX_ITERS` iterations, each reading back a done flag.
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::ir::{Aval, DType};
use crate::plan::ControlStep;

use super::buffer::{device_bytes, map_for_read, GpuBuffer, GpuEvent, GpuValue};
use super::device::GpuContext;
use super::exec::{compile_sub, dispatch, GpuExecutable};
use super::loop_kernel::{while_shader, SOFTWARE_MAX_ITERS};
use super::wgsl::KernelShader;

/// How the embedding (the Python module) says Ctrl-C was pressed; GPU loops run from the calling thread
/// and ask between dispatches, at most every `INTERRUPT_POLL`.
static INTERRUPT_CHECK: OnceLock<fn() -> bool> = OnceLock::new();
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// Registers the interrupt check (once per process).
pub fn set_interrupt_check(f: fn() -> bool) {
    let _ = INTERRUPT_CHECK.set(f);
}

/// Asks the interrupt check when `INTERRUPT_POLL` has passed since `*last`.
fn check_interrupt(last: &mut Instant) -> Result<()> {
    if last.elapsed() < INTERRUPT_POLL {
        return Ok(());
    }
    *last = Instant::now();
    match INTERRUPT_CHECK.get() {
        Some(f) if f() => Err(Error::Interrupted("a loop running on the GPU was stopped (Ctrl-C)".into())),
        _ => Ok(()),
    }
}

/// Iterations per dispatch of a one-kernel while loop: `CRANAX_GPU_LOOP_DISPATCH_CAP` when set (0: no cap),
/// else `SOFTWARE_MAX_ITERS` on software adapters (llvmpipe's loop cap) and no cap on hardware GPUs.
fn loop_dispatch_cap(ctx: &GpuContext) -> Option<u32> {
    match std::env::var("CRANAX_GPU_LOOP_DISPATCH_CAP").ok().and_then(|v| v.trim().parse::<u32>().ok()) {
        Some(0) => None,
        Some(k) => Some(k),
        None => ctx.is_software().then_some(SOFTWARE_MAX_ITERS),
    }
}

/// The sub-plans of one control step, compiled for one GPU (same order as `ControlStep::plans`).
pub struct CompiledControl {
    plans: Vec<GpuExecutable>,
    /// A while loop that fits in one kernel (`loop_kernel`): its shader and pipeline.
    fused: Option<(KernelShader, Arc<wgpu::ComputePipeline>)>,
    /// Whether the fused loop's shader stops after `SOFTWARE_MAX_ITERS` (its flag must be read back).
    capped: bool,
}

impl CompiledControl {
    pub fn plans(&self) -> &[GpuExecutable] {
        &self.plans
    }
    /// The one-kernel while loop's shader, when the loop fits in one.
    pub fn fused_source(&self) -> Option<&str> {
        self.fused.as_ref().map(|(sh, _)| sh.source.as_str())
    }
}

/// Compiles every sub-plan of `step` for `ctx`. Errors (a dtype or operation the GPU cannot run, a scan
/// row that is not a multiple of 4 bytes) make the caller run the whole program on the host instead.
pub fn compile(ctx: &Arc<GpuContext>, step: &ControlStep) -> Result<CompiledControl> {
    if let ControlStep::Scan { body, .. } = step {
        for a in &body.slots {
            if device_bytes(a)? % 4 != 0 {
                return Err(Error::Unsupported("GPU scan with rows that are not whole 4-byte words".into()));
            }
        }
    }
    let plans = step.plans().into_iter().map(|p| compile_sub(ctx, p)).collect::<Result<Vec<_>>>()?;
    let mut fused = None;
    let cap = loop_dispatch_cap(ctx);
    if let ControlStep::While { cond, body, cond_consts, body_consts, .. } = step {
        let max_groups = ctx.limits.max_compute_workgroups_per_dimension.max(1);
        if let Some(sh) = while_shader(cond, body, cond_consts.len(), body_consts.len(), max_groups, cap)? {
            if sh.bindings.len() <= ctx.limits.max_storage_buffers_per_shader_stage as usize {
                let p = ctx.pipeline(&sh.source)?;
                fused = Some((sh, p));
            }
        }
    }
    Ok(CompiledControl { plans, fused, capped: cap.is_some() })
}

/// The value of scalar `v` as an index (bool → 0/1), read back to the host (waits for it).
fn read_index(v: &GpuValue) -> Result<i64> {
    let h = v.to_host()?;
    let b = h.as_bytes();
    let word = |n: usize| -> Result<[u8; 4]> {
        b.get(..n)
            .map(|s| {
                let mut w = [0u8; 4];
                w[..n].copy_from_slice(s);
                w
            })
            .ok_or_else(|| Error::Execution("control predicate has no element".into()))
    };
    Ok(match v.aval.dtype {
        DType::Bool => (word(1)?[0] != 0) as i64,
        DType::I32 => i32::from_le_bytes(word(4)?) as i64,
        DType::U32 => u32::from_le_bytes(word(4)?) as i64,
        d => return Err(Error::Execution(format!("control predicate of dtype {}", d.short_name()))),
    })
}

fn values(ctx: &Arc<GpuContext>, avals: &[Aval], bufs: &[Arc<GpuBuffer>], ev: &Arc<GpuEvent>) -> Vec<GpuValue> {
    avals
        .iter()
        .zip(bufs)
        .map(|(a, b)| GpuValue { ctx: ctx.clone(), aval: a.clone(), data: Ok(b.clone()), event: Some(ev.clone()) })
        .collect()
}

fn buffers(vs: Vec<GpuValue>) -> Result<Vec<Arc<GpuBuffer>>> {
    vs.into_iter().map(|v| v.data).collect()
}

/// Runs `step` on `inputs` (the step's input buffers in `ControlStep::inputs` order, all written by work
/// already submitted); returns the buffers of its outputs (queued work writes them).
pub fn run(
    ctx: &Arc<GpuContext>,
    cc: &CompiledControl,
    step: &ControlStep,
    avals: &[Aval],
    inputs: &[Arc<GpuBuffer>],
    ev: &Arc<GpuEvent>,
) -> Result<Vec<Arc<GpuBuffer>>> {
    let vals = values(ctx, avals, inputs, ev);
    let plan = |i: usize| cc.plans.get(i).ok_or_else(|| Error::Execution("control step not compiled".into()));
    match step {
        ControlStep::Cond { branches, .. } => {
            let idx = read_index(&vals[0])?;
            let b = idx.clamp(0, branches.len() as i64 - 1) as usize;
            buffers(plan(b)?.run(&vals[1..])?)
        }
        ControlStep::While { cond_consts, body_consts, init, .. } => {
            let (nc, nb) = (cond_consts.len(), body_consts.len());
            if let Some((sh, pipeline)) = &cc.fused {
                return while_fused(ctx, sh, pipeline, plan(1)?, inputs, nc + nb + init.len(), cc.capped);
            }
            let (cond, body) = (plan(0)?, plan(1)?);
            if cond.encodable() && body.encodable() {
                let carry = inputs[nc + nb..nc + nb + init.len()].to_vec();
                return while_encoded(ctx, cond, body, &inputs[..nc], &inputs[nc..nc + nb], carry);
            }
            let cconsts = &vals[..nc];
            let bconsts = &vals[nc..nc + nb];
            let mut carry: Vec<GpuValue> = vals[nc + nb..nc + nb + init.len()].to_vec();
            let mut last = Instant::now();
            loop {
                check_interrupt(&mut last)?;
                let args: Vec<GpuValue> = cconsts.iter().chain(&carry).cloned().collect();
                let p = cond.run(&args)?;
                let go = read_index(p.first().ok_or_else(|| Error::Execution("while cond has no output".into()))?)?;
                if go == 0 {
                    break;
                }
                let args: Vec<GpuValue> = bconsts.iter().chain(&carry).cloned().collect();
                carry = body.run(&args)?;
            }
            buffers(carry)
        }
        ControlStep::Scan { body, consts, init, xs, length, reverse, .. } => {
            let body_exe = plan(0)?;
            let (nk, nc, nx) = (consts.len(), init.len(), xs.len());
            if body_exe.encodable() {
                return scan_encoded(ctx, body_exe, body, inputs, [nk, nc, nx], *length, *reverse);
            }
            let kvals = &vals[..nk];
            let mut carry: Vec<GpuValue> = vals[nk..nk + nc].to_vec();
            let xvals = &vals[nk + nc..nk + nc + nx];
            // Body inputs: consts, carry, one row of each xs; outputs: carry, one row of each ys.
            let x_rows: Vec<Aval> = (0..nx).map(|j| body.slots[nk + nc + j].clone()).collect();
            let y_rows: Vec<Aval> = body.outputs[nc..].iter().map(|&s| body.slots[s].clone()).collect();
            let mut ys = vec![];
            for a in &y_rows {
                let row = device_bytes(a)?;
                ys.push(Arc::new(GpuBuffer::new(ctx, row * *length as u64, &|| format!("scan output of rows {:?}", a.shape))?));
            }
            let mut last = Instant::now();
            for t in 0..*length {
                check_interrupt(&mut last)?;
                let i = if *reverse { length - 1 - t } else { t };
                let mut enc = ctx.device.create_command_encoder(&Default::default());
                let mut args: Vec<GpuValue> = kvals.iter().chain(&carry).cloned().collect();
                let mut rows = vec![];
                for (x, a) in xvals.iter().zip(&x_rows) {
                    let row = device_bytes(a)?;
                    let dst = Arc::new(GpuBuffer::new(ctx, row, &|| format!("scan input row {:?}", a.shape))?);
                    let src = x.data.as_ref().map_err(|e| e.clone())?;
                    if row > 0 {
                        enc.copy_buffer_to_buffer(src.raw(), i as u64 * row, dst.raw(), 0, row);
                    }
                    rows.push(dst);
                }
                let e = GpuEvent::after_submit(ctx, ctx.queue.submit([enc.finish()]));
                args.extend(values(ctx, &x_rows, &rows, &e));
                let mut out = body_exe.run(&args)?;
                let y: Vec<GpuValue> = out.split_off(nc);
                carry = out;
                let mut enc = ctx.device.create_command_encoder(&Default::default());
                for ((yv, dst), a) in y.iter().zip(&ys).zip(&y_rows) {
                    let row = device_bytes(a)?;
                    let src = yv.data.as_ref().map_err(|e| e.clone())?;
                    if row > 0 {
                        enc.copy_buffer_to_buffer(src.raw(), 0, dst.raw(), i as u64 * row, row);
                    }
                }
                ctx.queue.submit([enc.finish()]);
            }
            let mut outs = buffers(carry)?;
            outs.extend(ys);
            Ok(outs)
        }
    }
}

/// Scan steps per command buffer when the body is encoded inline (bounds the buffers held until a submit).
const SCAN_STEPS_PER_SUBMIT: usize = 64;

/// A scan whose body is all shaders: every step's row copies and dispatches go into command buffers of
/// many steps each, with no host round trip (the trip count is static).
fn scan_encoded(
    ctx: &Arc<GpuContext>,
    body_exe: &GpuExecutable,
    body: &crate::plan::Plan,
    inputs: &[Arc<GpuBuffer>],
    [nk, nc, nx]: [usize; 3],
    length: usize,
    reverse: bool,
) -> Result<Vec<Arc<GpuBuffer>>> {
    let consts = &inputs[..nk];
    let mut carry: Vec<Arc<GpuBuffer>> = inputs[nk..nk + nc].to_vec();
    let xs = &inputs[nk + nc..nk + nc + nx];
    let x_rows: Vec<u64> = (0..nx).map(|j| device_bytes(&body.slots[nk + nc + j])).collect::<Result<_>>()?;
    let y_avals: Vec<&Aval> = body.outputs[nc..].iter().map(|&s| &body.slots[s]).collect();
    let mut ys = vec![];
    for a in &y_avals {
        let row = device_bytes(a)?;
        ys.push(Arc::new(GpuBuffer::new(ctx, row * length as u64, &|| format!("scan output of rows {:?}", a.shape))?));
    }
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    let mut keep: Vec<Arc<GpuBuffer>> = vec![];
    let mut last = Instant::now();
    for t in 0..length {
        let i = if reverse { length - 1 - t } else { t } as u64;
        let mut args: Vec<Arc<GpuBuffer>> = consts.iter().chain(&carry).cloned().collect();
        for (x, &row) in xs.iter().zip(&x_rows) {
            let dst = Arc::new(GpuBuffer::new(ctx, row, &|| "scan input row".to_string())?);
            if row > 0 {
                enc.copy_buffer_to_buffer(x.raw(), i * row, dst.raw(), 0, row);
            }
            args.push(dst);
        }
        let mut out = body_exe.encode(&mut enc, &args, &mut keep)?;
        keep.extend(args);
        let y = out.split_off(nc);
        carry = out;
        for ((yb, dst), a) in y.iter().zip(&ys).zip(&y_avals) {
            let row = device_bytes(a)?;
            if row > 0 {
                enc.copy_buffer_to_buffer(yb.raw(), 0, dst.raw(), i * row, row);
            }
        }
        keep.extend(y);
        if (t + 1) % SCAN_STEPS_PER_SUBMIT == 0 {
            let done = std::mem::replace(&mut enc, ctx.device.create_command_encoder(&Default::default()));
            ctx.queue.submit([done.finish()]);
            keep.clear(); // wgpu keeps submitted buffers alive; the pool may hand them to later work
            check_interrupt(&mut last)?;
        }
    }
    ctx.queue.submit([enc.finish()]);
    drop(keep);
    let mut outs = carry;
    outs.extend(ys);
    Ok(outs)
}

/// A while loop whose cond and body are all shaders: each iteration is one submission (body, then cond,
/// then a 4-byte copy of the predicate) and one 4-byte read back.
fn while_encoded(
    ctx: &Arc<GpuContext>,
    cond: &GpuExecutable,
    body: &GpuExecutable,
    cconsts: &[Arc<GpuBuffer>],
    bconsts: &[Arc<GpuBuffer>],
    mut carry: Vec<Arc<GpuBuffer>>,
) -> Result<Vec<Arc<GpuBuffer>>> {
    let staging = word_staging(ctx);
    let mut first = true;
    let mut last = Instant::now();
    loop {
        check_interrupt(&mut last)?;
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        let mut keep = vec![];
        if !first {
            let args: Vec<Arc<GpuBuffer>> = bconsts.iter().chain(&carry).cloned().collect();
            carry = body.encode(&mut enc, &args, &mut keep)?;
        }
        first = false;
        let args: Vec<Arc<GpuBuffer>> = cconsts.iter().chain(&carry).cloned().collect();
        let p = cond.encode(&mut enc, &args, &mut keep)?;
        let pred = p.first().ok_or_else(|| Error::Execution("while cond has no output".into()))?;
        enc.copy_buffer_to_buffer(pred.raw(), 0, &staging, 0, 4);
        let idx = ctx.queue.submit([enc.finish()]);
        if read_word(ctx, &staging, &idx)? == 0 {
            return Ok(carry);
        }
    }
}

/// A 4-byte buffer the host maps to read a loop's predicate or done flag.
fn word_staging(ctx: &GpuContext) -> wgpu::Buffer {
    ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("cranax loop flag"),
        size: 4,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Waits for submission `idx` and reads the first 4 bytes of `staging` (a MAP_READ buffer it copied to).
fn read_word(ctx: &GpuContext, staging: &wgpu::Buffer, idx: &wgpu::SubmissionIndex) -> Result<u32> {
    map_for_read(ctx, staging, idx)?;
    let word = {
        let view = staging
            .slice(..)
            .get_mapped_range()
            .map_err(|e| Error::Execution(format!("{}: mapping the predicate failed: {e:?}", ctx.repr())))?;
        view.get(..4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    staging.unmap();
    word.ok_or_else(|| Error::Execution(format!("{}: predicate read back short", ctx.repr())))
}

/// A while loop run as one shader (`loop_kernel`). On hardware GPUs one dispatch, returned at once (nothing
/// read back); `capped` (software adapters) one dispatch per `SOFTWARE_MAX_ITERS` iterations, each followed
/// by a 4-byte read back of the loop's `done` flag.
fn while_fused(
    ctx: &Arc<GpuContext>,
    sh: &KernelShader,
    pipeline: &wgpu::ComputePipeline,
    body: &GpuExecutable,
    inputs: &[Arc<GpuBuffer>],
    n_in: usize,
    capped: bool,
) -> Result<Vec<Arc<GpuBuffer>>> {
    let n_carry = body.plan.outputs.len();
    let n_consts = n_in - n_carry;
    let staging = capped.then(|| word_staging(ctx));
    let mut carry: Vec<Arc<GpuBuffer>> = inputs[n_consts..].to_vec();
    let mut last = Instant::now();
    loop {
        check_interrupt(&mut last)?;
        let mut outs = vec![];
        for &s in &body.plan.outputs {
            let a = &body.plan.slots[s];
            outs.push(Arc::new(GpuBuffer::new(ctx, device_bytes(a)?, &|| format!("while carry {:?}", a.shape))?));
        }
        let flag = Arc::new(GpuBuffer::new(ctx, 4, &|| "while flag".to_string())?);
        let mut bound = vec![];
        for b in &sh.bindings {
            let buf = if b.slot < n_consts {
                inputs.get(b.slot)
            } else if b.slot < n_in {
                carry.get(b.slot - n_consts)
            } else if b.slot < n_in + n_carry {
                outs.get(b.slot - n_in)
            } else {
                Some(&flag)
            };
            bound.push(buf.cloned().ok_or_else(|| Error::Execution("while kernel binding out of range".into()))?);
        }
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        dispatch(ctx, &mut enc, pipeline, &bound, sh.groups);
        let Some(staging) = &staging else {
            ctx.queue.submit([enc.finish()]);
            return Ok(outs);
        };
        enc.copy_buffer_to_buffer(flag.raw(), 0, staging, 0, 4);
        let idx = ctx.queue.submit([enc.finish()]);
        carry = outs;
        if read_word(ctx, staging, &idx)? != 0 {
            return Ok(carry);
        }
    }
}
