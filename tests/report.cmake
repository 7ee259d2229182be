# report.html (docs/report.md): the writer itself (fast), and the pages of cut-down shipped
# configs in headless Chromium (slow, report): no JavaScript error, the animation advances,
# a screenshot each. The browser test skips (exit 77) only where no Chromium is installed;
# tools/bootstrap.sh test installs the Debian package chromium.
steer_test(report_writer_test fast)
# the gradient check's and the horizon sweep's progress callbacks (fast)
steer_test(validate_progress_test fast)
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME Report.browser
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report_browser.py $<TARGET_FILE:steer_cli>
                   ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/report_browser)
  set_tests_properties(Report.browser PROPERTIES LABELS "slow;report" SKIP_RETURN_CODE 77 TIMEOUT 1500)
endif()
