// The articulated model's ground contacts: points and spheres fixed in bodies, touching the
// plane z = contact.height. The model holds one GroundContacts (`ground`); contact.h turns
// them into generalized forces and their adjoint. Its θ slots follow the model's globals:
// θ[p_contact(k)], k < GroundContacts::kParams.
#pragma once

namespace steer {

struct GroundContacts {
  static constexpr int kMaxPoints = 8;  // contact points over the whole tree
  static constexpr int kParams = 0;     // θ slots of the contact laws beyond the model's globals
  int n_points = 0;
  int body[kMaxPoints] = {};           // body index of point c
  double pos[kMaxPoints][3] = {};      // point c in its body's frame [m]
  double radius[kMaxPoints] = {};      // sphere radius [m] (0: a point)
};

}  // namespace steer
