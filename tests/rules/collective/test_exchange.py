"""all_gather, psum_scatter, all_to_all, ppermute (pshuffle, pswapaxes) under
vmap(axis_name=...): the table's cases (tests/rules/collective/_cases.py)."""
from ._cases import CASES, REDUCTIONS, case_tests

test_case = case_tests([c for c in CASES if c[0] not in REDUCTIONS])
