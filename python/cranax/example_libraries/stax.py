"""``cranax.example_libraries.stax``: neural-network layers as pairs ``(init_fun, apply_fun)``:
``init_fun(rng, input_shape) -> (output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)``
(``rng=`` a key for stochastic layers). Combinators (``serial``, ``parallel``, ``FanOut``...) build models from
layers. Shapes are tuples (a batch dimension of -1 is fine for ``init_fun``). Mirrors
``jax.example_libraries.stax``."""
import functools
import math

from .. import lax
from .. import numpy as jnp
from .. import random
from ..api import ShapeDtypeStruct, eval_shape
from ..nn import elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus, standardize
from ..nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout", "Elu", "Exp",
           "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv", "GeneralConvTranspose",
           "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus",
           "SumPool", "Tanh", "elementwise", "elu", "gelu", "glorot", "glorot_normal", "leaky_relu", "log_softmax",
           "logsoftmax", "normal", "ones", "parallel", "randn", "relu", "selu", "serial", "shape_dependent",
           "sigmoid", "softmax", "softplus", "standardize", "zeros"]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def _abstract_shape(fun, input_shape, *others):
    """The output shape of ``fun(x, *others)`` for an ``x`` of ``input_shape`` (a -1 batch size is kept),
    found by abstract evaluation, so a layer's shape rule is the operation's own."""
    input_shape = tuple(input_shape)
    batch_unknown = len(input_shape) > 0 and input_shape[0] == -1
    shape = (1,) + input_shape[1:] if batch_unknown else input_shape
    out = eval_shape(fun, ShapeDtypeStruct(shape, jnp.float32), *others).shape
    return (-1,) + tuple(out[1:]) if batch_unknown else tuple(out)


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer ``inputs @ W + b``: inputs (..., in), W (in, out_dim), b (out_dim,). Mirrors
    ``stax.Dense``."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _conv_layer(dimension_numbers, out_chan, filter_shape, W_init, b_init, conv):
    """The layer of ``conv(x, W)`` plus a bias: the kernel's ``I`` dimension follows the input's ``C``, the
    spatial ones ``filter_shape``, ``O`` is ``out_chan``; the bias broadcasts along the output's ``C``."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        spatial = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(spatial)
                        for c in rhs_spec]
        out_shape = _abstract_shape(conv, input_shape, ShapeDtypeStruct(tuple(kernel_shape), jnp.float32))
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return out_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return conv(inputs, W) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                b_init=normal(1e-6)):
    """A convolution layer (``lax.conv_general_dilated`` plus a bias) in the layout ``dimension_numbers``
    (lhs, rhs, out spec strings such as ``('NHWC', 'HWIO', 'NHWC')``); ``padding`` is ``'VALID'``,
    ``'SAME'`` or explicit pairs. Mirrors ``stax.GeneralConv``."""
    one = (1,) * len(filter_shape)
    strides = strides or one
    return _conv_layer(dimension_numbers, out_chan, filter_shape, W_init, b_init, lambda x, W: lax.conv_general_dilated(
        x, W, strides, padding, one, one, dimension_numbers=dimension_numbers))


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                         b_init=normal(1e-6)):
    """A transposed-convolution layer (``lax.conv_transpose`` plus a bias). Mirrors
    ``stax.GeneralConvTranspose``."""
    strides = strides or (1,) * len(filter_shape)
    return _conv_layer(dimension_numbers, out_chan, filter_shape, W_init, b_init, lambda x, W: lax.conv_transpose(
        x, W, strides, padding, dimension_numbers=dimension_numbers))


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones):
    """Normalizes over ``axis`` with the batch's statistics (``nn.standardize``), then scales by ``gamma``
    and shifts by ``beta`` (parameters over the other axes). Mirrors ``stax.BatchNorm``."""
    axis = (axis,) if jnp.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[ed] * z
        if center:
            z = z + beta[ed]
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying ``fun(inputs, **fun_kwargs)``. Mirrors ``stax.elementwise``."""
    return (lambda rng, input_shape: (input_shape, ())), (lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs))


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pool(reducer, init_val, normalize=False):
    def Pool(window_shape, strides=None, padding="VALID", spec=None):
        strides = tuple(strides or (1,) * len(window_shape))
        window_shape = tuple(window_shape)
        non_spatial = (0, len(window_shape) + 1) if spec is None else (spec.index("N"), spec.index("C"))
        dims, strd = window_shape, strides
        for i in sorted(non_spatial):
            dims = dims[:i] + (1,) + dims[i:]
            strd = strd[:i] + (1,) + strd[i:]

        def pool(x):
            out = lax.reduce_window(x, init_val, reducer, dims, strd, padding)
            if not normalize:
                return out
            # each output divided by how many inputs (not padding) its window covered
            count = lax.reduce_window(jnp.ones(tuple(x.shape[i] for i in range(x.ndim) if i not in non_spatial),
                                               x.dtype),
                                      0., lax.add, tuple(d for i, d in enumerate(dims) if i not in non_spatial),
                                      tuple(s for i, s in enumerate(strd) if i not in non_spatial), padding)
            for i in sorted(non_spatial):
                count = jnp.expand_dims(count, i)
            return out / count

        def init_fun(rng, input_shape):
            return _abstract_shape(pool, input_shape), ()

        def apply_fun(params, inputs, **kwargs):
            return pool(inputs)
        return init_fun, apply_fun
    return Pool


MaxPool = _pool(lax.max, -jnp.inf)
MaxPool.__doc__ = "Max pooling over ``window_shape`` (spatial axes; ``spec`` names N and C). Mirrors ``stax.MaxPool``."
SumPool = _pool(lax.add, 0.)
SumPool.__doc__ = "Sum pooling over ``window_shape``. Mirrors ``stax.SumPool``."
AvgPool = _pool(lax.add, 0., normalize=True)
AvgPool.__doc__ = ("Average pooling over ``window_shape``; with padding, each window is divided by the inputs it "
                   "covers. Mirrors ``stax.AvgPool``.")


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()  # (N, ...) -> (N, prod(...)); mirrors stax.Flatten
Identity = ((lambda rng, input_shape: (input_shape, ())), (lambda params, inputs, **kwargs: inputs))


def FanOut(num):
    """A layer giving ``num`` copies of its input (a list). Mirrors ``stax.FanOut``."""
    return (lambda rng, input_shape: ([input_shape] * num, ())), (lambda params, inputs, **kwargs: [inputs] * num)


FanInSum = ((lambda rng, input_shape: (input_shape[0], ())),
            (lambda params, inputs, **kwargs: functools.reduce(lambda a, b: a + b, inputs)))


def FanInConcat(axis=-1):
    """A layer concatenating its list of inputs along ``axis``. Mirrors ``stax.FanInConcat``."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(s[ax] for s in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Dropout, as JAX's stax has it: in ``'train'`` mode each input is *kept* with probability ``rate`` and
    scaled by ``1/rate`` (``apply_fun`` needs ``rng=``, ``ValueError`` otherwise); other modes pass inputs
    through. Mirrors ``stax.Dropout``."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key argument. That is, "
                             "instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, rng)` "
                             "where `rng` is a PRNG key (e.g. from `jax.random.key`).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


def serial(*layers):
    """Layers applied one after the other; params are a list, one entry per layer; an ``rng=`` is split
    among the layers. Mirrors ``stax.serial``."""
    n = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for f in init_funs:
            rng, sub = random.split(rng)
            input_shape, p = f(sub, input_shape)
            params.append(p)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, n) if rng is not None else (None,) * n
        for f, p, r in zip(apply_funs, params, rngs):
            inputs = f(p, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Layers applied side by side to a list of inputs (one each), e.g. between ``FanOut`` and
    ``FanInSum``. Mirrors ``stax.parallel``."""
    n = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, n)
        return zip(*[f(r, s) for f, r, s in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, n) if rng is not None else (None,) * n
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer made from the input shape by ``make_layer(shape) -> (init_fun, apply_fun)``. Mirrors
    ``stax.shape_dependent``."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
