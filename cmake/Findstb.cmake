# Findstb: the stb single-file libraries (Debian: libstb-dev); gorge's examples use
# stb_image_write.h. Sets stb_FOUND and stb_INCLUDE_DIR, and defines the INTERFACE target stb::stb.
# Hidden like any package with -DCMAKE_DISABLE_FIND_PACKAGE_stb=ON.
find_path(stb_INCLUDE_DIR stb_image_write.h PATH_SUFFIXES stb)
mark_as_advanced(stb_INCLUDE_DIR)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(stb REQUIRED_VARS stb_INCLUDE_DIR)
if(stb_FOUND AND NOT TARGET stb::stb)
  add_library(stb::stb INTERFACE IMPORTED)
  set_target_properties(stb::stb PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${stb_INCLUDE_DIR}")
endif()
