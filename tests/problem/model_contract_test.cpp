// include/steer/model_contract.h: every shipped model provides the members the engine calls,
// in float64, float32 and dual numbers, and the optional capabilities each one claims; a
// model with a member missing is detected as not satisfying the contract.
#include <gtest/gtest.h>

#include <type_traits>

#include "steer/cpu_backend.h"
#include "steer/dual.h"
#include "steer/model_contract.h"
#include "steer/models/articulated.h"
#include "steer/models/fem.h"
#include "steer/models/mass_spring.h"
#include "steer/models/projectile.h"
#include "steer/rollout.h"

namespace {

using steer::Articulated;
using steer::Fem;
using steer::MassSpring;
using steer::Projectile;

// the projectile's step and sizes without its adjoint: detected as incomplete
struct ForwardOnly {
  static constexpr int kMaxState = 6, kMaxControl = 3, kMaxParam = 6;
  Projectile inner;
  STEER_HD int nx() const { return inner.nx(); }
  STEER_HD int nu() const { return inner.nu(); }
  STEER_HD int np() const { return inner.np(); }
  template <class S, class XIn, class UIn, class PIn, class XOut>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                     const steer::Lanes& ln) const {
    inner.template step<S>(k, x, u, p, xn, ln);
  }
};

TEST(ModelContract, ShippedModelsSatisfyItInEveryPrecision) {
  EXPECT_TRUE((steer::satisfies_model_contract<Projectile, double>));
  EXPECT_TRUE((steer::satisfies_model_contract<Projectile, float>));
  EXPECT_TRUE((steer::satisfies_model_contract<MassSpring, double>));
  EXPECT_TRUE((steer::satisfies_model_contract<MassSpring, float>));
  EXPECT_TRUE((steer::satisfies_model_contract<Articulated, double>));
  EXPECT_TRUE((steer::satisfies_model_contract<Articulated, float>));
  EXPECT_TRUE((steer::satisfies_model_contract<Fem, double>));
  EXPECT_TRUE((steer::satisfies_model_contract<Fem, float>));
  // the dual-number reference differentiates the forward step (8 partials per pass)
  EXPECT_TRUE((steer::contract::has_step<Projectile, steer::Dual<double, 8>>::value));
  EXPECT_TRUE((steer::contract::has_step<MassSpring, steer::Dual<double, 8>>::value));
  EXPECT_TRUE((steer::contract::has_step<Articulated, steer::Dual<double, 8>>::value));
  EXPECT_TRUE((steer::contract::has_step<Fem, steer::Dual<double, 8>>::value));
}

TEST(ModelContract, OptionalCapabilitiesAreDetected) {
  // the step tape and the SIMD path: the mass-spring robot and the arm have both, the projectile
  // neither
  EXPECT_FALSE(steer::contract::has_step_tape<Projectile>::value);
  EXPECT_FALSE(steer::contract::has_step_tape<Fem>::value);
  EXPECT_FALSE(steer::contract::has_packed_path<Fem>::value);
  EXPECT_TRUE(steer::contract::has_step_tape<MassSpring>::value);
  EXPECT_TRUE(steer::contract::has_step_tape<Articulated>::value);
  EXPECT_FALSE(steer::contract::has_packed_path<Projectile>::value);
  EXPECT_TRUE(steer::contract::has_packed_path<MassSpring>::value);
  EXPECT_TRUE(steer::contract::has_packed_path<Articulated>::value);
  // a model with a tape takes it in its one step and adjoint, and the engine passes its own type
  EXPECT_TRUE((steer::contract::has_taped_step<MassSpring, double>::value));
  EXPECT_TRUE((steer::contract::has_taped_step<Articulated, float>::value));
  EXPECT_FALSE((steer::contract::has_taped_step<Projectile, double>::value));
  EXPECT_TRUE((std::is_same<steer::contract::StepTapeOf<Articulated, double>::type,
                            Articulated::StepTape<double>>::value));
  EXPECT_TRUE((std::is_same<steer::contract::StepTapeOf<Projectile, double>::type,
                            steer::contract::NoStepTape>::value));
  EXPECT_TRUE(steer::contract::has_packed_diagnostics<Articulated>::value);
  EXPECT_FALSE(steer::contract::has_packed_diagnostics<MassSpring>::value);
}

// the CUDA kernels' models, their integrators fixed at compile time (FixedIntegrators), are
// their models for the engine: the contract, the tape and the device layout
TEST(ModelContract, FixedIntegratorVariantsKeepTheContract) {
  using steer::ArticulatedImplicit;
  using steer::MassSpringSymplectic;
  EXPECT_TRUE((steer::satisfies_model_contract<ArticulatedImplicit, double>));
  EXPECT_TRUE((steer::satisfies_model_contract<ArticulatedImplicit, float>));
  EXPECT_TRUE((steer::satisfies_model_contract<MassSpringSymplectic, double>));
  EXPECT_TRUE((steer::satisfies_model_contract<MassSpringSymplectic, float>));
  EXPECT_TRUE((std::is_same<steer::contract::StepTapeOf<MassSpringSymplectic, double>::type,
                            MassSpring::StepTape<double>>::value));
  EXPECT_EQ(steer::LanesPerRollout<MassSpringSymplectic>::value,
            steer::LanesPerRollout<MassSpring>::value);
  EXPECT_EQ(steer::LanesPerRollout<ArticulatedImplicit>::value,
            steer::LanesPerRollout<Articulated>::value);
  EXPECT_FALSE(steer::compiles_integrator(steer::integrator_bit(Articulated::kEuler) |
                                              steer::integrator_bit(Articulated::kImplicitFast),
                                          Articulated::kRk4));
  EXPECT_TRUE(steer::compiles_integrator(steer::kAllIntegrators, MassSpring::kBackwardEuler));
}

TEST(ModelContract, AModelWithoutAnAdjointIsRefused) {
  EXPECT_TRUE(steer::contract::has_sizes<ForwardOnly>::value);
  EXPECT_TRUE((steer::contract::has_step<ForwardOnly, double>::value));
  EXPECT_FALSE((steer::contract::has_adj_step<ForwardOnly, double>::value));
  EXPECT_FALSE((steer::satisfies_model_contract<ForwardOnly, double>));
}

}  // namespace
