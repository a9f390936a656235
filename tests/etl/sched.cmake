# The scheduler's records in .etl (CSwitch, ReadyThread; docs/etl-notes.md "Wait analysis"): decoders on synthetic
# payloads, a written file read back, and the real fixtures (none logs a context switch).
add_executable(test_etl_sched ${CMAKE_CURRENT_LIST_DIR}/test_etl_sched.c)
target_link_libraries(test_etl_sched PRIVATE hs_formats hs_rules) # hs_rules: the wait reasons by name
target_include_directories(test_etl_sched PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
target_compile_definitions(test_etl_sched PRIVATE _POSIX_C_SOURCE=200809L
                           HS_TEST_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/../shared/fixtures/etl")
add_test(NAME etl:sched COMMAND test_etl_sched)
