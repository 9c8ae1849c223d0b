"""Contractions and other bilinear or linear transforms: dot_general, the convolutions (neural
network, np.convolve, scipy.signal), and the discrete Fourier transform."""
from . import conv, convolve, dot, fft, signal_conv  # noqa: F401
