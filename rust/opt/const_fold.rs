//! Constant folding: equations whose operands are all literals and whose output is a scalar become
//! literals. Semantics match the backends: floats are computed in the output dtype's precision (f32 ops in
//! f32), integer division by zero gives -1 (all ones for unsigned) and remainder by zero the dividend,
//! `MIN / -1` wraps, shifts by ≥ the bit width give 0 (or the sign fill), float→int conversion saturates
//! (NaN → 0). Results that would be subnormal, and operations without an exact reference here (erf,
//! erf_inv, lgamma, digamma, any op not listed), are left to the backend.
use crate::ir::{Atom, BinaryOp, CompareOp, DType, Prim, Program, Scalar, UnaryOp};

fn as_f(s: Scalar) -> f64 {
    match s {
        Scalar::Float(f) => f,
        Scalar::Int(i) => i as f64,
        Scalar::Bool(b) => b as u8 as f64,
    }
}

fn as_i(s: Scalar) -> i64 {
    match s {
        Scalar::Int(i) => i,
        Scalar::Bool(b) => b as i64,
        Scalar::Float(f) => f as i64,
    }
}

fn as_b(s: Scalar) -> bool {
    match s {
        Scalar::Bool(b) => b,
        Scalar::Int(i) => i != 0,
        Scalar::Float(f) => f != 0.0,
    }
}

/// Converts with `convert_element_type` semantics (single rounding for int → f32).
pub fn convert(s: Scalar, to: DType) -> Scalar {
    match (s, to) {
        (Scalar::Int(i), DType::F32) => Scalar::Float(i as f32 as f64),
        _ => s.cast(to),
    }
}

macro_rules! float_ops {
    ($t:ty, $unary:ident, $binary:ident) => {
        fn $unary(op: UnaryOp, x: $t) -> Option<$t> {
            use UnaryOp::*;
            Some(match op {
                Neg => -x,
                Abs => x.abs(),
                Sign => {
                    if x.is_nan() || x == 0.0 {
                        x
                    } else {
                        x.signum()
                    }
                }
                Floor => x.floor(),
                Ceil => x.ceil(),
                Round => x.round(),
                RoundEven => x.round_ties_even(),
                Exp => x.exp(),
                Exp2 => x.exp2(),
                Log => x.ln(),
                Log1p => x.ln_1p(),
                Expm1 => x.exp_m1(),
                Sqrt => x.sqrt(),
                Rsqrt => 1.0 / x.sqrt(),
                Cbrt => x.cbrt(),
                Sin => x.sin(),
                Cos => x.cos(),
                Tan => x.tan(),
                Tanh => x.tanh(),
                Logistic => 1.0 / (1.0 + (-x).exp()),
                Asin => x.asin(),
                Acos => x.acos(),
                Atan => x.atan(),
                Sinh => x.sinh(),
                Cosh => x.cosh(),
                Asinh => x.asinh(),
                Acosh => x.acosh(),
                Atanh => x.atanh(),
                Square => x * x,
                // Not folded (left to the backend): ops without an exact reference here (erf, erf_inv,
                // lgamma, digamma, ...) and those that are not float-to-float.
                _ => return None,
            })
        }

        fn $binary(op: BinaryOp, a: $t, b: $t) -> Option<$t> {
            use BinaryOp::*;
            Some(match op {
                Add => a + b,
                Sub => a - b,
                Mul => a * b,
                Div => a / b,
                Rem => a % b,
                Max | Min => {
                    if a.is_nan() || b.is_nan() {
                        <$t>::NAN
                    } else if a == b {
                        // ±0: max prefers +0, min prefers -0
                        if (op == Max) != a.is_sign_negative() { a } else { b }
                    } else if (a > b) == (op == Max) {
                        a
                    } else {
                        b
                    }
                }
                Pow | PowLibm => a.powf(b),
                Atan2 => a.atan2(b),
                NextAfter => {
                    if a.is_nan() || b.is_nan() {
                        <$t>::NAN
                    } else if a == b {
                        b
                    } else if a == 0.0 {
                        let tiny = <$t>::from_bits(1);
                        if b > 0.0 { tiny } else { -tiny }
                    } else {
                        let bits = a.to_bits();
                        let up = (b > a) == (a > 0.0);
                        <$t>::from_bits(if up { bits + 1 } else { bits - 1 })
                    }
                }
                _ => return None,
            })
        }
    };
}

float_ops!(f32, unary_f32, binary_f32);
float_ops!(f64, unary_f64, binary_f64);

macro_rules! int_ops {
    ($t:ty, $ut:ty, $st:ty, $unary:ident, $binary:ident) => {
        fn $unary(op: UnaryOp, x: $t) -> Option<$t> {
            use UnaryOp::*;
            Some(match op {
                Neg => x.wrapping_neg(),
                Abs => (x as $st).wrapping_abs() as $t,
                Sign => {
                    let s = x as $st;
                    if <$t>::MIN == 0 {
                        (x != 0) as $t
                    } else {
                        s.signum() as $t
                    }
                }
                Not => !x,
                PopulationCount => x.count_ones() as $t,
                Square => x.wrapping_mul(x),
                _ => return None,
            })
        }

        fn $binary(op: BinaryOp, a: $t, b: $t) -> Option<$t> {
            use BinaryOp::*;
            let bits = <$t>::BITS as $ut;
            Some(match op {
                Add => a.wrapping_add(b),
                Sub => a.wrapping_sub(b),
                Mul => a.wrapping_mul(b),
                Div => {
                    if b == 0 {
                        !0
                    } else {
                        a.wrapping_div(b)
                    }
                }
                Rem => {
                    if b == 0 {
                        a
                    } else {
                        a.wrapping_rem(b)
                    }
                }
                Max => a.max(b),
                Min => a.min(b),
                And => a & b,
                Or => a | b,
                Xor => a ^ b,
                ShiftLeft => {
                    if (b as $ut) >= bits {
                        0
                    } else {
                        a << (b as $ut)
                    }
                }
                ShiftRightLogical => {
                    if (b as $ut) >= bits {
                        0
                    } else {
                        ((a as $ut) >> (b as $ut)) as $t
                    }
                }
                ShiftRightArithmetic => {
                    let s = (b as $ut).min(bits - 1);
                    ((a as $st) >> s) as $t
                }
                _ => return None,
            })
        }
    };
}

int_ops!(i32, u32, i32, unary_i32, binary_i32);
int_ops!(u32, u32, i32, unary_u32, binary_u32);
int_ops!(i64, u64, i64, unary_i64, binary_i64);
int_ops!(i8, u8, i8, unary_i8, binary_i8);
int_ops!(u8, u8, i8, unary_u8, binary_u8);
int_ops!(i16, u16, i16, unary_i16, binary_i16);
int_ops!(u16, u16, i16, unary_u16, binary_u16);

fn int_unary(op: UnaryOp, x: i64, d: DType) -> Option<i64> {
    match d {
        DType::I32 => unary_i32(op, x as i32).map(|v| v as i64),
        DType::U32 => unary_u32(op, x as u32).map(|v| v as i64),
        DType::I64 => unary_i64(op, x),
        DType::I8 => unary_i8(op, x as i8).map(|v| v as i64),
        DType::U8 => unary_u8(op, x as u8).map(|v| v as i64),
        DType::I16 => unary_i16(op, x as i16).map(|v| v as i64),
        DType::U16 => unary_u16(op, x as u16).map(|v| v as i64),
        _ => None,
    }
}

fn int_binary(op: BinaryOp, a: i64, b: i64, d: DType) -> Option<i64> {
    match d {
        DType::I32 => binary_i32(op, a as i32, b as i32).map(|v| v as i64),
        DType::U32 => binary_u32(op, a as u32, b as u32).map(|v| v as i64),
        DType::I64 => binary_i64(op, a, b),
        DType::I8 => binary_i8(op, a as i8, b as i8).map(|v| v as i64),
        DType::U8 => binary_u8(op, a as u8, b as u8).map(|v| v as i64),
        DType::I16 => binary_i16(op, a as i16, b as i16).map(|v| v as i64),
        DType::U16 => binary_u16(op, a as u16, b as u16).map(|v| v as i64),
        _ => None,
    }
}

fn float_result(x: f64, d: DType) -> Option<Scalar> {
    let x = match d {
        DType::F32 => x as f32 as f64,
        DType::F16 => crate::ir::dtype::round_to_f16(x),
        DType::BF16 => crate::ir::dtype::round_to_bf16(x),
        d if d.is_float8() => Scalar::Float(x).cast(d).as_f64(),
        _ => x,
    };
    let sub = if d == DType::F32 || d == DType::BF16 { (x as f32).is_subnormal() } else { x.is_subnormal() };
    if sub {
        None
    } else {
        Some(Scalar::Float(x))
    }
}

fn float_unary(op: UnaryOp, x: f64, d: DType) -> Option<Scalar> {
    match d {
        DType::F32 => float_result(unary_f32(op, x as f32)? as f64, d),
        _ => float_result(unary_f64(op, x)?, d),
    }
}

fn float_binary(op: BinaryOp, a: f64, b: f64, d: DType) -> Option<Scalar> {
    match d {
        DType::F32 => float_result(binary_f32(op, a as f32, b as f32)? as f64, d),
        _ => float_result(binary_f64(op, a, b)?, d),
    }
}

/// JAX's lowering of `integer_pow`: square-and-multiply, reciprocal for negative exponents.
fn integer_pow(x: Scalar, y: i32, d: DType) -> Option<Scalar> {
    let mut e = y.unsigned_abs();
    if d.is_float() {
        let mul = |a: f64, b: f64| if d == DType::F32 { (a as f32 * b as f32) as f64 } else { a * b };
        let mut base = as_f(x);
        let mut acc: Option<f64> = None;
        while e > 0 {
            if e & 1 == 1 {
                acc = Some(acc.map_or(base, |a| mul(a, base)));
            }
            e >>= 1;
            if e > 0 {
                base = mul(base, base);
            }
        }
        let r = acc.unwrap_or(1.0);
        let r = if y < 0 { if d == DType::F32 { (1.0f32 / r as f32) as f64 } else { 1.0 / r } } else { r };
        return float_result(r, d);
    }
    if y < 0 {
        return None;
    }
    let mut base = as_i(x);
    let mut acc: i64 = 1;
    while e > 0 {
        if e & 1 == 1 {
            acc = int_binary(BinaryOp::Mul, acc, base, d)?;
        }
        e >>= 1;
        if e > 0 {
            base = int_binary(BinaryOp::Mul, base, base, d)?;
        }
    }
    Some(Scalar::Int(acc))
}

fn compare(op: CompareOp, a: Scalar, b: Scalar, d: DType) -> bool {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = if d.is_float() {
        as_f(a).partial_cmp(&as_f(b))
    } else if d == DType::Bool {
        Some(as_b(a).cmp(&as_b(b)))
    } else {
        Some(as_i(a).cmp(&as_i(b)))
    };
    match (op, ord) {
        (CompareOp::Ne, None) => true,
        (_, None) => false,
        (CompareOp::Eq, Some(o)) => o == Ordering::Equal,
        (CompareOp::Ne, Some(o)) => o != Ordering::Equal,
        (CompareOp::Lt, Some(o)) => o == Ordering::Less,
        (CompareOp::Le, Some(o)) => o != Ordering::Greater,
        (CompareOp::Gt, Some(o)) => o == Ordering::Greater,
        (CompareOp::Ge, Some(o)) => o != Ordering::Less,
    }
}

fn bitcast(s: Scalar, from: DType, to: DType) -> Option<Scalar> {
    let bits: u64 = match from {
        DType::F16 => crate::ir::dtype::f64_to_f16_bits(as_f(s)) as u64,
        DType::BF16 => crate::ir::dtype::f64_to_bf16_bits(as_f(s)) as u64,
        d @ crate::ir::dtype::float8!() => d.float8_format().map_or(0, |f| f.from_f64(as_f(s))) as u64,
        DType::F32 => (as_f(s) as f32).to_bits() as u64,
        DType::F64 => as_f(s).to_bits(),
        DType::I32 | DType::U32 => as_i(s) as u32 as u64,
        DType::I8 | DType::U8 => as_i(s) as u8 as u64,
        DType::I16 | DType::U16 => as_i(s) as u16 as u64,
        DType::I64 => as_i(s) as u64,
        DType::Bool => return None,
    };
    Some(match to {
        DType::F16 => Scalar::Float(crate::ir::dtype::f16_bits_to_f32(bits as u16) as f64),
        DType::BF16 => Scalar::Float(crate::ir::dtype::bf16_bits_to_f32(bits as u16) as f64),
        d @ crate::ir::dtype::float8!() => Scalar::Float(crate::ir::dtype::float8_to_f64(d, bits as u8)),
        DType::F32 => Scalar::Float(f32::from_bits(bits as u32) as f64),
        DType::F64 => Scalar::Float(f64::from_bits(bits)),
        DType::I32 => Scalar::Int(bits as u32 as i32 as i64),
        DType::U32 => Scalar::Int(bits as u32 as i64),
        DType::I8 | DType::U8 | DType::I16 | DType::U16 => Scalar::Int(to.wrap_int(bits as i64)),
        DType::I64 => Scalar::Int(bits as i64),
        DType::Bool => return None,
    })
}

fn subnormal_input(args: &[(Scalar, DType)]) -> bool {
    args.iter().any(|(s, d)| match (s, d) {
        (Scalar::Float(f), DType::F32 | DType::BF16) => (*f as f32).is_subnormal(),
        (Scalar::Float(f), _) => f.is_subnormal(),
        _ => false,
    })
}

/// Evaluates `prim` on scalar literal operands, giving a scalar of `out` dtype, or `None` when it should
/// not be folded.
pub fn eval(prim: &Prim, args: &[(Scalar, DType)], out: DType) -> Option<Scalar> {
    if subnormal_input(args) {
        return None;
    }
    // float16 arithmetic is rewritten to float32 (`opt::f16`) before folding; only conversions and
    // data movement of float16 values are folded here.
    let f16 = out.is_half() || args.iter().any(|(_, d)| d.is_half());
    if f16 && !super::f16::moves_values(prim) {
        return None;
    }
    let arg = |i: usize| args.get(i).copied();
    match prim {
        Prim::Unary(op) => {
            let (x, d) = arg(0)?;
            match (op, d) {
                (UnaryOp::IsFinite, _) => Some(Scalar::Bool(as_f(x).is_finite())),
                (UnaryOp::Not, DType::Bool) => Some(Scalar::Bool(!as_b(x))),
                (_, d) if d.is_float() => float_unary(*op, as_f(x), d),
                (_, d) if d.is_int() => int_unary(*op, as_i(x), d).map(Scalar::Int),
                _ => None,
            }
        }
        Prim::Binary(op) => {
            let ((a, d), (b, _)) = (arg(0)?, arg(1)?);
            if d == DType::Bool {
                let (a, b) = (as_b(a), as_b(b));
                return Some(Scalar::Bool(match op {
                    BinaryOp::And | BinaryOp::Min => a & b,
                    BinaryOp::Or | BinaryOp::Max => a | b,
                    BinaryOp::Xor => a ^ b,
                    _ => return None,
                }));
            }
            if d.is_float() {
                float_binary(*op, as_f(a), as_f(b), d)
            } else {
                int_binary(*op, as_i(a), as_i(b), d).map(Scalar::Int)
            }
        }
        Prim::Compare(op) => {
            let ((a, d), (b, _)) = (arg(0)?, arg(1)?);
            Some(Scalar::Bool(compare(*op, a, b, d)))
        }
        Prim::IntegerPow { y } => {
            let (x, d) = arg(0)?;
            integer_pow(x, *y, d)
        }
        Prim::SelectN => {
            let (p, _) = arg(0)?;
            let n = args.len().checked_sub(1)?;
            let k = match p {
                Scalar::Bool(b) => b as usize,
                other => as_i(other).clamp(0, n as i64 - 1) as usize,
            };
            arg(1 + k).map(|(s, _)| s)
        }
        Prim::Clamp => {
            let ((lo, d), (x, _), (hi, _)) = (arg(0)?, arg(1)?, arg(2)?);
            let max = Prim::Binary(BinaryOp::Max);
            let min = Prim::Binary(BinaryOp::Min);
            let t = eval(&max, &[(x, d), (lo, d)], d)?;
            eval(&min, &[(t, d), (hi, d)], d)
        }
        Prim::Fma => {
            let ((a, d), (b, _), (c, _)) = (arg(0)?, arg(1)?, arg(2)?);
            let (a, b, c) = (as_f(a), as_f(b), as_f(c));
            match d {
                DType::F32 => float_result((a as f32).mul_add(b as f32, c as f32) as f64, d),
                DType::F64 => float_result(a.mul_add(b, c), d),
                _ => None,
            }
        }
        Prim::ConvertElementType { new_dtype } => {
            let r = convert(arg(0)?.0, *new_dtype);
            match r {
                Scalar::Float(f) => float_result(f, *new_dtype),
                other => Some(other),
            }
        }
        Prim::BitcastConvertType { new_dtype } => {
            let (x, d) = arg(0)?;
            match bitcast(x, d, *new_dtype)? {
                // a NaN payload does not survive a literal (kept as f64): leave it to the backend
                Scalar::Float(f) if new_dtype.is_half() && f.is_nan() => None,
                Scalar::Float(f) if f.is_subnormal() || (matches!(*new_dtype, DType::F32 | DType::BF16) && (f as f32).is_subnormal()) => None,
                other => Some(other),
            }
        }
        Prim::Iota { .. } => Some(convert(Scalar::Int(0), out)),
        Prim::BroadcastInDim { .. }
        | Prim::Reshape { .. }
        | Prim::Squeeze { .. }
        | Prim::ExpandDims { .. }
        | Prim::Transpose { .. }
        | Prim::Slice { .. }
        | Prim::Rev { .. }
        | Prim::Reduce { .. }
        | Prim::Copy => match prim {
            Prim::Reduce { axes, .. } if !axes.is_empty() => None,
            _ => arg(0).map(|(s, _)| s),
        },
        Prim::ArgReduce { .. } | Prim::OptimizationBarrier | Prim::Lib(_) | Prim::Control(_) => None,
    }
}

/// Folds every foldable equation of `p`, substituting literals into later equations and the outputs.
pub fn run(p: Program) -> Program {
    super::subst::replace_outputs(p, |e| {
        if e.outputs.len() != 1 || !e.outputs[0].1.shape.is_empty() {
            return None;
        }
        let lits: Vec<(Scalar, DType)> = e
            .inputs
            .iter()
            .map(|a| match a {
                Atom::Lit(s, d) => Some((*s, *d)),
                Atom::Var(_) => None,
            })
            .collect::<Option<_>>()?;
        let out = e.outputs[0].1.dtype;
        let v = eval(&e.prim, &lits, out)?;
        crate::ir::verify::check_literal(&v, out).ok()?;
        Some(vec![Atom::Lit(v, out)])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Aval, Eqn};

    fn ev(prim: Prim, args: &[(Scalar, DType)], out: DType) -> Option<Scalar> {
        eval(&prim, args, out)
    }
    fn i32s(i: i64) -> (Scalar, DType) {
        (Scalar::Int(i), DType::I32)
    }
    fn u32s(i: i64) -> (Scalar, DType) {
        (Scalar::Int(i), DType::U32)
    }
    fn f32s(f: f64) -> (Scalar, DType) {
        (Scalar::Float(f), DType::F32)
    }
    use BinaryOp as B;

    #[test]
    fn integer_semantics() {
        let b = |op, a, c| ev(Prim::Binary(op), &[a, c], a.1);
        assert_eq!(b(B::Div, i32s(7), i32s(0)), Some(Scalar::Int(-1)));
        assert_eq!(b(B::Div, u32s(7), u32s(0)), Some(Scalar::Int(u32::MAX as i64)));
        assert_eq!(b(B::Rem, i32s(7), i32s(0)), Some(Scalar::Int(7)));
        assert_eq!(b(B::Div, i32s(i32::MIN as i64), i32s(-1)), Some(Scalar::Int(i32::MIN as i64)));
        assert_eq!(b(B::Rem, i32s(i32::MIN as i64), i32s(-1)), Some(Scalar::Int(0)));
        assert_eq!(b(B::Div, i32s(-7), i32s(2)), Some(Scalar::Int(-3)));
        assert_eq!(b(B::Add, i32s(i32::MAX as i64), i32s(1)), Some(Scalar::Int(i32::MIN as i64)));
        assert_eq!(b(B::Sub, u32s(0), u32s(1)), Some(Scalar::Int(u32::MAX as i64)));
        assert_eq!(b(B::ShiftLeft, i32s(1), i32s(32)), Some(Scalar::Int(0)));
        assert_eq!(b(B::ShiftRightArithmetic, i32s(-8), i32s(40)), Some(Scalar::Int(-1)));
        assert_eq!(b(B::ShiftRightLogical, i32s(-1), i32s(28)), Some(Scalar::Int(15)));
        assert_eq!(b(B::ShiftRightLogical, i32s(-1), i32s(-1)), Some(Scalar::Int(0)));
        assert_eq!(ev(Prim::Unary(UnaryOp::Neg), &[i32s(i32::MIN as i64)], DType::I32), Some(Scalar::Int(i32::MIN as i64)));
        assert_eq!(ev(Prim::Unary(UnaryOp::Not), &[u32s(0)], DType::U32), Some(Scalar::Int(u32::MAX as i64)));
        assert_eq!(ev(Prim::Unary(UnaryOp::PopulationCount), &[i32s(-1)], DType::I32), Some(Scalar::Int(32)));
        let i8s = |i: i64| (Scalar::Int(i), DType::I8);
        let u8s = |i: i64| (Scalar::Int(i), DType::U8);
        assert_eq!(ev(Prim::Binary(BinaryOp::Add), &[i8s(127), i8s(1)], DType::I8), Some(Scalar::Int(-128)));
        assert_eq!(ev(Prim::Binary(BinaryOp::Add), &[u8s(250), u8s(10)], DType::U8), Some(Scalar::Int(4)));
        assert_eq!(ev(Prim::Binary(BinaryOp::Div), &[i8s(-128), i8s(-1)], DType::I8), Some(Scalar::Int(-128)));
        assert_eq!(ev(Prim::Binary(BinaryOp::Div), &[u8s(7), u8s(0)], DType::U8), Some(Scalar::Int(255)));
        assert_eq!(ev(Prim::Binary(BinaryOp::ShiftLeft), &[u8s(1), u8s(8)], DType::U8), Some(Scalar::Int(0)));
        assert_eq!(ev(Prim::Unary(UnaryOp::PopulationCount), &[i8s(-1)], DType::I8), Some(Scalar::Int(8)));
        assert_eq!(ev(Prim::ConvertElementType { new_dtype: DType::U8 }, &[f32s(-3.5)], DType::U8), Some(Scalar::Int(0)));
        assert_eq!(ev(Prim::ConvertElementType { new_dtype: DType::I16 }, &[i32s(40000)], DType::I16), Some(Scalar::Int(40000 - 65536)));
        assert_eq!(ev(Prim::BitcastConvertType { new_dtype: DType::U8 }, &[i8s(-1)], DType::U8), Some(Scalar::Int(255)));
        assert_eq!(ev(Prim::IntegerPow { y: 3 }, &[i32s(-2)], DType::I32), Some(Scalar::Int(-8)));
    }

    #[test]
    fn float_semantics() {
        // computed in f32: 0.1f32 + 0.2f32 is 0.3f32 (not the f64 sum)
        let r = ev(Prim::Binary(B::Add), &[f32s(0.1f32 as f64), f32s(0.2f32 as f64)], DType::F32);
        assert_eq!(r, Some(Scalar::Float((0.1f32 + 0.2f32) as f64)));
        let r = ev(Prim::Unary(UnaryOp::Exp), &[f32s(1.0)], DType::F32);
        assert_eq!(r, Some(Scalar::Float(1f32.exp() as f64)));
        assert!(matches!(ev(Prim::Binary(B::Max), &[f32s(f64::NAN), f32s(1.0)], DType::F32), Some(Scalar::Float(f)) if f.is_nan()));
        assert_eq!(ev(Prim::Unary(UnaryOp::Round), &[f32s(2.5)], DType::F32), Some(Scalar::Float(3.0)));
        assert_eq!(ev(Prim::Unary(UnaryOp::RoundEven), &[f32s(2.5)], DType::F32), Some(Scalar::Float(2.0)));
        assert_eq!(ev(Prim::Unary(UnaryOp::Erf), &[f32s(0.5)], DType::F32), None);
        // subnormal results are left to the backend
        assert_eq!(ev(Prim::Binary(B::Mul), &[f32s(1e-30), f32s(1e-10)], DType::F32), None);
        assert_eq!(ev(Prim::ConvertElementType { new_dtype: DType::I32 }, &[f32s(f64::NAN)], DType::I32), Some(Scalar::Int(0)));
        assert_eq!(ev(Prim::ConvertElementType { new_dtype: DType::I32 }, &[f32s(1e20)], DType::I32), Some(Scalar::Int(i32::MAX as i64)));
        assert_eq!(ev(Prim::BitcastConvertType { new_dtype: DType::I32 }, &[f32s(1.0)], DType::I32), Some(Scalar::Int(0x3f80_0000)));
        assert_eq!(ev(Prim::Compare(CompareOp::Ne), &[f32s(f64::NAN), f32s(f64::NAN)], DType::Bool), Some(Scalar::Bool(true)));
        assert_eq!(ev(Prim::IntegerPow { y: -2 }, &[f32s(2.0)], DType::F32), Some(Scalar::Float(0.25)));
        assert_eq!(ev(Prim::Binary(B::NextAfter), &[f32s(1.0), f32s(2.0)], DType::F32), Some(Scalar::Float(f32::from_bits(0x3f80_0001) as f64)));
        assert_eq!(ev(Prim::Clamp, &[f32s(0.0), f32s(5.0), f32s(1.0)], DType::F32), Some(Scalar::Float(1.0)));
        // fma rounds once: (1 + 2^-20)(1 - 2^-20) - 1 = -2^-40 exactly (two roundings give 0)
        let e = 2f64.powi(-20);
        let fma = ev(Prim::Fma, &[f32s(1.0 + e), f32s(1.0 - e), f32s(-1.0)], DType::F32);
        assert_eq!(fma, Some(Scalar::Float(-(2f64.powi(-40)))));
        let f64s = |x: f64| (Scalar::Float(x), DType::F64);
        let e = 2f64.powi(-30);
        assert_eq!(ev(Prim::Fma, &[f64s(1.0 + e), f64s(1.0 - e), f64s(-1.0)], DType::F64), Some(Scalar::Float(-(2f64.powi(-60)))));
    }

    #[test]
    fn folds_program() {
        let s = |d| Aval::scalar(d);
        let p = Program {
            name: "c".into(),
            invars: vec![(0, Aval::new(DType::F32, vec![3]))],
            eqns: vec![
                Eqn { prim: Prim::Binary(B::Mul), inputs: vec![Atom::Lit(Scalar::Float(2.0), DType::F32), Atom::Lit(Scalar::Float(3.0), DType::F32)], outputs: vec![(1, s(DType::F32))] },
                Eqn { prim: Prim::Unary(UnaryOp::Neg), inputs: vec![Atom::Var(1)], outputs: vec![(2, s(DType::F32))] },
                Eqn { prim: Prim::Binary(B::Mul), inputs: vec![Atom::Var(0), Atom::Var(2)], outputs: vec![(3, Aval::new(DType::F32, vec![3]))] },
            ],
            outvars: vec![Atom::Var(3), Atom::Var(2)],
        };
        let q = run(p);
        crate::ir::verify::verify(&q).unwrap();
        assert_eq!(q.eqns.len(), 1);
        assert_eq!(q.eqns[0].inputs[1], Atom::Lit(Scalar::Float(-6.0), DType::F32));
        assert_eq!(q.outvars[1], Atom::Lit(Scalar::Float(-6.0), DType::F32));
    }
}
