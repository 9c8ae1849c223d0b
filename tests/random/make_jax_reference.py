"""Regenerate tests/random/jax_reference.json: JAX's outputs for every row of
parity_cases.ROWS, stored as the external spec fxad.random is tested against where JAX is not
installed (CI). Run with JAX installed (the file was made with JAX 0.10.2, CPU):

    python tests/random/make_jax_reference.py

Each entry holds the dtype, the shape and the raw little-endian bytes (zlib, base64)."""
import base64
import json
import sys
import zlib
from pathlib import Path

import jax

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.random.parity_cases import ROWS, run  # noqa: E402

OUT = Path(__file__).with_name("jax_reference.json")


def encode(a):
    a = a.astype(a.dtype.newbyteorder("<"), copy=False)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(zlib.compress(a.tobytes(), 9)).decode()}


def main():
    with jax.enable_x64(True):
        table = {row["id"]: encode(run(jax, row)) for row in ROWS}
    meta = {"jax": jax.__version__, "prng": "threefry2x32 (default), x64 enabled, CPU"}
    OUT.write_text(json.dumps({"meta": meta, "rows": table}, indent=0, sort_keys=True) + "\n")
    print(f"wrote {len(table)} rows to {OUT}")


if __name__ == "__main__":
    main()
