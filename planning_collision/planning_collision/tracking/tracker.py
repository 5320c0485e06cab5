"""Tracks of things seen by sensors: identity, position, velocity and their uncertainty.

Each track is a constant-velocity Kalman filter (state x, y, vx, vy in the global frame,
white-noise acceleration of spectral density ``accel_noise``), fed with the centres of one
scan's clusters (:mod:`.clustering`) at the scan's stamp. The clusters of a scan are assigned
to the tracks by an optimal assignment (``scipy.optimize.linear_sum_assignment``) on the
Mahalanobis distance of each centre from each track's prediction, within ``gate`` (chi-square,
2 degrees of freedom) and ``max_jump`` metres; a cluster left over starts a new track. A track
is *confirmed* once it has been seen ``confirm_hits`` times; a track not seen for
``lost_after`` seconds is deleted, so nothing is avoided where nobody stands any more (no
ghosts). A centre further than ``manoeuvre_gate`` (chi-square) from its prediction says the
track started, stopped or turned: its velocity's variance grows by a quarter of a new track's
before the correction, so the estimate follows within a scan or two. Because that gate
(90 %) re-opens the velocity at a start, stop or turn, the process noise itself can be small
(0.1): the velocity's standard deviation then settles near 0.17 m/s at one 10 Hz laser
(0.29 with 0.5), so a steady 0.4 m/s walker is avoided walking (test_slow_walker.py).

Scans of several robots feed one tracker, so a person seen by two robots is one track. A scan
older than a track's latest update is applied at the track's time (no filtering backwards).
Each robot sees its own side of a person, sometimes only part of it (the rest hidden, or
dropped with a known robot's points): a cluster narrower than the track's radius has its
centre up to the missing radius nearer its viewer, so that missing radius is added to its
measurement noise (for the gate, the assignment's cost and the correction). A cluster left over
whose disc lies on a track's disc is a second arc of that track, not a new one; and of two
tracks whose centres lie on each other's discs with velocities agreeing within the gate, the
one seen fewer times is dropped. A track's radius follows a wider cluster at once (smoothed)
but a narrower one at most ``radius_shrink`` m/s: partial arcs would shrink it, and with it
the room the rule above gives. (Before, the demo's person was often two or three tracks.)

For ORCA (:meth:`Tracker.discs`): a track moving faster than ``still_speed`` (and faster than
twice its speed's standard deviation) is an agent with its velocity; a still one stands, and
so does a tentative one (seen once: someone stepping out is avoided from the first scan).
Either way its radius grows by two standard deviations of its position and by what its
velocity's uncertainty covers in ``velocity_time`` seconds (at most ``max_growth``). A disc
standing for ORCA keeps its track's velocity estimate and spread for the passive-safety stop
(:mod:`.brake`): seed 808 of the sensed crossings was a person overtaking a robot whose track
turned unsure one scan before the contact; the stop saw a standing disc and let the robot
move off, and the faster person ran into it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment

from planning_collision.common.checks import finite_scalar

from .clustering import Clusters

#: Bounds of every number of :class:`TrackerSettings` (keywords of ``finite_scalar``).
TRACKER_BOUNDS: dict[str, dict] = {
    "measurement_noise": {"above": 0.0},
    "accel_noise": {"above": 0.0},
    "initial_speed_sigma": {"above": 0.0},
    "gate": {"above": 0.0},
    "max_jump": {"above": 0.0},
    "confirm_hits": {"at_least": 1, "integer": True},
    "lost_after": {"above": 0.0},
    "still_speed": {"at_least": 0.0},
    "velocity_time": {"at_least": 0.0},
    "max_growth": {"at_least": 0.0},
    "radius_smoothing": {"above": 0.0, "at_most": 1.0},
    "radius_shrink": {"at_least": 0.0},
    "manoeuvre_gate": {"above": 0.0},
}


@dataclass
class TrackerSettings:
    measurement_noise: float = 0.05  # m, standard deviation of a cluster's centre
    accel_noise: float = 0.1  # (m/s^2)^2 s, how fast a track's velocity may change
    initial_speed_sigma: float = 1.0  # m/s, a new track's velocity (zero) is this unsure
    gate: float = 13.8  # chi-square, 2 dof (99.9 %)
    max_jump: float = 1.0  # m, never assign a cluster further than this from a track
    confirm_hits: int = 2
    lost_after: float = 0.25  # s unseen: deleted
    still_speed: float = 0.1  # m/s
    velocity_time: float = 0.8  # s
    max_growth: float = 0.5  # m
    radius_smoothing: float = 0.3  # weight of a new cluster's radius
    radius_shrink: float = 0.2  # m/s, the fastest a track's radius may shrink
    # chi-square (90 %): a centre this far off says the person started, stopped or turned
    manoeuvre_gate: float = 4.6

    def check(self) -> None:
        for f in fields(self):
            finite_scalar(getattr(self, f.name), f.name, **TRACKER_BOUNDS[f.name])


class Tracks(NamedTuple):
    """Tracks at one time (global frame)."""

    ids: np.ndarray  # (t,) int64, never reused
    positions: np.ndarray  # (t, 2)
    velocities: np.ndarray  # (t, 2)
    radii: np.ndarray  # (t,) the clusters' radius, smoothed
    covariances: np.ndarray  # (t, 4, 4) of x, y, vx, vy
    ages: np.ndarray  # (t,) seconds since first seen
    unseen: np.ndarray  # (t,) seconds since last seen

    @property
    def count(self) -> int:
        return self.ids.shape[0]


class Discs(NamedTuple):
    """What ORCA avoids with full responsibility: discs with a velocity (global frame).

    ``estimates`` and ``speed_sigmas`` are for the passive-safety stop (:mod:`.brake`): a
    track's velocity estimate and its standard deviation, kept where ORCA's disc stands
    because the velocity is unsure (None: ``velocities``, known exactly)."""

    positions: np.ndarray  # (d, 2)
    velocities: np.ndarray  # (d, 2)
    radii: np.ndarray  # (d,)
    estimates: np.ndarray | None = None  # (d, 2) the velocity estimate
    speed_sigmas: np.ndarray | None = None  # (d,) its standard deviation (per axis)

    @property
    def count(self) -> int:
        return self.radii.shape[0]

    @property
    def brake_velocities(self) -> np.ndarray:
        return self.velocities if self.estimates is None else self.estimates

    @property
    def brake_sigmas(self) -> np.ndarray:
        return np.zeros(self.count) if self.speed_sigmas is None else self.speed_sigmas

    @staticmethod
    def empty() -> Discs:
        return Discs(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0))

    def concatenate(self, other: Discs) -> Discs:
        both = (self, other)
        plain = all(d.estimates is None and d.speed_sigmas is None for d in both)
        return Discs(np.concatenate((self.positions, other.positions)),
                     np.concatenate((self.velocities, other.velocities)),
                     np.concatenate((self.radii, other.radii)),
                     None if plain else np.concatenate([d.brake_velocities for d in both]),
                     None if plain else np.concatenate([d.brake_sigmas for d in both]))


class Tracker:
    """Tracks over time from clusters (see the module docstring).

    The x and y axes are filtered alike (the same start, process noise and isotropic
    measurement noise), so one 2 x 2 covariance of (position, velocity) per track serves
    both: ``_cov[:, 0]`` var(position), ``[:, 1]`` cov(position, velocity), ``[:, 2]``
    var(velocity)."""

    def __init__(self, settings: TrackerSettings | None = None):
        self.settings = settings or TrackerSettings()
        self.settings.check()
        self._x = np.zeros((0, 4))  # x, y, vx, vy
        self._cov = np.zeros((0, 3))
        self._ids = np.zeros(0, np.int64)
        self._time = np.zeros(0)  # time of each track's state
        self._born = np.zeros(0)
        self._seen = np.zeros(0)
        self._hits = np.zeros(0, np.int64)
        self._radius = np.zeros(0)
        self._next_id = 1

    def __len__(self) -> int:
        return self._ids.size

    def configure(self, settings: TrackerSettings) -> None:
        settings.check()
        self.settings = settings

    # ------------------------------------------------------------------ filtering
    def _predicted(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        dt = np.maximum(t - self._time, 0.0)
        q = self.settings.accel_noise
        x = self._x.copy()
        x[:, :2] += x[:, 2:] * dt[:, None]
        pp, pv, vv = self._cov.T
        cov = np.column_stack((pp + dt * (2.0 * pv + dt * vv) + q * dt ** 3 / 3.0,
                               pv + dt * vv + q * dt ** 2 / 2.0,
                               vv + q * dt))
        return x, cov

    def update(self, t: float, clusters: Clusters) -> None:
        """One scan's ``clusters`` measured at time ``t``: predict, assign, correct, start
        new tracks, merge duplicates, forget the lost ones."""
        s = self.settings
        self.prune(t)
        c = clusters.centres
        matched = np.zeros(0, np.int64)
        inside = np.zeros(clusters.count, dtype=bool)
        if self._ids.size and clusters.count:
            dt = np.maximum(t - self._time, 0.0)
            self._x, self._cov = self._predicted(t)
            self._time = np.maximum(self._time, t)
            # A cluster narrower than the track shows part of it (the rest hidden behind
            # something, or its points dropped near a known agent): its centre, placed behind
            # the visible arc by the arc's own width, may lie up to the missing radius nearer
            # the viewer. That much more measurement noise for this pair.
            missing = np.maximum(self._radius[:, None] - clusters.radii[None, :], 0.0)
            innovation = self._cov[:, 0, None] + s.measurement_noise ** 2 + missing ** 2
            d = c[None, :, :] - self._x[:, None, :2]  # (tracks, clusters, 2)
            d2 = d[..., 0] ** 2 + d[..., 1] ** 2
            m2 = d2 / innovation
            far = (m2 > s.gate) | (d2 > s.max_jump ** 2)
            # The likelihood's cost (Mahalanobis plus the log of the spread), so that a vague
            # partial cluster does not win a track over a full one.
            cost = m2 + 2.0 * np.log(innovation)
            rows, cols = linear_sum_assignment(np.where(far, 1e6, cost))
            ok = ~far[rows, cols]
            tracks, matched = rows[ok], cols[ok]
            if tracks.size:
                # A person who starts, stops or turns: the centre falls far from the
                # prediction; the velocity is made unsure again so that it follows at once.
                turned = tracks[m2[tracks, matched] > s.manoeuvre_gate]
                if turned.size:
                    self._cov[turned, 2] += 0.25 * s.initial_speed_sigma ** 2
                self._correct(tracks, c[matched], innovation[tracks, matched], t)
                # A partial arc is narrower than its object: the radius follows a wider
                # cluster at once (smoothed) but a narrower one only at radius_shrink.
                w, r = s.radius_smoothing, self._radius[tracks]
                smoothed = (1 - w) * r + w * clusters.radii[matched]
                self._radius[tracks] = np.maximum(smoothed, r - s.radius_shrink * dt[tracks])
            # A leftover cluster whose disc lies on a track's disc (within two measurement
            # deviations) is part of that track's object (a second arc of it in one scan),
            # never a new person. Its centre alone on the disc is not enough: a person
            # beside a large object's disc would be dropped with their body out of it.
            room = self._radius[:, None] + 2.0 * s.measurement_noise - clusters.radii[None, :]
            inside = ((room >= 0.0) & (d2 <= room ** 2)).any(axis=0)
        fresh = np.setdiff1d(np.arange(clusters.count), matched)
        fresh = fresh[~inside[fresh]]
        if fresh.size:
            self._start(c[fresh], clusters.radii[fresh], t)
        self._merge()

    def _merge(self) -> None:
        """One track per object: of two tracks at the same time whose centres lie on each
        other's discs (no two people's bodies overlap that much) and whose velocities agree
        within the gate, the one seen fewer times is dropped (e.g. a track started by one
        robot's partial view before the other robots' clusters reached the first track)."""
        n = self._ids.size
        if n < 2:
            return
        s = self.settings
        d = self._x[:, None, :2] - self._x[None, :, :2]
        dv = self._x[:, None, 2:] - self._x[None, :, 2:]
        # Each centre on the other's disc: the smaller radius (the larger would let a large
        # object's track swallow a person beside it).
        reach = np.minimum(self._radius[:, None], self._radius[None, :])
        same_time = np.abs(self._time[:, None] - self._time[None, :]) < 1e-9
        agree = ((dv[..., 0] ** 2 + dv[..., 1] ** 2)
                 <= s.gate * (self._cov[:, None, 2] + self._cov[None, :, 2]))
        twins = ((d[..., 0] ** 2 + d[..., 1] ** 2 < reach ** 2) & agree & same_time
                 & ~np.eye(n, dtype=bool))
        if not twins.any():
            return
        # Keep the track seen most (then the oldest): visit them in that order.
        order = np.lexsort((self._ids, -self._hits))
        keep = np.ones(n, dtype=bool)
        for i in order:
            if keep[i]:
                keep[twins[i]] = False  # twins has no diagonal: i itself stays
        self._keep(keep)

    def _correct(self, tracks, z, innovation, t: float) -> None:
        pp, pv, vv = self._cov[tracks].T
        k_p, k_v = pp / innovation, pv / innovation
        residual = z - self._x[tracks, :2]
        self._x[tracks, :2] += k_p[:, None] * residual
        self._x[tracks, 2:] += k_v[:, None] * residual
        self._cov[tracks] = np.column_stack(((1.0 - k_p) * pp, (1.0 - k_p) * pv,
                                             vv - k_v * pv))
        self._seen[tracks] = t
        self._hits[tracks] += 1

    def _start(self, centres: np.ndarray, radii: np.ndarray, t: float) -> None:
        s, k = self.settings, centres.shape[0]
        x = np.zeros((k, 4))
        x[:, :2] = centres
        cov = np.tile([s.measurement_noise ** 2, 0.0, s.initial_speed_sigma ** 2], (k, 1))
        self._x = np.concatenate((self._x, x))
        self._cov = np.concatenate((self._cov, cov))
        self._ids = np.concatenate((self._ids, np.arange(self._next_id, self._next_id + k)))
        self._next_id += k
        self._time = np.concatenate((self._time, np.full(k, t)))
        self._born = np.concatenate((self._born, np.full(k, t)))
        self._seen = np.concatenate((self._seen, np.full(k, t)))
        self._hits = np.concatenate((self._hits, np.ones(k, np.int64)))
        self._radius = np.concatenate((self._radius, np.asarray(radii, np.float64)))

    def prune(self, now: float) -> None:
        """Forget every track not seen for more than ``lost_after`` seconds at ``now``."""
        alive = now - self._seen <= self.settings.lost_after
        if not alive.all():
            self._keep(alive)

    def _keep(self, mask: np.ndarray) -> None:
        """Keep only the tracks ``mask`` selects (every per-track array alike)."""
        for name in ("_x", "_cov", "_ids", "_time", "_born", "_seen", "_hits", "_radius"):
            setattr(self, name, getattr(self, name)[mask])

    # ------------------------------------------------------------------ out
    def tracks(self, now: float, confirmed: bool = True) -> Tracks:
        """The tracks alive at ``now``, predicted to ``now`` (only the confirmed ones unless
        ``confirmed`` is False)."""
        alive = now - self._seen <= self.settings.lost_after
        if confirmed:
            alive &= self._hits >= self.settings.confirm_hits
        x, cov = self._predicted(now)
        x, cov = x[alive], cov[alive]
        full = np.zeros((x.shape[0], 4, 4))
        for a in (0, 1):
            full[:, a, a], full[:, a + 2, a + 2] = cov[:, 0], cov[:, 2]
            full[:, a, a + 2] = full[:, a + 2, a] = cov[:, 1]
        return Tracks(ids=self._ids[alive].copy(), positions=x[:, :2], velocities=x[:, 2:],
                      radii=self._radius[alive].copy(), covariances=full,
                      ages=now - self._born[alive], unseen=now - self._seen[alive])

    def discs(self, now: float) -> Discs:
        """Every track at ``now`` as ORCA avoids them, the tentative ones too (see the module
        docstring: a track seen once has an unsure velocity, so it stands, grown)."""
        return discs_of(self.tracks(now, confirmed=False), self.settings)


def discs_of(tracks: Tracks, s: TrackerSettings) -> Discs:
    """``tracks`` as ORCA's discs: moving ones with their velocity, still ones standing, each
    radius grown by its uncertainty (see the module docstring)."""
    if not tracks.count:
        return Discs.empty()
    cov = tracks.covariances
    v = tracks.velocities
    speed = np.hypot(v[:, 0], v[:, 1])
    pos_sigma = np.sqrt(np.maximum(np.maximum(cov[:, 0, 0], cov[:, 1, 1]), 0.0))
    vel_sigma = np.sqrt(np.maximum(np.maximum(cov[:, 2, 2], cov[:, 3, 3]), 0.0))
    moving = (speed > s.still_speed) & (speed > 2.0 * vel_sigma)
    growth = np.minimum(2.0 * pos_sigma + vel_sigma * s.velocity_time, s.max_growth)
    return Discs(tracks.positions.copy(), np.where(moving[:, None], v, 0.0),
                 tracks.radii + growth, v.copy(), vel_sigma)
