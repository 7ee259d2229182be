// Analyses a run adds to its artifact beyond optimize-and-validate: the gradient across
// horizons (horizon_sweep), the optimum under a parameter perturbation (perturb ->
// narrow_valley), and terminal success rates (success_tolerance). Each returns its
// artifact section, appends human lines to `summary` and counts its labels.
#pragma once

#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "problem/problem.h"
#include "steer/backend.h"

namespace steer {

// per horizon T: ‖∂L/∂u_0‖/‖∂L/∂u_{T−1}‖ and ‖λ_0‖/‖λ_seed‖ per rollout, the validation at the
// start with its labels, and timings. progress, when given, is called with (horizons done,
// horizons in all) after each horizon; it only reports.
nlohmann::json run_horizon_sweep(const ExperimentConfig& c, BackendKind backend,
                                 std::ostringstream& summary, std::map<std::string, int>& labels,
                                 const std::function<void(long long, long long)>& progress = {});

// the loss at vars with the perturb parameter scaled by (1 + r), per r and rollout, against
// loss_opt; narrow_valley where it rises by more than (factor − 1)|L| + absolute
nlohmann::json run_perturbation(const ExperimentConfig& c, BackendKind backend,
                                const std::vector<double>& vars,
                                const std::vector<double>& loss_opt, std::ostringstream& summary,
                                std::map<std::string, int>& labels);

// |x_T[i] − target_i| of every terminal term, per rollout, and the fraction of rollouts
// within c.success_tolerance on all terms
nlohmann::json terminal_success(const ExperimentConfig& c, Problem& p,
                                const std::vector<double>& vars, std::ostringstream& summary);

}  // namespace steer
