// Volumetric soft bodies: linear tetrahedra with a hyperelastic material (the stable neo-Hookean
// energy, with linear-elastic parameters or warp.sim's as written), Rayleigh damping, lumped
// masses, gravity and a compliant ground with smoothed friction; symplectic Euler. The model
// type "fem" (docs/fem.md).
//
// The parts, one algorithm per header (models/fem/):
//   tensor3.h    3×3 matrices, determinant, cofactor and its differential
//   material.h   Ψ(F), P(F), dP[G], the viscous stresses and their adjoints
//   element.h    one tetrahedron's nodal forces, their vector-Jacobian product, the stiffness's
//                action
//   model.h      data, layout, the element's material from θ, declarations
//   step.h       step and adj_step, the ground, the statics, the diagnostics
//   implicit.h   the backward-Euler step (Newton on the step's potential) and its adjoint
#pragma once

#include "steer/models/fem/model.h"
#include "steer/models/fem/step.h"
#include "steer/models/fem/implicit.h"
