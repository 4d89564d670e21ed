//! All-scalar loops compiled into one Cranelift function (filled in below).
use crate::error::Result;
use crate::ir::Aval;
use crate::opt::control_flow::ControlStep;
use crate::runtime::buffer::Buffer;

pub struct FusedLoop {}

impl FusedLoop {
    pub fn run(&self, _ins: &[Buffer], _outs: &[Aval]) -> Result<Vec<Buffer>> {
        Err(crate::error::Error::Unsupported("fused loops".into()))
    }
}

pub fn compile(_c: &ControlStep) -> Result<Option<FusedLoop>> {
    Ok(None)
}
