// gorge/drainage/detail/cell_fifo.hpp — the depression fills' first-in, first-out queue of cells.
// Not a public header.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "../../config.hpp"
#include "../d8.hpp"
#include "d8_window.hpp"

namespace gorge {
namespace detail {

/// Grows a first-in, first-out queue's storage: doubles it, from 64 entries.
template <class Storage>
void grow_fifo_storage(Storage& storage) {
    constexpr std::size_t first_size = 64;
    storage.resize(std::max(first_size, 2 * storage.size()));
}

/// Makes room for `room` more entries past the tail of a first-in, first-out queue's `storage`,
/// whose entries [head, tail) wait: when at least half of it lies before the head, the waiting
/// entries move to the front; when that is not enough, the storage grows (grow_fifo_storage).
template <class Storage>
GORGE_COLD_NOINLINE void make_fifo_room(Storage& storage, std::size_t& head, std::size_t& tail, std::size_t room) {
    if (2 * head >= storage.size()) {
        std::copy(storage.begin() + static_cast<std::ptrdiff_t>(head), storage.begin() + static_cast<std::ptrdiff_t>(tail),
                  storage.begin());
        tail -= head;
        head = 0;
        if (tail + room <= storage.size()) return;
    }
    grow_fifo_storage(storage);
}

/// First-in, first-out queue of cell indices: the traces' queue and the pit queues. Appending the
/// cells of a D8 mask writes all eight slots and keeps as many as the mask has cells, so the
/// storage always has eight slots of room past the tail. When it must grow while at least half of
/// it lies before the head (cells already taken), it moves the waiting cells to the front instead:
/// a trace across a whole map keeps about its wave front, not every cell it passed, and a cell is
/// moved only when the cells taken outnumber those waiting (O(1) per cell). Callers clear() a
/// queue they have emptied, so that it starts over at the front of its storage, still in cache.
template <class I>
class cell_fifo {
public:
    bool empty() const { return head_ == tail_; }
    std::size_t size() const { return tail_ - head_; }
    void push(I c) {
        make_room();
        cells_[tail_++] = c;
    }
    /// Appends the neighbours in D8 `mask` of cell c (k increasing).
    void push_neighbours(std::size_t c, unsigned mask, const d8_mask_offsets<I>& offsets) {
        make_room();
        const typename d8_mask_offsets<I>::offset* GORGE_RESTRICT off = offsets.of(mask);
        const I from = static_cast<I>(c);
        // Built in a local array, which nothing else can address, so that the compiler makes it
        // one vector add (it kept eight scalar adds when the sums went straight to the storage).
        I cells[d8_neighbours];
        for (int j = 0; j < d8_neighbours; ++j) cells[j] = static_cast<I>(from + static_cast<I>(off[j]));
        std::memcpy(cells_.data() + tail_, cells, sizeof cells);
        tail_ += static_cast<std::size_t>(mask_cells(mask));
    }
    /// Takes the front cell (the queue must not be empty).
    I pop() { return cells_[head_++]; }
    void clear() { head_ = tail_ = 0; }
    /// Cells the storage holds room for (for tests of its bound).
    std::size_t storage() const { return cells_.size(); }
    /// Bytes of storage it holds.
    std::size_t storage_bytes() const { return cells_.capacity() * sizeof(I); }

private:
    void make_room() {
        if (GORGE_UNLIKELY(tail_ + d8_neighbours > cells_.size())) make_fifo_room(cells_, head_, tail_, d8_neighbours);
    }

    std::vector<I> cells_;
    std::size_t head_ = 0, tail_ = 0;
};

}  // namespace detail
}  // namespace gorge
