"""Benchmark: grad of sum(solve(A, b)) with respect to A and b, n = 400, against the floor
(one scipy lu_factor + two lu_solve calls). A thin wrapper: the workload is `solve_grad` in
benchmarks/run.py, which checks and times it with every other variant (fxad eager and jit,
peers when importable); any run.py option passes through.

    python benchmarks/solve.py [--repeat K] [--markdown] [--quick] ...
"""
import os
import runpy
import sys

if __name__ == "__main__":
    _run = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py")
    sys.argv = [_run, "--only", "solve_grad", *sys.argv[1:]]
    runpy.run_path(_run, run_name="__main__")  # sets one BLAS thread before importing NumPy
