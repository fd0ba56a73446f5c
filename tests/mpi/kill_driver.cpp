// Test driver for a rank killed mid-run (ctest mpi_kill_*, run by kill_rank.cmake through mpiexec).
//
//   kill_driver prepare <in_dir> <out_dir>   (one rank) input tiles of a test map, and older
//                                           outputs the job must leave alone when it fails
//   kill_driver run <in_dir> <out_dir>       fill_depressions_tile_files across the ranks
//   kill_driver verify <in_dir> <out_dir>    (one rank) the outputs equal fill_depressions
//
// The environment variable GORGE_TEST_KILL="<rank>:<event>" (read here only, never by the
// library), event "read" or "written", makes that rank kill itself with SIGKILL at its first
// tile_read or tile_written progress event: no handler, no clean-up, as when a node dies.
#include <mpi.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "gorge/drainage/depression_fill.hpp"
#include "mpi/mpi_test_maps.hpp"

namespace {

using namespace gorge_mpi_test;

constexpr std::ptrdiff_t map_w = 46, map_h = 35, tile_side = 12;  // 4 x 3 tiles, the last ones narrower
constexpr float no_data = -9999.0f;
constexpr std::uint64_t map_seed = 31;

grid<float> test_map() { return make_map<float>(terrain::smooth_pits, map_w, map_h, map_seed, no_data); }

int prepare(const std::string& in_dir, const std::string& out_dir) {
    std::filesystem::create_directories(in_dir);
    std::filesystem::create_directories(out_dir);
    const grid<float> map = test_map();
    const gm::tile_layout layout{map_w, map_h, tile_side, tile_side};
    for (int t = 0; t < layout.tile_count(); ++t) {
        const gm::tile_rect r = layout.tile(t);
        grid<float> cells(r.width, r.height);
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = map.at(r.x + x, r.y + y);
        gm::write_raw_tile(gm::raw_tile_path(in_dir, r.tx, r.ty), cells.view());
        if (t == 0) gm::write_raw_tile(gm::raw_tile_path(out_dir, r.tx, r.ty), cells.view());  // an older output
    }
    // An older output that is not a tile at all, and a file that is no output.
    for (const std::string& name : {gm::raw_tile_path(out_dir, 1, 0), out_dir + "/notes.txt"}) {
        std::FILE* f = std::fopen(name.c_str(), "w");
        if (f == nullptr || std::fputs("older output, to be kept\n", f) < 0 || std::fclose(f) != 0) return 1;
    }
    return 0;
}

int run(const std::string& in_dir, const std::string& out_dir) {
    int kill_rank = -1;
    std::string kill_event;
    if (const char* spec = std::getenv("GORGE_TEST_KILL")) {
        const std::string s = spec;
        const std::size_t colon = s.find(':');
        if (colon != std::string::npos) {
            kill_rank = std::atoi(s.substr(0, colon).c_str());
            kill_event = s.substr(colon + 1);
        }
    }
    const int rank = world_rank();
    gm::tiled_fill_options<float> options;
    options.no_data = no_data;
    options.progress = [&](gm::fill_event e, int tile) {
        const bool at = (kill_event == "read" && e == gm::fill_event::tile_read) ||
                        (kill_event == "written" && e == gm::fill_event::tile_written);
        if (rank != kill_rank || !at) return;
        std::fprintf(stderr, "kill_driver: rank %d kills itself after %s tile %d\n", rank, kill_event.c_str(), tile);
        std::fflush(stderr);
        std::raise(SIGKILL);
    };
    const gm::tile_layout layout{map_w, map_h, tile_side, tile_side};
    try {
        gm::fill_depressions_tile_files(MPI_COMM_WORLD, layout, in_dir, out_dir, options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kill_driver: rank %d: %s\n", rank, e.what());
        return 1;
    }
    if (rank == 0) std::printf("kill_driver: the job succeeded\n");
    return 0;
}

int verify(const std::string& out_dir) {
    grid<float> expected = test_map();
    gorge::fill_options<float> single;
    single.no_data = no_data;
    gorge::fill_depressions(expected, single);
    const gm::tile_layout layout{map_w, map_h, tile_side, tile_side};
    long long mismatches = 0;
    for (int t = 0; t < layout.tile_count(); ++t) {
        const gm::tile_rect r = layout.tile(t);
        const grid<float> cells = gm::read_raw_tile_float(gm::raw_tile_path(out_dir, r.tx, r.ty));
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x)
                mismatches += same_bits(cells.at(x, y), expected.at(r.x + x, r.y + y)) ? 0 : 1;
    }
    std::printf("kill_driver: %lld cells differ from fill_depressions\n", mismatches);
    return mismatches == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int status = 2;
    if (argc == 4) {
        const std::string mode = argv[1];
        try {
            if (mode == "prepare") status = prepare(argv[2], argv[3]);
            else if (mode == "run") status = run(argv[2], argv[3]);
            else if (mode == "verify") status = verify(argv[3]);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kill_driver: %s\n", e.what());
            status = 1;
        }
    } else {
        std::fprintf(stderr, "usage: kill_driver prepare|run|verify <in_dir> <out_dir>\n");
    }
    int any = 0;
    MPI_Allreduce(&status, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
