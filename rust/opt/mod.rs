//! Optimization passes, one file each, run as an ordered pipeline, then fusion into a `plan::Plan` (the
//! backends' input). Depends on `ir`, `plan` and `error` only.
//!
//! - Pipeline (`optimize`): `recip` (divisions by broadcasts into products of reciprocals, as XLA), `f16` (float16 legalization), `cholesky` (`jnp.linalg.cholesky`'s symmetrize and
//!   `tril` folded into one `cholesky_tril` step), `eigh::symmetrize` (`jnp.linalg.eigh`'s symmetrize folded
//!   into an `eigh_folded` step), `scan_hoist` (products hoisted out of scans),
//!   `dot_fold` (transposes folded into `dot_general`), `outer` (products contracting nothing as products
//!   of broadcasts, fusible), `degenerate` (reductions and broadcasts over size-1
//!   axes into reshapes: views), then `control_fold` (a `cond` on a literal index inlined, a `while` false on
//!   entry replaced by its operands) → `simplify` → `const_fold` → `cse` → `dce` until nothing changes, then
//!   `barrier` (optimization barriers removed: they only had to keep CSE from merging across them), then
//!   `pad_add` (`a + pad(x, 0)` into an update of `a`'s window, in place where `a` is dead), `accumulate`
//!   (scan carries that only add outer products, whole or by windows, computed after the loop by
//!   `outer_accumulate`), then
//!   `lu_solve` (the steps of `jnp.linalg.solve` into one), `eigh::values_only` (an `eigh` whose
//!   eigenvectors nothing reads computes its eigenvalues alone), a `dce`, and last `contract` (a float32/
//!   float64 `add`/`sub` of a product used nowhere else into one `fma`, as XLA's LLVM contracts them).
//! - Lowering (`compile_pipeline`): `fusion` (elementwise chains and reductions into kernels; the `Plan`),
//!   `control_flow` (cond/while/scan into control steps with fused sub-plans), then `transpose_copy`
//!   (pure transposing kernels into cache-blocked library steps), then `epilogue` (elementwise kernels
//!   after a convolution or product marked to run in place on its output tiles).
pub mod dce;
pub mod barrier;
pub mod cse;
pub mod const_fold;
pub mod simplify;
pub mod subst;
pub mod fusion;
pub mod control_flow;
pub mod dot_fold;
pub mod scan_hoist;
pub mod transpose_copy;
pub mod f16;
pub mod degenerate;
pub mod lu_solve;
pub mod cholesky;
pub mod eigh;
pub mod epilogue;
pub mod recip;
pub mod pad_add;
pub mod outer;
pub mod accumulate;
pub mod control_fold;
pub mod contract;


use crate::error::{Error, Result};
use crate::ir::Program;
use crate::plan::Plan;

/// Runs the pass pipeline on a verified program: float16 legalization (`f16`) first, then simplify → const_fold → CSE → DCE, repeated (at most
/// four rounds) until a round changes nothing. In debug builds the result is verified again, and a pass
/// that broke the program is reported as an error naming the pass pipeline.
pub fn optimize(p: Program) -> Result<Program> {
    // before f16: XLA rewrites a float16 division before it upcasts (the reciprocal rounds to float16)
    let p = f16::run(recip::run(p))?;
    // before the rounds: matched on the form Python sends (`cholesky` documents why)
    let p = eigh::symmetrize(cholesky::run(p));
    let mut p = degenerate::run(outer::run(dot_fold::run(scan_hoist::run(p))));
    for _ in 0..4 {
        let before = p.eqns.len();
        let outs_before = p.outvars.clone();
        p = control_fold::run(p);
        p = simplify::run(p);
        p = const_fold::run(p);
        p = cse::run(p);
        p = dce::run(p);
        if p.eqns.len() == before && p.outvars == outs_before {
            break;
        }
    }
    let p = barrier::run(p);
    // after the rounds: the pattern is matched on simplified, deduplicated equations
    let p = dce::run(eigh::values_only(lu_solve::run(accumulate::run(pad_add::run(p)))));
    // last: XLA's LLVM contracts the multiply-adds of the code it finally emits
    let p = contract::run(p);
    if cfg!(debug_assertions) {
        crate::ir::verify::verify(&p).map_err(|e| match e {
            Error::Verify { eqn, prim, msg } => {
                Error::Verify { eqn, prim, msg: format!("after optimization (internal error): {msg}") }
            }
            other => other,
        })?;
    }
    Ok(p)
}

/// The whole front half of the compiler: parse → verify → optimize → fuse into a plan.
pub fn compile_pipeline(json: &str) -> Result<(Program, Plan)> {
    let p = crate::ir::parse::parse_program(json)?;
    crate::ir::verify::verify(&p)?;
    let p = optimize(p)?;
    let plan = epilogue::run(transpose_copy::run(fusion::lower_to_plan(&p)?));
    Ok((p, plan))
}
