//! Bounded fuzzing of the deserializer, the verifier and the optimizer: they never panic, whatever the bytes.
//!
//! Three generators, each a fixed number of cases from a fixed seed (so `cargo test` is deterministic and
//! bounded; `CRANAX_FUZZ_CASES=N` and `CRANAX_FUZZ_SEED=S` run more or other cases):
//! - arbitrary bytes (as lossy UTF-8);
//! - mutations of the committed corpus (`rust/ir/fuzz_corpus/*.json`, real programs lowered by the Python front
//!   end): byte flips, insertions, deletions, splices, and JSON-aware edits that replace a number with an
//!   extreme value (negative, 2^31, 2^32, 2^63, 1e308, a fraction), a string with another primitive or dtype
//!   name, or drop/duplicate an array element;
//! - structurally generated programs: random dtypes and shapes (huge dims included), known primitive names
//!   with random params, dangling and duplicate variable ids.
//!
//! Every input goes through `parse_program`, then (when it parses) `verify`, then (when it verifies) the
//! optimizer and the fusion planner. A panic anywhere is a failure that prints the input.
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::{json, Value};

/// xorshift64*: small, deterministic, good enough to drive mutations.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

fn cases(default: usize) -> usize {
    std::env::var("CRANAX_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn seed() -> u64 {
    std::env::var("CRANAX_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed)
}

/// Parse → verify → optimize → plan; returns how far it got. Panics propagate (caught by `check`).
fn pipeline(text: &str) -> usize {
    let Ok(p) = crate::ir::parse::parse_program(text) else { return 0 };
    if crate::ir::verify::verify(&p).is_err() {
        return 1;
    }
    // Printing a verified program must not panic either.
    let _ = crate::ir::print::print(&p);
    let Ok(p) = crate::opt::optimize(p) else { return 2 };
    if crate::opt::fusion::lower_to_plan(&p).is_err() {
        return 3;
    }
    4
}

fn check(text: &str, stats: &mut [usize; 5]) {
    let r = catch_unwind(AssertUnwindSafe(|| pipeline(text)));
    match r {
        Ok(stage) => stats[stage] += 1,
        Err(p) => {
            let msg = crate::error::panic_message(&*p);
            let shown: String = text.chars().take(4000).collect();
            panic!("the compiler front half panicked ({msg}) on input:\n{shown}");
        }
    }
}

fn corpus() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rust/ir/fuzz_corpus");
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "json") {
                if let Ok(s) = std::fs::read_to_string(&p) {
                    out.push(s);
                }
            }
        }
    }
    out
}

const PRIMS: &[&str] = &[
    "add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2", "and", "or", "xor", "not", "neg", "abs",
    "sign", "floor", "ceil", "round", "exp", "log", "sin", "tanh", "logistic", "sqrt", "integer_pow", "eq", "lt",
    "select_n", "clamp", "convert_element_type", "bitcast_convert_type", "broadcast_in_dim", "reshape",
    "squeeze", "expand_dims", "transpose", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod",
    "reduce_and", "reduce_or", "argmax", "argmin", "iota", "slice", "rev", "pad", "concatenate", "dot_general",
    "dynamic_slice", "dynamic_update_slice", "gather", "scatter", "scatter-add", "sort", "cumsum", "cummax",
    "copy", "copy_p", "shift_left", "shift_right_logical", "population_count", "is_finite", "nextafter", "cond",
    "while", "scan", "nope",
];
const DTYPES: &[&str] = &["bool", "i32", "u32", "i64", "f32", "f64", "c64", "", "F32"];
const PARAM_KEYS: &[&str] = &[
    "y", "new_dtype", "shape", "broadcast_dimensions", "new_sizes", "dimensions", "permutation", "axes",
    "index_dtype", "dtype", "dimension", "rounding_method", "start_indices", "limit_indices", "strides",
    "padding_config", "dimension_numbers", "slice_sizes", "num_keys", "is_stable", "axis", "reverse",
    "branches", "cond_jaxpr", "body_jaxpr", "jaxpr", "length", "num_carry", "num_consts", "cond_nconsts",
    "body_nconsts", "mode", "fill_value", "unique_indices", "indices_are_sorted", "update_jaxpr",
];

fn extreme_number(r: &mut Rng) -> Value {
    match r.below(14) {
        0 => json!(-1),
        1 => json!(0),
        2 => json!(1),
        3 => json!(2147483648u64),
        4 => json!(4294967296u64),
        5 => json!(9223372036854775807u64),
        6 => json!(18446744073709551615u64),
        7 => json!(1e308),
        8 => json!(-1e308),
        9 => json!(0.5),
        10 => json!(-9223372036854775807i64),
        11 => json!(r.below(8)),
        12 => json!(r.below(100000)),
        _ => json!(r.below(4) as i64 - 2),
    }
}

fn random_value(r: &mut Rng, depth: usize) -> Value {
    match r.below(if depth > 2 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => json!(r.chance(2)),
        2 | 3 => extreme_number(r),
        4 => json!(*r.pick(DTYPES)),
        5 => json!(*r.pick(PRIMS)),
        6 | 7 => Value::Array((0..r.below(4)).map(|_| random_value(r, depth + 1)).collect()),
        _ => {
            let mut m = serde_json::Map::new();
            for _ in 0..r.below(4) {
                m.insert(r.pick(PARAM_KEYS).to_string(), random_value(r, depth + 1));
            }
            Value::Object(m)
        }
    }
}

fn random_shape(r: &mut Rng) -> Value {
    let n = r.below(4);
    Value::Array(
        (0..n)
            .map(|_| if r.chance(12) { extreme_number(r) } else { json!(r.below(5)) })
            .collect(),
    )
}

fn random_typed_var(r: &mut Rng, id: usize) -> Value {
    json!([id, *r.pick(&DTYPES[..6]), random_shape(r)])
}

fn random_atom(r: &mut Rng, next_id: usize) -> Value {
    if r.chance(4) {
        let dt = *r.pick(DTYPES);
        let v = match r.below(4) {
            0 => json!("nan"),
            1 => json!(r.chance(2)),
            _ => extreme_number(r),
        };
        json!({"lit": v, "dtype": dt})
    } else if r.chance(15) {
        extreme_number(r)
    } else {
        json!(r.below(next_id + 1))
    }
}

/// A structurally plausible program: valid-looking fields, random content.
fn random_program(r: &mut Rng, depth: usize) -> Value {
    let n_in = r.below(4);
    let invars: Vec<Value> = (0..n_in).map(|i| random_typed_var(r, i)).collect();
    let mut next = n_in;
    let mut eqns = Vec::new();
    for _ in 0..r.below(6) {
        let prim = *r.pick(PRIMS);
        let ins: Vec<Value> = (0..r.below(4)).map(|_| random_atom(r, next)).collect();
        let n_out = if r.chance(6) { r.below(3) } else { 1 };
        let outs: Vec<Value> = (0..n_out)
            .map(|_| {
                let v = random_typed_var(r, next);
                next += 1;
                v
            })
            .collect();
        let mut params = serde_json::Map::new();
        for _ in 0..r.below(4) {
            let key = r.pick(PARAM_KEYS).to_string();
            let v = if depth < 2 && r.chance(6) { random_program(r, depth + 1) } else { random_value(r, 0) };
            params.insert(key, v);
        }
        eqns.push(json!({"prim": prim, "params": params, "in": ins, "out": outs}));
    }
    let outvars: Vec<Value> = (0..r.below(3) + 1).map(|_| random_atom(r, next)).collect();
    json!({"version": 1, "name": "fuzz", "invars": invars, "eqns": eqns, "outvars": outvars})
}

/// JSON-aware mutation: walks to a random node and replaces/perturbs it.
fn mutate_value(r: &mut Rng, v: &mut Value, depth: usize) {
    let descend = depth < 12 && r.below(4) != 0;
    match v {
        Value::Array(xs) if descend && !xs.is_empty() => {
            let i = r.below(xs.len());
            match r.below(8) {
                0 => {
                    xs.remove(i);
                }
                1 => {
                    let x = xs[i].clone();
                    xs.insert(i, x);
                }
                _ => mutate_value(r, &mut xs[i], depth + 1),
            }
        }
        Value::Object(m) if descend && !m.is_empty() => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let k = r.pick(&keys).clone();
            match r.below(8) {
                0 => {
                    m.remove(&k);
                }
                1 => {
                    m.insert(r.pick(PARAM_KEYS).to_string(), random_value(r, 0));
                }
                _ => {
                    if let Some(x) = m.get_mut(&k) {
                        mutate_value(r, x, depth + 1)
                    }
                }
            }
        }
        Value::Number(_) => *v = extreme_number(r),
        Value::String(_) => *v = if r.chance(2) { json!(*r.pick(PRIMS)) } else { json!(*r.pick(DTYPES)) },
        _ => *v = random_value(r, 0),
    }
}

fn mutate_bytes(r: &mut Rng, s: &str, other: &str) -> String {
    let mut b = s.as_bytes().to_vec();
    for _ in 0..1 + r.below(4) {
        let n = b.len();
        match r.below(5) {
            0 if n > 0 => {
                let i = r.below(n);
                b[i] ^= 1 << r.below(8);
            }
            1 => {
                let i = r.below(n + 1);
                let c = *r.pick(b"{}[],:\"0123456789-.eE nultrfas\x00\xff");
                b.insert(i, c);
            }
            2 if n > 0 => {
                let i = r.below(n);
                let j = (i + 1 + r.below(16)).min(n);
                b.drain(i..j);
            }
            3 => {
                // splice a chunk of another input
                let o = other.as_bytes();
                if !o.is_empty() {
                    let i = r.below(o.len());
                    let j = (i + r.below(64)).min(o.len());
                    let at = r.below(n + 1);
                    b.splice(at..at, o[i..j].iter().copied());
                }
            }
            _ if n > 0 => b.truncate(r.below(n)),
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

#[test]
fn arbitrary_bytes_never_panic() {
    let mut r = Rng::new(seed());
    let mut stats = [0usize; 5];
    for _ in 0..cases(3000) {
        let n = r.below(200);
        let bytes: Vec<u8> = (0..n)
            .map(|_| if r.chance(2) { *r.pick(b"{}[]\",:0123456789-.eEnulltruefalse \"prim\" \"in\"") } else { r.next() as u8 })
            .collect();
        check(&String::from_utf8_lossy(&bytes), &mut stats);
    }
    assert!(stats[0] > 0);
}

#[test]
fn corpus_parses_verifies_and_plans() {
    let corpus = corpus();
    assert!(corpus.len() >= 10, "the committed fuzz corpus (rust/ir/fuzz_corpus) is missing");
    let mut stats = [0usize; 5];
    for s in &corpus {
        check(s, &mut stats);
    }
    // Every committed program is a real one: it gets through the whole front half.
    assert_eq!(stats[4], corpus.len(), "stages reached: {stats:?}");
}

#[test]
fn mutated_corpus_never_panics() {
    let corpus = corpus();
    assert!(!corpus.is_empty());
    let values: Vec<Value> = corpus.iter().filter_map(|s| serde_json::from_str(s).ok()).collect();
    let mut r = Rng::new(seed() ^ 0xC0FFEE);
    let mut stats = [0usize; 5];
    for _ in 0..cases(4000) {
        if r.chance(2) {
            let mut v = r.pick(&values).clone();
            for _ in 0..1 + r.below(3) {
                mutate_value(&mut r, &mut v, 0);
            }
            check(&v.to_string(), &mut stats);
        } else {
            let s = r.pick(&corpus);
            let o = r.pick(&corpus);
            check(&mutate_bytes(&mut r, s, o), &mut stats);
        }
    }
    // The mutations reach every stage (else they test only the JSON reader).
    assert!(stats[1] > 0 && stats[4] > 0, "stages reached: {stats:?}");
}

#[test]
fn generated_programs_never_panic() {
    let mut r = Rng::new(seed() ^ 0xBEEF);
    let mut stats = [0usize; 5];
    for _ in 0..cases(4000) {
        let p = random_program(&mut r, 0);
        check(&p.to_string(), &mut stats);
    }
    assert!(stats[1] > 0, "stages reached: {stats:?}");
}
