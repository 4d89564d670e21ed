//! Groups elementwise chains and their trailing reductions into loop kernels; produces the `Plan`.
//!
//! How values are grouped:
//! - Elementwise primitives (unary, binary, compare, select_n, clamp, convert, bitcast, integer_pow, iota)
//!   and the index maps broadcast_in_dim/transpose (and copy) are *fusible*: their values can live inside a
//!   kernel body without a buffer. A fusible value is evaluated at an index map φ (for each of its axes,
//!   the kernel-domain axis it follows, or none for a broadcast size-1 axis), so a broadcast or transpose of
//!   an unmaterialized expression is re-expressed at the bigger domain by remapping its loads and iotas.
//! - One-element gathers (`point_gather`: `take`, `x[i]`, `x[:, i]`, searchsorted's probes, and with several
//!   start components `x[i, j]`, `take_along_axis` on N-d arrays) are fusible too: a `KOp::Gather` reads the
//!   (materialized) operand at the clamped index (several components: their clamped row-major offset) the
//!   kernel computes, so the index arithmetic, the read and its users are one loop, as XLA fuses them; a
//!   concatenate that only assembles their start vectors is read component by component (`Ctx::picks`).
//!   Other gathers are library calls.
//! - Reductions (reduce_* over non-empty axes, argmax/argmin) are outputs of the kernel that computes their
//!   operand over the operand's domain. Reductions over the same domain and axes that do not depend on one
//!   another share a kernel.
//! - reshape/squeeze/expand_dims are `Step::View`s of a materialized value.
//! - A fusible value is materialized (gets a slot, written by a `Store` output) when it is a program output,
//!   the operand of a view, or used by more than one kernel (except a broadcast that expands its operand:
//!   each kernel reads the operand through the broadcast's index map). When all its uses are in one kernel whose
//!   domain is its shape, it becomes an extra `Store` output of that kernel instead of a kernel of its own;
//!   an output nothing consumes joins the kernel computing a sibling from a shared operand (`sibling`).
//!
//! Decisions are made walking the equations backwards (each value's consumers are decided before it);
//! kernel bodies are then built per kernel with an explicit stack (no recursion over expression depth).
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use crate::error::{Error, Result};
use crate::ir::shape::row_major_strides;
use crate::ir::{Atom, Aval, DType, Prim, Program, Scalar, VarId};
use crate::plan::{step_io, KInstr, KOp, Kernel, KernelInput, KernelOutput, LibStep, OutputKind, Plan, Step};

/// Longest kernel name.
const MAX_NAME: usize = 40;
/// How many earlier reduction kernels a reduction tries to join.
const MERGE_CANDIDATES: usize = 4;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Fusible,
    Reduce,
    View,
    /// A library call (`Prim::Lib`): operands materialized, outputs are buffers.
    Library,
}

fn class(p: &Prim) -> Class {
    match p {
        Prim::Reduce { axes, .. } if !axes.is_empty() => Class::Reduce,
        Prim::Reduce { .. } => Class::Fusible, // over no axes: the identity
        Prim::ArgReduce { .. } => Class::Reduce,
        Prim::Reshape { .. } | Prim::Squeeze { .. } | Prim::ExpandDims { .. } => Class::View,
        Prim::Lib(_) => Class::Library,
        Prim::Control(_) => Class::Library, // operands materialized, results are buffers

        _ => Class::Fusible,
    }
}

#[derive(Clone, Debug)]
enum Root {
    /// Store the fusible value `var` at every domain point.
    Store(VarId),
    /// Reduce `operand` over the kernel's reduce axes into `var`.
    Reduce { var: VarId, operand: Atom, kind: OutputKind },
}

struct Group {
    domain: Vec<usize>,
    reduce_axes: Vec<usize>,
    roots: Vec<Root>,
}

/// How one axis of a value is indexed inside a kernel: `offset + scale * i` where `i` is the index along
/// domain axis `axis` (or just `offset` when the axis follows no domain axis: a broadcast size-1 axis).
/// Affine entries let slices (offset, stride) and reversals (negative scale) fuse as plain loads.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Ax {
    axis: Option<usize>,
    scale: isize,
    offset: isize,
}

impl Ax {
    fn follow(axis: usize) -> Ax {
        Ax { axis: Some(axis), scale: 1, offset: 0 }
    }
    const ZERO: Ax = Ax { axis: None, scale: 0, offset: 0 };
}

/// Index map of a value inside a kernel: one `Ax` per axis of the value.
type Map = Vec<Ax>;

struct Ctx<'a> {
    avals: HashMap<VarId, &'a Aval>,
    def: HashMap<VarId, usize>,
    eqns: &'a [crate::ir::Eqn],
    slot: HashMap<VarId, usize>,
    kern: HashMap<VarId, usize>,
    /// Values computed from literals alone at no cost (a broadcast constant, an iota), and broadcasts of a
    /// stored value that several kernels read: recomputed inside every kernel that uses them instead of
    /// being stored.
    everywhere: HashSet<VarId>,
    /// Equations that are one-element gathers fused into kernels (`point_gather`): fusible, not library calls.
    gathers: HashMap<usize, PointGather>,
    /// Concatenates along the last axis whose one use is the index of a fused gather (`x[i, j]`'s start
    /// vectors): fusible, each read picking the operand that holds its component (`Builder::pick`).
    picks: HashSet<usize>,
}

/// A gather whose every output element is one operand element at an index the kernel computes (`take`,
/// `x[i]`, `x[:, i]`, `take_along_axis`, searchsorted's probes, and with several start components `x[i, j]`
/// and `x[tuple_of_index_arrays]`): a `KOp::Gather` inside the kernel that computes its index, so the index
/// arithmetic, the read and what uses it are one loop. Several components are combined into one row-major
/// offset in the kernel (`Builder::gather`). Windows with a contiguous run (`x[i]` of rows) stay the library
/// step, whose row copies are faster than a load per element.
#[derive(Clone, Debug)]
struct PointGather {
    /// Per start component: the indexed operand axis and its largest start (the axis length minus the
    /// window's).
    axes: Vec<(usize, u64)>,
    fill: Option<Scalar>,
}

/// The `PointGather` of equation `e`, if it is one (see there).
fn point_gather(e: &crate::ir::Eqn, avals: &HashMap<VarId, &Aval>) -> Option<PointGather> {
    use crate::ir::{IndexMode, LibOp};
    let Prim::Lib(LibOp::Gather { start_index_map, slice_sizes, mode, fill_value, .. }) = &e.prim
    else {
        return None;
    };
    let (Some(Atom::Var(x)), Some(Atom::Var(i))) = (e.inputs.first(), e.inputs.get(1)) else { return None };
    let (x, i) = (avals.get(x)?, avals.get(i)?);
    let dt = x.dtype;
    let kind_ok = dt.is_int() || matches!(dt, DType::Bool | DType::F32 | DType::F64 | DType::F16);
    let nk = start_index_map.len();
    let r = x.shape.len();
    let distinct = start_index_map.iter().enumerate().all(|(k, a)| !start_index_map[..k].contains(a));
    if !kind_ok
        || !i.dtype.is_int()
        || nk == 0
        || !distinct
        || i.shape.last() != Some(&nk)
        || r == 0
        || x.numel()? == 0
        || slice_sizes.len() != r
        || slice_sizes.iter().any(|&z| z == 0)
        || slice_sizes[r - 1] != 1
        || start_index_map.iter().any(|&a| a >= r || slice_sizes[a] > x.shape[a])
    {
        return None;
    }
    let axes = start_index_map.iter().map(|&a| (a, (x.shape[a] - slice_sizes[a]) as u64)).collect();
    let fill = match mode {
        IndexMode::Clip => None,
        IndexMode::FillOrDrop => Some(gather_fill(*fill_value, dt)),
    };
    Some(PointGather { axes, fill })
}

/// The value out-of-range reads give under `mode="fill"`: `fill_value` converted as the library step does
/// (saturating `as` casts), else JAX's default, the rule of the library's `Elem::default_fill`: NaN, the
/// minimum of signed and the maximum of unsigned integers, true.
fn gather_fill(fill: Option<f64>, dt: DType) -> Scalar {
    if dt == DType::Bool {
        return Scalar::Bool(fill.is_none_or(|f| f != 0.0));
    }
    let Some((lo, hi)) = dt.int_range() else { return Scalar::Float(fill.unwrap_or(f64::NAN)) };
    Scalar::Int(match fill {
        // (`f as i64` saturates, so clamping it to the type's range is `f as` that type; NaN gives 0 both ways)
        Some(f) => (f as i64).clamp(lo, hi),
        None if dt.is_signed_int() => lo,
        None => hi,
    })
}

/// `class` of equation `i`, fused gathers counting as fusible.
fn class_of(ctx: &Ctx, i: usize) -> Class {
    if ctx.gathers.contains_key(&i) || ctx.picks.contains(&i) {
        Class::Fusible
    } else {
        class(&ctx.eqns[i].prim)
    }
}

fn internal(msg: impl Into<String>) -> Error {
    Error::Unsupported(format!("fusion (internal error): {}", msg.into()))
}

fn atom_aval(ctx: &Ctx, a: &Atom) -> Aval {
    match a {
        Atom::Var(v) => ctx.avals.get(v).map(|a| (*a).clone()).unwrap_or_else(|| Aval::scalar(DType::F32)),
        Atom::Lit(_, d) => Aval::scalar(*d),
    }
}

/// Builds one kernel's body.
struct Builder<'c, 'a> {
    ctx: &'c Ctx<'a>,
    kid: usize,
    domain: Vec<usize>,
    inputs: Vec<KernelInput>,
    input_ids: HashMap<(usize, Vec<isize>, isize), usize>,
    body: Vec<KInstr>,
    memo: HashMap<(VarId, Map), usize>,
    consts: HashMap<(u64, DType), usize>,
    names: Vec<&'static str>,
}

impl<'c, 'a> Builder<'c, 'a> {
    fn push(&mut self, op: KOp, dtype: DType) -> usize {
        self.body.push(KInstr { op, dtype });
        self.body.len() - 1
    }

    fn constant(&mut self, s: Scalar, d: DType) -> usize {
        let bits = match s {
            Scalar::Bool(b) => b as u64,
            Scalar::Int(i) => i as u64,
            Scalar::Float(f) => f.to_bits(),
        };
        if let Some(&i) = self.consts.get(&(bits, d)) {
            return i;
        }
        let i = self.push(KOp::Const { value: s }, d);
        self.consts.insert((bits, d), i);
        i
    }

    fn load(&mut self, slot: usize, aval: &Aval, map: &Map) -> usize {
        let input = self.input(slot, aval, map);
        self.push(KOp::Load { input }, aval.dtype)
    }

    /// The kernel input reading `slot` (of `aval`) at `map`.
    fn input(&mut self, slot: usize, aval: &Aval, map: &Map) -> usize {
        let rm = row_major_strides(&aval.shape);
        let mut strides = vec![0isize; self.domain.len()];
        let mut offset = 0isize;
        for (j, m) in map.iter().enumerate() {
            if aval.shape[j] == 1 {
                continue;
            }
            offset += rm[j] as isize * m.offset;
            if let Some(d) = m.axis {
                strides[d] += rm[j] as isize * m.scale;
            }
        }
        let key = (slot, strides, offset);
        let input = match self.input_ids.get(&key) {
            Some(&i) => i,
            None => {
                let i = self.inputs.len();
                self.inputs.push(KernelInput { slot, dtype: aval.dtype, strides: key.1.clone(), offset });
                self.input_ids.insert(key, i);
                i
            }
        };
        input
    }

    /// Is `v` read from a buffer here (rather than computed in this kernel)?
    fn is_leaf(&self, v: VarId) -> bool {
        match self.ctx.def.get(&v) {
            None => true, // program input
            Some(&i) => {
                class_of(self.ctx, i) != Class::Fusible
                    || (self.ctx.kern.get(&v) != Some(&self.kid) && !self.ctx.everywhere.contains(&v))
            }
        }
    }

    /// The index maps of an equation's operands when its output is evaluated at `map`.
    fn operand_maps(&self, eqn: usize, map: &Map) -> Vec<Map> {
        let e = &self.ctx.eqns[eqn];
        match &e.prim {
            Prim::BroadcastInDim { broadcast_dimensions, .. } => {
                let a = atom_aval(self.ctx, &e.inputs[0]);
                let m = broadcast_dimensions
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| if a.shape[i] == 1 { Ax::ZERO } else { map[t] })
                    .collect();
                vec![m]
            }
            Prim::Transpose { permutation } => {
                let mut m = vec![Ax::ZERO; permutation.len()];
                for (i, &p) in permutation.iter().enumerate() {
                    m[p] = map[i];
                }
                vec![m]
            }
            Prim::Slice { start_indices, strides, .. } => {
                let m = map
                    .iter()
                    .enumerate()
                    .map(|(j, ax)| {
                        let st = strides[j] as isize;
                        Ax { axis: ax.axis, scale: ax.scale * st, offset: start_indices[j] as isize + st * ax.offset }
                    })
                    .collect();
                vec![m]
            }
            Prim::Lib(crate::ir::LibOp::Gather { offset_dims, .. }) if self.ctx.gathers.contains_key(&eqn) => {
                // The operand is read by the gather itself (`Builder::gather`); the index vector of the
                // output point's batch position is `indices[batch..., 0]`.
                let batch = (0..map.len()).filter(|d| !offset_dims.contains(d)).map(|d| map[d]);
                vec![vec![], batch.chain([Ax::ZERO]).collect()]
            }
            Prim::Rev { dimensions } => {
                let a = atom_aval(self.ctx, &e.inputs[0]);
                let m = map
                    .iter()
                    .enumerate()
                    .map(|(j, ax)| {
                        if dimensions.contains(&j) {
                            Ax { axis: ax.axis, scale: -ax.scale, offset: a.shape[j] as isize - 1 - ax.offset }
                        } else {
                            *ax
                        }
                    })
                    .collect();
                vec![m]
            }
            _ => e
                .inputs
                .iter()
                .map(|a| {
                    let r = atom_aval(self.ctx, a).shape.len();
                    if r == map.len() {
                        map.clone()
                    } else {
                        vec![Ax::ZERO; r] // a scalar operand (select_n predicate, clamp bounds)
                    }
                })
                .collect(),
        }
    }

    /// The maps at which fused gather `eqn`'s index operand is read for output map `map`: component `k` of
    /// the index vector of the output point's batch position, `indices[batch..., k]`.
    fn index_maps(&self, eqn: usize, g: &PointGather, map: &Map) -> Vec<Map> {
        let Prim::Lib(crate::ir::LibOp::Gather { offset_dims, .. }) = &self.ctx.eqns[eqn].prim else { return vec![] };
        let batch: Vec<Ax> = (0..map.len()).filter(|d| !offset_dims.contains(d)).map(|d| map[d]).collect();
        (0..g.axes.len())
            .map(|k| batch.iter().copied().chain([Ax { axis: None, scale: 0, offset: k as isize }]).collect())
            .collect()
    }

    /// The operand of picked concatenate `eqn` (`Ctx::picks`) holding the element at `map` (its last axis
    /// at a fixed position), and the map to read it at.
    fn pick(&self, eqn: usize, map: &Map) -> Result<(usize, Map)> {
        let e = &self.ctx.eqns[eqn];
        let last = map.len().checked_sub(1).ok_or_else(|| internal("picked concatenate of a scalar"))?;
        let Ax { axis: None, offset, .. } = map[last] else {
            return Err(internal("picked concatenate read along its concatenated axis"));
        };
        let mut start = 0isize;
        for (j, a) in e.inputs.iter().enumerate() {
            let len = atom_aval(self.ctx, a).shape.get(last).copied().unwrap_or(0) as isize;
            if (start..start + len).contains(&offset) {
                let mut m = map.clone();
                m[last] = Ax { axis: None, scale: 0, offset: offset - start };
                return Ok((j, m));
            }
            start += len;
        }
        Err(internal("picked concatenate read out of range"))
    }

    /// Emits the fused gather of equation `ei` at output map `map`, its index components already emitted
    /// at `imaps`. One component is the gather's index as it is; several are clamped to their ranges and
    /// combined into the row-major offset (in int32 when every offset fits, else int64), which the gather
    /// reads with stride 1; under `fill` an offset of -1 stands for a component out of range.
    fn gather(&mut self, ei: usize, g: &PointGather, map: &Map, imaps: &[Map]) -> Result<usize> {
        let ctx = self.ctx;
        let e = &ctx.eqns[ei];
        let (Prim::Lib(crate::ir::LibOp::Gather { offset_dims, collapsed_slice_dims, .. }), [Atom::Var(x), Atom::Var(iv)]) =
            (&e.prim, e.inputs.as_slice())
        else {
            return Err(internal("fused gather is not a gather of two variables"));
        };
        let mut comps = Vec::with_capacity(imaps.len());
        for m in imaps {
            comps.push(*self.memo.get(&(*iv, m.clone())).ok_or_else(|| internal("gather index not emitted"))?);
        }
        let slot = *ctx.slot.get(x).ok_or_else(|| internal(format!("gather operand {x} has no slot")))?;
        let aval = *ctx.avals.get(x).ok_or_else(|| internal(format!("gather operand {x} has no aval")))?;
        // The operand at the window position of the output point (collapsed axes at 0); the gather adds the
        // clamped start along `g.axis`.
        let mut omap = vec![Ax::ZERO; aval.shape.len()];
        let win = (0..aval.shape.len()).filter(|d| !collapsed_slice_dims.contains(d));
        for (d, &od) in win.zip(offset_dims) {
            omap[d] = *map.get(od).ok_or_else(|| internal("gather offset dim out of range"))?;
        }
        let input = self.input(slot, aval, &omap);
        let rm = row_major_strides(&aval.shape);
        let (index, stride, hi) = match (comps.as_slice(), g.axes.as_slice()) {
            (&[index], &[(axis, hi)]) => (index, rm[axis] as isize, hi),
            _ => self.offset(g, &comps, &rm, atom_aval(ctx, &e.inputs[1]).dtype, aval.numel().unwrap_or(usize::MAX))?,
        };
        let fill = g.fill.map(|f| self.constant(f, aval.dtype));
        Ok(self.push(KOp::Gather { input, index, stride, hi, fill }, aval.dtype))
    }

    /// The row-major offset of several start components `comps` (of dtype `idt`), each clamped to its range
    /// (`g.axes`), as a stride-1 gather index with its largest value; -1 under `fill` when a component is
    /// out of range.
    fn offset(&mut self, g: &PointGather, comps: &[usize], rm: &[usize], idt: DType, numel: usize) -> Result<(usize, isize, u64)> {
        use crate::ir::{BinaryOp, CompareOp};
        let wide = matches!(idt, DType::I64 | DType::U32) || numel > i32::MAX as usize;
        let w = if wide { DType::I64 } else { DType::I32 };
        let mut off: Option<usize> = None;
        let mut ok: Option<usize> = None;
        let mut top = 0u64;
        for (&c, &(axis, hi)) in comps.iter().zip(&g.axes) {
            let c = if idt == w { c } else { self.push(KOp::Convert { a: c }, w) };
            let (lo, h) = (self.constant(Scalar::Int(0), w), self.constant(Scalar::Int(hi as i64), w));
            let cl = self.push(KOp::Clamp { lo, x: c, hi: h }, w);
            if g.fill.is_some() {
                let inside = self.push(KOp::Compare { op: CompareOp::Eq, a: cl, b: c }, DType::Bool);
                ok = Some(match ok {
                    None => inside,
                    Some(o) => self.push(KOp::Binary { op: BinaryOp::And, a: o, b: inside }, DType::Bool),
                });
            }
            let st = rm[axis];
            let term = if st == 1 {
                cl
            } else {
                let k = self.constant(Scalar::Int(st as i64), w);
                self.push(KOp::Binary { op: BinaryOp::Mul, a: cl, b: k }, w)
            };
            off = Some(match off {
                None => term,
                Some(o) => self.push(KOp::Binary { op: BinaryOp::Add, a: o, b: term }, w),
            });
            top = top.checked_add(hi.checked_mul(st as u64).ok_or_else(|| internal("gather offset overflows"))?)
                .ok_or_else(|| internal("gather offset overflows"))?;
        }
        let mut off = off.ok_or_else(|| internal("gather without start components"))?;
        if let Some(ok) = ok {
            let out = self.constant(Scalar::Int(-1), w);
            off = self.push(KOp::Select { pred: ok, cases: vec![out, off] }, w);
        }
        Ok((off, 1, top))
    }

    /// Emits `atom` evaluated at `map`; returns its instruction index.
    fn emit(&mut self, root: &Atom, root_map: Map) -> Result<usize> {
        let (rv, rmap) = match root {
            Atom::Lit(s, d) => return Ok(self.constant(*s, *d)),
            Atom::Var(v) => (*v, root_map),
        };
        // Explicit post-order walk: (var, map, children pushed?)
        let mut stack: Vec<(VarId, Map, bool)> = vec![(rv, rmap.clone(), false)];
        while let Some((v, map, expanded)) = stack.pop() {
            if self.memo.contains_key(&(v, map.clone())) {
                continue;
            }
            let ctx = self.ctx;
            if self.is_leaf(v) {
                let slot = *ctx.slot.get(&v).ok_or_else(|| internal(format!("variable {v} has no slot")))?;
                let aval = *ctx.avals.get(&v).ok_or_else(|| internal(format!("variable {v} has no aval")))?;
                let i = self.load(slot, aval, &map);
                self.memo.insert((v, map), i);
                continue;
            }
            let ei = ctx.def[&v];
            let e = &ctx.eqns[ei];
            let maps = self.operand_maps(ei, &map);
            if !expanded {
                stack.push((v, map.clone(), true));
                // Reversed, so that operands are emitted left to right. A gather's operand is no value here,
                // its index is read per start component; a picked concatenate reads one operand.
                let operands: Vec<(&Atom, Map)> = if let Some(g) = ctx.gathers.get(&ei) {
                    self.index_maps(ei, g, &map).into_iter().map(|m| (&e.inputs[1], m)).collect()
                } else if ctx.picks.contains(&ei) {
                    let (j, m) = self.pick(ei, &map)?;
                    vec![(&e.inputs[j], m)]
                } else {
                    e.inputs.iter().zip(maps).collect()
                };
                for (a, m) in operands.into_iter().rev() {
                    if let Atom::Var(u) = a {
                        if !self.memo.contains_key(&(*u, m.clone())) {
                            stack.push((*u, m, false));
                        }
                    }
                }
                continue;
            }
            if let Some(g) = ctx.gathers.get(&ei) {
                let imaps = self.index_maps(ei, g, &map);
                let i = self.gather(ei, g, &map, &imaps)?;
                self.names.push("gather");
                self.memo.insert((v, map), i);
                continue;
            }
            if ctx.picks.contains(&ei) {
                let (j, m) = self.pick(ei, &map)?;
                let i = match &e.inputs[j] {
                    Atom::Lit(s, d) => self.constant(*s, *d),
                    Atom::Var(u) => *self.memo.get(&(*u, m)).ok_or_else(|| internal("operand not emitted"))?,
                };
                self.memo.insert((v, map), i);
                continue;
            }
            let mut ops = Vec::with_capacity(e.inputs.len());
            for (a, m) in e.inputs.iter().zip(maps) {
                ops.push(match a {
                    Atom::Lit(s, d) => self.constant(*s, *d),
                    Atom::Var(u) => *self.memo.get(&(*u, m)).ok_or_else(|| internal("operand not emitted"))?,
                });
            }
            let out = e.outputs[0].1.dtype;
            let i = match &e.prim {
                Prim::Unary(op) => self.push(KOp::Unary { op: *op, a: ops[0] }, out),
                Prim::Binary(op) => self.push(KOp::Binary { op: *op, a: ops[0], b: ops[1] }, out),
                Prim::Compare(op) => self.push(KOp::Compare { op: *op, a: ops[0], b: ops[1] }, out),
                Prim::IntegerPow { y } => self.push(KOp::IntegerPow { a: ops[0], y: *y }, out),
                Prim::SelectN if ops.len() == 2 => ops[1], // a single case is always chosen
                Prim::SelectN => self.push(KOp::Select { pred: ops[0], cases: ops[1..].to_vec() }, out),
                Prim::Clamp => self.push(KOp::Clamp { lo: ops[0], x: ops[1], hi: ops[2] }, out),
                Prim::Fma => self.push(KOp::Fma { a: ops[0], b: ops[1], c: ops[2] }, out),
                Prim::ConvertElementType { .. } => self.push(KOp::Convert { a: ops[0] }, out),
                Prim::BitcastConvertType { .. } => self.push(KOp::Bitcast { a: ops[0] }, out),
                Prim::Iota { dimension, .. } => {
                    let ax = map.get(*dimension).copied().unwrap_or(Ax::ZERO);
                    let int = |b: &mut Self, v: isize| {
                        b.constant(crate::opt::const_fold::convert(Scalar::Int(v as i64), out), out)
                    };
                    match ax.axis {
                        Some(axis) if ax.scale != 0 => {
                            let mut i = self.push(KOp::Iota { axis }, out);
                            if ax.scale != 1 {
                                let c = int(self, ax.scale);
                                i = self.push(KOp::Binary { op: crate::ir::BinaryOp::Mul, a: i, b: c }, out);
                            }
                            if ax.offset != 0 {
                                let c = int(self, ax.offset);
                                i = self.push(KOp::Binary { op: crate::ir::BinaryOp::Add, a: i, b: c }, out);
                            }
                            i
                        }
                        _ => int(self, ax.offset),
                    }
                }
                Prim::BroadcastInDim { .. }
                | Prim::Transpose { .. }
                | Prim::Slice { .. }
                | Prim::Rev { .. }
                | Prim::Copy
                | Prim::Reduce { .. } => ops[0],
                other => return Err(internal(format!("{} is not fusible", other.name()))),
            };
            if !matches!(e.prim, Prim::Copy | Prim::Reduce { .. }) {
                self.names.push(e.prim.name());
            }
            self.memo.insert((v, map), i);
        }
        self.memo.get(&(rv, rmap)).copied().ok_or_else(|| internal("root not emitted"))
    }
}

/// Per-point cost at or above which a value is materialized rather than recomputed under a broadcast
/// that multiplies its element count.
const EXPENSIVE: u32 = 10;

/// Rough per-point cost of a fusible primitive.
fn op_cost(p: &Prim) -> u32 {
    use crate::ir::{BinaryOp as Bo, UnaryOp as U};
    match p {
        Prim::Unary(u) => match u {
            U::Neg | U::Abs | U::Sign | U::Floor | U::Ceil | U::Round | U::RoundEven | U::Not | U::IsFinite
            | U::Square | U::PopulationCount => 1,
            U::Sqrt | U::Rsqrt => 3,
            _ => EXPENSIVE,
        },
        Prim::Binary(b) => match b {
            Bo::Div | Bo::Rem => 3,
            Bo::Pow | Bo::PowLibm | Bo::Atan2 | Bo::Igamma | Bo::Igammac | Bo::IgammaGradA | Bo::RandomGammaGrad | Bo::Polygamma
            | Bo::Zeta => EXPENSIVE,
            _ => 1,
        },
        Prim::IntegerPow { y } => 1 + (y.unsigned_abs().max(1)).ilog2(),
        Prim::BroadcastInDim { .. }
        | Prim::Transpose { .. }
        | Prim::Slice { .. }
        | Prim::Rev { .. }
        | Prim::Copy
        | Prim::Reduce { .. } => 0,
        Prim::ConvertElementType { .. } | Prim::BitcastConvertType { .. } | Prim::Iota { .. } => 0,
        _ => 1,
    }
}

/// Is `e` a broadcast_in_dim that makes its operand at least twice as big?
fn expands(ctx: &Ctx, e: &crate::ir::Eqn) -> bool {
    match &e.prim {
        Prim::BroadcastInDim { .. } => {
            let from = atom_aval(ctx, &e.inputs[0]).numel().unwrap_or(0);
            let to = e.outputs[0].1.numel().unwrap_or(0);
            to / 2 >= from.max(1)
        }
        _ => false,
    }
}

fn kernel_name(names: &[&str]) -> String {
    let mut seen = HashSet::new();
    let mut s = String::from("fused");
    for n in names {
        if seen.insert(*n) {
            s.push('_');
            s.push_str(n);
        }
    }
    if seen.is_empty() {
        s.push_str("_copy");
    }
    if s.len() > MAX_NAME {
        s.truncate(MAX_NAME);
        while s.ends_with('_') {
            s.pop();
        }
    }
    s
}

/// Does any of `from` (transitively) depend on `target`? Walks definitions backwards, never below
/// `target`'s own equation.
fn depends_on(ctx: &Ctx, from: &[VarId], target: VarId) -> bool {
    let floor = ctx.def.get(&target).copied().unwrap_or(0);
    let mut seen: HashSet<VarId> = HashSet::new();
    let mut stack: Vec<VarId> = from.to_vec();
    while let Some(v) = stack.pop() {
        if v == target {
            return true;
        }
        if !seen.insert(v) {
            continue;
        }
        if let Some(&i) = ctx.def.get(&v) {
            if i <= floor {
                continue;
            }
            for a in &ctx.eqns[i].inputs {
                if let Atom::Var(u) = a {
                    stack.push(*u);
                }
            }
        }
    }
    false
}

/// A kernel that equation `i`'s value (of `shape`, consumed by no kernel) can join as an extra output: an
/// elementwise one already computing a consumer of an operand of `i`, over `shape`, on values of the same
/// width (a kernel mixing widths loses its vector loop), with no dependence between its roots and the value
/// either way.
fn sibling(
    ctx: &Ctx, groups: &[Group], consumers: &HashMap<VarId, Vec<usize>>, i: usize, shape: &[usize],
) -> Option<usize> {
    let e = &ctx.eqns[i];
    let v = e.outputs[0].0;
    let width = |d: DType| (d != DType::Bool).then(|| d.size());
    let w = width(e.outputs[0].1.dtype);
    for a in &e.inputs {
        let Atom::Var(u) = a else { continue };
        for &c in consumers.get(u).map(|c| c.as_slice()).unwrap_or(&[]) {
            let Some(&(cv, _)) = ctx.eqns[c].outputs.first() else { continue };
            let Some(&k) = ctx.kern.get(&cv).filter(|_| c != i) else { continue };
            let g = &groups[k];
            let roots = root_vars(g);
            let same_width = roots.iter().all(|r| {
                let rw = ctx.avals.get(r).and_then(|a| width(a.dtype));
                rw.is_none() || w.is_none() || rw == w
            });
            // (Only elementwise kernels: a store beside a reduction would cost it the split-reduction path.)
            if g.domain == shape
                && g.reduce_axes.is_empty()
                && same_width
                && !depends_on(ctx, &roots, v)
                && roots.iter().all(|&r| !depends_on(ctx, &[v], r))
            {
                return Some(k);
            }
        }
    }
    None
}

fn root_vars(g: &Group) -> Vec<VarId> {
    g.roots
        .iter()
        .map(|r| match r {
            Root::Store(v) => *v,
            Root::Reduce { var, .. } => *var,
        })
        .collect()
}

/// Fuses a verified program into a plan. The program is verified again first, so malformed input is an
/// error, never a panic.
///
/// Sharing a kernel between values that do not depend on one another (merged reductions, a value stored by
/// one of its consumer kernels) is decided per value, and two such choices can together make kernels wait
/// on each other (kernel A holds `max(x)` and `exp(t - max(t))`, kernel B holds `max(t)` and
/// `sum(exp(x - max(x)))`). When the schedule finds such a circle the program is fused again without
/// sharing: each kernel then has one root, so kernels depend on each other as their roots' values do.
pub fn lower_to_plan(p: &Program) -> Result<Plan> {
    crate::ir::verify::verify(p)?;
    match lower(p, true)? {
        Some(plan) => Ok(plan),
        None => lower(p, false)?.ok_or_else(|| internal("cyclic dependency between kernels")),
    }
}

/// `lower_to_plan` with kernel sharing on or off; `None` when the kernels it made depend on each other.
fn lower(p: &Program, share: bool) -> Result<Option<Plan>> {
    let eqns = &p.eqns[..];
    let mut ctx = Ctx {
        avals: HashMap::new(),
        def: HashMap::new(),
        eqns,
        slot: HashMap::new(),
        kern: HashMap::new(),
        everywhere: HashSet::new(),
        gathers: HashMap::new(),
        picks: HashSet::new(),
    };
    for (v, a) in &p.invars {
        ctx.avals.insert(*v, a);
    }
    for (i, e) in eqns.iter().enumerate() {
        for (v, a) in &e.outputs {
            ctx.avals.insert(*v, a);
            ctx.def.insert(*v, i);
        }
    }
    for (i, e) in eqns.iter().enumerate() {
        if let Some(g) = point_gather(e, &ctx.avals) {
            ctx.gathers.insert(i, g);
        }
    }

    // Liveness and consumers.
    let outputs: HashSet<VarId> =
        p.outvars.iter().filter_map(|a| if let Atom::Var(v) = a { Some(*v) } else { None }).collect();
    let mut live_vars = outputs.clone();
    let mut live = vec![false; eqns.len()];
    let mut consumers: HashMap<VarId, Vec<usize>> = HashMap::new();
    for (i, e) in eqns.iter().enumerate().rev() {
        if e.prim.is_effectful() || e.outputs.iter().any(|(v, _)| live_vars.contains(v)) {
            live[i] = true;
            for a in &e.inputs {
                if let Atom::Var(u) = a {
                    live_vars.insert(*u);
                    let c = consumers.entry(*u).or_default();
                    if c.last() != Some(&i) {
                        c.push(i);
                    }
                }
            }
        }
    }

    // Concatenates that only assemble one fused gather's start vectors are read component by component.
    // (One consumer: start vectors shared by several gathers would be stored whole by a kernel of their own,
    // which reads along the concatenated axis; those stay the library step.)
    for (i, e) in eqns.iter().enumerate() {
        let (Prim::Lib(crate::ir::LibOp::Concatenate { dimension }), Some(&(v, ref a))) = (&e.prim, e.outputs.first()) else {
            continue;
        };
        let uses = consumers.get(&v).map(|c| c.as_slice()).unwrap_or(&[]);
        let only_index = |&c: &usize| {
            ctx.gathers.contains_key(&c)
                && eqns[c].inputs.get(1) == Some(&Atom::Var(v))
                && eqns[c].inputs.first() != Some(&Atom::Var(v))
        };
        if live[i]
            && e.outputs.len() == 1
            && *dimension + 1 == a.shape.len()
            && !outputs.contains(&v)
            && uses.len() == 1
            && uses.iter().all(only_index)
        {
            ctx.picks.insert(i);
        }
    }

    // Per-point cost of each fusible value's expression (as if everything below it were inlined), to avoid
    // recomputing expensive expressions at every point of a bigger domain.
    let mut cost: HashMap<VarId, u32> = HashMap::new();
    for (i, e) in eqns.iter().enumerate() {
        if class_of(&ctx, i) == Class::Fusible {
            let below: u32 = e
                .inputs
                .iter()
                .map(|a| if let Atom::Var(u) = a { cost.get(u).copied().unwrap_or(0) } else { 0 })
                .fold(0u32, |a, b| a.saturating_add(b));
            cost.insert(e.outputs[0].0, op_cost(&e.prim).saturating_add(below).min(EXPENSIVE * 100));
        }
    }

    // Backward assignment of values to kernels.
    let mut groups: Vec<Group> = Vec::new();
    let mut materialized: HashSet<VarId> = HashSet::new();
    let mut reduce_groups: HashMap<(Vec<usize>, Vec<usize>), Vec<usize>> = HashMap::new();
    // broadcasts read through their index map in each of these kernels (`everywhere`, not stored)
    let mut spread: HashMap<VarId, Vec<usize>> = HashMap::new();
    for i in (0..eqns.len()).rev() {
        if !live[i] {
            continue;
        }
        let e = &eqns[i];
        let Some(&(v, _)) = e.outputs.first() else {
            continue; // an effect without results (a host callback, control flow around one): nothing to assign
        };
        match class_of(&ctx, i) {
            Class::View => {
                materialized.insert(v);
            }
            Class::Library => {
                for (u, _) in &e.outputs {
                    materialized.insert(*u);
                }
            }
            Class::Reduce => {
                materialized.insert(v);
                let (mut axes, kind) = match &e.prim {
                    Prim::Reduce { op, axes } => (axes.clone(), OutputKind::Reduce(*op)),
                    Prim::ArgReduce { is_max, axis, .. } => (vec![*axis], OutputKind::ArgReduce { is_max: *is_max }),
                    _ => return Err(internal("not a reduction")),
                };
                axes.sort_unstable();
                let domain = atom_aval(&ctx, &e.inputs[0]).shape;
                let root = Root::Reduce { var: v, operand: e.inputs[0].clone(), kind };
                let key = (domain.clone(), axes.clone());
                let mut joined = None;
                if let Some(cands) = reduce_groups.get(&key).filter(|_| share) {
                    for &k in cands.iter().rev().take(MERGE_CANDIDATES) {
                        if !depends_on(&ctx, &root_vars(&groups[k]), v) {
                            joined = Some(k);
                            break;
                        }
                    }
                }
                let k = match joined {
                    Some(k) => k,
                    None => {
                        groups.push(Group { domain, reduce_axes: axes, roots: vec![] });
                        reduce_groups.entry(key).or_default().push(groups.len() - 1);
                        groups.len() - 1
                    }
                };
                groups[k].roots.push(root);
                ctx.kern.insert(v, k);
            }
            Class::Fusible => {
                let mut kernels: Vec<usize> = Vec::new();
                let mut viewed = false;
                let mut expensive_broadcast = false;
                for &c in consumers.get(&v).map(|c| c.as_slice()).unwrap_or(&[]) {
                    // (A fused gather reads its operand from a buffer, so it is materialized like a view's.)
                    let gathered = ctx.gathers.contains_key(&c) && eqns[c].inputs.first() == Some(&Atom::Var(v));
                    if gathered || matches!(class_of(&ctx, c), Class::View | Class::Library) {
                        viewed = true;
                        if !gathered || eqns[c].inputs.get(1) != Some(&Atom::Var(v)) {
                            continue;
                        }
                    }
                    let cv = eqns[c].outputs[0].0;
                    match class_of(&ctx, c) {
                        _ if expands(&ctx, &eqns[c]) && cost.get(&v).copied().unwrap_or(0) >= EXPENSIVE => {
                            expensive_broadcast = true;
                            if let Some(&k) = ctx.kern.get(&cv) {
                                if !kernels.contains(&k) {
                                    kernels.push(k);
                                }
                            }
                        }
                        _ => match ctx.kern.get(&cv) {
                            Some(&k) if !kernels.contains(&k) => kernels.push(k),
                            Some(_) => {}
                            None => {
                                let ks = spread.get(&cv).ok_or_else(|| internal(format!("consumer of {v} not assigned")))?;
                                for &k in ks {
                                    if !kernels.contains(&k) {
                                        kernels.push(k);
                                    }
                                }
                            }
                        },
                    }
                }
                let forced = viewed || expensive_broadcast || outputs.contains(&v);
                if !forced && kernels.len() == 1 {
                    ctx.kern.insert(v, kernels[0]);
                    continue;
                }
                if !forced && op_cost(&e.prim) == 0 && e.inputs.iter().all(|a| matches!(a, Atom::Lit(..))) {
                    ctx.everywhere.insert(v);
                    continue;
                }
                // A broadcast that several kernels read (an outer product's row or column, merged by CSE, in
                // a backward body's weight updates): each reads the operand through the broadcast's index
                // map, as XLA duplicates broadcasts into their consumers, instead of a stored full-size copy.
                if !forced && kernels.len() > 1 && expands(&ctx, e) && matches!(e.inputs[0], Atom::Var(_)) {
                    ctx.everywhere.insert(v);
                    spread.insert(v, kernels);
                    continue;
                }
                materialized.insert(v);
                let shape = &e.outputs[0].1.shape;
                // Stored by one of its consumer kernels when one has its shape as domain and does not itself
                // depend on another consumer (which reads the stored value, so must run after it).
                let host = if viewed || !share {
                    None
                } else {
                    kernels.iter().copied().find(|&k| {
                        if groups[k].domain != *shape {
                            return false;
                        }
                        let mine = root_vars(&groups[k]);
                        kernels.iter().all(|&k2| {
                            k2 == k || root_vars(&groups[k2]).iter().all(|&r| !depends_on(&ctx, &mine, r))
                        })
                    })
                };
                // An output nothing here consumes joins a kernel of its shape that computes a sibling from
                // one of its operands (a loop body's carries, `lo` and `hi` of searchsorted's halving), so
                // the operands they share are computed once and never stored: XLA's sibling fusion.
                let host = host.or_else(|| {
                    if viewed || !share || !kernels.is_empty() || expensive_broadcast {
                        return None;
                    }
                    sibling(&ctx, &groups, &consumers, i, shape)
                });
                let k = if let Some(k) = host {
                    k
                } else {
                    groups.push(Group { domain: shape.clone(), reduce_axes: vec![], roots: vec![] });
                    groups.len() - 1
                };
                groups[k].roots.push(Root::Store(v));
                ctx.kern.insert(v, k);
            }
        }
    }

    // Slots: inputs, then materialized values in program order.
    let mut slots: Vec<Aval> = p.invars.iter().map(|(_, a)| a.clone()).collect();
    for (k, (v, _)) in p.invars.iter().enumerate() {
        ctx.slot.insert(*v, k);
    }
    for e in eqns {
        for (v, a) in &e.outputs {
            if materialized.contains(v) {
                ctx.slot.insert(*v, slots.len());
                slots.push(a.clone());
            }
        }
    }

    // Steps, each with a program-order key for scheduling.
    let mut steps: Vec<(usize, Step)> = Vec::new();
    for (kid, g) in groups.iter().enumerate() {
        let mut b = Builder {
            ctx: &ctx,
            kid,
            domain: g.domain.clone(),
            inputs: vec![],
            input_ids: HashMap::new(),
            body: vec![],
            memo: HashMap::new(),
            consts: HashMap::new(),
            names: vec![],
        };
        let identity: Map = (0..g.domain.len()).map(Ax::follow).collect();
        let mut kouts = Vec::new();
        let mut order = usize::MAX;
        let mut reduce_names = Vec::new();
        // Roots were pushed in reverse program order; emit in program order.
        for r in g.roots.iter().rev() {
            let (var, value, kind) = match r {
                Root::Store(v) => (*v, b.emit(&Atom::Var(*v), identity.clone())?, OutputKind::Store),
                Root::Reduce { var, operand, kind } => {
                    let name = eqns[ctx.def[var]].prim.name();
                    reduce_names.push(name);
                    (*var, b.emit(operand, identity.clone())?, *kind)
                }
            };
            order = order.min(ctx.def[&var]);
            kouts.push(KernelOutput { slot: ctx.slot[&var], value, kind });
        }
        let mut names = std::mem::take(&mut b.names);
        names.extend(reduce_names);
        let kernel = Kernel {
            name: kernel_name(&names),
            domain: g.domain.clone(),
            reduce_axes: g.reduce_axes.clone(),
            inputs: b.inputs,
            body: b.body,
            outputs: kouts,
        };
        steps.push((order, Step::Kernel(kernel)));
    }
    // Views; a literal operand is first stored by a one-point kernel.
    /// The operand and output slots of a non-fused equation (library call or control flow); literal operands
    /// are first stored by one-point kernels.
    fn boundary_slots(
        ctx: &Ctx, slots: &mut Vec<Aval>, steps: &mut Vec<(usize, Step)>, i: usize, e: &crate::ir::Eqn, what: &str,
    ) -> Result<(Vec<usize>, Vec<usize>)> {
        let mut inputs = Vec::with_capacity(e.inputs.len());
        for a in &e.inputs {
            inputs.push(match a {
                Atom::Var(u) => *ctx.slot.get(u).ok_or_else(|| internal(format!("{what} operand {u} has no slot")))?,
                Atom::Lit(s, d) => {
                    let (slot, step) = const_kernel(slots, *s, *d);
                    steps.push((i, step));
                    slot
                }
            });
        }
        let outputs = e
            .outputs
            .iter()
            .map(|(v, _)| ctx.slot.get(v).copied().ok_or_else(|| internal(format!("{what} output {v} has no slot"))))
            .collect::<Result<Vec<_>>>()?;
        Ok((inputs, outputs))
    }
    fn const_kernel(slots: &mut Vec<Aval>, s: Scalar, d: DType) -> (usize, Step) {
        let slot = slots.len();
        slots.push(Aval::scalar(d));
        let k = Kernel {
            name: "const".into(),
            domain: vec![],
            reduce_axes: vec![],
            inputs: vec![],
            body: vec![KInstr { op: KOp::Const { value: s }, dtype: d }],
            outputs: vec![KernelOutput { slot, value: 0, kind: OutputKind::Store }],
        };
        (slot, Step::Kernel(k))
    }
    for (i, e) in eqns.iter().enumerate() {
        if !live[i] || class(&e.prim) != Class::View {
            continue;
        }
        let src = match &e.inputs[0] {
            Atom::Var(u) => *ctx.slot.get(u).ok_or_else(|| internal(format!("view source {u} has no slot")))?,
            Atom::Lit(s, d) => {
                let (slot, step) = const_kernel(&mut slots, *s, *d);
                steps.push((i, step));
                slot
            }
        };
        steps.push((i, Step::View { src, dst: ctx.slot[&e.outputs[0].0] }));
    }
    // Library calls; literal operands are first stored by one-point kernels.
    for (i, e) in eqns.iter().enumerate() {
        let Prim::Lib(op) = &e.prim else { continue };
        if !live[i] || ctx.gathers.contains_key(&i) || ctx.picks.contains(&i) {
            continue;
        }
        let (inputs, outputs) = boundary_slots(&ctx, &mut slots, &mut steps, i, e, "library")?;
        steps.push((i, Step::Library(LibStep { op: op.clone(), inputs, outputs, epilogue: false })));
    }
    // Control flow (cond/while/scan): sub-programs become sub-plans (`control_flow`).
    for (i, e) in eqns.iter().enumerate() {
        let Prim::Control(op) = &e.prim else { continue };
        if !live[i] {
            continue;
        }
        let (inputs, outputs) = boundary_slots(&ctx, &mut slots, &mut steps, i, e, "control")?;
        steps.push((i, Step::Control(Box::new(super::control_flow::lower_eqn(op, inputs, outputs)?))));
    }
    // Outputs.
    let mut plan_outputs = Vec::with_capacity(p.outvars.len());
    for a in &p.outvars {
        match a {
            Atom::Var(v) => plan_outputs.push(*ctx.slot.get(v).ok_or_else(|| internal(format!("output {v} has no slot")))?),
            Atom::Lit(s, d) => {
                let (slot, step) = const_kernel(&mut slots, *s, *d);
                steps.push((eqns.len(), step));
                plan_outputs.push(slot);
            }
        }
    }

    let Some(steps) = schedule(steps, p.invars.len(), slots.len())? else { return Ok(None) };
    Ok(Some(Plan { name: p.name.clone(), num_inputs: p.invars.len(), slots, steps, outputs: plan_outputs }))
}

/// Orders steps so that every slot is written before it is read (Kahn's algorithm, program order first);
/// `None` when the steps wait on each other in a circle.
fn schedule(steps: Vec<(usize, Step)>, num_inputs: usize, num_slots: usize) -> Result<Option<Vec<Step>>> {
    let mut producer: Vec<Option<usize>> = vec![None; num_slots];
    for (i, (_, s)) in steps.iter().enumerate() {
        for w in step_io(s).1 {
            if w < num_inputs || producer[w].is_some() {
                return Err(internal(format!("slot {w} written twice")));
            }
            producer[w] = Some(i);
        }
    }
    let n = steps.len();
    let mut indeg = vec![0usize; n];
    let mut users: Vec<Vec<usize>> = vec![vec![]; n];
    for (i, (_, s)) in steps.iter().enumerate() {
        let mut deps: Vec<usize> = step_io(s).0.into_iter().filter_map(|r| producer.get(r).copied().flatten()).collect();
        deps.sort_unstable();
        deps.dedup();
        for d in deps {
            if d == i {
                return Err(internal("a kernel reads its own output"));
            }
            indeg[i] += 1;
            users[d].push(i);
        }
    }
    let mut heap: BinaryHeap<Reverse<(usize, usize)>> =
        (0..n).filter(|&i| indeg[i] == 0).map(|i| Reverse((steps[i].0, i))).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((_, i))) = heap.pop() {
        order.push(i);
        for &u in &users[i] {
            indeg[u] -= 1;
            if indeg[u] == 0 {
                heap.push(Reverse((steps[u].0, u)));
            }
        }
    }
    if order.len() != n {
        return Ok(None);
    }
    let mut slots: Vec<Option<Step>> = steps.into_iter().map(|(_, s)| Some(s)).collect();
    Ok(Some(order.into_iter().filter_map(|i| slots[i].take()).collect()))
}

#[cfg(test)]
#[path = "fusion_tests.rs"]
mod tests;
