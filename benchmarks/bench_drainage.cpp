// Drainage benchmarks on a 4096 x 4096 map with many pits: fBm terrain plus white noise (the noise
// turns about a third of the cells into pits and lake beds). items_per_second is cells per second.
//   fill_epsilon_4096  Priority-Flood+ε (gorge::fill_depressions_epsilon)
//   fill_4096          Priority-Flood+ (gorge::fill_depressions)
//   d8_accum_4096      D8 directions (steepest) + flow accumulation on the epsilon-filled map
// and, to show how the time splits: d8_4096 (directions alone) and d8_accum_4096_into (the same
// as d8_accum_4096 into buffers allocated once, as an engine reusing them would do).
#include <cstdint>
#include <random>

#include <benchmark/benchmark.h>

#include <gorge/gorge.hpp>

namespace {

constexpr std::ptrdiff_t map_size = 4096;
constexpr float white_noise_amplitude = 0.02f;  // in the fBm's height units (fBm spans about ±0.7)

/// The benchmark map, made once: 6 octaves of fBm over 8 x 8 lattice cells plus uniform white noise.
const gorge::grid<float>& pitted_map() {
    static const gorge::grid<float> map = [] {
        gorge::grid<float> g(map_size, map_size);
        gorge::fbm_params<float> params;
        params.frequency = 8.0f;
        params.octaves = 6;
        params.gain = 0.5f;
        std::mt19937 rng(2014);
        std::uniform_real_distribution<float> noise(-white_noise_amplitude, white_noise_amplitude);
        const float spacing = 1.0f / float(map_size);
        for (std::ptrdiff_t y = 0; y < map_size; ++y)
            for (std::ptrdiff_t x = 0; x < map_size; ++x) {
                const glm::vec2 p(float(x) * spacing, float(y) * spacing);
                g(x, y) = gorge::fbm(p, params, 7u).x + noise(rng);
            }
        return g;
    }();
    return map;
}

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
void run_fill(benchmark::State& state, Fill&& fill) {
    const gorge::grid<float>& original = pitted_map();
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
