// bench_mpi_fill: depression filling of a generated world across MPI ranks (gorge::mpi) against
// gorge::fill_depressions on the whole map in one process.
//
//   mpirun -np N bench_mpi_fill [side] [tiles_per_side] [keep|recompute] [--single] [--epsilon] [--dynamic] [--stream] [--flow]
//                               [--write-tiles DIR | --tiles DIR]
//
// Each rank generates its tiles from an fBm field (8 octaves, plus white noise so that small
// pits are everywhere) into memory first, or with --tiles DIR reads them from raw tile files
// (gorge/mpi/tiled_world.hpp) written before by --write-tiles DIR (which generates the tiles
// across the ranks, writes them and exits: generation is the slow part at 16384^2, so write
// once, run many). Then all ranks fill them together (the reader copies the tile from memory:
// the fill, not the noise or the disk, is timed) and drop the result. Rank 0 prints the wall
// time of the tiled fill (between barriers), the CPU time of every rank during it, bytes sent
// per rank, peak resident memory per rank and, from the progress events, when each rank had
// read its last tile and when the spill levels reached it (the serial part at the root lies
// between the slowest rank's last tile and the levels); with --single it first times fill_depressions on
// the whole map in rank 0 and checks that the tiled result is equal bit for bit (the comparison
// needs the whole map in rank 0's memory, so use it on sizes that fit). --epsilon times the
// epsilon fills instead: fill_depressions_epsilon_tiled against fill_depressions_epsilon, and
// prints the rounds the tiled fill took. --stream (with --tiles) reads each tile file inside the
// fill, when the fill asks for it, instead of before the clock starts (timed, as a real job
// reads). --dynamic deals the plain fill's tiles with tile_dealing::dynamic instead of
// tile_owner; it needs --stream (no rank knows its tiles in advance). --flow times
// flow_accumulation_tiled (D8 directions and accumulation across tiles) on the same tiles
// instead of a fill (no --single comparison; tests/mpi compares it with the single machine).
//
// Strong scaling at 16384^2 (tiles of 1024^2; about 1 GiB of tiles on disk, 3 GiB of memory in
// all ranks together with keep):
//   mpirun -np 16 bench_mpi_fill 16384 16 --write-tiles /tmp/t16k
//   for n in 1 2 4 8 16; do mpirun -np $n bench_mpi_fill 16384 16 --tiles /tmp/t16k; done
//
// SPDX-License-Identifier: MPL-2.0
#include <mpi.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gorge/drainage/depression_fill.hpp"
#include "gorge/mpi/mpi.hpp"
#include "gorge/noise/fractal.hpp"

namespace {

float height_at(std::ptrdiff_t x, std::ptrdiff_t y, std::ptrdiff_t side) {
    gorge::fbm_params<float> params;
    params.octaves = 8;
    params.gain = 0.5f;
    params.frequency = 4.0f;
    const float s = 1.0f / static_cast<float>(side);
    const glm::vec2 p(static_cast<float>(x) * s, static_cast<float>(y) * s);
    std::uint64_t h = static_cast<std::uint64_t>(y) * 0x9e3779b97f4a7c15ull ^ static_cast<std::uint64_t>(x) * 0xc2b2ae3d27d4eb4full;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    const float jitter = static_cast<float>(h >> 40) * 0x1.0p-24f;
    return 1000.0f * gorge::fractal_sum_value(p, params, 7u) + 2.0f * jitter;
}

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<std::string> args;
    bool single = false, epsilon = false, dynamic = false, stream = false, flow = false;
    std::string write_dir, read_dir;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--single") {
            single = true;
        } else if (a == "--epsilon") {
            epsilon = true;
        } else if (a == "--flow") {
            flow = true;
        } else if (a == "--dynamic") {
            dynamic = true;
        } else if (a == "--stream") {
            stream = true;
        } else if ((a == "--write-tiles" || a == "--tiles") && i + 1 < argc) {
            (a == "--tiles" ? read_dir : write_dir) = argv[++i];
        } else {
            args.push_back(a);
        }
    }
    const std::ptrdiff_t side = args.size() > 0 ? std::atol(args[0].c_str()) : 1024;
    const std::ptrdiff_t tiles = args.size() > 1 ? std::atol(args[1].c_str()) : 4;
    const bool recompute = args.size() > 2 && args[2] == "recompute";
    if (side < 1 || tiles < 1 || tiles > side) {
        if (rank == 0) std::fprintf(stderr, "bench_mpi_fill: side >= 1 and 1 <= tiles_per_side <= side\n");
        MPI_Finalize();
        return 2;
    }

    gorge::mpi::tile_layout layout{side, side, (side + tiles - 1) / tiles, (side + tiles - 1) / tiles};
    gorge::grid<float> whole;
    double single_s = 0.0, single_cpu_s = 0.0;
    if (single && rank == 0) {
        whole = gorge::grid<float>(side, side);
        if (read_dir.empty()) {
            for (std::ptrdiff_t y = 0; y < side; ++y)
                for (std::ptrdiff_t x = 0; x < side; ++x) whole.at(x, y) = height_at(x, y, side);
        } else {
            for (int t = 0; t < layout.tile_count(); ++t) {
                const gorge::mpi::tile_rect r = layout.tile(t);
                const gorge::grid<float> g = gorge::mpi::read_raw_tile_float(gorge::mpi::raw_tile_path(read_dir, r.tx, r.ty));
                for (std::ptrdiff_t y = 0; y < r.height; ++y)
                    for (std::ptrdiff_t x = 0; x < r.width; ++x) whole.at(r.x + x, r.y + y) = g.at(x, y);
            }
        }
        const auto t0 = std::chrono::steady_clock::now();
        const double cpu0 = cpu_seconds();
        if (epsilon)
            gorge::fill_depressions_epsilon(whole);
        else
            gorge::fill_depressions(whole);
        single_cpu_s = cpu_seconds() - cpu0;
        single_s = seconds_since(t0);
    }
    // Each rank generates its tiles before the clock starts (the fill, not the noise, is timed);
    // the reader copies them.
    double generate_s = 0.0;
    long long mismatches = 0;
    if (!write_dir.empty()) {  // made by one rank before any writes
        if (rank == 0) std::filesystem::create_directories(write_dir);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    std::vector<gorge::grid<float>> generated(static_cast<std::size_t>(layout.tile_count()));
    {
        const auto t0 = std::chrono::steady_clock::now();
        if (flow && (single || epsilon || dynamic)) {
            if (rank == 0) std::fprintf(stderr, "bench_mpi_fill: --flow goes with none of --single, --epsilon, --dynamic\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (dynamic && !stream) {
            if (rank == 0) std::fprintf(stderr, "bench_mpi_fill: --dynamic needs --stream and --tiles DIR\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (stream && read_dir.empty()) {
            if (rank == 0) std::fprintf(stderr, "bench_mpi_fill: --stream needs --tiles DIR\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int t : gorge::mpi::owned_tiles(rank, size, stream ? 0 : layout.tile_count())) {
            const gorge::mpi::tile_rect r = layout.tile(t);
            gorge::grid<float>& g = generated[static_cast<std::size_t>(t)];
            if (!read_dir.empty()) {
                g = gorge::mpi::read_raw_tile_float(gorge::mpi::raw_tile_path(read_dir, r.tx, r.ty));
                if (g.width() != r.width || g.height() != r.height) {
                    std::fprintf(stderr, "bench_mpi_fill: %s does not fit the layout\n",
                                 gorge::mpi::raw_tile_path(read_dir, r.tx, r.ty).c_str());
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
                continue;
            }
            g = gorge::grid<float>(r.width, r.height);
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) g.at(x, y) = height_at(r.x + x, r.y + y, side);
            if (!write_dir.empty()) {
                gorge::mpi::write_raw_tile(gorge::mpi::raw_tile_path(write_dir, r.tx, r.ty), g.view());
                g = gorge::grid<float>();
            }
        }
        generate_s = seconds_since(t0);
    }
    if (!write_dir.empty()) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            std::printf("wrote %d tiles of %td^2 (%td^2 cells) to %s in %.1f s\n", layout.tile_count(), layout.tile_width,
                        side, write_dir.c_str(), generate_s);
        MPI_Finalize();
        return 0;
    }
    const gorge::mpi::tile_reader<float> read = [&](const gorge::mpi::tile_rect& r, gorge::grid_view<float> cells) {
        if (stream) {
            const gorge::grid<float> file = gorge::mpi::read_raw_tile_float(gorge::mpi::raw_tile_path(read_dir, r.tx, r.ty));
            if (file.width() != r.width || file.height() != r.height)
                throw std::runtime_error(gorge::mpi::raw_tile_path(read_dir, r.tx, r.ty) + " does not fit the layout");
            for (std::ptrdiff_t y = 0; y < r.height; ++y) std::copy(file.view().row(y), file.view().row(y) + r.width, cells.row(y));
            return;
        }
        const gorge::grid_view<const float> g = generated[static_cast<std::size_t>(r.index)].view();
        for (std::ptrdiff_t y = 0; y < r.height; ++y) std::copy(g.row(y), g.row(y) + r.width, cells.row(y));
    };
    // Only rank 0 holds the single-machine result: the other ranks send it their tiles to compare.
    // With --single, rank 0 keeps its results and compares them after the clock stops.
    std::vector<std::pair<gorge::mpi::tile_rect, gorge::grid<float>>> results;
    const gorge::mpi::tile_writer<float> write = [&](const gorge::mpi::tile_rect& r, gorge::grid_view<const float> cells) {
        if (!single || rank != 0) return;
        gorge::grid<float> copy(r.width, r.height);
        for (std::ptrdiff_t y = 0; y < r.height; ++y) std::copy(cells.row(y), cells.row(y) + r.width, copy.view().row(y));
        results.emplace_back(r, std::move(copy));
    };
    gorge::mpi::tiled_fill_options<float> options;
    options.retention = recompute ? gorge::mpi::tile_retention::recompute : gorge::mpi::tile_retention::keep;
    options.dealing = dynamic ? gorge::mpi::tile_dealing::dynamic : gorge::mpi::tile_dealing::fixed;
    // Phases from the progress events: when this rank read (and filled) its last tile, and when
    // the spill levels (plain) or the last round's surfaces (epsilon) reached it.
    std::chrono::steady_clock::time_point t0;
    double last_tile_read_s = 0.0, levels_s = 0.0;
    options.progress = [&](gorge::mpi::fill_event e, int) {
        if (e == gorge::mpi::fill_event::tile_read) last_tile_read_s = seconds_since(t0);
        if (e == gorge::mpi::fill_event::levels_solved) levels_s = seconds_since(t0);
    };
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    gorge::mpi::tiled_fill_stats stats;
    if (flow) {
        gorge::mpi::tiled_flow_options<float> flow_options;
        flow_options.retention = options.retention;
        const gorge::mpi::flow_tile_writer drop = [](const gorge::mpi::tile_rect&, gorge::grid_view<const std::uint8_t>,
                                                     gorge::grid_view<const std::uint32_t>) {};
        const gorge::mpi::tiled_flow_stats f = gorge::mpi::flow_accumulation_tiled(MPI_COMM_WORLD, layout, read, drop, flow_options);
        stats.tiles = f.tiles;
        stats.bytes_sent = f.bytes_sent;
        stats.labels = f.links;
    } else {
        stats = epsilon ? gorge::mpi::fill_depressions_epsilon_tiled(MPI_COMM_WORLD, layout, read, write, options)
                        : gorge::mpi::fill_depressions_tiled(MPI_COMM_WORLD, layout, read, write, options);
    }
    const double cpu_s = cpu_seconds() - cpu0;  // before the barrier: MPI's barrier may spin
    MPI_Barrier(MPI_COMM_WORLD);
    const double tiled_s = seconds_since(t0);
    for (const auto& [r, cells] : results)
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x)
                mismatches += std::memcmp(&cells.at(x, y), &whole.at(r.x + x, r.y + y), sizeof(float)) != 0;

    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    constexpr int fields = 6;
    const unsigned long long mine[fields] = {static_cast<unsigned long long>(stats.bytes_sent),
                                             static_cast<unsigned long long>(usage.ru_maxrss),
                                             static_cast<unsigned long long>(generate_s * 1e6),
                                             static_cast<unsigned long long>(cpu_s * 1e6),
                                             static_cast<unsigned long long>(last_tile_read_s * 1e6),
                                             static_cast<unsigned long long>(levels_s * 1e6)};
    std::vector<unsigned long long> all(static_cast<std::size_t>(fields * size));
    MPI_Gather(mine, fields, MPI_UNSIGNED_LONG_LONG, all.data(), fields, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const char* kind = flow ? "flow accumulation" : (epsilon ? "epsilon fill" : "plain fill");
        std::printf("%td^2 cells, %td x %td tiles of %td^2, %d ranks, %s, %s, %s dealing\n", side, layout.tiles_x(),
                    layout.tiles_y(), layout.tile_width, size, recompute ? "recompute" : "keep", kind,
                    dynamic ? "dynamic" : "fixed");
        if (stream)
            std::printf("tiled run: %.3f s wall (tile files read inside the run)\n", tiled_s);
        else
            std::printf("tiled run: %.3f s wall (tiles %s memory first, %.3f s on rank 0, not counted)\n", tiled_s,
                        read_dir.empty() ? "generated in" : "read into", generate_s);
        if (single)
            std::printf("single-machine %s: %.3f s wall, %.3f s CPU (ratio tiled / single %.2f wall); "
                        "mismatching cells on rank 0's tiles: %lld\n",
                        epsilon ? "fill_depressions_epsilon" : "fill_depressions", single_s, single_cpu_s, tiled_s / single_s,
                        mismatches);
        if (flow)
            std::printf("link graph: %llu perimeter cells\n", static_cast<unsigned long long>(stats.labels));
        else if (epsilon)
            std::printf("rounds: %d\n", stats.rounds);
        else
            std::printf("spill graph: %llu labels, %llu edges\n", static_cast<unsigned long long>(stats.labels),
                        static_cast<unsigned long long>(stats.graph_edges));
        double cpu_total = 0.0, read_sum = 0.0, read_max = 0.0, levels_max = 0.0;
        unsigned long long sent_max = 0;
        for (int r = 0; r < size; ++r) {
            const unsigned long long* f = &all[static_cast<std::size_t>(fields * r)];
            cpu_total += static_cast<double>(f[3]) * 1e-6;
            sent_max = std::max(sent_max, f[0]);
            const double read_s = static_cast<double>(f[4]) * 1e-6;
            read_sum += read_s;
            read_max = std::max(read_max, read_s);
            levels_max = std::max(levels_max, static_cast<double>(f[5]) * 1e-6);
            std::printf("rank %d: sent %llu bytes, CPU %.3f s in the run, peak RSS %.1f MiB", r, f[0],
                        static_cast<double>(f[3]) * 1e-6, static_cast<double>(f[1]) / 1024.0);
            if (!flow) std::printf(", last tile read at %.3f s, levels at %.3f s", read_s, static_cast<double>(f[5]) * 1e-6);
            std::printf("\n");
        }
        if (!flow)
            std::printf("phases: last tile read at %.3f s (mean over ranks) / %.3f s (slowest rank), spill levels at %.3f s, "
                        "done at %.3f s\n",
                        read_sum / size, read_max, levels_max, tiled_s);
        std::printf("summary: %s side %td tiles %td ranks %d wall_s %.3f cpu_s_all_ranks %.3f max_bytes_sent %llu rounds %d\n",
                    flow ? "flow" : (epsilon ? "epsilon" : "plain"), side, layout.tiles_x() * layout.tiles_y(), size, tiled_s, cpu_total,
                    sent_max, stats.rounds);
    }
    MPI_Finalize();
    return mismatches == 0 ? 0 : 1;
}
