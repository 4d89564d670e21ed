//! One fused `Kernel` → one WGSL compute shader. Shapes are static, so the domain, strides, offsets and
//! the dispatch width are baked into the text (one pipeline per kernel; the pipeline cache is keyed by it).
//!
//! - Elementwise kernels: one invocation per domain point, `workgroup_size(256)`, a 2-D grid of
//!   workgroups (x ≤ 65535) folded back into a linear index; the point's coordinates are recovered by
//!   div/mod and every input is read at `offset + Σ coord·stride` (stride 0 broadcasts, permuted strides
//!   transpose, negative strides reverse, offsets slice).
//! - Reductions: when the reduced extent is small or there are many outputs, one invocation per output
//!   loops over the reduced points in order (the CPU's order); otherwise one workgroup per output, each
//!   invocation accumulates a strided share and a tree reduction in workgroup memory combines them.
//!   Argmax/argmin carry (value, index) pairs and break ties by the lower index.
//! - Values: f32, i32, u32, bool (bool stored as u32 0/1 in buffers); f16 (its arithmetic rewritten to f32),
//!   f64/i64 on adapters with 64-bit shaders (`buffer::check_dtype` keeps them off others).
//! - Semantics follow the CPU backend (XLA's): integer division by zero gives -1 (all ones), remainder by
//!   zero the dividend, shifts ≥ the width give 0 or the sign fill, float→int conversion saturates with
//!   NaN → 0, max/min propagate NaN and order -0 < +0, `round` is half away from zero. NaN tests use the
//!   bit pattern (WGSL compilers may assume comparisons never see NaN); the exact operations are integer
//!   arithmetic on the bits (see `super`'s trusted built-ins).
//! - Math: see `super::math` (our own f32 polynomials where the WGSL builtins' guaranteed accuracy is
//!   looser than 4 ulp).
use std::collections::BTreeSet;
use std::fmt::Write;

use crate::error::{Error, Result};
use crate::ir::{BinaryOp, CompareOp, DType, ReduceOp, Scalar, UnaryOp};
use crate::plan::{KOp, Kernel, OutputKind, Plan};

use super::math::{helper_source, Helper, Rounding, Width};

/// Invocations per workgroup.
pub const WG: u32 = 256;
/// Elementwise kernels of at least LARGE_DOMAIN points give each invocation POINTS_PER_INVOCATION points.
const LARGE_DOMAIN: u64 = 1 << 20;
const POINTS_PER_INVOCATION: u64 = 4;
/// Most chunks (workgroups) per output of a split reduction.
const MAX_SPLIT: u64 = 4096;

/// One storage binding of a kernel: a slot read (inputs, deduplicated by slot) or written (outputs).
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub slot: usize,
    pub write: bool,
}

/// A kernel's shader: source text, bindings in binding order, and the workgroup grid.
#[derive(Debug, Clone)]
pub struct KernelShader {
    pub source: String,
    pub bindings: Vec<Binding>,
    pub groups: [u32; 3],
    /// A large reduction with few outputs runs in two passes: this shader writes `chunks` partial results
    /// per output into scratch buffers (bound where the outputs would be), `second` combines them.
    pub second: Option<SecondPass>,
}

fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::Unsupported(format!("GPU backend: {what}"))
}

/// WGSL type of a value of `dt`.
pub fn vty(dt: DType) -> Result<&'static str> {
    Ok(match dt {
        DType::F32 => "f32",
        DType::F16 => "f16",
        DType::I32 => "i32",
        DType::U32 => "u32",
        DType::Bool => "bool",
        // Only on adapters with shader-f64 / shader-int64 (`buffer::check_dtype` keeps them off others).
        DType::F64 => "f64",
        DType::I64 => "i64",
        _ => return Err(unsupported(format!("dtype {}", dt.short_name()))),
    })
}

/// WGSL element type of a buffer holding `dt`.
pub(super) fn sty(dt: DType) -> Result<&'static str> {
    Ok(match dt {
        DType::Bool => "u32",
        d => vty(d)?,
    })
}

/// A WGSL literal of `s` as `dt` (exact: floats through their bits).
pub fn literal(s: Scalar, dt: DType) -> Result<String> {
    Ok(match s.cast(dt) {
        Scalar::Bool(b) => format!("{b}"),
        Scalar::Int(i) => match dt {
            DType::I32 => {
                let v = i as i32;
                if v == i32::MIN {
                    "bitcast<i32>(0x80000000u)".into()
                } else {
                    format!("{v}i")
                }
            }
            DType::U32 => format!("{}u", i as u32),
            DType::I64 => {
                if i == i64::MIN {
                    "bitcast<i64>(0x8000000000000000lu)".into()
                } else {
                    format!("{i}li")
                }
            }
            _ => return Err(unsupported(format!("constant of {}", dt.short_name()))),
        },
        Scalar::Float(f) => match dt {
            // through the rounding helper (a runtime call: WGSL constant expressions reject inf and NaN)
            DType::F16 => format!("f32_to_f16({})", literal(Scalar::Float(crate::ir::dtype::round_to_f16(f)), DType::F32)?),
            DType::F32 => {
                let v = f as f32;
                if v.is_finite() && (v == 0.0 && v.is_sign_positive() || v.is_normal()) {
                    format!("{v:?}f")
                } else {
                    format!("bitcast<f32>({:#010x}u)", v.to_bits())
                }
            }
            DType::F64 => {
                if f.is_finite() && (f == 0.0 && f.is_sign_positive() || f.is_normal()) {
                    format!("{f:?}lf")
                } else {
                    format!("bitcast<f64>({:#018x}lu)", f.to_bits())
                }
            }
            _ => return Err(unsupported(format!("constant of {}", dt.short_name()))),
        },
    })
}

/// Emission state for one kernel.
struct Emit<'a> {
    k: &'a Kernel,
    helpers: BTreeSet<Helper>,
    /// Binding index of each kernel input.
    in_bind: Vec<usize>,
    /// WGSL expression of each domain coordinate (u32).
    coords: Vec<String>,
    /// Per input: an expression to read instead of the binding (a private variable of a loop kernel).
    local: Vec<Option<String>>,
}

impl Emit<'_> {
    fn need(&mut self, h: Helper) -> &'static str {
        self.helpers.insert(h);
        h.name()
    }

    /// Element index expression of input `j` at the current coordinates.
    fn index(&self, j: usize) -> String {
        let inp = &self.k.inputs[j];
        let mut terms = vec![];
        if inp.offset != 0 {
            terms.push(format!("{}", inp.offset));
        }
        for (a, &s) in inp.strides.iter().enumerate() {
            if s == 0 || self.k.domain[a] == 1 {
                continue;
            }
            if s == 1 {
                terms.push(format!("i32({})", self.coords[a]));
            } else {
                terms.push(format!("i32({}) * {s}", self.coords[a]));
            }
        }
        if terms.is_empty() {
            "0u".into()
        } else {
            format!("u32({})", terms.join(" + "))
        }
    }

    /// The body's `let` statements at the current coordinates.
    fn body(&mut self, out: &mut String, indent: &str) -> Result<()> {
        let body = self.k.body.clone();
        for (i, ins) in body.iter().enumerate() {
            let dt = ins.dtype;
            let ty = vty(dt)?;
            let arg_dt = |x: usize| -> Result<DType> {
                body.get(x).map(|b| b.dtype).ok_or_else(|| Error::Codegen(format!("instruction {i} reads %{x}")))
            };
            let expr = match &ins.op {
                KOp::Load { input } if self.local.get(*input).is_some_and(|l| l.is_some()) => {
                    self.local[*input].clone().unwrap_or_default()
                }
                KOp::Load { input } => {
                    let inp = self.k.inputs.get(*input).ok_or_else(|| Error::Codegen(format!("load of input {input}")))?;
                    let b = self.in_bind[*input];
                    let e = format!("b{b}[{}]", self.index(*input));
                    match inp.dtype {
                        DType::Bool => format!("({e} != 0u)"),
                        _ => e,
                    }
                }
                KOp::Gather { input, index, stride, hi, fill } => {
                    // An array read at the clamped index (a loop kernel's private copy of an input cannot be
                    // indexed: `loop_kernel` leaves loops with gathers to run step by step).
                    if self.local.get(*input).is_some_and(|l| l.is_some()) {
                        return Err(unsupported("a gather from a loop kernel's carried value"));
                    }
                    let inp = self.k.inputs.get(*input).ok_or_else(|| Error::Codegen(format!("gather of input {input}")))?;
                    let (hi, stride) = match (i32::try_from(*hi), u32::try_from(*stride)) {
                        (Ok(h), Ok(s)) => (h, s),
                        _ => return Err(unsupported("a gather beyond 32-bit positions")),
                    };
                    let x = format!("v{index}");
                    let (clamped, inside) = match arg_dt(*index)? {
                        DType::I32 => (format!("u32(clamp({x}, 0i, {hi}i))"), format!("({x} >= 0i && {x} <= {hi}i)")),
                        DType::U32 => (format!("min({x}, {hi}u)"), format!("({x} <= {hi}u)")),
                        DType::I64 => (format!("u32(clamp({x}, 0li, {hi}li))"), format!("({x} >= 0li && {x} <= {hi}li)")),
                        d => return Err(unsupported(format!("a gather with {} indices", d.short_name()))),
                    };
                    let e = format!("b{}[{} + {clamped} * {stride}u]", self.in_bind[*input], self.index(*input));
                    let e = match inp.dtype {
                        DType::Bool => format!("({e} != 0u)"),
                        _ => e,
                    };
                    match fill {
                        Some(f) => format!("select(v{f}, {e}, {inside})"),
                        None => e,
                    }
                }
                KOp::Const { value } => {
                    if dt == DType::F16 {
                        self.need(Helper::F32ToF16);
                    }
                    literal(*value, dt)?
                }
                KOp::Iota { axis } => {
                    let c = self.coords.get(*axis).cloned().unwrap_or_else(|| "0u".into());
                    match dt {
                        DType::U32 => c,
                        DType::Bool => format!("({c} != 0u)"),
                        _ => format!("{ty}({c})"),
                    }
                }
                KOp::Unary { op, a } => self.unary(*op, arg_dt(*a)?, &format!("v{a}"))?,
                KOp::Binary { op, a, b } => self.binary(*op, dt, &format!("v{a}"), &format!("v{b}"))?,
                KOp::Compare { op, a, b } => self.compare(*op, arg_dt(*a)?, &format!("v{a}"), &format!("v{b}"))?,
                KOp::Select { pred, cases } => {
                    let pdt = arg_dt(*pred)?;
                    let first = cases.first().ok_or_else(|| Error::Codegen("select_n with no cases".into()))?;
                    let mut e = format!("v{first}");
                    for (k, c) in cases.iter().enumerate().skip(1) {
                        let cond = match pdt {
                            DType::Bool => format!("v{pred}"),
                            DType::I32 => format!("v{pred} >= {k}i"),
                            DType::U32 => format!("v{pred} >= {k}u"),
                            DType::I64 => format!("v{pred} >= {k}li"),
                            d => return Err(unsupported(format!("select_n predicate of {}", d.short_name()))),
                        };
                        e = format!("select({e}, v{c}, {cond})");
                    }
                    e
                }
                KOp::Convert { a } => self.convert(arg_dt(*a)?, dt, &format!("v{a}"))?,
                KOp::Bitcast { a } => {
                    let from = arg_dt(*a)?;
                    if from == DType::Bool || dt == DType::Bool {
                        return Err(unsupported("bitcast of bool"));
                    }
                    if from == dt {
                        format!("v{a}")
                    } else {
                        format!("bitcast<{ty}>(v{a})")
                    }
                }
                KOp::IntegerPow { a, y } => self.integer_pow(dt, &format!("v{a}"), *y)?,
                KOp::Clamp { lo, x, hi } => {
                    let t = self.max_min(dt, &format!("v{x}"), &format!("v{lo}"), true)?;
                    self.max_min(dt, &t, &format!("v{hi}"), false)?
                }
                // WGSL's fma may round twice (the spec allows a * b + c); drivers contract a * b + c into
                // one rounding anyway (NVIDIA's does), so the GPU's multiply-adds round as they did before
                // the CPU's contraction (`opt::contract`) made them `fma`
                KOp::Fma { a, b, c } => format!("fma(v{a}, v{b}, v{c})"),
            };
            let _ = writeln!(out, "{indent}let v{i}: {ty} = {expr};");
        }
        Ok(())
    }

    fn max_min(&mut self, dt: DType, a: &str, b: &str, is_max: bool) -> Result<String> {
        Ok(match (dt, is_max) {
            (DType::F32, true) => format!("{}({a}, {b})", self.need(Helper::FMax(Width::F32))),
            (DType::F32, false) => format!("{}({a}, {b})", self.need(Helper::FMin(Width::F32))),
            (DType::F64, true) => format!("{}({a}, {b})", self.need(Helper::FMax(Width::F64))),
            (DType::F64, false) => format!("{}({a}, {b})", self.need(Helper::FMin(Width::F64))),
            (DType::Bool, true) => format!("({a} || {b})"),
            (DType::Bool, false) => format!("({a} && {b})"),
            (_, true) => format!("max({a}, {b})"),
            (_, false) => format!("min({a}, {b})"),
        })
    }

    fn unary(&mut self, op: UnaryOp, dt: DType, x: &str) -> Result<String> {
        use UnaryOp as U;
        let float = dt == DType::F32;
        if float {
            if let Some(h) = Helper::for_unary(op) {
                return Ok(format!("{}({x})", self.need(h)));
            }
        }
        if dt == DType::F64 || dt == DType::I64 {
            return self.unary64(op, dt, x);
        }
        Ok(match op {
            // Sign-bit operations on the bits: exact for subnormals on GPUs that flush them in arithmetic.
            U::Neg if float => format!("bitcast<f32>(bitcast<u32>({x}) ^ 0x80000000u)"),
            U::Neg if dt == DType::I32 => format!("(0i - {x})"),
            U::Neg if dt == DType::U32 => format!("(0u - {x})"),
            U::Neg => x.to_string(),
            U::Abs if float => format!("bitcast<f32>(bitcast<u32>({x}) & 0x7fffffffu)"),
            U::Abs if dt == DType::I32 => format!("select({x}, 0i - {x}, {x} < 0i)"),
            U::Abs => x.to_string(),
            U::Sign if float => format!("{}({x})", self.need(Helper::Sign(Width::F32))),
            U::Sign if dt == DType::I32 => format!("clamp({x}, -1i, 1i)"),
            U::Sign if dt == DType::U32 => format!("min({x}, 1u)"),
            U::Sign => x.to_string(),
            U::Floor | U::Ceil | U::Round | U::RoundEven if float => self.rounding(op, Width::F32, x),
            U::Floor | U::Ceil | U::Round | U::RoundEven => x.to_string(),
            U::Sqrt if float => format!("sqrt({x})"),
            U::Rsqrt if float => format!("(1.0f / sqrt({x}))"),
            U::Square if float => format!("({x} * {x})"),
            U::Square if dt == DType::Bool => x.to_string(),
            U::Square => format!("({x} * {x})"),
            U::Not if dt == DType::Bool => format!("(!{x})"),
            U::Not if !float => format!("(~{x})"),
            U::IsFinite if float => format!("((bitcast<u32>({x}) & 0x7f800000u) != 0x7f800000u)"),
            U::PopulationCount if dt == DType::Bool => x.to_string(),
            U::PopulationCount if !float => format!("countOneBits({x})"),
            U::Clz if !float => format!("countLeadingZeros({x})"),
            _ => return Err(unsupported(format!("{op:?} on {}", dt.short_name()))),
        })
    }

    /// `floor`/`ceil`/`round` (half away from zero)/`round_even` of float `x`, exact on the bits (`math::ROUND`).
    fn rounding(&mut self, op: UnaryOp, w: Width, x: &str) -> String {
        let mode = match op {
            UnaryOp::Floor => Rounding::Floor,
            UnaryOp::Ceil => Rounding::Ceil,
            UnaryOp::Round => Rounding::HalfAway,
            _ => Rounding::HalfEven,
        };
        format!("{}({x}, {}u)", self.need(Helper::Round(w)), mode as u32)
    }

    /// Unary operations on f64/i64: exact ones only (transcendental functions have no 64-bit GLSL
    /// instructions, so such kernels run on the host; `sqrt` is the driver's, compared within 1 ulp).
    fn unary64(&mut self, op: UnaryOp, dt: DType, x: &str) -> Result<String> {
        use UnaryOp as U;
        let float = dt == DType::F64;
        Ok(match op {
            U::Neg if float => format!("bitcast<f64>(bitcast<u64>({x}) ^ 0x8000000000000000lu)"),
            U::Abs if float => format!("bitcast<f64>(bitcast<u64>({x}) & 0x7ffffffffffffffflu)"),
            U::Sign if float => format!("{}({x})", self.need(Helper::Sign(Width::F64))),
            U::Floor | U::Ceil | U::Round | U::RoundEven if float => self.rounding(op, Width::F64, x),
            U::Sqrt if float => format!("sqrt({x})"),
            U::Square => format!("({x} * {x})"),
            U::IsFinite if float => format!("((bitcast<u64>({x}) & 0x7ff0000000000000lu) != 0x7ff0000000000000lu)"),
            U::Neg => format!("(0li - {x})"),
            U::Abs => format!("select({x}, 0li - {x}, {x} < 0li)"),
            U::Sign => format!("clamp({x}, -1li, 1li)"),
            U::Floor | U::Ceil | U::Round | U::RoundEven => x.to_string(),
            U::Not => format!("(~{x})"),
            U::PopulationCount => format!("countOneBits({x})"),
            _ => return Err(unsupported(format!("{op:?} on {}", dt.short_name()))),
        })
    }

    fn binary(&mut self, op: BinaryOp, dt: DType, a: &str, b: &str) -> Result<String> {
        use BinaryOp as B;
        if dt == DType::F64 || dt == DType::I64 {
            return self.binary64(op, dt, a, b);
        }
        let float = dt == DType::F32;
        let int = matches!(dt, DType::I32 | DType::U32);
        Ok(match op {
            B::Add if dt == DType::Bool => format!("({a} || {b})"),
            B::Mul if dt == DType::Bool => format!("({a} && {b})"),
            B::Add => format!("({a} + {b})"),
            B::Sub if dt != DType::Bool => format!("({a} - {b})"),
            B::Mul => format!("({a} * {b})"),
            B::Div if float => format!("({a} / {b})"),
            B::Div if dt == DType::I32 => format!("{}({a}, {b})", self.need(Helper::DivI32)),
            B::Div if dt == DType::U32 => format!("{}({a}, {b})", self.need(Helper::DivU32)),
            B::Rem if float => format!("{}({a}, {b})", self.need(Helper::Fmod(Width::F32))),
            B::Rem if dt == DType::I32 => format!("{}({a}, {b})", self.need(Helper::RemI32)),
            B::Rem if dt == DType::U32 => format!("{}({a}, {b})", self.need(Helper::RemU32)),
            B::Max => self.max_min(dt, a, b, true)?,
            B::Min => self.max_min(dt, a, b, false)?,
            B::Pow | B::PowLibm if float => format!("{}({a}, {b})", self.need(Helper::PowF32)),
            B::Pow if dt == DType::I32 => format!("{}({a}, {b})", self.need(Helper::IPowI32)),
            B::Pow if dt == DType::U32 => format!("{}({a}, {b})", self.need(Helper::IPowU32)),
            B::Atan2 if float => format!("{}({a}, {b})", self.need(Helper::Atan2F32)),
            B::NextAfter if float => format!("{}({a}, {b})", self.need(Helper::NextAfter(Width::F32))),
            B::And if dt == DType::Bool => format!("({a} && {b})"),
            B::Or if dt == DType::Bool => format!("({a} || {b})"),
            B::Xor if dt == DType::Bool => format!("({a} != {b})"),
            B::And if int => format!("({a} & {b})"),
            B::Or if int => format!("({a} | {b})"),
            B::Xor if int => format!("({a} ^ {b})"),
            B::ShiftLeft if int => {
                format!("select({a} << (bitcast<u32>({b}) & 31u), {}, bitcast<u32>({b}) >= 32u)", zero(dt))
            }
            B::ShiftRightLogical if dt == DType::U32 => format!("select({a} >> ({b} & 31u), 0u, {b} >= 32u)"),
            B::ShiftRightLogical if dt == DType::I32 => format!(
                "select(bitcast<i32>(bitcast<u32>({a}) >> (bitcast<u32>({b}) & 31u)), 0i, bitcast<u32>({b}) >= 32u)"
            ),
            B::ShiftRightArithmetic if dt == DType::I32 => format!("({a} >> min(bitcast<u32>({b}), 31u))"),
            B::ShiftRightArithmetic if dt == DType::U32 => {
                format!("bitcast<u32>(bitcast<i32>({a}) >> min({b}, 31u))")
            }
            _ => return Err(unsupported(format!("{op:?} on {}", dt.short_name()))),
        })
    }

    fn binary64(&mut self, op: BinaryOp, dt: DType, a: &str, b: &str) -> Result<String> {
        use BinaryOp as B;
        let float = dt == DType::F64;
        Ok(match op {
            B::Add => format!("({a} + {b})"),
            B::Sub => format!("({a} - {b})"),
            B::Mul => format!("({a} * {b})"),
            B::Div if float => format!("({a} / {b})"),
            B::Div => format!("{}({a}, {b})", self.need(Helper::DivI64)),
            B::Rem if float => format!("{}({a}, {b})", self.need(Helper::Fmod(Width::F64))),
            B::Rem => format!("{}({a}, {b})", self.need(Helper::RemI64)),
            B::NextAfter if float => format!("{}({a}, {b})", self.need(Helper::NextAfter(Width::F64))),
            B::Max => self.max_min(dt, a, b, true)?,
            B::Min => self.max_min(dt, a, b, false)?,
            B::Pow if !float => format!("{}({a}, {b})", self.need(Helper::IPowI64)),
            B::And if !float => format!("({a} & {b})"),
            B::Or if !float => format!("({a} | {b})"),
            B::Xor if !float => format!("({a} ^ {b})"),
            B::ShiftLeft if !float => format!("select({a} << (u32({b}) & 63u), 0li, bitcast<u64>({b}) >= 64lu)"),
            B::ShiftRightLogical if !float => format!(
                "select(bitcast<i64>(bitcast<u64>({a}) >> (u32({b}) & 63u)), 0li, bitcast<u64>({b}) >= 64lu)"
            ),
            B::ShiftRightArithmetic if !float => format!("({a} >> u32(min(bitcast<u64>({b}), 63lu)))"),
            _ => return Err(unsupported(format!("{op:?} on {}", dt.short_name()))),
        })
    }

    fn compare(&mut self, op: CompareOp, dt: DType, a: &str, b: &str) -> Result<String> {
        let sym = match op {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        };
        // floats compared as integers (`math::CMP_KEY`): exact for subnormals and infinities, which WGSL lets
        // a float comparison flush or assume away; NaN compares unordered, tested on the bits
        let float = match dt {
            DType::F32 => Some(Width::F32),
            DType::F64 => Some(Width::F64),
            _ => None,
        };
        if let Some(w) = float {
            let nan = self.need(Helper::IsNan(w));
            let key = self.need(Helper::CmpKey(w));
            return Ok(match op {
                CompareOp::Ne => format!("({nan}({a}) || {nan}({b}) || {key}({a}) != {key}({b}))"),
                _ => format!("(!{nan}({a}) && !{nan}({b}) && {key}({a}) {sym} {key}({b}))"),
            });
        }
        Ok(match dt {
            DType::Bool => format!("(select(0u, 1u, {a}) {sym} select(0u, 1u, {b}))"),
            _ => format!("({a} {sym} {b})"),
        })
    }

    fn convert(&mut self, from: DType, to: DType, x: &str) -> Result<String> {
        use DType::*;
        if from == to {
            return Ok(x.to_string());
        }
        // float16 goes through f32 (exactly, one way; rounded once, the other)
        if from == F16 {
            let f = format!("{}({x})", self.need(Helper::F16ToF32));
            return self.convert(F32, to, &f);
        }
        if to == F16 {
            // from f64 through an f32 rounded to odd: one rounding in all (an integer source is exact in f32
            // wherever the float16 result is finite)
            let f = match from {
                F64 => format!("{}({x}, true)", self.need(Helper::F64ToF32)),
                _ => self.convert(from, F32, x)?,
            };
            return Ok(format!("{}({f})", self.need(Helper::F32ToF16)));
        }
        // Every float <-> int and f32 <-> f64 conversion goes through the bits (`math`): WGSL leaves the
        // rounding of an inexact int -> float conversion open, NaN -> int indeterminate, and defines no f64.
        // (magnitude, is negative) of a signed integer, the arguments of the int -> float helpers
        let mag32 = format!("bitcast<u32>(select({x}, 0i - {x}, {x} < 0i))");
        let neg32 = format!("{x} < 0i");
        let mag64 = format!("bitcast<u64>(select({x}, 0li - {x}, {x} < 0li)), {x} < 0li");
        Ok(match (from, to) {
            (F32, Bool) => format!("((bitcast<u32>({x}) & 0x7fffffffu) != 0u)"),
            (F32, I32) => format!("{}({x})", self.need(Helper::FToI32(Width::F32))),
            (F32, U32) => format!("{}({x})", self.need(Helper::FToU32(Width::F32))),
            (Bool, F32) => format!("select(0.0f, 1.0f, {x})"),
            (Bool, I32) => format!("select(0i, 1i, {x})"),
            (Bool, U32) => format!("select(0u, 1u, {x})"),
            (I32, F32) => format!("{}({mag32}, {neg32})", self.need(Helper::U32ToF32)),
            (U32, F32) => format!("{}({x}, false)", self.need(Helper::U32ToF32)),
            (I32, Bool) => format!("({x} != 0i)"),
            (U32, Bool) => format!("({x} != 0u)"),
            (I32, U32) => format!("bitcast<u32>({x})"),
            (U32, I32) => format!("bitcast<i32>({x})"),
            // 64-bit: float→int saturates with NaN → 0 (as XLA); int→int wraps; int→float rounds to even.
            (F64, Bool) => format!("((bitcast<u64>({x}) & 0x7ffffffffffffffflu) != 0lu)"),
            (F64, I32) => format!("{}({x})", self.need(Helper::FToI32(Width::F64))),
            (F64, U32) => format!("{}({x})", self.need(Helper::FToU32(Width::F64))),
            (F64, I64) => format!("{}({x})", self.need(Helper::F64ToI64)),
            (F32, I64) => format!("{}({x})", self.need(Helper::F32ToI64)),
            (F64, F32) => format!("{}({x}, false)", self.need(Helper::F64ToF32)),
            (I64, F32) => format!("{}({mag64})", self.need(Helper::U64ToF32)),
            (F32, F64) => format!("{}({x})", self.need(Helper::F32ToF64)),
            (I32, F64) => format!("{}(u64({mag32}), {neg32})", self.need(Helper::U64ToF64)),
            (U32, F64) => format!("{}(u64({x}), false)", self.need(Helper::U64ToF64)),
            (I64, F64) => format!("{}({mag64})", self.need(Helper::U64ToF64)),
            (Bool, F64) => format!("select(0.0lf, 1.0lf, {x})"),
            (Bool, I64) => format!("select(0li, 1li, {x})"),
            (I64, Bool) => format!("({x} != 0li)"),
            (I64, I32) => format!("i32({x})"),
            (I64, U32) => format!("u32({x})"),
            (I32, I64) => format!("i64({x})"),
            (U32, I64) => format!("bitcast<i64>(u64({x}))"),
            _ => return Err(unsupported(format!("convert {} to {}", from.short_name(), to.short_name()))),
        })
    }

    fn integer_pow(&mut self, dt: DType, x: &str, y: i32) -> Result<String> {
        let one = match dt {
            DType::F32 => "1.0f",
            DType::I32 => "1i",
            DType::U32 => "1u",
            DType::Bool => "true",
            DType::F64 => "1.0lf",
            DType::I64 => "1li",
            _ => return Err(unsupported(format!("integer_pow on {}", dt.short_name()))),
        };
        if y == 0 {
            return Ok(one.into());
        }
        if dt == DType::Bool {
            return Ok(x.into());
        }
        let float = matches!(dt, DType::F32 | DType::F64);
        if y < 0 && !float {
            return Ok(match dt {
                DType::I64 => format!(
                    "select(select(0li, 1li, {x} == 1li), {}, {x} == -1li)",
                    if y & 1 == 1 { "-1li" } else { "1li" }
                ),
                DType::I32 => format!(
                    "select(select(0i, 1i, {x} == 1i), {}, {x} == -1i)",
                    if y & 1 == 1 { "-1i" } else { "1i" }
                ),
                _ => format!("select(0u, 1u, {x} == 1u)"),
            });
        }
        // Square-and-multiply, as the CPU backend does (same rounding order).
        let mut n = y.unsigned_abs();
        let mut base = format!("({x})");
        let mut acc: Option<String> = None;
        while n > 0 {
            if n & 1 == 1 {
                acc = Some(match acc {
                    None => base.clone(),
                    Some(a) => format!("({a} * {base})"),
                });
            }
            n >>= 1;
            if n > 0 {
                base = format!("({base} * {base})");
            }
        }
        let p = acc.unwrap_or_else(|| one.into());
        Ok(if y < 0 { format!("({one} / {p})") } else { p })
    }
}

pub(super) fn zero(dt: DType) -> &'static str {
    match dt {
        DType::I32 => "0i",
        DType::U32 => "0u",
        DType::F32 => "0.0f",
        DType::I64 => "0li",
        DType::F64 => "0.0lf",
        _ => "false",
    }
}

/// Accumulator type in workgroup memory / registers for a reduction of `dt` (bool kept as u32 in shared).
fn acc_ty(dt: DType) -> Result<&'static str> {
    sty(dt)
}

/// The identity of reduction `op` on `dt`, as an accumulator value (bool as u32).
fn reduce_identity(op: ReduceOp, dt: DType) -> Result<String> {
    use ReduceOp as R;
    Ok(match (op, dt) {
        (R::Sum, DType::F32) => "0.0f".into(),
        (R::Prod, DType::F32) => "1.0f".into(),
        (R::Max, DType::F32) => "bitcast<f32>(0xff800000u)".into(),
        (R::Min, DType::F32) => "bitcast<f32>(0x7f800000u)".into(),
        (R::Sum | R::Or | R::Max, DType::Bool) => "0u".into(),
        (R::Prod | R::And | R::Min, DType::Bool) => "1u".into(),
        (R::Sum | R::Or, DType::I32) => "0i".into(),
        (R::Sum | R::Or, DType::U32) => "0u".into(),
        (R::Prod, DType::I32) => "1i".into(),
        (R::Prod, DType::U32) => "1u".into(),
        (R::And, DType::I32) => "-1i".into(),
        (R::And, DType::U32) => "0xffffffffu".into(),
        (R::Max, DType::I32) => "bitcast<i32>(0x80000000u)".into(),
        (R::Min, DType::I32) => "2147483647i".into(),
        (R::Max, DType::U32) => "0u".into(),
        (R::Min, DType::U32) => "0xffffffffu".into(),
        (R::Sum, DType::F64) => "0.0lf".into(),
        (R::Prod, DType::F64) => "1.0lf".into(),
        (R::Max, DType::F64) => "bitcast<f64>(0xfff0000000000000lu)".into(),
        (R::Min, DType::F64) => "bitcast<f64>(0x7ff0000000000000lu)".into(),
        (R::Sum | R::Or, DType::I64) => "0li".into(),
        (R::Prod, DType::I64) => "1li".into(),
        (R::And, DType::I64) => "-1li".into(),
        (R::Max, DType::I64) => "bitcast<i64>(0x8000000000000000lu)".into(),
        (R::Min, DType::I64) => "9223372036854775807li".into(),
        _ => return Err(unsupported(format!("reduce {op:?} on {}", dt.short_name()))),
    })
}

/// `acc ⊕ x` on accumulator values (bool as u32).
fn reduce_combine(e: &mut Emit, op: ReduceOp, dt: DType, a: &str, b: &str) -> Result<String> {
    use ReduceOp as R;
    Ok(match (op, dt) {
        (R::Sum | R::Or | R::Max, DType::Bool) => format!("({a} | {b})"),
        (R::Prod | R::And | R::Min, DType::Bool) => format!("({a} & {b})"),
        (R::Sum, _) => format!("({a} + {b})"),
        (R::Prod, _) => format!("({a} * {b})"),
        (R::Max, _) => e.max_min(dt, a, b, true)?,
        (R::Min, _) => e.max_min(dt, a, b, false)?,
        (R::And, DType::I32 | DType::U32 | DType::I64) => format!("({a} & {b})"),
        (R::Or, DType::I32 | DType::U32 | DType::I64) => format!("({a} | {b})"),
        _ => return Err(unsupported(format!("reduce {op:?} on {}", dt.short_name()))),
    })
}

/// A body value as an accumulator value.
fn to_acc(dt: DType, v: &str) -> String {
    if dt == DType::Bool {
        format!("select(0u, 1u, {v})")
    } else {
        v.to_string()
    }
}

/// Whether candidate (bv, bi) beats (av, ai) for argmax/argmin: better value, NaN beats non-NaN, ties and
/// NaN pairs go to the lower index.
fn arg_better(e: &mut Emit, dt: DType, is_max: bool, av: &str, ai: &str, bv: &str, bi: &str) -> String {
    let cmp = if is_max { ">" } else { "<" };
    let w = match dt {
        DType::F32 => Width::F32,
        DType::F64 => Width::F64,
        _ => return format!("({bv} {cmp} {av} || ({bv} == {av} && {bi} < {ai}))"),
    };
    // floats ordered by their integer keys, as `compare` does
    let nan = e.need(Helper::IsNan(w));
    let key = e.need(Helper::CmpKey(w));
    let (kb, ka) = (format!("{key}({bv})"), format!("{key}({av})"));
    format!(
        "(({nan}({bv}) && (!{nan}({av}) || {bi} < {ai})) || (!{nan}({av}) && !{nan}({bv}) && ({kb} {cmp} {ka} || ({kb} == {ka} && {bi} < {ai}))))"
    )
}

/// Row-major coordinate expressions of `axes` (sizes from `domain`) decomposed from linear index `lin`.
pub(super) fn decompose(domain: &[usize], axes: &[usize], lin: &str, coords: &mut [String]) {
    let mut stride: usize = 1;
    for &a in axes.iter().rev() {
        let d = domain[a];
        coords[a] = if d == 1 {
            "0u".into()
        } else if stride == 1 && axes.len() == 1 {
            lin.to_string()
        } else if stride == 1 {
            format!("({lin} % {d}u)")
        } else if a == axes[0] {
            format!("({lin} / {stride}u)")
        } else {
            format!("(({lin} / {stride}u) % {d}u)")
        };
        stride = stride.saturating_mul(d);
    }
}

/// The `let` statements of elementwise kernel `k`'s body at coordinates `coords` (one expression per domain
/// axis), for a loop kernel: input `j` reads `local[j]` when set, else binding `in_bind[j]`. Helpers it
/// needs are added to `helpers`. Values are named `v0, v1, ...`: emit each body in its own block.
pub(super) fn kernel_body(
    k: &Kernel,
    in_bind: Vec<usize>,
    local: Vec<Option<String>>,
    coords: Vec<String>,
    helpers: &mut BTreeSet<Helper>,
    indent: &str,
) -> Result<String> {
    let mut e = Emit { k, helpers: std::mem::take(helpers), in_bind, coords, local };
    let mut out = String::new();
    let r = e.body(&mut out, indent);
    *helpers = e.helpers;
    r.map(|_| out)
}

/// Whether kernel `k` touches float16 (its shader then needs `enable f16;`, hence the `shader-f16` feature).
fn uses_f16(k: &Kernel, plan: &Plan) -> bool {
    k.body.iter().any(|i| i.dtype == DType::F16)
        || k.inputs.iter().any(|i| i.dtype == DType::F16)
        || k.outputs.iter().any(|o| plan.slots.get(o.slot).is_some_and(|a| a.dtype == DType::F16))
}

/// The shader for kernel `k` of `plan`. `max_groups` is the adapter's workgroups-per-dimension limit.
pub fn kernel_shader(k: &Kernel, plan: &Plan, max_groups: u32) -> Result<KernelShader> {
    if let Some(at) = k.f16_arithmetic() {
        return Err(Error::Codegen(format!("kernel {}: float16 arithmetic at {at} (it should have been rewritten to float32)", k.name)));
    }
    let n_dom: usize = k.domain.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or_else(|| unsupported("domain too large"))?;
    if n_dom > u32::MAX as usize / 2 {
        return Err(unsupported(format!("kernel {} has {n_dom} points (more than 2^31)", k.name)));
    }
    // Bindings: inputs deduplicated by slot (read-only), then outputs.
    let mut bindings: Vec<Binding> = vec![];
    let mut in_bind = vec![];
    for inp in &k.inputs {
        let b = match bindings.iter().position(|b| b.slot == inp.slot) {
            Some(b) => b,
            None => {
                bindings.push(Binding { slot: inp.slot, write: false });
                bindings.len() - 1
            }
        };
        in_bind.push(b);
    }
    let mut out_bind = vec![];
    for o in &k.outputs {
        bindings.push(Binding { slot: o.slot, write: true });
        out_bind.push(bindings.len() - 1);
    }
    let ndim = k.domain.len();
    let mut e = Emit { k, helpers: BTreeSet::new(), in_bind, coords: vec!["0u".into(); ndim], local: vec![] };

    let mut decl = String::new();
    for (bi, b) in bindings.iter().enumerate() {
        let dt = plan.slots.get(b.slot).ok_or_else(|| Error::Codegen(format!("kernel binds missing slot {}", b.slot)))?.dtype;
        let _ = writeln!(
            decl,
            "@group(0) @binding({bi}) var<storage, {}> b{bi}: array<{}>;",
            if b.write { "read_write" } else { "read" },
            sty(dt)?
        );
    }
    let out_dt = |o: &crate::plan::KernelOutput| -> Result<DType> {
        k.body.get(o.value).map(|i| i.dtype).ok_or_else(|| Error::Codegen(format!("output reads %{}", o.value)))
    };
    let store_expr = |dt: DType, v: &str| -> String {
        if dt == DType::Bool {
            format!("select(0u, 1u, {v})")
        } else {
            v.to_string()
        }
    };

    let mut main = String::new();
    let groups_for = |n: u64| -> [u32; 3] {
        let g = n.max(1);
        let x = g.min(max_groups as u64);
        let y = g.div_ceil(x);
        [x as u32, y as u32, 1]
    };
    let groups;
    let mut shared = String::new();
    let mut split: u32 = 1;
    let mut n_out_all: u64 = 0;
    if k.reduce_axes.is_empty() {
        let n = n_dom as u64;
        // Large domains: each invocation takes POINTS_PER_INVOCATION points, one invocation-count apart
        // (loads stay coalesced), so more bytes are in flight per thread and fewer workgroups launch.
        let per = if n >= LARGE_DOMAIN { POINTS_PER_INVOCATION } else { 1 };
        let threads = n.div_ceil(per);
        groups = groups_for(threads.div_ceil(WG as u64));
        let ind = if per > 1 { "    " } else { "  " };
        if per > 1 {
            let _ = writeln!(main, "  let g0 = (wid.y * {}u + wid.x) * {WG}u + lid;", groups[0]);
            let _ = writeln!(main, "  if (g0 >= {threads}u) {{ return; }}");
            let _ = writeln!(main, "  for (var q: u32 = 0u; q < {per}u; q = q + 1u) {{");
            let _ = writeln!(main, "    let gid = g0 + q * {threads}u;");
            let _ = writeln!(main, "    if (gid >= {n}u) {{ break; }}");
        } else {
            let _ = writeln!(main, "  let gid = (wid.y * {}u + wid.x) * {WG}u + lid;", groups[0]);
            let _ = writeln!(main, "  if (gid >= {n}u) {{ return; }}");
        }
        let axes: Vec<usize> = (0..ndim).collect();
        let mut coords = vec!["0u".to_string(); ndim];
        decompose(&k.domain, &axes, "gid", &mut coords);
        for (a, c) in coords.into_iter().enumerate() {
            let _ = writeln!(main, "{ind}let c{a} = {c};");
            e.coords[a] = format!("c{a}");
        }
        e.body(&mut main, ind)?;
        for (o, &b) in k.outputs.iter().zip(&out_bind) {
            if o.kind != OutputKind::Store {
                return Err(Error::Codegen("reducing output in a kernel without reduce axes".into()));
            }
            let _ = writeln!(main, "{ind}b{b}[gid] = {};", store_expr(out_dt(o)?, &format!("v{}", o.value)));
        }
        if per > 1 {
            let _ = writeln!(main, "  }}");
        }
    } else {
        let red = &k.reduce_axes;
        if red.iter().any(|&a| a >= ndim) {
            return Err(Error::Codegen(format!("reduce axis out of range in {}", k.name)));
        }
        let outer: Vec<usize> = (0..ndim).filter(|a| !red.contains(a)).collect();
        let n_out: u64 = outer.iter().map(|&a| k.domain[a] as u64).product();
        let n_red: u64 = red.iter().map(|&a| k.domain[a] as u64).product();
        let tree = n_red >= 512 && n_out <= 16384;
        // Few outputs over a long reduction: split each into chunks of workgroups (two passes).
        if tree && n_red >= 65536 && n_out <= 64 && k.outputs.iter().all(|o| matches!(o.kind, OutputKind::Reduce(_))) {
            // Enough workgroups to fill a large GPU (thousands in flight), ~16K points each.
            split = (n_red / 16384).clamp(2, MAX_SPLIT) as u32;
        }
        n_out_all = n_out;
        // Domain strides (row-major) for Store outputs inside a reduction kernel.
        let mut dstride = vec![1u64; ndim];
        for a in (0..ndim.saturating_sub(1)).rev() {
            dstride[a] = dstride[a + 1] * k.domain[a + 1] as u64;
        }
        let lin_dom = |coords: &[String]| -> String {
            let t: Vec<String> = (0..ndim)
                .filter(|&a| k.domain[a] > 1)
                .map(|a| if dstride[a] == 1 { coords[a].clone() } else { format!("{} * {}u", coords[a], dstride[a]) })
                .collect();
            if t.is_empty() {
                "0u".into()
            } else {
                t.join(" + ")
            }
        };
        let chunk_len = n_red.div_ceil(split as u64);
        let (oidx, rstart, rstep) = if split > 1 {
            groups = groups_for(n_out * split as u64);
            let _ = writeln!(main, "  let w = wid.y * {}u + wid.x;", groups[0]);
            let _ = writeln!(main, "  let o = w / {split}u;");
            let _ = writeln!(main, "  let chunk = w % {split}u;");
            let _ = writeln!(main, "  if (o >= {n_out}u) {{ return; }}");
            let _ = writeln!(main, "  let r_end = min(chunk * {chunk_len}u + {chunk_len}u, {n_red}u);");
            ("o", "chunk * {chunk_len}u + lid", format!("{WG}u"))
        } else if tree {
            groups = groups_for(n_out);
            let _ = writeln!(main, "  let o = wid.y * {}u + wid.x;", groups[0]);
            let _ = writeln!(main, "  if (o >= {n_out}u) {{ return; }}");
            ("o", "lid", format!("{WG}u"))
        } else {
            groups = groups_for(n_out.div_ceil(WG as u64));
            let _ = writeln!(main, "  let o = (wid.y * {}u + wid.x) * {WG}u + lid;", groups[0]);
            let _ = writeln!(main, "  if (o >= {n_out}u) {{ return; }}");
            ("o", "0u", "1u".to_string())
        };
        let mut coords = vec!["0u".to_string(); ndim];
        decompose(&k.domain, &outer, oidx, &mut coords);
        for &a in &outer {
            let _ = writeln!(main, "  let c{a} = {};", coords[a]);
            e.coords[a] = format!("c{a}");
        }
        // Accumulators.
        for (j, o) in k.outputs.iter().enumerate() {
            let dt = out_dt(o)?;
            match o.kind {
                OutputKind::Store => {}
                OutputKind::Reduce(op) => {
                    let _ = writeln!(main, "  var acc{j}: {} = {};", acc_ty(dt)?, reduce_identity(op, dt)?);
                }
                OutputKind::ArgReduce { .. } => {
                    if red.len() != 1 {
                        return Err(unsupported("argmax/argmin over more than one axis"));
                    }
                    let _ = writeln!(main, "  var accv{j}: {} = v_init{j}();", acc_ty(dt)?);
                    let _ = writeln!(main, "  var acci{j}: u32 = 0xffffffffu;");
                }
            }
        }
        let rstart = rstart.replace("{chunk_len}", &chunk_len.to_string());
        let rend = if split > 1 { "r_end".to_string() } else { format!("{n_red}u") };
        let _ = writeln!(main, "  for (var r: u32 = {rstart}; r < {rend}; r = r + {rstep}) {{");
        let mut rc = vec!["0u".to_string(); ndim];
        decompose(&k.domain, red, "r", &mut rc);
        for &a in red {
            let _ = writeln!(main, "    let c{a} = {};", rc[a]);
            e.coords[a] = format!("c{a}");
        }
        e.body(&mut main, "    ")?;
        let all_coords: Vec<String> = (0..ndim).map(|a| format!("c{a}")).collect();
        for (j, o) in k.outputs.iter().enumerate() {
            let dt = out_dt(o)?;
            let v = format!("v{}", o.value);
            match o.kind {
                OutputKind::Store => {
                    let _ = writeln!(main, "    b{}[{}] = {};", out_bind[j], lin_dom(&all_coords), store_expr(dt, &v));
                }
                OutputKind::Reduce(op) => {
                    let c = reduce_combine(&mut e, op, dt, &format!("acc{j}"), &to_acc(dt, &v))?;
                    let _ = writeln!(main, "    acc{j} = {c};");
                }
                OutputKind::ArgReduce { is_max } => {
                    let ri = format!("c{}", red[0]);
                    let better = arg_better(&mut e, dt, is_max, &format!("accv{j}"), &format!("acci{j}"), &to_acc(dt, &v), &ri);
                    let _ = writeln!(main, "    if (acci{j} == 0xffffffffu || {better}) {{ accv{j} = {}; acci{j} = {ri}; }}", to_acc(dt, &v));
                }
            }
        }
        let _ = writeln!(main, "  }}");
        // Combine across the workgroup (tree) and write.
        let mut writes = String::new();
        let wi = if tree { "    " } else { "  " };
        for (j, o) in k.outputs.iter().enumerate() {
            let dt = out_dt(o)?;
            let slot_dt = plan.slots[o.slot].dtype;
            match o.kind {
                OutputKind::Store => {}
                OutputKind::Reduce(op) => {
                    let at = acc_ty(dt)?;
                    if tree {
                        let _ = writeln!(shared, "var<workgroup> sh{j}: array<{at}, {WG}>;");
                        let _ = writeln!(main, "  sh{j}[lid] = acc{j};");
                    }
                    let at_idx = if split > 1 { format!("{oidx} * {split}u + chunk") } else { oidx.to_string() };
                    let _ = writeln!(writes, "{wi}b{}[{at_idx}] = {};", out_bind[j], if tree { format!("sh{j}[0]") } else { format!("acc{j}") });
                    let _ = op;
                }
                OutputKind::ArgReduce { .. } => {
                    let at = acc_ty(dt)?;
                    if tree {
                        let _ = writeln!(shared, "var<workgroup> shv{j}: array<{at}, {WG}>;");
                        let _ = writeln!(shared, "var<workgroup> shi{j}: array<u32, {WG}>;");
                        let _ = writeln!(main, "  shv{j}[lid] = accv{j};");
                        let _ = writeln!(main, "  shi{j}[lid] = acci{j};");
                    }
                    let idx = if tree { format!("shi{j}[0]") } else { format!("acci{j}") };
                    let cast = match slot_dt {
                        DType::I32 => format!("i32({idx})"),
                        DType::U32 => idx,
                        DType::I64 => format!("i64({idx})"),
                        d => return Err(unsupported(format!("argmax index dtype {}", d.short_name()))),
                    };
                    let _ = writeln!(writes, "{wi}b{}[{oidx}] = {cast};", out_bind[j]);
                }
            }
        }
        if tree {
            let _ = writeln!(main, "  workgroupBarrier();");
            let _ = writeln!(main, "  for (var s: u32 = {}u; s > 0u; s = s >> 1u) {{", WG / 2);
            let _ = writeln!(main, "    if (lid < s) {{");
            for (j, o) in k.outputs.iter().enumerate() {
                let dt = out_dt(o)?;
                match o.kind {
                    OutputKind::Store => {}
                    OutputKind::Reduce(op) => {
                        let c = reduce_combine(&mut e, op, dt, &format!("sh{j}[lid]"), &format!("sh{j}[lid + s]"))?;
                        let _ = writeln!(main, "      sh{j}[lid] = {c};");
                    }
                    OutputKind::ArgReduce { is_max } => {
                        let better = arg_better(&mut e, dt, is_max, &format!("shv{j}[lid]"), &format!("shi{j}[lid]"), &format!("shv{j}[lid + s]"), &format!("shi{j}[lid + s]"));
                        let _ = writeln!(main, "      if (shi{j}[lid + s] != 0xffffffffu && (shi{j}[lid] == 0xffffffffu || {better})) {{ shv{j}[lid] = shv{j}[lid + s]; shi{j}[lid] = shi{j}[lid + s]; }}");
                    }
                }
            }
            let _ = writeln!(main, "    }}");
            let _ = writeln!(main, "    workgroupBarrier();");
            let _ = writeln!(main, "  }}");
            let _ = writeln!(main, "  if (lid == 0u) {{");
            main.push_str(&writes);
            let _ = writeln!(main, "  }}");
        } else {
            main.push_str(&writes);
        }
        // Initial values for argreduce accumulators (any value: index 0xffffffff marks "none yet").
        for (j, o) in k.outputs.iter().enumerate() {
            if let OutputKind::ArgReduce { .. } = o.kind {
                let dt = out_dt(o)?;
                let _ = writeln!(shared, "fn v_init{j}() -> {} {{ return {}; }}", acc_ty(dt)?, zero_acc(dt));
            }
        }
    }

    let mut src = String::new();
    if uses_f16(k, plan) {
        let _ = writeln!(src, "enable f16;");
    }
    let _ = writeln!(src, "// cranax kernel {} domain={:?} reduce={:?}", k.name, k.domain, k.reduce_axes);
    src.push_str(&helper_source(&e.helpers));
    src.push_str(&decl);
    src.push_str(&shared);
    let _ = writeln!(src, "@compute @workgroup_size({WG})");
    let _ = writeln!(src, "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{");
    src.push_str(&main);
    src.push_str("}\n");
    let second = if split > 1 { Some(partials_shader(k, plan, split, n_out_all, max_groups)?) } else { None };
    Ok(KernelShader { source: src, bindings, groups, second })
}

fn zero_acc(dt: DType) -> &'static str {
    match dt {
        DType::Bool => "0u",
        d => zero(d),
    }
}

/// Row-major element strides of `shape`.
pub(super) fn row_major(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![1usize; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        st[a] = st[a + 1] * shape[a + 1];
    }
    st
}

/// WGSL expression: the element offset contributed by linear index `lin` over `dims` of an operand of
/// `shape` (row-major decomposition of `lin` over those dims, times the operand's strides).
pub(super) fn offset_expr(shape: &[usize], dims: &[usize], lin: &str) -> String {
    let st = row_major(shape);
    let mut coords = vec!["0u".to_string(); shape.len()];
    decompose(shape, dims, lin, &mut coords);
    let terms: Vec<String> = dims
        .iter()
        .filter(|&&d| shape[d] > 1)
        .map(|&d| if st[d] == 1 { coords[d].clone() } else { format!("{} * {}u", coords[d], st[d]) })
        .collect();
    if terms.is_empty() {
        "0u".into()
    } else {
        terms.join(" + ")
    }
}

/// The second pass of a split reduction: per output, one workgroup combines `chunks` partials
/// (bindings: one scratch buffer per output, then the outputs).
#[derive(Debug, Clone)]
pub struct SecondPass {
    pub source: String,
    pub groups: [u32; 3],
    pub chunks: u32,
}

fn partials_shader(k: &Kernel, plan: &Plan, chunks: u32, n_out: u64, max_groups: u32) -> Result<SecondPass> {
    let mut e = Emit { k, helpers: BTreeSet::new(), in_bind: vec![], coords: vec![], local: vec![] };
    let nouts = k.outputs.len();
    let mut decl = String::new();
    let mut shared = String::new();
    let mut main = String::new();
    let mut tree = String::new();
    let mut writes = String::new();
    for (j, o) in k.outputs.iter().enumerate() {
        let dt = k.body.get(o.value).map(|i| i.dtype).ok_or_else(|| Error::Codegen("output value".into()))?;
        let st = sty(plan.slots[o.slot].dtype)?;
        let at = acc_ty(dt)?;
        let op = match o.kind {
            OutputKind::Reduce(op) => op,
            _ => return Err(Error::Codegen("split reduction with a non-reduce output".into())),
        };
        let _ = writeln!(decl, "@group(0) @binding({j}) var<storage, read> p{j}: array<{st}>;");
        let _ = writeln!(decl, "@group(0) @binding({}) var<storage, read_write> q{j}: array<{st}>;", nouts + j);
        let _ = writeln!(shared, "var<workgroup> sh{j}: array<{at}, {WG}>;");
        let _ = writeln!(main, "  var a{j}: {at} = {};", reduce_identity(op, dt)?);
        let c = reduce_combine(&mut e, op, dt, &format!("a{j}"), &format!("p{j}[o * {chunks}u + i]"))?;
        let _ = writeln!(main, "  for (var i: u32 = lid; i < {chunks}u; i = i + {WG}u) {{ a{j} = {c}; }}");
        let _ = writeln!(main, "  sh{j}[lid] = a{j};");
        let c = reduce_combine(&mut e, op, dt, &format!("sh{j}[lid]"), &format!("sh{j}[lid + s]"))?;
        let _ = writeln!(tree, "      sh{j}[lid] = {c};");
        let _ = writeln!(writes, "    q{j}[o] = sh{j}[0];");
    }
    let x = n_out.clamp(1, max_groups as u64);
    let groups = [x as u32, n_out.div_ceil(x).max(1) as u32, 1];
    let mut src = String::new();
    let _ = writeln!(src, "// cranax kernel {} (second pass: {chunks} partials per output)", k.name);
    src.push_str(&helper_source(&e.helpers));
    src.push_str(&decl);
    src.push_str(&shared);
    let _ = writeln!(src, "@compute @workgroup_size({WG})");
    let _ = writeln!(src, "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{");
    let _ = writeln!(src, "  let o = wid.y * {}u + wid.x;", groups[0]);
    let _ = writeln!(src, "  if (o >= {n_out}u) {{ return; }}");
    src.push_str(&main);
    let _ = writeln!(src, "  workgroupBarrier();");
    let _ = writeln!(src, "  for (var s: u32 = {}u; s > 0u; s = s >> 1u) {{", WG / 2);
    let _ = writeln!(src, "    if (lid < s) {{");
    src.push_str(&tree);
    let _ = writeln!(src, "    }}");
    let _ = writeln!(src, "    workgroupBarrier();");
    let _ = writeln!(src, "  }}");
    let _ = writeln!(src, "  if (lid == 0u) {{");
    src.push_str(&writes);
    let _ = writeln!(src, "  }}");
    let _ = writeln!(src, "}}");
    Ok(SecondPass { source: src, groups, chunks })
}
