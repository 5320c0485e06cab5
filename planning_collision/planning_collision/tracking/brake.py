"""Passive safety against what only sensors see: stop rather than run into someone.

ORCA keeps robots off the tracked people as long as a safe velocity exists and the tracks are
right; when a person steps out close by or changes course faster than the tracks follow, the
velocity it chose can still touch them within a fraction of a second. :func:`must_stop` finds
the robots whose commanded velocity would touch a disc within ``horizon`` seconds (everyone
keeping their velocity): those are sent zero, so that a contact, if any, is someone walking
into a standing robot, never the robot driving into them. That holds also when standing would
be touched sooner (someone faster catching up from behind): passive safety asks the robot to
be at rest at a contact, not to run ahead of it (seed 43 of the sensed crossings was such a
contact at 0.57 m/s). A robot already touching a disc (a grown one: its uncertainty) may move
away from it, not towards it, and only faster than the disc may follow: the stop judges a
tracked disc by its track's velocity estimate, also where ORCA's disc stands because that
velocity is unsure, and asks the robot to part faster than twice the estimate's standard
deviation (seed 808: a person overtaking a robot, whose track turned unsure one scan before the
contact; against a standing disc the robot moved off at 0.87 m/s and the faster person ran
into it. Seed 378, with the smaller process noise: a person stepping out from behind a box
onto a fleeing robot was tracked 0.25 m/s too slow, more than one deviation (0.16); the robot
parted by 0.21 m/s on the estimate and was run into at 0.66 m/s).

Tracks cannot say when someone is pressed into the robot itself: their returns fall on the
robot's own body, which is not tracked (:func:`~.scan_points.drop_known`), or closer to the
laser than it measures (REP 117's ``-inf``), and they hide whoever walks behind them.
:func:`touched` tells from a robot's latest scan that someone is there; such a robot stands
until a scan shows it clear (seeds 531, 541 and 551 of the sensed crossings drove on, blind,
into the next person).
"""

from __future__ import annotations

import numpy as np


def contact_times(positions, velocities, radii, centres, disc_velocities, disc_radii,
                  disc_sigmas=None):
    """(r, d) seconds until robot i and disc j touch with constant velocities (inf when
    never); when they touch already, 0 while they close in and inf while they part, faster
    than twice ``disc_sigmas`` (d,), the standard deviation of each disc's velocity (default
    0): an unsure velocity may be closing in faster than its estimate."""
    p = np.asarray(centres, float)[None, :, :] - np.asarray(positions, float)[:, None, :]
    w = np.asarray(disc_velocities, float)[None, :, :] - np.asarray(velocities, float)[:, None, :]
    reach = np.asarray(radii, float)[:, None] + np.asarray(disc_radii, float)[None, :]
    a = (w * w).sum(axis=2)
    b = (p * w).sum(axis=2)
    c = (p * p).sum(axis=2) - reach * reach
    disc = b * b - a * c
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where((a > 1e-12) & (disc >= 0.0), (-b - np.sqrt(np.maximum(disc, 0.0))) / a,
                     np.inf)
    t = np.where(t >= 0.0, t, np.inf)  # the contact lies in the past: they are parting
    # Touching already: 0 while they close in, inf while they part (leaving is allowed).
    # b / |p| is how fast they part; it must beat what the disc's unsure velocity may add
    # (two deviations: the 95 % ORCA's moving rule, tracker.discs_of, asks too).
    sigma = (np.zeros(p.shape[1]) if disc_sigmas is None
             else np.asarray(disc_sigmas, float))[None, :]
    parting = b > 2.0 * sigma * np.sqrt((p * p).sum(axis=2))
    parting |= (sigma <= 0.0) & (b >= 0.0)
    return np.where(c <= 0.0, np.where(parting, np.inf, 0.0), t)


def must_stop(positions, velocities, radii, discs, horizon: float) -> np.ndarray:
    """(r,) the robots that must be sent zero (see the module docstring); ``velocities`` are
    the commanded ones in the global frame, ``discs`` a :class:`~.tracker.Discs`."""
    positions = np.asarray(positions, float).reshape(-1, 2)
    r = positions.shape[0]
    if horizon <= 0.0 or not discs.count or not r:
        return np.zeros(r, dtype=bool)
    moving = contact_times(positions, velocities, radii, discs.positions,
                           discs.brake_velocities, discs.radii, discs.brake_sigmas)
    return (moving <= horizon).any(axis=1)


def touched(ranges, points, position, radius: float) -> bool:
    """Whether a robot's scan sees someone on or in the robot: a beam reading too close to
    measure (``-inf``, REP 117), or a return (``points``, (m, 2), global frame) within
    ``radius`` of its ``position``. A laser does not see its own robot, so either is someone
    else (a mount whose beams hit the robot's body must leave those beams out: ``angle_min``,
    ``angle_max``, ``range_min``)."""
    if np.isneginf(np.asarray(ranges, float)).any():
        return True
    d = np.asarray(points, float).reshape(-1, 2) - np.asarray(position, float)[:2]
    return bool((d[:, 0] ** 2 + d[:, 1] ** 2 <= radius * radius).any())
