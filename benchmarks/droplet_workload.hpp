// The droplet benchmarks' map (bench_droplet.cpp and thread_scaling.cpp): 1024 x 1024 fBm heights
// over the unit square (frequency 4, 8 octaves, gain 0.5), normalised to [0, 1] as in Lague's
// project; made once and kept for the life of the process. The benchmarks run 1 M droplets on it.
#pragma once

#include <algorithm>
#include <cstdint>

#include <gorge/grid/grid.hpp>
#include <gorge/noise/gradient_noise.hpp>

namespace gorge_bench {

constexpr int droplet_map_side = 1024;
constexpr std::uint64_t droplet_count = 1000000;

/// fBm over the unit square sampled at side x side cells, rescaled to [0, 1]: the benchmark map
/// at another resolution (thread_scaling's 2048^2 droplets).
inline gorge::grid<float> make_droplet_map(int side) {
    gorge::fbm_params<float> params;
    params.frequency = 4;
    params.octaves = 8;
    params.gain = 0.5f;
    gorge::grid<float> g(side, side);
    for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) g(x, y) = gorge::fbm(glm::vec2(float(x), float(y)) / float(side), params).x;
    const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
    const float low = *lo, range = *hi - *lo;
    for (float& h : g) h = (h - low) / range;
    return g;
}

/// The benchmark map, droplet_map_side^2 cells.
inline const gorge::grid<float>& droplet_map() {
    static const gorge::grid<float> map = make_droplet_map(droplet_map_side);
    return map;
}

}  // namespace gorge_bench
