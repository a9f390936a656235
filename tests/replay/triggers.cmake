# Issue 12: trigger decisions without root or a kernel: fixture.dat replayed through tests/replay/triggers-replay.yaml.
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME replay:triggers
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/check-triggers.sh $<TARGET_FILE:engine>
                   ${CMAKE_CURRENT_LIST_DIR}/triggers-replay.yaml ${CMAKE_CURRENT_LIST_DIR}/fixture.dat)
  set_tests_properties(replay:triggers PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
  add_test(NAME "rulecheck_clean:tests/replay/triggers-replay.yaml"
           COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/triggers-replay.yaml)
endif()
# Issue 22: the deadline decided on a replayed trace (no root): deadline-fixture.dat (make-deadline-fixture.sh).
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME replay:deadline
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/check-deadline.sh $<TARGET_FILE:engine>
                   ${CMAKE_CURRENT_LIST_DIR}/deadline-replay.yaml ${CMAKE_CURRENT_LIST_DIR}/deadline-fixture.dat)
  set_tests_properties(replay:deadline PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
  add_test(NAME "rulecheck_clean:tests/replay/deadline-replay.yaml"
           COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/deadline-replay.yaml)
endif()
