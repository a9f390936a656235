# The I/O and coverage estimator: `analyze estimate` on the real ETL fixtures (totals
# against their independent counts, bytes against record sizes summed from the
# buffers), on a trace.dat the test records (against trace-cmd report), and the live
# `engine --estimate` with stutter.yaml (root). docs/estimator.md says what is measured.
set(HS_EST_DIR ${CMAKE_CURRENT_LIST_DIR})
set(HS_EST_FIXTURES ${PROJECT_SOURCE_DIR}/../shared/fixtures/etl)
# Under Wine too: the Windows build must count and size the same records.
add_test(NAME estimate:etl_fixtures
         COMMAND ${HS_EST_DIR}/check-etl.sh ${HS_EST_FIXTURES} ${PROJECT_SOURCE_DIR}/rules/stutter.yaml
                 ${HS_EMU} $<TARGET_FILE:analyze>)
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME estimate:usage
           COMMAND ${HS_EST_DIR}/check-usage.sh $<TARGET_FILE:engine> ${PROJECT_SOURCE_DIR}/rules/stutter.yaml)
endif()
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME estimate:tracedat
           COMMAND ${HS_EST_DIR}/check-tracedat.sh $<TARGET_FILE:analyze> ${PROJECT_SOURCE_DIR}/rules/stutter.yaml)
  set_tests_properties(estimate:tracedat PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
if(TARGET hs::tracefs)
  add_test(NAME estimate:live_stutter
           COMMAND ${HS_EST_DIR}/check-live.sh $<TARGET_FILE:engine> $<TARGET_FILE:analyze>
                   ${PROJECT_SOURCE_DIR}/rules/stutter.yaml)
  set_tests_properties(estimate:live_stutter PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 RUN_SERIAL ON)
endif()
# engine.exe under Wine: ETW there writes no file, so the estimate must say that
# no trace was read and fail, never report rates of nothing.
if(WIN32 AND CMAKE_CROSSCOMPILING)
  add_test(NAME estimate:wine_smoke
           COMMAND ${CMAKE_COMMAND} -DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR} -DENGINE=$<TARGET_FILE:engine>
                   -DRULES=${PROJECT_SOURCE_DIR}/rules/stutter.yaml
                   -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/estimate-smoke -P ${HS_EST_DIR}/wine-smoke.cmake)
endif()
