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
  # On the kernel the file was read from it must match exactly; on another
  # kernel the test prints the differences and is skipped (exit 77).
  add_test(NAME ftrace:catalog_sync
           COMMAND bash -c "f=\"$1/rules/providers/linux-formats.yaml\"; rel=$(sed -n 's/^  kernel: \"\\(.*\\)\"$/\\1/p' \"$f\");
                            \"$0\" \"$1/rules/providers/linux.yaml\" --check \"$f\"; rc=$?;
                            if [ $rc != 0 ] && [ \"$rel\" != \"$(uname -r)\" ]; then echo \"recorded on $rel, this is $(uname -r)\"; exit 77; fi; exit $rc"
                   $<TARGET_FILE:catalog-sync> ${PROJECT_SOURCE_DIR})
  set_tests_properties(ftrace:catalog_sync PROPERTIES LABELS root SKIP_RETURN_CODE 77)
endif()
