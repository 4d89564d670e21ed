"""Dtypes and type promotion, mirroring ``jax.dtypes`` and JAX's promotion semantics.

Supported dtypes: ``bool``, ``int8``, ``uint8``, ``int16``, ``uint16``, ``int32``, ``uint32``,
``float16``, ``float32``, ``complex64``, and ``int64`` / ``float64`` / ``complex128``. The 64-bit ones exist only when
``config.jax_enable_x64`` is True; otherwise they canonicalize to their 32-bit counterparts (as in JAX,
where ``jnp.array(1, dtype=jnp.int64)`` is int32 with x64 off); the 8/16-bit ones are kept as they are.
``bfloat16`` and the float8 formats (``float8_e4m3fn``, ``float8_e5m2``, ``float8_e4m3fnuz``, ``float8_e5m2fnuz``,
``float8_e4m3b11fnuz``, ``float8_e3m4``, ``float8_e4m3``) are ml_dtypes' (the NumPy types JAX uses), kept as they
are under both x64 settings (``float8_e8m0fnu``, ``float4_e2m1fn`` and the other sub-byte types are not supported). Every other
dtype (object, strings, uint64, ...) raises ``TypeError: cranax does not support dtype <name>``.

float16 and bfloat16 are stored in 2 bytes (the float8 formats in 1, same rules) and computed as XLA's CPU backend does: each operation runs in float32 and
rounds its result to float16 / bfloat16 (round to nearest even, overflow to inf, subnormals kept); ``sum``/``prod``/
``mean``/``var`` accumulate in float32 and round once, and ``dot`` multiplies in float32. (For float8, JAX 0.10.2's CPU
backend accumulates a ``sum`` of up to 32 elements in float8, rounding after each addition, and longer ones in
float32 in an order of its own; cranax accumulates every float8 sum in float32 and rounds once.)

Type promotion (:func:`result_type`) is JAX's "standard" lattice restricted to these dtypes, plus the
weakly-typed nodes ``i*`` (Python int / weak int), ``f*`` (Python float / weak float) and ``c*`` (Python
complex / weak complex)::

    bool -> i* -> {u8, i8};  u8 -> {i16, u16};  u16 -> {i32, u32};  i8 -> i16 -> i32;
    u32 -> i64;  i32 -> i64;  i64 -> f* -> f16 -> f32 -> f64;  f* -> c* -> c64 -> c128;
    f32 -> c64;  f64 -> c128

The result of promoting several values is the join (least upper bound) of their nodes. It is weakly
typed exactly when the join is ``i*``, ``f*`` or ``c*``; a weak result gets the default dtype of its kind
(int64/float64/complex128, canonicalized). Finally the result is canonicalized according to ``jax_enable_x64``.
Examples (x64 off): ``i32 + 1 -> i32``, ``u32 + 1 -> u32``, ``i8 + 1 -> i8``, ``u8 + i8 -> i16``, ``i32 + 1.5 -> f32 (weak)``,
``f32 + 1 -> f32``, ``bool + True -> bool``, ``i32 + u32 -> i64 -> i32``, ``f16 + 1.5 -> f16``,
``f16 + i32 -> f16``, ``f16 + f32 -> f32``, ``f32 + 1j -> c64``, ``f64 + c64 -> c128 -> c64``,
``bf16 + 1.5 -> bf16``, ``bf16 + f16 -> f32``.

The float8 formats hang below ``f*`` with nothing above them, as in JAX: ``f8 + 1.5 -> f8``, ``f8 + i32 -> f8``, and
a float8 meeting any other float (or complex) type raises :class:`TypePromotionError` ("8-bit floats do not support
implicit promotion").
"""
import dataclasses

import ml_dtypes
import numpy as np

from .config import config

__all__ = [
    "bool_", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "float16", "float32", "float64", "float_", "int_", "uint",
    "complex64", "complex128", "complex_", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3",
    "canonicalize_dtype", "dtype", "is_weakly_typed", "result_type", "promote_types",
    "short_name", "from_short_name", "issubdtype", "finfo", "iinfo", "scalar_type_of",
    "check_user_dtype_supported", "default_int_dtype", "default_float_dtype",
    "default_uint_dtype", "python_scalar_dtypes", "is_python_scalar", "supported_dtypes",
    "float0", "itemsize_bits", "extended", "prng_key", "TypePromotionError",
]

# ----------------------------------------------------------------------------------------------
# Names
# ----------------------------------------------------------------------------------------------

bool_ = np.bool_
int8 = np.int8
uint8 = np.uint8
int16 = np.int16
uint16 = np.uint16
int32 = np.int32
uint32 = np.uint32
int64 = np.int64
float16 = np.float16
float32 = np.float32
float64 = np.float64
complex64 = np.complex64
complex128 = np.complex128
bfloat16 = ml_dtypes.bfloat16   # as JAX: ml_dtypes' type, a NumPy "void-kind" scalar type of 2 bytes
# The float8 formats cranax computes (ml_dtypes' types of 1 byte; the jaxpr short names JAX prints).
_FLOAT8_NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz",
                 "float8_e3m4", "float8_e4m3")
float8_e4m3fn = ml_dtypes.float8_e4m3fn
float8_e5m2 = ml_dtypes.float8_e5m2
float8_e4m3fnuz = ml_dtypes.float8_e4m3fnuz
float8_e5m2fnuz = ml_dtypes.float8_e5m2fnuz
float8_e4m3b11fnuz = ml_dtypes.float8_e4m3b11fnuz
float8_e3m4 = ml_dtypes.float8_e3m4
float8_e4m3 = ml_dtypes.float8_e4m3
# JAX's default (64-bit) scalar types; canonicalize them to get what arrays actually use.
int_ = np.int64
float_ = np.float64
complex_ = np.complex128
uint = np.uint32   # JAX's is uint64, which cranax does not support

_BOOL = np.dtype(np.bool_)
_I8 = np.dtype(np.int8)
_U8 = np.dtype(np.uint8)
_I16 = np.dtype(np.int16)
_U16 = np.dtype(np.uint16)
_I32 = np.dtype(np.int32)
_U32 = np.dtype(np.uint32)
_I64 = np.dtype(np.int64)
_F16 = np.dtype(np.float16)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_C64 = np.dtype(np.complex64)
_C128 = np.dtype(np.complex128)
# The floats NumPy does not know as floating (kind 'V'): ml_dtypes' (see ``issubdtype``, ``is_float``).
_F8S = tuple(np.dtype(getattr(ml_dtypes, n)) for n in _FLOAT8_NAMES)
_CUSTOM_FLOATS = frozenset([_BF16, *_F8S])

supported_dtypes = (_BOOL, _I8, _U8, _I16, _U16, _I32, _U32, _I64, _F16, _F32, _F64, _C64, _C128, _BF16, *_F8S)

# Python scalar types -> their (uncanonicalized) default dtypes.
python_scalar_dtypes = {bool: _BOOL, int: _I64, float: _F64, complex: _C128}

_SHORT_NAMES = {_BOOL: "bool", _I8: "i8", _U8: "u8", _I16: "i16", _U16: "u16", _I32: "i32", _U32: "u32", _I64: "i64", _F16: "f16", _F32: "f32", _F64: "f64",
                _C64: "c64", _C128: "c128", _BF16: "bf16", **{d: "f8_" + d.name[7:] for d in _F8S}}
_FROM_SHORT = {v: k for k, v in _SHORT_NAMES.items()}

# ----------------------------------------------------------------------------------------------
# x64 flag (kept in a module global, refreshed by a config listener)
# ----------------------------------------------------------------------------------------------

_x64 = bool(config.jax_enable_x64)


_strict = config.jax_numpy_dtype_promotion == "strict"


def _on_config_update(name, value):
    global _x64, _strict
    if name == "jax_enable_x64":
        _x64 = bool(value)
    elif name == "jax_numpy_dtype_promotion":
        _strict = value == "strict"


if hasattr(config, "_add_listener"):
    config._add_listener(_on_config_update)
    def _x64_enabled():
        return _x64
else:  # pragma: no cover - a config without listeners: read the flag each time
    def _x64_enabled():
        return bool(config.jax_enable_x64)


def default_int_dtype():
    """int64 with x64 enabled, else int32."""
    return _I64 if _x64_enabled() else _I32


def default_float_dtype():
    """float64 with x64 enabled, else float32."""
    return _F64 if _x64_enabled() else _F32


def default_uint_dtype():
    """uint32 (cranax has no uint64)."""
    return _U32


# ----------------------------------------------------------------------------------------------
# Canonicalization
# ----------------------------------------------------------------------------------------------

_NARROW = {_I8: _I8, _U8: _U8, _I16: _I16, _U16: _U16, _F16: _F16, _BF16: _BF16, **{d: d for d in _F8S}}
_CANON = {
    False: {_BOOL: _BOOL, **_NARROW, _I32: _I32, _U32: _U32, _I64: _I32, _F32: _F32, _F64: _F32,
            _C64: _C64, _C128: _C64},
    True: {_BOOL: _BOOL, **_NARROW, _I32: _I32, _U32: _U32, _I64: _I64, _F32: _F32, _F64: _F64,
           _C64: _C64, _C128: _C128},
}
_canon_cache = {False: {}, True: {}}   # dtype-like (hashable) -> canonical np.dtype


def _unsupported(name):
    return TypeError(f"cranax does not support dtype {name}")


def _name_of(spec):
    if isinstance(spec, str):
        return spec
    if isinstance(spec, np.dtype):
        return spec.name
    if isinstance(spec, type):
        try:
            return np.dtype(spec).name
        except TypeError:
            return spec.__name__
    return repr(spec)


def _to_np_dtype(spec):
    """``np.dtype(spec)`` for a dtype-like, raising cranax's TypeError for unsupported ones."""
    if isinstance(spec, np.dtype):
        dt = spec
    else:
        if spec is complex:
            spec = _C128
        try:
            dt = np.dtype(spec)
        except (TypeError, ValueError) as e:
            raise TypeError(f"cranax does not support dtype {_name_of(spec)} "
                            f"(not a dtype NumPy understands: {e})") from None
    if dt not in _CANON[True]:
        raise _unsupported(dt.name)
    return dt


def canonicalize_dtype(dtype):
    """The np.dtype cranax uses for ``dtype`` under the current ``jax_enable_x64`` setting.

    Accepts np.dtype objects, scalar types (``np.float32``, ``float``, ``int``, ``bool``) and names
    (``'float32'``). Raises TypeError for dtypes cranax does not support.
    """
    x64 = _x64_enabled()
    cache = _canon_cache[x64]
    try:
        return cache[dtype]
    except KeyError:
        pass
    except TypeError:   # unhashable spec
        return _CANON[x64][_to_np_dtype(dtype)]
    out = _CANON[x64][_to_np_dtype(dtype)]
    cache[dtype] = out
    return out


# ----------------------------------------------------------------------------------------------
# dtype() / weak types
# ----------------------------------------------------------------------------------------------

def is_python_scalar(x):
    """True for Python bool/int/float (not NumPy scalars)."""
    return type(x) in python_scalar_dtypes


def _is_dtype_spec(x):
    return isinstance(x, (np.dtype, str, type))


def dtype(x, canonicalize=False):
    """The dtype of ``x``.

    ``x`` may be a Python scalar (bool -> bool, int -> int32 / int64 with x64, float -> float32 /
    float64 with x64; complex raises), a NumPy array or scalar, an object with ``.aval`` (uses
    ``x.aval.dtype``) or ``.dtype``, or a dtype-like (np.dtype, scalar type, name). Unsupported dtypes
    raise TypeError. With ``canonicalize=True`` the result is canonicalized for the x64 setting.
    """
    t = type(x)
    if t is bool:
        return _BOOL
    if t is int:
        return _I64 if _x64_enabled() else _I32
    if t is float:
        return _F64 if _x64_enabled() else _F32
    if t is complex:
        return _C128 if _x64_enabled() else _C64
    if x is None:
        raise ValueError("Invalid argument to dtype: None.")
    aval = getattr(x, "aval", None)
    if aval is not None and hasattr(aval, "dtype"):
        dt = aval.dtype
    elif _is_dtype_spec(x):
        if x in python_scalar_dtypes:
            dt = python_scalar_dtypes[x]
        else:
            dt = x
    elif hasattr(x, "dtype"):
        dt = x.dtype
    else:
        raise TypeError(f"Cannot determine dtype of {x!r} (type {t.__name__})")
    dt = _to_np_dtype(dt)
    return canonicalize_dtype(dt) if canonicalize else dt


def is_weakly_typed(x):
    """True for weakly-typed values: Python int and float (not bool), and arrays/tracers whose
    ``aval.weak_type`` (or ``weak_type``) is set."""
    t = type(x)
    if t is int or t is float or t is complex:
        return True
    if t is bool:
        return False
    aval = getattr(x, "aval", None)
    if aval is not None and hasattr(aval, "weak_type"):
        return bool(aval.weak_type)
    return bool(getattr(x, "weak_type", False))


def scalar_type_of(x):
    """The Python scalar type (bool, int or float) matching the dtype of ``x``."""
    dt = dtype(x)
    kind = dt.kind
    if kind == "b":
        return bool
    if kind in "iu":
        return int
    if kind == "f" or dt in _CUSTOM_FLOATS:
        return float
    if kind == "c":
        return complex
    raise _unsupported(dt.name)   # pragma: no cover - dtype() already rejected it


# ----------------------------------------------------------------------------------------------
# The promotion lattice
# ----------------------------------------------------------------------------------------------

# Nodes are small ints (so a pair indexes a flat table).
(_N_BOOL, _N_IW, _N_FW, _N_U32, _N_I32, _N_I64, _N_F32, _N_F64,
 _N_U8, _N_U16, _N_I8, _N_I16, _N_F16, _N_CW, _N_C64, _N_C128, _N_BF16) = range(17)
# The float8 nodes follow, one per format (in _F8S order).
_N_F8S = tuple(range(17, 17 + len(_F8S)))
_NUM_NODES = 17 + len(_F8S)
_NODE_NAMES = ["bool", "i*", "f*", "u32", "i32", "i64", "f32", "f64", "u8", "u16", "i8", "i16", "f16",
               "c*", "c64", "c128", "bf16", *(_SHORT_NAMES[d] for d in _F8S)]
_WEAK_NODES = (_N_IW, _N_FW, _N_CW)

# Direct successors (the lattice's edges).
_EDGES = {
    _N_BOOL: [_N_IW],
    _N_IW: [_N_U8, _N_I8],
    _N_U8: [_N_I16, _N_U16],
    _N_U16: [_N_I32, _N_U32],
    _N_I8: [_N_I16],
    _N_I16: [_N_I32],
    _N_U32: [_N_I64],
    _N_I32: [_N_I64],
    _N_I64: [_N_FW],
    # float8: below f*, nothing above (JAX: "8-bit floats do not support implicit promotion")
    _N_FW: [_N_F16, _N_BF16, _N_CW, *_N_F8S],
    **{n: [] for n in _N_F8S},
    _N_F16: [_N_F32],
    _N_BF16: [_N_F32],
    _N_F32: [_N_F64, _N_C64],
    _N_F64: [_N_C128],
    _N_CW: [_N_C64],
    _N_C64: [_N_C128],
    _N_C128: [],
}


def _upper_sets():
    ups = {}

    def up(n):
        if n not in ups:
            s = {n}
            for m in _EDGES[n]:
                s |= up(m)
            ups[n] = frozenset(s)
        return ups[n]

    for n in _EDGES:
        up(n)
    return ups


def _build_join_table():
    ups = _upper_sets()
    table = [None] * (_NUM_NODES * _NUM_NODES)
    for a in range(_NUM_NODES):
        for b in range(_NUM_NODES):
            common = ups[a] & ups[b]
            # The least upper bound: the common upper bound that is below all the others (None when there is
            # no common upper bound: a float8 and another float).
            least = [c for c in common if common <= ups[c]]
            assert len(least) <= 1, (a, b, least)
            table[a * _NUM_NODES + b] = least[0] if least else None
    return table


_JOIN = _build_join_table()

_STRONG_NODE = {_BOOL: _N_BOOL, _U8: _N_U8, _U16: _N_U16, _I8: _N_I8, _I16: _N_I16, _U32: _N_U32, _I32: _N_I32, _I64: _N_I64, _F16: _N_F16, _F32: _N_F32, _F64: _N_F64,
                _C64: _N_C64, _C128: _N_C128, _BF16: _N_BF16, **dict(zip(_F8S, _N_F8S))}
_WEAK_NODE = {_BOOL: _N_BOOL, _U8: _N_IW, _U16: _N_IW, _I8: _N_IW, _I16: _N_IW, _U32: _N_IW, _I32: _N_IW, _I64: _N_IW, _F16: _N_FW, _F32: _N_FW, _F64: _N_FW,
              _C64: _N_CW, _C128: _N_CW, _BF16: _N_FW, **{d: _N_FW for d in _F8S}}

# Result of a join, per x64 flag: node -> (dtype, weak).
_NODE_RESULT = {
    x64: [
        (_BOOL, False),
        (_I64 if x64 else _I32, True),
        (_F64 if x64 else _F32, True),
        (_U32, False),
        (_I32, False),
        (_I64 if x64 else _I32, False),
        (_F32, False),
        (_F64 if x64 else _F32, False),
        (_U8, False),
        (_U16, False),
        (_I8, False),
        (_I16, False),
        (_F16, False),
        (_C128 if x64 else _C64, True),
        (_C64, False),
        (_C128 if x64 else _C64, False),
        (_BF16, False),
        *((d, False) for d in _F8S),
    ]
    for x64 in (False, True)
}

_PY_SCALAR_NODE = {bool: _N_BOOL, int: _N_IW, float: _N_FW, complex: _N_CW}


def _node_of_dtype(dt, weak):
    table = _WEAK_NODE if weak else _STRONG_NODE
    try:
        return table[dt]
    except (KeyError, TypeError):
        return table[_to_np_dtype(dt)]


# How to read the dtype of values of a given type: 1 = ``x.dtype`` (NumPy arrays/scalars, never
# weak), 2 = ``x.aval.dtype`` / ``x.aval.weak_type`` (tracers, cranax arrays). Filled lazily.
_ARG_MODE = {np.ndarray: 1}
_MODE_DTYPE = 1
_MODE_AVAL = 2


def _node(x):
    """Lattice node of one argument of result_type."""
    t = type(x)
    n = _PY_SCALAR_NODE.get(t)
    if n is not None:
        return n
    m = _ARG_MODE.get(t)
    if m == _MODE_AVAL:
        aval = x.aval
        try:
            return (_WEAK_NODE if aval.weak_type else _STRONG_NODE)[aval.dtype]
        except (KeyError, AttributeError, TypeError):
            pass
    elif m == _MODE_DTYPE:
        try:
            return _STRONG_NODE[x.dtype]
        except (KeyError, TypeError):
            pass
    return _node_slow(x, t)


def _node_slow(x, t):
    aval = getattr(x, "aval", None)
    if aval is not None and hasattr(aval, "dtype"):
        if len(_ARG_MODE) < 1024:
            _ARG_MODE[t] = _MODE_AVAL
        return _node_of_dtype(aval.dtype, getattr(aval, "weak_type", False))
    if x is None:                     # JAX treats None as float_
        return _N_F64
    if isinstance(x, (np.dtype, str)):
        return _node_of_dtype(x, False)
    if isinstance(x, type):
        if x in _PY_SCALAR_NODE:      # the types int/float are weak, as in JAX
            return _PY_SCALAR_NODE[x]
        return _node_of_dtype(x, False)
    if isinstance(x, complex):
        return _N_CW
    if isinstance(x, (np.ndarray, np.generic)):
        if len(_ARG_MODE) < 1024:
            _ARG_MODE[t] = _MODE_DTYPE
        return _node_of_dtype(x.dtype, False)
    dt = getattr(x, "dtype", None)
    if dt is not None:
        return _node_of_dtype(dt, bool(getattr(x, "weak_type", False)))
    raise TypeError(f"Cannot determine dtype of {x!r} (type {t.__name__})")


def _arg_dtype_and_weak(x):
    """(uncanonicalized dtype, weak) of one argument (for the single-argument case)."""
    t = type(x)
    if t in _PY_SCALAR_NODE:
        return python_scalar_dtypes[t], t is not bool
    if isinstance(x, type) and x in python_scalar_dtypes:
        return python_scalar_dtypes[x], x is not bool
    if x is None:
        return _F64, False
    return dtype(x), is_weakly_typed(x) and not _is_dtype_spec(x)


def result_type(*args, return_weak_type_flag=False):
    """The dtype that JAX's promotion gives for ``args`` (values or dtype-likes), canonicalized.

    With ``return_weak_type_flag=True`` returns ``(dtype, weak_type)``.
    """
    x64 = _x64_enabled()
    n = len(args)
    if _strict and n > 1:
        _check_strict([_node(a) for a in args])
    if n == 2:
        j = _JOIN[_node(args[0]) * _NUM_NODES + _node(args[1])]
        if j is None:
            _no_promotion_path([_node(a) for a in args])
        out = _NODE_RESULT[x64][j]
    elif n == 1:
        dt, weak = _arg_dtype_and_weak(args[0])
        if weak and dt.kind != "b":
            out = _NODE_RESULT[x64][{"i": _N_IW, "c": _N_CW}.get(dt.kind, _N_FW)] if dt.kind != "u" \
                else (_U32, True)
        else:
            out = (_CANON[x64][dt], False)
    elif n == 0:
        raise ValueError("at least one array or dtype is required")
    else:
        j = _node(args[0])
        for a in args[1:]:
            j = _JOIN[j * _NUM_NODES + _node(a)]
            if j is None:
                _no_promotion_path([_node(a) for a in args])
        out = _NODE_RESULT[x64][j]
    return out if return_weak_type_flag else out[0]


def promote_types(a, b):
    """JAX's ``jnp.promote_types``: the join of two dtypes on the promotion lattice.

    Like JAX, the Python types ``int`` and ``float`` act as the weak nodes (giving int64/float64 when
    the join is weak) and the result is *not* canonicalized (``promote_types(int32, uint32)`` is
    int64 even with x64 disabled).
    """
    na = _PY_SCALAR_NODE[a] if (a is int or a is float or a is complex) else _node_of_dtype(_to_np_dtype(a), False)
    nb = _PY_SCALAR_NODE[b] if (b is int or b is float or b is complex) else _node_of_dtype(_to_np_dtype(b), False)
    if _strict:
        _check_strict([na, nb])
    j = _JOIN[na * _NUM_NODES + nb]
    if j is None:
        _no_promotion_path([na, nb])
    return _NODE_RESULT[True][j][0]


def _no_promotion_path(nodes):
    """Raises JAX's error for inputs without a common upper bound (a float8 meeting another float type)."""
    distinct = dict.fromkeys(_WEAK_PY_TYPE[n].__name__ if n in _WEAK_NODES else str(_NODE_RESULT[True][n][0])
                             for n in nodes)
    raise TypePromotionError(
        f"Input dtypes {tuple(distinct)} have no available implicit dtype promotion path. To avoid unintended "
        "promotion, 8-bit floats do not support implicit promotion. If you'd like your inputs to be promoted to "
        "another type, you can do so explicitly using e.g. x.astype('float32')")


# Strict promotion (``jax_numpy_dtype_promotion='strict'``): values of one dtype meet only weak scalars of a
# kind that dtype can hold (a Python int meets any integer or inexact dtype, a float any inexact one, a
# complex a complex one); two different strong dtypes never promote.
_STRICT_WEAK_OK = {_N_IW: frozenset({_N_U8, _N_U16, _N_U32, _N_I8, _N_I16, _N_I32, _N_I64, _N_F16, _N_F32, _N_F64,
                                     _N_C64, _N_C128}),
                   _N_FW: frozenset({_N_F16, _N_F32, _N_F64, _N_C64, _N_C128}),
                   _N_CW: frozenset({_N_C64, _N_C128})}
_WEAK_PY_TYPE = {_N_IW: int, _N_FW: float, _N_CW: complex}


def _check_strict(nodes):
    strong = {n for n in nodes if n not in _WEAK_NODES}
    ok = len(strong) <= 1
    if ok and strong:
        s, = strong
        ok = all(s in _STRICT_WEAK_OK[n] for n in set(nodes) if n in _WEAK_NODES)
    if not ok:
        # The distinct inputs in argument order (JAX iterates a set: its order varies from run to run).
        distinct = dict.fromkeys(_WEAK_PY_TYPE[n] if n in _WEAK_NODES else _NODE_RESULT[True][n][0] for n in nodes)
        raise TypePromotionError(
            f"Input dtypes {tuple(str(n) for n in distinct)} have no available implicit dtype promotion path when "
            "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output type, or set "
            "jax_numpy_dtype_promotion=standard.")


# ----------------------------------------------------------------------------------------------
# Short names, predicates, info
# ----------------------------------------------------------------------------------------------

def short_name(dt):
    """'f32', 'i32', 'u32', 'i64', 'f64', 'f16', 'i8', 'u8', 'i16', 'u16', 'c64', 'c128' or 'bool' (the form
    jaxprs print)."""
    try:
        return _SHORT_NAMES[dt]
    except (KeyError, TypeError):
        if dt == float0:   # a float0 tangent's aval prints float0[...], as JAX's
            return "float0"
        return _SHORT_NAMES[_to_np_dtype(dt)]


def from_short_name(s):
    """Inverse of :func:`short_name`."""
    try:
        return _FROM_SHORT[s]
    except KeyError:
        raise ValueError(f"unknown short dtype name {s!r}; expected one of "
                         f"{sorted(_FROM_SHORT)}") from None


_PY_TYPE_CATEGORY = {bool: np.bool_, int: np.integer, float: np.floating, complex: np.complexfloating}


def _as_dtype_or_category(x):
    if isinstance(x, type):
        if x in _PY_TYPE_CATEGORY:
            return _PY_TYPE_CATEGORY[x]
        if issubclass(x, np.generic):
            return x
    if isinstance(x, (np.dtype, str)):
        return x
    dt = getattr(getattr(x, "aval", None), "dtype", None)
    if dt is None:
        dt = getattr(x, "dtype", None)
    return dt if dt is not None else x


def issubdtype(a, b):
    """``np.issubdtype`` that also accepts arrays/tracers, and maps the Python types ``int`` /
    ``float`` / ``complex`` / ``bool`` to the categories np.integer / np.floating /
    np.complexfloating / np.bool_ (so ``issubdtype(float32, float)`` is True)."""
    if a is None or b is None:
        return False
    ta, tb = _extended_type(a), _extended_type(b)
    if ta is not None or tb is not None:
        # JAX's extended dtypes (typed keys): their scalar type sits under ``extended`` and nowhere else.
        if ta is None or not isinstance(b, type) and tb is None:
            return False
        return issubclass(ta, tb if tb is not None else b)
    a, b = _as_dtype_or_category(a), _as_dtype_or_category(b)
    # ml_dtypes' floats are not np.floating subclasses; JAX places them under floating by hand.
    try:
        a_dt = np.dtype(a)
    except (TypeError, ValueError):   # an abstract category such as np.floating
        a_dt = None
    if a_dt is not None and a_dt in _CUSTOM_FLOATS:
        b_t = b if isinstance(b, type) and issubclass(b, np.generic) else np.dtype(b).type
        return b_t in (a_dt.type, np.floating, np.inexact, np.number, np.generic)
    return bool(np.issubdtype(a, b))


def _extended_type(x):
    """The scalar type of an extended dtype (``x`` the dtype or an array of it), or None."""
    if isinstance(x, (np.dtype, str)) or isinstance(x, type):
        return None
    dt = getattr(x, "dtype", x)
    t = getattr(dt, "type", None)
    return t if isinstance(t, type) and issubclass(t, extended) else None


def _dtype_of_info_arg(x):
    if isinstance(x, type) and x in python_scalar_dtypes:
        return python_scalar_dtypes[x]
    if isinstance(x, (np.dtype, str, type)):
        return np.dtype(x)
    dt = getattr(getattr(x, "aval", None), "dtype", None)
    if dt is None:
        dt = getattr(x, "dtype", None)
    return np.dtype(dt) if dt is not None else np.dtype(x)


def finfo(x):
    """``np.finfo`` for a floating dtype-like, array or tracer (``ml_dtypes.finfo`` for bfloat16 and the float8
    formats, as JAX)."""
    dt = _dtype_of_info_arg(x)
    if dt in _CUSTOM_FLOATS:
        return ml_dtypes.finfo(dt)
    return np.finfo(dt)


def iinfo(x):
    """``np.iinfo`` for an integer dtype-like, array or tracer."""
    return np.iinfo(_dtype_of_info_arg(x))


# The dtype of tangents of integer and boolean values (zero-size structured void dtype, as JAX's).
float0 = np.dtype([("float0", np.void, 0)])

_SUBBYTE_BITS = {"int4": 4, "uint4": 4, "int2": 2, "uint2": 2, "float4_e2m1fn": 4}


def itemsize_bits(dtype):
    """The size of one element of ``dtype`` in bits (8 for bool; 4 for int4). Mirrors
    ``jax.dtypes.itemsize_bits``. Raises TypeError for something that is not a dtype."""
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    name = getattr(dtype, "name", dtype if isinstance(dtype, str) else getattr(dtype, "__name__", None))
    if name in _SUBBYTE_BITS:
        return _SUBBYTE_BITS[name]
    return np.dtype(dtype).itemsize * 8


def check_user_dtype_supported(dtype, fun_name=None):
    """Validates a ``dtype=`` argument given by a user (None is fine).

    Raises TypeError for dtypes cranax does not support; warns (UserWarning, like JAX) when a 64-bit
    dtype is requested explicitly while x64 is disabled, since it will be truncated to 32 bits.
    """
    if dtype is None:
        return
    if isinstance(dtype, type) and dtype in python_scalar_dtypes:
        return   # Python types request the default dtype: no warning
    dt = _to_np_dtype(dtype)
    canon = canonicalize_dtype(dt)
    if canon != dt:
        import warnings
        where = f" in {fun_name}" if fun_name else ""
        warnings.warn(
            f"Explicitly requested dtype {dt.name}{where} is not available, and will be truncated "
            f"to dtype {canon.name}. To enable more dtypes, set the jax_enable_x64 configuration "
            f"option or the JAX_ENABLE_X64 shell environment variable.", UserWarning, stacklevel=3)


class TypePromotionError(ValueError):
    """Raised when two dtypes cannot be promoted under the strict promotion mode. Mirrors
    ``jax.dtypes.TypePromotionError``."""


class extended(np.generic):
    """The abstract dtype class of JAX's extended dtypes (``jnp.issubdtype(dt, dtypes.extended)``); cranax
    has no extended dtypes yet, so no array's dtype is a subclass. Mirrors ``jax.dtypes.extended``."""


class prng_key(extended):
    """The abstract dtype class of typed PRNG keys. Mirrors ``jax.dtypes.prng_key``."""


class primal_tangent_dtype_scalar(extended):
    """The scalar type of the dtypes :func:`primal_tangent_dtype` makes."""


@dataclasses.dataclass(frozen=True, slots=True)
class PrimalTangentDType:
    """An extended dtype whose values are stored as ``primal_dtype`` and whose tangents are
    ``tangent_dtype``; prints as its ``name``. Mirrors ``jax._src.dtypes.PrimalTangentDType``."""

    primal_dtype: object
    tangent_dtype: object
    name: str
    type = primal_tangent_dtype_scalar

    def __repr__(self):
        return self.name

    __str__ = __repr__


def primal_tangent_dtype(primal_dtype, tangent_dtype, name=None):
    """An extended dtype pairing a primal dtype with the dtype of its tangents, named
    ``PrimalTangentDType{f32/bf16}`` unless ``name`` is given; ``issubdtype(dt, extended)`` is True. Both
    dtypes are read as :func:`dtype` reads them (``int`` is int32 without x64; an unknown name is a
    ``TypeError``). cranax makes and compares such dtypes but has no arrays of them. Mirrors
    ``jax.experimental.primal_tangent_dtype``."""
    primal_dtype, tangent_dtype = (dtype(d, canonicalize=True) for d in (primal_dtype, tangent_dtype))
    name = name or f"PrimalTangentDType{{{short_name(primal_dtype)}/{short_name(tangent_dtype)}}}"
    return PrimalTangentDType(primal_dtype, tangent_dtype, name)
