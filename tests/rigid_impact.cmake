# Time-of-impact restitution for the articulated model's ground points (issue 29;
# docs/contact.md "Restitution: the time-of-impact variant"): the gradient suite on a ball and
# the box with impulses, the exact bounce and its convergence to the closed form under gravity
# (with the derivatives), the packs' bits, and the keys' refusals.
steer_test(rigid_impact_test fast)
