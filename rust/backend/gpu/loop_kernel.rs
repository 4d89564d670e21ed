//! A `while` loop as one compute shader, when its whole cond and body fit in one kernel: every kernel of
//! both sub-plans is elementwise over one common domain of N points (or over a scalar), and every
//! loop-carried or intermediate value is read either at the invocation's own point or as a scalar. Then
//! invocation `i` of N keeps point `i` of each array carry (and its own copy of every scalar carry) in
//! private variables and runs the loop to the end without a barrier: nothing is read back per iteration.
//! Loop constants stay in storage buffers and may be read at any index (also by a fused gather; a gather
//! from a carry or an intermediate keeps the loop step by step).
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

use crate::error::Result;
use crate::ir::{Aval, DType};
use crate::plan::{Kernel, OutputKind, Plan, Step};

use super::math::Helper;
use super::math::helper_source;
use super::wgsl::{decompose, kernel_body, row_major, sty, vty, Binding, KernelShader, WG};

/// Iterations one dispatch of a loop shader runs at most on a software adapter (below llvmpipe's 65535 cap
/// on shader loops, past which it silently leaves the loop).
pub const SOFTWARE_MAX_ITERS: u32 = 32768;

/// Where a sub-plan slot's value lives inside the loop shader.
#[derive(Clone)]
enum Val {
    /// A loop constant: the sub-plan input `j` (bound as a storage buffer).
    Const(usize),
    /// A private variable (carry or intermediate), `per_point` when it has one element per invocation.
    Var { name: String, per_point: bool },
}

/// The loop shader for `while cond(cc, carry): carry = body(bc, carry)`, or `None` when the loop does not
/// fit (the caller then runs the sub-plans step by step). Bindings: the used constants (cond's, then
/// body's; their slot numbers are positions in the step's inputs), the initial carries, the outputs, then
/// a u32 flag set to 1 when the loop has ended (else the caller dispatches again on the outputs).
///
/// `max_iters`: `Some(k)` ends each dispatch after k iterations (the caller reads the flag and dispatches
/// again); `None` runs the whole loop in one dispatch (hardware GPUs: nothing is read back).
pub fn while_shader(
    cond: &Plan,
    body: &Plan,
    n_cc: usize,
    n_bc: usize,
    max_groups: u32,
    max_iters: Option<u32>,
) -> Result<Option<KernelShader>> {
    let n_carry = body.outputs.len();
    if cond.num_inputs != n_cc + n_carry || body.num_inputs != n_bc + n_carry || cond.outputs.len() != 1 {
        return Ok(None);
    }
    let carries: Vec<&Aval> = (0..n_carry).map(|j| &body.slots[n_bc + j]).collect();
    // The common domain size N: the largest carry or kernel domain; everything else must be scalar.
    let numel = |a: &Aval| a.shape.iter().product::<usize>();
    let mut n = 1usize;
    for a in &carries {
        n = n.max(numel(a));
    }
    for p in [cond, body] {
        for s in &p.steps {
            match s {
                Step::Kernel(k) => n = n.max(k.domain.iter().product()),
                Step::View { .. } => {}
                _ => return Ok(None),
            }
        }
    }
    let kernel_sizes_fit = [cond, body].iter().all(|p| {
        p.steps.iter().all(|s| match s {
            Step::Kernel(k) => matches!(k.domain.iter().product::<usize>(), 1) || k.domain.iter().product::<usize>() == n,
            _ => true,
        })
    });
    if n == 0 || !kernel_sizes_fit || carries.iter().any(|a| numel(a) != 1 && numel(a) != n) || n as u64 > u32::MAX as u64 / 2 {
        return Ok(None);
    }
    let mut b = Builder { n, n_cc, bindings: vec![], decl: String::new(), const_bind: HashMap::new(), helpers: BTreeSet::new() };
    let mut out = String::new();
    // Each carry is per point (one element per invocation) or a scalar every invocation keeps a copy of.
    let per_point: Vec<bool> = carries.iter().map(|a| numel(a) == n && n > 1).collect();
    let carry_var = |j: usize| Val::Var { name: format!("c{j}"), per_point: per_point[j] };
    // Loop: the cond's value, then the body, then the new carries.
    let mut cvals: Vec<Option<Val>> = vec![None; cond.slots.len()];
    for j in 0..n_cc {
        cvals[j] = Some(Val::Const(j));
    }
    for j in 0..n_carry {
        cvals[n_cc + j] = Some(carry_var(j));
    }
    // With a cap, at most that many iterations per dispatch; the carries and a `done` flag are written and
    // the host dispatches again.
    let _ = writeln!(out, "  var done = false;");
    match max_iters {
        Some(k) => {
            let _ = writeln!(out, "  for (var it: u32 = 0u; it < {k}u; it = it + 1u) {{");
        }
        None => {
            let _ = writeln!(out, "  loop {{");
        }
    }
    if !b.emit_plan(0, cond, &mut cvals, &mut out, "    ")? {
        return Ok(None);
    }
    let pred = match cvals.get(cond.outputs[0]).cloned().flatten() {
        Some(Val::Var { name, per_point: false }) if cond.slots[cond.outputs[0]].dtype == DType::Bool => name,
        Some(Val::Const(j)) if cond.slots[j].dtype == DType::Bool => {
            let bi = b.use_const(0, j, DType::Bool)?;
            format!("(b{bi}[0] != 0u)")
        }
        _ => return Ok(None),
    };
    let _ = writeln!(out, "    if (!{pred}) {{ done = true; break; }}");
    let mut bvals: Vec<Option<Val>> = vec![None; body.slots.len()];
    for j in 0..n_bc {
        bvals[j] = Some(Val::Const(j));
    }
    for j in 0..n_carry {
        bvals[n_bc + j] = Some(carry_var(j));
    }
    if !b.emit_plan(1, body, &mut bvals, &mut out, "    ")? {
        return Ok(None);
    }
    // New carries (computed from the old ones first, then assigned).
    let mut assigns = vec![];
    for j in 0..n_carry {
        let s = body.outputs[j];
        let pp = per_point[j];
        let e = match bvals.get(s).cloned().flatten() {
            Some(Val::Var { name, .. }) => name,
            Some(Val::Const(c)) => {
                let dt = body.slots[c].dtype;
                let bi = b.use_const(1, c, dt)?;
                let at = if pp { "gid" } else { "0u" };
                if dt == DType::Bool {
                    format!("(b{bi}[{at}] != 0u)")
                } else {
                    format!("b{bi}[{at}]")
                }
            }
            _ => return Ok(None),
        };
        let _ = writeln!(out, "    let n{j} = {e};");
        assigns.push(format!("    c{j} = n{j};"));
    }
    for a in assigns {
        let _ = writeln!(out, "{a}");
    }
    let _ = writeln!(out, "  }}");

    // Prologue (initial carries) and epilogue (outputs).
    let Builder { mut bindings, mut decl, helpers, .. } = b;
    let mut pro = String::new();
    let mut epi = String::new();
    for (j, a) in carries.iter().enumerate() {
        let pp = per_point[j];
        let at = if pp { "gid" } else { "0u" };
        let b = bindings.len();
        bindings.push(Binding { slot: n_cc + n_bc + j, write: false });
        let _ = writeln!(decl, "@group(0) @binding({b}) var<storage, read> b{b}: array<{}>;", sty(a.dtype)?);
        let init = if a.dtype == DType::Bool { format!("(b{b}[{at}] != 0u)") } else { format!("b{b}[{at}]") };
        let _ = writeln!(pro, "  var c{j}: {} = {init};", vty(a.dtype)?);
    }
    for (j, a) in carries.iter().enumerate() {
        let pp = per_point[j];
        let b = bindings.len();
        // Output slots are numbered after the step's inputs: the caller maps them.
        bindings.push(Binding { slot: n_cc + n_bc + n_carry + j, write: true });
        let _ = writeln!(decl, "@group(0) @binding({b}) var<storage, read_write> b{b}: array<{}>;", sty(a.dtype)?);
        let v = if a.dtype == DType::Bool { format!("select(0u, 1u, c{j})") } else { format!("c{j}") };
        if pp {
            let _ = writeln!(epi, "  b{b}[gid] = {v};");
        } else {
            let _ = writeln!(epi, "  if (gid == 0u) {{ b{b}[0] = {v}; }}");
        }
    }
    // The flag: 1 when the loop ended in this dispatch (slot after the outputs).
    let fb = bindings.len();
    bindings.push(Binding { slot: n_cc + n_bc + 2 * n_carry, write: true });
    let _ = writeln!(decl, "@group(0) @binding({fb}) var<storage, read_write> b{fb}: array<u32>;");
    let _ = writeln!(epi, "  if (gid == 0u) {{ b{fb}[0] = select(0u, 1u, done); }}");
    let groups_total = (n as u64).div_ceil(WG as u64);
    let gx = groups_total.min(max_groups as u64).max(1);
    let gy = groups_total.div_ceil(gx).max(1);
    if gy > max_groups as u64 {
        return Ok(None);
    }
    let mut src = String::new();
    if [cond, body].iter().any(|p| p.slots.iter().any(|a| a.dtype == DType::F16)) {
        let _ = writeln!(src, "enable f16;");
    }
    let _ = writeln!(src, "// cranax while loop in one kernel ({n} points, {n_carry} carries)");
    src.push_str(&helper_source(&helpers));
    src.push_str(&decl);
    let _ = writeln!(src, "@compute @workgroup_size({WG})");
    let _ = writeln!(src, "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{");
    let _ = writeln!(src, "  let gid = (wid.y * {gx}u + wid.x) * {WG}u + lid;");
    let _ = writeln!(src, "  if (gid >= {n}u) {{ return; }}");
    src.push_str(&pro);
    src.push_str(&out);
    src.push_str(&epi);
    let _ = writeln!(src, "}}");
    Ok(Some(KernelShader { source: src, bindings, groups: [gx as u32, gy as u32, 1], second: None }))
}

/// The loop shader's bindings, declarations and helpers while its body is emitted.
struct Builder {
    n: usize,
    n_cc: usize,
    bindings: Vec<Binding>,
    decl: String,
    /// (sub-plan: 0 cond / 1 body, input) → binding.
    const_bind: HashMap<(usize, usize), usize>,
    helpers: BTreeSet<Helper>,
}

impl Builder {
    /// The binding of loop constant `j` of sub-plan `plan_i` (declared on first use).
    fn use_const(&mut self, plan_i: usize, j: usize, dt: DType) -> Result<usize> {
        if let Some(&b) = self.const_bind.get(&(plan_i, j)) {
            return Ok(b);
        }
        let slot = if plan_i == 0 { j } else { self.n_cc + j };
        let b = self.bindings.len();
        self.bindings.push(Binding { slot, write: false });
        let _ = writeln!(self.decl, "@group(0) @binding({b}) var<storage, read> b{b}: array<{}>;", sty(dt)?);
        self.const_bind.insert((plan_i, j), b);
        Ok(b)
    }

    /// Whether kernel `k` runs over the common domain (one point per invocation).
    fn per_point(&self, k: &Kernel) -> bool {
        k.domain.iter().product::<usize>() == self.n && self.n > 1
    }

    /// Emits sub-plan `p`'s steps with `vals` giving where its slots live; false when a read does not fit.
    fn emit_plan(&mut self, plan_i: usize, p: &Plan, vals: &mut [Option<Val>], out: &mut String, indent: &str) -> Result<bool> {
        for (si, s) in p.steps.iter().enumerate() {
            match s {
                // A reshape keeps row-major order, so the invocation's point stays the same element.
                Step::View { src, dst } => vals[*dst] = vals[*src].clone(),
                Step::Kernel(k) => {
                    if !k.reduce_axes.is_empty() || k.outputs.iter().any(|o| o.kind != OutputKind::Store) {
                        return Ok(false);
                    }
                    let pp = self.per_point(k);
                    let mut local = vec![];
                    let mut in_bind = vec![];
                    for (ii, inp) in k.inputs.iter().enumerate() {
                        match vals.get(inp.slot).cloned().flatten() {
                            // A gather may read a carry or intermediate at another invocation's point, which
                            // that invocation keeps privately: such a loop runs step by step. Gathers from
                            // loop constants (searchsorted's sorted array) read their storage buffer.
                            Some(Val::Var { .. }) if k.gathers_from(ii) => return Ok(false),
                            Some(Val::Const(j)) => {
                                local.push(None);
                                in_bind.push(self.use_const(plan_i, j, inp.dtype)?);
                            }
                            Some(Val::Var { name, per_point }) => {
                                let fits = if per_point {
                                    pp && inp.offset == 0
                                        && inp.strides.len() == k.domain.len()
                                        && inp.strides.iter().zip(row_major(&k.domain)).all(|(&st, r)| st == r as isize)
                                } else {
                                    inp.offset == 0 && inp.strides.iter().zip(&k.domain).all(|(&st, &d)| st == 0 || d == 1)
                                };
                                if !fits {
                                    return Ok(false);
                                }
                                local.push(Some(name));
                                in_bind.push(0);
                            }
                            None => return Ok(false),
                        }
                    }
                    let mut coords = vec!["0u".to_string(); k.domain.len()];
                    if pp {
                        let axes: Vec<usize> = (0..k.domain.len()).collect();
                        decompose(&k.domain, &axes, "gid", &mut coords);
                    }
                    let text = kernel_body(k, in_bind, local, coords, &mut self.helpers, &format!("{indent}  "))?;
                    let mut names = vec![];
                    for (oi, o) in k.outputs.iter().enumerate() {
                        let dt = k.body.get(o.value).map(|i| i.dtype).ok_or_else(|| crate::error::Error::Codegen("loop kernel output".into()))?;
                        let name = format!("p{plan_i}s{si}o{oi}");
                        let _ = writeln!(out, "{indent}var {name}: {};", vty(dt)?);
                        names.push(name);
                    }
                    let _ = writeln!(out, "{indent}{{");
                    out.push_str(&text);
                    for (o, name) in k.outputs.iter().zip(&names) {
                        let _ = writeln!(out, "{indent}  {name} = v{};", o.value);
                    }
                    let _ = writeln!(out, "{indent}}}");
                    for (o, name) in k.outputs.iter().zip(names) {
                        vals[o.slot] = Some(Val::Var { name, per_point: pp });
                    }
                }
                _ => return Ok(false),
            }
        }
        Ok(true)
    }
}
