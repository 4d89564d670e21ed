"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``, ``map``. Mirrors
``jax.lax``'s control-flow functions: the functions are traced once to jaxprs (values they close over become
leading operands), and the core compiles them as real branches and loops.
"""
import numpy as np

from .. import dtypes
from ..core import Tracer, TypedScalar, get_aval
from ..primitives import control_flow as _cf
from ..primitives.control_flow import aval_text, cond_p, join_consts, scan_bind, trace_closed, typematch, while_p
from ..tree_util import tree_flatten, tree_unflatten, treedef_is_leaf

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map"]

_PY = (bool, int, float)


def _operand_aval(x):
    return get_aval(x)


def _trace_fun(fun, in_tree, in_avals, what):
    """Traces ``fun(*unflatten(in_tree, args))``. Returns ``(closed, consts, out_tree)``."""
    store = {}

    def flat(*args):
        out = fun(*tree_unflatten(in_tree, list(args)))
        leaves, tree = tree_flatten(out)
        for v in leaves:
            _check_leaf(v, what)
        store["tree"] = tree
        return leaves
    closed, consts = trace_closed(flat, in_avals)
    return closed, consts, store["tree"]


def _check_leaf(v, what):
    try:
        get_aval(v)
    except TypeError:
        raise TypeError(f"{what} output must be a pytree of arrays, got a value of type {type(v).__name__}") \
            from None


def _tree_avals_text(tree, avals, other=None):
    """``(ShapedArray(float32[]), 'DIFFERENT ShapedArray(int32[]) vs. ShapedArray(float32[])')`` as JAX's
    ``_check_tree_and_avals`` prints a difference."""
    if other is None:
        items = [aval_text(a) for a in avals]
    else:
        items = [aval_text(a) if typematch(a, b) else f"DIFFERENT {aval_text(a)} vs. {aval_text(b)}"
                 for a, b in zip(avals, other)]
    t = tree_unflatten(tree, items)
    return str(t)


def _check_tree_and_avals(what, tree1, avals1, tree2, avals2):
    if tree1 != tree2:
        raise TypeError(f"{what} must have same type structure, got {tree1} and {tree2}.")
    if len(avals1) != len(avals2) or not all(typematch(a, b) for a, b in zip(avals1, avals2)):
        raise TypeError(f"{what} must have identical types, got\n{_tree_avals_text(tree1, avals1, avals2)}.")


def _as_value(x):
    """A leaf operand as something with an aval (Python scalars become weakly typed scalars)."""
    if isinstance(x, _PY):
        from ..core import typed_scalar
        return typed_scalar(x, dtypes.dtype(x, canonicalize=True), True)
    if isinstance(x, (np.ndarray, np.generic)):
        dt = dtypes.canonicalize_dtype(x.dtype)
        return np.asarray(x, dt)
    return x


# ----------------------------------------------------------------------------------------------- cond / switch

def _prune_forwarded(jaxprs, ops):
    """Outputs every branch forwards unchanged from the same operand are taken from the operand (JAX prunes
    them from the cond). Returns ``(jaxprs, forwards)`` with ``forwards[k]`` the operand index or None."""
    nout = len(jaxprs[0].out_avals)
    fwd = []
    for k in range(nout):
        src = None
        for j in jaxprs:
            v = j.jaxpr.outvars[k]
            idx = next((i for i, iv in enumerate(j.jaxpr.invars) if iv is v), None)
            if idx is None or (src is not None and idx != src):
                src = None
                break
            src = idx
        fwd.append(src)
    if all(f is None for f in fwd):
        return jaxprs, fwd
    from ..jaxpr import ClosedJaxpr, Jaxpr
    keep = [k for k in range(nout) if fwd[k] is None]
    new = [ClosedJaxpr(Jaxpr([], j.jaxpr.invars, [j.jaxpr.outvars[k] for k in keep], j.jaxpr.eqns), [])
           for j in jaxprs]
    return new, fwd


def _bind_cond(index, branches, ops, ops_tree, what_outputs, out_names):
    ops_avals = [_operand_aval(o) for o in ops]
    traced = [_trace_fun(b, ops_tree, ops_avals, n) for b, n in zip(branches, out_names)]
    out_tree0, avals0 = traced[0][2], traced[0][0].out_avals
    for k, (closed, _, tree) in enumerate(traced[1:], 1):
        _check_tree_and_avals(what_outputs(k), out_tree0, avals0, tree, closed.out_avals)
    jaxprs, consts = join_consts([(c, cs) for c, cs, _ in traced])
    jaxprs, fwd = _prune_forwarded(jaxprs, consts + list(ops))
    allops = consts + list(ops)
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs))
    it = iter(outs)
    res = [_as_array(allops[f]) if f is not None else next(it) for f in fwd]
    return tree_unflatten(out_tree0, res)


def _as_array(x):
    """A forwarded operand as the API returns values: tracers and Arrays as they are, host values as Arrays."""
    if isinstance(x, Tracer) or hasattr(x, "_buf"):
        return x
    from ..array import _from_host
    return _from_host(x)


def cond(pred, true_fun, false_fun, *operands, operand=None, linear=None):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; only the taken branch runs.
    ``pred`` is a boolean (or integer) scalar. Mirrors ``jax.lax.cond``."""
    if operand is not None:
        operands = operands + (operand,)
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if isinstance(pred, (list, tuple, dict)):
        raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}")
    pred = _as_value(pred)
    pav = get_aval(pred)
    if pav.shape != ():
        raise TypeError(f"Pred must be a scalar, got {_short(pred)} of shape {pav.shape}.")
    from .. import lax
    if pav.dtype != np.bool_:
        if pav.dtype.kind in "iu":
            pred = lax.ne(pred, lax._coerce(0, pav.dtype))
        else:
            raise TypeError(f"Pred type must be either boolean or number, got {pav.dtype.name}.")
    index = lax.convert_element_type(pred, np.int32)
    ops, ops_tree = tree_flatten(operands)
    ops = [_as_value(o) for o in ops]
    return _bind_cond(index, (false_fun, true_fun), ops, ops_tree,
                      lambda k: "true_fun and false_fun output", ("false_fun", "true_fun"))


def _short(x):
    try:
        return repr(x)
    except Exception:
        return type(x).__name__


def switch(index, branches, *operands, operand=None):
    """``branches[index](*operands)`` with ``index`` clamped into range; only that branch runs. Mirrors
    ``jax.lax.switch``."""
    if operand is not None:
        operands = operands + (operand,)
    branches = tuple(branches)
    if len(branches) == 0:
        raise ValueError("Empty branch sequence")
    for b in branches:
        if not callable(b):
            raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    index = _as_value(index)
    iav = get_aval(index)
    if iav.shape != ():
        raise TypeError(f"Branch index must be scalar, got {_short(index)} of shape {iav.shape}.")
    if iav.dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {_short(index)}.")
    from .. import lax
    if len(branches) == 1:
        return branches[0](*operands)
    index = lax.convert_element_type(index, np.int32)
    index = lax.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    ops, ops_tree = tree_flatten(operands)
    ops = [_as_value(o) for o in ops]
    return _bind_cond(index, branches, ops, ops_tree, lambda k: f"branch 0 and {k} outputs",
                      [f"branch {i}" for i in range(len(branches))])


# ----------------------------------------------------------------------------------------------- loops

def _carry_diff_text(name, in_tree, in_avals, out_tree, out_avals):
    if in_tree != out_tree:
        return (f"{name} output and input must have identical types: the function carry input and carry "
                f"output must have the same pytree structure, but they differ:\n\n"
                f"  * the input carry has structure {in_tree}\n"
                f"  * the output carry has structure {out_tree}\n\n"
                f"Revise the function so that the carry output has the same pytree structure as the carry "
                f"input.")
    diffs = []
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if typematch(a, b):
            continue
        why = ("the shapes do not match" if a.shape != b.shape else "the dtypes do not match")
        diffs.append(f"  * the input carry component {k} has type {a.str_short(short_dtypes=False)} but the "
                     f"corresponding output carry component has type {b.str_short(short_dtypes=False)}, so "
                     f"{why}")
    if not diffs:
        return None
    return (f"{name} output and input must have identical types: the function carry input and carry output "
            f"must have equal types (e.g. shapes and dtypes of arrays), but they differ:\n\n"
            + "\n".join(diffs) + "\n\nRevise the function so that all output types match the corresponding "
            "input types.")


def _promote_weak(vals, in_avals, out_avals):
    """Weakly typed initial values whose type the body changes are converted to the body's output type
    (JAX's ``_promote_weak_typed_inputs``). Returns ``(vals, changed)``."""
    if len(vals) != len(in_avals) or len(in_avals) != len(out_avals):
        return vals, False
    changed = False
    out = list(vals)
    from .. import lax
    for i, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.weak_type and not typematch(a, b):
            out[i] = lax.convert_element_type(vals[i], dtypes.result_type(a, b))
            changed = True
    return out, changed


def while_loop(cond_fun, body_fun, init_val):
    """``val = init_val; while cond_fun(val): val = body_fun(val)``, compiled as a real loop. Mirrors
    ``jax.lax.while_loop`` (not reverse-differentiable)."""
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: cond_fun and body_fun arguments should be callable.")
    init_vals, in_tree = tree_flatten((init_val,))
    init_vals = [_as_value(v) for v in init_vals]
    for _ in range(3):
        init_avals = [get_aval(v) for v in init_vals]
        cond_j, cond_consts, cond_tree = _trace_fun(cond_fun, in_tree, init_avals, "cond_fun")
        body_j, body_consts, body_tree = _trace_fun(body_fun, in_tree, init_avals, "body_fun")
        if not treedef_is_leaf(cond_tree) or len(cond_j.out_avals) != 1:
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
        pa = cond_j.out_avals[0]
        if pa.shape != () or pa.dtype != np.bool_:
            raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) [{aval_text(pa)}].")
        init_vals, changed = _promote_weak(init_vals, init_avals, body_j.out_avals)
        if not changed:
            break
    body_out_tree = body_tree
    in_carry_tree = tree_flatten(init_val)[1]
    msg = _carry_diff_text("body_fun", in_carry_tree, init_avals, _unwrap_tree(body_out_tree), body_j.out_avals)
    if msg is not None:
        raise TypeError(msg)
    outs = while_p.bind(*cond_consts, *body_consts, *init_vals, cond_jaxpr=cond_j, body_jaxpr=body_j,
                        cond_nconsts=len(cond_consts), body_nconsts=len(body_consts))
    return tree_unflatten(in_carry_tree, outs)


def _unwrap_tree(tree):
    return tree


def _fori_while_cond(carry):
    from .. import lax
    i, upper, _ = carry
    return lax.lt(i, upper)


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``. With concrete bounds it is a
    ``scan`` (reverse-differentiable), otherwise a ``while_loop``. Mirrors ``jax.lax.fori_loop``."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    from .. import lax
    lower, upper = _as_value(lower), _as_value(upper)
    ld, ud = get_aval(lower).dtype, get_aval(upper).dtype
    if ld != ud:
        dt = dtypes.promote_types(ld, ud)
        lower = lax.convert_element_type(lower, dt)
        upper = lax.convert_element_type(upper, dt)
    lo_c, up_c = _concrete_int(lower), _concrete_int(upper)
    if lo_c is not None and up_c is not None:
        length = max(up_c - lo_c, 0)

        def scanned(carry, _):
            i, x = carry
            return (lax.add(i, lax._coerce(1, get_aval(i).dtype)), body_fun(i, x)), None
        (_, result), _ = _scan(scanned, (lower, init_val), None, length, False,
                               1 if unroll is None else unroll, "body_fun")
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")

    def body(carry):
        i, up, x = carry
        return lax.add(i, lax._coerce(1, get_aval(i).dtype)), up, body_fun(i, x)
    _, _, result = while_loop(_fori_while_cond, body, (lower, upper, init_val))
    return result


def _concrete_int(x):
    if isinstance(x, Tracer):
        c = x._concrete()
        if c is None:
            return None
        x = c
    if isinstance(x, TypedScalar):
        x = x.val
    try:
        return int(np.asarray(x))
    except (TypeError, ValueError):
        return None


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """``carry, ys = scan(f, init, xs)``: ``carry, y = f(carry, x)`` over the leading axis of ``xs``, with
    the ys stacked. Compiled as one loop (``unroll`` is accepted and ignored). Mirrors ``jax.lax.scan``."""
    return _scan(f, init, xs, length, reverse, unroll, "scan body")


def _scan(f, init, xs, length, reverse, unroll, what):
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    xs_flat, xs_tree = tree_flatten(xs)
    xs_flat = [_as_value(x) for x in xs_flat]
    lengths = []
    for x in xs_flat:
        av = get_aval(x)
        if av.ndim == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: {aval_text(av)}.")
        lengths.append(av.shape[0])
    if length is not None:
        try:
            length = int(length)
        except (TypeError, ValueError):
            raise TypeError(f"scan got `length` argument of {length!r} which is not a concrete integer") \
                from None
        if any(n != length for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading axis sizes "
                             f"{lengths}.")
    else:
        if not lengths:
            raise ValueError("scan got no values to scan over and `length` not provided.")
        if len(set(lengths)) != 1:
            raise ValueError(f"scan got values with different leading axis sizes: "
                             f"{', '.join(str(n) for n in lengths)}.")
        length = lengths[0]
    x_avals = [get_aval(x).update(shape=get_aval(x).shape[1:]) for x in xs_flat]
    init_flat, init_tree = tree_flatten(init)
    init_flat = [_as_value(v) for v in init_flat]
    nk = len(init_flat)
    for _ in range(3):
        carry_avals = [get_aval(v) for v in init_flat]
        store = {}

        def flat(*args):
            carry = tree_unflatten(init_tree, list(args[:nk]))
            x = tree_unflatten(xs_tree, list(args[nk:]))
            out = f(carry, x)
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"scan body output must be a pair, got {type(out).__name__}.")
            c, y = out
            c_leaves, c_tree = tree_flatten(c)
            y_leaves, y_tree = tree_flatten(y)
            for v in c_leaves + y_leaves:
                _check_leaf(v, "scan body")
            store.update(c_tree=c_tree, y_tree=y_tree, nc=len(c_leaves))
            return c_leaves + y_leaves
        closed, consts = trace_closed(flat, carry_avals + x_avals)
        c_out = closed.out_avals[:store["nc"]]
        init_flat, changed = _promote_weak(init_flat, carry_avals, c_out)
        if not changed:
            break
    msg = _carry_diff_text(what, init_tree, carry_avals, store["c_tree"], c_out)
    if msg is not None:
        raise TypeError(msg.replace("scan body output and input must have identical types",
                                    "scan body function carry input and carry output must have identical types"))
    outs = scan_bind(consts, init_flat, xs_flat, closed, length, bool(reverse), unroll)
    carry = tree_unflatten(init_tree, outs[:nk])
    ys = tree_unflatten(store["y_tree"], outs[nk:])
    return carry, ys


def map(f, xs, *, batch_size=None):
    """``f`` applied to each slice of ``xs`` along its leading axis, results stacked (a ``scan``). Mirrors
    ``jax.lax.map``."""
    if batch_size is not None:
        from .. import api_vmap
        leaves, tree = tree_flatten(xs)
        n = get_aval(leaves[0]).shape[0]
        if n % batch_size == 0:
            resh = [x.reshape((n // batch_size, batch_size) + tuple(get_aval(x).shape[1:])) for x in leaves]
            _, ys = scan(lambda c, x: (c, api_vmap.vmap(f)(x)), (), tree_unflatten(tree, resh))
            return _tree_map(lambda y: y.reshape((n,) + tuple(get_aval(y).shape[2:])), ys)
    _, ys = scan(lambda c, x: (c, f(x)), (), xs)
    return ys


def _tree_map(fn, t):
    from ..tree_util import tree_map
    return tree_map(fn, t)


_ = _cf
