"""``cranax.random``: JAX's ``jax.random`` namespace, its public names only (``dir`` shows what JAX's
does). The implementation, with the key-array class and its helpers, is :mod:`cranax._random`."""
from ._random import *  # noqa: F401,F403   (its __all__: JAX 0.10.2's names)
from ._random import __all__  # noqa: F401
from ._random import _canon_shape  # noqa: F401   (the shape check nn.initializers shares)
