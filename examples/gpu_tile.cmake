# gpu_tile: the demo terrain through Vulkan compute. Needs glslangValidator (Debian: glslang-tools)
# to compile gpu_tile.comp (and its HLSL twin gpu_tile.hlsl) at build time, and the Vulkan headers
# and loader (libvulkan-dev).
include(${PROJECT_SOURCE_DIR}/cmake/gorge_glsl.cmake)
if(GORGE_GLSLANG_VALIDATOR AND GORGE_HAVE_VULKAN)
  gorge_add_example(gpu_tile)
  target_link_libraries(gpu_tile PRIVATE Vulkan::Vulkan)
  gorge_compile_spirv(${CMAKE_CURRENT_BINARY_DIR}/gpu_tile.spv ${CMAKE_CURRENT_SOURCE_DIR}/gpu_tile.comp)
  # The same shader with the other exact hashes (gpu_tile --hash prime_mix|prime_xor), in their split
  # form (column and row work shared, as the default pcg3d does).
  set(gpu_tile_hash_spirv)
  foreach(hash prime_mix prime_xor)
    gorge_compile_spirv(${CMAKE_CURRENT_BINARY_DIR}/gpu_tile_${hash}.spv ${CMAKE_CURRENT_SOURCE_DIR}/gpu_tile.comp
                        DEFINES GORGE_HASH=gorge_${hash}_lattice2 GORGE_HASH_AXIS_X=gorge_${hash}_axis_x
                                GORGE_HASH_AXIS_Y=gorge_${hash}_axis_y GORGE_HASH_COMBINE=gorge_${hash}_combine)
    list(APPEND gpu_tile_hash_spirv ${CMAKE_CURRENT_BINARY_DIR}/gpu_tile_${hash}.spv)
  endforeach()
  # The same shader written with gorge's HLSL include (run it with GORGE_GPU_TILE_SPIRV pointing at
  # gpu_tile_hlsl.spv; see gpu_tile.hlsl).
  gorge_compile_spirv(${CMAKE_CURRENT_BINARY_DIR}/gpu_tile_hlsl.spv ${CMAKE_CURRENT_SOURCE_DIR}/gpu_tile.hlsl HLSL)
  add_custom_target(gpu_tile_spirv DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/gpu_tile.spv ${CMAKE_CURRENT_BINARY_DIR}/gpu_tile_hlsl.spv
                    ${gpu_tile_hash_spirv})
  add_dependencies(gpu_tile gpu_tile_spirv)
else()
  message(WARNING "gpu_tile is not built: it needs glslangValidator (glslang-tools) and Vulkan (libvulkan-dev)")
endif()
