// gorge/simd/tile.hpp — fill terrain tiles: a height field through the erosion filter, W x H samples
// at a time, SIMD-batched and optionally over several threads.
//
// A tile is a rectangle of a global sample lattice. Sample (i, j) of the lattice sits at
//     p = origin + spacing * (i, j)           (tile_sampling; evaluated in double, one rounding)
// and a tile covers i in [first_x, first_x + W), j in [first_y, first_y + H), W x H being the size
// of the caller's buffers (grid_view, any row stride). Because a sample's position is a function
// of its global index alone and every sample goes through the same batch kernel (row tails are
// padded, not finished by a scalar loop), tiles of any size at any place are seamless: the shared
// edge of two neighbours is bit-identical, and so is a tile computed in one piece or in many, on
// any number of threads.
//
// The height field is a callable that takes glm::vec<2, T> and returns either
//   - glm::vec<3, T>(h, dh/dx, dh/dy): the fade target then follows the documented rule
//     fade_target_from_altitude(h, valley_altitude, peak_altitude) (tile_settings), or
//   - gorge::height_sample<T>{(h, dh/dx, dh/dy), fade_target}: the field supplies it.
// T is either the SIMD batch gorge::simd_batch_t<S> (S itself without xsimd), which a generic
// lambda or a gorge/noise/field.hpp field accepts, or the scalar S: a field written for scalars
// only, e.g. [](glm::vec2 p) { ... return glm::vec3(...); }, is called once per lane of each
// batch (slower, same guarantees). Which one is decided by what the field returns when called
// with a batch point; a field that fits neither stops the build with a static_assert.
//
//   erode_tile<Hash>(field, sampling, first_x, first_y, buffers, settings)
//       height (eroded, with the height offset), ridge map and gradient of the eroded terrain;
//   evaluate_tile(field, sampling, first_x, first_y, buffers, threads)
//       the raw field (height and gradient), no erosion — previews and benchmarks.
//
// Threads (settings.threads, evaluate_tile's threads): gorge's one thread rule
// (gorge/detail/parallel.hpp): default 1, the calling thread only; 0 = all hardware threads;
// at most gorge::max_threads (1024) and at most one per gorge::tile_points_per_thread (4096)
// points of the tile, so that small tiles stay on few threads. The calling thread and threads - 1
// std::threads, started once per call, take chunks of the tile's batches (row-major) from a
// shared counter, large at first and shrinking to about 256 points toward the end (guided
// self-scheduling: a core slowed by other work does not hold the tile back, and the last chunks
// finish close together); a thread that cannot start leaves its share to the others. The field must be safe to call concurrently (pure functions are). An exception thrown by
// the field is rethrown in the caller after every thread has finished.
//
// Errors: std::invalid_argument naming the parameter for invalid tile_settings (erosion
// parameters, valley_altitude == peak_altitude or non-finite, non-finite height_offset, threads
// above max_threads), a non-finite origin, a spacing that is not finite and > 0, buffers of
// different sizes, no buffer at all, or a first_x / first_y so large that the tile's last index
// would overflow std::int64_t.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "batch.hpp"
#include "../detail/parallel.hpp"
#include "../detail/validate.hpp"
#include "../filter/erosion_filter.hpp"
#include "../grid/grid.hpp"
#include "../noise/hash.hpp"

namespace gorge {

/// A height field sample that carries its own fade target (see gorge/filter/erosion_filter.hpp).
template <class T>
struct height_sample {
    glm::vec<3, T> height_and_slope;  ///< (h, dh/dx, dh/dy)
    T fade_target;                    ///< about -1 in valleys, +1 on peaks
};

/// The global sample lattice shared by neighbouring tiles.
template <class S>
struct tile_sampling {
    glm::vec<2, S> origin = glm::vec<2, S>(S(0));   ///< position of global sample (0, 0), finite
    glm::vec<2, S> spacing = glm::vec<2, S>(S(1));  ///< distance between samples, finite and > 0

    /// Name and rule of the first bad member; empty when all are valid.
    invalid_parameter first_invalid() const {
        if (!(std::isfinite(origin.x) && std::isfinite(origin.y))) return "origin (must be finite)";
        if (!(std::isfinite(spacing.x) && std::isfinite(spacing.y) && spacing.x > S(0) && spacing.y > S(0)))
            return "spacing (must be finite and > 0)";
        return {};
    }
    /// Throws std::invalid_argument naming the first bad member.
    void validate() const { detail::validate(*this, "gorge::tile_sampling"); }
};

/// Caller-owned output buffers of one tile. Every view is optional (default-constructed: not
/// written); those set must all have the same width and height, which is the tile's size.
template <class S>
struct tile_buffers {
    grid_view<S> height;      ///< eroded height (erode_tile) or field height (evaluate_tile)
    grid_view<S> ridge_map;   ///< ridge map, -1 creases .. +1 ridges (erode_tile only)
    grid_view<S> gradient_x;  ///< d(height)/dx (erode_tile: input slope + the filter's slope_delta)
    grid_view<S> gradient_y;  ///< d(height)/dy
};

/// How erode_tile filters the field.
template <class S>
struct tile_settings {
    erosion_params<S> erosion{};  ///< filter parameters (defaults: the published demo's)
    /// (o, k) of apply_height_offset, finite; default (0, 0) outputs h + height_delta unchanged.
    /// The published demo uses (-0.65, 0). The gradient output ignores the offset's own
    /// derivative (zero for k == 0).
    glm::vec<2, S> height_offset = glm::vec<2, S>(S(0));
    /// Fade target rule for fields that return a plain vec3: -1 at valley_altitude and below, +1 at
    /// peak_altitude and above, linear between (fade_target_from_altitude). Finite, distinct.
    S valley_altitude = S(-1);  ///< default -1 (height units)
    S peak_altitude = S(1);     ///< default +1 (height units)
    std::uint32_t seed = 0;     ///< hash seed of the filter, any value (default 0)
    /// Threads filling the tile, the calling thread included (gorge's thread rule, see
    /// gorge/detail/parallel.hpp): default 1 (none started), 0 = all hardware threads,
    /// 0..max_threads (1024), never more than one per tile_points_per_thread (4096) points of the
    /// tile. The result is the same for any value.
    unsigned threads = 1;

    /// Name and rule of the first bad member (erosion's members as "erosion.<name>"); empty when
    /// all are valid.
    invalid_parameter first_invalid() const {
        if (const invalid_parameter bad = detail::nested_invalid("erosion", erosion.first_invalid())) return bad;
        if (!(std::isfinite(height_offset.x) && std::isfinite(height_offset.y)))
            return "height_offset (must be finite)";
        if (!(std::isfinite(valley_altitude) && std::isfinite(peak_altitude) && valley_altitude != peak_altitude))
            return "valley_altitude, peak_altitude (must be finite and differ)";
        return detail::invalid_thread_count(threads);
    }
    /// Throws std::invalid_argument naming the first bad member.
    void validate() const { detail::validate(*this, "gorge::tile_settings"); }
};

/// Points of a tile per thread, at least: erode_tile and evaluate_tile run a tile of n points on
/// at most ceil(n / tile_points_per_thread) threads, whatever was asked for. Starting and joining a
/// thread costs tens of microseconds (a 16 x 16 demo tile took 15 µs on one thread and 43 µs on
/// two, on a 2-core AMD EPYC); 4096 points take about 200 µs of the erosion filter on one core and
/// some 20-40 µs of a noise field's heights. So a 64 x 64 tile runs on the calling thread alone.
constexpr std::uint64_t tile_points_per_thread = 4096;

// The row loops ask the compiler to inline the whole call tree (the caller's field included), so
// that the field's result stays in registers instead of going through memory once per batch.
#if defined(__GNUC__) && !defined(__clang__)
#define GORGE_TILE_FLATTEN __attribute__((flatten))
#else
#define GORGE_TILE_FLATTEN
#endif

namespace detail {

template <class R> struct is_height_sample : std::false_type {};
template <class T> struct is_height_sample<height_sample<T>> : std::true_type {};

/// True when R is glm::vec<3, T> or height_sample<T>: what a field called with glm::vec<2, T> returns.
template <class R, class T>
using is_field_result =
    std::integral_constant<bool, std::is_same<R, glm::vec<3, T>>::value || std::is_same<R, height_sample<T>>::value>;

/// What `Field` returns for a point of type P, decayed; void when it cannot be called with P.
template <class Field, class P, class = void>
struct field_result {
    using type = void;
};
template <class Field, class P>
struct field_result<Field, P, std::void_t<decltype(std::declval<const Field&>()(std::declval<const P&>()))>> {
    using type = std::decay_t<decltype(std::declval<const Field&>()(std::declval<const P&>()))>;
};

/// How a field is called: with whole batches, or once per lane with scalar points. A field that
/// takes glm::vec2 may also be callable with a batch point through glm's converting constructor
/// (which would not compile), so the choice rests on the result type, which the call's
/// declaration alone gives.
template <class S, class Field>
struct field_kind {
    using B = simd_batch_t<S>;
    static constexpr bool batched = is_field_result<typename field_result<Field, glm::vec<2, B>>::type, B>::value;
    static constexpr bool per_lane =
        !batched && is_field_result<typename field_result<Field, glm::vec<2, S>>::type, S>::value;
};

/// Height, slope and fade target of a field sample, whichever form the field returns.
template <class T, class S>
GORGE_FORCEINLINE height_sample<T> to_height_sample(const glm::vec<3, T>& h, const tile_settings<S>& s) {
    return {h, fade_target_from_altitude(h.x, T(s.valley_altitude), T(s.peak_altitude))};
}
template <class T, class S>
GORGE_FORCEINLINE height_sample<T> to_height_sample(const height_sample<T>& h, const tile_settings<S>&) {
    return h;
}

/// The field at the points (x[l], y), l < lanes, which p holds, as a height sample of batches.
/// A batched field gets p; a scalar-only field is called once per lane, in lane order, and its
/// results are gathered into batches (a vec3 result then gets the fade rule on the batch, as a
/// batched field's would).
template <class S, class Field, class B>
GORGE_FORCEINLINE height_sample<B> sample_field(const Field& field, const glm::vec<2, B>& p, const S* x, S y,
                                                const tile_settings<S>& rule) {
    if constexpr (field_kind<S, Field>::batched) {
        (void)x, (void)y;
        return to_height_sample(field(p), rule);
    } else {
        using R = typename field_result<Field, glm::vec<2, S>>::type;
        constexpr std::size_t lanes = simd_lanes<S>();
        S h[lanes], dx[lanes], dy[lanes], fade[lanes];
        for (std::size_t l = 0; l < lanes; ++l) {
            const R r = field(glm::vec<2, S>(x[l], y));
            if constexpr (is_height_sample<R>::value) {
                h[l] = r.height_and_slope.x, dx[l] = r.height_and_slope.y, dy[l] = r.height_and_slope.z;
                fade[l] = r.fade_target;
            } else {
                h[l] = r.x, dx[l] = r.y, dy[l] = r.z;
                fade[l] = S(0);  // unused: the rule gives the fade target
            }
        }
        const glm::vec<3, B> hs(load_lanes(h, lanes), load_lanes(dx, lanes), load_lanes(dy, lanes));
        if constexpr (is_height_sample<R>::value)
            return {hs, load_lanes(fade, lanes)};
        else
            return to_height_sample(hs, rule);
    }
}

/// Position of global sample index i along one axis: origin + spacing * i, computed with one
/// fused multiply-add in double and rounded once to S, so it depends on i alone.
template <class S>
S lattice_coordinate(S origin, S spacing, std::int64_t i) {
    return static_cast<S>(std::fma(double(spacing), double(i), double(origin)));
}
/// Size shared by the views that are set; throws when none is set or sizes differ.
template <class S>
std::pair<std::ptrdiff_t, std::ptrdiff_t> tile_size(const tile_buffers<S>& b, const char* who) {
    std::ptrdiff_t w = -1, h = -1;
    const grid_view<S>* views[] = {&b.height, &b.ridge_map, &b.gradient_x, &b.gradient_y};
    const char* names[] = {"height", "ridge_map", "gradient_x", "gradient_y"};
    for (int i = 0; i < 4; ++i) {
        if (views[i]->data() == nullptr) continue;
        if (w < 0) {
            w = views[i]->width(), h = views[i]->height();
        } else if (views[i]->width() != w || views[i]->height() != h) {
            throw std::invalid_argument(std::string(who) + ": buffer " + names[i] + " is " +
                                        std::to_string(views[i]->width()) + " x " +
                                        std::to_string(views[i]->height()) + ", the others " +
                                        std::to_string(w) + " x " + std::to_string(h));
        }
    }
    if (w < 0) throw std::invalid_argument(std::string(who) + ": no output buffer set in tile_buffers");
    return {w, h};
}

/// Throws unless first + extent (the tile's end index, padding included) fits in std::int64_t.
inline void check_index_range(std::int64_t first, std::ptrdiff_t extent, const char* name, const char* who) {
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    if (first > max - std::int64_t(extent))
        throw std::invalid_argument(std::string(who) + ": " + name + " + tile size overflows std::int64_t");
}

/// Fewest batches a thread takes at once (guided chunks, detail::parallel_chunks): about 256
/// points, some 25 µs of the erosion filter on one core, so the threads' last chunks end within
/// about that of each other, while a take from the shared counter (one atomic operation) stays
/// negligible next to it.
template <class S>
constexpr std::uint64_t tile_min_chunk_batches() {
    constexpr std::size_t points = 256;
    return std::max<std::uint64_t>(1, points / simd_lanes<S>());
}

/// Runs batches(j, i_begin, i_end) for every row j of the tile on `threads` workers (the caller
/// included), where [i_begin, i_end) are batch slots of that row (batch slot b holds columns
/// b·lanes ...): the tile's height × row_batches slots, row-major, are handed out in guided
/// chunks (detail::parallel_chunks), so a chunk can end inside a row and the last ones are
/// small. Which thread computes a batch never changes what the batch holds.
template <class S, class F>
void parallel_batches(std::ptrdiff_t height, std::ptrdiff_t row_batches, unsigned threads, const F& batches) {
    const auto per_row = std::uint64_t(row_batches);
    parallel_chunks(std::uint64_t(height) * per_row, threads, tile_min_chunk_batches<S>(),
                    [&](std::uint64_t begin, std::uint64_t end) {
                        for (std::uint64_t slot = begin; slot < end;) {
                            const std::uint64_t row = slot / per_row, first = slot % per_row;
                            const std::uint64_t last = std::min(per_row, first + (end - slot));
                            batches(std::ptrdiff_t(row), std::ptrdiff_t(first), std::ptrdiff_t(last));
                            slot += last - first;
                        }
                    });
}

/// Column positions of a tile, padded with the following lattice positions up to a whole number
/// of batches (the padded lanes are computed and thrown away).
template <class S>
std::vector<S> tile_columns(const tile_sampling<S>& s, std::int64_t first_x, std::ptrdiff_t width) {
    constexpr std::size_t lanes = simd_lanes<S>();
    const std::size_t padded = (std::size_t(width) + lanes - 1) / lanes * lanes;
    std::vector<S> xs(padded);
    for (std::size_t i = 0; i < padded; ++i)
        xs[i] = lattice_coordinate(s.origin.x, s.spacing.x, first_x + std::int64_t(i));
    return xs;
}

/// True when Field has a value-only member `value(glm::vec<2, B>) -> B` (the noise fields of
/// gorge/noise/field.hpp do): evaluate_tile then uses it when only heights are asked for.
template <class Field, class B, class = void>
struct has_batch_value : std::false_type {};
template <class Field, class B>
struct has_batch_value<Field, B, std::void_t<decltype(std::declval<const Field&>().value(std::declval<const glm::vec<2, B>&>()))>>
    : std::is_same<std::decay_t<decltype(std::declval<const Field&>().value(std::declval<const glm::vec<2, B>&>()))>, B> {};

/// What erode_tile and evaluate_tile share: checks the sampling, the buffers, the index range and
/// the thread count, then calls emit(p, sample(p, x, y), i, j, count) for every batch of the tile
/// (row j, columns i .. i + count - 1, p the batch's points, x their coordinates and y the row's)
/// on `threads` threads.
template <class S, class Field, class Sample, class Emit>
void fill_tile(const Field&, const tile_sampling<S>& sampling, std::int64_t first_x, std::int64_t first_y,
               const tile_buffers<S>& out, unsigned threads, const char* who, const Sample& sample,
               const Emit& emit) {
    static_assert(std::is_same<S, float>::value || std::is_same<S, double>::value,
                  "gorge: tiles are of float or double (S)");
    static_assert(field_kind<S, Field>::batched || field_kind<S, Field>::per_lane,
                  "gorge: a tile field must take glm::vec<2, T> and return glm::vec<3, T> or "
                  "gorge::height_sample<T>, with T = gorge::simd_batch_t<S> (e.g. a generic lambda) or "
                  "T = S (called once per lane, e.g. [](glm::vec2 p) { ... })");
    if (const invalid_parameter bad = sampling.first_invalid()) throw_invalid(who, "tile_sampling::" + bad.to_string());
    if (const invalid_parameter bad = invalid_thread_count(threads)) throw_invalid(who, bad.to_string());
    const auto size = tile_size(out, who);
    const std::ptrdiff_t width = size.first, height = size.second;

    using B = simd_batch_t<S>;
    constexpr std::size_t lanes = simd_lanes<S>();
    check_index_range(first_x, width + std::ptrdiff_t(lanes), "first_x", who);
    check_index_range(first_y, height, "first_y", who);
    const std::vector<S> xs = tile_columns(sampling, first_x, width);

    const auto batches = [&](std::ptrdiff_t j, std::ptrdiff_t slot_begin, std::ptrdiff_t slot_end) GORGE_TILE_FLATTEN {
        const S y = lattice_coordinate(sampling.origin.y, sampling.spacing.y, first_y + std::int64_t(j));
        const std::ptrdiff_t end = std::min(width, slot_end * std::ptrdiff_t(lanes));
        for (std::ptrdiff_t i = slot_begin * std::ptrdiff_t(lanes); i < end; i += std::ptrdiff_t(lanes)) {
            const std::size_t count = std::min<std::size_t>(lanes, std::size_t(width - i));
            const S* const x = xs.data() + i;
            const glm::vec<2, B> p(load_lanes(x, lanes), B(y));
            emit(p, sample(p, x, y), i, j, count);
        }
    };
    const std::ptrdiff_t row_batches = (width + std::ptrdiff_t(lanes) - 1) / std::ptrdiff_t(lanes);
    const std::uint64_t points = std::uint64_t(width) * std::uint64_t(height);
    const std::uint64_t thread_shares = (points + tile_points_per_thread - 1) / tile_points_per_thread;
    parallel_batches<S>(height, row_batches, resolve_threads(threads, thread_shares), batches);
}

}  // namespace detail

/// Fills the tile's buffers with the eroded terrain of `field` (see the header comment).
/// Global sample (first_x + i, first_y + j) goes to element (i, j) of every buffer that is set.
template <class Hash = pcg3d_hash, class S, class Field>
void erode_tile(const Field& field, const tile_sampling<S>& sampling, std::int64_t first_x, std::int64_t first_y,
                const tile_buffers<S>& out, const tile_settings<S>& settings) {
    settings.validate();
    using B = simd_batch_t<S>;
    const glm::vec<2, B> offset(B(settings.height_offset.x), B(settings.height_offset.y));
    const auto sample = [&](const glm::vec<2, B>& p, const S* x, S y) {
        return detail::sample_field(field, p, x, y, settings);
    };
    detail::fill_tile(field, sampling, first_x, first_y, out, settings.threads, "gorge::erode_tile", sample,
                      [&](const glm::vec<2, B>& p, const height_sample<B>& h, std::ptrdiff_t i, std::ptrdiff_t j,
                          std::size_t count) {
                          const erosion_result<B> r = erosion_filter<Hash>(p, h.height_and_slope, h.fade_target,
                                                                           settings.erosion, settings.seed);
                          if (out.height.data())
                              store_lanes<S>(apply_height_offset(h.height_and_slope.x, r, h.fade_target, offset),
                                             &out.height(i, j), count);
                          if (out.ridge_map.data()) store_lanes<S>(r.ridge_map, &out.ridge_map(i, j), count);
                          if (out.gradient_x.data())
                              store_lanes<S>(h.height_and_slope.y + r.slope_delta.x, &out.gradient_x(i, j), count);
                          if (out.gradient_y.data())
                              store_lanes<S>(h.height_and_slope.z + r.slope_delta.y, &out.gradient_y(i, j), count);
                      });
}

/// Fills the tile's height and gradient buffers with the raw field (no erosion); ridge_map must
/// be unset. `field` as for erode_tile; `threads` follows the rule of tile_settings::threads
/// (default 1, 0 = all hardware threads, at most max_threads). When only `height` is set and the
/// field has a value-only member `value(glm::vec<2, T>) -> T` for batches (gorge's noise fields
/// do), that member is called instead of the full field: the same heights (bit for bit for
/// gorge's fields), without the gradient's work.
template <class S, class Field>
void evaluate_tile(const Field& field, const tile_sampling<S>& sampling, std::int64_t first_x, std::int64_t first_y,
                   const tile_buffers<S>& out, unsigned threads = 1) {
    if (out.ridge_map.data())
        throw std::invalid_argument("gorge::evaluate_tile: ridge_map is not an output of a raw field");
    using B = simd_batch_t<S>;
    const char* const who = "gorge::evaluate_tile";
    if constexpr (detail::has_batch_value<Field, B>::value) {
        if (!out.gradient_x.data() && !out.gradient_y.data()) {
            detail::fill_tile(
                field, sampling, first_x, first_y, out, threads, who,
                [&](const glm::vec<2, B>& p, const S*, S) { return field.value(p); },
                [&](const glm::vec<2, B>&, const B& h, std::ptrdiff_t i, std::ptrdiff_t j, std::size_t count) {
                    store_lanes<S>(h, &out.height(i, j), count);
                });
            return;
        }
    }
    const tile_settings<S> rule{};  // only consulted for the (unused) fade target of vec3 fields
    detail::fill_tile(
        field, sampling, first_x, first_y, out, threads, who,
        [&](const glm::vec<2, B>& p, const S* x, S y) { return detail::sample_field(field, p, x, y, rule); },
        [&](const glm::vec<2, B>&, const height_sample<B>& h, std::ptrdiff_t i, std::ptrdiff_t j, std::size_t count) {
            if (out.height.data()) store_lanes<S>(h.height_and_slope.x, &out.height(i, j), count);
            if (out.gradient_x.data()) store_lanes<S>(h.height_and_slope.y, &out.gradient_x(i, j), count);
            if (out.gradient_y.data()) store_lanes<S>(h.height_and_slope.z, &out.gradient_y(i, j), count);
        });
}

}  // namespace gorge
