//! Shape and dtype rules of every primitive, shared by the verifier, the passes and fusion.
//!
//! `infer` returns the output avals a primitive produces for its operands, or a message saying which rule
//! the operands break. Operands are given as `(aval, is_literal)`: scalar literals may appear as operands of
//! elementwise primitives next to arrays of any shape (jaxprs broadcast explicitly otherwise).

use super::dtype::DType;
use super::program::{Aval, BinaryOp, Kinds, Prim, ReduceOp, UnaryOp};

/// Largest rank accepted anywhere.
pub const MAX_RANK: usize = 64;

/// Row-major strides (in elements) of `shape`. Saturates instead of overflowing (only used on shapes whose
/// element count was checked).
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![0usize; shape.len()];
    let mut acc = 1usize;
    for i in (0..shape.len()).rev() {
        st[i] = acc;
        acc = acc.saturating_mul(shape[i]);
    }
    st
}

/// Checks that an aval's element count and byte size are representable (≤ isize::MAX bytes).
pub fn check_size(a: &Aval) -> Result<(), String> {
    if a.shape.len() > MAX_RANK {
        return Err(format!("rank {} exceeds the maximum of {MAX_RANK}", a.shape.len()));
    }
    let n = a.numel().ok_or_else(|| format!("element count of {} overflows", fmt_aval(a)))?;
    let bytes = n.checked_mul(a.dtype.size());
    match bytes {
        Some(b) if b <= isize::MAX as usize => Ok(()),
        _ => Err(format!("{} is larger than the addressable memory (isize::MAX bytes)", fmt_aval(a))),
    }
}

/// `f32[3,4]`
pub fn fmt_aval(a: &Aval) -> String {
    let dims: Vec<String> = a.shape.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", a.dtype.short_name(), dims.join(","))
}

fn unique_below(axes: &[usize], rank: usize, what: &str) -> Result<(), String> {
    let mut seen = vec![false; rank];
    for &a in axes {
        if a >= rank {
            return Err(format!("{what} {a} out of range for rank {rank}"));
        }
        if seen[a] {
            return Err(format!("{what} {a} repeated"));
        }
        seen[a] = true;
    }
    Ok(())
}

/// Result shape of elementwise operands: all non-literal operands share one shape; literals are scalars.
fn ew_shape(ops: &[(Aval, bool)]) -> Result<Vec<usize>, String> {
    let mut shape: Option<&Vec<usize>> = None;
    for (i, (a, lit)) in ops.iter().enumerate() {
        if *lit {
            if !a.shape.is_empty() {
                return Err(format!("literal operand {i} must be a scalar"));
            }
            continue;
        }
        match shape {
            None => shape = Some(&a.shape),
            Some(s) if *s == a.shape => {}
            Some(s) => {
                return Err(format!(
                    "operand shapes differ: {:?} vs {:?} (operand {i}); broadcast explicitly",
                    s, a.shape
                ))
            }
        }
    }
    Ok(shape.cloned().unwrap_or_default())
}

fn same_dtype(ops: &[(Aval, bool)]) -> Result<DType, String> {
    let d = ops[0].0.dtype;
    for (i, (a, _)) in ops.iter().enumerate() {
        if a.dtype != d {
            return Err(format!(
                "operand dtypes differ: {} vs {} (operand {i})",
                d.short_name(),
                a.dtype.short_name()
            ));
        }
    }
    Ok(d)
}

fn want_n(ops: &[(Aval, bool)], n: usize) -> Result<(), String> {
    if ops.len() != n {
        return Err(format!("expected {n} operand(s), got {}", ops.len()));
    }
    Ok(())
}

fn check_kind(k: Kinds, d: DType) -> Result<(), String> {
    if !k.accepts(d) {
        return Err(format!("operand dtype {} is not {}", d.short_name(), k.name()));
    }
    Ok(())
}

/// The output avals of `prim` applied to `ops` (`(aval, is_literal)`), or why the operands are invalid.
pub fn infer(prim: &Prim, ops: &[(Aval, bool)]) -> Result<Vec<Aval>, String> {
    let one = |dtype: DType, shape: Vec<usize>| Ok(vec![Aval { dtype, shape }]);
    match prim {
        Prim::Unary(u) => {
            want_n(ops, 1)?;
            let d = ops[0].0.dtype;
            check_kind(UnaryOp::kinds(*u), d)?;
            let out = if *u == UnaryOp::IsFinite { DType::Bool } else { d };
            one(out, ops[0].0.shape.clone())
        }
        Prim::Binary(b) => {
            want_n(ops, 2)?;
            let d = same_dtype(ops)?;
            check_kind(BinaryOp::kinds(*b), d)?;
            one(d, ew_shape(ops)?)
        }
        Prim::Compare(_) => {
            want_n(ops, 2)?;
            same_dtype(ops)?;
            one(DType::Bool, ew_shape(ops)?)
        }
        Prim::IntegerPow { .. } => {
            want_n(ops, 1)?;
            check_kind(Kinds::Num, ops[0].0.dtype)?;
            one(ops[0].0.dtype, ops[0].0.shape.clone())
        }
        Prim::SelectN => {
            if ops.len() < 2 {
                return Err(format!("select_n needs a predicate and at least one case, got {} operand(s)", ops.len()));
            }
            let pred = &ops[0].0;
            match pred.dtype {
                DType::Bool => {
                    if ops.len() > 3 {
                        return Err(format!("a bool predicate selects between at most 2 cases, got {}", ops.len() - 1));
                    }
                }
                DType::I32 => {}
                d => return Err(format!("predicate dtype must be bool or i32, got {}", d.short_name())),
            }
            let cases = &ops[1..];
            let d = same_dtype(cases)?;
            let shape = ew_shape(cases)?;
            if !pred.shape.is_empty() && pred.shape != shape {
                return Err(format!(
                    "predicate shape {:?} must be scalar or equal to the cases' shape {:?}",
                    pred.shape, shape
                ));
            }
            one(d, shape)
        }
        Prim::Clamp => {
            want_n(ops, 3)?;
            let d = same_dtype(ops)?;
            let x = &ops[1].0;
            for (i, name) in [(0, "lo"), (2, "hi")] {
                let a = &ops[i].0;
                if !a.shape.is_empty() && a.shape != x.shape {
                    return Err(format!(
                        "clamp {name} shape {:?} must be scalar or equal to the operand's shape {:?}",
                        a.shape, x.shape
                    ));
                }
            }
            one(d, x.shape.clone())
        }
        Prim::Fma => {
            want_n(ops, 3)?;
            let d = same_dtype(ops)?;
            if !matches!(d, DType::F32 | DType::F64) {
                return Err(format!("fma takes float32 or float64 operands, got {}", d.short_name()));
            }
            let shape = ew_shape(ops)?;
            one(d, shape)
        }
        Prim::ConvertElementType { new_dtype } => {
            want_n(ops, 1)?;
            one(*new_dtype, ops[0].0.shape.clone())
        }
        Prim::BitcastConvertType { new_dtype } => {
            want_n(ops, 1)?;
            let d = ops[0].0.dtype;
            if d == DType::Bool || *new_dtype == DType::Bool {
                return Err("bitcast_convert_type does not accept bool".into());
            }
            if d.size() != new_dtype.size() {
                return Err(format!(
                    "bitcast_convert_type between dtypes of different widths ({} -> {}) is not supported",
                    d.short_name(),
                    new_dtype.short_name()
                ));
            }
            one(*new_dtype, ops[0].0.shape.clone())
        }
        Prim::BroadcastInDim { shape, broadcast_dimensions: bd } => {
            want_n(ops, 1)?;
            let a = &ops[0].0;
            if bd.len() != a.shape.len() {
                return Err(format!(
                    "broadcast_dimensions {:?} must have one entry per operand dimension (rank {})",
                    bd,
                    a.shape.len()
                ));
            }
            for (i, &t) in bd.iter().enumerate() {
                if t >= shape.len() {
                    return Err(format!("broadcast_dimensions entry {t} out of range for target rank {}", shape.len()));
                }
                if i > 0 && bd[i - 1] >= t {
                    return Err(format!("broadcast_dimensions {:?} must be strictly increasing", bd));
                }
            }
            for (i, &t) in bd.iter().enumerate() {
                if a.shape[i] != 1 && a.shape[i] != shape[t] {
                    return Err(format!(
                        "operand dimension {i} of size {} cannot broadcast to target dimension {t} of size {}",
                        a.shape[i], shape[t]
                    ));
                }
            }
            one(a.dtype, shape.clone())
        }
        Prim::Reshape { new_sizes } => {
            want_n(ops, 1)?;
            let a = &ops[0].0;
            let n_new = new_sizes.iter().try_fold(1usize, |x, &d| x.checked_mul(d));
            match (a.numel(), n_new) {
                (Some(x), Some(y)) if x == y => one(a.dtype, new_sizes.clone()),
                _ => Err(format!("reshape from {:?} to {:?} changes the element count", a.shape, new_sizes)),
            }
        }
        Prim::Squeeze { dimensions } => {
            want_n(ops, 1)?;
            let a = &ops[0].0;
            unique_below(dimensions, a.shape.len(), "squeeze dimension")?;
            for &d in dimensions {
                if a.shape[d] != 1 {
                    return Err(format!("squeeze dimension {d} has size {}, not 1", a.shape[d]));
                }
            }
            let shape = (0..a.shape.len()).filter(|i| !dimensions.contains(i)).map(|i| a.shape[i]).collect();
            one(a.dtype, shape)
        }
        Prim::ExpandDims { dimensions } => {
            want_n(ops, 1)?;
            let a = &ops[0].0;
            let out_rank = a.shape.len() + dimensions.len();
            unique_below(dimensions, out_rank, "expand_dims dimension")?;
            let mut src = a.shape.iter();
            let shape = (0..out_rank)
                .map(|i| if dimensions.contains(&i) { 1 } else { *src.next().unwrap_or(&1) })
                .collect();
            one(a.dtype, shape)
        }
        Prim::Transpose { permutation } => {
            want_n(ops, 1)?;
            let a = &ops[0].0;
            if permutation.len() != a.shape.len() {
                return Err(format!("permutation {:?} does not match operand rank {}", permutation, a.shape.len()));
            }
            unique_below(permutation, a.shape.len(), "permutation entry")?;
            one(a.dtype, permutation.iter().map(|&p| a.shape[p]).collect())
        }
        Prim::Slice { start_indices, limit_indices, strides } => {
            want_n(ops, 1)?;
            let a = &ops[0].0;
            let r = a.shape.len();
            if start_indices.len() != r || limit_indices.len() != r || strides.len() != r {
                return Err(format!(
                    "slice start_indices {start_indices:?}, limit_indices {limit_indices:?} and strides {strides:?} \
                     must each have one entry per operand axis ({r})"
                ));
            }
            let mut shape = Vec::with_capacity(r);
            for d in 0..r {
                let (s, l, st) = (start_indices[d], limit_indices[d], strides[d]);
                if s > l || l > a.shape[d] || st == 0 {
                    return Err(format!(
                        "slice axis {d}: start {s}, limit {l}, stride {st} out of range for size {}",
                        a.shape[d]
                    ));
                }
                shape.push((l - s).div_ceil(st));
            }
            one(a.dtype, shape)
        }
        Prim::Rev { dimensions } => {
            want_n(ops, 1)?;
            let a = &ops[0].0;
            unique_below(dimensions, a.shape.len(), "rev dimension")?;
            one(a.dtype, a.shape.clone())
        }
        Prim::Reduce { op, axes } => {
            want_n(ops, 1)?;
            let a = &ops[0].0;
            check_kind(ReduceOp::kinds(*op), a.dtype)?;
            unique_below(axes, a.shape.len(), "reduction axis")?;
            let shape = (0..a.shape.len()).filter(|i| !axes.contains(i)).map(|i| a.shape[i]).collect();
            one(a.dtype, shape)
        }
        Prim::ArgReduce { axis, index_dtype, .. } => {
            want_n(ops, 1)?;
            let a = &ops[0].0;
            if !index_dtype.is_int() {
                return Err(format!("index_dtype must be an integer dtype, got {}", index_dtype.short_name()));
            }
            if *axis >= a.shape.len() {
                return Err(format!("axis {axis} out of range for rank {}", a.shape.len()));
            }
            if a.shape[*axis] == 0 {
                return Err("argmin and argmax require a non-empty reduced dimension".into());
            }
            let shape = (0..a.shape.len()).filter(|i| i != axis).map(|i| a.shape[i]).collect();
            one(*index_dtype, shape)
        }
        Prim::Iota { dtype, shape, dimension } => {
            want_n(ops, 0)?;
            if !(dtype.is_int() || dtype.is_float()) {
                return Err(format!("iota dtype must be numeric, got {}", dtype.short_name()));
            }
            if *dimension >= shape.len() {
                return Err(format!("iota dimension {dimension} out of range for rank {}", shape.len()));
            }
            one(*dtype, shape.clone())
        }
        Prim::Copy => {
            want_n(ops, 1)?;
            one(ops[0].0.dtype, ops[0].0.shape.clone())
        }
        Prim::OptimizationBarrier => Ok(ops.iter().map(|(a, _)| a.clone()).collect()),
        Prim::Lib(op) => op.infer(ops),
        Prim::Control(op) => op.infer(ops),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(d: DType, s: &[usize]) -> (Aval, bool) {
        (Aval::new(d, s.to_vec()), false)
    }

    #[test]
    fn broadcast_rule() {
        let p = Prim::BroadcastInDim { shape: vec![2, 3], broadcast_dimensions: vec![1] };
        assert_eq!(infer(&p, &[v(DType::F32, &[3])]).unwrap()[0].shape, vec![2, 3]);
        assert!(infer(&p, &[v(DType::F32, &[2])]).is_err());
        let p = Prim::BroadcastInDim { shape: vec![2, 3], broadcast_dimensions: vec![1, 0] };
        assert!(infer(&p, &[v(DType::F32, &[1, 1])]).is_err());
    }

    #[test]
    fn expand_dims_rule() {
        let p = Prim::ExpandDims { dimensions: vec![0, 2] };
        assert_eq!(infer(&p, &[v(DType::F32, &[3, 4])]).unwrap()[0].shape, vec![1, 3, 1, 4]);
    }

    #[test]
    fn size_cap() {
        assert!(check_size(&Aval::new(DType::F64, vec![1 << 62])).is_err());
        assert!(check_size(&Aval::new(DType::F64, vec![usize::MAX, 2])).is_err());
        assert!(check_size(&Aval::new(DType::F64, vec![usize::MAX, 0])).is_ok());
        assert_eq!(row_major_strides(&[2, 3, 4]), vec![12, 4, 1]);
    }
}
