# Finds libyaml and PCRE2 (8-bit): CMake config packages first (vcpkg, our mingw
# deps), then pkg-config (Debian). Defines hs::yaml and hs::pcre2.
# Our mingw deps (scripts/build-win-deps.sh) and vcpkg's *-static* triplets
# are static libraries; PCRE2's config then adds PCRE2_STATIC for the headers.
if(NOT DEFINED PCRE2_USE_STATIC_LIBS AND (MINGW OR VCPKG_TARGET_TRIPLET MATCHES "-static"))
  set(PCRE2_USE_STATIC_LIBS ON)
endif()
find_package(yaml CONFIG QUIET)
if(TARGET yaml)
  add_library(hs::yaml ALIAS yaml)
elseif(CMAKE_CROSSCOMPILING)
  # pkg-config would hand out the host's libraries.
  message(FATAL_ERROR "libyaml for ${CMAKE_SYSTEM_NAME} not found: build it with scripts/build-win-deps.sh PREFIX "
                      "and configure with -DCMAKE_PREFIX_PATH=PREFIX")
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(HS_YAML REQUIRED IMPORTED_TARGET yaml-0.1)
  add_library(hs::yaml ALIAS PkgConfig::HS_YAML)
endif()

find_package(PCRE2 CONFIG QUIET COMPONENTS 8BIT)
if(TARGET PCRE2::8BIT)
  add_library(hs::pcre2 ALIAS PCRE2::8BIT)
elseif(CMAKE_CROSSCOMPILING)
  message(FATAL_ERROR "PCRE2 (8-bit) for ${CMAKE_SYSTEM_NAME} not found: build it with scripts/build-win-deps.sh PREFIX "
                      "and configure with -DCMAKE_PREFIX_PATH=PREFIX")
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(HS_PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
  add_library(hs::pcre2 ALIAS PkgConfig::HS_PCRE2)
endif()

# Linux capture and trace.dat reading: libtracefs, libtraceevent, libtracecmd
# (Debian's -dev packages), and libzstd for the snapshot's own compression of the CPU data. Defines
# hs::tracefs; absent on other platforms.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(HS_TRACEFS REQUIRED IMPORTED_TARGET libtracefs libtraceevent libtracecmd libzstd)
  add_library(hs::tracefs ALIAS PkgConfig::HS_TRACEFS)
  # engine/src/ftrace declares libtracecmd's private output API itself; those
  # prototypes match libtracecmd 1.x (trace-cmd 3.x) only.
  if(NOT HS_TRACEFS_libtracecmd_VERSION VERSION_GREATER_EQUAL 1.0 OR
     HS_TRACEFS_libtracecmd_VERSION VERSION_GREATER_EQUAL 2.0)
    message(FATAL_ERROR "libtracecmd ${HS_TRACEFS_libtracecmd_VERSION} found; the trace.dat writer needs 1.x "
                        "(trace-cmd 3.x), whose output API engine/src/ftrace/dat.c declares")
  endif()
endif()
