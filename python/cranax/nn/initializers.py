"""``cranax.nn.initializers``: functions ``init(key, shape, dtype=None, out_sharding=None) -> Array`` that
draw parameter arrays, built on ``cranax.random`` so that for the same key they give JAX's values bit for
bit (``orthogonal`` / ``delta_orthogonal`` to rounding: their QR is not LAPACK's). Mirrors
``jax.nn.initializers``."""
import math as _math
import typing as _typing

import numpy as _np

from .. import dtypes as _dtypes
from .. import numpy as jnp
from .. import random as _random

__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
           "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones",
           "orthogonal", "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform",
           "zeros"]


@_typing.runtime_checkable
class Initializer(_typing.Protocol):
    """What an initializer is: called as ``init(key, shape, dtype=None, out_sharding=None)``, it returns
    an array of ``shape`` and ``dtype`` (the default float when None). Mirrors
    ``jax.nn.initializers.Initializer``."""

    def __call__(self, key, shape, dtype=None, out_sharding=None):
        raise NotImplementedError


def _float(dtype):
    return _dtypes.canonicalize_dtype(jnp.float_ if dtype is None else dtype)


def _no_sharding(name, out_sharding):
    # cranax has one device: there is nothing to shard over.
    if out_sharding is not None:
        raise NotImplementedError(f"nn.initializers.{name}: out_sharding is not supported (one device)")


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (``key`` unused). Mirrors ``jax.nn.initializers.zeros``."""
    _no_sharding("zeros", out_sharding)
    return jnp.zeros(shape, _float(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (``key`` unused). Mirrors ``jax.nn.initializers.ones``."""
    _no_sharding("ones", out_sharding)
    return jnp.ones(shape, _float(dtype))


def constant(value, dtype=None):
    """An initializer filling with ``value``. Mirrors ``jax.nn.initializers.constant``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding("constant", out_sharding)
        return jnp.full(shape, value, dtype=_float(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer drawing uniformly from ``[0, scale)``. Mirrors ``jax.nn.initializers.uniform``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding("uniform", out_sharding)
        dt = _float(dtype)
        return _random.uniform(key, shape, dt) * jnp.array(scale, dt)
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer drawing from a normal of mean 0 and ``stddev``. Mirrors
    ``jax.nn.initializers.normal``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding("normal", out_sharding)
        dt = _float(dtype)
        return _random.normal(key, shape, dt) * jnp.array(stddev, dt)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer drawing a standard normal truncated to ``(lower, upper)``, times ``stddev`` (so
    the spread is below ``stddev``). Mirrors ``jax.nn.initializers.truncated_normal``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding("truncated_normal", out_sharding)
        dt = _float(dtype)
        return _random.truncated_normal(key, lower, upper, shape, dt) * jnp.array(stddev, dt)
    return init


def _size(shape, axis):
    if isinstance(axis, int):
        return shape[axis]
    return _math.prod([shape[i] for i in axis])


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a weight of ``shape``: the in/out sizes times the receptive field (the product
    of the axes that are none of in, out, batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor "
                         "with default in_axis. Must be at least 2D or specify in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    batch_size = _size(shape, batch_axis)
    receptive = _math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """An initializer whose samples have variance ``scale / n``, ``n`` being ``fan_in``, ``fan_out``, their
    mean (``fan_avg``) or geometric mean (``fan_geo_avg``) for ``mode``, the fans computed over
    ``in_axis``/``out_axis`` with the other non-batch axes as receptive field. ``distribution`` is
    ``"truncated_normal"`` (within ±2σ, rescaled to keep the variance), ``"normal"`` or ``"uniform"``
    (on ±√(3·variance)). A bad mode or distribution raises ``ValueError`` when the initializer is called;
    a shape under 2-D with the default ``in_axis`` raises ``ValueError``. Real float dtypes only. Mirrors
    ``jax.nn.initializers.variance_scaling``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding("variance_scaling", out_sharding)
        shape = _random._canon_shape(shape)
        dt = _float(dtype)
        if not _dtypes.issubdtype(dt, _np.floating):
            raise NotImplementedError(f"variance_scaling: dtype {dt} is not a real float dtype "
                                      "(cranax has no complex initializers yet)")
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dt)
        if distribution == "truncated_normal":
            # .8796... is the std of a standard normal truncated to (-2, 2).
            stddev = jnp.sqrt(variance) / jnp.array(.87962566103423978, dt)
            return _random.truncated_normal(key, -2, 2, shape, dt) * stddev
        if distribution == "normal":
            return _random.normal(key, shape, dt) * jnp.sqrt(variance)
        if distribution == "uniform":
            return _random.uniform(key, shape, dt, -1) * jnp.sqrt(3 * variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1.0, "fan_avg", "uniform")``. Mirrors ``jax.nn.initializers.glorot_uniform``."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1.0, "fan_avg", "truncated_normal")``. Mirrors
    ``jax.nn.initializers.glorot_normal``."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1.0, "fan_in", "uniform")``. Mirrors ``jax.nn.initializers.lecun_uniform``."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1.0, "fan_in", "truncated_normal")``. Mirrors
    ``jax.nn.initializers.lecun_normal``."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(2.0, "fan_in", "uniform")``. Mirrors ``jax.nn.initializers.he_uniform``."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(2.0, "fan_in", "truncated_normal")``. Mirrors ``jax.nn.initializers.he_normal``."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def _orthonormal_columns(z):
    """The Q of ``z``'s QR factorization with R's diagonal made positive (so unique for full-rank ``z``):
    ``jnp.linalg.qr`` when cranax has it, else classical Gram-Schmidt applied twice per column, which is as
    accurate as Householder QR to rounding (each column is orthogonalized against the ones before, then
    again against what the first pass left)."""
    linalg = getattr(jnp, "linalg", None)
    if linalg is not None and hasattr(linalg, "qr"):
        q, r = linalg.qr(z)
        return q * jnp.expand_dims(jnp.sign(jnp.diagonal(r)), -2)
    cols = []
    for j in range(z.shape[1]):
        v = z[:, j]
        if cols:
            q = jnp.stack(cols, axis=1)
            for _ in range(2):
                v = v - q @ (q.T @ v)
        cols.append(v / jnp.sqrt(jnp.sum(v * v)))
    return jnp.stack(cols, axis=1)


def _random_orthogonal(key, n, m, dtype):
    """An (n, m) matrix with orthonormal rows or columns: the Q of the QR of a normal sample with its
    columns' signs fixed by diag(R) (Mezzadri's recipe, as ``jax.random.orthogonal``)."""
    x = _orthonormal_columns(_random.normal(key, (max(n, m), min(n, m)), dtype))
    return x.T if n < m else x


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer giving ``scale`` times a (semi-)orthogonal matrix: the array, seen as rows × the
    ``column_axis`` length, has orthonormal rows or columns. Needs a shape of at least 2-D
    (``ValueError``); a zero-size shape gives zeros. Mirrors ``jax.nn.initializers.orthogonal``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding("orthogonal", out_sharding)
        dt = _float(dtype)
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dtype=dt)
        n_cols = shape[column_axis]
        n_rows = _math.prod(shape) // n_cols
        q = _random_orthogonal(key, n_rows, n_cols, dt)
        q = jnp.reshape(q, tuple(_np.delete(shape, column_axis)) + (n_cols,))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dt) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer for 3-D, 4-D or 5-D convolution kernels (spatial..., in, out): zeros except an
    orthogonal (in, out) matrix at the spatial centre, so the convolution starts as an isometry. Other
    ranks, or ``in > out``, raise ``ValueError``. Mirrors ``jax.nn.initializers.delta_orthogonal``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        _no_sharding("delta_orthogonal", out_sharding)
        dt = _float(dtype)
        shape = tuple(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dt).at[centre + (Ellipsis,)].set(ortho)
    return init
