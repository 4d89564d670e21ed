"""``shard_map`` of hi-typed values as JAX 0.10.2 runs it (issue 18, the hijax-types guide's cells 32-34): a
``HiPspec`` in ``in_specs``/``out_specs`` splits a hi value's arrays by its ``to_lo`` specs, the body sees a
value of the type's ``shard`` (each device's block) and its hi-primitives run on the blocks' arrays, results are
raised at the type's ``unshard`` (``q8[8@i,3]``, its arrays split ``P('i', None)``/``P('i',)``); a collective in
such a body; and plain ``shard_map`` results split in their types as ``out_specs`` say on an ``Explicit`` mesh,
under ``jit`` too; the wrong kind of spec fails with JAX's text. The device count is per process: the
program runs in a child with 8 CPU devices. Expected lines recorded from JAX 0.10.2
(``JAX_PLATFORMS=cpu /tmp/jaxvenv/bin/python prog.py``)."""
import os
import subprocess
import sys

PROG = '''import sys
if sys.argv[1:] == ["cranax"]:
    import cranax
    cranax.install_as_jax()
from dataclasses import dataclass
import jax
jax.config.update("jax_num_cpu_devices", 8)
import jax.numpy as jnp


@dataclass(frozen=True)
class QArray:
  qvalue: jax.Array
  scale: jax.Array

from jax.experimental.hijax import HiType, ShapedArray, register_hitype
from jax.sharding import NamedSharding

@dataclass(frozen=True)
class QArrayTy(HiType):
  shape: tuple[int, ...]
  sharding: NamedSharding  # qvalue's sharding; scale's is derived from it

  # lowering: which array types make up this type, and how values convert
  def lo_ty(self):
    scale_sharding = self.sharding.update(spec=jax.P(*self.sharding.spec[:-1]))
    return [ShapedArray(self.shape, jnp.dtype('int8'),
                        sharding=self.sharding),
            ShapedArray(self.shape[:-1], jnp.dtype('float32'),
                        sharding=scale_sharding)]
  def lower_val(self, q):
    return [q.qvalue, q.scale]
  def raise_val(self, qvalue, scale):
    return QArray(qvalue, scale)

  # autodiff: tangents of quantized arrays are plain float arrays (see below)
  def to_tangent_aval(self):
    return ShapedArray(self.shape, jnp.dtype('float32'),
                       sharding=self.sharding)

  # printing, e.g. in jaxprs
  def str_short(self, short_dtypes=False, mesh_axis_types=False):
    dims = [str(d) if p is None else f'{d}@{p}'
            for d, p in zip(self.shape, self.sharding.spec)]
    return f'q8[{",".join(dims)}]'
  __repr__ = str_short

register_hitype(QArray, lambda q: QArrayTy(q.qvalue.shape,
                                           jax.typeof(q.qvalue).sharding))
from jax.experimental.hijax import VJPHiPrimitive

class Quantize(VJPHiPrimitive):
  def __init__(self, x_aval):
    if x_aval.dtype != jnp.dtype('float32'): raise TypeError(x_aval.dtype)
    self.in_avals = (x_aval,)
    self.out_aval = QArrayTy(x_aval.shape, x_aval.sharding)
    self.params = {}
    super().__init__()

  def expand(self, x):
    scale = jnp.max(jnp.abs(x), axis=-1) / 127.
    qvalue = jnp.round(x / scale[..., None]).astype(jnp.int8)
    return QArray(qvalue, scale)

  # straight-through estimator: differentiate as if it's the identity
  def vjp_fwd(self, nzs_in, x):
    return self(x), None

  def vjp_bwd_retval(self, _res, g):
    return (g,)

class Dequantize(VJPHiPrimitive):
  def __init__(self, q_aval):
    self.in_avals = (q_aval,)
    self.out_aval = ShapedArray(q_aval.shape, jnp.dtype('float32'),
                                sharding=q_aval.sharding)
    self.params = {}
    super().__init__()

  def expand(self, qx):
    return qx.qvalue.astype('float32') * qx.scale[..., None]

  def vjp_fwd(self, nzs_in, qx):
    return self(qx), None

  def vjp_bwd_retval(self, _res, g):
    return (g,)

def quantize(x):
  return Quantize(jax.typeof(x))(x)

def dequantize(qx):
  return Dequantize(jax.typeof(qx))(qx)
from jax.experimental.hijax import HiPspec

@dataclass(frozen=True)
class QArrayP(HiPspec):
  spec: jax.P  # partitioning of the leading axes; the last axis stays whole

  def to_lo(self):
    return (self.spec, self.spec)  # qvalue and scale shard together
def qarray_shard(self, mesh, manual_axes, check_vma, spec):
  qvalue_ty, _ = self.lo_ty()
  qspec, _ = spec.to_lo()
  shard_ty = qvalue_ty.shard(mesh, manual_axes, check_vma, qspec)
  return QArrayTy(shard_ty.shape, shard_ty.sharding)

def qarray_unshard(self, mesh, check_vma, spec):
  qvalue_ty, _ = self.lo_ty()
  qspec, _ = spec.to_lo()
  full_ty = qvalue_ty.unshard(mesh, check_vma, qspec)
  return QArrayTy(full_ty.shape, full_ty.sharding)

QArrayTy.shard = qarray_shard
QArrayTy.unshard = qarray_unshard

mesh = jax.make_mesh((4,), ('i',))
jax.set_mesh(mesh)
rows = jax.device_put(jnp.arange(24., dtype='float32').reshape(8, 3), jax.P('i'))

# the guide's cells: a shard_map producing and one consuming QArrays
@jax.jit
@jax.shard_map(in_specs=jax.P('i'), out_specs=QArrayP(jax.P('i')))
def quantize_shards(x):
  assert jax.typeof(x).shape == (2, 3)
  return quantize(x)

qrows = quantize_shards(rows)
print(jax.typeof(qrows))
print(qrows.qvalue.sharding.spec, qrows.scale.sharding.spec)
print(qrows.qvalue.tolist(), qrows.scale.tolist())

@jax.jit
@jax.shard_map(in_specs=QArrayP(jax.P('i')), out_specs=jax.P('i'))
def dequantize_shards(qx):
  assert jax.typeof(qx).shape == (2, 3)
  return dequantize(qx)

print(jnp.max(jnp.abs(dequantize_shards(qrows) - rows)))
qg = quantize(rows)
print(bool((qrows.qvalue == qg.qvalue).all()), bool((qrows.scale == qg.scale).all()))

# a hi-typed and a plain argument, a collective in the body, a replicated and a split result
@jax.jit
@jax.shard_map(in_specs=(QArrayP(jax.P('i')), jax.P()), out_specs=(jax.P(), jax.P('i')))
def mixed(qx, y):
  d = dequantize(qx)
  return jax.lax.psum(jnp.sum(d), 'i'), d * y

s, d = mixed(qrows, jnp.float32(2.))
print(s, jax.typeof(s), jax.typeof(d), d.tolist()[5])

# plain shard_map results are split in their types as out_specs say (an Explicit mesh), also under jit
f = jax.shard_map(lambda x: (x * 2, jnp.sum(x, -1)), in_specs=jax.P('i'), out_specs=(jax.P('i'), jax.P('i')))
a, b = jax.jit(f)(rows)
print(jax.typeof(a), jax.typeof(b), a.sharding.spec, b.sharding.spec)
a, b = f(rows)
print(jax.typeof(a), jax.typeof(b))
print(jax.typeof(jax.jit(jax.shard_map(lambda x: x[:1], in_specs=jax.P('i'), out_specs=jax.P(), check_vma=False))(rows)))

# the wrong kind of spec (JAX 0.10.2's texts)
def show(f):
    try:
        print(f())
    except Exception as e:
        print(f"{type(e).__name__}: {e}")
show(lambda: jax.jit(jax.shard_map(dequantize, in_specs=jax.P('i'), out_specs=jax.P('i')))(qrows))
show(lambda: jax.jit(jax.shard_map(lambda x: x, in_specs=QArrayP(jax.P('i')), out_specs=jax.P('i')))(rows))
show(lambda: jax.jit(jax.shard_map(lambda q: (q, dequantize(q)), in_specs=QArrayP(jax.P('i')),
                                   out_specs=jax.P('i')))(qrows))
'''

EXPECTED = '''q8[8@i,3]
P('i', None) P('i',)
[[0, 64, 127], [76, 102, 127], [95, 111, 127], [104, 115, 127], [109, 118, 127], [112, 120, 127], [114, 121, 127], [116, 121, 127]] [0.015748031437397003, 0.03937007859349251, 0.06299212574958801, 0.08661417663097382, 0.11023622006177902, 0.13385826349258423, 0.15748031437397003, 0.18110236525535583]
0.08661461
True True
275.9685 float32[] float32[8@i,3] [29.984251022338867, 32.12598419189453, 34.0]
float32[8@i,3] float32[8@i] P('i', None) P('i',)
float32[8@i,3] float32[8@i]
float32[1,3]
AttributeError: 'QArrayTy' object has no attribute 'ndim'
AttributeError: 'QArrayP' object has no attribute 'unreduced'
AttributeError: 'QArrayTy' object has no attribute 'mat'
'''


def test_shard_map_of_hi_types_prints_what_jax_prints(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROG)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("CRANAX_NUM_CPU_DEVICES", None)
    env.pop("XLA_FLAGS", None)
    r = subprocess.run([sys.executable, str(prog), "cranax"], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines() == EXPECTED.splitlines()
