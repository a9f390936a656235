# Issue 22 (root, tracefs): a hang caught while it lasts (a 240 Hz atrace loop that stops drawing for 6 s, busy or
# SIGSTOPped, under stress-ng when installed), and what is not a hang (a debugger, an exit, few frames); memory
# pressure through the kernel's PSI trigger in a memory-limited cgroup. Instances hindsight_test_dl_*.
if(TARGET hs::tracefs)
  add_executable(hs_deadline_loop ${CMAKE_CURRENT_LIST_DIR}/deadline-loop.c)
  target_link_libraries(hs_deadline_loop PRIVATE hs_flags)
  add_test(NAME ftrace:deadline
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/deadline-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/deadline.yaml
                   $<TARGET_FILE:hs_deadline_loop>)
  set_tests_properties(ftrace:deadline PROPERTIES TIMEOUT 300 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/deadline.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/deadline.yaml)
if(TARGET hs::tracefs)
  add_test(NAME ftrace:counter_psi
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/counter-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/deadline.yaml)
  set_tests_properties(ftrace:counter_psi PROPERTIES TIMEOUT 300 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
# stutter.yaml left running catches a hang and memory pressure by itself and records on.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:stutter_deadline
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/deadline-stutter-test.sh $<TARGET_FILE:engine>
                   ${PROJECT_SOURCE_DIR}/rules/stutter.yaml $<TARGET_FILE:hs_deadline_loop>)
  set_tests_properties(ftrace:stutter_deadline PROPERTIES TIMEOUT 600 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
