//! Cranelift type and constant helpers shared by every emitter (a leaf: imports nothing of the backend).
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;

use crate::ir::DType;

/// The Cranelift type a dtype's values are computed in.
pub fn cl_type(dt: DType) -> Type {
    match dt {
        DType::Bool | DType::I8 | DType::U8 => types::I8,
        crate::ir::dtype::float8!() => types::I8,
        DType::I16 | DType::U16 | DType::F16 | DType::BF16 => types::I16,
        DType::I32 | DType::U32 => types::I32,
        DType::I64 => types::I64,
        DType::F32 => types::F32,
        DType::F64 => types::F64,
    }
}

/// An integer constant of Cranelift type `ty`, its bits masked to the width.
pub fn iconst(b: &mut FunctionBuilder, ty: Type, v: i64) -> Value {
    let bits = ty.bits();
    let v = if bits < 64 { v & ((1i64 << bits) - 1) } else { v };
    b.ins().iconst(ty, v)
}

/// Flags for an aligned access that cannot trap (every address is bounds-checked before the run).
pub fn trusted() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// A float constant of float dtype `dt`.
pub fn fconst(b: &mut FunctionBuilder, dt: DType, v: f64) -> Value {
    if dt == DType::F16 {
        iconst(b, types::I16, crate::ir::dtype::f64_to_f16_bits(v) as i64)
    } else if dt == DType::BF16 {
        iconst(b, types::I16, crate::ir::dtype::f64_to_bf16_bits(v) as i64)
    } else if let Some(f) = dt.float8_format() {
        iconst(b, types::I8, f.from_f64(v) as i64)
    } else if dt == DType::F32 {
        b.ins().f32const(v as f32)
    } else {
        b.ins().f64const(v)
    }
}
