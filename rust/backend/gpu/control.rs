//! Control flow on the GPU: `cond`, `while` and `scan` steps run their sub-plans as GPU executables, so
//! the loop state never leaves the device. A `cond` index and a `while` predicate (a scalar) are read back
//! to the host each time they are needed; a `scan` slices its `xs` rows and writes its `ys` rows with
//! buffer-to-buffer copies on the queue.
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::ir::{Aval, DType};
use crate::opt::control_flow::ControlStep;

use super::buffer::{device_bytes, GpuBuffer, GpuEvent, GpuValue};
use super::device::GpuContext;
use super::exec::{compile_sub, GpuExecutable};

/// The sub-plans of one control step, compiled for one GPU (same order as `ControlStep::plans`).
pub struct CompiledControl {
    plans: Vec<GpuExecutable>,
}

impl CompiledControl {
    pub fn plans(&self) -> &[GpuExecutable] {
        &self.plans
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
    Ok(CompiledControl { plans })
}

/// The value of scalar `v` as an index (bool → 0/1), read back to the host (waits for it).
fn read_index(v: &GpuValue) -> Result<i64> {
    let h = v.to_host()?;
    let b = h.as_bytes();
    let word = |n: usize| -> Result<[u8; 4]> {
        b.get(..n).and_then(|s| {
            let mut w = [0u8; 4];
            w[..n].copy_from_slice(s);
            Some(w)
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
            let cconsts = &vals[..nc];
            let bconsts = &vals[nc..nc + nb];
            let mut carry: Vec<GpuValue> = vals[nc + nb..nc + nb + init.len()].to_vec();
            let (cond, body) = (plan(0)?, plan(1)?);
            loop {
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
            for t in 0..*length {
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
