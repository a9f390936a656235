# The tracefs backend's call sequences through the recorder (tracefs_recorder.c stands in for libtracefs through
# engine/src/ftrace/tracefs_api.h): goldens in golden/*.calls, no root, no tracefs mount, so they run in every
# build (label unit), the sanitizer one included. HS_UPDATE_GOLDEN=1 rewrites the goldens.
if(TARGET hs::tracefs)
  find_package(Threads REQUIRED)
  add_executable(test_tracefs_calls ${CMAKE_CURRENT_LIST_DIR}/test_tracefs_calls.c ${CMAKE_CURRENT_LIST_DIR}/tracefs_recorder.c)
  target_include_directories(test_tracefs_calls PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
  target_link_libraries(test_tracefs_calls PRIVATE hindsight hs::tracefs Threads::Threads)
  target_compile_definitions(test_tracefs_calls PRIVATE _GNU_SOURCE)
  add_test(NAME unit:tracefs_calls
           COMMAND test_tracefs_calls ${PROJECT_SOURCE_DIR}/rules ${CMAKE_CURRENT_LIST_DIR}/golden
                   ${CMAKE_CURRENT_BINARY_DIR}/tracefs-calls)
  set_tests_properties(unit:tracefs_calls PROPERTIES LABELS unit TIMEOUT 60) # 0.4 s (the fake kernel's symbols are three lines; with the host's 5 MB it took 4 s, 227 s under ASan in CI)
endif()
# Every libtracefs call of the engine goes through that table (a grep over engine/src).
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME policy:tracefs_through_table
           COMMAND ${PROJECT_SOURCE_DIR}/tests/policy/tracefs-through-table.sh ${PROJECT_SOURCE_DIR})
  set_tests_properties(policy:tracefs_through_table PROPERTIES LABELS policy)
endif()
