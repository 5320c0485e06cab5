"""The shared segment predicates against shapely, including touching and collinear cases."""

from __future__ import annotations

import numpy as np
import pytest

from planning_collision.common.predicates import orient, segments_meet

shapely = pytest.importorskip("shapely")


def test_segments_meet_is_shapelys_intersects_and_symmetric():
    rng = np.random.default_rng(11)
    # small integer coordinates: many touching, collinear and overlapping pairs, all exact
    pts = rng.integers(-3, 4, (4000, 4, 2)).astype(np.float64)
    met = 0
    for a, b, c, d in pts:
        if (a == b).all() or (c == d).all():  # shapely has no zero-length line
            continue
        want = shapely.LineString([a, b]).intersects(shapely.LineString([c, d]))
        got = segments_meet(*a, *b, *c, *d)
        assert got == want, (a, b, c, d)
        assert segments_meet(*c, *d, *a, *b) == got
        assert segments_meet(*b, *a, *d, *c) == got
        met += got
    assert 1000 < met < 3000  # both answers well represented (of about 3,800 pairs)


def test_orient_signs_and_no_underflow():
    assert orient(0.0, 0.0, 1.0, 0.0, 0.5, 1.0) > 0 > orient(0.0, 0.0, 1.0, 0.0, 0.5, -1.0)
    assert orient(0.0, 0.0, 1.0, 1.0, 2.0, 2.0) == 0.0
    # tiny orientations whose product underflows still decide a proper crossing
    s = 1e-160
    assert segments_meet(-s, 0.0, s, 0.0, 0.0, -s, 0.0, s)
    assert not segments_meet(-s, 0.0, s, 0.0, 2 * s, -s, 2 * s, s)
