"""Passive safety against what only sensors see: stop rather than run into someone.

ORCA keeps robots off the tracked people as long as a safe velocity exists and the tracks are
right; when a person steps out close by or changes course faster than the tracks follow, the
velocity it chose can still touch them within a fraction of a second. :func:`must_stop` finds
the robots whose commanded velocity would touch a disc within ``horizon`` seconds (everyone
keeping their velocity) while standing still would touch it later or never: those are sent
zero, so that a contact, if any, is someone walking into a standing robot, never the robot
driving into them. A robot already touching a disc (a grown one: its uncertainty) may move
away from it, not towards it.
"""

from __future__ import annotations

import numpy as np


def contact_times(positions, velocities, radii, centres, disc_velocities, disc_radii):
    """(r, d) seconds until robot i and disc j touch with constant velocities (inf when
    never); when they touch already, 0 while they close in and inf while they part."""
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
    return np.where(c <= 0.0, np.where(b < 0.0, 0.0, np.inf), t)


def must_stop(positions, velocities, radii, discs, horizon: float) -> np.ndarray:
    """(r,) the robots that must be sent zero (see the module docstring); ``velocities`` are
    the commanded ones in the global frame, ``discs`` a :class:`~.tracker.Discs`."""
    positions = np.asarray(positions, float).reshape(-1, 2)
    r = positions.shape[0]
    if horizon <= 0.0 or not discs.count or not r:
        return np.zeros(r, dtype=bool)
    moving = contact_times(positions, velocities, radii, discs.positions, discs.velocities,
                           discs.radii)
    standing = contact_times(positions, np.zeros((r, 2)), radii, discs.positions,
                             discs.velocities, discs.radii)
    soon = (moving <= horizon) & ((standing > moving) | (moving == 0.0))
    return soon.any(axis=1)
