//! Devices. Today there is one: the host CPU (`id 0`, platform "cpu"), with its stream. A GPU device would
//! be another `DeviceKind` with its own stream and buffer placement.
use std::sync::{Arc, OnceLock};

use crate::runtime::stream::Stream;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Cpu,
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
        }
    }
    /// JAX's `device_kind` ("cpu" for the host).
    pub fn device_kind(&self) -> &'static str {
        match self.kind {
            DeviceKind::Cpu => "cpu",
        }
    }
    /// `CpuDevice(id=0)`, as JAX prints it.
    pub fn repr(&self) -> String {
        match self.kind {
            DeviceKind::Cpu => format!("CpuDevice(id={})", self.id),
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
