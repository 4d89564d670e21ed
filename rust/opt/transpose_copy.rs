//! Replaces fused kernels that only move elements under a transposition (one input read with permuted
//! row-major strides, stored unchanged) by a cache-blocked `LibOp::TransposeCopy` library step: a strided
//! scalar loop over a large transposed matrix misses the cache on every read.
use crate::ir::LibOp;
use crate::ir::shape::row_major_strides;
use crate::plan::{KOp, LibStep, OutputKind, Plan, Step};

/// Kernels below this many elements stay kernels.
const MIN_ELEMS: usize = 1 << 14;

pub fn run(mut plan: Plan) -> Plan {
    for step in plan.steps.iter_mut() {
        let Step::Kernel(k) = step else { continue };
        if k.inputs.len() != 1 || k.outputs.len() != 1 || !k.reduce_axes.is_empty() || k.body.len() != 1 {
            continue;
        }
        let (inp, out) = (&k.inputs[0], &k.outputs[0]);
        if !matches!(k.body[0].op, KOp::Load { input: 0 }) || out.value != 0 || out.kind != OutputKind::Store {
            continue;
        }
        let src_shape = &plan.slots[inp.slot].shape;
        let n: usize = k.domain.iter().product();
        if inp.offset != 0 || n < MIN_ELEMS || src_shape.len() != k.domain.len() || k.domain.iter().any(|&d| d < 2) {
            continue;
        }
        let rm = row_major_strides(src_shape);
        // output axis i reads input axis perm[i]
        let mut perm = Vec::with_capacity(k.domain.len());
        for (i, &s) in inp.strides.iter().enumerate() {
            match rm.iter().position(|&r| r as isize == s) {
                Some(j) if src_shape[j] == k.domain[i] && !perm.contains(&j) => perm.push(j),
                _ => break,
            }
        }
        if perm.len() != k.domain.len() || perm.iter().enumerate().all(|(i, &p)| i == p) {
            continue;
        }
        *step = Step::Library(LibStep { op: LibOp::TransposeCopy { permutation: perm }, inputs: vec![inp.slot], outputs: vec![out.slot], epilogue: false });
    }
    plan
}

#[cfg(test)]
mod tests {
    #[test]
    fn big_transposes_become_blocked_copies() {
        let (m, n) = (300, 200);
        let json = format!(
            r#"{{"invars":[[0,"f32",[{m},{n}]]],"eqns":[{{"prim":"transpose","params":{{"permutation":[1,0]}},"in":[0],"out":[[1,"f32",[{n},{m}]]]}}],"outvars":[1]}}"#
        );
        let (_, plan) = crate::opt::compile_pipeline(&json).unwrap();
        assert!(matches!(plan.steps[0], crate::plan::Step::Library(_)), "{}", crate::plan::plan_text(&plan));
        let data: Vec<f32> = (0..m * n).map(|i| i as f32).collect();
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let b = crate::buffer::Buffer::from_bytes(&crate::ir::Aval::new(crate::ir::DType::F32, vec![m, n]), &bytes).unwrap();
        let exe = crate::backend::cpu::compile(&plan).unwrap();
        let out = exe.run(&[b]).unwrap();
        let got: Vec<f32> = out[0].as_bytes().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
        for i in 0..n {
            for j in 0..m {
                assert_eq!(got[i * m + j], data[j * n + i]);
            }
        }
        // 3-D permutation
        let json = r#"{"invars":[[0,"i64",[20,30,40]]],"eqns":[{"prim":"transpose","params":{"permutation":[2,0,1]},"in":[0],"out":[[1,"i64",[40,20,30]]]}],"outvars":[1]}"#;
        let (_, plan) = crate::opt::compile_pipeline(json).unwrap();
        assert!(matches!(plan.steps[0], crate::plan::Step::Library(_)));
        let data: Vec<i64> = (0..24000).collect();
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let b = crate::buffer::Buffer::from_bytes(&crate::ir::Aval::new(crate::ir::DType::I64, vec![20, 30, 40]), &bytes).unwrap();
        let out = crate::backend::cpu::compile(&plan).unwrap().run(&[b]).unwrap();
        let got: Vec<i64> = out[0].as_bytes().chunks(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect();
        for a in 0..40 {
            for b in 0..20 {
                for c in 0..30 {
                    assert_eq!(got[(a * 20 + b) * 30 + c], data[(b * 30 + c) * 40 + a]);
                }
            }
        }
    }
}
