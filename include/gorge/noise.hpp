// gorge/noise.hpp — quintic gradient noise with analytic derivatives, and its fractal sum.
//
// Every function returns glm::vec<3,T>(value, d/dx, d/dy): the erosion filter needs the height
// *and* its gradient, and finite differences would cost three more evaluations and add error.
// The derivatives are exact (not approximations) and the noise is C2-continuous (quintic fade,
// Perlin 2002, "Improving Noise"), so its gradient is continuous across lattice lines.
//
// Guarantees: deterministic for a given seed and hash policy; a point's value does not depend on
// which other points are evaluated (chunk- and tile-friendly). Limit: the lattice coordinate
// floor(q) must fit in a signed 32-bit int; far from the origin `float` loses fractional bits
// in q, so use `double` for |q| beyond about 10^4.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "detail/math.hpp"
#include "hash.hpp"

namespace gorge {

/// Quintic gradient noise at q with its analytic gradient: (value, d/dqx, d/dqy). Lattice
/// gradients are Hash::lattice2 vectors (components in [-1, 1), not normalised), so the value lies
/// well inside [-1, 1] (about ±0.5 in practice).
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE glm::vec<3, T> gradient_noise(glm::vec<2, T> q, std::uint32_t seed = 0) {
    using ops = detail::value_ops<T>;
    using V2 = detail::vec2<T>;
    const V2 i = detail::floor(q);
    const V2 f = q - i;
    const auto ix = ops::to_uint(ops::to_int(i.x));
    const auto iy = ops::to_uint(ops::to_int(i.y));
    using U = detail::uint_t<T>;
    const U one = U(1u);

    // Quintic fade u(f) = 6f^5 - 15f^4 + 10f^3 and its derivative 30f^2 (f - 1)^2.
    const V2 u = f * f * f * (f * (f * T(6) - T(15)) + T(10));
    const V2 du = T(30) * f * f * (f * (f - T(2)) + T(1));

    const V2 ga = Hash::template lattice2<T>(ix, iy, seed);
    const V2 gb = Hash::template lattice2<T>(ix + one, iy, seed);
    const V2 gc = Hash::template lattice2<T>(ix, iy + one, seed);
    const V2 gd = Hash::template lattice2<T>(ix + one, iy + one, seed);

    const T va = detail::dot(ga, f);
    const T vb = detail::dot(gb, f - V2(T(1), T(0)));
    const T vc = detail::dot(gc, f - V2(T(0), T(1)));
    const T vd = detail::dot(gd, f - V2(T(1), T(1)));
    const T k = va - vb - vc + vd;

    const T value = va + u.x * (vb - va) + u.y * (vc - va) + u.x * u.y * k;
    const V2 grad = ga + u.x * (gb - ga) + u.y * (gc - ga) + u.x * u.y * (ga - gb - gc + gd) +
                    du * V2(u.y * k + vb - va, u.x * k + vc - va);
    return {value, grad.x, grad.y};
}

/// Parameters of a fractal (fBm) sum. Defaults are the published erosion demo's height function.
template <class T>
struct fbm_params {
    T frequency = T(3);   ///< frequency of the first octave, > 0 (default 3)
    int octaves = 3;      ///< number of octaves, 0..32 (default 3); 0 gives the zero field
    T lacunarity = T(2);  ///< frequency factor per octave, finite and > 0 (default 2)
    T gain = T(0.1);      ///< amplitude factor per octave, finite (default 0.1; 0.5 is classic fBm)

    /// Throws std::invalid_argument naming the first bad parameter.
    void validate() const {
        if (const char* bad = first_invalid()) {
            throw std::invalid_argument(std::string("gorge::fbm_params: invalid ") + bad);
        }
    }
    /// Name and rule of the first bad parameter, or nullptr when all are valid.
    const char* first_invalid() const {
        if (!(std::isfinite(frequency) && frequency > T(0))) return "frequency (must be finite and > 0)";
        if (octaves < 0 || octaves > 32) return "octaves (must be in 0..32)";
        if (!(std::isfinite(lacunarity) && lacunarity > T(0))) return "lacunarity (must be finite and > 0)";
        if (!std::isfinite(gain)) return "gain (must be finite)";
        return nullptr;
    }
};

/// Fractal sum of gradient noise with its exact gradient with respect to p:
///     n = sum_o amp_o * (value, freq_o * gradient) at q = p * freq_o,
/// freq_0 = params.frequency, freq_{o+1} = freq_o * lacunarity, amp_0 = 1, amp_{o+1} = amp_o * gain.
/// Precondition (asserted in debug builds): params.validate() passes.
template <class Hash = pcg3d_hash, class T, class S>
GORGE_FORCEINLINE glm::vec<3, T> fbm(glm::vec<2, T> p, const fbm_params<S>& params,
                                     std::uint32_t seed = 0) {
    GORGE_ASSERT(params.first_invalid() == nullptr, "gorge::fbm: invalid fbm_params");
    glm::vec<3, T> n(T(0), T(0), T(0));
    T freq = T(params.frequency);
    T amp = T(1);
    for (int o = 0; o < params.octaves; ++o) {
        const glm::vec<3, T> v = gradient_noise<Hash>(p * freq, seed);
        n += amp * glm::vec<3, T>(v.x, freq * v.y, freq * v.z);
        freq *= T(params.lacunarity);
        amp *= T(params.gain);
    }
    return n;
}

}  // namespace gorge
