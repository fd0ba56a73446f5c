// gorge/erosion/detail/droplet_start.hpp — where droplet k starts: SplitMix64 (Steele, Lea &
// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014) used as a counter-based
// hash of (seed, k), its two 32-bit halves mapped uniformly onto a start rectangle (see the
// header comment of gorge/erosion/droplet.hpp).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include <glm/vec2.hpp>

namespace gorge {
namespace detail {

/// SplitMix64's finaliser (Steele, Lea & Flood 2014; constants from Vigna's splitmix64.c).
inline std::uint64_t splitmix64_mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/// SplitMix64's golden-ratio increment.
constexpr std::uint64_t splitmix64_gamma = 0x9E3779B97F4A7C15ull;

/// 64 random bits for droplet `index` of the stream `seed` (unsigned arithmetic wraps by design).
inline std::uint64_t droplet_bits(std::uint64_t seed, std::uint64_t index) {
    return splitmix64_mix(splitmix64_mix(seed) + (index + 1) * splitmix64_gamma);
}

/// Uniform value in [lo, hi) from 32 random bits; `below_hi` is the largest T below hi.
template <class T>
inline T droplet_uniform(std::uint32_t bits, std::ptrdiff_t lo, std::ptrdiff_t hi, T below_hi) {
    constexpr double two_pow_minus_32 = 1.0 / 4294967296.0;
    const T v = T(double(lo) + double(bits) * two_pow_minus_32 * double(hi - lo));
    return v < below_hi ? v : below_hi;
}

/// Start rectangle [x0, x1) × [y0, y1) (cell coordinates) and the largest T below each upper end.
template <class T>
struct droplet_start_rect {
    std::ptrdiff_t x0, x1, y0, y1;
    T below_x1, below_y1;
};

template <class T>
droplet_start_rect<T> make_droplet_start_rect(std::ptrdiff_t x0, std::ptrdiff_t x1, std::ptrdiff_t y0,
                                              std::ptrdiff_t y1) {
    return {x0, x1, y0, y1, std::nextafter(T(x1), T(x0)), std::nextafter(T(y1), T(y0))};
}

/// Start position of droplet `index` of the stream `seed` in `rect`: the top 32 bits pick x,
/// the low 32 bits pick y.
template <class T>
glm::vec<2, T> droplet_start(std::uint64_t seed, std::uint64_t index, const droplet_start_rect<T>& rect) {
    const std::uint64_t bits = droplet_bits(seed, index);
    return {droplet_uniform<T>(static_cast<std::uint32_t>(bits >> 32), rect.x0, rect.x1, rect.below_x1),
            droplet_uniform<T>(static_cast<std::uint32_t>(bits), rect.y0, rect.y1, rect.below_y1)};
}

}  // namespace detail
}  // namespace gorge
