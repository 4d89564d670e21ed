"""cranax: JAX's core (``jit``, ``make_jaxpr``, ``cranax.numpy``, ``cranax.lax``...) with a Rust compiler
(Cranelift) and runtime. ``import cranax as jax`` runs code written for JAX's core.
"""
from ._version import __version__  # noqa: F401
from .config import config
from . import _core
# CPython's frame-stack chunks reused instead of mapped and unmapped a thousand times per first call (installed
# by importing it)
from . import _stack_chunks  # noqa: F401
from . import dtypes, tree_util, errors, typing
from . import tree
from .core import ShapedArray, typeof
from ._core import Device
from .array import (Array, device_put, device_get, devices, local_devices, device_count, local_device_count,
                    default_backend, block_until_ready, process_count, process_index, process_indices, host_count,
                    host_id, host_ids)
from .api import jit, make_jaxpr, eval_shape, clear_caches, ShapeDtypeStruct, disable_jit, named_call, named_scope
from .api_vmap import vmap
from .api_ad import jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev, jacobian, hessian
from .api_ad import linear_transpose
# jax.ad: the cotangent targets of ``jax.vjp(...)[1].with_refs`` (a namespace in JAX 0.10.2 too)
from .api_ad import ad_namespace as ad
from .custom_derivatives import closure_convert
from .custom_derivatives import custom_jvp, custom_vjp
from .primitives.remat import checkpoint, remat, checkpoint_policies
from . import lax
from . import numpy
from . import random
from . import nn
from . import ops  # jax.ops: segment reductions (issue 22)
from . import image  # jax.image, imported with the package as in JAX
from .tree_util import tree_map, tree_leaves, tree_flatten, tree_unflatten, tree_structure
# host callbacks and jax.debug (h-debug)
from .api_callback import pure_callback, effects_barrier
from . import debug
from . import experimental
from . import stages
from .api import checking_leaks, check_tracer_leaks, debug_nans, debug_infs, log_compiles
# Running unmodified JAX programs (issue 19): ``import jax`` resolves to cranax; the API libraries use.
from ._alias import install_as_jax
from .api_pmap import pmap, shard_map, smap
from . import sharding, extend, flatten_util, test_util, api_util
from .extend.core import ensure_compile_time_eval
from .custom_derivatives import custom_gradient
from . import custom_batching, monitoring, ffi  # imported with the package as in JAX


__all__ = ["config", "jit", "disable_jit", "typing", "checkpoint", "remat", "checkpoint_policies", "ad_checkpoint", "make_jaxpr", "eval_shape", "clear_caches", "ShapeDtypeStruct", "Array",
           "device_put", "devices", "local_devices", "device_count", "default_backend", "block_until_ready",
           "lax", "numpy", "tree_util", "tree", "dtypes", "errors", "ShapedArray", "tree_map", "tree_leaves",
           "tree_flatten", "tree_unflatten", "tree_structure", "vmap", "jvp", "linearize", "vjp", "grad",
           "value_and_grad", "jacfwd", "jacrev", "jacobian", "hessian", "custom_jvp", "custom_vjp", "random",
           "pure_callback", "effects_barrier", "debug", "experimental", "stages",
           "checking_leaks", "check_tracer_leaks", "debug_nans", "debug_infs", "log_compiles"]
# several processes over MPI (issue 24)
from . import distributed
# several devices: meshes, shardings, sharded arrays (issue 24)
from .sharding import NamedSharding, PartitionSpec as P, Shard, make_mesh, reshard, set_mesh
from .api_sharding import (make_array_from_callback, make_array_from_process_local_data,
                           make_array_from_single_device_arrays)
# jax.export: a jitted program saved for one signature, serialized and loaded elsewhere
from . import export
# jax.profiler (trace files), imported with the package as in JAX (issue 18)
from . import profiler
# config options as JAX's top-level names, and small API (h-names, issue 18)
from .config import (numpy_dtype_promotion, numpy_rank_promotion, default_matmul_precision, enable_x64,
                     default_device, explain_cache_misses, transfer_guard, transfer_guard_host_to_device,
                     transfer_guard_device_to_host, transfer_guard_device_to_device, debug_key_reuse,
                     threefry_partitionable, enable_custom_prng, default_prng_impl, legacy_prng_key,
                     array_garbage_collection_guard, softmax_custom_jvp, enable_checks, thread_guard,
                     allow_f16_reductions, auto_pcast, remove_size_one_mesh_axis_from_type,
                     jax2tf_associative_scan_reductions, no_tracing, no_execution)
from .dtypes import float0
from . import dlpack
from .api_misc import (linear_transpose, fwd_and_bwd, live_arrays, copy_to_host_async, print_environment_info,
                       make_user_context, memory)
# mutable array references (issue 18 item 8): jax.Ref, jax.new_ref, jax.freeze, the jax.ref module
from . import ref
from .ref import Ref, empty_ref, free_ref, freeze, new_ref
from .dslice import ds  # jax.ds: a slice by start and size whose start may be traced

# jax.scipy is reachable after ``import jax`` and loaded on first use: so is cranax.scipy
from ._lazy import __getattr__  # noqa: E402
