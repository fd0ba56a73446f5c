// Thermal erosion on a 1024 x 1024 map of fBm heights: 10 km square, heights 0..2000 (metres),
// so cells are 9.77 m and the steep fBm flanks exceed the default talus slope (0.7, about 35°).
// Each iteration runs 20 passes from the same start; items_per_second is cell-updates per second
// (one cell in one pass).
//   thermal_1024/threads:N   N threads (same result for every N)
#include <algorithm>
#include <cstdint>

#include <benchmark/benchmark.h>

#include <gorge/gorge.hpp>

#include "droplet_workload.hpp"

namespace {

constexpr int map_side = gorge_bench::droplet_map_side;
constexpr int passes = 20;
constexpr float map_extent = 10000.0f;  // metres
constexpr float relief = 2000.0f;       // metres

/// The droplet benchmarks' fBm map (benchmarks/droplet_workload.hpp), rescaled to [0, relief].
const gorge::grid<float>& fbm_map() {
    static const gorge::grid<float> map = [] {
        gorge::grid<float> g = gorge_bench::droplet_map();
        for (float& h : g) h *= relief;
        return g;
    }();
    return map;
}

void thermal_1024(benchmark::State& state) {
    const gorge::grid<float>& source = fbm_map();
    gorge::grid<float> work = source;
    gorge::thermal_params<float> params;
    params.cell_size = map_extent / float(map_side);
    params.passes = passes;
    gorge::thermal_options options;
    options.threads = static_cast<unsigned>(state.range(0));
    for (auto _ : state) {
        state.PauseTiming();
        std::copy(source.begin(), source.end(), work.begin());
        state.ResumeTiming();
        const gorge::thermal_stats stats = gorge::erode_thermal(work, params, options);
        benchmark::DoNotOptimize(stats);
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(map_side) * map_side * passes);
}
BENCHMARK(thermal_1024)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
