"""``jax.export``: a jitted function saved for one signature (``Exported``), serialized to bytes and loaded
back in another process, without the Python code that defined it.

    exp = cranax.export.export(cranax.jit(f))(x_spec, y_spec)   # arrays or ShapeDtypeStructs
    blob = exp.serialize()                                       # bytearray
    cranax.export.deserialize(blob).call(x, y)                   # same results as jit(f)(x, y)

What cranax stores is its own IR, not StableHLO: the program's jaxpr, with every primitive named by the
cranax module that defines it, its constants as NumPy arrays and the argument/result pytree structures.
Loading checks a header (format and cranax version) and only rebuilds cranax's IR classes, NumPy arrays and
dtypes and the pytree node types registered with :func:`register_pytree_node_serialization`; anything else
in the blob is refused (``ValueError``), never executed. ``mlir_module()`` returns the jaxpr text.

Differences from JAX 0.10.2, on purpose or not yet done:
- shape polymorphism: :func:`symbolic_shape` parses and prints dimension expressions as JAX does, but
  exporting with a symbolic dimension raises ``NotImplementedError``;
- ``custom_jvp``/``custom_vjp`` rules are kept in an in-process ``Exported`` and replaced by their primal
  program when serialized (as JAX's StableHLO does); a deserialized ``Exported`` is differentiated through
  that program at any order (JAX needs ``serialize(vjp_order=k)`` and differentiates only k times);
- host callbacks (``pure_callback``, ``io_callback``, ``debug.print``) cannot be serialized:
  ``NotImplementedError``, as JAX;
- primitives defined outside cranax (``jax.extend.core.Primitive``) cannot be serialized: ``ValueError``.
"""
import dataclasses
import functools
import importlib
import io
import pickle
import re
import sys
import types

import numpy as np

from . import _version, lax
from .api import ShapeDtypeStruct, jit
from .api_ad import vjp as _vjp
from .core import Primitive, get_aval
from .primitives.jit import jit_p
from .stages import Wrapped
from .jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn
from ._pytree import _registry, tree_flatten, tree_structure, tree_unflatten, treedef_children

__all__ = ["DisabledSafetyCheck", "Exported", "SymbolicScope", "default_export_platform", "deserialize",
           "export", "is_symbolic_dim", "maximum_supported_calling_convention_version",
           "minimum_supported_calling_convention_version", "register_namedtuple_serialization",
           "register_pytree_node_serialization", "symbolic_args_specs", "symbolic_shape"]

# JAX 0.10.2's calling-convention versions (cranax's format carries its own version in the header).
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10
_MAGIC = b"CRANAX-EXPORT\x00"
_FORMAT = 1


def default_export_platform():
    """The platform ``export`` targets by default: ``'cpu'`` (as ``jax.export.default_export_platform``)."""
    return "cpu"


class DisabledSafetyCheck:
    """A safety check ``export`` may skip (``jax.export.DisabledSafetyCheck``): ``platform()`` or
    ``custom_call(target_name)``. Kept on ``Exported.disabled_safety_checks``; cranax has no check they
    would turn off."""

    def __init__(self, _impl):
        self._impl = _impl

    @classmethod
    def platform(cls):
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name):
        return cls("custom_call:" + target_name)

    def is_custom_call(self):
        return self._impl[len("custom_call:"):] if self._impl.startswith("custom_call:") else None

    def __str__(self):
        return self._impl

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self):
        return hash(self._impl)


# ---------------------------------------------------------------------------------------- symbolic shapes

class SymbolicScope:
    """The scope dimension variables belong to (``jax.export.SymbolicScope``); dimensions of different
    scopes never compare equal. ``constraints`` are kept as given."""

    def __init__(self, constraints=()):
        if isinstance(constraints, str):
            raise ValueError("The symbolic constraints should be a sequence of strings. "
                             f"Got {constraints!r}")
        self.constraints = tuple(constraints)

    def __repr__(self):
        return f"SymbolicScope({list(self.constraints)!r})"


class _DimExpr:
    """A polynomial over dimension variables with integer coefficients: ``terms`` maps a sorted tuple of
    variable names (a monomial, ``()`` for the constant) to its coefficient."""

    __slots__ = ("terms", "scope")

    def __init__(self, terms, scope):
        self.terms = {m: c for m, c in terms.items() if c}
        self.scope = scope

    @staticmethod
    def _lift(x, scope):
        if isinstance(x, _DimExpr):
            if x.scope is not scope:
                raise ValueError("Invalid mixing of symbolic scopes")
            return x
        if isinstance(x, (int, np.integer)):
            return _DimExpr({(): int(x)}, scope)
        return NotImplemented

    def _norm(self):
        if set(self.terms) <= {()}:
            return self.terms.get((), 0)
        return self

    def __add__(self, other):
        o = self._lift(other, self.scope)
        if o is NotImplemented:
            return o
        t = dict(self.terms)
        for m, c in o.terms.items():
            t[m] = t.get(m, 0) + c
        return _DimExpr(t, self.scope)._norm()

    __radd__ = __add__

    def __neg__(self):
        return _DimExpr({m: -c for m, c in self.terms.items()}, self.scope)

    def __sub__(self, other):
        o = self._lift(other, self.scope)
        return o if o is NotImplemented else self + (-o)

    def __rsub__(self, other):
        o = self._lift(other, self.scope)
        return o if o is NotImplemented else o + (-self)

    def __mul__(self, other):
        o = self._lift(other, self.scope)
        if o is NotImplemented:
            return o
        t = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in o.terms.items():
                m = tuple(sorted(m1 + m2))
                t[m] = t.get(m, 0) + c1 * c2
        return _DimExpr(t, self.scope)._norm()

    __rmul__ = __mul__

    def __eq__(self, other):
        o = self._lift(other, self.scope) if not isinstance(other, _DimExpr) else other
        if o is NotImplemented:
            return False
        return self.scope is o.scope and self.terms == o.terms

    def __hash__(self):
        return hash((tuple(sorted(self.terms.items())), id(self.scope)))

    def __str__(self):
        def mono(m, c):
            names = "*".join(m)
            if not m:
                return str(abs(c))
            return names if abs(c) == 1 else f"{abs(c)}*{names}"
        # JAX orders the terms: higher degree first, then by name; the constant last
        items = sorted(self.terms.items(), key=lambda mc: (mc[0] == (), -len(mc[0]), mc[0]))
        out = ""
        for i, (m, c) in enumerate(items):
            s = mono(m, c)
            if i == 0:
                out = ("-" if c < 0 else "") + s
            else:
                out += (" - " if c < 0 else " + ") + s
        return out

    __repr__ = __str__

    def __index__(self):
        raise TypeError(f"Symbolic dimension {self} used where an integer is required (cranax.export does "
                        "not support shape polymorphism)")


_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def _parse_dim(text, scope, vars_):
    toks = [(n, v, o) for n, v, o in _TOKEN.findall(text) if n or v or o.strip()]
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def atom():
        nonlocal pos
        t = peek()
        if t is None:
            raise ValueError(f"syntax error in symbolic shape {text!r}")
        pos += 1
        n, v, o = t
        if n:
            return int(n)
        if v:
            return vars_.setdefault(v, _DimExpr({(v,): 1}, scope))
        if o == "(":
            e = expr()
            if peek() is None or peek()[2] != ")":
                raise ValueError(f"syntax error in symbolic shape {text!r}: missing ')'")
            pos += 1
            return e
        if o == "-":
            return -atom()
        raise ValueError(f"syntax error in symbolic shape {text!r} at {o!r}")

    def term():
        nonlocal pos
        e = atom()
        while peek() is not None and peek()[2] == "*":
            pos += 1
            e = e * atom()
        return e

    def expr():
        nonlocal pos
        e = term()
        while peek() is not None and peek()[2] in ("+", "-"):
            op = peek()[2]
            pos += 1
            e = e + term() if op == "+" else e - term()
        return e

    e = expr()
    if pos != len(toks):
        raise ValueError(f"syntax error in symbolic shape {text!r}")
    return e


def symbolic_shape(shape_spec, *, constraints=(), scope=None, like=None):
    """The shape described by ``shape_spec`` (e.g. ``"a, 2*b + 1"``, ``"(a, 3)"``): a tuple of ints and
    symbolic dimensions (``jax.export.symbolic_shape``). ``like`` fills ``_`` dimensions from a concrete
    shape. ``ValueError`` for a syntax error. cranax cannot export with symbolic dimensions yet."""
    if shape_spec is None:
        shape_spec = "..."
    scope = scope if scope is not None else SymbolicScope(constraints)
    spec = shape_spec.strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1]
    parts = [p.strip() for p in spec.split(",")]
    if parts and parts[-1] == "":
        parts = parts[:-1]
    if parts == ["..."] and like is not None:
        return tuple(like)
    vars_ = {}
    out = []
    for i, p in enumerate(parts):
        if p == "_":
            if like is None or i >= len(like):
                raise ValueError(f"symbolic shape {shape_spec!r}: '_' needs a 'like' shape")
            out.append(like[i])
        elif p == "":
            raise ValueError(f"syntax error in symbolic shape {shape_spec!r}: empty dimension")
        else:
            out.append(_parse_dim(p, scope, vars_))
    return tuple(out)


def is_symbolic_dim(p):
    """True for a symbolic dimension (``jax.export.is_symbolic_dim``)."""
    return isinstance(p, _DimExpr)


def symbolic_args_specs(args, shapes_specs, constraints=(), scope=None):
    """``ShapeDtypeStruct``s with the dtypes of ``args`` and the symbolic shapes ``shapes_specs`` (one spec
    string for all, or a pytree of them) — ``jax.export.symbolic_args_specs``."""
    leaves, tree = tree_flatten(args)
    if isinstance(shapes_specs, (str, type(None))):
        specs = [shapes_specs] * len(leaves)
    else:
        specs = tree.flatten_up_to(shapes_specs)
    scope = scope if scope is not None else SymbolicScope(constraints)
    out = [ShapeDtypeStruct(symbolic_shape(s, scope=scope, like=np.shape(x)), get_aval(x).dtype)
           for x, s in zip(leaves, specs)]
    return tree_unflatten(tree, out)


# ---------------------------------------------------------------------------------------- pytree serialization

_node_by_type = {}   # nodetype -> (serialized_name, serialize_auxdata, deserialize_auxdata)
_node_by_name = {}   # serialized_name -> (nodetype, deserialize_auxdata)


def register_pytree_node_serialization(nodetype, *, serialized_name, serialize_auxdata, deserialize_auxdata):
    """Lets ``Exported.serialize`` store pytrees with the custom node type ``nodetype`` (registered with
    ``tree_util.register_pytree_node`` first): ``serialize_auxdata(aux) -> bytes`` and back. Returns
    ``nodetype``. ``ValueError`` when the type or the name is registered already."""
    if nodetype in _node_by_type:
        raise ValueError(f"Duplicate serialization registration for type `{nodetype}`. Previous registration "
                         f"was with serialized_name `{_node_by_type[nodetype][0]}`.")
    if serialized_name in _node_by_name:
        raise ValueError(f"Duplicate serialization registration for serialized_name `{serialized_name}`. "
                         f"Previous registration was for type `{_node_by_name[serialized_name][0]}`.")
    _node_by_type[nodetype] = (serialized_name, serialize_auxdata, deserialize_auxdata)
    _node_by_name[serialized_name] = (nodetype, deserialize_auxdata)
    return nodetype


def register_namedtuple_serialization(nodetype, *, serialized_name):
    """``register_pytree_node_serialization`` for a ``collections.namedtuple``/``typing.NamedTuple`` class
    (no auxiliary data). Returns ``nodetype``."""
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple) and hasattr(nodetype, "_fields")):
        raise ValueError(f"Cannot register_namedtuple_serialization for type {nodetype}: it is not a namedtuple")
    return register_pytree_node_serialization(nodetype, serialized_name=serialized_name,
                                              serialize_auxdata=lambda _: b"", deserialize_auxdata=lambda _: None)


def _encode_tree(td):
    """A treedef as nested tuples of builtins: ``("leaf",)``, ``("none",)``, ``("tuple"|"list", children)``,
    ``("dict", keys, children)`` or ``("custom", name, aux_bytes, children)``."""
    nd = td.node_data()
    if nd is None:
        return ("leaf",)
    kind, aux = nd
    kids = tuple(_encode_tree(c) for c in treedef_children(td))
    if kind is type(None):
        return ("none",)
    if kind is tuple:
        return ("tuple", kids)
    if kind is list:
        return ("list", kids)
    if kind is dict:
        return ("dict", tuple(aux), kids)
    reg = _node_by_type.get(kind)
    if reg is None:
        raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type `{kind}`. Use "
                         "`export.register_pytree_node_serialization` or "
                         "`export.register_namedtuple_serialization`.")
    return ("custom", reg[0], bytes(reg[1](aux)), kids)


_LEAF = object()


def _decode_example(enc):
    """A pytree of placeholder leaves with the structure ``enc`` encodes."""
    tag = enc[0]
    if tag == "leaf":
        return _LEAF
    if tag == "none":
        return None
    if tag in ("tuple", "list"):
        kids = [_decode_example(k) for k in enc[1]]
        return tuple(kids) if tag == "tuple" else kids
    if tag == "dict":
        return {k: _decode_example(c) for k, c in zip(enc[1], enc[2])}
    name, aux_bytes, kids = enc[1], enc[2], enc[3]
    if name not in _node_by_name:
        raise ValueError(f"Cannot deserialize a PyTreeDef with a custom node whose serialized_name `{name}` is "
                         "not registered with `export.register_pytree_node_serialization`")
    nodetype, deser = _node_by_name[name]
    children = [_decode_example(k) for k in kids]
    if nodetype in _registry:
        return _registry[nodetype].unflatten(deser(aux_bytes), children)
    return nodetype(*children)   # a namedtuple


def _decode_tree(enc):
    return tree_structure(_decode_example(enc), is_leaf=lambda x: x is _LEAF)


# ---------------------------------------------------------------------------------------- the program

_CALLBACKS = ("pure_callback", "io_callback", "debug_callback", "debug_print")


def _primitive_homes():
    """Every cranax primitive object reachable as a module attribute: id -> (module, attribute)."""
    homes = {}
    for mname, mod in list(sys.modules.items()):
        if not (mname == "cranax" or mname.startswith("cranax.")) or mod is None:
            continue
        for attr, val in list(vars(mod).items()):
            if isinstance(val, Primitive) and id(val) not in homes:
                homes[id(val)] = (mname, attr)
    return homes


def _inline_custom_rules(closed):
    """``closed`` with each ``custom_jvp_call``/``custom_vjp_call`` replaced by a call of its primal program
    (the rules are Python functions, which a serialized program cannot hold)."""

    def fix_params(params):
        return {k: fix(v) for k, v in params.items()}

    def fix(v):
        if isinstance(v, ClosedJaxpr):
            return ClosedJaxpr(fix_jaxpr(v.jaxpr), v.consts)
        if isinstance(v, Jaxpr):
            return fix_jaxpr(v)
        if isinstance(v, tuple):
            return tuple(fix(x) for x in v)
        return v

    def fix_jaxpr(j):
        eqns = []
        for e in j.eqns:
            if e.primitive.name in ("custom_jvp_call", "custom_vjp_call"):
                inner = e.params["call_jaxpr"]
                if inner.consts:   # (cranax passes a rule's constants as operands: num_consts)
                    raise NotImplementedError(f"cranax.export: cannot serialize {e.primitive.name} "
                                              f"'{e.params['name']}' whose primal program holds constants")
                inner = ClosedJaxpr(fix_jaxpr(inner.jaxpr), [])
                eqns.append(JaxprEqn(e.invars, e.outvars, jit_p, {"jaxpr": inner, "name": e.params["name"]}))
            else:
                eqns.append(e.replace(params=fix_params(e.params)))
        return Jaxpr(j.constvars, j.invars, j.outvars, eqns)

    return ClosedJaxpr(fix_jaxpr(closed.jaxpr), closed.consts)


class _Pickler(pickle.Pickler):
    def __init__(self, f, homes):
        super().__init__(f, protocol=4)
        self._homes = homes

    def persistent_id(self, obj):
        if isinstance(obj, Primitive):
            home = self._homes.get(id(obj))
            if home is None:
                raise ValueError(f"Cannot serialize primitive '{obj.name}': it is not one of cranax's "
                                 "(primitives defined with jax.extend.core.Primitive cannot be serialized)")
            return ("primitive",) + home
        if isinstance(obj, (types.FunctionType, types.MethodType, functools.partial)):
            raise ValueError(f"Cannot serialize a program holding the Python function {obj!r}")
        return None


_SAFE_BUILTINS = {"complex", "slice", "frozenset", "set", "range", "tuple", "list", "dict", "bytearray"}
_SAFE_NUMPY = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
               ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
               ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.numeric", "_frombuffer"),
               ("numpy._core.numeric", "_frombuffer")}


class _Unpickler(pickle.Unpickler):
    """Rebuilds only cranax's own classes, NumPy arrays/dtypes and a few builtin containers."""

    def find_class(self, module, name):
        ok = ("." not in name and (
            (module == "builtins" and name in _SAFE_BUILTINS) or (module, name) in _SAFE_NUMPY
            or (module.startswith("numpy") and name.endswith("DType"))
            or ((module == "cranax" or module.startswith("cranax.")) and module in sys.modules
                and isinstance(getattr(sys.modules[module], name, None), type)
                and getattr(sys.modules[module], name).__module__ == module)
            or (module == "ml_dtypes" and name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"))))
        if not ok:
            raise ValueError(f"cranax.export.deserialize: the serialized program refers to {module}.{name}, "
                             "which a cranax program never holds (a corrupt or foreign blob)")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 3 and pid[0] == "primitive"
                and (pid[1] == "cranax" or str(pid[1]).startswith("cranax."))):
            raise ValueError(f"cranax.export.deserialize: bad primitive reference {pid!r}")
        mod = importlib.import_module(pid[1])
        prim = getattr(mod, pid[2], None)
        if not isinstance(prim, Primitive):
            raise ValueError(f"cranax.export.deserialize: {pid[1]}.{pid[2]} is not a cranax primitive in this "
                             f"version ({_version.__version__})")
        return prim


def _walk_eqns(j):
    for e in j.eqns:
        yield e
        for v in e.params.values():
            for x in (v if isinstance(v, tuple) else (v,)):
                if isinstance(x, ClosedJaxpr):
                    yield from _walk_eqns(x.jaxpr)
                elif isinstance(x, Jaxpr):
                    yield from _walk_eqns(x)


def _tree_diffs(exp, inv, path):
    """JAX's lines describing where the invocation's pytree ``inv`` differs from the exported ``exp``."""
    def kind(td):
        nd = td.node_data()
        return int if nd is None else nd[0]   # (JAX names a leaf of the exported tree <class 'int'>)

    def sub(i, nd):
        if path is None:
            return ("args", "kwargs")[i]
        if nd is not None and nd[0] is dict:
            return f"{path}[{list(nd[1])[i]!r}]"
        return f"{path}[{i}]"

    ke, ki = kind(exp), kind(inv)
    if ke is not ki:
        return [f"   - {path} is a {ki} in the invocation and a {ke} when exported, so their Python types differ."]
    ce, ci = treedef_children(exp), treedef_children(inv)
    if len(ce) != len(ci):
        name = getattr(ke, "__name__", str(ke))
        return [f"   - {path} is a {name} of length {len(ci)} in the invocation and a {name} of length {len(ce)} "
                "when exported, so the lengths do not match."]
    if ke is dict and exp.node_data()[1] != inv.node_data()[1]:
        return [f"   - {path} is a dict with keys {inv.node_data()[1]} in the invocation and keys "
                f"{exp.node_data()[1]} when exported."]
    out = []
    for i, (a, b) in enumerate(zip(ce, ci)):
        if a != b:
            out += _tree_diffs(a, b, sub(i, exp.node_data()))
    return out


# ---------------------------------------------------------------------------------------- Exported

@dataclasses.dataclass(frozen=True)
class Exported:
    """A function exported for one signature (``jax.export.Exported``).

    Attributes as JAX's: ``fun_name``, ``in_tree``/``out_tree`` (pytree structures of ``(args, kwargs)`` and
    of the result), ``in_avals``/``out_avals`` (tuples of ``ShapedArray``), ``in_shardings_hlo``/
    ``out_shardings_hlo`` (``None`` each: one device), ``nr_devices``, ``platforms``, ``ordered_effects``,
    ``unordered_effects``, ``disabled_safety_checks``, ``calling_convention_version``. ``call(*args,
    **kwargs)`` runs it (under ``jit``, ``grad``, ``vmap`` too); ``serialize()`` gives the bytes
    :func:`deserialize` reads; ``mlir_module()`` the program's text (cranax's jaxpr, not StableHLO)."""
    fun_name: str
    in_tree: object
    in_avals: tuple
    out_tree: object
    out_avals: tuple
    in_shardings_hlo: tuple
    out_shardings_hlo: tuple
    nr_devices: int
    platforms: tuple
    ordered_effects: tuple
    unordered_effects: tuple
    disabled_safety_checks: tuple
    calling_convention_version: int
    _jaxpr: ClosedJaxpr = dataclasses.field(repr=False, compare=False)
    _vjp_order: int = dataclasses.field(default=-1, repr=False, compare=False)   # -1: in-process

    @property
    def in_shardings_jax(self):
        return self.in_shardings_hlo

    @property
    def out_shardings_jax(self):
        return self.out_shardings_hlo

    @property
    def module_kept_var_idx(self):
        return tuple(range(len(self.in_avals)))

    @property
    def uses_global_constants(self):
        return False

    def mlir_module(self):
        """The exported program as text: cranax's jaxpr (its IR; JAX returns StableHLO)."""
        return str(self._jaxpr)

    @property
    def mlir_module_serialized(self):
        return self.mlir_module().encode()

    def has_vjp(self):
        """True when the VJP can be taken: always in the exporting process; for a deserialized one, when it
        was serialized with ``vjp_order >= 1`` (cranax's serialized program can be differentiated anyway)."""
        return self._vjp_order != 0

    def vjp(self):
        """The ``Exported`` of the VJP: arguments ``(*primals, *cotangents)``, result the input cotangents."""
        n = len(self.in_avals)

        def flat_vjp(*args):
            _, pull = _vjp(lambda *xs: self._call_flat(list(xs)), *args[:n])
            return pull(list(args[n:]))

        specs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in self.in_avals + self.out_avals]
        return export(jit(flat_vjp))(*specs)

    def __str__(self):
        return f"Exported(fun_name={self.fun_name}, ...)"

    def _check(self, leaves, tree):
        if tree != self.in_tree:
            diffs = _tree_diffs(self.in_tree, tree, None) or [
                f"   - the invocation has structure {tree} and the export {self.in_tree}."]
            raise ValueError("The invocation args and kwargs must have the same pytree structure as when the "
                             f"function '{self.fun_name}' was exported, but they have the following structural "
                             "differences:\n" + "\n".join(diffs) + "\n")
        for i, (x, want) in enumerate(zip(leaves, self.in_avals)):
            got = get_aval(x)
            where = f"args[{i}]"
            if got.dtype != want.dtype and not (got.weak_type and np.ndim(x) == 0):
                raise ValueError(f"Dtype mismatch for {where}: expected {want.dtype} and called with {got.dtype}")
            if len(got.shape) != len(want.shape):
                raise ValueError(f"Rank mismatch for {where}: expected {tuple(want.shape)} and called with "
                                 f"{tuple(got.shape)}")
            for d, (g, w) in enumerate(zip(got.shape, want.shape)):
                if g != w:
                    raise ValueError(f"Shape mismatch for {where}.shape[{d}] (expected same constant): expected "
                                     f"{tuple(want.shape)} and called with {tuple(got.shape)}")

    def _call_flat(self, leaves):
        leaves = [lax.convert_element_type(x, a.dtype) if get_aval(x).dtype != a.dtype else x
                  for x, a in zip(leaves, self.in_avals)]
        jaxpr, consts = self._jaxpr.hoist_consts()
        return jit_p.bind(*consts, *leaves, jaxpr=jaxpr, name=self.fun_name)

    def call(self, *args, **kwargs):
        """Runs the exported program on ``args``/``kwargs`` (the structure, shapes and dtypes it was exported
        for; ``ValueError`` with JAX's texts otherwise). Works under ``jit``, ``grad`` and ``vmap``."""
        leaves, tree = tree_flatten((args, kwargs))
        self._check(leaves, tree)
        return tree_unflatten(self.out_tree, self._call_flat(leaves))

    def serialize(self, vjp_order=0):
        """The bytes of this ``Exported`` (``bytearray``), for :func:`deserialize`. ``NotImplementedError``
        for programs with host callbacks; ``ValueError`` for pytree node types not registered with
        :func:`register_pytree_node_serialization` or primitives defined outside cranax."""
        for e in _walk_eqns(self._jaxpr.jaxpr):
            if e.primitive.name in _CALLBACKS:
                raise NotImplementedError("serialization of host_callbacks is not yet implemented")
        closed = _inline_custom_rules(self._jaxpr)
        consts = [np.asarray(c) for c in closed.consts]
        payload = {
            "fun_name": self.fun_name, "in_tree": _encode_tree(self.in_tree), "out_tree": _encode_tree(self.out_tree),
            "in_avals": self.in_avals, "out_avals": self.out_avals, "nr_devices": self.nr_devices,
            "platforms": self.platforms, "disabled": tuple(str(c) for c in self.disabled_safety_checks),
            "ccv": self.calling_convention_version, "jaxpr": ClosedJaxpr(closed.jaxpr, consts),
            "vjp_order": int(vjp_order),
        }
        buf = io.BytesIO()
        _Pickler(buf, _primitive_homes()).dump(payload)
        version = _version.__version__.encode()
        return bytearray(_MAGIC + bytes([_FORMAT, len(version)]) + version + buf.getvalue())


def deserialize(blob):
    """The ``Exported`` that ``Exported.serialize`` wrote into ``blob`` (bytes or bytearray) —
    ``jax.export.deserialize``. ``ValueError`` for a blob that is not one, was written by another cranax
    version, or refers to anything outside cranax's IR."""
    blob = bytes(blob)
    if not blob.startswith(_MAGIC) or len(blob) < len(_MAGIC) + 2:
        raise ValueError("cranax.export.deserialize: not a serialized cranax Exported")
    fmt, vlen = blob[len(_MAGIC)], blob[len(_MAGIC) + 1]
    start = len(_MAGIC) + 2
    version = blob[start:start + vlen].decode(errors="replace")
    if fmt != _FORMAT or version != _version.__version__:
        raise ValueError(f"cranax.export.deserialize: serialized by cranax {version} (format {fmt}); this is "
                         f"cranax {_version.__version__} (format {_FORMAT})")
    try:
        p = _Unpickler(io.BytesIO(blob[start + vlen:])).load()
    except ValueError:
        raise
    except Exception as e:
        raise ValueError(f"cranax.export.deserialize: corrupt serialized Exported ({type(e).__name__}: {e})") from None
    if not (isinstance(p, dict) and isinstance(p.get("jaxpr"), ClosedJaxpr)):
        raise ValueError("cranax.export.deserialize: corrupt serialized Exported")
    return Exported(
        fun_name=p["fun_name"], in_tree=_decode_tree(p["in_tree"]), in_avals=tuple(p["in_avals"]),
        out_tree=_decode_tree(p["out_tree"]), out_avals=tuple(p["out_avals"]),
        in_shardings_hlo=(None,) * len(p["in_avals"]), out_shardings_hlo=(None,) * len(p["out_avals"]),
        nr_devices=p["nr_devices"], platforms=tuple(p["platforms"]), ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=tuple(DisabledSafetyCheck(s) for s in p["disabled"]),
        calling_convention_version=p["ccv"], _jaxpr=p["jaxpr"], _vjp_order=p["vjp_order"])


def export(fun_jit, *, platforms=None, disabled_checks=()):
    """``export(jit(f))(*args, **kwargs)`` → ``Exported`` for the shapes and dtypes of ``args`` (arrays or
    ``ShapeDtypeStruct``; static arguments as ``jit`` takes them) — ``jax.export.export``. ``ValueError`` when
    ``fun_jit`` is not the result of ``jit``; ``NotImplementedError`` for symbolic dimensions."""
    if not isinstance(fun_jit, Wrapped):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    plats = tuple(p.lower() for p in platforms) if platforms is not None else (default_export_platform(),)

    def do_export(*args, **kwargs):
        for x in tree_flatten((args, kwargs))[0]:
            if any(is_symbolic_dim(d) for d in getattr(x, "shape", ())):
                raise NotImplementedError("cranax.export: shape polymorphism (symbolic dimensions) is not "
                                          "supported yet; export with concrete shapes")
        t = fun_jit.trace(*args, **kwargs)
        closed = t._program   # what runs and serializes: nested jits' consts hoisted to program inputs
        n_in, n_out = len(closed.in_avals), len(closed.out_avals)
        return Exported(
            fun_name=fun_jit._name, in_tree=t.in_tree, in_avals=tuple(closed.in_avals), out_tree=t.out_tree,
            out_avals=tuple(closed.out_avals), in_shardings_hlo=(None,) * n_in, out_shardings_hlo=(None,) * n_out,
            nr_devices=1, platforms=plats, ordered_effects=(), unordered_effects=(),
            disabled_safety_checks=tuple(disabled_checks), calling_convention_version=
            maximum_supported_calling_convention_version, _jaxpr=closed)

    return do_export
