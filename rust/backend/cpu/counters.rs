//! Counters of control-flow work (read by tests through `_core`), bumped by `control`, `scalar_loop` and
//! `loop_body` (a leaf).
use std::sync::atomic::AtomicU64;

/// Counters of control-flow work since the process started (read by tests through `_core`): sub-plan
/// runs (branches taken, loop iterations run step by step) and fused scalar-loop calls.
pub static SUBPLAN_RUNS: AtomicU64 = AtomicU64::new(0);
pub static FUSED_LOOP_CALLS: AtomicU64 = AtomicU64::new(0);
/// Loop runs that ran their body in place (`loop_body`).
pub static DIRECT_LOOP_CALLS: AtomicU64 = AtomicU64::new(0);
/// Of those, scans whose big elementwise kernel ran strip by strip (`loop_body::StripKernel`).
pub static STRIP_LOOP_CALLS: AtomicU64 = AtomicU64::new(0);

/// Kernel outputs written straight into an input's buffer (`exec::run_into`: a `jax.Ref`'s write).
pub static ALIASED_OUTPUTS: AtomicU64 = AtomicU64::new(0);

/// Per-branch run counts: `BRANCH_RUNS[min(i, 7)]` counts runs of branch `i` of any cond.
pub static BRANCH_RUNS: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];
