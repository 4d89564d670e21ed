//! cranax's core: the IR that crosses from Python (a jaxpr), its verifier and optimizer, the plan the
//! optimizer hands the backends, the Cranelift CPU and WGSL GPU backends, and the runtime (streams,
//! executables, the signature cache).
//!
//! Data flows `ir` (parse + verify) → `opt` (passes, fusion) → `plan` (a `Plan` of `Kernel`s and steps)
//! → `backend` (`cpu`: machine code; `gpu`: shaders) → `runtime` (devices, async streams, caches) → `py`
//! (the only PyO3 code). Imports go one way (tests aside); each module imports only:
//! - `error`: nothing (the error type, and panics turned into errors; every layer uses it);
//! - `ir`: `error`;
//! - `buffer`: `ir`, `error` (host buffers; below the backends, which fill them);
//! - `plan`: `ir` (it is the data type both sides share, so `opt` fills it and backends read it);
//! - `opt`: `ir`, `plan`;
//! - `backend`: `ir`, `plan`, `buffer` (never `opt` or `runtime`; `gpu` may use `cpu`);
//! - `runtime`: everything above;
//! - `py`: everything.
//!
//! `layering_tests` checks these rules.
pub mod error;
pub mod buffer;
pub mod ir;
pub mod plan;
pub mod opt;
pub mod backend;
pub mod runtime;
#[cfg(feature = "python")]
pub mod py;
#[cfg(test)]
mod layering_tests;

pub use error::{Error, Result};
