# trace.dat reading: a real trace recorded by the test itself (root, tracefs,
# trace-cmd), checked with analyze counts/crash/summary against trace-cmd report.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(hs_segv ${CMAKE_CURRENT_SOURCE_DIR}/tracedat/segv.c)
  # The crash is the point: no sanitizer may catch it first.
  target_compile_options(hs_segv PRIVATE -fno-sanitize=all)
  target_link_options(hs_segv PRIVATE -fno-sanitize=all)
  add_test(NAME tracedat:analyze_real_trace
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tracedat/check-tracedat.sh $<TARGET_FILE:analyze>
                   $<TARGET_FILE:hs_segv> ${PROJECT_SOURCE_DIR}/rules/stutter.yaml)
  # 77: not root, no tracefs or no trace-cmd on this machine.
  set_tests_properties(tracedat:analyze_real_trace PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
