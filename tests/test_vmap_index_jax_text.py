"""Issue 18, the sixteenth pass (2): ``vmap`` of indexing with a batched index as JAX 0.10.2 stages it.
A scatter or gather whose index is batched keeps the batch as ``operand_batching_dims`` /
``scatter_indices_batching_dims`` (JAX's batching rules; the core runs them as the unbatched form with an iota
column), ``x[i]`` with a rank-0 integer array index goes through ``dynamic_slice`` as JAX's
``rewriting_take``, ``dynamic_update_slice`` with a batched start is a window scatter, and the transposes keep
the batching dims. Texts and values recorded from JAX 0.10.2 by running ``vmap_index_fns`` below under JAX
(the values also through ``jit``, which lowers the batching dims through the core)."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax

def vmap_index_fns(jax, jnp, lax):
    """name -> (function, args): vmap of indexed updates/reads with a batched index, lax gathers/scatters with
    batching dims, and their gradients."""
    x = jnp.arange(6.0).reshape(2, 3)
    i = jnp.array([0, 2])
    u = jnp.array([10.0, 20.0])
    v = jax.vmap
    return dict(
        set_batched_index=(v(lambda x, i: x.at[i].set(1.0)), (x, i)),
        set_index_only=(v(lambda i: x.at[0, i].set(1.0)), (i,)),
        add=(v(lambda x, i, u: x.at[i].add(u)), (x, i, u)),
        mul=(v(lambda x, i, u: x.at[i].multiply(u)), (x, i, u)),
        min=(v(lambda x, i, u: x.at[i].min(u)), (x, i, u)),
        max=(v(lambda x, i, u: x.at[i].max(u)), (x, i, u)),
        subtract=(v(lambda x, i, u: x.at[i].subtract(u)), (x, i, u)),
        apply=(v(lambda x, i: x.at[i].apply(jnp.sin)), (x, i)),
        set_operand_only=(v(lambda x: x.at[1].set(5.0)), (x,)),
        set_in_axes1=(v(lambda x, i: x.at[i].set(1.0), in_axes=(1, None)), (x.T, i)),
        get=(v(lambda x, i: x[i]), (x, i)),
        get_index_only=(v(lambda i: x[1, i]), (i,)),
        take=(v(lambda x, i: jnp.take(x, i)), (x, i)),
        take_along_axis=(v(lambda x, i: jnp.take_along_axis(x, i, axis=0)), (x, jnp.array([[0, 2], [1, 1]]))),
        grad_get=(jax.grad(lambda x, i: v(lambda x, i: x[i])(x, i).sum()), (x, i)),
        grad_set=(jax.grad(lambda u, x, i: v(lambda x, i, u: x.at[i].set(u))(x, i, u).sum()), (u, x, i)),
        dus=(v(lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,))), (x, i)),
        dus_operand_only=(v(lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)), in_axes=(0, None)),
                          (x, jnp.int32(1))),
        dus_update_only=(v(lambda u: lax.dynamic_update_slice(x[0], u, (1,))), (jnp.ones((2, 2)),)),
        scatter_add_lax=(v(lambda x, i, u: lax.scatter_add(x, i, u, lax.ScatterDimensionNumbers(
            update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)))),
            (x, jnp.array([[[0], [2]], [[1], [1]]]), jnp.ones((2, 2)))),
        gather_lax_batching=(lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers(
            offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,),
            start_indices_batching_dims=(0,)), (1, 1)), (x, jnp.array([[2], [0]]))),
        scatter_lax_batching=(lambda x, i: lax.scatter(x, i, jnp.array([7.0, 8.0]), lax.ScatterDimensionNumbers(
            update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
            operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))), (x, jnp.array([[2], [0]]))),
        grad_scatter_add=(jax.grad(lambda x, i, u: v(lambda x, i, u: x.at[i].add(u * x[i]))(x, i, u).sum()),
                          (x, i, u)),
        grad_mul=(jax.grad(lambda u, x, i: v(lambda x, i, u: x.at[i].multiply(u))(x, i, u).sum()), (u, x, i)),
        ds=(v(lambda x, i: lax.dynamic_slice(x, (i,), (2,))), (x, i)),
    )


# name -> (text, values), recorded from JAX 0.10.2
JAX = {
    'set_batched_index': ("""\
{ lambda ; a:f32[2,3] b:i32[2]. let
    c:bool[2] = lt b 0:i32[]
    d:i32[2] = add b 3:i32[]
    e:i32[2] = select_n c b d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2] = broadcast_in_dim 1.0:f32[]
    h:f32[2,3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a f g
  in (h,) }""", [[1.0, 1.0, 2.0], [3.0, 4.0, 1.0]]),
    'set_index_only': ("""\
{ lambda a:f32[2,3]; b:i32[2]. let
    c:bool[2] = lt b 0:i32[]
    d:i32[2] = add b 3:i32[]
    e:i32[2] = select_n c b d
    f:i32[1] = broadcast_in_dim 0:i32[]
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    h:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(1,)] f
    i:i32[2,2] = concatenate[dimension=1] h g
    j:f32[2,2,3] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] a
    k:f32[2] = broadcast_in_dim 1.0:f32[]
    l:f32[2,2,3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1), np.int64(2)), scatter_dims_to_operand_dims=(np.int64(1), np.int64(2)), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] j i k
  in (l,) }""", [[[1.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[0.0, 1.0, 1.0], [3.0, 4.0, 5.0]]]),
    'add': ("""\
{ lambda ; a:f32[2,3] b:i32[2] c:f32[2]. let
    d:bool[2] = lt b 0:i32[]
    e:i32[2] = add b 3:i32[]
    f:i32[2] = select_n d b e
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[2,3] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = add i j in (k,) }
    ] a g c
  in (h,) }""", [[10.0, 1.0, 2.0], [3.0, 4.0, 25.0]]),
    'mul': ("""\
{ lambda ; a:f32[2,3] b:i32[2] c:f32[2]. let
    d:bool[2] = lt b 0:i32[]
    e:i32[2] = add b 3:i32[]
    f:i32[2] = select_n d b e
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[2,3] = scatter-mul[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = mul i j in (k,) }
    ] a g c
  in (h,) }""", [[0.0, 1.0, 2.0], [3.0, 4.0, 100.0]]),
    'min': ("""\
{ lambda ; a:f32[2,3] b:i32[2] c:f32[2]. let
    d:bool[2] = lt b 0:i32[]
    e:i32[2] = add b 3:i32[]
    f:i32[2] = select_n d b e
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[2,3] = scatter-min[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = min i j in (k,) }
    ] a g c
  in (h,) }""", [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]),
    'max': ("""\
{ lambda ; a:f32[2,3] b:i32[2] c:f32[2]. let
    d:bool[2] = lt b 0:i32[]
    e:i32[2] = add b 3:i32[]
    f:i32[2] = select_n d b e
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[2,3] = scatter-max[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = max i j in (k,) }
    ] a g c
  in (h,) }""", [[10.0, 1.0, 2.0], [3.0, 4.0, 20.0]]),
    'subtract': ("""\
{ lambda ; a:f32[2,3] b:i32[2] c:f32[2]. let
    d:bool[2] = lt b 0:i32[]
    e:i32[2] = add b 3:i32[]
    f:i32[2] = select_n d b e
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[2,3] = scatter-sub[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = sub i j in (k,) }
    ] a g c
  in (h,) }""", [[-10.0, 1.0, 2.0], [3.0, 4.0, -15.0]]),
    'apply': ("""\
{ lambda ; a:f32[2,3] b:i32[2]. let
    c:bool[2] = lt b 0:i32[]
    d:i32[2] = add b 3:i32[]
    e:i32[2] = select_n c b d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2] = broadcast_in_dim 0.0:f32[]
    h:f32[2,3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = sin i in (k,) }
    ] a f g
  in (h,) }""", [[0.0, 1.0, 2.0], [3.0, 4.0, -0.9589242935180664]]),
    'set_operand_only': ("""\
{ lambda ; a:f32[2,3]. let
    b:i32[1] = broadcast_in_dim 1:i32[]
    c:f32[2] = broadcast_in_dim 5.0:f32[]
    d:f32[2,3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a b c
  in (d,) }""", [[0.0, 5.0, 2.0], [3.0, 5.0, 5.0]]),
    'set_in_axes1': ("""\
{ lambda ; a:f32[3,2] b:i32[2]. let
    c:bool[2] = lt b 0:i32[]
    d:i32[2] = add b 3:i32[]
    e:i32[2] = select_n c b d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2] = broadcast_in_dim 1.0:f32[]
    h:f32[2,3] = transpose[permutation=(1, 0)] a
    i:f32[2,2] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] g
    j:f32[2,3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr=None
    ] h f i
  in (j,) }""", [[1.0, 1.0, 1.0], [1.0, 4.0, 1.0]]),
    'get': ("""\
{ lambda ; a:f32[2,3] b:i32[2]. let
    c:bool[2] = lt b 0:i32[]
    d:i32[2] = add b 3:i32[]
    e:i32[2] = select_n c b d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2,1] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(np.int64(1),), collapsed_slice_dims=(), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=None
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      slice_sizes=(1, 1)
      unique_indices=True
    ] a f
    h:f32[2] = squeeze[dimensions=(1,)] g
  in (h,) }""", [0.0, 5.0]),
    'get_index_only': ("""\
{ lambda a:f32[2,3]; b:i32[2]. let
    c:bool[] = lt 1:i32[] 0:i32[]
    d:i32[] = add 1:i32[] 2:i32[]
    e:i32[] = select_n c 1:i32[] d
    f:bool[2] = lt b 0:i32[]
    g:i32[2] = add b 3:i32[]
    h:i32[2] = select_n f b g
    i:i32[2,1] = broadcast_in_dim e
    j:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] h
    k:i32[2,2] = concatenate[dimension=1] i j
    l:f32[2,1,1] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.CLIP
      slice_sizes=(1, 1)
      unique_indices=False
    ] a k
    m:f32[2] = squeeze[dimensions=(1, 2)] l
  in (m,) }""", [3.0, 5.0]),
    'take': ("""\
{ lambda ; a:f32[2,3] b:i32[2]. let
    c:f32[2] = jit[
      name=_take
      jaxpr={ lambda ; a:f32[2,3] b:i32[2]. let
          d:bool[2] = lt b 0:i32[]
          e:i32[2] = add b 3:i32[]
          f:i32[2] = jit[
            name=_where
            jaxpr={ lambda ; d:bool[2] e:i32[2] b:i32[2]. let
                f:i32[2] = select_n d b e
              in (f,) }
          ] d e b
          g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
          c:f32[2] = gather[
            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(np.int64(1),), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
            fill_value=nan
            indices_are_sorted=False
            mode=GatherScatterMode.FILL_OR_DROP
            slice_sizes=(1, 1)
            unique_indices=False
          ] a g
        in (c,) }
    ] a b
  in (c,) }""", [0.0, 5.0]),
    'take_along_axis': ("""\
{ lambda ; a:f32[2,3] b:i32[2,2]. let
    c:f32[2,2] = jit[
      name=take_along_axis
      jaxpr={ lambda ; a:f32[2,3] b:i32[2,2]. let
          d:bool[2,2] = lt b 0:i32[]
          e:i32[2,2] = add b 3:i32[]
          f:i32[2,2] = select_n d b e
          g:i32[2,2,1] = reshape[
            dimensions=None
            new_sizes=(2, 2, 1)
            sharding=None
          ] f
          c:f32[2,2] = gather[
            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(np.int64(1),), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
            fill_value=nan
            indices_are_sorted=False
            mode=GatherScatterMode.FILL_OR_DROP
            slice_sizes=(1, 1)
            unique_indices=False
          ] a g
        in (c,) }
    ] a b
  in (c,) }""", [[0.0, 2.0], [4.0, 4.0]]),
    'grad_get': ("""\
{ lambda ; a:f32[2,3] b:i32[2]. let
    c:bool[2] = lt b 0:i32[]
    d:i32[2] = add b 3:i32[]
    e:i32[2] = select_n c b d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2,1] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(np.int64(1),), collapsed_slice_dims=(), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=None
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      slice_sizes=(1, 1)
      unique_indices=True
    ] a f
    h:f32[2] = squeeze[dimensions=(1,)] g
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] h
    i:f32[2] = broadcast_in_dim 1.0:f32[]
    j:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] i
    k:f32[2,3] = broadcast_in_dim 0.0:f32[]
    l:f32[2,3] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(np.int64(1),), inserted_window_dims=(), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; m:f32[] n:f32[]. let o:f32[] = add m n in (o,) }
    ] k f j
  in (l,) }""", [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    'grad_set': ("""\
{ lambda ; a:f32[2] b:f32[2,3] c:i32[2]. let
    d:bool[2] = lt c 0:i32[]
    e:i32[2] = add c 3:i32[]
    f:i32[2] = select_n d c e
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    _:f32[2,3] = broadcast_in_dim 0.0:f32[]
    h:f32[2,3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] b g a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] h
    i:f32[2,3] = broadcast_in_dim 1.0:f32[]
    j:f32[2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(np.int64(1),), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=0
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      slice_sizes=(1, 1)
      unique_indices=False
    ] i g
  in (j,) }""", [1.0, 1.0]),
    'dus': ("""\
{ lambda ; a:f32[2,3] b:i32[2]. let
    c:f32[2] = broadcast_in_dim 1.0:f32[]
    d:bool[2] = lt b 0:i32[]
    e:i32[2] = add b 3:i32[]
    f:i32[2] = select_n d b e
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[2,2] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
    i:f32[2,3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(np.int64(1),), inserted_window_dims=(), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a g h
  in (i,) }""", [[1.0, 1.0, 2.0], [3.0, 1.0, 1.0]]),
    'dus_operand_only': ("""\
{ lambda ; a:f32[2,3] b:i32[]. let
    c:f32[2] = broadcast_in_dim 1.0:f32[]
    d:bool[] = lt b 0:i32[]
    e:i32[] = add b 3:i32[]
    f:i32[] = select_n d b e
    g:i32[1] = broadcast_in_dim f
    h:f32[2,2] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c
    i:f32[2,3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0, np.int64(1)), inserted_window_dims=(), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] a g h
  in (i,) }""", [[0.0, 1.0, 1.0], [3.0, 1.0, 1.0]]),
    'dus_update_only': ("""\
{ lambda a:f32[2,3]; b:f32[2,2]. let
    c:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=None] a
    d:f32[3] = squeeze[dimensions=(0,)] c
    e:i32[1] = broadcast_in_dim 1:i32[]
    f:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] d
    g:f32[2,3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0, np.int64(1)), inserted_window_dims=(), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      unique_indices=True
      update_consts=()
      update_jaxpr=None
    ] f e b
  in (g,) }""", [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]),
    'scatter_add_lax': ("""\
{ lambda ; a:f32[2,3] b:i32[2,2,1] c:f32[2,2]. let
    d:f32[2,3] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = add e f in (g,) }
    ] a b c
  in (d,) }""", [[1.0, 1.0, 3.0], [3.0, 6.0, 5.0]]),
    'gather_lax_batching': ("""\
{ lambda ; a:f32[2,3] b:i32[2,1]. let
    c:f32[2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 1)
      unique_indices=False
    ] a b
  in (c,) }""", [2.0, 3.0]),
    'scatter_lax_batching': ("""\
{ lambda a:f32[2]; b:f32[2,3] c:i32[2,1]. let
    d:f32[2,3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr=None
    ] b c a
  in (d,) }""", [[0.0, 1.0, 7.0], [8.0, 4.0, 5.0]]),
    'grad_scatter_add': ("""\
{ lambda ; a:f32[2,3] b:i32[2] c:f32[2]. let
    d:bool[2] = lt b 0:i32[]
    e:i32[2] = add b 3:i32[]
    f:i32[2] = select_n d b e
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[2,1] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(np.int64(1),), collapsed_slice_dims=(), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=None
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      slice_sizes=(1, 1)
      unique_indices=True
    ] a g
    i:f32[2] = squeeze[dimensions=(1,)] h
    j:f32[2] = mul c i
    k:bool[2] = lt b 0:i32[]
    l:i32[2] = add b 3:i32[]
    m:i32[2] = select_n k b l
    n:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] m
    o:f32[2,3] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; p:f32[] q:f32[]. let r:f32[] = add p q in (r,) }
    ] a n j
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] o
    s:f32[2,3] = broadcast_in_dim 1.0:f32[]
    t:f32[2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(np.int64(1),), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=0
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      slice_sizes=(1, 1)
      unique_indices=False
    ] s n
    u:f32[2] = mul c t
    v:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] u
    w:f32[2,3] = broadcast_in_dim 0.0:f32[]
    x:f32[2,3] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(np.int64(1),), inserted_window_dims=(), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; y:f32[] z:f32[]. let ba:f32[] = add y z in (ba,) }
    ] w g v
    bb:f32[2,3] = add_any s x
  in (bb,) }""", [[11.0, 1.0, 1.0], [1.0, 1.0, 21.0]]),
    'grad_mul': ("""\
{ lambda ; a:f32[2] b:f32[2,3] c:i32[2]. let
    d:bool[2] = lt c 0:i32[]
    e:i32[2] = add c 3:i32[]
    f:i32[2] = select_n d c e
    g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[2,3] = scatter-mul[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(np.int64(1),), scatter_dims_to_operand_dims=(np.int64(1),), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = mul i j in (k,) }
    ] b g a
    _:f32[2,3] = broadcast_in_dim 0.0:f32[]
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] h
    l:f32[2,3] = broadcast_in_dim 1.0:f32[]
    m:f32[2,3] = mul b l
    n:f32[2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(np.int64(1),), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=0
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      slice_sizes=(1, 1)
      unique_indices=False
    ] m g
  in (n,) }""", [0.0, 5.0]),
    'ds': ("""\
{ lambda ; a:f32[2,3] b:i32[2]. let
    c:bool[2] = lt b 0:i32[]
    d:i32[2] = add b 3:i32[]
    e:i32[2] = select_n c b d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2,2] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(np.int64(1),), collapsed_slice_dims=(), start_index_map=(np.int64(1),), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
      fill_value=None
      indices_are_sorted=True
      mode=GatherScatterMode.CLIP
      slice_sizes=(1, 2)
      unique_indices=True
    ] a f
  in (g,) }""", [[0.0, 1.0], [4.0, 5.0]]),
}


@pytest.mark.parametrize("name", sorted(JAX))
def test_text_as_jax(name):
    fn, args = vmap_index_fns(jax, jnp, lax)[name]
    assert str(jax.make_jaxpr(fn)(*args)) == JAX[name][0]


@pytest.mark.parametrize("name", sorted(JAX))
def test_values_as_jax_eager_and_jit(name):
    fn, args = vmap_index_fns(jax, jnp, lax)[name]
    want = JAX[name][1]
    for f in (fn, jax.jit(fn)):
        got = f(*args)
        got = [np.asarray(g) for g in got] if isinstance(got, tuple) else np.asarray(got)
        if isinstance(got, list):
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, np.asarray(w), rtol=1e-6)
        else:
            np.testing.assert_allclose(got, np.asarray(want), rtol=1e-6)


def test_batched_scatter_modes_against_numpy():
    rng = np.random.RandomState(0)
    x = rng.randn(4, 5).astype(np.float32)
    i = np.array([0, 4, 2, 4], np.int32)
    u = rng.randn(4).astype(np.float32)
    ops = {"set": lambda a, b: b, "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
           "min": np.minimum, "max": np.maximum}
    for kind, op in ops.items():
        want = x.copy()
        for r in range(4):
            want[r, i[r]] = op(want[r, i[r]], u[r])
        f = jax.vmap(lambda x, i, u: getattr(x.at[i], kind)(u))
        np.testing.assert_allclose(f(x, i, u), want, rtol=1e-6, err_msg=kind)
        np.testing.assert_allclose(jax.jit(f)(x, i, u), want, rtol=1e-6, err_msg=kind)
    # out-of-range indices are dropped (a scatter) or clamped (x[i] through dynamic_slice), per example
    j = np.array([7, -1, 2, -9], np.int32)
    want = x.copy()
    want[1, 4] = 1.0
    want[2, 2] = 1.0
    np.testing.assert_allclose(jax.vmap(lambda x, i: x.at[i].set(1.0))(x, j), want)
    np.testing.assert_allclose(jax.vmap(lambda x, i: x[i])(x, j), x[np.arange(4), [4, 4, 2, 0]])


def test_grads_against_numpy():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    i = np.array([3, 0, 3], np.int32)
    g = jax.grad(lambda x: jax.vmap(lambda x, i: x[i] ** 2)(x, i).sum())(x)
    want = np.zeros_like(x)
    want[np.arange(3), i] = 2 * x[np.arange(3), i]
    np.testing.assert_allclose(g, want)
    u = np.array([2.0, 3.0, 4.0], np.float32)
    gu = jax.grad(lambda u: jax.vmap(lambda x, i, u: x.at[i].multiply(u))(x, i, u).sum())(u)
    np.testing.assert_allclose(gu, x[np.arange(3), i])
    gx = jax.grad(lambda x: jax.vmap(lambda x, i, u: x.at[i].set(u))(x, i, u).sum())(x)
    want = np.ones_like(x)
    want[np.arange(3), i] = 0
    np.testing.assert_allclose(gx, want)


def test_scatter_batching_dims_checked():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(1,),
                                     scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
                                     scatter_indices_batching_dims=())
    with pytest.raises(TypeError, match="batching_dims"):
        lax.scatter(jnp.ones((2, 3)), jnp.zeros((2, 1), jnp.int32), jnp.ones(2), dn)


SUBTRACT_GRAD_TEXT = """\
{ lambda ; a:f32[3]. let
    b:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
    c:f32[] = squeeze[dimensions=(0,)] b
    d:i32[1] = broadcast_in_dim 1:i32[]
    e:f32[3] = scatter-sub[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; f:f32[] g:f32[]. let h:f32[] = sub f g in (h,) }
    ] a d c
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
    i:f32[3] = broadcast_in_dim 1.0:f32[]
    j:f32[] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=0
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      slice_sizes=(1,)
      unique_indices=False
    ] i d
    k:f32[] = neg j
    l:f32[1] = broadcast_in_dim k
    m:f32[3] = pad[padding_config=((0, np.int64(2), 0),)] l 0.0:f32[]
    n:f32[3] = add_any i m
  in (n,) }"""
SUBTRACT_TEXT = """\
{ lambda ; a:f32[3]. let
    b:i32[1] = broadcast_in_dim 1:i32[]
    c:f32[3] = scatter-sub[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = sub d e in (f,) }
    ] a b 2.0:f32[]
  in (c,) }"""


def test_subtract_is_scatter_sub_as_jax():
    # JAX 0.10.2 stages .at[].subtract as scatter-sub (cranax runs it as a scatter-add of the negation)
    x = jnp.arange(3.0)
    assert str(jax.make_jaxpr(jax.grad(lambda x: x.at[1].subtract(x[0]).sum()))(x)) == SUBTRACT_GRAD_TEXT
    assert str(jax.make_jaxpr(lambda x: x.at[1].subtract(2.0))(x)) == SUBTRACT_TEXT
    # recorded from JAX: [-4.  2.  4.]
    np.testing.assert_allclose(jax.grad(lambda x: (x.at[1].subtract(x[0] * x[2]) ** 2).sum())(x),
                               np.array([-4.0, 2.0, 4.0]), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda x: x.at[jnp.array([0, 2, 0])].subtract(1.0))(x), [-2.0, 1.0, 1.0])


def test_apply_is_a_scatter_with_the_function_as_jax():
    x = jnp.arange(3.0)
    # JAX 0.10.2: a scatter whose update_jaxpr is the function; duplicates apply it again; no JVP
    assert str(jax.make_jaxpr(lambda x: x.at[1].apply(jnp.sin))(x)) == """\
{ lambda ; a:f32[3]. let
    b:i32[1] = broadcast_in_dim 1:i32[]
    c:f32[3] = scatter[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = sin d in (f,) }
    ] a b 0.0:f32[]
  in (c,) }"""
    f = lambda x: x.at[jnp.array([1, 1, 2, 7])].apply(lambda v: v * 2 + 1)  # noqa: E731
    np.testing.assert_allclose(f(x), [0.0, 7.0, 5.0])   # recorded from JAX
    np.testing.assert_allclose(jax.jit(f)(x), [0.0, 7.0, 5.0])
    np.testing.assert_allclose(jax.vmap(lambda x: x.at[jnp.array([1, 1])].apply(lambda v: v * 2))(jnp.ones((2, 3))),
                               [[1.0, 4.0, 1.0], [1.0, 4.0, 1.0]])
    np.testing.assert_allclose(x.at[1].apply(lambda v: v * jnp.float32(3.0)), [0.0, 3.0, 2.0])
    with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
        jax.grad(lambda x: x.at[1].apply(jnp.sin).sum())(x)
    with pytest.raises(NotImplementedError, match="Reduction computations can't close over Tracers"):
        jax.make_jaxpr(lambda x, c: x.at[1].apply(lambda v: v * c))(x, jnp.float32(3.0))
