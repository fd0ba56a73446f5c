// Droplet erosion on a 1024 x 1024 map of fBm heights (normalised to [0, 1], as in Lague's
// project), 1 M droplets with default parameters; items_per_second is droplets per second.
//   droplets_1024            serial schedule (one core)
//   droplets_1024_mt/threads:N  tiled schedule on N threads (N = 1, 2, 4, 8, 16; same result for every N)
#include <algorithm>
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include <gorge/gorge.hpp>

namespace {

constexpr int map_side = 1024;
constexpr std::uint64_t droplet_count = 1000000;

/// fBm over the unit square, rescaled to [0, 1].
const gorge::grid<float>& fbm_map() {
    static const gorge::grid<float> map = [] {
        gorge::fbm_params<float> params;
        params.frequency = 4;
        params.octaves = 8;
        params.gain = 0.5f;
        gorge::grid<float> g(map_side, map_side);
        for (int y = 0; y < map_side; ++y)
            for (int x = 0; x < map_side; ++x)
                g(x, y) = gorge::fbm(glm::vec2(float(x), float(y)) / float(map_side), params).x;
        const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
        const float low = *lo, range = *hi - *lo;
        for (float& h : g) h = (h - low) / range;
        return g;
    }();
    return map;
}

void run(benchmark::State& state, const gorge::droplet_options& options) {
    const gorge::grid<float>& source = fbm_map();
    gorge::grid<float> work = source;
    for (auto _ : state) {
        state.PauseTiming();
        std::copy(source.begin(), source.end(), work.begin());
        state.ResumeTiming();
        const gorge::droplet_stats stats = gorge::erode_droplets(work, droplet_count, {}, options);
        benchmark::DoNotOptimize(stats);
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(droplet_count));
}

void droplets_1024(benchmark::State& state) { run(state, {}); }
BENCHMARK(droplets_1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void droplets_1024_mt(benchmark::State& state) {
    gorge::droplet_options options;
    options.schedule = gorge::droplet_schedule::tiled;
    options.threads = static_cast<unsigned>(state.range(0));
    run(state, options);
}
BENCHMARK(droplets_1024_mt)->ArgName("threads")->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
