// gorge/erosion/droplet.hpp — droplet (particle) hydraulic erosion on a heightmap grid.
//
// The model is the one Hans Theobald Beyer described in his thesis "Implementation of a method for
// hydraulic erosion" (TU München, 2015) and Sebastian Lague popularised in "Coding Adventure:
// Hydraulic Erosion" (2019), in world units (droplet_params: heights and lengths in one unit, a
// cell is cell_size of them; at cell_size 1 and step_length 1 this is the model in cells). Each
// droplet is a point that walks downhill over the bilinearly interpolated heightmap:
//   1. height h and gradient g (heights per world unit) at the droplet from the four corners of
//      its cell (bilinear);
//   2. direction d = normalize(d * inertia - g * (1 - inertia)); the droplet moves step_length;
//   3. Δh = h(new position) - h(old position); carrying capacity (a volume)
//      c = max(-Δh * speed * water * capacity_factor, min_capacity);
//   4. going uphill (Δh > 0) it drops min(Δh · step_length², sediment) into the pit it leaves
//      (filling it up to the droplet's height at most); over capacity it drops
//      (sediment - c) * deposit_rate; both are spread bilinearly over the four corners of the
//      old cell;
//   5. otherwise it tries to pick up min((c - sediment) * erode_rate, -Δh · step_length²) (never
//      more than the height it just descended) through a radial brush of radius brush_radius
//      centred on the node nearest the droplet, node weights 1 - d/r normalised to sum 1; no node
//      is lowered below the height the droplet moves to, h(new position), so it takes less where
//      the brush reaches lower ground;
//   6. speed = sqrt(max(speed² - Δh * gravity, 0)) — it grows going downhill; water *= 1 - evaporate;
//   7. it dies after `lifetime` steps, when the flow direction vanishes (flat ground) or when it
//      leaves the map; the sediment it still carries is spread through the brush around the node
//      nearest its last position.
//
// What differs from the common implementations, deliberately:
//   - Speed sign: v² grows by -Δh·gravity (energy conservation: Δh < 0 downhill); several peers
//     add Δh·gravity, which slows droplets going downhill. The radicand is clamped at 0 and the
//     speed at a finite bound, so speed is never NaN or infinite.
//   - Conservation: sediment still carried when a droplet dies inside the map is spread through
//     the brush at its last position (a wide, smooth deposit: dumped into the 4 corners of one
//     cell it left a bump per droplet, and the terrain turned speckled); sediment carried over the
//     map edge is either removed and reported (droplet_edge::outflow, the default) or spread at
//     the last in-map position (droplet_edge::deposit). droplet_stats reports eroded, deposited
//     and outflow, and the terrain's volume (Σ heights × cell_size²) changes by exactly
//     deposited - eroded = -outflow (up to float rounding).
//   - No digging below the path: with the floor of step 5 no erosion step creates a pit deeper
//     than where the droplet goes, so the lowest height of the map never decreases (up to
//     rounding). Without it, and with the brush centred on the top-left node of the droplet's
//     cell (the usual choice), the brush of a droplet in the first row or column was centred on
//     the map edge, clipped and renormalised onto the edge nodes, and the trench it dug pulled
//     the next droplets back into that row: the top and left edges deepened exponentially while
//     the bottom and right ones, whose nodes are never brush centres, did not.
//   - Heights may be negative (erosion is not clamped at zero); the floor keeps a map's heights
//     at or above its lowest height.
//   - One shared brush table for the whole map: the (index offset, cell offset, weight) of each
//     cell closer than r to the node, plus, for the interior, the same weights laid out as rows
//     of 16-byte blocks (one copy per alignment of a row within a block) or, where AVX is
//     enabled, of 32-byte blocks loaded from wherever the row starts (one copy; a row of up to
//     8 float cells is one block), see brush_blocks; every cell gets the same arithmetic. At
//     the map border the brush is clipped to the map and renormalised, so the picked-up material
//     always equals what the terrain loses. What a step takes from each node is rounded down to
//     a multiple of its amount / 2^24 (float; 2^52 double) and summed as integers, so the total
//     does not depend on the map's alignment in memory. No per-cell tables.
//
// Memory: besides the caller's heightmap, a run allocates the brush tables (1.2 KiB for the
// default radius of 3 cells, 9.2 KiB at 8 cells, 142 KiB at the maximum of 32 cells, float, with
// 16-byte blocks; less with AVX's single copy) and, in the
// tiled schedule, 108 bytes per tile (a tile has at least (2·margin)² cells) plus the worker
// threads. droplet_workspace_bytes() returns the figure (the tests check it against what a run
// really holds at its peak); for maps of 128 × 128 cells or more with brush radius <= 8 cells it stays
// below half of the heightmap, so the total stays within 1.5× the heightmap. Thread stacks, which
// the operating system provides, are not counted.
//
// Random starts (documented generator): droplet k starts at a position derived from
// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014)
// used as a counter-based hash: z = mix64(mix64(seed) + (k + 1)·0x9E3779B97F4A7C15), the top 32
// bits of z pick x and the low 32 bits pick y uniformly in the droplet's start rectangle. Droplet k
// is therefore independent of how many droplets were requested and of any thread schedule.
//
// Schedules (droplet_options::schedule):
//   - serial: droplets k = 0 .. n-1 in order, starts uniform over [0, W-1) × [0, H-1).
//     Stopping after m droplets (cancellation) leaves the same map as a run of m droplets.
//   - tiled (parallel): the map is cut into tiles of at least 2·margin cells per side, margin =
//     travel + brush span + 7 cells (travel = ceil(lifetime · step_length / cell_size) + 1, span =
//     ceil(brush_radius / cell_size); see detail::droplet_tile_margin), which bounds how far a
//     droplet's writes can reach from the tile it starts in. Tiles are 4-coloured by the parity
//     of their column and row; tiles of one colour are at least 2·margin apart and run
//     concurrently, colours run one after another, and the whole sequence repeats `rounds`
//     times, each round taking its share of the droplets, on droplet_options::threads threads
//     (gorge's thread rule: default 1, 0 = all hardware threads). Each tile gets droplets in
//     proportion to its area, starting uniformly inside the tile (droplet indices are numbered
//     round by round, tile by tile). Droplets of a tile are confined to a position box (the
//     tile grown by `travel` cells); one reaching its side dies there like a droplet on flat
//     ground, which a droplet moving step_length per step can only do through rounding, so
//     disjointness follows from integer bounds, not from floating-point travel estimates. The result is bit-identical
//     for every thread count (including 1) and free of data races. The serial and tiled
//     schedules visit droplets in different orders and give different (statistically alike)
//     terrains. A map shorter than two tiles along an axis has one tile along it; a map of one
//     tile runs on one thread.
//   Both interleave droplets in groups of four by default (droplet_options::interleave):
//   droplets 4j .. 4j + 3 (counted from the start of each block of droplet_chunk droplets; a
//   range's last group may hold fewer) take their steps together while all of them live, and
//   each joint step first moves each of them (reading the map) and then lets each erode or
//   deposit (writing it), in index order; once one has ended, the others finish alone, in index
//   order. Four independent dependency chains stay in flight, and the hard-to-predict choice
//   between erosion and deposition of one droplet comes after the other droplets' reads in
//   program order, so a misprediction does not throw that work away. The order of all reads and
//   writes is fixed, so results stay deterministic; they differ from running the droplets one by
//   one only where droplets of a group come within a few cells of each other. Where the compiler
//   has vector extensions (GCC, Clang), the four moves of a joint step of float droplets run in
//   the four lanes of one 16-byte vector, lane by lane the same operations as one droplet's move
//   (same bits). interleave = false runs droplets strictly one after another.
//
// Guarantees: deterministic for a given seed, schedule and parameters (and, tiled, any thread
// count); no NaN or infinity for finite heights within ±droplet_height_limit<T>() (checked, as
// are the parameters; both throw std::invalid_argument naming the culprit): speed and capacity
// are clamped, a vanishing direction ends the droplet. Not guaranteed: the same bits across
// compilers or CPUs (floating-point contraction may differ); and that the eroded map stays within
// ±droplet_height_limit<T>(): deposits are not capped, so on relief near the limit with extreme
// capacities (seen with capacity_factor 2.6e8, and with min_capacity 7.8e8) a droplet can leave a
// cell beyond it, finite. A later eroder on such a map throws, naming the cell.
//
// Where the parts live: the public types (droplet_params, droplet_options, droplet_stats, ...)
// in gorge/erosion/droplet_params.hpp; in gorge/erosion/detail/, the brush tables
// (droplet_brush.hpp), the start positions (droplet_start.hpp), the step kernel
// (droplet_step.hpp) and the serial and tiled schedules (droplet_schedule.hpp). This header is
// the interface: droplet_eroder, erode_droplets and droplet_workspace_bytes.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

#include <glm/vec2.hpp>

#include "../detail/parallel.hpp"
#include "../detail/validate.hpp"
#include "../grid/grid.hpp"
#include "detail/droplet_brush.hpp"
#include "detail/droplet_schedule.hpp"
#include "detail/droplet_start.hpp"
#include "detail/droplet_step.hpp"
#include "droplet_params.hpp"

namespace gorge {

/// Bytes a batch run allocates besides the heightmap (brush table, tile tables, thread objects).
/// Thread stacks are not included. Throws like droplet_params::validate() for bad parameters.
template <class T>
std::size_t droplet_workspace_bytes(std::ptrdiff_t width, std::ptrdiff_t height, const droplet_params<T>& params,
                                    const droplet_options& options = {}) {
    params.validate();
    detail::checked_grid_span(width, height, width, "gorge::droplet_workspace_bytes");
    const double brush_cells = detail::droplet_brush_cells(params);
    std::size_t bytes = detail::droplet_brush_bytes<T>(brush_cells);
    if (options.schedule == droplet_schedule::tiled) {
        const std::size_t tiles = detail::droplet_tile_count(width, height, detail::droplet_travel(params),
                                                             detail::droplet_brush_span(brush_cells));
        // tile table, per-tile totals, colour order (one index per tile)
        bytes += tiles * (sizeof(detail::droplet_tile) + sizeof(detail::droplet_totals) + sizeof(std::uint32_t));
        bytes += std::size_t(detail::resolve_threads(options.threads, tiles)) * sizeof(detail::worker_thread);
    }
    return bytes;
}

/// Droplet erosion bound to one heightmap. Construction validates the parameters, the map size
/// (2..2^24 cells per side) and the heights (finite, |h| <= droplet_height_limit<T>()), and builds
/// the brush table; the view's memory is modified in place by run() and run_batch().
/// Not thread-safe: one run at a time per eroder (run_batch uses threads internally).
template <class T>
class droplet_eroder {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                  "droplet_eroder<T>: T must be float or double");

public:
    droplet_eroder(grid_view<T> heights, const droplet_params<T>& params)
        : map_(heights), params_(params) {
        params.validate();
        if (heights.empty()) throw std::invalid_argument("gorge::droplet_eroder: heights must not be empty");
        if (heights.width() < 2 || heights.height() < 2)
            throw std::invalid_argument("gorge::droplet_eroder: heights must be at least 2 x 2 cells, got " +
                                        std::to_string(heights.width()) + " x " + std::to_string(heights.height()));
        if (heights.width() > droplet_max_side || heights.height() > droplet_max_side)
            throw std::invalid_argument("gorge::droplet_eroder: heights wider or taller than 2^24 cells");
        check_heights();
        brush_ = detail::droplet_brush_table<T>(detail::droplet_brush_cells(params), heights.width(), heights.height(),
                                                heights.stride());
    }

    grid_view<T> heights() const { return map_; }
    const droplet_params<T>& params() const { return params_; }

    /// One droplet from `start`, which must lie in [0, width-1) × [0, height-1) (throws
    /// std::invalid_argument otherwise). Uses the whole map as its position box.
    droplet_result<T> run(glm::vec<2, T> start, droplet_edge edge = droplet_edge::outflow) {
        const T hx = T(map_.width() - 1), hy = T(map_.height() - 1);
        if (!(start.x >= T(0) && start.x < hx && start.y >= T(0) && start.y < hy))
            throw std::invalid_argument("gorge::droplet_eroder::run: start must lie in [0, width-1) x [0, height-1)");
        const detail::droplet_kernel<T> k = detail::make_droplet_kernel(map_, params_, brush_, edge);
        detail::droplet_state<T> d = k.spawn(start);
        while (k.template advance<0>(d)) {
        }
        return d.out;
    }

    /// Start position of droplet `index` in the serial schedule (see the header comment).
    glm::vec<2, T> serial_start(std::uint64_t seed, std::uint64_t index) const {
        return detail::droplet_start(
            seed, index, detail::make_droplet_start_rect<T>(0, map_.width() - 1, 0, map_.height() - 1));
    }

    /// `count` droplets (at most 2^53) in the schedule of `options`; see the header comment.
    droplet_stats run_batch(std::uint64_t count, const droplet_options& options = {}) {
        constexpr std::uint64_t max_count = std::uint64_t(1) << 53;
        if (count > max_count)
            detail::throw_invalid("gorge::droplet_eroder::run_batch", "count of droplets (must be <= 2^53)");
        options.validate();
        const detail::droplet_kernel<T> k = detail::make_droplet_kernel(map_, params_, brush_, options.edge);
        if (options.schedule == droplet_schedule::tiled) return detail::run_droplets_tiled(k, count, options);
        return detail::run_droplets_serial(k, count, options);
    }

private:
    void check_heights() const {
        const T limit = droplet_height_limit<T>();
        for (std::ptrdiff_t y = 0; y < map_.height(); ++y) {
            const T* row = map_.row(y);
            for (std::ptrdiff_t x = 0; x < map_.width(); ++x)
                if (!(std::abs(row[x]) <= limit))  // also rejects NaN
                    throw std::invalid_argument("gorge::droplet_eroder: height at cell (" + std::to_string(x) + ", " +
                                                std::to_string(y) + ") is " +
                                                (std::isfinite(row[x]) ? "beyond droplet_height_limit" : "not finite"));
        }
    }

    grid_view<T> map_;
    droplet_params<T> params_;
    detail::droplet_brush_table<T> brush_;  ///< brush weights for this map's stride
};

/// Erodes `heights` in place with `droplets` droplets; see droplet_eroder and the header comment.
template <class T>
droplet_stats erode_droplets(grid_view<T> heights, std::uint64_t droplets, const droplet_params<T>& params = {},
                             const droplet_options& options = {}) {
    droplet_eroder<T> eroder(heights, params);
    return eroder.run_batch(droplets, options);
}
/// Same for an owning grid.
template <class T>
droplet_stats erode_droplets(grid<T>& heights, std::uint64_t droplets, const droplet_params<T>& params = {},
                             const droplet_options& options = {}) {
    return erode_droplets(heights.view(), droplets, params, options);
}

}  // namespace gorge
