//! The float32 math algorithms computed in f32 lanes (`exp`, `exp2`, `expm1`, `log`, `log1p`, `tanh`,
//! `logistic`, `erf`, `erf_inv`, `atan`, `atan2`, `asin`, `acos`, `sinh`, `cosh`, `asinh`, `atanh`, `pow`, and `tan`'s
//! kernel after `math_f64::tanf_reduce`; `sin`/`cos` are `math_f64::sincosf`), written once against `Lanes`: the operations a lane type offers. Two kinds of code
//! run them:
//! - `vmath`'s emitter, which turns each operation into Cranelift IR (scalar `f32` or `f32x4`), and
//! - `blockmath`'s AVX-512 / AVX2 lane types, compiled ahead of time into block routines over arrays.
//!
//! Every lane type performs the same IEEE operations in the same order (fma fused wherever `fma` is
//! called: block routines exist only on hosts with FMA, where the emitter fuses too), so a value computed
//! by a block routine is bit-identical to the inline one. Kernels may therefore mix the two freely (strips
//! of a row through a block routine, the rest inline) and results never depend on where a row is cut.
//!
//! Algorithms and measured accuracy: see the table in `vmath`.
#![allow(clippy::excessive_precision)]

/// The float comparisons the algorithms use (ordered: false when either side is NaN, except `Unord`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Gt,
    Ge,
    Eq,
    /// Either side is NaN.
    Unord,
}

/// The signed i32 comparisons the algorithms use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ICmp {
    Ge,
    Lt,
}

/// The operations of one float32 lane type (`F`), its i32 lanes (`I`) and its lane masks (`M`). (`math_f64`'s
/// lane types implement it on f64 lanes: constants in f64, i64 integer lanes.)
pub trait Lanes {
    type F: Copy;
    type I: Copy;
    type M: Copy;
    /// `v` rounded to f32, in every lane.
    fn c(&mut self, v: f64) -> Self::F;
    fn add(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn sub(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn mul(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn div(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// a * b + c, fused when the host has fma.
    fn fma(&mut self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    fn abs(&mut self, x: Self::F) -> Self::F;
    fn neg(&mut self, x: Self::F) -> Self::F;
    /// Lanes where `a cc b`.
    fn cmp(&mut self, cc: Cmp, a: Self::F, b: Self::F) -> Self::M;
    /// Lanes where `a cc c` on i32 lanes.
    fn icmpc(&mut self, cc: ICmp, a: Self::I, c: i64) -> Self::M;
    fn mand(&mut self, a: Self::M, b: Self::M) -> Self::M;
    /// `m ? a : b` lane by lane.
    fn sel(&mut self, m: Self::M, a: Self::F, b: Self::F) -> Self::F;
    fn bits(&mut self, x: Self::F) -> Self::I;
    fn fbits(&mut self, i: Self::I) -> Self::F;
    fn iaddc(&mut self, a: Self::I, c: i64) -> Self::I;
    fn isub(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn iandc(&mut self, a: Self::I, c: i64) -> Self::I;
    fn shlc(&mut self, a: Self::I, n: u32) -> Self::I;
    fn sshrc(&mut self, a: Self::I, n: u32) -> Self::I;
    /// i32 lanes → f32, rounded to nearest.
    fn to_float(&mut self, i: Self::I) -> Self::F;
    /// |a| with the sign of `s`.
    fn copysign(&mut self, a: Self::F, s: Self::F) -> Self::F;
    /// The correctly rounded square root (the hardware instruction).
    fn sqrt(&mut self, x: Self::F) -> Self::F;
    /// Rounded toward −∞ (as `f32::floor`).
    fn floor(&mut self, x: Self::F) -> Self::F;
    /// Whether some lane of `m` is set, where the lanes can branch on it (block routines); code that
    /// cannot (the inline emitter) answers `true`, so a branch skipped only when no lane needs it computes
    /// what it would have computed anyway: skipping changes no selected lane's bits.
    fn any(&mut self, _m: Self::M) -> bool {
        true
    }
    /// `any` for branches around work that lanes almost never need (asinh beyond 2^64): block routines on
    /// every width branch on it; the inline emitter answers `true`.
    fn any_rare(&mut self, _m: Self::M) -> bool {
        true
    }
    /// Whether every lane of `m` is set, where the lanes can branch on it; else `false` (see `any`).
    fn all(&mut self, _m: Self::M) -> bool {
        false
    }

    fn addc(&mut self, a: Self::F, c: f64) -> Self::F {
        let c = self.c(c);
        self.add(a, c)
    }
    fn mulc(&mut self, a: Self::F, c: f64) -> Self::F {
        let c = self.c(c);
        self.mul(a, c)
    }
    fn fmac(&mut self, a: Self::F, b: f64, c: Self::F) -> Self::F {
        let b = self.c(b);
        self.fma(a, b, c)
    }
    /// cs[0] + x*(cs[1] + x*(...)).
    fn poly(&mut self, x: Self::F, cs: &[f64]) -> Self::F {
        let mut acc = self.c(cs[cs.len() - 1]);
        for &k in cs[..cs.len() - 1].iter().rev() {
            let kc = self.c(k);
            acc = self.fma(acc, x, kc);
        }
        acc
    }
    fn cmpc(&mut self, cc: Cmp, a: Self::F, c: f64) -> Self::M {
        let c = self.c(c);
        self.cmp(cc, a, c)
    }
    fn selc(&mut self, m: Self::M, a: f64, b: Self::F) -> Self::F {
        let a = self.c(a);
        self.sel(m, a, b)
    }
    /// Clamp to [lo, hi]; NaN stays NaN. (Compare + select: much shorter than `fmax`/`fmin`, whose
    /// NaN and signed-zero rules cost a long sequence on x86.)
    fn clamp(&mut self, x: Self::F, lo: f64, hi: f64) -> Self::F {
        let l = self.c(lo);
        let h = self.c(hi);
        let below = self.cmp(Cmp::Lt, x, l);
        let t = self.sel(below, l, x);
        let above = self.cmp(Cmp::Gt, t, h);
        self.sel(above, h, t)
    }
}

pub(super) const LOG2E: f64 = std::f64::consts::LOG2_E;
const MAGIC32: f64 = 12582912.0; // 1.5 * 2^23
/// Cephes: ln2 = C1 + C2 with C1 exact in 9 bits.
pub(super) const EXP_C1: f64 = 0.693359375;
pub(super) const EXP_C2: f64 = -2.12194440e-4;
/// Cephes expf: e^r = 1 + r + r^2 * P(r), |r| <= ln2/2.
const EXP_P: [f64; 6] = [5.0000001201E-1, 1.6666665459E-1, 4.1665795894E-2, 8.3334519073E-3, 1.3981999507E-3, 1.9875691500E-4];

/// For f32 `kk = n + 1.5*2^23` (n an integer, |n| < 2^22): the integer n (i32 lanes).
#[inline(always)]
fn magic_int32<L: Lanes>(e: &mut L, kk: L::F) -> L::I {
    let bits = e.bits(kk);
    e.iaddc(bits, -0x4B40_0000)
}

/// 2^n for integer lanes n with n + 127 in [1, 254].
#[inline(always)]
fn pow2i<L: Lanes>(e: &mut L, n: L::I) -> L::F {
    let t = e.iaddc(n, 127);
    let t = e.shlc(t, 23);
    e.fbits(t)
}

/// (n as i32 lanes, r) with x = n*ln2 + r, |r| <= ln2/2; x must be clamped to |x| < 2^21.
#[inline(always)]
fn exp_reduce<L: Lanes>(e: &mut L, x: L::F) -> (L::I, L::F) {
    let magic = e.c(MAGIC32);
    let l2e = e.c(LOG2E);
    let kk = e.fma(x, l2e, magic);
    let n = e.sub(kk, magic);
    let ni = magic_int32(e, kk);
    let r = e.fmac(n, -EXP_C1, x);
    let r = e.fmac(n, -EXP_C2, r);
    (ni, r)
}

/// expm1(r) = r + r^2 P(r) for |r| <= ln2/2.
#[inline(always)]
fn expm1_poly<L: Lanes>(e: &mut L, r: L::F) -> L::F {
    let p = e.poly(r, &EXP_P);
    let z = e.mul(r, r);
    e.fma(p, z, r)
}

/// y * 2^n for n in [-152, 128] (two exact power-of-two factors: one rounding, also into denormals).
#[inline(always)]
fn scale2<L: Lanes>(e: &mut L, y: L::F, ni: L::I) -> L::F {
    let half = e.sshrc(ni, 1);
    let rest = e.isub(ni, half);
    let s1 = pow2i(e, half);
    let s2 = pow2i(e, rest);
    let y = e.mul(y, s1);
    e.mul(y, s2)
}

/// XLA:CPU's float32 exp as (y, 2^n) with e^x = y·2^n: x clamped to [-87.8, 88.8], n = floor(x·log2 e + ½)
/// (one fma) clamped to ±127, r = x − n·C1 − n·C2 (fmas), y = 1 + (r + r²·P(r)) (Cephes' expf polynomial,
/// Horner by fmas), 2^n from n's bits (n = −127 gives 0). Its operations are LLVM's code for XLA's exp,
/// fmas where it fuses them, so `exp` and the functions XLA builds on it give JAX's bits.
#[inline(always)]
fn xla_exp_parts<L: Lanes>(e: &mut L, x: L::F) -> (L::F, L::F) {
    let xc = e.clamp(x, -87.8, 88.8);
    let l2e = e.c(LOG2E);
    let half = e.c(0.5);
    let fx = e.fma(xc, l2e, half);
    let fx = e.floor(fx);
    let n = e.clamp(fx, -127.0, 127.0);
    let nn = e.neg(n);
    let r = e.fmac(nn, EXP_C1, xc);
    let r = e.fmac(nn, EXP_C2, r);
    let q = expm1_poly(e, r);
    let y = e.addc(q, 1.0);
    let magic = e.c(MAGIC32);
    let kk = e.add(n, magic);
    let ni = magic_int32(e, kk);
    (y, pow2i(e, ni))
}

/// XLA:CPU's float32 exp (`xla_exp_parts`), JAX's bits, near overflow and underflow too.
#[inline(always)]
pub fn exp<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let (y, s) = xla_exp_parts(e, x);
    e.mul(y, s)
}

#[inline(always)]
pub fn exp2<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let xc = e.clamp(x, -152.0, 129.0);
    let magic = e.c(MAGIC32);
    let kk = e.add(xc, magic);
    let n = e.sub(kk, magic);
    let ni = magic_int32(e, kk);
    let f = e.sub(xc, n); // exact, |f| <= 1/2
    let r = e.mulc(f, std::f64::consts::LN_2);
    let q = expm1_poly(e, r);
    let y = e.addc(q, 1.0);
    scale2(e, y, ni)
}

/// |x| < `limit`: the function is x to within half an ulp (also keeps the sign of zero).
#[inline(always)]
pub fn tiny_passthrough<L: Lanes>(e: &mut L, x: L::F, res: L::F, limit: f64) -> L::F {
    let ax = e.abs(x);
    let tiny = e.cmpc(Cmp::Lt, ax, limit);
    e.sel(tiny, x, res)
}

/// XLA:CPU's float32 expm1, JAX's bits: e^x − 1 for |x| > ½, else tanh(x/2)·(e^x + 1) (both over XLA's exp
/// and tanh, `exp` and `tanh` here), and x itself where x/2 is zero.
#[inline(always)]
pub fn expm1<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let ex = exp(e, x);
    let em1 = e.addc(ex, -1.0);
    let h = e.mulc(x, 0.5);
    let t = tanh(e, h);
    let ep1 = e.addc(ex, 1.0);
    let small = e.mul(t, ep1);
    let ax = e.abs(x);
    let big = e.cmpc(Cmp::Gt, ax, 0.5);
    let r = e.sel(big, em1, small);
    let hz = e.cmpc(Cmp::Eq, h, 0.0);
    e.sel(hz, x, r)
}

/// Splits positive normal `u` as 2^k * m, m in [√½, √2): (k as i32 lanes, f = m - 1).
#[inline(always)]
fn log_split<L: Lanes>(e: &mut L, u: L::F) -> (L::I, L::F) {
    let iu = e.bits(u);
    let iu = e.iaddc(iu, 0x3f80_0000 - 0x3f35_04f3);
    let k = e.sshrc(iu, 23);
    let k = e.iaddc(k, -0x7f);
    let m = e.iandc(iu, 0x007f_ffff);
    let m = e.iaddc(m, 0x3f35_04f3);
    let m = e.fbits(m);
    let f = e.addc(m, -1.0);
    (k, f)
}

/// log special values: x < zero_at → NaN, x = zero_at → -inf, +inf → +inf, NaN → NaN.
#[inline(always)]
fn log_specials<L: Lanes>(e: &mut L, x: L::F, res: L::F, zero_at: f64) -> L::F {
    let neg = e.cmpc(Cmp::Lt, x, zero_at);
    let r = e.selc(neg, f64::NAN, res);
    let zero = e.cmpc(Cmp::Eq, x, zero_at);
    let r = e.selc(zero, f64::NEG_INFINITY, r);
    let inf = e.cmpc(Cmp::Eq, x, f64::INFINITY);
    let r = e.selc(inf, f64::INFINITY, r);
    let nan = e.cmp(Cmp::Unord, x, x);
    e.sel(nan, x, r)
}

/// Cephes logf's polynomial: log(1 + x) = x - x²/2 + x³·P(x) on x ∈ [√½ - 1, √2 - 1).
const LOG_P: [f64; 9] = [
    7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
    -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1,
];

/// Natural log as XLA:CPU computes float32 `log` (Cephes' logf, its operations and fused multiply-adds in
/// the same order), so `jnp.log` and the samplers built on it (`random.poisson`, `gamma`, ...) give JAX's
/// bits (`cephes_logf`). Subnormals (which XLA flushes to zero) are scaled by 2^23 first and take the same
/// path.
#[inline(always)]
pub fn log<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let den = e.cmpc(Cmp::Lt, x, f32::MIN_POSITIVE as f64);
    let xs = e.mulc(x, 8388608.0);
    let xs = e.sel(den, xs, x);
    let zero = e.c(0.0);
    let adj = e.c(-23.0);
    let adj = e.sel(den, adj, zero);
    let r = cephes_logf(e, xs, Some(adj));
    log_specials(e, x, r, 0.0)
}

/// Cephes logf of a positive normal `xs` (plus `exp_adj` on its exponent), the order of XLA's operations:
/// frexp to m in [½, 1) moved to [√½, √2), P(m - 1) by three interleaved Horner chains joined in x³,
/// ln 2 split as `EXP_C1` (exact in 9 bits, so e·C1 is exact) + `EXP_C2`. `log` and `xla_log` share it.
#[inline(always)]
fn cephes_logf<L: Lanes>(e: &mut L, xs: L::F, exp_adj: Option<L::F>) -> L::F {
    let b = e.bits(xs);
    let mb = e.iandc(b, 0x007f_ffff);
    let mb = e.iaddc(mb, 0x3f00_0000);
    let m = e.fbits(mb);
    // xs > 0: the arithmetic shift is the exponent field
    let eb = e.sshrc(b, 23);
    let eb = e.iaddc(eb, -126);
    let ef = e.to_float(eb);
    let ef = match exp_adj {
        Some(a) => e.add(ef, a),
        None => ef,
    };
    let zero = e.c(0.0);
    let small = e.cmpc(Cmp::Lt, m, std::f64::consts::FRAC_1_SQRT_2);
    let mm1 = e.addc(m, -1.0);
    let madd = e.sel(small, m, zero);
    let xm = e.add(mm1, madd);
    let one = e.c(1.0);
    let eadj = e.sel(small, one, zero);
    let ef = e.sub(ef, eadj);
    let x2 = e.mul(xm, xm);
    let x3 = e.mul(x2, xm);
    let p = LOG_P.map(|v| e.c(v));
    let y = e.fma(p[0], xm, p[1]);
    let y1 = e.fma(p[3], xm, p[4]);
    let y2 = e.fma(p[6], xm, p[7]);
    let y = e.fma(y, xm, p[2]);
    let y1 = e.fma(y1, xm, p[5]);
    let y2 = e.fma(y2, xm, p[8]);
    let y = e.fma(y, x3, y1);
    let y = e.fma(y, x3, y2);
    let ec2 = e.mulc(ef, EXP_C2);
    let y = e.fma(y, x3, ec2);
    // x2 * 0.5 and ef * C1 are exact
    let h = e.mulc(x2, 0.5);
    let r = e.sub(xm, h);
    let r = e.add(r, y);
    let ec1 = e.mulc(ef, EXP_C1);
    e.add(r, ec1)
}

/// Cephes log1p's rational form (its double coefficients rounded to f32, as XLA:CPU has them):
/// log(1 + x) = x − x²/2 + x³·P(x)/Q(x) for |x| < √2 − 1.
const LOG1P_P: [f64; 7] = [
    20.039552688598633, 57.11296463012695, 60.949668884277344, 29.91191864013672, 6.578732490539551,
    0.4985410273075104, 4.527000e-05,
];
const LOG1P_Q: [f64; 7] = [
    60.11865997314453, 216.42788696289062, 309.0987243652344, 221.7624053955078, 83.04756927490234,
    15.062909126281738, 1.0,
];

/// XLA:CPU's float32 log1p, JAX's bits: below √2 − 1 in magnitude x + (x³·P(x)/Q(x) − x²/2) (Horner by
/// fmas, the last step fused as LLVM fuses it), else log(1 + x) by XLA's log (`log`).
#[inline(always)]
pub fn log1p<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    log1p_fused(e, x, false)
}

/// `log1p` with x³·P/Q − x²/2 fused either way: LLVM fuses the x²/2 product into the sum in `log1p` alone, and
/// the x³·P/Q one where x²/2 is shared by two log1p's (`atanh`: x² is the same for ±x).
#[inline(always)]
fn log1p_fused<L: Lanes>(e: &mut L, x: L::F, fuse_ratio: bool) -> L::F {
    log1p_with(e, x, fuse_ratio, false)
}

/// `log1p_fused`; `ordinary`: the caller has found every lane's 1 + x positive and finite, so the special-value
/// selects (no-ops on such lanes) are skipped without testing again.
#[inline(always)]
fn log1p_with<L: Lanes>(e: &mut L, x: L::F, fuse_ratio: bool, ordinary: bool) -> L::F {
    let x2 = e.mul(x, x);
    let p = e.poly(x, &LOG1P_P);
    let q = e.poly(x, &LOG1P_Q);
    let ratio = e.div(p, q);
    let x3 = e.mul(x, x2);
    let t = if fuse_ratio {
        let h = e.mulc(x2, -0.5);
        e.fma(x3, ratio, h)
    } else {
        let t = e.mul(x3, ratio);
        e.fmac(x2, -0.5, t)
    };
    let small = e.add(x, t);
    let u = e.addc(x, 1.0);
    // XLA's log of u = 1 + x (`log`) without its subnormal scaling, which never applies (u's smallest positive
    // value is 2^-24), and with its special cases (u <= 0, inf, NaN) only where some lane has one (block routines
    // branch; the inline code selects them always): the same bits, fewer operations
    let big = cephes_logf(e, u, None);
    let big = if ordinary {
        big
    } else {
        let pos = e.cmpc(Cmp::Gt, u, 0.0);
        let fin = e.cmpc(Cmp::Lt, u, f64::INFINITY);
        let ok = e.mand(pos, fin);
        if e.all(ok) { big } else { log_specials(e, u, big, 0.0) }
    };
    let ax = e.abs(x);
    let m = e.cmpc(Cmp::Lt, ax, 0.4142135679721832);
    e.sel(m, small, big)
}

/// XLA:CPU's float32 tanh (Eigen's rational approximation, Horner with FMAs), JAX's bits: the input clamped
/// to ±TANH_CLAMP (where the quotient is exactly ±1), x·P(x²)/Q(x²), and x itself below 0.0004.
const TANH_CLAMP: f64 = 7.99881172180175781;
const TANH_NUM: [f64; 7] = [4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05, 5.12229709037114e-08,
                            -8.60467152213735e-11, 2.00018790482477e-13, -2.76076847742355e-16];
const TANH_DEN: [f64; 4] = [4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04, 1.19825839466702e-06];

#[inline(always)]
pub fn tanh<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let xc = e.clamp(x, -TANH_CLAMP, TANH_CLAMP);
    let x2 = e.mul(xc, xc);
    let p = e.poly(x2, &TANH_NUM);
    let p = e.mul(xc, p);
    let q = e.poly(x2, &TANH_DEN);
    let r = e.div(p, q);
    let ax = e.abs(x);
    let small = e.cmpc(Cmp::Lt, ax, 0.0004);
    e.sel(small, x, r)
}

/// XLA:CPU's float32 logistic, JAX's bits: 1 / (1 + exp(−x)) with `exp` (itself XLA's bit for bit).
#[inline(always)]
pub fn logistic<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let nx = e.neg(x);
    let ex = exp(e, nx);
    let d = e.addc(ex, 1.0);
    let one = e.c(1.0);
    e.div(one, d)
}

/// XLA's e^(x − ln 2) ± e^(−ln 2 − x) for `sinh`/`cosh`: the first exp's last product fused with the sum, as
/// LLVM fuses it (ln 2 as f32).
#[inline(always)]
fn half_exps<L: Lanes>(e: &mut L, x: L::F, minus: bool) -> L::F {
    let nl2 = e.c(-LN2_F32);
    let a = e.add(x, nl2);
    let b = e.sub(nl2, x);
    let (ya, sa) = xla_exp_parts(e, a);
    let eb = exp(e, b);
    let eb = if minus { e.neg(eb) } else { eb };
    e.fma(ya, sa, eb)
}

/// XLA:CPU's float32 sinh, JAX's bits: with e = expm1(x), (e + e/(e + 1))·½ for |x| < 1, else
/// e^(x − ln 2) − e^(−ln 2 − x).
#[inline(always)]
pub fn sinh<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let em = expm1(e, x);
    let den = e.addc(em, 1.0);
    let f = e.div(em, den);
    let s = e.add(em, f);
    let small = e.mulc(s, 0.5);
    let big = half_exps(e, x, true);
    let ax = e.abs(x);
    let m = e.cmpc(Cmp::Lt, ax, 1.0);
    e.sel(m, small, big)
}

/// XLA:CPU's float32 cosh, JAX's bits: e^(x − ln 2) + e^(−ln 2 − x).
#[inline(always)]
pub fn cosh<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    half_exps(e, x, false)
}

/// ln 2 as f32 + f32 (`LN2_F32` is ln 2 rounded to f32).
const LN2_F32: f64 = 0.693147182464599609375;
const LN2_F32_LO: f64 = -1.904654323148236e-09;
/// 2 atanh(s) = 2s + s³·ATANH_P(s²) for |s| <= 3 - 2√2 (Taylor: 2/(2k+3); the next term is below 2^-34 of
/// the sum).
const ATANH_P: [f64; 6] = [2.0 / 3.0, 2.0 / 5.0, 2.0 / 7.0, 2.0 / 9.0, 2.0 / 11.0, 2.0 / 13.0];

/// (hi, lo) with hi + lo = a + b exactly, for |a| >= |b| or a = 0.
#[inline(always)]
fn fast_two_sum<L: Lanes>(e: &mut L, a: L::F, b: L::F) -> (L::F, L::F) {
    let hi = e.add(a, b);
    let d = e.sub(hi, a);
    (hi, e.sub(b, d))
}

/// ln|x| as hi + lo (about 2^-40 relative, except where the s³ tail's f32 rounding shows: near |x| = √2·2^k it
/// is ~2^-30 of the tail-free part) for positive normal `ax` (others: garbage, callers select specials):
/// |x| = 2^k (1 + f) with 1 + f in [√½, √2), ln(1 + f) = 2 atanh(s) with s = f / (2 + f) kept as s_hi + s_lo
/// (the division's residual by fma), k ln 2 as an exact product plus a low part.
#[inline(always)]
fn ln_hi_lo<L: Lanes>(e: &mut L, ax: L::F) -> (L::F, L::F) {
    let (k, f) = log_split(e, ax);
    let d = e.addc(f, 2.0);
    let dm2 = e.addc(d, -2.0);
    let d_lo = e.sub(f, dm2); // exact: the rounding error of f + 2
    let one = e.c(1.0);
    let inv = e.div(one, d);
    let s_hi = e.mul(f, inv);
    let ns = e.neg(s_hi);
    let r = e.fma(ns, d, f);
    let r = e.fma(ns, d_lo, r);
    let s_lo = e.mul(r, inv);
    let z = e.mul(s_hi, s_hi);
    let p = e.poly(z, &ATANH_P);
    let s3 = e.mul(z, s_hi);
    let tail = e.mul(s3, p);
    let two_s_lo = e.add(s_lo, s_lo);
    let tail = e.add(two_s_lo, tail);
    let two_s = e.add(s_hi, s_hi);
    let kf = e.to_float(k);
    let l2 = e.c(LN2_F32);
    let p_hi = e.mul(kf, l2);
    let np_hi = e.neg(p_hi);
    let p_lo = e.fma(kf, l2, np_hi); // exact
    let p_lo = e.fmac(kf, LN2_F32_LO, p_lo);
    // k = 0: p_hi = 0; else |p_hi| >= ln 2 > |2s|
    let (hi, lo) = fast_two_sum(e, p_hi, two_s);
    let lo2 = e.add(p_lo, tail);
    let lo = e.add(lo, lo2);
    fast_two_sum(e, hi, lo)
}

/// pow(x, y) in f32 lanes (hosts with FMA): e^(y ln|x|) with ln|x| as hi + lo (`ln_hi_lo`), the product as
/// hi + lo (fma), `exp`'s reduction of the high part with the low part added to r; then C99's special
/// cases: y = 0 or x = 1 give 1 (NaN beside them included), |x| = 1 with y = ±inf gives 1, x < 0 with a
/// finite non-integer y gives NaN, an odd integer y keeps x's sign (±0, ±inf included).
#[inline(always)]
pub fn pow<L: Lanes>(e: &mut L, x: L::F, y: L::F) -> L::F {
    let ax = e.abs(x);
    let (lh, ll) = ln_hi_lo(e, ax);
    // ln of 0 / inf / NaN (a subnormal |x| compares equal to 0: the kernels read it as zero)
    let zero = e.cmpc(Cmp::Eq, ax, 0.0);
    let lh = e.selc(zero, f64::NEG_INFINITY, lh);
    let inf = e.cmpc(Cmp::Eq, ax, f64::INFINITY);
    let lh = e.selc(inf, f64::INFINITY, lh);
    let nan = e.cmp(Cmp::Unord, ax, ax);
    let lh = e.sel(nan, ax, lh);
    let t_hi = e.mul(y, lh);
    let nt = e.neg(t_hi);
    let t_lo = e.fma(y, lh, nt);
    let t_lo = e.fma(y, ll, t_lo);
    // (t_lo is NaN where t_hi is infinite; beyond |t| = 104 the result is 0 or inf anyway)
    let at = e.abs(t_hi);
    let in_range = e.cmpc(Cmp::Lt, at, 104.0);
    let zero_f = e.c(0.0);
    let t_lo = e.sel(in_range, t_lo, zero_f);
    let tc = e.clamp(t_hi, -104.0, 89.0);
    let (ni, r) = exp_reduce(e, tc);
    let r = e.add(r, t_lo);
    let q = expm1_poly(e, r);
    let m = e.addc(q, 1.0);
    let v = scale2(e, m, ni);
    // y an integer: |y| >= 2^23, or rint(|y|) = |y| (rint by adding 2^23, whose last bit is then the parity)
    let ay = e.abs(y);
    let big = e.cmpc(Cmp::Ge, ay, 8388608.0);
    let sh = e.addc(ay, 8388608.0);
    let n = e.addc(sh, -8388608.0);
    let n = e.sel(big, ay, n);
    let is_int = e.cmp(Cmp::Eq, n, ay);
    let pb = e.sel(big, ay, sh);
    let pb = e.bits(pb);
    let low = e.iandc(pb, 1);
    let odd = e.icmpc(ICmp::Ge, low, 1);
    let below = e.cmpc(Cmp::Lt, ay, 16777216.0);
    let odd = e.mand(odd, below);
    let odd = e.mand(odd, is_int);
    // x's sign bit (-0 and -inf included) with an odd integer y: -v
    let xb = e.bits(x);
    let xneg = e.icmpc(ICmp::Lt, xb, 0);
    let flip = e.mand(xneg, odd);
    let nv = e.neg(v);
    let v = e.sel(flip, nv, v);
    // finite x < 0 with a finite non-integer y: NaN
    let xlt0 = e.cmpc(Cmp::Lt, x, 0.0);
    let x_fin = e.cmpc(Cmp::Lt, ax, f64::INFINITY);
    let y_fin = e.cmpc(Cmp::Lt, ay, f64::INFINITY);
    let neg_fin = e.mand(xlt0, x_fin);
    let neg_fin = e.mand(neg_fin, y_fin);
    let nan_c = e.c(f64::NAN);
    let nan_v = e.sel(is_int, v, nan_c);
    let v = e.sel(neg_fin, nan_v, v);
    // |x| = 1 with y = ±inf, x = 1, y = 0: 1
    let ax1 = e.cmpc(Cmp::Eq, ax, 1.0);
    let y_inf = e.cmpc(Cmp::Eq, ay, f64::INFINITY);
    let one_inf = e.mand(ax1, y_inf);
    let v = e.selc(one_inf, 1.0, v);
    let x1 = e.cmpc(Cmp::Eq, x, 1.0);
    let v = e.selc(x1, 1.0, v);
    let y0 = e.cmpc(Cmp::Eq, y, 0.0);
    e.selc(y0, 1.0, v)
}

/// XLA:CPU's float32 asin (JAX's composition, which XLA keeps): 2·atan2(x, 1 + √((1 − x)(1 + x))), its atan2 the
/// C library's `atan2f` (`atan2` here): JAX's bits.
#[inline(always)]
pub fn asin<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let one = e.c(1.0);
    let a = e.sub(one, x);
    let b = e.add(x, one);
    let p = e.mul(a, b);
    let s = e.sqrt(p);
    let d = e.add(s, one);
    let r = atan2(e, x, d);
    e.add(r, r)
}

/// XLA:CPU's float32 acos (JAX's composition): atan2(√((1 − x)(1 + x)), x) with the C library's `atan2f`
/// (`atan2`): JAX's bits.
#[inline(always)]
pub fn acos<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let one = e.c(1.0);
    let a = e.sub(one, x);
    let b = e.add(x, one);
    let p = e.mul(a, b);
    let s = e.sqrt(p);
    atan2(e, s, x)
}

/// XLA:CPU's float32 erf: x·P(x²)/Q(x²) (its coefficients, Horner by fmas), ±1 from |x| >= 3.8325.
const ERF_P: [f64; 5] =
    [1.1283791065216064, 0.18520832061767578, 0.050955694168806076, 0.0034082909114658833, 0.00022905065270606428];
const ERF_Q: [f64; 7] = [
    1.0, 0.4974692463874817, 0.11098504811525345, 0.01407046988606453, 0.0010179625824093819, 2.354796561121475e-05,
    -1.1791603071742429e-07,
];

/// XLA:CPU's float32 erf, JAX's bits (5.35 ulp at most, measured on 28M points).
#[inline(always)]
pub fn erf<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let x2 = e.mul(x, x);
    let p = e.poly(x2, &ERF_P);
    let num = e.mul(x, p);
    let q = e.poly(x2, &ERF_Q);
    let r = e.div(num, q);
    let one = e.c(1.0);
    let s = e.copysign(one, x);
    let ax = e.abs(x);
    let big = e.cmpc(Cmp::Ge, ax, 3.8325068950653076);
    e.sel(big, s, r)
}

/// XLA:CPU's float32 asinh (JAX's composition), JAX's bits: sign(x)·log1p(|x| + x²/(√(x² + 1) + 1)), or
/// log|x| + ln 2 from |x| >= 2^64 (log and log1p XLA's: `log`, `log1p`).
#[inline(always)]
pub fn asinh<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let ax = e.abs(x);
    let x2 = e.mul(x, x);
    let d = e.addc(x2, 1.0);
    let d = e.sqrt(d);
    let d = e.addc(d, 1.0);
    let t = e.div(x2, d);
    let t = e.add(ax, t);
    let small = log1p(e, t);
    let m = e.cmpc(Cmp::Ge, ax, 18446744073709551616.0);
    // (skipped where no lane needs it: the selected lanes' bits are the same either way)
    let r = if e.any_rare(m) {
        let l = log(e, ax);
        let big = e.addc(l, LN2_F32);
        e.sel(m, big, small)
    } else {
        small
    };
    // sign(x)·r with r >= 0 (±0 at x = ±0)
    e.copysign(r, x)
}

/// XLA:CPU's float32 atanh (JAX's composition), JAX's bits: ½(log1p(x) − log1p(−x)), NaN beyond |x| = 1.
#[inline(always)]
pub fn atanh<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    // |x| < 1 on every lane (block routines test once per vector; the inline code never skips): 1 ± x is then
    // positive and finite for both log1p's
    let ax = e.abs(x);
    let inside = e.cmpc(Cmp::Lt, ax, 1.0);
    let ordinary = e.all(inside);
    let a = log1p_with(e, x, true, ordinary);
    let nx = e.neg(x);
    let b = log1p_with(e, nx, true, ordinary);
    let d = e.sub(a, b);
    let r = e.mulc(d, 0.5);
    let out = e.cmpc(Cmp::Gt, ax, 1.0);
    e.selc(out, f64::NAN, r)
}

/// π/2 rounded to f32.
const PIO2_A: f64 = 1.5707963705062866;

// ------------------------------------------------------------------------------------------------------
// tan with the C library's tanf bits (XLA:CPU calls `tanf` for float32 `tan`).

/// The kernel's odd and even coefficient chains: tan(u) = u + u³(T0 + u²T1 + u⁴T2 + ...) on |u| <= 0.6744
/// (fdlibm's float `tan` kernel, which glibc's `tanf` runs).
const TANF_T: [f64; 13] = [
    3.3333334327e-01, 1.3333334029e-01, 5.3968254477e-02, 2.1869488060e-02, 8.8632395491e-03, 3.5920790397e-03,
    1.4562094584e-03, 5.8804126456e-04, 2.4646313977e-04, 7.8179444245e-05, 7.1407252108e-05, -1.8558637748e-05,
    2.5907305826e-05,
];
/// π/4 as f32 (also the last |x| evaluated without reduction) and the rest of π/4 as f32.
const TANF_PIO4: f64 = 0.78539812564849853515625; // 0x3f490fda
const TANF_PIO4_LO: f64 = 3.7748947079e-08; // 0x33222168
/// From this |u| the kernel evaluates tan(π/4 − |u|) and folds it (0x3f2ca140).
const TANF_FOLD: f64 = 0.6743354797363281;

/// float32 `tan` as glibc 2.36's `tanf` computes it, from the reduction's parts (`math_f64::tanf_reduce`:
/// r = y0 + y1 with y0 = r rounded to f32 and y1 the rounded rest, iy = ±1 by the quadrant's parity), in float
/// steps without fused products: |x| <= π/4 takes (x, 0, 1); below 2^-13 y0 itself (iy = 1) or −1/y0; from
/// 0.6744 the fold u = (π/4 − |y0|) + (π/4_lo − ±y1) (then ±iy(1 − 2·iy·u) if u < 2^-13); w = u + (y + z(s(P + Q)
/// + y) + T0·s) with z = u², s = z·u and the odd/even chains P, Q in z²; the fold's result
/// ±(iy − 2(u − (w²/(w + iy) − r))), else w (iy = 1) or −1/w refined from its 12-bit-truncated parts. One
/// division: numerator and denominator selected. ±inf and NaN give x − x. Checked against the C library on
/// every float32 below 2^23 (0 differences); callers give the C library's value from `tan_limit` on.
#[inline(always)]
pub fn tanf_kernel<L: Lanes>(e: &mut L, x: L::F, y0: L::F, y1: L::F, iy: L::F) -> L::F {
    let ax = e.abs(x);
    let reduced = e.cmpc(Cmp::Gt, ax, TANF_PIO4);
    let zero = e.c(0.0);
    let one = e.c(1.0);
    let y0 = e.sel(reduced, y0, x);
    let y1 = e.sel(reduced, y1, zero);
    let iy = e.sel(reduced, iy, one);
    let odd = e.cmpc(Cmp::Lt, iy, 0.0);
    let ay = e.abs(y0);
    let neg = e.cmpc(Cmp::Lt, y0, 0.0);
    let fold = e.cmpc(Cmp::Ge, ay, TANF_FOLD);
    // the fold: u = (π/4 − |y0|) + (π/4_lo − y1 with y0's sign taken off)
    let ny1 = e.neg(y1);
    let ya = e.sel(neg, ny1, y1);
    let pio4 = e.c(TANF_PIO4);
    let zf = e.sub(pio4, ay);
    let pio4lo = e.c(TANF_PIO4_LO);
    let wf = e.sub(pio4lo, ya);
    let uf = e.add(zf, wf);
    let u = e.sel(fold, uf, y0);
    let y = e.sel(fold, zero, y1);
    let z = e.mul(u, u);
    let w = e.mul(z, z);
    let p = horner_unfused(e, w, &[TANF_T[1], TANF_T[3], TANF_T[5], TANF_T[7], TANF_T[9], TANF_T[11]]);
    let q = horner_unfused(e, w, &[TANF_T[2], TANF_T[4], TANF_T[6], TANF_T[8], TANF_T[10], TANF_T[12]]);
    let q = e.mul(z, q);
    let s = e.mul(z, u);
    let pq = e.add(p, q);
    let t = e.mul(s, pq);
    let t = e.add(t, y);
    let t = e.mul(z, t);
    let r = e.add(y, t);
    let t0s = e.mulc(s, TANF_T[0]);
    let r = e.add(r, t0s);
    let wv = e.add(u, r);
    // one division: w²/(w + iy) (fold), −1/w (odd quadrant), −1/y0 (tiny, odd quadrant)
    let tiny = e.cmpc(Cmp::Lt, ay, 2f64.powi(-13));
    let w2 = e.mul(wv, wv);
    let wpi = e.add(wv, iy);
    let m1 = e.c(-1.0);
    let num = e.sel(fold, w2, m1);
    let den = e.sel(fold, wpi, wv);
    let den = e.sel(tiny, y0, den);
    let quo = e.div(num, den);
    // fold: ±(iy − 2(u − (quo − r)))
    let a = e.sub(quo, r);
    let a = e.sub(u, a);
    let a = e.add(a, a);
    let fv = e.sub(iy, a);
    let nfv = e.neg(fv);
    let fv = e.sel(neg, nfv, fv);
    // fold with u < 2^-13: ±iy·(1 − 2·iy·u)
    let au = e.abs(uf);
    let ftiny = e.cmpc(Cmp::Lt, au, 2f64.powi(-13));
    let ftiny = e.mand(fold, ftiny);
    let iy2 = e.add(iy, iy);
    let t = e.mul(iy2, uf);
    let tv = e.sub(one, t);
    let tv = e.mul(tv, iy);
    let ntv = e.neg(tv);
    let tv = e.sel(neg, ntv, tv);
    // odd quadrant: −1/w from t = a with its low 12 bits cleared and v = r − (w_t − u), w_t likewise
    let wb = e.bits(wv);
    let wb = e.iandc(wb, 0xffff_f000u32 as i32 as i64);
    let wt = e.fbits(wb);
    let v = e.sub(wt, u);
    let v = e.sub(r, v);
    let ab = e.bits(quo);
    let ab = e.iandc(ab, 0xffff_f000u32 as i32 as i64);
    let tt = e.fbits(ab);
    let sv = e.mul(tt, wt);
    let sv = e.add(one, sv);
    let tv2 = e.mul(tt, v);
    let sv = e.add(sv, tv2);
    let sv = e.mul(quo, sv);
    let ov = e.add(tt, sv);
    let res = e.sel(odd, ov, wv);
    let res = e.sel(fold, fv, res);
    let res = e.sel(ftiny, tv, res);
    let tv3 = e.sel(odd, quo, y0);
    let res = e.sel(tiny, tv3, res);
    let fin = e.cmpc(Cmp::Lt, ax, f64::INFINITY);
    let nan = e.sub(x, x);
    e.sel(fin, res, nan)
}

// ------------------------------------------------------------------------------------------------------
// atan, atan2 in f32 lanes.

/// π/4 and π as f32, and π's rest as f32.
const PIO4_HI: f64 = 0.7853981852531433;
const PI_HI: f64 = 3.1415927410125732;
const PI_LO: f64 = -8.742277657347586e-08;

/// fdlibm's atanf (the C library's, which XLA:CPU calls for float32 `atan`: JAX's bits) in float32 steps
/// without fused products (glibc builds it for baseline x86-64): |x| in [0, 7/16), [7/16, 11/16),
/// [11/16, 19/16), [19/16, 39/16), [39/16, 2^25) reduced to t = x, (2x − 1)/(2 + x), (x − 1)/(x + 1),
/// (x − 1.5)/(1 + 1.5x), −1/x (one division here: numerator and denominator selected), atan(t) by its odd and
/// even polynomials, added to atan(0.5), atan(1), atan(1.5) or π/2 as hi + lo; x itself below 2^-29, ±π/2
/// from 2^25. Checked against the C library on all 2^32 float32 (0 differences).
const ATANF_T: [f64; 11] = [
    3.3333334327e-01, -2.0000000298e-01, 1.4285714924e-01, -1.1111110449e-01, 9.0908870101e-02, -7.6918758452e-02,
    6.6610731184e-02, -5.8335702866e-02, 4.9768779427e-02, -3.6531571299e-02, 1.6285819933e-02,
];
const ATANF_HI: [f64; 4] = [4.6364760399e-01, 7.8539812565e-01, 9.8279368877e-01, 1.5707962513e+00];
const ATANF_LO: [f64; 4] = [5.0121582440e-09, 3.7748947079e-08, 3.4473217170e-08, 7.5497894159e-08];

/// c[0] + w·(c[1] + w·(...)) by separate products and sums (no fma).
#[inline(always)]
fn horner_unfused<L: Lanes>(e: &mut L, w: L::F, cs: &[f64]) -> L::F {
    let mut acc = e.c(cs[cs.len() - 1]);
    for &k in cs[..cs.len() - 1].iter().rev() {
        let p = e.mul(w, acc);
        acc = e.addc(p, k);
    }
    acc
}

#[inline(always)]
pub fn atan<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let ax = e.abs(x);
    let m0 = e.cmpc(Cmp::Ge, ax, 0.4375);
    let m1 = e.cmpc(Cmp::Ge, ax, 0.6875);
    let m2 = e.cmpc(Cmp::Ge, ax, 1.1875);
    let m3 = e.cmpc(Cmp::Ge, ax, 2.4375);
    let one = e.c(1.0);
    let two_ax = e.add(ax, ax);
    let n0 = e.sub(two_ax, one);
    let d0 = e.addc(ax, 2.0);
    let n1 = e.sub(ax, one);
    let d1 = e.add(ax, one);
    let n2 = e.addc(ax, -1.5);
    let t15 = e.mulc(ax, 1.5);
    let d2 = e.add(one, t15);
    let num = e.sel(m0, n0, x);
    let num = e.sel(m1, n1, num);
    let num = e.sel(m2, n2, num);
    let num = e.selc(m3, -1.0, num);
    let den = e.sel(m0, d0, one);
    let den = e.sel(m1, d1, den);
    let den = e.sel(m2, d2, den);
    let den = e.sel(m3, ax, den);
    let t = e.div(num, den);
    let z = e.mul(t, t);
    let w = e.mul(z, z);
    let even: [f64; 6] = [ATANF_T[0], ATANF_T[2], ATANF_T[4], ATANF_T[6], ATANF_T[8], ATANF_T[10]];
    let odd: [f64; 5] = [ATANF_T[1], ATANF_T[3], ATANF_T[5], ATANF_T[7], ATANF_T[9]];
    let s1 = horner_unfused(e, w, &even);
    let s1 = e.mul(z, s1);
    let s2 = horner_unfused(e, w, &odd);
    let s2 = e.mul(w, s2);
    let sum = e.add(s1, s2);
    let ts = e.mul(t, sum);
    let small = e.sub(t, ts);
    let hi = e.c(ATANF_HI[0]);
    let hi = e.selc(m1, ATANF_HI[1], hi);
    let hi = e.selc(m2, ATANF_HI[2], hi);
    let hi = e.selc(m3, ATANF_HI[3], hi);
    let lo = e.c(ATANF_LO[0]);
    let lo = e.selc(m1, ATANF_LO[1], lo);
    let lo = e.selc(m2, ATANF_LO[2], lo);
    let lo = e.selc(m3, ATANF_LO[3], lo);
    let u = e.sub(ts, lo);
    let u = e.sub(u, t);
    let big = e.sub(hi, u);
    let big = e.copysign(big, x);
    let r = e.sel(m0, big, small);
    let tiny = e.cmpc(Cmp::Lt, ax, 2f64.powi(-29));
    let r = e.sel(tiny, x, r);
    // from 2^25: ±(atan(inf)hi + lo) in float32 (π/2 rounded), NaN as x + x
    let h3 = e.c(ATANF_HI[3]);
    let l3 = e.c(ATANF_LO[3]);
    let pio2 = e.add(h3, l3);
    let pio2 = e.copysign(pio2, x);
    let huge = e.cmpc(Cmp::Ge, ax, 33554432.0);
    let r = e.sel(huge, pio2, r);
    let nan = e.cmp(Cmp::Unord, x, x);
    let xx = e.add(x, x);
    e.sel(nan, xx, r)
}

/// fdlibm's float `atan2` (the C library's `atan2f`, which XLA:CPU calls for float32 `atan2`, and `asin`/`acos`
/// through it: JAX's bits), in float steps without fused products: z = atanf(|y/x|) (`atan`), or π/2 rounded
/// when |y| is 2^61 times |x|'s exponent and more, 0 when x < 0 is 2^61 times |y|'s; then z with y's sign for
/// x > 0, ±(π − (z − π_lo)) for x < 0; y = ±0 gives y (x > 0) or ±π (x < 0), x = ±0 ±π/2, y = ±inf ±π/2,
/// both infinite ±π/4 or ±3π/4; NaN as x + y. Checked against the C library on 4·10^8 random pairs (also
/// with denormals flushed) and on every pair `asin`/`acos` form (0 differences).
#[inline(always)]
pub fn atan2<L: Lanes>(e: &mut L, y: L::F, x: L::F) -> L::F {
    let q = e.div(y, x);
    let aq = e.abs(q);
    let z = atan(e, aq);
    // exponent difference k = (|y|bits − |x|bits) >> 23
    let ay = e.abs(y);
    let ax = e.abs(x);
    let yb = e.bits(ay);
    let xb = e.bits(ax);
    let k = e.isub(yb, xb);
    let k = e.sshrc(k, 23);
    let steep = e.icmpc(ICmp::Ge, k, 61);
    let z = e.selc(steep, ATAN2_STEEP, z);
    let sx = e.bits(x);
    let xneg = e.icmpc(ICmp::Lt, sx, 0);
    let flat = e.icmpc(ICmp::Lt, k, -60);
    let flat = e.mand(flat, xneg);
    let z = e.selc(flat, 0.0, z);
    let t = e.addc(z, -PI_LO);
    let pi = e.c(PI_HI);
    let pm = e.sub(pi, t);
    let r = e.sel(xneg, pm, z);
    let r = e.copysign(r, y);
    // specials, the C library's precedence last-selected-first
    let pio2 = e.c(PIO2_A);
    let pio2 = e.copysign(pio2, y);
    // zeros by their bits: a subnormal operand is not zero to the C library's tests (it reads them under DAZ too)
    let x0 = e.icmpc(ICmp::Lt, xb, 1);
    let r = e.sel(x0, pio2, r);
    let yinf = e.cmpc(Cmp::Eq, ay, f64::INFINITY);
    let r = e.sel(yinf, pio2, r);
    let xinf = e.cmpc(Cmp::Eq, ax, f64::INFINITY);
    let both = e.mand(xinf, yinf);
    let q4 = e.c(PIO4_HI);
    let q4 = e.selc(xneg, ATAN2_3PIO4, q4);
    let q4 = e.copysign(q4, y);
    let r = e.sel(both, q4, r);
    let y0 = e.icmpc(ICmp::Lt, yb, 1);
    let piy = e.copysign(pi, y);
    let yz = e.sel(xneg, piy, y);
    let r = e.sel(y0, yz, r);
    let nan = e.cmp(Cmp::Unord, x, y);
    let xy = e.add(x, y);
    e.sel(nan, xy, r)
}

/// `atan2`'s π/2 + π_lo/2 rounded to f32 (π/2 as f32) and 3·(π/4 as f32) rounded to f32.
const ATAN2_STEEP: f64 = ((PIO2_A + 0.5 * PI_LO) as f32) as f64;
const ATAN2_3PIO4: f64 = ((3.0 * PIO4_HI) as f32) as f64;

// ------------------------------------------------------------------------------------------------------
// erf_inv: XLA:CPU's float32 computation, operation for operation, so that `random.normal` (u ↦ √2·erf_inv(u))
// matches JAX bit for bit. XLA expands erf_inv into Giles' single-precision polynomial in
// w = -log1p(-x²), its log1p into a Cephes rational function (|t| < √2-1) or log(1 + t), and that log into
// its vectorized Cephes routine; LLVM then contracts each multiply feeding an add into one fma (host with
// FMA). Each `fma` below is one such contraction, each plain mul/add one XLA leaves unfused. (Here rather
// than in `vmath` so that `blockmath` runs it on AVX-512/AVX2 lanes too: the 128-bit inline code was 4.6x
// slower than XLA's 512-bit loop.)

/// Cephes log1p: log1p(t) = t - t²/2 + t³·N(t)/D(t) on |t| < √2 - 1 (highest degree first).
const XLA_LOG1P_N: [f64; 7] = [
    4.5270000862445199635215E-5, 4.9854102823193375972212E-1, 6.5787325942061044846969E0,
    2.9911919328553073277375E1, 6.0949667980987787057556E1, 5.7112963590585538103336E1,
    2.0039553499201281259648E1,
];
const XLA_LOG1P_D: [f64; 7] = [
    1.0, 1.5062909083469192043167E1, 8.3047565967967209469434E1, 2.2176239823732856465394E2,
    3.0909872225312059774938E2, 2.1642788614495947685003E2, 6.0118660497603843919306E1,
];
/// Giles (2010), single precision: erf_inv(x) = x·P(w - 2.5) for w < 5, x·Q(√w - 3) above (highest first).
const GILES_LT5: [f64; 9] = [
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
    -0.00417768164, 0.246640727, 1.50140941,
];
const GILES_GE5: [f64; 9] = [
    -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
    0.00943887047, 1.00167406, 2.83297682,
];

/// XLA's float32 log of `x`: exponent and mantissa in [½, 1), folded into [√½, √2), Cephes polynomial
/// evaluated in three interleaved pieces. Subnormal inputs are clamped to the smallest normal.
#[inline(always)]
fn xla_log<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let tiny = e.c(f32::MIN_POSITIVE as f64);
    let above = e.cmp(Cmp::Gt, x, tiny);
    let xc = e.sel(above, x, tiny);
    let r = cephes_logf(e, xc, None);
    // x <= 0 or NaN → NaN, then 0 → -inf, +inf → +inf.
    let pos = e.cmpc(Cmp::Gt, x, 0.0);
    let nan = e.c(f64::NAN);
    let r = e.sel(pos, r, nan);
    let z = e.cmpc(Cmp::Eq, x, 0.0);
    let r = e.selc(z, f64::NEG_INFINITY, r);
    let inf = e.cmpc(Cmp::Eq, x, f64::INFINITY);
    e.selc(inf, f64::INFINITY, r)
}

/// XLA's float32 log1p: the Cephes rational function for |t| < √2 - 1, else log(1 + t).
#[inline(always)]
fn xla_log1p<L: Lanes>(e: &mut L, t: L::F) -> L::F {
    let u = e.addc(t, 1.0);
    let big = xla_log(e, u);
    let t2 = e.mul(t, t);
    let mut num = e.c(XLA_LOG1P_N[0]);
    for &k in &XLA_LOG1P_N[1..] {
        let kc = e.c(k);
        num = e.fma(num, t, kc);
    }
    let mut den = e.c(XLA_LOG1P_D[0]);
    for &k in &XLA_LOG1P_D[1..] {
        let kc = e.c(k);
        den = e.fma(den, t, kc);
    }
    let ratio = e.div(num, den);
    let t3 = e.mul(t, t2);
    let s = e.mul(t3, ratio);
    let mhalf = e.c(-0.5);
    let s = e.fma(t2, mhalf, s);
    let s = e.add(t, s);
    let at = e.abs(t);
    let small = e.cmpc(Cmp::Lt, at, std::f64::consts::SQRT_2 - 1.0);
    e.sel(small, s, big)
}

/// erf_inv in f32, bit-identical to XLA:CPU (see above); ±inf at ±1, NaN outside [-1, 1]; a NaN operand
/// comes back unchanged (so the NaN's sign does not depend on how a lane type orders `x·(-x)`'s operands).
#[inline(always)]
pub fn erf_inv<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let nx = e.neg(x);
    let t = e.mul(x, nx);
    let l = xla_log1p(e, t);
    let w = e.neg(l);
    let lt5 = e.cmpc(Cmp::Lt, w, 5.0);
    let z_lt = e.addc(w, -2.5);
    // Block lanes all below 5 (all but ~2% of vectors for uniform x) skip the √w branch and the
    // coefficient selects: each lane runs the same operations either way.
    let p = if e.all(lt5) {
        let mut p = e.c(GILES_LT5[0]);
        for &k in &GILES_LT5[1..] {
            let c = e.c(k);
            p = e.fma(p, z_lt, c);
        }
        p
    } else {
        let sw = e.sqrt(w);
        let z_ge = e.addc(sw, -3.0);
        let z = e.sel(lt5, z_lt, z_ge);
        let mut p = {
            let a = e.c(GILES_LT5[0]);
            let b = e.c(GILES_GE5[0]);
            e.sel(lt5, a, b)
        };
        for i in 1..GILES_LT5.len() {
            let a = e.c(GILES_LT5[i]);
            let b = e.c(GILES_GE5[i]);
            let c = e.sel(lt5, a, b);
            p = e.fma(p, z, c);
        }
        p
    };
    let ax = e.abs(x);
    let one = e.cmpc(Cmp::Eq, ax, 1.0);
    let p = e.selc(one, f64::INFINITY, p);
    let r = e.mul(x, p);
    let nan = e.cmp(Cmp::Unord, x, x);
    e.sel(nan, x, r)
}

// ------------------------------------------------------------------------------------------------------
// ndtri: XLA:CPU's float32 computation of `jax.scipy.special.ndtri` (JAX 0.10.2's `_ndtri`: Cephes' three
// rational functions, as float32 coefficients, each `jnp.polyval` a Horner chain from 0·x + c₀), after XLA's
// algebraic simplifier (log(√t) → ½·log t, (P/Q)/z → P/(Q·z)) and LLVM's contraction of every single-use
// multiply feeding an add into one fma. Each `fma` below is one such contraction, each plain mul/add one
// that stays unfused; `xla_log` is XLA's float32 log. NaN operands come back as JAX gives them.

/// Cephes ndtri, p > e⁻²: x/√(2π) = w + w³·P0(w²)/Q0(w²), w = p - ½ (highest degree first).
pub(super) const NDTRI_P0: [f64; 5] = [
    -5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1, 1.39312609387279679503E1,
    -1.23916583867381258016E0,
];
pub(super) const NDTRI_Q0: [f64; 9] = [
    1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
    -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1, 1.59056225126211695515E1,
    -1.18331621121330003142E0,
];
/// p ≤ e⁻², z = √(-2 log p) < 8: x = z - log(z)/z - P1(1/z)/(Q1(1/z)·z).
pub(super) const NDTRI_P1: [f64; 9] = [
    4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1, 4.40805073893200834700E1,
    1.46849561928858024014E1, 2.18663306850790267539E0, -1.40256079171354495875E-1, -3.50424626827848203418E-2,
    -8.57456785154685413611E-4,
];
pub(super) const NDTRI_Q1: [f64; 9] = [
    1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1, 1.50425385692907503408E1,
    2.50464946208309415979E0, -1.42182922854787788574E-1, -3.80806407691578277194E-2, -9.33259480895457427372E-4,
];
/// z ≥ 8 (p < e⁻³²): the same form with P2/Q2.
pub(super) const NDTRI_P2: [f64; 9] = [
    3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0, 1.33303460815807542389E0,
    2.01485389549179081538E-1, 1.23716634817820021358E-2, 3.01581553508235416007E-4, 2.65806974686737550832E-6,
    6.23974539184983293730E-9,
];
pub(super) const NDTRI_Q2: [f64; 9] = [
    1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0, 2.16236993594496635890E-1,
    1.34204006088543189037E-2, 3.28014464682127739104E-4, 2.89247864745380683936E-6, 6.79019408009981274425E-9,
];

/// `jnp.polyval(cs, x)` as XLA:CPU computes it: (0·x + c₀), then fma(acc, x, cₖ). `zx` is the shared 0·x
/// (one unfused multiply XLA computes once per argument); it equals 0 wherever x is finite.
#[inline(always)]
fn xla_polyval<L: Lanes>(e: &mut L, x: L::F, zx: L::F, cs: &[f64]) -> L::F {
    let c0 = e.c(cs[0]);
    let mut acc = e.add(zx, c0);
    for &k in &cs[1..] {
        let kc = e.c(k);
        acc = e.fma(acc, x, kc);
    }
    acc
}

/// ndtri's central branch (y > e⁻²): -(w + w³·P0(w²)/Q0(w²))·√(2π), w = y - ½ (`ndtri` flips the sign
/// outside the upper range, as for the tails).
#[inline(always)]
fn ndtri_center<L: Lanes>(e: &mut L, y: L::F) -> L::F {
    let w = e.addc(y, -0.5);
    let ww = e.mul(w, w);
    let www = e.mul(w, ww);
    let zero = e.c(0.0);
    let zww = e.mul(zero, ww);
    let p0 = xla_polyval(e, ww, zww, &NDTRI_P0);
    let q0 = xla_polyval(e, ww, zww, &NDTRI_Q0);
    let r = e.div(p0, q0);
    let center = e.fma(www, r, w);
    e.mulc(center, -2.5066282749176025)
}

/// ndtri's two tails (y ≤ e⁻²): z = √(-2 log y), then P1/Q1 below z = 8 and P2/Q2 from there.
#[inline(always)]
fn ndtri_tail<L: Lanes>(e: &mut L, y: L::F) -> L::F {
    let one = e.c(1.0);
    let zero = e.c(0.0);
    // Both logs are `xla_log` without its special-case selects: every lane whose result `ndtri` keeps has
    // y in [2⁻¹²⁶, e⁻²] and so t = -2·log y in [4, 175], positive normals where `xla_log` is `cephes_logf`
    // (other lanes become ±inf or NaN later whatever their tail value).
    let ly = cephes_logf(e, y, None);
    let t = e.mulc(ly, -2.0);
    let z = e.sqrt(t);
    let lt = cephes_logf(e, t, None);
    let lz = e.mulc(lt, 0.5);
    let lzz = e.div(lz, z);
    let first = e.sub(z, lzz);
    let iz = e.div(one, z);
    let ziz = e.mul(zero, iz);
    let p1 = xla_polyval(e, iz, ziz, &NDTRI_P1);
    let q1 = xla_polyval(e, iz, ziz, &NDTRI_Q1);
    let q1z = e.mul(q1, z);
    let s1 = e.div(p1, q1z);
    let near = e.sub(first, s1);
    let ge8 = e.cmpc(Cmp::Ge, z, 8.0);
    // z ≥ 8 needs p < e⁻³²: block lanes skip it unless some lane is there.
    if !e.any(ge8) {
        return near;
    }
    let p2 = xla_polyval(e, iz, ziz, &NDTRI_P2);
    let q2 = xla_polyval(e, iz, ziz, &NDTRI_Q2);
    let q2z = e.mul(q2, z);
    let s2 = e.div(p2, q2z);
    let far = e.sub(first, s2);
    e.sel(ge8, far, near)
}

/// ndtri in f32, bit-identical to XLA:CPU's `jax.scipy.special.ndtri` (see above): -inf at 0 (and at
/// subnormals), +inf at 1, NaN outside [0, 1] (with XLA's bits).
#[inline(always)]
pub fn ndtri<L: Lanes>(e: &mut L, p: L::F) -> L::F {
    // XLA:CPU runs with denormals as zero: a subnormal p is 0 (so -inf).
    let ap = e.abs(p);
    let sub = e.cmpc(Cmp::Lt, ap, f32::MIN_POSITIVE as f64);
    let p = e.selc(sub, 0.0, p);
    let upper = e.cmpc(Cmp::Gt, p, 0.8646647334098816);
    let one = e.c(1.0);
    let q = e.sub(one, p);
    let y = e.sel(upper, q, p);
    let y0 = e.cmpc(Cmp::Eq, y, 0.0);
    let y = e.selc(y0, 0.5, y);
    let center = ndtri_center(e, y);
    let tail = ndtri_tail(e, y);
    let mid = e.cmpc(Cmp::Gt, y, 0.1353352814912796);
    let x = e.sel(mid, center, tail);
    // Outside [0, 1] and NaN: XLA's log gives the NaN with every bit set, which the final negation turns
    // into 0x7fffffff below the upper branch.
    let ge0 = e.cmpc(Cmp::Ge, p, 0.0);
    let le1 = e.cmp(Cmp::Ge, one, p);
    let inside = e.mand(ge0, le1);
    let pb = e.bits(p);
    let zb = e.iandc(pb, 0);
    let ones = e.iaddc(zb, -1);
    let nan = e.fbits(ones);
    let x = e.sel(inside, x, nan);
    let nx = e.neg(x);
    let x = e.sel(upper, x, nx);
    let is1 = e.cmpc(Cmp::Eq, p, 1.0);
    let x = e.selc(is1, f64::INFINITY, x);
    let is0 = e.cmpc(Cmp::Eq, p, 0.0);
    e.selc(is0, f64::NEG_INFINITY, x)
}
