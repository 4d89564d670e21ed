//! Library steps of a plan: plain-Rust routines for the primitives that are not fused loops.
//!
//! - `gemm`: `dot_general` through the `gemm` crate (f32/f64, multi-threaded with rayon), integer and bool
//!   contractions by a loop.
//! - `shape_ops`: `concatenate`, `pad`, `dynamic_slice`, `dynamic_update_slice` (data movement).
//! - `gather`: XLA `gather` and `scatter` (set/add/mul/min/max) with JAX's out-of-bounds modes.
//! - `sort`: multi-operand stable `sort` and the cumulative scans.
//! - `conv`: `conv_general_dilated` (f32/f64): im2col blocks into `gemm`, direct loops for depthwise.
//! - `conv_direct`: the implicit-GEMM register tiles `conv` uses for channels-last f32 (AVX-512/AVX2).
//! - `window`: `reduce_window_sum/max/min` and `select_and_scatter_add` (pooling and its gradient).
//! - `linalg`: `lax.linalg`'s factorizations and triangular solves through `faer`.
//! - `small_lu`: LU with partial pivoting and its solve for matrices of order <= 8 (`linalg`'s small path).
//! - `small_chol`: Cholesky of order <= 32 in OpenBLAS potf2's order (`linalg`'s small path, JAX's bits).
//! - `fft`: `fft` (FFT/IFFT/RFFT/IRFFT along the last axis) through `rustfft`/`realfft`.
//! - `outer_acc`: `outer_accumulate`, the final value of a scan carry that only adds outer products, after
//!   the loop with its roundings (register tiles, AVX-512/AVX2/portable).
//! - `small_dot`: small f32/f64 matrix products precompiled for AVX-512/AVX2 (`gemm` calls them).
//! - `matvec`: f32/f64 matrix-vector products on a row-major matrix (AVX-512/AVX2/portable, `gemm` calls
//!   them), in gemm's gemv order, chunks of outputs shared by every free thread.
//! - `epilogue`: the elementwise kernel a convolution or product runs in place on its output blocks.
//! - `callback`: host callbacks, through the dispatcher the embedder installs.
//! - `elem`: element types (`Elem`, `F16`, `U8`, `with_elem!`) and buffer element access, shared by all of
//!   them (a leaf: it imports none of its siblings).
//!
//! Every routine trusts the plan validator: operand and output avals satisfy the primitive's shape rule.
//! Index values read from buffers are data and are clamped or bounds-checked here.
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, LibOp};

mod conv;
mod conv_direct;
pub mod epilogue;
pub mod callback;
pub(crate) mod elem;
mod fft;
mod gather;
mod linalg;
mod small_lu;
mod small_chol;
pub mod gemm;
mod small_dot;
mod matvec;
mod outer_acc;
mod shape_ops;
mod sort;
mod window;
#[cfg(test)]
mod tests;

/// Runs a convolution or product with its epilogue kernel applied in place to its output (the plan's
/// `LibStep::epilogue`): convolutions apply it block by block as they write them, other ops once after.
pub fn run_fused(op: &LibOp, inputs: &[&Buffer], outs: &[Aval], epi: &epilogue::Epilogue) -> Result<Vec<Buffer>> {
    if let LibOp::Conv(c) = op {
        return Ok(vec![conv::conv(c, inputs[0], inputs[1], outs.first().ok_or_else(|| Error::Execution("conv has no output".into()))?, Some(epi))?]);
    }
    let res = run(op, inputs, outs)?;
    if let [b] = res.as_slice() {
        // SAFETY: `b` is the op's fresh, fully written output, of the aval the epilogue was checked against.
        unsafe { epi.whole(b.as_ptr()) };
    }
    Ok(res)
}

/// A scatter (`LibOp::Scatter`) into `res`, a buffer holding its operand that nothing else reads (see
/// `gather::scatter_in_place`); `None` for other ops.
pub fn scatter_in_place(op: &LibOp, res: Buffer, indices: &Buffer, upd: &Buffer) -> Option<Result<Buffer>> {
    let LibOp::Scatter { op, update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, mode } = op else {
        return None;
    };
    let s = gather::ScatterSpec { update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims };
    Some(gather::scatter_in_place(&s, *op, *mode, res, indices, upd))
}

/// A `dynamic_update_slice` into `res`, a buffer holding its operand that nothing else reads; `None` for
/// other ops. `inputs` are the step's other operands (the update, then the start indices).
pub fn update_slice_in_place(op: &LibOp, res: Buffer, inputs: &[&Buffer]) -> Option<Result<Buffer>> {
    let (LibOp::DynamicUpdateSlice, [upd, idx @ ..]) = (op, inputs) else { return None };
    Some(shape_ops::dynamic_update_slice_in_place(res, upd, idx))
}

/// Runs one library op on its input buffers, giving one buffer per output aval.
pub fn run(op: &LibOp, inputs: &[&Buffer], outs: &[Aval]) -> Result<Vec<Buffer>> {
    let out0 = || outs.first().ok_or_else(|| Error::Execution(format!("{} has no output", op.name())));
    match op {
        LibOp::DotGeneral { lhs_contracting, rhs_contracting, lhs_batch, rhs_batch, .. } => {
            let dims = gemm::DotDims { lc: lhs_contracting, rc: rhs_contracting, lb: lhs_batch, rb: rhs_batch };
            Ok(vec![gemm::dot_general(&dims, inputs[0], inputs[1], out0()?)?])
        }
        LibOp::Concatenate { dimension } => Ok(vec![shape_ops::concatenate(inputs, *dimension, out0()?)?]),
        LibOp::Pad { config } => Ok(vec![shape_ops::pad(inputs[0], inputs[1], config, out0()?)?]),
        LibOp::DynamicSlice { .. } => Ok(vec![shape_ops::dynamic_slice(inputs[0], &inputs[1..], out0()?)?]),
        LibOp::DynamicUpdateSlice => {
            Ok(vec![shape_ops::dynamic_update_slice(inputs[0], inputs[1], &inputs[2..], out0()?)?])
        }
        LibOp::Gather { offset_dims, collapsed_slice_dims, start_index_map, slice_sizes, mode, fill_value } => {
            let g = gather::GatherSpec { offset_dims, collapsed_slice_dims, start_index_map, slice_sizes };
            Ok(vec![gather::gather(&g, *mode, *fill_value, inputs[0], inputs[1], out0()?)?])
        }
        LibOp::Scatter { op, update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, mode } => {
            let s = gather::ScatterSpec { update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims };
            Ok(vec![gather::scatter(&s, *op, *mode, inputs[0], inputs[1], inputs[2])?])
        }
        LibOp::Sort { dimension, num_keys, .. } => sort::sort(inputs, *dimension, *num_keys),
        LibOp::Cumulative { op, axis, reverse } => Ok(vec![sort::cumulative(inputs[0], *op, *axis, *reverse)?]),
        LibOp::Conv(c) => Ok(vec![conv::conv(c, inputs[0], inputs[1], out0()?, None)?]),
        LibOp::ReduceWindow { op, window } => Ok(vec![window::reduce_window(inputs[0], *op, window, out0()?)?]),
        LibOp::SelectAndScatterAdd { ge, window } => {
            Ok(vec![window::select_and_scatter_add(inputs[0], inputs[1], *ge, window)?])
        }
        LibOp::TransposeCopy { permutation } => Ok(vec![shape_ops::transpose_copy(inputs[0], permutation, out0()?)?]),
        LibOp::OuterAccumulate { reverse } => {
            Ok(vec![outer_acc::outer_accumulate(inputs[0], inputs[1], inputs[2], *reverse, out0()?)?])
        }
        LibOp::Linalg(op) => linalg::run(op, inputs, outs),
        LibOp::HostCallback { callback: id, .. } => callback::call(*id, inputs, outs),
        LibOp::Fft { kind, n } => fft::fft(*kind, *n, inputs, outs),
    }
}
