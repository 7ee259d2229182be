// Batch-shared variables (variables.<name>.shared, batch.groups, batch.weights): one design
// for many worlds. The rollouts of a batch are cut into G equal groups of M = B/G consecutive
// rollouts (the worlds: the batch's sweeps and draws). A shared variable has one value per
// group, every member simulates it; the other variables stay one per rollout. The group is
// then one problem in its joint variables
//   z_g = (s_g, o_{g,0}, …, o_{g,M−1})   (shared values, then each member's own ones)
// with the loss J_g = Σ_m w_m L_{gM+m}, the weights normalized to Σ_m w_m = 1 in each group,
// and the gradient ∂J_g/∂s_g = Σ_m w_m ∂L_m/∂s, ∂J_g/∂o_{g,m} = w_m ∂L_m/∂o.
// Every sum runs over m = 0 … M−1 in that order after the per-rollout evaluation, so the answer
// is the same bits at any thread count and any rank count (a SplitProblem gathers the rollouts
// in order before the sum).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "problem/problem.h"

namespace steer {

// where each of a rollout's variables goes in its group's joint row
struct SharedLayout {
  int batch = 1, groups = 1, members = 1;  // B, G, M = B/G
  int nv = 0;                              // variables per rollout
  std::vector<int> shared_cols, own_cols;  // a rollout's columns, in their order
  std::vector<double> weight;              // [B], Σ over each group = 1
  int joint_vars() const { return int(shared_cols.size() + members * own_cols.size()); }
  // per-rollout rows [B·nv] of joint rows [G·joint_vars]
  std::vector<double> expand(const std::vector<double>& joint) const;
  // joint rows of per-rollout rows: a group's shared values are its first member's
  std::vector<double> joint(const std::vector<double>& rows) const;
  // J_g per group from the members' losses [B]
  std::vector<double> group_loss(const std::vector<double>& loss) const;
  // ∂J_g/∂z_g per group [G·joint_vars] from the members' gradients [B·nv]
  std::vector<double> reduce_gradient(const std::vector<double>& grad) const;
  // the layout of the first n groups
  SharedLayout leading(int n) const;
};

// c's layout over a batch of `batch` rollouts cut into `groups` groups: c's batch (batch.size,
// batch.groups) by default; a larger batch repeats c's worlds (CMA-ES's population of designs,
// each on every world) and tiles batch.weights the same way. nv: the problem's variables per
// rollout (c.variables flattened)
SharedLayout shared_layout(const ExperimentConfig& c, int nv, int batch = 0, int groups = 0);

// the problem of per-rollout problem `inner` in its groups' joint variables. evaluate() gives
// J_g, its gradient and a diagnostics record per group (SharedProblem::merge_diag); the
// per-state queries answer for each group's first member (trajectories, parameters, centre of
// mass), or its worst one (penetration, velocity reversals). Its cost counters are the inner
// problem's.
class SharedProblem : public Problem {
 public:
  SharedProblem(Problem& inner, SharedLayout layout);  // inner outlives this
  SharedProblem(std::unique_ptr<Problem> inner, SharedLayout layout);
  const SharedLayout& layout() const { return layout_; }
  // Clip each member's gradient row to L2 norm `clip` before the group's sum (0: off; the
  // optimizer's optimizer.gradient_clip with shared variables), the norm taken of g_i·scale_i
  // (the optimizer's units: each variable's span under optimizer.normalized; empty: 1). A chaotic
  // contact world whose gradient spikes 10²–10⁴ times the others' would otherwise set the
  // direction of the whole group's step. The gradient is then no longer ∂J_g/∂z_g: the
  // validator's problems keep no clip.
  void clip_members(double clip, std::vector<double> scale = {}) {
    member_clip_ = clip;
    member_scale_ = std::move(scale);
  }
  Problem& inner() { return *inner_; }

  void evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) override;
  std::vector<double> trajectories(const std::vector<double>& vars, int n, int stride) override;
  std::vector<double> parameters(const std::vector<double>& vars) override;
  std::vector<double> com_displacement(const std::vector<double>& vars, int n, int axis) override;
  std::vector<double> max_penetration(const std::vector<double>& vars, int n) override;
  std::vector<double> min_volume_ratio(const std::vector<double>& vars, int n) override;
  std::vector<VelocityReversals> velocity_reversals(const std::vector<double>& vars,
                                                    int n) override;
  std::unique_ptr<Problem> leading(int n) const override;

  // a group's record from its members' (w: their weights): contact-steps and recomputed steps
  // add up, the contact hash is FNV-1a over the members' hashes, counts and landing steps (so it
  // changes when any member's contact set does), nonfinite when any member is, energies and
  // kinetic maxima their largest, conservative when all are; the adjoint norms are those of the
  // stacked adjoint of J_g, √Σ (w_m ‖λ_m‖)²; the landing step the first member's
  static RolloutDiag merge_diag(const RolloutDiag* d, const double* w, int members);

 private:
  void set_shape();
  void sync_counters();
  std::unique_ptr<Problem> owned_;
  Problem* inner_;
  SharedLayout layout_;
  double member_clip_ = 0;
  std::vector<double> member_scale_;  // [nv], empty: 1
};

}  // namespace steer
