"""One record per primitive: the op registry that drives the primitive, autodiff, vmap, float16, GPU, math
accuracy and fuzz tests (modelled on JAX's ``lax_test_util.lax_ops()``; the code is cranax's own).

A record says, for one primitive (by its wire name): the public functions that bind it (``lax`` and, where
NumPy has the same function, ``jnp``), a float64 NumPy/SciPy oracle, the input domain, the dtypes, the accuracy
bound per dtype, where it is differentiable, its vmap sampling range, its GPU tolerance, its float16 bound and
JAX-recorded float16 values, and where the fuzzer draws it. A test module selects the records it covers with
the helpers at the end (``select``, ``OPS``); a field left ``None`` means "not covered by that sweep" (such
ops are covered by the hand-written tests named in ``tested_in``).

The primitives themselves are discovered dynamically (``registered_primitives``) so that the guard test
(tests/test_op_records.py) sees every primitive module, whatever the package layout.
"""
import dataclasses
import importlib
import math
import pkgutil
from typing import Any, Callable, Optional

import numpy as np
import scipy.special

import cranax.lax as lax
import cranax.numpy as jnp
import cranax.primitives
from cranax.core import Primitive
from cranax.primitives.elementwise import ndtri as ndtri_prim
from cranax.primitives.lax_composites import CompositePrimitive

F32_NAMES = ("float32",)
# ndtri float32 against SciPy (float64): JAX 0.10.2 is at most 3.89 ulp off; cranax gives its bits.
NDTRI_ULP = 4
FLOAT_NAMES = ("float32", "float64")
INT_NAMES = ("int32", "uint32", "int64")
ALL_NAMES = ("bool", "int32", "uint32", "float32", "int64", "float64")


# ----------------------------------------------------------------------------------------------- oracles
# float64 NumPy/SciPy functions (the caller rounds to the tested dtype)

def asin_xla64(x):
    """float32 asin as XLA:CPU composes it, 2·atan2(x, 1 + √((1 − x)(1 + x))): below 2^-125 in magnitude x/2 is
    subnormal and flushed to zero in atan2f's quotient (JAX's CPU backend runs with FTZ), so asin gives ±0."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        return np.where(np.abs(x) < 2.0**-125, np.copysign(0.0, x), np.arcsin(x))


def atan2_xla64(y, x):
    """float32 atan2 as the C library's atan2f computes it under JAX's FTZ/DAZ: both operands subnormal (nonzero bits,
    so none of its zero cases) read as zeros in y/x, so atanf(NaN): NaN."""
    y, x = (np.asarray(v, dtype=np.float64) for v in (y, x))
    tiny = 2.0**-126
    with np.errstate(all="ignore"):
        both = (np.abs(y) < tiny) & (y != 0) & (np.abs(x) < tiny) & (x != 0)
        return np.where(both, np.nan, np.arctan2(y, x))


def logistic64(x):
    """The logistic function without overflow on either side."""
    with np.errstate(all="ignore"):
        return np.where(x >= 0, 1.0 / (1.0 + np.exp(-x)), np.exp(x) / (1.0 + np.exp(x)))


erf64 = np.vectorize(math.erf, otypes=[np.float64])
# math.erfc (the C library's): <= 2 ulp of the correctly rounded value on [-6, 27]; scipy.special.erfc is
# ~60 ulp off in the far tail, too coarse for an ulp bound.
erfc64 = np.vectorize(math.erfc, otypes=[np.float64])
lgamma64 = np.vectorize(math.lgamma, otypes=[np.float64])


def clz_np(x):
    """Leading zero bits of each integer's bit pattern (exact: the bit length counted shift by shift)."""
    u = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    bits = 8 * x.dtype.itemsize
    length = sum(((u >> np.array(k, u.dtype)) != 0).astype(np.int64) for k in range(bits))
    return (bits - length).astype(x.dtype)


def popcount_np(x):
    """Set bits of each integer's bit pattern (NumPy's bitwise_count counts |x| for signed dtypes)."""
    return np.bitwise_count(x.view(np.dtype(f"u{x.dtype.itemsize}"))).astype(x.dtype)


def rsqrt64(x):
    return 1.0 / np.sqrt(x)


def round_away64(x):
    """``lax.round``'s default: halves away from zero."""
    return np.where(np.isfinite(x), np.copysign(np.floor(np.abs(x) + 0.5), x), x)


# ----------------------------------------------------------------------------------------------- GPU inputs
# The named float32 input sets of the GPU-vs-CPU sweeps (``Gpu.values``): unary ops take GPU_VALUES[name],
# binary ones the operand pair GPU_PAIRS[name].

def _gpu_values():
    all_ = np.concatenate([
        np.linspace(-10, 10, 401, dtype=np.float32),
        np.array([0.0, -0.0, 1e-30, -1e-30, 1e-6, 0.5, 1.0, 2.0, 88.0, -88.0, 100.0, -104.0, 1e20, -1e20,
                  np.inf, -np.inf, np.nan, 3.0e38, 1.4e-45], np.float32),
        np.random.default_rng(1).standard_normal(1000).astype(np.float32) * 3,
    ]).astype(np.float32)
    unit = np.concatenate([np.linspace(-0.999, 0.999, 801), [0.0, -0.0, 1.0, -1.0, 0.5, -0.5]]).astype(np.float32)
    pos = np.concatenate([np.geomspace(1e-30, 1e30, 601), [0.0, 1.0, 2.0, np.inf, np.nan]]).astype(np.float32)
    gamma = np.concatenate([np.linspace(0.1, 20, 300), np.linspace(-4.3, -0.2, 97)]).astype(np.float32)
    return {"all": all_, "pos": pos, "unit": unit, "pos+unit": np.concatenate([pos, unit]), "pos+1": pos + 1,
            "gamma": gamma}


def _gpu_pairs():
    rng = np.random.default_rng(2)
    a = np.concatenate([rng.standard_normal(500) * 10, [0.0, -0.0, np.inf, -np.inf, np.nan, 5.0, 1.0]])
    b = np.concatenate([rng.standard_normal(500) * 3, [-0.0, 0.0, 1.0, -np.inf, 1.0, np.nan, 0.0]])
    rng = np.random.default_rng(3)   # pow: mostly positive bases, and the sign/zero/inf corner cases
    pa = np.concatenate([np.abs(rng.standard_normal(300)) * 4, [-2.0, -2.0, 0.0, -0.0, np.inf, -np.inf, 1.0, np.nan]])
    pb = np.concatenate([rng.standard_normal(300) * 3, [3.0, 0.5, -1.0, -3.0, -1.0, 3.0, np.nan, 0.0]])
    return {"all": (a.astype(np.float32), b.astype(np.float32)),
            "pow": (pa.astype(np.float32), pb.astype(np.float32))}


GPU_VALUES = _gpu_values()
GPU_PAIRS = _gpu_pairs()


# ----------------------------------------------------------------------------------------------- records

@dataclasses.dataclass(frozen=True)
class Gpu:
    """GPU backend against the CPU backend: ``values`` names an input set (GPU_VALUES for unary ops,
    GPU_PAIRS for binary ones); the bound is ``ulp`` (max units in the last place) or ``rtol`` (and
    the same atol). ``faces``: which public functions are run ('jnp', 'lax')."""
    values: str = "all"
    ulp: Optional[int] = None
    rtol: Optional[float] = None
    faces: tuple = ("jnp",)


@dataclasses.dataclass(frozen=True)
class F16:
    """float16 against NumPy's float16 (computed in float32, rounded once): at most ``ulp`` float16 ulps;
    ``nonneg``: sampled on |x| (the function's domain is x >= 0)."""
    ulp: int
    nonneg: bool = False


@dataclasses.dataclass(frozen=True)
class OpRecord:
    name: str                       # the primitive's name (the wire contract)
    kind: str                       # unary | binary | compare | shift | bitwise | select | clamp | convert |
    #                                 integer_pow | structural | reduction | library | control | call |
    #                                 internal (staged by the transformations) | composite (jnp, not a primitive)
    lax: Optional[Callable] = None  # the lax face
    jnp: Optional[Callable] = None  # the cranax.numpy face with NumPy's semantics, if any
    example: Optional[Callable] = None  # a call with fixed params, for ops that take params (x ** 3, astype)
    oracle: Optional[Callable] = None   # float64 oracle of the lax face (or exact integer NumPy function)
    numpy: Optional[Callable] = None    # NumPy's function for the jnp face (default: ``oracle``)
    domain: Any = None              # sampling range of the value sweep: (lo, hi) or "log:lo:hi"; None: no sweep
    dtypes: tuple = ()
    ulp: dict = dataclasses.field(default_factory=dict)  # dtype name -> max ulp vs the rounded oracle
    special: bool = False           # nan, +-inf, +-0, huge and tiny inputs checked against the oracle
    y_min_abs: Optional[float] = None   # binary: second operands closer to 0 than this are moved to it
    int_semantics: Optional[str] = None  # integers: 'wrap' (two's complement, NumPy), 'xla' (div/rem corner
    #                                 cases) or 'exact' (unary: equal to ``oracle`` on the integer dtypes)
    grad_domain: Any = None         # where it is differentiable and checked against finite differences
    #                                 (unary: (lo, hi); binary: ((lo, hi), (lo, hi))); None: not swept
    deriv: Optional[Callable] = None    # hand-derived derivative (unary)
    zero_tangent: bool = False      # differentiable nowhere that matters: its jvp is a zero tangent
    linear: bool = False            # linear in (some of) its inputs: has a transpose rule
    vmap: Optional[dict] = None     # vmap sweep sampling range (kwargs of test_vmap.rand); None: not swept
    gpu: Optional[Gpu] = None       # float inputs on the GPU
    gpu_int: bool = False           # int32/uint32 inputs on the GPU: bit-identical to the CPU
    f16: Optional[F16] = None
    f16_jax: Optional[tuple] = None     # JAX 0.10.2 outputs (float16 bits; None: NaN) on JAX_F16_X
    accuracy: Optional[int] = None  # max ulp over (a sample of) every float32 bit pattern (test_math_accuracy)
    fuzz: tuple = ()                # dtype names the program fuzzer draws it for
    tested_in: tuple = ()           # hand-written tests ("file.py::test_name") that cover it

    @property
    def face(self):
        """The function the sweeps call: the op with its params fixed, else the NumPy face, else lax."""
        return self.example or self.jnp or self.lax

    @property
    def numpy_fn(self):
        return self.numpy or self.oracle


def _r(name, kind, **kw):
    return OpRecord(name, kind, **kw)


G = Gpu


def _u(f32, f64=None):
    return {"float32": f32} if f64 is None else {"float32": f32, "float64": f64}


# JAX 0.10.2 (CPU) float16 inputs, as bits: x = [0.1, 1.5, -2.25, 3.3, 10.0, -0.007]
JAX_F16_X = (11878, 15872, 49280, 17050, 18688, 40747)

_UNARY = [
    _r("neg", "unary", lax=lax.neg, jnp=jnp.negative, oracle=np.negative, domain=(-100, 100), dtypes=ALL_NAMES[1:],
       ulp=_u(0, 0), special=True, grad_domain=(-2, 2), linear=True, vmap={}, gpu=G("all", 0), gpu_int=True,
       f16=F16(1), fuzz=("float32", "int32")),
    # (no uint32: lax.abs refuses unsigned integers, as JAX's; jnp.abs passes them through)
    _r("abs", "unary", lax=lax.abs, jnp=jnp.abs, oracle=np.abs, domain=(-100, 100),
       dtypes=("int32", "float32", "int64", "float64"),
       ulp=_u(0, 0), special=True, grad_domain=(0.2, 2), vmap={}, gpu=G("all", 0), gpu_int=True, f16=F16(1),
       fuzz=("float32", "int32"), tested_in=("test_autodiff.py::test_abs_at_zero_like_jax",)),
    _r("sign", "unary", lax=lax.sign, jnp=jnp.sign, oracle=np.sign, dtypes=ALL_NAMES[1:], zero_tangent=True,
       vmap={}, gpu=G("all", 0), gpu_int=True, f16=F16(1), fuzz=("float32", "int32"),
       tested_in=("test_primitives.py::test_sign",)),
    _r("floor", "unary", lax=lax.floor, jnp=jnp.floor, oracle=np.floor, domain=(-100, 100), dtypes=FLOAT_NAMES,
       ulp=_u(0, 0), special=True, zero_tangent=True, vmap={}, gpu=G("all", 0), f16=F16(1), fuzz=("float32",)),
    _r("ceil", "unary", lax=lax.ceil, jnp=jnp.ceil, oracle=np.ceil, domain=(-100, 100), dtypes=F32_NAMES,
       ulp=_u(0), special=True, zero_tangent=True, vmap={}, gpu=G("all", 0), f16=F16(1), fuzz=("float32",)),
    _r("round", "unary", lax=lax.round, jnp=jnp.round, oracle=round_away64, numpy=np.round, dtypes=F32_NAMES,
       zero_tangent=True, vmap={}, gpu=G("all", 0, faces=("jnp", "lax")), f16=F16(1), fuzz=("float32",),
       tested_in=("test_primitives.py::test_rounding",)),
    _r("is_finite", "unary", lax=lax.is_finite, jnp=jnp.isfinite, oracle=np.isfinite, dtypes=F32_NAMES,
       zero_tangent=True, vmap={}, gpu=G("all", 0), fuzz=("float32",),
       tested_in=("test_primitives.py::test_is_finite",)),
    _r("square", "unary", lax=lax.square, jnp=jnp.square, oracle=np.square, domain=(-1e5, 1e5),
       dtypes=("float32", "int32"), ulp=_u(1), special=True, grad_domain=(-2, 2), vmap={}, gpu=G("all", 0),
       gpu_int=True, f16=F16(1), fuzz=("float32", "int32")),
    # float32: XLA:CPU's sequence, JAX's bits (4.56 ulp at x = 88.717: XLA clamps n to 127 near overflow)
    _r("exp", "unary", lax=lax.exp, jnp=jnp.exp, oracle=np.exp, domain=(-80, 80), dtypes=FLOAT_NAMES,
       ulp=_u(4, 4), special=True, grad_domain=(-2, 2), deriv=np.exp, vmap={}, gpu=G("all", 4), f16=F16(1),
       f16_jax=(15468, 17531, 11967, 20169, 30049, 15346), accuracy=5, fuzz=("float32",),
       tested_in=("test_math_accuracy.py::test_special_values_exact",)),
    _r("exp2", "unary", lax=lax.exp2, jnp=jnp.exp2, oracle=np.exp2, domain=(-120, 120), dtypes=F32_NAMES,
       ulp=_u(4), special=True, grad_domain=(-2, 2), vmap={}, gpu=G("all", 4), accuracy=4, fuzz=("float32",)),
    _r("log", "unary", lax=lax.log, jnp=jnp.log, oracle=np.log, domain="log:1e-30:1e30", dtypes=FLOAT_NAMES,
       ulp=_u(4, 4), special=True, grad_domain=(0.2, 3), deriv=lambda x: 1 / x, vmap=dict(lo=0.1, hi=3),
       gpu=G("pos", 4), f16=F16(1, nonneg=True), accuracy=4, fuzz=("float32",)),
    _r("log1p", "unary", lax=lax.log1p, jnp=jnp.log1p, oracle=np.log1p, domain=(-0.999, 100), dtypes=FLOAT_NAMES,
       ulp=_u(4, 4), special=True, grad_domain=(-0.5, 2), vmap=dict(lo=0, hi=3), gpu=G("pos+unit", 4),
       f16=F16(1, nonneg=True), f16_jax=(11801, 15189, None, 15830, 16588, 40753), accuracy=4,
       fuzz=("float32",)),
    # float32: XLA:CPU's sequence, JAX's bits (5.67 ulp at most over 29M points: tanh(x/2)·(e^x + 1) near ½)
    _r("expm1", "unary", lax=lax.expm1, jnp=jnp.expm1, oracle=np.expm1, domain=(-60, 80), dtypes=FLOAT_NAMES,
       ulp=_u(6, 4), special=True, grad_domain=(-2, 2), vmap={}, gpu=G("all", 4), f16=F16(1), accuracy=6,
       fuzz=("float32",)),
    _r("sqrt", "unary", lax=lax.sqrt, jnp=jnp.sqrt, oracle=np.sqrt, domain="log:1e-30:1e30", dtypes=FLOAT_NAMES,
       ulp=_u(1, 4), special=True, grad_domain=(0.2, 3), deriv=lambda x: 0.5 / np.sqrt(x),
       vmap=dict(lo=0, hi=4), gpu=G("pos", 1), f16=F16(1, nonneg=True),
       f16_jax=(13583, 15590, None, 16196, 16979, None), accuracy=1, fuzz=("float32",)),
    _r("rsqrt", "unary", lax=lax.rsqrt, oracle=rsqrt64, domain="log:1e-30:1e30", dtypes=FLOAT_NAMES,
       ulp=_u(4, 4), special=True, grad_domain=(0.2, 3), deriv=lambda x: -0.5 * x ** -1.5,
       vmap=dict(lo=0.5, hi=4), gpu=G("pos", 2, faces=("lax",)), f16=F16(1, nonneg=True), accuracy=4,
       fuzz=("float32",)),
    _r("cbrt", "unary", lax=lax.cbrt, jnp=jnp.cbrt, oracle=np.cbrt, domain=(-1000, 1000), dtypes=F32_NAMES,
       ulp=_u(4), special=True, grad_domain=(0.2, 3), gpu=G("all", 4), accuracy=4, fuzz=("float32",)),
    _r("sin", "unary", lax=lax.sin, jnp=jnp.sin, oracle=np.sin, domain=(-10, 10), dtypes=FLOAT_NAMES,
       ulp=_u(4, 4), grad_domain=(-3, 3), deriv=np.cos, vmap={}, gpu=G("all", 4), f16=F16(1),
       f16_jax=(11875, 15355, 47673, 45331, 47194, 40747), accuracy=4, fuzz=("float32",),
       tested_in=("test_primitives.py::test_trig_special_values",
                  "test_math_accuracy.py::test_sin_cos_huge_arguments")),
    _r("cos", "unary", lax=lax.cos, jnp=jnp.cos, oracle=np.cos, domain=(-10, 10), dtypes=FLOAT_NAMES,
       ulp=_u(4, 4), grad_domain=(-3, 3), deriv=lambda x: -np.sin(x), vmap={}, gpu=G("all", 4), f16=F16(1),
       accuracy=4, fuzz=("float32",), tested_in=("test_primitives.py::test_trig_special_values",)),
    # float32 tan, atan2: the C library's tanf/atan2f (XLA:CPU calls them), JAX's bits
    _r("tan", "unary", lax=lax.tan, jnp=jnp.tan, oracle=np.tan, domain=(-1.5, 1.5), dtypes=F32_NAMES,
       ulp=_u(4), grad_domain=(-1.2, 1.2), vmap=dict(lo=-1, hi=1), gpu=G("all", 4), accuracy=4,
       fuzz=("float32",), tested_in=("test_primitives.py::test_trig_special_values",)),
    # float32: XLA:CPU's rational approximation, JAX's bits (4.80 ulp at most)
    # (float64: XLA's rational tanh, JAX's bits, up to 7 ulp)
    _r("tanh", "unary", lax=lax.tanh, jnp=jnp.tanh, oracle=np.tanh, domain=(-20, 20), dtypes=FLOAT_NAMES,
       ulp=_u(5, 8), special=True, grad_domain=(-2, 2), deriv=lambda x: 1 - np.tanh(x) ** 2, vmap={},
       gpu=G("all", 4), f16=F16(1), f16_jax=(11873, 15166, 48083, 15354, 15360, 40747), accuracy=5,
       fuzz=("float32",)),
    _r("logistic", "unary", lax=lax.logistic, oracle=logistic64, domain=(-80, 80), dtypes=FLOAT_NAMES,
       ulp=_u(4, 4), special=True, grad_domain=(-3, 3), deriv=lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2,
       vmap={}, gpu=G("all", 4, faces=("lax",)), accuracy=4, fuzz=("float32",)),
    # float32: XLA:CPU's rational approximation, JAX's bits (5.35 ulp at most over 28M points)
    _r("erf", "unary", lax=lax.erf, oracle=erf64, domain=(-5, 5), dtypes=FLOAT_NAMES, ulp=_u(6, 4), special=True,
       grad_domain=(-2, 2), deriv=lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x), vmap={},
       gpu=G("all", 8, faces=("lax",)), accuracy=6, fuzz=("float32",)),
    # erfc: the tail formulation (FreeBSD msun's), not 1 - erf: f64 <= 2 ulp (measured against a 150-digit
    # reference and the C library), f32 = that value rounded once (<= 1 ulp); the GPU runs it on the host (no
    # WGSL lowering), so it matches the CPU exactly.
    _r("erfc", "unary", lax=lax.erfc, oracle=erfc64, domain=(-5, 9), dtypes=FLOAT_NAMES,
       ulp=_u(1, 2), special=True, grad_domain=(-2, 2), deriv=lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x),
       vmap={}, gpu=G("all", 0, faces=("lax",)), f16=F16(1), accuracy=1),
    _r("erf_inv", "unary", lax=lax.erf_inv, oracle=scipy.special.erfinv, domain=(-0.999, 0.999), dtypes=F32_NAMES,
       ulp=_u(4), special=True, grad_domain=(-0.9, 0.9),
       gpu=G("unit", rtol=2e-5, faces=("lax",)), tested_in=("test_primitives.py::test_erf_inv",)),
    # ndtri: cranax's own primitive (JAX composes jax.scipy.special.ndtri; float32 binds this op), XLA:CPU's
    # float32 sequence bit for bit (test_math_accuracy.py::test_ndtri_is_xlas_float32_ndtri). Tiny inputs
    # are not swept: XLA treats subnormal p as 0 (-inf).
    _r("ndtri", "unary", lax=ndtri_prim, oracle=scipy.special.ndtri, domain=(1e-6, 1 - 1e-6), dtypes=F32_NAMES,
       ulp=_u(NDTRI_ULP), grad_domain=(0.05, 0.95),
       deriv=lambda p: np.sqrt(2 * np.pi) * np.exp(scipy.special.ndtri(p) ** 2 / 2), vmap=dict(lo=0.05, hi=0.95),
       gpu=G("unit", rtol=2e-5, faces=("lax",)),
       tested_in=("test_math_accuracy.py::test_ndtri_is_xlas_float32_ndtri",
                  "test_scipy_special.py::test_ndtri_log_ndtr_float32_and_grads")),
    # float32 asin, acos: XLA:CPU's compositions over the C library's atan2f, JAX's bits (asin is ±0 below 2^-125)
    _r("asin", "unary", lax=lax.asin, jnp=jnp.arcsin, oracle=asin_xla64, domain=(-1, 1), dtypes=F32_NAMES,
       ulp=_u(4), special=True, grad_domain=(-0.9, 0.9), gpu=G("unit", 4), accuracy=4, fuzz=("float32",)),
    _r("acos", "unary", lax=lax.acos, jnp=jnp.arccos, oracle=np.arccos, domain=(-1, 1), dtypes=F32_NAMES,
       ulp=_u(4), special=True, grad_domain=(-0.9, 0.9), gpu=G("unit", 4), accuracy=4, fuzz=("float32",)),
    _r("atan", "unary", lax=lax.atan, jnp=jnp.arctan, oracle=np.arctan, domain=(-1000, 1000), dtypes=FLOAT_NAMES,
       ulp=_u(4, 4), special=True, grad_domain=(-2, 2), deriv=lambda x: 1 / (1 + x * x), gpu=G("all", 4),
       f16=F16(1), accuracy=4, fuzz=("float32",)),
    # sinh/cosh: XLA:CPU's e^(x − ln 2) ± e^(−ln 2 − x), JAX's bits: x ∓ ln 2 rounds to float32 first, so the
    # error grows with |x| (24.5 ulp at x = 87.3, over 29M points; 4 below |x| = 2)
    # (the GPU's WGSL sinh/cosh stay within 4 ulp of exact: 28 ulp from the CPU's)
    _r("sinh", "unary", lax=lax.sinh, jnp=jnp.sinh, oracle=np.sinh, domain=(-80, 80), dtypes=F32_NAMES, ulp=_u(25),
       special=True, grad_domain=(-2, 2), gpu=G("all", 28), accuracy=25, fuzz=("float32",)),
    _r("cosh", "unary", lax=lax.cosh, jnp=jnp.cosh, oracle=np.cosh, domain=(-80, 80), dtypes=F32_NAMES, ulp=_u(25),
       special=True, grad_domain=(-2, 2), gpu=G("all", 28), accuracy=25, fuzz=("float32",)),
    _r("asinh", "unary", lax=lax.asinh, jnp=jnp.arcsinh, oracle=np.arcsinh, domain=(-1000, 1000), dtypes=F32_NAMES,
       ulp=_u(4), special=True, grad_domain=(-2, 2), gpu=G("all", 4), fuzz=("float32",)),
    _r("acosh", "unary", lax=lax.acosh, jnp=jnp.arccosh, oracle=np.arccosh, domain=(1, 1000), dtypes=F32_NAMES,
       ulp=_u(4), special=True, grad_domain=(1.2, 3), gpu=G("pos+1", 4), fuzz=("float32",)),
    _r("atanh", "unary", lax=lax.atanh, jnp=jnp.arctanh, oracle=np.arctanh, domain=(-0.999, 0.999),
       dtypes=F32_NAMES, ulp=_u(4), special=True, grad_domain=(-0.9, 0.9), gpu=G("unit", 4), fuzz=("float32",)),
    _r("lgamma", "unary", lax=lax.lgamma, oracle=lgamma64, domain=(0.1, 30), dtypes=F32_NAMES, ulp=_u(4),
       grad_domain=(0.5, 4), gpu=G("gamma", rtol=2e-5, faces=("lax",)),
       tested_in=("test_primitives.py::test_lgamma_special_values",)),
    _r("digamma", "unary", lax=lax.digamma, oracle=scipy.special.digamma, domain=(0.1, 30), dtypes=F32_NAMES,
       ulp=_u(4), grad_domain=(0.5, 4),
       gpu=G("gamma", rtol=2e-5, faces=("lax",)), tested_in=("test_primitives.py::test_digamma_recorded_values",)),
    # bessel_i0e/i1e: power series in double-double below |x| = 25, the asymptotic expansion above: f64 <= 2
    # ulp of the correctly rounded value (measured against a 100-digit series); SciPy, the oracle, is itself up
    # to 4 (i0e) / 7 (i1e) ulp off, hence the float64 bounds; f32 is the f64 value rounded once. GPU: on the host.
    _r("bessel_i0e", "unary", lax=lax.bessel_i0e, oracle=scipy.special.i0e, domain=(-60, 60), dtypes=FLOAT_NAMES,
       ulp=_u(1, 6), special=True, grad_domain=(-3, 3), deriv=lambda x: scipy.special.i1e(x) - np.sign(x) *
       scipy.special.i0e(x), vmap={}, gpu=G("all", 0, faces=("lax",)), f16=F16(1), accuracy=1),
    _r("bessel_i1e", "unary", lax=lax.bessel_i1e, oracle=scipy.special.i1e, domain=(-60, 60), dtypes=FLOAT_NAMES,
       ulp=_u(1, 9), special=True, grad_domain=(-3, 3), vmap={}, gpu=G("all", 0, faces=("lax",)), f16=F16(1),
       accuracy=1),
    _r("not", "unary", lax=lax.bitwise_not, jnp=jnp.invert, oracle=np.invert, dtypes=("bool",) + INT_NAMES,
       zero_tangent=True, gpu_int=True, fuzz=("int32", "uint32", "bool"),
       tested_in=("test_primitives.py::test_bitwise",)),
    _r("population_count", "unary", lax=lax.population_count, oracle=popcount_np, dtypes=INT_NAMES,
       int_semantics="exact", zero_tangent=True, gpu_int=True, fuzz=("int32", "uint32"),
       tested_in=("test_primitives.py::test_population_count", "test_vmap.py::test_vmap_integer_unary")),
    _r("clz", "unary", lax=lax.clz, oracle=clz_np, dtypes=INT_NAMES, int_semantics="exact", zero_tangent=True,
       gpu_int=True, tested_in=("test_vmap.py::test_vmap_integer_unary",)),
    _r("integer_pow", "integer_pow", lax=lax.integer_pow, example=lambda x: x ** 3, oracle=lambda x: x ** 3,
       dtypes=("float32", "int32", "uint32"), vmap={}, gpu_int=True, fuzz=("float32", "int32", "uint32"),
       tested_in=("test_primitives.py::test_integer_pow", "test_primitives.py::test_integer_pow_float",
                  "test_autodiff.py::test_integer_pow")),
]

_BINARY = [
    _r("add", "binary", lax=lax.add, jnp=jnp.add, oracle=np.add, dtypes=ALL_NAMES[1:], ulp=_u(1, 1), special=True,
       int_semantics="wrap", grad_domain=((-2, 2), (-2, 2)), linear=True, vmap={}, gpu=G("all", 0), gpu_int=True,
       f16=F16(0), fuzz=("float32", "int32", "uint32")),
    _r("sub", "binary", lax=lax.sub, jnp=jnp.subtract, oracle=np.subtract, dtypes=ALL_NAMES[1:], ulp=_u(1, 1),
       special=True, int_semantics="wrap", grad_domain=((-2, 2), (-2, 2)), linear=True, vmap={}, gpu=G("all", 0),
       gpu_int=True, f16=F16(0), fuzz=("float32", "int32", "uint32")),
    _r("mul", "binary", lax=lax.mul, jnp=jnp.multiply, oracle=np.multiply, dtypes=ALL_NAMES[1:], ulp=_u(1, 1),
       special=True, int_semantics="wrap", grad_domain=((-2, 2), (-2, 2)), linear=True, vmap={}, gpu=G("all", 0),
       gpu_int=True, f16=F16(0), fuzz=("float32", "int32", "uint32")),
    _r("div", "binary", lax=lax.div, jnp=jnp.divide, oracle=np.divide, dtypes=ALL_NAMES[1:], ulp=_u(1, 1),
       special=True, y_min_abs=0.5, int_semantics="xla", grad_domain=((-2, 2), (0.5, 2)), linear=True, vmap={},
       gpu=G("all", 4), gpu_int=True, f16=F16(0), fuzz=("float32", "int32", "uint32"),
       tested_in=("test_primitives.py::test_float_division_by_zero",
                  "test_primitives.py::test_integer_division_by_zero_recorded")),
    _r("rem", "binary", lax=lax.rem, jnp=jnp.fmod, oracle=np.fmod, dtypes=ALL_NAMES[1:], ulp=_u(0, 0), special=True,
       y_min_abs=0.5, int_semantics="xla", grad_domain=((0.1, 3), (0.7, 1.3)), vmap={}, gpu=G("all", 0),
       gpu_int=True, fuzz=("float32", "int32", "uint32")),
    _r("max", "binary", lax=lax.max, jnp=jnp.maximum, oracle=np.maximum, dtypes=ALL_NAMES, ulp=_u(0, 0),
       int_semantics="wrap", grad_domain=((-2, 2), (-2, 2)), vmap={}, gpu=G("all", 0), gpu_int=True, f16=F16(0),
       fuzz=("float32", "int32", "uint32", "bool"),
       tested_in=("test_primitives.py::test_max_min_nan_propagation",
                  "test_autodiff.py::test_max_min_ties_split_the_gradient")),
    _r("min", "binary", lax=lax.min, jnp=jnp.minimum, oracle=np.minimum, dtypes=ALL_NAMES, ulp=_u(0, 0),
       int_semantics="wrap", grad_domain=((-2, 2), (-2, 2)), vmap={}, gpu=G("all", 0), gpu_int=True, f16=F16(0),
       fuzz=("float32", "int32", "uint32", "bool")),
    _r("pow", "binary", lax=lax.pow, jnp=jnp.power, oracle=np.power, domain=(0.1, 10.0), dtypes=FLOAT_NAMES,
       ulp=_u(4, 4), special=True, grad_domain=((0.5, 2), (-2, 2)), vmap={}, gpu=G("pow", 64), accuracy=4,
       fuzz=("float32",), tested_in=("test_primitives.py::test_pow_special_cases",
                                     "test_math_accuracy.py::test_pow_special_cases_match_numpy")),
    # float32: the C library's atan2f as XLA:CPU calls it, JAX's bits (NaN where both operands are subnormal)
    _r("atan2", "binary", lax=lax.atan2, jnp=jnp.arctan2, oracle=atan2_xla64, dtypes=FLOAT_NAMES, ulp=_u(4, 4),
       special=True, grad_domain=((-2, 2), (-2, 2)), vmap={}, gpu=G("all", 4), accuracy=4, fuzz=("float32",)),
    _r("nextafter", "binary", lax=lax.nextafter, jnp=jnp.nextafter, oracle=np.nextafter, dtypes=F32_NAMES,
       zero_tangent=True, gpu=G("all", 0), fuzz=("float32",), tested_in=("test_primitives.py::test_nextafter",)),
    _r("and", "bitwise", lax=lax.bitwise_and, jnp=jnp.bitwise_and, oracle=np.bitwise_and,
       dtypes=("bool",) + INT_NAMES, zero_tangent=True, gpu_int=True, fuzz=("int32", "uint32", "bool"),
       tested_in=("test_primitives.py::test_bitwise",)),
    _r("or", "bitwise", lax=lax.bitwise_or, jnp=jnp.bitwise_or, oracle=np.bitwise_or, dtypes=("bool",) + INT_NAMES,
       zero_tangent=True, gpu_int=True, fuzz=("int32", "uint32", "bool"),
       tested_in=("test_primitives.py::test_bitwise",)),
    _r("xor", "bitwise", lax=lax.bitwise_xor, jnp=jnp.bitwise_xor, oracle=np.bitwise_xor,
       dtypes=("bool",) + INT_NAMES, zero_tangent=True, gpu_int=True, fuzz=("int32", "uint32", "bool"),
       tested_in=("test_primitives.py::test_bitwise",)),
    _r("shift_left", "shift", lax=lax.shift_left, jnp=jnp.left_shift, dtypes=INT_NAMES, int_semantics="xla",
       zero_tangent=True, gpu_int=True, fuzz=("int32", "uint32")),
    _r("shift_right_logical", "shift", lax=lax.shift_right_logical, dtypes=INT_NAMES, int_semantics="xla",
       zero_tangent=True, gpu_int=True, fuzz=("int32", "uint32")),
    _r("shift_right_arithmetic", "shift", lax=lax.shift_right_arithmetic, dtypes=INT_NAMES, int_semantics="xla",
       zero_tangent=True, gpu_int=True, fuzz=("int32", "uint32")),
]

_COMPARE = [
    _r(name, "compare", lax=getattr(lax, name), jnp=face, oracle=oracle, dtypes=ALL_NAMES, zero_tangent=True,
       vmap={} if name in ("lt", "eq", "ge") else None, gpu_int=name in ("eq", "lt", "ge"))
    for name, face, oracle in [("eq", jnp.equal, np.equal), ("ne", jnp.not_equal, np.not_equal),
                               ("lt", jnp.less, np.less), ("le", jnp.less_equal, np.less_equal),
                               ("gt", jnp.greater, np.greater), ("ge", jnp.greater_equal, np.greater_equal)]
]

_OTHER_ELEMENTWISE = [
    _r("select_n", "select", lax=lax.select_n, dtypes=("bool", "int32", "uint32", "float32"), linear=True,
       tested_in=("test_primitives.py::test_select_n", "test_autodiff.py::test_select_n_and_where",
                  "test_vmap.py::test_select_n_int32")),
    _r("clamp", "clamp", lax=lax.clamp, dtypes=("int32", "float32"),
       tested_in=("test_primitives.py::test_clamp", "test_autodiff.py::test_clamp",
                  "test_vmap.py::test_clamp_combinations")),
    _r("convert_element_type", "convert", lax=lax.convert_element_type, example=lambda x: x.astype(jnp.int32),
       dtypes=ALL_NAMES, linear=True, vmap={},
       tested_in=("test_primitives.py::test_convert_element_type", "test_autodiff.py::test_convert_element_type",
                  "test_gpu.py::test_convert_element_type")),
    _r("bitcast_convert_type", "convert", lax=lax.bitcast_convert_type,
       example=lambda x: lax.bitcast_convert_type(x, jnp.int32), dtypes=("int32", "uint32", "float32"),
       zero_tangent=True, vmap={}, tested_in=("test_primitives.py::test_bitcast_convert_type",)),
    _r("stop_gradient", "unary", lax=lax.stop_gradient, dtypes=FLOAT_NAMES,  # others pass through unbound
       zero_tangent=True,
       tested_in=("test_primitives.py::test_stop_gradient_value", "test_autodiff.py::test_stop_gradient",
                  "test_vmap.py::test_stop_gradient_under_vmap")),
]

_STRUCTURAL = [
    _r("broadcast_in_dim", "structural", lax=lax.broadcast_in_dim, linear=True,
       tested_in=("test_primitives.py::test_broadcast_in_dim", "test_vmap.py::test_broadcast_in_dim")),
    _r("reshape", "structural", lax=lax.reshape, jnp=jnp.reshape, linear=True,
       tested_in=("test_primitives.py::test_reshape_squeeze_expand_dims", "test_vmap.py::test_reshape")),
    _r("squeeze", "structural", lax=lax.squeeze, jnp=jnp.squeeze, linear=True,
       tested_in=("test_primitives.py::test_reshape_squeeze_expand_dims", "test_vmap.py::test_squeeze_expand_dims")),
    _r("transpose", "structural", lax=lax.transpose, jnp=jnp.transpose, linear=True,
       tested_in=("test_primitives.py::test_transpose", "test_vmap.py::test_transpose")),
    _r("iota", "structural", lax=lax.iota, zero_tangent=True,
       tested_in=("test_primitives.py::test_iota", "test_vmap.py::test_iota_unbatched",
                  "test_autodiff.py::test_iota_and_constants_have_no_tangent")),
    _r("copy", "structural", jnp=jnp.copy, oracle=np.copy, grad_domain=(-2, 2), linear=True,
       tested_in=("test_primitives.py::test_slice_rev_copy_through_indexing",)),
    _r("slice", "structural", lax=lax.slice, linear=True,
       tested_in=("test_primitives.py::test_slice_rev_copy_through_indexing", "test_autodiff.py::test_slice_and_rev",
                  "test_vmap.py::test_slice_and_rev")),
    _r("rev", "structural", lax=lax.rev, linear=True,
       tested_in=("test_primitives.py::test_slice_rev_copy_through_indexing", "test_autodiff.py::test_slice_and_rev",
                  "test_vmap.py::test_lax_slice_and_rev_jaxpr")),
    _r("pad", "structural", lax=lax.pad, jnp=jnp.pad, linear=True,
       tested_in=("test_primitives.py::test_pad", "test_shape_ops.py::test_lax_pad_negative_and_interior",
                  "test_autodiff.py::test_pad_primitive_and_its_rules", "test_vmap.py::test_pad")),
    _r("tile", "structural", lax=lax.tile, jnp=jnp.tile, linear=True,
       tested_in=("test_jnp_staging_jax_text.py::test_tile_values_and_rules",)),
    _r("stack", "structural", lax=lax.stack, jnp=jnp.stack, linear=True,
       tested_in=("test_api_jax_text15.py::test_stack_split_values", "test_api_jax_text15.py::test_stack_split_rules")),
    _r("unstack", "structural", lax=lax.unstack, jnp=jnp.unstack, linear=True,
       tested_in=("test_api_jax_text15.py::test_stack_split_values", "test_api_jax_text15.py::test_stack_split_rules")),
    _r("split", "structural", lax=lax.split, jnp=jnp.split, linear=True,
       tested_in=("test_api_jax_text15.py::test_stack_split_values", "test_api_jax_text15.py::test_stack_split_rules")),
]

_REDUCTIONS = [
    _r("reduce_sum", "reduction", lax=lax.reduce_sum, jnp=jnp.sum, oracle=np.sum, linear=True,
       tested_in=("test_primitives.py::test_lax_reductions", "test_autodiff.py::test_reductions",
                  "test_vmap.py::test_reductions")),
    _r("reduce_prod", "reduction", lax=lax.reduce_prod, jnp=jnp.prod, oracle=np.prod,
       tested_in=("test_primitives.py::test_lax_reductions", "test_autodiff.py::test_reduce_max_ties_and_prod_zeros")),
    _r("reduce_max", "reduction", lax=lax.reduce_max, jnp=jnp.max, oracle=np.max,
       tested_in=("test_primitives.py::test_lax_reductions", "test_primitives.py::test_lax_reduce_max_min_nan")),
    _r("reduce_min", "reduction", lax=lax.reduce_min, jnp=jnp.min, oracle=np.min,
       tested_in=("test_primitives.py::test_lax_reductions", "test_primitives.py::test_lax_reduce_max_min_nan")),
    _r("reduce_and", "reduction", lax=lax.reduce_and, jnp=jnp.all, oracle=np.all, zero_tangent=True,
       tested_in=("test_primitives.py::test_lax_reduce_empty_and_bool",)),
    _r("reduce_or", "reduction", lax=lax.reduce_or, jnp=jnp.any, oracle=np.any, zero_tangent=True,
       tested_in=("test_primitives.py::test_lax_reduce_empty_and_bool",)),
    _r("argmax", "reduction", lax=lax.argmax, jnp=jnp.argmax, oracle=np.argmax, zero_tangent=True,
       tested_in=("test_primitives.py::test_lax_argmax_argmin", "test_primitives.py::test_argmax_ties_and_nan")),
    _r("argmin", "reduction", lax=lax.argmin, jnp=jnp.argmin, oracle=np.argmin, zero_tangent=True,
       tested_in=("test_primitives.py::test_lax_argmax_argmin",)),
]

_LIBRARY = [
    _r("dot_general", "library", lax=lax.dot_general, linear=True,
       tested_in=("test_linalg.py::test_dot_general_layouts", "test_linalg.py::test_dot_general_gradients",
                  "test_linalg.py::test_vmap_dot_general_batch_dims")),
    _r("concatenate", "library", lax=lax.concatenate, jnp=jnp.concatenate, linear=True,
       tested_in=("test_shape_ops.py::test_concatenate_stack",)),
    _r("dynamic_slice", "library", lax=lax.dynamic_slice, linear=True,
       tested_in=("test_indexing.py::test_dynamic_slice_and_update",)),
    _r("dynamic_update_slice", "library", lax=lax.dynamic_update_slice, linear=True,
       tested_in=("test_indexing.py::test_dynamic_slice_and_update",)),
    _r("gather", "library", linear=True,
       tested_in=("test_indexing.py::test_getitem", "test_indexing.py::test_lax_gather_scatter_modes",
                  "test_indexing.py::test_indexing_gradients")),
    _r("scatter", "library", linear=True, tested_in=("test_indexing.py::test_at_updates",)),
    _r("scatter-add", "library", linear=True,
       tested_in=("test_indexing.py::test_at_updates", "test_indexing.py::test_lax_gather_scatter_modes")),
    _r("scatter-mul", "library", linear=True, tested_in=("test_indexing.py::test_at_updates",)),
    _r("scatter-min", "library", tested_in=("test_indexing.py::test_at_updates",)),
    _r("scatter-max", "library", tested_in=("test_indexing.py::test_at_updates",)),
    _r("scatter-sub", "library", linear=True,
       tested_in=("test_lax_composites.py::test_scatter_sub",
                  "test_vmap_index_jax_text.py::test_batched_scatter_modes_against_numpy")),
    _r("sort", "library", lax=lax.sort, jnp=jnp.sort,
       tested_in=("test_shape_ops.py::test_sort_argsort", "test_shape_ops.py::test_lax_sort_multi_operand_and_top_k")),
    _r("cumsum", "library", lax=lax.cumsum, jnp=jnp.cumsum, linear=True,
       tested_in=("test_shape_ops.py::test_cumsum_cumprod",)),
    _r("cumprod", "library", lax=lax.cumprod, jnp=jnp.cumprod, tested_in=("test_shape_ops.py::test_cumsum_cumprod",)),
    _r("cummax", "library", lax=lax.cummax, tested_in=("test_fuzz_programs.py::test_random_programs_match_reference",)),
    _r("cummin", "library", lax=lax.cummin, tested_in=("test_fuzz_programs.py::test_random_programs_match_reference",)),
    # lax.linalg (primitives/linalg.py, through faer)
    _r("cholesky", "library", lax=lax.linalg.cholesky,
       tested_in=("test_linalg.py::test_cholesky_against_numpy",
                  "test_linalg.py::test_cholesky_not_positive_definite_gives_nans_like_jax",
                  "test_linalg.py::test_linalg_jvps_against_finite_differences")),
    _r("lu", "library", lax=lax.linalg.lu,
       tested_in=("test_linalg.py::test_lu_against_scipy", "test_linalg.py::test_linalg_jvps_against_finite_differences")),
    _r("lu_pivots_to_permutation", "library", lax=lax.linalg.lu_pivots_to_permutation, zero_tangent=True,
       tested_in=("test_linalg.py::test_lu_against_scipy",)),
    _r("qr", "library", lax=lax.linalg.qr,
       tested_in=("test_linalg.py::test_qr_against_numpy", "test_linalg.py::test_linalg_jvps_against_finite_differences")),
    _r("eigh", "library", lax=lax.linalg.eigh,
       tested_in=("test_linalg.py::test_eigh_against_numpy", "test_linalg.py::test_linalg_jvps_against_finite_differences")),
    _r("svd", "library", lax=lax.linalg.svd,
       tested_in=("test_linalg.py::test_svd_against_numpy", "test_linalg.py::test_linalg_jvps_against_finite_differences")),
    _r("triangular_solve", "library", lax=lax.linalg.triangular_solve, linear=True,
       tested_in=("test_linalg.py::test_triangular_solve_against_scipy",
                  "test_linalg.py::test_linalg_jvps_against_finite_differences",
                  "test_linalg.py::test_linalg_vmap_matches_batched")),
    _r("eig", "library", lax=lax.linalg.eig,
       tested_in=("test_linalg_complex.py::test_eig", "test_linalg_complex.py::test_eigvals_grad_and_vmap")),
    _r("hessenberg", "library", lax=lax.linalg.hessenberg,
       tested_in=("test_linalg_complex.py::test_hessenberg_householder",)),
    _r("tridiagonal", "library", lax=lax.linalg.tridiagonal, tested_in=("test_linalg_complex.py::test_tridiagonal",)),
    _r("householder_product", "library", lax=lax.linalg.householder_product,
       tested_in=("test_linalg_complex.py::test_householder_product_ormqr",)),
    _r("ormqr", "library", lax=lax.linalg.ormqr, tested_in=("test_linalg_complex.py::test_householder_product_ormqr",)),
    _r("tridiagonal_solve", "library", lax=lax.linalg.tridiagonal_solve, linear=True,
       tested_in=("test_linalg_complex.py::test_tridiagonal_solve",)),
    _r("cholesky_update", "library", lax=lax.linalg.cholesky_update,
       tested_in=("test_linalg_complex.py::test_cholesky_update_symmetric_product",)),
    _r("symmetric_product", "library", lax=lax.linalg.symmetric_product,
       tested_in=("test_linalg_complex.py::test_cholesky_update_symmetric_product",)),
    _r("schur", "library", lax=lax.linalg.schur,
       tested_in=("test_linalg_complex.py::test_rsf2csf",)),
]

# convolutions and windowed reductions (primitives/convolution.py, primitives/windowed.py)
_LIBRARY += [
    _r("conv_general_dilated", "library", lax=lax.conv_general_dilated, linear=True,
       tested_in=("test_conv.py::test_conv_against_direct_loops_float32",
                  "test_conv.py::test_conv_against_direct_loops_float64",
                  "test_conv.py::test_conv_gradients_against_finite_differences",
                  "test_conv.py::test_conv_gradients_match_jax", "test_conv.py::test_conv_vmap_against_a_loop")),
    _r("reduce_window_sum", "library", linear=True,
       tested_in=("test_reduce_window.py::test_monoid_reduce_window_against_loops",
                  "test_reduce_window.py::test_reduce_window_gradients_against_finite_differences",
                  "test_reduce_window.py::test_reduce_window_vmap_against_a_loop")),
    _r("reduce_window_max", "library",
       tested_in=("test_reduce_window.py::test_monoid_reduce_window_against_loops",
                  "test_reduce_window.py::test_pool_gradients_with_ties_match_jax",
                  "test_reduce_window.py::test_reduce_window_vmap_against_a_loop")),
    _r("reduce_window_min", "library",
       tested_in=("test_reduce_window.py::test_monoid_reduce_window_against_loops",
                  "test_reduce_window.py::test_pool_gradients_with_ties_match_jax")),
    _r("reduce_window", "library", lax=lax.reduce_window,
       tested_in=("test_reduce_window.py::test_general_reduce_window_against_loops",
                  "test_reduce_window.py::test_general_reduce_window_on_a_pytree",
                  "test_reduce_window.py::test_reduce_window_gradients_against_finite_differences")),
    _r("select_and_gather_add", "library", linear=True,
       tested_in=("test_reduce_window.py::test_select_and_scatter_add_and_gather_are_transposes",
                  "test_reduce_window.py::test_reduce_window_gradients_against_finite_differences")),
    _r("select_and_scatter_add", "library", linear=True,
       tested_in=("test_reduce_window.py::test_select_and_scatter_add_and_gather_are_transposes",
                  "test_reduce_window.py::test_pool_gradients_with_ties_match_jax")),
    _r("reduce_precision", "library", lax=lax.reduce_precision, linear=True,
       tested_in=("test_lax_composites.py::test_reduce_precision_matches_jax",
                  "test_lax_composites.py::test_reduce_precision_is_one_equation_with_jaxs_derivative")),
    _r("cumlogsumexp", "library", lax=lax.cumlogsumexp,
       tested_in=("test_reduce_window.py::test_cumlogsumexp_matches_jax",
                  "test_reduce_window.py::test_cumlogsumexp_against_numpy")),
]

_CONTROL = [
    _r("cond", "control", lax=lax.cond, linear=True,
       tested_in=("test_control_flow.py::test_cond_against_python", "test_control_flow.py::test_cond_jaxpr_matches_jax")),
    _r("while", "control", lax=lax.while_loop, linear=True,
       tested_in=("test_control_flow.py::test_while_loop_against_python",)),
    _r("scan", "control", lax=lax.scan, linear=True, tested_in=("test_control_flow.py::test_scan_against_python",)),
    # float32 pow through the C library (XLA:CPU's powf), printed as pow: what the samplers bind for JAX's
    # bits (primitives/elementwise.py: _libm_twin)
    _r("pow_libm", "internal", tested_in=("test_random_xla_f32.py::test_libm_twins_print_as_tan_and_pow",
                                          "test_random_xla_f32.py::test_libm_twins_are_the_c_library",
                                          "test_gpu_ops.py::test_elementwise_op_matches_cpu")),
    # a * b + c rounded once (float32/float64), the samplers' fused multiply-adds (_prng.fma); JAX exports none
    _r("fma", "internal",
       tested_in=("test_fma.py::test_fma_rounds_once", "test_fma.py::test_fma_special_values_and_scalars",
                  "test_fma.py::test_fma_derivatives_batching_and_jaxpr", "test_fma.py::test_fma_rejects_bad_operands")),
    # the samplers' choice between YNNPACK's routines and XLA's own, taken at lowering on the final (batched)
    # shape (_prng.py); sum_last is linear
    _r("ynn_choice", "internal", linear=True,
       tested_in=("test_random_ynn.py::test_ynn_choice_decides_on_the_batched_shape",
                  "test_random_ynn.py::test_ynn_choice_derivatives_and_errors",
                  "test_random_ynn.py::test_x64_draws_bit_identical_to_jax")),
    # a half-float sampler's tail as one YNNPACK fusion (float32 throughout) or rounded per op, taken at
    # lowering on the final (batched) shape (_prng.py: ynn_chain)
    _r("ynn_chain", "internal",
       tested_in=("test_bfloat16.py::test_bfloat16_ball_dirichlet_from_4096_rows_bit_identical_to_jax",
                  "test_bfloat16.py::test_ynn_chain_derivatives_and_errors")),
    # partial evaluation's marker for a known value it must not fold; staged internally, never by users
    _r("pe_identity", "internal", linear=True,
       tested_in=("test_control_flow.py::test_closed_over_values_become_leading_operands",)),
]

# call primitives and the ones the transformations stage for themselves
_CALLS = [
    _r("jit", "call", linear=True,
       tested_in=("test_autodiff.py::test_grad_of_jit_keeps_inner_calls", "test_vmap.py::test_vmap_of_jit_is_one_call")),
    _r("custom_jvp_call", "call", tested_in=("test_autodiff.py::test_custom_jvp",)),
    _r("custom_vjp_call", "call", tested_in=("test_autodiff.py::test_custom_vjp",)),
    # a custom_vjp fwd rule staged with optimize_remat=True (custom_derivatives.remat_opt_p); its transpose
    # rule exists only to raise JAX's NotImplementedError for higher-order AD, hence linear=True
    _r("remat_opt", "call", linear=True, tested_in=("test_custom_derivatives.py::test_optimize_remat_values_and_what_ran",
                                       "test_custom_derivatives.py::test_optimize_remat_jaxpr_and_errors")),
    # the tangent of a custom_vjp function in a linearized jaxpr; its transpose runs the user's bwd
    # jax.custom_batching.custom_vmap: a call whose vmap rule is the user's
    _r("custom_vmap_call", "call", tested_in=("test_custom_batching.py::test_jvp_in_both_orders_and_grad",)),
    _r("custom_lin", "internal", linear=True, tested_in=("test_autodiff.py::test_custom_vjp",)),
    # jax.experimental.hijax: a VJPHiPrimitive's application (its transpose runs the user's `transpose` rule),
    # its tangent in a linearized jaxpr (transpose: the user's vjp_bwd), and a hi-typed scan carry made of its
    # arrays and back
    _r("call_hi_primitive", "call", linear=True,
       tested_in=("test_hijax.py::test_grad_and_nesting", "test_hijax.py::test_jvp_and_vmap",
                  "test_hijax.py::test_jaxpr_text")),
    _r("call_hi_primitive_linearized", "internal", linear=True,
       tested_in=("test_hijax.py::test_pytrees_and_accumulators", "test_hijax.py::test_grad_and_nesting")),
    *[_r(n, "internal", tested_in=("test_hijax.py::test_hitype_scan_carries_and_ys",))
      for n in ("hi_raise", "hi_lower")],
    # array-reference equations, staged by make_jaxpr only (primitives/state_jaxpr.py) for printing and
    # eval_jaxpr; every other transformation discharges refs while tracing
    *[_r(n, "internal", tested_in=("test_refs_jaxpr.py::test_jaxpr_text_as_jax",
                                   "test_refs_jaxpr.py::test_eval_jaxpr_of_a_staged_function_matches_running_it"))
      for n in ("new_ref", "get", "swap", "addupdate", "freeze")],
    # jax.custom_derivatives.linear_call: a linear function with a user-given transpose
    _r("linear_call", "call", linear=True, tested_in=("test_custom_derivatives.py::test_linear_call",)),
    # lax.custom_linear_solve (JAX's linear_solve_p binds 'custom_linear_solve') and random.gamma's sampler
    _r("custom_linear_solve", "call", linear=True, tested_in=("test_lax_custom_solvers.py::test_linear_solve_value_and_grads",
                                                 "test_lax_custom_solvers.py::test_linear_solve_vmap_and_second_order")),
    _r("random_gamma", "library", tested_in=("test_random_distributions.py::test_random_gamma_p_transforms",)),
    # the sum of two tangents / cotangents of one value
    _r("add_any", "internal", linear=True, tested_in=("test_autodiff.py::test_select_n_and_where",)),
    # the placeholder cond's partial evaluation puts in residual slots a branch does not fill (JAX's empty2)
    _r("empty2", "internal", tested_in=("test_api_jax_text17.py::test_output_as_jax",
                                        "test_api_jax_text17.py::test_cond_grad_values")),
    # lax.empty: an array of unspecified contents (zeros in cranax), lowered inline
    _r("empty", "internal", tested_in=("test_api_jax_text18.py::test_lax_empty_as_jax",
                                       "test_api_jax_text18.py::test_lax_empty_values_and_scalar_type_param")),
    # jax.checkpoint's call primitive and checkpoint_name's identity marker (primitives/remat.py)
    _r("remat2", "call", linear=True,
       tested_in=("test_checkpoint.py::test_values_and_derivatives", "test_checkpoint.py::test_printed_transformed_checkpoint")),
    # (its jvp passes the tangent on unnamed, so it never reaches a linear jaxpr: no transpose rule)
    _r("name", "internal", tested_in=("test_checkpoint.py::test_checkpoint_name",)),
    # set_xla_metadata's identity (experimental/xla_metadata.py): linear, its attributes printed in HLO text
    _r("xla_metadata_value", "internal", linear=True, tested_in=("test_guides_jax_text.py::test_output_as_jax",)),
    # lax.optimization_barrier, also the barrier a differentiated remat2 lowers behind: linear (JAX's rules)
    _r("optimization_barrier", "internal", linear=True,
       tested_in=("test_remat_residuals.py::test_recomputation_survives_cse_under_jit",
                  "test_optimization_barrier.py::test_jaxprs_show_the_barrier",
                  "test_optimization_barrier.py::test_barrier_changes_no_bits_as_xla")),
    # host callbacks (primitives/callback.py): a library step that calls back into Python
    _r("pure_callback", "library", tested_in=("test_callbacks.py::test_pure_callback_eager_and_jit",
                                              "test_callbacks.py::test_vmap_methods")),
    _r("io_callback", "library", tested_in=("test_callbacks.py::test_io_callback_in_loop_in_order",
                                            "test_callbacks.py::test_io_callback_vmap")),
    _r("debug_callback", "library", tested_in=("test_debug.py::test_debug_callback",)),
    _r("debug_print", "library", tested_in=("test_debug.py::test_print_eager_and_jit",
                                            "test_debug.py::test_print_vmap_one_line_per_element")),
    # checkify.check: functionalized away by checkify (experimental/checkify.py), never lowered
    _r("check", "internal", tested_in=("test_checkify.py::test_user_and_float_checks",
                                       "test_checkify.py::test_vmap_throw_and_kwargs")),
    # collectives over named axes (primitives/collectives.py): rewritten by the vmap that owns the name
    # into array operations over its batch axis, never lowered
    *[_r(n, "internal", linear=lin, tested_in=("test_collectives.py::test_recorded",
                                               "test_collectives.py::test_data_movement_against_numpy",
                                               "test_collectives.py::test_transpose_is_the_adjoint"))
      for n, lin in (("psum", True), ("pmax", False), ("pmin", False), ("all_gather", True),
                     ("reduce_scatter", True), ("all_to_all", True), ("ppermute", True), ("pbroadcast", True),
                     ("axis_index", False))],
    # ragged_all_to_all: rewritten by the owning vmap into gathers and selects (linear in its two data operands,
    # with a jvp; no transpose rule yet, so it is not recorded as linear)
    _r("ragged_all_to_all", "internal", tested_in=(
        "test_collectives.py::test_ragged_all_to_all_docstring_example",
        "test_collectives.py::test_ragged_all_to_all_several_slices_per_member_matches_reference")),
    # the cross-process steps of a pmap axis spanning processes (an ordered host callback into MPI)
    *[_r(n, "internal", linear=True, tested_in=("test_distributed.py::test_processes",))
      for n in ("process_allreduce", "process_allgather")],
]

# NumPy functions built from several primitives that the sweeps cover beside the primitives
# (kind 'composite'; ``name`` is the cranax.numpy name).
# The special functions (h-special). Both operands share the sweep's domain. igamma/igammac: f32 is the f64
# value rounded once; f64 within ~5e-14 relative on [0.1, 30] (the prefactor x^a e^-x / Gamma(a) carries
# lgamma's absolute error, ~a * 4e-15 relative beyond). igamma_grad_a, random_gamma_grad and polygamma have
# no SciPy oracle over a shared domain (polygamma needs an integer m): JAX-recorded values in the named tests.
_SPECIAL = [
    _r("igamma", "binary", lax=lax.igamma, oracle=scipy.special.gammainc, domain=(0.1, 30), dtypes=FLOAT_NAMES,
       ulp=_u(1, 512), grad_domain=((0.5, 3), (0.5, 3)), vmap={},
       tested_in=("test_scipy_special.py::test_igamma_edges_match_jax",)),
    _r("igammac", "binary", lax=lax.igammac, oracle=scipy.special.gammaincc, domain=(0.1, 30), dtypes=FLOAT_NAMES,
       ulp=_u(1, 512), grad_domain=((0.5, 3), (0.5, 3)), vmap={},
       tested_in=("test_scipy_special.py::test_igamma_edges_match_jax",)),
    _r("igamma_grad_a", "binary", lax=lax.igamma_grad_a, dtypes=FLOAT_NAMES, vmap={},
       tested_in=("test_scipy_special.py::test_igamma_grad_a_matches_jax_and_fd",)),
    _r("random_gamma_grad", "binary", lax=lax.random_gamma_grad, dtypes=FLOAT_NAMES, vmap={},
       tested_in=("test_scipy_special.py::test_random_gamma_grad_matches_jax_and_fd",)),
    _r("polygamma", "binary", lax=lax.polygamma, dtypes=FLOAT_NAMES, vmap={},
       tested_in=("test_scipy_special.py::test_polygamma_values_and_grad",)),
    _r("zeta", "binary", lax=lax.zeta, oracle=scipy.special.zeta, domain=(1.1, 30), dtypes=FLOAT_NAMES,
       ulp=_u(1, 8), vmap={}, tested_in=("test_scipy_special.py::test_zeta_edges_match_jax",)),
]

_COMPOSITES = [
    _r("floor_divide", "composite", jnp=jnp.floor_divide, oracle=np.floor_divide, dtypes=INT_NAMES + F32_NAMES,
       int_semantics="xla", gpu_int=True,
       tested_in=("test_primitives.py::test_jnp_integer_floor_divide_remainder",)),
    _r("remainder", "composite", jnp=jnp.remainder, oracle=np.remainder, dtypes=INT_NAMES + F32_NAMES,
       int_semantics="xla", tested_in=("test_primitives.py::test_jnp_integer_floor_divide_remainder",)),
]

# complex numbers (lowered as pairs of reals, primitives/complex_lowering.py) and FFTs
_COMPLEX = [
    _r("real", "unary", lax=lax.real, example=lambda x: lax.real(lax.complex(x, x)), dtypes=("float32",),
       linear=True, tested_in=("test_complex.py::test_parts_and_their_transposes",
                               "test_complex.py::test_vmap_of_complex_functions")),
    _r("imag", "unary", lax=lax.imag, example=lambda x: lax.imag(lax.complex(x, x)), dtypes=("float32",),
       linear=True, tested_in=("test_complex.py::test_parts_and_their_transposes",
                               "test_complex.py::test_vmap_of_complex_functions")),
    _r("conj", "unary", lax=lax.conj, dtypes=("float32",), linear=True,
       tested_in=("test_complex.py::test_parts_and_their_transposes", "test_complex.py::test_grad_conventions")),
    _r("complex", "binary", lax=lax.complex, dtypes=("float32", "float64"), linear=True,
       tested_in=("test_complex.py::test_parts_and_their_transposes", "test_complex.py::test_lax_complex")),
    _r("fft", "library", lax=lax.fft, jnp=jnp.fft.fft, linear=True,
       tested_in=("test_fft.py::test_jnp_fft_vs_numpy", "test_fft.py::test_transpose_is_the_adjoint",
                  "test_fft.py::test_vmap_and_jit", "test_fft.py::test_grad_vs_finite_differences")),
]

RECORDS = (_UNARY + _BINARY + _SPECIAL + _COMPARE + _OTHER_ELEMENTWISE + _STRUCTURAL + _REDUCTIONS + _LIBRARY
           + _CONTROL + _CALLS + _COMPLEX)
COMPOSITES = _COMPOSITES
OPS = {r.name: r for r in RECORDS + COMPOSITES}
assert len(OPS) == len(RECORDS) + len(COMPOSITES), "two records with one name"

ELEMENTWISE_KINDS = ("unary", "binary", "compare", "shift", "bitwise", "select", "clamp", "convert", "integer_pow")


def lax_ops():
    """Every primitive's record (JAX's ``lax_test_util.lax_ops()``)."""
    return list(RECORDS)


def select(*kinds, where=None, composites=False):
    """The records of the given kinds (all if none) for which ``where(record)`` holds, sorted by name."""
    pool = RECORDS + (COMPOSITES if composites else [])
    return sorted((r for r in pool if (not kinds or r.kind in kinds) and (where is None or where(r))),
                  key=lambda r: r.name)


def names(records):
    return [r.name for r in records]


# ----------------------------------------------------------------------------------------------- discovery

# Package parts that define no primitives and must not be imported for discovery (entry points run on import).
_NOT_WALKED = ("cranax.tour", "cranax._tour", "cranax.bench", "cranax._bench")


def record_name(p):
    """The name a primitive's record goes by: its core op's (``wire_name``) where that differs from the printed
    one (the samplers' C-library ``pow``: ``pow_libm``), else its name."""
    return getattr(p, "wire_name", p.name)


def registered_primitives():
    """Every ``Primitive`` defined in a module of the ``cranax.primitives`` package, reachable from
    ``cranax.lax`` (and its submodules), or defined anywhere else in the package (call primitives, the
    interpreters' own), found by walking the packages: {primitive: module name}."""
    found = {}
    mods = [cranax.primitives]
    for pkg in (cranax.primitives, lax, cranax):
        for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if not m.name.endswith("__main__") and not m.name.startswith(_NOT_WALKED):
                mods.append(importlib.import_module(m.name))
    # the faces last: a primitive belongs to the module that defines it, not to one that re-exports it
    # (cranax.lax exports them all under JAX's ``<name>_p``)
    mods.sort(key=lambda m: m is lax or m is cranax)   # (by identity: the alias names cranax.lax jax.lax)
    mods.append(lax)
    for mod in mods:
        for v in vars(mod).values():
            # a CompositePrimitive (lax.top_k_p, split_p, ...) binds its composition: it never reaches a
            # jaxpr, so it has no rules of its own (tests/test_lax_rest.py binds each)
            if isinstance(v, Primitive) and not isinstance(v, CompositePrimitive):
                found.setdefault(v, mod.__name__)
    return found
