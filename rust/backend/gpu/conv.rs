//! `conv_general_dilated` as WGSL: an implicit GEMM, run by the product shaders of `super::dot`.
//!
//! Per group `g` (feature groups × batch groups, one of them 1) the convolution is the product
//! `out[g] (M × N) = patches[g] (M × K) @ kernel[g] (K × N)`, with M = output batch × output positions,
//! K = kernel positions × in-features per group and N = out-features per group. Nothing is copied: the
//! shader's `a_at` computes a patch element from the input directly (the output position and the kernel
//! offset give the input position through the stride, padding and both dilations; padding and the holes of
//! the input dilation read zero), `b_at` reads the kernel and `c_at` places the result, each through the
//! operand's own element strides, so every dimension-number layout is read in place. The M × K reduction is
//! tiled through workgroup memory as for a `dot_general` (thin, 16×16 tiled, or 128×128 register-blocked,
//! chosen by shape in `dot::gemm_main`); the group is the product's batch (the grid's z).
//!
//! K runs over in-features fastest when the input's feature dimension is its innermost (NHWC: consecutive
//! K reads are consecutive in memory), else over kernel positions fastest. f32, and f64 on adapters with
//! 64-bit shaders (a plan holding f64 runs on the host elsewhere: `exec::fits`); the library op carries no
//! other dtype (float16/bfloat16 convolutions are lowered in Python to `dot_general`s).
use std::fmt::Write;

use crate::error::Result;
use crate::ir::{Aval, ConvParams, DType};

use super::dot::{gemm_main, Gemm};
use super::wgsl::{row_major, sty, vty, zero, Binding, KernelShader};

/// The shader for `conv_general_dilated(lhs, rhs)` with params `c`, writing `out`; `slots` are the lhs, rhs
/// and output slots. `None` when the dtype, the sizes (u32/i32 index math) or the grid are outside what the
/// shader handles: the caller runs the step on the host.
pub fn conv_shader(
    c: &ConvParams,
    lhs: &Aval,
    rhs: &Aval,
    out: &Aval,
    slots: [usize; 3],
    max_groups: u32,
) -> Result<Option<KernelShader>> {
    let dt = out.dtype;
    if !matches!(dt, DType::F32 | DType::F64) || lhs.dtype != dt || rhs.dtype != dt {
        return Ok(None);
    }
    let nd = lhs.shape.len();
    if nd < 2 || rhs.shape.len() != nd || out.shape.len() != nd || [&c.lhs_spec, &c.rhs_spec, &c.out_spec].iter().any(|s| s.len() != nd) {
        return Ok(None); // the plan's verifier rejects these; never index out of the specs
    }
    // Index math is u32 (i32 for input positions): every array, and every position reached, below 2^31.
    let limit = 1u64 << 31;
    let numel = |a: &Aval| a.shape.iter().map(|&d| d as u64).product::<u64>();
    if [lhs, rhs, out].iter().any(|a| numel(a) >= limit) {
        return Ok(None);
    }
    let (ls, rs, os) = (&c.lhs_spec, &c.rhs_spec, &c.out_spec);
    let (lst, rst, ost) = (row_major(&lhs.shape), row_major(&rhs.shape), row_major(&out.shape));
    let groups = c.feature_group_count * c.batch_group_count;
    let by_features = c.batch_group_count == 1; // the groups split the in-features, else the lhs batch
    let nb = out.shape[os[0]] as u64;
    let cg = rhs.shape[rs[1]] as u64;
    let oq = (rhs.shape[rs[0]] / groups.max(1)) as u64;
    let sp = |shape: &[usize], spec: &[usize]| spec[2..].iter().map(|&d| shape[d] as u64).collect::<Vec<u64>>();
    let (lsp, ksp, osp) = (sp(&lhs.shape, ls), sp(&rhs.shape, rs), sp(&out.shape, os));
    let stride = |st: &[usize], spec: &[usize], i: usize| st[spec[i]] as u64;
    let nsp = osp.len();
    for j in 0..nsp {
        let reach = osp[j].saturating_sub(1) * c.window_strides[j] as u64 + ksp[j].saturating_sub(1) * c.rhs_dilation[j] as u64;
        if reach >= limit / 2 || c.padding[j].0.unsigned_abs() >= limit / 2 {
            return Ok(None);
        }
    }
    let (kk, p) = (ksp.iter().product::<u64>(), osp.iter().product::<u64>());
    let (m, k, n) = (nb * p, kk * cg, oq);
    if m == 0 || k == 0 || n == 0 || groups == 0 {
        return Ok(None); // an empty output, or a sum over nothing: the host writes the zeros
    }
    let ty = vty(dt)?;
    let z = zero(dt);
    let ci_fast = stride(&lst, ls, 1) == 1;
    let mut src = String::new();
    let _ = writeln!(
        src,
        "// cranax conv_general_dilated {:?}x{:?} -> {:?} ({groups} groups of {m}x{k} @ {k}x{n}; strides {:?}, padding {:?}, lhs_dilation {:?}, rhs_dilation {:?})",
        lhs.shape, rhs.shape, out.shape, c.window_strides, c.padding, c.lhs_dilation, c.rhs_dilation
    );
    let _ = writeln!(src, "@group(0) @binding(0) var<storage, read> a: array<{}>;", sty(dt)?);
    let _ = writeln!(src, "@group(0) @binding(1) var<storage, read> b: array<{}>;", sty(dt)?);
    let _ = writeln!(src, "@group(0) @binding(2) var<storage, read_write> c: array<{}>;", sty(dt)?);
    // K index -> (in-feature ci, kernel position kq), the layout chosen above.
    let split_k = if ci_fast {
        format!("  let ci = ki % {cg}u;\n  var kq = ki / {cg}u;\n")
    } else {
        format!("  let ci = ki / {kk}u;\n  var kq = ki % {kk}u;\n")
    };
    // The patch element: the input at the position the output position and kernel offset reach.
    let _ = writeln!(src, "fn a_at(g: u32, mi: u32, ki: u32) -> {ty} {{");
    let _ = writeln!(src, "  let nn = mi / {p}u;");
    let _ = writeln!(src, "  var q = mi % {p}u;");
    src.push_str(&split_k);
    let (x_n, x_c) = (stride(&lst, ls, 0), stride(&lst, ls, 1));
    if by_features {
        let _ = writeln!(src, "  var off = nn * {x_n}u + (g * {cg}u + ci) * {x_c}u;");
    } else {
        let _ = writeln!(src, "  var off = (g * {nb}u + nn) * {x_n}u + ci * {x_c}u;");
    }
    for j in (0..nsp).rev() {
        let (ws, rd, ld, lo) = (c.window_strides[j], c.rhs_dilation[j], c.lhs_dilation[j], c.padding[j].0);
        let _ = writeln!(src, "  {{");
        let _ = writeln!(src, "    let o = q % {}u; q = q / {}u;", osp[j], osp[j]);
        let _ = writeln!(src, "    let t = kq % {}u; kq = kq / {}u;", ksp[j], ksp[j]);
        let _ = writeln!(src, "    var u = i32(o * {ws}u + t * {rd}u) - ({lo}i);");
        let _ = writeln!(src, "    if (u < 0i) {{ return {z}; }}");
        if ld > 1 {
            let _ = writeln!(src, "    if (u % {ld}i != 0i) {{ return {z}; }}");
            let _ = writeln!(src, "    u = u / {ld}i;");
        }
        let _ = writeln!(src, "    if (u >= {}i) {{ return {z}; }}", lsp[j]);
        let _ = writeln!(src, "    off = off + u32(u) * {}u;", stride(&lst, ls, j + 2));
        let _ = writeln!(src, "  }}");
    }
    let _ = writeln!(src, "  return a[off];");
    let _ = writeln!(src, "}}");
    // The kernel element of (K index, out-feature ni) of group g.
    let _ = writeln!(src, "fn b_at(g: u32, ki: u32, ni: u32) -> {ty} {{");
    src.push_str(&split_k);
    let _ = writeln!(src, "  var off = (g * {oq}u + ni) * {}u + ci * {}u;", stride(&rst, rs, 0), stride(&rst, rs, 1));
    for j in (0..nsp).rev() {
        let _ = writeln!(src, "  off = off + (kq % {}u) * {}u; kq = kq / {}u;", ksp[j], stride(&rst, rs, j + 2), ksp[j]);
    }
    let _ = writeln!(src, "  return b[off];");
    let _ = writeln!(src, "}}");
    // The output element of (image × position mi, out-feature ni) of group g.
    let _ = writeln!(src, "fn c_at(g: u32, mi: u32, ni: u32) -> u32 {{");
    let _ = writeln!(src, "  var q = mi % {p}u;");
    let _ = writeln!(src, "  var off = (mi / {p}u) * {}u + (g * {oq}u + ni) * {}u;", stride(&ost, os, 0), stride(&ost, os, 1));
    for j in (0..nsp).rev() {
        let _ = writeln!(src, "  off = off + (q % {}u) * {}u; q = q / {}u;", osp[j], stride(&ost, os, j + 2), osp[j]);
    }
    let _ = writeln!(src, "  return off;");
    let _ = writeln!(src, "}}");
    let Some(grid) = gemm_main(&mut src, Gemm { nb: groups as u64, m, k, n, dt }, max_groups)? else {
        return Ok(None);
    };
    let bindings = vec![
        Binding { slot: slots[0], write: false },
        Binding { slot: slots[1], write: false },
        Binding { slot: slots[2], write: true },
    ];
    Ok(Some(KernelShader { source: src, bindings, groups: grid, second: None }))
}
