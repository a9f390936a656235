# Warning flags and sanitizer/fuzzer options for every hindsight target.
add_library(hs_flags INTERFACE)
if(MSVC)
  # Native Windows (the "windows" preset: clang-cl, whose -Wall means
  # -Weverything); the CRT's POSIX names (strdup) are what the code means.
  target_compile_options(hs_flags INTERFACE /W3)
  target_compile_definitions(hs_flags INTERFACE _CRT_SECURE_NO_WARNINGS _CRT_NONSTDC_NO_DEPRECATE)
  if(HS_WERROR)
    target_compile_options(hs_flags INTERFACE /WX)
  endif()
else()
  target_compile_options(hs_flags INTERFACE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
                         -Wformat=2 -Wvla)
  if(HS_WERROR)
    target_compile_options(hs_flags INTERFACE -Werror)
  endif()
endif()
# mingw: C99 printf and scanf (%zu, %lld) instead of msvcrt's; see HS_PRINTF_FMT.
if(MINGW)
  target_compile_definitions(hs_flags INTERFACE __USE_MINGW_ANSI_STDIO=1)
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
