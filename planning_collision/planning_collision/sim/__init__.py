"""The fleet simulator and what it is shown with: scenarios (YAML worlds of robots, a person
and obstacles), the pure simulation that fleet_sim runs, the plots, and the demo that starts
the four nodes over loopback DDS and draws what happened. Everything here except the demo is
pure (no rclpy import)."""
