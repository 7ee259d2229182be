# MJCF / URDF import (docs/import.md): steer importing robot files through MuJoCo's compiler,
# cross-checked against MuJoCo on three models written in configs/mjcf/, and refusing what it
# does not model. Built where libsteer was built with the import (cmake/mujoco_import.cmake).
if(STEER_MUJOCO_IMPORT)
  steer_test(import_mujoco_test crosscheck)
  target_include_directories(import_mujoco_test SYSTEM PRIVATE ${STEER_MUJOCO_INCLUDE_DIR})
  target_link_libraries(import_mujoco_test PRIVATE ${STEER_MUJOCO_LIBRARY})
  add_dependencies(import_mujoco_test steer_cli)
endif()

# Trees beyond the arm's capacity (ArticulatedLarge, up to 32 bodies and 32 joints): the
# gradient suite, bit equality with Articulated, the CLI check and the refusals; with the
# import, an MJCF chain of 32 hinges too.
steer_test(articulated_large_test slow)
add_dependencies(articulated_large_test steer_cli)
if(STEER_MUJOCO_IMPORT)
  target_compile_definitions(articulated_large_test PRIVATE STEER_TEST_MJCF=1)
endif()
