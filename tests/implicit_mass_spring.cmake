# issue 30: the backward-Euler mass-spring step (include/steer/models/mass_spring/implicit.h),
# its implicit-function adjoint in the gradient suite, stiffness, convergence and lanes
steer_test(implicit_mass_spring_test fast)
