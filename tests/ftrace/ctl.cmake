# Issue 14 item 4 (root, tracefs): engine ctl status/snapshot/stop against a real recording; hostile and concurrent
# clients (ctl-clients.py), a non-root user refused, a stale socket. Instances hindsight_test_ctl_*; docs/ctl.md.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:ctl
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/ctl-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/ctl.yaml
                   ${CMAKE_CURRENT_LIST_DIR}/ctl-clients.py)
  set_tests_properties(ftrace:ctl PROPERTIES TIMEOUT 300 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/ctl.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/ctl.yaml)
