"""Rule table: random_gamma (fxad.rules.random.gamma), the gamma sampler: its samples under
vmap and jit (bit for bit). Its derivative is the implicit one (the quantile's, at a fixed
CDF value), which finite differences of the sampler at a fixed key do not see:
tests/random/test_gradients.py checks it against mpmath and SciPy."""
from fxad import random as fr

from ..common import Row, floats, row_tests
from .traced_keys import key_of

TABLE = [Row("random_gamma", lambda a: fr.gamma(key_of(a), a + 1.0, a.shape), [s],
             floats(0.5, 4), grad=False, rtol=0, atol=0) for s in [(), (3,), (2, 3)]]
test_row = row_tests(TABLE)
