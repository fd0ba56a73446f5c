// Maps for the depression-fill benchmarks (bench_drainage.cpp and the RichDEM peer benchmark):
// the same terrain at every size (fBm over the unit square, 8 lattice cells across, 6 octaves), so
// that the cost per cell can be compared from 1024^2 to 8192^2.
//   pitted_map(n)  the fBm plus uniform white noise of amplitude 0.02: about half of the cells lie
//                  in depressions (48 % at 4096^2), most of them small pits and lake beds
//   smooth_map(n)  the fBm alone: few, large depressions
// Each map is made once per size and kept for the life of the process.
#pragma once

#include <cstddef>
#include <map>
#include <random>

#include <gorge/grid/grid.hpp>
#include <gorge/noise/gradient_noise.hpp>

namespace gorge_bench {

constexpr float fill_map_frequency = 8.0f;       // lattice cells across the map
constexpr int fill_map_octaves = 6;
constexpr float fill_map_gain = 0.5f;
constexpr unsigned fill_map_seed = 7u;
constexpr unsigned fill_map_noise_seed = 2014u;
constexpr float fill_map_white_noise = 0.02f;    // in the fBm's height units (fBm spans about ±0.7)

inline gorge::grid<float> make_fill_map(std::ptrdiff_t side, bool white_noise) {
    gorge::grid<float> g(side, side);
    gorge::fbm_params<float> params;
    params.frequency = fill_map_frequency;
    params.octaves = fill_map_octaves;
    params.gain = fill_map_gain;
    std::mt19937 rng(fill_map_noise_seed);
    std::uniform_real_distribution<float> noise(-fill_map_white_noise, fill_map_white_noise);
    const float spacing = 1.0f / float(side);
    for (std::ptrdiff_t y = 0; y < side; ++y)
        for (std::ptrdiff_t x = 0; x < side; ++x) {
            const glm::vec2 p(float(x) * spacing, float(y) * spacing);
            const float h = gorge::fbm(p, params, fill_map_seed).x;
            g(x, y) = white_noise ? h + noise(rng) : h;
        }
    return g;
}

inline const gorge::grid<float>& pitted_map(std::ptrdiff_t side) {
    static std::map<std::ptrdiff_t, gorge::grid<float>> maps;
    auto it = maps.find(side);
    if (it == maps.end()) it = maps.emplace(side, make_fill_map(side, true)).first;
    return it->second;
}

inline const gorge::grid<float>& smooth_map(std::ptrdiff_t side) {
    static std::map<std::ptrdiff_t, gorge::grid<float>> maps;
    auto it = maps.find(side);
    if (it == maps.end()) it = maps.emplace(side, make_fill_map(side, false)).first;
    return it->second;
}

}  // namespace gorge_bench
