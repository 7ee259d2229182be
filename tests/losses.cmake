# The site, running-state and trajectory-fitting losses, data files, per-step controls from a
# file and the gradient side file (tests/losses_test.cpp); the same losses on the emulated CUDA
# device against the CPU (tests/losses_emulated_test.cpp)
steer_test(losses_test fast)
steer_emulated_test(emulated_losses_test steer_cuda_emulation "fast;gpu_emulation"
                    ${CMAKE_CURRENT_SOURCE_DIR}/losses_emulated_test.cpp)
