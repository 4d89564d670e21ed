//! Testing hooks for control flow: counters of the work `cond`/`while`/`scan` steps did.
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_control_stats, m)?)?;
    m.add_function(wrap_pyfunction!(_direct_loop_calls, m)?)
}
