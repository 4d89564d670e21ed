//! Every error the core can raise, declared once. `py` maps each variant to one Python exception class.
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
}

pub type Result<T> = std::result::Result<T, Error>;
