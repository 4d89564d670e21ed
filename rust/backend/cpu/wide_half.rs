//! Wide half-float chains: an elementwise kernel that computes on float16/bfloat16 values (`opt::f16` has
//! made every such operation `convert up → f32 add/sub/mul/div/fma → convert down`) and whose live body is
//! only loads, float32 constants, those conversions and those operations, calls a routine compiled ahead of
//! time for AVX2 + FMA + F16C instead of running Cranelift's loop (`x * 2 + 1`, `a * b` on float16 or
//! bfloat16, `x.astype(float16)`).
//!
//! Why: Cranelift has no F16C, so the inline code converts float16 with about 20 vector integer
//! instructions per 4 lanes each way (`simd::vf16_to_f32`/`vf32_to_f16`), and holds bfloat16 in 4 i32
//! lanes; XLA's code uses `vcvtph2ps`/`vcvtps2ph` on 8 lanes. The routine runs the chain one operation at
//! a time over strips of `STRIP` points held in L1 (each pass one tight 8-lane loop); `fuse` lets an
//! operation read half arrays directly and narrow (or round) its own result, so `x * 2 + 1` is 2 passes.
//!
//! Bits: the inline code's, exactly. `vcvtph2ps` quiets a signalling NaN where the inline code keeps its
//! payload (the quiet bit is put back from the input), and `vcvtps2ph` keeps a NaN's top payload bits where
//! the inline code gives `0x7e00` with the sign (those lanes are rewritten); rounding to nearest even,
//! subnormal float16 on both sides and float32 subnormals to ±0 are the same (F16C ignores FTZ/DAZ, as the
//! integer code does). bfloat16 conversions are the inline code's integer sequence on 8 lanes. The f32
//! operations are the same IEEE operations under the same MXCSR, with `wide.rs`'s one freedom (which NaN's
//! payload an `add`/`mul` of two NaNs keeps). Hosts without F16C (and aarch64) keep the inline code;
//! `CRANAX_NO_WIDE=1` and the other switches of `wide.rs` turn this off too.
use cranelift_codegen::ir::{types, FuncRef, Function, InstBuilder, StackSlotData, StackSlotKind};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::FunctionBuilderContext;

use crate::error::Result;
use crate::ir::{BinaryOp, DType, Scalar};
use crate::plan::{KOp, Kernel, OutputKind};

use super::clif::{iconst, trusted};
use super::wide::{build_one_call, Op, Operand};

/// The symbol kernels import the routine by.
pub const SYMBOL: &str = "cranax_wide_half";

/// At most this many live instructions (the routine's scratch strips).
pub const MAX_OPS: usize = 24;

/// Points per strip (each scratch strip is `STRIP` f32s: 1 KiB, all of them in L1).
const STRIP: usize = 256;

/// The routine: `(prog, ins, outs, begin, n)`: runs program `prog` (see `HalfKernel::encode`) on points
/// `[begin, begin + n)`, `ins`/`outs` being the kernel's arrays of input/output base addresses.
pub type HalfFn = unsafe extern "C" fn(*const u64, *const u64, *const u64, u64, u64);

/// The element format of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    F32 = 0,
    F16 = 1,
    BF16 = 2,
}

impl Fmt {
    fn of(dt: DType) -> Option<Fmt> {
        match dt {
            DType::F32 => Some(Fmt::F32),
            DType::F16 => Some(Fmt::F16),
            DType::BF16 => Some(Fmt::BF16),
            _ => None,
        }
    }
    fn size(self) -> u64 {
        if self == Fmt::F32 { 4 } else { 2 }
    }
}

/// One step of the chain; operands index earlier steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HOp {
    /// Kernel input `input` read row-major from its start.
    Array { input: usize, fmt: Fmt },
    /// One element of kernel input `input`, at this byte offset, for every point.
    Element { input: usize, offset: i64, fmt: Fmt },
    /// A float32 constant's bits.
    Const { bits: u32 },
    /// float16/bfloat16 → f32 (exact).
    Up { a: usize, fmt: Fmt },
    /// f32 → float16/bfloat16 (rounded to nearest even).
    Down { a: usize, fmt: Fmt },
    /// `Up(Down(a))`: f32 rounded to the format and back, when nothing else reads the narrow value.
    Round { a: usize, fmt: Fmt },
    /// A float32 operation (`c` read by `fma` only), its operands f32 values or float16/bfloat16 arrays
    /// (widened as read), its result passed through `post`.
    Arith { op: Op, a: usize, b: usize, c: usize, post: Post },
}

/// What an operation does with its f32 result before writing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Post {
    None,
    /// Rounded to the format and widened back (`Round`).
    Round(Fmt),
    /// Narrowed to the format (`Down`).
    Down(Fmt),
}

impl Post {
    fn code(self) -> u64 {
        match self {
            Post::None => 0,
            Post::Round(f) => f as u64,
            Post::Down(f) => 2 + f as u64,
        }
    }
}

/// A kernel that runs as one half-float chain; its last step is the stored output.
#[derive(Debug, Clone, PartialEq)]
pub struct HalfKernel {
    pub ops: Vec<HOp>,
    pub out: Fmt,
    pub points: u64,
}

const K_ARRAY: u64 = 0;
const K_ELEMENT: u64 = 1;
const K_CONST: u64 = 2;
const K_UP: u64 = 3;
const K_DOWN: u64 = 4;
const K_ROUND: u64 = 5;
const K_ARITH: u64 = 8; // + the operation (`Op`)

impl HalfKernel {
    /// The program as words: the step count (and the output's element bytes << 32), then two words per step: `kind | a << 8 | b << 16 | c << 24
    /// | fmt << 32 | post << 40` and an immediate (constant bits, byte offset). Only constants: the kernel stores them
    /// on its stack (machine code from the persistent cache holds no addresses).
    pub fn encode(&self) -> Vec<u64> {
        let mut w = vec![self.ops.len() as u64 | self.out.size() << 32];
        for op in &self.ops {
            let code = |kind: u64, a: usize, b: usize, c: usize, fmt: Fmt| {
                kind | (a as u64) << 8 | (b as u64) << 16 | (c as u64) << 24 | (fmt as u64) << 32
            };
            let (c, imm) = match *op {
                HOp::Array { input, fmt } => (code(K_ARRAY, input, 0, 0, fmt), 0),
                HOp::Element { input, offset, fmt } => (code(K_ELEMENT, input, 0, 0, fmt), offset as u64),
                HOp::Const { bits } => (code(K_CONST, 0, 0, 0, Fmt::F32), bits as u64),
                HOp::Up { a, fmt } => (code(K_UP, a, 0, 0, fmt), 0),
                HOp::Down { a, fmt } => (code(K_DOWN, a, 0, 0, fmt), 0),
                HOp::Round { a, fmt } => (code(K_ROUND, a, 0, 0, fmt), 0),
                HOp::Arith { op, a, b, c, post } => (code(K_ARITH + op as u64, a, b, c, Fmt::F32) | post.code() << 40, 0),
            };
            w.push(c);
            w.push(imm);
        }
        w
    }

    /// The `as_text` line for this kernel.
    pub fn note(&self) -> String {
        format!("; wide: half chain on 8 lanes with F16C (`wide_half.rs`): {:?}\n", self.ops)
    }
}

/// Whether kernels may run as half chains on this host and in this mode.
pub fn enabled() -> bool {
    routine().is_some() && super::wide::enabled()
}

/// The chain form of `k` (whose outputs have `out_dtypes`), when it qualifies: no reduction, one stored
/// float32/float16/bfloat16 output computed by a conversion or operation, some float16/bfloat16 value,
/// every live instruction a load (row-major array or broadcast element), float32 constant, conversion
/// between float32 and a half format, or float32 `add`/`sub`/`mul`/`div`/`fma`, at least `wide::MIN_POINTS`
/// points, and a host with F16C.
pub fn plan(k: &Kernel, out_dtypes: &[DType]) -> Option<HalfKernel> {
    #[cfg(test)]
    if super::wide::NO_WIDE.with(|c| c.get()) {
        return None;
    }
    if !enabled() || !k.reduce_axes.is_empty() {
        return None;
    }
    let [out] = k.outputs.as_slice() else { return None };
    let odt = *out_dtypes.first()?;
    let out_fmt = Fmt::of(odt)?;
    if out.kind != OutputKind::Store || k.body.get(out.value)?.dtype != odt {
        return None;
    }
    let points = k.domain.iter().try_fold(1u64, |a, &n| a.checked_mul(n as u64))?;
    if points < super::wide::MIN_POINTS {
        return None;
    }
    let ov = out.value;
    let mut live = vec![false; ov + 1];
    live[ov] = true;
    let mut uses = vec![0usize; ov + 1];
    uses[ov] = 1;
    for i in (0..=ov).rev() {
        if live[i] {
            for a in super::simd::operands(&k.body[i].op) {
                *live.get_mut(a)? = true;
                uses[a] += 1;
            }
        }
    }
    if !(0..=ov).any(|i| live[i] && matches!(k.body[i].dtype, DType::F16 | DType::BF16)) {
        return None;
    }
    // A narrowing whose one reader widens it again becomes one `Round` at that reader.
    let fused = |i: usize| {
        i != ov
            && uses[i] == 1
            && matches!(k.body[i].op, KOp::Convert { a } if k.body[a].dtype == DType::F32)
            && (i + 1..=ov).any(|j| live[j] && k.body[j].op == KOp::Convert { a: i } && k.body[j].dtype == DType::F32)
    };
    let mut at = vec![usize::MAX; ov + 1];
    let mut ops = Vec::new();
    for i in (0..=ov).filter(|&i| live[i]) {
        let ins = &k.body[i];
        let fmt = Fmt::of(ins.dtype)?;
        let f32_arg = |a: usize| (k.body.get(a)?.dtype == DType::F32).then(|| at[a]).filter(|&m| m != usize::MAX);
        let op = match &ins.op {
            KOp::Load { input } => match super::wide::input_operand(k, *input, ins.dtype)? {
                Operand::Array(j) => HOp::Array { input: j, fmt },
                Operand::Element(j, offset) => HOp::Element { input: j, offset, fmt },
                Operand::Bits(_) => return None,
            },
            KOp::Const { value } if fmt == Fmt::F32 => match value.cast(DType::F32) {
                Scalar::Float(v) => HOp::Const { bits: (v as f32).to_bits() },
                _ => return None,
            },
            KOp::Convert { a } => {
                let from = Fmt::of(k.body.get(*a)?.dtype)?;
                match (from, fmt) {
                    (Fmt::F32, Fmt::F16 | Fmt::BF16) if fused(i) => continue,
                    (Fmt::F32, Fmt::F16 | Fmt::BF16) => HOp::Down { a: f32_arg(*a)?, fmt },
                    (Fmt::F16 | Fmt::BF16, Fmt::F32) if fused(*a) => {
                        let KOp::Convert { a: src } = k.body[*a].op else { return None };
                        HOp::Round { a: f32_arg(src)?, fmt: from }
                    }
                    (Fmt::F16 | Fmt::BF16, Fmt::F32) => match at[*a] {
                        usize::MAX => return None,
                        m => HOp::Up { a: m, fmt: from },
                    },
                    _ => return None,
                }
            }
            KOp::Binary { op, a, b } if fmt == Fmt::F32 => {
                let op = match op {
                    BinaryOp::Add => Op::Add,
                    BinaryOp::Sub => Op::Sub,
                    BinaryOp::Mul => Op::Mul,
                    BinaryOp::Div => Op::Div,
                    _ => return None,
                };
                HOp::Arith { op, a: f32_arg(*a)?, b: f32_arg(*b)?, c: 0, post: Post::None }
            }
            KOp::Fma { a, b, c } if fmt == Fmt::F32 => HOp::Arith { op: Op::Fma, a: f32_arg(*a)?, b: f32_arg(*b)?, c: f32_arg(*c)?, post: Post::None },
            _ => return None,
        };
        at[i] = ops.len();
        ops.push(op);
    }
    let ops = fuse(ops);
    // the output is computed (a load or constant stored as it is stays on the inline copy loop)
    if ops.len() > MAX_OPS || !matches!(ops.last()?, HOp::Up { .. } | HOp::Down { .. } | HOp::Round { .. } | HOp::Arith { .. }) {
        return None;
    }
    Some(HalfKernel { ops, out: out_fmt, points })
}

/// Fewer passes over the strip: an operation reads a float16/bfloat16 array directly where it read the
/// array's widening, and narrows (or rounds) its own result where that was its only reader. Then keeps what
/// feeds the output, leaves first, so the output is the last step.
fn fuse(mut ops: Vec<HOp>) -> Vec<HOp> {
    let mut out = ops.len() - 1;
    let args = |op: &HOp| -> Vec<usize> {
        match *op {
            HOp::Up { a, .. } | HOp::Down { a, .. } | HOp::Round { a, .. } => vec![a],
            HOp::Arith { op, a, b, c, .. } => if op == Op::Fma { vec![a, b, c] } else { vec![a, b] },
            _ => vec![],
        }
    };
    for i in 0..ops.len() {
        if let HOp::Arith { op, a, b, c, post } = ops[i] {
            let direct = |x: usize| match ops[x] {
                HOp::Up { a: y, .. } if matches!(ops[y], HOp::Array { fmt, .. } if fmt != Fmt::F32) => y,
                _ => x,
            };
            ops[i] = HOp::Arith { op, a: direct(a), b: direct(b), c: if op == Op::Fma { direct(c) } else { c }, post };
        }
    }
    for i in 0..ops.len() {
        let HOp::Arith { op, a, b, c, post: Post::None } = ops[i] else { continue };
        let readers: Vec<usize> = (0..ops.len()).filter(|&r| args(&ops[r]).contains(&i)).collect();
        let [r] = readers[..] else { continue };
        if i == out {
            continue;
        }
        let post = match ops[r] {
            HOp::Round { fmt, .. } => Post::Round(fmt),
            HOp::Down { fmt, .. } => Post::Down(fmt),
            _ => continue,
        };
        ops[i] = HOp::Arith { op, a, b, c, post };
        // r's readers read i instead; r is read by nothing now
        for (j, x) in ops.iter_mut().enumerate() {
            if j <= r {
                continue;
            }
            match x {
                HOp::Up { a, .. } | HOp::Down { a, .. } | HOp::Round { a, .. } => {
                    if *a == r {
                        *a = i;
                    }
                }
                HOp::Arith { op, a, b, c, .. } => {
                    let fma = *op == Op::Fma;
                    for (k, v) in [a, b, c].into_iter().enumerate() {
                        if *v == r && (k < 2 || fma) {
                            *v = i;
                        }
                    }
                }
                _ => {}
            }
        }
        if r == out {
            out = i;
        }
    }
    let n = ops.len();
    let mut live = vec![false; n];
    live[out] = true;
    for i in (0..n).rev() {
        if live[i] {
            for a in args(&ops[i]) {
                live[a] = true;
            }
        }
    }
    let leaf = |o: &HOp| matches!(o, HOp::Array { .. } | HOp::Element { .. } | HOp::Const { .. });
    let order: Vec<usize> = (0..n).filter(|&i| live[i] && leaf(&ops[i])).chain((0..n).filter(|&i| live[i] && !leaf(&ops[i]))).collect();
    let mut at = vec![0; n];
    for (k, &i) in order.iter().enumerate() {
        at[i] = k;
    }
    order
        .iter()
        .map(|&i| match ops[i] {
            HOp::Up { a, fmt } => HOp::Up { a: at[a], fmt },
            HOp::Down { a, fmt } => HOp::Down { a: at[a], fmt },
            HOp::Round { a, fmt } => HOp::Round { a: at[a], fmt },
            HOp::Arith { op, a, b, c, post } => HOp::Arith { op, a: at[a], b: at[b], c: if op == Op::Fma { at[c] } else { 0 }, post },
            leaf => leaf,
        })
        .collect()
}

/// Builds the kernel function (`wide::build_one_call`'s frame): stores the program on its stack and calls the
/// routine `fref` once on the clamped range.
pub fn build(func: &mut Function, fctx: &mut FunctionBuilderContext, h: &HalfKernel, fref: FuncRef, frontend: TargetFrontendConfig) -> Result<()> {
    build_one_call(func, fctx, h.points, frontend, |b, ins, outs, begin, end| {
        let words = h.encode();
        let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8 * words.len() as u32, 3));
        let prog = b.ins().stack_addr(types::I64, slot, 0);
        for (i, &w) in words.iter().enumerate() {
            let v = iconst(b, types::I64, w as i64);
            b.ins().store(trusted(), v, prog, (8 * i) as i32);
        }
        let n = b.ins().isub(end, begin);
        b.ins().call(fref, &[prog, ins, outs, begin, n]);
    })
}

/// The routine, on x86-64 hosts with AVX2, FMA and F16C whose block-routine mode allows `wide.rs`.
pub fn routine() -> Option<HalfFn> {
    #[cfg(target_arch = "x86_64")]
    {
        let ok = super::blockmath::isa().is_some()
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("f16c");
        ok.then_some(x86::entry as HalfFn)
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
    use super::{Fmt, K_ARITH, K_ARRAY, K_CONST, K_DOWN, K_ELEMENT, K_ROUND, K_UP, MAX_OPS, STRIP};
    use std::arch::x86_64::*;

    /// Where a step's values are for the current strip.
    #[derive(Clone, Copy)]
    enum Val {
        /// `STRIP` (or the strip's length of) elements in the step's format.
        At(*const u8),
        /// The same f32 / half bits at every point.
        Splat(u32),
    }

    // Conversions of 8 lanes. (The intrinsics need the entry's target features: only inlined into `run`.)

    /// float16 → f32 exactly: `vcvtph2ps`, with a signalling NaN's quiet bit put back to 0.
    #[inline(always)]
    unsafe fn f16_up(h: __m128i) -> __m256 {
        unsafe {
            let f = _mm256_cvtph_ps(h);
            let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(f, f);
            if _mm256_movemask_ps(nan) == 0 {
                return f;
            }
            // bit 22 of the f32 = bit 9 of the float16 (for NaN lanes)
            let q = _mm256_slli_epi32::<13>(_mm256_and_si256(_mm256_cvtepu16_epi32(h), _mm256_set1_epi32(0x200)));
            let fixed = _mm256_or_si256(_mm256_andnot_si256(_mm256_set1_epi32(0x40_0000), _mm256_castps_si256(f)), q);
            _mm256_blendv_ps(f, _mm256_castsi256_ps(fixed), nan)
        }
    }

    /// f32 → float16, to nearest even: `vcvtps2ph`, with NaN lanes made `0x7e00` with their sign.
    #[inline(always)]
    unsafe fn f16_down(x: __m256) -> __m128i {
        unsafe {
            let h = _mm256_cvtps_ph::<0>(x);
            let nan = _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
            _mm_andnot_si128(_mm_and_si128(nan, _mm_set1_epi16(0x1ff)), h)
        }
    }

    /// bfloat16 → f32: the bits are f32's upper half.
    #[inline(always)]
    unsafe fn bf16_up(h: __m128i) -> __m256 {
        unsafe { _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(h))) }
    }

    /// f32 → bfloat16 as `simd::vf32_to_bf16`: `(u + 0x7fff + odd) >> 16`, NaN → its sign | 0x7fc0.
    #[inline(always)]
    unsafe fn bf16_down(x: __m256) -> __m128i {
        unsafe {
            let u = _mm256_castps_si256(x);
            let odd = _mm256_and_si256(_mm256_srli_epi32::<16>(u), _mm256_set1_epi32(1));
            let r = _mm256_srli_epi32::<16>(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd));
            let a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fff_ffff));
            let nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f80_0000));
            let q = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32::<16>(u), _mm256_set1_epi32(0x8000)), _mm256_set1_epi32(0x7fc0));
            let r = _mm256_blendv_epi8(r, q, nan);
            // 16-bit halves of each lane, in order (all values fit in 16 bits: no saturation)
            let p = _mm256_packus_epi32(r, r);
            _mm256_castsi256_si128(_mm256_permute4x64_epi64::<0b1000>(p))
        }
    }

    #[inline(always)]
    unsafe fn up(fmt: u64, h: __m128i) -> __m256 {
        unsafe { if fmt == Fmt::F16 as u64 { f16_up(h) } else { bf16_up(h) } }
    }

    #[inline(always)]
    unsafe fn down(fmt: u64, x: __m256) -> __m128i {
        unsafe { if fmt == Fmt::F16 as u64 { f16_down(x) } else { bf16_down(x) } }
    }

    /// `f` on each 8-point group of `[0, n)`, the last partial one through copies of `n % 8` elements
    /// (`src_b`/`dst_b`: element bytes of the source and destination; `src` may be null).
    #[inline(always)]
    unsafe fn strip8(src: *const u8, src_b: usize, dst: *mut u8, dst_b: usize, n: usize, mut f: impl FnMut(*const u8, *mut u8)) {
        let full = n / 8 * 8;
        let mut i = 0;
        unsafe {
            while i < full {
                f(if src.is_null() { src } else { src.add(i * src_b) }, dst.add(i * dst_b));
                i += 8;
            }
            if i < n {
                let m = n - i;
                let (mut s, mut d) = ([0u8; 32], [0u8; 32]);
                if !src.is_null() {
                    std::ptr::copy_nonoverlapping(src.add(i * src_b), s.as_mut_ptr(), m * src_b);
                }
                f(if src.is_null() { src } else { s.as_ptr() }, d.as_mut_ptr());
                std::ptr::copy_nonoverlapping(d.as_ptr(), dst.add(i * dst_b), m * dst_b);
            }
        }
    }

    /// 8 lanes of an f32 / float16 / bfloat16 array (`fmt`) at element `i`, as f32.
    #[inline(always)]
    unsafe fn load_as(fmt: u64, p: *const u8, i: usize) -> __m256 {
        unsafe {
            if fmt == Fmt::F32 as u64 {
                _mm256_loadu_ps((p as *const f32).add(i))
            } else {
                up(fmt, _mm_loadu_si128((p as *const u16).add(i) as *const __m128i))
            }
        }
    }

    /// Writes 8 f32 results at element `i` after `post` (`Post::code`): as they are, rounded through a
    /// format, or narrowed to it.
    #[inline(always)]
    unsafe fn put<const POST: u8>(dst: *mut u8, i: usize, v: __m256) {
        unsafe {
            match POST {
                0 => _mm256_storeu_ps((dst as *mut f32).add(i), v),
                1 | 2 => _mm256_storeu_ps((dst as *mut f32).add(i), up(POST as u64, down(POST as u64, v))),
                _ => _mm_storeu_si128((dst as *mut u16).add(i) as *mut __m128i, down(POST as u64 - 2, v)),
            }
        }
    }

    /// One f32 operation over a strip: operands arrays (`ARR` bit j; element format `f[j]`) or splats,
    /// the result through `POST`.
    #[inline(always)]
    unsafe fn arith<const OP: u8, const ARR: u8, const POST: u8>(p: [*const u8; 3], f: [u64; 3], s: [__m256; 3], dst: *mut u8, n: usize) {
        let arr = |j: usize| ARR >> j & 1 == 1;
        let op = |a: __m256, b: __m256, c: __m256| unsafe {
            match OP {
                0 => _mm256_add_ps(a, b),
                1 => _mm256_sub_ps(a, b),
                2 => _mm256_mul_ps(a, b),
                3 => _mm256_div_ps(a, b),
                _ => _mm256_fmadd_ps(a, b, c),
            }
        };
        let full = n / 8 * 8;
        let mut i = 0;
        unsafe {
            let get = |j: usize, i: usize| if arr(j) { load_as(f[j], p[j], i) } else { s[j] };
            while i < full {
                put::<POST>(dst, i, op(get(0, i), get(1, i), get(2, i)));
                i += 8;
            }
            if i < n {
                let m = n - i;
                let bytes = |fmt: u64| if fmt == Fmt::F32 as u64 { 4 } else { 2 };
                let mut t = [[0u8; 32]; 4];
                for j in 0..3 {
                    if arr(j) {
                        std::ptr::copy_nonoverlapping(p[j].add(i * bytes(f[j])), t[j].as_mut_ptr(), m * bytes(f[j]));
                    }
                }
                let v: [__m256; 3] = std::array::from_fn(|j| if arr(j) { load_as(f[j], t[j].as_ptr(), 0) } else { s[j] });
                put::<POST>(t[3].as_mut_ptr(), 0, op(v[0], v[1], v[2]));
                let ob = if POST >= 3 { 2 } else { 4 };
                std::ptr::copy_nonoverlapping(t[3].as_ptr(), dst.add(i * ob), m * ob);
            }
        }
    }

    #[inline(always)]
    unsafe fn arith_post<const OP: u8, const ARR: u8>(post: u64, p: [*const u8; 3], f: [u64; 3], s: [__m256; 3], dst: *mut u8, n: usize) {
        unsafe {
            match post {
                0 => arith::<OP, ARR, 0>(p, f, s, dst, n),
                1 => arith::<OP, ARR, 1>(p, f, s, dst, n),
                2 => arith::<OP, ARR, 2>(p, f, s, dst, n),
                3 => arith::<OP, ARR, 3>(p, f, s, dst, n),
                _ => arith::<OP, ARR, 4>(p, f, s, dst, n),
            }
        }
    }

    #[inline(always)]
    unsafe fn arith_op<const OP: u8>(arr: u8, post: u64, p: [*const u8; 3], f: [u64; 3], s: [__m256; 3], dst: *mut u8, n: usize) {
        unsafe {
            match arr {
                0 => arith_post::<OP, 0>(post, p, f, s, dst, n),
                1 => arith_post::<OP, 1>(post, p, f, s, dst, n),
                2 => arith_post::<OP, 2>(post, p, f, s, dst, n),
                3 => arith_post::<OP, 3>(post, p, f, s, dst, n),
                4 => arith_post::<OP, 4>(post, p, f, s, dst, n),
                5 => arith_post::<OP, 5>(post, p, f, s, dst, n),
                6 => arith_post::<OP, 6>(post, p, f, s, dst, n),
                _ => arith_post::<OP, 7>(post, p, f, s, dst, n),
            }
        }
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn run(prog: *const u64, ins: *const u64, outs: *const u64, begin: u64, n: u64) {
        unsafe {
            let m = ((*prog & 0xffff_ffff) as usize).min(MAX_OPS);
            let osize = (*prog >> 32) as usize;
            let code = |i: usize| *prog.add(1 + 2 * i);
            let imm = |i: usize| *prog.add(2 + 2 * i);
            let field = |c: u64, k: u32| ((c >> k) & 0xff) as usize;
            let fmt_of = |c: u64| (c >> 32) & 0xff;
            let fsize = |c: u64| if fmt_of(c) == Fmt::F32 as u64 { 4usize } else { 2 };
            let (begin, n) = (begin as usize, n as usize);
            let mut scratch = [[0f32; STRIP]; MAX_OPS];
            // a splat operand of a conversion is read from here
            let mut fills = [0f32; STRIP];
            let mut vals = [Val::Splat(0); MAX_OPS];
            // the element format of each step's values
            let mut fmts = [Fmt::F32 as u64; MAX_OPS];
            for i in 0..m {
                let c = code(i);
                let kind = c & 0xff;
                fmts[i] = match kind {
                    K_ARRAY | K_ELEMENT | K_DOWN => fmt_of(c),
                    k if k >= K_ARITH && (c >> 40) & 0xff >= 3 => ((c >> 40) & 0xff) - 2,
                    _ => Fmt::F32 as u64,
                };
                match kind {
                    K_ELEMENT => {
                        let p = (*ins.add(field(c, 8)) as *const u8).offset(imm(i) as i64 as isize);
                        vals[i] = Val::Splat(if fsize(c) == 4 { (p as *const u32).read_unaligned() } else { (p as *const u16).read_unaligned() as u32 });
                    }
                    K_CONST => vals[i] = Val::Splat(imm(i) as u32),
                    _ => {}
                }
            }
            let out = (*outs as *mut u8).add(begin * osize);
            let mut at = 0;
            while at < n {
                let len = (n - at).min(STRIP);
                for i in 0..m {
                    let c = code(i);
                    let kind = c & 0xff;
                    let fmt = fmt_of(c);
                    let dst: *mut u8 = if i == m - 1 { out.add(at * osize) } else { scratch[i].as_mut_ptr() as *mut u8 };
                    // a conversion's operand as an array (a splat goes through `fills`)
                    let mut src = || -> *const u8 {
                        let a = field(c, 8);
                        match vals[a] {
                            Val::At(p) => p,
                            Val::Splat(bits) => {
                                let f = fills.as_mut_ptr() as *mut u8;
                                for e in 0..len {
                                    if fmts[a] == Fmt::F32 as u64 {
                                        (f as *mut u32).add(e).write(bits);
                                    } else {
                                        (f as *mut u16).add(e).write(bits as u16);
                                    }
                                }
                                f
                            }
                        }
                    };
                    match kind {
                        K_ARRAY => {
                            let base = *ins.add(field(c, 8)) as *const u8;
                            vals[i] = Val::At(base.add((begin + at) * fsize(c)));
                            continue;
                        }
                        K_ELEMENT | K_CONST => continue,
                        K_UP => {
                            let s = src();
                            strip8(s, 2, dst, 4, len, |s, d| _mm256_storeu_ps(d as *mut f32, up(fmt, _mm_loadu_si128(s as *const __m128i))));
                        }
                        K_DOWN => {
                            let s = src();
                            strip8(s, 4, dst, 2, len, |s, d| _mm_storeu_si128(d as *mut __m128i, down(fmt, _mm256_loadu_ps(s as *const f32))));
                        }
                        K_ROUND => {
                            let s = src();
                            strip8(s, 4, dst, 4, len, |s, d| _mm256_storeu_ps(d as *mut f32, up(fmt, down(fmt, _mm256_loadu_ps(s as *const f32)))));
                        }
                        _ => {
                            let fma = kind - K_ARITH == 4;
                            let mut arr = 0u8;
                            let mut p = [std::ptr::null::<u8>(); 3];
                            let mut f = [Fmt::F32 as u64; 3];
                            let mut s = [_mm256_setzero_ps(); 3];
                            for j in 0..if fma { 3 } else { 2 } {
                                let a = field(c, 8 + 8 * j as u32);
                                match vals[a] {
                                    Val::At(q) => {
                                        arr |= 1 << j;
                                        p[j] = q;
                                        f[j] = fmts[a];
                                    }
                                    Val::Splat(bits) => s[j] = _mm256_set1_ps(f32::from_bits(bits)),
                                }
                            }
                            let post = (c >> 40) & 0xff;
                            match kind - K_ARITH {
                                0 => arith_op::<0>(arr, post, p, f, s, dst, len),
                                1 => arith_op::<1>(arr, post, p, f, s, dst, len),
                                2 => arith_op::<2>(arr, post, p, f, s, dst, len),
                                3 => arith_op::<3>(arr, post, p, f, s, dst, len),
                                _ => arith_op::<4>(arr, post, p, f, s, dst, len),
                            }
                        }
                    }
                    vals[i] = Val::At(dst);
                }
                at += len;
            }
        }
    }

    pub unsafe extern "C" fn entry(prog: *const u64, ins: *const u64, outs: *const u64, begin: u64, n: u64) {
        // SAFETY: installed only when the host has AVX2, FMA and F16C (`routine`); the kernel passes a
        // program `plan` checked (every operand an earlier step, arrays of `begin + n` points).
        unsafe { run(prog, ins, outs, begin, n) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::dtype::{bf16_bits_to_f32, f16_bits_to_f32, f32_to_bf16_bits, f32_to_f16_bits};

    /// Runs `ops` (output `out`) on `begin..n` of the given input arrays through the routine, as a kernel
    /// call would; the output has `n` elements of `out`'s size (those before `begin` left 0).
    fn call(f: HalfFn, ops: Vec<HOp>, out: Fmt, ins: &[&Vec<u8>], begin: usize, n: usize) -> Vec<u8> {
        let h = HalfKernel { ops, out, points: n as u64 };
        let prog = h.encode();
        let mut o = vec![0u8; n * out.size() as usize];
        let ins: Vec<u64> = ins.iter().map(|s| s.as_ptr() as u64).collect();
        let outs = [o.as_mut_ptr() as u64];
        // SAFETY: arrays of n points, the program built here.
        unsafe { f(prog.as_ptr(), ins.as_ptr(), outs.as_ptr(), begin as u64, (n - begin) as u64) };
        o
    }

    fn bytes16(v: &[u16]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    fn bytes32(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    fn u16s(b: &[u8]) -> Vec<u16> {
        b.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()
    }
    fn u32s(b: &[u8]) -> Vec<u32> {
        b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    /// f32 bit patterns: specials, every exponent with mantissas at the rounding boundaries of both
    /// formats, NaN payloads, subnormals and pseudo-random bits.
    fn f32_patterns() -> Vec<f32> {
        let mut xs = vec![0.0f32, -0.0, 65504.0, 65519.99, 65520.0, -65520.0, f32::INFINITY, -f32::INFINITY, f32::NAN, f32::MAX];
        for e in 0u32..256 {
            for m in [0u32, 1, 0xfff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x7fff, 0x8000, 0x8001, 0x1_8000, 0x40_0000, 0x7f_e000, 0x7f_efff, 0x7f_f000, 0x7f_ffff] {
                xs.push(f32::from_bits((e << 23) | m));
                xs.push(f32::from_bits(0x8000_0000 | (e << 23) | m));
            }
        }
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            xs.push(f32::from_bits(s as u32));
            xs.push(f32::from_bits(((s >> 32) as u32 & 0x87ff_ffff) | 0x3000_0000));
        }
        xs
    }

    /// The routine's conversions against the scalar reference (which the inline vector code matches bit
    /// for bit): all 65536 float16 and bfloat16 values up, and f32 patterns down and rounded, with and
    /// without FTZ/DAZ, at strip and vector boundaries and from a nonzero `begin`.
    #[test]
    fn conversions_match_scalar_reference_exhaustively() {
        let Some(f) = routine() else { return };
        let all: Vec<u16> = (0..=u16::MAX).collect();
        let xs = f32_patterns();
        for flush in [false, true] {
            let _env = flush.then(super::super::fpenv::FlushDenormals::new);
            let _keep = (!flush).then(super::super::fpenv::KeepDenormals::new);
            for (fmt, up) in [(Fmt::F16, f16_bits_to_f32 as fn(u16) -> f32), (Fmt::BF16, bf16_bits_to_f32)] {
                let down: fn(f32) -> u16 = if fmt == Fmt::F16 { f32_to_f16_bits } else { f32_to_bf16_bits };
                let got = u32s(&call(f, vec![HOp::Array { input: 0, fmt }, HOp::Up { a: 0, fmt }], Fmt::F32, &[&bytes16(&all)], 0, all.len()));
                for (i, g) in got.iter().enumerate() {
                    assert_eq!(*g, up(i as u16).to_bits(), "{fmt:?} up {i:#x} flush {flush}");
                }
                let x = bytes32(&xs);
                let got = u16s(&call(f, vec![HOp::Array { input: 0, fmt: Fmt::F32 }, HOp::Down { a: 0, fmt }], fmt, &[&x], 0, xs.len()));
                for (v, g) in xs.iter().zip(&got) {
                    assert_eq!(*g, down(*v), "{fmt:?} down {:#x} flush {flush}", v.to_bits());
                }
                let got = u32s(&call(f, vec![HOp::Array { input: 0, fmt: Fmt::F32 }, HOp::Round { a: 0, fmt }], Fmt::F32, &[&x], 0, xs.len()));
                for (v, g) in xs.iter().zip(&got) {
                    assert_eq!(*g, up(down(*v)).to_bits(), "{fmt:?} round {:#x} flush {flush}", v.to_bits());
                }
            }
        }
        // lengths around the vector and the strip, from a nonzero begin
        for &(begin, n) in &[(0usize, 1usize), (0, 7), (3, 8), (1, 255), (0, 256), (5, 257), (0, 1000), (17, 1031)] {
            let got = u16s(&call(f, vec![HOp::Array { input: 0, fmt: Fmt::F16 }, HOp::Up { a: 0, fmt: Fmt::F16 }, HOp::Down { a: 1, fmt: Fmt::BF16 }], Fmt::BF16, &[&bytes16(&all[..n])], begin, n));
            for i in 0..n {
                let want = if i < begin { 0 } else { f32_to_bf16_bits(f16_bits_to_f32(all[i])) };
                assert_eq!(got[i], want, "begin {begin} n {n} at {i}");
            }
        }
    }

    /// Chains with every operation, constants, broadcast elements (float16 and f32) and splat conversions,
    /// against the same steps in scalar f32 arithmetic.
    #[test]
    fn chains_match_scalar_steps() {
        let Some(f) = routine() else { return };
        let n = 1037;
        let h: Vec<u16> = (0..n as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u16).collect();
        let g: Vec<f32> = (0..n).map(|i| ((i * 7919) % 2001) as f32 / 97.0 - 10.0).collect();
        let (hb, gb) = (bytes16(&h), bytes32(&g));
        let s16 = [0x4100u16]; // 2.5 as float16
        let s32 = [-0.75f32];
        let (s16b, s32b) = (bytes16(&s16), bytes32(&s32));
        let r16 = |v: f32| f16_bits_to_f32(f32_to_f16_bits(v));
        for op in [Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Fma] {
            // y = down(op(up(h), g, const)) ; z = down(op(round(y'), up(s16), s32)) with y' = up(y)
            let ops = vec![
                HOp::Array { input: 0, fmt: Fmt::F16 },
                HOp::Array { input: 1, fmt: Fmt::F32 },
                HOp::Const { bits: 1.5f32.to_bits() },
                HOp::Element { input: 2, offset: 0, fmt: Fmt::F16 },
                HOp::Element { input: 3, offset: 0, fmt: Fmt::F32 },
                HOp::Up { a: 0, fmt: Fmt::F16 },
                HOp::Arith { op, a: 5, b: 1, c: 2, post: Post::None },
                HOp::Round { a: 6, fmt: Fmt::F16 },
                HOp::Up { a: 3, fmt: Fmt::F16 },
                HOp::Arith { op, a: 7, b: 8, c: 4, post: Post::None },
                HOp::Down { a: 9, fmt: Fmt::F16 },
            ];
            // as written, and with `fuse`'s fewer passes (half arrays read directly, narrowing fused)
            let fused = fuse(ops.clone());
            assert!(fused.len() < ops.len() && fused.iter().any(|o| matches!(o, HOp::Arith { post: Post::Down(Fmt::F16), .. })), "{fused:?}");
            for ops in [ops, fused] {
                let got = u16s(&call(f, ops, Fmt::F16, &[&hb, &gb, &s16b, &s32b], 0, n));
                let ap = |a: f32, b: f32, c: f32| match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                    Op::Div => a / b,
                    Op::Fma => a.mul_add(b, c),
                };
                for i in 0..n {
                    let y = r16(ap(f16_bits_to_f32(h[i]), g[i], 1.5));
                    let z = f32_to_f16_bits(ap(y, 2.5, -0.75));
                    let ok = got[i] == z || (got[i] & 0x7fff > 0x7c00 && z & 0x7fff > 0x7c00);
                    assert!(ok, "{op:?} at {i}: {:#x} vs {z:#x}", got[i]);
                }
            }
        }
    }
}
