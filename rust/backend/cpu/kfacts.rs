//! What a kernel body's integer values are known to be, so codegen can skip work the values make moot:
//! - value ranges (constants, iotas, clamps, `x % c`, `x / c`, sums and products that cannot wrap), which
//!   decide compares, selects and clamps (`x[i % n]`'s negative-index fix-up after a floor modulo, the
//!   clamp before a gather) and let a gather whose index is known in bounds skip its own clamp and check;
//! - JAX's floor division and floor modulo by a positive constant (`jnp.floor_divide`/`jnp.remainder`
//!   trace to a truncating `div`/`rem`, compares, an `and` and a `select_n`), which vector code computes
//!   as one short sequence (`vdiv::floor_div_rem_pos_const`).
//!
//! Facts only name instructions whose value another computes identically, so using them changes no bits.
use crate::ir::{BinaryOp, CompareOp, DType, Scalar, UnaryOp};
use crate::plan::{KInstr, KOp, Kernel};

/// What codegen may do instead of lowering an instruction as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fact {
    None,
    /// Same value as an earlier instruction (a decided select, a clamp that cannot move its operand).
    Alias(usize),
    /// `floor(x / c)` of signed integer instruction `x` by the constant `c > 0`.
    FloorDiv { x: usize, c: i64 },
    /// `x - c * floor(x / c)` (the result in `0..c`) of signed integer instruction `x`, `c > 0`.
    FloorRem { x: usize, c: i64 },
}

/// A bool instruction's meaning, when it is one of the pieces of the floor patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pred {
    /// `v < 0`
    Neg(usize),
    /// `v <= 0` (JAX: `sign(v) != 1`)
    NonPos(usize),
    /// `v != 0`
    Nz(usize),
    /// `x < 0 && x % c != 0`: a truncating quotient of `x` by `c > 0` is one above the floor.
    Adjust(usize, i64),
}

pub struct Facts {
    /// Per instruction: an inclusive range of its integer value (bools 0/1), when narrower than its dtype's.
    pub range: Vec<Option<(i128, i128)>>,
    pub fact: Vec<Fact>,
}

impl Facts {
    /// Whether integer instruction `i` is known to lie in `0..=hi`.
    pub fn within(&self, i: usize, hi: u64) -> bool {
        self.range.get(i).copied().flatten().is_some_and(|(l, h)| l >= 0 && h <= i128::from(hi))
    }
}

fn dtype_range(dt: DType) -> Option<(i128, i128)> {
    let bits = 8 * dt.size() as u32;
    match dt {
        DType::Bool => Some((0, 1)),
        d if d.is_signed_int() => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
        d if d.is_unsigned_int() => Some((0, (1i128 << bits) - 1)),
        _ => None,
    }
}

/// Analyses `k`'s body (see the module docs).
pub fn analyze(k: &Kernel) -> Facts {
    let body = &k.body;
    let n = body.len();
    let mut range: Vec<Option<(i128, i128)>> = vec![None; n];
    let mut fact = vec![Fact::None; n];
    let mut pred: Vec<Option<Pred>> = vec![None; n];
    // follows aliases to the instruction that computes the value
    let root = |fact: &[Fact], mut j: usize| {
        while let Some(Fact::Alias(t)) = fact.get(j) {
            j = *t;
        }
        j
    };
    let konst = |j: usize| match body.get(j).map(|x| &x.op) {
        Some(KOp::Const { value: Scalar::Int(c) }) => Some(i128::from(*c)),
        Some(KOp::Const { value: Scalar::Bool(c) }) => Some(i128::from(*c)),
        _ => None,
    };
    for (i, ins) in body.iter().enumerate() {
        let dt = ins.dtype;
        let full = dtype_range(dt);
        let r = |j: usize, range: &[Option<(i128, i128)>]| range.get(j).copied().flatten();
        // a range that holds in the dtype (else the value may wrap: nothing known)
        let fit = |lo: i128, hi: i128| full.filter(|&(a, b)| a <= lo && hi <= b).map(|_| (lo, hi));
        let mut out: Option<(i128, i128)> = None;
        match &ins.op {
            KOp::Const { .. } => out = konst(i).map(|c| (c, c)),
            KOp::Iota { axis } if dt.is_int() => {
                if let Some(&len) = k.domain.get(*axis) {
                    out = fit(0, (len as i128 - 1).max(0));
                }
            }
            KOp::Binary { op, a, b } if dt.is_int() => {
                if let (Some((al, ah)), Some((bl, bh))) = (r(*a, &range), r(*b, &range)) {
                    out = match op {
                        BinaryOp::Add => fit(al + bl, ah + bh),
                        BinaryOp::Sub => fit(al - bh, ah - bl),
                        BinaryOp::Mul => {
                            let p = [al * bl, al * bh, ah * bl, ah * bh];
                            fit(*p.iter().min().unwrap_or(&0), *p.iter().max().unwrap_or(&0))
                        }
                        // a positive constant divisor: truncation is monotonic, |x % c| < c with x's sign
                        BinaryOp::Div if bl == bh && bl > 0 => fit(al / bl, ah / bl),
                        BinaryOp::Rem if bl == bh && bl > 0 => {
                            let lo = if al >= 0 { 0 } else { (1 - bl).max(al) };
                            let hi = if ah <= 0 { 0 } else { (bl - 1).min(ah) };
                            fit(lo, hi)
                        }
                        BinaryOp::Max => fit(al.max(bl), ah.max(bh)),
                        BinaryOp::Min => fit(al.min(bl), ah.min(bh)),
                        _ => None,
                    };
                }
            }
            KOp::Unary { op: UnaryOp::Sign, .. } if dt.is_signed_int() => out = Some((-1, 1)),
            KOp::Convert { a } if dt.is_int() && body[*a].dtype.is_int() => {
                out = r(*a, &range).and_then(|(l, h)| fit(l, h));
            }
            KOp::Clamp { lo, x, hi } if dt.is_int() => {
                if let (Some((ll, lh)), Some((xl, xh)), Some((hl, hh))) = (r(*lo, &range), r(*x, &range), r(*hi, &range)) {
                    // clamp(lo, x, hi) = min(max(x, lo), hi)
                    if lh <= xl && xh <= hl {
                        fact[i] = Fact::Alias(*x);
                    }
                    out = fit(xl.max(ll).min(hl), xh.max(lh).min(hh));
                }
            }
            KOp::Compare { op, a, b } => {
                let (ra, rb) = (r(*a, &range), r(*b, &range));
                let adt = body[*a].dtype;
                if let (Some((al, ah)), Some((bl, bh)), true) = (ra, rb, adt.is_int() || adt == DType::Bool) {
                    let decided = match op {
                        CompareOp::Lt if ah < bl => Some(true),
                        CompareOp::Lt if al >= bh => Some(false),
                        CompareOp::Le if ah <= bl => Some(true),
                        CompareOp::Le if al > bh => Some(false),
                        CompareOp::Gt if al > bh => Some(true),
                        CompareOp::Gt if ah <= bl => Some(false),
                        CompareOp::Ge if al >= bh => Some(true),
                        CompareOp::Ge if ah < bl => Some(false),
                        CompareOp::Eq | CompareOp::Ne if ah < bl || bh < al => Some(*op == CompareOp::Ne),
                        CompareOp::Eq | CompareOp::Ne if al == ah && bl == bh && al == bl => Some(*op == CompareOp::Eq),
                        _ => None,
                    };
                    if let Some(d) = decided {
                        out = Some((i128::from(d), i128::from(d)));
                    }
                }
                if out.is_none() && root(&fact, *a) == root(&fact, *b) && !adt.is_float() {
                    let d = matches!(op, CompareOp::Eq | CompareOp::Le | CompareOp::Ge);
                    out = Some((i128::from(d), i128::from(d)));
                }
                pred[i] = compare_pred(body, &pred, *op, *a, *b, adt, &konst);
            }
            KOp::Select { pred: p, cases } => {
                if let Some((l, h)) = r(*p, &range).filter(|&(l, h)| l == h && !cases.is_empty()) {
                    // (an int32 predicate is clamped into range)
                    let idx = (l.max(0) as usize).min(cases.len() - 1);
                    debug_assert_eq!(l, h);
                    fact[i] = Fact::Alias(cases[idx]);
                    out = r(cases[idx], &range);
                } else {
                    let rs: Option<Vec<(i128, i128)>> = cases.iter().map(|&c| r(c, &range)).collect();
                    out = rs.and_then(|v| {
                        let lo = v.iter().map(|x| x.0).min()?;
                        let hi = v.iter().map(|x| x.1).max()?;
                        Some((lo, hi))
                    });
                    if body[*p].dtype == DType::Bool && cases.len() == 2 && dt.is_signed_int() {
                        if let Some(f) = floor_pattern(body, pred[*p], cases[0], cases[1], &konst) {
                            fact[i] = f;
                            if let Fact::FloorRem { c, .. } = f {
                                out = fit(0, i128::from(c) - 1);
                            }
                        }
                    }
                }
            }
            KOp::Binary { op: BinaryOp::And, a, b } if dt == DType::Bool => {
                let (ra, rb) = (r(*a, &range), r(*b, &range));
                out = match (ra, rb) {
                    (Some((0, 0)), _) | (_, Some((0, 0))) => Some((0, 0)),
                    (Some((1, 1)), Some((1, 1))) => Some((1, 1)),
                    _ => Some((0, 1)),
                };
                pred[i] = and_pred(body, pred[*a], pred[*b], &konst);
            }
            KOp::Binary { op: BinaryOp::Or, a, b } if dt == DType::Bool => {
                out = match (r(*a, &range), r(*b, &range)) {
                    (Some((1, 1)), _) | (_, Some((1, 1))) => Some((1, 1)),
                    (Some((0, 0)), Some((0, 0))) => Some((0, 0)),
                    _ => Some((0, 1)),
                };
            }
            _ => {}
        }
        range[i] = out.or(full).filter(|_| dt.is_int() || dt == DType::Bool);
    }
    Facts { range, fact }
}

/// The `Pred` a compare of `a` and `b` (of dtype `adt`) computes, if any.
fn compare_pred(
    body: &[KInstr], pred: &[Option<Pred>], op: CompareOp, a: usize, b: usize, adt: DType, konst: &dyn Fn(usize) -> Option<i128>,
) -> Option<Pred> {
    if adt == DType::Bool {
        // p != false, p == true: p itself
        return match (op, konst(b)) {
            (CompareOp::Ne, Some(0)) | (CompareOp::Eq, Some(1)) => pred[a],
            _ => None,
        };
    }
    if !adt.is_signed_int() {
        return None;
    }
    match (op, konst(b)) {
        (CompareOp::Lt, Some(0)) => Some(Pred::Neg(a)),
        (CompareOp::Le, Some(0)) => Some(Pred::NonPos(a)),
        (CompareOp::Ne, Some(0)) => Some(Pred::Nz(a)),
        // sign(x) != 1
        (CompareOp::Ne, Some(1)) => match body[a].op {
            KOp::Unary { op: UnaryOp::Sign, a: x } => Some(Pred::NonPos(x)),
            _ => None,
        },
        _ => None,
    }
}

/// `x % c` with a constant `c > 0`: `(x, c)`.
fn rem_by_const(body: &[KInstr], r: usize, konst: &dyn Fn(usize) -> Option<i128>) -> Option<(usize, i64)> {
    match body.get(r).map(|x| &x.op) {
        Some(KOp::Binary { op: BinaryOp::Rem, a, b }) => {
            let c = konst(*b)?;
            (c > 0 && c <= i128::from(i64::MAX)).then_some((*a, c as i64))
        }
        _ => None,
    }
}

fn and_pred(body: &[KInstr], a: Option<Pred>, b: Option<Pred>, konst: &dyn Fn(usize) -> Option<i128>) -> Option<Pred> {
    let (a, b) = (a?, b?);
    for (p, q) in [(a, b), (b, a)] {
        match (p, q) {
            // r < 0 implies r != 0
            (Pred::Neg(r), Pred::Nz(s)) if r == s => return Some(Pred::Neg(r)),
            // x <= 0 && x % c != 0  ⇔  x < 0 && x % c != 0
            (Pred::NonPos(x), Pred::Nz(r)) => {
                if let Some((y, c)) = rem_by_const(body, r, konst) {
                    if y == x {
                        return Some(Pred::Adjust(x, c));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// `select_n(p, [a, b])` as a floor division or modulo by a positive constant.
fn floor_pattern(body: &[KInstr], p: Option<Pred>, a: usize, b: usize, konst: &dyn Fn(usize) -> Option<i128>) -> Option<Fact> {
    let op = |j: usize| body.get(j).map(|x| &x.op);
    match p? {
        // r = x % c; r < 0 ? r + c : r
        Pred::Neg(r) if r == a => {
            let (x, c) = rem_by_const(body, r, konst)?;
            match op(b)? {
                KOp::Binary { op: BinaryOp::Add, a: s, b: t } => {
                    let other = if *s == r { *t } else if *t == r { *s } else { return None };
                    (konst(other)? == i128::from(c)).then_some(Fact::FloorRem { x, c })
                }
                _ => None,
            }
        }
        // q = x / c; adjust ? q - 1 : q
        Pred::Adjust(x, c) => {
            match op(a)? {
                KOp::Binary { op: BinaryOp::Div, a: y, b: d } if *y == x && konst(*d)? == i128::from(c) => {}
                _ => return None,
            }
            let minus_one = match op(b)? {
                KOp::Binary { op: BinaryOp::Sub, a: q, b: one } => *q == a && konst(*one)? == 1,
                KOp::Binary { op: BinaryOp::Add, a: q, b: m } => *q == a && konst(*m)? == -1,
                _ => false,
            };
            minus_one.then_some(Fact::FloorDiv { x, c })
        }
        _ => None,
    }
}
