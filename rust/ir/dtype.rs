//! Element types and scalar values.
use serde::{Deserialize, Serialize};

/// Element type of an array. Names follow JAX's short forms (`f32`, `i32`, ...) in text and JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum DType {
    #[serde(rename = "bool")]
    Bool,
    #[serde(rename = "i8")]
    I8,
    #[serde(rename = "u8")]
    U8,
    #[serde(rename = "i16")]
    I16,
    #[serde(rename = "u16")]
    U16,
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
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
    pub fn is_int(self) -> bool {
        matches!(self, DType::I8 | DType::U8 | DType::I16 | DType::U16 | DType::I32 | DType::U32 | DType::I64)
    }
    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32)
    }
    /// The 8- and 16-bit integer types (held in Cranelift as `i8`/`i16`; the CPU backend never vectorizes
    /// them).
    pub fn is_narrow_int(self) -> bool {
        matches!(self, DType::I8 | DType::U8 | DType::I16 | DType::U16)
    }
    /// The integer range `(min, max)` of an integer dtype (`None` for bool and floats).
    pub fn int_range(self) -> Option<(i64, i64)> {
        Some(match self {
            DType::I8 => (i8::MIN as i64, i8::MAX as i64),
            DType::U8 => (0, u8::MAX as i64),
            DType::I16 => (i16::MIN as i64, i16::MAX as i64),
            DType::U16 => (0, u16::MAX as i64),
            DType::I32 => (i32::MIN as i64, i32::MAX as i64),
            DType::U32 => (0, u32::MAX as i64),
            DType::I64 => (i64::MIN, i64::MAX),
            _ => return None,
        })
    }
    /// `i` wrapped to the width of integer dtype `self` (two's complement; unchanged for i64 and non-ints).
    pub fn wrap_int(self, i: i64) -> i64 {
        match self {
            DType::I8 => i as i8 as i64,
            DType::U8 => i as u8 as i64,
            DType::I16 => i as i16 as i64,
            DType::U16 => i as u16 as i64,
            DType::I32 => i as i32 as i64,
            DType::U32 => i as u32 as i64,
            _ => i,
        }
    }
    /// NumPy's name (`float32`, `uint8`, `bool`).
    pub fn numpy_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::U8 => "uint8",
            DType::I16 => "int16",
            DType::U16 => "uint16",
            DType::I32 => "int32",
            DType::U32 => "uint32",
            DType::I64 => "int64",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }
    /// JAX's short name, as printed in jaxprs (`f32`, `i32`, `bool`).
    pub fn short_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
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
            "i8" => DType::I8,
            "u8" => DType::U8,
            "i16" => DType::I16,
            "u16" => DType::U16,
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
            DType::I8 | DType::U8 | DType::I16 | DType::U16 | DType::I32 | DType::U32 | DType::I64 => {
                let i = match self {
                    Scalar::Bool(b) => b as i64,
                    Scalar::Int(i) => i,
                    // Rust's float → int `as` saturates and maps NaN to 0, like XLA's convert.
                    Scalar::Float(f) => match dtype {
                        DType::I8 => f as i8 as i64,
                        DType::U8 => f as u8 as i64,
                        DType::I16 => f as i16 as i64,
                        DType::U16 => f as u16 as i64,
                        DType::I32 => f as i32 as i64,
                        DType::U32 => f as u32 as i64,
                        _ => f as i64,
                    },
                };
                Scalar::Int(dtype.wrap_int(i))
            }
        }
    }
}
