"""``jax.nn``'s attention and scaled matmuls: ``dot_product_attention`` (the XLA-path formula: grouped
query heads, bias, boolean and causal masks, sliding windows, padding by sequence length, softmax in
float32) and ``scaled_matmul`` / ``scaled_dot_general`` (block-scaled products)."""
import dataclasses as _dc
import warnings as _warnings

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from .. import numpy as jnp
from ..core import get_aval
from ._functions import logsumexp, softmax

__all__ = ["dot_product_attention", "get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul"]


def _large_negative(dtype):
    # JAX's fill for masked logits: -0.7 × the dtype's max (capped at float32's), so exp underflows to 0
    # without the -inf - -inf = NaN of a fully masked row.
    big = min(float(_dtypes.finfo(dtype).max), float(_np.finfo(_np.float32).max))
    return jnp.asarray(-0.7 * big, dtype=dtype)


def _ensure_4d(t):
    t = jnp.asarray(t)
    if t.ndim < 4:
        return jnp.reshape(t, (1,) * (4 - t.ndim) + t.shape)
    return t


def _check(t, shape, dtype, name):
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and get_aval(t).dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {get_aval(t).dtype}")
    for i in range(t.ndim):
        if shape[i] != -1 and t.shape[i] != shape[i]:
            raise ValueError(f"{name} shape should be {list(shape)}: but got {t.shape}")


def _grouped(t, K, G):
    """A (B|1, N|1, T|1, S|1) bias or mask as (B|1, K, G, T|1, S|1), head n = k*G + g."""
    if t is None:
        return None
    tb, tn, tt, ts = t.shape
    if tn == 1:
        return jnp.broadcast_to(t[:, :, None, :, :], (tb, K, G, tt, ts))
    if tn != K * G:
        raise ValueError(f"bias/mask head dimension should be 1 or {K * G}, but got {tn}")
    return jnp.reshape(t, (tb, K, G, tt, ts))


def _attention(q, k, v, bias, mask, is_causal, scale, q_len, kv_len, window, return_residual):
    B, T, N, H = q.shape
    _, S, K, _ = k.shape
    G = N // K
    q = jnp.reshape(q, (B, T, K, G, H))
    logits_dtype = jnp.promote_types(get_aval(q).dtype, _np.float32)
    logits = jnp.einsum("btkgh,bskh->bkgts", q, k, preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=logits_dtype)
    bias, mask = _grouped(bias, K, G), _grouped(mask, K, G)
    if bias is not None:
        logits = (logits + bias).astype(logits_dtype)
    if mask is not None or is_causal or q_len is not None or kv_len is not None or window is not None:
        keep = jnp.ones(logits.shape, dtype=bool)
        if mask is not None:
            keep = keep & mask
        qpos = lax.broadcasted_iota(_np.int32, (T, S), 0)
        kpos = lax.broadcasted_iota(_np.int32, (T, S), 1)
        if is_causal:
            keep = keep & (kpos <= qpos)
        if window is not None:
            left, right = window
            keep = keep & (qpos <= kpos + left) & (qpos >= kpos - right)
        if q_len is not None:
            keep = keep & (jnp.arange(T)[None, :, None] < q_len[:, None, None])[:, None, None]
        if kv_len is not None:
            keep = keep & (jnp.arange(S)[None, None, :] < kv_len[:, None, None])[:, None, None]
        logits = jnp.where(keep, logits, _large_negative(logits_dtype))
    logits = logits.astype(_np.float32)
    probs = softmax(logits, axis=-1).astype(get_aval(k).dtype)
    out = jnp.einsum("bkgts,bskh->btkgh", probs, v)
    if q_len is not None:
        out = out * (jnp.arange(T)[None, :] < q_len[:, None]).astype(get_aval(out).dtype)[:, :, None, None, None]
    out = jnp.reshape(out, (B, T, N, H))
    if return_residual:
        lse = logsumexp(logits, axis=-1).astype(get_aval(k).dtype)       # (B, K, G, T)
        lse = jnp.reshape(jnp.transpose(lse, (0, 3, 1, 2)), (B, T, N))
        return out, lax.stop_gradient(lse)
    return out


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """Scaled dot-product attention ``softmax(q·kᵀ · scale + bias, masked) · v``.

    ``query`` is (B, T, N, H), ``key``/``value`` (B, S, K, H) with ``N`` a multiple of ``K`` (grouped-query
    attention); leading dimensions may be dropped (3-D, 2-D inputs get size-1 ones and the result has the
    query's shape). ``bias`` (any dtype) and ``mask`` (bool, True = keep) broadcast as (B|1, N|1, T|1, S|1);
    ``is_causal`` keeps keys ``s <= t``; ``local_window_size`` (``w`` or ``(left, right)``) keeps
    ``t - left <= s <= t + right``; ``query_seq_lengths`` / ``key_value_seq_lengths`` (int32, shape (B,))
    mask padding (rows past a query length are zeroed). ``scale`` defaults to ``1/sqrt(H)``. Logits are
    accumulated in ``promote_types(query.dtype, float32)``, the softmax is taken in float32 and cast to the
    key's dtype. With ``return_residual`` also returns the logsumexp of each row, (B, T, N). Raises
    ``ValueError`` for mismatched shapes or dtypes and for an ``implementation`` other than None/'xla'
    ('cudnn' needs an NVIDIA GPU). Mirrors ``jax.nn.dot_product_attention``."""
    out_shape = jnp.asarray(query).shape
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = _ensure_4d(bias) if bias is not None else None
    mask = _ensure_4d(mask) if mask is not None else None
    q_len = jnp.asarray(query_seq_lengths) if query_seq_lengths is not None else None
    kv_len = jnp.asarray(key_value_seq_lengths) if key_value_seq_lengths is not None else None
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    B, S, K, H = k.shape
    kdt = get_aval(k).dtype
    _check(v, [B, S, K, H], kdt, "value")
    _check(q, [B, -1, -1, H], kdt, "query")
    _check(mask, [-1] * 4, _np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_len, [B], _np.dtype("int32"), "query_seq_lengths")
    _check(kv_len, [B], _np.dtype("int32"), "key_value_seq_lengths")
    if q.shape[-2] % K != 0:
        raise ValueError("The number of query heads must be a multiple of key/value heads, but got "
                         f"{q.shape[-2]} vs {K}")
    scale_val = (1.0 / _np.sqrt(H)) if scale is None else scale
    if implementation == "cudnn":
        raise ValueError("dot_product_attention(implementation='cudnn') needs an NVIDIA GPU with cuDNN; "
                         "cranax has the 'xla' formula only (implementation=None or 'xla')")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out = _attention(q, k, v, bias, mask, is_causal, scale_val, q_len, kv_len, local_window_size,
                     return_residual)
    if return_residual:
        out, res = out
        return jnp.reshape(out, out_shape), jnp.reshape(res, out_shape[:-1])
    return jnp.reshape(out, out_shape)


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=_np.float32):
    """Block-scaled batched matmul: ``out[b, m, n] = Σ_k lhs[b,m,k]·ls[b,m,k//bl] · rhs[b,n,k]·rs[b,n,k//br]``
    with ``lhs`` (B, M, K), ``rhs`` (B, N, K) and scales (B, M, K/bl), (B, N, K/br); the product is taken
    in float32 and returned in ``preferred_element_type``. Raises ``ValueError`` for inputs that are not
    3-D or whose batch/contraction/scale dimensions disagree. Mirrors ``jax.nn.scaled_matmul`` (which JAX
    runs only through cuDNN; here it is the same arithmetic on any backend)."""
    a, b, sa, sb = (jnp.asarray(t) for t in (lhs, rhs, lhs_scales, rhs_scales))
    if not all(t.ndim == 3 for t in (a, b, sa, sb)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    (Ba, Ma, Ka), (Bb, Nb, Kb) = a.shape, b.shape
    if Ka != Kb or Ba != Bb:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) and contract (K) "
                         f"dimensions, but got shapes {a.shape} and {b.shape}")
    (Bas, Mas, Kas), (Bbs, Nbs, Kbs) = sa.shape, sb.shape
    if Kas != Kbs or Bas != Bbs:
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and contract (K) "
                         f"dimensions, but got shapes {sa.shape} and {sb.shape}")
    if Mas != Ma or Nbs != Nb:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions of inputs, but got "
                         f"shapes a: {a.shape}, b: {b.shape}, a_scales: {sa.shape}, b_scales: {sb.shape}")
    if Kas == 0 or Ka % Kas:
        raise ValueError(f"scaled_matmul: the contract dimension {Ka} is not a multiple of the scales' {Kas}")
    f32 = _np.float32

    def dequant(x, s):
        return x.astype(f32) * jnp.repeat(s.astype(f32), Ka // Kas, axis=2)

    out = jnp.einsum("bmk,bnk->bmn", dequant(a, sa), dequant(b, sb), preferred_element_type=f32)
    return out.astype(_dtypes.canonicalize_dtype(preferred_element_type))


@_dc.dataclass
class BlockScaleConfig:
    """How ``scaled_dot_general`` quantizes an operand: the mode, the block length, the dtypes of the
    data and of the per-block scales, an optional global scale. Mirrors JAX's ``BlockScaleConfig``."""
    mode: str
    block_size: int
    data_type: object
    scale_type: object
    global_scale: object
    infer_only: bool


def get_scaled_dot_general_config(mode, global_scale=None):
    """The ``BlockScaleConfig`` of ``'nvfp4'`` (blocks of 16, float4_e2m1fn data, float8_e4m3fn scales,
    a global scale defaulting to ones((1,))) or ``'mxfp8'`` (blocks of 32, float8_e4m3fn data,
    float8_e8m0fnu scales); another mode raises ``ValueError``. The dtypes are given by name while cranax
    has no float4/float8 storage. Mirrors ``jax.nn.get_scaled_dot_general_config``."""
    if mode == "nvfp4":
        one = jnp.ones((1,), dtype=_np.float32)
        return BlockScaleConfig("nvfp4", 16, "float4_e2m1fn", "float8_e4m3fn",
                                one if global_scale is None else global_scale, False)
    if mode == "mxfp8":
        return BlockScaleConfig("mxfp8", 32, "float8_e4m3fn", "float8_e8m0fnu", None, False)
    raise ValueError(f"Unsupported mode: {mode}")


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=_np.float32, configs=None,
                       implementation=None):
    """``lax.dot_general`` after block-scaled quantization of both operands as ``configs`` says; with
    ``configs=None`` it is exactly ``lax.dot_general(lhs, rhs, dimension_numbers,
    preferred_element_type=...)``. Quantizing (``configs`` given) needs float8/float4 storage, which cranax
    lacks: ``NotImplementedError`` (JAX's CPU backend raises it too). Mirrors ``jax.nn.scaled_dot_general``."""
    if implementation is not None:

        _warnings.warn("Backend selector, now ignored. The system chooses the backend automatically.",
                      DeprecationWarning)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers, preferred_element_type=preferred_element_type)
    raise NotImplementedError("scaled_dot_general with block-scale configs needs float8/float4 dtypes, "
                              "which cranax does not have yet (JAX runs it through cuDNN only)")
