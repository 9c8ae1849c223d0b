"""Rule table: random_gamma_grad (fxad.rules.random.gamma_grad), dx/da of gamma samples
(alpha, x) and its derivatives of order 1 and 2 in alpha."""
from fxad.rules import ops

from ..common import Row, floats, row_tests

TABLE = [Row("random_gamma_grad", lambda a, x, k=k: ops.random_gamma_grad(a, x, k), s,
             floats(0.5, 6))
         for k, s in [(0, [(3,), (3,)]), (0, [(2, 3), ()]), (1, [(3,), (3,)]), (2, [(), ()])]]
test_row = row_tests(TABLE)
