// A real-coded genetic algorithm: generational, with tournament selection, simulated binary
// crossover, polynomial mutation and elitism, driven by a batched objective like CMA-ES
// (cmaes.h): all λ individuals of a generation in one call, i.e. one batched forward pass of
// the simulator, so that gradient descent, CMA-ES and the GA compare on the same budget
// counted in simulated rollouts.
//
// References
//  [DA95] K. Deb, R. B. Agrawal, "Simulated binary crossover for continuous search space",
//         Complex Systems 9(2), 115–148, 1995 (SBX, distribution index η_c).
//  [DG96] K. Deb, M. Goyal, "A combined genetic adaptive search (GeneAS) for engineering
//         design", Computer Science and Informatics 26(4), 30–45, 1996 (polynomial mutation, η_m).
//  [NSGA] K. Deb, A. Pratap, S. Agarwal, T. Meyarivan, "A fast and elitist multiobjective genetic
//         algorithm: NSGA-II", IEEE TEC 6(2), 182–197, 2002, and its reference C code (KanGAL,
//         nsga2-v1.1, crossover.c `realcross` and mutation.c `real_mutate_ind`), whose bounded
//         forms of both operators are the ones written here.
//  [GD91] D. E. Goldberg, K. Deb, "A comparative analysis of selection schemes used in genetic
//         algorithms", FOGA 1991 (binary tournament selection).
//
// One generation (tell() of the offspring that ask() returned):
//  1. selection: each parent is the winner of a tournament of `tournament` individuals drawn
//     uniformly with replacement from the current population; the better rank wins (lower f,
//     non-finite f last, ties to the lower population index, the population being kept sorted).
//  2. crossover: consecutive parents (2j, 2j+1) are recombined with probability crossover_prob,
//     otherwise copied. SBX is the bounded variant of [NSGA]: each variable of the pair is
//     crossed with probability ½ (when the parents differ there by more than 10⁻¹⁴); the spread
//     factor β_q is drawn from the polynomial distribution of [DA95] truncated at the spread
//     that would put the child on its bound and renormalized (inverse CDF on the truncated
//     range, one uniform for both children), so each child falls inside [l_i, u_i] without
//     clamping; the two children are swapped with probability ½. Children of identical parents are
//     the parents. A final clamp only guards against rounding.
//  3. mutation: each variable of each child is mutated with probability mutation_prob (default
//     1/n, one variable per child on average) by the bounded polynomial mutation of [NSGA]
//     (the "highly disruptive" form of nsga2-v1.1): δ_q ∈ [−δ_1, δ_2] with δ_1 = (x − l)/(u − l),
//     δ_2 = (u − x)/(u − l), x ← x + δ_q (u − l), so a mutant never leaves the box either.
//     A variable with l_i = u_i never changes.
//  4. evaluation of the λ children (the batch the caller evaluates), and replacement with
//     elitism: the `elite` best individuals of the previous population join the λ children and
//     the λ best of those λ + elite survive (an elite displaces only children worse than it).
//     Every evaluation is of a new child: no elite is evaluated twice, so λ rollouts per
//     generation are λ new candidates, and the best f of the population never gets worse.
//
// Units: the variables are in the caller's units; the operators act on each variable relative to
// its box width u_i − l_i (SBX's spread is relative to the parents' distance, mutation's to the
// width), so the GA needs no per-variable scale beyond the bounds, which are therefore required.
// steer's comparison normalizes every variable to [0, 1] (NormalizedProblem).
//
// Defaults and why:
//  - population λ = 4 (4 + ⌊3 ln n⌋), four times CMA-ES's default (cmaes_default_lambda): the GA
//    has no adapted step size and keeps its search scale only in the spread of its population,
//    which a handful of individuals loses within a few generations (premature convergence);
//    NSGA-II's examples use 100. 4× keeps CMA-ES's log n growth, so the driver's batch grows
//    with n as CMA-ES's does: λ(2) = 24, λ(10) = 40, λ(100) = 68.
//  - crossover probability 0.9, η_m = 20 and mutation probability 1/n: the settings of [NSGA]'s
//    experiments. η_c = 15 (pymoo's SBX default; [NSGA]'s experiments use 20): children near
//    their parents, a little more spread than at 20.
//  - binary tournament (size 2) [GD91]: the selection pressure of linear ranking with s = 2,
//    mild enough for the population to keep its spread.
//  - elite = 2: the best point is never lost, and a second elite keeps a runner-up that
//    crossover can pair the best with.
//  - the initial population is drawn uniformly in the box or, with a start point, uniformly in
//    [s − √3 σ0, s + √3 σ0] ∩ [l, u] per variable (σ0 is then the standard deviation of each
//    variable's draw before the intersection, as CMA-ES's σ0 is of its normal draws), with the
//    start itself (clamped to the box) as individual 0: the best is never worse than the start.
//    Drawing in the intersection rather than clamping puts no pile of individuals on the faces.
//  - max_evaluations = 1000 n², CMA-ES's default.
//
// Determinism: std::mt19937_64 seeded by `seed`, uniforms u = (r >> 11) 2⁻⁵³ ∈ [0, 1) from its
// raw 64-bit output r (no std:: distribution, whose algorithm the standard leaves open), so the
// random stream is the same on every platform; the results then depend on the platform only
// through std::pow (and the objective).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "optim/cmaes.h"  // BatchObjective
#include "optim/optimizer.h"
#include "problem/problem.h"

namespace steer {

struct GaOptions {
  int population = 0;  // λ; 0 = ga_default_population(n) = 4 (4 + ⌊3 ln n⌋); ≥ 2
  // with a start point: the standard deviation of each variable's uniform initial draw around it,
  // in variable units (+∞: uniform in the whole box); unused without a start point
  double sigma0 = 0.3;
  double crossover_prob = 0.9;    // probability that a pair of parents is recombined by SBX
  double eta_c = 15;              // SBX distribution index (larger: children nearer their parents)
  double eta_m = 20;              // polynomial mutation distribution index
  double mutation_prob = 0;       // per variable of each child; 0 = 1/n
  int tournament = 2;             // tournament size, ≥ 1 (1: parents drawn uniformly)
  int elite = 2;                  // best individuals carried into the next generation, 0 ≤ e < λ
  long long max_evaluations = 0;  // 0 = 1000·n²
  double target_f = -std::numeric_limits<double>::infinity();  // stop once best f ≤ target_f
  std::uint64_t seed = 1;
  std::vector<double> lower, upper;  // the box [lower, upper]: required, finite, n entries each
};

// one entry per generation (generation 1 evaluates the initial population)
struct GaHistory {
  std::vector<int> generation;
  std::vector<long long> evaluations;  // objective evaluations so far (λ per generation)
  std::vector<double> best_f;          // best f so far
  std::vector<double> mean_f;  // mean f of the generation's λ evaluated individuals, over its
                               // finite values (NaN when none is finite)
};

struct GaResult {
  Eigen::VectorXd best_x;  // inside the box
  double best_f = std::numeric_limits<double>::infinity();
  long long evaluations = 0;
  int generations = 0;
  std::string stop_reason;  // target_f | max_evaluations
  GaHistory history;
};

class Ga {
 public:
  // the initial population uniform in the box [options.lower, options.upper]
  explicit Ga(const GaOptions& options);
  // the initial population around `start` (GaOptions::sigma0), clamp(start) as individual 0
  Ga(const Eigen::VectorXd& start, const GaOptions& options);

  int n() const { return n_; }
  int population_size() const { return lambda_; }
  double mutation_prob() const { return pm_; }  // the per-variable probability in use

  // the operators and their settings, for the artifact
  std::string method() const;

  // the next λ points to evaluate (n×λ), inside the box: the initial population, then children
  const Eigen::MatrixXd& ask();
  // f of ask()'s columns (non-finite values rank last); forms the next population
  void tell(const Eigen::VectorXd& f);
  // non-empty once a stopping criterion holds
  const std::string& stop_reason() const { return stop_reason_; }

  // ask/tell until a stopping criterion holds
  GaResult minimize(const BatchObjective& objective,
                    const std::function<void(int generation, double best_f)>& progress = nullptr);

  // the current population (n×λ), best first, and its f (non-finite values stored as +∞);
  // empty before the first tell()
  const Eigen::MatrixXd& population() const { return pop_; }
  const Eigen::VectorXd& population_f() const { return pop_f_; }
  const Eigen::VectorXd& best_x() const { return best_x_; }
  double best_f() const { return best_f_; }
  long long evaluations() const { return evaluations_; }
  int generation() const { return generation_; }
  const GaHistory& history() const { return history_; }

 private:
  void init(const Eigen::VectorXd* start);
  double uniform();  // [0, 1) from the engine's raw output
  int pick();        // tournament winner's index in the sorted population
  void breed();      // children of pop_ into X_

  int n_ = 0, lambda_ = 0;
  double pm_ = 0;
  GaOptions opt_;
  Eigen::VectorXd lo_, hi_;
  std::mt19937_64 rng_;

  Eigen::MatrixXd pop_, X_;  // the population (sorted, best first) and the points asked for
  Eigen::VectorXd pop_f_;
  bool asked_ = false;

  Eigen::VectorXd best_x_;
  double best_f_ = std::numeric_limits<double>::infinity();
  long long evaluations_ = 0;
  int generation_ = 0;
  std::string stop_reason_;
  GaHistory history_;
};

// the uniform [0, 1) draw of the GA: (r >> 11) 2⁻⁵³ of the engine's next raw output r
double ga_uniform(std::mt19937_64& rng);

// bounded SBX ([NSGA] realcross) of one pair, in place: parents a, b become the two children,
// each inside [lo, hi]. Each variable is crossed with probability ½ and only where the parents
// differ by more than 10⁻¹⁴, so identical parents are returned unchanged.
void sbx_crossover(Eigen::Ref<Eigen::VectorXd> a, Eigen::Ref<Eigen::VectorXd> b,
                   const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, double eta_c,
                   std::mt19937_64& rng);

// bounded polynomial mutation ([NSGA] real_mutate_ind) of x in place, each variable with
// probability `prob`; x stays inside [lo, hi]
void polynomial_mutation(Eigen::Ref<Eigen::VectorXd> x, const Eigen::VectorXd& lo,
                         const Eigen::VectorXd& hi, double eta_m, double prob,
                         std::mt19937_64& rng);

// the GA's default population size for n variables: 4 (4 + ⌊3 ln n⌋)
int ga_default_population(int n);

// The GA on the variables of ONE rollout, with the Problem's batch as the population, as
// cmaes_optimize: requires p.batch_size() == λ (options.population, or the default for
// n = p.num_vars()), so each generation is one call p.evaluate(vars, false, ·) with individual
// k in row k. Bounds are p.lower()/p.upper() (options.lower/upper are ignored); start (num_vars
// values, or a whole batch whose row 0 is used) is individual 0 of the first generation.
// Returns the best point replicated to every row, its evaluation (with gradient) in `final`, a
// trace with one entry per generation (loss over the population, variables = the best point so
// far) and the final one, and, if asked, the per-generation history. iterations = generations.
OptimizationResult ga_optimize(
    Problem& p, const GaOptions& options, const std::vector<double>& start,
    const std::function<void(int generation, double best_f)>& progress = nullptr,
    GaHistory* history = nullptr);

nlohmann::json to_json(const GaHistory& h);

}  // namespace steer
