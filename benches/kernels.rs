//! Criterion benches of the Rust core without Python: compile time of elementwise chains (parse → optimize →
//! fuse → Cranelift) and the throughput of fused kernels (add, selu, a tanh chain, sum/max reductions).
//!
//! `cargo bench --bench kernels` (add `-- compile` or `-- throughput` to filter). `CRANAX_NUM_THREADS`
//! sets the kernel thread pool (default: all cores).
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use cranax::backend::cpu::{self, CpuExecutable};
use cranax::buffer::Buffer;
use cranax::ir::{Aval, DType};
use cranax::opt::compile_pipeline;

/// A JSON program over one `f32[shape]` input: `eqns` are (prim, inputs, output id); literals as JSON atoms.
fn program(shape: &[usize], eqns: &[(String, Vec<String>, usize, Vec<usize>, String)], out: usize) -> String {
    let dims = |s: &[usize]| format!("[{}]", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","));
    let e: Vec<String> = eqns
        .iter()
        .map(|(prim, ins, id, oshape, params)| {
            format!(
                r#"{{"prim":"{prim}","params":{params},"in":[{}],"out":[[{id},"f32",{}]]}}"#,
                ins.join(","),
                dims(oshape)
            )
        })
        .collect();
    format!(r#"{{"version":1,"name":"bench","invars":[[0,"f32",{}]],"eqns":[{}],"outvars":[{out}]}}"#, dims(shape), e.join(","))
}

fn lit(v: f64) -> String {
    format!(r#"{{"lit":{v},"dtype":"f32"}}"#)
}

/// `x = tanh(x) * 1.01 + 0.1`, `n` times (the issue's compile-time chain).
fn tanh_chain(n: usize, len: usize) -> String {
    let mut eqns = Vec::new();
    let mut x = 0;
    let mut id = 1;
    for _ in 0..n {
        eqns.push(("tanh".to_string(), vec![x.to_string()], id, vec![len], "{}".to_string()));
        eqns.push(("mul".to_string(), vec![id.to_string(), lit(1.01)], id + 1, vec![len], "{}".to_string()));
        eqns.push(("add".to_string(), vec![(id + 1).to_string(), lit(0.1)], id + 2, vec![len], "{}".to_string()));
        x = id + 2;
        id += 3;
    }
    program(&[len], &eqns, x)
}

/// selu(x) = 1.05 * where(x > 0, x, 1.67 * exp(x) - 1.67).
fn selu(len: usize) -> String {
    let s = vec![len];
    let e = |p: &str, ins: Vec<String>, id: usize| (p.to_string(), ins, id, s.clone(), "{}".to_string());
    let mut eqns = vec![
        e("exp", vec!["0".into()], 1),
        e("mul", vec!["1".into(), lit(1.67)], 2),
        e("sub", vec!["2".into(), lit(1.67)], 3),
    ];
    // gt gives bool: write it by hand.
    let gt = format!(r#"{{"prim":"gt","params":{{}},"in":[0,{}],"out":[[4,"bool",[{len}]]]}}"#, lit(0.0));
    eqns.push(e("mul", vec!["5".into(), lit(1.05)], 6));
    let sel = format!(r#"{{"prim":"select_n","params":{{}},"in":[4,3,0],"out":[[5,"f32",[{len}]]]}}"#);
    let mut json = program(&[len], &eqns, 6);
    // Splice the bool-typed equations in order (gt and select_n before the final mul).
    let pos = json.find(r#"{"prim":"mul","params":{},"in":[5"#).unwrap();
    json.insert_str(pos, &format!("{gt},{sel},"));
    json
}

fn compile(json: &str) -> std::sync::Arc<CpuExecutable> {
    let (_, plan) = compile_pipeline(json).expect("pipeline");
    cpu::compile(&plan).expect("codegen")
}

fn input(len: usize) -> Buffer {
    let bytes: Vec<u8> = (0..len).flat_map(|i| (((i * 7919) % 2001) as f32 / 100.0 - 10.0).to_le_bytes()).collect();
    Buffer::from_bytes(&Aval::new(DType::F32, vec![len]), &bytes).unwrap()
}

fn bench_compile(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile/tanh_chain");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    for n in [10usize, 100, 1000, 10000] {
        let json = tanh_chain(n, 1000);
        g.bench_with_input(BenchmarkId::from_parameter(n), &json, |b, json| b.iter(|| black_box(compile(json))));
    }
    g.finish();
}

fn bench_throughput(c: &mut Criterion) {
    let sizes = [1_000usize, 10_000, 100_000, 1_000_000, 10_000_000];
    let unary = |name: &str, f: &dyn Fn(usize) -> String, c: &mut Criterion| {
        let mut g = c.benchmark_group(format!("throughput/{name}"));
        g.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
        for &n in &sizes {
            let exe = compile(&f(n));
            let x = input(n);
            g.throughput(Throughput::Bytes((n * 4) as u64));
            g.bench_function(BenchmarkId::from_parameter(n), |b| {
                b.iter(|| black_box(exe.run(std::slice::from_ref(&x)).unwrap()))
            });
        }
        g.finish();
    };
    let ew = |prim: &'static str| {
        move |n: usize| {
            let e = vec![(prim.to_string(), vec!["0".into(), "0".into()], 1usize, vec![n], "{}".to_string())];
            program(&[n], &e, 1)
        }
    };
    let red = |prim: &'static str| {
        move |n: usize| {
            let e = vec![(prim.to_string(), vec!["0".into()], 1usize, vec![], r#"{"axes":[0]}"#.to_string())];
            program(&[n], &e, 1)
        }
    };
    unary("add", &ew("add"), c);
    unary("selu", &selu, c);
    unary("tanh_chain_10", &|n| tanh_chain(10, n), c);
    unary("sum", &red("reduce_sum"), c);
    unary("max", &red("reduce_max"), c);
}

criterion_group!(benches, bench_compile, bench_throughput);
criterion_main!(benches);
