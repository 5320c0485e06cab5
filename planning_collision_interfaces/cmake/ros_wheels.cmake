# Building an interface package with pip (scikit-build-core) into a virtual environment that
# holds ROS 2 from PyPI wheels (ros-*). Included by planning_collision_interfaces and by the
# vendored tf2_msgs; in a regular ROS workspace (colcon) both macros change nothing.

# The venv root is an ament prefix, found from the location of the installed
# rosidl_generator_py module; it must be on CMAKE_PREFIX_PATH and AMENT_PREFIX_PATH.
macro(ros_wheels_prefix)
if(SKBUILD)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      "import pathlib, rosidl_generator_py; print(pathlib.Path(rosidl_generator_py.__file__).resolve().parents[4])"
    OUTPUT_VARIABLE _ros_wheel_prefix
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _ros_wheel_result)
  if(NOT _ros_wheel_result EQUAL 0)
    message(FATAL_ERROR "rosidl_generator_py is not importable by ${Python_EXECUTABLE}: "
      "install the ROS 2 wheels first (make setup does).")
  endif()
  list(PREPEND CMAKE_PREFIX_PATH "${_ros_wheel_prefix}")
  set(ENV{AMENT_PREFIX_PATH} "${_ros_wheel_prefix}")
  set(Python3_EXECUTABLE "${Python_EXECUTABLE}")
  message(STATUS "ROS 2 wheels prefix: ${_ros_wheel_prefix}")
endif()
endmacro()

# Call after the find_package() lines. The PyPI wheels' exported *__rosidl_generator_py targets
# carry include directories of the machine that built them (a manylinux Python, a numpy path);
# CMake refuses to generate with directories that do not exist, so drop those from every
# imported target. In a regular ROS install every directory exists and this changes nothing.
macro(ros_wheels_fix_imported_targets)
get_property(_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(_target IN LISTS _imported)
  get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
  if(_dirs)
    set(_kept "")
    foreach(_dir IN LISTS _dirs)
      if(_dir MATCHES "^\\$<" OR EXISTS "${_dir}")
        list(APPEND _kept "${_dir}")
      endif()
    endforeach()
    set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_kept}")
  endif()
endforeach()
endmacro()
