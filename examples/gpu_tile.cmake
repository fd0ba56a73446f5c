# gpu_tile: the demo terrain through Vulkan compute. Needs glslangValidator (Debian: glslang-tools)
# to compile gpu_tile.comp (and its HLSL twin gpu_tile.hlsl) at build time, and the Vulkan headers
# and loader (libvulkan-dev).
include(${PROJECT_SOURCE_DIR}/cmake/gorge_glsl.cmake)
if(GORGE_GLSLANG_VALIDATOR AND GORGE_HAVE_VULKAN)
  gorge_add_example(gpu_tile)
  target_link_libraries(gpu_tile PRIVATE Vulkan::Vulkan)
  # The shader with the default hash (gpu_tile.spv) and with the other exact hashes (gpu_tile --hash
  # prime_mix|prime_xor) in their split form (column and row work shared, as the default pcg3d does),
  # each without and with subgroups (gpu_tile_<hash>_subgroups.spv, used where the device allows;
  # optimized by spirv-opt, see gorge_compile_spirv).
  set(gpu_tile_hash_spirv)
  foreach(hash pcg3d prime_mix prime_xor)
    if(hash STREQUAL "pcg3d")
      set(name gpu_tile)
      set(hash_defines)
    else()
      set(name gpu_tile_${hash})
      set(hash_defines GORGE_HASH=gorge_${hash}_lattice2 GORGE_HASH_AXIS_X=gorge_${hash}_axis_x
                       GORGE_HASH_AXIS_Y=gorge_${hash}_axis_y GORGE_HASH_COMBINE=gorge_${hash}_combine)
    endif()
    gorge_compile_spirv(${CMAKE_CURRENT_BINARY_DIR}/${name}.spv ${CMAKE_CURRENT_SOURCE_DIR}/gpu_tile.comp
                        DEFINES ${hash_defines})
    gorge_compile_spirv(${CMAKE_CURRENT_BINARY_DIR}/${name}_subgroups.spv ${CMAKE_CURRENT_SOURCE_DIR}/gpu_tile.comp
                        OPTIMIZE DEFINES ${hash_defines} GPU_TILE_SUBGROUPS)
    list(APPEND gpu_tile_hash_spirv ${CMAKE_CURRENT_BINARY_DIR}/${name}.spv ${CMAKE_CURRENT_BINARY_DIR}/${name}_subgroups.spv)
  endforeach()
  # The same shader written with gorge's HLSL include (run it with GORGE_GPU_TILE_SPIRV pointing at
  # gpu_tile_hlsl.spv; see gpu_tile.hlsl).
  gorge_compile_spirv(${CMAKE_CURRENT_BINARY_DIR}/gpu_tile_hlsl.spv ${CMAKE_CURRENT_SOURCE_DIR}/gpu_tile.hlsl HLSL)
  gorge_compile_spirv(${CMAKE_CURRENT_BINARY_DIR}/gpu_tile_hlsl_subgroups.spv ${CMAKE_CURRENT_SOURCE_DIR}/gpu_tile.hlsl HLSL
                      DEFINES GPU_TILE_SUBGROUPS)
  add_custom_target(gpu_tile_spirv DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/gpu_tile_hlsl.spv
                    ${CMAKE_CURRENT_BINARY_DIR}/gpu_tile_hlsl_subgroups.spv ${gpu_tile_hash_spirv})
  add_dependencies(gpu_tile gpu_tile_spirv)
else()
  message(WARNING "gpu_tile is not built: it needs glslangValidator (glslang-tools) and Vulkan (libvulkan-dev)")
endif()
