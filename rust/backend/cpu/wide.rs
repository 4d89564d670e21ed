//! Wide one-operation kernels: an elementwise float32/float64 kernel whose body is a single `add`, `sub`,
//! `mul`, `div` or `fma` of contiguous arrays and scalars (`x * 0.99 + 1`, `a + b`, `x * s`) calls a routine
//! compiled ahead of time for the block routines' lanes (`blockmath::isa`: 512-bit or 256-bit) instead of
//! running Cranelift's loop.
//!
//! Why: Cranelift emits 128-bit vectors only, and such a kernel is bound by its stores: one per cycle on the
//! hosts measured, so 16 bytes a cycle where XLA's code stores 32 or 64. Its f32x4 loop (four vectors per
//! pass) already runs as fast as the best 128-bit code (GCC's, unrolled 4× or 8×: `## unroll21` in
//! benches/RESULTS.md), so only wider stores help: about 2× for arrays in L1, 1.2-1.9× in L2 (a loop carry).
//! Kernels with more operations keep Cranelift's code, which holds their intermediate values in registers.
//!
//! Bits: each element gets the same IEEE operation as the inline code (fused `fma` on both: block routines
//! exist only on hosts with FMA), under the same MXCSR (FTZ/DAZ as every plan runs). The one freedom is the
//! payload a NaN result carries when both operands of an `add`/`mul` are NaNs (LLVM may swap them, as
//! Cranelift may). `CRANAX_NO_WIDE=1`, `CRANAX_CPU_BLOCK_MATH=off` (no block routines) and
//! `CRANAX_CPU_NO_SIMD=1` turn this off.
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, FuncRef, Function, InstBuilder, Value};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

use crate::error::Result;
use crate::ir::{BinaryOp, DType, Scalar};
use crate::plan::{KOp, Kernel, OutputKind};

use super::clif::{iconst, trusted};

/// The symbol kernels import the routine by.
pub const SYMBOL: &str = "cranax_wide_arith";

/// Kernels with fewer points keep Cranelift's loop (the call and the routine's dispatch cost a few ns).
pub const MIN_POINTS: u64 = 256;

/// The routine: `dst[i] = op(a[i], b[i], c[i])` for `i < n`, each operand an array (`desc` bit `8 + j`), a
/// scalar given by its bits (bit `12 + j`) or by its address. `desc`: the operation in bits 0-3 (`Op`), bit 4
/// set for float64. `dst` may be an operand array.
pub type WideFn = unsafe extern "C" fn(u64, u64, u64, u64, *mut u8, u64);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add = 0,
    Sub = 1,
    Mul = 2,
    Div = 3,
    Fma = 4,
}

/// One operand of the operation, as the kernel passes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand {
    /// Kernel input `j`, read at every point (row-major, no offset).
    Array(usize),
    /// Kernel input `j`, one element (all strides 0) at this byte offset.
    Element(usize, i64),
    /// A constant's bits.
    Bits(u64),
}

/// A kernel that runs as one wide operation.
#[derive(Debug, Clone, PartialEq)]
pub struct WideKernel {
    pub op: Op,
    pub f64: bool,
    pub operands: [Operand; 3],
    /// Points of the domain (the kernel's `outer_len`).
    pub points: u64,
}

impl WideKernel {
    fn desc(&self) -> u64 {
        let mut d = self.op as u64 | if self.f64 { 16 } else { 0 };
        for (j, o) in self.operands.iter().enumerate() {
            d |= match o {
                Operand::Array(_) => 1 << (8 + j),
                Operand::Bits(_) => 1 << (12 + j),
                Operand::Element(..) => 0,
            };
        }
        d
    }

    /// The `as_text` line for this kernel.
    pub fn note(&self) -> String {
        format!(
            "; wide: {:?} {} on {:?} lanes (`wide.rs`), operands {:?}\n",
            self.op,
            if self.f64 { "f64" } else { "f32" },
            super::blockmath::isa(),
            self.operands
        )
    }
}

#[cfg(test)]
thread_local! {
    /// Set by tests comparing against Cranelift's loop: kernels compiled on this thread stay inline.
    pub static NO_WIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `CRANAX_NO_WIDE=1` keeps every kernel on Cranelift's loop (read at each compile: benches A/B it in one
/// process).
fn disabled() -> bool {
    std::env::var_os("CRANAX_NO_WIDE").is_some_and(|v| v == "1")
}

/// Whether kernels may run wide on this host and in this mode.
pub fn enabled() -> bool {
    routine().is_some() && !super::loop_plan::simd_disabled() && !disabled()
}

/// The wide form of `k` (whose outputs have `out_dtypes`), when it qualifies: no reduction, one stored
/// output, a body of loads and constants and one `add`/`sub`/`mul`/`div`/`fma` of them (at least one an
/// array), float32 or float64 throughout, arrays read row-major from their start, at least `MIN_POINTS`
/// points, and a host with block routines.
pub fn plan(k: &Kernel, out_dtypes: &[DType]) -> Option<WideKernel> {
    #[cfg(test)]
    if NO_WIDE.with(|c| c.get()) {
        return None;
    }
    if !enabled() || !k.reduce_axes.is_empty() {
        return None;
    }
    let [out] = k.outputs.as_slice() else { return None };
    let dt = *out_dtypes.first()?;
    if !matches!(dt, DType::F32 | DType::F64) || out.kind != OutputKind::Store {
        return None;
    }
    let points = k.domain.iter().try_fold(1u64, |a, &n| a.checked_mul(n as u64))?;
    if points < MIN_POINTS {
        return None;
    }
    let ins = k.body.get(out.value)?;
    let (op, args): (Op, Vec<usize>) = match &ins.op {
        KOp::Binary { op, a, b } => {
            let op = match op {
                BinaryOp::Add => Op::Add,
                BinaryOp::Sub => Op::Sub,
                BinaryOp::Mul => Op::Mul,
                BinaryOp::Div => Op::Div,
                _ => return None,
            };
            (op, vec![*a, *b])
        }
        KOp::Fma { a, b, c } => (Op::Fma, vec![*a, *b, *c]),
        _ => return None,
    };
    if ins.dtype != dt {
        return None;
    }
    // every other instruction is a load or constant of this dtype (dead ones included: nothing else runs)
    let leaf = |i: &crate::plan::KInstr| i.dtype == dt && matches!(i.op, KOp::Load { .. } | KOp::Const { .. });
    if k.body.iter().enumerate().any(|(i, x)| i != out.value && !leaf(x)) {
        return None;
    }
    let mut operands = [Operand::Bits(0); 3];
    for (slot, &a) in operands.iter_mut().zip(&args) {
        *slot = match &k.body.get(a)?.op {
            KOp::Const { value } => match value.cast(dt) {
                Scalar::Float(v) if dt == DType::F32 => Operand::Bits((v as f32).to_bits() as u64),
                Scalar::Float(v) => Operand::Bits(v.to_bits()),
                _ => return None,
            },
            KOp::Load { input } => input_operand(k, *input, dt)?,
            _ => return None,
        };
    }
    if !operands.iter().any(|o| matches!(o, Operand::Array(_))) {
        return None;
    }
    Some(WideKernel { op, f64: dt == DType::F64, operands, points })
}

/// How the routines read kernel input `input` (of dtype `dt`): as an array read row-major from its start
/// (`Array`), as one broadcast element (`Element`, its byte offset), or not at all (`None`).
pub(super) fn input_operand(k: &Kernel, input: usize, dt: DType) -> Option<Operand> {
    let inp = k.inputs.get(input)?;
    if inp.dtype != dt || inp.strides.len() != k.domain.len() {
        return None;
    }
    let mut row_major = vec![0isize; k.domain.len()];
    let mut st = 1isize;
    for d in (0..k.domain.len()).rev() {
        row_major[d] = st;
        st = st.checked_mul(k.domain[d] as isize)?;
    }
    let size1 = |d: usize| k.domain[d] == 1;
    if (0..k.domain.len()).all(|d| size1(d) || inp.strides[d] == 0) {
        Some(Operand::Element(input, (inp.offset as i64).checked_mul(dt.size() as i64)?))
    } else if inp.offset == 0 && (0..k.domain.len()).all(|d| size1(d) || inp.strides[d] == row_major[d]) {
        Some(Operand::Array(input))
    } else {
        None
    }
}

/// A kernel function (the `KernelFn` ABI: `ins`, `outs`, `begin`, `end`) that clamps `[begin, end)` to
/// `points` and, when that range is not empty, runs `call(b, ins, outs, begin, end)` (one routine call) before
/// returning: the frame of this file's kernels and `wide_half`'s.
pub fn build_one_call(
    func: &mut Function, fctx: &mut FunctionBuilderContext, points: u64, frontend: TargetFrontendConfig,
    call: impl FnOnce(&mut FunctionBuilder, Value, Value, Value, Value),
) -> Result<()> {
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let p = b.block_params(entry).to_vec();
    let (ins, outs, begin, end) = (p[0], p[1], p[2], p[3]);
    let (body, exit) = (b.create_block(), b.create_block());
    let total = iconst(&mut b, types::I64, points as i64);
    let end = b.ins().umin(end, total);
    let go = b.ins().icmp(IntCC::UnsignedLessThan, begin, end);
    b.ins().brif(go, body, &[], exit, &[]);
    b.switch_to_block(body);
    call(&mut b, ins, outs, begin, end);
    b.ins().jump(exit, &[]);
    b.switch_to_block(exit);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(frontend);
    Ok(())
}

/// Builds the kernel function: calls the routine `fref` once on the clamped range.
pub fn build(func: &mut Function, fctx: &mut FunctionBuilderContext, w: &WideKernel, fref: FuncRef, frontend: TargetFrontendConfig) -> Result<()> {
    build_one_call(func, fctx, w.points, frontend, |b, ins, outs, begin, end| {
        let esize = if w.f64 { 8 } else { 4 };
        let skip = b.ins().imul_imm_s(begin, esize);
        let mut args = vec![iconst(b, types::I64, w.desc() as i64)];
        for o in &w.operands {
            args.push(match *o {
                Operand::Array(j) => {
                    let base = b.ins().load(types::I64, trusted(), ins, (8 * j) as i32);
                    b.ins().iadd(base, skip)
                }
                Operand::Element(j, off) => {
                    let base = b.ins().load(types::I64, trusted(), ins, (8 * j) as i32);
                    b.ins().iadd_imm_s(base, off)
                }
                Operand::Bits(v) => iconst(b, types::I64, v as i64),
            });
        }
        let base = b.ins().load(types::I64, trusted(), outs, 0);
        args.push(b.ins().iadd(base, skip));
        args.push(b.ins().isub(end, begin));
        b.ins().call(fref, &args);
    })
}

/// The routine for this host's lanes (`blockmath::isa`), or `None`.
pub fn routine() -> Option<WideFn> {
    #[cfg(target_arch = "x86_64")]
    {
        use super::blockmath::Isa;
        Some(match super::blockmath::isa()? {
            Isa::Avx512 => x86::entry512 as WideFn,
            Isa::Avx2 => x86::entry256 as WideFn,
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// (symbol, address) of the routine, for the JIT's symbol table.
pub fn symbols() -> Vec<(String, *const u8)> {
    routine().map(|r| (SYMBOL.to_string(), r as *const u8)).into_iter().collect()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// One vector type: its element, lanes and the five operations (the intrinsics need the entry's
    /// target features: these are only inlined into `entry512`/`entry256`).
    trait W {
        type E: Copy + Default;
        type V: Copy;
        const N: usize;
        unsafe fn load(p: *const Self::E) -> Self::V;
        unsafe fn store(p: *mut Self::E, v: Self::V);
        unsafe fn splat(x: Self::E) -> Self::V;
        fn from_bits(b: u64) -> Self::E;
        unsafe fn op<const OP: u8>(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    }

    macro_rules! lanes {
        ($name:ident, $e:ty, $v:ty, $n:expr, $load:ident, $store:ident, $splat:ident, $add:ident, $sub:ident,
         $mul:ident, $div:ident, $fma:ident, $bits:expr) => {
            struct $name;
            impl W for $name {
                type E = $e;
                type V = $v;
                const N: usize = $n;
                #[inline(always)]
                unsafe fn load(p: *const $e) -> $v {
                    unsafe { $load(p) }
                }
                #[inline(always)]
                unsafe fn store(p: *mut $e, v: $v) {
                    unsafe { $store(p, v) }
                }
                #[inline(always)]
                unsafe fn splat(x: $e) -> $v {
                    unsafe { $splat(x) }
                }
                #[inline(always)]
                fn from_bits(b: u64) -> $e {
                    $bits(b)
                }
                #[inline(always)]
                unsafe fn op<const OP: u8>(a: $v, b: $v, c: $v) -> $v {
                    unsafe {
                        match OP {
                            0 => $add(a, b),
                            1 => $sub(a, b),
                            2 => $mul(a, b),
                            3 => $div(a, b),
                            _ => $fma(a, b, c),
                        }
                    }
                }
            }
        };
    }
    lanes!(F32x16, f32, __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_add_ps, _mm512_sub_ps,
        _mm512_mul_ps, _mm512_div_ps, _mm512_fmadd_ps, |b: u64| f32::from_bits(b as u32));
    lanes!(F64x8, f64, __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd, _mm512_add_pd, _mm512_sub_pd,
        _mm512_mul_pd, _mm512_div_pd, _mm512_fmadd_pd, f64::from_bits);
    lanes!(F32x8, f32, __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, _mm256_add_ps, _mm256_sub_ps,
        _mm256_mul_ps, _mm256_div_ps, _mm256_fmadd_ps, |b: u64| f32::from_bits(b as u32));
    lanes!(F64x4, f64, __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd, _mm256_add_pd, _mm256_sub_pd,
        _mm256_mul_pd, _mm256_div_pd, _mm256_fmadd_pd, f64::from_bits);

    /// The loop for operation `OP` with array operands `ARR` (bit j: operand j): four vectors per pass,
    /// then one, then the last `< N` points through a vector of copies (the same operation on every point).
    #[inline(always)]
    unsafe fn run<L: W, const OP: u8, const ARR: u8>(p: [*const L::E; 3], s: [L::V; 3], dst: *mut L::E, n: usize) {
        let arr = |j: usize| ARR >> j & 1 == 1;
        let get = |j: usize, i: usize| if arr(j) { unsafe { L::load(p[j].add(i)) } } else { s[j] };
        let mut i = 0;
        unsafe {
            while i + 4 * L::N <= n {
                for u in 0..4 {
                    let at = i + u * L::N;
                    L::store(dst.add(at), L::op::<OP>(get(0, at), get(1, at), get(2, at)));
                }
                i += 4 * L::N;
            }
            while i + L::N <= n {
                L::store(dst.add(i), L::op::<OP>(get(0, i), get(1, i), get(2, i)));
                i += L::N;
            }
            if i < n {
                let m = n - i;
                let mut t = [[L::E::default(); 16]; 4];
                for j in 0..3 {
                    if arr(j) {
                        std::ptr::copy_nonoverlapping(p[j].add(i), t[j].as_mut_ptr(), m);
                    }
                }
                let v: [L::V; 3] = std::array::from_fn(|j| if arr(j) { L::load(t[j].as_ptr()) } else { s[j] });
                L::store(t[3].as_mut_ptr(), L::op::<OP>(v[0], v[1], v[2]));
                std::ptr::copy_nonoverlapping(t[3].as_ptr(), dst.add(i), m);
            }
        }
    }

    #[inline(always)]
    unsafe fn by_arr<L: W, const OP: u8>(arr: u64, p: [*const L::E; 3], s: [L::V; 3], dst: *mut L::E, n: usize) {
        unsafe {
            match arr {
                1 => run::<L, OP, 1>(p, s, dst, n),
                2 => run::<L, OP, 2>(p, s, dst, n),
                3 => run::<L, OP, 3>(p, s, dst, n),
                4 => run::<L, OP, 4>(p, s, dst, n),
                5 => run::<L, OP, 5>(p, s, dst, n),
                6 => run::<L, OP, 6>(p, s, dst, n),
                7 => run::<L, OP, 7>(p, s, dst, n),
                _ => {}
            }
        }
    }

    /// Decodes `desc` (see `WideFn`) and runs the matching loop on lanes `L`.
    #[inline(always)]
    unsafe fn go<L: W>(desc: u64, ops: [u64; 3], dst: *mut u8, n: u64) {
        let arr = (desc >> 8) & 7;
        let mut p = [std::ptr::null::<L::E>(); 3];
        let mut s = [unsafe { L::splat(L::E::default()) }; 3];
        for j in 0..3 {
            if arr >> j & 1 == 1 {
                p[j] = ops[j] as *const L::E;
            } else if desc >> (12 + j) & 1 == 1 {
                s[j] = unsafe { L::splat(L::from_bits(ops[j])) };
            } else {
                // SAFETY: the kernel passes the address of the operand's one element.
                s[j] = unsafe { L::splat(*(ops[j] as *const L::E)) };
            }
        }
        let (dst, n) = (dst as *mut L::E, n as usize);
        unsafe {
            match desc & 15 {
                0 => by_arr::<L, 0>(arr, p, s, dst, n),
                1 => by_arr::<L, 1>(arr, p, s, dst, n),
                2 => by_arr::<L, 2>(arr, p, s, dst, n),
                3 => by_arr::<L, 3>(arr, p, s, dst, n),
                _ => by_arr::<L, 4>(arr, p, s, dst, n),
            }
        }
    }

    #[target_feature(enable = "avx512f,fma")]
    unsafe fn go512(desc: u64, ops: [u64; 3], dst: *mut u8, n: u64) {
        unsafe {
            if desc & 16 != 0 {
                go::<F64x8>(desc, ops, dst, n)
            } else {
                go::<F32x16>(desc, ops, dst, n)
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn go256(desc: u64, ops: [u64; 3], dst: *mut u8, n: u64) {
        unsafe {
            if desc & 16 != 0 {
                go::<F64x4>(desc, ops, dst, n)
            } else {
                go::<F32x8>(desc, ops, dst, n)
            }
        }
    }

    pub unsafe extern "C" fn entry512(desc: u64, a: u64, b: u64, c: u64, dst: *mut u8, n: u64) {
        // SAFETY: installed only when the host has AVX-512F and FMA (`blockmath::isa`); the kernel passes
        // arrays of n elements and scalar addresses as `desc` says.
        unsafe { go512(desc, [a, b, c], dst, n) }
    }

    pub unsafe extern "C" fn entry256(desc: u64, a: u64, b: u64, c: u64, dst: *mut u8, n: u64) {
        // SAFETY: installed only when the host has AVX2 and FMA (`blockmath::isa`); as above.
        unsafe { go256(desc, [a, b, c], dst, n) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar32(op: Op, a: f32, b: f32, c: f32) -> f32 {
        match op {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Div => a / b,
            Op::Fma => a.mul_add(b, c),
        }
    }
    fn scalar64(op: Op, a: f64, b: f64, c: f64) -> f64 {
        match op {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Div => a / b,
            Op::Fma => a.mul_add(b, c),
        }
    }

    /// Values with signed zeros, infinities (NaN results from `inf - inf`, `0 * inf`) and normals of mixed
    /// magnitude.
    fn vals(n: usize, seed: u32) -> Vec<f64> {
        let special = [0.0, -0.0, f64::INFINITY, -f64::INFINITY, 1.0, -3.5, 1e30, 1e-30];
        (0..n)
            .map(|i| {
                let h = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed.wrapping_mul(40_503));
                if h % 13 == 0 {
                    special[(h as usize / 13) % special.len()]
                } else {
                    ((h % 20_000) as f64 - 10_000.0) / 977.0
                }
            })
            .collect()
    }

    /// The routine against Rust's scalar operations, bit for bit: every operation, every mix of arrays,
    /// scalar bits and scalar addresses, float32 and float64, lengths around the vector and pass sizes,
    /// operands at unaligned starts and `dst` equal to an operand.
    #[test]
    fn routine_matches_scalar_ops_bit_for_bit() {
        let Some(f) = routine() else { return };
        for op in [Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Fma] {
            let nops = if op == Op::Fma { 3 } else { 2 };
            for kinds in 0..3u32.pow(nops) {
                // per operand: 0 array, 1 bits, 2 address
                let kind = |j: usize| if j < nops as usize { (kinds / 3u32.pow(j as u32)) % 3 } else { 1 };
                if (0..nops as usize).all(|j| kind(j) != 0) {
                    continue;
                }
                for f64 in [false, true] {
                    for &n in &[1usize, 3, 7, 8, 15, 16, 17, 31, 63, 64, 65, 100, 257] {
                        for (skew, in_place) in [(0usize, false), (1, false), (0, true)] {
                            let src: Vec<Vec<f64>> = (0..3).map(|j| vals(n + skew, j as u32 + 7 * n as u32)).collect();
                            let scal = [1.25f64, -0.75, 3.0];
                            let mut desc = op as u64 | if f64 { 16 } else { 0 };
                            let mut args = [0u64; 3];
                            let (mut b32, mut b64): (Vec<Vec<f32>>, Vec<Vec<f64>>) = (vec![], vec![]);
                            for j in 0..3 {
                                b32.push(src[j].iter().map(|&v| v as f32).collect());
                                b64.push(src[j].clone());
                            }
                            let (s32, s64) = (scal.map(|v| v as f32), scal);
                            for j in 0..3 {
                                match kind(j) {
                                    0 => {
                                        desc |= 1 << (8 + j);
                                        args[j] = if f64 { b64[j][skew..].as_ptr() as u64 } else { b32[j][skew..].as_ptr() as u64 };
                                    }
                                    1 => {
                                        desc |= 1 << (12 + j);
                                        args[j] = if f64 { s64[j].to_bits() } else { s32[j].to_bits() as u64 };
                                    }
                                    _ => args[j] = if f64 { &s64[j] as *const f64 as u64 } else { &s32[j] as *const f32 as u64 },
                                }
                            }
                            let at = |j: usize, i: usize| if kind(j) == 0 { Some(i + skew) } else { None };
                            let want32: Vec<u32> = (0..n)
                                .map(|i| {
                                    let g = |j| at(j, i).map_or(s32[j], |k| b32[j][k]);
                                    scalar32(op, g(0), g(1), g(2)).to_bits()
                                })
                                .collect();
                            let want64: Vec<u64> = (0..n)
                                .map(|i| {
                                    let g = |j| at(j, i).map_or(s64[j], |k| b64[j][k]);
                                    scalar64(op, g(0), g(1), g(2)).to_bits()
                                })
                                .collect();
                            // in place: dst is operand 0's array (when it is one)
                            let in_place = in_place && kind(0) == 0;
                            let (mut o32, mut o64) = (vec![0f32; n], vec![0f64; n]);
                            let dst = match (f64, in_place) {
                                (false, true) => b32[0][skew..].as_mut_ptr() as *mut u8,
                                (true, true) => b64[0][skew..].as_mut_ptr() as *mut u8,
                                (false, false) => o32.as_mut_ptr() as *mut u8,
                                (true, false) => o64.as_mut_ptr() as *mut u8,
                            };
                            // SAFETY: arrays of n elements (after the skew), scalars as `desc` says.
                            unsafe { f(desc, args[0], args[1], args[2], dst, n as u64) };
                            let got32: Vec<u32> = if in_place { b32[0][skew..].iter().map(|v| v.to_bits()).collect() } else { o32.iter().map(|v| v.to_bits()).collect() };
                            let got64: Vec<u64> = if in_place { b64[0][skew..].iter().map(|v| v.to_bits()).collect() } else { o64.iter().map(|v| v.to_bits()).collect() };
                            let ctx = format!("{op:?} kinds {kinds} f64 {f64} n {n} skew {skew} in_place {in_place}");
                            if f64 {
                                assert_eq!(got64, want64, "{ctx}");
                            } else {
                                assert_eq!(got32, want32, "{ctx}");
                            }
                        }
                    }
                }
            }
        }
    }
}
