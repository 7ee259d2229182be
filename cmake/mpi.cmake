# Runs split across processes (docs/scaling.md). libsteer always holds the parallel layer's
# interface and its one-process world (src/parallel/), so a build without MPI runs as before;
# with MPI found, the CLI also gets the MPI world (src/parallel/mpi_world.cpp) and starts it
# when mpirun launched it. libsteer itself never links MPI, so the installed package and the
# Python module need no MPI.
option(STEER_MPI "use MPI when found: mpirun -np N steer run|check|compare CONFIG" ON)
target_sources(steer PRIVATE
  ${PROJECT_SOURCE_DIR}/src/parallel/parallel.cpp
  ${PROJECT_SOURCE_DIR}/src/parallel/split_problem.cpp)
set(STEER_WITH_MPI OFF)
if(STEER_MPI)
  # MPI's C interface (what src/parallel/mpi_world.cpp calls); FindMPI checks it with the C compiler
  include(CheckLanguage)
  check_language(C)
  if(CMAKE_C_COMPILER)
    enable_language(C)
    find_package(MPI COMPONENTS C QUIET)
  endif()
endif()
if(STEER_MPI AND MPI_C_FOUND)
  set(STEER_WITH_MPI ON)
  add_library(steer_mpi STATIC ${PROJECT_SOURCE_DIR}/src/parallel/mpi_world.cpp)
  target_link_libraries(steer_mpi PUBLIC steer MPI::MPI_C)
  target_compile_definitions(steer_mpi PUBLIC STEER_WITH_MPI=1)
  # the C interface alone: no MPI-2 C++ bindings pulled in by mpi.h from C++
  target_compile_definitions(steer_mpi PRIVATE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  target_link_libraries(steer_cli PRIVATE steer_mpi)
endif()
if(STEER_WITH_MPI)
  message(STATUS "steer: MPI ON (MPI ${MPI_C_VERSION}, ${MPIEXEC_EXECUTABLE}): mpirun -np N steer run|check|compare CONFIG")
else()
  message(STATUS "steer: MPI OFF (STEER_MPI=${STEER_MPI}; libopenmpi-dev and openmpi-bin give mpirun -np N steer ...)")
endif()
