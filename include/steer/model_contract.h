// The model contract: what a model type provides to the rollout engine (rollout.h), the CPU
// backend's scalar and SIMD paths (cpu_backend.h, cpu_packed.h), the CUDA kernels (kernels/)
// and the config pipeline (src/models/registry.h). Each capability below has a detection
// trait, defined here once: the engine dispatches on these traits and checks a model against
// satisfies_model_contract where it instantiates a rollout, and
// tests/problem/model_contract_test.cpp checks every shipped model against them.
//
// Required (every path):
//   kMaxState, kMaxControl, kMaxParam       compile-time bounds of the fixed buffers the
//   dual-number
//                                           reference uses (0: sized at run time, host only)
//   nx(), nu(), np()                                    state, control and parameter sizes
//   step<S>(k, x_k, u_k, θ, x_{k+1}[, lanes[, tape]])   x_{k+1} = f(k, x_k, u_k, θ)
//   adj_step<S>(k, x_k, u_k, θ, x̄_k, ū_k, θ̄, λ_{k+1}[, lanes[, tape]])
//       the vector-Jacobian product of one step, accumulated: x̄_k += (∂f/∂x_k)ᵀ λ_{k+1},
//       ū_k += (∂f/∂u_k)ᵀ λ_{k+1}, θ̄ += (∂f/∂θ)ᵀ λ_{k+1} (the dual-number reference,
//       reference_adjoint.h, differentiates step<Dual> to check it)
//   energy<S>(x, θ), kinetic_energy<S>(x, θ), conservative<S>(θ)   the energy-drift diagnostic
//   num_contacts(), in_contact<S>(x, θ, c)              the contact-mode diagnostics
//       (optional: visit_contacts<S>(x, θ, f), every contact's flag from one shared pass)
// These two are a model's only step entry points. Everything a step varies by is an argument
// or a compile-time policy of them, and the model selects inside:
//   S         the scalar: double, float, Dual<S, N> (the reference), op_count.h's Counted<S>,
//             or a simd.h pack of W rollouts (the CPU's SIMD path; one lane by construction)
//   lanes     the lanes of a warp that share the rollout (Lanes: lane, width; default one lane)
//   tape      NoTape (default), or a model with a step tape gets StepTape<S>* in step (filled
//             by the step, whose result is the same bits) and const StepTape<S>* in adj_step
//             (read instead of computing the step again)
//   the integrator   a field of the model, read at run time; a model with several may take
//             the mask of those compiled as a template argument after S (step<S, kIntegrators>),
//             which FixedIntegrators below fixes for the CUDA kernels
// A model's per-integrator and per-path code (the one-lane or lane-strided step, an integrator's
// step and its adjoint) are its private helpers, reached through step and adj_step only.
// Optional, each detected at compile time:
//   StepTape<S>, step_tape_bytes<S>(), TapeStorage + bind_tapes<S>
//       keep a step's intermediates for its adjoint (the uniform schedule's recompute and the
//       stored forward pass; rollout.h); StepTapeOf<Model, S> is the type the engine passes
//   packable()                            this configuration runs on SIMD packs (cpu_packed.h):
//       step<P> and adj_step<P> with a tape on packs P; kPackedDiagnostics and energies<P>
//       when the diagnostics run on the packs too
//   LanesPerRollout<Model> (lanes_per_rollout.h)      lanes of a warp that share one rollout
//       on the GPU (1 or 32); the lane-strided loops use Lanes::lane and Lanes::width
// Every model function is STEER_HD (host and device) and allocates nothing: buffers arrive as
// strided views (core.h).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "steer/core.h"
#include "steer/lanes_per_rollout.h"

namespace steer {

// the tape argument of a step that keeps none
using NoTape = std::nullptr_t;

// ---- integrators as a compile-time policy ----
// A mask of a model's integrators (bit i: the model's integrator value i). A model's step and
// adj_step take the mask of those compiled as a template argument, all by default; the run-time
// field still chooses among the compiled ones.
constexpr unsigned kAllIntegrators = ~0u;
STEER_HD constexpr unsigned integrator_bit(int integrator) { return 1u << integrator; }
STEER_HD constexpr bool compiles_integrator(unsigned mask, int integrator) {
  return (mask >> integrator) & 1u;
}

namespace contract {
// m.adj_center_of_mass<S, kIntegrators>(…) where a model's centre-of-mass adjoint depends on
// the integrators compiled (Articulated: its dual-number form is compiled with rk4 only), else
// m.adj_center_of_mass<S>(…)
template <unsigned kIntegrators, class S, class Model, class... A>
STEER_HD auto adj_center_of_mass_within(const Model& m, int, A&... a)
    -> decltype(m.template adj_center_of_mass<S, kIntegrators>(a...), void()) {
  m.template adj_center_of_mass<S, kIntegrators>(a...);
}
template <unsigned kIntegrators, class S, class Model, class... A>
STEER_HD void adj_center_of_mass_within(const Model& m, long, A&... a) {
  m.template adj_center_of_mass<S>(a...);
}
}  // namespace contract

// Model with the integrators in kIntegrators only, fixed at compile time: its step and adjoint
// are Model's with the others compiled out. For the CUDA kernels: a model's step and adjoint
// branch on its integrator at run time, so a kernel instantiated for the model compiles every
// integrator's step and adjoint, and ptxas sizes every thread's stack frame (reserved as local
// memory for every resident thread) for the largest of them, even when the batch runs a small
// one. The launcher converts only a model whose integrator is in the mask (a model with another
// would run one of the compiled ones). Everything else is Model's, and so are the device layout
// (LanesPerRollout below) and the step tape.
template <class Model, unsigned kIntegrators>
struct FixedIntegrators : Model {
  FixedIntegrators() = default;
  STEER_HD explicit FixedIntegrators(const Model& m) : Model(m) {}

  template <class S, class XIn, class UIn, class PIn, class XOut, class Tape = NoTape>
  STEER_HD void step(int k, const XIn& x, const UIn& u, const PIn& p, XOut& xn,
                     const Lanes& ln = Lanes{}, Tape tape = nullptr) const {
    Model::template step<S, kIntegrators>(k, x, u, p, xn, ln, tape);
  }
  template <class S, class XIn, class UIn, class PIn, class XAdj, class UAdj, class PAdj,
            class XnAdj, class Tape = NoTape>
  STEER_HD void adj_step(int k, const XIn& x, const UIn& u, const PIn& p, XAdj& adj_x, UAdj& adj_u,
                         PAdj& adj_p, const XnAdj& adj_xn, const Lanes& ln = Lanes{},
                         Tape tape = nullptr) const {
    Model::template adj_step<S, kIntegrators>(k, x, u, p, adj_x, adj_u, adj_p, adj_xn, ln, tape);
  }
  template <class S, class XIn, class PIn, class XAdj, class PAdj>
  STEER_HD void adj_center_of_mass(const XIn& x, const PIn& p, int ax, XAdj& adj_x, PAdj& adj_p,
                                   const S& adj_c) const {
    contract::adj_center_of_mass_within<kIntegrators, S>(static_cast<const Model&>(*this), 0, x, p,
                                                         ax, adj_x, adj_p, adj_c);
  }
};

template <class Model, unsigned kIntegrators>
struct LanesPerRollout<FixedIntegrators<Model, kIntegrators>> : LanesPerRollout<Model> {};

namespace contract {

// the argument types the engine passes (rollout.h)
template <class S>
using XIn = View<const S>;
template <class S>
using XOut = View<S>;

template <class Model, class = void>
struct has_sizes : std::false_type {};
template <class Model>
struct has_sizes<
    Model,
    std::void_t<decltype(std::declval<const Model&>().nx() + std::declval<const Model&>().nu() +
                         std::declval<const Model&>().np()),
                decltype(Model::kMaxState + Model::kMaxControl + Model::kMaxParam)>>
    : std::true_type {};

template <class Model, class S, class = void>
struct has_step : std::false_type {};
template <class Model, class S>
struct has_step<Model, S,
                std::void_t<decltype(std::declval<const Model&>().template step<S>(
                    0, std::declval<XIn<S>>(), std::declval<XIn<S>>(), std::declval<XIn<S>>(),
                    std::declval<XOut<S>&>(), std::declval<const Lanes&>()))>> : std::true_type {};

template <class Model, class S, class = void>
struct has_adj_step : std::false_type {};
template <class Model, class S>
struct has_adj_step<
    Model, S,
    std::void_t<decltype(std::declval<const Model&>().template adj_step<S>(
        0, std::declval<XIn<S>>(), std::declval<XIn<S>>(), std::declval<XIn<S>>(),
        std::declval<XOut<S>&>(), std::declval<XOut<S>&>(), std::declval<XOut<S>&>(),
        std::declval<XIn<S>>(), std::declval<const Lanes&>()))>> : std::true_type {};

template <class Model, class S, class = void>
struct has_diagnostics : std::false_type {};
template <class Model, class S>
struct has_diagnostics<Model, S,
                       std::void_t<decltype(std::declval<const Model&>().template energy<S>(
                                       std::declval<XIn<S>>(), std::declval<XIn<S>>())),
                                   decltype(std::declval<const Model&>().template kinetic_energy<S>(
                                       std::declval<XIn<S>>(), std::declval<XIn<S>>())),
                                   decltype(std::declval<const Model&>().template conservative<S>(
                                       std::declval<XIn<S>>())),
                                   decltype(std::declval<const Model&>().num_contacts()),
                                   decltype(std::declval<const Model&>().template in_contact<S>(
                                       std::declval<XIn<S>>(), std::declval<XIn<S>>(), 0))>>
    : std::true_type {};

// the optional step tape: Model::StepTape<S>; StepTapeOf<Model, S>::type is it, or NoStepTape
// for a model without one (the engine's tape pointers are of that type, and null)
template <class Model, class = void>
struct has_step_tape : std::false_type {};
template <class Model>
struct has_step_tape<Model, std::void_t<typename Model::template StepTape<double>>>
    : std::true_type {};
struct NoStepTape {};
template <class Model, class S, bool = has_step_tape<Model>::value>
struct StepTapeOf {
  using type = NoStepTape;
};
template <class Model, class S>
struct StepTapeOf<Model, S, true> {
  using type = typename Model::template StepTape<S>;
};

// a model with a step tape takes it in step (to fill) and adj_step (to read)
template <class Model, class S, class = void>
struct has_taped_step : std::false_type {};
template <class Model, class S>
struct has_taped_step<
    Model, S,
    std::void_t<decltype(std::declval<const Model&>().template step<S>(
                    0, std::declval<XIn<S>>(), std::declval<XIn<S>>(), std::declval<XIn<S>>(),
                    std::declval<XOut<S>&>(), std::declval<const Lanes&>(),
                    std::declval<typename StepTapeOf<Model, S>::type*>())),
                decltype(std::declval<const Model&>().template adj_step<S>(
                    0, std::declval<XIn<S>>(), std::declval<XIn<S>>(), std::declval<XIn<S>>(),
                    std::declval<XOut<S>&>(), std::declval<XOut<S>&>(), std::declval<XOut<S>&>(),
                    std::declval<XIn<S>>(), std::declval<const Lanes&>(),
                    std::declval<const typename StepTapeOf<Model, S>::type*>()))>>
    : std::true_type {};

// the optional SIMD path (cpu_backend.h sends a batch there)
template <class Model, class = void>
struct has_packed_path : std::false_type {};
template <class Model>
struct has_packed_path<Model, std::void_t<decltype(std::declval<const Model&>().packable())>>
    : std::true_type {};

// the per-step diagnostics on packs too (cpu_packed.h)
template <class Model, class = void>
struct has_packed_diagnostics : std::false_type {};
template <class Model>
struct has_packed_diagnostics<Model, std::enable_if_t<Model::kPackedDiagnostics>> : std::true_type {
};

}  // namespace contract

// the contact flags of a state x, f(c, flag) for c = 0 … num_contacts() − 1: the model's
// visit_contacts<S>(x, θ, f) where it has one (its contacts share one pass, e.g. the articulated
// model's kinematics), else in_contact<S>(x, θ, c) contact by contact
namespace contract {
template <class S, class Model, class X, class P, class F>
STEER_HD auto visit_contact_flags_of(const Model& m, const X& x, const P& p, F& f, int)
    -> decltype(m.template visit_contacts<S>(x, p, f), void()) {
  m.template visit_contacts<S>(x, p, f);
}
template <class S, class Model, class X, class P, class F>
STEER_HD void visit_contact_flags_of(const Model& m, const X& x, const P& p, F& f, long) {
  for (int c = 0; c < m.num_contacts(); ++c) f(c, m.template in_contact<S>(x, p, c));
}
}  // namespace contract
template <class S, class Model, class X, class P, class F>
STEER_HD void visit_contact_flags(const Model& m, const X& x, const P& p, F&& f) {
  contract::visit_contact_flags_of<S>(m, x, p, f, 0);
}

// a model the engine can run and differentiate in precision S
template <class Model, class S = double>
constexpr bool satisfies_model_contract =
    contract::has_sizes<Model>::value&& contract::has_step<Model, S>::value&&
        contract::has_adj_step<Model, S>::value&& contract::has_diagnostics<Model, S>::value &&
    (!contract::has_step_tape<Model>::value || contract::has_taped_step<Model, S>::value);

}  // namespace steer
