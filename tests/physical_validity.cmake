# Physical validity of model inputs (docs/config.md, "Physical validity"): inertia tensors,
# masses and rest lengths refused with exit 2 whether given, included or reached by a batch draw
steer_test(physical_validity_test fast)
