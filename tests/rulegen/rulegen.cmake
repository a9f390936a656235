# rulegen: whitelists from fault-scenario counts (docs/rulegen.md). The synthetic cases run on a
# copy of tests/rulegen/synthetic (each rule has a case there); goldens are in tests/rulegen/golden.
# Native builds only: the scripts run the tools directly.
if(NOT CMAKE_CROSSCOMPILING)
  foreach(case linux-explain linux-output linux-diff linux-check linux-rulecheck windows-explain windows-output
               windows-rulecheck counts-etl bad-config bad-names bad-session bad-counts)
    add_test(NAME "rulegen:${case}"
             COMMAND ${HS_GOLDEN} ${CMAKE_CURRENT_SOURCE_DIR}/rulegen/golden/${case}.expected ${CMAKE_CURRENT_SOURCE_DIR}
                     -- ${CMAKE_CURRENT_SOURCE_DIR}/rulegen/case.sh $<TARGET_FILE:rulegen> $<TARGET_FILE:rulecheck>
                     $<TARGET_FILE:analyze> $<TARGET_FILE:mk_keytrace> ${CMAKE_CURRENT_SOURCE_DIR}/rulegen ${case})
  endforeach()

  # trace.dat input: a trace recorded here, counted by rulegen as analyze counts does (root; 77 = skip).
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    add_test(NAME rulegen:counts-tracedat
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/rulegen/tracedat.sh $<TARGET_FILE:rulegen> $<TARGET_FILE:analyze>)
    set_tests_properties(rulegen:counts-tracedat PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
  endif()

  # The committed Linux whitelist of rules/stutter.yaml is what rulegen makes of the committed scenario
  # counts (tests/rulegen/counts/<scenario>/{full,filtered}.counts, written by tools/scenarios).
  file(GLOB_RECURSE HS_RULEGEN_COUNTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/rulegen/counts/*.counts)
  if(HS_RULEGEN_COUNTS)
    add_test(NAME rulegen:stutter-linux-reproduced
             COMMAND $<TARGET_FILE:rulegen> --check tests/rulegen/stutter-linux.yaml
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  else()
    message(STATUS "rulegen:stutter-linux-reproduced is not registered: no scenario counts under "
                   "tests/rulegen/counts/ yet (tools/scenarios writes them)")
  endif()
endif()
