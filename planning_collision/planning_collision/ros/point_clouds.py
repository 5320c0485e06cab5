"""sensor_msgs/PointCloud2 to and from numpy: the x, y, z FLOAT32 fields that collision_server's
and orca_node's cloud sources read and fleet_sim's depth cameras write.

:func:`cloud_points` reads the x, y, z of any layout (any point step and field offsets, padded
rows, either byte order; other fields are skipped); :func:`xyz_cloud` packs an organised
cloud (rows x columns, NaN where a ray returned nothing, so ``is_dense`` is false).
"""

from __future__ import annotations

import numpy as np
from sensor_msgs.msg import PointCloud2, PointField

_FLOAT32 = PointField.FLOAT32
_XYZ = [PointField(name=name, offset=4 * k, datatype=_FLOAT32, count=1)
        for k, name in enumerate("xyz")]


def cloud_points(msg: PointCloud2) -> np.ndarray:
    """The (N, 3) float64 x, y, z of a PointCloud2 whose x, y and z are FLOAT32 fields;
    ValueError naming what is missing."""
    fields = {f.name: f for f in msg.fields}
    for name in ("x", "y", "z"):
        if name not in fields or fields[name].datatype != _FLOAT32 or fields[name].count != 1:
            raise ValueError(f"point cloud has no FLOAT32 field '{name}'")
    n = msg.width * msg.height
    if n == 0:
        return np.zeros((0, 3))
    step = msg.point_step
    need = (msg.row_step * (msg.height - 1) + msg.width * step if msg.height > 1
            else n * step)
    if step < 12 or len(msg.data) < need:
        raise ValueError(f"point cloud data holds {len(msg.data)} bytes, less than its "
                         f"{msg.width} x {msg.height} points of {step} bytes need")
    dtype = np.dtype({"names": ["x", "y", "z"],
                      "formats": [(">" if msg.is_bigendian else "<") + "f4"] * 3,
                      "offsets": [fields[c].offset for c in "xyz"], "itemsize": step})
    raw = np.frombuffer(msg.data, dtype=np.uint8)
    if msg.height > 1:
        rows = raw[:msg.height * msg.row_step].reshape(msg.height, msg.row_step)
        raw = np.ascontiguousarray(rows[:, :msg.width * step]).reshape(-1)
    points = raw[:n * step].view(dtype)
    return np.column_stack([points["x"], points["y"], points["z"]]).astype(np.float64)


def xyz_cloud(points: np.ndarray, frame_id: str, stamp=None) -> PointCloud2:
    """An organised PointCloud2 of ``points`` (rows, columns, 3) (or (N, 3): one row) with x, y,
    z FLOAT32 fields, little-endian, in ``frame_id``."""
    xyz = np.asarray(points, dtype="<f4")
    if xyz.ndim == 2:
        xyz = xyz[None]
    if xyz.ndim != 3 or xyz.shape[2] != 3:
        raise ValueError(f"points must be (rows, columns, 3) or (N, 3), got {xyz.shape}")
    rows, columns = xyz.shape[:2]
    msg = PointCloud2(height=rows, width=columns, fields=list(_XYZ), is_bigendian=False,
                      point_step=12, row_step=12 * columns,
                      is_dense=bool(np.isfinite(xyz).all()))
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    msg.data = np.ascontiguousarray(xyz).tobytes()
    return msg
