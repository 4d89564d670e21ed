//! Testing hooks: counters of the work `cond`/`while`/`scan` steps did, and of a `jax.Ref`'s copies.
use pyo3::prelude::*;

/// `(sub-plan runs, fused-loop calls, [runs of branch 0..7])` since the process started.
#[pyfunction]
fn _control_stats() -> (u64, u64, Vec<u64>) {
    use std::sync::atomic::Ordering::Relaxed;
    use crate::backend::cpu::counters::{BRANCH_RUNS, FUSED_LOOP_CALLS, SUBPLAN_RUNS};
    (SUBPLAN_RUNS.load(Relaxed), FUSED_LOOP_CALLS.load(Relaxed), BRANCH_RUNS.iter().map(|c| c.load(Relaxed)).collect())
}

/// Loop runs whose body ran in place (`backend::cpu::loop_body`) since the process started.
#[pyfunction]
fn _direct_loop_calls() -> u64 {
    crate::backend::cpu::counters::DIRECT_LOOP_CALLS.load(std::sync::atomic::Ordering::Relaxed)
}

/// `(values copied into a ref's buffer, values copied off one, kernel outputs written straight into an
/// input's buffer)` since the process started (`runtime::ref_buffer`, `backend::cpu::exec::run_into`).
#[pyfunction]
fn _ref_copies() -> (u64, u64, u64) {
    use std::sync::atomic::Ordering::Relaxed;
    use crate::runtime::ref_buffer::{DETACH_COPIES, WRITE_COPIES};
    (WRITE_COPIES.load(Relaxed), DETACH_COPIES.load(Relaxed), crate::backend::cpu::counters::ALIASED_OUTPUTS.load(Relaxed))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_control_stats, m)?)?;
    m.add_function(wrap_pyfunction!(_ref_copies, m)?)?;
    m.add_function(wrap_pyfunction!(_direct_loop_calls, m)?)
}
