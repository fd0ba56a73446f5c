// gorge/mpi/fill.hpp — depression filling of a tiled world across the ranks of an MPI job
// (optional component gorge::mpi; CMake: find_package(gorge COMPONENTS mpi), target gorge::mpi).
//
// fill_depressions_tiled's result equals gorge::fill_depressions on the whole map, bit for bit,
// and fill_depressions_epsilon_tiled's equals gorge::fill_depressions_epsilon (see "Epsilon
// filling across tiles" below), while no rank ever holds more than its tiles (one at a time with
// tile_retention::recompute) plus perimeter data. The plain fill's method is Barnes (2016), "Parallel priority-flood depression filling for trillion cell
// digital elevation models on desktops or clusters", Computers & Geosciences 96, 57-64:
//   1. every rank fills each of its tiles on its own with a Priority-Flood seeded from the tile's
//      perimeter, which labels watersheds: each perimeter cell starts its own label, except
//      outlets of the whole map (cells on the map edge or next to a no-data cell), which share
//      the label "outside". Where two labels meet, the flood records the lowest height at which
//      water passes from one to the other (the spill graph);
//   2. each rank sends only its tiles' perimeters (heights and labels) and spill graphs to the
//      root rank: O(perimeter) bytes per tile, never O(area). A tile sends only the edges of a
//      minimum spanning forest of its label graph (Kruskal; the touching perimeter seeds, which
//      the root joins itself, count as edges): that keeps every minimax path value, so every
//      spill level, and bounds the edges sent by the perimeter cells, not by the terrain;
//   3. the root joins the tiles' graphs along the tile borders and solves the global spill level
//      of every label by a Priority-Flood over the label graph from "outside", then sends each
//      rank the levels of its tiles' labels;
//   4. every rank finishes its tiles: each cell becomes max(its tile-local fill, its label's
//      spill level), and hands them to the tile writer.
// Conventions are those of gorge::fill_depressions: 8-connectivity, outlets on the map edge and
// next to no-data cells, no-data cells unchanged, no cell written as -0.
//
// Failures. Any exception in a rank (a tile that cannot be read, a non-finite cell, a writer
// error) stops the whole job at the next collective step: every rank throws job_error, whose
// message names the failing rank and tile ("gorge::mpi: rank 2, tile 5 (1, 1): ..."), and the
// writer is never called once a failure is known before the finishing step. The file variant
// (fill_depressions_tile_files) stages its outputs outside the output directory and renames them
// into it only when every rank has staged all of its tiles, so a failed job leaves the output
// directory as it was. A rank that dies makes MPI abort the job (MPI_ERRORS_ARE_FATAL, the
// default): mpirun names the rank; the other ranks are stopped by MPI and throw nothing.
//
// Out of core. With tile_retention::recompute a rank holds one tile at a time; the root also
// holds the spill graph, O(perimeter cells of all tiles) = O(map cells / tile side), edges
// inside tiles included (at most one per perimeter cell). tiled_fill_options::memory_cap
// checks both against a cap.
//
// Epsilon filling across tiles (fill_depressions_epsilon_tiled): the result equals
// gorge::fill_depressions_epsilon on the whole map, bit for bit. That fill returns the least
// surface E with E >= Z, E = Z at outlets and a strictly lower data neighbour for every other data
// cell; away from outlets E(c) = max(Z(c), succ(min over data neighbours n of E(n))), succ being
// one ulp up (gorge/drainage/depression_fill.hpp, "The epsilon surface"). Why tiles can find it:
//   - given the true E on the ring of cells around a tile, the tile's own least surface for that
//     ring (gorge::detail::least_epsilon_surface) is the true E inside it: E restricted to the
//     tile satisfies the tile's conditions, so the tile's least surface L is <= E there; L joined
//     with E outside the tile satisfies the whole map's conditions, so it is >= E. Hence L = E;
//   - so only the ring values are unknown. They are found by iterating from above: in round 0
//     every ring value is -infinity off the map's edge and +infinity elsewhere (nothing known);
//     each round every tile whose ring changed is solved with its current ring, and its perimeter
//     (E, or -infinity at no-data cells, +infinity where nothing reached yet) becomes the rings of
//     its 8 neighbouring tiles (corner cells go to the diagonal tiles) for the next round. Rounds
//     repeat until no ring value changes anywhere;
//   - the least surface only goes down when its ring goes down, and a ring that is >= the true E
//     gives a surface >= the true E: by induction every value is >= E and never rises. Each
//     round carries the true values one tile further along every drain path (each step of the
//     path, from its outlet, bounds the solved value by the true one), so after k rounds every
//     cell whose drain path from its outlet crosses k tile borders holds its true value. Rounds
//     <= (tile-border crossings of the longest such path) + 2: one round learns that a neighbour
//     tile's perimeter cell has no data (an outlet), and the last round changes nothing. A
//     smooth map drains in a few rounds; a basin chain winding through every tile needs about one
//     round per tile on the chain, and a flat draining along a tile border, crossing it again and
//     again, one round per crossing (tiled_fill_stats::rounds says how many were taken).
// Iterating from below (from the plain fill upwards) would not do: on a flat crossing a tile
// border each side would lift the other by one ulp a round, like counting to infinity. The
// result is unique, so it does not depend on the tile grid, the rank count or the order of the
// tiles: the tests compare it bit for bit with the single-machine fill on several grids and rank
// counts. Rounds are counted the same way on every rank count (a round sees only the previous
// round's perimeters).
// Communication: each round, each rank sends to the owners of neighbouring tiles only the
// perimeter pieces that changed (ring order, 8 bytes of header per piece): per tile and round at
// most 2 (w + h) + 4 values (its perimeter, corner cells counted thrice: each goes to 3 tiles)
// and 64 header bytes, so bytes sent per rank are O(perimeter x rounds), never O(area); besides,
// the pieces' all-to-all, each round takes five collectives of one integer (the counts, three
// failure checks, the "anything changed" flag). No rank gathers the map or a graph.
// Cost: every tile is solved in full in round 0 (least_epsilon_surface). With
// tile_retention::keep a rank keeps each tile's heights and surface (2 sizeof(T) bytes per cell),
// and a later round only lowers the kept surface from the ring cells that went down (a Dijkstra
// search over the cells that go down with them), so the later rounds cost little: all ranks
// together execute about 1.15x the single-machine fill's instructions (1024^2 in 4 x 4 tiles),
// and one rank fills 4096^2 in 4 x 4 tiles in about 0.9x its time. With recompute a rank keeps
// only rings and perimeters, and reads and solves a tile in full again in every round in which
// its ring changed, plus once more at the end to write it (reads per tile = solves + 1; a tile
// untouched after round 0 is read twice): about 4-5x the CPU time of keep (4096^2, 7 rounds). Failures, staging of the file variant, memory_cap and progress work as for the
// plain fill (tile_read: once per tile, in round 0; levels_solved: the rings have settled).
// The epsilon statistics of gorge::fill_stats (max_gradient_rise, overtaken_cells) need the plain
// fill as well and are not reported; raised_cells is.
//
// Every rank of `comm` must call these functions together, with equal layouts and options.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "../grid/grid.hpp"
#include "tiled_world.hpp"

namespace gorge {
namespace mpi {

/// The job failed: thrown on every rank. what() names the first failing rank and its tile.
class job_error : public std::runtime_error {
public:
    job_error(const std::string& message, int rank, int tile)
        : std::runtime_error(message), rank_(rank), tile_(tile) {}
    /// The rank that failed first (lowest rank number among those that failed at the same step).
    int rank() const noexcept { return rank_; }
    /// The tile it was working on, or -1 when the failure concerned no single tile.
    int tile() const noexcept { return tile_; }

private:
    int rank_;
    int tile_;
};

/// Produces tile r's heights: fills `cells` (r.width x r.height, row-major view) or throws.
template <class T>
using tile_reader = std::function<void(const tile_rect& r, grid_view<T> cells)>;
/// Receives tile r's finished heights, or throws.
template <class T>
using tile_writer = std::function<void(const tile_rect& r, grid_view<const T> cells)>;

/// Whether a rank keeps its filled tiles in memory between the first and the last step.
enum class tile_retention : std::uint8_t {
    keep,       ///< keep each tile's local fill and labels (4 + sizeof(T) bytes per cell; epsilon:
                ///< heights and surface, 2 sizeof(T)); default
    recompute,  ///< drop them; read and fill each tile again at the end (epsilon: also in every
                ///< round in which its ring changed): one tile in memory at a time
};

/// How the plain tiled fill deals tiles to ranks.
enum class tile_dealing : std::uint8_t {
    fixed,    ///< by tile_owner (tiled_world.hpp): every tile's rank is known in advance and the
              ///< same in every run (node-local tile files, a failing tile's rank); default
    dynamic,  ///< each rank takes the next tile from a counter on the root (MPI one-sided
              ///< atomics, MPI_Fetch_and_op) when it has filled the last one, so slower tiles and
              ///< slower cores are evened out. Which rank handles a tile then differs between
              ///< runs; the filled map does not. Refused with tile_retention::keep and a
              ///< memory_cap (a rank may keep more tiles than its tile_owner share), and by the
              ///< epsilon fills, whose rounds pair each tile with its fixed rank
};

/// Moments of a tiled fill reported to tiled_fill_options::progress, in this order per rank.
enum class fill_event : std::uint8_t {
    tile_read,       ///< a tile was read and filled on its own (step 1; epsilon: round 0); once per tile
    levels_solved,   ///< this rank received its tiles' spill levels (end of step 3; epsilon: the
                     ///< rings settled, all rounds done); tile -1
    tile_written,    ///< a finished tile was handed to the writer (step 4); once per tile
    outputs_staged,  ///< file variant only: every rank staged all its outputs, renaming follows; tile -1
};

/// Working memory of a tiled fill's grids, as the memory cap counts it (bytes per cell of a tile
/// padded by one cell on each side, T = float or double): the cells as read, the tile as given to
/// the reader, the padded heights and labels, and the output tile. The flood queues come on top
/// (tiled_fill_tile_bytes).
template <class T>
constexpr std::size_t tiled_fill_bytes_per_cell = 4 * sizeof(T) + 4;

/// Working memory of a tiled fill for one w x h tile, as the memory cap counts it (bytes; T =
/// float or double; std::invalid_argument unless w, h >= 1): tiled_fill_bytes_per_cell<T> per
/// padded cell, and the flood queues: room for two queue entries per padded cell (every cell
/// enters a queue once; the queues' vectors grow by doubling; an entry is a cell's height bits and
/// its 32-bit index, 8 bytes for float and 16 for double, or a 64-bit index past 2^32 - 1 padded
/// cells), rounded up to the queue's storage chunks (64 KiB, 2 MiB, then 4 MiB each, which may be
/// resident as wholes on transparent huge pages). A 512^2 float tile: 5.03 MiB of grids and
/// 6.06 MiB of queues.
template <class T>
std::uint64_t tiled_fill_tile_bytes(std::ptrdiff_t width, std::ptrdiff_t height);
extern template std::uint64_t tiled_fill_tile_bytes<float>(std::ptrdiff_t width, std::ptrdiff_t height);
extern template std::uint64_t tiled_fill_tile_bytes<double>(std::ptrdiff_t width, std::ptrdiff_t height);

/// Working memory of a tiled epsilon fill's grids, as the memory cap counts it (bytes per cell of
/// a tile padded by one cell on each side, T = float or double): the cells as read, the surface,
/// least_epsilon_surface's padded copy, and its no-data flags and visited bits (2 bytes). The
/// flood queues come on top (tiled_epsilon_fill_tile_bytes).
template <class T>
constexpr std::size_t tiled_epsilon_fill_bytes_per_cell = 3 * sizeof(T) + 2;

/// Working memory of a tiled epsilon fill for one w x h tile, as the memory cap counts it (bytes;
/// T = float or double; std::invalid_argument unless w, h >= 1): tiled_epsilon_fill_bytes_per_cell<T>
/// per padded cell and the flood queues as tiled_fill_tile_bytes counts them (32-bit indices up to
/// 2^31 - 1 padded cells). With a memory cap, each solve's queues are freed when it ends, instead of
/// being kept on the thread for the next (gorge::release_fill_memory).
template <class T>
std::uint64_t tiled_epsilon_fill_tile_bytes(std::ptrdiff_t width, std::ptrdiff_t height);
extern template std::uint64_t tiled_epsilon_fill_tile_bytes<float>(std::ptrdiff_t width, std::ptrdiff_t height);
extern template std::uint64_t tiled_epsilon_fill_tile_bytes<double>(std::ptrdiff_t width, std::ptrdiff_t height);

/// Options of the tiled fills.
template <class T>
struct tiled_fill_options {
    /// Cells holding this value have no data (as fill_options::no_data). Default: none.
    std::optional<T> no_data;
    /// Memory versus time; default keep.
    tile_retention retention = tile_retention::keep;
    /// The rank that solves the spill graph (the epsilon fill has none and ignores it). Default 0;
    /// 0 <= root < ranks.
    int root = 0;
    /// Which rank fills which tile; default fixed (tile_dealing). The plain fill's speed-up from
    /// dynamic grows with the spread of tile costs and core speeds.
    tile_dealing dealing = tile_dealing::fixed;
    /// Largest working memory one rank may use, in bytes; 0 (default) = no cap. When set:
    ///  - before any communication, every rank checks that its largest tile's working set
    ///    (tiled_fill_tile_bytes<T>) fits together with the perimeter messages of all its tiles
    ///    (every tile with tile_dealing::dynamic, which may deal them all to one rank), which grow
    ///    while it fills them (per tile at most 12 bytes, and 3 sizeof(label) + 2 sizeof(T) = 20
    ///    bytes (float) per perimeter cell: its label and height, and at most one spill edge), and
    ///    with tile_retention::keep all its kept tiles ((3 sizeof(T) + 4) bytes per padded cell
    ///    each) besides: std::invalid_argument naming memory_cap otherwise ("use smaller tiles",
    ///    "use tile_retention::recompute", "use more ranks");
    ///  - the epsilon fill checks the same with tiled_epsilon_fill_tile_bytes<T> for the working
    ///    set, 2 sizeof(T) per padded cell for a kept tile, and, kept with
    ///    either retention, 3 sizeof(T) per ring cell of every tile (its ring, its perimeter and
    ///    the new perimeter; 2 (w + h) + 4 ring cells for a w x h tile). It has no spill graph,
    ///    so the next check is the plain fill's only;
    ///  - the root checks the spill graph (6 sizeof(T) + 22 bytes per perimeter cell of every
    ///    tile, 3 sizeof(T) + 16 bytes per edge inside tiles, 40 bytes per tile) plus the messages
    ///    it reads the graph from (the other ranks' as announced, and its own) plus its kept
    ///    tiles, once the ranks announce their message sizes, before it receives them: job_error
    ///    naming memory_cap otherwise ("use larger tiles"). Edges inside a tile are the spanning
    ///    forest's (step 2 above): fewer than one per perimeter cell, so the graph and its
    ///    messages take at most about 95 bytes per perimeter cell (float): for square tiles of side
    ///    s, at most about 380 / s bytes per map cell. With recompute the tiles' and the graph's
    ///    memory are not needed at once.
    /// What is counted is gorge's own working memory; MPI's buffers, the caller's reader and
    /// writer and the program itself come on top. Range: 0 or >= 1.
    std::size_t memory_cap = 0;
    /// Called on this rank at each fill_event with the tile number (-1 where none): progress
    /// reports, logging. Default: none. An exception it throws fails the job like a reader's.
    std::function<void(fill_event event, int tile)> progress;
};

/// What a tiled fill did, on this rank.
struct tiled_fill_stats {
    int tiles = 0;                  ///< tiles this rank handled
    std::size_t raised_cells = 0;   ///< cells of those tiles whose height changed
    std::uint64_t bytes_sent = 0;   ///< bytes this rank sent (perimeters and graphs; the root: spill levels)
    std::uint64_t labels = 0;       ///< root only: nodes of the global spill graph (0 elsewhere)
    std::uint64_t graph_edges = 0;  ///< root only: edges of the global spill graph (0 elsewhere)
    int rounds = 0;                 ///< epsilon fills: rounds of tile solves until the rings settled
                                    ///< (the same on every rank; 0 for the plain fill)
};

/// Fills every depression of the tiled map (gorge::fill_depressions's result, bit for bit).
/// `read` is called for each of this rank's tiles (twice with tile_retention::recompute: it must
/// give the same cells both times), `write` once per tile at the end. Throws job_error on every
/// rank when any rank fails; std::invalid_argument (on every rank, before any communication)
/// for a bad layout or options.
tiled_fill_stats fill_depressions_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<float>& read,
                                        const tile_writer<float>& write, const tiled_fill_options<float>& options = {});
tiled_fill_stats fill_depressions_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<double>& read,
                                        const tile_writer<double>& write,
                                        const tiled_fill_options<double>& options = {});

/// The same over directories of raw tile files (raw_tile_path names; float cells): reads
/// `in_dir`, writes `out_dir` (existing; may equal in_dir). Outputs are staged in a sibling
/// directory, staging_dir(out_dir), never inside out_dir, and renamed into out_dir only when
/// every rank has staged all its tiles. On a failure every rank removes its staged files (job_error);
/// a rank killed outright (SIGKILL, node loss) cannot, but its staged files stay outside out_dir,
/// which is left exactly as it was, and the next run removes them. The renames themselves are
/// not atomic across ranks: a rank dying while renaming leaves some tiles renamed. The staging
/// directory must be on out_dir's file system (it is its sibling, so unless out_dir is a mount
/// point); one job at a time per out_dir.
tiled_fill_stats fill_depressions_tile_files(MPI_Comm comm, const tile_layout& layout, const std::string& in_dir,
                                             const std::string& out_dir,
                                             const tiled_fill_options<float>& options = {});

/// Fills the tiled map with gorge::fill_depressions_epsilon's surface, bit for bit (header
/// comment, "Epsilon filling across tiles"): no flats remain, every data cell drains. Arguments,
/// failures and retention as fill_depressions_tiled; `read` is called once per tile in round 0
/// and, with tile_retention::recompute, again for every later solve and once at the end (it must
/// give the same cells every time); `write` once per tile at the end. options.root is checked
/// (0 <= root < ranks) but unused: no rank gathers anything. Throws job_error on every rank when
/// any rank fails (a data cell that is not finite, an epsilon step that would overflow,
/// std::overflow_error's message, named with its rank and tile).
tiled_fill_stats fill_depressions_epsilon_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<float>& read,
                                                const tile_writer<float>& write,
                                                const tiled_fill_options<float>& options = {});
tiled_fill_stats fill_depressions_epsilon_tiled(MPI_Comm comm, const tile_layout& layout, const tile_reader<double>& read,
                                                const tile_writer<double>& write,
                                                const tiled_fill_options<double>& options = {});

/// fill_depressions_epsilon_tiled over directories of raw tile files: reads, stages, renames and
/// fails exactly as fill_depressions_tile_files (same staging directory, same guarantees).
tiled_fill_stats fill_depressions_epsilon_tile_files(MPI_Comm comm, const tile_layout& layout, const std::string& in_dir,
                                                     const std::string& out_dir,
                                                     const tiled_fill_options<float>& options = {});

/// Where fill_depressions_tile_files stages the outputs for `out_dir`: the hidden sibling
/// directory "<parent>/.<name>.gorge-staging" (for "a/b/out" or "a/b/out/":
/// "a/b/.out.gorge-staging"). Created and removed by the job.
std::string staging_dir(const std::string& out_dir);

}  // namespace mpi
}  // namespace gorge
