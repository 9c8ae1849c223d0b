"""Refuse a NumPy older than pyproject.toml's minimum (tests/project/test_install.py keeps the two
equal). NumPy 1.x still gets installed with --no-deps or into an environment built by other
means, and fxad would not fail with it: it would silently compute other dtypes (value-based
casting instead of NEP 50: float32 + 1.0 would be float64)."""
import numpy as np

MIN_NUMPY = (2, 1)

if tuple(int(p) for p in np.__version__.split(".")[:2]) < MIN_NUMPY:
    _min = ".".join(map(str, MIN_NUMPY))
    raise ImportError(f"fxad needs NumPy >= {_min}, this is NumPy {np.__version__}: "
                      f"pip install 'numpy>={_min}'")
