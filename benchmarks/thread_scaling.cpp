// thread_scaling: how erode_tile and the tiled droplet schedule scale on this machine, next to
// what the machine itself allows, and the clock its cores run at.
//
//   thread_scaling THREADS ROUNDS
//   thread_scaling pairs ROUNDS
//   thread_scaling small THREADS
//   thread_scaling starts THREADS ROUNDS
//   thread_scaling droplets THREADS ROUNDS
//
// Every round runs each measurement below once, one after another, so that a machine whose speed
// drifts (a shared host) affects a round's figures alike; ratios are taken within a round and the
// medians over the rounds are printed.
//   clock          a chain of dependent register adds (one cycle each on x86-64) on one core alone,
//                  then on THREADS cores at once: the clock one busy core gets, and the slowest and
//                  median clock when THREADS cores are busy (x86-64 with GCC or Clang only)
//   FMAs           independent vector FMAs (the build's widest: AVX-512 or AVX2) on one core, then
//                  on THREADS cores at once, pinned: per cycle at the one-core clock, and the
//                  ceiling of purely vector-bound work on THREADS cores (x86-64 Linux only)
//   filter         the 512^2 erode_tile of a sloped plane on one thread (bench_filter's
//                  filter_simd): points per second, and cycles per point at the one-core clock (an
//                  upper bound where wide vector work lowers the clock)
//   copies         THREADS independent one-thread 512^2 demo tiles at once, one per std::thread
//                  (bench_filter's demo_pipeline_simd_copies): THREADS busy cores' work over one
//                  core's when the work is split evenly in advance (the slowest core decides; a
//                  schedule that balances as it goes can do better: see starts mode)
//   tile 512/2048  the demo tile on 1 and on THREADS threads (demo_pipeline_simd_threads), the 512^2
//                  one also on the THREADS threads of a gorge::thread_pool
//   droplets       1 M droplets on the 1024^2 benchmark map, tiled schedule, on 1 and on THREADS
//                  threads (bench_droplet's droplets_1024_mt); the maps must agree bit for bit
//   droplet copies THREADS serial runs at once of 1/THREADS of the droplets, each on its own copy
//                  of the map: what THREADS busy cores give droplet work split evenly in advance
//   droplet shares the same droplets in chunks of 8192 taken from a shared counter by THREADS
//                  threads, each on its own copy of the map: the load balanced as it goes
// pairs mode (x86-64 Linux, AVX2 with FMA or AVX-512): each cpu's vector FMA rate alone, then every
// pair of cpus at once, then all of them: two cpus that are one core's hardware threads share its
// vector units, which a virtual machine may not report; all at once shows what the vector units
// of every core give together (clock, power).
// small mode: the demo tile from 16^2 to 512^2, the epsilon fill from 32^2 to 2048^2, thermal
// erosion from 128^2 to 1024^2 and landscape evolution from 64^2 to 512^2 on one thread and on
// THREADS, medians of many calls: what small work gains or loses from threads.
// starts mode: when the last of THREADS workers of gorge::detail::run_workers begins, and the
// 512^2 demo tile on one thread, on THREADS threads started per call, on THREADS threads of a
// gorge::thread_pool, and on THREADS threads that are already running (started and spinning
// before the clock starts): what starting threads costs a tile, and what a pool wins back.
// droplets mode: the droplet shares and the tiled droplets alone, on 1 and THREADS threads, and
// tiled droplets on the same terrain at 2048^2 (4 M droplets: as many per cell).
// Issue 13 asks for at least 14x at 16 threads for tiles and tiled droplets.
//
// Build (a Release build of the benchmarks builds it too):
//   g++ -O3 -DNDEBUG -std=c++17 -march=native -pthread -Iinclude -Ibenchmarks benchmarks/thread_scaling.cpp -o thread_scaling
//   ./thread_scaling 16 5
//
// SPDX-License-Identifier: MPL-2.0
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include <gorge/drainage/depression_fill.hpp>
#include <gorge/erosion/droplet.hpp>
#include <gorge/erosion/landscape_evolution.hpp>
#include <gorge/erosion/thermal.hpp>
#include <gorge/simd/tile.hpp>
#include <gorge/thread_pool.hpp>

#include "droplet_workload.hpp"
#include "filter_workloads.hpp"
#include "median.hpp"
#include "peers/drainage_maps.hpp"

namespace {

using gorge_bench::median;

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Runs body(t) for t in [0, n) on n new threads, each first running prepare(t) (pinning itself,
/// say) and then waiting until all are ready, so that the bodies run at the same time. The
/// calling thread only waits: threads it starts later inherit nothing from these.
template <class Prepare, class Body>
void run_together(std::size_t n, const Prepare& prepare, const Body& body) {
    std::atomic<std::size_t> ready{0};
    const auto run = [&](std::size_t t) {
        prepare(t);
        ready.fetch_add(1);
        while (ready.load() < n) std::this_thread::yield();
        body(t);
    };
    std::vector<std::thread> workers;
    for (std::size_t t = 0; t < n; ++t) workers.emplace_back(run, t);
    for (std::thread& w : workers) w.join();
}

// ---------------------------------------------------------------------------------------------
// The clock
// ---------------------------------------------------------------------------------------------

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
constexpr bool can_count_cycles = true;
constexpr std::uint64_t adds_per_step = 64;       // dependent adds per loop step (one .rept block)
constexpr std::uint64_t clock_steps = 25'000'000;  // 1.6 G adds: about half a second at 3 GHz

/// GHz of the calling thread's core: dependent adds (one cycle of latency each) per nanosecond.
double measure_ghz() {
    // A register operand, not an immediate: some cores (Intel's Golden Cove) fold chains of
    // immediate adds while renaming and run them faster than one a cycle.
    std::uint64_t x = 0, one = 1;
    asm volatile("" : "+r"(one));
    const auto start = clock_type::now();
    for (std::uint64_t i = 0; i < clock_steps; ++i) asm volatile(".rept 64\n\tadd %1, %0\n\t.endr" : "+r"(x) : "r"(one));
    const double took = seconds_since(start);
    if (x != clock_steps * adds_per_step) std::abort();
    return double(x) / took * 1e-9;
}
#else
constexpr bool can_count_cycles = false;
double measure_ghz() { return 0.0; }
#endif

// ---------------------------------------------------------------------------------------------
// Vector throughput, and which cores share their vector units (pairs mode)
// ---------------------------------------------------------------------------------------------

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && defined(__linux__) && \
    (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
constexpr bool can_count_fma = true;
#if defined(__AVX512F__)
#define GORGE_BENCH_VREG(n) "%%zmm" #n
#else
#define GORGE_BENCH_VREG(n) "%%ymm" #n
#endif
#define GORGE_BENCH_ZERO(n) "vxorps %%xmm" #n ", %%xmm" #n ", %%xmm" #n "\n\t"
#define GORGE_BENCH_FMA(n) "vfmadd231ps " GORGE_BENCH_VREG(0) ", " GORGE_BENCH_VREG(1) ", " GORGE_BENCH_VREG(n) "\n\t"
constexpr std::uint64_t fma_per_step = 80;        // 8 rounds of 10 independent accumulators
constexpr std::uint64_t fma_steps = 1'000'000;    // 80 M FMAs: about 16 ms at 2 a cycle and 2.5 GHz

/// G vector FMA instructions per second on the calling thread's core: ten independent
/// accumulators (enough to hide a latency of 4 cycles at 2 a cycle), all of zeros (no denormals).
double measure_fma_rate() {
    const auto start = clock_type::now();
    for (std::uint64_t i = 0; i < fma_steps; ++i)
        asm volatile(GORGE_BENCH_ZERO(0) GORGE_BENCH_ZERO(1) GORGE_BENCH_ZERO(2) GORGE_BENCH_ZERO(3)
                     GORGE_BENCH_ZERO(4) GORGE_BENCH_ZERO(5) GORGE_BENCH_ZERO(6) GORGE_BENCH_ZERO(7)
                     GORGE_BENCH_ZERO(8) GORGE_BENCH_ZERO(9) GORGE_BENCH_ZERO(10) GORGE_BENCH_ZERO(11)
                     ".rept 8\n\t" GORGE_BENCH_FMA(2) GORGE_BENCH_FMA(3) GORGE_BENCH_FMA(4) GORGE_BENCH_FMA(5)
                     GORGE_BENCH_FMA(6) GORGE_BENCH_FMA(7) GORGE_BENCH_FMA(8) GORGE_BENCH_FMA(9)
                     GORGE_BENCH_FMA(10) GORGE_BENCH_FMA(11) ".endr"
                     :
                     :
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                       "xmm11");
    return double(fma_steps * fma_per_step) / seconds_since(start) * 1e-9;
}
#undef GORGE_BENCH_VREG
#undef GORGE_BENCH_ZERO
#undef GORGE_BENCH_FMA

/// Pins the calling thread to `cpu`; false when it cannot be.
bool pin_to(unsigned cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

/// The FMA rate of each cpu in `cpus`, all busy at once, each on its own pinned thread.
std::vector<double> fma_rates_on(const std::vector<unsigned>& cpus) {
    std::vector<double> rates(cpus.size());
    run_together(
        cpus.size(), [&](std::size_t t) { if (!pin_to(cpus[t])) std::abort(); },
        [&](std::size_t t) { rates[t] = measure_fma_rate(); });
    return rates;
}

/// pairs mode: each cpu's FMA rate alone, every pair's together, and all at once. Two cpus that
/// are one core's hardware threads (SMT siblings, which a virtual machine may not report) share
/// its vector units: together they get about the rate of one.
int run_pairs(int rounds) {
    const unsigned n = std::thread::hardware_concurrency();
    if (n < 2) {
        std::fprintf(stderr, "thread_scaling: pairs mode needs at least 2 cpus (found %u)\n", n);
        return 2;
    }
    std::vector<double> alone(n, 0.0);
    for (unsigned c = 0; c < n; ++c) {
        std::vector<double> runs;
        for (int r = 0; r < rounds; ++r) runs.push_back(fma_rates_on({c})[0]);
        alone[c] = median(runs);
        std::printf("cpu %2u alone: %.2f G FMA/s\n", c, alone[c]);
    }
    constexpr double shared_below = 0.75;  // a pair below this share of its two alone rates shares a core
    std::vector<double> shares;
    for (unsigned a = 0; a < n; ++a)
        for (unsigned b = a + 1; b < n; ++b) {
            std::vector<double> runs;
            for (int r = 0; r < rounds; ++r) {
                const std::vector<double> both = fma_rates_on({a, b});
                runs.push_back((both[0] + both[1]) / (alone[a] + alone[b]));
            }
            shares.push_back(median(runs));
            if (shares.back() < shared_below) std::printf("cpus %u and %u together: %.2f of their rates alone\n", a, b, shares.back());
        }
    if (!shares.empty()) {
        const auto [low, high] = std::minmax_element(shares.begin(), shares.end());
        std::printf("pairs: median %.2f of their rates alone (%.2f-%.2f)\n", median(shares), *low, *high);
    }
    std::vector<unsigned> all(n);
    for (unsigned c = 0; c < n; ++c) all[c] = c;
    double sum_alone = 0.0;
    for (const double a : alone) sum_alone += a;
    for (int r = 0; r < rounds; ++r) {
        const std::vector<double> rates = fma_rates_on(all);
        double sum = 0.0;
        for (const double v : rates) sum += v;
        std::printf("all %u at once: %.2f of their rates alone (%.2fx one cpu)\n", n, sum / sum_alone,
                    sum / (sum_alone / double(n)));
    }
    return 0;
}
#else
constexpr bool can_count_fma = false;
double measure_fma_rate() { return 0.0; }
std::vector<double> fma_rates_on(const std::vector<unsigned>& cpus) { return std::vector<double>(cpus.size(), 0.0); }
int run_pairs(int) {
    std::fprintf(stderr, "thread_scaling: pairs mode needs x86-64 Linux with AVX2 and FMA or AVX-512\n");
    return 2;
}
#endif

/// The clock of each of `threads` cores busy at once.
std::vector<double> measure_ghz_on(unsigned threads) {
    std::vector<double> ghz(threads);
    run_together(threads, [](std::size_t) {}, [&](std::size_t t) { ghz[t] = measure_ghz(); });
    return ghz;
}

// ---------------------------------------------------------------------------------------------
// The workloads
// ---------------------------------------------------------------------------------------------

constexpr int small_tile = 512, large_tile = 2048;

/// Seconds for one erode_tile of `field` over a side^2 tile at spacing 1/spacing_side (1/side
/// unless given).
template <class Field>
double time_tile(const Field& field, int side, const gorge::tile_settings<float>& settings, std::vector<float>& out,
                 int spacing_side = 0) {
    out.assign(std::size_t(side) * std::size_t(side), 0.0f);
    gorge::tile_sampling<float> sampling;
    sampling.spacing = glm::vec2(1.0f / float(spacing_side > 0 ? spacing_side : side));
    gorge::tile_buffers<float> buffers;
    buffers.height = gorge::grid_view<float>(out.data(), side, side);
    const auto start = clock_type::now();
    gorge::erode_tile(field, sampling, 0, 0, buffers, settings);
    return seconds_since(start);
}

/// Seconds for run(0), ..., run(copies - 1) at once: run(0) on the calling thread, the others on
/// one std::thread each.
template <class Run>
double time_at_once(unsigned copies, const Run& run) {
    const auto start = clock_type::now();
    std::vector<std::thread> helpers;
    for (unsigned c = 1; c < copies; ++c) helpers.emplace_back(run, c);
    run(0);
    for (std::thread& h : helpers) h.join();
    return seconds_since(start);
}

/// Seconds for `copies` one-thread 512^2 demo tiles at once, one per std::thread.
double time_copies(unsigned copies) {
    std::vector<std::vector<float>> out(copies);
    const gorge::tile_settings<float> settings = gorge_bench::demo_tile_settings();
    return time_at_once(copies, [&](unsigned c) {
        time_tile(gorge_bench::demo_field<>{}, small_tile, settings, out[c]);
    });
}

struct series {
    const char* name;
    std::vector<double> values;
};

/// Prints a series' median and the range of its rounds.
void print_series(const series& s) {
    if (s.values.empty()) return;
    const auto [low, high] = std::minmax_element(s.values.begin(), s.values.end());
    std::printf("%-52s median %8.2f  (rounds %.2f-%.2f)\n", s.name, median(s.values), *low, *high);
}

/// Seconds for the 512^2 demo tile on `threads` threads that are already running (started and
/// spinning before the clock starts): each takes guided chunks of rows from a shared counter, as
/// erode_tile's own workers take batches, and computes them with a one-thread erode_tile. What the
/// threaded tile would take if starting its threads cost nothing.
double time_prestarted_tile(unsigned threads, std::vector<float>& out) {
    const int side = small_tile;
    out.assign(std::size_t(side) * std::size_t(side), 0.0f);
    gorge::tile_sampling<float> sampling;
    sampling.spacing = glm::vec2(1.0f / float(side));
    const gorge::tile_settings<float> settings = gorge_bench::demo_tile_settings(1);
    std::atomic<unsigned> ready{0}, finished{0};
    std::atomic<bool> go{false};
    std::atomic<int> next_row{0};
    const auto worker = [&] {
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) {
        }
        for (;;) {
            int begin = next_row.load(std::memory_order_relaxed);
            if (begin >= side) break;
            const int rows = std::max(1, (side - begin) / int(2 * threads));
            const int end = std::min(side, begin + rows);
            if (!next_row.compare_exchange_weak(begin, end, std::memory_order_relaxed)) continue;
            gorge::tile_buffers<float> band;
            band.height = gorge::grid_view<float>(out.data() + std::size_t(begin) * std::size_t(side), side, end - begin);
            gorge::erode_tile(gorge_bench::demo_field<>{}, sampling, 0, begin, band, settings);
        }
        finished.fetch_add(1, std::memory_order_acq_rel);
    };
    std::vector<std::thread> helpers;
    for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(worker);
    while (ready.load() < threads - 1) {
    }
    ready.fetch_add(1);
    const auto start = clock_type::now();
    go.store(true, std::memory_order_release);
    worker();
    while (finished.load(std::memory_order_acquire) < threads) {
    }
    const double seconds = seconds_since(start);
    for (std::thread& h : helpers) h.join();
    return seconds;
}

/// starts mode: what starting its threads costs a call (gorge::detail::run_workers with empty
/// work: when the last worker began and when the call returned), and the 512^2 demo tile on one
/// thread, on `threads` threads, and on `threads` threads already running
/// (time_prestarted_tile), medians of several calls per round.
int run_starts(unsigned threads, int rounds) {
    constexpr int start_calls = 21, tile_calls = 5;
    series last_start{"run_workers: last worker begins (us)", {}}, whole_call{"run_workers: empty call (us)", {}},
        pool_last_start{"the same on a thread_pool: last worker begins (us)", {}},
        pool_whole_call{"the same on a thread_pool: empty call (us)", {}},
        tile_pool_row{"demo tile 512^2, thread_pool, calls in a row (ms)", {}},
        gain_pool_row{"speed-up on a thread_pool, calls in a row", {}},
        tile_one{"demo tile 512^2, one thread (ms)", {}}, tile_many{"demo tile 512^2, THREADS threads (ms)", {}},
        tile_pool{"demo tile 512^2, THREADS threads of a thread_pool (ms)", {}},
        tile_ready{"demo tile 512^2, THREADS running threads (ms)", {}},
        gain_many{"speed-up on THREADS threads", {}}, gain_pool{"speed-up on THREADS threads of a thread_pool", {}},
        gain_ready{"speed-up on THREADS running threads", {}};
    gorge::thread_pool pool(threads), no_pool(1);
    std::vector<float> out, reference;
    time_tile(gorge_bench::demo_field<>{}, small_tile, gorge_bench::demo_tile_settings(1), reference);
    std::vector<clock_type::time_point> entered(threads);
    for (int r = 0; r < rounds; ++r) {
        for (const bool on_pool : {false, true}) {
            // Empty calls, each after a pause longer than the pool's spin (its threads asleep).
            std::vector<double> last, call;
            for (int c = 0; c < start_calls; ++c) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                const gorge::thread_pool_scope use(on_pool ? pool : no_pool);
                const auto start = clock_type::now();
                gorge::detail::run_workers(
                    threads, [&](unsigned w) { entered[w] = clock_type::now(); }, [] {});
                call.push_back(seconds_since(start) * 1e6);
                last.push_back(
                    std::chrono::duration<double>(*std::max_element(entered.begin(), entered.end()) - start).count() * 1e6);
            }
            (on_pool ? pool_last_start : last_start).values.push_back(median(last));
            (on_pool ? pool_whole_call : whole_call).values.push_back(median(call));
        }
        std::vector<double> one, many, pooled, ready;
        for (int c = 0; c < tile_calls; ++c) {
            one.push_back(time_tile(gorge_bench::demo_field<>{}, small_tile, gorge_bench::demo_tile_settings(1), out) * 1e3);
            many.push_back(time_tile(gorge_bench::demo_field<>{}, small_tile, gorge_bench::demo_tile_settings(threads), out) * 1e3);
            if (out != reference) {
                std::fprintf(stderr, "thread_scaling: the 512^2 tile on %u threads differs from one thread's\n", threads);
                return 1;
            }
            {
                const gorge::thread_pool_scope use(pool);
                pooled.push_back(time_tile(gorge_bench::demo_field<>{}, small_tile, gorge_bench::demo_tile_settings(threads), out) * 1e3);
            }
            if (out != reference) {
                std::fprintf(stderr, "thread_scaling: the 512^2 tile on a thread_pool differs from one thread's\n");
                return 1;
            }
            ready.push_back(time_prestarted_tile(threads, out) * 1e3);
            if (out != reference) {
                std::fprintf(stderr, "thread_scaling: the 512^2 tile in bands differs from the whole tile\n");
                return 1;
            }
        }
        {
            const gorge::thread_pool_scope use(pool);
            std::vector<double> row;
            for (int c = 0; c < tile_calls; ++c)
                row.push_back(time_tile(gorge_bench::demo_field<>{}, small_tile, gorge_bench::demo_tile_settings(threads), out) * 1e3);
            tile_pool_row.values.push_back(median(row));
        }
        tile_one.values.push_back(median(one));
        tile_many.values.push_back(median(many));
        tile_pool.values.push_back(median(pooled));
        tile_ready.values.push_back(median(ready));
        gain_many.values.push_back(tile_one.values.back() / tile_many.values.back());
        gain_pool.values.push_back(tile_one.values.back() / tile_pool.values.back());
        gain_pool_row.values.push_back(tile_one.values.back() / tile_pool_row.values.back());
        gain_ready.values.push_back(tile_one.values.back() / tile_ready.values.back());
        std::printf("round %d: last start %.1f us, empty call %.1f us, tile %.2f / %.3f / %.3f / %.3f ms, speed-up %.2f / %.2f / %.2f\n",
                    r, last_start.values.back(), whole_call.values.back(), tile_one.values.back(),
                    tile_many.values.back(), tile_pool.values.back(), tile_ready.values.back(), gain_many.values.back(),
                    gain_pool.values.back(), gain_ready.values.back());
    }
    for (const series* s : {&last_start, &whole_call, &pool_last_start, &pool_whole_call, &tile_one, &tile_many,
                            &tile_pool, &tile_pool_row, &tile_ready, &gain_many, &gain_pool, &gain_pool_row, &gain_ready})
        print_series(*s);
    return 0;
}

/// Seconds for `count` tiled droplets on `threads` threads on a copy of `map`, left in `work`.
double time_droplets(unsigned threads, gorge::grid<float>& work, const gorge::grid<float>& map, std::uint64_t count) {
    work = map;
    gorge::droplet_options options;
    options.schedule = gorge::droplet_schedule::tiled;
    options.threads = threads;
    const auto start = clock_type::now();
    gorge::erode_droplets(work, count, {}, options);
    return seconds_since(start);
}

/// Seconds for `count` tiled droplets on `map` on one thread (`one`) and on `threads` (`many`);
/// false, with a message, when the two eroded maps differ in any bit. Default: 1 M droplets on the
/// benchmark map.
bool time_tiled_droplets(unsigned threads, double& one, double& many,
                         const gorge::grid<float>& map = gorge_bench::droplet_map(),
                         std::uint64_t count = gorge_bench::droplet_count) {
    gorge::grid<float> eroded_one, eroded_many;
    one = time_droplets(1, eroded_one, map, count);
    many = time_droplets(threads, eroded_many, map, count);
    if (std::memcmp(eroded_one.data(), eroded_many.data(), eroded_one.size() * sizeof(float)) == 0) return true;
    std::fprintf(stderr, "thread_scaling: tiled droplets on 1 and %u threads differ\n", threads);
    return false;
}

/// The droplets mode's larger map: the benchmark terrain at 2048^2 cells, with as many droplets
/// per cell (4 M), so that each of 16 workers' blocks of tiles is four times the area.
constexpr int large_droplet_side = 2048;
constexpr std::uint64_t large_droplet_count = gorge_bench::droplet_count * (large_droplet_side / gorge_bench::droplet_map_side) *
                                              (large_droplet_side / gorge_bench::droplet_map_side);
const gorge::grid<float>& large_droplet_map() {
    static const gorge::grid<float> map = gorge_bench::make_droplet_map(large_droplet_side);
    return map;
}

/// Droplets a thread takes at once in time_droplet_shares.
constexpr std::uint64_t droplet_share_chunk = 8192;

/// Seconds for droplet_count droplets on `threads` threads that take chunks of
/// droplet_share_chunk from a shared counter, each thread on its own copy of the map (chunk k with
/// seed k): droplet work with nothing shared and the load balanced as it goes, the ceiling of the
/// tiled schedule when the copies' slowest thread decides their time.
double time_droplet_shares(unsigned threads) {
    std::vector<gorge::grid<float>> maps(threads, gorge_bench::droplet_map());
    std::atomic<std::uint64_t> next{0};
    return time_at_once(threads, [&](unsigned t) {
        for (std::uint64_t k = next.fetch_add(1); k * droplet_share_chunk < gorge_bench::droplet_count; k = next.fetch_add(1)) {
            gorge::droplet_options options;
            options.seed = k;
            gorge::erode_droplets(maps[t], std::min(droplet_share_chunk, gorge_bench::droplet_count - k * droplet_share_chunk), {}, options);
        }
    });
}

/// Seconds for `copies` serial-schedule runs at once, one per std::thread, each of
/// droplet_count / `share` droplets on its own copy of the map: the droplets' own ceiling (with
/// share = THREADS, each copy does what one of THREADS threads does in the tiled run).
double time_droplet_copies(unsigned copies, unsigned share) {
    std::vector<gorge::grid<float>> maps(copies, gorge_bench::droplet_map());
    return time_at_once(copies, [&](unsigned c) { gorge::erode_droplets(maps[c], gorge_bench::droplet_count / share); });
}

/// Prints the median µs of `calls` calls of call(1) and of call(threads), where call(n) returns
/// the seconds of one call on n threads, after one untimed call of each: the allocator then
/// reuses what it got (glibc raises its mmap threshold once a large block is freed), as in a
/// caller's steady state.
template <class Call>
void compare_threads(const char* what, int side, int calls, unsigned threads, const Call& call) {
    double medians[2];
    for (int k = 0; k < 2; ++k) {
        const unsigned n = k == 0 ? 1 : threads;
        call(n);
        std::vector<double> runs;
        for (int c = 0; c < calls; ++c) runs.push_back(call(n) * 1e6);
        medians[k] = median(runs);
    }
    std::printf("%4d^2 %-13s 1 thread %9.1f us, %u threads %9.1f us, speed-up %.2f\n", side, what, medians[0],
                threads, medians[1], medians[0] / medians[1]);
}

/// The droplet benchmarks' map sampled down to side^2 cells (every droplet_map_side / side-th
/// cell), heights times `relief`.
gorge::grid<float> sampled_droplet_map(int side, float relief) {
    const gorge::grid<float>& whole = gorge_bench::droplet_map();
    const int step = gorge_bench::droplet_map_side / side;
    gorge::grid<float> map(side, side);
    for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) map(x, y) = whole(x * step, y * step) * relief;
    return map;
}

/// small mode: the demo tile from 16^2 to 512^2 (spacing 1/512), then the epsilon fill with its
/// statistics of the drainage map (peers/drainage_maps.hpp) from 32^2 to 2048^2, then 8 passes of
/// thermal erosion from 128^2 to 1024^2, then 4 steps of landscape evolution from 64^2 to 512^2,
/// on one thread and on `threads`, medians of many calls: how small a piece of work still gains
/// from threads (gorge::tile_points_per_thread, the statistics' bands of at least 65,536 cells,
/// gorge::thermal_thread_cells).
int run_small(unsigned threads) {
    constexpr int spacing_side = 512;
    constexpr double measured_points_per_side = 4e6;
    constexpr int least_calls = 5;
    // Calls for a side: about 4 M points (a quarter of that for the slower map work), at least 5.
    const auto calls_for = [&](int side, double share) {
        return std::max(least_calls, int(measured_points_per_side * share / double(side * side)));
    };
    std::vector<float> out;
    for (const int side : {16, 32, 64, 128, 256, 512})
        compare_threads("demo tile:", side, calls_for(side, 1.0), threads, [&](unsigned n) {
            return time_tile(gorge_bench::demo_field<>{}, side, gorge_bench::demo_tile_settings(n), out, spacing_side);
        });
    // The epsilon fill (with its statistics) of the fill benchmarks' drainage map.
    for (const int side : {32, 64, 128, 256, 512, 1024, 2048}) {
        const gorge::grid<float>& map = gorge_bench::pitted_map(side);
        gorge::grid<float> work(side, side);
        compare_threads("epsilon fill:", side, calls_for(side, 0.25), threads, [&](unsigned n) {
            gorge::fill_options<float> options;
            options.epsilon_statistics = true;
            options.threads = n;
            work = map;
            const auto start = clock_type::now();
            gorge::fill_depressions_epsilon<float>(work.view(), options);
            return seconds_since(start);
        });
    }
    // Thermal erosion, 8 passes, of the droplet map sampled down to side^2 cells, in metres.
    constexpr int thermal_passes = 8;
    constexpr float relief = 2000.0f, cell_size = 10.0f;  // metres
    for (const int side : {128, 256, 512, 1024}) {
        const gorge::grid<float> map = sampled_droplet_map(side, relief);
        gorge::grid<float> work(side, side);
        compare_threads("thermal:", side, calls_for(side, 0.25), threads, [&](unsigned n) {
            gorge::thermal_params<float> params;
            params.cell_size = cell_size;
            params.passes = thermal_passes;
            gorge::thermal_options options;
            options.threads = n;
            work = map;
            const auto start = clock_type::now();
            gorge::erode_thermal(work, params, options);
            return seconds_since(start);
        });
    }
    // Landscape evolution, 4 steps from the same sampled map (100 m cells, the evolution
    // benchmark's rates).
    constexpr int evolution_steps = 4;
    for (const int side : {64, 128, 256, 512}) {
        const gorge::grid<float> map = sampled_droplet_map(side, relief);
        compare_threads("evolution:", side, calls_for(side, 0.05), threads, [&](unsigned n) {
            gorge::evolution_params<float> params;
            params.cell_size = 100.0f;
            params.time_step = 1e4f;
            params.erodibility = 2e-5f;
            params.diffusivity = 0.01f;
            params.uplift = 1e-3f;
            gorge::landscape_evolver<float> model(map.view(), params);
            gorge::evolution_options options;
            options.threads = n;
            const auto start = clock_type::now();
            model.run(evolution_steps, options);
            return seconds_since(start);
        });
    }
    return 0;
}

/// Tiled droplets on one map, round by round: the speed-up, the one-thread seconds and the
/// THREADS-thread milliseconds.
struct tiled_droplet_series {
    series gain, one, many;
    /// Times `count` droplets on `map` on one thread and on `threads` and records them; false
    /// (with time_tiled_droplets' message) when the two maps differ.
    bool measure(unsigned threads, const gorge::grid<float>& map, std::uint64_t count) {
        double one_s = 0, many_s = 0;
        if (!time_tiled_droplets(threads, one_s, many_s, map, count)) return false;
        gain.values.push_back(one_s / many_s);
        one.values.push_back(one_s);
        many.values.push_back(many_s * 1e3);
        return true;
    }
    /// "speed-up (one-thread s / THREADS-thread ms)" of the last round.
    void print_last() const {
        std::printf("%.2f (%.3f s / %.1f ms)", gain.values.back(), one.values.back(), many.values.back());
    }
};

/// droplets mode: per round, the droplet shares (time_droplet_shares), 1 M tiled droplets on one
/// thread and on `threads`, and 4 M tiled droplets on the 2048^2 map likewise: the tiled schedule
/// next to droplet work balanced as it goes, and on a map whose workers' blocks are larger.
int run_droplets(unsigned threads, int rounds) {
    series shares_gain{"droplet shares: THREADS threads taking chunks over one", {}};
    tiled_droplet_series tiled{{"tiled droplets: speed-up on THREADS threads", {}},
                               {"tiled droplets, one thread (s)", {}},
                               {"tiled droplets, THREADS threads (ms)", {}}};
    tiled_droplet_series large{{"tiled droplets 2048^2: speed-up on THREADS threads", {}},
                               {"tiled droplets 2048^2, one thread (s)", {}},
                               {"tiled droplets 2048^2, THREADS threads (ms)", {}}};
    gorge_bench::droplet_map();
    large_droplet_map();
    for (int r = 0; r < rounds; ++r) {
        shares_gain.values.push_back(time_droplet_shares(1) / time_droplet_shares(threads));
        if (!tiled.measure(threads, gorge_bench::droplet_map(), gorge_bench::droplet_count) ||
            !large.measure(threads, large_droplet_map(), large_droplet_count))
            return 1;
        std::printf("round %d: shares %.2f, tiled ", r, shares_gain.values.back());
        tiled.print_last();
        std::printf(", 2048^2 ");
        large.print_last();
        std::printf("\n");
    }
    for (const series* s : {&shares_gain, &tiled.gain, &tiled.one, &tiled.many, &large.gain, &large.one, &large.many})
        print_series(*s);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: thread_scaling THREADS ROUNDS | pairs ROUNDS | small THREADS | starts THREADS ROUNDS | droplets THREADS ROUNDS\n");
        return 2;
    }
    if (std::strcmp(argv[1], "pairs") == 0) return run_pairs(std::max(1, std::atoi(argv[2])));
    if (std::strcmp(argv[1], "small") == 0) return run_small(unsigned(std::max(1, std::atoi(argv[2]))));
    if (std::strcmp(argv[1], "droplets") == 0) {
        if (argc < 4) {
            std::fprintf(stderr, "usage: thread_scaling droplets THREADS ROUNDS\n");
            return 2;
        }
        return run_droplets(unsigned(std::max(2, std::atoi(argv[2]))), std::max(1, std::atoi(argv[3])));
    }
    if (std::strcmp(argv[1], "starts") == 0) {
        if (argc < 4) {
            std::fprintf(stderr, "usage: thread_scaling starts THREADS ROUNDS\n");
            return 2;
        }
        return run_starts(unsigned(std::max(2, std::atoi(argv[2]))), std::max(1, std::atoi(argv[3])));
    }
    const int threads_arg = std::atoi(argv[1]), rounds = std::atoi(argv[2]);
    if (threads_arg < 2 || threads_arg > int(gorge::max_threads) || rounds < 1) {
        std::fprintf(stderr, "thread_scaling: THREADS must be in 2..%u and ROUNDS at least 1\n", gorge::max_threads);
        return 2;
    }
    const auto threads = unsigned(threads_arg);
    std::printf("thread_scaling: %u threads, %d rounds, %u float lanes, hardware threads %u\n", threads, rounds,
                unsigned(gorge::simd_lanes<float>()), std::thread::hardware_concurrency());
    gorge_bench::droplet_map();  // made before the first timing

    series ghz_one{"clock, one busy core (GHz)", {}}, ghz_all_low{"clock, all busy: slowest core (GHz)", {}},
        ghz_all_mid{"clock, all busy: median core (GHz)", {}}, fma_one{"vector FMAs, one busy core (G/s)", {}},
        fma_per_cycle{"vector FMAs per cycle at the one-core clock", {}},
        fma_all_gain{"vector FMAs, THREADS busy cores over one", {}},
        filter_rate{"filter 512^2, one thread (M points/s)", {}},
        filter_cycles{"filter: cycles per point at the one-core clock", {}},
        copies_gain{"copies: THREADS busy cores' work over one core's", {}},
        tile_small_gain{"demo tile 512^2: speed-up on THREADS threads", {}},
        tile_large_gain{"demo tile 2048^2: speed-up on THREADS threads", {}},
        tile_pool_gain{"demo tile 512^2: speed-up on a thread_pool", {}},
        droplet_copies_gain{"droplet copies: THREADS busy cores' work over one's", {}},
        droplet_shares_gain{"droplet shares: THREADS threads taking chunks over one", {}},
        droplet_gain{"tiled droplets: speed-up on THREADS threads", {}},
        droplet_one{"tiled droplets, one thread (s)", {}};
    std::vector<float> out;
    gorge::thread_pool pool(threads);
    for (int r = 0; r < rounds; ++r) {
        if (can_count_cycles) {
            ghz_one.values.push_back(measure_ghz());
            const std::vector<double> all = measure_ghz_on(threads);
            ghz_all_low.values.push_back(*std::min_element(all.begin(), all.end()));
            ghz_all_mid.values.push_back(median(all));
        }
        if (can_count_fma) {
            fma_one.values.push_back(measure_fma_rate());
            if (can_count_cycles) fma_per_cycle.values.push_back(fma_one.values.back() / ghz_one.values.back());
            std::vector<unsigned> cpus(threads);
            for (unsigned c = 0; c < threads; ++c) cpus[c] = c % std::max(1u, std::thread::hardware_concurrency());
            const std::vector<double> rates = fma_rates_on(cpus);
            double sum = 0.0;
            for (const double rate : rates) sum += rate;
            fma_all_gain.values.push_back(sum / fma_one.values.back());
        }
        const double filter_s = time_tile(gorge_bench::sloped_plane{}, small_tile, {}, out);
        filter_rate.values.push_back(double(small_tile) * small_tile / filter_s * 1e-6);
        if (can_count_cycles) filter_cycles.values.push_back(ghz_one.values.back() * 1e3 / filter_rate.values.back());

        copies_gain.values.push_back(double(threads) * time_copies(1) / time_copies(threads));
        for (const int side : {small_tile, large_tile}) {
            const double one = time_tile(gorge_bench::demo_field<>{}, side, gorge_bench::demo_tile_settings(1), out);
            const double many =
                time_tile(gorge_bench::demo_field<>{}, side, gorge_bench::demo_tile_settings(threads), out);
            (side == small_tile ? tile_small_gain : tile_large_gain).values.push_back(one / many);
            if (side == small_tile) {
                const gorge::thread_pool_scope use(pool);
                tile_pool_gain.values.push_back(
                    one / time_tile(gorge_bench::demo_field<>{}, side, gorge_bench::demo_tile_settings(threads), out));
            }
        }
        droplet_copies_gain.values.push_back(double(threads) * time_droplet_copies(1, threads) /
                                             time_droplet_copies(threads, threads));
        droplet_shares_gain.values.push_back(time_droplet_shares(1) / time_droplet_shares(threads));
        double drop_one = 0, drop_many = 0;
        if (!time_tiled_droplets(threads, drop_one, drop_many)) return 1;
        droplet_one.values.push_back(drop_one);
        droplet_gain.values.push_back(drop_one / drop_many);

        std::printf("round %d:", r);
        for (const series* s : {&ghz_one, &ghz_all_low, &fma_all_gain, &filter_rate, &copies_gain, &tile_small_gain,
                                &tile_pool_gain, &tile_large_gain, &droplet_copies_gain, &droplet_shares_gain, &droplet_gain})
            if (!s->values.empty()) std::printf(" %.2f", s->values.back());
        std::printf("  (clock one/all-low, FMA all/one, filter M/s, copies, tile 512, on a pool, tile 2048, droplet copies, droplet shares, droplets)\n");
    }
    for (const series* s : {&ghz_one, &ghz_all_low, &ghz_all_mid, &fma_one, &fma_per_cycle, &fma_all_gain, &filter_rate, &filter_cycles, &copies_gain,
                            &tile_small_gain, &tile_pool_gain, &tile_large_gain, &droplet_copies_gain, &droplet_shares_gain, &droplet_gain, &droplet_one})
        print_series(*s);
    return 0;
}
