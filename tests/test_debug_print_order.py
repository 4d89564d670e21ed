"""Issue 18: unordered ``jax.debug.print`` calls run in the order XLA:CPU runs them for JAX 0.10.2
(``interpreters/print_order.py``), ordered ones in program order. Every expected text below was recorded
from JAX 0.10.2 (CPU) running the same code; the order is not program order in most of them."""
import cranax as jax
import cranax.numpy as jnp
from cranax import lax

P = jax.debug.print


def _run(capsys, f, *args):
    jax.block_until_ready(f(*args))
    jax.effects_barrier()
    return capsys.readouterr().out.splitlines()


def _abc(x):
    a = x + 1; b = a * 2; c = b - 3
    P("a {}", a); P("b {}", b); P("c {}", c)
    return c


def _abcd(x):
    a = x + 1; b = a * 2; c = b - 3; d = c * 5
    P("a {}", a); P("b {}", b); P("c {}", c); P("d {}", d)
    return d


def _sin_cos_tanh(x):
    a = jnp.sin(x); b = jnp.cos(a); c = jnp.tanh(b)
    P("a {}", a); P("b {}", b); P("c {}", c)
    return c


def _x_sin_cos(x):
    a = jnp.sin(x); b = jnp.cos(a)
    P("x {}", x); P("a {}", a); P("b {}", b)
    return b


def _k_rev(x):
    y = x * 2; z = jnp.exp(y)
    P("z {}", z); P("y {}", y); P("x {}", x)
    return z


def _siblings(x):
    a = jnp.sin(x); b = jnp.cos(x); c = jnp.exp(x)
    P("a {}", a); P("b {}", b); P("c {}", c)
    return a + b + c


def test_jit_chains_run_in_xlas_order(capsys):
    assert _run(capsys, jax.jit(_abc), 1.0) == ["c 1.0", "b 4.0", "a 2.0"]
    assert _run(capsys, jax.jit(_abcd), 1.0) == ["d 5.0", "c 1.0", "b 4.0", "a 2.0"]
    # a vector's constant is a broadcast XLA fuses: the first op is no longer a lone op waiting for it
    assert _run(capsys, jax.jit(_abc), jnp.ones(3)) == ["a [2. 2. 2.]", "c [1. 1. 1.]", "b [4. 4. 4.]"]
    assert _run(capsys, jax.jit(_sin_cos_tanh), 1.0) == [
        "a 0.8414709568023682", "c 0.5825849175453186", "b 0.6663667559623718"]
    assert _run(capsys, jax.jit(_x_sin_cos), 1.0) == [
        "x 1.0", "a 0.8414709568023682", "b 0.6663667559623718"]
    assert _run(capsys, jax.jit(_k_rev), 1.0) == ["x 1.0", "z 7.389056205749512", "y 2.0"]
    assert _run(capsys, jax.jit(_siblings), 1.0) == [
        "a 0.8414709568023682", "b 0.5403022766113281", "c 2.7182817459106445"]


def test_jit_vmap_prints_per_element(capsys):
    # the result's slices read the result (XLA never fuses its root into a consumer); a and b are recomputed
    assert _run(capsys, jax.jit(jax.vmap(_abc)), jnp.arange(2.0)) == [
        "a 1.0", "b 4.0", "b 2.0", "a 2.0", "c -1.0", "c 1.0"]

    def guide(x):
        P("x: {}", x); y = jnp.sin(x); P("y: {}", y)
        return y
    assert _run(capsys, jax.jit(jax.vmap(guide)), jnp.arange(3.0)) == [
        "x: 0.0", "x: 1.0", "x: 2.0", "y: 0.0", "y: 0.8414709568023682", "y: 0.9092974066734314"]


def test_nested_calls_are_inlined_first(capsys):
    # a jit inside a jit (and a checkpoint) is one program to XLA: its prints take the same order
    assert _run(capsys, jax.jit(lambda x: jax.jit(_abc)(x)), 1.0) == ["c 1.0", "b 4.0", "a 2.0"]
    assert _run(capsys, jax.jit(lambda x: jax.jit(_abc)(x) + 1), 1.0) == ["c 1.0", "b 4.0", "a 2.0"]
    assert _run(capsys, jax.jit(jax.checkpoint(_abc)), 1.0) == ["c 1.0", "b 4.0", "a 2.0"]
    assert _run(capsys, jax.grad(_abc), 1.0) == ["a 2.0", "b 4.0", "c 1.0"]   # eager: as called


def test_jit_parameters_print_first_in_parameter_order(capsys):
    def g2(x, y):
        P("y: {}", y); P("x: {}", x)
        return x + y
    assert _run(capsys, jax.jit(g2), 2.0, 3.0) == ["x: 2.0", "y: 3.0"]

    def f(x):
        y = jnp.sin(x); P("y -> {}", y); P("x -> {}", x)
        return y
    assert _run(capsys, jax.jit(f), 2.0) == ["x -> 2.0", "y -> 0.9092974066734314"]


def test_ordered_prints_keep_program_order(capsys):
    def f(x):
        y = x + 1; z = y * 2
        P("c {}", z, ordered=True); P("b {}", y, ordered=True); P("a {}", x, ordered=True)
        return z
    assert _run(capsys, jax.jit(f), 1.0) == ["c 4.0", "b 2.0", "a 1.0"]
    # eager: each print runs where it is called
    assert _run(capsys, _abc, 1.0) == ["a 2.0", "b 4.0", "c 1.0"]


def test_loop_carries_print_in_reverse(capsys):
    def fori2(i, c):
        P("i={}", i); P("c={}", c)
        return c * 2.0
    expected = ["c=1.0", "i=0", "c=2.0", "i=1"]
    assert _run(capsys, lambda: lax.fori_loop(0, 2, fori2, 1.0)) == expected
    assert _run(capsys, jax.jit(lambda n: lax.fori_loop(0, n, fori2, 1.0)), 2) == expected

    def three(i, c):
        a, b, d = c
        P("a {}", a); P("b {}", b); P("d {}", d); P("i {}", i)
        return a + 1.0, b * 2.0, d - 1.0
    assert _run(capsys, jax.jit(lambda: lax.fori_loop(0, 2, three, (0.0, 1.0, 2.0)))) == [
        "d 2.0", "b 1.0", "a 0.0", "i 0", "d 1.0", "b 2.0", "a 1.0", "i 1"]

    def wbody(c):
        i, v = c
        P("i {}", i); P("v {}", v)
        return i + 1, v * 2
    assert _run(capsys, jax.jit(lambda v: lax.while_loop(lambda c: c[0] < 2, wbody, (0, v))), 1.0) == [
        "v 1.0", "i 0", "v 2.0", "i 1"]

    def w2(c):   # a computed value prints after the carries read directly
        i, s = c
        s = s + i
        P("s={}", s); P("i={}", i)
        return i + 1, s
    assert _run(capsys, lambda: lax.while_loop(lambda c: c[0] < 2, w2, (0, 0.0))) == [
        "i=0", "s=0.0", "i=1", "s=1.0"]

    def fcy(i, c):
        y = c * 2; P("y {}", y); P("c {}", c)
        return y
    assert _run(capsys, jax.jit(lambda: lax.fori_loop(0, 2, fcy, 1.0))) == ["c 1.0", "y 2.0", "c 2.0", "y 4.0"]

    def scan_xc(c, x):   # a scan's x is a slice XLA computes: the carry prints first
        P("x {}", x); P("c {}", c)
        return c + x, c
    assert _run(capsys, jax.jit(lambda xs: lax.scan(scan_xc, 0.0, xs)), jnp.arange(2.0)) == [
        "c 0.0", "x 0.0", "c 0.0", "x 1.0"]


def test_scan_bodies(capsys):
    # JAX's guide: lax.map over a function printing x, then sin(x)
    def f(x):
        P("x: {}", x); y = jnp.sin(x); P("y: {}", y)
        return y
    assert _run(capsys, lambda xs: lax.map(f, xs), jnp.arange(3.0)) == [
        "y: 0.0", "x: 0.0", "y: 0.8414709568023682", "x: 1.0", "y: 0.9092974066734314", "x: 2.0"]
    assert _run(capsys, jax.jit(lambda xs: lax.map(_abc, xs)), jnp.arange(2.0)) == [
        "b 2.0", "a 1.0", "c -1.0", "b 4.0", "a 2.0", "c 1.0"]
    assert _run(capsys, lambda xs: lax.map(_abcd, xs), jnp.arange(2.0)) == [
        "b 2.0", "a 1.0", "d -5.0", "c -1.0", "b 4.0", "a 2.0", "d 5.0", "c 1.0"]
    assert _run(capsys, lambda xs: lax.map(_abc, xs), jnp.ones((2, 3))) == [
        "b [4. 4. 4.]", "a [2. 2. 2.]", "c [1. 1. 1.]"] * 2

    def carry_too(c, x):   # the chain's last value also reads the carry
        a = x + 1; b = a * 2; c2 = c + b
        P("a {}", a); P("b {}", b); P("c {}", c2)
        return c2, b
    assert _run(capsys, jax.jit(lambda xs: lax.scan(carry_too, 0.0, xs)), jnp.arange(2.0)) == [
        "b 2.0", "a 1.0", "c 2.0", "b 4.0", "a 2.0", "c 6.0"]

    def from_carry(i, c):
        a = c + 1; b = a * 2
        P("a {}", a); P("b {}", b)
        return b
    assert _run(capsys, lambda: lax.fori_loop(0, 2, from_carry, 1.0)) == ["b 4.0", "a 2.0", "b 10.0", "a 5.0"]

    def mixed(c, x):   # a chain whose first value reads the carry and x: program order
        a = c + x; b = a * 2
        P("a {}", a); P("b {}", b)
        return b, x
    assert _run(capsys, lambda xs: lax.scan(mixed, 1.0, xs), jnp.arange(1.0, 3.0)) == [
        "a 2.0", "b 4.0", "a 6.0", "b 12.0"]

    def siblings(x):   # not a chain: the same order, whatever order the prints are written in
        a = jnp.sin(x); b = jnp.cos(x); c = jnp.exp(x); d = jnp.tanh(x)
        P("d {}", d); P("c {}", c); P("b {}", b); P("a {}", a)
        return a + b + c + d
    assert _run(capsys, lambda xs: lax.map(siblings, xs), jnp.arange(2.0)) == [
        "b 1.0", "a 0.0", "d 0.0", "c 1.0",
        "b 0.5403022766113281", "a 0.8414709568023682", "d 0.7615941762924194", "c 2.7182817459106445"]

    def two(c, x):
        c1 = c + 1; c2 = c1 * 2; y1 = jnp.sin(x); y2 = jnp.cos(y1)
        P("y1 {}", y1); P("y2 {}", y2); P("c1 {}", c1); P("c2 {}", c2)
        return c2, y2
    assert _run(capsys, lambda xs: lax.scan(two, 0.0, xs), jnp.arange(2.0)) == [
        "c2 2.0", "c1 1.0", "y2 1.0", "y1 0.0", "c2 6.0", "c1 3.0", "y2 0.6663667559623718", "y1 0.8414709568023682"]


def test_while_body_chain(capsys):
    def body(c):
        a = c + 1; b = a * 2; d = b - 1
        P("a {}", a); P("b {}", b); P("d {}", d)
        return d
    assert _run(capsys, lambda: lax.while_loop(lambda c: c < 3, body, 1.0)) == ["a 2.0", "d 3.0", "b 4.0"]


def test_cond_branch(capsys):
    def body(x):
        a = x + 1; b = a * 2
        P("a {}", a); P("b {}", b); P("x {}", x)
        return b
    assert _run(capsys, jax.jit(lambda p, x: lax.cond(p, body, lambda x: x, x)), True, 1.0) == [
        "x 1.0", "a 2.0", "b 4.0"]


def test_a_constant_result_merges_with_the_bodys_equal_constant(capsys):
    """A program whose one result is a scalar constant (``grad`` of an affine chain, or a literal): XLA's
    root is a copy of that constant, merged with the equal constants the body reads, whose ops then wait
    for the copy (``print_order._constant_result``)."""
    assert _run(capsys, jax.jit(jax.grad(_abc)), 1.0) == ["a 2.0", "b 4.0", "c 1.0"]

    def k5(x):
        _abc(x)
        return 5.0

    def k3(x):
        a = x + 3; b = a * 2; c = b - 1
        P("a {}", a); P("b {}", b); P("c {}", c)
        return 3.0

    def k2first(x):
        a = x * 2; b = a + 1; c = b - 3
        P("a {}", a); P("b {}", b); P("c {}", c)
        return 2.0

    def lin(x):
        a = x * 3.0; b = a + 1.0; c = b * 2.0
        P("a {}", a); P("b {}", b); P("c {}", c)
        return c
    assert _run(capsys, jax.jit(k5), 1.0) == ["c 1.0", "b 4.0", "a 2.0"]   # no equal constant: as jit(_abc)
    assert _run(capsys, jax.jit(k3), 1.0) == ["a 4.0", "c 7.0", "b 8.0"]
    assert _run(capsys, jax.jit(k2first), 1.0) == ["a 2.0", "c 0.0", "b 3.0"]
    assert _run(capsys, jax.jit(jax.grad(lin)), 1.0) == ["c 8.0", "b 4.0", "a 3.0"]


def test_scan_values_of_the_carry_then_of_xs_then_mixed(capsys):
    """In a scan body, prints of values computed from the carries alone run first, then values of a slice of
    ``xs``, then values mixing both (each group in ``_scan_rest``'s order). Cases from
    ``benches/bench_debug_print_order.py`` and new ones, recorded from JAX 0.10.2."""
    xs = jnp.arange(1.0, 3.0)

    def zy(c, x):
        z = c * 2; y = jnp.sin(x)
        P("z {}", z); P("y {}", y)
        return z, y
    assert _run(capsys, lambda: lax.scan(zy, 1.0, xs)) == [
        "z 2.0", "y 0.8414709568023682", "z 4.0", "y 0.9092974066734314"]

    def n3(c, x):
        a = jnp.sin(x); b = c + x
        P("a {}", a); P("b {}", b)
        return b, a
    assert _run(capsys, lambda: lax.scan(n3, 1.0, xs)) == [
        "a 0.8414709568023682", "b 2.0", "a 0.9092974066734314", "b 4.0"]

    def n4(c, x):
        a = c * 2; b = a + x; d = jnp.sin(x)
        P("a {}", a); P("b {}", b); P("d {}", d)
        return b, d
    assert _run(capsys, lambda: lax.scan(n4, 1.0, xs)) == [
        "a 2.0", "d 0.8414709568023682", "b 3.0", "a 6.0", "d 0.9092974066734314", "b 8.0"]

    def n10(c, x):
        a = jnp.sin(x); b = jnp.cos(c)
        P("a {}", a); P("b {}", b); P("c {}", c); P("x {}", x)
        return b, a
    assert _run(capsys, lambda: lax.scan(n10, 1.0, xs)) == [
        "c 1.0", "b 0.5403022766113281", "a 0.8414709568023682", "x 1.0",
        "c 0.5403022766113281", "b 0.857553243637085", "a 0.9092974066734314", "x 2.0"]

    def p1(c, x):
        a = c + x; b = jnp.cos(x); d = c * 3
        P("a {}", a); P("b {}", b); P("d {}", d)
        return d, a + b
    assert _run(capsys, lambda: lax.scan(p1, 1.0, xs)) == [
        "d 3.0", "b 0.5403022766113281", "a 2.0", "d 9.0", "b -0.416146844625473", "a 5.0"]

    def p4(c, x):
        a = jnp.sin(x); b = jnp.cos(x); d = c + 1; e = jnp.exp(x)
        P("a {}", a); P("b {}", b); P("d {}", d); P("e {}", e)
        return d, a + b + e
    assert _run(capsys, lambda: lax.scan(p4, 1.0, xs)) == [
        "d 2.0", "b 0.5403022766113281", "a 0.8414709568023682", "e 2.7182817459106445",
        "d 3.0", "b -0.416146844625473", "a 0.9092974066734314", "e 7.389056205749512"]

    def p5(c, x):
        a = c * 2; b = x + 1
        P("a {}", a); P("b {}", b)
        return a, b
    assert _run(capsys, lambda: lax.scan(p5, jnp.ones(3), jnp.ones((2, 3)))) == [
        "a [2. 2. 2.]", "b [2. 2. 2.]", "a [4. 4. 4.]", "b [2. 2. 2.]"]


def test_scan_values_of_printed_carry_and_xs_values_run_between(capsys):
    """A scan body's value computed from a printed value of the carries and a printed value of ``xs`` runs
    between the two groups (recorded from JAX 0.10.2)."""
    xs = jnp.arange(1.0, 3.0)

    def p2(c, x):
        a = jnp.exp(c); b = jnp.sin(x); d = a * b
        P("a {}", a); P("b {}", b); P("d {}", d)
        return a, d
    assert _run(capsys, lambda: lax.scan(p2, 1.0, xs)) == [
        "a 2.7182817459106445", "d 2.2873551845550537", "b 0.8414709568023682",
        "a 15.154260635375977", "d 13.779729843139648", "b 0.9092974066734314"]

    def p8(c, x):
        a = jnp.sin(x); b = jnp.cos(c); d = a + b
        P("a {}", a); P("b {}", b); P("d {}", d)
        return b, d
    assert _run(capsys, jax.jit(lambda xs: lax.scan(p8, 1.0, xs)), xs) == [
        "b 0.5403022766113281", "d 1.3817732334136963", "a 0.8414709568023682",
        "b 0.857553243637085", "d 1.7668507099151611", "a 0.9092974066734314"]

    def q2(c, x):
        a = c + 1; b = x * 3; d = a * b
        P("b {}", b); P("a {}", a); P("d {}", d)
        return a, d
    assert _run(capsys, lambda: lax.scan(q2, 1.0, xs)) == ["a 2.0", "d 6.0", "b 3.0", "a 3.0", "d 18.0", "b 6.0"]

    def q4(c, x):
        a = jnp.sin(x); b = jnp.exp(c); d = jnp.cos(x); e = a + b
        P("a {}", a); P("b {}", b); P("d {}", d); P("e {}", e)
        return b, e + d
    assert _run(capsys, lambda: lax.scan(q4, 1.0, xs)) == [
        "b 2.7182817459106445", "e 3.5597527027130127", "a 0.8414709568023682", "d 0.5403022766113281",
        "b 15.154260635375977", "e 16.06355857849121", "a 0.9092974066734314", "d -0.416146844625473"]


def _vf_i_c(i, c):
    P("i={} c={}", i, c); return c + 1.0


def _vf_i_then_c(i, c):
    P("i={}", i); P("c={}", c); return c + 1.0


def _vf_c_then_i(i, c):
    P("c={}", c); P("i={}", i); return c + 1.0


def _vf_c(i, c):
    P("c={}", c); return c + 1.0


def _vf_two_carries(i, c):
    a, b = c; P("i={}", i); P("a={}", a); P("b={}", b); return a + 1.0, b * 2.0


def _vf_c_then_i_times3(i, c):
    P("c={}", c); P("i={}", i); return c * 3.0


def test_vmap_of_fori_loop_prints_per_element_where_xla_runs_them(capsys):
    # vmap of a fori_loop printing the index and the carry: one print per element. Eagerly the index starts
    # at a value of the program (the one-equation program's input): XLA computes it as start + counter
    # after the element slices, and its readers' use list comes reversed; under jit it starts at a literal
    # and is XLA's loop counter itself. (The printed elements of three or more run in an order of XLA's
    # fusion pass the model does not follow.)
    x2 = jnp.arange(2.0)
    fori = lambda body, lo=0, hi=2: lambda c: lax.fori_loop(lo, hi, body, c)   # noqa: E731
    assert _run(capsys, jax.vmap(fori(_vf_i_c)), x2) == ['i=0 c=1.0', 'i=0 c=0.0', 'i=1 c=2.0', 'i=1 c=1.0']
    assert _run(capsys, jax.jit(jax.vmap(fori(_vf_i_c))), x2) == ['i=0 c=0.0', 'i=0 c=1.0', 'i=1 c=1.0', 'i=1 c=2.0']
    assert _run(capsys, jax.vmap(fori(_vf_i_c, 1, 3)), x2) == ['i=1 c=1.0', 'i=1 c=0.0', 'i=2 c=2.0', 'i=2 c=1.0']
    assert _run(capsys, jax.vmap(fori(_vf_i_c)), jnp.arange(3.0)) == (
        ['i=0 c=2.0', 'i=0 c=1.0', 'i=0 c=0.0', 'i=1 c=3.0', 'i=1 c=2.0', 'i=1 c=1.0'])
    assert _run(capsys, jax.vmap(fori(_vf_i_then_c)), x2) == ['c=0.0', 'c=1.0', 'i=0', 'c=1.0', 'c=2.0', 'i=1']
    assert _run(capsys, jax.jit(jax.vmap(fori(_vf_i_then_c))), x2) == (
        ['i=0', 'c=0.0', 'c=1.0', 'i=1', 'c=1.0', 'c=2.0'])
    assert _run(capsys, jax.vmap(fori(_vf_c_then_i)), x2) == ['c=0.0', 'c=1.0', 'i=0', 'c=1.0', 'c=2.0', 'i=1']
    assert _run(capsys, jax.jit(jax.vmap(fori(_vf_c_then_i))), x2) == (
        ['i=0', 'c=0.0', 'c=1.0', 'i=1', 'c=1.0', 'c=2.0'])
    assert _run(capsys, jax.vmap(fori(_vf_c)), x2) == ['c=0.0', 'c=1.0', 'c=1.0', 'c=2.0']
    assert _run(capsys, jax.jit(jax.vmap(fori(_vf_c))), x2) == ['c=1.0', 'c=0.0', 'c=2.0', 'c=1.0']
    assert _run(capsys, jax.vmap(fori(_vf_i_then_c, 3, 5)), x2) == ['c=0.0', 'c=1.0', 'i=3', 'c=1.0', 'c=2.0', 'i=4']
    assert _run(capsys, jax.vmap(fori(_vf_c_then_i_times3, 0, 3)), x2) == (
        ['c=0.0', 'c=1.0', 'i=0', 'c=0.0', 'c=3.0', 'i=1', 'c=0.0', 'c=9.0', 'i=2'])
    two = lambda a, b: lax.fori_loop(0, 2, _vf_two_carries, (a, b))   # noqa: E731
    assert _run(capsys, jax.vmap(two), x2, x2 + 10) == (
        ['b=10.0', 'b=11.0', 'a=0.0', 'a=1.0', 'i=0', 'b=20.0', 'b=22.0', 'a=1.0', 'a=2.0', 'i=1'])
    assert _run(capsys, jax.jit(jax.vmap(two)), x2, x2 + 10) == (
        ['i=0', 'b=10.0', 'b=11.0', 'a=0.0', 'a=1.0', 'i=1', 'b=20.0', 'b=22.0', 'a=1.0', 'a=2.0'])
