# Launch mode (Linux): run a CPU-bound program under hs_launch_run and check the
# perf.data with perf itself: hot function on top, sample count, crash, timeout.
# Needs root (perf_event_open on kernel frames, kallsyms) and the perf tool.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(launch_driver ${CMAKE_CURRENT_LIST_DIR}/launch_driver.c)
  target_link_libraries(launch_driver PRIVATE hindsight)
  target_compile_definitions(launch_driver PRIVATE _POSIX_C_SOURCE=200809L)

  add_executable(test_launch_args ${CMAKE_CURRENT_LIST_DIR}/test_launch_args.c)
  target_link_libraries(test_launch_args PRIVATE hindsight)
  add_test(NAME perf:launch_split_args COMMAND test_launch_args)

  # The target: frame pointers and symbols, optimised enough to be realistic.
  add_executable(perf_busy ${CMAKE_CURRENT_LIST_DIR}/busy.c)
  target_compile_options(perf_busy PRIVATE -O1 -fno-omit-frame-pointer -g)
  target_compile_definitions(perf_busy PRIVATE _POSIX_C_SOURCE=200809L)

  add_test(NAME perf:engine_launch
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/check-engine-launch.sh $<TARGET_FILE:engine>
                   $<TARGET_FILE:perf_busy> ${PROJECT_SOURCE_DIR}/rules/cpu-sample.yaml)

  foreach(case hot crash timeout args)
    add_test(NAME "perf:launch_${case}"
             COMMAND ${CMAKE_CURRENT_LIST_DIR}/check-launch.sh ${case} $<TARGET_FILE:launch_driver>
                     $<TARGET_FILE:perf_busy> ${PROJECT_SOURCE_DIR}/rules/cpu-sample.yaml)
  endforeach()
  # They all use the cpu-sample profile's one tracefs instance name.
  set_tests_properties(perf:engine_launch perf:launch_hot perf:launch_crash perf:launch_timeout perf:launch_args
                       PROPERTIES RESOURCE_LOCK hindsight_cpu_sample)
endif()
