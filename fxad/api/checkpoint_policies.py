"""Policies for `fxad.checkpoint(f, policy=...)`: which values inside `f` the forward pass
keeps for the backward pass (the rest is recomputed). A policy is a function
`policy(primitive, *input_avals, **params) -> bool` asked about each equation of the staged
function (calls inlined); True keeps that equation's outputs. Write your own the same way."""
from __future__ import annotations

from ..rules.contraction.dot import dot_general_p
from ..rules.control.remat import checkpoint_name_p


def everything_saveable(prim, *avals, **params) -> bool:
    """Keep everything: no recomputation (as without checkpoint)."""
    return True


def nothing_saveable(prim, *avals, **params) -> bool:
    """Keep nothing but the inputs: recompute everything (checkpoint's default)."""
    return False


def dots_saveable(prim, *avals, **params) -> bool:
    """Keep the results of matrix products (dot_general), recompute the cheap rest."""
    return prim is dot_general_p


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *avals, **params) -> bool:
    """Keep the results of matrix products without batch dimensions (plain matmuls, not
    batched ones such as attention's)."""
    if prim is not dot_general_p:
        return False
    (_, _), (lhs_batch, _) = params["dimension_numbers"]
    return not lhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_only_these_names(*names: str):
    """Keep the values marked with fxad.checkpoint_name(x, name) for these names."""
    names = frozenset(names)

    def policy(prim, *avals, **params):
        return prim is checkpoint_name_p and params["name"] in names
    return policy


def save_any_names_but_these(*names: str):
    """Keep every named value (fxad.checkpoint_name) except those with these names."""
    names = frozenset(names)

    def policy(prim, *avals, **params):
        return prim is checkpoint_name_p and params["name"] not in names
    return policy


def save_anything_except_these_names(*names: str):
    """Keep everything except the values named with these names."""
    names = frozenset(names)

    def policy(prim, *avals, **params):
        return not (prim is checkpoint_name_p and params["name"] in names)
    return policy


def save_from_both_policies(policy_1, policy_2):
    """Keep what either policy keeps."""
    def policy(prim, *avals, **params):
        return policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)
    return policy


__all__ = ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
           "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
           "save_only_these_names", "save_any_names_but_these",
           "save_anything_except_these_names", "save_from_both_policies"]
