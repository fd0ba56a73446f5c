# Findspng: libspng, the PNG library of gorge::io (Debian: libspng-dev, which ships a pkg-config
# file but no CMake package). Sets spng_FOUND, spng_INCLUDE_DIR, spng_LIBRARY and spng_VERSION, and
# defines the imported target spng::spng. A static libspng also links zlib (found as ZLIB).
# Hidden like any package with -DCMAKE_DISABLE_FIND_PACKAGE_spng=ON.
find_path(spng_INCLUDE_DIR spng.h)
find_library(spng_LIBRARY NAMES spng spng_static)
mark_as_advanced(spng_INCLUDE_DIR spng_LIBRARY)
if(spng_INCLUDE_DIR AND EXISTS "${spng_INCLUDE_DIR}/spng.h")
  file(STRINGS "${spng_INCLUDE_DIR}/spng.h" _spng_version_lines REGEX "^#define SPNG_VERSION_(MAJOR|MINOR|PATCH) ")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*SPNG_VERSION_${part} ([0-9]+).*" "\\1" _spng_${part} "${_spng_version_lines}")
  endforeach()
  set(spng_VERSION "${_spng_MAJOR}.${_spng_MINOR}.${_spng_PATCH}")
  unset(_spng_version_lines)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(spng REQUIRED_VARS spng_LIBRARY spng_INCLUDE_DIR VERSION_VAR spng_VERSION)
if(spng_FOUND AND NOT TARGET spng::spng)
  add_library(spng::spng UNKNOWN IMPORTED)
  set_target_properties(spng::spng PROPERTIES
    IMPORTED_LOCATION "${spng_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${spng_INCLUDE_DIR}")
  if(spng_LIBRARY MATCHES "\\.a$")
    find_package(ZLIB QUIET)
    if(TARGET ZLIB::ZLIB)
      set_property(TARGET spng::spng APPEND PROPERTY INTERFACE_LINK_LIBRARIES ZLIB::ZLIB m)
    endif()
  endif()
endif()
