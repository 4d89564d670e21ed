"""Jaxpr data structures, a type checker and JAX's pretty printer.

A ``Jaxpr`` is constvars, invars, equations and outvars; a ``ClosedJaxpr`` pairs it with the constants'
values. Printing follows JAX's layout: a jaxpr goes on one line when it fits in 80 columns and has no
nested jaxpr, otherwise one equation per line; variables are named a, b, ..., z, ba, bb, ... in the order
the printer meets them.
"""
import collections
import itertools
import re

import numpy as np

from . import dtypes
from .core import summarize_source

__all__ = ["Var", "Literal", "DropVar", "JaxprEqn", "Jaxpr", "ClosedJaxpr", "pp_jaxpr", "check_jaxpr"]

_counter = itertools.count()


class Var:
    """A jaxpr variable with an abstract value."""

    __slots__ = ("aval", "count")

    def __init__(self, aval):
        self.aval = aval
        self.count = next(_counter)

    def __repr__(self):
        return f"Var(id={id(self)}):{self.aval.str_short(short_dtypes=False)}"   # JAX 0.10.2's form


class DropVar(Var):
    """An equation output nobody reads; printed ``_``."""

    __slots__ = ()


class Literal:
    """A scalar constant inlined into an equation; printed ``1.0:f32[]``. ``py``: the Python scalar a weakly
    typed literal came from, printed instead of ``val`` (``core.TypedScalar.py``)."""

    __slots__ = ("val", "aval", "py")

    def __init__(self, val, aval, py=None):
        self.val = val
        self.aval = aval
        self.py = py

    def __repr__(self):
        # JAX's text: ``Literal({str(val)})`` over its typed scalar, whose str is the number for a float or an
        # array literal and the typed repr for a weakly typed int or complex (``TypedInt(1, dtype=int32)``)
        v = self.py if self.py is not None else self.val
        dt = np.dtype(self.aval.dtype)
        weak = getattr(self.aval, "weak_type", False)
        if weak and dt.kind in "iu" and not isinstance(v, (bool, np.bool_)):
            return f"Literal(TypedInt({int(v)}, dtype={dt.name}))"
        if weak and dt.kind == "c":
            return f"Literal(TypedComplex({complex(v)!r}, dtype={dt.name}))"
        return f"Literal({v if isinstance(v, float) else np.asarray(v)})"


class JaxprEqn:
    # ``src``: where user code staged the equation, ``core.user_source()``'s raw ``(code, lasti)``, read only
    # when an error shows it. A trace records it for the equations JAX's "became a tracer" text can show
    # (reading a literal or constant, up to the 5th reading a literal); None for the others.
    __slots__ = ("invars", "outvars", "primitive", "params", "src")

    def __init__(self, invars, outvars, primitive, params, src=None):
        self.invars = invars
        self.outvars = outvars
        self.primitive = primitive
        self.params = params
        self.src = src

    def __getstate__(self):
        # pickled (jax.export) without ``src``: a code object does not pickle, and a loaded program has no
        # user line to show
        return {k: getattr(self, k) for c in type(self).__mro__ for k in getattr(c, "__slots__", ())
                if k != "src" and hasattr(self, k)}

    def __setstate__(self, state):
        self.src = None
        for k, v in state.items():
            setattr(self, k, v)

    def replace(self, **kw):
        d = dict(invars=self.invars, outvars=self.outvars, primitive=self.primitive, params=self.params,
                 src=self.src)
        d.update(kw)
        return JaxprEqn(**d)

    def __repr__(self):
        # JAX's: the equation printed alone, its variables named afresh (``a:f32[3] = sin b``).
        return _pp_eqn(self, _Names(), 0)

    @property
    def effects(self):
        """The equation's effects: a debug/io callback's recorded effect, else none."""
        e = self.params.get("effect")
        return {e} if e is not None else set()

    @property
    def source_info(self):
        return SourceInfo(self.primitive.name, self.src)


class SourceInfo:
    """Where an equation was traced. cranax keeps no Python traceback per equation (``traceback`` is None),
    only the user's frame that staged it (``src``, shown by ``summarize()``), and no name stack beyond the
    primitive; kept for code that reads ``eqn.source_info``."""

    __slots__ = ("traceback", "name_stack", "src")

    def __init__(self, name, src=None):
        self.traceback = None
        self.name_stack = name
        self.src = src

    def summarize(self):
        """``file:line:col (function)`` of the user's line, as JAX's ``source_info_util.summarize``."""
        return summarize_source(self.src)


class Jaxpr:
    """Constvars, invars, equations and outvars; ``debug_info`` says where it was traced from (None for
    jaxprs built by the transformations) and ``effects`` what its equations do besides computing."""

    __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info")

    def __init__(self, constvars, invars, outvars, eqns, debug_info=None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.debug_info = debug_info

    @property
    def effects(self):
        out = set()
        for e in self.eqns:
            out |= e.effects
        return out

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __str__(self):
        return pp_jaxpr(self)

    __repr__ = __str__

    def pretty_print(self, **_):
        return pp_jaxpr(self)


class ClosedJaxpr:
    """A jaxpr with values for its constvars. Mirrors ``jax.core.ClosedJaxpr``; ``print`` gives JAX's text."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr, consts):
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self):
        return self.jaxpr.in_avals

    @property
    def out_avals(self):
        return self.jaxpr.out_avals

    @property
    def eqns(self):
        return self.jaxpr.eqns

    @property
    def effects(self):
        return self.jaxpr.effects

    @property
    def literals(self):
        """JAX's other name for ``consts`` (distrax reads it)."""
        return self.consts

    def hoist_consts(self):
        """``(closed, consts)``: this jaxpr without consts, its constvars made leading invars (call and
        control-flow primitives carry const-free jaxprs and pass the values as operands, as JAX does)."""
        j = self.jaxpr
        if not j.constvars:
            return self, []
        return ClosedJaxpr(Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns), []), list(self.consts)

    def __str__(self):
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **_):
        return pp_jaxpr(self.jaxpr)


# ----------------------------------------------------------------------------------------------- printing

_WIDTH = 80
_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def _encode_name(n):
    s = ""
    while not s or n:
        n, i = divmod(n, 26)
        s = chr(97 + i) + s
    return s


class _Names:
    def __init__(self):
        self.names = {}
        self.n = 0
        self.shared = {}        # sub-jaxpr printed once at the top (JAX 0.10.2's ``let name = ... in``) -> name
        self.taken = set()      # those names: variables skip them, as in JAX

    def fresh(self, v):
        if isinstance(v, DropVar):
            return "_"
        name = self.names.get(v)
        if name is None:
            name = _encode_name(self.n)
            self.n += 1
            while name in self.taken:
                name = _encode_name(self.n)
                self.n += 1
            self.names[v] = name
        return name

    def copy(self):
        """A scratch copy for a layout attempt that may be dropped (so a failed attempt names nothing)."""
        c = _Names()
        c.names, c.n, c.shared, c.taken = dict(self.names), self.n, self.shared, self.taken
        return c

    def bind(self, v, name):
        if not isinstance(v, DropVar):
            self.names[v] = name


def _pp_literal(lit):
    # JAX prints ``str(value.item())``: a float32 0.1 as 0.10000000149011612, a weak literal's Python 0.1 as 0.1
    v = lit.val if lit.py is None else lit.py
    dt = lit.aval.dtype
    if isinstance(v, np.ndarray):
        v = v.item() if v.shape == () else v
    if dt == np.bool_:
        s = str(bool(v))
    elif dtypes.issubdtype(dt, np.floating):
        s = repr(float(v))
    elif dtypes.issubdtype(dt, np.integer):
        s = str(int(v))
    elif dtypes.issubdtype(dt, np.complexfloating):
        s = str(complex(v))   # Python's complex text: a complex64 0.1 prints its float64 digits too
    else:
        s = str(v)
    return f"{s}:{lit.aval.str_short()}"


def _pp_atom(a, names):
    if isinstance(a, Literal):
        return _pp_literal(a)
    return names.fresh(a)


def _pp_binder(v, names):
    return f"{names.fresh(v)}:{v.aval.str_short()}"


def _unused_outvars(jaxpr):
    """Equation outputs nothing reads: JAX prints them as ``_``."""
    used = set(v for v in jaxpr.outvars if isinstance(v, Var))
    for e in jaxpr.eqns:
        used.update(a for a in e.invars if isinstance(a, Var))
    return {v for e in jaxpr.eqns for v in e.outvars if v not in used}


def _pp_outbinder(v, names, unused):
    if v in unused:
        return f"_:{v.aval.str_short()}"
    return _pp_binder(v, names)


class ShownParam:
    """A param value that prints as the given text (JAX prints some params by its objects' reprs, e.g. ``empty``'s
    dtype or ``gather``'s dimension numbers, which cranax holds in other forms)."""
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text


def pp_param_value(v, names, indent, col=None, flat=False):
    """Text of one param value; nested jaxprs print at ``indent``, starting at column ``col`` (after
    ``key=``; JAX's layout keeps a nested jaxpr on one line only when it fits from there). A shared
    sub-jaxpr (printed at the top) prints as its name. ``flat``: everything on one line where it can be."""
    if isinstance(v, ClosedJaxpr):
        v = v.jaxpr
    if isinstance(v, Jaxpr):
        shared = names.shared.get(v)
        return shared if shared is not None else _pp_jaxpr(v, names, indent, col)
    if isinstance(v, tuple) and v and all(isinstance(x, (Jaxpr, ClosedJaxpr)) for x in v):
        if flat or all(_unclosed(x) in names.shared for x in v):
            return "(" + " ".join(pp_param_value(x, names, indent, col, flat=True) for x in v) + ")"
        inner = "\n".join(" " * (indent + 2) + pp_param_value(x, names, indent + 2) for x in v)
        return "(\n" + inner + "\n" + " " * indent + ")"
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v).name
    if isinstance(v, tuple):
        # as Python's tuple repr (JAX prints ``axes=('i',)``), except the dtypes and functions inside
        # (avals too print by repr there: a callback's ``result_avals=(ShapedArray(float32[3]),)``)
        # NumPy scalars print by repr too (``axes=(np.int64(1),)`` after a vmap or transpose rule, as JAX)
        parts = [repr(x) if isinstance(x, (str, np.generic)) or hasattr(x, "str_short")
                 else pp_param_value(x, names, indent) for x in v]
        if len(v) == 1:
            return f"({parts[0]},)"
        return "(" + ", ".join(parts) + ")"
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    # As JAX: object addresses are masked (``<function f at 0xXXXXXXXXXXXX>``) so printed jaxprs are stable.
    return _ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), str(v))


def _unclosed(j):
    return j.jaxpr if isinstance(j, ClosedJaxpr) else j


def _subjaxprs(params):
    """The jaxprs in a params dict (directly or in tuples), in order."""
    for v in params.values():
        for x in (v if isinstance(v, tuple) else (v,)):
            if isinstance(x, (Jaxpr, ClosedJaxpr)):
                yield _unclosed(x)


def _has_subjaxpr(params, shared=None):
    """True if a param holds a sub-jaxpr printed in place (not a shared one printed at the top)."""
    return any(shared is None or j not in shared for j in _subjaxprs(params))


def _pp_eqn(eqn, names, indent, unused=frozenset()):
    prim = eqn.primitive
    whole = getattr(prim, "pp_eqn", None)
    if whole is not None:   # an equation with its own syntax (array refs: ``c:f32[3] <- a[...]``)
        return whole(eqn, lambda a: _pp_atom(a, names), lambda v: _pp_outbinder(v, names, unused), unused)
    if getattr(prim, "call_names_inner", False):
        # JAX names a call's operands before its results (seen when an equation is printed alone, as in
        # "became a tracer" texts: ``b:f32[3] = jit[...] a``); in a whole jaxpr the operands are named already
        for a in eqn.invars:
            _pp_atom(a, names)
    # the binders fill lines as the operands do (JAX's pp_vars), continuing 2 past the equation
    lhs = _fill_args([_pp_outbinder(v, names, unused) for v in eqn.outvars], indent, indent)
    lead = f"{lhs} = " if lhs else ""  # an equation without results (an effect) prints no binders, as JAX
    # the column where the primitive's name starts (after the binders' last line)
    lead_col = len(lead) - lead.rfind("\n") - 1 if "\n" in lead else indent + len(lead)
    params = eqn.params
    pp_rule = getattr(prim, "pp_params", None)
    items = pp_rule(eqn) if pp_rule is not None else sorted(params.items())
    inner = _unclosed(params["jaxpr"]) if getattr(prim, "call_names_inner", False) else None
    if inner is not None and inner not in names.shared:
        # jit's inner jaxpr names its inputs/outputs after the call site, as JAX prints it; an operand passed
        # twice names only its first input (the other gets a fresh name where the inner jaxpr binds it)
        seen = set()
        for iv, ov in zip(inner.invars, eqn.invars):
            if isinstance(ov, Var) and id(ov) not in seen:
                seen.add(id(ov))
                names.bind(iv, names.fresh(ov))
        for iv, ov in zip(inner.outvars, eqn.outvars):
            if isinstance(iv, Var) and iv not in inner.invars and not isinstance(ov, DropVar):
                # an unread result prints ``_`` inside too, naming nothing (JAX's dropped binder)
                names.bind(iv, "_" if ov in unused else names.fresh(ov))
    rhs_args = None
    if items and _has_subjaxpr(dict(items), names.shared):
        # JAX's layout is by width: the whole equation on one line when it fits, nested jaxprs included.
        trial = names.copy()
        ptxt = " ".join(f"{k}={pp_param_value(v, trial, indent, -_WIDTH * 1000, flat=True)}" for k, v in items)
        args = " ".join(_pp_atom(a, trial) for a in eqn.invars)
        one = f"{prim.name}[{ptxt}] {args}"
        if "\n" not in one and lead_col + len(one) <= _WIDTH:
            one = lead + one
            names.names, names.n = trial.names, trial.n
            return one
        lines = [f"{k}={pp_param_value(v, names, indent + 2, indent + 2 + len(str(k)) + 1)}" for k, v in items]
        rhs_args = _fill_args([_pp_atom(a, names) for a in eqn.invars], indent + 2, indent)
        body = "\n".join(" " * (indent + 2) + ln for ln in lines)
        s = f"{lead}{prim.name}[\n{body}\n{' ' * indent}]"
        return f"{s} {rhs_args}"
    ptxt = ""
    if items:
        ptxt = "[" + " ".join(f"{k}={pp_param_value(v, names, indent)}" for k, v in items) + "]"
    atoms = [_pp_atom(a, names) for a in eqn.invars]
    # JAX's params are one group: it breaks only when the group itself (up to its ``]``) passes the width
    if items and lead_col + len(prim.name) + len(ptxt) > _WIDTH:
        # Too wide: one param per line, as JAX breaks the params group.
        body = "\n".join(" " * (indent + 2) + f"{k}={pp_param_value(v, names, indent + 2)}" for k, v in items)
        return f"{lead}{prim.name}[\n{body}\n{' ' * indent}] {_fill_args(atoms, indent + 2, indent)}"
    # JAX prints the operands after a space even when there are none (``iota[...] ``).
    return f"{lead}{prim.name}{ptxt} {_fill_args(atoms, lead_col + len(prim.name) + len(ptxt) + 1, indent)}"


def _fill_args(atoms, col, indent):
    """An equation's operands from column ``col``, as JAX's ``pp_vars`` lays them out: each separator is its
    own break group, measured alone, so it breaks (the next operand on a new line, indented 2 past the
    equation) only once the line has reached the width; the first operand always follows the primitive."""
    if not atoms:
        return ""
    out = [atoms[0]]
    col += len(atoms[0])
    for a in atoms[1:]:
        if col + 1 <= _WIDTH:
            out.append(" " + a)
            col += 1 + len(a)
        else:
            out.append("\n" + " " * (indent + 2) + a)
            col = indent + 2 + len(a)
    return "".join(out)


def _pp_jaxpr(jaxpr, names, indent, col=None, top=False):
    consts = [_pp_binder(v, names) for v in jaxpr.constvars]
    ins = [_pp_binder(v, names) for v in jaxpr.invars]
    head = _pp_head(consts, ins, indent if col is None else col, indent)
    # JAX 0.10.2 prints unread equation outputs as ``_`` in the top-level jaxpr only; nested jaxprs (jit,
    # scan, cond, while, remat bodies) name every binder
    unused = _unused_outvars(jaxpr) if top else frozenset()
    if not any(_has_subjaxpr(e.params, names.shared) for e in jaxpr.eqns):
        # Try the one-line form with a scratch copy of the names so a failed attempt names nothing.
        trial = names.copy()
        eqns = "; ".join(_pp_eqn(e, trial, indent, unused) for e in jaxpr.eqns)
        outs = _pp_outs(jaxpr.outvars, trial)
        one = f"{head} {eqns} in {outs} }}"
        if (indent if col is None else col) + len(one) <= _WIDTH and "\n" not in one:
            names.names, names.n = trial.names, trial.n
            return one
    lines = [head]
    for e in jaxpr.eqns:
        lines.append(" " * (indent + 4) + _pp_eqn(e, names, indent + 4, unused))
    lines.append(" " * (indent + 2) + f"in {_pp_outs(jaxpr.outvars, names)} }}")
    return "\n".join(lines)


def _pp_head(consts, ins, col, indent):
    """``{ lambda consts; ins. let`` starting at column ``col``. JAX 0.10.2's printer fills the binders: each
    space between two binders is its own group, so the line breaks there (continuing at ``indent + 4``) only
    when the line has already reached the width; a binder may run past it."""
    out = "{ lambda "
    cur = col + len(out)

    def fill(binders):
        nonlocal out, cur
        for i, b in enumerate(binders):
            if i:
                if cur + 1 > _WIDTH:
                    out += "\n" + " " * (indent + 4)
                    cur = indent + 4
                else:
                    out += " "
                    cur += 1
            out += b
            cur += len(b)
    fill(consts)
    out += "; "
    cur += 2
    fill(ins)
    return out + ". let"


def _pp_outs(outvars, names):
    outs = [_pp_atom(v, names) for v in outvars]
    if len(outs) == 1:
        return f"({outs[0]},)"
    return "(" + ", ".join(outs) + ")"


_SHARED_MIN_EQNS = 11   # JAX 0.10.2 prints a sub-jaxpr of more than 10 equations at the top, as if shared


def _shared_jaxprs(top):
    """``[(name, jaxpr)]`` of the sub-jaxprs JAX 0.10.2 prints once, before the jaxpr, as ``let name = ... in``:
    those met more than once (the same jaxpr object, e.g. a jitted function called twice) and those of more
    than 10 equations. Named after the ``name`` param of the equation holding them (``jit``'s), else
    ``jaxpr``; repeated names get a counter (``jaxpr1``...). Found breadth-first, as JAX does."""
    counts, names, order = {}, {}, []
    queue = collections.deque([top])
    while queue:
        j = queue.popleft()
        if j not in counts:
            counts[j] = 0
            order.append(j)
        counts[j] += 1
        if j is not top and len(j.eqns) >= _SHARED_MIN_EQNS:
            counts[j] += 1
        for e in j.eqns:
            subs = list(_subjaxprs(e.params))
            queue.extend(subs)
            name = e.params.get("name")
            if isinstance(name, str):
                for sub in subs:
                    names.setdefault(sub, name.strip("<>"))
    used, out = collections.Counter(), []
    for j in order:
        if counts[j] == 1:
            continue
        name = names.get(j, "jaxpr")
        k = used[name]
        used[name] += 1
        if k:
            name += str(k)
            used[name] += 1
        out.append((name, j))
    return out


def pp_jaxpr(jaxpr):
    """JAX's text for ``jaxpr`` (a ``Jaxpr`` or ``ClosedJaxpr``)."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    names = _Names()
    shared = _shared_jaxprs(jaxpr)
    names.shared = {j: n for n, j in shared}
    names.taken = set(names.shared.values())
    parts = []
    for n, j in shared:
        del names.shared[j]   # printed in full here; later references print its name
        head = f"let {n} = "
        parts.append(head + _pp_jaxpr(j, names, 0, len(head)) + " in")
        names.shared[j] = n
    parts.append(_pp_jaxpr(jaxpr, names, 0, top=True))
    return "\n".join(parts)


# ----------------------------------------------------------------------------------------------- checking

def check_jaxpr(jaxpr):
    """Type-checks ``jaxpr``: each variable defined once before use and each equation's output avals equal
    its primitive's abstract eval. Raises ``TypeError`` naming the equation."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    defined = set()
    for v in itertools.chain(jaxpr.constvars, jaxpr.invars):
        if v in defined:
            raise TypeError(f"variable {v} defined twice")
        defined.add(v)
    for i, eqn in enumerate(jaxpr.eqns):
        for a in eqn.invars:
            if isinstance(a, Var) and a not in defined:
                raise TypeError(f"equation {i} ({eqn.primitive.name}) reads undefined variable {a}")
        if eqn.primitive.abstract_eval is not None:
            out = eqn.primitive.abstract_eval(*[a.aval for a in eqn.invars], **eqn.params)
            out = list(out) if eqn.primitive.multiple_results else [out]
            got = [v.aval for v in eqn.outvars]
            if [o.strip_weak_type() for o in out] != [g.strip_weak_type() for g in got]:
                raise TypeError(f"equation {i} ({eqn.primitive.name}) has output types {got}, expected {out}")
        for v in eqn.outvars:
            defined.add(v)
    for v in jaxpr.outvars:
        if isinstance(v, Var) and v not in defined:
            raise TypeError(f"output {v} is not defined")
    return True

