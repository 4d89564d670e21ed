//! `dot_general` as WGSL: any batch/contracting/free dims through index math (no transposed copies). The
//! product shaders below (`gemm_main`) read their operands through `a_at`/`b_at` and place results through
//! `c_at`, functions each caller defines: `conv` reuses them for its implicit GEMM.
//!
//! - Matrix-vector shapes (a free extent < 8): 16 outputs per workgroup, K split over 16 rows of invocations.
//! - Small products: one invocation per output element, K walked in 16×16 tiles staged in workgroup memory.
//! - Products with both free extents ≥ 64: register blocking. A workgroup of 16×16 invocations computes a
//!   128×128 block of C, each invocation an 8×8 sub-block (rows `ty + 16i`, columns `tx + 16j`, so reads of
//!   the B tile are consecutive across a warp and the A tile is broadcast); K goes in steps of 16 through
//!   workgroup memory. The inner product is written out unrolled (64 named accumulators) so the driver's
//!   compiler keeps them in registers. This is the standard SGEMM shape for GPUs without tensor cores in
//!   WGSL (f32 FMA, no TF32).
use std::fmt::Write;

use crate::error::Result;
use crate::ir::{Aval, DType};

use super::wgsl::{offset_expr, sty, vty, zero, Binding, KernelShader};

/// Tile edge of the small shader (16×16 invocations, 16×16 tiles of each operand in workgroup memory).
pub const TILE: u32 = 16;
/// Block edge of the register-blocked shader, its K step, and the per-invocation sub-block edge.
const BM: u32 = 128;
const BK: u32 = 16;
const TM: u32 = 8;
/// Free extents from which the register-blocked shader is used, and below which the thin one is.
const BLOCKED_MIN: u64 = 64;
const THIN: u64 = 8;

/// The shader for `dot_general(lhs, rhs)` with contracting dims `lc`/`rc` and batch dims `lb`/`rb`; the output
/// is batch × lhs free × rhs free, row-major. `slots` are the lhs, rhs and output slots. `None` when the
/// dtype or the grid is outside what these shaders handle (the caller runs the step on the host).
#[allow(clippy::too_many_arguments)]
pub fn dot_shader(
    lhs: &Aval,
    rhs: &Aval,
    out: &Aval,
    lc: &[usize],
    rc: &[usize],
    lb: &[usize],
    rb: &[usize],
    slots: [usize; 3],
    max_groups: u32,
) -> Result<Option<KernelShader>> {
    let dt = out.dtype;
    if !matches!(dt, DType::F32 | DType::I32 | DType::U32 | DType::F64 | DType::I64)
        || lhs.dtype == DType::Bool
        || rhs.dtype == DType::Bool
    {
        return Ok(None);
    }
    let (ls, rs) = (&lhs.shape, &rhs.shape);
    let lfree: Vec<usize> = (0..ls.len()).filter(|x| !lc.contains(x) && !lb.contains(x)).collect();
    let rfree: Vec<usize> = (0..rs.len()).filter(|x| !rc.contains(x) && !rb.contains(x)).collect();
    let prod = |s: &[usize], d: &[usize]| d.iter().map(|&i| s[i] as u64).product::<u64>();
    let (nb, m, k, n) = (prod(ls, lb), prod(ls, &lfree), prod(ls, lc), prod(rs, &rfree));
    if nb == 0 || m == 0 || n == 0 {
        return Ok(None);
    }
    let ty = vty(dt)?;
    let conv = |from: DType, v: &str| -> String {
        if from == dt {
            v.to_string()
        } else {
            format!("{ty}({v})")
        }
    };
    let mut src = String::new();
    let _ = writeln!(src, "// cranax dot_general {:?}x{:?} -> {:?} (batch {nb}, {m}x{k} @ {k}x{n})", ls, rs, out.shape);
    let _ = writeln!(src, "@group(0) @binding(0) var<storage, read> a: array<{}>;", sty(lhs.dtype)?);
    let _ = writeln!(src, "@group(0) @binding(1) var<storage, read> b: array<{}>;", sty(rhs.dtype)?);
    let _ = writeln!(src, "@group(0) @binding(2) var<storage, read_write> c: array<{}>;", sty(dt)?);
    let _ = writeln!(src, "fn a_at(bi: u32, mi: u32, ki: u32) -> {ty} {{ return {}; }}", conv(lhs.dtype, &format!(
        "a[{} + {} + {}]", offset_expr(ls, lb, "bi"), offset_expr(ls, &lfree, "mi"), offset_expr(ls, lc, "ki"))));
    let _ = writeln!(src, "fn b_at(bi: u32, ki: u32, ni: u32) -> {ty} {{ return {}; }}", conv(rhs.dtype, &format!(
        "b[{} + {} + {}]", offset_expr(rs, rb, "bi"), offset_expr(rs, rc, "ki"), offset_expr(rs, &rfree, "ni"))));
    let _ = writeln!(src, "fn c_at(bi: u32, mi: u32, ni: u32) -> u32 {{ return bi * {}u + mi * {n}u + ni; }}", m * n);
    let Some(groups) = gemm_main(&mut src, Gemm { nb, m, k, n, dt }, max_groups)? else {
        return Ok(None);
    };
    let bindings = vec![
        Binding { slot: slots[0], write: false },
        Binding { slot: slots[1], write: false },
        Binding { slot: slots[2], write: true },
    ];
    Ok(Some(KernelShader { source: src, bindings, groups, second: None }))
}

/// The extents of a batched product `C[bi] = A[bi] @ B[bi]` (`nb` batches of `m`×`k` by `k`×`n`) of dtype `dt`.
#[derive(Clone, Copy)]
pub(super) struct Gemm {
    pub nb: u64,
    pub m: u64,
    pub k: u64,
    pub n: u64,
    pub dt: DType,
}

/// Appends the entry point of a batched product to `src`, which must already declare `a_at(bi, mi, ki)` and
/// `b_at(bi, ki, ni)` (the operand values as the accumulator type, called only in range), `c_at(bi, mi, ni)`
/// (the output element's index) and the output binding `c`: the thin, tiled or register-blocked shader
/// chosen by shape (see the module comment). Returns the workgroup grid, or `None` when it exceeds
/// `max_groups` or u32 index math (the caller runs the step on the host).
pub(super) fn gemm_main(src: &mut String, g: Gemm, max_groups: u32) -> Result<Option<[u32; 3]>> {
    let Gemm { nb, m, k, n, dt } = g;
    if nb == 0 || m == 0 || n == 0 {
        return Ok(None);
    }
    let blocked = m >= BLOCKED_MIN && n >= BLOCKED_MIN;
    let thin = m < THIN || n < THIN;
    let edge = if blocked { BM } else { TILE } as u64;
    let (mut gx, mut gy) = (n.div_ceil(edge), m.div_ceil(edge));
    let mut gz = nb;
    if thin {
        let g = (nb * m * n).div_ceil(TILE as u64);
        gx = g.min(max_groups as u64);
        gy = g.div_ceil(gx);
        gz = 1;
    }
    if gx > max_groups as u64 || gy > max_groups as u64 || gz > max_groups as u64 || nb * m * n > u32::MAX as u64 / 2 {
        return Ok(None);
    }
    let dims = Dims { m, k, n, ty: vty(dt)?, zero: zero(dt) };
    if thin {
        thin_main(src, &dims, nb, gx);
    } else if blocked {
        blocked_main(src, &dims);
    } else {
        tiled_main(src, &dims);
    }
    Ok(Some([gx as u32, gy as u32, gz as u32]))
}

struct Dims {
    m: u64,
    k: u64,
    n: u64,
    ty: &'static str,
    zero: &'static str,
}

/// Matrix-vector shapes (a free extent below THIN, where a 16×16 tile would idle most invocations): a
/// workgroup computes 16 consecutive output elements, its 16 rows of invocations each summing every 16th
/// point of K (reads of the wide operand stay consecutive across a row), then a tree over the rows.
fn thin_main(src: &mut String, d: &Dims, nb: u64, gx: u64) {
    let Dims { m, k, n, ty, zero } = *d;
    let total = nb * m * n;
    let _ = writeln!(src, "var<workgroup> part: array<{ty}, {}>;", TILE * TILE);
    let _ = writeln!(src, "@compute @workgroup_size({TILE}, {TILE})");
    let _ = writeln!(src, "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{");
    let _ = writeln!(src, "  let o = (wid.y * {gx}u + wid.x) * {TILE}u + lid.x;");
    let _ = writeln!(src, "  let live = o < {total}u;");
    let _ = writeln!(src, "  let oo = min(o, {}u);", total.saturating_sub(1));
    let _ = writeln!(src, "  let bi = oo / {}u;", m * n);
    let _ = writeln!(src, "  let mi = (oo / {n}u) % {m}u;");
    let _ = writeln!(src, "  let ni = oo % {n}u;");
    let _ = writeln!(src, "  var acc: {ty} = {zero};");
    let _ = writeln!(src, "  if (live) {{");
    let _ = writeln!(src, "    for (var kk: u32 = lid.y; kk < {k}u; kk = kk + {TILE}u) {{");
    let _ = writeln!(src, "      acc = acc + a_at(bi, mi, kk) * b_at(bi, kk, ni);");
    let _ = writeln!(src, "    }}");
    let _ = writeln!(src, "  }}");
    let _ = writeln!(src, "  part[lid.y * {TILE}u + lid.x] = acc;");
    let _ = writeln!(src, "  workgroupBarrier();");
    let _ = writeln!(src, "  for (var s: u32 = {}u; s > 0u; s = s >> 1u) {{", TILE / 2);
    let _ = writeln!(src, "    if (lid.y < s) {{ part[lid.y * {TILE}u + lid.x] = part[lid.y * {TILE}u + lid.x] + part[(lid.y + s) * {TILE}u + lid.x]; }}");
    let _ = writeln!(src, "    workgroupBarrier();");
    let _ = writeln!(src, "  }}");
    let _ = writeln!(src, "  if (live && lid.y == 0u) {{ c[c_at(bi, mi, ni)] = part[lid.x]; }}");
    let _ = writeln!(src, "}}");
}

/// One invocation per output element.
fn tiled_main(src: &mut String, d: &Dims) {
    let Dims { m, k, n, ty, zero } = *d;
    let _ = writeln!(src, "var<workgroup> ta: array<{ty}, {}>;", TILE * TILE);
    let _ = writeln!(src, "var<workgroup> tb: array<{ty}, {}>;", TILE * TILE);
    let _ = writeln!(src, "@compute @workgroup_size({TILE}, {TILE})");
    let _ = writeln!(src, "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{");
    let _ = writeln!(src, "  let bi = wid.z;");
    let _ = writeln!(src, "  let row = wid.y * {TILE}u + lid.y;");
    let _ = writeln!(src, "  let col = wid.x * {TILE}u + lid.x;");
    let _ = writeln!(src, "  var acc: {ty} = {zero};");
    let _ = writeln!(src, "  for (var t: u32 = 0u; t < {k}u; t = t + {TILE}u) {{");
    let _ = writeln!(src, "    var va: {ty} = {zero};");
    let _ = writeln!(src, "    if (row < {m}u && t + lid.x < {k}u) {{ va = a_at(bi, row, t + lid.x); }}");
    let _ = writeln!(src, "    ta[lid.y * {TILE}u + lid.x] = va;");
    let _ = writeln!(src, "    var vb: {ty} = {zero};");
    let _ = writeln!(src, "    if (col < {n}u && t + lid.y < {k}u) {{ vb = b_at(bi, t + lid.y, col); }}");
    let _ = writeln!(src, "    tb[lid.y * {TILE}u + lid.x] = vb;");
    let _ = writeln!(src, "    workgroupBarrier();");
    let _ = writeln!(src, "    for (var kk: u32 = 0u; kk < {TILE}u; kk = kk + 1u) {{");
    let _ = writeln!(src, "      acc = acc + ta[lid.y * {TILE}u + kk] * tb[kk * {TILE}u + lid.x];");
    let _ = writeln!(src, "    }}");
    let _ = writeln!(src, "    workgroupBarrier();");
    let _ = writeln!(src, "  }}");
    let _ = writeln!(src, "  if (row < {m}u && col < {n}u) {{ c[c_at(bi, row, col)] = acc; }}");
    let _ = writeln!(src, "}}");
}

/// A 128×128 block per workgroup, 8×8 outputs per invocation (see the module comment).
fn blocked_main(src: &mut String, d: &Dims) {
    let Dims { m, k, n, ty, zero } = *d;
    // A tile stored k-major with a padded row (BM + 1) so the transposing stores spread over banks.
    let ap = BM + 1;
    let per = BM * BK / (TILE * TILE); // elements of each tile loaded per invocation
    let _ = writeln!(src, "var<workgroup> ta: array<{ty}, {}>;", BK * ap);
    let _ = writeln!(src, "var<workgroup> tb: array<{ty}, {}>;", BK * BM);
    let _ = writeln!(src, "@compute @workgroup_size({TILE}, {TILE})");
    let _ = writeln!(src, "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{");
    let _ = writeln!(src, "  let bi = wid.z;");
    let _ = writeln!(src, "  let r0 = wid.y * {BM}u;");
    let _ = writeln!(src, "  let c0 = wid.x * {BM}u;");
    let _ = writeln!(src, "  let tx = lid.x;");
    let _ = writeln!(src, "  let ty = lid.y;");
    let _ = writeln!(src, "  let t = ty * {TILE}u + tx;");
    for i in 0..TM {
        for j in 0..TM {
            let _ = writeln!(src, "  var c{i}{j}: {ty} = {zero};");
        }
    }
    let _ = writeln!(src, "  for (var k0: u32 = 0u; k0 < {k}u; k0 = k0 + {BK}u) {{");
    // Loads: invocation t takes flat tile indices t + 256l. A: 16 consecutive k per row (coalesced when
    // A is row-major); B: consecutive columns.
    for l in 0..per {
        let _ = writeln!(src, "    {{");
        let _ = writeln!(src, "      let ia = t + {}u;", l * TILE * TILE);
        let _ = writeln!(src, "      let ar = ia / {BK}u;");
        let _ = writeln!(src, "      let ak = ia % {BK}u;");
        let _ = writeln!(src, "      var va: {ty} = {zero};");
        let _ = writeln!(src, "      if (r0 + ar < {m}u && k0 + ak < {k}u) {{ va = a_at(bi, r0 + ar, k0 + ak); }}");
        let _ = writeln!(src, "      ta[ak * {ap}u + ar] = va;");
        let _ = writeln!(src, "      let bk = ia / {BM}u;");
        let _ = writeln!(src, "      let bc = ia % {BM}u;");
        let _ = writeln!(src, "      var vb: {ty} = {zero};");
        let _ = writeln!(src, "      if (c0 + bc < {n}u && k0 + bk < {k}u) {{ vb = b_at(bi, k0 + bk, c0 + bc); }}");
        let _ = writeln!(src, "      tb[bk * {BM}u + bc] = vb;");
        let _ = writeln!(src, "    }}");
    }
    let _ = writeln!(src, "    workgroupBarrier();");
    let _ = writeln!(src, "    for (var kk: u32 = 0u; kk < {BK}u; kk = kk + 1u) {{");
    for i in 0..TM {
        let _ = writeln!(src, "      let a{i} = ta[kk * {ap}u + ty + {}u];", i * TILE);
    }
    for j in 0..TM {
        let _ = writeln!(src, "      let b{j} = tb[kk * {BM}u + tx + {}u];", j * TILE);
    }
    for i in 0..TM {
        let line: Vec<String> = (0..TM).map(|j| format!("c{i}{j} = c{i}{j} + a{i} * b{j};")).collect();
        let _ = writeln!(src, "      {}", line.join(" "));
    }
    let _ = writeln!(src, "    }}");
    let _ = writeln!(src, "    workgroupBarrier();");
    let _ = writeln!(src, "  }}");
    for i in 0..TM {
        let _ = writeln!(src, "  let row{i} = r0 + ty + {}u;", i * TILE);
        let _ = writeln!(src, "  if (row{i} < {m}u) {{");
        for j in 0..TM {
            let _ = writeln!(src, "    if (c0 + tx + {jj}u < {n}u) {{ c[c_at(bi, row{i}, c0 + tx + {jj}u)] = c{i}{j}; }}", jj = j * TILE);
        }
        let _ = writeln!(src, "  }}");
    }
    let _ = writeln!(src, "}}");
}
