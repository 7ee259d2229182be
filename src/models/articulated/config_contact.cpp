// model.tip and model.contact for type articulated: the fingertip point against the plane
// z = contact.height, its penalty law's parameters as θ slots.
#include "models/articulated/config_contact.h"

namespace steer {

void parse_articulated_contact(const JsonObject& m, const std::map<std::string, int>& body_index, ArticulatedLarge& a,
                               ArticulatedNames& names, ArticulatedContactValues& values) {
  JsonObject tip = m.object("tip");
  const std::string tb = tip.string("body", names.bodies.back());
  auto it = body_index.find(tb);
  if (it == body_index.end()) config_fail(tip.key_path("body"), "'" + excerpt(tb) + "' is not a body of model.bodies");
  a.tip_body = it->second;
  std::vector<double> to = tip.numbers("pos", {0, 0, 0}, Range::closed(-1e3, 1e3), 3);
  for (int i = 0; i < 3; ++i) a.tip_offset[i] = to[i];
  tip.finish();
  JsonObject ct = m.object("contact");
  a.contact = ct.boolean("enabled", false);
  values.height = ct.number("height", 0.0, Range::closed(-1e3, 1e3));
  values.stiffness = ct.number("stiffness", 1e4, Range::closed(0, 1e12));
  values.damping = ct.number("damping", 10.0, Range::closed(0, 1e9));
  values.smoothing = ct.number("smoothing", 1e-3, Range{0, 1e3, true, false});
  ct.finish();
}

void articulated_contact_theta(const ArticulatedLarge& a, const ArticulatedContactValues& values, double* theta) {
  theta[a.p_global(Articulated::kPlaneHeight)] = values.height;
  theta[a.p_global(Articulated::kContactStiffness)] = values.stiffness;
  theta[a.p_global(Articulated::kContactDamping)] = values.damping;
  theta[a.p_global(Articulated::kContactSmoothing)] = values.smoothing;
}

void articulated_contact_slots(const ArticulatedLarge& a, const ArticulatedNames&, ModelInfo& info) {
  info.set_param(a.p_global(Articulated::kPlaneHeight), "contact.height", "m", Range::closed(-1e3, 1e3), "contact");
  info.set_param(a.p_global(Articulated::kContactStiffness), "contact.stiffness", "N/m", Range::closed(0, 1e12), "contact");
  info.set_param(a.p_global(Articulated::kContactDamping), "contact.damping", "N*s/m", Range::closed(0, 1e9), "contact");
  info.set_param(a.p_global(Articulated::kContactSmoothing), "contact.smoothing", "m", Range{0, 1e3, true, false},
                 "contact");
}

void articulated_contact_json(const ArticulatedLarge& a, const ArticulatedNames& names, nlohmann::json& m) {
  m["contact"] = a.contact ? "penalty plane z = contact.height at the tip point" : "off";
  m["tip"] = {{"body", names.bodies[a.tip_body]}, {"pos_m", std::vector<double>(a.tip_offset, a.tip_offset + 3)}};
}

}  // namespace steer
