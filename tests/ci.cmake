# ci.cmake: what lets the suite run in parallel without tests disturbing each other, and what the sanitizer build skips.
# hs_ci_apply() runs at the end of every directory that registers tests (cmake_language(DEFER CALL hs_ci_apply)
# at its top): CMake sets a test's properties only in the directory that added it. docs/ci.md has the CI's phases
# and timings; this file is its tables.
#
# 1. Label "machine": a test that uses the machine's shared state (root, tracefs instances with fixed names,
#    cgroups, perf_event_open, machine-wide event counts or timing). Every RUN_SERIAL test is one (its own file
#    says RUN_SERIAL), and so is every test named in HS_CI_MACHINE below. .ci's run (run.sh --test) runs
#    `ctest -L machine` with nothing else from the suite beside it, and the rest (`-LE machine`) in parallel.
# 2. In a sanitizer build (HS_SANITIZE) the long root scenarios in HS_CI_SANITIZER_SKIP are DISABLED (ctest lists
#    them as "Not Run (Disabled)"): they assert on latencies that ASan's slowdown stretches, and the code they
#    drive is under the sanitizers through the unit tests, the fuzzers, the replays and the root tests that
#    stay (ftrace:record, ftrace:snapshot-limit, perf:launch_hot, the format checks): about 2 min.
#    -DHS_SANITIZE_SCENARIOS=ON runs them too. (scenario:* and causes:verdicts are not registered at all in a
#    sanitizer build: their own files say why.)
# 3. Cross build under Wine: every test requires the fixture wine_server, one wineserver for the whole run that
#    never exits by itself (scripts/wine-run.sh --server-start / --server-stop says why: a server that exits after
#    its linger resets a program that connects at that moment, and its output is lost), in a prefix of this build
#    tree's own (WINEPREFIX=<build>/wineprefix), so two build trees never share or stop each other's server.

option(HS_SANITIZE_SCENARIOS "In a sanitizer build, also run the long root scenarios (tests/ci.cmake)" OFF)

# Tests that use the machine but do not say RUN_SERIAL in their own file: "name regex :: why".
set(HS_CI_MACHINE
  "^perf:(engine_launch|launch_hot|launch_crash|launch_timeout|launch_args)$ :: perf_event_open sampling as root; sample counts and the launch timeout are timed"
  "^ftrace:catalog_sync$ :: reads every event format under tracefs as root"
  "^estimate:tracedat$ :: records its own process tree into a tracefs instance of its own as root and checks the ring lost nothing (it recorded every task once, and load wrapped the ring)"
)

# Long root scenarios not repeated in a sanitizer build: "name regex :: why" (measured times in docs/ci.md).
set(HS_CI_SANITIZER_SKIP
  "^ftrace:(live|report|capture_report)$ :: tmux, cgroup OOM, frame loops: asserts shares and delays; the report code runs under ASan in analyze:* and unit:cause"
  "^ftrace:(detect|triggers|stutter_triggers|trgbe)$ :: trigger latencies and key-event gaps under 250 ms; the trigger engine runs under ASan in unit:trigger and replay:triggers"
  "^ftrace:(deadline|counter_psi|stutter_deadline)$ :: deadlines within 2 s and PSI windows; the same code in unit:trigger, unit:counters and replay:deadline"
  "^ftrace:(circular|ctl|lock|notrace|notrace_launch|cmdlines|diskfull|trigger_diskfull|snapshot-compat|coverage)$ :: each engine start and stop takes 10-70 s under ASan (the .dat headers: libtracecmd grows its compression buffer by 8 KB reallocs, which ASan's realloc copies every time: 54 % of the time in memmove), 13 min for these ten; ftrace:record, ftrace:stale and ftrace:snapshot-limit run the same backend, stream, rescue and snapshot writer under ASan, unit:ctl the control channel's reader, replay:* the run loop"
  "^perf:(engine_launch|launch_crash|launch_timeout|launch_args)$ :: 30-55 s each under ASan; perf:launch_hot runs the sampler and the perf.data writer under it"
  "^(ftrace:stale|fleet:runs)$ :: 105 s and 159 s under ASan (three engine runs each): both run in the product build; analyze fleet runs under ASan in fleet:signature, the rescue of a killed engine's chunks only in the product build"
  "^estimate:live_stutter$ :: 86 s under ASan (an engine start with the whole stutter profile); estimate:* run the estimator under ASan on files"
  "^schema_agrees_with_rulecheck$ :: 98 s under ASan (342 rulecheck runs, 23 s in the product build): the same rulecheck runs under ASan on every file of these corpora in the rulecheck_clean:* and rules corpus tests; the agreement it checks is between two texts, not memory"
  "^(policy_not_in_c|tools_include_only_public_headers|policy:run_names_no_platform)$ :: greps over the sources, the same in every build (21 s and 4 s under the sanitizer phase's load)"
)
# Tests that take long, started first (CTest's COST: a fresh clone has no timing data of its own, so without it the
# order is the declaration order and a 75 s test started last is the run's tail): "name regex :: seconds", measured
# in the sanitizer build of a fresh-clone run (the product build's order is the same, each about 4x shorter).
set(HS_CI_COST
  "^tracedat:analyze_damaged$ :: 76"
  "^imageid:roundtrip$ :: 47"
  "^tracedat:damage$ :: 43"
  "^rules:filter_agree$ :: 39"
  "^etl:writer$ :: 33"
  "^fuzz: :: 31"
  "^fleet:signature$ :: 29"
  "^analyze:report_(etl|layers)$ :: 26"
  "^cpu:net\\. :: 22"
  "^analyze:report_(fixture|browser)$ :: 19"
  "^etl:analyze_on_writer_output$ :: 18"
  "^(unit:xpress|replay:deadline|replay:recording_loop)$ :: 15"
)

if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR MATCHES "wine-run\\.sh$")
  add_test(NAME wine:server_start COMMAND ${CMAKE_CROSSCOMPILING_EMULATOR} --server-start)
  add_test(NAME wine:server_stop COMMAND ${CMAKE_CROSSCOMPILING_EMULATOR} --server-stop)
  # A fresh prefix is made here (winecfg), 1-2 minutes on a loaded machine.
  set_tests_properties(wine:server_start PROPERTIES FIXTURES_SETUP wine_server TIMEOUT 600)
  set_tests_properties(wine:server_stop PROPERTIES FIXTURES_CLEANUP wine_server TIMEOUT 120)
  set(HS_CI_WINE_FIXTURE ON CACHE INTERNAL "")
else()
  set(HS_CI_WINE_FIXTURE OFF CACHE INTERNAL "")
endif()

function(hs_ci_match name table out)
  set(hit "")
  foreach(row IN LISTS ${table})
    string(FIND "${row}" " :: " bar)
    string(SUBSTRING "${row}" 0 ${bar} re)
    if(name MATCHES "${re}")
      set(hit "${row}")
      break()
    endif()
  endforeach()
  set(${out} "${hit}" PARENT_SCOPE)
endfunction()

function(hs_ci_apply)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    get_test_property(${t} RUN_SERIAL serial)
    hs_ci_match("${t}" HS_CI_MACHINE machine)
    if(serial OR machine)
      set_property(TEST ${t} APPEND PROPERTY LABELS machine)
    endif()
    if(HS_SANITIZE AND NOT HS_SANITIZE_SCENARIOS)
      hs_ci_match("${t}" HS_CI_SANITIZER_SKIP skip)
      if(skip)
        set_property(TEST ${t} PROPERTY DISABLED ON)
        set_property(TEST ${t} APPEND PROPERTY LABELS sanitizer_skipped)
      endif()
    endif()
    hs_ci_match("${t}" HS_CI_COST cost)
    if(cost)
      string(REGEX REPLACE "^.* :: " "" cost "${cost}")
      set_property(TEST ${t} PROPERTY COST ${cost})
    endif()
    if(HS_CI_WINE_FIXTURE)
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "WINEPREFIX=${CMAKE_BINARY_DIR}/wineprefix")
      if(NOT t MATCHES "^wine:server_(start|stop)$")
        set_property(TEST ${t} APPEND PROPERTY FIXTURES_REQUIRED wine_server)
        set_property(TEST ${t} APPEND PROPERTY LABELS wine)
      endif()
    endif()
  endforeach()
endfunction()
