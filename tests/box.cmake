# The sliding box (issue 29; docs/legged.md "The box", docs/contact.md "Restitution"): the
# softplus law's restitution (its adjoint, the gradient suite on a box on a free root, a ball's
# bounce at two timesteps), configs/box_slide.json's identification of friction and restitution
# from the shipped recording, and the restitution key's refusals (the CLI's exit code 2).
steer_test(box_identification_test slow)
add_dependencies(box_identification_test steer_cli)
