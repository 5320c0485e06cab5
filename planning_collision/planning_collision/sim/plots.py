"""Pictures of a fleet run: a PNG of the trajectories and a GIF of one robot's ORCA half-planes.

Plain matplotlib over recorded arrays (no ROS): the demo records, this draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..geometry import ConvexShape
from ..geometry.outline import outline
from ..grid import GridMap
from .scenario import BoxObstacle, CircleObstacle, PolygonObstacle, Scenario


@dataclass(frozen=True)
class HalfPlaneFrame:
    """One control step of one agent, as orca_node reported it (velocities in m/s)."""

    sim_time: float
    preferred: tuple[float, float]
    velocity: tuple[float, float]
    line_points: np.ndarray  # (M, 2)
    line_directions: np.ndarray  # (M, 2), permitted side on the left
    infeasible: bool
    #: (K, 5) what orca_node tracked from the robots' sensors at that step, in the map's frame:
    #: x, y, vx, vy, radius (issue #25)
    tracks: np.ndarray = field(default_factory=lambda: np.zeros((0, 5)))


def obstacle_rings(scenario: Scenario) -> list[tuple[str, np.ndarray]]:
    rings = []
    for obstacle in scenario.obstacles:
        if isinstance(obstacle, PolygonObstacle):
            rings.append((obstacle.id, np.array(obstacle.vertices)))
        elif isinstance(obstacle, CircleObstacle):
            rings.append((obstacle.id, outline(ConvexShape.circle(obstacle.center,
                                                                  obstacle.radius))))
        elif isinstance(obstacle, BoxObstacle):
            rings.append((obstacle.id, ConvexShape.box(obstacle.center, obstacle.heading,
                                                       obstacle.length, obstacle.width).points))
    return rings


def _draw_world(ax, grid: GridMap | None, scenario: Scenario) -> None:
    if grid is not None:
        blocked = grid.blocked_mask()
        ox, oy, _ = grid.origin
        extent = (ox, ox + grid.width * grid.resolution, oy, oy + grid.height * grid.resolution)
        ax.imshow(blocked, origin="lower", extent=extent, cmap="Greys", vmin=0, vmax=1.6,
                  interpolation="nearest")
        ax.set_xlim(extent[0], extent[1])
        ax.set_ylim(extent[2], extent[3])
    for _, ring in obstacle_rings(scenario):
        closed = np.vstack([ring, ring[:1]])
        ax.fill(closed[:, 0], closed[:, 1], color="0.45", alpha=0.8, lw=0)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")


def plot_trajectories(trajectory: dict, scenario: Scenario, grid: GridMap | None,
                      path: str | Path, title: str = "") -> Path:
    """Every robot's path from start (circle) to goal (cross); non-ORCA agents dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 7), dpi=110)
    _draw_world(ax, grid, scenario)
    names = [str(n) for n in trajectory["names"]]
    colors = plt.cm.tab20(np.linspace(0, 1, max(len(names), 2)))
    for i, name in enumerate(names):
        x, y = trajectory["x"][:, i], trajectory["y"][:, i]
        if x.size == 0:
            continue
        person = not bool(trajectory["orca"][i])
        ax.plot(x, y, color="k" if person else colors[i], lw=1.4, ls="--" if person else "-",
                label=name if person else None)
        r = float(trajectory["radius"][i])
        ax.add_patch(plt.Circle((x[0], y[0]), r, fill=False, color=colors[i], lw=1))
        ax.add_patch(plt.Circle((x[-1], y[-1]), r, color="k" if person else colors[i],
                                alpha=0.6))
        ax.plot(trajectory["goal_x"][i], trajectory["goal_y"][i], "x",
                color="k" if person else colors[i], ms=6)
    for t, robot in zip(trajectory["contact_time"], trajectory["contact_robot"], strict=True):
        k = names.index(str(robot))
        j = int(np.searchsorted(trajectory["times"], t).clip(0, len(trajectory["times"]) - 1))
        ax.plot(trajectory["x"][j, k], trajectory["y"][j, k], "r*", ms=12)
    ax.set_title(title or "Trajectories (circles: start, discs: end, crosses: goals)")
    if any(not bool(o) for o in trajectory["orca"]):
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path


def animate_halfplanes(frames: list[HalfPlaneFrame], trajectory: dict, scenario: Scenario,
                       grid: GridMap | None, robot: str, max_speed: float, path: str | Path,
                       max_frames: int = 80, fps: int = 8) -> Path:
    """Left: the fleet at each moment, ``robot`` highlighted. Right: its velocity space with
    every ORCA half-plane's forbidden side shaded, the max-speed circle, the preferred
    (dashed) and chosen (solid) velocities."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.animation import PillowWriter

    if not frames:
        raise ValueError(f"no ORCA frames recorded for {robot}")
    names = [str(n) for n in trajectory["names"]]
    k = names.index(robot)
    times = trajectory["times"]
    picked = np.unique(np.linspace(0, len(frames) - 1, min(max_frames, len(frames))).astype(int))
    fig, (ax_world, ax_vel) = plt.subplots(1, 2, figsize=(11, 5), dpi=80)
    writer = PillowWriter(fps=fps)
    path = Path(path)
    lim = 1.4 * max_speed
    big = 10.0 * lim
    with writer.saving(fig, str(path), dpi=80):
        for index in picked:
            frame = frames[index]
            ax_world.clear()
            ax_vel.clear()
            _draw_world(ax_world, grid, scenario)
            j = int(np.searchsorted(times, frame.sim_time).clip(0, max(len(times) - 1, 0)))
            for i in range(len(names) if times.size else 0):
                color = "tab:red" if i == k else ("k" if not trajectory["orca"][i] else
                                                   "tab:blue")
                ax_world.add_patch(plt.Circle((trajectory["x"][j, i], trajectory["y"][j, i]),
                                              float(trajectory["radius"][i]), color=color,
                                              alpha=0.8 if i == k else 0.5))
            if times.size:
                ax_world.plot(trajectory["x"][: j + 1, k], trajectory["y"][: j + 1, k],
                              color="tab:red", lw=1)
            for x, y, vx, vy, radius in np.asarray(frame.tracks, float).reshape(-1, 5):
                ax_world.add_patch(plt.Circle((x, y), radius, fill=False, ls="--", lw=1.2,
                                              color="tab:orange"))
                ax_world.annotate("", xy=(x + vx, y + vy), xytext=(x, y),
                                  arrowprops={"arrowstyle": "->", "color": "tab:orange"})
            tracked = (f"; {len(frame.tracks)} tracked (orange: disc, 1 s of velocity)"
                       if len(frame.tracks) else "")
            ax_world.set_title(f"{robot} at t = {frame.sim_time:.1f} s{tracked}", fontsize=10)

            for p, d in zip(frame.line_points, frame.line_directions, strict=True):
                right = np.array([d[1], -d[0]])
                quad = np.array([p - big * d, p + big * d, p + big * d + big * right,
                                 p - big * d + big * right])
                ax_vel.fill(quad[:, 0], quad[:, 1], color="tab:red", alpha=0.12, lw=0)
                ax_vel.plot([p[0] - big * d[0], p[0] + big * d[0]],
                            [p[1] - big * d[1], p[1] + big * d[1]], color="tab:red", lw=0.8)
            circle = np.linspace(0, 2 * np.pi, 90)
            ax_vel.plot(max_speed * np.cos(circle), max_speed * np.sin(circle), color="0.4",
                        lw=1)
            ax_vel.annotate("", xy=frame.preferred, xytext=(0, 0),
                            arrowprops={"arrowstyle": "->", "ls": "--", "color": "tab:green"})
            ax_vel.annotate("", xy=frame.velocity, xytext=(0, 0),
                            arrowprops={"arrowstyle": "->", "color": "tab:blue", "lw": 2})
            ax_vel.set_xlim(-lim, lim)
            ax_vel.set_ylim(-lim, lim)
            ax_vel.set_aspect("equal")
            ax_vel.set_xlabel("vx [m/s]")
            ax_vel.set_ylabel("vy [m/s]")
            status = " (infeasible: linearProgram3)" if frame.infeasible else ""
            ax_vel.set_title(f"{len(frame.line_points)} ORCA half-planes{status}\n"
                             "red: forbidden side; green: preferred, blue: chosen", fontsize=9)
            writer.grab_frame()
    plt.close(fig)
    return path
