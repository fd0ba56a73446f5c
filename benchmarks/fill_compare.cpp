// fill_compare: the depression fills side by side in one process, interleaved, so that a machine
// whose speed drifts between runs (a shared virtual machine) still gives fair ratios.
//
//   fill_compare MAP REPS SIDE... [-- THREADS...]
//
//   MAP      pitted or smooth (benchmarks/peers/drainage_maps.hpp: fBm with and without white noise)
//   REPS     rounds; each round runs every fill on every size once, and the median round is shown
//   SIDE     map sides (square maps); the first is the base of the cost-per-cell column
//   THREADS  thread counts for the tiled fills (detail::run_tiled_priority_flood and
//            detail::run_tiled_epsilon_fill with 1024^2 tiles); without them only one thread
//
// The fills: the whole-map plain flood (detail::run_whole_map_flood), the tiled plain fill on each
// thread count, and the epsilon fill with and without its statistics (fill_options::
// epsilon_statistics), as one flood (detail::run_epsilon_fill without tiles) and in tiles on each
// thread count; and each fill as its public function runs it on one thread with the default
// options (one flood, or tiles on a map of 4096^2 cells or more: the cost
// per cell a caller sees). Each line gives M cells/s (median and best), the cost per cell against
// the first size, and an FNV-1a hash of the surface: the plain fills must agree, and so must the
// epsilon fills.
//
// Build (a Release build of the benchmarks builds it too):
//   g++ -O3 -DNDEBUG -std=c++17 -march=native -pthread -Iinclude -Ibenchmarks benchmarks/fill_compare.cpp -o fill_compare
//   taskset -c 1 ./fill_compare pitted 3 1024 8192
//   ./fill_compare pitted 3 8192 -- 1 2 4 8 16
//
// SPDX-License-Identifier: MPL-2.0
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gorge/drainage/depression_fill.hpp>

#include "peers/drainage_maps.hpp"

namespace {

struct fill_run {
    std::string name;
    std::function<void(gorge::grid<float>&)> fill;
};

std::uint64_t surface_hash(const gorge::grid<float>& g) {
    constexpr std::uint64_t fnv_offset = 1469598103934665603ull, fnv_prime = 1099511628211ull;
    std::uint64_t h = fnv_offset;
    for (std::size_t i = 0; i < g.size(); ++i) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, g.data() + i, sizeof bits);
        h = (h ^ bits) * fnv_prime;
    }
    return h;
}

/// "1 thread", "4 threads".
std::string thread_count(unsigned t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); }

int usage() {
    std::fprintf(stderr, "usage: fill_compare pitted|smooth REPS SIDE... [-- THREADS...]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) return usage();
    const std::string map = argv[1];
    if (map != "pitted" && map != "smooth") return usage();
    const int reps = std::atoi(argv[2]);
    if (reps < 1) return usage();
    std::vector<long> sides;
    std::vector<unsigned> threads;
    bool after_dashes = false;
    for (int i = 3; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) {
            after_dashes = true;
            continue;
        }
        const long v = std::atol(argv[i]);
        if (v < 1) return usage();
        if (after_dashes)
            threads.push_back(static_cast<unsigned>(v));
        else
            sides.push_back(v);
    }
    if (sides.empty()) return usage();
    if (threads.empty()) threads.push_back(1);

    std::vector<fill_run> runs;
    runs.push_back({"plain, whole map", [](gorge::grid<float>& g) {
                        gorge::detail::run_whole_map_flood<float>(g.view(), gorge::fill_options<float>(), "fill_compare");
                    }});
    for (const unsigned t : threads)
        runs.push_back({"plain, tiles, " + thread_count(t), [t](gorge::grid<float>& g) {
                            gorge::fill_options<float> o;
                            o.threads = t;
                            gorge::detail::run_tiled_priority_flood<float>(g.view(), o, "fill_compare",
                                                                           gorge::detail::tiled_fill_tile_side);
                        }});
    runs.push_back({"plain, as fill_depressions runs it", [](gorge::grid<float>& g) {
                        gorge::fill_depressions<float>(g.view(), gorge::fill_options<float>());
                    }});
    for (const bool statistics : {true, false}) {
        const std::string what = statistics ? ", statistics" : ", no statistics";
        runs.push_back({"epsilon, as fill_depressions_epsilon runs it" + what, [statistics](gorge::grid<float>& g) {
                            gorge::fill_options<float> o;
                            o.epsilon_statistics = statistics;
                            gorge::fill_depressions_epsilon<float>(g.view(), o);
                        }});
        runs.push_back({"epsilon, whole map" + what, [statistics](gorge::grid<float>& g) {
                            gorge::fill_options<float> o;
                            o.epsilon_statistics = statistics;
                            gorge::detail::run_epsilon_fill<float>(g.view(), o, "fill_compare", false);
                        }});
        for (const unsigned t : threads)
            runs.push_back({"epsilon, tiles, " + thread_count(t) + what,
                            [statistics, t](gorge::grid<float>& g) {
                                gorge::fill_options<float> o;
                                o.epsilon_statistics = statistics;
                                o.threads = t;
                                gorge::detail::run_tiled_epsilon_fill<float>(g.view(), o, "fill_compare",
                                                                             gorge::detail::tiled_fill_tile_side);
                            }});
    }

    const bool smooth = map == "smooth";
    std::vector<std::vector<double>> seconds(runs.size() * sides.size());
    std::vector<std::uint64_t> hashes(seconds.size());
    for (int r = 0; r < reps; ++r)
        for (std::size_t s = 0; s < sides.size(); ++s) {
            const gorge::grid<float>& input = smooth ? gorge_bench::smooth_map(sides[s]) : gorge_bench::pitted_map(sides[s]);
            for (std::size_t k = 0; k < runs.size(); ++k) {
                gorge::grid<float> g = input;
                const auto start = std::chrono::steady_clock::now();
                runs[k].fill(g);
                const auto stop = std::chrono::steady_clock::now();
                const std::size_t at = k * sides.size() + s;
                seconds[at].push_back(std::chrono::duration<double>(stop - start).count());
                hashes[at] = surface_hash(g);
            }
        }
    for (std::size_t k = 0; k < runs.size(); ++k)
        for (std::size_t s = 0; s < sides.size(); ++s) {
            std::vector<double>& t = seconds[k * sides.size() + s];
            std::sort(t.begin(), t.end());
            const double cells = double(sides[s]) * double(sides[s]);
            const double median = cells / t[t.size() / 2] / 1e6, best = cells / t.front() / 1e6;
            std::vector<double>& first = seconds[k * sides.size()];
            const double first_cost = first[first.size() / 2] / (double(sides[0]) * double(sides[0]));
            std::printf("%-6s %6ld  %-58s %8.2f M cells/s (best %8.2f)  cost per cell %5.2fx  hash %016llx\n", map.c_str(),
                        sides[s], runs[k].name.c_str(), median, best, t[t.size() / 2] / cells / first_cost,
                        static_cast<unsigned long long>(hashes[k * sides.size() + s]));
        }
    return 0;
}
