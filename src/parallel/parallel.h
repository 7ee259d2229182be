// The processes of one job (docs/scaling.md). A run split across MPI ranks (mpirun -np N steer
// run CONFIG) talks through this interface only: which rank this process is, how many there
// are, and the few collectives the stages need (an all-gather of bytes, a check that every rank
// got through a step). libsteer holds the one-process world; the CLI built with MPI
// (cmake/mpi.cmake, src/parallel/mpi_world.cpp) installs the MPI world before any stage runs,
// so the library itself never links MPI.
#pragma once

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace steer {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // every rank's bytes, concatenated in rank order, on every rank; counts[r] = rank r's length
  virtual void allgather(const void* data, size_t bytes, std::vector<char>& all,
                         std::vector<size_t>& counts) = 0;
  // ends every process of the job with exit code `code` (a failure that the other ranks cannot
  // learn of through a collective, e.g. one rank's exception outside an evaluation)
  [[noreturn]] virtual void abort(int code) = 0;
  // "Open MPI v4.1.4" or "one process"
  virtual std::string library() const = 0;
  // bytes this rank has received from all-gathers so far (its own part included): what a
  // stage gathered is the difference across it (the artifact's parallel.optimizer)
  long long received_bytes = 0;
};

// the job's communicator: the one-process world unless set_world installed another
Communicator& world();
void set_world(std::unique_ptr<Communicator> w);

// A rank's failure, raised on every rank by agree(): the message names the failing ranks and the
// rollouts each was running.
class RankFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Collective: every rank passes its error of the step just done ("" when it went through). When
// any rank failed every rank throws RankFailure with "rank r (what_r): error_r" for each
// failed rank, so the job ends in agreement and nothing is published.
void agree(const std::string& error, const std::string& what);

// Rollouts [begin, begin + count) of a batch of n on rank r of `ranks`: contiguous blocks in
// rank order, sizes ⌊n/ranks⌋ or ⌈n/ranks⌉, the larger ones first.
struct Block {
  int begin = 0, count = 0;
};
Block block_of(int n, int r, int ranks);

// "rollouts 0–2047" / "rollout 5" / "no rollouts"
std::string rollouts_text(Block b);

// Collective: every rank's values concatenated in rank order (T trivially copyable: the same
// binary on every rank, so raw bytes are the values)
template <class T>
std::vector<T> allgather_values(const std::vector<T>& local) {
  static_assert(std::is_trivially_copyable<T>::value,
                "allgather_values: T must be trivially copyable");
  std::vector<char> all;
  std::vector<size_t> counts;
  world().allgather(local.data(), local.size() * sizeof(T), all, counts);
  world().received_bytes += (long long)all.size();
  std::vector<T> out(all.size() / sizeof(T));
  if (!all.empty()) std::memcpy(out.data(), all.data(), all.size());
  return out;
}

// Collective: rank 0's values on every rank (each rank passes as many)
template <class T>
std::vector<T> first_rank_values(const std::vector<T>& local) {
  std::vector<T> all = allgather_values(local);
  all.resize(local.size());
  return all;
}

// Collective: true on every rank when `flag` is true on any rank
bool any_rank(bool flag);

// Collective: every rank's string, in rank order
std::vector<std::string> allgather_strings(const std::string& local);

// The test hook (docs/robustness.md, "Runs split across ranks"): STEER_FAIL_RANK=r makes rank r
// fail in its evaluations, from its STEER_FAIL_AFTER-th one on (default 1), with
// STEER_FAIL_KIND = exception (default) or oom (std::bad_alloc). Read only here; a job without
// the variable never fails on purpose.
void injected_failure(long long evaluation);
// the same hook with STEER_FAIL_KIND=shard: rank r fails writing its artifact shard
// (src/experiment/shards.h) instead of in its evaluations
void injected_shard_failure();

}  // namespace steer
