# Rigid bodies in frictional contact with the ground (issue 29; docs/contact.md): the contact
# laws alone, the gradient suite on a box on 3 slides + 3 hinges and an arm with spheres, the
# packed path's bits, the laws' static and sliding physics, the diagnostics and the config.
steer_test(rigid_contact_test fast)
