"""`checkpoint_name`: the identity, marking a value by name so a checkpoint policy
(`fxad.checkpoint_policies.save_only_these_names`) can choose to save it."""
from __future__ import annotations

from ...core import Primitive, ShapedArray
from ..helpers import deflinear, forward_if_same_type

checkpoint_name_p = Primitive("checkpoint_name", memory="views")  # the identity, named
checkpoint_name_p.def_impl(lambda x, name: x)
checkpoint_name_p.def_abstract_eval(lambda x, name: ShapedArray(x.shape, x.dtype))
deflinear(checkpoint_name_p, lambda ct, x, name: [ct])
checkpoint_name_p.def_batch(lambda vals, dims, name: (checkpoint_name(vals[0], name), dims[0]))
checkpoint_name_p.def_lowering(lambda ctx, args, name: args[0])
checkpoint_name_p.def_simplify("forward", forward_if_same_type)  # jit drops it
def checkpoint_name(x, name): return checkpoint_name_p.bind(x, name=str(name))
