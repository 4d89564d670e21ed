"""``jax.debug``: printing, callbacks and breakpoints that work inside transformed code (``jit``, ``vmap``,
``grad``, loop and branch bodies), and the sharding of single-device arrays.

Under ``jit`` these stage a debug callback (``primitives/callback.py``) that the compiled program calls
when it runs; like JAX's, the call happens when the computation runs (possibly after the jitted function
returned: ``cranax.effects_barrier()`` waits for it). Under ``vmap`` a debug callback runs once per batch
element; under ``grad``/``jvp`` it sees the primal values.
"""
import cmd
import inspect
import logging
import os
import pprint
import string
import sys
import threading
import traceback

import numpy as np

from .api_callback import pure_callback
from .array import _default_device
from .sharding import SingleDeviceSharding as _SingleDeviceSharding
from .core import Tracer, get_aval
from .primitives.callback import debug_callback_p, debug_print_p
from .primitives.elementwise import stop_gradient
from ._pytree import register_pytree_node, tree_flatten, tree_leaves, tree_unflatten

__all__ = ["print", "log", "callback", "breakpoint", "inspect_array_sharding", "visualize_array_sharding",
           "visualize_sharding", "DebugEffect", "OrderedDebugEffect"]

_print = print  # the builtin, before this module's ``print`` shadows it
_PKG = os.path.dirname(os.path.abspath(__file__))


class _Effect:
    """An effect a debug callback records (shown in its params as JAX shows them)."""

    name = ""

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))


class DebugEffect(_Effect):
    """The effect of an unordered debug callback (``jax.debug.DebugEffect``); its instance prints as
    ``Debug``."""

    name = "Debug"


class OrderedDebugEffect(_Effect):
    """The effect of an ``ordered=True`` debug callback (``jax.debug.OrderedDebugEffect``); its instance
    prints as ``OrderedDebug``."""

    name = "OrderedDebug"


_DEBUG = DebugEffect()
_ORDERED_DEBUG = OrderedDebugEffect()


def _split_args(args, kwargs):
    """Flattens ``(args, kwargs)``; leaves that are not JAX values (strings, None, objects) stay static."""
    flat, in_tree = tree_flatten((args, kwargs))
    static, dyn = {}, []
    for i, a in enumerate(flat):
        try:
            get_aval(a)
            dyn.append(a)
        except TypeError:
            static[i] = a
    return in_tree, dyn, static


def _merge_args(in_tree, dyn, static):
    dyn = iter(dyn)
    flat = [static[i] if i in static else next(dyn) for i in range(in_tree.num_leaves)]
    return tree_unflatten(in_tree, flat)


def callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Calls ``callback(*args, **kwargs)`` with the values the program computes (``jax.debug.callback``).

    Leaves of ``args``/``kwargs`` that are arrays arrive as ``cranax.Array``s; others are passed as they are.
    Returns None. Also the two-call form: ``jax.debug.callback(ordered=True)(fn, *args)``. Raises TypeError
    when ``callback`` is not callable; an exception it raises reaches the caller as itself.
    """
    def _callback(fn, *c_args, **c_kwargs):
        if not callable(fn):
            raise TypeError("first argument to jax.debug.callback must be callable, "
                            f"but got an object of type {type(fn)}")
        in_tree, dyn, static = _split_args(c_args, c_kwargs)

        def _flat_callback(*dyn_flat):
            a, k = _merge_args(in_tree, dyn_flat, static)
            fn(*a, **k)
            return ()

        debug_callback_p.bind(*dyn, callback=_flat_callback, effect=_ORDERED_DEBUG if ordered else _DEBUG,
                              partitioned=partitioned)

    if callback is not None:
        _callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_callback received unexpected arguments in the two-call form: {args=} {kwargs=}")
    return _callback


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting (JAX's errors for unused ones)."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        if unused_kw:
            raise ValueError(f"Unused keyword arguments to `jax.debug.print`: {unused_kw}. You may be passing an "
                             "f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead should pass in a "
                             "regular string.")


_checker = _FormatChecker()


_logger = logging.getLogger("cranax.debug")


def _log_record(level):
    """A record naming the user's call site (the first frame outside cranax), as JAX's ``debug.log``."""
    for info in inspect.stack()[2:]:
        if not os.path.abspath(info.filename).startswith(_PKG + os.sep):
            return _logger.makeRecord(_logger.name, level, info.filename, info.lineno, "", (), None)
    return _logger.makeRecord(_logger.name, level, "(unknown file)", 0, "", (), None)


def log(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False, **kwargs):
    """``print``, but the text goes to the ``cranax.debug`` logger at INFO, with the caller's file and line
    (``jax.debug.log``)."""
    return print(fmt, *args, ordered=ordered, partitioned=partitioned, skip_format_check=skip_format_check,
                 _use_logging=True, **kwargs)


def print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False, _use_logging=False,  # noqa: A001
          **kwargs):
    """Prints ``fmt.format(*args, **kwargs)`` with the values the program computes (``jax.debug.print``).

    Formatting happens when the value is computed, under the NumPy print options in effect at the call
    (so not with f-strings). Without placeholders the values follow ``fmt``, space-separated. Writes to
    ``sys.stdout``. Returns None. Also the two-call form ``jax.debug.print(ordered=True)(fmt, ...)``.
    Raises ValueError for arguments the format string does not use, and the ``str.format`` errors for
    missing ones.
    """
    def _debug_print(fmt, *c_args, **c_kwargs):
        if not skip_format_check:
            _checker.format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field is not None
        in_tree, dyn, static = _split_args(c_args, c_kwargs)
        debug_print_p.bind(*dyn, fmt=fmt, ordered=ordered, partitioned=partitioned, in_tree=in_tree,
                           static_args=tuple(static.items()), np_printoptions=tuple(np.get_printoptions().items()),
                           has_placeholders=has_placeholders,
                           logging_record=_log_record(logging.INFO) if _use_logging else None)

    if fmt is not None:
        _debug_print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}")
    return _debug_print


# ----------------------------------------------------------------------------------------------- breakpoint

class _Frame:
    """A Python frame as the debugger shows it: file, line, source, and locals (tracers are its leaves, so
    the frame travels through the program and comes back with concrete values)."""

    def __init__(self, filename, lineno, source, offset, names, values):
        self.filename, self.lineno, self.source, self.offset = filename, lineno, source, offset
        self.names, self.values = names, values

    @property
    def locals(self):
        return dict(zip(self.names, self.values))

    @classmethod
    def capture(cls, info):
        try:
            lines, start = inspect.getsourcelines(info.frame)
            source = "".join(lines).split("\n")
            offset = info.lineno - max(start, 1)
            if offset >= len(source):
                source, offset = [], None
        except (OSError, TypeError):
            source, offset = [], None
        names, values = [], []
        for k, v in info.frame.f_locals.items():
            try:
                tree_leaves(v)
            except Exception:  # not a pytree we can walk: shown, never traced
                v = _CantFlatten()
            names.append(k)
            values.append(v)
        return cls(info.filename, info.lineno, source, offset, names, values)


class _CantFlatten:
    def __repr__(self):
        return "<cant_flatten>"


def _frame_flatten(f):
    flat, tree = tree_flatten(f.values)
    traced = [isinstance(x, Tracer) for x in flat]
    return ([x for x, t in zip(flat, traced) if t],
            (tree, traced, [x for x, t in zip(flat, traced) if not t], f.filename, f.lineno, f.source, f.offset,
             tuple(f.names)))


def _frame_unflatten(aux, leaves):
    tree, traced, others, filename, lineno, source, offset, names = aux
    leaves, others = iter(leaves), iter(others)
    flat = [next(leaves) if t else next(others) for t in traced]
    return _Frame(filename, lineno, source, offset, list(names), tree_unflatten(tree, flat))


register_pytree_node(_Frame, _frame_flatten, _frame_unflatten)


class _CliDebugger(cmd.Cmd):
    """The ``(jdb)`` prompt: ``p``/``pp`` expressions over the frame's locals (any other line is evaluated
    too), ``u(p)``/``d(own)`` between frames, ``l(ist)``, ``w(here)``/``bt``, ``c(ont(inue))``, ``q(uit)``."""

    prompt = "(jdb) "

    def __init__(self, frames, stdin=None, stdout=None):
        super().__init__(stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None
        self.frames = frames
        self.index = 0
        self.intro = "Entering jdb:"

    def _eval(self, expr):
        return eval(expr, {}, dict(self.frames[self.index].locals))

    def _show(self, fn, expr):
        try:
            _print(fn(self._eval(expr)), file=self.stdout)
        except Exception:
            err = traceback.format_exception_only(*sys.exc_info()[:2])[-1].strip()
            _print("***", err, file=self.stdout)

    def default(self, line):
        self._show(repr, line)

    def do_p(self, arg):
        """p expression: prints the expression's repr."""
        self._show(repr, arg)

    def do_pp(self, arg):
        """pp expression: pretty-prints the expression."""
        self._show(pprint.pformat, arg)

    def _context(self, n=2):
        f = self.frames[self.index]
        out = [f"> {f.filename}({f.lineno})"]
        for i, line in enumerate(f.source):
            if f.offset is not None and f.offset - 1 - n <= i <= f.offset + n:
                out.append(("->  " if i == f.offset else "    ") + line)
        _print("\n".join(out), file=self.stdout)

    def do_up(self, arg):
        """u(p): one frame up."""
        if self.index == len(self.frames) - 1:
            _print("At topmost frame.", file=self.stdout)
        else:
            self.index += 1
        self._context()
    do_u = do_up

    def do_down(self, arg):
        """d(own): one frame down."""
        if self.index == 0:
            _print("At bottommost frame.", file=self.stdout)
        else:
            self.index -= 1
        self._context()
    do_d = do_down

    def do_list(self, arg):
        """l(ist): the source around the current line."""
        self._context(5)
    do_l = do_list

    def do_where(self, arg):
        """w(here): the stack, most recent frame last."""
        out = ["Traceback:"]
        for f in self.frames[::-1]:
            out.append(f'  File "{f.filename}", line {f.lineno}')
            out.append("    <no source>" if f.offset is None else "    " + f.source[f.offset].strip())
        _print("\n".join(out), file=self.stdout)
    do_w = do_bt = do_where

    def do_continue(self, arg):
        """c(ont(inue)): leaves the debugger; the program goes on."""
        return True
    do_c = do_cont = do_continue

    def do_quit(self, arg):
        """q(uit): exits the program."""
        sys.exit(0)
    do_q = do_EOF = do_exit = do_quit


_debug_lock = threading.Lock()


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False, token=None, **kwargs):  # noqa: A001
    """Stops at this point of the program in a ``(jdb)`` debugger whose frames hold the values the program
    computed (``jax.debug.breakpoint``): traced locals are concrete there. ``filter_frames`` hides cranax's
    own frames; ``num_frames`` limits how many frames above are kept. ``kwargs`` go to the debugger
    (``stdin=``, ``stdout=`` file objects: scripted sessions). Only the command-line debugger exists
    (``backend`` is accepted and ignored). With ``token`` (a pytree of arrays) it runs once ``token`` is
    computed and returns it; else returns None. Raises ValueError when both ``ordered`` and ``token``."""
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    infos = inspect.stack()[1:]
    if filter_frames:
        infos = [i for i in infos if not os.path.abspath(i.filename).startswith(_PKG + os.sep)]
    frames = [_Frame.capture(i) for i in infos]
    if num_frames is not None:
        frames = frames[:num_frames]
    flat, tree = tree_flatten(frames)

    def run(*flat_vals):
        with _debug_lock:
            _CliDebugger(tree_unflatten(tree, list(flat_vals)), **kwargs).cmdloop()

    if token is None:
        callback(run, *flat, ordered=ordered)
        return None
    def with_token(x, *vals):
        run(*vals)
        return x

    token, flat = stop_gradient((token, flat))
    return pure_callback(with_token, token, token, *flat)


# ----------------------------------------------------------------------------------------------- sharding

def inspect_array_sharding(value, *, callback):
    """Calls ``callback`` with the sharding of ``value`` (``jax.debug.inspect_array_sharding``). cranax
    arrays live on one device, so this is the array's ``SingleDeviceSharding`` (for a traced value too)."""
    for x in tree_leaves(value):
        if isinstance(x, Tracer):
            callback(_SingleDeviceSharding(_default_device()))
        else:
            callback(x.sharding)


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9, max_width=80, color_map=None):
    """Draws the layout of ``sharding`` over an array of ``shape`` (rank 1 or 2) as JAX's text diagram
    (``jax.debug.visualize_sharding``): one box, labelled by the device, since cranax arrays live on one
    device. Raises ValueError for other ranks."""
    if len(shape) > 2 or len(shape) < 1:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    dev = next(iter(sharding.device_set))
    label = f"{dev.platform.upper()} {dev.id}"
    base_h = int(10 * scale)
    base_w = int(base_h * ((shape[1] if len(shape) == 2 else 1) / shape[0]))
    height = base_h if len(shape) == 2 else 1
    width = min(max(int(base_w * 2.5), min_width), max_width)
    left, rem = divmod(width - len(label) - 2, 2)
    top, vrem = divmod(height - 2, 2)
    inner = width - 2
    row = " " * max(left, 0) + label + " " * max(left + rem, 0)
    blank = " " * inner
    lines = ["┌" + "─" * inner + "┐"]
    lines += ["│" + blank + "│"] * max(top, 0)
    lines.append("│" + row[:inner].ljust(inner) + "│")
    lines += ["│" + blank + "│"] * max(top + vrem, 0)
    lines.append("└" + "─" * inner + "┘")
    _print("\n".join(lines))


def visualize_array_sharding(arr, **kwargs):
    """``visualize_sharding(arr.shape, arr.sharding)`` (``jax.debug.visualize_array_sharding``)."""
    visualize_sharding(arr.shape, arr.sharding, **kwargs)
