"""The tracing core: abstract values, primitives, traces and tracers.

Follows JAX's "current trace" (stackless) model: a thread-local names the trace that ``Primitive.bind``
dispatches to. Each transformation has one ``Trace`` subclass (eval, staging to a jaxpr, jvp, batching)
whose ``process_primitive`` applies that transformation's rule for the primitive. Values owned by another
trace are constants to it.
"""
import os
import sys
import threading
import types
from collections import namedtuple
from contextlib import contextmanager

import numpy as np

from . import dtypes
from .sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec, get_abstract_mesh
from .errors import (ConcretizationTypeError, TracerArrayConversionError, TracerBoolConversionError,
                     TracerIntegerConversionError, UnexpectedTracerError)

__all__ = ["ShapedArray", "Primitive", "Trace", "Tracer", "EvalTrace", "get_aval", "set_current_trace",
           "current_trace", "concrete_or_error"]


# ----------------------------------------------------------------------------------------------- avals

class ShapedArray:
    """The abstract value of an array: ``shape`` (tuple of ints), ``dtype`` (numpy dtype) and ``weak_type``
    (True for values that came from Python scalars and give way in type promotion). Mirrors
    ``jax.core.ShapedArray``."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash", "_sharding")

    def __init__(self, shape, dtype, weak_type=False, *, sharding=None):
        self.shape = shape if type(shape) is tuple else tuple(shape)
        self.dtype = dtype if type(dtype) is np.dtype else np.dtype(dtype)
        self.weak_type = weak_type is True or bool(weak_type)
        self._hash = None
        self._sharding = None if sharding is None else _explicit_sharding(sharding, len(self.shape))
        if self._sharding is not None:
            global sharded_types_seen
            sharded_types_seen = True

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def sharding(self):
        """The abstract sharding: for an array split over ``Explicit`` mesh axes (JAX's sharding in types,
        printed ``float32[8@i,3]``) its spec over the mesh's abstract form; else replicated over the empty
        mesh in use (``set_mesh``'s abstract form), as JAX prints it: ``NamedSharding(mesh=AbstractMesh((),
        axis_types=()), spec=P(None, None))`` when none is set."""
        s = self._sharding
        if s is not None:
            return NamedSharding(_abstract_mesh(s.mesh), s.spec)
        return NamedSharding(get_abstract_mesh(), PartitionSpec(*([None] * len(self.shape))))

    def update(self, shape=None, dtype=None, weak_type=None, sharding=None):
        # (a new shape drops the sharding unless one is given: its spec was per dimension of the old one)
        sh = sharding if sharding is not None else (self._sharding if shape is None else None)
        return ShapedArray(self.shape if shape is None else shape, self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type, sharding=sh)

    def strip_weak_type(self):
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False, sharding=self._sharding)

    def shard(self, mesh, manual_axes, check_vma, spec):
        """The type of one block of a value of this type split by ``spec`` (a PartitionSpec) over ``mesh``,
        as a ``shard_map`` body sees it: each dimension divided by the sizes of the mesh axes ``spec`` names
        for it (cranax's blocks carry no sharding). What hi-types' ``shard`` build on. Mirrors JAX's
        ``ShapedArray.shard``."""
        sizes = dict(mesh.shape)
        return ShapedArray(tuple(n // _axes_size(spec, d, sizes) for d, n in enumerate(self.shape)), self.dtype,
                           self.weak_type)

    def unshard(self, mesh, check_vma, spec):
        """The type of the value a ``shard_map`` assembles from blocks of this type by ``spec``: each
        dimension multiplied by the sizes of its mesh axes, split over them in the type where they are
        ``Explicit`` (``float32[8@i,3]``). Mirrors JAX's ``ShapedArray.unshard``."""
        sizes = dict(mesh.shape)
        shape = tuple(n * _axes_size(spec, d, sizes) for d, n in enumerate(self.shape))
        parts = tuple(spec)[:len(shape)]
        return ShapedArray(shape, self.dtype, self.weak_type,
                           sharding=NamedSharding(mesh, PartitionSpec(*parts, *[None] * (len(shape) - len(parts)))))

    def str_short(self, short_dtypes=True, mesh_axis_types=False):
        """``f32[3,4]``: the form jaxprs print; ``f32[8@i,3]`` for a dimension split over mesh axis ``i``."""
        name = dtypes.short_name(self.dtype) if short_dtypes or self.dtype == dtypes.float0 else self.dtype.name
        if self._sharding is None:
            return f"{name}[{','.join(str(d) for d in self.shape)}]"
        return f"{name}[{_dims_text(self.shape, self._sharding.spec)}]"

    def __eq__(self, other):
        return self is other or (type(other) is ShapedArray and self.shape == other.shape
                                 and self.dtype == other.dtype and self.weak_type == other.weak_type
                                 and _sharding_key(self) == _sharding_key(other))

    def __hash__(self):
        h = self._hash
        if h is None:
            s = self._sharding
            h = self._hash = hash((self.shape, self.dtype, self.weak_type) if s is None else
                                  (self.shape, self.dtype, self.weak_type, s.spec))
        return h

    def __repr__(self):
        w = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(short_dtypes=False)}{w})"

    def __str__(self):
        """``float32[2,3]``, ``~float32[]`` when weakly typed: as JAX prints an aval."""
        return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)


# True once some aval is split over an Explicit mesh axis: from then on primitives' output avals go through
# ``propagate_sharding`` (``interpreters.sharding_types``); programs that never shard pay nothing for it.
sharded_types_seen = False
propagate_sharding = None


def _spec(aval):
    s = aval._sharding
    return None if s is None else s.spec


def _sharding_key(aval):
    # The spec and the mesh itself (its devices): a jitted function's executable and output types are per
    # device assignment, as JAX's cache keys them, so arrays on another mesh of the same shape miss the entry.
    s = aval._sharding
    return None if s is None else (s.spec, s.mesh)


def _dims_text(shape, spec):
    """JAX's dimensions of a sharded type: ``8@i`` for a dimension split over axis ``i``, ``8@(i,j)`` over two."""
    out = []
    for d, p in zip(shape, spec):
        if p is None:
            out.append(str(d))
        elif isinstance(p, tuple):
            out.append(f"{d}@({','.join(p)})")
        else:
            out.append(f"{d}@{p}")
    return ",".join(out)


def _abstract_mesh(mesh):
    if isinstance(mesh, AbstractMesh):
        return mesh
    return AbstractMesh(tuple(mesh.shape.values()), tuple(mesh.axis_names), mesh.axis_types)


def _axes_size(spec, d, sizes):
    """The number of blocks ``spec`` splits dimension ``d`` into (the product of its mesh axes' sizes)."""
    p = tuple(spec)[d] if d < len(tuple(spec)) else None
    k = 1
    for a in (() if p is None else (p if isinstance(p, tuple) else (p,))):
        k *= sizes[a]
    return k


def _explicit_sharding(sharding, ndim):
    """What an aval keeps of ``sharding``: the mesh and the spec (padded to ``ndim``) of its ``Explicit`` axes,
    the sharding JAX's types carry; None when no dimension is split over one."""
    spec = getattr(sharding, "spec", None)
    mesh = getattr(sharding, "mesh", None)
    if spec is None or mesh is None:
        return None
    explicit = {n for n, t in zip(mesh.axis_names, getattr(mesh, "axis_types", ())) if t is AxisType.Explicit}

    def keep(p):
        names = tuple(a for a in (p if isinstance(p, tuple) else (p,)) if a is not None and a in explicit)
        return None if not names else (names[0] if len(names) == 1 and not isinstance(p, tuple) else names)
    entries = [keep(p) for p in tuple(spec)[:ndim]]
    entries += [None] * (ndim - len(entries))
    if not explicit:
        return None
    # (replicated over an Explicit mesh: the type still carries the mesh, as JAX's, so that results computed
    # from the array stay on it)
    return NamedSharding(mesh, PartitionSpec(*entries))


def _scalar_aval(x):
    return ShapedArray((), dtypes.dtype(x, canonicalize=True), weak_type=dtypes.is_weakly_typed(x))


_PY_SCALARS = (bool, int, float, complex)


def get_aval(x):
    """The abstract value of a tracer, Array, NumPy array/scalar or Python scalar. Raises ``TypeError`` for
    anything else, naming its type."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if isinstance(x, _PY_SCALARS) or isinstance(x, np.generic):
        return _scalar_aval(x)
    if isinstance(x, np.ndarray):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), False)
    to_aval = hi_avals.get(type(x))
    if to_aval is not None:
        return to_aval(x)
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid JAX type")


# What a hi-type's aval class marks as shared with its values' class: read on a tracer of that type, an
# ``aval_property`` is ``fget(tracer)`` and an ``aval_method`` is ``fun`` bound to the tracer (JAX's names).
aval_property = namedtuple("aval_property", ["fget"])
aval_method = namedtuple("aval_method", ["fun"])
_MISSING = object()


def _hi_getattr(self, name):
    # (only for names found nowhere else) JAX's text; a hi-type's aval lends its tracers the methods and
    # properties it marks with ``aval_method``/``aval_property`` (what its values' class has)
    attr = getattr(self.aval, name, _MISSING) if not name.startswith("__") else _MISSING
    if attr is _MISSING:
        raise AttributeError(f"{type(self).__name__} has no attribute {name}")
    if type(attr) is aval_property:
        return attr.fget(self)
    if type(attr) is aval_method:
        return types.MethodType(attr.fun, self)
    return attr


_hi_classes = {}


def hi_tracer_class(cls):
    """The class of ``cls``'s tracers whose aval is a hi-type: the same layout and name, and attribute reads
    that fall through to the aval (``_hi_getattr``). A separate class, since a ``__getattr__`` on every tracer
    would slow all their attribute reads (CPython then does not specialize them)."""
    sub = _hi_classes.get(cls)
    if sub is None:
        sub = _hi_classes[cls] = type(cls.__name__, (cls,), {"__slots__": (), "__getattr__": _hi_getattr,
                                                               "__module__": cls.__module__,
                                                               "__qualname__": cls.__qualname__})
    return sub


# Value class → its abstract value, for the classes ``jax.experimental.hijax.register_hitype`` registers (values
# of a user's hi-type, such as a quantized array: one value of one type to the tracing machinery).
hi_avals = {}


def is_hi(aval):
    """True for a hi-type's abstract value (``jax.experimental.hijax.HiType``: it lowers to ``lo_ty()``)."""
    return type(aval) is not ShapedArray and hasattr(aval, "lo_ty")


def typeof(x):
    """The abstract value (``ShapedArray``: shape, dtype, weak_type) of an array, tracer, NumPy value or Python
    scalar: ``typeof(jnp.ones((2, 3)))`` prints ``float32[2,3]``, ``typeof(1.0)`` ``~float32[]``. Raises
    ``TypeError`` for other values. Mirrors ``jax.typeof``."""
    hook = getattr(type(x), "_cranax_typeof", None)   # values whose aval is not a plain one (key arrays)
    if hook is not None:
        return hook(x)
    try:
        return get_aval(x)
    except TypeError:
        raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type") from None


class _WithDtype:
    """What ``TypedInt``/``TypedFloat``/``TypedComplex`` share: the Python scalar (``_base``) plus its dtype."""

    __slots__ = ()

    weak_type = True   # as the Python scalar it stands for

    def __new__(cls, value, dtype):
        v = super().__new__(cls, value)
        v.dtype = np.dtype(dtype)
        return v

    def __repr__(self):
        return f"{type(self).__name__}({self._base(self)}, dtype={self.dtype.name})"

    def __getnewargs__(self):
        return (self._base(self), self.dtype)


class TypedInt(_WithDtype, int):
    """JAX 0.10.2's Python int carrying a dtype (``jax._src.literals.TypedInt``): what ``checkify`` returns for
    a Python int output, ``TypedInt(1, dtype=int32)``. An ``int`` everywhere else (weakly typed, as a Python
    int is); cranax gives it no ``aval`` attribute, so it travels as the int it is."""

    _base = int


class TypedFloat(_WithDtype, float):
    """JAX 0.10.2's Python float carrying a dtype: ``TypedFloat(1.0, dtype=float32)``; see ``TypedInt``."""

    __slots__ = ("dtype",)
    _base = float

    def __str__(self):
        return str(float(self))


class TypedComplex(_WithDtype, complex):
    """JAX 0.10.2's Python complex carrying a dtype: ``TypedComplex((1+2j), dtype=complex64)``."""

    __slots__ = ("dtype",)
    _base = complex


def typed_python_scalar(x):
    """A Python int/float/complex as JAX 0.10.2 hands it back after canonicalization (``TypedInt`` etc. of
    the default dtype); anything else (bool included, as JAX) unchanged."""
    t = type(x)
    if t is int:
        return TypedInt(x, dtypes.canonicalize_dtype(np.int64))
    if t is float:
        return TypedFloat(x, dtypes.canonicalize_dtype(np.float64))
    if t is complex:
        return TypedComplex(x, dtypes.canonicalize_dtype(np.complex128))
    return x


class TypedScalar:
    """A concrete rank-0 constant with an explicit aval: how a Python scalar travels once type promotion has
    given it a dtype (it keeps ``weak_type``). Jaxprs inline it as a literal. ``py``: the Python scalar a
    weakly typed one came from, which its literal prints (JAX keeps a weak literal's Python value: ``x * 0.1``
    prints ``0.1:f32[]`` while its value is float32's); None otherwise."""

    __slots__ = ("val", "aval", "py")

    def __init__(self, val, aval, py=None):
        self.val = val
        self.aval = aval
        self.py = py

    def __repr__(self):
        return f"TypedScalar({self.val!r}, {self.aval})"


_SCALAR_TYPES = {}


def typed_scalar(val, dtype, weak_type):
    dtype = np.dtype(dtype)
    t = type(val)
    if (t is float and dtype.kind == "f") or (t is int and dtype.kind in "iu" and -2**31 <= val < 2**31
                                              and (dtype.kind == "i" or val >= 0)):
        av = _SCALAR_TYPES.get((dtype, weak_type))
        if av is None:
            av = _SCALAR_TYPES[(dtype, weak_type)] = ShapedArray((), dtype, weak_type)
        if weak_type and t is float:
            with np.errstate(over="ignore"):   # a weak 1e40 is inf in float32 without a warning, as in JAX
                return TypedScalar(dtype.type(val), av, val)
        return TypedScalar(dtype.type(val), av, float(val) if weak_type and dtype.kind == "f" else None)
    if t is int and dtype.kind in "iu":
        info = np.iinfo(dtype)
        # Unsigned targets take small negative ints modulo 2**bits (JAX: uint32(1) + -1 == 0); anything else
        # outside the range overflows as in JAX.
        lo = -(info.max // 2 + 1) if dtype.kind == "u" else info.min
        if not lo <= val <= info.max:
            raise OverflowError(f"Python int {val} too large to convert to {dtype.name}")
    py = None
    if weak_type:
        # the Python value a weak literal prints, in the target's kind (JAX: weak ``x * 3`` prints ``3.0``)
        src = val.py if isinstance(val, TypedScalar) else val
        if type(src) in (int, float, complex) and dtype.kind in "fc":
            py = complex(src) if dtype.kind == "c" else (float(src) if type(src) is not complex else None)
    with np.errstate(over="ignore", invalid="ignore"):
        if isinstance(val, TypedScalar):
            val = val.val
        v = np.asarray(val).astype(dtype)[()]
    return TypedScalar(v, ShapedArray((), dtype, weak_type), py)


def is_constant_scalar(x):
    """True for a concrete rank-0 value that jaxprs inline as a literal."""
    return isinstance(x, (bool, int, float, complex, np.generic, TypedScalar)) or (
        isinstance(x, np.ndarray) and x.shape == ())


# ----------------------------------------------------------------------------------------------- traces

class _TraceState(threading.local):
    def __init__(self):
        self.trace = None   # None means the eval trace
        self.name_stack = []
        self.batch_rule_trace = None   # the BatchTrace whose batching rule is running (interpreters.batching)
        self.jvp_mode = None   # the ``mode`` of the JVPTrace whose jvp rule is running (interpreters.ad)
        self.axis_env = []   # (axis name, size) of the enclosing named axes (vmap/pmap axis_name), innermost last


_state = _TraceState()


@contextmanager
def extend_axis_env(name, size, processes=1):
    """Names ``name`` (of global ``size``) for collectives traced inside the block (vmap's ``axis_name``);
    ``processes`` > 1: the axis spans that many processes (a multi-process ``pmap``), each holding
    ``size // processes`` of its members."""
    env = _state.axis_env
    env.append((name, int(size), int(processes)))
    try:
        yield
    finally:
        env.pop()


def _find_axis(name):
    for entry in reversed(_state.axis_env):
        if entry[0] == name:
            return entry
    return None


def axis_frame(name, prim_name=None):
    """The size of the named axis ``name``; ``NameError`` (JAX's text) when no enclosing map names it."""
    entry = _find_axis(name)
    if entry is not None:
        return entry[1]
    if prim_name is None:
        raise NameError(f"unbound axis name: {name}")
    raise NameError(f"Found an unbound axis name: {name}. To fix this, please call {prim_name} under "
                    "`jax.shard_map`.")


def axis_processes(name):
    """How many processes the named axis spans (1 unless a multi-process ``pmap`` bound it)."""
    entry = _find_axis(name)
    return 1 if entry is None else entry[2]


def current_trace():
    t = _state.trace
    return EVAL if t is None else t


@contextmanager
def set_current_trace(trace):
    prev = _state.trace
    _state.trace = trace
    try:
        yield
    finally:
        _state.trace = prev


def cur_qdd(x):
    """The quasi-dynamic data (hijax types' mutable metadata) of ``x`` in the current trace: ``None`` while
    staging (``jit``, ``make_jaxpr``: cranax has no type carrying such data). Outside staging JAX's traces
    have no such method and the lookup falls through to the value, an ``AttributeError`` naming its type
    (``'jaxlib._jax.ArrayImpl' object has no attribute 'cur_qdd'``, or ``'TypedFloat'`` for a Python float
    under ``grad``), which cranax raises with JAX's text. Mirrors ``jax.experimental.cur_qdd``."""
    method = getattr(current_trace(), "cur_qdd", None)
    if method is not None:
        return method(x)
    while isinstance(x, Tracer):   # JVP and batch tracers ask their primal / unbatched value
        x = getattr(x, "primal", getattr(x, "val", None))
    name = {float: "TypedFloat", int: "TypedInt", complex: "TypedComplex", bool: "bool"}.get(
        type(x), "jaxlib._jax.ArrayImpl")
    raise AttributeError(f"'{name}' object has no attribute 'cur_qdd'")


class Trace:
    """One transformation's interpreter. ``process_primitive(prim, args, params)`` returns the results
    of applying ``prim`` to ``args`` (a mix of this trace's tracers and outer values)."""

    def __init__(self):
        self.valid = True

    def process_primitive(self, prim, args, params):
        raise NotImplementedError

    def invalidate(self):
        self.valid = False

    def __repr__(self):
        return f"{type(self).__name__}"


class EvalTrace(Trace):
    """Runs primitives at once (eager mode): each primitive's ``impl``."""

    def process_primitive(self, prim, args, params):
        for a in args:
            if isinstance(a, Tracer):
                raise UnexpectedTracerError(_escaped_tracer_message(a))
        return prim.impl(*args, **params)


EVAL = EvalTrace()


def _escaped_tracer_message(t):
    """JAX's ``escaped_tracer_error`` text. JAX names the function being traced, and where the leaked value
    was created; cranax records no creation site, so that part is printed (as JAX prints it) only for a
    traced function's argument, whose creation JAX's text leaves empty (``created on line .``)."""
    msg = (f"Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing for "
           f"a reference to an intermediate value with type {t.aval.str_short(short_dtypes=False)} wrapped in a "
           f"{type(t).__name__} to escape the scope of the transformation.\n"
           f"JAX transformations require that functions explicitly return their outputs, and disallow "
           f"saving intermediate values to global state.")
    trace = getattr(t, "_trace", None)
    d = getattr(trace, "debug", None)
    if d is not None and getattr(d, "fun_name", None):
        traced_for = "jit" if d.traced_for == "make_jaxpr" else d.traced_for
        msg += f"\nThe function being traced when the value leaked was {d.func_src_info} traced for {traced_for}."
    if getattr(t, "_var", None) is not None and any(v is t._var for v in getattr(trace, "invars", ())):
        div = "\n" + "-" * 30 + "\n"
        msg += (f"{div}The leaked intermediate value was created on line . {div}When the value was created, the "
                f"final 5 stack frames (most recent last) excluding JAX-internal frames were:{div}{div}")
    msg += ("\nTo catch the leak earlier, try setting the environment variable JAX_CHECK_TRACER_LEAKS or using "
            "the `jax.checking_leaks` context manager.")
    return msg


class Primitive:
    """A primitive operation. Rules for each transformation are registered in tables keyed by the
    primitive (see ``cranax.interpreters``); ``impl`` runs it eagerly, ``abstract_eval`` gives output avals
    from input avals and params. Mirrors ``jax.extend.core.Primitive``."""

    multiple_results = False
    call_primitive = False   # JAX's flags, read by libraries walking jaxprs (distrax); cranax's jit is not one
    map_primitive = False
    # operands reach user Python code (custom rules, callbacks): eval_jaxpr passes them literals as plain
    # NumPy scalars, not TypedScalars, since that code expects arrays (equinox compares their types)
    operands_reach_user_code = False

    def __init__(self, name, multiple_results=False):
        self.name = name
        self.multiple_results = multiple_results
        self.impl = None
        self.abstract_eval = None

    def bind(self, *args, **params):
        return current_trace().process_primitive(self, args, params)

    def def_impl(self, fn):
        self.impl = fn
        return fn

    def def_abstract_eval(self, fn):
        self.abstract_eval = fn
        return fn

    def __repr__(self):
        return self.name


# ----------------------------------------------------------------------------------------------- tracers

class ArrayType:
    """The common base of everything ``isinstance(x, jax.Array)`` accepts: concrete Arrays, tracers, typed
    key arrays, EArrays. It is ``jax.Array`` under the alias, where it takes JAX's name and prints as
    ``<class 'jax.jaxlib._jax.Array'>``, apart from the concrete class ``type(x)`` is
    (``jaxlib._jax.ArrayImpl``). A plain class (no metaclass): CPython checks ``isinstance`` against it in C
    by the MRO (``cranax.Array`` takes tracers through a Python ``__instancecheck__``)."""

    __slots__ = ()


class AvalProperties(ArrayType):
    """``shape``, ``dtype``, ``ndim``, ``size``, ``weak_type``, ``len()`` read off ``self.aval``: what concrete
    Arrays and tracers share."""

    __slots__ = ()

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self):
        return len(self.aval.shape)

    @property
    def size(self):
        return self.aval.size

    @property
    def weak_type(self):
        return self.aval.weak_type

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]


def aval_text(aval):
    """``~float32[3]``: an aval as JAX 0.10.2's tracer reprs show it (long dtype name, ``~`` when weak)."""
    return ("~" if aval.weak_type else "") + aval.str_short(short_dtypes=False)


# JAX's context line for int()/float()/complex() of a tracer
_CONVERT_HINT = ("The problem arose with the `{0}` function. If trying to convert the data type of a value, "
                 "try using `x.astype({0})` or `jnp.array(x, {0})` instead.")


_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep   # the cranax package


_INTERNAL_FILES = set()   # cranax's source files met while looking for the user's frame (a set test is cheap)


def user_source(skip=1):
    """``(code, lasti)`` of the innermost frame outside cranax (the user's line making the current call), or
    None; kept raw so that capturing it is cheap (it runs for every batched value) and ``summarize_source``
    reads positions only when shown. ``skip``: where the walk starts, as for ``sys._getframe`` (1: this
    function's caller); a caller whose own callers are known to be cranax's passes more, as each frame walked
    costs (Python makes a frame object for it)."""
    f = sys._getframe(skip)
    internal = _INTERNAL_FILES
    while f is not None:
        name = f.f_code.co_filename
        if name in internal:
            f = f.f_back
        elif name.startswith(_PKG):
            internal.add(name)
            f = f.f_back
        else:
            return f.f_code, f.f_lasti
    return None


def summarize_source(src):
    """``file:line:col (qualname)`` as JAX's ``source_info_util.summarize`` (no ``:col`` when it is 0)."""
    if src is None:
        return "unknown"
    code, lasti = src
    line, col = code.co_firstlineno, 0
    try:
        pos = list(code.co_positions())[lasti // 2]
        if pos[0] is not None:
            line, col = pos[0], pos[2] or 0
    except (AttributeError, IndexError):
        pass
    name = getattr(code, "co_qualname", code.co_name)
    where = f"{code.co_filename}:{line}:{col}" if col else f"{code.co_filename}:{line}"
    return f"{where} ({name})"


class Tracer(AvalProperties):
    """A value inside a transformation. Operators and array methods come from ``cranax.numpy``
    (installed by ``cranax.numpy._methods``)."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self):
        raise NotImplementedError

    def _short_repr(self):
        return f"traced array with shape {self.aval.str_short(short_dtypes=False)}"

    def _context(self):
        ctx = getattr(self._trace, "error_context", None)
        return ctx(self) if ctx is not None else ""

    def _concrete(self):
        """The concrete value if this tracer has one (only the jvp/batching of concrete values); else None."""
        return None

    def __bool__(self):
        c = self._concrete()
        if c is not None:
            return bool(c)
        if self.aval.size != 1:   # as NumPy's and JAX's: checked before tracing is
            raise ValueError("The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all()")
        raise TracerBoolConversionError(self)

    def __index__(self):
        c = self._concrete()
        if c is not None:
            return c.__index__()
        raise TracerIntegerConversionError(self)

    def __int__(self):
        c = self._concrete()
        if c is not None:
            return int(c)
        raise ConcretizationTypeError(self, _CONVERT_HINT.format("int"))

    def __float__(self):
        # JAX's Tracer.__float__ asks the aval, not the concrete value: even a jvp tracer of a concrete
        # primal raises here (bool/int/index/item() do use the concrete value).
        raise ConcretizationTypeError(self, _CONVERT_HINT.format("float"))

    def item(self, *args):
        """The element as a Python scalar, when this tracer has a concrete value (jvp/grad outside jit);
        else ``ConcretizationTypeError``. Mirrors ``jax.Array.item`` on a tracer."""
        c = self._concrete()
        if c is not None:
            return np.asarray(c).item(*args)
        raise ConcretizationTypeError(self, "This occurred in the item() method of jax.Array")

    def __complex__(self):
        raise ConcretizationTypeError(self, _CONVERT_HINT.format("complex"))

    def __array__(self, dtype=None, copy=None):
        raise TracerArrayConversionError(self)

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __hash__(self):
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{self._trace!r}>"

    def __str__(self):
        return repr(self)

    def __format__(self, spec):
        return repr(self)


def concrete_or_error(x, context=""):
    """``x`` as a concrete Python/NumPy value, or ``ConcretizationTypeError`` when it is traced."""
    if isinstance(x, Tracer):
        c = x._concrete()
        if c is None:
            raise ConcretizationTypeError(x, context)
        return c
    return x
