"""`dot_product_attention` with jax.nn's signature and semantics: softmax(q k^T * scale +
bias, masked) v over query/key/value of shape [B, T, N, H] / [B, S, K, H] (or without B),
with grouped-query heads (N a multiple of K: each key/value head serves N / K query heads,
computed as one grouped contraction, never by repeating the keys).

Masks (a boolean `mask`, `is_causal`, `local_window_size`, the sequence lengths) replace
logits by JAX's large negative number (-0.7 x float32's max), so a fully masked row attends
uniformly, as in JAX. The softmax is shifted by the row maximum and divides by a guarded sum:
huge logits stay finite, and a row whose logits are all -inf (a -inf bias) gives zeros with
zero gradients instead of JAX's NaN. The softmax is a primitive whose backward pass is one
equation, p * (ct - sum(ct * p)) (fxad/rules/reduction/softmax.py); it stays
differentiable. Logits and softmax are computed in the query's precision promoted to at
least float32 (JAX always uses float32 for the softmax, also for float64 inputs).
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..core import get_aval
from ..errors import FxadTypeError, FxadValueError
from ..rules.reduction.reduce import logsumexp as _logsumexp
from ..rules.reduction.softmax import softmax as _softmax

__all__ = ["dot_product_attention"]

_LARGE_NEGATIVE = -0.7 * float(np.finfo(np.float32).max)


def _to_4d(t):
    t = fnp.asarray(t)
    nd = len(get_aval(t).shape)
    if nd > 4:
        raise FxadValueError(f"dot_product_attention: arrays have at most 4 dims, got {nd}")
    return fnp.reshape(t, (1,) * (4 - nd) + get_aval(t).shape) if nd < 4 else t


def _grouped(t, name, b, n, k, t_len, s_len):
    """A [B|1, N|1, T|1, S|1] bias or mask as [B|1, K|1, G|1, T|1, S|1]."""
    shape = get_aval(t).shape
    for got, want, what in zip(shape, (b, n, t_len, s_len), "BNTS"):
        if got not in (1, want):
            raise FxadValueError(f"dot_product_attention: {name} of shape {shape} does not "
                                 f"broadcast to [B, N, T, S] = {(b, n, t_len, s_len)} (dim "
                                 f"{what})")
    if shape[1] == 1:
        return fnp.reshape(t, (shape[0], 1, 1) + shape[2:])
    return fnp.reshape(t, (shape[0], k, n // k) + shape[2:])


def _combined_mask(mask, is_causal, local_window_size, q_len, kv_len, t_len, s_len):
    """The boolean mask over [B, K, G, T, S] (broadcastable), or None for no masking."""
    pieces = []
    if mask is not None:
        pieces.append(mask)
    qi, ki = np.arange(t_len)[:, None], np.arange(s_len)[None, :]
    static = np.ones((t_len, s_len), bool)
    if is_causal:
        static &= ki <= qi
    if local_window_size is not None:
        left, right = local_window_size
        static &= (ki >= qi - left) & (ki <= qi + right)
    if is_causal or local_window_size is not None:
        pieces.append(static)
    if q_len is not None:  # [B] -> [B, 1, 1, T, 1]
        pieces.append(lax.lt(np.arange(t_len)[None, :, None],
                             fnp.reshape(q_len, (-1, 1, 1)))[:, None, None])
    if kv_len is not None:  # [B] -> [B, 1, 1, 1, S]
        pieces.append(lax.lt(np.arange(s_len)[None, None, :],
                             fnp.reshape(kv_len, (-1, 1, 1)))[:, None, None])
    if not pieces:
        return None
    out = pieces[0]
    for p in pieces[1:]:
        out = fnp.logical_and(out, p)
    return out


def _seq_lengths(lengths, b, name):
    if lengths is None:
        return None
    lengths = fnp.asarray(lengths)
    a = get_aval(lengths)
    if a.dtype.kind not in "iu" or a.shape != (b,):
        raise FxadValueError(f"dot_product_attention: {name} must be integers of shape "
                             f"[B] = ({b},), got {a.dtype} {a.shape}")
    return lengths


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None, return_residual=False):
    """Scaled dot-product attention (see the module docstring). Returns [B, T, N, H] (the
    query's shape); with `return_residual`, also the log-sum-exp of each softmax row,
    [B, T, N], without gradient."""
    if implementation not in (None, "xla"):
        raise FxadValueError(f"dot_product_attention: implementation {implementation!r} is "
                             "not available in fxad (it has one NumPy implementation); pass "
                             "None")
    out_shape = get_aval(query).shape
    q, k, v = _to_4d(query), _to_4d(key), _to_4d(value)
    (b, t_len, n, h), (bk, s_len, kh, hk) = get_aval(q).shape, get_aval(k).shape
    if get_aval(v).shape != (bk, s_len, kh, hk):
        raise FxadValueError(f"dot_product_attention: value of shape {get_aval(v).shape} must "
                             f"have the key's shape {(bk, s_len, kh, hk)}")
    if bk != b or hk != h:
        raise FxadValueError(f"dot_product_attention: query [B, T, N, H] = {(b, t_len, n, h)} "
                             f"and key [B, S, K, H] = {(bk, s_len, kh, hk)} must agree on B "
                             "and H")
    if n % kh:
        raise FxadValueError(f"dot_product_attention: the {n} query heads must be a multiple "
                             f"of the {kh} key/value heads")
    g = n // kh
    if isinstance(local_window_size, (int, np.integer)):
        local_window_size = (int(local_window_size), int(local_window_size))
    if mask is not None:
        mask = _to_4d(mask)
        if get_aval(mask).dtype != np.bool_:
            raise FxadTypeError("dot_product_attention: mask must be boolean (True = attend)")
        mask = _grouped(mask, "mask", b, n, kh, t_len, s_len)
    q_len = _seq_lengths(query_seq_lengths, b, "query_seq_lengths")
    kv_len = _seq_lengths(key_value_seq_lengths, b, "key_value_seq_lengths")

    dt = np.result_type(get_aval(q).dtype, np.float32)
    scale = 1.0 / float(np.sqrt(h)) if scale is None else scale
    q5 = fnp.reshape(lax.convert_element_type(q, dt), (b, t_len, kh, g, h))
    logits = fnp.einsum("btkgh,bskh->bkgts", lax.mul(q5, scale), lax.convert_element_type(k, dt))
    if bias is not None:
        logits = lax.add(logits, _grouped(_to_4d(bias), "bias", b, n, kh, t_len, s_len))
    keep = _combined_mask(mask, is_causal, local_window_size, q_len, kv_len, t_len, s_len)
    if keep is not None:
        logits = lax.select(keep, logits, _LARGE_NEGATIVE)
    probs = lax.convert_element_type(_softmax(logits), get_aval(v).dtype)
    enc = fnp.einsum("bkgts,bskh->btkgh", probs, v)
    enc = fnp.reshape(enc, (b, t_len, n, h))
    if q_len is not None:  # padded query positions give zeros
        valid = lax.lt(np.arange(t_len)[None, :], fnp.reshape(q_len, (-1, 1)))
        enc = lax.mul(enc, lax.convert_element_type(valid, get_aval(enc).dtype)[:, :, None, None])
    enc = fnp.reshape(enc, out_shape)
    if not return_residual:
        return enc
    lse = _logsumexp(lax.stop_gradient(logits), (4,))  # -inf for a row of -inf
    lse = fnp.reshape(fnp.transpose(fnp.reshape(lse, (b, n, t_len)), (0, 2, 1)), (b, t_len, n))
    lse = lax.convert_element_type(lse, get_aval(v).dtype)
    return enc, lax.stop_gradient(fnp.reshape(lse, out_shape[:-1]))
