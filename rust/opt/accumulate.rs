//! Scan carries that only accumulate outer products leave the loop: a carry whose new value is
//! `acc + mul(broadcast(u, [0]), broadcast(v, [1]))` (reverse mode's weight cotangent of `h @ W` in an RNN's
//! backward scan, after `outer`), and which nothing else in the body reads, becomes
//! `outer_accumulate[reverse](init, U, V)` after the scan, where `U`/`V` stack `u`/`v` over the iterations
//! (the scanned operand itself when `u` is an xs slice, else a new ys output of the body).
//!
//! Why: the loop streams the whole accumulator through the cache every iteration, twice per weight
//! (half of an RNN gradient's time); `outer_accumulate` keeps tiles of it in registers across all the
//! iterations (`backend::cpu::library::outer_acc`). It adds the same rounded products in the same order,
//! so the bits are the loop's (NaN payloads aside: the product's operands may come out swapped).
//!
//! Runs on the scans of the program it is given: a scan nested in a body is reached when `control_flow`
//! optimizes that body. Applies to float32/float64 accumulators of rank 2 whose factors have the
//! accumulator's dtype, when the stacked factors stay under `MAX_STACKED` elements.
use std::collections::HashMap;

use crate::ir::control::ControlOp;
use crate::ir::{Atom, Aval, BinaryOp, DType, Eqn, LibOp, Prim, Program, VarId};

/// Bound on the elements of the factors stacked for one accumulator (extra memory the loop did not need).
const MAX_STACKED: usize = 1 << 24;

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

/// One accumulating carry of a scan body: carry `c`, the body's add equation `add`, the body vars of the
/// factors broadcast along the accumulator's rows (`rows`) and columns (`cols`).
struct Match {
    c: usize,
    add: usize,
    rows: VarId,
    cols: VarId,
}

fn find(e: &Eqn) -> Option<Match> {
    let Prim::Control(ControlOp::Scan { body, num_consts, num_carry, length, .. }) = &e.prim else { return None };
    let (nc, nk) = (*num_consts, *num_carry);
    if body.invars.len() != e.inputs.len() || body.invars.len() < nc + nk || body.outvars.len() < nk {
        return None; // malformed: the verifier reports it
    }
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
    let avals: HashMap<VarId, &Aval> =
        body.invars.iter().map(|(v, a)| (*v, a)).chain(body.eqns.iter().flat_map(|q| q.outputs.iter().map(|(v, a)| (*v, a)))).collect();
    let one_use = |v: VarId| uses.get(&v).copied() == Some(1);
    for c in 0..nk {
        let (cin, ref acc) = body.invars[nc + c];
        let Atom::Var(tv) = body.outvars[c] else { continue };
        if !matches!(acc.dtype, DType::F32 | DType::F64) || acc.shape.len() != 2 || !one_use(cin) || !one_use(tv) {
            continue;
        }
        let Some(&ai) = def.get(&tv) else { continue };
        let add = &body.eqns[ai];
        let (Prim::Binary(BinaryOp::Add), [Atom::Var(a), Atom::Var(b)]) = (&add.prim, add.inputs.as_slice()) else { continue };
        let s = match (*a == cin, *b == cin) {
            (true, false) => *b,
            (false, true) => *a,
            _ => continue,
        };
        let Some(mul) = def.get(&s).map(|&i| &body.eqns[i]) else { continue };
        let (Prim::Binary(BinaryOp::Mul), [Atom::Var(x), Atom::Var(y)]) = (&mul.prim, mul.inputs.as_slice()) else { continue };
        // each factor: a vector broadcast along one axis of the accumulator
        let factor = |w: VarId| -> Option<(VarId, usize)> {
            let q = &body.eqns[*def.get(&w)?];
            let (Prim::BroadcastInDim { shape, broadcast_dimensions }, [Atom::Var(u)]) = (&q.prim, q.inputs.as_slice()) else {
                return None;
            };
            let (&[d], ua) = (broadcast_dimensions.as_slice(), avals.get(u)?) else { return None };
            (shape == &acc.shape && ua.dtype == acc.dtype && ua.shape == [acc.shape[d]]).then_some((*u, d))
        };
        let (Some((u, du)), Some((v, dv))) = (factor(*x), factor(*y)) else { continue };
        let (rows, cols) = match (du, dv) {
            (0, 1) => (u, v),
            (1, 0) => (v, u),
            _ => continue,
        };
        if length.saturating_mul(acc.shape[0] + acc.shape[1]) > MAX_STACKED {
            continue;
        }
        return Some(Match { c, add: ai, rows, cols });
    }
    None
}

/// Takes carry `m.c` out of the scan `e` and appends its `outer_accumulate` to `after`.
fn apply(e: &mut Eqn, m: Match, next: &mut VarId, after: &mut Vec<Eqn>) {
    let Prim::Control(ControlOp::Scan { body, num_consts, num_carry, length, reverse }) = &mut e.prim else { return };
    let (nc, nk, t, reverse) = (*num_consts, *num_carry, *length, *reverse);
    let xs: HashMap<VarId, usize> = body.invars.iter().enumerate().skip(nc + nk).map(|(k, (v, _))| (*v, k)).collect();
    let avals: HashMap<VarId, Aval> =
        body.invars.iter().cloned().chain(body.eqns.iter().flat_map(|q| q.outputs.iter().cloned())).collect();
    // the stacked factor: the scanned operand itself, or a new ys output
    let mut stacked: HashMap<VarId, Atom> = HashMap::new();
    for w in [m.rows, m.cols] {
        if stacked.contains_key(&w) {
            continue;
        }
        // a ys output already stacking `w` (the other weight's accumulator shares its cotangent factor)
        let ys = (nk..body.outvars.len()).find(|&i| body.outvars[i] == Atom::Var(w) && i < e.outputs.len());
        let at = match (xs.get(&w).map(|&k| &e.inputs[k]), ys) {
            (Some(a @ Atom::Var(_)), _) => a.clone(),
            (_, Some(i)) => Atom::Var(e.outputs[i].0),
            _ => {
                let wa = &avals[&w];
                let o = *next;
                *next += 1;
                body.outvars.push(Atom::Var(w));
                e.outputs.push((o, Aval::new(wa.dtype, std::iter::once(t).chain(wa.shape.iter().copied()).collect())));
                Atom::Var(o)
            }
        };
        stacked.insert(w, at);
    }
    body.eqns.remove(m.add);
    body.invars.remove(nc + m.c);
    body.outvars.remove(m.c);
    let init = e.inputs.remove(nc + m.c);
    let fin = e.outputs.remove(m.c);
    *num_carry = nk - 1;
    after.push(Eqn {
        prim: Prim::Lib(LibOp::OuterAccumulate { reverse }),
        inputs: vec![init, stacked[&m.rows].clone(), stacked[&m.cols].clone()],
        outputs: vec![fin],
    });
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
                            let p = if swapped { g_rows[s * bg + i] * xs[s * bx + j] } else { xs[s * bx + i] * g_rows[s * bg + j] };
                            a2[i * n + j] = a2[i * n + j] + p;
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
