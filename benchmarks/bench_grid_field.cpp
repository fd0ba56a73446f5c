// Per-point cost of gorge::grid_field (a heightmap as a field, Catmull-Rom bicubic with its
// gradient) on a 512 x 512 tile of points (items_per_second is points per second), one thread.
// The heightmap is 1024 x 1024 (4 MiB of float); "downsample" spreads the tile over the whole
// map (about 2 cells between points, every point a fresh 4 x 4 stencil), "upsample" over a
// 256 x 256 corner (half a cell between points, neighbours share cache lines). The *_simd
// variants evaluate gorge::simd_batch_t batches of consecutive points (gathers); the *_double
// variants use a double heightmap and double points.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include <gorge/grid/grid_field.hpp>
#include <gorge/noise/gradient_noise.hpp>
#include <gorge/simd/simd.hpp>

namespace {

constexpr std::ptrdiff_t map_size = 1024;
constexpr int tile_size = 512;
constexpr std::int64_t tile_points = std::int64_t(tile_size) * tile_size;

/// A 1024^2 fBm heightmap, placed on [0, 1023]^2 (unit cells).
template <class S>
const gorge::grid<S>& heightmap() {
    static const gorge::grid<S> map = [] {
        gorge::grid<S> g(map_size, map_size);
        gorge::fbm_params<double> params{1.0 / 64.0, 6, 2.0, 0.5};
        for (std::ptrdiff_t y = 0; y < map_size; ++y)
            for (std::ptrdiff_t x = 0; x < map_size; ++x)
                g(x, y) = S(gorge::fbm(glm::dvec2(double(x), double(y)), params, 3u).x);
        return g;
    }();
    return map;
}

/// Distance between tile points, in cells.
enum class coverage { downsample, upsample };
template <class S>
S spacing_of(coverage c) {
    return c == coverage::downsample ? S(map_size - 1) / S(tile_size) : S(0.5);
}

template <class S>
void run_scalar(benchmark::State& state, coverage c) {
    const gorge::grid_field<S> field(heightmap<S>());
    const S spacing = spacing_of<S>(c);
    std::vector<S> out(static_cast<std::size_t>(tile_points));
    for (auto _ : state) {
        for (int y = 0; y < tile_size; ++y)
            for (int x = 0; x < tile_size; ++x) {
                const glm::vec<3, S> v = field(glm::vec<2, S>(S(x) * spacing, S(y) * spacing));
                out[std::size_t(y) * tile_size + std::size_t(x)] = v.x + v.y + v.z;
            }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * tile_points);
}

template <class S>
void run_simd(benchmark::State& state, coverage c) {
    using B = gorge::simd_batch_t<S>;
    using ops = gorge::detail::value_ops<B>;
    constexpr int lanes = int(gorge::simd_lanes<S>());
    static_assert(tile_size % lanes == 0, "tile rows hold whole batches");
    const gorge::grid_field<S> field(heightmap<S>());
    const S spacing = spacing_of<S>(c);
    S offsets[lanes];
    for (int i = 0; i < lanes; ++i) offsets[i] = S(i) * spacing;
    const B lane_offset = ops::load(offsets);
    std::vector<S> out(static_cast<std::size_t>(tile_points));
    for (auto _ : state) {
        for (int y = 0; y < tile_size; ++y)
            for (int x = 0; x < tile_size; x += lanes) {
                const glm::vec<2, B> p(B(S(x) * spacing) + lane_offset, B(S(y) * spacing));
                const glm::vec<3, B> v = field(p);
                ops::store(v.x + v.y + v.z, &out[std::size_t(y) * tile_size + std::size_t(x)]);
            }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * tile_points);
    state.counters["lanes"] = lanes;
}

void grid_field_downsample(benchmark::State& s) { run_scalar<float>(s, coverage::downsample); }
void grid_field_downsample_simd(benchmark::State& s) { run_simd<float>(s, coverage::downsample); }
void grid_field_upsample(benchmark::State& s) { run_scalar<float>(s, coverage::upsample); }
void grid_field_upsample_simd(benchmark::State& s) { run_simd<float>(s, coverage::upsample); }
void grid_field_downsample_double(benchmark::State& s) { run_scalar<double>(s, coverage::downsample); }
void grid_field_downsample_double_simd(benchmark::State& s) { run_simd<double>(s, coverage::downsample); }

}  // namespace

BENCHMARK(grid_field_downsample)->Unit(benchmark::kMillisecond);
BENCHMARK(grid_field_downsample_simd)->Unit(benchmark::kMillisecond);
BENCHMARK(grid_field_upsample)->Unit(benchmark::kMillisecond);
BENCHMARK(grid_field_upsample_simd)->Unit(benchmark::kMillisecond);
BENCHMARK(grid_field_downsample_double)->Unit(benchmark::kMillisecond);
BENCHMARK(grid_field_downsample_double_simd)->Unit(benchmark::kMillisecond);
