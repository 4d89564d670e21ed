"""``install_as_jax()``: makes every ``import jax...`` in this process resolve to cranax.

A meta-path finder, first in ``sys.meta_path``, answers for ``jax``, ``jax.*``, ``jaxlib`` and ``jaxlib.*``
before any path finder can, so a real JAX installed beside cranax is never loaded:

* ``jax`` is its own module object whose attributes are cranax's, except ``__version__`` and
  ``__version_info__``, which give the JAX version whose API cranax implements (libraries pick their code paths
  by it); ``cranax.__version__`` is cranax's own.
* ``jax.X.Y`` is ``cranax._compat.X.Y`` where that exists (the private ``jax._src``/``jax.core`` names some
  libraries import, kept apart so that only alias mode sees them), else ``cranax.X.Y`` for a public module of
  cranax's, else ``ModuleNotFoundError`` naming ``jax.X.Y``.
* ``jaxlib`` is never found: ``ModuleNotFoundError`` (libraries that probe for it take their fallback).
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

__all__ = ["install_as_jax", "JAX_VERSION", "is_installed"]

JAX_VERSION = "0.10.2"
"""The JAX release whose API cranax implements: what ``jax.__version__`` says under the alias."""

# cranax's own implementation modules: not JAX names, so ``jax.<name>`` never reaches them.
_PRIVATE = frozenset({"api", "api_ad", "api_vmap", "api_pmap", "array", "jaxpr", "core", "primitives", "config", "tour",
                      "bench", "run", "_core", "_prng", "_version", "_alias", "_compat"})


_compat_names = {}   # attribute name -> whether cranax._compat has a module of that name


_compat_top = []


def _compat_modules():
    """The names of cranax._compat's top-level modules and packages, listed once (a find_spec per new
    ``jax.<name>`` read cost ~0.4 ms, dozens of them while a library's first trace runs)."""
    if not _compat_top:
        d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_compat")
        names = set()
        for f in os.listdir(d):
            if f.endswith(".py") and f != "__init__.py":
                names.add(f[:-3])
            elif os.path.isfile(os.path.join(d, f, "__init__.py")):
                names.add(f)
        _compat_top.append(frozenset(names))
    return _compat_top[0]


class _JaxModule(types.ModuleType):
    """The ``jax`` module under the alias: cranax's namespace with JAX's version."""

    def __getattr__(self, name):
        cranax = sys.modules["cranax"]
        compat = _compat_names.get(name)
        if compat is None:   # cached: libraries read e.g. jax.block_until_ready on every call (a find_spec each)
            compat = _compat_names[name] = not name.startswith("__") and name in _compat_modules()
        if compat:
            # ``jax.core`` without ``import jax.core``: the alias-mode module, not cranax's own ``core``.
            return importlib.import_module("jax." + name)
        try:
            v = getattr(cranax, name)
        except AttributeError:
            raise AttributeError(f"module 'jax' has no attribute '{name}'") from None   # JAX's text
        if isinstance(v, types.ModuleType) and name not in _PRIVATE:
            # ``jax.lax`` without ``import jax.lax``: the module as the import gives it (named ``jax.lax``)
            try:
                return importlib.import_module("jax." + name)
            except ImportError:   # (a module cranax binds under another name)
                return v
        # Functions and classes are kept in this module's own dict, so the next ``jax.block_until_ready``
        # is a plain attribute read, not this method (most of a µs, paid on every call of a small jitted
        # program). Other values (flags, ...) are read from cranax each time, in case cranax rebinds them.
        if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type)) and name in cranax.__dict__:
            self.__dict__[name] = v
        return v

    def __dir__(self):
        return sorted(set(dir(sys.modules["cranax"])) | set(self.__dict__))


class _AliasLoader(importlib.abc.Loader):
    """Hands back an existing module object (cranax's) under a ``jax`` name."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        if self.target is None:      # ``jax`` itself
            cranax = importlib.import_module("cranax")
            mod = _JaxModule("jax", cranax.__doc__)
            mod.__version__ = JAX_VERSION
            mod.__version_info__ = tuple(int(p) for p in JAX_VERSION.split("."))
            mod.__path__ = []
            mod.__file__ = getattr(cranax, "__file__", None)
            # ``jax.Array`` is the base of arrays, tracers and key arrays (``core.ArrayType``), named as JAX's
            # ``jax.jaxlib._jax.Array``; ``type(x)`` is the concrete class, printed ``jaxlib._jax.ArrayImpl``.
            mod.__dict__["Array"] = importlib.import_module("cranax.core").ArrayType
            return mod
        mod = importlib.import_module(self.target)
        # Named by the JAX name it serves (its ``__spec__`` says so too), so that Python's texts for a name it
        # lacks, ``from jax.X import name``'s ImportError and ``jax.X.name``'s AttributeError, name the module
        # the program imported, as JAX's do (the file they give stays cranax's). cranax's own code tells its
        # frames by ``__package__``, which keeps cranax's name.
        mod.__name__ = spec.name
        return mod

    def exec_module(self, module):
        pass


def _exists(name):
    if name in sys.modules:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ModuleNotFoundError, ValueError):     # a parent package is missing / has no spec
        return False


class _JaxFinder(importlib.abc.MetaPathFinder):
    """Resolves ``jax``/``jax.*`` to cranax and refuses ``jaxlib``."""

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top == "jaxlib":
            raise ModuleNotFoundError(f"No module named '{fullname}' (cranax.install_as_jax() is active: "
                                      f"cranax replaces jax and jaxlib)", name=fullname)
        if top != "jax":
            return None
        if fullname == "jax":
            return importlib.machinery.ModuleSpec("jax", _AliasLoader(None), is_package=True)
        rest = fullname[len("jax."):]
        target = None
        if _exists("cranax._compat." + rest):
            target = "cranax._compat." + rest
        elif rest.split(".")[0] not in _PRIVATE and _exists("cranax." + rest):
            target = "cranax." + rest
        if target is None:
            raise ModuleNotFoundError(f"No module named '{fullname}'", name=fullname)   # Python's text
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(target),
                                              is_package=hasattr(importlib.import_module(target), "__path__"))


_finder = _JaxFinder()


def is_installed():
    """True once ``install_as_jax()`` has run in this process."""
    return _finder in sys.meta_path


def install_as_jax():
    """Makes ``import jax`` (and every ``jax.*`` submodule) resolve to cranax in this process, so that
    unmodified JAX programs and libraries (optax, flax, equinox...) run on cranax. Call it before they are
    imported. ``jax.__version__`` then reports ``JAX_VERSION``; ``jaxlib`` imports raise
    ``ModuleNotFoundError``. Idempotent. Raises ``RuntimeError`` if a real ``jax`` is already imported.
    ``python -m cranax.run SCRIPT`` calls it before running the script."""
    if is_installed():
        return
    loaded = sys.modules.get("jax")
    if loaded is not None and not isinstance(loaded, _JaxModule):
        raise RuntimeError("cranax.install_as_jax(): a real 'jax' is already imported in this process; call it "
                           "before anything imports jax")
    sys.meta_path.insert(0, _finder)
    _mirror_class_modules()


# Classes a JAX program sees printed by their path (``type(e)``, an uncaught exception's last traceback line,
# ``repr(err)``): under the alias they carry JAX's module, where the alias also exports them (pickle finds
# them there). ``jax.Array``'s own class is JAX's ``jaxlib._jax.ArrayImpl``, which the alias does not serve
# (libraries probe jaxlib): the class only prints so (``Array._shown_as``), keeping its module for pickle.
_JAX_MODULES = {
    "jax._src.core": ("cranax.primitives.state", ("Ref",)),
    "jax._src.interpreters.partial_eval": ("cranax.interpreters.partial_eval", ("DynamicJaxprTracer",)),
    "jax._src.checkify": ("cranax.experimental._checkify",
                          ("Error", "ErrorEffect", "JaxException", "FailedCheckError", "NaNError",
                           "DivisionByZeroError", "OOBError", "BatchedError", "JaxRuntimeError")),
}


def _mirror_class_modules():
    importlib.import_module("cranax.array").Array._shown_as = "jaxlib._jax.ArrayImpl"
    importlib.import_module("cranax._profiler_server").ProfilerServer._shown_as = "jaxlib._profiler.ProfilerServer"
    base = importlib.import_module("cranax.core").ArrayType   # jax.Array: JAX's name, so it prints as JAX's
    base.__module__, base.__name__, base.__qualname__ = "jax.jaxlib._jax", "Array", "Array"
    for jax_module, (home, names) in _JAX_MODULES.items():
        mod = importlib.import_module(home)
        for name in names:
            getattr(mod, name).__module__ = jax_module
