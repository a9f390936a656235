# Issue 11, defects 4, 5, 6 and 8 (root, tracefs): the engine leaves itself out
# of its instances (launch mode still records its tree); a second engine with
# the same instance names refuses and names the running one; a kill -9'd run's
# chunks are rescued by the next start; launch outputs are owner-only; --cpus
# only goes with --plan. Their instance names are hindsight_test_{lock,stale,
# notrace_launch}_*, apart from every other test's.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:lock
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/lock-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/lock-test.yaml)
  add_test(NAME ftrace:notrace
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/notrace-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/lock-test.yaml)
  add_test(NAME ftrace:notrace_launch
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/notrace-launch-test.sh $<TARGET_FILE:engine>
                   ${CMAKE_CURRENT_LIST_DIR}/notrace-launch.yaml)
  add_test(NAME ftrace:stale
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/stale-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/stale-test.yaml)
  set_tests_properties(ftrace:lock ftrace:notrace ftrace:notrace_launch ftrace:stale PROPERTIES TIMEOUT 300 RUN_SERIAL ON)
endif()
# Usage only, no tracefs: but an engine that wrongly records would, so serial too.
if(NOT CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME engine:cpus_needs_plan
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/cpus-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/lock-test.yaml)
  set_tests_properties(engine:cpus_needs_plan PROPERTIES TIMEOUT 120 RUN_SERIAL ON)
endif()
foreach(profile lock-test stale-test notrace-launch)
  add_test(NAME "rulecheck_clean:tests/ftrace/${profile}.yaml"
           COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/${profile}.yaml)
endforeach()
