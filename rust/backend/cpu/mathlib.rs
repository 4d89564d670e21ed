//! Out-of-line copies of the inline math library: one Cranelift function per (function, lane type), compiled
//! once per process into a module that is never freed, and called by absolute address from kernels with many
//! math operations (a fused chain of 200 `sin`s would otherwise inline 200 range reductions and polynomials
//! per loop copy, and register allocation time grows faster than linearly with function size). The routine
//! body is exactly `vmath::emit`'s instruction sequence, so inline and out-of-line calls give the same bits.
use std::collections::HashMap;
use std::sync::Mutex;

use cranelift_codegen::ir::{types, AbiParam, InstBuilder, Signature, Type};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module};

use crate::error::{Error, Result};
use crate::ir::DType;

use super::math_fn::{Imports, MathFn};
use super::vmath;

/// Kernels with more inline-math operations than this call the out-of-line routines instead.
pub const OUTLINE_MIN_OPS: usize = 4;

/// The `Imports` key of `f`'s f32x4 routine. (Scalar routines use `(f, F32)`, which inline math never
/// imports; the vector key borrows `U32`, which no float math function uses.)
pub fn vec_key(f: MathFn) -> (MathFn, DType) {
    (f, DType::U32)
}

/// The symbol name of `f`'s routine on `f32` or `f32x4`.
pub fn symbol(f: MathFn, vector: bool) -> String {
    format!("cranax_vm_{}_{}", format!("{f:?}").to_lowercase(), if vector { "f32x4" } else { "f32" })
}

pub fn signature(f: MathFn, vector: bool, call_conv: CallConv) -> Signature {
    let ty = if vector { types::F32X4 } else { types::F32 };
    let mut sig = Signature::new(call_conv);
    for _ in 0..f.arity() {
        sig.params.push(AbiParam::new(ty));
    }
    sig.returns.push(AbiParam::new(ty));
    sig
}

struct Lib {
    module: JITModule,
    ptrs: HashMap<String, usize>,
}

// SAFETY: the module is only touched under the mutex; finished code is immutable and callable from any thread.
unsafe impl Send for Lib {}

static LIB: Mutex<Option<Lib>> = Mutex::new(None);

/// The address of `f`'s routine (compiling it on first use).
pub fn routine(f: MathFn, vector: bool) -> Result<*const u8> {
    let name = symbol(f, vector);
    let mut guard = LIB.lock().unwrap_or_else(|p| p.into_inner());
    if guard.is_none() {
        *guard = Some(Lib { module: super::module::new_module()?, ptrs: HashMap::new() });
    }
    let Some(lib) = guard.as_mut() else {
        return Err(Error::Codegen("math routine library not initialised".into()));
    };
    if let Some(&p) = lib.ptrs.get(&name) {
        return Ok(p as *const u8);
    }
    let m = &mut lib.module;
    let call_conv = m.isa().default_call_conv();
    let sig = signature(f, vector, call_conv);
    let id = m.declare_function(&name, Linkage::Local, &sig).map_err(|e| Error::Codegen(format!("{name}: {e}")))?;
    let mut ctx = m.make_context();
    ctx.func.signature = sig;
    let mut imports: Imports = HashMap::new();
    for &(hf, hdt) in vmath::helpers(f, DType::F32) {
        let fid = m
            .declare_function(&hf.symbol_name(hdt), Linkage::Import, &super::math_fn::signature(hf, hdt, call_conv))
            .map_err(|e| Error::Codegen(format!("{name}: {e}")))?;
        imports.insert((hf, hdt), m.declare_func_in_func(fid, &mut ctx.func));
    }
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let args = b.block_params(entry).to_vec();
        let ty: Type = if vector { types::F32X4 } else { types::F32 };
        let r = vmath::emit(&mut b, &imports, f, ty, &args)?;
        b.ins().return_(&[r]);
        b.seal_all_blocks();
        b.finalize(m.target_config());
    }
    m.define_function(id, &mut ctx).map_err(|e| Error::Codegen(format!("compiling {name}: {e:?}")))?;
    m.clear_context(&mut ctx);
    m.finalize_definitions().map_err(|e| Error::Codegen(format!("finalizing {name}: {e}")))?;
    let p = m.get_finalized_function(id) as usize;
    lib.ptrs.insert(name, p);
    Ok(p as *const u8)
}
