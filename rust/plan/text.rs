//! Readable listings of plans (`plan_text`) and their control steps (`step_text`), for tests and `as_text`.
use std::fmt::Write;

use super::{ControlStep, KOp, OutputKind, Plan, Step};
use crate::ir::{Aval, DType, Prim, Scalar};

fn scalar_text(s: &Scalar, d: DType) -> String {
    crate::ir::print::literal_text(s, d)
}

/// A readable listing of a plan: slots, each step (kernel domains, inputs with strides, body, outputs),
/// and the output slots.
pub fn plan_text(plan: &Plan) -> String {
    let ty = |a: &Aval| crate::ir::shape::fmt_aval(a);
    let mut o = String::new();
    let _ = writeln!(o, "plan {}: {} input(s), {} slot(s), {} step(s)", plan.name, plan.num_inputs, plan.slots.len(), plan.steps.len());
    for (i, a) in plan.slots.iter().enumerate() {
        let _ = writeln!(o, "  %{i}: {}{}", ty(a), if i < plan.num_inputs { "  (input)" } else { "" });
    }
    for s in &plan.steps {
        match s {
            Step::View { src, dst } => {
                let _ = writeln!(o, "  view %{dst} <- %{src}");
            }
            Step::Library(l) => {
                let ins: Vec<String> = l.inputs.iter().map(|s| format!("%{s}")).collect();
                let outs: Vec<String> = l.outputs.iter().map(|s| format!("%{s}")).collect();
                let _ = writeln!(
                    o,
                    "  library ({}) <- {} ({}){}",
                    outs.join(", "),
                    crate::ir::print::prim_text(&Prim::Lib(l.op.clone())),
                    ins.join(", "),
                    if l.epilogue { "  [epilogue: next kernel, in place]" } else { "" }
                );
            }
            Step::Control(c) => {
                let _ = writeln!(o, "  {}", step_text(c));
            }
            Step::Kernel(k) => {
                let _ = writeln!(o, "  kernel {} domain={:?} reduce_axes={:?}", k.name, k.domain, k.reduce_axes);
                for (j, inp) in k.inputs.iter().enumerate() {
                    let off = if inp.offset != 0 { format!(" offset={}", inp.offset) } else { String::new() };
                    let _ = writeln!(o, "    in{j} = %{} {} strides={:?}{off}", inp.slot, inp.dtype.short_name(), inp.strides);
                }
                for (j, ins) in k.body.iter().enumerate() {
                    let rhs = match &ins.op {
                        KOp::Load { input } => format!("load in{input}"),
                        KOp::Const { value } => format!("const {}", scalar_text(value, ins.dtype)),
                        KOp::Iota { axis } => format!("iota axis={axis}"),
                        KOp::Unary { op, a } => format!("{} v{a}", Prim::Unary(*op).name()),
                        KOp::Binary { op, a, b } => format!("{} v{a} v{b}", Prim::Binary(*op).name()),
                        KOp::Compare { op, a, b } => format!("{} v{a} v{b}", Prim::Compare(*op).name()),
                        KOp::Select { pred, cases } => format!(
                            "select_n v{pred} {}",
                            cases.iter().map(|c| format!("v{c}")).collect::<Vec<_>>().join(" ")
                        ),
                        KOp::Convert { a } => format!("convert v{a}"),
                        KOp::Bitcast { a } => format!("bitcast v{a}"),
                        KOp::IntegerPow { a, y } => format!("integer_pow[y={y}] v{a}"),
                        KOp::Clamp { lo, x, hi } => format!("clamp v{lo} v{x} v{hi}"),
                        KOp::Fma { a, b, c } => format!("fma v{a} v{b} v{c}"),
                        KOp::Gather { input, index, stride, hi, fill } => format!(
                            "gather in{input} v{index} stride={stride} hi={hi}{}",
                            fill.map(|f| format!(" fill=v{f}")).unwrap_or_default()
                        ),
                    };
                    let _ = writeln!(o, "    v{j}:{} = {rhs}", ins.dtype.short_name());
                }
                for out in &k.outputs {
                    let how = match out.kind {
                        OutputKind::Store => "store".to_string(),
                        OutputKind::Reduce(op) => op.name().to_string(),
                        OutputKind::ArgReduce { is_max } => if is_max { "argmax" } else { "argmin" }.to_string(),
                    };
                    let _ = writeln!(o, "    %{} <- {how} v{}", out.slot, out.value);
                }
            }
        }
    }
    let outs: Vec<String> = plan.outputs.iter().map(|s| format!("%{s}")).collect();
    let _ = write!(o, "  outputs: ({})", outs.join(", "));
    o
}

/// Text of a control step for `plan_text`: its slots, then each sub-plan indented.
pub fn step_text(c: &ControlStep) -> String {
    let slots = |v: &[usize]| v.iter().map(|s| format!("%{s}")).collect::<Vec<_>>().join(", ");
    let mut o = match c {
        ControlStep::Cond { index, operands, outputs, .. } => {
            format!("cond ({}) <- index %{index} ({})", slots(outputs), slots(operands))
        }
        ControlStep::While { cond_consts, body_consts, init, outputs, .. } => format!(
            "while ({}) <- cond_consts ({}) body_consts ({}) init ({})",
            slots(outputs),
            slots(cond_consts),
            slots(body_consts),
            slots(init)
        ),
        ControlStep::Scan { consts, init, xs, length, reverse, outputs, .. } => format!(
            "scan length={length} reverse={reverse} ({}) <- consts ({}) init ({}) xs ({})",
            slots(outputs),
            slots(consts),
            slots(init),
            slots(xs)
        ),
    };
    for p in c.plans() {
        let t = plan_text(p);
        for line in t.lines() {
            let _ = write!(o, "\n    | {line}");
        }
    }
    o
}
