# Windows programs get the application manifest cmake/windows/hindsight.manifest
# (UTF-8 code page, Windows 8.1/10 compatibility, no elevation prompt): through
# hs_flags, every executable that links the engine library embeds it.
if(WIN32)
  set(HS_MANIFEST ${CMAKE_CURRENT_LIST_DIR}/windows/hindsight.manifest)
  if(MSVC)
    # The MSVC linker merges .manifest sources into the one it embeds.
    set(HS_MANIFEST_SOURCE ${HS_MANIFEST})
  else()
    # mingw: a resource script that embeds it as resource 1 of type RT_MANIFEST (24).
    enable_language(RC)
    # The manifest's hash in it rebuilds the resource when the manifest changes.
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${HS_MANIFEST})
    file(SHA256 ${HS_MANIFEST} HS_MANIFEST_HASH)
    set(HS_MANIFEST_SOURCE ${CMAKE_BINARY_DIR}/hindsight-manifest.rc)
    file(CONFIGURE OUTPUT ${HS_MANIFEST_SOURCE}
         CONTENT "/* hindsight.manifest sha256 @HS_MANIFEST_HASH@ */\n1 24 \"@HS_MANIFEST@\"\n" @ONLY)
  endif()
  target_sources(hs_flags INTERFACE $<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:${HS_MANIFEST_SOURCE}>)
endif()
