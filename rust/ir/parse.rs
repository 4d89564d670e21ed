//! Reads a program from its JSON wire form (what Python's `cranax._src.lowering` writes). Never panics.
//!
//! Wire format, version 1:
//! ```text
//! {"version": 1, "name": "f",
//!  "invars":  [[id, dtype, [dims...]], ...],
//!  "eqns":    [{"prim": "mul", "params": {...}, "in": [atom, ...], "out": [[id, dtype, [dims]], ...]}, ...],
//!  "outvars": [atom, ...]}
//! atom  := id (integer)  |  {"lit": value, "dtype": dtype}      value: number, bool, "nan", "inf", "-inf"
//! dtype := "bool" | "i32" | "u32" | "i64" | "f32" | "f64"
//! params by primitive (JAX's names):
//!   integer_pow {"y": int}          convert_element_type / bitcast_convert_type {"new_dtype": dtype}
//!   broadcast_in_dim {"shape": [..], "broadcast_dimensions": [..]}   reshape {"new_sizes": [..]}
//!   squeeze {"dimensions": [..]}    expand_dims {"dimensions": [..]}  transpose {"permutation": [..]}
//!   reduce_sum/max/min/prod/and/or {"axes": [..]}   argmax/argmin {"axes": [axis], "index_dtype": dtype}
//!   iota {"dtype": dtype, "shape": [..], "dimension": int}   round {"rounding_method": 0 | 1}
//!   every other primitive: {} (unknown extra params are ignored)
//! ```
use crate::error::Result;
use crate::ir::Program;

pub fn parse_program(_json: &str) -> Result<Program> {
    Err(crate::Error::Parse("parser not written yet".into()))
}
