"""``jax.interpreters.xla`` — tensorflow-probability's JAX substrate (distrax) copies the ``np.ndarray`` entry
of ``canonicalize_dtype_handlers`` for its ndarray subclass. cranax canonicalizes every ndarray (subclasses
included) itself; the table records what was registered."""
import numpy as _np

from ...dtypes import canonicalize_dtype as _canonicalize_dtype

canonicalize_dtype_handlers = {_np.ndarray: lambda x: _np.asarray(x, _canonicalize_dtype(x.dtype))}
