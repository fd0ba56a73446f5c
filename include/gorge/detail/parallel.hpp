// gorge/detail/parallel.hpp — the one thread rule of gorge, and the helper that runs workers.
//
// Every gorge function that can use threads (erode_tile, evaluate_tile, the tiled schedule of
// erode_droplets, the fills, thermal erosion, landscape evolution) takes a thread count with the same meaning:
//   - 1 (the default): the calling thread only, no thread is started;
//   - 0: std::thread::hardware_concurrency() (1 where it is unknown);
//   - n: n threads, the calling thread being one of them;
// in every case no more than gorge::max_threads and no more than there are independent pieces of
// work worth a thread (gorge::tile_points_per_thread points of a tile, gorge::thermal_thread_cells
// cells of a thermal run, tiles of one colour). A request above gorge::max_threads is invalid
// (std::invalid_argument naming the parameter). Results never depend on the thread count.
//
// A thread that cannot start (std::system_error, e.g. when the process has reached its thread or
// memory limit) is not an error: run_workers goes on with the workers it could start, the
// calling thread included, which take every piece of work from a shared counter. Since results
// do not depend on the thread count, the result is the same, only later.
//
// How the work is shared: every call starts its threads once (run_workers) and joins them before
// it returns; no thread outlives a call, unless the caller keeps threads in a gorge::thread_pool
// and scopes it on the calling thread (gorge/thread_pool.hpp): calls then run their workers on
// the pool's threads and start only what the pool lacks. Every thread started has a stack of
// GORGE_WORKER_STACK_SIZE bytes, 1 MiB by default (gorge/detail/worker_thread.hpp). The workers
// take their pieces dynamically: parallel_chunks hands out guided chunks of a range (large
// first, small at the end; erode_tile and evaluate_tile over the batches of a tile), and the
// tiled droplet schedule takes tasks from a queue as their neighbouring tiles allow
// (gorge/erosion/detail/droplet_schedule.hpp). Progress reports and cancellation checks run on
// the calling thread; an exception thrown on any worker stops the others at their next piece
// and is rethrown in the caller once all have returned.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "../thread_pool.hpp"
#include "thread_count.hpp"
#include "validate.hpp"
#include "worker_thread.hpp"

namespace gorge {
namespace detail {

/// Runs work(w) for w in [0, workers): w = 0 on the calling thread, the others on the threads of
/// the pool scoped on this thread where there is one and it is free (gorge/thread_pool.hpp), on
/// new threads (worker_thread.hpp) otherwise or beyond what the pool holds, and returns once all
/// have returned. `work` must take its pieces of work from a shared counter: a worker that
/// cannot be started does not run (see the header comment), so which workers run, and how many,
/// is not fixed. When a worker throws, stop() is called (from that worker) so that the others
/// can finish early; after every worker has returned, the first exception thrown is rethrown.
/// Returns the number of workers that ran.
template <class Work, class Stop>
unsigned run_workers(unsigned workers, const Work& work, const Stop& stop) {
    std::exception_ptr first_error;
    std::atomic<bool> failed{false};
    const auto guarded = [&](unsigned w) {
        try {
            work(w);
        } catch (...) {
            if (!failed.exchange(true)) first_error = std::current_exception();
            stop();
        }
    };
    pooled_call pooled(workers > 1 ? scoped_thread_pool() : nullptr, workers > 1 ? workers - 1 : 0, guarded);
    const unsigned first_started = pooled.workers() + 1;
    std::vector<worker_thread> helpers;
    if (workers > first_started) {
        helpers.reserve(workers - first_started);
        for (unsigned w = first_started; w < workers; ++w) {
            try {
                helpers.emplace_back([&guarded, w] { guarded(w); });
            } catch (const std::system_error&) {
                break;  // no more threads: the started ones and the caller do all the work
            } catch (...) {
                stop();
                throw;  // helpers' destructors join the started threads, then pooled's waits for the pool's
            }
        }
    }
    guarded(0);
    for (worker_thread& t : helpers) t.join();
    pooled.wait();
    if (first_error) std::rethrow_exception(first_error);
    return pooled.workers() + static_cast<unsigned>(helpers.size()) + 1;
}

/// Divisor of guided chunk sizes: a worker takes (remaining work) / (guided_share · workers),
/// so chunks start large (few takes from the shared counter) and shrink toward the end, where
/// the last ones decide how long the others wait.
constexpr std::uint64_t guided_share = 2;

/// Runs piece(begin, end) over consecutive ranges covering [0, count) on `workers` workers (the
/// caller included, run_workers), which take guided chunks from a shared counter: each takes
/// max(min_chunk, remaining / (guided_share · workers)) items, the last chunk clipped to count.
/// No more workers run than there are chunks of min_chunk items: a worker with nothing to take
/// is not started. Which worker runs a range, and how the ranges fall, must not change what
/// piece() writes (the callers' results never depend on the split). With one worker, piece(0,
/// count) runs on the calling thread. After an exception the other workers stop at their next
/// take; it is rethrown.
/// Workers parallel_chunks runs for `count` items in chunks of at least `min_chunk` when
/// `workers` are offered: no more than there are such chunks.
inline unsigned chunk_workers(std::uint64_t count, unsigned workers, std::uint64_t min_chunk) {
    const std::uint64_t floor_chunk = std::max<std::uint64_t>(min_chunk, 1);
    const std::uint64_t chunks = count / floor_chunk + (count % floor_chunk != 0 ? 1 : 0);
    return chunks < std::uint64_t(workers) ? static_cast<unsigned>(chunks) : workers;
}

template <class Piece>
void parallel_chunks(std::uint64_t count, unsigned workers, std::uint64_t min_chunk, const Piece& piece) {
    const std::uint64_t floor_chunk = std::max<std::uint64_t>(min_chunk, 1);
    workers = chunk_workers(count, workers, min_chunk);
    if (workers <= 1 || count == 0) {
        if (count > 0) piece(std::uint64_t(0), count);
        return;
    }
    const std::uint64_t divisor = guided_share * workers;
    std::atomic<std::uint64_t> next{0};
    run_workers(
        workers,
        [&](unsigned) {
            std::uint64_t begin = next.load(std::memory_order_relaxed);
            for (;;) {
                if (begin >= count) return;
                const std::uint64_t chunk = std::max(floor_chunk, (count - begin) / divisor);
                const std::uint64_t end = count - begin > chunk ? begin + chunk : count;
                // On failure, begin holds the counter's current value: retry from there.
                if (!next.compare_exchange_weak(begin, end, std::memory_order_relaxed)) continue;
                piece(begin, end);
                begin = next.load(std::memory_order_relaxed);
            }
        },
        [&] { next.store(count, std::memory_order_relaxed); });
}

}  // namespace detail
}  // namespace gorge
