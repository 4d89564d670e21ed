"""``jax._src.ad_util`` — lineax (``from jax._src.ad_util import stop_gradient_p``, for diffrax)."""
from ...lax import stop_gradient_p  # noqa: F401
from ...interpreters.ad import Zero, zeros_like_aval  # noqa: F401
