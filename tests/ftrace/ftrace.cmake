# The Linux tracefs backend end to end (root): the real engine records a test
# profile with small rings while the test forks, crashes a child, writes files
# and OOM-kills a task in a memory cgroup; then kill -9 and restart.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:record
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/record-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/record.yaml
                   $<TARGET_FILE:analyze> $<TARGET_FILE:hs_segv>)
  set_tests_properties(ftrace:record PROPERTIES TIMEOUT 400 RUN_SERIAL ON)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/record.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/record.yaml)
# The file-circular session's bound (root): a fork/exec loop overfills a 1 MB
# session; the file stays bounded and keeps only the newest events.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:circular
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/circular-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/circular.yaml)
  set_tests_properties(ftrace:circular PROPERTIES TIMEOUT 300 RUN_SERIAL ON)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/circular.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/circular.yaml)
# Further tracefs backend tests, one .cmake file per area (snapshot, lock, ...).
file(GLOB HS_FTRACE_TEST_PARTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cmake)
list(REMOVE_ITEM HS_FTRACE_TEST_PARTS ${CMAKE_CURRENT_LIST_FILE})
foreach(part IN LISTS HS_FTRACE_TEST_PARTS)
  include(${part})
endforeach()
