//! Bindings for `jax.profiler` (trace events) and the persistent compilation cache's settings.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::runtime::{persistent, profiler};

/// Starts recording trace events; False when a trace is already on.
#[pyfunction]
fn profiler_start() -> bool {
    profiler::start()
}

/// Stops recording; the events as `(name, cat, track, tid, thread, start_ns, dur_ns, args)` tuples (args a
/// list of `(key, value)` strings), or None when no trace was on.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn profiler_stop(py: Python<'_>) -> Option<Vec<(String, &'static str, String, u64, String, u64, u64, Vec<(String, String)>)>> {
    let ev = py.detach(profiler::stop)?;
    Some(ev.into_iter().map(|e| (e.name, e.cat, e.track, e.tid, e.thread, e.start_ns, e.dur_ns, e.args)).collect())
}

/// Names the calling thread's track in traces.
#[pyfunction]
fn profiler_name_thread(name: &str) {
    profiler::name_thread(name);
}

#[pyfunction]
fn profiler_enabled() -> bool {
    profiler::enabled()
}

/// Nanoseconds since the profiler's epoch (the clock of every event).
#[pyfunction]
fn profiler_now_ns() -> u64 {
    profiler::now_ns()
}

/// Records a span made by the calling thread (ignored when no trace is on). `cat` is one of "annotation",
/// "step", "trace".
#[pyfunction]
#[pyo3(signature = (cat, name, start_ns, dur_ns, args=Vec::new()))]
fn profiler_record(cat: &str, name: String, start_ns: u64, dur_ns: u64, args: Vec<(String, String)>) -> PyResult<()> {
    let cat: &'static str = match cat {
        "annotation" => "annotation",
        "step" => "step",
        "trace" => "trace",
        _ => return Err(PyValueError::new_err(format!("profiler_record: unknown category {cat:?}"))),
    };
    profiler::record(cat, name, "host".into(), start_ns, dur_ns, args);
    Ok(())
}

/// Configures the persistent compilation cache: `dir` None turns it off. Raises OSError when `dir` cannot
/// be created.
#[pyfunction]
#[pyo3(signature = (dir, min_compile_time_secs, min_entry_size_bytes, build_id))]
fn set_persistent_cache(py: Python<'_>, dir: Option<String>, min_compile_time_secs: f64, min_entry_size_bytes: i64, build_id: String) -> PyResult<()> {
    let dir = dir.map(std::path::PathBuf::from);
    if let Some(d) = &dir {
        py.detach(|| persistent::check_dir(d)).map_err(pyo3::exceptions::PyOSError::new_err)?;
    }
    persistent::configure(persistent::Settings { dir, min_compile_secs: min_compile_time_secs, min_entry_bytes: min_entry_size_bytes, build_id });
    Ok(())
}

/// The persistent cache's counters: hits, misses, rejected, writes, errors, and last_error (text).
#[pyfunction]
fn persistent_cache_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let st = persistent::stats();
    let d = PyDict::new(py);
    for (k, v) in ["hits", "misses", "rejected", "writes", "errors"].into_iter().zip(st.counts()) {
        d.set_item(k, v)?;
    }
    d.set_item("last_error", st.last_error())?;
    Ok(d)
}

#[pyfunction]
fn reset_persistent_cache_stats() {
    persistent::stats().reset();
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(profiler_start, m)?)?;
    m.add_function(wrap_pyfunction!(profiler_stop, m)?)?;
    m.add_function(wrap_pyfunction!(profiler_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(profiler_name_thread, m)?)?;
    m.add_function(wrap_pyfunction!(profiler_now_ns, m)?)?;
    m.add_function(wrap_pyfunction!(profiler_record, m)?)?;
    m.add_function(wrap_pyfunction!(set_persistent_cache, m)?)?;
    m.add_function(wrap_pyfunction!(persistent_cache_stats, m)?)?;
    m.add_function(wrap_pyfunction!(reset_persistent_cache_stats, m)?)?;
    Ok(())
}
