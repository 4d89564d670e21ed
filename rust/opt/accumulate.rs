//! Scan carries that only accumulate outer products leave the loop: a carry whose new value is
//! `acc + mul(broadcast(u, [0]), broadcast(v, [1]))` (reverse mode's weight cotangent of `h @ W` in an RNN's
//! backward scan, after `outer`), and which nothing else in the body reads, becomes
//! `outer_accumulate[reverse](init, U, V)` after the scan, where `U`/`V` stack `u`/`v` over the iterations
//! (the scanned operand itself when `u` is an xs slice, else a ys output of the body). Stacked weights
//! (`W[k]` read in the body) leave, after `pad_add`, a chain of window updates
//! `dynamic_update_slice(acc, slice(acc)[k] + outer_k[None], k, 0, 0)`: each window accumulates the same way,
//! and the windows' final values are written into the initial value after the loop.
//!
//! A batched RNN's `acc + h_t.T @ g_t` (a `dot_general` over the batch axis, possibly transposed) leaves the
//! same way with stacked [T, B, M] / [T, B, N] factors, where the loop's product sums over the batch in the
//! order `outer_accumulate`'s batched form repeats (`Body::contraction` says when).
//!
//! Why: the loop streams the whole accumulator through the cache every iteration, twice per weight
//! (half of an RNN gradient's time); `outer_accumulate` keeps tiles of it in registers across all the
//! iterations (`backend::cpu::library::outer_acc`). It does the same multiply-adds in the same order, each
//! one rounding as `opt::contract` makes the loop's (XLA's LLVM contracts them), so the bits are the loop's
//! (NaN payloads aside: the product's operands may come out swapped).
//!
//! Runs after `pad_add` (which makes the windowed form), on the scans of the program it is given: a scan
//! nested in a body is reached when `control_flow` optimizes that body. Applies to float32/float64 accumulators whose factors have the
//! accumulator's dtype, when the stacked factors stay under `MAX_STACKED` elements.
use std::collections::HashMap;

use crate::ir::control::ControlOp;
use crate::ir::{Atom, Aval, BinaryOp, DType, Eqn, LibOp, Prim, Program, Scalar, VarId};

/// Bound on the elements of the factors stacked for one accumulator (extra memory the loop did not need).
const MAX_STACKED: usize = 1 << 24;
/// The largest batch whose per-step products leave the loop (`Body::contraction`; at most 512 for the bits).
const MAX_BATCH: usize = 8;

pub fn run(mut p: Program) -> Program {
    let mut next = super::f16::max_var(&p) + 1;
    let mut out = Vec::with_capacity(p.eqns.len());
    for mut e in std::mem::take(&mut p.eqns) {
        let mut after = Vec::new();
        if matches!(e.prim, Prim::Control(ControlOp::Scan { .. })) {
            while let Some(m) = find(&e) {
                apply(&mut e, m, &mut next, &mut after);
            }
        }
        out.push(e);
        out.extend(after);
    }
    p.eqns = out;
    p
}

/// One accumulating carry of a scan body: carry `c`, the body equations that update it (removed), and per
/// window of the accumulator its start along the leading axis (`None`: the whole accumulator, rank 2) and
/// the body vars of the factors broadcast along its rows and columns.
struct Match {
    c: usize,
    remove: Vec<usize>,
    windows: Vec<(Option<usize>, VarId, VarId)>,
}

/// Definitions, use counts and avals of a scan body's vars.
struct Body<'a> {
    eqns: &'a [Eqn],
    def: HashMap<VarId, usize>,
    uses: HashMap<VarId, usize>,
    avals: HashMap<VarId, &'a Aval>,
}

impl<'a> Body<'a> {
    fn new(body: &'a Program) -> Body<'a> {
        let mut def: HashMap<VarId, usize> = HashMap::new();
        let mut uses: HashMap<VarId, usize> = HashMap::new();
        for (i, q) in body.eqns.iter().enumerate() {
            for (v, _) in &q.outputs {
                def.insert(*v, i);
            }
            for a in &q.inputs {
                if let Atom::Var(v) = a {
                    *uses.entry(*v).or_default() += 1;
                }
            }
        }
        for a in &body.outvars {
            if let Atom::Var(v) = a {
                *uses.entry(*v).or_default() += 1;
            }
        }
        let avals =
            body.invars.iter().map(|(v, a)| (*v, a)).chain(body.eqns.iter().flat_map(|q| q.outputs.iter().map(|(v, a)| (*v, a)))).collect();
        Body { eqns: &body.eqns, def, uses, avals }
    }

    fn uses(&self, v: VarId) -> usize {
        self.uses.get(&v).copied().unwrap_or(0)
    }

    fn eqn(&self, v: VarId) -> Option<(usize, &'a Eqn)> {
        let &i = self.def.get(&v)?;
        Some((i, &self.eqns[i]))
    }

    /// `s = mul(x, y)` of shape `shape` (rank 2, dtype `dt`) with `x`, `y` vectors along different axes: the
    /// factors along the rows and along the columns. Or `s = dot_general(x, y)` contracting the leading axis
    /// of both ([B, M] and [B, N], a batched RNN's `h_t.T @ g_t`): the factors are then matrices.
    fn outer(&self, s: VarId, shape: &[usize], dt: DType) -> Option<(VarId, VarId)> {
        let (_, mul) = self.eqn(s)?;
        // `outer(g, u).T`: the transposed product's factors, rows and columns exchanged
        if let (Prim::Transpose { permutation }, [Atom::Var(s2)]) = (&mul.prim, mul.inputs.as_slice()) {
            if permutation != &[1, 0] || shape.len() != 2 {
                return None;
            }
            let (r, c) = self.outer(*s2, &[shape[1], shape[0]], dt)?;
            return Some((c, r));
        }
        if let Prim::Lib(LibOp::DotGeneral { .. }) = &mul.prim {
            return self.contraction(mul, shape, dt);
        }
        let (Prim::Binary(BinaryOp::Mul), [Atom::Var(x), Atom::Var(y)], [(_, ma)]) = (&mul.prim, mul.inputs.as_slice(), mul.outputs.as_slice())
        else {
            return None;
        };
        if ma.shape != shape || shape.len() != 2 || ma.dtype != dt {
            return None;
        }
        // each factor: a vector along one axis of the product (broadcast to it, or to a size-1 axis that
        // the product broadcasts: `u[:, None] * g[None, :]`)
        let factor = |w: VarId| -> Option<(VarId, usize)> {
            let wa = self.avals.get(&w)?;
            if wa.shape.len() != 2 || wa.dtype != dt {
                return None;
            }
            let (u, d) = along(w, &self.def, &self.avals, self.eqns, 8)?;
            (wa.shape[d] == shape[d] && self.avals.get(&u)?.dtype == dt).then_some((u, d))
        };
        let ((u, du), (v, dv)) = (factor(*x)?, factor(*y)?);
        match (du, dv) {
            (0, 1) => Some((u, v)),
            (1, 0) => Some((v, u)),
            _ => None,
        }
    }

    /// `dot_general(x, y)` over the leading axis of `x` [B, M] and `y` [B, N]: `(x, y)` when the loop's product
    /// is one fused multiply-add chain over `b` from zero, the order `outer_accumulate`'s batched form
    /// repeats. The CPU backend's products give that order for B <= 512 (gemm blocks the contraction in
    /// chunks of at least 512) and B >= 3 (gemm's `k <= 2` kernel rounds each product), outputs of more than
    /// 256 elements in both directions (gemm's kernels for at most 16 x 16 outputs and for vectors sum in
    /// another order); `x` and `y` distinct (`h.T @ h` takes the symmetric path). Taken only up to
    /// `MAX_BATCH`: measured (RNN grad, hidden 128, one thread) 20-25% faster at B = 4 and 8 in both modes,
    /// but at B = 16 the loop's gemm calls (their accumulator pass now small next to the product) were as fast
    /// in default mode and ~10% faster on AVX2 lanes than the register tiles.
    fn contraction(&self, dot: &Eqn, shape: &[usize], dt: DType) -> Option<(VarId, VarId)> {
        let (Prim::Lib(LibOp::DotGeneral { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, preferred }), [Atom::Var(x), Atom::Var(y)], [(_, oa)]) =
            (&dot.prim, dot.inputs.as_slice(), dot.outputs.as_slice())
        else {
            return None;
        };
        if !lhs_batch.is_empty() || !rhs_batch.is_empty() || preferred.is_some_and(|p| p != dt) || oa.dtype != dt || oa.shape != shape {
            return None;
        }
        // the [B, ·] factor: the operand itself when it contracts its leading axis, or what it transposes when
        // it contracts its trailing one (`x.T @ g` before the body's own `dot_fold` runs)
        let factor = |v: VarId, contracting: &[usize]| -> Option<VarId> {
            match contracting {
                [0] => Some(v),
                [1] => {
                    let (_, t) = self.eqn(v)?;
                    match (&t.prim, t.inputs.as_slice()) {
                        (Prim::Transpose { permutation }, [Atom::Var(w)]) if permutation == &[1, 0] => Some(*w),
                        _ => None,
                    }
                }
                _ => None,
            }
        };
        let (x, y) = (factor(*x, lhs_contracting)?, factor(*y, rhs_contracting)?);
        if x == y {
            return None;
        }
        let (xa, ya) = (self.avals.get(&x)?, self.avals.get(&y)?);
        let (&[b, m], &[b2, n]) = (xa.shape.as_slice(), ya.shape.as_slice()) else { return None };
        let ok = xa.dtype == dt && ya.dtype == dt && b == b2 && (3..=MAX_BATCH).contains(&b) && m >= 2 && n >= 2 && m * n > 256;
        (ok && shape == [m, n]).then_some((x, y))
    }

    /// `acc + outer`, whole: the rank-2 form.
    fn whole(&self, c: usize, cin: VarId, acc: &Aval, tv: VarId) -> Option<Match> {
        let (ai, add) = self.eqn(tv)?;
        let (Prim::Binary(BinaryOp::Add), [Atom::Var(a), Atom::Var(b)]) = (&add.prim, add.inputs.as_slice()) else { return None };
        let s = match (*a == cin, *b == cin) {
            (true, false) => *b,
            (false, true) => *a,
            _ => return None,
        };
        let (rows, cols) = self.outer(s, &acc.shape, acc.dtype)?;
        (self.uses(cin) == 1).then(|| Match { c, remove: vec![ai], windows: vec![(None, rows, cols)] })
    }

    /// The windowed form `opt::pad_add` leaves for stacked weights (`W[k]` read in the body): a chain of
    /// `dynamic_update_slice(prev, slice(prev)[k] + outer_k[None], k, 0, 0)`, one per window `k` of an
    /// accumulator [K, M, N], each window at most once.
    fn windowed(&self, c: usize, cin: VarId, acc: &Aval, tv: VarId) -> Option<Match> {
        let &[kk, m, n] = acc.shape.as_slice() else { return None };
        let mut cur = tv;
        let (mut remove, mut windows) = (Vec::new(), Vec::<(Option<usize>, VarId, VarId)>::new());
        while cur != cin {
            let (di, dus) = self.eqn(cur)?;
            let (Prim::Lib(LibOp::DynamicUpdateSlice), [Atom::Var(prev), Atom::Var(upd), Atom::Lit(k, _), Atom::Lit(z1, _), Atom::Lit(z2, _)]) =
                (&dus.prim, dus.inputs.as_slice())
            else {
                return None;
            };
            let k = k.as_f64();
            if !(0.0..kk as f64).contains(&k) || k.fract() != 0.0 || z1.as_f64() != 0.0 || z2.as_f64() != 0.0 {
                return None;
            }
            let k = k as usize;
            if windows.iter().any(|w| w.0 == Some(k)) || self.uses(*prev) != 2 || self.uses(*upd) != 1 {
                return None;
            }
            let (ai, add) = self.eqn(*upd)?;
            let (Prim::Binary(BinaryOp::Add), [Atom::Var(a), Atom::Var(b)]) = (&add.prim, add.inputs.as_slice()) else { return None };
            let is_window = |v: VarId| -> Option<usize> {
                let (si, sl) = self.eqn(v)?;
                let (Prim::Slice { start_indices, limit_indices, strides }, [Atom::Var(src)]) = (&sl.prim, sl.inputs.as_slice()) else {
                    return None;
                };
                let unit = strides.is_empty() || strides.iter().all(|&s| s == 1);
                (src == prev && unit && start_indices == &[k, 0, 0] && limit_indices == &[k + 1, m, n] && self.uses(v) == 1).then_some(si)
            };
            let (si, other) = match (is_window(*a), is_window(*b)) {
                (Some(si), None) => (si, *b),
                (None, Some(si)) => (si, *a),
                _ => return None,
            };
            // `outer_k[None]`: a broadcast or reshape of the [M, N] product to [1, M, N]
            let (_, lead) = self.eqn(other)?;
            let [Atom::Var(p)] = lead.inputs.as_slice() else { return None };
            match &lead.prim {
                Prim::BroadcastInDim { shape, broadcast_dimensions } if shape == &[1, m, n] && broadcast_dimensions == &[1, 2] => {}
                Prim::Reshape { new_sizes } if new_sizes == &[1, m, n] => {}
                _ => return None,
            }
            let (rows, cols) = self.outer(*p, &[m, n], acc.dtype)?;
            remove.extend([di, ai, si]);
            windows.push((Some(k), rows, cols));
            cur = *prev;
        }
        (!windows.is_empty()).then_some(Match { c, remove, windows })
    }
}

fn find(e: &Eqn) -> Option<Match> {
    let Prim::Control(ControlOp::Scan { body, num_consts, num_carry, length, .. }) = &e.prim else { return None };
    let (nc, nk) = (*num_consts, *num_carry);
    if body.invars.len() != e.inputs.len() || body.invars.len() < nc + nk || body.outvars.len() < nk {
        return None; // malformed: the verifier reports it
    }
    let b = Body::new(body);
    for c in 0..nk {
        let (cin, ref acc) = body.invars[nc + c];
        let Atom::Var(tv) = body.outvars[c] else { continue };
        if !matches!(acc.dtype, DType::F32 | DType::F64) || b.uses(tv) != 1 || tv == cin {
            continue;
        }
        let m = match acc.shape.len() {
            2 => b.whole(c, cin, acc, tv),
            3 => b.windowed(c, cin, acc, tv),
            _ => None,
        };
        let Some(m) = m else { continue };
        let numel = |v: &VarId| b.avals.get(v).and_then(|a| a.numel()).unwrap_or(usize::MAX);
        let per_step = m.windows.iter().fold(0usize, |s, (_, r, c)| s.saturating_add(numel(r)).saturating_add(numel(c)));
        if length.saturating_mul(per_step) > MAX_STACKED {
            continue;
        }
        return Some(m);
    }
    None
}

/// `Some((u, d))` when `w`'s element at index `p` is `u[p[d]]` for a vector `u`: `u` itself, or broadcasts
/// and reshapes of it that keep its elements along one axis (`depth` bounds the chain followed).
fn along(
    w: VarId, def: &HashMap<VarId, usize>, avals: &HashMap<VarId, &Aval>, eqns: &[Eqn], depth: usize,
) -> Option<(VarId, usize)> {
    let wa = avals.get(&w)?;
    if wa.shape.len() == 1 {
        return Some((w, 0));
    }
    let q = &eqns[*def.get(&w)?];
    let [Atom::Var(x)] = q.inputs.as_slice() else { return None };
    if depth == 0 {
        return None;
    }
    let (u, ax) = along(*x, def, avals, eqns, depth - 1)?;
    let xa = avals.get(x)?;
    let len = xa.shape[ax];
    match &q.prim {
        Prim::BroadcastInDim { shape, broadcast_dimensions } => {
            let d = *broadcast_dimensions.get(ax)?;
            (shape.get(d) == Some(&len)).then_some((u, d))
        }
        Prim::Reshape { .. } => {
            // one axis of `len` elements, the others of size 1, on both sides
            let only = |s: &[usize]| -> Option<usize> {
                let mut big = s.iter().enumerate().filter(|(_, &n)| n != 1);
                let (i, &n) = big.next()?;
                (n == len && big.next().is_none()).then_some(i)
            };
            only(&xa.shape)?;
            only(&wa.shape).map(|d| (u, d))
        }
        _ => None,
    }
}

/// Takes carry `m.c` out of the scan `e` and appends what computes its final value to `after`.
fn apply(e: &mut Eqn, m: Match, next: &mut VarId, after: &mut Vec<Eqn>) {
    let Prim::Control(ControlOp::Scan { body, num_consts, num_carry, length, reverse }) = &mut e.prim else { return };
    let (nc, nk, t, reverse) = (*num_consts, *num_carry, *length, *reverse);
    let xs: HashMap<VarId, usize> = body.invars.iter().enumerate().skip(nc + nk).map(|(k, (v, _))| (*v, k)).collect();
    let avals: HashMap<VarId, Aval> =
        body.invars.iter().cloned().chain(body.eqns.iter().flat_map(|q| q.outputs.iter().cloned())).collect();
    let fresh = |next: &mut VarId| {
        let v = *next;
        *next += 1;
        v
    };
    // the stacked factor: the scanned operand itself, or a ys output (an existing one stacking the same var:
    // the other weight's accumulator shares its cotangent factor)
    let mut stacked: HashMap<VarId, Atom> = HashMap::new();
    for &(_, rows, cols) in &m.windows {
        for w in [rows, cols] {
            if stacked.contains_key(&w) {
                continue;
            }
            let ys = (nk..body.outvars.len()).find(|&i| body.outvars[i] == Atom::Var(w) && i < e.outputs.len());
            let at = match (xs.get(&w).map(|&k| &e.inputs[k]), ys) {
                (Some(a @ Atom::Var(_)), _) => a.clone(),
                (_, Some(i)) => Atom::Var(e.outputs[i].0),
                _ => {
                    let wa = &avals[&w];
                    let o = fresh(next);
                    body.outvars.push(Atom::Var(w));
                    e.outputs.push((o, Aval::new(wa.dtype, std::iter::once(t).chain(wa.shape.iter().copied()).collect())));
                    Atom::Var(o)
                }
            };
            stacked.insert(w, at);
        }
    }
    let mut remove = m.remove;
    remove.sort_unstable();
    for &i in remove.iter().rev() {
        body.eqns.remove(i);
    }
    body.invars.remove(nc + m.c);
    body.outvars.remove(m.c);
    let init = e.inputs.remove(nc + m.c);
    let (fin, fa) = e.outputs.remove(m.c);
    *num_carry = nk - 1;
    let op = Prim::Lib(LibOp::OuterAccumulate { reverse });
    if let [(None, rows, cols)] = m.windows.as_slice() {
        after.push(Eqn { prim: op, inputs: vec![init, stacked[rows].clone(), stacked[cols].clone()], outputs: vec![(fin, fa)] });
        return;
    }
    // windows of a [K, M, N] accumulator: each one's final value written into the initial value's window
    let (mn, dt) = (fa.shape[1..].to_vec(), fa.dtype);
    let one = Aval::new(dt, std::iter::once(1).chain(mn.iter().copied()).collect());
    let mut cur = init.clone();
    let count = m.windows.len();
    for (i, &(k, rows, cols)) in m.windows.iter().enumerate() {
        let k = k.unwrap_or(0);
        let (s, r, a, b) = (fresh(next), fresh(next), fresh(next), fresh(next));
        let o = if i + 1 == count { fin } else { fresh(next) };
        let mut limit = one.shape.clone();
        limit[0] = k + 1;
        after.extend([
            Eqn {
                prim: Prim::Slice { start_indices: vec![k, 0, 0], limit_indices: limit, strides: vec![1, 1, 1] },
                inputs: vec![init.clone()],
                outputs: vec![(s, one.clone())],
            },
            Eqn { prim: Prim::Reshape { new_sizes: mn.clone() }, inputs: vec![Atom::Var(s)], outputs: vec![(r, Aval::new(dt, mn.clone()))] },
            Eqn {
                prim: op.clone(),
                inputs: vec![Atom::Var(r), stacked[&rows].clone(), stacked[&cols].clone()],
                outputs: vec![(a, Aval::new(dt, mn.clone()))],
            },
            Eqn { prim: Prim::Reshape { new_sizes: one.shape.clone() }, inputs: vec![Atom::Var(a)], outputs: vec![(b, one.clone())] },
            Eqn {
                prim: Prim::Lib(LibOp::DynamicUpdateSlice),
                inputs: vec![
                    cur,
                    Atom::Var(b),
                    Atom::Lit(Scalar::Int(k as i64), DType::I32),
                    Atom::Lit(Scalar::Int(0), DType::I32),
                    Atom::Lit(Scalar::Int(0), DType::I32),
                ],
                outputs: vec![(o, fa.clone())],
            },
        ]);
        cur = Atom::Var(o);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Buffer;

    /// A reverse (or forward) scan with an f32[m, n] accumulator `acc + x_t[:, None] * g_t[None, :]` where
    /// `g_t = tanh(h) * k` comes from another carry `h` (so it is stacked as a new ys) and `x_t` is scanned.
    fn program(t: usize, m: usize, n: usize, reverse: bool, swapped: bool) -> String {
        let (d0, d1) = if swapped { (1, 0) } else { (0, 1) };
        let (bx, bg) = if swapped { (n, m) } else { (m, n) };
        // swapped: acc + g_t[:, None] * x_t[None, :] with g of length m, x of length n
        format!(
            r#"{{"invars":[[0,"f32",[{m},{n}]],[1,"f32",[{bg}]],[2,"f32",[{t},{bx}]]],"eqns":[
            {{"prim":"scan","params":{{"num_consts":0,"num_carry":2,"length":{t},"reverse":{reverse},"jaxpr":{{
              "invars":[[10,"f32",[{m},{n}]],[11,"f32",[{bg}]],[12,"f32",[{bx}]]],"eqns":[
              {{"prim":"tanh","in":[11],"out":[[13,"f32",[{bg}]]]}},
              {{"prim":"mul","in":[13,{{"lit":0.5,"dtype":"f32"}}],"out":[[14,"f32",[{bg}]]]}},
              {{"prim":"broadcast_in_dim","params":{{"shape":[{m},{n}],"broadcast_dimensions":[{d0}]}},"in":[12],"out":[[15,"f32",[{m},{n}]]]}},
              {{"prim":"broadcast_in_dim","params":{{"shape":[{m},{n}],"broadcast_dimensions":[{d1}]}},"in":[14],"out":[[16,"f32",[{m},{n}]]]}},
              {{"prim":"mul","in":[15,16],"out":[[17,"f32",[{m},{n}]]]}},
              {{"prim":"add","in":[10,17],"out":[[18,"f32",[{m},{n}]]]}}],"outvars":[18,14,14]}}}},
             "in":[0,1,2],"out":[[3,"f32",[{m},{n}]],[4,"f32",[{bg}]],[5,"f32",[{t},{bg}]]]}}],"outvars":[3,4,5]}}"#
        )
    }

    fn data(n: usize, seed: u32) -> Vec<f32> {
        (0..n).map(|i| (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 16) % 1000) as f32 * 1e-3 - 0.5).collect()
    }

    fn buf(shape: &[usize], v: &[f32]) -> Buffer {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        Buffer::from_bytes(&Aval::new(DType::F32, shape.to_vec()), &bytes).unwrap()
    }

    fn bits(b: &Buffer) -> Vec<u32> {
        b.as_bytes().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    #[test]
    fn accumulator_leaves_the_loop_with_the_loops_bits() {
        let (t, m, n) = (9usize, 7usize, 19usize);
        for reverse in [false, true] {
            for swapped in [false, true] {
                let json = program(t, m, n, reverse, swapped);
                let (p, plan) = crate::opt::compile_pipeline(&json).unwrap();
                let acc_op = p.eqns.iter().filter(|e| matches!(e.prim, Prim::Lib(LibOp::OuterAccumulate { .. }))).count();
                assert_eq!(acc_op, 1, "{}", crate::ir::print::print(&p));
                let Some(Prim::Control(ControlOp::Scan { num_carry, .. })) = p.eqns.iter().map(|e| &e.prim).find(|p| matches!(p, Prim::Control(_)))
                else {
                    panic!("no scan")
                };
                assert_eq!(*num_carry, 1);
                let (bx, bg) = if swapped { (n, m) } else { (m, n) };
                let (acc, h0, xs) = (data(m * n, 1), data(bg, 2), data(t * bx, 3));
                let exe = crate::backend::cpu::compile(&plan).unwrap();
                let got = exe.run(&[buf(&[m, n], &acc), buf(&[bg], &h0), buf(&[t, bx], &xs)]).unwrap();
                // the loop, in f32, mul then add, in the scan's order
                let mut a = acc.clone();
                let mut h = h0.clone();
                for k in 0..t {
                    let s = if reverse { t - 1 - k } else { k };
                    let g: Vec<f32> = h.iter().map(|&z| z.tanh() * 0.5).collect();
                    for i in 0..m {
                        for j in 0..n {
                            let p = if swapped { g[i] * xs[s * bx + j] } else { xs[s * bx + i] * g[j] };
                            a[i * n + j] = a[i * n + j] + p;
                        }
                    }
                    h = g;
                }
                let want: Vec<u32> = a.iter().map(|x| x.to_bits()).collect();
                // tanh is cranax's own: compare the accumulator to the loop run on cranax's g values
                let g_rows: Vec<f32> = bits(&got[2]).into_iter().map(f32::from_bits).collect();
                let mut a2 = acc.clone();
                for k in 0..t {
                    let s = if reverse { t - 1 - k } else { k };
                    for i in 0..m {
                        for j in 0..n {
                            // one rounding per multiply-add (outer_accumulate, as XLA's contracted loop)
                            let (x, y) = if swapped { (g_rows[s * bg + i], xs[s * bx + j]) } else { (xs[s * bx + i], g_rows[s * bg + j]) };
                            a2[i * n + j] = x.mul_add(y, a2[i * n + j]);
                        }
                    }
                }
                assert_eq!(bits(&got[0]), a2.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "reverse={reverse} swapped={swapped}");
                // and within float32 rounding of the plain loop (tanh may differ in the last bit)
                for (g, w) in bits(&got[0]).iter().zip(&want) {
                    assert!((f32::from_bits(*g) - f32::from_bits(*w)).abs() < 1e-4);
                }
            }
        }
    }

    #[test]
    fn carries_read_elsewhere_stay_in_the_loop() {
        // the accumulator is also a ys output: it must stay a carry
        let json = program(5, 3, 4, false, false).replace(r#""outvars":[18,14,14]"#, r#""outvars":[18,14,10]"#)
            .replace(r#"[5,"f32",[5,4]]"#, r#"[5,"f32",[5,3,4]]"#);
        let (p, _) = crate::opt::compile_pipeline(&json).unwrap();
        assert!(!p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::OuterAccumulate { .. }))));
        // a product that is not an outer product (both factors along the same axis) stays too
        let json = program(5, 4, 4, false, false).replace(r#""broadcast_dimensions":[1]"#, r#""broadcast_dimensions":[0]"#);
        let (p, _) = crate::opt::compile_pipeline(&json).unwrap();
        assert!(!p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::OuterAccumulate { .. }))));
    }
}
