//! `Device`: the Python view of a runtime device. One Python object per device, so identity, equality
//! and hashing are stable (devices are part of jit cache keys).
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::runtime::device::{devices, Device};

#[pyclass(frozen, name = "Device", module = "cranax._core")]
pub struct PyDevice {
    pub dev: Arc<Device>,
}

static OBJECTS: PyOnceLock<Vec<Py<PyDevice>>> = PyOnceLock::new();

/// The Python object of every device (created once).
pub fn device_objects(py: Python<'_>) -> PyResult<&Vec<Py<PyDevice>>> {
    OBJECTS.get_or_try_init(py, || devices().iter().map(|d| Py::new(py, PyDevice { dev: d.clone() })).collect())
}

/// The Python object for a runtime device.
pub fn device_object<'py>(py: Python<'py>, d: &Arc<Device>) -> PyResult<Bound<'py, PyDevice>> {
    let objs = device_objects(py)?;
    match objs.iter().find(|o| Arc::ptr_eq(&o.get().dev, d)) {
        Some(o) => Ok(o.bind(py).clone()),
        None => match gpu_device_objects(py)?.iter().find(|o| Arc::ptr_eq(&o.get().dev, d)) {
            Some(o) => Ok(o.bind(py).clone()),
            None => Bound::new(py, PyDevice { dev: d.clone() }),
        },
    }
}

static GPU_OBJECTS: PyOnceLock<Vec<Py<PyDevice>>> = PyOnceLock::new();

/// The Python object of every GPU device (created once; discovering the GPUs on first call).
pub fn gpu_device_objects(py: Python<'_>) -> PyResult<&Vec<Py<PyDevice>>> {
    GPU_OBJECTS.get_or_try_init(py, || {
        let devs = py.detach(crate::runtime::device::gpu_devices);
        devs.iter().map(|d| Py::new(py, PyDevice { dev: d.clone() })).collect()
    })
}

#[pymethods]
impl PyDevice {
    #[getter]
    fn id(&self) -> u32 {
        self.dev.global_id()
    }
    #[getter]
    fn platform(&self) -> &'static str {
        self.dev.platform()
    }
    #[getter]
    fn device_kind(&self) -> &'static str {
        self.dev.device_kind()
    }
    /// Host description, e.g. "cpu:0 (x86_64, 2 threads)".
    #[getter]
    fn description(&self) -> String {
        self.dev.description.clone()
    }
    #[getter]
    fn process_index(&self) -> u32 {
        match self.dev.kind {
            crate::runtime::device::DeviceKind::Cpu => crate::runtime::device::process_index(),
            crate::runtime::device::DeviceKind::Gpu => 0,
        }
    }
    /// Waits until every computation queued on this device has finished (GIL released; Ctrl-C raises
    /// `KeyboardInterrupt`).
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        #[cfg(feature = "gpu")]
        if self.dev.kind == crate::runtime::device::DeviceKind::Gpu {
            // A GPU's work is on its queue (submitted by the caller), not on the stream.
            if let Some(c) = crate::backend::gpu::contexts().get(self.dev.id as usize) {
                let c = c.clone();
                return Ok(py.detach(move || c.wait_idle())?);
            }
        }
        let marker = self.dev.stream.sync_marker();
        loop {
            if py.detach(|| marker.wait_timeout(super::array::SIGNAL_POLL)).is_some() {
                return Ok(());
            }
            py.check_signals()?;
        }
    }
    fn __repr__(&self) -> String {
        self.dev.repr()
    }
    fn __str__(&self) -> String {
        self.dev.description.clone()
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyDevice>().map(|o| Arc::ptr_eq(&o.get().dev, &self.dev)).unwrap_or(false)
    }
    fn __hash__(&self) -> u64 {
        (self.dev.id as u64) ^ 0x6372_616e_6178_0000 ^ ((self.dev.kind as u64) << 32)
    }
}
