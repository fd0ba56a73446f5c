// gorge/drainage/detail/bucket_arena.hpp — storage for the radix heap's buckets: blocks of
// power-of-two sizes cut from a few large chunks, reused through a free list per size. Not a
// public header.
//
// A flood's radix heap (detail/radix_heap.hpp) holds about a thousand bucket vectors, which grow
// by doubling from a few bytes to a megabyte, some 5 MB in all on a 1024^2 map. From the C
// library's heap they took its fresh pages 4 KiB at a time: in the first flood of a process, 1,500
// of the 1,750 page faults of a 1024^2 epsilon fill, on a virtual machine whose faults cost 14 us
// each (benchmarks/README.md, "The radix heap's buckets in chunks of huge pages"). Here they come
// from chunks of 64 KiB (the first), 2 MiB (the second) and 4 MiB (the others):
// large_block_allocator aligns those of 2 MiB and more to 2 MiB and marks them for transparent
// huge pages, which fault in 512 times fewer pieces. A heap that stays small takes only the first
// chunk, and no huge page's zeroing.
// Blocks are 2^k bytes, k >= 4 (vectors that grow by doubling ask for such sizes anyway); a freed
// block waits in its size's free list for the next request of that size. Blocks above half the
// largest chunk are taken from large_block_allocator directly and given back when freed. Chunks
// are kept until the arena is destroyed: one arena per heap, whose buckets keep their capacity
// from flood to flood anyway (detail/flood_queues.hpp), or give it all back at once for the next
// flood to carve the same chunks again from their start (reuse(); gorge::mpi's tile floods).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../config.hpp"
#include "../../grid/grid.hpp"
#include "height_bits.hpp"

namespace gorge {
namespace detail {

/// Blocks of 2^k bytes (k from smallest_class) from chunks kept for the arena's lifetime (see the
/// header comment). One thread at a time.
class bucket_arena {
public:
    bucket_arena() = default;
    bucket_arena(const bucket_arena&) = delete;
    bucket_arena& operator=(const bucket_arena&) = delete;
    ~bucket_arena() {
        for (const auto& c : chunks_) chunk_allocator().deallocate(c.first, c.second);
    }

    /// A block of at least `bytes` bytes (> 0), aligned to 16 bytes or more.
    void* allocate(std::size_t bytes) {
        if (bytes > largest_pooled) {
            void* const p = chunk_allocator().allocate(bytes);
            large_bytes_ += bytes;
            return p;
        }
        const int k = size_class(bytes);
        if (void* const p = free_[k]) {
            std::memcpy(&free_[k], p, sizeof(void*));  // its successor in the free list
            return p;
        }
        const std::size_t size = std::size_t(1) << k;
        if (left_ < size) new_chunk(size);
        void* const p = top_;
        top_ += size;
        left_ -= size;
        return p;
    }
    /// Gives back a block that allocate(bytes) returned.
    void deallocate(void* p, std::size_t bytes) noexcept {
        if (bytes > largest_pooled) {
            chunk_allocator().deallocate(static_cast<std::byte*>(p), bytes);
            large_bytes_ -= bytes;
            return;
        }
        give(p, size_class(bytes));
    }
    /// Takes back every block at once and carves the next ones from the start of its chunks again,
    /// in the order they were made: floods one after another reuse the same memory, whatever sizes
    /// their buckets reached. No block may be in use.
    void reuse() noexcept {
        GORGE_ASSERT(large_bytes_ == 0, "gorge: bucket_arena::reuse with a large block in use");
        for (void*& head : free_) head = nullptr;
        if (chunks_.empty()) return;
        chunk_ = 0;
        top_ = chunks_[0].first;
        left_ = chunks_[0].second;
    }
    /// Bytes of storage the arena holds: its chunks and its large blocks in use.
    std::size_t storage_bytes() const { return chunk_bytes_ + large_bytes_; }
    /// Bytes of the chunks an arena takes to hold `bytes` bytes of blocks, taken in order (the
    /// chunks' sizes from the first on, added until they reach `bytes`): what a memory budget
    /// counts for a queue of that size, since a chunk on huge pages may be resident as a whole.
    static std::size_t chunk_bytes_for(std::size_t bytes) {
        std::size_t total = first_chunk, next = huge_chunk;
        while (total < bytes) {
            total += next;
            next = largest_chunk;
        }
        return total;
    }

private:
    static constexpr int smallest_class = 4;  // 16-byte blocks: room for the free list's link, aligned for any entry
    static constexpr std::size_t first_chunk = std::size_t(64) << 10;
    static constexpr std::size_t huge_chunk = large_block_allocator<std::byte>::huge_page;
    static constexpr std::size_t largest_chunk = 2 * huge_chunk;
    static constexpr std::size_t largest_pooled = largest_chunk / 2;
    static constexpr int classes = 23;  // 2^22 = largest_chunk: every pooled size has its list
    static_assert((std::size_t(1) << (classes - 1)) >= largest_pooled, "a free list for every pooled size");

    static large_block_allocator<std::byte> chunk_allocator() { return {}; }
    /// k such that 2^(k-1) < bytes <= 2^k, at least smallest_class (bytes <= largest_pooled).
    static int size_class(std::size_t bytes) {
        const std::size_t below = (bytes - 1) >> smallest_class;
        return below == 0 ? smallest_class : smallest_class + 1 + static_cast<int>(highest_bit(below));
    }
    void give(void* p, int k) noexcept {
        std::memcpy(p, &free_[k], sizeof(void*));
        free_[k] = p;
    }
    /// Starts a chunk of room for at least `size` bytes; what the last one has left goes to the
    /// free lists, cut into the largest blocks that fit. (Chunks start 16-byte aligned and every
    /// block is a multiple of 16 bytes, so every block is 16-byte aligned.)
    void new_chunk(std::size_t size) {
        for (int k = classes - 1; k >= smallest_class; --k)
            while (left_ >= (std::size_t(1) << k)) {
                give(top_, k);
                top_ += std::size_t(1) << k;
                left_ -= std::size_t(1) << k;
            }
        if (chunk_ + 1 < chunks_.size() && chunks_[chunk_ + 1].second >= size) {  // made before reuse()
            ++chunk_;
            top_ = chunks_[chunk_].first;
            left_ = chunks_[chunk_].second;
            return;
        }
        std::size_t bytes = next_chunk_;
        while (bytes < size) bytes *= 2;
        chunks_.reserve(chunks_.size() + 1);  // so that the insert below cannot throw and lose the chunk
        std::byte* const chunk = chunk_allocator().allocate(bytes);
        // After the current chunk: a chunk made before reuse() too small for `size` comes next.
        chunk_ = chunks_.empty() ? 0 : chunk_ + 1;
        chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(chunk_), std::make_pair(chunk, bytes));
        chunk_bytes_ += bytes;
        top_ = chunk;
        left_ = bytes;
        // After the first: chunks on huge pages (a heap that outgrows 64 KiB grows to megabytes).
        next_chunk_ = bytes < huge_chunk ? huge_chunk : largest_chunk;
    }

    std::vector<std::pair<std::byte*, std::size_t>> chunks_;
    std::size_t chunk_ = 0;  // the chunk top_ carves from
    void* free_[classes] = {};
    std::byte* top_ = nullptr;  // the current chunk's room: left_ bytes from top_
    std::size_t left_ = 0;
    std::size_t next_chunk_ = first_chunk;
    std::size_t chunk_bytes_ = 0;
    std::size_t large_bytes_ = 0;
};

/// Allocator of a radix heap's buckets from its bucket_arena. A default-constructed one has no
/// arena and must be replaced (move assignment takes the other vector's allocator) before its
/// container allocates.
template <class T>
class bucket_allocator {
public:
    using value_type = T;
    using propagate_on_container_copy_assignment = std::true_type;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    static_assert(alignof(T) <= 16, "bucket_arena aligns its blocks to 16 bytes");

    bucket_allocator() noexcept = default;
    explicit bucket_allocator(bucket_arena* arena) noexcept : arena_(arena) {}
    template <class U>
    bucket_allocator(const bucket_allocator<U>& other) noexcept : arena_(other.arena()) {}  // NOLINT(google-explicit-constructor)

    T* allocate(std::size_t n) {
        GORGE_ASSERT(arena_ != nullptr, "gorge: a bucket allocator without an arena");
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_alloc();
        return static_cast<T*>(arena_->allocate(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept { arena_->deallocate(p, n * sizeof(T)); }
    bucket_arena* arena() const noexcept { return arena_; }

    template <class U>
    bool operator==(const bucket_allocator<U>& other) const noexcept {
        return arena_ == other.arena();
    }
    template <class U>
    bool operator!=(const bucket_allocator<U>& other) const noexcept {
        return arena_ != other.arena();
    }

private:
    bucket_arena* arena_ = nullptr;
};

}  // namespace detail
}  // namespace gorge
