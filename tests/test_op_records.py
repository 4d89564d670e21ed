"""The guard of the op registry (tests/op_records.py): every primitive of every primitive module (found by
walking the packages, not by a list of modules) has a record, a jvp rule and a batching rule, and the linear
ones (exactly those whose record says so) have a transpose rule. Also checks that the records are what they
claim: their faces bind their primitive, the tests they name exist, their sweeps have what the sweeps need."""
import ast
import os

import numpy as np
import pytest

import cranax
from cranax.interpreters import ad, batching

from op_records import (COMPOSITES, ELEMENTWISE_KINDS, GPU_PAIRS, GPU_VALUES, OPS, RECORDS, record_name,
                        registered_primitives)

PRIMS = registered_primitives()
BY_NAME = {record_name(p): p for p in PRIMS}

# Primitives without a jvp or batching rule, on purpose (as in JAX).
_LINEAR_ONLY = ("only in linearized (tangent) jaxprs, which backward_pass transposes into the user's bwd; "
                "forward mode over it raises, as in JAX")
_NO_JVP_IN_JAX = "JAX defines no differentiation rule for it either (NotImplementedError)"
NO_JVP_RULE = {"custom_lin": _LINEAR_ONLY, "zeta": _NO_JVP_IN_JAX, "igamma_grad_a": _NO_JVP_IN_JAX,
               "pmax": _NO_JVP_IN_JAX, "pmin": _NO_JVP_IN_JAX,
               "hessenberg": _NO_JVP_IN_JAX, "tridiagonal": _NO_JVP_IN_JAX}
_STAGED_REFS = ("make_jaxpr-only array-reference equations (primitives/state_jaxpr.py): grad and vmap trace the "
                "function itself, where refs are discharged, and never meet them")
for _n in ("new_ref", "get", "swap", "addupdate", "freeze"):
    NO_JVP_RULE[_n] = _STAGED_REFS
NO_JVP_RULE["call_hi_primitive_linearized"] = _LINEAR_ONLY
_HI_CARRY = ("a hi-typed scan carry made of its arrays and back (experimental/hijax.py): JAX differentiates and "
             "batches no hi-typed carry either")
NO_JVP_RULE.update(hi_raise=_HI_CARRY, hi_lower=_HI_CARRY)
NO_BATCHING_RULE = {
    "iota": "no operands, so vmap never hands it a batched value: it binds on the parent trace unchanged",
    "custom_lin": _LINEAR_ONLY,
    "axis_index": "no operands: the vmap that owns its name rewrites it (batching.collective_rules); any other "
                  "vmap binds it on the parent trace unchanged",
    **{n: _STAGED_REFS for n in ("new_ref", "get", "swap", "addupdate", "freeze")},
    "hi_raise": _HI_CARRY,
    "hi_lower": _HI_CARRY,
}


def test_discovery_sees_every_primitive_module():
    mods = set(PRIMS.values())
    assert len([m for m in mods if m.startswith("cranax.primitives.")]) >= 4, mods
    assert len(BY_NAME) == len(PRIMS), "two primitives with one name"


def test_every_primitive_has_a_record():
    missing = sorted(set(BY_NAME) - {r.name for r in RECORDS})
    assert not missing, f"primitives without a record in tests/op_records.py: {missing}"
    stale = sorted({r.name for r in RECORDS} - set(BY_NAME))
    assert not stale, f"records of primitives that do not exist: {stale}"
    assert not {r.name for r in COMPOSITES} & set(BY_NAME), "a composite record names a primitive"


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_jvp_rule(name):
    p = BY_NAME[name]
    if name in NO_JVP_RULE:
        assert p not in ad.jvp_rules, f"{name} now has a jvp rule: drop its exemption"
        return
    assert p in ad.jvp_rules, f"{name} ({PRIMS[p]}) has no jvp rule"


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_batching_rule(name):
    p = BY_NAME[name]
    if name in NO_BATCHING_RULE:
        assert p not in batching.batching_rules, f"{name} now has a batching rule: drop its exemption"
        return
    # elementwise primitives get the broadcasting rule on first use (BatchTrace.process_primitive)
    # (a rule told the vmapped axis, fancy_primitive_batchers, counts: lax.empty's makes its value batched)
    assert p in batching.batching_rules or p in batching.fancy_primitive_batchers or \
        getattr(p, "elementwise", False), \
        f"{name} ({PRIMS[p]}) has no batching rule"


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_linear_primitives_have_a_transpose_rule(name):
    p, r = BY_NAME[name], OPS[name]
    if r.linear:
        assert p in ad.transpose_rules, f"{name} is linear but has no transpose rule"
    else:
        # Only cranax's own rules count: a library imported earlier in the session may register one through
        # JAX's extension API (lineax does, for stop_gradient_p).
        rule = ad.transpose_rules.get(p)
        own = rule is not None and getattr(rule, "__module__", "").startswith("cranax")
        assert not own, f"{name} has a transpose rule: mark its record linear=True"


def test_call_primitives_have_transpose_rules():
    names = {p.name for p in ad.transpose_rules}
    assert {"jit", "add_any"} <= names, names


def test_primitives_the_issue_requires():
    required = {"add", "sub", "mul", "div", "rem", "neg", "max", "min", "abs", "sign", "floor", "ceil", "round",
                "exp", "exp2", "log", "log1p", "expm1", "sqrt", "rsqrt", "pow", "integer_pow", "sin", "cos", "tan",
                "tanh", "logistic", "erf", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "xor",
                "select_n", "convert_element_type", "broadcast_in_dim", "reshape", "squeeze", "transpose",
                "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "iota"}
    assert required <= set(BY_NAME), f"primitives the issue requires but cranax lacks: {sorted(required - set(BY_NAME))}"


def _defined_tests(path, cache={}):
    if path not in cache:
        with open(path) as f:
            tree = ast.parse(f.read())
        cache[path] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    return cache[path]


def test_named_tests_exist():
    here = os.path.dirname(__file__)
    bad = []
    for r in RECORDS + COMPOSITES:
        for node in r.tested_in:
            fname, test = node.split("::")
            path = os.path.join(here, fname)
            if not os.path.exists(path) or test not in _defined_tests(path):
                bad.append((r.name, node))
    assert not bad, bad


def test_ops_without_a_sweep_name_their_tests():
    # every record is covered by a sweep (float values, integer semantics, comparisons, finite differences,
    # vmap, GPU) or names the hand-written tests that cover it
    for r in RECORDS:
        swept = (r.domain is not None or r.int_semantics is not None or r.kind == "compare"
                 or r.grad_domain is not None or r.vmap is not None or r.gpu is not None)
        assert swept or r.tested_in, f"{r.name}: no sweep covers it and no test is named"


def test_record_fields_fit_their_sweeps():
    for r in RECORDS + COMPOSITES:
        if r.domain is not None or r.accuracy is not None:
            assert r.oracle is not None and "float32" in r.ulp or r.kind == "binary", r.name
        for dt in r.ulp:
            assert dt in r.dtypes, (r.name, dt)
        assert not (r.zero_tangent and r.grad_domain is not None), f"{r.name}: zero tangent but a grad domain"
        if r.kind in ELEMENTWISE_KINDS:
            assert r.dtypes and r.face is not None, r.name
        if r.gpu is not None:
            assert (r.gpu.ulp is None) != (r.gpu.rtol is None), r.name
            assert r.gpu.values in (GPU_PAIRS if r.kind == "binary" else GPU_VALUES), r.name
            for face in r.gpu.faces:
                assert getattr(r, face) is not None, (r.name, face)


def _sample(r):
    dt = next(np.dtype(d) for d in r.dtypes if np.dtype(d).itemsize < 8)
    if r.kind == "convert":
        dt = np.dtype(np.float32)
    x = np.ones(3, dt)
    if r.kind == "select":
        return (np.array([True, False, True]), x, x)
    if r.kind == "clamp":
        return (x, x, x)
    if r.kind in ("binary", "compare", "shift", "bitwise"):
        return (x, x)
    return (x,)


def _prims_of(jaxpr, out):
    for e in jaxpr.eqns:
        out.add(e.primitive.name)
        for v in e.params.values():
            for j in v if isinstance(v, (tuple, list)) else [v]:
                inner = getattr(j, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    _prims_of(inner, out)
                elif hasattr(j, "eqns"):
                    _prims_of(j, out)
    return out


@pytest.mark.parametrize("name", [r.name for r in RECORDS if r.kind in ELEMENTWISE_KINDS])
def test_elementwise_faces_bind_their_primitive(name):
    r = OPS[name]
    args = _sample(r)
    faces = [r.face] + ([r.lax] if r.lax is not None and r.example is None else [])
    for f in faces:
        closed = cranax.make_jaxpr(f)(*args)
        assert name in _prims_of(closed.jaxpr, set()), (name, f, str(closed))


@pytest.mark.parametrize("name", [r.name for r in RECORDS if r.zero_tangent and r.kind in ("unary", "binary")
                                  and "float32" in r.dtypes])
def test_zero_tangent_records_have_zero_tangents(name):
    r = OPS[name]
    args = tuple(np.linspace(-2.3, 2.9, 5).astype(np.float32) for _ in _sample(r))
    _, t = cranax.jvp(r.face, args, tuple(np.ones_like(a) for a in args))
    t = np.asarray(t)
    assert not t.any(), (name, t)


def test_lax_exports_the_primitives_under_jax_names():
    """``cranax.lax.<name>_p`` is the primitive JAX calls ``jax.lax.<name>_p`` (scatter_add_p binds
    'scatter-add'), and every elementwise primitive is exported so."""
    exported = [n for n in cranax.lax.__all__ if n.endswith("_p")]
    assert len(exported) >= 100
    for n in exported:
        p = getattr(cranax.lax, n)
        assert isinstance(p, cranax.core.Primitive), n
        # (JAX's own exception: linear_solve_p binds 'custom_linear_solve')
        assert p.name in (n[:-2], n[:-2].replace("_", "-")) or (n, p.name) == ("linear_solve_p", "custom_linear_solve"), \
            (n, p.name)
    prims = {getattr(cranax.lax, n) for n in exported}
    # (JAX 0.10.2's jax.lax has no ndtri_p nor random_gamma_grad_p: scipy.special and random bind them)
    unexported = sorted(r.name for r in RECORDS if r.kind in ELEMENTWISE_KINDS and BY_NAME[r.name] not in prims
                        and r.name not in ("ndtri", "random_gamma_grad"))
    assert not unexported, f"elementwise primitives cranax.lax does not export as <name>_p: {unexported}"
