# Ring snapshots and .dat writing (root): comm names survive key-event rebuilds;
# a full disk keeps the newest part of the ring; the .dat size check.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:cmdlines
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/cmdlines-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/cmdlines.yaml)
  set_tests_properties(ftrace:cmdlines PROPERTIES TIMEOUT 300 RUN_SERIAL ON)
  add_test(NAME ftrace:diskfull
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/diskfull-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/diskfull.yaml)
  set_tests_properties(ftrace:diskfull PROPERTIES TIMEOUT 300 RUN_SERIAL ON)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/cmdlines.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/cmdlines.yaml)
add_test(NAME "rulecheck_clean:tests/ftrace/diskfull.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/diskfull.yaml)
