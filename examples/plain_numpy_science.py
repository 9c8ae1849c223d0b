"""Differentiating unmodified NumPy code: a small signal-analysis pipeline written with
`import numpy as np` only (FFT band power, interpolation, a polynomial trend fit, robust
statistics, a spectral radius), taken through grad, jit(grad) and vmap(grad), and checked
against central differences of the same NumPy function.

    python examples/plain_numpy_science.py           # 256 samples
    python examples/plain_numpy_science.py --smoke   # 64 samples
"""
import argparse

import numpy as np

import fxad


def score(signal, t):
    """Plain NumPy: nothing here knows about fxad."""
    trend = np.polyval(np.polyfit(t, signal, 2), t)            # least-squares trend
    detrended = signal - trend
    spectrum = np.abs(np.fft.rfft(detrended)) ** 2             # power spectrum
    band = np.sum(spectrum[2:8]) / np.sum(spectrum[1:])       # share of a low band
    resampled = np.interp(np.linspace(t[0], t[-1], 17), t, detrended)
    spread = np.percentile(resampled, 90) - np.median(resampled)
    lag = np.stack([detrended[:-2], detrended[1:-1]])          # a 2x2 autoregression
    coef = np.linalg.lstsq(lag.T, detrended[2:], rcond=None)[0]
    radius = np.max(np.abs(np.linalg.eigvals(np.array([[0.0, 1.0], [0.0, 0.0]])
                                             + np.outer([0.0, 1.0], coef[::-1]))))
    return band + spread + 0.1 * radius


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="small problem for CI")
    n = 64 if ap.parse_args().smoke else 256
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 4.0, n)
    signal = np.sin(3 * t) + 0.3 * t + 0.2 * rng.standard_normal(n)

    g = fxad.grad(score)(signal, t)
    # central differences along a random direction, of the NumPy function itself
    d = rng.standard_normal(n)
    eps = 1e-6
    fd = (score(signal + eps * d, t) - score(signal - eps * d, t)) / (2 * eps)
    print(f"score {score(signal, t):.6f}; directional derivative: grad {g @ d:.8f}, "
          f"central differences {fd:.8f}")
    assert np.isclose(g @ d, fd, rtol=1e-5, atol=1e-8)

    gj = fxad.jit(fxad.grad(score))(signal, t)
    assert np.allclose(gj, g, rtol=1e-10, atol=1e-12)
    batch = np.stack([signal, signal[::-1], 0.5 * signal])
    gv = fxad.vmap(fxad.grad(score), in_axes=(0, None))(batch, t)
    assert np.allclose(gv, np.stack([fxad.grad(score)(s, t) for s in batch]), rtol=1e-9,
                       atol=1e-12)
    print("jit(grad) and vmap(grad) agree with grad")


if __name__ == "__main__":
    main()
