// gorge/simd/batch.hpp — kernels over arrays of points (structure of arrays), one SIMD batch at a time.
//
// The kernels take glm::vec<2, T> points with T a scalar or an xsimd batch (gorge/simd/simd.hpp).
// This header feeds them from plain arrays: x[i], y[i] for i in [0, n). Points are loaded
// simd_lanes<S>() at a time; the last, partial batch is padded by repeating its last point and
// goes through the very same batch kernel, so a point's result never depends on n, on its index
// or on the other points (there is no separate scalar tail with a different formula).
//
//   simd_batch_t<S>, simd_lanes<S>()  the batch type used for scalar type S (float or double) and
//                                     its lane count (gorge/simd/simd.hpp)
//   load_lanes / store_lanes          partial loads (padded) and stores of one batch
//   for_each_batch(x, y, n, f)        calls f(first, count, glm::vec<2, simd_batch_t<S>> p)
//   erosion_filter_points<Hash>(...)  the erosion filter over SoA inputs into SoA outputs
//
// Without xsimd (GORGE_HAS_XSIMD == 0) the batch type is S itself and everything still works,
// one point at a time, with the same results as the scalar kernels. Loads and stores go through
// detail::value_ops like every other operation on a batch, so this header never calls xsimd.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "../filter/erosion_filter.hpp"
#include "simd.hpp"

namespace gorge {

/// Loads `count` (1..lanes) values from src into a batch; lanes past count repeat src[count - 1].
template <class S>
GORGE_FORCEINLINE simd_batch_t<S> load_lanes(const S* src, std::size_t count) {
    using ops = detail::value_ops<simd_batch_t<S>>;
    GORGE_ASSERT(count >= 1 && count <= ops::lanes, "gorge::load_lanes: count out of range");
    return ops::load_partial(src, count);
}

/// Stores the first `count` (1..lanes) lanes of v to dst.
template <class S>
GORGE_FORCEINLINE void store_lanes(const simd_batch_t<S>& v, S* dst, std::size_t count) {
    using ops = detail::value_ops<simd_batch_t<S>>;
    GORGE_ASSERT(count >= 1 && count <= ops::lanes, "gorge::store_lanes: count out of range");
    ops::store_partial(v, dst, count);
}

/// Calls f(first, count, p) for consecutive batches of the points (x[i], y[i]), i < n: p holds
/// points first .. first + count - 1, padded with copies of the last one. x and y must hold n
/// values each (they may be null only when n == 0).
template <class S, class F>
void for_each_batch(const S* x, const S* y, std::size_t n, F&& f) {
    static_assert(std::is_same<S, float>::value || std::is_same<S, double>::value,
                  "gorge::for_each_batch: S must be float or double");
    if (n == 0) return;
    if (x == nullptr || y == nullptr) throw std::invalid_argument("gorge::for_each_batch: x and y must not be null");
    constexpr std::size_t lanes = simd_lanes<S>();
    using B = simd_batch_t<S>;
    for (std::size_t first = 0; first < n; first += lanes) {
        const std::size_t count = n - first < lanes ? n - first : lanes;
        f(first, count, glm::vec<2, B>(load_lanes(x + first, count), load_lanes(y + first, count)));
    }
}

/// Inputs of erosion_filter_points: n points as separate arrays (structure of arrays).
template <class S>
struct erosion_points_input {
    const S* x = nullptr;            ///< point x coordinates (required)
    const S* y = nullptr;            ///< point y coordinates (required)
    const S* height = nullptr;       ///< input height h (required)
    const S* slope_x = nullptr;      ///< dh/dx (required)
    const S* slope_y = nullptr;      ///< dh/dy (required)
    const S* fade_target = nullptr;  ///< fade target per point, -1..1; null means 0 everywhere
    std::size_t n = 0;               ///< number of points
};

/// Outputs of erosion_filter_points; every pointer is optional (null: not written) and, when
/// set, must hold n values. Same meaning as the erosion_result members.
template <class S>
struct erosion_points_output {
    S* height_delta = nullptr;
    S* slope_delta_x = nullptr;
    S* slope_delta_y = nullptr;
    S* magnitude = nullptr;
    S* ridge_map = nullptr;
    S* fade_target = nullptr;
};

/// The erosion filter over n points given as arrays, simd_lanes<S>() points per kernel call.
/// Validates the parameters and the required input pointers (std::invalid_argument).
/// A point's result depends on its own inputs only, not on n or on its index: the tail batch is
/// padded and goes through the same kernel.
template <class Hash = pcg3d_hash, class S>
void erosion_filter_points(const erosion_points_input<S>& in, const erosion_params<S>& params,
                           const erosion_points_output<S>& out, std::uint32_t seed = 0) {
    params.validate();
    if (in.n == 0) return;
    if (!in.x || !in.y || !in.height || !in.slope_x || !in.slope_y)
        throw std::invalid_argument("gorge::erosion_filter_points: x, y, height, slope_x and slope_y must not be null");
    using B = simd_batch_t<S>;
    for_each_batch(in.x, in.y, in.n, [&](std::size_t first, std::size_t count, const glm::vec<2, B>& p) {
        const glm::vec<3, B> h(load_lanes(in.height + first, count), load_lanes(in.slope_x + first, count),
                               load_lanes(in.slope_y + first, count));
        const B fade = in.fade_target ? load_lanes(in.fade_target + first, count) : B(S(0));
        const erosion_result<B> r = erosion_filter<Hash>(p, h, fade, params, seed);
        if (out.height_delta) store_lanes<S>(r.height_delta, out.height_delta + first, count);
        if (out.slope_delta_x) store_lanes<S>(r.slope_delta.x, out.slope_delta_x + first, count);
        if (out.slope_delta_y) store_lanes<S>(r.slope_delta.y, out.slope_delta_y + first, count);
        if (out.magnitude) store_lanes<S>(r.magnitude, out.magnitude + first, count);
        if (out.ridge_map) store_lanes<S>(r.ridge_map, out.ridge_map + first, count);
        if (out.fade_target) store_lanes<S>(r.fade_target, out.fade_target + first, count);
    });
}

}  // namespace gorge
