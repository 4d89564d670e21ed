"""``jax._src.dtypes`` — equinox (``from jax._src.dtypes import TypePromotionError``)."""
from ...dtypes import *  # noqa: F401,F403
from ...dtypes import TypePromotionError  # noqa: F401
