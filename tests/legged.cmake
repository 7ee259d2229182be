# Legged robots and free rigid bodies in contact (issue 29; docs/legged.md): the quadruped and
# box model files checked in MuJoCo itself (label crosscheck, where a MuJoCo >= 3.3 is found).
if(STEER_MUJOCO_FOUND)
  steer_test(legged_mujoco_test crosscheck)
  target_include_directories(legged_mujoco_test SYSTEM PRIVATE ${STEER_MUJOCO_INCLUDE_DIR})
  target_link_libraries(legged_mujoco_test PRIVATE ${STEER_MUJOCO_LIBRARY})
endif()

# The foot-strike sign error (docs/legged.md): the quadruped dropped onto the ground, the
# adjoint's sign against centered FD under stiff contact (labelled fd_mismatch and
# contact_mode_switch, with the step and foot of the switch) and its agreement once the
# contact smoothing is widened; it imports the quadruped, so it is built where MuJoCo is found.
if(STEER_MUJOCO_IMPORT)
  steer_test(legged_test fast)
endif()
