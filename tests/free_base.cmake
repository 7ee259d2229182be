# The articulated model's free root (a floating base, model.h): the gradient suite on a
# tumbling body and on free bodies with limbs (euler, implicitfast, rk4), the quaternion's
# norm over 10⁴ steps, free-flight energy and momentum drift, the config's slots and refusals.
steer_test(free_base_test fast)

# Free flight of a tumbling body and the quadruped with its feet in the air, against MuJoCo
# (configs/mjcf/tumbling_body.xml, configs/mjcf/quadruped.xml); built where MuJoCo is found.
if(STEER_MUJOCO_IMPORT)
  steer_test(free_base_mujoco_test crosscheck)
  target_include_directories(free_base_mujoco_test SYSTEM PRIVATE ${STEER_MUJOCO_INCLUDE_DIR})
  target_link_libraries(free_base_mujoco_test PRIVATE ${STEER_MUJOCO_LIBRARY})
endif()

# ArticulatedLegged, the quadruped's capacity: its CPU packs against its scalar path and
# ArticulatedLarge (same bits), and its CUDA sources on the emulated device against the CPU
# (tests/gpu_emulation.cmake: the kernels compiled as host C++). It imports the quadruped, so
# it is built where MuJoCo is found.
if(STEER_MUJOCO_IMPORT AND COMMAND steer_emulation_objects)
  steer_emulation_objects(steer_cuda_emulation_legged SOURCES ${steer_emu_dir}/kernels_articulated_legged.cpp)
  steer_emulated_test(free_base_legged_test steer_cuda_emulation_legged "fast;gpu_emulation"
                      ${CMAKE_CURRENT_SOURCE_DIR}/free_base_legged_test.cpp)
endif()
if(STEER_MUJOCO_IMPORT AND STEER_WITH_CUDA)
  # the same parity on a real device (label cuda; skips without one)
  add_executable(free_base_legged_cuda_test free_base_legged_test.cpp)
  target_link_libraries(free_base_legged_cuda_test PRIVATE steer GTest::gtest GTest::gtest_main)
  target_compile_definitions(free_base_legged_cuda_test PRIVATE STEER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  gtest_discover_tests(free_base_legged_cuda_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "cuda")
endif()
