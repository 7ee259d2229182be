// Batch-shared variables: the joint layout and the group problem (shared_problem.h).
#include "problem/shared_problem.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace steer {

std::vector<double> SharedLayout::expand(const std::vector<double>& joint) const {
  const size_t nj = size_t(joint_vars()), ns = shared_cols.size(), no = own_cols.size();
  if (joint.size() != size_t(groups) * nj)
    throw std::invalid_argument("shared variables: expected " + std::to_string(groups * nj) +
                                " joint values, got " + std::to_string(joint.size()));
  std::vector<double> rows(size_t(batch) * nv, 0.0);
  for (int b = 0; b < batch; ++b) {
    const double* z = joint.data() + size_t(b / members) * nj;
    double* r = rows.data() + size_t(b) * nv;
    for (size_t i = 0; i < ns; ++i) r[shared_cols[i]] = z[i];
    const double* own = z + ns + size_t(b % members) * no;
    for (size_t i = 0; i < no; ++i) r[own_cols[i]] = own[i];
  }
  return rows;
}

std::vector<double> SharedLayout::joint(const std::vector<double>& rows) const {
  const size_t nj = size_t(joint_vars()), ns = shared_cols.size(), no = own_cols.size();
  std::vector<double> z(size_t(groups) * nj, 0.0);
  for (int b = 0; b < batch; ++b) {
    const double* r = rows.data() + size_t(b) * nv;
    double* zg = z.data() + size_t(b / members) * nj;
    if (b % members == 0)
      for (size_t i = 0; i < ns; ++i) zg[i] = r[shared_cols[i]];
    double* own = zg + ns + size_t(b % members) * no;
    for (size_t i = 0; i < no; ++i) own[i] = r[own_cols[i]];
  }
  return z;
}

std::vector<double> SharedLayout::group_loss(const std::vector<double>& loss) const {
  std::vector<double> J(size_t(groups), 0.0);
  for (int b = 0; b < batch; ++b) J[size_t(b / members)] += weight[size_t(b)] * loss[size_t(b)];
  return J;
}

std::vector<double> SharedLayout::reduce_gradient(const std::vector<double>& grad) const {
  const size_t nj = size_t(joint_vars()), ns = shared_cols.size(), no = own_cols.size();
  std::vector<double> g(size_t(groups) * nj, 0.0);
  for (int b = 0; b < batch; ++b) {
    const double w = weight[size_t(b)];
    const double* gr = grad.data() + size_t(b) * nv;
    double* gg = g.data() + size_t(b / members) * nj;
    for (size_t i = 0; i < ns; ++i) gg[i] += w * gr[shared_cols[i]];
    double* own = gg + ns + size_t(b % members) * no;
    for (size_t i = 0; i < no; ++i) own[i] = w * gr[own_cols[i]];
  }
  return g;
}

SharedLayout SharedLayout::leading(int n) const {
  SharedLayout l = *this;
  l.groups = n;
  l.batch = n * members;
  l.weight.resize(size_t(l.batch));
  return l;
}

SharedLayout shared_layout(const ExperimentConfig& c, int nv, int batch, int groups) {
  SharedLayout l;
  l.batch = batch > 0 ? batch : c.batch_size;
  l.groups = groups > 0 ? groups : c.share_groups;
  if (l.groups < 1 || l.batch % l.groups != 0)
    throw std::invalid_argument("shared variables: " + std::to_string(l.groups) +
                                " groups do not divide a batch of " + std::to_string(l.batch));
  l.members = l.batch / l.groups;
  l.nv = nv;
  int col = 0;
  for (const auto& v : c.variables)
    for (int k = 0; k < v.length(c.steps); ++k)
      (v.shared ? l.shared_cols : l.own_cols).push_back(col++);
  if (col != nv)
    throw std::logic_error("shared variables: the config's variables flatten to " +
                           std::to_string(col) + " values, the problem has " + std::to_string(nv));
  // weights: c's per world, repeated over a larger batch, then normalized per group in order
  l.weight.resize(size_t(l.batch));
  for (int b = 0; b < l.batch; ++b)
    l.weight[size_t(b)] = c.world_weights.empty() ? 1.0 : c.world_weights[size_t(b % c.batch_size)];
  for (int g = 0; g < l.groups; ++g) {
    double sum = 0;
    for (int m = 0; m < l.members; ++m) sum += l.weight[size_t(g * l.members + m)];
    for (int m = 0; m < l.members; ++m) l.weight[size_t(g * l.members + m)] /= sum;
  }
  return l;
}

SharedProblem::SharedProblem(Problem& inner, SharedLayout layout)
    : inner_(&inner), layout_(std::move(layout)) {
  set_shape();
}

SharedProblem::SharedProblem(std::unique_ptr<Problem> inner, SharedLayout layout)
    : owned_(std::move(inner)), inner_(owned_.get()), layout_(std::move(layout)) {
  set_shape();
}

void SharedProblem::set_shape() {
  const SharedLayout& l = layout_;
  if (inner_->batch_size() != l.batch || inner_->num_vars() != l.nv)
    throw std::logic_error("shared variables: the layout is for " + std::to_string(l.batch) +
                           " rollouts of " + std::to_string(l.nv) + " variables, the problem has " +
                           std::to_string(inner_->batch_size()) + " of " +
                           std::to_string(inner_->num_vars()));
  batch_size_ = l.groups;
  nx_ = inner_->nx();
  steps_ = inner_->steps();
  const auto& names = inner_->var_names();
  lower_.clear(), upper_.clear(), names_.clear();
  for (int c : l.shared_cols) {
    lower_.push_back(inner_->lower()[size_t(c)]);
    upper_.push_back(inner_->upper()[size_t(c)]);
    names_.push_back(names[size_t(c)]);
  }
  for (int m = 0; m < l.members; ++m)
    for (int c : l.own_cols) {
      lower_.push_back(inner_->lower()[size_t(c)]);
      upper_.push_back(inner_->upper()[size_t(c)]);
      names_.push_back(l.members == 1 ? names[size_t(c)]
                                      : names[size_t(c)] + "@" + std::to_string(m));
    }
  initial_ = l.joint(inner_->initial());
  sync_counters();
}

void SharedProblem::sync_counters() {
  const Problem& in = *inner_;
  forward_rollout_steps = in.forward_rollout_steps;
  backward_rollout_steps = in.backward_rollout_steps;
  recomputed_rollout_steps = in.recomputed_rollout_steps;
  forward_seconds = in.forward_seconds;
  gradient_seconds = in.gradient_seconds;
  forward_calls = in.forward_calls;
  gradient_calls = in.gradient_calls;
}

RolloutDiag SharedProblem::merge_diag(const RolloutDiag* d, const double* w, int members) {
  RolloutDiag g = d[0];
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a offset basis
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xffu)) * 1099511628211ull;
  };
  double seed2 = 0, x02 = 0, ufirst2 = 0, ulast2 = 0;
  g.contact_steps = 0;
  g.recompute_steps = 0;
  for (int m = 0; m < members; ++m) {
    const RolloutDiag& r = d[m];
    mix(r.contact_hash), mix(std::uint64_t(r.contact_steps)),
        mix(std::uint64_t(std::int64_t(r.event_step)));
    g.contact_steps += r.contact_steps;
    g.recompute_steps += r.recompute_steps;
    g.nonfinite = std::max(g.nonfinite, r.nonfinite);
    g.energy_max_dev = std::max(g.energy_max_dev, r.energy_max_dev);
    g.kinetic_max = std::max(g.kinetic_max, r.kinetic_max);
    g.conservative = std::min(g.conservative, r.conservative);
    seed2 += (w[m] * r.adj_seed_norm) * (w[m] * r.adj_seed_norm);
    x02 += (w[m] * r.adj_x0_norm) * (w[m] * r.adj_x0_norm);
    ufirst2 += (w[m] * r.grad_u_first_norm) * (w[m] * r.grad_u_first_norm);
    ulast2 += (w[m] * r.grad_u_last_norm) * (w[m] * r.grad_u_last_norm);
  }
  g.contact_hash = h;
  g.adj_seed_norm = std::sqrt(seed2);
  g.adj_x0_norm = std::sqrt(x02);
  g.grad_u_first_norm = std::sqrt(ufirst2);
  g.grad_u_last_norm = std::sqrt(ulast2);
  return g;
}

void SharedProblem::evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) {
  const SharedLayout& l = layout_;
  Evaluation e;
  inner_->evaluate(l.expand(vars), want_grad, e);
  sync_counters();
  if (want_grad && member_clip_ > 0)
    for (int b = 0; b < l.batch; ++b) {
      double* g = e.grad.data() + size_t(b) * size_t(l.nv);
      double n2 = 0;
      for (int i = 0; i < l.nv; ++i) {
        const double gi = member_scale_.empty() ? g[i] : g[i] * member_scale_[size_t(i)];
        n2 += gi * gi;
      }
      // a non-finite row stays as it is: the optimizer skips a group whose gradient is not finite
      if (std::isfinite(n2) && n2 > member_clip_ * member_clip_) {
        const double s = member_clip_ / std::sqrt(n2);
        for (int i = 0; i < l.nv; ++i) g[i] *= s;
      }
    }
  out.loss = l.group_loss(e.loss);
  out.grad = want_grad ? l.reduce_gradient(e.grad) : std::vector<double>();
  out.diag.resize(size_t(l.groups));
  for (int g = 0; g < l.groups; ++g)
    out.diag[size_t(g)] = merge_diag(e.diag.data() + size_t(g) * l.members,
                                     l.weight.data() + size_t(g) * l.members, l.members);
}

namespace {

// rows of groups [0, n)'s first members from per-rollout rows of `per` values
std::vector<double> first_members(const std::vector<double>& rows, size_t per, int n, int members) {
  std::vector<double> out;
  out.reserve(size_t(n) * per);
  for (int g = 0; g < n; ++g) {
    const size_t at = size_t(g) * size_t(members) * per;
    if (at + per > rows.size()) break;
    out.insert(out.end(), rows.begin() + long(at), rows.begin() + long(at + per));
  }
  return out;
}

}  // namespace

std::vector<double> SharedProblem::trajectories(const std::vector<double>& vars, int n,
                                                int stride) {
  const int M = layout_.members;
  const int inner_n = (n - 1) * M + 1;  // through group n − 1's first member
  std::vector<double> t = inner_->trajectories(layout_.expand(vars), inner_n, stride);
  sync_counters();
  if (inner_n <= 0 || t.empty()) return t;
  return first_members(t, t.size() / size_t(inner_n), n, M);
}

std::vector<double> SharedProblem::parameters(const std::vector<double>& vars) {
  std::vector<double> th = inner_->parameters(layout_.expand(vars));
  return first_members(th, th.size() / size_t(layout_.batch), layout_.groups, layout_.members);
}

std::vector<double> SharedProblem::com_displacement(const std::vector<double>& vars, int n,
                                                    int axis) {
  const int inner_n = (n - 1) * layout_.members + 1;
  std::vector<double> d = inner_->com_displacement(layout_.expand(vars), inner_n, axis);
  sync_counters();
  return d.empty() ? d : first_members(d, 1, n, layout_.members);
}

std::vector<double> SharedProblem::max_penetration(const std::vector<double>& vars, int n) {
  const int M = layout_.members;
  std::vector<double> d = inner_->max_penetration(layout_.expand(vars), n * M);
  sync_counters();
  if (d.empty()) return d;
  std::vector<double> out(size_t(n), -INFINITY);
  for (int b = 0; b < n * M; ++b) out[size_t(b / M)] = std::max(out[size_t(b / M)], d[size_t(b)]);
  return out;
}

std::vector<double> SharedProblem::min_volume_ratio(const std::vector<double>& vars, int n) {
  const int M = layout_.members;
  std::vector<double> d = inner_->min_volume_ratio(layout_.expand(vars), n * M);
  sync_counters();
  if (d.empty()) return d;
  std::vector<double> out(size_t(n), INFINITY);
  for (int b = 0; b < n * M; ++b) out[size_t(b / M)] = std::min(out[size_t(b / M)], d[size_t(b)]);
  return out;
}

std::vector<VelocityReversals> SharedProblem::velocity_reversals(const std::vector<double>& vars,
                                                                 int n) {
  const int M = layout_.members;
  std::vector<VelocityReversals> r = inner_->velocity_reversals(layout_.expand(vars), n * M);
  sync_counters();
  if (r.empty()) return r;
  std::vector<VelocityReversals> out(static_cast<size_t>(n));
  for (int b = 0; b < n * M; ++b)
    if (b % M == 0 || r[size_t(b)].count > out[size_t(b / M)].count)
      out[size_t(b / M)] = r[size_t(b)];
  return out;
}

std::unique_ptr<Problem> SharedProblem::leading(int n) const {
  if (n <= 0 || n > layout_.groups) return nullptr;
  std::unique_ptr<Problem> cut = inner_->leading(n * layout_.members);
  if (!cut) return nullptr;
  return std::make_unique<SharedProblem>(std::move(cut), layout_.leading(n));
}

}  // namespace steer
