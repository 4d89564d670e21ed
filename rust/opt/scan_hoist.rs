//! Hoists the products of a `scan` body that read only a scanned input and a loop constant — an RNN cell's
//! `x @ U` — out of the loop: one batched `dot_general` over every iteration's slice runs before the loop and
//! its rows enter the body as an extra scanned input. Each iteration then does one product fewer, and the
//! batched product runs at gemm speed.
//!
//! Applies to a body `dot_general` without batch dims whose lhs is an xs slice (or a reshape of one) and whose
//! rhs is a loop constant: the lhs's free dims lead the output, so the iteration axis leads the batched
//! product's output as a scanned input needs. The body equation becomes a `copy` of the new input (simplify
//! and DCE tidy up). Skipped when the batched result would be bigger than the scanned input it reads.
use std::collections::HashMap;

use crate::ir::control::ControlOp;
use crate::ir::{Atom, Aval, Eqn, LibOp, Prim, Program, VarId};

/// The hoisted product may be at most this many times the scanned input it reads (plus `SLACK` elements):
/// it is extra memory the loop did not need before.
const GROWTH: usize = 1;
const SLACK: usize = 1 << 20;

fn max_var(p: &Program) -> VarId {
    p.invars.iter().map(|(v, _)| *v).chain(p.eqns.iter().flat_map(|e| e.outputs.iter().map(|(v, _)| *v))).max().unwrap_or(0)
}

pub fn run(mut p: Program) -> Program {
    let mut next = max_var(&p) + 1;
    let mut avals: HashMap<VarId, Aval> = p.invars.iter().cloned().collect();
    let mut out = Vec::with_capacity(p.eqns.len());
    for mut e in std::mem::take(&mut p.eqns) {
        if let Prim::Control(ControlOp::Scan { body, num_consts, num_carry, length, .. }) = &mut e.prim {
            hoist(body, *num_consts, *num_carry, *length, &mut e.inputs, &avals, &mut out, &mut next);
        }
        for (v, a) in &e.outputs {
            avals.insert(*v, a.clone());
        }
        out.push(e);
    }
    p.eqns = out;
    p
}

/// Rewrites one scan (its body and operands), emitting the hoisted products into `outer`.
#[allow(clippy::too_many_arguments)]
fn hoist(
    body: &mut Program, num_consts: usize, num_carry: usize, length: usize, operands: &mut Vec<Atom>,
    avals: &HashMap<VarId, Aval>, outer: &mut Vec<Eqn>, next: &mut VarId,
) {
    let xs_start = num_consts + num_carry;
    if body.invars.len() != operands.len() || body.invars.len() < xs_start {
        return; // malformed: the verifier reports it
    }
    let mut body_next = max_var(body) + 1;
    // body var -> the xs operand it is a slice (or reshaped slice) of
    let mut from_xs: HashMap<VarId, usize> = HashMap::new();
    for (k, (v, _)) in body.invars.iter().enumerate().skip(xs_start) {
        from_xs.insert(*v, k);
    }
    let consts: HashMap<VarId, usize> = body.invars.iter().take(num_consts).enumerate().map(|(k, (v, _))| (*v, k)).collect();
    let body_avals: HashMap<VarId, Aval> =
        body.invars.iter().cloned().chain(body.eqns.iter().flat_map(|e| e.outputs.iter().cloned())).collect();
    for i in 0..body.eqns.len() {
        let e = &body.eqns[i];
        match &e.prim {
            Prim::Reshape { .. } => {
                if let (Some(Atom::Var(a)), Some((o, _))) = (e.inputs.first(), e.outputs.first()) {
                    if let Some(&k) = from_xs.get(a) {
                        from_xs.insert(*o, k);
                    }
                }
                continue;
            }
            Prim::Lib(LibOp::DotGeneral { lhs_batch, .. }) if lhs_batch.is_empty() => {}
            _ => continue,
        }
        let (Some(Atom::Var(a)), Some(Atom::Var(c)), Some((o, oav))) = (e.inputs.first(), e.inputs.get(1), e.outputs.first())
        else {
            continue;
        };
        let (Some(&k), Some(&ci)) = (from_xs.get(a), consts.get(c)) else { continue };
        let (Some(Atom::Var(xs)), Some(Atom::Var(cv))) = (operands.get(k), operands.get(ci)) else { continue };
        let (Some(xs_aval), Some(a_aval)) = (avals.get(xs), body_avals.get(a)) else { continue };
        let out_numel = oav.numel().unwrap_or(usize::MAX).saturating_mul(length);
        if out_numel > xs_aval.numel().unwrap_or(0).saturating_mul(GROWTH).saturating_add(SLACK) {
            continue;
        }
        let Prim::Lib(LibOp::DotGeneral { lhs_contracting, rhs_contracting, preferred, .. }) = &e.prim else { continue };
        // The lhs of every iteration, stacked: the scanned operand, reshaped when the body reshapes its slice.
        let full_shape: Vec<usize> = std::iter::once(length).chain(a_aval.shape.iter().copied()).collect();
        let lhs = if xs_aval.shape == full_shape {
            Atom::Var(*xs)
        } else {
            let r = *next;
            *next += 1;
            outer.push(Eqn {
                prim: Prim::Reshape { new_sizes: full_shape.clone() },
                inputs: vec![Atom::Var(*xs)],
                outputs: vec![(r, Aval::new(xs_aval.dtype, full_shape))],
            });
            Atom::Var(r)
        };
        let d = *next;
        *next += 1;
        let d_aval = Aval::new(oav.dtype, std::iter::once(length).chain(oav.shape.iter().copied()).collect());
        outer.push(Eqn {
            prim: Prim::Lib(LibOp::DotGeneral {
                lhs_contracting: lhs_contracting.iter().map(|&x| x + 1).collect(),
                rhs_contracting: rhs_contracting.clone(),
                lhs_batch: vec![],
                rhs_batch: vec![],
                preferred: *preferred,
            }),
            inputs: vec![lhs, Atom::Var(*cv)],
            outputs: vec![(d, d_aval)],
        });
        operands.push(Atom::Var(d));
        let nv = body_next;
        body_next += 1;
        let (o, oav) = (*o, oav.clone());
        body.invars.push((nv, oav.clone()));
        body.eqns[i] = Eqn { prim: Prim::Copy, inputs: vec![Atom::Var(nv)], outputs: vec![(o, oav)] };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_json(json: &str, inputs: &[crate::buffer::Buffer]) -> Vec<Vec<f32>> {
        let (p, plan) = crate::opt::compile_pipeline(json).unwrap();
        // the hoisted product is a top-level dot_general now
        assert!(p.eqns.iter().any(|e| matches!(e.prim, Prim::Lib(LibOp::DotGeneral { .. }))), "{p:?}");
        let exe = crate::backend::cpu::compile(&plan).unwrap();
        exe.run(inputs)
            .unwrap()
            .iter()
            .map(|b| b.as_bytes().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect())
            .collect()
    }

    fn buf(shape: &[usize], data: &[f32]) -> crate::buffer::Buffer {
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        crate::buffer::Buffer::from_bytes(&Aval::new(crate::ir::DType::F32, shape.to_vec()), &bytes).unwrap()
    }

    #[test]
    fn rnn_input_product_is_hoisted_and_values_match_a_loop() {
        // h' = tanh(h @ W + reshape(x, [1, H]) @ U), scanned over xs [L, H], in both directions.
        let (l, h) = (5usize, 3usize);
        let w: Vec<f32> = (0..h * h).map(|i| ((i * 7 % 5) as f32 - 2.0) * 0.1).collect();
        let u: Vec<f32> = (0..h * h).map(|i| ((i * 3 % 7) as f32 - 3.0) * 0.1).collect();
        let xs: Vec<f32> = (0..l * h).map(|i| ((i * 5 % 11) as f32 - 5.0) * 0.2).collect();
        for reverse in [false, true] {
            let json = format!(
                r#"{{"invars":[[0,"f32",[{h},{h}]],[1,"f32",[{h},{h}]],[2,"f32",[{l},{h}]],[3,"f32",[1,{h}]]],"eqns":[
                {{"prim":"scan","params":{{"num_consts":2,"num_carry":1,"length":{l},"reverse":{reverse},"jaxpr":{{
                  "invars":[[0,"f32",[{h},{h}]],[1,"f32",[{h},{h}]],[2,"f32",[1,{h}]],[3,"f32",[{h}]]],"eqns":[
                  {{"prim":"dot_general","params":{{"lhs_contracting":[1],"rhs_contracting":[0],"lhs_batch":[],"rhs_batch":[]}},"in":[2,0],"out":[[4,"f32",[1,{h}]]]}},
                  {{"prim":"reshape","params":{{"new_sizes":[1,{h}]}},"in":[3],"out":[[5,"f32",[1,{h}]]]}},
                  {{"prim":"dot_general","params":{{"lhs_contracting":[1],"rhs_contracting":[0],"lhs_batch":[],"rhs_batch":[]}},"in":[5,1],"out":[[6,"f32",[1,{h}]]]}},
                  {{"prim":"add","in":[4,6],"out":[[7,"f32",[1,{h}]]]}},
                  {{"prim":"tanh","in":[7],"out":[[8,"f32",[1,{h}]]]}}],"outvars":[8,8]}}}},
                 "in":[0,1,3,2],"out":[[4,"f32",[1,{h}]],[5,"f32",[{l},1,{h}]]]}}],"outvars":[4,5]}}"#
            );
            let got = run_json(&json, &[buf(&[h, h], &w), buf(&[h, h], &u), buf(&[l, h], &xs), buf(&[1, h], &[0.0; 3])]);
            // reference loop in f64
            let mut st = vec![0f64; h];
            let mut ys = vec![0f64; l * h];
            for step in 0..l {
                let t = if reverse { l - 1 - step } else { step };
                let mut nh = vec![0f64; h];
                for (j, n) in nh.iter_mut().enumerate() {
                    let mut s = 0f64;
                    for q in 0..h {
                        s += st[q] * w[q * h + j] as f64 + xs[t * h + q] as f64 * u[q * h + j] as f64;
                    }
                    *n = s.tanh();
                }
                ys[t * h..(t + 1) * h].copy_from_slice(&nh);
                st = nh;
            }
            for (g, r) in got[0].iter().zip(&st).chain(got[1].iter().zip(&ys)) {
                assert!((*g as f64 - r).abs() < 1e-5, "reverse={reverse}: {g} vs {r}");
            }
        }
    }
}
