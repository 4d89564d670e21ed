//! Library primitives: operations that are not point-by-point loops and run as calls into plain Rust
//! routines (`backend::cpu::library`) rather than as fused kernels: `dot_general` (through the `gemm`
//! crate), `concatenate`, `pad`, `dynamic_slice`, `dynamic_update_slice`, `gather`, `scatter*`, `sort`
//! and the cumulative reductions. Fusion treats them as materialization boundaries: their operands are
//! buffers and their outputs are buffers that later kernels load.
//!
//! This module holds their IR side: the op enum with params, the wire params (parse and write), the
//! printed params and the shape rules.
//!
//! Wire params (JAX's names where JAX has them):
//! ```text
//!   dot_general {"lhs_contracting": [..], "rhs_contracting": [..], "lhs_batch": [..], "rhs_batch": [..],
//!                "preferred_element_type": dtype | null}
//!   concatenate {"dimension": int}
//!   pad {"padding_config": [[lo, hi, interior], ...]}            (lo/hi may be negative)
//!   dynamic_slice {"slice_sizes": [..]}        operands: operand, one scalar index per axis
//!   dynamic_update_slice {}                     operands: operand, update, one scalar index per axis
//!   gather {"offset_dims": [..], "collapsed_slice_dims": [..], "start_index_map": [..],
//!           "slice_sizes": [..], "mode": "clip" | "fill", "fill_value": number | "nan" | null}
//!   scatter / scatter-add / scatter-mul / scatter-min / scatter-max
//!          {"update_window_dims": [..], "inserted_window_dims": [..], "scatter_dims_to_operand_dims": [..],
//!           "mode": "clip" | "drop"}             operands: operand, indices, updates
//!   sort {"dimension": int, "is_stable": bool, "num_keys": int}   n operands → n outputs
//!   cumsum / cumprod / cummax / cummin {"axis": int, "reverse": bool}
//!   conv_general_dilated {"window_strides": [..], "padding": [[lo, hi], ..], "lhs_dilation": [..],
//!          "rhs_dilation": [..], "lhs_spec": [..], "rhs_spec": [..], "out_spec": [..],
//!          "feature_group_count": int, "batch_group_count": int, "preferred_element_type": dtype | null}
//!          (float32/float64 operands of one dtype; Python inlines every other case as im2col)
//!   reduce_window_sum / reduce_window_max / reduce_window_min
//!          {"window_dimensions": [..], "window_strides": [..], "padding": [[lo, hi], ..],
//!           "base_dilation": [..], "window_dilation": [..]}     (padding and holes hold the identity)
//!   select_and_scatter_add {"select_prim": "ge" | "le", "window_dimensions": [..], "window_strides": [..],
//!          "padding": [[lo, hi], ..]}          operands: source (window output shape), operand
//!   pure_callback / io_callback / debug_callback / debug_print
//!          {"callback": int, "results": [[dtype, [dims..]], ...]}   any operands → the listed results
//!   cholesky / lu / lu_pivots_to_permutation / qr / eigh / svd / triangular_solve   (see `ir::linalg`)
//! ```
//! A host callback calls back into the embedding program (Python) through the hook
//! `backend::host_callback` holds; `callback` is the id the embedder registered the function under.
//! Gather and scatter take their index vectors along the last axis of `indices` (JAX's convention).
use serde_json::{json, Map, Value};

use super::dtype::DType;
use super::program::{Aval, ReduceOp};

/// How out-of-range start indices of gather/scatter behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexMode {
    /// Clamp the start so that the whole window is in bounds (gather default; `promise_in_bounds`).
    Clip,
    /// gather: windows not wholly in bounds read the fill value; scatter: such updates are dropped.
    FillOrDrop,
}

/// How a scatter combines an update with the operand's element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterOp {
    Set,
    Add,
    Mul,
    Min,
    Max,
}

/// A window over every axis of an operand (XLA's ReduceWindow / SelectAndScatter).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowParams {
    pub window_dimensions: Vec<usize>,
    pub window_strides: Vec<usize>,
    pub padding: Vec<(i64, i64)>,
    pub base_dilation: Vec<usize>,
    pub window_dilation: Vec<usize>,
}

impl WindowParams {
    /// The output shape for an operand of `shape` (None when the params do not fit its rank).
    pub fn out_shape(&self, shape: &[usize]) -> Result<Vec<usize>, String> {
        let n = shape.len();
        let lens = [self.window_dimensions.len(), self.window_strides.len(), self.padding.len(),
            self.base_dilation.len(), self.window_dilation.len()];
        if lens.iter().any(|&l| l != n) {
            return Err(format!("window params {self:?} must have one entry per axis of shape {shape:?}"));
        }
        if [&self.window_dimensions, &self.window_strides, &self.base_dilation, &self.window_dilation]
            .iter()
            .any(|v| v.iter().any(|&x| x == 0))
        {
            return Err(format!("window dimensions, strides and dilations must be positive, got {self:?}"));
        }
        let dil = |d: usize, b: usize| if d == 0 { 0 } else { (d - 1) as i128 * b as i128 + 1 };
        Ok((0..n)
            .map(|i| {
                let a = dil(shape[i], self.base_dilation[i]) + self.padding[i].0 as i128 + self.padding[i].1 as i128;
                let b = dil(self.window_dimensions[i], self.window_dilation[i]);
                if a < b { 0 } else { ((a - b) / self.window_strides[i] as i128 + 1) as usize }
            })
            .collect())
    }
}

/// The params of `conv_general_dilated` (boxed in `LibOp::Conv`: the op enum stays small).
#[derive(Debug, Clone, PartialEq)]
pub struct ConvParams {
    pub window_strides: Vec<usize>,
    pub padding: Vec<(i64, i64)>,
    pub lhs_dilation: Vec<usize>,
    pub rhs_dilation: Vec<usize>,
    pub lhs_spec: Vec<usize>,
    pub rhs_spec: Vec<usize>,
    pub out_spec: Vec<usize>,
    pub feature_group_count: usize,
    pub batch_group_count: usize,
}

impl ConvParams {
    /// Output spatial sizes for the lhs/rhs spatial sizes (in spec order).
    pub fn out_spatial(&self, lhs_sp: &[usize], rhs_sp: &[usize]) -> Vec<usize> {
        let dil = |n: usize, d: usize| if n == 0 { 0 } else { (n - 1) as i128 * d as i128 + 1 };
        (0..lhs_sp.len())
            .map(|i| {
                let (lo, hi) = self.padding[i];
                let a = dil(lhs_sp[i], self.lhs_dilation[i]) + lo as i128 + hi as i128;
                let b = dil(rhs_sp[i], self.rhs_dilation[i]);
                if a < b { 0 } else { ((a - b) / self.window_strides[i] as i128 + 1) as usize }
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum LibOp {
    /// `dot_general`: contracting and batch dims of each side; output is batch dims, then lhs free dims,
    /// then rhs free dims. Operands are converted to the output dtype first when they differ from it.
    DotGeneral {
        lhs_contracting: Vec<usize>,
        rhs_contracting: Vec<usize>,
        lhs_batch: Vec<usize>,
        rhs_batch: Vec<usize>,
        preferred: Option<DType>,
    },
    Concatenate { dimension: usize },
    /// `(lo, hi, interior)` per axis; negative lo/hi crop.
    Pad { config: Vec<(i64, i64, i64)> },
    DynamicSlice { slice_sizes: Vec<usize> },
    DynamicUpdateSlice,
    Gather {
        offset_dims: Vec<usize>,
        collapsed_slice_dims: Vec<usize>,
        start_index_map: Vec<usize>,
        slice_sizes: Vec<usize>,
        mode: IndexMode,
        /// Value of out-of-bounds windows under `FillOrDrop` (NaN for floats, the minimum for ints when
        /// absent, as JAX's default).
        fill_value: Option<f64>,
    },
    Scatter {
        op: ScatterOp,
        update_window_dims: Vec<usize>,
        inserted_window_dims: Vec<usize>,
        scatter_dims_to_operand_dims: Vec<usize>,
        mode: IndexMode,
    },
    /// Sorts all operands along `dimension` by the first `num_keys` operands (lexicographically); floats
    /// order -0.0 == 0.0 and NaNs last, as JAX's comparator. Always stable.
    Sort { dimension: usize, is_stable: bool, num_keys: usize },
    /// Inclusive scan along `axis` (`Sum`, `Prod`, `Max`, `Min`), from the end when `reverse`.
    Cumulative { op: ReduceOp, axis: usize, reverse: bool },
    /// XLA's ConvGeneralDilated: specs are JAX's `ConvDimensionNumbers` (lhs/out: batch, feature,
    /// spatial...; rhs: out feature, in feature, spatial...); `padding` per spatial dim (may be negative).
    Conv(Box<ConvParams>),
    /// `reduce_window_sum/max/min` (`Sum`, `Max`, `Min`): the identity fills padding and base-dilation holes.
    ReduceWindow { op: ReduceOp, window: Box<WindowParams> },
    /// `select_and_scatter_add` (no dilation, as JAX): each source value added at its window's first
    /// maximum (`ge`) or minimum (`le`) of the operand.
    SelectAndScatterAdd { ge: bool, window: Box<WindowParams> },
    /// A materialized transpose done as a cache-blocked copy (made by `opt::transpose_copy` from a fused
    /// kernel that only moves elements; never sent by Python).
    TransposeCopy { permutation: Vec<usize> },
    /// `acc[M, N] + Σ_t rows[t, i] * cols[t, j]`, the products rounded and added one `t` at a time in order
    /// (from the last `t` when `reverse`): the final value of a scan carry that only accumulates outer
    /// products, `acc + outer(u_t, v_t)` (reverse mode's weight cotangents), computed after the loop from
    /// the stacked factors with the loop's roundings (made by `opt::accumulate`; never sent by Python).
    /// Batched factors `rows` [T, B, M], `cols` [T, B, N] add per step the product `Σ_b rows[t, b, i] *
    /// cols[t, b, j]`, one fused multiply-add chain over `b` from zero, as the loop's `h_t.T @ g_t` does.
    OuterAccumulate { reverse: bool },
    /// Dense linear algebra (`lax.linalg`: cholesky, lu, qr, eigh, svd, triangular_solve, ...): see
    /// `ir::linalg`.
    Linalg(super::linalg::LinalgOp),
    /// A call into the host program (`jax.pure_callback`, `io_callback`, `jax.debug.callback`): the
    /// embedder's function `callback` gets the operand buffers and returns buffers of `results`.
    HostCallback { kind: CallbackKind, callback: u64, results: Vec<Aval> },
    /// `fft` along the last axis of length `n` (rustfft/realfft). Complex values travel as (real, imag)
    /// pairs of f32/f64 operands: `Fft`/`Ifft` take and give a pair of shape `[..., n]`; `Rfft` takes a real
    /// `[..., n]` and gives a pair `[..., n/2 + 1]`; `Irfft` takes a pair `[..., n/2 + 1]` (the imaginary
    /// parts of the zero and Nyquist frequencies ignored, as NumPy) and gives a real `[..., n]`. The inverse
    /// transforms are scaled by `1/n`.
    Fft { kind: FftKind, n: usize },
}

/// What a host callback may do: a pure one may be removed when its results are unused or merged with an
/// identical call; the others have effects and always run, in program order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallbackKind {
    Pure,
    Io,
    Debug,
    /// `jax.debug.print` (JAX's `debug_print` primitive): a debug callback that formats and prints.
    Print,
}

/// The four transforms of `LibOp::Fft` (JAX's `FftType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FftKind {
    Fft,
    Ifft,
    Rfft,
    Irfft,
}

impl FftKind {
    pub fn name(self) -> &'static str {
        match self {
            FftKind::Fft => "FFT",
            FftKind::Ifft => "IFFT",
            FftKind::Rfft => "RFFT",
            FftKind::Irfft => "IRFFT",
        }
    }
}

impl LibOp {
    pub fn name(&self) -> &'static str {
        match self {
            LibOp::DotGeneral { .. } => "dot_general",
            LibOp::Concatenate { .. } => "concatenate",
            LibOp::Pad { .. } => "pad",
            LibOp::DynamicSlice { .. } => "dynamic_slice",
            LibOp::DynamicUpdateSlice => "dynamic_update_slice",
            LibOp::Gather { .. } => "gather",
            LibOp::Scatter { op, .. } => match op {
                ScatterOp::Set => "scatter",
                ScatterOp::Add => "scatter-add",
                ScatterOp::Mul => "scatter-mul",
                ScatterOp::Min => "scatter-min",
                ScatterOp::Max => "scatter-max",
            },
            LibOp::Sort { .. } => "sort",
            LibOp::Cumulative { op, .. } => match op {
                ReduceOp::Sum => "cumsum",
                ReduceOp::Prod => "cumprod",
                ReduceOp::Max => "cummax",
                ReduceOp::Min => "cummin",
                ReduceOp::And | ReduceOp::Or => "cumulative",
            },
            LibOp::Conv(_) => "conv_general_dilated",
            LibOp::ReduceWindow { op, .. } => match op {
                ReduceOp::Sum => "reduce_window_sum",
                ReduceOp::Max => "reduce_window_max",
                _ => "reduce_window_min",
            },
            LibOp::SelectAndScatterAdd { .. } => "select_and_scatter_add",
            LibOp::TransposeCopy { .. } => "transpose_copy",
            LibOp::OuterAccumulate { .. } => "outer_accumulate",
            LibOp::Linalg(op) => op.name(),
            LibOp::HostCallback { kind, .. } => match kind {
                CallbackKind::Pure => "pure_callback",
                CallbackKind::Io => "io_callback",
                CallbackKind::Debug => "debug_callback",
                CallbackKind::Print => "debug_print",
            },
            LibOp::Fft { .. } => "fft",
        }
    }

    /// Whether the op has effects beyond its results (it must run even when they are unused, and never
    /// be merged with another call).
    pub fn is_effectful(&self) -> bool {
        matches!(self, LibOp::HostCallback { kind, .. } if *kind != CallbackKind::Pure)
    }

    /// Parses a library primitive by name and wire params: `Ok(None)` when `name` is not one.
    pub fn parse(name: &str, params: &Map<String, Value>) -> Result<Option<LibOp>, (String, String)> {
        let get = |k: &str| params.get(k).ok_or_else(|| ("params".to_string(), format!("missing parameter \"{k}\"")));
        let perr = |k: &str, m: String| (format!("params.{k}"), m);
        let uint = |k: &str, v: &Value| -> Result<usize, (String, String)> {
            v.as_u64()
                .filter(|&n| n <= isize::MAX as u64)
                .map(|n| n as usize)
                .ok_or_else(|| perr(k, format!("expected a non-negative integer, got {v}")))
        };
        let list = |k: &str| -> Result<Vec<usize>, (String, String)> {
            let v = get(k)?;
            let a = v.as_array().ok_or_else(|| perr(k, format!("expected an array, got {v}")))?;
            a.iter().map(|x| uint(k, x)).collect()
        };
        let int = |k: &str| -> Result<usize, (String, String)> { uint(k, get(k)?) };
        // `[[lo, hi], ..]`: one integer pair per axis (windows and convolutions; negative pads crop)
        let pads = |k: &str| -> Result<Vec<(i64, i64)>, (String, String)> {
            let v = get(k)?;
            let rows = v.as_array().ok_or_else(|| perr(k, format!("expected an array, got {v}")))?;
            let n = |x: &Value| {
                x.as_i64()
                    .filter(|n| n.unsigned_abs() <= (1u64 << 48))
                    .ok_or_else(|| perr(k, format!("expected an integer, got {x}")))
            };
            rows.iter()
                .map(|r| {
                    let t = r
                        .as_array()
                        .filter(|t| t.len() == 2)
                        .ok_or_else(|| perr(k, format!("expected [lo, hi] pairs, got {r}")))?;
                    Ok((n(&t[0])?, n(&t[1])?))
                })
                .collect()
        };
        let flag = |k: &str, default: bool| -> Result<bool, (String, String)> {
            match params.get(k) {
                None | Some(Value::Null) => Ok(default),
                Some(Value::Bool(b)) => Ok(*b),
                Some(v) => Err(perr(k, format!("expected a bool, got {v}"))),
            }
        };
        let mode = |default: IndexMode| -> Result<IndexMode, (String, String)> {
            match params.get("mode") {
                None | Some(Value::Null) => Ok(default),
                Some(Value::String(s)) => match s.as_str() {
                    "clip" | "promise_in_bounds" => Ok(IndexMode::Clip),
                    "fill" | "drop" | "fill_or_drop" => Ok(IndexMode::FillOrDrop),
                    _ => Err(perr("mode", format!("unknown mode {s:?}"))),
                },
                Some(v) => Err(perr("mode", format!("expected a string, got {v}"))),
            }
        };
        let op = match name {
            "dot_general" => {
                let preferred = match params.get("preferred_element_type") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(
                        DType::from_short_name(s)
                            .ok_or_else(|| perr("preferred_element_type", format!("unknown dtype {s:?}")))?,
                    ),
                    Some(v) => return Err(perr("preferred_element_type", format!("expected a dtype name, got {v}"))),
                };
                LibOp::DotGeneral {
                    lhs_contracting: list("lhs_contracting")?,
                    rhs_contracting: list("rhs_contracting")?,
                    lhs_batch: list("lhs_batch")?,
                    rhs_batch: list("rhs_batch")?,
                    preferred,
                }
            }
            "concatenate" => LibOp::Concatenate { dimension: int("dimension")? },
            "pad" => {
                let v = get("padding_config")?;
                let rows = v.as_array().ok_or_else(|| perr("padding_config", format!("expected an array, got {v}")))?;
                let mut config = Vec::with_capacity(rows.len());
                for r in rows {
                    let t = r.as_array().filter(|t| t.len() == 3).ok_or_else(|| {
                        perr("padding_config", format!("expected [lo, hi, interior] triples, got {r}"))
                    })?;
                    let n = |x: &Value| {
                        x.as_i64()
                            .filter(|n| n.unsigned_abs() <= (1u64 << 48))
                            .ok_or_else(|| perr("padding_config", format!("expected an integer, got {x}")))
                    };
                    config.push((n(&t[0])?, n(&t[1])?, n(&t[2])?));
                }
                LibOp::Pad { config }
            }
            "dynamic_slice" => LibOp::DynamicSlice { slice_sizes: list("slice_sizes")? },
            "dynamic_update_slice" => LibOp::DynamicUpdateSlice,
            "gather" => {
                let fill_value = match params.get("fill_value") {
                    None | Some(Value::Null) => None,
                    Some(Value::Number(n)) => n.as_f64(),
                    Some(Value::Bool(b)) => Some(*b as u8 as f64),
                    Some(Value::String(s)) => Some(match s.as_str() {
                        "nan" | "NaN" => f64::NAN,
                        "inf" => f64::INFINITY,
                        "-inf" => f64::NEG_INFINITY,
                        _ => return Err(perr("fill_value", format!("bad value {s:?}"))),
                    }),
                    Some(v) => return Err(perr("fill_value", format!("expected a number, got {v}"))),
                };
                LibOp::Gather {
                    offset_dims: list("offset_dims")?,
                    collapsed_slice_dims: list("collapsed_slice_dims")?,
                    start_index_map: list("start_index_map")?,
                    slice_sizes: list("slice_sizes")?,
                    mode: mode(IndexMode::Clip)?,
                    fill_value,
                }
            }
            "scatter" | "scatter-add" | "scatter_add" | "scatter-mul" | "scatter_mul" | "scatter-min"
            | "scatter_min" | "scatter-max" | "scatter_max" => {
                let op = match &name[name.len().min(8)..] {
                    "" => ScatterOp::Set,
                    "add" => ScatterOp::Add,
                    "mul" => ScatterOp::Mul,
                    "min" => ScatterOp::Min,
                    _ => ScatterOp::Max,
                };
                LibOp::Scatter {
                    op,
                    update_window_dims: list("update_window_dims")?,
                    inserted_window_dims: list("inserted_window_dims")?,
                    scatter_dims_to_operand_dims: list("scatter_dims_to_operand_dims")?,
                    mode: mode(IndexMode::FillOrDrop)?,
                }
            }
            "sort" => LibOp::Sort {
                dimension: int("dimension")?,
                is_stable: flag("is_stable", true)?,
                num_keys: match params.get("num_keys") {
                    None | Some(Value::Null) => 1,
                    Some(v) => uint("num_keys", v)?,
                },
            },
            "outer_accumulate" => LibOp::OuterAccumulate { reverse: flag("reverse", false)? },
            "cumsum" | "cumprod" | "cummax" | "cummin" => LibOp::Cumulative {
                op: match name {
                    "cumsum" => ReduceOp::Sum,
                    "cumprod" => ReduceOp::Prod,
                    "cummax" => ReduceOp::Max,
                    _ => ReduceOp::Min,
                },
                axis: int("axis")?,
                reverse: flag("reverse", false)?,
            },
            "reduce_window_sum" | "reduce_window_max" | "reduce_window_min" | "select_and_scatter_add" => {
                let padding = pads("padding")?;
                let ones = vec![1; padding.len()];
                let opt_list = |k: &str| -> Result<Vec<usize>, (String, String)> {
                    match params.get(k) {
                        None | Some(Value::Null) => Ok(ones.clone()),
                        Some(_) => list(k),
                    }
                };
                let window = Box::new(WindowParams {
                    window_dimensions: list("window_dimensions")?,
                    window_strides: list("window_strides")?,
                    padding,
                    base_dilation: opt_list("base_dilation")?,
                    window_dilation: opt_list("window_dilation")?,
                });
                match name {
                    "select_and_scatter_add" => {
                        let ge = match params.get("select_prim").and_then(|v| v.as_str()) {
                            Some("ge") => true,
                            Some("le") => false,
                            _ => return Err(perr("select_prim", "expected \"ge\" or \"le\"".into())),
                        };
                        LibOp::SelectAndScatterAdd { ge, window }
                    }
                    _ => LibOp::ReduceWindow {
                        op: match name {
                            "reduce_window_sum" => ReduceOp::Sum,
                            "reduce_window_max" => ReduceOp::Max,
                            _ => ReduceOp::Min,
                        },
                        window,
                    },
                }
            }
            "conv_general_dilated" => {
                match params.get("preferred_element_type") {
                    None | Some(Value::Null) => {}
                    Some(v) => {
                        return Err(perr("preferred_element_type", format!("the core's conv takes none, got {v}")))
                    }
                }
                let padding = pads("padding")?;
                LibOp::Conv(Box::new(ConvParams {
                    window_strides: list("window_strides")?,
                    padding,
                    lhs_dilation: list("lhs_dilation")?,
                    rhs_dilation: list("rhs_dilation")?,
                    lhs_spec: list("lhs_spec")?,
                    rhs_spec: list("rhs_spec")?,
                    out_spec: list("out_spec")?,
                    feature_group_count: int("feature_group_count")?,
                    batch_group_count: int("batch_group_count")?,
                }))
            }
            "pure_callback" | "io_callback" | "debug_callback" | "debug_print" => {
                let kind = match name {
                    "pure_callback" => CallbackKind::Pure,
                    "io_callback" => CallbackKind::Io,
                    "debug_callback" => CallbackKind::Debug,
                    _ => CallbackKind::Print,
                };
                let callback = get("callback")?
                    .as_u64()
                    .ok_or_else(|| perr("callback", "expected a non-negative integer id".to_string()))?;
                let v = get("results")?;
                let rows = v.as_array().ok_or_else(|| perr("results", format!("expected an array, got {v}")))?;
                let mut results = Vec::with_capacity(rows.len());
                for r in rows {
                    let bad = || perr("results", format!("expected [dtype, [dims..]] pairs, got {r}"));
                    let t = r.as_array().filter(|t| t.len() == 2).ok_or_else(bad)?;
                    let dt = t[0].as_str().and_then(DType::from_short_name).ok_or_else(bad)?;
                    let dims = t[1].as_array().ok_or_else(bad)?;
                    let shape = dims.iter().map(|d| uint("results", d)).collect::<Result<Vec<_>, _>>()?;
                    results.push(Aval { dtype: dt, shape });
                }
                LibOp::HostCallback { kind, callback, results }
            }
            "fft" => LibOp::Fft {
                kind: match get("fft_type")?.as_str() {
                    Some("FFT") => FftKind::Fft,
                    Some("IFFT") => FftKind::Ifft,
                    Some("RFFT") => FftKind::Rfft,
                    Some("IRFFT") => FftKind::Irfft,
                    _ => return Err(perr("fft_type", "expected one of FFT, IFFT, RFFT, IRFFT".into())),
                },
                n: int("n")?,
            },
            _ => return Ok(super::linalg::LinalgOp::parse(name, params)?.map(LibOp::Linalg)),
        };
        Ok(Some(op))
    }

    /// The wire params (inverse of `parse`).
    pub fn to_json(&self) -> Value {
        match self {
            LibOp::DotGeneral { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, preferred } => json!({
                "lhs_contracting": lhs_contracting, "rhs_contracting": rhs_contracting,
                "lhs_batch": lhs_batch, "rhs_batch": rhs_batch,
                "preferred_element_type": preferred.map(|d| d.short_name()),
            }),
            LibOp::Concatenate { dimension } => json!({ "dimension": dimension }),
            LibOp::Pad { config } => {
                json!({ "padding_config": config.iter().map(|&(a, b, c)| vec![a, b, c]).collect::<Vec<_>>() })
            }
            LibOp::DynamicSlice { slice_sizes } => json!({ "slice_sizes": slice_sizes }),
            LibOp::DynamicUpdateSlice => json!({}),
            LibOp::Gather { offset_dims, collapsed_slice_dims, start_index_map, slice_sizes, mode, fill_value } => {
                let fv = match fill_value {
                    None => Value::Null,
                    Some(f) if f.is_nan() => json!("nan"),
                    Some(f) if f.is_infinite() => json!(if *f > 0.0 { "inf" } else { "-inf" }),
                    Some(f) => json!(f),
                };
                json!({
                    "offset_dims": offset_dims, "collapsed_slice_dims": collapsed_slice_dims,
                    "start_index_map": start_index_map, "slice_sizes": slice_sizes,
                    "mode": if *mode == IndexMode::Clip { "clip" } else { "fill" }, "fill_value": fv,
                })
            }
            LibOp::Scatter { update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, mode, .. } => {
                json!({
                    "update_window_dims": update_window_dims, "inserted_window_dims": inserted_window_dims,
                    "scatter_dims_to_operand_dims": scatter_dims_to_operand_dims,
                    "mode": if *mode == IndexMode::Clip { "clip" } else { "drop" },
                })
            }
            LibOp::Sort { dimension, is_stable, num_keys } => {
                json!({ "dimension": dimension, "is_stable": is_stable, "num_keys": num_keys })
            }
            LibOp::Cumulative { axis, reverse, .. } => json!({ "axis": axis, "reverse": reverse }),
            LibOp::Conv(c) => json!({
                "window_strides": c.window_strides,
                "padding": c.padding.iter().map(|&(a, b)| vec![a, b]).collect::<Vec<_>>(),
                "lhs_dilation": c.lhs_dilation, "rhs_dilation": c.rhs_dilation,
                "lhs_spec": c.lhs_spec, "rhs_spec": c.rhs_spec, "out_spec": c.out_spec,
                "feature_group_count": c.feature_group_count, "batch_group_count": c.batch_group_count,
                "preferred_element_type": Value::Null,
            }),
            LibOp::ReduceWindow { window: w, .. } => json!({
                "window_dimensions": w.window_dimensions, "window_strides": w.window_strides,
                "padding": w.padding.iter().map(|&(a, b)| vec![a, b]).collect::<Vec<_>>(),
                "base_dilation": w.base_dilation, "window_dilation": w.window_dilation,
            }),
            LibOp::SelectAndScatterAdd { ge, window: w } => json!({
                "select_prim": if *ge { "ge" } else { "le" },
                "window_dimensions": w.window_dimensions, "window_strides": w.window_strides,
                "padding": w.padding.iter().map(|&(a, b)| vec![a, b]).collect::<Vec<_>>(),
            }),
            LibOp::TransposeCopy { permutation } => json!({ "permutation": permutation }),
            LibOp::OuterAccumulate { reverse } => json!({ "reverse": reverse }),
            LibOp::Linalg(op) => op.to_json(),
            LibOp::HostCallback { callback, results, .. } => json!({
                "callback": callback,
                "results": results.iter().map(|a| json!([a.dtype.short_name(), a.shape])).collect::<Vec<_>>(),
            }),
            LibOp::Fft { kind, n } => json!({ "fft_type": kind.name(), "n": n }),
        }
    }

    /// Params as a printed jaxpr shows them (`name=value`, sorted by name).
    pub fn print_params(&self) -> Vec<String> {
        let t = |v: &[usize]| tuple(v);
        match self {
            LibOp::DotGeneral { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, preferred } => vec![
                format!(
                    "dimension_numbers=(({}, {}), ({}, {}))",
                    t(lhs_contracting),
                    t(rhs_contracting),
                    t(lhs_batch),
                    t(rhs_batch)
                ),
                format!("preferred_element_type={}", preferred.map(DType::numpy_name).unwrap_or("None")),
            ],
            LibOp::Concatenate { dimension } => vec![format!("dimension={dimension}")],
            LibOp::Pad { config } => {
                let rows: Vec<String> = config.iter().map(|(a, b, c)| format!("({a}, {b}, {c})")).collect();
                let body = if rows.len() == 1 { format!("{},", rows[0]) } else { rows.join(", ") };
                vec![format!("padding_config=({body})")]
            }
            LibOp::DynamicSlice { slice_sizes } => vec![format!("slice_sizes={}", t(slice_sizes))],
            LibOp::DynamicUpdateSlice => vec![],
            LibOp::Gather { offset_dims, collapsed_slice_dims, start_index_map, slice_sizes, mode, fill_value } => {
                let mut v = vec![
                    format!(
                        "dimension_numbers=GatherDimensionNumbers(offset_dims={}, collapsed_slice_dims={}, \
                         start_index_map={})",
                        t(offset_dims),
                        t(collapsed_slice_dims),
                        t(start_index_map)
                    ),
                    format!("fill_value={}", fill_value.map(|f| f.to_string()).unwrap_or_else(|| "None".into())),
                ];
                v.push(format!(
                    "mode={}",
                    if *mode == IndexMode::Clip { "GatherScatterMode.CLIP" } else { "GatherScatterMode.FILL_OR_DROP" }
                ));
                v.push(format!("slice_sizes={}", t(slice_sizes)));
                v
            }
            LibOp::Scatter { update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, mode, .. } => vec![
                format!(
                    "dimension_numbers=ScatterDimensionNumbers(update_window_dims={}, inserted_window_dims={}, \
                     scatter_dims_to_operand_dims={})",
                    t(update_window_dims),
                    t(inserted_window_dims),
                    t(scatter_dims_to_operand_dims)
                ),
                format!(
                    "mode={}",
                    if *mode == IndexMode::Clip { "GatherScatterMode.CLIP" } else { "GatherScatterMode.FILL_OR_DROP" }
                ),
            ],
            LibOp::Sort { dimension, is_stable, num_keys } => vec![
                format!("dimension={dimension}"),
                format!("is_stable={}", if *is_stable { "True" } else { "False" }),
                format!("num_keys={num_keys}"),
            ],
            LibOp::Cumulative { axis, reverse, .. } => {
                vec![format!("axis={axis}"), format!("reverse={}", if *reverse { "True" } else { "False" })]
            }
            LibOp::Conv(c) => {
                let pads = pairs(&c.padding);
                vec![
                    format!("batch_group_count={}", c.batch_group_count),
                    format!(
                        "dimension_numbers=ConvDimensionNumbers(lhs_spec={}, rhs_spec={}, out_spec={})",
                        t(&c.lhs_spec),
                        t(&c.rhs_spec),
                        t(&c.out_spec)
                    ),
                    format!("feature_group_count={}", c.feature_group_count),
                    format!("lhs_dilation={}", t(&c.lhs_dilation)),
                    format!("padding={pads}"),
                    format!("rhs_dilation={}", t(&c.rhs_dilation)),
                    format!("window_strides={}", t(&c.window_strides)),
                ]
            }
            LibOp::ReduceWindow { window: w, .. } => vec![
                format!("base_dilation={}", t(&w.base_dilation)),
                format!("padding={}", pairs(&w.padding)),
                format!("window_dilation={}", t(&w.window_dilation)),
                format!("window_dimensions={}", t(&w.window_dimensions)),
                format!("window_strides={}", t(&w.window_strides)),
            ],
            LibOp::SelectAndScatterAdd { ge, window: w } => vec![
                format!("padding={}", pairs(&w.padding)),
                format!("select_prim={}", if *ge { "ge" } else { "le" }),
                format!("window_dimensions={}", t(&w.window_dimensions)),
                format!("window_strides={}", t(&w.window_strides)),
            ],
            LibOp::TransposeCopy { permutation } => vec![format!("permutation={}", t(permutation))],
            LibOp::OuterAccumulate { reverse } => vec![format!("reverse={}", if *reverse { "True" } else { "False" })],
            LibOp::Linalg(op) => op.print_params(),
            LibOp::HostCallback { callback, .. } => vec![format!("callback={callback}")],
            LibOp::Fft { kind, n } => vec![format!("fft_type={}", kind.name()), format!("n={n}")],
        }
    }

    /// Output avals for operands `(aval, is_literal)`, or why the operands are invalid.
    pub fn infer(&self, ops: &[(Aval, bool)]) -> Result<Vec<Aval>, String> {
        let want = |n: usize| -> Result<(), String> {
            if ops.len() != n {
                return Err(format!("expected {n} operand(s), got {}", ops.len()));
            }
            Ok(())
        };
        let one = |dtype: DType, shape: Vec<usize>| Ok(vec![Aval { dtype, shape }]);
        match self {
            LibOp::DotGeneral { lhs_contracting: lc, rhs_contracting: rc, lhs_batch: lb, rhs_batch: rb, preferred } => {
                want(2)?;
                let (l, r) = (&ops[0].0, &ops[1].0);
                if lc.len() != rc.len() || lb.len() != rb.len() {
                    return Err(format!(
                        "dot_general needs as many lhs as rhs contracting ({lc:?} vs {rc:?}) and batch ({lb:?} vs {rb:?}) dimensions"
                    ));
                }
                let mut lseen = vec![false; l.shape.len()];
                for &d in lc.iter().chain(lb) {
                    if d >= l.shape.len() || std::mem::replace(&mut lseen[d], true) {
                        return Err(format!("dot_general lhs dimension {d} out of range or repeated for lhs shape {:?}", l.shape));
                    }
                }
                let mut rseen = vec![false; r.shape.len()];
                for &d in rc.iter().chain(rb) {
                    if d >= r.shape.len() || std::mem::replace(&mut rseen[d], true) {
                        return Err(format!("dot_general rhs dimension {d} out of range or repeated for rhs shape {:?}", r.shape));
                    }
                }
                for (&a, &b) in lc.iter().zip(rc).chain(lb.iter().zip(rb)) {
                    if l.shape[a] != r.shape[b] {
                        return Err(format!(
                            "dot_general requires contracting and batch dimensions to have the same size, got \
                             lhs shape {:?} (dimension {a}) and rhs shape {:?} (dimension {b})",
                            l.shape, r.shape
                        ));
                    }
                }
                let out_dt = match preferred {
                    Some(d) => *d,
                    None => {
                        if l.dtype != r.dtype {
                            return Err(format!(
                                "dot_general operands have different dtypes ({} and {}) and no preferred_element_type",
                                l.dtype.short_name(),
                                r.dtype.short_name()
                            ));
                        }
                        l.dtype
                    }
                };
                let mut shape: Vec<usize> = lb.iter().map(|&d| l.shape[d]).collect();
                shape.extend((0..l.shape.len()).filter(|&d| !lseen[d]).map(|d| l.shape[d]));
                shape.extend((0..r.shape.len()).filter(|&d| !rseen[d]).map(|d| r.shape[d]));
                one(out_dt, shape)
            }
            LibOp::Concatenate { dimension } => {
                if ops.is_empty() {
                    return Err("concatenate needs at least one operand".into());
                }
                let a = &ops[0].0;
                if *dimension >= a.shape.len() {
                    return Err(format!("concatenate dimension {dimension} out of range for rank {}", a.shape.len()));
                }
                let mut total = 0usize;
                for (i, (b, _)) in ops.iter().enumerate() {
                    if b.dtype != a.dtype || b.shape.len() != a.shape.len() {
                        return Err(format!("concatenate operand {i} ({}) does not match operand 0 ({})", super::shape::fmt_aval(b), super::shape::fmt_aval(a)));
                    }
                    for d in 0..a.shape.len() {
                        if d != *dimension && a.shape[d] != b.shape[d] {
                            return Err(format!(
                                "concatenate operands must have equal shapes except on dimension {dimension}, got {:?} and {:?}",
                                a.shape, b.shape
                            ));
                        }
                    }
                    total = total.checked_add(b.shape[*dimension]).ok_or("concatenate size overflows")?;
                }
                let mut shape = a.shape.clone();
                shape[*dimension] = total;
                one(a.dtype, shape)
            }
            LibOp::Pad { config } => {
                want(2)?;
                let (a, pv) = (&ops[0].0, &ops[1].0);
                if !pv.shape.is_empty() || pv.dtype != a.dtype {
                    return Err(format!("pad value must be a scalar of the operand's dtype, got {}", super::shape::fmt_aval(pv)));
                }
                if config.len() != a.shape.len() {
                    return Err(format!("padding_config has {} entries for rank {}", config.len(), a.shape.len()));
                }
                let mut shape = Vec::with_capacity(config.len());
                for (&(lo, hi, int), &d) in config.iter().zip(&a.shape) {
                    if int < 0 {
                        return Err(format!("interior padding must be non-negative, got {int}"));
                    }
                    let n = lo as i128 + hi as i128 + d as i128 + (d as i128 - 1).max(0) * int as i128;
                    if n < 0 || n > isize::MAX as i128 {
                        return Err(format!("padding_config {config:?} gives a negative or huge dimension"));
                    }
                    shape.push(n as usize);
                }
                one(a.dtype, shape)
            }
            LibOp::DynamicSlice { slice_sizes } => {
                let a = &ops.first().ok_or("dynamic_slice needs an operand")?.0;
                let r = a.shape.len();
                want(1 + r)?;
                index_scalars(&ops[1..])?;
                if slice_sizes.len() != r {
                    return Err(format!("slice_sizes {slice_sizes:?} must have one entry per axis (rank {r})"));
                }
                for (d, (&s, &n)) in slice_sizes.iter().zip(&a.shape).enumerate() {
                    if s > n {
                        return Err(format!("slice size {s} of axis {d} exceeds the operand's size {n}"));
                    }
                }
                one(a.dtype, slice_sizes.clone())
            }
            LibOp::DynamicUpdateSlice => {
                if ops.len() < 2 {
                    return Err("dynamic_update_slice needs an operand and an update".into());
                }
                let (a, u) = (&ops[0].0, &ops[1].0);
                let r = a.shape.len();
                want(2 + r)?;
                index_scalars(&ops[2..])?;
                if u.dtype != a.dtype || u.shape.len() != r || u.shape.iter().zip(&a.shape).any(|(x, y)| x > y) {
                    return Err(format!(
                        "dynamic_update_slice update {} must have the operand's dtype and rank and fit in it ({})",
                        super::shape::fmt_aval(u),
                        super::shape::fmt_aval(a)
                    ));
                }
                one(a.dtype, a.shape.clone())
            }
            LibOp::Gather { offset_dims, collapsed_slice_dims, start_index_map, slice_sizes, .. } => {
                want(2)?;
                let (a, idx) = (&ops[0].0, &ops[1].0);
                if !idx.dtype.is_int() {
                    return Err(format!("gather indices must be integers, got {}", idx.dtype.short_name()));
                }
                let r = a.shape.len();
                if slice_sizes.len() != r {
                    return Err(format!("gather slice_sizes {slice_sizes:?} must have one entry per operand axis ({r})"));
                }
                // As JAX's `_gather_shape_rule`: with no index vectors (an empty `indices`) nothing is read,
                // so a window larger than the operand (e.g. a vmapped gather over an empty batch) is allowed.
                let no_indices = idx.shape.contains(&0);
                for (d, (&s, &n)) in slice_sizes.iter().zip(&a.shape).enumerate() {
                    if s > n && !no_indices {
                        return Err(format!("gather slice size {s} of axis {d} exceeds the operand's size {n}"));
                    }
                }
                let nb = idx.shape.len().checked_sub(1).ok_or("gather indices must have rank >= 1")?;
                if idx.shape[nb] != start_index_map.len() {
                    return Err(format!(
                        "gather index vectors have length {} but start_index_map is {start_index_map:?}",
                        idx.shape[nb]
                    ));
                }
                strictly_increasing(collapsed_slice_dims, r, "collapsed_slice_dims")?;
                for &d in collapsed_slice_dims {
                    if slice_sizes[d] > 1 {
                        return Err(format!("collapsed gather dimension {d} must have slice size <= 1"));
                    }
                }
                unique(start_index_map, r, "start_index_map")?;
                let window: Vec<usize> =
                    (0..r).filter(|d| !collapsed_slice_dims.contains(d)).map(|d| slice_sizes[d]).collect();
                let out_rank = nb + window.len();
                if offset_dims.len() != window.len() {
                    return Err(format!(
                        "gather offset_dims {offset_dims:?} must have one entry per non-collapsed operand axis ({})",
                        window.len()
                    ));
                }
                strictly_increasing(offset_dims, out_rank, "offset_dims")?;
                let mut shape = Vec::with_capacity(out_rank);
                let (mut wi, mut bi) = (0, 0);
                for d in 0..out_rank {
                    if offset_dims.contains(&d) {
                        shape.push(window[wi]);
                        wi += 1;
                    } else {
                        shape.push(idx.shape[bi]);
                        bi += 1;
                    }
                }
                one(a.dtype, shape)
            }
            LibOp::Scatter { update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, .. } => {
                want(3)?;
                let (a, idx, upd) = (&ops[0].0, &ops[1].0, &ops[2].0);
                if !idx.dtype.is_int() {
                    return Err(format!("scatter indices must be integers, got {}", idx.dtype.short_name()));
                }
                if upd.dtype != a.dtype {
                    return Err(format!("scatter updates dtype {} differs from the operand's {}", upd.dtype.short_name(), a.dtype.short_name()));
                }
                let r = a.shape.len();
                let nb = idx.shape.len().checked_sub(1).ok_or("scatter indices must have rank >= 1")?;
                if idx.shape[nb] != scatter_dims_to_operand_dims.len() {
                    return Err(format!(
                        "scatter index vectors have length {} but scatter_dims_to_operand_dims is {scatter_dims_to_operand_dims:?}",
                        idx.shape[nb]
                    ));
                }
                strictly_increasing(inserted_window_dims, r, "inserted_window_dims")?;
                unique(scatter_dims_to_operand_dims, r, "scatter_dims_to_operand_dims")?;
                let window_axes: Vec<usize> = (0..r).filter(|d| !inserted_window_dims.contains(d)).collect();
                if update_window_dims.len() != window_axes.len() || upd.shape.len() != nb + window_axes.len() {
                    return Err(format!(
                        "scatter updates of shape {:?} do not match update_window_dims {update_window_dims:?} \
                         for operand shape {:?} and indices shape {:?}",
                        upd.shape, a.shape, idx.shape
                    ));
                }
                strictly_increasing(update_window_dims, upd.shape.len(), "update_window_dims")?;
                let mut bi = 0;
                for d in 0..upd.shape.len() {
                    if let Some(w) = update_window_dims.iter().position(|&x| x == d) {
                        if upd.shape[d] > a.shape[window_axes[w]] {
                            return Err(format!(
                                "scatter update window {:?} is larger than the operand {:?}",
                                upd.shape, a.shape
                            ));
                        }
                    } else {
                        if upd.shape[d] != idx.shape[bi] {
                            return Err(format!(
                                "scatter updates shape {:?} does not match indices shape {:?}",
                                upd.shape, idx.shape
                            ));
                        }
                        bi += 1;
                    }
                }
                one(a.dtype, a.shape.clone())
            }
            LibOp::Sort { dimension, num_keys, .. } => {
                if ops.is_empty() {
                    return Err("sort needs at least one operand".into());
                }
                let s = &ops[0].0.shape;
                if *dimension >= s.len() {
                    return Err(format!("sort dimension {dimension} out of range for rank {}", s.len()));
                }
                if *num_keys == 0 || *num_keys > ops.len() {
                    return Err(format!("sort num_keys {num_keys} must be between 1 and {}", ops.len()));
                }
                for (i, (a, _)) in ops.iter().enumerate() {
                    if &a.shape != s {
                        return Err(format!("sort operand {i} has shape {:?}, operand 0 has {:?}", a.shape, s));
                    }
                }
                Ok(ops.iter().map(|(a, _)| a.clone()).collect())
            }
            LibOp::Cumulative { op, axis, .. } => {
                want(1)?;
                let a = &ops[0].0;
                if *axis >= a.shape.len() {
                    return Err(format!("cumulative axis {axis} out of range for rank {}", a.shape.len()));
                }
                let ok = match op {
                    ReduceOp::Sum | ReduceOp::Prod => a.dtype.is_int() || a.dtype.is_float(),
                    ReduceOp::Max | ReduceOp::Min => true,
                    _ => false,
                };
                if !ok {
                    return Err(format!("{} does not accept dtype {}", self.name(), a.dtype.short_name()));
                }
                one(a.dtype, a.shape.clone())
            }
            LibOp::ReduceWindow { op, window } => {
                want(1)?;
                let a = &ops[0].0;
                if a.dtype == DType::Bool || (*op == ReduceOp::Sum && !(a.dtype.is_int() || a.dtype.is_float())) {
                    return Err(format!("{} does not accept dtype {}", self.name(), a.dtype.short_name()));
                }
                one(a.dtype, window.out_shape(&a.shape)?)
            }
            LibOp::SelectAndScatterAdd { window, .. } => {
                want(2)?;
                let (src, a) = (&ops[0].0, &ops[1].0);
                if src.dtype != a.dtype || a.dtype == DType::Bool {
                    return Err(format!(
                        "select_and_scatter_add takes a source and an operand of one numeric dtype, got {} and {}",
                        src.dtype.short_name(),
                        a.dtype.short_name()
                    ));
                }
                if window.base_dilation.iter().chain(&window.window_dilation).any(|&d| d != 1) {
                    return Err("select_and_scatter_add has no dilation".into());
                }
                let out = window.out_shape(&a.shape)?;
                if out != src.shape {
                    return Err(format!("select_and_scatter_add source shape {:?} must be the window output shape {out:?}", src.shape));
                }
                one(a.dtype, a.shape.clone())
            }
            LibOp::Conv(c) => {
                want(2)?;
                let (l, r) = (&ops[0].0, &ops[1].0);
                if l.dtype != r.dtype || !matches!(l.dtype, DType::F32 | DType::F64) {
                    return Err(format!(
                        "conv_general_dilated takes float32 or float64 operands of one dtype, got {} and {}",
                        l.dtype.short_name(),
                        r.dtype.short_name()
                    ));
                }
                let nd = l.shape.len();
                if nd < 2 || r.shape.len() != nd {
                    return Err(format!("conv_general_dilated operands must have one rank >= 2, got {:?} and {:?}", l.shape, r.shape));
                }
                let nsp = nd - 2;
                unique(&c.lhs_spec, nd, "lhs_spec")?;
                unique(&c.rhs_spec, nd, "rhs_spec")?;
                unique(&c.out_spec, nd, "out_spec")?;
                if c.lhs_spec.len() != nd || c.rhs_spec.len() != nd || c.out_spec.len() != nd {
                    return Err(format!("conv_general_dilated specs must have {nd} entries"));
                }
                for (what, v) in [("window_strides", &c.window_strides), ("lhs_dilation", &c.lhs_dilation), ("rhs_dilation", &c.rhs_dilation)] {
                    if v.len() != nsp || v.iter().any(|&x| x == 0) {
                        return Err(format!("conv_general_dilated {what} {v:?} must have {nsp} positive entries"));
                    }
                }
                if c.padding.len() != nsp {
                    return Err(format!("conv_general_dilated padding must have {nsp} pairs, got {:?}", c.padding));
                }
                let (g, b) = (c.feature_group_count, c.batch_group_count);
                let (n, ch) = (l.shape[c.lhs_spec[0]], l.shape[c.lhs_spec[1]]);
                let (o, i) = (r.shape[c.rhs_spec[0]], r.shape[c.rhs_spec[1]]);
                if g == 0 || b == 0 || (g > 1 && b > 1) || ch % g != 0 || ch / g != i || o % (g * b) != 0 || n % b != 0 {
                    return Err(format!(
                        "conv_general_dilated group counts (feature {g}, batch {b}) do not fit lhs {:?} and rhs {:?}",
                        l.shape, r.shape
                    ));
                }
                let lsp: Vec<usize> = c.lhs_spec[2..].iter().map(|&d| l.shape[d]).collect();
                let rsp: Vec<usize> = c.rhs_spec[2..].iter().map(|&d| r.shape[d]).collect();
                let osp = c.out_spatial(&lsp, &rsp);
                let mut shape = vec![0; nd];
                shape[c.out_spec[0]] = n / b;
                shape[c.out_spec[1]] = o;
                for (k, &d) in c.out_spec[2..].iter().enumerate() {
                    shape[d] = osp[k];
                }
                one(l.dtype, shape)
            }
            LibOp::TransposeCopy { permutation } => {
                want(1)?;
                let a = &ops[0].0;
                if permutation.len() != a.shape.len() {
                    return Err(format!("permutation {permutation:?} does not match rank {}", a.shape.len()));
                }
                unique(permutation, a.shape.len(), "permutation")?;
                one(a.dtype, permutation.iter().map(|&p| a.shape[p]).collect())
            }
            LibOp::OuterAccumulate { .. } => {
                want(3)?;
                let (a, r, c) = (&ops[0].0, &ops[1].0, &ops[2].0);
                // rows [T, M], cols [T, N], or batched [T, B, M], [T, B, N] (a product over B per step)
                let k = r.shape.len();
                let ok = a.shape.len() == 2
                    && (k == 2 || k == 3)
                    && c.shape.len() == k
                    && r.shape[..k - 1] == c.shape[..k - 1]
                    && r.shape[k - 1] == a.shape[0]
                    && c.shape[k - 1] == a.shape[1];
                if !ok {
                    return Err(format!(
                        "outer_accumulate needs acc [M, N], rows [T, M] and cols [T, N] (or [T, B, M] and [T, B, N]), got {:?}, {:?} and {:?}",
                        a.shape, r.shape, c.shape
                    ));
                }
                if !matches!(a.dtype, DType::F32 | DType::F64) || r.dtype != a.dtype || c.dtype != a.dtype {
                    return Err(format!(
                        "outer_accumulate needs one float32 or float64 dtype, got {}, {} and {}",
                        a.dtype.short_name(), r.dtype.short_name(), c.dtype.short_name()
                    ));
                }
                one(a.dtype, a.shape.clone())
            }
            LibOp::Linalg(op) => op.infer(ops),
            LibOp::HostCallback { results, .. } => {
                for a in results {
                    a.numel().ok_or_else(|| format!("callback result {} is too large", super::shape::fmt_aval(a)))?;
                }
                Ok(results.clone())
            }
            LibOp::Fft { kind, n } => {
                let (ins, len_in) = match kind {
                    FftKind::Fft | FftKind::Ifft => (2, *n),
                    FftKind::Rfft => (1, *n),
                    FftKind::Irfft => (2, n / 2 + 1),
                };
                want(ins)?;
                let a = &ops[0].0;
                if !matches!(a.dtype, DType::F32 | DType::F64) {
                    return Err(format!("fft does not accept dtype {} (f32 or f64 parts)", a.dtype.short_name()));
                }
                if a.shape.last() != Some(&len_in) {
                    return Err(format!("fft {} of length {n} needs a last axis of {len_in}, got shape {:?}",
                                       kind.name(), a.shape));
                }
                for (b, _) in &ops[1..] {
                    if b.dtype != a.dtype || b.shape != a.shape {
                        return Err("fft real and imaginary parts differ in dtype or shape".into());
                    }
                }
                let mut shape = a.shape.clone();
                let last = shape.len() - 1;
                match kind {
                    FftKind::Fft | FftKind::Ifft => {
                        Ok(vec![Aval { dtype: a.dtype, shape: shape.clone() }, Aval { dtype: a.dtype, shape }])
                    }
                    FftKind::Rfft => {
                        shape[last] = n / 2 + 1;
                        Ok(vec![Aval { dtype: a.dtype, shape: shape.clone() }, Aval { dtype: a.dtype, shape }])
                    }
                    FftKind::Irfft => {
                        shape[last] = *n;
                        one(a.dtype, shape)
                    }
                }
            }
        }
    }

    /// Rough amount of work (for choosing inline vs queued dispatch).
    pub fn work(&self, inputs: &[&Aval], outputs: &[&Aval]) -> usize {
        let n = |a: &Aval| a.numel().unwrap_or(usize::MAX);
        let out: usize = outputs.iter().map(|a| n(a)).fold(0, usize::saturating_add);
        match self {
            LibOp::DotGeneral { lhs_contracting, .. } => {
                let k: usize = lhs_contracting.iter().map(|&d| inputs[0].shape.get(d).copied().unwrap_or(1)).product();
                out.saturating_mul(k.max(1))
            }
            LibOp::Sort { .. } => out.saturating_mul(8),
            LibOp::Conv(c) => {
                // multiply-adds: each output element sums in-features/groups × kernel elements
                let r = inputs[1];
                let k: usize = c.rhs_spec[1..].iter().map(|&d| r.shape.get(d).copied().unwrap_or(1)).product();
                out.saturating_mul(k.max(1))
            }
            LibOp::Linalg(op) if !inputs.is_empty() => op.work(inputs),
            LibOp::Fft { n, .. } => out.saturating_mul(usize::BITS as usize - n.leading_zeros() as usize + 1),
            _ => out.saturating_add(inputs.iter().map(|a| n(a)).fold(0, usize::saturating_add)),
        }
    }
}

fn index_scalars(ops: &[(Aval, bool)]) -> Result<(), String> {
    for (i, (a, _)) in ops.iter().enumerate() {
        if !a.shape.is_empty() || !a.dtype.is_int() {
            return Err(format!("start index {i} must be an integer scalar, got {}", super::shape::fmt_aval(a)));
        }
    }
    Ok(())
}

fn strictly_increasing(v: &[usize], rank: usize, what: &str) -> Result<(), String> {
    for (i, &d) in v.iter().enumerate() {
        if d >= rank || (i > 0 && v[i - 1] >= d) {
            return Err(format!("{what} {v:?} must be sorted, unique and below {rank}"));
        }
    }
    Ok(())
}

fn unique(v: &[usize], rank: usize, what: &str) -> Result<(), String> {
    let mut seen = vec![false; rank];
    for &d in v {
        if d >= rank || std::mem::replace(&mut seen[d], true) {
            return Err(format!("{what} {v:?} must be unique and below {rank}"));
        }
    }
    Ok(())
}

fn pairs(v: &[(i64, i64)]) -> String {
    let p: Vec<String> = v.iter().map(|(a, b)| format!("({a}, {b})")).collect();
    if p.len() == 1 { format!("({},)", p[0]) } else { format!("({})", p.join(", ")) }
}

fn tuple(v: &[usize]) -> String {
    match v.len() {
        0 => "()".into(),
        1 => format!("({},)", v[0]),
        _ => format!("({})", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

