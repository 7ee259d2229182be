// The MPI world (cmake/mpi.cmake builds it into the CLI when MPI is found).
#pragma once

namespace steer {

// MPI_Init_thread (funneled: only the main thread talks) and set_world(the MPI world) when this
// process is one of several ranks; nothing when it runs alone, so `steer run` without mpirun
// is the one-process program. Returns this process's rank.
int start_mpi_world(int& argc, char**& argv);
// MPI_Finalize when start_mpi_world initialized MPI
void stop_mpi_world();

}  // namespace steer
