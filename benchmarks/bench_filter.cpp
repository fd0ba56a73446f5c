// Per-point evaluation benchmarks on a 512 x 512 tile with default parameters; items_per_second
// is points per second.
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include <gorge/gorge.hpp>

namespace {

constexpr int tile_size = 512;
constexpr float tile_spacing = 1.0f / tile_size;

/// Calls f(p) for every sample of the tile and keeps the results alive.
template <class F>
void run_tile(benchmark::State& state, F&& f) {
    std::vector<float> out(std::size_t(tile_size) * tile_size);
    for (auto _ : state) {
        for (int y = 0; y < tile_size; ++y)
            for (int x = 0; x < tile_size; ++x)
                out[std::size_t(y) * tile_size + std::size_t(x)] =
                    f(glm::vec2(float(x) * tile_spacing, float(y) * tile_spacing));
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(tile_size) * tile_size);
}

void filter_scalar(benchmark::State& state) {
    const gorge::erosion_params<float> params;
    run_tile(state, [&](glm::vec2 p) {
        // A fixed sloped input, so the benchmark measures the filter alone.
        const glm::vec3 h(0.5f + 0.3f * p.x, 0.3f, -0.2f);
        return gorge::erosion_filter(p, h, 0.0f, params).height_delta;
    });
}
BENCHMARK(filter_scalar)->Unit(benchmark::kMillisecond);

void fbm_scalar(benchmark::State& state) {
    gorge::fbm_params<float> params;
    params.octaves = 5;
    params.gain = 0.5f;
    run_tile(state, [&](glm::vec2 p) { return gorge::fbm(p, params).x; });
}
BENCHMARK(fbm_scalar)->Unit(benchmark::kMillisecond);

void demo_pipeline_scalar(benchmark::State& state) {
    run_tile(state, [](glm::vec2 p) { return gorge::demo_pipeline(p).height; });
}
BENCHMARK(demo_pipeline_scalar)->Unit(benchmark::kMillisecond);

}  // namespace
