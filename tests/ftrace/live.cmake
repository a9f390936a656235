# Issue 14 (root, tracefs, tmux, jq): the live view driven in tmux (history in seconds, a segfault highlighted with its
# story, pause and filter), the JSONL tap read with jq, a slow JSONL reader. Instances hindsight_test_live_*.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:live
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/live-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/live.yaml
                   $<TARGET_FILE:hs_segv>)
  set_tests_properties(ftrace:live PROPERTIES TIMEOUT 300 RUN_SERIAL ON SKIP_RETURN_CODE 77)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/live.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/live.yaml)
