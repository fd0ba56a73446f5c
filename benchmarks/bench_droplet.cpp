// Droplet erosion on a 1024 x 1024 map of fBm heights (normalised to [0, 1], as in Lague's
// project), 1 M droplets with default parameters; items_per_second is droplets per second.
//   droplets_1024            serial schedule (one core)
//   droplets_1024_mt/threads:N  tiled schedule on N threads (N = 1, 2, 4, 8, 16; same result for every N)
#include <algorithm>
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include <gorge/gorge.hpp>

#include "droplet_workload.hpp"

namespace {

using gorge_bench::droplet_count;

void run(benchmark::State& state, const gorge::droplet_options& options) {
    const gorge::grid<float>& source = gorge_bench::droplet_map();
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
