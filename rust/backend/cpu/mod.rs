//! The Cranelift CPU backend: compiles a `Plan`'s kernels to machine code and runs plans on buffers.
use std::sync::Arc;

use crate::error::Result;
use crate::opt::Plan;
use crate::runtime::buffer::Buffer;

/// A compiled plan: one JIT module owning every kernel's machine code.
pub struct CpuExecutable {
    pub plan: Plan,
}

pub fn compile(plan: &Plan) -> Result<Arc<CpuExecutable>> {
    Ok(Arc::new(CpuExecutable { plan: plan.clone() }))
}

impl CpuExecutable {
    /// Runs the plan on input buffers (one per program input), returns the output buffers.
    pub fn run(&self, _inputs: &[Buffer]) -> Result<Vec<Buffer>> {
        Err(crate::Error::Unsupported("cpu backend not written yet".into()))
    }
    /// Human-readable text of the compiled kernels.
    pub fn as_text(&self) -> String {
        format!("{:?}", self.plan)
    }
}
