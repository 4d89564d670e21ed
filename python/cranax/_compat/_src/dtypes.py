"""``jax._src.dtypes`` — equinox (``TypePromotionError``), flax (``dtypes.extended`` in ``flax.linen.fp8_ops``)."""
from ...dtypes import *  # noqa: F401,F403
from ...dtypes import TypePromotionError, extended, prng_key  # noqa: F401
import numpy as _np

DType = _np.dtype


class ExtendedDType:
    """Base of JAX's extended dtype instances (flax's ``fp8_meta_dtype_wrapper`` subclasses it); cranax's
    primitives accept no such dtype, so values of them cannot be built."""
    type: type
    _rules: type
