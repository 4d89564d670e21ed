//! The GPU backend: WGSL compute shaders emitted from the same fused `Plan` the CPU backend compiles, run
//! through wgpu (Vulkan on Linux, Metal on macOS, DX12 on Windows). Built with the `gpu` cargo feature.
//!
//! - `device`: instance/adapter/device/queue made once per process; pipeline cache; buffer pool.
//! - `buffer`: device buffers, values (buffer + aval + the submission writing it), transfers.
//! - `wgsl`: one `Kernel` → one compute shader (elementwise, reductions, index math).
//! - `dot`: `dot_general` shaders (tiled for small products, register-blocked 128×128 for large ones).
//! - `conv`: `conv_general_dilated` as an implicit GEMM through `dot`'s product shaders.
//! - `math`: WGSL helpers (XLA integer semantics, the float32 math library).
//! - `control`: cond/while/scan steps running their sub-plans on the device.
//! - `loop_kernel`: a while loop whose cond and body fit in one kernel, as one shader (no read backs).
//! - `exec`: a plan compiled for one device, and running it (one submission per call).
//!
//! ## Trusted built-ins
//! Results must not depend on the driver or the host CPU (llvmpipe compiles shaders for the host: its float64
//! `round` truncates on x86 without AVX-512). The WGSL spec ("Floating Point Evaluation", "Floating Point
//! Accuracy") makes float built-ins exact only for finite normal f32/f16 values: any built-in may flush
//! subnormal inputs and outputs to zero, runtime NaN and infinities give indeterminate values (the Finite
//! Math Assumption), "correctly rounded" allows either neighbour, an inexact int → float conversion may
//! round either way, and float64 is not in WGSL at all (a naga extension with no accuracy promised). So:
//! - trusted: integer arithmetic and bit operations (`countLeadingZeros`, `countOneBits`), `select`,
//!   `bitcast`, float `+ - *` (correctly rounded; bit-exact wherever the hardware rounds to nearest even, as
//!   GPUs do, and does not flush subnormals), and conversions whose value is representable in the target
//!   (f16 → f32, an integer of at most 24/53 bits).
//! - exact on the bits, for every input (`math`, written once for f32 and f64): `floor`, `ceil`, `round`
//!   (both methods), `sign`, `neg`, `abs`, `is_finite`, `nextafter`, `rem`, `max`/`min`/`clamp` (NaN
//!   propagates, -0 < +0), comparisons (NaN unordered, -0 == +0), float → int (saturating, NaN → 0),
//!   int → float (nearest even), f32 ↔ f64, f32 → f16. float16 arithmetic is float32's, rounded once to
//!   float16; argmax/argmin compare as `compare` does.
//! - approximate, held to ulp bounds vs the CPU backend by tests/test_gpu_ops.py: `/` and `sqrt` (the
//!   driver's), the float32 math library in `math`, `pow` (the driver's exp2/log2).
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use crate::backend::cpu::CpuExecutable;
use crate::error::Result;
use crate::plan::Plan;

pub mod buffer;
pub mod control;
pub mod conv;
pub mod device;
pub mod dot;
pub mod exec;
pub mod loop_kernel;
pub mod math;
pub mod wgsl;
#[cfg(test)]
mod tests;

pub use buffer::{GpuBuffer, GpuValue};
pub use device::{contexts, discovery_note, GpuContext};
pub use exec::GpuExecutable;

/// Compiled executables per (device index, canonical program key).
static EXECUTABLES: LazyLock<Mutex<HashMap<(usize, String), Arc<GpuExecutable>>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The executable for GPU `ctx` of `plan` (whose CPU compilation is `cpu`; `key` is its canonical program
/// key, the runtime executable's `key`), compiled once per (device, key).
pub fn executable_for(ctx: &Arc<GpuContext>, key: &str, plan: &Plan, cpu: &Arc<CpuExecutable>) -> Result<Arc<GpuExecutable>> {
    let key = (ctx.index, key.to_string());
    if let Some(g) = EXECUTABLES.lock().get(&key) {
        return Ok(g.clone());
    }
    let g = Arc::new(exec::compile(ctx, plan, cpu.clone())?);
    EXECUTABLES.lock().entry(key).or_insert(g.clone());
    Ok(g)
}

/// Drops every compiled GPU executable and pooled device buffer.
pub fn clear_caches() {
    EXECUTABLES.lock().clear();
    for c in contexts_if_started() {
        c.trim_pool();
    }
}

/// The contexts if discovery already ran (never starts it).
pub fn contexts_if_started() -> &'static [Arc<GpuContext>] {
    device::contexts_if_started()
}
