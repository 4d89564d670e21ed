"""jax.scipy.spatial.transform (Rotation, Slerp) against SciPy's Rotation/Slerp (float64 oracle) and values
recorded from JAX 0.10.2 (gimbal-lock Euler cases included); jit, vmap, grad and errors."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation as SR
from scipy.spatial.transform import Slerp as SSlerp

import cranax
from cranax import numpy as jnp
from cranax.scipy.spatial.transform import Rotation, Slerp

# the quaternions (x, y, z, w) of the recorded cases: generic, a 120-degree turn, the identity, 90 degrees
# about x, a gimbal-locking -90 degrees about y (w < 0), a half turn about z
Q = np.array([[0.1, 0.2, 0.3, 0.9], [0.5, -0.5, 0.5, 0.5], [0, 0, 0, 1.], [0.7071068, 0, 0, 0.7071068],
              [0., 0.7071068, 0., -0.7071068], [0., 0., 1., 0.]], np.float32)

# JAX 0.10.2, rounded to 5 (Euler) or 6 decimals: as_euler(seq), from_euler, as_mrp, as_rotvec,
# as_quat(canonical=True, scalar_first=True), from_matrix(as_matrix()).quat
JAX = {'XZX': [[-0.47734999656677246, 0.7578499913215637, 0.6986600160598755],
         [1.5707999467849731, 1.5707999467849731, 0.0], [0.0, 0.0, 0.0], [1.5707999467849731, 0.0, 0.0],
         [1.5707999467849731, 1.5707999467849731, -1.5707999467849731], [0.0, -3.141590118408203, 0.0]],
 'YZX': [[0.41012999415397644, 0.656719982624054, 0.07982999831438065],
         [-1.5707999467849731, 0.0, 1.5707999467849731], [0.0, 0.0, 0.0], [0.0, 0.0, 1.5707999467849731],
         [-1.5707999467849731, 0.0, 0.0], [-3.141590118408203, 0.0, -3.141590118408203]],
 'ZYX': [[0.6990000009536743, 0.321289986371994, 0.33928999304771423],
         [1.5707999467849731, -1.5707999467849731, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.5707999467849731],
         [-0.0, -1.5707999467849731, 0.0], [-3.141590118408203, 0.0, 0.0]],
 'canon': [[0.9233800172805786, 0.10259799659252167, 0.20519599318504333, 0.3077940046787262],
           [0.5, 0.5, -0.5, 0.5], [1.0, 0.0, 0.0, 0.0], [0.7071070075035095, 0.7071070075035095, 0.0, 0.0],
           [0.7071070075035095, -0.0, -0.7071070075035095, -0.0], [0.0, 0.0, 0.0, 1.0]],
 'fe': [[0.0342710018157959, 0.10602100193500519, 0.14357200264930725, 0.98334801197052]],
 'fe1': [0.14943799376487732, 0.0, 0.0, 0.9887710213661194],
 'fm': [[0.10259799659252167, 0.20519599318504333, 0.3077940046787262, 0.923380970954895], [0.5, -0.5, 0.5, 0.5],
        [0.0, 0.0, 0.0, 1.0], [0.7071070075035095, 0.0, 0.0, 0.7071070075035095],
        [0.0, 0.7071070075035095, 0.0, -0.7071070075035095], [0.0, 0.0, 1.0, 0.0]],
 'mrp': [[0.053341999650001526, 0.10668499767780304, 0.16002699732780457],
         [0.33333298563957214, -0.33333298563957214, 0.33333298563957214], [0.0, 0.0, 0.0],
         [0.41421398520469666, 0.0, 0.0], [-0.0, -0.41421398520469666, -0.0], [0.0, 0.0, 1.0]],
 'rv': [[0.21060200035572052, 0.4212050139904022, 0.6318070292472839],
        [1.2092000246047974, -1.2092000246047974, 1.2092000246047974], [0.0, 0.0, 0.0],
        [1.570796012878418, 0.0, 0.0], [-0.0, -1.570796012878418, -0.0], [0.0, 0.0, 3.1415929794311523]],
 'xyz': [[0.33928999304771423, 0.321289986371994, 0.6990000009536743],
         [1.5707999467849731, -1.5707999467849731, 0.0], [0.0, 0.0, 0.0], [1.5707999467849731, 0.0, 0.0],
         [-0.0, -1.5707999467849731, 0.0], [0.0, 0.0, -3.141590118408203]],
 'yxy': [[1.467710018157959, 0.6608499884605408, -1.0303800106048584],
         [0.0, 1.5707999467849731, -1.5707999467849731], [0.0, 0.0, 0.0], [0.0, 1.5707999467849731, 0.0],
         [-1.5707999467849731, 0.0, 0.0], [-3.141590118408203, -3.141590118408203, 0.0]],
 'zxz': [[-0.7853999733924866, 0.4629499912261963, 1.4289000034332275],
         [1.5707999467849731, 1.5707999467849731, 0.0], [0.0, 0.0, 0.0], [0.0, 1.5707999467849731, 0.0],
         [1.5707999467849731, 1.5707999467849731, -1.5707999467849731], [-3.141590118408203, 0.0, 0.0]]}

SEQS = ["xyz", "ZYX", "zxz", "XZX", "yxy", "YZX"]


@pytest.mark.parametrize("seq", SEQS)
def test_as_euler_matches_jax_including_gimbal_lock(seq):
    got = np.asarray(Rotation.from_quat(Q).as_euler(seq))
    np.testing.assert_allclose(got, JAX[seq], atol=2e-5)


def test_conversions_match_jax():
    r = Rotation.from_quat(Q)
    np.testing.assert_allclose(np.asarray(r.as_mrp()), JAX["mrp"], atol=2e-6)
    np.testing.assert_allclose(np.asarray(r.as_rotvec()), JAX["rv"], atol=2e-6)
    np.testing.assert_allclose(np.asarray(r.as_quat(canonical=True, scalar_first=True)), JAX["canon"], atol=2e-6)
    np.testing.assert_allclose(np.asarray(Rotation.from_matrix(r.as_matrix()).quat), JAX["fm"], atol=2e-6)
    np.testing.assert_allclose(np.asarray(Rotation.from_euler("xyz", jnp.array([[0.1, 0.2, 0.3]])).quat),
                               JAX["fe"], atol=2e-6)
    np.testing.assert_allclose(np.asarray(Rotation.from_euler("X", jnp.array(0.3)).quat), JAX["fe1"], atol=2e-6)


@pytest.fixture
def quats():
    return np.random.default_rng(0).normal(size=(8, 4))


def test_against_scipy(x64, quats):
    r, s = Rotation.from_quat(quats), SR.from_quat(quats)
    tol = dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(r.quat), s.as_quat(), **tol)
    np.testing.assert_allclose(np.asarray(r.as_matrix()), s.as_matrix(), **tol)
    np.testing.assert_allclose(np.asarray(Rotation.from_matrix(s.as_matrix()).as_quat(canonical=True)),
                               s.as_quat(canonical=True), **tol)
    np.testing.assert_allclose(np.asarray(r.as_rotvec()), s.as_rotvec(), **tol)
    np.testing.assert_allclose(np.asarray(r.as_rotvec(degrees=True)), s.as_rotvec(degrees=True), rtol=1e-12,
                               atol=1e-10)
    np.testing.assert_allclose(np.asarray(Rotation.from_rotvec(s.as_rotvec()).as_matrix()), s.as_matrix(), **tol)
    np.testing.assert_allclose(np.asarray(r.as_mrp()), s.as_mrp(), **tol)
    np.testing.assert_allclose(np.asarray(Rotation.from_mrp(s.as_mrp()).as_matrix()), s.as_matrix(), **tol)
    for seq in SEQS:
        np.testing.assert_allclose(np.asarray(r.as_euler(seq)), s.as_euler(seq), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(np.asarray(Rotation.from_euler(seq, s.as_euler(seq, degrees=True),
                                                                  degrees=True).as_matrix()),
                                   s.as_matrix(), **tol)
    v = np.random.default_rng(1).normal(size=(8, 3))
    np.testing.assert_allclose(np.asarray(r.apply(v)), s.apply(v), **tol)
    np.testing.assert_allclose(np.asarray(r.apply(v, inverse=True)), s.apply(v, inverse=True), **tol)
    np.testing.assert_allclose(np.asarray(r[0].apply(v)), s[0].apply(v), **tol)
    np.testing.assert_allclose(np.asarray((r * r.inv()[::-1]).as_matrix()), (s * s.inv()[::-1]).as_matrix(), **tol)
    np.testing.assert_allclose(np.asarray(r.magnitude()), s.magnitude(), **tol)
    np.testing.assert_allclose(np.asarray(r.mean().as_matrix()), s.mean().as_matrix(), rtol=1e-10, atol=1e-10)
    w = np.linspace(0.1, 1., 8)
    np.testing.assert_allclose(np.asarray(r.mean(w).as_matrix()), s.mean(w).as_matrix(), rtol=1e-10, atol=1e-10)
    # near the identity, the series branches
    small = np.array([[1e-5, -2e-5, 3e-6], [0., 0., 0.]])
    np.testing.assert_allclose(np.asarray(Rotation.from_rotvec(small).quat), SR.from_rotvec(small).as_quat(),
                               rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(np.asarray(Rotation.from_rotvec(small).as_rotvec()), small, rtol=1e-10,
                               atol=1e-16)


def test_slerp_against_scipy(x64, quats):
    times = np.array([0., 1., 2.5, 3., 4., 6., 7., 8.])
    sl, ref = Slerp.init(times, Rotation.from_quat(quats)), SSlerp(times, SR.from_quat(quats))
    t = np.array([0., 0.3, 1., 2.2, 3.9, 6.5, 8.])
    np.testing.assert_allclose(np.asarray(sl(t).as_matrix()), ref(t).as_matrix(), rtol=1e-10, atol=1e-10)
    one = sl(2.7)
    assert one.single
    np.testing.assert_allclose(np.asarray(one.as_matrix()), ref(2.7).as_matrix(), rtol=1e-10, atol=1e-10)


def test_transforms_and_containers():
    r = Rotation.from_quat(Q)
    assert len(r) == 6 and not r.single and r[2].single
    assert Rotation.concatenate([r[0], r[1:3]]).quat.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(Rotation.identity().quat), [0., 0., 0., 1.])
    assert Rotation.identity(3).quat.shape == (3, 4)
    f = cranax.jit(lambda q: Rotation.from_quat(q).as_euler("xyz"))
    np.testing.assert_allclose(np.asarray(f(Q)), JAX["xyz"], atol=2e-5)
    # the rotation is a pytree: vmap over its quaternions
    m = cranax.vmap(lambda rot: rot.as_matrix())(Rotation(jnp.asarray(r.quat)))
    np.testing.assert_allclose(np.asarray(m), np.asarray(r.as_matrix()), atol=1e-7)
    # d/dtheta of R_z(theta)[0, 1] = -sin(theta) is -cos(theta) (JAX: -0.95533645 at 0.3)
    g = cranax.grad(lambda a: Rotation.from_rotvec(a).as_matrix()[0, 1])(np.array([0., 0., 0.3], np.float32))
    np.testing.assert_allclose(np.asarray(g), [0., 0., -np.cos(0.3)], rtol=1e-6, atol=1e-7)
    rq = Rotation.random(cranax.random.PRNGKey(0), 5).quat
    np.testing.assert_allclose(np.linalg.norm(np.asarray(rq), axis=-1), 1., rtol=1e-6)


@pytest.mark.parametrize("call,err,match", [
    (lambda: Rotation.from_euler("xyzx", [1., 2., 3., 4.]), ValueError, "upto 3 characters"),
    (lambda: Rotation.from_euler("xYz", [1., 2., 3.]), ValueError, "Expected axes from `seq`"),
    (lambda: Rotation.from_euler("xxz", [1., 2., 3.]), ValueError, "consecutive axes"),
    (lambda: Rotation.from_quat(Q).as_euler("xy"), ValueError, "Expected 3 axes"),
    (lambda: Rotation.from_quat(Q[0])[0], TypeError, "not subscriptable"),
    (lambda: len(Rotation.from_quat(Q[0])), TypeError, "has no len"),
    (lambda: Rotation.from_quat(Q).mean(np.ones((2, 3))), ValueError, "1 dimensional"),
    (lambda: Rotation.from_quat(Q).mean(np.ones(2)), ValueError, "equal to number of rotations"),
    (lambda: Slerp.init([0., 1.], Q), TypeError, "must be a `Rotation`"),
    (lambda: Slerp.init([0.], Rotation.from_quat(Q[:1])), ValueError, "at least 2 rotations"),
    (lambda: Slerp.init([0., 1., 2.], Rotation.from_quat(Q[:2])), ValueError, "equal to number of timestamps"),
    (lambda: Slerp.init([0., 1.], Rotation.from_quat(Q[:2]))(np.zeros((2, 2))), ValueError, "at most 1-dim"),
])
def test_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()
