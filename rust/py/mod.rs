//! The PyO3 bindings: the only code that touches Python. Errors map to exceptions in `errors`, once.
use pyo3::prelude::*;

pub mod array;
pub mod callback;
pub mod control;
pub mod device;
pub mod errors;
pub mod executable;
pub mod jit_cache;
pub mod placement;
pub mod profiler;
pub mod stack_chunks;

use device::{device_objects, PyDevice};

/// Every device of this process (the CPU first).
#[pyfunction]
fn devices(py: Python<'_>) -> PyResult<Vec<Py<PyDevice>>> {
    Ok(device_objects(py)?.iter().map(|d| d.clone_ref(py)).collect())
}

/// Sets this process's index in a multi-process run (`cranax.distributed.initialize`): CPU device ids
/// become `index << 17 | local id`, as JAX numbers them.
#[pyfunction]
fn set_process_index(index: u32) {
    crate::runtime::device::set_process_index(index);
}

/// Testing hook: queues a job that sleeps `ms` milliseconds on the CPU stream (makes the queue busy).
#[pyfunction]
fn _stream_sleep(ms: u64) {
    crate::runtime::device::cpu().stream.enqueue(Box::new(move || std::thread::sleep(std::time::Duration::from_millis(ms))));
}

/// Testing hook: a computation queued on the CPU stream that fails with `message` (as an error, or by
/// panicking when `panic`), after `delay_ms`. Returns its pending f32[] output.
#[pyfunction]
#[pyo3(signature = (message, panic=false, delay_ms=0))]
fn _queued_failure(message: String, panic: bool, delay_ms: u64) -> array::DeviceArray {
    use crate::ir::{Aval, DType};
    let outs = crate::runtime::device::cpu().stream.submit(vec![], &[Aval::scalar(DType::F32)], false, move |_| {
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        if panic {
            panic!("{message}");
        }
        Err(crate::Error::Execution(message))
    });
    array::DeviceArray::new(outs.into_iter().next().expect("one output"))
}

/// What `CRANAX_CPU_BLOCK_MATH` chose for the libraries at import: `masking` (`NotRequested`, `NotNeeded`,
/// `Masked`, `Unavailable`, `TooLate`), the lanes of faer's kernels (`faer`) and of the matrix products
/// (`gemm`): "avx512", "avx2" or "scalar".
#[pyfunction]
fn _simd_levels() -> std::collections::HashMap<&'static str, String> {
    use crate::backend::cpu::host_simd;
    let (faer, gemm) = host_simd::library_levels();
    [("masking", format!("{:?}", host_simd::state())), ("faer", faer.into()), ("gemm", gemm.into())].into_iter().collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // First, before anything detects CPU features: avx2 mode hides AVX-512 from the libraries too.
    crate::backend::cpu::host_simd::init();
    // GPU loops are driven from the calling thread: let them ask Python whether Ctrl-C was pressed (runs the
    // signal handlers on the main thread; the KeyboardInterrupt is re-raised from `Error::Interrupted`).
    #[cfg(feature = "gpu")]
    crate::backend::gpu::control::set_interrupt_check(|| Python::attach(|py| py.check_signals().is_err()));
    m.add_class::<array::DeviceArray>()?;
    m.add_class::<executable::PyExecutable>()?;
    m.add_class::<device::PyDevice>()?;
    m.add_class::<jit_cache::JitCache>()?;
    m.add_function(wrap_pyfunction!(executable::compile, m)?)?;
    m.add_function(wrap_pyfunction!(executable::verify, m)?)?;
    m.add_function(wrap_pyfunction!(executable::compile_count, m)?)?;
    m.add_function(wrap_pyfunction!(executable::executable_cache_size, m)?)?;
    m.add_function(wrap_pyfunction!(executable::clear_caches, m)?)?;
    m.add_function(wrap_pyfunction!(executable::set_cache_max_size, m)?)?;
    m.add_function(wrap_pyfunction!(executable::cache_max_size, m)?)?;
    m.add_function(wrap_pyfunction!(executable::set_buffer_pool_max_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(executable::buffer_pool_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(set_process_index, m)?)?;
    control::register(m)?;
    callback::register(m)?;
    m.add_function(wrap_pyfunction!(_stream_sleep, m)?)?;
    m.add_function(wrap_pyfunction!(_simd_levels, m)?)?;
    m.add_function(wrap_pyfunction!(_queued_failure, m)?)?;
    placement::register(m)?;
    profiler::register(m)?;
    stack_chunks::register(m)?;
    m.add("INLINE_MAX_WORK", crate::runtime::stream::INLINE_MAX_WORK)?;
    Ok(())
}
