//! Devices. Today there is one: the host CPU (`id 0`, platform "cpu"), with its stream. A GPU device would
//! be another `DeviceKind` with its own stream and buffer placement.
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
            DeviceKind::Cpu => format!("CpuDevice(id={})", self.id),
            DeviceKind::Gpu => format!("GpuDevice(id={})", self.id),
        }
    }
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

/// Every device of this process (the CPU first). Started on first use.
pub fn devices() -> &'static [Arc<Device>] {
    DEVICES.get_or_init(|| vec![Arc::new(make_cpu(0))])
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
