# analyze report without root (issue 13): the committed trace.dat fixture against a golden report.txt, the JSON
# schema, the HTML's self-containment, a truncated copy (exit 1) and bad paths (exit 2). Included by
# tests/ftrace/report.cmake.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME analyze:report_fixture
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/report-fixture-test.sh $<TARGET_FILE:analyze> ${PROJECT_SOURCE_DIR})
  set_tests_properties(analyze:report_fixture PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
endif()
# The run folder's documents as the engine writes them (a replay with triggers, no root) and analyze's report.json,
# against schemas/run|snapshot|report.schema.json (tests/schema/check.mjs; 77 without node or its node_modules).
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME schema:run_folder
           COMMAND ${PROJECT_SOURCE_DIR}/tests/schema/run-folder-test.sh $<TARGET_FILE:engine> $<TARGET_FILE:analyze>
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(schema:run_folder PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77)
endif()
# No circle of files in the report layer (engine/src/report): its archive's symbol tables ordered by tsort.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME analyze:report_layers
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/report-layers.sh $<TARGET_OBJECTS:hs_report> COMMAND_EXPAND_LISTS)
  set_tests_properties(analyze:report_layers PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
endif()
# The fixture's report.html in Debian's headless chromium via puppeteer-core (npm ci in tests/analyze/browser);
# the screenshot is kept in the build folder. 77 (skipped) without chromium, node or puppeteer-core.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME analyze:report_browser
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/report-browser-test.sh $<TARGET_FILE:analyze> ${PROJECT_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR}/test-artifacts $<TARGET_FILE:mk_report_etl>)
  set_tests_properties(analyze:report_browser PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77)
endif()
# .etl reports (Windows): synthetic TDR, device-removal and crash-exit traces made with the ETL writer (their verdicts
# and WPA regions files), a Windows snapshot folder, and the 14 real ETL fixtures read from ../shared at run time.
add_executable(mk_report_etl ${CMAKE_CURRENT_LIST_DIR}/mk_report_etl.c)
target_link_libraries(mk_report_etl PRIVATE hindsight)
target_include_directories(mk_report_etl PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME analyze:report_etl
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/report-etl-test.sh $<TARGET_FILE:analyze> $<TARGET_FILE:mk_report_etl>
                   ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/../shared/fixtures/etl)
  set_tests_properties(analyze:report_etl PROPERTIES TIMEOUT 180)
elseif(WIN32 AND CMAKE_CROSSCOMPILING AND HS_EMU)
  # the Windows build: the same checks with analyze.exe and mk_report_etl.exe under Wine
  add_test(NAME analyze:report_etl
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/report-etl-test.sh $<TARGET_FILE:analyze> $<TARGET_FILE:mk_report_etl>
                   ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/../shared/fixtures/etl ${HS_EMU})
  set_tests_properties(analyze:report_etl PROPERTIES TIMEOUT 600)
endif()
