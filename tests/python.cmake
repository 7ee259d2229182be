# The Python module's tests (tests/python/, pytest), run through tests/python/run_pytest.py: exit 77
# (skipped) when every test skipped, e.g. without torch. Without the module (STEER_BUILD_PYTHON
# OFF: tools/bootstrap.sh turns it on only when the venv with nanobind could be made) one test
# says so and is skipped.
if(TARGET _steer)
  set(steer_py_env "PYTHONPATH=${PROJECT_BINARY_DIR}/python" "STEER_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
      "STEER_BINARY=$<TARGET_FILE:steer_cli>" "PYTHONDONTWRITEBYTECODE=1" "OMP_WAIT_POLICY=PASSIVE")
  # name, label, test file (and pytest options)
  foreach(spec "api|fast|test_api.py" "inputs|fast|test_inputs.py" "cli|slow|test_cli.py" "torch|slow|test_torch.py"
               "examples|slow|test_examples.py")
    string(REPLACE "|" ";" parts "${spec}")
    list(GET parts 0 name)
    list(GET parts 1 label)
    list(GET parts 2 file)
    add_test(NAME Python.${name}
             COMMAND ${STEER_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/run_pytest.py -q -p no:cacheprovider
                     ${CMAKE_CURRENT_SOURCE_DIR}/python/${file}
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/python)
    set_tests_properties(Python.${name} PROPERTIES LABELS "${label};python" SKIP_RETURN_CODE 77
                         ENVIRONMENT "${steer_py_env}")
  endforeach()

  # The same module built against the emulated CUDA device (tests/gpu_emulation.cmake: the real
  # kernel and launcher sources compiled as host C++), in its own package folder, so that
  # rollout's device-array path (device inputs read in place, results left in device memory)
  # runs without a GPU: test_inputs.py's device tests, with the module's _to_device/_to_host
  # helpers standing in for torch.cuda. Not part of any install.
  if(TARGET steer_cuda_emulation)
    set(steer_emu_py_dir ${CMAKE_CURRENT_BINARY_DIR}/python_emulated/steer)
    nanobind_add_module(_steer_emulated NB_STATIC ${PROJECT_SOURCE_DIR}/python/steer_ext.cpp)
    # the models' runners are instantiated in their folders (src/problem/model_runner.h), so the
    # folders whose models these tests put on the device (the projectile, the mass-spring robot)
    # and the registry are compiled again against the emulated device, ahead of libsteer's copies
    add_library(steer_models_emulated OBJECT ${PROJECT_SOURCE_DIR}/src/models/registry.cpp
                ${PROJECT_SOURCE_DIR}/src/models/projectile/projectile_model.cpp
                ${PROJECT_SOURCE_DIR}/src/models/mass_spring/mass_spring_model.cpp)
    target_link_libraries(steer_models_emulated PUBLIC steer_cuda_emulation)
    target_link_libraries(_steer_emulated PRIVATE steer_models_emulated steer_cuda_emulation steer)
    set_target_properties(_steer_emulated PROPERTIES OUTPUT_NAME _steer LIBRARY_OUTPUT_DIRECTORY ${steer_emu_py_dir})
    file(GLOB steer_emu_py_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/steer/*.py)
    add_custom_target(steer_python_emulated ALL
      COMMAND ${CMAKE_COMMAND} -E make_directory ${steer_emu_py_dir}
      COMMAND ${CMAKE_COMMAND} -E copy_if_different ${steer_emu_py_files} ${steer_emu_py_dir}
      DEPENDS _steer_emulated ${steer_emu_py_files})
    add_test(NAME Python.emulated_device
             COMMAND ${STEER_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/run_pytest.py -q -p no:cacheprovider
                     ${CMAKE_CURRENT_SOURCE_DIR}/python/test_inputs.py
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/python)
    set(steer_emu_py_env ${steer_py_env})
    list(TRANSFORM steer_emu_py_env REPLACE "^PYTHONPATH=.*" "PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR}/python_emulated")
    set_tests_properties(Python.emulated_device PROPERTIES LABELS "fast;python;gpu_emulation" SKIP_RETURN_CODE 77
                         ENVIRONMENT "${steer_emu_py_env}")
  endif()
else()
  add_test(NAME Python.skipped
           COMMAND sh -c "echo 'steer: Python tests skipped: the module steer was not built (configure with -DSTEER_BUILD_PYTHON=ON and a Python with nanobind; tools/bootstrap.sh test does so when pip can install it)'; exit 77")
  set_tests_properties(Python.skipped PROPERTIES LABELS "slow;python" SKIP_RETURN_CODE 77)
endif()

# Batch views (Batch::view_inputs, the engine's side of the module's zero-copy inputs):
# tests/python/batch_view_test.cpp on the host library in every build (BatchView.*, fast), and
# once more on the emulated CUDA device with device-memory inputs (Emulated.BatchView*.*).
add_executable(batch_view_test ${CMAKE_CURRENT_SOURCE_DIR}/python/batch_view_test.cpp)
target_link_libraries(batch_view_test PRIVATE steer GTest::gtest GTest::gtest_main)
target_include_directories(batch_view_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
gtest_discover_tests(batch_view_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "fast")
if(TARGET steer_cuda_emulation)
  steer_emulated_test(emulated_batch_view_test steer_cuda_emulation "fast;gpu_emulation"
                      ${CMAKE_CURRENT_SOURCE_DIR}/python/batch_view_test.cpp)
endif()
