# ftrace filters checked offline (issue 15): rulecheck agrees with the kernel's
# recorded verdicts on a corpus of right and wrong filters; as root, this
# kernel still gives those verdicts and catalog-sync reproduces the shipped
# field lists (rules/providers/linux-formats.yaml).
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME rules:filter_agree
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/filter-agree.sh $<TARGET_FILE:rulecheck> ${PROJECT_SOURCE_DIR})
endif()
if(TARGET hs::tracefs AND TARGET catalog-sync)
  add_test(NAME ftrace:filter_agree
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/filter-agree.sh $<TARGET_FILE:rulecheck> ${PROJECT_SOURCE_DIR} --kernel)
  set_tests_properties(ftrace:filter_agree PROPERTIES LABELS root RUN_SERIAL ON)
  # Every field, the recorded release aside; on another kernel build what the
  # rules use must still match (catalog-sync-check.sh says how). Never skips.
  add_test(NAME ftrace:catalog_sync
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/catalog-sync-check.sh $<TARGET_FILE:catalog-sync> $<TARGET_FILE:rulecheck>
                   $<TARGET_FILE:engine> ${PROJECT_SOURCE_DIR})
  set_tests_properties(ftrace:catalog_sync PROPERTIES LABELS root)
endif()
