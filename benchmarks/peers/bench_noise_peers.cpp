// Noise throughput next to FastNoise2, one thread, one process: 5-octave fBm (lacunarity 2,
// gain 0.5) over a 1024 x 1024 grid at frequency 0.01 (sample spacing 1), points per second.
//   gorge_fbm_value/simd        gorge::fractal_sum_field heights only (evaluate_tile's value path)
//   gorge_fbm_gradient/simd     the same field with its gradient (height, d/dx, d/dy)
//   gorge_fbm_value_simplex     the fractal over simplex noise, heights only
//   gorge_fbm_*_prime_mix       the same with the fast exact hash (gorge::prime_mix_hash)
//   gorge_fbm_*_prime_xor       the same with the cheapest exact hash (gorge::prime_xor_hash)
//   gorge_fbm_*_perlin          the fractal over perlin noise (table gradients, prime_xor_hash):
//                               the same kind of noise as FastNoise2's Perlin
//   fastnoise2_perlin_fbm/F     FastNoise2 FractalFBm over Perlin, heights only, feature set F
//   fastnoise2_simplex_fbm/F    the same over Simplex
// F: 0 = the best the CPU offers (FastSIMD's default), 1 = at most AVX2, 2 = at most AVX-512.
// Run with --benchmark_enable_random_interleaving=true --benchmark_repetitions=N so that the
// contenders alternate over time (this machine's speed drifts), and compare medians.
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include <FastNoise/FastNoise.h>

#include <gorge/noise/field.hpp>
#include <gorge/noise/perlin_noise.hpp>
#include <gorge/noise/simplex.hpp>
#include <gorge/simd/tile.hpp>

namespace {

constexpr int grid_side = 1024;
constexpr float grid_frequency = 0.01f;
constexpr int grid_octaves = 5;
constexpr float grid_lacunarity = 2.0f;
constexpr float grid_gain = 0.5f;
constexpr std::int64_t grid_points = std::int64_t(grid_side) * grid_side;

gorge::fbm_params<float> fbm() {
    gorge::fbm_params<float> p;
    p.frequency = grid_frequency;
    p.octaves = grid_octaves;
    p.lacunarity = grid_lacunarity;
    p.gain = grid_gain;
    return p;
}

template <class Field>
void run_gorge(benchmark::State& state, const Field& field, bool gradients) {
    gorge::grid<float> h(grid_side, grid_side), gx, gy;
    gorge::tile_buffers<float> out;
    out.height = h.view();
    if (gradients) {
        gx = gorge::grid<float>(grid_side, grid_side);
        gy = gorge::grid<float>(grid_side, grid_side);
        out.gradient_x = gx.view();
        out.gradient_y = gy.view();
    }
    const gorge::tile_sampling<float> sampling{};  // spacing 1: the frequency is the fractal's
    for (auto _ : state) {
        gorge::evaluate_tile(field, sampling, 0, 0, out, 1);
        benchmark::DoNotOptimize(h.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * grid_points);
}

void gorge_fbm_value(benchmark::State& state) { run_gorge(state, gorge::fractal_sum_field<float>(fbm(), 1337u), false); }
void gorge_fbm_gradient(benchmark::State& state) { run_gorge(state, gorge::fractal_sum_field<float>(fbm(), 1337u), true); }
void gorge_fbm_value_prime_mix(benchmark::State& state) {
    run_gorge(state, gorge::fractal_sum_field<float, gorge::gradient_basis<gorge::prime_mix_hash>>(fbm(), 1337u), false);
}
void gorge_fbm_gradient_prime_mix(benchmark::State& state) {
    run_gorge(state, gorge::fractal_sum_field<float, gorge::gradient_basis<gorge::prime_mix_hash>>(fbm(), 1337u), true);
}
void gorge_fbm_value_prime_xor(benchmark::State& state) {
    run_gorge(state, gorge::fractal_sum_field<float, gorge::gradient_basis<gorge::prime_xor_hash>>(fbm(), 1337u), false);
}
void gorge_fbm_gradient_prime_xor(benchmark::State& state) {
    run_gorge(state, gorge::fractal_sum_field<float, gorge::gradient_basis<gorge::prime_xor_hash>>(fbm(), 1337u), true);
}
void gorge_fbm_value_perlin(benchmark::State& state) {
    run_gorge(state, gorge::fractal_sum_field<float, gorge::perlin_basis<>>(fbm(), 1337u), false);
}
void gorge_fbm_gradient_perlin(benchmark::State& state) {
    run_gorge(state, gorge::fractal_sum_field<float, gorge::perlin_basis<>>(fbm(), 1337u), true);
}
void gorge_fbm_value_simplex(benchmark::State& state) {
    run_gorge(state, gorge::fractal_sum_field<float, gorge::simplex_basis<>>(fbm(), 1337u), false);
}

FastSIMD::FeatureSet feature_set(std::int64_t which) {
    if (which == 1) return FastSIMD::FeatureSet::AVX2;
    if (which == 2) return FastSIMD::FeatureSet::AVX512;
    return FastSIMD::FeatureSet::Max;
}

template <class Source>
void run_fastnoise2(benchmark::State& state) {
    const FastSIMD::FeatureSet level = feature_set(state.range(0));
    auto source = FastNoise::New<Source>(level);
    auto fractal = FastNoise::New<FastNoise::FractalFBm>(level);
    fractal->SetSource(source);
    fractal->SetOctaveCount(grid_octaves);
    fractal->SetLacunarity(grid_lacunarity);
    fractal->SetGain(grid_gain);
    std::vector<float> out(static_cast<std::size_t>(grid_points));
    for (auto _ : state) {
        fractal->GenUniformGrid2D(out.data(), 0.0f, 0.0f, grid_side, grid_side, grid_frequency, grid_frequency, 1337);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * grid_points);
    state.SetLabel(fractal->GetActiveFeatureSet() == FastSIMD::FeatureSet::AVX512 ? "AVX-512"
                   : fractal->GetActiveFeatureSet() == FastSIMD::FeatureSet::AVX2 ? "AVX2"
                                                                                    : "other");
}
void fastnoise2_perlin_fbm(benchmark::State& state) { run_fastnoise2<FastNoise::Perlin>(state); }
void fastnoise2_simplex_fbm(benchmark::State& state) { run_fastnoise2<FastNoise::Simplex>(state); }

BENCHMARK(gorge_fbm_value)->Unit(benchmark::kMillisecond);
BENCHMARK(gorge_fbm_gradient)->Unit(benchmark::kMillisecond);
BENCHMARK(gorge_fbm_value_prime_mix)->Unit(benchmark::kMillisecond);
BENCHMARK(gorge_fbm_gradient_prime_mix)->Unit(benchmark::kMillisecond);
BENCHMARK(gorge_fbm_value_prime_xor)->Unit(benchmark::kMillisecond);
BENCHMARK(gorge_fbm_gradient_prime_xor)->Unit(benchmark::kMillisecond);
BENCHMARK(gorge_fbm_value_perlin)->Unit(benchmark::kMillisecond);
BENCHMARK(gorge_fbm_gradient_perlin)->Unit(benchmark::kMillisecond);
BENCHMARK(gorge_fbm_value_simplex)->Unit(benchmark::kMillisecond);
/// The FastNoise2 runs per feature set: AVX-512 only where the CPU has it (FastNoise2 would run
/// its AVX-512 code anyway and stop on an illegal instruction).
void feature_sets(benchmark::internal::Benchmark* b) {
    b->Arg(0)->Arg(1);
#if defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f")) b->Arg(2);
#endif
}
BENCHMARK(fastnoise2_perlin_fbm)->Apply(feature_sets)->Unit(benchmark::kMillisecond);
BENCHMARK(fastnoise2_simplex_fbm)->Apply(feature_sets)->Unit(benchmark::kMillisecond);

}  // namespace
