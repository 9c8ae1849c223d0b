"""The fuzzer's programs: the global Jacobian and Hessian patterns contain every nonzero of
the dense derivatives (the 'sparsity' property of tests/fuzz/checks.py)."""
from ..audits import fuzz


def test_patterns_contain_dense_nonzeros_on_fuzzer_programs():
    fuzz.run_fuzz(15, props=["sparsity"], skip_known=True)
