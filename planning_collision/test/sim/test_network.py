"""The simulated network stream: delay, jitter, loss, order, seeding."""

import math

import numpy as np
import pytest

from planning_collision.sim.network import Channel, NetworkSettings, stream_rng


def run(channel, sends, until, step=0.01):
    """Send ``sends`` (time, message) and receive every ``step`` until ``until``: a list of
    (delivery time, message)."""
    sends = sorted(sends)
    out, k = [], 0
    for tick in range(int(round(until / step)) + 1):
        now = tick * step
        while k < len(sends) and sends[k][0] <= now + 1e-12:
            channel.send(sends[k][0], sends[k][1])
            k += 1
        out += [(now, m) for m in channel.receive(now)]
    return out


def test_an_ideal_channel_delivers_at_once_in_order():
    channel = Channel()
    for i in range(5):
        assert channel.send(1.0, i) == 1.0
    assert channel.receive(1.0) == [0, 1, 2, 3, 4]
    assert channel.pending == 0 and channel.sent == channel.delivered == 5


def test_a_plain_delay_delivers_each_message_latency_after_it_was_sent():
    channel = Channel(NetworkSettings(latency=0.05))
    got = run(channel, [(0.1 * i, i) for i in range(10)], until=1.2)
    assert [m for _, m in got] == list(range(10))
    for t, m in got:  # received at the first tick at or after sent + latency
        assert t == pytest.approx(0.1 * m + 0.05, abs=1e-9)


def test_loss_drops_about_that_share_and_never_delivers_them():
    channel = Channel(NetworkSettings(loss=0.05), rng=stream_rng(3, 1))
    dues = [channel.send(0.0, i) for i in range(20000)]
    lost = sum(math.isinf(d) for d in dues)
    assert channel.lost == lost
    # Binomial(20000, 0.05): mean 1000, std 31.
    assert 850 < lost < 1150
    assert len(channel.receive(1.0)) == 20000 - lost


def test_jitter_delays_within_latency_plus_jitter_uniformly():
    channel = Channel(NetworkSettings(latency=0.05, jitter=0.1), in_order=False,
                      rng=stream_rng(1, 2))
    delays = np.array([channel.send(0.0, i) for i in range(20000)])
    assert delays.min() >= 0.05 and delays.max() <= 0.15
    assert delays.mean() == pytest.approx(0.1, abs=0.002)
    # Uniform: each tenth of the range holds about a tenth of the delays.
    counts, _ = np.histogram(delays, bins=10, range=(0.05, 0.15))
    assert counts.min() > 1800 and counts.max() < 2200


def test_in_order_never_lets_a_message_overtake_an_earlier_one():
    settings = NetworkSettings(latency=0.05, jitter=0.2, loss=0.1)
    sends = [(0.02 * i, i) for i in range(200)]
    ordered = run(Channel(settings, rng=stream_rng(7, 0)), sends, until=5.0)
    messages = [m for _, m in ordered]
    assert messages == sorted(messages)
    # Without the order rule the same draws reorder the stream (a datagram network).
    loose = run(Channel(settings, in_order=False, rng=stream_rng(7, 0)), sends, until=5.0)
    assert sorted(m for _, m in loose) == messages  # the same ones arrive (same loss draws)
    assert [m for _, m in loose] != messages
    # Each message is delivered no earlier than its own delay allows, in either mode.
    for got in (ordered, loose):
        for t, m in got:
            assert t >= 0.02 * m + 0.05 - 1e-9


def test_the_same_seed_repeats_a_run_and_another_seed_does_not():
    settings = NetworkSettings(latency=0.01, jitter=0.1, loss=0.2)
    sends = [(0.01 * i, i) for i in range(300)]

    def once(seed, stream):
        return run(Channel(settings, rng=stream_rng(seed, stream)), sends, until=4.0)

    assert once(5, 0) == once(5, 0)
    assert once(5, 0) != once(6, 0)
    assert once(5, 0) != once(5, 1)  # streams of one run draw apart


@pytest.mark.parametrize("field, value, rule", [
    ("latency", -0.1, ">= 0"), ("jitter", math.nan, "finite"),
    ("loss", 1.5, r"in \[0, 1\]"), ("loss", -0.01, r"in \[0, 1\]")])
def test_bad_settings_are_refused_by_their_stream_parameter_name(field, value, rule):
    settings = NetworkSettings()._replace(**{field: value})
    with pytest.raises(ValueError, match=f"command_{field} must be .*{rule}"):
        settings.check("command_")
    with pytest.raises(ValueError, match=f"^{field} must"):
        Channel(settings)


def test_total_loss_delivers_nothing():
    channel = Channel(NetworkSettings(loss=1.0))
    for i in range(100):
        assert math.isinf(channel.send(0.0, i))
    assert channel.receive(10.0) == [] and channel.pending == 0
