"""The fxad.numpy composites refuse what they do not support with a clear error (the class,
and a message naming the fix)."""
import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadTypeError, FxadValueError

from ..rules.common import XP


@pytest.mark.parametrize("call,err,match", [
    (lambda x: fnp.quantile(x, x[0]), FxadTypeError, "q must be a concrete"),
    (lambda x: fnp.quantile(x, 1.5), FxadValueError, r"\[0, 1\]"),
    (lambda x: fnp.quantile(x, 0.5, method="weibull"), FxadValueError, "not supported"),
    (lambda x: fnp.pad(x, 1, mode="reflect", reflect_type="odd"), FxadValueError, "even"),
    (lambda x: fnp.pad(x, 1, mode="empty"), FxadValueError, "modes constant, edge"),
    (lambda x: fnp.gradient(x, np.arange(4.0)), FxadTypeError, "scalar spacings"),
    (lambda x: fnp.insert(fnp.reshape(x, (2, 2)), 1, 0.0, axis=0), FxadValueError, "1-d"),
    (lambda x: fnp.max(x, where=x > 0), FxadValueError, "initial="),
    (lambda x: fnp.interp(x, XP[:4], x, period=1.0), FxadTypeError, "period"),
    (lambda x: fnp.linalg.pinv(fnp.reshape(x, (2, 2)), rcond=x[0]), FxadValueError, "concrete"),
    (lambda x: fnp.linalg.matrix_power(fnp.reshape(x, (2, 2)), 1.5), FxadValueError, "integer"),
    (lambda x: x.sort(), FxadTypeError, "np.sort"),
    (lambda x: fnp.convolve(x, fnp.reshape(x, (2, 2))), FxadValueError, "1-d"),
    (lambda x: fnp.fft.rfft(x * 1j), FxadTypeError, "real input"),
    (lambda x: fnp.fft.fft(x, 0), FxadValueError, "data points"),
    (lambda x: fnp.fft.fft(x, norm="unitary"), FxadValueError, "norm"),
    (lambda x: fnp.fft.fftn(x, axes=(0, 0)), FxadValueError, "axes"),
    # NumPy's integer conversions of a differentiated value name the two ways out
    (lambda x: x[np.int64(x)], fxad.errors.TracerArrayConversionError, "stop_gradient"),
    (lambda x: x[np.asarray(x, dtype=int)], fxad.errors.TracerArrayConversionError,
     r"astype\('int64'\)"),
])
def test_clear_errors(call, err, match):
    with pytest.raises(err, match=match):
        fxad.grad(lambda x: fnp.sum(call(x)))(np.array([0.3, -1.2, 0.8, 2.0]))


@pytest.mark.parametrize("obj", [object(), [None, 1.0], {"a": 1.0}])
def test_no_arrays_of_python_objects(obj):
    # NumPy makes dtype=object arrays of these; fxad (as JAX) refuses them at once
    for make in (fnp.asarray, fnp.array):
        with pytest.raises(FxadTypeError, match="dtype=object"):
            make(obj)
