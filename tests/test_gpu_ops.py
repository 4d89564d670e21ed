"""Every elementwise primitive on the GPU vs the CPU backend, over special values, for every dtype the adapter
offers (float32, int32, uint32, bool; float16 with shader-f16; float64/int64 with shader-f64/shader-int64).

The primitives are those of the op records (tests/op_records.py) of the elementwise kinds or of an elementwise
primitive, plus every registered `Primitive` with ``elementwise`` set that has no record at all (its test fails
asking for one), so a new one is covered, or this test fails asking for a record or a way to call it.
Values: halves (±0.5, ±1.5, ±2.5, 3.5, 4.5, ...), ±0, subnormals, ±inf, NaN, the largest finite values,
integers beyond the significand, the int32/int64/uint32 limits. Results are compared bit for bit (NaN with
NaN, the sign of zero counts) except for the operations no formula makes exact, held to the ulp bounds of
`ULP` (transcendental functions, division, square roots).

llvmpipe compiles shaders for the host CPU (a driver built-in can be right on one host and wrong on another),
so `test_under_llvmpipe_code_paths` runs the comparison again in subprocesses with LP_NATIVE_VECTOR_WIDTH
128 and 256 and with the CPU features cut to SSE4.1 and to AVX (GALLIUM_OVERRIDE_CPU_CAPS): every CI machine
covers more than its own default. Mesa's shader cache is off (tests/conftest.py), so no run reuses another's code.
"""
import inspect
import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

import cranax as jax
import cranax.lax as lax
from cranax import _core
from cranax.primitives import elementwise as _ew
from cranax.primitives.ad_util import add_any_p
from cranax.primitives.elementwise import ndtri_p

from denormals import flush
from op_records import ELEMENTWISE_KINDS, OPS, RECORDS, record_name, registered_primitives

GPUS = _core.gpu_devices() if getattr(_core, "HAS_GPU_BACKEND", False) else []
REASON = _core.gpu_unavailable_reason() if getattr(_core, "HAS_GPU_BACKEND", False) else "built without gpu"
pytestmark = pytest.mark.skipif(not GPUS, reason=f"no GPU adapter: {REASON}")
GPU = GPUS[0] if GPUS else None
CPU = jax.devices("cpu")[0]
INFO = _core.gpu_info(GPU) if GPUS else {}


def elementwise_primitives():
    """name -> Primitive: the op records of the elementwise kinds or of an elementwise primitive (the
    transformations' add_any), and the registered elementwise primitives that lack a record
    (``test_elementwise_op_matches_cpu`` fails for those)."""
    by_name = {record_name(p): p for p in registered_primitives()}
    found = {r.name: by_name[r.name] for r in RECORDS
             if r.kind in ELEMENTWISE_KINDS or getattr(by_name.get(r.name), "elementwise", False)}
    for name, p in by_name.items():
        if getattr(p, "elementwise", False) and name not in OPS:
            found[name] = p
    return found


PRIMS = elementwise_primitives()
DTYPES = [np.dtype(d) for d in ["float32", "int32", "uint32", "bool"]
          + (["float16"] if INFO.get("shader_f16") else [])
          + (["float64"] if INFO.get("shader_f64") else [])
          + (["int64"] if INFO.get("shader_int64") else [])]

# Largest GPU-vs-CPU distance, in ulps of the result dtype, of the operations that are not exact on the GPU:
# float32 math is our polynomials (rust/backend/gpu/math.rs; test_gpu.py holds them to these bounds on
# ordinary arguments), division and square roots are the driver's (WGSL: 2.5 ulp for x / y). float16 results
# are those float32 values rounded once more (1 ulp). float64 transcendental functions run on the host
# (exact); only division and sqrt are the driver's there. `ATOL` and `pow_ulps` widen a few of them. The CPU's
# float32 sinh/cosh are XLA's (JAX's bits), up to 24.5 ulp from exact at large |x|: 28 from the GPU's.
ULP = {
    "float32": {"exp": 4, "exp2": 4, "expm1": 4, "log": 4, "log1p": 4, "tanh": 4, "logistic": 4, "sin": 4,
                "cos": 4, "tan": 4, "erf": 8, "erf_inv": 8, "atan": 4, "asin": 4, "acos": 4, "atan2": 4,
                "sinh": 28, "cosh": 28, "asinh": 4, "acosh": 4, "atanh": 4, "cbrt": 4, "lgamma": 8, "digamma": 8,
                "pow": 8, "div": 2, "sqrt": 1, "rsqrt": 2},
    "float64": {"div": 1, "sqrt": 1, "rsqrt": 2},
}
ULP["float16"] = {k: 1 for k in ULP["float32"]}
# float32 lgamma/digamma near their zeros (1, 2, 1.4616..., the negative half-integers): the CPU backend
# evaluates them in float64, the GPU in float32, so the absolute error (relative to max(1, |value|)) counts.
ATOL = {"float32": {"lgamma": 4e-6, "digamma": 4e-6}}


def pow_ulps(args, want):
    """pow is exp2(y * log2|x|) with the driver's exp2/log2 (Vulkan: 3 ulp, 2^-21 absolute): the error of
    the product grows with |y log2|x||, in ulps of the result about that much (plus the driver's own)."""
    x, y = (np.asarray(a, np.float64) for a in args)
    with np.errstate(all="ignore"):
        t = np.abs(y * np.log2(np.abs(x)))
    return 8 + 2 * np.nan_to_num(t, nan=0, posinf=0)

# Primitives whose `cranax.lax` function is named differently.
CALLS = {"not": lax.bitwise_not, "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
         "add_any": add_any_p.bind,  # the transformations' own sum of tangents
         "ndtri": ndtri_p.bind,  # (jax.lax has no ndtri: scipy.special.ndtri binds it)
         # the samplers' C-library twin of pow (primitives/elementwise.py: _libm_twin)
         "pow_libm": _ew.pow_libm}


def values(dt):
    """The special values of dtype `dt`."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.array([False, True])
    if dt.kind == "f":
        fi = np.finfo(dt)
        frac_half = 2.0 ** (fi.nmant - 1) + 0.5  # the largest halves: integers beyond it are exact
        v = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 4.5, -4.5, 5.5, 1023.5, -1023.5,
             float(np.nextafter(dt.type(0.5), dt.type(0))), float(np.nextafter(dt.type(1.5), dt.type(2))),
             frac_half, -frac_half, 2.0 ** fi.nmant, 2.0 ** fi.nmant + 1, -(2.0 ** (fi.nmant + 1)) - 2,
             1.0, -1.0, 2.0, 3.0, -7.0, 0.1, -0.3, 0.75, 10.0, 100.25, 1e3, -6e4,
             float(fi.tiny), -float(fi.tiny), float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
             float(fi.tiny) / 2 * 3, float(fi.max), -float(fi.max), np.inf, -np.inf, np.nan,
             16777217.0, 2.0 ** 31, -(2.0 ** 31), 2147483520.0, 4294967040.0, 2.0 ** 32, 3e9, -3e9,
             2.0 ** 53 + 2, 2.0 ** 63, -(2.0 ** 63), 1e19, 1e30, -1e30,
             # float64 -> float16 rounds once (through float32 it would round twice): above a tie, below MAX + ulp/2
             1 + 2.0 ** -11 + 2.0 ** -40, -(1 + 2.0 ** -11 + 2.0 ** -40), 65520 - 2.0 ** -20]
        with np.errstate(over="ignore"):
            return np.array(v, np.float64).astype(dt)
    info = np.iinfo(dt)
    v = [0, 1, 2, 3, 5, 7, 8, 31, 32, 33, 63, 64, 65, 100, 255, 65535, 65536, 2 ** 24 + 1, 123456789,
         info.max, info.max - 1, info.min, info.min + 1]
    if dt.kind == "i":
        v += [-1, -2, -3, -7, -8, -31, -32, -100, -(2 ** 24) - 1]
    if dt.itemsize == 8:
        v += [2 ** 32, 2 ** 32 + 7, 2 ** 53 + 1, 2 ** 62, -(2 ** 53) - 1] if dt.kind == "i" else []
    else:
        v += [2 ** 31 - 1] + ([2 ** 31, 4000000000] if dt.kind == "u" else [])
    return np.array(v, dt)


def pairs(a, b=None):
    """Every (x, y) of the values: two flat arrays."""
    b = a if b is None else b
    return np.repeat(a, len(b)), np.tile(b, len(a))


def prim_fn(name):
    return {"real": lax.real, "imag": lax.imag, "conj": lax.conj}[name]


def cases(name, prim, dt):
    """(label, function, arguments) to run for primitive `name` on dtype `dt` (the function may reject `dt`)."""
    v = values(dt)
    if name in ("real", "imag", "conj"):  # complex operands built from the special values' pairs
        if dt.kind != "f" or dt == np.float16:
            return []
        x, y = pairs(v)
        z = (x.astype(np.complex128) + 1j * y.astype(np.complex128)).astype(np.result_type(dt, np.complex64))
        return [(name, prim_fn(name), [z])]
    if name == "round":
        methods = {"away": lax.RoundingMethod.AWAY_FROM_ZERO, "even": lax.RoundingMethod.TO_NEAREST_EVEN}
        return [(f"round[{k}]", (lambda m: lambda x: lax.round(x, m))(m), [v]) for k, m in methods.items()]
    if name == "integer_pow":
        return [(f"integer_pow[{y}]", (lambda y: lambda x: lax.integer_pow(x, y))(y), [v])
                for y in (-3, -2, -1, 0, 1, 2, 3, 5)]
    if name == "convert_element_type":
        return [(f"convert[{to}]", (lambda to: lambda x: lax.convert_element_type(x, to))(to), [v]) for to in DTYPES]
    if name == "bitcast_convert_type":
        return [(f"bitcast[{to}]", (lambda to: lambda x: lax.bitcast_convert_type(x, to))(to), [v])
                for to in DTYPES if to.itemsize == dt.itemsize and to != np.bool_ and dt != np.bool_]
    if name == "select_n":
        x, y = pairs(v)
        which = (np.arange(len(x)) % 3 == 1)
        which3 = (np.arange(len(x)) % 3).astype(np.int32)
        return [("select_n[bool]", lax.select_n, [which, x, y]),
                ("select_n[int32]", lax.select_n, [which3, x, y, x[::-1].copy()])]
    if name == "clamp":
        bounds = v[np.linspace(0, len(v) - 1, 7).astype(int)]
        lo, hi = pairs(bounds)
        x = np.repeat(v, len(lo))
        return [("clamp", lax.clamp, [np.tile(lo, len(v)), x, np.tile(hi, len(v))])]
    if name == "fma":
        # the samplers' internal multiply-add and jit's contracted `a * b + c` (`opt::contract`; float32/float64)
        x, y = pairs(v)
        return [("fma", _ew.fma, [x, y, x[::-1].copy()])]
    fn = CALLS.get(name, getattr(lax, name, None))
    if fn is None:
        pytest.fail(f"no way to call elementwise primitive {name!r}: add it to CALLS in tests/test_gpu_ops.py")
    arity = sum(1 for p in inspect.signature(prim.abstract_eval).parameters.values()
                if p.default is inspect.Parameter.empty and p.kind == p.POSITIONAL_OR_KEYWORD)
    if arity == 1:
        return [(name, fn, [v])]
    if arity == 2:
        return [(name, fn, list(pairs(v)))]
    pytest.fail(f"elementwise primitive {name!r} takes {arity} operands: say in tests/test_gpu_ops.py how to call it")


def _ulps(got, want):
    """Distance in ulps of the float dtype (0 where both are NaN, huge where only one is)."""
    ity = {2: np.int16, 4: np.int32, 8: np.int64}[got.dtype.itemsize]
    def key(a):
        i = a.view(ity).astype(np.int64)
        mag = i & np.int64(np.iinfo(ity).max)
        return np.where(i < 0, -mag, mag)
    with np.errstate(over="ignore"):
        d = np.abs(key(got) - key(want)).astype(np.float64)
    gn, wn = np.isnan(got), np.isnan(want)
    return np.where(gn & wn, 0, np.where(gn != wn, np.inf, d))


def _off(label, got, want, args):
    """Per element: whether `got` is farther from `want` than the operation allows; and the allowance."""
    if got.dtype.kind == "c":  # complex: each part as a float (NaN parts match NaN parts)
        re, tol = _off(label, np.ascontiguousarray(got.real), np.ascontiguousarray(want.real), args)
        im, _ = _off(label, np.ascontiguousarray(got.imag), np.ascontiguousarray(want.imag), args)
        return re | im, tol
    if got.dtype.kind != "f":
        return got != want, np.zeros(got.shape)
    tol = ULP.get(got.dtype.name, {}).get(label, 0)
    if label in ("pow", "pow_libm") and got.dtype == np.float32:
        tol = pow_ulps(args, want)
    d = _ulps(got, want)
    atol = ATOL.get(got.dtype.name, {}).get(label)
    if atol is not None:
        w = want.astype(np.float64)
        with np.errstate(invalid="ignore"):
            near = np.abs(got.astype(np.float64) - w) <= atol * np.maximum(1, np.abs(w))
        d = np.where(near, 0, d)
    if np.isscalar(tol) and tol == 0:
        # bit for bit: the sign of zero counts (-0 and +0 are 1 ulp apart here)
        u = f"u{got.dtype.itemsize}"
        d = np.where(np.isnan(got) & np.isnan(want), 0, np.where(got.view(u) == want.view(u), 0, d + 1))
    return d > tol, np.broadcast_to(tol, got.shape)


def compare(label, dt, got, want, args, alternatives=()):
    """Raise naming the elements of `got` that differ from `want` by more than the operation allows, unless
    they agree in one of the `alternatives`, pairs `(got2, want2)` of results under the other subnormal
    semantics (the CPU flushes subnormals as JAX's CPU backend does; a device may or may not)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (label, dt, got.dtype, want.dtype)
    off, tols = _off(label, got, want, args)
    for got2, want2 in alternatives:
        off &= _off(label, got2, want2, args)[0]
    bad = np.nonzero(off)[0]
    if bad.size:
        rows = [f"  {tuple(a[i] for a in args)} -> gpu {got[i]!r}, cpu {want[i]!r} (allowed: {tols[i]:g} ulp)"
                for i in bad[:8]]
        raise AssertionError(f"{label} on {dt}: {bad.size} of {got.size} differ from the CPU backend:\n"
                             + "\n".join(rows))


def _flushes_subnormals():
    """Whether the device flushes float32 subnormal results to zero (NVIDIA's Vulkan driver does, lavapipe
    does not; WGSL allows it for every float built-in and arithmetic operator)."""
    if not GPUS:
        return False
    x, y = (jax.device_put(np.array([v], np.float32), GPU) for v in (1e-40, 1.0))
    return float(np.asarray(jax.jit(lambda a, b: a * b)(x, y))[0]) == 0.0


FLUSHES = _flushes_subnormals()
# Primitives computed on the bits (exact with subnormals wherever the device flushes them).
ON_THE_BITS = {"fma", "neg", "abs", "sign", "floor", "ceil", "round", "nextafter", "rem", "max", "min", "clamp",
               "is_finite", "convert_element_type", "bitcast_convert_type", "select_n", "stop_gradient",
               "eq", "ne", "lt", "le", "gt", "ge"}


def _accepts(fn, args):
    try:
        jax.make_jaxpr(fn)(*args)
        return True
    except TypeError:
        return False


@pytest.mark.parametrize("name", sorted(PRIMS))
def test_elementwise_op_matches_cpu(name, x64):
    ran = 0
    failures = []
    assert name in OPS, f"elementwise primitive {name!r} has no record in tests/op_records.py"
    for dt in DTYPES:
        for label, fn, args in cases(name, PRIMS[name], dt):
            if not _accepts(fn, args):
                continue
            f = jax.jit(fn)
            try:
                want = np.asarray(f(*[jax.device_put(a, CPU) for a in args]))
            except NotImplementedError:
                continue  # no backend lowers it for this dtype (e.g. nextafter on float16)
            out = f(*[jax.device_put(a, GPU) for a in args])
            assert out.devices() == {GPU}
            alternatives = []
            if any(a.dtype.kind == "f" for a in args):
                flat = [flush(a) for a in args]
                cpu_flushed = flush(f(*[jax.device_put(a, CPU) for a in flat]))
                # The CPU reads subnormal operands as zero and flushes results (FTZ/DAZ); a device that keeps
                # them is compared on operands with subnormals zeroed and its results flushed.
                alternatives.append((flush(f(*[jax.device_put(a, GPU) for a in flat])), cpu_flushed))
                if FLUSHES and name not in ON_THE_BITS:
                    alternatives.append((np.asarray(out), cpu_flushed))
                if name == "fma":
                    # WGSL's fma may round once or twice (lavapipe's rounds twice; NVIDIA's driver once): either
                    with np.errstate(all="ignore"):
                        twice = (args[0] * args[1] + args[2]).astype(dt)
                    alternatives.append((np.asarray(out), twice))
                if name == "asin" and np.dtype(dt) == np.float32:
                    # the CPU's float32 asin is XLA's 2·atan2(x, 1 + √(...)): ±0 below 2^-125, where x/2 flushes
                    a = np.asarray(args[0])
                    alternatives.append((np.where(np.abs(a) < 2.0**-125, np.copysign(np.float32(0), a),
                                                  np.asarray(out)), want))
            try:
                compare(label, dt, np.asarray(out), want, args, alternatives)
            except AssertionError as e:
                failures.append(str(e))
            ran += 1
    assert ran, f"{name}: no dtype the adapter offers is accepted"
    assert not failures, "\n".join(failures)


def test_the_registry_has_the_elementwise_primitives():
    # guards the enumeration itself (a reorganised package must still be found)
    assert {"add", "round", "floor", "nextafter", "convert_element_type", "select_n", "max"} <= set(PRIMS)


def _shaders(fn, *args):
    import cranax.interpreters.lowering as lowering
    return _core.gpu_shaders(_core.compile(lowering.lower_jaxpr(jax.make_jaxpr(fn)(*args), "cf")), GPU)


def nextafter(a):
    return lax.nextafter(a, a[::-1])


@pytest.mark.parametrize("dt", [d for d in DTYPES if d.kind == "f"], ids=str)
def test_exact_float_ops_run_as_device_shaders(dt, x64):
    # The exact helpers are what the comparison above checks: they must run on the device, not the host.
    x = values(dt)
    for fn in (lax.floor, lax.ceil, lax.round, lambda a: lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN),
               lax.sign, nextafter, lambda a: lax.rem(a, a[::-1]),
               lambda a: lax.max(a, a[::-1]), lambda a: lax.min(a, a[::-1]),
               lambda a: lax.convert_element_type(a, np.int32), lambda a: lax.convert_element_type(a, np.uint32)):
        if fn is nextafter and dt == np.float16:
            continue  # not lowered for float16 by either backend
        assert _shaders(fn, x), (dt, fn)


# (name, environment changes) of the llvmpipe code paths run in subprocesses
VARIANTS = [("vector-width-128", {"LP_NATIVE_VECTOR_WIDTH": "128"}),
            ("vector-width-256", {"LP_NATIVE_VECTOR_WIDTH": "256"}),
            ("sse4.1", {"GALLIUM_OVERRIDE_CPU_CAPS": "sse4.1"}),
            ("avx", {"GALLIUM_OVERRIDE_CPU_CAPS": "avx"})]
if os.environ.get("LP_NATIVE_VECTOR_WIDTH"):
    VARIANTS.insert(0, ("vector-width-unset", {"LP_NATIVE_VECTOR_WIDTH": None}))


@pytest.mark.skipif(not GPUS or INFO.get("driver") != "llvmpipe", reason="the adapter is not lavapipe")
@pytest.mark.parametrize("variant", [v for _, v in VARIANTS], ids=[n for n, _ in VARIANTS])
def test_under_llvmpipe_code_paths(variant):
    env = dict(os.environ, MESA_SHADER_CACHE_DISABLE="true")
    for k, v in variant.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header",
                          os.path.abspath(__file__), "-k", "test_elementwise_op_matches_cpu"],
                         env=env, capture_output=True, text=True, timeout=1500)
    assert out.returncode == 0, f"with {variant}:\n{out.stdout[-6000:]}\n{out.stderr[-2000:]}"
