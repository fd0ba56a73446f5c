// gorge/mpi/flow.hpp — D8 flow directions and flow accumulation of a tiled world across the
// ranks of an MPI job (optional component gorge::mpi).
//
// The results equal gorge::flow_directions and gorge::flow_accumulation on the whole map, bit for
// bit (directions depend on a cell's 3 x 3 neighbourhood only; accumulation is integer counting).
// The method follows Barnes (2017), "Parallel non-divergent flow accumulation for trillion cell
// digital elevation models on desktops or clusters", Environmental Modelling & Software 92,
// 202-212:
//   1. every rank sends the owner of each tile around each of its tiles the piece of its
//      perimeter on that tile's ring, so that each rank has its tiles' halos (the ring of cells
//      around a tile) and computes their exact D8 directions; neighbours exchange these directly
//      (MPI_Alltoallv), without the root;
//   2. every rank accumulates flow inside each tile, and sends the root, per perimeter cell, its
//      local accumulation, its direction and the next perimeter cell downstream of it inside the
//      tile (O(perimeter) data);
//   3. the root resolves the links between tiles in topological order and returns, per perimeter
//      cell, the flow entering it from other tiles;
//   4. every rank adds that inflow along the flow path of each entry cell through its tile and
//      hands directions and accumulation to the writer.
// Failures stop the job on every rank with job_error, as in fill.hpp.
//
// Every rank of `comm` must call it together, with equal layouts and options.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "../drainage/flow.hpp"
#include "../grid/grid.hpp"
#include "fill.hpp"
#include "tiled_world.hpp"

namespace gorge {
namespace mpi {

/// Receives tile r's D8 directions (gorge/drainage/d8.hpp codes) and flow accumulation (cells
/// draining through each cell, itself included; 0 for no-data), or throws.
using flow_tile_writer = std::function<void(const tile_rect& r, grid_view<const std::uint8_t> directions,
                                            grid_view<const std::uint32_t> accumulation)>;

/// Options of flow_accumulation_tiled.
template <class T>
struct tiled_flow_options {
    /// D8 rule, as d8_options::rule. Default d8_rule::steepest.
    d8_rule rule = d8_rule::steepest;
    /// Cells holding this value have no data (as d8_options::no_data). Default: none.
    std::optional<T> no_data;
    /// keep: each tile's directions and accumulation stay in memory between steps 2 and 4 (5
    /// bytes per cell); recompute: the tile is read and its directions computed again. Default keep.
    tile_retention retention = tile_retention::keep;
    /// The rank that resolves the links between tiles. Default 0; 0 <= root < ranks.
    int root = 0;
};

/// What flow_accumulation_tiled did, on this rank.
struct tiled_flow_stats {
    int tiles = 0;                 ///< tiles this rank handled
    std::uint64_t bytes_sent = 0;  ///< bytes this rank sent to other ranks
    std::uint64_t links = 0;       ///< root only: perimeter cells in the link graph (0 elsewhere)
};

/// D8 directions and flow accumulation of the tiled map `read` gives (usually heights filled by
/// fill_depressions_tiled, or single-machine fills), equal to gorge::flow_directions and
/// gorge::flow_accumulation on the whole map. `read` is called once per tile in step 1 and again
/// in step 4 with tile_retention::recompute (same cells both times); `write` once per tile.
/// Throws std::invalid_argument (every rank, before any communication) for a bad layout or
/// options, or a map of more than 2^32 - 1 cells (accumulation counts are 32-bit); job_error on
/// every rank when any rank fails.
tiled_flow_stats flow_accumulation_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<float>& read,
                                         const flow_tile_writer& write, const tiled_flow_options<float>& options = {});
tiled_flow_stats flow_accumulation_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<double>& read,
                                         const flow_tile_writer& write, const tiled_flow_options<double>& options = {});

}  // namespace mpi
}  // namespace gorge
