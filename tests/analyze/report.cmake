# analyze report without root (issue 13): the committed trace.dat fixture against a golden report.txt, the JSON
# schema, the HTML's self-containment, a truncated copy (exit 1) and bad paths (exit 2). Included by
# tests/ftrace/report.cmake.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME analyze:report_fixture
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/report-fixture-test.sh $<TARGET_FILE:analyze> ${PROJECT_SOURCE_DIR})
  set_tests_properties(analyze:report_fixture PROPERTIES TIMEOUT 120)
endif()
# The fixture's report.html in Debian's headless chromium via puppeteer-core (npm ci in tests/analyze/browser);
# the screenshot is kept in the build folder. 77 (skipped) without chromium, node or puppeteer-core.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME analyze:report_browser
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/report-browser-test.sh $<TARGET_FILE:analyze> ${PROJECT_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR}/test-artifacts)
  set_tests_properties(analyze:report_browser PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77)
endif()
