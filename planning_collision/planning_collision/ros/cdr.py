"""Reading and writing the few fixed-layout messages orca_node handles at high rate as CDR bytes.

With 200 robots, orca_node receives thousands of nav_msgs/Odometry per second and publishes
as many velocity commands. Building a Python message object for each costs more than the
whole ORCA step (Odometry alone carries two 36-element covariance arrays), so the node can
subscribe with ``raw=True`` and publish ``bytes``: this module decodes the numbers it needs
straight from the serialized bytes and encodes geometry_msgs/Twist and TwistStamped.

The format is classic CDR (XCDR1, what rmw_fastrtps_cpp and rmw_cyclonedds_cpp put on the
wire): a 4-byte encapsulation header (``00 01`` little endian, ``00 00`` big endian, two
option bytes), then the fields in order, each aligned to its own size counted from the end of
the header; a string is a uint32 length (with the terminating NUL), its bytes and the NUL.
:func:`self_check` compares this module with the running RMW's own serializer, per message
type; the node handles a type as bytes only when its check passes. Bytes in any other
encapsulation are handed to rclpy's deserializer, so nothing that arrives is misread.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Twist, TwistStamped, Vector3
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from visualization_msgs.msg import Marker, MarkerArray

from .markers import MarkerData, marker_from_data

HEADER_LE = b"\x00\x01\x00\x00"
_FORMATS = {1: "<", 0: ">"}  # second encapsulation byte: CDR little / big endian
_U32 = {e: struct.Struct(e + "I") for e in "<>"}
_ODOM_POSE = {e: struct.Struct(e + "7d") for e in "<>"}
_SIX = {e: struct.Struct(e + "6d") for e in "<>"}
_STAMP = {e: struct.Struct(e + "iI") for e in "<>"}
_STAMP_LE = _STAMP["<"]
_SIX_LE = _SIX["<"]
_POSE_COVARIANCE = 36 * 8

# Odometry numbers as orca_node uses them: position x, y; orientation x, y, z, w; body-frame
# linear x, y and angular z velocity.
OdometryNumbers = tuple[float, float, float, float, float, float, float, float, float]


class DecodeError(ValueError):
    """Bytes that are not the expected message."""


def _string_end(data: bytes, offset: int, endian: str) -> tuple[int, int]:
    """(start, end) of the string whose length field is at payload ``offset``; end is the
    payload offset just after it."""
    (length,) = _U32[endian].unpack_from(data, 4 + offset)
    end = offset + 4 + length
    if length == 0 or 4 + end > len(data):
        raise DecodeError("string runs past the end of the message")
    return offset + 4, end


def _endian(data: bytes) -> str | None:
    if len(data) < 4 or data[0] != 0:
        return None
    return _FORMATS.get(data[1])


def decode_odometry(data: bytes) -> tuple[OdometryNumbers, bytes, float]:
    """The numbers of a serialized nav_msgs/Odometry, its child_frame_id (bytes) and its
    header stamp (seconds)."""
    endian = _endian(data)
    if endian is None:
        return odometry_numbers(_deserialize(data, Odometry))
    try:
        sec, nanosec = _STAMP[endian].unpack_from(data, 4)
        _, end = _string_end(data, 8, endian)  # header: stamp (8 bytes), frame_id
        end = (end + 3) & ~3
        start, end = _string_end(data, end, endian)  # child_frame_id
        child = data[4 + start:4 + end - 1]
        end = (end + 7) & ~7
        x, y, _, qx, qy, qz, qw = _ODOM_POSE[endian].unpack_from(data, 4 + end)
        end += 56 + _POSE_COVARIANCE
        vx, vy, _, _, _, wz = _SIX[endian].unpack_from(data, 4 + end)
    except struct.error as exc:
        raise DecodeError(f"truncated Odometry: {exc}") from None
    return (x, y, qx, qy, qz, qw, vx, vy, wz), child, sec + 1e-9 * nanosec


def odometry_numbers(msg: Odometry) -> tuple[OdometryNumbers, bytes, float]:
    """What :func:`decode_odometry` returns, from a message object."""
    p = msg.pose.pose
    q = p.orientation
    t = msg.twist.twist
    stamp = msg.header.stamp
    return ((p.position.x, p.position.y, q.x, q.y, q.z, q.w, t.linear.x, t.linear.y,
             t.angular.z), msg.child_frame_id.encode(), stamp.sec + 1e-9 * stamp.nanosec)


def decode_twist(data: bytes, stamped: bool) -> tuple[float, float, float]:
    """(linear x, linear y, angular z) of a serialized Twist or TwistStamped."""
    endian = _endian(data)
    if endian is None:
        return twist_numbers(_deserialize(data, TwistStamped if stamped else Twist))
    try:
        offset = 0
        if stamped:
            _, offset = _string_end(data, 8, endian)
            offset = (offset + 7) & ~7
        vx, vy, _, _, _, wz = _SIX[endian].unpack_from(data, 4 + offset)
    except struct.error as exc:
        raise DecodeError(f"truncated Twist: {exc}") from None
    return vx, vy, wz


def twist_numbers(msg) -> tuple[float, float, float]:
    """What :func:`decode_twist` returns, from a Twist or TwistStamped object."""
    twist = msg.twist if isinstance(msg, TwistStamped) else msg
    return twist.linear.x, twist.linear.y, twist.angular.z


def _deserialize(data: bytes, msg_type):
    try:
        return deserialize_message(data, msg_type)
    except Exception as exc:  # the RMW's own error, whatever its type
        raise DecodeError(f"cannot deserialize {msg_type.__name__}: {exc}") from None


def frame_suffix(frame_id: str) -> bytes:
    """The part of a serialized TwistStamped between the stamp and the twist (frame_id and
    padding), little endian: computed once per robot."""
    text = frame_id.encode() + b"\x00"
    out = struct.pack("<I", len(text)) + text
    end = 8 + len(out)
    return out + b"\x00" * (-end % 8)


def encode_twist(vx: float, vy: float, wz: float) -> bytes:
    """A serialized geometry_msgs/Twist (little endian)."""
    return HEADER_LE + _SIX_LE.pack(vx, vy, 0.0, 0.0, 0.0, wz)


def encode_twist_stamped(sec: int, nanosec: int, suffix: bytes, vx: float, vy: float,
                         wz: float) -> bytes:
    """A serialized geometry_msgs/TwistStamped; ``suffix`` from :func:`frame_suffix`."""
    return b"".join((HEADER_LE, _STAMP_LE.pack(sec, nanosec), suffix,
                     _SIX_LE.pack(vx, vy, 0.0, 0.0, 0.0, wz)))


class Writer:
    """Builds a CDR payload (little endian) from runs of fields.

    :meth:`pack` takes struct codes (``i``, ``I``, ``B``, ``3d``, ``4f``, ``5s`` for 5 raw
    bytes ...) and inserts the alignment padding each field needs at the current offset; the
    resulting formats are cached by (offset mod 8, fields), so a message of many similar
    records costs one ``struct.pack`` per run of fields.
    """

    _formats: dict[tuple[int, tuple[str, ...]], struct.Struct] = {}

    def __init__(self):
        self.parts: list[bytes] = [HEADER_LE]
        self.offset = 0  # from the end of the encapsulation header

    def pack(self, fields: tuple[str, ...], *values) -> None:
        key = (self.offset % 8, fields)
        packer = self._formats.get(key)
        if packer is None:
            packer = self._formats[key] = _layout(self.offset % 8, fields)
        self.parts.append(packer.pack(*values))
        self.offset += packer.size

    def raw(self, data: bytes, align: int = 1) -> None:
        pad = -self.offset % align
        if pad:
            self.parts.append(bytes(pad))
        self.parts.append(data)
        self.offset += pad + len(data)

    def bytes(self) -> bytes:
        return b"".join(self.parts)


def _layout(start: int, fields: tuple[str, ...]) -> struct.Struct:
    fmt, offset = "<", start
    for field in fields:
        size = struct.calcsize("<" + field)
        align = 1 if field.endswith(("s", "B")) else struct.calcsize("<" + field[-1])
        pad = -offset % align
        fmt += "x" * pad + field
        offset += pad + size
    return struct.Struct(fmt)


def _string(text: str) -> tuple[str, bytes]:
    """The struct code and value of a string's characters with their NUL."""
    data = text.encode() + b"\x00"
    return f"{len(data)}s", data


def _marker_tail() -> bytes:
    """What follows a Marker's points when only the points are used: empty colors,
    texture_resource, texture, uv_coordinates, text, mesh_resource, mesh_file, and
    mesh_use_embedded_materials false. It starts 4-aligned and holds nothing wider than 4
    bytes, so its bytes never change."""
    w = Writer()
    empty = _string("")
    w.pack(("I", "I", empty[0], "i", "I", "I", empty[0], "I", empty[0], "I", "I",
            "I", empty[0], "I", empty[0], "I", empty[0], "I", "B"),
           0, 1, empty[1], 0, 0, 1, empty[1], 1, empty[1], 0, 0,
           1, empty[1], 1, empty[1], 1, empty[1], 0, 0)
    return w.bytes()[len(HEADER_LE):]


_MARKER_TAIL = _marker_tail()


def encode_marker_array(frame_id: str, sec: int, nanosec: int, markers) -> bytes:
    """A serialized visualization_msgs/MarkerArray of :class:`.markers.MarkerData`, every
    marker stamped ``sec``/``nanosec`` in ``frame_id``."""
    frame_code, frame = _string(frame_id)
    w = Writer()
    w.pack(("I",), len(markers))
    for m in markers:
        ns_code, ns = _string(m.ns)
        whole = int(m.lifetime)
        points = m.points if m.points is not None else _NO_ROWS
        w.pack(("i", "I", "I", frame_code, "I", ns_code, "i", "i", "i", "7d", "3d", "4f", "i",
                "I", "B", "I"),
               sec, nanosec, len(frame), frame, len(ns), ns, m.id, m.type, m.action, *m.pose,
               *m.scale, *m.color, whole, int(round((m.lifetime - whole) * 1e9)), 0,
               points.shape[0])
        if points.shape[0]:
            w.raw(np.ascontiguousarray(points, dtype="<f8").tobytes(), 8)
        w.raw(_MARKER_TAIL, 4)
    return w.bytes()


_NO_ROWS = np.zeros((0, 3))

# One OrcaAgentStatus up to its half-planes: name, active, inactive_reason, odometry_age,
# localization_age, localization_stale, agent_neighbors, obstacle_neighbors, infeasible,
# distance_to_goal, preferred_velocity, velocity ({0}/{1}: the two strings' struct codes).
_AGENT_STATUS = ("I", "{0}", "B", "I", "{1}", "d", "d", "B", "I", "I", "B", "d", "3d", "3d")


def orca_status_agents(rows) -> bytes:
    """The ``agents`` sequence of a serialized planning_collision_interfaces/OrcaStatus, for
    :func:`encode_orca_status`. Each row: (name, active, inactive_reason, odometry_age,
    localization_age, localization_stale, agent_neighbors, obstacle_neighbors, infeasible,
    distance_to_goal, (vx, vy) preferred, (vx, vy) chosen, half-planes), where half-planes is
    None or (points (n, 2), directions (n, 2))."""
    rows = list(rows)
    w = Writer()
    w.pack(("I",), len(rows))
    for (name, active, reason, odometry_age, localization_age, stale, agent_neighbors,
         obstacle_neighbors, infeasible, distance, preferred, chosen, lines) in rows:
        name_code, name_bytes = _string(name)
        reason_code, reason_bytes = _string(reason)
        fields = tuple(f.format(name_code, reason_code) for f in _AGENT_STATUS)
        w.pack(fields, len(name_bytes), name_bytes, active, len(reason_bytes), reason_bytes,
               odometry_age, localization_age, stale, agent_neighbors, obstacle_neighbors,
               infeasible, distance, preferred[0], preferred[1], 0.0, chosen[0], chosen[1],
               0.0)
        for xy in (_NO_ROWS, _NO_ROWS) if lines is None else lines:
            w.pack(("I",), len(xy))
            if len(xy):
                xyz = np.zeros((len(xy), 3), dtype="<f8")
                xyz[:, :2] = xy
                w.raw(xyz.tobytes(), 8)
    return w.bytes()[len(HEADER_LE):]


def encode_orca_status(frame_id: str, sec: int, nanosec: int, compute_time: float,
                       achieved_rate: float, agents: bytes) -> bytes:
    """A serialized OrcaStatus; ``agents`` from :func:`orca_status_agents` (the header ends
    8-aligned after the two float64 fields, where the sequence was encoded to start)."""
    frame_code, frame = _string(frame_id)
    w = Writer()
    w.pack(("i", "I", "I", frame_code, "d", "d"), sec, nanosec, len(frame), frame,
           compute_time, achieved_rate)
    w.raw(agents)
    return w.bytes()


class Support(NamedTuple):
    """What :func:`self_check` found, per message type: '' when this module and the RMW's
    serializer agree on it (then orca_node handles it as bytes), else what differs. One
    type's difference (a Marker layout that changed, as it did before Jazzy) leaves the
    others in use."""

    odometry: str
    twist: str
    markers: str
    status: str


def self_check() -> Support:
    """Check each encoder and decoder against the RMW's own serializer: the RMW must read
    what this module writes (compared as messages: padding bytes are unspecified), and this
    module must read what the RMW writes."""
    return Support(_checked(_odometry_agrees), _checked(_twist_agrees),
                   _checked(_markers_agree), _checked(_status_agrees))


def _checked(check) -> str:
    try:
        return check()
    except Exception as exc:  # any surprise means: do not use this type as bytes
        return f"{type(exc).__name__}: {exc}"


def _twist_agrees() -> str:
    twist = Twist()
    twist.linear.x, twist.linear.y, twist.angular.z = 0.25, -1.5, 0.75
    if deserialize_message(encode_twist(0.25, -1.5, 0.75), Twist) != twist:
        return "Twist encodes differently"
    if decode_twist(serialize_message(twist), False) != (0.25, -1.5, 0.75):
        return "Twist decodes differently"
    for frame in ("", "a", "robot12/base_link", "abcdefg", "robot_\u00e9/base"):
        stamped = TwistStamped()
        stamped.header.stamp.sec, stamped.header.stamp.nanosec = 1234, 5678
        stamped.header.frame_id = frame
        stamped.twist = twist
        mine = encode_twist_stamped(1234, 5678, frame_suffix(frame), 0.25, -1.5, 0.75)
        if deserialize_message(mine, TwistStamped) != stamped:
            return f"TwistStamped with frame_id {frame!r} encodes differently"
        if decode_twist(serialize_message(stamped), True) != (0.25, -1.5, 0.75):
            return "TwistStamped decodes differently"
    return ""


def sample_odometry(frame: str = "odom", child: str = "robot1/base_link") -> Odometry:
    """An Odometry with every field the decoder reads (and some it skips) set apart."""
    odom = Odometry()
    odom.header.frame_id, odom.child_frame_id = frame, child
    odom.header.stamp.sec, odom.header.stamp.nanosec = 1_700_000_000, 123_456_789
    p = odom.pose.pose
    p.position.x, p.position.y, p.position.z = 1.5, -2.25, 9.0
    p.orientation.x, p.orientation.y = 0.125, -0.25
    p.orientation.z, p.orientation.w = 0.5, 0.75
    odom.pose.covariance[0] = 77.0
    t = odom.twist.twist
    t.linear.x, t.linear.y, t.linear.z = 0.5, -0.375, 8.0
    t.angular.x, t.angular.z = 6.0, 1.25
    return odom


def _odometry_agrees() -> str:
    for frame, child in (("", ""), ("odom", "robot1/base_link"), ("r1/odom", "b"),
                         ("carte", "robot_\u00e9/base")):
        odom = sample_odometry(frame, child)
        if decode_odometry(serialize_message(odom)) != odometry_numbers(odom):
            return f"Odometry with frames {frame!r}, {child!r} decodes differently"
    return ""


def _markers_agree() -> str:
    sample = [
        MarkerData("robot1", 0, Marker.CYLINDER, pose=(1.5, -2.0, 0.025, 0.0, 0.0, 0.0, 1.0),
                   scale=(0.5, 0.5, 0.05), color=(0.1, 0.8, 0.2, 0.9), lifetime=1.25),
        MarkerData("r", 3, Marker.LINE_LIST, scale=(0.02, 0.02, 0.02), lifetime=0.5,
                   points=np.array([[1.0, 2.0, 0.1], [3.0, -4.0, 0.1]])),
        MarkerData("robot12", 2, Marker.ARROW, action=Marker.DELETE),
        MarkerData("abc", -7, Marker.TRIANGLE_LIST, points=np.zeros((0, 3))),
    ]
    for frame in ("map", "", "odom1"):
        stamp = Time(sec=12, nanosec=345)
        mine = deserialize_message(encode_marker_array(frame, 12, 345, sample), MarkerArray)
        reference = MarkerArray(markers=[marker_from_data(frame, stamp, m) for m in sample])
        # Compared after the RMW's own round trip: colours are float32 on the wire.
        if mine != deserialize_message(serialize_message(reference), MarkerArray):
            return f"MarkerArray in frame {frame!r} encodes differently"
    return ""


def _status_agrees() -> str:
    # Imported here: the interfaces package is only needed by the node that publishes it.
    from planning_collision_interfaces.msg import OrcaAgentStatus, OrcaStatus

    lines = (np.array([[0.5, -1.0], [2.0, 3.25]]), np.array([[0.0, 1.0], [-0.6, 0.8]]))
    rows = [("robot1", True, "", 0.125, 0.0, False, 3, 7, False, 4.5, (0.25, -0.5),
             (0.125, 0.375), None),
            ("r", False, "odometry stale (0.73 s old)", float("inf"), 1.5, True, 0, 0, True,
             float("nan"), (0.0, 0.0), (0.0, 0.0), lines),
            ("robot_\u00e9", True, "x", 0.5, 0.25, False, 1, 0, False, 0.0, (1.0, 2.0),
             (-1.0, -2.0), (lines[0][:1], lines[1][:1]))]
    for frame in ("map", "", "odom12"):
        reference = OrcaStatus(compute_time=0.0125, achieved_rate=19.5)
        reference.header.frame_id = frame
        reference.header.stamp.sec, reference.header.stamp.nanosec = 42, 987
        for row in rows:
            st = OrcaAgentStatus(name=row[0], active=row[1], inactive_reason=row[2],
                                 odometry_age=row[3], localization_age=row[4],
                                 localization_stale=row[5], agent_neighbors=row[6],
                                 obstacle_neighbors=row[7], infeasible=row[8],
                                 distance_to_goal=row[9])
            st.preferred_velocity.x, st.preferred_velocity.y = row[10]
            st.velocity.x, st.velocity.y = row[11]
            if row[12] is not None:
                st.orca_line_points = [Point(x=x, y=y) for x, y in row[12][0].tolist()]
                st.orca_line_directions = [Vector3(x=x, y=y) for x, y in row[12][1].tolist()]
            reference.agents.append(st)
        mine = deserialize_message(
            encode_orca_status(frame, 42, 987, 0.0125, 19.5, orca_status_agents(rows)),
            OrcaStatus)
        # NaN is unequal to itself: compare the bytes each message serializes to.
        if serialize_message(mine) != serialize_message(reference):
            return f"OrcaStatus in frame {frame!r} encodes differently"
    return ""
