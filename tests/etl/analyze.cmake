# These scripts run analyze (and node) directly: native builds only.
# End-to-end checks of analyze summary and crash on the real fixtures.
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME etl:analyze_summary_crash
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/etl/check-analyze.sh $<TARGET_FILE:analyze>
                   ${PROJECT_SOURCE_DIR}/../shared/fixtures/etl)
endif()

# A synthetic key-event trace (made with the writer): crash must show the
# whitelisted events in time order with their stories and flag the crash.
add_executable(mk_keytrace ${CMAKE_CURRENT_SOURCE_DIR}/etl/mk_keytrace.c)
target_link_libraries(mk_keytrace PRIVATE hindsight)
target_include_directories(mk_keytrace PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME etl:analyze_crash_synthetic
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/etl/check-crash.sh $<TARGET_FILE:mk_keytrace> $<TARGET_FILE:analyze>
                   ${PROJECT_SOURCE_DIR}/rules/stutter.yaml)

  # summary and cpu on a file the writer produced (analyze filter's output).
  add_test(NAME etl:analyze_on_writer_output
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/etl/check-writer-output.sh $<TARGET_FILE:analyze>
                   ${PROJECT_SOURCE_DIR}/../shared/fixtures/etl ${PROJECT_SOURCE_DIR}/rules)
endif()

# The ProcessStop decoder analyze crash uses, and the catalog attribute that picks its events.
add_executable(test_process_stop ${CMAKE_CURRENT_SOURCE_DIR}/etl/test_process_stop.c)
target_link_libraries(test_process_stop PRIVATE hindsight)
target_include_directories(test_process_stop PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
target_compile_definitions(test_process_stop PRIVATE HS_TEST_RULES_DIR="${PROJECT_SOURCE_DIR}/rules")
add_test(NAME unit:etl_process_stop COMMAND ${HS_EMU} $<TARGET_FILE:test_process_stop>)

# The plan-level matcher analyze filter uses (ETW's enable test, offline).
add_executable(test_plan_match ${CMAKE_CURRENT_SOURCE_DIR}/etl/test_plan_match.c)
target_link_libraries(test_plan_match PRIVATE hindsight)
target_include_directories(test_plan_match PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
target_compile_definitions(test_plan_match PRIVATE HS_TEST_ETL_DIR="${CMAKE_CURRENT_SOURCE_DIR}/etl")
add_test(NAME unit:plan_match COMMAND ${HS_EMU} $<TARGET_FILE:test_plan_match>)
