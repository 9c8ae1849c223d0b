"""Makers: equations that name a value for rematerialization or leave the program for the
host: fxad.checkpoint_name outside a checkpoint (where it stays an equation; inside one it is
part of a custom rule the jaxpr does not show) and under jit, and pure_callback (sin and cos
on NumPy, with custom_jvp rules calling each other: program.pc_sin / pc_cos)."""
from __future__ import annotations

from ..generator import split_point
from ..program import _f
from ..registry import maker


@maker(weight=1)
def mk_checkpoint_name(g):
    i = g.pick()
    j = g.partner(i)
    name = g.choice(["'h'", "'z'"])
    if g.coin(0.5):
        return "checkpoint_name", f"fnp.tanh(fxad.checkpoint_name(@0 * @1, {name})) + @0", [i, j]
    return "checkpoint_name_remat", (
        f"fxad.remat(lambda a, b: fnp.sin(fxad.checkpoint_name(a * b, {name})) * a, "
        f"policy=fxad.checkpoint_policies.save_only_these_names({name}))(@0, @1) + "
        f"fxad.checkpoint_name(@1, {name})"), [i, j]


@maker(weight=1)
def mk_pure_callback(g):
    """Through functions with rules (pc_sin / pc_cos: inside their custom_jvp equation), or
    bare, as a constant: np.sign of a value MARGIN from 0, its argument stop_gradient'ed."""
    i = g.pick()
    kind = g.choice(["pc_sin", "pc_cos", "pc_nested", "pure_callback_sign"])
    if kind == "pure_callback_sign":
        j = g.partner(i)
        c = split_point(g, g.vals(j))
        return kind, (f"@0 * fxad.pure_callback(np.sign, fxad.ShapeDtypeStruct(@1.shape, "
                      f"@1.dtype), lax.stop_gradient(@1 - {_f(c)}), vmap_method="
                      f"{g.choice(['expand_dims', 'sequential', 'broadcast_all'])!r})"), [i, j]
    if kind == "pc_nested":
        return kind, "pc_sin(pc_cos(@0) * 1.5) * @0", [i]
    return kind, f"{kind}(@0) * fnp.tanh(@0)", [i]
