// Shared by the gorge::mpi tests: ranks, sums over ranks, and the test maps.
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gorge/grid/grid.hpp"
#include "gorge/mpi/mpi.hpp"

namespace gorge_mpi_test {
using gorge::grid;
using gorge::grid_view;
namespace gm = gorge::mpi;

inline int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}
inline int world_size() {
    int s = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}
inline long long sum_all(long long v) {
    long long total = 0;
    MPI_Allreduce(&v, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/// splitmix64: the same numbers on every rank and platform.
struct rng {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

enum class terrain { noise, smooth_pits, nested_basins, holes_and_flats };

/// Test maps: white noise (pits everywhere, across every tile border), smooth hills with deep
/// pits, concentric nested basins centred on a tile corner, and quantised terrain (flats) with
/// no-data holes (some on tile borders) and -0 cells.
template <class T>
grid<T> make_map(terrain kind, std::ptrdiff_t w, std::ptrdiff_t h, std::uint64_t seed, T no_data) {
    rng r{seed};
    grid<T> m(w, h);
    const double cx = static_cast<double>(w) * 0.5, cy = static_cast<double>(h) * 0.5;
    for (std::ptrdiff_t y = 0; y < h; ++y) {
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const double fx = static_cast<double>(x), fy = static_cast<double>(y);
            double v = 0.0;
            switch (kind) {
                case terrain::noise: v = r.uniform() * 100.0; break;
                case terrain::smooth_pits:
                    v = 20.0 * std::sin(fx * 0.31) * std::cos(fy * 0.23) + 5.0 * r.uniform();
                    if (r.uniform() < 0.03) v -= 40.0;
                    break;
                case terrain::nested_basins: {
                    const double d = std::hypot(fx - cx, fy - cy);
                    // rings of walls of decreasing height around a low centre, each with a pit inside
                    v = 10.0 + 3.0 * std::floor(d / 4.0) + ((static_cast<long>(d) % 4 == 0) ? 8.0 : 0.0) -
                        2.0 * r.uniform();
                    break;
                }
                case terrain::holes_and_flats:
                    v = std::floor(r.uniform() * 4.0) * 2.0 - 2.0;  // -2, 0, 2, 4: wide flats
                    if (v == 0.0 && r.uniform() < 0.5) v = -0.0;
                    break;
            }
            m.at(x, y) = static_cast<T>(v);
        }
    }
    if (kind == terrain::holes_and_flats || kind == terrain::smooth_pits) {
        // square holes, a few straddling tile borders
        for (int k = 0; k < 5; ++k) {
            const std::ptrdiff_t x0 = static_cast<std::ptrdiff_t>(r.uniform() * static_cast<double>(w - 3));
            const std::ptrdiff_t y0 = static_cast<std::ptrdiff_t>(r.uniform() * static_cast<double>(h - 3));
            for (std::ptrdiff_t y = y0; y < y0 + 3; ++y)
                for (std::ptrdiff_t x = x0; x < x0 + 3; ++x) m.at(x, y) = no_data;
        }
        m.at(w / 2, h / 2) = no_data;
    }
    return m;
}

template <class T>
bool same_bits(T a, T b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace gorge_mpi_test
