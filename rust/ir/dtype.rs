//! Element types and scalar values.
use serde::{Deserialize, Serialize};

/// Element type of an array. Names follow JAX's short forms (`f32`, `i32`, ...) in text and JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum DType {
    #[serde(rename = "bool")]
    Bool,
    #[serde(rename = "i32")]
    I32,
    #[serde(rename = "u32")]
    U32,
    #[serde(rename = "i64")]
    I64,
    #[serde(rename = "f32")]
    F32,
    #[serde(rename = "f64")]
    F64,
}

impl DType {
    /// Bytes per element in a buffer (bool is stored as one byte, 0 or 1).
    pub fn size(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::U32 | DType::I64)
    }
    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
    }
    /// JAX's short name, as printed in jaxprs (`f32`, `i32`, `bool`).
    pub fn short_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }
    pub fn from_short_name(s: &str) -> Option<DType> {
        Some(match s {
            "bool" => DType::Bool,
            "i32" => DType::I32,
            "u32" => DType::U32,
            "i64" => DType::I64,
            "f32" => DType::F32,
            "f64" => DType::F64,
            _ => return None,
        })
    }
}

/// A scalar value of some dtype. Floats are kept as f64 (exact for f32), integers as i64 (u32 fits),
/// bools as bool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl Scalar {
    /// The value converted to `dtype` with the semantics of `convert_element_type` (floats → ints truncate
    /// toward zero and saturate; NaN → 0; ints wrap to the width).
    pub fn cast(self, dtype: DType) -> Scalar {
        let as_f = match self {
            Scalar::Bool(b) => b as i64 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        };
        match dtype {
            DType::Bool => Scalar::Bool(match self {
                Scalar::Bool(b) => b,
                Scalar::Int(i) => i != 0,
                Scalar::Float(f) => f != 0.0,
            }),
            DType::F32 => Scalar::Float(as_f as f32 as f64),
            DType::F64 => Scalar::Float(as_f),
            DType::I32 | DType::U32 | DType::I64 => {
                let i = match self {
                    Scalar::Bool(b) => b as i64,
                    Scalar::Int(i) => i,
                    Scalar::Float(f) => match dtype {
                        DType::I32 => f as i32 as i64,
                        DType::U32 => f as u32 as i64,
                        _ => f as i64,
                    },
                };
                Scalar::Int(match dtype {
                    DType::I32 => i as i32 as i64,
                    DType::U32 => i as u32 as i64,
                    _ => i,
                })
            }
        }
    }
}
