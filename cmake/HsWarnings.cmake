# Warning flags and sanitizer/fuzzer options for every hindsight target.
add_library(hs_flags INTERFACE)
target_compile_options(hs_flags INTERFACE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
                       -Wformat=2 -Wvla)
if(HS_WERROR)
  target_compile_options(hs_flags INTERFACE -Werror)
endif()
if(HS_SANITIZE)
  target_compile_options(hs_flags INTERFACE -fsanitize=address,undefined -fno-sanitize-recover=all
                         -fno-omit-frame-pointer)
  target_link_options(hs_flags INTERFACE -fsanitize=address,undefined -fno-sanitize-recover=all)
endif()
if(HS_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "HS_FUZZ needs clang (libFuzzer): configure with CC=clang")
  endif()
  # Coverage instrumentation for everything the fuzzers reach; only the fuzz
  # targets link libFuzzer's main.
  target_compile_options(hs_flags INTERFACE -fsanitize=fuzzer-no-link)
  target_link_options(hs_flags INTERFACE -fsanitize=fuzzer-no-link)
endif()
