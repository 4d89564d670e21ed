"""``jax_dump_ir_to`` / ``jax_dump_ir_modes``: each program ``jit`` compiles, written to a folder as JAX dumps it.

Modes (comma-separated, JAX's names): ``jaxpr`` writes ``jax_NNNNNN_<name>.jaxpr.txt`` (the jaxpr's text);
``eqn_count_pprof`` writes ``jax_NNNNNN_<name>.eqn_count_pprof``, a gzipped pprof profile counting the
equations (nested ones included) by the user's source line that staged them, labelled with the primitive,
for ``pprof`` to show which code yields large jaxprs. ``stablehlo`` (JAX's default) and ``jaxpr_html`` write
nothing: cranax has no MLIR module (``Lowered.as_text("hlo")`` gives the program in HLO form). ``sponge``
names the folder ``$TEST_UNDECLARED_OUTPUTS_DIR``, as JAX's.
"""
import gzip
import itertools
import os
import pathlib

from .config import config
from .interpreters import partial_eval
from .jaxpr import _subjaxprs
from .profiler import _field, _varint

_ids = itertools.count()


def _on_config(name, value):
    # the pprof needs every equation's line, which traces record only while asked (it costs a frame walk)
    if name in ("jax_dump_ir_to", "jax_dump_ir_modes"):
        partial_eval.all_sources = bool(config._values["jax_dump_ir_to"]) and "eqn_count_pprof" in str(
            config._values["jax_dump_ir_modes"]).split(",")


config._add_listener(_on_config)
_on_config("jax_dump_ir_to", None)


def _dump_dir():
    where = config._values["jax_dump_ir_to"]
    if not where:
        return None
    if where == "sponge":
        where = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR", "")
        if not where:
            return None
    d = pathlib.Path(where)
    d.mkdir(parents=True, exist_ok=True)
    return d


def maybe_dump(name, closed, fun=None):
    """Writes ``closed`` (a jitted function's ClosedJaxpr, named ``name``; ``fun`` the Python function) in
    the modes asked for, if any."""
    modes = str(config._values["jax_dump_ir_modes"]).split(",")
    if "jaxpr" not in modes and "eqn_count_pprof" not in modes:
        return
    d = _dump_dir()
    if d is None:
        return
    n = next(_ids)
    if "jaxpr" in modes:
        (d / f"jax_{n:06d}_{name}.jaxpr.txt").write_text(str(closed.jaxpr))
    if "eqn_count_pprof" in modes:
        code = getattr(fun, "__code__", None)
        comment = name if code is None else f"{name} at {code.co_filename}:{code.co_firstlineno}"
        (d / f"jax_{n:06d}_{name}.eqn_count_pprof").write_bytes(eqn_count_pprof(closed.jaxpr, comment))


def _eqns(jaxpr, outer_src, seen):
    """(source, equation) for every equation, nested ones under their caller's source when they have none."""
    for eqn in jaxpr.eqns:
        src = eqn.src if eqn.src is not None else outer_src
        yield src, eqn
        for sub in _subjaxprs(eqn.params):
            inner = getattr(sub, "jaxpr", sub)
            if id(inner) not in seen:
                seen.add(id(inner))
                yield from _eqns(inner, src, seen)


def eqn_count_pprof(jaxpr, comment=""):
    """The gzipped pprof ``Profile``: sample type ``equations``/``count``, one sample per (source line,
    primitive) with its count and a ``primitive`` label; each location one line of a function (qualified
    name, file); ``comment``: JAX's ``<function> at <file>:<line>``."""
    strings = {"": 0}

    def s(x):
        return strings.setdefault(x, len(strings))

    counts, locs, funcs = {}, {}, {}
    for src, eqn in _eqns(jaxpr, None, set()):
        key = (src, eqn.primitive.name)
        counts[key] = counts.get(key, 0) + 1
    body = bytearray(_field(1, _field(1, s("equations")) + _field(2, s("count"))))
    prim_key = s("primitive")
    for (src, prim), count in counts.items():
        sample = b""
        if src is not None:
            loc = locs.setdefault(src, len(locs) + 1)
            sample += _field(1, _varint(loc))   # repeated fields packed, as JAX's encoder writes them
        sample += _field(2, _varint(count)) + _field(3, _field(1, prim_key) + _field(2, s(prim)))
        body += _field(2, sample)
    for (code, lasti), loc in locs.items():
        fid = funcs.setdefault(code, len(funcs) + 1)
        line = next((p[0] for p in itertools.islice(code.co_positions(), lasti // 2, None) if p[0] is not None),
                    code.co_firstlineno)
        body += _field(4, _field(1, loc) + _field(4, _field(1, fid) + _field(2, line)))
    for code, fid in funcs.items():
        # JAX's function name: the file's path, dotted, then the qualified name
        name = code.co_filename.removesuffix(".py").replace("/", ".") + "." + getattr(code, "co_qualname", code.co_name)
        body += _field(5, _field(1, fid) + _field(2, s(name)) + _field(4, s(code.co_filename))
                       + _field(5, code.co_firstlineno))
    comment_id = s(comment)
    for x in strings:   # insertion order is the index order
        body += _field(6, x.encode())
    body += _field(13, comment_id)
    return gzip.compress(bytes(body))
