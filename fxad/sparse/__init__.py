"""fxad.sparse: sparsity patterns of derivatives and sparse Jacobians and Hessians.

- `jacobian_sparsity(f, *args)`, `hessian_sparsity(f, *args)`: global, conservative
  patterns (never a missed nonzero) as boolean scipy.sparse matrices;
- `jacfwd`, `jacrev`, `hessian(f, sparsity="auto" | pattern)`: one batched JVP / VJP /
  Hessian-vector product per color; scipy.sparse matrices when called eagerly, the nonzero
  values in the pattern's order under a transformation;
- `color_columns`, `color_rows`, `star_color`: the colorings they use.

Written on the public extension API (fxad.extend) alone: notes/15_sparse_and_extend.md.
"""
from .coloring import color_columns, color_rows, star_color, star_recovery_ok
from .derivatives import hessian, jacfwd, jacrev
from .sparsity import hessian_sparsity, jacobian_sparsity

__all__ = ["jacobian_sparsity", "hessian_sparsity", "jacfwd", "jacrev", "hessian",
           "color_columns", "color_rows", "star_color", "star_recovery_ok"]
