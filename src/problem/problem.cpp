#include "problem/problem.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cmath>

#include "config/json_reader.h"
#include <random>
#include <type_traits>

#include "models/registry.h"
#include "steer/backend.h"

namespace steer {

namespace {

// what set some slots of a rollout away from their nominal values: a batch entry (sweep or
// draw), the perturbation's scaling, or a variable's bounds projecting the start
struct Source {
  std::string key;
  std::string note;  // how it sets them, when the key alone does not say
  bool is_state = false;
  std::vector<int> slots;
};

std::vector<Source> sources_of(const ExperimentConfig& c) {
  std::vector<Source> src;
  for (const auto& o : c.overrides)
    src.push_back({std::string("batch.") +
                       (o.draw == BatchOverride::kSweep ? "sweep." : "randomize.") + o.name,
                   "", o.is_state, o.indices});
  for (const auto& [i, f] : c.theta_scale)
    src.push_back({"perturb.relative",
                   "(" + c.perturb.name + " scaled by " + number_text(f) + ")",
                   false,
                   {i}});
  return src;
}

// The sources that set any of `slots`, in the order they apply: the message's key is the last
// (the one that produced the value), and the note lists them all, since entries compose.
struct Blame {
  std::string key;   // empty when no source set them
  std::string note;  // "; set by A, B (note)"
};
Blame blame(const std::vector<Source>& src, bool is_state, const std::vector<int>& slots) {
  Blame b;
  std::string list;
  for (const Source& s : src) {
    if (s.is_state != is_state) continue;
    bool hit = false;
    for (int i : s.slots) hit = hit || std::find(slots.begin(), slots.end(), i) != slots.end();
    if (!hit) continue;
    const std::string item = s.key + (s.note.empty() ? "" : " " + s.note);
    if (list.find(item) == std::string::npos) list += (list.empty() ? "" : ", ") + item;
    b.key = s.key;
  }
  if (!list.empty()) b.note = "; set by " + list + " (in that order)";
  return b;
}

std::string rollouts_note(int first, int count, int B) {
  return "rollout " + std::to_string(first) + " of " + std::to_string(B) +
         (count > 1 ? " (and " + std::to_string(count - 1) + " more)" : std::string());
}

// Refuses a batch that reaches physically invalid values (build_batch, docs/config.md
// "Physical validity"). The per-slot ranges were checked at parse time for each entry alone;
// here they are checked on the values the entries compose to, then the model's conditions
// that tie slots together (check_physical).
void check_batch_physical(const ExperimentConfig& c, const Batch<double>& b,
                          const std::vector<Source>& src) {
  const int B = b.size;
  for (int pass = 0; pass < 2; ++pass) {
    const bool is_state = pass == 0;
    const int n = is_state ? b.nx : b.np;
    std::vector<char> touched(size_t(n), 0);
    for (const Source& s : src)
      if (s.is_state == is_state)
        for (int i : s.slots) touched[size_t(i)] = 1;
    for (int i = 0; i < n; ++i) {
      if (!touched[size_t(i)]) continue;
      const Range& range =
          is_state ? c.info.state_ranges[size_t(i)] : c.info.param_ranges[size_t(i)];
      int first = -1, count = 0;
      for (int r = 0; r < B; ++r) {
        const double v = is_state ? b.x0_of(r)[i] : b.theta_of(r)[i];
        if (!range.contains(v)) count += 1, first = first < 0 ? r : first;
      }
      if (count == 0) continue;
      const double v = is_state ? b.x0_of(first)[i] : b.theta_of(first)[i];
      const std::string& name =
          is_state ? c.info.state_names[size_t(i)] : c.info.param_names[size_t(i)];
      const std::string& unit =
          is_state ? c.info.state_units[size_t(i)] : c.info.param_units[size_t(i)];
      const Blame who = blame(src, is_state, {i});
      config_fail(who.key, rollouts_note(first, count, B) + " reaches " + name + " = " +
                               number_text(v) + " " + unit + ", outside its range " +
                               range.describe() + who.note + "; refused before any simulation");
    }
  }
  const ModelDef& def = model_of(c);
  if (!def.check_physical) return;
  PhysicalViolation first_bad;
  int first = -1, count = 0;
  for (int r = 0; r < B; ++r) {
    PhysicalViolation v;
    if (def.check_physical(c, b.theta_of(r), v)) continue;
    if (first < 0) first = r, first_bad = v;
    ++count;
  }
  if (first < 0) return;
  const Blame who = blame(src, false, first_bad.slots);
  // the nominal values are checked when the model is parsed, so a source is expected; without
  // one the model's own key is the place to fix
  config_fail(who.key.empty() ? first_bad.key : who.key,
              rollouts_note(first, count, B) + " is physically invalid at " + first_bad.key + ": " +
                  first_bad.what + who.note + "; refused before any simulation");
}

// the rollouts' x0 and θ after the batch's sweeps, draws and scaling (build_batch without the
// controls or the check)
void draw_batch(const ExperimentConfig& c, Batch<double>& b, int steps) {
  b.resize(c.batch_size, c.info.nx(), c.info.nu(), c.info.np(), steps);
  for (int r = 0; r < c.batch_size; ++r) {
    std::copy(c.x0.begin(), c.x0.end(), b.x0_of(r));
    std::copy(c.theta.begin(), c.theta.end(), b.theta_of(r));
    // each rollout's own observation-noise stream: (batch.seed mod 2²¹) 2³¹ + r, exact in a
    // double; a sweep of the slot below replaces it
    if (c.has_controller && c.policy.noise)
      b.theta_of(r)[c.policy.noise_seed()] = double(c.seed % (1u << 21)) * 2147483648.0 + double(r);
  }
  // overrides in config order; draws come from one seeded stream, per rollout and slot
  std::mt19937_64 rng(c.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const auto& o : c.overrides) {
    for (int r = 0; r < c.batch_size; ++r) {
      double* dst = o.is_state ? b.x0_of(r) : b.theta_of(r);
      for (int i : o.indices) {
        const double u = o.draw == BatchOverride::kSweep ? 0.0 : unit(rng);
        switch (o.draw) {
          case BatchOverride::kSweep:
            dst[i] = o.values[r];
            break;
          case BatchOverride::kUniform:
            dst[i] = o.lo + (o.hi - o.lo) * u;
            break;
          case BatchOverride::kRelative:
            dst[i] *= 1.0 + o.lo + (o.hi - o.lo) * u;
            break;
          case BatchOverride::kJitter:
            dst[i] += o.lo + (o.hi - o.lo) * u;
            break;
        }
      }
    }
  }
  for (const auto& [i, f] : c.theta_scale)
    for (int r = 0; r < c.batch_size; ++r) b.theta_of(r)[i] *= f;
  // state slots that follow drawn parameters (a robot that starts in its drawn rest shape)
  const ModelDef& def = model_of(c);
  if (def.finish_batch) def.finish_batch(c, b);
}

}  // namespace

Batch<double> build_batch(const ExperimentConfig& c) {
  Batch<double> b;
  draw_batch(c, b, c.steps);
  for (int r = 0; r < c.batch_size; ++r) {
    double* u = b.u_of(r);
    const int nu = c.info.nu();
    for (int k = 0; k < c.steps; ++k) {
      // controls.initial_file: step k at time k·dt takes the row of that time (rows at u_dt,
      // the last held); the half-step twin (dt/2) holds each row over two steps
      const double* row = c.u_init.data();
      if (c.u_rows > 0) {
        const long r = long(std::floor(k * (c.dt / c.u_dt) + 1e-9));
        row = c.u_steps.data() + size_t(std::min<long>(r, c.u_rows - 1)) * nu;
      }
      for (int j = 0; j < nu; ++j) u[size_t(k) * nu + j] = row[j];
    }
  }
  check_batch_physical(c, b, sources_of(c));
  return b;
}

ExperimentConfig perturbed_config(const ExperimentConfig& c, double r) {
  ExperimentConfig cp = c;
  for (int i : c.perturb.indices) cp.theta_scale.push_back({i, 1.0 + r});
  return cp;
}

void check_physical_inputs(const ExperimentConfig& c, bool compare) {
  // the batch, then its start: a parameter variable starts at its drawn value projected into
  // its bounds (SimProblem), which may move it out of the valid set
  {
    Batch<double> b;
    draw_batch(c, b, 0);
    std::vector<Source> src = sources_of(c);
    check_batch_physical(c, b, src);
    bool moved = false;
    for (const auto& v : c.variables) {
      if (v.kind != VariableSpec::kParameter) continue;
      bool here = false;
      for (int r = 0; r < b.size; ++r) {
        double& t = b.theta_of(r)[v.index];
        const double p = std::min(std::max(t, v.lower), v.upper);
        here = here || p != t;
        for (const auto& [j, a] : v.moves) b.theta_of(r)[j] += a * (p - t);  // moved with it
        t = p;
      }
      if (here)
        src.push_back({"variables." + v.name,
                       "(its bounds [" + number_text(v.lower) + ", " + number_text(v.upper) +
                           "] move the start)",
                       false,
                       {v.index}});
      moved = moved || here;
    }
    if (moved) check_batch_physical(c, b, src);
  }
  if (!compare && c.perturb.enabled)
    for (double r : c.perturb.relative) {
      Batch<double> b;
      const ExperimentConfig cp = perturbed_config(c, r);
      draw_batch(cp, b, 0);
      check_batch_physical(cp, b, sources_of(cp));
    }
  // compare repeat r draws its batch with batch.seed + r (its rollout 0 is the start)
  if (compare && c.has_compare)
    for (int r = 1; r < c.compare.repeats; ++r) {
      ExperimentConfig cr = c;
      cr.seed = c.seed + std::uint64_t(r);
      Batch<double> b;
      draw_batch(cr, b, 0);
      try {
        check_batch_physical(cr, b, sources_of(cr));
      } catch (const ConfigError& e) {
        throw ConfigError(std::string(e.what()) + " (compare.repeats: repeat " + std::to_string(r) +
                          " draws with batch.seed + " + std::to_string(r) + " = " +
                          std::to_string(cr.seed) + ")");
      }
    }
}

ExperimentConfig replicate_rollout0(const ExperimentConfig& c, int size) {
  ExperimentConfig r = c;
  Batch<double> b1 = build_batch(c);
  r.x0.assign(b1.x0_of(0), b1.x0_of(0) + b1.nx);
  r.theta.assign(b1.theta_of(0), b1.theta_of(0) + b1.np);
  r.overrides.clear();
  r.batch_size = size;
  return r;
}

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

ExperimentConfig rows_config(const ExperimentConfig& c, const Batch<double>& nominal,
                             const std::vector<int>& rows) {
  ExperimentConfig r = c;
  r.batch_size = int(rows.size());
  r.overrides.clear();
  r.theta_scale.clear();
  r.share_groups = 1;
  if (!c.world_weights.empty()) {
    r.world_weights.clear();
    for (int row : rows) r.world_weights.push_back(c.world_weights[size_t(row)]);
  }
  // build_batch assigns a sweep's value as is, so the rows come back bit for bit (the model's
  // finish_batch, which derives state slots from θ, gives the same values again)
  auto sweep_slots = [&](bool is_state, int n, const std::vector<double>& nominal_values,
                         const std::vector<std::string>& names) {
    for (int i = 0; i < n; ++i) {
      BatchOverride o;
      o.name = (is_state ? "x0." : "theta.") + names[size_t(i)];
      o.is_state = is_state;
      o.indices = {i};
      o.draw = BatchOverride::kSweep;
      bool varies = false;
      for (int row : rows) {
        const double v = is_state ? nominal.x0_of(row)[i] : nominal.theta_of(row)[i];
        varies = varies || !same_bits(v, nominal_values[size_t(i)]);
        o.values.push_back(v);
      }
      if (varies) r.overrides.push_back(std::move(o));
    }
  };
  sweep_slots(true, nominal.nx, c.x0, c.info.state_names);
  sweep_slots(false, nominal.np, c.theta, c.info.param_names);
  return r;
}

ExperimentConfig replicate_worlds(const ExperimentConfig& c, int copies) {
  std::vector<int> rows;
  for (int j = 0; j < copies; ++j)
    for (int b = 0; b < c.batch_size; ++b) rows.push_back(b);
  ExperimentConfig one_step = c;  // the batch's x0 and θ rows, without T steps of controls
  one_step.steps = 1;
  return rows_config(c, build_batch(one_step), rows);
}

HalfStepProblem::HalfStepProblem(const ExperimentConfig& c, BackendKind backend, int threads)
    : inner_(make_problem(halved_timestep(c), backend, threads)) {
  // halved_timestep doubles each control's hold, so the inner problem's variables are these:
  // a knot (hold steps at h) spans 2·hold half steps, and the inner problem sums their gradients
  batch_size_ = inner_->batch_size();
  nx_ = inner_->nx();
  steps_ = c.steps;
  lower_ = inner_->lower();
  upper_ = inner_->upper();
  names_ = inner_->var_names();
  initial_ = inner_->initial();
}

HalfStepProblem::HalfStepProblem(std::unique_ptr<Problem> inner, const HalfStepProblem& o)
    : inner_(std::move(inner)) {
  batch_size_ = inner_->batch_size();
  nx_ = o.nx_;
  steps_ = o.steps_;
  lower_ = o.lower_;
  upper_ = o.upper_;
  names_ = o.names_;
  initial_.assign(o.initial_.begin(), o.initial_.begin() + size_t(batch_size_) * o.num_vars());
}

std::unique_ptr<Problem> HalfStepProblem::leading(int n) const {
  std::unique_ptr<Problem> inner = inner_->leading(n);
  if (!inner) return nullptr;
  return std::unique_ptr<Problem>(new HalfStepProblem(std::move(inner), *this));
}

void HalfStepProblem::evaluate(const std::vector<double>& vars, bool want_grad, Evaluation& out) {
  inner_->evaluate(vars, want_grad, out);
  forward_rollout_steps = inner_->forward_rollout_steps;
  backward_rollout_steps = inner_->backward_rollout_steps;
  recomputed_rollout_steps = inner_->recomputed_rollout_steps;
}

std::vector<double> HalfStepProblem::trajectories(const std::vector<double>& vars, int n,
                                                  int stride) {
  return inner_->trajectories(vars, n, 2 * stride);
}

std::vector<double> HalfStepProblem::parameters(const std::vector<double>& vars) {
  return inner_->parameters(vars);
}

}  // namespace steer
