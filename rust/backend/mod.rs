//! Backends: code generation for a `plan::Plan`'s kernels, and running plans. They consume plans (`plan`)
//! and buffers (`buffer`); they import neither `opt` nor `runtime` (outside tests).
pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
