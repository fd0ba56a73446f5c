// gorge/filter/demo_pipeline.hpp — the published erosion demo as one function: fBm height, fade target,
// erosion filter, height offset.
//
// This is the terrain of Rune Skovbo Johansen's "Advanced Terrain Erosion Filter" demo, pinned by
// the spec: a 3-octave gradient-noise fBm scaled to ±0.125 around 0.5, its fade target taken from
// the noise value, the filter with default parameters, and the height offset (-0.65, 0). The
// examples, the GLSL parity test and the benchmarks all use it, so it lives here once.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstdint>

#include "erosion_filter.hpp"
#include "../noise/gradient_noise.hpp"

namespace gorge {

/// Constants of the published demo pipeline.
namespace demo {
constexpr double height_amplitude = 0.125;   ///< fBm output scale
constexpr double fade_range = 0.6;           ///< |fBm| at which the fade target reaches ±1, relative to the amplitude
constexpr double base_height = 0.5;          ///< terrain height = base_height + 0.5 * fBm
constexpr double height_offset_o = -0.65;    ///< height offset o of apply_height_offset
constexpr double height_offset_k = 0.0;      ///< height offset k of apply_height_offset

/// The demo's height fBm: frequency 3, 3 octaves, lacunarity 2, gain 0.1 (fbm_params defaults).
template <class S> fbm_params<S> height_fbm() { return fbm_params<S>{}; }
}  // namespace demo

/// One sample of the demo terrain.
template <class T>
struct demo_sample {
    T height;        ///< eroded height, around 0.4..0.6
    T ridge_map;     ///< filter ridge map, -1 creases .. +1 ridges
    T input_height;  ///< height before erosion
};

/// The published demo pipeline at p (the demo's texture coordinates: a unit square shows a few
/// hills). S is the scalar type of the parameters (float for float batches).
template <class Hash = pcg3d_hash, class T, class S>
GORGE_FORCEINLINE demo_sample<T> demo_pipeline(glm::vec<2, T> p, const erosion_params<S>& params,
                                               std::uint32_t seed = 0) {
    const fbm_params<S> height_params = demo::height_fbm<S>();
    const glm::vec<3, T> n = fbm<Hash>(p, height_params, seed) * detail::constant<T>(demo::height_amplitude);
    const T fade_target =
        detail::clamp(n.x / detail::constant<T>(demo::height_amplitude * demo::fade_range), T(-1), T(1));
    const glm::vec<3, T> terrain(detail::constant<T>(demo::base_height) + T(0.5) * n.x, T(0.5) * n.y, T(0.5) * n.z);
    const erosion_result<T> r = erosion_filter<Hash>(p, terrain, fade_target, params, seed);
    demo_sample<T> out;
    const glm::vec<2, T> offset(detail::constant<T>(demo::height_offset_o), detail::constant<T>(demo::height_offset_k));
    out.height = apply_height_offset(terrain.x, r, fade_target, offset);
    out.ridge_map = r.ridge_map;
    out.input_height = terrain.x;
    return out;
}

/// The demo pipeline with the published default erosion parameters.
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE demo_sample<T> demo_pipeline(glm::vec<2, T> p, std::uint32_t seed = 0) {
    return demo_pipeline<Hash>(p, erosion_params<detail::scalar_t<T>>{}, seed);
}

}  // namespace gorge
