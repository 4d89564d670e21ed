//! Host callbacks: the dispatcher the CPU library step calls (`backend::cpu::library::callback`). It takes
//! the GIL for the call only, hands the operands to Python's dispatcher as ready `DeviceArray`s, and turns
//! what it returns into buffers. An exception the callback raises is kept here under a token and re-raised,
//! as itself, where the computation's error surfaces (`errors::to_py`).
use std::collections::VecDeque;
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::Aval;
use crate::runtime::pending::Value;

use super::array::DeviceArray;

/// The latest exceptions raised by callbacks, by token (bounded: an error nobody waits for is dropped).
static RAISED: Mutex<VecDeque<(u64, Py<PyAny>)>> = Mutex::new(VecDeque::new());
static NEXT_TOKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
const KEEP: usize = 64;

/// The exception kept under `token`, if it is still kept.
pub fn raised(token: u64) -> Option<PyErr> {
    let kept = RAISED.lock().unwrap_or_else(|e| e.into_inner());
    let (_, exc) = kept.iter().find(|(t, _)| *t == token)?;
    Python::attach(|py| Some(PyErr::from_value(exc.bind(py).clone())))
}

fn keep(py: Python<'_>, err: PyErr) -> Error {
    let msg = err.to_string();
    let token = NEXT_TOKEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut kept = RAISED.lock().unwrap_or_else(|e| e.into_inner());
    kept.push_back((token, err.into_value(py).into_any()));
    while kept.len() > KEEP {
        kept.pop_front();
    }
    Error::Callback { token, msg }
}

/// Calls `dispatch(id, [DeviceArray...], [(shape, dtype)...])`, which returns one array-like (or `DeviceArray`)
/// per result.
fn call(dispatch: &Py<PyAny>, id: u64, inputs: &[&Buffer], outs: &[Aval]) -> Result<Vec<Buffer>> {
    Python::attach(|py| {
        let run = || -> PyResult<Vec<Buffer>> {
            let args = PyList::empty(py);
            for b in inputs {
                args.append(Bound::new(py, DeviceArray::new(Value::Ready((*b).clone())))?)?;
            }
            let avals: Vec<(Vec<usize>, &str)> = outs.iter().map(|a| (a.shape.clone(), a.dtype.short_name())).collect();
            let res = dispatch.bind(py).call1((id, args, avals))?;
            let mut bufs = Vec::with_capacity(outs.len());
            for r in res.try_iter()? {
                let r = r?;
                // A core array is taken as it is (the MPI transport's results, received in place); anything
                // else is copied in through NumPy.
                let buf = match r.cast::<DeviceArray>() {
                    Ok(d) => super::array::wait_value(py, &d.get().value)?,
                    Err(_) => super::array::wait_value(py, &DeviceArray::from_numpy(py, &r)?.value)?,
                };
                bufs.push(buf);
            }
            Ok(bufs)
        };
        run().map_err(|e| keep(py, e))
    })
}

/// Installs Python's callback dispatcher (once per process).
#[pyfunction]
fn _set_host_callback(dispatch: Py<PyAny>) {
    crate::backend::cpu::library::callback::set_host_callback(Box::new(move |id, ins, outs| call(&dispatch, id, ins, outs)));
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_set_host_callback, m)?)
}
