"""The order in which a compiled program runs its unordered debug prints (``jax.debug.print`` /
``jax.debug.callback`` with ``ordered=False``), as XLA:CPU runs them for JAX 0.10.2.

XLA gives such prints no order among themselves. Its CPU backend runs a computation's instructions in the
order of its schedule, a breadth-first one (Kahn's algorithm: start with the instructions that read nothing,
in instruction order; popping one readies its users in the order of its use list). So a print runs once its
operand's producer is popped, and the use lists decide ties. Those lists come out of fusion: XLA visits
consumers in reverse post order, fuses each one's elementwise producers into a new fusion (duplicating a
producer that has other users), appends the fusion to the use lists of the values it now reads, and drops
the replaced instruction from each list by moving the list's last entry into its slot; a lone op a
fusion never absorbed is wrapped into its own fusion in place, and keeps a scalar constant operand outside
(so it waits for that constant, popped after the parameters in the entry computation, before them in a
branch, where the parameters come through a tuple). Measured on JAX 0.10.2 (CPU): under ``jit``,
``a = x + 1; b = a * 2; c = b - 3`` printed as a, b, c runs c, b, a; ``sin``, ``cos``, ``tanh`` in a chain run
a, c, b; prints of the parameters run first, in parameter order. XLA never fuses the root instruction (a
lone result) into a consumer: under ``jit(vmap(f))`` the per-element slices of ``f``'s result read it.

Calls that lowering inlines (a ``jit`` inside a ``jit``, ``checkpoint``) are inlined first, as XLA sees them.
``order`` models this for straight-line elementwise programs: entry computations, ``cond`` branches and
``while_loop`` bodies (whose inputs come through a tuple, read in reverse order). A scan body (``scan``,
``lax.map``, ``fori_loop`` with static bounds) reaches XLA with slicing, updating and index code around
it that the model does not follow; there two measured rules hold: prints that read only constants or
carries run first, in reverse input order (``fori_loop``'s carry before its index), then prints of
computed values run in the order ``_scan_rest`` gives (v1, v0, vn, ..., v2 of the values in program order),
those of the carries alone first, then those computed from printed values of both, then those of ``xs``,
then those mixing both (measured on 20 scan bodies; bodies with several ``xs`` are guesses).
Anything else the model cannot follow keeps the rule that prints reading only inputs run first (entry:
in parameter order), the rest in program order. Known to differ from JAX (``benches/
bench_debug_print_order.py`` counts them): some scan bodies with several ``xs`` or long mixed chains,
per-element prints of ``vmap`` inside a loop body of three or more elements (their order comes from XLA's
fusion pass on the slices) or of values computed from the carry, scans of one step (XLA inlines their
body). A ``fori_loop`` body (a scan without ``xs``) whose prints read its index and elements of its carries
is modelled as XLA's while body (``_simulate`` with ``loop``): loop-state elements read twice are copied,
and an index that does not start at a literal is XLA's ``start + counter``. A program whose result is a
scalar constant (``jit(grad(f))`` of an affine ``f``) has XLA's root ``copy(constant)``, merged with the
body's equal constants (``_constant_result``).
Ordered prints, io callbacks, and nested programs holding effects keep the whole program in program order.
"""
import collections
import contextlib
import threading

import numpy as np

from ..jaxpr import Literal

__all__ = ["order", "memo"]

_PRINTS = ("debug_print", "debug_callback")
# the model's size bounds (equations, equations x prints): a few ms of CPU time at most
_MODEL_EQNS, _MODEL_WORK = 1_000, 20_000


def _unordered_print(eqn):
    name = eqn.primitive.name
    if name == "debug_print":
        return not eqn.params["ordered"]
    if name == "debug_callback":
        return repr(eqn.params["effect"]) == "Debug"
    return False


def _barrier(eqn):
    """An equation whose place among the prints must not change: another effect, or a nested program
    that holds one."""
    if eqn.primitive.name in _PRINTS:
        return not _unordered_print(eqn)
    if eqn.primitive.name in ("io_callback", "pure_callback"):
        return True
    return any(_jaxpr_holds(j) for j in _sub_jaxprs(eqn))


_EFFECTS = _PRINTS + ("io_callback", "pure_callback")


def _holds_effect(eqn):
    return eqn.primitive.name in _EFFECTS or any(_jaxpr_holds(j) for j in _sub_jaxprs(eqn))


class _Memo(threading.local):
    holds = None   # within ``memo()``: id(jaxpr) -> (jaxpr, whether one of its equations holds an effect)


_memo = _Memo()


@contextlib.contextmanager
def memo():
    """Within the block (one program's lowering, which asks ``order`` of each nested program in turn), whether a
    sub-jaxpr holds an effect is found once per jaxpr, not once per enclosing program."""
    if _memo.holds is not None:
        yield
        return
    _memo.holds = {}
    try:
        yield
    finally:
        _memo.holds = None


def _jaxpr_holds(j):
    holds = _memo.holds
    if holds is not None:
        hit = holds.get(id(j))
        if hit is not None and hit[0] is j:
            return hit[1]
    r = any(_holds_effect(e) for e in j.eqns)
    if holds is not None:
        holds[id(j)] = (j, r)
    return r


def _sub_jaxprs(eqn):
    for v in eqn.params.values():
        for j in (v if isinstance(v, (tuple, list)) else (v,)):
            j = getattr(j, "jaxpr", j)
            if hasattr(j, "eqns") and hasattr(j, "invars"):
                yield j


def order(jaxpr, kind="entry", carried=None, index_init=None):
    """The ranks of ``jaxpr``'s unordered prints in XLA:CPU's order (see the module), as ``{id(eqn): rank}``
    over the print equations (those of calls lowering inlines included); empty where program order stands.

    ``kind``: ``"entry"`` (a program), ``"branch"`` (a ``cond`` branch), ``"while"`` or ``"scan"`` (a loop
    body); ``carried``: for a scan body, the invar positions that are constants or carries (its ``xs``,
    which XLA slices, are not); ``index_init``: for a scan body, ``(position of the first carry, "literal"
    or "param")``, how the scan's first carry starts (a ``fori_loop``'s index)."""
    if not _jaxpr_holds(jaxpr):   # (most programs: found once per lowering, see ``memo``)
        return {}
    effects = [e for e in jaxpr.eqns if _holds_effect(e)]
    if not effects or len(effects) == 1 and effects[0].primitive.name in _PRINTS:
        return {}
    jaxpr = _flatten(jaxpr)
    if jaxpr is None:
        return {}
    eqns = jaxpr.eqns
    prints = [e for e in eqns if _unordered_print(e)]
    if len(prints) < 2 or any(_barrier(e) for e in eqns):
        return {}
    ranked = None
    # (the model walks each print's fused cone: bounded so that lowering stays fast on long programs)
    # a ``fori_loop`` body (a scan with no ``xs`` whose first carry is the index) printing the index and
    # elements of the carries (``vmap``'s per-element prints) is modelled as the while body XLA makes of it
    fori = _fori_index(jaxpr, eqns, prints, *index_init) if kind == "scan" and index_init is not None and \
        carried is not None and len(carried) == len(jaxpr.invars) else None
    if (kind != "scan" or fori is not None) and len(eqns) <= _MODEL_EQNS and \
            len(eqns) * len(prints) <= _MODEL_WORK and all(_simple(e) for e in eqns if not _unordered_print(e)):
        ranked = _simulate(jaxpr, eqns, consts_first=kind != "entry",
                           reverse_params=kind == "while" or fori is not None,
                           loop=None if fori is None else (fori, index_init[1]))
    if ranked is None:
        loop = kind in ("while", "scan")
        direct = carried if kind == "scan" else range(len(jaxpr.invars))
        first, later = _inputs_first(jaxpr, prints, direct, loop)
        ranked = first + (_scan_rest(jaxpr, later, set(direct)) if kind == "scan" else later)
    if ranked == prints:
        return {}
    return {id(getattr(e, "eqn", e)): k for k, e in enumerate(ranked)}


class _Flat:
    """An equation of an inlined call, reading the caller's values where it read the call's inputs."""
    __slots__ = ("eqn", "primitive", "params", "invars", "outvars")

    def __init__(self, eqn, invars):
        self.eqn, self.primitive, self.params = eqn, eqn.primitive, eqn.params
        self.invars, self.outvars = invars, eqn.outvars


class _FlatJaxpr:
    __slots__ = ("invars", "outvars", "eqns")


def _flatten(jaxpr):
    """``jaxpr`` with the calls that hold prints inlined, as lowering inlines them (``inline_jaxpr``); None
    where that is ambiguous (a program inlined twice, consts)."""
    alias, seen, eqns = {}, set(), []

    def get(a):
        return a if type(a) is Literal else alias.get(a, a)

    def walk(jx):
        for e in jx.eqns:
            inline = getattr(e.primitive, "inline_jaxpr", None)
            expansion = inline(e) if inline is not None and _holds_effect(e) else None
            if expansion is None:
                ins = [get(a) for a in e.invars]
                eqns.append(e if all(a is b for a, b in zip(ins, e.invars)) else _Flat(e, ins))
                continue
            inner, args = expansion
            if getattr(inner, "consts", None) or id(getattr(inner, "jaxpr", inner)) in seen:
                return False
            inner = getattr(inner, "jaxpr", inner)
            seen.add(id(inner))
            for v, a in zip(inner.invars, args):
                alias[v] = get(a)
            if walk(inner) is False:
                return False
            for v, o in zip(e.outvars, inner.outvars):
                alias[v] = get(o)
        return True

    if not walk(jaxpr):
        return None
    flat = _FlatJaxpr()
    flat.invars, flat.outvars, flat.eqns = list(jaxpr.invars), [get(a) for a in jaxpr.outvars], eqns
    return flat


def _inputs_first(jaxpr, prints, direct, loop):
    """(the prints that read only the inputs in ``direct``, in XLA's order; the others): parameters come in
    order, a loop body's tuple elements in reverse."""
    pos = {v: k for k, v in enumerate(jaxpr.invars)}
    direct = set(direct)
    first, later = [], []
    for p in prints:
        vs = [v for v in p.invars if type(v) is not Literal]
        if vs and all(v in pos and pos[v] in direct for v in vs):
            key = -max(pos[v] for v in vs) if loop else min(pos[v] for v in vs)
            first.append((key, len(first), p))
        else:
            later.append(p)
    return [p for _, _, p in sorted(first, key=lambda t: t[:2])], later


def _scan_rest(jaxpr, prints, carried=()):
    """A scan body's prints of computed values (one value each), measured on loops of two or more steps:
    with the values in the order their equations stand (a slice of ``xs`` first), v0, v1, ..., vn run as
    v1, v0, vn, ..., v2 (``lax.map`` printing ``x`` then ``sin(x)`` runs the second first; ``x + 1``, ``* 2``,
    ``- 3`` run b, a, c; ``sin``, ``cos``, ``exp``, ``tanh`` of ``x`` run b, a, d, c) — except a chain of
    values, each computed from the one before, whose first reads several body inputs: program order.
    Prints of several values, or of one value twice, stay in program order."""
    if len(prints) < 2 or any(len([v for v in p.invars if type(v) is not Literal]) != 1 for p in prints):
        return prints
    printed = {}
    for p in prints:
        printed.setdefault(next(v for v in p.invars if type(v) is not Literal), p)
    if len(printed) != len(prints):
        return prints
    # for each variable: the printed values and the body inputs it is computed from
    reach = {v: ({v} if v in printed else set(), {v}) for v in jaxpr.invars}
    made = {}
    for i, e in enumerate(jaxpr.eqns):
        vals, ins = set(), set()
        for v in e.invars:
            if type(v) is not Literal and v in reach:
                vals |= reach[v][0]
                ins |= reach[v][1]
        for v in e.outvars:
            made[v] = i
            reach[v] = (vals | ({v} if v in printed else set()), ins)
    if any(v not in reach for v in printed):
        return prints
    seq = sorted(printed, key=lambda v: made.get(v, -1))
    if len(reach[seq[0]][1]) > 1 and all(u in reach[w][0] for u, w in zip(seq, seq[1:])):
        return prints
    base = [seq[1], seq[0]] + seq[:1:-1]
    # then values of the carries and constants alone run first, values of a slice of ``xs`` next, values
    # mixing both last (one computed from a printed value of ``xs`` counts as of ``xs``; one computed from
    # printed values of both runs between the two): XLA slices ``xs`` at a copy of the loop index, popped
    # after the tuple's elements
    pos = {v: k for k, v in enumerate(jaxpr.invars)}
    cls = {}
    for v in seq:
        ins = {pos[u] for u in reach[v][1] if u in pos}
        used = {cls.get(u) for u in reach[v][0] if u is not v}
        if ins <= carried:
            cls[v] = 0
        elif 0 in used and 2 in used or 0 in used and 1 in used:
            cls[v] = 0.5
        elif not ins & carried or 1 in used:
            cls[v] = 1
        else:
            cls[v] = 2
    return [printed[v] for c in (0, 0.5, 1, 2) for v in base if cls[v] == c]


def _simple(eqn):
    """An equation XLA fuses freely: one result, elementwise, a broadcast, a convert, a static slice or a
    reshape."""
    if len(eqn.outvars) != 1:
        return False
    return bool(getattr(eqn.primitive, "elementwise", False)) or eqn.primitive.name in (
        "broadcast_in_dim", "convert_element_type", "slice", "squeeze", "reshape", "expand_dims")


class _Node:
    """An instruction of the modelled HLO: a parameter, an equation, a fusion or a print. ``users`` is its
    use list, ``upos`` each user's slot in it; ``operands`` is an insertion-ordered dict (a set)."""
    __slots__ = ("name", "operands", "users", "upos", "const_dep", "eqn")

    def __init__(self, name, eqn=None):
        self.name, self.eqn = name, eqn
        self.operands, self.users, self.upos = {}, [], {}
        self.const_dep = False

    def add_operand(self, src):
        if src not in self.operands:
            self.operands[src] = None
            src.upos[self] = len(src.users)
            src.users.append(self)

    def remove_user(self, user):
        """XLA's use-list removal: the last user moves into the removed one's slot."""
        k = self.upos.pop(user)
        last = self.users.pop()
        if last is not user:
            self.users[k] = last
            self.upos[last] = k


# (XLA folds these when all operands are constants)
_FOLD = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
         "neg": lambda a: -a}


def _constant_result(jaxpr, eqns):
    """``(value, dtype, folded equation or None)`` when the program's one result is a scalar constant (a
    literal, or an equation of literals XLA folds: ``grad``'s ``mul 1.0 2.0``), else None."""
    if len(jaxpr.outvars) != 1:
        return None
    out = jaxpr.outvars[0]
    if type(out) is Literal:
        return (out.val, out.aval.dtype, None) if tuple(out.aval.shape) == () else None
    e = next((e for e in eqns if out in e.outvars), None)
    fold = _FOLD.get(e.primitive.name) if e is not None else None
    if fold is None or not all(type(v) is Literal and tuple(v.aval.shape) == () for v in e.invars):
        return None
    try:
        val = fold(*[np.asarray(v.val, v.aval.dtype) for v in e.invars])
    except Exception:   # (a value numpy cannot hold: not modelled)
        return None
    return val, out.aval.dtype, e


def _fori_index(jaxpr, eqns, prints, k, init):
    """(``k``, the increment equation) for a ``fori_loop`` body whose index is invar ``k`` and whose prints
    read only the index and static slices of carries (at least one of those; and the index, unless the index
    starts at a value the program computes: ``init`` is ``"param"``), else None. Measured: bodies printing
    computed values, or only elements of a carry with an index starting at a literal, follow ``_scan_rest``
    more often (modelled as while bodies they came out wrong)."""
    if len(jaxpr.invars) <= k:
        return None
    v = jaxpr.invars[k]
    if tuple(v.aval.shape) != () or v.aval.dtype.kind not in "iu":
        return None
    inc = next((e for e in eqns if e.primitive.name == "add" and e.invars[0] is v and type(e.invars[1]) is Literal
                and e.outvars[0] is jaxpr.outvars[k]), None)
    if inc is None:
        return None
    carries = set(jaxpr.invars) - {v}
    sliced = set()   # the elements of carries: squeeze(slice(carry))
    for e in eqns:
        if e.primitive.name in ("slice", "squeeze") and e.invars[0] in carries | sliced:
            sliced.add(e.outvars[0])
    read = [a for p in prints for a in p.invars if type(a) is not Literal]
    if not any(a in sliced for a in read) or not all(a is v or a in sliced for a in read):
        return None
    if init == "literal" and v not in read:
        return None
    return k, inc


def _simulate(jaxpr, eqns, consts_first, reverse_params, loop=None):
    params = [_Node("param") for _ in jaxpr.invars]
    node_of = dict(zip(jaxpr.invars, params))        # jaxpr var -> the node that produces it
    instrs = []                                       # non-parameter instructions, in instruction order
    # A fori_loop body (``loop``: ((index position, its increment equation), how the index starts)). XLA's
    # loop counter is the index when it starts at a literal; else the index is computed as start + counter
    # (an add, standing where the index is first read other than by its increment), and the increment
    # updates the counter. The loop state is the tuple (counter, start, carries...).
    # A constant result is XLA's root ``copy(constant)``; its constant is merged with the equal scalar
    # constants the program's ops read, which then wait for that copy (``jit(grad(f))`` of ``x * 2``
    # returning 2.0 runs the prints of ``x * 2`` and what follows it after the others)
    merged = _constant_result(jaxpr, eqns)
    copy = None
    if merged is not None:
        copy = _Node("copy")
        copy.const_dep = True
        eqns = [e for e in eqns if e is not merged[2]]
    extra_params, idx, counter = [], None, None
    if loop is not None and loop[1] == "param":
        (k, _), _ = loop
        start, counter = _Node("param"), _Node("param")
        idx = _Node("op")
        idx.add_operand(start)
        idx.add_operand(counter)
        node_of[jaxpr.invars[k]] = idx
        params[k] = counter
        extra_params = [start]
    for e in eqns:
        n = _Node("print" if _unordered_print(e) else "op", e)
        if idx is not None and e is not loop[0][1] and idx not in instrs and \
                any(v is jaxpr.invars[loop[0][0]] for v in e.invars):
            instrs.append(idx)
        for v in e.invars:
            if type(v) is Literal:
                if copy is not None and tuple(v.aval.shape) == () and v.aval.dtype == merged[1] and \
                        np.asarray(v.val, v.aval.dtype) == merged[0]:
                    n.add_operand(copy)
                    continue
                # a scalar constant stays an operand of a lone op; a broadcast one is fusible
                if not e.outvars or tuple(e.outvars[0].aval.shape) == ():
                    n.const_dep = True
                continue
            src = node_of.get(v)
            if idx is not None and e is loop[0][1] and v is jaxpr.invars[loop[0][0]]:
                src = counter
            if src is None:
                return None   # a constvar: not modelled
            n.add_operand(src)
        if n.name == "op":
            node_of[e.outvars[0]] = n
        instrs.append(n)
    if loop is not None:
        if idx is not None:
            # XLA moves the index's readers onto the new add one by one from the back (measured: two
            # per-element prints of i and c[k] under vmap run c[1] then c[0])
            idx.users.reverse()
            idx.upos = {u: j for j, u in enumerate(idx.users)}
        # XLA copies a loop-state element that several instructions read (its update may not overwrite it
        # in place); the copy takes over its readers, in their order, and runs after the tuple's elements
        for p in params + extra_params:
            if len(p.users) >= 2:
                c = _Node("loop_copy")
                for u in p.users:
                    u.operands = {(c if o is p else o): None for o in u.operands}
                    c.upos[u] = len(c.users)
                    c.users.append(u)
                p.users, p.upos = [], {}
                c.add_operand(p)
                instrs.insert(0, c)
        params = params[:1] + extra_params + params[1:]   # (counter, start, carries...)
    root = _Node("root")
    for v in jaxpr.outvars:
        if type(v) is not Literal and v in node_of:
            root.add_operand(node_of[v])
    # a lone result is the computation's root instruction, which XLA never fuses into a consumer (a tuple
    # of results is the root otherwise)
    outs = [v for v in jaxpr.outvars if type(v) is not Literal]
    sole = node_of.get(outs[0]) if len(jaxpr.outvars) == 1 and outs else None

    # post order: depth first from the instructions nobody reads, in instruction order
    post, seen = [], set()
    for start in instrs + [root]:
        if start.users or start in seen:
            continue
        seen.add(start)
        stack = [(start, list(start.operands), 0)]
        while stack:
            node, ops, k = stack[-1]
            while k < len(ops) and ops[k] in seen:
                k += 1
            if k == len(ops):
                stack.pop()
                post.append(node)
            else:
                stack[-1] = (node, ops, k + 1)
                seen.add(ops[k])
                stack.append((ops[k], list(ops[k].operands), 0))

    dead = set()
    for consumer in reversed(post):
        if consumer.name != "op" or consumer in dead:
            continue
        todo = collections.deque(o for o in consumer.operands if o.name == "op" and o is not sole)
        if not todo:
            continue   # wrapped in place later: it keeps its slots
        fusion = consumer   # the fusion takes the consumer's slots (appended, then swapped into them)
        fusion.name, fusion.const_dep = "fusion", False
        while todo:
            p = todo.popleft()
            if p not in fusion.operands or p is sole:
                continue
            # fuse p: the fusion reads p's operands instead of p
            del fusion.operands[p]
            for o in p.operands:
                if o not in fusion.operands:
                    fusion.add_operand(o)
                    if o.name == "op" and o is not sole:
                        todo.append(o)
            p.remove_user(fusion)
            if not p.users:
                dead.add(p)
                for o in p.operands:
                    o.remove_user(p)

    # breadth-first schedule
    live = [n for n in instrs if n not in dead]
    consts = ([copy] if copy is not None else []) + [n for n in live if n.name == "op" and n.const_dep]
    deps = {n: len(n.operands) + (1 if n.name == "op" and n.const_dep else 0) for n in live}
    if copy is not None:
        deps[copy] = 1
    queue = []
    if consts_first:
        queue += [("const", n) for n in consts]
    queue += [("node", p) for p in (params[::-1] if reverse_params else params)]
    if not consts_first:
        queue += [("const", n) for n in consts]
    queue += [("node", n) for n in live if deps[n] == 0]
    ranked = []
    k = 0
    while k < len(queue):
        kind, n = queue[k]
        k += 1
        if kind == "node" and n.name == "print":
            ranked.append(n.eqn)
        for u in ((n,) if kind == "const" else n.users):
            if u in deps:
                deps[u] -= 1
                if deps[u] == 0:
                    queue.append(("node", u))
    return ranked if len(ranked) == sum(1 for e in eqns if _unordered_print(e)) else None
