"""load_map_file against hand-made PGM and PNG images: map_server's value interpretation
(trinary, scale, raw, negate, colour and alpha), the y flip, origin and resolution, and a clear
ValueError for every malformed file."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from planning_collision.grid.map_file import load_map_file
from planning_collision.resources import share_directory


def pgm(path, rows, maxval=255) -> None:
    """A binary PGM; ``rows`` top-down, as pixels appear in the picture."""
    rows = np.asarray(rows)
    header = f"P5\n{rows.shape[1]} {rows.shape[0]}\n{maxval}\n".encode()
    body = rows.astype(">u2" if maxval > 255 else np.uint8).tobytes()
    path.write_bytes(header + body)


def map_yaml(path, image="map.pgm", **keys) -> str:
    spec = {"image": image, "resolution": 0.1, "origin": "[1.5, -2.0, 0.0]",
            "occupied_thresh": 0.65, "free_thresh": 0.196, "negate": 0}
    spec.update(keys)
    path.write_text("".join(f"{k}: {v}\n" for k, v in spec.items() if v is not None))
    return str(path)


def test_trinary_thresholds_and_the_y_flip(tmp_path):
    # Top row: black, white, map_saver's unknown grey; bottom row: 100 (occ 0.608: unknown),
    # 50 (occ 0.804: occupied), 230 (occ 0.098: free).
    pgm(tmp_path / "map.pgm", [[0, 254, 205], [100, 50, 230]])
    m = load_map_file(map_yaml(tmp_path / "map.yaml"))
    assert m.data.dtype == np.int8 and m.data.flags.c_contiguous
    # Row 0 of the data is the bottom of the picture.
    assert m.data.tolist() == [[-1, 100, 0], [100, 0, -1]]
    assert m.resolution == 0.1 and m.origin == (1.5, -2.0, 0.0)
    assert m.image == tmp_path / "map.pgm"


def test_origin_and_resolution_place_the_cells(tmp_path):
    rows = np.full((4, 6), 254)
    rows[0, 5] = 0  # top-right pixel
    rows[3, 0] = 0  # bottom-left pixel
    pgm(tmp_path / "map.pgm", rows)
    grid = load_map_file(map_yaml(tmp_path / "map.yaml", resolution=0.25,
                                  origin="[-1.0, 2.0, 0.0]")).to_grid()
    assert grid.shape == (4, 6)
    # The bottom-left pixel is the cell at the origin, the top-right one the far corner.
    assert grid.world_to_cell([-0.9, 2.1]).tolist() == [0, 0]
    assert grid.is_blocked(grid.world_to_cell([[-0.9, 2.1], [0.4, 2.9], [0.1, 2.6]])).tolist() \
        == [True, True, False]
    assert grid.cell_to_world([5, 3]).tolist() == pytest.approx([0.375, 2.875])


def test_negate_swaps_black_and_white(tmp_path):
    pgm(tmp_path / "map.pgm", [[0, 254, 205, 40]])
    plain = load_map_file(map_yaml(tmp_path / "plain.yaml"))
    negated = load_map_file(map_yaml(tmp_path / "neg.yaml", negate=1))
    assert plain.data.tolist() == [[100, 0, -1, 100]]
    # negate: occupancy = shade: 0 -> free, 254 -> occupied, 205 (0.80) -> occupied,
    # 40 (0.157) -> free.
    assert negated.data.tolist() == [[0, 100, 100, 0]]
    negated_true = load_map_file(map_yaml(tmp_path / "neg2.yaml", negate="true"))
    assert np.array_equal(negated_true.data, negated.data)


def test_scale_mode_is_linear_between_the_thresholds(tmp_path):
    values = [0, 255, 200, 150, 105, 100]
    pgm(tmp_path / "map.pgm", [values])
    m = load_map_file(map_yaml(tmp_path / "map.yaml", mode="scale", free_thresh=0.2,
                               occupied_thresh=0.6))
    occ = 1.0 - np.array(values) / 255.0
    expected = [100, 0] + [int(np.rint((o - 0.2) / 0.4 * 100)) for o in occ[2:5]] + [100]
    assert m.data.tolist() == [expected]
    assert expected[2:5] == [4, 53, 97]  # and 100 (occupancy 0.608) is past the threshold


def test_scale_mode_makes_transparent_pixels_unknown(tmp_path):
    rgba = np.array([[[0, 0, 0, 255], [0, 0, 0, 254], [255, 255, 255, 0],
                      [128, 128, 128, 255]]], dtype=np.uint8)
    Image.fromarray(rgba, "RGBA").save(tmp_path / "map.png")
    m = load_map_file(map_yaml(tmp_path / "map.yaml", image="map.png", mode="scale"))
    occ = 1.0 - 128 / 255.0
    assert m.data.tolist() == [[100, -1, -1, int(np.rint((occ - 0.196) / (0.65 - 0.196) * 100))]]


def test_trinary_averages_colour_and_alpha_like_map_server(tmp_path):
    rgba = np.array([[[0, 0, 0, 255],  # mean (0 + 255) / 4 = 63.75: occ 0.75 -> occupied
                      [255, 255, 255, 255],  # white -> free
                      [255, 255, 255, 0],  # 191.25: occ 0.25 -> unknown
                      [255, 0, 0, 255]]],  # 127.5: occ 0.5 -> unknown
                    dtype=np.uint8)
    Image.fromarray(rgba, "RGBA").save(tmp_path / "map.png")
    m = load_map_file(map_yaml(tmp_path / "map.yaml", image="map.png"))
    assert m.data.tolist() == [[100, 0, -1, -1]]
    rgb = np.array([[[255, 0, 0], [255, 255, 0], [250, 250, 250]]], dtype=np.uint8)
    Image.fromarray(rgb, "RGB").save(tmp_path / "rgb.png")
    m = load_map_file(map_yaml(tmp_path / "rgb.yaml", image="rgb.png"))
    # Colour means 85 (occ 0.667: occupied), 170 (0.333: unknown), 250 (0.02: free).
    assert m.data.tolist() == [[100, -1, 0]]


def test_palette_and_bilevel_images(tmp_path):
    grey = np.array([[0, 254, 205]], dtype=np.uint8)
    Image.fromarray(grey, "L").convert("P").save(tmp_path / "p.png")
    Image.fromarray(np.array([[0, 255]], dtype=np.uint8), "L").convert("1").save(
        tmp_path / "bw.png")
    assert load_map_file(map_yaml(tmp_path / "p.yaml", image="p.png")).data.tolist() == \
        [[100, 0, -1]]
    assert load_map_file(map_yaml(tmp_path / "bw.yaml", image="bw.png")).data.tolist() == \
        [[100, 0]]


def test_raw_mode_keeps_values_up_to_100(tmp_path):
    pgm(tmp_path / "map.pgm", [[0, 37, 100, 101, 255]])
    m = load_map_file(map_yaml(tmp_path / "map.yaml", mode="raw"))
    assert m.data.tolist() == [[0, 37, 100, -1, -1]]
    negated = load_map_file(map_yaml(tmp_path / "neg.yaml", mode="raw", negate=1))
    assert np.array_equal(negated.data, m.data)  # raw ignores negate, as map_server does
    rgb = np.array([[[30, 60, 90], [100, 100, 101]]], dtype=np.uint8)
    Image.fromarray(rgb, "RGB").save(tmp_path / "rgb.png")
    m = load_map_file(map_yaml(tmp_path / "rgb.yaml", image="rgb.png", mode="raw"))
    assert m.data.tolist() == [[60, 100]]  # the mean of the channels, rounded


def test_sixteen_bit_images_scale_to_eight_bits(tmp_path):
    pgm(tmp_path / "map.pgm", [[0, 65535, 52685]], maxval=65535)  # 52685 / 257 = 205
    m = load_map_file(map_yaml(tmp_path / "map.yaml"))
    assert m.data.tolist() == [[100, 0, -1]]
    Image.fromarray(np.array([[0, 65535, 25700]], dtype=np.uint16)).save(tmp_path / "m16.png")
    raw = load_map_file(map_yaml(tmp_path / "m16.yaml", image="m16.png", mode="raw"))
    assert raw.data.tolist() == [[0, -1, 100]]  # 25700 / 257 = 100


def test_absolute_image_path(tmp_path):
    (tmp_path / "images").mkdir()
    pgm(tmp_path / "images" / "map.pgm", [[0, 254]])
    (tmp_path / "yamls").mkdir()
    m = load_map_file(map_yaml(tmp_path / "yamls" / "map.yaml",
                               image=str(tmp_path / "images" / "map.pgm")))
    assert m.data.tolist() == [[100, 0]]


BAD_FILES = [
    ({"image": None}, "no 'image' key"),
    ({"resolution": None}, "no 'resolution' key"),
    ({"origin": None}, "no 'origin' key"),
    ({"resolution": 0}, "resolution must be finite and > 0, got 0.0"),
    ({"resolution": "fine"}, "resolution must be a number"),
    ({"resolution": ".nan"}, "resolution must be finite and > 0, got nan"),
    ({"origin": "[1.0, 2.0]"}, "origin must be [x, y, yaw]"),
    ({"origin": "[1.0, a, 0.0]"}, "origin must be a number, got 'a'"),
    ({"mode": "fancy"}, "mode must be one of"),
    ({"negate": "maybe"}, "negate must be 0 or 1"),
    ({"negate": 0.5}, "negate must be 0 or 1"),
    ({"free_thresh": 0.7}, "need 0 <= free_thresh < occupied_thresh <= 1"),
    ({"occupied_thresh": 1.5}, "need 0 <= free_thresh < occupied_thresh <= 1"),
    ({"image": "missing.pgm"}, "cannot read map image"),
    ({"image": "not_an_image.pgm"}, "cannot read map image"),
    ({"image": "[a, b]"}, "image must be a file name"),
]


@pytest.mark.parametrize("keys,message", BAD_FILES, ids=[m for _, m in BAD_FILES])
def test_malformed_map_files_raise_value_error(tmp_path, keys, message):
    pgm(tmp_path / "map.pgm", [[0, 254]])
    (tmp_path / "not_an_image.pgm").write_text("hello")
    path = map_yaml(tmp_path / "map.yaml", **keys)
    with pytest.raises(ValueError) as info:
        load_map_file(path)
    assert message in str(info.value)


def test_unreadable_yaml(tmp_path):
    with pytest.raises(ValueError, match="cannot read map file"):
        load_map_file(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("image: [\n")
    with pytest.raises(ValueError, match="is not valid YAML"):
        load_map_file(tmp_path / "bad.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(ValueError, match="must hold a mapping"):
        load_map_file(tmp_path / "list.yaml")


def test_the_shipped_demo_map(tmp_path):
    m = load_map_file(share_directory() / "config" / "maps" / "swap_room.yaml")
    grid = m.to_grid()
    assert grid.shape == (260, 340) and m.origin == (-8.5, -6.5, 0.0)
    probe = np.array([[0.0, 0.0], [-8.1, 0.0], [8.1, 5.0], [0.0, 6.1], [-8.4, -6.4],
                      [6.2, -4.9], [6.2, -4.0]])
    cells = grid.world_to_cell(probe)
    values = m.data[cells[:, 1], cells[:, 0]].tolist()
    # Free centre, walls on every side, unknown outside, the U wall's bottom bar and its
    # free inside.
    assert values == [0, 100, 100, 100, -1, 100, 0]
