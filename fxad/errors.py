"""fxad's exceptions. Each also derives from the built-in a user would catch."""


__all__ = [
    "CompilationWarning", "ConcretizationError", "EscapedTracerError", "FxadError",
    "FxadTypeError", "FxadValueError", "InexactSolutionWarning", "JaxprTypeError",
    "OpaqueFunctionError", "RuleNotImplementedError", "TracerArrayConversionError",
]


class FxadError(Exception):
    """Base class of every error fxad raises on purpose."""


class FxadTypeError(FxadError, TypeError):
    """Bad input type or dtype, or a result that is not what the caller expects."""


class FxadValueError(FxadError, ValueError):
    """Bad input value or shape."""


class EscapedTracerError(FxadError, RuntimeError):
    """A tracer was used after the transformation that made it had ended."""


class ConcretizationError(FxadError, TypeError):
    """Python needed a concrete value (if, int(), float()) but got a traced one."""


class TracerArrayConversionError(FxadError, TypeError):
    """np.asarray / __array__ of a tracer: NumPy cannot see a traced value."""


class OpaqueFunctionError(FxadError, TypeError):
    """A transformation needs to see inside an opaque function (pure_callback) to
    differentiate it; a custom_jvp or custom_vjp around it gives the derivative."""


class RuleNotImplementedError(FxadError, NotImplementedError):
    """A primitive lacks the rule a transformation needs."""


class JaxprTypeError(FxadError, TypeError):
    """A jaxpr failed the type checker."""


class CompilationWarning(UserWarning):
    """jit's compiled (numba) backend is unavailable or declined a program, which then runs
    on the NumPy backend: same results, NumPy's speed."""


class InexactSolutionWarning(UserWarning):
    """A derivative by the implicit function theorem (fxad.scipy.optimize) was taken at a
    solution whose optimality residual is large: it is the derivative at a point that is
    only close to the root, accurate to about the residual shown. Tighten the solver's
    tolerance."""


class UnboundAxisError(FxadError, NameError):
    """A collective (psum, all_gather, axis_index, ...) named an axis that no enclosing
    vmap(axis_name=...), pmap or shard_map binds."""


class DistributedError(FxadError, RuntimeError):
    """A step of an SPMD program run by a distributed executor failed (a worker died and the
    task could not be retried, a task raised); the caller's values are unchanged."""
