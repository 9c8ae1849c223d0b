"""scipy.cluster.vq.vq: each observation's nearest code (Euclidean) and its distance; the
distance is differentiable in the observations and the code book."""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from ...core import Tracer
from ...errors import FxadValueError



def vq(obs, code_book, check_finite=True):
    """(codes, distances): for each row of `obs` (M x N, or M values) the index of the nearest
    row of `code_book` (K x N, or K values) by Euclidean distance, the first on ties, and
    that distance, with SciPy's dtypes."""
    obs, code_book = fnp.asarray(obs), fnp.asarray(code_book)
    if fnp.ndim(obs) not in (1, 2) or fnp.ndim(code_book) != fnp.ndim(obs):
        raise FxadValueError(f"vq: obs and code_book must both be 1-d or both 2-d, got "
                             f"shapes {fnp.shape(obs)} and {fnp.shape(code_book)}")
    if fnp.ndim(obs) == 2 and fnp.shape(obs)[1] != fnp.shape(code_book)[1]:
        raise FxadValueError(f"vq: observations have {fnp.shape(obs)[1]} features, the code "
                             f"book {fnp.shape(code_book)[1]}")
    if check_finite:
        for a, what in ((obs, "obs"), (code_book, "code_book")):
            if not isinstance(a, Tracer) and not np.all(np.isfinite(np.asarray(a))):
                raise FxadValueError(f"vq: {what} contains infs or NaNs (check_finite=False "
                                     "skips the check)")
    given = fnp.result_type(obs, code_book)
    # SciPy's compiled path (float inputs) gives int32 codes, its fallback (others) intp
    code_dtype = np.int32 if given.kind == "f" else np.intp
    dt = np.result_type(given, np.float32 if given.kind == "f" else np.float64)
    obs, code_book = fnp.astype(obs, dt), fnp.astype(code_book, dt)
    if fnp.ndim(obs) == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    sq = fnp.sum((obs[:, None, :] - code_book[None, :, :]) ** 2, axis=-1)  # (M, K)
    code = fnp.argmin(sq, axis=1)
    dist = fnp.sqrt(fnp.take_along_axis(sq, code[:, None], axis=1)[:, 0])
    return fnp.astype(code, code_dtype), dist


__all__ = ["vq"]
