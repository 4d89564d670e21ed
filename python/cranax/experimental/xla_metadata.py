"""``jax.experimental.xla_metadata``: ``set_xla_metadata``, XLA frontend attributes on the operations that
make values (the controlling-XLA guide). cranax has no XLA: values and derivatives are unchanged, the
``xla_metadata_value`` equation shows in jaxprs as in JAX's, and ``Lowered.as_text("hlo")`` prints the
attributes on the producing instruction (``frontend_attributes={...}``, see ``cranax.hlo_text``). The
context-manager / decorator form tags nothing: JAX attaches it to the equations' context, which cranax's
jaxprs do not carry."""
import functools as _functools

from ..core import Primitive as _Primitive
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..jaxpr import Jaxpr as _Jaxpr, Var as _Var
from .._pytree import tree_map as _tree_map
from ..numpy import asarray as _asarray

__all__ = ["set_xla_metadata"]

# An identity whose params are the attributes, sorted (key, value) pairs.
xla_metadata_value_p = _Primitive("xla_metadata_value")
xla_metadata_value_p.impl = lambda x, *, xla_metadata_kvs: _asarray(x)   # eager: an array, as JAX's op gives
xla_metadata_value_p.abstract_eval = lambda x, *, xla_metadata_kvs: x


def _inline(eqn):   # compiled as the identity
    v = _Var(eqn.invars[0].aval)
    return _Jaxpr([], [v], [v], []), eqn.invars


xla_metadata_value_p.inline_jaxpr = staticmethod(_inline)
# As JAX's: linear, the tangent tagged too; the cotangent passes through untagged.
_ad.deflinear(xla_metadata_value_p, lambda ct, x, **_: [ct])
_batching.defvectorized(xla_metadata_value_p)


class _Context:
    """``set_xla_metadata(**kw)`` without a value: a context manager, and a decorator that runs the function
    (and a jitted function's ``lower``...) inside it. It attaches nothing in cranax (see the module docs)."""

    __slots__ = ("updates",)

    def __init__(self, updates):
        self.updates = updates

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None

    def __call__(self, f):
        return _Wrapped(f, self)


class _Wrapped:
    def __init__(self, f, ctx):
        self._f = f
        self._ctx = ctx
        _functools.wraps(f)(self)

    def __call__(self, *args, **kwargs):
        with self._ctx:
            return self._f(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._f, name)
        if not callable(attr):
            return attr

        @_functools.wraps(attr)
        def wrapper(*args, **kwargs):
            with self._ctx:
                return attr(*args, **kwargs)
        return wrapper


def set_xla_metadata(x=None, **kwargs):
    """With a value ``x`` (a pytree): each leaf through the identity ``xla_metadata_value`` equation carrying
    ``kwargs`` as attributes of the operation that made it. Without: a context manager / decorator (tags
    nothing in cranax). Mirrors ``jax.experimental.xla_metadata.set_xla_metadata``."""
    if x is None:
        return _Context(kwargs)
    kvs = tuple(sorted(kwargs.items()))
    return _tree_map(lambda v: xla_metadata_value_p.bind(v, xla_metadata_kvs=kvs), x)
