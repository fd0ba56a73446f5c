// gorge/drainage/detail/flood_queues.hpp — a Priority-Flood's queues (the priority queue, the pit
// queue, the trace queue, and the pit queue of raised cells with their U), kept on the calling
// thread from one flood to the next. Not a public header.
//
// The queues grow while a flood runs: hundreds of bucket vectors from a few bytes to a megabyte
// (1024^2 maps). Made afresh for every flood, they came from the C library's heap every time, and
// its heap then grew and was given back to the system around them from call to call: on glibc,
// the 1024^2 epsilon fill took 1.5 times as long in two or three calls of every fifteen, and 1.3-
// 1.4 times as long in every call while the caller held a block of 1 to 4 MB between two fills
// (benchmarks/README.md, "A flood's queues kept for the next flood"). Now a flood borrows its
// queues from the calling thread: the last flood's, emptied but with their storage, when the
// thread has them. A flood running while another is (a fill called from a progress callback)
// gets queues of its own. Queues that hold more than flood_queues_kept_bytes of storage are freed
// when their flood ends, so that a thread keeps no more than that after filling a huge map.
// Threads that end (a tiled fill's workers) free theirs. The priority queue's buckets take their
// storage from the queue's own chunks (detail/bucket_arena.hpp), not from the C library's heap.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <memory>

#include "cell_fifo.hpp"
#include "radix_heap.hpp"
#include "raised_cell_fifo.hpp"

namespace gorge {
namespace detail {

/// A flood's queues: cells keyed by K (ordered height bits), indices of type I.
template <class K, class I>
struct flood_queues {
    radix_heap<K, I> open;  ///< the priority queue
    cell_fifo<I> pit;       ///< cells (or spans) raised to the level being flooded
    cell_fifo<I> trace;     ///< cells traced uphill
    /// the pit queue of the epsilon flood that finds the statistics' U (K: as wide as the heights)
    raised_cell_fifo<I, K> raised;

    void clear() {
        open.clear();
        pit.clear();
        trace.clear();
        raised.clear();
    }
    std::size_t storage_bytes() const {
        return open.storage_bytes() + pit.storage_bytes() + trace.storage_bytes() + raised.storage_bytes();
    }
};

/// Storage a thread keeps of its last flood's queues, at most: 32 MiB. One flood of a 1024^2
/// benchmark map leaves 3.6-4.8 MiB, a 4096^2 map's tiles on one thread 9-12 MiB; buckets keep
/// the largest size they reached, so floods of several maps leave more (29 MiB after floods of
/// both 1024^2 to 4096^2 maps, plain and epsilon), and queues above this are freed.
constexpr std::size_t flood_queues_kept_bytes = std::size_t(32) << 20;

/// A flood's queues, borrowed from the calling thread for the borrower's lifetime (see the header
/// comment): empty, and with the storage of the thread's last flood of the same types if it has one.
template <class K, class I>
class borrowed_flood_queues {
public:
    borrowed_flood_queues() : queues_(take()) {}
    ~borrowed_flood_queues() {
        if (queues_->storage_bytes() > flood_queues_kept_bytes) return;  // freed
        std::unique_ptr<flood_queues<K, I>>& kept = spare();
        if (!kept) kept = std::move(queues_);  // else another flood's are kept already: freed
    }
    borrowed_flood_queues(const borrowed_flood_queues&) = delete;
    borrowed_flood_queues& operator=(const borrowed_flood_queues&) = delete;

    flood_queues<K, I>& operator*() { return *queues_; }
    flood_queues<K, I>* operator->() { return queues_.get(); }

    /// Frees the queues the calling thread keeps (none while a flood has them).
    static void release_kept() { spare().reset(); }

private:
    /// The thread's queues not borrowed now (null while a flood has them, or before the first).
    static std::unique_ptr<flood_queues<K, I>>& spare() {
        thread_local std::unique_ptr<flood_queues<K, I>> kept;
        return kept;
    }
    static std::unique_ptr<flood_queues<K, I>> take() {
        std::unique_ptr<flood_queues<K, I>>& kept = spare();
        if (!kept) return std::make_unique<flood_queues<K, I>>();
        std::unique_ptr<flood_queues<K, I>> q = std::move(kept);
        q->clear();
        return q;
    }

    std::unique_ptr<flood_queues<K, I>> queues_;
};

}  // namespace detail
}  // namespace gorge
