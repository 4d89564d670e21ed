//! Prints a program in JAX's jaxpr text form, and the canonical text used as a structural cache key.
use std::collections::HashMap;
use std::fmt::Write;

use crate::ir::{Atom, Aval, DType, Prim, Program, Scalar, UnaryOp, VarId};

/// JAX's variable names: a..z, ba..bz, ca.. (base-26 digits with `a` as zero).
pub fn var_name(mut n: usize) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'a' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

/// The shortest scientific form (`{:e}`) whose value rounds back to the same float16 (or bfloat16, for
/// `dtype` BF16) as `f`.
fn f16_shortest(f: f64, dtype: DType) -> String {
    let to_bits = |x: f64| -> u16 {
        match dtype.float8_format() {
            Some(f8) => f8.from_f64(x) as u16,
            None if dtype == DType::BF16 => crate::ir::dtype::f64_to_bf16_bits(x),
            None => crate::ir::dtype::f64_to_f16_bits(x),
        }
    };
    let bits = to_bits(f);
    for prec in 0..5 {
        let s = format!("{:.*e}", prec, f);
        if s.parse::<f64>().ok().map(to_bits) == Some(bits) {
            return s;
        }
    }
    format!("{:e}", f)
}

/// Python's `repr` of a float (shortest round-trip digits; scientific below 1e-4 and from 1e16), taking
/// the shortest digits of the value in `dtype`'s precision.
pub fn py_float(f: f64, dtype: DType) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let e = match dtype {
        DType::F32 => format!("{:e}", f as f32),
        d if d.is_half() => f16_shortest(f, dtype),
        _ => format!("{:e}", f),
    };
    // e looks like "-1.2345e-7" or "1e0"
    let (mant, exp) = match e.split_once('e') {
        Some((m, x)) => (m.to_string(), x.parse::<i32>().unwrap_or(0)),
        None => return e,
    };
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if neg { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp >= 0 {
            let int_len = (exp + 1) as usize;
            if digits.len() <= int_len {
                format!("{}{}.0", digits, "0".repeat(int_len - digits.len()))
            } else {
                format!("{}.{}", &digits[..int_len], &digits[int_len..])
            }
        } else {
            let _ = n;
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        };
        format!("{sign}{body}")
    } else {
        let m = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits };
        format!("{sign}{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

fn fmt_type(a: &Aval) -> String {
    let dims: Vec<String> = a.shape.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", a.dtype.short_name(), dims.join(","))
}

fn tuple(v: &[usize]) -> String {
    match v.len() {
        0 => "()".into(),
        1 => format!("({},)", v[0]),
        _ => format!("({})", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// The printed name and `[params]` of a primitive, as in JAX.
pub fn prim_text(p: &Prim) -> String {
    let params: Vec<String> = match p {
        Prim::Unary(UnaryOp::Round) => vec!["rounding_method=0".into()],
        Prim::Unary(UnaryOp::RoundEven) => vec!["rounding_method=1".into()],
        Prim::IntegerPow { y } => vec![format!("y={y}")],
        Prim::ConvertElementType { new_dtype } | Prim::BitcastConvertType { new_dtype } => {
            vec![format!("new_dtype={}", new_dtype.numpy_name())]
        }
        Prim::BroadcastInDim { shape, broadcast_dimensions } => {
            vec![format!("broadcast_dimensions={}", tuple(broadcast_dimensions)), format!("shape={}", tuple(shape))]
        }
        Prim::Reshape { new_sizes } => vec!["dimensions=None".into(), format!("new_sizes={}", tuple(new_sizes))],
        Prim::Squeeze { dimensions } | Prim::ExpandDims { dimensions } => {
            vec![format!("dimensions={}", tuple(dimensions))]
        }
        Prim::Transpose { permutation } => vec![format!("permutation={}", tuple(permutation))],
        Prim::Slice { start_indices, limit_indices, strides } => vec![
            format!("limit_indices={}", tuple(limit_indices)),
            format!("start_indices={}", tuple(start_indices)),
            format!("strides={}", tuple(strides)),
        ],
        Prim::Rev { dimensions } => vec![format!("dimensions={}", tuple(dimensions))],
        Prim::Reduce { axes, .. } => vec![format!("axes={}", tuple(axes))],
        Prim::ArgReduce { axis, index_dtype, .. } => {
            vec![format!("axes={}", tuple(&[*axis])), format!("index_dtype={}", index_dtype.numpy_name())]
        }
        Prim::Iota { dtype, shape, dimension } => vec![
            format!("dimension={dimension}"),
            format!("dtype={}", dtype.numpy_name()),
            format!("shape={}", tuple(shape)),
        ],
        Prim::Lib(op) => op.print_params(),
        Prim::Control(op) => op.print_params(),
        _ => vec![],
    };
    let name = match p {
        Prim::Unary(UnaryOp::RoundEven) => UnaryOp::Round.name(),
        other => other.name(),
    };
    if params.is_empty() {
        name.to_string()
    } else {
        format!("{name}[{}]", params.join(" "))
    }
}

/// A literal as JAX prints it: `1.0:f32[]`, `3:i32[]`, `True:bool[]`.
pub fn literal_text(s: &Scalar, d: DType) -> String {
    let v = match s {
        Scalar::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => py_float(*f, d),
    };
    format!("{v}:{}[]", d.short_name())
}

struct Namer {
    names: HashMap<VarId, String>,
}

impl Namer {
    fn name(&mut self, v: VarId) -> String {
        let n = self.names.len();
        self.names.entry(v).or_insert_with(|| var_name(n)).clone()
    }
    fn atom(&mut self, a: &Atom) -> String {
        match a {
            Atom::Var(v) => self.name(*v),
            Atom::Lit(s, d) => literal_text(s, *d),
        }
    }
}

/// JAX's jaxpr text:
/// ```text
/// { lambda ; a:f32[3] b:f32[3]. let
///     c:f32[3] = mul a b
///     d:f32[] = reduce_sum[axes=(0,)] c
///   in (d,) }
/// ```
pub fn print(p: &Program) -> String {
    let mut nm = Namer { names: HashMap::new() };
    let mut out = String::from("{ lambda ; ");
    let ins: Vec<String> = p.invars.iter().map(|(v, a)| format!("{}:{}", nm.name(*v), fmt_type(a))).collect();
    out.push_str(&ins.join(" "));
    out.push_str(". let\n");
    for e in &p.eqns {
        // Operands are named before outputs so that (invalid) uses-before-definition still print.
        let args: Vec<String> = e.inputs.iter().map(|a| nm.atom(a)).collect();
        let outs: Vec<String> = e.outputs.iter().map(|(v, a)| format!("{}:{}", nm.name(*v), fmt_type(a))).collect();
        let _ = write!(out, "    {} = {}", outs.join(" "), prim_text(&e.prim));
        for a in args {
            out.push(' ');
            out.push_str(&a);
        }
        out.push('\n');
    }
    let outs: Vec<String> = p.outvars.iter().map(|a| nm.atom(a)).collect();
    let tail = if outs.len() == 1 { format!("({},)", outs[0]) } else { format!("({})", outs.join(", ")) };
    let _ = write!(out, "  in {tail} }}");
    out
}

/// A canonical text of `p`'s structure: variables renumbered by first appearance, literals by their bit
/// patterns, no program name. Equal for programs that differ only in variable ids or names; different
/// whenever primitives, params, avals, literal bits, or the wiring differ.
pub fn canonical_key(p: &Program) -> String {
    let mut ids: HashMap<VarId, usize> = HashMap::new();
    let mut id = |v: VarId| {
        let n = ids.len();
        *ids.entry(v).or_insert(n)
    };
    let ty = |a: &Aval| {
        let mut s = String::from(a.dtype.short_name());
        for d in &a.shape {
            let _ = write!(s, ",{d}");
        }
        s
    };
    let mut out = String::with_capacity(64 + 48 * p.eqns.len());
    out.push_str("in");
    for (v, a) in &p.invars {
        let _ = write!(out, " %{}:{}", id(*v), ty(a));
    }
    let atom = |out: &mut String, a: &Atom, id: &mut dyn FnMut(VarId) -> usize| match a {
        Atom::Var(v) => {
            let _ = write!(out, " %{}", id(*v));
        }
        Atom::Lit(s, d) => {
            let _ = match s {
                Scalar::Bool(b) => write!(out, " #{}:{}", *b as u8, d.short_name()),
                Scalar::Int(i) => write!(out, " #{i}:{}", d.short_name()),
                Scalar::Float(f) => write!(out, " #x{:016x}:{}", f.to_bits(), d.short_name()),
            };
        }
    };
    for e in &p.eqns {
        let _ = write!(out, ";{:?}", e.prim);
        for a in &e.inputs {
            atom(&mut out, a, &mut id);
        }
        out.push_str(" ->");
        for (v, a) in &e.outputs {
            let _ = write!(out, " %{}:{}", id(*v), ty(a));
        }
    }
    out.push_str(";out");
    for a in &p.outvars {
        atom(&mut out, a, &mut id);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinaryOp, Eqn, ReduceOp};

    fn f32s(s: &[usize]) -> Aval {
        Aval::new(DType::F32, s.to_vec())
    }

    fn sample(ids: [VarId; 4]) -> Program {
        Program {
            name: "f".into(),
            invars: vec![(ids[0], f32s(&[3])), (ids[1], f32s(&[3]))],
            eqns: vec![
                Eqn { prim: Prim::Binary(BinaryOp::Mul), inputs: vec![Atom::Var(ids[0]), Atom::Var(ids[1])], outputs: vec![(ids[2], f32s(&[3]))] },
                Eqn { prim: Prim::Reduce { op: ReduceOp::Sum, axes: vec![0] }, inputs: vec![Atom::Var(ids[2])], outputs: vec![(ids[3], f32s(&[]))] },
            ],
            outvars: vec![Atom::Var(ids[3])],
        }
    }

    #[test]
    fn prints_jax_text() {
        let want = "{ lambda ; a:f32[3] b:f32[3]. let\n    c:f32[3] = mul a b\n    d:f32[] = reduce_sum[axes=(0,)] c\n  in (d,) }";
        assert_eq!(print(&sample([0, 1, 2, 3])), want);
        assert_eq!(print(&sample([10, 7, 99, 3])), want);
    }

    #[test]
    fn names_and_literals() {
        assert_eq!(var_name(0), "a");
        assert_eq!(var_name(25), "z");
        assert_eq!(var_name(26), "ba");
        assert_eq!(var_name(27), "bb");
        assert_eq!(literal_text(&Scalar::Float(1.0), DType::F32), "1.0:f32[]");
        assert_eq!(literal_text(&Scalar::Float(0.1f32 as f64), DType::F32), "0.1:f32[]");
        assert_eq!(literal_text(&Scalar::Float(0.1), DType::F64), "0.1:f64[]");
        assert_eq!(literal_text(&Scalar::Float(-2.5), DType::F32), "-2.5:f32[]");
        assert_eq!(literal_text(&Scalar::Float(1e-5), DType::F64), "1e-05:f64[]");
        assert_eq!(literal_text(&Scalar::Float(1.5e20), DType::F64), "1.5e+20:f64[]");
        assert_eq!(literal_text(&Scalar::Float(123456.0), DType::F64), "123456.0:f64[]");
        assert_eq!(literal_text(&Scalar::Float(0.00012), DType::F64), "0.00012:f64[]");
        assert_eq!(literal_text(&Scalar::Float(f64::NAN), DType::F32), "nan:f32[]");
        assert_eq!(literal_text(&Scalar::Float(f64::NEG_INFINITY), DType::F32), "-inf:f32[]");
        assert_eq!(literal_text(&Scalar::Int(-3), DType::I32), "-3:i32[]");
        assert_eq!(literal_text(&Scalar::Bool(true), DType::Bool), "True:bool[]");
        assert_eq!(prim_text(&Prim::BroadcastInDim { shape: vec![2, 3], broadcast_dimensions: vec![1] }),
                   "broadcast_in_dim[broadcast_dimensions=(1,) shape=(2, 3)]");
    }

    #[test]
    fn multi_output_and_literal_print() {
        let mut p = sample([0, 1, 2, 3]);
        p.eqns[0].inputs[1] = Atom::Lit(Scalar::Float(2.0), DType::F32);
        p.outvars.push(Atom::Var(0));
        let s = print(&p);
        assert!(s.contains("c:f32[3] = mul a 2.0:f32[]"), "{s}");
        assert!(s.ends_with("in (d, a) }"), "{s}");
    }

    #[test]
    fn canonical_keys() {
        let a = canonical_key(&sample([0, 1, 2, 3]));
        let mut renamed = sample([40, 3, 17, 2]);
        renamed.name = "other".into();
        assert_eq!(a, canonical_key(&renamed));
        // swapping the operands changes the wiring
        let mut swapped = sample([1, 0, 2, 3]);
        swapped.invars.swap(0, 1);
        assert_ne!(a, canonical_key(&swapped));
        // params, avals and literal bits matter
        let mut q = sample([0, 1, 2, 3]);
        q.eqns[1].prim = Prim::Reduce { op: ReduceOp::Max, axes: vec![0] };
        assert_ne!(a, canonical_key(&q));
        let mut q = sample([0, 1, 2, 3]);
        q.invars[0].1 = Aval::new(DType::F64, vec![3]);
        assert_ne!(a, canonical_key(&q));
        let lit = |f: f64| {
            let mut q = sample([0, 1, 2, 3]);
            q.eqns[0].inputs[1] = Atom::Lit(Scalar::Float(f), DType::F32);
            canonical_key(&q)
        };
        assert_ne!(lit(0.0), lit(-0.0));
        assert_eq!(lit(1.5), lit(1.5));
        assert_ne!(lit(1.5), lit(2.5));
    }
}
