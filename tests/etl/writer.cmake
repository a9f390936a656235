# ETL writer: round trips of every fixture, synthetic files for what no sample has, and `analyze filter`.
add_executable(test_etl_writer ${CMAKE_CURRENT_LIST_DIR}/test_etl_writer.c)
target_link_libraries(test_etl_writer PRIVATE hindsight)
target_include_directories(test_etl_writer PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
target_compile_definitions(test_etl_writer PRIVATE _POSIX_C_SOURCE=200809L
                           HS_TEST_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/../shared/fixtures/etl")
add_test(NAME etl:writer COMMAND test_etl_writer)

# The filter profiles must be clean rules (they include filter-catalog.yaml).
foreach(f filter-catalog filter-profile filter-synthetic)
  add_test(NAME "etl:filter-rules:${f}" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/${f}.yaml)
endforeach()

# `analyze filter`: a fixture with a subset computed from its own counts, a
# synthetic input for the level/keyword/whitelist rules, and the error exits.
# filter-check.sh runs analyze directly: native builds only.
if(NOT CMAKE_CROSSCOMPILING)
  set(HS_FILTER_CHECK ${CMAKE_CURRENT_LIST_DIR}/filter-check.sh)
  add_test(NAME etl:filter-fixture
           COMMAND ${HS_FILTER_CHECK} fixture $<TARGET_FILE:analyze>
                   ${PROJECT_SOURCE_DIR}/../shared/fixtures/etl/microsoft_perfview/net.4.5.2.x86.etl
                   ${CMAKE_CURRENT_LIST_DIR}/filter-profile.yaml)
  add_test(NAME etl:filter-synthetic
           COMMAND ${HS_FILTER_CHECK} synthetic $<TARGET_FILE:analyze> $<TARGET_FILE:test_etl_writer>
                   ${CMAKE_CURRENT_LIST_DIR}/filter-synthetic.yaml ${CMAKE_CURRENT_LIST_DIR}/filter-synthetic.counts)
  add_test(NAME etl:filter-errors
           COMMAND ${HS_FILTER_CHECK} errors $<TARGET_FILE:analyze>
                   ${PROJECT_SOURCE_DIR}/../shared/fixtures/etl/rbeesley_hw3d/trace.etl
                   ${CMAKE_CURRENT_LIST_DIR}/filter-profile.yaml)
endif()
