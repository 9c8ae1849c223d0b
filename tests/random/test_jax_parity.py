"""fxad.random against jax.random (default threefry2x32, 64-bit types): bit for bit where
notes/11_random.md says so, to rounding elsewhere. Two sources for JAX's side:
 - jax_reference.json, JAX 0.10.2's outputs stored by make_jax_reference.py (an external
   spec, so these run everywhere, CI included), and
 - JAX itself, when installed (skipped otherwise), on the same rows and on randomized ones.
"""
import base64
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

import fxad
from fxad import random as fr

from .parity_cases import ROWS, run

REFERENCE = json.loads(Path(__file__).with_name("jax_reference.json").read_text())["rows"]


def decode(entry):
    raw = zlib.decompress(base64.b64decode(entry["data"]))
    return np.frombuffer(raw, np.dtype(entry["dtype"]).newbyteorder("<")).reshape(
        entry["shape"]).astype(entry["dtype"])


def assert_matches(row, got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, \
        (row["id"], got.dtype, want.dtype, got.shape, want.shape)
    if row["exact"]:
        assert got.tobytes() == want.tobytes(), f"{row['id']}: not bit-identical to JAX"
    elif row["rtol"] is not None:
        # (atol: values near 0 of a difference of logs keep only absolute accuracy)
        np.testing.assert_allclose(got, want, rtol=row["rtol"], atol=row["rtol"] / 10,
                                   err_msg=row["id"])
    else:
        agree = np.mean(got == want)
        assert agree >= row["agree"], f"{row['id']}: only {agree:.1%} of the draws agree"


def test_the_reference_covers_every_row():
    assert set(REFERENCE) == {r["id"] for r in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_matches_stored_jax_outputs(row):
    assert_matches(row, run(fxad, row), decode(REFERENCE[row["id"]]))


EXACT = [r for r in ROWS if r["exact"] and not r["fn"].startswith(("init.", "key_data",
                                                                     "split_fold"))]


@pytest.mark.parametrize("row", EXACT[::7], ids=[r["id"] for r in EXACT[::7]])
def test_bit_identical_under_jit_too(row):
    """The staged program computes the same bits as the eager calls (and so as JAX)."""
    fn, args, kwargs = row["fn"], [a for a in row["args"]], row["kwargs"]
    from .parity_cases import _arg
    args = [_arg(a) for a in args]
    f = fxad.jit(lambda k: getattr(fr, fn)(k, *args, **kwargs))
    got = np.asarray(f(fr.PRNGKey(row["seed"])))
    assert got.tobytes() == decode(REFERENCE[row["id"]]).tobytes()


# --- live comparisons with JAX itself -------------------------------------------------------

@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax", reason="JAX is not installed (the stored reference "
                                             "outputs above still run)")
    with jax.enable_x64(True):
        yield jax


@pytest.mark.parametrize("row", ROWS[::15], ids=[r["id"] for r in ROWS[::15]])
def test_matches_live_jax(jax, row):
    assert_matches(row, run(fxad, row), run(jax, row))


def test_many_random_seeds_shapes_and_dtypes_live(jax):
    """Random seeds, shapes, ranges and dtypes: keys, splits, bits, uniforms, integers and
    permutations bit for bit; normals to 1e-13."""
    rng = np.random.default_rng(0)
    for i in range(12):  # (few distinct shapes: JAX compiles once per shape)
        seed = int(rng.integers(-2 ** 63, 2 ** 63))
        shape = [(), (3,), (2, 5)][i % 3]
        k, kj = fr.PRNGKey(seed), jax.random.PRNGKey(seed)
        assert np.array_equal(k, np.asarray(kj))
        k, kj = fr.fold_in(k, seed % 2 ** 32), jax.random.fold_in(kj, seed % 2 ** 32)
        n = [2, 5][i % 2]
        assert np.array_equal(fr.split(k, n), np.asarray(jax.random.split(kj, n)))
        for dt in ("uint8", "uint16", "uint32", "uint64"):
            assert np.array_equal(fr.bits(k, shape, dt), np.asarray(jax.random.bits(kj, shape, dt)))
        lo, hi = sorted(rng.normal(0, 10, size=2))
        for dt in ("float64", "float32", "float16"):
            a, b = fr.uniform(k, shape, dt, lo, hi), jax.random.uniform(kj, shape, dt, lo, hi)
            assert np.asarray(b).tobytes() == a.tobytes()
        ilo = int(rng.integers(-1000, 1000))
        ihi = ilo + int(rng.integers(1, 10 ** int(rng.integers(1, 12))))
        assert np.array_equal(fr.randint(k, shape, ilo, ihi),
                              np.asarray(jax.random.randint(kj, shape, ilo, ihi)))
        p = float(rng.uniform())
        assert np.array_equal(fr.bernoulli(k, p, shape), np.asarray(jax.random.bernoulli(kj, p, shape)))
        m = [5, 2000][i % 2]
        assert np.array_equal(fr.permutation(k, m), np.asarray(jax.random.permutation(kj, m)))
        np.testing.assert_allclose(fr.normal(k, shape), np.asarray(jax.random.normal(kj, shape)),
                                   rtol=1e-13)


def test_vmap_over_keys_matches_jax_vmap(jax):
    keys = fr.split(fr.PRNGKey(9), 6)
    jkeys = jax.random.split(jax.random.PRNGKey(9), 6)
    for f, g in [(lambda k: fr.uniform(k, (3,), minval=-1.0, maxval=2.0),
                  lambda k: jax.random.uniform(k, (3,), minval=-1.0, maxval=2.0)),
                 (lambda k: fr.split(k, 3), lambda k: jax.random.split(k, 3)),
                 (lambda k: fr.randint(k, (4,), 0, 7), lambda k: jax.random.randint(k, (4,), 0, 7))]:
        assert np.array_equal(fxad.vmap(f)(keys), np.asarray(jax.vmap(g)(jkeys)))
