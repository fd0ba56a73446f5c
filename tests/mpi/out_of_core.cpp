// Out of core (ctest mpi_out_of_core, one rank): a map four times larger than a configured
// memory cap fills from tiles on disk with the peak memory growth of the process under the cap,
// and the output tiles equal gorge::fill_depressions (fill_depressions_epsilon for the epsilon
// fill) on the whole map, byte for byte.
//
// Peak memory is read from /proc/self/status: growth = VmHWM after the fill - VmRSS before it
// (the high-water mark is reset first where the kernel allows, through /proc/self/clear_refs; if
// not, the growth is only overstated). The input tiles are generated and written one at a time,
// and the whole map is built for the comparison only after the measurement.
//
// Sizes: 4096 x 4096 float cells (64 MiB) in 8 x 8 tiles of 512 x 512, cap 16 MiB,
// tile_retention::recompute. The plain fill: by the cap's count (fill.hpp,
// tiled_fill_options::memory_cap), one tile's working set is 11.1 MiB (grids 5.0 MiB, queues 6.1
// MiB: tiled_fill_tile_bytes) and the messages of all 64 tiles, which grow while the tiles are
// filled, at most 2.5 MiB besides; the root's spill graph and the messages it is read from (64
// tiles x 2044 perimeter cells, at most about 95 bytes each) at most 12 MiB, after the tiles are
// done. Measured peak growth: 9.7-11.6 MiB (202 MiB with tile_retention::keep and no cap). It was
// 12-16 MiB, and once 16 MiB plus a page, when every tile's flood made its queues afresh, with
// 64-bit cell indices: their chunks of 2 and 4 MiB took new places in the C library's heap, on
// transparent huge pages where the kernel had them. The epsilon fill: one tile's working set is
// 9.6 MiB by the cap's count (grids 3.5 MiB, queues 6.1 MiB: tiled_epsilon_fill_tile_bytes) and
// the rings of all tiles 1.5 MiB. Measured peak growth: 9.3-11.0 MiB; 15 MiB when each solve left
// its queues on the thread for the next.

#include <mpi.h>

#if __has_include(<catch2/catch_session.hpp>)
#include <catch2/catch_test_macros.hpp>
#else
#include <catch2/catch.hpp>
#endif

#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gorge/drainage/depression_fill.hpp"
#include "mpi/mpi_test_maps.hpp"

namespace {

using namespace gorge_mpi_test;

#if defined(GORGE_TEST_SANITIZED)
// Sanitizer builds: AddressSanitizer's shadow memory and quarantine of freed blocks make the
// resident size meaningless, and a 4096^2 map too slow; the same path on a small map, checked
// for equality only.
constexpr std::ptrdiff_t map_side = 1024, tile_side = 256;
constexpr std::size_t memory_cap = std::size_t(4) << 20;  // bytes
constexpr bool measure_memory = false;
#else
constexpr std::ptrdiff_t map_side = 4096, tile_side = 512;
constexpr std::size_t memory_cap = std::size_t(16) << 20;  // bytes
constexpr bool measure_memory = true;
#endif
constexpr float no_data = -9999.0f;

/// Smooth hills with pits and a little noise (cheap to generate cell by cell).
float height_at(std::ptrdiff_t x, std::ptrdiff_t y) {
    rng r{static_cast<std::uint64_t>(y) * 0x100000001b3ull + static_cast<std::uint64_t>(x)};
    r.next();
    const double fx = static_cast<double>(x), fy = static_cast<double>(y);
    double v = 200.0 * std::sin(fx * 0.0041) * std::cos(fy * 0.0033) + 60.0 * std::sin((fx + fy) * 0.017) + 0.5 * r.uniform();
    if (r.uniform() < 0.0005) v -= 80.0;       // deep pits
    if (r.uniform() < 0.0002) return no_data;  // scattered holes
    return static_cast<float>(v);
}

/// A field of /proc/self/status in bytes (the kernel gives kB), or 0 when unreadable.
std::size_t status_bytes(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    const std::size_t n = std::strlen(field);
    while (std::getline(in, line))
        if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':')
            return static_cast<std::size_t>(std::strtoull(line.c_str() + n + 1, nullptr, 10)) * 1024;
    return 0;
}

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// Fills the generated map from tiles on disk under memory_cap (the epsilon fill when `epsilon`)
/// and checks the peak memory growth and every output tile.
void fill_out_of_core(bool epsilon) {
    REQUIRE(world_size() == 1);
    const gm::tile_layout layout{map_side, map_side, tile_side, tile_side};
    const std::size_t map_bytes = static_cast<std::size_t>(map_side * map_side) * sizeof(float);
    if (measure_memory) REQUIRE(map_bytes >= 4 * memory_cap);

    std::string tmpl = (std::filesystem::temp_directory_path() / "gorge_out_of_core_XXXXXX").string();
    REQUIRE(mkdtemp(&tmpl[0]) != nullptr);
    const std::string dir = tmpl, in_dir = dir + "/in", out_dir = dir + "/out";
    std::filesystem::create_directories(in_dir);
    std::filesystem::create_directories(out_dir);
    for (int t = 0; t < layout.tile_count(); ++t) {  // one tile in memory at a time
        const gm::tile_rect r = layout.tile(t);
        grid<float> cells(r.width, r.height);
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = height_at(r.x + x, r.y + y);
        gm::write_raw_tile(gm::raw_tile_path(in_dir, r.tx, r.ty), cells.view());
    }

    gm::tiled_fill_options<float> options;
    options.no_data = no_data;
    options.retention = gm::tile_retention::recompute;
    options.memory_cap = memory_cap;
    // What earlier fills in this process left, returned first, so that the fill cannot hide its
    // own growth by freeing it: the queues the whole-map fills keep on the thread, and the C
    // library's free heap memory.
    gorge::release_fill_memory();
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
    {  // reset the high-water mark to the current resident size (Linux 4.0+; ignored if refused)
        std::ofstream reset("/proc/self/clear_refs");
        reset << "5";
    }
    const std::size_t before = status_bytes("VmRSS");
    REQUIRE(before > 0);
    // The high-water mark when the tiles were read and filled (the plain fill's step 1, before the
    // spill graph; the epsilon fill's round 0) and when the levels (or the rings) settled.
    std::size_t after_tiles = 0, after_graph = 0, after_first = 0;
    options.progress = [&](gm::fill_event e, int t) {
        if (e == gm::fill_event::tile_read && t == 0) after_first = status_bytes("VmHWM");
        if (e == gm::fill_event::tile_read) after_tiles = status_bytes("VmHWM");
        if (e == gm::fill_event::levels_solved) after_graph = status_bytes("VmHWM");
    };
    const gm::tiled_fill_stats stats =
        epsilon ? gm::fill_depressions_epsilon_tile_files(MPI_COMM_WORLD, layout, in_dir, out_dir, options)
                : gm::fill_depressions_tile_files(MPI_COMM_WORLD, layout, in_dir, out_dir, options);
    const std::size_t peak = status_bytes("VmHWM");
    const std::size_t growth = peak > before ? peak - before : 0;
    std::printf("out of core, %s fill: %td^2 floats (%zu MiB) in %d tiles, cap %zu MiB: peak growth %.2f MiB "
                "(VmRSS before %.1f MiB; VmHWM at the first tile_read %.1f MiB, the last %.1f MiB, levels_solved %.1f MiB, the end %.1f MiB); "
                "spill graph %llu labels, %llu edges; %d rounds\n",
                epsilon ? "epsilon" : "plain", map_side, map_bytes >> 20, layout.tile_count(), memory_cap >> 20, static_cast<double>(growth) / 1048576.0,
                static_cast<double>(before) / 1048576.0, static_cast<double>(after_first) / 1048576.0, static_cast<double>(after_tiles) / 1048576.0,
                static_cast<double>(after_graph) / 1048576.0, static_cast<double>(peak) / 1048576.0,
                static_cast<unsigned long long>(stats.labels), static_cast<unsigned long long>(stats.graph_edges), stats.rounds);
    CHECK(stats.tiles == layout.tile_count());
    CHECK(stats.raised_cells > 0);
    if (measure_memory) {
        CHECK(growth > 0);  // measured at all
        CHECK(growth < memory_cap);
    }

    // The in-memory fill, after the measurement: every output file equals, byte for byte, the
    // tile file of fill_depressions's result.
    grid<float> whole(map_side, map_side);
    for (std::ptrdiff_t y = 0; y < map_side; ++y)
        for (std::ptrdiff_t x = 0; x < map_side; ++x) whole.at(x, y) = height_at(x, y);
    gorge::fill_options<float> single;
    single.no_data = no_data;
    if (epsilon)
        gorge::fill_depressions_epsilon(whole, single);
    else
        gorge::fill_depressions(whole, single);
    int different = 0;
    const std::string expected_path = dir + "/expected.gtile";
    for (int t = 0; t < layout.tile_count(); ++t) {
        const gm::tile_rect r = layout.tile(t);
        grid<float> cells(r.width, r.height);
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = whole.at(r.x + x, r.y + y);
        gm::write_raw_tile(expected_path, cells.view());
        different += file_bytes(expected_path) == file_bytes(gm::raw_tile_path(out_dir, r.tx, r.ty)) ? 0 : 1;
    }
    CHECK(different == 0);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
}

}  // namespace

TEST_CASE("out of core: a map 4x larger than the memory cap fills on one rank under the cap", "[mpi][out_of_core]") {
    fill_out_of_core(false);
}

TEST_CASE("out of core: the epsilon fill, likewise", "[mpi][out_of_core][epsilon]") {
    fill_out_of_core(true);
}
