// The one-process world and the helpers over any world (src/parallel/parallel.h).
#include "parallel/parallel.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace steer {

namespace {

class OneProcess : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allgather(const void* data, size_t bytes, std::vector<char>& all,
                 std::vector<size_t>& counts) override {
    all.assign(static_cast<const char*>(data), static_cast<const char*>(data) + bytes);
    counts.assign(1, bytes);
  }
  [[noreturn]] void abort(int code) override { std::exit(code); }
  std::string library() const override { return "one process"; }
};

std::unique_ptr<Communicator>& world_slot() {
  static std::unique_ptr<Communicator> w = std::make_unique<OneProcess>();
  return w;
}

}  // namespace

Communicator& world() { return *world_slot(); }

void set_world(std::unique_ptr<Communicator> w) {
  world_slot() = w ? std::move(w) : std::make_unique<OneProcess>();
}

Block block_of(int n, int r, int ranks) {
  const int base = n / ranks, extra = n % ranks;
  return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

std::string rollouts_text(Block b) {
  if (b.count <= 0) return "no rollouts";
  if (b.count == 1) return "rollout " + std::to_string(b.begin);
  return "rollouts " + std::to_string(b.begin) + "–" + std::to_string(b.begin + b.count - 1);
}

std::vector<std::string> allgather_strings(const std::string& local) {
  std::vector<char> all;
  std::vector<size_t> counts;
  world().allgather(local.data(), local.size(), all, counts);
  world().received_bytes += (long long)all.size();
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t n : counts) {
    out.emplace_back(all.data() + at, n);
    at += n;
  }
  return out;
}

bool any_rank(bool flag) {
  for (char f : allgather_values(std::vector<char>{char(flag ? 1 : 0)}))
    if (f) return true;
  return false;
}

void agree(const std::string& error, const std::string& what) {
  Communicator& w = world();
  if (w.size() == 1) {
    if (!error.empty()) throw RankFailure(error);
    return;
  }
  // the rank's part of the message travels with its error: "rank 1 (rollouts 2048–4095): …"
  const std::vector<std::string> errors =
      allgather_strings(error.empty() ? std::string() : what + "\n" + error);
  std::string msg;
  int failed = 0;
  for (size_t r = 0; r < errors.size(); ++r) {
    if (errors[r].empty()) continue;
    const size_t cut = errors[r].find('\n');
    msg += (failed++ ? "; " : "") + std::string("rank ") + std::to_string(r) + " of " +
           std::to_string(w.size()) + " (" + errors[r].substr(0, cut) +
           ") failed: " + errors[r].substr(cut + 1);
  }
  if (failed > 0) throw RankFailure(msg);
}

void injected_failure(long long evaluation) {
  const char* who = std::getenv("STEER_FAIL_RANK");
  if (!who || std::atoi(who) != world().rank()) return;
  const char* shard = std::getenv("STEER_FAIL_KIND");
  if (shard && std::string(shard) == "shard") return;  // that rank fails writing its shard instead
  const char* after = std::getenv("STEER_FAIL_AFTER");
  if (evaluation < (after ? std::atoll(after) : 1)) return;
  const char* kind = std::getenv("STEER_FAIL_KIND");
  if (kind && std::string(kind) == "oom") throw std::bad_alloc();
  throw std::runtime_error("injected failure (STEER_FAIL_RANK=" + std::string(who) +
                           ", evaluation " + std::to_string(evaluation) + ")");
}

void injected_shard_failure() {
  const char* who = std::getenv("STEER_FAIL_RANK");
  const char* kind = std::getenv("STEER_FAIL_KIND");
  if (!who || std::atoi(who) != world().rank() || !kind || std::string(kind) != "shard") return;
  throw std::runtime_error("injected failure (STEER_FAIL_RANK=" + std::string(who) +
                           ", STEER_FAIL_KIND=shard)");
}

}  // namespace steer
