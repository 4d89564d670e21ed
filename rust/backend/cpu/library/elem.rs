//! Element types of buffers as the library routines see them (`Elem`: XLA's arithmetic per dtype, `U8`,
//! `F16`, `with_elem!`) and typed access to buffer elements.
use std::sync::Arc;

use crate::buffer::{Buffer, Storage};
use crate::error::Result;
use crate::ir::{Aval, DType};

/// A fresh buffer for `aval` whose contents the caller overwrites entirely.
pub(crate) fn uninit(aval: &Aval) -> Result<Buffer> {
    let bytes = Buffer::byte_len(aval)?;
    Ok(Buffer { storage: Arc::new(Storage::uninit(bytes)?), aval: aval.clone() })
}

pub(crate) fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    crate::ir::shape::row_major_strides(shape)
}

/// The elements of `b` as a slice of `T` (`T` must match the buffer's dtype width).
///
/// SAFETY: `T` is the buffer's element type; the buffer holds `numel` elements (checked by the plan
/// validator and `exec::run`).
pub(crate) unsafe fn elems<T>(b: &Buffer) -> &[T] {
    let n = numel(&b.aval.shape);
    debug_assert!(b.storage.len() >= n * std::mem::size_of::<T>());
    std::slice::from_raw_parts(b.as_ptr() as *const T, n)
}

/// SAFETY: as `elems`, and `b` is a fresh buffer nobody else reads or writes.
#[allow(clippy::mut_from_ref)]
pub(crate) unsafe fn elems_mut<T>(b: &Buffer) -> &mut [T] {
    let n = numel(&b.aval.shape);
    debug_assert!(b.storage.len() >= n * std::mem::size_of::<T>());
    std::slice::from_raw_parts_mut(b.as_ptr() as *mut T, n)
}

/// Reads element `i` of an integer (or bool) buffer as i64.
pub(crate) fn read_index(b: &Buffer, i: usize) -> i64 {
    // SAFETY: dtype matched to the element type; `i` < numel by the callers' loops.
    unsafe {
        match b.aval.dtype {
            DType::I32 => elems::<i32>(b)[i] as i64,
            DType::U32 => elems::<u32>(b)[i] as i64,
            DType::I64 => elems::<i64>(b)[i],
            DType::Bool => elems::<u8>(b)[i] as i64,
            DType::I8 => elems::<i8>(b)[i] as i64,
            DType::U8 => elems::<u8>(b)[i] as i64,
            DType::I16 => elems::<i16>(b)[i] as i64,
            DType::U16 => elems::<u16>(b)[i] as i64,
            DType::F16 => elems::<F16>(b)[i].to_i64(),
            DType::BF16 => elems::<BF16>(b)[i].to_i64(),
            d @ crate::ir::dtype::float8!() => crate::ir::dtype::float8_to_f64(d, elems::<u8>(b)[i]) as i64,
            DType::F32 => elems::<f32>(b)[i] as i64,
            DType::F64 => elems::<f64>(b)[i] as i64,
        }
    }
}

/// f32 and f64, for the library routines that run on floats only (convolution, matrix-vector kernels,
/// outer-product accumulation): `fma` is `self * b + c` rounded once (`mul_add`: one instruction where the
/// caller is compiled with FMA, a correctly rounded libm call in the portable build).
pub trait Float: Copy + Send + Sync + 'static + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> {
    const ZERO: Self;
    const ONE: Self;
    fn fma(self, b: Self, c: Self) -> Self;
}
impl Float for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    #[inline(always)]
    fn fma(self, b: f32, c: f32) -> f32 {
        self.mul_add(b, c)
    }
}
impl Float for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    #[inline(always)]
    fn fma(self, b: f64, c: f64) -> f64 {
        self.mul_add(b, c)
    }
}

/// Scalar element type of a buffer, with the arithmetic the library routines need (XLA semantics:
/// integers wrap, float max/min propagate NaN, bool add/mul are or/and).
pub(crate) trait Elem: Copy + Send + Sync + PartialEq + 'static {
    const IS_FLOAT: bool;
    fn zero() -> Self;
    fn eadd(self, o: Self) -> Self;
    fn emul(self, o: Self) -> Self;
    fn emax(self, o: Self) -> Self;
    fn emin(self, o: Self) -> Self;
    fn to_f64(self) -> f64;
    fn to_i64(self) -> i64;
    fn from_f64(v: f64) -> Self;
    fn from_i64(v: i64) -> Self;
    /// A key whose unsigned order is the sort order (floats: -0.0 == 0.0, NaN last).
    fn sort_key(self) -> u64;
    /// JAX's default fill for out-of-bounds gathers: NaN, the minimum signed value, the maximum unsigned
    /// value, True.
    fn default_fill() -> Self;
}

macro_rules! int_elem {
    ($t:ty, $key:expr, $fill:expr) => {
        impl Elem for $t {
            const IS_FLOAT: bool = false;
            fn zero() -> Self { 0 }
            fn eadd(self, o: Self) -> Self { self.wrapping_add(o) }
            fn emul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn emax(self, o: Self) -> Self { Ord::max(self, o) }
            fn emin(self, o: Self) -> Self { Ord::min(self, o) }
            fn to_f64(self) -> f64 { self as f64 }
            fn to_i64(self) -> i64 { self as i64 }
            fn from_f64(v: f64) -> Self { v as $t }
            fn from_i64(v: i64) -> Self { v as $t }
            fn sort_key(self) -> u64 { ($key)(self) }
            fn default_fill() -> Self { $fill }
        }
    };
}
int_elem!(i32, |x: i32| ((x as u32) ^ 0x8000_0000) as u64, i32::MIN);
int_elem!(u32, |x: u32| x as u64, u32::MAX);
int_elem!(i64, |x: i64| (x as u64) ^ (1u64 << 63), i64::MIN);
int_elem!(i8, |x: i8| ((x as u8) ^ 0x80) as u64, i8::MIN);
int_elem!(i16, |x: i16| ((x as u16) ^ 0x8000) as u64, i16::MIN);
int_elem!(u16, |x: u16| x as u64, u16::MAX);

/// uint8 (a wrapper: plain `u8` is bool's element type).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) struct U8(pub u8);

impl Elem for U8 {
    const IS_FLOAT: bool = false;
    fn zero() -> Self { U8(0) }
    fn eadd(self, o: Self) -> Self { U8(self.0.wrapping_add(o.0)) }
    fn emul(self, o: Self) -> Self { U8(self.0.wrapping_mul(o.0)) }
    fn emax(self, o: Self) -> Self { Ord::max(self, o) }
    fn emin(self, o: Self) -> Self { Ord::min(self, o) }
    fn to_f64(self) -> f64 { self.0 as f64 }
    fn to_i64(self) -> i64 { self.0 as i64 }
    fn from_f64(v: f64) -> Self { U8(v as u8) }
    fn from_i64(v: i64) -> Self { U8(v as u8) }
    fn sort_key(self) -> u64 { self.0 as u64 }
    fn default_fill() -> Self { U8(u8::MAX) }
}

/// bool, stored as one byte (0 or 1).
impl Elem for u8 {
    const IS_FLOAT: bool = false;
    fn zero() -> Self { 0 }
    fn eadd(self, o: Self) -> Self { self | o }
    fn emul(self, o: Self) -> Self { self & o }
    fn emax(self, o: Self) -> Self { self | o }
    fn emin(self, o: Self) -> Self { self & o }
    fn to_f64(self) -> f64 { self as f64 }
    fn to_i64(self) -> i64 { self as i64 }
    fn from_f64(v: f64) -> Self { (v != 0.0) as u8 }
    fn from_i64(v: i64) -> Self { (v != 0) as u8 }
    fn sort_key(self) -> u64 { self as u64 }
    fn default_fill() -> Self { 1 }
}

macro_rules! float_elem {
    ($t:ty, $bits:ty, $sign:expr, $daz:path) => {
        impl Elem for $t {
            const IS_FLOAT: bool = true;
            fn zero() -> Self { 0.0 }
            fn eadd(self, o: Self) -> Self { self + o }
            fn emul(self, o: Self) -> Self { self * o }
            // XLA's max/min (IEEE 754-2019 maximum/minimum): NaN if either is NaN, -0.0 < +0.0 in either
            // order (`f32::max` may return either zero), and a subnormal result is the zero of its sign (XLA
            // reads subnormal operands as ±0), as the kernels' `ops::max_min` and `scalar_lib` give.
            fn emax(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() { <$t>::NAN }
                else if o > self || (o == self && self.is_sign_negative()) { $daz(o) } else { $daz(self) }
            }
            fn emin(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() { <$t>::NAN }
                else if o < self || (o == self && o.is_sign_negative()) { $daz(o) } else { $daz(self) }
            }
            fn to_f64(self) -> f64 { self as f64 }
            fn to_i64(self) -> i64 { self as i64 }
            fn from_f64(v: f64) -> Self { v as $t }
            fn from_i64(v: i64) -> Self { v as $t }
            fn sort_key(self) -> u64 {
                let x = if self == 0.0 { 0.0 } else if self.is_nan() { <$t>::NAN } else { self };
                let b = x.to_bits();
                let k: $bits = if b & $sign != 0 { !b } else { b | $sign };
                k as u64
            }
            fn default_fill() -> Self { <$t>::NAN }
        }
    };
}
float_elem!(f32, u32, 0x8000_0000u32, crate::backend::cpu::math::daz32);

/// float16, held as its bits. Arithmetic is done in f32 and rounded back (XLA's CPU semantics: each
/// operation rounds to float16).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) struct F16(pub u16);

impl F16 {
    pub(crate) fn to_f32(self) -> f32 {
        crate::ir::dtype::f16_bits_to_f32(self.0)
    }
    pub(crate) fn from_f32(v: f32) -> Self {
        F16(crate::ir::dtype::f32_to_f16_bits(v))
    }
}

impl Elem for F16 {
    const IS_FLOAT: bool = true;
    fn zero() -> Self { F16(0) }
    fn eadd(self, o: Self) -> Self { F16::from_f32(self.to_f32() + o.to_f32()) }
    fn emul(self, o: Self) -> Self { F16::from_f32(self.to_f32() * o.to_f32()) }
    fn emax(self, o: Self) -> Self { F16::from_f32(self.to_f32().emax(o.to_f32())) }
    fn emin(self, o: Self) -> Self { F16::from_f32(self.to_f32().emin(o.to_f32())) }
    fn to_f64(self) -> f64 { self.to_f32() as f64 }
    fn to_i64(self) -> i64 { self.to_f32() as i64 }
    fn from_f64(v: f64) -> Self { F16(crate::ir::dtype::f64_to_f16_bits(v)) }
    fn from_i64(v: i64) -> Self { F16::from_f64(v as f64) }
    fn sort_key(self) -> u64 { self.to_f32().sort_key() }
    fn default_fill() -> Self { F16(0x7e00) }
}
float_elem!(f64, u64, 1u64 << 63, crate::backend::cpu::math::daz64);

/// bfloat16, held as its bits; arithmetic in f32, rounded back (as `F16`).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) struct BF16(pub u16);

impl BF16 {
    pub(crate) fn to_f32(self) -> f32 {
        crate::ir::dtype::bf16_bits_to_f32(self.0)
    }
    pub(crate) fn from_f32(v: f32) -> Self {
        BF16(crate::ir::dtype::f32_to_bf16_bits(v))
    }
}

impl Elem for BF16 {
    const IS_FLOAT: bool = true;
    fn zero() -> Self { BF16(0) }
    fn eadd(self, o: Self) -> Self { BF16::from_f32(self.to_f32() + o.to_f32()) }
    fn emul(self, o: Self) -> Self { BF16::from_f32(self.to_f32() * o.to_f32()) }
    fn emax(self, o: Self) -> Self { BF16::from_f32(self.to_f32().emax(o.to_f32())) }
    fn emin(self, o: Self) -> Self { BF16::from_f32(self.to_f32().emin(o.to_f32())) }
    fn to_f64(self) -> f64 { self.to_f32() as f64 }
    fn to_i64(self) -> i64 { self.to_f32() as i64 }
    fn from_f64(v: f64) -> Self { BF16(crate::ir::dtype::f64_to_bf16_bits(v)) }
    fn from_i64(v: i64) -> Self { BF16::from_f64(v as f64) }
    fn sort_key(self) -> u64 { self.to_f32().sort_key() }
    fn default_fill() -> Self { BF16(0x7fc0) }
}

/// A float8 value of format `FLOAT8_FORMATS[K]`, held as its bits; arithmetic in f32, rounded back (as `F16`).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) struct F8<const K: usize>(pub u8);

impl<const K: usize> F8<K> {
    pub(crate) fn to_f32(self) -> f32 {
        crate::ir::dtype::FLOAT8_FORMATS[K].table()[self.0 as usize]
    }
    pub(crate) fn from_f32(v: f32) -> Self {
        F8(crate::ir::dtype::FLOAT8_FORMATS[K].from_f64(v as f64))
    }
}

impl<const K: usize> Elem for F8<K> {
    const IS_FLOAT: bool = true;
    fn zero() -> Self { F8(0) }
    fn eadd(self, o: Self) -> Self { Self::from_f32(self.to_f32() + o.to_f32()) }
    fn emul(self, o: Self) -> Self { Self::from_f32(self.to_f32() * o.to_f32()) }
    fn emax(self, o: Self) -> Self { Self::from_f32(self.to_f32().emax(o.to_f32())) }
    fn emin(self, o: Self) -> Self { Self::from_f32(self.to_f32().emin(o.to_f32())) }
    fn to_f64(self) -> f64 { self.to_f32() as f64 }
    fn to_i64(self) -> i64 { self.to_f32() as i64 }
    fn from_f64(v: f64) -> Self { F8(crate::ir::dtype::FLOAT8_FORMATS[K].from_f64(v)) }
    fn from_i64(v: i64) -> Self { Self::from_f64(v as f64) }
    fn sort_key(self) -> u64 { self.to_f32().sort_key() }
    fn default_fill() -> Self { F8(crate::ir::dtype::FLOAT8_FORMATS[K].nan_bits(false)) }
}

/// Runs `$body` with `$T` the element type of `$dt`.
macro_rules! with_elem {
    ($dt:expr, $T:ident => $body:expr) => {
        match $dt {
            crate::ir::DType::Bool => { type $T = u8; $body }
            crate::ir::DType::I8 => { type $T = i8; $body }
            crate::ir::DType::U8 => { type $T = $crate::backend::cpu::library::elem::U8; $body }
            crate::ir::DType::I16 => { type $T = i16; $body }
            crate::ir::DType::U16 => { type $T = u16; $body }
            crate::ir::DType::I32 => { type $T = i32; $body }
            crate::ir::DType::U32 => { type $T = u32; $body }
            crate::ir::DType::I64 => { type $T = i64; $body }
            crate::ir::DType::F16 => { type $T = $crate::backend::cpu::library::elem::F16; $body }
            crate::ir::DType::BF16 => { type $T = $crate::backend::cpu::library::elem::BF16; $body }
            crate::ir::DType::F8E4M3FN => { type $T = $crate::backend::cpu::library::elem::F8<0>; $body }
            crate::ir::DType::F8E5M2 => { type $T = $crate::backend::cpu::library::elem::F8<1>; $body }
            crate::ir::DType::F8E4M3FNUZ => { type $T = $crate::backend::cpu::library::elem::F8<2>; $body }
            crate::ir::DType::F8E5M2FNUZ => { type $T = $crate::backend::cpu::library::elem::F8<3>; $body }
            crate::ir::DType::F8E4M3B11FNUZ => { type $T = $crate::backend::cpu::library::elem::F8<4>; $body }
            crate::ir::DType::F8E3M4 => { type $T = $crate::backend::cpu::library::elem::F8<5>; $body }
            crate::ir::DType::F8E4M3 => { type $T = $crate::backend::cpu::library::elem::F8<6>; $body }
            crate::ir::DType::F32 => { type $T = f32; $body }
            crate::ir::DType::F64 => { type $T = f64; $body }
        }
    };
}
pub(crate) use with_elem;

/// `x` converted to `T` with XLA's convert semantics (float → int saturates, NaN → 0; → bool is `!= 0`).
pub(crate) fn convert<S: Elem, T: Elem>(x: S) -> T {
    if S::IS_FLOAT {
        T::from_f64(x.to_f64())
    } else {
        T::from_i64(x.to_i64())
    }
}

/// `b` converted to dtype `to` (a new buffer; `b` itself when it already has that dtype).
pub(crate) fn convert_buffer(b: &Buffer, to: DType) -> Result<Buffer> {
    if b.aval.dtype == to {
        return Ok(b.clone());
    }
    let out = uninit(&Aval::new(to, b.aval.shape.clone()))?;
    with_elem!(b.aval.dtype, S => with_elem!(to, T => {
        // SAFETY: element types match the dtypes; `out` is fresh.
        let (src, dst) = unsafe { (elems::<S>(b), elems_mut::<T>(&out)) };
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = convert::<S, T>(s);
        }
    }));
    Ok(out)
}

/// The scalar `v` (given as f64) in dtype `T`, for fill values.
pub(crate) fn scalar_from_f64<T: Elem>(v: f64) -> T {
    T::from_f64(v)
}
