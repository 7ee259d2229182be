# MJCF / URDF import (docs/import.md): steer importing robot files through MuJoCo's compiler,
# cross-checked against MuJoCo on three models written in configs/mjcf/, and refusing what it
# does not model. Built where libsteer was built with the import (cmake/mujoco_import.cmake).
if(STEER_MUJOCO_IMPORT)
  steer_test(import_mujoco_test crosscheck)
  target_include_directories(import_mujoco_test PRIVATE ${STEER_MUJOCO_INCLUDE_DIR})
  target_link_libraries(import_mujoco_test PRIVATE ${STEER_MUJOCO_LIBRARY})
  add_dependencies(import_mujoco_test steer_cli)
endif()
