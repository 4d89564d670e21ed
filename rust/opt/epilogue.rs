//! Epilogue marking: a `conv_general_dilated` or `dot_general` library step whose output feeds only one
//! elementwise kernel (the bias add and activation after a layer: `max(conv(x, w) + b, 0)`) gets
//! `LibStep::epilogue`, with that kernel moved right after it when its other inputs are ready by then.
//! The CPU backend then runs the kernel in place on each block of the output as the library finishes it,
//! while the block is still in cache, instead of a second pass over memory and a second buffer.
//!
//! Why a mark and not a new step: the kernel stays a plain kernel step, so every backend that ignores
//! the mark (the GPU, loop compilers) runs the plan exactly as before, and the fused path computes each
//! point with the same compiled kernel code, so results are bitwise those of the unfused path.
use crate::plan::{step_io, Plan, Step};

pub fn run(mut plan: Plan) -> Plan {
    let mut si = 0;
    while si < plan.steps.len() {
        let mut next = si + 1;
        if let Some((steps, at)) = candidate(&plan, si) {
            let before = std::mem::replace(&mut plan.steps, steps);
            if plan.epilogue_of(at).is_some() {
                if let Step::Library(l) = &mut plan.steps[at] {
                    l.epilogue = true;
                }
                next = at + 2;
            } else {
                plan.steps = before;
            }
        }
        si = next;
    }
    plan
}

/// The steps with the only reader of step `si`'s output moved right after it, and the library step's new
/// index, when `si` is a product or convolution with one output read by exactly one later kernel whose
/// other inputs are ready after `si`. An input written by a view between the two (a bias reshaped to
/// `(1, 1, 1, C)`: `b.reshape`) is made ready by moving that view, and the views it reads, ahead of `si`:
/// a view only renames its source's bytes, so it may run as soon as its source exists.
fn candidate(plan: &Plan, si: usize) -> Option<(Vec<Step>, usize)> {
    let Step::Library(l) = &plan.steps[si] else { return None };
    if l.epilogue || l.outputs.len() != 1 {
        return None;
    }
    let s = l.outputs[0];
    let readers: Vec<usize> =
        plan.steps.iter().enumerate().filter(|(_, st)| step_io(st).0.contains(&s)).map(|(j, _)| j).collect();
    let &[j] = readers.as_slice() else { return None };
    if j <= si || !matches!(plan.steps[j], Step::Kernel(_)) {
        return None;
    }
    // whether `slot` is a plan input or written by one of the steps before `end`
    let written_before = |slot: usize, end: usize| {
        slot < plan.num_inputs || plan.steps[..end].iter().any(|st| step_io(st).1.contains(&slot))
    };
    // the views (step indices between `si` and `j`) to run before `si`
    let mut hoist: Vec<usize> = Vec::new();
    for x in step_io(&plan.steps[j]).0 {
        if x == s || written_before(x, si + 1) {
            continue;
        }
        let mut cur = x;
        loop {
            let v = (si + 1..j).find(|&t| matches!(plan.steps[t], Step::View { dst, .. } if dst == cur))?;
            hoist.push(v);
            let Step::View { src, .. } = plan.steps[v] else { return None };
            if written_before(src, si) {
                break;
            }
            cur = src;
        }
    }
    hoist.sort_unstable();
    hoist.dedup();
    let mut steps = Vec::with_capacity(plan.steps.len());
    steps.extend_from_slice(&plan.steps[..si]);
    steps.extend(hoist.iter().map(|&v| plan.steps[v].clone()));
    let at = steps.len();
    steps.push(plan.steps[si].clone());
    steps.push(plan.steps[j].clone());
    steps.extend(
        plan.steps.iter().enumerate().skip(si + 1).filter(|(t, _)| *t != j && !hoist.contains(t)).map(|(_, st)| st.clone()),
    );
    Some((steps, at))
}

#[cfg(test)]
mod tests {
    use crate::opt::compile_pipeline;
    use crate::plan::Step;

    /// conv (NHWC/HWIO, 3×3 SAME) + broadcast bias add, then `tail` equations and outputs `outs`.
    fn program(tail: &str, outs: &str) -> String {
        format!(
            r#"{{"version":1,"name":"f","invars":[[0,"f32",[2,5,5,8]],[1,"f32",[3,3,8,16]],[2,"f32",[16]]],"eqns":[
        {{"prim":"conv_general_dilated","params":{{"window_strides":[1,1],"padding":[[1,1],[1,1]],"lhs_dilation":[1,1],
         "rhs_dilation":[1,1],"lhs_spec":[0,3,1,2],"rhs_spec":[3,2,0,1],"out_spec":[0,3,1,2],"feature_group_count":1,
         "batch_group_count":1,"preferred_element_type":null}},"in":[0,1],"out":[[3,"f32",[2,5,5,16]]]}},
        {{"prim":"broadcast_in_dim","params":{{"shape":[2,5,5,16],"broadcast_dimensions":[3]}},"in":[2],
         "out":[[4,"f32",[2,5,5,16]]]}},
        {{"prim":"add","in":[3,4],"out":[[5,"f32",[2,5,5,16]]]}}{tail}],"outvars":[{outs}]}}"#
        )
    }

    fn marked(json: &str) -> Vec<bool> {
        let (_, plan) = compile_pipeline(json).unwrap_or_else(|e| panic!("{e}\n{json}"));
        plan.steps.iter().map(|s| matches!(s, Step::Library(l) if l.epilogue)).collect()
    }

    #[test]
    fn bias_and_relu_after_a_conv_are_marked() {
        let relu = r#",{"prim":"max","in":[5,{"lit":0.0,"dtype":"f32"}],"out":[[6,"f32",[2,5,5,16]]]}"#;
        let m = marked(&program(relu, "6"));
        assert_eq!(m.first(), Some(&true), "{m:?}");
    }

    /// The bias reshaped to `(1, 1, 1, 16)` (a view step between the conv and its kernel) then broadcast:
    /// the view moves ahead of the conv and the kernel is marked.
    #[test]
    fn a_reshaped_bias_is_marked() {
        let json = r#"{"version":1,"name":"f","invars":[[0,"f32",[2,5,5,8]],[1,"f32",[3,3,8,16]],[2,"f32",[16]]],"eqns":[
        {"prim":"conv_general_dilated","params":{"window_strides":[1,1],"padding":[[1,1],[1,1]],"lhs_dilation":[1,1],
         "rhs_dilation":[1,1],"lhs_spec":[0,3,1,2],"rhs_spec":[3,2,0,1],"out_spec":[0,3,1,2],"feature_group_count":1,
         "batch_group_count":1,"preferred_element_type":null},"in":[0,1],"out":[[3,"f32",[2,5,5,16]]]},
        {"prim":"reshape","params":{"new_sizes":[1,1,1,16],"dimensions":null},"in":[2],"out":[[4,"f32",[1,1,1,16]]]},
        {"prim":"broadcast_in_dim","params":{"shape":[2,5,5,16],"broadcast_dimensions":[0,1,2,3]},"in":[4],
         "out":[[5,"f32",[2,5,5,16]]]},
        {"prim":"add","in":[3,5],"out":[[6,"f32",[2,5,5,16]]]},
        {"prim":"max","in":[6,{"lit":0.0,"dtype":"f32"}],"out":[[7,"f32",[2,5,5,16]]]}],"outvars":[7]}"#;
        let (_, plan) = compile_pipeline(json).unwrap_or_else(|e| panic!("{e}"));
        let kinds: Vec<&str> = plan
            .steps
            .iter()
            .map(|s| match s {
                Step::View { .. } => "view",
                Step::Library(l) if l.epilogue => "marked",
                Step::Library(_) => "library",
                Step::Kernel(_) => "kernel",
                Step::Control(_) => "control",
            })
            .collect();
        assert_eq!(kinds, ["view", "marked", "kernel"], "{}", crate::plan::plan_text(&plan));
    }

    #[test]
    fn a_conv_output_that_is_also_returned_is_not_marked() {
        let m = marked(&program("", "5,3"));
        assert!(m.iter().all(|&b| !b), "{m:?}");
    }
}
