# Issue 21 item 7 (root, tracefs, cgroups, network namespaces): fault-injection scenarios with golden verdicts.
# One engine with stutter.yaml's own sessions (the profile is derived at run time, changing only warm-up, cool-down
# and the rate cap) snapshots the hitch each scenario injects into a stand-in game (hitchgame.c) with its culprit
# (culprit.c), all under random names, with stress-ng on every CPU; each report.json must name the reason id, the
# culprit and its share (check-verdict.sh). docs/scenarios.md, "Cause scenarios". Not in sanitizer builds: the full
# stutter profile takes ~50 s to start there (tests/scenarios/scenarios.cmake), and the scenarios check the report's
# reasoning, which the product build decides; RUN_SERIAL like every test that records (label root).
if(TARGET hs::tracefs)
  find_package(Threads REQUIRED)
  add_executable(hs_hitchgame ${CMAKE_CURRENT_LIST_DIR}/hitchgame.c)
  target_link_libraries(hs_hitchgame PRIVATE hs_flags Threads::Threads)
  add_executable(hs_culprit ${CMAKE_CURRENT_LIST_DIR}/culprit.c)
  target_link_libraries(hs_culprit PRIVATE hs_flags)
endif()
if(TARGET hs::tracefs AND NOT HS_SANITIZE)
  add_test(NAME causes:verdicts
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/causes-test.sh $<TARGET_FILE:engine> $<TARGET_FILE:analyze>
                   ${PROJECT_SOURCE_DIR}/rules/stutter.yaml $<TARGET_FILE:hs_hitchgame> $<TARGET_FILE:hs_culprit>
                   --out ${CMAKE_CURRENT_BINARY_DIR}/causes-out)
  set_tests_properties(causes:verdicts PROPERTIES TIMEOUT 600 RUN_SERIAL ON SKIP_RETURN_CODE 77 LABELS "causes;root")
endif()
