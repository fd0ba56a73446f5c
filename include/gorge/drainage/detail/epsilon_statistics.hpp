// gorge/drainage/detail/epsilon_statistics.hpp — fill_stats' epsilon statistics
// (max_gradient_rise, overtaken_cells) of a map whose epsilon surface E has been found; used by
// fill_depressions_epsilon, whole-map and tiled. Not a public header.
//
// Both statistics need the plain fill F (fill_depressions) on the raised cells, those with E > Z
// (elsewhere F = Z, as Z <= F <= E). F is found from above, in passes over the rows that read
// only the cells around the ones they write, rather than by a second Priority-Flood, whose visits
// jump across the map and miss the caches on a large one:
//   1. Each raised cell's drain neighbour: its neighbour of least E (the first in D8 order on a
//      tie), which lies below it (E there is one step above that neighbour's). Drain neighbours
//      lead down E to an unraised cell.
//   2. U(n) = max(Z(n), U(drain neighbour of n)), U = Z on unraised cells: the highest input
//      height on that path. U >= F, as F is the least such maximum over all paths to an outlet,
//      and an unraised cell drains at its own height (F = Z). Each path is walked from the cells
//      in raster order until it meets a cell already done, then written back along the way.
//      Step 1 already settles a cell whose drain neighbour is not raised (3.2 M of the 8192^2
//      drainage map's 35 M raised cells: most drain into lakes, raised cells themselves).
//   3. U = F wherever no path of E climbs past a lower way out. A raised cell is too high when
//      U(n) > max(Z(n), least U of its neighbours); a Dijkstra search from the too-high cells
//      lowers them and the cells that drain through them. It ends at F: were a cell still above F,
//      the last cell above F on its lowest path to an outlet would be too high.
//   4. The statistics, per raised cell (add_gradient_rise, is_overtaken), in the pass of step 3
//      that finds the too-high cells; the cells the search lowered are counted again, with their
//      neighbours (lowering F only adds to both statistics).
// On the 8192^2 drainage benchmark map the search lowers 1.4 M of 35 M raised cells, on the
// 8192^2 smooth one 5.5 M of 25 M; on the 1024^2 maps, none. Nearly all of them are lake cells
// lowered to the level they were reached with, which the search floods breadth-first.
// A map filled in one flood (not in tiles) skips steps 1 and 2: its flood writes U as it settles
// the cells (flood_epsilon with `upper`), Z on a cell that keeps its height and, on a raised cell,
// the larger of its Z and the U of the cell it was raised from. That cell's E is one step below,
// so this is the highest input height on another path down E to an unraised cell: again U >= F,
// and steps 3 and 4 end at the same F. (A tile's flood cannot: a cell raised from the ring has
// its path in another tile.) On the 1024^2 drainage map this took about 2 ms off the statistics'
// 4.5 ms on the Intel VM where it was first measured. The flood keeps a raised cell's U with it
// in the pit queue, and the queue writes the U of the cells taken in one pass after the flood
// (detail/epsilon_flood.hpp); the statistics then cost that map's fill 2.0-2.7 ms on a Xeon and
// 1.2-2.5 ms on a Zen 4 VM, of fills of 27-57 ms (benchmarks/README.md, "The statistics' U
// written after the flood").
//
// Threads (fill_options::threads): steps 1, 2 and 3 go by bands of rows. A walk of step 2 that
// leaves its band is marked and finished on one thread afterwards; the search runs on one
// thread. The statistics do not depend on the thread count: F is unique, and the statistics are
// a maximum and a count.
// Memory besides E and Z: U (one T per cell of the padded map, in a block the caller hands over
// when it has one: the tiled fill gives its tiles' surfaces; the one flood writes it during the
// flood), a drain direction byte per cell (reused by the search for its marks; made only when the
// search runs if the flood gave U), the path being walked (an index per cell on it) and the
// search's queues.
// Step 3's screen flags the cells to read again, so that its scalar pass visits only those: on
// the 8192^2 drainage map, 4652 of the 8192 rows hold such a cell.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "../../detail/parallel.hpp"
#include "../../detail/thread_count.hpp"
#include "../../grid/grid.hpp"
#include "../d8.hpp"
#include "../fill_options.hpp"
#include "cell_fifo.hpp"
#include "height_bits.hpp"
#include "padded_heights.hpp"
#include "radix_heap.hpp"

namespace gorge {
namespace detail {

/// fill_stats' epsilon statistics, the rules in one place (epsilon_statistics below applies
/// them), for a data cell of input height z, epsilon surface value e and plain fill value f.
/// Whether the cell counts in fill_stats::overtaken_cells, given the lowest plain fill value of its
/// data neighbours (+infinity when it has none).
template <class T>
bool is_overtaken(T z, T e, T lowest_neighbour_f) {
    return e > z && lowest_neighbour_f < z;
}
/// Takes the cell's E - F into fill_stats::max_gradient_rise.
template <class T>
void add_gradient_rise(T e, T f, fill_stats<T>& stats) {
    const T rise = e - f;
    if (rise > stats.max_gradient_rise) stats.max_gradient_rise = rise;
}

/// fill_stats' epsilon statistics of a filled map (epsilon_statistics below), on bands of at
/// least this many rows per thread (a band's walks that leave it are finished later on one
/// thread, so bands are not cut thin)
constexpr std::uint64_t epsilon_statistics_min_rows = 64;
/// and of at least this many cells: each of the statistics' three threaded steps starts its
/// threads, which costs tens of microseconds; 65,536 cells take some 100-200 µs a step. (A
/// 128 x 128 map took 352 µs on one thread and 590 µs on two when bands were only 64 rows.)
constexpr std::uint64_t epsilon_statistics_min_band_cells = std::uint64_t(1) << 16;
/// Rows per band of the statistics for a map `width` cells wide.
inline std::uint64_t epsilon_statistics_band_rows(std::ptrdiff_t width) {
    const auto w = static_cast<std::uint64_t>(std::max<std::ptrdiff_t>(width, 1));
    return std::max(epsilon_statistics_min_rows, (epsilon_statistics_min_band_cells + w - 1) / w);
}

/// Step 1 on one row of n cells: each raised cell's (E > Z) drain neighbour, its neighbour of
/// least E (the first in D8 order on a tie), into `drain` (`sink` on a cell that is not raised
/// and on one whose drain neighbour is not raised either: its U is then final, and written).
/// e_around[k], z_around[k]: E and Z of neighbour k of the row's first cell; e, z: the cells' own
/// (Z with +0 for -0). U is written for every cell: Z, or the larger of Z and the drain
/// neighbour's Z where that is final. No neighbour may lie outside the arrays (the caller pads).
/// A function of its own, with plain pointers and bitwise selects, so that the loop is vectorized.
template <class T>
void drain_epsilon_row(const T* const* e_around, const T* const* z_around, const T* e, const T* z, std::size_t n,
                       std::uint8_t sink, T* GORGE_RESTRICT upper, std::uint8_t* GORGE_RESTRICT drain) {
    static_assert(d8_neighbours == 8, "eight neighbours taken below");
    const T *e0 = e_around[0], *e1 = e_around[1], *e2 = e_around[2], *e3 = e_around[3], *e4 = e_around[4],
            *e5 = e_around[5], *e6 = e_around[6], *e7 = e_around[7];
    const T *z0 = z_around[0], *z1 = z_around[1], *z2 = z_around[2], *z3 = z_around[3], *z4 = z_around[4],
            *z5 = z_around[5], *z6 = z_around[6], *z7 = z_around[7];
    for (std::size_t x = 0; x < n; ++x) {
        T least = e0[x], least_z = z0[x];
        std::int32_t toward = 0;  // 32 bits wide, like T's lanes
        const auto take = [&](std::int32_t k, T v, T vz) {
            const std::int32_t lower = -static_cast<std::int32_t>(v < least);  // all ones or 0
            toward = (toward & ~lower) | (k & lower);
            least_z = v < least ? vz : least_z;
            least = v < least ? v : least;
        };
        take(1, e1[x], z1[x]), take(2, e2[x], z2[x]), take(3, e3[x], z3[x]), take(4, e4[x], z4[x]);
        take(5, e5[x], z5[x]), take(6, e6[x], z6[x]), take(7, e7[x], z7[x]);
        const T zi = z[x];
        const std::int32_t raised = -static_cast<std::int32_t>(e[x] > zi);
        const std::int32_t walks = raised & -static_cast<std::int32_t>(least > least_z);  // drains to a raised cell
        const T joined = least_z > zi ? least_z : zi;
        upper[x] = (raised & ~walks) != 0 ? joined : zi;
        drain[x] = static_cast<std::uint8_t>((toward & walks) | (std::int32_t(sink) & ~walks));
    }
}

/// Step 3's first look at one row of n cells (e, u: E and U of its first cell in the padded map;
/// z: its input heights; u_around[k]: U of neighbour k of the row's first cell, as in
/// drain_epsilon_row): each cell's least neighbour U into `least`, its rise E - U (0 when not
/// raised) into `rise`, and the row's largest rise into `highest` (when larger). `flag` is 1 at a
/// raised cell that is too high, or has a neighbour whose U is below its Z (is_overtaken's rule,
/// with U for F), else 0; such cells are read again. Non-zero when the row has one.
/// A function of its own, with plain pointers and bitwise tests, so that the loop is vectorized;
/// the outputs are restrict-qualified, as the alias checks of eleven inputs against three outputs
/// are more than GCC versions a loop for. The neighbours come as pointers of their own rather than
/// as offsets x - 1 and x + 1 from three rows: Clang then carried each row's values from one
/// iteration to the next two (a recurrence over two iterations, which its vectorizer does not
/// take) and left the loop scalar.
template <class T>
std::int32_t screen_epsilon_row(const T* const* u_around, const T* e, const T* u, const T* z, std::size_t n,
                                T* GORGE_RESTRICT least, T* GORGE_RESTRICT rise, std::int32_t* GORGE_RESTRICT flag,
                                T& highest) {
    static_assert(d8_neighbours == 8, "eight neighbours taken below");
    const T *a0 = u_around[0], *a1 = u_around[1], *a2 = u_around[2], *a3 = u_around[3], *a4 = u_around[4],
            *a5 = u_around[5], *a6 = u_around[6], *a7 = u_around[7];
    std::int32_t rare = 0;
    for (std::size_t x = 0; x < n; ++x) {
        const auto lower = [](T a, T b) { return b < a ? b : a; };
        const T m = lower(lower(lower(a0[x], a1[x]), lower(a2[x], a3[x])), lower(lower(a4[x], a5[x]), lower(a6[x], a7[x])));
        least[x] = m;
        const T zi = z[x] + T(0);
        const std::int32_t raised = e[x] > u[x];  // only where E > Z (U = Z elsewhere)
        const T v = m > zi ? m : zi;
        const std::int32_t again = raised & (static_cast<std::int32_t>(v < u[x]) | static_cast<std::int32_t>(m < zi));
        flag[x] = again;
        rare |= again;
        // E - U where raised, else +0: r > 0 exactly where E > U (the difference of two finite
        // values is 0 only when they are equal), and r is NaN or <= 0 elsewhere. A select on r,
        // computed for every cell, lets GCC vectorize the loop without AVX-512's masks; a select
        // on `raised` left the subtraction in a branch (a trapping operation it will not
        // speculate), and the loop scalar.
        const T r = e[x] - u[x];
        rise[x] = r > T(0) ? r : T(0);
    }
    // The largest rise, as the largest bit pattern: rises are finite and >= +0, and such values
    // order like their bits; an integer maximum is vectorized where a float one (NaN rules) is not.
    using bits = decltype(ordered_bits(T()));
    bits top = 0;
    for (std::size_t x = 0; x < n; ++x) {
        bits b;
        std::memcpy(&b, rise + x, sizeof b);
        top = b > top ? b : top;
    }
    T row_highest;
    std::memcpy(&row_highest, &top, sizeof row_highest);
    if (row_highest > highest) highest = row_highest;
    return rare;
}

/// Adds fill_stats' epsilon statistics of a map to `stats`: work.z holds its epsilon surface E
/// (padded; -infinity, or any value not above Z, on no-data cells), heights its input Z.
/// `workers` threads, the calling thread included (1: none started), on bands of at least
/// `band_rows` rows (tests cut thin ones). U takes `storage` (a block the caller no longer needs,
/// reused when it holds enough elements: no fresh pages to fault in). With upper_given, storage
/// already holds a U for every cell of the padded map, written by the flood (flood_epsilon with
/// `upper`: each raised cell's path runs to the cell it was raised from instead of to its
/// neighbour of least E, another path down E to an unraised cell, and so another upper bound of
/// F), and steps 1 and 2 are skipped. Returns how many times step 3's search lowered a cell (for
/// tests).
template <class T>
std::size_t epsilon_statistics(const padded_heights<T>& work, grid_view<const T> heights, unsigned workers,
                               fill_stats<T>& stats, std::uint64_t band_rows = epsilon_statistics_min_rows,
                               std::vector<T, uninitialized_block_allocator<T>> storage = {},
                               bool upper_given = false) {
    using key = decltype(ordered_bits(T()));
    const std::uint64_t rows = static_cast<std::uint64_t>(work.height);
    const call_thread_pool threads_for_call(chunk_workers(rows, workers, band_rows));  // once for the three sweeps
    const T* e = work.z.data();
    const std::size_t cells = work.z.size();
    const std::size_t width = static_cast<std::size_t>(work.width);
    const std::size_t pitch = static_cast<std::size_t>(work.pitch);
    std::ptrdiff_t off[d8_neighbours];
    for (int k = 0; k < d8_neighbours; ++k) off[k] = work.offset(k);
    auto neighbour = [&](std::size_t c, int k) { return static_cast<std::size_t>(static_cast<std::ptrdiff_t>(c) + off[k]); };
    auto first_cell = [&](std::uint64_t y) { return work.index(0, static_cast<std::ptrdiff_t>(y)); };
    // Z of a data cell c of the padded map, and of its neighbour k at input_at(c)[input_off[k]]
    // (add +0 for -0, as in the working copy).
    auto input_at = [&](std::size_t c) {
        return heights.row(static_cast<std::ptrdiff_t>(c / pitch) - 1) + (c % pitch - 1);
    };
    std::ptrdiff_t input_off[d8_neighbours];
    for (int k = 0; k < d8_neighbours; ++k) input_off[k] = d8_offset(k, heights.stride());

    // Step 1, with U = Z: a raised cell (E > Z) gets its drain direction; d8_sink marks a cell
    // whose U is final. `leaves_band` is added to the direction of a cell whose walk left its band.
    constexpr std::uint8_t done = d8_sink;
    constexpr std::uint8_t leaves_band = 16;
    constexpr std::uint8_t direction_bits = 7;
    // U is +0 on the ring (never read for a raised cell, which has no ring neighbour); step 1
    // writes the rest, so a block taken over is not written twice.
    std::vector<T, uninitialized_block_allocator<T>> upper(std::move(storage));
    std::vector<std::uint8_t, large_block_allocator<std::uint8_t>> drain;
    std::mutex merge;
    if (!upper_given) {
        upper.resize(cells);
        std::fill_n(upper.data(), pitch, T(0));
        std::fill_n(upper.data() + cells - pitch, pitch, T(0));
        drain.assign(cells, done);
        T* u = upper.data();
        std::uint8_t* d = drain.data();
        // Z around each row from three padded rows of the input (0 beyond the map: only edge cells,
        // never raised, read there).
        parallel_chunks(rows, workers, band_rows, [&, e, u, d, width](std::uint64_t begin, std::uint64_t end) {
            std::vector<T> window_rows(3 * pitch);
            T* window[3] = {window_rows.data(), window_rows.data() + pitch, window_rows.data() + 2 * pitch};
            const auto load = [&](T* to, std::uint64_t y) {  // input row y - 1 into `to`
                to[0] = to[width + 1] = T(0);
                if (y == 0 || y > rows) {
                    std::fill_n(to + 1, width, T(0));
                    return;
                }
                const T* const z = heights.row(static_cast<std::ptrdiff_t>(y) - 1);
                for (std::size_t x = 0; x < width; ++x) to[x + 1] = z[x] + T(0);
            };
            load(window[0], begin);
            load(window[1], begin + 1);
            for (std::uint64_t y = begin; y < end; ++y) {
                load(window[2], y + 2);
                const std::size_t base = first_cell(y);
                const T* e_around[d8_neighbours];
                const T* z_around[d8_neighbours];
                for (int k = 0; k < d8_neighbours; ++k) {
                    e_around[k] = e + static_cast<std::ptrdiff_t>(base) + off[k];
                    z_around[k] = window[1 + d8_dy[k]] + 1 + d8_dx[k];
                }
                T* const ur = u + base;
                ur[-1] = ur[width] = T(0);
                drain_epsilon_row(e_around, z_around, e + base, window[1] + 1, width, done, ur, d + base);
                std::rotate(window, window + 1, window + 3);
            }
        });

        // Step 2: each band walks the paths of its cells while they stay in it; one that leaves is
        // marked (with every cell on it) and its first cell listed, to be walked on one thread after.
        std::vector<std::size_t> left_band;
        auto write_back = [&](const std::vector<std::size_t>& path, std::size_t end) {
            T v = u[end];
            for (auto it = path.rbegin(); it != path.rend(); ++it) {
                const T z = u[*it];  // not done yet: still Z
                v = z > v ? z : v;
                u[*it] = v;
                d[*it] = done;
            }
        };
        // A path through a lake runs mostly straight (toward the lake's outlet), through rows the
        // raster order has not reached, each step waiting for the last one's load: the cells a few
        // steps ahead on a straight line are asked for early. (Addresses as integers: they may lie
        // outside the map, which a prefetch tolerates.)
        const auto prefetch_path = [d, u](std::size_t at, std::size_t step) {
            constexpr std::size_t ahead = 4;
            const std::size_t further = at + ahead * step;  // modulo 2^N, like the addresses below
            GORGE_PREFETCH(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(d) + further));
            GORGE_PREFETCH(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(u) + further * sizeof(T)));
        };
        parallel_chunks(rows, workers, band_rows, [&, d, width](std::uint64_t begin, std::uint64_t end) {
            const std::size_t low = first_cell(begin) - 1, high = first_cell(end) - 1;  // the band's padded rows
            std::vector<std::size_t> path, starts;
            for (std::uint64_t y = begin; y < end; ++y) {
                const std::size_t base = first_cell(y);
                for (std::size_t i = base; i < base + width; ++i) {
                    if (d[i] == done || (d[i] & leaves_band) != 0) continue;
                    path.clear();
                    std::size_t c = i;
                    bool inside = true;
                    do {
                        path.push_back(c);
                        const std::size_t next = neighbour(c, d[c] & direction_bits);
                        prefetch_path(next, next - c);
                        c = next;
                        inside = c >= low && c < high && (d[c] & leaves_band) == 0;
                    } while (inside && d[c] != done);
                    if (inside) {
                        write_back(path, c);
                        continue;
                    }
                    for (std::size_t p : path) d[p] = static_cast<std::uint8_t>(d[p] | leaves_band);
                    starts.push_back(i);
                }
            }
            if (starts.empty()) return;
            const std::lock_guard<std::mutex> lock(merge);
            left_band.insert(left_band.end(), starts.begin(), starts.end());
        });
        {
            std::vector<std::size_t> path;
            for (std::size_t i : left_band) {
                if (d[i] == done) continue;
                path.clear();
                std::size_t c = i;
                do {
                    path.push_back(c);
                    c = neighbour(c, d[c] & direction_bits);
                } while (d[c] != done);
                write_back(path, c);
            }
        }
    }
    GORGE_ASSERT(upper.size() == cells, "gorge: U for every cell of the padded map");
    T* const u = upper.data();

    // Steps 3 and 4: the too-high cells, and each raised cell's statistics from U. Per row, one
    // vectorized loop takes every cell's least neighbour U, its rise E - U (0 when unraised) and
    // whether it may be too high or overtaken, both rare; only such cells are read again.
    std::vector<std::pair<key, std::size_t>> too_high;
    std::vector<std::size_t> counted;
    parallel_chunks(rows, workers, band_rows, [&, e, u, width](std::uint64_t begin, std::uint64_t end) {
        fill_stats<T> part;
        std::vector<std::pair<key, std::size_t>> high;
        std::vector<std::size_t> marked;
        std::vector<T> least_values(width), rise_values(width);
        std::vector<std::int32_t> flag_values(width);
        T* const least = least_values.data();
        T* const rise = rise_values.data();
        std::int32_t* const flag = flag_values.data();
        T highest_rise = T(0);
        for (std::uint64_t y = begin; y < end; ++y) {
            const std::size_t base = first_cell(y);
            const T* const z = heights.row(static_cast<std::ptrdiff_t>(y));
            const T* const er = e + base;
            const T* const ur = u + base;
            const std::size_t row_cells = width;
            const T* u_around[d8_neighbours];
            for (int k = 0; k < d8_neighbours; ++k) u_around[k] = ur + off[k];
            const std::int32_t rare = screen_epsilon_row(u_around, er, ur, z, row_cells, least, rise, flag, highest_rise);
            if (rare == 0) continue;
            for (std::size_t x = 0; x < row_cells; ++x) {
                if (flag[x] == 0) continue;  // raised when set
                const T zi = z[x] + T(0);
                const T v = least[x] > zi ? least[x] : zi;
                if (v < ur[x]) high.emplace_back(ordered_bits(v), base + x);
                if (is_overtaken(zi, er[x], least[x])) {
                    marked.push_back(base + x);
                    ++part.overtaken_cells;
                }
            }
        }
        add_gradient_rise(highest_rise, T(0), part);
        const std::lock_guard<std::mutex> lock(merge);
        if (part.max_gradient_rise > stats.max_gradient_rise) stats.max_gradient_rise = part.max_gradient_rise;
        stats.overtaken_cells += part.overtaken_cells;
        too_high.insert(too_high.end(), high.begin(), high.end());
        counted.insert(counted.end(), marked.begin(), marked.end());
    });
    if (too_high.empty()) return 0;

    // Step 3's search: cells leave by non-decreasing value; U(n) is lowered as soon as a lower
    // value reaches it, so a cell queued with a key above its U has been lowered since. Most
    // cells it lowers take the value they were reached with (their Z is below it): they go to a
    // first-in, first-out queue and are taken before the next key, as in a flood of that level,
    // which spreads as a front and keeps its cells' rows in cache (the heap's last-in, first-out
    // order of equal keys wanders across a lake and misses them).
    // The drain bytes are free after step 2 (every one is `done`): they mark the cells the search
    // lowered and those counted as overtaken.
    constexpr std::uint8_t lowered_mark = 1, overtaken_mark = 2;
    static_assert((done & (lowered_mark | overtaken_mark)) == 0, "marks beside `done`");
    if (drain.empty()) drain.assign(cells, done);  // steps 1 and 2 were the flood's
    std::uint8_t* const d = drain.data();
    for (std::size_t i : counted) d[i] = static_cast<std::uint8_t>(d[i] | overtaken_mark);
    radix_heap<key, std::size_t> queue;
    for (const auto& cell : too_high) queue.push(cell.first, cell.second);
    cell_fifo<std::size_t> level;
    std::size_t lowered = 0, first_lowered = cells, last_lowered = 0;
    while (!queue.empty()) {
        std::size_t c = queue.pop();
        const T v = from_ordered_bits(queue.last_key());
        if (v > u[c]) continue;
        if (v < u[c]) u[c] = v;  // queued by step 3
        for (;;) {
            d[c] = static_cast<std::uint8_t>(d[c] | lowered_mark);
            ++lowered;
            first_lowered = std::min(first_lowered, c);
            last_lowered = std::max(last_lowered, c);
            const T* const zc = input_at(c);
            for (int k = 0; k < d8_neighbours; ++k) {
                const std::size_t n = neighbour(c, k);
                if (!(v < u[n]) || !(e[n] > u[n])) continue;  // not above v, or not raised
                const T zn = zc[input_off[k]] + T(0);
                if (!(zn > v)) {
                    u[n] = v;
                    level.push(n);
                } else if (zn < u[n]) {
                    u[n] = zn;
                    queue.push(ordered_bits(zn), n);
                }
            }
            if (level.empty()) break;
            c = level.pop();
        }
        level.clear();
    }
    // Step 4 again for what the search changed, in raster order: a lowered cell's own rise, and
    // its raised neighbours, which may now be overtaken.
    // (Eight marks are read at a time: the lowered cells are few and gathered in lakes.)
    constexpr std::uint64_t lowered_marks = 0x0101010101010101u * lowered_mark;
    const std::size_t scan_end = lowered != 0 ? last_lowered + 1 : 0;
    for (std::size_t c = first_lowered; c < scan_end; ++c) {
        std::uint64_t eight;
        if (c + sizeof eight <= scan_end) {
            std::memcpy(&eight, d + c, sizeof eight);
            if ((eight & lowered_marks) == 0) {
                c += sizeof eight - 1;
                continue;
            }
        }
        if ((d[c] & lowered_mark) == 0) continue;
        add_gradient_rise(e[c], u[c], stats);
        const T* const zc = input_at(c);
        for (int k = 0; k < d8_neighbours; ++k) {
            const std::size_t n = neighbour(c, k);
            // U >= Z: a neighbour whose U is not above u[c] has no Z above it (is_overtaken).
            if (!(u[c] < u[n]) || !(e[n] > u[n]) || (d[n] & overtaken_mark) != 0 ||
                !is_overtaken(zc[input_off[k]] + T(0), e[n], u[c]))
                continue;
            d[n] = static_cast<std::uint8_t>(d[n] | overtaken_mark);
            ++stats.overtaken_cells;
        }
    }
    return lowered;
}

}  // namespace detail
}  // namespace gorge
