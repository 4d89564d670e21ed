//! Placement, following JAX: a computation runs on the device of its *committed* inputs (arrays put there
//! with `device_put(x, device)`, and results computed from committed inputs); committed inputs on two
//! different devices are a `ValueError` naming them; uncommitted inputs move to where the computation runs,
//! which is the default device when no input is committed. Committed arrays are instances of the
//! `CommittedArray` subclass of `DeviceArray` (so every `DeviceArray` method applies unchanged).
//!
//! Also here: the default device, transfers between devices, and the GPU module functions.
use std::sync::Arc;

use parking_lot::RwLock;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::runtime::device::{cpu, Device, DeviceKind};
use crate::runtime::executable::Executable;
use crate::runtime::pending::Value;

use super::array::DeviceArray;
use super::device::{gpu_device_objects, PyDevice};

/// A `DeviceArray` committed to its device.
#[pyclass(frozen, extends = DeviceArray, name = "CommittedArray", module = "cranax._core")]
pub struct CommittedArray;

static DEFAULT: RwLock<Option<Arc<Device>>> = RwLock::new(None);

/// The device uncommitted computations run on (the CPU unless set).
pub fn default_device() -> Arc<Device> {
    DEFAULT.read().clone().unwrap_or_else(|| cpu().clone())
}

/// A new array handle for `value` on `device`, committed or not.
pub fn make_array<'py>(py: Python<'py>, value: Value, device: Arc<Device>, committed: bool) -> PyResult<Bound<'py, PyAny>> {
    let base = DeviceArray { value, device };
    if committed {
        Ok(Bound::new(py, PyClassInitializer::from(base).add_subclass(CommittedArray))?.into_any())
    } else {
        Ok(Bound::new(py, base)?.into_any())
    }
}

/// `v` (held on `from`) as a value on `to`. Host → GPU uploads (waiting for a pending host value with the
/// GIL released); GPU → host reads back.
pub fn transfer(py: Python<'_>, v: &Value, from: &Arc<Device>, to: &Arc<Device>) -> PyResult<Value> {
    if Arc::ptr_eq(from, to) {
        return Ok(v.clone());
    }
    let _t = crate::runtime::profiler::host_span("transfer", || format!("transfer {} to {}", from.repr(), to.repr()));
    match to.kind {
        DeviceKind::Cpu => {
            let b = py.detach(|| crate::error::run_catching("transfer to the host", || v.wait()))?;
            Ok(Value::Ready(b))
        }
        DeviceKind::Gpu => {
            #[cfg(feature = "gpu")]
            {
                let ctx = crate::backend::gpu::contexts()
                    .get(to.id as usize)
                    .ok_or_else(|| PyValueError::new_err(format!("unknown device {}", to.repr())))?
                    .clone();
                let g = py.detach(|| {
                    crate::error::run_catching("transfer to the GPU", || {
                        let host = v.wait()?;
                        crate::backend::gpu::GpuValue::upload(&ctx, &host)
                    })
                })?;
                Ok(Value::Gpu(g))
            }
            #[cfg(not(feature = "gpu"))]
            {
                Err(PyValueError::new_err(format!("{} is not available (built without the gpu feature)", to.repr())))
            }
        }
    }
}

fn aval_text(v: &Value) -> String {
    let a = v.aval();
    let dims: Vec<String> = a.shape.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", a.dtype.short_name(), dims.join(","))
}

/// Runs `exe` on `args` (DeviceArrays) on the device placement picks; returns the output handles.
pub fn execute<'py>(
    py: Python<'py>, exe: &Arc<Executable>, args: &Bound<'py, PyAny>, mut alias: Vec<(usize, usize)>, donate: Vec<(usize, usize)>,
) -> PyResult<Bound<'py, PyList>> {
    let mut vals: Vec<(Value, Arc<Device>, bool)> = Vec::with_capacity(exe.in_avals.len());
    let mut push = |i: usize, a: Bound<'py, PyAny>| -> PyResult<()> {
        match a.cast::<DeviceArray>() {
            Ok(d) => {
                let committed = a.is_instance_of::<CommittedArray>();
                let g = d.get();
                vals.push((g.value.clone(), g.device.clone(), committed));
                Ok(())
            }
            // a deleted (donated) Array's buffer: JAX's RuntimeError
            Err(_) if a.hasattr("_deleted_message").unwrap_or(false) => {
                Err(pyo3::exceptions::PyRuntimeError::new_err(a.getattr("_deleted_message")?.extract::<String>()?))
            }
            Err(_) => Err(PyTypeError::new_err(format!(
                "argument {i} is a {}, expected a DeviceArray",
                a.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
            ))),
        }
    };
    if let Ok(l) = args.cast::<PyList>() {
        for (i, a) in l.iter().enumerate() {
            push(i, a)?;
        }
    } else if let Ok(t) = args.cast::<PyTuple>() {
        for (i, a) in t.iter().enumerate() {
            push(i, a)?;
        }
    } else {
        for (i, a) in args.try_iter()?.enumerate() {
            push(i, a?)?;
        }
    }
    // The committed device, if any; two different ones are an error.
    let mut target: Option<(usize, Arc<Device>)> = None;
    for (i, (v, d, c)) in vals.iter().enumerate() {
        if !*c {
            continue;
        }
        match &target {
            None => target = Some((i, d.clone())),
            Some((j, t)) if !Arc::ptr_eq(t, d) => {
                return Err(PyValueError::new_err(format!(
                    "Received incompatible devices for jitted computation {}. Got argument {j} of shape {} on \
                     device {} and argument {i} of shape {} on device {} (both committed). Move them to one \
                     device with device_put.",
                    exe.name,
                    aval_text(&vals[*j].0),
                    t.repr(),
                    aval_text(v),
                    d.repr()
                )));
            }
            _ => {}
        }
    }
    // A donated argument's buffer is written into only where no other array can reach it: its storage's
    // holders are the argument's DeviceArray and this call's copy of its value (no view, no other output
    // sharing it, no queued program reading it). The caller deletes the argument after the call.
    for (j, k) in donate {
        if let Some((Value::Ready(b), d, _)) = vals.get(j) {
            let st = &b.storage;
            if d.kind == DeviceKind::Cpu && Arc::strong_count(st) == 2 && Arc::weak_count(st) == 0 && !st.is_borrowed() {
                alias.push((j, k));
            }
        }
    }
    let committed = target.is_some();
    let dev = match target {
        Some((_, d)) => d,
        None => default_device(),
    };
    let outs: Vec<Value> = match dev.kind {
        DeviceKind::Cpu => {
            if vals.iter().all(|(_, d, _)| d.kind == DeviceKind::Cpu) {
                execute_cpu(py, exe, &dev, vals.into_iter().map(|(v, _, _)| v).collect(), alias)?
            } else {
                let mut vs = Vec::with_capacity(vals.len());
                for (v, d, _) in &vals {
                    vs.push(transfer(py, v, d, &dev)?);
                }
                execute_cpu(py, exe, &dev, vs, Vec::new())?
            }
        }
        DeviceKind::Gpu => run_gpu(py, exe, &dev, &vals)?,
    };
    PyList::new(py, outs.into_iter().map(|v| make_array(py, v, dev.clone(), committed)).collect::<PyResult<Vec<_>>>()?)
}

/// Programs above this much work release the GIL while dispatched: they may run inline on this thread for up
/// to a few milliseconds (`INLINE_MAX_WORK`), and other Python threads should run meanwhile. Smaller ones
/// keep it: releasing and re-taking it would cost more than they run.
const GIL_RELEASE_WORK: usize = 1 << 20;
/// ... unless their latest run was measured shorter than this (a while loop's work is a guess).
const GIL_RELEASE_NS: u64 = 100_000;

fn execute_cpu(py: Python<'_>, exe: &Arc<Executable>, dev: &Arc<Device>, args: Vec<Value>, alias: Vec<(usize, usize)>) -> PyResult<Vec<Value>> {
    if exe.work > GIL_RELEASE_WORK && exe.last_run_ns().is_none_or(|n| n > GIL_RELEASE_NS) {
        Ok(py.detach(|| exe.execute_aliased(dev, args, alias))?)
    } else {
        Ok(exe.execute_aliased(dev, args, alias)?)
    }
}

#[cfg(feature = "gpu")]
fn run_gpu(py: Python<'_>, exe: &Arc<Executable>, dev: &Arc<Device>, vals: &[(Value, Arc<Device>, bool)]) -> PyResult<Vec<Value>> {
    use crate::backend::gpu;
    exe.check_args(vals.iter().map(|(v, _, _)| v.aval()))?;
    let ctx = gpu::contexts()
        .get(dev.id as usize)
        .ok_or_else(|| PyValueError::new_err(format!("unknown device {}", dev.repr())))?
        .clone();
    let gexe = py.detach(|| crate::error::run_catching("GPU compile", || gpu::executable_for(&ctx, &exe.key, &exe.plan, &exe.cpu)))?;
    let mut ins = Vec::with_capacity(vals.len());
    for (v, d, _) in vals {
        match transfer(py, v, d, dev)? {
            Value::Gpu(g) => ins.push(g),
            _ => return Err(PyValueError::new_err("internal error: transfer to a GPU gave a host value")),
        }
    }
    let _launch = crate::runtime::profiler::host_span("launch", || format!("launch {}", exe.name));
    // On the GPU's track the span covers recording and submitting the work (the GPU runs it after).
    let _run = crate::runtime::profiler::span("kernel", || exe.name.clone(), || dev.repr());
    let outs = py.detach(|| crate::error::run_catching("GPU execute", || gexe.run(&ins)))?;
    Ok(outs.into_iter().map(Value::Gpu).collect())
}

#[cfg(not(feature = "gpu"))]
fn run_gpu(_py: Python<'_>, _exe: &Arc<Executable>, dev: &Arc<Device>, _vals: &[(Value, Arc<Device>, bool)]) -> PyResult<Vec<Value>> {
    Err(PyValueError::new_err(format!("{} is not available (built without the gpu feature)", dev.repr())))
}

/// `device_put`: `x` on `device`, committed when `committed`.
#[pyfunction]
#[pyo3(signature = (x, device, committed=true))]
pub fn put<'py>(py: Python<'py>, x: &Bound<'py, PyAny>, device: &Bound<'py, PyDevice>, committed: bool) -> PyResult<Bound<'py, PyAny>> {
    let a = x.cast::<DeviceArray>()?.get();
    let to = device.get().dev.clone();
    let v = transfer(py, &a.value, &a.device, &to)?;
    make_array(py, v, to, committed)
}

/// Whether `x` is committed to its device.
#[pyfunction]
pub fn is_committed(x: &Bound<'_, PyAny>) -> bool {
    x.is_instance_of::<CommittedArray>()
}

/// Waits for `x`'s computation without reading device values back; raises its error.
#[pyfunction]
pub fn block(py: Python<'_>, x: &Bound<'_, DeviceArray>) -> PyResult<()> {
    let v = &x.get().value;
    #[cfg(feature = "gpu")]
    if let Value::Gpu(g) = v {
        // In slices, checking for Ctrl-C between them (a long GPU loop stays interruptible).
        loop {
            let g = g.clone();
            if py.detach(move || g.wait_done_timeout(super::array::SIGNAL_POLL))? {
                return Ok(());
            }
            py.check_signals()?;
        }
    }
    // Host values: the interruptible wait (Ctrl-C raises KeyboardInterrupt).
    super::array::wait_value(py, v)?;
    Ok(())
}

/// Sets the device uncommitted computations run on (None: the CPU).
#[pyfunction]
#[pyo3(signature = (device=None))]
pub fn set_default_device(device: Option<&Bound<'_, PyDevice>>) {
    *DEFAULT.write() = device.map(|d| d.get().dev.clone());
}

#[pyfunction]
pub fn get_default_device(py: Python<'_>) -> PyResult<Bound<'_, PyDevice>> {
    super::device::device_object(py, &default_device())
}

/// The GPU devices (discovers adapters on the first call; empty without the gpu feature or an adapter).
#[pyfunction]
pub fn gpu_devices(py: Python<'_>) -> PyResult<Vec<Py<PyDevice>>> {
    Ok(gpu_device_objects(py)?.iter().map(|d| d.clone_ref(py)).collect())
}

/// Why there is no GPU device ("" when there is one).
#[pyfunction]
pub fn gpu_unavailable_reason(py: Python<'_>) -> String {
    #[cfg(feature = "gpu")]
    {
        py.detach(crate::backend::gpu::discovery_note)
    }
    #[cfg(not(feature = "gpu"))]
    {
        let _ = py;
        "cranax was built without the gpu feature".into()
    }
}

/// Facts about GPU device `device`: adapter name, backend, device type, software flag, limits, caches.
#[pyfunction]
pub fn gpu_info<'py>(py: Python<'py>, device: &Bound<'py, PyDevice>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    #[cfg(feature = "gpu")]
    {
        let dev = &device.get().dev;
        if dev.kind == DeviceKind::Gpu {
            if let Some(c) = crate::backend::gpu::contexts().get(dev.id as usize) {
                d.set_item("name", &c.info.name)?;
                d.set_item("backend", c.backend_name())?;
                d.set_item("device_type", format!("{:?}", c.info.device_type))?;
                d.set_item("driver", &c.info.driver)?;
                d.set_item("driver_info", &c.info.driver_info)?;
                d.set_item("software", c.is_software())?;
                d.set_item("max_storage_buffer_binding_size", c.max_binding())?;
                d.set_item("max_buffer_size", c.limits.max_buffer_size)?;
                d.set_item("max_storage_buffers_per_shader_stage", c.limits.max_storage_buffers_per_shader_stage)?;
                d.set_item("shader_f16", c.features.contains(wgpu::Features::SHADER_F16))?;
                d.set_item("adapter_shader_f64", c.adapter_features.contains(wgpu::Features::SHADER_F64))?;
                d.set_item("adapter_shader_int64", c.adapter_features.contains(wgpu::Features::SHADER_INT64))?;
                d.set_item("shader_f64", c.features.contains(wgpu::Features::SHADER_F64))?;
                d.set_item("shader_int64", c.features.contains(wgpu::Features::SHADER_INT64))?;
                d.set_item("pipelines", c.pipeline_cache_len())?;
                d.set_item("pipeline_compiles", c.pipeline_compiles.load(std::sync::atomic::Ordering::Relaxed))?;
                d.set_item("pool_bytes", c.pool_bytes())?;
            }
        }
    }
    #[cfg(not(feature = "gpu"))]
    let _ = device;
    Ok(d)
}

/// The WGSL of every kernel of `exe` as compiled for GPU `device` (compiling it if needed).
#[pyfunction]
pub fn gpu_shaders(py: Python<'_>, exe: &Bound<'_, super::executable::PyExecutable>, device: &Bound<'_, PyDevice>) -> PyResult<Vec<String>> {
    #[cfg(feature = "gpu")]
    {
        let dev = device.get().dev.clone();
        let ctx = crate::backend::gpu::contexts()
            .get(dev.id as usize)
            .filter(|_| dev.kind == DeviceKind::Gpu)
            .ok_or_else(|| PyValueError::new_err(format!("{} is not a GPU device", dev.repr())))?
            .clone();
        let e = exe.get().exe.clone();
        let g = py.detach(|| crate::backend::gpu::executable_for(&ctx, &e.key, &e.plan, &e.cpu))?;
        Ok(g.shaders().into_iter().map(|(_, s)| s.to_string()).collect())
    }
    #[cfg(not(feature = "gpu"))]
    {
        let _ = (py, exe, device);
        Ok(vec![])
    }
}

/// Drops compiled GPU executables and pooled device buffers.
#[pyfunction]
pub fn gpu_clear_caches(py: Python<'_>) {
    #[cfg(feature = "gpu")]
    py.detach(crate::backend::gpu::clear_caches);
    #[cfg(not(feature = "gpu"))]
    let _ = py;
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CommittedArray>()?;
    m.add_function(wrap_pyfunction!(put, m)?)?;
    m.add_function(wrap_pyfunction!(is_committed, m)?)?;
    m.add_function(wrap_pyfunction!(block, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_device, m)?)?;
    m.add_function(wrap_pyfunction!(get_default_device, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_devices, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_unavailable_reason, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_info, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_shaders, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_clear_caches, m)?)?;
    m.add("HAS_GPU_BACKEND", cfg!(feature = "gpu"))?;
    Ok(())
}
