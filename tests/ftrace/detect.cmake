# Trigger detection (root, Linux 6.17+ for copy_trace_marker): a watched key session's detection instance
# (<logger_name>_trg) with exactly the watched events and the session's filter, a crash caught long before the
# session's hourly flush, copies fed to the triggers once and never counted, removal at stop and after kill -9.
# Instances hindsight_test_det_*.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:detect
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/detect-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/detect.yaml)
  set_tests_properties(ftrace:detect PROPERTIES TIMEOUT 300 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/detect.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/detect.yaml)
