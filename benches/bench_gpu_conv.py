"""conv_general_dilated on the GPU backend (issue 21, item 1): a forward convolution and a small CNN's
jit(value_and_grad) step, with the inputs already on the first GPU.

    python benches/bench_gpu_conv.py            # prints one line per figure
    python benches/bench_gpu_conv.py --runs 10

Each result is compared with the CPU backend before anything is timed (a wrong one is reported, not ranked).
The figure is the median (and minimum) wall time of calls waited for with ``block_until_ready``, after
warm-up. It says whether each program's convolutions ran as shaders or on the host (to compare the shader
with the host fallback, run this file against a build without the shader). On Mesa's lavapipe (a software
Vulkan driver running shaders on the CPU) these are not GPU speeds.
"""
import argparse
import statistics

import numpy as np

import cranax as jax
import cranax.lax as lax
import cranax.numpy as jnp
from cranax import _core
from cranax.bench._timing import block, call_times

DN = ("NHWC", "HWIO", "NHWC")


def _cnn_loss(params, x, y):
    w1, w2, wd = params
    h = jax.nn.relu(lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=DN))
    h = jax.nn.relu(lax.conv_general_dilated(h, w2, (2, 2), "SAME", dimension_numbers=DN))
    logits = h.reshape(h.shape[0], -1) @ wd
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))


def _cases():
    rng = np.random.default_rng(0)
    r = lambda *s: (rng.standard_normal(s) * 0.1).astype(np.float32)  # noqa: E731
    fwd = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)  # noqa: E731
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]
    return [
        ("conv2d fwd N=8 32x32 16->32 3x3 NHWC", jax.jit(fwd), (r(8, 32, 32, 16), r(3, 3, 16, 32))),
        ("conv2d fwd N=8 32x32 64->64 3x3 NHWC", jax.jit(fwd), (r(8, 32, 32, 64), r(3, 3, 64, 64))),
        ("CNN value_and_grad N=32 16x16 (1->16->32, dense 10)", jax.jit(jax.value_and_grad(_cnn_loss)),
         ([r(3, 3, 1, 16), r(3, 3, 16, 32), r(8 * 8 * 32, 10)], r(32, 16, 16, 1), y)),
    ]


def _conv_shaders(f, args):
    import cranax.interpreters.lowering as lowering
    closed = jax.make_jaxpr(f)(*args)
    n = str(closed).count("conv_general_dilated")
    shaders = _core.gpu_shaders(_core.compile(lowering.lower_jaxpr(closed, "bench")), jax.devices("gpu")[0])
    return n, sum("conv_general_dilated" in s for s in shaders)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args(argv)
    gpu = jax.devices("gpu")[0]
    info = _core.gpu_info(gpu)
    print(f"adapter: {info.get('name')} ({info.get('backend')}, driver {info.get('driver')})")
    for name, f, args in _cases():
        dev_args = jax.device_put(args, gpu)
        want = jax.tree_util.tree_leaves(f(*jax.device_put(args, jax.devices("cpu")[0])))
        got = jax.tree_util.tree_leaves(f(*dev_args))
        ok = all(np.allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-4) for g, w in zip(got, want))
        n, on_gpu = _conv_shaders(jax.grad(_cnn_loss) if "grad" in name else f, args)
        if not ok:
            print(f"{name}: WRONG RESULT (not timed)")
            continue
        ts = call_times(lambda: block(f(*dev_args)), a.runs, 2)
        print(f"{name}: {statistics.median(ts) * 1e3:.2f} ms / {min(ts) * 1e3:.2f} ms (median / min); "
              f"{on_gpu} of {n} convolutions as shaders")


if __name__ == "__main__":
    main()
