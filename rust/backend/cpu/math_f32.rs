//! The float32 math algorithms computed in f32 lanes (`exp`, `exp2`, `expm1`, `log`, `log1p`, `tanh`,
//! `logistic`, `erf`), written once against `Lanes`: the operations a lane type offers. Two kinds of code
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

/// The operations of one float32 lane type (`F`), its i32 lanes (`I`) and its lane masks (`M`).
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

#[inline(always)]
pub fn exp<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    // Outside [-104, 89] the result is 0 or inf; clamping keeps the reduction exact and NaN passes through.
    let xc = e.clamp(x, -104.0, 89.0);
    let (ni, r) = exp_reduce(e, xc);
    let q = expm1_poly(e, r);
    let y = e.addc(q, 1.0);
    scale2(e, y, ni)
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

#[inline(always)]
pub fn expm1<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let xc = e.clamp(x, -18.0, 89.0);
    let (ni, r) = exp_reduce(e, xc);
    let q = expm1_poly(e, r);
    // expm1(x) = 2^n (q + 1) - 1 = 2 * (t q + (t - 1/2)) with t = 2^(n-1) (no overflow at n = 128).
    let nm1 = e.iaddc(ni, -1);
    let t = pow2i(e, nm1);
    let th = e.addc(t, -0.5);
    let y = e.fma(t, q, th);
    let y = e.mulc(y, 2.0);
    tiny_passthrough(e, x, y, 2f64.powi(-25))
}

/// musl logf/log1pf polynomial: Lg(s) with |(log(1+s)-log(1-s))/s - Lg(s)| < 2^-34.24.
const LG: [f64; 4] = [0.66666662693, 0.40000972152, 0.28498786688, 0.24279078841];
const LN2_HI32: f64 = 6.9313812256e-01;
const LN2_LO32: f64 = 9.0580006145e-06;

/// log(1 + f) - f + hfsq pieces: returns s*(hfsq + R) and hfsq for f in [√½-1, √2-1].
#[inline(always)]
fn log_kernel<L: Lanes>(e: &mut L, f: L::F) -> (L::F, L::F) {
    let two = e.addc(f, 2.0);
    let s = e.div(f, two);
    let z = e.mul(s, s);
    let w = e.mul(z, z);
    let lg4 = e.c(LG[3]);
    let lg2 = e.c(LG[1]);
    let t1 = e.fma(w, lg4, lg2);
    let t1 = e.mul(w, t1);
    let lg3 = e.c(LG[2]);
    let lg1 = e.c(LG[0]);
    let t2 = e.fma(w, lg3, lg1);
    let t2 = e.mul(z, t2);
    let rr = e.add(t2, t1);
    let ff = e.mul(f, f);
    let hfsq = e.mulc(ff, 0.5);
    let hr = e.add(hfsq, rr);
    (e.mul(s, hr), hfsq)
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

#[inline(always)]
pub fn log<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    // Denormals: scale by 2^23 first.
    let den = e.cmpc(Cmp::Lt, x, f32::MIN_POSITIVE as f64);
    let xs = e.mulc(x, 8388608.0);
    let xs = e.sel(den, xs, x);
    let (k, f) = log_split(e, xs);
    let kf = e.to_float(k);
    let adj = e.c(-23.0);
    let zero = e.c(0.0);
    let adj = e.sel(den, adj, zero);
    let dk = e.add(kf, adj);
    let (sr, hfsq) = log_kernel(e, f);
    // s*(hfsq+R) + dk*ln2_lo - hfsq + f + dk*ln2_hi
    let r = e.fmac(dk, LN2_LO32, sr);
    let r = e.sub(r, hfsq);
    let r = e.add(r, f);
    let r = e.fmac(dk, LN2_HI32, r);
    log_specials(e, x, r, 0.0)
}

#[inline(always)]
pub fn log1p<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let u = e.addc(x, 1.0);
    let (k, fk) = log_split(e, u);
    // c = (k >= 2 ? 1 - (u - x) : x - (u - 1)) / u for k < 25, else 0: the rounding error of 1 + x.
    let ux = e.sub(u, x);
    let one = e.c(1.0);
    let c_hi = e.sub(one, ux);
    let u1 = e.addc(u, -1.0);
    let c_lo = e.sub(x, u1);
    let kge2 = e.icmpc(ICmp::Ge, k, 2);
    let c = e.sel(kge2, c_hi, c_lo);
    let c = e.div(c, u);
    let klt25 = e.icmpc(ICmp::Lt, k, 25);
    let zero = e.c(0.0);
    let c = e.sel(klt25, c, zero);
    // √½ - 1 <= x < √2 - 1: k = 0, c = 0, f = x (no rounding of 1 + x).
    let ge = e.cmpc(Cmp::Ge, x, -0.29289321881);
    let lt = e.cmpc(Cmp::Lt, x, 0.41421356237);
    let small = e.mand(ge, lt);
    let f = e.sel(small, x, fk);
    let c = e.sel(small, zero, c);
    let kf = e.to_float(k);
    let dk = e.sel(small, zero, kf);
    let (sr, hfsq) = log_kernel(e, f);
    // s*(hfsq+R) + (dk*ln2_lo + c) - hfsq + f + dk*ln2_hi
    let lo = e.fmac(dk, LN2_LO32, c);
    let r = e.add(sr, lo);
    let r = e.sub(r, hfsq);
    let r = e.add(r, f);
    let r = e.fmac(dk, LN2_HI32, r);
    let r = log_specials(e, x, r, -1.0);
    tiny_passthrough(e, x, r, 2f64.powi(-25))
}

#[inline(always)]
pub fn tanh<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let ax = e.abs(x);
    let two_ax = e.add(ax, ax);
    let em = expm1(e, two_ax);
    let den = e.addc(em, 2.0);
    let t = e.div(em, den);
    let big = e.cmpc(Cmp::Gt, ax, 9.1);
    let t = e.selc(big, 1.0, t);
    e.copysign(t, x)
}

#[inline(always)]
pub fn logistic<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let ax = e.abs(x);
    let nax = e.neg(ax);
    let ex = exp(e, nax);
    let d = e.addc(ex, 1.0);
    let one = e.c(1.0);
    let pos = e.div(one, d);
    let neg = e.div(ex, d);
    let m = e.cmpc(Cmp::Lt, x, 0.0);
    e.sel(m, neg, pos)
}

/// erf(x) = x + x·P(x²) on |x| < 1.25 (degree 8 in x², relative fit error 2e-11).
const ERF_SMALL: [f64; 9] = [
    0.12837916612625122, -0.37612637877464294, 0.11283786594867706, -0.026865791529417038, 0.005222649779170752,
    -0.0008522389107383788, 0.00011756037565646693, -1.2869926649727859e-05, 8.38302469219343e-07,
];
/// log(erfc(t)) = Q(t - 2.59) on 1.25 <= t < 3.93 (degree 10, absolute fit error 2e-9).
const ERF_LARGE: [f64; 11] = [
    -8.296210289001465, -5.522839069366455, -0.9467231631278992, -0.010111527517437935, 0.0019851133693009615,
    -0.00038135770591907203, 6.935229612281546e-05, -1.1623111277003773e-05, 1.6747486597523675e-06,
    -1.1415279743687279e-07, -2.022323464245801e-08,
];

/// erf in f32: a polynomial below 1.25, 1 - exp(Q(|x|)) up to 3.93 (Chebyshev fits made with NumPy/SciPy
/// in float64, coefficients rounded to f32), ±1 beyond.
#[inline(always)]
pub fn erf<L: Lanes>(e: &mut L, x: L::F) -> L::F {
    let a = e.abs(x);
    let s = e.mul(a, a);
    let p = e.poly(s, &ERF_SMALL);
    let small = e.fma(a, p, a);
    // Lanes outside [1.25, 3.93] are selected away below; clamping keeps their exp away from denormals
    // (microcode assists) and NaN.
    let ac = e.clamp(a, 1.25, 3.93);
    let u = e.addc(ac, -2.59);
    let q = e.poly(u, &ERF_LARGE);
    let ex = exp(e, q);
    let one = e.c(1.0);
    let big = e.sub(one, ex);
    let m_small = e.cmpc(Cmp::Lt, a, 1.25);
    let r = e.sel(m_small, small, big);
    let m_one = e.cmpc(Cmp::Ge, a, 3.93);
    let r = e.selc(m_one, 1.0, r);
    e.copysign(r, x)
}
