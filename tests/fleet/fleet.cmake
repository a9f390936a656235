# tests/fleet: the fleet signature in every report and `analyze fleet` (issue 23; docs/fleet.md). fleet:signature
# needs no root (fixture goldens, stability across names and folders, a replayed run's snapshots reported by
# analyze fleet, DuckDB's count over --ndjson against analyze fleet's); fleet:runs records three real crashes as
# root. DuckDB is npm's @duckdb/node-api in tests/fleet/node_modules (./run.sh --test runs npm ci there); without it
# both tests say what they left out (77), and with CI=true they fail.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  add_executable(hs_abort ${CMAKE_CURRENT_LIST_DIR}/abort.c)
  # The abort is the point: no sanitizer may report it first.
  target_compile_options(hs_abort PRIVATE -fno-sanitize=all)
  target_link_options(hs_abort PRIVATE -fno-sanitize=all)
  add_test(NAME fleet:signature
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/fleet-test.sh $<TARGET_FILE:analyze> $<TARGET_FILE:engine>
                   $<TARGET_FILE:mk_report_etl> ${PROJECT_SOURCE_DIR})
  set_tests_properties(fleet:signature PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
  add_test(NAME fleet:runs
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/fleet-root-test.sh $<TARGET_FILE:engine> $<TARGET_FILE:analyze>
                   $<TARGET_FILE:hs_segv> $<TARGET_FILE:hs_abort> ${PROJECT_SOURCE_DIR})
  set_tests_properties(fleet:runs PROPERTIES RUN_SERIAL ON TIMEOUT 300 SKIP_RETURN_CODE 77 LABELS "root")
endif()
