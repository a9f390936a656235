# What triggers need from the tracefs backend (root, Linux 6.17+ for
# copy_trace_marker): decoded key-event fields, applications' trace_marker
# writes copied into the key instance (ftrace:print on a whitelist too), mark,
# now_ns, and ring snapshots that keep the key events streaming. Instance
# names hindsight_test_trgbe_*, apart from every other test's.
if(TARGET hs::tracefs)
  add_executable(test_trgbe ${CMAKE_CURRENT_LIST_DIR}/trgbe.c)
  target_link_libraries(test_trgbe PRIVATE hs_backends hs_rules)
  target_compile_definitions(test_trgbe PRIVATE _GNU_SOURCE)
  add_test(NAME ftrace:trgbe COMMAND test_trgbe ${CMAKE_CURRENT_LIST_DIR}/trgbe.yaml ${CMAKE_CURRENT_BINARY_DIR})
  # 77: not root, or a kernel without copy_trace_marker.
  set_tests_properties(ftrace:trgbe PROPERTIES TIMEOUT 300 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/trgbe.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/trgbe.yaml)
