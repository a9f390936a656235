# End-to-end checks of analyze summary and crash on the real fixtures.
add_test(NAME etl:analyze_summary_crash
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/etl/check-analyze.sh $<TARGET_FILE:analyze>
                 ${PROJECT_SOURCE_DIR}/../shared/fixtures/etl)
