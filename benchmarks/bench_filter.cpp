// Per-point evaluation benchmarks on a 512 x 512 tile with default parameters; items_per_second
// is points per second. The *_scalar variants evaluate one point per kernel call; the *_simd
// variants go through the batch kernels (gorge/simd/simd.hpp) via the tile API (gorge/simd/tile.hpp) on
// one thread, *_simd_mt on all hardware threads, demo_pipeline_simd_threads/threads:N/side:S on N threads
// (demo_pipeline_simd_pool: the same on N threads kept in a gorge::thread_pool).
// demo_pipeline_simd_copies/copies:N runs N one-thread 512^2 tiles at once, one per std::thread
// (no shared work, nothing to balance): its speed-up over copies:1 is what the machine itself
// gives N busy cores (clock speed with every core busy, shared caches), the ceiling of
// demo_pipeline_simd_threads. See benchmarks/README.md for measured figures.
#include <cstdint>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include <gorge/filter/demo_pipeline.hpp>
#include <gorge/filter/erosion_filter.hpp>
#include <gorge/noise/gradient_noise.hpp>
#include <gorge/simd/tile.hpp>
#include <gorge/thread_pool.hpp>

#include "filter_workloads.hpp"

namespace {

constexpr int tile_size = 512;
constexpr float tile_spacing = 1.0f / tile_size;
constexpr std::int64_t tile_points = std::int64_t(tile_size) * tile_size;

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
    state.SetItemsProcessed(state.iterations() * tile_points);
}

/// The same tile through the tile API: samples at (x, y) / side (512 unless given), height output
/// only.
template <class Fill>
void run_tile_api(benchmark::State& state, Fill&& fill, int side = tile_size) {
    std::vector<float> out(std::size_t(side) * std::size_t(side));
    gorge::tile_sampling<float> sampling;
    sampling.spacing = glm::vec2(1.0f / float(side));
    gorge::tile_buffers<float> buffers;
    buffers.height = gorge::grid_view<float>(out.data(), side, side);
    for (auto _ : state) {
        fill(sampling, buffers);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(side) * side);
    state.counters["lanes"] = double(gorge::simd_lanes<float>());
}

using gorge_bench::demo_field;
using gorge_bench::demo_tile_settings;
using gorge_bench::sloped_plane;

void filter_scalar(benchmark::State& state) {
    const gorge::erosion_params<float> params;
    run_tile(state, [&](glm::vec2 p) {
        const glm::vec3 h(0.5f + 0.3f * p.x, 0.3f, -0.2f);
        return gorge::erosion_filter(p, h, 0.0f, params).height_delta;
    });
}
BENCHMARK(filter_scalar)->Unit(benchmark::kMillisecond);

void filter_simd_threads(benchmark::State& state, unsigned threads) {
    gorge::tile_settings<float> settings;
    settings.threads = threads;
    run_tile_api(state, [&](const gorge::tile_sampling<float>& s, const gorge::tile_buffers<float>& b) {
        gorge::erode_tile(sloped_plane{}, s, 0, 0, b, settings);
    });
}
void filter_simd(benchmark::State& state) { filter_simd_threads(state, 1); }
BENCHMARK(filter_simd)->Unit(benchmark::kMillisecond);
/// The filter with the cheapest exact hash.
void filter_simd_prime_xor(benchmark::State& state) {
    const gorge::tile_settings<float> settings;
    run_tile_api(state, [&](const gorge::tile_sampling<float>& s, const gorge::tile_buffers<float>& b) {
        gorge::erode_tile<gorge::prime_xor_hash>(sloped_plane{}, s, 0, 0, b, settings);
    });
}
BENCHMARK(filter_simd_prime_xor)->Unit(benchmark::kMillisecond);
void filter_simd_mt(benchmark::State& state) { filter_simd_threads(state, 0); }
BENCHMARK(filter_simd_mt)->Unit(benchmark::kMillisecond)->UseRealTime();

/// 5-octave gradient fBm with derivatives (classic gain 0.5).
gorge::fbm_params<float> fbm5() {
    gorge::fbm_params<float> params;
    params.octaves = 5;
    params.gain = 0.5f;
    return params;
}

void fbm_scalar(benchmark::State& state) {
    const gorge::fbm_params<float> params = fbm5();
    run_tile(state, [&](glm::vec2 p) {
        const glm::vec3 n = gorge::fbm(p, params);
        return n.x + n.y + n.z;  // keep the derivatives alive
    });
}
BENCHMARK(fbm_scalar)->Unit(benchmark::kMillisecond);

void fbm_simd(benchmark::State& state) {
    const gorge::fbm_params<float> params = fbm5();
    std::vector<float> dx(std::size_t(tile_size) * tile_size), dy(dx.size());
    run_tile_api(state, [&](const gorge::tile_sampling<float>& s, gorge::tile_buffers<float> b) {
        b.gradient_x = gorge::grid_view<float>(dx.data(), tile_size, tile_size);
        b.gradient_y = gorge::grid_view<float>(dy.data(), tile_size, tile_size);
        gorge::evaluate_tile([&](const auto& p) { return gorge::fbm(p, params); }, s, 0, 0, b);
    });
}
BENCHMARK(fbm_simd)->Unit(benchmark::kMillisecond);

void demo_pipeline_scalar(benchmark::State& state) {
    run_tile(state, [](glm::vec2 p) { return gorge::demo_pipeline(p).height; });
}
BENCHMARK(demo_pipeline_scalar)->Unit(benchmark::kMillisecond);

template <class Hash>
void demo_pipeline_simd_with(benchmark::State& state) {
    const gorge::tile_settings<float> settings = demo_tile_settings();
    run_tile_api(state, [&](const gorge::tile_sampling<float>& s, const gorge::tile_buffers<float>& b) {
        gorge::erode_tile<Hash>(demo_field<Hash>{}, s, 0, 0, b, settings);
    });
}
void demo_pipeline_simd(benchmark::State& state) { demo_pipeline_simd_with<gorge::pcg3d_hash>(state); }
BENCHMARK(demo_pipeline_simd)->Unit(benchmark::kMillisecond);
/// The demo with the cheapest exact hash (fBm and filter).
void demo_pipeline_simd_prime_xor(benchmark::State& state) { demo_pipeline_simd_with<gorge::prime_xor_hash>(state); }
BENCHMARK(demo_pipeline_simd_prime_xor)->Unit(benchmark::kMillisecond);

/// Thread scaling of the demo tile, 512^2 and 2048^2 (rows shared through erode_tile's work
/// counter); wall time.
void demo_pipeline_simd_threads(benchmark::State& state) {
    const gorge::tile_settings<float> settings = demo_tile_settings(static_cast<unsigned>(state.range(0)));
    run_tile_api(
        state,
        [&](const gorge::tile_sampling<float>& s, const gorge::tile_buffers<float>& b) {
            gorge::erode_tile(demo_field<>{}, s, 0, 0, b, settings);
        },
        static_cast<int>(state.range(1)));
}
BENCHMARK(demo_pipeline_simd_threads)
    ->ArgNames({"threads", "side"})
    ->ArgsProduct({{1, 2, 4, 8, 16}, {512, 2048}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// The same on threads kept in a gorge::thread_pool between iterations (made before the first).
void demo_pipeline_simd_pool(benchmark::State& state) {
    const auto threads = static_cast<unsigned>(state.range(0));
    gorge::thread_pool pool(threads);
    const gorge::thread_pool_scope use(pool);
    demo_pipeline_simd_threads(state);
}
BENCHMARK(demo_pipeline_simd_pool)
    ->ArgNames({"threads", "side"})
    ->ArgsProduct({{2, 4, 8, 16}, {512, 2048}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// The machine's own scaling: N std::threads, each filling its own 512^2 demo tile on one thread
/// (erode_tile's threads = 1), started and joined per iteration; wall time, N tiles per
/// iteration. Points per second over copies:1 is the ceiling of demo_pipeline_simd_threads.
void demo_pipeline_simd_copies(benchmark::State& state) {
    const auto copies = static_cast<std::size_t>(state.range(0));
    const std::size_t points = std::size_t(tile_size) * tile_size;
    std::vector<std::vector<float>> out(copies, std::vector<float>(points));
    const gorge::tile_settings<float> settings = demo_tile_settings();
    gorge::tile_sampling<float> sampling;
    sampling.spacing = glm::vec2(tile_spacing);
    const auto fill = [&](std::size_t c) {
        gorge::tile_buffers<float> buffers;
        buffers.height = gorge::grid_view<float>(out[c].data(), tile_size, tile_size);
        gorge::erode_tile(demo_field<>{}, sampling, 0, 0, buffers, settings);
    };
    for (auto _ : state) {
        std::vector<std::thread> helpers;
        for (std::size_t c = 1; c < copies; ++c) helpers.emplace_back(fill, c);
        fill(0);
        for (std::thread& t : helpers) t.join();
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(copies) * tile_points);
}
BENCHMARK(demo_pipeline_simd_copies)->ArgName("copies")->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
