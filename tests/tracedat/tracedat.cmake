# trace.dat reading: a real trace recorded by the test itself (root, tracefs, trace-cmd) checked with analyze
# counts/crash/summary against trace-cmd report; the reader against libtracecmd on recorded files; damage.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(hs_segv ${CMAKE_CURRENT_SOURCE_DIR}/tracedat/segv.c)
  # The crash is the point: no sanitizer may catch it first.
  target_compile_options(hs_segv PRIVATE -fno-sanitize=all)
  target_link_options(hs_segv PRIVATE -fno-sanitize=all)
  add_test(NAME tracedat:analyze_real_trace
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tracedat/check-tracedat.sh $<TARGET_FILE:analyze>
                   $<TARGET_FILE:hs_segv> ${PROJECT_SOURCE_DIR}/rules/stutter.yaml)
  # 77: not root, no tracefs or no trace-cmd on this machine.
  set_tests_properties(tracedat:analyze_real_trace PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()

# The reader against libtracecmd 3.1.6, the reference it replaced: the same records in the same order (no root).
if(TARGET hs::tracefs)
  add_executable(tracedat_compare ${CMAKE_CURRENT_SOURCE_DIR}/tracedat/compare.c)
  target_link_libraries(tracedat_compare PRIVATE hindsight hs::tracefs)
  file(GLOB HS_TRACEDAT_SEEDS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tracedat/seeds/*.dat)
  add_test(NAME tracedat:same_as_libtracecmd
           COMMAND tracedat_compare ${HS_TRACEDAT_SEEDS} ${CMAKE_CURRENT_SOURCE_DIR}/replay/fixture.dat
                   ${CMAKE_CURRENT_SOURCE_DIR}/analyze/wrap-fixture.dat ${CMAKE_CURRENT_SOURCE_DIR}/analyze/thread-fixture.dat)
endif()

# Located fields (hs_tracedat_field_locate, loc_int/loc_str) against the by-name accessors: every field of every
# record of the seeds and fixtures (deadline-fixture.dat for ftrace/print's trailing text), on exact-size payload
# copies, every cut and three overwrites of the first records of each event.
if(TARGET hs::tracefs)
  add_executable(tracedat_fieldloc ${CMAKE_CURRENT_SOURCE_DIR}/tracedat/fieldloc.c)
  target_link_libraries(tracedat_fieldloc PRIVATE hindsight)
  add_test(NAME tracedat:field_loc
           COMMAND tracedat_fieldloc ${HS_TRACEDAT_SEEDS} ${CMAKE_CURRENT_SOURCE_DIR}/replay/fixture.dat
                   ${CMAKE_CURRENT_SOURCE_DIR}/analyze/wrap-fixture.dat ${CMAKE_CURRENT_SOURCE_DIR}/analyze/thread-fixture.dat
                   ${CMAKE_CURRENT_SOURCE_DIR}/replay/deadline-fixture.dat)
  set_tests_properties(tracedat:field_loc PROPERTIES TIMEOUT 600)
endif()

# Damage: a fixed set of byte flips, number overwrites and truncations of each seed: read with problems or refused
# with a reason, never a crash (the sanitizer build runs it too), and no cut that loses records silently.
if(TARGET hs::tracefs)
  add_executable(tracedat_damage ${CMAKE_CURRENT_SOURCE_DIR}/tracedat/damage.c)
  target_link_libraries(tracedat_damage PRIVATE hindsight)
  add_test(NAME tracedat:damage COMMAND tracedat_damage --flips 1000 ${HS_TRACEDAT_SEEDS})
  set_tests_properties(tracedat:damage PROPERTIES TIMEOUT 600)
endif()

# Every analyze command that reads trace.dat (counts, summary, crash, estimate, report) on 40 damaged copies of real
# files: exit 0, 1 or 2 with the reader's reason, never a signal or a sanitizer report (no root).
if(TARGET hs::tracefs)
  add_test(NAME tracedat:analyze_damaged
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tracedat/check-damaged.sh $<TARGET_FILE:analyze>
                   $<TARGET_FILE:tracedat_damage> ${PROJECT_SOURCE_DIR}/rules/stutter.yaml 8 ${HS_TRACEDAT_SEEDS}
                   ${CMAKE_CURRENT_SOURCE_DIR}/replay/fixture.dat)
  set_tests_properties(tracedat:analyze_damaged PROPERTIES TIMEOUT 900)
endif()
