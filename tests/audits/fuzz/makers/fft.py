"""Makers: numpy.fft's transforms, made real unless they are real-output inverses."""
from __future__ import annotations

import numpy as np

from ..generator import guard
from ..program import MARGIN
from ..registry import maker


FFT_REAL = ["lax.real({z})", "lax.imag({z})", "fnp.abs({z}) ** 2", "lax.real({z} * lax.conj({z}))"]


@maker(weight=2)
def mk_fft(g):
    """numpy.fft's transforms (n / s / axes / norm variations), of real or complex values,
    made real (real / imag / |z|^2) unless they are the real-output inverse transforms."""
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    nd = len(s)
    kind = g.choice(["fft", "ifft", "rfft", "irfft", "fft2", "rfftn", "irfftn", "fftn", "irfft2"])
    x = "@0"
    if kind not in ("rfft", "rfftn") and g.coin(0.4):
        x = "lax.complex(@0, fnp.sin(@0))"
    norm = g.choice(["", "", ", norm='ortho'", ", norm='forward'", ", norm='backward'"])
    if kind in ("fft", "ifft", "rfft", "irfft"):
        a = g.axis(nd)
        n = None if g.coin(0.5) else g.int(max(1, s[a] - 2), s[a] + 2)
        guard(kind != "irfft" or n is not None or s[a] >= 2)
        opts = ("" if n is None else f", n={n}") + ("" if a == -1 and g.coin(0.5) else f", axis={a}")
        call = f"fnp.fft.{kind}({x}{opts}{norm})"
    else:
        if kind in ("fft2", "irfft2"):
            guard(nd >= 2)
            axes = [nd - 2, nd - 1] if g.coin(0.5) else g.perm(range(nd))[:2]
        else:
            axes = g.perm(range(nd))[:g.int(1, min(nd, 3))] if g.coin(0.7) else list(range(nd))
        sizes = None if g.coin(0.5) else [g.int(max(1, s[a] - 1), s[a] + 2) for a in axes]
        guard(not kind.startswith("irfft") or sizes is not None or s[axes[-1]] >= 2)
        default = axes == [nd - 2, nd - 1] if kind in ("fft2", "irfft2") else axes == list(range(nd))
        opts = ("" if sizes is None else f", s={tuple(sizes)}") + \
            ("" if default and g.coin(0.5) else f", axes={tuple(axes)}")
        call = f"fnp.fft.{kind}({x}{opts}{norm})"
    if kind.startswith("irfft"):
        return kind, call, [i]
    form = g.choice(FFT_REAL)
    if "abs" in form:  # |z| is kinked at 0
        guard(np.min(np.abs(g.evaluate(call, [i]))) >= MARGIN)
    return kind, form.format(z=call), [i]
