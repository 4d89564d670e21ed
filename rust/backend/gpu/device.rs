//! The wgpu instance, adapters, devices and queues: discovered once per process (`contexts()`), kept for its
//! lifetime. Each context also owns its pipeline cache (keyed by the WGSL text's hash, text compared on a
//! hit), its buffer pool, and the errors wgpu reported outside an error scope.
use std::collections::HashMap;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;

use crate::error::{Error, Result};

/// Drives a wgpu future to completion. wgpu-core's futures are ready at once or after `device.poll`, so a
/// yield loop is enough (no executor needed).
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

/// One adapter with its device and queue.
pub struct GpuContext {
    /// Index among this process's GPU devices (the runtime device id of platform "gpu").
    pub index: usize,
    pub info: wgpu::AdapterInfo,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub limits: wgpu::Limits,
    /// Features the device was created with (only what the backend uses).
    pub features: wgpu::Features,
    /// Everything the adapter offers (reported by `gpu_info`, e.g. whether f64/i64 shaders could run).
    pub adapter_features: wgpu::Features,
    pipelines: Mutex<HashMap<u64, Vec<(String, Arc<wgpu::ComputePipeline>)>>>,
    pool: Mutex<Pool>,
    /// Errors wgpu reported with no error scope open (validation of a submit, device loss).
    errors: Arc<Mutex<Vec<String>>>,
    /// Shader modules + pipelines created (cache misses).
    pub pipeline_compiles: AtomicU64,
}

struct Pool {
    free: HashMap<u64, Vec<wgpu::Buffer>>,
    bytes: u64,
}

/// Bytes of freed device buffers kept for reuse, per device.
const POOL_MAX_BYTES: u64 = 512 * 1024 * 1024;
const POOL_PER_SIZE: usize = 8;

pub const STORAGE_USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

impl GpuContext {
    /// Whether arrays of `dt` can live on this device (f64/i64 need the adapter's shader-f64/shader-int64).
    pub fn holds_wide(&self, dt: crate::ir::DType) -> bool {
        match dt {
            crate::ir::DType::F64 => self.features.contains(wgpu::Features::SHADER_F64),
            crate::ir::DType::I64 => self.features.contains(wgpu::Features::SHADER_INT64),
            _ => false,
        }
    }

    /// True for a software rasterizer (lavapipe/llvmpipe, WARP, SwiftShader): timings are not GPU speed.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    pub fn backend_name(&self) -> &'static str {
        match self.info.backend {
            wgpu::Backend::Vulkan => "Vulkan",
            wgpu::Backend::Metal => "Metal",
            wgpu::Backend::Dx12 => "DX12",
            wgpu::Backend::Gl => "GL",
            wgpu::Backend::BrowserWebGpu => "WebGPU",
            _ => "other",
        }
    }

    /// JAX's `repr`: `GpuDevice(id=0)`.
    pub fn repr(&self) -> String {
        format!("GpuDevice(id={})", self.index)
    }

    /// "gpu:0 (llvmpipe (LLVM 15.0.6, 256 bits), Vulkan, software)".
    pub fn description(&self) -> String {
        let kind = match self.info.device_type {
            wgpu::DeviceType::Cpu => "software",
            wgpu::DeviceType::DiscreteGpu => "discrete",
            wgpu::DeviceType::IntegratedGpu => "integrated",
            wgpu::DeviceType::VirtualGpu => "virtual",
            wgpu::DeviceType::Other => "other",
        };
        format!("gpu:{} ({}, {}, {kind})", self.index, self.info.name, self.backend_name())
    }

    /// The largest storage binding, in bytes (arrays bound to kernels must fit).
    pub fn max_binding(&self) -> u64 {
        self.limits.max_storage_buffer_binding_size as u64
    }

    /// A storage buffer of at least `bytes` bytes (rounded up to 4, at least 4), from the pool when one of
    /// that size is free. Larger than the binding limit → `Memory` error naming the limit.
    pub fn alloc(&self, bytes: u64, what: &dyn Fn() -> String) -> Result<wgpu::Buffer> {
        let size = bytes.max(4).div_ceil(4) * 4;
        if size > self.max_binding() {
            return Err(Error::Memory {
                bytes: bytes as u128,
                what: format!(
                    "{} on {} ({}): larger than the adapter's max_storage_buffer_binding_size limit of {} bytes \
                     (split the array, or run this computation on the CPU)",
                    what(),
                    self.repr(),
                    self.info.name,
                    self.max_binding()
                ),
            });
        }
        if let Some(b) = {
            let mut p = self.pool.lock();
            let b = p.free.get_mut(&size).and_then(|v| v.pop());
            if b.is_some() {
                p.bytes -= size;
            }
            b
        } {
            return Ok(b);
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: STORAGE_USAGE,
            mapped_at_creation: false,
        });
        if let Some(e) = block_on(scope.pop()) {
            return Err(Error::Memory { bytes: size as u128, what: format!("{} on {}: {e}", what(), self.repr()) });
        }
        Ok(buf)
    }

    /// Returns a buffer to the pool (or frees it when the pool is full).
    pub fn release(&self, buf: wgpu::Buffer) {
        let size = buf.size();
        let mut p = self.pool.lock();
        if p.bytes + size <= POOL_MAX_BYTES {
            let v = p.free.entry(size).or_default();
            if v.len() < POOL_PER_SIZE {
                v.push(buf);
                p.bytes += size;
                return;
            }
        }
        drop(p);
        // Dropped, not destroyed: wgpu frees it once no pending submission uses it.
        drop(buf);
    }

    /// Frees every pooled buffer.
    pub fn trim_pool(&self) {
        let free = {
            let mut p = self.pool.lock();
            p.bytes = 0;
            std::mem::take(&mut p.free)
        };
        for (_, v) in free {
            drop(v);
        }
    }

    pub fn pool_bytes(&self) -> u64 {
        self.pool.lock().bytes
    }

    /// The compute pipeline for WGSL `source` (entry point `main`), compiled once per distinct text.
    /// Shader or pipeline errors become `Codegen` errors carrying wgpu's message and the source.
    pub fn pipeline(&self, source: &str) -> Result<Arc<wgpu::ComputePipeline>> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        source.hash(&mut h);
        let key = h.finish();
        if let Some(v) = self.pipelines.lock().get(&key) {
            if let Some((_, p)) = v.iter().find(|(s, _)| s == source) {
                return Ok(p.clone());
            }
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = block_on(scope.pop()) {
            return Err(Error::Codegen(format!("WGSL rejected by {}: {e}\n--- shader ---\n{source}", self.repr())));
        }
        self.pipeline_compiles.fetch_add(1, Ordering::Relaxed);
        let p = Arc::new(pipeline);
        self.pipelines.lock().entry(key).or_default().push((source.to_string(), p.clone()));
        Ok(p)
    }

    /// Number of cached pipelines.
    pub fn pipeline_cache_len(&self) -> usize {
        self.pipelines.lock().values().map(|v| v.len()).sum()
    }

    /// Errors reported outside any scope since the last call (taken).
    pub fn take_errors(&self) -> Vec<String> {
        std::mem::take(&mut *self.errors.lock())
    }

    /// Non-blocking: lets wgpu run completion callbacks.
    pub fn poll(&self) {
        let _ = self.device.poll(wgpu::PollType::Poll);
    }

    /// Blocks until everything submitted so far has finished.
    pub fn wait_idle(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| Error::Execution(format!("{}: waiting for the queue failed: {e}", self.repr())))?;
        match self.take_errors().into_iter().next() {
            Some(e) => Err(Error::Execution(format!("{}: {e}", self.repr()))),
            None => Ok(()),
        }
    }

    /// Blocks until submission `index` has finished or `timeout` has passed; true when it finished.
    pub fn wait_for_timeout(&self, index: &wgpu::SubmissionIndex, timeout: std::time::Duration) -> Result<bool> {
        match self.device.poll(wgpu::PollType::Wait { submission_index: Some(index.clone()), timeout: Some(timeout) }) {
            Ok(_) => Ok(true),
            Err(wgpu::PollError::Timeout) => Ok(false),
            Err(e) => Err(Error::Execution(format!("{}: waiting for the queue failed: {e}", self.repr()))),
        }
    }

    /// Blocks until submission `index` has finished.
    pub fn wait_for(&self, index: &wgpu::SubmissionIndex) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait { submission_index: Some(index.clone()), timeout: None })
            .map(|_| ())
            .map_err(|e| Error::Execution(format!("{}: waiting for the queue failed: {e}", self.repr())))
    }
}

/// Optional shader features turned off by `CRANAX_GPU_DISABLE_FEATURES` (comma-separated: f16, f64, int64),
/// e.g. to check a program on what a smaller adapter offers. Int64 off turns f64 off too.
fn disabled_features() -> wgpu::Features {
    let mut off = wgpu::Features::empty();
    for name in std::env::var("CRANAX_GPU_DISABLE_FEATURES").unwrap_or_default().split(',') {
        off |= match name.trim() {
            "f16" => wgpu::Features::SHADER_F16,
            "f64" => wgpu::Features::SHADER_F64,
            "int64" => wgpu::Features::SHADER_INT64 | wgpu::Features::SHADER_F64,
            _ => wgpu::Features::empty(),
        };
    }
    off
}

static CONTEXTS: OnceLock<Vec<Arc<GpuContext>>> = OnceLock::new();
static DISCOVERY_NOTE: OnceLock<String> = OnceLock::new();

fn discover() -> (Vec<Arc<GpuContext>>, String) {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // Silences a Mesa warning on headless machines; harmless elsewhere.
        std::env::set_var("XDG_RUNTIME_DIR", "/tmp");
    }
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapters = block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
    if adapters.is_empty() {
        return (vec![], "no Vulkan, Metal or DX12 adapter found (on Linux install mesa-vulkan-drivers libvulkan1 for a software device)".into());
    }
    let hardware = adapters.iter().any(|a| a.get_info().device_type != wgpu::DeviceType::Cpu);
    let mut seen: Vec<String> = vec![];
    let mut chosen = vec![];
    for a in adapters {
        let info = a.get_info();
        // Real GPUs when there are any; otherwise one software adapter (lavapipe) so the backend is usable.
        if hardware == (info.device_type == wgpu::DeviceType::Cpu) {
            continue;
        }
        if seen.contains(&info.name) || (!hardware && !chosen.is_empty()) {
            continue;
        }
        seen.push(info.name.clone());
        chosen.push(a);
    }
    let mut out = vec![];
    let mut notes = vec![];
    for a in chosen {
        let info = a.get_info();
        let limits = a.limits();
        let adapter_features = a.features();
        // f64 needs int64 too (NaN tests and sign operations work on the bits).
        let mut features = adapter_features & (wgpu::Features::SHADER_F16 | wgpu::Features::SHADER_INT64);
        if adapter_features.contains(wgpu::Features::SHADER_F64 | wgpu::Features::SHADER_INT64) {
            features |= wgpu::Features::SHADER_F64;
        }
        features = features.difference(disabled_features());
        let r = block_on(a.request_device(&wgpu::DeviceDescriptor {
            label: Some("cranax"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: Default::default(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: Default::default(),
        }));
        let (device, queue) = match r {
            Ok(dq) => dq,
            Err(e) => {
                notes.push(format!("{}: {e}", info.name));
                continue;
            }
        };
        let errors: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(vec![]));
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut v = sink.lock();
            if v.len() < 16 {
                v.push(e.to_string());
            }
        }));
        out.push(Arc::new(GpuContext {
            index: out.len(),
            info,
            device,
            queue,
            limits,
            features,
            adapter_features,
            pipelines: Mutex::new(HashMap::new()),
            pool: Mutex::new(Pool { free: HashMap::new(), bytes: 0 }),
            errors,
            pipeline_compiles: AtomicU64::new(0),
        }));
    }
    let note = if out.is_empty() { format!("no usable adapter ({})", notes.join("; ")) } else { String::new() };
    (out, note)
}

/// Every GPU context of this process, discovered on first use (never panics: a failing driver means none).
pub fn contexts() -> &'static [Arc<GpuContext>] {
    CONTEXTS.get_or_init(|| match catch_unwind(AssertUnwindSafe(discover)) {
        Ok((v, note)) => {
            let _ = DISCOVERY_NOTE.set(note);
            v
        }
        Err(p) => {
            let _ = DISCOVERY_NOTE.set(format!("adapter discovery panicked: {}", crate::error::panic_message(&*p)));
            vec![]
        }
    })
}

/// Why there is no GPU device (empty when there is one).
pub fn discovery_note() -> String {
    contexts();
    DISCOVERY_NOTE.get().cloned().unwrap_or_default()
}

/// The contexts if discovery already ran; empty otherwise (never starts wgpu).
pub fn contexts_if_started() -> &'static [Arc<GpuContext>] {
    CONTEXTS.get().map(|v| v.as_slice()).unwrap_or(&[])
}
