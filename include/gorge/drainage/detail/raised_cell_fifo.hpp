// gorge/drainage/detail/raised_cell_fifo.hpp — the pit queue of the epsilon flood that also finds
// the statistics' U (epsilon_flood with Upper): each raised cell waits with its U, so that the
// flood reads no U from the array of U when it takes the cell. Not a public header.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

#include "../../config.hpp"
#include "cell_fifo.hpp"

namespace gorge {
namespace detail {

/// First-in, first-out queue of raised cells (indices of type I), each with its U: a height kept
/// as its bits in B, an unsigned integer of the height's size, so that the flood's queues, typed
/// by their key, hold it for either height type. Its storage grows as cell_fifo's does
/// (make_fifo_room), and callers clear() it once emptied.
template <class I, class B>
class raised_cell_fifo {
public:
    bool empty() const { return head_ == tail_; }
    /// Appends cell c with U `upper`.
    template <class T>
    void push(std::size_t c, T upper) {
        static_assert(sizeof(T) == sizeof(B), "U kept as its bits");
        if (GORGE_UNLIKELY(tail_ == cells_.size())) make_fifo_room(cells_, head_, tail_, 1);
        entry& slot = cells_[tail_++];
        slot.cell = static_cast<I>(c);
        std::memcpy(&slot.upper, &upper, sizeof upper);
    }
    /// Takes the front cell (the queue must not be empty) into c; returns its U.
    template <class T>
    T pop(std::size_t& c) {
        static_assert(sizeof(T) == sizeof(B), "U kept as its bits");
        const entry& slot = cells_[head_++];
        c = slot.cell;
        T upper;
        std::memcpy(&upper, &slot.upper, sizeof upper);
        return upper;
    }
    void clear() { head_ = tail_ = 0; }
    /// Bytes of storage it holds.
    std::size_t storage_bytes() const { return cells_.capacity() * sizeof(entry); }

private:
    struct entry {
        I cell;
        B upper;
    };

    std::vector<entry> cells_;
    std::size_t head_ = 0, tail_ = 0;
};

}  // namespace detail
}  // namespace gorge
