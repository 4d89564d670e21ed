//! `Two<L>`: two vectors of a lane type `L` as one lane type, every operation applied to the first vector
//! and then to the second. The float64 block routines run their functions on such pairs: a function is a
//! few long chains of dependent operations (tanh's two nine-step Horner chains into a division, exp's
//! polynomial into a division into four products), and one vector at a time leaves the core waiting on
//! each chain's latency once the scheduler is full of it; with two independent chains side by side in
//! program order it overlaps them (XLA:CPU's loops take two vectors per iteration for the same reason).
//! Each lane sees exactly the operations it saw alone, so its bits are unchanged.
// The x86 kernels are cfg-gated out elsewhere: what only they use is dead there, not wrong.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_mut, unused_variables, unused_macros, unreachable_code))]
use super::math_f32::{Cmp, ICmp, Lanes};
use super::math_f64::Lanes64;

pub struct Two<L>(pub L);

impl<L: Lanes> Lanes for Two<L> {
    type F = (L::F, L::F);
    type I = (L::I, L::I);
    type M = (L::M, L::M);
    #[inline(always)]
    fn c(&mut self, v: f64) -> Self::F {
        let a = self.0.c(v);
        (a, a)
    }
    #[inline(always)]
    fn add(&mut self, a: Self::F, b: Self::F) -> Self::F {
        (self.0.add(a.0, b.0), self.0.add(a.1, b.1))
    }
    #[inline(always)]
    fn sub(&mut self, a: Self::F, b: Self::F) -> Self::F {
        (self.0.sub(a.0, b.0), self.0.sub(a.1, b.1))
    }
    #[inline(always)]
    fn mul(&mut self, a: Self::F, b: Self::F) -> Self::F {
        (self.0.mul(a.0, b.0), self.0.mul(a.1, b.1))
    }
    #[inline(always)]
    fn div(&mut self, a: Self::F, b: Self::F) -> Self::F {
        (self.0.div(a.0, b.0), self.0.div(a.1, b.1))
    }
    #[inline(always)]
    fn fma(&mut self, a: Self::F, b: Self::F, c: Self::F) -> Self::F {
        (self.0.fma(a.0, b.0, c.0), self.0.fma(a.1, b.1, c.1))
    }
    #[inline(always)]
    fn abs(&mut self, x: Self::F) -> Self::F {
        (self.0.abs(x.0), self.0.abs(x.1))
    }
    #[inline(always)]
    fn neg(&mut self, x: Self::F) -> Self::F {
        (self.0.neg(x.0), self.0.neg(x.1))
    }
    #[inline(always)]
    fn cmp(&mut self, cc: Cmp, a: Self::F, b: Self::F) -> Self::M {
        (self.0.cmp(cc, a.0, b.0), self.0.cmp(cc, a.1, b.1))
    }
    #[inline(always)]
    fn icmpc(&mut self, cc: ICmp, a: Self::I, c: i64) -> Self::M {
        (self.0.icmpc(cc, a.0, c), self.0.icmpc(cc, a.1, c))
    }
    #[inline(always)]
    fn mand(&mut self, a: Self::M, b: Self::M) -> Self::M {
        (self.0.mand(a.0, b.0), self.0.mand(a.1, b.1))
    }
    #[inline(always)]
    fn sel(&mut self, m: Self::M, a: Self::F, b: Self::F) -> Self::F {
        (self.0.sel(m.0, a.0, b.0), self.0.sel(m.1, a.1, b.1))
    }
    #[inline(always)]
    fn bits(&mut self, x: Self::F) -> Self::I {
        (self.0.bits(x.0), self.0.bits(x.1))
    }
    #[inline(always)]
    fn fbits(&mut self, i: Self::I) -> Self::F {
        (self.0.fbits(i.0), self.0.fbits(i.1))
    }
    #[inline(always)]
    fn iaddc(&mut self, a: Self::I, c: i64) -> Self::I {
        (self.0.iaddc(a.0, c), self.0.iaddc(a.1, c))
    }
    #[inline(always)]
    fn isub(&mut self, a: Self::I, b: Self::I) -> Self::I {
        (self.0.isub(a.0, b.0), self.0.isub(a.1, b.1))
    }
    #[inline(always)]
    fn iandc(&mut self, a: Self::I, c: i64) -> Self::I {
        (self.0.iandc(a.0, c), self.0.iandc(a.1, c))
    }
    #[inline(always)]
    fn shlc(&mut self, a: Self::I, n: u32) -> Self::I {
        (self.0.shlc(a.0, n), self.0.shlc(a.1, n))
    }
    #[inline(always)]
    fn sshrc(&mut self, a: Self::I, n: u32) -> Self::I {
        (self.0.sshrc(a.0, n), self.0.sshrc(a.1, n))
    }
    #[inline(always)]
    fn to_float(&mut self, i: Self::I) -> Self::F {
        (self.0.to_float(i.0), self.0.to_float(i.1))
    }
    #[inline(always)]
    fn copysign(&mut self, a: Self::F, s: Self::F) -> Self::F {
        (self.0.copysign(a.0, s.0), self.0.copysign(a.1, s.1))
    }
    #[inline(always)]
    fn sqrt(&mut self, x: Self::F) -> Self::F {
        (self.0.sqrt(x.0), self.0.sqrt(x.1))
    }
    #[inline(always)]
    fn floor(&mut self, x: Self::F) -> Self::F {
        (self.0.floor(x.0), self.0.floor(x.1))
    }
    // A branch is skipped only when neither vector needs it (or taken whole only when both do): as for
    // one vector, skipping changes no selected lane.
    #[inline(always)]
    fn any(&mut self, m: Self::M) -> bool {
        self.0.any(m.0) || self.0.any(m.1)
    }
    #[inline(always)]
    fn any_rare(&mut self, m: Self::M) -> bool {
        self.0.any_rare(m.0) || self.0.any_rare(m.1)
    }
    #[inline(always)]
    fn all(&mut self, m: Self::M) -> bool {
        self.0.all(m.0) && self.0.all(m.1)
    }
    // `L`'s own versions of the one-step helpers (a lane type may implement one differently, e.g. `clamp`).
    #[inline(always)]
    fn addc(&mut self, a: Self::F, c: f64) -> Self::F {
        (self.0.addc(a.0, c), self.0.addc(a.1, c))
    }
    #[inline(always)]
    fn mulc(&mut self, a: Self::F, c: f64) -> Self::F {
        (self.0.mulc(a.0, c), self.0.mulc(a.1, c))
    }
    #[inline(always)]
    fn fmac(&mut self, a: Self::F, b: f64, c: Self::F) -> Self::F {
        (self.0.fmac(a.0, b, c.0), self.0.fmac(a.1, b, c.1))
    }
    #[inline(always)]
    fn cmpc(&mut self, cc: Cmp, a: Self::F, c: f64) -> Self::M {
        (self.0.cmpc(cc, a.0, c), self.0.cmpc(cc, a.1, c))
    }
    #[inline(always)]
    fn selc(&mut self, m: Self::M, a: f64, b: Self::F) -> Self::F {
        (self.0.selc(m.0, a, b.0), self.0.selc(m.1, a, b.1))
    }
    #[inline(always)]
    fn clamp(&mut self, x: Self::F, lo: f64, hi: f64) -> Self::F {
        (self.0.clamp(x.0, lo, hi), self.0.clamp(x.1, lo, hi))
    }
}

impl<L: Lanes64> Lanes64 for Two<L> {
    #[inline(always)]
    fn nearest(&mut self, x: Self::F) -> Self::F {
        (self.0.nearest(x.0), self.0.nearest(x.1))
    }
    #[inline(always)]
    fn mor(&mut self, a: Self::M, b: Self::M) -> Self::M {
        (self.0.mor(a.0, b.0), self.0.mor(a.1, b.1))
    }
    #[inline(always)]
    fn ushrc(&mut self, a: Self::I, n: u32) -> Self::I {
        (self.0.ushrc(a.0, n), self.0.ushrc(a.1, n))
    }
    #[inline(always)]
    fn trunc(&mut self, x: Self::F) -> Self::F {
        (self.0.trunc(x.0), self.0.trunc(x.1))
    }
    #[inline(always)]
    fn maxc(&mut self, a: Self::F, c: f64) -> Self::F {
        (self.0.maxc(a.0, c), self.0.maxc(a.1, c))
    }
    #[inline(always)]
    fn minc(&mut self, a: Self::F, c: f64) -> Self::F {
        (self.0.minc(a.0, c), self.0.minc(a.1, c))
    }
}
