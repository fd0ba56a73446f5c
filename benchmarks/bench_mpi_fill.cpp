// bench_mpi_fill: depression filling of a generated world across MPI ranks (gorge::mpi) against
// gorge::fill_depressions on the whole map in one process.
//
//   mpirun -np N bench_mpi_fill [side] [tiles_per_side] [keep|recompute] [--single]
//
// Each rank generates its tiles from an fBm field (8 octaves, plus white noise so that small
// pits are everywhere) into memory first, then fills them with the others (the reader copies the
// generated tile), and drops the result. Rank 0 prints the wall time of the tiled fill (between
// barriers), bytes sent per rank and peak resident memory per rank; with --single it first times fill_depressions on the whole map and
// checks that the tiled result is equal bit for bit (the comparison needs the whole map in rank
// 0's memory, so use it on sizes that fit).
//
// SPDX-License-Identifier: MPL-2.0
#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::ptrdiff_t side = argc > 1 ? std::atol(argv[1]) : 1024;
    const std::ptrdiff_t tiles = argc > 2 ? std::atol(argv[2]) : 4;
    const bool recompute = argc > 3 && std::string(argv[3]) == "recompute";
    bool single = false;
    for (int i = 1; i < argc; ++i) single |= std::string(argv[i]) == "--single";

    gorge::mpi::tile_layout layout{side, side, (side + tiles - 1) / tiles, (side + tiles - 1) / tiles};
    gorge::grid<float> whole;
    double single_s = 0.0;
    if (single && rank == 0) {
        whole = gorge::grid<float>(side, side);
        for (std::ptrdiff_t y = 0; y < side; ++y)
            for (std::ptrdiff_t x = 0; x < side; ++x) whole.at(x, y) = height_at(x, y, side);
        const auto t0 = std::chrono::steady_clock::now();
        gorge::fill_depressions(whole);
        single_s = seconds_since(t0);
    }
    // Each rank generates its tiles before the clock starts (the fill, not the noise, is timed);
    // the reader copies them.
    double generate_s = 0.0;
    long long mismatches = 0;
    std::vector<gorge::grid<float>> generated(static_cast<std::size_t>(layout.tile_count()));
    {
        const auto t0 = std::chrono::steady_clock::now();
        for (int t = rank; t < layout.tile_count(); t += size) {
            const gorge::mpi::tile_rect r = layout.tile(t);
            gorge::grid<float>& g = generated[static_cast<std::size_t>(t)];
            g = gorge::grid<float>(r.width, r.height);
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) g.at(x, y) = height_at(r.x + x, r.y + y, side);
        }
        generate_s = seconds_since(t0);
    }
    const gorge::mpi::tile_reader<float> read = [&](const gorge::mpi::tile_rect& r, gorge::grid_view<float> cells) {
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
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    const gorge::mpi::tiled_fill_stats stats = gorge::mpi::fill_depressions_tiled(MPI_COMM_WORLD, layout, read, write, options);
    MPI_Barrier(MPI_COMM_WORLD);
    const double tiled_s = seconds_since(t0);
    for (const auto& [r, cells] : results)
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x)
                mismatches += std::memcmp(&cells.at(x, y), &whole.at(r.x + x, r.y + y), sizeof(float)) != 0;

    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const unsigned long long mine[3] = {static_cast<unsigned long long>(stats.bytes_sent),
                                        static_cast<unsigned long long>(usage.ru_maxrss),
                                        static_cast<unsigned long long>(generate_s * 1e6)};
    std::vector<unsigned long long> all(static_cast<std::size_t>(3 * size));
    MPI_Gather(mine, 3, MPI_UNSIGNED_LONG_LONG, all.data(), 3, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        std::printf("%td^2 cells, %td x %td tiles of %td^2, %d ranks, %s\n", side, layout.tiles_x(), layout.tiles_y(),
                    layout.tile_width, size, recompute ? "recompute" : "keep");
        std::printf("tiled fill: %.3f s wall (tiles generated in memory first, %.3f s on rank 0, not counted)\n", tiled_s,
                    generate_s);
        if (single)
            std::printf("single-machine fill_depressions: %.3f s (ratio tiled / single %.2f); mismatching cells on rank 0's "
                        "tiles: %lld\n",
                        single_s, tiled_s / single_s, mismatches);
        std::printf("spill graph: %llu labels, %llu edges\n", static_cast<unsigned long long>(stats.labels),
                    static_cast<unsigned long long>(stats.graph_edges));
        for (int r = 0; r < size; ++r)
            std::printf("rank %d: sent %llu bytes, peak RSS %.1f MiB\n", r, all[static_cast<std::size_t>(3 * r)],
                        static_cast<double>(all[static_cast<std::size_t>(3 * r + 1)]) / 1024.0);
    }
    MPI_Finalize();
    return mismatches == 0 ? 0 : 1;
}
