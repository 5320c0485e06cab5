"""RViz markers of one ORCA control step: per agent its disc, its preferred and chosen
velocities, and its half-planes in velocity space.

Velocity space is drawn at the agent's position, 1 m per m/s: the arrows end where the
velocity vector ends, and each half-plane (a line through ``point`` along ``direction``,
permitted velocities on its left) is drawn as a segment of that line with a shaded band on
its permitted side. Each agent's markers share one namespace, the agent's name prefixed with
the node's (``orca_node/robot1``: orca_node passes the names so), so RViz can show or hide them
agent by agent and several nodes' markers never overwrite each other:

====  ==============  =========================================================
 id    type            what
====  ==============  =========================================================
 0     CYLINDER        the agent's disc (blue; red when infeasible; grey when inactive)
 1     ARROW           preferred velocity (green)
 2     ARROW           chosen ORCA velocity (orange)
 3     LINE_LIST       the half-planes, one segment each
 4     TRIANGLE_LIST   their permitted sides, two triangles each
====  ==============  =========================================================

Observed agents (robots without ORCA, people) get the same namespace scheme with two markers:
their disc (id 0, purple) and their measured velocity (id 2, purple arrow): what the
controlled agents are avoiding.

Markers with nothing to show (no half-planes, a zero velocity, an agent without odometry)
are sent as DELETE, so RViz never keeps a stale one.
"""

from __future__ import annotations

import numpy as np
from visualization_msgs.msg import Marker, MarkerArray

from . import cdr
from .markers import BLUE, GREEN, GREY, ORANGE, PURPLE, RED, MarkerData, marker_from_data, rgba

DISC, PREFERRED, CHOSEN, LINES, SIDES = range(5)
DISC_HEIGHT = 0.05
LINE_WIDTH = 0.02
ARROW_WIDTH = 0.04
Z = 0.12  # above the discs
SIDE_COLOR = (GREEN.r, GREEN.g, GREEN.b, 0.25)
LINE_COLOR = rgba(GREY)


def _lifted(xy: np.ndarray, z: float) -> np.ndarray:
    out = np.empty((xy.shape[0], 3))
    out[:, :2] = xy
    out[:, 2] = z
    return out


_DISC_COLORS = {False: rgba(BLUE), True: rgba(RED)}
_INACTIVE = rgba(GREY)
_ARROWS = ((PREFERRED, rgba(GREEN)), (CHOSEN, rgba(ORANGE)))
_ARROW_SCALE = (ARROW_WIDTH, 2.0 * ARROW_WIDTH, 3.0 * ARROW_WIDTH)
_LINE_SCALE = (LINE_WIDTH, LINE_WIDTH, LINE_WIDTH)


def step_markers(names, known, active, infeasible, positions, radii, max_speeds, preferred,
                 chosen, line_offsets, line_points, line_directions,
                 lifetime: float) -> list[MarkerData]:
    """Markers of every agent. Agent i's half-planes are rows ``line_offsets[i]`` to
    ``line_offsets[i + 1]`` of ``line_points`` and ``line_directions`` (velocity space);
    ``line_offsets`` None: no half-planes drawn.

    ``known`` agents have a position (their disc is drawn), ``active`` ones also velocities
    and half-planes.
    """
    k = len(names)
    xy = np.asarray(positions, dtype=np.float64)[:k]
    arrows = np.empty((k, 2, 2, 3))  # agent, preferred / chosen, start / end, xyz
    arrows[:, :, 0, :2] = xy[:, None, :]
    arrows[:, 0, 1, :2] = xy + preferred
    arrows[:, 1, 1, :2] = xy + chosen
    arrows[..., 2] = Z
    speeds = np.hypot(np.stack([preferred, chosen], axis=1)[..., 0],
                      np.stack([preferred, chosen], axis=1)[..., 1])
    segments = triangles = None
    if line_offsets is not None and line_offsets[-1] > 0:
        owner = np.repeat(np.arange(k), np.diff(line_offsets))
        extent = np.maximum(np.asarray(max_speeds, dtype=np.float64)[owner], 0.5)[:, None]
        along = np.einsum("ij,ij->i", line_points, line_directions)[:, None]
        foot = line_points - along * line_directions + xy[owner]
        a = foot - extent * line_directions
        b = foot + extent * line_directions
        left = np.column_stack([-line_directions[:, 1], line_directions[:, 0]]) * 0.15 * extent
        segments = _lifted(np.stack([a, b], axis=1).reshape(-1, 2), Z)
        triangles = _lifted(np.stack([a, b, b + left, a, b + left, a + left],
                                     axis=1).reshape(-1, 2), Z - 0.01)
    positions_list = xy.tolist()
    out: list[MarkerData] = []
    for i, ns in enumerate(names):
        if not known[i]:
            out += [MarkerData(ns, m, Marker.ARROW, Marker.DELETE) for m in range(5)]
            continue
        x, y = positions_list[i]
        diameter = 2.0 * float(radii[i])
        out.append(MarkerData(ns, DISC, Marker.CYLINDER,
                              pose=(x, y, 0.5 * DISC_HEIGHT, 0.0, 0.0, 0.0, 1.0),
                              scale=(diameter, diameter, DISC_HEIGHT),
                              color=(_DISC_COLORS[bool(infeasible[i])] if active[i]
                                     else _INACTIVE),
                              lifetime=lifetime))
        for which, (marker_id, color) in enumerate(_ARROWS):
            if active[i] and speeds[i, which] > 1e-6:
                out.append(MarkerData(ns, marker_id, Marker.ARROW, scale=_ARROW_SCALE,
                                      color=color, lifetime=lifetime, points=arrows[i, which]))
            else:
                out.append(MarkerData(ns, marker_id, Marker.ARROW, Marker.DELETE))
        lo = hi = 0
        if segments is not None and active[i]:
            lo, hi = int(line_offsets[i]), int(line_offsets[i + 1])
        if hi == lo:
            out += [MarkerData(ns, m, Marker.LINE_LIST, Marker.DELETE) for m in (LINES, SIDES)]
            continue
        out.append(MarkerData(ns, LINES, Marker.LINE_LIST, scale=_LINE_SCALE,
                              color=LINE_COLOR, lifetime=lifetime,
                              points=segments[2 * lo:2 * hi]))
        out.append(MarkerData(ns, SIDES, Marker.TRIANGLE_LIST, color=SIDE_COLOR,
                              lifetime=lifetime, points=triangles[6 * lo:6 * hi]))
    return out


_OBSERVED = rgba(PURPLE)


def observed_markers(names, fresh, positions, radii, velocities,
                     lifetime: float) -> list[MarkerData]:
    """Disc and measured velocity of each observed agent; DELETE for one that is not
    ``fresh`` (no odometry yet, or forgotten after the timeout)."""
    out: list[MarkerData] = []
    for i, ns in enumerate(names):
        if not fresh[i]:
            out += [MarkerData(ns, DISC, Marker.CYLINDER, Marker.DELETE),
                    MarkerData(ns, CHOSEN, Marker.ARROW, Marker.DELETE)]
            continue
        x, y = float(positions[i][0]), float(positions[i][1])
        diameter = 2.0 * float(radii[i])
        out.append(MarkerData(ns, DISC, Marker.CYLINDER,
                              pose=(x, y, 0.5 * DISC_HEIGHT, 0.0, 0.0, 0.0, 1.0),
                              scale=(diameter, diameter, DISC_HEIGHT), color=_OBSERVED,
                              lifetime=lifetime))
        vx, vy = float(velocities[i][0]), float(velocities[i][1])
        if vx * vx + vy * vy > 1e-12:
            out.append(MarkerData(ns, CHOSEN, Marker.ARROW, scale=_ARROW_SCALE,
                                  color=_OBSERVED, lifetime=lifetime,
                                  points=np.array([[x, y, Z], [x + vx, y + vy, Z]])))
        else:
            out.append(MarkerData(ns, CHOSEN, Marker.ARROW, Marker.DELETE))
    return out


def fleet_markers(step, names, radius, max_speed, lifetime: float) -> list[MarkerData]:
    """Every agent's markers from one :class:`~planning_collision.fleet.FleetStep` (the
    controlled agents first, then the observed ones); discs at the agents' real radii."""
    k = step.commands.shape[0]
    lines = step.lines
    return (step_markers(names[:k], step.known[:k], step.active, step.infeasible,
                         step.positions[:k], radius[:k], max_speed[:k], step.preferred,
                         step.chosen, None if lines is None else lines.drawn_offsets,
                         None if lines is None else lines.drawn_points,
                         None if lines is None else lines.drawn_directions, lifetime=lifetime)
            + observed_markers(names[k:], step.fresh[k:], step.positions[k:], radius[k:],
                               step.velocities[k:], lifetime=lifetime))


def track_markers(ns: str, tracks, lifetime: float) -> list[MarkerData]:
    """Each sensed track (:class:`~planning_collision.tracking.Tracks`) in namespace ``ns``: its
    disc (id 2 x track id, yellow, translucent) and its velocity (id 2 x track id + 1, arrow),
    with a short ``lifetime`` so that a track gone leaves no marker behind."""
    out: list[MarkerData] = []
    for k in range(tracks.count):
        base = 2 * (int(tracks.ids[k]) % (1 << 29))
        x, y = float(tracks.positions[k][0]), float(tracks.positions[k][1])
        diameter = 2.0 * float(tracks.radii[k])
        out.append(MarkerData(ns, base, Marker.CYLINDER,
                              pose=(x, y, 0.5 * DISC_HEIGHT, 0.0, 0.0, 0.0, 1.0),
                              scale=(diameter, diameter, DISC_HEIGHT), color=_TRACK,
                              lifetime=lifetime))
        vx, vy = float(tracks.velocities[k][0]), float(tracks.velocities[k][1])
        if vx * vx + vy * vy > 1e-6:
            out.append(MarkerData(ns, base + 1, Marker.ARROW, scale=_ARROW_SCALE,
                                  color=_TRACK, lifetime=lifetime,
                                  points=np.array([[x, y, Z], [x + vx, y + vy, Z]])))
    return out


_TRACK = (1.0, 0.85, 0.0, 0.8)

MARKER_BYTES = 300  # a serialized Marker without its points, roughly
MARKER_CHUNK_BYTES = 48_000  # below a UDP datagram, so DDS need not fragment


def chunks(data: list[MarkerData]):
    """``data`` cut into lists of about MARKER_CHUNK_BYTES serialized each: DDS sends a larger
    message in fragments, which costs far more per byte (and RViz takes any number of
    arrays)."""
    start, size = 0, 0
    for end, m in enumerate(data, start=1):
        size += MARKER_BYTES + (0 if m.points is None else 24 * m.points.shape[0])
        if size >= MARKER_CHUNK_BYTES or end == len(data):
            yield data[start:end]
            start, size = end, 0


def publish_markers(publisher, raw: bool, frame: str, stamp, data: list[MarkerData]) -> None:
    """``data`` as MarkerArrays of about MARKER_CHUNK_BYTES each, serialized by :mod:`.cdr`
    when ``raw`` (much cheaper than message objects: 2.7 vs 77 ms for 1,000 markers here)."""
    for chunk in chunks(data):
        publisher.publish(cdr.encode_marker_array(frame, stamp.sec, stamp.nanosec, chunk)
                          if raw else
                          MarkerArray(markers=[marker_from_data(frame, stamp, m) for m in chunk]))
