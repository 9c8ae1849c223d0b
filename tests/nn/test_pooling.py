"""fxad.nn pooling (flax.linen's signatures, NHWC): values against the windowed-reduction loop
reference and PyTorch, gradients against PyTorch (max pool: to the arg-max), derivatives to
second order, inputs without a batch axis, vmap and jit."""
import numpy as np
import pytest

import fxad
from fxad import nn
from fxad.errors import FxadValueError

from ..rules.common import grid, run_row
from ..rules.reduction.test_windowed import reduce_window_reference


def _x(shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) - n / 2) / n * 4.0  # distinct: no ties


CASES = [((2, 2), None, "VALID"), ((2, 2), (2, 2), "VALID"), ((3, 3), (2, 1), "SAME"),
         ((2, 3), (1, 2), ((1, 0), (1, 1)))]


def _full(window, strides, padding):
    strides = strides or (1, 1)
    pads = padding if isinstance(padding, str) else ((0, 0),) + tuple(padding) + ((0, 0),)
    return dict(window_dimensions=(1,) + window + (1,), window_strides=(1,) + strides + (1,),
                padding=pads)


@pytest.mark.parametrize("window,strides,padding", CASES)
def test_values_match_the_reference(window, strides, padding):
    x = _x((2, 6, 7, 3))
    kw = _full(window, strides, padding)
    np.testing.assert_array_equal(nn.max_pool(x, window, strides, padding),
                                  reduce_window_reference(x, -np.inf, np.maximum, **kw))
    np.testing.assert_array_equal(nn.min_pool(x, window, strides, padding),
                                  reduce_window_reference(x, np.inf, np.minimum, **kw))
    total = reduce_window_reference(x, 0.0, np.add, **kw)
    np.testing.assert_allclose(nn.avg_pool(x, window, strides, padding),
                               total / np.prod(window), rtol=1e-14)
    count = reduce_window_reference(np.ones_like(x), 0.0, np.add, **kw)
    np.testing.assert_allclose(nn.avg_pool(x, window, strides, padding,
                                           count_include_pad=False), total / count, rtol=1e-14)
    np.testing.assert_allclose(nn.pool(x, 1.5, fxad.lax.add, window, strides, padding),
                               total + 1.5, rtol=1e-14)
    # no batch axis: the same numbers
    np.testing.assert_array_equal(nn.max_pool(x[0], window, strides, padding),
                                  nn.max_pool(x, window, strides, padding)[0])


@pytest.mark.parametrize("window,strides,padding", CASES[:2] + [((3, 3), (1, 1), "SAME")])
def test_values_and_gradients_match_torch(window, strides, padding):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = _x((2, 6, 7, 3), seed=1)
    pad = 0 if padding == "VALID" else tuple(k // 2 for k in window)  # 3x3 'SAME' = 1 each side
    xt = torch.tensor(np.moveaxis(x, 3, 1), requires_grad=True)
    for ours, theirs in [(nn.max_pool, lambda t: F.max_pool2d(t, window, strides or 1, pad)),
                         (nn.avg_pool, lambda t: F.avg_pool2d(t, window, strides or 1, pad,
                                                              count_include_pad=True))]:
        got = ours(x, window, strides, padding)
        want = theirs(xt)
        np.testing.assert_allclose(got, np.moveaxis(want.detach().numpy(), 1, 3), rtol=1e-14)
        c = _x(got.shape, seed=2)
        g = fxad.grad(lambda x: (ours(x, window, strides, padding) * c).sum())(x)
        gt, = torch.autograd.grad((want * torch.tensor(np.moveaxis(c, 3, 1))).sum(), xt)
        np.testing.assert_allclose(g, np.moveaxis(gt.numpy(), 1, 3), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("pool", [nn.max_pool, nn.min_pool, nn.avg_pool])
def test_derivatives_to_second_order(pool):
    run_row(lambda x: pool(x, (2, 2), (1, 2), "SAME") ** 2, [(1, 4, 5, 2)], grid(-2, 2, 0.01),
            unique=True)


def test_vmap_and_jit():
    xs = np.stack([_x((4, 5, 2), seed=s) for s in range(3)])  # batches of unbatched images
    for pool in (nn.max_pool, nn.avg_pool):
        f = lambda x: pool(x, (2, 2), (2, 1), "SAME")
        want = np.stack([f(x) for x in xs])
        np.testing.assert_array_equal(fxad.vmap(f)(xs), want)
        np.testing.assert_array_equal(fxad.jit(f)(xs[0]), want[0])
        g = fxad.grad(lambda x: (f(x) ** 2).sum())
        np.testing.assert_allclose(fxad.jit(fxad.vmap(g))(xs), np.stack([g(x) for x in xs]),
                                   rtol=1e-14)


@pytest.mark.parametrize("call,match", [
    (lambda x: nn.max_pool(x, (2, 2, 2, 2)), "rank"),
    (lambda x: nn.max_pool(x, (2, 2), strides=(1,)), "strides"),
    (lambda x: nn.avg_pool(x, (2, 2), padding=((1, 1),)), "padding"),
    (lambda x: nn.avg_pool(x, (2, 2), padding="FULL"), "padding"),
])
def test_bad_arguments_raise_clear_errors(call, match):
    with pytest.raises(FxadValueError, match=match):
        call(_x((2, 4, 4, 1)))
