"""The compiler hints that are identities in one process: optimization_barrier and
with_sharding_constraint (values, derivatives, jit, and the check of the shardings)."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax
from fxad.errors import FxadTypeError
from fxad.sharding import NamedSharding, PartitionSpec as P, make_mesh

X = np.arange(1.0, 25.0).reshape(2, 3, 4) / 7.0


def test_compiler_hints_are_identities():
    tree = {"a": X, "b": (np.ones(2), 3.0)}
    assert lax.optimization_barrier(tree) is tree
    np.testing.assert_array_equal(fxad.grad(lambda x: fnp.sum(lax.optimization_barrier(
        (x * x, 1.0))[0]))(X), 2 * X)
    mesh = make_mesh((1,), ("d",))
    for s in [P("d"), NamedSharding(mesh, P(None, "d")), None, {"a": P(), "b": (None, None)}]:
        assert lax.with_sharding_constraint(tree, s) is tree
    np.testing.assert_array_equal(fxad.jit(lambda x: lax.with_sharding_constraint(
        x * 2, P("d")))(X), 2 * X)
    with pytest.raises(FxadTypeError, match="PartitionSpec"):
        lax.with_sharding_constraint(X, "d")
