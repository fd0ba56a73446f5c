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
// The height field is any callable that accepts glm::vec<2, T> for T = gorge::simd_batch_t<S>
// (the SIMD batch; S itself without xsimd), e.g. a generic lambda or a gorge/noise/field.hpp field.
// It returns either
//   - glm::vec<3, T>(h, dh/dx, dh/dy): the fade target then follows the documented rule
//     fade_target_from_altitude(h, valley_altitude, peak_altitude) (tile_settings), or
//   - gorge::height_sample<T>{(h, dh/dx, dh/dy), fade_target}: the field supplies it.
//
//   erode_tile<Hash>(field, sampling, first_x, first_y, buffers, settings)
//       height (eroded, with the height offset), ridge map and gradient of the eroded terrain;
//   evaluate_tile(field, sampling, first_x, first_y, buffers, threads)
//       the raw field (height and gradient), no erosion — previews and benchmarks.
//
// Threads: settings.threads (0 = std::thread::hardware_concurrency()); the calling thread and
// threads - 1 std::threads take blocks of rows from a shared counter (dynamic balancing, so a core
// slowed by other work does not hold the tile back). The field must be safe to call concurrently
// (pure functions are). An exception thrown by the field is rethrown in the caller after every
// thread has finished.
//
// Errors: std::invalid_argument naming the parameter for invalid erosion parameters, a
// non-finite origin, a spacing that is not finite and > 0, valley_altitude == peak_altitude (or
// non-finite), buffers of different sizes, no buffer at all, or a first_x / first_y so large that
// the tile's last index would overflow std::int64_t.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "batch.hpp"
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
    /// (o, k) of apply_height_offset; default (0, 0) outputs h + height_delta unchanged. The
    /// published demo uses (-0.65, 0). The gradient output ignores the offset's own derivative
    /// (zero for k == 0).
    glm::vec<2, S> height_offset = glm::vec<2, S>(S(0));
    /// Fade target rule for fields that return a plain vec3: -1 at valley_altitude and below, +1 at
    /// peak_altitude and above, linear between (fade_target_from_altitude). Finite, distinct.
    S valley_altitude = S(-1);  ///< default -1
    S peak_altitude = S(1);     ///< default +1
    std::uint32_t seed = 0;     ///< hash seed of the filter (default 0)
    unsigned threads = 1;       ///< worker threads; 0 = all hardware threads (default 1)
};

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

/// Height, slope and fade target of a field sample, whichever form the field returns.
template <class T, class S>
GORGE_FORCEINLINE height_sample<T> to_height_sample(const glm::vec<3, T>& h, const tile_settings<S>& s) {
    return {h, fade_target_from_altitude(h.x, T(s.valley_altitude), T(s.peak_altitude))};
}
template <class T, class S>
GORGE_FORCEINLINE height_sample<T> to_height_sample(const height_sample<T>& h, const tile_settings<S>&) {
    return h;
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

template <class S>
void check_sampling(const tile_sampling<S>& s, const char* who) {
    if (!(std::isfinite(s.origin.x) && std::isfinite(s.origin.y)))
        throw std::invalid_argument(std::string(who) + ": tile_sampling::origin must be finite");
    if (!(std::isfinite(s.spacing.x) && std::isfinite(s.spacing.y) && s.spacing.x > S(0) && s.spacing.y > S(0)))
        throw std::invalid_argument(std::string(who) + ": tile_sampling::spacing must be finite and > 0");
}

/// Throws unless first + extent (the tile's end index, padding included) fits in std::int64_t.
inline void check_index_range(std::int64_t first, std::ptrdiff_t extent, const char* name, const char* who) {
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    if (first > max - std::int64_t(extent))
        throw std::invalid_argument(std::string(who) + ": " + name + " + tile size overflows std::int64_t");
}

inline unsigned resolve_thread_count(unsigned requested, std::ptrdiff_t rows) {
    unsigned n = requested;
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
    if (rows < std::ptrdiff_t(n)) n = static_cast<unsigned>(rows);
    return std::max(1u, n);
}

/// Blocks of rows handed out per thread over the whole tile: small enough to even out uneven
/// rows and cores that other work slows down, large enough that handing out costs nothing.
constexpr std::ptrdiff_t row_blocks_per_thread = 8;

/// Runs rows(begin, end) over [0, height) on `threads` threads (the caller included), which take
/// blocks of consecutive rows from a shared counter until none is left. Which thread computes a
/// row never changes what the row holds.
template <class F>
void parallel_rows(std::ptrdiff_t height, unsigned threads, const F& rows) {
    if (threads <= 1) {
        rows(std::ptrdiff_t(0), height);
        return;
    }
    const std::ptrdiff_t block =
        std::max<std::ptrdiff_t>(1, height / (std::ptrdiff_t(threads) * row_blocks_per_thread));
    std::atomic<std::ptrdiff_t> next_row{0};
    std::vector<std::exception_ptr> errors(threads);
    const auto work = [&](unsigned t) {
        try {
            for (;;) {
                const std::ptrdiff_t begin = next_row.fetch_add(block);
                if (begin >= height) break;
                rows(begin, std::min(begin + block, height));
            }
        } catch (...) {
            errors[t] = std::current_exception();
            next_row.store(height);  // the others stop after their current block
        }
    };
    std::vector<std::thread> workers;
    workers.reserve(threads - 1);
    try {
        for (unsigned t = 1; t < threads; ++t) workers.emplace_back(work, t);
    } catch (...) {
        next_row.store(height);
        for (auto& w : workers) w.join();
        throw;  // could not start a thread (std::system_error)
    }
    work(0);
    for (auto& w : workers) w.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
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

}  // namespace detail

/// Fills the tile's buffers with the eroded terrain of `field` (see the header comment).
/// Global sample (first_x + i, first_y + j) goes to element (i, j) of every buffer that is set.
template <class Hash = pcg3d_hash, class S, class Field>
void erode_tile(const Field& field, const tile_sampling<S>& sampling, std::int64_t first_x, std::int64_t first_y,
                const tile_buffers<S>& out, const tile_settings<S>& settings) {
    static_assert(std::is_same<S, float>::value || std::is_same<S, double>::value,
                  "gorge::erode_tile: S must be float or double");
    constexpr const char* who = "gorge::erode_tile";
    settings.erosion.validate();
    detail::check_sampling(sampling, who);
    if (!(std::isfinite(settings.valley_altitude) && std::isfinite(settings.peak_altitude) &&
          settings.valley_altitude != settings.peak_altitude))
        throw std::invalid_argument(
            "gorge::erode_tile: tile_settings::valley_altitude and peak_altitude must be finite and differ");
    if (!(std::isfinite(settings.height_offset.x) && std::isfinite(settings.height_offset.y)))
        throw std::invalid_argument("gorge::erode_tile: tile_settings::height_offset must be finite");
    const auto size = detail::tile_size(out, who);
    const std::ptrdiff_t width = size.first, height = size.second;

    using B = simd_batch_t<S>;
    constexpr std::size_t lanes = simd_lanes<S>();
    detail::check_index_range(first_x, width + std::ptrdiff_t(lanes), "first_x", who);
    detail::check_index_range(first_y, height, "first_y", who);
    const std::vector<S> xs = detail::tile_columns(sampling, first_x, width);
    const glm::vec<2, B> offset(B(settings.height_offset.x), B(settings.height_offset.y));

    const auto rows = [&](std::ptrdiff_t row_begin, std::ptrdiff_t row_end) GORGE_TILE_FLATTEN {
        for (std::ptrdiff_t j = row_begin; j < row_end; ++j) {
            const B y(detail::lattice_coordinate(sampling.origin.y, sampling.spacing.y, first_y + std::int64_t(j)));
            for (std::ptrdiff_t i = 0; i < width; i += std::ptrdiff_t(lanes)) {
                const std::size_t count = std::min<std::size_t>(lanes, std::size_t(width - i));
                const glm::vec<2, B> p(load_lanes(xs.data() + i, lanes), y);
                const height_sample<B> h = detail::to_height_sample(field(p), settings);
                const erosion_result<B> r =
                    erosion_filter<Hash>(p, h.height_and_slope, h.fade_target, settings.erosion, settings.seed);
                if (out.height.data())
                    store_lanes<S>(apply_height_offset(h.height_and_slope.x, r, h.fade_target, offset),
                                   &out.height(i, j), count);
                if (out.ridge_map.data()) store_lanes<S>(r.ridge_map, &out.ridge_map(i, j), count);
                if (out.gradient_x.data())
                    store_lanes<S>(h.height_and_slope.y + r.slope_delta.x, &out.gradient_x(i, j), count);
                if (out.gradient_y.data())
                    store_lanes<S>(h.height_and_slope.z + r.slope_delta.y, &out.gradient_y(i, j), count);
            }
        }
    };
    detail::parallel_rows(height, detail::resolve_thread_count(settings.threads, height), rows);
}

/// Fills the tile's height and gradient buffers with the raw field (no erosion); ridge_map must
/// be unset. `field` returns glm::vec<3, T>(h, dh/dx, dh/dy) or a height_sample.
template <class S, class Field>
void evaluate_tile(const Field& field, const tile_sampling<S>& sampling, std::int64_t first_x, std::int64_t first_y,
                   const tile_buffers<S>& out, unsigned threads = 1) {
    static_assert(std::is_same<S, float>::value || std::is_same<S, double>::value,
                  "gorge::evaluate_tile: S must be float or double");
    constexpr const char* who = "gorge::evaluate_tile";
    detail::check_sampling(sampling, who);
    if (out.ridge_map.data())
        throw std::invalid_argument("gorge::evaluate_tile: ridge_map is not an output of a raw field");
    const auto size = detail::tile_size(out, who);
    const std::ptrdiff_t width = size.first, height = size.second;

    using B = simd_batch_t<S>;
    constexpr std::size_t lanes = simd_lanes<S>();
    detail::check_index_range(first_x, width + std::ptrdiff_t(lanes), "first_x", who);
    detail::check_index_range(first_y, height, "first_y", who);
    const std::vector<S> xs = detail::tile_columns(sampling, first_x, width);
    const tile_settings<S> rule{};  // only consulted for the (unused) fade target of vec3 fields

    const auto rows = [&](std::ptrdiff_t row_begin, std::ptrdiff_t row_end) GORGE_TILE_FLATTEN {
        for (std::ptrdiff_t j = row_begin; j < row_end; ++j) {
            const B y(detail::lattice_coordinate(sampling.origin.y, sampling.spacing.y, first_y + std::int64_t(j)));
            for (std::ptrdiff_t i = 0; i < width; i += std::ptrdiff_t(lanes)) {
                const std::size_t count = std::min<std::size_t>(lanes, std::size_t(width - i));
                const glm::vec<2, B> p(load_lanes(xs.data() + i, lanes), y);
                const glm::vec<3, B> h = detail::to_height_sample(field(p), rule).height_and_slope;
                if (out.height.data()) store_lanes<S>(h.x, &out.height(i, j), count);
                if (out.gradient_x.data()) store_lanes<S>(h.y, &out.gradient_x(i, j), count);
                if (out.gradient_y.data()) store_lanes<S>(h.z, &out.gradient_y(i, j), count);
            }
        }
    };
    detail::parallel_rows(height, detail::resolve_thread_count(threads, height), rows);
}

}  // namespace gorge
