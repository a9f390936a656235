# mingw-w64-x86_64.cmake: toolchain file for cross-compiling hindsight to 64-bit Windows with Debian's mingw-w64 (tests run under Wine).
#
#   scripts/build-win-deps.sh "$PWD/build-win-deps"        # static libyaml + PCRE2 for the target
#   cmake -S . -B build-win -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake \
#         -DCMAKE_PREFIX_PATH="$PWD/build-win-deps"          # or -DHS_WIN_DEPS=... / env HS_WIN_DEPS
#   cmake --build build-win && ctest --test-dir build-win   # tests run through scripts/wine-run.sh
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(HS_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${HS_MINGW_TRIPLE}-gcc)
set(CMAKE_RC_COMPILER ${HS_MINGW_TRIPLE}-windres)

# The deps prefix: CMAKE_PREFIX_PATH, or HS_WIN_DEPS (cache or environment).
if(NOT HS_WIN_DEPS AND DEFINED ENV{HS_WIN_DEPS})
  set(HS_WIN_DEPS "$ENV{HS_WIN_DEPS}")
endif()
if(HS_WIN_DEPS)
  list(APPEND CMAKE_PREFIX_PATH "${HS_WIN_DEPS}")
endif()

# Libraries, headers and packages come from the mingw sysroot and the deps
# prefix only, never from the host's /usr (its libpcre2-8.a is an ELF archive);
# programs (pkg-config, bash) from the host. The deps prefix is a root itself,
# so it is searched as it is instead of under /usr/x86_64-w64-mingw32.
set(CMAKE_FIND_ROOT_PATH /usr/${HS_MINGW_TRIPLE} ${CMAKE_PREFIX_PATH})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Tests (add_test with a target as COMMAND) run under Wine. A value given on
# the command line wins: a plain set() here would silently shadow it.
if(NOT DEFINED CMAKE_CROSSCOMPILING_EMULATOR)
  get_filename_component(_hs_wine_run "${CMAKE_CURRENT_LIST_DIR}/../scripts/wine-run.sh" ABSOLUTE)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${_hs_wine_run}" CACHE FILEPATH "Runs the Windows test programs (Wine)")
  unset(_hs_wine_run)
endif()
