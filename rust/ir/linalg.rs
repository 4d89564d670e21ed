//! Dense linear algebra primitives (`jax.lax.linalg`): their params, wire params, printed params and
//! shape rules. They act on the last two axes of their operands; leading axes are a batch (JAX's
//! batching convention). The CPU backend runs them through `faer` (`backend::cpu::library::linalg`).
//!
//! Wire params (JAX's names):
//! ```text
//!   cholesky {}                                   a[..., n, n] -> l[..., n, n]   (lower; NaN when not PD)
//!   lu {}                                         a[..., m, n] -> lu[..., m, n], pivots i32[..., k],
//!                                                                 permutation i32[..., m]
//!   lu_pivots_to_permutation {"permutation_size": int}   pivots i32[..., k] -> i32[..., size]
//!   qr {"full_matrices": bool}                    a[..., m, n] -> q[..., m, m|k], r[..., m|k, n]
//!   eigh {"lower": bool, "sort_eigenvalues": bool}  a[..., n, n] -> v[..., n, n], w[..., n]
//!   svd {"full_matrices": bool, "compute_uv": bool} a[..., m, n] -> s[..., k] (, u[..., m, m|k],
//!                                                                 vt[..., n|k, n])
//!   triangular_solve {"left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal": bool}
//!                                                 a[..., m, m], b[..., m, n] (left) or [..., n, m] -> b's
//!   eig {"compute_left_eigenvectors", "compute_right_eigenvectors": bool}
//!                                                 a[..., n, n] -> w[..., n], vl?[..., n, n], vr?[..., n, n]
//!                                                 (all complex)
//!   hessenberg {}                                 a[..., n, n] -> packed[..., n, n], taus[..., n-1]
//!   tridiagonal {}                                a[..., n, n] -> packed, d[..., n], e[..., n-1], taus[..., n-1]
//!   lu_solve {}                                   a[..., n, n], b[..., n, k] -> x[..., n, k]  (not JAX's:
//!                                                 made by `opt::lu_solve`, real operands only)
//!   cholesky_tril {"symmetrize": bool}            a[..., n, n] -> l[..., n, n]  (not JAX's: `cholesky` with
//!                                                 JAX's `tril` after it, and `(a + a^T) / 2` before it
//!                                                 when `symmetrize`; made by `opt::cholesky`, real only)
//!   eigh_folded {"lower", "symmetrize", "vectors": bool}   a[..., n, n] -> (v[..., n, n] when `vectors`,) w[..., n]
//!                                                 (not JAX's: `eigh` of `(a + a^T) / 2` when `symmetrize`,
//!                                                 without the eigenvectors nothing reads when not `vectors`;
//!                                                 made by `opt::eigh`, real only)
//! ```
//! `k = min(m, n)`. Operands are float32 or float64; with `"complex": true` each operand is two of them,
//! the real and imaginary parts of a complex64/complex128 array, and so is each complex result.
use serde_json::{json, Map, Value};

use super::dtype::DType;
use super::program::Aval;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LinalgOp {
    Cholesky,
    Lu,
    LuPivotsToPermutation { permutation_size: usize },
    Qr { full_matrices: bool },
    Eigh { lower: bool, sort_eigenvalues: bool },
    Svd { full_matrices: bool, compute_uv: bool },
    TriangularSolve { left_side: bool, lower: bool, transpose_a: bool, conjugate_a: bool, unit_diagonal: bool },
    /// The general eigendecomposition: real or complex `a[..., n, n]` -> complex `w[..., n]`, then the left
    /// and right eigenvectors `[..., n, n]` (columns) when asked for. Its results are always complex.
    Eig { compute_left: bool, compute_right: bool },
    /// `a = Q H Q^H` with `H` upper Hessenberg: `a[..., n, n] -> (packed[..., n, n], taus[..., n-1])` as
    /// LAPACK's gehrd packs them (reflectors below the subdiagonal, `H_i = I - tau_i v_i v_i^H`).
    Hessenberg,
    /// `a = Q T Q^T` for symmetric real `a` (lower triangle read): `-> (packed, d[..., n], e[..., n-1],
    /// taus[..., n-1])` as LAPACK's sytrd (uplo L) packs them.
    Tridiagonal,
    /// `x = a^-1 b` for square `a[..., n, n]` and `b[..., n, k]`: what `jnp.linalg.solve` traces to (`lu`,
    /// the row permutation of `b`, two `triangular_solve`s), fused by `opt::lu_solve` into one step that
    /// factors and solves each matrix in one pass with no LU/pivot arrays in between. Never sent by Python.
    LuSolve,
    /// `tril(cholesky(a))`, of `(a + a^T) / 2` when `symmetrize`: what `jnp.linalg.cholesky` traces to,
    /// folded by `opt::cholesky` so the symmetrize and the zeroing of the upper triangle happen in the
    /// copies in and out of faer's workspace. A failed factorization gives NaNs below the diagonal and
    /// zeros above it (what the `tril` made of the NaN factor). Never sent by Python.
    CholeskyTril { symmetrize: bool },
    /// `eigh` as `opt::eigh` folds it: of `(a + a^T) / 2` when `symmetrize` (JAX's `symmetrize_input`, then
    /// read by the copy into faer's workspace; `lower` no longer matters), and without the eigenvectors when
    /// nothing reads them (`jnp.linalg.eigvalsh`; `vectors` false, `w` the only result). Never sent by Python.
    EighFolded { lower: bool, symmetrize: bool, vectors: bool },
    /// The op on complex operands, each travelling as its (real, imaginary) parts (wire param
    /// `"complex": true`); complex results travel the same way, real ones (eigh's `w`, svd's `s`, pivots)
    /// as themselves.
    Complex(Box<LinalgOp>),
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

impl LinalgOp {
    pub fn name(&self) -> &'static str {
        match self {
            LinalgOp::Cholesky => "cholesky",
            LinalgOp::Lu => "lu",
            LinalgOp::LuPivotsToPermutation { .. } => "lu_pivots_to_permutation",
            LinalgOp::Qr { .. } => "qr",
            LinalgOp::Eigh { .. } => "eigh",
            LinalgOp::Svd { .. } => "svd",
            LinalgOp::TriangularSolve { .. } => "triangular_solve",
            LinalgOp::Eig { .. } => "eig",
            LinalgOp::Hessenberg => "hessenberg",
            LinalgOp::Tridiagonal => "tridiagonal",
            LinalgOp::LuSolve => "lu_solve",
            LinalgOp::CholeskyTril { .. } => "cholesky_tril",
            LinalgOp::EighFolded { .. } => "eigh_folded",
            LinalgOp::Complex(inner) => inner.name(),
        }
    }

    /// Parses a linalg primitive by name and wire params: `Ok(None)` when `name` is not one.
    pub fn parse(name: &str, params: &Map<String, Value>) -> Result<Option<LinalgOp>, (String, String)> {
        let flag = |k: &str, default: bool| -> Result<bool, (String, String)> {
            match params.get(k) {
                None | Some(Value::Null) => Ok(default),
                Some(Value::Bool(b)) => Ok(*b),
                Some(v) => Err((format!("params.{k}"), format!("expected a bool, got {v}"))),
            }
        };
        let op = match name {
            "cholesky" => LinalgOp::Cholesky,
            "lu" => LinalgOp::Lu,
            "lu_pivots_to_permutation" => {
                let v = params
                    .get("permutation_size")
                    .ok_or_else(|| ("params".to_string(), "missing parameter \"permutation_size\"".to_string()))?;
                let n = v.as_u64().filter(|&n| n <= (1 << 40)).ok_or_else(|| {
                    ("params.permutation_size".to_string(), format!("expected a non-negative integer, got {v}"))
                })?;
                LinalgOp::LuPivotsToPermutation { permutation_size: n as usize }
            }
            "qr" => LinalgOp::Qr { full_matrices: flag("full_matrices", true)? },
            "eigh" => LinalgOp::Eigh { lower: flag("lower", true)?, sort_eigenvalues: flag("sort_eigenvalues", true)? },
            "svd" => LinalgOp::Svd { full_matrices: flag("full_matrices", true)?, compute_uv: flag("compute_uv", true)? },
            "triangular_solve" => LinalgOp::TriangularSolve {
                left_side: flag("left_side", false)?,
                lower: flag("lower", false)?,
                transpose_a: flag("transpose_a", false)?,
                conjugate_a: flag("conjugate_a", false)?,
                unit_diagonal: flag("unit_diagonal", false)?,
            },
            "eig" => LinalgOp::Eig {
                compute_left: flag("compute_left_eigenvectors", true)?,
                compute_right: flag("compute_right_eigenvectors", true)?,
            },
            "hessenberg" => LinalgOp::Hessenberg,
            "tridiagonal" => LinalgOp::Tridiagonal,
            "lu_solve" => LinalgOp::LuSolve,
            "cholesky_tril" => LinalgOp::CholeskyTril { symmetrize: flag("symmetrize", false)? },
            "eigh_folded" => LinalgOp::EighFolded {
                lower: flag("lower", true)?,
                symmetrize: flag("symmetrize", false)?,
                vectors: flag("vectors", true)?,
            },
            _ => return Ok(None),
        };
        if !flag("complex", false)? {
            return Ok(Some(op));
        }
        if matches!(
            op,
            LinalgOp::LuPivotsToPermutation { .. }
                | LinalgOp::Tridiagonal
                | LinalgOp::LuSolve
                | LinalgOp::CholeskyTril { .. }
                | LinalgOp::EighFolded { .. }
        ) {
            return Err(("params.complex".to_string(), format!("{name} has no complex form")));
        }
        Ok(Some(LinalgOp::Complex(Box::new(op))))
    }

    /// How many results the op has, a complex one counted once.
    pub fn n_results(&self) -> usize {
        match self {
            LinalgOp::Lu => 3,
            LinalgOp::Qr { .. } | LinalgOp::Eigh { .. } | LinalgOp::Hessenberg => 2,
            LinalgOp::EighFolded { vectors, .. } => 1 + *vectors as usize,
            LinalgOp::Svd { compute_uv, .. } => 1 + 2 * *compute_uv as usize,
            LinalgOp::Eig { compute_left, compute_right } => 1 + *compute_left as usize + *compute_right as usize,
            LinalgOp::Tridiagonal => 4,
            LinalgOp::Complex(inner) => inner.n_results(),
            _ => 1,
        }
    }

    /// Which of the op's results are complex (each then two wire results) when its operands are complex
    /// (`complex`) or real.
    pub fn complex_results(&self, complex: bool, n_results: usize) -> Vec<bool> {
        match self {
            LinalgOp::Eig { .. } => vec![true; n_results],
            _ if !complex => vec![false; n_results],
            LinalgOp::Lu => vec![true, false, false],
            LinalgOp::Eigh { .. } => vec![true, false],
            LinalgOp::Svd { .. } => (0..n_results).map(|i| i > 0).collect(),
            _ => vec![true; n_results],
        }
    }

    /// The wire params (inverse of `parse`).
    pub fn to_json(&self) -> Value {
        match self {
            LinalgOp::Cholesky | LinalgOp::Lu => json!({}),
            LinalgOp::LuPivotsToPermutation { permutation_size } => json!({ "permutation_size": permutation_size }),
            LinalgOp::Qr { full_matrices } => json!({ "full_matrices": full_matrices }),
            LinalgOp::Eigh { lower, sort_eigenvalues } => json!({ "lower": lower, "sort_eigenvalues": sort_eigenvalues }),
            LinalgOp::Svd { full_matrices, compute_uv } => {
                json!({ "full_matrices": full_matrices, "compute_uv": compute_uv })
            }
            LinalgOp::TriangularSolve { left_side, lower, transpose_a, conjugate_a, unit_diagonal } => json!({
                "left_side": left_side, "lower": lower, "transpose_a": transpose_a, "conjugate_a": conjugate_a,
                "unit_diagonal": unit_diagonal,
            }),
            LinalgOp::Eig { compute_left, compute_right } => json!({
                "compute_left_eigenvectors": compute_left, "compute_right_eigenvectors": compute_right,
            }),
            LinalgOp::Hessenberg | LinalgOp::Tridiagonal | LinalgOp::LuSolve => json!({}),
            LinalgOp::CholeskyTril { symmetrize } => json!({ "symmetrize": symmetrize }),
            LinalgOp::EighFolded { lower, symmetrize, vectors } => {
                json!({ "lower": lower, "symmetrize": symmetrize, "vectors": vectors })
            }
            LinalgOp::Complex(inner) => {
                let mut v = inner.to_json();
                v["complex"] = json!(true);
                v
            }
        }
    }

    /// Params as a printed jaxpr shows them (sorted by name, as JAX prints them).
    pub fn print_params(&self) -> Vec<String> {
        match self {
            LinalgOp::Cholesky | LinalgOp::Lu => vec![],
            LinalgOp::LuPivotsToPermutation { permutation_size } => vec![format!("permutation_size={permutation_size}")],
            LinalgOp::Qr { full_matrices } => {
                vec![format!("full_matrices={}", py_bool(*full_matrices)), "pivoting=False".into(), "use_magma=None".into()]
            }
            LinalgOp::Eigh { lower, sort_eigenvalues } => vec![
                "algorithm=None".into(),
                format!("lower={}", py_bool(*lower)),
                format!("sort_eigenvalues={}", py_bool(*sort_eigenvalues)),
                "subset_by_index=None".into(),
            ],
            LinalgOp::Svd { full_matrices, compute_uv } => vec![
                "algorithm=None".into(),
                format!("compute_uv={}", py_bool(*compute_uv)),
                format!("full_matrices={}", py_bool(*full_matrices)),
                "subset_by_index=None".into(),
            ],
            LinalgOp::TriangularSolve { left_side, lower, transpose_a, conjugate_a, unit_diagonal } => vec![
                format!("conjugate_a={}", py_bool(*conjugate_a)),
                format!("left_side={}", py_bool(*left_side)),
                format!("lower={}", py_bool(*lower)),
                format!("transpose_a={}", py_bool(*transpose_a)),
                format!("unit_diagonal={}", py_bool(*unit_diagonal)),
            ],
            LinalgOp::Eig { compute_left, compute_right } => vec![
                format!("compute_left_eigenvectors={}", py_bool(*compute_left)),
                format!("compute_right_eigenvectors={}", py_bool(*compute_right)),
                "use_magma=None".into(),
            ],
            LinalgOp::Hessenberg | LinalgOp::LuSolve => vec![],
            LinalgOp::CholeskyTril { symmetrize } => vec![format!("symmetrize={}", py_bool(*symmetrize))],
            LinalgOp::EighFolded { lower, symmetrize, vectors } => vec![
                format!("lower={}", py_bool(*lower)),
                format!("symmetrize={}", py_bool(*symmetrize)),
                format!("vectors={}", py_bool(*vectors)),
            ],
            LinalgOp::Tridiagonal => vec!["lower=True".into()],
            LinalgOp::Complex(inner) => {
                let mut v = inner.print_params();
                v.push("complex=True".into());
                v
            }
        }
    }

    /// Output avals for the operands, or why the operands are invalid: the op's results, each complex one
    /// as its two parts.
    pub fn infer(&self, ops: &[(Aval, bool)]) -> Result<Vec<Aval>, String> {
        let (op, complex, logical) = match self {
            LinalgOp::Complex(inner) => {
                if ops.len() % 2 != 0 {
                    return Err(format!("complex {} expects (real, imaginary) operand pairs, got {} operands", self.name(), ops.len()));
                }
                let firsts: Vec<(Aval, bool)> = ops.chunks(2).map(|p| p[0].clone()).collect();
                for p in ops.chunks(2) {
                    if p[0].0 != p[1].0 {
                        return Err(format!(
                            "complex {}: the parts of an operand differ: {} and {}",
                            self.name(),
                            super::shape::fmt_aval(&p[0].0),
                            super::shape::fmt_aval(&p[1].0)
                        ));
                    }
                }
                (&**inner, true, inner.infer_logical(&firsts)?)
            }
            op => (op, false, op.infer_logical(ops)?),
        };
        let mask = op.complex_results(complex, logical.len());
        Ok(logical.into_iter().zip(mask).flat_map(|(a, c)| if c { vec![a.clone(), a] } else { vec![a] }).collect())
    }

    /// The results' avals, a complex result by the aval of its parts.
    fn infer_logical(&self, ops: &[(Aval, bool)]) -> Result<Vec<Aval>, String> {
        let name = self.name();
        let want = |n: usize| -> Result<(), String> {
            if ops.len() != n {
                return Err(format!("{name} expects {n} operand(s), got {}", ops.len()));
            }
            Ok(())
        };
        let av = |dtype: DType, shape: Vec<usize>| Aval { dtype, shape };
        let with = |batch: &[usize], tail: &[usize]| -> Vec<usize> { batch.iter().chain(tail).copied().collect() };
        match self {
            LinalgOp::LuPivotsToPermutation { permutation_size } => {
                want(1)?;
                let p = &ops[0].0;
                if p.dtype != DType::I32 || p.shape.is_empty() {
                    return Err(format!(
                        "lu_pivots_to_permutation expects int32 pivots of rank >= 1, got {}",
                        super::shape::fmt_aval(p)
                    ));
                }
                let (batch, k) = p.shape.split_at(p.shape.len() - 1);
                if k[0] > *permutation_size {
                    return Err(format!(
                        "lu_pivots_to_permutation: {} pivots exceed permutation_size {permutation_size}",
                        k[0]
                    ));
                }
                Ok(vec![av(DType::I32, with(batch, &[*permutation_size]))])
            }
            LinalgOp::TriangularSolve { left_side, .. } => {
                want(2)?;
                let (a, b) = (&ops[0].0, &ops[1].0);
                let (ab, m, m2) = float_operand(name, a)?;
                let (bb, r, c) = float_operand(name, b)?;
                if m != m2 {
                    return Err(format!("triangular_solve expects a square matrix a, got {}", super::shape::fmt_aval(a)));
                }
                if a.dtype != b.dtype || ab != bb {
                    return Err(format!(
                        "triangular_solve expects a and b of one dtype and equal batch dimensions, got {} and {}",
                        super::shape::fmt_aval(a),
                        super::shape::fmt_aval(b)
                    ));
                }
                let common = if *left_side { r } else { c };
                if common != m {
                    return Err(format!(
                        "triangular_solve: a {} does not match b {} (left_side={})",
                        super::shape::fmt_aval(a),
                        super::shape::fmt_aval(b),
                        py_bool(*left_side)
                    ));
                }
                Ok(vec![b.clone()])
            }
            LinalgOp::LuSolve => {
                want(2)?;
                let (a, b) = (&ops[0].0, &ops[1].0);
                let (ab, m, m2) = float_operand(name, a)?;
                let (bb, r, _) = float_operand(name, b)?;
                if m != m2 || a.dtype != b.dtype || ab != bb || r != m {
                    return Err(format!(
                        "lu_solve expects a[..., n, n] and b[..., n, k] of one dtype and batch, got {} and {}",
                        super::shape::fmt_aval(a),
                        super::shape::fmt_aval(b)
                    ));
                }
                Ok(vec![b.clone()])
            }
            _ => {
                want(1)?;
                let a = &ops[0].0;
                let (batch, m, n) = float_operand(name, a)?;
                let k = m.min(n);
                let square = || -> Result<(), String> {
                    if m != n {
                        return Err(format!("{name} expects square matrices, got {}", super::shape::fmt_aval(a)));
                    }
                    Ok(())
                };
                let dt = a.dtype;
                Ok(match self {
                    LinalgOp::Cholesky | LinalgOp::CholeskyTril { .. } => {
                        square()?;
                        vec![a.clone()]
                    }
                    LinalgOp::Lu => vec![a.clone(), av(DType::I32, with(batch, &[k])), av(DType::I32, with(batch, &[m]))],
                    LinalgOp::Qr { full_matrices } => {
                        let q = if *full_matrices { m } else { k };
                        vec![av(dt, with(batch, &[m, q])), av(dt, with(batch, &[q, n]))]
                    }
                    LinalgOp::Eigh { .. } => {
                        square()?;
                        vec![a.clone(), av(dt, with(batch, &[n]))]
                    }
                    LinalgOp::EighFolded { vectors, .. } => {
                        square()?;
                        let w = av(dt, with(batch, &[n]));
                        if *vectors {
                            vec![a.clone(), w]
                        } else {
                            vec![w]
                        }
                    }
                    LinalgOp::Svd { full_matrices, compute_uv } => {
                        let mut v = vec![av(dt, with(batch, &[k]))];
                        if *compute_uv {
                            let (u, vt) = if *full_matrices { (m, n) } else { (k, k) };
                            v.push(av(dt, with(batch, &[m, u])));
                            v.push(av(dt, with(batch, &[vt, n])));
                        }
                        v
                    }
                    LinalgOp::Eig { compute_left, compute_right } => {
                        square()?;
                        let mut v = vec![av(dt, with(batch, &[n]))];
                        v.extend((0..*compute_left as usize + *compute_right as usize).map(|_| a.clone()));
                        v
                    }
                    LinalgOp::Hessenberg => {
                        square()?;
                        vec![a.clone(), av(dt, with(batch, &[n.saturating_sub(1)]))]
                    }
                    LinalgOp::Tridiagonal => {
                        square()?;
                        let e = av(dt, with(batch, &[n.saturating_sub(1)]));
                        vec![a.clone(), av(dt, with(batch, &[n])), e.clone(), e]
                    }
                    LinalgOp::Complex(_) => return Err(format!("{name}: a complex op nested in a complex op")),
                    LinalgOp::LuPivotsToPermutation { .. } | LinalgOp::TriangularSolve { .. } | LinalgOp::LuSolve => {
                        unreachable!()
                    }
                })
            }
        }
    }

    /// Rough amount of work (for choosing inline vs queued dispatch): cubic in the matrix size.
    pub fn work(&self, inputs: &[&Aval]) -> usize {
        let a = inputs[0];
        let r = a.shape.len();
        if r < 2 {
            return a.numel().unwrap_or(usize::MAX);
        }
        let batch: usize = a.shape[..r - 2].iter().product();
        let (m, n) = (a.shape[r - 2], a.shape[r - 1]);
        // complex arithmetic is about four real operations per one
        let scale = if matches!(self, LinalgOp::Complex(_) | LinalgOp::Eig { .. }) { 4 } else { 1 };
        batch.saturating_mul(m.saturating_mul(n).saturating_mul(m.min(n).max(1))).saturating_mul(scale)
    }
}

/// The batch dims and the matrix dims of a float32/float64 operand of rank >= 2.
fn float_operand<'a>(name: &str, a: &'a Aval) -> Result<(&'a [usize], usize, usize), String> {
    if !matches!(a.dtype, DType::F32 | DType::F64) {
        return Err(format!("{name} expects float32 or float64 operands, got {}", super::shape::fmt_aval(a)));
    }
    let r = a.shape.len();
    if r < 2 {
        return Err(format!("{name} expects operands of rank >= 2, got {}", super::shape::fmt_aval(a)));
    }
    Ok((&a.shape[..r - 2], a.shape[r - 2], a.shape[r - 1]))
}
