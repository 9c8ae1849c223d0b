"""The registry of operation makers. A maker is a function of the generator (`Gen`) returning
(kind, expr, args) or raising Reject; it registers itself, with the weight the generator's
random choice gives it, by decorating it with `@maker(weight=...)`.

A maker is drawn by its position in the weighted list (each maker repeated `weight` times),
so the order of that list is part of what a seed means. PINNED is the order the makers had
when the fuzzer was one file (tests/fuzz.py): it keeps every seed generating the programs it
generated then, so a failure reported with its seed stays reproducible. Makers not in PINNED
(new families) come after those, in the order they register (import order)."""
from __future__ import annotations

PINNED = (
    "mk_unary_free",
    "mk_affine",
    "mk_exp_family",
    "mk_hyperbolic",
    "mk_positive_domain",
    "mk_reciprocal",
    "mk_bounded_domain",
    "mk_logit",
    "mk_kinked_unary",
    "mk_binary_arith",
    "mk_div",
    "mk_pow",
    "mk_xlogy",
    "mk_maxmin",
    "mk_arctan2_hypot",
    "mk_where_mask",
    "mk_where_cmp",
    "mk_reduction",
    "mk_softmax",
    "mk_layer_norm",
    "mk_reshape",
    "mk_ravel",
    "mk_transpose",
    "mk_expand_squeeze",
    "mk_broadcast_to",
    "mk_flip_roll",
    "mk_tile_repeat_pad",
    "mk_matrix_structure",
    "mk_cumulative",
    "mk_getitem",
    "mk_take",
    "mk_at",
    "mk_matmul",
    "mk_einsum",
    "mk_tensordot",
    "mk_products",
    "mk_concatenate",
    "mk_stack",
    "mk_split",
    "mk_linalg",
    "mk_cond",
    "mk_fori",
    "mk_scan",
    "mk_inner",
    "mk_custom",
    "mk_traced_index",
    "mk_floor_rem",
    "mk_where_logic",
    "mk_complex",
    "mk_complex_linalg",
    "mk_while",
    "mk_order_stats",
    "mk_sequences",
    "mk_pad_rotate",
    "mk_linalg_more",
    "mk_fft",
    "mk_ufuncs_more",
)

MAKERS: list = []  # (maker, weight), in the order the weighted list reads them
_registered: list = []


def _rank(entry):
    k, (fn, _) = entry
    return (PINNED.index(fn.__name__) if fn.__name__ in PINNED else len(PINNED), k)


def maker(weight):
    """Register the decorated maker with this weight."""
    def register(fn):
        _registered.append((fn, weight))
        MAKERS[:] = [e for _, e in sorted(enumerate(_registered), key=_rank)]
        return fn
    return register


def check_complete():
    """Every pinned maker registered (a renamed one would silently change every seed)."""
    names = {fn.__name__ for fn, _ in MAKERS}
    missing = [n for n in PINNED if n not in names]
    if missing:
        raise RuntimeError(f"pinned makers not registered: {missing}")
