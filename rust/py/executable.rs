//! `Executable` (a compiled program) and the module functions around compilation and the caches.
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::error::run_catching;
use crate::runtime::cache;
use crate::runtime::executable::Executable;

#[pyclass(frozen, name = "Executable", module = "cranax._core")]
pub struct PyExecutable {
    pub exe: Arc<Executable>,
}

#[pymethods]
impl PyExecutable {
    /// Runs on a list of DeviceArrays (ready or pending); returns the outputs at once (ready when run inline,
    /// pending when queued). Wrong argument count/avals raise TypeError now; execution errors surface at
    /// the wait.
    /// `alias`: `(input, output)` pairs whose output may be written straight into the input's buffer (a
    /// `jax.Ref`'s write: the caller guarantees nothing else reads that buffer afterwards;
    /// `Executable::execute_aliased`). `donate`: the same for donated arguments (`jit(donate_argnums=)`,
    /// the caller deletes them), taken only where the argument's DeviceArray is its storage's one holder.
    #[pyo3(signature = (args, alias=None, donate=None))]
    fn execute<'py>(
        &self, py: Python<'py>, args: &Bound<'py, PyAny>, alias: Option<Vec<(usize, usize)>>, donate: Option<Vec<(usize, usize)>>,
    ) -> PyResult<Bound<'py, PyList>> {
        // Placement (which device runs it, transfers, committed-device errors) lives in `placement`.
        super::placement::execute(py, &self.exe, args, alias.unwrap_or_default(), donate.unwrap_or_default())
    }

    /// The optimized program (jaxpr text) followed by the plan's kernels.
    fn as_text(&self) -> String {
        self.exe.as_text()
    }
    /// The optimized program alone, in jaxpr text form.
    fn jaxpr_text(&self) -> String {
        self.exe.program_text.clone()
    }
    #[getter]
    fn name(&self) -> String {
        self.exe.name.clone()
    }
    #[getter]
    fn num_outputs(&self) -> usize {
        self.exe.num_outputs()
    }
    #[getter]
    fn out_avals<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyTuple>, &'static str)>> {
        self.exe.out_avals.iter().map(|a| Ok((PyTuple::new(py, &a.shape)?, a.dtype.short_name()))).collect()
    }
    #[getter]
    fn in_avals<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyTuple>, &'static str)>> {
        self.exe.in_avals.iter().map(|a| Ok((PyTuple::new(py, &a.shape)?, a.dtype.short_name()))).collect()
    }
    /// Bytes of the buffers the plan's top-level steps write that are neither views nor program outputs
    /// (its temporaries; what `Compiled.memory_analysis()` reports as `temp_size_in_bytes`).
    #[getter]
    fn temp_bytes(&self) -> usize {
        use crate::plan::{step_io, Step};
        let plan = &self.exe.plan;
        let mut total = 0usize;
        for st in &plan.steps {
            if matches!(st, Step::View { .. }) {
                continue;
            }
            for s in step_io(st).1 {
                if !plan.outputs.contains(&s) {
                    let a = &plan.slots[s];
                    total = total.saturating_add(a.numel().unwrap_or(0).saturating_mul(a.dtype.size()));
                }
            }
        }
        total
    }
    fn __repr__(&self) -> String {
        format!("Executable({}, {} inputs, {} outputs)", self.exe.name, self.exe.in_avals.len(), self.exe.num_outputs())
    }
}

/// Parses, verifies, optimizes and compiles a program (GIL released); a second-level cache hit returns the
/// cached executable.
#[pyfunction]
pub fn compile(py: Python<'_>, program_json: &str) -> PyResult<PyExecutable> {
    let exe = py.detach(|| run_catching("compile", || cache::global().compile_json(program_json)))?;
    Ok(PyExecutable { exe })
}

/// Parses and verifies a program; raises on a malformed one.
#[pyfunction]
pub fn verify(py: Python<'_>, program_json: &str) -> PyResult<()> {
    py.detach(|| {
        run_catching("verify", || {
            let p = crate::ir::parse::parse_program(program_json)?;
            crate::ir::verify::verify(&p)
        })
    })?;
    Ok(())
}

/// Real backend compilations so far in this process.
#[pyfunction]
pub fn compile_count() -> u64 {
    cache::global().compile_count()
}

#[pyfunction]
pub fn executable_cache_size() -> usize {
    cache::global().len()
}

/// Empties the second-level executable cache.
#[pyfunction]
pub fn clear_caches(py: Python<'_>) {
    py.detach(|| {
        cache::global().clear();
        crate::buffer::trim_pool();
        #[cfg(feature = "gpu")]
        crate::backend::gpu::clear_caches();
    });
}

/// Bounds the bytes of freed buffers kept for reuse (0 disables the pool).
#[pyfunction]
pub fn set_buffer_pool_max_bytes(py: Python<'_>, n: usize) {
    py.detach(|| crate::buffer::set_pool_max_bytes(n));
}

/// Bytes of freed buffers currently kept for reuse.
#[pyfunction]
pub fn buffer_pool_bytes() -> usize {
    crate::buffer::pool_bytes()
}

#[pyfunction]
pub fn set_cache_max_size(py: Python<'_>, n: usize) {
    py.detach(|| cache::global().set_max_size(n));
}

#[pyfunction]
pub fn cache_max_size() -> usize {
    cache::global().max_size()
}
