// demo — the published erosion demo terrain over one tile, written as images a person can look at
// and a raw heightmap an engine can import.
//
// Usage: demo [size=1024] [seed=0]   (writes into the current directory)
//   demo_height.png        8-bit grayscale height
//   demo_height.r16        16-bit little-endian raw height (Unity / Unreal heightmap import)
//   demo_ridge_map.png     the filter's ridge map (black creases, white ridges)
//   demo_relief.png        shaded relief: altitude tint times hillshade, eroded terrain
//   demo_relief_input.png  the same render of the input fBm, before erosion
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gorge/gorge.hpp>

#include "image_io.hpp"

int main(int argc, char** argv) {
    const int size = argc > 1 ? std::atoi(argv[1]) : 1024;
    const auto seed = static_cast<std::uint32_t>(argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0);
    if (size < 2 || size > 16384) {
        std::fprintf(stderr, "demo: size must be in 2..16384, got %s\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    // The demo's unit square: a few hills, as in the published shader.
    const float extent = 1.0f;
    const float spacing = extent / float(size);
    gorge::grid<float> height(size, size), input(size, size), ridge(size, size);
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x) {
            const glm::vec2 p((float(x) + 0.5f) * spacing, (float(y) + 0.5f) * spacing);
            const gorge::demo_sample<float> s = gorge::demo_pipeline(p, seed);
            height(x, y) = s.height;
            input(x, y) = s.input_height;
            ridge(x, y) = s.ridge_map;
        }

    // One normalisation for both renders, so before and after compare directly.
    const gorge_example::value_range range = gorge_example::range_of(height.view(), input.view());
    const float vertical_exaggeration = 1.0f / spacing;  // heights are in the same units as p
    bool ok = true;
    ok &= gorge_example::write_gray_png("demo_height.png", height.view(), range);
    ok &= gorge_example::write_r16("demo_height.r16", height.view(), range);
    ok &= gorge_example::write_gray_png("demo_ridge_map.png", ridge.view(), {-1.0f, 1.0f});
    ok &= gorge_example::write_relief_png("demo_relief.png", height.view(), range, vertical_exaggeration);
    ok &= gorge_example::write_relief_png("demo_relief_input.png", input.view(), range, vertical_exaggeration);
    if (!ok) return 1;
    std::printf("demo: %dx%d tile, seed %u, heights %.4f..%.4f\n", size, size, seed, range.lo, range.hi);
    std::printf("wrote demo_height.png demo_height.r16 demo_ridge_map.png demo_relief.png demo_relief_input.png\n");
    return 0;
}
