# MJCF / URDF import through MuJoCo's own compiler (docs/import.md): where MuJoCo is found
# (Debian libmujoco-dev; its headers and libmujoco), libsteer compiles
# src/models/articulated/mujoco/mjcf_import.cpp, links MuJoCo and defines STEER_MUJOCO_IMPORT,
# which config_articulated.cpp tests; without it, model.mjcf / model.urdf are refused with
# exit 2. STEER_MUJOCO=OFF builds without it even where MuJoCo is installed.
# The cache variables are the ones tests/CMakeLists.txt's MuJoCo cross-check finds.
option(STEER_MUJOCO "import MJCF and URDF files through MuJoCo's compiler when MuJoCo is installed" ON)
if(STEER_MUJOCO)
  find_path(STEER_MUJOCO_INCLUDE_DIR mujoco/mujoco.h)
  find_library(STEER_MUJOCO_LIBRARY mujoco)
endif()
if(STEER_MUJOCO AND STEER_MUJOCO_INCLUDE_DIR AND STEER_MUJOCO_LIBRARY)
  target_sources(steer PRIVATE ${PROJECT_SOURCE_DIR}/src/models/articulated/mujoco/mjcf_import.cpp)
  target_include_directories(steer SYSTEM PRIVATE ${STEER_MUJOCO_INCLUDE_DIR})
  # PUBLIC: a program linking the static libsteer needs libmujoco for the import's symbols
  target_link_libraries(steer PUBLIC ${STEER_MUJOCO_LIBRARY})
  target_compile_definitions(steer PRIVATE STEER_MUJOCO_IMPORT)
  # steer --version asks the linked MuJoCo for its version (apps/steer/version.cpp)
  target_include_directories(steer_cli PRIVATE ${STEER_MUJOCO_INCLUDE_DIR})
  target_compile_definitions(steer_cli PRIVATE STEER_CLI_MUJOCO)
  set(STEER_MUJOCO_IMPORT ON)
  message(STATUS "steer: MJCF/URDF import: ON (MuJoCo ${STEER_MUJOCO_LIBRARY})")
else()
  set(STEER_MUJOCO_IMPORT OFF)
  message(STATUS "steer: MJCF/URDF import: OFF (${STEER_MUJOCO_LIBRARY}; model.mjcf and model.urdf are refused)")
endif()
