//! cranax's core: the IR that crosses from Python (a jaxpr), its verifier and optimizer, the Cranelift CPU
//! backend, and the runtime (buffers, streams, executables, the signature cache).
//!
//! Data flows `ir` (parse + verify) → `opt` (passes, fusion into a `Plan` of `Kernel`s) → `backend::cpu`
//! (machine code) → `runtime` (buffers, async streams). `py` is the only PyO3 code.

pub mod error;
pub mod ir;
pub mod opt;
pub mod backend;
pub mod runtime;
#[cfg(feature = "python")]
pub mod py;

pub use error::{Error, Result};
