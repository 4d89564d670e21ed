//! Implicit-GEMM tiles for f32 convolutions whose in- and out-features are contiguous (channels-last, e.g.
//! NHWC/HWIO): no patch matrix is built. A tile is `MR` output positions × `NR` out-features held in
//! vector registers; it accumulates over kernel offsets `k` and in-features `c`, broadcasting the input
//! value `x[position r, offset k, feature c]` (read where it lies in the input, or from a zero row for
//! padding and dilation holes) against one row of the packed kernel `[k × in-features, out-features]`.
//!
//! Why: the im2col path copies every input element `kk` times into a patch block, then the gemm crate packs
//! that block and the kernel again for each block; for a 3×3 64→64 convolution those copies cost about as
//! much as the arithmetic. Here the only copy is the kernel's, once per call.
//!
//! Every element is one FMA chain in (k, c) order whatever the tile shape, so results do not depend on
//! the thread count or on where a tile boundary falls. Instruction sets: AVX-512F or AVX2 (both with
//! FMA), following `blockmath::isa()` (so `CRANAX_CPU_BLOCK_MATH=avx2|off` selects them; with `off`, or
//! on other architectures, callers keep the im2col path).
// The x86 kernels are cfg-gated out elsewhere: what only they use is dead there, not wrong.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_mut, unused_variables, unused_macros, unreachable_code))]

/// The vector width a host's tiles use.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Isa {
    Avx512,
    Avx2,
}

impl Isa {
    /// f32 lanes per vector: out-features per tile must be a multiple of it.
    pub fn lanes(self) -> usize {
        match self {
            Isa::Avx512 => 16,
            Isa::Avx2 => 8,
        }
    }
}

/// The tile instruction set of this host (None: use the im2col path).
pub fn isa() -> Option<Isa> {
    #[cfg(target_arch = "x86_64")]
    {
        match super::super::blockmath::isa() {
            Some(super::super::blockmath::Isa::Avx512) => Some(Isa::Avx512),
            Some(super::super::blockmath::Isa::Avx2) => Some(Isa::Avx2),
            None => None,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Output positions per tile (the largest `MR` any tile shape uses): callers give this many row pointers.
pub const MAX_MR: usize = 12;

/// One block of up to `MAX_MR` output positions, all out-features `[0, oq)`, over a part of the
/// reduction: `out[r][j] (+)= sum_{k < kk, c < cg} a[r * lda + k][c] * b[(k * cg + c) * oq + j]` for
/// `r < rows` (`kk <= lda`; rows past `rows` may point anywhere readable, e.g. a zero row); with
/// `accumulate` each tile starts from the value already in `out` instead of zero. A reduction split into
/// parts run in order with `accumulate` on every part but the first gives bit for bit the result of one
/// call over the whole (each element stays one FMA chain in (k, c) order; the f32
/// partial sums are stored and reloaded exactly). Why: a long reduction (a kernel gradient's) streams
/// its whole `b` through every tile; in parts, one part of `b` stays in cache for all the tiles of a task.
///
/// SAFETY: `isa` is supported by the host (`isa()`); `a` holds `MAX_MR * lda` pointers, every `a[..][c]`
/// for `c < cg`, `b[..]` for `(kk * cg) * oq` elements and `out[r][..oq]` for `r < rows` are valid (and
/// initialized when `accumulate`); `oq % isa.lanes() == 0`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn block_part(
    isa: Isa, rows: usize, a: &[*const f32], lda: usize, kk: usize, cg: usize, b: *const f32, oq: usize,
    out: &[*mut f32], accumulate: bool,
) {
    #[cfg(target_arch = "x86_64")]
    match isa {
        Isa::Avx512 => x86::block_avx512(rows, a, lda, kk, cg, b, oq, out, accumulate),
        Isa::Avx2 => x86::block_avx2(rows, a, lda, kk, cg, b, oq, out, accumulate),
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (isa, rows, a, lda, kk, cg, b, oq, out, accumulate);
        unreachable!("no conv tiles on this architecture")
    }
}

/// The kernel laid out for `chunk`: per group, the `[kk × cg, oq]` matrix cut into column panels of the
/// tile widths `isa` uses (`panel_width`), each panel row-major `[kk × cg, width]` and the panels one
/// after another, the whole 64-byte aligned.
///
/// Why: a tile then streams its part of the kernel as one contiguous, line-aligned run. Read in place
/// from the `[kk × cg, oq]` matrix, a 16-wide AVX2 tile takes one 64-byte piece every `4 × oq` bytes, which
/// misaligned straddles two lines: twice the cache traffic, and a 36 KB slice that no longer fits in L1
/// beside the input rows.
pub struct Panels {
    buf: Vec<f32>,
    off: usize,
    /// elements per group
    pub group_len: usize,
}

impl Panels {
    pub fn as_ptr(&self) -> *const f32 {
        self.buf[self.off..].as_ptr()
    }
}

/// Out-features of the panel (and tile) starting where `remaining` out-features are left.
pub fn panel_width(isa: Isa, remaining: usize) -> usize {
    match isa {
        Isa::Avx512 if remaining >= 64 => 64,
        Isa::Avx512 if remaining >= 32 => 32,
        Isa::Avx512 => 16,
        Isa::Avx2 if remaining >= 16 => 16,
        Isa::Avx2 => 8,
    }
}

/// Packs `groups` row-major `[kdim, oq]` matrices (`src`, one after another) into `Panels`.
/// Requires `oq % isa.lanes() == 0` and `src.len() == groups * kdim * oq`.
pub fn pack_panels(isa: Isa, src: &[f32], groups: usize, kdim: usize, oq: usize) -> Panels {
    let group_len = kdim * oq;
    let mut buf = vec![0f32; groups * group_len + 16];
    let off = buf.as_ptr().align_offset(64).min(16);
    for g in 0..groups {
        let (s, d) = (&src[g * group_len..(g + 1) * group_len], &mut buf[off + g * group_len..]);
        let mut j = 0;
        while j < oq {
            let nr = panel_width(isa, oq - j);
            let panel = &mut d[j * kdim..(j + nr) * kdim];
            for (row, dst) in panel.chunks_exact_mut(nr).enumerate() {
                dst.copy_from_slice(&s[row * oq + j..row * oq + j + nr]);
            }
            j += nr;
        }
    }
    Panels { buf, off, group_len }
}

/// `rows` output positions (any number), all out-features `[0, oq)`, against a kernel laid out by
/// `pack_panels` (`b`: one group's panels): `out[r][j] = sum_{k < kk, c < cg} a[r * kk + k][c] *
/// kernel[k * cg + c][j]`: each panel over all the rows in turn, so a panel is reused by every tile of the
/// chunk while the chunk's input rows stay in L1/L2. Every element is one FMA chain in (k, c) order, bit
/// for bit what `block_part` computes over the whole reduction. (Splitting the reduction into parts that
/// reload partial sums, so that a part of a panel stays in L1, measured no faster: 3×3 64→64 under AVX2.)
///
/// SAFETY: `isa` is supported by the host; `a` holds `(rows + MAX_MR) * kk` pointers (those of rows past
/// `rows` may point at any `cg` readable floats, e.g. a zero row), each valid for `cg` floats; `b` points
/// at one group's `pack_panels` output for these `kk * cg` and `oq`; `out[r][..oq]` is valid for `r < rows`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn chunk(
    isa: Isa, rows: usize, a: &[*const f32], kk: usize, cg: usize, b: *const f32, oq: usize, out: &[*mut f32],
) {
    debug_assert!(a.len() >= (rows + MAX_MR) * kk && out.len() >= rows);
    let kdim = kk * cg;
    let mut j = 0;
    while j < oq {
        let nr = panel_width(isa, oq - j);
        let bp = b.add(j * kdim);
        #[cfg(target_arch = "x86_64")]
        x86::panel(isa, nr, rows, a, kk, cg, bp, out, j);
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (bp, out);
            unreachable!("no conv tiles on this architecture")
        }
        j += nr;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::MAX_MR;
    use std::arch::x86_64::*;

    /// The tile body, one instance per (vector type, MR, NV vectors): MR rows of NV vectors in registers.
    /// Full tiles store straight to `out`; a partial one (rows < MR) goes through a stack buffer.
    macro_rules! tile {
        ($name:ident, $feat:literal, $v:ty, $lanes:literal, $zero:ident, $load:ident, $splat:ident, $fma:ident,
         $store:ident) => {
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            unsafe fn $name<const MR: usize, const NV: usize>(
                rows: usize, a: &[*const f32], lda: usize, kk: usize, cg: usize, bp: *const f32, ldb: usize,
                out: &[*mut f32], j0: usize, accumulate: bool,
            ) {
                let mut acc = [[$zero(); NV]; MR];
                if accumulate {
                    for r in 0..MR.min(rows) {
                        let o = (*out.get_unchecked(r)).add(j0);
                        for v in 0..NV {
                            acc[r][v] = $load(o.add(v * $lanes));
                        }
                    }
                }
                for k in 0..kk {
                    let mut ap = [std::ptr::null::<f32>(); MR];
                    for r in 0..MR {
                        ap[r] = *a.get_unchecked(r * lda + k);
                    }
                    let bk = bp.add(k * cg * ldb);
                    for c in 0..cg {
                        let brow = bk.add(c * ldb);
                        let mut bv = [$zero(); NV];
                        for v in 0..NV {
                            bv[v] = $load(brow.add(v * $lanes));
                        }
                        for r in 0..MR {
                            let x = $splat(*ap[r].add(c));
                            for v in 0..NV {
                                acc[r][v] = $fma(x, bv[v], acc[r][v]);
                            }
                        }
                    }
                }
                for r in 0..MR.min(rows) {
                    let o = (*out.get_unchecked(r)).add(j0);
                    for v in 0..NV {
                        $store(o.add(v * $lanes), acc[r][v]);
                    }
                }
            }
        };
    }

    tile!(t512, "avx512f,avx2,fma", __m512, 16, _mm512_setzero_ps, _mm512_loadu_ps, _mm512_set1_ps,
        _mm512_fmadd_ps, _mm512_storeu_ps);
    tile!(t256, "avx2,fma", __m256, 8, _mm256_setzero_ps, _mm256_loadu_ps, _mm256_set1_ps, _mm256_fmadd_ps,
        _mm256_storeu_ps);

    /// All `rows` of one panel (`nr` out-features from `j0`, kernel rows `nr` apart in `bp`), in the
    /// tile shape of that width.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn panel(
        isa: super::Isa, nr: usize, rows: usize, a: &[*const f32], kk: usize, cg: usize, bp: *const f32,
        out: &[*mut f32], j0: usize,
    ) {
        macro_rules! run {
            ($t:ident, $mr:literal, $nv:literal) => {{
                let mut r = 0;
                while r < rows {
                    $t::<$mr, $nv>(rows - r, &a[r * kk..], kk, kk, cg, bp, nr, &out[r..], j0, false);
                    r += $mr;
                }
            }};
        }
        match (isa, nr) {
            (super::Isa::Avx512, 64) => run!(t512, 6, 4),
            (super::Isa::Avx512, 32) => run!(t512, 12, 2),
            (super::Isa::Avx512, _) => run!(t512, 12, 1),
            (super::Isa::Avx2, 16) => run!(t256, 6, 2),
            (super::Isa::Avx2, _) => run!(t256, 12, 1),
        }
    }

    /// AVX-512 (32 registers): 6 rows × 64 features (24 accumulators + 4 kernel vectors) while 64 remain,
    /// then 12 × 32 and 12 × 16. Rows beyond `rows` in a 12-row tile are computed and discarded.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn block_avx512(
        rows: usize, a: &[*const f32], lda: usize, kk: usize, cg: usize, b: *const f32, oq: usize,
        out: &[*mut f32], acc: bool,
    ) {
        let mut j = 0;
        while j + 64 <= oq {
            let mut r = 0;
            while r < rows {
                t512::<6, 4>(rows - r, &a[r * lda..], lda, kk, cg, b.add(j), oq, &out[r..], j, acc);
                r += 6;
            }
            j += 64;
        }
        debug_assert!(MAX_MR >= 12);
        if j + 32 <= oq {
            t512::<12, 2>(rows, a, lda, kk, cg, b.add(j), oq, out, j, acc);
            j += 32;
        }
        if j + 16 <= oq {
            t512::<12, 1>(rows, a, lda, kk, cg, b.add(j), oq, out, j, acc);
        }
    }

    /// AVX2 (16 registers): 6 rows × 16 features (12 accumulators + 2 kernel vectors), then 12 × 8.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn block_avx2(
        rows: usize, a: &[*const f32], lda: usize, kk: usize, cg: usize, b: *const f32, oq: usize,
        out: &[*mut f32], acc: bool,
    ) {
        let mut j = 0;
        while j + 16 <= oq {
            let mut r = 0;
            while r < rows {
                t256::<6, 2>(rows - r, &a[r * lda..], lda, kk, cg, b.add(j), oq, &out[r..], j, acc);
                r += 6;
            }
            j += 16;
        }
        if j + 8 <= oq {
            t256::<12, 1>(rows, a, lda, kk, cg, b.add(j), oq, out, j, acc);
        }
    }
}

