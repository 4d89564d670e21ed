"""Differential fuzzing of the compiler: random well-typed programs, compiled by cranax (jit and eager), checked
against the NumPy reference interpreter of the same jaxpr (``tests/ref_interp.py``).

A program is a list of operations over a growing pool of values (the inputs first): elementwise unary and
binary primitives (operands converted and broadcast as needed, Python-scalar literals), comparisons,
``select_n``, ``clamp``, conversions, reductions, argmax/argmin, shape ops (broadcast_in_dim, reshape,
transpose, squeeze, expand_dims, slice, rev, pad, concatenate), iota, cumulative ops, ``dot_general``, sort and,
when ``cranax.lax`` has them, ``cond`` and ``fori_loop``. Shapes have 0..3 dimensions of sizes 0..5; dtypes bool,
int32, uint32, float32; inputs mix ordinary values with edge values (±0, ±inf, NaN, extremes, subnormals).

CI runs a bounded number of examples; ``pytest --fuzz-long=SECONDS tests/test_fuzz_programs.py`` keeps
generating for that long.
"""
import math
import time

import numpy as np
import hypothesis
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import cranax
from cranax import lax

import ref_interp
from op_records import OPS, select

F32, I32, U32, BOOL = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.bool_)
DTYPES = [F32, I32, U32, BOOL]
NUM = [F32, I32, U32]

FLOAT_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 3.0e38, -3.0e38, 1e-40, 1.5e-45,
                 1e-30, 65504.0, 2.0 ** 24 + 2, 0.49999997]
INT_SPECIAL = [0, 1, -1, 2, -2, 7, 31, 32, 33, -2 ** 31, 2 ** 31 - 1]
UINT_SPECIAL = [0, 1, 2, 7, 31, 32, 2 ** 31, 2 ** 32 - 1]

# the ops the fuzzer draws per operand dtype: the op records' ``fuzz`` dtypes (tests/op_records.py)
_UNARY_KINDS = ("unary", "integer_pow")
_BINARY_KINDS = ("binary", "bitwise", "shift")
UNARY = {dt: [r.name for r in select(*_UNARY_KINDS, where=lambda r: dt.name in r.fuzz)] for dt in DTYPES}
BINARY = {dt: [r.name for r in select(*_BINARY_KINDS, where=lambda r: dt.name in r.fuzz)] for dt in DTYPES}
COMPARE = [r.name for r in select("compare")]

KINDS = ["unary", "unary", "binary", "binary", "binary", "compare", "select", "clamp", "convert", "reduce",
         "argreduce", "broadcast", "reshape", "transpose", "squeeze", "expand_dims", "slice", "rev", "pad",
         "concatenate", "iota", "cumulative", "dot", "sort", "cond", "fori"]


def _lax_fn(name):
    return OPS[name].lax


def _has(name):
    return hasattr(lax, name)


# ----------------------------------------------------------------------------------------------- strategies

dims = st.sampled_from([0, 1, 1, 2, 2, 3, 3, 4, 5])
shapes = st.lists(dims, min_size=0, max_size=3).map(tuple)


def _elements(dt):
    if dt == F32:
        return st.one_of(st.sampled_from(FLOAT_SPECIAL), st.floats(-10, 10, width=32),
                         st.integers(-4, 4).map(float), st.floats(-1e6, 1e6, width=32))
    if dt == I32:
        return st.one_of(st.sampled_from(INT_SPECIAL), st.integers(-100, 100), st.integers(-2 ** 31, 2 ** 31 - 1))
    if dt == U32:
        return st.one_of(st.sampled_from(UINT_SPECIAL), st.integers(0, 100), st.integers(0, 2 ** 32 - 1))
    return st.booleans()


def _literal(draw, dt):
    if dt == F32:
        return draw(st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.0, 3.5, -0.0, np.inf, np.nan]))
    if dt == BOOL:
        return draw(st.booleans())
    if dt == U32:
        return draw(st.sampled_from([0, 1, 2, 3, 31, 32]))
    return draw(st.sampled_from([0, 1, -1, 2, 3, -7, 31, 32]))


def _bcast_dims(b_shape, a_shape):
    """broadcast_dimensions mapping ``b_shape`` into ``a_shape`` numpy-style (trailing), or None."""
    rb, ra = len(b_shape), len(a_shape)
    if rb > ra:
        return None
    dims_ = tuple(range(ra - rb, ra))
    for i, d in enumerate(dims_):
        if b_shape[i] not in (1, a_shape[d]):
            return None
    return dims_


def _operand(draw, pool, a_idx, allow_literal=True):
    """A second operand shaped and typed like pool[a_idx]: ("lit", value) or ("var", idx, bdims)."""
    a_shape, a_dt = pool[a_idx]
    cands = [i for i, (s, _) in enumerate(pool) if _bcast_dims(s, a_shape) is not None]
    if allow_literal and (not cands or draw(st.integers(0, 4)) == 0):
        return ("lit", _literal(draw, a_dt))
    i = draw(st.sampled_from(cands))
    return ("var", i, _bcast_dims(pool[i][0], a_shape))


def _pick(draw, pool, pred=lambda s, d: True):
    cands = [i for i, (s, d) in enumerate(pool) if pred(s, d)]
    if not cands:
        return None
    return draw(st.sampled_from(cands))


def _size(shape):
    return int(np.prod(shape)) if shape else 1


@st.composite
def programs(draw, max_ops=8):
    n_in = draw(st.integers(1, 3))
    pool = [(draw(shapes), draw(st.sampled_from(DTYPES))) for _ in range(n_in)]
    ops = []
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(KINDS))
        op = _build(draw, kind, pool)
        if op is None:
            continue
        rec, outs = op
        ops.append(rec)
        pool.extend(outs)
    n = len(pool)
    if draw(st.booleans()):  # every computed value is an output: each op's result is checked
        outputs = list(range(n_in, n)) or [n - 1]
    else:  # some values dead: exercises DCE and fusion around unused results
        outputs = [n - 1] + draw(st.lists(st.integers(0, n - 1), max_size=2))
    args = [draw(hnp.arrays(dt, s, elements=_elements(dt), fill=st.nothing())) for s, dt in pool[:n_in]]
    return Program(pool[:n_in], ops, outputs), args


def _build(draw, kind, pool):
    if kind == "unary":
        a = _pick(draw, pool)
        s, dt = pool[a]
        name = draw(st.sampled_from(UNARY[dt]))
        params = {}
        if name == "integer_pow":
            params["y"] = draw(st.integers(-2, 4) if dt == F32 else st.integers(0, 4))
        if name == "round":
            params["rounding_method"] = draw(st.sampled_from([0, 1]))
        out_dt = BOOL if name == "is_finite" else dt
        return ("unary", name, [a], params), [(s, out_dt)]
    if kind in ("binary", "compare"):
        a = _pick(draw, pool)
        s, dt = pool[a]
        name = draw(st.sampled_from(COMPARE if kind == "compare" else BINARY[dt]))
        b = _operand(draw, pool, a)
        return ("binary", name, [a], {"b": b}), [(s, BOOL if kind == "compare" else dt)]
    if kind == "select":
        a = _pick(draw, pool)
        s, dt = pool[a]
        b = _operand(draw, pool, a, allow_literal=False)
        p = _pick(draw, pool, lambda ps, pd: pd == BOOL and _bcast_dims(ps, s) is not None)
        if p is None:
            pred = ("cmp", draw(st.sampled_from(COMPARE)), _literal(draw, dt))
        else:
            pred = ("var", p, _bcast_dims(pool[p][0], s))
        return ("select", None, [a], {"b": b, "pred": pred}), [(s, dt)]
    if kind == "clamp":
        a = _pick(draw, pool, lambda s, d: d != BOOL)
        if a is None:
            return None
        dt = pool[a][1]
        lo, hi = _literal(draw, dt), _literal(draw, dt)
        return ("clamp", None, [a], {"lo": lo, "hi": hi}), [pool[a]]
    if kind == "convert":
        a = _pick(draw, pool)
        dt = draw(st.sampled_from(DTYPES))
        return ("convert", None, [a], {"dtype": dt}), [(pool[a][0], dt)]
    if kind == "reduce":
        a = _pick(draw, pool)
        s, dt = pool[a]
        names = ["reduce_and", "reduce_or"] if dt == BOOL else ["reduce_sum", "reduce_max", "reduce_min",
                                                                  "reduce_prod"]
        name = draw(st.sampled_from(names))
        axes = tuple(sorted(draw(st.sets(st.integers(0, len(s) - 1), max_size=len(s))))) if s else ()
        out = tuple(d for i, d in enumerate(s) if i not in axes)
        return ("reduce", name, [a], {"axes": axes}), [(out, dt)]
    if kind == "argreduce":
        a = _pick(draw, pool, lambda s, d: d != BOOL and any(x > 0 for x in s) and _size(s) > 0)
        if a is None:
            return None
        s, dt = pool[a]
        axis = draw(st.sampled_from([i for i, x in enumerate(s) if x > 0]))
        name = draw(st.sampled_from(["argmax", "argmin"]))
        return ("argreduce", name, [a], {"axis": axis}), [(s[:axis] + s[axis + 1:], I32)]
    if kind == "broadcast":
        a = _pick(draw, pool, lambda s, d: len(s) < 3)
        if a is None:
            return None
        s, dt = pool[a]
        new = draw(st.lists(dims, min_size=1, max_size=3 - len(s)))
        # insert new dims at random positions; existing dims of size 1 may grow
        out = list(s)
        bd = list(range(len(s)))
        for d in new:
            pos = draw(st.integers(0, len(out)))
            out.insert(pos, d)
            bd = [x + 1 if x >= pos else x for x in bd]
        for i, x in enumerate(bd):
            if s[i] == 1 and draw(st.booleans()):
                out[x] = draw(dims)
        return ("broadcast", None, [a], {"shape": tuple(out), "dims": tuple(bd)}), [(tuple(out), dt)]
    if kind == "reshape":
        a = _pick(draw, pool)
        s, dt = pool[a]
        n = _size(s)
        choices = [(n,), (1, n), (n, 1)]
        for d in (2, 3, 4):
            if n and n % d == 0:
                choices.append((d, n // d))
        if n == 0:
            choices += [(0, 3), (2, 0)]
        out = draw(st.sampled_from(choices))
        return ("reshape", None, [a], {"shape": out}), [(out, dt)]
    if kind == "transpose":
        a = _pick(draw, pool, lambda s, d: len(s) >= 2)
        if a is None:
            return None
        s, dt = pool[a]
        perm = tuple(draw(st.permutations(range(len(s)))))
        return ("transpose", None, [a], {"perm": perm}), [(tuple(s[p] for p in perm), dt)]
    if kind == "squeeze":
        a = _pick(draw, pool, lambda s, d: 1 in s)
        if a is None:
            return None
        s, dt = pool[a]
        ones = [i for i, x in enumerate(s) if x == 1]
        ds = tuple(sorted(draw(st.sets(st.sampled_from(ones), min_size=1))))
        return ("squeeze", None, [a], {"dims": ds}), [(tuple(x for i, x in enumerate(s) if i not in ds), dt)]
    if kind == "expand_dims":
        a = _pick(draw, pool, lambda s, d: len(s) < 3)
        if a is None:
            return None
        s, dt = pool[a]
        pos = draw(st.integers(0, len(s)))
        return ("expand_dims", None, [a], {"dims": (pos,)}), [(s[:pos] + (1,) + s[pos:], dt)]
    if kind == "slice":
        a = _pick(draw, pool, lambda s, d: len(s) >= 1)
        if a is None:
            return None
        s, dt = pool[a]
        start, limit, strides, out = [], [], [], []
        for d in s:
            lo = draw(st.integers(0, d))
            hi = draw(st.integers(lo, d))
            k = draw(st.integers(1, 3))
            start.append(lo)
            limit.append(hi)
            strides.append(k)
            out.append((hi - lo + k - 1) // k)
        return ("slice", None, [a], {"start": tuple(start), "limit": tuple(limit), "strides": tuple(strides)}), \
            [(tuple(out), dt)]
    if kind == "rev":
        a = _pick(draw, pool, lambda s, d: len(s) >= 1)
        if a is None:
            return None
        s, dt = pool[a]
        ds = tuple(sorted(draw(st.sets(st.integers(0, len(s) - 1)))))
        return ("rev", None, [a], {"dims": ds}), [(s, dt)]
    if kind == "pad":
        a = _pick(draw, pool, lambda s, d: len(s) >= 1)
        if a is None:
            return None
        s, dt = pool[a]
        cfg, out = [], []
        for d in s:
            interior = draw(st.integers(0, 2))
            base = d + max(d - 1, 0) * interior
            lo = draw(st.integers(-min(base, 2), 2))
            hi = draw(st.integers(-min(base + lo, 2), 2))
            cfg.append((lo, hi, interior))
            out.append(base + lo + hi)
        return ("pad", None, [a], {"config": tuple(cfg), "value": _literal(draw, dt)}), [(tuple(out), dt)]
    if kind == "concatenate":
        a = _pick(draw, pool, lambda s, d: len(s) >= 1)
        if a is None:
            return None
        s, dt = pool[a]
        axis = draw(st.integers(0, len(s) - 1))
        others = [i for i, (t, e) in enumerate(pool)
                  if e == dt and len(t) == len(s) and all(x == y for j, (x, y) in enumerate(zip(s, t)) if j != axis)]
        b = draw(st.sampled_from(others))
        out = list(s)
        out[axis] = s[axis] + pool[b][0][axis]
        return ("concatenate", None, [a, b], {"axis": axis}), [(tuple(out), dt)]
    if kind == "iota":
        s = draw(shapes.filter(lambda t: len(t) >= 1))
        dt = draw(st.sampled_from([I32, U32, F32]))
        dim = draw(st.integers(0, len(s) - 1))
        return ("iota", None, [], {"shape": s, "dim": dim, "dtype": dt}), [(s, dt)]
    if kind == "cumulative":
        a = _pick(draw, pool, lambda s, d: len(s) >= 1 and d != BOOL)
        if a is None:
            return None
        s, dt = pool[a]
        name = draw(st.sampled_from(["cumsum", "cumprod", "cummax", "cummin"]))
        axis = draw(st.integers(0, len(s) - 1))
        return ("cumulative", name, [a], {"axis": axis, "reverse": draw(st.booleans())}), [(s, dt)]
    if kind == "dot":
        a = _pick(draw, pool, lambda s, d: 1 <= len(s) <= 2 and d != BOOL)
        if a is None:
            return None
        s, dt = pool[a]
        k = s[-1]
        b = _pick(draw, pool, lambda t, e: 1 <= len(t) <= 2 and t[0] == k)
        if b is None:
            return None
        bs = pool[b][0]
        return ("dot", None, [a, b], {}), [(s[:-1] + bs[1:], dt)]
    if kind == "sort":
        a = _pick(draw, pool, lambda s, d: len(s) >= 1 and d != BOOL)
        if a is None:
            return None
        s, dt = pool[a]
        return ("sort", None, [a], {"dim": draw(st.integers(0, len(s) - 1))}), [(s, dt)]
    if kind == "cond":
        if not _has("cond"):
            return None
        a = _pick(draw, pool, lambda s, d: d in (F32, I32))
        if a is None:
            return None
        p = _pick(draw, pool)
        s, dt = pool[a]
        f1, f2 = (draw(st.sampled_from(["neg", "abs", "square", "double", "inc"])) for _ in range(2))
        return ("cond", None, [p, a], {"f1": f1, "f2": f2}), [(s, dt)]
    if kind == "fori":
        if not _has("fori_loop"):
            return None
        a = _pick(draw, pool, lambda s, d: d in (F32, I32))
        if a is None:
            return None
        s, dt = pool[a]
        return ("fori", None, [a], {"n": draw(st.integers(0, 4)), "f": draw(st.sampled_from(["double", "inc",
                                                                                               "neg"]))}), [(s, dt)]
    raise AssertionError(kind)


# ----------------------------------------------------------------------------------------------- replay

_SIMPLE = {"neg": lax.neg, "abs": lax.abs, "square": lambda x: lax.mul(x, x), "double": lambda x: lax.add(x, x),
           "inc": lambda x: lax.add(x, lax.full_like(x, 1))}


class Program:
    """Inputs' (shape, dtype), operation records, output indices. ``fn`` replays it with ``cranax.lax``."""

    def __init__(self, inputs, ops, outputs):
        self.inputs, self.ops, self.outputs = inputs, ops, outputs

    def __repr__(self):
        lines = [f"inputs {[(s, d.name) for s, d in self.inputs]}"]
        for i, (kind, name, args, params) in enumerate(self.ops):
            lines.append(f"  v{len(self.inputs) + i} = {kind}{'.' + name if name else ''} {args} {params}")
        lines.append(f"  out {self.outputs}")
        return "\n".join(lines)

    def fn(self, *xs):
        vals = list(xs)
        for kind, name, args, p in self.ops:
            vals.append(_apply(kind, name, [vals[i] for i in args], p, vals))
        return tuple(vals[i] for i in self.outputs)


def _typed(v, like):
    """A literal as a NumPy scalar of ``like``'s dtype: JAX's lax takes a Python scalar as its default dtype."""
    return np.array(v, dtype=like.dtype)[()]


def _second(a, spec, vals):
    if spec[0] == "lit":
        return _typed(spec[1], a)
    _, i, bd = spec
    b = vals[i]
    if b.dtype != a.dtype:
        b = lax.convert_element_type(b, a.dtype)
    if b.shape != a.shape:
        b = lax.broadcast_in_dim(b, a.shape, bd)
    return b


def _apply(kind, name, xs, p, vals):
    if kind == "unary":
        (a,) = xs
        if name == "integer_pow":
            return lax.integer_pow(a, p["y"])
        if name == "round":
            return lax.round(a, p["rounding_method"])
        return _lax_fn(name)(a)
    if kind == "binary":
        (a,) = xs
        return _lax_fn(name)(a, _second(a, p["b"], vals))
    if kind == "select":
        (a,) = xs
        b = _second(a, p["b"], vals)
        pr = p["pred"]
        if pr[0] == "cmp":
            pred = getattr(lax, pr[1])(a, _typed(pr[2], a))
        else:
            pred = vals[pr[1]]
            if pred.shape != a.shape:
                pred = lax.broadcast_in_dim(pred, a.shape, pr[2])
        return lax.select_n(pred, a, b)
    if kind == "clamp":
        (a,) = xs
        return lax.clamp(_typed(p["lo"], a), a, _typed(p["hi"], a))
    if kind == "convert":
        return lax.convert_element_type(xs[0], p["dtype"])
    if kind == "reduce":
        return getattr(lax, name)(xs[0], p["axes"])
    if kind == "argreduce":
        return getattr(lax, name)(xs[0], p["axis"], np.int32)
    if kind == "broadcast":
        return lax.broadcast_in_dim(xs[0], p["shape"], p["dims"])
    if kind == "reshape":
        return lax.reshape(xs[0], p["shape"])
    if kind == "transpose":
        return lax.transpose(xs[0], p["perm"])
    if kind == "squeeze":
        return lax.squeeze(xs[0], p["dims"])
    if kind == "expand_dims":
        return lax.expand_dims(xs[0], p["dims"])
    if kind == "slice":
        return lax.slice(xs[0], p["start"], p["limit"], p["strides"])
    if kind == "rev":
        return lax.rev(xs[0], p["dims"])
    if kind == "pad":
        a = xs[0]
        return lax.pad(a, lax.convert_element_type(p["value"], a.dtype), p["config"])
    if kind == "concatenate":
        return lax.concatenate(xs, p["axis"])
    if kind == "iota":
        return lax.broadcasted_iota(p["dtype"], p["shape"], p["dim"])
    if kind == "cumulative":
        return getattr(lax, name)(xs[0], p["axis"], reverse=p["reverse"])
    if kind == "dot":
        a, b = xs
        if b.dtype != a.dtype:
            b = lax.convert_element_type(b, a.dtype)
        return lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))
    if kind == "sort":
        return lax.sort(xs[0], dimension=p["dim"])
    if kind == "cond":
        pr, a = xs
        pred = lax.reduce_or(lax.ne(pr, lax.full_like(pr, 0)), tuple(range(pr.ndim)))
        return lax.cond(pred, _SIMPLE[p["f1"]], _SIMPLE[p["f2"]], a)
    if kind == "fori":
        f = _SIMPLE[p["f"]]
        return lax.fori_loop(0, p["n"], lambda i, x: f(x), xs[0])
    raise AssertionError(kind)


# ----------------------------------------------------------------------------------------------- the check

def check_program(prog, args, eager=True):
    """Compiles ``prog`` with jit (and runs it eagerly), compares with the reference interpreter of its jaxpr.
    Raises AssertionError with the program, its jaxpr and the differing elements."""
    closed = cranax.make_jaxpr(prog.fn)(*args)
    try:
        ref = ref_interp.run(closed, args)
    except NotImplementedError as e:  # a primitive the reference does not know: not a failure
        hypothesis.reject() if _in_hypothesis() else pytest.skip(str(e))
    got_jit = [np.asarray(o) for o in cranax.jit(prog.fn)(*args)]
    results = [("jit", got_jit)]
    if eager:
        results.append(("eager", [np.asarray(o) for o in prog.fn(*[cranax.numpy.asarray(a) for a in args])]))
    problems = []
    for how, got in results:
        for k, (g, r) in enumerate(zip(got, ref)):
            m = ref_interp.mismatch(g, r)
            if m:
                problems.append(f"{how} output {k}: {m}")
    if problems:
        raise AssertionError("\n".join(problems) + f"\nprogram:\n{prog!r}\njaxpr:\n{closed}\ninputs:\n{args!r}")


def _in_hypothesis():
    from hypothesis.control import _current_build_context
    return _current_build_context.value is not None


FUZZ_SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck),
                         derandomize=False)


@FUZZ_SETTINGS
@given(programs())
def test_random_programs_match_reference(case):
    prog, args = case
    check_program(prog, args)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(max_ops=3))
def test_small_random_programs_match_reference(case):
    prog, args = case
    check_program(prog, args)


def test_fuzz_long(request):
    """``pytest --fuzz-long=SECONDS``: keeps generating programs for that long (collected only with the
    option; see conftest.py)."""
    seconds = float(request.config.getoption("--fuzz-long"))
    deadline = time.monotonic() + float(seconds)
    count = [0]

    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(programs(max_ops=10))
    def round_(case):
        count[0] += 1
        prog, args = case
        check_program(prog, args)

    while time.monotonic() < deadline:
        round_()
    print(f"fuzz-long: {count[0]} programs checked in {seconds} s")


# ----------------------------------------------------------------------------------------------- regressions
# Programs the fuzzer found; each reproduces a fixed bug.


# ----------------------------------------------------------------------------------------------- the core's reader
# The release build's parser/verifier/optimizer on arbitrary and mutated input (the Rust tests in
# rust/ir/fuzz_tests.rs do the same without Python): always a Python exception, never a crash.

import glob  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402

from cranax import _core  # noqa: E402

_CORPUS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "rust", "ir", "fuzz_corpus", "*.json")))
_CORE_ERRORS = (ValueError, TypeError, NotImplementedError, MemoryError, RuntimeError, OverflowError)


def _feed(text):
    for fn in (_core.verify, _core.compile):
        try:
            fn(text)
        except _CORE_ERRORS:
            pass


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.binary(max_size=300).map(lambda b: b.decode("utf-8", "replace")),
                 st.text(alphabet='{}[],:"0123456789-.eE nultrfasprimdtypeinoutvars', max_size=200)))
def test_core_rejects_arbitrary_text(text):
    _feed(text)


_EXTREME = [-1, 0, 1, 2 ** 31, 2 ** 32, 2 ** 63 - 1, 2 ** 64 - 1, 1e308, 0.5, -(2 ** 63), "f32", "nope", None,
            [], {}, [2 ** 40, 2 ** 40], True]


def _mutate(v, draw, depth=0):
    if isinstance(v, list) and v and depth < 10 and draw(st.integers(0, 3)):
        i = draw(st.integers(0, len(v) - 1))
        op = draw(st.integers(0, 5))
        if op == 0:
            return v[:i] + v[i + 1:]
        if op == 1:
            return v[:i] + [v[i]] + v[i:]
        return v[:i] + [_mutate(v[i], draw, depth + 1)] + v[i + 1:]
    if isinstance(v, dict) and v and depth < 10 and draw(st.integers(0, 3)):
        k = draw(st.sampled_from(sorted(v)))
        w = dict(v)
        if draw(st.integers(0, 5)) == 0:
            del w[k]
        else:
            w[k] = _mutate(v[k], draw, depth + 1)
        return w
    return draw(st.sampled_from(_EXTREME))


@pytest.mark.skipif(not _CORPUS, reason="no fuzz corpus")
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_core_rejects_mutated_programs(data):
    path = data.draw(st.sampled_from(_CORPUS))
    with open(path) as f:
        prog = json.load(f)
    for _ in range(data.draw(st.integers(1, 3))):
        prog = _mutate(prog, data.draw)
    text = json.dumps(prog)
    if data.draw(st.booleans()):
        b = bytearray(text.encode())
        for _ in range(data.draw(st.integers(1, 4))):
            if b:
                i = data.draw(st.integers(0, len(b) - 1))
                b[i] = data.draw(st.integers(0, 255))
        text = b.decode("utf-8", "replace")
    _feed(text)


@pytest.mark.skipif(not _CORPUS, reason="no fuzz corpus")
def test_corpus_programs_compile():
    for path in _CORPUS:
        with open(path) as f:
            _core.compile(f.read())


# ----------------------------------------------------------------------------------------------- found by fuzzing

def test_regression_signed_zero_literals_are_distinct():
    """Lowering cached literal JSON by value, and -0.0 == 0.0: ``x / -0.0`` after ``x / 0.0`` (or the other
    way round) reused the other zero and gave the wrong infinity."""
    one = np.float32(1.0)
    assert float(cranax.jit(lambda b: lax.div(b, 0.0))(one)) == np.inf
    assert float(cranax.jit(lambda b: lax.div(b, -0.0))(one)) == -np.inf
    assert float(cranax.jit(lambda b: lax.div(b, 0.0))(one)) == np.inf
    assert float(cranax.jit(lambda b: lax.atan2(-0.0, b))(-one)) == np.float32(-np.pi)


def test_regression_sign_of_a_vector_compiles():
    """``sign`` on f32 vectors (the SIMD path) used ``fcmp ueq``, which Cranelift cannot lower on x86-64
    vectors: a code generation error on ``jnp.sign`` of anything with 4+ elements."""
    x = np.array([-2.0, -0.0, 0.0, 3.0, np.nan, -np.inf, np.inf, 1e-45, -5.0], np.float32)
    for f in (cranax.jit(lax.sign), lax.sign):
        got = np.asarray(f(x))
        # 1e-45 is subnormal: read as zero (denormals-are-zero, as XLA's CPU backend; JAX 0.10.2 gives 0.0)
        want = np.array([-1, -0.0, 0.0, 1, np.nan, -1, 1, 0.0, -1], np.float32)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got[:3]), [True, True, False])


def test_regression_cumprod_overflow_then_zero():
    """Not a compiler bug, a reference-interpreter one the fuzzer tripped on: 0 * (3e38 * -2.5) is NaN in f32
    (the product overflows first); the reference must treat such order-dependent elements as unknown."""
    x = np.array([0.0, 0.0, 3e38, -2.5], np.float32)
    got = np.asarray(cranax.jit(lambda v: lax.cumprod(v, 0, reverse=True))(x))
    assert got[3] == -2.5 and np.isinf(got[2]) and np.isnan(got[0])
