//! Prints a program in JAX's jaxpr text form.
use crate::ir::Program;

pub fn print(p: &Program) -> String {
    format!("{p:?}")
}
