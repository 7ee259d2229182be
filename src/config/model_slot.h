// The part of an ExperimentConfig that belongs to its model: one value of the model's own
// setup type (src/models/<name>/<name>_setup.h: the model struct and whatever else its
// folder parses, a robot's topology or a tree's joint names), which src/config/ never names.
// A model's parse_model hook creates it, the model's other hooks read it back by type.
#pragma once

#include <any>
#include <stdexcept>
#include <string>

namespace steer {

class ModelSlot {
 public:
  // replaces the slot's value with a default T; T::kModel is the model.type it belongs to
  template <class T>
  T& emplace() {
    value_ = T{};
    model_ = T::kModel;
    return *std::any_cast<T>(&value_);
  }
  // the value as T; std::logic_error naming both models when the slot holds another model's
  // setup or none (a hook of one model called on another model's config)
  template <class T>
  T& get() {
    if (T* p = std::any_cast<T>(&value_)) return *p;
    throw mismatch(T::kModel);
  }
  template <class T>
  const T& get() const {
    if (const T* p = std::any_cast<T>(&value_)) return *p;
    throw mismatch(T::kModel);
  }
  // the model.type whose setup the slot holds, empty when none
  const std::string& model() const { return model_; }

 private:
  std::logic_error mismatch(const char* expected) const {
    return std::logic_error(std::string("model setup: expected the ") + expected +
                            " model's, but the config holds " +
                            (model_.empty() ? std::string("none") : "the " + model_ + " model's"));
  }
  // std::any copies its value: a copied config owns its own model struct (dt halved in the
  // copy leaves the original's alone)
  std::any value_;
  std::string model_;
};

}  // namespace steer
