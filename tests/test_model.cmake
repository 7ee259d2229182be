# The test-only model (tests/models/oscillator/, docs/design.md "Adding a model"): a folder of
# its own and one line of the registered-models list, and nothing else. Its line is written here
# into the list's header for this build (STEER_EXTRA_MODELS, src/models/registry.h); the
# registry compiled with it, and the model's folder, go on each program's link line ahead of
# libsteer, so that they stand in for libsteer's registry. The CLI, the benchmark and the
# Python module are then built again from their unchanged sources, and the tests run the model
# through each of them (label fast): tests/oscillator_test.cpp and tests/python/test_oscillator.py.
set(steer_extra_models_header ${CMAKE_CURRENT_BINARY_DIR}/oscillator_models.h)
file(WRITE ${steer_extra_models_header} "#define STEER_EXTRA_MODELS(X) X(oscillator)\n")
add_library(steer_oscillator_model OBJECT ${PROJECT_SOURCE_DIR}/src/models/registry.cpp
            ${CMAKE_CURRENT_SOURCE_DIR}/models/oscillator/oscillator_model.cpp)
target_compile_definitions(steer_oscillator_model PRIVATE STEER_EXTRA_MODELS_HEADER="${steer_extra_models_header}")
target_link_libraries(steer_oscillator_model PUBLIC steer)

# the CLI's own sources (main.cpp, and version.cpp with the configure-time build_info.cpp of
# cmake/build_info.cmake), with its include folders, definitions and libraries
add_executable(steer_oscillator_cli ${PROJECT_SOURCE_DIR}/apps/steer/main.cpp ${PROJECT_SOURCE_DIR}/apps/steer/version.cpp
                                    ${PROJECT_BINARY_DIR}/apps/steer/build_info.cpp)
target_include_directories(steer_oscillator_cli PRIVATE $<TARGET_PROPERTY:steer_cli,INCLUDE_DIRECTORIES>)
target_compile_definitions(steer_oscillator_cli PRIVATE $<TARGET_PROPERTY:steer_cli,COMPILE_DEFINITIONS>)
target_link_libraries(steer_oscillator_cli PRIVATE steer_oscillator_model steer CLI11::CLI11)
if(TARGET steer_mpi)
  target_link_libraries(steer_oscillator_cli PRIVATE steer_mpi)
endif()
set(steer_oscillator_defs STEER_OSCILLATOR_CLI="$<TARGET_FILE:steer_oscillator_cli>")
if(STEER_BUILD_BENCH)
  add_executable(bench_rollout_oscillator ${PROJECT_SOURCE_DIR}/bench/bench_rollout.cpp)
  target_link_libraries(bench_rollout_oscillator PRIVATE steer_oscillator_model steer CLI11::CLI11)
  target_compile_definitions(bench_rollout_oscillator PRIVATE STEER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  list(APPEND steer_oscillator_defs STEER_OSCILLATOR_BENCH="$<TARGET_FILE:bench_rollout_oscillator>")
endif()

add_executable(oscillator_test oscillator_test.cpp)
target_link_libraries(oscillator_test PRIVATE steer_oscillator_model steer GTest::gtest GTest::gtest_main)
target_include_directories(oscillator_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(oscillator_test PRIVATE STEER_SOURCE_DIR="${PROJECT_SOURCE_DIR}" ${steer_oscillator_defs})
gtest_discover_tests(oscillator_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "fast")

if(TARGET _steer)
  set(steer_osc_py_dir ${CMAKE_CURRENT_BINARY_DIR}/python_oscillator/steer)
  nanobind_add_module(_steer_oscillator NB_STATIC ${PROJECT_SOURCE_DIR}/python/steer_ext.cpp)
  target_link_libraries(_steer_oscillator PRIVATE steer_oscillator_model steer)
  set_target_properties(_steer_oscillator PROPERTIES OUTPUT_NAME _steer LIBRARY_OUTPUT_DIRECTORY ${steer_osc_py_dir})
  file(GLOB steer_osc_py_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/steer/*.py)
  add_custom_target(steer_python_oscillator ALL
    COMMAND ${CMAKE_COMMAND} -E make_directory ${steer_osc_py_dir}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${steer_osc_py_files} ${steer_osc_py_dir}
    DEPENDS _steer_oscillator ${steer_osc_py_files})
  add_test(NAME Python.oscillator
           COMMAND ${STEER_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/run_pytest.py -q -p no:cacheprovider
                   ${CMAKE_CURRENT_SOURCE_DIR}/python/test_oscillator.py
           WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/python)
  set_tests_properties(Python.oscillator PROPERTIES LABELS "fast;python" SKIP_RETURN_CODE 77
                       ENVIRONMENT "PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR}/python_oscillator;STEER_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1;OMP_WAIT_POLICY=PASSIVE")
endif()
