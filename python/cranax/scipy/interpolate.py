"""``cranax.scipy.interpolate``: mirrors ``jax.scipy.interpolate``."""
import itertools as _itertools

import numpy as _np

from .. import numpy as _jnp

__all__ = ["RegularGridInterpolator"]


class RegularGridInterpolator:
    """Interpolation on a rectilinear grid: ``points`` is one strictly ascending 1-D array per axis,
    ``values`` has shape (len(points[0]), ..., [trailing value dims]). Calling it with ``xi`` of shape
    (..., ndim) gives values of shape (...) + trailing dims, by ``method`` 'linear' or 'nearest'; points
    outside the grid get ``fill_value`` (``None``: extrapolate). ``bounds_error=True`` raises
    ``NotImplementedError`` (as JAX). Mirrors ``jax.scipy.interpolate.RegularGridInterpolator``."""

    def __init__(self, points, values, method="linear", bounds_error=False, fill_value=_np.nan):
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT; use `fill_value` instead")
        self.method = method
        self.fill_value = fill_value
        values = _jnp.asarray(values)
        if not _jnp.issubdtype(values.dtype, _jnp.inexact):
            values = values.astype(_jnp.float_)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has {values.ndim} dimensions")
        self.grid = tuple(_jnp.asarray(p, values.dtype) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _jnp.asarray(xi, self.values.dtype)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, but this "
                             f"RegularGridInterpolator has dimension {ndim}")
        lead = xi.shape[:-1]
        xi = xi.reshape(-1, ndim)
        idx, frac, outside = [], [], None
        for d, g in enumerate(self.grid):
            x = xi[:, d]
            i = _jnp.clip(_jnp.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
            idx.append(i)
            frac.append((x - g[i]) / (g[i + 1] - g[i]))
            out_d = (x < g[0]) | (x > g[-1])
            outside = out_d if outside is None else outside | out_d
        trail = self.values.shape[ndim:]
        if method == "linear":
            res = None
            for corner in _itertools.product((0, 1), repeat=ndim):
                w = None
                for d, bit in enumerate(corner):
                    wd = frac[d] if bit else 1 - frac[d]
                    w = wd if w is None else w * wd
                v = self.values[tuple(i + bit for i, bit in zip(idx, corner))]
                term = v * w.reshape(w.shape + (1,) * len(trail))
                res = term if res is None else res + term
        else:
            near = tuple(_jnp.where(f <= 0.5, i, i + 1) for i, f in zip(idx, frac))
            res = self.values[near]
        if self.fill_value is not None:
            o = outside.reshape(outside.shape + (1,) * len(trail))
            res = _jnp.where(o, _jnp.asarray(self.fill_value, res.dtype), res)
        return res.reshape(lead + trail)
