//! Tests of fusion (`lower_to_plan`): which equations share a kernel, the kernels' strides, bodies and
//! outputs, and the plans' schedules. A child module of `fusion` in its own file.
use super::*;
use crate::ir::ReduceOp;
use crate::ir::shape::infer;
use crate::ir::{BinaryOp, Eqn, UnaryOp};
use crate::plan::plan_text;

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
                        KOp::Fma { a, b, c } => vec![*a, *b, *c],
                        KOp::Load { input } => {
                            assert!(*input < k.inputs.len());
                            vec![]
                        }
                        KOp::Iota { axis } => {
                            assert!(*axis < k.domain.len());
                            vec![]
                        }
                        KOp::Const { .. } => vec![],
                        KOp::Gather { input, index, fill, .. } => {
                            assert!(*input < k.inputs.len());
                            std::iter::once(*index).chain(*fill).collect()
                        }
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
                            // opt::contract's multiply-adds (the reference computes in f64)
                            KOp::Fma { a, b, c } => v[*a].mul_add(v[*b], v[*c]),
                            KOp::Convert { a } => v[*a],
                            KOp::Gather { input, index, stride, hi, fill } => {
                                let inp = &k.inputs[*input];
                                let off = inp.offset + idx.iter().zip(&inp.strides).map(|(i, s)| *i as isize * s).sum::<isize>();
                                let j = v[*index];
                                match fill {
                                    Some(f) if j < 0.0 || j > *hi as f64 => v[*f],
                                    _ => slots[inp.slot][(off + j.clamp(0.0, *hi as f64) as isize * stride) as usize],
                                }
                            }
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
fn sharing_that_would_make_kernels_wait_on_each_other_is_undone() {
    // softmax(sin(x)) + sum(exp(x - max(x))): per-value sharing puts max(x) with sum(exp(t - max(t))) and
    // max(t) with sum(exp(x - max(x))), two kernels that would each need the other first (issue 21).
    let mut b = B::new();
    let x = b.input(&[5, 8]);
    let softmax_parts = |b: &mut B, v: &Atom| {
        let m = b.eq(Prim::Reduce { op: ReduceOp::Max, axes: vec![1] }, vec![v.clone()]);
        let mb = b.bcast(&m, &[5, 8], &[0]);
        let d = b.bin(BinaryOp::Sub, v, &mb);
        let e = b.un(UnaryOp::Exp, &d);
        let s = b.sum(&e, &[1]);
        (e, s)
    };
    let t = b.un(UnaryOp::Sin, &x);
    let (e1, s1) = softmax_parts(&mut b, &t);
    let s1b = b.bcast(&s1, &[5, 8], &[0]);
    let sm = b.bin(BinaryOp::Div, &e1, &s1b);
    let (_, s2) = softmax_parts(&mut b, &x);
    let s2b = b.bcast(&s2, &[5, 8], &[0]);
    let out = b.bin(BinaryOp::Add, &sm, &s2b);
    let plan = lower_checked(&b.done(vec![out]));
    assert!(kernels(&plan).len() >= 4, "{}", plan_text(&plan));
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
    // broadcast zero used by several kernels is recomputed in each, never stored; `max(y, 0)` joins the
    // kernel that reads `y` for the product (sibling outputs).
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
    assert_eq!(ks.len(), 2, "{}", plan_text(&plan));
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

/// `gather` of one element per index along `axis` of `x` (index vectors `[.., 1]`), as `jnp.take` stages it.
fn gather(b: &mut B, x: &Atom, idx: &Atom, axis: usize, mode: crate::ir::IndexMode) -> Atom {
    let r = b.aval(x).0.shape.len();
    let mut slice_sizes = b.aval(x).0.shape;
    slice_sizes[axis] = 1;
    let op = crate::ir::LibOp::Gather {
        offset_dims: (0..r - 1).collect(),
        collapsed_slice_dims: vec![axis],
        start_index_map: vec![axis],
        slice_sizes,
        mode,
        fill_value: None,
    };
    b.eq(Prim::Lib(op), vec![x.clone(), idx.clone()])
}

fn int_input(b: &mut B, shape: &[usize]) -> Atom {
    b.next += 1;
    let a = Aval::new(DType::I32, shape.to_vec());
    b.avals.insert(b.next, a.clone());
    b.p.invars.push((b.next, a));
    Atom::Var(b.next)
}

#[test]
fn point_gather_fuses_with_its_index_and_its_user() {
    use crate::ir::IndexMode;
    for mode in [IndexMode::Clip, IndexMode::FillOrDrop] {
        let mut b = B::new();
        let x = b.input(&[50]);
        let i = int_input(&mut b, &[20]);
        let j = b.bin(BinaryOp::Add, &i, &Atom::Lit(Scalar::Int(3), DType::I32));
        let jj = b.bcast(&j, &[20, 1], &[0]);
        let g = gather(&mut b, &x, &jj, 0, mode);
        let y = b.un(UnaryOp::Exp, &g);
        let plan = lower_to_plan(&b.done(vec![y])).unwrap();
        check_plan(&plan);
        assert_eq!(plan.steps.len(), 1, "{}", plan_text(&plan));
        let k = kernels(&plan)[0];
        let gi = k.body.iter().find_map(|i| if let KOp::Gather { input, stride, hi, fill, .. } = &i.op { Some((*input, *stride, *hi, *fill)) } else { None });
        let (input, stride, hi, fill) = gi.expect("a gather in the kernel");
        assert_eq!((stride, hi, fill.is_some()), (1, 49, mode == IndexMode::FillOrDrop));
        assert_eq!(k.inputs[input].strides, vec![0], "the operand's base does not move with the domain");
    }
}

#[test]
fn column_gather_fuses_and_row_gather_stays_a_library_step() {
    use crate::ir::IndexMode;
    let mut b = B::new();
    let x = b.input(&[6, 9]);
    let i = int_input(&mut b, &[4, 1]);
    let cols = gather(&mut b, &x, &i, 1, IndexMode::Clip); // x[:, i]: [6, 4]
    let rows = gather(&mut b, &x, &i, 0, IndexMode::Clip); // x[i]: rows of 9, copied whole by the library
    let plan = lower_to_plan(&b.done(vec![cols, rows])).unwrap();
    check_plan(&plan);
    assert_eq!(plan.steps.iter().filter(|s| matches!(s, Step::Library(_))).count(), 1, "{}", plan_text(&plan));
    let k = kernels(&plan).into_iter().find(|k| k.body.iter().any(|i| matches!(i.op, KOp::Gather { .. }))).unwrap();
    assert_eq!(k.domain, vec![6, 4]);
    let g = k.body.iter().find_map(|i| if let KOp::Gather { input, stride, hi, .. } = &i.op { Some((*input, *stride, *hi)) } else { None });
    let (input, stride, hi) = g.unwrap();
    assert_eq!((stride, hi), (1, 8));
    assert_eq!(k.inputs[input].strides, vec![9, 0], "rows follow the domain, columns come from the index");
}

#[test]
fn sibling_outputs_of_shared_operands_share_a_kernel() {
    // lo' = select(p, m, lo), hi' = select(p, hi, m): one kernel computes p and m once and stores both
    let mut b = B::new();
    let (lo, hi) = (b.input(&[64]), b.input(&[64]));
    let m = b.bin(BinaryOp::Add, &lo, &hi);
    let m = b.bin(BinaryOp::Mul, &m, &lit(0.5));
    let p = b.eq(Prim::Compare(crate::ir::CompareOp::Lt), vec![m.clone(), lit(3.0)]);
    let lo2 = b.eq(Prim::SelectN, vec![p.clone(), m.clone(), lo.clone()]);
    let hi2 = b.eq(Prim::SelectN, vec![p, hi.clone(), m]);
    let plan = lower_to_plan(&b.done(vec![lo2, hi2])).unwrap();
    check_plan(&plan);
    assert_eq!(kernels(&plan).len(), 1, "{}", plan_text(&plan));
    assert_eq!(kernels(&plan)[0].outputs.len(), 2);
    // ...but not a reduction's kernel: `sum(x)` keeps its split-reduction path
    let mut b = B::new();
    let x = b.input(&[64]);
    let s = b.sum(&x, &[0]);
    let y = b.bin(BinaryOp::Mul, &x, &lit(2.0));
    let plan = lower_checked(&b.done(vec![y, s]));
    assert_eq!(kernels(&plan).len(), 2, "{}", plan_text(&plan));
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

#[test]
fn two_component_gather_reads_its_concatenated_start_vectors_in_one_kernel() {
    // x[i, 3 * i]: the start vectors' concatenate is read component by component, the components clamped
    // and combined into one row-major offset (stride 1, largest offset 5 * 9 + 8)
    use crate::ir::{IndexMode, LibOp};
    for mode in [IndexMode::Clip, IndexMode::FillOrDrop] {
        let mut b = B::new();
        let x = b.input(&[6, 9]);
        let i = int_input(&mut b, &[20]);
        let j = b.bin(BinaryOp::Mul, &i, &Atom::Lit(Scalar::Int(3), DType::I32));
        let ii = b.bcast(&i, &[20, 1], &[0]);
        let jj = b.bcast(&j, &[20, 1], &[0]);
        let idx = b.eq(Prim::Lib(LibOp::Concatenate { dimension: 1 }), vec![ii, jj]);
        let op = LibOp::Gather {
            offset_dims: vec![],
            collapsed_slice_dims: vec![0, 1],
            start_index_map: vec![0, 1],
            slice_sizes: vec![1, 1],
            mode,
            fill_value: None,
        };
        let g = b.eq(Prim::Lib(op), vec![x, idx]);
        let plan = lower_to_plan(&b.done(vec![g])).unwrap();
        check_plan(&plan);
        assert_eq!(plan.steps.len(), 1, "{}", plan_text(&plan));
        let k = kernels(&plan)[0];
        let gi = k.body.iter().find_map(|i| if let KOp::Gather { stride, hi, fill, .. } = &i.op { Some((*stride, *hi, *fill)) } else { None });
        let (stride, hi, fill) = gi.expect("a gather in the kernel");
        assert_eq!((stride, hi, fill.is_some()), (1, 53, mode == IndexMode::FillOrDrop));
        assert_eq!(k.body.iter().filter(|i| matches!(i.op, KOp::Clamp { .. })).count(), 2);
    }
}
