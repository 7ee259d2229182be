#include "experiment/checkpoint.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "config/json_reader.h"
#include "experiment/artifact.h"
#include "experiment/stop_request.h"

namespace steer {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kRecordMagic = 0x53455631;  // "SEV1": one logged evaluation
constexpr const char* kFormat = "steer.checkpoint/1";

// diagnostics are logged as raw bytes: the struct must stay plain data
static_assert(std::is_trivially_copyable<RolloutDiag>::value, "RolloutDiag is logged as raw bytes");

struct RecordHeader {
  std::uint32_t magic;
  std::uint32_t want_grad;
  std::uint64_t vars_hash;
  std::uint64_t n_loss, n_grad, n_diag;
};

// FNV-1a over the variables' bits: a replayed evaluation must be asked for at exactly the
// point the logged one was
std::uint64_t hash_bits(const std::vector<double>& v) {
  std::uint64_t h = 1469598103934665603ull;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(double); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h ^ v.size();
}

template <class T>
void append_raw(std::vector<char>& out, const T* p, size_t n) {
  const char* b = reinterpret_cast<const char*>(p);
  out.insert(out.end(), b, b + n * sizeof(T));
}

template <class T>
void read_raw(const std::vector<char>& in, size_t& pos, T* p, size_t n) {
  const size_t bytes = n * sizeof(T);
  if (pos + bytes > in.size())
    throw std::runtime_error("checkpoint: the evaluation log is shorter than state.json says");
  std::memcpy(p, in.data() + pos, bytes);
  pos += bytes;
}

// appends and flushes to disk
void append_and_sync(const fs::path& p, const std::vector<char>& bytes) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0)
    throw std::runtime_error("checkpoint: cannot open " + p.string() + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      throw std::runtime_error("checkpoint: cannot write " + p.string() + ": " +
                               std::strerror(errno));
    }
    done += size_t(n);
  }
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("checkpoint: cannot flush " + p.string());
}

int lock_folder(const fs::path& dir) {
  const int fd = ::open((dir / "lock").c_str(), O_RDWR | O_CREAT, 0644);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -2;
  }
  return fd;
}

// the first key path where two JSON values differ, for the changed-config message
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b) {
  const nlohmann::json patch = nlohmann::json::diff(a, b);
  if (patch.empty()) return "";
  std::string path = patch[0].value("path", std::string("/"));
  // "/effective_config/model/stiffness" -> "model.stiffness"
  const std::string prefix = "/effective_config/";
  if (path.rfind(prefix, 0) == 0)
    path = path.substr(prefix.size());
  else if (!path.empty() && path[0] == '/')
    path = path.substr(1);
  for (char& ch : path)
    if (ch == '/') ch = '.';
  return path.empty() ? "(root)" : path;
}

}  // namespace

nlohmann::json checkpoint_identity(const nlohmann::json& effective_config,
                                   const std::string& command) {
  nlohmann::json e = effective_config;
  if (e.contains("output") && e["output"].is_object()) e["output"].erase("dir");
  return {{"format", kFormat},
          {"command", command},
          {"steer_version", STEER_VERSION},
          {"diag_bytes", sizeof(RolloutDiag)},
          {"effective_config", e}};
}

RunCheckpoint::RunCheckpoint(std::string out_dir, std::string run_name, nlohmann::json identity,
                             CheckpointOptions options)
    : out_dir_(std::move(out_dir)),
      run_name_(std::move(run_name)),
      identity_(std::move(identity)),
      options_(options) {}

std::unique_ptr<RunCheckpoint> RunCheckpoint::open_for_resume(const std::string& dir,
                                                              const nlohmann::json& identity,
                                                              CheckpointOptions options,
                                                              bool follower) {
  auto fail = [&](const std::string& what) {
    throw ConfigError("--resume: '" + dir + "' " + what);
  };
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("is not a folder");
  const fs::path state_path = fs::path(dir) / "state.json";
  std::ifstream f(state_path);
  if (!f)
    fail(
        "holds no state.json: not a checkpoint folder (steer run writes <out>/<run "
        "name>.checkpoint)");
  std::stringstream ss;
  ss << f.rdbuf();
  nlohmann::json state;
  try {
    state = nlohmann::json::parse(ss.str());
  } catch (const std::exception&) {
    fail("has an unreadable state.json");
  }
  if (!state.is_object() || state.value("format", std::string()) != kFormat ||
      !state.contains("identity") || !state.contains("run_name") || !state.contains("logged") ||
      !state.contains("log_bytes"))
    fail("has a state.json of another format (expected " + std::string(kFormat) + ")");
  const nlohmann::json& saved_identity = state["identity"];
  if (saved_identity != identity) {
    if (saved_identity.value("steer_version", std::string()) !=
            identity.value("steer_version", std::string()) ||
        saved_identity.value("diag_bytes", 0) != identity.value("diag_bytes", 0))
      fail("was written by steer " + saved_identity.value("steer_version", std::string("?")) +
           ", this is steer " + identity.value("steer_version", std::string("?")) +
           "; rerun without --resume");
    fail("was written for a different config: " + first_difference(saved_identity, identity) +
         " differs (a resumed run must have the same effective config and overrides; only --out "
         "may change)");
  }
  std::unique_ptr<RunCheckpoint> ck(new RunCheckpoint());
  ck->follower_ = follower;
  if (follower) options.enabled = false;
  if (!follower) {
    ck->lock_fd_ = lock_folder(dir);
    if (ck->lock_fd_ == -2) fail("is in use by another steer process");
    if (ck->lock_fd_ < 0) fail("is not writable");
  }
  ck->dir_ = dir;
  ck->out_dir_ = fs::path(dir).parent_path().string();
  if (ck->out_dir_.empty()) ck->out_dir_ = ".";
  ck->run_name_ = state["run_name"].get<std::string>();
  ck->identity_ = identity;
  ck->options_ = options;
  ck->saved_run_ = state.value("run", nlohmann::json());
  ck->saved_counters_ = state.value("counters", nlohmann::json());
  ck->replay_count_ = state["logged"].get<long long>();
  ck->logged_ = ck->replay_count_;
  ck->valid_bytes_ = state["log_bytes"].get<std::uint64_t>();
  // the log up to its valid length; a kill mid-append left bytes past it, cut here so that
  // new records follow the last complete one
  const fs::path log_path = fs::path(dir) / "evaluations.bin";
  ck->replay_log_.resize(size_t(ck->valid_bytes_));
  if (ck->valid_bytes_ > 0) {
    std::ifstream lf(log_path, std::ios::binary);
    if (!lf || !lf.read(ck->replay_log_.data(), std::streamsize(ck->valid_bytes_)))
      fail("has an evaluation log shorter than state.json records");
  }
  if (!follower && fs::exists(log_path, ec) &&
      ::truncate(log_path.c_str(), off_t(ck->valid_bytes_)) != 0)
    fail("has an evaluation log that cannot be truncated: " + std::string(std::strerror(errno)));
  ck->resuming_ = true;
  ck->replay_done_ = ck->replay_count_ == 0;
  return ck;
}

RunCheckpoint::~RunCheckpoint() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void RunCheckpoint::watch(std::vector<Problem*> counted,
                          std::function<nlohmann::json()> run_state) {
  counted_ = std::move(counted);
  run_state_ = std::move(run_state);
}

nlohmann::json RunCheckpoint::counters() const {
  nlohmann::json a = nlohmann::json::array();
  for (const Problem* p : counted_)
    a.push_back({{"forward_rollout_steps", p->forward_rollout_steps},
                 {"backward_rollout_steps", p->backward_rollout_steps},
                 {"recomputed_rollout_steps", p->recomputed_rollout_steps},
                 {"forward_seconds", p->forward_seconds},
                 {"gradient_seconds", p->gradient_seconds},
                 {"forward_calls", p->forward_calls},
                 {"gradient_calls", p->gradient_calls}});
  return a;
}

void RunCheckpoint::restore_counters() {
  if (!saved_counters_.is_array() || saved_counters_.size() != counted_.size())
    throw std::runtime_error(
        "checkpoint: the saved cost counters do not match this run's problems");
  for (size_t i = 0; i < counted_.size(); ++i) {
    const nlohmann::json& s = saved_counters_[i];
    Problem* p = counted_[i];
    p->forward_rollout_steps = s["forward_rollout_steps"].get<long long>();
    p->backward_rollout_steps = s["backward_rollout_steps"].get<long long>();
    p->recomputed_rollout_steps = s["recomputed_rollout_steps"].get<long long>();
    p->forward_seconds = s["forward_seconds"].get<double>();
    p->gradient_seconds = s["gradient_seconds"].get<double>();
    p->forward_calls = s["forward_calls"].get<int>();
    p->gradient_calls = s["gradient_calls"].get<int>();
  }
}

bool RunCheckpoint::replay(const std::vector<double>& vars, bool want_grad, Evaluation& out) {
  if (replay_done_) return false;
  if (replayed_ >= replay_count_) {
    replay_done_ = true;
    restore_counters();
    return false;
  }
  RecordHeader h;
  read_raw(replay_log_, replay_pos_, &h, 1);
  if (h.magic != kRecordMagic)
    throw std::runtime_error("checkpoint: the evaluation log is damaged at record " +
                             std::to_string(replayed_));
  if (h.vars_hash != hash_bits(vars) || h.want_grad != std::uint32_t(want_grad))
    throw std::runtime_error(
        "checkpoint: the resumed optimizer asked for a different point than the logged run at "
        "evaluation " +
        std::to_string(replayed_) +
        "; the checkpoint cannot be resumed bit for bit (rerun without --resume)");
  out.loss.resize(size_t(h.n_loss));
  out.grad.resize(size_t(h.n_grad));
  out.diag.resize(size_t(h.n_diag));
  read_raw(replay_log_, replay_pos_, out.loss.data(), out.loss.size());
  read_raw(replay_log_, replay_pos_, out.grad.data(), out.grad.size());
  read_raw(replay_log_, replay_pos_, out.diag.data(), out.diag.size());
  ++replayed_;
  if (replayed_ == replay_count_) {
    // the logged run's counters from here on; the log's memory is no longer needed
    replay_done_ = true;
    restore_counters();
    std::vector<char>().swap(replay_log_);
  }
  return true;
}

void RunCheckpoint::record(const std::vector<double>& vars, bool want_grad, const Evaluation& ev) {
  if (!options_.enabled) return;
  const auto t0 = std::chrono::steady_clock::now();
  RecordHeader h{kRecordMagic,   std::uint32_t(want_grad), hash_bits(vars),
                 ev.loss.size(), ev.grad.size(),           ev.diag.size()};
  append_raw(pending_, &h, 1);
  append_raw(pending_, ev.loss.data(), ev.loss.size());
  append_raw(pending_, ev.grad.data(), ev.grad.size());
  append_raw(pending_, ev.diag.data(), ev.diag.size());
  ++logged_;
  ++since_save_;
  dirty_ = true;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - last_save_).count();
  if ((options_.evaluations > 0 && since_save_ >= options_.evaluations) ||
      (options_.seconds > 0 && elapsed >= options_.seconds))
    save();
  seconds_spent_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void RunCheckpoint::optimizer_finished() {
  if (!replay_done_) {
    replay_done_ = true;
    restore_counters();
  }
  // a checkpoint that exists covers the whole optimization from here on, so a stop during the
  // final validation or the analyses resumes after the optimizer
  if (options_.enabled && !dir_.empty() && dirty_) {
    const auto t0 = std::chrono::steady_clock::now();
    save();
    seconds_spent_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
}

bool RunCheckpoint::save_now() {
  if (!options_.enabled) return false;
  if (dirty_ || dir_.empty()) save();
  return true;
}

void RunCheckpoint::save() {
  const bool first = dir_.empty();
  if (first) {
    // the first checkpoint is written into a temporary sibling and published whole, so that a
    // folder named *.checkpoint always holds a complete state; a kill before that leaves only
    // the temporary folder, which the next run into this folder removes
    const fs::path tmp = fs::path(out_dir_) / ("." + run_name_ + ".checkpoint" + temp_suffix());
    std::error_code ec;
    fs::remove_all(tmp, ec);
    if (::mkdir(tmp.c_str(), 0777) != 0)
      throw std::runtime_error("checkpoint: cannot create '" + tmp.string() +
                               "': " + std::strerror(errno));
    dir_ = tmp.string();
    lock_fd_ = lock_folder(tmp);
    if (lock_fd_ < 0) throw std::runtime_error("checkpoint: cannot lock '" + dir_ + "'");
  }
  if (!pending_.empty()) {
    append_and_sync(fs::path(dir_) / "evaluations.bin", pending_);
    valid_bytes_ += pending_.size();
    pending_.clear();
  }
  nlohmann::json state = {{"format", kFormat},
                          {"identity", identity_},
                          {"run_name", run_name_},
                          {"logged", logged_},
                          {"log_bytes", valid_bytes_},
                          {"counters", counters()},
                          {"run", run_state_ ? run_state_() : nlohmann::json()}};
  write_file_atomic((fs::path(dir_) / "state.json").string(), state.dump(1) + "\n");
  if (first) {
    // <run name>.checkpoint, or <run name>-<i>.checkpoint if a concurrent run took the name
    fs::path d = fs::path(out_dir_) / (run_name_ + ".checkpoint");
    for (int i = 1; !rename_no_replace(dir_, d.string()); ++i) {
      if (i > 100000)
        throw std::runtime_error("checkpoint: no free folder name for '" + run_name_ + "'");
      d = fs::path(out_dir_) / (run_name_ + "-" + std::to_string(i) + ".checkpoint");
    }
    dir_ = d.string();
  }
  since_save_ = 0;
  dirty_ = false;
  last_save_ = std::chrono::steady_clock::now();
}

void RunCheckpoint::remove() {
  if (dir_.empty() || follower_) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (lock_fd_ >= 0) ::close(lock_fd_), lock_fd_ = -1;
  dir_.clear();
}

RecordedProblem::RecordedProblem(Problem& inner, RunCheckpoint& checkpoint)
    : inner_(inner), checkpoint_(checkpoint) {
  batch_size_ = inner.batch_size();
  nx_ = inner.nx();
  steps_ = inner.steps();
  lower_ = inner.lower();
  upper_ = inner.upper();
  initial_ = inner.initial();
  names_ = inner.var_names();
}

void RecordedProblem::evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) {
  if (checkpoint_.replay(vars, want_grad, out)) return;
  if (stop_requested()) {
    // nothing of this evaluation is lost: the checkpoint holds every one before it
    const int sig = stop_requested();
    std::string where = "during the optimization";
    if (checkpoint_.save_now()) where += "; resume with --resume " + checkpoint_.folder();
    throw RunStopped(sig, std::string("stopped by ") + stop_signal_name(sig) + " " + where);
  }
  inner_.evaluate(vars, want_grad, out);
  checkpoint_.record(vars, want_grad, out);
}

}  // namespace steer
