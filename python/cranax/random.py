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
from . import numpy as jnp
from .api import jit
from .array import Array
from .config import config
from .core import Tracer, get_aval
from .errors import ConcretizationTypeError
from .tree_util import register_pytree_node

__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split", "fold_in", "clone", "bits",
           "uniform", "normal", "truncated_normal", "randint", "bernoulli", "categorical", "choice",
           "permutation", "gumbel", "exponential", "laplace", "logistic", "PRNGKeyArray", "KeyArray",
           "key_dtype"]

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


class PRNGKeyArray:
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

register_pytree_node(PRNGKeyArray, lambda k: ((k._base,), None), lambda _, c: PRNGKeyArray(c[0]))


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
    if not dtypes.issubdtype(dt, np.floating):
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
    if _pow2_scalar(span):
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

def _normal_raw(key, shape, dtype):
    lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
    u = _uniform_raw(key, lo, np.array(1., dtype), shape, dtype)
    # the erf_inv primitive: the CPU backend evaluates float32 erf_inv exactly as XLA:CPU does
    return lax.mul(_prng.const(np.sqrt(2), dtype), lax.erf_inv(u))


@jit(static_argnums=(1, 2), inline=True)
def _normal_impl(key, shape, dtype):
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

@jit(static_argnums=(3, 4, 5), inline=True)
def _randint_impl(key, minval, maxval, shape, dtype, maxval_out_of_range):
    dtype = np.dtype(dtype)
    if dtype.itemsize != 4:
        raise NotImplementedError(f"randint with dtype {dtype} needs 64-bit unsigned arithmetic (uint64), "
                                  f"which cranax does not support")
    minval = jnp.asarray(minval)
    maxval = jnp.asarray(maxval)
    if not dtypes.issubdtype(minval.dtype, np.integer):
        minval = minval.astype(int)
    if not dtypes.issubdtype(maxval.dtype, np.integer):
        maxval = maxval.astype(int)
    minval = jnp.broadcast_to(_convert_and_clip(minval, dtype), shape)
    maxval = jnp.broadcast_to(_convert_and_clip(maxval, dtype), shape)
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


del math
