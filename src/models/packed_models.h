// The model structs with a SIMD path on the CPU (packable(), cpu_packed.h), beside the
// registered models (registry.h): the one list the packed path's entry points are generated
// from, once per instruction set (src/backend/cpu_packed_isa.cpp) and in the run-time dispatch
// (src/backend/cpu_packed.cpp). A model without a SIMD path needs no line here: the CPU
// backend runs it on its scalar path. A struct that defines packable() but is missing here
// fails to link (cpu_run_packed<Model, S>, cpu_backend.h).
#pragma once

#include "steer/models/articulated.h"
#include "steer/models/mass_spring.h"
#include "steer/controller.h"

#define STEER_PACKED_MODELS(X) \
  X(MassSpring) X(Articulated) X(ArticulatedLegged) X(Controlled<MassSpring>)
