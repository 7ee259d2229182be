# The GPU path on an emulated device (docs/testing.md, "The GPU path on an emulated device"):
# the real kernel and launcher sources (kernels/*.cu, src/backend/cuda_device.cpp) compiled
# as host C++ against tests/backend/cuda_emulation (its cuda_runtime.h / cuda_runtime_api.h first on
# the include path, STEER_WITH_CUDA and STEER_CUDA_EMULATION defined for these targets only),
# and the CUDA parity suites run on it, in every build. Nothing here is linked into libsteer
# or the CLI. Labels: gpu_emulation on all; fast for the suites, slow for the ASan build.
# Included by tests/backend/CMakeLists.txt; steer_emu_dir (tests/backend/cuda_emulation) is set
# in tests/CMakeLists.txt, so that the functions below work from every area's folder.

# The emulated device, its kernels and the CUDA backend's host files, as objects. They go on
# a test's link line ahead of libsteer, so backend.cpp compiled as in a CUDA build (no
# fallback cuda_status) and cuda_device.cpp stand in for libsteer's CPU-only backend.cpp.
function(steer_emulation_objects name)
  cmake_parse_arguments(arg "" "" "SOURCES;OPTIONS" ${ARGN})
  add_library(${name} OBJECT ${steer_emu_dir}/emulator.cpp ${arg_SOURCES}
              ${PROJECT_SOURCE_DIR}/src/backend/backend.cpp ${PROJECT_SOURCE_DIR}/src/backend/cuda_device.cpp)
  target_include_directories(${name} BEFORE PUBLIC ${steer_emu_dir})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
  target_compile_definitions(${name} PUBLIC STEER_WITH_CUDA=1 STEER_CUDA_EMULATION=1)
  target_compile_options(${name} PUBLIC ${arg_OPTIONS})
  target_link_options(${name} PUBLIC ${arg_OPTIONS})
  target_link_libraries(${name} PUBLIC steer Threads::Threads)
endfunction()

steer_emulation_objects(steer_cuda_emulation
  SOURCES ${steer_emu_dir}/kernels_projectile_mass_spring.cpp
          ${steer_emu_dir}/kernels_articulated_double.cpp ${steer_emu_dir}/kernels_articulated_float.cpp)

# one GoogleTest executable against the emulated device; its tests are named
# Emulated.<suite>.<test>, or EmulatedAsan.<suite>.<test> on the AddressSanitizer objects.
# Its sources include the shared helpers (tests/support) by name and the emulator as
# "cuda_emulation/..." (from tests/backend).
function(steer_emulated_test name objects labels)
  set(prefix "Emulated.")
  if(objects MATCHES "_asan$")
    set(prefix "EmulatedAsan.")
  endif()
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE ${objects} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE STEER_SOURCE_DIR="${PROJECT_SOURCE_DIR}" STEER_BINARY="$<TARGET_FILE:steer_cli>")
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/kernels ${steer_tests_dir}/support
                             ${steer_tests_dir}/backend)
  gtest_discover_tests(${name} TEST_PREFIX "${prefix}" DISCOVERY_TIMEOUT 60 TEST_LIST ${name}_TESTS)
  # the labels set once the tests are known: gtest_discover_tests's PROPERTIES would split a
  # list of labels into property names
  set(labels_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake)
  file(WRITE ${labels_file} "if(${name}_TESTS)\n  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${labels}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_file})
endfunction()

# the CUDA parity suites, the same sources the real device runs (tests/backend/CMakeLists.txt,
# label cuda)
steer_emulated_test(emulated_cuda_parity_test steer_cuda_emulation "fast;gpu_emulation"
                    ${CMAKE_CURRENT_SOURCE_DIR}/cuda_parity_test.cpp)
steer_emulated_test(emulated_cuda_parity_articulated_test steer_cuda_emulation "fast;gpu_emulation"
                    ${CMAKE_CURRENT_SOURCE_DIR}/cuda_parity_articulated_test.cpp)
# the emulator's own promises: barriers under adversarial schedules, faults, chunking
steer_emulated_test(emulated_device_test steer_cuda_emulation "fast;gpu_emulation"
                    ${CMAKE_CURRENT_SOURCE_DIR}/emulated_scheduling_test.cpp
                    ${CMAKE_CURRENT_SOURCE_DIR}/emulated_faults_test.cpp)

# The same under AddressSanitizer, once: the emulated device, the projectile and mass-spring
# sources and the suites above but the articulated one, in one executable; an out-of-bounds
# shared-memory access is caught (emulated_asan_test.cpp). Device memory is host heap of the
# exact size asked for, so an access past a device array is a heap-buffer-overflow too.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=address)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=address)
check_cxx_source_compiles("int main() { return 0; }" STEER_HAS_ASAN)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(STEER_HAS_ASAN)
  steer_emulation_objects(steer_cuda_emulation_asan
    SOURCES ${steer_emu_dir}/kernels_projectile_mass_spring.cpp
    OPTIONS -fsanitize=address -fno-omit-frame-pointer)
  steer_emulated_test(emulated_asan_test steer_cuda_emulation_asan "slow;gpu_emulation"
                      ${CMAKE_CURRENT_SOURCE_DIR}/emulated_asan_test.cpp
                      ${CMAKE_CURRENT_SOURCE_DIR}/cuda_parity_test.cpp
                      ${CMAKE_CURRENT_SOURCE_DIR}/emulated_scheduling_test.cpp
                      ${CMAKE_CURRENT_SOURCE_DIR}/emulated_faults_test.cpp)
  set_target_properties(emulated_asan_test PROPERTIES OUTPUT_NAME emulated_asan_test)
  message(STATUS "steer: GPU emulation under AddressSanitizer: ON")
else()
  message(STATUS "steer: GPU emulation under AddressSanitizer: OFF (the compiler cannot link -fsanitize=address)")
endif()

# the parity suite's small and chunked cases once more with every block's threads shuffled and
# preempted (STEER_CUDA_EMULATION_SCHEDULE, tests/backend/cuda_emulation/emulator.h)
add_test(NAME Emulated.CudaParityUnderPreemption
         COMMAND emulated_cuda_parity_test --gtest_brief=1 --gtest_filter=*TinyBatches:*ChunkedPassesAreBitwiseIdentical:*CheckpointIntervalsAndTrajectory)
set_tests_properties(Emulated.CudaParityUnderPreemption PROPERTIES
                     ENVIRONMENT STEER_CUDA_EMULATION_SCHEDULE=preempt:7 LABELS "fast;gpu_emulation")
