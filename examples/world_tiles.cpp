// world_tiles: a world of tiles made, filled and routed across the ranks of an MPI job.
//
//   mpirun -np N world_tiles [side] [tile] [--epsilon]      (defaults 2048 and 512)
//
// 1. Every rank generates its tiles (gorge::mpi::owned_tiles deals them to the ranks) with gorge's demo pipeline
//    (fBm terrain through the analytic erosion filter) and writes them as raw tiles to
//    world/heights/ (gorge's .gtile format).
// 2. gorge::mpi::fill_depressions_tile_files fills them across all ranks into world/filled/
//    (outputs appear only when the whole job succeeded). With --epsilon,
//    fill_depressions_epsilon_tile_files tilts the lakes by one ulp per cell instead, so that
//    every cell has a D8 direction and rivers run on through lakes rather than stopping there.
// 3. gorge::mpi::flow_accumulation_tiled routes the filled tiles and writes river tiles,
//    world/rivers/tile_<tx>_<ty>.png (white where more than `river_cells` cells drain through).
// 4. Rank 0 reads the filled tiles one at a time and writes a downsampled overview,
//    world/overview.png (heights, rivers in blue).
// Every rank holds its own tiles plus perimeter data; only rank 0's overview grows with the
// world (at most overview_side^2 pixels).
#include <mpi.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <gorge/filter/demo_pipeline.hpp>
#include <gorge/mpi/mpi.hpp>

#include "image_io.hpp"

namespace {

constexpr std::ptrdiff_t overview_side = 1024;  ///< largest side of world/overview.png, pixels
constexpr std::uint32_t river_cells = 100;      ///< accumulation above which a cell is a river
constexpr double world_extent = 4.0;            ///< the world spans [0, 4)^2 in the pipeline's units

void make_dir(const std::string& path) { ::mkdir(path.c_str(), 0755); }

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<std::string> args;
    bool epsilon = false;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--epsilon")
            epsilon = true;
        else
            args.emplace_back(argv[i]);
    }
    const std::ptrdiff_t side = args.size() > 0 ? std::atol(args[0].c_str()) : 2048;
    const std::ptrdiff_t tile = args.size() > 1 ? std::atol(args[1].c_str()) : 512;
    const gorge::mpi::tile_layout layout{side, side, tile, tile};
    int status = 0;
    try {
        layout.validate();
        if (rank == 0) {
            make_dir("world");
            make_dir("world/heights");
            make_dir("world/filled");
            make_dir("world/rivers");
        }
        MPI_Barrier(MPI_COMM_WORLD);

        // 1. Generate.
        const double cell = world_extent / static_cast<double>(side);
        for (int t : gorge::mpi::owned_tiles(rank, size, layout.tile_count())) {
            const gorge::mpi::tile_rect r = layout.tile(t);
            gorge::grid<float> h(r.width, r.height);
            const gorge::grid_view<float> v = h.view();
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) {
                    const glm::dvec2 p(static_cast<double>(r.x + x) * cell, static_cast<double>(r.y + y) * cell);
                    v.row(y)[x] = static_cast<float>(gorge::demo_pipeline(p).height);
                }
            gorge::mpi::write_raw_tile(gorge::mpi::raw_tile_path("world/heights", r.tx, r.ty), h.view());
        }
        MPI_Barrier(MPI_COMM_WORLD);

        // 2. Fill across ranks. The plain fill deals tiles at run time (the tile files are on a
        // disk every rank sees); the epsilon fill pairs each tile with its fixed rank.
        gorge::mpi::tiled_fill_options<float> plain_options;
        plain_options.dealing = gorge::mpi::tile_dealing::dynamic;
        const gorge::mpi::tiled_fill_stats fill =
            epsilon ? gorge::mpi::fill_depressions_epsilon_tile_files(MPI_COMM_WORLD, layout, "world/heights", "world/filled")
                    : gorge::mpi::fill_depressions_tile_files(MPI_COMM_WORLD, layout, "world/heights", "world/filled",
                                                              plain_options);

        // 3. Route across ranks; river tiles.
        const gorge::mpi::tile_reader<float> read_filled = [](const gorge::mpi::tile_rect& r, gorge::grid_view<float> cells) {
            const gorge::grid<float> g = gorge::mpi::read_raw_tile_float(gorge::mpi::raw_tile_path("world/filled", r.tx, r.ty));
            for (std::ptrdiff_t y = 0; y < r.height; ++y) std::copy(g.view().row(y), g.view().row(y) + r.width, cells.row(y));
        };
        // Overview pixels: one per step x step block of cells; a block with a river cell is blue.
        const std::ptrdiff_t step = (side + overview_side - 1) / overview_side;
        const std::ptrdiff_t ow = (side + step - 1) / step;
        std::vector<unsigned char> river_blocks(static_cast<std::size_t>(ow * ow), 0), all_river_blocks;
        const gorge::mpi::flow_tile_writer write_rivers = [&](const gorge::mpi::tile_rect& r,
                                                              gorge::grid_view<const std::uint8_t>,
                                                              gorge::grid_view<const std::uint32_t> acc) {
            std::vector<unsigned char> px(static_cast<std::size_t>(r.width * r.height));
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) {
                    const bool is_river = acc.row(y)[x] > river_cells;
                    px[static_cast<std::size_t>(y * r.width + x)] = is_river ? 255 : 0;
                    if (is_river) river_blocks[static_cast<std::size_t>(((r.y + y) / step) * ow + (r.x + x) / step)] = 1;
                }
            const std::string path = "world/rivers/tile_" + std::to_string(r.tx) + "_" + std::to_string(r.ty) + ".png";
            if (!stbi_write_png(path.c_str(), int(r.width), int(r.height), 1, px.data(), int(r.width)))
                throw std::runtime_error("cannot write " + path);
        };
        const gorge::mpi::tiled_flow_stats flow =
            gorge::mpi::flow_accumulation_tiled(MPI_COMM_WORLD, layout, read_filled, write_rivers);
        if (rank == 0) all_river_blocks.resize(river_blocks.size());
        MPI_Reduce(river_blocks.data(), all_river_blocks.data(), static_cast<int>(river_blocks.size()), MPI_UNSIGNED_CHAR,
                   MPI_MAX, 0, MPI_COMM_WORLD);

        // 4. Overview on rank 0, one tile at a time.
        if (rank == 0) {
            std::vector<float> heights(static_cast<std::size_t>(ow * ow), 0.0f);
            for (int t = 0; t < layout.tile_count(); ++t) {
                const gorge::mpi::tile_rect r = layout.tile(t);
                const gorge::grid<float> g = gorge::mpi::read_raw_tile_float(gorge::mpi::raw_tile_path("world/filled", r.tx, r.ty));
                for (std::ptrdiff_t y = 0; y < r.height; ++y)
                    for (std::ptrdiff_t x = 0; x < r.width; ++x) {
                        const std::ptrdiff_t gx = r.x + x, gy = r.y + y;
                        if (gx % step != 0 || gy % step != 0) continue;
                        heights[static_cast<std::size_t>((gy / step) * ow + gx / step)] = g.view().row(y)[x];
                    }
            }
            float lo = heights[0], hi = heights[0];
            for (const float h : heights) lo = std::min(lo, h), hi = std::max(hi, h);
            std::vector<gorge_example::rgb> px(heights.size());
            for (std::size_t i = 0; i < heights.size(); ++i)
                px[i] = all_river_blocks[i] ? gorge_example::rgb{0.15f, 0.35f, 0.9f}
                                            : gorge_example::altitude_tint(hi > lo ? (heights[i] - lo) / (hi - lo) : 0.0f);
            gorge_example::write_rgb_png("world/overview.png", ow, ow, px);
            std::printf("world_tiles: %td^2 cells in %d tiles on %d ranks; fill sent %llu bytes from rank 0, "
                        "routing %llu; wrote world/heights, world/filled, world/rivers and world/overview.png\n",
                        side, layout.tile_count(), size, static_cast<unsigned long long>(fill.bytes_sent),
                        static_cast<unsigned long long>(flow.bytes_sent));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "world_tiles (rank %d): %s\n", rank, e.what());
        status = 1;
    }
    MPI_Finalize();
    return status;
}
