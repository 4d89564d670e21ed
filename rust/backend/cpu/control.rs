//! Running control-flow steps (`plan::ControlStep`).
//!
//! Each sub-plan is compiled once, with the enclosing executable, into its own `CpuExecutable`. A `cond`
//! reads its index from its slot and runs only the taken branch's kernels; a `while`/`scan` runs the body's
//! kernels once per iteration, dropping the previous iteration's buffers (so memory stays constant, and the
//! buffer pool recycles the big ones). Loops whose values are all small (scalars, short vectors), or whose
//! big arrays are only read and written at windows and points, are
//! instead compiled into one Cranelift function with a real loop (`scalar_loop`), so a million-iteration
//! loop runs at native speed with no per-iteration dispatch; other loops run their bodies' kernels, products,
//! library steps and nested control steps on buffers allocated once per loop run (`loop_body`).
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, DType};
use crate::plan::{ControlStep, Plan};

use super::counters::{BRANCH_RUNS, SUBPLAN_RUNS};
use super::CpuExecutable;
use super::validate::slot_avals;

/// A compiled control step: one executable per sub-plan (in `ControlStep::plans()` order) and, for
/// loops over small values, the fused loop function, or for other loops over in-place bodies their prepared form.
pub struct CompiledControl {
    pub subs: Vec<Arc<CpuExecutable>>,
    pub fused: Option<super::scalar_loop::FusedLoop>,
    pub direct: Option<super::loop_body::DirectLoop>,
}

/// Compiles the sub-plans of every control step of `plan` (`None` for other steps).
pub fn compile_controls(plan: &Plan) -> Result<Vec<Option<CompiledControl>>> {
    plan.steps
        .iter()
        .map(|s| match s {
            crate::plan::Step::Control(c) => {
                // heavy math prefers the in-place path; fused still beats the sub-plans when it can't run there
                let heavy = super::scalar_loop::heavy_math(c);
                let mut fused = if heavy { None } else { super::scalar_loop::compile(c, &plan.slots)? };
                let mut subs = if fused.is_some() {
                    vec![]
                } else {
                    c.plans().into_iter().map(super::compile).collect::<Result<Vec<_>>>()?
                };
                let mut direct = if fused.is_some() { None } else { super::loop_body::prepare(c, &subs)? };
                // (only a body of kernels and products beats the fused loop there: one with library steps or
                // nested loops, as odeint's, is faster as one function)
                if heavy && direct.as_ref().is_none_or(|d| !d.plain()) {
                    fused = super::scalar_loop::compile(c, &plan.slots)?;
                    if fused.is_some() {
                        subs = vec![];
                        direct = None;
                    }
                }
                Ok(Some(CompiledControl { subs, fused, direct }))
            }
            _ => Ok(None),
        })
        .collect()
}


fn read_scalar_i64(b: &Buffer) -> Result<i64> {
    let bytes = b.as_bytes();
    let need = b.aval.dtype.size();
    if bytes.len() < need {
        return Err(Error::Execution("control value buffer is too small".into()));
    }
    Ok(match b.aval.dtype {
        DType::Bool => (bytes[0] != 0) as i64,
        DType::I8 => bytes[0] as i8 as i64,
        DType::U8 => bytes[0] as i64,
        DType::I16 => i16::from_le_bytes([bytes[0], bytes[1]]) as i64,
        DType::U16 => u16::from_le_bytes([bytes[0], bytes[1]]) as i64,
        DType::I32 => i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as i64,
        DType::U32 => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as i64,
        DType::I64 => i64::from_le_bytes(bytes[..8].try_into().map_err(|_| Error::Execution("short buffer".into()))?),
        d => return Err(Error::Execution(format!("control value of dtype {}", d.short_name()))),
    })
}

fn run_sub(exe: &CpuExecutable, ins: &[Buffer]) -> Result<Vec<Buffer>> {
    SUBPLAN_RUNS.fetch_add(1, Ordering::Relaxed);
    exe.run(ins)
}

/// `run_sub` handing the inputs over: a loop body's carries are held by the loop alone between iterations,
/// so a point scatter into a carry that the body reads no more writes in place instead of copying the whole
/// array every iteration (the first iteration still copies: its carry is the enclosing plan's value).
fn run_sub_owned(exe: &CpuExecutable, ins: std::vec::Drain<'_, Buffer>) -> Result<Vec<Buffer>> {
    SUBPLAN_RUNS.fetch_add(1, Ordering::Relaxed);
    exe.run_owned(ins)
}

/// The operand slots that a sub-plan without steps (its outputs are all inputs) returns.
fn passthrough(sub: &Plan, operands: &[usize]) -> Result<Vec<usize>> {
    super::exec::collect_exact(sub.outputs.iter().map(|&o| {
        operands.get(o).copied().filter(|_| o < sub.num_inputs).ok_or_else(|| Error::Execution(format!("branch output {o} is not an input")))
    }))
}

/// Runs control step `c` (compiled as `cc`) over the enclosing plan's `slots`.
pub fn run_step(plan: &Plan, c: &ControlStep, cc: &CompiledControl, slots: &mut [Option<Buffer>]) -> Result<()> {
    let get = |slots: &[Option<Buffer>], s: usize| -> Result<Buffer> {
        slots.get(s).and_then(|b| b.clone()).ok_or_else(|| super::exec::missing(s))
    };
    let gets = |slots: &[Option<Buffer>], v: &[usize]| -> Result<Vec<Buffer>> { super::exec::collect_exact(v.iter().map(|&s| get(slots, s))) };
    if let Some(f) = &cc.fused {
        let ins = super::exec::collect_exact(
            c.inputs().iter().map(|&s| slots.get(s).and_then(Option::as_ref).ok_or_else(|| super::exec::missing(s))),
        )?;
        let avals: Vec<&Aval> = c.outputs().iter().map(|&s| &plan.slots[s]).collect();
        let outs = f.run(&ins, &avals)?;
        for (&s, b) in c.outputs().iter().zip(outs) {
            slots[s] = Some(b);
        }
        return Ok(());
    }
    let outs: Vec<Buffer> = match c {
        ControlStep::Cond { index, operands, branches, .. } => {
            let i = read_scalar_i64(&get(slots, *index)?)?;
            let k = i.clamp(0, branches.len() as i64 - 1) as usize;
            BRANCH_RUNS[k.min(7)].fetch_add(1, Ordering::Relaxed);
            let sub = &cc.subs[k];
            if sub.plan.steps.is_empty() {
                // A branch that computes nothing (its outputs are some of its operands, as the untaken
                // side of a `lax.cond` that only forwards its carry often is): no run of its own.
                gets(slots, &passthrough(&sub.plan, operands)?)?
            } else {
                run_sub(sub, &gets(slots, operands)?)?
            }
        }
        ControlStep::While { cond_consts, body_consts, init, outputs, .. } if cc.direct.is_some() => {
            let Some(super::loop_body::DirectLoop::While(d)) = &cc.direct else {
                return Err(Error::Execution("while: prepared body of another kind".into()));
            };
            d.run(&gets(slots, cond_consts)?, &gets(slots, body_consts)?, &gets(slots, init)?, &slot_avals(plan, outputs))?
        }
        ControlStep::While { cond_consts, body_consts, init, .. } => {
            let (cexe, bexe) = (&cc.subs[0], &cc.subs[1]);
            let mut cin = gets(slots, cond_consts)?;
            let nc = cin.len();
            let bconsts = gets(slots, body_consts)?;
            let mut bin = Vec::with_capacity(bconsts.len() + init.len());
            let mut carry = gets(slots, init)?;
            loop {
                cin.extend(carry.iter().cloned());
                let p = run_sub(cexe, &cin)?;
                // (the cond's handles on the carries go before the body runs: see `run_sub_owned`)
                cin.truncate(nc);
                let go = read_scalar_i64(p.first().ok_or_else(|| Error::Execution("cond gave no value".into()))?)?;
                drop(p);
                if go == 0 {
                    break;
                }
                bin.extend(bconsts.iter().cloned());
                bin.extend(carry.drain(..));
                carry = run_sub_owned(bexe, bin.drain(..))?;
            }
            carry
        }
        ControlStep::Scan { consts, init, xs, length, reverse, outputs, .. } if cc.direct.is_some() => {
            let Some(super::loop_body::DirectLoop::Scan(d)) = &cc.direct else {
                return Err(Error::Execution("scan: prepared body of another kind".into()));
            };
            d.run(&gets(slots, consts)?, &gets(slots, init)?, &gets(slots, xs)?, *length, *reverse, &slot_avals(plan, outputs))?
        }
        ControlStep::Scan { consts, init, xs, length, reverse, outputs, .. } => {
            let bexe = &cc.subs[0];
            let nk = init.len();
            let mut carry = gets(slots, init)?;
            let xbufs = gets(slots, xs)?;
            let xavals: Vec<Aval> = xbufs.iter().map(|b| Aval::new(b.aval.dtype, b.aval.shape[1..].to_vec())).collect();
            let xsizes = xavals.iter().map(Buffer::byte_len).collect::<Result<Vec<_>>>()?;
            let yavals = slot_avals(plan, &outputs[nk..]);
            let ys = yavals.iter().map(Buffer::alloc).collect::<Result<Vec<_>>>()?;
            let ysizes = yavals
                .iter()
                .map(|a| Buffer::byte_len(&Aval::new(a.dtype, a.shape[1..].to_vec())))
                .collect::<Result<Vec<_>>>()?;
            let consts = gets(slots, consts)?;
            let mut ins: Vec<Buffer> = Vec::with_capacity(consts.len() + nk + xs.len());
            for step in 0..*length {
                let i = if *reverse { length - 1 - step } else { step };
                ins.clear();
                ins.extend(consts.iter().cloned());
                ins.extend(carry.drain(..));
                for ((xb, xa), &sz) in xbufs.iter().zip(&xavals).zip(&xsizes) {
                    let bytes = xb.as_bytes();
                    let part = bytes
                        .get(i * sz..(i + 1) * sz)
                        .ok_or_else(|| Error::Execution("scan xs buffer is too small".into()))?;
                    ins.push(Buffer::from_bytes(xa, part)?);
                }
                let mut outs = run_sub_owned(bexe, ins.drain(..))?;
                let yout = outs.split_off(nk);
                carry = outs;
                for ((y, dst), &sz) in yout.iter().zip(&ys).zip(&ysizes) {
                    let src = y.as_bytes();
                    if src.len() < sz || dst.as_bytes().len() < (i + 1) * sz {
                        return Err(Error::Execution("scan ys buffer is too small".into()));
                    }
                    // SAFETY: `dst` was allocated above for all `length` rows and is not shared yet (it is
                    // stored into the slots only after the loop); the ranges were checked just above.
                    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_ptr().add(i * sz), sz) };
                }
            }
            carry.into_iter().chain(ys).collect()
        }
    };
    for (&s, b) in c.outputs().iter().zip(outs) {
        slots[s] = Some(b);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::ir::{Aval, DType};
    use crate::buffer::Buffer;

    fn f32s(shape: &[usize], v: &[f32]) -> Buffer {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        Buffer::from_bytes(&Aval::new(DType::F32, shape.to_vec()), &bytes).unwrap()
    }
    fn i32s(v: i32) -> Buffer {
        Buffer::from_bytes(&Aval::scalar(DType::I32), &v.to_le_bytes()).unwrap()
    }
    fn read_f32(b: &Buffer) -> Vec<f32> {
        b.as_bytes().chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
    fn read_i32(b: &Buffer) -> i32 {
        let c = b.as_bytes();
        i32::from_le_bytes([c[0], c[1], c[2], c[3]])
    }
    fn run(json: &str, ins: &[Buffer]) -> Vec<Buffer> {
        let (_, plan) = crate::opt::compile_pipeline(json).unwrap();
        let exe = crate::backend::cpu::compile(&plan).unwrap();
        exe.run(ins).unwrap()
    }

    /// `while i < n: (i, x) = (i + 1, x * 2 + 1)` over a vector carry (step by step) or a scalar one (fused).
    fn while_json(shape: &str) -> String {
        format!(
            r#"{{"invars": [[0, "i32", []], [1, "f32", {shape}]], "eqns": [
            {{"prim": "while", "params": {{"cond_nconsts": 1, "body_nconsts": 0,
              "cond_jaxpr": {{"invars": [[0, "i32", []], [1, "i32", []], [2, "f32", {shape}]],
                 "eqns": [{{"prim": "lt", "in": [1, 0], "out": [[3, "bool", []]]}}], "outvars": [3]}},
              "body_jaxpr": {{"invars": [[0, "i32", []], [1, "f32", {shape}]],
                 "eqns": [{{"prim": "add", "in": [0, {{"lit": 1, "dtype": "i32"}}], "out": [[2, "i32", []]]}},
                          {{"prim": "mul", "in": [1, {{"lit": 2.0, "dtype": "f32"}}], "out": [[3, "f32", {shape}]]}},
                          {{"prim": "add", "in": [3, {{"lit": 1.0, "dtype": "f32"}}], "out": [[4, "f32", {shape}]]}}],
                 "outvars": [2, 4]}}}},
             "in": [0, {{"lit": 0, "dtype": "i32"}}, 1], "out": [[2, "i32", []], [3, "f32", {shape}]]}}],
          "outvars": [2, 3]}}"#
        )
    }

    #[test]
    fn while_loops_step_by_step_and_fused() {
        use std::sync::atomic::Ordering::Relaxed;
        // A carry bigger than `scalar_loop::MAX_ELEMS` runs as sub-plans (cond and body per iteration).
        let runs0 = super::SUBPLAN_RUNS.load(Relaxed);
        let x: Vec<f32> = (0..200).map(|i| i as f32).collect();
        let out = run(&while_json("[200]"), &[i32s(5), f32s(&[200], &x)]);
        assert_eq!(read_i32(&out[0]), 5);
        assert_eq!(read_f32(&out[1]), x.iter().map(|v| v * 32.0 + 31.0).collect::<Vec<_>>());
        assert!(super::SUBPLAN_RUNS.load(Relaxed) >= runs0 + 11);
        // A small vector carry is fused like a scalar one: one call, no sub-plan runs of its own.
        let fused0 = super::super::counters::FUSED_LOOP_CALLS.load(Relaxed);
        let out = run(&while_json("[2]"), &[i32s(5), f32s(&[2], &[0.0, 1.0])]);
        assert_eq!(read_i32(&out[0]), 5);
        assert_eq!(read_f32(&out[1]), vec![31.0, 63.0]);
        assert!(super::super::counters::FUSED_LOOP_CALLS.load(Relaxed) > fused0);
        let out = run(&while_json("[]"), &[i32s(5), f32s(&[], &[1.0])]);
        assert_eq!((read_i32(&out[0]), read_f32(&out[1])), (5, vec![63.0]));
        let out = run(&while_json("[]"), &[i32s(0), f32s(&[], &[1.0])]);
        assert_eq!((read_i32(&out[0]), read_f32(&out[1])), (0, vec![1.0]));
        let out = run(&while_json("[]"), &[i32s(1_000_000), f32s(&[], &[0.0])]);
        assert_eq!(read_i32(&out[0]), 1_000_000);
    }

    /// A fused loop over small arrays: a [2, 3] carry updated through a broadcast row, a transpose read,
    /// row sums (a reduction) and an iota, with the predicate a reduction of the carry; against a plain loop.
    #[test]
    fn small_array_loops_fuse_with_broadcasts_reductions_and_iota() {
        use std::sync::atomic::Ordering::Relaxed;
        let json = r#"{"invars": [[0, "f32", [2, 3]], [1, "f32", [3]]], "eqns": [
            {"prim": "while", "params": {"cond_nconsts": 0, "body_nconsts": 1,
              "cond_jaxpr": {"invars": [[0, "f32", [2, 3]]], "eqns": [
                 {"prim": "reduce_sum", "params": {"axes": [0, 1]}, "in": [0], "out": [[1, "f32", []]]},
                 {"prim": "lt", "in": [1, {"lit": 500.0, "dtype": "f32"}], "out": [[2, "bool", []]]}], "outvars": [2]},
              "body_jaxpr": {"invars": [[0, "f32", [3]], [1, "f32", [2, 3]]], "eqns": [
                 {"prim": "broadcast_in_dim", "params": {"shape": [2, 3], "broadcast_dimensions": [1]}, "in": [0], "out": [[2, "f32", [2, 3]]]},
                 {"prim": "reduce_sum", "params": {"axes": [1]}, "in": [1], "out": [[3, "f32", [2]]]},
                 {"prim": "broadcast_in_dim", "params": {"shape": [2, 3], "broadcast_dimensions": [0]}, "in": [3], "out": [[4, "f32", [2, 3]]]},
                 {"prim": "iota", "params": {"dtype": "f32", "shape": [2, 3], "dimension": 1}, "in": [], "out": [[5, "f32", [2, 3]]]},
                 {"prim": "mul", "in": [1, {"lit": 1.5, "dtype": "f32"}], "out": [[6, "f32", [2, 3]]]},
                 {"prim": "add", "in": [6, 2], "out": [[7, "f32", [2, 3]]]},
                 {"prim": "mul", "in": [4, {"lit": 0.125, "dtype": "f32"}], "out": [[8, "f32", [2, 3]]]},
                 {"prim": "sub", "in": [7, 8], "out": [[9, "f32", [2, 3]]]},
                 {"prim": "add", "in": [9, 5], "out": [[10, "f32", [2, 3]]]}],
               "outvars": [10]}},
             "in": [1, 0], "out": [[2, "f32", [2, 3]]]}], "outvars": [2]}"#;
        let x0 = [0.5f32, -1.0, 0.25, 2.0, 0.0, -0.75];
        let r = [0.1f32, 0.2, -0.3];
        let fused0 = super::super::counters::FUSED_LOOP_CALLS.load(Relaxed);
        let out = run(json, &[f32s(&[2, 3], &x0), f32s(&[3], &r)]);
        assert!(super::super::counters::FUSED_LOOP_CALLS.load(Relaxed) > fused0, "the loop was not fused");
        let mut x = x0;
        let mut iters = 0;
        while x.iter().fold(0.0f32, |a, v| a + v) < 500.0 {
            let sums = [x[0] + x[1] + x[2], x[3] + x[4] + x[5]];
            let mut n = [0f32; 6];
            for (e, v) in n.iter_mut().enumerate() {
                *v = (x[e] * 1.5 + r[e % 3]) - sums[e / 3] * 0.125 + (e % 3) as f32;
            }
            x = n;
            iters += 1;
        }
        assert!(iters > 3, "{iters}");
        let got = read_f32(&out[0]);
        for (g, w) in got.iter().zip(&x) {
            assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "{got:?} vs {x:?}");
        }
    }

    #[test]
    fn cond_clamps_index_and_scan_stacks_in_reverse() {
        let cond = r#"{"invars": [[0, "i32", []], [1, "f32", [3]]], "eqns": [
            {"prim": "cond", "params": {"branches": [
              {"invars": [[0, "f32", [3]]], "eqns": [{"prim": "neg", "in": [0], "out": [[1, "f32", [3]]]}], "outvars": [1]},
              {"invars": [[0, "f32", [3]]], "eqns": [], "outvars": [0]},
              {"invars": [[0, "f32", [3]]], "eqns": [{"prim": "mul", "in": [0, 0], "out": [[1, "f32", [3]]]}], "outvars": [1]}]},
             "in": [0, 1], "out": [[2, "f32", [3]]]}], "outvars": [2]}"#;
        let x = f32s(&[3], &[1.0, 2.0, 3.0]);
        for (i, want) in [(-4, vec![-1.0, -2.0, -3.0]), (1, vec![1.0, 2.0, 3.0]), (9, vec![1.0, 4.0, 9.0])] {
            assert_eq!(read_f32(&run(cond, &[i32s(i), x.clone()])[0]), want);
        }
        // carry c, xs x: c = c + x; y = c * 10; reverse
        let scan = r#"{"invars": [[0, "f32", []], [1, "f32", [4]]], "eqns": [
            {"prim": "scan", "params": {"num_consts": 0, "num_carry": 1, "length": 4, "reverse": true,
              "jaxpr": {"invars": [[0, "f32", []], [1, "f32", []]], "eqns": [
                 {"prim": "add", "in": [0, 1], "out": [[2, "f32", []]]},
                 {"prim": "mul", "in": [2, {"lit": 10.0, "dtype": "f32"}], "out": [[3, "f32", []]]}],
               "outvars": [2, 3]}},
             "in": [0, 1], "out": [[2, "f32", []], [3, "f32", [4]]]}], "outvars": [2, 3]}"#;
        let out = run(scan, &[f32s(&[], &[0.0]), f32s(&[4], &[1.0, 2.0, 3.0, 4.0])]);
        assert_eq!(read_f32(&out[0]), vec![10.0]);
        assert_eq!(read_f32(&out[1]), vec![100.0, 90.0, 70.0, 40.0]);
    }

    #[test]
    fn malformed_control_programs_are_errors() {
        let bad = [
            // cond index of the wrong type
            r#"{"invars": [[0, "f32", []]], "eqns": [{"prim": "cond", "params": {"branches": [
               {"invars": [], "eqns": [], "outvars": []}]}, "in": [0], "out": []}], "outvars": []}"#,
            // while body changing the carry type
            r#"{"invars": [[0, "f32", []]], "eqns": [{"prim": "while", "params": {"cond_nconsts": 0, "body_nconsts": 0,
               "cond_jaxpr": {"invars": [[0, "f32", []]], "eqns": [], "outvars": [{"lit": true, "dtype": "bool"}]},
               "body_jaxpr": {"invars": [[0, "f32", []]], "eqns": [], "outvars": [{"lit": 1, "dtype": "i32"}]}},
               "in": [0], "out": [[1, "f32", []]]}], "outvars": [1]}"#,
            // scan xs without the leading axis
            r#"{"invars": [[0, "f32", [3]]], "eqns": [{"prim": "scan", "params": {"num_consts": 0, "num_carry": 0,
               "length": 4, "jaxpr": {"invars": [[0, "f32", []]], "eqns": [], "outvars": []}},
               "in": [0], "out": []}], "outvars": []}"#,
            // too many consts
            r#"{"invars": [], "eqns": [{"prim": "while", "params": {"cond_nconsts": 3, "body_nconsts": 0,
               "cond_jaxpr": {"invars": [], "eqns": [], "outvars": []},
               "body_jaxpr": {"invars": [], "eqns": [], "outvars": []}}, "in": [], "out": []}], "outvars": []}"#,
        ];
        for j in bad {
            assert!(crate::opt::compile_pipeline(j).is_err(), "{j}");
        }
    }
}
