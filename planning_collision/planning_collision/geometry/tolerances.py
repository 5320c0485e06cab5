"""Numerical tolerances shared by the geometry kernels, in one place.

Every tolerance is *relative* to the size of the numbers involved, so results do not change
when a scene is scaled or moved (up to coordinates of about 1e6, the range the tests cover).

``EPS``
    Machine epsilon of float64 (about 2.2e-16).
``TOUCH_REL``
    Two shapes are reported as touching (distance 0, ``intersecting=True``) when the computed
    gap is at most ``TOUCH_REL * s``, where ``s`` is the largest absolute coordinate of the
    Minkowski-difference points GJK ended on (roughly the size of the pair's relative
    configuration, *not* its distance from the world origin). At unit scale this is about
    3.6e-15, far below a deliberate gap of 1e-9; at scale 1e6 it is about 3.6e-9, which is the
    size of the rounding already present in input coordinates of that magnitude.
``GJK_REL_GAP``
    GJK stops when the lower and upper bounds on the distance agree to this relative
    precision: the reported core distance is then within ``GJK_REL_GAP * distance`` of the
    exact one (on polygons the loop almost always ends earlier, when the support point repeats).
``MAX_COORD``
    Largest accepted coordinate magnitude (1e150): squared distances of larger values
    would overflow float64, so inputs beyond it raise ``ValueError`` instead of returning
    an infinite or NaN distance. The accuracy tests cover coordinates up to 1e6.
``CONVEX_SIN_TOL``
    :meth:`ConvexShape.polygon` treats a vertex whose turn has ``|sin(angle)|`` at most this as
    collinear (it is dropped), so a convex polygon that went through a rotation and carries
    rounding noise is still accepted. A real reflex vertex raises ``ValueError``.
"""

import numpy as np

EPS = float(np.finfo(np.float64).eps)
TOUCH_REL = 16.0 * EPS
GJK_REL_GAP = 1e-13
CONVEX_SIN_TOL = 1e-12
MAX_COORD = 1e150
