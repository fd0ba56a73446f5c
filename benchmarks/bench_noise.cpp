// Per-point cost of the noise toolkit on a 512 x 512 tile (items_per_second is points per
// second), one thread: the base noises (perlin_noise with its default prime_xor hash), the fractals
// (6 octaves; fractal_sum6_perlin over perlin_basis), a warp, and the whole
// island recipe. The *_simd variants evaluate gorge::simd_float batches (gorge/simd/simd.hpp) of
// consecutive points along a row, the same kernels instantiated for the batch type.
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include <gorge/noise/field.hpp>
#include <gorge/noise/fractal.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/noise/gradient_noise.hpp>
#include <gorge/noise/perlin_noise.hpp>
#include <gorge/simd/simd.hpp>
#include <gorge/noise/simplex.hpp>
#include <gorge/noise/value_noise.hpp>

namespace {

constexpr int tile_size = 512;
constexpr float tile_extent = 8.0f;  // a few dozen lattice cells across the tile
constexpr float tile_spacing = tile_extent / tile_size;
constexpr std::int64_t tile_points = std::int64_t(tile_size) * tile_size;

template <class F>
void run_scalar(benchmark::State& state, F&& f) {
    std::vector<float> out(static_cast<std::size_t>(tile_points));
    for (auto _ : state) {
        for (int y = 0; y < tile_size; ++y)
            for (int x = 0; x < tile_size; ++x)
                out[std::size_t(y) * tile_size + std::size_t(x)] = f(glm::vec2(float(x) * tile_spacing, float(y) * tile_spacing)).x;
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * tile_points);
}

template <class F>
void run_simd(benchmark::State& state, F&& f) {
    using B = gorge::simd_float;
    constexpr int lanes = int(gorge::simd_lanes<float>());
    static_assert(tile_size % lanes == 0, "tile rows hold whole batches");
    alignas(64) float offsets[lanes];
    for (int i = 0; i < lanes; ++i) offsets[i] = float(i) * tile_spacing;
    B lane_offset;
#if GORGE_HAS_XSIMD
    lane_offset = B::load_unaligned(offsets);
#else
    lane_offset = offsets[0];
#endif
    std::vector<float> out(static_cast<std::size_t>(tile_points));
    for (auto _ : state) {
        for (int y = 0; y < tile_size; ++y)
            for (int x = 0; x < tile_size; x += lanes) {
                const glm::vec<2, B> p(B(float(x) * tile_spacing) + lane_offset, B(float(y) * tile_spacing));
                const B v = f(p).x;
#if GORGE_HAS_XSIMD
                v.store_unaligned(&out[std::size_t(y) * tile_size + std::size_t(x)]);
#else
                out[std::size_t(y) * tile_size + std::size_t(x)] = v;
#endif
            }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * tile_points);
    state.counters["lanes"] = lanes;
}

const gorge::fbm_params<float> octaves6{1.0f, 6, 2.0f, 0.5f};

struct gradient_f { template <class T> glm::vec<3, T> operator()(glm::vec<2, T> p) const { return gorge::gradient_noise(p, 1u); } };
struct value_f { template <class T> glm::vec<3, T> operator()(glm::vec<2, T> p) const { return gorge::value_noise(p, 1u); } };
struct simplex_f { template <class T> glm::vec<3, T> operator()(glm::vec<2, T> p) const { return gorge::simplex_noise(p, 1u); } };
struct perlin_f { template <class T> glm::vec<3, T> operator()(glm::vec<2, T> p) const { return gorge::perlin_noise(p, 1u); } };
struct fbm_f { template <class T> glm::vec<3, T> operator()(glm::vec<2, T> p) const { return gorge::fractal_sum(p, octaves6, 1u); } };
struct perlin_fbm_f {
    template <class T> glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        return gorge::fractal_sum<gorge::perlin_basis<>>(p, octaves6, 1u);
    }
};
struct ridged_f {
    template <class T> glm::vec<3, T> operator()(glm::vec<2, T> p) const { return gorge::ridged(p, gorge::ridged_params<float>{}, 1u); }
};
struct damped_f {
    template <class T> glm::vec<3, T> operator()(glm::vec<2, T> p) const { return gorge::damped_fbm(p, gorge::damped_fbm_params<float>{}, 1u); }
};

void gradient_noise_scalar(benchmark::State& s) { run_scalar(s, gradient_f{}); }
void value_noise_scalar(benchmark::State& s) { run_scalar(s, value_f{}); }
void simplex_noise_scalar(benchmark::State& s) { run_scalar(s, simplex_f{}); }
void perlin_noise_scalar(benchmark::State& s) { run_scalar(s, perlin_f{}); }
void fractal_sum6_scalar(benchmark::State& s) { run_scalar(s, fbm_f{}); }
void ridged6_scalar(benchmark::State& s) { run_scalar(s, ridged_f{}); }
void damped_fbm6_scalar(benchmark::State& s) { run_scalar(s, damped_f{}); }
void warp_fbm6_scalar(benchmark::State& s) {
    const gorge::fractal_sum_field<float> f(octaves6, 1u), wx(octaves6, 2u), wy(octaves6, 3u);
    run_scalar(s, gorge::warp(f, wx, wy, 0.5f));
}
void island_recipe_scalar(benchmark::State& s) {
    run_scalar(s, gorge::island_height_field(gorge::island_params<float>{}, 1u));
}
void simplex_noise_simd(benchmark::State& s) { run_simd(s, simplex_f{}); }
void perlin_noise_simd(benchmark::State& s) { run_simd(s, perlin_f{}); }
void fractal_sum6_simd(benchmark::State& s) { run_simd(s, fbm_f{}); }
void fractal_sum6_perlin_simd(benchmark::State& s) { run_simd(s, perlin_fbm_f{}); }
void damped_fbm6_simd(benchmark::State& s) { run_simd(s, damped_f{}); }
void island_recipe_simd(benchmark::State& s) {
    run_simd(s, gorge::island_height_field(gorge::island_params<float>{}, 1u));
}

}  // namespace

BENCHMARK(gradient_noise_scalar)->Unit(benchmark::kMillisecond);
BENCHMARK(value_noise_scalar)->Unit(benchmark::kMillisecond);
BENCHMARK(simplex_noise_scalar)->Unit(benchmark::kMillisecond);
BENCHMARK(perlin_noise_scalar)->Unit(benchmark::kMillisecond);
BENCHMARK(fractal_sum6_scalar)->Unit(benchmark::kMillisecond);
BENCHMARK(ridged6_scalar)->Unit(benchmark::kMillisecond);
BENCHMARK(damped_fbm6_scalar)->Unit(benchmark::kMillisecond);
BENCHMARK(warp_fbm6_scalar)->Unit(benchmark::kMillisecond);
BENCHMARK(island_recipe_scalar)->Unit(benchmark::kMillisecond);
BENCHMARK(simplex_noise_simd)->Unit(benchmark::kMillisecond);
BENCHMARK(perlin_noise_simd)->Unit(benchmark::kMillisecond);
BENCHMARK(fractal_sum6_simd)->Unit(benchmark::kMillisecond);
BENCHMARK(fractal_sum6_perlin_simd)->Unit(benchmark::kMillisecond);
BENCHMARK(damped_fbm6_simd)->Unit(benchmark::kMillisecond);
BENCHMARK(island_recipe_simd)->Unit(benchmark::kMillisecond);
