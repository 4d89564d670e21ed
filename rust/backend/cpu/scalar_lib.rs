//! Library steps inside loops compiled whole (`scalar_loop`): the data-movement steps that equinox's and
//! diffrax's loop machinery puts in every iteration (`dynamic_slice`, `dynamic_update_slice`, `scatter`
//! into a small buffer, the `gather` a clamped dynamic index becomes, the `concatenate` building an index
//! vector, the `pad` of a shifted difference in a BFGS line search) and tiny products, emitted on the loop's SSA values instead of making the whole
//! loop fall back to running sub-plans.
//!
//! A step whose element positions depend on a runtime index goes through a stack slot: the operand's
//! values are stored there, the index is clamped (or checked) exactly as the library routine does
//! (`library::shape_ops`, `library::gather`), and the window is loaded (or the update stored and the whole
//! slot reloaded). A product is emitted only where the library takes its tiny path (`gemm::TINY_FLOPS`):
//! one fused multiply-add chain per output element, in contracting order, from zero — the same operations
//! as `gemm::tiny_dot`, so values are bit-identical to the step-by-step path.
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::FunctionBuilder;

use crate::error::{Error, Result};
use crate::ir::{Aval, DType, IndexMode, LibOp, ScatterOp};
use crate::plan::LibStep;

use super::clif::{cl_type, trusted};

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * shape[d + 1];
    }
    st
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Multi-index of row-major position `p` in `shape`.
fn unravel(shape: &[usize], mut p: usize) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = p % shape[d];
        p /= shape[d];
    }
    idx
}

fn int_index(d: DType) -> bool {
    matches!(d, DType::I8 | DType::U8 | DType::I16 | DType::U16 | DType::I32 | DType::U32 | DType::I64)
}

/// Whether library step `l` over slots of avals `slots` can be emitted on SSA values.
pub fn supported(l: &LibStep, slots: &[Aval]) -> bool {
    let Some(av) = l.inputs.iter().chain(&l.outputs).map(|&s| slots.get(s)).collect::<Option<Vec<&Aval>>>() else {
        return false;
    };
    let (ins, outs) = av.split_at(l.inputs.len());
    let scalar_ints = |v: &[&Aval]| v.iter().all(|a| a.shape.is_empty() && int_index(a.dtype));
    match &l.op {
        LibOp::DynamicSlice { .. } => {
            ins.len() == 1 + ins[0].shape.len() && outs.len() == 1 && scalar_ints(&ins[1..])
                && outs[0].dtype == ins[0].dtype
                && outs[0].shape.iter().zip(&ins[0].shape).all(|(o, i)| o <= i)
                && outs[0].shape.len() == ins[0].shape.len()
        }
        LibOp::Concatenate { dimension } => {
            let d = *dimension;
            !ins.is_empty() && outs.len() == 1
                && ins.iter().all(|a| a.dtype == outs[0].dtype && a.shape.len() == outs[0].shape.len() && d < a.shape.len())
                && ins.iter().map(|a| a.shape[d]).sum::<usize>() == outs[0].shape[d]
                && ins.iter().all(|a| (0..a.shape.len()).all(|e| e == d || a.shape[e] == outs[0].shape[e]))
        }
        LibOp::Pad { config } => {
            ins.len() == 2 && outs.len() == 1 && ins[1].shape.is_empty()
                && ins[1].dtype == ins[0].dtype && outs[0].dtype == ins[0].dtype
                && config.len() == ins[0].shape.len() && outs[0].shape.len() == ins[0].shape.len()
                && config.iter().all(|&(_, _, i)| i >= 0)
        }
        LibOp::DynamicUpdateSlice => {
            ins.len() == 2 + ins[0].shape.len() && outs.len() == 1 && scalar_ints(&ins[2..])
                && ins[1].dtype == ins[0].dtype
                && ins[1].shape.len() == ins[0].shape.len()
                && ins[1].shape.iter().zip(&ins[0].shape).all(|(u, x)| u <= x)
                && outs[0] == ins[0]
        }
        LibOp::Gather { offset_dims, collapsed_slice_dims, start_index_map, slice_sizes, .. } => {
            ins.len() == 2 && outs.len() == 1
                && outs[0].dtype == ins[0].dtype
                && int_index(ins[1].dtype)
                && !ins[1].shape.is_empty()
                && ins[1].shape.last() == Some(&start_index_map.len())
                && slice_sizes.len() == ins[0].shape.len()
                && slice_sizes.iter().zip(&ins[0].shape).all(|(&z, &n)| z >= 1 && z <= n)
                && start_index_map.iter().all(|&d| d < ins[0].shape.len())
                && collapsed_slice_dims.iter().all(|&d| d < ins[0].shape.len() && slice_sizes[d] == 1)
                && offset_dims.len() + collapsed_slice_dims.len() == ins[0].shape.len()
                && offset_dims.iter().all(|&d| d < outs[0].shape.len())
                && outs[0].shape.len() == offset_dims.len() + ins[1].shape.len() - 1
                && outs[0].numel() == Some(
                    numel(&ins[1].shape[..ins[1].shape.len() - 1])
                        * (0..ins[0].shape.len()).filter(|d| !collapsed_slice_dims.contains(d)).map(|d| slice_sizes[d]).product::<usize>(),
                )
        }
        LibOp::Scatter { op, update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, .. } => {
            let combinable = match op {
                ScatterOp::Set => true,
                _ => matches!(ins[0].dtype, DType::F32 | DType::F64 | DType::Bool) || int_index(ins[0].dtype),
            };
            ins.len() == 3 && outs.len() == 1 && combinable
                && outs[0] == ins[0]
                && ins[2].dtype == ins[0].dtype
                && int_index(ins[1].dtype)
                && !ins[1].shape.is_empty()
                && ins[1].shape.last() == Some(&scatter_dims_to_operand_dims.len())
                && scatter_dims_to_operand_dims.iter().all(|&d| d < ins[0].shape.len())
                && update_window_dims.iter().all(|&d| d < ins[2].shape.len())
                && inserted_window_dims.len() + update_window_dims.len() == ins[0].shape.len()
                && ins[2].shape.len() == update_window_dims.len() + ins[1].shape.len() - 1
        }
        LibOp::DotGeneral { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, .. } => {
            let dt = outs.first().map(|a| a.dtype);
            if ins.len() != 2 || outs.len() != 1 || !matches!(dt, Some(DType::F32 | DType::F64)) {
                return false;
            }
            if ins.iter().any(|a| Some(a.dtype) != dt) || lhs_batch.len() != rhs_batch.len() || lhs_contracting.len() != rhs_contracting.len() {
                return false;
            }
            let (ls, rs) = (&ins[0].shape, &ins[1].shape);
            let ok = |d: &[usize], r: usize| d.iter().all(|&x| x < r);
            if !ok(lhs_contracting, ls.len()) || !ok(lhs_batch, ls.len()) || !ok(rhs_contracting, rs.len()) || !ok(rhs_batch, rs.len()) {
                return false;
            }
            let k: usize = lhs_contracting.iter().map(|&d| ls[d]).product();
            let kr: usize = rhs_contracting.iter().map(|&d| rs[d]).product();
            let nb: usize = lhs_batch.iter().map(|&d| ls[d]).product();
            let m = free(ls.len(), lhs_contracting, lhs_batch).iter().map(|&d| ls[d]).product::<usize>();
            let n = free(rs.len(), rhs_contracting, rhs_batch).iter().map(|&d| rs[d]).product::<usize>();
            k == kr && k >= 1 && outs[0].numel() == Some(nb * m * n) && m * n * k <= super::library::gemm::TINY_FLOPS
                && lhs_contracting.iter().zip(rhs_contracting).all(|(&a, &b)| ls[a] == rs[b])
                && lhs_batch.iter().zip(rhs_batch).all(|(&a, &b)| ls[a] == rs[b])
        }
        _ => false,
    }
}

/// Instructions `emit` gives step `l` (about): its elements in and out, a product's multiply-adds.
pub fn cost(l: &LibStep, slots: &[Aval]) -> usize {
    // (a value kept in memory moves only its window, which the other operand or the result counts)
    let n = |s: &usize| slots.get(*s).and_then(|a| a.numel()).filter(|&n| n <= super::scalar_loop::MAX_ELEMS).unwrap_or(0);
    let moved: usize = l.inputs.iter().chain(&l.outputs).map(n).sum();
    match &l.op {
        LibOp::DotGeneral { lhs_contracting, .. } => {
            let k: usize = l.inputs.first().and_then(|s| slots.get(*s)).map_or(0, |a| {
                lhs_contracting.iter().map(|&d| a.shape.get(d).copied().unwrap_or(0)).product()
            });
            moved + l.outputs.first().map(n).unwrap_or(0) * k
        }
        _ => moved,
    }
}

fn free(rank: usize, contract: &[usize], batch: &[usize]) -> Vec<usize> {
    (0..rank).filter(|d| !contract.contains(d) && !batch.contains(d)).collect()
}

/// A scalar index value as i64 (sign- or zero-extended by its dtype).
fn widen(b: &mut FunctionBuilder, dt: DType, v: Value) -> Value {
    match dt {
        DType::I64 => v,
        DType::I8 | DType::I16 | DType::I32 => b.ins().sextend(types::I64, v),
        _ => b.ins().uextend(types::I64, v),
    }
}

/// `clamp(x, lo, hi)` on i64 (`lo <= hi`).
fn clamp(b: &mut FunctionBuilder, x: Value, lo: i64, hi: i64) -> Value {
    let lo_v = b.ins().iconst(types::I64, lo);
    let hi_v = b.ins().iconst(types::I64, hi);
    let below = b.ins().icmp(IntCC::SignedLessThan, x, lo_v);
    let x = b.ins().select(below, lo_v, x);
    let above = b.ins().icmp(IntCC::SignedGreaterThan, x, hi_v);
    b.ins().select(above, hi_v, x)
}

/// A one-element gather's (`KOp::Gather`) address, `base + clamp(index, 0, hi) * stride_bytes`, for an
/// index of integer dtype `idt` (signed or unsigned as its dtype reads), and with `check` whether the index
/// was in `0..=hi` (the `fill` mode's test, as `library::gather`'s `point_gather`). `in_bounds`: the index
/// is known to lie in `0..=hi` (`kfacts`), so neither the clamp nor the test is emitted.
#[allow(clippy::too_many_arguments)]
pub(super) fn gather_addr(
    b: &mut FunctionBuilder, base: Value, idt: DType, index: Value, hi: u64, stride_bytes: i64, check: bool,
    in_bounds: bool,
) -> (Value, Option<Value>) {
    let s = widen(b, idt, index);
    if in_bounds {
        return (offset(b, base, s, stride_bytes), None);
    }
    if !check {
        let c = clamp(b, s, 0, hi as i64);
        return (offset(b, base, c, stride_bytes), None);
    }
    // The value read at a failed test is replaced by the fill, so any in-bounds place will do: a negative
    // i64 is a huge u64, so one unsigned compare tests both ends and one `umin` clamps.
    let h = b.ins().iconst(types::I64, hi as i64);
    let ok = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, s, h);
    let c = b.ins().umin(s, h);
    (offset(b, base, c, stride_bytes), Some(ok))
}

fn offset(b: &mut FunctionBuilder, base: Value, at: Value, stride_bytes: i64) -> Value {
    let off = b.ins().imul_imm_s(at, stride_bytes);
    b.ins().iadd(base, off)
}

/// `ok && 0 <= s <= hi` (`ok` absent: true) for an i64 start `s`.
fn and_in_range(b: &mut FunctionBuilder, ok: Option<Value>, s: Value, hi: i64) -> Value {
    let ge = b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, s, 0);
    let le = b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, s, hi);
    let both = b.ins().band(ge, le);
    match ok {
        Some(o) => b.ins().band(o, both),
        None => both,
    }
}

/// The gather fill value of dtype `dt` (`fill`, else JAX's default) as `library::gather` computes it
/// (`Elem::from_f64` / `Elem::default_fill`), emitted from its bits.
fn fill_const(b: &mut FunctionBuilder, dt: DType, fill: Option<f64>) -> Value {
    use super::library::elem::{scalar_from_f64, with_elem, Elem};
    let mut bits = [0u8; 8];
    with_elem!(dt, T => {
        let v: T = match fill { Some(f) => scalar_from_f64::<T>(f), None => T::default_fill() };
        let n = std::mem::size_of::<T>().min(8);
        // SAFETY: reads the `n <= 8` bytes of the plain-data element `v` (ints, floats, bit-held floats).
        let raw = unsafe { std::slice::from_raw_parts(&v as *const T as *const u8, n) };
        bits[..n].copy_from_slice(raw);
    });
    let v = u64::from_le_bytes(bits);
    match dt {
        DType::F32 => b.ins().f32const(f32::from_bits(v as u32)),
        DType::F64 => b.ins().f64const(f64::from_bits(v)),
        _ => super::clif::iconst(b, cl_type(dt), v as i64),
    }
}

/// `combine(op, old, upd)` of `library::gather` for `dt` (f32, f64, bool or an integer: `supported`):
/// integers wrap, bool add/mul/max/min are or/and/or/and, float max/min give NaN when either is NaN and
/// otherwise IEEE 754-2019 maximum/minimum (-0.0 < +0.0 in either order, subnormals as ±0: `ops::max_min`,
/// as `Elem::emax`/`emin` and XLA).
fn combine(b: &mut FunctionBuilder, op: ScatterOp, dt: DType, old: Value, upd: Value) -> Value {
    use cranelift_codegen::ir::condcodes::FloatCC;
    let float = matches!(dt, DType::F32 | DType::F64);
    let signed = matches!(dt, DType::I8 | DType::I16 | DType::I32 | DType::I64);
    match (op, dt) {
        (ScatterOp::Set, _) => upd,
        (ScatterOp::Add | ScatterOp::Max, DType::Bool) => b.ins().bor(old, upd),
        (ScatterOp::Mul | ScatterOp::Min, DType::Bool) => b.ins().band(old, upd),
        (ScatterOp::Add, _) if float => b.ins().fadd(old, upd),
        (ScatterOp::Mul, _) if float => b.ins().fmul(old, upd),
        (ScatterOp::Add, _) => b.ins().iadd(old, upd),
        (ScatterOp::Mul, _) => b.ins().imul(old, upd),
        (ScatterOp::Min | ScatterOp::Max, _) if float => {
            let r = super::ops::max_min(b, dt, old, upd, op == ScatterOp::Max);
            let nan = b.ins().fcmp(FloatCC::Unordered, old, upd);
            let q = super::clif::fconst(b, dt, f64::NAN);
            b.ins().select(nan, q, r)
        }
        (ScatterOp::Min | ScatterOp::Max, _) => {
            let cc = match (op == ScatterOp::Min, signed) {
                (true, true) => IntCC::SignedLessThan,
                (true, false) => IntCC::UnsignedLessThan,
                (false, true) => IntCC::SignedGreaterThan,
                (false, false) => IntCC::UnsignedGreaterThan,
            };
            let beyond = b.ins().icmp(cc, upd, old);
            b.ins().select(beyond, upd, old)
        }
    }
}

/// A stack slot holding `vals` (elements of `dt`), and its address.
pub(super) fn spill(b: &mut FunctionBuilder, dt: DType, vals: &[Value]) -> Value {
    let es = dt.size() as u32;
    let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, es * vals.len().max(1) as u32, 4));
    let base = b.ins().stack_addr(types::I64, slot, 0);
    for (e, &v) in vals.iter().enumerate() {
        b.ins().store(trusted(), v, base, (e as u32 * es) as i32);
    }
    base
}

fn reload(b: &mut FunctionBuilder, dt: DType, base: Value, n: usize) -> Vec<Value> {
    let es = dt.size() as i32;
    (0..n).map(|e| b.ins().load(cl_type(dt), trusted(), base, e as i32 * es)).collect()
}

/// `base + Σ start[d] * stride[d] * es` for i64 starts.
fn window_base(b: &mut FunctionBuilder, base: Value, starts: &[Value], st: &[usize], es: usize) -> Value {
    let mut at = base;
    for (&s, &stride) in starts.iter().zip(st) {
        let off = b.ins().imul_imm_s(s, (stride * es) as i64);
        at = b.ins().iadd(at, off);
    }
    at
}

/// Whether step `l` reads a value that stays in memory (`big(slot)`: an array carried by a fused loop, or a
/// loop constant, too big for SSA values) the way `emit` can on its address: a window or point read
/// (`dynamic_slice`, `gather`) or a window or point write in place (`dynamic_update_slice`, `scatter`) of
/// operand 0, every other operand small; the result of a write is the same memory.
pub fn supported_in_memory(l: &LibStep, slots: &[Aval], big: impl Fn(usize) -> bool) -> bool {
    let (Some(&x), Some(&out)) = (l.inputs.first(), l.outputs.first()) else { return false };
    let writes = match &l.op {
        LibOp::DynamicSlice { .. } | LibOp::Gather { .. } => false,
        LibOp::DynamicUpdateSlice | LibOp::Scatter { .. } => true,
        _ => return false,
    };
    big(x) && l.outputs.len() == 1 && big(out) == writes && !l.inputs[1..].iter().any(|&s| big(s)) && supported(l, slots)
}

/// Emits library step `l` (accepted by `supported`) on `ins` (one value per element of each input, of the
/// slots' avals); returns one value list per output. With `mem`, operand 0 is not in `ins` (its list is
/// empty) but in memory at that address (`supported_in_memory`): reads load from there, and a
/// `dynamic_update_slice` or `scatter` stores its update there in place and returns an empty list.
pub fn emit(b: &mut FunctionBuilder, l: &LibStep, slots: &[Aval], ins: &[Vec<Value>], mem: Option<Value>) -> Result<Vec<Vec<Value>>> {
    let bad = |m: &str| Error::Codegen(format!("fused loop {}: {m}", l.op.name()));
    let aval = |s: usize| slots.get(s).ok_or_else(|| bad("slot out of range"));
    if ins.len() != l.inputs.len() {
        return Err(bad("operand count"));
    }
    let scalar = |j: usize| ins.get(j).and_then(|v| v.first().copied()).ok_or_else(|| bad("missing index"));
    // dynamic_slice / dynamic_update_slice: operand 0 spilled to the stack, and the address of the window of
    // shape `win` whose start indices are the scalar operands from `first` on, each clamped so it fits (as
    // the library routines clamp); returns (spilled base, window address, operand strides, element size)
    let window = |b: &mut FunctionBuilder, first: usize, win: &[usize]| -> Result<(Value, Value, Vec<usize>, usize)> {
        let x = aval(l.inputs[0])?;
        let es = x.dtype.size();
        let base = mem.unwrap_or_else(|| spill(b, x.dtype, &ins[0]));
        let mut starts = Vec::with_capacity(x.shape.len());
        for d in 0..x.shape.len() {
            let w = widen(b, aval(l.inputs[first + d])?.dtype, scalar(first + d)?);
            starts.push(clamp(b, w, 0, (x.shape[d] - win[d]) as i64));
        }
        let xst = strides(&x.shape);
        Ok((base, window_base(b, base, &starts, &xst, es), xst, es))
    };
    // A write's result: the operand's slot reloaded, or nothing when it stays in memory.
    let result = |b: &mut FunctionBuilder, dt: DType, base: Value, n: usize| match mem {
        Some(_) => vec![vec![]],
        None => vec![reload(b, dt, base, n)],
    };
    match &l.op {
        LibOp::DynamicSlice { .. } => {
            let x = aval(l.inputs[0])?;
            let out = aval(l.outputs[0])?;
            let (_, at, xst, es) = window(b, 1, &out.shape)?;
            let vals = (0..numel(&out.shape))
                .map(|p| {
                    let o = unravel(&out.shape, p);
                    let off: usize = o.iter().zip(&xst).map(|(i, s)| i * s).sum();
                    b.ins().load(cl_type(x.dtype), trusted(), at, (off * es) as i32)
                })
                .collect();
            Ok(vec![vals])
        }
        LibOp::Concatenate { dimension } => {
            // Static data movement: output element at index o reads operand q at o with o[d] shifted.
            let out = aval(l.outputs[0])?;
            let d = *dimension;
            let mut vals = Vec::with_capacity(numel(&out.shape));
            for p in 0..numel(&out.shape) {
                let mut o = unravel(&out.shape, p);
                let mut q = 0;
                while q < l.inputs.len() && o[d] >= aval(l.inputs[q])?.shape[d] {
                    o[d] -= aval(l.inputs[q])?.shape[d];
                    q += 1;
                }
                let a = aval(*l.inputs.get(q).ok_or_else(|| bad("index past the operands"))?)?;
                let e: usize = o.iter().zip(strides(&a.shape)).map(|(i, s)| i * s).sum();
                vals.push(*ins[q].get(e).ok_or_else(|| bad("element out of range"))?);
            }
            Ok(vec![vals])
        }
        LibOp::Pad { config } => {
            // Static data movement: output index o along axis d reads the operand at (o - lo) / (interior + 1)
            // when that divides exactly and lands inside (negative lo/hi crop), else the padding value.
            let (x, out) = (aval(l.inputs[0])?, aval(l.outputs[0])?);
            let pad = scalar(1)?;
            let xst = strides(&x.shape);
            let mut vals = Vec::with_capacity(numel(&out.shape));
            for p in 0..numel(&out.shape) {
                let o = unravel(&out.shape, p);
                let mut e = Some(0usize);
                for (d, &(lo, _, interior)) in config.iter().enumerate() {
                    let pos = o[d] as i64 - lo;
                    let step = interior + 1;
                    e = match e {
                        Some(e) if pos >= 0 && pos % step == 0 && ((pos / step) as usize) < x.shape[d] => {
                            Some(e + (pos / step) as usize * xst[d])
                        }
                        _ => None,
                    };
                }
                vals.push(match e {
                    Some(e) => *ins[0].get(e).ok_or_else(|| bad("element out of range"))?,
                    None => pad,
                });
            }
            Ok(vec![vals])
        }
        LibOp::DynamicUpdateSlice => {
            let x = aval(l.inputs[0])?;
            let u = aval(l.inputs[1])?;
            let (base, at, xst, es) = window(b, 2, &u.shape)?;
            for (p, &v) in ins[1].iter().enumerate().take(numel(&u.shape)) {
                let o = unravel(&u.shape, p);
                let off: usize = o.iter().zip(&xst).map(|(i, s)| i * s).sum();
                b.ins().store(trusted(), v, at, (off * es) as i32);
            }
            Ok(result(b, x.dtype, base, numel(&x.shape)))
        }
        LibOp::Gather { offset_dims, collapsed_slice_dims, start_index_map, slice_sizes, mode, fill_value } => {
            // Each batch's window start clamped so the window fits (`Clip`); under `FillOrDrop` the clamped
            // window is read all the same (always in bounds) and a batch whose starts do not all fit takes
            // the fill value instead, as `library::gather`.
            let (x, ia, out) = (aval(l.inputs[0])?, aval(l.inputs[1])?, aval(l.outputs[0])?);
            let fill = match mode {
                IndexMode::FillOrDrop => Some(fill_const(b, x.dtype, *fill_value)),
                IndexMode::Clip => None,
            };
            let shape = &x.shape;
            let es = x.dtype.size();
            let base = mem.unwrap_or_else(|| spill(b, x.dtype, &ins[0]));
            let (xst, ost) = (strides(shape), strides(&out.shape));
            let nbd = ia.shape.len() - 1;
            let bshape = &ia.shape[..nbd];
            let nk = start_index_map.len();
            let batch_axes: Vec<usize> = (0..out.shape.len()).filter(|d| !offset_dims.contains(d)).collect();
            let win_axes: Vec<usize> = (0..shape.len()).filter(|d| !collapsed_slice_dims.contains(d)).collect();
            let win_shape: Vec<usize> = win_axes.iter().map(|&d| slice_sizes[d]).collect();
            let mut vals: Vec<Option<Value>> = vec![None; numel(&out.shape)];
            for g in 0..numel(bshape) {
                let gi = unravel(bshape, g);
                let obase: usize = gi.iter().zip(&batch_axes).map(|(i, &d)| i * ost[d]).sum();
                let mut starts = Vec::with_capacity(nk);
                let mut ok: Option<Value> = None;
                for (k, &d) in start_index_map.iter().enumerate() {
                    let v = *ins[1].get(g * nk + k).ok_or_else(|| bad("index out of range"))?;
                    let s = widen(b, ia.dtype, v);
                    let hi = (shape[d] - slice_sizes[d]) as i64;
                    if fill.is_some() {
                        ok = Some(and_in_range(b, ok, s, hi));
                    }
                    starts.push(clamp(b, s, 0, hi));
                }
                let st: Vec<usize> = start_index_map.iter().map(|&d| xst[d]).collect();
                let at = window_base(b, base, &starts, &st, es);
                for w in 0..numel(&win_shape) {
                    let wi = unravel(&win_shape, w);
                    let xo: usize = wi.iter().zip(&win_axes).map(|(i, &d)| i * xst[d]).sum();
                    let oo = obase + wi.iter().zip(offset_dims).map(|(i, &d)| i * ost[d]).sum::<usize>();
                    let mut v = b.ins().load(cl_type(x.dtype), trusted(), at, (xo * es) as i32);
                    if let (Some(c), Some(f)) = (ok, fill) {
                        v = b.ins().select(c, v, f);
                    }
                    *vals.get_mut(oo).ok_or_else(|| bad("output out of range"))? = Some(v);
                }
            }
            Ok(vec![vals.into_iter().collect::<Option<Vec<_>>>().ok_or_else(|| bad("output element not written"))?])
        }
        LibOp::Scatter { op, update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, mode } => {
            let (x, ia, u) = (aval(l.inputs[0])?, aval(l.inputs[1])?, aval(l.inputs[2])?);
            let (shape, ushape) = (&x.shape, &u.shape);
            let es = x.dtype.size();
            let base = mem.unwrap_or_else(|| spill(b, x.dtype, &ins[0]));
            if numel(ushape) == 0 {
                return Ok(result(b, x.dtype, base, numel(shape)));
            }
            let r = shape.len();
            let (xst, ust) = (strides(shape), strides(ushape));
            let nbd = ia.shape.len() - 1;
            let bshape = &ia.shape[..nbd];
            let nk = scatter_dims_to_operand_dims.len();
            let upd_batch_axes: Vec<usize> = (0..ushape.len()).filter(|d| !update_window_dims.contains(d)).collect();
            let op_win_axes: Vec<usize> = (0..r).filter(|d| !inserted_window_dims.contains(d)).collect();
            let win_shape: Vec<usize> = update_window_dims.iter().map(|&d| ushape[d]).collect();
            let mut win_full = vec![1usize; r];
            for (j, &d) in op_win_axes.iter().enumerate() {
                win_full[d] = win_shape[j];
            }
            // A window wider than its axis never fits (the library drops it whatever the index).
            if win_full.iter().zip(shape).any(|(w, n)| w > n) {
                return Ok(result(b, x.dtype, base, numel(shape)));
            }
            let ity = ia.dtype;
            for g in 0..numel(bshape) {
                let gi = unravel(bshape, g);
                let ubase: usize = gi.iter().zip(&upd_batch_axes).map(|(i, &d)| i * ust[d]).sum();
                // Per indexed axis (in `scatter_dims_to_operand_dims` order): its clamped start.
                let mut starts = Vec::with_capacity(nk);
                let mut ok: Option<Value> = None;
                for (k, &d) in scatter_dims_to_operand_dims.iter().enumerate() {
                    let v = *ins[1].get(g * nk + k).ok_or_else(|| bad("index out of range"))?;
                    let s = widen(b, ity, v);
                    let hi = (shape[d] - win_full[d]) as i64;
                    if *mode == IndexMode::FillOrDrop {
                        // The store address uses the clamped start, and an out-of-range window writes
                        // back the values it read (no change).
                        ok = Some(and_in_range(b, ok, s, hi));
                    }
                    starts.push(clamp(b, s, 0, hi));
                }
                let st: Vec<usize> = scatter_dims_to_operand_dims.iter().map(|&d| xst[d]).collect();
                let at = window_base(b, base, &starts, &st, es);
                for w in 0..numel(&win_shape) {
                    let wi = unravel(&win_shape, w);
                    let xo: usize = wi.iter().zip(&op_win_axes).map(|(i, &d)| i * xst[d]).sum();
                    let uo = ubase + wi.iter().zip(update_window_dims).map(|(i, &d)| i * ust[d]).sum::<usize>();
                    let upd = *ins[2].get(uo).ok_or_else(|| bad("update out of range"))?;
                    let off = (xo * es) as i32;
                    let new = match op {
                        ScatterOp::Set if ok.is_none() => upd,
                        _ => {
                            let old = b.ins().load(cl_type(x.dtype), trusted(), at, off);
                            let new = combine(b, *op, x.dtype, old, upd);
                            match ok {
                                Some(c) => b.ins().select(c, new, old),
                                None => new,
                            }
                        }
                    };
                    b.ins().store(trusted(), new, at, off);
                }
            }
            Ok(result(b, x.dtype, base, numel(shape)))
        }
        LibOp::DotGeneral { lhs_contracting: lc, rhs_contracting: rc, lhs_batch: lb, rhs_batch: rb, .. } => {
            let (la, ra, oa) = (aval(l.inputs[0])?, aval(l.inputs[1])?, aval(l.outputs[0])?);
            let (ls, rs) = (&la.shape, &ra.shape);
            let (lst, rst) = (strides(ls), strides(rs));
            let (lf, rf) = (free(ls.len(), lc, lb), free(rs.len(), rc, rb));
            let dims = |v: &[usize], s: &[usize]| v.iter().map(|&d| s[d]).collect::<Vec<usize>>();
            let (bshape, mshape, nshape, kshape) = (dims(lb, ls), dims(&lf, ls), dims(&rf, rs), dims(lc, ls));
            let (nb, m, n, k) = (numel(&bshape), numel(&mshape), numel(&nshape), numel(&kshape));
            // Flat element of an operand from its (batch, free, contracting) multi-indices.
            let flat = |st: &[usize], groups: &[(&[usize], &Vec<usize>)]| -> usize {
                groups.iter().map(|(ds, ix)| ds.iter().zip(ix.iter()).map(|(&d, &i)| i * st[d]).sum::<usize>()).sum()
            };
            let mut out = Vec::with_capacity(oa.numel().unwrap_or(0));
            for bi in 0..nb {
                let bix = unravel(&bshape, bi);
                for i in 0..m {
                    let iix = unravel(&mshape, i);
                    for j in 0..n {
                        let jix = unravel(&nshape, j);
                        let mut acc = super::clif::fconst(b, oa.dtype, 0.0);
                        for li in 0..k {
                            let lix = unravel(&kshape, li);
                            let a = flat(&lst, &[(lb, &bix), (&lf, &iix), (lc, &lix)]);
                            let c = flat(&rst, &[(rb, &bix), (rc, &lix), (&rf, &jix)]);
                            let x = *ins[0].get(a).ok_or_else(|| bad("lhs out of range"))?;
                            let y = *ins[1].get(c).ok_or_else(|| bad("rhs out of range"))?;
                            acc = b.ins().fma(x, y, acc);
                        }
                        out.push(acc);
                    }
                }
            }
            Ok(vec![out])
        }
        _ => Err(Error::Unsupported(format!("fused loop over library step {}", l.op.name()))),
    }
}
