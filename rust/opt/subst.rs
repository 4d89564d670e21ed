//! The rewrite shared by the passes that replace equations by values (`simplify`, `const_fold`,
//! `barrier`): equations in program order, each input first renamed through the replacements made so
//! far; an equation the pass replaces is dropped, and its outputs stand for the given atoms everywhere
//! after it, program outputs included.
use std::collections::HashMap;

use crate::ir::{Atom, Eqn, Program, VarId};

/// `a` renamed through `map`: a variable the map names becomes its atom; anything else stays as it is.
pub fn renamed(a: &Atom, map: &HashMap<VarId, Atom>) -> Atom {
    match a {
        Atom::Var(v) => map.get(v).cloned().unwrap_or_else(|| a.clone()),
        lit => lit.clone(),
    }
}

/// Rewrites `p`: `replace` sees each equation with its inputs renamed and returns the atoms its outputs
/// equal (one per output; the equation is dropped) or `None` (the equation is kept).
pub fn replace_outputs(p: Program, mut replace: impl FnMut(&Eqn) -> Option<Vec<Atom>>) -> Program {
    replace_outputs_inlining(p, |e, _| replace(e))
}

/// As `replace_outputs`, where `replace` may also append equations (in the renamed program's names) that
/// compute the atoms it returns: they take the replaced equation's place (`control_fold` inlining a branch).
pub fn replace_outputs_inlining(p: Program, mut replace: impl FnMut(&Eqn, &mut Vec<Eqn>) -> Option<Vec<Atom>>) -> Program {
    let mut subst: HashMap<VarId, Atom> = HashMap::new();
    let mut eqns = Vec::with_capacity(p.eqns.len());
    for mut e in p.eqns {
        for a in e.inputs.iter_mut() {
            *a = renamed(a, &subst);
        }
        match replace(&e, &mut eqns) {
            Some(atoms) => {
                for ((v, _), a) in e.outputs.iter().zip(atoms) {
                    subst.insert(*v, a);
                }
            }
            None => eqns.push(e),
        }
    }
    let outvars = p.outvars.iter().map(|a| renamed(a, &subst)).collect();
    Program { name: p.name, invars: p.invars, eqns, outvars }
}
