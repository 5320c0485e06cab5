"""How orca_node reads odometry and velocity commands and writes commands, chosen once at
start-up: serialized CDR bytes (:mod:`.cdr`, much cheaper with hundreds of robots) or Python
message objects, and TwistStamped or Twist. The node calls the same few methods either way
(as Nav2's TwistSubscriber and TwistPublisher hide stamped and unstamped twists)."""

from __future__ import annotations

from typing import NamedTuple

from geometry_msgs.msg import Twist, TwistStamped

from . import cdr


def odometry_decoder(raw: bool):
    """``decode(msg) -> (numbers, child_frame_id bytes, stamp seconds)``; see
    :func:`.cdr.decode_odometry`. It raises (cdr.DecodeError, or whatever a bad message
    causes) for a message that cannot be read."""
    return cdr.decode_odometry if raw else cdr.odometry_numbers


class TwistCodec:
    """Velocity commands in and out, stamped or not, serialized or not.

    ``decode(msg) -> (vx, vy, wz)``; ``encode(i, stamp, vx, vy, wz)`` returns what to
    publish for robot ``i`` (stamped: ``frame_id`` is the robot's body frame, set with
    :meth:`set_frame` from its odometry's child_frame_id)."""

    def __init__(self, raw: bool, stamped: bool, robots: int):
        self.raw, self.stamped = raw, stamped
        self.message_type = TwistStamped if stamped else Twist
        self._frames = [""] * robots
        self._suffixes = [cdr.frame_suffix("")] * robots
        self._messages = [self.message_type() for _ in range(robots)]

    def decode(self, msg) -> tuple[float, float, float]:
        return cdr.decode_twist(msg, self.stamped) if self.raw else cdr.twist_numbers(msg)

    def set_frame(self, i: int, frame_id: str) -> None:
        if frame_id != self._frames[i]:
            self._frames[i] = frame_id
            self._suffixes[i] = cdr.frame_suffix(frame_id)

    def encode(self, i: int, stamp, vx: float, vy: float, wz: float):
        if self.raw:
            if self.stamped:
                return cdr.encode_twist_stamped(stamp.sec, stamp.nanosec, self._suffixes[i],
                                                vx, vy, wz)
            return cdr.encode_twist(vx, vy, wz)
        msg = self._messages[i]
        twist = msg.twist if self.stamped else msg
        if self.stamped:
            msg.header.stamp = stamp
            msg.header.frame_id = self._frames[i]
        twist.linear.x, twist.linear.y, twist.angular.z = vx, vy, wz
        return msg


class LatestInputs:
    """The latest message of each of ``n`` inputs (one per agent), stored by the callbacks
    with their arrival time and handed to the control step once each: only the newest
    counts, so a message superseded before the step is never decoded."""

    def __init__(self, n: int):
        self._latest: list = [None] * n
        self._taken: list = [None] * n

    def store(self, i: int, arrival: float, msg) -> None:
        self._latest[i] = (msg, arrival)

    def fresh(self):
        """(i, message, arrival) of every input that changed since the last call."""
        for i, entry in enumerate(self._latest):
            if entry is not None and entry[0] is not self._taken[i]:
                self._taken[i] = entry[0]
                yield i, entry[0], entry[1]


class Codecs(NamedTuple):
    decode_odometry: object  # see odometry_decoder
    twist: TwistCodec
    raw_odometry: bool
    raw_markers: bool
    raw_status: bool


def choose_codecs(raw_messages: bool, stamped: bool, robots: int, warn) -> Codecs:
    """Serialized bytes for each message type whose :func:`.cdr.self_check` passes (when
    ``raw_messages``), message objects otherwise; ``warn(text)`` says which fell back."""
    if not raw_messages:
        support = cdr.Support(*["raw_messages is false"] * len(cdr.Support._fields))
    else:
        support = cdr.self_check()
        for kind, problem in support._asdict().items():
            if problem:
                warn(f"{kind} handled as message objects, not serialized bytes: {problem}")
    return Codecs(odometry_decoder(not support.odometry),
                  TwistCodec(not support.twist, stamped, robots), not support.odometry,
                  not support.markers, not support.status)
