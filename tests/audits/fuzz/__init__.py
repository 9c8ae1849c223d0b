"""Fuzzing fxad: random programs built from the primitive tables, with the transformations
checked against each other on every program.

A program is a random DAG of 1..12 operations over 1..3 float64 inputs of broadcasting shapes.
Each operation is one line of Python over fxad.numpy / fxad.lax / fxad.nn / fxad.scipy (the
printed program *is* the code that runs). Operations come from smooth families: elementwise
unary and binary math (with NumPy broadcasting and constants), reductions, softmax and
layer_norm, reshape / transpose / broadcast / squeeze / flip / roll / tile / pad / diag,
basic and advanced indexing, take, at[].add/set/multiply, traced indices (argmax, argsort),
dot / matmul / einsum / tensordot / dot_general / outer / kron, concatenate / stack / split,
where (fixed masks, comparisons, logical ops), cumsum / cumprod / sort, floor_divide /
remainder, complex intermediates (also through solves, determinants and Cholesky), linear
algebra (inv, solve, det, cholesky, triangular and Cholesky solves, eigh, svd, qr, expm,
norms, pinv, lstsq, cond, matrix_power, multi_dot), statistics (median / quantile /
percentile, ptp, NaN-ignoring reductions over NaNs put in by a mask, cov / corrcoef),
sequences (diff, gradient, trapezoid, polyval, vander, interp, convolve / correlate), pad's
edge / reflect / symmetric / wrap modes, rot90 / fliplr / flipud / meshgrid, numpy.fft's
transforms, fmax / fmin / copysign / float_power / fmod, reductions with where= and
initial=, cond / fori_loop / while_loop / scan (bodies closing over program values),
transformations inside the program (grad / jvp / vmap / jacfwd / jacrev closing over program
values), custom_jvp / custom_vjp functions, and any op wrapped in jit or checkpoint; and the
rest of fxad's primitives (makers/special_functions, derivative_primitives, spectral,
collectives, integer_ops, windowed, remat_and_callbacks, random_rejection): the remaining
special functions, primitives only derivatives contain (staged by grad / jvp inside the
program), eig / schur / polar / Sylvester / tridiagonal / LU, collectives under pmap and
vmap(axis_name=...), integer and bit operations as masks and indices, checkpoint names,
pure_callback, and the rejection samplers at a traced key. A soak of a few thousand programs
stages every primitive but axis_index (pmap's body gets the index as an input, vmap an
iota: it is never an equation).

Domains are kept safe by looking at values. The generator evaluates every candidate
operation as it builds the program, on the vmap batch and on two 5-point stencils x0 + t*H*d
(t = -2..2, H = 0.01, d random) around the point the derivative checks use, and

  * shifts arguments into the domain of log/sqrt/reciprocal/div/pow/... (`log(v3 + 2.5)`),
    keeps exp's argument below 2 (`exp(v1 - 3.0)`), squashes arcsin's into (-0.8, 0.8);
  * uses kinked operations (abs, maximum/minimum, max/min reductions, sort, quantiles,
    argmax, clip, where / cond on comparisons, floor/round/remainder/fmod, interp's knots,
    norms) only where every value, at every stencil point, is at least 0.05 from the kink
    or tie;
  * guards matrix conditioning, eigenvalue and singular value gaps;
  * rejects an operation whose values leave [-1e3, 1e3], or that is not smooth on the
    stencils (third and fourth differences larger than the first and second): then central
    differences with eps = 1e-5 are accurate to ~(1e-5 / H)^2 = 1e-6 of the derivative, at
    first and second order, far inside check_grads' tolerances (which are not loosened).

So a failure is a real disagreement, not finite-difference noise. The checks (g = the sum of
the outputs, for the scalar ones):

  grads       fxad.test_util.check_grads(f, order=2, modes=("fwd", "rev")): JVP vs central
              differences, VJP vs differences, and the transpose identity (a failure at
              eps=1e-5 is decided at eps=1e-6: a steep program's truncation error shrinks
              as eps^2, a wrong derivative's does not)
  tape        eager grad(g) and vjp(f) on the tape of derived pullbacks == the staged path
              (fxad.config.eager_tape = False: linearize, then transpose)
  linearize   linearize(f) gives f(x) and jvp's tangent
  jacobians   jacfwd(f) == jacrev(f)
  jit         jit(f) == f
  jit_grad    jit(grad(g)) == grad(g) == grad(jit(g))
  vmap        vmap(f) (random in_axes / out_axes, some inputs unbatched) == a Python loop
              over the batch == jit(vmap(f))
  vmap_grad   vmap(grad(g)) == a Python loop of grad(g)
  hessians    jacfwd(jacrev(g)) == jacrev(jacrev(g)) == jacfwd(jacfwd(g)) == jacrev(jacfwd(g))
              == jit(hessian(g))
  dtypes      on float32 inputs, jit / jvp / vmap give eager's dtypes and grad gives float32
  jet         jet(f) along a random line, 3 terms == 3 nested jvps (Taylor mode)

"Agree" is up to rounding: max error <= 1e-9 * max(1, max |expected|).

`python -m tests.audits.fuzz --n 10000 [--seed S]` (from the repository root) runs a soak;
tests/audits/test_fuzz.py runs a deterministic few hundred in CI. A failure is minimized (the
smallest sub-program by output node, unused inputs and wrappers dropped) and reported as a
runnable script with fxad's jaxpr. Failures explained by known, reported fxad bugs
(KNOWN_BUGS) are labelled as such.

The package, by responsibility:

  program.py     Program, Line, Node: the representation and its printed, runnable source;
                 the shared constants (B, H, MARGIN, ...) and the namespace programs run in
  registry.py    the maker registry: `@maker(weight=...)` and the weighted list's order
  generator.py   Gen (values tracked per node, domain helpers), the guards, and `programs`,
                 the hypothesis strategy
  makers/        the operation makers, one module per family; each registers itself, so a
                 new family is a module there and one import line in makers/__init__.py
  checks.py      the properties (PROPERTIES)
  minimize.py    running a property, minimizing and reporting a failure, KNOWN_BUGS
  run.py         check_program and the hypothesis drivers (run_fuzz)
  __main__.py    the soak command line
"""
from __future__ import annotations

from . import makers  # noqa: F401  (registers every maker)
from .checks import PROPERTIES, assert_close
from .generator import Gen, Reject, numerically_constant, programs
from .minimize import KNOWN_BUGS, FuzzFailure, known_bug, minimize, report, run_property
from .program import B, EXACT_RTOL, H, MARGIN, N_POINTS, Line, Node, Program, cj_xtanh, cv_mulsin
from .registry import MAKERS, maker
from .run import check_program, fuzz_settings, run_fuzz

__all__ = ["B", "EXACT_RTOL", "H", "KNOWN_BUGS", "MAKERS", "MARGIN", "N_POINTS", "PROPERTIES",
           "FuzzFailure", "Gen", "Line", "Node", "Program", "Reject", "assert_close",
           "check_program", "cj_xtanh", "cv_mulsin", "fuzz_settings", "known_bug", "maker",
           "minimize", "numerically_constant", "programs", "report", "run_fuzz", "run_property"]
