// gorge/drainage/detail/radix_heap.hpp — the depression fills' priority queue.
// A monotone radix heap over ordered height bits (detail/height_bits.hpp). Not a public header.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "../../config.hpp"
#include "bucket_arena.hpp"
#include "height_bits.hpp"

namespace gorge {
namespace detail {

/// Monotone priority queue of cells keyed by ordered height bits: a radix heap (Ahuja, Mehlhorn,
/// Orlin & Tarjan 1990, "Faster algorithms for the shortest path problem", J. ACM 37(2)) over
/// 8-bit digits. It needs every pushed key to be >= the last popped one, which holds for
/// Priority-Flood: a cell enters the queue only when it is higher than the cell being processed.
/// Cells whose key equals the last popped key wait in one bucket; any other key goes to level l,
/// the highest digit in which it differs from the last popped key, and there to the bucket of its
/// digit l (256 per level). Every key on a lower level, or in a lower bucket of the same level, is
/// smaller, so the smallest key lies in the first non-empty bucket of the lowest non-empty level
/// (found through bit masks). When the equal bucket runs empty, that bucket is moved: its minimum
/// becomes the last key and its cells go to the equal bucket or to lower levels, so a cell moves
/// at most once per digit (four times for float keys, usually once or twice), by sequential vector
/// operations instead of a binary heap's cache-missing sifts.
/// Order: cells leave by increasing key and, among equal keys, the latest pushed first. Each
/// bucket keeps its cells in push order, because cells are only ever moved into buckets that are
/// empty (every level below the one moved from, and the equal bucket). (No fill's result depends
/// on that order; it keeps runs reproducible step by step.)
/// Dead cells (pop_live): a flood's cell waits in the queue because it had a neighbour not yet
/// reached, but by the time the flood level gets to it most such neighbours have been reached
/// from elsewhere, and then the cell has nothing left to do (93 % of the queued cells on the
/// noisy 1024^2 benchmark map). A moved bucket drops those cells instead of moving them down a
/// level and popping them later; the cells left still leave in the order above.
/// Storage: the buckets' blocks come from the heap's own bucket_arena (detail/bucket_arena.hpp),
/// whose vectors point to it: a heap is neither copied nor moved.
template <class K, class I>
class radix_heap {
public:
    /// A queued cell and its key: the queue's storage holds one per queued cell, in vectors that
    /// grow by doubling.
    struct entry {
        K key;
        I cell;
    };

    radix_heap() : equal_(bucket_allocator<entry>(arena_.get())) {
        for (level_buckets& lb : levels_)
            for (bucket_vector& b : lb.bucket) b = bucket_vector(bucket_allocator<entry>(arena_.get()));
    }
    radix_heap(const radix_heap&) = delete;
    radix_heap& operator=(const radix_heap&) = delete;

    bool empty() const { return size_ == 0; }
    void push(K key, I cell) {
        GORGE_ASSERT(key >= last_, "gorge: radix_heap keys must not decrease");
        if (key == last_)
            equal_.push_back({key, cell});
        else
            push_to_level({key, cell});
        ++size_;
    }
    /// Key of the cell last returned by pop().
    K last_key() const { return last_; }
    /// Empties the queue, keeping the buckets' storage, and lets any key be pushed again (as when
    /// new).
    void clear() {
        equal_.clear();
        for (level_buckets& lb : levels_) {
            for (bucket_vector& b : lb.bucket) b.clear();
            for (std::uint64_t& word : lb.occupied) word = 0;
            lb.occupied_words = 0;
        }
        non_empty_levels_ = 0;
        last_ = 0;
        size_ = 0;
    }
    /// Empties the queue like clear(), and gives every bucket's storage back to the arena, which
    /// carves the next blocks from the start of its chunks again (bucket_arena::reuse): queues of
    /// floods one after another then take the same memory, instead of each bucket keeping the
    /// largest size it reached in any of them.
    void clear_storage() {
        clear();
        bucket_vector(bucket_allocator<entry>(arena_.get())).swap(equal_);
        for (level_buckets& lb : levels_)
            for (bucket_vector& b : lb.bucket) bucket_vector(bucket_allocator<entry>(arena_.get())).swap(b);
        arena_->reuse();
    }
    /// Bytes of storage the buckets hold: their arena's, blocks not in use included.
    std::size_t storage_bytes() const { return arena_->storage_bytes(); }
    /// A lower bound of the smallest key in the queue (the largest key when it is empty), read from
    /// the buckets without moving cells: the equal bucket's key, or else the smallest key the
    /// first non-empty bucket can hold. Every key on level l agrees with last_key() on the digits
    /// above l (moving a bucket keeps that true), and the bucket fixes digit l.
    K min_key_bound() const {
        if (!equal_.empty()) return last_;
        if (non_empty_levels_ == 0) return ~K(0);
        const int level = lowest_bit(non_empty_levels_);
        const K d = static_cast<K>(first_bucket(levels_[static_cast<std::size_t>(level)]));
        const int shift = level * digit_bits;
        const int above = shift + digit_bits;
        const K high = above >= key_bits ? K(0) : static_cast<K>((last_ >> above) << above);
        return static_cast<K>(high | static_cast<K>(d << shift));
    }
    /// Removes and returns a cell of the smallest key; the queue must not be empty.
    I pop() {
        GORGE_ASSERT(size_ != 0, "gorge: radix_heap pop of an empty queue");
        I cell{};
        pop_live(cell, [](I) { return true; });  // every cell live: never runs dry here
        return cell;
    }
    /// Like pop(), dropping dead cells on the way (see the class comment): a bucket that is moved
    /// keeps only the cells for which live(cell) holds. False, and nothing popped, when no cell
    /// is left. The cells in the equal bucket are not tested: the caller finds such a cell with
    /// nothing to do anyway.
    template <class Live>
    bool pop_live(I& cell, Live&& live) {
        if (equal_.empty() && !refill(live)) return false;
        cell = equal_.back().cell;
        equal_.pop_back();
        --size_;
        return true;
    }

private:
    static constexpr int digit_bits = 8;
    static constexpr std::size_t digit_values = std::size_t(1) << digit_bits;
    static constexpr int key_bits = static_cast<int>(sizeof(K)) * std::numeric_limits<unsigned char>::digits;
    static constexpr int levels = key_bits / digit_bits;
    static constexpr std::size_t mask_words = digit_values / 64;
    static_assert(key_bits % digit_bits == 0 && levels <= 32, "whole digits, one level bit each");
    using bucket_vector = std::vector<entry, bucket_allocator<entry>>;
    struct level_buckets {
        bucket_vector bucket[digit_values];
        std::uint64_t occupied[mask_words] = {};  // bit d % 64 of word d / 64: bucket d is not empty
        unsigned occupied_words = 0;              // bit w: occupied[w] is not 0
    };
    static_assert(mask_words <= 32, "one bit per occupancy word");

    /// The first non-empty bucket of lb, which must have one (no branch: refills come every pop or
    /// two on rough maps, and which word holds the first bucket is hard to predict).
    static std::size_t first_bucket(const level_buckets& lb) {
        const std::size_t w = static_cast<std::size_t>(lowest_bit(lb.occupied_words));
        return w * 64 + static_cast<std::size_t>(lowest_bit(lb.occupied[w]));
    }
    /// Empties bucket d of lb in the occupancy masks (the level's too when it was the last).
    void mark_empty(level_buckets& lb, int level, std::size_t d) {
        std::uint64_t& word = lb.occupied[d / 64];
        word &= ~(std::uint64_t(1) << (d % 64));
        lb.occupied_words &= ~(static_cast<unsigned>(word == 0) << (d / 64));
        non_empty_levels_ &= ~(static_cast<std::uint32_t>(lb.occupied_words == 0) << level);
    }
    /// Files e on level l, the highest digit in which its key differs from the last key; a key
    /// equal to the last key goes to level 0, into the bucket of the last key's own digit 0,
    /// where no other key can go (refill relies on that; push never sends such a key here).
    void push_to_level(const entry& e) {
        // `| 1` puts the equal key on level 0 without a branch, and moves no other difference.
        constexpr unsigned digit = digit_bits;
        const unsigned level = highest_bit(static_cast<K>((e.key ^ last_) | K(1))) / digit;
        const std::size_t d = static_cast<std::size_t>(e.key >> (level * digit)) & (digit_values - 1);
        level_buckets& lb = levels_[level];
        lb.bucket[d].push_back(e);
        lb.occupied[d / 64] |= std::uint64_t(1) << (d % 64);
        lb.occupied_words |= 1u << (d / 64);
        non_empty_levels_ |= std::uint32_t(1) << level;
    }
    /// Moves the first non-empty bucket down, keeping only its live cells (see pop_live), until the
    /// equal bucket holds a cell; false when the queue ran dry.
    template <class Live>
    bool refill(Live&& live) {
        while (non_empty_levels_ != 0) {
            const int level = lowest_bit(non_empty_levels_);
            level_buckets& lb = levels_[static_cast<std::size_t>(level)];
            const std::size_t d = first_bucket(lb);
            mark_empty(lb, level, d);
            bucket_vector& from = lb.bucket[d];
            if (level == 0) {
                // All of its keys are equal (level 0 leaves no digit to differ in): the bucket
                // becomes the equal bucket as it is (which is empty: swapped, not copied).
                last_ = from.front().key;
                equal_.swap(from);
                return true;
            }
            std::size_t kept = 0;
            K smallest = ~K(0);
            for (const entry& e : from)
                if (live(e.cell)) {
                    smallest = e.key < smallest ? e.key : smallest;
                    from[kept++] = e;
                }
            size_ -= from.size() - kept;
            from.resize(kept);
            if (kept == 0) continue;
            last_ = smallest;
            if (kept == 1) {
                equal_.swap(from);
                return true;
            }
            // Every cell now agrees with the last key on digit `level` and above: it goes to a lower
            // level, all of them empty, so the push order is kept. The cells of the smallest key land
            // together in level 0's bucket of its digit 0 (push_to_level), which then becomes the
            // equal bucket (empty, as it was popped dry): one loop without a branch on the key.
            for (const entry& e : from) push_to_level(e);
            from.clear();
            const std::size_t d0 = static_cast<std::size_t>(last_) & (digit_values - 1);
            equal_.swap(levels_[0].bucket[d0]);
            mark_empty(levels_[0], 0, d0);
            return true;
        }
        GORGE_ASSERT(size_ == 0, "gorge: radix_heap ran dry with cells counted");
        return false;
    }

    std::unique_ptr<bucket_arena> arena_ = std::make_unique<bucket_arena>();  // first: destroyed after the buckets
    bucket_vector equal_;
    std::vector<level_buckets> levels_ = std::vector<level_buckets>(levels);  // 8 KiB each (256 buckets of 32 bytes): not on the stack
    std::uint32_t non_empty_levels_ = 0;
    K last_ = 0;
    std::size_t size_ = 0;
};

}  // namespace detail
}  // namespace gorge
