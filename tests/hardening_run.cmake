# The run's guarantees (docs/robustness.md), each part a test of tests/hardening_run.py
# against the CLI: concurrent publication, output folders refused before any work, stale
# temporary folders, SIGINT/SIGTERM, SIGKILL + --resume bit for bit, a changed config refused.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(hardening_args $<TARGET_FILE:steer_cli> ${CMAKE_CURRENT_SOURCE_DIR}/data/hardening ${CMAKE_CURRENT_BINARY_DIR}/hardening)
  foreach(part output stale changed)
    add_test(NAME Hardening.${part} COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/hardening_run.py ${hardening_args} ${part})
    set_tests_properties(Hardening.${part} PROPERTIES LABELS fast)
  endforeach()
  add_test(NAME Hardening.concurrent COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/hardening_run.py ${hardening_args} concurrent 200)
  add_test(NAME Hardening.signals COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/hardening_run.py ${hardening_args} signals)
  add_test(NAME Hardening.kill COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/hardening_run.py ${hardening_args} kill 21)
  set_tests_properties(Hardening.concurrent Hardening.signals Hardening.kill PROPERTIES LABELS slow)
  # each part works in its own folder under hardening/, so the parts may run in parallel
endif()
