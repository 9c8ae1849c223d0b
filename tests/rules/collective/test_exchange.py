"""all_gather, psum_scatter, all_to_all, ppermute (pshuffle, pswapaxes) under
vmap(axis_name=...): the table's cases (tests/rules/collective/_cases.py)."""
import pytest

from ._cases import (CASES, REDUCTIONS, check_batching, check_derivatives, check_rules_inside,
                     check_value)

MINE = [c for c in CASES if c[0] not in REDUCTIONS]
_IDS = [c[0] for c in MINE]


@pytest.mark.parametrize("name,f,ref,shape,n", MINE, ids=_IDS)
def test_value_against_loop(name, f, ref, shape, n):
    check_value(f, ref, shape, n)


@pytest.mark.parametrize("name,f,ref,shape,n", MINE, ids=_IDS)
def test_derivatives_of_the_map(name, f, ref, shape, n):
    check_derivatives(f, ref, shape, n)


@pytest.mark.parametrize("name,f,ref,shape,n", MINE, ids=_IDS)
def test_rules_inside_the_map(name, f, ref, shape, n):
    check_rules_inside(f, ref, shape, n)


@pytest.mark.parametrize("name,f,ref,shape,n", MINE, ids=_IDS)
def test_batching_under_other_axes(name, f, ref, shape, n):
    check_batching(f, ref, shape, n)
