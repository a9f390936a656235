# The fault scenarios (tools/scenarios/run-linux.sh, docs/scenarios.md), each in its short form (seconds):
# the real engine records the stutter profile and its whitelist-free twin side by side while the
# scenario runs (an OOM kill in a memory cgroup, a veth link down/up between network namespaces,
# crashing children, ...), then the scenario's signature must be in the filtered trace. Root, like the
# other tracefs tests: without it they fail saying so. One at a time: they use the profile's own
# tracefs instance names and load the whole machine.
# Not in sanitizer builds: there an engine with the full profile takes ~50 s to start (its event
# formats, every syscall's among them, parsed by instrumented code), which made the six take 6 min
# instead of 50 s. They check the rules' coverage, which the product build decides; the engine's memory
# safety on tracefs is what the ftrace tests check under the sanitizers.
if(TARGET hs::tracefs AND HS_SANITIZE)
  message(STATUS "scenario:* are not registered in a sanitizer build (see tests/scenarios/scenarios.cmake)")
elseif(TARGET hs::tracefs)
  set(HS_SCENARIOS baseline cpu_saturation memory_pressure disk_io_spike network_disconnect process_crash)
  foreach(s IN LISTS HS_SCENARIOS)
    add_test(NAME "scenario:${s}"
             COMMAND ${PROJECT_SOURCE_DIR}/tools/scenarios/run-linux.sh ${s} --short --prune
                     --build ${CMAKE_BINARY_DIR} --engine $<TARGET_FILE:engine> --analyze $<TARGET_FILE:analyze>
                     --rules ${PROJECT_SOURCE_DIR}/rules/stutter.yaml --out ${CMAKE_CURRENT_BINARY_DIR}/scenarios-out)
    set_tests_properties("scenario:${s}" PROPERTIES TIMEOUT 300 RUN_SERIAL ON LABELS "scenarios;root")
  endforeach()
endif()

# Without root: the full profile derived from every shipped profile passes rulecheck --strict and has
# no whitelist left; the committed scenario counts (tests/rulegen/counts) keep their documented format.
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME scenarios:fullprofile
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/check-fullprofile.sh $<TARGET_FILE:hs_fullprofile> $<TARGET_FILE:rulecheck>
                   ${PROJECT_SOURCE_DIR}/rules/stutter.yaml ${PROJECT_SOURCE_DIR}/rules/cpu-sample.yaml)
  add_test(NAME scenarios:counts_format
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/check-counts.sh ${PROJECT_SOURCE_DIR}/tests/rulegen/counts)
  set_tests_properties(scenarios:fullprofile scenarios:counts_format PROPERTIES LABELS scenarios)
endif()
