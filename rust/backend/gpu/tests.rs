//! Device-free checks of the WGSL emitter (the device tests are tests/test_gpu.py, run on lavapipe in CI).
use std::collections::BTreeSet;

use super::math::{helper_source, Helper, Width, ALL};
use super::wgsl::literal;
use crate::ir::{DType, Scalar};

/// Every helper's source, with its dependencies, defines each function it calls.
#[test]
fn helper_closures_define_what_they_call() {
    let all = [
        Helper::Exp, Helper::Log1p, Helper::Tanh, Helper::Sin, Helper::Cos, Helper::Tan, Helper::Erf,
        Helper::ErfInv, Helper::Ndtri, Helper::Lgamma, Helper::Digamma, Helper::Atan2F32, Helper::Asinh, Helper::Acosh,
        Helper::Atanh, Helper::PowF32, Helper::Fmod(Width::F32), Helper::Cbrt, Helper::Acos, Helper::Sinh, Helper::Cosh,
    ];
    for h in all {
        let src = helper_source(&BTreeSet::from([h]));
        assert!(src.contains(&format!("fn {}(", h.name())), "{h:?}");
        // Each identifier followed by '(' that looks like one of ours (ends in _x / _f / is a helper) is defined.
        for word in src.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '(')) {
            if let Some(name) = word.strip_suffix('(') {
                let ours = name.ends_with("_x") || name.ends_with("_f") || name.ends_with("_poly") || name.starts_with("rem_");
                if ours {
                    assert!(src.contains(&format!("fn {name}(")), "{h:?} calls {name} without defining it");
                }
            }
        }
    }
}

#[test]
fn literals_are_exact() {
    assert_eq!(literal(Scalar::Int(i32::MIN as i64), DType::I32).unwrap(), "bitcast<i32>(0x80000000u)");
    assert_eq!(literal(Scalar::Int(-5), DType::I32).unwrap(), "-5i");
    assert_eq!(literal(Scalar::Int(u32::MAX as i64), DType::U32).unwrap(), "4294967295u");
    assert_eq!(literal(Scalar::Float(f64::INFINITY), DType::F32).unwrap(), "bitcast<f32>(0x7f800000u)");
    assert_eq!(literal(Scalar::Float(-0.0), DType::F32).unwrap(), "bitcast<f32>(0x80000000u)");
    assert_eq!(literal(Scalar::Float(1e-45), DType::F32).unwrap(), "bitcast<f32>(0x00000001u)");
    assert_eq!(literal(Scalar::Float(0.1), DType::F32).unwrap(), "0.1f");
    assert_eq!(literal(Scalar::Bool(true), DType::Bool).unwrap(), "true");
}

#[test]
fn wide_literals_are_exact() {
    assert_eq!(literal(Scalar::Int(i64::MIN), DType::I64).unwrap(), "bitcast<i64>(0x8000000000000000lu)");
    assert_eq!(literal(Scalar::Int(-5), DType::I64).unwrap(), "-5li");
    assert_eq!(literal(Scalar::Float(0.1), DType::F64).unwrap(), "0.1lf");
    assert_eq!(literal(Scalar::Float(f64::NEG_INFINITY), DType::F64).unwrap(), "bitcast<f64>(0xfff0000000000000lu)");
    assert_eq!(literal(Scalar::Float(5e-324), DType::F64).unwrap(), "bitcast<f64>(0x0000000000000001lu)");
}

/// The width-generic helpers expand completely (no `$` token left) and define the name they are called by.
#[test]
fn every_helper_expands_and_defines_its_name() {
    for &h in ALL {
        let src = helper_source(&BTreeSet::from([h]));
        assert!(!src.contains('$'), "{h:?}: unexpanded token in\n{src}");
        assert!(src.contains(&format!("fn {}(", h.name())), "{h:?}");
    }
    let f64_round = helper_source(&BTreeSet::from([Helper::Round(Width::F64)]));
    assert!(f64_round.contains("fn round_d(x: f64, mode: u32) -> f64") && f64_round.contains("0xfffffffffffffl"));
}

/// A fused one-element gather reads its binding at the clamped index, with the fill test under `fill`.
#[test]
fn gather_reads_the_binding_at_the_clamped_index() {
    use crate::ir::Aval;
    use crate::plan::{KInstr, KOp, Kernel, KernelInput, KernelOutput, OutputKind, Plan, Step};
    let body = vec![
        KInstr { op: KOp::Load { input: 0 }, dtype: DType::I32 },
        KInstr { op: KOp::Const { value: Scalar::Float(f64::NAN) }, dtype: DType::F32 },
        KInstr { op: KOp::Gather { input: 1, index: 0, stride: 1, hi: 9, fill: Some(1) }, dtype: DType::F32 },
    ];
    let k = Kernel {
        name: "k".into(),
        domain: vec![5],
        reduce_axes: vec![],
        inputs: vec![
            KernelInput { slot: 0, dtype: DType::I32, strides: vec![1], offset: 0 },
            KernelInput { slot: 1, dtype: DType::F32, strides: vec![0], offset: 0 },
        ],
        body,
        outputs: vec![KernelOutput { slot: 2, value: 2, kind: OutputKind::Store }],
    };
    let slots = vec![Aval::new(DType::I32, vec![5]), Aval::new(DType::F32, vec![10]), Aval::new(DType::F32, vec![5])];
    let plan = Plan { name: "t".into(), num_inputs: 2, slots, steps: vec![Step::Kernel(k.clone())], outputs: vec![2] };
    let src = super::wgsl::kernel_shader(&k, &plan, 65535).unwrap().source;
    assert!(src.contains("u32(clamp(v0, 0i, 9i))") && src.contains("select(v1, "), "{src}");
}
