//! The math functions the CPU backend lowers (`MathFn`), their import signatures and the per-kernel import
//! table: the vocabulary `math` (the lowering), `vmath`, `mathlib`, `simd` and `jit` share (a leaf).
use std::collections::HashMap;

use cranelift_codegen::ir::{AbiParam, FuncRef, Signature};
use cranelift_codegen::isa::CallConv;

use crate::ir::program::Kinds;
use crate::ir::{BinaryOp, DType, UnaryOp};

use super::clif::cl_type;

/// A math function that the backend lowers through `emit_math`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathFn {
    Exp, Exp2, Log, Log1p, Expm1, Tanh, Sin, Cos, Tan, Logistic, Erf, Cbrt,
    Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, ErfInv, Ndtri, Lgamma, Digamma, Rsqrt,
    Pow, Atan2, NextAfter, Fmod,
    /// Internal: the C library's `sinf` and `cosf` of a huge f32 (`vmath::sincos_big_f32`), f32 → i64.
    SinCosBig,
    /// Internal: the C library's `tanf` of a huge f32 (`vmath::tan_big_f32`), f32 → f32.
    TanBig,
    /// Integer power `x ** y` (both operands of the integer dtype).
    IPow,
    /// A float unary op that neither `ops::unary` nor the functions above lower: a call to its scalar
    /// implementation (`math::symbol_ptr`); an op without one is a "not lowered" codegen error.
    Call(UnaryOp),
    /// The same for a float binary op (the special functions: `igamma`, `zeta`, ...).
    Call2(BinaryOp),
}

impl MathFn {
    pub fn from_unary(op: UnaryOp) -> Option<MathFn> {
        use UnaryOp as U;
        Some(match op {
            U::Exp => MathFn::Exp, U::Exp2 => MathFn::Exp2, U::Log => MathFn::Log, U::Log1p => MathFn::Log1p,
            U::Expm1 => MathFn::Expm1, U::Tanh => MathFn::Tanh, U::Sin => MathFn::Sin, U::Cos => MathFn::Cos,
            U::Tan => MathFn::Tan, U::Logistic => MathFn::Logistic, U::Erf => MathFn::Erf, U::Cbrt => MathFn::Cbrt,
            U::Asin => MathFn::Asin, U::Acos => MathFn::Acos, U::Atan => MathFn::Atan, U::Sinh => MathFn::Sinh,
            U::Cosh => MathFn::Cosh, U::Asinh => MathFn::Asinh, U::Acosh => MathFn::Acosh,
            U::Atanh => MathFn::Atanh, U::ErfInv => MathFn::ErfInv, U::Ndtri => MathFn::Ndtri,
            U::Lgamma => MathFn::Lgamma,
            U::Digamma => MathFn::Digamma, U::Rsqrt => MathFn::Rsqrt,
            // Lowered inline by `ops::unary` (and the SIMD path), or integer ops.
            U::Neg | U::Abs | U::Sign | U::Floor | U::Ceil | U::Round | U::RoundEven | U::Sqrt | U::Square
            | U::Not | U::IsFinite | U::PopulationCount => return None,
            op if op.kinds() == Kinds::Float => MathFn::Call(op),
            _ => return None,
        })
    }
    pub fn arity(self) -> usize {
        match self {
            MathFn::Pow | MathFn::Atan2 | MathFn::NextAfter | MathFn::Fmod | MathFn::IPow | MathFn::Call2(_) => 2,
            _ => 1,
        }
    }
    pub fn symbol_name(self, dt: DType) -> String {
        if let MathFn::Call(op) = self {
            return format!("cranax_call_{}_{}", op.name(), dt.short_name());
        }
        if let MathFn::Call2(op) = self {
            return format!("cranax_call2_{}_{}", op.name(), dt.short_name());
        }
        format!("cranax_{}_{}", format!("{self:?}").to_lowercase(), dt.short_name())
    }
}

/// The math function (and its dtype) a binary op needs, if any.
pub fn binary_math(op: BinaryOp, dt: DType) -> Option<MathFn> {
    match (op, dt.is_float(), dt.is_int()) {
        (BinaryOp::Pow, true, _) => Some(MathFn::Pow),
        (BinaryOp::Pow, _, true) => Some(MathFn::IPow),
        (BinaryOp::Atan2, true, _) => Some(MathFn::Atan2),
        (BinaryOp::NextAfter, true, _) => Some(MathFn::NextAfter),
        (BinaryOp::Rem, true, _) => Some(MathFn::Fmod),
        (op, true, _) if op.kinds() == Kinds::Float => Some(MathFn::Call2(op)),
        _ => None,
    }
}

/// The Cranelift signature of an imported math symbol.
pub fn signature(f: MathFn, dt: DType, call_conv: CallConv) -> Signature {
    let ty = cl_type(dt);
    let mut sig = Signature::new(call_conv);
    for _ in 0..f.arity() {
        sig.params.push(AbiParam::new(ty));
    }
    let ret = match f {
        MathFn::SinCosBig => cl_type(DType::I64),
        _ => ty,
    };
    sig.returns.push(AbiParam::new(ret));
    sig
}

/// Imported math functions of one kernel, declared in its Cranelift function.
pub type Imports = HashMap<(MathFn, DType), FuncRef>;
