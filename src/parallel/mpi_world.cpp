// Communicator over MPI_COMM_WORLD (src/parallel/parallel.h).
#include "parallel/mpi_world.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "parallel/parallel.h"

namespace steer {

namespace {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string(call) + ": " + std::string(text, size_t(len)));
}

class MpiWorld : public Communicator {
 public:
  MpiWorld() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allgather(const void* data, size_t bytes, std::vector<char>& all, std::vector<size_t>& counts) override {
    // MPI counts are int: one rank's part of one gather is at most 2 GiB (docs/scaling.md says
    // when a gathered result should be written as per-rank shards instead)
    if (bytes > size_t(INT_MAX))
      throw std::runtime_error("allgather: " + std::to_string(bytes) + " bytes from one rank exceed MPI's 2 GiB count");
    long long mine = (long long)bytes;
    std::vector<long long> n(size_t(size_), 0);
    check(MPI_Allgather(&mine, 1, MPI_LONG_LONG, n.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD), "MPI_Allgather");
    std::vector<int> cnt(static_cast<size_t>(size_), 0), at(static_cast<size_t>(size_), 0);
    long long total = 0;
    counts.assign(size_t(size_), 0);
    for (int r = 0; r < size_; ++r) {
      if (total > INT_MAX) throw std::runtime_error("allgather: the gathered result exceeds MPI's 2 GiB displacement");
      cnt[size_t(r)] = int(n[size_t(r)]);
      at[size_t(r)] = int(total);
      counts[size_t(r)] = size_t(n[size_t(r)]);
      total += n[size_t(r)];
    }
    all.resize(size_t(total));
    // a rank with nothing to send still passes a valid pointer
    static char none = 0;
    check(MPI_Allgatherv(bytes ? data : &none, int(bytes), MPI_BYTE, all.empty() ? &none : all.data(), cnt.data(),
                         at.data(), MPI_BYTE, MPI_COMM_WORLD),
          "MPI_Allgatherv");
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::exit(code);
  }
  std::string library() const override {
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    std::string s(v, size_t(len));
    const size_t cut = s.find_first_of(",\n");
    return cut == std::string::npos ? s : s.substr(0, cut);
  }

 private:
  int rank_ = 0, size_ = 1;
};

bool started = false;

// the launcher's environment says how many ranks this job has (Open MPI, MPICH/Hydra, Slurm's PMI)
bool launched_as_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace

int start_mpi_world(int& argc, char**& argv) {
  if (!launched_as_rank()) return 0;
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  started = true;
  // errors come back as codes (check() turns them into exceptions) rather than ending the job
  // inside MPI, so a rank can name what it was doing
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  auto w = std::make_unique<MpiWorld>();
  const int r = w->rank();
  if (w->size() > 1) set_world(std::move(w));
  return r;
}

void stop_mpi_world() {
  if (!started) return;
  set_world(nullptr);
  MPI_Finalize();
  started = false;
}

}  // namespace steer
