#include <gtest/gtest.h>
#include "steer/backend.h"
#include "steer/models/projectile.h"
using namespace steer;
TEST(Smoke, WorkedExampleGradient) {
  Projectile m; m.dim = 2; m.dt = 0.01;
  Loss loss; loss.n_terminal = 1; loss.terminal_index[0] = 0; loss.terminal_target[0] = 6; loss.terminal_weight[0] = 1;
  RolloutShape sh; sh.steps = 300; sh.checkpoint_every = 18;
  Batch<double> b; b.resize(1, 4, 2, 6, 300);
  b.x0 = {0, 0, 2.5, 1.0}; b.theta = {9.81, 0, 1, 0, 0, 0.01};
  BatchResult<double> out;
  run_batch(BackendKind::kCpu, m, loss, sh, b, true, out);
  EXPECT_NEAR(out.grad_x0[2], 4.5, 1e-9);
  EXPECT_NEAR(out.grad_x0[3], 0.0, 1e-12);
}
