//! Defensive checks of a `Plan` before code generation: every index in range, every dtype consistent, every
//! load address inside its buffer. A bad plan is an `Error`, never a panic or an out-of-bounds access.
use crate::error::{Error, Result};
use crate::ir::{Aval, DType, ReduceOp};
use crate::plan::{ControlStep, KOp, Kernel, OutputKind, Plan, Step};

fn bad(msg: String) -> Error {
    Error::Codegen(format!("invalid plan: {msg}"))
}

/// `f32[3,4]`
pub fn aval_str(a: &Aval) -> String {
    let dims: Vec<String> = a.shape.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", a.dtype.short_name(), dims.join(","))
}

/// The shape of a kernel's reducing outputs: the domain without the reduced axes.
pub fn outer_shape(k: &Kernel) -> Vec<usize> {
    k.domain.iter().enumerate().filter(|(d, _)| !k.reduce_axes.contains(d)).map(|(_, &n)| n).collect()
}

pub fn validate_plan(plan: &Plan) -> Result<()> {
    let n = plan.slots.len();
    if plan.num_inputs > n {
        return Err(bad(format!("{} inputs but only {n} slots", plan.num_inputs)));
    }
    for (i, a) in plan.slots.iter().enumerate() {
        if a.numel().and_then(|e| e.checked_mul(a.dtype.size())).filter(|&b| b <= isize::MAX as usize).is_none() {
            return Err(Error::Memory { bytes: u128::MAX, what: format!("slot {i} of shape {}", aval_str(a)) });
        }
    }
    let mut written = vec![false; n];
    written[..plan.num_inputs].iter_mut().for_each(|w| *w = true);
    for (si, step) in plan.steps.iter().enumerate() {
        match step {
            Step::View { src, dst } => {
                let (src, dst) = (*src, *dst);
                if src >= n || dst >= n {
                    return Err(bad(format!("step {si}: view {src} -> {dst} out of range ({n} slots)")));
                }
                if !written[src] {
                    return Err(bad(format!("step {si}: view reads slot {src} before it is written")));
                }
                if written[dst] {
                    return Err(bad(format!("step {si}: view writes slot {dst}, which is already written")));
                }
                let (a, b) = (&plan.slots[src], &plan.slots[dst]);
                if a.dtype != b.dtype || a.numel() != b.numel() {
                    return Err(bad(format!("step {si}: view from {} to {}", aval_str(a), aval_str(b))));
                }
                written[dst] = true;
            }
            Step::Control(c) => validate_step(plan, si, c, &mut written)?,
            Step::Library(l) => {
                let name = l.op.name();
                let mut ops = Vec::with_capacity(l.inputs.len());
                for &s in &l.inputs {
                    if s >= n || !written[s] {
                        return Err(bad(format!("step {si} ({name}): reads slot {s}, which is not written yet")));
                    }
                    ops.push((plan.slots[s].clone(), false));
                }
                let want = l.op.infer(&ops).map_err(|m| bad(format!("step {si} ({name}): {m}")))?;
                if want.len() != l.outputs.len() {
                    return Err(bad(format!("step {si} ({name}): {} outputs, expected {}", l.outputs.len(), want.len())));
                }
                for (&s, w) in l.outputs.iter().zip(&want) {
                    if s >= n || s < plan.num_inputs || written[s] || &plan.slots[s] != w {
                        return Err(bad(format!(
                            "step {si} ({name}): output slot {s} is out of range, already written or not of aval {}",
                            aval_str(w)
                        )));
                    }
                    written[s] = true;
                }
            }
            Step::Kernel(k) => {
                validate_kernel(plan, k, &written).map_err(|e| match e {
                    Error::Codegen(m) => Error::Codegen(format!("{m} (step {si}, kernel {})", k.name)),
                    Error::Unsupported(m) => Error::Unsupported(format!("{m} (step {si}, kernel {})", k.name)),
                    e => e,
                })?;
                for o in &k.outputs {
                    written[o.slot] = true;
                }
            }
        }
    }
    for (i, &o) in plan.outputs.iter().enumerate() {
        if o >= n || !written[o] {
            return Err(bad(format!("output {i} is slot {o}, which is never written")));
        }
    }
    Ok(())
}

/// The lowest and highest element `inp` reads over `domain` (non-empty), with a gather moving each read by
/// `0..=moved` (or `moved..=0`) elements.
fn reach(inp: &crate::plan::KernelInput, domain: &[usize], moved: i128) -> (i128, i128) {
    let mut lo = inp.offset as i128 + moved.min(0);
    let mut hi = inp.offset as i128 + moved.max(0);
    for (&s, &d) in inp.strides.iter().zip(domain) {
        let span = s as i128 * (d as i128 - 1);
        if span < 0 { lo += span } else { hi += span }
    }
    (lo, hi)
}

fn validate_kernel(plan: &Plan, k: &Kernel, written: &[bool]) -> Result<()> {
    let n = plan.slots.len();
    let rank = k.domain.len();
    let numel = k.domain.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let numel = numel.filter(|&e| e <= isize::MAX as usize).ok_or_else(|| bad(format!("domain {:?} too large", k.domain)))?;
    for (i, &a) in k.reduce_axes.iter().enumerate() {
        if a >= rank || (i > 0 && k.reduce_axes[i - 1] >= a) {
            return Err(bad(format!("reduce axes {:?} not sorted, unique axes of rank {rank}", k.reduce_axes)));
        }
    }
    for (j, inp) in k.inputs.iter().enumerate() {
        if inp.slot >= n || !written[inp.slot] {
            return Err(bad(format!("input {j} reads slot {}, which is not written yet", inp.slot)));
        }
        let aval = &plan.slots[inp.slot];
        if inp.dtype != aval.dtype {
            return Err(bad(format!("input {j} has dtype {} but slot {} is {}", inp.dtype.short_name(), inp.slot, aval_str(aval))));
        }
        if inp.strides.len() != rank {
            return Err(bad(format!("input {j} has {} strides for a rank-{rank} domain", inp.strides.len())));
        }
        if numel > 0 {
            let (lo, hi) = reach(inp, &k.domain, 0);
            let len = aval.numel().unwrap_or(0) as i128;
            if lo < 0 || hi >= len {
                return Err(bad(format!(
                    "input {j} reads elements {lo}..={hi} of slot {} ({}), out of bounds",
                    inp.slot, aval_str(aval)
                )));
            }
        }
    }
    if let Some(at) = k.f16_arithmetic() {
        return Err(bad(format!("float16 arithmetic at {at} (it should have been rewritten to float32)")));
    }
    for (i, ins) in k.body.iter().enumerate() {
        let dt_of = |j: usize| -> Result<DType> {
            if j < i { Ok(k.body[j].dtype) } else { Err(bad(format!("instruction {i} uses %{j}, not an earlier instruction"))) }
        };
        let want = |cond: bool, what: &str| -> Result<()> {
            if cond { Ok(()) } else { Err(bad(format!("instruction {i} ({:?} : {}): {what}", ins.op, ins.dtype.short_name()))) }
        };
        let dt = ins.dtype;
        match &ins.op {
            KOp::Load { input } => {
                let inp = k.inputs.get(*input).ok_or_else(|| bad(format!("instruction {i} loads input {input} of {}", k.inputs.len())))?;
                want(inp.dtype == dt, "dtype differs from the input's")?;
            }
            KOp::Const { .. } => {}
            KOp::Iota { axis } => want(*axis < rank, "axis out of range")?,
            KOp::Unary { op, a } => {
                let adt = dt_of(*a)?;
                if *op == crate::ir::UnaryOp::IsFinite {
                    want(dt == DType::Bool, "is_finite gives bool")?;
                } else {
                    want(adt == dt, "operand dtype differs")?;
                }
            }
            KOp::Binary { op, a, b } => {
                let (adt, bdt) = (dt_of(*a)?, dt_of(*b)?);
                want(adt == dt, "operand dtype differs")?;
                let pow_int = *op == crate::ir::BinaryOp::Pow && dt.is_float() && bdt.is_int();
                want(bdt == dt || pow_int, "operand dtype differs")?;
            }
            KOp::Compare { a, b, .. } => {
                let (adt, bdt) = (dt_of(*a)?, dt_of(*b)?);
                want(adt == bdt && dt == DType::Bool, "compare takes equal dtypes and gives bool")?;
            }
            KOp::Select { pred, cases } => {
                let pdt = dt_of(*pred)?;
                want(pdt == DType::Bool || pdt.is_int(), "predicate must be bool or an integer")?;
                want(!cases.is_empty(), "no cases")?;
                for &c in cases {
                    want(dt_of(c)? == dt, "case dtype differs")?;
                }
            }
            KOp::Convert { a } => {
                dt_of(*a)?;
            }
            KOp::Bitcast { a } => {
                let adt = dt_of(*a)?;
                want(adt.size() == dt.size(), "bitcast between different widths")?;
            }
            KOp::IntegerPow { a, .. } => want(dt_of(*a)? == dt, "operand dtype differs")?,
            KOp::Clamp { lo, x, hi } => {
                let ok = dt_of(*lo)? == dt && dt_of(*x)? == dt && dt_of(*hi)? == dt;
                want(ok, "operand dtypes differ")?;
            }
            KOp::Fma { a, b, c } => {
                let ok = dt_of(*a)? == dt && dt_of(*b)? == dt && dt_of(*c)? == dt;
                want(ok, "operand dtypes differ")?;
                want(matches!(dt, DType::F32 | DType::F64), "fma takes float32 or float64")?;
            }
            KOp::Gather { input, index, stride, hi, fill } => {
                let inp = k.inputs.get(*input).ok_or_else(|| bad(format!("instruction {i} gathers from input {input} of {}", k.inputs.len())))?;
                want(inp.dtype == dt, "dtype differs from the input's")?;
                want(dt_of(*index)?.is_int(), "the index must be an integer")?;
                if let Some(f) = fill {
                    want(dt_of(*f)? == dt, "fill dtype differs")?;
                }
                // Every clamped position of every domain point must lie in the buffer.
                if numel > 0 {
                    let moved = (*stride as i128).checked_mul(*hi as i128).ok_or_else(|| bad(format!("instruction {i}: gather span overflows")))?;
                    let (lo, top) = reach(inp, &k.domain, moved);
                    let len = plan.slots[inp.slot].numel().unwrap_or(0) as i128;
                    want(lo >= 0 && top < len, "gathers outside its input's buffer")?;
                }
            }
        }
    }
    let outer = outer_shape(k);
    let mut seen = Vec::new();
    for (o, out) in k.outputs.iter().enumerate() {
        if out.slot >= n || out.slot < plan.num_inputs || written[out.slot] || seen.contains(&out.slot) {
            return Err(bad(format!("output {o} writes slot {}, which is an input, out of range or already written", out.slot)));
        }
        seen.push(out.slot);
        let vdt = k.body.get(out.value).map(|i| i.dtype).ok_or_else(|| bad(format!("output {o} is %{}, past the body", out.value)))?;
        let aval = &plan.slots[out.slot];
        let (shape, dt_ok) = match out.kind {
            OutputKind::Store => (&k.domain, aval.dtype == vdt),
            OutputKind::Reduce(op) => {
                if vdt.is_float() && matches!(op, ReduceOp::And | ReduceOp::Or) {
                    return Err(Error::Unsupported(format!("reduce {op:?} on {}", vdt.short_name())));
                }
                (&outer, aval.dtype == vdt)
            }
            OutputKind::ArgReduce { .. } => {
                if k.reduce_axes.len() != 1 {
                    return Err(bad(format!("output {o}: argmax/argmin needs exactly one reduce axis, got {:?}", k.reduce_axes)));
                }
                (&outer, aval.dtype.is_int())
            }
        };
        if &aval.shape != shape || !dt_ok {
            return Err(bad(format!(
                "output {o} ({:?} of a {} value) has slot {} of aval {}",
                out.kind, vdt.short_name(), out.slot, aval_str(aval)
            )));
        }
    }
    Ok(())
}

fn sub_inputs(p: &Plan) -> Vec<Aval> {
    p.slots[..p.num_inputs.min(p.slots.len())].to_vec()
}

fn sub_outputs(p: &Plan) -> Vec<Aval> {
    p.outputs.iter().filter_map(|&s| p.slots.get(s).cloned()).collect()
}

fn texts(a: &[Aval]) -> String {
    a.iter().map(aval_str).collect::<Vec<_>>().join(", ")
}

/// Checks a control step against the enclosing plan: slots in range, inputs written, outputs fresh, and
/// the sub-plans' signatures equal to the slots' avals. Marks the outputs written.
pub fn validate_step(plan: &Plan, si: usize, c: &ControlStep, written: &mut [bool]) -> Result<()> {
    let n = plan.slots.len();
    let name = c.name();
    for s in c.inputs() {
        if s >= n || !written[s] {
            return Err(bad(format!("step {si} ({name}): reads slot {s}, which is not written yet")));
        }
    }
    for &s in c.outputs() {
        if s >= n || s < plan.num_inputs || written[s] {
            return Err(bad(format!("step {si} ({name}): output slot {s} is out of range or already written")));
        }
    }
    let sig = |what: &str, p: &Plan, ins: Vec<Aval>, outs: Vec<Aval>| -> Result<()> {
        if sub_inputs(p) != ins || p.num_inputs > p.slots.len() {
            return Err(bad(format!(
                "step {si} ({name}): {what} takes ({}) but is given ({})",
                texts(&sub_inputs(p)),
                texts(&ins)
            )));
        }
        if sub_outputs(p) != outs || p.outputs.len() != outs.len() {
            return Err(bad(format!(
                "step {si} ({name}): {what} returns ({}), expected ({})",
                texts(&sub_outputs(p)),
                texts(&outs)
            )));
        }
        Ok(())
    };
    match c {
        ControlStep::Cond { index, operands, branches, outputs } => {
            let ia = &plan.slots[*index];
            if !ia.shape.is_empty() || !matches!(ia.dtype, DType::I32 | DType::Bool) {
                return Err(bad(format!("step {si} (cond): index slot is {}", aval_str(ia))));
            }
            if branches.is_empty() {
                return Err(bad(format!("step {si} (cond): no branches")));
            }
            for (i, b) in branches.iter().enumerate() {
                sig(&format!("branch {i}"), b, slot_avals(plan, operands), slot_avals(plan, outputs))?;
            }
        }
        ControlStep::While { cond, body, cond_consts, body_consts, init, outputs } => {
            let carry = slot_avals(plan, init);
            if slot_avals(plan, outputs) != carry {
                return Err(bad(format!("step {si} (while): outputs differ from the carry")));
            }
            let mut ci = slot_avals(plan, cond_consts);
            ci.extend(carry.iter().cloned());
            sig("cond", cond, ci, vec![Aval::scalar(DType::Bool)])?;
            let mut bi = slot_avals(plan, body_consts);
            bi.extend(carry.iter().cloned());
            sig("body", body, bi, carry)?;
        }
        ControlStep::Scan { body, consts, init, xs, length, outputs, .. } => {
            let carry = slot_avals(plan, init);
            let mut bi = slot_avals(plan, consts);
            bi.extend(carry.iter().cloned());
            for &x in xs {
                let a = &plan.slots[x];
                if a.shape.first() != Some(length) {
                    return Err(bad(format!("step {si} (scan): xs slot {x} is {}, length {length}", aval_str(a))));
                }
                bi.push(Aval::new(a.dtype, a.shape[1..].to_vec()));
            }
            let outs = slot_avals(plan, outputs);
            if outs.len() < carry.len() || outs[..carry.len()] != carry[..] {
                return Err(bad(format!("step {si} (scan): outputs differ from the carry")));
            }
            let mut bo = carry.clone();
            for y in &outs[carry.len()..] {
                if y.shape.first() != Some(length) {
                    return Err(bad(format!("step {si} (scan): ys slot is {}, length {length}", aval_str(y))));
                }
                bo.push(Aval::new(y.dtype, y.shape[1..].to_vec()));
            }
            sig("body", body, bi, bo)?;
        }
    }
    for &s in c.outputs() {
        written[s] = true;
    }
    Ok(())
}

/// The avals of `slots` of `plan`.
pub fn slot_avals(plan: &Plan, slots: &[usize]) -> Vec<Aval> {
    slots.iter().map(|&s| plan.slots[s].clone()).collect()
}
