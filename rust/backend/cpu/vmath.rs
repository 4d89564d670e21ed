//! The math library in Cranelift IR: range reduction + polynomials emitted inline, for scalar `f32` and
//! vector `f32x4` lanes alike. A function emits the same instruction sequence per lane whatever the lane
//! count, so a kernel's vector loop and its scalar tail give bit-identical results (and so do kernels split
//! across threads at any point).
//!
//! float32 functions. `exp`, `exp2`, `expm1`, `log`, `log1p`, `tanh`, `logistic`, `erf`, `atan`, `atan2`
//! (the C library's `atanf`/`atan2f`, which XLA:CPU calls, step for step), `sinh`, `cosh`, `asinh`, `atanh`,
//! `asin` and `acos` (XLA's compositions over `atan2f`) compute in f32 (branch-free with selects); they live in
//! `math_f32`, written once over its `Lanes` trait, which this module's emitter implements and so do
//! `blockmath`'s AVX-512/AVX2 lanes: the block routines that strip-mode kernels call compute the same bits as
//! the code emitted here. `sin`/`cos` give the C library's `sinf`/`cosf` bits (XLA:CPU calls them: JAX's
//! bits): glibc's double-precision steps on f64 lanes (`math_f64::sincosf`, two f64x2 halves of an f32x4),
//! rounded once; lanes with |x| >= 2^26 (rare) call the C library through an out-of-line path taken only when
//! some lane needs it. `tan` gives the C library's `tanf` bits the same way: its double-precision reduction on
//! f64 lanes (`math_f64::tanf_reduce`), then its float kernel on the f32 lanes (`math_f32::tanf_kernel`), the C
//! library itself from |x| >= 2^23 (120 without FMA). `sqrt` is the
//! hardware instruction (correctly rounded); float32 `rsqrt` is XLA's (hardware estimate + one Newton step,
//! `math::rsqrt_f32`, imported).
//!
//! Measured max error over the float32 range (tests/test_math_accuracy.py: every 4099th bit pattern of
//! float32 plus 2^18 random bit patterns and special values, ~1.31e6 points per function, vs NumPy float64;
//! errors in float32 ulps of the exact result, denormals included; host with FMA; 0 means every result was
//! the float64 value rounded to float32):
//!
//! | function  | max ulp | algorithm                                                                  |
//! |-----------|---------|----------------------------------------------------------------------------|
//! | exp       | 4.56    | XLA:CPU's, bit for bit: Cephes expf, n = ⌊x·log2e + ½⌋ clamped to ±127       |
//! | exp2      | 0.99    | n = rint(x), 2^(x-n) through the exp polynomial                           |
//! | expm1     | 5.67    | XLA:CPU's, bit for bit: e^x − 1 above ½, else tanh(x/2)·(e^x + 1)           |
//! | log       | 1.10    | XLA:CPU's (Cephes logf), bit for bit: m ∈ [√½, √2), degree-8 poly, FMAs     |
//! | log1p     | 2.48    | XLA:CPU's, bit for bit: Cephes' x − x²/2 + x³P/Q below √2 − 1, else log(1+x) |
//! | tanh      | 4.80    | XLA:CPU's, bit for bit: x·P(x²)/Q(x²) clamped at ±7.9988, x below 0.0004   |
//! | logistic  | 2.37    | XLA:CPU's, bit for bit: 1/(1 + exp(−x))                                   |
//! | sin, cos  | 0.56    | the C library's sinf/cosf, bit for bit (glibc's double steps on f64 lanes)  |
//! | tan       | 1.01    | the C library's tanf, bit for bit (double reduction, fdlibm float kernel)   |
//! | atan      | 0.85    | the C library's atanf (fdlibm, float steps, no fma), bit for bit           |
//! | erf       | 5.35    | XLA:CPU's, bit for bit: x·P(x²)/Q(x²), ±1 from 3.8325                       |
//! | erf_inv   | 64.5    | XLA:CPU's sequence, bit for bit (see `math_f32::erf_inv`); ≤ 4.86 for |x| < 0.99 |
//! | sinh      | 24.5    | XLA:CPU's, bit for bit: (e + e/(e+1))/2 (e = expm1 x) below 1, else cosh's form |
//! | cosh      | 24.5    | XLA:CPU's, bit for bit: e^(x−ln2) + e^(−ln2−x) (x ∓ ln2 rounds first)         |
//! | asinh     | 2.90    | XLA:CPU's, bit for bit: sign·log1p(|x| + x²/(√(x²+1) + 1)), log|x| + ln2 from 2^64 |
//! | atanh     | 2.80    | XLA:CPU's, bit for bit: ½(log1p(x) − log1p(−x)), NaN beyond 1               |
//! | asin      | 1.92    | XLA:CPU's, bit for bit: 2·atan2f(x, 1 + √((1−x)(1+x)))                      |
//! | acos      | 1.58    | XLA:CPU's, bit for bit: atan2f(√((1−x)(1+x)), x)                            |
//! | pow       | 0.50    | C library's `powf`, as XLA's (f32 lanes, 1.27 ulp, not wired: JAX's bits)    |
//! | atan2     | 1.30    | the C library's atan2f (fdlibm, float steps over atanf), bit for bit        |
//! | sqrt      | 0       | `sqrt` instruction (correctly rounded)                                     |
//! | rsqrt     | 1.47    | XLA's: `rsqrtss` estimate, one Newton step with FMAs (imported)            |
//!
//! (The table is what the sweep reports, the XLA rows over
//! 28M+ points against JAX's own outputs; the test asserts ≤ 4 ulp, ≤ 1 ulp for sqrt,
//! and XLA's measured bound where XLA's sequence is worse: exp 5, expm1 and erf 6, tanh 5, sinh/cosh 25; the GPU
//! keeps its own WGSL versions of these, which are not JAX's bits.) `erf_inv` too reproduces what JAX computes
//! (so `random.normal` is bit-identical to JAX), including
//! Giles' approximation's loss near ±1, where 1 - x² cancels (its row: a sweep of every 13th float32 in
//! [-1, 1] against SciPy's float64 erfinv). `log` reproduces XLA's too (the samplers `random.poisson`,
//! `gamma`, ... take their logs from it: tests/test_math_accuracy.py::test_log_is_xlas_float32_log holds
//! JAX's bits on FMA hosts). `lgamma` and `digamma` compute in f64 lanes and round once
//! (`math_f64`; block routines run them on AVX-512/AVX2 f64 lanes). f64 functions and the rest (cbrt,
//! acosh, float32 pow (the C library's `powf`, as XLA's), ...) stay imported scalar functions
//! (`math.rs`), called per lane from vector code.
#![allow(clippy::excessive_precision)]
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, BlockArg, ConstantData, Endianness, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;

use crate::error::{Error, Result};
use crate::ir::DType;

use super::math_f32::{self, Cmp, ICmp, Lanes, LOG2E};
use super::math_f64::{self, Lanes64};
use super::math_fn::{Imports, MathFn};

/// Whether the host has fused multiply-add (then `fma` is one instruction; else mul + add).
pub fn host_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("fma")
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// Whether `f` on `dt` is emitted inline by this module. Not float32 `pow`: XLA:CPU calls the C library's
/// `powf` per lane, and cranax calls the same (`math::symbol_ptr`; in strips, `blockmath`'s routines give
/// its bits), so `jnp.power` gives JAX's bits (recorded JAX values depend on them: `jnp.linalg.norm(x, 3)`);
/// the f32-lane `math_f32::pow` below (1.27 ulp, 3x faster) is not wired for that reason. XLA calls `tanf` for `tan` too:
/// cranax's `tan` is the vector one with `tanf`'s bits (`random.cauchy` binds it); the samplers' `pow_libm` calls
/// `powf` itself, whatever `pow` becomes.
pub fn supports(f: MathFn, dt: DType) -> bool {
    use MathFn::*;
    dt == DType::F32
        && (matches!(
            f,
            Exp | Exp2 | Expm1 | Log | Log1p | Sin | Cos | Tan | Tanh | Logistic | Erf | ErfInv | Ndtri | Atan2
                | Lgamma | Digamma | Sinh | Cosh | Asin | Acos | Asinh | Atanh | Atan
        ))
}

/// Imported helpers an inline function calls on its rare paths.
pub fn helpers(f: MathFn, dt: DType) -> &'static [(MathFn, DType)] {
    match f {
        MathFn::Sin | MathFn::Cos if dt == DType::F32 => &[(MathFn::SinCosBig, DType::F32)],
        MathFn::Tan if dt == DType::F32 => &[(MathFn::TanBig, DType::F32)],
        _ => &[],
    }
}

/// Emits `f(args)` with `args` of type `ty` (`F32` or `F32X4`). `imports` must hold `helpers(f, F32)`.
pub fn emit(b: &mut FunctionBuilder, imports: &Imports, f: MathFn, ty: Type, args: &[Value]) -> Result<Value> {
    if ty.lane_type() != types::F32 || ty.lane_count() > 4 {
        return Err(Error::Codegen(format!("vmath: {f:?} on {ty}")));
    }
    if args.len() != f.arity() {
        return Err(Error::Codegen(format!("{f:?} takes {} operands, got {}", f.arity(), args.len())));
    }
    let mut e = E { b, ty, fma: host_fma() };
    let x = args[0];
    Ok(match f {
        MathFn::Exp => math_f32::exp(&mut e, x),
        MathFn::Exp2 => math_f32::exp2(&mut e, x),
        MathFn::Expm1 => math_f32::expm1(&mut e, x),
        MathFn::Log => math_f32::log(&mut e, x),
        MathFn::Log1p => math_f32::log1p(&mut e, x),
        MathFn::Tanh => math_f32::tanh(&mut e, x),
        MathFn::Logistic => math_f32::logistic(&mut e, x),
        MathFn::Sinh => math_f32::sinh(&mut e, x),
        MathFn::Cosh => math_f32::cosh(&mut e, x),
        MathFn::Asin => math_f32::asin(&mut e, x),
        MathFn::Acos => math_f32::acos(&mut e, x),
        MathFn::Asinh => math_f32::asinh(&mut e, x),
        MathFn::Atanh => math_f32::atanh(&mut e, x),
        MathFn::Sin | MathFn::Cos => {
            let fref = *imports
                .get(&(MathFn::SinCosBig, DType::F32))
                .ok_or_else(|| Error::Codegen("sincos helper not imported".into()))?;
            sincos_f32(&mut e, f == MathFn::Cos, x, fref)
        }
        MathFn::Tan => {
            let fref = *imports
                .get(&(MathFn::TanBig, DType::F32))
                .ok_or_else(|| Error::Codegen("tan helper not imported".into()))?;
            tan_f32(&mut e, x, fref)
        }
        MathFn::Erf => math_f32::erf(&mut e, x),
        MathFn::ErfInv => math_f32::erf_inv(&mut e, x),
        MathFn::Ndtri => math_f32::ndtri(&mut e, x),
        MathFn::Lgamma | MathFn::Digamma => gamma_family_f32(&mut e, f, x),
        // f32 lanes with FMA (the product ln|x|·y as hi + lo needs fused products), else f64 lanes
        MathFn::Pow if e.fma => math_f32::pow(&mut e, x, args[1]),
        MathFn::Pow => pow_f32(&mut e, x, args[1]),
        MathFn::Atan2 => math_f32::atan2(&mut e, x, args[1]),
        MathFn::Atan => math_f32::atan(&mut e, x),
        _ => return Err(Error::Codegen(format!("vmath: {f:?} is not inline"))),
    })
}

fn vflags() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

/// An emitter for one float type (`F32`, `F32X4`, `F64`, `F64X2`); masks are what `fcmp` gives for it.
struct E<'a, 'f> {
    b: &'a mut FunctionBuilder<'f>,
    ty: Type,
    fma: bool,
}

impl<'f> E<'_, 'f> {
    fn with<'c>(&'c mut self, ty: Type) -> E<'c, 'f> {
        E { b: &mut *self.b, ty, fma: self.fma }
    }
    fn vec(&self) -> bool {
        self.ty.is_vector()
    }
    fn ity(&self) -> Type {
        self.ty.as_int()
    }
    fn ci(&mut self, v: i64) -> Value {
        let it = self.ity();
        let lt = it.lane_type();
        let v = if lt.bits() < 64 { v & ((1i64 << lt.bits()) - 1) } else { v };
        let s = self.b.ins().iconst(lt, v);
        if self.vec() {
            self.b.ins().splat(it, s)
        } else {
            s
        }
    }
    fn and(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().band(a, b)
    }
    fn or(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bor(a, b)
    }
    fn iadd(&mut self, a: Value, c: i64) -> Value {
        let c = self.ci(c);
        self.b.ins().iadd(a, c)
    }
    fn iand(&mut self, a: Value, c: i64) -> Value {
        let c = self.ci(c);
        self.b.ins().band(a, c)
    }
    fn shl(&mut self, a: Value, n: i64) -> Value {
        let n = self.b.ins().iconst(types::I32, n);
        self.b.ins().ishl(a, n)
    }
    fn sshr(&mut self, a: Value, n: i64) -> Value {
        let n = self.b.ins().iconst(types::I32, n);
        self.b.ins().sshr(a, n)
    }
    fn ushr(&mut self, a: Value, n: i64) -> Value {
        let n = self.b.ins().iconst(types::I32, n);
        self.b.ins().ushr(a, n)
    }
    fn fcmp(&mut self, cc: FloatCC, a: Value, b: Value) -> Value {
        self.b.ins().fcmp(cc, a, b)
    }
    fn fcmpc(&mut self, cc: FloatCC, a: Value, c: f64) -> Value {
        let c = self.c(c);
        self.fcmp(cc, a, c)
    }
    fn icmp_c(&mut self, cc: IntCC, a: Value, c: i64) -> Value {
        let c = self.ci(c);
        self.b.ins().icmp(cc, a, c)
    }
}

/// The emitter as a lane type of `math_f32` (any of its float types: the f64 code below uses it too).
impl Lanes for E<'_, '_> {
    type F = Value;
    type I = Value;
    type M = Value;
    fn c(&mut self, v: f64) -> Value {
        let s = if self.ty.lane_type() == types::F64 { self.b.ins().f64const(v) } else { self.b.ins().f32const(v as f32) };
        if self.vec() {
            self.b.ins().splat(self.ty, s)
        } else {
            s
        }
    }
    fn add(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fadd(a, b)
    }
    fn sub(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fsub(a, b)
    }
    fn mul(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fmul(a, b)
    }
    fn div(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fdiv(a, b)
    }
    fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        if self.fma {
            self.b.ins().fma(a, b, c)
        } else {
            let p = self.b.ins().fmul(a, b);
            self.b.ins().fadd(p, c)
        }
    }
    fn abs(&mut self, x: Value) -> Value {
        self.b.ins().fabs(x)
    }
    fn neg(&mut self, x: Value) -> Value {
        self.b.ins().fneg(x)
    }
    fn cmp(&mut self, cc: Cmp, a: Value, b: Value) -> Value {
        let cc = match cc {
            Cmp::Lt => FloatCC::LessThan,
            Cmp::Gt => FloatCC::GreaterThan,
            Cmp::Ge => FloatCC::GreaterThanOrEqual,
            Cmp::Eq => FloatCC::Equal,
            Cmp::Unord => FloatCC::Unordered,
        };
        self.fcmp(cc, a, b)
    }
    fn icmpc(&mut self, cc: ICmp, a: Value, c: i64) -> Value {
        let cc = match cc {
            ICmp::Ge => IntCC::SignedGreaterThanOrEqual,
            ICmp::Lt => IntCC::SignedLessThan,
        };
        self.icmp_c(cc, a, c)
    }
    fn mand(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().band(a, b)
    }
    /// `m ? a : b` lane by lane (`m` a mask from fcmp/icmp on this emitter's lanes).
    fn sel(&mut self, m: Value, a: Value, b: Value) -> Value {
        if self.vec() {
            let vt = self.b.func.dfg.value_type(a);
            let mt = self.b.func.dfg.value_type(m);
            let m = if vt != mt { self.b.ins().bitcast(vt, vflags(), m) } else { m };
            self.b.ins().bitselect(m, a, b)
        } else {
            self.b.ins().select(m, a, b)
        }
    }
    fn bits(&mut self, x: Value) -> Value {
        let it = self.ity();
        self.b.ins().bitcast(it, vflags(), x)
    }
    fn fbits(&mut self, i: Value) -> Value {
        self.b.ins().bitcast(self.ty, vflags(), i)
    }
    fn iaddc(&mut self, a: Value, c: i64) -> Value {
        self.iadd(a, c)
    }
    fn isub(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().isub(a, b)
    }
    fn iandc(&mut self, a: Value, c: i64) -> Value {
        self.iand(a, c)
    }
    fn shlc(&mut self, a: Value, n: u32) -> Value {
        self.shl(a, n as i64)
    }
    fn sshrc(&mut self, a: Value, n: u32) -> Value {
        self.sshr(a, n as i64)
    }
    fn to_float(&mut self, i: Value) -> Value {
        self.b.ins().fcvt_from_sint(self.ty, i)
    }
    fn copysign(&mut self, a: Value, s: Value) -> Value {
        let (mag, sign) = if self.ty.lane_type() == types::F64 {
            (0x7fff_ffff_ffff_ffffi64, i64::MIN)
        } else {
            (0x7fff_ffff, 0x8000_0000)
        };
        let ab = self.bits(a);
        let sb = self.bits(s);
        let ab = self.iand(ab, mag);
        let sb = self.iand(sb, sign);
        let r = self.b.ins().bor(ab, sb);
        self.fbits(r)
    }
    fn sqrt(&mut self, x: Value) -> Value {
        self.b.ins().sqrt(x)
    }
    fn floor(&mut self, x: Value) -> Value {
        self.b.ins().floor(x)
    }
}

// ------------------------------------------------------------------------------------------------------
// float32 kernels computed in f64 lanes.

/// f64 lanes of an f32 value: one F64 for a scalar, the [low, high] F64X2 halves of an F32X4.
fn split(e: &mut E, x: Value) -> Vec<Value> {
    if !e.vec() {
        return vec![e.b.ins().fpromote(types::F64, x)];
    }
    let lo = e.b.ins().fvpromote_low(x);
    let bytes = e.b.ins().bitcast(types::I8X16, vflags(), x);
    let mask: Vec<u8> = (8..16).chain(0..8).collect();
    let imm = e.b.func.dfg.immediates.push(ConstantData::from(mask));
    let sw = e.b.ins().shuffle(bytes, bytes, imm);
    let sw = e.b.ins().bitcast(types::F32X4, vflags(), sw);
    let hi = e.b.ins().fvpromote_low(sw);
    vec![lo, hi]
}

/// Inverse of `split` (rounds each lane once).
fn join(e: &mut E, parts: &[Value]) -> Value {
    if !e.vec() {
        return e.b.ins().fdemote(types::F32, parts[0]);
    }
    let a = e.b.ins().fvdemote(parts[0]);
    let c = e.b.ins().fvdemote(parts[1]);
    let a = e.b.ins().bitcast(types::I8X16, vflags(), a);
    let c = e.b.ins().bitcast(types::I8X16, vflags(), c);
    let mask: Vec<u8> = (0..8).chain(16..24).collect();
    let imm = e.b.func.dfg.immediates.push(ConstantData::from(mask));
    let r = e.b.ins().shuffle(a, c, imm);
    e.b.ins().bitcast(types::F32X4, vflags(), r)
}

fn f64_ty(e: &E) -> Type {
    if e.vec() {
        types::F64X2
    } else {
        types::F64
    }
}

const MAGIC64: f64 = 6755399441055744.0; // 1.5 * 2^52
/// e^t for f64 lanes, |t| clamped to 700, relative error ~2^-47 (internal use: the result is rounded to f32).
fn exp_f64_internal(d: &mut E, t: Value) -> Value {
    let t = d.clamp(t, -700.0, 700.0);
    let magic = d.c(MAGIC64);
    let l2e = d.c(LOG2E);
    let kk = d.fma(t, l2e, magic);
    let n = d.sub(kk, magic);
    let r = d.fmac(n, -0.6931471805599453, t);
    let r = d.fmac(n, -2.3190468138462996e-17, r);
    // Taylor to r^12: |r| <= 0.347 gives 2^-50.
    let mut cs = [0.0f64; 13];
    let mut fact = 1.0;
    for (i, c) in cs.iter_mut().enumerate() {
        if i > 0 {
            fact *= i as f64;
        }
        *c = 1.0 / fact;
    }
    let p = d.poly(r, &cs);
    let kb = d.bits(kk);
    let e2 = d.iadd(kb, 1023);
    let e2 = d.shl(e2, 52);
    let s = d.fbits(e2);
    d.mul(p, s)
}

/// ln of f64 lanes: `math_f64::log` (positive normal finite lanes; callers select specials).
fn log_f64_internal(d: &mut E, x: Value) -> Value {
    math_f64::log(d, x)
}

/// The emitter on f64 lanes (`F64`, `F64X2`) for `math_f64`.
impl Lanes64 for E<'_, '_> {
    fn nearest(&mut self, x: Value) -> Value {
        self.b.ins().nearest(x)
    }
    fn mor(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bor(a, b)
    }
    fn ushrc(&mut self, a: Value, n: u32) -> Value {
        self.ushr(a, n as i64)
    }
    fn trunc(&mut self, x: Value) -> Value {
        self.b.ins().trunc(x)
    }
}

/// float32 sin or cos with the C library's bits (`math_f64::sincosf` on f64 lanes, rounded once), its
/// results below 2^-12 (x, or 1) on the float32 lanes, and on lanes with `sincos_limit` <= |x| < inf (2^26;
/// 120 without FMA) the C library's own value: a cold block, entered only when some lane needs it, calls the
/// `SinCosBig` helper per lane.
fn sincos_f32(e: &mut E, cos: bool, x: Value, helper: cranelift_codegen::ir::FuncRef) -> Value {
    let dty = f64_ty(e);
    let parts = split(e, x);
    let mid = e.fma;
    let mut outs = Vec::new();
    {
        let mut d = e.with(dty);
        for &p in &parts {
            outs.push(math_f64::sincosf(&mut d, p, cos, mid));
        }
    }
    let y = join(e, &outs);
    let y = if cos {
        let ax = e.abs(x);
        let tiny = e.cmpc(Cmp::Lt, ax, 2f64.powi(-12));
        e.selc(tiny, 1.0, y)
    } else {
        math_f32::tiny_passthrough(e, x, y, 2f64.powi(-12))
    };
    cold_lanes(e, x, y, math_f64::sincos_limit(mid), helper, |e, v| {
        // (sinf bits << 32) | cosf bits
        let v = if cos { v } else { e.b.ins().ushr_imm_u(v, 32) };
        let v = e.b.ins().ireduce(types::I32, v);
        e.b.ins().bitcast(types::F32, vflags(), v)
    })
}

/// `y`, with the lanes where `limit` <= |x| < inf replaced by `helper(x)` (its result mapped by `lane`): the
/// C library's value for the rare huge arguments of `sincos_f32`/`tan_f32`, from a cold block entered only
/// when some lane needs it.
fn cold_lanes(
    e: &mut E,
    x: Value,
    y: Value,
    limit: f64,
    helper: cranelift_codegen::ir::FuncRef,
    lane: impl Fn(&mut E, Value) -> Value,
) -> Value {
    let ax = e.abs(x);
    let ge = e.fcmpc(FloatCC::GreaterThanOrEqual, ax, limit);
    let fin = e.fcmpc(FloatCC::LessThan, ax, f64::INFINITY);
    let big = e.and(ge, fin);
    let vec = e.vec();
    let any = if vec { e.b.ins().vany_true(big) } else { big };
    let slow = e.b.create_block();
    let merge = e.b.create_block();
    let out = e.b.append_block_param(merge, e.ty);
    e.b.ins().brif(any, slow, &[], merge, &[BlockArg::from(y)]);
    e.b.set_cold_block(slow);
    e.b.switch_to_block(slow);
    let mut patched = y;
    for l in 0..e.ty.lane_count() as u8 {
        let xl = if vec { e.b.ins().extractlane(x, l) } else { x };
        let call = e.b.ins().call(helper, &[xl]);
        let v = e.b.inst_results(call)[0];
        let v = lane(e, v);
        patched = if vec { e.b.ins().insertlane(patched, v, l) } else { v };
    }
    let patched = e.sel(big, patched, y);
    e.b.ins().jump(merge, &[BlockArg::from(patched)]);
    e.b.switch_to_block(merge);
    out
}

/// The C library's `sinf` and `cosf` of `x` (the bits XLA:CPU gives: it calls them), packed as
/// (sinf bits << 32) | cosf bits: the rare path of `sincos_f32` and of the block routines (|x| >= 2^26).
pub extern "C" fn sincos_big_f32(x: f32) -> i64 {
    (((x.sin().to_bits() as u64) << 32) | x.cos().to_bits() as u64) as i64
}

/// float32 tan with the C library's bits (XLA:CPU calls `tanf`): `math_f64::tanf_reduce` on f64 lanes, its r
/// split as y0 = r rounded to f32 and y1 = (r − y0) rounded, then `math_f32::tanf_kernel` on the f32 lanes; on
/// lanes with `tan_limit` <= |x| < inf (2^23; 120 without FMA) the C library's own value, from a cold block
/// entered only when some lane needs it (the `TanBig` helper per lane).
fn tan_f32(e: &mut E, x: Value, helper: cranelift_codegen::ir::FuncRef) -> Value {
    let dty = f64_ty(e);
    let parts = split(e, x);
    let mid = e.fma;
    let (mut rs, mut iys) = (Vec::new(), Vec::new());
    {
        let mut d = e.with(dty);
        for &p in &parts {
            let (r, iy) = math_f64::tanf_reduce(&mut d, p, mid);
            rs.push(r);
            iys.push(iy);
        }
    }
    let y0 = join(e, &rs);
    let y0d = split(e, y0);
    let mut rests = Vec::new();
    {
        let mut d = e.with(dty);
        for (&r, &h) in rs.iter().zip(&y0d) {
            rests.push(d.sub(r, h));
        }
    }
    let y1 = join(e, &rests);
    let iy = join(e, &iys);
    let y = math_f32::tanf_kernel(e, x, y0, y1, iy);
    cold_lanes(e, x, y, math_f64::tan_limit(mid), helper, |_, v| v)
}

/// The C library's `tanf` (the bits XLA:CPU gives: it calls it): the rare path of `tan_f32` and of the block
/// routines (|x| >= `math_f64::tan_limit`).
pub extern "C" fn tan_big_f32(x: f32) -> f32 {
    x.tan()
}

/// lgamma or digamma of f32 lanes, through f64 lanes (`math_f64`).
fn gamma_family_f32(e: &mut E, f: MathFn, x: Value) -> Value {
    let dty = f64_ty(e);
    let xs = split(e, x);
    let mut outs = Vec::new();
    {
        let mut d = e.with(dty);
        for &xp in &xs {
            outs.push(if f == MathFn::Lgamma { math_f64::lgamma(&mut d, xp) } else { math_f64::digamma(&mut d, xp) });
        }
    }
    join(e, &outs)
}

/// Lanes where f64 `y` is an integer, and where it is an odd integer.
fn int_odd(d: &mut E, y: Value) -> (Value, Value) {
    let t = d.b.ins().trunc(y);
    let is_int = d.fcmp(FloatCC::Equal, t, y);
    let h = d.mulc(y, 0.5);
    let th = d.b.ins().trunc(h);
    let half_int = d.fcmp(FloatCC::Equal, th, h);
    let not_half = d.b.ins().bnot(half_int);
    (is_int, d.and(is_int, not_half))
}

fn pow_f32(e: &mut E, x: Value, y: Value) -> Value {
    let dty = f64_ty(e);
    let xs = split(e, x);
    let ys = split(e, y);
    let mut outs = Vec::new();
    {
        let mut d = e.with(dty);
        for (&xp, &yp) in xs.iter().zip(&ys) {
            let ax = d.abs(xp);
            let l = log_f64_internal(&mut d, ax);
            // log of 0 / inf / NaN.
            let zero = d.fcmpc(FloatCC::Equal, ax, 0.0);
            let l = d.selc(zero, f64::NEG_INFINITY, l);
            let inf = d.fcmpc(FloatCC::Equal, ax, f64::INFINITY);
            let l = d.selc(inf, f64::INFINITY, l);
            let nan = d.fcmp(FloatCC::Unordered, ax, ax);
            let l = d.sel(nan, ax, l);
            let t = d.mul(yp, l);
            // Outside [-120, 100] the f32 result is 0 or inf; ±inf and NaN keep their meaning.
            let big = d.fcmpc(FloatCC::GreaterThan, t, 100.0);
            let tiny = d.fcmpc(FloatCC::LessThan, t, -120.0);
            let mag = exp_f64_internal(&mut d, t);
            let mag = d.selc(big, f64::INFINITY, mag);
            let mag = d.selc(tiny, 0.0, mag);
            let tn = d.fcmp(FloatCC::Unordered, t, t);
            let mag = d.sel(tn, t, mag);
            // Negative base: odd integer y flips the sign, non-integer (finite) y is NaN.
            let (is_int, odd) = int_odd(&mut d, yp);
            let xb = d.bits(xp);
            let xneg = d.icmp_c(IntCC::SignedLessThan, xb, 0);
            let flip = d.and(xneg, odd);
            let nm = d.neg(mag);
            let v = d.sel(flip, nm, mag);
            let xlt0 = d.fcmpc(FloatCC::LessThan, xp, 0.0);
            let ax_fin = d.fcmpc(FloatCC::LessThan, ax, f64::INFINITY);
            let yfin = d.abs(yp);
            let yfin = d.fcmpc(FloatCC::LessThan, yfin, f64::INFINITY);
            let not_int = d.b.ins().bnot(is_int);
            let bad = d.and(xlt0, not_int);
            let bad = d.and(bad, yfin);
            let bad = d.and(bad, ax_fin);
            let v = d.selc(bad, f64::NAN, v);
            // |x| == 1 with infinite y, x == 1, and y == 0 give 1 (even with NaN on the other side).
            let ax1 = d.fcmpc(FloatCC::Equal, ax, 1.0);
            let yinf = d.b.ins().bnot(yfin);
            let yinf_nn = d.fcmp(FloatCC::Ordered, yp, yp);
            let yinf = d.and(yinf, yinf_nn);
            let one_a = d.and(ax1, yinf);
            let x1 = d.fcmpc(FloatCC::Equal, xp, 1.0);
            let y0 = d.fcmpc(FloatCC::Equal, yp, 0.0);
            let ones = d.or(one_a, x1);
            let ones = d.or(ones, y0);
            outs.push(d.selc(ones, 1.0, v));
        }
    }
    join(e, &outs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Error of f32 `got` in f32 ulps of the exact `want` (0 when `got` is `want` rounded).
    fn ulps(got: f32, want: f64) -> f64 {
        if got == want as f32 {
            return 0.0;
        }
        let a = want.abs().max(f32::MIN_POSITIVE as f64);
        let ulp = 2f64.powi(a.log2().floor() as i32 - 23);
        (got as f64 - want).abs() / ulp
    }

    /// The f32-lane sin/cos/tan near every multiple of π/2 below 2^18 (where r is small and the reduction's
    /// low bits matter), through both sides of the fast/exact boundary, and on huge arguments.
    #[test]
    fn f32_trig_within_bound_near_multiples_of_pio2() {
        if !host_fma() {
            return;
        }
        type Oracle = fn(f64) -> f64;
        for (f, want, bound) in [(MathFn::Sin, f64::sin as Oracle, 4.0), (MathFn::Cos, f64::cos, 4.0), (MathFn::Tan, f64::tan, 4.0)] {
            let p = crate::backend::cpu::mathlib::routine(f, false).expect("inline routine");
            // SAFETY: `routine(f, false)` is an `f32 -> f32` function in the host's C calling convention.
            let g: extern "C" fn(f32) -> f32 = unsafe { std::mem::transmute(p) };
            let mut worst = (0.0f64, 0.0f32);
            let mut check = |x: f32| {
                let e = ulps(g(x), want(x as f64));
                if !(e <= worst.0) {
                    worst = (e, x);
                }
            };
            for k in 1..170_000i64 {
                let c = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
                for d in -2i32..=2 {
                    let x = f32::from_bits((c.to_bits() as i32 + d) as u32);
                    check(x);
                    check(-x);
                }
            }
            for i in 0..200_000u32 {
                check(262144.0 - i as f32 * 0.015625);
            }
            for i in 0..90_000u32 {
                check(f32::from_bits(0x4880_0000 + i * 9973)); // 2^18 up to f32::MAX
            }
            assert!(worst.0 <= bound, "{f:?}({:e}): {} ulp", worst.1, worst.0);
            eprintln!("{f:?}: max {:.3} ulp at {:e}", worst.0, worst.1);
        }
    }
}

