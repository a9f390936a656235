# Image identities: the PE reader (engine/src/pe) and hs_etl_add_image_ids (engine/src/etl/imageid.c).
# Included from tests/CMakeLists.txt; fixtures are read from ../shared at run time.
#   unit:pe              synthetic PE32/PE32+ images, every truncation, damaged fields, random mutations
#   pe:mingw             real images built here with mingw-w64, checked against objdump -p
#   imageid:agree        our records rebuilt from xperf's in net.4.5.2.x86.etl must equal them byte for byte
#   imageid:roundtrip    add_image_ids on real traces with kernel paths mapped to the mingw images
#   (fuzz:pe, with HS_FUZZ, is in tests/fuzz and takes HS_PE_FUZZ_SEEDS from here)
set(HS_IMAGEID_FIXTURES ${PROJECT_SOURCE_DIR}/../shared/fixtures/etl)
set(HS_IMAGEID_WORK ${CMAKE_CURRENT_BINARY_DIR}/imageid)
file(MAKE_DIRECTORY ${HS_IMAGEID_WORK})

add_executable(test_pe ${CMAKE_CURRENT_LIST_DIR}/../unit/test_pe.c)
add_executable(test_imageid ${CMAKE_CURRENT_LIST_DIR}/test_imageid.c)
foreach(t test_pe test_imageid)
  target_link_libraries(${t} PRIVATE hindsight)
  target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/engine/src ${CMAKE_CURRENT_LIST_DIR}/../unit)
endforeach()

add_test(NAME unit:pe COMMAND test_pe)
# The test fails (never skips) when the fixtures are missing.
add_test(NAME imageid:agree COMMAND test_imageid agree ${HS_IMAGEID_FIXTURES})

# Real images: a console exe with a CodeView RSDS entry (--build-id) naming a
# PDB, a DLL that also has a windres-made version resource, the exe without a
# PDB name, and one without any debug directory. objdump -p's reading of each
# is what unit:pe's mingw mode compares against. Only when mingw-w64 is there.
find_program(HS_MINGW_CC x86_64-w64-mingw32-gcc)
find_program(HS_MINGW_OBJDUMP x86_64-w64-mingw32-objdump)
find_program(HS_MINGW_WINDRES x86_64-w64-mingw32-windres)
if(HS_MINGW_CC AND HS_MINGW_OBJDUMP AND HS_MINGW_WINDRES AND NOT CMAKE_CROSSCOMPILING)
  set(d ${HS_IMAGEID_WORK}/pe)
  file(MAKE_DIRECTORY ${d})
  file(WRITE ${d}/tiny.c "int tiny_value = 42;\nint main(void) { return tiny_value - 42; }\n")
  file(WRITE ${d}/version.rc [=[
1 VERSIONINFO
FILEVERSION 1,2,3,4
PRODUCTVERSION 1,2,3,4
BEGIN
  BLOCK "StringFileInfo"
  BEGIN
    BLOCK "040904b0"
    BEGIN
      VALUE "FileDescription", "hindsight image-id test DLL"
      VALUE "OriginalFilename", "TinyOrig.DLL"
    END
  END
  BLOCK "VarFileInfo"
  BEGIN
    VALUE "Translation", 0x409, 1200
  END
END
]=])
  set(images tiny.exe tinyver.dll tiny-nopdb.exe nodebug.exe)
  set(outputs)
  foreach(i IN LISTS images)
    list(APPEND outputs ${d}/${i} ${d}/${i}.objdump)
  endforeach()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${HS_MINGW_WINDRES} version.rc -O coff -o version.o
    COMMAND ${HS_MINGW_CC} -O1 -Wl,--build-id -Wl,--pdb=${d}/tiny.pdb -o tiny.exe tiny.c
    COMMAND ${HS_MINGW_CC} -O1 -shared -Wl,--build-id -Wl,--pdb=${d}/tinyver.pdb -o tinyver.dll tiny.c version.o
    COMMAND ${HS_MINGW_CC} -O1 -Wl,--build-id -o tiny-nopdb.exe tiny.c
    COMMAND ${HS_MINGW_CC} -O1 -o nodebug.exe tiny.c
    COMMAND bash -c "for f in $*; do \"$0\" -p \"$f\" > \"$f.objdump\" || exit 1; done" ${HS_MINGW_OBJDUMP} ${images}
    WORKING_DIRECTORY ${d}
    DEPENDS ${d}/tiny.c ${d}/version.rc
    COMMENT "Building PE test images with mingw-w64"
    VERBATIM)
  add_custom_target(imageid_pe_images ALL DEPENDS ${outputs})
  set(HS_PE_FUZZ_SEEDS ${d}) # tests/fuzz: fuzz:pe starts from these
  add_test(NAME pe:mingw COMMAND test_pe ${d} ${images})
  set_tests_properties(pe:mingw PROPERTIES ENVIRONMENT "TZ=UTC")
  add_test(NAME imageid:roundtrip COMMAND test_imageid roundtrip ${HS_IMAGEID_FIXTURES} ${HS_IMAGEID_WORK} ${d})
else()
  message(STATUS "x86_64-w64-mingw32 gcc/objdump/windres not found: pe:mingw and imageid:roundtrip are not registered")
endif()
