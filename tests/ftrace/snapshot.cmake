# Ring snapshots and .dat writing (root): comm names survive key-event rebuilds;
# a full disk keeps the newest part of the ring; the .dat size check.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:cmdlines
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/cmdlines-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/cmdlines.yaml)
  set_tests_properties(ftrace:cmdlines PROPERTIES TIMEOUT 300 RUN_SERIAL ON)
  add_test(NAME ftrace:diskfull
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/diskfull-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}/diskfull.yaml)
  set_tests_properties(ftrace:diskfull PROPERTIES TIMEOUT 300 RUN_SERIAL ON)
endif()
add_test(NAME "rulecheck_clean:tests/ftrace/cmdlines.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/cmdlines.yaml)
add_test(NAME "rulecheck_clean:tests/ftrace/diskfull.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/diskfull.yaml)
# libtracecmd's per-CPU limit (defect 7): the check, and the library failing past it.
if(TARGET hs::tracefs)
  find_package(Threads REQUIRED)
  add_executable(test_snapshot_limit ${CMAKE_CURRENT_LIST_DIR}/snapshot-limit.c)
  target_include_directories(test_snapshot_limit PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
  target_link_libraries(test_snapshot_limit PRIVATE hindsight hs::tracefs Threads::Threads)
  target_compile_definitions(test_snapshot_limit PRIVATE _GNU_SOURCE)
  add_test(NAME ftrace:snapshot-limit COMMAND test_snapshot_limit ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(ftrace:snapshot-limit PROPERTIES TIMEOUT 300 RUN_SERIAL ON)
endif()
# The snapshot's own parallel-compressed CPU-data writer against libtracecmd's,
# on the same drained ring: identical `trace-cmd report`, every event kept.
if(TARGET hs::tracefs)
  add_executable(test_snapshot_compat ${CMAKE_CURRENT_LIST_DIR}/snapshot-compat.c)
  target_include_directories(test_snapshot_compat PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
  target_link_libraries(test_snapshot_compat PRIVATE hindsight hs::tracefs Threads::Threads)
  target_compile_definitions(test_snapshot_compat PRIVATE _GNU_SOURCE)
  add_test(NAME ftrace:snapshot-compat COMMAND test_snapshot_compat ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(ftrace:snapshot-compat PROPERTIES TIMEOUT 300 RUN_SERIAL ON)
endif()
# The engine never loses coverage silently (issue 15): a filter or event the
# kernel refuses stops it with exit 1 before recording, unless the rules mark
# the event optional; optional ones are listed in main.log and run.json.
if(TARGET hs::tracefs)
  add_test(NAME ftrace:coverage COMMAND ${CMAKE_CURRENT_LIST_DIR}/coverage-test.sh $<TARGET_FILE:engine> ${CMAKE_CURRENT_LIST_DIR}
                                    $<TARGET_FILE:analyze>)
  set_tests_properties(ftrace:coverage PROPERTIES TIMEOUT 300 RUN_SERIAL ON)
endif()
foreach(p coverage-catalog coverage-bad-filter coverage-missing coverage-optional)
  add_test(NAME "rulecheck_clean:tests/ftrace/${p}.yaml" COMMAND rulecheck --strict ${CMAKE_CURRENT_LIST_DIR}/${p}.yaml)
endforeach()
