"""A FLOP-and-memory counter over any fxad program, written on the public extension API
(fxad.extend): an Interpreter whose values are abstract arrays, with a handler per primitive
family and a default for the rest. It counts the program of f, of grad(f), of a jit'ed or
scanned function — anything fxad.make_jaxpr stages.

    python examples/flop_counter.py [--smoke]
"""
import sys

import numpy as np

import fxad
import fxad.extend as fe
import fxad.numpy as fnp
from fxad import lax


class Cost:
    """Counts for one run of a program: floating-point operations and bytes written."""

    def __init__(self):
        self.flops = 0
        self.bytes = 0
        self.by_primitive = {}

    def add(self, name, flops, nbytes):
        self.flops += flops
        self.bytes += nbytes
        self.by_primitive[name] = self.by_primitive.get(name, 0) + flops


def _size(aval):
    return int(np.prod(aval.shape, dtype=np.int64))


def counter(cost, scale=1):
    """An Interpreter adding what each equation costs (times `scale`, for loop bodies)."""
    def default(interp, eqn, ins):
        # unknown primitives: one operation per output element (a lower bound, said so)
        out = sum(_size(v.aval) for v in eqn.outvars)
        cost.add(eqn.primitive.name, scale * out * (not subs(eqn)),
                 scale * sum(_size(v.aval) * v.aval.dtype.itemsize for v in eqn.outvars))
        for sub in subs(eqn):
            counter(cost, scale).run(sub, *sub.in_avals)
        return [v.aval for v in eqn.outvars]

    def dot_general(interp, eqn, ins):
        (lc, _), _ = eqn.params["dimension_numbers"]
        k = int(np.prod([ins[0].shape[a] for a in lc], dtype=np.int64))
        out = eqn.outvars[0].aval
        cost.add("dot_general", scale * 2 * _size(out) * k, scale * _size(out) * 8)
        return [out]

    def reduction(interp, eqn, ins):
        out = eqn.outvars[0].aval
        cost.add(eqn.primitive.name, scale * _size(ins[0]), scale * _size(out) * 8)
        return [out]

    def scan(interp, eqn, ins):
        body = eqn.params["jaxpr"]
        counter(cost, scale * eqn.params["length"]).run(body, *body.in_avals)
        return [v.aval for v in eqn.outvars]

    def moves(interp, eqn, ins):  # data movement: bytes, no arithmetic
        out = eqn.outvars[0].aval
        cost.add(eqn.primitive.name, 0, scale * _size(out) * out.dtype.itemsize)
        return [out]

    it = fe.Interpreter(default=default, constant=lambda value, aval: aval, name="cost")
    it.def_rule(fe.primitive("dot_general"))(dot_general)
    it.def_rule(*[fe.primitive(n) for n in ("reduce_sum", "reduce_max", "reduce_min")])(
        reduction)
    it.def_rule(fe.primitive("scan"))(scan)
    it.def_rule(*[fe.primitive(n) for n in ("reshape", "transpose", "broadcast_to",
                                            "concatenate", "getitem", "flip")])(moves)
    return it


def subs(eqn):
    return fe.subjaxprs(eqn) if eqn.primitive.name != "scan" else []


def count(f, *args):
    closed = fxad.make_jaxpr(f)(*args)
    cost = Cost()
    counter(cost).run(closed, *closed.in_avals)
    return cost


def main(smoke):
    n = 64 if smoke else 512
    rng = np.random.default_rng(0)
    W, x = rng.standard_normal((n, n)), rng.standard_normal(n)

    def layer(x):
        return fnp.tanh(W @ x)

    c = count(layer, x)
    assert c.by_primitive["dot_general"] == 2 * n * n
    assert c.by_primitive["tanh"] == n
    print(f"tanh(W @ x), n = {n}: {c.flops} flops, {c.bytes} bytes written")

    loss = lambda x: fnp.sum(layer(x) ** 2)  # noqa: E731
    g = count(fxad.grad(loss), x)
    assert g.by_primitive["dot_general"] == 2 * (2 * n * n)  # forward and transposed products
    print(f"grad of its squared norm: {g.flops} flops ({g.flops / c.flops:.1f}x the layer)")

    def rnn(x):
        return lax.scan(lambda h, _: (fnp.tanh(W @ h), None), x, None, length=10)[0]
    r = count(fxad.jit(rnn), x)
    assert r.by_primitive["dot_general"] == 10 * 2 * n * n
    print(f"ten steps of an RNN under jit and scan: {r.flops} flops")
    print("flop counter: every count checked")


if __name__ == "__main__":
    main("--smoke" in sys.argv)
