// The model contract: what a model type provides to the rollout engine (rollout.h), the CPU
// backend's scalar and SIMD paths (cpu_backend.h, cpu_packed.h), the CUDA kernels (kernels/)
// and the config pipeline (src/models/registry.h). Each capability below has a detection
// trait; tests/model_contract_test.cpp checks every shipped model against them, and a model
// missing a required member fails to compile wherever the engine calls it.
//
// Required (every path):
//   kMaxState, kMaxControl, kMaxParam       compile-time bounds of the fixed buffers the dual-number
//                                           reference uses (0: sized at run time, host only)
//   nx(), nu(), np()                                    state, control and parameter sizes
//   step<S>(k, x_k, u_k, θ, x_{k+1}, lanes)             x_{k+1} = f(k, x_k, u_k, θ)
//   adj_step<S>(k, x_k, u_k, θ, x̄_k, ū_k, θ̄, λ_{k+1}, lanes)
//       the vector-Jacobian product of one step, accumulated: x̄_k += (∂f/∂x_k)ᵀ λ_{k+1},
//       ū_k += (∂f/∂u_k)ᵀ λ_{k+1}, θ̄ += (∂f/∂θ)ᵀ λ_{k+1} (S is double or float; the dual-number
//       reference, reference_adjoint.h, differentiates step<Dual> to check it)
//   energy<S>(x, θ), kinetic_energy<S>(x, θ), conservative<S>(θ)   the energy-drift diagnostic
//   num_contacts(), in_contact<S>(x, θ, c)              the contact-mode diagnostics
// Optional, each detected at compile time:
//   StepTape<S>, step_taped<S>(…, x_{k+1}, tape, lanes), adj_step_taped<S>(…, tape, …),
//   step_tape_bytes<S>(), TapeStorage + bind_tapes<S>    keep a step's intermediates for its
//       adjoint (the uniform schedule's recompute and the stored forward pass; rollout.h)
//   packable(), step_solo<P>(k, x, u, θ, x⁺[, &tape]), adj_step_solo_taped<P>(…)
//       the one-lane step on SIMD packs P (cpu_packed.h); kPackedDiagnostics and energies<P>
//       when the diagnostics run on the packs too
//   LanesPerRollout<Model> (lanes_per_rollout.h)      lanes of a warp that share one rollout
//       on the GPU (1 or 32); the lane-strided loops use Lanes::lane and Lanes::width
// Every model function is STEER_HD (host and device) and allocates nothing: buffers arrive as
// strided views (core.h).
#pragma once

#include <type_traits>
#include <utility>

#include "steer/core.h"

namespace steer {
namespace contract {

// the argument types the engine passes (rollout.h)
template <class S>
using XIn = View<const S>;
template <class S>
using XOut = View<S>;

template <class Model, class = void>
struct has_sizes : std::false_type {};
template <class Model>
struct has_sizes<Model, std::void_t<decltype(std::declval<const Model&>().nx() + std::declval<const Model&>().nu() +
                                             std::declval<const Model&>().np()),
                                    decltype(Model::kMaxState + Model::kMaxControl + Model::kMaxParam)>> : std::true_type {};

template <class Model, class S, class = void>
struct has_step : std::false_type {};
template <class Model, class S>
struct has_step<Model, S,
                std::void_t<decltype(std::declval<const Model&>().template step<S>(
                    0, std::declval<XIn<S>>(), std::declval<XIn<S>>(), std::declval<XIn<S>>(), std::declval<XOut<S>&>(),
                    std::declval<const Lanes&>()))>> : std::true_type {};

template <class Model, class S, class = void>
struct has_adj_step : std::false_type {};
template <class Model, class S>
struct has_adj_step<Model, S,
                    std::void_t<decltype(std::declval<const Model&>().template adj_step<S>(
                        0, std::declval<XIn<S>>(), std::declval<XIn<S>>(), std::declval<XIn<S>>(),
                        std::declval<XOut<S>&>(), std::declval<XOut<S>&>(), std::declval<XOut<S>&>(),
                        std::declval<XIn<S>>(), std::declval<const Lanes&>()))>> : std::true_type {};

template <class Model, class S, class = void>
struct has_diagnostics : std::false_type {};
template <class Model, class S>
struct has_diagnostics<Model, S,
                       std::void_t<decltype(std::declval<const Model&>().template energy<S>(std::declval<XIn<S>>(),
                                                                                            std::declval<XIn<S>>())),
                                   decltype(std::declval<const Model&>().template kinetic_energy<S>(
                                       std::declval<XIn<S>>(), std::declval<XIn<S>>())),
                                   decltype(std::declval<const Model&>().template conservative<S>(std::declval<XIn<S>>())),
                                   decltype(std::declval<const Model&>().num_contacts()),
                                   decltype(std::declval<const Model&>().template in_contact<S>(
                                       std::declval<XIn<S>>(), std::declval<XIn<S>>(), 0))>> : std::true_type {};

// the optional step tape (rollout.h's has_step_tape detects the same type)
template <class Model, class = void>
struct has_step_tape : std::false_type {};
template <class Model>
struct has_step_tape<Model, std::void_t<typename Model::template StepTape<double>>> : std::true_type {};

// the optional SIMD path (cpu_backend.h's has_packed_path detects the same member)
template <class Model, class = void>
struct has_packed_path : std::false_type {};
template <class Model>
struct has_packed_path<Model, std::void_t<decltype(std::declval<const Model&>().packable())>> : std::true_type {};

}  // namespace contract

// a model the engine can run and differentiate in precision S
template <class Model, class S = double>
constexpr bool satisfies_model_contract =
    contract::has_sizes<Model>::value && contract::has_step<Model, S>::value &&
    contract::has_adj_step<Model, S>::value && contract::has_diagnostics<Model, S>::value;

}  // namespace steer
