//! Control-flow primitives: `cond`, `while` and `scan`, each carrying closed sub-programs.
//!
//! Sub-programs are closed: everything they read arrives as their inputs (JAX passes closed-over values as
//! leading operands, counted by `cond_nconsts`/`body_nconsts`/`num_consts`). Each sub-program has its own
//! variable ids. Wire params (JAX's names):
//! ```text
//! cond   {"branches": [program, ...]}                      in: index (i32[] or bool[]), operands...
//! while  {"cond_jaxpr": program, "body_jaxpr": program,    in: cond consts, body consts, init carry
//!         "cond_nconsts": n, "body_nconsts": m}            out: final carry
//! scan   {"jaxpr": program, "num_consts": n, "num_carry": m,   in: consts, init carry, xs (leading axis
//!         "length": len, "reverse": bool}                      `length`)   out: carry, ys (stacked)
//! program := {"invars": [...], "eqns": [...], "outvars": [...]}   (the top-level format, `name` optional)
//! ```
//! `cond` runs `branches[clamp(index, 0, n-1)]` (a bool index picks branch 0 for false).
use serde_json::{json, Map, Value};

use super::dtype::DType;
use super::program::{Atom, Aval, Program};
use super::shape::fmt_aval;

#[derive(Debug, Clone, PartialEq)]
pub enum ControlOp {
    Cond { branches: Vec<Program> },
    While { cond: Box<Program>, body: Box<Program>, cond_nconsts: usize, body_nconsts: usize },
    Scan { body: Box<Program>, num_consts: usize, num_carry: usize, length: usize, reverse: bool },
}

/// The avals of a sub-program's outputs (literal outputs are rank 0). `None` if an output is undefined
/// (the verifier reports it).
pub fn out_avals(p: &Program) -> Option<Vec<Aval>> {
    let mut env: std::collections::HashMap<u32, &Aval> = p.invars.iter().map(|(v, a)| (*v, a)).collect();
    for e in &p.eqns {
        for (v, a) in &e.outputs {
            env.insert(*v, a);
        }
    }
    p.outvars
        .iter()
        .map(|a| match a {
            Atom::Var(v) => env.get(v).map(|a| (*a).clone()),
            Atom::Lit(_, d) => Some(Aval::scalar(*d)),
        })
        .collect()
}

pub fn in_avals(p: &Program) -> Vec<Aval> {
    p.invars.iter().map(|(_, a)| a.clone()).collect()
}

fn avals_text(a: &[Aval]) -> String {
    format!("({})", a.iter().map(fmt_aval).collect::<Vec<_>>().join(", "))
}

/// Verifies a sub-program and returns its output avals.
fn checked(p: &Program, what: &str) -> Result<Vec<Aval>, String> {
    crate::ir::verify::verify(p).map_err(|e| format!("{what}: {e}"))?;
    out_avals(p).ok_or_else(|| format!("{what}: an output is undefined"))
}

fn expect_inputs(p: &Program, want: &[Aval], what: &str) -> Result<(), String> {
    let got = in_avals(p);
    if got != want {
        return Err(format!("{what} takes {} but is given {}", avals_text(&got), avals_text(want)));
    }
    Ok(())
}

impl ControlOp {
    pub fn name(&self) -> &'static str {
        match self {
            ControlOp::Cond { .. } => "cond",
            ControlOp::While { .. } => "while",
            ControlOp::Scan { .. } => "scan",
        }
    }

    /// Parses the params of a control primitive; `Ok(None)` for other primitives. Errors are
    /// `(field, message)`.
    pub fn parse(name: &str, params: &Map<String, Value>) -> Result<Option<ControlOp>, (String, String)> {
        if !matches!(name, "cond" | "while" | "scan") {
            return Ok(None);
        }
        let get = |k: &str| params.get(k).ok_or_else(|| ("params".to_string(), format!("missing parameter \"{k}\"")));
        let prog = |k: &str| -> Result<Program, (String, String)> {
            crate::ir::parse::program_from_value(get(k)?).map_err(|e| (format!("params.{k}"), e.to_string()))
        };
        let uint = |k: &str| -> Result<usize, (String, String)> {
            let v = get(k)?;
            v.as_u64()
                .filter(|&n| n <= u32::MAX as u64)
                .map(|n| n as usize)
                .ok_or_else(|| (format!("params.{k}"), format!("expected a non-negative integer, got {v}")))
        };
        Ok(Some(match name {
            "cond" => {
                let b = get("branches")?;
                let arr = b.as_array().ok_or_else(|| ("params.branches".to_string(), "expected an array".to_string()))?;
                if arr.is_empty() {
                    return Err(("params.branches".into(), "cond needs at least one branch".into()));
                }
                let branches = arr
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        crate::ir::parse::program_from_value(v).map_err(|e| (format!("params.branches[{i}]"), e.to_string()))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                ControlOp::Cond { branches }
            }
            "while" => ControlOp::While {
                cond: Box::new(prog("cond_jaxpr")?),
                body: Box::new(prog("body_jaxpr")?),
                cond_nconsts: uint("cond_nconsts")?,
                body_nconsts: uint("body_nconsts")?,
            },
            _ => {
                let reverse = match params.get("reverse") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(v) => return Err(("params.reverse".into(), format!("expected a bool, got {v}"))),
                };
                ControlOp::Scan {
                    body: Box::new(prog("jaxpr")?),
                    num_consts: uint("num_consts")?,
                    num_carry: uint("num_carry")?,
                    length: uint("length")?,
                    reverse,
                }
            }
        }))
    }

    pub fn to_json(&self) -> Value {
        use crate::ir::parse::to_value;
        match self {
            ControlOp::Cond { branches } => json!({"branches": branches.iter().map(to_value).collect::<Vec<_>>()}),
            ControlOp::While { cond, body, cond_nconsts, body_nconsts } => json!({
                "cond_jaxpr": to_value(cond), "body_jaxpr": to_value(body),
                "cond_nconsts": cond_nconsts, "body_nconsts": body_nconsts}),
            ControlOp::Scan { body, num_consts, num_carry, length, reverse } => json!({
                "jaxpr": to_value(body), "num_consts": num_consts, "num_carry": num_carry,
                "length": length, "reverse": reverse}),
        }
    }

    /// `key=value` texts in JAX's (sorted) order; sub-programs printed inline.
    pub fn print_params(&self) -> Vec<String> {
        use crate::ir::print::print;
        match self {
            ControlOp::Cond { branches } => {
                vec![format!("branches=({})", branches.iter().map(print).collect::<Vec<_>>().join(" "))]
            }
            ControlOp::While { cond, body, cond_nconsts, body_nconsts } => vec![
                format!("body_jaxpr={}", print(body)),
                format!("body_nconsts={body_nconsts}"),
                format!("cond_jaxpr={}", print(cond)),
                format!("cond_nconsts={cond_nconsts}"),
            ],
            ControlOp::Scan { body, num_consts, num_carry, length, reverse } => vec![
                format!("jaxpr={}", print(body)),
                format!("length={length}"),
                format!("num_carry={num_carry}"),
                format!("num_consts={num_consts}"),
                format!("reverse={}", if *reverse { "True" } else { "False" }),
            ],
        }
    }

    /// Output avals for operands `ops`; verifies the sub-programs (recursively) and their signatures.
    pub fn infer(&self, ops: &[(Aval, bool)]) -> Result<Vec<Aval>, String> {
        let avals: Vec<Aval> = ops.iter().map(|(a, _)| a.clone()).collect();
        match self {
            ControlOp::Cond { branches } => {
                let idx = avals.first().ok_or("cond needs an index operand")?;
                if !idx.shape.is_empty() || !matches!(idx.dtype, DType::I32 | DType::Bool) {
                    return Err(format!("cond index must be i32[] or bool[], got {}", fmt_aval(idx)));
                }
                if idx.dtype == DType::Bool && branches.len() != 2 {
                    return Err(format!("a bool cond index needs 2 branches, got {}", branches.len()));
                }
                let mut out: Option<Vec<Aval>> = None;
                for (i, b) in branches.iter().enumerate() {
                    let what = format!("branch {i}");
                    let o = checked(b, &what)?;
                    expect_inputs(b, &avals[1..], &what)?;
                    match &out {
                        None => out = Some(o),
                        Some(prev) if *prev != o => {
                            return Err(format!(
                                "branches give different output types: branch 0 gives {}, branch {i} gives {}",
                                avals_text(prev),
                                avals_text(&o)
                            ))
                        }
                        _ => {}
                    }
                }
                Ok(out.unwrap_or_default())
            }
            ControlOp::While { cond, body, cond_nconsts, body_nconsts } => {
                let (nc, nb) = (*cond_nconsts, *body_nconsts);
                if nc + nb > avals.len() {
                    return Err(format!("while has {} operands but {nc} + {nb} consts", avals.len()));
                }
                let carry = &avals[nc + nb..];
                let cond_in: Vec<Aval> = avals[..nc].iter().chain(carry).cloned().collect();
                let body_in: Vec<Aval> = avals[nc..nc + nb].iter().chain(carry).cloned().collect();
                let co = checked(cond, "cond_jaxpr")?;
                expect_inputs(cond, &cond_in, "cond_jaxpr")?;
                if co != [Aval::scalar(DType::Bool)] {
                    return Err(format!("cond_jaxpr must return one bool[], returns {}", avals_text(&co)));
                }
                let bo = checked(body, "body_jaxpr")?;
                expect_inputs(body, &body_in, "body_jaxpr")?;
                if bo != carry {
                    return Err(format!(
                        "body_jaxpr output {} differs from the carry {}",
                        avals_text(&bo),
                        avals_text(carry)
                    ));
                }
                Ok(bo)
            }
            ControlOp::Scan { body, num_consts, num_carry, length, .. } => {
                let (nc, nk) = (*num_consts, *num_carry);
                if nc + nk > avals.len() {
                    return Err(format!("scan has {} operands but {nc} consts + {nk} carries", avals.len()));
                }
                let mut body_in: Vec<Aval> = avals[..nc + nk].to_vec();
                for (k, x) in avals[nc + nk..].iter().enumerate() {
                    if x.shape.first() != Some(length) {
                        return Err(format!("scan xs {k} is {}; its leading axis must be the length {length}", fmt_aval(x)));
                    }
                    body_in.push(Aval::new(x.dtype, x.shape[1..].to_vec()));
                }
                let bo = checked(body, "scan jaxpr")?;
                expect_inputs(body, &body_in, "scan jaxpr")?;
                if bo.len() < nk || bo[..nk] != avals[nc..nc + nk] {
                    return Err(format!(
                        "scan jaxpr carry output {} differs from the carry {}",
                        avals_text(&bo[..nk.min(bo.len())]),
                        avals_text(&avals[nc..nc + nk])
                    ));
                }
                let mut out = bo[..nk].to_vec();
                for y in &bo[nk..] {
                    let mut shape = vec![*length];
                    shape.extend_from_slice(&y.shape);
                    let a = Aval::new(y.dtype, shape);
                    crate::ir::shape::check_size(&a)?;
                    out.push(a);
                }
                Ok(out)
            }
        }
    }
}
