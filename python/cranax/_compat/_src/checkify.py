"""``jax._src.checkify`` — flax.nnx (``nnx.checkify`` names ``checkify_lib.Out``, ``JaxException``,
``user_checks`` and calls ``checkify``): the public ``jax.experimental.checkify`` plus those names (and the exception classes)."""
import typing as _tp

from ...experimental._checkify import *  # noqa: F401,F403   (its __all__: the public names and the exceptions)
from ...experimental._checkify import ErrorEffect, JaxException  # noqa: F401

Out = _tp.TypeVar("Out")
