"""Dropout with fxad.random keys: the mask is a function of the key, so it is the same eagerly,
under jit (the key is an input of the staged program: a new key gives a new mask on every
call) and under vmap over a batch of keys."""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as fnp
from .. import random
from ..core import Tracer
from ..errors import FxadValueError


def dropout(key, x, rate, deterministic=False, broadcast_dims=()):
    """Inverted dropout (as Flax's nn.Dropout): each element is kept with probability
    1 - rate and scaled by 1 / (1 - rate), so the expectation is x; `deterministic=True`
    (evaluation) returns x. `broadcast_dims`: axes sharing one mask value (e.g. the sequence
    axis, for dropping whole channels)."""
    if deterministic:
        return x
    if not isinstance(rate, Tracer):
        rate = float(rate)
        if not 0.0 <= rate <= 1.0:
            raise FxadValueError(f"dropout: rate must be in [0, 1], got {rate}")
        if rate == 0.0:
            return x
        if rate == 1.0:  # everything dropped (1/(1-rate) would be inf * 0)
            return lax.mul(x, 0)
    keep_prob = 1.0 - rate  # a Python float when rate is one: x's dtype is kept
    shape = tuple(fnp.shape(x))
    mask_shape = tuple(1 if i in {d % len(shape) for d in broadcast_dims} else s
                       for i, s in enumerate(shape))
    keep = fnp.broadcast_to(random.bernoulli(key, keep_prob, mask_shape), shape)
    return lax.select(keep, lax.div(x, keep_prob), np.zeros((), fnp.result_type(x)))
