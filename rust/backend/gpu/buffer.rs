//! Device buffers and the values array handles hold on a GPU: a pooled storage buffer, the aval it is
//! read as, and the submission that writes it (ready once the queue has finished that submission).
//! bool is stored as u32 (0/1) on the device; transfers convert.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, DType};

use super::device::GpuContext;

/// A storage buffer, returned to its context's pool on drop.
pub struct GpuBuffer {
    pub ctx: Arc<GpuContext>,
    buf: wgpu::Buffer,
}

impl GpuBuffer {
    pub fn new(ctx: &Arc<GpuContext>, bytes: u64, what: &dyn Fn() -> String) -> Result<GpuBuffer> {
        let buf = ctx.alloc(bytes, what)?;
        Ok(GpuBuffer { ctx: ctx.clone(), buf })
    }
    pub fn raw(&self) -> &wgpu::Buffer {
        &self.buf
    }
    pub fn size(&self) -> u64 {
        self.raw().size()
    }
}

impl Drop for GpuBuffer {
    fn drop(&mut self) {
        // wgpu buffers are reference-counted handles: the pool keeps this one's storage alive
        self.ctx.release(self.buf.clone());
    }
}

/// The completion of one queue submission.
pub struct GpuEvent {
    done: Arc<AtomicBool>,
    index: Mutex<Option<wgpu::SubmissionIndex>>,
}

impl GpuEvent {
    /// Tracks `index` on `ctx`'s queue (call right after the submit).
    pub fn after_submit(ctx: &GpuContext, index: wgpu::SubmissionIndex) -> Arc<GpuEvent> {
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        ctx.queue.on_submitted_work_done(move || d.store(true, Ordering::Release));
        Arc::new(GpuEvent { done, index: Mutex::new(Some(index)) })
    }
    pub fn is_done(&self, ctx: &GpuContext) -> bool {
        if self.done.load(Ordering::Acquire) {
            return true;
        }
        ctx.poll();
        self.done.load(Ordering::Acquire)
    }
    /// Waits at most `timeout`; true once the submission has finished.
    pub fn wait_timeout(&self, ctx: &GpuContext, timeout: std::time::Duration) -> Result<bool> {
        if self.done.load(Ordering::Acquire) {
            return Ok(true);
        }
        let idx = self.index.lock().clone();
        let done = match idx {
            Some(i) => ctx.wait_for_timeout(&i, timeout)?,
            None => {
                ctx.wait_idle()?;
                true
            }
        };
        if done {
            self.done.store(true, Ordering::Release);
        }
        Ok(done)
    }
    pub fn wait(&self, ctx: &GpuContext) -> Result<()> {
        if self.done.load(Ordering::Acquire) {
            return Ok(());
        }
        let idx = self.index.lock().clone();
        match idx {
            Some(i) => ctx.wait_for(&i)?,
            None => ctx.wait_idle()?,
        }
        self.done.store(true, Ordering::Release);
        Ok(())
    }
}

/// Bytes of `aval` on the device (bool widened to 4 bytes).
pub fn device_bytes(aval: &Aval) -> Result<u64> {
    let n = aval.numel().ok_or_else(|| Error::Memory { bytes: u128::MAX, what: format!("array of shape {:?}", aval.shape) })?;
    let per = if aval.dtype == DType::Bool { 4 } else { aval.dtype.size() };
    Ok((n as u64).saturating_mul(per as u64))
}

/// Whether `ctx` can hold `dt`: f32, i32, u32, bool everywhere; f64/i64 where the adapter offers 64-bit
/// shaders (shader-f64 with shader-int64, shader-int64).
pub fn check_dtype(ctx: &GpuContext, dt: DType, what: &str) -> Result<()> {
    match dt {
        DType::Bool | DType::I32 | DType::U32 | DType::F32 => Ok(()),
        DType::F64 | DType::I64 if ctx.holds_wide(dt) => Ok(()),
        DType::F64 | DType::I64 => Err(Error::Arguments(format!(
            "{} is not supported on {} ({}): this adapter offers no {} shaders ({what}); use the CPU device or \
             disable jax_enable_x64",
            dt.numpy_name(),
            ctx.repr(),
            ctx.info.name,
            if dt == DType::F64 { "float64" } else { "int64" }
        ))),
        DType::F16 if ctx.features.contains(wgpu::Features::SHADER_F16) => Ok(()),
        DType::F16 => Err(Error::Arguments(format!(
            "float16 is not supported on {} ({}): the adapter lacks the shader-f16 feature ({what}); use the \
             CPU device",
            ctx.repr(),
            ctx.info.name
        ))),
        DType::I8 | DType::U8 | DType::I16 | DType::U16 | DType::BF16 | crate::ir::dtype::float8!() => Err(Error::Arguments(format!(
            "{} is not supported on {} ({}): the GPU backend computes in float32, int32, uint32 and bool \
             ({what}); use the CPU device",
            dt.numpy_name(),
            ctx.repr(),
            ctx.info.name
        ))),
    }
}

/// An array's contents on a GPU: its buffer (or the error of the computation that should have made it),
/// the aval it is read as, and the submission writing it (`None`: nothing pending).
#[derive(Clone)]
pub struct GpuValue {
    pub ctx: Arc<GpuContext>,
    pub aval: Aval,
    pub data: std::result::Result<Arc<GpuBuffer>, Error>,
    pub event: Option<Arc<GpuEvent>>,
}

impl GpuValue {
    pub fn failed(ctx: &Arc<GpuContext>, e: Error, aval: Aval) -> GpuValue {
        GpuValue { ctx: ctx.clone(), aval, data: Err(e), event: None }
    }

    /// True once the producing submission has finished (or the value failed).
    pub fn is_ready(&self) -> bool {
        match (&self.data, &self.event) {
            (Err(_), _) | (_, None) => true,
            (Ok(_), Some(ev)) => ev.is_done(&self.ctx),
        }
    }

    /// Waits for the producing submission; raises the computation's error.
    pub fn wait_done(&self) -> Result<()> {
        let buf = self.data.as_ref().map_err(|e| e.clone())?;
        let _ = buf;
        if let Some(ev) = &self.event {
            ev.wait(&self.ctx)?;
        }
        if let Some(e) = self.ctx.take_errors().into_iter().next() {
            return Err(Error::Execution(format!("{}: {e}", self.ctx.repr())));
        }
        Ok(())
    }

    /// Like `wait_done`, giving up after `timeout` (false: still running), so a caller can check for
    /// Ctrl-C between slices of the wait.
    pub fn wait_done_timeout(&self, timeout: std::time::Duration) -> Result<bool> {
        self.data.as_ref().map_err(|e| e.clone())?;
        if let Some(ev) = &self.event {
            if !ev.wait_timeout(&self.ctx, timeout)? {
                return Ok(false);
            }
        }
        if let Some(e) = self.ctx.take_errors().into_iter().next() {
            return Err(Error::Execution(format!("{}: {e}", self.ctx.repr())));
        }
        Ok(true)
    }

    /// The same buffer read under another aval (same dtype and element count: reshape views).
    pub fn view(&self, aval: Aval) -> GpuValue {
        GpuValue { aval, ..self.clone() }
    }

    /// Copies host `b` to a new device buffer on `ctx` (queued; ready after the next submission finishes).
    pub fn upload(ctx: &Arc<GpuContext>, b: &Buffer) -> Result<GpuValue> {
        check_dtype(ctx, b.aval.dtype, "transfer to the device")?;
        let bytes = device_bytes(&b.aval)?;
        let aval = b.aval.clone();
        let buf = GpuBuffer::new(ctx, bytes, &|| format!("array of shape {:?} {}", aval.shape, aval.dtype.short_name()))?;
        if bytes > 0 {
            let host = b.as_bytes();
            if b.aval.dtype == DType::Bool {
                let wide: Vec<u8> = host.iter().flat_map(|&x| (x as u32).to_le_bytes()).collect();
                ctx.queue.write_buffer(buf.raw(), 0, &wide);
            } else if host.len() % 4 == 0 {
                ctx.queue.write_buffer(buf.raw(), 0, host);
            } else {
                let mut padded = host.to_vec();
                padded.resize(host.len().div_ceil(4) * 4, 0);
                ctx.queue.write_buffer(buf.raw(), 0, &padded);
            }
        }
        let idx = ctx.queue.submit([]);
        Ok(GpuValue { ctx: ctx.clone(), aval: b.aval.clone(), data: Ok(Arc::new(buf)), event: Some(GpuEvent::after_submit(ctx, idx)) })
    }

    /// Reads the value back to a host buffer (waits for the computation; `map_async` + poll).
    pub fn to_host(&self) -> Result<Buffer> {
        let buf = self.data.as_ref().map_err(|e| e.clone())?.clone();
        let bytes = device_bytes(&self.aval)?;
        if bytes == 0 {
            self.wait_done()?;
            return Buffer::alloc(&self.aval);
        }
        let ctx = &self.ctx;
        let size = bytes.div_ceil(4) * 4;
        let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("cranax readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(buf.raw(), 0, &staging, 0, size);
        let idx = ctx.queue.submit([enc.finish()]);
        map_for_read(ctx, &staging, &idx)?;
        if let Some(ev) = &self.event {
            ev.wait(ctx)?;
        }
        let out = {
            let view = staging
                .slice(..)
                .get_mapped_range()
                .map_err(|e| Error::Execution(format!("{}: mapping the readback buffer failed: {e:?}", ctx.repr())))?;
            let data: &[u8] = &view;
            if self.aval.dtype == DType::Bool {
                let narrow: Vec<u8> = data[..bytes as usize].chunks_exact(4).map(|c| (c[0] != 0) as u8).collect();
                Buffer::from_bytes(&self.aval, &narrow)?
            } else {
                Buffer::from_bytes(&self.aval, &data[..bytes as usize])?
            }
        };
        staging.unmap();
        staging.destroy();
        Ok(out)
    }
}

/// Maps MAP_READ buffer `staging` once submission `idx` (which copies into it) has finished; errors wgpu
/// reported meanwhile are returned.
pub fn map_for_read(ctx: &GpuContext, staging: &wgpu::Buffer, idx: &wgpu::SubmissionIndex) -> Result<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    ctx.wait_for(idx)?;
    if let Some(e) = ctx.take_errors().into_iter().next() {
        return Err(Error::Execution(format!("{}: {e}", ctx.repr())));
    }
    let mapped = loop {
        match rx.try_recv() {
            Ok(r) => break r,
            Err(std::sync::mpsc::TryRecvError::Empty) => {
                ctx.poll();
                std::thread::yield_now();
            }
            Err(_) => return Err(Error::Execution(format!("{}: readback was dropped", ctx.repr()))),
        }
    };
    mapped.map_err(|e| Error::Execution(format!("{}: reading back failed: {e}", ctx.repr())))
}
