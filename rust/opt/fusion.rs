//! Groups elementwise chains and their trailing reductions into loop kernels; produces the `Plan`.
use crate::error::Result;
use crate::ir::Program;
use super::Plan;

pub fn lower_to_plan(_p: &Program) -> Result<Plan> {
    Err(crate::Error::Unsupported("fusion not written yet".into()))
}
