"""A user primitive defined JAX's way (as in JAX's "JAX primitives" guide): ``Primitive`` + ``def_impl`` +
``def_abstract_eval``, ``mlir.register_lowering(p, mlir.lower_fun(f))``, ``ad.primitive_jvps``,
``ad.primitive_transposes`` and ``batching.primitive_batchers``. Plain JAX code: ``results()`` was recorded
with real JAX 0.10.2 (``python custom_primitive.py``) into test_extend.py."""
import numpy as np
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir
import jax.core as core

multiply_add_p = Primitive("multiply_add")


def multiply_add(x, y, z):
    return multiply_add_p.bind(x, y, z)


@multiply_add_p.def_impl
def _impl(x, y, z):
    return np.add(np.multiply(x, y), z)


@multiply_add_p.def_abstract_eval
def _abstract(xs, ys, zs):
    assert xs.shape == ys.shape == zs.shape
    return core.ShapedArray(xs.shape, xs.dtype)


mlir.register_lowering(multiply_add_p, mlir.lower_fun(lambda x, y, z: x * y + z, multiple_results=False))


def _jvp(primals, tangents):
    x, y, z = primals
    xt, yt, zt = (ad.instantiate_zeros(t) for t in tangents)
    out = multiply_add(x, y, z)
    return out, multiply_add(xt, y, multiply_add(x, yt, zt))


ad.primitive_jvps[multiply_add_p] = _jvp


def _transpose(ct, x, y, z):
    # linear in z and in one of x, y (the other is the constant factor)
    if ad.is_undefined_primal(x):
        ct_x, ct_y = multiply_add(ct, y, jnp.zeros_like(ct)), None
    else:
        ct_x, ct_y = None, multiply_add(x, ct, jnp.zeros_like(ct))
    ct_z = ct if ad.is_undefined_primal(z) else None
    return ct_x, ct_y, ct_z


ad.primitive_transposes[multiply_add_p] = _transpose


def _batch(args, dims):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    args = [jnp.moveaxis(a, d, 0) if d is not None else jnp.broadcast_to(a, (size,) + a.shape)
            for a, d in zip(args, dims)]
    return multiply_add(*args), 0


batching.primitive_batchers[multiply_add_p] = _batch


def square_add(a, b):
    return multiply_add(a, a, b)


def results():
    x = jnp.array([1.0, 2.0, 3.0])
    y = jnp.array([0.5, -1.0, 4.0])
    out = {}
    out["eager"] = np.asarray(square_add(x, y)).tolist()
    out["jit"] = np.asarray(jax.jit(square_add)(x, y)).tolist()
    out["grad"] = np.asarray(jax.grad(lambda a, b: jnp.sum(square_add(a, b)))(x, y)).tolist()
    out["grad_b"] = np.asarray(jax.grad(lambda a, b: jnp.sum(square_add(a, b)), argnums=1)(x, y)).tolist()
    out["jit_grad"] = np.asarray(jax.jit(jax.grad(lambda a, b: jnp.sum(square_add(a, b) ** 2)))(x, y)).tolist()
    out["vmap"] = np.asarray(jax.vmap(square_add, in_axes=(0, None))(jnp.stack([x, 2 * x]), y)).tolist()
    out["jit_vmap"] = np.asarray(jax.jit(jax.vmap(square_add))(jnp.stack([x, y]), jnp.stack([y, x]))).tolist()
    out["jvp"] = [np.asarray(v).tolist() for v in jax.jvp(square_add, (x, y), (jnp.ones(3), jnp.zeros(3)))]
    out["jaxpr"] = str(jax.make_jaxpr(square_add)(x, y))
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(results()))
