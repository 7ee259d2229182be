// Communicator over MPI_COMM_WORLD (src/parallel/parallel.h).
#include "parallel/mpi_world.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

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
  void allgather(const void* data, size_t bytes, std::vector<char>& all,
                 std::vector<size_t>& counts) override {
    long long mine = (long long)bytes;
    std::vector<long long> n(size_t(size_), 0);
    check(MPI_Allgather(&mine, 1, MPI_LONG_LONG, n.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD),
          "MPI_Allgather");
    // MPI counts and offsets are int: a part of more than 2 GiB, or one that starts beyond 2 GiB
    // into the whole, cannot be gathered. Every rank sees the same sizes, so all refuse together
    // (docs/scaling.md says when a result should be written as per-rank shards instead).
    std::vector<int> cnt(static_cast<size_t>(size_), 0), at(static_cast<size_t>(size_), 0);
    long long total = 0;
    counts.assign(size_t(size_), 0);
    for (int r = 0; r < size_; ++r) {
      if (n[size_t(r)] > INT_MAX || total > INT_MAX)
        throw RankFailure("gathering " + std::to_string(n[size_t(r)]) + " bytes from rank " +
                          std::to_string(r) + " at offset " + std::to_string(total) +
                          " exceeds MPI's 2 GiB count; a result this large needs per-rank shards "
                          "(docs/scaling.md)");
      cnt[size_t(r)] = int(n[size_t(r)]);
      at[size_t(r)] = int(total);
      counts[size_t(r)] = size_t(n[size_t(r)]);
      total += n[size_t(r)];
    }
    all.resize(size_t(total));
    // a rank with nothing to send still passes a valid pointer
    static char none = 0;
    check(
        MPI_Allgatherv(bytes ? data : &none, int(bytes), MPI_BYTE, all.empty() ? &none : all.data(),
                       cnt.data(), at.data(), MPI_BYTE, MPI_COMM_WORLD),
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

// One GPU per rank: the rank's node-local index (ranks sharing its memory, MPI_COMM_TYPE_SHARED)
// picks device local % n among the node's n devices, through CUDA_VISIBLE_DEVICES so that the
// CUDA backend's device 0 is that GPU. A list the launcher or the user set is honoured (entry
// local % its length); without a GPU driver nothing is set. Runs before any CUDA call.
void pick_cuda_device(int local) {
  std::vector<std::string> devices;
  if (const char* set = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::string list = set, one;
    for (char ch : list + ",") {
      if (ch == ',') {
        if (!one.empty()) devices.push_back(one);
        one.clear();
      } else if (ch != ' ') {
        one += ch;
      }
    }
    if (devices.size() <= 1) return;  // one device (or none) named: nothing to choose
  } else {
    // the NVIDIA driver lists one folder per GPU
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
      (void)e;
      devices.push_back(std::to_string(devices.size()));
    }
    if (devices.empty()) return;
  }
  setenv("CUDA_VISIBLE_DEVICES", devices[size_t(local) % devices.size()].c_str(), 1);
}

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
  if (w->size() > 1) {
    MPI_Comm node;
    int local = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
      MPI_Comm_rank(node, &local);
      MPI_Comm_free(&node);
    }
    pick_cuda_device(local);
  }
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
