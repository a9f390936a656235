# Replay: the recording loop on the replay backend, without root: the committed trace.dat (made by
# make-fixture.sh) and an .etl read from ../shared/fixtures/etl, checked against analyze counts.
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME replay:recording_loop
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/replay/check-replay.sh $<TARGET_FILE:engine> $<TARGET_FILE:analyze>
                   ${PROJECT_SOURCE_DIR}/rules/stutter.yaml ${CMAKE_CURRENT_SOURCE_DIR}/replay/fixture.dat
                   ${CMAKE_CURRENT_SOURCE_DIR}/replay/replay-windows.yaml
                   ${HS_ETL_FIXTURES}/microsoft_krabsetw/powershell.etl)
  # 77: no jq.
  set_tests_properties(replay:recording_loop PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
# Field decoding (numbers, char arrays, __data_loc strings), now_ns and mark of
# the replay backend on the trace.dat fixture, through the observer (no root).
if(NOT CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(test_replay_fields ${CMAKE_CURRENT_SOURCE_DIR}/replay/fields.c)
  target_link_libraries(test_replay_fields PRIVATE hs_backends hs_rules)
  target_compile_definitions(test_replay_fields PRIVATE _GNU_SOURCE)
  add_test(NAME replay:fields
           COMMAND test_replay_fields ${PROJECT_SOURCE_DIR}/rules/stutter.yaml
                   ${CMAKE_CURRENT_SOURCE_DIR}/replay/fixture.dat ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(replay:fields PROPERTIES TIMEOUT 120)
endif()
