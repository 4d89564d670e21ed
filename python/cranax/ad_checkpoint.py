"""``cranax.ad_checkpoint``: ``checkpoint_name``, ``checkpoint_policies``, the policy answers (``Saveable``,
``Recompute``, ``Offloadable``) and ``print_saved_residuals``, as ``jax.ad_checkpoint``. ``checkpoint`` itself
is ``cranax.checkpoint``: as in JAX 0.10.2, ``ad_checkpoint.checkpoint`` / ``ad_checkpoint.remat`` are gone
(reading them raises JAX's AttributeError)."""
from .primitives.remat import (Offloadable, Recompute, Saveable, checkpoint_name, checkpoint_policies,  # noqa: F401
                               print_saved_residuals)

__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint_name", "checkpoint_policies", "print_saved_residuals"]

_REMOVED = {"checkpoint": "jax.checkpoint", "remat": "jax.remat"}


def __getattr__(name):
    if name in _REMOVED:
        raise AttributeError(f"jax.ad_checkpoint.{name} was deprecated in JAX v0.8.2 and removed in JAX v0.10.0; "
                             f"use {_REMOVED[name]} instead.")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
