"""``jax.scipy.spatial.transform``: ``Rotation`` (3-D rotations stored as unit quaternions ``(x, y, z, w)``,
scalar last, any leading batch shape) and ``Slerp`` (spherical linear interpolation between key rotations).
Both are named tuples, so they are pytrees and pass through ``jit``/``vmap``/``grad``. The conversions are
SciPy's (Shepperd's method from matrices, Bernardes and Viollet's Euler-angle extraction, series near the
identity for rotation vectors), written for whole batches at once. Mirrors
``jax.scipy.spatial.transform``.
"""
import re as _re
import typing as _typing

import numpy as _np

from ... import numpy as _jnp
from ... import random as _random

__all__ = ["Rotation", "Slerp"]


def _norm(v):
    return _jnp.sqrt(_jnp.sum(v * v, axis=-1))


def _normalize(q):
    return q / _norm(q)[..., None]


def _compose(p, q):
    """Hamilton product p * q of (..., 4) quaternions (scalar last)."""
    pv, pw = p[..., :3], p[..., 3:]
    qv, qw = q[..., :3], q[..., 3:]
    v = pw * qv + qw * pv + _jnp.cross(pv, qv)
    w = pw * qw - _jnp.sum(pv * qv, axis=-1, keepdims=True)
    return _jnp.concatenate([v, w], axis=-1)


def _as_matrix(q):
    x, y, z, w = (q[..., i] for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
    return _jnp.stack([_jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(m):
    # Shepperd: build the quaternion from the largest of the diagonal entries and the trace (stable)
    d = [m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]]
    tr = d[0] + d[1] + d[2]
    cands = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None] * 4
        q[i] = 1 - tr + 2 * m[..., i, i]
        q[j] = m[..., j, i] + m[..., i, j]
        q[k] = m[..., k, i] + m[..., i, k]
        q[3] = m[..., k, j] - m[..., j, k]
        cands.append(_jnp.stack(q, axis=-1))
    cands.append(_jnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1],
                            1 + tr], axis=-1))
    choice = _jnp.argmax(_jnp.stack(d + [tr], axis=-1), axis=-1)
    q = cands[3]
    for i in range(3):
        q = _jnp.where((choice == i)[..., None], cands[i], q)
    return _normalize(q)


def _from_rotvec(rv, degrees):
    if degrees:
        rv = _jnp.deg2rad(rv)
    angle = _norm(rv)
    a2 = angle * angle
    small = 0.5 - a2 / 48 + a2 * a2 / 3840
    # the where keeps the unused branch finite at angle 0 (and its gradient)
    safe = _jnp.where(angle <= 1e-3, 1., angle)
    scale = _jnp.where(angle <= 1e-3, small, _jnp.sin(safe / 2) / safe)
    return _jnp.concatenate([scale[..., None] * rv, _jnp.cos(angle / 2)[..., None]], axis=-1)


def _as_rotvec(q, degrees):
    q = _jnp.where(q[..., 3:] < 0, -q, q)
    angle = 2. * _jnp.arctan2(_norm(q[..., :3]), q[..., 3])
    a2 = angle * angle
    small = 2 + a2 / 12 + 7 * a2 * a2 / 2880
    safe = _jnp.where(angle <= 1e-3, 1., angle)
    scale = _jnp.where(angle <= 1e-3, small, safe / _jnp.sin(safe / 2))
    if degrees:
        scale = _jnp.rad2deg(scale)
    return scale[..., None] * q[..., :3]


def _as_mrp(q):
    sign = _jnp.where(q[..., 3] < 0, -1., 1.).astype(q.dtype)
    return sign[..., None] * q[..., :3] / (1. + sign * q[..., 3])[..., None]


def _from_mrp(p):
    s = _jnp.sum(p * p, axis=-1, keepdims=True) + 1
    return _jnp.concatenate([2 * p[..., :3], 2 - s], axis=-1) / s


def _canonical(q):
    neg, zero = q < 0, q == 0
    flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0]) | (zero[..., 3] & zero[..., 0] & neg[..., 1])
            | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
    return _jnp.where(flip[..., None], -q, q)


def _elementary(axis, angle):
    zeros = _jnp.zeros_like(angle)
    parts = [zeros, zeros, zeros, _jnp.cos(angle / 2.)]
    parts[axis] = _jnp.sin(angle / 2.)
    return _jnp.stack(parts, axis=-1)


def _check_seq(seq, exact3):
    if exact3 and len(seq) != 3:
        raise ValueError(f"Expected 3 axes, got {seq}.")
    if not exact3 and not 1 <= len(seq) <= 3:
        raise ValueError(f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}")
    intrinsic = _re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = _re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return intrinsic, ["xyz".index(c) for c in seq.lower()]


def _euler_from_quat(q, axes, extrinsic, degrees):
    # Bernardes & Viollet (2022), as SciPy: the middle angle from a 2-argument arctan, the outer ones from
    # half sums/differences, with the gimbal-lock cases (middle angle 0 or pi) giving the third angle 0
    if not extrinsic:
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = float((i - j) * (j - k) * (k - i) // 2)
    first, third = (0, 2) if extrinsic else (2, 0)
    qi, qj, qk, qw = q[..., i], q[..., j], q[..., k], q[..., 3]
    if symmetric:
        a, b, c, d = qw, qi, qj, qk * sign
    else:
        a, b, c, d = qw - qj, qi + qk * sign, qj + qw, qk * sign - qi
    mid = 2 * _jnp.arctan2(_jnp.hypot(c, d), _jnp.hypot(a, b))
    eps = 1e-7
    case = _jnp.where(_jnp.abs(mid) <= eps, 1, _jnp.where(_jnp.abs(mid - _np.pi) <= eps, 2, 0))
    half_sum = _jnp.arctan2(b, a)
    half_diff = _jnp.arctan2(d, c)
    degenerate_first = _jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1. if extrinsic else 1.))
    out = [None, mid, None]
    # angle 0 (the first of the sequence) takes the degenerate value; the other outer angle is 0
    out[0] = degenerate_first
    out[2] = _jnp.zeros_like(mid)
    out[first] = _jnp.where(case == 0, half_sum - half_diff, out[first])
    out[third] = _jnp.where(case == 0, half_sum + half_diff, out[third])
    if not symmetric:
        out[third] = out[third] * sign
        out[1] = out[1] - _np.pi / 2
    angles = _jnp.stack(out, axis=-1)
    angles = (angles + _np.pi) % (2 * _np.pi) - _np.pi
    return _jnp.rad2deg(angles) if degrees else angles


class Rotation(_typing.NamedTuple):
    """Rotations in 3 dimensions as unit quaternions ``quat`` of shape ``(4,)`` (one rotation) or ``(N, 4)``
    (scalar last). Build with the ``from_*`` class methods; ``r1 * r2`` composes (``r2`` applied first).
    Mirrors ``jax.scipy.spatial.transform.Rotation`` (SciPy's ``Rotation``)."""

    quat: _typing.Any

    @classmethod
    def concatenate(cls, rotations):
        """One object holding all of ``rotations`` (each single or a stack), in order."""
        return cls(_jnp.concatenate([_jnp.atleast_2d(r.quat) for r in rotations]))

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """From Euler angles about 1 to 3 axes ``seq`` (lower case: extrinsic, fixed axes; upper case:
        intrinsic, rotating axes), ``angles`` of shape ``(..., len(seq))`` (or a scalar for one axis).
        ValueError for a bad ``seq``."""
        intrinsic, axes = _check_seq(seq, False)
        angles = _jnp.asarray(angles)
        if not _jnp.issubdtype(angles.dtype, _jnp.inexact):
            angles = angles.astype(_jnp.result_type(float))
        angles = _jnp.atleast_1d(angles)
        if degrees:
            angles = _jnp.deg2rad(angles)
        if angles.shape[-1] != len(axes):
            if len(axes) == 1 and angles.ndim == 1:
                angles = angles[:, None]
            else:
                raise ValueError(f"Expected angles of shape (..., {len(axes)}) for seq {seq!r}, got "
                                 f"{angles.shape}")
        q = _elementary(axes[0], angles[..., 0])
        for n in range(1, len(axes)):
            e = _elementary(axes[n], angles[..., n])
            q = _compose(q, e) if intrinsic else _compose(e, q)
        return cls(q)

    @classmethod
    def from_matrix(cls, matrix):
        """From rotation matrices ``(..., 3, 3)``."""
        return cls(_from_matrix(_jnp.asarray(matrix)))

    @classmethod
    def from_mrp(cls, mrp):
        """From Modified Rodrigues Parameters ``(..., 3)``."""
        return cls(_from_mrp(_jnp.asarray(mrp)))

    @classmethod
    def from_quat(cls, quat):
        """From quaternions ``(..., 4)`` (scalar last), normalized."""
        return cls(_normalize(_jnp.asarray(quat)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        """From rotation vectors ``(..., 3)`` (axis times angle)."""
        return cls(_from_rotvec(_jnp.asarray(rotvec), degrees))

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation (``num`` of them when given)."""
        q = _jnp.array([0., 0., 0., 1.], dtype=dtype)
        return cls(q if num is None else _jnp.tile(q, (num, 1)))

    @classmethod
    def random(cls, random_key, num=None):
        """Uniformly distributed rotations (normalized standard-normal quaternions). JAX 0.10.2 raises
        NotImplementedError here; cranax samples."""
        q = _random.normal(random_key, (4,) if num is None else (num, 4))
        return cls(_normalize(q))

    def __getitem__(self, indexer):
        """The rotation(s) at ``indexer``; TypeError for a single rotation."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other):
        """``self`` composed with ``other`` (``other`` applied first)."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse=False):
        """The rotated ``vectors`` (``(3,)`` or ``(N, 3)``, broadcast against the rotations); ``inverse``
        rotates by the inverse."""
        m = self.as_matrix()
        if inverse:
            m = _jnp.swapaxes(m, -1, -2)
        return _jnp.einsum("...ij,...j->...i", m, _jnp.asarray(vectors))

    def as_euler(self, seq, degrees=False):
        """Euler angles ``(..., 3)`` about the 3 axes ``seq`` (see ``from_euler``), in ``[-pi, pi]``."""
        intrinsic, axes = _check_seq(seq, True)
        return _euler_from_quat(self.quat, axes, not intrinsic, degrees)

    def as_matrix(self):
        """Rotation matrices ``(..., 3, 3)``."""
        return _as_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters ``(..., 3)`` (norm at most 1)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees=False):
        """Rotation vectors ``(..., 3)``, angles in ``[0, pi]``."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical=False, scalar_first=False):
        """The quaternions; ``canonical``: the one of ``q``, ``-q`` with ``w > 0`` (ties broken on x, y, z);
        ``scalar_first``: ``(w, x, y, z)`` order."""
        q = _canonical(self.quat) if canonical else self.quat
        return _jnp.roll(q, 1, axis=-1) if scalar_first else q

    def inv(self):
        """The inverse rotation(s)."""
        return Rotation(self.quat * _jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self):
        """Rotation angles in radians, in ``[0, pi]``."""
        return 2. * _jnp.arctan2(_norm(self.quat[..., :3]), _jnp.abs(self.quat[..., 3]))

    def mean(self, weights=None):
        """The (weighted) mean rotation: the dominant eigenvector of ``sum_i w_i q_i q_i^T`` (Markley).
        ValueError for weights that are not 1-D with one value per rotation."""
        q = _jnp.atleast_2d(self.quat)
        w = _jnp.ones(q.shape[0], q.dtype) if weights is None else _jnp.asarray(weights, dtype=q.dtype)
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != q.shape[0]:
            raise ValueError(f"Expected `weights` to have number of values equal to number of rotations, got "
                             f"{w.shape[0]} values and {q.shape[0]} rotations.")
        k = _jnp.dot(w[None, :] * q.T, q)
        _, v = _jnp.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self):
        """Whether this holds one rotation (``quat`` of shape ``(4,)``)."""
        return self.quat.ndim == 1


class Slerp(_typing.NamedTuple):
    """Spherical linear interpolation between key rotations at increasing key times: build with
    ``Slerp.init(times, rotations)``, call with times in ``[times[0], times[-1]]``. Mirrors
    ``jax.scipy.spatial.transform.Slerp``."""

    times: _typing.Any
    timedelta: _typing.Any
    rotations: Rotation
    rotvecs: _typing.Any

    @classmethod
    def init(cls, times, rotations):
        """TypeError unless ``rotations`` is a ``Rotation``; ValueError for fewer than 2 rotations or times
        that are not 1-D with one per rotation."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = _jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got {times.ndim} "
                             f"dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError(f"Expected number of rotations to be equal to number of timestamps given, got "
                             f"{len(rotations)} rotations and {times.shape[0]} timestamps.")
        q = rotations.as_quat()
        starts = Rotation(q[:-1])
        return cls(times=times, timedelta=_jnp.diff(times), rotations=starts,
                   rotvecs=(starts.inv() * Rotation(q[1:])).as_rotvec())

    def __call__(self, times):
        """The interpolated rotation(s) at ``times`` (a scalar gives a single rotation)."""
        t = _jnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = t.ndim == 0
        t = _jnp.atleast_1d(t)
        ind = _jnp.maximum(_jnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        out = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return out[0] if single else out
