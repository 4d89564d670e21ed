//! Cranelift type and constant helpers shared by every emitter (a leaf: imports nothing of the backend).
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::{FunctionBuilder, Variable};

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

/// A loop over an I64 counter `v` from 0, opened by `counted_begin` or `repeat_begin` and closed by the matching
/// `*_end`; the code emitted in between is its body.
pub struct Counted {
    pub v: Variable,
    hdr: Block,
    after: Block,
}

/// A fresh variable of type `ty` holding `v`.
pub fn var_with(b: &mut FunctionBuilder, ty: Type, v: Value) -> Variable {
    let x = b.declare_var(ty);
    b.def_var(x, v);
    x
}

/// `for v in 0..n` (the test before each iteration): leaves the builder in the body.
pub fn counted_begin(b: &mut FunctionBuilder, n: i64) -> Counted {
    let v = b.declare_var(types::I64);
    let z = iconst(b, types::I64, 0);
    b.def_var(v, z);
    let (hdr, body, after) = (b.create_block(), b.create_block(), b.create_block());
    b.ins().jump(hdr, &[]);
    b.switch_to_block(hdr);
    let cur = b.use_var(v);
    let more = b.ins().icmp_imm_s(IntCC::SignedLessThan, cur, n);
    b.ins().brif(more, body, &[], after, &[]);
    b.switch_to_block(body);
    Counted { v, hdr, after }
}

/// Closes a `counted_begin` loop: `v += 1`, back to the test; leaves the builder after the loop.
pub fn counted_end(b: &mut FunctionBuilder, c: Counted) {
    let cur = b.use_var(c.v);
    let next = b.ins().iadd_imm_s(cur, 1);
    b.def_var(c.v, next);
    b.ins().jump(c.hdr, &[]);
    b.switch_to_block(c.after);
}

/// `v = 0; do { body } while ((v += step) < n)` (the body runs at least once): leaves the builder in the body.
pub fn repeat_begin(b: &mut FunctionBuilder) -> Counted {
    let v = b.declare_var(types::I64);
    let z = iconst(b, types::I64, 0);
    b.def_var(v, z);
    let (hdr, after) = (b.create_block(), b.create_block());
    b.ins().jump(hdr, &[]);
    b.switch_to_block(hdr);
    Counted { v, hdr, after }
}

/// Closes a `repeat_begin` loop: `v += step`, again while `v < n`; leaves the builder after the loop.
pub fn repeat_end(b: &mut FunctionBuilder, c: Counted, step: i64, n: i64) {
    let cur = b.use_var(c.v);
    let next = b.ins().iadd_imm_s(cur, step);
    b.def_var(c.v, next);
    let more = b.ins().icmp_imm_s(IntCC::SignedLessThan, next, n);
    b.ins().brif(more, c.hdr, &[], c.after, &[]);
    b.switch_to_block(c.after);
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
