//! A `Kernel` → one Cranelift function
//! `extern "C" fn(inputs: *const *const u8, outputs: *const *mut u8, begin: u64, end: u64)`.
//!
//! `[begin, end)` ranges over the flattened (row-major) non-reduced axes of the domain. Loop nest: one loop
//! over that flat range whose per-axis indices and per-stream addresses advance incrementally (carry
//! chain), and inside it one real loop per reduced axis of size > 1, with accumulators as SSA variables.
//! A "stream" is a strided byte address walked through the domain: every kernel input, and every `Store`
//! output (row-major over the whole domain). `Reduce`/`ArgReduce` outputs are written once per outer point,
//! at the flat outer index.
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, Value};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};

use crate::error::{Error, Result};
use crate::ir::DType;
use crate::opt::{KOp, Kernel, OutputKind};

use super::math::Imports;
use super::ops::{self, cl_type, iconst};

/// The kernel ABI: `(inputs, outputs, begin, end)`, all pointer-sized / 64-bit.
pub fn kernel_signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    for _ in 0..4 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig
}

/// The number of points of the non-reduced axes: the `end` a full run passes.
pub fn outer_len(k: &Kernel) -> Result<u64> {
    k.domain
        .iter()
        .enumerate()
        .filter(|(d, _)| !k.reduce_axes.contains(d))
        .try_fold(1u64, |a, (_, &n)| a.checked_mul(n as u64))
        .filter(|&n| n <= i64::MAX as u64)
        .ok_or_else(|| Error::Codegen(format!("kernel {}: domain {:?} too large", k.name, k.domain)))
}

fn to_i64(v: i128, what: &str) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::Codegen(format!("{what} {v} does not fit in 64 bits")))
}

/// Where a stream's base pointer comes from.
#[derive(Clone, Copy)]
enum Base {
    Input(usize),
    Output(usize),
}

struct Stream {
    base: Base,
    /// Byte offset of the domain's origin from the base pointer.
    offset: i64,
    /// Byte stride per domain axis.
    strides: Vec<i64>,
}

/// Loop state shared by the emission helpers.
struct Gen<'k> {
    k: &'k Kernel,
    imports: &'k Imports,
    streams: Vec<Stream>,
    /// Stream index of each kernel output that stores (Store kind).
    out_stream: Vec<Option<usize>>,
    /// Per domain axis: the index variable (outer axes of size > 1, and reduced axes of size > 1).
    idx: Vec<Option<Variable>>,
    /// Outer-point address of each stream.
    addr: Vec<Variable>,
    /// Current (innermost) address of each stream.
    cur: Vec<Variable>,
    /// Reduced axes of size > 1, outermost first.
    inner_loops: Vec<usize>,
    /// Accumulator per output (value; for ArgReduce also the index).
    acc: Vec<Option<(Variable, Option<Variable>)>>,
    live: Vec<bool>,
}

fn liveness(k: &Kernel) -> Vec<bool> {
    let mut live = vec![false; k.body.len()];
    for o in &k.outputs {
        if let Some(l) = live.get_mut(o.value) {
            *l = true;
        }
    }
    for i in (0..k.body.len()).rev() {
        if !live[i] {
            continue;
        }
        let mut mark = |j: usize| {
            if j < i {
                live[j] = true;
            }
        };
        match &k.body[i].op {
            KOp::Load { .. } | KOp::Const { .. } | KOp::Iota { .. } => {}
            KOp::Unary { a, .. } | KOp::Convert { a } | KOp::Bitcast { a } | KOp::IntegerPow { a, .. } => mark(*a),
            KOp::Binary { a, b, .. } | KOp::Compare { a, b, .. } => {
                mark(*a);
                mark(*b);
            }
            KOp::Select { pred, cases } => {
                mark(*pred);
                cases.iter().for_each(|&c| mark(c));
            }
            KOp::Clamp { lo, x, hi } => {
                mark(*lo);
                mark(*x);
                mark(*hi);
            }
        }
    }
    live
}

/// Fills `func` (whose signature must be `kernel_signature`) with the kernel's code. `slot_dtype(slot)` is the
/// dtype of a plan slot (for ArgReduce outputs' index dtype).
pub fn build_kernel(
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    k: &Kernel,
    out_dtypes: &[DType],
    imports: &Imports,
    frontend: TargetFrontendConfig,
) -> Result<()> {
    let rank = k.domain.len();
    let is_red: Vec<bool> = (0..rank).map(|d| k.reduce_axes.contains(&d)).collect();
    let outer_len = outer_len(k)?;
    let inner_empty = k.reduce_axes.iter().any(|&a| k.domain[a] == 0);

    // Streams: inputs, then Store outputs (row-major over the domain).
    let mut streams = Vec::new();
    for (j, inp) in k.inputs.iter().enumerate() {
        let es = inp.dtype.size() as i128;
        let strides = inp.strides.iter().map(|&s| to_i64(s as i128 * es, "stride")).collect::<Result<Vec<_>>>()?;
        streams.push(Stream { base: Base::Input(j), offset: to_i64(inp.offset as i128 * es, "offset")?, strides });
    }
    let mut out_stream = vec![None; k.outputs.len()];
    for (o, out) in k.outputs.iter().enumerate() {
        if out.kind == OutputKind::Store {
            let es = k.body[out.value].dtype.size() as i128;
            let mut strides = vec![0i64; rank];
            let mut s = es;
            for d in (0..rank).rev() {
                strides[d] = to_i64(s, "stride")?;
                s *= k.domain[d] as i128;
            }
            out_stream[o] = Some(streams.len());
            streams.push(Stream { base: Base::Output(o), offset: 0, strides });
        }
    }

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
        let mut g = Gen {
            k,
            imports,
            streams,
            out_stream,
            idx: vec![None; rank],
            addr: Vec::new(),
            cur: Vec::new(),
            inner_loops: k.reduce_axes.iter().copied().filter(|&a| k.domain[a] > 1).collect(),
            acc: vec![None; k.outputs.len()],
            live: liveness(k),
        };
        let flags = ops::trusted();
        let in_bases: Vec<Value> =
            (0..k.inputs.len()).map(|j| b.ins().load(types::I64, flags, inp_arr, (8 * j) as i32)).collect();
        let out_bases: Vec<Value> =
            (0..k.outputs.len()).map(|o| b.ins().load(types::I64, flags, out_arr, (8 * o) as i32)).collect();
        let total = iconst(&mut b, types::I64, outer_len as i64);
        let end_c = b.ins().umin(end, total);
        let setup = b.create_block();
        let go = b.ins().icmp(IntCC::UnsignedLessThan, begin, end_c);
        b.ins().brif(go, setup, &[], exit, &[]);

        // setup: decompose `begin` into outer indices, compute each stream's address.
        b.switch_to_block(setup);
        let outer_loops: Vec<usize> = (0..rank).filter(|&d| !is_red[d] && k.domain[d] > 1).collect();
        for &d in outer_loops.iter().chain(&g.inner_loops) {
            g.idx[d] = Some(b.declare_var(types::I64));
        }
        let mut rem = begin;
        let mut outer_idx = vec![None; rank];
        for &d in outer_loops.iter().rev() {
            let n = iconst(&mut b, types::I64, k.domain[d] as i64);
            let i = b.ins().urem(rem, n);
            rem = b.ins().udiv(rem, n);
            b.def_var(g.idx[d].unwrap(), i);
            outer_idx[d] = Some(i);
        }
        for s in 0..g.streams.len() {
            let base = match g.streams[s].base {
                Base::Input(j) => in_bases[j],
                Base::Output(o) => out_bases[o],
            };
            let mut a = b.ins().iadd_imm_s(base, g.streams[s].offset);
            for &d in &outer_loops {
                let st = g.streams[s].strides[d];
                if st != 0 {
                    let t = b.ins().imul_imm_s(outer_idx[d].unwrap(), st);
                    a = b.ins().iadd(a, t);
                }
            }
            let v = b.declare_var(types::I64);
            b.def_var(v, a);
            g.addr.push(v);
            g.cur.push(b.declare_var(types::I64));
        }
        let flat = b.declare_var(types::I64);
        b.def_var(flat, begin);
        let head = b.create_block();
        b.ins().jump(head, &[]);

        // head: one outer point.
        b.switch_to_block(head);
        g.emit_point(&mut b, inner_empty, out_dtypes, &out_bases, flat)?;
        let f0 = b.use_var(flat);
        let f1 = b.ins().iadd_imm_s(f0, 1);
        b.def_var(flat, f1);
        let done = b.ins().icmp(IntCC::Equal, f1, end_c);
        if outer_loops.is_empty() {
            b.ins().brif(done, exit, &[], head, &[]);
        } else {
            // Carry chain, innermost outer axis first.
            let incs: Vec<_> = outer_loops.iter().map(|_| b.create_block()).collect();
            b.ins().brif(done, exit, &[], *incs.last().unwrap(), &[]);
            for p in (0..outer_loops.len()).rev() {
                let d = outer_loops[p];
                b.switch_to_block(incs[p]);
                let v = g.idx[d].unwrap();
                let i0 = b.use_var(v);
                let i1 = b.ins().iadd_imm_s(i0, 1);
                b.def_var(v, i1);
                g.bump(&mut b, d, 1, true);
                if p == 0 {
                    b.ins().jump(head, &[]);
                } else {
                    let reset = b.create_block();
                    let n = iconst(&mut b, types::I64, k.domain[d] as i64);
                    let wrap = b.ins().icmp(IntCC::Equal, i1, n);
                    b.ins().brif(wrap, reset, &[], head, &[]);
                    b.switch_to_block(reset);
                    let z = iconst(&mut b, types::I64, 0);
                    b.def_var(v, z);
                    g.bump(&mut b, d, -(k.domain[d] as i64), true);
                    b.ins().jump(incs[p - 1], &[]);
                }
            }
        }
    }
    b.switch_to_block(exit);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(frontend);
    Ok(())
}

impl Gen<'_> {
    /// Adds `times * stride[axis]` to every stream's outer (`outer`) or current address.
    fn bump(&self, b: &mut FunctionBuilder, axis: usize, times: i64, outer: bool) {
        for (s, st) in self.streams.iter().enumerate() {
            let delta = st.strides[axis].wrapping_mul(times);
            if delta != 0 {
                let v = if outer { self.addr[s] } else { self.cur[s] };
                let a = b.use_var(v);
                let a = b.ins().iadd_imm_s(a, delta);
                b.def_var(v, a);
            }
        }
    }

    fn index(&self, b: &mut FunctionBuilder, axis: usize) -> Value {
        match self.idx[axis] {
            Some(v) => b.use_var(v),
            None => iconst(b, types::I64, 0),
        }
    }

    fn emit_point(
        &mut self,
        b: &mut FunctionBuilder,
        inner_empty: bool,
        out_dtypes: &[DType],
        out_bases: &[Value],
        flat: Variable,
    ) -> Result<()> {
        let k = self.k;
        for (o, out) in k.outputs.iter().enumerate() {
            let vdt = k.body[out.value].dtype;
            match out.kind {
                OutputKind::Store => {}
                OutputKind::Reduce(op) => {
                    let v = b.declare_var(cl_type(vdt));
                    let init = ops::reduce_identity(b, vdt, op)?;
                    b.def_var(v, init);
                    self.acc[o] = Some((v, None));
                }
                OutputKind::ArgReduce { is_max } => {
                    let v = b.declare_var(cl_type(vdt));
                    let init = ops::reduce_identity(b, vdt, if is_max { crate::ir::ReduceOp::Max } else { crate::ir::ReduceOp::Min })?;
                    b.def_var(v, init);
                    let iv = b.declare_var(types::I64);
                    let z = iconst(b, types::I64, 0);
                    b.def_var(iv, z);
                    self.acc[o] = Some((v, Some(iv)));
                }
            }
        }
        if !inner_empty {
            for s in 0..self.streams.len() {
                let a = b.use_var(self.addr[s]);
                b.def_var(self.cur[s], a);
            }
            self.emit_nest(b, 0)?;
        }
        // Reduced outputs: row-major over the outer axes = the flat outer index.
        for (o, out) in k.outputs.iter().enumerate() {
            let Some((v, iv)) = self.acc[o] else { continue };
            let (val, dt) = match iv {
                None => (b.use_var(v), k.body[out.value].dtype),
                Some(iv) => {
                    let i = b.use_var(iv);
                    let dt = out_dtypes[o];
                    (ops::convert(b, DType::I64, dt, i), dt)
                }
            };
            let f = b.use_var(flat);
            let off = b.ins().imul_imm_s(f, dt.size() as i64);
            let addr = b.ins().iadd(out_bases[o], off);
            b.ins().store(ops::trusted(), val, addr, 0);
        }
        Ok(())
    }

    fn emit_nest(&mut self, b: &mut FunctionBuilder, level: usize) -> Result<()> {
        if level == self.inner_loops.len() {
            return self.emit_body(b);
        }
        let axis = self.inner_loops[level];
        let n = self.k.domain[axis] as i64;
        let iv = self.idx[axis].unwrap();
        let z = iconst(b, types::I64, 0);
        b.def_var(iv, z);
        let hdr = b.create_block();
        let after = b.create_block();
        b.ins().jump(hdr, &[]);
        b.switch_to_block(hdr);
        self.emit_nest(b, level + 1)?;
        let i0 = b.use_var(iv);
        let i1 = b.ins().iadd_imm_s(i0, 1);
        b.def_var(iv, i1);
        self.bump(b, axis, 1, false);
        let nn = iconst(b, types::I64, n);
        let more = b.ins().icmp(IntCC::UnsignedLessThan, i1, nn);
        b.ins().brif(more, hdr, &[], after, &[]);
        b.switch_to_block(after);
        self.bump(b, axis, -n, false);
        Ok(())
    }

    fn emit_body(&mut self, b: &mut FunctionBuilder) -> Result<()> {
        let k = self.k;
        let mut vals: Vec<Option<Value>> = vec![None; k.body.len()];
        for (i, ins) in k.body.iter().enumerate() {
            if !self.live[i] {
                continue;
            }
            let v = match &ins.op {
                KOp::Load { input } => {
                    let a = b.use_var(self.cur[*input]);
                    let x = b.ins().load(cl_type(ins.dtype), ops::trusted(), a, 0);
                    if ins.dtype == DType::Bool {
                        let z = iconst(b, types::I8, 0);
                        b.ins().icmp(IntCC::NotEqual, x, z)
                    } else {
                        x
                    }
                }
                KOp::Iota { axis } => {
                    let i = self.index(b, *axis);
                    ops::convert(b, DType::I64, ins.dtype, i)
                }
                _ => ops::emit(b, self.imports, &k.body, i, &vals)?,
            };
            vals[i] = Some(v);
        }
        for (o, out) in k.outputs.iter().enumerate() {
            let x = vals[out.value].ok_or_else(|| Error::Codegen(format!("output {o} value not computed")))?;
            let vdt = k.body[out.value].dtype;
            match out.kind {
                OutputKind::Store => {
                    let s = self.out_stream[o].unwrap();
                    let a = b.use_var(self.cur[s]);
                    b.ins().store(ops::trusted(), x, a, 0);
                }
                OutputKind::Reduce(op) => {
                    let (v, _) = self.acc[o].unwrap();
                    let acc = b.use_var(v);
                    let r = ops::reduce_combine(b, vdt, op, acc, x)?;
                    b.def_var(v, r);
                }
                OutputKind::ArgReduce { is_max } => {
                    let (v, iv) = self.acc[o].unwrap();
                    let iv = iv.unwrap();
                    let best = b.use_var(v);
                    let op = if is_max { crate::ir::CompareOp::Gt } else { crate::ir::CompareOp::Lt };
                    let mut take = ops::compare(b, vdt, op, x, best);
                    if vdt.is_float() {
                        // NaN is the extreme: the first NaN wins and stays.
                        let xn = b.ins().fcmp(cranelift_codegen::ir::condcodes::FloatCC::Unordered, x, x);
                        let bn = b.ins().fcmp(cranelift_codegen::ir::condcodes::FloatCC::Ordered, best, best);
                        let t = b.ins().band(xn, bn);
                        take = b.ins().bor(take, t);
                    }
                    let nb = b.ins().select(take, x, best);
                    b.def_var(v, nb);
                    let axis = k.reduce_axes[0];
                    let i = self.index(b, axis);
                    let bi = b.use_var(iv);
                    let ni = b.ins().select(take, i, bi);
                    b.def_var(iv, ni);
                }
            }
        }
        Ok(())
    }
}
