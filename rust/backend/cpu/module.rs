//! Cranelift module setup: the host ISA (made once per process), a `JITModule` with the math symbols
//! registered, the ABI of a compiled kernel (`KernelFn`), and the math symbols a kernel imports. Below
//! `jit`, `mathlib` and `scalar_loop`, which all make modules.
use std::sync::OnceLock;

use cranelift_codegen::ir::{types, AbiParam, Signature};
use cranelift_codegen::isa::{CallConv, OwnedTargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};

use crate::error::{Error, Result};
use crate::ir::DType;
use crate::plan::{KOp, Kernel};

use super::math;
use super::math_fn::{binary_math, MathFn};

/// Signature of a compiled kernel.
pub type KernelFn = unsafe extern "C" fn(*const *const u8, *const *mut u8, u64, u64);

/// The host ISA with opt_level=speed, the verifier on only in debug builds, and the host's features
/// (SSE4.1, AVX, FMA, ...) detected by `cranelift_native`.
pub(super) fn host_isa() -> Result<OwnedTargetIsa> {
    static ISA: OnceLock<std::result::Result<OwnedTargetIsa, String>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut fb = settings::builder();
        let verifier = if cfg!(debug_assertions) { "true" } else { "false" };
        for (k, v) in [("opt_level", "speed"), ("enable_verifier", verifier), ("use_colocated_libcalls", "false"), ("is_pic", "false")] {
            fb.set(k, v).map_err(|e| format!("setting {k}={v}: {e}"))?;
        }
        let isa = cranelift_native::builder().map_err(|e| format!("host machine not supported: {e}"))?;
        isa.finish(settings::Flags::new(fb)).map_err(|e| format!("building the ISA: {e}"))
    })
    .clone()
    .map_err(Error::Codegen)
}

pub fn new_module() -> Result<JITModule> {
    new_module_with(Vec::new())
}

/// A module with the math symbols and `extra` ones (out-of-line math routines) registered.
pub fn new_module_with(extra: Vec<(String, *const u8)>) -> Result<JITModule> {
    let isa = host_isa()?;
    let mut jb = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    for (name, ptr) in math::all_symbols().into_iter().chain(super::blockmath::symbols()).chain(super::wide::symbols()).chain(super::wide_half::symbols()).chain(extra) {
        jb.symbol(name, ptr);
    }
    Ok(JITModule::new(jb))
}

/// The (function, dtype) pairs a kernel calls.
pub fn math_uses(k: &Kernel) -> Vec<(MathFn, DType)> {
    let mut v = Vec::new();
    for ins in &k.body {
        let f = match &ins.op {
            KOp::Unary { op, .. } => MathFn::from_unary(*op),
            KOp::Binary { op, .. } => binary_math(*op, ins.dtype),
            _ => None,
        };
        let Some(f) = f else { continue };
        // Unary math is computed on the operand's dtype, which is the result's for every function here.
        if super::vmath::supports(f, ins.dtype) {
            for &h in super::vmath::helpers(f, ins.dtype) {
                if !v.contains(&h) {
                    v.push(h);
                }
            }
        } else if super::math::symbol_ptr(f, ins.dtype).is_some() && !v.contains(&(f, ins.dtype)) {
            // (A function without an implementation is not declared: `emit_math` reports it not lowered.)
            v.push((f, ins.dtype));
        }
    }
    v
}

/// How many of `k`'s instructions evaluate a library math function (`exp`, `tanh`, `sin`, `pow`, ...).
pub fn math_calls(k: &Kernel) -> usize {
    k.body
        .iter()
        .filter(|ins| match &ins.op {
            KOp::Unary { op, .. } => MathFn::from_unary(*op).is_some(),
            KOp::Binary { op, .. } => binary_math(*op, ins.dtype).is_some(),
            _ => false,
        })
        .count()
}

/// The kernel ABI: `(inputs, outputs, begin, end)`, all pointer-sized / 64-bit.
pub fn kernel_signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    for _ in 0..4 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig
}
