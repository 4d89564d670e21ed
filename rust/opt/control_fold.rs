//! Control flow whose path is known when compiling. A `cond` on a literal index becomes the taken branch's
//! equations, renamed into the enclosing program (gmres's first Gram-Schmidt pass asks `k < passes - 1`
//! with k = 0, so its `cond` ran as a sub-plan on every Arnoldi step). A `while` whose condition folds to
//! `false` once its literal initial operands are substituted runs no iteration: its results are its
//! initial carry (the second Gram-Schmidt pass: `k < 1 & ...` with k = 1). Neither changes a value: the
//! taken branch's equations are the ones the backend would run, and a loop that never runs its body
//! returns its operands.
use std::collections::HashMap;

use super::subst::renamed;
use crate::ir::control::ControlOp;
use crate::ir::{Atom, Eqn, Prim, Program, Scalar, VarId};

pub fn run(p: Program) -> Program {
    if !p.eqns.iter().any(|e| matches!(e.prim, Prim::Control(ControlOp::Cond { .. } | ControlOp::While { .. }))) {
        return p;
    }
    let mut next = super::f16::max_var(&p) + 1;
    super::subst::replace_outputs_inlining(p, |e, eqns| match &e.prim {
        Prim::Control(ControlOp::Cond { branches }) => taken_branch(branches, &e.inputs)
            .filter(|b| b.outvars.len() == e.outputs.len())
            .map(|b| inline(b, &e.inputs[1..], eqns, &mut next)),
        Prim::Control(ControlOp::While { cond, cond_nconsts, body_nconsts, .. }) => {
            let carry = e.inputs.get(cond_nconsts + body_nconsts..)?;
            (carry.len() == e.outputs.len() && never_runs(cond, *cond_nconsts, *body_nconsts, &e.inputs))
                .then(|| carry.to_vec())
        }
        _ => None,
    })
}

/// The branch a literal index picks (`branches[clamp(index, 0, n-1)]`, a bool picks 0 for false).
fn taken_branch<'a>(branches: &'a [Program], inputs: &[Atom]) -> Option<&'a Program> {
    let n = branches.len() as i64;
    let i = match inputs.first()? {
        Atom::Lit(Scalar::Bool(b), _) => *b as i64,
        Atom::Lit(Scalar::Int(i), _) => (*i).clamp(0, n - 1),
        _ => return None,
    };
    let b = branches.get(i as usize)?;
    (b.invars.len() + 1 == inputs.len()).then_some(b)
}

/// Appends `b`'s equations to `out` with `b`'s inputs bound to `operands` and its own variables renamed to
/// fresh ids; returns the atoms its outputs are.
fn inline(b: &Program, operands: &[Atom], out: &mut Vec<Eqn>, next: &mut VarId) -> Vec<Atom> {
    let mut map: HashMap<VarId, Atom> = b.invars.iter().map(|(v, _)| *v).zip(operands.iter().cloned()).collect();
    for e in &b.eqns {
        let inputs = e.inputs.iter().map(|a| renamed(a, &map)).collect();
        let outputs = e
            .outputs
            .iter()
            .map(|(v, av)| {
                let id = *next;
                *next += 1;
                map.insert(*v, Atom::Var(id));
                (id, av.clone())
            })
            .collect();
        out.push(Eqn { prim: e.prim.clone(), inputs, outputs });
    }
    b.outvars.iter().map(|a| renamed(a, &map)).collect()
}

/// Whether a while loop's condition is `false` on its initial operands, judged from the literals among
/// them alone: the condition with those substituted is simplified and folded and must end as the literal
/// `false`. An effectful condition (it runs once even when false) is kept.
fn never_runs(cond: &Program, nc: usize, nb: usize, inputs: &[Atom]) -> bool {
    if inputs.len() < nc + nb || cond.invars.len() != nc + inputs.len() - nc - nb || cond.outvars.len() != 1 {
        return false;
    }
    if cond.eqns.iter().any(|e| e.prim.is_effectful()) {
        return false;
    }
    let operands = inputs[..nc].iter().chain(&inputs[nc + nb..]);
    let lits: HashMap<VarId, Atom> = cond
        .invars
        .iter()
        .zip(operands)
        .filter(|(_, a)| matches!(a, Atom::Lit(..)))
        .map(|((v, _), a)| (*v, a.clone()))
        .collect();
    if lits.is_empty() {
        return false;
    }
    let mut q = cond.clone();
    for e in q.eqns.iter_mut() {
        for a in e.inputs.iter_mut() {
            *a = renamed(a, &lits);
        }
    }
    q.outvars = q.outvars.iter().map(|a| renamed(a, &lits)).collect();
    for _ in 0..4 {
        let n = q.eqns.len();
        q = super::const_fold::run(super::simplify::run(q));
        if matches!(q.outvars[0], Atom::Lit(Scalar::Bool(false), _)) {
            return true;
        }
        if q.eqns.len() == n {
            break;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::ir::parse::parse_program;
    use crate::opt::optimize;

    /// A cond on a literal index inlines its branch; on a variable index it stays.
    #[test]
    fn literal_cond_inlines_the_taken_branch() {
        let src = |index: &str| {
            format!(
                r#"{{"invars": [[0, "f32", []]], "eqns": [
                {{"prim": "gt", "in": [0, {{"lit": 0.0, "dtype": "f32"}}], "out": [[1, "bool", []]]}},
                {{"prim": "convert_element_type", "params": {{"new_dtype": "i32"}}, "in": [1], "out": [[2, "i32", []]]}},
                {{"prim": "cond", "params": {{"branches": [
                    {{"invars": [[0, "f32", []]], "eqns": [{{"prim": "neg", "in": [0], "out": [[1, "f32", []]]}}], "outvars": [1]}},
                    {{"invars": [[0, "f32", []]], "eqns": [{{"prim": "mul", "in": [0, {{"lit": 2.0, "dtype": "f32"}}], "out": [[1, "f32", []]]}},
                        {{"prim": "exp", "in": [1], "out": [[2, "f32", []]]}}], "outvars": [2, 0]}}
                ]}}, "in": [{index}, 0], "out": [[3, "f32", []], [4, "f32", []]]}},
                {{"prim": "add", "in": [3, 4], "out": [[5, "f32", []]]}}],
              "outvars": [5]}}"#
            )
        };
        let fix = |s: String| s.replace(r#""outvars": [1]}"#, r#""outvars": [1, 0]}"#);
        for (index, want) in [(r#"{"lit": 1, "dtype": "i32"}"#, "exp"), (r#"{"lit": 7, "dtype": "i32"}"#, "exp"), (r#"{"lit": -2, "dtype": "i32"}"#, "neg")] {
            let p = optimize(parse_program(&fix(src(index))).unwrap()).unwrap();
            crate::ir::verify::verify(&p).unwrap();
            let text = crate::ir::print::print(&p);
            assert!(!text.contains("cond["), "{text}");
            assert!(text.contains(want), "{text}");
        }
        let p = optimize(parse_program(&fix(src("2"))).unwrap()).unwrap();
        assert!(crate::ir::print::print(&p).contains("cond["));
    }

    /// A while whose counter starts at its bound (`i < 1 & x > 0` with i = 1) returns its operands; one that
    /// starts below it stays.
    #[test]
    fn while_false_on_entry_returns_its_operands() {
        let src = |start: i64| {
            format!(
                r#"{{"invars": [[0, "f32", []]], "eqns": [
                {{"prim": "while", "params": {{"cond_nconsts": 0, "body_nconsts": 0,
                  "cond_jaxpr": {{"invars": [[0, "i32", []], [1, "f32", []]], "eqns": [
                      {{"prim": "lt", "in": [0, {{"lit": 1, "dtype": "i32"}}], "out": [[2, "bool", []]]}},
                      {{"prim": "gt", "in": [1, {{"lit": 0.0, "dtype": "f32"}}], "out": [[3, "bool", []]]}},
                      {{"prim": "and", "in": [3, 2], "out": [[4, "bool", []]]}}], "outvars": [4]}},
                  "body_jaxpr": {{"invars": [[0, "i32", []], [1, "f32", []]], "eqns": [
                      {{"prim": "add", "in": [0, {{"lit": 1, "dtype": "i32"}}], "out": [[2, "i32", []]]}},
                      {{"prim": "sin", "in": [1], "out": [[3, "f32", []]]}}], "outvars": [2, 3]}}}},
                  "in": [{{"lit": {start}, "dtype": "i32"}}, 0], "out": [[1, "i32", []], [2, "f32", []]]}}],
              "outvars": [2, 1]}}"#
            )
        };
        let p = optimize(parse_program(&src(1)).unwrap()).unwrap();
        assert!(p.eqns.is_empty(), "{}", crate::ir::print::print(&p));
        assert_eq!(p.outvars[0], crate::ir::Atom::Var(0));
        let p = optimize(parse_program(&src(0)).unwrap()).unwrap();
        assert!(crate::ir::print::print(&p).contains("while["));
    }
}
