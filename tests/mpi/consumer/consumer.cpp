// Uses an installed gorge::mpi: fills a small map in 2 x 2 tiles (one process, MPI singleton)
// and compares it with gorge::fill_depressions.
#include <gorge/drainage/depression_fill.hpp>
#include <gorge/mpi/mpi.hpp>

#include <cstdio>

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    const std::ptrdiff_t side = 9;
    gorge::grid<float> map(side, side, 5.0f);
    map.at(4, 4) = 1.0f;  // a pit at the corner of four tiles
    map.at(0, 3) = 2.0f;  // its outlet level is 5 (the rim)
    gorge::grid<float> expected = map;
    gorge::fill_depressions(expected);
    int bad = 0;
    const gorge::mpi::tile_layout layout{side, side, 5, 5};
    gorge::mpi::fill_depressions_tiled(
        MPI_COMM_WORLD, layout,
        [&](const gorge::mpi::tile_rect& r, gorge::grid_view<float> cells) {
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = map.at(r.x + x, r.y + y);
        },
        [&](const gorge::mpi::tile_rect& r, gorge::grid_view<const float> cells) {
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) bad += cells.at(x, y) != expected.at(r.x + x, r.y + y);
        });
    MPI_Finalize();
    std::printf("gorge::mpi consumer: %s (pit raised to %g)\n", bad == 0 ? "ok" : "MISMATCH", static_cast<double>(expected.at(4, 4)));
    return bad == 0 && expected.at(4, 4) == 5.0f ? 0 : 1;
}
