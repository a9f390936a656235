# perf.data (issue 24 item 3): the reader (hindsight/perfdata.h) and `analyze cpu` over it. Included from
# tests/CMakeLists.txt. The unit test and the damage tests need no root; perfdata:launch_analyze records with
# engine --launch (root, perf_event_open) and reads the result back.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  # The reader and the profile on a file written with launch mode's writer (perf_file.c, a private header;
  # compiled in, so the test needs only the layers up to hs_event, not the backends).
  add_executable(test_perfdata ${CMAKE_CURRENT_LIST_DIR}/test_perfdata.c ${PROJECT_SOURCE_DIR}/engine/src/perf/perf_file.c
                 ${PROJECT_SOURCE_DIR}/engine/src/perf/buildid.c)
  target_link_libraries(test_perfdata PRIVATE hs_event)
  target_include_directories(test_perfdata PRIVATE ${PROJECT_SOURCE_DIR}/engine/src ${CMAKE_CURRENT_SOURCE_DIR}/unit)
  target_compile_definitions(test_perfdata PRIVATE _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE)
  add_test(NAME perfdata:unit COMMAND test_perfdata)
endif()

# Cuts and byte flips of the fuzzer's real seeds (one of launch mode's writer, one of perf record's).
add_executable(perfdata_damage ${CMAKE_CURRENT_LIST_DIR}/damage.c)
target_link_libraries(perfdata_damage PRIVATE hs_event)
foreach(seed launch perf-record)
  add_test(NAME perfdata:damage_${seed}
           COMMAND perfdata_damage ${PROJECT_SOURCE_DIR}/tests/fuzz/seeds-perfdata/${seed}.data 4000)
endforeach()

if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME perfdata:launch_analyze
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/check-launch-analyze.sh $<TARGET_FILE:engine> $<TARGET_FILE:analyze>
                   $<TARGET_FILE:perf_busy> ${PROJECT_SOURCE_DIR}/rules/cpu-sample.yaml
                   ${PROJECT_SOURCE_DIR}/tests/schema/speedscope-check.mjs)
  # perf_event_open sampling as root, and the cpu-sample profile's one tracefs instance name (tests/perf/perf.cmake).
  set_tests_properties(perfdata:launch_analyze PROPERTIES RESOURCE_LOCK hindsight_cpu_sample LABELS machine)
  # Under the sanitizers an engine start takes 40 s (tests/ci.cmake's perf:engine_launch row says why); the reader
  # and the profile run under ASan in perfdata:unit, perfdata:damage_* and fuzz:perfdata. Passes there too (43 s).
  if(HS_SANITIZE AND NOT HS_SANITIZE_SCENARIOS)
    set_tests_properties(perfdata:launch_analyze PROPERTIES DISABLED ON)
    set_property(TEST perfdata:launch_analyze APPEND PROPERTY LABELS sanitizer_skipped)
  endif()
endif()
