//! Devices: the host CPU devices (platform "cpu"; one unless `CRANAX_NUM_CPU_DEVICES=N` or JAX's
//! `--xla_force_host_platform_device_count=N` in `XLA_FLAGS` asks for N, read once at first use), each with its
//! own stream, sharing the host's memory and thread pool; and the GPU devices (one per wgpu adapter).
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use crate::runtime::stream::Stream;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Cpu,
    /// A wgpu adapter (`backend::gpu`); the device id is its index among the GPU contexts.
    Gpu,
}

pub struct Device {
    pub id: u32,
    pub kind: DeviceKind,
    /// Host description, e.g. "cpu:0 (x86_64, 2 threads)".
    pub description: String,
    pub stream: Stream,
}

impl Device {
    /// JAX's platform name ("cpu").
    pub fn platform(&self) -> &'static str {
        match self.kind {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Gpu => "gpu",
        }
    }
    /// JAX's `device_kind` ("cpu" for the host).
    pub fn device_kind(&self) -> &'static str {
        match self.kind {
            DeviceKind::Cpu => "cpu",
            // The adapter name (JAX reports the card's name); interned once per device.
            DeviceKind::Gpu => gpu_kind_name(self.id),
        }
    }
    /// `CpuDevice(id=0)`, as JAX prints it.
    pub fn repr(&self) -> String {
        match self.kind {
            DeviceKind::Cpu => format!("CpuDevice(id={})", self.global_id()),
            DeviceKind::Gpu => format!("GpuDevice(id={})", self.id),
        }
    }
    /// The id JAX gives the device among every process's: a CPU device's is `process_index << 17 | local id`
    /// (XLA's CPU client numbers them so), a GPU's its adapter index.
    pub fn global_id(&self) -> u32 {
        match self.kind {
            DeviceKind::Cpu => (process_index() << 17) | self.id,
            DeviceKind::Gpu => self.id,
        }
    }
}

static PROCESS_INDEX: AtomicU32 = AtomicU32::new(0);

/// This process's index in a multi-process run (set by `cranax.distributed.initialize`; 0 otherwise).
pub fn process_index() -> u32 {
    PROCESS_INDEX.load(Ordering::Relaxed)
}

pub fn set_process_index(i: u32) {
    PROCESS_INDEX.store(i, Ordering::Relaxed);
}

/// How many CPU devices this process exposes: `CRANAX_NUM_CPU_DEVICES`, else XLA's
/// `--xla_force_host_platform_device_count` in `XLA_FLAGS` (as JAX honours it), else 1; at most 1024.
pub fn cpu_device_count() -> u32 {
    let from_env = std::env::var("CRANAX_NUM_CPU_DEVICES").ok().and_then(|v| v.trim().parse::<u32>().ok());
    let from_xla = || {
        let flags = std::env::var("XLA_FLAGS").ok()?;
        flags.split_whitespace().find_map(|f| f.strip_prefix("--xla_force_host_platform_device_count=")?.parse::<u32>().ok())
    };
    from_env.or_else(from_xla).unwrap_or(1).clamp(1, 1024)
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}

fn make_cpu(id: u32) -> Device {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let description = format!("cpu:{id} ({}, {threads} threads)", std::env::consts::ARCH);
    let stream = Stream::new(&format!("cpu{id}")).expect("cannot start the CPU stream thread");
    Device { id, kind: DeviceKind::Cpu, description, stream }
}

static DEVICES: OnceLock<Vec<Arc<Device>>> = OnceLock::new();

/// Every CPU device of this process (device 0 first). Started on first use.
pub fn devices() -> &'static [Arc<Device>] {
    DEVICES.get_or_init(|| (0..cpu_device_count()).map(|i| Arc::new(make_cpu(i))).collect())
}

/// The host CPU device.
#[inline]
pub fn cpu() -> &'static Arc<Device> {
    &devices()[0]
}

/// GPU devices (platform "gpu"), one per usable wgpu adapter; discovered on first call (wgpu is started
/// only then). Empty without the `gpu` feature or without an adapter.
pub fn gpu_devices() -> &'static [Arc<Device>] {
    static GPUS: OnceLock<Vec<Arc<Device>>> = OnceLock::new();
    GPUS.get_or_init(|| {
        #[cfg(feature = "gpu")]
        {
            crate::backend::gpu::contexts()
                .iter()
                .filter_map(|c| {
                    let stream = Stream::new(&format!("gpu{}", c.index)).ok()?;
                    Some(Arc::new(Device { id: c.index as u32, kind: DeviceKind::Gpu, description: c.description(), stream }))
                })
                .collect()
        }
        #[cfg(not(feature = "gpu"))]
        {
            Vec::new()
        }
    })
}

fn gpu_kind_name(id: u32) -> &'static str {
    #[cfg(feature = "gpu")]
    {
        static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
        let names = NAMES.get_or_init(|| {
            crate::backend::gpu::contexts().iter().map(|c| &*Box::leak(c.info.name.clone().into_boxed_str())).collect()
        });
        names.get(id as usize).copied().unwrap_or("gpu")
    }
    #[cfg(not(feature = "gpu"))]
    {
        let _ = id;
        "gpu"
    }
}
