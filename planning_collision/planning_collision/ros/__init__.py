"""ROS 2 adapters: thin nodes that convert messages, hold state and call the pure cores."""
