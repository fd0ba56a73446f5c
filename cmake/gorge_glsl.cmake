# Build helpers for gorge's GLSL programs (the GPU parity test and the gpu_tile example).
#
# Sets GORGE_GLSLANG_VALIDATOR (empty when glslangValidator is missing; Debian: glslang-tools) and
# GORGE_HAVE_VULKAN (the Vulkan headers and loader; Debian: libvulkan-dev), and defines
#   gorge_compile_spirv(<output.spv> <shader> [HLSL] [OPTIMIZE] [DEFINES NAME=VALUE...] [INCLUDE_DIRS dir...])
# which compiles a GLSL shader to Vulkan SPIR-V at build time, with gorge.glsl's folder on the
# include path, rebuilding when the shader or gorge.glsl changes, and checks it with spirv-val
# when that is installed (GORGE_SPIRV_VAL). OPTIMIZE runs spirv-opt -O on it first when that is
# installed (GORGE_SPIRV_OPT): glslang's GLSL front end leaves its output unoptimized (its HLSL
# front end legalizes and optimizes by itself), and the H200's driver ran the GORGE_SUBGROUPS
# filter 9-11 % faster from optimized SPIR-V (the plain shaders 1 % slower, so they stay as
# glslang writes them; benchmarks/README.md). With HLSL the shader is an HLSL
# compute shader with entry point `main`, compiled by glslang's HLSL front end
# (glslangValidator -D -S comp -e main) with gorge.hlsl's folder (GORGE_HLSL_DIR) on the include
# path instead.

find_program(GORGE_GLSLANG_VALIDATOR glslangValidator)
find_program(GORGE_SPIRV_VAL spirv-val)  # Debian: spirv-tools, which glslang-tools depends on
find_program(GORGE_SPIRV_OPT spirv-opt)  # the same package
find_package(Vulkan QUIET)
if(Vulkan_FOUND)
  set(GORGE_HAVE_VULKAN ON)
else()
  set(GORGE_HAVE_VULKAN OFF)
endif()

function(gorge_compile_spirv output shader)
  cmake_parse_arguments(ARG "HLSL;OPTIMIZE" "" "DEFINES;INCLUDE_DIRS" ${ARGN})
  if(ARG_HLSL)
    set(flags -D -V --target-env vulkan1.1 -S comp -e main -I${GORGE_HLSL_DIR})
    set(include_file ${GORGE_HLSL_DIR}/gorge.hlsl)
  else()
    set(flags -V --target-env vulkan1.1 -I${GORGE_GLSL_DIR})
    set(include_file ${GORGE_GLSL_DIR}/gorge.glsl)
  endif()
  foreach(dir IN LISTS ARG_INCLUDE_DIRS)
    list(APPEND flags -I${dir})
  endforeach()
  foreach(def IN LISTS ARG_DEFINES)
    list(APPEND flags -D${def})
  endforeach()
  # Each step writes its own file; the last one is renamed to the output, so that a failed step
  # leaves no output behind.
  set(commands COMMAND ${GORGE_GLSLANG_VALIDATOR} ${flags} -o ${output}.compiled ${shader})
  set(last ${output}.compiled)
  if(ARG_OPTIMIZE AND GORGE_SPIRV_OPT)
    list(APPEND commands COMMAND ${GORGE_SPIRV_OPT} -O --target-env=vulkan1.1 ${last} -o ${output}.optimized
                         COMMAND ${CMAKE_COMMAND} -E remove ${last})
    set(last ${output}.optimized)
  endif()
  if(GORGE_SPIRV_VAL)
    # glslang can emit invalid SPIR-V that one driver accepts and another crashes on (an OpAll of a
    # scalar did exactly that): validate before the file counts as built.
    list(APPEND commands COMMAND ${GORGE_SPIRV_VAL} --target-env vulkan1.1 ${last})
  endif()
  add_custom_command(OUTPUT ${output}
    ${commands}
    COMMAND ${CMAKE_COMMAND} -E rename ${last} ${output}
    DEPENDS ${shader} ${include_file}
    COMMENT "Compiling SPIR-V ${output}"
    VERBATIM)
endfunction()
