// A batch problem split across ranks (src/parallel/split_problem.h).
#include "parallel/split_problem.h"

#include <chrono>
#include <cstring>
#include <exception>
#include <new>

namespace steer {

namespace {

// x0 and θ of c's whole batch as build_batch draws them (one control step: the controls are
// the config's u_init in every rollout and are not part of a block's config)
Batch<double> nominal_rows(const ExperimentConfig& c) {
  ExperimentConfig c1 = c;
  c1.steps = 1;
  return build_batch(c1);
}

// rows of `per` values each of rollouts [begin, begin + count) of `all`
std::vector<double> rows(const std::vector<double>& all, size_t per, Block b) {
  return std::vector<double>(all.begin() + size_t(b.begin) * per,
                             all.begin() + size_t(b.begin + b.count) * per);
}

// the wire form of VelocityReversals without its name (names travel as one string)
struct ReversalBits {
  int component, count, first_step, last_step;
  double median_jump, largest;
};

}  // namespace

ExperimentConfig block_config(const ExperimentConfig& c, const Batch<double>& nominal, int begin,
                              int count) {
  std::vector<int> rows;
  for (int k = 0; k < count; ++k) rows.push_back(begin + k);
  return rows_config(c, nominal, rows);
}

SplitProblem::SplitProblem(int batch, BlockProblemFactory make) : make_(std::move(make)) {
  Communicator& w = world();
  block_ = block_of(batch, w.rank(), w.size());
  std::unique_ptr<Problem>
      shape;  // a rank without rollouts learns the variables from one rollout's problem
  guarded("building the problem", [&] {
    if (block_.count > 0)
      local_ = make_(block_.begin, block_.count);
    else
      shape = make_(0, 1);
  });
  const Problem& p = local_ ? *local_ : *shape;
  batch_size_ = batch;
  nx_ = p.nx();
  steps_ = p.steps();
  lower_ = p.lower();
  upper_ = p.upper();
  names_ = p.var_names();
  initial_ = allgather_values(local_ ? local_->initial() : std::vector<double>());
}

template <class Fn>
void SplitProblem::guarded(const char* what, Fn&& fn) {
  std::string error;
  try {
    fn();
  } catch (const std::bad_alloc&) {
    error = std::string("out of memory ") + what;
  } catch (const std::exception& e) {
    error = std::string(what) + ": " + e.what();
  } catch (...) {
    error = std::string(what) + ": an unknown exception";
  }
  agree(error, rollouts_text(block_));
}

std::vector<double> SplitProblem::mine(const std::vector<double>& all, size_t per) const {
  return rows(all, per, block_);
}

int SplitProblem::leading_here(int n) const {
  return std::max(0, std::min(n, block_.begin + block_.count) - block_.begin);
}

template <class Fn>
void SplitProblem::timed_call(bool want_grad, Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (want_grad) {
    gradient_seconds += secs;
    ++gradient_calls;
  } else {
    forward_seconds += secs;
    ++forward_calls;
  }
}

void SplitProblem::run_block(const std::vector<double>& vars, bool want_grad, Evaluation& out) {
  out = Evaluation();
  const long long evaluation = ++evaluations_;
  guarded(want_grad ? "in a forward and backward pass" : "in a forward pass", [&] {
    injected_failure(evaluation);
    if (!local_) return;
    const long long f = local_->forward_rollout_steps, b = local_->backward_rollout_steps,
                    r = local_->recomputed_rollout_steps;
    local_->evaluate(vars, want_grad, out);
    pending_[0] += local_->forward_rollout_steps - f;
    pending_[1] += local_->backward_rollout_steps - b;
    pending_[2] += local_->recomputed_rollout_steps - r;
  });
}

void SplitProblem::evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) {
  const size_t nv = size_t(num_vars());
  if (vars.size() != size_t(batch_size_) * nv)
    throw std::invalid_argument("evaluate: vars has the wrong size");
  timed_call(want_grad, [&] {
    Evaluation ev;
    run_block(mine(vars, nv), want_grad, ev);
    out.loss = allgather_values(ev.loss);
    out.grad = want_grad ? allgather_values(ev.grad) : std::vector<double>();
    out.diag = allgather_values(ev.diag);
    settle_counters();
  });
}

void SplitProblem::evaluate_block(const std::vector<double>& vars, bool want_grad,
                                  Evaluation& out) {
  if (vars.size() != size_t(block_.count) * size_t(num_vars()))
    throw std::invalid_argument("evaluate_block: vars has the wrong size");
  timed_call(want_grad, [&] { run_block(vars, want_grad, out); });
}

void SplitProblem::settle_counters() {
  const std::vector<long long> all =
      allgather_values(std::vector<long long>(pending_, pending_ + 3));
  for (size_t r = 0; r < all.size(); r += 3) {
    forward_rollout_steps += all[r];
    backward_rollout_steps += all[r + 1];
    recomputed_rollout_steps += all[r + 2];
  }
  pending_[0] = pending_[1] = pending_[2] = 0;
}

std::vector<double> SplitProblem::gather_rows(const std::vector<double>& rows_here, size_t per,
                                              int n) const {
  const int here = n < 0 ? block_.count : leading_here(std::min(n, batch_size_));
  const size_t keep = std::min(rows_here.size(), size_t(here) * per);
  return allgather_values(std::vector<double>(rows_here.begin(), rows_here.begin() + keep));
}

BlockProblem::BlockProblem(SplitProblem& whole) : whole_(whole) {
  batch_size_ = whole.block().count;
  nx_ = whole.nx();
  steps_ = whole.steps();
  lower_ = whole.lower();
  upper_ = whole.upper();
  names_ = whole.var_names();
  initial_ = whole.block_rows(whole.initial(), size_t(whole.num_vars()));
}

std::vector<double> BlockProblem::trajectories(const std::vector<double>&, int, int) {
  throw std::logic_error("BlockProblem: trajectories are recorded on the whole SplitProblem");
}

std::vector<double> BlockProblem::parameters(const std::vector<double>&) {
  throw std::logic_error("BlockProblem: parameters are read from the whole SplitProblem");
}

template <class Fn>
std::vector<double> SplitProblem::gather_leading(const std::vector<double>& vars, int n,
                                                 const char* what, Fn&& fn) {
  std::vector<double> part;
  const int here = leading_here(std::min(n, batch_size_));
  guarded(what, [&] {
    if (here > 0) part = fn(*local_, mine(vars, size_t(num_vars())), here);
  });
  return allgather_values(part);
}

std::vector<double> SplitProblem::trajectories(const std::vector<double>& vars, int n, int stride) {
  return gather_leading(vars, n, "recording trajectories",
                        [stride](Problem& p, const std::vector<double>& v, int here) {
                          return p.trajectories(v, here, stride);
                        });
}

std::vector<double> SplitProblem::parameters(const std::vector<double>& vars) {
  return gather_leading(
      vars, batch_size_, "setting parameters",
      [](Problem& p, const std::vector<double>& v, int) { return p.parameters(v); });
}

std::vector<double> SplitProblem::com_displacement(const std::vector<double>& vars, int n,
                                                   int axis) {
  return gather_leading(vars, n, "measuring the centre of mass",
                        [axis](Problem& p, const std::vector<double>& v, int here) {
                          return p.com_displacement(v, here, axis);
                        });
}

std::vector<double> SplitProblem::max_penetration(const std::vector<double>& vars, int n) {
  return gather_leading(vars, n, "measuring penetration",
                        [](Problem& p, const std::vector<double>& v, int here) {
                          return p.max_penetration(v, here);
                        });
}

std::vector<double> SplitProblem::min_volume_ratio(const std::vector<double>& vars, int n) {
  return gather_leading(vars, n, "measuring element volume ratios",
                        [](Problem& p, const std::vector<double>& v, int here) {
                          return p.min_volume_ratio(v, here);
                        });
}

std::vector<VelocityReversals> SplitProblem::velocity_reversals(const std::vector<double>& vars,
                                                                int n) {
  std::vector<VelocityReversals> v;
  const int here = leading_here(std::min(n, batch_size_));
  guarded("counting velocity reversals", [&] {
    if (here > 0) v = local_->velocity_reversals(mine(vars, size_t(num_vars())), here);
  });
  std::vector<ReversalBits> bits;
  std::string names;
  for (const VelocityReversals& r : v) {
    bits.push_back({r.component, r.count, r.first_step, r.last_step, r.median_jump, r.largest});
    names += r.name + '\n';
  }
  const std::vector<ReversalBits> all = allgather_values(bits);
  std::string all_names;
  for (const std::string& s : allgather_strings(names)) all_names += s;
  std::vector<VelocityReversals> out;
  size_t at = 0;
  for (const ReversalBits& b : all) {
    const size_t end = all_names.find('\n', at);
    out.push_back({b.component, all_names.substr(at, end - at), b.count, b.first_step, b.last_step,
                   b.median_jump, b.largest});
    at = end + 1;
  }
  return out;
}

std::unique_ptr<Problem> SplitProblem::leading(int n) const {
  if (n <= 0 || n > batch_size_) return nullptr;
  return std::make_unique<SplitProblem>(n, make_);
}

namespace {

// the whole-batch problem make(c), or a SplitProblem whose blocks are make(block config)
template <class Make>
std::unique_ptr<Problem> split_or_whole(const ExperimentConfig& c, Make make) {
  if (world().size() == 1 || c.batch_size < 2) return make(c);
  auto whole = std::make_shared<const ExperimentConfig>(c);
  auto nominal = std::make_shared<const Batch<double>>(nominal_rows(c));
  return std::make_unique<SplitProblem>(c.batch_size, [whole, nominal, make](int begin, int count) {
    return make(block_config(*whole, *nominal, begin, count));
  });
}

}  // namespace

std::unique_ptr<Problem> make_split_problem(const ExperimentConfig& c, BackendKind backend,
                                            int threads) {
  return split_or_whole(c, [backend, threads](const ExperimentConfig& x) {
    return make_problem(x, backend, threads);
  });
}

std::unique_ptr<Problem> make_split_half_step(const ExperimentConfig& c, BackendKind backend,
                                              int threads) {
  return split_or_whole(c,
                        [backend, threads](const ExperimentConfig& x) -> std::unique_ptr<Problem> {
                          return std::make_unique<HalfStepProblem>(x, backend, threads);
                        });
}

}  // namespace steer
