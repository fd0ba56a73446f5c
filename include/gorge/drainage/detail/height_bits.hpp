// gorge/drainage/detail/height_bits.hpp — heights as bit patterns, for the depression fills.
// next_up (one ulp up, the epsilon fill's step), ordered_bits (an unsigned key whose order is the
// heights' order: the radix heap's keys) and its inverse, and the bit scans the fills' masks use.
// Not a public header.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "../../config.hpp"

namespace gorge {
namespace detail {

/// The next representable value above finite v (std::nextafter(v, +inf)), by integer steps on
/// the bit pattern. -0 and +0 both step to the smallest positive subnormal, and the largest
/// negative subnormal (-denorm_min) steps to +0, never -0. The largest finite value steps to
/// +infinity, which the caller detects.
inline float next_up(float v) {
    const float tiny = std::numeric_limits<float>::denorm_min();
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (v > 0.0f) {
        ++bits;  // magnitude up for positives
    } else {
        if (v == 0.0f) return tiny;
        if (v == -tiny) return 0.0f;
        --bits;  // magnitude down for negatives
    }
    std::memcpy(&v, &bits, sizeof bits);
    return v;
}
inline double next_up(double v) {
    const double tiny = std::numeric_limits<double>::denorm_min();
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (v > 0.0) {
        ++bits;
    } else {
        if (v == 0.0) return tiny;
        if (v == -tiny) return 0.0;
        --bits;
    }
    std::memcpy(&v, &bits, sizeof bits);
    return v;
}

/// Integer whose unsigned order equals the numeric order of the (non-NaN) float or double v,
/// except that -0 sorts before +0 (the fills store -0 as +0, so that never matters).
inline std::uint32_t ordered_bits(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    // Negative values: flip every bit (larger magnitudes sort first); others: set the sign bit.
    const std::uint32_t flip = (static_cast<std::uint32_t>(0) - (bits >> 31)) | 0x80000000u;
    return bits ^ flip;
}
inline std::uint64_t ordered_bits(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    const std::uint64_t flip = (static_cast<std::uint64_t>(0) - (bits >> 63)) | 0x8000000000000000u;
    return bits ^ flip;
}

/// Inverse of ordered_bits.
inline float from_ordered_bits(std::uint32_t key) {
    // Keys with the top bit set came from non-negative values (sign bit was set), others from
    // negative ones (all bits were flipped).
    const std::uint32_t flip = (key >> 31) ? 0x80000000u : ~std::uint32_t(0);
    const std::uint32_t bits = key ^ flip;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}
inline double from_ordered_bits(std::uint64_t key) {
    const std::uint64_t flip = (key >> 63) ? 0x8000000000000000u : ~std::uint64_t(0);
    const std::uint64_t bits = key ^ flip;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

/// Index of the highest set bit of k (k != 0).
template <class K>
inline unsigned highest_bit(K k) {
    static_assert(std::is_unsigned<K>::value && sizeof(K) <= 8, "highest_bit of an unsigned integer");
    GORGE_ASSERT(k != 0, "gorge: highest_bit of 0");
#if defined(__GNUC__) || defined(__clang__)
    constexpr unsigned top = 63;
    return top - static_cast<unsigned>(__builtin_clzll(static_cast<unsigned long long>(k)));
#else
    unsigned n = 0;
    for (; k > 1; k >>= 1) ++n;
    return n;
#endif
}

/// Index of the lowest set bit of k (k != 0).
template <class K>
inline int lowest_bit(K k) {
    static_assert(std::is_unsigned<K>::value && sizeof(K) <= 8, "lowest_bit of an unsigned integer");
    GORGE_ASSERT(k != 0, "gorge: lowest_bit of 0");
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(static_cast<unsigned long long>(k));
#else
    int n = 0;
    for (; (k & 1u) == 0; k >>= 1) ++n;
    return n;
#endif
}

}  // namespace detail
}  // namespace gorge
