"""cdr: orca_node's own encoders and decoders of serialized messages, against rclpy's
serializer (the RMW's): every field, every truncation, both byte orders, empty and non-ASCII
frame ids, encapsulations it must hand over, and a self-check that is per message type."""

from __future__ import annotations

import struct

import pytest
from geometry_msgs.msg import Twist, TwistStamped
from rclpy.serialization import deserialize_message, serialize_message

from planning_collision.ros import cdr
from planning_collision.ros.message_codecs import choose_codecs

FRAMES = ["", "a", "odom", "robot12/base_link", "robot_é/base", "ロボット/odom"]


def hand_serialized(odom, header: bytes = b"\x00\x00\x00\x00", endian: str = ">",
                    max_align: int = 8) -> bytes:
    """An Odometry serialized by hand: big endian XCDR1 by default (encapsulation 00 00);
    XCDR2 aligns nothing beyond 4 bytes."""
    out = bytearray(header)

    def align(n):
        out.extend(bytes(-(len(out) - 4) % min(n, max_align)))

    def string(text):
        data = text.encode() + b"\x00"
        align(4)
        out.extend(struct.pack(endian + "I", len(data)) + data)

    out.extend(struct.pack(endian + "iI", odom.header.stamp.sec, odom.header.stamp.nanosec))
    string(odom.header.frame_id)
    string(odom.child_frame_id)
    align(8)
    p, q = odom.pose.pose.position, odom.pose.pose.orientation
    out.extend(struct.pack(endian + "7d", p.x, p.y, p.z, q.x, q.y, q.z, q.w))
    out.extend(struct.pack(endian + "36d", *odom.pose.covariance))
    t = odom.twist.twist
    out.extend(struct.pack(endian + "6d", t.linear.x, t.linear.y, t.linear.z, t.angular.x,
                           t.angular.y, t.angular.z))
    out.extend(struct.pack(endian + "36d", *odom.twist.covariance))
    return bytes(out)


def test_every_message_type_agrees_with_the_rmw():
    assert cdr.self_check() == cdr.Support("", "", "", "")


@pytest.mark.parametrize("frame", FRAMES)
def test_odometry_decodes_as_the_rmw_serializes_it_in_both_byte_orders(frame):
    odom = cdr.sample_odometry(frame, frame[::-1])
    expected = cdr.odometry_numbers(odom)
    assert cdr.decode_odometry(serialize_message(odom)) == expected
    big = hand_serialized(odom)
    assert deserialize_message(big, type(odom)) == odom  # the hand-written bytes are right
    assert cdr.decode_odometry(big) == expected
    numbers, child, stamp = expected
    assert child == frame[::-1].encode() and stamp == pytest.approx(1_700_000_000.123456789)


@pytest.mark.parametrize("frame", FRAMES)
def test_twists_encode_and_decode_as_the_rmw_does(frame):
    stamped = TwistStamped()
    stamped.header.stamp.sec, stamped.header.stamp.nanosec = 7, 9
    stamped.header.frame_id = frame
    stamped.twist.linear.x, stamped.twist.linear.y, stamped.twist.angular.z = 0.5, -0.25, 2.0
    mine = cdr.encode_twist_stamped(7, 9, cdr.frame_suffix(frame), 0.5, -0.25, 2.0)
    assert deserialize_message(mine, TwistStamped) == stamped
    assert cdr.decode_twist(serialize_message(stamped), True) == (0.5, -0.25, 2.0)
    assert cdr.decode_twist(cdr.encode_twist(0.5, -0.25, 2.0), False) == (0.5, -0.25, 2.0)


def test_every_truncation_is_a_decode_error():
    """Cut anywhere, a message is refused as DecodeError (never another exception, never
    numbers read from what is not there)."""
    odometry = serialize_message(cdr.sample_odometry("odom", "robot1/base_link"))
    stamped = serialize_message(TwistStamped())
    plain = serialize_message(Twist())
    for data, decode in ((odometry, cdr.decode_odometry),
                         (stamped, lambda d: cdr.decode_twist(d, True)),
                         (plain, lambda d: cdr.decode_twist(d, False))):
        # The last bytes of a message may be padding or covariance that is never read.
        needed = len(data) - (36 * 8 if decode is cdr.decode_odometry else 0)
        for length in range(needed):
            with pytest.raises(cdr.DecodeError):
                decode(data[:length])


def test_other_encapsulations_are_handed_to_rclpy():
    """Bytes in an encapsulation this module does not read (XCDR2 aligns doubles to 4, not
    8) go to rclpy's deserializer, which reads them right; what nobody reads is refused."""
    odom = cdr.sample_odometry("odom", "abc")  # a child frame that leaves doubles unaligned
    xcdr2 = hand_serialized(odom, b"\x00\x07\x00\x00", "<", max_align=4)
    assert len(xcdr2) != len(serialize_message(odom))  # the layouts differ indeed
    assert cdr.decode_odometry(xcdr2) == cdr.odometry_numbers(odom)
    with pytest.raises(cdr.DecodeError):  # neither this module nor rclpy reads it
        cdr.decode_odometry(b"\x01\x01\x00\x00" + serialize_message(odom)[4:])


def test_one_type_that_disagrees_leaves_the_others_as_bytes(monkeypatch):
    monkeypatch.setattr(cdr, "_markers_agree", lambda: "MarkerArray encodes differently")
    support = cdr.self_check()
    assert support == cdr.Support("", "", "MarkerArray encodes differently", "")
    warnings = []
    codecs = choose_codecs(True, True, 2, warnings.append)
    assert codecs.raw_odometry and codecs.twist.raw and not codecs.raw_markers
    assert warnings == ["markers handled as message objects, not serialized bytes: "
                        "MarkerArray encodes differently"]
    monkeypatch.setattr(cdr, "_odometry_agrees", lambda: 1 / 0)  # a surprise is a failure
    assert cdr.self_check().odometry.startswith("ZeroDivisionError")
