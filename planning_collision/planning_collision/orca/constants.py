"""Numerical constants shared by the ORCA kernels.

numba freezes module constants into the compiled (and cached) kernels, and its cache is keyed
on the source file of each kernel: after changing a value here, clear the ``__pycache__``
of this package (or touch the modules that use it).
"""

#: Tolerance of RVO2 (``RVO_EPSILON``) for parallel lines and collinear obstacle vertices.
EPSILON = 1e-5

#: Marker for "no node / no obstacle" in the integer arrays of the obstacle tree.
NONE = -1

#: Speed (m/s) by which a separation half-plane is widened so that touching agents keep the
#: zero velocity strictly feasible (see ``orca_lines.separation_line``).
SEPARATION_SLACK = 1e-9

#: Default ``keep_apart_margin``: with ``keep_apart`` the agent half-planes are computed for
#: radii enlarged by this fraction (see ``velocities``).  A Python-level default (passed to
#: the kernels as an argument), so changing it needs no cache clearing.
DEFAULT_KEEP_APART_MARGIN = 0.05

#: Relative tolerance of the speed limit: every velocity ``compute_velocities`` returns has
#: ``|v| <= max_speed * (1 + SPEED_TOLERANCE)`` (float64 rounding of points on the disc's
#: boundary; a last check in ``velocities`` enforces it and reports when it had to act).
#: Also the slack by which the linear programs may violate an almost parallel half-plane
#: (``SPEED_TOLERANCE * max_speed``; rounding noise of the current result is ~1e-16).
SPEED_TOLERANCE = 1e-12

#: A half-plane whose point lies farther than this many disc radii (max speeds) from the
#: origin is solved in its Hesse form (see ``linear_program.solve_on_line``): RVO2's
#: formula, parametrised from that point, would lose the disc's scale to cancellation.
FAR_LINE = 1e3
