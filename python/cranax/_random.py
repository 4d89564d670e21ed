"""``cranax.random``: JAX's counter-based PRNG (threefry2x32), bit-identical to JAX 0.10.2 with its default
``jax_threefry_partitionable=True``.

Keys are either legacy ``uint32[..., 2]`` arrays (``PRNGKey``) or typed keys (``key``): a
:class:`PRNGKeyArray` wrapping the same data whose ``shape`` is the batch shape and whose ``dtype`` prints as
``key<fry>``. Every function accepts both and returns the kind it was given. Samplers are compiled
(``jit``) once per shape/dtype and inline into an enclosing ``jit``/``vmap`` trace; all arithmetic is built
from primitives (see :mod:`cranax._prng`), so it fuses and runs on every backend.

Transcendental functions are composed here the way XLA's CPU backend evaluates them for float32 (see
:mod:`cranax._prng`: ``log`` as XLA's vectorized runtime routine, ``log1p`` and ``erf`` as XLA's intrinsics,
multiply-adds fused); ``erf_inv`` is the primitive, which the CPU backend evaluates for float32 exactly as
XLA:CPU does (``rust/backend/cpu/vmath.rs``). So ``normal``, ``truncated_normal``, ``gumbel``,
``exponential``, ``laplace``, ``logistic`` and ``categorical`` match JAX bit for bit too (on the CPU; XLA
flushes subnormal results to zero, cranax keeps them). Without sort/gather primitives,
``permutation``, ``choice`` and ``top_k``-style sampling rank by counting comparisons (exact, O(n^2) work, refused above ~10**8); ``lax.sort_key_val``,
``jnp.take``, ``jnp.cumsum`` and ``lax.top_k`` are used instead as soon as they exist.
"""
import math
import operator
from collections.abc import Sequence

import numpy as np

from . import _prng, dtypes, lax
from .core import ArrayType
from . import numpy as jnp
from .api import jit
from .api_vmap import vmap
from .custom_derivatives import custom_jvp
from .array import Array
from .config import config
from .core import Primitive, ShapedArray, Tracer, get_aval
from .interpreters import ad, batching, mlir
from .errors import ConcretizationTypeError
from ._pytree import register_internal_node
from .numpy._ufuncs import _power
# float32 tan and pow as XLA:CPU computes them (the C library's tanf/powf per element), so that the draws
# that go through them are JAX's bits whatever ``lax.tan``/``lax.pow`` compute elsewhere (tan is the
# vectorized one; pow is powf today too, but a vector pow may replace it: primitives/elementwise.py)
from .primitives.elementwise import pow_libm as _pow_libm


def _power_libm(x1, x2):
    """``jnp.power`` through the C library's powf (``pow_libm``): JAX's bits."""
    return _power(x1, x2, _pow_libm)

__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split", "fold_in", "clone", "bits",
           "uniform", "normal", "truncated_normal", "randint", "bernoulli", "categorical", "choice",
           "permutation", "gumbel", "exponential", "laplace", "logistic",
           "key_dtype", "gamma", "loggamma", "beta", "dirichlet", "poisson", "binomial", "multinomial", "t",
           "chisquare", "f", "cauchy", "lognormal", "pareto", "weibull_min", "rayleigh", "wald", "maxwell",
           "double_sided_maxwell", "generalized_normal", "geometric", "rademacher", "triangular", "ball", "multivariate_normal",
           "orthogonal", "random_gamma_p"]

U32 = np.dtype(np.uint32)
_SHAPE_OPS_ISSUE = "the shape-ops/indexing issue (issue 7: sort, cumsum, take)"


# ------------------------------------------------------------------------------------------------ key type

class KeyTy:
    """The dtype of typed threefry keys (``key<fry>``), standing in for JAX's extended dtype."""

    name = "key<fry>"
    itemsize = 8
    kind = "V"

    def __repr__(self):
        return "key<fry>"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyTy) or other == "key<fry>"

    def __hash__(self):
        return hash("key<fry>")


_KEY_DTYPE = KeyTy()

from .core import ShapedArray as _ShapedArray  # noqa: E402  (issue 19: jax.typeof of key arrays)


class KeyShapedArray(_ShapedArray):
    """The abstract value of a key array, as ``jax.typeof`` gives it: ``ShapedArray(key<fry>[3])`` (shape the
    batch shape, dtype ``key<fry>``). flax.nnx asks for it on every ``Rngs`` draw. Tracing works on the keys'
    uint32 data, so no jaxpr variable has this aval."""

    __slots__ = ()

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.dtype = _KEY_DTYPE
        self.weak_type = False
        self._hash = None

    def update(self, shape=None, dtype=None, weak_type=None):
        if dtype is not None and dtype != _KEY_DTYPE:
            raise TypeError(f"a key array's aval has dtype key<fry>, not {dtype}")
        return KeyShapedArray(self.shape if shape is None else shape)

    def str_short(self, short_dtypes=True):
        return f"key<fry>[{','.join(str(d) for d in self.shape)}]"

    def __eq__(self, other):
        return type(other) is KeyShapedArray and self.shape == other.shape

    def __hash__(self):
        return hash(("key<fry>", self.shape))


def key_dtype(impl=None):
    """The dtype of typed keys (only ``threefry2x32`` exists)."""
    _resolve_impl(impl)
    return _KEY_DTYPE


def _resolve_impl(impl):
    if impl is None or impl == "threefry2x32" or isinstance(impl, KeyTy):
        return "threefry2x32"
    if isinstance(impl, str):
        raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: "threefry2x32"?')
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


class PRNGKeyArray(ArrayType):   # (its base: isinstance(k, jax.Array) under the alias)
    """An array of typed PRNG keys: ``shape`` is the batch shape, the data (``key_data``) is uint32
    ``(*shape, 2)``. Mirrors JAX's key arrays (``dtype=key<fry>``)."""

    __slots__ = ("_base",)
    __array_priority__ = 100

    def __init__(self, base):
        self._base = base

    @property
    def shape(self):
        return tuple(get_aval(self._base).shape[:-1])

    @property
    def dtype(self):
        return _KEY_DTYPE

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if any(i is Ellipsis for i in idx):
            raise NotImplementedError("Ellipsis indexing of key arrays")
        return PRNGKeyArray(self._base[idx + (slice(None),)])

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return PRNGKeyArray(jnp.reshape(self._base, tuple(shape) + (2,)))

    def _cranax_typeof(self):
        """``jax.typeof(keys)`` (see core.typeof)."""
        return KeyShapedArray(self.shape)

    def block_until_ready(self):
        if hasattr(self._base, "block_until_ready"):
            self._base.block_until_ready()
        return self

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.all(jnp.equal(self._base, other._base), axis=-1)

    def __ne__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.any(jnp.not_equal(self._base, other._base), axis=-1)

    __hash__ = None

    def __repr__(self):
        if isinstance(self._base, Tracer):
            return f"Traced<{self.dtype}{list(self.shape)}>"
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{np.asarray(self._base)}"

    def __array__(self, *a, **k):
        raise TypeError("JAX arrays with extended dtypes (PRNG keys) cannot be converted to NumPy arrays; "
                        "use random.key_data(keys)")


KeyArray = PRNGKeyArray

# a leaf for users (as in JAX), a node of its uint32 data for cranax's transformations
register_internal_node(PRNGKeyArray, lambda k: ((k._base,), None), lambda _, c: PRNGKeyArray(c[0]))


def _invalid_key_data(msg):
    return TypeError(f"JAX encountered invalid PRNG key data: {msg}")


def _check_key_data(data):
    if not all(hasattr(data, a) for a in ("ndim", "shape", "dtype")):
        raise _invalid_key_data(f"expected key_data to have ndim, shape, and dtype attributes. Got {data}")
    if data.ndim < 1:
        raise _invalid_key_data(f"expected key_data.ndim >= 1; got ndim={data.ndim}")
    if tuple(data.shape[-1:]) != (2,):
        raise _invalid_key_data(f"expected key_data.shape to end with (2,); got shape={tuple(data.shape)} "
                                f"for impl=threefry2x32")
    if np.dtype(data.dtype) != U32:
        raise _invalid_key_data(f"expected key_data.dtype = uint32; got dtype={np.dtype(data.dtype).name}")


def _check_prng_key(name, key, allow_batched=False):
    """(uint32 key data, was_raw). Raises JAX's errors for a bad key."""
    if isinstance(key, PRNGKeyArray):
        data, wrapped = key._base, False
    elif isinstance(key, (Array, Tracer, np.ndarray)) or hasattr(key, "dtype") and hasattr(key, "shape"):
        _check_key_data(key)
        data, wrapped = key, True
        if isinstance(data, np.ndarray):
            data = jnp.asarray(data)
    elif isinstance(key, (list, tuple, dict, set)) or key is None:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    else:
        _check_key_data(key)   # raises with JAX's message
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    batch = tuple(get_aval(data).shape[:-1])
    if not allow_batched and batch:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape {batch} != (). "
                         f"Use jax.vmap for batching.")
    return data, wrapped


def _return_keys(wrapped, data):
    return data if wrapped else PRNGKeyArray(data)


def key_data(keys):
    """The uint32 ``(*shape, 2)`` data underlying keys. Mirrors ``jax.random.key_data``."""
    data, _ = _check_prng_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys from uint32 ``(*shape, 2)`` data. Mirrors ``jax.random.wrap_key_data``."""
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data")
    _resolve_impl(impl if dtype is None else dtype)
    if isinstance(key_bits_array, (list, tuple)) or isinstance(key_bits_array, np.ndarray):
        key_bits_array = jnp.asarray(key_bits_array)
    _check_key_data(key_bits_array)
    return PRNGKeyArray(key_bits_array)


def key_impl(keys):
    """The PRNG implementation's name (``'threefry2x32'``)."""
    _check_prng_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


def clone(key):
    """Returns ``key`` (keys are immutable values here). Mirrors ``jax.random.clone``."""
    return key


# ------------------------------------------------------------------------------------------------ seeding

def _x64():
    return bool(config.jax_enable_x64)


def _seed_host(seed, ctor):
    """uint32[2] (as numpy) for a concrete integer seed, with JAX's conversions."""
    a = np.asarray(seed)
    if a.dtype == np.bool_:
        a = a.astype(np.int32)
    if not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    v = int(a)
    wide = _x64() and (a.dtype.itemsize == 8 or isinstance(seed, int))
    if wide:
        if not -2 ** 63 <= v < 2 ** 64:
            raise OverflowError(f"Python int {v} too large to convert to int64")
        v64 = v % 2 ** 64
        return np.array([v64 >> 32, v64 & 0xFFFFFFFF], np.uint32)
    return np.array([0, v % 2 ** 32], np.uint32)


@jit
def _seed_traced(seed):
    av = get_aval(seed)
    if av.dtype == np.bool_:
        seed = lax.convert_element_type(seed, np.int32)
        av = get_aval(seed)
    if av.dtype.itemsize == 8:
        hi = lax.convert_element_type(lax.shift_right_logical(seed, _prng.const(32, av.dtype)), U32)
        lo = lax.convert_element_type(lax.bitwise_and(seed, _prng.const(0xFFFFFFFF, av.dtype)), U32)
    else:
        hi = lax.full((), np.uint32(0), U32)
        lo = seed if av.dtype == U32 else lax.bitcast_convert_type(seed, U32)
    return _prng.stack_last(hi, lo)


def _seed(seed, ctor):
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed) if not isinstance(seed, (Array, Tracer)) else get_aval(seed).ndim:
        raise TypeError(f"{ctor} accepts a scalar seed, but was given an array of shape {np.shape(seed)} != ()."
                        f" Use jax.vmap for batching")
    if isinstance(seed, Tracer):
        if not (dtypes.issubdtype(get_aval(seed).dtype, np.integer) or get_aval(seed).dtype == np.bool_):
            raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
        return _seed_traced(seed)
    return jnp.asarray(_seed_host(np.asarray(seed) if isinstance(seed, Array) and not isinstance(seed, Tracer) else seed, ctor))


def PRNGKey(seed, *, impl=None):
    """A legacy key: uint32 ``[2]`` data from an integer seed. Mirrors ``jax.random.PRNGKey``."""
    _resolve_impl(impl)
    return _seed(seed, "PRNGKey")


def key(seed, *, impl=None, dtype=None):
    """A typed key (shape ``()``, dtype ``key<fry>``) from an integer seed. Mirrors ``jax.random.key``."""
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    _resolve_impl(impl if dtype is None else dtype)
    return PRNGKeyArray(_seed(seed, "key"))


# ------------------------------------------------------------------------------------------- split, fold_in

def _canon_shape(shape, name="shape"):
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    try:
        shape = tuple(int(operator_index(d)) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") \
            from None
    if any(d < 0 for d in shape):
        raise TypeError(f"Shapes must be 1D sequences of integer scalars with nonnegative values, got {shape}.")
    return shape


def operator_index(d):
    if isinstance(d, Tracer):
        raise ConcretizationTypeError(d, "The shape of a random sample must be static (concrete integers).")
    return operator.index(d)


@jit(static_argnums=(1,), inline=True)
def _split_impl(key, shape):
    return _prng.split(key, shape)


@jit(inline=True)
def _fold_in_impl(key, data):
    return _prng.fold_in(key, data)


def split(key, num=2):
    """``num`` new keys (an int or a shape) from one. Mirrors ``jax.random.split``."""
    data, wrapped = _check_prng_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    shape = _canon_shape(shape)
    return _return_keys(wrapped, _split_impl(data, shape))


def _u32_scalar(data, name):
    if isinstance(data, (Array, Tracer)):
        av = get_aval(data)
        if av.ndim:
            raise TypeError(f"{name} accepts a scalar, but was given an array of shape {av.shape} != (). "
                            f"Use jax.vmap for batching.")
        if av.dtype == U32:
            return data
        if av.dtype == np.bool_ or dtypes.issubdtype(av.dtype, np.integer):
            if av.dtype.itemsize == 4:
                return lax.bitcast_convert_type(data, U32)
            return lax.convert_element_type(data, U32)
        return lax.convert_element_type(data, U32)
    if np.ndim(data):
        raise TypeError(f"{name} accepts a scalar, but was given an array ofshape {np.shape(data)} != (). "
                        f"Use jax.vmap for batching.")
    a = np.asarray(data)
    if np.issubdtype(a.dtype, np.floating):
        return np.uint32(a.astype(np.int64) % 2 ** 32)
    return np.uint32(int(a) % 2 ** 32)


def fold_in(key, data):
    """A new key from a key and a 32-bit integer. Mirrors ``jax.random.fold_in``."""
    kd, wrapped = _check_prng_key("fold_in", key)
    d = _u32_scalar(data, "fold_in")
    return _return_keys(wrapped, _fold_in_impl(kd, d))


# ---------------------------------------------------------------------------------------------- bits

@jit(static_argnums=(1,), inline=True)
def _bits_impl(key, shape):
    return _prng.random_bits32(key, shape)


def bits(key, shape=(), dtype=None):
    """Uniform random unsigned integers. Mirrors ``jax.random.bits`` (cranax has uint32 only)."""
    data, _ = _check_prng_key("bits", key)
    if dtype is None:
        dtype = U32
    else:
        dtypes.check_user_dtype_supported(dtype, "bits")
        dtype = dtypes.canonicalize_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    shape = _canon_shape(shape)
    return _bits_impl(data, shape)


# ---------------------------------------------------------------------------------------------- uniform

def _float_dtype(dtype, name, allow_complex=False):
    if dtype is None:
        dtype = float
    dtypes.check_user_dtype_supported(dtype, name)
    dt = dtypes.canonicalize_dtype(dtype)
    if not (dtypes.issubdtype(dt, np.floating) or allow_complex and dtypes.issubdtype(dt, np.complexfloating)):
        what = "a float or complex dtype" if allow_complex else "a float dtype"
        raise ValueError(f"dtype argument to `{name}` must be {what}, got {dt}")
    return dt


def _uniform_raw(key, minval, maxval, shape, dtype):
    """JAX's ``_uniform``: mantissa bits with exponent 0, minus one, scaled (with an FMA) and clamped."""
    dtype = np.dtype(dtype)
    minval = _prng.to_dtype(minval, dtype)
    maxval = _prng.to_dtype(maxval, dtype)
    if dtype == np.float32:
        b = _prng.random_bits32(key, shape)
        fb = lax.bitwise_or(lax.shift_right_logical(b, _prng.u32(32 - 23)), _prng.u32(0x3F800000))
        floats = lax.sub(lax.bitcast_convert_type(fb, dtype), _prng.const(1.0, dtype))
    elif dtype == np.float16:
        # JAX's 16-bit random bits (partitionable threefry) are the low half of the 32-bit ones
        u16 = np.dtype(np.uint16)
        b = lax.convert_element_type(_prng.random_bits32(key, shape), u16)
        fb = lax.bitwise_or(lax.shift_right_logical(b, _prng.const(16 - 10, u16)), _prng.const(0x3C00, u16))
        floats = lax.sub(lax.bitcast_convert_type(fb, dtype), _prng.const(1.0, dtype))
    elif dtype == dtypes.bfloat16:
        # JAX draws 8 random bits for a type with under 8 mantissa bits (the low byte of the 32-bit ones,
        # as float16 takes the low half), widened to 16: 7 of them under bfloat16's 1.0 (0x3F80)
        u16 = np.dtype(np.uint16)
        b = lax.convert_element_type(lax.convert_element_type(_prng.random_bits32(key, shape), np.dtype(np.uint8)), u16)
        fb = lax.bitwise_or(lax.shift_right_logical(b, _prng.const(8 - 7, u16)), _prng.const(0x3F80, u16))
        floats = lax.sub(lax.bitcast_convert_type(fb, dtype), _prng.const(1.0, dtype))
    elif dtype == np.float64:
        i64 = np.dtype(np.int64)
        b = _prng.random_bits64_as_int64(key, shape)
        fb = lax.bitwise_or(lax.shift_right_logical(b, _prng.const(64 - 52, i64)),
                            _prng.const(0x3FF0000000000000, i64))
        floats = lax.sub(lax.bitcast_convert_type(fb, dtype), _prng.const(1.0, dtype))
    else:
        raise TypeError(f"uniform only accepts 16-, 32- or 64-bit float dtypes, got {dtype}.")
    if isinstance(maxval, np.generic) and isinstance(minval, np.generic):
        with np.errstate(all="ignore"):
            span = np.subtract(maxval, minval)
    else:
        span = jnp.subtract(maxval, minval)
    if _pow2_scalar(span) or dtype == dtypes.bfloat16:   # JAX's CPU backend rounds a bfloat16 product
        # floats * span is exact, so the fused multiply-add XLA contracts this to rounds like mul + add: the
        # common spans (1 for uniform, 2 for normal) stay float32-only, which vectorizes
        out = lax.add(lax.mul(floats, span), minval)
    else:
        out = _prng.fma(floats, span, minval)
    out = jnp.maximum(minval, out)
    if get_aval(out).shape != tuple(shape):
        raise TypeError(f"uniform: minval/maxval shapes do not broadcast to the sample shape {shape}")
    return out


def _pow2_scalar(v):
    """Whether ``v`` is a concrete float scalar +-2**k whose product with a uniform's ``floats`` (multiples of
    2**-23 below 1) is exact: no rounding, no underflow."""
    if not isinstance(v, (np.floating, float)):
        return False
    m, e = np.frexp(float(v))
    return abs(m) == 0.5 and e > -100


@jit(static_argnums=(3, 4), inline=True)
def _uniform_impl(key, minval, maxval, shape, dtype):
    return _uniform_raw(key, minval, maxval, shape, dtype)


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        try:
            shape_ = np.broadcast_shapes(shape, *param_shapes)
        except ValueError:
            shape_ = None
        if shape != shape_:
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape argument, and "
                             f"the result of broadcasting the shapes must equal the shape argument, but got "
                             f"result {shape_} for shape argument {shape}.")


def _shape_of(x):
    return tuple(get_aval(x).shape) if isinstance(x, (Array, Tracer)) else np.shape(x)


def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    """Uniform floats in ``[minval, maxval)``. Mirrors ``jax.random.uniform``."""
    data, _ = _check_prng_key("uniform", key)
    dt = _float_dtype(dtype, "uniform")
    shape = _canon_shape(shape)
    for v in (minval, maxval):
        s = _shape_of(v)
        try:
            np.broadcast_shapes(shape, s)
        except ValueError:
            raise TypeError(f"mul got incompatible shapes for broadcasting: {shape}, {s}.") from None
    bounds = _const_bounds(minval, maxval, dt)
    if bounds is not None:
        return _uniform_const_impl(data, shape, dt, bounds)
    return _uniform_impl(data, minval, maxval, shape, dt)


def _const_bounds(minval, maxval, dt):
    """``(minval, maxval)`` as ``dt`` bit patterns when both are concrete scalars whose span is a power of two
    (the default [0, 1) above all), else None. Compiled in as constants, the scaling is a plain float32
    multiply-add (see ``_pow2_scalar``) and the sampler vectorizes."""
    if not all(isinstance(v, (int, float, np.generic)) or (isinstance(v, np.ndarray) and v.ndim == 0)
               for v in (minval, maxval)):
        return None
    lo = _prng.to_dtype(minval, dt)
    hi = _prng.to_dtype(maxval, dt)
    with np.errstate(all="ignore"):
        if not _pow2_scalar(np.subtract(hi, lo)):
            return None
    # bit patterns, not floats: -0.0 == 0.0 would share a cache entry
    return lo.tobytes(), hi.tobytes()


@jit(static_argnums=(1, 2, 3), inline=True)
def _uniform_const_impl(key, shape, dtype, bounds):
    lo, hi = (np.frombuffer(b, dtype)[0] for b in bounds)
    return _uniform_raw(key, lo, hi, shape, dtype)


# ---------------------------------------------------------------------------------------------- normal

def _erf_inv_raw(key, shape, dtype):
    """``erf_inv(u)``, u uniform in (-1, 1): the normal draws before their factor sqrt(2)."""
    lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
    u = _uniform_raw(key, lo, np.array(1., dtype), shape, dtype)
    # the erf_inv primitive: the CPU backend evaluates float32 erf_inv exactly as XLA:CPU does
    return lax.erf_inv(u)


def _normal_raw(key, shape, dtype):
    return lax.mul(_prng.const(np.sqrt(2), dtype), _erf_inv_raw(key, shape, dtype))


@jit(static_argnums=(1, 2), inline=True)
def _normal_impl(key, shape, dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        # JAX's complex normal: real and imaginary parts from the two halves of a split key, over sqrt(2)
        ks = _prng.split(key, (2,))
        real = np.dtype(np.array(0, dtype).real.dtype)
        re = _normal_raw(ks[0], shape, real).astype(dtype)
        im = _normal_raw(ks[1], shape, real).astype(dtype)
        # XLA rewrites the division by the constant sqrt(2) into a multiplication by its reciprocal
        inv_sqrt2 = np.array(np.array(1, real) / np.array(np.sqrt(2), real), dtype)
        return lax.mul(lax.add(re, lax.mul(im, np.array(1j, dtype))), inv_sqrt2)
    return _normal_raw(key, shape, dtype)


def normal(key, shape=(), dtype=None):
    """Standard normal samples (``sqrt(2) * erf_inv(u)``, u uniform in (-1, 1)). Mirrors
    ``jax.random.normal``."""
    data, _ = _check_prng_key("normal", key)
    dt = _float_dtype(dtype, "normal", allow_complex=True)
    shape = _canon_shape(shape)
    return _normal_impl(data, shape, dt)


@jit(static_argnums=(3, 4), inline=True)
def _truncated_normal_impl(key, lower, upper, shape, dtype):
    sqrt2 = np.array(np.sqrt(2), dtype)[()]
    lower = _prng.to_dtype(lower, dtype)
    upper = _prng.to_dtype(upper, dtype)
    # XLA rewrites the division by the constant sqrt(2) into a multiplication by its float reciprocal
    inv_sqrt2 = (np.array(1, dtype) / np.array(sqrt2, dtype))[()]
    a = _prng.erf(jnp.multiply(jnp.asarray(lower), inv_sqrt2))
    b = _prng.erf(jnp.multiply(jnp.asarray(upper), inv_sqrt2))
    u = _uniform_raw(key, a, b, shape, dtype)
    out = lax.mul(sqrt2, lax.erf_inv(u))
    lo = jnp.nextafter(lower, np.array(np.inf, dtype))
    hi = jnp.nextafter(upper, np.array(-np.inf, dtype))
    return jnp.clip(out, lo, hi)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Normal samples truncated to ``(lower, upper)``. Mirrors ``jax.random.truncated_normal``."""
    if shape is not None:
        shape = _canon_shape(shape)
    data, _ = _check_prng_key("truncated_normal", key)
    dt = _float_dtype(dtype, "truncated_normal")
    if shape is None:
        shape = tuple(np.broadcast_shapes(_shape_of(lower), _shape_of(upper)))
    else:
        _check_shape("truncated_normal", shape, _shape_of(lower), _shape_of(upper))
    return _truncated_normal_impl(data, lower, upper, shape, dt)


# ---------------------------------------------------------------------------------------------- randint

def _randint_bounds(minval, maxval, shape, dtype):
    """randint's bounds as ``dtype`` arrays of ``shape``: non-integer bounds truncated to int, then clipped
    (not wrapped) into ``dtype``'s range, as JAX does."""
    out = []
    for v in (minval, maxval):
        v = jnp.asarray(v)
        if not dtypes.issubdtype(v.dtype, np.integer):
            v = v.astype(int)
        out.append(jnp.broadcast_to(_convert_and_clip(v, dtype), shape))
    return out


@jit(static_argnums=(3, 4, 5), inline=True)
def _randint_impl(key, minval, maxval, shape, dtype, maxval_out_of_range):
    dtype = np.dtype(dtype)
    if dtype.itemsize == 8 and dtype.kind == "i":
        return _randint64_impl(key, minval, maxval, shape, dtype, maxval_out_of_range)
    if dtype.itemsize != 4:
        raise NotImplementedError(f"randint with dtype {dtype} needs 64-bit unsigned arithmetic (uint64), "
                                  f"which cranax does not support")
    minval, maxval = _randint_bounds(minval, maxval, shape, dtype)
    keys = _prng.split(key, (2,))
    higher = _prng.random_bits32(keys[0], shape)
    lower = _prng.random_bits32(keys[1], shape)
    diff = lax.sub(maxval, minval)
    span = diff if dtype == U32 else lax.bitcast_convert_type(diff, U32)
    one = lax.full(shape, np.uint32(1), U32)
    span = lax.select(lax.le(maxval, minval), one, span)
    if maxval_out_of_range:
        span = lax.select(lax.gt(maxval, minval), lax.add(span, _prng.u32(1)), span)
    mult = lax.rem(lax.full(shape, np.uint32(2 ** 16), U32), span)
    mult = lax.rem(lax.mul(mult, mult), span)
    off = lax.add(lax.mul(lax.rem(higher, span), mult), lax.rem(lower, span))
    off = lax.rem(off, span)
    off = off if dtype == U32 else lax.bitcast_convert_type(off, dtype)
    return lax.add(minval, off)


def _ult64(x, y):
    """Unsigned ``x < y`` of int64 bit patterns (flipping the sign bit maps unsigned order onto signed)."""
    m = _prng.const(-2 ** 63, np.dtype(np.int64))
    return lax.lt(lax.bitwise_xor(x, m), lax.bitwise_xor(y, m))


def _urem64(a, b):
    """Unsigned ``a % b`` of int64 bit patterns, as uint64 ``rem`` (``a % 0 == a``, as XLA's). A divisor of
    2**63 or more leaves ``a`` or ``a - b``; a smaller one divides ``a >> 1`` (non-negative, so the signed
    division is the unsigned one), doubles the quotient and corrects the remainder once."""
    i64 = np.dtype(np.int64)
    zero, one = _prng.const(0, i64), _prng.const(1, i64)
    big = lax.select(_ult64(a, b), a, lax.sub(a, b))
    safe = lax.select(lax.gt(b, zero), b, lax.full_like(b, 1))
    q = lax.shift_left(lax.div(lax.shift_right_logical(a, one), safe), one)
    r = lax.sub(a, lax.mul(q, safe))
    small = lax.select(_ult64(r, safe), r, lax.sub(r, safe))
    return lax.select(lax.lt(b, zero), big, lax.select(lax.eq(b, zero), a, small))


def _randint64_impl(key, minval, maxval, shape, dtype, maxval_out_of_range):
    """int64 ``randint`` (x64 mode) with JAX's algorithm and bits: JAX computes the offset in uint64, which
    cranax lacks; the same wrapping arithmetic runs on int64 bit patterns (add, sub and mul wrap alike) with
    the unsigned comparisons and remainders written out (``_urem64``)."""
    i64 = np.dtype(np.int64)
    minval, maxval = _randint_bounds(minval, maxval, shape, dtype)
    keys = _prng.split(key, (2,))
    higher = _prng.random_bits64_as_int64(keys[0], shape)
    lower = _prng.random_bits64_as_int64(keys[1], shape)
    span = lax.sub(maxval, minval)
    span = lax.select(lax.le(maxval, minval), lax.full(shape, 1, i64), span)
    if maxval_out_of_range:
        span = lax.select(lax.gt(maxval, minval), lax.add(span, _prng.const(1, i64)), span)
    mult = _urem64(lax.full(shape, 2 ** 32, i64), span)
    mult = _urem64(lax.mul(mult, mult), span)
    off = lax.add(lax.mul(_urem64(higher, span), mult), _urem64(lower, span))
    return lax.add(minval, _urem64(off, span))


def _convert_and_clip(v, dtype):
    """An integer array converted to ``dtype`` with values clipped to its range, not wrapped (JAX's
    ``_convert_and_clip_integer`` for randint bounds)."""
    src = get_aval(v).dtype
    if src == dtype:
        return v
    lo = max(int(np.iinfo(dtype).min), int(np.iinfo(src).min))
    hi = min(int(np.iinfo(dtype).max), int(np.iinfo(src).max))
    return lax.convert_element_type(jnp.clip(v, np.array(lo, src), np.array(hi, src)), dtype)


def _int_bound(v, dtype):
    """Clips a concrete bound into ``dtype``'s range on the host; returns (value, was_above_max)."""
    if isinstance(v, (Array, Tracer)) or (isinstance(v, np.ndarray) and v.ndim):
        return v, False
    a = np.asarray(v)
    if np.issubdtype(a.dtype, np.floating):
        return v, False
    info = np.iinfo(dtype)
    iv = int(a)
    default = np.iinfo(dtypes.canonicalize_dtype(int))
    if type(v) is int and not default.min <= iv <= default.max:
        # JAX makes an array of the default integer type from a Python int bound first, which overflows.
        raise OverflowError(f"Python int {iv} too large to convert to {np.dtype(default.dtype).name}")
    return int(min(max(iv, info.min), info.max)), iv > info.max


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in ``[minval, maxval)`` (2*32 random bits per value, reduced mod the span).
    Mirrors ``jax.random.randint``."""
    data, _ = _check_prng_key("randint", key)
    if dtype is None:
        dtype = int
    dtypes.check_user_dtype_supported(dtype, "randint")
    dt = dtypes.canonicalize_dtype(dtype)
    if not dtypes.issubdtype(dt, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dt}")
    shape = _canon_shape(shape)
    _check_shape("randint", shape, _shape_of(minval), _shape_of(maxval))
    info = np.iinfo(dt)
    if info.bits < 32:
        # As JAX: 8- and 16-bit values are sampled as int32 in the clipped range (less bias), then cast.
        i32 = np.dtype(np.int32)
        lo = jnp.clip(jnp.asarray(minval).astype(i32), int(info.min), int(info.max))
        hi = jnp.clip(jnp.asarray(maxval).astype(i32), int(info.min), int(info.max) + 1)
        return _randint_impl(data, lo, hi, shape, i32, False).astype(dt)
    minval, _ = _int_bound(minval, dt)
    maxval, above = _int_bound(maxval, dt)
    return _randint_impl(data, minval, maxval, shape, dt, above)


# ---------------------------------------------------------------------------------------------- others

@jit(static_argnums=(2,), inline=True)
def _bernoulli_impl(key, p, shape):
    dt = get_aval(p).dtype
    u = _uniform_raw(key, 0., 1., shape, dt)
    return jnp.less(u, p)


def bernoulli(key, p=np.float32(0.5), shape=None, mode="low"):
    """Booleans that are True with probability ``p``. Mirrors ``jax.random.bernoulli``."""
    if shape is not None:
        shape = _canon_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = _check_prng_key("bernoulli", key)
    p = p if isinstance(p, (Array, Tracer)) else jnp.asarray(p)
    dt = get_aval(p).dtype
    if not dtypes.issubdtype(dt, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dt}.")
    if shape is None:
        shape = tuple(get_aval(p).shape)
    else:
        _check_shape("bernoulli", shape, tuple(get_aval(p).shape))
    if mode == "high":
        return _bernoulli_high_impl(data, p, shape)
    return _bernoulli_impl(data, p, shape)


@jit(static_argnums=(2,), inline=True)
def _bernoulli_high_impl(key, p, shape):
    dt = get_aval(p).dtype
    u = _uniform_raw(key, 0., 1., (2,) + tuple(shape), dt)
    u1, u2 = u[0], u[1]
    u2 = jnp.multiply(u2, np.asarray(2.0 ** -np.finfo(dt).nmant, dt))
    return jnp.less(u2, jnp.subtract(p, u1))


def _gumbel_raw(key, shape, dtype, mode):
    info = np.finfo(dtype)
    if mode == "low":
        u = _uniform_raw(key, np.array(info.tiny, dtype), np.array(1., dtype), shape, dtype)
        return lax.neg(_prng.log(lax.neg(_prng.log(u))))
    if mode == "high":
        both = _uniform_raw(key, np.array(0., dtype), np.array(1., dtype), (2,) + tuple(shape), dtype)
        high, low = both[0], both[1]
        # JAX: high + 2**-nmant * low + tiny, evaluated left to right (the mul-add contracts to an FMA)
        x = _prng.fma(_prng.const(2.0 ** -info.nmant, dtype), low, high) if dtype == np.float32 else \
            jnp.add(high, jnp.multiply(np.asarray(2.0 ** -info.nmant, dtype), low))
        x = jnp.add(x, np.asarray(info.tiny, dtype))
        x = jnp.where(jnp.greater_equal(high, np.asarray(0.5, dtype)), high, x)
        return lax.neg(_prng.log(lax.neg(_prng.log1p(lax.neg(x)))))
    raise NotImplementedError(f"gumbel mode={mode!r} is not implemented in cranax (use 'low' or 'high')")


@jit(static_argnums=(1, 2, 3), inline=True)
def _gumbel_impl(key, shape, dtype, mode):
    return _gumbel_raw(key, shape, dtype, mode)


def _gumbel_mode(mode):
    if mode is None:
        mode = "high" if getattr(config, "jax_use_high_dynamic_range_gumbel", False) else "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return mode


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel samples ``-log(-log(u))``. Mirrors ``jax.random.gumbel``."""
    data, _ = _check_prng_key("gumbel", key)
    dt = _float_dtype(dtype, "gumbel")
    shape = _canon_shape(shape)
    return _gumbel_impl(data, shape, dt, _gumbel_mode(mode))


@jit(static_argnums=(1, 2), inline=True)
def _exponential_impl(key, shape, dtype):
    u = _uniform_raw(key, 0., 1., shape, dtype)
    return lax.neg(_prng.log1p(lax.neg(u)))


def exponential(key, shape=(), dtype=None):
    """Standard exponential samples ``-log1p(-u)``. Mirrors ``jax.random.exponential``."""
    data, _ = _check_prng_key("exponential", key)
    dt = _float_dtype(dtype, "exponential")
    return _exponential_impl(data, _canon_shape(shape), dt)


@jit(static_argnums=(1, 2), inline=True)
def _laplace_impl(key, shape, dtype):
    u = _uniform_raw(key, np.array(-1. + np.finfo(dtype).epsneg, dtype), np.array(1., dtype), shape, dtype)
    return lax.mul(lax.sign(u), _prng.log1p(lax.neg(lax.abs(u))))


def laplace(key, shape=(), dtype=None):
    """Standard Laplace samples. Mirrors ``jax.random.laplace``."""
    data, _ = _check_prng_key("laplace", key)
    dt = _float_dtype(dtype, "laplace")
    return _laplace_impl(data, _canon_shape(shape), dt)


@jit(static_argnums=(1, 2), inline=True)
def _logistic_impl(key, shape, dtype):
    x = _uniform_raw(key, np.array(np.finfo(dtype).tiny, dtype), np.array(1., dtype), shape, dtype)
    return lax.sub(_prng.log(x), _prng.log1p(lax.neg(x)))


def logistic(key, shape=(), dtype=None):
    """Standard logistic samples ``log(u) - log1p(-u)``. Mirrors ``jax.random.logistic``."""
    data, _ = _check_prng_key("logistic", key)
    dt = _float_dtype(dtype, "logistic")
    return _logistic_impl(data, _canon_shape(shape), dt)


# ------------------------------------------------------------------------------ sort-free rank helpers
# Without sort/gather primitives, orderings are computed by counting comparisons (O(n^2) work, fused) and
# values are moved with one-hot selects; the results equal a stable sort's and a gather's exactly. When the
# shape-ops issue lands lax.sort_key_val / jnp.take / jnp.cumsum, those are used instead.

_MAX_RANK_WORK = 1 << 27


def _uint_view(x):
    dt = get_aval(x).dtype
    if dt == np.bool_:
        return lax.convert_element_type(x, U32), dt
    if dt.itemsize == 4:
        return (x if dt == U32 else lax.bitcast_convert_type(x, U32)), dt
    i64 = np.dtype(np.int64)
    return (x if dt == i64 else lax.bitcast_convert_type(x, i64)), dt


def _from_uint_view(v, dt):
    if dt == np.bool_:
        return lax.ne(v, _prng.u32(0))
    if get_aval(v).dtype == dt:
        return v
    return lax.bitcast_convert_type(v, dt)


def _check_work(n, m, what):
    if n * m > _MAX_RANK_WORK:
        raise NotImplementedError(f"{what} of {n} x {m} elements needs a sort/gather primitive; it arrives "
                                  f"with {_SHAPE_OPS_ISSUE}")


def _stable_ranks_last(keys, descending=False):
    """For keys (..., n): each element's position in a stable sort along the last axis (int32)."""
    shape = get_aval(keys).shape
    n = shape[-1]
    b = shape[:-1]
    nd = len(shape)
    big = b + (n, n)            # [..., i, j]
    ki = lax.broadcast_in_dim(keys, big, tuple(range(nd - 1)) + (nd - 1,))
    kj = lax.broadcast_in_dim(keys, big, tuple(range(nd - 1)) + (nd,))
    before = lax.gt(kj, ki) if descending else lax.lt(kj, ki)
    ii = lax.broadcasted_iota(np.int32, big, nd - 1)
    jj = lax.broadcasted_iota(np.int32, big, nd)
    tie = lax.bitwise_and(lax.eq(kj, ki), lax.lt(jj, ii))
    cnt = lax.convert_element_type(lax.bitwise_or(before, tie), np.int32)
    return lax.reduce_sum(cnt, (nd,))


def _scatter_by_rank_last(x, ranks, k=None):
    """out[..., r] = x[..., i] where ranks[..., i] == r, for r < k (ranks a permutation)."""
    shape = get_aval(x).shape
    n = shape[-1]
    k = n if k is None else k
    b = shape[:-1]
    nd = len(shape)
    big = b + (k, n)            # [..., r, i]
    v, dt = _uint_view(x)
    vb = lax.broadcast_in_dim(v, big, tuple(range(nd - 1)) + (nd,))
    rb = lax.broadcast_in_dim(ranks, big, tuple(range(nd - 1)) + (nd,))
    rr = lax.broadcasted_iota(np.int32, big, nd - 1)
    zero = lax.full(big, np.zeros((), get_aval(v).dtype)[()], get_aval(v).dtype)
    picked = lax.select(lax.eq(rb, rr), vb, zero)
    return _from_uint_view(lax.reduce_or(picked, (nd,)), dt)


def _sort_key_val_last(keys, vals):
    sk = getattr(lax, "sort_key_val", None)
    if sk is not None:
        return sk(keys, vals, -1, is_stable=True)[1] if _takes_stable(sk) else sk(keys, vals, -1)[1]
    shape = get_aval(keys).shape
    _check_work(int(np.prod(shape, dtype=np.int64)), shape[-1] if shape else 1, "permutation")
    return _scatter_by_rank_last(vals, _stable_ranks_last(keys))


def _takes_stable(f):
    import inspect
    try:
        return "is_stable" in inspect.signature(f).parameters
    except (TypeError, ValueError):
        return False


def _take(x, ind, axis):
    """``jnp.take(x, ind, axis)`` for in-range indices."""
    tk = getattr(jnp, "take", None)
    if tk is not None:
        return tk(x, ind, axis)
    x = jnp.asarray(x)
    xs = get_aval(x).shape
    n = xs[axis]
    xm = jnp.moveaxis(x, axis, -1)                    # (..rest.., n)
    rest = get_aval(xm).shape[:-1]
    ishape = get_aval(ind).shape
    m = int(np.prod(ishape, dtype=np.int64))
    r = int(np.prod(rest, dtype=np.int64))
    _check_work(m * r, n, "take")
    xr = jnp.reshape(xm, (r, n))
    fi = jnp.reshape(ind, (m,)).astype(np.int32)
    v, dt = _uint_view(xr)
    big = (r, m, n)
    vb = lax.broadcast_in_dim(v, big, (0, 2))
    ib = lax.broadcast_in_dim(fi, big, (1,))
    nn = lax.broadcasted_iota(np.int32, big, 2)
    zero = lax.full(big, np.zeros((), get_aval(v).dtype)[()], get_aval(v).dtype)
    out = _from_uint_view(lax.reduce_or(lax.select(lax.eq(ib, nn), vb, zero), (2,)), dt)   # (r, m)
    out = jnp.reshape(out, tuple(rest) + tuple(ishape))
    # move the index dims to position `axis`
    nr = len(rest)
    ni = len(ishape)
    perm = list(range(axis)) + list(range(nr, nr + ni)) + list(range(axis, nr))
    return jnp.transpose(out, perm) if perm != list(range(nr + ni)) else out


def _cumsum_1d(p):
    cs = getattr(jnp, "cumsum", None)
    if cs is not None:
        return cs(p)
    n = get_aval(p).shape[0]
    _check_work(n, n, "cumsum")
    big = (n, n)                                      # [i, j]: sum over j <= i
    pb = lax.broadcast_in_dim(p, big, (1,))
    mask = lax.le(lax.broadcasted_iota(np.int32, big, 1), lax.broadcasted_iota(np.int32, big, 0))
    zero = lax.full(big, np.zeros((), get_aval(p).dtype)[()], get_aval(p).dtype)
    return lax.reduce_sum(lax.select(mask, pb, zero), (1,))


def _top_k_indices_last(x, k):
    tk = getattr(lax, "top_k", None)
    if tk is not None:
        return tk(x, k)[1]
    shape = get_aval(x).shape
    n = shape[-1]
    _check_work(int(np.prod(shape, dtype=np.int64)), n, "top_k")
    ranks = _stable_ranks_last(x, descending=True)
    idx = lax.broadcasted_iota(np.int32, shape, len(shape) - 1)
    return _scatter_by_rank_last(idx, ranks, k)


# ------------------------------------------------------------------------------ permutation, choice

def _shuffle_raw(key, x, axis):
    size = int(np.prod(get_aval(x).shape, dtype=np.int64))
    num_rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    nd = get_aval(x).ndim
    for _ in range(num_rounds):
        keys = _prng.split(key, (2,))
        key, subkey = keys[0], keys[1]
        sort_keys = _prng.random_bits32(subkey, get_aval(x).shape)
        if axis == nd - 1:
            x = _sort_key_val_last(sort_keys, x)
        else:
            x = jnp.moveaxis(_sort_key_val_last(jnp.moveaxis(sort_keys, axis, -1), jnp.moveaxis(x, axis, -1)),
                             -1, axis)
    return x


@jit(static_argnums=(2,), inline=True)
def _shuffle_impl(key, x, axis):
    return _shuffle_raw(key, x, axis)


@jit(static_argnums=(2, 3), inline=True)
def _permutation_impl(key, x, axis, independent):
    if independent or get_aval(x).ndim == 1:
        return _shuffle_raw(key, x, axis)
    n = get_aval(x).shape[axis]
    ind = _shuffle_raw(key, jnp.arange(n), 0)
    return _take(x, ind, axis)


def _canon_axis(axis, nd):
    axis = int(axis)
    if not -nd <= axis < nd:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd}")
    return axis % nd


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` or of ``x`` along ``axis``. Mirrors ``jax.random.permutation``
    (sort by random 32-bit keys, repeated ``ceil(3 ln n / ln(2**32-1))`` times)."""
    data, _ = _check_prng_key("permutation", key)
    nd = _ndim(x)
    axis = _canon_axis(axis, nd or 1)
    if not nd:
        dt = _dtype_of(x)
        if not (dt is None or dtypes.issubdtype(dt, np.integer)):
            raise TypeError("x must be an integer or at least 1-dimensional")
        if isinstance(x, Tracer):
            raise ConcretizationTypeError(x, "argument x of jax.random.permutation()")
        r = int(x)
        return _shuffle_impl(data, jnp.arange(r), 0)
    return _permutation_impl(data, jnp.asarray(x), axis, bool(independent))


def _ndim(x):
    return get_aval(x).ndim if isinstance(x, (Array, Tracer)) else np.ndim(x)


def _dtype_of(x):
    if isinstance(x, (Array, Tracer)):
        return get_aval(x).dtype
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, int):
        return np.dtype(np.int32)
    return np.asarray(x).dtype


@jit(static_argnums=(3, 4), inline=True)
def _choice_p_replace(key, p, arr, shape, scalar_a_axis):
    p_cuml = _cumsum_1d(p)
    n = get_aval(p).shape[0]
    u = _uniform_raw(key, 0., 1., shape, get_aval(p_cuml).dtype)
    r = jnp.multiply(p_cuml[n - 1], jnp.subtract(1, u))
    # searchsorted(p_cuml, r, side='left') == number of entries < r
    nd = len(shape)
    big = tuple(shape) + (n,)
    cb = lax.broadcast_in_dim(p_cuml, big, (nd,))
    rb = lax.broadcast_in_dim(r, big, tuple(range(nd)))
    ind = lax.reduce_sum(lax.convert_element_type(lax.lt(cb, rb), np.int32), (nd,))
    return _finish_choice(ind, arr, shape, scalar_a_axis)


def _finish_choice(ind, arr, shape, scalar_a_axis):
    if scalar_a_axis is None:
        return jnp.reshape(ind, shape)
    axis = scalar_a_axis
    res = _take(arr, ind, axis)
    ash = get_aval(arr).shape
    return jnp.reshape(res, ash[:axis] + tuple(shape) + ash[axis + 1:])


@jit(static_argnums=(3, 4, 5), inline=True)
def _choice_p_noreplace(key, p, arr, shape, scalar_a_axis, mode):
    n_draws = int(np.prod(shape, dtype=np.int64))
    dt = get_aval(p).dtype
    n = get_aval(p).shape[0]
    g = jnp.add(_gumbel_raw(key, (n,), dt, mode), _prng.log(p) if dt == np.float32 else jnp.log(p))
    ind = _top_k_indices_last(g, n_draws)
    return _finish_choice(ind, arr, shape, scalar_a_axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random samples from ``a`` (or ``arange(a)``), with or without replacement, optionally weighted by
    ``p``. Mirrors ``jax.random.choice``."""
    data, _ = _check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = _canon_shape(tuple(shape))
    arr = a if isinstance(a, (Array, Tracer)) else jnp.asarray(a)
    nd = get_aval(arr).ndim
    if nd == 0:
        if isinstance(a, Tracer):
            raise TypeError("The error occurred in jax.random.choice(): a must be concrete")
        n_inputs = int(a)
        arr_axis = None
    else:
        axis = _canon_axis(axis, nd)
        n_inputs = get_aval(arr).shape[axis]
        arr_axis = axis
    n_draws = int(np.prod(shape, dtype=np.int64))
    if n_draws == 0:
        return jnp.zeros(shape, dtype=get_aval(arr).dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) "
                         f"when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(data, shape, 0, n_inputs)
            res = ind if arr_axis is None else _take(arr, ind, arr_axis)
        else:
            perm = permutation(data, n_inputs if arr_axis is None else arr, 0 if arr_axis is None else arr_axis)
            sl = (slice(None),) * (0 if arr_axis is None else arr_axis) + (slice(n_draws),)
            res = perm[sl]
        ash = get_aval(arr).shape
        return jnp.reshape(res, shape if arr_axis is None else ash[:arr_axis] + tuple(shape) + ash[arr_axis + 1:])
    p_arr = p if isinstance(p, (Array, Tracer)) else jnp.asarray(p)
    if not dtypes.issubdtype(get_aval(p_arr).dtype, np.floating):
        p_arr = p_arr.astype(dtypes.canonicalize_dtype(float))
    if tuple(get_aval(p_arr).shape) != (n_inputs,):
        raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                         f"p has shape {tuple(get_aval(p_arr).shape)} and a.shape[axis] is {n_inputs}.")
    arr_arg = arr if arr_axis is not None else jnp.zeros((), np.int32)
    if replace:
        return _choice_p_replace(data, p_arr, arr_arg, shape, arr_axis)
    return _choice_p_noreplace(data, p_arr, arr_arg, shape, arr_axis, _gumbel_mode(mode))


# ------------------------------------------------------------------------------ categorical

@jit(static_argnums=(2, 3, 4, 5, 6), inline=True)
def _categorical_impl(key, logits, shape, batch_shape, axis, replace, mode):
    nd = get_aval(logits).ndim
    lshape = get_aval(logits).shape
    shape_prefix = shape[:len(shape) - len(batch_shape)]
    dt = get_aval(logits).dtype
    if replace:
        if axis >= 0:
            axis -= nd
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % nd, lshape[axis])
        g = _gumbel_raw(key, (*shape_prefix, *logits_shape), dt, mode)
        ex = logits
        if shape_prefix:
            ex = jnp.reshape(logits, (1,) * len(shape_prefix) + tuple(lshape))
        return jnp.argmax(jnp.add(g, ex), axis=axis)
    logits = jnp.add(logits, _gumbel_raw(key, lshape, dt, mode))
    k = int(np.prod(shape_prefix, dtype=np.int64))
    if k > lshape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of categories "
                         f"({lshape[axis]}).")
    ind = _top_k_indices_last(jnp.moveaxis(logits, axis, -1), k)     # batch_shape + (k,)
    nd_i = get_aval(ind).ndim
    ind = jnp.transpose(ind, (nd_i - 1,) + tuple(range(nd_i - 1)))
    return jnp.reshape(ind, shape)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Samples from categorical distributions given by ``logits`` (Gumbel-max / top-k). Mirrors
    ``jax.random.categorical``."""
    data, _ = _check_prng_key("categorical", key)
    logits = logits if isinstance(logits, (Array, Tracer)) else jnp.asarray(logits)
    lshape = tuple(get_aval(logits).shape)
    axis = int(axis)
    batch_shape = tuple(np.delete(np.array(lshape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = _canon_shape(shape)
        _check_shape("categorical", shape, batch_shape)
    if not dtypes.issubdtype(get_aval(logits).dtype, np.floating):
        logits = logits.astype(dtypes.canonicalize_dtype(float))
    return _categorical_impl(data, logits, tuple(shape), batch_shape, axis, bool(replace), _gumbel_mode(mode))


# ------------------------------------------------------------------------------ gamma and its family
# JAX's samplers, step for step on the same random bits, so the values match bit for bit wherever the float
# operations round as XLA:CPU's do (the log, log1p and fused multiply-adds of ``_prng``).

_BF16 = np.dtype(dtypes.bfloat16)


def _f32(dtype):
    return np.dtype(dtype) == np.float32


def _fma_or_madd(a, b, c, dtype):
    """``a * b + c`` rounded as XLA:CPU does: contracted into an FMA for float32 and float64 (emulated in
    ``_prng.fma``), two roundings otherwise."""
    if _f32(dtype) or np.dtype(dtype) == np.float64:
        return _prng.fma(a, b, c)
    return lax.add(lax.mul(a, b), c)


def _gamma_one(key, alpha, log_space):
    """One Marsaglia-Tsang draw for the scalar ``alpha`` with its own uint32[2] ``key`` (vmapped over the
    elements): alpha < 1 is boosted to alpha + 1 and corrected by u**(1/alpha) (in log space: + log(u)/alpha,
    from an exponential draw)."""
    dt = get_aval(alpha).dtype
    c_ = lambda v: _prng.const(v, dt)  # noqa: E731
    zero, one = c_(0), c_(1)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, c_(1. / 3.))
    # XLA rewrites (1/3) / sqrt(d) as (1/3) * rsqrt(d); lax.rsqrt is XLA's float32 rsqrt (hardware estimate
    # plus one Newton step, rust/backend/cpu/math.rs), so c has JAX's bits
    c = lax.mul(c_(1. / 3.), lax.rsqrt(d))
    if dt == _BF16:
        # bfloat16 keeps the division: (1/3) / sqrt(d), each op rounded (JAX 0.10.2's c for d = 1.1640625 is
        # 0.310546875, the rsqrt form's 0.30859375)
        c = lax.div(c_(1. / 3.), lax.sqrt(d))

    def cond(state):
        _, X, V, U = state
        squeeze = _fma_or_madd(lax.neg(lax.mul(X, X)), c_(0.0331), one, dt)
        first = lax.ge(U, squeeze)
        second = lax.ge(_prng.log(U), lax.add(lax.mul(X, c_(0.5)),
                                              lax.mul(d, lax.add(lax.sub(one, V), _prng.log(V)))))
        return lax.bitwise_and(first, second)

    def next_xv(state):
        k, _, _ = state
        ks = _prng.split(k, (2,))
        x = _normal_raw(ks[1], (), dt)
        return ks[0], x, _fma_or_madd(x, c, one, dt)

    def body(state):
        ks = _prng.split(state[0], (3,))
        _, x, v = lax.while_loop(lambda s: lax.le(s[2], zero), next_xv, (ks[1], zero, c_(-1)))
        X = lax.mul(x, x)
        V = lax.mul(lax.mul(v, v), v)
        U = _uniform_raw(ks[2], 0., 1., (), dt)
        return ks[0], X, V, U

    ks = _prng.split(key, (2,))
    _, _, V, _ = lax.while_loop(cond, body, (ks[0], zero, one, c_(2)))
    if log_space not in (False, "parts"):
        # minus an exponential draw: log(1 - u)
        log_samples = _prng.log1p(lax.neg(_uniform_raw(ks[1], 0., 1., (), dt)))
        skip = lax.bitwise_or(boost_mask, lax.eq(log_samples, zero))
        log_boost = lax.select(skip, zero, lax.mul(log_samples, lax.div(one, alpha_orig)))
        if log_space == "log_parts":
            # the pieces a half-float dirichlet's tail starts from (``_dirichlet_bf16_*``)
            return d, V, log_boost
        if log_space == "ynn":
            # the two logs join dirichlet's softmax fusion, YNNPACK's where that spans >= 4096 elements
            # (decided on the final, batched shape: ``_prng.ynn_choice``)
            return _prng.ynn_choice("log_add", d, V, log_boost)
        return lax.add(lax.add(_prng.log(d), _prng.log(V)), log_boost)
    samples = lax.sub(one, _uniform_raw(ks[1], 0., 1., (), dt))
    boost = lax.select(boost_mask, one, _pow_libm(samples, lax.div(one, alpha_orig)))
    if log_space == "parts":
        # the pieces a half-float ball's tail starts from (``_ball_bf16_*``)
        return d, V, boost
    return lax.mul(lax.mul(d, V), boost)


def _gamma_samples(key, a, log_space):
    """Gamma draws for every element of ``a`` (any shape): one split key per element, as JAX's
    ``random_gamma`` primitive."""
    shape = tuple(get_aval(a).shape)
    n = int(np.prod(shape, dtype=np.int64))
    keys = _prng.split(key, (n,))
    flat = lax.reshape(a, (n,))
    out = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, flat)
    if isinstance(out, (tuple, list)):
        return tuple(lax.reshape(o, shape) for o in out)
    return lax.reshape(out, shape)


def _random_gamma_grad(a, sample):
    """d sample / d a at fixed quantile: ``lax.random_gamma_grad`` (the igamma family's implicit gradient),
    once the special-functions work provides it."""
    fn = getattr(lax, "random_gamma_grad", None)
    if fn is None:
        raise NotImplementedError("grad of random.gamma/loggamma/beta/dirichlet needs lax.random_gamma_grad "
                                  "(the igamma family, issue 22's special functions), which cranax lacks yet")
    return fn(a, sample)


def _make_gamma(log_space):
    @custom_jvp
    def g(key, a):
        return _gamma_samples(key, a, log_space)

    @g.defjvp
    def g_jvp(primals, tangents):
        key, a = primals
        ans = g(key, a)
        return ans, _gamma_tangent(a, ans, tangents[1], log_space)
    return g


def _make_implicit(log_space):
    """``sample`` itself, carrying gamma's implicit gradient in ``a`` (``_gamma_tangent``) in any trace
    around it, to every order (its rule calls it again): for tails that rebuild a draw from gamma's pieces."""
    @custom_jvp
    def implicit(a, sample):
        return sample

    @implicit.defjvp
    def implicit_jvp(primals, tangents):
        a, sample = primals
        ans = implicit(a, sample)
        return ans, _gamma_tangent(a, ans, tangents[0], log_space)
    return implicit


def _gamma_tangent(a, ans, t_a, log_space):
    """The tangent of gamma draws ``ans`` (their logs for ``log_space``) for ``t_a`` on ``a``: JAX's implicit
    gradient, ``random_gamma_grad(a, x)`` (divided by x in log space)."""
    if log_space:
        # d log(x) = dx / x; exp(log x) may underflow to 0: use the smallest normal instead, as JAX
        x = lax.exp(ans)
        x = lax.select(lax.eq(x, _prng.const(0, get_aval(x).dtype)),
                       lax.full_like(x, np.finfo(get_aval(x).dtype).tiny), x)
        grad = lax.div(_random_gamma_grad(a, x), x)
    else:
        grad = _random_gamma_grad(a, ans)
    return lax.mul(t_a, grad)


_implicit_gamma = _make_implicit(False)
_implicit_loggamma = _make_implicit(True)
_gamma_cjvp = _make_gamma(False)
_loggamma_cjvp = _make_gamma(True)
_loggamma_ynn_cjvp = _make_gamma("ynn")


def _gamma_raw(key, a, shape, dtype, log_space):
    a = _prng.to_dtype(jnp.asarray(a) if not isinstance(a, (Array, Tracer)) else a, dtype)
    if tuple(get_aval(a).shape) != tuple(shape):
        a = jnp.broadcast_to(a, shape)
    fn = _loggamma_ynn_cjvp if log_space == "ynn" else _loggamma_cjvp if log_space else _gamma_cjvp
    return fn(key, a)


def _gamma_parts(key, a, shape, dtype, log_space):
    """``a`` in ``dtype`` broadcast to ``shape``, then the gamma draws' pieces (d, V and the boost, or
    log_boost for ``log_space="log_parts"``), each of ``shape``, for a tail that combines them itself
    (``_prng.ynn_chain``). The pieces carry no tangent: the chain's tangent rule takes gamma's implicit
    gradient from ``a``, as gamma's own jvp does."""
    a = _prng.to_dtype(jnp.asarray(a) if not isinstance(a, (Array, Tracer)) else a, dtype)
    if tuple(get_aval(a).shape) != tuple(shape):
        a = jnp.broadcast_to(a, shape)
    return (a,) + tuple(_gamma_samples(key, lax.stop_gradient(a), log_space))


@jit(static_argnums=(2, 3, 4), inline=True)
def _gamma_impl(key, a, shape, dtype, log_space):
    return _gamma_raw(key, a, shape, dtype, log_space)


def _param_shape(shape, name, *params):
    if shape is None:
        return tuple(np.broadcast_shapes(*[_shape_of(p) for p in params]))
    shape = _canon_shape(shape)
    _check_shape(name, shape, *[_shape_of(p) for p in params])
    return shape


def _gamma_dtype(dtype):
    dt = dtypes.canonicalize_dtype(float if dtype is None else dtype)
    dtypes.check_user_dtype_supported(dt, "gamma")
    if not dtypes.issubdtype(dt, np.floating):
        raise ValueError(f"dtype argument to `gamma` must be a float dtype, got {dt}")
    return dt


def gamma(key, a, shape=None, dtype=None):
    """Standard gamma samples (density ``x**(a-1) e**-x / Gamma(a)``) of ``shape`` (default ``a``'s shape)
    and float ``dtype``, by Marsaglia and Tsang's rejection method. Differentiable in ``a`` (the implicit
    gradient ``lax.random_gamma_grad``). Mirrors ``jax.random.gamma``."""
    data, _ = _check_prng_key("gamma", key)
    dt = _gamma_dtype(dtype)
    return _gamma_impl(data, a, _param_shape(shape, "gamma", a), dt, False)


def loggamma(key, a, shape=None, dtype=None):
    """``log`` of gamma samples, computed in log space (accurate for small ``a``). Mirrors
    ``jax.random.loggamma``."""
    data, _ = _check_prng_key("loggamma", key)
    dt = _gamma_dtype(dtype)
    return _gamma_impl(data, a, _param_shape(shape, "gamma", a), dt, True)


@jit(static_argnums=(3, 4), inline=True)
def _beta_impl(key, a, b, shape, dtype):
    ks = _prng.split(key, (2,))
    la = _gamma_raw(ks[0], a, shape, dtype, True)
    lb = _gamma_raw(ks[1], b, shape, dtype, True)
    # a / (a + b) from the logs without overflow
    m = lax.max(la, lb)
    ga = lax.exp(lax.sub(la, m))
    gb = lax.exp(lax.sub(lb, m))
    return lax.div(ga, lax.add(ga, gb))


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) samples from two log-gamma draws. Mirrors ``jax.random.beta``."""
    data, _ = _check_prng_key("beta", key)
    dt = _float_dtype(dtype, "beta")
    return _beta_impl(data, a, b, _param_shape(shape, "beta", a, b), dt)


def _dirichlet_bf16_per_op(alpha, d, v, log_boost):
    """bfloat16 dirichlet's tail below 4096 rows (XLA's float normalization, JAX 0.10.2): log(d) + log(V) +
    log_boost and x - max(x) rounded per op, exp in float32 from the rounded x - max (YNNPACK's where the
    draws span >= 4096 elements), summed unrounded in float32, the sum rounded, its reciprocal kept in float32
    and the division a multiplication by it."""
    f32 = np.dtype(np.float32)
    lg = lax.add(lax.add(_prng.log(d), _prng.log(v)), log_boost)
    x = lax.sub(lg, jnp.max(lg, axis=-1, keepdims=True))
    ef = lax.convert_element_type(x, f32)
    big = _prng.ynn_sized(get_aval(ef).shape)
    ef = _prng.ynn_exp(ef) if big else lax.exp(ef)
    s = _prng.ynn_sum_last(ef) if big else _prng.xla_sum_last(ef)
    s = lax.convert_element_type(lax.convert_element_type(s, _BF16), f32)
    recip = lax.div(_prng.const(1, f32), s)
    e16 = lax.convert_element_type(lax.convert_element_type(ef, _BF16), f32)
    return lax.convert_element_type(lax.mul(e16, recip[..., None]), _BF16)


def _dirichlet_bf16_fused(alpha, d, v, log_boost):
    """bfloat16 dirichlet's tail from 4096 rows: one YNNPACK fusion, float32 from the gamma loop's d, V and
    log_boost (YNNPACK's logs) to the log-gamma, rounded there, then float32 to the end (YNNPACK's exp and row
    sum), rounded once."""
    f32 = np.dtype(np.float32)
    c = lambda a: lax.convert_element_type(a, f32)  # noqa: E731
    lg = lax.add(lax.add(_prng.ynn_log(c(d)), _prng.ynn_log(c(v))), c(log_boost))
    # the log-gamma is a bfloat16 array of the fusion (the row max reads it as such): rounded there, once
    lg = c(lax.convert_element_type(lg, _BF16))
    x = lax.sub(lg, jnp.max(lg, axis=-1, keepdims=True))
    ef = _prng.ynn_exp(x)
    recip = lax.div(_prng.const(1, f32), _prng.ynn_sum_last(ef))
    return lax.convert_element_type(lax.mul(ef, recip[..., None]), _BF16)


def _softmax_last(x):
    """JAX's ``random._softmax`` over the last axis (the max held constant), in its standard ops: the form
    the half-float chain's tangent is taken from."""
    u = jnp.exp(jnp.subtract(x, lax.stop_gradient(jnp.max(x, axis=-1, keepdims=True))))
    return jnp.divide(u, jnp.sum(u, axis=-1, keepdims=True))


def _dirichlet_bf16_tangent(primals, tangents):
    """The tangent of bfloat16 dirichlet's chain, as JAX differentiates ``softmax(loggamma(alpha))``: the
    log-gamma draw's implicit gradient, then the softmax's jvp (only ``alpha`` carries a tangent)."""
    alpha, d, v, log_boost = primals
    lg = lax.add(lax.add(_prng.log(d), _prng.log(v)), log_boost)
    _, (t,) = ad.jvp_flat(lambda a: [_softmax_last(_implicit_loggamma(a, lg))], [alpha],
                          [ad.instantiate_zeros(tangents[0])])
    return t


_prng.YNN_CHAINS["dirichlet_bf16"] = (_dirichlet_bf16_fused, _dirichlet_bf16_per_op, _dirichlet_bf16_tangent)


@jit(static_argnums=(2, 3), inline=True)
def _dirichlet_impl(key, alpha, shape, dtype):
    full = shape + tuple(get_aval(alpha).shape[-1:])
    # (a softmax over one element has no reduce left for XLA to hand to YNNPACK)
    fused = np.dtype(dtype) in (np.float32, np.float64) and full[-1] > 1
    if np.dtype(dtype) == _BF16 and full[-1] > 1:
        # the log-gamma's last logs and the softmax: one chain (``_dirichlet_bf16_per_op``/``_fused``)
        return _prng.ynn_chain("dirichlet_bf16", *_gamma_parts(key, alpha, full, dtype, "log_parts"))
    lg = _gamma_raw(key, alpha, full, dtype, "ynn" if fused else True)
    # softmax as XLA:CPU evaluates jax.nn.softmax: the division by the sum becomes a multiplication by its
    # reciprocal; for float32/float64 draws the tail (the log-gamma's last logs, max, exp, sum) is one
    # reduce fusion, run in YNNPACK (its exp, logs and summation order) where it spans >= 4096 elements
    # of the final shape, vmapped batches included (``_prng.ynn_choice`` decides once that shape is known)
    x = jnp.subtract(lg, lax.stop_gradient(jnp.max(lg, axis=-1, keepdims=True)))
    if not fused:
        e = jnp.exp(x)
        if np.dtype(dtype) not in (np.float32, np.float64):
            # (half floats: jnp.sum accumulates in float32, as JAX's)
            return jnp.multiply(e, jnp.reciprocal(jnp.sum(e, axis=-1, keepdims=True)))
        return jnp.multiply(e, jnp.reciprocal(_prng.xla_sum_last(e))[..., None])
    e = _prng.ynn_choice("exp", x)
    return jnp.multiply(e, jnp.reciprocal(_prng.ynn_choice("sum_last", e))[..., None])


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet samples (softmax of log-gamma draws) of shape ``shape + alpha.shape[-1:]``. Mirrors
    ``jax.random.dirichlet``."""
    data, _ = _check_prng_key("dirichlet", key)
    dt = _float_dtype(dtype, "dirichlet")
    ashape = _shape_of(alpha)
    if len(ashape) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(ashape)}")
    if shape is None:
        shape = tuple(ashape[:-1])
    else:
        shape = _canon_shape(shape)
        _check_shape("dirichlet", shape, tuple(ashape[:-1]))
    alpha = _prng.to_dtype(jnp.asarray(alpha), dt)
    return _dirichlet_impl(data, alpha, shape, dt)


# ------------------------------------------------------------------------------ counts: poisson, binomial

def _int_dtype(dtype, name):
    dt = dtypes.canonicalize_dtype(int if dtype is None else dtype)
    dtypes.check_user_dtype_supported(dt, name)
    return dt


def _isnan(x):
    return lax.ne(x, x)


def _full(shape, v, dtype):
    return lax.full(tuple(shape), np.asarray(v).astype(dtype)[()], np.dtype(dtype))


def _poisson_knuth(key, lam, shape, dtype, max_iters):
    """Knuth's method on the whole array at once: multiply uniforms until the product drops below e**-lam
    (in logs), one fresh split key per round. ``lam`` has its own shape (broadcast to ``shape`` inside the
    loop, so a scalar rate is a constant of the loop's kernels rather than an array read every round).

    JAX's body counts the rounds that *start* alive (``k += log_prod > -lam``, then multiplies). Here the
    count runs one round ahead (``k`` starts at ``0 > -lam`` and each round adds ``new log_prod > -lam``),
    so that the count reads the product the same kernel has just computed instead of a second pass over
    the carry; the one extra term, the final product's, is taken off after the loop. Same integers (the
    extra term is 0 unless the loop stopped at ``max_iters``; wrapping arithmetic makes even that exact)."""
    neg_lam = lambda: jnp.broadcast_to(lax.neg(lam), shape)  # noqa: E731
    one = _prng.const(1, dtype)

    def alive(log_prod):
        return lax.gt(log_prod, neg_lam())

    def body(c):
        i, k, rng, log_prod = c
        ks = _prng.split(rng, (2,))
        u = _uniform_raw(ks[1], 0., 1., shape, np.dtype(np.float32))
        log_prod = lax.add(log_prod, _prng.log(u))
        return lax.add(i, _prng.const(1, np.int32)), lax.select(alive(log_prod), lax.add(k, one), k), ks[0], log_prod

    def cond(c):
        i, _, _, log_prod = c
        return lax.bitwise_and(jnp.any(alive(log_prod)), lax.lt(i, _prng.const(max_iters, np.int32)))

    zero = _full(shape, 0, np.float32)
    init = (_prng.const(0, np.int32), lax.select(alive(zero), _full(shape, 1, dtype), _full(shape, 0, dtype)), key,
            zero)
    _, k, _, log_prod = lax.while_loop(cond, body, init)
    k = lax.select(alive(log_prod), lax.sub(k, one), k)
    return lax.sub(k, one)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    """Hormann's transformed rejection (PTRS) for lam >= 10, on the whole array. The rate's constants are
    computed on ``lam``'s own shape (exact float32 operations: folded when ``lam`` is a literal) and broadcast
    inside the loop; ``log(lam)`` is computed on the broadcast array, as JAX's runtime log does."""
    f = lambda v: _prng.const(v, np.float32)  # noqa: E731
    bc = lambda x: jnp.broadcast_to(x, shape)  # noqa: E731
    log_lam = _prng.log(bc(lam))
    b = lax.add(f(0.931), lax.mul(f(2.53), lax.sqrt(lam)))
    a = lax.add(f(-0.059), lax.mul(f(0.02483), b))
    inv_alpha = lax.add(f(1.1239), lax.div(f(1.1328), lax.sub(b, f(3.4))))
    v_r = lax.sub(f(0.9277), lax.div(f(3.6224), lax.sub(b, f(2))))

    def body(c):
        i, k_out, accepted, rng = c
        ks = _prng.split(rng, (3,))
        u = lax.sub(_uniform_raw(ks[1], 0., 1., shape, np.dtype(np.float32)), f(0.5))
        v = _uniform_raw(ks[2], 0., 1., shape, np.dtype(np.float32))
        us = lax.sub(f(0.5), lax.abs(u))
        a_, b_, lam_ = bc(a), bc(b), bc(lam)
        # XLA's kernel contracts ``(...) * u + lam`` and ``-lam + k * log_lam`` into fused multiply-adds,
        # and its lgamma is its own float32 sequence: both move the accept test's last bits.
        k = lax.floor(lax.add(_prng.fma(lax.add(lax.div(lax.mul(f(2), a_), us), b_), u, lam_), f(0.43)))
        s = _prng.log(lax.div(lax.mul(v, bc(inv_alpha)), lax.add(lax.div(a_, lax.mul(us, us)), b_)))
        t = lax.sub(_prng.fma(k, log_lam, lax.neg(lam_)), _prng.lgamma(lax.add(k, f(1)), integer_from_one=True))
        accept1 = lax.bitwise_and(lax.ge(us, f(0.07)), lax.le(v, bc(v_r)))
        reject = lax.bitwise_or(lax.lt(k, f(0)), lax.bitwise_and(lax.lt(us, f(0.013)), lax.gt(v, us)))
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(s, t)))
        return (lax.add(i, _prng.const(1, np.int32)), lax.select(accept, k, k_out),
                lax.bitwise_or(accepted, accept), ks[0])

    def cond(c):
        i, _, accepted, _ = c
        return lax.bitwise_and(jnp.any(lax.bitwise_not(accepted)), lax.lt(i, _prng.const(max_iters, np.int32)))

    init = (_prng.const(0, np.int32), _full(shape, -1, np.float32), _full(shape, False, np.bool_), key)
    k = lax.while_loop(cond, body, init)[1]
    return lax.convert_element_type(k, dtype)


@jit(static_argnums=(2, 3), inline=True)
def _poisson_impl(key, lam, shape, dtype):
    # ``lam`` keeps its own shape (broadcastable to ``shape``): the choice of method and the rates' constants
    # are computed once per rate, not per sample.
    lshape = tuple(lam.shape)
    use_knuth = lax.bitwise_or(_isnan(lam), lax.lt(lam, _prng.const(10, np.float32)))
    lam_knuth = lax.select(use_knuth, lam, _full(lshape, 0., np.float32))
    lam_rej = lax.select(use_knuth, _full(lshape, 1e5, np.float32), lam)
    max_iters = min(int(np.iinfo(dtype).max), 2 ** 31 - 1)
    # JAX runs both loops over every element and selects. Each loop runs here only when some element takes
    # its branch (else a filler that the select drops): the same bits, and a constant lam (the common case)
    # pays for one loop. Two separate conds, not one switch, so that under vmap (where a cond becomes a
    # select of its branches) neither loop runs twice.
    filler = _full(shape, 0, dtype)
    knuth = lax.cond(jnp.any(use_knuth), lambda: _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                     lambda: filler)
    rejection = lax.cond(jnp.any(lax.bitwise_not(use_knuth)),
                         lambda: _poisson_rejection(key, lam_rej, shape, dtype, max_iters), lambda: filler)
    out = lax.select(jnp.broadcast_to(use_knuth, shape), knuth, rejection)
    zero = jnp.broadcast_to(lax.eq(lam, _prng.const(0, np.float32)), shape)
    return lax.select(zero, _full(shape, 0, dtype), out)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson samples of rate ``lam`` (integer ``dtype``, default int32): Knuth's method below 10,
    transformed rejection above. Mirrors ``jax.random.poisson``."""
    data, _ = _check_prng_key("poisson", key)
    dt = _int_dtype(dtype, "poisson")
    shape = tuple(_shape_of(lam)) if shape is None else _canon_shape(shape)
    lam = jnp.asarray(lam)
    try:
        fits = np.broadcast_shapes(tuple(lam.shape), shape) == shape
    except ValueError:
        fits = False
    if not fits:
        jnp.broadcast_to(lam, shape)  # raises JAX's error for a rate that does not broadcast to ``shape``
    return _poisson_impl(data, _prng.to_dtype(lam, np.float32), shape, dt)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    """log(k!) minus its Stirling approximation: tabulated for k <= 9, the series above."""
    dt = get_aval(k).dtype
    c = lambda v: _prng.const(v, dt)  # noqa: E731
    table = jnp.asarray(np.asarray(_STIRLING_TAIL, dt))
    small = lax.le(k, c(9))
    kc = lax.clamp(c(0), k, c(9))
    kp1 = lax.add(kc, c(1))
    kp1sq = lax.mul(kp1, kp1)
    approx = lax.div(lax.sub(c(1. / 12), lax.div(lax.sub(c(1. / 360), lax.div(c(1. / 1260), kp1sq)), kp1sq)), kp1)
    idx = lax.convert_element_type(lax.floor(kc), np.int32)
    return lax.select(small, jnp.take(table, idx), approx)


def _binomial_inversion(key, count, prob, shape, dtype):
    dt = get_aval(prob).dtype
    log1mp = _prng.log1p(lax.neg(prob))

    def body(c):
        i, num_geom, geom_sum, rng = c
        ks = _prng.split(rng, (2,))
        num_geom = lax.select(lax.le(geom_sum, count), lax.add(num_geom, _prng.const(1, dt)), num_geom)
        u = _uniform_raw(ks[0], 0., 1., shape, dt)
        geom = lax.ceil(lax.div(_prng.log(u), log1mp))
        return lax.add(i, _prng.const(1, np.int32)), num_geom, lax.add(geom_sum, geom), ks[1]

    def cond(c):
        return jnp.any(lax.le(c[2], count))

    init = (_prng.const(0, np.int32), _full(shape, 0, dt), _full(shape, 0, dt), key)
    k = lax.while_loop(cond, body, init)[1]
    return lax.convert_element_type(lax.sub(k, _prng.const(1, dt)), dtype)


def _btrs(key, count, prob, shape, dtype):
    """Hormann's BTRS transformed rejection for count * prob > 10."""
    dt = get_aval(prob).dtype
    c_ = lambda v: _prng.const(v, dt)  # noqa: E731
    log = _prng.log
    stddev = lax.sqrt(lax.mul(lax.mul(count, prob), lax.sub(c_(1), prob)))
    # XLA:CPU contracts each ``x * y + z`` below into a fused multiply-add (float32); its rounding moves
    # the accept test's last bits (about one draw in 1e6 flipped without them)
    fma = lambda x, y, z: _fma_or_madd(x, y, z, dt)  # noqa: E731
    b = fma(c_(2.53), stddev, c_(1.15))
    a = fma(c_(0.01), prob, fma(c_(0.0248), b, c_(-0.0873)))
    c = fma(count, prob, c_(0.5))
    v_r = lax.sub(c_(0.92), lax.div(c_(4.2), b))
    r = lax.div(prob, lax.sub(c_(1), prob))
    alpha = lax.mul(lax.add(c_(2.83), lax.div(c_(5.1), b)), stddev)
    m = lax.floor(lax.mul(lax.add(count, c_(1)), prob))

    def body(cr):
        i, k_out, accepted, rng = cr
        ks = _prng.split(rng, (3,))
        u = _uniform_raw(ks[1], 0., 1., shape, dt)
        v = _uniform_raw(ks[2], 0., 1., shape, dt)
        u = lax.sub(u, c_(0.5))
        us = lax.sub(c_(0.5), lax.abs(u))
        accept1 = lax.bitwise_and(lax.ge(us, c_(0.07)), lax.le(v, v_r))
        k = lax.floor(fma(lax.add(lax.div(lax.mul(c_(2), a), us), b), u, c))
        reject = lax.bitwise_or(lax.lt(k, c_(0)), lax.gt(k, count))
        v = log(lax.div(lax.mul(v, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        nm1 = lax.add(lax.sub(count, m), c_(1))
        nk1 = lax.add(lax.sub(count, k), c_(1))
        # (m + 1/2) l1 + (n + 1) l2 + (k + 1/2) l3: the first and third products fused (as XLA does)
        ub = lax.mul(lax.add(count, c_(1)), log(lax.div(nm1, nk1)))
        ub = fma(lax.add(m, c_(0.5)), log(lax.div(lax.add(m, c_(1)), lax.mul(r, nm1))), ub)
        ub = fma(lax.add(k, c_(0.5)), log(lax.div(lax.mul(r, nk1), lax.add(k, c_(1)))), ub)
        ub = lax.add(ub, _stirling_tail(m))
        ub = lax.add(ub, _stirling_tail(lax.sub(count, m)))
        ub = lax.sub(ub, _stirling_tail(k))
        ub = lax.sub(ub, _stirling_tail(lax.sub(count, k)))
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(v, ub)))
        return (lax.add(i, _prng.const(1, np.int32)), lax.select(accept, k, k_out),
                lax.bitwise_or(accepted, accept), ks[0])

    def cond(cr):
        return jnp.any(lax.bitwise_not(cr[2]))

    init = (_prng.const(0, np.int32), _full(shape, -1, dt), _full(shape, False, np.bool_), key)
    return lax.convert_element_type(lax.while_loop(cond, body, init)[1], dtype)


@jit(static_argnums=(3, 4), inline=True)
def _binomial_impl(key, count, prob, shape, dtype):
    dt = get_aval(prob).dtype
    c_ = lambda v: _prng.const(v, dt)  # noqa: E731
    count = jnp.broadcast_to(_prng.to_dtype(count, dt), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = lax.lt(prob, c_(0.5))
    q = lax.select(p_lt_half, prob, lax.sub(c_(1), prob))
    count_bad = lax.bitwise_or(_isnan(count), lax.lt(count, c_(0)))
    count_inf = lax.eq(lax.abs(count), c_(np.inf))
    q_nan = _isnan(q)
    q_neg = lax.lt(q, c_(0))
    q = lax.select(lax.bitwise_or(q_nan, q_neg), _full(shape, 0.01, dt), q)
    use_inv = lax.bitwise_or(count_bad, lax.le(lax.mul(count, q), c_(10)))
    count = lax.floor(count)
    inv = _binomial_inversion(key, lax.select(use_inv, count, _full(shape, 0, dt)), q, shape, dtype)
    bt = _btrs(key, lax.select(use_inv, _full(shape, 1e4, dt), count),
               lax.select(use_inv, _full(shape, 0.5, dt), q), shape, dtype)
    out = lax.select(use_inv, inv, bt)
    invalid = lax.bitwise_or(lax.bitwise_or(q_neg, q_nan), count_bad)
    out = lax.select(invalid, _full(shape, np.nan, dtype), out)
    out = lax.select(lax.bitwise_and(count_inf, lax.bitwise_not(invalid)), _full(shape, np.inf, dtype), out)
    keep = lax.bitwise_or(lax.bitwise_or(p_lt_half, count_bad), lax.bitwise_or(q_nan, count_inf))
    return lax.select(keep, out, lax.sub(lax.convert_element_type(count, dtype), out))


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats of ``dtype``: geometric inversion for n*p <= 10, BTRS above; NaN for
    an invalid n or p. Mirrors ``jax.random.binomial``."""
    data, _ = _check_prng_key("binomial", key)
    dt = _float_dtype(dtype, "binomial")
    shape = _param_shape(shape, "binomial", n, p)
    p = jnp.asarray(p)
    if not dtypes.issubdtype(p.dtype, np.inexact):
        p = p.astype(dtypes.canonicalize_dtype(float))
    return _binomial_impl(data, jnp.asarray(n), p, shape, dt)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of ``n`` draws over the outcomes on ``p``'s last axis (shape ``shape`` or ``p.shape``), one
    binomial per outcome on what remains. Mirrors ``jax.random.multinomial``."""
    data, _ = _check_prng_key("multinomial", key)
    dt = _float_dtype(dtype, "multinomial")
    n, p = jnp.asarray(n), jnp.asarray(p)
    ft = dtypes.result_type(n.dtype, p.dtype)
    if not dtypes.issubdtype(ft, np.inexact):
        ft = dtypes.canonicalize_dtype(float)
    n, p = n.astype(ft), p.astype(ft)
    shape = tuple(p.shape) if shape is None else _canon_shape(shape)
    return _multinomial_impl(data, n, p, shape, dt)


@jit(static_argnums=(3, 4), inline=True)
def _multinomial_impl(key, n, p, shape, dtype):
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = jnp.divide(p, jnp.where(jnp.equal(remaining, 0), 1, remaining))
    keys = _prng.split(key, (get_aval(ratios).shape[0],))
    ft = get_aval(n).dtype

    def step(rem, rk):
        ratio, k = rk
        cnt = _binomial_impl(k, rem, jnp.clip(ratio, 0, 1), tuple(get_aval(rem).shape), ft)
        return lax.sub(rem, cnt), cnt

    _, counts = lax.scan(step, n, (ratios, keys))
    return jnp.moveaxis(counts, 0, -1).astype(dtype)


# ------------------------------------------------------------------------------ transforms of the above

def _real_param(x, dt):
    return _prng.to_dtype(x if isinstance(x, (Array, Tracer)) else jnp.asarray(x), dt)


@jit(static_argnums=(2, 3), inline=True)
def _t_impl(key, df, shape, dtype):
    ks = _prng.split(key, (2,))
    n = _normal_raw(ks[0], shape, dtype)
    half = lax.div(df, _prng.const(2, dtype))
    g = _gamma_raw(ks[1], half, shape, dtype, False)
    return jnp.multiply(n, jnp.sqrt(jnp.divide(half, g)))


def t(key, df, shape=None, dtype=None):
    """Student's t samples with ``df`` degrees of freedom (normal * sqrt(df/2 / gamma(df/2))). Mirrors
    ``jax.random.t``."""
    data, _ = _check_prng_key("t", key)
    dt = _float_dtype(dtype, "t")
    return _t_impl(data, _real_param(df, dt), _param_shape(shape, "t", df), dt)


@jit(static_argnums=(2, 3), inline=True)
def _chisquare_impl(key, df, shape, dtype):
    two = _prng.const(2, dtype)
    return lax.mul(lax.exp(_gamma_raw(key, lax.div(df, two), shape, dtype, True)), two)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square samples (2 * gamma(df / 2), drawn in log space). Mirrors ``jax.random.chisquare``."""
    data, _ = _check_prng_key("chisquare", key)
    dt = _float_dtype(dtype, "chisquare")
    return _chisquare_impl(data, _real_param(df, dt), _param_shape(shape, "chisquare", df), dt)


@jit(static_argnums=(3, 4), inline=True)
def _f_impl(key, dfnum, dfden, shape, dtype):
    ks = _prng.split(key, (2,))
    if _f32(dtype) or np.dtype(dtype) == np.float64:
        # XLA's algebraic simplifier turns (chi2n / dfnum) / (chi2d / dfden), with chi2 = 2 * exp(loggamma),
        # into (en * (2 * dfden)) / (ed * (2 * dfnum)) for float32 and float64 alike: computed so, the draws
        # have JAX's bits
        two = _prng.const(2, dtype)
        en = lax.exp(_gamma_raw(ks[1], lax.div(dfnum, two), shape, dtype, True))
        ed = lax.exp(_gamma_raw(ks[0], lax.div(dfden, two), shape, dtype, True))
        return jnp.divide(jnp.multiply(en, lax.mul(dfden, two)), jnp.multiply(ed, lax.mul(dfnum, two)))
    num = lax.div(_chisquare_impl(ks[1], dfnum, shape, dtype), jnp.broadcast_to(dfnum, shape))
    den = lax.div(_chisquare_impl(ks[0], dfden, shape, dtype), jnp.broadcast_to(dfden, shape))
    return lax.div(num, den)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distribution samples, a ratio of two scaled chi-squares. Mirrors ``jax.random.f``."""
    data, _ = _check_prng_key("f", key)
    dt = _float_dtype(dtype, "f")
    return _f_impl(data, _real_param(dfnum, dt), _real_param(dfden, dt),
                   _param_shape(shape, "f", dfnum, dfden), dt)


@jit(static_argnums=(1, 2), inline=True)
def _cauchy_impl(key, shape, dtype):
    u = _uniform_raw(key, np.array(np.finfo(dtype).eps, dtype), np.array(1., dtype), shape, dtype)
    return lax.tan(lax.mul(_prng.const(np.pi, dtype), lax.sub(u, _prng.const(0.5, dtype))))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy samples ``tan(pi * (u - 1/2))``. Mirrors ``jax.random.cauchy``."""
    data, _ = _check_prng_key("cauchy", key)
    dt = _float_dtype(dtype, "cauchy")
    return _cauchy_impl(data, _canon_shape(shape), dt)


@jit(static_argnums=(2, 3), inline=True)
def _lognormal_impl(key, sigma, shape, dtype):
    if np.dtype(dtype) == np.float64 and _shape_of(sigma) == ():
        # XLA folds (erf_inv(u) * sqrt(2)) * sigma, two broadcast scalars, into erf_inv(u) * (sqrt(2) * sigma)
        lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
        u = _uniform_raw(key, lo, np.array(1., dtype), shape, dtype)
        return lax.exp(jnp.multiply(lax.erf_inv(u), jnp.multiply(_prng.const(np.sqrt(2), dtype), sigma)))
    return lax.exp(jnp.multiply(_normal_raw(key, shape, dtype), sigma))


def lognormal(key, sigma=np.float32(1.), shape=None, dtype=None):
    """``exp(sigma * normal)``. Mirrors ``jax.random.lognormal``."""
    data, _ = _check_prng_key("lognormal", key)
    dt = _float_dtype(dtype, "lognormal")
    return _lognormal_impl(data, _real_param(sigma, dt), _param_shape(shape, "lognormal", sigma), dt)


@jit(static_argnums=(2, 3), inline=True)
def _pareto_impl(key, b, shape, dtype):
    if np.dtype(dtype) == np.float64 and _shape_of(b) == ():
        # XLA rewrites the division by a broadcast scalar as a product with its reciprocal
        return lax.exp(jnp.multiply(_exponential_impl(key, shape, dtype), jnp.divide(_prng.const(1, dtype), b)))
    return lax.exp(jnp.divide(_exponential_impl(key, shape, dtype), b))


def pareto(key, b, shape=None, dtype=None):
    """Pareto samples with shape parameter ``b``: ``exp(exponential / b)``. Mirrors ``jax.random.pareto``."""
    data, _ = _check_prng_key("pareto", key)
    dt = _float_dtype(dtype, "pareto")
    return _pareto_impl(data, _real_param(b, dt), _param_shape(shape, "pareto", b), dt)


@jit(static_argnums=(3, 4), inline=True)
def _weibull_min_impl(key, scale, concentration, shape, dtype):
    u = _uniform_raw(key, 0., 1., shape, dtype)
    # the inverse CDF
    return jnp.multiply(_power_libm(lax.neg(_prng.log1p(lax.neg(u))), jnp.divide(1.0, concentration)), scale)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples ``scale * (-log(1 - u)) ** (1 / concentration)``. Mirrors
    ``jax.random.weibull_min``."""
    data, _ = _check_prng_key("weibull_min", key)
    dt = _float_dtype(dtype, "weibull_min")
    return _weibull_min_impl(data, _real_param(scale, dt), _real_param(concentration, dt),
                             _canon_shape(shape), dt)


@jit(static_argnums=(2, 3), inline=True)
def _rayleigh_impl(key, scale, shape, dtype):
    u = _uniform_raw(key, 0., 1., shape, dtype)
    scale = jnp.broadcast_to(scale, shape)
    return lax.mul(scale, lax.sqrt(lax.mul(_prng.log(u), _prng.const(-2, dtype))))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh samples ``scale * sqrt(-2 log u)``. Mirrors ``jax.random.rayleigh``."""
    data, _ = _check_prng_key("rayleigh", key)
    dt = _float_dtype(dtype, "rayleigh")
    return _rayleigh_impl(data, _real_param(scale, dt), _param_shape(shape, "rayleigh", scale), dt)


@jit(static_argnums=(2, 3), inline=True)
def _wald_impl(key, mean, shape, dtype):
    ks = _prng.split(key, (2,))
    mean = jnp.broadcast_to(mean, shape)
    v = _normal_raw(ks[0], shape, dtype)
    z = _uniform_raw(ks[1], 0., 1., shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    # the multiply-adds contract to FMAs as XLA:CPU's do (the left product fused, the right one rounded)
    root = lax.sqrt(_fma_or_madd(lax.mul(_prng.const(4, dtype), mean), y, lax.mul(mean_sq, y_sq), dtype))
    half = _prng.const(0.5, dtype)
    x = _fma_or_madd(lax.neg(lax.mul(mean, half)), root, lax.add(mean, lax.mul(lax.mul(mean_sq, y), half)),
                     dtype)
    return lax.select(lax.le(z, jnp.divide(mean, jnp.add(mean, x))), x, jnp.divide(mean_sq, x))


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) samples of mean ``mean``. Mirrors ``jax.random.wald``."""
    data, _ = _check_prng_key("wald", key)
    dt = _float_dtype(dtype, "wald")
    return _wald_impl(data, _real_param(mean, dt), _param_shape(shape, "wald", mean), dt)


@jit(static_argnums=(1, 2), inline=True)
def _maxwell_impl(key, shape, dtype):
    n = _normal_raw(key, tuple(shape) + (3,), dtype)
    sq = lax.mul(n, n)
    # the sum of three in the order XLA:CPU's reduction adds them
    return lax.sqrt(lax.add(lax.add(sq[..., 0], sq[..., 2]), sq[..., 1]))


def maxwell(key, shape=(), dtype=None):
    """Maxwell samples, the norm of three standard normals. Mirrors ``jax.random.maxwell``."""
    data, _ = _check_prng_key("maxwell", key)
    dt = _float_dtype(dtype, "maxwell")
    return _maxwell_impl(data, _canon_shape(shape), dt)


@jit(static_argnums=(1, 2), inline=True)
def _rademacher_impl(key, shape, dtype):
    # JAX's bernoulli(key, 0.5): the uniform has the dtype of the Python float 0.5, float64 under x64
    fdt = np.dtype(np.float64) if _x64() else np.dtype(np.float32)
    b = jnp.less(_uniform_raw(key, 0., 1., shape, fdt), fdt.type(0.5)).astype(dtype)
    return jnp.subtract(jnp.multiply(2, b), 1).astype(dtype)


def rademacher(key, shape=(), dtype=None):
    """-1 or +1 with equal probability (integer ``dtype``, default int32). Mirrors
    ``jax.random.rademacher``."""
    data, _ = _check_prng_key("rademacher", key)
    return _rademacher_impl(data, _canon_shape(shape), _int_dtype(dtype, "rademacher"))


@jit(static_argnums=(3, 4), inline=True)
def _double_sided_maxwell_impl(key, loc, scale, shape, dtype):
    ks = _prng.split(key, (2,))
    m = _maxwell_impl(ks[0], shape, dtype)
    sign = _rademacher_impl(ks[1], shape, dtype)
    return _fma_or_madd(lax.mul(sign, m), jnp.broadcast_to(scale, shape), jnp.broadcast_to(loc, shape), dtype)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell samples with a random sign, scaled and shifted; the result shape is ``shape`` followed by
    the broadcast shape of ``loc`` and ``scale``. Mirrors ``jax.random.double_sided_maxwell``."""
    data, _ = _check_prng_key("double_sided_maxwell", key)
    dt = _float_dtype(dtype, "double_sided_maxwell")
    shape = _canon_shape(shape)
    pshape = tuple(np.broadcast_shapes(_shape_of(loc), _shape_of(scale)))
    if not shape:
        shape = pshape
    return _double_sided_maxwell_impl(data, _real_param(loc, dt), _real_param(scale, dt), shape + pshape, dt)


def _promoted_dtype(dtype, p):
    """The dtype ``g ** p`` takes for draws ``g`` of ``dtype``: ``dtype`` unless ``p`` is a wider non-weak
    float (JAX's ``generalized_normal``/``ball`` then return float32 for bfloat16 draws and a float32 ``p``)."""
    return np.dtype(dtypes.result_type(jnp.zeros((), dtype), p))


@jit(static_argnums=(2, 3), inline=True)
def _generalized_normal_impl(key, p, shape, dtype):
    ks = _prng.split(key, (2,))
    # 1 / p in p's own precision (JAX computes it before the samplers cast it), then in dtype
    inv_own = jnp.divide(1, p)
    inv_p = _prng.to_dtype(inv_own, dtype)
    g = _gamma_raw(ks[0], inv_p, shape, dtype, False)
    r = _rademacher_impl(ks[1], shape, dtype)
    out = _promoted_dtype(dtype, p)
    if out != np.dtype(dtype):
        # g ** (1 / p) in the wider type of p, as JAX's promotion has it
        return jnp.multiply(r, _power_libm(_prng.to_dtype(g, out), _prng.to_dtype(inv_own, out)))
    return jnp.multiply(r, _power_libm(g, inv_p))


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal samples (density ``exp(-|x|**p)``, up to normalization). Mirrors
    ``jax.random.generalized_normal``."""
    shape = _canon_shape(shape)
    data, _ = _check_prng_key("generalized_normal", key)
    dt = _float_dtype(dtype, "generalized_normal")
    return _generalized_normal_impl(data, _own_float_param(p), shape, dt)


def _own_float_param(p):
    """``p`` in the float precision JAX's jitted sampler receives it: a Python scalar as the default float
    (float64 under x64), an array in its own float dtype, integers as the default float."""
    if isinstance(p, (int, float)) and not isinstance(p, bool):
        return jnp.asarray(float(p))   # (weak, as a Python scalar traced by JAX's jit: it takes the draws' type)
    a = p if isinstance(p, (Array, Tracer)) else jnp.asarray(p)
    if not dtypes.issubdtype(get_aval(a).dtype, np.floating):
        a = _prng.to_dtype(a, dtypes.canonicalize_dtype(float))
    return a


def _ball_bf16_tail(g, p, inv_p, ue, log1p_, sum_last):
    """bfloat16 ball's norm rounded per op (XLA's float normalization, JAX 0.10.2): |g|**p stays float32 into
    the float32 sum, and g / r becomes g * (1 / r) with the reciprocal kept in float32; the rest rounds per
    op (``inv_p`` of g's shape or a scalar)."""
    f32 = np.dtype(np.float32)
    lp = log1p_(lax.convert_element_type(lax.neg(ue), f32))
    e = lax.neg(lax.convert_element_type(lp, _BF16))
    gp = _power_libm(lax.convert_element_type(jnp.abs(g), f32), lax.convert_element_type(p, f32))
    s = jnp.add(lax.convert_element_type(sum_last(gp), _BF16), e)
    if get_aval(inv_p).ndim:
        inv_p = inv_p[..., 0]
    recip = lax.div(_prng.const(1, f32), lax.convert_element_type(_power_libm(s, inv_p), f32))
    return lax.convert_element_type(jnp.multiply(lax.convert_element_type(g, f32), recip[..., None]), _BF16)


def _ball_bf16_per_op(r, d, v, boost, p, inv_p, ue):
    """bfloat16 ball below 4096 rows: generalized_normal's tail r * (d·V·boost)**(1/p) rounded per op, then
    the norm (``_ball_bf16_tail``; the row sum YNNPACK's where the draws span >= 4096 elements)."""
    g = lax.mul(r, _power_libm(lax.mul(lax.mul(d, v), boost), inv_p))
    big = _prng.ynn_sized(get_aval(g).shape)
    return _ball_bf16_tail(g, p, inv_p, ue, _prng.log1p, _prng.ynn_sum_last if big else _prng.xla_sum_last)


def _ball_bf16_fused(r, d, v, boost, p, inv_p, ue):
    """bfloat16 ball from 4096 rows: one YNNPACK fusion, float32 from the gamma loop's pieces, the sign and
    the exponential's uniform to the end (the C library's pow, YNNPACK's log1p and row sum), rounded once."""
    f32 = np.dtype(np.float32)
    c = lambda a: lax.convert_element_type(a, f32)  # noqa: E731
    g = lax.mul(c(r), _power_libm(lax.mul(lax.mul(c(d), c(v)), c(boost)), c(inv_p)))
    e = lax.neg(_prng.ynn_log1p(lax.neg(c(ue))))
    s = lax.add(_prng.ynn_sum_last(_power_libm(lax.abs(g), c(p))), e)
    recip = lax.div(_prng.const(1, f32), _power_libm(s, c(inv_p)[..., 0]))
    return lax.convert_element_type(lax.mul(g, recip[..., None]), _BF16)


def _ball_bf16_tangent(primals, tangents):
    """The tangent of bfloat16 ball's chain, as JAX differentiates ``g / (sum(|g|**p) + e)**(1/p)`` with
    ``g = r * gamma(1/p)**(1/p)``: the gamma draw's implicit gradient in ``1/p``, then the standard ops' jvp
    (only ``p`` and ``inv_p`` carry tangents)."""
    r, d, v, boost, p, inv_p, ue = primals
    t_p, t_inv_p = (ad.instantiate_zeros(tangents[4]), ad.instantiate_zeros(tangents[5]))
    gam = lax.mul(lax.mul(d, v), boost)
    e = lax.neg(_prng.log1p(lax.neg(ue)))

    def form(p, inv_p):
        g = jnp.multiply(r, jnp.power(_implicit_gamma(inv_p, gam), inv_p))
        s = jnp.add(jnp.sum(jnp.power(jnp.abs(g), p), axis=-1), e)
        return [jnp.divide(g, jnp.power(s, inv_p[..., 0])[..., None])]
    _, (t,) = ad.jvp_flat(form, [p, inv_p], [t_p, t_inv_p])
    return t


def _ball_bf16_d1(r, d, v, boost, p, inv_p, ue):
    """bfloat16 ball with d = 1 at any size: no row sum is left, so no YNNPACK fusion (XLA's own loops)."""
    g = lax.mul(r, _power_libm(lax.mul(lax.mul(d, v), boost), inv_p))
    return _ball_bf16_tail(g, p, inv_p, ue, _prng.log1p, _prng.xla_sum_last)


_prng.YNN_CHAINS["ball_bf16"] = (_ball_bf16_fused, _ball_bf16_per_op, _ball_bf16_tangent)
_prng.YNN_CHAINS["ball_bf16_d1"] = (_ball_bf16_d1, _ball_bf16_d1, _ball_bf16_tangent)


@jit(static_argnums=(2, 3, 4), inline=True)
def _ball_impl(key, p, d, shape, dtype):
    ks = _prng.split(key, (2,))
    # p is in its own precision (see _own_float_param): |g| ** p casts it, ** (1 / p) casts the quotient
    inv_p = _prng.to_dtype(jnp.divide(1, p), dtype)
    out = _promoted_dtype(dtype, p)
    if out != np.dtype(dtype):
        # a wider non-weak p: g ** (1 / p) and the norm in p's type (JAX's promotion), the exponential draw
        # in dtype
        g = _generalized_normal_impl(ks[0], p, tuple(shape) + (d,), dtype)
        e = _prng.to_dtype(_exponential_impl(ks[1], shape, dtype), out)
        po, inv_o = _prng.to_dtype(p, out), _prng.to_dtype(jnp.divide(1, p), out)
        gp = _power_libm(jnp.abs(g), po)
        s = jnp.add(_prng.ynn_choice("sum_last", gp) if d > 1 else gp[..., 0], e)
        if d == 1:
            return jnp.divide(g, _power_libm(s, inv_o)[..., None])
        return jnp.multiply(g, _power_libm(s, lax.neg(inv_o))[..., None])
    if np.dtype(dtype) == _BF16:
        # generalized_normal's pieces and the norm: one chain (``_ball_bf16_per_op``/``_fused``; with d = 1
        # no row sum is left to fuse: ``_ball_bf16_d1``), differentiated as JAX's ops (``_ball_bf16_tangent``)
        full = tuple(shape) + (d,)
        kg = _prng.split(ks[0], (2,))
        inv_pf, dd, v, boost = _gamma_parts(kg[0], inv_p, full, dtype, "parts")
        r = _rademacher_impl(kg[1], full, dtype)
        ue = _uniform_raw(ks[1], 0., 1., shape, dtype)
        return _prng.ynn_chain("ball_bf16" if d > 1 else "ball_bf16_d1", r, dd, v, boost,
                               jnp.broadcast_to(_prng.to_dtype(p, dtype), full), inv_pf, ue)
    g = _generalized_normal_impl(ks[0], p, tuple(shape) + (d,), dtype)
    p = _prng.to_dtype(p, dtype)
    if np.dtype(dtype) not in (np.float32, np.float64):
        # float16: the sum accumulates in float32; pow is the C library's on the float32 upcast, and XLA
        # simplifies g / s**(1/p) to g * s**-(1/p) here too (not for d = 1)
        e = _exponential_impl(ks[1], shape, dtype)
        s = jnp.add(jnp.sum(_power_libm(jnp.abs(g), p), axis=-1), e)
        if d == 1:
            return jnp.divide(g, _power_libm(s, inv_p)[..., None])
        return jnp.multiply(g, _power_libm(s, lax.neg(inv_p))[..., None])
    # XLA:CPU runs the norm in one YNNPACK reduce fusion: the exponential's log1p is YNNPACK's, the sum
    # runs in YNNPACK's order (each only where it spans >= 4096 elements: the log1p when shape does, the
    # sum when shape + (d,) does; XLA's own kernels otherwise), and g / s**(1/p) is simplified to
    # g * s**-(1/p) (pow is the C library's on both sides)
    u = _uniform_raw(ks[1], 0., 1., shape, dtype)
    # (with d == 1 the sum is gone from the graph, and with it the YNNPACK fusion)
    # (the sizes are the final ones, vmapped batches included: ``_prng.ynn_choice`` decides at lowering)
    e = lax.neg((_prng.ynn_choice("log1p", lax.neg(u)) if d > 1 else _prng.log1p(lax.neg(u))))
    gp = _power_libm(jnp.abs(g), p)
    s = jnp.add(_prng.ynn_choice("sum_last", gp), e)
    if d == 1:
        # no broadcast of the norm left to simplify: XLA keeps the division
        return jnp.divide(g, _power_libm(s, inv_p)[..., None])
    return jnp.multiply(g, _power_libm(s, lax.neg(inv_p))[..., None])


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the ``d``-dimensional unit ``p``-norm ball, shape ``shape + (d,)``. Mirrors
    ``jax.random.ball``."""
    shape = _canon_shape(shape)
    data, _ = _check_prng_key("ball", key)
    dt = _float_dtype(dtype, "ball")
    d = operator.index(d)
    return _ball_impl(data, _own_float_param(p), d, shape, dt)


@jit(static_argnums=(2, 3), inline=True)
def _geometric_impl(key, p, shape, dtype):
    fd = get_aval(p).dtype
    u = _uniform_raw(key, 0., 1., shape, fd)
    # u == 0 maps to 1, as JAX (log(0) would be -inf)
    u = lax.select(lax.eq(u, _prng.const(0, fd)), _full(shape, 1, fd), u)
    log_q = jnp.broadcast_to(_prng.log1p(lax.neg(p)), shape)
    return lax.convert_element_type(lax.add(lax.floor(lax.div(_prng.log(u), log_q)), _prng.const(1, fd)),
                                    dtype)


def geometric(key, p, shape=None, dtype=None):
    """Number of Bernoulli(p) trials to the first success (integer ``dtype``). Mirrors
    ``jax.random.geometric``."""
    data, _ = _check_prng_key("geometric", key)
    dt = _int_dtype(dtype, "geometric")
    if not dtypes.issubdtype(dt, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dt}")
    shape = _param_shape(shape, "geometric", p)
    p = jnp.asarray(p)
    if not dtypes.issubdtype(p.dtype, np.inexact):
        p = p.astype(dtypes.canonicalize_dtype(float))
    return _geometric_impl(data, p, shape, dt)


@jit(static_argnums=(4, 5), inline=True)
def _triangular_impl(key, left, mode, right, shape, dtype):
    left, mode, right = (jnp.broadcast_to(v, shape) for v in (left, mode, right))
    width = lax.sub(right, left)
    fc = lax.div(lax.sub(mode, left), width)
    u = _uniform_raw(key, 0., 1., shape, dtype)
    out1 = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    out2 = lax.sub(right, lax.sqrt(lax.mul(lax.mul(lax.sub(_prng.const(1, dtype), u), width),
                                           lax.sub(right, mode))))
    return lax.select(lax.lt(u, fc), out1, out2)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular samples on ``[left, right]`` peaking at ``mode`` (inverse CDF). Mirrors
    ``jax.random.triangular``."""
    data, _ = _check_prng_key("triangular", key)
    dt = _float_dtype(dtype, "triangular")
    shape = _param_shape(shape, "triangular", left, mode, right)
    return _triangular_impl(data, _real_param(left, dt), _real_param(mode, dt), _real_param(right, dt), shape, dt)

# --------------------------------------------------------------------------- factor-based samplers

@jit(static_argnums=(3, 4, 5), inline=True)
def _multivariate_normal_impl(key, mean, cov, shape, dtype, method):
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = jnp.multiply(u, jnp.sqrt(s[..., None, :]))
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = jnp.multiply(v, jnp.sqrt(w[..., None, :]))
    else:
        factor = jnp.linalg.cholesky(cov)
    zshape = tuple(shape) + tuple(mean.shape[-1:])
    n, batch = mean.shape[-1], int(np.prod(shape, dtype=np.int64))
    dt = np.dtype(dtype)
    if factor.ndim == 2 and batch > 0 and dt in (np.float32, np.float64) and dt == factor.dtype == mean.dtype:
        out = _mvn_xla_order(key, mean, factor, zshape, dt, n, batch)
        if out is not None:
            return out
    z = _normal_raw(key, zshape, dtype)
    return jnp.add(mean, jnp.einsum("...ij,...j->...i", factor, z))


def _mvn_xla_order(key, mean, factor, zshape, dt, n, batch):
    """``mean + factor @ z`` in the order XLA:CPU computes JAX's einsum (a dot of z[batch, n] with the factor's
    rows), where it was measured (h-bits18, JAX 0.10.2, every case 100% of its draws), else None (cranax's own
    dot). n == 1: the dot is a multiply the simplifier merges into the normal draws' factor sqrt(2), then
    contracted with the add: fma(erf_inv(u), L * sqrt(2), mean) (one draw: fma(z, L, mean)). XLA hands the dot to YNNPACK when both of
    batch and n are > 1 and one is >= 8 (``IsDotSupportedByYnn``): float64 there is one FMA chain over k from
    the first product; float32 (n <= 7) rounds every product and adds them as pairwise trees of four, the
    trees left to right. Its own small dots (the rest) are the FMA chain too (float64 n <= 3, float32 n <= 6).
    Other orders (float32 YNNPACK n >= 8, larger own dots) were not found: None."""
    if n == 1 and batch == 1:
        # (one draw: no merge with sqrt(2), the product contracted with the add)
        z = _normal_raw(key, zshape, dt)
        return _prng.fma(z, jnp.broadcast_to(lax.reshape(factor, (1,)), zshape), jnp.broadcast_to(mean, zshape))
    if n == 1:
        e = _erf_inv_raw(key, zshape, dt)
        scale = lax.mul(lax.reshape(factor, (1,)), _prng.const(np.sqrt(2), dt))
        return _prng.fma(e, jnp.broadcast_to(scale, zshape), jnp.broadcast_to(mean, zshape))
    ynn = batch > 1 and max(batch, n) >= 8
    if ynn and dt == np.float32:
        order = "trees" if n <= 7 else None
    elif ynn or n <= (6 if dt == np.float32 else 3):
        order = "chain"
    else:
        order = None
    if order is None:
        return None
    z = _normal_raw(key, zshape, dt)
    # (each operand at the full shape: _prng.fma takes one shape)
    col = lambda k: jnp.broadcast_to(lax.slice_in_dim(z, k, k + 1, axis=-1), zshape)
    row = lambda k: jnp.broadcast_to(factor[:, k], zshape)
    if order == "chain":
        acc = jnp.multiply(col(0), row(0))
        for k in range(1, n):
            acc = _prng.fma(col(k), row(k), acc)
    else:
        # each product rounded alone, as YNNPACK's: fma(a, b, -0) is a * b rounded (signed zeros too), and
        # unlike a `mul` opt::contract cannot fuse it into the add that follows
        prods = [_prng.fma(col(k), row(k), -0.0) for k in range(n)]
        acc = None
        for b in range(0, n, 4):
            level = prods[b:b + 4]
            while len(level) > 1:
                level = [jnp.add(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                         for i in range(0, len(level), 2)]
            acc = level[0] if acc is None else jnp.add(acc, level[0])
    return jnp.add(mean, acc)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Samples of N(``mean``, ``cov``): ``mean + factor @ z`` with ``z`` standard normal of shape
    ``shape + mean.shape[-1:]`` and ``factor`` the Cholesky factor of ``cov`` (``method="cholesky"``, the
    default) or ``U sqrt(S)`` from ``svd``/``eigh`` (for singular ``cov``). ``mean``: ``(..., n)``; ``cov``:
    ``(..., n, n)``; ``shape`` (default: the broadcast batch shapes of both) must be broadcast-compatible with
    them. Result shape ``shape + (n,)``, float ``dtype`` (default ``mean``'s). Raises ``ValueError`` for a bad
    ``method``, ``dtype`` or shapes. Mirrors ``jax.random.multivariate_normal``."""
    data, _ = _check_prng_key("multivariate_normal", key)
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    ft = jnp.result_type(mean, cov)
    if not dtypes.issubdtype(ft, np.inexact):
        ft = dtypes.canonicalize_dtype(float)
    mean, cov = mean.astype(ft), cov.astype(ft)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    if dtype is None:
        dt = np.dtype(mean.dtype)
    else:
        dt = dtypes.canonicalize_dtype(dtype)
        dtypes.check_user_dtype_supported(dt, "multivariate_normal")
    if not dtypes.issubdtype(dt, np.floating):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got {dt}")
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
                         f"cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2])))
    else:
        shape = _canon_shape(shape)
        _check_shape("normal", shape, tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    return _multivariate_normal_impl(data, mean, cov, shape, dt, method)


@jit(static_argnums=(1, 2, 3, 4), inline=True)
def _orthogonal_impl(key, n, m, shape, dtype):
    z = _normal_any(key, tuple(shape) + (max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = jnp.multiply(q, jnp.expand_dims(jnp.sign(d), -2))
    return jnp.swapaxes(x, -1, -2) if n < m else x


def _normal_any(key, shape, dtype):
    return normal(key, shape, dtype)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """A matrix uniform on the orthogonal group O(n) (unitary U(n) for a complex ``dtype``), shape
    ``shape + (n, m)`` (``m`` defaults to ``n``; semi-orthogonal when they differ): the Q of a QR of standard
    normal draws, its columns signed by R's diagonal. ``n`` and ``m`` must be concrete integers. Mirrors
    ``jax.random.orthogonal``."""
    mm = n if m is None else m
    shape = _canon_shape(shape)
    data, _ = _check_prng_key("orthogonal", key)
    dt = dtypes.canonicalize_dtype(float if dtype is None else dtype)
    dtypes.check_user_dtype_supported(dt, "orthogonal")
    n, mm = operator_index(n), operator_index(mm)
    return _orthogonal_impl(data, n, mm, shape, dt)


# ----------------------------------------------------------------------------- random_gamma_p
# JAX's primitive behind gamma/loggamma: random_gamma_p.bind(key_data, a, log_space=...) gives one draw per
# element of ``a`` from uint32 key data of shape ``a.shape[:k] + (2,)`` (k leading batch dimensions shared by
# key and a, as its batching rule makes them). Lowered by inlining the same sampler as ``gamma``.

def _random_gamma_apply(key, a, log_space):
    kshape = tuple(get_aval(key).shape)
    if len(kshape) > 1:
        return vmap(lambda k, al: _random_gamma_apply(k, al, log_space))(key, a)
    return _gamma_samples(key, a, log_space)


def _make_random_gamma_p():
    class RandomGammaPrimitive(Primitive):
        # JAX binds it with typed keys; the primitive itself works on their uint32 data
        def bind(self, key, a, **params):
            if isinstance(key, PRNGKeyArray):
                key = key_data(key)
            return super().bind(key, a, **params)

    p = RandomGammaPrimitive("random_gamma")

    def impl(key, a, *, log_space):
        return jit(_random_gamma_apply, static_argnums=(2,))(key, a, log_space)

    def abstract(key, a, *, log_space):
        return ShapedArray(tuple(a.shape), a.dtype)

    def jvp(primals, tangents, *, log_space):
        key, a = primals
        ans = p.bind(key, a, log_space=log_space)
        ta = tangents[1]
        if ad.is_zero(ta):
            return ans, ad.zeros_like_aval(get_aval(ans))
        if log_space:
            x = lax.exp(ans)
            x = lax.select(lax.eq(x, _prng.const(0, get_aval(x).dtype)),
                           lax.full_like(x, np.finfo(get_aval(x).dtype).tiny), x)
            g = lax.div(lax.random_gamma_grad(a, x), x)
        else:
            g = lax.random_gamma_grad(a, ans)
        return ans, lax.mul(ad.instantiate_zeros(ta), g)

    def batch(args, dims, *, log_space):
        key, a = args
        kd, ad_ = dims
        size = next(x.shape[d] for x, d in zip(args, dims) if d is not None)
        key = jnp.moveaxis(key, kd, 0) if kd is not None else jnp.broadcast_to(key, (size,) + key.shape)
        a = jnp.moveaxis(a, ad_, 0) if ad_ is not None else jnp.broadcast_to(a, (size,) + a.shape)
        return p.bind(key, a, log_space=log_space), 0

    p.def_impl(impl)
    p.def_abstract_eval(abstract)
    mlir.register_lowering(p, mlir.lower_fun(_random_gamma_apply, multiple_results=False))
    ad.primitive_jvps[p] = jvp
    batching.primitive_batchers[p] = batch
    return p


random_gamma_p = _make_random_gamma_p()


del math

# jax.dtypes and jax.Array see typed keys as JAX does: key<fry> is a prng_key dtype, a key array an Array.
KeyTy.type = dtypes.prng_key
Array._virtual_subclasses.add(PRNGKeyArray)
