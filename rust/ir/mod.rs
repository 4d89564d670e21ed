//! The program representation that crosses the Python boundary: a jaxpr with typed variables. The bottom
//! layer: imports only `error` (its tests run whole pipelines).
pub mod dtype;
pub mod program;
pub mod parse;
pub mod verify;
pub mod print;
pub mod shape;
pub mod library;
pub mod linalg;
pub mod control;
#[cfg(test)]
mod fuzz_tests;

pub use dtype::{DType, Scalar};
pub use library::{CallbackKind, ConvParams, FftKind, IndexMode, LibOp, ScatterOp, WindowParams};
pub use linalg::LinalgOp;
pub use program::{Atom, Aval, Eqn, Prim, Program, VarId, ReduceOp, UnaryOp, BinaryOp, CompareOp};
