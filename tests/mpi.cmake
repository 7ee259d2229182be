# Runs split across MPI ranks (docs/scaling.md), each part a test of tests/mpi_artifacts.py
# against the CLI: the artifact of 1, 2 and 3 ranks equals the one-process artifact apart from
# the run-description fields, a failing rank ends the job with nothing published, --resume after
# a failed job. Skipped (77) in a build without MPI.
# the blocks, block configs and the one-rank split problem, in one process (with or without MPI)
steer_test(mpi_blocks_test fast)
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(mpi_launcher NO_MPI)
  if(STEER_WITH_MPI AND MPIEXEC_EXECUTABLE)
    set(mpi_launcher ${MPIEXEC_EXECUTABLE})
  endif()
  foreach(part morphology panda projectile compare fault resume devices shards)
    add_test(NAME Mpi.${part}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/mpi_artifacts.py $<TARGET_FILE:steer_cli>
                     ${mpi_launcher} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/mpi ${part})
    set_tests_properties(Mpi.${part} PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
  # a few seconds each on two cores; the Panda (run and check) and compare parts run 8 jobs each
  set_tests_properties(Mpi.fault Mpi.projectile Mpi.morphology Mpi.resume Mpi.devices Mpi.shards PROPERTIES LABELS fast)
  set_tests_properties(Mpi.panda Mpi.compare PROPERTIES LABELS slow)
endif()
