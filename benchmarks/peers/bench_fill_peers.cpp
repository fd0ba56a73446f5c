// Depression filling next to RichDEM, one thread, one process, cells per second of CPU time:
//   gorge_fill/M/N                  gorge::fill_depressions (Priority-Flood+, flat lakes)
//   richdem_wei2018/M/N             RichDEM's PriorityFlood_Wei2018 (the same surface)
//   gorge_fill_epsilon/M/N          gorge::fill_depressions_epsilon (every cell drains)
//   gorge_fill_epsilon_without_statistics/M/N
//                                   the same with fill_options::epsilon_statistics = false (the
//                                   same surface, without max_gradient_rise and overtaken_cells,
//                                   which RichDEM does not compute)
//   richdem_barnes2014_epsilon/M/N  RichDEM's PriorityFloodEpsilon_Barnes2014<D8>
// M: 0 = fBm plus white noise (about half the cells in depressions), 1 = the fBm alone (see
// drainage_maps.hpp); N: the map's side (1024, 4096 or 8192). Each iteration fills a fresh copy of
// the map (the copy is not timed).
// Before the first timing of a map, the results are checked once: the two plain fills must agree
// cell for cell, and on both epsilon fills every cell off the map edge must have a strictly lower
// D8 neighbour (so a strictly descending path leads from every cell to the edge). A failed check
// stops the benchmark with an error.
// Run with --benchmark_enable_random_interleaving=true --benchmark_repetitions=N so that the
// contenders alternate over time (this machine's speed drifts), and compare medians.
// Paired, for machines whose speed changes within a run (a shared host's phases):
//   paired_plain/M/N                gorge_fill and richdem_wei2018 called in turn
//   paired_epsilon/M/N              gorge_fill_epsilon, gorge_fill_epsilon_without_statistics and
//                                   richdem_barnes2014_epsilon called in turn
// Each iteration fills one fresh copy with each contender, timed apart (process CPU time), and the
// counters give the median over the iterations of RichDEM's time over gorge's (a phase that
// lasts longer than one iteration slows both alike) and each contender's median in ms.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include <richdem/depressions/Barnes2014.hpp>
#include <richdem/depressions/Wei2018.hpp>

#include <gorge/drainage/depression_fill.hpp>

#include "../median.hpp"
#include "drainage_maps.hpp"

namespace {

using gorge_bench::median;

const gorge::grid<float>& fill_map(std::int64_t kind, std::int64_t side) {
    return kind == 0 ? gorge_bench::pitted_map(side) : gorge_bench::smooth_map(side);
}

/// RichDEM's raster of the same heights. Its no-data value is set to -infinity, which no cell holds.
richdem::Array2D<float> richdem_copy(const gorge::grid<float>& g) {
    richdem::Array2D<float> a(static_cast<std::int32_t>(g.width()), static_cast<std::int32_t>(g.height()), 0.0f);
    a.setNoData(-std::numeric_limits<float>::infinity());
    std::memcpy(a.data(), g.data(), g.size() * sizeof(float));
    return a;
}

/// True when every cell off the map edge has a strictly lower D8 neighbour.
bool drains_everywhere(const float* z, std::ptrdiff_t w, std::ptrdiff_t h) {
    for (std::ptrdiff_t y = 1; y + 1 < h; ++y)
        for (std::ptrdiff_t x = 1; x + 1 < w; ++x) {
            const float c = z[y * w + x];
            bool lower = false;
            for (std::ptrdiff_t dy = -1; dy <= 1 && !lower; ++dy)
                for (std::ptrdiff_t dx = -1; dx <= 1 && !lower; ++dx)
                    lower = z[(y + dy) * w + x + dx] < c;
            if (!lower) return false;
        }
    return true;
}

/// The check described at the top, once per map; returns an empty string or what failed.
const std::string& check_once(std::int64_t kind, std::int64_t side) {
    static std::map<std::pair<std::int64_t, std::int64_t>, std::string> done;
    const auto key = std::make_pair(kind, side);
    auto it = done.find(key);
    if (it != done.end()) return it->second;
    const gorge::grid<float>& original = fill_map(kind, side);
    std::string failure;
    {
        gorge::grid<float> g = original;
        gorge::fill_depressions(g);
        richdem::Array2D<float> r = richdem_copy(original);
        richdem::PriorityFlood_Wei2018(r);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < g.size(); ++i) differ += g.data()[i] != r.data()[i] ? 1u : 0u;
        if (differ != 0) failure += "plain fills differ in " + std::to_string(differ) + " cells; ";
    }
    {
        gorge::grid<float> g = original;
        gorge::fill_depressions_epsilon(g);
        if (!drains_everywhere(g.data(), g.width(), g.height())) failure += "gorge epsilon fill leaves an undrained cell; ";
        richdem::Array2D<float> r = richdem_copy(original);
        richdem::PriorityFloodEpsilon_Barnes2014<richdem::Topology::D8>(r);
        if (!drains_everywhere(r.data(), g.width(), g.height())) failure += "RichDEM epsilon fill leaves an undrained cell; ";
    }
    return done.emplace(key, failure).first->second;
}

/// The benchmark's map (ranges 0 and 1: kind and side), or null when check_once failed on it,
/// after telling the state so.
const gorge::grid<float>* checked_map(benchmark::State& state) {
    const std::string& failure = check_once(state.range(0), state.range(1));
    if (!failure.empty()) {
        state.SkipWithError(failure.c_str());
        return nullptr;
    }
    return &fill_map(state.range(0), state.range(1));
}

/// Times fill(work) on copies of the map, work being the library's own array (made by `copy` from
/// the map once; refilled from the map before each iteration, outside the clock).
template <class Copy, class Fill>
void run_fill(benchmark::State& state, Copy&& copy, Fill&& fill) {
    const gorge::grid<float>* const checked = checked_map(state);
    if (checked == nullptr) return;
    const gorge::grid<float>& original = *checked;
    auto work = copy(original);
    for (auto _ : state) {
        state.PauseTiming();
        std::memcpy(work.data(), original.data(), original.size() * sizeof(float));
        state.ResumeTiming();
        fill(work);
        benchmark::DoNotOptimize(work.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(original.size()));
}

template <class Fill>
void run_gorge(benchmark::State& state, Fill&& fill) {
    run_fill(state, [](const gorge::grid<float>& g) { return g; }, fill);
}

template <class Fill>
void run_richdem(benchmark::State& state, Fill&& fill) {
    run_fill(state, [](const gorge::grid<float>& g) { return richdem_copy(g); }, fill);
}

void gorge_fill(benchmark::State& state) {
    run_gorge(state, [](gorge::grid<float>& g) { gorge::fill_depressions(g); });
}
void richdem_wei2018(benchmark::State& state) {
    run_richdem(state, [](richdem::Array2D<float>& a) { richdem::PriorityFlood_Wei2018(a); });
}
void gorge_fill_epsilon(benchmark::State& state) {
    run_gorge(state, [](gorge::grid<float>& g) { gorge::fill_depressions_epsilon(g); });
}
void gorge_fill_epsilon_without_statistics(benchmark::State& state) {
    gorge::fill_options<float> options;
    options.epsilon_statistics = false;
    run_gorge(state, [&](gorge::grid<float>& g) { gorge::fill_depressions_epsilon(g, options); });
}
void richdem_barnes2014_epsilon(benchmark::State& state) {
    run_richdem(state, [](richdem::Array2D<float>& a) {
        richdem::PriorityFloodEpsilon_Barnes2014<richdem::Topology::D8>(a);
    });
}

void fill_sizes(benchmark::internal::Benchmark* b) {
    b->ArgNames({"map", "side"});
    for (std::int64_t kind : {0, 1})
        for (std::int64_t side : {1024, 4096, 8192}) b->Args({kind, side});
    b->Unit(benchmark::kMillisecond);  // CPU time: the figures hold on a shared machine too
}

/// CPU seconds that fill(work) takes on `work` freshly copied from `original`.
template <class Work, class Fill>
double timed_fill(const gorge::grid<float>& original, Work& work, Fill&& fill) {
    std::memcpy(work.data(), original.data(), original.size() * sizeof(float));
    const std::clock_t start = std::clock();
    fill(work);
    benchmark::DoNotOptimize(work.data());
    benchmark::ClobberMemory();
    return double(std::clock() - start) / double(CLOCKS_PER_SEC);
}

/// Runs the gorge fills and then the RichDEM fill once per iteration (see the header comment).
/// Counters: peer + "_over_" + names[i], the median of RichDEM's time over gorge fill i's; names[i]
/// + "_ms" and peer + "_ms", the median times.
template <std::size_t N, class RichdemFill>
void run_paired(benchmark::State& state, const char* const (&names)[N],
                const std::function<void(gorge::grid<float>&)> (&gorge_fills)[N], const char* peer,
                RichdemFill&& richdem_fill) {
    const gorge::grid<float>* const checked = checked_map(state);
    if (checked == nullptr) return;
    const gorge::grid<float>& original = *checked;
    gorge::grid<float> g = original;
    richdem::Array2D<float> r = richdem_copy(original);
    std::vector<double> gorge_seconds[N], richdem_seconds, ratios[N];
    for (auto _ : state) {
        for (std::size_t i = 0; i < N; ++i) gorge_seconds[i].push_back(timed_fill(original, g, gorge_fills[i]));
        richdem_seconds.push_back(timed_fill(original, r, richdem_fill));
        for (std::size_t i = 0; i < N; ++i) ratios[i].push_back(richdem_seconds.back() / gorge_seconds[i].back());
    }
    constexpr double ms = 1e3;
    for (std::size_t i = 0; i < N; ++i) {
        state.counters[std::string(peer) + "_over_" + names[i]] = median(ratios[i]);
        state.counters[std::string(names[i]) + "_ms"] = ms * median(gorge_seconds[i]);
    }
    state.counters[std::string(peer) + "_ms"] = ms * median(richdem_seconds);
}

void paired_plain(benchmark::State& state) {
    const char* const names[] = {"gorge"};
    const std::function<void(gorge::grid<float>&)> fills[] = {[](gorge::grid<float>& g) { gorge::fill_depressions(g); }};
    run_paired(state, names, fills, "wei2018", [](richdem::Array2D<float>& a) { richdem::PriorityFlood_Wei2018(a); });
}
void paired_epsilon(benchmark::State& state) {
    const char* const names[] = {"gorge", "gorge_without_statistics"};
    gorge::fill_options<float> without;
    without.epsilon_statistics = false;
    const std::function<void(gorge::grid<float>&)> fills[] = {
        [](gorge::grid<float>& g) { gorge::fill_depressions_epsilon(g); },
        [&](gorge::grid<float>& g) { gorge::fill_depressions_epsilon(g, without); }};
    run_paired(state, names, fills, "barnes2014", [](richdem::Array2D<float>& a) {
        richdem::PriorityFloodEpsilon_Barnes2014<richdem::Topology::D8>(a);
    });
}

/// Pairs at each size: enough for a median at 1024^2 (a few seconds), fewer on the larger maps.
constexpr std::int64_t paired_iterations_1024 = 21, paired_iterations_large = 5;
void paired_1024(benchmark::internal::Benchmark* b) {
    b->ArgNames({"map", "side"});
    for (std::int64_t kind : {0, 1}) b->Args({kind, 1024});
    b->Iterations(paired_iterations_1024)->Unit(benchmark::kMillisecond);
}
void paired_large(benchmark::internal::Benchmark* b) {
    b->ArgNames({"map", "side"});
    for (std::int64_t kind : {0, 1})
        for (std::int64_t side : {4096, 8192}) b->Args({kind, side});
    b->Iterations(paired_iterations_large)->Unit(benchmark::kMillisecond);
}

BENCHMARK(gorge_fill)->Apply(fill_sizes);
BENCHMARK(richdem_wei2018)->Apply(fill_sizes);
BENCHMARK(gorge_fill_epsilon)->Apply(fill_sizes);
BENCHMARK(gorge_fill_epsilon_without_statistics)->Apply(fill_sizes);
BENCHMARK(richdem_barnes2014_epsilon)->Apply(fill_sizes);
BENCHMARK(paired_plain)->Apply(paired_1024);
BENCHMARK(paired_plain)->Apply(paired_large);
BENCHMARK(paired_epsilon)->Apply(paired_1024);
BENCHMARK(paired_epsilon)->Apply(paired_large);

}  // namespace
