"""orca_node logs a step's events in one call per severity (rclpy's logger costs ~0.5 ms of
CPU per call, and a loaded fleet's odometry goes stale and comes back for many agents at once).
"""

from planning_collision.ros.orca_node import grouped_events


def test_a_steps_events_are_one_news_line_and_one_warning_line():
    events = ["robot2: odometry older than 0.5 s, forgotten", "robot3: odometry received",
              "robot4: odometry older than 0.5 s, forgotten", "robot5: localization received"]
    news, warnings = grouped_events(events)
    assert news == "robot3: odometry received; robot5: localization received"
    assert warnings == ("robot2: odometry older than 0.5 s, forgotten; "
                        "robot4: odometry older than 0.5 s, forgotten")
    # every event is still there, once, to be counted in the log
    assert news.count("received") + warnings.count("forgotten") == len(events)


def test_no_events_no_lines():
    assert grouped_events([]) == ("", "")
    assert grouped_events(["robot1: odometry received"]) == ("robot1: odometry received", "")
