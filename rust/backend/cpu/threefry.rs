//! Threefry-2x32 at full SIMD width: where a kernel's body holds the hash (as `cranax._prng.threefry2x32`
//! composes it: 20 rounds of `a += b; b = rotl(b, r) ^ a` on uint32 with a key injection after every group
//! of four), strip mode (`loop_plan`) runs its rounds through a block routine compiled for AVX-512 (16 lanes,
//! `vprold`) or AVX2 (8 lanes, shifts), instead of Cranelift's 4 lanes and three instructions per rotate.
//!
//! Why: the hash is most of every sampler's time (68% of `random.poisson(lam=4)`), and it is all integer
//! additions, xors and rotates, which the wider lanes run 4x as many of per instruction.
//!
//! The routine computes the same 32-bit integer operations as the inline code, so every path (AVX-512,
//! AVX2, the scalar tail, Cranelift's vectors) gives the same bits. It is recognized from the kernel body,
//! not named in the IR: the GPU backend and the inline path keep compiling the composition, and a body
//! that only looks like a hash in part is left alone. Each equation matched is one the routine computes
//! (`a2 = a + b`, `b2 = xor(a2, or(shl(b, r), shr(b, 32 - r)))`, `a' = a + inj`), so whichever instructions
//! a match picks, the routine's outputs equal theirs.
// The x86 kernels are cfg-gated out elsewhere: what only they use is dead there, not wrong.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_mut, unused_variables, unused_macros, unreachable_code))]
use std::collections::HashMap;

use crate::ir::{BinaryOp, DType, Scalar};
use crate::plan::{KOp, Kernel};

use super::simd;

/// Threefry-2x32's rotations: groups 0, 2, 4 use the first row, groups 1 and 3 the second.
pub const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];

/// The symbol kernels import the routine by.
pub const SYMBOL: &str = "cranax_block_threefry2x32";

/// One hash found in a kernel body (instruction indices).
#[derive(Debug, Clone, PartialEq)]
pub struct Hash {
    /// Round 1's operands: the counters after the first key injection.
    pub a0: usize,
    pub b0: usize,
    /// The values added after each group of four rounds: `[a after group 0, b after group 0, a after 1, ...]`.
    pub inj: [usize; 10],
    /// The values after the last injection (what the routine outputs).
    pub a_out: usize,
    pub b_out: usize,
    /// Bit `j`: `inj[j]` is the same at every point (a key: computed once per strip, not per point).
    pub uniform: u16,
}

/// The routine: for `i < n`, runs the 20 rounds on `(a[i], b[i])` in place, adding after group `g` the
/// values `inj[2g * n + i]` (to `a`) and `inj[(2g + 1) * n + i]` (to `b`); where bit `j` of `uniform` is set,
/// row `j` holds one value, at `inj[j * n]`, added at every point.
pub type HashFn = unsafe extern "C" fn(*mut u32, *mut u32, *const u32, u64, u64);

fn const_u32(k: &Kernel, i: usize) -> Option<u32> {
    match k.body.get(i)?.op {
        KOp::Const { value: Scalar::Int(v) } => Some(v as u32),
        _ => None,
    }
}

fn binary(k: &Kernel, i: usize, want: BinaryOp) -> Option<(usize, usize)> {
    let ins = k.body.get(i)?;
    match ins.op {
        KOp::Binary { op, a, b } if op == want && ins.dtype == DType::U32 => Some((a, b)),
        _ => None,
    }
}

/// `i` is `rotl(x, r)` as `or(shl(x, r), shr(x, 32 - r))` (either order): `(x, r)`.
fn rotl(k: &Kernel, i: usize) -> Option<(usize, u32)> {
    let (p, q) = binary(k, i, BinaryOp::Or)?;
    for (s, t) in [(p, q), (q, p)] {
        let (Some((x, c)), Some((y, d))) = (binary(k, s, BinaryOp::ShiftLeft), binary(k, t, BinaryOp::ShiftRightLogical))
        else {
            continue;
        };
        let (Some(c), Some(d)) = (const_u32(k, c), const_u32(k, d)) else { continue };
        if x == y && (1..32).contains(&c) && c + d == 32 {
            return Some((x, c));
        }
    }
    None
}

/// The other operand of `i = add(x, other)` (either order).
fn add_other(k: &Kernel, i: usize, x: usize) -> Option<usize> {
    let (p, q) = binary(k, i, BinaryOp::Add)?;
    if p == x {
        Some(q)
    } else if q == x {
        Some(p)
    } else {
        None
    }
}

/// One round: `a2 = a + b`, `b2 = xor(a2, rotl(b, r))`.
#[derive(Debug, Clone, Copy)]
struct Round {
    a: usize,
    b: usize,
    r: u32,
    a2: usize,
    b2: usize,
}

fn round_at(k: &Kernel, i: usize) -> Option<Round> {
    let (p, q) = binary(k, i, BinaryOp::Xor)?;
    for (s, t) in [(p, q), (q, p)] {
        let Some((x, r)) = rotl(k, t) else { continue };
        if let Some(a) = add_other(k, s, x) {
            return Some(Round { a, b: x, r, a2: s, b2: i });
        }
    }
    None
}

/// Values that are the same at every point of the domain: constants, loads that never move (stride 0 on
/// every axis), and operations on those.
pub fn uniform_values(k: &Kernel) -> Vec<bool> {
    let mut uni = vec![false; k.body.len()];
    for (i, ins) in k.body.iter().enumerate() {
        uni[i] = match &ins.op {
            KOp::Const { .. } => true,
            KOp::Load { input } => k.inputs.get(*input).is_some_and(|inp| inp.strides.iter().all(|&s| s == 0)),
            KOp::Iota { .. } => false,
            op => simd::operands(op).iter().all(|&j| j < i && uni[j]),
        };
    }
    uni
}

/// The hashes among the `live` instructions of `k`, in body order of their outputs.
pub fn find(k: &Kernel, live: &[bool]) -> Vec<Hash> {
    let rounds: Vec<Round> =
        (0..k.body.len()).filter(|&i| live.get(i) == Some(&true)).filter_map(|i| round_at(k, i)).collect();
    if rounds.len() < 20 {
        return Vec::new();
    }
    let by_operands: HashMap<(usize, usize, u32), Round> = rounds.iter().map(|r| ((r.a, r.b, r.r), *r)).collect();
    let uni = uniform_values(k);
    let mut used = vec![false; k.body.len()];
    let mut out = Vec::new();
    for start in rounds.iter().filter(|r| r.r == ROTATIONS[0][0]) {
        if used[start.b2] {
            continue;
        }
        if let Some(h) = follow(k, live, start, &rounds, &by_operands, &uni) {
            // (A chain's later groups also start with rotation 13: they are inside this one.)
            for r in &rounds {
                if r.b2 > start.b2 && r.b2 < h.b_out.max(h.a_out) {
                    used[r.b2] = true;
                }
            }
            out.push(h);
        }
    }
    out.sort_by_key(|h| h.a_out.max(h.b_out));
    out
}

fn follow(
    k: &Kernel, live: &[bool], start: &Round, rounds: &[Round], by_operands: &HashMap<(usize, usize, u32), Round>,
    uni: &[bool],
) -> Option<Hash> {
    let mut cur = (start.a, start.b);
    let mut inj = [0usize; 10];
    for g in 0..5 {
        for &r in &ROTATIONS[g % 2] {
            let next = by_operands.get(&(cur.0, cur.1, r))?;
            cur = (next.a2, next.b2);
        }
        if g < 4 {
            // The next group's first round adds the injected values to its operands.
            let r0 = ROTATIONS[(g + 1) % 2][0];
            let next = rounds.iter().find(|n| {
                n.r == r0 && add_other(k, n.a, cur.0).is_some() && add_other(k, n.b, cur.1).is_some()
            })?;
            inj[2 * g] = add_other(k, next.a, cur.0)?;
            inj[2 * g + 1] = add_other(k, next.b, cur.1)?;
            cur = (next.a, next.b);
        } else {
            let last = |x: usize, not: usize| {
                (x + 1..k.body.len()).find_map(|i| {
                    let o = add_other(k, i, x).filter(|&o| o != not && live.get(i) == Some(&true))?;
                    Some((i, o))
                })
            };
            let (a_out, ia) = last(cur.0, cur.1)?;
            let (b_out, ib) = last(cur.1, cur.0)?;
            inj[8] = ia;
            inj[9] = ib;
            let mut uniform = 0u16;
            for (j, &v) in inj.iter().enumerate() {
                if uni.get(v) == Some(&true) {
                    uniform |= 1 << j;
                }
            }
            return Some(Hash { a0: start.a, b0: start.b, inj, a_out, b_out, uniform });
        }
    }
    None
}

/// The hash on scalars (the reference the routines and tests check against, and the routines' tails).
#[inline(always)]
pub fn hash_one(mut a: u32, mut b: u32, inj: impl Fn(usize) -> u32) -> (u32, u32) {
    for g in 0..5 {
        for &r in &ROTATIONS[g % 2] {
            a = a.wrapping_add(b);
            b = b.rotate_left(r) ^ a;
        }
        a = a.wrapping_add(inj(2 * g));
        b = b.wrapping_add(inj(2 * g + 1));
    }
    (a, b)
}

/// # Safety
/// `a`, `b` hold `n` values, `inj` the rows `HashFn` describes.
unsafe fn scalar_range(a: *mut u32, b: *mut u32, inj: *const u32, n: usize, uniform: u64, from: usize) {
    for i in from..n {
        let (x, y) = hash_one(*a.add(i), *b.add(i), |j| {
            if uniform >> j & 1 == 1 {
                *inj.add(j * n)
            } else {
                *inj.add(j * n + i)
            }
        });
        *a.add(i) = x;
        *b.add(i) = y;
    }
}

/// The scalar routine (every host; tests compare the vector ones with it).
///
/// # Safety
/// As `HashFn`.
#[cfg(test)]
pub unsafe extern "C" fn hash_scalar(a: *mut u32, b: *mut u32, inj: *const u32, n: u64, uniform: u64) {
    scalar_range(a, b, inj, n as usize, uniform, 0)
}

/// The routine for this host's block lanes (`blockmath::isa`), or `None` (kernels then hash inline).
pub fn routine() -> Option<HashFn> {
    #[cfg(target_arch = "x86_64")]
    {
        use super::blockmath::Isa;
        match super::blockmath::isa()? {
            Isa::Avx512 => Some(x86::AVX512),
            Isa::Avx2 => Some(x86::AVX2),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Every routine this host can run, by name (tests).
#[cfg(test)]
pub fn all_routines() -> Vec<(&'static str, HashFn)> {
    let mut v: Vec<(&'static str, HashFn)> = vec![("scalar", hash_scalar)];
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            v.push(("avx512", x86::AVX512));
        }
        if std::is_x86_feature_detected!("avx2") {
            v.push(("avx2", x86::AVX2));
        }
    }
    v
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{scalar_range, HashFn};

    /// The 20 rounds and injections on one vector pair; `$rot` rotates left by a literal, `$add`/`$xor` are
    /// the lane intrinsics, `$inj[j]` the vector of injection row `j`.
    macro_rules! rounds {
        ($a:ident, $b:ident, $add:ident, $xor:ident, $rot:ident, $inj:ident) => {{
            macro_rules! group {
                ($g:expr, $r0:tt, $r1:tt, $r2:tt, $r3:tt) => {
                    $a = $add($a, $b);
                    $b = $xor($rot!($b, $r0), $a);
                    $a = $add($a, $b);
                    $b = $xor($rot!($b, $r1), $a);
                    $a = $add($a, $b);
                    $b = $xor($rot!($b, $r2), $a);
                    $a = $add($a, $b);
                    $b = $xor($rot!($b, $r3), $a);
                    $a = $add($a, $inj[2 * $g]);
                    $b = $add($b, $inj[2 * $g + 1]);
                };
            }
            group!(0, 13, 15, 26, 6);
            group!(1, 17, 29, 16, 24);
            group!(2, 13, 15, 26, 6);
            group!(3, 17, 29, 16, 24);
            group!(4, 13, 15, 26, 6);
        }};
    }

    macro_rules! rot512 {
        ($x:expr, $r:tt) => {
            _mm512_rol_epi32::<$r>($x)
        };
    }

    macro_rules! rot256 {
        ($x:expr, $r:tt) => {
            _mm256_or_si256(_mm256_slli_epi32::<$r>($x), _mm256_srli_epi32::<{ 32 - $r }>($x))
        };
    }

    /// SAFETY: the host has AVX-512F (only reached through `AVX512`, chosen by `blockmath::isa`); pointers as
    /// `HashFn`.
    #[target_feature(enable = "avx512f")]
    unsafe fn hash512(a: *mut u32, b: *mut u32, inj: *const u32, n: u64, uniform: u64) {
        let n = n as usize;
        if n == 0 {
            return;
        }
        // Uniform rows once, broadcast (the others' first values are read and not used).
        let mut keys = [_mm512_setzero_si512(); 10];
        for (j, k) in keys.iter_mut().enumerate() {
            *k = _mm512_set1_epi32(*inj.add(j * n) as i32);
        }
        let mut i = 0;
        if uniform & 0x3ff == 0x3ff {
            // Two vectors per iteration: their round chains run side by side.
            while i + 32 <= n {
                let mut x = _mm512_loadu_si512(a.add(i).cast());
                let mut y = _mm512_loadu_si512(b.add(i).cast());
                let mut z = _mm512_loadu_si512(a.add(i + 16).cast());
                let mut w = _mm512_loadu_si512(b.add(i + 16).cast());
                rounds!(x, y, _mm512_add_epi32, _mm512_xor_si512, rot512, keys);
                rounds!(z, w, _mm512_add_epi32, _mm512_xor_si512, rot512, keys);
                _mm512_storeu_si512(a.add(i).cast(), x);
                _mm512_storeu_si512(b.add(i).cast(), y);
                _mm512_storeu_si512(a.add(i + 16).cast(), z);
                _mm512_storeu_si512(b.add(i + 16).cast(), w);
                i += 32;
            }
        }
        while i + 16 <= n {
            let mut x = _mm512_loadu_si512(a.add(i).cast());
            let mut y = _mm512_loadu_si512(b.add(i).cast());
            let mut row = keys;
            for (j, r) in row.iter_mut().enumerate() {
                if uniform >> j & 1 == 0 {
                    *r = _mm512_loadu_si512(inj.add(j * n + i).cast());
                }
            }
            rounds!(x, y, _mm512_add_epi32, _mm512_xor_si512, rot512, row);
            _mm512_storeu_si512(a.add(i).cast(), x);
            _mm512_storeu_si512(b.add(i).cast(), y);
            i += 16;
        }
        scalar_range(a, b, inj, n, uniform, i);
    }

    /// SAFETY: the host has AVX2 (only reached through `AVX2`, chosen by `blockmath::isa`); pointers as
    /// `HashFn`.
    #[target_feature(enable = "avx2")]
    unsafe fn hash256(a: *mut u32, b: *mut u32, inj: *const u32, n: u64, uniform: u64) {
        let n = n as usize;
        if n == 0 {
            return;
        }
        let mut keys = [_mm256_setzero_si256(); 10];
        for (j, k) in keys.iter_mut().enumerate() {
            *k = _mm256_set1_epi32(*inj.add(j * n) as i32);
        }
        let mut i = 0;
        if uniform & 0x3ff == 0x3ff {
            while i + 16 <= n {
                let mut x = _mm256_loadu_si256(a.add(i).cast());
                let mut y = _mm256_loadu_si256(b.add(i).cast());
                let mut z = _mm256_loadu_si256(a.add(i + 8).cast());
                let mut w = _mm256_loadu_si256(b.add(i + 8).cast());
                rounds!(x, y, _mm256_add_epi32, _mm256_xor_si256, rot256, keys);
                rounds!(z, w, _mm256_add_epi32, _mm256_xor_si256, rot256, keys);
                _mm256_storeu_si256(a.add(i).cast(), x);
                _mm256_storeu_si256(b.add(i).cast(), y);
                _mm256_storeu_si256(a.add(i + 8).cast(), z);
                _mm256_storeu_si256(b.add(i + 8).cast(), w);
                i += 16;
            }
        }
        while i + 8 <= n {
            let mut x = _mm256_loadu_si256(a.add(i).cast());
            let mut y = _mm256_loadu_si256(b.add(i).cast());
            let mut row = keys;
            for (j, r) in row.iter_mut().enumerate() {
                if uniform >> j & 1 == 0 {
                    *r = _mm256_loadu_si256(inj.add(j * n + i).cast());
                }
            }
            rounds!(x, y, _mm256_add_epi32, _mm256_xor_si256, rot256, row);
            _mm256_storeu_si256(a.add(i).cast(), x);
            _mm256_storeu_si256(b.add(i).cast(), y);
            i += 8;
        }
        scalar_range(a, b, inj, n, uniform, i);
    }

    unsafe extern "C" fn entry512(a: *mut u32, b: *mut u32, inj: *const u32, n: u64, uniform: u64) {
        hash512(a, b, inj, n, uniform)
    }

    unsafe extern "C" fn entry256(a: *mut u32, b: *mut u32, inj: *const u32, n: u64, uniform: u64) {
        hash256(a, b, inj, n, uniform)
    }

    pub const AVX512: HashFn = entry512;
    pub const AVX2: HashFn = entry256;
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// JAX's threefry2x32 of one counter pair, written from the paper's schedule (independent of `hash_one`'s
    /// injection rows).
    pub(crate) fn reference(key: [u32; 2], x: [u32; 2]) -> [u32; 2] {
        let ks = [key[0], key[1], key[0] ^ key[1] ^ 0x1BD1_1BDA];
        let (mut a, mut b) = (x[0].wrapping_add(ks[0]), x[1].wrapping_add(ks[1]));
        for g in 0..5 {
            for &r in &ROTATIONS[g % 2] {
                a = a.wrapping_add(b);
                b = b.rotate_left(r) ^ a;
            }
            a = a.wrapping_add(ks[(g + 1) % 3]);
            b = b.wrapping_add(ks[(g + 2) % 3]).wrapping_add(g as u32 + 1);
        }
        [a, b]
    }

    /// The injection rows of `key` (as the composition adds them).
    fn key_rows(key: [u32; 2]) -> [u32; 10] {
        let ks = [key[0], key[1], key[0] ^ key[1] ^ 0x1BD1_1BDA];
        let mut r = [0; 10];
        for g in 0..5 {
            r[2 * g] = ks[(g + 1) % 3];
            r[2 * g + 1] = ks[(g + 2) % 3].wrapping_add(g as u32 + 1);
        }
        r
    }

    #[test]
    fn known_answers() {
        // Salmon et al.'s Random123 known-answer vectors (the ones JAX's tests use).
        assert_eq!(reference([0, 0], [0, 0]), [0x6b20_0159, 0x99ba_4efe]);
        assert_eq!(reference([!0, !0], [!0, !0]), [0x1cb9_96fc, 0xbb00_2be7]);
        assert_eq!(reference([0x1319_8a2e, 0x0370_7344], [0x243f_6a88, 0x85a3_08d3]), [0xc492_3a9c, 0x483d_f7a0]);
    }

    /// Every routine this host runs against the reference, for lengths around the vector widths, with keys
    /// that are uniform, per point, and mixed.
    #[test]
    fn routines_match_reference() {
        for (name, f) in all_routines() {
            for n in [0usize, 1, 7, 8, 15, 16, 17, 31, 32, 33, 100, 504] {
                for mask in [0x3ffu64, 0, 0x155, 0x2aa] {
                    let key = |i: usize| -> [u32; 2] {
                        if mask == 0x3ff {
                            [0x1319_8a2e, 0x0370_7344]
                        } else {
                            [(i as u32).wrapping_mul(2_654_435_761), !(i as u32) ^ 0x5bd1_e995]
                        }
                    };
                    // Per point rows where the mask's bit is clear; uniform rows hold point 0's value.
                    let mut inj = vec![0u32; 10 * n];
                    let (mut a, mut b) = (vec![0u32; n], vec![0u32; n]);
                    let mut want = Vec::new();
                    for i in 0..n {
                        let x = [(i as u32) >> 3, (i as u32).wrapping_mul(0x9e37_79b9)];
                        // (Mixed masks: the uniform rows hold point 0's values, the others this point's; not
                        // a real key schedule, but the routine adds whatever the rows hold.)
                        let k = key(i);
                        let rows = key_rows(k);
                        let rows0 = key_rows(key(0));
                        for j in 0..10 {
                            inj[j * n + i] = if mask >> j & 1 == 1 { rows0[j] } else { rows[j] };
                        }
                        let ks = [k[0], k[1], k[0] ^ k[1] ^ 0x1BD1_1BDA];
                        a[i] = x[0].wrapping_add(ks[0]);
                        b[i] = x[1].wrapping_add(ks[1]);
                        let row = |j: usize| if mask >> j & 1 == 1 { rows0[j] } else { rows[j] };
                        want.push(hash_one(a[i], b[i], row));
                        if mask == 0x3ff || mask == 0 {
                            assert_eq!(reference(k, x), [want[i].0, want[i].1]);
                        }
                    }
                    // SAFETY: `a`, `b` hold n values, `inj` 10 rows of n.
                    unsafe { f(a.as_mut_ptr(), b.as_mut_ptr(), inj.as_ptr(), n as u64, mask) };
                    for i in 0..n {
                        assert_eq!((a[i], b[i]), want[i], "{name}: n={n} mask={mask:#x} point {i}");
                    }
                }
            }
        }
    }
}
