// gorge/thread_pool.hpp — threads kept from one threaded gorge call to the next.
//
// Without a pool, every threaded gorge call (erode_tile, evaluate_tile, tiled droplets, the
// fills, thermal erosion, landscape evolution) starts its threads and joins them before it
// returns (the thread rule: gorge/detail/parallel.hpp). Starting a thread costs its starter
// about 15-20 µs, and a thread that lands on an idle core waits for that core to wake; on the
// 16-core Xeon of benchmarks/README.md the 16th worker of a call began 252-305 µs after the call
// (369-479 µs while gorge's threads had 8 MiB stacks: gorge/detail/worker_thread.hpp), and a
// 512^2 demo tile took 1.20-1.25 times as long on 16 threads started for it as on 16 threads
// already running. A caller that makes many threaded calls in a row (tiles streamed one
// after another) keeps its threads in a pool instead:
//
//     gorge::thread_pool pool(16);             // this thread and 15 pool threads
//     gorge::thread_pool_scope use(pool);      // calls on this thread now run on the pool
//     for (...) gorge::erode_tile(field, sampling, x, y, buffers, settings);  // settings.threads = 16
//
// Guarantees:
//   - results are the same bits with and without a pool: they never depend on the threads;
//   - a call uses the threads its options ask for (the thread rule); beyond what the pool holds,
//     it starts the rest for the call, as without a pool;
//   - one call at a time runs on a pool: a call made while its pool is busy with another (made
//     on another thread that scoped the same pool, or from a callback of the running call)
//     starts its threads as without a pool;
//   - after a call, each pool thread waits busily for `spin` (default 100 µs) for the next call
//     before it sleeps, so that calls in quick succession find their threads awake and their
//     cores running; that much busy waiting per thread after each call is the price (0: sleep
//     at once). The calling thread waits for the pool's threads the same way;
//   - the destructor wakes and joins the pool's threads.
// Calls that run their workers many times over (thermal erosion's passes, landscape evolution's
// steps, the epsilon statistics' sweeps) keep a pool of their own for the length of the call
// when the caller has not scoped one (detail::call_thread_pool, at the end of this file).
// Limits: a pool must outlive every scope that names it and every call that uses it; destroying
// it during a call is undefined. A forked child does not have the parent's pool threads: make
// pools after fork().
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "detail/thread_count.hpp"
#include "detail/validate.hpp"
#include "detail/worker_thread.hpp"

namespace gorge {

class thread_pool;

namespace detail {

/// The pool that threaded calls made on this thread use (thread_pool_scope), or nullptr.
inline thread_pool*& scoped_thread_pool() noexcept {
    static thread_local thread_pool* pool = nullptr;
    return pool;
}

/// One step of a busy wait: tells the core that this is a wait loop (x86 pause, Arm yield).
inline void spin_pause() noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/// Busy polls between two looks at the clock in a spin (a clock read costs tens of ns).
constexpr unsigned spin_polls_per_clock_read = 64;

/// Spins until done() or until `spin` has passed; returns done().
template <class Done>
bool spin_until(const Done& done, std::chrono::microseconds spin) {
    if (done()) return true;
    if (spin.count() <= 0) return false;
    const auto until = std::chrono::steady_clock::now() + spin;
    for (unsigned polls = 1;; ++polls) {
        spin_pause();
        if (done()) return true;
        if (polls % spin_polls_per_clock_read == 0 && std::chrono::steady_clock::now() >= until) return done();
    }
}

class pooled_call;

}  // namespace detail

/// Threads kept for threaded gorge calls (see the header comment). Not copyable or movable.
class thread_pool {
public:
    /// Default busy wait of the pool's threads after a call, and of the caller for them.
    static constexpr std::chrono::microseconds default_spin{100};

    /// A pool for calls of up to `threads` threads, the calling thread included: starts
    /// threads - 1 threads now. threads: 0 (the default) = std::thread::hardware_concurrency(),
    /// else 1..max_threads (1024; 1 makes a pool without threads). spin: the busy wait after a
    /// call, >= 0 µs, default 100 µs. Throws std::invalid_argument naming the parameter when
    /// either is out of range, and std::system_error when a thread cannot start (the threads
    /// already started are joined first).
    explicit thread_pool(unsigned threads = 0, std::chrono::microseconds spin = default_spin) : spin_(spin) {
        if (const invalid_parameter bad = detail::invalid_thread_count(threads))
            detail::throw_invalid("gorge::thread_pool", bad.to_string());
        if (spin.count() < 0) detail::throw_invalid("gorge::thread_pool", "spin (must be >= 0 microseconds)");
        const unsigned total = detail::resolve_threads(threads, max_threads);
        helpers_.reserve(total - 1);
        try {
            for (unsigned i = 1; i < total; ++i) {
                helpers_.push_back(std::make_unique<helper>());
                helper& h = *helpers_.back();
                h.thread = detail::worker_thread([this, &h] { serve(h); });
            }
        } catch (...) {
            stop_and_join();
            throw;
        }
    }

    /// Wakes the pool's threads and joins them.
    ~thread_pool() { stop_and_join(); }

    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    /// Threads a call can get from this pool, the calling thread included (1 + its threads).
    unsigned threads() const noexcept { return static_cast<unsigned>(helpers_.size()) + 1; }

    /// The busy wait after a call.
    std::chrono::microseconds spin() const noexcept { return spin_; }

private:
    friend class detail::pooled_call;

    /// One pool thread and the job posted to it.
    struct helper {
        detail::worker_thread thread;
        std::mutex lock;
        std::condition_variable wake;
        std::atomic<std::uint64_t> posted{0};  ///< jobs posted so far (raised after the fields below)
        bool sleeping = false;                 ///< under lock: waiting on `wake`
        void (*run)(const void*, unsigned) = nullptr;
        const void* context = nullptr;
        unsigned worker = 0;
    };

    /// A pool thread: waits for its next job (spinning, then sleeping), runs it, reports it done.
    void serve(helper& h) {
        std::uint64_t seen = 0;
        for (;;) {
            const auto posted = [&] { return h.posted.load(std::memory_order_acquire) != seen; };
            const auto posted_or_stopping = [&] { return posted() || stopping_.load(std::memory_order_relaxed); };
            if (!detail::spin_until(posted_or_stopping, spin_)) {
                std::unique_lock<std::mutex> hold(h.lock);
                h.sleeping = true;
                h.wake.wait(hold, posted_or_stopping);
                h.sleeping = false;
            }
            if (!posted()) return;  // stopping, nothing posted
            ++seen;                 // one job is posted at a time: the next only after this one is done
            h.run(h.context, h.worker);
            if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                const std::lock_guard<std::mutex> hold(done_lock_);
                done_.notify_one();
            }
        }
    }

    void stop_and_join() noexcept {
        stopping_.store(true, std::memory_order_relaxed);
        for (const std::unique_ptr<helper>& h : helpers_) {
            { const std::lock_guard<std::mutex> hold(h->lock); }  // a thread deciding to sleep sees stopping_
            h->wake.notify_one();
        }
        for (const std::unique_ptr<helper>& h : helpers_) h->thread.join();
    }

    std::vector<std::unique_ptr<helper>> helpers_;
    std::chrono::microseconds spin_;
    std::atomic<bool> stopping_{false};
    std::atomic<bool> busy_{false};        ///< a call runs on the pool
    std::atomic<unsigned> pending_{0};     ///< posted jobs of the running call not yet done
    std::mutex done_lock_;
    std::condition_variable done_;         ///< the last job of a call is done
};

/// While it lives, threaded gorge calls made on this thread run their workers on `pool` (see
/// the header comment). Scopes nest: the innermost one counts, and the previous pool returns
/// when it ends.
class thread_pool_scope {
public:
    explicit thread_pool_scope(thread_pool& pool) noexcept : previous_(detail::scoped_thread_pool()) {
        detail::scoped_thread_pool() = &pool;
    }
    ~thread_pool_scope() { detail::scoped_thread_pool() = previous_; }
    thread_pool_scope(const thread_pool_scope&) = delete;
    thread_pool_scope& operator=(const thread_pool_scope&) = delete;

private:
    thread_pool* previous_;
};

namespace detail {

/// One call's use of a pool: posts work(1) ... work(k) to k of the pool's threads, k =
/// min(wanted, the pool's threads), and wait() (or the destructor) returns once they are done.
/// With no pool, or a busy one, it posts nothing (k = 0).
class pooled_call {
public:
    template <class Work>
    pooled_call(thread_pool* pool, unsigned wanted, const Work& work) {
        if (pool == nullptr || wanted == 0 || pool->helpers_.empty()) return;
        if (pool->busy_.exchange(true, std::memory_order_acquire)) return;
        pool_ = pool;
        workers_ = std::min(wanted, static_cast<unsigned>(pool->helpers_.size()));
        pool->pending_.store(workers_, std::memory_order_relaxed);
        for (unsigned i = 0; i < workers_; ++i) {
            thread_pool::helper& h = *pool->helpers_[i];
            h.run = &invoke<Work>;
            h.context = &work;
            h.worker = i + 1;
            h.posted.fetch_add(1, std::memory_order_release);
            bool asleep;
            {
                const std::lock_guard<std::mutex> hold(h.lock);
                asleep = h.sleeping;
            }
            if (asleep) h.wake.notify_one();
        }
    }
    ~pooled_call() { wait(); }
    pooled_call(const pooled_call&) = delete;
    pooled_call& operator=(const pooled_call&) = delete;

    /// Workers posted to the pool (they are workers 1 ... workers()).
    unsigned workers() const noexcept { return workers_; }

    /// Returns once every posted worker has returned, and frees the pool for the next call.
    void wait() noexcept {
        if (pool_ == nullptr) return;
        const auto done = [this] { return pool_->pending_.load(std::memory_order_acquire) == 0; };
        if (!spin_until(done, pool_->spin_)) {
            std::unique_lock<std::mutex> hold(pool_->done_lock_);
            pool_->done_.wait(hold, done);
        }
        pool_->busy_.store(false, std::memory_order_release);
        pool_ = nullptr;
    }

private:
    template <class Work>
    static void invoke(const void* work, unsigned worker) {
        (*static_cast<const Work*>(work))(worker);
    }

    thread_pool* pool_ = nullptr;
    unsigned workers_ = 0;
};

/// Threads kept for the length of one gorge call that runs its workers many times over (thermal
/// passes, landscape evolution steps, the epsilon statistics' three sweeps), so that they start
/// once per call instead of once per run: while it lives, a pool of `threads` threads is scoped on
/// the calling thread. Nothing is done when threads < 2, or when the caller has scoped a pool
/// (that one serves). When the pool's threads cannot start, the call goes on without it: each
/// run then starts its own threads, with the thread rule's fallback.
class call_thread_pool {
public:
    explicit call_thread_pool(unsigned threads) {
        if (threads < 2 || scoped_thread_pool() != nullptr) return;
        try {
            pool_.reset(new thread_pool(threads));
        } catch (const std::system_error&) {
            return;
        }
        scoped_thread_pool() = pool_.get();
    }
    ~call_thread_pool() {
        if (pool_) scoped_thread_pool() = nullptr;
    }
    call_thread_pool(const call_thread_pool&) = delete;
    call_thread_pool& operator=(const call_thread_pool&) = delete;

private:
    std::unique_ptr<thread_pool> pool_;
};

}  // namespace detail
}  // namespace gorge
