# Issue 12 (root, tracefs): triggered snapshots while recording goes on: crash + cool-down, crash-loop rate cap,
# a 240 Hz frame loop's hitch (frameloop.c writes atrace markers), SIGUSR1, Ctrl+C. Instances hindsight_test_trg_*.
if(TARGET hs::tracefs)
  add_executable(hs_frameloop ${CMAKE_CURRENT_LIST_DIR}/frameloop.c)
  target_link_libraries(hs_frameloop PRIVATE hs_flags)
  add_test(NAME ftrace:triggers
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/triggers-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/triggers.yaml
                   $<TARGET_FILE:hs_frameloop>)
  set_tests_properties(ftrace:triggers PROPERTIES TIMEOUT 600 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/triggers.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/triggers.yaml)
# The default profile, as issue 12's "done when" says: left running, it snapshots a segfault, an OOM kill in a
# cgroup and a frame hitch by itself (instances hindsight_stutter_*; skipped while a real recorder holds them).
if(TARGET hs::tracefs)
  add_test(NAME ftrace:stutter_triggers
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/stutter-triggers-test.sh $<TARGET_FILE:engine>
                   ${PROJECT_SOURCE_DIR}/rules/stutter.yaml $<TARGET_FILE:hs_frameloop> $<TARGET_FILE:hs_segv>)
  set_tests_properties(ftrace:stutter_triggers PROPERTIES TIMEOUT 900 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
# A triggered snapshot on a full disk (a 4 MB tmpfs the test mounts): a clear failure, no folder under a final name,
# recording goes on; with room again the next one is complete.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:trigger_diskfull
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/trigger-diskfull-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/triggers.yaml)
  set_tests_properties(ftrace:trigger_diskfull PROPERTIES TIMEOUT 300 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
