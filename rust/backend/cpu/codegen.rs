//! A `Kernel` → one Cranelift function
//! `extern "C" fn(inputs: *const *const u8, outputs: *const *mut u8, begin: u64, end: u64)`
//! (`module::kernel_signature`): the emission of the loop nest that `loop_plan` lays out (its docs
//! describe the streams, the axes, the vectorization modes and strip mode).
use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, FuncRef, Function, InstBuilder, StackSlotData, StackSlotKind, Value};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};

use crate::error::{Error, Result};
use crate::ir::{DType, ReduceOp};
use crate::plan::{KOp, Kernel, OutputKind};

use super::clif::{cl_type, counted_begin, counted_end, iconst, repeat_begin, repeat_end, var_with};
use super::kfacts::{Fact, Facts};
use super::loop_plan::{axes, choose_mode, live_from, outer_len, sum_order, to_i64, ynn_chunk, Axis, Mode, StripPlan, SumOrder};
use super::math_fn::{Imports, MathFn};
use super::ops;
use super::simd;

/// A 4-lane gather's operands (see `gather_lanes4`): the input's address and byte stride along the vector
/// axis, the first lane's position, value and index dtypes, index and fill vectors, bound, stride in bytes.
struct GatherLanes {
    a: Value,
    st: i64,
    first: i64,
    dt: DType,
    idt: DType,
    iv: Value,
    fv: Option<Value>,
    hi: u64,
    sb: i64,
    in_bounds: bool,
}

/// A gather of 32-bit values by int32/uint32 indices on 4 lanes, its clamp and fill test done once on the
/// index vector (two or three vector instructions) instead of per lane in 64 bits (four or five each): the
/// lanes then only extract, load and insert. Same reads and results as the per-lane code. `None`: other
/// dtypes or a bound past int32 (the caller emits lanes one by one).
fn gather_lanes4(b: &mut FunctionBuilder, g: GatherLanes) -> Option<Value> {
    let vt = match g.dt {
        DType::F32 => types::F32X4,
        DType::I32 | DType::U32 => types::I32X4,
        _ => return None,
    };
    if !matches!(g.idt, DType::I32 | DType::U32) || g.hi > i32::MAX as u64 || b.func.dfg.value_type(g.iv) != types::I32X4 {
        return None;
    }
    let h = b.ins().iconst(types::I32, g.hi as i64);
    let hv = b.ins().splat(types::I32X4, h);
    // (unsigned: a negative int32 is a huge uint32, so one compare and one min cover both ends)
    let (cv, ok) = if g.in_bounds {
        (g.iv, None)
    } else if g.fv.is_some() {
        (b.ins().umin(g.iv, hv), Some(b.ins().icmp(IntCC::UnsignedLessThanOrEqual, g.iv, hv)))
    } else if g.idt == DType::U32 {
        (b.ins().umin(g.iv, hv), None)
    } else {
        let z = b.ins().iconst(types::I32, 0);
        let zv = b.ins().splat(types::I32X4, z);
        let lo = b.ins().smax(g.iv, zv);
        (b.ins().smin(lo, hv), None)
    };
    let lt = vt.lane_type();
    let mut v: Option<Value> = None;
    for l in 0..4u8 {
        let i = b.ins().extractlane(cv, l);
        let i = b.ins().uextend(types::I64, i);
        let off = b.ins().imul_imm_s(i, g.sb);
        let at = b.ins().iadd(g.a, off);
        let at = b.ins().iadd_imm_s(at, (g.first + i64::from(l)) * g.st);
        let x = b.ins().load(lt, super::clif::trusted(), at, 0);
        v = Some(match v {
            None => b.ins().scalar_to_vector(vt, x),
            Some(v) => b.ins().insertlane(v, x, l),
        });
    }
    let v = v?;
    Some(match (ok, g.fv) {
        (Some(ok), Some(f)) => {
            let m = if vt == types::I32X4 { ok } else { b.ins().bitcast(vt, super::simd::vflags(), ok) };
            b.ins().bitselect(m, v, f)
        }
        _ => v,
    })
}

/// Per-output accumulators of the point being emitted.
#[derive(Clone)]
struct Acc {
    /// Scalar accumulator (value, and the index for arg-reductions).
    s: Option<(Variable, Option<Variable>)>,
    /// Vector accumulators, one per unrolled vector.
    v: Vec<Variable>,
}

struct Gen<'k> {
    k: &'k Kernel,
    imports: &'k Imports,
    live: Vec<bool>,
    out_dtypes: &'k [DType],
    /// Element size in bytes per stream (inputs, then outputs).
    esize: Vec<i64>,
    /// Byte offset of the domain origin per stream.
    offset: Vec<i64>,
    outer: Vec<Axis>,
    red: Vec<Axis>,
    mode: Mode,
    lanes: u32,
    unroll: u32,
    /// Index per outer axis (the last one is the row position `j`).
    oidx: Vec<Variable>,
    /// Index per reduced axis.
    ridx: Vec<Variable>,
    /// Per stream: the address at row position 0 of the current row.
    rowaddr: Vec<Variable>,
    /// Per stream: the address of the current outer point.
    cur: Vec<Variable>,
    /// Per stream: the address inside the reduced loops.
    icur: Vec<Variable>,
    acc: Vec<Acc>,
    scratch: Vec<Option<Value>>,
    /// Runtime bounds of the outermost reduced loop (the chunked-reduction variant).
    rbounds: Option<(Value, Value)>,
    /// Strip mode (see the module docs); empty when off.
    strip: StripPlan,
    routines: &'k Routines,
    /// While emitting one loop of a strip: what `emit_body` computes there.
    phase: Option<Phase>,
    /// The order the kernel's sums follow (`loop_plan::sum_order`), when not the nest's own.
    order: Option<SumOrder>,
    /// What the body's integer values are known to be (`kfacts`).
    facts: Facts,
    /// When set, `emit_body` pushes each reduced output's value here (in output order) instead of
    /// combining it into the accumulators (`xla_vector_groups` transposes them first).
    capture: Option<Vec<Value>>,
}

/// One loop of a strip: compute the `live` instructions; those in `loads` are read from their strip
/// array (the variable holds the address of the current vector); store each of `sinks`' values to its
/// array, and the kernel outputs when `outputs`.
struct Phase {
    live: Vec<bool>,
    loads: Vec<(usize, Variable)>,
    sinks: Vec<(usize, Variable)>,
    outputs: bool,
}

/// Where a strip runs: each stream's byte stride along the vectorized axis and its address at the strip's
/// start, the index variable of that axis, and which axis it is (see `is_vec_axis`).
struct Walk {
    vstr: Vec<i64>,
    start: Vec<Value>,
    idx: Variable,
    which: Option<bool>,
}

/// The kernel's strip plan (`strip_plan`) and the block routines it calls, imported into its function.
#[derive(Default)]
pub struct Routines {
    pub plan: StripPlan,
    pub math: HashMap<MathFn, FuncRef>,
    pub stream: Option<FuncRef>,
    /// The store fence, called once at the exit of a kernel that streams.
    pub fence: Option<FuncRef>,
    /// The threefry routine, when the plan has hashes.
    pub threefry: Option<FuncRef>,
}

/// Fills `func` (whose signature must be `kernel_signature`) with the kernel's code. `out_dtypes[o]` is the
/// dtype of output `o`'s slot.
///
/// `partial`: build the chunked-reduction variant instead (see `partial_eligible`): `[begin, end)` then
/// ranges over the outermost (coalesced) reduced axis, every outer point is computed, and each output
/// receives the partial reduction of that chunk.
#[allow(clippy::too_many_arguments)]
pub fn build_kernel(
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    k: &Kernel,
    out_dtypes: &[DType],
    imports: &Imports,
    routines: &Routines,
    frontend: TargetFrontendConfig,
    partial: bool,
) -> Result<()> {
    let outer_len = outer_len(k)?;
    let inner_empty = k.reduce_axes.iter().any(|&a| k.domain.get(a) == Some(&0));
    let (outer, red, esize, live) = axes(k, out_dtypes)?;
    let (mode, lanes, unroll) = choose_mode(k, out_dtypes, &outer, &red, &esize, &live);
    let order = if partial { None } else { sum_order(k, &red, &live) };
    let strip = routines.plan.clone();
    let stream = strip.stream;
    if stream && routines.fence.is_none() {
        return Err(Error::Codegen(format!("kernel {}: store fence not imported", k.name)));
    }
    let mut offset = Vec::new();
    for inp in &k.inputs {
        offset.push(to_i64(inp.offset as i128 * inp.dtype.size() as i128, "offset")?);
    }
    offset.resize(esize.len(), 0);

    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (inp_arr, out_arr, begin, end) = (params[0], params[1], params[2], params[3]);
    let exit = b.create_block();

    if outer_len == 0 {
        b.ins().jump(exit, &[]);
    } else {
        let ns = esize.len();
        let mut g = Gen {
            k,
            imports,
            live,
            out_dtypes,
            esize,
            offset,
            oidx: Vec::new(),
            ridx: Vec::new(),
            rowaddr: Vec::new(),
            cur: Vec::new(),
            icur: Vec::new(),
            acc: vec![Acc { s: None, v: Vec::new() }; k.outputs.len()],
            scratch: Vec::new(),
            rbounds: None,
            strip,
            routines,
            phase: None,
            outer,
            red,
            mode,
            lanes,
            unroll,
            order,
            facts: super::kfacts::analyze(k),
            capture: None,
        };
        for _ in 0..g.outer.len() {
            g.oidx.push(b.declare_var(types::I64));
        }
        for _ in 0..g.red.len() {
            g.ridx.push(b.declare_var(types::I64));
        }
        for _ in 0..ns {
            g.rowaddr.push(b.declare_var(types::I64));
            g.cur.push(b.declare_var(types::I64));
            g.icur.push(b.declare_var(types::I64));
        }
        let flags = super::clif::trusted();
        let mut bases = Vec::new();
        for j in 0..k.inputs.len() {
            bases.push(b.ins().load(types::I64, flags, inp_arr, (8 * j) as i32));
        }
        for o in 0..k.outputs.len() {
            bases.push(b.ins().load(types::I64, flags, out_arr, (8 * o) as i32));
        }
        let total = iconst(&mut b, types::I64, outer_len as i64);
        let (begin, end_c) = if partial {
            let Some(r0) = g.red.first() else {
                return Err(Error::Codegen(format!("kernel {}: no reduced loop to split", k.name)));
            };
            let rn = iconst(&mut b, types::I64, r0.n as i64);
            let rend = b.ins().umin(end, rn);
            let rbegin = b.ins().umin(begin, rend);
            g.rbounds = Some((rbegin, rend));
            (iconst(&mut b, types::I64, 0), total)
        } else {
            (begin, b.ins().umin(end, total))
        };
        let setup = b.create_block();
        let go = b.ins().icmp(IntCC::UnsignedLessThan, begin, end_c);
        b.ins().brif(go, setup, &[], exit, &[]);
        b.switch_to_block(setup);

        if g.outer.is_empty() {
            // A single outer point (begin == 0).
            for s in 0..ns {
                let a = b.ins().iadd_imm_s(bases[s], g.offset[s]);
                b.def_var(g.cur[s], a);
            }
            g.emit_point(&mut b, false, inner_empty)?;
            b.ins().jump(exit, &[]);
        } else {
            g.emit_rows(&mut b, &bases, begin, end_c, exit, inner_empty)?;
        }
    }
    b.switch_to_block(exit);
    if let Some(fence) = routines.fence.filter(|_| stream) {
        b.ins().call(fence, &[]);
    }
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(frontend);
    Ok(())
}

impl Gen<'_> {
    fn ns(&self) -> usize {
        self.esize.len()
    }

    /// Adds `times * strides[s]` to each stream variable in `vars`.
    fn bump(&self, b: &mut FunctionBuilder, vars: &[Variable], strides: &[i64], times: i64) {
        for (s, &st) in strides.iter().enumerate() {
            let delta = st.wrapping_mul(times);
            if delta != 0 {
                let a = b.use_var(vars[s]);
                let a = b.ins().iadd_imm_s(a, delta);
                b.def_var(vars[s], a);
            }
        }
    }

    fn emit_rows(
        &mut self, b: &mut FunctionBuilder, bases: &[Value], begin: Value, end_c: Value, exit: cranelift_codegen::ir::Block,
        inner_empty: bool,
    ) -> Result<()> {
        let ns = self.ns();
        let last = self.outer.len() - 1;
        // Decompose `begin` into outer indices.
        let mut rem = begin;
        let mut idx = vec![None; self.outer.len()];
        for p in (0..self.outer.len()).rev() {
            if p == 0 {
                idx[p] = Some(rem);
            } else {
                let n = iconst(b, types::I64, self.outer[p].n as i64);
                let i = b.ins().urem(rem, n);
                rem = b.ins().udiv(rem, n);
                idx[p] = Some(i);
            }
        }
        let idx: Vec<Value> = idx
            .into_iter()
            .map(|i| i.ok_or_else(|| Error::Codegen("outer index not decomposed".into())))
            .collect::<Result<_>>()?;
        for p in 0..self.outer.len() {
            b.def_var(self.oidx[p], idx[p]);
        }
        for s in 0..ns {
            let mut a = b.ins().iadd_imm_s(bases[s], self.offset[s]);
            for p in 0..last {
                let st = self.outer[p].strides[s];
                if st != 0 {
                    let t = b.ins().imul_imm_s(idx[p], st);
                    a = b.ins().iadd(a, t);
                }
            }
            b.def_var(self.rowaddr[s], a);
        }
        let flat = b.declare_var(types::I64);
        b.def_var(flat, begin);
        let row = b.create_block();
        b.ins().jump(row, &[]);

        // row: the run [j, min(n, j + end - flat)) of the innermost outer axis.
        b.switch_to_block(row);
        let jv = b.use_var(self.oidx[last]);
        let vstr = self.outer[last].strides.clone();
        for s in 0..ns {
            let ra = b.use_var(self.rowaddr[s]);
            let a = if vstr[s] != 0 {
                let t = b.ins().imul_imm_s(jv, vstr[s]);
                b.ins().iadd(ra, t)
            } else {
                ra
            };
            b.def_var(self.cur[s], a);
        }
        let n_last = iconst(b, types::I64, self.outer[last].n as i64);
        let left_row = b.ins().isub(n_last, jv);
        let f0 = b.use_var(flat);
        let left_all = b.ins().isub(end_c, f0);
        let run = b.ins().umin(left_row, left_all);
        let rend = b.ins().iadd(f0, run);
        let shead = b.create_block();
        if self.mode == Mode::OuterVec {
            let lu = (self.lanes * self.unroll) as i64;
            let vhead = b.create_block();
            let vbody = b.create_block();
            if self.strip.is_empty() {
                b.ins().jump(vhead, &[]);
            } else {
                let thead = b.create_block();
                let tbody = b.create_block();
                b.ins().jump(thead, &[]);
                b.switch_to_block(thead);
                let f = b.use_var(flat);
                let fs = b.ins().iadd_imm_s(f, self.strip.len as i64);
                let fits = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, fs, rend);
                b.ins().brif(fits, tbody, &[], vhead, &[]);
                b.switch_to_block(tbody);
                self.strip_here(b, &self.cur.clone(), &vstr, self.oidx[last], Some(false))?;
                self.bump(b, &self.cur.clone(), &vstr, self.strip.len as i64);
                for v in [flat, self.oidx[last]] {
                    let x = b.use_var(v);
                    let x = b.ins().iadd_imm_s(x, self.strip.len as i64);
                    b.def_var(v, x);
                }
                b.ins().jump(thead, &[]);
            }
            b.switch_to_block(vhead);
            let f = b.use_var(flat);
            let fl = b.ins().iadd_imm_s(f, lu);
            let fits = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, fl, rend);
            b.ins().brif(fits, vbody, &[], shead, &[]);
            b.switch_to_block(vbody);
            self.emit_point(b, true, inner_empty)?;
            self.bump(b, &self.cur.clone(), &vstr, lu);
            for v in [flat, self.oidx[last]] {
                let x = b.use_var(v);
                let x = b.ins().iadd_imm_s(x, lu);
                b.def_var(v, x);
            }
            b.ins().jump(vhead, &[]);
        } else {
            b.ins().jump(shead, &[]);
        }
        let sbody = b.create_block();
        let after = b.create_block();
        b.switch_to_block(shead);
        let f = b.use_var(flat);
        let more = b.ins().icmp(IntCC::UnsignedLessThan, f, rend);
        b.ins().brif(more, sbody, &[], after, &[]);
        b.switch_to_block(sbody);
        self.emit_point(b, false, inner_empty)?;
        self.bump(b, &self.cur.clone(), &vstr, 1);
        for v in [flat, self.oidx[last]] {
            let x = b.use_var(v);
            let x = b.ins().iadd_imm_s(x, 1);
            b.def_var(v, x);
        }
        b.ins().jump(shead, &[]);

        b.switch_to_block(after);
        if last == 0 {
            b.ins().jump(exit, &[]);
            return Ok(());
        }
        let f = b.use_var(flat);
        let done = b.ins().icmp(IntCC::Equal, f, end_c);
        let carry0 = b.create_block();
        b.ins().brif(done, exit, &[], carry0, &[]);
        // Carry chain over the other outer axes, innermost first.
        b.switch_to_block(carry0);
        let z = iconst(b, types::I64, 0);
        b.def_var(self.oidx[last], z);
        let incs: Vec<_> = (0..last).map(|_| b.create_block()).collect();
        b.ins().jump(incs[last - 1], &[]);
        for p in (0..last).rev() {
            b.switch_to_block(incs[p]);
            let v = self.oidx[p];
            let i0 = b.use_var(v);
            let i1 = b.ins().iadd_imm_s(i0, 1);
            b.def_var(v, i1);
            let st = self.outer[p].strides.clone();
            self.bump(b, &self.rowaddr.clone(), &st, 1);
            if p == 0 {
                b.ins().jump(row, &[]);
            } else {
                let reset = b.create_block();
                let n = iconst(b, types::I64, self.outer[p].n as i64);
                let wrap = b.ins().icmp(IntCC::Equal, i1, n);
                b.ins().brif(wrap, reset, &[], row, &[]);
                b.switch_to_block(reset);
                let z = iconst(b, types::I64, 0);
                b.def_var(v, z);
                self.bump(b, &self.rowaddr.clone(), &st, -(self.outer[p].n as i64));
                b.ins().jump(incs[p - 1], &[]);
            }
        }
        Ok(())
    }

    /// One strip at the addresses in `cursors`, along the axis with byte strides `vstr` and index `idx`.
    fn strip_here(
        &mut self, b: &mut FunctionBuilder, cursors: &[Variable], vstr: &[i64], idx: Variable, which: Option<bool>,
    ) -> Result<()> {
        let start = cursors.iter().map(|&v| b.use_var(v)).collect();
        self.emit_strip(b, &Walk { vstr: vstr.to_vec(), start, idx, which })
    }

    /// One strip of `self.strip.len` points at `walk.start`. Leaves `icur` at the strip's end and `walk.idx` as it
    /// was (the caller advances both loops' own variables).
    fn emit_strip(&mut self, b: &mut FunctionBuilder, walk: &Walk) -> Result<()> {
        let k = self.k;
        let ops = self.strip.ops.clone();
        let stream = self.strip.stream;
        let (vstr, start) = (&walk.vstr[..], &walk.start[..]);
        let n = iconst(b, types::I64, self.strip.len as i64);
        let nin = k.inputs.len();
        // (f32 or f64 elements: `StripPlan::f64`)
        let esz = self.strip.elem_bytes();
        let bytes = self.strip.len as u32 * esz;
        let array = |b: &mut FunctionBuilder| {
            let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 6));
            b.ins().stack_addr(types::I64, slot, 0)
        };
        // The last operation's routine may write the only output directly when nothing reads after it.
        let direct = !stream
            && k.outputs.len() == 1
            && k.outputs[0].kind == OutputKind::Store
            && ops.last().is_some_and(|&(h, _)| h == k.outputs[0].value)
            && self.out_dtypes.first() == Some(&if self.strip.f64 { DType::F64 } else { DType::F32 })
            && vstr.get(nin) == Some(&(esz as i64));
        // Per body instruction: the address of its strip array, once computed.
        let mut at: Vec<Option<Value>> = vec![None; k.body.len()];
        // Hashes first: their inputs are counters and keys, and the math usually reads their outputs.
        for h in self.strip.hashes.clone() {
            let fref = self.routines.threefry.ok_or_else(|| {
                Error::Codegen(format!("kernel {}: threefry routine not imported", k.name))
            })?;
            let (xa, xb) = (array(b), array(b));
            let rows = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes * 10, 6));
            let inj = b.ins().stack_addr(types::I64, rows, 0);
            let row = |b: &mut FunctionBuilder, j: usize| b.ins().iadd_imm_s(inj, j as i64 * bytes as i64);
            // The keys once per strip (scalar code at its first point), the counters per point.
            let once: Vec<(usize, Value)> =
                (0..10).filter(|j| h.uniform >> j & 1 == 1).map(|j| (h.inj[j], row(b, j))).collect();
            if !once.is_empty() {
                self.emit_once(b, &once, walk)?;
            }
            let mut sinks = vec![(h.a0, xa), (h.b0, xb)];
            sinks.extend((0..10).filter(|j| h.uniform >> j & 1 == 0).map(|j| (h.inj[j], row(b, j))));
            self.emit_phase(b, &sinks, false, &at, walk)?;
            let mask = iconst(b, types::I64, h.uniform as i64);
            b.ins().call(fref, &[xa, xb, inj, n, mask]);
            at[h.a_out] = Some(xa);
            at[h.b_out] = Some(xb);
        }
        for (j, &(h, f)) in ops.iter().enumerate() {
            let operands = match k.body[h].op {
                KOp::Unary { a, .. } => vec![a],
                KOp::Binary { a, b, .. } => vec![a, b],
                _ => return Err(Error::Codegen(format!("kernel {}: strip operation %{h} is not unary or binary", k.name))),
            };
            let arr = array(b);
            // Operands in arrays already, or contiguous inputs, are read in place; the others are computed into
            // arrays by one loop.
            let mut src: Vec<Option<Value>> = operands
                .iter()
                .map(|&a| match (at[a], &k.body[a].op) {
                    (Some(p), _) => Some(p),
                    (None, KOp::Load { input }) if vstr.get(*input) == Some(&(esz as i64)) => Some(start[*input]),
                    _ => None,
                })
                .collect();
            let mut missing: Vec<usize> = operands.iter().zip(&src).filter(|(_, s)| s.is_none()).map(|(&a, _)| a).collect();
            missing.dedup();
            if !missing.is_empty() {
                // (The routine maps into `arr`: one operand not needed later may live there; the others, and
                // operands needed later, get arrays of their own.)
                let keep = self.kept_for_later(&ops[j + 1..], &missing, &at, direct);
                let mut sinks = Vec::new();
                for &a in &missing {
                    let in_arr = sinks.iter().any(|&(_, p)| p == arr);
                    sinks.push((a, if keep.contains(&a) || in_arr { array(b) } else { arr }));
                }
                for &t in keep.iter().filter(|t| !missing.contains(t)) {
                    sinks.push((t, array(b)));
                }
                self.emit_phase(b, &sinks, false, &at, walk)?;
                for &(t, p) in &sinks {
                    if p != arr {
                        at[t] = Some(p);
                    }
                }
                for (s, a) in src.iter_mut().zip(&operands) {
                    if s.is_none() {
                        *s = sinks.iter().find(|&&(t, _)| t == *a).map(|&(_, p)| p);
                    }
                }
            }
            let dst = if direct && j + 1 == ops.len() { start[nin] } else { arr };
            let fref = *self.routines.math.get(&f).ok_or_else(|| {
                Error::Codegen(format!("kernel {}: block routine for {f:?} not imported", k.name))
            })?;
            let mut args = src
                .into_iter()
                .collect::<Option<Vec<Value>>>()
                .ok_or_else(|| Error::Codegen(format!("kernel {}: strip operand of %{h} not computed", k.name)))?;
            args.extend([dst, n]);
            b.ins().call(fref, &args);
            at[h] = Some(dst);
        }
        if direct {
            return Ok(());
        }
        if !stream {
            return self.emit_phase(b, &[], true, &at, walk);
        }
        // Outputs into arrays (those already in one are streamed from it), then streamed to memory.
        let mut from = Vec::new();
        let mut sinks = Vec::new();
        for out in &k.outputs {
            let arr = match at[out.value] {
                Some(p) => p,
                None => {
                    let p = array(b);
                    sinks.push((out.value, p));
                    p
                }
            };
            from.push(arr);
        }
        if !sinks.is_empty() {
            self.emit_phase(b, &sinks, false, &at, walk)?;
        }
        let fref = self.routines.stream.ok_or_else(|| Error::Codegen(format!("kernel {}: streaming copy not imported", k.name)))?;
        for (o, &src) in from.iter().enumerate() {
            b.ins().call(fref, &[src, start[nin + o], n]);
        }
        Ok(())
    }

    /// The values an operand phase computing `a` (with the arrays `at`) should also keep in strip arrays
    /// because the later phases (the operands of `later` ops, then the outputs unless `no_last`, the last
    /// routine writing the only output) would compute them again: without this, a value that both a routine's
    /// operand and the last loop need (the uniforms of a rejection sampler: two threefry hashes per point) is
    /// computed once per loop. Only 4-byte lanes and masks (16-byte vectors; float64 values in f64 strips) are
    /// kept, loads, constants and indices never (cheap), and at most `MAX_KEPT` (each is a stack array): a value
    /// not kept is computed again, as before. Loaded values are the stored bits, so results do not change.
    fn kept_for_later(&self, later: &[(usize, MathFn)], a: &[usize], at: &[Option<Value>], no_last: bool) -> Vec<usize> {
        const MAX_KEPT: usize = 8;
        let k = self.k;
        let this = live_from(k, a.iter().copied(), |i| at[i].is_some());
        let keepable = |i: usize| {
            this[i]
                && if self.strip.f64 {
                    k.body[i].dtype == DType::F64
                } else {
                    matches!(k.body[i].dtype, DType::F32 | DType::I32 | DType::U32 | DType::Bool)
                }
                && !matches!(k.body[i].op, KOp::Load { .. } | KOp::Const { .. } | KOp::Iota { .. })
        };
        let mut roots = Vec::new();
        for &(h, _) in later {
            match k.body[h].op {
                KOp::Unary { a: x, .. } => roots.push(x),
                KOp::Binary { a: x, b: y, .. } => roots.extend([x, y]),
                _ => {}
            }
        }
        if !no_last {
            roots.extend(k.outputs.iter().map(|o| o.value));
        }
        let routine = |i: usize| self.strip.ops.iter().any(|&(h, _)| h == i);
        let next = live_from(k, roots, |i| at[i].is_some() || routine(i) || keepable(i));
        let kept: Vec<usize> = (0..k.body.len()).filter(|&i| next[i] && keepable(i)).collect();
        if kept.len() > MAX_KEPT {
            return Vec::new();
        }
        kept
    }

    /// A vector loop over the strip at `walk.start`: each `sinks` value into its array, and the kernel
    /// outputs (stores, or vector accumulators) when `outputs`. Instructions with an array in `at` are read
    /// from it.
    fn emit_phase(
        &mut self, b: &mut FunctionBuilder, sinks: &[(usize, Value)], outputs: bool, at: &[Option<Value>], walk: &Walk,
    ) -> Result<()> {
        let k = self.k;
        let (vstr, start) = (&walk.vstr[..], &walk.start[..]);
        let roots = sinks.iter().map(|&(t, _)| t).chain(k.outputs.iter().filter(|_| outputs).map(|o| o.value));
        let live = live_from(k, roots, |i| at[i].is_some());
        for (s, &a) in start.iter().enumerate() {
            b.def_var(self.icur[s], a);
        }
        let mut loads = Vec::new();
        for (i, a) in at.iter().enumerate() {
            if let (Some(a), true) = (a, live[i]) {
                let v = b.declare_var(types::I64);
                b.def_var(v, *a);
                loads.push((i, v));
            }
        }
        let sinks: Vec<(usize, Variable)> = sinks
            .iter()
            .map(|&(t, a)| {
                let v = b.declare_var(types::I64);
                b.def_var(v, a);
                (t, v)
            })
            .collect();
        let lu = (self.lanes * self.unroll) as i64;
        // Array addresses advance by a vector step of elements, the position and index by its points.
        let esz = self.strip.elem_bytes() as i64;
        let steps: Vec<(Variable, i64)> = loads.iter().chain(sinks.iter()).map(|&(_, v)| (v, lu * esz)).collect();
        // The index along the axis (for `Iota`) walks the strip and is restored after it.
        let idx0 = b.use_var(walk.idx);
        let pos = b.declare_var(types::I64);
        let z = iconst(b, types::I64, 0);
        b.def_var(pos, z);
        let body = b.create_block();
        let after = b.create_block();
        b.ins().jump(body, &[]);
        b.switch_to_block(body);
        self.phase = Some(Phase { live, loads, sinks, outputs });
        let r = self.emit_body(b, self.lanes, self.unroll, vstr, walk.which);
        self.phase = None;
        r?;
        self.bump(b, &self.icur.clone(), vstr, lu);
        for (v, step) in steps.into_iter().chain([(pos, lu), (walk.idx, lu)]) {
            let x = b.use_var(v);
            let x = b.ins().iadd_imm_s(x, step);
            b.def_var(v, x);
        }
        let p = b.use_var(pos);
        let more = b.ins().icmp_imm_s(IntCC::SignedLessThan, p, self.strip.len as i64);
        b.ins().brif(more, body, &[], after, &[]);
        b.switch_to_block(after);
        b.def_var(walk.idx, idx0);
        Ok(())
    }

    /// Scalar code at the strip's first point storing each of `sinks`' values (values that are the same at
    /// every point) to its address; everything computed afresh (no strip arrays read).
    fn emit_once(&mut self, b: &mut FunctionBuilder, sinks: &[(usize, Value)], walk: &Walk) -> Result<()> {
        let k = self.k;
        let live = live_from(k, sinks.iter().map(|&(t, _)| t), |_| false);
        for (s, &a) in walk.start.iter().enumerate() {
            b.def_var(self.icur[s], a);
        }
        let sinks: Vec<(usize, Variable)> = sinks
            .iter()
            .map(|&(t, a)| {
                let v = b.declare_var(types::I64);
                b.def_var(v, a);
                (t, v)
            })
            .collect();
        self.phase = Some(Phase { live, loads: Vec::new(), sinks, outputs: false });
        let r = self.emit_body(b, 1, 1, &walk.vstr, walk.which);
        self.phase = None;
        r
    }

    /// One outer point (`vector`: `lanes * unroll` consecutive points of the innermost outer axis).
    fn emit_point(&mut self, b: &mut FunctionBuilder, vector: bool, inner_empty: bool) -> Result<()> {
        let k = self.k;
        let (lanes, unroll) = (self.lanes, self.unroll);
        for (o, out) in k.outputs.iter().enumerate() {
            let vdt = k.body[out.value].dtype;
            let op = match out.kind {
                OutputKind::Store => continue,
                OutputKind::Reduce(op) => op,
                OutputKind::ArgReduce { is_max } => if is_max { ReduceOp::Max } else { ReduceOp::Min },
            };
            let init = ops::reduce_identity(b, vdt, op)?;
            let mut acc = Acc { s: None, v: Vec::new() };
            let want_vec = vector || self.mode == Mode::InnerRed;
            if want_vec {
                let vi = simd::splat(b, vdt, lanes, init);
                for _ in 0..unroll {
                    let v = b.declare_var(simd::vtype(vdt, lanes));
                    b.def_var(v, vi);
                    acc.v.push(v);
                }
            }
            if !vector {
                let v = b.declare_var(cl_type(vdt));
                b.def_var(v, init);
                let iv = if matches!(out.kind, OutputKind::ArgReduce { .. }) {
                    let iv = b.declare_var(types::I64);
                    let z = iconst(b, types::I64, 0);
                    b.def_var(iv, z);
                    Some(iv)
                } else {
                    None
                };
                acc.s = Some((v, iv));
            }
            self.acc[o] = acc;
        }
        for s in 0..self.ns() {
            let a = b.use_var(self.cur[s]);
            b.def_var(self.icur[s], a);
        }
        if !inner_empty {
            self.emit_nest(b, 0, vector)?;
        }
        // Reduced outputs at the point's own address.
        for (o, out) in k.outputs.iter().enumerate() {
            let vdt = k.body[out.value].dtype;
            let s = k.inputs.len() + o;
            let op = match out.kind {
                OutputKind::Store => continue,
                OutputKind::Reduce(op) => op,
                OutputKind::ArgReduce { .. } => ReduceOp::Max,
            };
            let addr = b.use_var(self.cur[s]);
            if vector {
                for u in 0..unroll {
                    let v = b.use_var(self.acc[o].v[u as usize]);
                    let off = (u * lanes) as i64 * self.esize[s];
                    self.store_vec(b, vdt, v, addr, off);
                }
                continue;
            }
            let (sv, iv) = self.acc[o].s.ok_or_else(|| no_acc(o))?;
            let val = match iv {
                Some(iv) => {
                    let i = b.use_var(iv);
                    ops::convert(b, DType::I64, self.out_dtypes[o], i)
                }
                None if self.mode == Mode::InnerRed && self.order.is_none() => {
                    // Vector accumulators in order, then lanes in order, then the scalar tail.
                    let mut v = b.use_var(self.acc[o].v[0]);
                    for u in 1..unroll {
                        let w = b.use_var(self.acc[o].v[u as usize]);
                        v = ops::reduce_combine(b, vdt, op, v, w)?;
                    }
                    let mut r = simd::lane_scalar(b, vdt, v, 0);
                    for l in 1..lanes {
                        let x = simd::lane_scalar(b, vdt, v, l);
                        r = ops::reduce_combine(b, vdt, op, r, x)?;
                    }
                    let t = b.use_var(sv);
                    ops::reduce_combine(b, vdt, op, r, t)?
                }
                None => b.use_var(sv),
            };
            b.ins().store(super::clif::trusted(), val, addr, 0);
        }
        Ok(())
    }

    fn emit_nest(&mut self, b: &mut FunctionBuilder, level: usize, vector: bool) -> Result<()> {
        if level == 0 && vector && self.order == Some(SumOrder::Xla) && self.rbounds.is_none() && self.red.len() == 1 {
            return self.emit_xla_rows(b);
        }
        if level == 0 && !vector && self.order == Some(SumOrder::XlaGrid) && self.rbounds.is_none() {
            return self.emit_xla_grid(b);
        }
        if level == self.red.len() {
            let (lanes, unroll, vstr) = if vector {
                (self.lanes, self.unroll, self.outer.last().map(|a| a.strides.clone()).unwrap_or_default())
            } else {
                (1, 1, Vec::new())
            };
            return self.emit_body(b, lanes, unroll, &vstr, vector.then_some(false));
        }
        let axis = self.red[level].clone();
        let n = axis.n as i64;
        let iv = self.ridx[level];
        let innermost = level + 1 == self.red.len();
        let icur = self.icur.clone();
        if level == 0 && innermost && !vector && self.rbounds.is_none() {
            match self.order {
                Some(SumOrder::Ynn) => return self.emit_ynn(b),
                Some(SumOrder::Xla) if n > 32 => return self.emit_xla_windows(b),
                _ => {}
            }
        }
        if level == 0 {
            if let Some((lo, hi)) = self.rbounds {
                return self.emit_bounded_loop(b, &axis, iv, lo, hi, innermost && self.mode == Mode::InnerRed && !vector, vector);
            }
        }
        if innermost && self.mode == Mode::InnerRed && !vector {
            let lu = (self.lanes * self.unroll) as i64;
            let nv = n / lu * lu;
            let z = iconst(b, types::I64, 0);
            b.def_var(iv, z);
            // Strips first (their vectors reach the accumulators in the same order as the loop below).
            let sl = self.strip.len as i64;
            let ns = if self.strip.has_routines() { n / sl * sl } else { 0 };
            if ns > 0 {
                let hdr = b.create_block();
                let after = b.create_block();
                b.ins().jump(hdr, &[]);
                b.switch_to_block(hdr);
                self.strip_here(b, &icur, &axis.strides, iv, Some(true))?;
                let i0 = b.use_var(iv);
                let i1 = b.ins().iadd_imm_s(i0, sl);
                b.def_var(iv, i1);
                let more = b.ins().icmp_imm_s(IntCC::SignedLessThan, i1, ns);
                b.ins().brif(more, hdr, &[], after, &[]);
                b.switch_to_block(after);
            }
            if nv > ns {
                let hdr = b.create_block();
                let after = b.create_block();
                b.ins().jump(hdr, &[]);
                b.switch_to_block(hdr);
                self.emit_body(b, self.lanes, self.unroll, &axis.strides, Some(true))?;
                let i0 = b.use_var(iv);
                let i1 = b.ins().iadd_imm_s(i0, lu);
                b.def_var(iv, i1);
                self.bump(b, &icur, &axis.strides, lu);
                let nn = iconst(b, types::I64, nv);
                let more = b.ins().icmp(IntCC::UnsignedLessThan, i1, nn);
                b.ins().brif(more, hdr, &[], after, &[]);
                b.switch_to_block(after);
            }
            if n > nv {
                let hdr = b.create_block();
                let after = b.create_block();
                b.ins().jump(hdr, &[]);
                b.switch_to_block(hdr);
                self.emit_body(b, 1, 1, &[], None)?;
                let i0 = b.use_var(iv);
                let i1 = b.ins().iadd_imm_s(i0, 1);
                b.def_var(iv, i1);
                self.bump(b, &icur, &axis.strides, 1);
                let nn = iconst(b, types::I64, n);
                let more = b.ins().icmp(IntCC::UnsignedLessThan, i1, nn);
                b.ins().brif(more, hdr, &[], after, &[]);
                b.switch_to_block(after);
            }
            self.bump(b, &icur, &axis.strides, -n);
            return Ok(());
        }
        let z = iconst(b, types::I64, 0);
        b.def_var(iv, z);
        let hdr = b.create_block();
        let after = b.create_block();
        b.ins().jump(hdr, &[]);
        b.switch_to_block(hdr);
        self.emit_nest(b, level + 1, vector)?;
        let i0 = b.use_var(iv);
        let i1 = b.ins().iadd_imm_s(i0, 1);
        b.def_var(iv, i1);
        self.bump(b, &icur, &axis.strides, 1);
        let nn = iconst(b, types::I64, n);
        let more = b.ins().icmp(IntCC::UnsignedLessThan, i1, nn);
        b.ins().brif(more, hdr, &[], after, &[]);
        b.switch_to_block(after);
        self.bump(b, &icur, &axis.strides, -n);
        Ok(())
    }

    /// The reduced outputs (all sums where a `SumOrder` holds).
    fn sum_outputs(&self) -> Vec<usize> {
        self.k.outputs.iter().enumerate().filter(|(_, o)| matches!(o.kind, OutputKind::Reduce(_))).map(|(i, _)| i).collect()
    }

    /// Points output `o`'s accumulator for the next `emit_body` of `vw` lanes (one vector, or scalar) at `var`.
    fn point_acc(&mut self, o: usize, vw: u32, var: Variable) {
        if vw > 1 {
            self.acc[o].v = vec![var];
        } else {
            self.acc[o].s = Some((var, None));
        }
    }

    /// Moves the (single) reduced loop's cursors and index on by `e` elements.
    fn advance(&self, b: &mut FunctionBuilder, e: i64) {
        let strides = self.red[0].strides.clone();
        self.bump(b, &self.icur.clone(), &strides, e);
        let i = b.use_var(self.ridx[0]);
        let i = b.ins().iadd_imm_s(i, e);
        b.def_var(self.ridx[0], i);
    }

    /// A row summed in YNNPACK's order (`SumOrder::Ynn`; `_prng.ynn_sum_last` composes the same from lax ops):
    /// pieces of at most `ynn_chunk` elements (`ynn_piece`), whose sums, when there are several, are summed in
    /// YNNPACK's order again (`ynn_slots`; measured against XLA:CPU up to 257 chunks), then added to 0. Each
    /// output's row sum goes to its scalar accumulator.
    fn emit_ynn(&mut self, b: &mut FunctionBuilder) -> Result<()> {
        let k = self.k;
        let outs = self.sum_outputs();
        let dt = k.body[k.outputs[outs[0]].value].dtype;
        let len = self.red[0].n;
        let chunk = ynn_chunk(dt);
        let m = len.div_ceil(chunk);
        let saved = self.acc.clone();
        let trusted = super::clif::trusted();
        let z = iconst(b, types::I64, 0);
        b.def_var(self.ridx[0], z);
        let results: Vec<Value> = if m <= 1 {
            self.ynn_piece(b, &outs, dt, len)?
        } else {
            let es = dt.size() as i64;
            let slots: Vec<Value> = outs
                .iter()
                .map(|_| {
                    let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, (m as i64 * es) as u32, 3));
                    b.ins().stack_addr(types::I64, slot, 0)
                })
                .collect();
            // The full chunks in one loop, then the last one.
            let c = b.declare_var(types::I64);
            b.def_var(c, z);
            let (hdr, body, after) = (b.create_block(), b.create_block(), b.create_block());
            b.ins().jump(hdr, &[]);
            b.switch_to_block(hdr);
            let ci = b.use_var(c);
            let more = b.ins().icmp_imm_s(IntCC::SignedLessThan, ci, (m - 1) as i64);
            b.ins().brif(more, body, &[], after, &[]);
            b.switch_to_block(body);
            let r = self.ynn_piece(b, &outs, dt, chunk)?;
            let ci = b.use_var(c);
            let off = b.ins().imul_imm_s(ci, es);
            for (j, &v) in r.iter().enumerate() {
                let a = b.ins().iadd(slots[j], off);
                b.ins().store(trusted, v, a, 0);
            }
            let ci = b.ins().iadd_imm_s(ci, 1);
            b.def_var(c, ci);
            b.ins().jump(hdr, &[]);
            b.switch_to_block(after);
            let r = self.ynn_piece(b, &outs, dt, len - (m - 1) * chunk)?;
            for (j, &v) in r.iter().enumerate() {
                b.ins().store(trusted, v, slots[j], ((m - 1) as i64 * es) as i32);
            }
            ynn_slots(b, &slots, m, dt)
        };
        self.acc = saved;
        for (j, &o) in outs.iter().enumerate() {
            // (YNNPACK's output starts at 0: a sum of -0s is +0)
            let zero = super::clif::fconst(b, dt, 0.0);
            let r = b.ins().fadd(zero, results[j]);
            let (sv, _) = self.acc[o].s.ok_or_else(|| no_acc(o))?;
            b.def_var(sv, r);
        }
        let strides = self.red[0].strides.clone();
        self.bump(b, &self.icur.clone(), &strides, -(len as i64));
        Ok(())
    }

    /// One piece of `len` elements in YNNPACK's order, from the current cursors (left after it); per output,
    /// the piece's sum. Lanes: 64 bytes (`n` = 16 float32 / 8 float64), held as `n / vw` values of `vw` lanes
    /// (the kernel's vectors; `vw` = 1 in scalar mode). Blocks of 4 lane-vectors are summed lanewise into
    /// `local` ((c0 + c1) + c2) + c3, which `acc0` accumulates; `acc0` is flushed into `acc1` after each group of
    /// 4 blocks (after each block past the last full group, when YNNPACK's clock is a multiple of 16) and
    /// `acc1` into `acc2` by Kahan's compensated add when the clock is a multiple of 256 and at the end; a
    /// last partial block counts as zero-padded. The lanes of `acc2` are folded in halves.
    fn ynn_piece(&mut self, b: &mut FunctionBuilder, outs: &[usize], dt: DType, len: u64) -> Result<Vec<Value>> {
        let n = (64 / dt.size()) as u64;
        let vw = if self.mode == Mode::InnerRed { self.lanes } else { 1 };
        let nv = (n / vw as u64) as usize;
        let vty = if vw > 1 { simd::vtype(dt, vw) } else { cl_type(dt) };
        let groups = len / (16 * n);
        let blocks = (len % (16 * n)) / (4 * n);
        let tail = len % (4 * n);
        let zs = super::clif::fconst(b, dt, 0.0);
        let zero = if vw > 1 { simd::splat(b, dt, vw, zs) } else { zs };
        let decl = |b: &mut FunctionBuilder| -> Vec<Vec<Variable>> {
            outs.iter()
                .map(|_| {
                    (0..nv)
                        .map(|_| var_with(b, vty, zero))
                        .collect()
                })
                .collect()
        };
        let acc0 = decl(b);
        let acc1 = decl(b);
        let acc2 = decl(b);
        let err = decl(b);
        let st = YnnAccs { acc0, acc1, acc2, err, zero, vw, nv, dt };
        if groups > 0 {
            // YNNPACK's clock advances 4n per group: the compensated add every 256 / 4n groups.
            let period = (256 / (4 * n)) as i64;
            let g = b.declare_var(types::I64);
            let cnt = b.declare_var(types::I64);
            let z = iconst(b, types::I64, 0);
            b.def_var(g, z);
            b.def_var(cnt, z);
            let (hdr, body, kahan, next, after) =
                (b.create_block(), b.create_block(), b.create_block(), b.create_block(), b.create_block());
            b.ins().jump(hdr, &[]);
            b.switch_to_block(hdr);
            let gv = b.use_var(g);
            let more = b.ins().icmp_imm_s(IntCC::SignedLessThan, gv, groups as i64);
            b.ins().brif(more, body, &[], after, &[]);
            b.switch_to_block(body);
            for _ in 0..4 {
                self.ynn_block(b, outs, &st)?;
            }
            st.flush(b);
            let c = b.use_var(cnt);
            let c = b.ins().iadd_imm_s(c, 1);
            b.def_var(cnt, c);
            let due = b.ins().icmp_imm_s(IntCC::Equal, c, period);
            b.ins().brif(due, kahan, &[], next, &[]);
            b.switch_to_block(kahan);
            st.kahan(b);
            b.def_var(cnt, z);
            b.ins().jump(next, &[]);
            b.switch_to_block(next);
            let gv = b.use_var(g);
            let gv = b.ins().iadd_imm_s(gv, 1);
            b.def_var(g, gv);
            b.ins().jump(hdr, &[]);
            b.switch_to_block(after);
        }
        // Past the last full group the clock advances n per block.
        let mut clock = 4 * n * groups;
        for _ in 0..blocks {
            self.ynn_block(b, outs, &st)?;
            clock += n;
            if clock % 16 == 0 {
                st.flush(b);
                if clock % 256 == 0 {
                    st.kahan(b);
                }
            }
        }
        if tail > 0 {
            if groups == 0 && blocks == 0 && (tail < 32 || vw == 1) {
                // A short row: element by element into scalar lanes (lane i mod n). The accumulators would only
                // add zeros: the piece is the halving fold of these lanes (an add of a missing, zero lane
                // changes nothing but a zero's sign, which the final 0 + sum sets).
                let mut lanes: Vec<Vec<Option<Variable>>> = vec![vec![None; n as usize]; outs.len()];
                for i in 0..tail {
                    let l = (i % n) as usize;
                    for (j, &o) in outs.iter().enumerate() {
                        let v = scalar_lane(b, &mut lanes[j][l], dt, zs);
                        self.acc[o].s = Some((v, None));
                    }
                    self.emit_body(b, 1, 1, &[], None)?;
                    self.advance(b, 1);
                }
                return Ok(lanes
                    .iter()
                    .map(|ls| {
                        let mut xs: Vec<Option<Value>> = ls.iter().map(|v| v.map(|v| b.use_var(v))).collect();
                        let mut w = n as usize;
                        while w > 1 {
                            w /= 2;
                            for l in 0..w {
                                xs[l] = match (xs[l], xs[l + w]) {
                                    (Some(x), Some(y)) => Some(b.ins().fadd(x, y)),
                                    (x, None) => x,
                                    (None, y) => y,
                                };
                            }
                        }
                        xs[0].unwrap_or(zs)
                    })
                    .collect());
            }
            // The zero-padded last block: its whole vectors in one body (vector u into local[u mod nv]), the
            // rest element by element into scalar lanes added to their vector after it.
            let locals = decl(b);
            let whole = if vw > 1 { tail / vw as u64 } else { 0 };
            if whole > 0 {
                let strides = self.red[0].strides.clone();
                for (j, &o) in outs.iter().enumerate() {
                    self.acc[o].v = (0..whole as usize).map(|u| locals[j][u % nv]).collect();
                }
                self.emit_body(b, vw, whole as u32, &strides, Some(true))?;
                self.advance(b, (whole * vw as u64) as i64);
            }
            let mut lanes: Vec<Vec<Option<Variable>>> = vec![vec![None; n as usize]; outs.len()];
            for i in whole * vw as u64..tail {
                let l = (i % n) as usize;
                for (j, &o) in outs.iter().enumerate() {
                    let v = if vw == 1 { locals[j][l] } else { scalar_lane(b, &mut lanes[j][l], dt, zs) };
                    self.acc[o].s = Some((v, None));
                }
                self.emit_body(b, 1, 1, &[], None)?;
                self.advance(b, 1);
            }
            for (j, ls) in lanes.iter().enumerate() {
                for u in 0..nv {
                    let part = &ls[u * vw as usize..(u + 1) * vw as usize];
                    if vw == 1 || part.iter().all(|v| v.is_none()) {
                        continue;
                    }
                    let xs: Vec<Value> = part.iter().map(|v| v.map_or(zs, |v| b.use_var(v))).collect();
                    let x = simd::from_lanes(b, dt, vw, &xs);
                    let l = b.use_var(locals[j][u]);
                    let l = b.ins().fadd(l, x);
                    b.def_var(locals[j][u], l);
                }
            }
            for j in 0..outs.len() {
                for u in 0..nv {
                    let (a, l) = (b.use_var(st.acc0[j][u]), b.use_var(locals[j][u]));
                    let a = b.ins().fadd(a, l);
                    b.def_var(st.acc0[j][u], a);
                }
            }
        }
        // The last step: flush, then the compensated add (its new error unused).
        st.flush(b);
        let mut out = Vec::new();
        for j in 0..outs.len() {
            let mut vs = Vec::new();
            for u in 0..nv {
                let (a1, e, a2) = (b.use_var(st.acc1[j][u]), b.use_var(st.err[j][u]), b.use_var(st.acc2[j][u]));
                let y = b.ins().fsub(a1, e);
                vs.push(b.ins().fadd(a2, y));
            }
            let mut w = n as usize;
            let vwu = vw as usize;
            while w > vwu {
                w /= 2;
                let h = w / vwu;
                for u in 0..h {
                    vs[u] = b.ins().fadd(vs[u], vs[u + h]);
                }
                vs.truncate(h);
            }
            let mut xs: Vec<Value> = if vw > 1 { (0..vw).map(|l| simd::lane_scalar(b, dt, vs[0], l)).collect() } else { vec![vs[0]] };
            while w > 1 {
                w /= 2;
                for l in 0..w {
                    xs[l] = b.ins().fadd(xs[l], xs[l + w]);
                }
            }
            out.push(xs[0]);
        }
        Ok(out)
    }

    /// One block of 4 lane-vectors (4n elements) into `acc0`.
    fn ynn_block(&mut self, b: &mut FunctionBuilder, outs: &[usize], st: &YnnAccs) -> Result<()> {
        let ty = b.func.dfg.value_type(st.zero);
        let locals: Vec<Vec<Variable>> =
            outs.iter().map(|_| (0..st.nv).map(|_| var_with(b, ty, st.zero)).collect()).collect();
        if st.vw > 1 {
            // One body of 4 nv vectors: vector u adds into local[u mod nv], in u order, so each local lane
            // gets ((c0 + c1) + c2) + c3 (one cursor move per block).
            let strides = self.red[0].strides.clone();
            for (j, &o) in outs.iter().enumerate() {
                self.acc[o].v = (0..4).flat_map(|_| locals[j].iter().copied()).collect();
            }
            self.emit_body(b, st.vw, 4 * st.nv as u32, &strides, Some(true))?;
            self.advance(b, 4 * (st.vw as usize * st.nv) as i64);
        } else {
            for _ in 0..4 {
                for u in 0..st.nv {
                    for (j, &o) in outs.iter().enumerate() {
                        self.point_acc(o, 1, locals[j][u]);
                    }
                    self.emit_body(b, 1, 1, &[], None)?;
                    self.advance(b, 1);
                }
            }
        }
        for (j, ls) in locals.iter().enumerate() {
            for (u, &l) in ls.iter().enumerate() {
                let (a, x) = (b.use_var(st.acc0[j][u]), b.use_var(l));
                let s = b.ins().fadd(a, x);
                b.def_var(st.acc0[j][u], s);
            }
        }
        Ok(())
    }

    /// A row longer than 32 summed in XLA's order (`SumOrder::Xla`; `_prng.xla_sum_last`): windows of 32 of the
    /// row zero-padded to a multiple of 32 (the lower half of the padding first), the window sums likewise
    /// until at most 32 are left, those added left to right. The padding adds zeros only (nothing changes but
    /// a zero's sign, and every sum starts at +0 as XLA's loops do), so only the window boundaries move: each
    /// level's position starts at its padding.
    fn emit_xla_windows(&mut self, b: &mut FunctionBuilder) -> Result<()> {
        let k = self.k;
        let outs = self.sum_outputs();
        let dt = k.body[k.outputs[outs[0]].value].dtype;
        // (a product pads with ones and starts at 1: `sum_order` admits one op per kernel)
        let prod = matches!(k.outputs[outs[0]].kind, OutputKind::Reduce(ReduceOp::Prod));
        let len = self.red[0].n;
        let mut pads = Vec::new();
        let mut cnt = len;
        while cnt > 32 {
            let w = cnt.div_ceil(32);
            pads.push((32 * w - cnt) / 2);
            cnt = w;
        }
        let zs = super::clif::fconst(b, dt, if prod { 1.0 } else { 0.0 });
        let accs: Vec<Vec<Variable>> =
            (0..=pads.len()).map(|_| outs.iter().map(|_| var_with(b, cl_type(dt), zs)).collect()).collect();
        let pos: Vec<Variable> = pads
            .iter()
            .map(|&p| {
                let c = iconst(b, types::I64, p as i64);
                var_with(b, types::I64, c)
            })
            .collect();
        let saved = self.acc.clone();
        for (j, &o) in outs.iter().enumerate() {
            self.acc[o].s = Some((accs[0][j], None));
        }
        let z = iconst(b, types::I64, 0);
        b.def_var(self.ridx[0], z);
        // The first (padded) window element by element, then the full windows a vector of windows at a time
        // (`InnerRed`: `xla_vector_groups`) or, in scalar code, XLA_GROUP at a time with their chains
        // interleaved (one window's chain of 32 dependent adds or multiplies is latency-bound; each window
        // still combines left to right from the identity), then the rest element by element.
        let first = (32 - pads[0]) % 32;
        self.xla_elements(b, &accs, &pos, zs, prod, first)?;
        let mut rest_at = first;
        let vl = self.lanes as u64;
        let vector = self.mode == Mode::InnerRed && vl > 1 && simd::lanes_for(dt.size()) == Some(self.lanes);
        if vector {
            // 4 vectors of windows at a time (4 independent chains), then one vector at a time
            for g in [4 * vl, vl] {
                let groups = (len - rest_at) / 32 / g;
                if groups > 0 {
                    self.xla_vector_groups(b, &accs, &pos, zs, prod, dt, g, groups)?;
                    rest_at += groups * g * 32;
                }
            }
        }
        let groups = if vector { 0 } else { (len - first) / 32 / XLA_GROUP };
        if groups > 0 {
            rest_at = first + groups * XLA_GROUP * 32;
            let gl = counted_begin(b, groups as i64);
            let wins: Vec<Vec<Variable>> =
                (0..XLA_GROUP).map(|_| outs.iter().map(|_| var_with(b, cl_type(dt), zs)).collect()).collect();
            let tl = repeat_begin(b);
            for (w, win) in wins.iter().enumerate() {
                for (j, &o) in outs.iter().enumerate() {
                    self.acc[o].s = Some((win[j], None));
                }
                self.emit_body(b, 1, 1, &[], None)?;
                self.advance(b, if w + 1 < XLA_GROUP as usize { 32 } else { 1 - 32 * (XLA_GROUP as i64 - 1) });
            }
            repeat_end(b, tl, 1, 32);
            self.advance(b, 32 * (XLA_GROUP as i64 - 1));
            // each window's result goes up as a full window of level 0 would
            let c31 = iconst(b, types::I64, 31);
            for win in &wins {
                for (j, &v) in win.iter().enumerate() {
                    let x = b.use_var(v);
                    b.def_var(accs[0][j], x);
                }
                b.def_var(pos[0], c31);
                Self::xla_close(b, &accs, &pos, 0, zs, prod);
            }
            counted_end(b, gl);
            for (j, &o) in outs.iter().enumerate() {
                self.acc[o].s = Some((accs[0][j], None));
            }
        }
        debug_assert!(rest_at <= len);
        self.xla_elements(b, &accs, &pos, zs, prod, len)?;
        for l in 0..pads.len() {
            for j in 0..outs.len() {
                let (hi, lo) = (b.use_var(accs[l + 1][j]), b.use_var(accs[l][j]));
                let s = if prod { b.ins().fmul(hi, lo) } else { b.ins().fadd(hi, lo) };
                b.def_var(accs[l + 1][j], s);
            }
        }
        self.acc = saved;
        for (j, &o) in outs.iter().enumerate() {
            let (sv, _) = self.acc[o].s.ok_or_else(|| no_acc(o))?;
            let r = b.use_var(accs[pads.len()][j]);
            b.def_var(sv, r);
        }
        let strides = self.red[0].strides.clone();
        self.bump(b, &self.icur.clone(), &strides, -(len as i64));
        Ok(())
    }

    /// The reduced axes summed in XLA's windows over several axes (`SumOrder::XlaGrid`): for each window of the
    /// grid in row-major order, its elements (the padding skipped: it adds +0 to a sum that started at +0) in
    /// row-major order into a window sum from +0; the window sums go left to right into one sum, or, in row
    /// lanes (`loop_plan::xla_grid`), row a's into lane a, the lanes folded in halves at the end.
    fn emit_xla_grid(&mut self, b: &mut FunctionBuilder) -> Result<()> {
        let k = self.k;
        let outs = self.sum_outputs();
        let dt = k.body[k.outputs[outs[0]].value].dtype;
        let dims = super::loop_plan::red_dims(k, self.out_dtypes)?;
        let ns: Vec<u64> = dims.iter().map(|a| a.n).collect();
        let (geo, rows) = super::loop_plan::xla_grid(&ns)
            .ok_or_else(|| Error::Codegen(format!("kernel {}: no XLA window grid for {ns:?}", k.name)))?;
        let split = super::loop_plan::xla_split_column(&ns);
        let zs = super::clif::fconst(b, dt, 0.0);
        let var = |b: &mut FunctionBuilder| var_with(b, cl_type(dt), zs);
        // one sum per lane (row of windows) and output
        let nl = rows.unwrap_or(1) as usize;
        let lanes: Vec<Vec<Variable>> = (0..nl).map(|_| outs.iter().map(|_| var(b)).collect()).collect();
        let win: Vec<Variable> = outs.iter().map(|_| var(b)).collect();
        // the grid axis whose index is the lane: the first with more than one window
        let lane_axis = geo.iter().position(|g| g.1 > 1).unwrap_or(0);
        let saved = self.acc.clone();
        for (j, &o) in outs.iter().enumerate() {
            self.acc[o].s = Some((win[j], None));
        }
        let icur = self.icur.clone();
        let counts: Vec<u64> = geo.iter().map(|g| g.1).collect();
        let nwin: u64 = counts.iter().product();
        for w in 0..nwin {
            // the window's grid index, row-major
            let mut gi = vec![0u64; geo.len()];
            let mut r = w;
            for d in (0..geo.len()).rev() {
                gi[d] = r % counts[d];
                r /= counts[d];
            }
            // its real elements along each axis: [lo, hi) of 0..n
            let span: Vec<(u64, u64)> = gi
                .iter()
                .zip(&geo)
                .zip(&ns)
                .map(|((&g, &(pad, _)), &n)| ((32 * g).saturating_sub(pad).min(n), (32 * g + 32).saturating_sub(pad).min(n)))
                .collect();
            if span.iter().any(|&(lo, hi)| lo >= hi) {
                continue;
            }
            for &v in &win {
                b.def_var(v, zs);
            }
            // (`xla_split_column`: a window whose column 31 is real adds it last, top to bottom; the last axis
            // has no low padding, so that column is the span's last exactly when the span has 32 columns)
            let last = span.len() - 1;
            let parts = if split && span[last].1 - span[last].0 == 32 {
                let mut body = span.clone();
                body[last].1 -= 1;
                let mut col = span.clone();
                col[last].0 = col[last].1 - 1;
                vec![body, col]
            } else {
                vec![span]
            };
            for part in &parts {
                for (a, &(lo, _)) in dims.iter().zip(part) {
                    self.bump(b, &icur, &a.strides, lo as i64);
                }
                self.grid_window(b, &dims, part, 0)?;
                for (a, &(lo, _)) in dims.iter().zip(part) {
                    self.bump(b, &icur, &a.strides, -(lo as i64));
                }
            }
            let lane = if rows.is_some() { gi[lane_axis] as usize } else { 0 };
            for (j, &v) in win.iter().enumerate() {
                let (x, s) = (b.use_var(v), b.use_var(lanes[lane][j]));
                let s = b.ins().fadd(s, x);
                b.def_var(lanes[lane][j], s);
            }
        }
        self.acc = saved;
        for (j, &o) in outs.iter().enumerate() {
            let mut vals: Vec<Value> = lanes.iter().map(|l| b.use_var(l[j])).collect();
            // (LLVM's reassociating vector reduce: the upper half onto the lower, until one lane is left)
            while vals.len() > 1 {
                let h = vals.len() / 2;
                vals = (0..h).map(|i| b.ins().fadd(vals[i], vals[i + h])).collect();
            }
            let (sv, _) = self.acc[o].s.ok_or_else(|| no_acc(o))?;
            b.def_var(sv, vals[0]);
        }
        Ok(())
    }

    /// One window of `emit_xla_grid` from the current cursors: a loop per axis from `level` over `span`'s
    /// lengths, the body adding into the window sums.
    fn grid_window(&mut self, b: &mut FunctionBuilder, dims: &[Axis], span: &[(u64, u64)], level: usize) -> Result<()> {
        if level == dims.len() {
            return self.emit_body(b, 1, 1, &[], None);
        }
        let n = (span[level].1 - span[level].0) as i64;
        let icur = self.icur.clone();
        let l = counted_begin(b, n);
        self.grid_window(b, dims, span, level + 1)?;
        self.bump(b, &icur, &dims[level].strides, 1);
        counted_end(b, l);
        self.bump(b, &icur, &dims[level].strides, -n);
        Ok(())
    }

    /// `groups` runs of `g` full windows of level 0 (a multiple of the lane count L) from the current index, in
    /// vectors whose lane i carries window i's chain: each step loads L elements of each window (the body in
    /// its usual contiguous lanes), transposes each L×L block in registers and combines the L columns in
    /// order, so every window still combines left to right from the identity (the scalar path's bits).
    #[allow(clippy::too_many_arguments)]
    fn xla_vector_groups(
        &mut self, b: &mut FunctionBuilder, accs: &[Vec<Variable>], pos: &[Variable], zs: Value, prod: bool, dt: DType, g: u64,
        groups: u64,
    ) -> Result<()> {
        let l = self.lanes;
        let nout = accs[0].len();
        let op = if prod { ReduceOp::Prod } else { ReduceOp::Sum };
        let strides = self.red[0].strides.clone();
        let ones = simd::splat(b, dt, l, zs);
        let gl = counted_begin(b, groups as i64);
        let blocks = (g / l as u64) as usize;
        let vaccs: Vec<Vec<Variable>> = (0..blocks)
            .map(|_| {
                (0..nout)
                    .map(|_| var_with(b, simd::vtype(dt, l), ones))
                    .collect()
            })
            .collect();
        let tl = repeat_begin(b);
        let mut rows = Vec::with_capacity(g as usize);
        for w in 0..g as i64 {
            self.capture = Some(Vec::new());
            let r = self.emit_body(b, l, 1, &strides, Some(true));
            let got = self.capture.take().unwrap_or_default();
            r?;
            if got.len() != nout {
                return Err(Error::Codegen(format!("XLA windows: {} reduced values for {nout} outputs", got.len())));
            }
            rows.push(got);
            self.advance(b, if w + 1 < g as i64 { 32 } else { l as i64 - 32 * (g as i64 - 1) });
        }
        for (blk, va) in vaccs.iter().enumerate() {
            for (j, &v) in va.iter().enumerate() {
                let block: Vec<Value> = (0..l as usize).map(|i| rows[blk * l as usize + i][j]).collect();
                let mut a = b.use_var(v);
                for c in simd::transpose(b, &block)? {
                    a = ops::reduce_combine(b, dt, op, a, c)?;
                }
                b.def_var(v, a);
            }
        }
        repeat_end(b, tl, l as i64, 32);
        self.advance(b, 32 * (g as i64 - 1));
        // each window's result goes up as a full window of level 0 would, in window order
        let c31 = iconst(b, types::I64, 31);
        for w in 0..g as usize {
            for j in 0..nout {
                let v = b.use_var(vaccs[w / l as usize][j]);
                let x = simd::lane_scalar(b, dt, v, (w % l as usize) as u32);
                b.def_var(accs[0][j], x);
            }
            b.def_var(pos[0], c31);
            Self::xla_close(b, accs, pos, 0, zs, prod);
        }
        counted_end(b, gl);
        Ok(())
    }

    /// `lanes` rows of at most 32 (`SumOrder::Xla`, `Mode::OuterVec` of contiguous rows), each combined left to
    /// right from the identity in its own lane of the outputs' vector accumulators: L elements of each row (the
    /// body in contiguous lanes along the row), transposed (`simd::transpose`), the columns combined in order;
    /// the row's last n mod L elements one at a time, each row's into its lane.
    fn emit_xla_rows(&mut self, b: &mut FunctionBuilder) -> Result<()> {
        let k = self.k;
        let l = self.lanes;
        let n = self.red[0].n as i64;
        let outs = self.sum_outputs();
        let ostr = self.outer.last().map(|a| a.strides.clone()).unwrap_or_default();
        let rstr = self.red[0].strides.clone();
        let icur = self.icur.clone();
        let z = iconst(b, types::I64, 0);
        b.def_var(self.ridx[0], z);
        let mut t = 0;
        while t < n {
            let step = if t + l as i64 <= n { l } else { 1 };
            let mut rows = Vec::with_capacity(l as usize);
            for r in 0..l as i64 {
                self.capture = Some(Vec::new());
                let res = if step > 1 { self.emit_body(b, l, 1, &rstr, Some(true)) } else { self.emit_body(b, 1, 1, &[], None) };
                let got = self.capture.take().unwrap_or_default();
                res?;
                if got.len() != outs.len() {
                    return Err(Error::Codegen(format!("XLA rows: {} reduced values for {} outputs", got.len(), outs.len())));
                }
                rows.push(got);
                self.bump(b, &icur, &ostr, if r + 1 < l as i64 { 1 } else { 1 - l as i64 });
            }
            for (j, &o) in outs.iter().enumerate() {
                let out = &k.outputs[o];
                let OutputKind::Reduce(op) = out.kind else { return Err(no_acc(o)) };
                let dt = k.body[out.value].dtype;
                let var = *self.acc[o].v.first().ok_or_else(|| no_acc(o))?;
                let xs: Vec<Value> = rows.iter().map(|r| r[j]).collect();
                let cols = if step > 1 { simd::transpose(b, &xs)? } else { vec![simd::from_lanes(b, dt, l, &xs)] };
                let mut a = b.use_var(var);
                for c in cols {
                    a = ops::reduce_combine(b, dt, op, a, c)?;
                }
                b.def_var(var, a);
            }
            self.advance(b, step as i64);
            t += step as i64;
        }
        self.advance(b, -n);
        Ok(())
    }

    /// Level 0 of `emit_xla_windows` element by element from the current index up to `end`: each element into
    /// `accs[0]` (the outputs' accumulators point there), its window closed when full.
    #[allow(clippy::too_many_arguments)]
    fn xla_elements(&mut self, b: &mut FunctionBuilder, accs: &[Vec<Variable>], pos: &[Variable], zs: Value, prod: bool, end: u64) -> Result<()> {
        let (hdr, body, after) = (b.create_block(), b.create_block(), b.create_block());
        b.ins().jump(hdr, &[]);
        b.switch_to_block(hdr);
        let i = b.use_var(self.ridx[0]);
        let more = b.ins().icmp_imm_s(IntCC::SignedLessThan, i, end as i64);
        b.ins().brif(more, body, &[], after, &[]);
        b.switch_to_block(body);
        self.emit_body(b, 1, 1, &[], None)?;
        self.advance(b, 1);
        Self::xla_close(b, accs, pos, 0, zs, prod);
        b.ins().jump(hdr, &[]);
        b.switch_to_block(after);
        Ok(())
    }

    /// After one item of level `l`: when its window is full (32 positions), its sum goes to level `l + 1`, which
    /// may close in turn.
    fn xla_close(b: &mut FunctionBuilder, accs: &[Vec<Variable>], pos: &[Variable], l: usize, zs: Value, prod: bool) {
        let p = b.use_var(pos[l]);
        let p = b.ins().iadd_imm_s(p, 1);
        b.def_var(pos[l], p);
        let full = b.ins().icmp_imm_s(IntCC::Equal, p, 32);
        let (close, join) = (b.create_block(), b.create_block());
        b.ins().brif(full, close, &[], join, &[]);
        b.switch_to_block(close);
        for (&lo, &hi) in accs[l].iter().zip(&accs[l + 1]) {
            let (x, s) = (b.use_var(lo), b.use_var(hi));
            let s = if prod { b.ins().fmul(s, x) } else { b.ins().fadd(s, x) };
            b.def_var(hi, s);
            b.def_var(lo, zs);
        }
        let z = iconst(b, types::I64, 0);
        b.def_var(pos[l], z);
        if l + 1 < pos.len() {
            Self::xla_close(b, accs, pos, l + 1, zs, prod);
        }
        b.ins().jump(join, &[]);
        b.switch_to_block(join);
    }

    /// The outermost reduced loop over runtime bounds `[lo, hi)` (`vec_inner`: it is also the innermost loop
    /// and runs vectors, then a scalar tail).
    #[allow(clippy::too_many_arguments)]
    fn emit_bounded_loop(
        &mut self, b: &mut FunctionBuilder, axis: &Axis, iv: Variable, lo: Value, hi: Value, vec_inner: bool, vector: bool,
    ) -> Result<()> {
        let icur = self.icur.clone();
        let saved: Vec<Value> = icur.iter().map(|&v| b.use_var(v)).collect();
        b.def_var(iv, lo);
        for (s, &st) in axis.strides.iter().enumerate() {
            if st != 0 {
                let t = b.ins().imul_imm_s(lo, st);
                let a = b.ins().iadd(saved[s], t);
                b.def_var(icur[s], a);
            }
        }
        let done = b.create_block();
        if vec_inner && self.strip.has_routines() {
            let hdr = b.create_block();
            let body = b.create_block();
            let after = b.create_block();
            b.ins().jump(hdr, &[]);
            b.switch_to_block(hdr);
            let i = b.use_var(iv);
            let ni = b.ins().iadd_imm_s(i, self.strip.len as i64);
            let ok = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, ni, hi);
            b.ins().brif(ok, body, &[], after, &[]);
            b.switch_to_block(body);
            self.strip_here(b, &icur, &axis.strides, iv, Some(true))?;
            let i = b.use_var(iv);
            let ni = b.ins().iadd_imm_s(i, self.strip.len as i64);
            b.def_var(iv, ni);
            b.ins().jump(hdr, &[]);
            b.switch_to_block(after);
        }
        // (step, lanes, unroll) of each loop: vectors first when vectorized, then one at a time.
        let mut loops = Vec::new();
        if vec_inner {
            loops.push(((self.lanes * self.unroll) as i64, self.lanes, self.unroll));
        }
        loops.push((1, 1, 1));
        for (step, lanes, unroll) in loops {
            let hdr = b.create_block();
            let body = b.create_block();
            let after = b.create_block();
            b.ins().jump(hdr, &[]);
            b.switch_to_block(hdr);
            let i = b.use_var(iv);
            let ni = b.ins().iadd_imm_s(i, step);
            let ok = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, ni, hi);
            b.ins().brif(ok, body, &[], after, &[]);
            b.switch_to_block(body);
            if vec_inner {
                if lanes > 1 {
                    self.emit_body(b, lanes, unroll, &axis.strides, Some(true))?;
                } else {
                    self.emit_body(b, 1, 1, &[], None)?;
                }
            } else {
                self.emit_nest(b, 1, vector)?;
            }
            let i = b.use_var(iv);
            let ni = b.ins().iadd_imm_s(i, step);
            b.def_var(iv, ni);
            self.bump(b, &icur, &axis.strides, step);
            b.ins().jump(hdr, &[]);
            b.switch_to_block(after);
        }
        b.ins().jump(done, &[]);
        b.switch_to_block(done);
        for (s, &v) in icur.iter().enumerate() {
            b.def_var(v, saved[s]);
        }
        Ok(())
    }

    /// The index along domain axis `axis` (for `Iota`), plus `extra`.
    fn index(&self, b: &mut FunctionBuilder, axis: usize, extra: i64) -> Value {
        let var = self
            .outer
            .iter()
            .position(|a| a.iota == Some(axis))
            .map(|p| self.oidx[p])
            .or_else(|| self.red.iter().position(|a| a.iota == Some(axis)).map(|p| self.ridx[p]));
        match var {
            Some(v) => {
                let i = b.use_var(v);
                if extra != 0 {
                    b.ins().iadd_imm_s(i, extra)
                } else {
                    i
                }
            }
            None => iconst(b, types::I64, extra),
        }
    }

    /// Whether domain `axis` is the vectorized axis: `Some(true)` the innermost reduced one, `Some(false)` the
    /// innermost outer one.
    fn is_vec_axis(&self, axis: usize, which: Option<bool>) -> bool {
        match which {
            Some(true) => self.red.last().is_some_and(|a| a.iota == Some(axis)),
            Some(false) => self.outer.last().is_some_and(|a| a.iota == Some(axis)),
            None => false,
        }
    }

    fn store_vec(&self, b: &mut FunctionBuilder, dt: DType, v: Value, addr: Value, off: i64) {
        let flags = cranelift_codegen::ir::MemFlagsData::new().with_notrap();
        if dt == DType::Bool {
            for l in 0..self.lanes {
                let x = simd::lane_scalar(b, dt, v, l);
                b.ins().store(flags, x, addr, (off + l as i64) as i32);
            }
        } else if simd::held32(dt) && b.func.dfg.value_type(v) == types::I32X4 {
            // Values held extended in i32 lanes (float16/bfloat16 bits, 8/16-bit integers): the saturating
            // narrows (signed for sign-extended lanes, unsigned for zero-extended) are exact; the low 8 (4)
            // bytes are the 4 values.
            let narrow = |b: &mut FunctionBuilder, v: Value| {
                if simd::sign_held(dt) {
                    b.ins().snarrow(v, v)
                } else {
                    b.ins().unarrow(v, v)
                }
            };
            let n = narrow(b, v);
            if dt.size() == 1 {
                let n = narrow(b, n);
                let q = b.ins().bitcast(types::I32X4, simd::vflags(), n);
                let x = b.ins().extractlane(q, 0);
                b.ins().store(flags, x, addr, off as i32);
            } else {
                let q = b.ins().bitcast(types::I64X2, simd::vflags(), n);
                let x = b.ins().extractlane(q, 0);
                b.ins().store(flags, x, addr, off as i32);
            }
        } else {
            b.ins().store(flags, v, addr, off as i32);
        }
    }

    /// The body at the current addresses: `unroll` copies of `lanes` lanes (1 = scalar). `vstr` is each
    /// stream's byte stride along the vector axis (`which`: see `is_vec_axis`).
    fn emit_body(&mut self, b: &mut FunctionBuilder, lanes: u32, unroll: u32, vstr: &[i64], which: Option<bool>) -> Result<()> {
        let k = self.k;
        let vflags = cranelift_codegen::ir::MemFlagsData::new().with_notrap();
        let phase = self.phase.take();
        for u in 0..unroll {
            let mut vals: Vec<Option<Value>> = vec![None; k.body.len()];
            for (i, ins) in k.body.iter().enumerate() {
                if !phase.as_ref().map_or(self.live[i], |p| p.live[i]) {
                    continue;
                }
                if let Some(&(_, var)) = phase.as_ref().and_then(|p| p.loads.iter().find(|(j, _)| *j == i)) {
                    let a = b.use_var(var);
                    let off = (u * lanes * self.strip.elem_bytes()) as i32;
                    vals[i] = Some(b.ins().load(simd::vtype(ins.dtype, lanes), vflags, a, off));
                    continue;
                }
                match self.facts.fact[i] {
                    // Same value as an operand (a decided select, a clamp that cannot move its operand);
                    // float64 values of 4-lane kernels are recomputed where converted, so they stay as written.
                    Fact::Alias(j) if !(lanes == 4 && ins.dtype == DType::F64) && vals[j].is_some() => {
                        vals[i] = vals[j];
                        continue;
                    }
                    Fact::FloorDiv { x, c } | Fact::FloorRem { x, c }
                        if lanes == 4 && ins.dtype == DType::I32 && vals[x].is_some() && c <= i64::from(i32::MAX) =>
                    {
                        let rem = matches!(self.facts.fact[i], Fact::FloorRem { .. });
                        let xv = vals[x].ok_or_else(|| Error::Codegen(format!("floor operand %{x} not computed")))?;
                        vals[i] = Some(super::vdiv::floor_div_rem_pos_const(b, xv, c as i32, rem));
                        continue;
                    }
                    _ => {}
                }
                let v = match &ins.op {
                    KOp::Load { input } => {
                        let s = *input;
                        let a = b.use_var(self.icur[s]);
                        let st = if lanes > 1 { vstr[s] } else { 0 };
                        let off = (u * lanes) as i64 * st;
                        let scalar_load = |b: &mut FunctionBuilder, off: i64| {
                            let x = b.ins().load(cl_type(ins.dtype), super::clif::trusted(), a, off as i32);
                            if ins.dtype == DType::Bool {
                                let z = iconst(b, types::I8, 0);
                                b.ins().icmp(IntCC::NotEqual, x, z)
                            } else {
                                x
                            }
                        };
                        if lanes == 1 {
                            scalar_load(b, 0)
                        } else if st == 0 {
                            let x = scalar_load(b, 0);
                            simd::splat(b, ins.dtype, lanes, x)
                        } else if ins.dtype == DType::Bool {
                            let xs: Vec<Value> = (0..lanes).map(|l| scalar_load(b, off + l as i64)).collect();
                            simd::from_lanes(b, ins.dtype, lanes, &xs)
                        } else if simd::held32(ins.dtype) && ins.dtype.size() == 2 {
                            // 4 float16s/bfloat16s/16-bit integers widened into i32x4 lanes.
                            if simd::sign_held(ins.dtype) {
                                b.ins().sload16x4(vflags, a, off as i32)
                            } else {
                                b.ins().uload16x4(vflags, a, off as i32)
                            }
                        } else if simd::held32(ins.dtype) {
                            // 4 bytes (exactly the 4 points: never past the buffer's end), widened twice.
                            let w = b.ins().load(types::I32, vflags, a, off as i32);
                            let v = b.ins().splat(types::I32X4, w);
                            let v = b.ins().bitcast(types::I8X16, simd::vflags(), v);
                            if simd::sign_held(ins.dtype) {
                                let v = b.ins().swiden_low(v);
                                b.ins().swiden_low(v)
                            } else {
                                let v = b.ins().uwiden_low(v);
                                b.ins().uwiden_low(v)
                            }
                        } else {
                            b.ins().load(simd::vtype(ins.dtype, lanes), vflags, a, off as i32)
                        }
                    }
                    KOp::Gather { input, index, stride, hi, fill } => {
                        // A scalar load per point (per lane: a vector's lanes read unrelated places), at the
                        // address a `Load` of the input would read, moved by the clamped index.
                        let s = *input;
                        let a = b.use_var(self.icur[s]);
                        let (dt, idt) = (ins.dtype, k.body[*index].dtype);
                        let sb = to_i64(*stride as i128 * self.esize[s] as i128, "gather stride")?;
                        let iv = vals[*index].ok_or_else(|| Error::Codegen(format!("gather index %{index} not computed")))?;
                        let fv = match fill {
                            Some(f) => Some(vals[*f].ok_or_else(|| Error::Codegen(format!("gather fill %{f} not computed")))?),
                            None => None,
                        };
                        let in_bounds = self.facts.within(*index, *hi);
                        let one = |b: &mut FunctionBuilder, at: Value, iv: Value, fv: Option<Value>| {
                            let (at, ok) = super::scalar_lib::gather_addr(b, at, idt, iv, *hi, sb, fv.is_some(), in_bounds);
                            let mut x = b.ins().load(cl_type(dt), super::clif::trusted(), at, 0);
                            if dt == DType::Bool {
                                let z = iconst(b, types::I8, 0);
                                x = b.ins().icmp(IntCC::NotEqual, x, z);
                            }
                            match (ok, fv) {
                                (Some(c), Some(f)) => b.ins().select(c, x, f),
                                _ => x,
                            }
                        };
                        if lanes == 1 {
                            one(b, a, iv, fv)
                        } else if let Some(v) = gather_lanes4(b, GatherLanes { a, st: vstr[s], first: (u * lanes) as i64, dt, idt, iv, fv, hi: *hi, sb, in_bounds }) {
                            v
                        } else {
                            let st = vstr[s];
                            let xs: Vec<Value> = (0..lanes)
                                .map(|l| {
                                    let at = b.ins().iadd_imm_s(a, (u * lanes + l) as i64 * st);
                                    let il = simd::lane_scalar(b, idt, iv, l);
                                    let fl = fv.map(|f| simd::lane_scalar(b, dt, f, l));
                                    one(b, at, il, fl)
                                })
                                .collect();
                            simd::from_lanes(b, dt, lanes, &xs)
                        }
                    }
                    KOp::Iota { axis } => {
                        if lanes == 1 {
                            let i = self.index(b, *axis, 0);
                            ops::convert(b, DType::I64, ins.dtype, i)
                        } else {
                            let on_axis = self.is_vec_axis(*axis, which);
                            let xs: Vec<Value> = (0..lanes)
                                .map(|l| {
                                    let extra = if on_axis { (u * lanes + l) as i64 } else { 0 };
                                    let i = self.index(b, *axis, extra);
                                    ops::convert(b, DType::I64, ins.dtype, i)
                                })
                                .collect();
                            simd::from_lanes(b, ins.dtype, lanes, &xs)
                        }
                    }
                    _ if lanes == 1 => ops::emit(b, self.imports, &k.body, i, &vals)?,
                    _ => simd::emit(b, self.imports, &k.body, i, &vals, lanes, &mut self.scratch)?,
                };
                vals[i] = Some(v);
            }
            if let Some(p) = &phase {
                for &(t, var) in &p.sinks {
                    let x = vals[t].ok_or_else(|| Error::Codegen(format!("strip value %{t} not computed")))?;
                    let a = b.use_var(var);
                    b.ins().store(vflags, x, a, (u * lanes * self.strip.elem_bytes()) as i32);
                }
                if !p.outputs {
                    continue;
                }
            }
            for (o, out) in k.outputs.iter().enumerate() {
                let x = vals[out.value].ok_or_else(|| Error::Codegen(format!("output {o} value not computed")))?;
                let vdt = k.body[out.value].dtype;
                let s = k.inputs.len() + o;
                match out.kind {
                    OutputKind::Store => {
                        let a = b.use_var(self.icur[s]);
                        if lanes == 1 {
                            b.ins().store(super::clif::trusted(), x, a, 0);
                        } else {
                            let off = (u * lanes) as i64 * vstr[s];
                            self.store_vec(b, vdt, x, a, off);
                        }
                    }
                    OutputKind::Reduce(_) if self.capture.is_some() => {
                        self.capture.get_or_insert_with(Vec::new).push(x);
                    }
                    OutputKind::Reduce(op) => {
                        let v = if lanes == 1 { self.acc[o].s.ok_or_else(|| no_acc(o))?.0 } else { self.acc[o].v[u as usize] };
                        let acc = b.use_var(v);
                        let r = ops::reduce_combine(b, vdt, op, acc, x)?;
                        b.def_var(v, r);
                    }
                    OutputKind::ArgReduce { is_max } => {
                        let (v, iv) = self.acc[o].s.ok_or_else(|| no_acc(o))?;
                        let iv = iv.ok_or_else(|| no_acc(o))?;
                        let best = b.use_var(v);
                        let op = if is_max { crate::ir::CompareOp::Gt } else { crate::ir::CompareOp::Lt };
                        let mut take = ops::compare(b, vdt, op, x, best);
                        if vdt.is_float() {
                            // NaN is the extreme: the first NaN wins and stays.
                            let xn = b.ins().fcmp(FloatCC::Unordered, x, x);
                            let bn = b.ins().fcmp(FloatCC::Ordered, best, best);
                            let t = b.ins().band(xn, bn);
                            take = b.ins().bor(take, t);
                        }
                        let nb = b.ins().select(take, x, best);
                        b.def_var(v, nb);
                        let i = self.index(b, k.reduce_axes[0], 0);
                        let bi = b.use_var(iv);
                        let ni = b.ins().select(take, i, bi);
                        b.def_var(iv, ni);
                    }
                }
            }
        }
        Ok(())
    }
}

/// A reduction output whose accumulator was not set up: a plan the validator should have refused.
/// The scalar accumulator lane `slot` of a summed row's tail, declared (as zero `zs`) on its first use.
fn scalar_lane(b: &mut FunctionBuilder, slot: &mut Option<Variable>, dt: DType, zs: Value) -> Variable {
    *slot.get_or_insert_with(|| var_with(b, cl_type(dt), zs))
}

fn no_acc(o: usize) -> Error {
    Error::Codegen(format!("output {o}: reduction accumulator missing"))
}

/// YNNPACK's accumulators of one row piece (`Gen::ynn_piece`), per output and lane-vector.
/// Full windows of 32 whose chains `emit_xla_windows` interleaves.
const XLA_GROUP: u64 = 8;

/// The sums of `m` values per output, at `slots[j]` (contiguous, `dt`), in YNNPACK's order (`ynn_piece`'s, in
/// scalar lanes): how XLA:CPU adds the sums of a row's 128 KiB chunks. A block's missing elements (past `m`)
/// are not added: an add of zero changes nothing but a zero's sign, which the caller's final 0 + sum sets.
fn ynn_slots(b: &mut FunctionBuilder, slots: &[Value], m: u64, dt: DType) -> Vec<Value> {
    let n = (64 / dt.size()) as u64;
    let es = dt.size() as i64;
    let ty = cl_type(dt);
    let trusted = super::clif::trusted();
    let zero = super::clif::fconst(b, dt, 0.0);
    let decl = |b: &mut FunctionBuilder| -> Vec<Vec<Variable>> {
        slots
            .iter()
            .map(|_| {
                (0..n)
                    .map(|_| var_with(b, ty, zero))
                    .collect()
            })
            .collect()
    };
    let (acc0, acc1, acc2, err) = (decl(b), decl(b), decl(b), decl(b));
    let st = YnnAccs { acc0, acc1, acc2, err, zero, vw: 1, nv: n as usize, dt };
    // One block of 4n values from element `at` of `base[j]` (only the first `have`): lane l gets
    // ((0 + c0) + c1) + c2) + c3, c_i the value at at + i n + l, then acc0 += it.
    let block = |b: &mut FunctionBuilder, base: &[Value], at: u64, have: u64| {
        for (j, &a) in base.iter().enumerate() {
            for l in 0..n {
                let mut local = zero;
                for i in 0..4 {
                    let e = i * n + l;
                    if e < have {
                        let x = b.ins().load(ty, trusted, a, ((at + e) as i64 * es) as i32);
                        local = b.ins().fadd(local, x);
                    }
                }
                let a0 = b.use_var(st.acc0[j][l as usize]);
                let s = b.ins().fadd(a0, local);
                b.def_var(st.acc0[j][l as usize], s);
            }
        }
    };
    let groups = m / (16 * n);
    let blocks = (m % (16 * n)) / (4 * n);
    let tail = m % (4 * n);
    for g in 0..groups {
        // (at most YNN_MAX_CHUNKS values: a few groups, unrolled)
        for q in 0..4 {
            block(b, slots, g * 16 * n + q * 4 * n, 4 * n);
        }
        st.flush(b);
        if (g + 1) * 4 * n % 256 == 0 {
            st.kahan(b);
        }
    }
    let mut clock = 4 * n * groups;
    for q in 0..blocks {
        block(b, slots, groups * 16 * n + q * 4 * n, 4 * n);
        clock += n;
        if clock % 16 == 0 {
            st.flush(b);
            if clock % 256 == 0 {
                st.kahan(b);
            }
        }
    }
    if tail > 0 {
        block(b, slots, m - tail, tail);
    }
    st.flush(b);
    (0..slots.len())
        .map(|j| {
            let mut xs: Vec<Value> = (0..n as usize)
                .map(|u| {
                    let (a1, e, a2) = (b.use_var(st.acc1[j][u]), b.use_var(st.err[j][u]), b.use_var(st.acc2[j][u]));
                    let y = b.ins().fsub(a1, e);
                    b.ins().fadd(a2, y)
                })
                .collect();
            let mut w = n as usize;
            while w > 1 {
                w /= 2;
                for l in 0..w {
                    xs[l] = b.ins().fadd(xs[l], xs[l + w]);
                }
            }
            xs[0]
        })
        .collect()
}

struct YnnAccs {
    acc0: Vec<Vec<Variable>>,
    acc1: Vec<Vec<Variable>>,
    acc2: Vec<Vec<Variable>>,
    err: Vec<Vec<Variable>>,
    /// Zero in every lane.
    zero: Value,
    vw: u32,
    nv: usize,
    dt: DType,
}

impl YnnAccs {
    /// acc1 += acc0; acc0 = 0.
    fn flush(&self, b: &mut FunctionBuilder) {
        for (a0, a1) in self.acc0.iter().flatten().zip(self.acc1.iter().flatten()) {
            let (x, y) = (b.use_var(*a0), b.use_var(*a1));
            let s = b.ins().fadd(y, x);
            b.def_var(*a1, s);
            b.def_var(*a0, self.zero);
        }
    }

    /// acc2 += acc1 by Kahan's compensated add (an error that is not finite is dropped); acc1 = 0.
    fn kahan(&self, b: &mut FunctionBuilder) {
        let ty = b.func.dfg.value_type(self.zero);
        let inf = super::clif::fconst(b, self.dt, f64::INFINITY);
        let inf = if self.vw > 1 { simd::splat(b, self.dt, self.vw, inf) } else { inf };
        for j in 0..self.acc1.len() {
            for u in 0..self.nv {
                let (a1, e, a2) = (b.use_var(self.acc1[j][u]), b.use_var(self.err[j][u]), b.use_var(self.acc2[j][u]));
                let y = b.ins().fsub(a1, e);
                let t = b.ins().fadd(a2, y);
                let d = b.ins().fsub(t, a2);
                let e = b.ins().fsub(d, y);
                let ab = b.ins().fabs(e);
                let fin = b.ins().fcmp(FloatCC::LessThan, ab, inf);
                let e = if self.vw > 1 {
                    let m = b.ins().bitcast(ty, simd::vflags(), fin);
                    b.ins().bitselect(m, e, self.zero)
                } else {
                    b.ins().select(fin, e, self.zero)
                };
                b.def_var(self.err[j][u], e);
                b.def_var(self.acc2[j][u], t);
                b.def_var(self.acc1[j][u], self.zero);
            }
        }
    }
}
