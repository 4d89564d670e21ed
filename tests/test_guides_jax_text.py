"""Issues 18 and 20: JAX's guides run on cranax and print what JAX prints. A sweep ran every cell of the
guides (``docs/*.md``, ``docs/notebooks``, ``docs/new_docs``) under JAX 0.10.2 and under cranax and diffed
them; these cases are short programs written in the guides' spirit for each difference fixed. Their outputs
were recorded from JAX 0.10.2 by running ``text_cases`` under JAX and ``render`` on each result."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax


def text_cases(jax, jnp, lax):
    """name -> thunk; each thunk's result (or exception) is rendered by ``render``."""
    import importlib
    import numpy as np
    importlib.import_module(jax.__name__ + ".ad_checkpoint")   # jax.ad_checkpoint as an attribute
    r = {}
    # external-callbacks: result shapes written from an example value
    sds = jax.ShapeDtypeStruct
    r["like_np"] = lambda: sds.like(np.arange(3.0))
    r["like_array"] = lambda: sds.like(jnp.arange(3, dtype=jnp.int8))
    r["like_py_float"] = lambda: (sds.like(1.0), sds.like(1.0).weak_type)
    r["like_py_int"] = lambda: sds.like(2)
    r["like_np_scalar"] = lambda: sds.like(np.float32(1))
    r["like_struct"] = lambda: sds.like(sds((2, 3), jnp.int8))
    r["like_key"] = lambda: sds.like(jax.random.key(0))
    r["like_str"] = lambda: sds.like("a")
    r["like_list"] = lambda: sds.like([1, 2])
    r["like_none"] = lambda: sds.like(None)
    r["like_ref"] = lambda: sds.like(jax.new_ref(jnp.ones(2)))
    r["like_traced"] = lambda: jax.jit(lambda x: jnp.zeros(sds.like(x).shape, sds.like(x).dtype))(jnp.ones(2))
    r["pure_callback_like"] = lambda: jax.jit(lambda x: jax.pure_callback(np.cos, sds.like(x), x))(
        jnp.arange(3.0))
    # gradient-checkpointing: a checkpoint inside a checkpoint (the guide's recursive_checkpoint)
    s, ck = jnp.sin, jax.checkpoint
    nested = {"ck_ck": lambda x: ck(lambda y: ck(s)(y))(x),
              "ck_s_ck": lambda x: ck(lambda y: s(ck(s)(y)))(x),
              "s_ck_s_ck": lambda x: s(ck(lambda y: s(ck(s)(y)))(x)),
              "ck_ck_policy": lambda x: ck(lambda y: s(ck(lambda z: s(s(z)))(y) * y),
                                           policy=jax.checkpoint_policies.everything_saveable)(x)}
    for k, f in nested.items():
        r["grad_" + k] = lambda f=f: jax.grad(f)(3.0)
        r["grad_jaxpr_" + k] = lambda f=f: jax.make_jaxpr(jax.grad(f))(3.0)

    def recursive(funs):
        if len(funs) == 1:
            return funs[0]
        if len(funs) == 2:
            return lambda x: funs[0](funs[1](x))
        f1, f2 = recursive(funs[:len(funs) // 2]), recursive(funs[len(funs) // 2:])
        return lambda x: f1(ck(f2)(x))
    r["grad_recursive8"] = lambda: jax.grad(recursive([jnp.sin] * 8))(3.0)
    r["grad_recursive16_vmap"] = lambda: jax.vmap(jax.grad(recursive([jnp.sin] * 16)))(jnp.array([1.0, 3.0]))

    def saved(f, *args):   # print_saved_residuals' lines without the source file's path
        import contextlib
        import importlib
        import io
        print_saved_residuals = importlib.import_module(jax.__name__ + ".ad_checkpoint").print_saved_residuals
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            print_saved_residuals(f, *args)
        return [line.split(" from /")[0].split(" from t:")[0] for line in buf.getvalue().splitlines()]
    r["saved_recursive8"] = lambda: saved(recursive([jnp.sin] * 8), 3.0)
    r["saved_recursive16"] = lambda: saved(recursive([jnp.sin] * 16), 3.0)

    # gradient-checkpointing (cell 21): a checkpointed function's trace is cached by the function and its
    # signature, also across checkpoints of it with other policies (JAX's remat trace cache), so rebinding a
    # global it calls is not seen: the named value made by the new definition is not there to save
    def stale_trace():
        impl = {}

        def loss(x):
            return jnp.sum(impl["f"](x) ** 2)
        impl["f"] = jnp.sin
        cp = jax.checkpoint_policies
        first = saved(jax.checkpoint(loss, policy=cp.dots_with_no_batch_dims_saveable), jnp.ones(4))
        impl["f"] = lambda x: jax.ad_checkpoint.checkpoint_name(jnp.cos(jnp.sin(x)), "a")
        fresh = saved(loss, jnp.ones(4))
        stale = saved(jax.checkpoint(loss, policy=cp.save_any_names_but_these("b")), jnp.ones(4))
        return first, fresh, stale, jax.grad(jax.checkpoint(loss))(jnp.ones(4)), jax.grad(loss)(jnp.ones(4))
    r["saved_stale_trace"] = stale_trace

    # Writing custom interpreters (cell 13): under jit XLA regroups chained divisions, (a/b)/c as a/(b*c),
    # a/(b/c) as (a*c)/b, (a/b)/(c/d) as (a*d)/(b*c), integer_pow[-1] being 1/x; eager ops stay as written
    y5 = (jnp.arange(5) + 1.) / 5.
    r["div_chain_inverse_grad"] = lambda: jax.jit(jax.vmap(jax.grad(lambda y: jnp.arctanh(jnp.log(y)))))(y5)
    qa, qb, qc, qd = (jnp.asarray(np.random.default_rng(k).uniform(0.5, 2, 16).astype(np.float32)) for k in range(4))
    r["div_chain_left"] = lambda: jax.jit(lambda a, b, c: (a / b) / c)(qa, qb, qc)
    r["div_chain_right"] = lambda: jax.jit(lambda a, b, c: a / (b / c))(qa, qb, qc)
    r["div_chain_both"] = lambda: jax.jit(lambda a, b, c, d: (a / b) / (c / d))(qa, qb, qc, qd)
    r["div_chain_three"] = lambda: jax.jit(lambda a, b, c, d: ((a / b) / c) / d)(qa, qb, qc, qd)
    r["div_chain_pow"] = lambda: jax.jit(lambda a, b: lax.integer_pow(a, -2) / b)(qa, qb)
    r["div_chain_shared"] = lambda: jax.jit(lambda a, b, c: ((a / b) / c, a / b))(qa, qb, qc)
    r["div_chain_eager"] = lambda: (qa / qb) / qc

    # new_docs/301/remat: the remat3 switch (cranax keeps remat2's rules; the wrapper names arguments args[i])
    def remat3(f, *args, **kw):
        jax.config.update("jax_remat3", True)
        try:
            return saved(jax.checkpoint(f, **kw), *args)
        finally:
            jax.config.update("jax_remat3", False)

    def named(W, x):
        a = jax.ad_checkpoint.checkpoint_name(jnp.sin(W @ x), "a")
        return jnp.sin(W @ a)
    W = jnp.ones((3, 3))
    r["remat3_names"] = lambda: remat3(named, W, jnp.ones(3),
                                       policy=jax.checkpoint_policies.save_only_these_names("a"))
    r["remat3_grad"] = lambda: (jax.config.update("jax_remat3", True),
                                jax.grad(lambda x: jax.checkpoint(named)(W, x).sum())(jnp.arange(3.0)),
                                jax.config.update("jax_remat3", False))[1]

    # new_docs/301/remat (jax_remat3): only named values are kept, and only under the name policies and
    # everything_saveable; the offloading and dots policies keep none
    def offload(x):
        y = jax.ad_checkpoint.checkpoint_name(jnp.sin(x), "y")
        z = jax.ad_checkpoint.checkpoint_name(jnp.sin(y), "z")
        return jnp.sum(jnp.sin(z))
    cp = jax.checkpoint_policies
    r["remat3_offload_policy"] = lambda: remat3(offload, jnp.arange(4.0), policy=cp.save_and_offload_only_these_names(
        names_which_can_be_saved=["y"], names_which_can_be_offloaded=["z"], offload_src="device",
        offload_dst="pinned_host"))
    r["remat3_everything"] = lambda: remat3(offload, jnp.arange(4.0), policy=cp.everything_saveable)
    r["remat3_dots"] = lambda: remat3(named, W, jnp.ones(3), policy=cp.dots_saveable)
    r["remat3_but_these"] = lambda: remat3(offload, jnp.arange(4.0), policy=cp.save_any_names_but_these("y"))
    r["remat3_offload_grad"] = lambda: (jax.config.update("jax_remat3", True),
                                        jax.grad(jax.checkpoint(offload, policy=cp.offload_dot_with_no_batch_dims(
                                            "device", "pinned_host")))(jnp.arange(4.0)),
                                        jax.config.update("jax_remat3", False))[1]

    # new_docs/201/controlling-xla: set_xla_metadata tags the operation that made a value (HLO text), values
    # and derivatives unchanged
    xm = importlib.import_module(jax.__name__ + ".experimental.xla_metadata")

    def tagged(x):
        y = jnp.sin(x)
        z = jnp.cos(x)
        return xm.set_xla_metadata(y * z, breakpoint=True, tag="a", n=3)
    r["xla_metadata_hlo"] = lambda: jax.jit(tagged).lower(1.0).as_text("hlo")
    r["xla_metadata_jaxpr"] = lambda: jax.make_jaxpr(tagged)(1.0)
    r["xla_metadata_values"] = lambda: (tagged(1.0), jax.grad(tagged)(1.0),
                                        jax.vmap(tagged)(jnp.arange(3.0)), jax.jit(tagged)(2.0))
    r["xla_metadata_tree"] = lambda: jax.tree.map(lambda a: a + 0, xm.set_xla_metadata({"a": 1.0, "b": [2.0]}, k=1))
    r["xla_metadata_param"] = lambda: jax.jit(lambda x: xm.set_xla_metadata(x, k="v") + 1).lower(1.0).as_text("hlo")

    def module_name(n):
        f = lambda x: x
        f.__name__ = f.__qualname__ = n
        return jax.jit(f).lower(1.0).as_text("hlo").split(",")[0]
    r["hlo_module_names"] = lambda: [module_name(n) for n in ["<lambda>", "f_", "a<b>c", "g__", "h.i", "k-l", "_"]]

    def in_context(x):
        with xm.set_xla_metadata(tag="b"):
            return jnp.sin(x) + 1
    r["xla_metadata_context_value"] = lambda: jax.jit(in_context)(1.0)

    # pytrees: dict keys that do not sort
    r["mixed_keys_map"] = lambda: jax.tree.map(lambda x: x + 1, {1: 7, "y": 42})
    r["mixed_keys_leaves"] = lambda: jax.tree_util.tree_leaves({"a": 1, 2: 3})
    r["mixed_keys_jit"] = lambda: jax.jit(lambda t: t)({None: 1.0, 0: 2.0})
    r["sortable_keys"] = lambda: jax.tree_util.tree_structure({3: 1, 1: 2, 2: None})

    # Writing custom interpreters: a Literal's repr
    def lits(f, *args):
        j = jax.make_jaxpr(f)(*args)
        return [repr(v) for e in j.jaxpr.eqns for v in e.invars if not hasattr(v, "count") and
                type(v).__name__ == "Literal"]
    r["literal_reprs_int"] = lambda: lits(lambda x: (x + 1, x * 3, jnp.ones(3, jnp.int32) + x), 2)
    r["literal_reprs_float"] = lambda: lits(lambda x: (x + 1, x * 2.5, x + jnp.float32(3), x - 1j), 2.0)

    # jit's error for an argument that is not an array: the leaf's type and its path (custom_pytrees, jit)
    def f(x, y=1, *args, **kw):
        return x

    def calc(self, x):
        return x
    r["jit_arg_str"] = lambda: jax.jit(f)(1.0, "s")
    r["jit_arg_list"] = lambda: jax.jit(f)([1.0, "s"])
    r["jit_arg_dict"] = lambda: jax.jit(f)({"k": "s"})
    r["jit_arg_varargs"] = lambda: jax.jit(f)(1.0, 2, 3, "s")
    r["jit_arg_varkw"] = lambda: jax.jit(f)(1.0, z="s")
    r["jit_arg_method_self"] = lambda: jax.jit(calc)(object(), 1.0)
    r["jit_arg_static_skipped"] = lambda: jax.jit(f, static_argnums=0)("a", "b")

    # custom_pytrees: a node whose __init__ converts its child (jnp.asarray): vmap never rebuilds it from
    # placeholders; jacfwd/jacrev rebuild it from None (JAX's dtype-check tree_map) and fail there
    class Strict:
        def __init__(self, a):
            self.a = jnp.asarray(a)
    jax.tree_util.register_pytree_node(Strict, lambda t: ((t.a,), None), lambda _, c: Strict(*c))
    st = Strict(jnp.arange(3.0))
    r["vmap_strict_node"] = lambda: jax.vmap(lambda t: t.a * 2)(st)
    r["vmap_strict_node_out"] = lambda: jax.vmap(lambda t: t)(st).a
    r["vmap_strict_axes"] = lambda: jax.vmap(lambda t, x: t.a + x, in_axes=(0, None))(st, 1.0)
    r["jacobian_strict_node"] = lambda: jax.jacobian(lambda t: t.a)(st)
    r["jacfwd_strict_node"] = lambda: jax.jacfwd(lambda t: t.a)(st)
    r["jnp_array_none"] = lambda: jnp.asarray(None)
    r["jnp_array_nested_none"] = lambda: jnp.array([[1.0], [None]])
    r["vmap_bad_prefix"] = lambda: jax.vmap(lambda x: x, in_axes=([0, 0],))([jnp.ones(2)])
    r["vmap_bad_prefix_keys"] = lambda: jax.vmap(lambda x: x, in_axes=({"a": 0, "b": 0},))({"a": jnp.ones(2)})
    r["vmap_bad_prefix_type"] = lambda: jax.vmap(lambda x, y: x, in_axes=(0, [0, 1]))(jnp.ones(2), (jnp.ones(2),) * 2)
    r["vmap_bad_prefix_leaf"] = lambda: jax.vmap(lambda x: x, in_axes=([[0]],))([jnp.ones(2)])
    r["vmap_bad_out_axes"] = lambda: jax.vmap(lambda x: (x, x), out_axes=(0, 0, 0))(jnp.ones(2))

    # refs: a Ref among vjp/grad's primals runs forward; the pullback wants a Ref cotangent (JAX 0.10.2)
    def sq(x_ref):
        return x_ref[...] ** 2

    def rvjp(call):
        y, f_vjp = jax.vjp(sq, jax.new_ref(2.0))
        return y, call(f_vjp)
    r["ref_vjp_primal"] = lambda: jax.vjp(sq, jax.new_ref(3.0))[0]
    r["ref_vjp_call"] = lambda: rvjp(lambda f: f(1.0))
    r["ref_vjp_with_refs"] = lambda: rvjp(lambda f: f.with_refs(jax.new_ref(0.0))(1.0))
    r["ref_grad"] = lambda: jax.grad(lambda r: sq(r).sum())(jax.new_ref(jnp.ones(3)))

    def upd(x_ref):
        x_ref[...] = jnp.sin(x_ref[...])
        return x_ref[...] ** 2
    box = []
    r["ref_vjp_updates_in_place"] = lambda: (box.append(jax.new_ref(2.0)), jax.vjp(upd, box[-1])[0],
                                             box[-1][...])[1:]
    r["ref_buffer_pointer_int"] = lambda: type(jax.new_ref(jnp.arange(3.0)).unsafe_buffer_pointer()).__name__

    # vjp-objects: the pullback's args_res (the primals it keeps) and opaque_residuals
    a2, b2 = jnp.ones(2), jnp.ones(2) * 2

    def kept(f, *args):
        _, fv = jax.vjp(f, *args)
        return repr(fv.args_res), [tuple(o.shape) for o in fv.opaque_residuals], len(jax.tree.leaves(fv))
    r["args_res_two"] = lambda: kept(lambda W, x: jnp.tanh(x @ W), jnp.ones((3, 3)), jnp.ones((2, 3)))
    r["args_res_list"] = lambda: kept(lambda l: l[0] * l[0], [a2])
    r["args_res_tuple"] = lambda: kept(lambda t: t[0] * t[1], (a2, b2))
    r["args_res_nested_same"] = lambda: kept(lambda x, d: x * d["q"][0], a2, {"q": [b2, b2]})
    r["args_res_sin"] = lambda: kept(jnp.sin, a2)

    def swapped():
        W, x = jnp.ones((3, 3)), jnp.arange(6.0).reshape(2, 3)
        y, fv = jax.vjp(lambda W, x: x @ W, W, x)
        fv.args_res[0] = 2 * W   # swap the kept primal, as the guide does to save memory
        return fv(jnp.ones_like(y))
    r["args_res_swapped"] = swapped
    r["args_res_through_jit"] = lambda: jax.jit(lambda f, c: f(c))(
        jax.jit(lambda W, x: jax.vjp(lambda W, x: x @ W, W, x))(jnp.ones((3, 3)), jnp.ones((2, 3)))[1],
        jnp.ones((2, 3)))

    # jit guide: jax_explain_cache_misses' text (paths, line numbers and ids masked)
    def misses(calls):
        import logging
        import re
        records = []

        class Keep(logging.Handler):
            def emit(self, rec):
                records.append(rec.getMessage())
        h = Keep()
        logging.getLogger().addHandler(h)
        jax.config.update("jax_explain_cache_misses", True)
        try:
            calls()
        finally:
            jax.config.update("jax_explain_cache_misses", False)
            logging.getLogger().removeHandler(h)
        text = "\n".join(m for m in records if "TRACING CACHE MISS" in m)
        text = re.sub(r"TRACING CACHE MISS at [^\n]*", "TRACING CACHE MISS at <site>", text)
        return re.sub(r" defined at \S+", " defined at <def>", re.sub(r"id=\d+", "id=?", text))

    def miss_calls():
        def double(x):
            return 2 * x
        d = jax.jit(double)
        d(jnp.arange(3))
        d(jnp.arange(3))
        d(jnp.arange(3.0))
        d(1.0)
        d(jnp.ones((2, 2), jnp.int32))

        def h(x, y):
            return x
        hj = jax.jit(h)
        hj(1.0, [jnp.ones(2)])
        hj(1.0, (jnp.ones(2),))
        hj(2, [jnp.ones(2)])
        hj(1.0, y=[jnp.ones(2)])
        s = jax.jit(lambda a, n=1: a * n, static_argnames="n")
        s(1.0)
        s(1.0, n=2)
        s(1.0, n=3)
        s(jnp.ones(2), n=3)
    r["explain_cache_misses"] = lambda: misses(miss_calls)
    return r


def render(thunk):
    """A case's result as text: a jaxpr's text, an array's values, dtype and weak type, or the exception's
    class and message."""
    import numpy as np
    try:
        out = thunk()
    except Exception as e:   # the error is what is compared (addresses masked)
        import re
        return re.sub(r"0x[0-9a-f]+", "0x?", f"{type(e).__name__}: {e}")

    def one(y):
        if hasattr(y, "eqns") or hasattr(y, "jaxpr"):
            return str(y)
        if hasattr(y, "_buf") or type(y).__name__ in ("ArrayImpl",):
            return f"{np.asarray(y).tolist()} {y.dtype} weak={y.weak_type}"
        return repr(y)
    if isinstance(out, tuple):
        return "(" + ", ".join(one(y) for y in out) + ")"
    return one(out)


JAX_OUT = {
    'like_np': 'ShapeDtypeStruct(shape=(3,), dtype=float32)',
    'like_array': 'ShapeDtypeStruct(shape=(3,), dtype=int8)',
    'like_py_float': '(ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True), True)',
    'like_py_int': 'ShapeDtypeStruct(shape=(), dtype=int32, weak_type=True)',
    'like_np_scalar': 'ShapeDtypeStruct(shape=(), dtype=float32)',
    'like_struct': 'ShapeDtypeStruct(shape=(2, 3), dtype=int8)',
    'like_key': 'ShapeDtypeStruct(shape=(), dtype=key<fry>)',
    'like_str': "TypeError: Argument 'a' of type <class 'str'> is not a valid JAX type",
    'like_list': "TypeError: Cannot interpret value of type <class 'list'> as an abstract array; it does not have a dtype attribute",
    'like_none': "TypeError: Cannot interpret value of type <class 'NoneType'> as an abstract array; it does not have a dtype attribute",
    'like_ref': 'NotImplementedError: Ref/AbstractRef support is not implemented. Please file an issue at https://github.com/jax-ml/jax/issues',
    'like_traced': '[0.0, 0.0] float32 weak=False',
    'pure_callback_like': '[1.0, 0.5403022766113281, -0.41614681482315063] float32 weak=False',
    'grad_ck_ck': '-0.9899924993515015 float32 weak=True',
    'grad_jaxpr_ck_ck': '{ lambda ; a:f32[]. let\n    _:f32[] = remat2[\n      differentiated=False\n      jaxpr={ lambda ; b:f32[]. let c:f32[] = sin b in (c,) }\n      policy=None\n      prevent_cse=True\n    ] a\n    d:f32[] = remat2[\n      differentiated=True\n      jaxpr={ lambda ; e:f32[] f:f32[]. let\n          g:f32[] = remat2[\n            differentiated=True\n            jaxpr={ lambda ; h:f32[] i:f32[]. let\n                j:f32[] = cos h\n                k:f32[] = mul i j\n              in (k,) }\n            policy=None\n            prevent_cse=True\n          ] e f\n        in (g,) }\n      policy=None\n      prevent_cse=True\n    ] a 1.0:f32[]\n  in (d,) }',
    'grad_ck_s_ck': '-0.9801510572433472 float32 weak=True',
    'grad_jaxpr_ck_s_ck': '{ lambda ; a:f32[]. let\n    b:f32[] = remat2[\n      differentiated=False\n      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }\n      policy=None\n      prevent_cse=True\n    ] a\n    _:f32[] = sin b\n    e:f32[] = remat2[\n      differentiated=True\n      jaxpr={ lambda ; f:f32[] g:f32[]. let\n          h:f32[] = sin f\n          i:f32[] = cos h\n          j:f32[] = mul g i\n          k:f32[] = remat2[\n            differentiated=True\n            jaxpr={ lambda ; l:f32[] m:f32[]. let\n                n:f32[] = cos l\n                o:f32[] = mul m n\n              in (o,) }\n            policy=None\n            prevent_cse=True\n          ] f j\n        in (k,) }\n      policy=None\n      prevent_cse=True\n    ] a 1.0:f32[]\n  in (e,) }',
    'grad_s_ck_s_ck': '-0.9704719185829163 float32 weak=True',
    'grad_jaxpr_s_ck_s_ck': '{ lambda ; a:f32[]. let\n    b:f32[] = remat2[\n      differentiated=False\n      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }\n      policy=None\n      prevent_cse=True\n    ] a\n    e:f32[] = sin b\n    _:f32[] = sin e\n    f:f32[] = cos e\n    g:f32[] = mul 1.0:f32[] f\n    h:f32[] = remat2[\n      differentiated=True\n      jaxpr={ lambda ; i:f32[] j:f32[]. let\n          k:f32[] = sin i\n          l:f32[] = cos k\n          m:f32[] = mul j l\n          n:f32[] = remat2[\n            differentiated=True\n            jaxpr={ lambda ; o:f32[] p:f32[]. let\n                q:f32[] = cos o\n                r:f32[] = mul p q\n              in (r,) }\n            policy=None\n            prevent_cse=True\n          ] i m\n        in (n,) }\n      policy=None\n      prevent_cse=True\n    ] a g\n  in (h,) }',
    'grad_ck_ck_policy': '-2.5542290210723877 float32 weak=True',
    'grad_jaxpr_ck_ck_policy': '{ lambda ; a:f32[]. let\n    b:f32[] c:f32[] d:f32[] = remat2[\n      differentiated=False\n      jaxpr={ lambda ; e:f32[]. let\n          f:f32[] = sin e\n          g:f32[] = cos e\n          h:f32[] = sin f\n          i:f32[] = cos f\n        in (h, g, i) }\n      policy=None\n      prevent_cse=True\n    ] a\n    j:f32[] = reduce_precision[exponent_bits=8 mantissa_bits=23] b\n    k:f32[] = mul j a\n    _:f32[] = sin k\n    l:f32[] = cos k\n    m:f32[] = remat2[\n      differentiated=True\n      jaxpr={ lambda ; n:f32[] o:f32[] p:f32[] q:f32[] r:f32[] s:f32[]. let\n          t:f32[] = mul s q\n          u:f32[] = mul p t\n          v:f32[] = mul t r\n          w:f32[] = remat2[\n            differentiated=True\n            jaxpr={ lambda ; x:f32[] y:f32[] z:f32[]. let\n                ba:f32[] = mul z y\n                bb:f32[] = mul ba x\n              in (bb,) }\n            policy=None\n            prevent_cse=True\n          ] n o v\n          bc:f32[] = add_any u w\n        in (bc,) }\n      policy=<function everything_saveable at 0xXXXXXXXXXXXX>\n      prevent_cse=True\n    ] c d j l a 1.0:f32[]\n  in (m,) }',
    'grad_recursive8': '-0.924382746219635 float32 weak=True',
    'grad_recursive16_vmap': '[0.04500621184706688, -0.8578497171401978] float32 weak=False',
    'saved_recursive8': "['f32[] from the argument x', 'f32[] output of sin', 'f32[] output of cos', 'f32[] output of cos']",
    'saved_recursive16': "['f32[] from the argument x', 'f32[] output of sin', 'f32[] output of sin', 'f32[] output of cos', 'f32[] output of cos']",
    'saved_stale_trace': "(['f32[4] from the argument x'], ['f32[4] output of cos', 'f32[4] output of sin', 'f32[4] output of mul'], ['f32[4] from the argument x'], [0.9092973470687866, 0.9092973470687866, 0.9092973470687866, 0.9092973470687866] float32 weak=False, [-0.5369082689285278, -0.5369082689285278, -0.5369082689285278, -0.5369082689285278] float32 weak=False)",
    'div_chain_inverse_grad': '[-3.1440796852111816, 15.584931373596191, 2.2551252841949463, 1.3155027627944946, 1.0] float32 weak=True',
    'div_chain_left': '[1.286468267440796, 0.4957008957862854, 0.45540156960487366, 0.4278371334075928, 1.269310474395752, 1.0338940620422363, 1.0354845523834229, 2.4563398361206055, 1.0885367393493652, 2.3649277687072754, 0.787077784538269, 0.5318417549133301, 1.5630046129226685, 0.21748892962932587, 1.4724149703979492, 0.4461959898471832] float32 weak=False',
    'div_chain_right': '[1.0245565176010132, 0.44524097442626953, 1.3493578433990479, 0.17407970130443573, 2.488384246826172, 2.623135566711426, 0.6329833269119263, 0.8340808749198914, 0.9062857627868652, 5.223275184631348, 1.4204543828964233, 0.2796213626861572, 2.0632870197296143, 0.4919280707836151, 1.8940517902374268, 0.937838077545166] float32 weak=False',
    'div_chain_both': '[0.80851149559021, 0.42393121123313904, 0.7750532627105713, 0.5875244140625, 0.8138728737831116, 1.1886579990386963, 1.2618175745010376, 1.8167294263839722, 1.743689775466919, 1.5857031345367432, 0.8554294109344482, 0.678156852722168, 1.7911126613616943, 0.30017775297164917, 2.3658125400543213, 0.8631219863891602] float32 weak=False',
    'div_chain_three': '[2.0469722747802734, 0.5796207785606384, 0.26758238673210144, 0.31155234575271606, 1.9796074628829956, 0.8992804288864136, 0.8497490286827087, 3.3211357593536377, 0.6795430779457092, 3.527068614959717, 0.7241876721382141, 0.41709473729133606, 1.3639475107192993, 0.15757808089256287, 0.916389524936676, 0.23066365718841553] float32 weak=False',
    'div_chain_pow': '[0.3723765015602112, 0.6344863772392273, 4.428980350494385, 1.8882217407226562, 0.34932443499565125, 0.2521898150444031, 0.28883734345436096, 0.3532508611679077, 0.43635857105255127, 0.5103076100349426, 0.20643188059329987, 3.01027512550354, 0.3151649832725525, 1.9619379043579102, 0.41195639967918396, 1.4535431861877441] float32 weak=False',
    'div_chain_shared': '([1.286468267440796, 0.4957008957862854, 0.45540156960487366, 0.4278371334075928, 1.269310474395752, 1.0338940620422363, 1.0354845523834229, 2.4563398361206055, 1.0885367393493652, 2.3649277687072754, 0.787077784538269, 0.5318417549133301, 1.5630046129226685, 0.21748892962932587, 1.4724149703979492, 0.4461959898471832] float32 weak=False, [1.1480677127838135, 0.4697939157485962, 0.783900260925293, 0.2729061543941498, 1.7772259712219238, 1.646828532218933, 0.8095952272415161, 1.4313580989837646, 0.9932398200035095, 3.514636278152466, 1.057358980178833, 0.3856349289417267, 1.79580819606781, 0.3270915746688843, 1.6699790954589844, 0.6468845009803772] float32 weak=False)',
    'div_chain_eager': '[1.286468267440796, 0.495700865983963, 0.45540153980255127, 0.42783716320991516, 1.269310474395752, 1.0338939428329468, 1.0354845523834229, 2.4563398361206055, 1.0885367393493652, 2.3649277687072754, 0.7870777249336243, 0.5318416953086853, 1.5630046129226685, 0.21748891472816467, 1.4724149703979492, 0.44619596004486084] float32 weak=False',
    'remat3_names': '[\'f32[3,3] from the argument args[0]\', \'f32[3] from the argument args[1]\', "f32[3] named \'a\'"]',
    'remat3_grad': '[-8.123308181762695, -8.123308181762695, -8.123308181762695] float32 weak=False',
    'remat3_offload_policy': "['f32[4] from the argument args[0]']",
    'remat3_everything': '[\'f32[4] from the argument args[0]\', "f32[4] named \'y\'", "f32[4] named \'z\'"]',
    'remat3_dots': "['f32[3,3] from the argument args[0]', 'f32[3] from the argument args[1]', 'f32[3] output of dot_general', 'f32[3] output of dot_general']",
    'remat3_but_these': '[\'f32[4] from the argument args[0]\', "f32[4] named \'z\'"]',
    'remat3_offload_grad': '[1.0, 0.2645082473754883, -0.1800987720489502, -0.9704719185829163] float32 weak=False',
    'xla_metadata_hlo': '\'HloModule jit_tagged, entry_computation_layout={(f32[])->f32[]}\\n\\nENTRY main.1 {\\n  x.1 = f32[] parameter(0)\\n  sin.1 = f32[] sine(x.1)\\n  cos.1 = f32[] cosine(x.1)\\n  ROOT mul.1 = f32[] multiply(sin.1, cos.1), frontend_attributes={breakpoint="true",n="3",tag="a"}\\n}\\n\\n\'',
    'xla_metadata_jaxpr': "{ lambda ; a:f32[]. let\n    b:f32[] = sin a\n    c:f32[] = cos a\n    d:f32[] = mul b c\n    e:f32[] = xla_metadata_value[\n      xla_metadata_kvs=(('breakpoint', True), ('n', 3), ('tag', 'a'))\n    ] d\n  in (e,) }",
    'xla_metadata_values': '(0.4546486735343933 float32 weak=True, -0.41614681482315063 float32 weak=True, [0.0, 0.4546486735343933, -0.3784012496471405] float32 weak=False, -0.3784012496471405 float32 weak=True)',
    'xla_metadata_tree': "{'a': Array(1., dtype=float32, weak_type=True), 'b': [Array(2., dtype=float32, weak_type=True)]}",
    'xla_metadata_param': "'HloModule jit__lambda, entry_computation_layout={(f32[])->f32[]}\\n\\nENTRY main.1 {\\n  x.1 = f32[] parameter(0)\\n  constant.1 = f32[] constant(1)\\n  ROOT add.1 = f32[] add(x.1, constant.1)\\n}\\n\\n'",
    'xla_metadata_context_value': '1.8414709568023682 float32 weak=True',
    'hlo_module_names': "['HloModule jit__lambda', 'HloModule jit_f', 'HloModule jit_a_b_c', 'HloModule jit_g', 'HloModule jit_h.i', 'HloModule jit_k-l', 'HloModule jit']",
    'mixed_keys_map': 'ValueError: Comparator raised exception while sorting pytree dictionary keys.',
    'mixed_keys_leaves': 'ValueError: Comparator raised exception while sorting pytree dictionary keys.',
    'mixed_keys_jit': 'ValueError: Comparator raised exception while sorting pytree dictionary keys.',
    'sortable_keys': 'PyTreeDef({1: *, 2: None, 3: *})',
    'literal_reprs_int': "['Literal(TypedInt(1, dtype=int32))', 'Literal(TypedInt(3, dtype=int32))', 'Literal(1)']",
    'literal_reprs_float': "['Literal(1.0)', 'Literal(2.5)', 'Literal(3.0)', 'Literal(TypedComplex(1j, dtype=complex64))']",
    'jit_arg_str': "TypeError: Error interpreting argument to <function text_cases.<locals>.f at 0x?> as an abstract array. The problematic value is of type <class 'str'> and was passed to the function at path y.\nThis typically means that a jit-wrapped function was called with a non-array argument, and this argument was not marked as static using the static_argnums or static_argnames parameters of jax.jit.",
    'jit_arg_list': "TypeError: Error interpreting argument to <function text_cases.<locals>.f at 0x?> as an abstract array. The problematic value is of type <class 'str'> and was passed to the function at path x[1].\nThis typically means that a jit-wrapped function was called with a non-array argument, and this argument was not marked as static using the static_argnums or static_argnames parameters of jax.jit.",
    'jit_arg_dict': "TypeError: Error interpreting argument to <function text_cases.<locals>.f at 0x?> as an abstract array. The problematic value is of type <class 'str'> and was passed to the function at path x['k'].\nThis typically means that a jit-wrapped function was called with a non-array argument, and this argument was not marked as static using the static_argnums or static_argnames parameters of jax.jit.",
    'jit_arg_varargs': "TypeError: Error interpreting argument to <function text_cases.<locals>.f at 0x?> as an abstract array. The problematic value is of type <class 'str'> and was passed to the function at path args[1].\nThis typically means that a jit-wrapped function was called with a non-array argument, and this argument was not marked as static using the static_argnums or static_argnames parameters of jax.jit.",
    'jit_arg_varkw': "TypeError: Error interpreting argument to <function text_cases.<locals>.f at 0x?> as an abstract array. The problematic value is of type <class 'str'> and was passed to the function at path kw['z'].\nThis typically means that a jit-wrapped function was called with a non-array argument, and this argument was not marked as static using the static_argnums or static_argnames parameters of jax.jit.",
    'jit_arg_method_self': "TypeError: Error interpreting argument to <function text_cases.<locals>.calc at 0x?> as an abstract array. The problematic value is of type <class 'object'> and was passed to the function at path self.\nThis typically means that a jit-wrapped function was called with a non-array argument, and this argument was not marked as static using the static_argnums or static_argnames parameters of jax.jit.",
    'jit_arg_static_skipped': "TypeError: Error interpreting argument to <function text_cases.<locals>.f at 0x?> as an abstract array. The problematic value is of type <class 'str'> and was passed to the function at path y.\nThis typically means that a jit-wrapped function was called with a non-array argument, and this argument was not marked as static using the static_argnums or static_argnames parameters of jax.jit.",
    'vmap_strict_node': '[0.0, 2.0, 4.0] float32 weak=False',
    'vmap_strict_node_out': '[0.0, 1.0, 2.0] float32 weak=False',
    'vmap_strict_axes': '[1.0, 2.0, 3.0] float32 weak=False',
    'jacobian_strict_node': 'ValueError: None is not a valid value for jnp.array',
    'jacfwd_strict_node': 'ValueError: None is not a valid value for jnp.array',
    'jnp_array_none': 'ValueError: None is not a valid value for jnp.array',
    'jnp_array_nested_none': 'ValueError: None is not a valid value for jnp.array',
    'vmap_bad_prefix': 'ValueError: vmap in_axes specification must be a tree prefix of the corresponding value; \n  Mismatch details (1 found):\n  pytree structure error: different lengths of list at key path\n    vmap in_axes[0]\nAt that key path, the prefix pytree vmap in_axes has a subtree of type list of length 2, but the full pytree has a subtree of the same type but of length 1.',
    'vmap_bad_prefix_keys': "ValueError: vmap in_axes specification must be a tree prefix of the corresponding value; \n  Mismatch details (1 found):\n  pytree structure error: different numbers of pytree children at key path\n    vmap in_axes[0]\nAt that key path, the prefix pytree vmap in_axes has a subtree of type\n    <class 'dict'>\nwith 2 child keys\n    a b\nbut at the same key path the full pytree has a subtree of the same type but with 1 child keys\n    a\nso the symmetric difference on key sets is\n    b",
    'vmap_bad_prefix_type': "ValueError: vmap in_axes specification must be a tree prefix of the corresponding value; \n  Mismatch details (1 found):\n  pytree structure error: different types at key path\n    vmap in_axes[1]\nAt that key path, the prefix pytree vmap in_axes has a subtree of type\n    <class 'list'>\nbut at the same key path the full pytree has a subtree of different type\n    <class 'tuple'>.",
    'vmap_bad_prefix_leaf': "ValueError: vmap in_axes specification must be a tree prefix of the corresponding value; \n  Mismatch details (1 found):\n  pytree structure error: different types at key path\n    vmap in_axes[0][0]\nAt that key path, the prefix pytree vmap in_axes has a subtree of type\n    <class 'list'>\nbut at the same key path the full pytree has a subtree of different type\n    <class 'jax._src.api_util.PytreeLeaf'>.",
    'vmap_bad_out_axes': 'ValueError: vmap out_axes specification must be a tree prefix of the corresponding value; \n  Mismatch details (1 found):\n  pytree structure error: different lengths of tuple at key path\n    vmap out_axes\nAt that key path, the prefix pytree vmap out_axes has a subtree of type tuple of length 3, but the full pytree has a subtree of the same type but of length 2.',
    'ref_vjp_primal': '9.0 float32 weak=True',
    'ref_vjp_call': 'ValueError: Expected cotangent type Ref{float32[]} but got float32[]',
    'ref_vjp_with_refs': 'ValueError: Expected cotangent type Ref{float32[]} but got float32[]',
    'ref_grad': 'ValueError: Expected cotangent type Ref{float32[3]} but got float32[3]',
    'ref_vjp_updates_in_place': '(0.8268217444419861 float32 weak=True, 0.9092974066734314 float32 weak=True)',
    'ref_buffer_pointer_int': "'int'",
    'args_res_two': "('[Array([[1., 1., 1.],\\n       [1., 1., 1.],\\n       [1., 1., 1.]], dtype=float32), Array([[1., 1., 1.],\\n       [1., 1., 1.]], dtype=float32)]', [(2, 3), (2, 3)], 4)",
    'args_res_list': "('[(Array([1., 1.], dtype=float32),)]', [], 1)",
    'args_res_tuple': "('[(Array([1., 1.], dtype=float32), Array([2., 2.], dtype=float32))]', [], 2)",
    'args_res_nested_same': "('[Array([1., 1.], dtype=float32), ((Array([2., 2.], dtype=float32), Array([2., 2.], dtype=float32)),)]', [], 3)",
    'args_res_sin': "('[NotNeeded()]', [(2,)], 1)",
    'args_res_swapped': '([[3.0, 3.0, 3.0], [5.0, 5.0, 5.0], [7.0, 7.0, 7.0]] float32 weak=False, [[6.0, 6.0, 6.0], [6.0, 6.0, 6.0]] float32 weak=False)',
    'args_res_through_jit': '([[2.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0]] float32 weak=False, [[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]] float32 weak=False)',
    'explain_cache_misses': '"TRACING CACHE MISS at <site>\\n  never seen function:\\n    double id=? defined at <def>\\nTRACING CACHE MISS at <site>\\n  for double defined at <def>\\n  all previously seen cache keys differ. For the closest previous key:\\n  different input types:\\n  * at x, now f32[3] and before i32[3]\\nTRACING CACHE MISS at <site>\\n  for double defined at <def>\\n  all previously seen cache keys differ. For the closest previous key:\\n  different input types:\\n  * at x, now f32[]({}){weak_type=True} and before f32[3]({}){weak_type=False}https://docs.jax.dev/en/latest/type_promotion.html#weak-types\\nTRACING CACHE MISS at <site>\\n  for double defined at <def>\\n  all previously seen cache keys differ. For the closest previous key:\\n  different input types:\\n  * at x, now i32[2,2]({}) and before f32[3]({})\\nTRACING CACHE MISS at <site>\\n  never seen function:\\n    h id=? defined at <def>\\nTRACING CACHE MISS at <site>\\n  for h defined at <def>\\n  all previously seen cache keys differ. For the closest previous key:\\n  different input pytree:\\n  * at input path [0][1], now <class \'tuple\'> and before <class \'list\'>, so their Python types differ\\nTRACING CACHE MISS at <site>\\n  for h defined at <def>\\n  all previously seen cache keys differ. For the closest previous key:\\n  different input pytree:\\n  * at input path [0][1], now <class \'list\'> and before <class \'tuple\'>, so their Python types differ\\nTRACING CACHE MISS at <site>\\n  for h defined at <def>\\n  all previously seen cache keys differ. For the closest previous key:\\n  different input pytree:\\n  * at input path [0], now tuple of length 1 and before tuple of length 2, so the lengths do not match\\n  * at input path [1], now <class \'dict\'> with 1 child and before <class \'dict\'> with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {\'y\'}\\nTRACING CACHE MISS at <site>\\n  never seen function:\\n    <lambda> id=? defined at <def>\\nTRACING CACHE MISS at <site>\\n  for <lambda> defined at <def>\\n  all previously seen cache keys differ. For the closest previous key:\\n  different input pytree:\\n  * at input path [1], now <class \'dict\'> with 1 child and before <class \'dict\'> with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {\'n\'}\\nTRACING CACHE MISS at <site>\\n  for <lambda> defined at <def>\\n  all previously seen cache keys differ. For the closest previous key:\\n  different input pytree:\\n  * at input path [1], now <class \'dict\'> with 1 child and before <class \'dict\'> with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {\'n\'}\\nTRACING CACHE MISS at <site>\\n  for <lambda> defined at <def>\\n  all previously seen cache keys differ. For the closest previous key:\\n  different input pytree:\\n  * at input path [1], now <class \'dict\'> with 1 child and before <class \'dict\'> with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {\'n\'}"',
}


@pytest.mark.parametrize("name", sorted(JAX_OUT))
def test_output_as_jax(name):
    assert render(text_cases(jax, jnp, lax)[name]) == JAX_OUT[name]


def test_every_case_recorded():
    assert sorted(text_cases(jax, jnp, lax)) == sorted(JAX_OUT)


def test_safe_map_and_friends():
    """jax._src.util's list helpers (the custom-interpreter guide's ``safe_map``), with JAX 0.10.2's errors."""
    from cranax._compat._src import util
    assert util.safe_map(lambda a, b: a + b, [1, 2], (3, 4)) == [4, 6]
    assert util.safe_zip([1, 2], [3, 4]) == [(1, 3), (2, 4)]
    assert util.unzip2([(1, 2), (3, 4)]) == ((1, 3), (2, 4)) and util.unzip2([]) == ((), ())
    assert util.unzip3([(1, 2, 5), (3, 4, 6)]) == ((1, 3), (2, 4), (5, 6))
    assert util.split_list([1, 2, 3, 4], [1, 2]) == [[1], [2, 3], [4]]
    assert util.partition_list([True, False, True], [1, 2, 3]) == ([2], [1, 3])
    assert util.merge_lists([True, False, True], [2], [1, 3]) == [1, 2, 3]
    for call, text in [(lambda: util.safe_map(lambda a, b: a, [1, 2, 3], [3, 4]),
                        "safe_map() argument 2 is shorter than argument 1"),
                       (lambda: util.safe_map(lambda a, b, c: a, [1, 2], [3, 4], [5]),
                        "safe_map() argument 3 is shorter than argument 1"),
                       (lambda: util.safe_map(lambda a, b: a, [1], [3, 4]),
                        "safe_map() argument 2 is longer than argument 1"),
                       (lambda: util.safe_zip([1], [3, 4], [5, 6]),
                        "safe_zip() argument 1 has length 2 but argument 0 has length 1. All lengths: (1, 2, 2)")]:
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == text


def test_remat3_flag_keeps_values():
    """jax_remat3=True: the same values as remat2 (NumPy oracle), the checkpoint a functools.partial."""
    import functools
    x = np.array([0.5, -1.0, 2.0], np.float32)
    jax.config.update("jax_remat3", True)
    try:
        f = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
        assert isinstance(f, functools.partial)
        g = jax.grad(lambda x: f(x).sum())(x)
    finally:
        jax.config.update("jax_remat3", False)
    np.testing.assert_allclose(g, np.cos(np.sin(x)) * np.cos(x), rtol=1e-6)
    assert not isinstance(jax.checkpoint(jnp.sin), functools.partial)


def test_alias_missing_names_say_what_jax_says(tmp_path):
    """Under ``python -m cranax.run``, a name cranax lacks gives JAX's (and Python's) text, nothing added."""
    import subprocess
    import sys
    script = tmp_path / "prog.py"
    script.write_text("import jax\n"
                      "try:\n    jax.custom_remat\nexcept AttributeError as e:\n    print(e)\n"
                      "try:\n    import jax._src.no_such_module\nexcept ImportError as e:\n    print(e)\n"
                      "print(__file__)\n")
    out = subprocess.run([sys.executable, "-m", "cranax.run", "prog.py"], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out == ["module 'jax' has no attribute 'custom_remat'", "No module named 'jax._src.no_such_module'",
                   str(script)]


def test_logging_level_option():
    """jax_logging_level (the compilation-cache guide): JAX's values and error; the "jax" logger's level
    follows, with a handler while set (JAX 0.10.2 keeps the level after None)."""
    import logging
    assert jax.config.jax_logging_level == "NOTSET"
    try:
        jax.config.update("jax_logging_level", "DEBUG")
        assert logging.getLogger("jax").level == logging.DEBUG and jax.config.jax_logging_level == "DEBUG"
        assert logging.getLogger("jax").handlers
        jax.config.update("jax_logging_level", None)
        assert logging.getLogger("jax").level == logging.DEBUG and not logging.getLogger("jax").handlers
        with pytest.raises(ValueError) as e:
            jax.config.update("jax_logging_level", "LOUD")
        assert str(e.value) == ("new enum value must be None or in ['NOTSET', 'DEBUG', 'INFO', 'WARNING', 'ERROR', "
                                "'CRITICAL'], got LOUD of type <class 'str'>.")
    finally:
        jax.config.update("jax_logging_level", "NOTSET")
        jax.config.update("jax_logging_level", None)
        logging.getLogger("jax").setLevel(logging.NOTSET)
        logging.getLogger("cranax").setLevel(logging.NOTSET)


def _tanh_points():
    rng = np.random.default_rng(2026)
    return np.concatenate([np.linspace(-9, 9, 200001, dtype=np.float32), rng.uniform(-1, 1, 100000).astype(np.float32),
                           rng.uniform(-0.001, 0.001, 20000).astype(np.float32),
                           np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-40, 3e-4, 4e-4, 20, -20, 7.9988,
                                     7.99881172180175781, 8.0], np.float32)])


def test_float32_tanh_is_xlas():
    """float32 tanh gives XLA:CPU's bits (its rational approximation): the autodiff guides print tanh-based
    losses and gradients to the last digit. Digests of JAX 0.10.2's results (jit), whole arrays and
    odd-shaped ones (vector body and scalar tail), plus a few values as bits."""
    import hashlib
    x = _tanh_points()
    got = np.asarray(jax.jit(jnp.tanh)(x))
    assert hashlib.sha256(got.tobytes()).hexdigest()[:32] == "5178e0bb0cb85a90b9192f8122d094e7"
    odd = np.asarray(jax.jit(jnp.tanh)(x[:100000].reshape(-1, 4)[:, :3]))
    assert hashlib.sha256(odd.tobytes()).hexdigest()[:32] == "33cd4483c50de6b60d348600f2c856df"
    pts = np.array([0.3, -0.7, 1.5, 2.0, 0.01, 3.0, 6.2654047], np.float32)
    assert np.asarray(jnp.tanh(pts)).view(np.uint32).tolist() == [
        1049962221, 3206199257, 1063761867, 1064749699, 1008981411, 1065270248, 1065353094]
    ok = np.isfinite(x)
    np.testing.assert_allclose(got[ok], np.tanh(x[ok].astype(np.float64)), rtol=6e-7, atol=1e-38)


def test_float32_logistic_is_xlas():
    """float32 logistic (jax.nn.sigmoid) gives XLA:CPU's bits, 1 / (1 + exp(-x)) over its exp: digests of
    JAX 0.10.2's results and a few values as bits; within 4 ulp of the exact value (NumPy float64)."""
    import hashlib
    rng = np.random.default_rng(2026)
    x = np.concatenate([np.linspace(-30, 30, 200001, dtype=np.float32), rng.uniform(-100, 100, 50000).astype(np.float32),
                        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -87.0, -88.7, 88.7, -104.0], np.float32)])
    got = np.asarray(jax.jit(jax.nn.sigmoid)(x))
    assert hashlib.sha256(got.tobytes()).hexdigest()[:32] == "ef54137580a50c3f6b1d5f91360bfeb1"
    odd = np.asarray(jax.jit(lax.logistic)(x[:99999].reshape(-1, 3)[:, :2]))
    assert hashlib.sha256(odd.tobytes()).hexdigest()[:32] == "aa837a1be45885f67aa1eb8252e788cc"
    assert np.asarray(jax.nn.sigmoid(np.array([-3.0, -0.5, 0.25, 4.0, -20.0], np.float32))).view(np.uint32).tolist() \
        == [1027752354, 1052855555, 1058007757, 1065051457, 822977587]
    ok = np.isfinite(x) & (np.abs(x) < 80)
    want = 1 / (1 + np.exp(-x[ok].astype(np.float64)))
    assert (np.abs(got[ok] - want) / np.spacing(want.astype(np.float32)).astype(np.float64)).max() <= 4


def test_src_test_util_create_mesh():
    """jax._src.test_util (imported by the gradient-checkpointing guide): create_mesh over the default
    backend's devices, JAX's SkipTest text when they are too few."""
    import unittest
    from cranax._compat._src import test_util as jtu
    assert dict(jtu.create_mesh((1,), ("x",)).shape) == {"x": 1}
    with pytest.raises(unittest.SkipTest, match=r"^Test requires 64 global devices and found 1\.$"):
        jtu.create_mesh((8, 8), ("x", "y"))
    assert jtu.check_grads is jax.test_util.check_grads


_REF_AND_TRACEBACK_PROG = '''
import traceback
import jax
import jax.numpy as jnp
r = jax.new_ref(jnp.ones(3))
for name, f in [("sin", jnp.sin), ("sum", jnp.sum), ("clip", lambda r: jnp.clip(r, 0, 1)),
                ("add", lambda r: jnp.add(r, 1.0)), ("reshape", lambda r: jnp.reshape(r, (3, 1))),
                ("where", lambda r: jnp.where(r, 1, 2)), ("abs", jnp.abs), ("var", jnp.var),
                ("jit", jax.jit(lambda: jnp.sin(r)))]:
    try:
        f() if name == "jit" else f(r)
    except TypeError as e:
        print(e)
jax.config.update("jax_debug_nans", True)


def f(x):
    w = 3 * jnp.square(x)
    return jnp.log(-w)


for call in (lambda: f(5.0), lambda: jax.jit(f)(5.0)):
    try:
        call()
    except FloatingPointError:
        tb = traceback.format_exc()
        print([line for line in tb.splitlines() if "/jax/_src/" not in line and not line.startswith("    ")])
jax.config.update("jax_debug_nans", False)
jax.config.update("jax_traceback_filtering", "off")
try:
    jax.jit(lambda x: x.nope)(1.0)
except AttributeError as e:
    print(getattr(e, "__notes__", None))
'''

# Printed by JAX 0.10.2 running the program above (the program drops JAX's frame of jnp.log, which JAX keeps).
_TB = ("['Traceback (most recent call last):', '  File \"{p}\", line 24, in <module>', '  File \"{p}\", line 22, "
       "in <lambda>', '  File \"{p}\", line 19, in f', 'FloatingPointError: invalid value (nan) encountered in log', "
       "'--------------------', 'For simplicity, JAX has removed its internal frames from the traceback of the "
       "following exception. Set JAX_TRACEBACK_FILTERING=off to include these.']")
_NAN = "Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized version."
_REF_AND_TRACEBACK_JAX = [
    "sin requires ndarray or scalar arguments, got <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'> "
    "at position 0.",
    "sum requires ndarray or scalar arguments, got <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'> "
    "at position 0.",
    "clip requires ndarray or scalar arguments, got <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'> "
    "at position 0.",
    "add requires ndarray or scalar arguments, got <class 'jax._src.core.Ref'> at position 0.",
    "reshape requires ndarray or scalar arguments, got <class 'jax._src.core.Ref'> at position 0.",
    "where requires ndarray or scalar arguments, got <class 'jax._src.core.Ref'> at position 0.",
    "absolute requires ndarray or scalar arguments, got <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'> "
    "at position 0.",
    "var requires ndarray or scalar arguments, got <class 'jax._src.core.Ref'> at position 0.",
    "sin requires ndarray or scalar arguments, got <class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'> "
    "at position 0.",
    _NAN, _TB, _NAN, _NAN, _TB, "None"]


def test_refs_in_jnp_and_filtered_tracebacks_as_jax(tmp_path):
    """array_refs / state guides: a ref passed to a jnp function names JAX's class (the tracer where JAX jits
    the function); debugging guides: a debug_nans error leaving jnp.log or a jitted call has only the
    program's frames and JAX's note, unless jax_traceback_filtering is "off"."""
    import os
    import subprocess
    import sys
    script = tmp_path / "prog.py"
    script.write_text(_REF_AND_TRACEBACK_PROG)
    env = {k: v for k, v in os.environ.items() if k != "JAX_TRACEBACK_FILTERING"}   # JAX's default, "auto"
    out = subprocess.run([sys.executable, "-m", "cranax.run", "prog.py"], cwd=tmp_path, capture_output=True,
                         text=True, check=True, env=env).stdout.splitlines()
    assert out == [line.replace("{p}", str(script)) for line in _REF_AND_TRACEBACK_JAX]


_TYPE_PROG = '''
import pickle
import jax
import jax.numpy as jnp
x = jnp.arange(3.0)
print(type(x))
try:
    hash(x)
except TypeError as e:
    print(e)
print(isinstance(x, jax.Array), pickle.loads(pickle.dumps(type(x))) is type(x), pickle.loads(pickle.dumps(x)))
jax.jit(lambda y: print(isinstance(y, jax.Array)))(x)
print(jax.Array, issubclass(type(x), jax.Array), isinstance(1.0, jax.Array), isinstance(jax.random.key(0), jax.Array),
      isinstance(jax.new_ref(x), jax.Array))
jax.grad(lambda y: print(isinstance(y, jax.Array)) or y)(1.0)
from jax import Array
print(Array is jax.Array)
'''


def test_array_type_prints_as_jax(tmp_path):
    """thinking_in_jax: ``type(x)`` prints JAX's class under the alias (JAX 0.10.2's text), and ``jax.Array``
    JAX's base class; the class still pickles by reference and isinstance holds for arrays, tracers and key
    arrays, not for refs or floats (JAX 0.10.2's answers)."""
    import subprocess
    import sys
    (tmp_path / "prog.py").write_text(_TYPE_PROG)
    out = subprocess.run([sys.executable, "-m", "cranax.run", "prog.py"], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out == ["<class 'jaxlib._jax.ArrayImpl'>", "unhashable type: 'jaxlib._jax.ArrayImpl'", "True True [0. 1. 2.]",
                   "True", "<class 'jax.jaxlib._jax.Array'> True False True False", "True", "True"]


def test_device_count_flag_set_after_import_with_jax_platforms():
    """hijax-types (JAX 0.10.2): with ``JAX_PLATFORMS=cpu`` in the environment, a program that sets
    ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` after importing jax still gets 8 CPU devices:
    the devices are listed when first used, not at import."""
    import os
    import subprocess
    import sys
    prog = ("import cranax, os\n"
            "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'\n"
            "print(cranax.devices())\n"
            "print(cranax.make_mesh((4,), ('i',)).shape)\n")
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=1")
    env.pop("CRANAX_PLATFORMS", None)
    out = subprocess.run([sys.executable, "-c", prog], env=env, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["[" + ", ".join(f"CpuDevice(id={i})" for i in range(8)) + "]", "OrderedDict([('i', 4)])"]


def test_device_put_with_a_partition_spec_under_set_mesh():
    """hijax-types: ``jax.device_put(x, jax.P('i'))`` lays ``x`` out on the mesh ``jax.set_mesh`` installed;
    without one it is JAX's ValueError (texts recorded from JAX 0.10.2 on 4 CPU devices)."""
    import os
    import subprocess
    import sys
    prog = ("import os\n"
            "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=4'\n"
            "import cranax as jax, cranax.numpy as jnp\n"
            "try:\n"
            "    jax.device_put(jnp.arange(8.), jax.P('i'))\n"
            "except ValueError as e:\n"
            "    print(e)\n"
            "with jax.set_mesh(jax.make_mesh((4,), ('i',))):\n"
            "    r = jax.device_put(jnp.arange(8.).reshape(4, 2), jax.P('i'))\n"
            "    print(r.sharding)\n"
            "    print(jax.device_put(2.0, jax.P()).sharding)\n"
            "    print(jax.device_put({'a': jnp.ones(4)}, jax.P('i'))['a'].sharding)\n"
            "    print(r.addressable_shards[1].data)\n")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("CRANAX_PLATFORMS", None)
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, "-c", prog], env=env, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    ns = "NamedSharding(mesh=Mesh('i': 4, axis_types=(Explicit,)), spec=P({}), memory_kind=device)"
    assert out == ["Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to device_put",
                   ns.format("'i',"), ns.format(""), ns.format("'i',"), "[[2. 3.]]"]


_SHARDED_TYPES_PROG = '''
import os
os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'
import cranax as jax, cranax.numpy as jnp
T = jax.typeof
print(T(jnp.ones((2, 3))).sharding)
jax.set_mesh(jax.make_mesh((4,), ('i',)))
r = jax.device_put(jnp.arange(24., dtype='float32').reshape(8, 3), jax.P('i'))
c = jax.device_put(jnp.arange(24., dtype='float32').reshape(3, 8), jax.P(None, 'i'))
z = jax.device_put(jnp.zeros(8, 'float32'), jax.P('i'))
print(T(r), repr(T(r)), T(r).sharding.spec, r.sharding.spec)
print(T(jnp.ones((2, 3))).sharding.spec, T(jnp.ones((2, 3))).sharding.mesh.axis_names)
cases = [
    ("add", lambda: r + jnp.ones((8, 3))), ("scalar", lambda: r * 2), ("T", lambda: r.T),
    ("T+c", lambda: r.T + c), ("max-1", lambda: jnp.max(r, axis=-1)), ("max0", lambda: jnp.max(r, axis=0)),
    ("sum", lambda: jnp.sum(r ** 2)), ("bcast", lambda: jnp.max(r, axis=-1)[..., None]),
    ("div", lambda: r / jnp.max(jnp.abs(r), axis=-1)[..., None]),
    ("round", lambda: jnp.round(r).astype(jnp.int8)), ("r@w", lambda: r @ jnp.ones((3, 4))),
    ("x@c", lambda: jnp.ones((2, 3)) @ c), ("c*v", lambda: c * jnp.ones(8)), ("reshape", lambda: r.reshape(8, 3, 1)),
    ("outer", lambda: jnp.outer(z, jnp.ones(5))), ("sin", lambda: jnp.sin(z)),
    ("out_sharding", lambda: jnp.matmul(jnp.ones((8, 4)), jnp.ones((4, 3)), out_sharding=T(r).sharding)),
    ("grad", lambda: jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 2))(r)),
    ("jit", lambda: jax.jit(lambda x: x * 2 + 1)(r)),
]
for name, f in cases:
    y = f()
    split = any(p is not None for p in T(y).sharding.spec)
    print(name, T(y), y.sharding.spec if split else "", round(float(jnp.sum(y)), 4))
print(jax.make_jaxpr(lambda x: jnp.sum(jnp.sin(x) ** 2, axis=1))(r))
print(jax.jit(lambda x: (x * 2).T).trace(r).jaxpr)
try:
    jax.jit(lambda x: x @ x.T)(r)
except Exception as e:
    print(type(e).__name__, e)
'''


def test_sharding_in_types():
    """hijax-types (JAX 0.10.2's explicit sharding): arrays split over an Explicit mesh axis carry it in their
    type (``float32[8@i,3]``), results get it by JAX's sharding rules (elementwise, reductions, broadcasts,
    transposes, reshapes, products and their ``out_sharding``, grad, jit), jaxprs print it, and a product
    that would split two dimensions over one axis is JAX's ShardingTypeError. Lines recorded from JAX 0.10.2
    (8 CPU devices)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("CRANAX_PLATFORMS", None)
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, "-c", _SHARDED_TYPES_PROG], env=env, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == [
        "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None, None))",
        "float32[8@i,3] ShapedArray(float32[8@i,3]) P('i', None) P('i',)",
        "P(None, None) ('i',)",
        "add float32[8@i,3] P('i', None) 300.0",
        "scalar float32[8@i,3] P('i', None) 552.0",
        "T float32[3,8@i] P(None, 'i') 276.0",
        "T+c float32[3,8@i] P(None, 'i') 552.0",
        "max-1 float32[8@i] P('i',) 100.0",
        "max0 float32[3]  66.0",
        "sum float32[]  4324.0",
        "bcast float32[8@i,1] P('i', None) 100.0",
        "div float32[8@i,3] P('i', None) 20.5811",
        "round int8[8@i,3] P('i', None) 276.0",
        "r@w float32[8@i,4] P('i', None) 1104.0",
        "x@c float32[2,8@i] P(None, 'i') 552.0",
        "c*v float32[3,8@i] P(None, 'i') 276.0",
        "reshape float32[8@i,3,1] P('i', None, None) 276.0",
        "outer float32[8@i,5] P('i', None) 0.0",
        "sin float32[8@i] P('i',) 0.0",
        "out_sharding float32[8@i,3] P('i', None) 96.0",
        "grad float32[8@i,3] P('i', None) 0.9107",
        "jit float32[8@i,3] P('i', None) 576.0",
        "{ lambda ; a:f32[8@i,3]. let",
        "    b:f32[8@i,3] = sin a",
        "    c:f32[8@i,3] = integer_pow[y=2] b",
        "    d:f32[8@i] = reduce_sum[axes=(1,) out_sharding=None] c",
        "  in (d,) }",
        "{ lambda ; a:f32[8@i,3]. let",
        "    b:f32[8@i,3] = mul a 2.0:f32[]",
        "    c:f32[3,8@i] = transpose[permutation=(1, 0)] b",
        "  in (c,) }",
        "ShardingTypeError dot_general operation with inputs: f32[8@i,3], f32[3,8@i] produces an illegally "
        "sharded result: f32[8@i,8@i]",
    ]
