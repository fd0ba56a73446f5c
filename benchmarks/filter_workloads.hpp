// The filter benchmarks' tile fields (bench_filter.cpp and thread_scaling.cpp), so that both
// time the same work:
//   sloped_plane  a fixed sloped plane: the filter alone (filter_simd)
//   demo_field    the published demo's input: 3-octave fBm height with its own fade target
//                 (gorge/filter/demo_pipeline.hpp), filtered by erode_tile with
//                 demo_tile_settings()'s height offset (demo_pipeline_simd)
#pragma once

#include <gorge/filter/demo_pipeline.hpp>
#include <gorge/filter/erosion_filter.hpp>
#include <gorge/noise/gradient_noise.hpp>
#include <gorge/simd/tile.hpp>

namespace gorge_bench {

/// The filter alone: a fixed sloped plane as the input height.
struct sloped_plane {
    template <class T>
    gorge::height_sample<T> operator()(const glm::vec<2, T>& p) const {
        return {glm::vec<3, T>(T(0.5f) + T(0.3f) * p.x, T(0.3f), T(-0.2f)), T(0.0f)};
    }
};

/// The published demo as a tile field (filter it with demo_tile_settings()).
template <class Hash = gorge::pcg3d_hash>
struct demo_field {
    template <class T>
    gorge::height_sample<T> operator()(const glm::vec<2, T>& p) const {
        const glm::vec<3, T> n =
            gorge::fbm<Hash>(p, gorge::demo::height_fbm<float>()) * T(float(gorge::demo::height_amplitude));
        const T fade = gorge::detail::clamp(
            n.x / T(float(gorge::demo::height_amplitude * gorge::demo::fade_range)), T(-1.0f), T(1.0f));
        const T half(0.5f);
        return {glm::vec<3, T>(T(float(gorge::demo::base_height)) + half * n.x, half * n.y, half * n.z), fade};
    }
};

/// erode_tile settings of the demo pipeline (its height offset) on `threads` threads.
inline gorge::tile_settings<float> demo_tile_settings(unsigned threads = 1) {
    gorge::tile_settings<float> settings;
    settings.height_offset = glm::vec2(float(gorge::demo::height_offset_o), float(gorge::demo::height_offset_k));
    settings.threads = threads;
    return settings;
}

}  // namespace gorge_bench
