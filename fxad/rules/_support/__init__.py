"""NumPy kernels shared by several rule families (no primitives here)."""
