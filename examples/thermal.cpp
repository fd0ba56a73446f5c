// thermal — thermal erosion (talus weathering) of a ridged-noise mountain range, rendered before
// and after as shaded relief.
//
// Usage: thermal [size=512] [passes=200] [talus=0.7]   (writes into the current directory)
// The map is 4 km square with heights 0..700 m (cells of 4000 / size metres), so the sharp
// ridges of the noise are far steeper than the talus slope (rise over run; 0.7 ≈ 35°).
//   thermal_before.png   shaded relief of the input
//   thermal_after.png    the same render after thermal erosion (same colour range and light)
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <gorge/gorge.hpp>

#include "image_io.hpp"

int main(int argc, char** argv) {
    const int size = argc > 1 ? std::atoi(argv[1]) : 512;
    const int passes = argc > 2 ? std::atoi(argv[2]) : 200;
    const float talus = argc > 3 ? float(std::atof(argv[3])) : 0.7f;
    if (size < 2 || size > 16384) {
        std::fprintf(stderr, "thermal: size must be in 2..16384, got %s\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    const float extent = 4000.0f;  // metres
    const float relief = 700.0f;   // metres

    gorge::ridged_params<float> noise;
    noise.frequency = 3;
    noise.octaves = 7;
    gorge::grid<float> height(size, size);
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x)
            height(x, y) = gorge::ridged(glm::vec2(float(x) + 0.5f, float(y) + 0.5f) / float(size), noise, 7u).x;
    const auto [lo, hi] = std::minmax_element(height.begin(), height.end());
    const float low = *lo, span = *hi - *lo;
    for (float& h : height) h = (h - low) / span * relief;
    const gorge::grid<float> before = height;

    gorge::thermal_params<float> params;
    params.cell_size = extent / float(size);
    params.talus_slope = talus;
    params.passes = passes;
    gorge::thermal_options options;
    options.threads = 0;
    try {
        params.validate();
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "thermal: %s\n", e.what());
        return 2;
    }
    const gorge::thermal_stats stats = gorge::erode_thermal(height, params, options);

    const gorge_example::value_range range = gorge_example::range_of(before.view(), height.view());
    const float z_scale = 1.0f / params.cell_size;  // heights and cells both in metres
    bool ok = true;
    ok &= gorge_example::write_relief_png("thermal_before.png", before.view(), range, z_scale);
    ok &= gorge_example::write_relief_png("thermal_after.png", height.view(), range, z_scale);
    if (!ok) return 1;
    std::printf("thermal: %dx%d map, cells of %.2f m, talus slope %.2f, %d passes, moved %.4g m x cells, "
                "largest slope excess left %.4f\n",
                size, size, double(params.cell_size), double(talus), stats.passes, stats.moved, stats.max_excess);
    std::printf("wrote thermal_before.png thermal_after.png\n");
    return 0;
}
