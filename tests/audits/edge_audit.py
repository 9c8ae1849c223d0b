"""The edge audit (issue 16, item 4): fxad's math against NumPy/SciPy at extreme magnitudes.

Every function in the tables below is run on inputs of each class (normal values, ±1e300,
±1e-300, ±5e-324 (subnormal), 0, ±inf, nan; pairs of them for binary functions) and checked:

  values       against NumPy's/SciPy's own function: the same dtype, NaN where it has NaN,
               the same infinities, and finite values within VALUE_RTOL (a few ulps) for
               elementwise functions, REDUCE_RTOL for reductions and linear algebra (whose
               summation or factorization order may differ from NumPy's);
  derivatives  first derivatives by forward mode (jvp) and reverse mode (grad) against the
               analytic derivative evaluated with mpmath at 60 digits, rounded to float64, at
               every input where that reference is finite (an overflowing reference must be
               matched as ±inf), within DERIV_RTOL.

`audit()` returns {(function, input class): [failure messages]}; tests/audits/test_edge_audit.py
asserts that the only failing cells are the documented differences (DOCUMENTED, each with its
reason, also in notes/edge_audit.md). `python -m tests.audits.edge_audit` (from the checkout's root:
this checkout's fxad, and no tests/scipy package shadowing SciPy) prints the table that
notes/edge_audit.md shows.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable

import mpmath
import numpy as np
import scipy.special as sc

import fxad
import fxad.numpy as fnp
import fxad.scipy.linalg as fsl
import fxad.scipy.special as fss
import scipy.linalg as sl
from fxad import nn

mp = mpmath.mp
mp.dps = 60
inf, nan = float("inf"), float("nan")

VALUE_RTOL = 0.0          # elementwise: NumPy's own result, bit for bit (up to the sign of 0)
REDUCE_RTOL = 1e-13       # reductions and linear algebra: another summation order
DERIV_RTOL = 1e-13
ATOL = 1e-321             # a few subnormal ulps: results that underflow round coarsely

CLASSES = {
    "normal": [0.5, -2.5, 3.0, 1000.0],
    "large": [1e4, -1e4, 1e8, -1e8],    # tails of special functions, cancellation in x² - c
    "huge": [1e300, -1e300, 1e160],     # 1e160² overflows; 1/1e160² is still a float
    "tiny": [1e-300, -1e-300, 1e-160],
    "subnormal": [5e-324, -5e-324],
    "zero": [0.0],
    "inf": [inf, -inf],
    "nan": [nan],
}
# A pair belongs to the class of its rarer operand (every pair is checked once).
_PRIORITY = ["nan", "inf", "subnormal", "zero", "tiny", "huge", "large", "normal"]


def class_of(*xs):
    names = [c for x in xs for c, vs in CLASSES.items()
             if any(x == v or (x != x and v != v) for v in vs)]
    return min(names, key=_PRIORITY.index)


# --- the rows ----------------------------------------------------------------------------------

@dataclass
class Row:
    name: str
    ours: Callable
    ref: Callable                 # NumPy's / SciPy's function, same call
    d: Callable | None = None     # mpmath derivative: x -> dx, (x, y) -> (dx, dy), or None
    kind: str = "unary"           # unary | binary | int2 (second operand an integer) | ...
    rtol: float = VALUE_RTOL
    nan_ok: bool = False          # the derivative is defined at NaN operands (fmax, fmin)


M = mpmath


def _mp(x):
    return mp.mpf(x)


def _sign(x):
    return 1 if x > 0 else -1


def _pw_const(x):  # piecewise constant: 0 wherever finite (by convention also at the jumps)
    return 0


def _sinc_d(x):
    if x == 0:
        return 0
    if abs(x) < 1e-8:  # series: cos(πx) - sinc(x) cancels
        return -(M.pi ** 2) * x / 3
    return (M.cospi(x) - M.sincpi(x)) / x


def _cbrt_d(x):
    return None if x == 0 else 1 / (3 * M.cbrt(abs(x)) ** 2)


XP, FP = np.array([-1.0, 0.0, 2.0]), np.array([1.0, 3.0, -1.0])  # interp's knots
POLY = np.array([2.0, -3.0, 1.0])


def _interp_d(x):
    if x in (-1, 0, 2):
        return None  # a kink
    return 2 if -1 < x < 0 else -2 if 0 < x < 2 else 0


_GELU_C = math.sqrt(2 / math.pi)


def _gelu_u(x):  # the tanh approximation: 0.5 x (1 + tanh u) = x expit(2u)
    return _GELU_C * (x + 0.044715 * x ** 3)


def _gelu_tanh_d(x):
    u = M.sqrt(2 / M.pi) * (x + mp.mpf(0.044715) * x ** 3)
    du = M.sqrt(2 / M.pi) * (1 + 3 * mp.mpf(0.044715) * x ** 2)
    s = 1 / (1 + M.exp(-2 * u))
    return s + x * 2 * s * (1 - s) * du


UNARY = [
    Row("negative", fnp.negative, np.negative, lambda x: -1),
    Row("positive", fnp.positive, np.positive, lambda x: 1),
    Row("absolute", fnp.absolute, np.absolute, lambda x: None if x == 0 else _sign(x)),
    Row("fabs", fnp.fabs, np.fabs, lambda x: None if x == 0 else _sign(x)),
    Row("exp", fnp.exp, np.exp, M.exp),
    Row("exp2", fnp.exp2, np.exp2, lambda x: M.ln2 * M.power(2, x)),
    Row("expm1", fnp.expm1, np.expm1, M.exp),
    Row("log", fnp.log, np.log, lambda x: 1 / x if x > 0 else None),
    Row("log2", fnp.log2, np.log2, lambda x: 1 / (x * M.ln2) if x > 0 else None),
    Row("log10", fnp.log10, np.log10, lambda x: 1 / (x * M.ln10) if x > 0 else None),
    Row("log1p", fnp.log1p, np.log1p, lambda x: 1 / (1 + x) if x > -1 else None),
    Row("sqrt", fnp.sqrt, np.sqrt, lambda x: 1 / (2 * M.sqrt(x)) if x > 0 else None),
    Row("cbrt", fnp.cbrt, np.cbrt, _cbrt_d),
    Row("square", fnp.square, np.square, lambda x: 2 * x),
    Row("reciprocal", fnp.reciprocal, np.reciprocal, lambda x: -1 / x ** 2 if x else None),
    Row("sin", fnp.sin, np.sin, M.cos),
    Row("cos", fnp.cos, np.cos, lambda x: -M.sin(x)),
    Row("tan", fnp.tan, np.tan, lambda x: M.sec(x) ** 2),
    Row("arcsin", fnp.arcsin, np.arcsin, lambda x: 1 / M.sqrt(1 - x * x) if abs(x) < 1 else None),
    Row("arccos", fnp.arccos, np.arccos,
        lambda x: -1 / M.sqrt(1 - x * x) if abs(x) < 1 else None),
    Row("arctan", fnp.arctan, np.arctan, lambda x: 1 / (1 + x * x)),
    Row("sinh", fnp.sinh, np.sinh, M.cosh),
    Row("cosh", fnp.cosh, np.cosh, M.sinh),
    Row("tanh", fnp.tanh, np.tanh, lambda x: M.sech(x) ** 2),
    Row("arcsinh", fnp.arcsinh, np.arcsinh, lambda x: 1 / M.sqrt(x * x + 1)),
    Row("arccosh", fnp.arccosh, np.arccosh, lambda x: 1 / M.sqrt(x * x - 1) if x > 1 else None),
    Row("arctanh", fnp.arctanh, np.arctanh, lambda x: 1 / (1 - x * x) if abs(x) < 1 else None),
    Row("deg2rad", fnp.deg2rad, np.deg2rad, lambda x: M.pi / 180),
    Row("rad2deg", fnp.rad2deg, np.rad2deg, lambda x: 180 / M.pi),
    Row("sinc", fnp.sinc, np.sinc, _sinc_d),
    Row("sign", fnp.sign, np.sign, _pw_const),
    Row("floor", fnp.floor, np.floor, _pw_const),
    Row("ceil", fnp.ceil, np.ceil, _pw_const),
    Row("trunc", fnp.trunc, np.trunc, _pw_const),
    Row("fix", fnp.fix, np.fix, _pw_const),
    Row("rint", fnp.rint, np.rint, _pw_const),
    Row("round", fnp.round, np.round, _pw_const),
    Row("modf[0]", lambda x: fnp.modf(x)[0], lambda x: np.modf(x)[0], lambda x: 1),
    Row("modf[1]", lambda x: fnp.modf(x)[1], lambda x: np.modf(x)[1], _pw_const),
    Row("clip", lambda x: fnp.clip(x, -1.0, 2.0), lambda x: np.clip(x, -1.0, 2.0),
        lambda x: 1 if -1 < x < 2 else 0 if x not in (-1, 2) else None),
    Row("interp", lambda x: fnp.interp(x, XP, FP), lambda x: np.interp(x, XP, FP), _interp_d),
    Row("polyval", lambda x: fnp.polyval(POLY, x), lambda x: np.polyval(POLY, x),
        lambda x: 4 * x - 3),
    Row("nan_to_num", fnp.nan_to_num, np.nan_to_num, lambda x: 1 if M.isfinite(x) else 0,
        nan_ok=True),  # a replaced value is a constant
    Row("real", fnp.real, np.real, lambda x: 1),
    Row("imag", fnp.imag, np.imag, lambda x: 0),
    Row("conjugate", fnp.conjugate, np.conjugate, lambda x: 1),
    Row("angle", fnp.angle, np.angle, lambda x: None if x == 0 else 0),
    Row("isfinite", fnp.isfinite, np.isfinite),
    Row("isinf", fnp.isinf, np.isinf),
    Row("isnan", fnp.isnan, np.isnan),
    Row("isposinf", fnp.isposinf, np.isposinf),
    Row("isneginf", fnp.isneginf, np.isneginf),
    Row("signbit", fnp.signbit, np.signbit),
    Row("logical_not", fnp.logical_not, np.logical_not),
    # scipy.special
    Row("special.erf", fss.erf, sc.erf, lambda x: 2 / M.sqrt(M.pi) * M.exp(-x * x)),
    Row("special.erfc", fss.erfc, sc.erfc, lambda x: -2 / M.sqrt(M.pi) * M.exp(-x * x)),
    Row("special.erfcx", lambda x: fss.erfcx(x), sc.erfcx,
        lambda x: 2 * x * M.exp(x * x) * M.erfc(x) - 2 / M.sqrt(M.pi)),
    Row("special.erfinv", fss.erfinv, sc.erfinv,
        lambda x: M.sqrt(M.pi) / 2 * M.exp(M.erfinv(x) ** 2) if abs(x) < 1 else None),
    Row("special.expit", fss.expit, sc.expit, lambda x: 1 / (4 * M.cosh(x / 2) ** 2)),
    Row("special.logit", fss.logit, sc.logit, lambda x: 1 / (x * (1 - x)) if 0 < x < 1 else None),
    Row("special.gamma", fss.gamma, sc.gamma,
        lambda x: M.gamma(x) * M.digamma(x) if x > 0 or x != M.floor(x) else None),
    Row("special.gammaln", fss.gammaln, sc.gammaln,
        lambda x: M.digamma(x) if x > 0 or x != M.floor(x) else None),
    Row("special.digamma", fss.digamma, sc.digamma,
        lambda x: M.psi(1, x) if x > 0 or x != M.floor(x) else None),
    Row("special.polygamma(1, x)", lambda x: fss.polygamma(1, x), lambda x: sc.polygamma(1, x),
        lambda x: M.psi(2, x) if x > 0 or x != M.floor(x) else None),
    Row("special.ndtr", fss.ndtr, sc.ndtr, M.npdf),
    Row("special.log_ndtr", fss.log_ndtr, sc.log_ndtr, lambda x: M.npdf(x) / M.ncdf(x)),
    Row("special.ndtri", fss.ndtri, sc.ndtri,
        lambda p: 1 / M.npdf(M.sqrt(2) * M.erfinv(2 * p - 1)) if 0 < p < 1 else None),
    Row("special.entr", fss.entr, sc.entr, lambda x: -(M.log(x) + 1) if x > 0 else None),
    # fxad.nn, against SciPy's (or NumPy's) spelling of the same function
    Row("nn.sigmoid", nn.sigmoid, sc.expit, lambda x: 1 / (4 * M.cosh(x / 2) ** 2)),
    Row("nn.softplus", nn.softplus, lambda x: np.logaddexp(x, 0.0), lambda x: 1 / (1 + M.exp(-x))),
    Row("nn.relu", nn.relu, lambda x: np.maximum(x, 0.0),
        lambda x: None if x == 0 else 1 if x > 0 else 0),
    Row("nn.silu", nn.silu, lambda x: x * sc.expit(x),
        lambda x: 1 / (1 + M.exp(-x)) + x * M.exp(-x) / (1 + M.exp(-x)) ** 2),
    Row("nn.gelu", nn.gelu, lambda x: x * sc.expit(2 * _gelu_u(x)), _gelu_tanh_d),
    Row("nn.gelu(approximate=False)", lambda x: nn.gelu(x, approximate=False),
        lambda x: x * sc.ndtr(x), lambda x: M.ncdf(x) + x * M.npdf(x)),
]


def _tie(a, b, first=True):  # d max(a, b)/da: 1, 0, or 1/2 at ties
    return mp.mpf(0.5) if a == b else (1 if (a > b) == first else 0)


def _max_d(x, y):
    return _tie(x, y), _tie(y, x)


def _min_d(x, y):
    return _tie(x, y, False), _tie(y, x, False)


def _fmax_d(x, y):
    if M.isnan(x) and M.isnan(y):
        return None, None
    if M.isnan(x) or M.isnan(y):
        return (0, 1) if M.isnan(x) else (1, 0)
    return _max_d(x, y)


def _fmin_d(x, y):
    if M.isnan(x) and M.isnan(y):
        return None, None
    if M.isnan(x) or M.isnan(y):
        return (0, 1) if M.isnan(x) else (1, 0)
    return _min_d(x, y)


def _pow_d(x, y):
    dx = y * M.power(x, y - 1) if x > 0 or (x < 0 and y == M.floor(y)) else None
    dy = M.power(x, y) * M.log(x) if x > 0 else None
    return dx, dy


def _hypot_d(x, y):
    if x == 0 and y == 0:
        return None, None
    h = M.hypot(x, y)
    return x / h, y / h


def _arctan2_d(y, x):
    if x == 0 and y == 0:
        return None, None
    r2 = x * x + y * y
    return x / r2, -y / r2


def _logaddexp_d(x, y):
    return 1 / (1 + M.exp(y - x)), 1 / (1 + M.exp(x - y))


def _logaddexp2_d(x, y):
    return 1 / (1 + M.power(2, y - x)), 1 / (1 + M.power(2, x - y))


def _copysign_d(x, y):
    return (None if x == 0 or y == 0 else _sign(x) * _sign(y)), 0


def _fmod_d(x, y):
    if not (M.isfinite(x) and M.isfinite(y)):
        return None, None
    return (1, -M.floor(abs(x / y)) * _sign(x / y)) if y != 0 and M.fmod(x, y) != 0 else \
        (None, None)


def _rem_d(x, y):
    if not (M.isfinite(x) and M.isfinite(y)):
        return None, None
    return (1, -M.floor(x / y)) if y != 0 and x - y * M.floor(x / y) != 0 else (None, None)


def _heaviside_d(x, y):
    return (None if x == 0 else 0), (1 if x == 0 else 0)


BINARY = [
    Row("add", fnp.add, np.add, lambda x, y: (1, 1), "binary"),
    Row("subtract", fnp.subtract, np.subtract, lambda x, y: (1, -1), "binary"),
    Row("multiply", fnp.multiply, np.multiply, lambda x, y: (y, x), "binary"),
    Row("divide", fnp.divide, np.divide,
        lambda x, y: (1 / y, -x / y ** 2) if y else (None, None), "binary"),
    Row("power", fnp.power, np.power, _pow_d, "binary"),
    Row("float_power", fnp.float_power, np.float_power, _pow_d, "binary"),
    Row("arctan2", fnp.arctan2, np.arctan2, _arctan2_d, "binary"),
    Row("hypot", fnp.hypot, np.hypot, _hypot_d, "binary"),
    Row("logaddexp", fnp.logaddexp, np.logaddexp, _logaddexp_d, "binary"),
    Row("logaddexp2", fnp.logaddexp2, np.logaddexp2, _logaddexp2_d, "binary"),
    Row("maximum", fnp.maximum, np.maximum, _max_d, "binary"),
    Row("minimum", fnp.minimum, np.minimum, _min_d, "binary"),
    Row("fmax", fnp.fmax, np.fmax, _fmax_d, "binary", nan_ok=True),
    Row("fmin", fnp.fmin, np.fmin, _fmin_d, "binary", nan_ok=True),
    Row("copysign", fnp.copysign, np.copysign, _copysign_d, "binary"),
    Row("heaviside", fnp.heaviside, np.heaviside, _heaviside_d, "binary"),
    Row("fmod", fnp.fmod, np.fmod, _fmod_d, "binary"),
    Row("remainder", fnp.remainder, np.remainder, _rem_d, "binary"),
    Row("floor_divide", fnp.floor_divide, np.floor_divide, lambda x, y: (0, 0), "binary"),
    Row("divmod[0]", lambda x, y: fnp.divmod(x, y)[0], lambda x, y: np.divmod(x, y)[0],
        lambda x, y: (0, 0), "binary"),
    Row("divmod[1]", lambda x, y: fnp.divmod(x, y)[1], lambda x, y: np.divmod(x, y)[1],
        _rem_d, "binary"),
    Row("ldexp", fnp.ldexp, np.ldexp, lambda x, i: (M.ldexp(1, int(i)), None), "int2"),
    Row("equal", fnp.equal, np.equal, None, "binary"),
    Row("not_equal", fnp.not_equal, np.not_equal, None, "binary"),
    Row("less", fnp.less, np.less, None, "binary"),
    Row("less_equal", fnp.less_equal, np.less_equal, None, "binary"),
    Row("greater", fnp.greater, np.greater, None, "binary"),
    Row("greater_equal", fnp.greater_equal, np.greater_equal, None, "binary"),
    Row("logical_and", fnp.logical_and, np.logical_and, None, "binary"),
    Row("logical_or", fnp.logical_or, np.logical_or, None, "binary"),
    Row("logical_xor", fnp.logical_xor, np.logical_xor, None, "binary"),
    Row("isclose", fnp.isclose, np.isclose, None, "binary"),
    Row("special.xlogy", fss.xlogy, sc.xlogy,
        lambda x, y: (M.log(y) if y > 0 else None, x / y if y > 0 else None), "binary"),
    Row("special.xlog1py", fss.xlog1py, sc.xlog1py,
        lambda x, y: (M.log1p(y) if y > -1 else None, x / (1 + y) if y > -1 else None),
        "binary"),
]
INT_EXPONENTS = [-1075, -1074, -3, 0, 1, 3, 1023, 1024, 2000]


# --- running a row -----------------------------------------------------------------------------

def _to_float(v):
    """A real mpmath (or Python) number as a float; None if undefined (NaN or complex)."""
    if v is None:
        return None
    if isinstance(v, mp.mpc):
        if M.isnan(v.real) or M.isnan(v.imag) or v.imag != 0:
            return None
        v = v.real
    v = mp.mpf(v)
    return None if M.isnan(v) else float(v)


def _ref_derivative(d, *xs, nan_ok=False):
    """The derivative(s) as floats (None where undefined), computed in mpmath."""
    if not nan_ok and any(x != x for x in xs):
        return (None,) * len(xs) if len(xs) > 1 else None
    try:
        with mp.workdps(60):
            out = d(*[_mp(x) for x in xs])
            if len(xs) > 1:
                return tuple(_to_float(o) for o in out)
            return _to_float(out)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return (None,) * len(xs) if len(xs) > 1 else None


def _close(got, want, rtol):
    """NaN-equality, equal infinities, finite values within rtol (+ a subnormal atol)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    bad = np.isnan(got) != np.isnan(want)
    fin = np.isfinite(want)
    inf_w = np.isinf(want)
    bad |= inf_w & (got != want)
    with np.errstate(all="ignore"):
        bad |= fin & ~(np.abs(got - want) <= rtol * np.abs(want) + ATOL)
    return ~bad


def _close_where_finite(got, want, rtol):
    """Derivatives: checked where the reference is finite (an overflowing one is not)."""
    return _close(got, want, rtol) | ~np.isfinite(want)


def _values_ok(got, want, rtol):
    """(ok mask per element, message or None) for values, dtype first."""
    got_a, want_a = np.asarray(got), np.asarray(want)
    if got_a.dtype != want_a.dtype:
        return None, f"dtype {got_a.dtype} != {want_a.dtype}"
    if got_a.shape != want_a.shape:
        return None, f"shape {got_a.shape} != {want_a.shape}"
    if want_a.dtype == bool:
        return got_a == want_a, None
    return _close(got_a, want_a, rtol), None


def _quiet(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


def _record(failures, name, cls, msg):
    failures.setdefault((name, cls), []).append(msg)


def _check_elementwise(row, args, classes, failures):
    """args: equal-length 1-d float arrays (one per operand); classes: class per element."""
    try:
        got = _quiet(row.ours, *args)
    except Exception as e:  # noqa: BLE001  (an exception is a finding, not a crash)
        for c in set(classes):
            _record(failures, row.name, c, f"raised {type(e).__name__}: {e}")
        return
    want = _quiet(row.ref, *args)
    ok, msg = _values_ok(got, want, row.rtol)
    if msg:
        for c in set(classes):
            _record(failures, row.name, c, msg)
        return
    for i in np.flatnonzero(~ok):
        _record(failures, row.name, classes[i],
                f"value at {tuple(a[i] for a in args)}: {np.asarray(got)[i]!r} != "
                f"{np.asarray(want)[i]!r}")
    if row.d is None:
        return
    nd = 1 if row.kind in ("unary", "int2") else len(args)
    refs = [_ref_derivative(row.d, *[a[i] for a in args], nan_ok=row.nan_ok)
            for i in range(len(args[0]))]
    if len(args) > 1:
        refs = list(zip(*refs))
    else:
        refs = [refs]
    for k in range(nd):
        want_d = np.array([nan if r is None else r for r in refs[k]])
        have = np.array([r is not None for r in refs[k]])
        fwd, rev = _derivatives(row.ours, args, k)
        for mode, d in (("jvp", fwd), ("grad", rev)):
            if isinstance(d, str):
                for c in set(np.asarray(classes)[have]):
                    _record(failures, row.name, c, f"{mode} raised {d}")
                continue
            ok = _close_where_finite(d, want_d, DERIV_RTOL) | ~have
            for i in np.flatnonzero(~ok):
                _record(failures, row.name, classes[i],
                        f"d/dx{k} ({mode}) at {tuple(a[i] for a in args)}: {d[i]!r} != "
                        f"{want_d[i]!r}")


def _derivatives(fn, args, k):
    """Elementwise derivative wrt operand k: jvp with a ones tangent, and grad of the sum."""
    def f(x):
        return fn(*[x if j == k else a for j, a in enumerate(args)])
    try:
        fwd = np.asarray(_quiet(lambda: fxad.jvp(f, (args[k],), (np.ones_like(args[k]),))[1]))
    except Exception as e:  # noqa: BLE001
        fwd = f"{type(e).__name__}: {e}"
    try:
        rev = np.asarray(_quiet(lambda: fxad.grad(lambda x: fnp.sum(f(x)))(args[k])))
    except Exception as e:  # noqa: BLE001
        rev = f"{type(e).__name__}: {e}"
    return fwd, rev


def _unary_inputs():
    xs = [v for vs in CLASSES.values() for v in vs]
    return [np.array(xs)], [class_of(x) for x in xs]


def _binary_inputs():
    vals = [v for vs in CLASSES.values() for v in vs]
    xs = np.array([a for a in vals for _ in vals])
    ys = np.array([b for _ in vals for b in vals])
    return [xs, ys], [class_of(a, b) for a, b in zip(xs, ys)]


def _int2_inputs():
    vals = [v for vs in CLASSES.values() for v in vs]
    xs = np.array([a for a in vals for _ in INT_EXPONENTS])
    ys = np.array([i for _ in vals for i in INT_EXPONENTS])
    return [xs, ys], [class_of(a) for a in xs]


def audit_elementwise(failures, rows=None):
    for row in rows or UNARY + BINARY:
        args, classes = {"unary": _unary_inputs, "binary": _binary_inputs,
                         "int2": _int2_inputs}[row.kind]()
        _check_elementwise(row, args, classes, failures)


# --- reductions: each row of a (k, 3) stack, reduced along axis -1 ------------------------------

W = [0.75, -1.25, 2.0]  # output weights: vector-valued rows differentiate sum(W * f(x))


@dataclass
class Reduction:
    name: str
    ours: Callable                # f(x, axis) (axis -1 on the stack, None on one row)
    ref: Callable
    d: Callable | None = None     # mpmath: list of entries -> gradient list (None: undefined)
    vector: bool = False          # f keeps the axis: differentiate sum(W * f)
    rtol: float = REDUCE_RTOL
    nan_ok: bool = False          # the gradient is defined with NaN entries (nan* functions)


def _mean(xs):
    return mp.fsum(xs) / len(xs)


def _var_d(xs):
    m = _mean(xs)
    return [2 * (x - m) / len(xs) for x in xs]


def _std_d(xs):
    m = _mean(xs)
    s = M.sqrt(mp.fsum((x - m) ** 2 for x in xs) / len(xs))
    return None if s == 0 else [(x - m) / (len(xs) * s) for x in xs]


def _prod_d(xs):
    return [mp.fprod(x for j, x in enumerate(xs) if j != i) for i in range(len(xs))]


def _split(xs, pick):
    """The tie-split gradient of max/min: 1/k on each of the k extreme entries."""
    e = pick(xs)
    k = sum(1 for x in xs if x == e)
    return [mp.mpf(1) / k if x == e else 0 for x in xs]


def _ok(xs):
    return [x for x in xs if not M.isnan(x)]


def _embed(xs, grads):
    """Gradient over the non-NaN entries, 0 at the NaNs (the nan* functions)."""
    if grads is None:
        return None
    it = iter(grads)
    return [0 if M.isnan(x) else next(it) for x in xs]


def _nan(fn):
    return lambda xs: _embed(xs, fn(_ok(xs))) if _ok(xs) else None


def _quantile_d(q):
    def d(xs):
        order = sorted(range(len(xs)), key=lambda i: xs[i])
        pos = q * (len(xs) - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, len(xs) - 1)
        frac = mp.mpf(pos) - lo
        vals = [xs[i] for i in order]
        for k in {lo, hi}:  # the order statistics used must be unique values
            if sum(1 for v in vals if v == vals[k]) > 1:
                return None
        g = [0] * len(xs)
        g[order[lo]] += 1 - frac
        g[order[hi]] += frac
        return g
    return d


def _softmax(xs):
    if all(x == -M.inf for x in xs):
        return [0] * len(xs)  # fxad's choice for an all -inf slice (notes/07_differences.md)
    m = max(xs)
    e = [M.exp(x - m) for x in xs]
    return [v / mp.fsum(e) for v in e]


def _softmax_vjp(xs):
    s = _softmax(xs)
    sw = mp.fsum(a * b for a, b in zip(s, W))
    return [a * (w - sw) for a, w in zip(s, W)]


def _log_softmax_vjp(xs):
    s = _softmax(xs)
    return [w - a * mp.fsum(W) for a, w in zip(s, W)]


def _pnorm_d(p):
    def d(xs):
        if p == 0:
            return [0] * len(xs)
        if p == 1:
            return None if any(x == 0 for x in xs) else [_sign(x) for x in xs]
        if p in (inf, -inf):  # a kink where the extreme |x| is 0
            ext = (max if p == inf else min)(abs(x) for x in xs)
            return None if ext == 0 else [
                _sign(x) * g for x, g in zip(xs, _split([abs(x) for x in xs],
                                                        max if p == inf else min))]
        nrm = mp.fsum(abs(x) ** p for x in xs) ** (mp.mpf(1) / p)
        if nrm == 0:
            return None
        return [_sign(x) * (abs(x) / nrm) ** (p - 1) if x else 0 for x in xs]
    return d


def _cumsum_vjp(xs):
    return [mp.fsum(W[i:]) for i in range(len(xs))]


def _cumprod_vjp(xs):
    return [mp.fsum(W[k] * mp.fprod(xs[j] for j in range(k + 1) if j != i)
                    for k in range(i, len(xs))) for i in range(len(xs))]


def _np_norm(ord):
    return lambda x, axis=None: np.linalg.norm(x, ord, axis=-1 if axis is not None else None)


def _fx_norm(ord):
    return lambda x, axis=None: fnp.linalg.norm(x, ord, axis=-1 if axis is not None else None)


def _logsumexp_d(xs):
    return _softmax(xs)


def _ax(fn, **kw):
    """f(x, axis) from a NumPy-style function of (x, axis=...)."""
    return lambda x, axis=None: fn(x, axis=axis, **kw)


REDUCTIONS = [
    Reduction("sum", _ax(fnp.sum), _ax(np.sum), lambda xs: [1] * len(xs)),
    Reduction("prod", _ax(fnp.prod), _ax(np.prod), _prod_d),
    Reduction("mean", _ax(fnp.mean), _ax(np.mean), lambda xs: [mp.mpf(1) / len(xs)] * len(xs)),
    Reduction("var", _ax(fnp.var), _ax(np.var), _var_d),
    Reduction("std", _ax(fnp.std), _ax(np.std), _std_d),
    Reduction("max", _ax(fnp.max), _ax(np.max), lambda xs: _split(xs, max)),
    Reduction("min", _ax(fnp.min), _ax(np.min), lambda xs: _split(xs, min)),
    Reduction("ptp", _ax(fnp.ptp), _ax(np.ptp),
              lambda xs: [a - b for a, b in zip(_split(xs, max), _split(xs, min))]),
    Reduction("average(weights)", _ax(fnp.average, weights=np.array(W) ** 2),
              _ax(np.average, weights=np.array(W) ** 2),
              lambda xs: [mp.mpf(w) ** 2 / mp.fsum(mp.mpf(v) ** 2 for v in W) for w in W]),
    Reduction("median", _ax(fnp.median), _ax(np.median), _quantile_d(0.5)),
    Reduction("quantile(0.3)", _ax(fnp.quantile, q=0.3), _ax(np.quantile, q=0.3),
              _quantile_d(0.3)),
    Reduction("percentile(30)", _ax(fnp.percentile, q=30.0), _ax(np.percentile, q=30.0),
              _quantile_d(0.3)),
    Reduction("nansum", _ax(fnp.nansum), _ax(np.nansum), _nan(lambda xs: [1] * len(xs)),
              nan_ok=True),
    Reduction("nanprod", _ax(fnp.nanprod), _ax(np.nanprod), _nan(_prod_d), nan_ok=True),
    Reduction("nanmean", _ax(fnp.nanmean), _ax(np.nanmean),
              _nan(lambda xs: [mp.mpf(1) / len(xs)] * len(xs)), nan_ok=True),
    Reduction("nanvar", _ax(fnp.nanvar), _ax(np.nanvar), _nan(_var_d), nan_ok=True),
    Reduction("nanstd", _ax(fnp.nanstd), _ax(np.nanstd), _nan(_std_d), nan_ok=True),
    Reduction("nanmax", _ax(fnp.nanmax), _ax(np.nanmax), _nan(lambda xs: _split(xs, max)),
              nan_ok=True),
    Reduction("nanmin", _ax(fnp.nanmin), _ax(np.nanmin), _nan(lambda xs: _split(xs, min)),
              nan_ok=True),
    Reduction("nanmedian", _ax(fnp.nanmedian), _ax(np.nanmedian), _nan(_quantile_d(0.5)),
              nan_ok=True),
    Reduction("nanquantile(0.3)", _ax(fnp.nanquantile, q=0.3), _ax(np.nanquantile, q=0.3),
              _nan(_quantile_d(0.3)), nan_ok=True),
    Reduction("trapezoid", lambda x, axis=None: fnp.trapezoid(x, axis=-1),
              lambda x, axis=None: np.trapezoid(x, axis=-1), lambda xs: [0.5, 1, 0.5]),
    Reduction("cumsum", lambda x, axis=None: fnp.cumsum(x, axis=-1),
              lambda x, axis=None: np.cumsum(x, axis=-1), _cumsum_vjp, vector=True),
    Reduction("cumprod", lambda x, axis=None: fnp.cumprod(x, axis=-1),
              lambda x, axis=None: np.cumprod(x, axis=-1), _cumprod_vjp, vector=True),
    Reduction("nancumsum", lambda x, axis=None: fnp.nancumsum(x, axis=-1),
              lambda x, axis=None: np.nancumsum(x, axis=-1), None, vector=True),
    Reduction("nancumprod", lambda x, axis=None: fnp.nancumprod(x, axis=-1),
              lambda x, axis=None: np.nancumprod(x, axis=-1), None, vector=True),
    Reduction("cov", lambda x, axis=None: fnp.cov(x, np.array(W)) if x.ndim == 1 else
              fnp.stack([fnp.cov(r, np.array(W)) for r in x]),
              lambda x, axis=None: np.cov(x, np.array(W)) if x.ndim == 1 else
              np.stack([np.cov(r, np.array(W)) for r in x])),
    Reduction("corrcoef", lambda x, axis=None: fnp.corrcoef(x, np.array(W)) if x.ndim == 1
              else fnp.stack([fnp.corrcoef(r, np.array(W)) for r in x]),
              lambda x, axis=None: np.corrcoef(x, np.array(W)) if x.ndim == 1 else
              np.stack([np.corrcoef(r, np.array(W)) for r in x])),
    Reduction("linalg.norm", _fx_norm(None), _np_norm(None), _pnorm_d(2)),
    Reduction("linalg.norm(ord=1)", _fx_norm(1), _np_norm(1), _pnorm_d(1)),
    Reduction("linalg.norm(ord=inf)", _fx_norm(inf), _np_norm(inf), _pnorm_d(inf)),
    Reduction("linalg.norm(ord=-inf)", _fx_norm(-inf), _np_norm(-inf), _pnorm_d(-inf)),
    Reduction("linalg.norm(ord=0)", _fx_norm(0), _np_norm(0), _pnorm_d(0)),
    Reduction("linalg.norm(ord=3)", _fx_norm(3), _np_norm(3), _pnorm_d(3)),
    Reduction("nn.logsumexp", _ax(nn.logsumexp), _ax(sc.logsumexp), _logsumexp_d),
    Reduction("special.logsumexp", _ax(fss.logsumexp), _ax(sc.logsumexp), _logsumexp_d),
    Reduction("nn.softmax", lambda x, axis=None: nn.softmax(x, axis=-1),
              lambda x, axis=None: sc.softmax(x, axis=-1), _softmax_vjp, vector=True),
    Reduction("nn.log_softmax", lambda x, axis=None: nn.log_softmax(x, axis=-1),
              lambda x, axis=None: sc.log_softmax(x, axis=-1), _log_softmax_vjp, vector=True),
]


def _reduction_inputs():
    rows, classes = [], []
    for c, vs in CLASSES.items():
        for v in vs:
            rows += [[v, 1.5, -0.5], [v, v, v], [-0.5, v, v]]
            classes += [c] * 3
    return np.array(rows), classes


def _check_reduction(row, failures):
    X, classes = _reduction_inputs()
    try:
        got = _quiet(row.ours, X, -1)
        got_rows = [_quiet(row.ours, x, None) for x in X]
    except Exception as e:  # noqa: BLE001
        for c in set(classes):
            _record(failures, row.name, c, f"raised {type(e).__name__}: {e}")
        return
    want = _quiet(row.ref, X, -1)
    ok, msg = _values_ok(got, want, row.rtol)
    if msg is None:
        ok_rows = [_values_ok(g, _quiet(row.ref, x, None), row.rtol) for g, x in zip(got_rows, X)]
        msg = next((m for _, m in ok_rows if m), None)
    if msg:
        for c in set(classes):
            _record(failures, row.name, c, msg)
        return
    ok = ok.reshape(len(X), -1).all(axis=1) & np.array([bool(np.all(o)) for o, _ in ok_rows])
    for i in np.flatnonzero(~ok):
        _record(failures, row.name, classes[i],
                f"value at {X[i].tolist()}: {np.asarray(got)[i]!r} != {np.asarray(want)[i]!r}")
    if row.d is None:
        return
    finite_value = np.isfinite(np.asarray(want, dtype=np.float64).reshape(len(X), -1)).all(1)
    refs = []
    for x, fin in zip(X, finite_value):
        r = None
        if fin and (row.nan_ok or not np.isnan(x).any()):
            try:
                with mp.workdps(60):
                    g = row.d([_mp(v) for v in x])
                    r = None if g is None else [_to_float(v) for v in g]
            except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                r = None
            if r is not None and any(v is None for v in r):
                r = None
        refs.append(r)
    have = np.array([r is not None for r in refs])
    want_d = np.array([r if r is not None else [nan] * X.shape[1] for r in refs])

    def scalar(x):  # the whole stack (grad), or one row (vmap of jacfwd: forward mode
        y = row.ours(x, -1)  # would mix 0 * NaN from other rows into every direction)
        return fnp.sum(y * np.array(W)) if row.vector else fnp.sum(y)
    for mode, run in (("grad", lambda: fxad.grad(scalar)(X)),
                      ("jacfwd", lambda: fxad.vmap(fxad.jacfwd(scalar))(X))):
        try:
            d = np.asarray(_quiet(run))
        except Exception as e:  # noqa: BLE001
            for c in set(np.asarray(classes)[have]):
                _record(failures, row.name, c, f"{mode} raised {type(e).__name__}: {e}")
            continue
        ok = _close_where_finite(d, want_d, DERIV_RTOL).all(axis=1) | ~have
        for i in np.flatnonzero(~ok):
            _record(failures, row.name, classes[i],
                    f"gradient ({mode}) at {X[i].tolist()}: {d[i].tolist()} != "
                    f"{want_d[i].tolist()}")


def audit_reductions(failures, rows=None):
    for row in rows or REDUCTIONS:
        _check_reduction(row, failures)


# --- linear algebra: 3x3 matrices of each class -------------------------------------------------

B = np.array([[4.0, 1.0, 2.0], [1.0, 3.0, 1.0], [2.0, 1.0, 5.0]])  # SPD, integer entries
SINGULAR = {
    "rank n-1": [np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),  # last pivot 0
                 np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]])],  # middle one
    "rank n-2": [np.outer([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]), np.zeros((3, 3)),
                 np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]) * 0],
}
SINGULAR["rank n-1"].append(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]))
MATRIX_CLASSES = list(CLASSES) + list(SINGULAR)
MW = np.array([[0.75, -1.25, 2.0], [0.5, 1.0, -0.25], [1.5, -0.5, 0.25]])  # output weights
RHS = np.array([1.0, 2.0, 3.0])


def _matrix_inputs():
    mats, classes = [], []
    for c, vs in CLASSES.items():
        for v in vs:
            if c in ("inf", "nan"):
                m = B.copy()
                m[0, 1] = m[1, 0] = v
            else:
                m = B * v
            mats.append(m)
            classes.append(c)
    for c, ms in SINGULAR.items():
        mats += ms
        classes += [c] * len(ms)
    return mats, classes


@dataclass
class MatrixRow:
    name: str
    ours: Callable
    ref: Callable
    d: Callable | None = None     # mpmath matrix -> gradient of sum(MW * f) (or of f), or None
    rtol: float = REDUCE_RTOL
    dscale: Callable | None = None  # the gradient's natural size at a (where it may be 0)


def _mpm(a):
    return mp.matrix(a.tolist())


def _cofactor(A):
    n = A.rows
    C = mp.matrix(n, n)
    for i in range(n):
        for j in range(n):
            minor = mp.matrix([[A[r, c] for c in range(n) if c != j] for r in range(n) if r != i])
            C[i, j] = (-1) ** (i + j) * mp.det(minor)
    return C


def _inv_t(A):
    U, S, V = _svd(A)
    if min(S) < _EPS * max(S):
        return None
    return mp.inverse(A).T


_EPS = mp.mpf(10) ** -40  # singular values this much below the largest are zeros


def _svd(A):
    U, S, V = mp.svd_r(A)  # A = U diag(S) V
    return U, S, V


def _sv_grad(A, k):
    """d σ_k / dA = u_k v_kᵀ (σ sorted descending; needs a simple σ_k)."""
    U, S, V = _svd(A)
    if max(S) == 0:
        return None
    s = sorted(range(len(S)), key=lambda i: -S[i])
    if any(abs(S[s[k]] - S[j]) < _EPS * max(S) for j in range(len(S)) if j != s[k]) \
            or S[s[k]] < _EPS * max(S):
        return None
    i = s[k]
    return U[:, i] * V[i, :]


def _norm2_d(A):
    return _sv_grad(A, 0)


def _nuc_d(A):
    U, S, V = _svd(A)
    if min(S) < _EPS * max(S):
        return None
    return U * V


def _cond_d(A):
    U, S, V = _svd(A)
    g1, gn = _sv_grad(A, 0), _sv_grad(A, len(S) - 1)
    if g1 is None or gn is None:
        return None
    s1, sn = max(S), min(S)
    return (g1 * sn - gn * s1) / sn ** 2


def _inv_d(A):
    it = _inv_t(A)
    return None if it is None else -(it * _mpm(MW) * it)


def _solve_d(A):
    it = _inv_t(A)
    if it is None:
        return None
    x = mp.inverse(A) * mp.matrix(RHS.tolist())
    w = mp.matrix(MW[0].tolist())
    return -(it * w) * x.T


def _eigvalsh_d(A):
    """sum(w λ) of the symmetric part (A + Aᵀ)/2: the gradient is Σ w v vᵀ."""
    E, Q = mp.eigsy(mp.matrix([[(A[i, j] + A[j, i]) / 2 for j in range(3)] for i in range(3)]))
    order = sorted(range(3), key=lambda i: E[i])
    if len({E[i] for i in order}) < 3:
        return None
    G = mp.matrix(3, 3)
    for w, i in zip(MW[0], order):
        G += w * Q[:, i] * Q[:, i].T
    return G


def _sym(a):
    """The symmetric part that fxad's symmetric routines read (NumPy's read one triangle)."""
    return a + (a.T - a) / 2


def _svdvals_d(A):
    grads = [_sv_grad(A, k) for k in range(3)]
    if any(g is None for g in grads):
        return None
    return sum((w * g for w, g in zip(MW[0], grads)), mp.matrix(3, 3))


def _weighted(f, k=None):
    """sum(MW * f(a)) (matrix outputs), MW[0] @ f(a) (vectors) or f(a) (scalars)."""
    def g(a):
        y = f(a)
        nd = len(np.shape(y)) if not isinstance(y, fxad.Tracer) else len(y.shape)
        return fnp.sum(y * (MW if nd == 2 else MW[0] if nd == 1 else 1.0))
    return g


MATRIX = [
    MatrixRow("linalg.det", fnp.linalg.det, np.linalg.det, _cofactor,  # ~ max|a|^(n-1)
              dscale=lambda a: np.max(np.abs(a)) ** (a.shape[-1] - 1)),
    MatrixRow("linalg.slogdet[0]", lambda a: fnp.linalg.slogdet(a)[0],
              lambda a: np.linalg.slogdet(a)[0]),
    MatrixRow("linalg.slogdet[1]", lambda a: fnp.linalg.slogdet(a)[1],
              lambda a: np.linalg.slogdet(a)[1], _inv_t),
    MatrixRow("linalg.inv", fnp.linalg.inv, np.linalg.inv, _inv_d),
    MatrixRow("linalg.solve", lambda a: fnp.linalg.solve(a, RHS),
              lambda a: np.linalg.solve(a, RHS), _solve_d),
    MatrixRow("linalg.norm(fro)", fnp.linalg.norm, np.linalg.norm,
              lambda A: None if mp.norm(A) == 0 else A / mp.norm(A)),
    MatrixRow("linalg.norm(2)", lambda a: fnp.linalg.norm(a, 2), lambda a: np.linalg.norm(a, 2),
              _norm2_d),
    MatrixRow("linalg.norm(nuc)", lambda a: fnp.linalg.norm(a, "nuc"),
              lambda a: np.linalg.norm(a, "nuc"), _nuc_d),
    MatrixRow("linalg.cond", fnp.linalg.cond, np.linalg.cond, _cond_d),
    MatrixRow("linalg.eigvalsh", fnp.linalg.eigvalsh, lambda a: np.linalg.eigvalsh(_sym(a)),
              _eigvalsh_d),
    MatrixRow("linalg.svdvals", fnp.linalg.svdvals, np.linalg.svdvals, _svdvals_d),
    MatrixRow("linalg.matrix_rank", fnp.linalg.matrix_rank, np.linalg.matrix_rank),
    MatrixRow("linalg.pinv", fnp.linalg.pinv, lambda a: np.linalg.pinv(_finite(a))),
    MatrixRow("linalg.cholesky", fnp.linalg.cholesky, lambda a: np.linalg.cholesky(_sym(a))),
    MatrixRow("linalg.matrix_power(3)", lambda a: fnp.linalg.matrix_power(a, 3),
              lambda a: np.linalg.matrix_power(a, 3)),
    MatrixRow("linalg.lstsq[0]", lambda a: fnp.linalg.lstsq(a, RHS)[0],
              lambda a: np.linalg.lstsq(_finite(a), RHS)[0]),
    MatrixRow("scipy.linalg.expm", fsl.expm, sl.expm),
    MatrixRow("scipy.linalg.lu_solve", lambda a: fsl.lu_solve(fsl.lu_factor(a), RHS),
              lambda a: sl.lu_solve(sl.lu_factor(a), RHS), _solve_d),
    MatrixRow("scipy.linalg.solve_triangular", lambda a: fsl.solve_triangular(a, RHS, lower=True),
              lambda a: sl.solve_triangular(a, RHS, lower=True)),
    MatrixRow("scipy.linalg.cho_solve", lambda a: fsl.cho_solve(fsl.cho_factor(a), RHS),
              lambda a: sl.cho_solve(sl.cho_factor(_sym(a)), RHS)),
]


def _finite(a):
    """numpy.linalg.pinv (svd, lstsq) never returns on a matrix with an inf entry (LAPACK's
    gesdd loops); the audit counts that as NumPy raising. fxad's svd gives NaNs there."""
    if not np.isfinite(a).all():
        raise np.linalg.LinAlgError("numpy.linalg.svd does not return for inf entries")
    return a


def _normwise_ok(got, want, rtol, derivative=False, scale=0.0):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    fin = np.isfinite(want)
    scale = max(scale, np.max(np.abs(want[fin])) if fin.any() else 0.0)
    with np.errstate(all="ignore"):
        bad = np.isnan(got) != np.isnan(want)
        if derivative:  # checked where the reference is finite
            bad &= fin
        else:
            bad |= np.isinf(want) & (got != want)
        bad |= fin & ~(np.abs(got - want) <= rtol * scale + ATOL)
    return not bad.any()


def _check_matrix(row, failures, only=None):
    mats, classes = _matrix_inputs()
    for a, c in zip(mats, classes):
        if only is not None and c != only:
            continue
        try:
            want = _quiet(row.ref, a)
        except (np.linalg.LinAlgError, ValueError) as e:  # SciPy's check_finite: ValueError
            want = e
        try:
            got = _quiet(row.ours, a)
        except Exception as e:  # noqa: BLE001
            if not isinstance(want, Exception):
                _record(failures, row.name, c, f"raised {type(e).__name__}: {e}")
            continue
        if isinstance(want, Exception):
            if np.all(np.isfinite(np.asarray(got, dtype=np.complex128))):
                _record(failures, row.name, c, f"NumPy raised {want!s:.40}, fxad returned the "
                                               f"finite {np.asarray(got).tolist()}")
            continue
        got_a, want_a = np.asarray(got), np.asarray(want)
        if got_a.dtype != want_a.dtype or got_a.shape != want_a.shape:
            _record(failures, row.name, c, f"dtype/shape {got_a.dtype}{got_a.shape} != "
                                           f"{want_a.dtype}{want_a.shape}")
            continue
        if not _normwise_ok(got_a, want_a, row.rtol):
            _record(failures, row.name, c, f"value at {a.tolist()}: {got_a.tolist()} != "
                                           f"{want_a.tolist()}")
        if row.d is None or not np.all(np.isfinite(want_a)) or not np.all(np.isfinite(a)):
            continue
        try:
            with mp.workdps(60):
                g = row.d(_mpm(a))
                ref = None if g is None else np.array(
                    [[_to_float(g[i, j]) for j in range(3)] for i in range(3)], dtype=object)
        except (ValueError, ZeroDivisionError, OverflowError, TypeError):
            ref = None
        if ref is None or any(v is None for v in ref.ravel()):
            continue
        ref = ref.astype(np.float64)
        f = _weighted(row.ours)
        for mode, run in (("grad", lambda: fxad.grad(f)(a)), ("jacfwd", lambda: fxad.jacfwd(f)(a))):
            try:
                d = np.asarray(_quiet(run))
            except Exception as e:  # noqa: BLE001
                _record(failures, row.name, c, f"{mode} raised {type(e).__name__}: {e}")
                continue
            if not _normwise_ok(d, ref, DERIV_RTOL * 100, derivative=True,
                                scale=row.dscale(a) if row.dscale else 0.0):
                _record(failures, row.name, c, f"gradient ({mode}) at {a.tolist()}: "
                                               f"{d.tolist()} != {ref.tolist()}")


def audit_matrices(failures, rows=None):
    for row in rows or MATRIX:
        _check_matrix(row, failures)


# --- the documented differences, and the whole audit ----------------------------------------------

_NORM = ("fxad's norms scale by the largest entry: finite and right where NumPy's unscaled sum "
         "of squares overflows to inf or underflows to 0")
_LAPACK = ("the inverse overflows; which entries LAPACK makes inf and which NaN depends on the "
           "factorization (fxad factors aᵀ, lstsq goes through pinv)")
_POW = ("d/dx x**y = y·x^(y-1): x^(y-1) overflows at a subnormal x when |y| < 1e-15, "
        "though y·x^(y-1) is finite")
DOCUMENTED = {
    ("power", "subnormal"): _POW,
    ("float_power", "subnormal"): _POW,
    ("sinc", "huge"): ("NumPy's sinc is sin(πx)/(πx) with πx rounded: at |x| >= 2^52 its value is "
                       "rounding noise of size 1/x, and so is fxad's derivative of it"),
    ("linalg.norm", "huge"): _NORM, ("linalg.norm", "tiny"): _NORM,
    ("linalg.norm(ord=3)", "huge"): _NORM, ("linalg.norm(ord=3)", "tiny"): _NORM,
    ("linalg.norm(fro)", "huge"): _NORM, ("linalg.norm(fro)", "tiny"): _NORM,
    ("linalg.inv", "subnormal"): _LAPACK, ("linalg.solve", "subnormal"): _LAPACK,
    ("linalg.lstsq[0]", "subnormal"): _LAPACK, ("scipy.linalg.cho_solve", "subnormal"): _LAPACK,
    ("scipy.linalg.lu_solve", "inf"): ("check_finite is accepted and ignored (it cannot be "
                                       "checked under jit): fxad solves as numpy.linalg.solve "
                                       "does (here the finite limit), SciPy raises ValueError"),
    ("linalg.slogdet[0]", "nan"): "NumPy's sign for a matrix with a NaN entry is 1.0; fxad's is NaN",
}


def rows():
    """Every row, with the function that audits it."""
    return ([(r, audit_elementwise) for r in UNARY + BINARY]
            + [(r, audit_reductions) for r in REDUCTIONS] + [(r, audit_matrices) for r in MATRIX])


def classes_of(row):
    return MATRIX_CLASSES if isinstance(row, MatrixRow) else list(CLASSES)


def audit(selected=None):
    failures = {}
    for row, run in rows():
        if selected is None or row.name in selected:
            run(failures, [row])
    return failures


def _run_json(row, only, queue):
    failures = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if only is None:
            next(run for r, run in rows() if r is row)(failures, [row])
        else:
            _check_matrix(row, failures, only)
    queue.put({f"{n}|{c}": msgs[0] for (n, c), msgs in failures.items()})


def _in_child(row, only, timeout):
    import multiprocessing as mproc
    ctx = mproc.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_run_json, args=(row, only, q))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        return None
    return q.get() if not q.empty() else {}


def audit_json(timeout=120):
    """{"name|class": first failure} for every row, each in a child process; a matrix row
    that does not return (LAPACK looping on inf entries) is rerun one class at a time, and
    the class that does not return fails as "did not return"."""
    out = {}
    for row, _ in rows():
        got = _in_child(row, None, timeout)
        if got is None:
            got = {}
            for c in classes_of(row):
                one = _in_child(row, c, timeout) if isinstance(row, MatrixRow) else None
                got.update({f"{row.name}|{c}": "did not return"} if one is None else one)
        out.update(got)
    return out


def table(before=None):
    """The markdown table for notes/edge_audit.md: per function and input class, OK, fixed
    (failed on the code `before` was produced from) or doc (a documented difference)."""
    now = audit()
    before = before or {}
    counts = {"OK": 0, "fixed": 0, "doc": 0, "FAIL": 0}
    lines = []
    for head, sel in (("elementwise", lambda r: isinstance(r, Row)),
                      ("reductions", lambda r: isinstance(r, Reduction)),
                      ("linear algebra (3x3 matrices)", lambda r: isinstance(r, MatrixRow))):
        cls = MATRIX_CLASSES if head.startswith("linear") else list(CLASSES)
        lines += ["", f"**{head}**", "", "| function | " + " | ".join(cls) + " |",
                  "|---" * (len(cls) + 1) + "|"]
        for row, _ in rows():
            if not sel(row):
                continue
            cells = []
            for c in cls:
                key = (row.name, c)
                s = ("doc" if key in DOCUMENTED else "FAIL") if key in now else \
                    "fixed" if f"{row.name}|{c}" in before else "OK"
                counts[s] += 1
                cells.append(s)
            lines.append(f"| {row.name} | " + " | ".join(cells) + " |")
    return counts, "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    import argparse
    import json
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the failing cells as JSON")
    ap.add_argument("--before", help="JSON from --json on older code: marks cells 'fixed'")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per row (--json)")
    args = ap.parse_args()
    if args.json:
        print(json.dumps(audit_json(args.timeout), indent=1, sort_keys=True))
    else:
        counts, text = table(json.load(open(args.before)) if args.before else None)
        print(", ".join(f"{k}: {v}" for k, v in counts.items()))
        print(text)
