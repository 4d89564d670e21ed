//! Every error the core can raise, declared once, and the one way a panic becomes one. `py` maps each
//! variant to one Python exception class. A leaf: every layer (backends included) may use it.
use std::panic::{catch_unwind, AssertUnwindSafe};

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// The program text could not be read (bad JSON, unknown primitive, bad params). Maps to ValueError.
    #[error("cannot read program: {0}")]
    Parse(String),
    /// A well-formed program that breaks a typing rule. `eqn` is the index of the offending equation.
    /// Maps to TypeError.
    #[error("invalid program at equation {eqn} ({prim}): {msg}")]
    Verify { eqn: usize, prim: String, msg: String },
    /// The backend cannot lower something (unsupported dtype/primitive on this device). Maps to NotImplementedError.
    #[error("cannot compile: {0}")]
    Unsupported(String),
    /// Cranelift or the JIT module failed. Maps to RuntimeError.
    #[error("code generation failed: {0}")]
    Codegen(String),
    /// Wrong arguments at call time (count, shape, dtype). Maps to TypeError.
    #[error("bad arguments: {0}")]
    Arguments(String),
    /// An allocation that cannot be made. Maps to MemoryError.
    #[error("cannot allocate {bytes} bytes: {what}")]
    Memory { bytes: u128, what: String },
    /// A failure inside a queued computation, raised at the wait. Maps to RuntimeError.
    #[error("execution failed: {0}")]
    Execution(String),
    /// Ctrl-C arrived while the core drove a long computation from the calling thread (a GPU loop). Maps to
    /// KeyboardInterrupt.
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// A host callback raised: `token` names the exception the embedder kept, re-raised as itself (the
    /// Python bindings keep the Python exception; `msg` is its text).
    #[error("host callback failed: {msg}")]
    Callback { token: u64, msg: String },
}

pub type Result<T> = std::result::Result<T, Error>;

/// Turns a panic payload into an error message.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs `f`, turning a panic into `Error::Execution`.
#[inline]
pub fn run_catching<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(Error::Execution(format!("internal error (panic) in {what}: {}", panic_message(&*p)))),
    }
}
