//! Backends: code generation for a `Plan`'s kernels.
pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
