// Landscape evolution (gorge/erosion/landscape_evolution.hpp) on square maps of 1024², 2048² and
// 4096² cells: 100 m cells, uplift 1 mm/yr, K = 2e-5, m = 0.5, n = 1, D = 0.01 m²/yr,
// dt = 10 kyr, fixed edges, float. The map starts as low fBm (0..50 m, with pits) and is evolved
// for warm-up steps before timing (150 at 1024², a formed landscape whose rivers reach the
// ridges; fewer on larger maps, whose early steps take seconds each, so those see a river
// network still forming, lakes routed at a cost). Diffusion keeps making small pits, so
// depression routing runs every step.
// Each iteration runs `timed_steps` full steps (uplift, receivers, depression routing where
// sinks exist, stack, accumulation, implicit stream power, implicit diffusion);
// items_per_second is cell-steps per second. Counters: seconds per step of each stage
// (s_accumulation stays 0: the drainage area is counted in the stack pass, s_stack).
//   evolution/side:S/threads:N     N threads (same result for every N)
//   evolution_n2/side:1024         n = 2 (Newton)
//   evolution_island_copies/copies:C  a 1024² island (sea as no-data) formed over 150 steps, and
//                                  maps of C×C copies of it started from that state: the same
//                                  landscape per cell at 1024², 2048² and 4096², so that the cost
//                                  per cell compares like for like
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>

#include <benchmark/benchmark.h>

#include <gorge/gorge.hpp>

namespace {

/// Warm-up steps before timing: fewer on the larger maps (whose early steps, with lakes over a
/// quarter of the map, take seconds each), so those are measured earlier in their evolution.
int warmup_steps(int side) { return side <= 1024 ? 150 : side <= 2048 ? 15 : 6; }
constexpr int timed_steps = 4;
constexpr float start_relief = 50.0f;  // metres

gorge::evolution_params<float> bench_params(float slope_exponent) {
    gorge::evolution_params<float> p;
    p.cell_size = 100.0f;
    p.time_step = 1e4f;
    p.erodibility = slope_exponent == 1.0f ? 2e-5f : 2e-3f;
    p.area_exponent = 0.5f;
    p.slope_exponent = slope_exponent;
    p.diffusivity = 0.01f;
    p.uplift = 1e-3f;
    return p;
}

/// The starting map: 8-octave fBm over the map, rescaled to [0, start_relief].
gorge::grid<float> fbm_start(int side) {
    gorge::fbm_params<float> params;
    params.frequency = 8;
    params.octaves = 8;
    gorge::grid<float> g(side, side);
    for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) g(x, y) = gorge::fbm(glm::vec2(float(x), float(y)) / float(side), params).x;
    const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
    const float low = *lo, range = *hi - *lo;
    for (float& h : g) h = (h - low) / range * start_relief;
    return g;
}

/// A model after the warm-up steps, one per (side, n), made once.
gorge::landscape_evolver<float>& warm_model(int side, float slope_exponent) {
    static std::map<std::pair<int, float>, std::unique_ptr<gorge::landscape_evolver<float>>> models;
    auto& slot = models[{side, slope_exponent}];
    if (!slot) {
        const gorge::grid<float> g = fbm_start(side);
        slot = std::make_unique<gorge::landscape_evolver<float>>(g.view(), bench_params(slope_exponent));
        gorge::evolution_options o;
        o.threads = 0;
        slot->run(warmup_steps(side), o);
    }
    return *slot;
}

void run_model(benchmark::State& state, gorge::landscape_evolver<float>& model, int side, unsigned threads);

constexpr int island_side = 1024;
constexpr float island_radius = 0.45f;  // of the map's side; beyond it the sea (no-data)
constexpr float island_sea = -9999.0f;

/// A map of copies × copies formed islands (made once per count; the island itself once).
gorge::landscape_evolver<float>& island_copies_model(int copies) {
    static std::map<int, std::unique_ptr<gorge::landscape_evolver<float>>> models;
    static const gorge::grid<float> island = [] {
        gorge::grid<float> g = fbm_start(island_side);
        for (int y = 0; y < island_side; ++y)
            for (int x = 0; x < island_side; ++x) {
                const glm::vec2 d = (glm::vec2(float(x), float(y)) + 0.5f) / float(island_side) - 0.5f;
                if (glm::length(d) > island_radius) g(x, y) = island_sea;
            }
        gorge::evolution_params<float> p = bench_params(1.0f);
        p.no_data = island_sea;
        gorge::landscape_evolver<float> formed(g.view(), p);
        gorge::evolution_options o;
        o.threads = 0;
        formed.run(warmup_steps(island_side), o);
        gorge::grid<float> out(island_side, island_side);
        for (int y = 0; y < island_side; ++y)
            for (int x = 0; x < island_side; ++x) out(x, y) = formed.heights()(x, y);
        return out;
    }();
    auto& slot = models[copies];
    if (!slot) {
        const int side = island_side * copies;
        gorge::grid<float> g(side, side);
        for (int y = 0; y < side; ++y)
            for (int x = 0; x < side; ++x) g(x, y) = island(x % island_side, y % island_side);
        gorge::evolution_params<float> p = bench_params(1.0f);
        p.no_data = island_sea;
        slot = std::make_unique<gorge::landscape_evolver<float>>(g.view(), p);
    }
    return *slot;
}

void run_bench(benchmark::State& state, int side, float slope_exponent, unsigned threads) {
    run_model(state, warm_model(side, slope_exponent), side, threads);
}

void run_model(benchmark::State& state, gorge::landscape_evolver<float>& model, int side, unsigned threads) {
    gorge::evolution_options options;
    options.threads = threads;
    gorge::evolution_timings total;
    std::int64_t steps = 0, depression_steps = 0;
    for (auto _ : state) {
        const gorge::evolution_stats stats = model.run(timed_steps, options);
        const gorge::evolution_timings& s = stats.seconds;
        total.uplift += s.uplift;
        total.receivers += s.receivers;
        total.depressions += s.depressions;
        total.stack += s.stack;
        total.accumulation += s.accumulation;
        total.stream_power += s.stream_power;
        total.diffusion += s.diffusion;
        steps += stats.steps;
        depression_steps += stats.depression_steps;
        benchmark::DoNotOptimize(stats);
    }
    state.SetItemsProcessed(steps * std::int64_t(side) * side);
    const double per = steps > 0 ? 1.0 / double(steps) : 0.0;
    state.counters["s_uplift"] = total.uplift * per;
    state.counters["s_receivers"] = total.receivers * per;
    state.counters["s_depressions"] = total.depressions * per;
    state.counters["s_stack"] = total.stack * per;
    state.counters["s_accumulation"] = total.accumulation * per;
    state.counters["s_stream_power"] = total.stream_power * per;
    state.counters["s_diffusion"] = total.diffusion * per;
    state.counters["depression_steps"] = double(depression_steps) * per;
}

void evolution(benchmark::State& state) {
    run_bench(state, int(state.range(0)), 1.0f, unsigned(state.range(1)));
}
BENCHMARK(evolution)
    ->ArgNames({"side", "threads"})
    ->Args({1024, 1})
    ->Args({1024, 2})
    ->Args({2048, 1})
    ->Args({4096, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void evolution_n2(benchmark::State& state) { run_bench(state, int(state.range(0)), 2.0f, 1); }
BENCHMARK(evolution_n2)->ArgName("side")->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void evolution_island_copies(benchmark::State& state) {
    const int copies = int(state.range(0));
    run_model(state, island_copies_model(copies), island_side * copies, 1);
}
BENCHMARK(evolution_island_copies)->ArgName("copies")->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
