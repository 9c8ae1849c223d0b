"""Tree functions with JAX's keywords (is_leaf everywhere, reduce's initializer=, path-aware
is_leaf), and pytree nodes whose auxiliary data is unhashable (compared by equality, as in
JAX) through every transformation, with jit's cache keyed correctly."""
import collections
import dataclasses
import functools
import gc
import inspect
import weakref

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
import fxad.tree as ftree
from fxad import lax
from fxad import tree_util as tu

P = collections.namedtuple("P", "x y")
TREE = {"a": (1.0, [2.0, 3.0]), "b": P(4.0, 5.0)}


def _is_pair_list(x):
    return isinstance(x, list) and len(x) == 2


# --- is_leaf wherever JAX takes it -----------------------------------------------------------

@pytest.mark.parametrize("fn, expected", [
    (lambda: ftree.leaves(TREE, is_leaf=_is_pair_list), [1.0, [2.0, 3.0], 4.0, 5.0]),
    (lambda: ftree.flatten(TREE, is_leaf=_is_pair_list)[0], [1.0, [2.0, 3.0], 4.0, 5.0]),
    (lambda: ftree.structure(TREE, is_leaf=_is_pair_list).num_leaves, 4),
    (lambda: ftree.map(lambda v: v if isinstance(v, float) else len(v), TREE,
                       is_leaf=_is_pair_list)["a"], (1.0, 2)),
    (lambda: tu.tree_map(lambda v, w: (v, w), {"a": [1, 2]}, {"a": [3, 4]},
                         is_leaf=_is_pair_list), {"a": ([1, 2], [3, 4])}),
    (lambda: ftree.reduce(lambda acc, v: acc + [v], TREE, initializer=[],
                          is_leaf=_is_pair_list), [1.0, [2.0, 3.0], 4.0, 5.0]),
    (lambda: ftree.all({"a": [0, 0], "b": 1}, is_leaf=_is_pair_list), True),
    (lambda: ftree.all({"a": [0, 1], "b": 1}), False),
    (lambda: [v for _, v in ftree.leaves_with_path(TREE, is_leaf=_is_pair_list)],
     [1.0, [2.0, 3.0], 4.0, 5.0]),
    (lambda: ftree.flatten_with_path(TREE, is_leaf=_is_pair_list)[1],
     ftree.structure(TREE, is_leaf=_is_pair_list)),
    (lambda: ftree.map_with_path(lambda p, v: tu.keystr(p), {"a": [1, 2]},
                                 is_leaf=_is_pair_list), {"a": "['a']"}),
    (lambda: ftree.broadcast({"a": [0, 1]}, {"a": [[1, 2], [3]]}, is_leaf=_is_pair_list),
     {"a": [[[0, 1], [0, 1]], [[0, 1]]]}),
    (lambda: tu.all_leaves([[1, 2]], is_leaf=_is_pair_list), True),
    (lambda: ftree.reduce_associative(lambda a, b: a + b, {"a": [[1], [2]], "b": [[3], [4]]},
                                      is_leaf=_is_pair_list), [[1], [2], [3], [4]]),
])
def test_is_leaf_keyword(fn, expected):
    assert fn() == expected


def test_reduce_initializer_and_identity():
    add = lambda a, b: a + b  # noqa: E731
    assert ftree.reduce(add, [1, 2, 3]) == 6
    assert ftree.reduce(add, [1, 2, 3], 10) == 16                    # positional, as before
    assert ftree.reduce(add, [1, 2, 3], initializer=10) == 16
    assert ftree.reduce(add, [], initializer=7) == 7
    assert ftree.reduce(lambda a, b: b, [], initializer=None) is None  # None is a value
    with pytest.raises(TypeError):
        ftree.reduce(add, [])                                       # empty, no initializer
    assert ftree.reduce_associative(add, [], identity=None) is None
    assert ftree.reduce_associative(add, [], identity=0) == 0
    with pytest.raises(ValueError, match="identity"):
        ftree.reduce_associative(add, [])
    assert tu.tree_reduce_associative(add, [[1, 2], (3,)]) == 6
    with pytest.raises(TypeError):
        ftree.all([1], lambda x: False)                             # is_leaf is keyword-only


def test_is_leaf_takes_path():
    t = {"keep": [1, 2], "split": [3, 4]}

    def stop_at_keep(path, x):
        return len(path) == 1 and path[0] == tu.DictKey("keep")
    pairs, td = ftree.flatten_with_path(t, is_leaf=stop_at_keep, is_leaf_takes_path=True)
    assert [(tu.keystr(p), v) for p, v in pairs] == [
        ("['keep']", [1, 2]), ("['split'][0]", 3), ("['split'][1]", 4)]
    assert td.unflatten([v for _, v in pairs]) == t and td.num_leaves == 3
    assert len(ftree.leaves_with_path(t, stop_at_keep, True)) == 3
    out = ftree.map_with_path(lambda p, v: len(p), t, is_leaf=stop_at_keep,
                              is_leaf_takes_path=True)
    assert out == {"keep": 1, "split": [2, 2]}
    seen = []
    ftree.flatten_with_path(P(1, (2,)), is_leaf=lambda p, x: seen.append(p) or False,
                            is_leaf_takes_path=True)
    assert [tu.keystr(p) for p in seen] == ["", ".x", ".y", ".y[0]"]  # every node, root too
    assert ftree.flatten_with_path([1], is_leaf=lambda p, x: p == (),
                                   is_leaf_takes_path=True)[0] == [((), [1])]


class Keyed:
    def __init__(self, a, b):
        self.a, self.b = a, b


tu.register_pytree_node(Keyed, lambda k: ((k.a, k.b), None), lambda _, ch: Keyed(*ch),
                        lambda k: (((tu.GetAttrKey("a"), k.a), (tu.GetAttrKey("b"), k.b)),
                                   None))


def test_register_with_keys_func_and_one_level_helpers():
    assert [tu.keystr(p) for p, _ in ftree.leaves_with_path(Keyed(1, [2]))] == [".a", ".b[0]"]
    children, aux = tu.flatten_one_level_with_keys({"y": 1, "x": 2})
    assert children == [(tu.DictKey("x"), 2), (tu.DictKey("y"), 1)] and aux == ("x", "y")
    assert tu.flatten_one_level_with_keys(Keyed(1, 2))[0][1] == (tu.GetAttrKey("b"), 2)
    with pytest.raises(ValueError, match="leaf"):
        tu.flatten_one_level_with_keys(1.0)
    for typ, node in [(dict, True), (P, True), (Keyed, True), (list, True),
                      (type(None), True), (int, False), (np.ndarray, False), (Box, True)]:
        assert tu.is_tree_node(typ) is node, typ
    assert tu.KeyPath[0] is tu.KeyEntry or tu.KeyPath  # JAX's typing aliases exist


def test_static_field_for_register_dataclass():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        op: str = ftree.static(default="add")
    leaves, td = ftree.flatten(Op(np.ones(2)))
    assert len(leaves) == 1 and td.unflatten([3.0]) == Op(3.0, "add")
    assert ftree.structure(Op(1.0, "mul")) != td
    field = dataclasses.fields(Op)[1]
    assert field.metadata["static"] is True and field.default == "add"


# --- auxiliary data that cannot be hashed -------------------------------------------------------

@dataclasses.dataclass
class Box:
    x: object
    meta: dict


tu.register_pytree_node(Box, lambda b: ((b.x,), b.meta), lambda meta, ch: Box(ch[0], meta))


def _box(x, scale=2.0):
    return Box(np.asarray(x, float), {"scale": scale, "names": ["w"]})


def test_treedef_with_dict_aux_is_compared_by_equality():
    t1, t2 = ftree.structure(_box([1.0])), ftree.structure(_box([5.0]))
    assert t1 == t2 and hash(t1) == hash(t2) and {t1: 1}[t2] == 1
    t3 = ftree.structure(_box([1.0], scale=3.0))
    assert t1 != t3
    assert len({t1, t2, t3}) == 2
    assert ftree.map(lambda a, b: a + b, _box([1.0]), _box([2.0])).x == 3.0
    with pytest.raises(ValueError, match="metadata differs"):
        ftree.map(lambda a, b: a + b, _box([1.0]), _box([2.0], scale=3.0))
    # Data whose == has no single truth value (arrays inside) equals only itself.
    arr = {"w": np.arange(3.0)}
    a1 = ftree.structure(Box(1.0, arr))
    assert a1 == ftree.structure(Box(2.0, arr))
    assert a1 != ftree.structure(Box(1.0, {"w": np.arange(3.0)}))


def _loss(b):
    return fnp.sum(fnp.sin(b.x) * b.x) * b.meta["scale"]


def _grad_expected(b):
    return b.meta["scale"] * (np.cos(b.x) * b.x + np.sin(b.x))


def _scan(b):
    def body(c, x):
        return Box(c.x * x, c.meta), fnp.sum(c.x)
    return lax.scan(body, b, np.array([1.0, 2.0, 3.0]))[0].x


@fxad.custom_vjp
def _scaled(b):
    return b.x * b.meta["scale"]


_scaled.defvjp(lambda b: (_scaled(b), b),  # the residual is the node itself
               lambda b, g: (Box(g * b.meta["scale"], b.meta),))


@fxad.custom_jvp
def _scaled_j(b):
    return b.x * b.meta["scale"]


_scaled_j.defjvp(lambda p, t: (_scaled_j(p[0]), t[0].x * p[0].meta["scale"]))

X = np.array([0.3, -1.2, 2.0])
CASES = [
    ("grad", lambda b: fxad.grad(_loss)(b).x, lambda b: _grad_expected(b)),
    ("jit", lambda b: fxad.jit(_loss)(b), lambda b: _loss(b)),
    ("jit returns the node", lambda b: fxad.jit(lambda b: b)(b).x, lambda b: b.x),
    ("jit of grad", lambda b: fxad.jit(fxad.grad(_loss))(b).x, _grad_expected),
    ("grad of jit", lambda b: fxad.grad(fxad.jit(_loss))(b).x, _grad_expected),
    ("vmap", lambda b: fxad.vmap(lambda b: b.x * b.meta["scale"])(
        Box(np.stack([b.x, 2 * b.x]), b.meta)),
     lambda b: np.stack([b.x, 2 * b.x]) * b.meta["scale"]),
    ("jvp", lambda b: fxad.jvp(_loss, (b,), (Box(np.ones(3), b.meta),))[1],
     lambda b: np.sum(_grad_expected(b))),
    ("linearize", lambda b: fxad.linearize(_loss, b)[1](Box(np.ones(3), b.meta)),
     lambda b: np.sum(_grad_expected(b))),
    ("jacrev", lambda b: fxad.jacrev(_loss)(b).x, _grad_expected),
    ("hessian diagonal", lambda b: np.diag(fxad.hessian(_loss)(b).x.x),
     lambda b: b.meta["scale"] * (2 * np.cos(b.x) - b.x * np.sin(b.x))),
    ("checkpoint", lambda b: fxad.grad(fxad.checkpoint(_loss))(b).x, _grad_expected),
    ("custom_vjp", lambda b: fxad.grad(lambda b: fnp.sum(_scaled(b)))(b).x,
     lambda b: np.full(3, b.meta["scale"])),
    ("custom_jvp", lambda b: fxad.grad(lambda b: fnp.sum(_scaled_j(b)))(b).x,
     lambda b: np.full(3, b.meta["scale"])),
    ("scan", _scan, lambda b: b.x * 6.0),
    ("jit of scan", fxad.jit(_scan), lambda b: b.x * 6.0),
    ("cond", lambda b: lax.cond(True, lambda c: Box(c.x * 2, c.meta), lambda c: c, b).x,
     lambda b: 2 * b.x),
    ("while_loop", lambda b: lax.while_loop(lambda c: fnp.max(c.x) < 10,
                                            lambda c: Box(c.x * 2, c.meta), b).x,
     lambda b: b.x * 8),
    ("pure_callback", lambda b: fxad.jit(lambda b: fxad.pure_callback(
        lambda c: Box(np.sin(c.x), c.meta), b, b))(b).x, lambda b: np.sin(b.x)),
    ("lower and compile", lambda b: fxad.jit(_loss).lower(b).compile()(b), _loss),
    ("ravel_pytree", lambda b: fxad.flatten_util.ravel_pytree(b)[1](np.ones(3)).meta,
     lambda b: b.meta),
]


@pytest.mark.parametrize("name, run, expected", CASES, ids=[c[0] for c in CASES])
def test_unhashable_aux_through_transformations(name, run, expected):
    b = _box(X, scale=2.5)
    got = run(b)
    if isinstance(got, dict):
        assert got == expected(b)
    else:
        np.testing.assert_allclose(got, expected(b), rtol=1e-12, atol=1e-12)


def test_jit_cache_with_dict_aux_hits_on_equal_data_and_misses_after_mutation():
    traces = []

    @fxad.jit
    def f(b):
        traces.append(1)
        return b.x * b.meta["scale"]

    meta = {"scale": 2.0}
    np.testing.assert_array_equal(f(Box(np.ones(2), meta)), [2.0, 2.0])
    np.testing.assert_array_equal(f(Box(np.ones(2), {"scale": 2.0})), [2.0, 2.0])
    assert len(traces) == 1                        # equal data: one program
    meta["scale"] = 3.0                           # the user mutates the data it was traced with
    np.testing.assert_array_equal(f(Box(np.ones(2), meta)), [3.0, 3.0])
    assert len(traces) == 2
    np.testing.assert_array_equal(f(Box(np.ones(2), {"scale": 3.0})), [3.0, 3.0])
    assert len(traces) == 2


class _Meta(dict):
    """A dict that can be weakly referenced (to watch its lifetime)."""


def test_caches_do_not_keep_unhashable_aux_alive():
    f = fxad.jit(lambda b: b.x * b.meta["scale"])
    g = fxad.checkpoint(lambda b: fnp.sum(b.x * b.meta["scale"]))
    meta = _Meta(scale=4.0)
    ref = weakref.ref(meta)
    np.testing.assert_array_equal(f(Box(np.ones(2), meta)), [4.0, 4.0])
    np.testing.assert_array_equal(fxad.grad(g)(Box(np.ones(2), meta)).x, [4.0, 4.0])
    np.testing.assert_array_equal(fxad.grad(lambda b: fnp.sum(_scaled(b)))(
        Box(np.ones(2), meta)).x, [4.0, 4.0])
    del meta
    gc.collect()
    assert ref() is None
    np.testing.assert_array_equal(f(Box(np.ones(2), _Meta(scale=4.0))), [4.0, 4.0])


def test_uncopyable_unhashable_aux_still_works_uncached():
    class Opaque:
        __hash__ = None  # unhashable

        def __init__(self, s):
            self.s = s

        def __eq__(self, other):
            return isinstance(other, Opaque) and other.s == self.s

        def __deepcopy__(self, memo):
            raise TypeError("cannot copy")

    traces = []

    @fxad.jit
    def f(b):
        traces.append(1)
        return b.x * b.meta.s

    np.testing.assert_array_equal(f(Box(np.ones(2), Opaque(2.0))), [2.0, 2.0])
    np.testing.assert_array_equal(f(Box(np.ones(2), Opaque(5.0))), [5.0, 5.0])
    assert len(traces) == 2
    assert tu.cache_key(ftree.structure(Box(1.0, Opaque(1.0)))) is None
    td = ftree.structure((1, [2]))
    assert tu.cache_key(td) is td


# --- JAX's signatures ---------------------------------------------------------------------------

def _shape(sig):
    return [(p.name, p.kind, p.default is inspect.Parameter.empty)
            for p in sig.parameters.values()]


def test_signatures_match_jax():
    jax = pytest.importorskip("jax")
    import jax.tree_util as jtu
    checked = 0
    for jmod, fmod in [(jax.tree, ftree), (jtu, tu)]:
        for name in dir(jmod):
            if name.startswith("_") or name == "default_registry":
                continue
            try:
                want = inspect.signature(getattr(jmod, name))
            except (TypeError, ValueError):
                continue
            got = inspect.signature(getattr(fmod, name))
            assert _shape(got) == _shape(want), (jmod.__name__, name, str(got), str(want))
            checked += 1
    assert checked > 30


def test_reduce_is_functools_reduce():
    for tree, init in [([1, 2, 3], 0), ({"a": [4]}, 1)]:
        leaves = ftree.leaves(tree)
        assert ftree.reduce(lambda a, b: a * 10 + b, tree, init) == \
            functools.reduce(lambda a, b: a * 10 + b, leaves, init)
