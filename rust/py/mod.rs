//! The PyO3 bindings: the only code that touches Python. Errors map to exceptions here, once.
use pyo3::prelude::*;

#[pymodule]
fn _core(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
