"""``jnp.bfloat16``, ``jnp.float8_*`` & co. (the ml_dtypes types JAX exports) and ``jnp.double``/``jnp.single``.

bfloat16 and the float8 formats float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e4m3b11fnuz,
float8_e3m4 and float8_e4m3 are computed (stored narrow, computed in float32 and rounded per operation; see
``cranax.dtypes``). The other names (float8_e8m0fnu, float4/float6, int1/int2/int4, ...) exist so that libraries which
name them at import time (flax's fp8 ops, TFP's dtype table, optax's tests) import; an array of one of these
dtypes raises ``TypeError: cranax does not support dtype ...`` as any other unsupported dtype does. The types come
from ml_dtypes (as in JAX); without ml_dtypes installed these names are absent (``AttributeError``).
"""
import numpy as _np

from ._scalar_types import _scalar_type

double = _scalar_type(_np.float64)
single = _scalar_type(_np.float32)

_NARROW = ("bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
           "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
           "int1", "int2", "int4", "uint1", "uint2", "uint4")
__all__ = ["double", "single"]

try:
    import ml_dtypes as _ml
except ImportError:   # optional: only the narrow names go missing
    _ml = None
if _ml is not None:
    for _name in _NARROW:
        if hasattr(_ml, _name):
            globals()[_name] = _scalar_type(getattr(_ml, _name))
            __all__.append(_name)
