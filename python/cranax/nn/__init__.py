"""``cranax.nn``: activation functions, softmax and friends, attention, and ``initializers``. Mirrors
``jax.nn``.

A face: the functions live in ``_functions`` (activations, softmax, logsumexp, one_hot, standardize) and
``_attention`` (``dot_product_attention``, the scaled matmuls); ``initializers`` is its own module, as in JAX.
"""
from . import initializers  # noqa: F401
from ._attention import dot_product_attention, get_scaled_dot_general_config, scaled_dot_general, scaled_matmul
from ._functions import (celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity,
                         leaky_relu, log1mexp, log_sigmoid, log_softmax, logmeanexp, logsumexp, mish, one_hot,
                         relu, relu6, selu, sigmoid, silu, soft_sign, softmax, softplus, sparse_plus,
                         sparse_sigmoid, squareplus, standardize, swish, tanh)

__all__ = ["celu", "dot_product_attention", "elu", "gelu", "get_scaled_dot_general_config", "glu",
           "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity", "initializers", "leaky_relu",
           "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot", "relu",
           "relu6", "scaled_dot_general", "scaled_matmul", "selu", "sigmoid", "silu", "soft_sign", "softmax",
           "softplus", "sparse_plus", "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh"]
