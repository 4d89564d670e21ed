//! Groups elementwise chains and their trailing reductions into loop kernels; produces the `Plan`.
//!
//! How values are grouped:
//! - Elementwise primitives (unary, binary, compare, select_n, clamp, convert, bitcast, integer_pow, iota)
//!   and the index maps broadcast_in_dim/transpose (and copy) are *fusible*: their values can live inside a
//!   kernel body without a buffer. A fusible value is evaluated at an index map φ (for each of its axes,
//!   the kernel-domain axis it follows, or none for a broadcast size-1 axis), so a broadcast or transpose of
//!   an unmaterialized expression is re-expressed at the bigger domain by remapping its loads and iotas.
//! - Reductions (reduce_* over non-empty axes, argmax/argmin) are outputs of the kernel that computes their
//!   operand over the operand's domain. Reductions over the same domain and axes that do not depend on one
//!   another share a kernel.
//! - reshape/squeeze/expand_dims are `Step::View`s of a materialized value.
//! - A fusible value is materialized (gets a slot, written by a `Store` output) when it is a program output,
//!   the operand of a view, or used by more than one kernel. When all its uses are in one kernel whose
//!   domain is its shape, it becomes an extra `Store` output of that kernel instead of a kernel of its own.
//!
//! Decisions are made walking the equations backwards (each value's consumers are decided before it);
//! kernel bodies are then built per kernel with an explicit stack (no recursion over expression depth).
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fmt::Write;

use super::kernel::{KInstr, KOp, Kernel, KernelInput, KernelOutput, OutputKind, Plan, Step};
use crate::error::{Error, Result};
use crate::ir::shape::row_major_strides;
use crate::ir::{Atom, Aval, DType, Prim, Program, ReduceOp, Scalar, VarId};

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
    /// Values computed from literals alone at no cost (a broadcast constant, an iota): recomputed inside
    /// every kernel that uses them instead of being stored.
    everywhere: HashSet<VarId>,
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
        self.push(KOp::Load { input }, aval.dtype)
    }

    /// Is `v` read from a buffer here (rather than computed in this kernel)?
    fn is_leaf(&self, v: VarId) -> bool {
        match self.ctx.def.get(&v) {
            None => true, // program input
            Some(&i) => {
                class(&self.ctx.eqns[i].prim) != Class::Fusible
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
                // Reversed, so that operands are emitted left to right.
                for (a, m) in e.inputs.iter().zip(maps).rev() {
                    if let Atom::Var(u) = a {
                        if !self.memo.contains_key(&(*u, m.clone())) {
                            stack.push((*u, m, false));
                        }
                    }
                }
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
            Bo::Pow | Bo::Atan2 => EXPENSIVE,
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
pub fn lower_to_plan(p: &Program) -> Result<Plan> {
    crate::ir::verify::verify(p)?;
    let eqns = &p.eqns[..];
    let mut ctx = Ctx {
        avals: HashMap::new(),
        def: HashMap::new(),
        eqns,
        slot: HashMap::new(),
        kern: HashMap::new(),
        everywhere: HashSet::new(),
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

    // Liveness and consumers.
    let outputs: HashSet<VarId> =
        p.outvars.iter().filter_map(|a| if let Atom::Var(v) = a { Some(*v) } else { None }).collect();
    let mut live_vars = outputs.clone();
    let mut live = vec![false; eqns.len()];
    let mut consumers: HashMap<VarId, Vec<usize>> = HashMap::new();
    for (i, e) in eqns.iter().enumerate().rev() {
        if e.outputs.iter().any(|(v, _)| live_vars.contains(v)) {
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

    // Per-point cost of each fusible value's expression (as if everything below it were inlined), to avoid
    // recomputing expensive expressions at every point of a bigger domain.
    let mut cost: HashMap<VarId, u32> = HashMap::new();
    for e in eqns {
        if class(&e.prim) == Class::Fusible {
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
    for i in (0..eqns.len()).rev() {
        if !live[i] {
            continue;
        }
        let e = &eqns[i];
        let v = e.outputs[0].0;
        match class(&e.prim) {
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
                if let Some(cands) = reduce_groups.get(&key) {
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
                    let cv = eqns[c].outputs[0].0;
                    match class(&eqns[c].prim) {
                        Class::View | Class::Library => viewed = true,
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
                            None => return Err(internal(format!("consumer of {v} not assigned"))),
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
                materialized.insert(v);
                let shape = &e.outputs[0].1.shape;
                // Stored by one of its consumer kernels when one has its shape as domain and does not itself
                // depend on another consumer (which reads the stored value, so must run after it).
                let host = if viewed {
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
        if !live[i] {
            continue;
        }
        let (inputs, outputs) = boundary_slots(&ctx, &mut slots, &mut steps, i, e, "library")?;
        steps.push((i, Step::Library(super::kernel::LibStep { op: op.clone(), inputs, outputs })));
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

    let steps = schedule(steps, p.invars.len(), slots.len())?;
    Ok(Plan { name: p.name.clone(), num_inputs: p.invars.len(), slots, steps, outputs: plan_outputs })
}

/// The slots a step reads and the slots it writes.
pub(crate) fn step_io(s: &Step) -> (Vec<usize>, Vec<usize>) {
    match s {
        Step::Kernel(k) => (k.inputs.iter().map(|i| i.slot).collect(), k.outputs.iter().map(|o| o.slot).collect()),
        Step::View { src, dst } => (vec![*src], vec![*dst]),
        Step::Library(l) => (l.inputs.clone(), l.outputs.clone()),
        Step::Control(c) => (c.inputs(), c.outputs().to_vec()),
    }
}

/// Orders steps so that every slot is written before it is read (Kahn's algorithm, program order first).
fn schedule(steps: Vec<(usize, Step)>, num_inputs: usize, num_slots: usize) -> Result<Vec<Step>> {
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
        return Err(internal("cyclic dependency between kernels"));
    }
    let mut slots: Vec<Option<Step>> = steps.into_iter().map(|(_, s)| Some(s)).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

fn reduce_name(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "reduce_sum",
        ReduceOp::Max => "reduce_max",
        ReduceOp::Min => "reduce_min",
        ReduceOp::Prod => "reduce_prod",
        ReduceOp::And => "reduce_and",
        ReduceOp::Or => "reduce_or",
    }
}

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
                    "  library ({}) <- {} ({})",
                    outs.join(", "),
                    crate::ir::print::prim_text(&Prim::Lib(l.op.clone())),
                    ins.join(", ")
                );
            }
            Step::Control(c) => {
                let _ = writeln!(o, "  {}", super::control_flow::step_text(c));
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
                    };
                    let _ = writeln!(o, "    v{j}:{} = {rhs}", ins.dtype.short_name());
                }
                for out in &k.outputs {
                    let how = match out.kind {
                        OutputKind::Store => "store".to_string(),
                        OutputKind::Reduce(op) => reduce_name(op).to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::shape::infer;
    use crate::ir::{BinaryOp, Eqn, UnaryOp};

    /// Builds programs with inferred output avals.
    struct B {
        p: Program,
        next: VarId,
        avals: HashMap<VarId, Aval>,
    }
    impl B {
        fn new() -> Self {
            B { p: Program { name: "t".into(), ..Default::default() }, next: 100, avals: HashMap::new() }
        }
        fn input(&mut self, shape: &[usize]) -> Atom {
            self.next += 1;
            let a = Aval::new(DType::F32, shape.to_vec());
            self.avals.insert(self.next, a.clone());
            self.p.invars.push((self.next, a));
            Atom::Var(self.next)
        }
        fn aval(&self, a: &Atom) -> (Aval, bool) {
            match a {
                Atom::Lit(_, d) => (Aval::scalar(*d), true),
                Atom::Var(v) => (self.avals[v].clone(), false),
            }
        }
        fn eq(&mut self, prim: Prim, inputs: Vec<Atom>) -> Atom {
            let ops: Vec<_> = inputs.iter().map(|a| self.aval(a)).collect();
            let out = infer(&prim, &ops).unwrap_or_else(|m| panic!("{}: {m}", prim.name()));
            self.next += 1;
            self.avals.insert(self.next, out[0].clone());
            self.p.eqns.push(Eqn { prim, inputs, outputs: vec![(self.next, out[0].clone())] });
            Atom::Var(self.next)
        }
        fn un(&mut self, op: UnaryOp, a: &Atom) -> Atom {
            self.eq(Prim::Unary(op), vec![a.clone()])
        }
        fn bin(&mut self, op: BinaryOp, a: &Atom, b: &Atom) -> Atom {
            self.eq(Prim::Binary(op), vec![a.clone(), b.clone()])
        }
        fn bcast(&mut self, a: &Atom, shape: &[usize], bd: &[usize]) -> Atom {
            self.eq(Prim::BroadcastInDim { shape: shape.to_vec(), broadcast_dimensions: bd.to_vec() }, vec![a.clone()])
        }
        fn sum(&mut self, a: &Atom, axes: &[usize]) -> Atom {
            self.eq(Prim::Reduce { op: ReduceOp::Sum, axes: axes.to_vec() }, vec![a.clone()])
        }
        fn done(mut self, outs: Vec<Atom>) -> Program {
            self.p.outvars = outs;
            crate::ir::verify::verify(&self.p).unwrap();
            self.p
        }
    }

    fn lit(f: f64) -> Atom {
        Atom::Lit(Scalar::Float(f), DType::F32)
    }

    fn kernels(plan: &Plan) -> Vec<&Kernel> {
        plan.steps.iter().filter_map(|s| if let Step::Kernel(k) = s { Some(k) } else { None }).collect()
    }

    fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
        let mut idx = vec![0; shape.len()];
        for d in (0..shape.len()).rev() {
            if shape[d] > 0 {
                idx[d] = i % shape[d];
                i /= shape[d];
            }
        }
        idx
    }
    fn ravel(idx: &[usize], shape: &[usize]) -> usize {
        idx.iter().zip(shape).fold(0, |acc, (i, s)| acc * s + i)
    }
    fn numel(s: &[usize]) -> usize {
        s.iter().product()
    }

    /// Structural checks of the kernel contract.
    fn check_plan(plan: &Plan) {
        let mut written = vec![false; plan.slots.len()];
        for w in written.iter_mut().take(plan.num_inputs) {
            *w = true;
        }
        for s in &plan.steps {
            match s {
                Step::View { src, dst } => {
                    assert!(written[*src], "view reads unwritten slot {src}");
                    assert!(!written[*dst]);
                    assert_eq!(plan.slots[*src].numel(), plan.slots[*dst].numel());
                    written[*dst] = true;
                }
                Step::Control(c) => {
                    assert!(c.inputs().iter().all(|&s| written[s]), "control step reads an unwritten slot");
                    for &o in c.outputs() {
                        assert!(!written[o]);
                        written[o] = true;
                    }
                }
                Step::Library(l) => {
                    assert!(l.inputs.iter().all(|&s| written[s]), "library call reads an unwritten slot");
                    for &o in &l.outputs {
                        assert!(!written[o]);
                        written[o] = true;
                    }
                }
                Step::Kernel(k) => {
                    assert!(k.name.len() <= MAX_NAME);
                    for inp in &k.inputs {
                        assert!(written[inp.slot], "{} reads unwritten slot {}", k.name, inp.slot);
                        assert_eq!(inp.strides.len(), k.domain.len());
                        assert_eq!(inp.dtype, plan.slots[inp.slot].dtype);
                    }
                    for (j, ins) in k.body.iter().enumerate() {
                        let ops: Vec<usize> = match &ins.op {
                            KOp::Unary { a, .. } | KOp::Convert { a } | KOp::Bitcast { a } | KOp::IntegerPow { a, .. } => vec![*a],
                            KOp::Binary { a, b, .. } | KOp::Compare { a, b, .. } => vec![*a, *b],
                            KOp::Select { pred, cases } => std::iter::once(*pred).chain(cases.iter().copied()).collect(),
                            KOp::Clamp { lo, x, hi } => vec![*lo, *x, *hi],
                            KOp::Load { input } => {
                                assert!(*input < k.inputs.len());
                                vec![]
                            }
                            KOp::Iota { axis } => {
                                assert!(*axis < k.domain.len());
                                vec![]
                            }
                            KOp::Const { .. } => vec![],
                        };
                        assert!(ops.iter().all(|&o| o < j), "{}: instruction {j} uses a later value", k.name);
                    }
                    for o in &k.outputs {
                        assert!(!written[o.slot], "slot {} written twice", o.slot);
                        assert!(o.value < k.body.len());
                        let shape = &plan.slots[o.slot].shape;
                        match o.kind {
                            OutputKind::Store => assert_eq!(shape, &k.domain),
                            _ => {
                                let rest: Vec<usize> = (0..k.domain.len())
                                    .filter(|a| !k.reduce_axes.contains(a)).map(|a| k.domain[a]).collect();
                                assert_eq!(shape, &rest);
                            }
                        }
                    }
                    for o in &k.outputs {
                        written[o.slot] = true;
                    }
                }
            }
        }
        for o in &plan.outputs {
            assert!(written[*o]);
        }
    }

    // ---- reference interpreters (f64 values; a subset of primitives) ----

    fn un(op: UnaryOp, x: f64) -> f64 {
        match op {
            UnaryOp::Sin => x.sin(),
            UnaryOp::Exp => x.exp(),
            UnaryOp::Neg => -x,
            UnaryOp::Square => x * x,
            o => panic!("{o:?}"),
        }
    }
    fn bin(op: BinaryOp, a: f64, b: f64) -> f64 {
        match op {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Max => a.max(b),
            BinaryOp::Min => a.min(b),
            o => panic!("{o:?}"),
        }
    }

    fn eval_program(p: &Program, args: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let mut env: HashMap<VarId, (Vec<usize>, Vec<f64>)> = HashMap::new();
        for ((v, a), x) in p.invars.iter().zip(args) {
            env.insert(*v, (a.shape.clone(), x.clone()));
        }
        let get = |env: &HashMap<VarId, (Vec<usize>, Vec<f64>)>, a: &Atom| match a {
            Atom::Var(v) => env[v].clone(),
            Atom::Lit(s, _) => (vec![], vec![const_fold_f(*s)]),
        };
        for e in &p.eqns {
            let ins: Vec<_> = e.inputs.iter().map(|a| get(&env, a)).collect();
            let oshape = e.outputs[0].1.shape.clone();
            let n = numel(&oshape);
            let at = |k: usize, idx: &[usize]| -> f64 {
                let (s, d) = &ins[k];
                if s.is_empty() { d[0] } else { d[ravel(idx, s)] }
            };
            let mut out = vec![0.0; n];
            match &e.prim {
                Prim::Reduce { op, axes } => {
                    let (s, d) = &ins[0];
                    let init = if *op == ReduceOp::Sum { 0.0 } else { f64::NEG_INFINITY };
                    out = vec![init; n];
                    for (i, x) in d.iter().enumerate() {
                        let idx = unravel(i, s);
                        let oi: Vec<usize> = (0..s.len()).filter(|a| !axes.contains(a)).map(|a| idx[a]).collect();
                        let o = ravel(&oi, &oshape);
                        out[o] = if *op == ReduceOp::Sum { out[o] + x } else { out[o].max(*x) };
                    }
                }
                Prim::ArgReduce { axis, .. } => {
                    let (s, d) = &ins[0];
                    let mut best = vec![f64::NEG_INFINITY; n];
                    for (i, x) in d.iter().enumerate() {
                        let idx = unravel(i, s);
                        let oi: Vec<usize> = (0..s.len()).filter(|a| a != axis).map(|a| idx[a]).collect();
                        let o = ravel(&oi, &oshape);
                        if *x > best[o] {
                            best[o] = *x;
                            out[o] = idx[*axis] as f64;
                        }
                    }
                }
                Prim::Reshape { .. } | Prim::Squeeze { .. } | Prim::ExpandDims { .. } | Prim::Copy => out = ins[0].1.clone(),
                _ => {
                    for (i, o) in out.iter_mut().enumerate() {
                        let idx = unravel(i, &oshape);
                        *o = match &e.prim {
                            Prim::Unary(op) => un(*op, at(0, &idx)),
                            Prim::Binary(op) => bin(*op, at(0, &idx), at(1, &idx)),
                            Prim::ConvertElementType { .. } => at(0, &idx),
                            Prim::Iota { dimension, .. } => idx[*dimension] as f64,
                            Prim::BroadcastInDim { broadcast_dimensions, .. } => {
                                let s = &ins[0].0;
                                let src: Vec<usize> = broadcast_dimensions.iter().enumerate()
                                    .map(|(j, &t)| if s[j] == 1 { 0 } else { idx[t] }).collect();
                                at(0, &src)
                            }
                            Prim::Transpose { permutation } => {
                                let mut src = vec![0; idx.len()];
                                for (j, &pp) in permutation.iter().enumerate() {
                                    src[pp] = idx[j];
                                }
                                at(0, &src)
                            }
                            other => panic!("{other:?}"),
                        };
                    }
                }
            }
            env.insert(e.outputs[0].0, (oshape, out));
        }
        p.outvars.iter().map(|a| get(&env, a).1).collect()
    }

    fn const_fold_f(s: Scalar) -> f64 {
        match s {
            Scalar::Float(f) => f,
            Scalar::Int(i) => i as f64,
            Scalar::Bool(b) => b as u8 as f64,
        }
    }

    fn eval_plan(plan: &Plan, args: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let mut slots: Vec<Vec<f64>> = plan.slots.iter().map(|a| vec![f64::NAN; a.numel().unwrap()]).collect();
        for (i, x) in args.iter().enumerate() {
            slots[i] = x.clone();
        }
        for s in &plan.steps {
            match s {
                Step::View { src, dst } => slots[*dst] = slots[*src].clone(),
                Step::Library(_) => panic!("the reference evaluator has no library calls"),
                Step::Control(_) => panic!("the reference evaluator has no control flow"),
                Step::Kernel(k) => {
                    let mut acc: Vec<Vec<f64>> = k.outputs.iter().map(|o| {
                        let n = plan.slots[o.slot].numel().unwrap();
                        match o.kind {
                            OutputKind::Reduce(ReduceOp::Sum) => vec![0.0; n],
                            _ => vec![f64::NEG_INFINITY; n],
                        }
                    }).collect();
                    let mut argv: Vec<Vec<f64>> = acc.clone();
                    for i in 0..numel(&k.domain) {
                        let idx = unravel(i, &k.domain);
                        let mut v: Vec<f64> = Vec::new();
                        for ins in &k.body {
                            let x = match &ins.op {
                                KOp::Load { input } => {
                                    let inp = &k.inputs[*input];
                                    let off = inp.offset + idx.iter().zip(&inp.strides).map(|(i, s)| *i as isize * s).sum::<isize>();
                                    slots[inp.slot][off as usize]
                                }
                                KOp::Const { value } => const_fold_f(*value),
                                KOp::Iota { axis } => idx[*axis] as f64,
                                KOp::Unary { op, a } => un(*op, v[*a]),
                                KOp::Binary { op, a, b } => bin(*op, v[*a], v[*b]),
                                KOp::Convert { a } => v[*a],
                                other => panic!("{other:?}"),
                            };
                            v.push(x);
                        }
                        let rest: Vec<usize> = (0..idx.len()).filter(|a| !k.reduce_axes.contains(a)).map(|a| idx[a]).collect();
                        let rshape: Vec<usize> = (0..idx.len()).filter(|a| !k.reduce_axes.contains(a)).map(|a| k.domain[a]).collect();
                        for (j, o) in k.outputs.iter().enumerate() {
                            let x = v[o.value];
                            match o.kind {
                                OutputKind::Store => acc[j][i] = x,
                                OutputKind::Reduce(op) => {
                                    let r = ravel(&rest, &rshape);
                                    acc[j][r] = if op == ReduceOp::Sum { acc[j][r] + x } else { acc[j][r].max(x) };
                                }
                                OutputKind::ArgReduce { .. } => {
                                    let r = ravel(&rest, &rshape);
                                    if x > argv[j][r] {
                                        argv[j][r] = x;
                                        acc[j][r] = idx[k.reduce_axes[0]] as f64;
                                    }
                                }
                            }
                        }
                    }
                    for (j, o) in k.outputs.iter().enumerate() {
                        slots[o.slot] = std::mem::take(&mut acc[j]);
                    }
                }
            }
        }
        plan.outputs.iter().map(|&s| slots[s].clone()).collect()
    }

    fn sample_args(p: &Program) -> Vec<Vec<f64>> {
        p.invars.iter().enumerate().map(|(k, (_, a))| {
            (0..a.numel().unwrap()).map(|i| ((i * 7 + k * 3) % 11) as f64 * 0.25 - 1.0).collect()
        }).collect()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * (1.0 + a.abs())
    }

    /// Lowers `p` (and its optimized form), checks the contract and compares with the reference.
    fn lower_checked(p: &Program) -> Plan {
        let plan = lower_to_plan(p).unwrap();
        check_plan(&plan);
        let args = sample_args(p);
        let want = eval_program(p, &args);
        let got = eval_plan(&plan, &args);
        assert_eq!(want.len(), got.len());
        for (w, g) in want.iter().zip(&got) {
            assert_eq!(w.len(), g.len());
            for (a, b) in w.iter().zip(g) {
                assert!(close(*a, *b, 1e-9), "reference {w:?} vs plan {g:?}\n{}\n{}", crate::ir::print::print(p), plan_text(&plan));
            }
        }
        let q = crate::opt::optimize(p.clone()).unwrap();
        let plan2 = lower_to_plan(&q).unwrap();
        check_plan(&plan2);
        for (w, g) in want.iter().zip(&eval_plan(&plan2, &args)) {
            for (a, b) in w.iter().zip(g) {
                assert!(close(*a, *b, 1e-6), "optimized: {w:?} vs {g:?}\n{}", plan_text(&plan2));
            }
        }
        plan
    }

    #[test]
    fn sum_of_elementwise_is_one_kernel() {
        let mut b = B::new();
        let x = b.input(&[5]);
        let y = b.input(&[5]);
        let m = b.bin(BinaryOp::Mul, &x, &y);
        let s = b.un(UnaryOp::Sin, &x);
        let a = b.bin(BinaryOp::Add, &m, &s);
        let r = b.sum(&a, &[0]);
        let plan = lower_checked(&b.done(vec![r]));
        let ks = kernels(&plan);
        assert_eq!(ks.len(), 1, "{}", plan_text(&plan));
        let k = ks[0];
        assert_eq!(k.name, "fused_mul_sin_add_reduce_sum");
        assert_eq!(k.domain, vec![5]);
        assert_eq!(k.reduce_axes, vec![0]);
        assert_eq!(k.inputs.len(), 2);
        assert_eq!(k.outputs.len(), 1);
        assert_eq!(k.outputs[0].kind, OutputKind::Reduce(ReduceOp::Sum));
        assert_eq!(plan.slots.len(), 3);
        assert_eq!(plan.outputs, vec![2]);
        assert_eq!(k.body.iter().filter(|i| matches!(i.op, KOp::Load { .. })).count(), 2, "x is loaded once");
    }

    #[test]
    fn centering_is_two_kernels() {
        let mut b = B::new();
        let x = b.input(&[4, 3]);
        let s = b.sum(&x, &[1]);
        let m = b.bin(BinaryOp::Div, &s, &lit(3.0));
        let mb = b.bcast(&m, &[4, 3], &[0]);
        let c = b.bin(BinaryOp::Sub, &x, &mb);
        let plan = lower_checked(&b.done(vec![c]));
        let ks = kernels(&plan);
        assert_eq!(ks.len(), 2, "{}", plan_text(&plan));
        assert_eq!(plan.slots.len(), 3, "only the sum and the result are materialized");
        let k = ks[1];
        assert_eq!(k.domain, vec![4, 3]);
        let strides: Vec<&Vec<isize>> = k.inputs.iter().map(|i| &i.strides).collect();
        assert!(strides.contains(&&vec![3, 1]) && strides.contains(&&vec![1, 0]), "{strides:?}");
    }

    #[test]
    fn variance_reductions_do_not_merge_when_dependent() {
        let mut b = B::new();
        let x = b.input(&[4, 3]);
        let s = b.sum(&x, &[1]);
        let sb = b.bcast(&s, &[4, 3], &[0]);
        let d = b.bin(BinaryOp::Sub, &x, &sb);
        let d2 = b.un(UnaryOp::Square, &d);
        let v = b.sum(&d2, &[1]);
        let sq = b.un(UnaryOp::Square, &x);
        let s2 = b.sum(&sq, &[1]);
        let plan = lower_checked(&b.done(vec![v, s2]));
        let ks = kernels(&plan);
        // The variance sum depends on sum(x), so they cannot share a kernel; sum(x*x) joins one of them.
        assert_eq!(ks.len(), 2, "{}", plan_text(&plan));
        assert_eq!(ks[0].outputs.len() + ks[1].outputs.len(), 3);
    }

    #[test]
    fn output_and_its_reduction_share_a_kernel() {
        let mut b = B::new();
        let x = b.input(&[6]);
        let e = b.un(UnaryOp::Exp, &x);
        let s = b.sum(&e, &[0]);
        let mx = b.eq(Prim::Reduce { op: ReduceOp::Max, axes: vec![0] }, vec![e.clone()]);
        let plan = lower_checked(&b.done(vec![e, s, mx]));
        let ks = kernels(&plan);
        assert_eq!(ks.len(), 1, "{}", plan_text(&plan));
        let kinds: Vec<OutputKind> = ks[0].outputs.iter().map(|o| o.kind).collect();
        assert_eq!(kinds, vec![OutputKind::Store, OutputKind::Reduce(ReduceOp::Sum), OutputKind::Reduce(ReduceOp::Max)]);
        assert_eq!(ks[0].body.iter().filter(|i| matches!(i.op, KOp::Unary { .. })).count(), 1);
    }

    #[test]
    fn broadcast_and_transpose_strides() {
        let mut b = B::new();
        let x = b.input(&[2, 3]);
        let z = b.input(&[3]);
        let w = b.input(&[1, 3]);
        let t = b.eq(Prim::Transpose { permutation: vec![1, 0] }, vec![x.clone()]);
        let zb = b.bcast(&z, &[3, 2], &[0]);
        let tz = b.bin(BinaryOp::Add, &t, &zb);
        let wb = b.bcast(&w, &[2, 3], &[0, 1]);
        let wbt = b.eq(Prim::Transpose { permutation: vec![1, 0] }, vec![wb]);
        let out = b.bin(BinaryOp::Mul, &tz, &wbt);
        let plan = lower_checked(&b.done(vec![out]));
        let ks = kernels(&plan);
        assert_eq!(ks.len(), 1, "{}", plan_text(&plan));
        let k = ks[0];
        assert_eq!(k.domain, vec![3, 2]);
        let by_slot: HashMap<usize, Vec<isize>> = k.inputs.iter().map(|i| (i.slot, i.strides.clone())).collect();
        assert_eq!(by_slot[&0], vec![1, 3]);
        assert_eq!(by_slot[&1], vec![1, 0]);
        assert_eq!(by_slot[&2], vec![1, 0]);
    }

    #[test]
    fn broadcast_of_expression_and_iota_is_inlined() {
        let mut b = B::new();
        let z = b.input(&[3]);
        let w = b.input(&[2, 3]);
        let e = b.un(UnaryOp::Neg, &z);
        let io = b.eq(Prim::Iota { dtype: DType::F32, shape: vec![3], dimension: 0 }, vec![]);
        let ei = b.bin(BinaryOp::Add, &e, &io);
        let eb = b.bcast(&ei, &[2, 3], &[1]);
        let out = b.bin(BinaryOp::Mul, &eb, &w);
        let plan = lower_checked(&b.done(vec![out]));
        let ks = kernels(&plan);
        assert_eq!(ks.len(), 1, "{}", plan_text(&plan));
        assert!(ks[0].body.iter().any(|i| i.op == KOp::Iota { axis: 1 }));
        assert!(ks[0].inputs.iter().any(|i| i.slot == 0 && i.strides == vec![0, 1]));
    }

    #[test]
    fn expensive_values_are_not_recomputed_under_broadcast() {
        let mut b = B::new();
        let x = b.input(&[4]);
        let e = b.un(UnaryOp::Exp, &x);
        let r = b.bcast(&e, &[4, 4], &[0]);
        let c = b.bcast(&e, &[4, 4], &[1]);
        let o = b.bin(BinaryOp::Mul, &r, &c);
        let plan = lower_checked(&b.done(vec![o]));
        let ks = kernels(&plan);
        assert_eq!(ks.len(), 2, "{}", plan_text(&plan));
        assert_eq!(ks[1].body.iter().filter(|i| matches!(i.op, KOp::Unary { .. })).count(), 0);
        // A cheap expression is still inlined.
        let mut b = B::new();
        let x = b.input(&[4]);
        let e = b.un(UnaryOp::Neg, &x);
        let r = b.bcast(&e, &[4, 4], &[0]);
        let o = b.bin(BinaryOp::Mul, &r, &r);
        assert_eq!(kernels(&lower_checked(&b.done(vec![o]))).len(), 1);
    }

    #[test]
    fn shared_value_across_domains_is_stored_by_a_consumer() {
        // exp(x) feeds a [3] kernel and a broadcast into a [2, 3] kernel: the [3] kernel stores it as a second
        // output (no kernel of its own), the other reads the buffer.
        let mut b = B::new();
        let x = b.input(&[3]);
        let w = b.input(&[2, 3]);
        let a = b.un(UnaryOp::Exp, &x);
        let o1 = b.bin(BinaryOp::Add, &a, &lit(1.0));
        let ab = b.bcast(&a, &[2, 3], &[1]);
        let o2 = b.bin(BinaryOp::Mul, &ab, &w);
        let plan = lower_checked(&b.done(vec![o1, o2]));
        let ks = kernels(&plan);
        assert_eq!(ks.len(), 2, "{}", plan_text(&plan));
        assert!(ks.iter().any(|k| k.domain == vec![3] && k.outputs.len() == 2), "{}", plan_text(&plan));
    }

    #[test]
    fn shared_values_with_several_consumers() {
        // relu's pre-activation feeds max (this kernel) and a later product: one kernel stores both; a
        // broadcast zero used by three kernels is recomputed in each, never stored.
        let mut b = B::new();
        let x = b.input(&[4, 5]);
        let y = b.input(&[4, 5]);
        let zero = b.bcast(&lit(0.0), &[4, 5], &[]);
        let k = b.bin(BinaryOp::Add, &x, &lit(1.0));
        let m = b.bin(BinaryOp::Max, &k, &zero);
        let s = b.sum(&m, &[1]);
        let g = b.bin(BinaryOp::Min, &k, &zero);
        let sel = b.bin(BinaryOp::Mul, &g, &y);
        let sel2 = b.bin(BinaryOp::Max, &y, &zero);
        let plan = lower_checked(&b.done(vec![m, s, sel, sel2]));
        let ks = kernels(&plan);
        assert_eq!(ks.len(), 3, "{}", plan_text(&plan));
        assert!(!plan_text(&plan).contains("fused_broadcast_in_dim domain"), "{}", plan_text(&plan));
    }

    #[test]
    fn reshape_is_a_view() {
        let mut b = B::new();
        let x = b.input(&[2, 3]);
        let r = b.eq(Prim::Reshape { new_sizes: vec![6] }, vec![x.clone()]);
        let plan = lower_checked(&b.done(vec![r]));
        assert_eq!(plan.steps, vec![Step::View { src: 0, dst: 1 }]);

        let mut b = B::new();
        let x = b.input(&[2, 3]);
        let e = b.un(UnaryOp::Exp, &x);
        let r = b.eq(Prim::Reshape { new_sizes: vec![3, 2] }, vec![e]);
        let sq = b.eq(Prim::ExpandDims { dimensions: vec![0] }, vec![r.clone()]);
        let t = b.un(UnaryOp::Neg, &sq);
        let s = b.eq(Prim::Squeeze { dimensions: vec![0] }, vec![t]);
        let plan = lower_checked(&b.done(vec![s]));
        assert_eq!(kernels(&plan).len(), 2, "{}", plan_text(&plan));
        assert!(matches!(plan.steps.last(), Some(Step::View { .. })));
    }

    #[test]
    fn input_and_literal_outputs() {
        let mut b = B::new();
        let x = b.input(&[4]);
        let y = b.input(&[4]);
        let plan = lower_checked(&b.done(vec![y.clone(), x.clone(), lit(2.5), y]));
        assert_eq!(plan.outputs[0], 1);
        assert_eq!(plan.outputs[1], 0);
        assert_eq!(plan.outputs[3], 1);
        let ks = kernels(&plan);
        assert_eq!(ks.len(), 1);
        assert!(ks[0].domain.is_empty());
        assert_eq!(ks[0].body[0].op, KOp::Const { value: Scalar::Float(2.5) });
        assert_eq!(plan.slots[plan.outputs[2]], Aval::scalar(DType::F32));
    }

    #[test]
    fn argmax_and_zero_size() {
        let mut b = B::new();
        let x = b.input(&[3, 4]);
        let n = b.un(UnaryOp::Neg, &x);
        let am = b.eq(Prim::ArgReduce { is_max: true, axis: 1, index_dtype: DType::I32 }, vec![n]);
        let plan = lower_checked(&b.done(vec![am]));
        let ks = kernels(&plan);
        assert_eq!(ks.len(), 1);
        assert_eq!(ks[0].outputs[0].kind, OutputKind::ArgReduce { is_max: true });
        assert_eq!(ks[0].reduce_axes, vec![1]);
        assert_eq!(plan.slots[1].dtype, DType::I32);

        let mut b = B::new();
        let x = b.input(&[0, 3]);
        let e = b.un(UnaryOp::Exp, &x);
        let s = b.sum(&e, &[0]);
        let plan = lower_checked(&b.done(vec![s, e]));
        assert_eq!(kernels(&plan)[0].domain, vec![0, 3]);
    }

    #[test]
    fn plan_text_lists_everything() {
        let mut b = B::new();
        let x = b.input(&[5]);
        let s = b.un(UnaryOp::Sin, &x);
        let r = b.sum(&s, &[0]);
        let plan = lower_checked(&b.done(vec![r]));
        let t = plan_text(&plan);
        assert!(t.contains("kernel fused_sin_reduce_sum domain=[5] reduce_axes=[0]"), "{t}");
        assert!(t.contains("in0 = %0 f32 strides=[1]"), "{t}");
        assert!(t.contains("v1:f32 = sin v0"), "{t}");
        assert!(t.contains("%1 <- reduce_sum v1"), "{t}");
        assert!(t.ends_with("outputs: (%1)"), "{t}");
    }

    #[test]
    fn long_chains_do_not_overflow_the_stack() {
        let mut b = B::new();
        let x = b.input(&[2]);
        let mut v = x;
        for _ in 0..20000 {
            v = b.bin(BinaryOp::Add, &v, &lit(1.0));
        }
        let p = b.done(vec![v]);
        let plan = lower_to_plan(&p).unwrap();
        assert_eq!(kernels(&plan).len(), 1);
        assert_eq!(eval_plan(&plan, &[vec![0.0, 1.0]]), vec![vec![20000.0, 20001.0]]);
    }

    /// Random programs (elementwise ops, broadcasts, transposes, reductions, argmax, views, iota) lowered
    /// and run by the reference plan interpreter must agree with the reference program interpreter.
    #[test]
    fn random_programs_match_reference() {
        let mut seed: u64 = 0x9E3779B97F4A7C15;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let shapes: [&[usize]; 5] = [&[3], &[2, 3], &[3, 2], &[1, 3], &[2, 1, 3]];
        let unary = [UnaryOp::Sin, UnaryOp::Neg, UnaryOp::Exp, UnaryOp::Square];
        let binary = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Max];
        let (mut kernels_total, mut multi, mut reducing, mut views) = (0, 0, 0, 0);
        for _case in 0..300 {
            let mut b = B::new();
            let mut pool: Vec<(Atom, Vec<usize>)> = Vec::new();
            for _ in 0..1 + next() % 3 {
                let s = shapes[next() % shapes.len()];
                pool.push((b.input(s), s.to_vec()));
            }
            for _ in 0..2 + next() % 10 {
                let (a, s) = pool[pool.len() - 1 - next() % pool.len().min(4)].clone();
                let r = s.len();
                let new = match next() % 10 {
                    0 | 1 => b.un(unary[next() % unary.len()], &a),
                    2 | 3 => {
                        let other = pool.iter().rev().find(|(_, t)| *t == s).map(|(o, _)| o.clone());
                        let o = match (next() % 3, other) {
                            (0, _) | (_, None) => lit(0.5),
                            (_, Some(o)) => o,
                        };
                        b.bin(binary[next() % binary.len()], &a, &o)
                    }
                    4 => {
                        // insert a new axis of size 2 and expand size-1 axes to 4
                        let pos = next() % (r + 1);
                        let mut shape: Vec<usize> = s.iter().map(|&d| if d == 1 { 4 } else { d }).collect();
                        shape.insert(pos, 2);
                        let bd: Vec<usize> = (0..r).map(|i| if i < pos { i } else { i + 1 }).collect();
                        b.bcast(&a, &shape, &bd)
                    }
                    5 if r >= 2 => {
                        let mut perm: Vec<usize> = (0..r).collect();
                        perm.rotate_left(1 + next() % (r - 1));
                        b.eq(Prim::Transpose { permutation: perm }, vec![a])
                    }
                    6 if r >= 1 => {
                        let axes: Vec<usize> = (0..r).filter(|_| next() % 2 == 0).collect();
                        let axes = if axes.is_empty() { vec![next() % r] } else { axes };
                        let op = if next() % 2 == 0 { ReduceOp::Sum } else { ReduceOp::Max };
                        b.eq(Prim::Reduce { op, axes }, vec![a])
                    }
                    7 if r >= 1 && s.iter().all(|&d| d > 0) => {
                        let ax = next() % r;
                        let am = b.eq(Prim::ArgReduce { is_max: true, axis: ax, index_dtype: DType::I32 }, vec![a]);
                        b.eq(Prim::ConvertElementType { new_dtype: DType::F32 }, vec![am])
                    }
                    8 => {
                        let n = s.iter().product();
                        if next() % 2 == 0 {
                            b.eq(Prim::Reshape { new_sizes: vec![n] }, vec![a])
                        } else {
                            b.eq(Prim::ExpandDims { dimensions: vec![next() % (r + 1)] }, vec![a])
                        }
                    }
                    _ => {
                        if r == 0 {
                            continue;
                        }
                        let io = b.eq(Prim::Iota { dtype: DType::F32, shape: s.clone(), dimension: next() % r }, vec![]);
                        b.bin(BinaryOp::Add, &a, &io)
                    }
                };
                let shape = b.aval(&new).0.shape;
                pool.push((new, shape));
            }
            let mut outs: Vec<Atom> = vec![pool.last().unwrap().0.clone()];
            for _ in 0..next() % 3 {
                outs.push(pool[next() % pool.len()].0.clone());
            }
            let p = b.done(outs);
            let plan = lower_checked(&p);
            kernels_total += kernels(&plan).len();
            multi += kernels(&plan).iter().filter(|k| k.outputs.len() > 1).count();
            reducing += kernels(&plan).iter().filter(|k| !k.reduce_axes.is_empty()).count();
            views += plan.steps.iter().filter(|s| matches!(s, Step::View { .. })).count();
        }
        eprintln!("random programs: {kernels_total} kernels, {multi} multi-output, {reducing} reducing, {views} views");
        assert!(kernels_total > 300 && multi > 10 && reducing > 50 && views > 20);
    }

    #[test]
    fn compile_pipeline_end_to_end() {
        let mut b = B::new();
        let x = b.input(&[3]);
        let y = b.bin(BinaryOp::Mul, &x, &lit(1.0));
        let z = b.bin(BinaryOp::Add, &y, &lit(-0.0));
        let s = b.sum(&z, &[0]);
        let p = b.done(vec![s]);
        let (q, plan) = crate::opt::compile_pipeline(&crate::ir::parse::to_json(&p)).unwrap();
        assert_eq!(q.eqns.len(), 1);
        check_plan(&plan);
        assert_eq!(kernels(&plan)[0].name, "fused_reduce_sum");
    }
}
