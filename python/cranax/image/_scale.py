"""Separable resampling as JAX's ``jax.image`` does it: per spatial axis, an (input, output) weight
matrix sampled from a kernel (triangle, Keys cubic, OpenCV/PyTorch cubic, Lanczos, box area) at the output
pixel centres mapped back to the input, widened by the scale when antialiasing a downsample, normalized per
output pixel; the axes are then contracted with one ``einsum``. Nearest neighbour is a gather."""
import enum
import math

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from .. import numpy as jnp
from ..core import get_aval
from ..numpy import _promotion

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Resampling methods. ``from_string`` accepts ``'nearest'``, ``'linear'``/``'bilinear'``/
    ``'trilinear'``/``'triangle'``, ``'lanczos3'``, ``'lanczos5'``, ``'cubic'``/``'bicubic'``/``'tricubic'``,
    ``'cubic-pytorch'``/``'bicubic-pytorch'`` and ``'area'``. Mirrors ``jax.image.ResizeMethod``."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s):
        """The method named ``s``; an unknown name raises ``ValueError``."""
        try:
            return _NAMES[s]
        except (KeyError, TypeError):
            raise ValueError(f'Unknown resize method "{s}"') from None


_NAMES = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
          "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
          "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC,
          "tricubic": ResizeMethod.CUBIC, "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
          "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA}


def _lanczos(radius):
    def kernel(x):
        # sinc(x) sinc(x / radius), with its limit 1 near 0 and 0 outside the radius
        y = radius * jnp.sin(_np.pi * x) * jnp.sin(_np.pi * x / radius)
        out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, _np.pi ** 2 * x ** 2, 1)), 1)
        return jnp.where(x > radius, 0., out)
    return kernel


def _keys_cubic(x):
    # Keys' cubic convolution with a = -0.5
    near = ((1.5 * x - 2.5) * x) * x + 1.
    far = ((-0.5 * x + 2.5) * x - 4.) * x + 2.
    return jnp.where(x >= 2., 0., jnp.where(x >= 1., far, near))


def _opencv_cubic(x):
    # the same family with a = -0.75 (OpenCV's and PyTorch's choice)
    a = -0.75
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, far, near))


def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


_AREA = object()
# method -> (support radius, kernel)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}

_TINY = 1000. * float(_np.finfo(_np.float32).eps)   # a weight sum below this is treated as no coverage


def _normalize(w):
    total = jnp.sum(w, axis=0, keepdims=True)
    return jnp.where(jnp.abs(total) > _TINY, jnp.divide(w, jnp.where(total != 0, total, 1)), 0)


def _weight_matrix(in_size, out_size, scale, translation, kernel, antialias, edge_padding, radius):
    """The (in_size, out_size) resampling weights of one axis: output pixel ``j``'s centre maps to input
    coordinate ``(j + 0.5 - translation) / scale - 0.5``."""
    dt = _dtypes.result_type(scale, translation)
    inv_scale = 1. / scale
    kernel_scale = jnp.maximum(inv_scale, 1.) if antialias else 1.
    sample = (jnp.arange(out_size, dtype=dt) + 0.5) * inv_scale - translation * inv_scale - 0.5
    if edge_padding:
        if antialias:
            k = math.ceil(radius * max(1.0 / float(scale), 1.0))
        else:
            k = radius
    else:
        k = 0
    taps = jnp.arange(-k, in_size + k, dtype=dt)
    if kernel is _AREA:
        # overlap of output cell [j/s - t/s, (j+1)/s - t/s) with input cell [i, i+1)
        lo = jnp.arange(out_size, dtype=dt) * inv_scale - translation * inv_scale
        hi = lo + inv_scale
        lo_in = jnp.arange(in_size, dtype=dt)
        overlap = jnp.minimum(hi[None, :], (lo_in + 1.0)[:, None]) - jnp.maximum(lo[None, :], lo_in[:, None])
        w = jnp.maximum(0.0, overlap)
    else:
        w = kernel(jnp.abs(sample[None, :] - taps[:, None]) / kernel_scale)
    if edge_padding:
        # taps past the edges read the edge pixel (replicate padding): fold their weights onto it
        rows = jnp.clip(taps.astype(jnp.int32), 0, in_size - 1)
        cols = lax.broadcast_in_dim(jnp.arange(out_size), (taps.shape[0], out_size), (1,))
        w = jnp.zeros((in_size, out_size), dtype=dt).at[rows[:, None], cols].add(w)
        return _normalize(w)
    w = _normalize(w)
    inside = jnp.logical_and(sample >= -0.5, sample <= in_size - 0.5)
    return jnp.where(inside[None, :], w, 0)


def _apply(x, shape, dims, scales, translations, kernel, antialias, edge_padding, radius):
    if not dims:
        return x
    nd = x.ndim
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if 2 * nd > len(letters):
        raise ValueError(f"image resampling supports up to {len(letters) // 2} dimensions, got {nd}")
    ins, weights, out = [letters[:nd]], [], list(letters[:nd])
    for i, d in enumerate(dims):
        d = int(d) % nd
        w = _weight_matrix(x.shape[d], shape[d], scales[i], translations[i], kernel, antialias, edge_padding,
                           radius).astype(get_aval(x).dtype)
        ins.append(letters[d] + letters[nd + i])     # (in, out) weights of axis d
        weights.append(w)
        out[d] = letters[nd + i]
    return jnp.einsum(",".join(ins) + "->" + "".join(out), x, *weights)


def _method(method):
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise ValueError(f'Unknown resize method "{method}"')
    return method


def _check_shape(shape, image):
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x;  "
                         f"{shape} vs {image.shape}")
    return shape


def _inexact(x):
    return _promotion._promote("image", jnp.asarray(x), to_float=True)[0]


def scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True, precision=None):
    """Resamples ``image`` to ``shape`` along ``spatial_dims``: output pixel centre ``j + 0.5`` is read at
    input coordinate ``(j + 0.5 - translation) / scale`` with ``method``'s kernel (``'nearest'`` raises
    ``ValueError``); with ``antialias``, downsampling widens the kernel by ``1/scale``. ``scale`` and
    ``translation`` (one per spatial dim) may be traced. Output pixels sampling outside the input are 0.
    Integer images give the default float. ``precision`` is accepted for JAX's signature (cranax's CPU
    contraction is always full float32/float64). Mirrors ``jax.image.scale_and_translate``."""
    image = jnp.asarray(image)
    shape = _check_shape(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for scale_and_translate.")
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    image = _inexact(image)
    scale, translation = _promotion._promote("scale_and_translate", jnp.asarray(scale), jnp.asarray(translation),
                                             to_float=True)
    spatial_dims = tuple(spatial_dims)
    if scale.shape != (len(spatial_dims),) or translation.shape != (len(spatial_dims),):
        raise ValueError(f"scale_and_translate: scale and translation need one entry per spatial dim "
                         f"({len(spatial_dims)}), got shapes {scale.shape} and {translation.shape}")
    return _apply(image, shape, spatial_dims, [scale[i] for i in range(len(spatial_dims))],
                  [translation[i] for i in range(len(spatial_dims))], kernel, antialias, edge_padding, radius)


def _resize_nearest(x, shape):
    for d in range(x.ndim):
        m, n = x.shape[d], shape[d]
        if m == n:
            continue
        # output j takes input floor((j + 0.5) * m / n), computed in float32 as JAX does
        idx = jnp.floor(((jnp.arange(n, dtype=_np.float32) + 0.5) * _np.float32(m) / _np.float32(n))
                        .astype(_np.float32)).astype(_np.int32)
        x = jnp.take(x, idx, axis=d)
    return x


def resize(image, shape, method, antialias=True, precision=None):
    """``image`` resampled to ``shape`` (same rank; every axis whose size changes is resized) with
    ``method`` (a ``ResizeMethod`` or its name: nearest, linear/bilinear/trilinear, cubic/bicubic/tricubic,
    cubic-pytorch, lanczos3, lanczos5, area). Pixel centres are aligned (half-pixel convention); with
    ``antialias`` (default) downsampling low-pass filters as it goes. Integer images give the default float
    (except ``'nearest'``, which keeps the dtype). A shape of the wrong rank or an unknown method raises
    ``ValueError``. Mirrors ``jax.image.resize``."""
    image = jnp.asarray(image)
    shape = _check_shape(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    dims = tuple(i for i in range(len(shape)) if image.shape[i] != shape[i])
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    return _apply(image, shape, dims, scales, [0.] * len(dims), kernel, antialias, edge_padding, radius)
