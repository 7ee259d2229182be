// A program built against the installed steer package: reads the projectile example
// (argv[1], configs/projectile.json), runs one rollout with its gradient through the library,
// and checks it against the closed form. The launch is x_T = x_0 + T h v_x (no drag, no
// ground), L = ½ (x_T − 6)², so ∂L/∂v_x = T h (T h v_x − 6) = 3 (3 · 2.5 − 6) = 4.5 and
// ∂L/∂v_y = 0 (T h = 3 s).
#include <cmath>
#include <cstdio>

#include "steer/backend.h"
#include "steer/pipeline/config/config.h"
#include "steer/pipeline/problem/problem.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: steer_consumer configs/projectile.json\n");
    return 2;
  }
  const steer::ExperimentConfig cfg = steer::load_config(argv[1]);
  auto problem = steer::make_problem(cfg, steer::BackendKind::kCpu, 1);
  steer::Evaluation ev;
  problem->evaluate(problem->initial(), true, ev);
  const double loss = ev.loss[0], gvx = ev.grad[0], gvy = ev.grad[1];
  std::printf("steer %s: loss %.17g, dL/dvx %.17g, dL/dvy %.17g\n", STEER_VERSION, loss, gvx, gvy);
  // rounding over 300 steps of h = 0.01 s: well under 1e-9 relative
  const bool ok =
      std::abs(loss - 1.125) < 1e-9 && std::abs(gvx - 4.5) < 1e-9 && std::abs(gvy) < 1e-12;
  return ok ? 0 : 1;
}
