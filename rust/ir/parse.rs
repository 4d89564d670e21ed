//! Reads a program from its JSON wire form (what Python's `cranax._src.lowering` writes). Never panics.
//!
//! Wire format, version 1:
//! ```text
//! {"version": 1, "name": "f",
//!  "invars":  [[id, dtype, [dims...]], ...],
//!  "eqns":    [{"prim": "mul", "params": {...}, "in": [atom, ...], "out": [[id, dtype, [dims]], ...]}, ...],
//!  "outvars": [atom, ...]}
//! atom  := id (integer)  |  {"lit": value, "dtype": dtype}      value: number, bool, "nan", "inf", "-inf"
//! dtype := "bool" | "i32" | "u32" | "i64" | "f32" | "f64"
//! params by primitive (JAX's names):
//!   integer_pow {"y": int}          convert_element_type / bitcast_convert_type {"new_dtype": dtype}
//!   broadcast_in_dim {"shape": [..], "broadcast_dimensions": [..]}   reshape {"new_sizes": [..]}
//!   squeeze {"dimensions": [..]}    expand_dims {"dimensions": [..]}  transpose {"permutation": [..]}
//!   reduce_sum/max/min/prod/and/or {"axes": [..]}   argmax/argmin {"axes": [axis], "index_dtype": dtype}
//!   iota {"dtype": dtype, "shape": [..], "dimension": int}   round {"rounding_method": 0 | 1}
//!   every other primitive: {} (unknown extra params are ignored)
//! ```
//!
//! Also accepted: `"copy_p"` for `copy`, `"round_even"` for `round` with rounding_method 1, and a missing
//! `"version"` (treated as 1). `"params"` may be omitted when empty.
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::ir::{Atom, Aval, BinaryOp, CompareOp, DType, Eqn, Prim, Program, ReduceOp, Scalar, UnaryOp, VarId};
use crate::ir::program::names;

fn perr(msg: impl Into<String>) -> Error {
    Error::Parse(msg.into())
}

/// Where in the program a value sits, for error messages.
#[derive(Clone, Copy)]
enum Ctx<'a> {
    Top,
    Eqn(usize, &'a str),
}

impl Ctx<'_> {
    fn err(&self, field: &str, msg: impl std::fmt::Display) -> Error {
        match self {
            Ctx::Top => perr(format!("field \"{field}\": {msg}")),
            Ctx::Eqn(i, "") => perr(format!("equation {i}: field \"{field}\": {msg}")),
            Ctx::Eqn(i, p) => perr(format!("equation {i} ({p}): field \"{field}\": {msg}")),
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn as_array<'v>(v: &'v Value, ctx: Ctx, field: &str) -> Result<&'v Vec<Value>> {
    v.as_array().ok_or_else(|| ctx.err(field, format!("expected an array, got {}", kind(v))))
}

fn get<'v>(o: &'v Map<String, Value>, key: &str, ctx: Ctx) -> Result<&'v Value> {
    o.get(key).ok_or_else(|| ctx.err(key, "missing"))
}

fn as_uint(v: &Value, ctx: Ctx, field: &str, max: u64) -> Result<u64> {
    match v.as_u64() {
        Some(n) if n <= max => Ok(n),
        Some(n) => Err(ctx.err(field, format!("{n} is too large (at most {max})"))),
        None => Err(ctx.err(field, format!("expected a non-negative integer, got {v}"))),
    }
}

fn as_usize(v: &Value, ctx: Ctx, field: &str) -> Result<usize> {
    let max = u64::try_from(isize::MAX).unwrap_or(u64::MAX);
    as_uint(v, ctx, field, max).map(|n| n as usize)
}

fn as_var_id(v: &Value, ctx: Ctx, field: &str) -> Result<VarId> {
    as_uint(v, ctx, field, u32::MAX as u64).map(|n| n as VarId)
}

fn usize_list(v: &Value, ctx: Ctx, field: &str) -> Result<Vec<usize>> {
    as_array(v, ctx, field)?.iter().map(|x| as_usize(x, ctx, field)).collect()
}

fn dtype(v: &Value, ctx: Ctx, field: &str) -> Result<DType> {
    let s = v.as_str().ok_or_else(|| ctx.err(field, format!("expected a dtype name, got {}", kind(v))))?;
    DType::from_short_name(s).ok_or_else(|| ctx.err(field, format!("unknown dtype {s:?}")))
}

/// `[id, dtype, [dims...]]`
fn typed_var(v: &Value, ctx: Ctx, field: &str) -> Result<(VarId, Aval)> {
    let a = as_array(v, ctx, field)?;
    if a.len() != 3 {
        return Err(ctx.err(field, format!("expected [id, dtype, shape], got {} element(s)", a.len())));
    }
    let id = as_var_id(&a[0], ctx, field)?;
    let dt = dtype(&a[1], ctx, field)?;
    let shape = usize_list(&a[2], ctx, field)?;
    Ok((id, Aval::new(dt, shape)))
}

/// A literal's value, converted to the representation of `dt`.
fn literal_value(v: &Value, dt: DType, ctx: Ctx, field: &str) -> Result<Scalar> {
    let bad = |what: String| ctx.err(field, format!("{what} is not a valid {} literal", dt.short_name()));
    if dt.is_float() {
        let f = match v {
            Value::Number(n) => n.as_f64().ok_or_else(|| bad(n.to_string()))?,
            Value::Bool(b) => *b as u8 as f64,
            Value::String(s) => match s.as_str() {
                "nan" | "NaN" => f64::NAN,
                "inf" | "Infinity" => f64::INFINITY,
                "-inf" | "-Infinity" => f64::NEG_INFINITY,
                _ => return Err(bad(format!("{s:?}"))),
            },
            other => return Err(bad(kind(other).to_string())),
        };
        return Ok(Scalar::Float(match dt {
            DType::F32 => f as f32 as f64,
            DType::F16 => crate::ir::dtype::round_to_f16(f),
            DType::BF16 => crate::ir::dtype::round_to_bf16(f),
            d if d.is_float8() => crate::ir::dtype::Scalar::Float(f).cast(d).as_f64(),
            _ => f,
        }));
    }
    if dt == DType::Bool {
        return match v {
            Value::Bool(b) => Ok(Scalar::Bool(*b)),
            Value::Number(n) if n.as_u64() == Some(0) => Ok(Scalar::Bool(false)),
            Value::Number(n) if n.as_u64() == Some(1) => Ok(Scalar::Bool(true)),
            other => Err(bad(other.to_string())),
        };
    }
    // integers
    let i: i64 = match v {
        Value::Bool(b) => *b as i64,
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i
            } else if let Some(u) = n.as_u64() {
                return Err(bad(u.to_string()));
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    f as i64
                } else {
                    return Err(bad(n.to_string()));
                }
            }
        }
        other => return Err(bad(other.to_string())),
    };
    let ok = dt.int_range().is_none_or(|(lo, hi)| (lo..=hi).contains(&i));
    if !ok {
        return Err(ctx.err(field, format!("{i} is out of range for {}", dt.short_name())));
    }
    Ok(Scalar::Int(i))
}

fn atom(v: &Value, ctx: Ctx, field: &str) -> Result<Atom> {
    match v {
        Value::Number(_) => Ok(Atom::Var(as_var_id(v, ctx, field)?)),
        Value::Object(o) => {
            let dt = dtype(get(o, "dtype", ctx).map_err(|_| ctx.err(field, "literal without \"dtype\""))?, ctx, field)?;
            let val = o.get("lit").ok_or_else(|| ctx.err(field, "literal without \"lit\""))?;
            Ok(Atom::Lit(literal_value(val, dt, ctx, field)?, dt))
        }
        other => Err(ctx.err(field, format!("expected a variable id or a literal object, got {}", kind(other)))),
    }
}

fn prim(name: &str, params: &Map<String, Value>, ctx: Ctx) -> Result<Prim> {
    let p = |key: &str| get(params, key, ctx).map_err(|_| ctx.err("params", format!("missing parameter \"{key}\"")));
    let list = |key: &str| -> Result<Vec<usize>> { usize_list(p(key)?, ctx, &format!("params.{key}")) };
    let dt = |key: &str| -> Result<DType> { dtype(p(key)?, ctx, &format!("params.{key}")) };
    if name == UnaryOp::Round.name() {
        return match params.get("rounding_method") {
            None | Some(Value::Null) => Ok(Prim::Unary(UnaryOp::Round)),
            Some(v) => match v.as_u64() {
                Some(0) => Ok(Prim::Unary(UnaryOp::Round)),
                Some(1) => Ok(Prim::Unary(UnaryOp::RoundEven)),
                _ => Err(ctx.err("params.rounding_method", format!("expected 0 or 1, got {v}"))),
            },
        };
    }
    if let Some(u) = UnaryOp::from_name(name) {
        return Ok(Prim::Unary(u));
    }
    if let Some(b) = BinaryOp::from_name(name) {
        return Ok(Prim::Binary(b));
    }
    if let Some(c) = CompareOp::from_name(name) {
        return Ok(Prim::Compare(c));
    }
    if let Some(r) = ReduceOp::from_name(name) {
        return Ok(Prim::Reduce { op: r, axes: list("axes")? });
    }
    match crate::ir::control::ControlOp::parse(name, params) {
        Ok(Some(op)) => return Ok(Prim::Control(op)),
        Ok(None) => {}
        Err((field, msg)) => return Err(ctx.err(&field, msg)),
    }
    match crate::ir::library::LibOp::parse(name, params) {
        Ok(Some(op)) => return Ok(Prim::Lib(op)),
        Ok(None) => {}
        Err((field, msg)) => return Err(ctx.err(&field, msg)),
    }
    Ok(match name {
        names::INTEGER_POW => {
            let v = p("y")?;
            let y = v
                .as_i64()
                .and_then(|y| i32::try_from(y).ok())
                .ok_or_else(|| ctx.err("params.y", format!("expected a 32-bit integer, got {v}")))?;
            Prim::IntegerPow { y }
        }
        names::SELECT_N => Prim::SelectN,
        names::CLAMP => Prim::Clamp,
        names::FMA => Prim::Fma,
        names::CONVERT_ELEMENT_TYPE => Prim::ConvertElementType { new_dtype: dt("new_dtype")? },
        names::BITCAST_CONVERT_TYPE => Prim::BitcastConvertType { new_dtype: dt("new_dtype")? },
        names::BROADCAST_IN_DIM => {
            Prim::BroadcastInDim { shape: list("shape")?, broadcast_dimensions: list("broadcast_dimensions")? }
        }
        names::RESHAPE => Prim::Reshape { new_sizes: list("new_sizes")? },
        names::SQUEEZE => Prim::Squeeze { dimensions: list("dimensions")? },
        names::EXPAND_DIMS => Prim::ExpandDims { dimensions: list("dimensions")? },
        names::TRANSPOSE => Prim::Transpose { permutation: list("permutation")? },
        names::SLICE => Prim::Slice {
            start_indices: list("start_indices")?,
            limit_indices: list("limit_indices")?,
            strides: list("strides")?,
        },
        names::REV => Prim::Rev { dimensions: list("dimensions")? },
        names::ARGMAX | names::ARGMIN => {
            let axes = list("axes")?;
            if axes.len() != 1 {
                return Err(ctx.err("params.axes", format!("{name} takes exactly one axis, got {axes:?}")));
            }
            Prim::ArgReduce { is_max: name == names::ARGMAX, axis: axes[0], index_dtype: dt("index_dtype")? }
        }
        names::IOTA => {
            let dimension = as_usize(p("dimension")?, ctx, "params.dimension")?;
            Prim::Iota { dtype: dt("dtype")?, shape: list("shape")?, dimension }
        }
        names::COPY | "copy_p" => Prim::Copy,
        names::OPTIMIZATION_BARRIER => Prim::OptimizationBarrier,
        _ => return Err(ctx.err("prim", format!("unknown primitive {name:?}"))),
    })
}

fn eqn(i: usize, v: &Value) -> Result<Eqn> {
    let ctx0 = Ctx::Eqn(i, "");
    let o = v.as_object().ok_or_else(|| perr(format!("equation {i}: expected an object, got {}", kind(v))))?;
    let pv = get(o, "prim", ctx0)?;
    let name = pv.as_str().ok_or_else(|| ctx0.err("prim", format!("expected a string, got {}", kind(pv))))?;
    let ctx = Ctx::Eqn(i, name);
    let empty = Map::new();
    let params = match o.get("params") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(other) => return Err(ctx.err("params", format!("expected an object, got {}", kind(other)))),
    };
    let prim = prim(name, params, ctx)?;
    let inputs = as_array(get(o, "in", ctx)?, ctx, "in")?.iter().map(|a| atom(a, ctx, "in")).collect::<Result<_>>()?;
    let outputs =
        as_array(get(o, "out", ctx)?, ctx, "out")?.iter().map(|a| typed_var(a, ctx, "out")).collect::<Result<_>>()?;
    Ok(Eqn { prim, inputs, outputs })
}

/// Parses the JSON wire form into a `Program` (not yet verified). Never panics.
pub fn parse_program(json: &str) -> Result<Program> {
    let v: Value = serde_json::from_str(json).map_err(|e| perr(format!("invalid JSON: {e}")))?;
    program_from_value(&v)
}

/// A program from an already-parsed JSON value (sub-programs of control flow are nested values).
pub fn program_from_value(v: &Value) -> Result<Program> {
    let o = v.as_object().ok_or_else(|| perr(format!("expected a JSON object, got {}", kind(&v))))?;
    let ctx = Ctx::Top;
    match o.get("version") {
        None => {}
        Some(ver) if ver.as_u64() == Some(1) => {}
        Some(ver) => return Err(ctx.err("version", format!("unsupported version {ver} (expected 1)"))),
    }
    let name = match o.get("name") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(ctx.err("name", format!("expected a string, got {}", kind(other)))),
    };
    let invars =
        as_array(get(o, "invars", ctx)?, ctx, "invars")?.iter().map(|a| typed_var(a, ctx, "invars")).collect::<Result<_>>()?;
    let eqns = as_array(get(o, "eqns", ctx)?, ctx, "eqns")?.iter().enumerate().map(|(i, e)| eqn(i, e)).collect::<Result<_>>()?;
    let outvars =
        as_array(get(o, "outvars", ctx)?, ctx, "outvars")?.iter().map(|a| atom(a, ctx, "outvars")).collect::<Result<_>>()?;
    Ok(Program { name, invars, eqns, outvars })
}

/// Writes `p` in the wire format (the inverse of `parse_program`; used by tests and tools).
pub fn to_json(p: &Program) -> String {
    to_value(p).to_string()
}

/// `p` as a JSON value (the inverse of `program_from_value`).
pub fn to_value(p: &Program) -> Value {
    use serde_json::json;
    let tv = |(id, a): &(VarId, Aval)| json!([id, a.dtype.short_name(), a.shape]);
    let at = |a: &Atom| match a {
        Atom::Var(v) => json!(v),
        Atom::Lit(s, d) => {
            let val = match s {
                Scalar::Bool(b) => json!(b),
                Scalar::Int(i) => json!(i),
                Scalar::Float(f) if f.is_nan() => json!("nan"),
                Scalar::Float(f) if f.is_infinite() => json!(if *f > 0.0 { "inf" } else { "-inf" }),
                Scalar::Float(f) => json!(f),
            };
            json!({"lit": val, "dtype": d.short_name()})
        }
    };
    let params = |pr: &Prim| match pr {
        Prim::Unary(UnaryOp::Round) => json!({"rounding_method": 0}),
        Prim::Unary(UnaryOp::RoundEven) => json!({"rounding_method": 1}),
        Prim::IntegerPow { y } => json!({"y": y}),
        Prim::ConvertElementType { new_dtype } | Prim::BitcastConvertType { new_dtype } => {
            json!({"new_dtype": new_dtype.short_name()})
        }
        Prim::BroadcastInDim { shape, broadcast_dimensions } => {
            json!({"shape": shape, "broadcast_dimensions": broadcast_dimensions})
        }
        Prim::Reshape { new_sizes } => json!({"new_sizes": new_sizes}),
        Prim::Squeeze { dimensions } | Prim::ExpandDims { dimensions } => json!({"dimensions": dimensions}),
        Prim::Transpose { permutation } => json!({"permutation": permutation}),
        Prim::Slice { start_indices, limit_indices, strides } => {
            json!({"start_indices": start_indices, "limit_indices": limit_indices, "strides": strides})
        }
        Prim::Rev { dimensions } => json!({"dimensions": dimensions}),
        Prim::Reduce { axes, .. } => json!({"axes": axes}),
        Prim::ArgReduce { axis, index_dtype, .. } => json!({"axes": [axis], "index_dtype": index_dtype.short_name()}),
        Prim::Iota { dtype, shape, dimension } => {
            json!({"dtype": dtype.short_name(), "shape": shape, "dimension": dimension})
        }
        Prim::Lib(op) => op.to_json(),
        Prim::Control(op) => op.to_json(),
        _ => json!({}),
    };
    let name = |pr: &Prim| match pr {
        Prim::Unary(UnaryOp::RoundEven) => "round",
        other => other.name(),
    };
    let eqns: Vec<Value> = p
        .eqns
        .iter()
        .map(|e| {
            json!({"prim": name(&e.prim), "params": params(&e.prim),
                   "in": e.inputs.iter().map(at).collect::<Vec<_>>(),
                   "out": e.outputs.iter().map(tv).collect::<Vec<_>>()})
        })
        .collect();
    json!({"version": 1, "name": p.name,
           "invars": p.invars.iter().map(tv).collect::<Vec<_>>(),
           "eqns": eqns,
           "outvars": p.outvars.iter().map(at).collect::<Vec<_>>()})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::verify::verify;

    const GOOD: &str = r#"{"version": 1, "name": "f",
      "invars": [[0, "f32", [3]], [1, "f32", [3]]],
      "eqns": [
        {"prim": "mul", "params": {}, "in": [0, 1], "out": [[2, "f32", [3]]]},
        {"prim": "add", "params": {}, "in": [2, {"lit": 1.5, "dtype": "f32"}], "out": [[3, "f32", [3]]]},
        {"prim": "broadcast_in_dim", "params": {"shape": [2, 3], "broadcast_dimensions": [1], "sharding": null},
         "in": [3], "out": [[4, "f32", [2, 3]]]},
        {"prim": "reduce_sum", "params": {"axes": [0, 1]}, "in": [4], "out": [[5, "f32", []]]},
        {"prim": "round", "params": {"rounding_method": 1}, "in": [5], "out": [[6, "f32", []]]},
        {"prim": "max", "in": [6, {"lit": "-inf", "dtype": "f32"}], "out": [[7, "f32", []]]},
        {"prim": "copy_p", "params": {}, "in": [7], "out": [[8, "f32", []]]},
        {"prim": "iota", "params": {"dtype": "i32", "shape": [4], "dimension": 0}, "in": [], "out": [[9, "i32", [4]]]},
        {"prim": "argmax", "params": {"axes": [0], "index_dtype": "i32"}, "in": [9], "out": [[10, "i32", []]]},
        {"prim": "lt", "params": {}, "in": [10, {"lit": 3, "dtype": "i32"}], "out": [[11, "bool", []]]},
        {"prim": "and", "params": {}, "in": [11, {"lit": true, "dtype": "bool"}], "out": [[12, "bool", []]]}
      ],
      "outvars": [8, 12, {"lit": "nan", "dtype": "f32"}]}"#;

    #[test]
    fn parses_good_program() {
        let p = parse_program(GOOD).unwrap();
        verify(&p).unwrap();
        assert_eq!(p.name, "f");
        assert_eq!(p.eqns.len(), 11);
        assert_eq!(p.eqns[4].prim, Prim::Unary(UnaryOp::RoundEven));
        assert_eq!(p.eqns[6].prim, Prim::Copy);
        assert_eq!(p.eqns[8].prim, Prim::ArgReduce { is_max: true, axis: 0, index_dtype: DType::I32 });
        assert_eq!(p.eqns[1].inputs[1], Atom::Lit(Scalar::Float(1.5), DType::F32));
        assert_eq!(p.eqns[5].inputs[1], Atom::Lit(Scalar::Float(f64::NEG_INFINITY), DType::F32));
        assert!(matches!(p.outvars[2], Atom::Lit(Scalar::Float(f), DType::F32) if f.is_nan()));
        // round trip through to_json
        let q = parse_program(&to_json(&p)).unwrap();
        assert_eq!(crate::ir::print::canonical_key(&p), crate::ir::print::canonical_key(&q));
        assert_eq!(q.eqns[4].prim, Prim::Unary(UnaryOp::RoundEven));
    }

    #[test]
    fn every_prim_name_parses() {
        let names = "neg abs sign floor ceil round exp exp2 log log1p expm1 sqrt rsqrt cbrt sin cos tan tanh \
            logistic erf asin acos atan sinh cosh asinh acosh atanh erf_inv ndtri lgamma digamma not is_finite square \
            population_count add sub mul div rem max min pow atan2 nextafter and or xor shift_left \
            shift_right_logical shift_right_arithmetic eq ne lt le gt ge integer_pow select_n clamp \
            convert_element_type bitcast_convert_type broadcast_in_dim reshape squeeze expand_dims transpose \
            reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or argmax argmin iota copy";
        let params = r#"{"y": 2, "new_dtype": "f32", "shape": [1], "broadcast_dimensions": [], "new_sizes": [1],
            "dimensions": [0], "permutation": [0], "axes": [0], "index_dtype": "i32", "dtype": "i32",
            "dimension": 0}"#;
        // and every op of the op tables (a new op is covered without being listed here)
        let ops = UnaryOp::ALL.iter().filter(|&&u| u != UnaryOp::RoundEven).map(|u| u.name())
            .chain(BinaryOp::ALL.iter().map(|b| b.name()))
            .chain(crate::ir::CompareOp::ALL.iter().map(|c| c.name()))
            .chain(crate::ir::ReduceOp::ALL.iter().map(|r| r.name()));
        for n in names.split_whitespace().chain(ops) {
            let j = format!(
                r#"{{"version":1,"invars":[],"eqns":[{{"prim":"{n}","params":{params},"in":[],"out":[]}}],"outvars":[]}}"#
            );
            let p = parse_program(&j).unwrap_or_else(|e| panic!("{n}: {e}"));
            let got = p.eqns[0].prim.name();
            assert_eq!(got, n, "name round trip");
        }
    }

    #[test]
    fn rejects_with_located_messages() {
        let cases: &[(&str, &str)] = &[
            ("not json", "invalid JSON"),
            ("[]", "expected a JSON object"),
            (r#"{"version":2,"invars":[],"eqns":[],"outvars":[]}"#, "unsupported version"),
            (r#"{"invars":[],"eqns":[],"outvars":[]"#, "invalid JSON"),
            (r#"{"eqns":[],"outvars":[]}"#, "\"invars\": missing"),
            (r#"{"invars":[[0,"f32",[-1]]],"eqns":[],"outvars":[]}"#, "non-negative"),
            (r#"{"invars":[[0,"q7",[1]]],"eqns":[],"outvars":[]}"#, "unknown dtype"),
            (r#"{"invars":[[0,"f32",[99999999999999999999999]]],"eqns":[],"outvars":[]}"#, "field \"invars\""),
            (r#"{"invars":[[0,"f32",[1]]],"eqns":[{"prim":"frob","in":[0],"out":[]}],"outvars":[]}"#, "equation 0"),
            (r#"{"invars":[],"eqns":[{"prim":"neg","in":[0]}],"outvars":[]}"#, "equation 0 (neg): field \"out\""),
            (r#"{"invars":[],"eqns":[1, {"prim":"neg","in":[0]}],"outvars":[]}"#, "equation 0"),
            (r#"{"invars":[],"eqns":[{"prim":"neg","in":[0],"out":[]},{"prim":"reduce_sum","in":[0],"out":[]}],"outvars":[]}"#,
             "equation 1 (reduce_sum): field \"params\": missing parameter \"axes\""),
            (r#"{"invars":[],"eqns":[{"prim":"integer_pow","params":{"y":1e300},"in":[0],"out":[]}],"outvars":[]}"#,
             "params.y"),
            (r#"{"invars":[],"eqns":[{"prim":"add","in":[0,{"lit":1.5,"dtype":"i32"}],"out":[]}],"outvars":[]}"#,
             "not a valid i32"),
            (r#"{"invars":[],"eqns":[{"prim":"add","in":[0,{"lit":3000000000,"dtype":"i32"}],"out":[]}],"outvars":[]}"#,
             "out of range"),
            (r#"{"invars":[],"eqns":[{"prim":"add","in":[-3],"out":[]}],"outvars":[]}"#, "equation 0 (add): field \"in\""),
            (r#"{"invars":[],"eqns":[],"outvars":[{"lit":"zzz","dtype":"f32"}]}"#, "outvars"),
            (r#"{"invars":[],"eqns":[{"prim":"argmax","params":{"axes":[0,1],"index_dtype":"i32"},"in":[],"out":[]}],"outvars":[]}"#,
             "exactly one axis"),
            (r#"{"invars":[],"eqns":[{"prim":"round","params":{"rounding_method":7},"in":[],"out":[]}],"outvars":[]}"#,
             "rounding_method"),
        ];
        for (j, needle) in cases {
            match parse_program(j) {
                Err(Error::Parse(m)) => assert!(m.contains(needle), "{j}: message {m:?} lacks {needle:?}"),
                other => panic!("{j}: expected a parse error, got {other:?}"),
            }
        }
    }

    #[test]
    fn mutated_inputs_never_panic() {
        // Deterministic LCG; mutations: truncate, replace, delete, duplicate a span, insert digits.
        let mut seed: u64 = 0x2545F4914F6CDD1D;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let alphabet: &[u8] = b"{}[]\",:-0123456789eE.aftnrulsx \\";
        let base = GOOD.as_bytes();
        let (mut ok, mut verified) = (0, 0);
        for round in 0..600 {
            let mut s = base.to_vec();
            let n_mut = 1 + next() % 4;
            for _ in 0..n_mut {
                if s.is_empty() {
                    break;
                }
                let pos = next() % s.len();
                match (round + next()) % 5 {
                    0 => s.truncate(pos),
                    1 => s[pos] = alphabet[next() % alphabet.len()],
                    2 => {
                        s.remove(pos);
                    }
                    3 => {
                        let end = (pos + next() % 20).min(s.len());
                        let span = s[pos..end].to_vec();
                        s.splice(pos..pos, span);
                    }
                    _ => {
                        let digits = b"999999999999999999999";
                        let k = 1 + next() % digits.len();
                        s.splice(pos..pos, digits[..k].iter().copied());
                    }
                }
            }
            let text = String::from_utf8_lossy(&s);
            if let Ok(p) = parse_program(&text) {
                ok += 1;
                // Whatever parses must go through the rest of the front half without panicking.
                let _ = crate::ir::print::print(&p);
                let _ = crate::ir::print::canonical_key(&p);
                if verify(&p).is_ok() {
                    verified += 1;
                    if let Ok(q) = crate::opt::optimize(p.clone()) {
                        crate::opt::fusion::lower_to_plan(&q).unwrap();
                    }
                    crate::opt::fusion::lower_to_plan(&p).unwrap();
                }
            }
        }
        assert!(ok < 600 && verified > 0, "parsed {ok}, verified {verified}");
        eprintln!("text mutations: {ok} parsed, {verified} verified");
        // Structure-aware mutations: replace numbers, strings and array elements inside the JSON tree.
        let numbers = [0i64, 1, 2, 3, 4, -1, 5, 1 << 31, 1 << 40, 1 << 62, i64::MAX];
        let strings = ["f32", "i32", "bool", "u32", "f64", "add", "reduce_sum", "broadcast_in_dim", "nan", "x"];
        let (mut parsed, mut verified) = (0, 0);
        for _ in 0..600 {
            let mut v: Value = serde_json::from_str(GOOD).unwrap();
            for _ in 0..1 + next() % 3 {
                // Walk to a random node.
                let mut node = &mut v;
                for _ in 0..6 {
                    let len = match node {
                        Value::Array(a) => a.len(),
                        Value::Object(o) => o.len(),
                        _ => 0,
                    };
                    if len == 0 || next() % 5 == 0 {
                        break;
                    }
                    let k = next() % len;
                    node = match node {
                        Value::Array(a) => &mut a[k],
                        Value::Object(o) => o.values_mut().nth(k).unwrap(),
                        _ => unreachable!(),
                    };
                }
                match next() % 4 {
                    0 => *node = serde_json::json!(numbers[next() % numbers.len()]),
                    1 => *node = serde_json::json!(strings[next() % strings.len()]),
                    2 => {
                        if let Value::Array(a) = node {
                            if !a.is_empty() {
                                let k = next() % a.len();
                                a.remove(k);
                            }
                        }
                    }
                    _ => {
                        if let Value::Array(a) = node {
                            if !a.is_empty() {
                                let k = next() % a.len();
                                let dup = a[k].clone();
                                a.push(dup);
                            }
                        }
                    }
                }
            }
            if let Ok(p) = parse_program(&v.to_string()) {
                parsed += 1;
                let _ = crate::ir::print::print(&p);
                if verify(&p).is_ok() {
                    verified += 1;
                    if let Ok(q) = crate::opt::optimize(p.clone()) {
                        crate::opt::fusion::lower_to_plan(&q).unwrap();
                    }
                    crate::opt::fusion::lower_to_plan(&p).unwrap();
                }
            }
        }
        eprintln!("tree mutations: {parsed} parsed, {verified} verified");
    }
}
