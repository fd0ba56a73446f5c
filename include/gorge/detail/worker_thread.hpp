// gorge/detail/worker_thread.hpp — the threads gorge starts, with stacks of a set size.
//
// Every thread gorge starts (a call's workers, gorge/detail/parallel.hpp; a thread_pool's
// threads) is a worker_thread: a std::thread where the platform offers nothing better, a POSIX
// thread with a stack of GORGE_WORKER_STACK_SIZE bytes where it does. Why the size matters:
// glibc keeps the stacks of finished threads for reuse, but only up to 40 MiB of them. Its
// default thread stack is 8 MiB (the main thread's limit), so a call on 16 threads left most of
// its 15 stacks to be unmapped and the next call mapped them again: on the 16-core Xeon of
// benchmarks/README.md the 16th worker of a call began 369-479 µs after the call with 8 MiB
// stacks and 252-305 µs with 1 MiB ones ("Worker stacks that glibc keeps").
//
// GORGE_WORKER_STACK_SIZE: bytes of stack of each thread gorge starts. Default 1 MiB (Windows'
// default stack; macOS gives its secondary threads 512 KiB), which lets glibc keep the stacks of
// up to 39 threads (each also has a guard page). gorge's own work on a worker (tiles, droplets,
// fills, thermal erosion, evolution) ran in 16 KiB stacks when optimized and in 32 KiB at -O0;
// the rest is for the callbacks gorge calls there (fields, terrain functions). Define it before
// the first gorge include, the same in every file of a program; 0 = the platform's default
// (std::thread). glibc takes the program's static thread-local storage out of the same block: a
// few KiB in most programs, 771 KiB under GCC 12's ThreadSanitizer, whose builds default to 2 MiB.
// A size the system rejects (below PTHREAD_STACK_MIN, or too small for the program's
// thread-local storage) falls back to the default.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cerrno>
#include <cstddef>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#if defined(__SANITIZE_THREAD__)
#define GORGE_DETAIL_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GORGE_DETAIL_THREAD_SANITIZER 1
#endif
#endif

#ifndef GORGE_WORKER_STACK_SIZE
#ifdef GORGE_DETAIL_THREAD_SANITIZER
#define GORGE_WORKER_STACK_SIZE (2 * 1024 * 1024)  // ThreadSanitizer's state takes 771 KiB of it
#else
#define GORGE_WORKER_STACK_SIZE (1024 * 1024)
#endif
#endif

#if GORGE_WORKER_STACK_SIZE > 0 && (defined(__unix__) || defined(__APPLE__)) && defined(__has_include)
#if __has_include(<pthread.h>)
#include <pthread.h>
#define GORGE_DETAIL_POSIX_WORKERS 1
#endif
#endif
#ifndef GORGE_DETAIL_POSIX_WORKERS
#define GORGE_DETAIL_POSIX_WORKERS 0
#endif

namespace gorge {
namespace detail {

/// Stack size of the threads gorge starts, in bytes (0: the platform's default).
constexpr std::size_t worker_stack_size = GORGE_WORKER_STACK_SIZE;

#if GORGE_DETAIL_POSIX_WORKERS

/// A started thread, joined by join() or by the destructor (unlike std::thread, which would end
/// the program). Starting throws std::system_error when the system cannot start one, as
/// std::thread does. An exception that leaves the function ends the program, as with std::thread.
class worker_thread {
public:
    /// No thread.
    worker_thread() noexcept = default;

    /// Starts a thread that runs function().
    template <class Function>
    explicit worker_thread(Function&& function) {
        using task_type = task<std::decay_t<Function>>;
        auto owned = std::make_unique<task_type>(std::forward<Function>(function));
        pthread_attr_t attributes;
        int error = pthread_attr_init(&attributes);
        if (error != 0) throw std::system_error(error, std::generic_category(), "gorge: thread attributes");
        const bool sized = pthread_attr_setstacksize(&attributes, worker_stack_size) == 0;
        error = pthread_create(&id_, sized ? &attributes : nullptr, &task_type::run, owned.get());
        if (error == EINVAL && sized) error = pthread_create(&id_, nullptr, &task_type::run, owned.get());
        pthread_attr_destroy(&attributes);
        if (error != 0) throw std::system_error(error, std::generic_category(), "gorge: thread start");
        owned.release();  // the thread owns it now
        joinable_ = true;
    }
    worker_thread(worker_thread&& other) noexcept : id_(other.id_), joinable_(std::exchange(other.joinable_, false)) {}
    worker_thread& operator=(worker_thread&& other) noexcept {
        if (this != &other) {
            join();
            id_ = other.id_;
            joinable_ = std::exchange(other.joinable_, false);
        }
        return *this;
    }
    worker_thread(const worker_thread&) = delete;
    worker_thread& operator=(const worker_thread&) = delete;
    ~worker_thread() { join(); }

    /// Waits for the thread to return (nothing when it was joined already).
    void join() noexcept {
        if (joinable_) pthread_join(id_, nullptr);
        joinable_ = false;
    }

private:
    template <class Function>
    struct task {
        explicit task(Function f) : function(std::move(f)) {}
        static void* run(void* self) noexcept {
            const std::unique_ptr<task> owned(static_cast<task*>(self));
            owned->function();
            return nullptr;
        }
        Function function;
    };

    pthread_t id_{};
    bool joinable_ = false;
};

#else

/// A std::thread joined by join() or by the destructor (see the POSIX version above).
class worker_thread {
public:
    worker_thread() noexcept = default;
    template <class Function>
    explicit worker_thread(Function&& function) : thread_(std::forward<Function>(function)) {}
    worker_thread(worker_thread&&) noexcept = default;
    worker_thread& operator=(worker_thread&& other) noexcept {
        if (this != &other) {
            join();
            thread_ = std::move(other.thread_);
        }
        return *this;
    }
    worker_thread(const worker_thread&) = delete;
    worker_thread& operator=(const worker_thread&) = delete;
    ~worker_thread() { join(); }

    /// Waits for the thread to return (nothing when it was joined already).
    void join() noexcept {
        if (thread_.joinable()) thread_.join();
    }

private:
    std::thread thread_;
};

#endif

}  // namespace detail
}  // namespace gorge
