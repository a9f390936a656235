# Issue 14 item 4 (root, tracefs): engine ctl status/snapshot/stop against a real recording; hostile and concurrent
# clients (ctl-clients.py), a non-root user refused, a stale socket. Instances hindsight_test_ctl_*; docs/ctl.md.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:ctl
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/ctl-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/ctl.yaml
                   ${CMAKE_CURRENT_LIST_DIR}/ctl-clients.py)
  set_tests_properties(ftrace:ctl PROPERTIES TIMEOUT 300 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/ctl.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/ctl.yaml)
# The control channel's JSON reader and names (no root, no kernel): unit:ctl.
if(TARGET hs_run)
  add_executable(test_ctl ${CMAKE_CURRENT_LIST_DIR}/ctl-json-test.c)
  target_link_libraries(test_ctl PRIVATE hs_run)
  target_include_directories(test_ctl PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
  add_test(NAME unit:ctl COMMAND test_ctl)
endif()
