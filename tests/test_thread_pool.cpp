// gorge::thread_pool (gorge/thread_pool.hpp): threaded calls made inside a thread_pool_scope run
// their workers on the pool's threads and start no thread of their own (counted), beyond the pool
// they start only what it lacks, a busy pool is left alone, and every threaded function gives the
// same bits with and without a pool. Also: exceptions from pool workers, nested scopes, the pool's
// errors, and a pool that sleeps at once (spin 0).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#if defined(__GLIBC__)
#include <pthread.h>
#endif
#include "support/thread_counts.hpp"

#include <gorge/drainage/depression_fill.hpp>
#include <gorge/erosion/droplet.hpp>
#include <gorge/erosion/landscape_evolution.hpp>
#include <gorge/erosion/thermal.hpp>
#include <gorge/simd/tile.hpp>
#include <gorge/thread_pool.hpp>

namespace {

/// 4-octave fBm around 0.5 with its gradient, for scalars and batches.
struct fbm_field {
    template <class T>
    glm::vec<3, T> operator()(const glm::vec<2, T>& p) const {
        gorge::fbm_params<float> params;
        params.frequency = 2.0f;
        params.octaves = 4;
        const glm::vec<3, T> n = gorge::fbm(p, params, 3u);
        return glm::vec<3, T>(T(0.5f) + T(0.3f) * n.x, T(0.3f) * n.y, T(0.3f) * n.z);
    }
};

/// 256 x 256 points: worth 16 threads (gorge::tile_points_per_thread).
constexpr std::ptrdiff_t side = 256;

/// The eroded heights of the 256^2 tile of `field` on `threads` threads.
template <class Field>
std::vector<float> tile_heights(const Field& field, unsigned threads) {
    std::vector<float> heights(std::size_t(side * side), -7.0f);
    gorge::tile_sampling<float> sampling;
    sampling.spacing = glm::vec2(1.0f / 97.0f);
    gorge::tile_buffers<float> buffers;
    buffers.height = gorge::grid_view<float>(heights.data(), side, side);
    gorge::tile_settings<float> settings;
    settings.valley_altitude = 0.4f;
    settings.peak_altitude = 0.6f;
    settings.threads = threads;
    gorge::erode_tile(field, sampling, 0, 0, buffers, settings);
    return heights;
}

/// fbm_field that records the threads it is called on.
struct recording_field {
    std::mutex* lock;
    std::set<std::thread::id>* seen;
    template <class T>
    glm::vec<3, T> operator()(const glm::vec<2, T>& p) const {
        {
            const std::lock_guard<std::mutex> hold(*lock);
            seen->insert(std::this_thread::get_id());
        }
        return fbm_field{}(p);
    }
};

/// Smooth waves with ripples, heights about 57..143: a map for the map algorithms' thread tests.
gorge::grid<float> wavy_map(int cells) {
    gorge::grid<float> map(cells, cells);
    for (int y = 0; y < cells; ++y)
        for (int x = 0; x < cells; ++x)
            map(x, y) = 100.0f + 40.0f * std::sin(0.031f * float(x)) * std::cos(0.023f * float(y)) +
                        3.0f * std::sin(0.7f * float(x + 3 * y));
    return map;
}

/// Threads started while f() runs (0 where this build does not count them).
template <class F>
unsigned long starts_during(const F& f) {
#if GORGE_TEST_COUNTS_THREADS
    const unsigned long before = threads_started.load();
    f();
    return threads_started.load() - before;
#else
    f();
    return 0;
#endif
}

/// Stack bytes of the calling thread as the system reports them (0 where it does not).
std::size_t own_stack_bytes() {
#if defined(__GLIBC__)
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
    std::size_t bytes = 0;
    pthread_attr_getstacksize(&attributes, &bytes);
    pthread_attr_destroy(&attributes);
    return bytes;
#else
    return 0;
#endif
}

/// Stack a worker can use whatever GORGE_WORKER_STACK_SIZE is (macOS's default for threads).
constexpr std::size_t usable_stack_bytes = 512 * 1024;

/// Writes and reads usable_stack_bytes of this thread's stack, 1 in each byte; returns their sum.
GORGE_COLD_NOINLINE std::uint64_t use_stack() {
    volatile unsigned char block[usable_stack_bytes];
    for (std::size_t i = 0; i < usable_stack_bytes; ++i) block[i] = 1;
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < usable_stack_bytes; ++i) sum += block[i];
    return sum;
}

}  // namespace

TEST_CASE("thread_pool: a tile's workers run on the pool's threads, none is started", "[thread_pool]") {
    const std::vector<float> want = tile_heights(fbm_field{}, 1);
    std::thread([] {}).join();  // a sanitizer's own thread, started with the first thread, runs from here on
    const long threads_before = live_threads();
    {
        gorge::thread_pool pool(4);
        REQUIRE(pool.threads() == 4);
        std::mutex lock;
        std::set<std::thread::id> seen;
        {
            const gorge::thread_pool_scope use(pool);
            for (int call = 0; call < 5; ++call) {
                INFO("call " << call);
                seen.clear();
                std::vector<float> got;
                CHECK(starts_during([&] { got = tile_heights(recording_field{&lock, &seen}, 4); }) == 0);
                CHECK(got == want);
                CHECK(seen.size() <= 4);
                CHECK(seen.count(std::this_thread::get_id()) == 1);
            }
        }
        // Outside the scope the same call starts its own three threads (the counter does count).
        std::vector<float> got;
        const unsigned long started = starts_during([&] { got = tile_heights(fbm_field{}, 4); });
        if (GORGE_TEST_COUNTS_THREADS) CHECK(started == 3);
        CHECK(got == want);
        // The pool's threads; the call's own three have been joined.
        if (threads_before > 0) CHECK(live_threads_settling_at(threads_before + 3) == threads_before + 3);
    }
    if (threads_before > 0) CHECK(live_threads_settling_at(threads_before) == threads_before);  // joined by the destructor
}

TEST_CASE("thread_pool: beyond the pool's threads a call starts what it lacks", "[thread_pool]") {
    const std::vector<float> want = tile_heights(fbm_field{}, 1);
    gorge::thread_pool pool(3);  // the caller and 2 pool threads
    const gorge::thread_pool_scope use(pool);
    std::vector<float> got;
    const unsigned long started = starts_during([&] { got = tile_heights(fbm_field{}, 6); });
    if (GORGE_TEST_COUNTS_THREADS) CHECK(started == 3);  // 6 - 1 - 2
    CHECK(got == want);
    // A pool of one thread holds none: calls start their threads as without a pool.
    gorge::thread_pool alone(1);
    CHECK(alone.threads() == 1);
    const gorge::thread_pool_scope use_alone(alone);
    const unsigned long started_alone = starts_during([&] { got = tile_heights(fbm_field{}, 4); });
    if (GORGE_TEST_COUNTS_THREADS) CHECK(started_alone == 3);
    CHECK(got == want);
}

TEST_CASE("thread_pool: a call made while the pool is busy starts its own threads", "[thread_pool]") {
    // The outer tile runs on the pool; its field, on the calling thread, makes a nested threaded
    // call, which finds the (scoped) pool busy.
    const std::vector<float> want = tile_heights(fbm_field{}, 1);
    constexpr std::ptrdiff_t nested_w = 64, nested_h = 65;  // two threads' worth of points
    std::vector<float> nested_want(std::size_t(nested_w * nested_h)), nested_got(nested_want.size());
    gorge::tile_sampling<float> sampling;
    sampling.spacing = glm::vec2(1.0f / 50.0f);
    const auto evaluate = [&](std::vector<float>& out, unsigned threads) {
        gorge::tile_buffers<float> b;
        b.height = gorge::grid_view<float>(out.data(), nested_w, nested_h);
        gorge::evaluate_tile(fbm_field{}, sampling, 0, 0, b, threads);
    };
    evaluate(nested_want, 1);
    gorge::thread_pool pool(4);
    const gorge::thread_pool_scope use(pool);
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<bool> nested_done{false};
    std::atomic<unsigned long> nested_starts{0};
    const auto field = [&](const auto& p) {
        if (std::this_thread::get_id() == caller && !nested_done.exchange(true))
            nested_starts = starts_during([&] { evaluate(nested_got, 2); });
        return fbm_field{}(p);
    };
    const std::vector<float> got = tile_heights(field, 4);
    CHECK(got == want);
    REQUIRE(nested_done.load());
    CHECK(nested_got == nested_want);
    if (GORGE_TEST_COUNTS_THREADS) CHECK(nested_starts.load() == 1);
}

TEST_CASE("thread_pool: two threads sharing one pool get the same bits", "[thread_pool]") {
    const std::vector<float> want = tile_heights(fbm_field{}, 1);
    gorge::thread_pool pool(4);
    std::atomic<int> wrong{0};
    const auto calls = [&] {
        const gorge::thread_pool_scope use(pool);
        for (int call = 0; call < 6; ++call)
            if (tile_heights(fbm_field{}, 4) != want) wrong.fetch_add(1);
    };
    std::thread other(calls);
    calls();
    other.join();
    CHECK(wrong.load() == 0);
}

TEST_CASE("thread_pool: droplets, thermal erosion and the epsilon fill give the same bits on a pool", "[thread_pool]") {
    // 512^2: thermal erosion gets two threads' worth (gorge::thermal_thread_cells).
    const gorge::grid<float> map = wavy_map(512);
    struct run {
        const char* what;
        std::function<void(gorge::grid<float>&, unsigned)> apply;
    };
    const std::vector<run> runs = {
        {"tiled droplets",
         [](gorge::grid<float>& g, unsigned threads) {
             gorge::droplet_options options;
             options.schedule = gorge::droplet_schedule::tiled;
             options.threads = threads;
             gorge::erode_droplets(g, 20000, {}, options);
         }},
        {"thermal erosion",
         [](gorge::grid<float>& g, unsigned threads) {
             gorge::thermal_params<float> params;
             params.passes = 4;
             gorge::thermal_options options;
             options.threads = threads;
             gorge::erode_thermal(g, params, options);
         }},
        {"epsilon fill",
         [](gorge::grid<float>& g, unsigned threads) {
             gorge::fill_options<float> options;
             options.threads = threads;
             gorge::fill_depressions_epsilon<float>(g.view(), options);
         }},
    };
    gorge::thread_pool pool(4);
    for (const run& r : runs) {
        INFO(r.what);
        gorge::grid<float> want = map, got = map;
        r.apply(want, 1);
        const gorge::thread_pool_scope use(pool);
        const unsigned long started = starts_during([&] { r.apply(got, 4); });
        if (GORGE_TEST_COUNTS_THREADS) CHECK(started == 0);
        CHECK(std::equal(got.data(), got.data() + got.size(), want.data()));
    }
}

TEST_CASE("thread_pool: calls that run their workers many times start them once", "[thread_pool]") {
    // Thermal erosion (a run per pass), landscape evolution (several per step) and the epsilon
    // statistics (three sweeps) keep one set of threads for the whole call.
    constexpr int side = 512;  // thermal: two threads' worth; statistics: four bands
    const gorge::grid<float> map = wavy_map(side);
    gorge::grid<float> thermal_one = map, thermal_many = map;
    gorge::thermal_params<float> thermal;
    thermal.passes = 6;
    gorge::thermal_options thermal_threads;
    thermal_threads.threads = 8;
    gorge::erode_thermal(thermal_one, thermal);
    const unsigned long thermal_starts = starts_during([&] { gorge::erode_thermal(thermal_many, thermal, thermal_threads); });
    if (GORGE_TEST_COUNTS_THREADS) CHECK(thermal_starts == 1);  // 6 passes and the measure on 2 threads
    CHECK(std::equal(thermal_many.data(), thermal_many.data() + thermal_many.size(), thermal_one.data()));

    gorge::grid<float> fill_one = map, fill_many = map;
    gorge::fill_options<float> fill;
    gorge::fill_depressions_epsilon<float>(fill_one.view(), fill);
    fill.threads = 8;
    const unsigned long fill_starts = starts_during([&] { gorge::fill_depressions_epsilon<float>(fill_many.view(), fill); });
    if (GORGE_TEST_COUNTS_THREADS) CHECK(fill_starts == 3);  // three sweeps of four bands
    CHECK(std::equal(fill_many.data(), fill_many.data() + fill_many.size(), fill_one.data()));

    gorge::evolution_params<float> evolution;
    evolution.cell_size = 100.0f;
    evolution.time_step = 1e4f;
    evolution.uplift = 1e-3f;
    gorge::landscape_evolver<float> one(map.view(), evolution), many(map.view(), evolution);
    gorge::evolution_options evolution_threads;
    evolution_threads.threads = 3;
    one.run(5);
    const unsigned long evolution_starts = starts_during([&] { many.run(5, evolution_threads); });
    if (GORGE_TEST_COUNTS_THREADS) CHECK(evolution_starts <= 2);  // 5 steps of several stages on 3 threads
    std::size_t differing = 0;
    for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) differing += many.heights()(x, y) != one.heights()(x, y) ? 1u : 0u;
    CHECK(differing == 0);
}

TEST_CASE("thread_pool: an exception on a pool thread reaches the caller; the pool stays usable", "[thread_pool]") {
    const std::vector<float> want = tile_heights(fbm_field{}, 1);
    gorge::thread_pool pool(4);
    const gorge::thread_pool_scope use(pool);
    const std::thread::id caller = std::this_thread::get_id();
    // A pool thread throws on its first batch; the caller's first batch waits for that (up to
    // 10 s), so that a pool thread does take part.
    std::atomic<bool> thrown{false};
    const auto failing = [&](const auto& p) {
        if (std::this_thread::get_id() != caller) {
            thrown = true;
            throw std::runtime_error("field failed");
        }
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!thrown.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
        return fbm_field{}(p);
    };
    for (int call = 0; call < 3; ++call) {
        INFO("call " << call);
        thrown = false;
        std::string message;
        try {
            (void)tile_heights(failing, 4);
        } catch (const std::runtime_error& e) {
            message = e.what();
        }
        CHECK(message == "field failed");
        CHECK(tile_heights(fbm_field{}, 4) == want);
    }
}

TEST_CASE("thread_pool: a pool that sleeps at once (spin 0) wakes for every call", "[thread_pool]") {
    const std::vector<float> want = tile_heights(fbm_field{}, 1);
    gorge::thread_pool pool(4, std::chrono::microseconds(0));
    CHECK(pool.spin().count() == 0);
    const gorge::thread_pool_scope use(pool);
    for (int call = 0; call < 4; ++call) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the pool's threads are asleep
        std::vector<float> got;
        CHECK(starts_during([&] { got = tile_heights(fbm_field{}, 4); }) == 0);
        CHECK(got == want);
    }
}

TEST_CASE("thread_pool: scopes nest; invalid parameters throw naming them", "[thread_pool]") {
    gorge::thread_pool a(2), b(2);
    CHECK(gorge::detail::scoped_thread_pool() == nullptr);
    {
        const gorge::thread_pool_scope use_a(a);
        CHECK(gorge::detail::scoped_thread_pool() == &a);
        {
            const gorge::thread_pool_scope use_b(b);
            CHECK(gorge::detail::scoped_thread_pool() == &b);
        }
        CHECK(gorge::detail::scoped_thread_pool() == &a);
    }
    CHECK(gorge::detail::scoped_thread_pool() == nullptr);
    CHECK(gorge::thread_pool::default_spin.count() == 100);

    const auto message_of = [](const auto& make) {
        try {
            make();
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(message_of([] { gorge::thread_pool p(gorge::max_threads + 1); }) ==
          "gorge::thread_pool: invalid threads (must be in 0..1024; 0 = all hardware threads)");
    CHECK(message_of([] { gorge::thread_pool p(2, std::chrono::microseconds(-1)); }) ==
          "gorge::thread_pool: invalid spin (must be >= 0 microseconds)");
}

TEST_CASE("worker threads: the threads gorge starts get GORGE_WORKER_STACK_SIZE bytes of stack", "[thread_pool]") {
    // What the glibc stack cache needs (gorge/detail/worker_thread.hpp), on a call's own threads
    // and on a pool's; and a worker can use half a MiB of it.
    constexpr unsigned workers = 4;
    std::vector<std::size_t> bytes(workers, 0);
    std::vector<std::uint64_t> used(workers, 0);
    const auto record = [&](unsigned w) {
        bytes[w] = own_stack_bytes();
        used[w] = use_stack();
    };
    const auto check = [&] {
        for (unsigned w = 1; w < workers; ++w) {
            CAPTURE(w, bytes[w]);
            CHECK(used[w] == usable_stack_bytes);
#if defined(__GLIBC__) && GORGE_WORKER_STACK_SIZE > 0
            // glibc 2.36 reports the size asked for; the margins leave room for a libc or a
            // sanitizer that rounds it
            CHECK(bytes[w] >= gorge::detail::worker_stack_size - 64 * 1024);
            CHECK(bytes[w] <= gorge::detail::worker_stack_size + 256 * 1024);
#endif
        }
    };
    SECTION("threads started for the call") {
        REQUIRE(gorge::detail::run_workers(workers, record, [] {}) == workers);
        check();
    }
    SECTION("a pool's threads") {
        gorge::thread_pool pool(workers);
        const gorge::thread_pool_scope use(pool);
        REQUIRE(starts_during([&] { REQUIRE(gorge::detail::run_workers(workers, record, [] {}) == workers); }) == 0);
        check();
    }
}
