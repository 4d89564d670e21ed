"""Mutable array references (``jax.Ref``): the box, its reads and writes, and their discharge.

A ``Ref`` holds one value (an Array eagerly, a tracer while a transformation traces). Reads are indexing
of that value; writes replace it with the functionally updated value (``value.at[idx].set/add``). So a
ref's effects are discharged while tracing, not by a later pass over a stateful jaxpr: inside ``jit``,
``scan``, ``while_loop``, ``fori_loop`` and ``cond``/``switch`` every ref the body reaches that was made
outside it is *plumbed*: its value enters as an extra input (a carry for loops) and its final value leaves as
an extra output, written back into the box when the call returns. JAX's ``state`` discharge does the same
after tracing, on the ``get``/``swap``/``addupdate`` equations; cranax, whose jaxprs hold no effects, does it
before a jaxpr exists, so every later transformation sees only pure code.

Which refs a body reaches is found by tracing: the first access to an unplumbed ref raises ``_NeedRef``
(internal), the caller adds the ref to the call's plan and traces again. The plan is kept per function, so
later calls (cache hits, no tracing) plumb the same refs.

``make_jaxpr`` alone *stages* the refs it meets at its top level, so its jaxpr prints them as JAX's does
(``Ref{f32[3]}``, ``b:f32[3] <- a[...]``): see ``state_jaxpr``.

Transformations that do not plumb (``grad``, ``vmap``, AOT lowering) let a body read outer refs, and write
values that do not depend on the transformation (``stop_gradient`` results, constants); writing a value that
does is JAX's error (a differentiated value into a non-differentiated ref, a vmapped value into an unbatched
ref). ``vmap`` maps over refs passed as arguments (``bind``/``restore`` below); ``custom_vjp`` passes ref
arguments through to its rules.
"""

import functools
import os
import sys
import threading
import types
import weakref

import numpy as np

from .. import _core
from ..array import Array, ComplexBuffer, _from_host
from ..core import Tracer, get_aval
import inspect

from .._pytree import (keystr, register_pytree_node, tree_flatten, tree_flatten_with_path, tree_leaves, tree_map,
                         tree_unflatten)
from ..config import config
from ..dslice import Slice
from ..interpreters import ad as _ad
from ..interpreters import dispatch
from ..interpreters import partial_eval as _pe
from ..interpreters.partial_eval import debug_info
from .. import core
from . import elementwise as _ew
from . import state_jaxpr as _sj

__all__ = ["Ref", "AbstractRef", "new_ref", "get", "swap", "addupdate", "freeze"]


class AbstractRef:
    """The abstract value of a ``Ref``: its ``inner_aval`` (a ``ShapedArray``), printed ``Ref{float32[3]}``.
    Mirrors ``jax.ref.AbstractRef``."""

    def __init__(self, inner_aval, memory_space=None, kind=None):
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: len(self.inner_aval.shape))
    size = property(lambda self: self.inner_aval.size)
    weak_type = property(lambda self: self.inner_aval.weak_type)

    def str_short(self, short_dtypes=True, **_):
        """``Ref{f32[3]}`` (a jaxpr binder's type, as ``ShapedArray.str_short``)."""
        return f"Ref{{{self.inner_aval.str_short(short_dtypes=short_dtypes)}}}"

    def __repr__(self):   # ``jax.typeof(ref)``: ``Ref{float32[3]}``
        return self.str_short(short_dtypes=False)

    def strip_weak_type(self):
        return self

    def update(self, **kw):
        return AbstractRef(self.inner_aval.update(**kw), self.memory_space, self.kind)

    def __eq__(self, other):
        return isinstance(other, AbstractRef) and other.inner_aval == self.inner_aval

    def __hash__(self):
        return hash(("Ref", self.inner_aval))


class _NeedRef(Exception):
    """Internal: ``ref`` was reached inside the plumbing call ``call`` without being plumbed into it."""

    def __init__(self, ref, call):
        super().__init__("internal: an unplumbed array reference (cranax retraces with it plumbed)")
        self.ref = ref
        self.call = call


class _Local(threading.local):
    def __init__(self):
        self.frames = []   # the active plumbing calls (_Call), innermost last
        self.pending = []
        self.donate = None   # (a jit's pure twin, ``donatable``'s list) while a ref-writing call runs it


_local = _Local()   # frames; ``pending``: the jit twins being traced (api.JitWrapped._call_with_refs)
_made = [False]   # whether a Ref was ever made (any_refs)
_live = weakref.WeakSet()   # the refs alive (whose buffers a callback's argument may be: `detach_for_host`)
_DEAD = object()   # a ref's frame once the call that made it has returned


class _Call:
    """One plumbing call (a jit, scan or while_loop being traced): the refs made in it; ``where`` names the
    traced function for the leak error (``f at file.py:3 traced for jit``)."""

    def __init__(self, what, where=None):
        self.what = what
        self.where = where
        self.created = []
        self.track = None   # a dict: the refs reached while set, id -> ref (plumb_while's aliasing check)
        self.written = ()   # per plumbed ref, whether the traced function wrote it (set by run_plumbed)


def _top():
    f = _local.frames
    return f[-1] if f else None


class Ref:
    """A mutable array reference, made by ``jax.new_ref``: ``ref[idx]`` reads, ``ref[idx] = v`` writes
    (NumPy indexing), ``jax.ref.swap``/``addupdate`` update in place, ``jax.freeze`` gives the final value.
    Not an Array: arithmetic on a ref is a TypeError. Mirrors ``jax.Ref``."""

    __slots__ = ("_val", "_frame", "_trace", "_line", "_weak", "__weakref__")

    def __init__(self, aval, refs):
        raise TypeError("jax.Ref is made with jax.new_ref(init_val), not constructed directly")

    @classmethod
    def _make(cls, val):
        _made[0] = True
        r = object.__new__(cls)
        r._val = val
        _live.add(r)
        # the weak type of the ref's aval, fixed when it is made: eager reads give it (JAX's ``get`` result
        # is typed by the aval, whatever the box holds after a jit wrote it)
        r._weak = type(val) is not _sj.Staged and get_aval(val).weak_type
        r._frame = _top()
        r._trace = core._state.trace
        r._line = None
        if r._frame is not None:
            r._frame.created.append(r)
            r._line = _user_line()
        return r

    # -- what a ref is
    # No ``aval`` attribute (JAX has one): cranax's ``get_aval`` reads ``.aval``, and a ref must stay a
    # TypeError wherever an array is expected (``jnp.sin(ref)``); ``jax.typeof(ref)`` gives the AbstractRef.
    def _ref_aval(self):
        return AbstractRef(get_aval(self._live()))

    shape = property(lambda self: get_aval(self._live()).shape)
    dtype = property(lambda self: get_aval(self._live()).dtype)
    ndim = property(lambda self: len(get_aval(self._live()).shape))
    size = property(lambda self: get_aval(self._live()).size)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object")
        return shape[0]

    def __iter__(self):   # indexing clamps, so the old __getitem__ protocol would never stop
        raise TypeError("'Ref' object is not iterable")

    _cranax_typeof = _ref_aval   # core.typeof's hook

    def _live(self):
        if self._frame is _DEAD:
            aval, where = self._val
            msg = ("Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing "
                   f"for a reference to an intermediate value with type {aval} wrapped in a DynamicJaxprTracer "
                   "to escape the scope of the transformation.\nJAX transformations require that functions "
                   "explicitly return their outputs, and disallow saving intermediate values to global state.")
            if where is not None:
                msg += f"\nThe function being traced when the value leaked was {where}."
            if self._line is not None:
                msg += ("\n------------------------------\nThe leaked intermediate value was created on line "
                        f"{self._line}. ")
            raise core.UnexpectedTracerError(msg)
        return self._val

    def _access(self):
        """The ref's current value, after checking it belongs to the innermost plumbing call."""
        v = self._live()
        top = _top()
        if type(v) is _sj.Staged and top is not None:
            raise _sj.Unsupported   # a make_jaxpr-staged ref inside a nested jit/loop body
        if _local.__dict__.get("staging_nested") and not isinstance(v, Tracer) and (
                type(v) is not _sj.Staged or v.tracer._trace is not core._state.trace):
            # a staged jit body reaching an outer ref other than through its arguments (make_jaxpr retraces)
            raise _sj.Unsupported
        if _local.__dict__.get("staging") and type(v) is not _sj.Staged and not isinstance(v, Tracer):
            # make_jaxpr: an eager ref the function closes over is staged as a Ref constvar (once per trace)
            st = _stage_eager(self, v)
            if st is not None:
                return st
        if self._frame is not top:
            raise _NeedRef(self, top)
        if top is not None and top.track is not None:
            top.track.setdefault(id(self), self)
        return v

    # -- reads and writes
    def __getitem__(self, idx):
        return get(self, idx)

    def __setitem__(self, idx, value):
        swap(self, idx, value, _function_name="ref_set")

    def addupdate(self, x, idx=()):
        addupdate(self, idx, x)

    def unsafe_buffer_pointer(self):
        """The address of the held value's buffer (``Array.unsafe_buffer_pointer``): the array-refs guide
        prints it around an in-place update: as JAX's, it stays the same for the ref's life (on the CPU;
        a ref holding a committed or another device's array gets a new buffer per write)."""
        v = self._live()
        if isinstance(v, (Tracer, _sj.Staged)):
            raise TypeError("unsafe_buffer_pointer: the reference holds a traced value")
        return (v if isinstance(v, Array) else _from_host(v)).unsafe_buffer_pointer()

    @property
    def at(self):   # JAX 0.10.2's ``Ref.at`` raises too (eagerly and under jit)
        raise NotImplementedError("Ref.at: indexed views of array references are not supported (as in JAX 0.10.2)")

    def __repr__(self):
        v = self._live()
        if isinstance(v, (Tracer, _sj.Staged)):
            return f"Ref{{{get_aval(v).str_short()}}}"
        return "Ref" + repr(v)[len("Array"):]

    __str__ = __repr__


def _as_value(x, what):
    if isinstance(x, Ref):
        raise TypeError(f"{what}: the value written to an array reference cannot be a reference (no "
                        "refs-to-refs)")
    if isinstance(x, Tracer) or isinstance(x, Array):
        return x
    if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)) or isinstance(x, core.TypedScalar):
        return _from_host(x)
    raise TypeError(f"{what}: expected an array value, got {type(x).__name__}")


def new_ref(init_val, *, memory_space=None, kind=None):
    """A new ``Ref`` holding ``init_val`` (an array or scalar; its shape and dtype are the ref's for good).
    Inside ``jit`` the ref lives until the traced function returns (it cannot be returned). Mirrors
    ``jax.new_ref``."""
    if kind not in (None, "no_grad_no_remat"):
        raise ValueError(f"new_ref: kind must be None or 'no_grad_no_remat', got {kind!r}")
    value = _as_value(init_val, "new_ref")
    trace = _sj.staging_trace() if _local.__dict__.get("staging") else None
    if trace is not None:   # make_jaxpr prints a ref made at its top level as a new_ref equation
        return Ref._make(_sj.stage_new_ref(trace, value, kind))
    return Ref._make(_private(value, value))


# -- the ref's own buffer. A ref keeps one buffer for its whole life, as JAX's (XLA aliases a jitted write's
# output to the ref's input buffer; eager writes run the same way): ``unsafe_buffer_pointer()`` stays put.
# cranax's arrays may share storage (a jit may return its input, a reshape is a view), so the buffer is kept
# private: a new ref copies its value, reads and the outputs of a call the ref was fed to are copied when they
# share its storage, and every write copies the new value into it (``_store``), on the device's stream after
# the work already queued (which may still read the old value). See ``runtime/ref_buffer.rs``.

def _parts(buf):
    """The core buffers of an array's buffer (a complex array's two real planes), or None when its buffers
    are not plain CPU core buffers written in place (committed or other-device arrays keep today's rebinding)."""
    if type(buf) is ComplexBuffer:
        parts = (buf.re, buf.im)
    else:
        parts = (buf,)
    return parts if all(type(b) is _core.DeviceArray for b in parts) else None


def _private(x, *held):
    """``x`` (an eager Array) with storage shared with none of ``held`` (eager Arrays: ``x`` itself for a
    copy in any case); anything else as it is."""
    if type(x) is not Array:
        return x
    parts = _parts(x._buf)
    hp = [p for h in held if type(h) is Array for p in (_parts(h._buf) or ())]
    if parts is None or not hp:
        return x
    out = [b._ref_detach(hp) for b in parts]
    return Array._from_buffer(ComplexBuffer(*out) if len(out) == 2 else out[0], x.aval)


def detach_for_host(bufs):
    """``bufs`` (the core buffers handed to a host callback), each copied where it is a live ref's buffer: the
    callback may keep its arguments, and a later write into the ref lands in that buffer (JAX's callback keeps
    the value it was given)."""
    if not _made[0]:
        return bufs
    hp = [p for r in list(_live) if type(r._val) is Array for p in (_parts(r._val._buf) or ())]
    if not hp:
        return bufs
    return [b._ref_detach(hp) if type(b) is _core.DeviceArray else b for b in bufs]


def _store(ref, new):
    """Makes ``new`` the ref's value: an eager value is copied into the ref's own buffer (kept), a traced one
    (a plumbed or vmapped binding) replaces the value."""
    old = ref._val
    if type(old) is Array and type(new) is Array and old.aval.shape == new.aval.shape \
            and old.aval.dtype == new.aval.dtype:
        po, pn = _parts(old._buf), _parts(new._buf)
        if po is not None and pn is not None and len(po) == len(pn):
            out = [o._ref_write(n) for o, n in zip(po, pn)]
            ref._val = Array._from_buffer(ComplexBuffer(*out) if len(out) == 2 else out[0], new.aval)
            return
    # rebound (a traced value, or a committed or other-device array, never written in place): a plain
    # eager value is copied first, as the ref's next write may land in it
    ref._val = _private(new, new)


def detach_outputs(leaves, refs):
    """The leaves of a call's output (the refs ``refs`` were fed to it), each copied where it shares storage
    with a ref's buffer (a jit returning ``r[...]`` returns the ref's own buffer): later writes into the refs
    must not change them. Also for the refs' final values before any is written (a jit swapping two refs
    returns each one's buffer as the other's final value). Called before the call's write-backs are queued."""
    held = [r._val for r in refs if type(r._val) is Array]
    if not held:
        return leaves
    return [_private(x, *held) if type(x) is Array else x for x in leaves]


def detach_finals(finals, refs):
    """``detach_outputs`` for a call's final values, ``finals[k]`` being ``refs[k]``'s: each is copied where it
    shares storage with another ref's buffer (a jit swapping two refs), not where it is its own ref's buffer
    (the program wrote the new value into it: its write copies nothing)."""
    held = [r._val if type(r._val) is Array else None for r in refs]
    if not any(h is not None for h in held):
        return finals
    return [_private(x, *[h for i, h in enumerate(held) if i != k and h is not None]) if type(x) is Array else x
            for k, x in enumerate(finals)]


def donatable(refs, vals, arg_pos):
    """``[(value, k, leaf)]``: the values fed to a jitted call's pure twin for ``refs`` (``vals[k]`` for
    ``refs[k]``: the closed-over refs' values are its first leaves, the arguments' at ``arg_pos``) that are the
    ref's own private buffer (a plain CPU array, not complex), with the leaf each should be: the call may write
    ``refs[k]``'s final value straight into it (``alias_pairs``), as XLA aliases a ref's input and output."""
    out = []
    n_closed = len(refs) - len(arg_pos)
    for k, (r, v) in enumerate(zip(refs, vals)):
        if v is r._val and type(v) is Array:
            parts = _parts(v._buf)
            if parts is not None and len(parts) == 1:
                out.append((v, k, k if k < n_closed else arg_pos[k - n_closed]))
    return out


def alias_pairs(donated, leaves, n_consts, finals_idx):
    """The ``(input, output)`` pairs of a ref-writing call's executable for ``donated`` (``donatable``): the
    input holding the ref's value (after ``n_consts`` constants, one per leaf of the call's arguments; checked
    to be that value) and the output holding its final value (``finals_idx[k]``: ``None`` when not written)."""
    pairs = []
    for v, k, i in donated:
        o = finals_idx[k] if k < len(finals_idx) else None
        if i < len(leaves) and leaves[i] is v and type(o) is int:
            pairs.append((n_consts + i, o))
    return pairs


def _norm_idx(idx):
    return () if idx is None else idx


def get(ref, idx=None):
    """``ref[idx]`` (``None`` or ``...``: the whole value) as an Array. Mirrors ``jax.ref.get``."""
    _check_ref(ref, "get")
    v = ref._access()
    if type(v) is _sj.Staged:
        return _sj.stage_get(v, idx)
    whole = v
    v = _eager_view(ref, v)
    idx = _norm_idx(idx)
    if idx != () and idx is not Ellipsis:
        v = v[idx]
    # an eager read is a value of its own (JAX's read is a fresh buffer): later writes must not change it
    return _private(v, whole)


def _eager_view(ref, v):
    """``v``, an eager ref's value, typed as the ref's aval (weakly when it was made from a weak value)."""
    if ref._frame is None and ref._weak and not isinstance(v, Tracer) and not get_aval(v).weak_type:
        return _ew.convert_element_type_p.bind(v, new_dtype=get_aval(v).dtype, weak_type=True, sharding=None)
    return v


def _check_ref(ref, what):
    if not isinstance(ref, Ref):
        raise TypeError(f"jax.ref.{what}: expected a jax.Ref, got {type(ref).__name__}")


def _checked_update(ref, idx, value, fname):
    """(old value at idx, the ref's whole value, the checked value, whether idx is the whole, idx)."""
    whole = ref._access()
    value = _as_value(value, fname)
    idx = _norm_idx(idx)
    full = idx == () or idx is Ellipsis
    old = whole if full else whole[idx]
    _check_write(ref, value)   # first, as JAX's batching/jvp rule runs before the inner bind's shape check
    check_update_avals(get_aval(whole), get_aval(old), get_aval(value), full, fname)
    return old, whole, value, full, idx


def check_update_avals(ra, oa, va, full, fname):
    """JAX's errors for a write of a value of aval ``va`` where the ref (``ra``) holds ``oa`` at the index."""
    name = "swap" if fname in ("ref_swap", "ref_set") else "addupdate"
    if tuple(va.shape) != tuple(oa.shape):
        raise ValueError(f"Invalid shape for `{name}`. Ref shape: {tuple(ra.shape)}. Expected shape: "
                         f"{tuple(oa.shape)}. Value shape: {tuple(va.shape)}. " + ("Transforms: (). " if full else ""))
    if va.dtype != ra.dtype:
        raise ValueError(f"Invalid dtype for `{name}`. Ref dtype: {ra.dtype}. Value dtype: {va.dtype}. ")


def swap(ref, idx, value, _function_name="ref_swap"):
    """Writes ``value`` at ``ref[idx]`` and returns what was there. ``value`` must have exactly the indexed
    shape and the ref's dtype (``ValueError`` otherwise, JAX's text). Mirrors ``jax.ref.swap``."""
    _check_ref(ref, "swap")
    st = ref._access()
    if type(st) is _sj.Staged:
        value = _as_value(value, _function_name)
        if not (isinstance(value, Tracer) and value._trace is st.tracer._trace):
            _check_write(ref, value)
        return _sj.stage_swap(st, idx, value, _function_name)
    old, whole, value, full, idx = _checked_update(ref, idx, value, _function_name)
    # the box holds a swapped-in value strong (JAX's eager swap; reads still give the ref's aval type)
    old = _private(_eager_view(ref, old), whole)
    _store(ref, _ew.strip_weak(value if full else whole.at[idx].set(value)))
    return old


def set(ref, idx, value):  # noqa: A001  (JAX's name)
    """``ref[idx] = value``. Mirrors ``jax.ref.set``."""
    swap(ref, idx, value, _function_name="ref_set")


def addupdate(ref, idx, x):
    """``ref[idx] += x`` in place. Mirrors ``jax.ref.addupdate``."""
    _check_ref(ref, "addupdate")
    st = ref._access()
    if type(st) is _sj.Staged:
        x = _as_value(x, "ref_addupdate")
        if not (isinstance(x, Tracer) and x._trace is st.tracer._trace):
            _check_write(ref, x)
        return _sj.stage_addupdate(st, idx, x, "ref_addupdate")
    old, whole, x, full, idx = _checked_update(ref, idx, x, "ref_addupdate")
    new = _ew.add(whole, x) if full else whole.at[idx].add(x)
    # eagerly the sum keeps its own type (JAX: ``addupdate(new_ref(1.), ..., 1.)`` stays weak); a traced
    # (plumbed) value is held strong, its type fixed across loop iterations
    _store(ref, new if ref._frame is None and not isinstance(whole, Tracer) else _ew.strip_weak(new))


def add_window(ref, starts, sizes, x, dynamic_slice_p, dynamic_update_slice_p):
    """``ref[s0:s0+n0, s1:s1+n1, ...] += x`` with the starts clamped so the window fits, as ``dynamic_slice``
    clamps: the transpose of a dynamic slice into a cotangent ref (``ad.ref_transpose_rules``; the caller
    passes the two primitives, whose family imports this one). A staged ref (make_jaxpr) stages it as JAX
    prints it, ``ref[c:c+1] += x``; a held or plumbed one gets the window's sum written back
    (``dynamic_update_slice``), leaving the rest of the value untouched."""
    _check_ref(ref, "addupdate")
    st = ref._access()
    if type(st) is _sj.Staged:
        idx = []
        for a, n, d in zip(starts, sizes, st.aval.shape):
            if isinstance(a, Tracer):
                idx.append(Slice(a, n))
            else:   # a known start: a static window, clamped here
                a = min(max(int(a.val if isinstance(a, core.TypedScalar) else a), 0), d - n)
                idx.append(slice(a, a + n))
        try:
            return addupdate(ref, tuple(idx), x)
        except _sj.Unsupported:   # a start this trace cannot stage: the dense cotangent, added whole
            return addupdate(ref, None, dynamic_update_slice_p.bind(_ad.zeros_like_aval(st.aval), x, *starts))
    whole = get(ref)
    window = dynamic_slice_p.bind(whole, *starts, slice_sizes=tuple(sizes))
    swap(ref, None, dynamic_update_slice_p.bind(whole, _ew.add(window, x), *starts),
         _function_name="ref_addupdate")


def keep_weak(refs, fn):
    """Runs ``fn()``, which writes ``refs`` through a jit, and gives the eager ones that held a weakly typed
    value a weak value again: a backward pass adding into a cotangent ref keeps its type, as JAX's (a user
    jit writing a ref makes it strong, as JAX's)."""
    weak = [r for r in refs if r._frame is None and isinstance(r._val, Array) and r._val.aval.weak_type]
    out = fn()
    for r in weak:
        if isinstance(r._val, Array) and not r._val.aval.weak_type:
            _store(r, _ew.convert_element_type_p.bind(r._val, new_dtype=r._val.aval.dtype, weak_type=True,
                                                      sharding=None))
    return out


def freeze(ref):
    """The ref's final value as an Array. Mirrors ``jax.freeze``."""
    _check_ref(ref, "freeze")
    v = ref._access()
    if type(v) is _sj.Staged:
        return _sj.stage_freeze(v)
    return _private(_eager_view(ref, v), v)


# ----------------------------------------------------------------------------------------------- write checks

def _check_write(ref, value):
    """JAX's errors for a write, inside a transformation that does not plumb refs (grad, vmap), of a value
    depending on that transformation into a ref from outside it: the ref could not hold it afterwards."""
    cur = core._state.trace
    if cur is ref._trace or cur is None:
        return
    kind = type(cur).__name__
    # Under vmap any write into an unbatched outer ref is JAX's error, whatever the value (its swap batching
    # rule runs for every write there); under grad only a differentiated value is.
    if "Batch" not in kind and (not isinstance(value, Tracer) or value._trace is not cur):
        return
    if "Batch" in kind:
        raise Exception(f"performing a set/swap operation with vmapped value on an unbatched array reference "
                        f"of type {ref._ref_aval()}. Move the array reference to be an argument to the vmapped "
                        "function?")
    if "JVP" in kind or "Lin" in kind or "PartialEval" in kind:
        raise Exception(f"performing a set/swap operation with a differentiated value on a non-differentiated "
                        f"array reference of type {ref._ref_aval()}. Move the array reference to be an argument of "
                        "the differentiated function?")
    raise Exception(f"writing a value traced by {kind} into an array reference of type {ref._ref_aval()} made "
                    "outside that transformation: pass the reference as an argument, or write a value that "
                    "does not depend on it (cranax discharges refs while tracing: AOT lowering "
                    "cannot record a write into a ref made outside the traced function)")


# ----------------------------------------------------------------------------------------------- plumbing

def _staged_arg(tracer):
    """What a make_jaxpr-traced function receives for a ``Ref{...}`` input: a Ref of the ref variable. The
    trace is a staging one from then on (a nested body taking staged refs: new refs, reads and writes in it
    and in the calls it makes are staged as well)."""
    r = Ref._make(_sj.stage_arg(tracer))
    r._trace = tracer._trace
    tr = _local.__dict__.get("staging_traces")
    if tr is not None and _local.__dict__.get("staging"):
        tr[id(tracer._trace)] = tracer._trace
    return r


_pe.arg_wrappers[AbstractRef] = _staged_arg


def _stage_eager(ref, v):
    """make_jaxpr's trace (not a nested body's) reaching the eager ref ``ref`` (value ``v``): stages it as a
    ``Ref{...}`` constvar and binds the ref to it until make_jaxpr returns, so later reads, and the nested
    jit/cond/scan/while bodies it is passed into, see a staged ref (JAX's closed-over Ref consts). None when
    not at make_jaxpr's own trace."""
    t = _sj.staging_trace()
    if t is None or id(t) in _local.staging_traces:
        return None
    st = _sj.stage_const(t, ref, v)
    _local.staged_consts.append((ref, bind(ref, st)))
    return st


def staging(on):
    """Turns make_jaxpr's ref staging on or off for this thread (with fresh tables of the eager refs it
    staged and of the nested bodies' traces taking staged refs); returns the previous setting, which
    ``staging(prev)`` restores (giving the eager refs back their values)."""
    d = _local.__dict__
    prev = (d.get("staging", False), d.get("staged_consts"), d.get("staging_traces"))
    if isinstance(on, tuple):   # restoring
        for r, saved in reversed(_local.staged_consts or ()):
            restore(r, saved)
        _local.staging, _local.staged_consts, _local.staging_traces = on
    else:
        _local.staging, _local.staged_consts, _local.staging_traces = on, [], {}
    return prev


def staged_closure_refs(fun):
    """The staged refs ``fun`` closes over (make_jaxpr staging refs), the eager ones among them staged as
    constvars of make_jaxpr's trace first (when reached from it): a nested jit/cond/scan/while takes them as
    ``Ref{...}`` inputs, as JAX's. ``[]`` when not staging."""
    if not callable(fun) or not _local.__dict__.get("staging") or _sj.staging_trace() is None:
        return []
    out = []
    for r in closure_refs(fun, nested=True):
        if any(r is c for c in out):
            continue
        v = r._val
        if type(v) is not _sj.Staged and not isinstance(v, Tracer) and r._frame is not _DEAD:
            if _stage_eager(r, v) is None:
                continue
        if type(r._val) is _sj.Staged and r._val.tracer._trace is core._state.trace:
            out.append(r)
    return out


def staged_ref_args(leaves):
    """Whether make_jaxpr stages refs here (its own trace, outside any plumbing call) and ``leaves`` (a
    call's arguments) hold a staged ref: then a jit call is staged with ``Ref{...}`` inputs, as JAX prints it."""
    if not _local.__dict__.get("staging") or _sj.staging_trace() is None:
        return False
    for x in leaves:
        # an eager ref passed in (e.g. a cotangent ref a jit's transpose takes) is staged as a constvar
        # first, as when the function reads it: JAX's closed-over Ref const
        if isinstance(x, Ref) and type(x._val) is not _sj.Staged and not isinstance(x._val, Tracer) \
                and x._frame is not _DEAD:
            _stage_eager(x, x._val)
    return any(isinstance(x, Ref) and type(x._val) is _sj.Staged for x in leaves)


def stage_nested(fn):
    """Runs ``fn`` (tracing a jit body whose ref arguments are staged) where reaching any other ref raises
    ``Unsupported``."""
    prev = _local.__dict__.get("staging_nested")
    _local.staging_nested = True
    try:
        return fn()
    finally:
        _local.staging_nested = prev


def any_refs():
    """Whether a Ref was ever made (the plumbing paths cost nothing until one is)."""
    return _made[0]




def bind(ref, value):
    """Binds ``ref`` to ``value`` in the current trace (a vmapped or plumbed view); returns the token
    ``restore`` takes back."""
    saved = (ref._val, ref._frame, ref._trace)
    ref._val, ref._frame, ref._trace = value, _top(), core._state.trace
    return saved


def bind_staged(ref, inner):
    """``bind`` of a staged ``ref`` to ``inner`` (the Ref a nested body receives for it), keeping whether it
    is a closed-over eager ref."""
    inner._val.const = ref._val.const
    return bind(ref, inner._val)


def restore(ref, saved):
    ref._val, ref._frame, ref._trace = saved


def read_for_plumbing(ref, keep_weak=False):
    """The value to feed into a plumbed call (checked against the calling scope: may itself need plumbing).
    ``keep_weak``: a jit reads a weakly typed ref weakly, as JAX's; a loop carry is made strong (its type must
    not change when the body writes)."""
    v = ref._access()
    if type(v) is _sj.Staged:
        raise _sj.Unsupported   # a make_jaxpr-staged ref passed to a jit/loop (make_jaxpr retraces)
    return _eager_view(ref, v) if keep_weak else _ew.strip_weak(v)


def run_plumbed(call, refs, vals, fn):
    """Runs ``fn()`` with each of ``refs`` bound to the matching (traced) value of ``vals`` inside ``call``;
    returns ``(fn's result, the refs' final values)``. Refs made inside are dead afterwards."""
    _local.frames.append(call)
    saved = []
    try:
        for r, v in zip(refs, vals):
            saved.append((r, bind(r, v)))
        out = fn()
        call.written = [r._val is not v for r, v in zip(refs, vals)]
        finals = [_ew.strip_weak(r._val) for r in refs]
        return out, finals
    finally:
        for r, s in reversed(saved):
            restore(r, s)
        _local.frames.pop()
        for r in call.created:
            r._frame, r._val = _DEAD, (AbstractRef(get_aval(r._val)), call.where)
        call.created = []


def check_no_refs(leaves, what, arg_names=None):
    """JAX's error for a traced function (``what``: ``f at file.py:3 traced for jit``) returning a ref;
    ``arg_names``: ``[(ref, name)]`` of the refs passed in as arguments."""
    for v in leaves:
        if isinstance(v, Ref):
            msg = (f"function {what} returned a mutable array reference of type {v._ref_aval()}, but mutable "
                   "array references cannot be returned.")
            name = next((n for r, n in (arg_names or ()) if r is v), None)
            if name is not None:
                msg += f"\n\nThe returned mutable array was passed in as the argument {name}."
            elif v._line is not None:
                msg += f"\n\nThe returned mutable array was created on line {v._line}."
            raise ValueError(msg)


def _user_line():
    """``file.py:7:9 (f)``: where user code (outside cranax) called ``new_ref``, for the errors naming it."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f = f.f_back
    if f is None:
        return None
    code = f.f_code
    col = 0
    try:
        pos = list(code.co_positions())[f.f_lasti // 2]
        col = pos[2] or 0
    except (AttributeError, IndexError):
        pass
    return f"{code.co_filename}:{f.f_lineno}:{col} ({code.co_name})"


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def plumbed_loop(plan_holder, key, what, body_runner):
    """The retry loop of a plumbing call: ``body_runner(call, refs, vals)`` runs the call with ``refs``
    (those found so far for ``plan_holder[key]``) plumbed; returns ``(result, refs, final values)``; each
    unplumbed ref the tracing reaches is added and the call traced again."""
    while True:
        refs = plan_holder.get(key, ())
        vals = [read_for_plumbing(r, keep_weak=what == "jit") for r in refs]
        call = _Call(what)
        try:
            out, finals = body_runner(call, refs, vals)
        except _NeedRef as e:
            if e.call is not call:
                raise
            plan_holder[key] = tuple(refs) + (e.ref,)
            continue
        if refs and what != "jit":   # a jit's runner detaches its outputs itself (before its own write-backs)
            leaves, tree = tree_flatten(out)
            out = tree_unflatten(tree, detach_outputs(leaves, refs))
            if len(refs) > 1:   # (a ref's final value on its own buffer is a write that copies nothing)
                finals = detach_outputs(finals, refs)
        write_back(refs, finals)
        return out


def write_back(refs, finals):
    """Stores a plumbed call's final values into ``refs`` (with the write checks: a call under ``grad`` that
    wrote a differentiated value into an outer ref is JAX's error, not a leaked tracer)."""
    for r, v in zip(refs, finals):
        if v is not None:   # None: the call only read it (no write, as in JAX)
            _check_write(r, v)
    for r, v in zip(refs, finals):
        if v is not None:
            _store(r, v)   # JAX's discharged write: the box holds the value strong


def closure_refs(fun, nested=False):
    """Refs ``fun`` names through its closure cells or globals (for the passed-and-closed-over error);
    ``nested``: also the globals named by the functions defined in it (a jit inside a jit reading a global
    ref: the outer one passes it in; closure cells of inner functions are the outer one's cells already).
    Refs reached through objects count too (``self.r`` in a method, ``obj.r`` of a closed-over object, the
    methods those objects have that the code calls): an attribute is followed when the code names it, a few
    levels deep, since JAX finds every ref the trace reads and cranax finds them before tracing."""
    found, seen = [], {}   # seen: ids visited (this module's ``set`` is jax.ref.set)
    _walk_fn(fun, nested, found, seen, _REF_SEARCH_DEPTH)
    return found


_REF_SEARCH_DEPTH = 4


def _walk_fn(fun, nested, found, seen, depth):
    if id(fun) in seen:
        return
    seen[id(fun)] = fun   # kept alive, so its id is not reused while walking
    f = getattr(fun, "__wrapped__", fun)
    objs = []
    if isinstance(f, types.MethodType):
        objs.append(f.__self__)
        f = f.__func__
    elif isinstance(f, functools.partial):
        objs.extend(f.args)
        objs.extend(f.keywords.values())
        f = f.func
        if not isinstance(f, types.FunctionType):
            objs.append(f)
    for cell in getattr(f, "__closure__", None) or ():
        try:
            objs.append(cell.cell_contents)
        except ValueError:
            continue
    code, glb = getattr(f, "__code__", None), getattr(f, "__globals__", None)
    names = {}
    if code is not None:
        codes = [code]
        while codes:
            co = codes.pop(0)
            names.update(dict.fromkeys(co.co_names))
            if glb is not None:
                for n in co.co_names:
                    c = glb.get(n)
                    if isinstance(c, Ref):
                        found.append(c)
                    elif c is not None and depth > 1 and not isinstance(c, (types.ModuleType, type)):
                        objs.append(c)   # a global object or function the code names: followed below
            if nested:
                codes.extend(k for k in co.co_consts if type(k) is type(co))
    for o in objs:
        _walk_obj(o, names, nested, found, seen, depth)


def _walk_obj(o, names, nested, found, seen, depth):
    if isinstance(o, Ref):
        found.append(o)
        return
    # an object is looked at once per set of names (a method's code names other attributes than its caller's)
    key = (id(o), id(names))
    if depth <= 1 or key in seen or isinstance(o, (types.ModuleType, type, Tracer, Array, np.ndarray,
                                                    str, bytes, int, float, complex, bool)):
        return
    if isinstance(o, (types.FunctionType, types.MethodType, functools.partial)):
        _walk_fn(o, nested, found, seen, depth - 1)
        return
    seen[key] = (o, names)
    if isinstance(o, (list, tuple)):
        for x in o[:64]:
            _walk_obj(x, names, nested, found, seen, depth - 1)
        return
    if isinstance(o, dict):
        for x in list(o.values())[:64]:
            _walk_obj(x, names, nested, found, seen, depth - 1)
        return
    d = getattr(o, "__dict__", None)
    if not isinstance(d, dict):
        return
    cls = type(o)
    for n in names:
        if n in d:
            _walk_obj(d[n], names, nested, found, seen, depth - 1)
        else:   # a method the code calls: its body may read the object's refs
            fn = next((k.__dict__[n] for k in cls.__mro__ if n in k.__dict__), None)
            if isinstance(fn, types.FunctionType):
                _walk_fn(types.MethodType(fn, o), nested, found, seen, depth - 1)


# ----------------------------------------------------------------------------------------------- refs as carries
# A ref in a loop's initial carry is JAX's error: the body either returns it (a ref cannot be returned: the
# ValueError names the output path and the argument it came in as) or returns something else in its place
# (the carry types differ: the TypeError). The ref is taken out of the loop's carry and handed to the body
# as it is (reached refs are plumbed as usual), so the body is traced once as JAX traces it, then the error.

class _RefSlot:
    """Where a carried ref was taken out of a loop's carry (a pytree node without leaves)."""

    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


register_pytree_node(_RefSlot, lambda s: ((), s.i), lambda i, _: _RefSlot(i))


class LoopNames:
    """How JAX names a loop's carry in the errors: ``fun`` the user's body (its name and line), ``kind``
    ("scan", "fori_loop", "while_body"), ``loop`` ("scan" or "while_loop": whose carry check speaks),
    ``argpos`` the body parameter the carry comes in as, ``skip`` leading carry path entries that are the
    loop's own (fori's counter), ``carry_base`` the carry's name when it is the loop's (``loop_carry``),
    ``out_carry(out)`` the carry part of the body's output and ``out_base`` its output path."""

    def __init__(self, fun, kind, loop, out_carry, out_base, argpos=0, skip=0, carry_base=None):
        self.fun, self.kind, self.loop, self.out_carry, self.out_base = fun, kind, loop, out_carry, out_base
        self.argpos, self.skip, self.carry_base = argpos, skip, carry_base

    def arg(self, path):
        try:
            params = list(inspect.signature(self.fun).parameters)
            name = params[self.argpos]
        except (TypeError, ValueError, IndexError):
            name = f"args[{self.argpos}]"
        return name + keystr(tuple(path[self.skip:]))


def carried_refs(init):
    """``(init without its refs, refs, their paths)``; ``refs`` empty when ``init`` holds none."""
    paths = [(p, v) for p, v in tree_flatten_with_path(init)[0] if isinstance(v, Ref)]
    if not paths:
        return init, [], []
    refs = []

    def strip(v):
        if isinstance(v, Ref):
            refs.append(v)
            return _RefSlot(len(refs) - 1)
        return v
    return tree_map(strip, init), refs, [p for p, _ in paths]


def _put_back(carry, refs):
    return tree_map(lambda v: refs[v.i] if isinstance(v, _RefSlot) else v, carry,
                    is_leaf=lambda v: isinstance(v, _RefSlot))


def _carried_ref_error(out, refs, paths, names):
    """Raises JAX's error for a body's output ``out`` given the refs its carry came in with."""
    where = f"{debug_info(names.fun, names.kind, None).func_src_info} traced for {names.kind}"
    out_leaves = tree_flatten_with_path(names.out_carry(out), is_leaf=lambda v: isinstance(v, Ref))[0]
    for p, v in out_leaves:
        if isinstance(v, Ref) and any(v is r for r in refs):
            at = names.out_base + keystr(p)
            msg = f"function {where} returned a mutable array reference of type {v._ref_aval()}"
            if at != "result":
                msg += f" at output tree path {at}"
            msg += ", but mutable array references cannot be returned."
            src = paths[next(i for i, r in enumerate(refs) if r is v)]
            raise ValueError(msg + f"\n\nThe returned mutable array was passed in as the argument {names.arg(src)}.")
    by_path = {tuple(p): v for p, v in out_leaves}
    for r, p in zip(refs, paths):
        name = (names.carry_base + keystr(p)) if names.carry_base else names.arg(p)
        what = f"component {name}" if len(p) > names.skip or names.carry_base else name
        got = by_path.get(tuple(p))
        got_text = get_aval(got).str_short(short_dtypes=False) if got is not None else "a different pytree"
        raise TypeError(f"{names.loop} body function carry input and carry output must have equal types, but they "
                        f"differ:\n\nThe input carry {what} has type {r._ref_aval()} but the corresponding output "
                        f"carry component has type {got_text}.\n\nRevise the function so that all output types "
                        "match the corresponding input types.")


def _carrying(f, refs, paths, names, carry_arg=0):
    """``f`` taking the carry without its refs (argument ``carry_arg``), calling the user's code with them put
    back, and raising JAX's error on what it returns."""
    def g(*args):
        args = list(args)
        args[carry_arg] = _put_back(args[carry_arg], refs)
        _carried_ref_error(f(*args), refs, paths, names)
    return _signed(g, f)


def _signed(wrapper, fun):
    """``wrapper`` with ``fun``'s signature for ``inspect`` (carry-type errors name the body's parameter)."""
    wrapper.__wrapped__ = fun
    return wrapper


def plumb_scan(run, f, init, names=None):
    """``run(body, init)`` (the scan) with the refs ``f`` reaches plumbed through as extra carries. A ref in
    ``init`` is JAX's error (named per ``names``, a :class:`LoopNames`; default: a ``scan``'s)."""
    init, carried, paths = carried_refs(init)
    if carried:
        names = names or LoopNames(f, "scan", "scan", lambda out: out[0], "result[0]")
        f = _carrying(f, carried, paths, names)
    def runner(call, refs, vals):
        if not refs:
            return run(_signed(lambda c, x: run_plumbed(call, (), (), lambda: _no_refs(f(c, x), f, "scan"))[0], f),
                       init), []

        written = []

        def body(carry, x):
            c, rv = carry
            (c2, y), finals = run_plumbed(call, refs, rv, lambda: _no_refs(f(c, x), f, "scan"))
            written[:] = [a or b for a, b in zip(written, call.written)] if written else call.written
            return (c2, finals), y
        (c, finals), ys = run(body, (init, list(vals)))
        # a ref the body only read is not written back (JAX writes only what the loop writes)
        return (c, ys), [v if w else None for v, w in zip(finals, written)]
    return plumbed_loop({}, 0, "scan", runner)


def plumb_while(run, cond_fun, body_fun, init, names=None):
    """``run(cond, body, init)`` (the while loop) with the refs the functions reach plumbed as extra carries.
    A ref in ``init`` is JAX's error (named per ``names``, a :class:`LoopNames`; default: a ``while_loop``'s)."""
    init, carried, paths = carried_refs(init)
    if carried:
        names = names or LoopNames(body_fun, "while_body", "while_loop", lambda out: out, "result")
        user_cond = cond_fun
        cond_fun = lambda c: user_cond(_put_back(c, carried))   # noqa: E731
        body_fun = _carrying(body_fun, carried, paths, names)
    # A while_loop run eagerly (under vmap or jvp too: no jit or make_jaxpr stages it) whose cond and body
    # both reach a ref is JAX's aliasing error: JAX runs the loop as a jit of the primitive, which the ref
    # reaches twice (once in each function's consts).
    eager = _top() is None and not config.jax_disable_jit and not _under_staging()
    cond_refs = {}

    def tracked(call, which, fn):
        if not eager:
            return fn()
        call.track = {}
        try:
            out = fn()
            if which == "body":
                _check_while_aliasing(cond_refs, call.track)
            else:
                cond_refs.clear()
                cond_refs.update(call.track)
            return out
        finally:
            call.track = None

    def runner(call, refs, vals):
        if not refs:
            return run(_signed(lambda c: run_plumbed(call, (), (), lambda: cond_fun(c))[0], cond_fun),
                       _signed(lambda c: run_plumbed(call, (), (), lambda: _no_refs(body_fun(c), body_fun,
                                                                                     "while_loop"))[0], body_fun),
                       init), []

        cond_writes = []   # per ref, whether the cond writes it (known once the cond has run)

        def cond(carry):
            out = tracked(call, "cond", lambda: run_plumbed(call, refs, carry[1], lambda: cond_fun(carry[0]))[0])
            if not cond_writes:
                cond_writes.extend(call.written)
            return out

        def body(carry):
            vals = carry[1]
            if any(cond_writes):
                # JAX's discharge: the predicate's own writes are dropped, and the cond runs again at the start
                # of each iteration so its writes persist (one per iteration, none for the final test)
                vals = run_plumbed(call, refs, vals, lambda: cond_fun(carry[0]))[1]
            out = tracked(call, "body", lambda: run_plumbed(
                call, refs, vals, lambda: _no_refs(body_fun(carry[0]), body_fun, "while_loop")))
            if any(c and b for c, b in zip(cond_writes, call.written)):
                raise NotImplementedError("Cannot write to the same ref in both cond and body of while loop.")
            body_writes[:] = [a or b for a, b in zip(body_writes, call.written)] if body_writes else call.written
            return out
        body_writes = []
        c, finals = run(cond, body, (init, list(vals)))
        # a ref the loop only read is not written back (JAX writes only what the loop writes)
        written = [a or b for a, b in zip(cond_writes or [False] * len(refs), body_writes or [False] * len(refs))]
        return c, [v if w else None for v, w in zip(finals, written)]
    return plumbed_loop({}, 0, "while_loop", runner)


def _under_staging():
    """Whether a jaxpr is being staged (make_jaxpr, eval_shape, jit) below the current trace."""
    t = core._state.trace
    while t is not None:
        if isinstance(t, _pe.DynamicJaxprTrace):
            return True
        t = getattr(t, "parent", None) or getattr(t, "parent_trace", None)
    return False


def _check_while_aliasing(cond_refs, body_refs):
    """JAX's ValueError for a ref both loop functions reach: the eager ``while`` is bound with the cond's
    refs then the body's as arguments of one jit, where a ref may appear once (``args[i]`` as JAX counts,
    when the functions close over nothing else)."""
    cond_pos = {k: i for i, k in enumerate(cond_refs)}
    for j, (k, r) in enumerate(body_refs.items()):
        if k in cond_pos:
            code = dispatch.apply_primitive.__code__
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a function, but when "
                f"tracing while at {code.co_filename}:{code.co_firstlineno} for jit the mutable array reference "
                f"of type {r._ref_aval()} appeared at both args[{cond_pos[k]}] and args[{len(cond_refs) + j}].")


def _no_refs(out, fun, kind):
    if _made[0]:
        check_no_refs(tree_leaves(out), f"{debug_info(fun, kind, None).func_src_info} traced for {kind}")
    return out


def plumb_cond(run, branches, ops, ops_tree):
    """``run(branches, ops, ops_tree)`` (the cond) with the refs the branches reach plumbed as extra operands
    and outputs (every branch returns every plumbed ref's value, written or not)."""
    def runner(call, refs, vals):
        if not refs:
            return run([_plumbed_branch(call, b) for b in branches], ops, ops_tree), []
        operands = tree_unflatten(ops_tree, list(ops))
        ops2, tree2 = tree_flatten((operands, list(vals)))

        def wrap(b):
            def branch(operands, rv):
                return run_plumbed(call, refs, rv, lambda: _no_refs(b(*operands), b, "cond"))
            return branch
        out, finals = run([wrap(b) for b in branches], ops2, tree2)
        return out, finals
    return plumbed_loop({}, 0, "cond", runner)


def _plumbed_branch(call, b):
    return _signed(lambda *a: run_plumbed(call, (), (), lambda: _no_refs(b(*a), b, "cond"))[0], b)
