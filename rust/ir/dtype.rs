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
    /// The float8 formats (`Float8Format` describes each): stored in one byte, computed like float16.
    #[serde(rename = "f8_e4m3fn")]
    F8E4M3FN,
    #[serde(rename = "f8_e5m2")]
    F8E5M2,
    #[serde(rename = "f8_e4m3fnuz")]
    F8E4M3FNUZ,
    #[serde(rename = "f8_e5m2fnuz")]
    F8E5M2FNUZ,
    #[serde(rename = "f8_e4m3b11fnuz")]
    F8E4M3B11FNUZ,
    #[serde(rename = "f8_e3m4")]
    F8E3M4,
    #[serde(rename = "f8_e4m3")]
    F8E4M3,
    #[serde(rename = "f32")]
    F32,
    #[serde(rename = "f64")]
    F64,
}

/// The float8 dtypes as one pattern (`float8!()`), for matches that list every dtype.
macro_rules! float8 {
    () => {
        $crate::ir::DType::F8E4M3FN
            | $crate::ir::DType::F8E5M2
            | $crate::ir::DType::F8E4M3FNUZ
            | $crate::ir::DType::F8E5M2FNUZ
            | $crate::ir::DType::F8E4M3B11FNUZ
            | $crate::ir::DType::F8E3M4
            | $crate::ir::DType::F8E4M3
    };
}
pub(crate) use float8;

impl DType {
    /// Bytes per element in a buffer (bool is stored as one byte, 0 or 1).
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            float8!() => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64) || self.is_float8()
    }
    /// The float8 formats (one byte each; `float8_format` describes them).
    pub fn is_float8(self) -> bool {
        self.float8_format().is_some()
    }
    /// The format of a float8 dtype (`None` for every other dtype).
    pub fn float8_format(self) -> Option<&'static Float8Format> {
        let i = match self {
            DType::F8E4M3FN => 0,
            DType::F8E5M2 => 1,
            DType::F8E4M3FNUZ => 2,
            DType::F8E5M2FNUZ => 3,
            DType::F8E4M3B11FNUZ => 4,
            DType::F8E3M4 => 5,
            DType::F8E4M3 => 6,
            _ => return None,
        };
        Some(&FLOAT8_FORMATS[i])
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
    /// The floats stored narrow and computed in f32, rounded per operation (`opt::f16`): float16, bfloat16
    /// and the float8 formats.
    pub fn is_half(self) -> bool {
        matches!(self, DType::F16 | DType::BF16) || self.is_float8()
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
            d @ float8!() => d.float8_format().map_or("", |f| f.numpy_name),
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
            d @ float8!() => d.float8_format().map_or("", |f| f.short_name),
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
            s if s.starts_with("f8_") => return FLOAT8_FORMATS.iter().find(|f| f.short_name == s).map(|f| f.dtype),
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
    /// The value as an f64 (bools 0/1).
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as i64 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }
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
            d if d.is_float8() => Scalar::Float(d.float8_format().map_or(as_f, |f| f.round(as_f))),
            DType::F32 => Scalar::Float(as_f as f32 as f64),
            DType::F64 => Scalar::Float(as_f),
            _ => {
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

/// The value of float8 bits `b` of float8 dtype `d` (NaN for any other dtype).
pub fn float8_to_f64(d: DType, b: u8) -> f64 {
    d.float8_format().map_or(f64::NAN, |f| f.to_f32(b) as f64)
}

/// One float8 format, as ml_dtypes defines it: 1 sign bit, `exp_bits` exponent bits with bias `bias`,
/// `man_bits` mantissa bits, subnormals at exponent field 0. `Ieee` formats have infinities (exponent all
/// ones, mantissa 0) and NaNs (exponent all ones); `Fn` ("finite") formats have no infinity, NaN is the
/// all-ones pattern of either sign; `Fnuz` formats have neither infinity nor -0, NaN is 0x80.
#[derive(Debug)]
pub struct Float8Format {
    pub dtype: DType,
    pub short_name: &'static str,
    pub numpy_name: &'static str,
    pub exp_bits: u32,
    pub man_bits: u32,
    pub bias: i32,
    pub kind: Float8Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Float8Kind {
    Ieee,
    Fn,
    Fnuz,
}

/// The float8 formats, in `DType::float8_format` order.
pub static FLOAT8_FORMATS: [Float8Format; 7] = [
    Float8Format { dtype: DType::F8E4M3FN, short_name: "f8_e4m3fn", numpy_name: "float8_e4m3fn", exp_bits: 4, man_bits: 3, bias: 7, kind: Float8Kind::Fn },
    Float8Format { dtype: DType::F8E5M2, short_name: "f8_e5m2", numpy_name: "float8_e5m2", exp_bits: 5, man_bits: 2, bias: 15, kind: Float8Kind::Ieee },
    Float8Format { dtype: DType::F8E4M3FNUZ, short_name: "f8_e4m3fnuz", numpy_name: "float8_e4m3fnuz", exp_bits: 4, man_bits: 3, bias: 8, kind: Float8Kind::Fnuz },
    Float8Format { dtype: DType::F8E5M2FNUZ, short_name: "f8_e5m2fnuz", numpy_name: "float8_e5m2fnuz", exp_bits: 5, man_bits: 2, bias: 16, kind: Float8Kind::Fnuz },
    Float8Format { dtype: DType::F8E4M3B11FNUZ, short_name: "f8_e4m3b11fnuz", numpy_name: "float8_e4m3b11fnuz", exp_bits: 4, man_bits: 3, bias: 11, kind: Float8Kind::Fnuz },
    Float8Format { dtype: DType::F8E3M4, short_name: "f8_e3m4", numpy_name: "float8_e3m4", exp_bits: 3, man_bits: 4, bias: 3, kind: Float8Kind::Ieee },
    Float8Format { dtype: DType::F8E4M3, short_name: "f8_e4m3", numpy_name: "float8_e4m3", exp_bits: 4, man_bits: 3, bias: 7, kind: Float8Kind::Ieee },
];

impl Float8Format {
    /// The NaN bits for a NaN of sign `neg` (ml_dtypes: fnuz 0x80; fn all ones; IEEE the quiet NaN,
    /// exponent all ones with the top mantissa bit).
    pub fn nan_bits(&self, neg: bool) -> u8 {
        let s = if neg { 0x80 } else { 0 };
        match self.kind {
            Float8Kind::Fnuz => 0x80,
            Float8Kind::Fn => s | 0x7f,
            Float8Kind::Ieee => s | (self.inf_bits() | (1 << (self.man_bits - 1))),
        }
    }
    /// The bits of +infinity (IEEE formats only; the exponent field all ones).
    pub fn inf_bits(&self) -> u8 {
        (((1u32 << self.exp_bits) - 1) << self.man_bits) as u8
    }
    /// The largest finite magnitude's bits (0x7f minus the patterns that are NaN or infinity).
    pub fn max_bits(&self) -> u8 {
        match self.kind {
            Float8Kind::Fnuz => 0x7f,
            Float8Kind::Fn => 0x7e,
            Float8Kind::Ieee => self.inf_bits() - 1,
        }
    }
    /// The smallest normal exponent, `1 - bias` (subnormals are multiples of 2^(emin - man_bits)).
    pub fn emin(&self) -> i32 {
        1 - self.bias
    }
    /// The value of bits `b` (exact in f32).
    pub fn to_f32(&self, b: u8) -> f32 {
        let neg = b & 0x80 != 0;
        let mag = (b & 0x7f) as u32;
        if self.kind == Float8Kind::Fnuz && b == 0x80 {
            return f32::NAN;
        }
        if self.kind == Float8Kind::Ieee && mag >= self.inf_bits() as u32 {
            let v = if mag == self.inf_bits() as u32 { f32::INFINITY } else { f32::NAN };
            return if neg { -v } else { v };
        }
        if self.kind == Float8Kind::Fn && mag == 0x7f {
            return if neg { -f32::NAN } else { f32::NAN };
        }
        let e = (mag >> self.man_bits) as i32;
        let m = mag & ((1 << self.man_bits) - 1);
        // value = m * 2^(emin - man_bits) for e == 0, (2^man_bits + m) * 2^(e - bias - man_bits) otherwise.
        let v = if e == 0 {
            m as f32 * 2f32.powi(self.emin() - self.man_bits as i32)
        } else {
            ((1 << self.man_bits) + m) as f32 * 2f32.powi(e - self.bias - self.man_bits as i32)
        };
        if neg { -v } else { v }
    }
    /// The bits nearest to `x` (round to nearest, ties to even, one rounding from f64). Overflow — magnitudes
    /// that round past the largest finite value — and infinities become infinity (IEEE formats) or NaN (fn
    /// and fnuz formats), as ml_dtypes converts; fnuz formats have no -0 (it becomes +0).
    pub fn from_f64(&self, x: f64) -> u8 {
        let neg = x.is_sign_negative();
        if x.is_nan() {
            return self.nan_bits(neg);
        }
        let a = x.abs();
        let m = self.man_bits as i32;
        let emin = self.emin();
        let mag: u32 = if a < 2f64.powi(emin) {
            // Subnormal (or zero): multiples of 2^(emin - m); the count 2^m is the smallest normal.
            (a * 2f64.powi(m - emin)).round_ties_even() as u32
        } else if a.is_infinite() {
            u32::MAX
        } else {
            let e = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).min(1000);
            // a = 2^e * q / 2^m with q in [2^m, 2^(m+1)); q == 2^(m+1) carries into the exponent.
            let q = (a * 2f64.powi(m - e)).round_ties_even() as u32;
            let field = e + self.bias;
            if field > (1 << self.exp_bits) {
                u32::MAX
            } else {
                ((field as u32) << m) + (q - (1 << m))
            }
        };
        if mag > self.max_bits() as u32 {
            return match self.kind {
                Float8Kind::Ieee => (if neg { 0x80 } else { 0 }) | self.inf_bits(),
                _ => self.nan_bits(neg),
            };
        }
        if self.kind == Float8Kind::Fnuz && mag == 0 {
            return 0;
        }
        (if neg { 0x80 } else { 0 }) | mag as u8
    }
    /// `x` rounded to this format (as an f64).
    pub fn round(&self, x: f64) -> f64 {
        self.to_f32(self.from_f64(x)) as f64
    }
    /// The table of all 256 values, for the backends' conversions (built once per format).
    pub fn table(&self) -> &'static [f32; 256] {
        static TABLES: std::sync::OnceLock<[[f32; 256]; 7]> = std::sync::OnceLock::new();
        let all = TABLES.get_or_init(|| {
            let mut t = [[0f32; 256]; 7];
            for (k, f) in FLOAT8_FORMATS.iter().enumerate() {
                for (b, v) in t[k].iter_mut().enumerate() {
                    *v = f.to_f32(b as u8);
                }
            }
            t
        });
        let k = FLOAT8_FORMATS.iter().position(|f| f.dtype == self.dtype).unwrap_or(0);
        &all[k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float8_round_trip_all_bits() {
        for f in &FLOAT8_FORMATS {
            for b in 0..=255u8 {
                let v = f.to_f32(b);
                if v.is_nan() {
                    assert!(f.to_f32(f.from_f64(v as f64)).is_nan());
                } else if !(f.kind == Float8Kind::Fnuz && b == 0x80) {
                    assert_eq!(f.from_f64(v as f64), b, "{} {b:#x}", f.short_name);
                }
            }
        }
        let e4 = DType::F8E4M3FN.float8_format().unwrap();
        assert_eq!(e4.from_f64(448.0), 0x7e);
        assert_eq!(e4.from_f64(1e10), 0x7f);
        assert_eq!(e4.from_f64(f64::INFINITY), 0x7f);
        let e5 = DType::F8E5M2.float8_format().unwrap();
        assert_eq!(e5.from_f64(1e10), 0x7c);
        assert_eq!(e5.from_f64(f64::NAN), 0x7e);
    }

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
