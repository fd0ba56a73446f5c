// gorge/filter/phacelle.hpp — Phacelle noise: phase-cell stripes along a direction.
//
// Rune Skovbo Johansen's "Phacelle" noise (2025), the stripe generator at the heart of the
// analytic erosion filter. Each of the 4x4 cells around q owns a jittered pivot; each pivot emits
// a plane wave (cos, sin) of the phase v·side running across `dir`, and the waves are blended with
// a bell weight that falls to exactly zero 1.5 cells from the pivot. The blend is a phase vector:
// its angle is a stripe phase that bends smoothly from cell to cell, its length drops where waves
// disagree. `normalization` rescales that length back towards 1 ("normalized gullies").
//
// Guarantees: the weight sum is never zero (some pivot is always within sqrt(2) cells), the
// result is finite for finite inputs, and the field is continuous in q (the 4x4 window shifts
// only where the cells it drops have weight zero). Precondition: `dir` has unit length (or is the
// zero vector, which gives constant stripes).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstdint>
#include <type_traits>

#include "../detail/math.hpp"
#include "../noise/hash.hpp"

namespace gorge {

/// Output of phacelle(): the blended phase vector and the stripe direction vector.
template <class T>
struct phacelle_result {
    glm::vec<2, T> phase;  ///< (cos, sin) of the blended phase; length in [1 - normalization, 1]
    glm::vec<2, T> side;   ///< perp(dir) * cell_freq * 2π: d(phase angle)/dq of every wave
};

namespace detail {
constexpr double two_pi = 6.283185307179586476925286766559;
/// Pivots are jittered by jitter_amplitude * hash2, i.e. within [-0.5, 0.5) of the cell corner.
constexpr double phacelle_jitter = 0.5;
/// Bell weight exp(-2 |v|^2) - phacelle_weight_floor is exactly 0 at |v| = 1.5 (e^-4.5 ≈ 0.01111),
/// so cells outside the 4x4 window never contribute.
constexpr double phacelle_bell_falloff = 2.0;
constexpr double phacelle_weight_floor = 0.01111;
/// Squared pivot distance from which the weight is certainly 0: exp(-2 * 2.26) = 0.010889 lies 2 %
/// below the floor, far more than any exp implementation's error (the zero crossing itself is at
/// 2.24996). Cells this far in every lane are skipped without changing any result.
constexpr double phacelle_skip_distance_sq = 2.26;
/// Bound of |v.x| and |v.y| for a window cell's pivot offset v = f - (gi, gj) - jitter: f in
/// [0, 1], gi and gj in -1..2, jitter in [-0.5, 0.5). Every phase angle is then at most
/// phacelle_max_offset (|side.x| + |side.y|) + |phase0|.
constexpr double phacelle_max_offset = 2.5;
/// The factor by which that bound must stay within sincos's range (room for rounding).
constexpr double phacelle_angle_bound_margin = 2.0;
/// Lower bound of the length the blended vector is divided by; it only matters when the blend
/// cancels out exactly with normalization = 1, where it keeps the result 0 instead of NaN.
constexpr double phacelle_min_length = 1e-20;
/// The window: 4x4 cells around the point's cell, from offset -1 to +2 on each axis.
constexpr int phacelle_window_side = 4;
constexpr int phacelle_window_cells = phacelle_window_side * phacelle_window_side;

/// Index of the lowest set bit of bits != 0.
GORGE_FORCEINLINE int lowest_set_bit(std::uint32_t bits) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctz(bits);
#else
    int index = 0;
    while ((bits & 1u) == 0u) {
        bits >>= 1;
        ++index;
    }
    return index;
#endif
}
}  // namespace detail

// GORGE_PHACELLE_UNROLL: unrolls the loops over the 4x4 cell window (GCC and Clang), so that the
// cell offsets become constants and the window's arrays stay in registers; the arithmetic of every
// lane is unchanged.
#if defined(__clang__)
#define GORGE_PHACELLE_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define GORGE_PHACELLE_UNROLL _Pragma("GCC unroll 4")
#else
#define GORGE_PHACELLE_UNROLL
#endif

namespace detail {
/// The jitter of window cell (gi, gj), gi and gj in -1..2, from the hash's split form: one combine
/// per cell and lane.
template <class Hash, class T>
struct phacelle_cell_jitter {
    const uint_t<T> (&column)[phacelle_window_side];
    const uint_t<T> (&row)[phacelle_window_side];
    std::uint32_t seed;
    GORGE_FORCEINLINE vec2<T> operator()(int gi, int gj) const {
        return constant<T>(phacelle_jitter) *
               hash_split<Hash>::template combine<T>(column[gi + 1], row[gj + 1], seed);
    }
};

/// The jitter of window cell (gi, gj) when every lane's window lies in one band of 4 rows by
/// `lanes` columns (see phacelle): row[gj + 1] holds the jitters of the band's row in column
/// order, one column per lane, and lane l's window starts at band column lane_column (lane l).
template <class T>
struct phacelle_band_jitter {
    vec2<T> row[phacelle_window_side];
    uint_t<T> lane_column;
    GORGE_FORCEINLINE vec2<T> operator()(int gi, int gj) const {
        using ops = value_ops<T>;
        const uint_t<T> column = lane_column + uint_t<T>(static_cast<std::uint32_t>(gi + 1));
        return {ops::permute_lanes(row[gj + 1].x, column), ops::permute_lanes(row[gj + 1].y, column)};
    }
};

/// The window pass of phacelle: each cell's pivot offset f - cell - jitter(gi, gj), its squared
/// distance, and the bit mask of cells that some lane is nearer to than phacelle_skip_distance_sq.
template <class T, class Jitter>
GORGE_FORCEINLINE std::uint32_t phacelle_window(vec2<T> f, const Jitter& jitter, T (&offset_x)[phacelle_window_cells],
                                                T (&offset_y)[phacelle_window_cells],
                                                T (&dist_sq)[phacelle_window_cells]) {
    std::uint32_t near_cells = 0;
    GORGE_PHACELLE_UNROLL
    for (int gj = -1; gj <= 2; ++gj) {
        GORGE_PHACELLE_UNROLL
        for (int gi = -1; gi <= 2; ++gi) {
            const int cell = (gj + 1) * phacelle_window_side + (gi + 1);
            const vec2<T> cell_offset{constant<T>(gi), constant<T>(gj)};
            const vec2<T> v = f - cell_offset - jitter(gi, gj);  // point relative to the cell's pivot
            offset_x[cell] = v.x;  // (two arrays of T: GCC copies arrays of glm vectors piecewise)
            offset_y[cell] = v.y;
            dist_sq[cell] = dot(v, v);
            const bool near = any<T>(dist_sq[cell] < constant<T>(phacelle_skip_distance_sq));
            near_cells |= std::uint32_t(near) << cell;
        }
    }
    return near_cells;
}
}  // namespace detail

/// Phacelle noise at q (in cell units).
///   dir           unit stripe-running direction (waves vary across it, along perp(dir))
///   cell_freq     stripe frequency in waves per cell, > 0 (the filter passes cell_scale)
///   phase_offset  added phase in turns (the filter passes 0.25, turning cos into -sin)
///   normalization 0..1: 0 keeps the blended magnitude, 1 makes every output unit length
template <class Hash = pcg3d_hash, class T>
GORGE_FORCEINLINE phacelle_result<T> phacelle(glm::vec<2, T> q, glm::vec<2, T> dir, T cell_freq,
                                              T phase_offset, T normalization,
                                              std::uint32_t seed = 0) {
    using ops = detail::value_ops<T>;
    using V2 = detail::vec2<T>;
    using U = detail::uint_t<T>;
    const V2 side = detail::perp(dir) * (cell_freq * detail::constant<T>(detail::two_pi));
    const T phase0 = phase_offset * detail::constant<T>(detail::two_pi);
    const V2 i0 = detail::floor(q);
    const V2 f = q - i0;
    const U ix = ops::to_uint(ops::to_int(i0.x));
    const U iy = ops::to_uint(ops::to_int(i0.y));
    using split = detail::hash_split<Hash>;

    // The hash's work for each window row (and below, column) is done once (its split form), two
    // neighbouring lines at a time. Neighbour offsets are added on unsigned lanes, so they wrap
    // instead of overflowing.
    U row[detail::phacelle_window_side];
    GORGE_PHACELLE_UNROLL
    for (int g = -1; g <= 2; g += 2)
        detail::axis_y_pair<Hash>(iy + U(static_cast<std::uint32_t>(g)), seed, row[g + 1], row[g + 2]);

    // Then the whole window, without branches: each cell's pivot offset v, its squared distance,
    // and a bit per cell that is set when some lane is nearer than phacelle_skip_distance_sq.
    // Exact early-out: a cell at squared distance >= phacelle_skip_distance_sq from the point has
    // weight exactly 0 and adds exactly 0 to both sums, so a cell that far in every lane is
    // skipped (about half of the 4x4 window, saving exp, sin and cos).
    T offset_x[detail::phacelle_window_cells], offset_y[detail::phacelle_window_cells];
    T dist_sq[detail::phacelle_window_cells];
    std::uint32_t near_cells = 0;
    bool window_done = false;
    if constexpr (detail::has_lane_permute<ops>::value) {
        // When every lane's cell lies in lane 0's row of cells, at most lanes - 4 columns to its
        // east, the lanes' windows lie in one band of 4 rows by `lanes` columns: each window row's
        // jitters are hashed once for all lanes, one column per lane, and each lane takes its own
        // from there (a lane permute). Same hash, same bits, a quarter of the combines.
        U lane_column;
        if (detail::lanes_in_band<T>(ix, iy, std::uint32_t(ops::lanes - detail::phacelle_window_side), lane_column)) {
            // Band column k (lane k) is lane 0's column - 1 + k.
            const U band_column = split::axis_x(ops::first_lane(ix) - U(1u) + ops::lane_sequence(), seed);
            detail::phacelle_band_jitter<T> band;
            band.lane_column = lane_column;
            GORGE_PHACELLE_UNROLL
            for (int gj = 0; gj < detail::phacelle_window_side; ++gj)
                band.row[gj] = detail::constant<T>(detail::phacelle_jitter) *
                               split::template combine<T>(band_column, row[gj], seed);
            near_cells = detail::phacelle_window(f, band, offset_x, offset_y, dist_sq);
            window_done = true;
        }
    }
    if (!window_done) {
        U column[detail::phacelle_window_side];
        GORGE_PHACELLE_UNROLL
        for (int g = -1; g <= 2; g += 2)
            detail::axis_x_pair<Hash>(ix + U(static_cast<std::uint32_t>(g)), seed, column[g + 1], column[g + 2]);
        const detail::phacelle_cell_jitter<Hash, T> cells{column, row, seed};
        near_cells = detail::phacelle_window(f, cells, offset_x, offset_y, dist_sq);
    }

    // Then the near cells in window order (the order of the sums), one loop step each: the only
    // data-dependent branch is the loop's own. Every phase angle lies within a bound checked once
    // here, so that sincos need not check each one (the same results).
    const T angle_bound = detail::constant<T>(detail::phacelle_max_offset) *
                              (detail::abs(side.x) + detail::abs(side.y)) + detail::abs(phase0);
    const bool angles_in_range =
        detail::within_sincos_range<T>(angle_bound * detail::constant<T>(detail::phacelle_angle_bound_margin));
    T weight_sum = T(0);
    V2 sum(T(0), T(0));
    const auto add_near_cells = [&](auto in_range) {
        for (std::uint32_t rest = near_cells; rest != 0; rest &= rest - 1u) {
            const int cell = detail::lowest_set_bit(rest);
            const V2 v(offset_x[cell], offset_y[cell]);
            // The exponent -2 |v|^2 lies in [-25, 0] (|v.x|, |v.y| <= phacelle_max_offset), the
            // domain of exp_nonpositive, which lets SIMD types use a cheaper exp.
            const T bell = detail::exp_nonpositive(detail::constant<T>(-detail::phacelle_bell_falloff) * dist_sq[cell]);
            const T w = detail::max(T(0), bell - detail::constant<T>(detail::phacelle_weight_floor));
            const T angle = detail::dot(v, side) + phase0;
            T sin_angle, cos_angle;
            if constexpr (decltype(in_range)::value)
                detail::sincos_in_range(angle, sin_angle, cos_angle);
            else
                detail::sincos(angle, sin_angle, cos_angle);
            weight_sum += w;
            sum += w * V2(cos_angle, sin_angle);
        }
    };
    if (angles_in_range)
        add_near_cells(std::true_type{});
    else
        add_near_cells(std::false_type{});
    const V2 m = sum / weight_sum;
    const T len = detail::max(detail::max(T(1) - normalization, detail::length(m)),
                              detail::constant<T>(detail::phacelle_min_length));
    return {m / len, side};
}

}  // namespace gorge
