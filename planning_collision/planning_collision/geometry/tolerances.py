"""Numerical tolerances shared by the geometry kernels, in one place.

Every tolerance is *relative* to the size of the numbers involved, so results do not change
when a scene is scaled or moved (up to coordinates of about 1e6, the range the tests cover).

``EPS``
    Machine epsilon of float64 (about 2.2e-16).
``TOUCH_REL``
    Two shapes are reported as touching (distance 0, ``intersecting=True``, penetration depth
    0) when the computed gap between their cores is at most ``TOUCH_REL * s``, where ``s`` is
    the pair's scale (:func:`.gjk.pair_scale`): the largest absolute coordinate of the
    Minkowski difference ``A - B`` of the two point sets, ``max |a_i - b_j|`` over both axes,
    read off the two bounding boxes. It is the size of the pair's relative configuration
    (the shapes' sizes plus their separation), *not* their distance from the world origin,
    and it depends on the two shapes only, not on the contact feature or on the algorithm:
    GJK (every contact, vertex-vertex included), penetration and the separating-axis tests
    (:mod:`.sat`: an axis separates only if the gap along it exceeds ``TOUCH_REL * s``)
    all apply this one rule, so ``gjk_distance(...).intersecting``, ``sat_overlap`` and
    ``boxes_overlap_batch`` agree on touching shapes. At unit scale the tolerance is about
    3.6e-15, far below a deliberate gap of 1e-9; for a pair spanning 1e6 it is about 3.6e-9,
    which is the size of the rounding already present in coordinates of that magnitude.

    The tolerance applies to the stored float64 points. Input coordinates are taken as
    exact, so the rounding of coordinates far from the origin is not forgiven: two unit
    boxes meant to touch end to end at x = 1e6 have corners rounded to about 1e-10 (the
    spacing of floats there), so their stored corners genuinely overlap or are apart by
    about 1e-10, and every query reports that same answer.
``BOX_SLACK_REL``
    The box test (Apollo's 4-axis test on ``cx, cy, heading, length, width``) works on the
    box parameters, not on the corners. Its answer is final only when the largest separating
    excess over its axes is beyond ``BOX_SLACK_REL * R`` (``R`` = the largest absolute centre
    coordinate plus both boxes' half length and half width) on either side: this bounds the
    rounding of the corner coordinates (a few ``EPS * R``), of the test itself and the touch
    tolerance, with a safety factor of 2. Pairs closer to touching than that (rare: about
    3e-13 at unit scale, 3e-8 at 1e6) are decided by the exact edge test on the corners, so the
    box test gives the answer the corners give.
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
BOX_SLACK_REL = 128.0 * EPS
GJK_REL_GAP = 1e-13
CONVEX_SIN_TOL = 1e-12
MAX_COORD = 1e150
