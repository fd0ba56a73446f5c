// gorge/detail/thread_count.hpp — what a thread count means in gorge: its largest value, how a
// request becomes a number of threads, and the error that names a bad one. The rule itself is
// described once, in gorge/detail/parallel.hpp.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>

#include "validate.hpp"

namespace gorge {

/// Largest accepted thread count (tile_settings::threads, evaluate_tile's threads,
/// droplet_options::threads); 0 = hardware concurrency is capped to it as well.
constexpr unsigned max_threads = 1024;

namespace detail {

/// Member name and rule of a thread count, for first_invalid(): empty when requested <= max_threads.
inline invalid_parameter invalid_thread_count(unsigned requested) {
    if (requested > max_threads) return "threads (must be in 0..1024; 0 = all hardware threads)";
    return {};
}

/// Threads to use for `work` independent pieces of work when `requested` were asked for (see the
/// header comment): 0 means std::thread::hardware_concurrency(); the result lies in
/// 1..min(max_threads, max(work, 1)).
inline unsigned resolve_threads(unsigned requested, std::uint64_t work) {
    unsigned n = requested;
    if (n == 0) n = std::thread::hardware_concurrency();  // 0 where unknown
    n = std::min(n, max_threads);
    if (work < std::uint64_t(n)) n = static_cast<unsigned>(work);
    return std::max(1u, n);
}

}  // namespace detail
}  // namespace gorge
