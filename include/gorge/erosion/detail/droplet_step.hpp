// gorge/erosion/detail/droplet_step.hpp — the step kernel of droplet erosion: a droplet's state,
// one step of the model of gorge/erosion/droplet.hpp split into move() (reads the map) and
// settle() (erodes through the brush or deposits bilinearly, then updates speed and water),
// finish() (a dying droplet drops what it carries), cache hints, and run_range(), which runs a
// range of droplets one by one or in interleaved groups of four (run_group); with vector
// extensions the moves of the four run in the four lanes of one vector (run_quad), the same
// operations per lane.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include <glm/vec2.hpp>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../../config.hpp"
#include "../../grid/grid.hpp"
#include "../droplet_params.hpp"
#include "droplet_brush.hpp"
#include "droplet_start.hpp"

#if defined(__GNUC__)
#define GORGE_DROPLET_LAMBDA_INLINE __attribute__((always_inline))
#define GORGE_DROPLET_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define GORGE_DROPLET_LAMBDA_INLINE
#define GORGE_DROPLET_NOINLINE __declspec(noinline)
#else
#define GORGE_DROPLET_LAMBDA_INLINE
#define GORGE_DROPLET_NOINLINE
#endif

namespace gorge {
namespace detail {

/// What an erosion step takes from one node is rounded down to a whole multiple of the step's
/// amount / 2^bits, and the multiples are summed as integers: the total then does not depend on
/// the order of the sum, which in the block path depends on the row's alignment in memory.
/// Since the brush weights sum to 1, a step's multiples sum to at most 2^bits (up to rounding),
/// well within int_type. Amounts below 2^bits times the smallest normal T are not eroded (the
/// quantum would leave the normal range).
template <class T>
struct droplet_take_quantum;
template <>
struct droplet_take_quantum<float> {
    using int_type = std::int32_t;
    static constexpr int bits = 24;
};
template <>
struct droplet_take_quantum<double> {
    using int_type = std::int64_t;
    static constexpr int bits = 52;
};

#if GORGE_DROPLET_BLOCKS
/// Sum of the lanes of an integer vector, adding its halves until one lane is left (a few
/// vector adds instead of one extraction per lane; integers, so the order does not matter).
template <class V>
GORGE_FORCEINLINE auto droplet_lane_sum(const V& v) -> typename std::decay<decltype(v[0])>::type {
    using lane = typename std::decay<decltype(v[0])>::type;
    constexpr std::size_t n = sizeof(V) / sizeof(lane);
    if constexpr (n == 1) {
        return v[0];
    } else {
        typedef lane half __attribute__((vector_size(sizeof(V) / 2)));
        half low, high;
        std::memcpy(&low, &v, sizeof(half));
        std::memcpy(&high, reinterpret_cast<const unsigned char*>(&v) + sizeof(half), sizeof(half));
        return droplet_lane_sum(low + high);
    }
}
#endif

/// Clamps that keep capacity and speed finite whatever the heights (see droplet_height_limit):
/// capacity below max / 4², speed below sqrt(max) / 4.
constexpr int droplet_clamp_headroom = 4;
template <class T>
T droplet_max_capacity() {
    return std::numeric_limits<T>::max() / T(droplet_clamp_headroom * droplet_clamp_headroom);
}
template <class T>
T droplet_max_speed() {
    return std::sqrt(std::numeric_limits<T>::max()) / T(droplet_clamp_headroom);
}

#if GORGE_DROPLET_BLOCKS
/// Vector types of an interleaved group of four droplets (see droplet_kernel::run_quad): lane i
/// holds droplet i; four lanes of T (16 bytes of float, 32 of double) and four 32-bit integers
/// (cell coordinates). Values of 32-byte vectors are never passed to or returned from a
/// function (that would change the calling convention without AVX): helpers take references.
template <class T>
struct droplet_quad;
template <>
struct droplet_quad<float> {
    typedef float vec __attribute__((vector_size(16)));
    typedef std::int32_t cells __attribute__((vector_size(16)));
};
template <>
struct droplet_quad<double> {
    typedef double vec __attribute__((vector_size(32)));
    typedef std::int32_t cells __attribute__((vector_size(16)));
};
#endif

/// Position box [x0, x1) × [y0, y1) in which droplets may move.
template <class T>
struct droplet_box {
    T x0, x1, y0, y1;
};

/// The whole map as a position box: [0, width - 1) × [0, height - 1).
template <class T>
droplet_box<T> droplet_map_box(std::ptrdiff_t width, std::ptrdiff_t height) {
    return {T(0), T(width - 1), T(0), T(height - 1)};
}

/// State of a droplet in flight.
template <class T>
struct droplet_state {
    T px, py, dx, dy, speed, water, sediment;
    int step;
    droplet_result<T> out;
    // Between move() and settle(): the step's height change, capacity and the cell left (move()
    // already sets px, py to the new position).
    T dh, capacity, fx, fy;
    T floor;  ///< height at the new position: the lowest an erosion step may leave a node
    std::ptrdiff_t cx, cy;
    // Cell the next move() starts from and the position's fractions in it, kept from the
    // step that got there (no second float-to-integer conversion): those of (px, py), or
    // already of (nx, ny) between move() and settle().
    std::ptrdiff_t start_cx, start_cy;
    T start_fx, start_fy;
};

/// The per-step code with every constant copied into one local object: stores through the
/// heightmap pointer cannot alias a local whose address never escapes, so the compiler keeps
/// the constants in registers instead of reloading them after every store.
template <class T>
struct droplet_kernel {
    static constexpr std::size_t lanes = droplet_block_lanes<T>();
    /// Droplets of an interleaved group (run_range, run_group).
    static constexpr std::size_t group_size = 4;

    T* data;
    std::ptrdiff_t stride, width, height;
    // Model constants in cells (see make_droplet_kernel): capacity_factor and min_capacity per
    // cell area, take_gradient = (1 - inertia) / cell_size, step_area = step_cells².
    T inertia, take_gradient, capacity_factor, min_capacity, erode_rate, deposit_rate, gravity, keep_water,
        initial_speed, initial_water, step_cells, step_area;
    double cell_area;  ///< cell_size², converts volumes in heights × cells to world volumes
    int lifetime;
    std::ptrdiff_t travel;  ///< droplet_travel(): cells a droplet's position can move from its start
    const droplet_brush_entry<T>* brush;
    std::size_t brush_count;
    int brush_span;  ///< droplet_brush_span of the brush radius in cells
    std::ptrdiff_t reach;
#if GORGE_DROPLET_BLOCKS
    const T* blocks;
    int block_rows, block_row, block_lead;
    std::ptrdiff_t block_x0, block_y0;
    std::size_t block_nx, block_ny;  ///< nodes of the block path from block_x0, block_y0 (0 if none)
    bool rows_share_alignment;
#endif
    droplet_box<T> whole, bounds;
    droplet_edge edge;
    /// prefetch_ahead's byte offsets from a cell (modulo 2^N: negative offsets wrap): first
    /// and last cell of the row above the brush, then of the second row below it.
    std::uintptr_t ahead[4];

    droplet_state<T> spawn(glm::vec<2, T> start) const {
        droplet_state<T> d{};
        d.px = start.x;
        d.py = start.y;
        d.dx = d.dy = d.sediment = T(0);
        d.speed = initial_speed;
        d.water = initial_water;
        d.step = 0;
        // px, py >= 0, so truncation is floor.
        d.start_cx = static_cast<std::ptrdiff_t>(d.px);
        d.start_cy = static_cast<std::ptrdiff_t>(d.py);
        d.start_fx = d.px - T(d.start_cx);
        d.start_fy = d.py - T(d.start_cy);
        return d;
    }

#if GORGE_DROPLET_BLOCKS
    static GORGE_FORCEINLINE std::size_t shift_of(const T* cell) {
        return (reinterpret_cast<std::uintptr_t>(cell) / sizeof(T)) % lanes;
    }

    /// Interior part of the brush: every brush row as whole blocks, each block passed to
    /// op(cells, weights) (zero weights must leave their cells unchanged). Aligned blocks
    /// (16 bytes) sit at block-aligned addresses, with the weight copy for the row's alignment:
    /// the next step's blocks either coincide with this step's or miss them, so their loads are
    /// forwarded from these stores instead of stalling on partly overlapping ones. Unaligned
    /// blocks (32 bytes, AVX) start block_lead cells before each brush row: a brush row of up
    /// to 8 float cells is one block instead of two or three. Every cell gets the same
    /// operation either way. R > 0 fixes the brush span at compile time (fully unrolled);
    /// R == 0 reads it.
    template <int R, class Op>
    GORGE_FORCEINLINE void brush_blocks(T* centre, Op&& op) const {
        using block = typename droplet_block<T>::type;
        const int reach_cells = R > 0 ? R - 1 : static_cast<int>(reach);
        const int rows = R > 0 ? 2 * R - 1 : block_rows;
        const int width_cells = R > 0 ? droplet_block_row(R, lanes) : block_row;
        const int lead = R > 0 ? droplet_block_lead(R, lanes) : block_lead;
        // A local copy: the block stores (memcpy) may alias any member, a local they cannot.
        const std::ptrdiff_t row_stride = stride;
        T* const first = centre - reach_cells * row_stride - reach_cells - lead;
        const auto row_blocks = [&](T* aligned, const T* weights) GORGE_DROPLET_LAMBDA_INLINE {
            for (int j = 0; j < width_cells; j += static_cast<int>(lanes)) {
                block cells, w;
                std::memcpy(&cells, aligned + j, sizeof(block));
                std::memcpy(&w, weights + j, sizeof(block));
                op(cells, w);
                std::memcpy(aligned + j, &cells, sizeof(block));
            }
        };
        const auto table_for = [&](std::size_t shift) GORGE_DROPLET_LAMBDA_INLINE {
            return blocks + shift * static_cast<std::size_t>(rows) * static_cast<std::size_t>(width_cells);
        };
        if (!droplet_blocks_aligned) {
            T* row_first = first;
            const T* weights = blocks;
            for (int row = 0; row < rows; ++row, row_first += row_stride, weights += width_cells)
                row_blocks(row_first, weights);
        } else if (rows_share_alignment) {
            const std::size_t shift = shift_of(first);
            T* aligned = first - shift;
            const T* weights = table_for(shift);
            for (int row = 0; row < rows; ++row, aligned += row_stride, weights += width_cells)
                row_blocks(aligned, weights);
        } else {
            T* row_first = first;
            for (int row = 0; row < rows; ++row, row_first += row_stride) {
                const std::size_t shift = shift_of(row_first);
                row_blocks(row_first - shift, table_for(shift) + row * width_cells);
            }
        }
    }

    /// Whether the blocks of the brush around node (cx, cy) lie inside the map.
    GORGE_FORCEINLINE bool blocks_fit(std::ptrdiff_t cx, std::ptrdiff_t cy) const {
        // One unsigned comparison per axis (below the lower bound wraps to a large value).
        return static_cast<std::size_t>(cx - block_x0) < block_nx && static_cast<std::size_t>(cy - block_y0) < block_ny;
    }
#endif

    /// Whether the whole brush around node (cx, cy) lies inside the map.
    GORGE_FORCEINLINE bool brush_fits(std::ptrdiff_t cx, std::ptrdiff_t cy) const {
        return cx >= reach && cx < width - reach && cy >= reach && cy < height - reach;
    }

    /// Sum of the brush weights around node (cx, cy) that fall on the map (the border clip).
    T weight_on_map(std::ptrdiff_t cx, std::ptrdiff_t cy) const {
        T inside = T(0);
        for (std::size_t e = 0; e < brush_count; ++e)
            if (on_map(cx, cy, brush[e])) inside += brush[e].weight;
        return inside;  // >= the centre's weight > 0: the centre node is on the map
    }
    GORGE_FORCEINLINE bool on_map(std::ptrdiff_t cx, std::ptrdiff_t cy, const droplet_brush_entry<T>& e) const {
        const std::ptrdiff_t x = cx + e.dx, y = cy + e.dy;
        return x >= 0 && y >= 0 && x < width && y < height;
    }

    /// Takes up to amount × weight from each node of the brush centred on node (cx, cy) at
    /// `centre`, but never lowers a node below `floor` (nodes already below it keep their
    /// height); each node's share is rounded to a multiple of amount / 2^bits (see
    /// droplet_take_quantum). At the map border the brush is clipped to the map and
    /// renormalised. Returns what was taken (<= amount, up to rounding).
    template <int R>
    GORGE_FORCEINLINE T erode(T* centre, std::ptrdiff_t cx, std::ptrdiff_t cy, T amount, T floor) const {
        using quantum = droplet_take_quantum<T>;
        using int_type = typename quantum::int_type;
        const T scale_up = std::ldexp(T(1), quantum::bits);
        const T quantum_step = amount / scale_up;  // exact: amount >= amount_min is normal
        if (!(quantum_step >= std::numeric_limits<T>::min())) return T(0);  // also amount == 0
        const T per_quantum = T(1) / quantum_step;
#if GORGE_DROPLET_BLOCKS
        if (blocks_fit(cx, cy)) {
            using block = typename droplet_block<T>::type;
            typedef int_type int_block __attribute__((vector_size(droplet_block_bytes / sizeof(T) * sizeof(int_type))));
            int_block count = {};
            const block zero = {};
            brush_blocks<R>(centre, [&](block& cells, const block& w) GORGE_DROPLET_LAMBDA_INLINE {
                block room = cells - floor;
                room = room > zero ? room : zero;
                const block want = amount * w;
                const block take = want < room ? want : room;
                // take >= 0: truncation rounds down, so no node goes below `floor` by more than rounding.
                const int_block n = __builtin_convertvector(take * per_quantum, int_block);
                cells -= __builtin_convertvector(n, block) * quantum_step;
                count += n;
            });
            return T(droplet_lane_sum(count)) * quantum_step;
        }
#endif
        const bool clip = !brush_fits(cx, cy);
        const T scale = clip ? amount / weight_on_map(cx, cy) : amount;
        int_type total = 0;
        for (std::size_t e = 0; e < brush_count; ++e) {
            if (clip && !on_map(cx, cy, brush[e])) continue;
            T& cell = centre[brush[e].offset];
            const T room = cell > floor ? cell - floor : T(0);
            const T want = scale * brush[e].weight;
            const T take = want < room ? want : room;
            const auto n = static_cast<int_type>(take * per_quantum);
            cell -= T(n) * quantum_step;
            total += n;
        }
        return T(total) * quantum_step;
    }

    /// Adds amount × weight to each node of the brush centred on node (cx, cy) at `centre`
    /// (clipped to the map and renormalised at the border, so exactly `amount` is added). R as
    /// in brush_blocks.
    template <int R>
    GORGE_FORCEINLINE void spread(T* centre, std::ptrdiff_t cx, std::ptrdiff_t cy, T amount) const {
#if GORGE_DROPLET_BLOCKS
        if (blocks_fit(cx, cy)) {
            using block = typename droplet_block<T>::type;
            brush_blocks<R>(centre, [&](block& cells, const block& w) GORGE_DROPLET_LAMBDA_INLINE { cells += amount * w; });
            return;
        }
#endif
        const bool clip = !brush_fits(cx, cy);
        const T scale = clip ? amount / weight_on_map(cx, cy) : amount;
        for (std::size_t e = 0; e < brush_count; ++e)
            if (!clip || on_map(cx, cy, brush[e])) centre[brush[e].offset] += scale * brush[e].weight;
    }

    /// spread() around the node nearest to the in-map position (px, py), with the common brush
    /// spans compiled in (as run_droplet_range). Kept out of line: the droplet state then never
    /// has its address taken and stays in registers.
    GORGE_DROPLET_NOINLINE void spread_at(T px, T py, T amount) const {
        const auto cx = static_cast<std::ptrdiff_t>(px), cy = static_cast<std::ptrdiff_t>(py);
        const std::ptrdiff_t nx = nearest_node(cx, px - T(cx)), ny = nearest_node(cy, py - T(cy));
        T* const centre = data + ny * stride + nx;
        switch (brush_span) {
            case 2: return spread<2>(centre, nx, ny, amount);
            case 3: return spread<3>(centre, nx, ny, amount);
            case 4: return spread<4>(centre, nx, ny, amount);
            default: return spread<0>(centre, nx, ny, amount);
        }
    }

    /// Adds amount bilinearly to the four corners of the cell at `cell` with fractions (fx, fy).
    static GORGE_FORCEINLINE void deposit_bilinear(T* cell, std::ptrdiff_t row_stride, T fx, T fy, T amount) {
        const T lower = amount * fy, upper = amount - lower;  // shares of rows y+1 and y
        cell[0] += upper - upper * fx;
        cell[1] += upper * fx;
        cell[row_stride] += lower - lower * fx;
        cell[row_stride + 1] += lower * fx;
    }

    /// Node nearest to a position in cell c with fraction f along one axis: c or c + 1.
    static GORGE_FORCEINLINE std::ptrdiff_t nearest_node(std::ptrdiff_t c, T f) {
        return c + (f >= T(0.5) ? 1 : 0);
    }

    /// Ends droplet d: the sediment it still carries is spread through the brush around the
    /// node nearest its (in-map) position, and its amounts are converted to world volumes.
    GORGE_FORCEINLINE void finish(droplet_state<T>& d, droplet_end why) const {
        if (d.sediment != T(0)) {
            spread_at(d.px, d.py, d.sediment);
            d.out.deposited += double(d.sediment);
            d.sediment = T(0);
        }
        d.out.eroded *= cell_area;
        d.out.deposited *= cell_area;
        d.out.outflow *= cell_area;
        d.out.position = {d.px, d.py};
        d.out.speed = d.speed;
        d.out.water = d.water;
        d.out.steps = d.step;
        d.out.end = why;
    }

    /// One step of the model of the header comment, confined to `bounds` (inside the map).
    /// Returns false once the droplet has ended (finish() done).
    template <int R>
    GORGE_FORCEINLINE bool advance(droplet_state<T>& d) const {
        return move(d) && settle<R>(d);
    }

    /// First half of a step: direction, new position and height change, reading the map
    /// only. Returns false if the droplet ended (finish() done); otherwise settle() must follow.
    GORGE_FORCEINLINE bool move(droplet_state<T>& d) const {
        // Below this squared length the direction counts as vanished; normal floats keep
        // normalisation accurate, so each step moves one cell length up to rounding.
        const T tiny_length2 = std::numeric_limits<T>::min();
        const T max_capacity = droplet_max_capacity<T>();

        const std::ptrdiff_t cx = d.start_cx, cy = d.start_cy;
        const T fx = d.start_fx, fy = d.start_fy;
        const T* const cell = data + cy * stride + cx;
        const T h00 = cell[0], h10 = cell[1], h01 = cell[stride], h11 = cell[stride + 1];
        const T gx = (h10 - h00) * (T(1) - fy) + (h11 - h01) * fy;
        const T gy = (h01 - h00) * (T(1) - fx) + (h11 - h10) * fx;
        const T top = h00 + fx * (h10 - h00), bottom = h01 + fx * (h11 - h01);
        const T h = top + fy * (bottom - top);

        const T carry = d.speed * d.water * capacity_factor;  // off the critical path
        T dx = d.dx * inertia - gx * take_gradient;
        T dy = d.dy * inertia - gy * take_gradient;
        const T length2 = dx * dx + dy * dy;
        if (!(length2 >= tiny_length2)) {
            finish(d, droplet_end::stopped);
            return false;
        }
        const T inv_length = T(1) / std::sqrt(length2);  // 0 if length2 overflowed: the droplet stays
        dx *= inv_length;
        dy *= inv_length;
        const T nx = d.px + dx * step_cells, ny = d.py + dy * step_cells;
        if (!(nx >= bounds.x0 && nx < bounds.x1 && ny >= bounds.y0 && ny < bounds.y1)) {
            if (nx >= whole.x0 && nx < whole.x1 && ny >= whole.y0 && ny < whole.y1) {
                finish(d, droplet_end::stopped);  // side of a tile's position box: die here
            } else {
                if (edge == droplet_edge::outflow) {
                    d.out.outflow += double(d.sediment);
                    d.sediment = T(0);
                }
                finish(d, droplet_end::left_map);
            }
            return false;
        }
        d.dx = dx;
        d.dy = dy;

        const auto ncx = static_cast<std::ptrdiff_t>(nx), ncy = static_cast<std::ptrdiff_t>(ny);
        const T nfx = nx - T(ncx), nfy = ny - T(ncy);
        const T* const ncell = data + ncy * stride + ncx;
        const T ntop = ncell[0] + nfx * (ncell[1] - ncell[0]);
        const T nbottom = ncell[stride] + nfx * (ncell[stride + 1] - ncell[stride]);
        const T new_height = ntop + nfy * (nbottom - ntop);
        const T dh = new_height - h;

        T capacity = -dh * carry;
        capacity = capacity > min_capacity ? capacity : min_capacity;  // NaN (0·inf) -> floor
        capacity = capacity < max_capacity ? capacity : max_capacity;
        d.px = nx;  // settle() needs only the cell left (cx, cy, fx, fy), not its position
        d.py = ny;
        d.dh = dh;
        d.floor = new_height;
        d.capacity = capacity;
        d.fx = fx;
        d.fy = fy;
        d.cx = cx;
        d.cy = cy;
        prefetch_ahead(ncell, dy);
        d.start_cx = ncx;  // nx, ny >= 0, so truncation is floor
        d.start_cy = ncy;
        d.start_fx = nfx;
        d.start_fy = nfy;
        return true;
    }

    /// Second half of a step after move(): erosion or deposition at the cell left, speed,
    /// water and the lifetime. Returns false once the droplet has ended.
    template <int R>
    GORGE_FORCEINLINE bool settle(droplet_state<T>& d) const {
        exchange<R>(d.sediment, d.out.eroded, d.out.deposited, d.dh, d.capacity, d.floor, d.cx, d.cy, d.fx, d.fy);
        const T radicand = d.speed * d.speed - d.dh * gravity;
        const T speed = std::sqrt(radicand > T(0) ? radicand : T(0));
        const T max_speed = droplet_max_speed<T>();
        d.speed = speed < max_speed ? speed : max_speed;
        d.water *= keep_water;
        if (++d.step == lifetime) {
            finish(d, droplet_end::lifetime);
            return false;
        }
        return true;
    }

    /// The map half of settle(): erosion through the brush or a bilinear deposit at the cell
    /// (cx, cy) left, with fractions (fx, fy); updates the sediment carried and the totals.
    template <int R>
    GORGE_FORCEINLINE void exchange(T& sediment, double& eroded, double& deposited, T dh, T capacity, T floor,
                                    std::ptrdiff_t cx, std::ptrdiff_t cy, T fx, T fy) const {
        if (sediment > capacity || dh > T(0)) {
            // Uphill: fill the pit behind, at most up to the droplet's height; else drop a
            // share of the excess.
            const T amount = dh > T(0) ? std::min(dh * step_area, sediment) : (sediment - capacity) * deposit_rate;
            deposit_bilinear(data + cy * stride + cx, stride, fx, fy, amount);
            sediment -= amount;
            deposited += double(amount);
        } else {
            // Never dig more than the height just descended (over one step's area), and never
            // leave a node below the height the droplet flows to.
            const T amount = std::min((capacity - sediment) * erode_rate, -dh * step_area);
            const std::ptrdiff_t ex = nearest_node(cx, fx), ey = nearest_node(cy, fy);
            const T taken = erode<R>(data + ey * stride + ex, ex, ey, amount, floor);
            sediment += taken;
            eroded += double(taken);
        }
    }

#if GORGE_DROPLET_BLOCKS
    using quad_vec = typename droplet_quad<T>::vec;
    using quad_mask = decltype(quad_vec{} < quad_vec{});

    /// out = {*p0, *p1, *p2, *p3} (float: four scalar loads joined by two unpacks and one move
    /// of halves).
    static GORGE_FORCEINLINE void quad_load(quad_vec& out, const T* p0, const T* p1, const T* p2, const T* p3) {
#if defined(__SSE2__)
        if constexpr (std::is_same<T, float>::value) {
            out = _mm_movelh_ps(_mm_unpacklo_ps(_mm_load_ss(p0), _mm_load_ss(p1)),
                                _mm_unpacklo_ps(_mm_load_ss(p2), _mm_load_ss(p3)));
            return;
        }
#endif
        out = quad_vec{*p0, *p1, *p2, *p3};
    }
    /// The four corners around each lane's cell, whose top-left heights are at p0..p3 in a map of
    /// `row` elements a row: h00 there, h10 to its right, h01 below, h11 below right.
    static GORGE_FORCEINLINE void quad_corners(quad_vec& h00, quad_vec& h10, quad_vec& h01, quad_vec& h11, const T* p0,
                                               const T* p1, const T* p2, const T* p3, std::ptrdiff_t row) {
        quad_load(h00, p0, p1, p2, p3);
        quad_load(h10, p0 + 1, p1 + 1, p2 + 1, p3 + 1);
        quad_load(h01, p0 + row, p1 + row, p2 + row, p3 + row);
        quad_load(h11, p0 + row + 1, p1 + row + 1, p2 + row + 1, p3 + row + 1);
    }
    /// Whether all four lanes of a comparison mask are set.
    static GORGE_FORCEINLINE bool quad_all(const quad_mask& m) {
#if defined(__SSE2__)
        if constexpr (std::is_same<T, float>::value) {
            __m128 bits;
            std::memcpy(&bits, &m, sizeof(bits));
            constexpr int all_lanes = 0xF;
            return _mm_movemask_ps(bits) == all_lanes;
        }
#endif
        return (m[0] & m[1] & m[2] & m[3]) != 0;
    }
    /// Square root of each lane, in place (correctly rounded, as std::sqrt).
    static GORGE_FORCEINLINE void quad_sqrt(quad_vec& v) {
#if defined(__SSE2__)
        if constexpr (std::is_same<T, float>::value) {
            v = _mm_sqrt_ps(v);
            return;
        } else {
            __m128d half[2];
            std::memcpy(half, &v, sizeof(half));
            half[0] = _mm_sqrt_pd(half[0]);
            half[1] = _mm_sqrt_pd(half[1]);
            std::memcpy(&v, half, sizeof(half));
            return;
        }
#endif
        for (int i = 0; i < 4; ++i) v[i] = std::sqrt(v[i]);
    }

    /// Interleaved group of four droplets d[0..3] in the lanes of one vector: the
    /// arithmetic of move() for all four at once, with the same operations per lane, then each
    /// droplet's exchange() in index order and the speed and water updates of settle(). Runs
    /// while all four stay inside `bounds` with a direction; returns with the four written back
    /// before the step where one does not (the scalar steps of run_group take it from there), or
    /// all four ended at the lifetime (finish() done, `alive` false). Reads and writes the map in
    /// the order of move 0, 1, 2, 3, then settle 0, 1, 2, 3.
    template <int R>
    GORGE_FORCEINLINE void run_quad(droplet_state<T>* d, bool& alive) const {
        using vec = quad_vec;
        using cells = typename droplet_quad<T>::cells;
        const vec one = vec{} + T(1), zero = {};
        const vec tiny_length2 = zero + std::numeric_limits<T>::min();
        const vec max_capacity = zero + droplet_max_capacity<T>(), max_speed = zero + droplet_max_speed<T>();
        const vec x0 = zero + bounds.x0, x1 = zero + bounds.x1, y0 = zero + bounds.y0, y1 = zero + bounds.y1;
        const vec inertia_v = zero + inertia, take_gradient_v = zero + take_gradient,
                  capacity_factor_v = zero + capacity_factor, min_capacity_v = zero + min_capacity,
                  step_cells_v = zero + step_cells, gravity_v = zero + gravity, keep_water_v = zero + keep_water;
        const std::ptrdiff_t row = stride;
        vec px = {d[0].px, d[1].px, d[2].px, d[3].px}, py = {d[0].py, d[1].py, d[2].py, d[3].py};
        vec dx = {d[0].dx, d[1].dx, d[2].dx, d[3].dx}, dy = {d[0].dy, d[1].dy, d[2].dy, d[3].dy};
        vec speed = {d[0].speed, d[1].speed, d[2].speed, d[3].speed};
        vec water = {d[0].water, d[1].water, d[2].water, d[3].water};
        vec fx = {d[0].start_fx, d[1].start_fx, d[2].start_fx, d[3].start_fx};
        vec fy = {d[0].start_fy, d[1].start_fy, d[2].start_fy, d[3].start_fy};
        // Scalars per droplet, named (not arrays) so that they stay in registers.
        std::ptrdiff_t cx0 = d[0].start_cx, cy0 = d[0].start_cy, cx1 = d[1].start_cx, cy1 = d[1].start_cy;
        std::ptrdiff_t cx2 = d[2].start_cx, cy2 = d[2].start_cy, cx3 = d[3].start_cx, cy3 = d[3].start_cy;
        T sediment0 = d[0].sediment, sediment1 = d[1].sediment, sediment2 = d[2].sediment,
          sediment3 = d[3].sediment;
        double eroded0 = d[0].out.eroded, eroded1 = d[1].out.eroded, eroded2 = d[2].out.eroded,
               eroded3 = d[3].out.eroded;
        double deposited0 = d[0].out.deposited, deposited1 = d[1].out.deposited, deposited2 = d[2].out.deposited,
               deposited3 = d[3].out.deposited;
        int step = d[0].step;  // the four started together
        const auto write_back = [&]() GORGE_DROPLET_LAMBDA_INLINE {
            for (int i = 0; i < 4; ++i) {
                d[i].px = px[i], d[i].py = py[i], d[i].dx = dx[i], d[i].dy = dy[i];
                d[i].speed = speed[i], d[i].water = water[i], d[i].start_fx = fx[i], d[i].start_fy = fy[i];
                d[i].step = step;
            }
            d[0].start_cx = cx0, d[0].start_cy = cy0, d[1].start_cx = cx1, d[1].start_cy = cy1;
            d[2].start_cx = cx2, d[2].start_cy = cy2, d[3].start_cx = cx3, d[3].start_cy = cy3;
            d[0].sediment = sediment0, d[1].sediment = sediment1, d[2].sediment = sediment2, d[3].sediment = sediment3;
            d[0].out.eroded = eroded0, d[1].out.eroded = eroded1, d[2].out.eroded = eroded2, d[3].out.eroded = eroded3;
            d[0].out.deposited = deposited0, d[1].out.deposited = deposited1;
            d[2].out.deposited = deposited2, d[3].out.deposited = deposited3;
        };
        for (;;) {
            // move() for the four lanes.
            const T* const c0 = data + cy0 * row + cx0;
            const T* const c1 = data + cy1 * row + cx1;
            const T* const c2 = data + cy2 * row + cx2;
            const T* const c3 = data + cy3 * row + cx3;
            vec h00, h10, h01, h11;
            quad_corners(h00, h10, h01, h11, c0, c1, c2, c3, row);
            const vec gx = (h10 - h00) * (one - fy) + (h11 - h01) * fy;
            const vec gy = (h01 - h00) * (one - fx) + (h11 - h10) * fx;
            const vec top = h00 + fx * (h10 - h00), bottom = h01 + fx * (h11 - h01);
            const vec h = top + fy * (bottom - top);

            const vec carry = speed * water * capacity_factor_v;
            vec ndx = dx * inertia_v - gx * take_gradient_v;
            vec ndy = dy * inertia_v - gy * take_gradient_v;
            const vec length2 = ndx * ndx + ndy * ndy;
            vec length = length2;
            quad_sqrt(length);
            const vec inv_length = one / length;
            ndx *= inv_length;
            ndy *= inv_length;
            const vec nx = px + ndx * step_cells_v, ny = py + ndy * step_cells_v;
            const quad_mask go = (length2 >= tiny_length2) & (nx >= x0) & (nx < x1) & (ny >= y0) & (ny < y1);
            if (!quad_all(go)) {
                write_back();  // the scalar steps redo this step (move() only reads)
                return;
            }
            // nx, ny lie in [0, width - 1) × [0, height - 1): truncation is floor, and exact in
            // 32 bits (run_range checks the map's size).
            const cells ncx = __builtin_convertvector(nx, cells), ncy = __builtin_convertvector(ny, cells);
            const vec nfx = nx - __builtin_convertvector(ncx, vec), nfy = ny - __builtin_convertvector(ncy, vec);
            const std::ptrdiff_t ncx0 = ncx[0], ncy0 = ncy[0], ncx1 = ncx[1], ncy1 = ncy[1];
            const std::ptrdiff_t ncx2 = ncx[2], ncy2 = ncy[2], ncx3 = ncx[3], ncy3 = ncy[3];
            const T* const n0 = data + ncy0 * row + ncx0;
            const T* const n1 = data + ncy1 * row + ncx1;
            const T* const n2 = data + ncy2 * row + ncx2;
            const T* const n3 = data + ncy3 * row + ncx3;
            vec n00, n10, n01, n11;
            quad_corners(n00, n10, n01, n11, n0, n1, n2, n3, row);
            const vec ntop = n00 + nfx * (n10 - n00);
            const vec nbottom = n01 + nfx * (n11 - n01);
            const vec new_height = ntop + nfy * (nbottom - ntop);
            const vec dh = new_height - h;
            vec capacity = -dh * carry;
            capacity = capacity > min_capacity_v ? capacity : min_capacity_v;  // NaN (0·inf) -> floor
            capacity = capacity < max_capacity ? capacity : max_capacity;
            prefetch_ahead(n0, ndy[0]);
            prefetch_ahead(n1, ndy[1]);
            prefetch_ahead(n2, ndy[2]);
            prefetch_ahead(n3, ndy[3]);

            // settle(): the cells left are kept for the exchanges; the state moves on.
            const std::ptrdiff_t lx0 = cx0, ly0 = cy0, lx1 = cx1, ly1 = cy1, lx2 = cx2, ly2 = cy2, lx3 = cx3,
                                 ly3 = cy3;
            const vec lfx = fx, lfy = fy;
            px = nx, py = ny, dx = ndx, dy = ndy, fx = nfx, fy = nfy;
            cx0 = ncx0, cy0 = ncy0, cx1 = ncx1, cy1 = ncy1, cx2 = ncx2, cy2 = ncy2, cx3 = ncx3, cy3 = ncy3;
            const vec radicand = speed * speed - dh * gravity_v;
            vec new_speed = radicand > zero ? radicand : zero;
            quad_sqrt(new_speed);
            speed = new_speed < max_speed ? new_speed : max_speed;
            water *= keep_water_v;
            if (++step == lifetime) {
                // Each droplet's exchange, then its end (the death deposit), in index order.
                write_back();
                const std::ptrdiff_t lx[4] = {lx0, lx1, lx2, lx3}, ly[4] = {ly0, ly1, ly2, ly3};
                for (int i = 0; i < 4; ++i) {
                    exchange<R>(d[i].sediment, d[i].out.eroded, d[i].out.deposited, dh[i], capacity[i],
                                new_height[i], lx[i], ly[i], lfx[i], lfy[i]);
                    finish(d[i], droplet_end::lifetime);
                }
                alive = false;
                return;
            }
            exchange<R>(sediment0, eroded0, deposited0, dh[0], capacity[0], new_height[0], lx0, ly0, lfx[0], lfy[0]);
            exchange<R>(sediment1, eroded1, deposited1, dh[1], capacity[1], new_height[1], lx1, ly1, lfx[1], lfy[1]);
            exchange<R>(sediment2, eroded2, deposited2, dh[2], capacity[2], new_height[2], lx2, ly2, lfx[2], lfy[2]);
            exchange<R>(sediment3, eroded3, deposited3, dh[3], capacity[3], new_height[3], lx3, ly3, lfx[3], lfy[3]);
        }
    }
#endif

    /// Droplets d[0..n-1] (n <= 4) as one interleaved group: while all live, each joint step
    /// moves each (reads the map) and then settles each that moved (writes it), in index order;
    /// then the survivors finish alone, in index order. A full group moves in vector lanes (run_quad; `in_lanes`: the map's cells fit in 32 bits), which gives the same
    /// bits as the scalar steps.
    template <int R>
    GORGE_FORCEINLINE void run_group(droplet_state<T>* d, std::size_t n, bool in_lanes) const {
        bool alive[group_size] = {true, true, true, true};
#if GORGE_DROPLET_BLOCKS
        if (n == group_size && in_lanes) {
            bool all = true;
            run_quad<R>(d, all);
            if (!all) return;  // all four ended at the lifetime
        }
#else
        (void)in_lanes;
#endif
        for (;;) {
            bool all = true;
            for (std::size_t i = 0; i < n; ++i) all = all && alive[i];
            if (!all) break;
            bool moved[group_size] = {};
            for (std::size_t i = 0; i < n; ++i) moved[i] = move(d[i]);
            for (std::size_t i = 0; i < n; ++i) alive[i] = moved[i] && settle<R>(d[i]);
        }
        for (std::size_t i = 0; i < n; ++i)
            while (alive[i]) alive[i] = advance<R>(d[i]);
    }

    // Cache hints. Droplets start at random cells of a map that is usually larger than the
    // core's own caches, and a droplet's next brush rows are new to it whenever it changes
    // row, so without hints most steps wait for a cache miss somewhere on their dependency
    // chain. Hints read nothing in the C++ sense (no data race; prefetch_start clips its
    // addresses to the map, prefetch_ahead computes its as integers) and change no result.

    /// Prefetches the first and last cell of every row of the region written around the cell
    /// of a start position (brush rows and block slack). Up to radius 3 a row spans at most 12
    /// cells, so these two cover all of its cache lines; wider brushes leave middle lines to
    /// the hardware.
    GORGE_FORCEINLINE void prefetch_start(glm::vec<2, T> start) const {
#if defined(__GNUC__)
        const auto cx = static_cast<std::ptrdiff_t>(start.x), cy = static_cast<std::ptrdiff_t>(start.y);
        const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(0, cx - reach - droplet_block_slack);
        const std::ptrdiff_t x1 =
            std::min<std::ptrdiff_t>(width - 1, cx + reach + 1 + droplet_block_slack);
        const std::ptrdiff_t y0 = std::max<std::ptrdiff_t>(0, cy - reach);
        const std::ptrdiff_t y1 = std::min<std::ptrdiff_t>(height - 1, cy + reach + 1);
        for (std::ptrdiff_t y = y0; y <= y1; ++y) {
            __builtin_prefetch(data + y * stride + x0, 1);
            __builtin_prefetch(data + y * stride + x1, 1);
        }
#else
        (void)start;
#endif
    }

    /// Prefetches, around the cell `cell` the droplet has just reached, the first and last
    /// cell of the row just above its brush when the droplet moves up (dy < 0), else of the
    /// second row below it (the cell's lower corners lie a row below the node): the rows that
    /// a droplet changing row reaches within a step or two. The byte offsets are the kernel's
    /// (`ahead`: above, then below); the addresses are computed as integers and are not
    /// clipped, so near the map's edge they may lie outside it, which a prefetch tolerates (it
    /// never faults and reads nothing in the C++ sense).
    GORGE_FORCEINLINE void prefetch_ahead(const T* cell, T dy) const {
#if defined(__GNUC__)
        const auto at = reinterpret_cast<std::uintptr_t>(cell);
        const std::uintptr_t* const row = ahead + (dy < T(0) ? 0 : 2);
        __builtin_prefetch(reinterpret_cast<const void*>(at + row[0]), 1);
        __builtin_prefetch(reinterpret_cast<const void*>(at + row[1]), 1);
#else
        (void)cell;
        (void)dy;
#endif
    }

    /// Droplets first..last-1 of stream `seed` starting in `rect`, in index order; with
    /// `interleave`, in groups of four (first + 4j .. first + 4j + 3; the range's last group
    /// may be smaller) that step together (run_group): move 0, 1, 2, 3 (reads), then settle 0,
    /// 1, 2, 3 (writes); once one has ended, the others finish alone in index order. Four
    /// independent dependency chains keep the core busy, and the order of every read and write
    /// is fixed.
    template <int R, class Sink>
    void run_range(std::uint64_t seed, std::uint64_t first, std::uint64_t last, const droplet_start_rect<T>& rect,
                   bool interleave, Sink& sink) const {
        std::uint64_t k = first;
        if (interleave) {
            // run_quad converts cell coordinates in 32 bits.
            constexpr std::ptrdiff_t lane_cells = std::numeric_limits<std::int32_t>::max();
            const bool in_lanes = width <= lane_cells && height <= lane_cells;
            // Starts of the next group, computed once for the prefetch and the spawn.
            glm::vec<2, T> next[group_size] = {};
            std::size_t next_n = static_cast<std::size_t>(std::min<std::uint64_t>(last - k, group_size));
            for (std::size_t i = 0; i < next_n; ++i) next[i] = droplet_start(seed, k + i, rect);
            while (k < last) {
                const std::size_t n = next_n;
                droplet_state<T> d[group_size];
                for (std::size_t i = 0; i < n; ++i) d[i] = spawn(next[i]);
                k += n;
                next_n = static_cast<std::size_t>(std::min<std::uint64_t>(last - k, group_size));
                for (std::size_t i = 0; i < next_n; ++i) {
                    next[i] = droplet_start(seed, k + i, rect);
                    prefetch_start(next[i]);
                }
                run_group<R>(d, n, in_lanes);
                for (std::size_t i = 0; i < n; ++i) sink(d[i].out);
            }
            return;
        }
        for (; k < last; ++k) {
            if (last - k >= 2) prefetch_start(droplet_start(seed, k + 1, rect));
            droplet_state<T> d = spawn(droplet_start(seed, k, rect));
            while (advance<R>(d)) {
            }
            sink(d.out);
        }
    }
};

/// Cells a droplet's position can move from its start: lifetime steps of step_length /
/// cell_size cells, rounded up, plus one.
template <class T>
std::ptrdiff_t droplet_travel(const droplet_params<T>& params) {
    const T step_cells = params.step_length / params.cell_size;
    return static_cast<std::ptrdiff_t>(std::ceil(double(params.lifetime) * double(step_cells))) + 1;
}

/// Brush radius of `params` in cells.
template <class T>
double droplet_brush_cells(const droplet_params<T>& params) {
    return double(params.brush_radius) / double(params.cell_size);
}

/// Kernel for droplets on `map` moving anywhere on it (bounds = the whole map).
template <class T>
droplet_kernel<T> make_droplet_kernel(grid_view<T> map, const droplet_params<T>& params,
                                      const droplet_brush_table<T>& brush, droplet_edge edge) {
    droplet_kernel<T> k{};
    k.data = map.data();
    k.stride = map.stride();
    k.width = map.width();
    k.height = map.height();
    const T area = params.cell_size * params.cell_size;
    k.inertia = params.inertia;
    k.take_gradient = (T(1) - params.inertia) / params.cell_size;
    k.capacity_factor = params.capacity_factor / area;
    k.min_capacity = params.min_capacity / area;
    k.step_cells = params.step_length / params.cell_size;
    k.step_area = k.step_cells * k.step_cells;
    k.cell_area = double(area);
    k.travel = droplet_travel(params);
    k.erode_rate = params.erode_rate;
    k.deposit_rate = params.deposit_rate;
    k.gravity = params.gravity;
    k.keep_water = T(1) - params.evaporate_rate;
    k.initial_speed = params.initial_speed;
    k.initial_water = params.initial_water;
    k.lifetime = params.lifetime;
    k.brush = brush.entries.data();
    k.brush_count = brush.entries.size();
    k.brush_span = brush.span;
    k.reach = brush.reach;
#if GORGE_DROPLET_BLOCKS
    k.blocks = brush.blocks.data();
    k.block_rows = brush.block_rows;
    k.block_row = brush.block_row;
    k.block_lead = brush.block_lead;
    k.block_x0 = brush.block_x0;
    k.block_y0 = brush.block_y0;
    k.block_nx = static_cast<std::size_t>(std::max<std::ptrdiff_t>(brush.block_x1 - brush.block_x0, 0));
    k.block_ny = static_cast<std::size_t>(std::max<std::ptrdiff_t>(brush.block_y1 - brush.block_y0, 0));
    k.rows_share_alignment = brush.rows_share_alignment;
#endif
    // prefetch_ahead: first and last cell of the row above the brush and of the second row below.
    const std::ptrdiff_t ahead_x0 = -k.reach - droplet_block_slack, ahead_x1 = k.reach + 1 + droplet_block_slack;
    const std::ptrdiff_t ahead_y0 = -k.reach - 1, ahead_y1 = k.reach + 2;
    const std::ptrdiff_t ahead_cells[4] = {ahead_y0 * k.stride + ahead_x0, ahead_y0 * k.stride + ahead_x1,
                                           ahead_y1 * k.stride + ahead_x0, ahead_y1 * k.stride + ahead_x1};
    for (int i = 0; i < 4; ++i)
        k.ahead[i] = static_cast<std::uintptr_t>(ahead_cells[i]) * std::uintptr_t(sizeof(T));
    k.whole = droplet_map_box<T>(map.width(), map.height());
    k.bounds = k.whole;
    k.edge = edge;
    return k;
}

/// Droplets first..last-1 of stream `seed` starting in `rect`, confined to `bounds`, in index
/// order (in groups of four with `interleave`), each droplet's result passed to `sink`. The kernel is
/// copied into a local object (see droplet_kernel); the common brush radii are compiled in (the
/// arithmetic is identical either way).
template <class T, class Sink>
void run_droplet_range(const droplet_kernel<T>& kernel, const droplet_box<T>& bounds, std::uint64_t seed,
                       std::uint64_t first, std::uint64_t last, const droplet_start_rect<T>& rect, bool interleave,
                       Sink&& sink) {
    droplet_kernel<T> k = kernel;
    k.bounds = bounds;
    switch (k.brush_span) {
        case 2: return k.template run_range<2>(seed, first, last, rect, interleave, sink);
        case 3: return k.template run_range<3>(seed, first, last, rect, interleave, sink);
        case 4: return k.template run_range<4>(seed, first, last, rect, interleave, sink);
        default: return k.template run_range<0>(seed, first, last, rect, interleave, sink);
    }
}

}  // namespace detail
}  // namespace gorge
