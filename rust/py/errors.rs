//! The one place core errors become Python exceptions (panics become `Error::Execution` first, through
//! `crate::error::run_catching`, and so `RuntimeError`).
use pyo3::exceptions::{
    PyKeyboardInterrupt, PyMemoryError, PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::PyErr;

use crate::error::Error;

/// Parse → ValueError, Verify → TypeError, Unsupported → NotImplementedError, Codegen → RuntimeError,
/// Arguments → TypeError, Memory → MemoryError, Execution → RuntimeError, Interrupted → KeyboardInterrupt,
/// Callback → the exception the host callback raised (its own class).
/// Messages carry the Rust text.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Parse(_) => PyValueError::new_err(msg),
        Error::Verify { .. } => PyTypeError::new_err(msg),
        Error::Unsupported(_) => PyNotImplementedError::new_err(msg),
        Error::Codegen(_) => PyRuntimeError::new_err(msg),
        Error::Arguments(_) => PyTypeError::new_err(msg),
        Error::Memory { .. } => PyMemoryError::new_err(msg),
        Error::Execution(_) => PyRuntimeError::new_err(msg),
        Error::Interrupted(_) => PyKeyboardInterrupt::new_err(msg),
        Error::Callback { token, .. } => super::callback::raised(token).unwrap_or_else(|| PyRuntimeError::new_err(msg)),
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        to_py(e)
    }
}
