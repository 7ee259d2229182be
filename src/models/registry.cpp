#include "models/registry.h"

#include <stdexcept>

namespace steer {

// An explicit list (STEER_REGISTERED_MODELS, registry.h) rather than self-registering static
// objects: a static library drops an object file nothing references, and with it a
// registration made by a static initializer.
const std::vector<const ModelDef*>& registered_models() {
#define STEER_MODEL_ENTRY(name) &name##_model(),
  static const std::vector<const ModelDef*> all = {STEER_REGISTERED_MODELS(STEER_MODEL_ENTRY)
                                                       STEER_EXTRA_MODELS(STEER_MODEL_ENTRY)};
#undef STEER_MODEL_ENTRY
  return all;
}

std::string model_names(bool (*has)(const ModelDef&)) {
  std::string s;
  for (const ModelDef* d : registered_models())
    if (!has || has(*d)) s += (s.empty() ? "" : ", ") + d->name;
  return s;
}

const ModelDef* find_model(const std::string& name) {
  for (const ModelDef* d : registered_models())
    if (d->name == name) return d;
  return nullptr;
}

const ModelDef& model_of(const ExperimentConfig& c) {
  const ModelDef* d = find_model(c.model_type);
  if (!d) throw std::invalid_argument("model.type: '" + c.model_type + "' has no simulator");
  return *d;
}

}  // namespace steer
