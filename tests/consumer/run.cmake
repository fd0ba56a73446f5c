# ctest driver: install the configured gorge build tree into a temporary prefix, then configure,
# build and run tests/consumer against it with find_package(gorge).
#   -DGORGE_BINARY_DIR=<gorge build tree> -DCONSUMER_SOURCE_DIR=<tests/consumer> -DWORK_DIR=<scratch>
foreach(var GORGE_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} not set")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run_step)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

run_step(${CMAKE_COMMAND} --install "${GORGE_BINARY_DIR}" --prefix "${prefix}")
if(NOT EXISTS "${prefix}/share/cmake/gorge/gorgeConfigVersion.cmake")
  message(FATAL_ERROR "gorgeConfigVersion.cmake was not installed")
endif()
run_step(${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build" "-DCMAKE_PREFIX_PATH=${prefix}"
         -DCMAKE_BUILD_TYPE=Release)
run_step(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run_step("${WORK_DIR}/build/consumer")
