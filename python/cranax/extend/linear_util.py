"""``jax.extend.linear_util``: ``wrap_init`` and ``WrappedFun``, a function with transformations applied lazily
(``fun.call_wrapped(*args)``), as JAX's extension API exposes them. Used by libraries that build functions for
``jax.core``-level tracing (``partial_eval.trace_to_jaxpr_dynamic``)."""
from collections.abc import Callable

__all__ = ["Callable", "WrappedFun", "wrap_init", "Store", "StoreException", "transformation", "transformation_with_aux",
           "cache", "merge_linear_aux"]


class StoreException(Exception):
    pass


class Store:
    """Holds one auxiliary value set once by a transformation."""

    __slots__ = ("_val",)
    _EMPTY = object()

    def __init__(self):
        self._val = Store._EMPTY

    def store(self, val):
        if self._val is not Store._EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    @property
    def val(self):
        if self._val is Store._EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __nonzero__(self):
        return self._val is not Store._EMPTY

    __bool__ = __nonzero__


class WrappedFun:
    """``f`` with fixed keyword ``params`` and a list of generator-style transformations; ``call_wrapped``
    runs them around ``f``."""

    def __init__(self, f, transforms=(), params=(), debug_info=None):
        self.f = f
        self.transforms = tuple(transforms)
        self.params = tuple(params)
        self.debug_info = debug_info

    @property
    def __name__(self):
        return getattr(self.f, "__name__", "<unnamed function>")

    def wrap(self, gen, gen_static_args, out_store):
        return WrappedFun(self.f, ((gen, gen_static_args, out_store),) + self.transforms, self.params,
                          self.debug_info)

    def call_wrapped(self, *args, **kwargs):
        stack = []
        for gen, static, store in self.transforms:
            g = gen(*(static + args), **kwargs)
            args, kwargs = next(g)
            stack.append((g, store))
        ans = self.f(*args, **dict(self.params, **kwargs))
        for g, store in reversed(stack):
            ans = g.send(ans)
            if store is not None:
                ans, aux = ans
                store.store(aux)
        return ans

    def __repr__(self):
        return f"Wrapped function: {self.__name__}"


def wrap_init(f, params=None, *, debug_info=None):
    """``f`` as a ``WrappedFun`` with keyword ``params``."""
    return WrappedFun(f, (), tuple(sorted((params or {}).items())), debug_info)


def transformation(gen, fun, *gen_static_args):
    """Applies the generator ``gen`` (yields ``(args, kwargs)``, is sent the result, yields the new result)."""
    return fun.wrap(gen, gen_static_args, None)


def transformation_with_aux(gen, fun, *gen_static_args):
    """As ``transformation`` for a generator yielding ``(result, aux)``; returns ``(fun, store)``."""
    store = Store()
    return fun.wrap(gen, gen_static_args, store), lambda: store.val


transformation2 = transformation
transformation_with_aux2 = transformation_with_aux


def cache(call, *, explain=None):
    """Identity (cranax caches compiled programs by signature, not by wrapped function)."""
    return call


def merge_linear_aux(aux1, aux2):
    try:
        out1 = aux1()
    except StoreException:
        return False, aux2()
    return True, out1
