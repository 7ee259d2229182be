// The pieces a run split across ranks is built from, in one process (src/parallel/): the
// balanced blocks, block configs whose batch is exactly the whole batch's rows, problems of
// those blocks evaluating each rollout to the whole batch's bits, and the one-process
// SplitProblem. tests/parallel/mpi_artifacts.py runs the same under mpirun.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "optim/optimizer.h"
#include "parallel/parallel.h"
#include "parallel/split_problem.h"
#include "problem/problem.h"

namespace steer {
namespace {

nlohmann::json read_json(const std::string& rel) {
  std::ifstream f(std::string(STEER_SOURCE_DIR) + "/" + rel);
  return nlohmann::json::parse(f);
}

// bit-for-bit equality of n doubles (NaN and −0 included)
bool same_bits(const double* a, const double* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(double)) == 0;
}

// a reduced morphology sweep: 23 rollouts with drawn stiffness, rest shape and weights
ExperimentConfig morphology(int batch) {
  nlohmann::json j = read_json("configs/morphology_sweep.json");
  j["batch"]["size"] = batch;
  j["simulation"]["steps"] = 40;
  j["simulation"]["backend"] = "cpu";
  return parse_config(j, std::string(STEER_SOURCE_DIR) + "/configs");
}

// a reduced Panda reach: drawn joint targets, controls as variables
ExperimentConfig panda(int batch) {
  nlohmann::json j = read_json("configs/panda_reach.json");
  j["batch"]["size"] = batch;
  j["simulation"]["steps"] = 20;
  const std::string dir = std::string(STEER_SOURCE_DIR) + "/configs";
  return parse_config(expand_includes(j, dir), dir);
}

TEST(MpiBlocks, BalancedContiguousBlocks) {
  for (int n = 0; n <= 40; ++n)
    for (int ranks = 1; ranks <= 7; ++ranks) {
      int next = 0, largest = 0, smallest = n + 1;
      for (int r = 0; r < ranks; ++r) {
        const Block b = block_of(n, r, ranks);
        EXPECT_EQ(b.begin, next) << "n " << n << " ranks " << ranks << " rank " << r;
        next += b.count;
        if (r > 0) {
          EXPECT_LE(b.count, block_of(n, r - 1, ranks).count) << "larger blocks first";
        }
        largest = std::max(largest, b.count);
        smallest = std::min(smallest, b.count);
      }
      EXPECT_EQ(next, n) << "the blocks cover the batch";
      EXPECT_LE(largest - smallest, 1) << "n " << n << " ranks " << ranks;
    }
  EXPECT_EQ(rollouts_text({2048, 2048}), "rollouts 2048–4095");
  EXPECT_EQ(rollouts_text({5, 1}), "rollout 5");
  EXPECT_EQ(rollouts_text({0, 0}), "no rollouts");
}

// build_batch of a block's config gives the whole batch's rows, bit for bit, for the run's
// config and the variants a run simulates (a perturbation level, h/2)
void expect_block_rows(const ExperimentConfig& c, const char* what) {
  const Batch<double> whole = build_batch(c);
  for (int ranks : {2, 3, 5}) {
    for (int r = 0; r < ranks; ++r) {
      const Block b = block_of(c.batch_size, r, ranks);
      if (b.count == 0) continue;
      const Batch<double> part = build_batch(block_config(c, whole, b.begin, b.count));
      ASSERT_EQ(part.size, b.count);
      EXPECT_TRUE(same_bits(part.x0.data(), whole.x0_of(b.begin), size_t(b.count) * whole.nx))
          << what << ": x0 of block " << r << " of " << ranks;
      EXPECT_TRUE(same_bits(part.theta.data(), whole.theta_of(b.begin), size_t(b.count) * whole.np))
          << what << ": θ of block " << r << " of " << ranks;
      EXPECT_TRUE(
          same_bits(part.u.data(), whole.u_of(b.begin), size_t(b.count) * whole.steps * whole.nu))
          << what << ": controls of block " << r << " of " << ranks;
    }
  }
}

TEST(MpiBlocks, BlockConfigsRebuildTheWholeBatchsRows) {
  const ExperimentConfig m = morphology(23);
  expect_block_rows(m, "morphology");
  expect_block_rows(halved_timestep(m), "morphology at h/2");
  const ExperimentConfig p = panda(11);
  expect_block_rows(p, "panda");
  ASSERT_TRUE(p.perturb.enabled);
  expect_block_rows(perturbed_config(p, 0.2), "panda, hand mass +20%");
}

// a block's problem evaluates each of its rollouts to the bits the whole batch gives it
void expect_block_evaluations(const ExperimentConfig& c, const char* what) {
  auto whole = make_problem(c, BackendKind::kCpu, 2);
  const int nv = whole->num_vars();
  Evaluation ew;
  whole->evaluate(whole->initial(), true, ew);
  const Batch<double> nominal = build_batch(c);
  for (int r = 0; r < 3; ++r) {
    const Block b = block_of(c.batch_size, r, 3);
    auto part = make_problem(block_config(c, nominal, b.begin, b.count), BackendKind::kCpu, 1);
    ASSERT_EQ(part->num_vars(), nv);
    EXPECT_TRUE(same_bits(part->initial().data(), whole->initial().data() + size_t(b.begin) * nv,
                          size_t(b.count) * nv))
        << what << ": starting variables of block " << r;
    Evaluation ep;
    part->evaluate(part->initial(), true, ep);
    EXPECT_TRUE(same_bits(ep.loss.data(), ew.loss.data() + b.begin, size_t(b.count)))
        << what << ": loss of block " << r;
    EXPECT_TRUE(
        same_bits(ep.grad.data(), ew.grad.data() + size_t(b.begin) * nv, size_t(b.count) * nv))
        << what << ": gradient of block " << r;
    for (int k = 0; k < b.count; ++k) {
      EXPECT_EQ(ep.diag[size_t(k)].contact_hash, ew.diag[size_t(b.begin + k)].contact_hash)
          << what << " rollout " << b.begin + k;
      EXPECT_EQ(ep.diag[size_t(k)].recompute_steps, ew.diag[size_t(b.begin + k)].recompute_steps);
    }
  }
}

TEST(MpiBlocks, BlockProblemsEvaluateToTheWholeBatchsBits) {
  expect_block_evaluations(morphology(13), "morphology");
  expect_block_evaluations(panda(7), "panda");
}

// with one rank the split problem is the whole problem behind the collectives: every query
// returns what the whole problem returns
TEST(MpiBlocks, OneRankSplitProblemIsTheWholeProblem) {
  ASSERT_EQ(world().size(), 1);
  const ExperimentConfig c = morphology(6);
  auto whole = make_problem(c, BackendKind::kCpu, 1);
  auto shared = std::make_shared<ExperimentConfig>(c);
  auto nominal = std::make_shared<Batch<double>>(build_batch(c));
  SplitProblem split(c.batch_size, [shared, nominal](int begin, int count) {
    return make_problem(block_config(*shared, *nominal, begin, count), BackendKind::kCpu, 1);
  });
  ASSERT_EQ(split.batch_size(), 6);
  ASSERT_EQ(split.num_vars(), whole->num_vars());
  EXPECT_EQ(split.initial(), whole->initial());
  Evaluation a, b;
  whole->evaluate(whole->initial(), true, a);
  split.evaluate(split.initial(), true, b);
  EXPECT_TRUE(same_bits(a.loss.data(), b.loss.data(), a.loss.size()));
  EXPECT_TRUE(same_bits(a.grad.data(), b.grad.data(), a.grad.size()));
  EXPECT_EQ(split.forward_rollout_steps, whole->forward_rollout_steps);
  EXPECT_EQ(split.recomputed_rollout_steps, whole->recomputed_rollout_steps);
  EXPECT_EQ(split.trajectories(split.initial(), 4, 10),
            whole->trajectories(whole->initial(), 4, 10));
  EXPECT_EQ(split.parameters(split.initial()), whole->parameters(whole->initial()));
  EXPECT_EQ(split.com_displacement(split.initial(), 5, 0),
            whole->com_displacement(whole->initial(), 5, 0));
  const auto ra = whole->velocity_reversals(whole->initial(), 3),
             rb = split.velocity_reversals(split.initial(), 3);
  ASSERT_EQ(ra.size(), rb.size());
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].name, rb[i].name);
    EXPECT_EQ(ra[i].count, rb[i].count);
    EXPECT_EQ(ra[i].median_jump, rb[i].median_jump);
  }
  auto cut = split.leading(4);
  ASSERT_NE(cut, nullptr);
  Evaluation e4;
  cut->evaluate(
      std::vector<double>(split.initial().begin(), split.initial().begin() + 4 * split.num_vars()),
      true, e4);
  EXPECT_TRUE(same_bits(e4.loss.data(), a.loss.data(), 4));
  EXPECT_EQ(split.leading(7), nullptr);
}

// Adam on a one-rank split problem's block (BlockProblem, gathering through the split problem)
// gives the whole problem's Adam bit for bit: the final variables, the history and the counters;
// and the optimizer gathers only the logged losses and, once, the final variables
TEST(MpiBlocks, BlockOptimizerIsTheWholeOptimizer) {
  ASSERT_EQ(world().size(), 1);
  ExperimentConfig c = morphology(5);
  c.optimizer.method = "adam";
  c.optimizer.iterations = 3;
  c.optimizer.log_every = 2;
  auto shared = std::make_shared<ExperimentConfig>(c);
  auto nominal = std::make_shared<Batch<double>>(build_batch(c));
  SplitProblem split(c.batch_size, [shared, nominal](int begin, int count) {
    return make_problem(block_config(*shared, *nominal, begin, count), BackendKind::kCpu, 1);
  });
  NormalizedProblem whole(make_problem(c, BackendKind::kCpu, 1));
  NormalizedProblem block(std::make_unique<BlockProblem>(split));
  ASSERT_EQ(block.batch_size(), 5);
  const std::vector<double> start = whole.to_z(whole.inner().initial());
  const OptimizationResult a = optimize(whole, c.optimizer, start, nullptr);
  BatchView view;
  view.gather = [&split](const std::vector<double>& rows, size_t per, int n) {
    return split.gather_rows(rows, per, n);
  };
  view.any = [](bool flag) { return any_rank(flag); };
  const long long before = world().received_bytes;
  const OptimizationResult b = optimize(
      block, c.optimizer, split.block_rows(start, size_t(split.num_vars())), nullptr, view);
  split.settle_counters();
  const long long received = world().received_bytes - before;
  ASSERT_EQ(a.vars.size(), b.vars.size());
  EXPECT_TRUE(same_bits(a.vars.data(), b.vars.data(), a.vars.size()));
  EXPECT_TRUE(same_bits(a.final.grad.data(), b.final.grad.data(), a.final.grad.size()));
  EXPECT_EQ(to_json(a.trace).dump(), to_json(b.trace).dump());
  EXPECT_EQ(a.trace.iteration, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(split.forward_rollout_steps, whole.inner().forward_rollout_steps);
  EXPECT_EQ(split.backward_rollout_steps, whole.inner().backward_rollout_steps);
  EXPECT_GT(split.forward_rollout_steps, 0);
  // 3 logged entries × 5 losses × 8 B, the best-iterate flag (1 B), the counters (24 B); the
  // morphology sweep has more than 32 variables, so no leading variables; the agreements carry
  // no bytes when nothing failed
  EXPECT_EQ(received, 3 * 5 * 8 + 1 + 24);
}

// the failure hook fires on its rank from its evaluation on, and agree() names the rank's block
TEST(MpiBlocks, InjectedFailureAndAgreement) {
  setenv("STEER_FAIL_RANK", "0", 1);
  setenv("STEER_FAIL_AFTER", "2", 1);
  EXPECT_NO_THROW(injected_failure(1));
  EXPECT_THROW(injected_failure(2), std::runtime_error);
  setenv("STEER_FAIL_KIND", "oom", 1);
  EXPECT_THROW(injected_failure(3), std::bad_alloc);
  setenv("STEER_FAIL_RANK", "1", 1);
  EXPECT_NO_THROW(injected_failure(5)) << "another rank's failure";
  unsetenv("STEER_FAIL_RANK");
  unsetenv("STEER_FAIL_AFTER");
  unsetenv("STEER_FAIL_KIND");
  EXPECT_NO_THROW(agree("", "rollouts 0–3"));
  EXPECT_THROW(agree("boom", "rollouts 0–3"), RankFailure);
}

}  // namespace
}  // namespace steer
