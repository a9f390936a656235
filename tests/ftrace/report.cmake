# Issue 13 (root, tracefs): analyze report on snapshots the engine took by itself of a real segfault, a crash of a
# program with a hostile name (HTML escaping) beside a non-UTF-8 exec, an OOM kill in a memory cgroup and a frame
# hitch: each verdict names the process and the cause in the first three lines; report.json validates.
# Instances hindsight_test_rpt_*.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:report
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/report-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/report.yaml
                   $<TARGET_FILE:analyze> $<TARGET_FILE:hs_segv> $<TARGET_FILE:hs_frameloop> ${PROJECT_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR}/test-artifacts)
  set_tests_properties(ftrace:report PROPERTIES TIMEOUT 600 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
# The verdict at capture time (issue 20 item 3): stutter.yaml, a segfault, the engine's own report within 5 s of the
# snapshot, the verdict in main.log, the live view, engine ctl status and the tap; the final rings' report at Ctrl+C;
# the documents against their schemas; capture_report: false.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME ftrace:capture_report
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/capture-report-test.sh $<TARGET_FILE:engine> $<TARGET_FILE:analyze>
                   $<TARGET_FILE:hs_segv> ${PROJECT_SOURCE_DIR})
  set_tests_properties(ftrace:capture_report PROPERTIES TIMEOUT 600 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/report.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/report.yaml)
# The unprivileged half (tests/analyze/report.cmake: the fixture golden, schema, HTML, damaged input) rides here
# because tests/CMakeLists.txt does not include tests/analyze/ yet (tests are registered only under tests/).
include(${PROJECT_SOURCE_DIR}/tests/analyze/report.cmake)
