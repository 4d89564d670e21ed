//! How a `Kernel`'s loop nest is laid out before any code is emitted (`codegen` emits it): the streams and
//! their strides, the loop axes, the vectorization mode and the strip plan.
//!
//! `[begin, end)` ranges over the flattened (row-major) non-reduced ("outer") axes of the domain.
//!
//! Streams: every kernel input and every output is a strided byte address walked through the domain
//! (`Store` outputs row-major over the domain; `Reduce`/`ArgReduce` outputs row-major over the outer axes,
//! stride 0 along reduced axes). Axes of size 1 are dropped, and adjacent axes that every stream walks
//! contiguously are merged (coalesced), so `x[1000, 1000] + 1` is one loop of 10^6 points.
//!
//! Loop nest: the outer range is walked row by row along the innermost outer axis (the other outer indices
//! advance by a carry chain), and inside each point one real loop per reduced axis, with accumulators in
//! registers. Vectorization (`Mode`), when every live value has one element width (4 bytes → 4 lanes,
//! 8 bytes → 2 lanes; float16/bfloat16 and 8/16-bit integers count as 4: they are widened to i32 lanes on
//! load and narrowed on store (`simd::lane_size`), and converted to and from f32x4 with vector integer code;
//! no 8/16-bit integer is reduced) and no output is an arg-reduction:
//! - `InnerRed`: the innermost reduced axis is contiguous or broadcast (stride 0 or one element) for every
//!   stream: it runs `unroll` vectors per iteration into vector accumulators, then a scalar tail into a
//!   scalar accumulator; the vector accumulators are combined (in accumulator, then lane order) and the tail
//!   added at the end. The order depends only on the axis length: deterministic.
//!   Float32/float64 sums over trailing axes take XLA:CPU 0.10.2's order instead (`sum_order`, `SumOrder`):
//!   YNNPACK's lanes and blocks from 4096 elements (`InnerRed`, one vector per body copy, or scalar lanes in
//!   `Scalar` mode: the same bits), XLA's left-to-right loop and windows of 32 below (`Scalar`; rows past
//!   32 `InnerRed`, a vector of whole windows at a time, lane i one window's chain:
//!   `codegen::xla_vector_groups`; plain rows of at most 32 `OuterVec`, lane i one row's chain:
//!   `codegen::emit_xla_rows`); float products take XLA's loop and windows at every size (YNNPACK has
//!   none); small sums over several axes, or over one axis before a kept one, XLA's windows of 32 per axis
//!   and the grid order LLVM gives its reduce loop (`SumOrder::XlaGrid`, `Scalar`: `codegen::emit_xla_grid`). Those
//!   kernels run no strips and never split a row across threads.
//! - `OuterVec`: otherwise, when the innermost outer axis is contiguous or broadcast for every stream:
//!   each row runs `unroll` vectors of outer points per iteration (each lane a separate point: reductions
//!   keep their sequential order per lane), then scalar points for the rest of the row. Elementwise kernels
//!   are this case. Vector and scalar points compute bit-identical values, so where a row is cut between
//!   vector and tail (thread split points) never changes results.
//!   (NaN bits excepted: when both operands of an add or multiply are NaN, x86 returns the first
//!   operand's NaN, and instruction selection may swap a commutative operation's operands, e.g. to fold
//!   a load; so the sign and payload of such a NaN can depend on the path. Every other value, -0.0 and
//!   subnormals included, is the same.)
//! - `Scalar`: everything else (transposes, strided reads, mixed widths, argmax/argmin).
//!
//! A one-element gather (`KOp::Gather`) is a scalar load in every mode: in a vector loop each lane reads at
//! its own clamped index, and the loaded lanes are assembled into the vector, so vector and scalar points
//! read the same elements.
//!
//! Strip mode (`strip_plan`): an elementwise `OuterVec` kernel on f32 lanes whose body has math functions with
//! block routines (`blockmath`: exp, log, tanh, ... compiled for AVX-512/AVX2, wider than Cranelift's 128-bit
//! vectors; on f64 lanes the float64 ones, `blockmath::FUNCTIONS64`, with 8-byte strip arrays) walks each row in strips of about `STRIP` points first (a length that divides the row into equal
//! strips up to a few points, a multiple of the vector step); an `InnerRed` kernel (a row reduction such as
//! `sum(exp(x - m))`) does the same along its reduced axis, its last loop feeding the vector accumulators in
//! the order the plain loop would. Per strip, for each such function in body order: its operands (two for
//! `pow`) are computed into stack arrays (one small vector loop; a contiguous input is used in place; values that loop computes
//! and later loops need go to arrays of their own too, so no loop computes them again), the block routine
//! maps the array, and a last loop computes the outputs from the inputs and the arrays. The rest of a row (a few points)
//! runs the plain vector loop and scalar tail, whose inline math is bit-identical to the block routines, so
//! strips never change results (NaN bits as above). Kernels whose outputs are large (`STREAM_MIN_BYTES`, 32-bit
//! elements) also run in strips, with or without math: the last loop writes the outputs to stack arrays and
//! `blockmath`'s streaming copy moves them to memory with non-temporal stores.
use crate::error::{Error, Result};
use crate::ir::{DType, ReduceOp};
use crate::plan::{KOp, Kernel, OutputKind};

use super::blockmath;
use super::math_fn::MathFn;
use super::simd;
use super::threefry;

/// The number of points of the non-reduced axes: the `end` a full run passes.
pub fn outer_len(k: &Kernel) -> Result<u64> {
    k.domain
        .iter()
        .enumerate()
        .filter(|(d, _)| !k.reduce_axes.contains(d))
        .try_fold(1u64, |a, (_, &n)| a.checked_mul(n as u64))
        .filter(|&n| n <= i64::MAX as u64)
        .ok_or_else(|| Error::Codegen(format!("kernel {}: domain {:?} too large", k.name, k.domain)))
}

pub(super) fn to_i64(v: i128, what: &str) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::Codegen(format!("{what} {v} does not fit in 64 bits")))
}

/// How the kernel's loops are vectorized (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Scalar,
    OuterVec,
    InnerRed,
}

/// One loop axis after dropping size-1 axes and coalescing.
#[derive(Debug, Clone)]
pub(super) struct Axis {
    pub n: u64,
    /// Byte stride per stream.
    pub strides: Vec<i64>,
    /// The domain axis, when an `Iota` reads it (such axes are never merged).
    pub iota: Option<usize>,
}

fn coalesce(axes: Vec<Axis>) -> Vec<Axis> {
    let mut out: Vec<Axis> = Vec::new();
    for a in axes {
        if let Some(p) = out.last_mut() {
            if p.iota.is_none()
                && a.iota.is_none()
                && p.strides.iter().zip(&a.strides).all(|(&ps, &s)| Some(ps) == s.checked_mul(a.n as i64))
            {
                p.n *= a.n;
                p.strides = a.strides;
                continue;
            }
        }
        out.push(a);
    }
    out
}

fn liveness(k: &Kernel) -> Vec<bool> {
    live_from(k, k.outputs.iter().map(|o| o.value), |_| false)
}

/// The instructions `roots` need, not looking past those where `computed` holds (their values are had
/// already).
pub(super) fn live_from(k: &Kernel, roots: impl IntoIterator<Item = usize>, computed: impl Fn(usize) -> bool) -> Vec<bool> {
    let mut live = vec![false; k.body.len()];
    for r in roots {
        if let Some(l) = live.get_mut(r) {
            *l = true;
        }
    }
    for i in (0..k.body.len()).rev() {
        if !live[i] || computed(i) {
            continue;
        }
        for j in simd::operands(&k.body[i].op) {
            if j < i {
                live[j] = true;
            }
        }
    }
    live
}

/// Strip mode's plan for one kernel.
#[derive(Debug, Clone, Default)]
pub struct StripPlan {
    /// The body's math operations that have block routines, in body order (unary, or binary: `pow`).
    pub ops: Vec<(usize, MathFn)>,
    /// The body's threefry hashes (`threefry`), run before `ops`, in body order.
    pub hashes: Vec<threefry::Hash>,
    /// Outputs go to memory through the streaming copy.
    pub stream: bool,
    /// The routines are the float64 ones (`blockmath::FUNCTIONS64`) of a kernel on f64x2 lanes, whose strip
    /// arrays hold 8-byte elements; else the float32 ones (4-byte elements).
    pub f64: bool,
    /// Points per strip: the vectorized axis of n points cut into ceil(n / STRIP) strips of equal length,
    /// rounded down to a multiple of the vector loop's step.
    pub len: u64,
}

impl StripPlan {
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.hashes.is_empty() && !self.stream
    }

    /// Whether strips call any routine besides the streaming copy.
    pub fn has_routines(&self) -> bool {
        !self.ops.is_empty() || !self.hashes.is_empty()
    }

    /// Bytes per element of the strip arrays.
    pub fn elem_bytes(&self) -> u32 {
        if self.f64 { 8 } else { 4 }
    }
}

/// Kernels whose outputs total at least this many bytes write them with non-temporal stores.
pub const STREAM_MIN_BYTES: u64 = 16 << 20;

/// The most points per strip (each strip array holds this many f32, or f64).
pub const STRIP: u64 = 512;
/// Kernels with more block-routine operations than this stay inline, and kernels with more outputs do not
/// stream (one stack array of `STRIP` f32 each).
const STRIP_MAX_OPS: usize = 8;
/// Kernels with more threefry hashes than this hash inline.
const STRIP_MAX_HASHES: usize = 4;

/// What strip mode does for this kernel (empty: strip mode off).
pub fn strip_plan(k: &Kernel, out_dtypes: &[DType]) -> Result<StripPlan> {
    let (outer, red, esize, live) = axes(k, out_dtypes)?;
    if sum_order(k, &red, &live).is_some() {
        // (an ordered sum's loop adds in its own blocks, which strips would not follow)
        return Ok(StripPlan::default());
    }
    let (mode, lanes, unroll) = choose_mode(k, out_dtypes, &outer, &red, &esize, &live);
    strip_ops(k, out_dtypes, mode, (lanes, unroll), &outer, &red, &live)
}

fn strip_ops(
    k: &Kernel, out_dtypes: &[DType], mode: Mode, (lanes, unroll): (u32, u32), outer: &[Axis], red: &[Axis],
    live: &[bool],
) -> Result<StripPlan> {
    let off = StripPlan::default();
    let step = (lanes * unroll) as u64;
    // float32 kernels run on f32x4 lanes, float64 ones on f64x2: the strips of the latter call the float64
    // routines (and neither hash nor stream: those move 32-bit words).
    let f64 = lanes == 2;
    if !(lanes == 4 || f64) || blockmath::isa().is_none() {
        return Ok(off);
    }
    // The vectorized axis: rows of elementwise kernels, or the reduced axis of row reductions.
    let axis = match mode {
        Mode::OuterVec if red.is_empty() && k.outputs.iter().all(|o| o.kind == OutputKind::Store) => outer.last(),
        // (Stores beside the reductions, as in softmax's `exp(x - m)` and its sum, walk the same axis.)
        Mode::InnerRed if !k.outputs.iter().any(|o| matches!(o.kind, OutputKind::ArgReduce { .. })) => red.last(),
        _ => None,
    };
    let Some(n) = axis.map(|a| a.n).filter(|&n| n >= STRIP) else { return Ok(off) };
    let len = n / n.div_ceil(STRIP) / step * step;
    let mut ops = Vec::new();
    for (i, ins) in k.body.iter().enumerate() {
        if !live[i] {
            continue;
        }
        let dt = if f64 { DType::F64 } else { DType::F32 };
        let dt_in = |j: &usize| k.body.get(*j).is_some_and(|x| x.dtype == dt);
        let f = match &ins.op {
            KOp::Unary { op, a } if dt_in(a) => MathFn::from_unary(*op),
            // (binary routines: pow, atan2, float32 only)
            KOp::Binary { op, a, b } if !f64 && dt_in(a) && dt_in(b) => super::math_fn::binary_math(*op, DType::F32),
            _ => None,
        };
        if let Some(f) = f {
            let has = if f64 { blockmath::supports64(f) } else { blockmath::supports(f) };
            if has && ins.dtype == dt {
                ops.push((i, f));
            }
        }
    }
    if ops.len() > STRIP_MAX_OPS {
        ops.clear();
    }
    // (Each hash takes 12 strip arrays: a few per kernel at most.)
    let mut hashes = if !f64 && threefry::routine().is_some() { threefry::find(k, live) } else { Vec::new() };
    if hashes.len() > STRIP_MAX_HASHES {
        hashes.clear();
    }
    let nin = k.inputs.len();
    let words = !f64
        && mode == Mode::OuterVec
        && k.outputs.iter().enumerate().all(|(o, _)| {
            out_dtypes.get(o).is_some_and(|d| d.size() == 4) && axis.is_some_and(|a| a.strides.get(nin + o) == Some(&4))
        });
    let bytes = outer_len(k)?.saturating_mul(4).saturating_mul(k.outputs.len() as u64);
    // (One stack array per output: at most `STRIP_MAX_OPS` of them.)
    let stream = words
        && (1..=STRIP_MAX_OPS).contains(&k.outputs.len())
        && bytes >= STREAM_MIN_BYTES
        && blockmath::stream().is_some();
    Ok(StripPlan { ops, hashes, stream, len, f64 })
}

/// The vectorization `build_kernel` would choose, with (lanes, unroll).
pub fn plan_mode(k: &Kernel, out_dtypes: &[DType]) -> Result<(Mode, u32, u32)> {
    let (g_outer, g_red, esize, live) = axes(k, out_dtypes)?;
    Ok(choose_mode(k, out_dtypes, &g_outer, &g_red, &esize, &live))
}

#[allow(clippy::type_complexity)]
pub(super) fn axes(k: &Kernel, out_dtypes: &[DType]) -> Result<(Vec<Axis>, Vec<Axis>, Vec<i64>, Vec<bool>)> {
    let rank = k.domain.len();
    let live = liveness(k);
    let mut iota_axis = vec![false; rank];
    for (i, ins) in k.body.iter().enumerate() {
        if let KOp::Iota { axis } = ins.op {
            if live[i] && axis < rank {
                iota_axis[axis] = true;
            }
        }
    }
    // Arg-reductions read the index of their (single) reduced axis like an iota.
    if k.outputs.iter().any(|o| matches!(o.kind, OutputKind::ArgReduce { .. })) {
        if let Some(&a) = k.reduce_axes.first() {
            if a < rank {
                iota_axis[a] = true;
            }
        }
    }
    let is_red: Vec<bool> = (0..rank).map(|d| k.reduce_axes.contains(&d)).collect();
    let strides = stream_strides(k, out_dtypes)?;
    let esize: Vec<i64> = k.inputs.iter().map(|i| i.dtype.size() as i64).chain(out_dtypes.iter().take(k.outputs.len()).map(|d| d.size() as i64)).collect();
    let mk = |d: usize| Axis {
        n: k.domain[d] as u64,
        strides: strides.iter().map(|s| s.get(d).copied().unwrap_or(0)).collect(),
        iota: iota_axis[d].then_some(d),
    };
    let outer = coalesce((0..rank).filter(|&d| !is_red[d] && k.domain[d] > 1).map(mk).collect());
    let red = coalesce(k.reduce_axes.iter().copied().filter(|&d| d < rank && k.domain[d] > 1).map(mk).collect());
    Ok((outer, red, esize, live))
}

/// Per stream (inputs, then outputs), per domain axis, the byte stride.
fn stream_strides(k: &Kernel, out_dtypes: &[DType]) -> Result<Vec<Vec<i64>>> {
    let rank = k.domain.len();
    let mut strides: Vec<Vec<i64>> = Vec::new();
    for inp in &k.inputs {
        let es = inp.dtype.size() as i128;
        strides.push(inp.strides.iter().map(|&s| to_i64(s as i128 * es, "stride")).collect::<Result<Vec<_>>>()?);
    }
    for (o, out) in k.outputs.iter().enumerate() {
        let es = out_dtypes.get(o).ok_or_else(|| Error::Codegen(format!("kernel {}: no dtype for output {o}", k.name)))?.size() as i128;
        let mut st = vec![0i64; rank];
        let mut s = es;
        for d in (0..rank).rev() {
            if out.kind == OutputKind::Store || !k.reduce_axes.contains(&d) {
                st[d] = to_i64(s, "stride")?;
                s *= k.domain[d] as i128;
            }
        }
        strides.push(st);
    }
    Ok(strides)
}

/// Whether the kernel can run as chunks of its outermost reduced axis with partial results combined by
/// the runtime (`build_kernel(.., partial = true)`): only reductions (no stores, no arg-reductions), and a
/// reduced loop to split.
pub fn partial_eligible(k: &Kernel, out_dtypes: &[DType]) -> Result<bool> {
    if k.outputs.is_empty() || !k.outputs.iter().all(|o| matches!(o.kind, OutputKind::Reduce(_))) {
        return Ok(false);
    }
    let (_, red, _, live) = axes(k, out_dtypes)?;
    // (an ordered sum adds each row in one sequence: cutting it into chunks would change its bits)
    Ok(!red.is_empty() && sum_order(k, &red, &live).is_none())
}

/// The order in which a kernel's float sums add, where XLA:CPU 0.10.2 has one that cranax follows bit for bit
/// (`None`: the loop nest's own order, `InnerRed`'s vector accumulators; see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SumOrder {
    /// XLA's own reduce loop (a sum over fewer than `YNN_MIN_ELEMENTS` elements, a product at any size): a row of
    /// at most 32 is combined left to right; a longer one in windows of 32 of the row padded (zeros, ones) to a
    /// multiple of 32 (the lower half of the padding first), the window results the same way (XLA's
    /// tree-reduction rewrite).
    Xla,
    /// YNNPACK's sum kernel, which XLA:CPU hands reductions of at least `YNN_MIN_ELEMENTS` elements: lanes of 64
    /// bytes; each block of 4 lane-vectors is summed lanewise, blocks feed a tree of accumulators whose last
    /// level is Kahan-compensated, the lanes are folded in halves; a row longer than `ynn_chunk` runs as
    /// chunks of that length whose sums are folded in halves too (`codegen::emit_ynn`).
    Ynn,
    /// XLA's windows over several reduced axes, or over one reduced axis before a kept one (fewer than
    /// `YNN_MIN_ELEMENTS` elements, float sums, some reduced axis longer than 32): every reduced axis is
    /// zero-padded to a multiple of 32 (lower half first) and each 32×…×32 window is added row-major from +0
    /// (XLA's reduce-window loop); the grid of window sums is then reduced by XLA's reduce loop, whose adds
    /// are `reassoc` and which LLVM vectorizes over the grid's first axis: with two grid axes of A×B windows,
    /// A = 2 or 4, lane a adds row a's windows left to right and the lanes are folded in halves at the end
    /// (`(r0 + r1)`, `(r0 + r2) + (r1 + r3)`); otherwise (A = 3, one grid axis) left to right (measured in
    /// jaxlib 0.10.2's LLVM IR on an AVX-512 host; `codegen::emit_xla_grid`, `xla_grid`).
    XlaGrid,
}

/// XLA:CPU runs an instruction in YNNPACK when it or an operand spans at least this many elements
/// (`IsInstructionPreferredByYnn`; `_prng.YNN_MIN_ELEMENTS` on the Python side).
pub const YNN_MIN_ELEMENTS: u64 = 4096;

/// The elements of a row YNNPACK sums as one piece (128 KiB), for `dt`.
pub fn ynn_chunk(dt: DType) -> u64 {
    (128 << 10) / dt.size().max(1) as u64
}

/// Rows cut into more chunks than this keep the loop nest's order (a stack array holds the chunks' sums).
const YNN_MAX_CHUNKS: u64 = 1024;

/// The `SumOrder` of a kernel: its reductions are float32 or float64 sums, or products (of one dtype and one
/// op; stores beside them allowed), over its trailing axes, coalesced into one loop. Products: XLA's order. At least `YNN_MIN_ELEMENTS` points: YNNPACK's
/// order, unless the body computes math functions or threefry hashes (in such a fusion YNNPACK's own
/// polynomials give other bits anyway, and the strips of the plain loop are faster), or several reduced axes
/// are longer than one chunk (measured: not one run of chunks). Fewer: XLA's order, over one reduced axis;
/// float sums over several axes, or one before a kept axis, `XlaGrid` where `xla_grid` knows the order.
pub fn sum_order(k: &Kernel, red: &[Axis], live: &[bool]) -> Option<SumOrder> {
    let mut dt = None;
    let mut prod = None;
    for o in &k.outputs {
        match o.kind {
            OutputKind::Store => {}
            OutputKind::Reduce(op @ (ReduceOp::Sum | ReduceOp::Prod)) => {
                let d = k.body.get(o.value)?.dtype;
                let p = op == ReduceOp::Prod;
                if !matches!(d, DType::F32 | DType::F64) || dt.is_some_and(|x| x != d) || prod.is_some_and(|x| x != p) {
                    return None;
                }
                dt = Some(d);
                prod = Some(p);
            }
            _ => return None,
        }
    }
    let dt = dt?;
    let rank = k.domain.len();
    let long_red: Vec<usize> = k.reduce_axes.iter().copied().filter(|&d| d < rank && k.domain[d] > 1).collect();
    let last_kept = (0..rank).filter(|d| !k.reduce_axes.contains(d) && k.domain[*d] > 1).max();
    let total = k.domain.iter().try_fold(1u64, |a, &n| a.checked_mul(n as u64))?;
    let before_kept = long_red.iter().any(|&d| last_kept.is_some_and(|l| d < l));
    if prod == Some(false) && total < YNN_MIN_ELEMENTS && (long_red.len() > 1 || before_kept) {
        let iota_red = k.body.iter().enumerate().any(|(i, ins)| live[i] && matches!(ins.op, KOp::Iota { axis } if long_red.contains(&axis)));
        return (!iota_red && xla_grid(&long_red.iter().map(|&d| k.domain[d] as u64).collect::<Vec<_>>()).is_some())
            .then_some(SumOrder::XlaGrid);
    }
    if red.len() != 1 || before_kept {
        return None;
    }
    // (YNNPACK takes no products: XLA:CPU multiplies in its own windows at every size, measured)
    if total < YNN_MIN_ELEMENTS || prod == Some(true) {
        return (long_red.len() == 1).then_some(SumOrder::Xla);
    }
    let math = k.body.iter().enumerate().any(|(i, ins)| {
        live[i]
            && match &ins.op {
                KOp::Unary { op, .. } => MathFn::from_unary(*op).is_some(),
                KOp::Binary { op, .. } => super::math_fn::binary_math(*op, ins.dtype).is_some(),
                _ => false,
            }
    });
    let n = red[0].n;
    if math
        || !threefry::find(k, live).is_empty()
        || (long_red.len() > 1 && n > ynn_chunk(dt))
        || n.div_ceil(ynn_chunk(dt)) > YNN_MAX_CHUNKS
    {
        return None;
    }
    Some(SumOrder::Ynn)
}

/// `sum_order` of a kernel and the number of points of its reduced loops.
pub fn kernel_sum_order(k: &Kernel, out_dtypes: &[DType]) -> Result<Option<(SumOrder, u64)>> {
    let (_, red, _, live) = axes(k, out_dtypes)?;
    Ok(sum_order(k, &red, &live).map(|o| (o, red.iter().map(|a| a.n).product())))
}

/// The window geometry of `SumOrder::XlaGrid` for reduced axes of lengths `ns` (those longer than 1, in domain
/// order): per axis (low padding, windows), and whether the grid is reduced in row lanes (`Some(A)`: A rows of
/// windows, one lane each) or left to right (`None`). `None` overall where XLA's order is not known here: no
/// axis longer than 32 (LLVM vectorizes such small reduce loops by trip counts: measured 2×3, 4×2, 20×2 and
/// 2×2×2 in other orders than row-major), a grid axis of more than 32 windows (a second rewrite), or more than
/// two grid axes, or a last axis of three or more, longer than 32, padded by one element at its top only (n = 31
/// mod 32; with two axes that is `xla_split_column`'s order).
#[allow(clippy::type_complexity)]
pub fn xla_grid(ns: &[u64]) -> Option<(Vec<(u64, u64)>, Option<u64>)> {
    if !ns.iter().any(|&n| n > 32) || ns.iter().any(|&n| n > 32 * 32) {
        return None;
    }
    if ns.len() > 2 && ns.last().is_some_and(|&n| n > 32 && n % 32 == 31) {
        return None;
    }
    let geo: Vec<(u64, u64)> = ns
        .iter()
        .map(|&n| {
            let w = n.div_ceil(32);
            ((32 * w - n) / 2, w)
        })
        .collect();
    let grid: Vec<u64> = geo.iter().map(|g| g.1).filter(|&w| w > 1).collect();
    match grid[..] {
        [_] => Some((geo, None)),
        [a, _] if a == 2 || a == 4 => Some((geo, Some(a))),
        [3, _] => Some((geo, None)),
        _ => None,
    }
}

/// Whether two reduced axes of `XlaGrid` sum their windows with the last column apart: the last axis is longer
/// than 32 with n = 31 mod 32 (padded by one element at its top), and LLVM splits the in-bounds test of the
/// window's column 31 out of the row loop, so a window whose column 31 is real adds its rows' columns 0..30
/// row-major, then column 31 top to bottom (jaxlib 0.10.2's LLVM IR for (40, 63); JAX's sums matched on
/// (40, 63), (20, 95), (64, 63), (2, 63), (33, 63), (10, 255), (50, 63), (12, 159), (7, 95), (31, 127), both
/// dtypes).
pub fn xla_split_column(ns: &[u64]) -> bool {
    ns.len() == 2 && ns[1] > 32 && ns[1] % 32 == 31
}

/// The kernel's reduced axes longer than 1, uncoalesced, in domain order (`SumOrder::XlaGrid` walks them).
pub(super) fn red_dims(k: &Kernel, out_dtypes: &[DType]) -> Result<Vec<Axis>> {
    let strides = stream_strides(k, out_dtypes)?;
    let rank = k.domain.len();
    Ok((0..rank)
        .filter(|d| k.reduce_axes.contains(d) && k.domain[*d] > 1)
        .map(|d| Axis { n: k.domain[d] as u64, strides: strides.iter().map(|s| s.get(d).copied().unwrap_or(0)).collect(), iota: None })
        .collect())
}

/// The length of the axis the partial variant splits, and the product of the other reduced loops.
pub fn partial_axis(k: &Kernel, out_dtypes: &[DType]) -> Result<(u64, u64)> {
    let (_, red, _, _) = axes(k, out_dtypes)?;
    let first = red.first().map(|a| a.n).unwrap_or(1);
    let rest = red.iter().skip(1).fold(1u64, |a, x| a.saturating_mul(x.n));
    Ok((first, rest))
}

thread_local! {
    static NO_SIMD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True when SIMD is off for this thread's compiles (`without_simd`) or the process's (`CRANAX_CPU_NO_SIMD=1`).
pub fn simd_disabled() -> bool {
    NO_SIMD.with(|c| c.get()) || std::env::var_os("CRANAX_CPU_NO_SIMD").is_some_and(|v| v == "1")
}

/// Runs `f` with vectorization off on this thread (kernels compiled inside are all-scalar): tests compare
/// the two code paths. `CRANAX_CPU_NO_SIMD=1` turns it off process-wide.
pub fn without_simd<R>(f: impl FnOnce() -> R) -> R {
    let old = NO_SIMD.with(|c| c.replace(true));
    let r = f();
    NO_SIMD.with(|c| c.set(old));
    r
}

pub(super) fn choose_mode(k: &Kernel, out_dtypes: &[DType], outer: &[Axis], red: &[Axis], esize: &[i64], live: &[bool]) -> (Mode, u32, u32) {
    let scalar = (Mode::Scalar, 1, 1);
    if NO_SIMD.with(|c| c.get()) || std::env::var_os("CRANAX_CPU_NO_SIMD").is_some_and(|v| v == "1") {
        return scalar;
    }
    let mut size = None;
    let mut n_live = 0;
    // float64 arithmetic between float32 values (the f32 multiply-adds `_prng.fma` rounds once through
    // f64) rides in 4-lane kernels as two f64x2 halves (`simd::emit`), instead of making the kernel scalar
    let narrow_f64 = simd::narrow_f64_values(&k.body, live, k.outputs.iter().map(|o| o.value));
    for (i, ins) in k.body.iter().enumerate() {
        if !live[i] {
            continue;
        }
        n_live += 1;
        if narrow_f64.as_ref().is_some_and(|m| m[i]) {
            size.get_or_insert(4);
            continue;
        }
        let mut dts = vec![ins.dtype];
        if let KOp::Unary { a, .. } = ins.op {
            if let Some(x) = k.body.get(a) {
                dts.push(x.dtype);
            }
        }
        for dt in dts {
            if dt == DType::Bool {
                continue;
            }
            let ds = simd::lane_size(dt);
            match size {
                None => size = Some(ds),
                Some(s) if s == ds => {}
                Some(_) => return scalar,
            }
        }
    }
    let Some(lanes) = size.and_then(simd::lanes_for) else { return scalar };
    for (o, out) in k.outputs.iter().enumerate() {
        match out.kind {
            OutputKind::ArgReduce { .. } => return scalar,
            OutputKind::Reduce(op) => {
                let dt = k.body.get(out.value).map(|i| i.dtype).unwrap_or(DType::Bool);
                // (8/16-bit integer accumulators are not held in i32 lanes: `simd::lane_size`)
                if (dt == DType::I64 && matches!(op, ReduceOp::Max | ReduceOp::Min)) || dt.is_narrow_int() {
                    return scalar;
                }
            }
            OutputKind::Store => {}
        }
        if !simd::fits(out_dtypes[o], lanes) {
            return scalar;
        }
    }
    let ok = |a: &Axis| a.strides.iter().zip(esize).all(|(&s, &e)| s == 0 || s == e);
    match sum_order(k, red, live) {
        // Rows of at most 32 add left to right in the scalar loop; longer ones run their full windows of 32 a
        // vector of windows at a time (`codegen::xla_vector_groups`: contiguous loads, transposed in registers)
        Some(SumOrder::Xla) => {
            let reduce_only = k.outputs.iter().all(|o| matches!(o.kind, OutputKind::Reduce(_)));
            let rdt = k.outputs.first().and_then(|o| k.body.get(o.value)).map(|i| i.dtype);
            let fit = rdt.and_then(|d| simd::lanes_for(d.size())) == Some(lanes);
            let Some(r) = red.last().filter(|r| reduce_only && fit && ok(r)) else { return scalar };
            if r.n > 32 {
                return (Mode::InnerRed, lanes, 1);
            }
            // Rows of at most 32: L contiguous rows at a time, lane i row i's chain (`codegen::emit_xla_rows`,
            // transposed like the windows); the body may not ask for its outer index (iota) or run strips
            let nin = k.inputs.len();
            let outs_contig = outer.last().is_some_and(|a| a.n >= lanes as u64 && (nin..a.strides.len()).all(|s| a.strides[s] == esize[s]));
            let plain = threefry::find(k, live).is_empty()
                && k.body.iter().enumerate().all(|(i, ins)| {
                    !live[i]
                        || match &ins.op {
                            KOp::Iota { .. } => false,
                            KOp::Unary { op, .. } => MathFn::from_unary(*op).is_none(),
                            KOp::Binary { op, .. } => super::math_fn::binary_math(*op, ins.dtype).is_none(),
                            _ => true,
                        }
                });
            return if outs_contig && plain { (Mode::OuterVec, lanes, 1) } else { scalar };
        }
        // (small: the windows and the grid loop element by element, `codegen::emit_xla_grid`)
        Some(SumOrder::XlaGrid) => return scalar,
        // one vector of `lanes` at a time into YNNPACK's lanes (`codegen::emit_ynn`)
        Some(SumOrder::Ynn) => return if red.last().is_some_and(ok) { (Mode::InnerRed, lanes, 1) } else { scalar },
        None => {}
    }
    // Light bodies (memory-bound) run 4 vectors per iteration, heavier ones 2 (fewer spills).
    let has_math = k.body.iter().enumerate().any(|(i, ins)| {
        live[i]
            && match &ins.op {
                KOp::Unary { op, .. } => super::math_fn::MathFn::from_unary(*op).is_some(),
                KOp::Binary { op, .. } => super::math_fn::binary_math(*op, ins.dtype).is_some(),
                _ => false,
            }
    });
    let unroll = if n_live <= 12 && !has_math { 4 } else { 2 };
    let lu = (lanes * unroll) as u64;
    let outer_ok = outer.last().is_some_and(|a| ok(a) && a.n >= lanes as u64);
    if let Some(r) = red.last() {
        if ok(r) && (r.n >= lu || !outer_ok) && r.n >= lanes as u64 {
            return (Mode::InnerRed, lanes, unroll);
        }
    }
    if outer_ok {
        return (Mode::OuterVec, lanes, unroll);
    }
    scalar
}
