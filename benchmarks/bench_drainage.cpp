// Drainage benchmarks on maps with many pits: fBm terrain plus white noise (the noise turns about
// half of the cells into pits and lake beds; benchmarks/peers/drainage_maps.hpp, shared with the
// RichDEM peer benchmark). items_per_second is cells per second.
//   fill_epsilon_4096  Priority-Flood+ε (gorge::fill_depressions_epsilon)
//   fill_4096          Priority-Flood+ (gorge::fill_depressions)
//   fill_epsilon_1024, fill_epsilon_8192, fill_1024, fill_8192: the same terrain at other sizes,
//                      for the cost per cell as the map outgrows the caches
//   fill_epsilon_nostats_1024, fill_epsilon_nostats_8192: the epsilon fill without its
//                      statistics (fill_options::epsilon_statistics = false), whose pass grows
//                      faster per cell than the flood as the map outgrows the caches
//   fill_8192_whole, fill_8192_tiles/T: the plain fill as one whole-map flood, and in tiles on T
//                      threads (0: all), whatever the cache (fill_options::tiles)
//   d8_accum_4096      D8 directions (steepest) + flow accumulation on the epsilon-filled map
// and, to show how the time splits: d8_4096 (directions alone) and d8_accum_4096_into (the same
// as d8_accum_4096 into buffers allocated once, as an engine reusing them would do).
#include <cstdint>

#include <benchmark/benchmark.h>

#include <gorge/gorge.hpp>

#include "peers/drainage_maps.hpp"

namespace {

constexpr std::ptrdiff_t map_size = 4096;

const gorge::grid<float>& pitted_map() { return gorge_bench::pitted_map(map_size); }

/// The benchmark map after the epsilon fill (so every cell drains), made once for the D8 benchmarks.
const gorge::grid<float>& filled_map() {
    static const gorge::grid<float> filled = [] {
        gorge::grid<float> g = pitted_map();
        gorge::fill_depressions_epsilon(g);
        return g;
    }();
    return filled;
}

template <class Fill>
void run_fill(benchmark::State& state, Fill&& fill, std::ptrdiff_t side = map_size) {
    const gorge::grid<float>& original = gorge_bench::pitted_map(side);
    gorge::grid<float> work = original;
    std::size_t raised = 0;
    for (auto _ : state) {
        state.PauseTiming();
        work = original;
        state.ResumeTiming();
        raised = fill(work).raised_cells;
        benchmark::DoNotOptimize(work.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(original.size()));
    state.counters["raised_fraction"] = double(raised) / double(original.size());
}

void fill_epsilon_4096(benchmark::State& state) {
    run_fill(state, [](gorge::grid<float>& g) { return gorge::fill_depressions_epsilon(g); });
}
BENCHMARK(fill_epsilon_4096)->Unit(benchmark::kMillisecond)->UseRealTime();

void fill_4096(benchmark::State& state) {
    run_fill(state, [](gorge::grid<float>& g) { return gorge::fill_depressions(g); });
}
BENCHMARK(fill_4096)->Unit(benchmark::kMillisecond)->UseRealTime();

void fill_epsilon_1024(benchmark::State& state) {
    run_fill(state, [](gorge::grid<float>& g) { return gorge::fill_depressions_epsilon(g); }, 1024);
}
BENCHMARK(fill_epsilon_1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void fill_1024(benchmark::State& state) {
    run_fill(state, [](gorge::grid<float>& g) { return gorge::fill_depressions(g); }, 1024);
}
BENCHMARK(fill_1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void fill_epsilon_8192(benchmark::State& state) {
    run_fill(state, [](gorge::grid<float>& g) { return gorge::fill_depressions_epsilon(g); }, 8192);
}
BENCHMARK(fill_epsilon_8192)->Unit(benchmark::kMillisecond)->UseRealTime();

gorge::fill_stats<float> fill_epsilon_without_statistics(gorge::grid<float>& g) {
    gorge::fill_options<float> o;
    o.epsilon_statistics = false;
    return gorge::fill_depressions_epsilon(g, o);
}
void fill_epsilon_nostats_1024(benchmark::State& state) { run_fill(state, fill_epsilon_without_statistics, 1024); }
BENCHMARK(fill_epsilon_nostats_1024)->Unit(benchmark::kMillisecond)->UseRealTime();
void fill_epsilon_nostats_8192(benchmark::State& state) { run_fill(state, fill_epsilon_without_statistics, 8192); }
BENCHMARK(fill_epsilon_nostats_8192)->Unit(benchmark::kMillisecond)->UseRealTime();

void fill_8192(benchmark::State& state) {
    run_fill(state, [](gorge::grid<float>& g) { return gorge::fill_depressions(g); }, 8192);
}
BENCHMARK(fill_8192)->Unit(benchmark::kMillisecond)->UseRealTime();

/// The 8192^2 plain fill on one whole-map flood (tiles off) and in tiles on 1 and all threads.
void fill_8192_whole(benchmark::State& state) {
    gorge::fill_options<float> o;
    o.tiles = false;
    run_fill(state, [&](gorge::grid<float>& g) { return gorge::fill_depressions(g, o); }, 8192);
}
BENCHMARK(fill_8192_whole)->Unit(benchmark::kMillisecond)->UseRealTime();
void fill_8192_tiles(benchmark::State& state) {
    gorge::fill_options<float> o;
    o.threads = static_cast<unsigned>(state.range(0));
    run_fill(state, [&](gorge::grid<float>& g) {
        return gorge::detail::run_tiled_priority_flood(g.view(), o, "fill_8192_tiles", gorge::detail::tiled_fill_tile_side);
    }, 8192);
}
BENCHMARK(fill_8192_tiles)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

void d8_accum_4096(benchmark::State& state) {
    const gorge::grid<float>& filled = filled_map();
    for (auto _ : state) {
        const gorge::grid<std::uint8_t> dirs = gorge::flow_directions(filled);
        const gorge::grid<std::uint32_t> acc = gorge::flow_accumulation(dirs);
        benchmark::DoNotOptimize(acc.data());
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(filled.size()));
}
BENCHMARK(d8_accum_4096)->Unit(benchmark::kMillisecond)->UseRealTime();

void d8_accum_4096_into(benchmark::State& state) {
    const gorge::grid<float>& filled = filled_map();
    gorge::grid<std::uint8_t> dirs(filled.width(), filled.height());
    gorge::grid<std::uint32_t> acc(filled.width(), filled.height());
    for (auto _ : state) {
        gorge::flow_directions(filled.view(), dirs.view());
        gorge::flow_accumulation(dirs.view(), acc.view());
        benchmark::DoNotOptimize(acc.data());
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(filled.size()));
}
BENCHMARK(d8_accum_4096_into)->Unit(benchmark::kMillisecond)->UseRealTime();

/// D8 directions alone, to see how the total splits.
void d8_4096(benchmark::State& state) {
    const gorge::grid<float>& filled = filled_map();
    for (auto _ : state) {
        const gorge::grid<std::uint8_t> dirs = gorge::flow_directions(filled);
        benchmark::DoNotOptimize(dirs.data());
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(filled.size()));
}
BENCHMARK(d8_4096)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
