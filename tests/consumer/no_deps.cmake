# ctest driver: gorge needs only glm to be configured, installed and used. With every optional
# package hidden (CMAKE_DISABLE_FIND_PACKAGE_<Pkg>) and no GORGE_* option given:
#  1. gorge configures as a top-level project, skipping tests, examples, benchmarks, xsimd and the
#     gorge::io component and the gorge command line with STATUS lines, and defaults to a Release build;
#  2. it installs, and tests/consumer builds and runs against it with find_package(gorge);
#  3. tests/consumer/subdirectory builds and runs with add_subdirectory(gorge);
#  4. a build type given by the user is kept, and a part asked for explicitly (ON) whose
#     dependency is missing fails the configuration with a message naming it.
#   -DGORGE_SOURCE_DIR=<gorge checkout> -DCONSUMER_SOURCE_DIR=<tests/consumer> -DWORK_DIR=<scratch>
#   -DGENERATOR=<CMake generator> -DCXX_COMPILER=<C++ compiler>
foreach(var GORGE_SOURCE_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} not set")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
set(hidden)
foreach(pkg Catch2 benchmark xsimd Vulkan stb spng tinyexr GDAL CLI11 nlohmann_json MPI)
  list(APPEND hidden -DCMAKE_DISABLE_FIND_PACKAGE_${pkg}=ON)
endforeach()
set(tool -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")

# run_step(<output variable> <command...>): runs the command, fails on a non-zero exit status,
# returns stdout and stderr together.
function(run_step out)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}\n${stdout}\n${stderr}")
  endif()
  set(${out} "${stdout}${stderr}" PARENT_SCOPE)
endfunction()

# expect_lines(<text> <line...>): each line must occur in the text.
function(expect_lines text)
  foreach(line IN LISTS ARGN)
    string(FIND "${text}" "${line}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "expected '${line}' in:\n${text}")
    endif()
  endforeach()
endfunction()

function(expect_cache build_dir entry)
  file(STRINGS "${build_dir}/CMakeCache.txt" found REGEX "^${entry}$")
  if(NOT found)
    message(FATAL_ERROR "expected ${entry} in ${build_dir}/CMakeCache.txt")
  endif()
endfunction()

# 1. Top-level configuration, no options.
set(gorge_build "${WORK_DIR}/gorge")
run_step(out ${CMAKE_COMMAND} -S "${GORGE_SOURCE_DIR}" -B "${gorge_build}" ${tool} ${hidden})
expect_lines("${out}"
  "gorge: no CMAKE_BUILD_TYPE given, building Release"
  "gorge: xsimd (Debian: libxsimd-dev) not found, batches are scalar"
  "gorge: Catch2 (Debian: catch2) not found, tests skipped"
  "gorge: stb_image_write.h (Debian: libstb-dev) not found, examples skipped"
  "gorge: Google Benchmark (Debian: libbenchmark-dev) not found, benchmarks skipped"
  "gorge: libspng (Debian: libspng-dev) and tinyexr (Debian: libtinyexr-dev) not found, gorge::io skipped"
  "gorge: MPI (Debian: libopenmpi-dev and openmpi-bin) not found, gorge::mpi skipped"
  "gorge: gorge::io (GORGE_BUILD_IO) and CLI11 (Debian: libcli11-dev) and nlohmann-json (Debian: nlohmann-json3-dev) not found, the gorge command line skipped")
expect_cache("${gorge_build}" "CMAKE_BUILD_TYPE:STRING=Release")

# 2. Install, then find_package(gorge) from a consumer that does not find xsimd either.
run_step(out ${CMAKE_COMMAND} --install "${gorge_build}" --prefix "${prefix}")
run_step(out ${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/find_package" ${tool} ${hidden}
         "-DCMAKE_PREFIX_PATH=${prefix}")
run_step(out ${CMAKE_COMMAND} --build "${WORK_DIR}/find_package")
run_step(out "${WORK_DIR}/find_package/consumer")
message(STATUS "find_package consumer: ${out}")

# 3. add_subdirectory(gorge).
run_step(out ${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}/subdirectory" -B "${WORK_DIR}/subdirectory" ${tool}
         ${hidden} "-DGORGE_SOURCE_DIR=${GORGE_SOURCE_DIR}")
run_step(out ${CMAKE_COMMAND} --build "${WORK_DIR}/subdirectory")
run_step(out "${WORK_DIR}/subdirectory/consumer")
message(STATUS "add_subdirectory consumer: ${out}")

# 4. The user's build type is kept; explicitly requested parts need their dependencies.
set(explicit_build "${WORK_DIR}/explicit")
run_step(out ${CMAKE_COMMAND} -S "${GORGE_SOURCE_DIR}" -B "${explicit_build}" ${tool} ${hidden}
         -DCMAKE_BUILD_TYPE=Debug)
expect_cache("${explicit_build}" "CMAKE_BUILD_TYPE:STRING=Debug")
foreach(request
    "GORGE_BUILD_TESTS=ON;Catch2"
    "GORGE_BUILD_EXAMPLES=ON;stb_image_write.h"
    "GORGE_BUILD_BENCHMARKS=ON;Google Benchmark"
    "GORGE_USE_XSIMD=ON;xsimd"
    "GORGE_BUILD_IO=ON;libspng"
    "GORGE_BUILD_CLI=ON;gorge::io")
  list(GET request 0 option)
  list(GET request 1 dependency)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${GORGE_SOURCE_DIR}" -B "${explicit_build}" ${hidden} -D${option}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(rc EQUAL 0)
    message(FATAL_ERROR "-D${option} configured although ${dependency} is hidden:\n${stdout}\n${stderr}")
  endif()
  string(REGEX REPLACE "=ON$" "" name "${option}")
  # The message may be wrapped over several lines: compare without line breaks.
  string(REGEX REPLACE "[ \n]+" " " stderr "${stderr}")
  expect_lines("${stderr}" "gorge: ${name} is ON but ${dependency}")
  # Back to the default for the next request.
  run_step(out ${CMAKE_COMMAND} -S "${GORGE_SOURCE_DIR}" -B "${explicit_build}" -D${name}=AUTO)
endforeach()
