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

/// One block of up to `MAX_MR` output positions, all out-features `[0, oq)`:
/// `out[r][j] = sum_{k < kk, c < cg} a[r * kk + k][c] * b[(k * cg + c) * oq + j]` for `r < rows`.
///
/// `a` holds `MAX_MR * kk` row pointers (rows past `rows` may point anywhere readable, e.g. a zero row);
/// `out[r]` points at position r's `oq` contiguous outputs.
///
/// SAFETY: `isa` is supported by the host (`isa()`); every `a[..][c]` for `c < cg`, `b[..]` for
/// `(kk * cg) * oq` elements and `out[r][..oq]` for `r < rows` are valid; `oq % isa.lanes() == 0`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn block(
    isa: Isa, rows: usize, a: &[*const f32], kk: usize, cg: usize, b: *const f32, oq: usize, out: &[*mut f32],
) {
    block_part(isa, rows, a, kk, kk, cg, b, oq, out, false)
}

/// `block` over a part of the reduction: row r's pointers are `a[r * lda .. r * lda + kk]` (`kk <= lda`),
/// and with `accumulate` each tile starts from the value already in `out` instead of zero. A reduction
/// split into parts run in order with `accumulate` on every part but the first gives bit for bit the
/// result of one `block` over the whole (each element stays one FMA chain in (k, c) order; the f32
/// partial sums are stored and reloaded exactly). Why: a long reduction (a kernel gradient's) streams
/// its whole `b` through every tile; in parts, one part of `b` stays in cache for all the tiles of a task.
///
/// SAFETY: as `block`, with `a` holding `MAX_MR * lda` pointers and `out[r][..oq]` initialized when
/// `accumulate`.
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
                rows: usize, a: &[*const f32], lda: usize, kk: usize, cg: usize, b: *const f32, ldb: usize,
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
                    let bk = b.add(k * cg * ldb + j0);
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
                t512::<6, 4>(rows - r, &a[r * lda..], lda, kk, cg, b, oq, &out[r..], j, acc);
                r += 6;
            }
            j += 64;
        }
        debug_assert!(MAX_MR >= 12);
        if j + 32 <= oq {
            t512::<12, 2>(rows, a, lda, kk, cg, b, oq, out, j, acc);
            j += 32;
        }
        if j + 16 <= oq {
            t512::<12, 1>(rows, a, lda, kk, cg, b, oq, out, j, acc);
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
                t256::<6, 2>(rows - r, &a[r * lda..], lda, kk, cg, b, oq, &out[r..], j, acc);
                r += 6;
            }
            j += 16;
        }
        if j + 8 <= oq {
            t256::<12, 1>(rows, a, lda, kk, cg, b, oq, out, j, acc);
        }
    }
}

