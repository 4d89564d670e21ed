"""``cranax.experimental``: the parts of ``jax.experimental`` cranax has (``checkify`` for concrete checks,
``layout``)."""
from . import checkify
from . import layout

__all__ = ["checkify", "layout"]
