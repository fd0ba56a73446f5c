// gorge/drainage/fill_options.hpp — the depression fills' options and report (fill_options, fill_stats).
// Part of gorge/drainage/depression_fill.hpp, whose header comment says what the fills do; a
// header of its own so that the fills' parts in detail/ can name these types.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "../detail/thread_count.hpp"
#include "../detail/validate.hpp"

namespace gorge {

/// Options shared by the depression fills.
template <class T>
struct fill_options {
    /// Cells holding this value have no data: unchanged, never filled, outlets for their
    /// neighbours. A NaN value marks every NaN cell as no-data. Default: none (every cell is data).
    std::optional<T> no_data;
    /// Optional progress report and cancellation, called from the calling thread only, with the
    /// fraction of the work done (0..1, non-decreasing): once with 0 after the map was copied and
    /// checked, then (Priority-Flood fills) every fill_progress_interval cells taken from the
    /// queues, i.e. the fraction of data cells settled, and a last time with 1 when the fill has
    /// succeeded, just before the result is written back. Planchon & Darboux cannot tell how many
    /// sweeps remain: it reports 0 again after every pair of sweeps (a chance to cancel) and 1 at
    /// the end. Return false to cancel: the fill stops, no further call comes, the grid is left
    /// unchanged and the stats say cancelled (raised_cells 0). Default: none (no call; the fills
    /// then cost what they cost without it). An exception it throws propagates, the grid unchanged.
    std::function<bool(double)> progress;
    /// fill_depressions_epsilon only: whether to compute fill_stats::max_gradient_rise and
    /// ::overtaken_cells, which take the plain fill of the raised cells after the flood (how:
    /// depression_fill.hpp's header comment, "The epsilon surface"; on the threads of `threads`).
    /// false leaves both 0 and the surface the same. Default: true.
    bool epsilon_statistics = true;
    /// Both fills (fill_depressions_epsilon: see the end): fill a map of at least 4096^2 cells
    /// (both sides at least 2048) in tiles of 1024^2 (detail/tiled_fill.hpp), with the same result
    /// bit for bit, on any number of threads. Tiles stay in the caches, and run side by side on
    /// threads. On several threads the plain fill's tiles are filled once each and cost a
    /// watershed label per cell; on one they are solved as the epsilon fill's are (below). On one
    /// core: rough terrain, whose whole-map flood takes cells from all over the map, filled
    /// 1.12-1.71x as fast in watershed-labelled tiles at 4096^2 on a Xeon and a Zen 5, 1.27x at
    /// 16384^2 on a Xeon with a 300 MiB cache and 1.0-1.45x at 8192^2 on one with 105 MiB; smooth
    /// terrain, whose flood moves through the map in order, up to about 20 % slower; tiles solved
    /// again from their neighbours filled rough terrain another 1.12-1.24x as fast on an Intel
    /// Xeon virtual machine, smooth terrain 0-7 % slower (benchmarks/README.md, "The plain fill's
    /// tiles on one thread"). false floods the whole map at once on one thread. The progress
    /// fractions of a plain fill on several threads count the cells of the tiles done (with their
    /// own interval inside each tile the calling thread fills); otherwise the tiles solved in
    /// full. fill_depressions_epsilon goes to tiles by the same rule (detail/tiled_epsilon_fill.hpp:
    /// tiles solved again from their neighbours' values until none changes, on one thread lowest
    /// values first; the same surface and statistics bit for bit). On one Xeon core at 8192^2
    /// (benchmarks/README.md, "The epsilon fill's tiles in a Dijkstra order"), rough
    /// terrain filled 1.2-1.4x as fast in tiles as one flood, smooth terrain 3-13 % slower; 16
    /// threads of a Xeon filled rough terrain 3.5x as fast as one flood with the statistics and
    /// 5.2-5.5x without.
    /// Default: true.
    bool tiles = true;
    /// Fills in tiles (see tiles) and the epsilon statistics (epsilon_statistics, whatever the
    /// map's size): threads, the calling thread included (gorge's
    /// thread rule, gorge/detail/parallel.hpp): default 1 (none started), 0 = all hardware
    /// threads, 0..max_threads (1024); never more than one per tile. 16 threads filled 8192^2
    /// maps 6-8x as fast as one whole-map flood on a 16-core Xeon. Progress reports
    /// and the cancellation still come from the calling thread (a cancelled fill stops the others
    /// at their next tile). The result is the same for any value. Checked by every fill.
    unsigned threads = 1;

    /// The first bad member (threads), or an empty result.
    invalid_parameter first_invalid() const { return detail::invalid_thread_count(threads); }
};

/// Cells taken from the Priority-Flood queues between two calls of fill_options::progress (2^16:
/// a 4096 x 4096 map reports 256 times, a millisecond or so apart).
constexpr std::size_t fill_progress_interval = std::size_t(1) << 16;

/// What a fill did.
template <class T>
struct fill_stats {
    /// Cells whose height the fill changed.
    std::size_t raised_cells = 0;
    /// Epsilon fill only: the largest E - F over the data cells, where E is the epsilon-filled and F
    /// the plainly filled surface (fill_depressions) of the same map: how far the epsilon gradient
    /// lifts the surface above the spill levels, in height units (>= 0). 0 for the plain fills,
    /// and when fill_options::epsilon_statistics is false.
    T max_gradient_rise = T(0);
    /// Epsilon fill only: data cells with E > Z (Z the input height) that have a data neighbour with
    /// F < Z: cells that drain strictly on the plain surface (in no depression and on no flat), but
    /// that the epsilon gradient of a lake climbed past (every neighbour's E was >= Z). Non-zero
    /// means ulp steps were large enough to change terrain outside depressions and flats (see
    /// depression_fill.hpp's header comment on precision). 0 for the plain fills, and when
    /// fill_options::epsilon_statistics is false.
    std::size_t overtaken_cells = 0;
    /// fill_options::progress returned false: the fill stopped early and the grid is unchanged
    /// (raised_cells is 0, and so are the epsilon statistics, computed once the flood is done).
    bool cancelled = false;
};

}  // namespace gorge
