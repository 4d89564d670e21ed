"""``jax._src.checkify`` — flax.nnx (``nnx.checkify`` names ``checkify_lib.Out``, ``JaxException``,
``user_checks`` and calls ``checkify``): the public ``jax.experimental.checkify`` plus those names."""
import typing as _tp

from ...experimental.checkify import *  # noqa: F401,F403
from ...experimental.checkify import JaxException  # noqa: F401

Out = _tp.TypeVar("Out")
