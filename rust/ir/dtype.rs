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
    #[serde(rename = "f16")]
    F16,
    /// bfloat16 (8 exponent bits, 7 mantissa bits), computed like float16: in f32, rounded per operation.
    #[serde(rename = "bf16")]
    BF16,
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
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
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
    /// The 16-bit floats (float16, bfloat16): stored in 2 bytes, computed in f32 (`opt::f16`).
    pub fn is_half(self) -> bool {
        matches!(self, DType::F16 | DType::BF16)
    }
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
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
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
            DType::F16 => "f16",
            DType::BF16 => "bf16",
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
            "f16" => DType::F16,
            "bf16" => DType::BF16,
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
            DType::F16 => Scalar::Float(round_to_f16(as_f)),
            DType::BF16 => Scalar::Float(round_to_bf16(as_f)),
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

/// The IEEE binary16 bits nearest to `x` (round to nearest, ties to even; magnitudes from 65520 up become
/// infinity; NaN becomes the quiet NaN 0x7e00 with `x`'s sign). A single rounding from f64.
pub fn f64_to_f16_bits(x: f64) -> u16 {
    let sign = ((x.to_bits() >> 48) & 0x8000) as u16;
    let a = x.abs();
    if a.is_nan() {
        return sign | 0x7e00;
    }
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 6.103515625e-5 {
        // Subnormal (or zero): multiples of 2^-24; 1024 * 2^-24 rounds up to the smallest normal.
        let m = (a * 16777216.0).round_ties_even();
        return sign | m as u16;
    }
    // Normal: a = 2^e * q / 1024 with q in [1024, 2048); scaling by a power of two is exact.
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let q = (a * 2f64.powi(10 - e)).round_ties_even() as u32;
    // q == 2048 carries into the exponent, as it should.
    sign | ((((e + 15) as u32) << 10) + (q - 1024)) as u16
}

/// `f64_to_f16_bits` for an f32 (exact widening first, so one rounding).
pub fn f32_to_f16_bits(x: f32) -> u16 {
    f64_to_f16_bits(x as f64)
}

/// The value of binary16 bits `h` as an f32 (exact: subnormals, infinities and NaN payloads kept).
pub fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let e = ((h >> 10) & 0x1f) as u32;
    let m = (h & 0x3ff) as u32;
    let mag = match e {
        0 => (m as f32 * 5.960_464_5e-8).to_bits(), // m * 2^-24, exact
        31 => 0x7f80_0000 | (m << 13),
        _ => ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(sign | mag)
}

/// `x` rounded to the nearest float16 value (as an f64).
pub fn round_to_f16(x: f64) -> f64 {
    f16_bits_to_f32(f64_to_f16_bits(x)) as f64
}

/// The bfloat16 bits nearest to `x` (round to nearest, ties to even, one rounding from f64; overflow to
/// infinity; NaN becomes the quiet NaN 0x7fc0 with `x`'s sign), as ml_dtypes rounds.
pub fn f64_to_bf16_bits(x: f64) -> u16 {
    let sign = ((x.to_bits() >> 48) & 0x8000) as u16;
    if x.is_nan() {
        return sign | 0x7fc0;
    }
    f32_to_bf16_bits(f64_to_f32_odd(x))
}

/// `x` rounded to f32 with round-to-odd (an inexact result gets its last bit set), so that a later rounding
/// to a narrower format is the single correct rounding of `x`.
pub fn f64_to_f32_odd(x: f64) -> f32 {
    let f = x as f32;
    if f.is_infinite() || f.is_nan() || (f as f64) == x {
        return f;
    }
    // `as` rounds to nearest; step toward zero when it rounded away, then make the last bit odd.
    let mut b = f.to_bits();
    if (f as f64).abs() > x.abs() {
        b -= 1;
    }
    f32::from_bits(b | 1)
}

/// The bfloat16 bits nearest to f32 `x` (round to nearest, ties to even; NaN → quiet NaN with x's sign).
pub fn f32_to_bf16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) as u16 & 0x8000) | 0x7fc0;
    }
    let r = b.wrapping_add(0x7fff + ((b >> 16) & 1));
    (r >> 16) as u16
}

/// The value of bfloat16 bits `h` as an f32 (exact).
pub fn bf16_bits_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// `x` rounded to the nearest bfloat16 value (as an f64).
pub fn round_to_bf16(x: f64) -> f64 {
    bf16_bits_to_f32(f64_to_bf16_bits(x)) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounding() {
        assert_eq!(f32_to_bf16_bits(1.0), 0x3f80);
        // ties to even: 1 + 2^-8 -> 1, 1 + 3*2^-8 -> 1 + 2^-6
        assert_eq!(f32_to_bf16_bits(1.0 + 2f32.powi(-8)), 0x3f80);
        assert_eq!(f32_to_bf16_bits(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
        assert_eq!(f32_to_bf16_bits(f32::MAX), 0x7f80);
        assert_eq!(f32_to_bf16_bits(-0.0), 0x8000);
        assert_eq!(f32_to_bf16_bits(f32::NAN) & 0x7fff, 0x7fc0);
        // one rounding from f64 (ml_dtypes: bfloat16(1 + 2^-8 + 2^-40) == 1 + 2^-7)
        assert_eq!(f64_to_bf16_bits(1.0 + 2f64.powi(-8) + 2f64.powi(-40)), 0x3f81);
        assert_eq!(f64_to_bf16_bits(1e300), 0x7f80);
        for h in 0..=u16::MAX {
            let f = bf16_bits_to_f32(h);
            if !f.is_nan() {
                assert_eq!(f32_to_bf16_bits(f), h, "{h:#x}");
                assert_eq!(f64_to_bf16_bits(f as f64), h, "{h:#x}");
            }
        }
    }

    #[test]
    fn f16_round_trip_all_bits() {
        for h in 0..=u16::MAX {
            let f = f16_bits_to_f32(h);
            if f.is_nan() {
                assert_eq!(f32_to_f16_bits(f) & 0x7e00, 0x7e00, "{h:#x}");
            } else {
                assert_eq!(f32_to_f16_bits(f), h, "{h:#x}");
            }
        }
    }

    #[test]
    fn f16_rounding() {
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(65504.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(65519.99), 0x7bff);
        assert_eq!(f32_to_f16_bits(65520.0), 0x7c00);
        assert_eq!(f32_to_f16_bits(-1e10), 0xfc00);
        assert_eq!(f32_to_f16_bits(f32::INFINITY), 0x7c00);
        assert_eq!(f32_to_f16_bits(5.960_464_5e-8), 0x0001);
        assert_eq!(f32_to_f16_bits(2.980_232_2e-8), 0x0000); // tie at 2^-25 -> even (0)
        assert_eq!(f32_to_f16_bits(2.980_233e-8), 0x0001);
        assert_eq!(f32_to_f16_bits(-0.0), 0x8000);
        // ties to even in the normal range: 1 + 2^-11 -> 1, 1 + 3*2^-11 -> 1 + 2^-9
        assert_eq!(f32_to_f16_bits(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        // subnormal to normal carry
        assert_eq!(f64_to_f16_bits(6.1035e-5), 0x0400);
        assert_eq!(f32_to_f16_bits(f32::NAN) & 0x7fff, 0x7e00);
        assert_eq!(Scalar::Float(0.1).cast(DType::F16), Scalar::Float(0.0999755859375));
        // f64 rounds once (no double rounding through f32)
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f64_to_f16_bits(x), 0x3c01);
    }
}
