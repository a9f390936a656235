# Finds libyaml and PCRE2 (8-bit): CMake config packages first (vcpkg, our mingw
# deps), then pkg-config (Debian). Defines hs::yaml and hs::pcre2.
find_package(yaml CONFIG QUIET)
if(TARGET yaml)
  add_library(hs::yaml ALIAS yaml)
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(HS_YAML REQUIRED IMPORTED_TARGET yaml-0.1)
  add_library(hs::yaml ALIAS PkgConfig::HS_YAML)
endif()

find_package(PCRE2 CONFIG QUIET COMPONENTS 8BIT)
if(TARGET PCRE2::8BIT)
  add_library(hs::pcre2 ALIAS PCRE2::8BIT)
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(HS_PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
  add_library(hs::pcre2 ALIAS PkgConfig::HS_PCRE2)
endif()

# Linux capture and trace.dat reading: libtracefs, libtraceevent, libtracecmd
# (Debian's -dev packages). Defines hs::tracefs; absent on other platforms.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(HS_TRACEFS REQUIRED IMPORTED_TARGET libtracefs libtraceevent libtracecmd)
  add_library(hs::tracefs ALIAS PkgConfig::HS_TRACEFS)
  # engine/src/ftrace declares libtracecmd's private output API itself; those
  # prototypes match libtracecmd 1.x (trace-cmd 3.x) only.
  if(NOT HS_TRACEFS_libtracecmd_VERSION VERSION_GREATER_EQUAL 1.0 OR
     HS_TRACEFS_libtracecmd_VERSION VERSION_GREATER_EQUAL 2.0)
    message(FATAL_ERROR "libtracecmd ${HS_TRACEFS_libtracecmd_VERSION} found; the trace.dat writer needs 1.x "
                        "(trace-cmd 3.x), whose output API engine/src/ftrace/dat.c declares")
  endif()
endif()
