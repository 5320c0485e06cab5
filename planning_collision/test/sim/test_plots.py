"""The demo's pictures: a trajectories PNG and an ORCA half-plane GIF from recorded arrays."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from planning_collision.grid import GridMap
from planning_collision.sim.plots import HalfPlaneFrame, animate_halfplanes, plot_trajectories
from planning_collision.sim.scenario import parse_scenario

SCENARIO = parse_scenario({
    "obstacles": [{"id": "block", "polygon": [[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5],
                                              [-0.5, 0.5]]}],
    "robots": [
        {"name": "a", "start": [-3, 0, 0], "goal": [3, 0], "radius": 0.25, "max_speed": 0.6},
        {"name": "b", "start": [3, 1, 3.14], "goal": [-3, 1], "radius": 0.25,
         "max_speed": 0.6},
        {"name": "walker", "start": [0, -3, 1.57], "goal": [0, 3], "radius": 0.3,
         "max_speed": 0.4, "orca": False},
    ],
})


def trajectory(steps: int = 40) -> dict:
    t = np.linspace(0, 10, steps)
    s = t / 10
    x = np.column_stack([-3 + 6 * s, 3 - 6 * s, np.zeros_like(s)])
    y = np.column_stack([np.zeros_like(s) + np.sin(np.pi * s), np.ones_like(s),
                         -3 + 6 * s])
    return {"names": np.array(["a", "b", "walker"]), "times": t, "x": x, "y": y,
            "yaw": np.zeros_like(x), "radius": np.array([0.25, 0.25, 0.3]),
            "goal_x": np.array([3.0, -3.0, 0.0]), "goal_y": np.array([0.0, 1.0, 3.0]),
            "orca": np.array([True, True, False]), "drive": np.array(["holonomic"] * 3),
            "arrival_time": np.array([10.0, 10.0, 10.0]),
            "contact_time": np.array([4.0]), "contact_robot": np.array(["a"]),
            "contact_other": np.array(["b"])}


def test_trajectories_png(tmp_path):
    grid = GridMap(np.zeros((80, 100), np.int8), 0.1, origin=(-5.0, -4.0, 0.0))
    path = plot_trajectories(trajectory(), SCENARIO, grid, tmp_path / "t.png")
    with Image.open(path) as image:
        assert image.format == "PNG" and image.size[0] > 500
        pixels = np.asarray(image.convert("RGB"))
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 10  # paths were drawn


def test_half_plane_gif_has_one_frame_per_sampled_step(tmp_path):
    frames = [HalfPlaneFrame(sim_time=float(t), preferred=(0.6, 0.0),
                             velocity=(0.5, 0.1 * np.sin(t)),
                             line_points=np.array([[0.2 + 0.02 * t, 0.0]]),
                             line_directions=np.array([[0.0, 1.0]]), infeasible=t > 8)
              for t in np.linspace(0, 10, 30)]
    path = animate_halfplanes(frames, trajectory(), SCENARIO, None, "a", 0.6,
                              tmp_path / "a.gif", max_frames=12)
    with Image.open(path) as gif:
        assert gif.format == "GIF"
        assert gif.n_frames == 12
        gif.seek(0)
        first = np.asarray(gif.convert("RGB"))
        gif.seek(11)
        last = np.asarray(gif.convert("RGB"))
    assert not np.array_equal(first, last)


def test_the_gif_draws_what_orca_node_tracked(tmp_path):
    """Issue #25: each step's tracks (disc and 1 s of velocity, orange) are drawn in the world
    view; a step with none looks as it did before."""
    def frame(tracks):
        return HalfPlaneFrame(sim_time=1.0, preferred=(0.6, 0.0), velocity=(0.5, 0.0),
                              line_points=np.zeros((0, 2)), line_directions=np.zeros((0, 2)),
                              infeasible=False, tracks=np.asarray(tracks, float))

    def picture(name, tracks):
        path = animate_halfplanes([frame(tracks)], trajectory(), SCENARIO, None, "a", 0.6,
                                  tmp_path / name)
        with Image.open(path) as gif:
            return np.asarray(gif.convert("RGB")).astype(int)

    plain = picture("plain.gif", np.zeros((0, 5)))
    assert np.array_equal(plain, picture("empty.gif", []))
    tracked = picture("tracked.gif", [[0.0, 0.0, 1.0, 0.5, 0.4]])
    orange = np.array([255, 127, 14])  # matplotlib's tab:orange
    near = np.abs(tracked - orange).sum(axis=2) < 60
    assert near.sum() > 50 and np.abs(plain - orange).sum(axis=2).min() >= 60


def test_no_frames_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no ORCA frames"):
        animate_halfplanes([], trajectory(), SCENARIO, None, "a", 0.6, tmp_path / "x.gif")
