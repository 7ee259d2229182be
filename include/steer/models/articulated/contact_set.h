// The articulated model's ground contacts: points and spheres fixed in bodies, touching the
// plane z = contact.height. The model holds one GroundContacts (`ground`); contact.h turns
// them into generalized forces and their adjoint. Its θ slots follow the model's globals:
// θ[p_contact(k)], k < GroundContacts::kParams.
#pragma once

#include "steer/models/articulated/contact_law.h"

namespace steer {

// the settings of the ground contacts, whose size does not depend on the capacity
struct GroundContactSettings {
  // θ slots of the contact laws beyond the model's globals (contact_law.h's GroundContactParam)
  static constexpr int kParams = kGroundContactParams;
  enum NormalLaw { kSoftplus = 0, kImpedance = 1 };
  int law = kSoftplus;  // the points' normal law (the tip keeps the softplus law)
  // 1: the softplus law's damping d_c is restitution_damping(θ[contact.restitution], k, m_c)
  // (contact_law.h) instead of θ[contact.damping]; the tip keeps θ[contact.damping]
  int restitution = 0;
  // 1: time-of-impact restitution (impact.h): within a step, a point that crosses the plane
  // from above gets the impulse that turns its normal velocity v_n into −e v_n, e =
  // θ[contact.restitution], applied at the crossing time; the normal law still acts (on
  // resting and slow contacts), with θ[contact.damping] as its damping
  int impact = 0;
  static constexpr int kMaxImpactSweeps = 4;
  int impact_sweeps = 2;      // passes over the points per step (1 … kMaxImpactSweeps)
  double impact_speed = 0.1;  // v_g [m/s]: impulses fade out below this crossing speed (impact.h)
  int n_points = 0;
};

// NP ground points at most (the model's capacity, model.h): the arm's and the quadruped's
// 8 keep their kernels small; the CPU's large trees take the walkers' and humanoids' dozens
template <int NP>
struct GroundContactsCap : GroundContactSettings {
  static constexpr int kMaxPoints = NP;  // contact points over the whole tree
  int body[NP] = {};                     // body index of point c
  double pos[NP][3] = {};                // point c in its body's frame [m]
  double radius[NP] = {};                // sphere radius [m] (0: a point)
};

// the settings' names (GroundContacts::kSoftplus, ::kParams) at any capacity
using GroundContacts = GroundContactSettings;

}  // namespace steer
