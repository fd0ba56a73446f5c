// gorge/grid/grid_field.hpp — a heightmap as a differentiable field.
//
// grid_field<S> wraps a grid_view<const S> of stored heights (S = float or double) with its world
// placement (grid_placement<S>: origin, cell size, height scale and offset) and is a field in the
// sense of gorge/noise/field.hpp: called with a world position glm::vec<2, T>, T = S or the SIMD
// batch gorge::simd_batch_t<S> (gorge/simd/simd.hpp), it returns glm::vec<3, T>(h, dh/dx, dh/dy)
// in world units. So a heightmap read from a file goes through the erosion filter, the tile API
// (gorge/simd/tile.hpp) and every field combinator like any noise field:
//     gorge::grid<float> heights = ...;                          // stored heights, any units
//     gorge::grid_placement<float> at;                           // where the grid lies
//     at.cell_size = glm::vec2(30.0f);                           // 30 m between nodes
//     at.height_scale = 0.1f;                                    // stored 1 = 0.1 m
//     const gorge::grid_field<float> terrain(heights, at);       // the view must outlive it
//     gorge::erode_tile(terrain, sampling, 0, 0, buffers, settings);
// grid_placement<S>::spanning(world_size, width, height) places a grid whose corner nodes span a
// given world rectangle.
//
// Interpolation: uniform Catmull-Rom bicubic (Keys' cubic convolution with a = -1/2), the tensor
// product of the 1D cubic through the four nodes around a cell. With t in [0, 1] the position in
// cell [i, i + 1] along an axis (node units), v(t) = w0 p[i-1] + w1 p[i] + w2 p[i+1] + w3 p[i+2] with
//     w0 = t (t (2 - t) - 1) / 2        w1 = (t^2 (3t - 5) + 2) / 2
//     w2 = t (t (4 - 3t) + 1) / 2       w3 = t^2 (t - 1) / 2.
// It interpolates: at a node the weights are exactly (0, 1, 0, 0), so node values come back bit
// for bit (as height_offset + height_scale * stored, rounded once each). Its tangent at node i is
// (p[i+1] - p[i-1]) / 2 from both sides, so value and gradient are continuous across cell borders
// (C1; the second derivative jumps there). It reproduces polynomials of degree <= 2, so the value
// error is O(cell^3 f''') and the gradient error O(cell^2 f''') for a smooth f sampled on the grid
// (tests/test_grid_field.cpp derives the constants).
// Gradient: exact — the analytic derivative of that piecewise cubic (the weights' derivatives)
// times height_scale / cell_size per axis (chain rule).
//
// Border: the ghost nodes beyond the border extrapolate linearly, p[-1] = 2 p[0] - p[1] and
// p[n] = 2 p[n-1] - p[n-2] (so the border cells use the one-sided tangent p[1] - p[0]; an axis
// of 2 nodes is linear, of 1 node constant). Outside the grid's extent [extent_min(),
// extent_max()] the position is clamped to it: the height continues constant along the outward
// normal and the gradient's component across the border is 0 — the exact gradient of the value
// returned (on the border line itself, the one-sided gradient from inside). The field is thus C1
// inside the extent and continuous everywhere. Infinite positions clamp like any other; a NaN
// coordinate gives NaN height and gradient (never an out-of-range read).
//
// Errors (std::invalid_argument naming the parameter or the cell): an empty view; a width or
// height above grid_field_max_extent (2^24, so node indices are exact in float); a view whose
// span (height - 1) * stride + width exceeds INT32_MAX (indices are 32-bit SIMD lanes); an
// invalid grid_placement; a stored height that is NaN or infinite (no-data cells must be filled
// first, e.g. by the reader); a largest |stored height| above max / 2^20 of S, or one whose
// scaled value or slope bound exceeds it (see grid_field's constructor). Those checks read every
// cell once, at construction; heights changed through the view afterwards must keep to them.
//
// Guarantees: finite output for every finite or infinite position; a point's result does not
// depend on the other lanes of its batch, and a batch gives the same bits as the scalar calls
// (same operations in the same order, when the compiler does not contract multiply-adds
// differently in the two). Limits: positions are in S, so float grids wider than a few thousand
// nodes resolve a position within a cell to float's precision at that index (2^-11 of a cell at
// index 8192); use double for large grids. The field holds a view: the heights must outlive it.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../detail/math.hpp"
#include "../detail/validate.hpp"
#include "../noise/gradient_noise.hpp"
#include "grid.hpp"

namespace gorge {

/// Largest width and height of a grid_field, in nodes: 2^24, below which every node index is
/// exact in float.
constexpr std::ptrdiff_t grid_field_max_extent = std::ptrdiff_t(1) << 24;
/// Largest span (height - 1) * stride + width of a grid_field's view, in elements: INT32_MAX,
/// so that every element's index fits a 32-bit (SIMD gather) lane.
constexpr std::ptrdiff_t grid_field_max_span = std::numeric_limits<std::int32_t>::max();

/// Where a grid lies in the world and how its stored values map to world heights:
///     node (i, j) sits at origin + cell_size * (i, j),
///     its world height is height_offset + height_scale * stored(i, j).
template <class S>
struct grid_placement {
    /// World position of node (0, 0), finite (default (0, 0), world units).
    glm::vec<2, S> origin = glm::vec<2, S>(S(0));
    /// World distance between neighbouring nodes along x and along y, each finite and > 0
    /// (default (1, 1), world units); glm::vec<2, S>(c) for square cells of size c.
    glm::vec<2, S> cell_size = glm::vec<2, S>(S(1));
    /// World height per stored unit, finite, any sign (default 1; 0 gives a flat field; negative
    /// values flip the terrain), with |height_scale| / cell_size at most max / 2^20 of S per axis.
    S height_scale = S(1);
    /// World height of a stored 0, finite with |height_offset| at most max / 2^20 of S (default 0,
    /// world height units).
    S height_offset = S(0);

    /// A placement whose corner nodes span the world rectangle [origin, origin + world_size]:
    /// cell_size = world_size / (n - 1) per axis (world_size itself along an axis of one node,
    /// where the cell size does not matter). Throws std::invalid_argument naming world_size
    /// unless both components are finite and > 0, or width / height unless they are > 0.
    static grid_placement spanning(glm::vec<2, S> world_size, std::ptrdiff_t width, std::ptrdiff_t height,
                                   glm::vec<2, S> origin = glm::vec<2, S>(S(0)), S height_scale = S(1),
                                   S height_offset = S(0)) {
        if (!(std::isfinite(world_size.x) && std::isfinite(world_size.y) && world_size.x > S(0) &&
              world_size.y > S(0)))
            detail::throw_invalid("gorge::grid_placement::spanning", "world_size (must be finite and > 0)");
        if (width <= 0) detail::throw_invalid("gorge::grid_placement::spanning", "width (must be > 0)");
        if (height <= 0) detail::throw_invalid("gorge::grid_placement::spanning", "height (must be > 0)");
        grid_placement p;
        p.origin = origin;
        p.cell_size.x = width > 1 ? world_size.x / static_cast<S>(width - 1) : world_size.x;
        p.cell_size.y = height > 1 ? world_size.y / static_cast<S>(height - 1) : world_size.y;
        p.height_scale = height_scale;
        p.height_offset = height_offset;
        return p;
    }

    /// The first bad member and its rule, or an empty result when all are valid.
    invalid_parameter first_invalid() const {
        if (!(std::isfinite(origin.x) && std::isfinite(origin.y))) return "origin (must be finite)";
        if (!(std::isfinite(cell_size.x) && std::isfinite(cell_size.y) && cell_size.x > S(0) && cell_size.y > S(0)))
            return "cell_size (must be finite and > 0)";
        if (!std::isfinite(height_scale)) return "height_scale (must be finite)";
        if (!(detail::within_finite_limit(height_scale / cell_size.x) &&
              detail::within_finite_limit(height_scale / cell_size.y)))
            return "height_scale (|height_scale| / cell_size must be at most max / 2^20 of the scalar type)";
        if (!detail::within_finite_limit(height_offset))
            return "height_offset (must be finite with |height_offset| at most max / 2^20 of the scalar type)";
        return nullptr;
    }
    /// Throws std::invalid_argument naming the first bad member.
    void validate() const { detail::validate(*this, "gorge::grid_placement"); }
};

namespace detail {

/// One axis of the Catmull-Rom stencil at a position u in node units: the four node indices
/// (clamped to the grid), their weights and the weights' derivatives (ghost nodes folded in), and
/// keep = 0 outside [0, last] (the clamped coordinate's derivative), else 1.
template <class T>
struct catmull_rom_axis {
    T w[4], dw[4];
    int_t<T> node[4];
    T keep;
};

/// The stencil along one axis of n nodes: last = n - 1, last_cell = max(n - 2, 0), both exact.
template <class T>
GORGE_FORCEINLINE catmull_rom_axis<T> catmull_rom_weights(T u, T last, T last_cell) {
    using ops = value_ops<T>;
    const T zero(0), one(1), two(2), half(0.5);
    // The cell's first node. max(0, u) is 0 for a NaN u (value_ops::max(a, b) keeps a unless
    // a < b), so the indices stay in range whatever u is.
    const T i = detail::min(detail::floor(detail::max(zero, u)), last_cell);
    // t in [0, 1] (NaN for a NaN u: clamp keeps NaN, so the result is NaN too).
    const T t = detail::clamp(u, zero, last) - i;

    catmull_rom_axis<T> a;
    a.w[0] = t * (t * (two - t) - one) * half;
    a.w[1] = (t * t * (T(3) * t - T(5)) + two) * half;
    a.w[2] = t * (t * (T(4) - T(3) * t) + one) * half;
    a.w[3] = t * t * (t - one) * half;
    a.dw[0] = (t * (T(4) - T(3) * t) - one) * half;
    a.dw[1] = t * (T(9) * t - T(10)) * half;
    a.dw[2] = (t * (T(8) - T(9) * t) + one) * half;
    a.dw[3] = t * (T(3) * t - two) * half;

    // Ghost nodes: p[-1] = 2 p[0] - p[1] in the first cell, p[n] = 2 p[n-1] - p[n-2] in the last
    // (both for a single cell). Folded into the weights: w0 p[-1] = 2 w0 p[0] - w0 p[1].
    const T lo = detail::select<T>(i < one, one, zero);
    const T hi = detail::select<T>(i + two > last, one, zero);
    const auto fold_ghosts = [&](T* w) {
        const T w0 = w[0] * lo, w3 = w[3] * hi;
        w[1] = w[1] + two * w0 - w3;
        w[2] = w[2] - w0 + two * w3;
        w[0] = w[0] - w0;
        w[3] = w[3] - w3;
    };
    fold_ghosts(a.w);
    fold_ghosts(a.dw);

    // Node indices i - 1 .. i + 2, clamped to [0, last] (the clamped ones carry weight 0).
    a.node[0] = ops::to_int(detail::max(i - one, zero));
    a.node[1] = ops::to_int(i);
    a.node[2] = ops::to_int(detail::min(i + one, last));
    a.node[3] = ops::to_int(detail::min(i + two, last));
    a.keep = detail::select<T>(u < zero, zero, detail::select<T>(u > last, zero, one));
    return a;
}

}  // namespace detail

/// A heightmap as a field (see the header comment): world position -> (h, dh/dx, dh/dy) by
/// Catmull-Rom bicubic interpolation of the stored heights, in world units.
template <class S>
class grid_field {
    static_assert(std::is_same<S, float>::value || std::is_same<S, double>::value,
                  "gorge::grid_field: heights must be float or double");

public:
    using scalar_type = S;

    /// Wraps heights (which must outlive the field) at the given placement. Throws
    /// std::invalid_argument as listed in the header comment; the limits on the heights, with
    /// L = max / 2^20 of S and m the largest |stored height|: m <= L, m |height_scale| <= L and
    /// m |height_scale| / cell_size <= L per axis (so values, weights sums and slopes stay finite).
    explicit grid_field(grid_view<const S> heights, const grid_placement<S>& placement = grid_placement<S>())
        : heights_(heights), placement_(placement) {
        const char* who = "gorge::grid_field";
        detail::require_not_empty(heights, who);
        placement.validate();
        if (heights.width() > grid_field_max_extent || heights.height() > grid_field_max_extent)
            throw std::invalid_argument(std::string(who) + ": width and height must be at most 2^24 nodes, got " +
                                        std::to_string(heights.width()) + " x " + std::to_string(heights.height()));
        const std::size_t span =
            detail::checked_grid_span(heights.width(), heights.height(), heights.stride(), who);
        if (span > static_cast<std::size_t>(grid_field_max_span))
            throw std::invalid_argument(std::string(who) + ": the view's span (height - 1) * stride + width (" +
                                        std::to_string(span) + " elements) must be at most INT32_MAX");
        S largest = S(0);
        for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
            const S* r = heights.row(y);
            for (std::ptrdiff_t x = 0; x < heights.width(); ++x) {
                if (!std::isfinite(r[x]))
                    throw std::invalid_argument(std::string(who) + ": height at cell (" + std::to_string(x) + ", " +
                                                std::to_string(y) + ") is not finite (fill no-data cells first)");
                largest = std::fmax(largest, std::fabs(r[x]));
            }
        }
        const S limit = detail::finite_limit<S>();
        const S scale = std::fabs(placement.height_scale);
        const S cell = std::fmin(placement.cell_size.x, placement.cell_size.y);
        // Written as quotients of the limit so that the checks themselves cannot overflow.
        if (!(largest <= limit && (scale <= S(1) || largest <= limit / scale) &&
              (scale / cell <= S(1) || largest <= limit / (scale / cell))))
            throw std::invalid_argument(
                std::string(who) + ": heights (the largest |stored height| m must satisfy m, m |height_scale| and "
                "m |height_scale| / cell_size <= max / 2^20 of the scalar type; got m = " + std::to_string(largest) +
                ")");
        data_ = heights.data();
        stride_ = static_cast<std::int32_t>(heights.stride());
        last_ = glm::vec<2, S>(static_cast<S>(heights.width() - 1), static_cast<S>(heights.height() - 1));
        last_cell_ = glm::vec<2, S>(static_cast<S>(heights.width() > 1 ? heights.width() - 2 : 0),
                                    static_cast<S>(heights.height() > 1 ? heights.height() - 2 : 0));
        slope_factor_ = glm::vec<2, S>(placement.height_scale / placement.cell_size.x,
                                       placement.height_scale / placement.cell_size.y);
    }
    /// A temporary grid would be gone before the field is used.
    explicit grid_field(const grid<S>&&, const grid_placement<S>& = grid_placement<S>()) = delete;

    /// (h, dh/dx, dh/dy) at world position p, T = S or a SIMD batch of S (simd_batch_t<S>).
    template <class T>
    GORGE_FORCEINLINE glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        static_assert(std::is_same<detail::scalar_t<T>, S>::value,
                      "gorge::grid_field<S>: evaluate with points of S or of a SIMD batch of S");
        using ops = detail::value_ops<T>;
        using I = detail::int_t<T>;
        const detail::catmull_rom_axis<T> ax = detail::catmull_rom_weights(
            (p.x - T(placement_.origin.x)) / T(placement_.cell_size.x), T(last_.x), T(last_cell_.x));
        const detail::catmull_rom_axis<T> ay = detail::catmull_rom_weights(
            (p.y - T(placement_.origin.y)) / T(placement_.cell_size.y), T(last_.y), T(last_cell_.y));
        const I stride(stride_);
        T v(0), dv_dx(0), dv_dy(0);
        for (int l = 0; l < 4; ++l) {
            const I row = ay.node[l] * stride;
            T r(0), dr(0);
            for (int k = 0; k < 4; ++k) {
                const T h = ops::gather(data_, row + ax.node[k]);
                r = r + ax.w[k] * h;
                dr = dr + ax.dw[k] * h;
            }
            v = v + ay.w[l] * r;
            dv_dx = dv_dx + ay.w[l] * dr;
            dv_dy = dv_dy + ay.dw[l] * r;
        }
        return {T(placement_.height_offset) + T(placement_.height_scale) * v, dv_dx * T(slope_factor_.x) * ax.keep,
                dv_dy * T(slope_factor_.y) * ay.keep};
    }

    /// The stored heights.
    grid_view<const S> heights() const { return heights_; }
    /// The placement, as given (validated).
    const grid_placement<S>& placement() const { return placement_; }
    /// World position of node (0, 0): the lower corner of the extent.
    glm::vec<2, S> extent_min() const { return placement_.origin; }
    /// World position of node (width - 1, height - 1): the upper corner of the extent.
    glm::vec<2, S> extent_max() const { return placement_.origin + placement_.cell_size * last_; }

private:
    grid_view<const S> heights_;
    grid_placement<S> placement_;
    const S* data_ = nullptr;
    std::int32_t stride_ = 0;
    glm::vec<2, S> last_, last_cell_, slope_factor_;
};

template <class S> grid_field(grid_view<S>) -> grid_field<std::remove_const_t<S>>;
template <class S> grid_field(grid_view<S>, const grid_placement<std::remove_const_t<S>>&)
    -> grid_field<std::remove_const_t<S>>;
template <class S> grid_field(const grid<S>&) -> grid_field<S>;
template <class S> grid_field(const grid<S>&, const grid_placement<S>&) -> grid_field<S>;

}  // namespace gorge
