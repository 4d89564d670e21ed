//! `DeviceArray`: a handle to a device buffer that may still be pending.
use std::sync::Arc;

use numpy::{Element, PyArray, PyArray1, PyArrayMethods, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use numpy::ndarray::IxDyn;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyModule, PyTuple};

use crate::buffer::Buffer;
use crate::ir::{Aval, DType, Scalar};
use crate::runtime::device::{self, Device};
use crate::runtime::pending::Value;

use super::device::{device_object, PyDevice};

#[pyclass(frozen, subclass, name = "DeviceArray", module = "cranax._core")]
pub struct DeviceArray {
    pub value: Value,
    pub device: Arc<Device>,
}

static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn numpy(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    Ok(NUMPY.get_or_try_init(py, || py.import("numpy").map(|m| m.unbind()))?.bind(py))
}

/// The dtype from a short ("f32") or NumPy ("float32") name.
pub fn parse_dtype(s: &str) -> PyResult<DType> {
    DType::from_short_name(s)
        .or(match s {
            "bool_" => Some(DType::Bool),
            "int8" => Some(DType::I8),
            "uint8" => Some(DType::U8),
            "int16" => Some(DType::I16),
            "uint16" => Some(DType::U16),
            "int32" => Some(DType::I32),
            "uint32" => Some(DType::U32),
            "int64" => Some(DType::I64),
            "float16" => Some(DType::F16),
            "bfloat16" => Some(DType::BF16),
            s if s.starts_with("float8_") => {
                crate::ir::dtype::FLOAT8_FORMATS.iter().find(|f| f.numpy_name == s).map(|f| f.dtype)
            }
            "float32" => Some(DType::F32),
            "float64" => Some(DType::F64),
            _ => None,
        })
        .ok_or_else(|| PyTypeError::new_err(format!("unsupported dtype {s:?} (expected bool, i8, u8, i16, u16, i32, u32, i64, f32 or f64)")))
}

/// How long a wait sleeps (GIL released) between checks for Python signals (Ctrl-C).
pub const SIGNAL_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Waits for a value, releasing the GIL only when it is not ready yet. Waits in slices of `SIGNAL_POLL`,
/// re-taking the GIL between them to run Python's signal handlers, so Ctrl-C raises `KeyboardInterrupt`
/// promptly (the computation itself goes on; the array stays usable).
pub fn wait_value(py: Python<'_>, v: &Value) -> PyResult<Buffer> {
    if let Some(r) = v.try_buffer() {
        return Ok(r?);
    }
    let _wait = crate::runtime::profiler::host_span("wait", || "wait".into());
    loop {
        if let Some(r) = py.detach(|| v.wait_timeout(SIGNAL_POLL)) {
            return Ok(r?);
        }
        py.check_signals()?;
    }
}

/// A transfer span carrying its size.
fn transfer_span(name: &'static str, bytes: usize) -> Option<crate::runtime::profiler::Span> {
    crate::runtime::profiler::host_span("transfer", || name.into()).map(|mut s| {
        s.args.push(("bytes".into(), bytes.to_string()));
        s
    })
}

/// The owner of a zero-copy host view's bytes (`DeviceArray._host_view`, `DeviceArray._empty_host`): the NumPy
/// array's base object, holding the buffer so its storage lives as long as any view of it.
#[pyclass(frozen, name = "HostBytes", module = "cranax._core")]
pub struct HostBytes {
    #[allow(dead_code)] // held for its storage only: NumPy reads the bytes through the view's data pointer
    buf: Buffer,
}

/// A flat uint8 NumPy array over `buf`'s bytes, without a copy; read-only unless `writable`.
fn bytes_view(py: Python<'_>, buf: Buffer, writable: bool) -> PyResult<Bound<'_, PyAny>> {
    let n = Buffer::byte_len(&buf.aval)?.min(buf.storage.len());
    let ptr = buf.as_ptr() as *const u8;
    let owner = Bound::new(py, HostBytes { buf })?;
    // SAFETY: `ptr` is non-null and aligned (a dangling one for 0 bytes) and `n` bytes there stay valid and
    // unmoved while `owner`, the array's base, holds the storage.
    let arr = unsafe {
        let view = numpy::ndarray::ArrayView1::from_shape_ptr(n, ptr);
        PyArray1::<u8>::borrow_from_array(&view, owner.into_any())
    };
    if !writable {
        arr.getattr("flags")?.setattr("writeable", false)?;
    }
    Ok(arr.into_any())
}

fn to_numpy_typed<'py, T: Element>(py: Python<'py>, b: &Buffer) -> Bound<'py, PyAny> {
    // SAFETY: the array is fully written below before it is handed out; sizes agree (same dtype, shape).
    let arr = unsafe { PyArray::<T, IxDyn>::new(py, IxDyn(&b.aval.shape), false) };
    let n = b.storage.len();
    if n > 0 {
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr() as *const u8, arr.data() as *mut u8, n) };
    }
    arr.into_any()
}

/// The cranax dtype of a NumPy dtype; TypeError for one cranax arrays cannot hold.
fn numpy_dtype(descr: &Bound<'_, numpy::PyArrayDescr>) -> PyResult<DType> {
    Ok(match (descr.kind(), descr.itemsize()) {
        (b'b', 1) => DType::Bool,
        (b'i', 1) => DType::I8,
        (b'u', 1) => DType::U8,
        (b'i', 2) => DType::I16,
        (b'u', 2) => DType::U16,
        (b'i', 4) => DType::I32,
        (b'i', 8) => DType::I64,
        (b'u', 4) => DType::U32,
        (b'f', 2) => DType::F16,
        (b'f', 4) => DType::F32,
        (b'f', 8) => DType::F64,
        // ml_dtypes' bfloat16 is a NumPy "void-kind" type of 2 bytes, known by its name
        (b'V', 2) if descr.getattr("name")?.extract::<String>()? == "bfloat16" => DType::BF16,
        // ml_dtypes' float8 types likewise, of 1 byte (float8_e5m2 registers as kind 'f')
        (b'V' | b'f', 1) if parse_dtype(&descr.getattr("name")?.extract::<String>()?).is_ok_and(|d| d.is_float8()) => {
            parse_dtype(&descr.getattr("name")?.extract::<String>()?)?
        }
        _ => {
            return Err(PyTypeError::new_err(format!(
                "unsupported dtype {} (cranax arrays hold bool, int8, uint8, int16, uint16, int32, uint32, int64, float16, bfloat16, the float8 formats, float32 or float64)",
                descr.str()?
            )))
        }
    })
}

impl DeviceArray {
    pub fn new(value: Value) -> DeviceArray {
        DeviceArray { value, device: device::cpu().clone() }
    }
}

#[pymethods]
impl DeviceArray {
    /// Copies a NumPy array (or anything `numpy.asarray` accepts) to the device.
    #[staticmethod]
    pub fn from_numpy(py: Python<'_>, arr: &Bound<'_, PyAny>) -> PyResult<DeviceArray> {
        let np = numpy(py)?;
        let mut obj = arr.clone();
        if obj.cast::<PyUntypedArray>().is_err() {
            obj = np.call_method1("asarray", (obj,))?;
        }
        let a = obj.cast::<PyUntypedArray>()?.clone();
        let descr = a.dtype();
        let dt = numpy_dtype(&descr)?;
        let a = if a.is_c_contiguous() && descr.is_native_byteorder() != Some(false) {
            a
        } else {
            let kw = pyo3::types::PyDict::new(py);
            if dt == DType::BF16 || dt.is_float8() {
                kw.set_item("dtype", descr.clone())?;
            } else {
                kw.set_item("dtype", dt.numpy_name())?;
            }
            np.call_method("ascontiguousarray", (a,), Some(&kw))?.cast_into::<PyUntypedArray>()?
        };
        let aval = Aval::new(dt, a.shape().to_vec());
        let nbytes = aval.numel().and_then(|n| n.checked_mul(dt.size())).unwrap_or(usize::MAX);
        let _t = transfer_span("transfer host_to_device", nbytes);
        let buf = if nbytes == 0 {
            Buffer::alloc(&aval)?
        } else {
            // SAFETY: a C-contiguous array of this dtype and shape holds exactly `nbytes` bytes at `data`.
            let data = unsafe { (*a.as_array_ptr()).data as *const u8 };
            let bytes = unsafe { std::slice::from_raw_parts(data, nbytes) };
            Buffer::from_bytes(&aval, bytes)?
        };
        Ok(DeviceArray::new(Value::Ready(buf)))
    }

    /// A device array that aliases `arr`'s memory, no copy (DLPack import, as JAX aliases aligned CPU
    /// buffers), holding a reference to `arr` so that it (and what it views) stays alive while the array
    /// does. None when it cannot alias: `arr` is not a NumPy array, not C-contiguous, not native-endian,
    /// empty, or its data is not 64-byte aligned (the caller then copies). TypeError for a dtype cranax
    /// arrays cannot hold. cranax never writes into the memory; whoever else holds it may.
    #[staticmethod]
    fn from_numpy_alias(py: Python<'_>, arr: &Bound<'_, PyAny>) -> PyResult<Option<DeviceArray>> {
        let Ok(a) = arr.cast::<PyUntypedArray>() else { return Ok(None) };
        let descr = a.dtype();
        let dt = numpy_dtype(&descr)?;
        if !a.is_c_contiguous() || descr.is_native_byteorder() == Some(false) {
            return Ok(None);
        }
        let aval = Aval::new(dt, a.shape().to_vec());
        let Some(nbytes) = aval.numel().and_then(|n| n.checked_mul(dt.size())) else { return Ok(None) };
        // SAFETY: reading the data pointer of a live NumPy array.
        let data = unsafe { (*a.as_array_ptr()).data as *mut u8 };
        if nbytes == 0 || (data as usize) % crate::buffer::ALIGN != 0 {
            return Ok(None);
        }
        let owner: Box<dyn Send + Sync> = Box::new(arr.clone().unbind());
        // SAFETY: a C-contiguous array of this dtype and shape holds `nbytes` bytes at `data`; the array object
        // is held by `owner` for the storage's lifetime, and NumPy does not move or free the data of an array
        // that is referenced (`resize` refuses).
        let storage = unsafe { crate::buffer::Storage::borrowed(data, nbytes, owner) }?;
        let _ = py;
        Ok(Some(DeviceArray::new(Value::Ready(Buffer { storage: Arc::new(storage), aval }))))
    }

    /// The address of the array's CPU buffer (waits for it; GIL released). Mirrors the use of
    /// ``jax.Array.unsafe_buffer_pointer``: to check aliasing. Raises for an array on another device.
    fn buffer_pointer(&self, py: Python<'_>) -> PyResult<usize> {
        if self.device.kind != device::DeviceKind::Cpu {
            return Err(PyValueError::new_err("buffer_pointer: the array is not on the CPU"));
        }
        Ok(wait_value(py, &self.value)?.as_ptr() as usize)
    }

    /// A 0-d array holding `value` as `dtype` ("bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "f32",
    /// "f64", or the NumPy names).
    #[staticmethod]
    fn from_scalar(value: &Bound<'_, PyAny>, dtype: &str) -> PyResult<DeviceArray> {
        let dt = parse_dtype(dtype)?;
        let s = match dt {
            DType::Bool => Scalar::Bool(value.is_truthy()?),
            DType::I8 => Scalar::Int(value.extract::<i8>()? as i64),
            DType::U8 => Scalar::Int(value.extract::<u8>()? as i64),
            DType::I16 => Scalar::Int(value.extract::<i16>()? as i64),
            DType::U16 => Scalar::Int(value.extract::<u16>()? as i64),
            DType::I32 => Scalar::Int(value.extract::<i32>()? as i64),
            DType::U32 => Scalar::Int(value.extract::<u32>()? as i64),
            DType::I64 => Scalar::Int(value.extract::<i64>()?),
            d if d.is_float() => Scalar::Float(value.extract::<f64>()?),
            _ => return Err(PyTypeError::new_err(format!("cannot make a {} scalar", dt.numpy_name()))),
        };
        let bytes: Vec<u8> = match (dt, s.cast(dt)) {
            (DType::Bool, Scalar::Bool(b)) => vec![b as u8],
            (DType::I8 | DType::U8, Scalar::Int(i)) => vec![i as u8],
            (DType::I16 | DType::U16, Scalar::Int(i)) => (i as u16).to_le_bytes().to_vec(),
            (DType::I32, Scalar::Int(i)) => (i as i32).to_le_bytes().to_vec(),
            (DType::U32, Scalar::Int(i)) => (i as u32).to_le_bytes().to_vec(),
            (DType::I64, Scalar::Int(i)) => i.to_le_bytes().to_vec(),
            (DType::F16, Scalar::Float(f)) => crate::ir::dtype::f64_to_f16_bits(f).to_le_bytes().to_vec(),
            (DType::BF16, Scalar::Float(f)) => crate::ir::dtype::f64_to_bf16_bits(f).to_le_bytes().to_vec(),
            (d, Scalar::Float(f)) if d.is_float8() => vec![d.float8_format().map_or(0, |x| x.from_f64(f))],
            (DType::F32, Scalar::Float(f)) => (f as f32).to_le_bytes().to_vec(),
            (DType::F64, Scalar::Float(f)) => f.to_le_bytes().to_vec(),
            (dt, s) => {
                return Err(PyTypeError::new_err(format!("cannot make a {} scalar from {s:?}", dt.numpy_name())))
            }
        };
        Ok(DeviceArray::new(Value::Ready(Buffer::from_bytes(&Aval::scalar(dt), &bytes)?)))
    }

    /// A fresh, writable NumPy copy. Waits (GIL released); raises the computation's error.
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let b = wait_value(py, &self.value)?;
        let _t = transfer_span("transfer device_to_host", b.storage.len());
        Ok(match b.aval.dtype {
            DType::Bool => to_numpy_typed::<bool>(py, &b),
            DType::I8 => to_numpy_typed::<i8>(py, &b),
            DType::U8 => to_numpy_typed::<u8>(py, &b),
            DType::I16 => to_numpy_typed::<i16>(py, &b),
            DType::U16 => to_numpy_typed::<u16>(py, &b),
            DType::I32 => to_numpy_typed::<i32>(py, &b),
            DType::U32 => to_numpy_typed::<u32>(py, &b),
            DType::I64 => to_numpy_typed::<i64>(py, &b),
            // float16: the bits as uint16, viewed as NumPy's float16
            DType::F16 => to_numpy_typed::<u16>(py, &b).call_method1("view", ("float16",))?,
            // bfloat16: the bits as uint16, viewed as ml_dtypes' bfloat16 (the NumPy type JAX uses)
            DType::BF16 => {
                let bf16 = py.import("ml_dtypes")?.getattr("bfloat16")?;
                to_numpy_typed::<u16>(py, &b).call_method1("view", (bf16,))?
            }
            // float8: the bits as uint8, viewed as ml_dtypes' type of that name
            d @ crate::ir::dtype::float8!() => {
                let t = py.import("ml_dtypes")?.getattr(d.numpy_name())?;
                to_numpy_typed::<u8>(py, &b).call_method1("view", (t,))?
            }
            DType::F32 => to_numpy_typed::<f32>(py, &b),
            DType::F64 => to_numpy_typed::<f64>(py, &b),
        })
    }

    /// A read-only NumPy view of the computed bytes (flat uint8, no copy; `.view(dtype).reshape(shape)` reads
    /// it as the array). Waits (GIL released); raises the computation's error. For the MPI transport, which
    /// sends straight from the buffer; a GPU array's view is of its host copy.
    fn _host_view<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let b = wait_value(py, &self.value)?;
        bytes_view(py, b, false)
    }

    /// `(array, view)`: a new ready CPU array of `dtype` and `shape` with unspecified contents, and a writable
    /// flat uint8 NumPy view of its bytes. The caller fills every byte through the view before it hands the
    /// array to anyone (the MPI transport receives collective results there, saving a copy).
    #[staticmethod]
    fn _empty_host<'py>(py: Python<'py>, dtype: &str, shape: Vec<usize>) -> PyResult<(DeviceArray, Bound<'py, PyAny>)> {
        let buf = Buffer::uninit(&Aval::new(parse_dtype(dtype)?, shape))?;
        let view = bytes_view(py, buf.clone(), true)?;
        Ok((DeviceArray::new(Value::Ready(buf)), view))
    }

    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = copy;
        let a = self.to_numpy(py)?;
        match dtype {
            Some(d) if !d.is_none() => a.call_method1("astype", (d,)),
            _ => Ok(a),
        }
    }

    /// Waits (GIL released) until computed; raises the computation's error.
    fn block_until_ready(&self, py: Python<'_>) -> PyResult<()> {
        wait_value(py, &self.value)?;
        Ok(())
    }

    /// True once computed (or failed).
    fn is_ready(&self) -> bool {
        self.value.is_ready()
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.value.aval().shape)
    }
    #[getter]
    fn dtype(&self) -> &'static str {
        self.value.aval().dtype.short_name()
    }
    #[getter]
    fn ndim(&self) -> usize {
        self.value.aval().shape.len()
    }
    #[getter]
    fn size(&self) -> usize {
        self.value.aval().numel().unwrap_or(usize::MAX)
    }
    #[getter]
    fn nbytes(&self) -> usize {
        let a = self.value.aval();
        a.numel().unwrap_or(usize::MAX).saturating_mul(a.dtype.size())
    }
    #[getter]
    fn device<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDevice>> {
        device_object(py, &self.device)
    }

    /// The same bytes under a new shape (same element count; one dimension may be -1).
    fn reshape_view(&self, shape: Vec<i64>) -> PyResult<DeviceArray> {
        let old = self.value.aval();
        let n = old.numel().unwrap_or(usize::MAX);
        let bad = || {
            PyValueError::new_err(format!("cannot reshape array of shape {:?} (size {n}) into shape {shape:?}", old.shape))
        };
        let mut dims = Vec::with_capacity(shape.len());
        let mut infer = None;
        for (i, &d) in shape.iter().enumerate() {
            if d == -1 && infer.is_none() {
                infer = Some(i);
                dims.push(1usize);
            } else if d < 0 {
                return Err(bad());
            } else {
                dims.push(d as usize);
            }
        }
        let known = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or_else(bad)?;
        if let Some(i) = infer {
            if known == 0 || n % known != 0 {
                return Err(bad());
            }
            dims[i] = n / known;
        } else if known != n {
            return Err(bad());
        }
        let aval = Aval::new(old.dtype, dims);
        Ok(DeviceArray { value: self.value.view(aval), device: self.device.clone() })
    }

    /// A `jax.Ref`'s write: `src` copied into this array's storage, on its device's stream after the work
    /// queued before (`runtime::ref_buffer::write_into`). The result holds this storage; this array must be
    /// the ref's private buffer. On a device other than the CPU the result is `src` (no copy).
    fn _ref_write(&self, src: &Bound<'_, DeviceArray>) -> PyResult<DeviceArray> {
        let value = crate::runtime::ref_buffer::write_into(&self.device, &self.value, &src.get().value)?;
        Ok(DeviceArray { value, device: self.device.clone() })
    }

    /// This array, or a copy of it when its storage is one of `held`'s (this array itself among them):
    /// a value that `_ref_write`s into `held` cannot change (`runtime::ref_buffer::detach`).
    fn _ref_detach(&self, held: Vec<Bound<'_, DeviceArray>>) -> PyResult<DeviceArray> {
        let held: Vec<Value> = held.iter().map(|h| h.get().value.clone()).collect();
        let value = crate::runtime::ref_buffer::detach(&self.device, &self.value, &held)?;
        Ok(DeviceArray { value, device: self.device.clone() })
    }

    fn __repr__(&self) -> String {
        let a = self.value.aval();
        let state = match self.value.try_buffer() {
            None => "pending",
            Some(Ok(_)) => "ready",
            Some(Err(_)) => "failed",
        };
        format!("DeviceArray({}{:?}, {state})", a.dtype.short_name(), a.shape)
    }
}
