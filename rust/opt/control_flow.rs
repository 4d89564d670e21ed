//! Control flow in a plan: each `cond`/`while`/`scan` equation becomes one `Step::Control` whose
//! sub-programs are optimized and fused into their own sub-`Plan`s. The backend runs the taken branch's
//! plan only, and a loop body's plan once per iteration; nothing is unrolled, so the plan's size (and the
//! compile time) does not depend on the trip count.
use crate::error::Result;
use crate::ir::control::ControlOp;
use crate::ir::Program;
use crate::plan::{ControlStep, Plan};

fn sub_plan(p: &Program, name: String) -> Result<Plan> {
    let mut q = super::optimize(p.clone())?;
    q.name = name;
    super::fusion::lower_to_plan(&q)
}

/// Lowers one control equation whose operands live in `inputs` and results in `outputs` (slots of the
/// enclosing plan). The operands have been checked against the sub-programs by the verifier.
pub fn lower_eqn(op: &ControlOp, inputs: Vec<usize>, outputs: Vec<usize>) -> Result<ControlStep> {
    let internal = |m: &str| crate::error::Error::Codegen(format!("internal error lowering {}: {m}", op.name()));
    Ok(match op {
        ControlOp::Cond { branches } => {
            let (index, operands) = inputs.split_first().ok_or_else(|| internal("no index"))?;
            let branches =
                branches.iter().enumerate().map(|(i, b)| sub_plan(b, format!("branch{i}"))).collect::<Result<Vec<_>>>()?;
            ControlStep::Cond { index: *index, operands: operands.to_vec(), branches, outputs }
        }
        ControlOp::While { cond, body, cond_nconsts, body_nconsts } => {
            let (nc, nb) = (*cond_nconsts, *body_nconsts);
            if nc + nb > inputs.len() {
                return Err(internal("too few operands"));
            }
            ControlStep::While {
                cond: sub_plan(cond, "cond".into())?,
                body: sub_plan(body, "body".into())?,
                cond_consts: inputs[..nc].to_vec(),
                body_consts: inputs[nc..nc + nb].to_vec(),
                init: inputs[nc + nb..].to_vec(),
                outputs,
            }
        }
        ControlOp::Scan { body, num_consts, num_carry, length, reverse } => {
            let (nc, nk) = (*num_consts, *num_carry);
            if nc + nk > inputs.len() {
                return Err(internal("too few operands"));
            }
            ControlStep::Scan {
                body: sub_plan(body, "scan_body".into())?,
                consts: inputs[..nc].to_vec(),
                init: inputs[nc..nc + nk].to_vec(),
                xs: inputs[nc + nk..].to_vec(),
                length: *length,
                reverse: *reverse,
                outputs,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::ir::parse::parse_program;
    use crate::opt::compile_pipeline;
    use crate::plan::Step;

    /// `x -> cond(x > 0, x * 2, -x)` via an i32 index, and a while loop counting to n.
    pub const COND: &str = r#"{"invars": [[0, "f32", []]], "eqns": [
        {"prim": "gt", "in": [0, {"lit": 0.0, "dtype": "f32"}], "out": [[1, "bool", []]]},
        {"prim": "convert_element_type", "params": {"new_dtype": "i32"}, "in": [1], "out": [[2, "i32", []]]},
        {"prim": "cond", "params": {"branches": [
            {"invars": [[0, "f32", []]], "eqns": [{"prim": "neg", "in": [0], "out": [[1, "f32", []]]}], "outvars": [1]},
            {"invars": [[0, "f32", []]], "eqns": [{"prim": "mul", "in": [0, {"lit": 2.0, "dtype": "f32"}], "out": [[1, "f32", []]]}], "outvars": [1]}
        ]}, "in": [2, 0], "out": [[3, "f32", []]]}],
      "outvars": [3]}"#;

    #[test]
    fn cond_parses_verifies_and_plans() {
        let p = parse_program(COND).unwrap();
        crate::ir::verify::verify(&p).unwrap();
        let text = crate::ir::print::print(&p);
        assert!(text.contains("cond[branches=({ lambda ; a:f32[]. let"), "{text}");
        let q = parse_program(&crate::ir::parse::to_json(&p)).unwrap();
        assert_eq!(p, q);
        let (_, plan) = compile_pipeline(COND).unwrap();
        let n = plan.steps.iter().filter(|s| matches!(s, Step::Control(_))).count();
        assert_eq!(n, 1, "{}", crate::plan::plan_text(&plan));
    }

    #[test]
    fn bad_sub_programs_are_verify_errors() {
        // branch output types differ
        let bad = COND.replace(r#""outvars": [1]}
        ]}"#, r#""outvars": [{"lit": 1, "dtype": "i32"}]}
        ]}"#);
        assert_ne!(bad, COND);
        let e = compile_pipeline(&bad).unwrap_err().to_string();
        assert!(e.contains("different output types"), "{e}");
        // branch input types differ from the operands
        let bad = COND.replace(r#"{"invars": [[0, "f32", []]], "eqns": [{"prim": "neg""#, r#"{"invars": [[0, "f32", [2]]], "eqns": [{"prim": "neg""#);
        let e = compile_pipeline(&bad).unwrap_err().to_string();
        assert!(e.contains("branch 0"), "{e}");
        // missing params
        let bad = r#"{"invars": [], "eqns": [{"prim": "while", "params": {}, "in": [], "out": []}], "outvars": []}"#;
        let e = compile_pipeline(bad).unwrap_err().to_string();
        assert!(e.contains("missing parameter"), "{e}");
    }
}
