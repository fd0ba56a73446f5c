# Build helpers for gorge's GLSL programs (the GPU parity test and the gpu_tile example).
#
# Sets GORGE_GLSLANG_VALIDATOR (empty when glslangValidator is missing; Debian: glslang-tools) and
# GORGE_HAVE_VULKAN (the Vulkan headers and loader; Debian: libvulkan-dev), and defines
#   gorge_compile_spirv(<output.spv> <shader> [DEFINES NAME=VALUE...] [INCLUDE_DIRS dir...])
# which compiles a GLSL shader to Vulkan SPIR-V at build time, with gorge.glsl's folder on the
# include path, rebuilding when the shader or gorge.glsl changes.

find_program(GORGE_GLSLANG_VALIDATOR glslangValidator)
find_package(Vulkan QUIET)
if(Vulkan_FOUND)
  set(GORGE_HAVE_VULKAN ON)
else()
  set(GORGE_HAVE_VULKAN OFF)
endif()

function(gorge_compile_spirv output shader)
  cmake_parse_arguments(ARG "" "" "DEFINES;INCLUDE_DIRS" ${ARGN})
  set(flags -V --target-env vulkan1.1 -I${GORGE_GLSL_DIR})
  foreach(dir IN LISTS ARG_INCLUDE_DIRS)
    list(APPEND flags -I${dir})
  endforeach()
  foreach(def IN LISTS ARG_DEFINES)
    list(APPEND flags -D${def})
  endforeach()
  add_custom_command(OUTPUT ${output}
    COMMAND ${GORGE_GLSLANG_VALIDATOR} ${flags} -o ${output} ${shader}
    DEPENDS ${shader} ${GORGE_GLSL_DIR}/gorge.glsl
    COMMENT "Compiling SPIR-V ${output}"
    VERBATIM)
endfunction()
