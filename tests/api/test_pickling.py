"""What fxad's transformations return pickles (cloudpickle, as Dask sends functions): the
unpickled function computes the same values. Traced values refuse, naming the fix."""
import pickle

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad import lax

cloudpickle = pytest.importorskip("cloudpickle")

X = np.linspace(0.1, 1.0, 3)


def _f(x):
    return fnp.sin(x) * 2.0 + x ** 2


def _roundtrip(obj):
    return pickle.loads(cloudpickle.dumps(obj))


@fxad.custom_vjp
def _clipped(x):
    return x * 2.0


_clipped.defvjp(lambda x: (x * 2.0, x), lambda r, g: (np.clip(g * r, -0.5, 0.5),))


def _made():
    jitted = fxad.jit(_f)
    jitted(X)  # with its caches filled
    pm = fxad.pmap(lambda x: lax.psum(x, "i") * x, "i")
    pm(np.ones((2, 3)))
    return [
        ("jit", jitted, (X,)),
        ("grad", fxad.grad(lambda x: _f(x).sum()), (X,)),
        ("jit_grad", fxad.jit(fxad.grad(lambda x: _f(x).sum())), (X,)),
        ("vmap", fxad.vmap(_f), (np.stack([X, X]),)),
        ("hessian", fxad.hessian(lambda x: _f(x).sum()), (X,)),
        ("vjp_function", fxad.vjp(_f, X)[1], (X,)),
        ("linearized", fxad.linearize(_f, X)[1], (X,)),
        ("custom_vjp", _clipped, (X,)),
        ("grad_custom_vjp", fxad.grad(lambda x: _clipped(x).sum()), (X,)),
        ("checkpoint", fxad.checkpoint(_f), (X,)),
        ("pmap", pm, (np.ones((2, 3)),)),
        ("make_jaxpr", fxad.make_jaxpr(_f)(X), (X,)),
    ]


@pytest.mark.parametrize("name,fn,args", _made(), ids=[m[0] for m in _made()])
def test_returned_functions_pickle(name, fn, args):
    want = fxad.tree_util.tree_leaves(fn(*args))
    got = fxad.tree_util.tree_leaves(_roundtrip(fn)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_primitives_stay_singletons():
    from fxad.rules.collective.reductions import psum_p
    from fxad.rules.elementwise.transcendental import sin_p
    assert pickle.loads(pickle.dumps(sin_p)) is sin_p
    assert pickle.loads(pickle.dumps(psum_p)) is psum_p


def test_tracers_refuse():
    def f(x):
        with pytest.raises(fxad.errors.FxadTypeError, match="cannot be pickled"):
            cloudpickle.dumps(x)
        return x.sum()
    fxad.grad(f)(X)
