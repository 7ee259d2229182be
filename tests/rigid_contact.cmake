# Rigid bodies in frictional contact with the ground (issue 29; docs/contact.md): the contact
# laws alone, the gradient suite on a box on 3 slides + 3 hinges and an arm with spheres, the
# packed path's bits, the laws' static and sliding physics, the diagnostics and the config.
steer_test(rigid_contact_test fast)
# the CUDA backend on the box's contact points: on the emulated device (gpu_emulation part),
# and on a real device in a CUDA build (label cuda, skips without one)
if(COMMAND steer_emulated_test)
  steer_emulated_test(emulated_rigid_contact_test steer_cuda_emulation "fast;gpu_emulation"
                      ${CMAKE_CURRENT_SOURCE_DIR}/rigid_contact_emulated_test.cpp)
endif()
if(STEER_WITH_CUDA)
  add_executable(rigid_contact_cuda_test rigid_contact_emulated_test.cpp)
  target_link_libraries(rigid_contact_cuda_test PRIVATE steer GTest::gtest GTest::gtest_main)
  target_compile_definitions(rigid_contact_cuda_test PRIVATE STEER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  gtest_discover_tests(rigid_contact_cuda_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "cuda")
endif()
