from glob import glob

from setuptools import find_packages, setup

package_name = "planning_collision"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.launch.py")),
        ("share/" + package_name + "/config", glob("config/*.yaml") + glob("config/*.rviz")
         + glob("config/*.xml")),
        ("share/" + package_name + "/config/maps", glob("config/maps/*")),
        ("share/" + package_name + "/config/scenarios", glob("config/scenarios/*")),
    ],
    # The supported ranges (package.xml says the same): from Ubuntu 24.04's versions (ROS 2
    # Jazzy and Kilted), tested in .venv-jazzy (requirements/jazzy/), to the newest releases,
    # tested in .venv. Ubuntu's matplotlib 3.6.3 has no Python 3.12 wheel: .venv-jazzy has
    # 3.7.3, and the plots were checked with 3.6.3 on Python 3.11.
    install_requires=["setuptools", "numpy>=1.26,<3", "numba>=0.59", "PyYAML>=6.0",
                      "matplotlib>=3.6", "pillow>=10.2", "scipy>=1.11"],
    extras_require={
        "test": ["pytest", "pytest-timeout", "hypothesis", "shapely", "scikit-image", "pyrvo"],
    },
    zip_safe=True,
    maintainer="planning_collision maintainers",
    maintainer_email="maintainers@planning-collision.invalid",
    description="Collision checking and ORCA multi-robot collision avoidance for ROS 2",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "collision_server = planning_collision.ros.entry_points:collision_server",
            "fleet_sim = planning_collision.ros.entry_points:fleet_sim",
            "map_publisher = planning_collision.ros.entry_points:map_publisher",
            "orca_node = planning_collision.ros.entry_points:orca_node",
            "warmup = planning_collision.warmup:main",
        ],
    },
)
