//! Control flow in a plan: a `cond`/`while`/`scan` step over the enclosing plan's slots, running
//! sub-plans (`opt::control_flow` lowers the equations into these).
use super::Plan;

/// One control-flow step over the enclosing plan's slots.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlStep {
    /// Runs `branches[clamp(index, 0, n-1)]` on `operands`; a bool index picks 0 (false) or 1 (true).
    Cond { index: usize, operands: Vec<usize>, branches: Vec<Plan>, outputs: Vec<usize> },
    /// `carry = init; while cond(cond_consts, carry): carry = body(body_consts, carry)`.
    While {
        cond: Plan,
        body: Plan,
        cond_consts: Vec<usize>,
        body_consts: Vec<usize>,
        init: Vec<usize>,
        outputs: Vec<usize>,
    },
    /// `length` iterations of `body(consts, carry, xs[i]) -> (carry, ys[i])` (i descending if `reverse`);
    /// `outputs` are the final carries then the stacked ys.
    Scan {
        body: Plan,
        consts: Vec<usize>,
        init: Vec<usize>,
        xs: Vec<usize>,
        length: usize,
        reverse: bool,
        outputs: Vec<usize>,
    },
}

impl ControlStep {
    /// Every slot the step reads.
    pub fn inputs(&self) -> Vec<usize> {
        match self {
            ControlStep::Cond { index, operands, .. } => std::iter::once(*index).chain(operands.iter().copied()).collect(),
            ControlStep::While { cond_consts, body_consts, init, .. } => {
                cond_consts.iter().chain(body_consts).chain(init).copied().collect()
            }
            ControlStep::Scan { consts, init, xs, .. } => consts.iter().chain(init).chain(xs).copied().collect(),
        }
    }

    /// Every slot the step writes.
    pub fn outputs(&self) -> &[usize] {
        match self {
            ControlStep::Cond { outputs, .. } | ControlStep::While { outputs, .. } | ControlStep::Scan { outputs, .. } => {
                outputs
            }
        }
    }

    /// The sub-plans, in a fixed order (branches; cond then body; body).
    pub fn plans(&self) -> Vec<&Plan> {
        match self {
            ControlStep::Cond { branches, .. } => branches.iter().collect(),
            ControlStep::While { cond, body, .. } => vec![cond, body],
            ControlStep::Scan { body, .. } => vec![body],
        }
    }

    /// Work estimate (see `Plan::work`): a cond costs its most expensive branch, a scan `length` bodies, a
    /// while (unknown trip count) as if it ran `WHILE_GUESS` times.
    pub fn work(&self) -> usize {
        const WHILE_GUESS: usize = 1000;
        match self {
            ControlStep::Cond { branches, .. } => branches.iter().map(Plan::work).max().unwrap_or(0),
            ControlStep::While { cond, body, .. } => {
                cond.work().saturating_add(body.work()).saturating_add(1).saturating_mul(WHILE_GUESS)
            }
            ControlStep::Scan { body, length, .. } => body.work().saturating_mul(*length).saturating_add(*length),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            ControlStep::Cond { .. } => "cond",
            ControlStep::While { .. } => "while",
            ControlStep::Scan { .. } => "scan",
        }
    }
}
