// Counts threads for the tests of gorge's threads (gorge/detail/parallel.hpp, gorge/thread_pool.hpp).
//   threads_started   the threads this program has started: a pthread_create in front of glibc's
//                     (std::thread calls it), forwarding to the next definition. Defined only
//                     where GORGE_TEST_COUNTS_THREADS is 1: glibc without a sanitizer (sanitizers
//                     put their own in front). Include this header in one file per test program.
//   live_threads()    threads of this process now (the kernel's count), -1 where unknown.
//   live_threads_settling_at(n)
//                     live_threads() once it equals n, or as it is after a few seconds: a thread
//                     leaves the kernel's count a moment after pthread_join has returned for it
//                     (join waits for the thread to release its memory, the count drops later in
//                     its exit), which a loaded machine stretches.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GORGE_TEST_COUNTS_THREADS 1
#include <dlfcn.h>
#include <pthread.h>
#else
#define GORGE_TEST_COUNTS_THREADS 0
#endif
#if defined(__linux__)
#include <fstream>
#endif

#if GORGE_TEST_COUNTS_THREADS
namespace {
std::atomic<unsigned long> threads_started{0};
}
extern "C" int pthread_create(pthread_t* __restrict thread, const pthread_attr_t* __restrict attr,
                              void* (*start)(void*), void* __restrict arg) noexcept {
    using create_fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
    static const auto next = reinterpret_cast<create_fn>(dlsym(RTLD_NEXT, "pthread_create"));
    const int result = next(thread, attr, start, arg);
    if (result == 0) threads_started.fetch_add(1);
    return result;
}
#endif

namespace {

#if defined(__linux__)
long live_threads() {
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
        if (key == "Threads:") {
            long n = -1;
            status >> n;
            return n;
        }
        std::getline(status, key);
    }
    return -1;
}
#else
long live_threads() { return -1; }
#endif

long live_threads_settling_at(long n) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    long now = live_threads();
    while (now != n && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        now = live_threads();
    }
    return now;
}

}  // namespace
