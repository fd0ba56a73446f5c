# Optional parts of gorge's build (tests, examples, benchmarks, xsimd) take AUTO, ON or OFF:
#   AUTO  build the part when its dependencies are found, else skip it with a STATUS line;
#   ON    the part is required: configuration fails with a clear message when a dependency is missing;
#   OFF   skip the part.
# Any CMake boolean (TRUE, 1, NO...) is read as ON or OFF.

# gorge_optional(<var> <default> <doc>): declares <var> as a cache string (AUTO/ON/OFF, shown as a
# drop-down in cmake-gui) unless a parent project already set it as a normal variable before
# add_subdirectory(gorge).
function(gorge_optional var default doc)
  if(DEFINED ${var} AND NOT DEFINED CACHE{${var}})
    return()
  endif()
  set(${var} "${default}" CACHE STRING "${doc} (AUTO, ON or OFF)")
  set_property(CACHE ${var} PROPERTY STRINGS AUTO ON OFF)
endfunction()

# gorge_optional_mode(<var> <out>): sets <out> to AUTO, ON or OFF from the value of <var>; fails
# on anything else.
function(gorge_optional_mode var out)
  string(TOUPPER "${${var}}" value)
  if(value STREQUAL "AUTO")
    set(mode AUTO)
  elseif(value MATCHES "^(ON|YES|TRUE|Y|[1-9][0-9]*)$")
    set(mode ON)
  elseif(value MATCHES "^(OFF|NO|FALSE|N|0|IGNORE|NOTFOUND|.*-NOTFOUND|)$")
    set(mode OFF)
  else()
    message(FATAL_ERROR "gorge: ${var} is '${${var}}'; expected AUTO, ON or OFF")
  endif()
  set(${out} ${mode} PARENT_SCOPE)
endfunction()

# gorge_optional_resolve(<var> <found> <missing> <consequence>): decides whether the part behind
# <var> is built and sets <var>_ENABLED (ON/OFF) in the caller's scope. <found> is the name of a
# variable that is true when the dependencies are there; <missing> names what is missing (with
# its Debian package), <consequence> says what happens without it, e.g.
#   gorge_optional_resolve(GORGE_BUILD_TESTS Catch2_FOUND "Catch2 (Debian: catch2)" "tests skipped")
# AUTO with a missing dependency prints "gorge: <missing> not found, <consequence>".
function(gorge_optional_resolve var found missing consequence)
  gorge_optional_mode(${var} mode)
  set(enabled OFF)
  if(mode STREQUAL "OFF")
    # nothing to do
  elseif(${found})
    set(enabled ON)
  elseif(mode STREQUAL "ON")
    message(FATAL_ERROR "gorge: ${var} is ON but ${missing} was not found. Install it (or point "
                        "CMAKE_PREFIX_PATH at it), or set ${var} to AUTO or OFF.")
  else()
    message(STATUS "gorge: ${missing} not found, ${consequence}")
  endif()
  set(${var}_ENABLED ${enabled} PARENT_SCOPE)
endfunction()
