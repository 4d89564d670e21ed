"""Arrays to and from bytes, text, files and other libraries: ``frombuffer``, ``fromstring``, ``load``,
``save``, ``savez``, ``from_dlpack``, ``array_repr``, ``array_str`` (``fromfile``/``fromiter`` raise, as
in JAX: they read state). Mirrors ``jax.numpy``."""
import numpy as _np

from .. import dlpack as _dlpack   # jax.dlpack sits on the array layer (array, core, dtypes only)
from ._promotion import array, asarray

__all__ = ["frombuffer", "fromstring", "fromfile", "fromiter", "load", "save", "savez", "from_dlpack",
           "array_repr", "array_str"]

# NumPy's own functions, as JAX exports them (they format or write a cranax array through NumPy)
array_repr = _np.array_repr
array_str = _np.array_str
save = _np.save
savez = _np.savez


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """The 1-D array of ``dtype`` read from the bytes of ``buffer``. Mirrors ``jax.numpy.frombuffer``."""
    return asarray(_np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """The 1-D array of ``dtype`` parsed from the text ``string`` split at ``sep``. Mirrors
    ``jax.numpy.fromstring``."""
    return asarray(_np.fromstring(string=string, dtype=dtype, count=count, sep=sep))


def _impure(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(
            f"jnp.{name}() is not implemented because it may be non-pure and thus unsafe for use with JIT and "
            f"other JAX transformations. Consider using jnp.asarray(np.{name}(...)) instead, although care "
            f"should be taken if np.{name} is used within a jax transformations because of its potential "
            f"side-effect of consuming the {'file' if name == 'fromfile' else 'iterable'} object; for more "
            f"information see https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions")
    fn.__name__ = name
    fn.__doc__ = f"Raises NotImplementedError (it reads state), as ``jax.numpy.{name}`` does."
    return fn


fromfile = _impure("fromfile")
fromiter = _impure("fromiter")


def load(file, *args, **kwargs):
    """``numpy.load``, with an array result as a cranax array (an ``.npz`` archive is returned as NumPy's
    lazy mapping). Mirrors ``jax.numpy.load``."""
    out = _np.load(file, *args, **kwargs)
    if isinstance(out, _np.ndarray):
        return asarray(out)
    return out


def from_dlpack(x, /, *, device=None, copy=None):
    """The array an object exporting ``__dlpack__`` holds: ``jax.dlpack.from_dlpack(x, device=device,
    copy=copy)`` (aliasing aligned CPU buffers, see there). Mirrors ``jax.numpy.from_dlpack``."""
    return _dlpack.from_dlpack(x, device=device, copy=copy)


