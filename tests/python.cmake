# The Python module's tests (tests/python/, pytest), run through tests/python/run_pytest.py: exit 77
# (skipped) when every test skipped, e.g. without torch. Without the module (STEER_BUILD_PYTHON
# OFF: tools/bootstrap.sh turns it on only when the venv with nanobind could be made) one test
# says so and is skipped.
if(TARGET _steer)
  set(steer_py_env "PYTHONPATH=${PROJECT_BINARY_DIR}/python" "STEER_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
      "STEER_BINARY=$<TARGET_FILE:steer_cli>" "PYTHONDONTWRITEBYTECODE=1" "OMP_WAIT_POLICY=PASSIVE")
  # name, label, test file (and pytest options)
  foreach(spec "api|fast|test_api.py" "cli|slow|test_cli.py" "torch|slow|test_torch.py" "examples|slow|test_examples.py")
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
else()
  add_test(NAME Python.skipped
           COMMAND sh -c "echo 'steer: Python tests skipped: the module steer was not built (configure with -DSTEER_BUILD_PYTHON=ON and a Python with nanobind; tools/bootstrap.sh test does so when pip can install it)'; exit 77")
  set_tests_properties(Python.skipped PROPERTIES LABELS "slow;python" SKIP_RETURN_CODE 77)
endif()
