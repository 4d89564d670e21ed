//! Optimization passes, one file each, run as an ordered pipeline, then fusion into a `Plan`.
pub mod kernel;
pub mod dce;
pub mod cse;
pub mod const_fold;
pub mod simplify;
pub mod fusion;

pub use kernel::{KInstr, KOp, Kernel, KernelInput, KernelOutput, OutputKind, Plan, Step};
