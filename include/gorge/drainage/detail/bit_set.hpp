// gorge/drainage/detail/bit_set.hpp — one bit per cell: the depression fills' visited flags.
// Not a public header.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../../config.hpp"
#include "../../grid/grid.hpp"

namespace gorge {
namespace detail {

/// One bit per cell. The flood's visited flags for a 4096 x 4096 map take 2 MiB this way, which
/// stays in cache, where a byte per cell (16 MiB) would miss for every cell taken from the
/// priority queue, whose cells lie all over the map.
class bit_set {
public:
    bit_set() = default;
    /// n bits, all set to value (plus one spare word, so that three() reads across a word
    /// boundary without a check).
    bit_set(std::size_t n, bool value) { assign(n, value); }
    /// Makes it n bits, all set to value, reusing the storage.
    void assign(std::size_t n, bool value) {
        words_.assign((n + word_bits - 1) / word_bits + 1, value ? ~std::uint64_t(0) : std::uint64_t(0));
    }
    bool test(std::size_t i) const { return (words_[i / word_bits] >> (i % word_bits)) & 1u; }
    void set(std::size_t i) { words_[i / word_bits] |= std::uint64_t(1) << (i % word_bits); }
    void reset(std::size_t i) { words_[i / word_bits] &= ~(std::uint64_t(1) << (i % word_bits)); }
    /// Clears bits begin .. end - 1 (end at most n).
    void reset_range(std::size_t begin, std::size_t end) {
        if (begin >= end) return;
        const std::size_t first = begin / word_bits, last = (end - 1) / word_bits;
        const std::uint64_t all = ~std::uint64_t(0);
        const std::uint64_t head = all << (begin % word_bits);            // bits from begin on
        const std::uint64_t tail = all >> (word_bits - 1 - (end - 1) % word_bits);  // bits up to end - 1
        if (first == last) {
            words_[first] &= ~(head & tail);
            return;
        }
        words_[first] &= ~head;
        for (std::size_t k = first + 1; k < last; ++k) words_[k] = 0;
        words_[last] &= ~tail;
    }
    /// Whether bits begin .. end - 1 are all set (end at most n).
    bool all_set(std::size_t begin, std::size_t end) const {
        if (begin >= end) return true;
        const std::size_t first = begin / word_bits, last = (end - 1) / word_bits;
        const std::uint64_t all = ~std::uint64_t(0);
        const std::uint64_t head = all << (begin % word_bits);
        const std::uint64_t tail = all >> (word_bits - 1 - (end - 1) % word_bits);
        if (first == last) return (words_[first] & head & tail) == (head & tail);
        std::uint64_t missing = ~words_[first] & head;
        for (std::size_t k = first + 1; k < last; ++k) missing |= ~words_[k];
        return (missing | (~words_[last] & tail)) == 0;
    }
    /// Sets bits i, i + 1 and i + 2 where bits 0, 1 and 2 of `bits` are set (i + 2 below n). No
    /// branch on whether they cross into the next word (the spare word is there).
    void set_three(std::size_t i, unsigned bits) {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        // The two bytes from i / 8 on, as three() reads them: one update instead of one per word
        // (fewer instructions on the traces' path; benchmarks/README.md, "A traced cell in fewer instructions").
        unsigned char* const at = reinterpret_cast<unsigned char*>(words_.data()) + i / byte_bits;
        std::uint16_t pair = 0;
        std::memcpy(&pair, at, sizeof pair);
        pair = static_cast<std::uint16_t>(pair | (bits << (i % byte_bits)));
        std::memcpy(at, &pair, sizeof pair);
#else
        const std::size_t w = i / word_bits, s = i % word_bits;
        words_[w] |= std::uint64_t(bits) << s;
        words_[w + 1] |= (std::uint64_t(bits) >> 1) >> (word_bits - 1 - s);  // two legal shifts
#endif
    }
    /// Bits i, i + 1 and i + 2 as bits 0, 1 and 2 of the result (i + 2 must be below n).
    unsigned three(std::size_t i) const {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        // Little-endian words: bit i is bit i % 8 of byte i / 8, so the three bits lie in the two
        // bytes from i / 8 on (the spare word keeps the second byte inside the storage).
        std::uint16_t pair = 0;
        std::memcpy(&pair, reinterpret_cast<const unsigned char*>(words_.data()) + i / byte_bits, sizeof pair);
        return (static_cast<unsigned>(pair) >> (i % byte_bits)) & 7u;
#else
        const std::size_t w = i / word_bits;
        const std::size_t s = i % word_bits;
        // The second shift is split so that s == 0 shifts by 64 in two legal steps (giving 0).
        const std::uint64_t bits = (words_[w] >> s) | ((words_[w + 1] << 1) << (word_bits - 1 - s));
        return static_cast<unsigned>(bits & 7u);
#endif
    }

private:
    static constexpr std::size_t word_bits = 64;
    static constexpr std::size_t byte_bits = 8;
    std::vector<std::uint64_t, large_block_allocator<std::uint64_t>> words_;
};

}  // namespace detail
}  // namespace gorge
