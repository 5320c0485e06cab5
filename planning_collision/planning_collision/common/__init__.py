"""The shared floor of the pure cores: small helpers that geometry, grid and orca may all import
without importing one another (numpy + numba, no ROS).

Each module here holds one concept, and there is one copy of each helper in the project.
"""
