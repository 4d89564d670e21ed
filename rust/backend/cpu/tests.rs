//! Plans built by hand (no Python), run through the Cranelift backend, checked against Rust std / NumPy
//! semantics.
use std::fmt::Debug;

use super::*;
use crate::ir::{Aval, BinaryOp, CompareOp, DType, ReduceOp, Scalar, UnaryOp};
use crate::plan::{KInstr, KOp, Kernel, KernelInput, KernelOutput, OutputKind, Plan, Step};

trait Elem: Copy + Debug + PartialEq {
    const DT: DType;
    fn put(self, out: &mut Vec<u8>);
    fn get(b: &[u8]) -> Self;
}
macro_rules! elem {
    ($t:ty, $dt:expr) => {
        impl Elem for $t {
            const DT: DType = $dt;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes())
            }
            fn get(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().unwrap())
            }
        }
    };
}
elem!(f32, DType::F32);
elem!(f64, DType::F64);
elem!(i32, DType::I32);
elem!(u32, DType::U32);
elem!(i64, DType::I64);
elem!(i8, DType::I8);
elem!(u8, DType::U8);
elem!(i16, DType::I16);
elem!(u16, DType::U16);
impl Elem for bool {
    const DT: DType = DType::Bool;
    fn put(self, out: &mut Vec<u8>) {
        out.push(self as u8)
    }
    fn get(b: &[u8]) -> Self {
        assert!(b[0] <= 1, "bool byte {}", b[0]);
        b[0] == 1
    }
}

fn buf<T: Elem>(shape: &[usize], data: &[T]) -> Buffer {
    let mut bytes = Vec::new();
    data.iter().for_each(|x| x.put(&mut bytes));
    Buffer::from_bytes(&Aval::new(T::DT, shape.to_vec()), &bytes).unwrap()
}

fn read<T: Elem>(b: &Buffer) -> Vec<T> {
    assert_eq!(b.dtype(), T::DT);
    b.as_bytes().chunks(T::DT.size()).map(T::get).collect()
}

fn ins(op: KOp, dtype: DType) -> KInstr {
    KInstr { op, dtype }
}
fn load(input: usize, dt: DType) -> KInstr {
    ins(KOp::Load { input }, dt)
}
fn un(op: UnaryOp, a: usize, dt: DType) -> KInstr {
    ins(KOp::Unary { op, a }, dt)
}
fn bin(op: BinaryOp, a: usize, b: usize, dt: DType) -> KInstr {
    ins(KOp::Binary { op, a, b }, dt)
}
fn row_major(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for d in (0..shape.len()).rev() {
        s[d] = acc;
        acc *= shape[d] as isize;
    }
    s
}
fn kin(slot: usize, dt: DType, strides: Vec<isize>) -> KernelInput {
    KernelInput { slot, dtype: dt, strides, offset: 0 }
}

/// A one-kernel plan: input slots are `in_avals`, output slots follow in the order of `outs`.
fn plan1(
    in_avals: Vec<Aval>, domain: Vec<usize>, reduce_axes: Vec<usize>, inputs: Vec<KernelInput>, body: Vec<KInstr>,
    outs: Vec<(Aval, usize, OutputKind)>,
) -> Plan {
    let n = in_avals.len();
    let mut slots = in_avals;
    let mut outputs = Vec::new();
    let mut kouts = Vec::new();
    for (i, (a, v, kind)) in outs.into_iter().enumerate() {
        slots.push(a);
        outputs.push(n + i);
        kouts.push(KernelOutput { slot: n + i, value: v, kind });
    }
    let k = Kernel { name: "k".into(), domain, reduce_axes, inputs, body, outputs: kouts };
    Plan { name: "test".into(), num_inputs: n, slots, steps: vec![Step::Kernel(k)], outputs }
}

fn run_plan(plan: &Plan, inputs: &[Buffer]) -> Vec<Buffer> {
    let exe = compile(plan).unwrap_or_else(|e| panic!("compile failed: {e}\n{plan:#?}"));
    exe.run(inputs).unwrap()
}

/// Elementwise 1-D binary op.
fn binop<T: Elem, R: Elem>(op: BinaryOp, x: &[T], y: &[T]) -> Vec<R> {
    let n = x.len();
    let a = Aval::new(T::DT, vec![n]);
    let p = plan1(
        vec![a.clone(), a],
        vec![n],
        vec![],
        vec![kin(0, T::DT, vec![1]), kin(1, T::DT, vec![1])],
        vec![load(0, T::DT), load(1, T::DT), bin(op, 0, 1, R::DT)],
        vec![(Aval::new(R::DT, vec![n]), 2, OutputKind::Store)],
    );
    read(&run_plan(&p, &[buf(&[n], x), buf(&[n], y)])[0])
}

/// Elementwise 1-D op given by body instructions after `load(0)` (the last is the output).
fn unop_body<T: Elem, R: Elem>(x: &[T], rest: Vec<KInstr>) -> Vec<R> {
    let n = x.len();
    let mut body = vec![load(0, T::DT)];
    body.extend(rest);
    let v = body.len() - 1;
    let p = plan1(
        vec![Aval::new(T::DT, vec![n])],
        vec![n],
        vec![],
        vec![kin(0, T::DT, vec![1])],
        body,
        vec![(Aval::new(R::DT, vec![n]), v, OutputKind::Store)],
    );
    read(&run_plan(&p, &[buf(&[n], x)])[0])
}

fn unop<T: Elem>(op: UnaryOp, x: &[T]) -> Vec<T> {
    unop_body(x, vec![un(op, 0, T::DT)])
}

fn convert<T: Elem, R: Elem>(x: &[T]) -> Vec<R> {
    unop_body(x, vec![ins(KOp::Convert { a: 0 }, R::DT)])
}

fn same_f32(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()), "{a:?} != {b:?}");
    }
}

/// Error of `got` in float32 ulps of the exact `want`.
/// `x` with float32 subnormals read as zeros of their sign (denormals-are-zero, `fpenv.rs`).
fn daz(x: f32) -> f32 {
    if x.is_subnormal() { 0.0f32.copysign(x) } else { x }
}

/// The f64 value `want` as a kernel running with FTZ/DAZ may return it: zero where it is float32-subnormal.
fn ftz(want: f64) -> f64 {
    if want != 0.0 && want.abs() < f32::MIN_POSITIVE as f64 { 0.0f64.copysign(want) } else { want }
}

/// `ulp_err` accepting either subnormal semantics: kept (IEEE) or flushed (FTZ/DAZ, as JAX's CPU backend).
fn ulp_err_either(got: f32, want: f64, flushed: f64) -> f64 {
    ulp_err(got, want).min(ulp_err(got, flushed))
}

fn ulp_err(got: f32, want: f64) -> f64 {
    if got.is_nan() && want.is_nan() {
        return 0.0;
    }
    if got as f64 == want || (want as f32).to_bits() == got.to_bits() {
        return 0.0;
    }
    if got.is_infinite() || want.is_infinite() || got.is_nan() || want.is_nan() {
        return f64::INFINITY;
    }
    let a = want.abs().max(f32::MIN_POSITIVE as f64);
    let ulp = 2f64.powi(a.log2().floor() as i32 - 23);
    (got as f64 - want).abs() / ulp
}

#[test]
fn executable_is_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<CpuExecutable>();
}

#[test]
fn add_mul_broadcast_f32() {
    // out[i, j] = x[i, j] * y[j] + x[i, j], y broadcast along axis 0 with stride 0.
    let x: Vec<f32> = (0..6).map(|v| v as f32).collect();
    let y = [10.0f32, 20.0, 30.0];
    let p = plan1(
        vec![Aval::new(DType::F32, vec![2, 3]), Aval::new(DType::F32, vec![3])],
        vec![2, 3],
        vec![],
        vec![kin(0, DType::F32, vec![3, 1]), kin(1, DType::F32, vec![0, 1])],
        vec![
            load(0, DType::F32),
            load(1, DType::F32),
            bin(BinaryOp::Mul, 0, 1, DType::F32),
            bin(BinaryOp::Add, 2, 0, DType::F32),
        ],
        vec![(Aval::new(DType::F32, vec![2, 3]), 3, OutputKind::Store)],
    );
    let out = run_plan(&p, &[buf(&[2, 3], &x), buf(&[3], &y)]);
    let want: Vec<f32> = (0..6).map(|i| x[i] * y[i % 3] + x[i]).collect();
    same_f32(&read::<f32>(&out[0]), &want);
}

/// out[p] = x[clamp(i[p], 0, hi)] (or `fill` outside `0..=hi`), over enough points for the vector loop and
/// its tail, with signed and unsigned indices.
#[test]
fn gather_clamps_and_fills() {
    let x: Vec<f32> = (0..10).map(|v| v as f32 * 1.5).collect();
    let idx: Vec<i32> = (0..37).map(|p| (p * 7 % 29) - 9).collect();
    for fill in [false, true] {
        let mut body = vec![load(0, DType::I32), ins(KOp::Const { value: Scalar::Float(-2.0) }, DType::F32)];
        body.push(ins(KOp::Gather { input: 1, index: 0, stride: 1, hi: 9, fill: fill.then_some(1) }, DType::F32));
        let p = plan1(
            vec![Aval::new(DType::I32, vec![37]), Aval::new(DType::F32, vec![10])],
            vec![37],
            vec![],
            vec![kin(0, DType::I32, vec![1]), kin(1, DType::F32, vec![0])],
            body,
            vec![(Aval::new(DType::F32, vec![37]), 2, OutputKind::Store)],
        );
        let out = run_plan(&p, &[buf(&[37], &idx), buf(&[10], &x)]);
        let want: Vec<f32> =
            idx.iter().map(|&i| if fill && !(0..10).contains(&i) { -2.0 } else { x[i.clamp(0, 9) as usize] }).collect();
        same_f32(&read::<f32>(&out[0]), &want);
    }
    // u32 indices read as unsigned: 4294967295 clamps to the top
    let uidx: Vec<u32> = vec![0, 3, u32::MAX, 9, 10, 1 << 31];
    let p = plan1(
        vec![Aval::new(DType::U32, vec![6]), Aval::new(DType::F32, vec![10])],
        vec![6],
        vec![],
        vec![kin(0, DType::U32, vec![1]), kin(1, DType::F32, vec![0])],
        vec![load(0, DType::U32), ins(KOp::Gather { input: 1, index: 0, stride: 1, hi: 9, fill: None }, DType::F32)],
        vec![(Aval::new(DType::F32, vec![6]), 1, OutputKind::Store)],
    );
    let out = run_plan(&p, &[buf(&[6], &uidx), buf(&[10], &x)]);
    same_f32(&read::<f32>(&out[0]), &[0.0, 4.5, 13.5, 13.5, 13.5, 13.5]);
}

/// A gather whose clamped reads could leave its buffer is refused by the validator, never compiled.
#[test]
fn gather_beyond_its_buffer_is_refused() {
    let p = plan1(
        vec![Aval::new(DType::I32, vec![4]), Aval::new(DType::F32, vec![10])],
        vec![4],
        vec![],
        vec![kin(0, DType::I32, vec![1]), kin(1, DType::F32, vec![0])],
        vec![load(0, DType::I32), ins(KOp::Gather { input: 1, index: 0, stride: 1, hi: 10, fill: None }, DType::F32)],
        vec![(Aval::new(DType::F32, vec![4]), 1, OutputKind::Store)],
    );
    let err = compile(&p).err().expect("refused").to_string();
    assert!(err.contains("gathers outside"), "{err}");
}

#[test]
fn transposed_load_with_offset() {
    // out[i, j] = x[j, i] over domain [4, 3], x of shape [3, 4]; and a second input read at offset 5
    // with a negative stride (reversal of the second row).
    let x: Vec<f32> = (0..12).map(|v| v as f32).collect();
    let p = plan1(
        vec![Aval::new(DType::F32, vec![3, 4])],
        vec![4, 3],
        vec![],
        vec![kin(0, DType::F32, vec![1, 4])],
        vec![load(0, DType::F32)],
        vec![(Aval::new(DType::F32, vec![4, 3]), 0, OutputKind::Store)],
    );
    let out = read::<f32>(&run_plan(&p, &[buf(&[3, 4], &x)])[0]);
    let want: Vec<f32> = (0..12).map(|f| x[(f % 3) * 4 + f / 3]).collect();
    same_f32(&out, &want);

    let p = plan1(
        vec![Aval::new(DType::F32, vec![3, 4])],
        vec![4],
        vec![],
        vec![KernelInput { slot: 0, dtype: DType::F32, strides: vec![-1], offset: 7 }],
        vec![load(0, DType::F32)],
        vec![(Aval::new(DType::F32, vec![4]), 0, OutputKind::Store)],
    );
    same_f32(&read::<f32>(&run_plan(&p, &[buf(&[3, 4], &x)])[0]), &[7.0, 6.0, 5.0, 4.0]);
}

fn reduce3(x: &[f32], axes: Vec<usize>, kind: OutputKind) -> Buffer {
    let shape = vec![2usize, 3, 4];
    let out_shape: Vec<usize> = (0..3).filter(|d| !axes.contains(d)).map(|d| shape[d]).collect();
    let odt = if matches!(kind, OutputKind::ArgReduce { .. }) { DType::I32 } else { DType::F32 };
    let p = plan1(
        vec![Aval::new(DType::F32, shape.clone())],
        shape.clone(),
        axes,
        vec![kin(0, DType::F32, row_major(&shape))],
        vec![load(0, DType::F32)],
        vec![(Aval::new(odt, out_shape), 0, kind)],
    );
    run_plan(&p, &[buf(&shape, x)]).remove(0)
}

#[test]
fn reductions_inner_outer_all() {
    let x: Vec<f32> = (0..24).map(|v| ((v * 7) % 11) as f32 - 5.0).collect();
    let at = |i: usize, j: usize, k: usize| x[i * 12 + j * 4 + k];
    type F = fn(f32, f32) -> f32;
    let cases: [(ReduceOp, F, f32); 4] = [
        (ReduceOp::Sum, |a, b| a + b, 0.0),
        (ReduceOp::Max, f32::max, f32::NEG_INFINITY),
        (ReduceOp::Min, f32::min, f32::INFINITY),
        (ReduceOp::Prod, |a, b| a * b, 1.0),
    ];
    for (op, f, init) in cases {
        // inner axis 2
        let got = read::<f32>(&reduce3(&x, vec![2], OutputKind::Reduce(op)));
        let want: Vec<f32> = (0..6).map(|r| (0..4).fold(init, |a, k| f(a, at(r / 3, r % 3, k)))).collect();
        same_f32(&got, &want);
        // outer axis 0
        let got = read::<f32>(&reduce3(&x, vec![0], OutputKind::Reduce(op)));
        let want: Vec<f32> = (0..12).map(|r| (0..2).fold(init, |a, i| f(a, at(i, r / 4, r % 4)))).collect();
        same_f32(&got, &want);
        // axes 0 and 2
        let got = read::<f32>(&reduce3(&x, vec![0, 2], OutputKind::Reduce(op)));
        let want: Vec<f32> =
            (0..3).map(|j| (0..2).fold(init, |a, i| (0..4).fold(a, |a, k| f(a, at(i, j, k))))).collect();
        same_f32(&got, &want);
        // all
        let got = read::<f32>(&reduce3(&x, vec![0, 1, 2], OutputKind::Reduce(op)));
        same_f32(&got, &[x.iter().fold(init, |a, &v| f(a, v))]);
    }
}

#[test]
fn argmax_argmin_with_ties_and_nan() {
    let mut x: Vec<f32> = vec![0.0; 24];
    // row (0, 0): max 5 at k=1 and k=3 -> first (1); min -1 at k=2.
    x[0..4].copy_from_slice(&[1.0, 5.0, -1.0, 5.0]);
    // row (0, 1): NaN at k=2 wins both.
    x[4..8].copy_from_slice(&[1.0, 9.0, f32::NAN, f32::NAN]);
    // row (0, 2): all -inf -> 0 for argmax.
    x[8..12].copy_from_slice(&[f32::NEG_INFINITY; 4]);
    let amax = read::<i32>(&reduce3(&x, vec![2], OutputKind::ArgReduce { is_max: true }));
    let amin = read::<i32>(&reduce3(&x, vec![2], OutputKind::ArgReduce { is_max: false }));
    assert_eq!(&amax[..3], &[1, 2, 0]);
    assert_eq!(&amin[..3], &[2, 2, 0]);
    assert_eq!(&amax[3..], &[0, 0, 0]);
    // argmax along the middle axis (i64 index).
    let shape = vec![2usize, 3, 4];
    let y: Vec<i32> = (0..24).map(|v| (v * 5) % 7).collect();
    let p = plan1(
        vec![Aval::new(DType::I32, shape.clone())],
        shape.clone(),
        vec![1],
        vec![kin(0, DType::I32, row_major(&shape))],
        vec![load(0, DType::I32)],
        vec![(Aval::new(DType::I64, vec![2, 4]), 0, OutputKind::ArgReduce { is_max: true })],
    );
    let got = read::<i64>(&run_plan(&p, &[buf(&shape, &y)])[0]);
    let want: Vec<i64> = (0..8)
        .map(|r| {
            let (i, k) = (r / 4, r % 4);
            let col: Vec<i32> = (0..3).map(|j| y[i * 12 + j * 4 + k]).collect();
            let m = *col.iter().max().unwrap();
            col.iter().position(|&v| v == m).unwrap() as i64
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn int_div_rem_edge_cases() {
    use BinaryOp::{Div, Rem};
    let x = [7i32, -7, 7, -7, 5, i32::MIN, i32::MIN, 0, -3];
    let y = [2i32, 2, -2, -2, 0, -1, 0, 0, 7];
    assert_eq!(binop::<i32, i32>(Div, &x, &y), vec![3, -3, -3, 3, -1, i32::MIN, -1, -1, 0]);
    assert_eq!(binop::<i32, i32>(Rem, &x, &y), vec![1, -1, 1, -1, 5, 0, i32::MIN, 0, -3]);

    let x = [7i64, -7, i64::MIN, i64::MIN, 9, -9];
    let y = [-2i64, 0, -1, 0, 4, 0];
    assert_eq!(binop::<i64, i64>(Div, &x, &y), vec![-3, -1, i64::MIN, -1, 2, -1]);
    assert_eq!(binop::<i64, i64>(Rem, &x, &y), vec![1, -7, 0, i64::MIN, 1, -9]);

    let x = [7u32, u32::MAX, 5, 0, u32::MAX];
    let y = [2u32, 0, 0, 0, 2];
    assert_eq!(binop::<u32, u32>(Div, &x, &y), vec![3, u32::MAX, u32::MAX, u32::MAX, u32::MAX / 2]);
    assert_eq!(binop::<u32, u32>(Rem, &x, &y), vec![1, u32::MAX, 5, 0, 1]);
}

/// Test values for int32 division: the edges, multiples of small divisors and their neighbours, and a
/// deterministic pseudo-random spread.
fn i32_division_values() -> Vec<i32> {
    let mut v = vec![0, 1, -1, 2, -2, 3, -3, 7, -7, 999, -999, 1000, -1000, 1001, -1001, i32::MAX, i32::MIN,
                     i32::MAX - 1, i32::MIN + 1, 1 << 30, -(1 << 30), (1 << 30) + 1, 46341, -46341];
    let mut s = 0x9e37_79b9u32;
    for _ in 0..400 {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        v.push(s as i32);
        v.push((s as i32) >> (s % 31));
    }
    v
}

/// The magic-number models behind the vector code divide exactly (truncating, MIN / -1 wrapping) for
/// every divisor class: small, powers of two, their neighbours, the extremes, pseudo-random.
#[test]
fn vdiv_magic_numbers_are_exact() {
    let xs = i32_division_values();
    let mut ds: Vec<i32> = (-2100..=2100).filter(|&d| d != 0).collect();
    for k in 1..31 {
        for d in [(1i32 << k) - 1, 1 << k, (1 << k) + 1] {
            ds.extend([d, -d]);
        }
    }
    ds.extend([i32::MIN, i32::MAX, i32::MIN + 1, i32::MAX - 1]);
    ds.extend(xs.iter().copied().filter(|&d| d != 0));
    for &d in &ds {
        let mut xs_d = xs.clone();
        for k in [1i64, 2, 3, 1000, 1 << 20] {
            for e in [-1i64, 0, 1] {
                for sgn in [-1i64, 1] {
                    let x = sgn * k * i64::from(d) + e;
                    if let Ok(x) = i32::try_from(x) {
                        xs_d.push(x);
                    }
                }
            }
        }
        for &x in &xs_d {
            assert_eq!(super::vdiv::sdiv_by_magic(x, d), x.wrapping_div(d), "{x} / {d}");
            let (ux, ud) = (x as u32, d as u32);
            assert_eq!(super::vdiv::udiv_by_magic(ux, ud), ux / ud, "{ux} /u {ud}");
        }
    }
    for d in 1..=3000u32 {
        for x in [0u32, 1, d - 1, d, d + 1, u32::MAX, u32::MAX - 1, 1 << 31, (1 << 31) - 1, u32::MAX / d * d] {
            assert_eq!(super::vdiv::udiv_by_magic(x, d), x / d, "{x} /u {d}");
        }
    }
}

/// int32/uint32 `div`/`rem` on vector lanes (a constant divisor by magic multiply, a per-lane int32 divisor
/// in float64) give the scalar lowering's results: truncating, x/0 = -1, x%0 = x, MIN/-1 = MIN.
#[test]
fn vdiv_vector_lanes_match_scalar() {
    use BinaryOp::{Div, Rem};
    let xs = i32_division_values();
    // every x against divisors from the same list, and the edge divisors, in 4-lane kernels (n >> 4)
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (k, &a) in xs.iter().enumerate() {
        for &b in [0i32, -1, 1, 2, -2, 1000, -1000, i32::MIN, i32::MAX, xs[(k * 7 + 3) % xs.len()], xs[(k * 13) % xs.len()]].iter() {
            x.push(a);
            y.push(b);
        }
    }
    let div: Vec<i32> = x.iter().zip(&y).map(|(&a, &b)| if b == 0 { -1 } else { a.wrapping_div(b) }).collect();
    let rem: Vec<i32> = x.iter().zip(&y).map(|(&a, &b)| if b == 0 { a } else { a.wrapping_rem(b) }).collect();
    assert_eq!(binop::<i32, i32>(Div, &x, &y), div);
    assert_eq!(binop::<i32, i32>(Rem, &x, &y), rem);
    let (ux, uy): (Vec<u32>, Vec<u32>) = (x.iter().map(|&a| a as u32).collect(), y.iter().map(|&a| a as u32).collect());
    let udiv: Vec<u32> = ux.iter().zip(&uy).map(|(&a, &b)| a.checked_div(b).unwrap_or(u32::MAX)).collect();
    let urem: Vec<u32> = ux.iter().zip(&uy).map(|(&a, &b)| a.checked_rem(b).unwrap_or(a)).collect();
    assert_eq!(binop::<u32, u32>(Div, &ux, &uy), udiv);
    assert_eq!(binop::<u32, u32>(Rem, &ux, &uy), urem);
    for d in [0i64, 1, -1, 2, -2, 3, 7, -7, 1000, -1000, 1 << 20, 12345, i32::MIN as i64, i32::MAX as i64] {
        for (op, signed) in [(Div, true), (Rem, true), (Div, false), (Rem, false)] {
            let dt = if signed { DType::I32 } else { DType::U32 };
            let body = vec![ins(KOp::Const { value: Scalar::Int(d) }, dt), bin(op, 0, 1, dt)];
            if signed {
                let d = d as i32;
                let want: Vec<i32> = xs.iter().map(|&a| match (op, d) {
                    (Div, 0) => -1,
                    (Div, _) => a.wrapping_div(d),
                    (_, 0) => a,
                    _ => a.wrapping_rem(d),
                }).collect();
                assert_eq!(unop_body::<i32, i32>(&xs, body), want, "{op:?} by {d}");
            } else {
                let d = d as u32;
                let uxs: Vec<u32> = xs.iter().map(|&a| a as u32).collect();
                let want: Vec<u32> = uxs.iter().map(|&a| match op {
                    Div => a.checked_div(d).unwrap_or(u32::MAX),
                    _ => a.checked_rem(d).unwrap_or(a),
                }).collect();
                assert_eq!(unop_body::<u32, u32>(&uxs, body), want, "{op:?} by {d}u");
            }
        }
    }
}

/// The 31-bit magic numbers behind floor division by a positive constant give floor division (`div_euclid`
/// for positive divisors) for every int32, across divisor classes.
#[test]
fn vdiv_floor_magic_is_exact() {
    let xs = i32_division_values();
    let mut ds: Vec<i32> = (1..=3000).collect();
    for k in 1..31 {
        ds.extend([(1i32 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    ds.extend([i32::MAX, i32::MAX - 1]);
    ds.extend(xs.iter().copied().filter(|&d| d > 0).take(200));
    for &d in &ds {
        let mut xs_d = xs.clone();
        for k in [1i64, 2, 3, 1000, 1 << 20] {
            for e in [-1i64, 0, 1] {
                for sgn in [-1i64, 1] {
                    if let Ok(x) = i32::try_from(sgn * k * i64::from(d) + e) {
                        xs_d.push(x);
                    }
                }
            }
        }
        for &x in &xs_d {
            assert_eq!(super::vdiv::floor_div_by_magic(x, d), x.div_euclid(d), "{x} // {d}");
        }
    }
}

/// JAX's `%` and `//` of int32 by a positive constant (its traced selects, as `jnp.remainder` and
/// `jnp.floor_divide` give them) are recognized (`kfacts`) and computed on vector lanes with the bits of the
/// selects as written; a non-matching variant (a divisor that differs from the one added back) is left alone.
#[test]
fn floor_div_rem_patterns_on_vector_lanes() {
    use super::kfacts::{analyze, Fact};
    use BinaryOp::{Add, And, Div, Rem, Sub};
    use CompareOp::{Lt, Ne};
    let dt = DType::I32;
    let b = DType::Bool;
    let cmp = |op, a, b| ins(KOp::Compare { op, a, b }, DType::Bool);
    // jnp.remainder(x, c): r = x rem c; (r < 0) != (c < 0) [folded: != false] and r != 0 -> r + c
    let rem_body = |c: i64, c2: i64| {
        vec![
            load(0, dt),                                              // 0
            ins(KOp::Const { value: Scalar::Int(c) }, dt),            // 1
            bin(Rem, 0, 1, dt),                                       // 2
            ins(KOp::Const { value: Scalar::Int(0) }, dt),            // 3
            cmp(Lt, 2, 3),                                            // 4
            ins(KOp::Const { value: Scalar::Bool(false) }, b),        // 5
            cmp(Ne, 4, 5),                                            // 6
            cmp(Ne, 2, 3),                                            // 7
            bin(And, 6, 7, b),                                        // 8
            ins(KOp::Const { value: Scalar::Int(c2) }, dt),           // 9
            bin(Add, 2, 9, dt),                                       // 10
            ins(KOp::Select { pred: 8, cases: vec![2, 10] }, dt),     // 11
        ]
    };
    // jnp.floor_divide(x, c): q = x / c; sign(x) != sign(c) [= 1] and x rem c != 0 -> q - 1
    let div_body = |c: i64| {
        vec![
            load(0, dt),                                              // 0
            ins(KOp::Const { value: Scalar::Int(c) }, dt),            // 1
            ins(KOp::Const { value: Scalar::Int(0) }, dt),            // 2
            bin(Rem, 0, 1, dt),                                       // 3
            cmp(Ne, 3, 2),                                            // 4
            un(UnaryOp::Sign, 0, dt),                                 // 5
            ins(KOp::Const { value: Scalar::Int(1) }, dt),            // 6
            cmp(Ne, 5, 6),                                            // 7
            bin(And, 7, 4, b),                                        // 8
            bin(Div, 0, 1, dt),                                       // 9
            bin(Sub, 9, 6, dt),                                       // 10
            ins(KOp::Select { pred: 8, cases: vec![9, 10] }, dt),     // 11
        ]
    };
    let kernel = |body: Vec<KInstr>| Kernel {
        name: "k".into(),
        domain: vec![8],
        reduce_axes: vec![],
        inputs: vec![kin(0, dt, vec![1])],
        body,
        outputs: vec![],
    };
    let mut xs = i32_division_values();
    xs.extend([i32::MIN, i32::MIN + 1, i32::MAX, -1, 0, 1, -1000, -999, -1001, 999, 1000, 1001]);
    for c in [1i64, 2, 3, 7, 10, 1000, 1024, 12345, 1 << 20, (1 << 30) + 1, i64::from(i32::MAX)] {
        let c32 = c as i32;
        // (by 1 the remainder's range, 0..=0, decides the selects: the truncating results as they are)
        let (fr, fd) = if c == 1 { (Fact::Alias(2), Fact::Alias(9)) } else { (Fact::FloorRem { x: 0, c }, Fact::FloorDiv { x: 0, c }) };
        assert_eq!(analyze(&kernel(rem_body(c, c))).fact[11], fr, "rem by {c}");
        assert_eq!(analyze(&kernel(div_body(c))).fact[11], fd, "div by {c}");
        let want: Vec<i32> = xs.iter().map(|&x| x.rem_euclid(c32)).collect();
        assert_eq!(unop_body::<i32, i32>(&xs, rem_body(c, c)[1..].to_vec()), want, "x % {c}");
        let want: Vec<i32> = xs.iter().map(|&x| x.div_euclid(c32)).collect();
        assert_eq!(unop_body::<i32, i32>(&xs, div_body(c)[1..].to_vec()), want, "x // {c}");
    }
    // r < 0 ? r + 3 : r with r = x rem 7 is no floor modulo: computed as written
    assert_eq!(analyze(&kernel(rem_body(7, 3))).fact[11], Fact::None);
    let want: Vec<i32> = xs.iter().map(|&x| if x % 7 < 0 { x % 7 + 3 } else { x % 7 }).collect();
    assert_eq!(unop_body::<i32, i32>(&xs, rem_body(7, 3)[1..].to_vec()), want);
}

/// Value ranges decide `x[i % n]`'s fix-up of negative indices and the clamps before a gather, and a
/// gather whose index is known in bounds reads without its own clamp (same values).
#[test]
fn kernel_ranges_decide_selects_and_clamps() {
    use super::kfacts::{analyze, Fact};
    use BinaryOp::{Add, Mul, Rem};
    let dt = DType::I32;
    let c = |v: i64| ins(KOp::Const { value: Scalar::Int(v) }, dt);
    let body = vec![
        ins(KOp::Iota { axis: 0 }, dt),                                       // 0: 0..=9
        c(3),                                                                 // 1
        bin(Rem, 0, 1, dt),                                                   // 2: 0..=2
        c(0),                                                                 // 3
        ins(KOp::Compare { op: CompareOp::Lt, a: 2, b: 3 }, DType::Bool),     // 4: false
        bin(Add, 2, 1, dt),                                                   // 5
        ins(KOp::Select { pred: 4, cases: vec![2, 5] }, dt),                  // 6: = 2
        c(2),                                                                 // 7
        ins(KOp::Clamp { lo: 3, x: 6, hi: 7 }, dt),                           // 8: = 6
        bin(Mul, 8, 1, dt),                                                   // 9: 0..=6
        bin(Add, 9, 0, dt),                                                   // 10: 0..=15
        ins(KOp::Compare { op: CompareOp::Eq, a: 8, b: 8 }, DType::Bool),     // 11: true
    ];
    let k = Kernel { name: "k".into(), domain: vec![10], reduce_axes: vec![], inputs: vec![], body, outputs: vec![] };
    let f = analyze(&k);
    assert_eq!(f.fact[6], Fact::Alias(2));
    assert_eq!(f.fact[8], Fact::Alias(6));
    assert_eq!(f.range[4], Some((0, 0)));
    assert_eq!(f.range[10], Some((0, 15)));
    assert_eq!(f.range[11], Some((1, 1)));
    assert!(f.within(10, 15) && !f.within(10, 14));
    // the gather through the decided select and clamp: x[(i % 3) * 3 + i] of a 16-element table, 40 points
    let n = 40usize;
    let table: Vec<f32> = (0..16).map(|v| v as f32 * 1.5 - 4.0).collect();
    let body = vec![
        ins(KOp::Iota { axis: 0 }, dt),                                       // 0
        c(3),                                                                 // 1
        bin(Rem, 0, 1, dt),                                                   // 2
        c(0),                                                                 // 3
        ins(KOp::Compare { op: CompareOp::Lt, a: 2, b: 3 }, DType::Bool),     // 4
        bin(Add, 2, 1, dt),                                                   // 5
        ins(KOp::Select { pred: 4, cases: vec![2, 5] }, dt),                  // 6
        c(2),                                                                 // 7
        ins(KOp::Clamp { lo: 3, x: 6, hi: 7 }, dt),                           // 8
        bin(Mul, 8, 1, dt),                                                   // 9
        c(9),                                                                 // 10
        bin(Rem, 0, 10, dt),                                                  // 11: 0..=8
        bin(Add, 9, 11, dt),                                                  // 12: 0..=14
        ins(KOp::Gather { input: 0, index: 12, stride: 1, hi: 15, fill: None }, DType::F32),
    ];
    let p = plan1(
        vec![Aval::new(DType::F32, vec![16])],
        vec![n],
        vec![],
        vec![kin(0, DType::F32, vec![0])],
        body,
        vec![(Aval::new(DType::F32, vec![n]), 13, OutputKind::Store)],
    );
    let got: Vec<f32> = read(&run_plan(&p, &[buf(&[16], &table)])[0]);
    let want: Vec<f32> = (0..n).map(|i| table[(i % 3) * 3 + i % 9]).collect();
    assert_eq!(got, want);
}

#[test]
fn float_div_rem() {
    let x = [1.0f32, -1.0, 0.0, 5.5, -5.5, 5.5, f32::INFINITY];
    let y = [0.0f32, 0.0, 0.0, 2.0, 2.0, -0.0, 2.0];
    let q: Vec<f32> = binop(BinaryOp::Div, &x, &y);
    same_f32(&q, &x.iter().zip(&y).map(|(a, b)| a / b).collect::<Vec<_>>());
    let r: Vec<f32> = binop(BinaryOp::Rem, &x, &y);
    same_f32(&r, &x.iter().zip(&y).map(|(a, b)| a % b).collect::<Vec<_>>());
    let r: Vec<f64> = binop(BinaryOp::Rem, &[5.5f64, -7.25], &[2.0f64, 3.0]);
    assert_eq!(r, vec![1.5, -1.25]);
}

#[test]
fn shifts_past_width() {
    use BinaryOp::*;
    let x = [1i32, -8, -8, 1, -1, 12];
    let y = [31i32, 1, 32, 33, -1, 2];
    assert_eq!(binop::<i32, i32>(ShiftLeft, &x, &y), vec![i32::MIN, -16, 0, 0, 0, 48]);
    assert_eq!(
        binop::<i32, i32>(ShiftRightLogical, &x, &y),
        vec![0, ((-8i32) as u32 >> 1) as i32, 0, 0, 0, 3]
    );
    assert_eq!(binop::<i32, i32>(ShiftRightArithmetic, &x, &y), vec![0, -4, -1, 0, -1, 3]);
    let x = [1u32, 0x8000_0000, 0x8000_0000];
    let y = [32u32, 31, 40];
    assert_eq!(binop::<u32, u32>(ShiftLeft, &x, &y), vec![0, 0, 0]);
    assert_eq!(binop::<u32, u32>(ShiftRightLogical, &x, &y), vec![0, 1, 0]);
    assert_eq!(binop::<u32, u32>(ShiftRightArithmetic, &x, &y), vec![0, 0xffff_ffff, 0xffff_ffff]);
    let x = [1i64, -1, 5];
    let y = [64i64, 70, 63];
    assert_eq!(binop::<i64, i64>(ShiftLeft, &x, &y), vec![0, 0, i64::MIN]);
    assert_eq!(binop::<i64, i64>(ShiftRightArithmetic, &x, &y), vec![0, -1, 0]);
}

#[test]
fn float_to_int_saturates() {
    let x = [1.7f32, -1.7, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3e9, -3e9, 0.0];
    assert_eq!(convert::<f32, i32>(&x), vec![1, -1, 0, i32::MAX, i32::MIN, i32::MAX, i32::MIN, 0]);
    assert_eq!(convert::<f32, u32>(&x), vec![1, 0, 0, u32::MAX, 0, 3_000_000_000, 0, 0]);
    assert_eq!(convert::<f32, i64>(&x), vec![1, -1, 0, i64::MAX, i64::MIN, 3_000_000_000, -3_000_000_000, 0]);
    let x = [1e300f64, -1e300, f64::NAN, 2.5];
    assert_eq!(convert::<f64, i32>(&x), vec![i32::MAX, i32::MIN, 0, 2]);
    assert_eq!(convert::<f32, bool>(&[0.0, -0.0, f32::NAN, 0.5]), vec![false, false, true, true]);
    assert_eq!(convert::<i32, bool>(&[0, -3, 1]), vec![false, true, true]);
    assert_eq!(convert::<bool, f32>(&[true, false]), vec![1.0, 0.0]);
    assert_eq!(convert::<bool, i64>(&[true, false]), vec![1, 0]);
    assert_eq!(convert::<u32, f64>(&[u32::MAX]), vec![u32::MAX as f64]);
    assert_eq!(convert::<u32, i64>(&[u32::MAX]), vec![u32::MAX as i64]);
    assert_eq!(convert::<i32, i64>(&[-5]), vec![-5]);
    assert_eq!(convert::<i64, i32>(&[0x1_0000_0005, -1]), vec![5, -1]);
    assert_eq!(convert::<i32, u32>(&[-1]), vec![u32::MAX]);
    assert_eq!(convert::<i64, f32>(&[1 << 40]), vec![(1u64 << 40) as f32]);
    assert_eq!(convert::<f64, f32>(&[0.1]), vec![0.1f32]);
    assert_eq!(convert::<f64, u32>(&[5e9, -1.0, 7.9, f64::NAN]), vec![u32::MAX, 0, 7, 0]);
    assert_eq!(convert::<f64, i64>(&[1e19, -1e19, -7.9]), vec![i64::MAX, i64::MIN, -7]);
    assert_eq!(convert::<i64, f64>(&[-(1 << 53) - 1]), vec![(-(1i64 << 53) - 1) as f64]);
    assert_eq!(convert::<u32, f32>(&[u32::MAX, 16777217]), vec![u32::MAX as f32, 16777217u32 as f32]);
    assert_eq!(convert::<bool, u32>(&[true]), vec![1]);
    assert_eq!(convert::<u32, bool>(&[0, 0x8000_0000]), vec![false, true]);
    assert_eq!(convert::<f32, f64>(&[0.1]), vec![0.1f32 as f64]);
}

#[test]
fn max_min_nan_and_signed_zero() {
    let x = [1.0f32, f32::NAN, 2.0, -0.0, 0.0, f32::NEG_INFINITY];
    let y = [f32::NAN, 3.0, 1.0, 0.0, -0.0, 5.0];
    let mx: Vec<f32> = binop(BinaryOp::Max, &x, &y);
    let mn: Vec<f32> = binop(BinaryOp::Min, &x, &y);
    assert!(mx[0].is_nan() && mx[1].is_nan() && mn[0].is_nan() && mn[1].is_nan());
    assert_eq!(mx[2], 2.0);
    assert_eq!(mn[2], 1.0);
    assert!(mx[3] == 0.0 && mx[3].is_sign_positive() && mx[4].is_sign_positive());
    assert!(mn[3] == 0.0 && mn[3].is_sign_negative() && mn[4].is_sign_negative());
    assert_eq!((mx[5], mn[5]), (5.0, f32::NEG_INFINITY));
    assert_eq!(binop::<i32, i32>(BinaryOp::Max, &[-1, 3], &[2, -7]), vec![2, 3]);
    assert_eq!(binop::<u32, u32>(BinaryOp::Max, &[u32::MAX, 3], &[2, 7]), vec![u32::MAX, 7]);
    assert_eq!(binop::<u32, u32>(BinaryOp::Min, &[u32::MAX, 3], &[2, 7]), vec![2, 3]);
    // Max reduction propagates NaN.
    let mut v = vec![0.0f32; 24];
    v[5] = f32::NAN;
    let got = read::<f32>(&reduce3(&v, vec![0, 1, 2], OutputKind::Reduce(ReduceOp::Max)));
    assert!(got[0].is_nan());
}

#[test]
fn compare_ops() {
    use CompareOp::*;
    let x = [1.0f32, f32::NAN, 2.0, f32::NAN];
    let y = [1.0f32, 1.0, 3.0, f32::NAN];
    let cmp = |op: CompareOp| -> Vec<bool> {
        let p = plan1(
            vec![Aval::new(DType::F32, vec![4]); 2],
            vec![4],
            vec![],
            vec![kin(0, DType::F32, vec![1]), kin(1, DType::F32, vec![1])],
            vec![load(0, DType::F32), load(1, DType::F32), ins(KOp::Compare { op, a: 0, b: 1 }, DType::Bool)],
            vec![(Aval::new(DType::Bool, vec![4]), 2, OutputKind::Store)],
        );
        read(&run_plan(&p, &[buf(&[4], &x), buf(&[4], &y)])[0])
    };
    assert_eq!(cmp(Eq), vec![true, false, false, false]);
    assert_eq!(cmp(Ne), vec![false, true, true, true]);
    assert_eq!(cmp(Lt), vec![false, false, true, false]);
    assert_eq!(cmp(Le), vec![true, false, true, false]);
    assert_eq!(cmp(Gt), vec![false, false, false, false]);
    assert_eq!(cmp(Ge), vec![true, false, false, false]);
    // unsigned vs signed
    let icmp = |dt: DType, x: i64, y: i64| -> bool {
        let p = plan1(
            vec![],
            vec![],
            vec![],
            vec![],
            vec![
                ins(KOp::Const { value: Scalar::Int(x) }, dt),
                ins(KOp::Const { value: Scalar::Int(y) }, dt),
                ins(KOp::Compare { op: Lt, a: 0, b: 1 }, DType::Bool),
            ],
            vec![(Aval::new(DType::Bool, vec![]), 2, OutputKind::Store)],
        );
        read::<bool>(&run_plan(&p, &[])[0])[0]
    };
    assert!(icmp(DType::I32, -1, 1));
    assert!(!icmp(DType::U32, 0xffff_ffff, 1));
    assert!(icmp(DType::I64, i64::MIN, 0));
}

#[test]
fn select_n_i32_and_bool_pred() {
    // select_n(pred, a, b, c) with pred clamped into [0, 2].
    let pred = [-5i32, 0, 1, 2, 3, 100];
    let n = pred.len();
    let p = plan1(
        vec![Aval::new(DType::I32, vec![n])],
        vec![n],
        vec![],
        vec![kin(0, DType::I32, vec![1])],
        vec![
            load(0, DType::I32),
            ins(KOp::Const { value: Scalar::Float(10.0) }, DType::F32),
            ins(KOp::Const { value: Scalar::Float(20.0) }, DType::F32),
            ins(KOp::Const { value: Scalar::Float(30.0) }, DType::F32),
            ins(KOp::Select { pred: 0, cases: vec![1, 2, 3] }, DType::F32),
        ],
        vec![(Aval::new(DType::F32, vec![n]), 4, OutputKind::Store)],
    );
    assert_eq!(read::<f32>(&run_plan(&p, &[buf(&[n], &pred)])[0]), vec![10.0, 10.0, 20.0, 30.0, 30.0, 30.0]);
    // bool pred: cases[0] when false.
    let got: Vec<i64> = unop_body(
        &[true, false],
        vec![
            ins(KOp::Const { value: Scalar::Int(1) }, DType::I64),
            ins(KOp::Const { value: Scalar::Int(2) }, DType::I64),
            ins(KOp::Select { pred: 0, cases: vec![1, 2] }, DType::I64),
        ],
    );
    assert_eq!(got, vec![2, 1]);
}

#[test]
fn bool_ops() {
    use BinaryOp::*;
    let x = [true, true, false, false];
    let y = [true, false, true, false];
    assert_eq!(binop::<bool, bool>(And, &x, &y), vec![true, false, false, false]);
    assert_eq!(binop::<bool, bool>(Or, &x, &y), vec![true, true, true, false]);
    assert_eq!(binop::<bool, bool>(Xor, &x, &y), vec![false, true, true, false]);
    assert_eq!(binop::<bool, bool>(Add, &x, &y), vec![true, true, true, false]);
    assert_eq!(binop::<bool, bool>(Max, &x, &y), vec![true, true, true, false]);
    assert_eq!(binop::<bool, bool>(Min, &x, &y), vec![true, false, false, false]);
    assert_eq!(unop(UnaryOp::Not, &x), vec![false, false, true, true]);
    assert_eq!(unop(UnaryOp::Not, &[0i32, -1, 5]), vec![-1, 0, !5]);
    assert_eq!(binop::<i32, i32>(Xor, &[0b1100], &[0b1010]), vec![0b0110]);
    // A bool sum / and / or reduction.
    let p = plan1(
        vec![Aval::new(DType::Bool, vec![2, 3])],
        vec![2, 3],
        vec![1],
        vec![kin(0, DType::Bool, vec![3, 1])],
        vec![load(0, DType::Bool)],
        vec![
            (Aval::new(DType::Bool, vec![2]), 0, OutputKind::Reduce(ReduceOp::And)),
            (Aval::new(DType::Bool, vec![2]), 0, OutputKind::Reduce(ReduceOp::Or)),
        ],
    );
    let out = run_plan(&p, &[buf(&[2, 3], &[true, true, true, false, true, false])]);
    assert_eq!(read::<bool>(&out[0]), vec![true, false]);
    assert_eq!(read::<bool>(&out[1]), vec![true, true]);
}

#[test]
fn unary_semantics() {
    use UnaryOp::*;
    let x = [2.5f32, -2.5, 0.5, -0.5, 1.5, 0.49999997, -0.0, f32::NAN, 3.7, -3.2];
    same_f32(&unop(Round, &x), &[3.0, -3.0, 1.0, -1.0, 2.0, 0.0, -0.0, f32::NAN, 4.0, -3.0]);
    same_f32(&unop(RoundEven, &x), &[2.0, -2.0, 0.0, -0.0, 2.0, 0.0, -0.0, f32::NAN, 4.0, -3.0]);
    same_f32(&unop(Floor, &x), &x.map(f32::floor));
    same_f32(&unop(Ceil, &x), &x.map(f32::ceil));
    same_f32(&unop(Abs, &x), &x.map(f32::abs));
    same_f32(&unop(Neg, &x), &x.map(|v| -v));
    let s = unop(Sign, &[3.0f32, -2.0, 0.0, -0.0, f32::NAN, f32::NEG_INFINITY]);
    same_f32(&s, &[1.0, -1.0, 0.0, -0.0, f32::NAN, -1.0]);
    assert_eq!(unop(Sign, &[5i32, -5, 0, i32::MIN]), vec![1, -1, 0, -1]);
    assert_eq!(unop(Sign, &[5u32, 0, u32::MAX]), vec![1, 0, 1]);
    assert_eq!(unop(Abs, &[-5i64, i64::MIN]), vec![5, i64::MIN]);
    assert_eq!(unop(Neg, &[i32::MIN, 3]), vec![i32::MIN, -3]);
    assert_eq!(unop(PopulationCount, &[0xffi32, -1, 0]), vec![8, 32, 0]);
    assert_eq!(unop(PopulationCount, &[u32::MAX]), vec![32]);
    assert_eq!(unop(Clz, &[0i32, 1, -1, 0xffff, i32::MAX]), vec![32, 31, 0, 16, 1]);
    assert_eq!(unop(Clz, &[0u32, u32::MAX, 1 << 20]), vec![32, 0, 11]);
    assert_eq!(unop(Clz, &[0i64, 1, -1, 1 << 40]), vec![64, 63, 0, 23]);
    assert_eq!(unop(Square, &[-3i32]), vec![9]);
    same_f32(&unop(Sqrt, &[4.0f32, -1.0]), &[2.0, f32::NAN]);
    same_f32(&unop(Rsqrt, &[4.0f32, 0.0]), &[0.5, f32::INFINITY]);
    let fin: Vec<bool> = unop_body(&[1.0f64, f64::NAN, f64::INFINITY, -f64::INFINITY], vec![un(IsFinite, 0, DType::Bool)]);
    assert_eq!(fin, vec![true, false, false, false]);
}

#[test]
fn integer_pow_clamp_bitcast_iota_nextafter() {
    let ip = |y: i32| -> Vec<f32> { unop_body(&[2.0f32, -3.0, 0.0], vec![ins(KOp::IntegerPow { a: 0, y }, DType::F32)]) };
    assert_eq!(ip(0), vec![1.0, 1.0, 1.0]);
    assert_eq!(ip(3), vec![8.0, -27.0, 0.0]);
    assert_eq!(ip(-2), vec![0.25, 1.0 / 9.0, f32::INFINITY]);
    assert_eq!(ip(10), vec![1024.0, 59049.0, 0.0]);
    let ii: Vec<i32> = unop_body(&[3i32, -2], vec![ins(KOp::IntegerPow { a: 0, y: 5 }, DType::I32)]);
    assert_eq!(ii, vec![243, -32]);
    let ip: Vec<i32> = binop(BinaryOp::Pow, &[3i32, 2, -1, 5], &[4i32, 31, -3, -1]);
    assert_eq!(ip, vec![81, i32::MIN, -1, 0]);
    // clamp(lo=0, x, hi=1) with NaN
    let c: Vec<f32> = unop_body(
        &[-1.0f32, 0.5, 2.0, f32::NAN],
        vec![
            ins(KOp::Const { value: Scalar::Float(0.0) }, DType::F32),
            ins(KOp::Const { value: Scalar::Float(1.0) }, DType::F32),
            ins(KOp::Clamp { lo: 1, x: 0, hi: 2 }, DType::F32),
        ],
    );
    same_f32(&c, &[0.0, 0.5, 1.0, f32::NAN]);
    let bc: Vec<u32> = unop_body(&[1.0f32, -0.0], vec![ins(KOp::Bitcast { a: 0 }, DType::U32)]);
    assert_eq!(bc, vec![0x3f80_0000, 0x8000_0000]);
    let bc: Vec<f64> = unop_body(&[0x4000_0000_0000_0000i64], vec![ins(KOp::Bitcast { a: 0 }, DType::F64)]);
    assert_eq!(bc, vec![2.0]);
    let na: Vec<f32> = binop(BinaryOp::NextAfter, &[1.0f32, 0.0, 1.0, f32::NAN], &[2.0f32, -1.0, 1.0, 0.0]);
    same_f32(&na, &[f32::from_bits(0x3f80_0001), -f32::from_bits(1), 1.0, f32::NAN]);
    // iota over axis 1 of a [2, 3] domain as f32, and axis 0 as i64
    let p = plan1(
        vec![],
        vec![2, 3],
        vec![],
        vec![],
        vec![ins(KOp::Iota { axis: 1 }, DType::F32), ins(KOp::Iota { axis: 0 }, DType::I64)],
        vec![
            (Aval::new(DType::F32, vec![2, 3]), 0, OutputKind::Store),
            (Aval::new(DType::I64, vec![2, 3]), 1, OutputKind::Store),
        ],
    );
    let out = run_plan(&p, &[]);
    assert_eq!(read::<f32>(&out[0]), vec![0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
    assert_eq!(read::<i64>(&out[1]), vec![0, 0, 0, 1, 1, 1]);
}

#[test]
fn empty_domains_and_empty_reductions() {
    // Store over an empty domain.
    let p = plan1(
        vec![Aval::new(DType::F32, vec![0, 3])],
        vec![0, 3],
        vec![],
        vec![kin(0, DType::F32, vec![3, 1])],
        vec![load(0, DType::F32), un(UnaryOp::Sin, 0, DType::F32)],
        vec![(Aval::new(DType::F32, vec![0, 3]), 1, OutputKind::Store)],
    );
    let out = run_plan(&p, &[buf::<f32>(&[0, 3], &[])]);
    assert_eq!(out[0].aval.shape, vec![0, 3]);
    // Reductions over an empty axis write the identity.
    let p = plan1(
        vec![Aval::new(DType::F32, vec![3, 0])],
        vec![3, 0],
        vec![1],
        vec![kin(0, DType::F32, vec![0, 1])],
        vec![load(0, DType::F32)],
        vec![
            (Aval::new(DType::F32, vec![3]), 0, OutputKind::Reduce(ReduceOp::Sum)),
            (Aval::new(DType::F32, vec![3]), 0, OutputKind::Reduce(ReduceOp::Prod)),
            (Aval::new(DType::F32, vec![3]), 0, OutputKind::Reduce(ReduceOp::Max)),
            (Aval::new(DType::F32, vec![3]), 0, OutputKind::Reduce(ReduceOp::Min)),
            (Aval::new(DType::I32, vec![3]), 0, OutputKind::ArgReduce { is_max: true }),
        ],
    );
    let out = run_plan(&p, &[buf::<f32>(&[3, 0], &[])]);
    assert_eq!(read::<f32>(&out[0]), vec![0.0; 3]);
    assert_eq!(read::<f32>(&out[1]), vec![1.0; 3]);
    assert_eq!(read::<f32>(&out[2]), vec![f32::NEG_INFINITY; 3]);
    assert_eq!(read::<f32>(&out[3]), vec![f32::INFINITY; 3]);
    assert_eq!(read::<i32>(&out[4]), vec![0; 3]);
    // Integer and bool identities.
    let red = |dt: DType, op: ReduceOp| -> Buffer {
        let p = plan1(
            vec![Aval::new(dt, vec![0])],
            vec![0],
            vec![0],
            vec![kin(0, dt, vec![1])],
            vec![load(0, dt)],
            vec![(Aval::new(dt, vec![]), 0, OutputKind::Reduce(op))],
        );
        run_plan(&p, &[Buffer::alloc(&Aval::new(dt, vec![0])).unwrap()]).remove(0)
    };
    assert_eq!(read::<i32>(&red(DType::I32, ReduceOp::Max)), vec![i32::MIN]);
    assert_eq!(read::<i32>(&red(DType::I32, ReduceOp::Min)), vec![i32::MAX]);
    assert_eq!(read::<u32>(&red(DType::U32, ReduceOp::Min)), vec![u32::MAX]);
    assert_eq!(read::<u32>(&red(DType::U32, ReduceOp::Max)), vec![0]);
    assert_eq!(read::<i64>(&red(DType::I64, ReduceOp::Max)), vec![i64::MIN]);
    assert_eq!(read::<i64>(&red(DType::I64, ReduceOp::Prod)), vec![1]);
    assert_eq!(read::<i32>(&red(DType::I32, ReduceOp::And)), vec![-1]);
    assert_eq!(read::<bool>(&red(DType::Bool, ReduceOp::Max)), vec![false]);
    assert_eq!(read::<bool>(&red(DType::Bool, ReduceOp::Min)), vec![true]);
    assert_eq!(read::<bool>(&red(DType::Bool, ReduceOp::And)), vec![true]);
    assert_eq!(read::<f64>(&red(DType::F64, ReduceOp::Max)), vec![f64::NEG_INFINITY]);
}

#[test]
fn rank0_kernels() {
    let p = plan1(
        vec![Aval::scalar(DType::F64), Aval::scalar(DType::F64)],
        vec![],
        vec![],
        vec![kin(0, DType::F64, vec![]), kin(1, DType::F64, vec![])],
        vec![load(0, DType::F64), load(1, DType::F64), bin(BinaryOp::Sub, 0, 1, DType::F64)],
        vec![
            (Aval::scalar(DType::F64), 2, OutputKind::Store),
            (Aval::scalar(DType::F64), 2, OutputKind::Reduce(ReduceOp::Sum)),
        ],
    );
    let out = run_plan(&p, &[buf(&[], &[5.0f64]), buf(&[], &[1.5f64])]);
    assert_eq!(read::<f64>(&out[0]), vec![3.5]);
    assert_eq!(read::<f64>(&out[1]), vec![3.5]);
}

#[test]
fn multi_output_store_and_reduce() {
    // y = x * 2 stored over [4, 5]; s = sum over axis 1 of y; m = max over axis 1 of x.
    let x: Vec<f32> = (0..20).map(|v| (v as f32 * 0.37).sin()).collect();
    let p = plan1(
        vec![Aval::new(DType::F32, vec![4, 5])],
        vec![4, 5],
        vec![1],
        vec![kin(0, DType::F32, vec![5, 1])],
        vec![
            load(0, DType::F32),
            ins(KOp::Const { value: Scalar::Float(2.0) }, DType::F32),
            bin(BinaryOp::Mul, 0, 1, DType::F32),
        ],
        vec![
            (Aval::new(DType::F32, vec![4, 5]), 2, OutputKind::Store),
            (Aval::new(DType::F32, vec![4]), 2, OutputKind::Reduce(ReduceOp::Sum)),
            (Aval::new(DType::F32, vec![4]), 0, OutputKind::Reduce(ReduceOp::Max)),
        ],
    );
    let out = run_plan(&p, &[buf(&[4, 5], &x)]);
    let y: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
    same_f32(&read::<f32>(&out[0]), &y);
    let s: Vec<f32> = (0..4).map(|i| y[i * 5..i * 5 + 5].iter().fold(0.0, |a, b| a + b)).collect();
    same_f32(&read::<f32>(&out[1]), &s);
    let m: Vec<f32> = (0..4).map(|i| x[i * 5..i * 5 + 5].iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b))).collect();
    same_f32(&read::<f32>(&out[2]), &m);
}

#[test]
fn views_and_multi_step_plans() {
    // s0: f32[2,3] -> k1: s1 = s0 + 1 -> view s2: f32[6] -> k2: s3 = sum(s2); outputs (s2, s3, s0).
    let k1 = Kernel {
        name: "add1".into(),
        domain: vec![2, 3],
        reduce_axes: vec![],
        inputs: vec![kin(0, DType::F32, vec![3, 1])],
        body: vec![
            load(0, DType::F32),
            ins(KOp::Const { value: Scalar::Float(1.0) }, DType::F32),
            bin(BinaryOp::Add, 0, 1, DType::F32),
        ],
        outputs: vec![KernelOutput { slot: 1, value: 2, kind: OutputKind::Store }],
    };
    let k2 = Kernel {
        name: "sum".into(),
        domain: vec![6],
        reduce_axes: vec![0],
        inputs: vec![kin(2, DType::F32, vec![1])],
        body: vec![load(0, DType::F32)],
        outputs: vec![KernelOutput { slot: 3, value: 0, kind: OutputKind::Reduce(ReduceOp::Sum) }],
    };
    let plan = Plan {
        name: "multi".into(),
        num_inputs: 1,
        slots: vec![
            Aval::new(DType::F32, vec![2, 3]),
            Aval::new(DType::F32, vec![2, 3]),
            Aval::new(DType::F32, vec![6]),
            Aval::scalar(DType::F32),
        ],
        steps: vec![Step::Kernel(k1), Step::View { src: 1, dst: 2 }, Step::Kernel(k2)],
        outputs: vec![2, 3, 0],
    };
    let exe = compile(&plan).unwrap();
    let out = exe.run(&[buf(&[2, 3], &[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0])]).unwrap();
    assert_eq!(out[0].aval.shape, vec![6]);
    assert_eq!(read::<f32>(&out[0]), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(read::<f32>(&out[1]), vec![21.0]);
    assert_eq!(read::<f32>(&out[2]), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let text = exe.as_text();
    assert!(text.contains("kernel add1 domain=[2, 3]") && text.contains("cranelift ir"), "{text}");
    // Running the same executable from several threads at once.
    let exe2 = exe.clone();
    std::thread::scope(|s| {
        for _ in 0..4 {
            let e = exe2.clone();
            s.spawn(move || {
                let o = e.run(&[buf(&[2, 3], &[1.0f32; 6])]).unwrap();
                assert_eq!(read::<f32>(&o[1]), vec![12.0]);
            });
        }
    });
}

#[test]
fn split_ranges_match_full_run() {
    // A [5, 7] domain reduced over axis 1, run in pieces [0,2), [2,5) through the raw entry point.
    let x: Vec<f32> = (0..35).map(|v| v as f32).collect();
    let p = plan1(
        vec![Aval::new(DType::F32, vec![5, 7])],
        vec![5, 7],
        vec![1],
        vec![kin(0, DType::F32, vec![7, 1])],
        vec![load(0, DType::F32)],
        vec![(Aval::new(DType::F32, vec![5]), 0, OutputKind::Reduce(ReduceOp::Sum))],
    );
    let exe = compile(&p).unwrap();
    let (f, n) = exe.kernel_entry(0).unwrap();
    assert_eq!(n, 5);
    let inp = buf(&[5, 7], &x);
    let out = Buffer::alloc(&Aval::new(DType::F32, vec![5])).unwrap();
    let ins = [inp.as_ptr() as *const u8];
    let outs = [out.as_ptr()];
    unsafe {
        f(ins.as_ptr(), outs.as_ptr(), 0, 2);
        f(ins.as_ptr(), outs.as_ptr(), 2, 5);
        f(ins.as_ptr(), outs.as_ptr(), 3, 3); // empty range: no-op
        f(ins.as_ptr(), outs.as_ptr(), 4, 1000); // end past the domain is clamped
    }
    let want: Vec<f32> = (0..5).map(|i| (0..7).map(|j| (i * 7 + j) as f32).sum()).collect();
    assert_eq!(read::<f32>(&out), want);
}

#[test]
fn chain_of_200_ops_compiles_fast() {
    // y = sin(y) + y * 0.5, 200 times.
    let mut body = vec![load(0, DType::F32), ins(KOp::Const { value: Scalar::Float(0.5) }, DType::F32)];
    let mut y = 0;
    for _ in 0..200 {
        let s = body.len();
        body.push(un(UnaryOp::Sin, y, DType::F32));
        body.push(bin(BinaryOp::Mul, y, 1, DType::F32));
        body.push(bin(BinaryOp::Add, s, s + 1, DType::F32));
        y = s + 2;
    }
    let n = 1000;
    let p = plan1(
        vec![Aval::new(DType::F32, vec![n])],
        vec![n],
        vec![],
        vec![kin(0, DType::F32, vec![1])],
        body,
        vec![(Aval::new(DType::F32, vec![n]), y, OutputKind::Store)],
    );
    let _ = compile(&p).unwrap(); // warm the ISA
    let mut times: Vec<f64> = (0..7)
        .map(|_| {
            let t = std::time::Instant::now();
            let e = compile(&p).unwrap();
            let dt = t.elapsed().as_secs_f64() * 1e3;
            drop(e);
            dt
        })
        .collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let exe = compile(&p).unwrap();
    let n_body = match &p.steps[0] {
        Step::Kernel(k) => k.body.len(),
        _ => 0,
    };
    println!("200-op chain ({n_body} kernel instructions): compile min {:.2} ms, median {:.2} ms", times[0], times[3]);
    let x: Vec<f32> = (0..n).map(|i| i as f32 / n as f32).collect();
    let out = read::<f32>(&exe.run(&[buf(&[n], &x)]).unwrap()[0]);
    // sin is the inline f32 polynomial (≤ 1 ulp); the chain contracts, so it stays close to an f64 run.
    for (i, &v) in x.iter().enumerate() {
        let mut r = v as f64;
        for _ in 0..200 {
            r = r.sin() + r * 0.5;
        }
        assert!((out[i] as f64 - r).abs() <= 1e-5 * r.abs().max(1e-3), "at {i}: {} vs {r}", out[i]);
    }
}

#[test]
fn called_unary_ops_use_their_scalar_implementation() {
    // erfc has no inline code: a call to math::erfc (f64), and for f32 that value rounded once
    let x64 = [-3.0f64, -0.5, 0.0, 0.3, 1.0, 2.5, 6.0, 27.0, f64::INFINITY, f64::NEG_INFINITY];
    // (the scalar reference runs in the kernels' float mode: erfc(27) is subnormal in f64, flushed there)
    let want = {
        let _flush = super::fpenv::FlushDenormals::new();
        x64.map(|x| std::hint::black_box(super::math::erfc(std::hint::black_box(x))))
    };
    assert_eq!(unop(UnaryOp::Erfc, &x64), want.to_vec());
    let x32 = [-3.0f32, 0.3, 1.0, 9.0, 10.0];
    // erfc(10) is subnormal in f32: the kernel's conversion flushes it (FTZ), as XLA's does
    same_f32(&unop(UnaryOp::Erfc, &x32), &x32.map(|x| ftz(super::math::erfc(x as f64)) as f32));
    // bessel_i0e / bessel_i1e: SciPy's values (SciPy is itself a few ulp off), parity, the limits
    let i0 = unop(UnaryOp::BesselI0e, &[0.0f64, 1.0, -1.0, 30.0, f64::INFINITY]);
    let i1 = unop(UnaryOp::BesselI1e, &[-0.0f64, 1.0, -1.0, 30.0, f64::NEG_INFINITY]);
    let near = |g: f64, w: f64| assert!((g - w).abs() <= 8.0 * f64::EPSILON * w.abs(), "{g} vs {w}");
    assert_eq!(i0[0], 1.0);
    near(i0[1], 0.46575960759364043);
    assert_eq!(i0[1], i0[2]);
    near(i0[3], 0.0731459464822373);
    assert_eq!(i0[4], 0.0);
    assert!(i1[0] == 0.0 && i1[0].is_sign_negative());
    near(i1[1], 0.2079104153497085);
    assert_eq!(i1[2], -i1[1]);
    near(i1[3], 0.07191633059864755);
    assert!(i1[4] == 0.0 && i1[4].is_sign_negative());
    // a float op with neither inline code nor a scalar implementation is declared nowhere (no unresolved
    // symbol for the JIT): the kernel's compile reports it not lowered
    assert!(super::math::symbol_ptr(super::math_fn::MathFn::Call(UnaryOp::Sin), DType::F32).is_none());
}

#[test]
fn math_functions_match_std() {
    use UnaryOp::*;
    let pts32 = [0.3f32, -0.7, 1.5, 2.0, 0.01];
    let pts64 = [0.3f64, -0.7, 1.5, 2.0, 0.01];
    // float32 functions are inline polynomials (vmath) or std: within 2 ulp of the f64 result.
    let std32: [(UnaryOp, fn(f64) -> f64); 17] = [
        (Exp, f64::exp), (Exp2, f64::exp2), (Log1p, f64::ln_1p), (Expm1, f64::exp_m1), (Tanh, f64::tanh),
        (Sin, f64::sin), (Cos, f64::cos), (Tan, f64::tan), (Cbrt, f64::cbrt), (Asin, f64::asin),
        (Acos, f64::acos), (Atan, f64::atan), (Sinh, f64::sinh), (Cosh, f64::cosh), (Asinh, f64::asinh),
        (Atanh, f64::atanh), (Sqrt, f64::sqrt),
    ];
    for (op, f) in std32 {
        let got = unop(op, &pts32);
        for (g, &x) in got.iter().zip(&pts32) {
            assert!(ulp_err(*g, f(x as f64)) <= 2.0, "{op:?}({x}) = {g}, want {}", f(x as f64));
        }
    }
    for (g, w) in unop(Log, &[2.0f32, 0.5]).iter().zip([2.0f64.ln(), 0.5f64.ln()]) {
        assert!(ulp_err(*g, w) <= 1.0);
    }
    same_f32(&unop(Acosh, &[2.0f32, 1.5]), &[2.0f32.acosh(), 1.5f32.acosh()]);
    // f64 sin/atan are the C library's (as XLA calls them); tanh is XLA's rational form and cbrt glibc's (not
    // Rust's musl port): JAX 0.10.2's values at the same points
    let std64: [(UnaryOp, fn(f64) -> f64); 2] = [(Sin, f64::sin), (Atan, f64::atan)];
    for (op, f) in std64 {
        assert_eq!(unop(op, &pts64), pts64.map(f).to_vec(), "{op:?}");
    }
    assert_eq!(
        unop(Tanh, &pts64),
        vec![0.29131261245159085, -0.6043677771171635, 0.9051482536448665, 0.9640275800758169, 0.00999966667999946]
    );
    let cbrt_jax = [0.6694329500821694, -0.8879040017426008, 1.1447142425533317, 1.2599210498948734, 0.21544346900318834];
    if cfg!(target_arch = "x86_64") {
        assert_eq!(unop(Cbrt, &pts64), cbrt_jax.to_vec());
    } else {
        // the C library's cbrt is built per ISA (aarch64's glibc contracts its polynomial into FMAs): 1.5's
        // cube root is one ulp from x86_64's there, as JAX's on that host would be
        for (g, w) in unop(Cbrt, &pts64).iter().zip(cbrt_jax) {
            assert!((g.to_bits() as i64 - w.to_bits() as i64).abs() <= 1, "cbrt {g} vs {w}");
        }
    }
    // f64 exp and expm1 are XLA:CPU's sequences (math_xla64): JAX 0.10.2's values at the same points
    assert_eq!(unop(Exp, &pts64), vec![1.3498588075760032, 0.4965853037914095, 4.4816890703380645, 7.38905609893065, 1.010050167084168]);
    assert_eq!(
        unop(Expm1, &pts64),
        vec![0.34985880757600313, -0.5034146962085905, 3.4816890703380645, 6.38905609893065, 0.010050167084168055]
    );
    let close = |got: f64, want: f64, tol: f64| assert!((got - want).abs() <= tol * want.abs().max(1e-300), "{got} vs {want}");
    // logistic
    let l = unop(Logistic, &[0.0f64, 2.0, -800.0, 800.0]);
    assert_eq!(l[0], 0.5);
    close(l[1], 1.0 / (1.0 + (-2.0f64).exp()), 1e-15);
    assert!(l[2] >= 0.0 && l[2] < 1e-300 && l[3] == 1.0);
    // erf against reference values (Abramowitz & Stegun / mpmath).
    let e = unop(Erf, &[0.5f64, 1.0, -2.0, 3.0, 1e-10]);
    let want = [0.5204998778130465, 0.8427007929497149, -0.9953222650189527, 0.9999779095030014, 1.1283791670955126e-10];
    for (g, w) in e.iter().zip(want) {
        close(*g, w, 2e-16);
    }
    let e32 = unop(Erf, &[0.5f32, 1.0]);
    // float32 erf is the inline polynomial (≤ 4 ulp; see vmath's table).
    for (g, w) in e32.iter().zip([0.5204998778130465f64, 0.8427007929497149]) {
        assert!(ulp_err(*g, w) <= 4.0, "{g} vs {w}");
    }
    // f64 erf_inv is XLA's (Giles' double-precision polynomials): JAX 0.10.2's values
    let ys = [0.5f64, -0.3, 0.9, 0.999999, 1e-12, 0.999999999999];
    let want = [0.47693627620446977, -0.2724627147267544, 1.163087153676674, 3.4589107372739605, 8.86226925452758e-13, 5.042031898572648];
    assert_eq!(unop(ErfInv, &ys), want.to_vec());
    for (x, y) in want.iter().zip(ys) {
        close(math::erf(*x), y, 1e-15);
    }
    assert_eq!(unop(ErfInv, &[1.0f32, -1.0, 0.0]), vec![f32::INFINITY, f32::NEG_INFINITY, 0.0]);
    assert!(unop(ErfInv, &[1.5f64])[0].is_nan());
    // lgamma / digamma reference values
    let lg = unop(Lgamma, &[0.5f64, 3.0, 10.0, -0.5, 100.0]);
    let want = [0.5723649429247001, std::f64::consts::LN_2, 12.801827480081469, 1.2655121234846454, 359.1342053695754];
    for (g, w) in lg.iter().zip(want) {
        close(*g, w, 1e-13);
    }
    assert_eq!(unop(Lgamma, &[0.0f64, -2.0])[0], f64::INFINITY);
    let dg = unop(Digamma, &[1.0f64, 0.5, 10.0, -0.5]);
    let want = [-0.5772156649015329, -1.9635100260214235, 2.251752589066721, 0.03648997397857652];
    for (g, w) in dg.iter().zip(want) {
        close(*g, w, 1e-14);
    }
    assert!(unop(Digamma, &[0.0f64, -3.0]).iter().all(|v| v.is_nan()));
    // binary math
    let p: Vec<f32> = binop(BinaryOp::Pow, &[2.0f32, 9.0, -8.0], &[10.0f32, 0.5, 1.0 / 3.0]);
    same_f32(&p, &[2.0f32.powf(10.0), 3.0, (-8.0f32).powf(1.0 / 3.0)]);
    let a: Vec<f64> = binop(BinaryOp::Atan2, &[1.0f64, -1.0], &[-1.0f64, 0.0]);
    assert_eq!(a, vec![1.0f64.atan2(-1.0), (-1.0f64).atan2(0.0)]);
    // pow with an integer exponent
    let p: Vec<f32> = {
        let a = Aval::new(DType::F32, vec![2]);
        let b = Aval::new(DType::I32, vec![2]);
        let plan = plan1(
            vec![a.clone(), b],
            vec![2],
            vec![],
            vec![kin(0, DType::F32, vec![1]), kin(1, DType::I32, vec![1])],
            vec![load(0, DType::F32), load(1, DType::I32), bin(BinaryOp::Pow, 0, 1, DType::F32)],
            vec![(a, 2, OutputKind::Store)],
        );
        read(&run_plan(&plan, &[buf(&[2], &[2.0f32, 3.0]), buf(&[2], &[3i32, -1])])[0])
    };
    assert_eq!(p, vec![8.0, 1.0 / 3.0]);
}

#[test]
fn bad_plans_and_arguments_are_errors() {
    let good = || {
        plan1(
            vec![Aval::new(DType::F32, vec![4])],
            vec![4],
            vec![],
            vec![kin(0, DType::F32, vec![1])],
            vec![load(0, DType::F32)],
            vec![(Aval::new(DType::F32, vec![4]), 0, OutputKind::Store)],
        )
    };
    let exe = compile(&good()).unwrap();
    match exe.run(&[buf(&[3], &[1.0f32, 2.0, 3.0])]) {
        Err(Error::Arguments(m)) => assert!(m.contains("input 0") && m.contains("f32[4]") && m.contains("f32[3]"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert!(matches!(exe.run(&[]), Err(Error::Arguments(_))));
    let codegen_err = |p: Plan| match compile(&p) {
        Err(Error::Codegen(_)) | Err(Error::Unsupported(_)) => {}
        other => panic!("expected an error, got {:?}", other.map(|_| ())),
    };
    let mut p = good();
    if let Step::Kernel(k) = &mut p.steps[0] {
        k.inputs[0].strides = vec![2]; // reads past the end
    }
    codegen_err(p);
    let mut p = good();
    if let Step::Kernel(k) = &mut p.steps[0] {
        k.inputs[0].offset = -1;
    }
    codegen_err(p);
    let mut p = good();
    if let Step::Kernel(k) = &mut p.steps[0] {
        k.inputs[0].strides = vec![1, 1];
    }
    codegen_err(p);
    let mut p = good();
    if let Step::Kernel(k) = &mut p.steps[0] {
        k.body.push(bin(BinaryOp::Add, 0, 5, DType::F32));
        k.outputs[0].value = 1;
    }
    codegen_err(p);
    let mut p = good();
    if let Step::Kernel(k) = &mut p.steps[0] {
        k.body.push(bin(BinaryOp::Add, 0, 0, DType::I32));
        k.outputs[0].value = 1;
    }
    codegen_err(p);
    let mut p = good();
    if let Step::Kernel(k) = &mut p.steps[0] {
        k.body.push(bin(BinaryOp::ShiftLeft, 0, 0, DType::F32));
        k.outputs[0].value = 1;
    }
    codegen_err(p);
    let mut p = good();
    p.outputs = vec![9];
    codegen_err(p);
    let mut p = good();
    if let Step::Kernel(k) = &mut p.steps[0] {
        k.inputs[0].slot = 1; // reads its own output
    }
    codegen_err(p);
}

/// `cargo test --release --lib cpu::tests::throughput -- --ignored --nocapture`: x * 2 + 1 over 1e7 f32
/// (JAX's jitted figure on this machine: ~12.7 ms including the output allocation), and a row sum.
#[test]
#[ignore]
fn throughput_smoke() {
    let n = 10_000_000;
    let p = plan1(
        vec![Aval::new(DType::F32, vec![n])],
        vec![n],
        vec![],
        vec![kin(0, DType::F32, vec![1])],
        vec![
            load(0, DType::F32),
            ins(KOp::Const { value: Scalar::Float(2.0) }, DType::F32),
            ins(KOp::Const { value: Scalar::Float(1.0) }, DType::F32),
            bin(BinaryOp::Mul, 0, 1, DType::F32),
            bin(BinaryOp::Add, 3, 2, DType::F32),
        ],
        vec![(Aval::new(DType::F32, vec![n]), 4, OutputKind::Store)],
    );
    let exe = compile(&p).unwrap();
    let x = buf(&[n], &vec![1.5f32; n]);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let o = exe.run(std::slice::from_ref(&x)).unwrap();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(read::<f32>(&o[0])[n - 1], 4.0);
    }
    println!("x*2+1 over 1e7 f32: {best:.2} ms (best of 5, scalar loop, 1 thread, with output allocation)");
    let (f, len) = exe.kernel_entry(0).unwrap();
    let out = Buffer::alloc(&Aval::new(DType::F32, vec![n])).unwrap();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        unsafe { f([x.as_ptr() as *const u8].as_ptr(), [out.as_ptr()].as_ptr(), 0, len) };
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("  same, kernel only into a warm buffer: {best:.2} ms");
    if std::env::var_os("CRANAX_CPU_DISASM").is_some() {
        println!("{}", exe.as_text());
    }
    let (r, c) = (1000, 10_000);
    let p = plan1(
        vec![Aval::new(DType::F32, vec![r, c])],
        vec![r, c],
        vec![1],
        vec![kin(0, DType::F32, vec![c as isize, 1])],
        vec![load(0, DType::F32)],
        vec![(Aval::new(DType::F32, vec![r]), 0, OutputKind::Reduce(ReduceOp::Sum))],
    );
    let exe = compile(&p).unwrap();
    let x = buf(&[r, c], &vec![1.0f32; r * c]);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let o = exe.run(std::slice::from_ref(&x)).unwrap();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(read::<f32>(&o[0])[0], c as f32);
    }
    println!("row sum of f32[1000, 10000]: {best:.2} ms (best of 5)");
}

/// A 1-D f32 kernel applying `op` (unary) or `op(x, y)` (binary) elementwise.
fn math_plan(n: usize, body_op: KInstr, binary: bool) -> Plan {
    let a = Aval::new(DType::F32, vec![n]);
    let mut body = vec![load(0, DType::F32)];
    let mut ins_ = vec![kin(0, DType::F32, vec![1])];
    let mut avals = vec![a.clone()];
    if binary {
        body.push(load(1, DType::F32));
        ins_.push(kin(1, DType::F32, vec![1]));
        avals.push(a.clone());
    }
    body.push(body_op);
    let v = body.len() - 1;
    plan1(avals, vec![n], vec![], ins_, body, vec![(a, v, OutputKind::Store)])
}

/// Runs `p` over the inputs both in one call (vector loop) and one element per call (scalar tail): the
/// results must agree bit for bit. Returns the one-call result.
fn run_both_ways(p: &Plan, inputs: &[Buffer], n: usize) -> Vec<f32> {
    let exe = compile(p).unwrap();
    let full = read::<f32>(&exe.run(inputs).unwrap()[0]);
    let (f, len) = exe.kernel_entry(0).unwrap();
    assert_eq!(len as usize, n);
    let out = Buffer::alloc(&Aval::new(DType::F32, vec![n])).unwrap();
    let ins: Vec<*const u8> = inputs.iter().map(|b| b.as_ptr() as *const u8).collect();
    let outs = [out.as_ptr()];
    // Every 7th element alone (scalar code), the rest in runs of odd lengths; in the float mode the
    // executable runs kernels in (subnormals flushed, fpenv.rs).
    let _flush = super::fpenv::FlushDenormals::new();
    let mut i = 0;
    while i < n {
        let e = if i % 7 == 0 { i + 1 } else { (i + 37).min(n) };
        unsafe { f(ins.as_ptr(), outs.as_ptr(), i as u64, e as u64) };
        i = e;
    }
    let split = read::<f32>(&out);
    for (i, (a, b)) in full.iter().zip(&split).enumerate() {
        assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "element {i}: vector {a:e} vs scalar {b:e}");
    }
    full
}

fn sweep_points() -> Vec<f32> {
    let mut v: Vec<f32> = (0..=u32::MAX).step_by(4093).map(f32::from_bits).collect();
    v.extend([
        0.0, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MIN_POSITIVE, -f32::MIN_POSITIVE,
        f32::from_bits(1), f32::from_bits(0x8000_0001), f32::MAX, f32::MIN, 88.72283, 88.72284, -87.33654,
        -103.97, -104.0, 1e30, -1e30, 1e-30, 0.5, 2.0, 0.1, 1e-8, 3.0e38,
    ]);
    v
}

/// float32 erf_inv is XLA:CPU's computation: values recorded from `jax.lax.erf_inv` (JAX 0.10.2, x86-64 with
/// FMA), equal on vector lanes and the scalar tail; within 5 ulp of the f64 inverse for |x| < 0.99.
#[test]
fn erf_inv_f32_is_xlas() {
    let pts = [0.5f32, -0.3, 0.9, 0.99, 0.999, 0.9999, 0.99999994, -0.99999994, 1e-3, 1e-20, 0.7, 0.8413447, -0.95, 0.2];
    let want: [u32; 14] = [
        0x3EF430FE, 0xBE8B803D, 0x3F94E009, 0x3FE92333, 0x4014E999, 0x403010D3, 0x407547CA, 0xC07547CA, 0x3A6851B2,
        0x1E27674C, 0x3F3B9D4F, 0x3F7F2A9C, 0xBFB1654B, 0x3E377163,
    ];
    let mut xs: Vec<f32> = pts.to_vec();
    xs.extend((0..=20000).map(|i| i as f32 / 10000.0 - 1.0));
    xs.extend([1.0, -1.0, 0.0, -0.0, 1.5, -2.0, f32::NAN, f32::INFINITY]);
    let n = xs.len();
    let got = run_both_ways(&math_plan(n, un(UnaryOp::ErfInv, 0, DType::F32), false), &[buf(&[n], &xs)], n);
    if vmath::host_fma() {
        let bits: Vec<u32> = got[..pts.len()].iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits, want);
    }
    for (&g, &x) in got.iter().zip(&xs) {
        if x.abs() < 0.99 && x.abs() > 1e-30 {
            assert!(ulp_err(g, math::erf_inv(x as f64)) <= 5.0, "erf_inv({x}) = {g}");
        }
    }
    let tail = &got[n - 8..];
    assert_eq!(&tail[..4], &[f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0]);
    assert!(tail[3].is_sign_negative() && tail[4..].iter().all(|v| v.is_nan()));
}

/// The float32 ulp sweep of the inline math library against f64 std (the Python suite repeats it against
/// NumPy with more points): max error ≤ 4 ulp, and vector lanes equal the scalar tail bit for bit.
#[test]
fn vmath_ulp_sweep() {
    use UnaryOp::*;
    let xs = sweep_points();
    let n = xs.len();
    let xb = buf(&[n], &xs);
    let unary: [(UnaryOp, fn(f64) -> f64, f64); 12] = [
        (Exp, f64::exp, 5.0), // XLA:CPU's, bit for bit: 4.56 ulp near overflow (n clamped to 127)
        (Exp2, f64::exp2, 4.0),
        (Expm1, f64::exp_m1, 6.0), // XLA:CPU's, bit for bit: 5.67 ulp
        (Log, f64::ln, 4.0),
        (Log1p, f64::ln_1p, 4.0),
        (Tanh, f64::tanh, 5.0), // XLA:CPU's rational approximation, bit for bit: 4.80 ulp at most
        (Logistic, math::logistic, 4.0),
        (Sin, f64::sin, 4.0),
        (Cos, f64::cos, 4.0),
        (Tan, f64::tan, 4.0),
        (Erf, math::erf, 6.0), // XLA:CPU's, bit for bit: 5.35 ulp
        (Rsqrt, |x: f64| 1.0 / x.sqrt(), 4.0),
    ];
    let mut report = String::new();
    for (op, f, tol) in unary {
        let got = run_both_ways(&math_plan(n, un(op, 0, DType::F32), false), std::slice::from_ref(&xb), n);
        let (mut worst, mut at) = (0.0f64, 0.0f32);
        for (&g, &x) in got.iter().zip(&xs) {
            let e = ulp_err_either(g, f(x as f64), ftz(f(daz(x) as f64)));
            if e > worst || e.is_nan() {
                worst = e;
                at = x;
            }
        }
        report.push_str(&format!("{op:?}: max {worst:.3} ulp at {at:e}\n"));
        assert!(worst <= tol, "{op:?}: {worst} ulp at x = {at:e} (got {:e}, want {:e})", {
            let i = xs.iter().position(|v| v.to_bits() == at.to_bits()).unwrap();
            got[i]
        }, f(at as f64));
    }
    // Binary: pairs from two interleaved sweeps.
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut ys: Vec<f32> = (0..n).map(|_| f32::from_bits(rnd() as u32)).collect();
    // Many small exponents (the interesting part of pow) and integers.
    for (i, y) in ys.iter_mut().enumerate() {
        match i % 4 {
            0 => *y = (*y % 16.0).trunc(),
            1 => *y %= 40.0,
            _ => {}
        }
    }
    let pxs: Vec<f32> = xs.iter().enumerate().map(|(i, &x)| if i % 3 == 0 { x % 4.0 } else { x }).collect();
    let pb = buf(&[n], &pxs);
    let yb = buf(&[n], &ys);
    let binary: [(BinaryOp, fn(f64, f64) -> f64); 2] = [(BinaryOp::Pow, f64::powf), (BinaryOp::Atan2, f64::atan2)];
    for (op, f) in binary {
        let got = run_both_ways(&math_plan(n, bin(op, 0, 1, DType::F32), true), &[pb.clone(), yb.clone()], n);
        let (mut worst, mut at) = (0.0f64, (0.0f32, 0.0f32));
        // float32 pow is the C library's powf (as XLA's): a signaling NaN operand gives NaN, even where C99's
        // pow(x, 0) / pow(1, y) is 1; widening to f64 quiets it, so the oracle would say 1
        let snan = |v: f32| v.is_nan() && v.to_bits() & 0x0040_0000 == 0;
        // float32 atan2 is the C library's atan2f under FTZ/DAZ (as XLA's): two subnormal operands are not zeros
        // to its bit tests but divide as 0/0, so NaN
        let sub = |v: f32| v.to_bits() & 0x7fff_ffff != 0 && daz(v) == 0.0;
        for ((&g, &x), &y) in got.iter().zip(&pxs).zip(&ys) {
            let want = if (op == BinaryOp::Pow && (snan(x) || snan(y))) || (op == BinaryOp::Atan2 && sub(x) && sub(y)) {
                f64::NAN
            } else {
                f(x as f64, y as f64)
            };
            let e = ulp_err_either(g, want, ftz(f(daz(x) as f64, daz(y) as f64)));
            if e > worst || e.is_nan() {
                worst = e;
                at = (x, y);
            }
        }
        report.push_str(&format!("{op:?}: max {worst:.3} ulp at {at:?}\n"));
        assert!(worst <= 4.0, "{op:?}: {worst} ulp at {at:?}: want {:e}", f(at.0 as f64, at.1 as f64));
    }
    println!("{report}");
}

/// Compiles `p` twice (vectorized and all-scalar), runs both on `inputs`, and requires bit-identical
/// outputs (NaNs equal). Returns the vectorized outputs and the SIMD mode line of the kernel text.
fn simd_vs_scalar(p: &Plan, inputs: &[Buffer]) -> (Vec<Buffer>, String) {
    let exe = compile(p).unwrap_or_else(|e| panic!("compile failed: {e}\n{p:#?}"));
    let scal = without_simd(|| compile(p).unwrap());
    let a = exe.run(inputs).unwrap();
    let b = scal.run(inputs).unwrap();
    for (o, (x, y)) in a.iter().zip(&b).enumerate() {
        let es = x.dtype().size();
        let same = x.as_bytes().chunks(es).zip(y.as_bytes().chunks(es)).all(|(u, v)| {
            u == v
                || match x.dtype() {
                    DType::F32 => f32::get(u).is_nan() && f32::get(v).is_nan(),
                    DType::F64 => f64::get(u).is_nan() && f64::get(v).is_nan(),
                    _ => false,
                }
        });
        assert!(same, "output {o} differs between SIMD and scalar code\n{}", exe.as_text());
    }
    let mode = half_chain_matches_inline(p, inputs, exe.as_text(), &a);
    (a, mode)
}

fn f32_data(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) % 2001) as f32 / 100.0 - 10.0).collect()
}

#[test]
fn simd_elementwise_layouts_and_odd_sizes() {
    let f = DType::F32;
    for &(m, n) in &[(1usize, 0usize), (1, 1), (1, 3), (1, 5), (3, 7), (7, 37), (2, 1000), (1, 1_000_003)] {
        let x = f32_data(m * n, 1);
        let row = f32_data(n, 2);
        let col = f32_data(m, 3);
        // x * row + sin(x) - col, with row broadcast along axis 0 and col along axis 1.
        let p = plan1(
            vec![Aval::new(f, vec![m, n]), Aval::new(f, vec![n]), Aval::new(f, vec![m])],
            vec![m, n],
            vec![],
            vec![kin(0, f, vec![n as isize, 1]), kin(1, f, vec![0, 1]), kin(2, f, vec![1, 0])],
            vec![
                load(0, f),
                load(1, f),
                load(2, f),
                bin(BinaryOp::Mul, 0, 1, f),
                un(UnaryOp::Sin, 0, f),
                bin(BinaryOp::Add, 3, 4, f),
                bin(BinaryOp::Sub, 5, 2, f),
            ],
            vec![(Aval::new(f, vec![m, n]), 6, OutputKind::Store)],
        );
        let ins = [buf(&[m, n], &x), buf(&[n], &row), buf(&[m], &col)];
        let (out, mode) = simd_vs_scalar(&p, &ins);
        if n >= 16 {
            assert!(mode.contains("OuterVec"), "{mode}");
        }
        let got = read::<f32>(&out[0]);
        for i in 0..m * n {
            let want = x[i] * row[i % n] + (x[i] as f64).sin() as f32 - col[i / n];
            assert!((got[i] - want).abs() <= 1e-5 * want.abs().max(1.0), "{i}: {} vs {want}", got[i]);
        }
        // Transposed read: stays scalar, still right.
        if m > 1 && n > 1 {
            let p = plan1(
                vec![Aval::new(f, vec![n, m])],
                vec![m, n],
                vec![],
                vec![kin(0, f, vec![1, m as isize])],
                vec![load(0, f), un(UnaryOp::Exp, 0, f)],
                vec![(Aval::new(f, vec![m, n]), 1, OutputKind::Store)],
            );
            let (_, mode) = simd_vs_scalar(&p, &[buf(&[n, m], &x)]);
            assert!(mode.contains("Scalar") || n < 4, "{mode}");
        }
    }
}

#[test]
fn simd_mixed_ops_bool_int_iota_f64() {
    let (f, i32_, b) = (DType::F32, DType::I32, DType::Bool);
    for n in [3usize, 16, 21, 1001] {
        let x = f32_data(n, 5);
        let mask: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
        let k: Vec<i32> = (0..n as i32).map(|i| i * 7 - 50).collect();
        // where(mask | x > 0, x * iota, -x), int ops (div, shift, max), convert, bool output.
        let p = plan1(
            vec![Aval::new(f, vec![n]), Aval::new(b, vec![n]), Aval::new(i32_, vec![n])],
            vec![n],
            vec![],
            vec![kin(0, f, vec![1]), kin(1, b, vec![1]), kin(2, i32_, vec![1])],
            vec![
                load(0, f),                                                     // 0
                load(1, b),                                                     // 1
                load(2, i32_),                                                  // 2
                ins(KOp::Const { value: Scalar::Float(0.0) }, f),               // 3
                ins(KOp::Compare { op: CompareOp::Gt, a: 0, b: 3 }, b),         // 4
                bin(BinaryOp::Or, 1, 4, b),                                     // 5
                ins(KOp::Iota { axis: 0 }, f),                                  // 6
                bin(BinaryOp::Mul, 0, 6, f),                                    // 7
                un(UnaryOp::Neg, 0, f),                                         // 8
                ins(KOp::Select { pred: 5, cases: vec![8, 7] }, f),             // 9
                ins(KOp::Const { value: Scalar::Int(3) }, i32_),                // 10
                bin(BinaryOp::Div, 2, 10, i32_),                                // 11
                bin(BinaryOp::ShiftLeft, 2, 10, i32_),                          // 12
                bin(BinaryOp::Max, 11, 12, i32_),                               // 13
                ins(KOp::Convert { a: 0 }, i32_),                               // 14
                bin(BinaryOp::Add, 13, 14, i32_),                               // 15
                un(UnaryOp::Not, 5, b),                                         // 16
                ins(KOp::IntegerPow { a: 0, y: 3 }, f),                         // 17
                ins(KOp::Bitcast { a: 2 }, f),                                  // 18
                bin(BinaryOp::Add, 17, 18, f),                                  // 19
            ],
            vec![
                (Aval::new(f, vec![n]), 9, OutputKind::Store),
                (Aval::new(i32_, vec![n]), 15, OutputKind::Store),
                (Aval::new(b, vec![n]), 16, OutputKind::Store),
                (Aval::new(f, vec![n]), 19, OutputKind::Store),
            ],
        );
        let (out, mode) = simd_vs_scalar(&p, &[buf(&[n], &x), buf(&[n], &mask), buf(&[n], &k)]);
        if n >= 16 {
            assert!(mode.contains("OuterVec") && mode.contains("4 lanes"), "{mode}");
        }
        let o0 = read::<f32>(&out[0]);
        let o2 = read::<bool>(&out[2]);
        for i in 0..n {
            let m = mask[i] || x[i] > 0.0;
            assert_eq!(o0[i], if m { x[i] * i as f32 } else { -x[i] });
            assert_eq!(o2[i], !m);
        }
        // f64 / i64: 2 lanes, imported exp per lane.
        let xd: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let p = plan1(
            vec![Aval::new(DType::F64, vec![n])],
            vec![n],
            vec![],
            vec![kin(0, DType::F64, vec![1])],
            vec![
                load(0, DType::F64),
                un(UnaryOp::Exp, 0, DType::F64),
                ins(KOp::Convert { a: 0 }, DType::I64),
                bin(BinaryOp::Mul, 2, 2, DType::I64),
                ins(KOp::Convert { a: 3 }, DType::F64),
                bin(BinaryOp::Add, 1, 4, DType::F64),
            ],
            vec![(Aval::new(DType::F64, vec![n]), 5, OutputKind::Store)],
        );
        let (out, mode) = simd_vs_scalar(&p, &[buf(&[n], &xd)]);
        if n >= 16 {
            assert!(mode.contains("2 lanes"), "{mode}");
        }
        let got = read::<f64>(&out[0]);
        for i in 0..n {
            let t = xd[i] as i64;
            // f64 exp is XLA's sequence (math_xla64), not libm's
            assert_eq!(got[i], super::math_xla64::exp(xd[i]) + (t * t) as f64);
        }
    }
}

#[test]
fn simd_reductions_rows_columns_all() {
    let f = DType::F32;
    for &(m, n) in &[(1usize, 1usize), (3, 5), (5, 3), (2, 16), (17, 33), (64, 100), (3, 1000), (1000, 3), (1, 100_003)] {
        // Integer-valued data: float sums are exact in any order, so SIMD and scalar must agree exactly.
        let x: Vec<f32> = (0..m * n).map(|i| ((i * 7919) % 201) as f32 - 100.0).collect();
        for (axes, out_shape) in [(vec![1], vec![m]), (vec![0], vec![n]), (vec![0, 1], vec![])] {
            for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min] {
                let p = plan1(
                    vec![Aval::new(f, vec![m, n])],
                    vec![m, n],
                    axes.clone(),
                    vec![kin(0, f, vec![n as isize, 1])],
                    vec![load(0, f)],
                    vec![(Aval::new(f, out_shape.clone()), 0, OutputKind::Reduce(op))],
                );
                let (out, mode) = simd_vs_scalar(&p, &[buf(&[m, n], &x)]);
                let got = read::<f32>(&out[0]);
                let red = |it: &mut dyn Iterator<Item = f32>| -> f32 {
                    match op {
                        ReduceOp::Sum => it.sum(),
                        ReduceOp::Max => it.fold(f32::NEG_INFINITY, f32::max),
                        _ => it.fold(f32::INFINITY, f32::min),
                    }
                };
                let want: Vec<f32> = match axes.as_slice() {
                    [1] => (0..m).map(|i| red(&mut (0..n).map(|j| x[i * n + j]))).collect(),
                    [0] => (0..n).map(|j| red(&mut (0..m).map(|i| x[i * n + j]))).collect(),
                    _ => vec![red(&mut x.iter().copied())],
                };
                assert_eq!(got, want, "{op:?} over {axes:?} of [{m}, {n}] ({mode})");
                // (float sums follow XLA's orders instead: `loop_plan::SumOrder`)
                if axes == [1] && n >= 16 && op != ReduceOp::Sum {
                    assert!(mode.contains("InnerRed"), "{mode}");
                }
                if axes == [0] && n >= 16 && m > 1 {
                    assert!(mode.contains("OuterVec"), "{mode}");
                }
            }
        }
    }
    // Reductions over interleaved axes, NaN in max, integer and bool reductions, a store output alongside.
    let (a, b_, c) = (4usize, 6usize, 9usize);
    let mut x: Vec<f32> = (0..a * b_ * c).map(|i| ((i * 31) % 17) as f32).collect();
    x[40] = f32::NAN;
    let p = plan1(
        vec![Aval::new(f, vec![a, b_, c])],
        vec![a, b_, c],
        vec![0, 2],
        vec![kin(0, f, vec![(b_ * c) as isize, c as isize, 1])],
        vec![
            load(0, f),
            ins(KOp::Convert { a: 0 }, DType::I32),
            ins(KOp::Const { value: Scalar::Float(8.0) }, f),
            ins(KOp::Compare { op: CompareOp::Gt, a: 0, b: 2 }, DType::Bool),
        ],
        vec![
            (Aval::new(f, vec![b_]), 0, OutputKind::Reduce(ReduceOp::Max)),
            (Aval::new(DType::I32, vec![b_]), 1, OutputKind::Reduce(ReduceOp::Sum)),
            (Aval::new(DType::Bool, vec![b_]), 3, OutputKind::Reduce(ReduceOp::Or)),
            (Aval::new(DType::Bool, vec![b_]), 3, OutputKind::Reduce(ReduceOp::And)),
        ],
    );
    let (out, _) = simd_vs_scalar(&p, &[buf(&[a, b_, c], &x)]);
    let mx = read::<f32>(&out[0]);
    assert!(mx[40 / c % b_].is_nan());
    let sums = read::<i32>(&out[1]);
    for j in 0..b_ {
        let want: i32 = (0..a).flat_map(|i| (0..c).map(move |k| (i, k))).map(|(i, k)| x[i * b_ * c + j * c + k] as i32).sum();
        assert_eq!(sums[j], want);
    }
}

#[test]
fn simd_split_ranges_are_bit_identical() {
    // The same elementwise/reduction kernels run as one call and as ragged chunks (thread splits).
    let f = DType::F32;
    let (m, n) = (37usize, 53usize);
    let x = f32_data(m * n, 9);
    let p = plan1(
        vec![Aval::new(f, vec![m, n])],
        vec![m, n],
        vec![1],
        vec![kin(0, f, vec![n as isize, 1])],
        vec![load(0, f), un(UnaryOp::Tanh, 0, f), un(UnaryOp::Exp, 1, f)],
        vec![(Aval::new(f, vec![m]), 2, OutputKind::Reduce(ReduceOp::Sum))],
    );
    let exe = compile(&p).unwrap();
    let inp = buf(&[m, n], &x);
    let whole = read::<f32>(&exe.run(std::slice::from_ref(&inp)).unwrap()[0]);
    let (fun, len) = exe.kernel_entry(0).unwrap();
    let out = Buffer::alloc(&Aval::new(f, vec![m])).unwrap();
    let ins = [inp.as_ptr() as *const u8];
    let outs = [out.as_ptr()];
    for (s, e) in [(0u64, 5u64), (5, 6), (6, 30), (30, len)] {
        unsafe { fun(ins.as_ptr(), outs.as_ptr(), s, e) };
    }
    assert_eq!(read::<f32>(&out), whole);
}

#[test]
fn threaded_runs_match_serial_runs_bit_for_bit() {
    let f = DType::F32;
    // Elementwise (outer split), row sums (outer split), full and few-row sums (chunked reduction).
    let n = 1_000_003usize;
    let x: Vec<f32> = (0..n).map(|i| ((i * 2654435761usize) % 1000) as f32 * 1e-3 + 0.1).collect();
    let xb = buf(&[n], &x);
    let cases: Vec<(Plan, Vec<usize>)> = vec![
        (
            plan1(
                vec![Aval::new(f, vec![n])],
                vec![n],
                vec![],
                vec![kin(0, f, vec![1])],
                vec![load(0, f), un(UnaryOp::Tanh, 0, f)],
                vec![(Aval::new(f, vec![n]), 1, OutputKind::Store)],
            ),
            vec![n],
        ),
        (
            plan1(
                vec![Aval::new(f, vec![n])],
                vec![n],
                vec![0],
                vec![kin(0, f, vec![1])],
                vec![load(0, f), un(UnaryOp::Exp, 0, f)],
                vec![
                    (Aval::new(f, vec![]), 1, OutputKind::Reduce(ReduceOp::Sum)),
                    (Aval::new(f, vec![]), 0, OutputKind::Reduce(ReduceOp::Max)),
                ],
            ),
            vec![n],
        ),
        (
            plan1(
                vec![Aval::new(f, vec![3, 333_334])],
                vec![3, 333_334],
                vec![1],
                vec![kin(0, f, vec![333_334, 1])],
                vec![load(0, f)],
                vec![(Aval::new(f, vec![3]), 0, OutputKind::Reduce(ReduceOp::Sum))],
            ),
            vec![3, 333_334],
        ),
        (
            plan1(
                vec![Aval::new(f, vec![1000, 999])],
                vec![1000, 999],
                vec![0],
                vec![kin(0, f, vec![999, 1])],
                vec![load(0, f)],
                vec![(Aval::new(f, vec![999]), 0, OutputKind::Reduce(ReduceOp::Sum))],
            ),
            vec![1000, 999],
        ),
    ];
    for (p, shape) in cases {
        let exe = compile(&p).unwrap();
        let inp = if shape.len() == 1 { xb.clone() } else { buf(&shape, &x[..shape.iter().product()]) };
        let a = exe.run(std::slice::from_ref(&inp)).unwrap();
        let b = threads::serial(|| exe.run(std::slice::from_ref(&inp)).unwrap());
        let c = exe.run(std::slice::from_ref(&inp)).unwrap();
        for o in 0..a.len() {
            assert_eq!(a[o].as_bytes(), b[o].as_bytes(), "threaded vs serial, output {o}");
            assert_eq!(a[o].as_bytes(), c[o].as_bytes(), "run to run, output {o}");
        }
    }
    // The chunked full sum is right: integer-valued data sums exactly.
    let xi: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let p = plan1(
        vec![Aval::new(f, vec![n])],
        vec![n],
        vec![0],
        vec![kin(0, f, vec![1])],
        vec![load(0, f)],
        vec![(Aval::new(f, vec![]), 0, OutputKind::Reduce(ReduceOp::Sum))],
    );
    let exe = compile(&p).unwrap();
    // (a float sum adds in YNNPACK's sequence: one chunk after another, no threads' chunks)
    assert!(exe.kernels[0].as_ref().unwrap().partial.is_none());
    let got = read::<f32>(&exe.run(&[buf(&[n], &xi)]).unwrap()[0]);
    let want: f64 = xi.iter().map(|&v| v as f64).sum();
    assert_eq!(got[0] as f64, want);
}

#[test]
fn outlined_math_routines_match_inline_math() {
    // A kernel with more than mathlib::OUTLINE_MIN_OPS math operations calls the out-of-line routines;
    // they must give the same bits as the inline code of a one-op kernel.
    let f = DType::F32;
    let xs = sweep_points();
    let xs: Vec<f32> = xs.iter().step_by(37).copied().collect();
    let n = xs.len();
    let xb = buf(&[n], &xs);
    let ops = [UnaryOp::Sin, UnaryOp::Exp, UnaryOp::Log, UnaryOp::Tanh, UnaryOp::Erf, UnaryOp::Cos, UnaryOp::ErfInv];
    let mut body = vec![load(0, f)];
    let mut outs = Vec::new();
    for op in ops {
        body.push(un(op, 0, f));
        outs.push((Aval::new(f, vec![n]), body.len() - 1, OutputKind::Store));
    }
    let p = plan1(vec![Aval::new(f, vec![n])], vec![n], vec![], vec![kin(0, f, vec![1])], body, outs);
    let exe = compile(&p).unwrap();
    assert!(exe.as_text().matches("call fn").count() >= 12, "expected calls of the out-of-line routines");
    let all = exe.run(std::slice::from_ref(&xb)).unwrap();
    for (j, op) in ops.iter().enumerate() {
        let one = run_both_ways(&math_plan(n, un(*op, 0, f), false), std::slice::from_ref(&xb), n);
        let got = read::<f32>(&all[j]);
        for i in 0..n {
            assert!(got[i].to_bits() == one[i].to_bits() || (got[i].is_nan() && one[i].is_nan()), "{op:?}({})", xs[i]);
        }
    }
}

/// `CRANAX_CPU_DISASM=1 cargo test --lib cpu::tests::math_throughput -- --ignored --nocapture`: one thread,
/// kernel only, 1e6 f32 per function (JIT'd code runs at full speed even in a debug build of the crate).
#[test]
#[ignore]
fn math_throughput() {
    use UnaryOp::*;
    let n = 1_000_000;
    let xs: Vec<f32> = (0..n).map(|i| ((i * 7919) % 20001) as f32 / 1000.0 - 10.0).collect();
    let pos: Vec<f32> = xs.iter().map(|v| v.abs() + 0.5).collect();
    let out = Buffer::alloc(&Aval::new(DType::F32, vec![n])).unwrap();
    let time = |p: &Plan, ins: &[Buffer]| -> (f64, String) {
        let exe = compile(p).unwrap();
        let (f, len) = exe.kernel_entry(0).unwrap();
        let ptrs: Vec<*const u8> = ins.iter().map(|b| b.as_ptr() as *const u8).collect();
        let outs = [out.as_ptr()];
        let mut best = f64::MAX;
        for _ in 0..7 {
            let t = std::time::Instant::now();
            unsafe { f(ptrs.as_ptr(), outs.as_ptr(), 0, len) };
            best = best.min(t.elapsed().as_secs_f64());
        }
        let text = exe.as_text();
        let stats = match text.find("; machine code") {
            Some(i) => {
                let mc = &text[i..];
                format!("{} lines, {} spill moves", mc.lines().count(), mc.matches("movdqu").count())
            }
            None => String::new(),
        };
        (best * 1e9 / n as f64, stats)
    };
    let xb = buf(&[n], &xs);
    let pb = buf(&[n], &pos);
    let unit: Vec<f32> = xs.iter().map(|v| v / 10.0).collect();
    let ub = buf(&[n], &unit);
    for op in [Exp, Exp2, Expm1, Log, Log1p, Sin, Cos, Tan, Tanh, Logistic, Erf, ErfInv, Sqrt, Rsqrt] {
        let inp = if matches!(op, Log | Log1p | Sqrt | Rsqrt) { &pb } else if op == ErfInv { &ub } else { &xb };
        let (ns, stats) = time(&math_plan(n, un(op, 0, DType::F32), false), std::slice::from_ref(inp));
        println!("{op:?}: {ns:.2} ns/element  {stats}");
    }
    for op in [BinaryOp::Pow, BinaryOp::Atan2] {
        let (ns, stats) = time(&math_plan(n, bin(op, 0, 1, DType::F32), true), &[pb.clone(), xb.clone()]);
        println!("{op:?}: {ns:.2} ns/element  {stats}");
    }
}

/// 8/16-bit integers: wrapping arithmetic, XLA division, shifts by ≥ the width, popcount, conversions
/// (float → narrow saturates, NaN → 0), min/max/compare by signedness, reductions with narrow identities.
#[test]
fn narrow_ints() {
    let x: Vec<i8> = vec![-128, -1, 0, 1, 127, 100, -100, 7];
    let y: Vec<i8> = vec![-1, 0, 3, -3, 1, 100, 27, 8];
    assert_eq!(binop::<i8, i8>(BinaryOp::Add, &x, &y), x.iter().zip(&y).map(|(a, b)| a.wrapping_add(*b)).collect::<Vec<_>>());
    assert_eq!(binop::<i8, i8>(BinaryOp::Mul, &x, &y), x.iter().zip(&y).map(|(a, b)| a.wrapping_mul(*b)).collect::<Vec<_>>());
    let div: Vec<i8> = x.iter().zip(&y).map(|(&a, &b)| if b == 0 { -1 } else { a.wrapping_div(b) }).collect();
    assert_eq!(binop::<i8, i8>(BinaryOp::Div, &x, &y), div);
    let rem: Vec<i8> = x.iter().zip(&y).map(|(&a, &b)| if b == 0 { a } else { a.wrapping_rem(b) }).collect();
    assert_eq!(binop::<i8, i8>(BinaryOp::Rem, &x, &y), rem);
    assert_eq!(binop::<i8, i8>(BinaryOp::Max, &x, &y), x.iter().zip(&y).map(|(a, b)| *a.max(b)).collect::<Vec<_>>());
    let u: Vec<u8> = vec![0, 1, 7, 8, 9, 200, 255, 128];
    let s: Vec<u8> = vec![0, 1, 7, 8, 9, 255, 3, 1];
    let shl: Vec<u8> = u.iter().zip(&s).map(|(&a, &b)| if b >= 8 { 0 } else { a << b }).collect();
    assert_eq!(binop::<u8, u8>(BinaryOp::ShiftLeft, &u, &s), shl);
    let shr: Vec<u8> = u.iter().zip(&s).map(|(&a, &b)| if b >= 8 { 0 } else { a >> b }).collect();
    assert_eq!(binop::<u8, u8>(BinaryOp::ShiftRightLogical, &u, &s), shr);
    let sar: Vec<u8> = u.iter().zip(&s).map(|(&a, &b)| ((a as i8) >> b.min(7)) as u8).collect();
    assert_eq!(binop::<u8, u8>(BinaryOp::ShiftRightArithmetic, &u, &s), sar);
    assert_eq!(binop::<u8, u8>(BinaryOp::Max, &u, &s), u.iter().zip(&s).map(|(a, b)| *a.max(b)).collect::<Vec<_>>());
    let lt: Vec<bool> = binop_cmp::<u8>(CompareOp::Lt, &u, &s);
    assert_eq!(lt, u.iter().zip(&s).map(|(a, b)| a < b).collect::<Vec<_>>());
    let h: Vec<i16> = vec![i16::MIN, -1, 0, 1, i16::MAX, 12345];
    assert_eq!(unop(UnaryOp::PopulationCount, &h), h.iter().map(|v| v.count_ones() as i16).collect::<Vec<_>>());
    assert_eq!(unop(UnaryOp::Neg, &h), h.iter().map(|v| v.wrapping_neg()).collect::<Vec<_>>());
    assert_eq!(unop(UnaryOp::Abs, &h), h.iter().map(|v| v.wrapping_abs()).collect::<Vec<_>>());
    let f: Vec<f32> = vec![f32::NAN, 1e9, -1e9, 127.9, -128.9, 2.5, -2.5, 300.0];
    assert_eq!(convert::<f32, i8>(&f), vec![0, 127, -128, 127, -128, 2, -2, 127]);
    assert_eq!(convert::<f32, u8>(&f), vec![0, 255, 0, 127, 0, 2, 0, 255]);
    assert_eq!(convert::<f32, u16>(&f), vec![0, 65535, 0, 127, 0, 2, 0, 300]);
    assert_eq!(convert::<i8, u16>(&x), x.iter().map(|&v| v as u16).collect::<Vec<_>>());
    assert_eq!(convert::<u8, i16>(&u), u.iter().map(|&v| v as i16).collect::<Vec<_>>());
    assert_eq!(convert::<i16, i8>(&h), h.iter().map(|&v| v as i8).collect::<Vec<_>>());
    assert_eq!(convert::<i8, f32>(&x), x.iter().map(|&v| v as f32).collect::<Vec<_>>());
    assert_eq!(convert::<u16, f64>(&[65535u16, 0]), vec![65535.0, 0.0]);
    assert_eq!(convert::<i64, u8>(&[-1i64, 256, 257]), vec![255u8, 0, 1]);
    assert_eq!(convert::<u8, bool>(&[0u8, 2]), vec![false, true]);
    assert_eq!(convert::<bool, i16>(&[true, false]), vec![1i16, 0]);
    // reductions (scalar path; identities at the narrow range)
    for (op, want) in [(ReduceOp::Max, 127i8), (ReduceOp::Min, -128), (ReduceOp::Sum, x.iter().fold(0i8, |a, b| a.wrapping_add(*b)))] {
        let n = x.len();
        let p = plan1(
            vec![Aval::new(DType::I8, vec![n])],
            vec![n],
            vec![0],
            vec![kin(0, DType::I8, vec![1])],
            vec![load(0, DType::I8)],
            vec![(Aval::new(DType::I8, vec![]), 0, OutputKind::Reduce(op))],
        );
        assert_eq!(read::<i8>(&run_plan(&p, &[buf(&[n], &x)])[0]), vec![want], "{op:?}");
    }
}

fn binop_cmp<T: Elem>(op: CompareOp, x: &[T], y: &[T]) -> Vec<bool> {
    let n = x.len();
    let a = Aval::new(T::DT, vec![n]);
    let p = plan1(
        vec![a.clone(), a],
        vec![n],
        vec![],
        vec![kin(0, T::DT, vec![1]), kin(1, T::DT, vec![1])],
        vec![load(0, T::DT), load(1, T::DT), ins(KOp::Compare { op, a: 0, b: 1 }, DType::Bool)],
        vec![(Aval::new(DType::Bool, vec![n]), 2, OutputKind::Store)],
    );
    read(&run_plan(&p, &[buf(&[n], x), buf(&[n], y)])[0])
}

/// A 16-bit float's bits in tests (the backend holds them in an i16): `H` float16, `Bh` bfloat16.
macro_rules! bits16 {
    ($name:ident, $dt:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        struct $name(u16);
        impl Elem for $name {
            const DT: DType = $dt;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.0.to_le_bytes())
            }
            fn get(b: &[u8]) -> Self {
                $name(u16::from_le_bytes(b.try_into().unwrap()))
            }
        }
    };
}
bits16!(H, DType::F16);
bits16!(Bh, DType::BF16);

/// The generated float16 conversions agree with the reference ones (`ir::dtype`) bit for bit: every float16
/// to f32/f64/i32/bool, and f32/f64/i32/u32/i64 to float16 over boundaries, ties, subnormals and random bits.
#[test]
fn f16_conversions() {
    use crate::ir::dtype::{f16_bits_to_f32, f32_to_f16_bits, f64_to_f16_bits};
    let all: Vec<H> = (0..=u16::MAX).map(H).collect();
    let f = convert::<H, f32>(&all);
    let want: Vec<f32> = (0..=u16::MAX).map(f16_bits_to_f32).collect();
    same_f32(&f, &want);
    let d = convert::<H, f64>(&all);
    assert!(d.iter().zip(&want).all(|(a, b)| a.to_bits() == (*b as f64).to_bits() || (a.is_nan() && b.is_nan())));
    let i = convert::<H, i32>(&all);
    assert!(i.iter().zip(&want).all(|(a, b)| *a == *b as i32));
    let bo = convert::<H, bool>(&all);
    assert!(bo.iter().zip(&want).all(|(a, b)| *a == (*b != 0.0)));
    let back = convert::<f32, H>(&want);
    for (h, b) in back.iter().enumerate() {
        if want[h].is_nan() {
            assert_eq!(b.0 & 0x7e00, 0x7e00);
        } else {
            assert_eq!(b.0, h as u16, "{h:#x}");
        }
    }
    let mut xs: Vec<f32> = vec![
        65504.0, 65519.99, 65520.0, 1e10, f32::INFINITY, -f32::INFINITY, 2f32.powi(-25), 2f32.powi(-25) * 1.0000001,
        3.0 * 2f32.powi(-25), 2f32.powi(-14) * (1.0 - 2f32.powi(-12)), 1.0 + 2f32.powi(-11), 1.0 + 3.0 * 2f32.powi(-11),
        1e-40, -0.0, 0.1,
    ];
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..200_000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        xs.push(f32::from_bits(s as u32));
        xs.push(((s >> 32) as u32 as f32 / u32::MAX as f32 - 0.5) * 140_000.0 * 2f32.powi(-((s % 30) as i32)));
    }
    let got = convert::<f32, H>(&xs);
    for (x, g) in xs.iter().zip(&got) {
        if x.is_nan() {
            assert_eq!(g.0 & 0x7fff, 0x7e00, "{x}");
        } else {
            assert_eq!(g.0, f32_to_f16_bits(*x), "{x:e}");
        }
    }
    let ds: Vec<f64> = xs.iter().map(|&x| x as f64 * (1.0 + 2f64.powi(-30))).chain([1.0 + 2f64.powi(-11) + 2f64.powi(-40), 1e300, -1e-300]).collect();
    let got = convert::<f64, H>(&ds);
    for (x, g) in ds.iter().zip(&got) {
        if x.is_nan() {
            assert_eq!(g.0 & 0x7fff, 0x7e00);
        } else {
            assert_eq!(g.0, f64_to_f16_bits(*x), "{x:e}");
        }
    }
    let ints: Vec<i32> = vec![0, 1, -1, 2049, 2051, 65504, 65519, 65520, 70000, -70000, i32::MIN, i32::MAX];
    let got = convert::<i32, H>(&ints);
    assert!(ints.iter().zip(&got).all(|(i, g)| g.0 == f64_to_f16_bits(*i as f64)));
    let u: Vec<u32> = vec![0, 65519, 65520, u32::MAX];
    assert!(u.iter().zip(&convert::<u32, H>(&u)).all(|(i, g)| g.0 == f64_to_f16_bits(*i as f64)));
    let l: Vec<i64> = vec![i64::MIN, -65519, 3, i64::MAX];
    assert!(l.iter().zip(&convert::<i64, H>(&l)).all(|(i, g)| g.0 == f64_to_f16_bits(*i as f64)));
}

/// A kernel doing float16 arithmetic (not legalized) is refused by the plan validator, not miscompiled.
#[test]
fn f16_arithmetic_is_refused() {
    let p = plan1(
        vec![Aval::new(DType::F16, vec![2])],
        vec![2],
        vec![],
        vec![kin(0, DType::F16, vec![1])],
        vec![load(0, DType::F16), ins(KOp::Binary { op: BinaryOp::Add, a: 0, b: 0 }, DType::F16)],
        vec![(Aval::new(DType::F16, vec![2]), 1, OutputKind::Store)],
    );
    let e = match compile(&p) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("compiled float16 arithmetic"),
    };
    assert!(e.contains("float16"), "{e}");
}

/// Compiles `p` vectorized and all-scalar, runs both, and requires byte-identical outputs (NaN payloads
/// included); returns the vectorized outputs and the kernel's SIMD mode line.
fn simd_vs_scalar_exact(p: &Plan, inputs: &[Buffer]) -> (Vec<Buffer>, String) {
    let exe = compile(p).unwrap_or_else(|e| panic!("compile failed: {e}\n{p:#?}"));
    let scal = without_simd(|| compile(p).unwrap());
    let a = exe.run(inputs).unwrap();
    let b = scal.run(inputs).unwrap();
    for (o, (x, y)) in a.iter().zip(&b).enumerate() {
        let es = x.dtype().size();
        let bad = x.as_bytes().chunks(es).zip(y.as_bytes().chunks(es)).position(|(u, v)| u != v);
        assert!(bad.is_none(), "output {o} differs between SIMD and scalar code at {bad:?}\n{}", exe.as_text());
    }
    let mode = half_chain_matches_inline(p, inputs, exe.as_text(), &a);
    (a, mode)
}

fn f16_plan1(n: usize, in_dt: DType, rest: Vec<KInstr>, out_dt: DType) -> Plan {
    let mut body = vec![load(0, in_dt)];
    body.extend(rest);
    let v = body.len() - 1;
    plan1(
        vec![Aval::new(in_dt, vec![n])],
        vec![n],
        vec![],
        vec![kin(0, in_dt, vec![1])],
        body,
        vec![(Aval::new(out_dt, vec![n]), v, OutputKind::Store)],
    )
}

/// float16 kernels run on vector lanes (widened to i32 lanes, converted with vector integer code) and give
/// the scalar code's bits exactly: every float16 to f32 (NaN payloads kept) and back, f32 bit patterns to
/// float16, conversions to and from bool/i32/u32, arithmetic through f32 on sizes that leave SIMD tails,
/// selects, and broadcast / non-contiguous inputs.
#[test]
fn f16_simd_matches_scalar() {
    use crate::ir::dtype::f16_bits_to_f32;
    let (h, f, b) = (DType::F16, DType::F32, DType::Bool);
    let cvt = |dt: DType, a: usize| ins(KOp::Convert { a }, dt);
    let all: Vec<H> = (0..=u16::MAX).map(H).collect();
    let n = all.len();
    let ab = buf(&[n], &all);
    // every float16 → f32, exactly the reference bits (signalling NaNs stay signalling)
    let (out, mode) = simd_vs_scalar_exact(&f16_plan1(n, h, vec![cvt(f, 0)], f), std::slice::from_ref(&ab));
    assert!(mode.contains("OuterVec"), "{mode}");
    let got = read::<f32>(&out[0]);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(g.to_bits(), f16_bits_to_f32(i as u16).to_bits(), "{i:#x}");
    }
    // round trip in one kernel: identity except NaN → 0x7e00 with its sign
    let (out, mode) = simd_vs_scalar_exact(&f16_plan1(n, h, vec![cvt(f, 0), cvt(h, 1)], h), std::slice::from_ref(&ab));
    assert!(mode.contains("OuterVec"), "{mode}");
    for (i, g) in read::<H>(&out[0]).iter().enumerate() {
        let want = if (i & 0x7fff) > 0x7c00 { (i as u16 & 0x8000) | 0x7e00 } else { i as u16 };
        assert_eq!(g.0, want, "{i:#x}");
    }
    // to and from bool / i32 / u32, float16 → float16
    for (rest, out_dt) in [
        (vec![cvt(b, 0)], b),
        (vec![cvt(DType::I32, 0)], DType::I32),
        (vec![cvt(DType::U32, 0)], DType::U32),
        (vec![cvt(b, 0), cvt(h, 1)], h),
        (vec![cvt(DType::I32, 0), cvt(h, 1)], h),
        (vec![cvt(DType::U32, 0), cvt(h, 1)], h),
        (vec![cvt(h, 0)], h),
    ] {
        let (_, mode) = simd_vs_scalar_exact(&f16_plan1(n, h, rest, out_dt), std::slice::from_ref(&ab));
        assert!(mode.contains("OuterVec"), "{mode}");
    }
    let mut ints: Vec<i32> = (-70_000..70_000).step_by(7).collect();
    ints.extend([i32::MIN, i32::MAX, 65504, 65519, 65520, 2049, 2051]);
    let p = f16_plan1(ints.len(), DType::I32, vec![cvt(h, 0)], h);
    simd_vs_scalar_exact(&p, &[buf(&[ints.len()], &ints)]);
    let us: Vec<u32> = ints.iter().map(|&i| i as u32).collect();
    let p = f16_plan1(us.len(), DType::U32, vec![cvt(h, 0)], h);
    simd_vs_scalar_exact(&p, &[buf(&[us.len()], &us)]);
    // f32 bit patterns → float16: specials, every boundary region, random bits (NaN payloads too)
    let mut xs: Vec<f32> = vec![
        0.0, -0.0, 65504.0, 65519.99, 65520.0, -65520.0, 1e10, f32::INFINITY, -f32::INFINITY, f32::NAN,
        f32::from_bits(0x7f80_0001), f32::from_bits(0xffff_ffff), 2f32.powi(-24), 2f32.powi(-25),
        2f32.powi(-25) * 1.0000001, 3.0 * 2f32.powi(-25), 2f32.powi(-14), 2f32.powi(-14) * (1.0 - 2f32.powi(-12)),
        1.0 + 2f32.powi(-11), 1.0 + 3.0 * 2f32.powi(-11), 1e-40, -1e-45, f32::MAX, f32::MIN_POSITIVE,
    ];
    for e in 100u32..150 {
        for m in [0u32, 1, 0xfff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x7f_e000, 0x7f_efff, 0x7f_f000, 0x7f_ffff] {
            xs.push(f32::from_bits((e << 23) | m));
            xs.push(f32::from_bits(0x8000_0000 | (e << 23) | m));
        }
    }
    let mut s: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..300_000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        xs.push(f32::from_bits(s as u32));
        xs.push(f32::from_bits(((s >> 32) as u32 & 0x87ff_ffff) | 0x3000_0000));
    }
    let p = f16_plan1(xs.len(), f, vec![cvt(h, 0)], h);
    let (_, mode) = simd_vs_scalar_exact(&p, &[buf(&[xs.len()], &xs)]);
    assert!(mode.contains("OuterVec"), "{mode}");
    // x * 2 + 1 and exp(x) through f32, sizes with every SIMD tail
    let c = |v: f64| ins(KOp::Const { value: Scalar::Float(v) }, f);
    for &len in &[0usize, 1, 3, 5, 7, 9, 17, 1_000_003] {
        let x: Vec<H> = (0..len).map(|i| H((i as u32).wrapping_mul(2_654_435_761) as u16)).collect();
        let xb = buf(&[len], &x);
        let arith = vec![cvt(f, 0), c(2.0), bin(BinaryOp::Mul, 1, 2, f), c(1.0), bin(BinaryOp::Add, 3, 4, f), cvt(h, 5)];
        let (out, mode) = simd_vs_scalar_exact(&f16_plan1(len, h, arith, h), std::slice::from_ref(&xb));
        assert!(mode.contains("OuterVec") || len < 4, "{mode}");
        for (g, xi) in read::<H>(&out[0]).iter().zip(&x) {
            let v = f16_bits_to_f32(xi.0);
            let want = crate::ir::dtype::f32_to_f16_bits(v * 2.0 + 1.0);
            assert!(g.0 == want || (v.is_nan() && g.0 & 0x7fff == 0x7e00), "{:#x}: {:#x} vs {want:#x}", xi.0, g.0);
        }
        let (_, mode) =
            simd_vs_scalar_exact(&f16_plan1(len, h, vec![cvt(f, 0), un(UnaryOp::Exp, 1, f), cvt(h, 2)], h), &[xb]);
        assert!(mode.contains("OuterVec") || len < 4, "{mode}");
    }
    // where(x > y, x, y) on float16 values, y broadcast along axis 0 (stride 0), a scalar broadcast, and a
    // non-contiguous (strided) read
    for &(m, nn) in &[(1usize, 1usize), (3, 5), (5, 9), (7, 37), (3, 1001)] {
        let x: Vec<H> = (0..m * nn).map(|i| H((i as u32).wrapping_mul(40_503) as u16)).collect();
        let y: Vec<H> = (0..nn).map(|i| H((i as u32).wrapping_mul(2_654_435_761) as u16 ^ 0x8000)).collect();
        let z = [H(0x3c01)];
        let p = plan1(
            vec![Aval::new(h, vec![m, nn]), Aval::new(h, vec![nn]), Aval::new(h, vec![])],
            vec![m, nn],
            vec![],
            vec![kin(0, h, vec![nn as isize, 1]), kin(1, h, vec![0, 1]), kin(2, h, vec![0, 0])],
            vec![
                load(0, h),                                                   // 0
                load(1, h),                                                   // 1
                load(2, h),                                                   // 2
                cvt(f, 0),                                                    // 3
                cvt(f, 1),                                                    // 4
                ins(KOp::Compare { op: CompareOp::Gt, a: 3, b: 4 }, b),       // 5
                ins(KOp::Select { pred: 5, cases: vec![1, 0] }, h),           // 6
                cvt(f, 2),                                                    // 7
                bin(BinaryOp::Mul, 3, 7, f),                                  // 8
                cvt(h, 8),                                                    // 9
                ins(KOp::Const { value: Scalar::Float(-2.5) }, h),            // 10
                ins(KOp::Select { pred: 5, cases: vec![10, 2] }, h),          // 11
            ],
            vec![
                (Aval::new(h, vec![m, nn]), 6, OutputKind::Store),
                (Aval::new(h, vec![m, nn]), 9, OutputKind::Store),
                (Aval::new(h, vec![m, nn]), 11, OutputKind::Store),
            ],
        );
        let ins_ = [buf(&[m, nn], &x), buf(&[nn], &y), buf(&[], &z)];
        let (out, mode) = simd_vs_scalar_exact(&p, &ins_);
        if nn >= 4 {
            assert!(mode.contains("OuterVec"), "{mode}");
        }
        let (got, got2) = (read::<H>(&out[0]), read::<H>(&out[2]));
        for i in 0..m * nn {
            let (a, bb) = (f16_bits_to_f32(x[i].0), f16_bits_to_f32(y[i % nn].0));
            assert_eq!(got[i].0, if a > bb { x[i].0 } else { y[i % nn].0 }, "{i}");
            assert_eq!(got2[i].0, if a > bb { 0x3c01 } else { 0xc100 }, "{i}");
        }
        // every other element of a row (stride 2): scalar, still the same bits
        if nn > 1 {
            let half = nn / 2;
            let p = plan1(
                vec![Aval::new(h, vec![m, nn])],
                vec![m, half],
                vec![],
                vec![kin(0, h, vec![nn as isize, 2])],
                vec![load(0, h), cvt(f, 0), un(UnaryOp::Sqrt, 1, f), cvt(h, 2)],
                vec![(Aval::new(h, vec![m, half]), 3, OutputKind::Store)],
            );
            simd_vs_scalar_exact(&p, &[buf(&[m, nn], &x)]);
        }
    }
}

/// bfloat16 kernels run on vector lanes as float16's do (sign-extended in i32 lanes) and give the scalar
/// code's bits: every bfloat16 → f32 (its bits are f32's upper half), f32 bit patterns → bfloat16 (ties to
/// even, overflow to infinity, NaN → the sign with 0x7fc0), bool/i32/u32 both ways, float16 ↔ bfloat16,
/// arithmetic through f32 with every SIMD tail, a select between bfloat16 values (select_n: false picks the first).
#[test]
fn bf16_simd_matches_scalar() {
    let (h, f, b) = (DType::BF16, DType::F32, DType::Bool);
    let cvt = |dt: DType, a: usize| ins(KOp::Convert { a }, dt);
    let all: Vec<Bh> = (0..=u16::MAX).map(Bh).collect();
    let n = all.len();
    let ab = buf(&[n], &all);
    let (out, mode) = simd_vs_scalar_exact(&f16_plan1(n, h, vec![cvt(f, 0)], f), std::slice::from_ref(&ab));
    assert!(mode.contains("OuterVec"), "{mode}");
    for (i, g) in read::<f32>(&out[0]).iter().enumerate() {
        assert_eq!(g.to_bits(), (i as u32) << 16, "{i:#x}");
    }
    let (out, mode) = simd_vs_scalar_exact(&f16_plan1(n, h, vec![cvt(f, 0), cvt(h, 1)], h), std::slice::from_ref(&ab));
    assert!(mode.contains("OuterVec"), "{mode}");
    for (i, g) in read::<Bh>(&out[0]).iter().enumerate() {
        let want = if (i & 0x7fff) > 0x7f80 { (i as u16 & 0x8000) | 0x7fc0 } else { i as u16 };
        assert_eq!(g.0, want, "{i:#x}");
    }
    for (rest, out_dt) in [
        (vec![cvt(b, 0)], b),
        (vec![cvt(DType::I32, 0)], DType::I32),
        (vec![cvt(DType::U32, 0)], DType::U32),
        (vec![cvt(b, 0), cvt(h, 1)], h),
        (vec![cvt(DType::I32, 0), cvt(h, 1)], h),
        (vec![cvt(DType::F16, 0)], DType::F16),
        (vec![cvt(DType::F16, 0), cvt(h, 1)], h),
    ] {
        let (_, mode) = simd_vs_scalar_exact(&f16_plan1(n, h, rest, out_dt), std::slice::from_ref(&ab));
        assert!(mode.contains("OuterVec"), "{mode}");
    }
    let mut xs: Vec<f32> = vec![
        0.0, -0.0, f32::MAX, -f32::MAX, f32::INFINITY, -f32::INFINITY, f32::NAN, -f32::NAN,
        f32::from_bits(0x7f80_0001), f32::from_bits(0xffff_ffff), f32::from_bits(0x7f7f_8000), f32::from_bits(0xff7f_8000),
        f32::from_bits(0x3f80_8000), f32::from_bits(0x3f81_8000), f32::from_bits(0xbf80_8000), 1e-40, -1e-45,
    ];
    let mut st: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..300_000 {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        xs.push(f32::from_bits(st as u32));
        xs.push(f32::from_bits(((st >> 32) as u32 & 0xffff_0000) | 0x8000));
    }
    let (out, mode) = simd_vs_scalar_exact(&f16_plan1(xs.len(), f, vec![cvt(h, 0)], h), &[buf(&[xs.len()], &xs)]);
    assert!(mode.contains("OuterVec"), "{mode}");
    for (x, g) in xs.iter().zip(read::<Bh>(&out[0])) {
        let u = x.to_bits();
        let want = if x.is_nan() { ((u >> 16) as u16 & 0x8000) | 0x7fc0 } else { ((u + 0x7fff + ((u >> 16) & 1)) >> 16) as u16 };
        assert_eq!(g.0, want, "{u:#x}");
    }
    let c = |v: f64| ins(KOp::Const { value: Scalar::Float(v) }, f);
    for &len in &[0usize, 1, 3, 5, 7, 9, 17, 100_003] {
        let x: Vec<Bh> = (0..len).map(|i| Bh((i as u32).wrapping_mul(2_654_435_761) as u16)).collect();
        let xb = buf(&[len], &x);
        let arith = vec![cvt(f, 0), c(2.0), bin(BinaryOp::Mul, 1, 2, f), c(1.0), bin(BinaryOp::Add, 3, 4, f), cvt(h, 5)];
        let (_, mode) = simd_vs_scalar_exact(&f16_plan1(len, h, arith, h), std::slice::from_ref(&xb));
        assert!(mode.contains("OuterVec") || len < 4, "{mode}");
        let sel = vec![
            cvt(f, 0),
            c(0.5),
            ins(KOp::Compare { op: CompareOp::Gt, a: 1, b: 2 }, b),
            ins(KOp::Const { value: Scalar::Float(-2.5) }, h),
            ins(KOp::Select { pred: 3, cases: vec![4, 0] }, h),
        ];
        let (out, _) = simd_vs_scalar_exact(&f16_plan1(len, h, sel, h), &[xb]);
        for (g, xi) in read::<Bh>(&out[0]).iter().zip(&x) {
            let v = f32::from_bits(u32::from(xi.0) << 16);
            assert_eq!(g.0, if v > 0.5 { xi.0 } else { 0xc020 });
        }
    }
}

/// float32 multiply-adds rounded once through float64 (`_prng.fma`'s pattern) stay in a 4-lane kernel
/// (as two f64x2 halves), bit-identical to the scalar code and to the float64 arithmetic on the host;
/// a float64 value read by anything else keeps the kernel scalar.
#[test]
fn simd_f64_arithmetic_between_f32_values() {
    let (f, d) = (DType::F32, DType::F64);
    for &n in &[1usize, 5, 8, 37, 1003] {
        let x = f32_data(n, 1);
        let y: Vec<f32> = f32_data(n, 2).iter().map(|v| v * 1.37e-3).collect();
        let z = f32_data(n, 3);
        let cvt = |a: usize| ins(KOp::Convert { a }, d);
        // out = f32(f64(x) * f64(y) + f64(z)) - f32(-(f64(x) - 0.1) * f64(z)) ... as two roots
        let body = vec![
            load(0, f),                        // 0
            load(1, f),                        // 1
            load(2, f),                        // 2
            cvt(0),                            // 3
            cvt(1),                            // 4
            cvt(2),                            // 5
            bin(BinaryOp::Mul, 3, 4, d),       // 6
            bin(BinaryOp::Add, 6, 5, d),       // 7
            ins(KOp::Convert { a: 7 }, f),     // 8
            ins(KOp::Const { value: Scalar::Float(0.1) }, d), // 9
            bin(BinaryOp::Sub, 3, 9, d),       // 10
            un(UnaryOp::Neg, 10, d),           // 11
            bin(BinaryOp::Mul, 11, 5, d),      // 12
            ins(KOp::Convert { a: 12 }, f),    // 13
            bin(BinaryOp::Sub, 8, 13, f),      // 14
        ];
        let avals = vec![Aval::new(f, vec![n]); 3];
        let ins_ = vec![kin(0, f, vec![1]), kin(1, f, vec![1]), kin(2, f, vec![1])];
        let p = plan1(avals.clone(), vec![n], vec![], ins_.clone(), body.clone(), vec![(Aval::new(f, vec![n]), 14, OutputKind::Store)]);
        let bufs = [buf(&[n], &x), buf(&[n], &y), buf(&[n], &z)];
        let (out, mode) = simd_vs_scalar(&p, &bufs);
        if n >= 8 {
            assert!(mode.contains("OuterVec") && mode.contains("4 lanes"), "{mode}");
        }
        let got = read::<f32>(&out[0]);
        for i in 0..n {
            let (a, b, c) = (x[i] as f64, y[i] as f64, z[i] as f64);
            let want = (a * b + c) as f32 - ((-(a - 0.1)) * c) as f32;
            assert_eq!(got[i].to_bits(), want.to_bits(), "{i}: {} vs {want}", got[i]);
        }
        // a float64 compare reads the f64 value: not a narrow kernel, so scalar (and still right)
        let mut body2 = body.clone();
        body2.push(ins(KOp::Compare { op: CompareOp::Lt, a: 7, b: 12 }, DType::Bool));
        body2.push(ins(KOp::Select { pred: 15, cases: vec![8, 13] }, f));
        let p2 = plan1(avals, vec![n], vec![], ins_, body2, vec![(Aval::new(f, vec![n]), 16, OutputKind::Store)]);
        let (out2, mode2) = simd_vs_scalar(&p2, &bufs);
        assert!(mode2.contains("Scalar"), "{mode2}");
        let got2 = read::<f32>(&out2[0]);
        for i in 0..n {
            let (a, b, c) = (x[i] as f64, y[i] as f64, z[i] as f64);
            let (u, v) = (a * b + c, (-(a - 0.1)) * c);
            let want = if u < v { v as f32 } else { u as f32 };
            assert_eq!(got2[i].to_bits(), want.to_bits(), "{i}");
        }
    }
}

/// A softmax over the rows of `[rows, cols]` as three kernels (max; exp(x - m) and its sum; divide), the
/// divide reading the sums through `sum_strides` (row-local `[1, 0]`, or something else).
fn softmax_plan(rows: usize, cols: usize, sum_strides: Vec<isize>) -> Plan {
    let f = DType::F32;
    let m = Aval::new(f, vec![rows, cols]);
    let r = Aval::new(f, vec![rows]);
    let rm = row_major(&[rows, cols]);
    let k0 = Kernel {
        name: "max".into(),
        domain: vec![rows, cols],
        reduce_axes: vec![1],
        inputs: vec![kin(0, f, rm.clone())],
        body: vec![load(0, f)],
        outputs: vec![KernelOutput { slot: 1, value: 0, kind: OutputKind::Reduce(ReduceOp::Max) }],
    };
    let k1 = Kernel {
        name: "exp_sum".into(),
        domain: vec![rows, cols],
        reduce_axes: vec![1],
        inputs: vec![kin(0, f, rm.clone()), kin(1, f, vec![1, 0])],
        body: vec![load(0, f), load(1, f), bin(BinaryOp::Sub, 0, 1, f), un(UnaryOp::Exp, 2, f)],
        outputs: vec![
            KernelOutput { slot: 2, value: 3, kind: OutputKind::Store },
            KernelOutput { slot: 3, value: 3, kind: OutputKind::Reduce(ReduceOp::Sum) },
        ],
    };
    let k2 = Kernel {
        name: "div".into(),
        domain: vec![rows, cols],
        reduce_axes: vec![],
        inputs: vec![kin(2, f, rm), kin(3, f, sum_strides)],
        body: vec![load(0, f), load(1, f), bin(BinaryOp::Div, 0, 1, f)],
        outputs: vec![KernelOutput { slot: 4, value: 2, kind: OutputKind::Store }],
    };
    Plan {
        name: "softmax".into(),
        num_inputs: 1,
        slots: vec![m.clone(), r.clone(), m.clone(), r, m],
        steps: vec![Step::Kernel(k0), Step::Kernel(k1), Step::Kernel(k2)],
        outputs: vec![4],
    }
}

#[test]
fn row_chain_softmax_matches_the_steps_run_one_by_one() {
    // 1000 × 1100 f32 (4.4 MB, above the chain threshold); 1000 rows is not a multiple of the block.
    let (rows, cols) = (1000, 1100);
    let x: Vec<f32> = (0..rows * cols).map(|i| ((i * 7919 % 1013) as f32 - 500.0) * 0.02).collect();
    let input = buf(&[rows, cols], &x);
    let plan = softmax_plan(rows, cols, vec![1, 0]);
    let on = compile_with(&plan, true).unwrap();
    let off = compile_with(&plan, false).unwrap();
    let text = on.as_text();
    assert!(text.contains("row chain: steps 0..3 run 1000 rows"), "{}", &text[..text.len().min(600)]);
    assert!(text.contains("(3 kernels, 3 scratch arrays)"));
    assert!(!off.as_text().contains("row chain"));
    let a = read::<f32>(&on.run(&[input.clone()]).unwrap()[0]);
    let b = read::<f32>(&off.run(&[input]).unwrap()[0]);
    assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()));
    // And the values: each row sums to 1 and matches a plain f64 softmax.
    for r in [0, 1, 499, 999] {
        let row = &x[r * cols..(r + 1) * cols];
        let m = row.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v as f64));
        let s: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
        for c in [0, 1, 550, cols - 1] {
            let want = (row[c] as f64 - m).exp() / s;
            assert!((a[r * cols + c] as f64 - want).abs() <= 2e-6 * want + 1e-9, "row {r} col {c}");
        }
    }
}

#[test]
fn row_chain_stops_at_a_kernel_reading_across_rows() {
    // The divide reads every row's sum through a broadcast of row 0: not row-local, so the chain is the
    // first two kernels, and the sums get a full buffer.
    let (rows, cols) = (1000, 1100);
    let x: Vec<f32> = (0..rows * cols).map(|i| ((i * 31 % 97) as f32) * 0.05).collect();
    let input = buf(&[rows, cols], &x);
    let plan = softmax_plan(rows, cols, vec![0, 0]);
    let on = compile_with(&plan, true).unwrap();
    let text = on.as_text();
    assert!(text.contains("row chain: steps 0..2 run 1000 rows"), "{}", &text[..text.len().min(600)]);
    assert!(text.contains("(2 kernels, 1 scratch arrays)"));
    let a = read::<f32>(&on.run(&[input.clone()]).unwrap()[0]);
    let b = read::<f32>(&compile_with(&plan, false).unwrap().run(&[input]).unwrap()[0]);
    assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()));
}

/// Threefry-2x32 as `cranax._prng.threefry2x32` composes it, of the counters `(0, iota)` under the key read
/// by `k1`/`k2` (body indices of u32 values); pushes onto `body`, returns the indices of the two outputs.
fn threefry_body(body: &mut Vec<KInstr>, k1: usize, k2: usize) -> (usize, usize) {
    let u = DType::U32;
    let push = |body: &mut Vec<KInstr>, i: KInstr| {
        body.push(i);
        body.len() - 1
    };
    let c = |body: &mut Vec<KInstr>, v: u32| {
        body.push(ins(KOp::Const { value: Scalar::Int(v as i64) }, u));
        body.len() - 1
    };
    let zero = c(body, 0);
    let iota = push(body, ins(KOp::Iota { axis: 0 }, u));
    let parity = c(body, 0x1BD1_1BDA);
    let x = push(body, bin(BinaryOp::Xor, k1, k2, u));
    let k3 = push(body, bin(BinaryOp::Xor, x, parity, u));
    let ks = [k1, k2, k3];
    let mut a = push(body, bin(BinaryOp::Add, zero, k1, u));
    let mut b = push(body, bin(BinaryOp::Add, iota, k2, u));
    for g in 0..5 {
        for &r in &super::threefry::ROTATIONS[g % 2] {
            a = push(body, bin(BinaryOp::Add, a, b, u));
            let (cr, cl) = (c(body, r), c(body, 32 - r));
            let l = push(body, bin(BinaryOp::ShiftLeft, b, cr, u));
            let rr = push(body, bin(BinaryOp::ShiftRightLogical, b, cl, u));
            let rot = push(body, bin(BinaryOp::Or, l, rr, u));
            b = push(body, bin(BinaryOp::Xor, a, rot, u));
        }
        a = push(body, bin(BinaryOp::Add, a, ks[(g + 1) % 3], u));
        let gc = c(body, g as u32 + 1);
        let kb = push(body, bin(BinaryOp::Add, ks[(g + 2) % 3], gc, u));
        b = push(body, bin(BinaryOp::Add, b, kb, u));
    }
    (a, b)
}

/// The hash in a kernel runs through the threefry block routine in strips (keys once per strip) and gives
/// the reference's bits, the same as the all-scalar code; with per-point keys (a batch of keys) too.
#[test]
fn threefry_kernel_strips_match_reference() {
    let n = 5000;
    let u = DType::U32;
    for per_point in [false, true] {
        let keys: Vec<u32> = if per_point {
            (0..2 * n as u32).map(|i| i.wrapping_mul(2_654_435_761) ^ 0x3c6e_f372).collect()
        } else {
            vec![0x1319_8a2e, 0x0370_7344]
        };
        // (Per point: the two key halves as two contiguous arrays, so the kernel is vectorized.)
        let (kshape, st, off) = if per_point { (vec![n], 1, 0) } else { (vec![2], 0, 1) };
        let mut body = vec![load(0, u), load(1, u)];
        let (a, b) = threefry_body(&mut body, 0, 1);
        let inputs = vec![
            KernelInput { slot: 0, dtype: u, strides: vec![st], offset: 0 },
            KernelInput { slot: if per_point { 1 } else { 0 }, dtype: u, strides: vec![st], offset: off },
        ];
        let halves: Vec<Buffer> = if per_point {
            let k1: Vec<u32> = keys.iter().step_by(2).copied().collect();
            let k2: Vec<u32> = keys.iter().skip(1).step_by(2).copied().collect();
            vec![buf(&kshape, &k1), buf(&kshape, &k2)]
        } else {
            vec![buf(&kshape, &keys)]
        };
        let p = plan1(
            vec![Aval::new(u, kshape.clone()); halves.len()],
            vec![n],
            vec![],
            inputs,
            body,
            vec![(Aval::new(u, vec![n]), a, OutputKind::Store), (Aval::new(u, vec![n]), b, OutputKind::Store)],
        );
        let (out, _) = simd_vs_scalar(&p, &halves);
        let (x, y) = (read::<u32>(&out[0]), read::<u32>(&out[1]));
        for i in 0..n {
            let key = if per_point { [keys[2 * i], keys[2 * i + 1]] } else { [keys[0], keys[1]] };
            assert_eq!([x[i], y[i]], super::threefry::tests::reference(key, [0, i as u32]), "point {i}");
        }
        let text = compile(&p).unwrap().as_text();
        if super::threefry::routine().is_some() {
            assert!(text.contains("threefry2x32"), "per_point={per_point}: no threefry strips\n{}", &text[..text.len().min(800)]);
        }
    }
}

/// `fma` on an x86-64 host without FMA: Cranelift's lowering calls `fmaf`/`fma` by name (its libcalls), which
/// `math::all_symbols` registers; the result is still rounded once. (The ISA here is the host's with FMA
/// turned off, so the fallback is exercised on any x86-64 machine.)
#[test]
fn fma_without_the_instruction_rounds_once() {
    use cranelift_codegen::ir::{types, AbiParam, InstBuilder};
    use cranelift_codegen::settings::{self, Configurable};
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    use cranelift_module::{default_libcall_names, Linkage, Module};
    let mut flags = settings::builder();
    for (k, v) in [("opt_level", "speed"), ("use_colocated_libcalls", "false"), ("is_pic", "false")] {
        flags.set(k, v).unwrap();
    }
    let mut ib = cranelift_native::builder().unwrap();
    if ib.set("has_fma", "false").is_err() {
        return; // not x86-64: FMA is part of the base ISA (aarch64)
    }
    let isa = ib.finish(settings::Flags::new(flags)).unwrap();
    let mut jb = cranelift_jit::JITBuilder::with_isa(isa, default_libcall_names());
    for (name, ptr) in math::all_symbols() {
        jb.symbol(name, ptr);
    }
    let mut m = cranelift_jit::JITModule::new(jb);
    let mut ids = Vec::new();
    for (name, ty) in [("fma_f32", types::F32), ("fma_f64", types::F64)] {
        let mut sig = m.make_signature();
        sig.params.extend([AbiParam::new(ty); 3]);
        sig.returns.push(AbiParam::new(ty));
        let id = m.declare_function(name, Linkage::Local, &sig).unwrap();
        let mut ctx = m.make_context();
        ctx.func.signature = sig;
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let blk = b.create_block();
        b.append_block_params_for_function_params(blk);
        b.switch_to_block(blk);
        let p = b.block_params(blk).to_vec();
        let r = b.ins().fma(p[0], p[1], p[2]);
        b.ins().return_(&[r]);
        b.seal_all_blocks();
        b.finalize(m.target_config());
        m.define_function(id, &mut ctx).unwrap();
        ids.push(id);
    }
    m.finalize_definitions().unwrap();
    let f32_fn: extern "C" fn(f32, f32, f32) -> f32 = unsafe { std::mem::transmute(m.get_finalized_function(ids[0])) };
    let f64_fn: extern "C" fn(f64, f64, f64) -> f64 = unsafe { std::mem::transmute(m.get_finalized_function(ids[1])) };
    let e = 2f32.powi(-20);
    assert_eq!(f32_fn(1.0 + e, 1.0 - e, -1.0), -(2f32.powi(-40)));
    assert_eq!(f32_fn(3.0, 4.0, 5.0), 17.0);
    let e = 2f64.powi(-30);
    assert_eq!(f64_fn(1.0 + e, 1.0 - e, -1.0), -(2f64.powi(-60)));
    assert!(f64_fn(f64::INFINITY, 0.0, 1.0).is_nan());
    assert_eq!(f64_fn(f64::MAX, 2.0, -f64::MAX), f64::MAX);
}

/// One-operation kernels (`add`/`sub`/`mul`/`div`/`fma` of arrays, broadcast scalars and constants) run as
/// one wide routine call (`wide`) and give the bits of Cranelift's vector loop and of the scalar code:
/// special values (NaN in one operand, ±inf, ±0, subnormals), lengths off the vector and pass sizes,
/// float32 and float64, a [m, n] domain, and an array big enough to be split over the threads.
#[test]
fn wide_one_op_kernels_match_inline_code_bit_for_bit() {
    use super::wide::NO_WIDE;
    fn data(n: usize, seed: u32) -> Vec<f64> {
        let special = [f64::NAN, 0.0, -0.0, f64::INFINITY, -f64::INFINITY, 1e-40, -3e-42, 1e-310, 7.0];
        (0..n)
            .map(|i| {
                let h = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed.wrapping_mul(97));
                if h % 17 == 0 { special[(h as usize / 17) % special.len()] } else { ((h % 40_001) as f64 - 20_000.0) / 1_234.5 }
            })
            .collect()
    }
    let ops: [(&str, fn(DType) -> KInstr); 6] = [
        ("Add", |d| bin(BinaryOp::Add, 0, 1, d)),
        ("Sub", |d| bin(BinaryOp::Sub, 2, 0, d)),
        ("Mul", |d| bin(BinaryOp::Mul, 0, 2, d)),
        ("Div", |d| bin(BinaryOp::Div, 1, 0, d)),
        ("Fma", |d| ins(KOp::Fma { a: 0, b: 2, c: 1 }, d)),
        ("Fma", |d| ins(KOp::Fma { a: 2, b: 1, c: 3 }, d)),
    ];
    for dt in [DType::F32, DType::F64] {
        for &(m, n) in &[(1usize, 256usize), (1, 1000), (3, 343), (1, 4099), (1, (1 << 20) + 3)] {
            if n > 5000 && dt == DType::F64 {
                continue;
            }
            for (name, op) in ops {
                // %0: x [m, n]; %1: y [m, n] (NaN-free: one NaN operand at most); %2: the constant 0.75;
                // %3: s, a broadcast scalar input
                let (x, y) = (data(m * n, 1), data(m * n, 2).into_iter().map(|v| if v.is_nan() { 2.5 } else { v }).collect::<Vec<_>>());
                let bufs = |v: &[f64], shape: &[usize]| {
                    if dt == DType::F32 { buf(shape, &v.iter().map(|&a| a as f32).collect::<Vec<_>>()) } else { buf(shape, v) }
                };
                let p = plan1(
                    vec![Aval::new(dt, vec![m, n]), Aval::new(dt, vec![m, n]), Aval::new(dt, vec![])],
                    vec![m, n],
                    vec![],
                    vec![kin(0, dt, vec![n as isize, 1]), kin(1, dt, vec![n as isize, 1]), kin(2, dt, vec![0, 0])],
                    vec![load(0, dt), load(1, dt), ins(KOp::Const { value: Scalar::Float(0.75) }, dt), load(2, dt), op(dt)],
                    vec![(Aval::new(dt, vec![m, n]), 4, OutputKind::Store)],
                );
                let inputs = [bufs(&x, &[m, n]), bufs(&y, &[m, n]), bufs(&[-1.5], &[])];
                let exe = compile(&p).unwrap();
                let text = exe.as_text();
                // (no wide routine on other architectures, with `CRANAX_CPU_BLOCK_MATH=off` or `CRANAX_NO_WIDE=1`)
                assert_eq!(text.contains(&format!("; wide: {name}")), super::wide::enabled(), "{text}");
                let wide = exe.run(&inputs).unwrap();
                NO_WIDE.with(|c| c.set(true));
                let vec_exe = compile(&p).unwrap();
                NO_WIDE.with(|c| c.set(false));
                let vec_text = vec_exe.as_text();
                assert!(vec_text.contains("; simd: OuterVec") || super::loop_plan::simd_disabled(), "{vec_text}");
                let scalar = without_simd(|| compile(&p).unwrap()).run(&inputs).unwrap();
                for (what, other) in [("Cranelift's vector loop", vec_exe.run(&inputs).unwrap()), ("the scalar code", scalar)] {
                    let bad = wide[0].as_bytes().chunks(dt.size()).zip(other[0].as_bytes().chunks(dt.size())).position(|(u, v)| u != v);
                    assert!(bad.is_none(), "{name} {dt:?} [{m}, {n}]: differs from {what} at {bad:?}");
                }
            }
        }
    }
}

/// An integer output's values (8/16/32-bit integers, bools as 0/1).
fn int_values(b: &Buffer) -> Vec<i64> {
    let dt = b.dtype();
    b.as_bytes()
        .chunks(dt.size())
        .map(|c| match dt {
            DType::I8 => c[0] as i8 as i64,
            DType::U8 | DType::Bool => c[0] as i64,
            DType::I16 => i16::from_le_bytes([c[0], c[1]]) as i64,
            DType::U16 => u16::from_le_bytes([c[0], c[1]]) as i64,
            DType::I32 => i32::from_le_bytes(c.try_into().unwrap()) as i64,
            DType::U32 => u32::from_le_bytes(c.try_into().unwrap()) as i64,
            _ => panic!("int_values of {dt:?}"),
        })
        .collect()
}

/// 8/16-bit integer kernels run on 4 i32 lanes (values sign- or zero-extended; 1-byte loads read exactly
/// the 4 points) and give the scalar code's bits, and the values integer arithmetic at the dtype's width
/// gives: every 16-bit value (every 8-bit value, with a SIMD tail) through conversions between the
/// integer widths (truncating), to and from f32/float16/bfloat16/bool, bitcasts to the other signedness
/// and the 16-bit floats, wrapping add/sub/mul/neg/square/abs/integer_pow, bitwise ops, shifts by constant
/// amounts in and out of range (negative ones read as unsigned), min/max, sign, compares, selects, and
/// per-lane fallbacks (division, population count); f32 bit patterns (NaN, infinities, out of range) to
/// each integer width.
#[test]
fn narrow_int_simd_matches_scalar() {
    use BinaryOp as B;
    let cvt = |dt: DType, a: usize| ins(KOp::Convert { a }, dt);
    let ic = |v: i64, dt: DType| ins(KOp::Const { value: Scalar::Int(v) }, dt);
    let narrow = [DType::I8, DType::U8, DType::I16, DType::U16];
    for &d in &narrow {
        let w = 8 * d.size() as i64;
        let mask = (1i64 << w) - 1;
        let (lo, hi) = d.int_range().unwrap();
        // every value of the dtype (an 8-bit one three times), then 3 more: a SIMD tail
        let reps = if w == 8 { 3 } else { 1 };
        let mut xs: Vec<i64> = (0..reps).flat_map(|_| lo..=hi).collect();
        xs.extend([lo, hi, 0]);
        let n = xs.len();
        let mut bytes = Vec::new();
        for &x in &xs {
            bytes.extend_from_slice(&x.to_le_bytes()[..d.size()]);
        }
        let xb = Buffer::from_bytes(&Aval::new(d, vec![n]), &bytes).unwrap();
        let check = |rest: Vec<KInstr>, out_dt: DType, want: &dyn Fn(i64) -> Option<i64>| {
            let what = format!("{d:?} {rest:?}");
            let (out, mode) = simd_vs_scalar_exact(&f16_plan1(n, d, rest, out_dt), std::slice::from_ref(&xb));
            assert!(mode.contains("OuterVec"), "{what}: {mode}");
            if out_dt.is_int() || out_dt == DType::Bool {
                for (&x, g) in xs.iter().zip(int_values(&out[0])) {
                    if let Some(e) = want(x) {
                        assert_eq!(g, e, "{what} at {x}");
                    }
                }
            }
        };
        let none = |_: i64| None;
        // conversions between integer widths truncate (wrap); to bool: nonzero
        for t in [DType::I8, DType::U8, DType::I16, DType::U16, DType::I32, DType::U32] {
            check(vec![cvt(t, 0)], t, &|x| Some(t.wrap_int(x)));
            check(vec![cvt(t, 0), cvt(d, 1)], d, &|x| Some(d.wrap_int(t.wrap_int(x))));
        }
        check(vec![cvt(DType::Bool, 0)], DType::Bool, &|x| Some((x != 0) as i64));
        check(vec![cvt(DType::Bool, 0), cvt(d, 1)], d, &|x| Some((x != 0) as i64));
        // through floats: exact, and back (saturating float -> int is the identity here)
        for f in [DType::F32, DType::F16, DType::BF16] {
            check(vec![cvt(f, 0)], f, &none);
            let exact = f == DType::F32 || w == 8;
            check(vec![cvt(f, 0), cvt(d, 1)], d, &|x| exact.then_some(x));
        }
        // bitcasts: the other signedness, the 16-bit floats, and back
        let other = match d {
            DType::I8 => DType::U8,
            DType::U8 => DType::I8,
            DType::I16 => DType::U16,
            _ => DType::I16,
        };
        let bc = |dt: DType, a: usize| ins(KOp::Bitcast { a }, dt);
        check(vec![bc(other, 0)], other, &|x| Some(other.wrap_int(x)));
        check(vec![bc(other, 0), bc(d, 1)], d, &|x| Some(x));
        if w == 16 {
            for f in [DType::F16, DType::BF16] {
                check(vec![bc(f, 0), cvt(DType::F32, 1)], DType::F32, &none);
                check(vec![bc(f, 0), bc(d, 1)], d, &|x| Some(x));
                check(vec![bc(f, 0), bc(other, 1)], other, &|x| Some(other.wrap_int(x)));
            }
        }
        // arithmetic wraps; bitwise ops; min/max
        for c in [1i64, 3, -1, 100, -77, 255, 0x1234, -0x4321] {
            let c = d.wrap_int(c);
            let arith: [(B, fn(i64, i64) -> i64); 9] = [
                (B::Add, |x, c| x + c),
                (B::Sub, |x, c| x - c),
                (B::Mul, |x, c| x * c),
                (B::And, |x, c| x & c),
                (B::Or, |x, c| x | c),
                (B::Xor, |x, c| x ^ c),
                (B::Max, |x, c| x.max(c)),
                (B::Min, |x, c| x.min(c)),
                (B::Div, |x, c| if c == 0 { 0 } else { x.wrapping_div(c) }),
            ];
            for (op, f) in arith {
                let want = move |x: i64| if op == B::Div { None } else { Some(d.wrap_int(f(x, c))) };
                check(vec![ic(c, d), bin(op, 0, 1, d)], d, &want);
            }
            // compare + select between the input and the constant
            for cop in [CompareOp::Lt, CompareOp::Ge, CompareOp::Eq] {
                let sel = vec![
                    ic(c, d),
                    ins(KOp::Compare { op: cop, a: 0, b: 1 }, DType::Bool),
                    ins(KOp::Select { pred: 2, cases: vec![1, 0] }, d),
                ];
                let want = move |x: i64| {
                    let p = match cop {
                        CompareOp::Lt => x < c,
                        CompareOp::Ge => x >= c,
                        _ => x == c,
                    };
                    Some(if p { x } else { c })
                };
                check(sel, d, &want);
            }
        }
        // shifts by constants: in range, at and past the width, negative (read as unsigned)
        for s in [0i64, 1, 3, w - 1, w, w + 3, 31, -1] {
            let sc = d.wrap_int(s);
            let amt = (sc as u64 & mask as u64) as i64;
            let sext = move |x: i64| ((x & mask) << (64 - w)) >> (64 - w);
            let shl = move |x: i64| Some(if amt >= w { 0 } else { d.wrap_int(x << amt) });
            let shr = move |x: i64| Some(if amt >= w { 0 } else { d.wrap_int((x & mask) >> amt) });
            let sar = move |x: i64| Some(d.wrap_int(sext(x) >> amt.min(w - 1)));
            check(vec![ic(sc, d), bin(B::ShiftLeft, 0, 1, d)], d, &shl);
            check(vec![ic(sc, d), bin(B::ShiftRightLogical, 0, 1, d)], d, &shr);
            check(vec![ic(sc, d), bin(B::ShiftRightArithmetic, 0, 1, d)], d, &sar);
        }
        // unary ops, x*x + x, integer_pow
        let unary: [(UnaryOp, fn(i64) -> i64); 5] = [
            (UnaryOp::Neg, |x| -x),
            (UnaryOp::Not, |x| !x),
            (UnaryOp::Abs, |x| x.abs()),
            (UnaryOp::Square, |x| x * x),
            (UnaryOp::Sign, |x| x.signum()),
        ];
        for (op, f) in unary {
            check(vec![un(op, 0, d)], d, &move |x| Some(d.wrap_int(f(x))));
        }
        check(vec![un(UnaryOp::PopulationCount, 0, d)], d, &move |x| Some((x & mask).count_ones() as i64));
        check(vec![bin(B::Mul, 0, 0, d), bin(B::Add, 1, 0, d)], d, &move |x| Some(d.wrap_int(x * x + x)));
        check(vec![ins(KOp::IntegerPow { a: 0, y: 3 }, d)], d, &move |x| Some(d.wrap_int(x * x * x)));
        check(vec![ic(lo + 5, d), ic(hi - 5, d), ins(KOp::Clamp { lo: 1, x: 0, hi: 2 }, d)], d, &move |x| {
            Some(x.clamp(lo + 5, hi - 5))
        });
    }
    // f32 bit patterns to each width: truncation toward zero, saturated to the range, NaN -> 0
    let mut fs: Vec<f32> = vec![
        0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 127.9, 128.0, -128.9, -129.0, 255.5, 256.0, 32767.5, 32768.0, -32768.9,
        -32769.0, 65535.9, 65536.0, f32::MAX, -f32::MAX, f32::INFINITY, -f32::INFINITY, f32::NAN, -f32::NAN, 1e-40,
    ];
    let mut st: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..100_000 {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        fs.push(if i % 2 == 0 { f32::from_bits(st as u32) } else { ((st >> 40) as f32 / 65536.0 - 64.0) * 1100.0 });
    }
    let fb = buf(&[fs.len()], &fs);
    for &d in &narrow {
        let (lo, hi) = d.int_range().unwrap();
        let (out, mode) = simd_vs_scalar_exact(&f16_plan1(fs.len(), DType::F32, vec![cvt(d, 0)], d), std::slice::from_ref(&fb));
        assert!(mode.contains("OuterVec"), "{mode}");
        for (x, g) in fs.iter().zip(int_values(&out[0])) {
            let want = if x.is_nan() { 0 } else { (x.trunc() as f64).clamp(lo as f64, hi as f64) as i64 };
            assert_eq!(g, want, "{d:?} of {x}");
        }
        for h in [DType::F16, DType::BF16] {
            let p = f16_plan1(fs.len(), DType::F32, vec![cvt(h, 0), cvt(d, 1)], d);
            let (_, mode) = simd_vs_scalar_exact(&p, std::slice::from_ref(&fb));
            assert!(mode.contains("OuterVec"), "{mode}");
        }
    }
}

/// A reduction of 8/16-bit integers keeps its kernel scalar (their accumulators are not held in i32 lanes),
/// and sums wrap at the dtype's width.
#[test]
fn narrow_int_reduction_stays_scalar() {
    let n = 1003;
    let xs: Vec<u8> = (0..n).map(|i| (i * 37 % 256) as u8).collect();
    let p = plan1(
        vec![Aval::new(DType::U8, vec![n])],
        vec![n],
        vec![0],
        vec![kin(0, DType::U8, vec![1])],
        vec![load(0, DType::U8)],
        vec![(Aval::new(DType::U8, vec![]), 0, OutputKind::Reduce(ReduceOp::Sum))],
    );
    let exe = compile(&p).unwrap();
    assert!(exe.as_text().contains("; simd: Scalar"), "{}", exe.as_text());
    let out = exe.run(&[buf(&[n], &xs)]).unwrap();
    let want = xs.iter().fold(0u8, |a, &x| a.wrapping_add(x));
    assert_eq!(read::<u8>(&out[0]), vec![want]);
}

/// float16/bfloat16 chains (`x * 2 + 1`, `(a * b) + s` with a broadcast float32 scalar and a broadcast half
/// element, `a / b`, f32 → half, half → f32) run as one call of `wide_half`'s routine where the host has
/// F16C, with the bits of Cranelift's vector loop and of the scalar code (`simd_vs_scalar_exact` compares
/// all three), on lengths around the strip and big enough to be split over the threads; NaN inputs included.
#[test]
fn half_chains_run_wide_with_inline_bits() {
    let f = DType::F32;
    let cvt = |dt: DType, a: usize| ins(KOp::Convert { a }, dt);
    let c = |v: f64| ins(KOp::Const { value: Scalar::Float(v) }, f);
    for h in [DType::F16, DType::BF16] {
        let hbuf = |shape: &[usize], bits: &[u16]| {
            if h == DType::F16 { buf(shape, &bits.iter().map(|&u| H(u)).collect::<Vec<_>>()) } else { buf(shape, &bits.iter().map(|&u| Bh(u)).collect::<Vec<_>>()) }
        };
        for &len in &[256usize, 257, 1000, 4099, 300_007] {
            let bits = |seed: u32| -> Vec<u16> { (0..len as u32).map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 9) as u16).collect() };
            let (x, y) = (hbuf(&[len], &bits(1)), hbuf(&[len], &bits(77)));
            let arith = vec![cvt(f, 0), c(2.0), bin(BinaryOp::Mul, 1, 2, f), cvt(h, 3), cvt(f, 4), c(1.0), bin(BinaryOp::Add, 5, 6, f), cvt(h, 7)];
            let p = f16_plan1(len, h, arith, h);
            let text = compile(&p).unwrap().as_text();
            assert_eq!(text.contains("; wide: half chain"), super::wide_half::enabled(), "{text}");
            simd_vs_scalar_exact(&p, std::slice::from_ref(&x));
            for out_dt in [f, h] {
                let to = if out_dt == h { vec![cvt(f, 0), cvt(h, 1)] } else { vec![cvt(f, 0)] };
                let p = f16_plan1(len, h, to, out_dt);
                assert_eq!(compile(&p).unwrap().as_text().contains("; wide: half chain"), super::wide_half::enabled());
                simd_vs_scalar_exact(&p, std::slice::from_ref(&x));
            }
            let xs: Vec<f32> = (0..len).map(|i| f32::from_bits((i as u32).wrapping_mul(2_654_435_761))).collect();
            simd_vs_scalar_exact(&f16_plan1(len, f, vec![cvt(h, 0)], h), &[buf(&[len], &xs)]);
            // %0 a, %1 b (half arrays), %2 s (f32 scalar), %3 e (a half element broadcast)
            for (op, fma) in [(BinaryOp::Mul, false), (BinaryOp::Div, false), (BinaryOp::Sub, true)] {
                let mut body = vec![load(0, h), load(1, h), load(2, f), load(3, h), cvt(f, 0), cvt(f, 1), bin(op, 4, 5, f), cvt(h, 6), cvt(f, 7), cvt(f, 3)];
                body.push(if fma { ins(KOp::Fma { a: 8, b: 9, c: 2 }, f) } else { bin(BinaryOp::Add, 8, 2, f) });
                body.push(cvt(h, 10));
                let p = plan1(
                    vec![Aval::new(h, vec![len]), Aval::new(h, vec![len]), Aval::new(f, vec![]), Aval::new(h, vec![3])],
                    vec![len],
                    vec![],
                    vec![kin(0, h, vec![1]), kin(1, h, vec![1]), kin(2, f, vec![0]), KernelInput { slot: 3, dtype: h, strides: vec![0], offset: 2 }],
                    body,
                    vec![(Aval::new(h, vec![len]), 11, OutputKind::Store)],
                );
                let text = compile(&p).unwrap().as_text();
                assert_eq!(text.contains("; wide: half chain"), super::wide_half::enabled(), "{text}");
                simd_vs_scalar_exact(&p, &[x.clone(), y.clone(), buf(&[], &[-0.375f32]), hbuf(&[3], &[0x1234, 0x4321, 0xc0a0])]);
            }
        }
    }
}

/// `x + 1` (row-major reads) or `transpose(x) + 1` over a 3x3 float32 input, one kernel.
fn add_one_plan(transposed: bool) -> Plan {
    let a = Aval::new(DType::F32, vec![3, 3]);
    let strides = if transposed { vec![1, 3] } else { vec![3, 1] };
    plan1(
        vec![a.clone()],
        vec![3, 3],
        vec![],
        vec![kin(0, DType::F32, strides)],
        vec![load(0, DType::F32), ins(KOp::Const { value: Scalar::Float(1.0) }, DType::F32), bin(BinaryOp::Add, 0, 1, DType::F32)],
        vec![(a, 2, OutputKind::Store)],
    )
}

#[test]
fn run_aliased_writes_an_in_place_output_into_its_input() {
    let xs: Vec<f32> = (0..9).map(|i| i as f32).collect();
    let exe = compile(&add_one_plan(false)).unwrap();
    let x = buf(&[3, 3], &xs);
    let out = exe.run_aliased(std::slice::from_ref(&x), &[(0, 0)]).unwrap();
    assert_eq!(out[0].as_ptr(), x.as_ptr());
    assert_eq!(read::<f32>(&out[0]), (1..10).map(|i| i as f32).collect::<Vec<_>>());
    // without the request, a fresh buffer
    let y = buf(&[3, 3], &xs);
    let out = exe.run(std::slice::from_ref(&y)).unwrap();
    assert_ne!(out[0].as_ptr(), y.as_ptr());
    assert_eq!(read::<f32>(&y), xs);
}

#[test]
fn run_aliased_refuses_reads_at_other_points_and_shared_inputs() {
    let xs: Vec<f32> = (0..9).map(|i| i as f32).collect();
    // a transposed read: the output gets a fresh buffer, the input is unchanged
    let exe = compile(&add_one_plan(true)).unwrap();
    let x = buf(&[3, 3], &xs);
    let out = exe.run_aliased(std::slice::from_ref(&x), &[(0, 0)]).unwrap();
    assert_ne!(out[0].as_ptr(), x.as_ptr());
    assert_eq!(read::<f32>(&x), xs);
    assert_eq!(read::<f32>(&out[0]), vec![1., 4., 7., 2., 5., 8., 3., 6., 9.]);
    // the same storage passed as two inputs: never written
    let a = Aval::new(DType::F32, vec![3, 3]);
    let p = plan1(
        vec![a.clone(), a.clone()],
        vec![3, 3],
        vec![],
        vec![kin(0, DType::F32, vec![3, 1]), kin(1, DType::F32, vec![1, 3])],
        vec![load(0, DType::F32), load(1, DType::F32), bin(BinaryOp::Add, 0, 1, DType::F32)],
        vec![(a, 2, OutputKind::Store)],
    );
    let exe = compile(&p).unwrap();
    let x = buf(&[3, 3], &xs);
    let out = exe.run_aliased(&[x.clone(), x.clone()], &[(0, 0)]).unwrap();
    assert_ne!(out[0].as_ptr(), x.as_ptr());
    assert_eq!(read::<f32>(&x), xs);
    assert_eq!(read::<f32>(&out[0]), vec![0., 4., 8., 4., 8., 12., 8., 12., 16.]);
}

/// A half-float chain (`wide_half`, `; wide: half chain` in `text`) checked bit for bit against Cranelift's
/// vector loop for the same plan; the `; simd:` mode of the code that loop (or `text`'s) runs.
fn half_chain_matches_inline(p: &Plan, inputs: &[Buffer], mut text: String, a: &[Buffer]) -> String {
    if text.contains("; wide: half chain") {
        super::wide::NO_WIDE.with(|c| c.set(true));
        let inline = compile(p).unwrap();
        super::wide::NO_WIDE.with(|c| c.set(false));
        let c = inline.run(inputs).unwrap();
        for (o, (x, y)) in a.iter().zip(&c).enumerate() {
            let es = x.dtype().size();
            let bad = x.as_bytes().chunks(es).zip(y.as_bytes().chunks(es)).position(|(u, v)| u != v);
            assert!(bad.is_none(), "output {o} differs between the half chain and the inline vector code at {bad:?}\n{text}");
        }
        text = inline.as_text();
    }
    text.lines().find(|l| l.starts_with("; simd:")).unwrap_or("").to_string()
}
