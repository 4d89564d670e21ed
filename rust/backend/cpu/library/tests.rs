//! Library steps run end to end: JSON program → optimize → fuse → compile → run, against naive Rust.
use crate::buffer::Buffer;
use crate::ir::{Aval, DType};

fn f32buf(shape: &[usize], data: &[f32]) -> Buffer {
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    Buffer::from_bytes(&Aval::new(DType::F32, shape.to_vec()), &bytes).unwrap()
}
fn i32buf(shape: &[usize], data: &[i32]) -> Buffer {
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    Buffer::from_bytes(&Aval::new(DType::I32, shape.to_vec()), &bytes).unwrap()
}
fn f32s(b: &Buffer) -> Vec<f32> {
    b.as_bytes().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}
fn i32s(b: &Buffer) -> Vec<i32> {
    b.as_bytes().chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn run(json: &str, inputs: &[Buffer]) -> Vec<Buffer> {
    let (_, plan) = crate::opt::compile_pipeline(json).unwrap_or_else(|e| panic!("{e}\n{json}"));
    let exe = crate::backend::cpu::compile(&plan).unwrap();
    exe.run(inputs).unwrap()
}

fn seq(n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|i| ((i * 7 + 3) % 11) as f32 * scale - 1.0).collect()
}

fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
    idx
}
fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |a, (i, s)| a * s + i)
}

/// Naive dot_general on row-major f32 data.
#[allow(clippy::too_many_arguments)]
fn naive_dot(
    l: &[f32], ls: &[usize], r: &[f32], rs: &[usize], lc: &[usize], rc: &[usize], lb: &[usize], rb: &[usize],
) -> (Vec<f32>, Vec<usize>) {
    let lf: Vec<usize> = (0..ls.len()).filter(|d| !lc.contains(d) && !lb.contains(d)).collect();
    let rf: Vec<usize> = (0..rs.len()).filter(|d| !rc.contains(d) && !rb.contains(d)).collect();
    let mut oshape: Vec<usize> = lb.iter().map(|&d| ls[d]).collect();
    oshape.extend(lf.iter().map(|&d| ls[d]));
    oshape.extend(rf.iter().map(|&d| rs[d]));
    let kshape: Vec<usize> = lc.iter().map(|&d| ls[d]).collect();
    let n: usize = oshape.iter().product();
    let nk: usize = kshape.iter().product();
    let mut out = vec![0f32; n];
    for (o, v) in out.iter_mut().enumerate() {
        let oi = unravel(o, &oshape);
        let mut li = vec![0; ls.len()];
        let mut ri = vec![0; rs.len()];
        for (j, (&a, &b)) in lb.iter().zip(rb).enumerate() {
            li[a] = oi[j];
            ri[b] = oi[j];
        }
        for (j, &a) in lf.iter().enumerate() {
            li[a] = oi[lb.len() + j];
        }
        for (j, &b) in rf.iter().enumerate() {
            ri[b] = oi[lb.len() + lf.len() + j];
        }
        let mut acc = 0f32;
        for k in 0..nk {
            let ki = unravel(k, &kshape);
            for (j, (&a, &b)) in lc.iter().zip(rc).enumerate() {
                li[a] = ki[j];
                ri[b] = ki[j];
            }
            acc += l[ravel(&li, ls)] * r[ravel(&ri, rs)];
        }
        *v = acc;
    }
    (out, oshape)
}

fn close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= 1e-3 * (1.0 + y.abs()), "element {i}: {x} vs {y}");
    }
}

fn l(v: &[usize]) -> String {
    format!("{v:?}")
}

#[test]
fn dot_general_layouts() {
    // (lhs shape, rhs shape, lc, rc, lb, rb)
    let cases: &[(&[usize], &[usize], &[usize], &[usize], &[usize], &[usize])] = &[
        (&[3, 4], &[4, 5], &[1], &[0], &[], &[]),
        (&[4, 3], &[4, 5], &[0], &[0], &[], &[]),
        (&[3, 4], &[5, 4], &[1], &[1], &[], &[]),
        (&[4, 3], &[5, 4], &[0], &[1], &[], &[]),
        (&[4], &[4], &[0], &[0], &[], &[]),
        (&[3, 4], &[4], &[1], &[0], &[], &[]),
        (&[4], &[4, 2], &[0], &[0], &[], &[]),
        (&[3], &[5], &[], &[], &[], &[]),
        (&[2, 3, 4], &[2, 4, 5], &[2], &[1], &[0], &[0]),
        (&[3, 2, 4], &[4, 5, 2], &[2], &[0], &[1], &[2]),
        (&[2, 3, 4, 6], &[4, 6, 5], &[2, 3], &[0, 1], &[], &[]),
        (&[2, 3, 4, 6], &[6, 5, 4], &[3, 2], &[0, 2], &[], &[]),
        (&[2, 3, 4], &[3, 4, 2], &[1], &[0], &[0, 2], &[2, 1]),
        (&[0, 4], &[4, 5], &[1], &[0], &[], &[]),
        (&[3, 0], &[0, 5], &[1], &[0], &[], &[]),
        (&[1, 4], &[4, 1], &[1], &[0], &[], &[]),
        (&[70, 60], &[60, 50], &[1], &[0], &[], &[]),
        (&[64, 70, 60], &[64, 50, 60], &[2], &[2], &[0], &[0]),
    ];
    for (ls, rs, lc, rc, lb, rb) in cases {
        let (nl, nr) = (ls.iter().product::<usize>(), rs.iter().product::<usize>());
        let (a, b) = (seq(nl, 0.25), seq(nr, 0.5));
        let (want, oshape) = naive_dot(&a, ls, &b, rs, lc, rc, lb, rb);
        let json = format!(
            r#"{{"invars":[[0,"f32",{}],[1,"f32",{}]],"eqns":[{{"prim":"dot_general","params":{{"lhs_contracting":{},"rhs_contracting":{},"lhs_batch":{},"rhs_batch":{},"preferred_element_type":null}},"in":[0,1],"out":[[2,"f32",{}]]}}],"outvars":[2]}}"#,
            l(ls), l(rs), l(lc), l(rc), l(lb), l(rb), l(&oshape)
        );
        let out = run(&json, &[f32buf(ls, &a), f32buf(rs, &b)]);
        close(&f32s(&out[0]), &want);
    }
}

#[test]
fn dot_of_transposes_and_fused_epilogue() {
    // relu(x @ transpose(y) + bias): transpose folds into the dot, the epilogue is one kernel.
    let (m, k, n) = (5, 7, 6);
    let (x, y, bias) = (seq(m * k, 0.3), seq(n * k, 0.2), seq(n, 1.0));
    let json = format!(
        r#"{{"invars":[[0,"f32",[{m},{k}]],[1,"f32",[{n},{k}]],[2,"f32",[{n}]]],"eqns":[
        {{"prim":"transpose","params":{{"permutation":[1,0]}},"in":[1],"out":[[3,"f32",[{k},{n}]]]}},
        {{"prim":"dot_general","params":{{"lhs_contracting":[1],"rhs_contracting":[0],"lhs_batch":[],"rhs_batch":[]}},"in":[0,3],"out":[[4,"f32",[{m},{n}]]]}},
        {{"prim":"broadcast_in_dim","params":{{"shape":[{m},{n}],"broadcast_dimensions":[1]}},"in":[2],"out":[[5,"f32",[{m},{n}]]]}},
        {{"prim":"add","in":[4,5],"out":[[6,"f32",[{m},{n}]]]}},
        {{"prim":"max","in":[6,{{"lit":0.0,"dtype":"f32"}}],"out":[[7,"f32",[{m},{n}]]]}}],"outvars":[7]}}"#
    );
    let (_, plan) = crate::opt::compile_pipeline(&json).unwrap();
    let kernels = plan.steps.iter().filter(|s| matches!(s, crate::plan::Step::Kernel(_))).count();
    assert_eq!(kernels, 1, "{}", crate::plan::plan_text(&plan));
    let out = run(&json, &[f32buf(&[m, k], &x), f32buf(&[n, k], &y), f32buf(&[n], &bias)]);
    let (d, _) = naive_dot(&x, &[m, k], &y, &[n, k], &[1], &[1], &[], &[]);
    let want: Vec<f32> = d.iter().enumerate().map(|(i, v)| (v + bias[i % n]).max(0.0)).collect();
    close(&f32s(&out[0]), &want);
}

#[test]
fn gram_products_are_symmetric_and_exact() {
    // x · xᵀ (one operand used twice, contracting its last dim) takes the symmetric path at n >= 256; the
    // uneven sizes exercise the recursive split. Also xᵀ · x (contracting dim 0) and a small one (plain path).
    for &(n, k, lc) in &[(300usize, 37usize, 1usize), (513, 20, 1), (257, 9, 0), (40, 5, 1)] {
        let shape = if lc == 1 { [n, k] } else { [k, n] };
        let x = seq(n * k, 0.125);
        let (want, oshape) = naive_dot(&x, &shape, &x, &shape, &[lc], &[lc], &[], &[]);
        let json = format!(
            r#"{{"invars":[[0,"f32",{}]],"eqns":[{{"prim":"dot_general","params":{{"lhs_contracting":[{lc}],"rhs_contracting":[{lc}],"lhs_batch":[],"rhs_batch":[]}},"in":[0,0],"out":[[1,"f32",{}]]}}],"outvars":[1]}}"#,
            l(&shape), l(&oshape)
        );
        let got = f32s(&run(&json, &[f32buf(&shape, &x)])[0]);
        close(&got, &want);
        for i in 0..n {
            for j in 0..n {
                assert_eq!(got[i * n + j].to_bits(), got[j * n + i].to_bits(), "n={n}: ({i},{j}) not mirrored");
            }
        }
    }
}

#[test]
fn transpose_of_a_dot_is_the_swapped_dot() {
    // transpose(dot(a, b)) with the free blocks swapped becomes dot(b, a): no transpose step remains, for a
    // plain and a batched product; a permutation that is not a block swap keeps its transpose.
    let cases: &[(&[usize], &[usize], &str, &str, &[usize], &[usize], bool)] = &[
        (&[4, 3], &[4, 5], "[0]", "[]", &[1, 0], &[5, 3], true),
        (&[2, 3, 4], &[2, 4, 5], "[2]", "[0]", &[0, 2, 1], &[2, 5, 3], true),
        (&[2, 3, 4], &[2, 4, 5], "[2]", "[0]", &[1, 0, 2], &[3, 2, 5], false),
    ];
    for &(ls, rs, lc, lb, perm, tshape, folds) in cases {
        let rc = if lb == "[]" { "[0]" } else { "[1]" };
        let dshape: Vec<usize> = if lb == "[]" { vec![ls[1], rs[1]] } else { vec![ls[0], ls[1], rs[2]] };
        let json = format!(
            r#"{{"invars":[[0,"f32",{}],[1,"f32",{}]],"eqns":[
            {{"prim":"dot_general","params":{{"lhs_contracting":{lc},"rhs_contracting":{rc},"lhs_batch":{lb},"rhs_batch":{lb}}},"in":[0,1],"out":[[2,"f32",{}]]}},
            {{"prim":"transpose","params":{{"permutation":{}}},"in":[2],"out":[[3,"f32",{}]]}}],"outvars":[3]}}"#,
            l(ls), l(rs), l(&dshape), l(perm), l(tshape)
        );
        let (_, plan) = crate::opt::compile_pipeline(&json).unwrap();
        let text = crate::plan::plan_text(&plan);
        assert_eq!(!text.contains("transpose"), folds, "{text}");
        let (a, b) = (seq(ls.iter().product(), 0.25), seq(rs.iter().product(), 0.5));
        let lcv: Vec<usize> = vec![if lb == "[]" { 0 } else { 2 }];
        let rcv: Vec<usize> = vec![if lb == "[]" { 0 } else { 1 }];
        let bv: Vec<usize> = if lb == "[]" { vec![] } else { vec![0] };
        let (d, _) = naive_dot(&a, ls, &b, rs, &lcv, &rcv, &bv, &bv);
        let want: Vec<f32> = (0..d.len())
            .map(|o| {
                let ti = unravel(o, tshape);
                let mut di = vec![0; perm.len()];
                for (t, &p) in perm.iter().enumerate() {
                    di[p] = ti[t];
                }
                d[ravel(&di, &dshape)]
            })
            .collect();
        let out = run(&json, &[f32buf(ls, &a), f32buf(rs, &b)]);
        close(&f32s(&out[0]), &want);
    }
}

#[test]
fn integer_dot_and_preferred_type() {
    let json = r#"{"invars":[[0,"i32",[2,3]],[1,"i32",[3,2]]],"eqns":[
      {"prim":"dot_general","params":{"lhs_contracting":[1],"rhs_contracting":[0],"lhs_batch":[],"rhs_batch":[]},"in":[0,1],"out":[[2,"i32",[2,2]]]},
      {"prim":"dot_general","params":{"lhs_contracting":[1],"rhs_contracting":[0],"lhs_batch":[],"rhs_batch":[],"preferred_element_type":"f32"},"in":[0,1],"out":[[3,"f32",[2,2]]]}],
      "outvars":[2,3]}"#;
    let out = run(json, &[i32buf(&[2, 3], &[1, 2, 3, 4, 5, 6]), i32buf(&[3, 2], &[7, 8, 9, 10, 11, 12])]);
    assert_eq!(i32s(&out[0]), vec![58, 64, 139, 154]);
    assert_eq!(f32s(&out[1]), vec![58.0, 64.0, 139.0, 154.0]);
}

#[test]
fn concatenate_pad_dynamic_slices() {
    let json = r#"{"invars":[[0,"f32",[2,2]],[1,"f32",[2,3]],[2,"i32",[]]],"eqns":[
      {"prim":"concatenate","params":{"dimension":1},"in":[0,1],"out":[[3,"f32",[2,5]]]},
      {"prim":"pad","params":{"padding_config":[[1,-1,0],[-1,2,1]]},"in":[0,{"lit":9.0,"dtype":"f32"}],"out":[[4,"f32",[2,4]]]},
      {"prim":"dynamic_slice","params":{"slice_sizes":[1,2]},"in":[1,{"lit":0,"dtype":"i32"},2],"out":[[5,"f32",[1,2]]]},
      {"prim":"dynamic_update_slice","in":[1,0,{"lit":-4,"dtype":"i32"},2],"out":[[6,"f32",[2,3]]]}],
      "outvars":[3,4,5,6]}"#;
    let a = f32buf(&[2, 2], &[1., 2., 3., 4.]);
    let b = f32buf(&[2, 3], &[5., 6., 7., 8., 9., 10.]);
    let out = run(json, &[a, b, i32buf(&[], &[7])]);
    assert_eq!(f32s(&out[0]), vec![1., 2., 5., 6., 7., 3., 4., 8., 9., 10.]);
    // rows: [9-row, row0]; cols of [1,_,2] with interior 1 → [1,9,2], crop 1 left, +2 right → [9,2,9,9]
    assert_eq!(f32s(&out[1]), vec![9., 9., 9., 9., 9., 2., 9., 9.]);
    assert_eq!(f32s(&out[2]), vec![6., 7.]); // start 7 clamps to 1
    assert_eq!(f32s(&out[3]), vec![5., 1., 2., 8., 3., 4.]);
}

#[test]
fn gather_scatter_sort_cumsum() {
    // x[idx] rows with clamping; fill mode; scatter-add with a dropped out-of-bounds index.
    let json = r#"{"invars":[[0,"f32",[3,2]],[1,"i32",[4,1]],[2,"f32",[4,2]]],"eqns":[
      {"prim":"gather","params":{"offset_dims":[1],"collapsed_slice_dims":[0],"start_index_map":[0],"slice_sizes":[1,2],"mode":"clip"},"in":[0,1],"out":[[3,"f32",[4,2]]]},
      {"prim":"gather","params":{"offset_dims":[1],"collapsed_slice_dims":[0],"start_index_map":[0],"slice_sizes":[1,2],"mode":"fill","fill_value":null},"in":[0,1],"out":[[4,"f32",[4,2]]]},
      {"prim":"scatter-add","params":{"update_window_dims":[1],"inserted_window_dims":[0],"scatter_dims_to_operand_dims":[0],"mode":"drop"},"in":[0,1,2],"out":[[5,"f32",[3,2]]]},
      {"prim":"sort","params":{"dimension":0,"is_stable":true,"num_keys":1},"in":[2,0],"out":[[6,"f32",[4,2]],[7,"f32",[3,2]]]},
      {"prim":"cumsum","params":{"axis":0,"reverse":true},"in":[0],"out":[[8,"f32",[3,2]]]}],
      "outvars":[3,4,5,8]}"#;
    // sort with mismatched shapes must be rejected by the verifier
    assert!(crate::opt::compile_pipeline(json).is_err());
    let json = json.replace(r#":[2,0],"out":[[6,"f32",[4,2]],[7,"f32",[3,2]]]"#, r#":[2],"out":[[6,"f32",[4,2]]]"#)
        .replace(r#""outvars":[3,4,5,8]"#, r#""outvars":[3,4,5,6,8]"#);
    let x = f32buf(&[3, 2], &[1., 2., 3., 4., 5., 6.]);
    let idx = i32buf(&[4, 1], &[2, -1, 5, 0]);
    let upd = f32buf(&[4, 2], &[10., 20., 30., f32::NAN, 50., 60., -1., 0.]);
    let out = run(&json, &[x, idx, upd]);
    assert_eq!(f32s(&out[0]), vec![5., 6., 1., 2., 5., 6., 1., 2.]);
    let fill = f32s(&out[1]);
    assert_eq!(&fill[..2], &[5., 6.]);
    assert!(fill[2].is_nan() && fill[3].is_nan() && fill[4].is_nan() && fill[5].is_nan());
    assert_eq!(&fill[6..], &[1., 2.]);
    assert_eq!(f32s(&out[2]), vec![0., 2., 3., 4., 15., 26.]);
    let sorted = f32s(&out[3]);
    assert_eq!(&sorted[..6], &[-1., 0., 10., 20., 30., 60.]);
    assert_eq!(sorted[6], 50.);
    assert!(sorted[7].is_nan());
    assert_eq!(f32s(&out[4]), vec![9., 12., 8., 10., 5., 6.]);
}

#[test]
fn multi_key_sort_argsort() {
    let json = r#"{"invars":[[0,"i32",[6]]],"eqns":[
      {"prim":"iota","params":{"dtype":"i32","shape":[6],"dimension":0},"in":[],"out":[[1,"i32",[6]]]},
      {"prim":"sort","params":{"dimension":0,"is_stable":true,"num_keys":1},"in":[0,1],"out":[[2,"i32",[6]],[3,"i32",[6]]]}],
      "outvars":[3]}"#;
    let out = run(json, &[i32buf(&[6], &[3, -1, 3, 0, -5, 2])]);
    assert_eq!(i32s(&out[0]), vec![4, 1, 3, 5, 0, 2]);
}

/// A 1-D NWC convolution (stride 2, padding (1, 0), rhs dilation 2) against hand-rolled loops, through the
/// whole pipeline; the printed params round-trip through the wire.
#[test]
fn conv_general_dilated_1d_matches_loops() {
    let (n, w, c, k, o) = (2usize, 7usize, 3usize, 2usize, 4usize);
    let x = seq(n * w * c, 0.25);
    let f = seq(k * c * o, 0.5);
    let json = r#"{"version":1,"name":"t","invars":[[0,"f32",[2,7,3]],[1,"f32",[2,3,4]]],"eqns":[
        {"prim":"conv_general_dilated","params":{"window_strides":[2],"padding":[[1,0]],"lhs_dilation":[1],
         "rhs_dilation":[2],"lhs_spec":[0,2,1],"rhs_spec":[2,1,0],"out_spec":[0,2,1],"feature_group_count":1,
         "batch_group_count":1,"preferred_element_type":null},"in":[0,1],"out":[[2,"f32",[2,3,4]]]}],"outvars":[2]}"#;
    let out = f32s(&run(json, &[f32buf(&[n, w, c], &x), f32buf(&[k, c, o], &f)])[0]);
    let ow = 3; // ((7 + 1) - 3) / 2 + 1
    for b in 0..n {
        for p in 0..ow {
            for q in 0..o {
                let mut want = 0f32;
                for j in 0..k {
                    let pos = (p * 2 + j * 2) as i64 - 1;
                    if pos < 0 || pos >= w as i64 {
                        continue;
                    }
                    for ci in 0..c {
                        want += x[(b * w + pos as usize) * c + ci] * f[(j * c + ci) * o + q];
                    }
                }
                let got = out[(b * ow + p) * o + q];
                assert!((got - want).abs() < 1e-5, "({b}, {p}, {q}): {got} vs {want}");
            }
        }
    }
}

/// A 2x2 stride-2 max pool and its gradient (first maximum of each window gets the source).
#[test]
fn reduce_window_max_and_select_and_scatter_add() {
    let x = [1f32, 3.0, 3.0, 2.0, 3.0, 1.0, 2.0, 5.0];
    let json = r#"{"version":1,"name":"t","invars":[[0,"f32",[2,4]],[1,"f32",[1,2]]],"eqns":[
        {"prim":"reduce_window_max","params":{"window_dimensions":[2,2],"window_strides":[2,2],"padding":[[0,0],[0,0]],
         "base_dilation":[1,1],"window_dilation":[1,1]},"in":[0],"out":[[2,"f32",[1,2]]]},
        {"prim":"select_and_scatter_add","params":{"select_prim":"ge","window_dimensions":[2,2],"window_strides":[2,2],
         "padding":[[0,0],[0,0]]},"in":[1,0],"out":[[3,"f32",[2,4]]]}],"outvars":[2,3]}"#;
    let outs = run(json, &[f32buf(&[2, 4], &x), f32buf(&[1, 2], &[10.0, 20.0])]);
    assert_eq!(f32s(&outs[0]), vec![3.0, 5.0]);
    assert_eq!(f32s(&outs[1]), vec![0.0, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 20.0]);
}

/// `act(conv(x, w) + b)` with the epilogue mark (`opt::epilogue`) on and off: bitwise the same on the tile
/// path (3×3 NHWC), and against the conv with the bias added by hand (relu: exact math).
#[test]
fn conv_epilogue_in_place_matches_the_unfused_plan_bitwise() {
    let cases = [
        // (lhs shape, rhs shape, specs (lhs, rhs, out), bias axis, groups)
        // (3×3 SAME: the padding below); other layouts and paths: tests/test_conv.py
        ([2usize, 9, 7, 16], [3usize, 3, 16, 32], ("[0,3,1,2]", "[3,2,0,1]", "[0,3,1,2]"), 3usize, 1usize),
    ];
    for (xs, ws, (ls, rs, os), axis, g) in cases {
        let mut out = xs;
        out[axis] = 32;
        let sh = |s: &[usize]| format!("{s:?}").replace(' ', "");
        for act in ["max", "tanh", "logistic"] {
            let tail = if act == "max" {
                format!(r#"{{"prim":"max","in":[5,{{"lit":0.0,"dtype":"f32"}}],"out":[[6,"f32",{}]]}}"#, sh(&out))
            } else {
                format!(r#"{{"prim":"{act}","in":[5],"out":[[6,"f32",{}]]}}"#, sh(&out))
            };
            let json = format!(
                r#"{{"version":1,"name":"t","invars":[[0,"f32",{x}],[1,"f32",{w}],[2,"f32",[32]]],"eqns":[
                {{"prim":"conv_general_dilated","params":{{"window_strides":[1,1],"padding":[[1,1],[1,1]],"lhs_dilation":[1,1],
                 "rhs_dilation":[1,1],"lhs_spec":{ls},"rhs_spec":{rs},"out_spec":{os},"feature_group_count":{g},
                 "batch_group_count":1,"preferred_element_type":null}},"in":[0,1],"out":[[3,"f32",{o}]]}},
                {{"prim":"broadcast_in_dim","params":{{"shape":{o},"broadcast_dimensions":[{axis}]}},"in":[2],"out":[[4,"f32",{o}]]}},
                {{"prim":"add","in":[3,4],"out":[[5,"f32",{o}]]}},{tail}],"outvars":[6]}}"#,
                x = sh(&xs),
                w = sh(&ws),
                o = sh(&out),
            );
            let (_, plan) = crate::opt::compile_pipeline(&json).unwrap_or_else(|e| panic!("{e}\n{json}"));
            assert!(
                plan.steps.iter().any(|s| matches!(s, crate::plan::Step::Library(l) if l.epilogue)),
                "not marked: {xs:?} {act}"
            );
            let mut plain = plan.clone();
            for s in &mut plain.steps {
                if let crate::plan::Step::Library(l) = s {
                    l.epilogue = false;
                }
            }
            let n: usize = xs.iter().product();
            let inputs = [f32buf(&xs, &seq(n, 0.125)), f32buf(&ws, &seq(ws.iter().product(), 0.0625)), f32buf(&[32], &seq(32, 0.5))];
            let fused = crate::backend::cpu::compile(&plan).unwrap();
            assert!(fused.as_text().contains("epilogue: step"), "{xs:?} {act}");
            let a = fused.run(&inputs).unwrap();
            let b = crate::backend::cpu::compile(&plain).unwrap().run(&inputs).unwrap();
            assert_eq!(a[0].as_bytes(), b[0].as_bytes(), "{xs:?} {ws:?} {act}");
            if act == "max" {
                // against the conv alone with bias and relu applied here
                let cj = json.split("{\"prim\":\"broadcast_in_dim\"").next().unwrap().trim_end().trim_end_matches(',');
                let cj = format!("{cj}],\"outvars\":[3]}}").replace(r#"[2,"f32",[32]]"#, "").replace(",]", "]");
                let y = f32s(&run(&cj, &inputs[..2])[0]);
                let bias = seq(32, 0.5);
                let got = f32s(&a[0]);
                for (i, (&yv, &gv)) in y.iter().zip(&got).enumerate() {
                    let c = unravel(i, &out)[axis];
                    assert_eq!((yv + bias[c]).max(0.0).to_bits(), gv.to_bits(), "{xs:?} at {i}");
                }
            }
        }
    }
}
