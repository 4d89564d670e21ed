"""``jax.extend.core.primitives``: the primitive objects (``add_p``, ``jit_p``, ...), for code that matches
equations by primitive (distrax inverts jaxprs this way)."""
from ... import lax as _lax
from ...custom_derivatives import custom_jvp_call_p, custom_vjp_call_p  # noqa: F401
from ...primitives.jit import jit_p  # noqa: F401

pjit_p = jit_p   # JAX's former name
globals().update({_n: getattr(_lax, _n) for _n in _lax.__all__ if _n.endswith("_p")})
