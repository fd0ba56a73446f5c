// gorge::mpi: D8 directions and flow accumulation of tiled maps across ranks, against
// gorge::flow_directions and gorge::flow_accumulation on the whole map (bit for bit), on 1 to 4
// ranks (ctest runs this program through mpiexec).
#include <mpi.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "gorge/drainage/depression_fill.hpp"
#include "gorge/drainage/flow.hpp"
#include "gorge/mpi/mpi.hpp"
#include "support/catch.hpp"
#include "mpi/mpi_test_maps.hpp"

namespace {

using namespace gorge_mpi_test;

struct flow_result {
    long long dir_mismatches = 0, acc_mismatches = 0, written = 0;
    gm::tiled_flow_stats stats;
};

template <class T>
flow_result run_flow(const grid<T>& map, const grid<std::uint8_t>& dirs, const grid<std::uint32_t>& acc,
                     std::ptrdiff_t tw, std::ptrdiff_t th, const gm::tiled_flow_options<T>& options) {
    const gm::tile_layout layout{map.width(), map.height(), tw, th};
    long long dm = 0, am = 0, written = 0;
    const gm::tile_reader<T> read = [&](const gm::tile_rect& r, grid_view<T> cells) {
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = map.at(r.x + x, r.y + y);
    };
    const gm::flow_tile_writer write = [&](const gm::tile_rect& r, grid_view<const std::uint8_t> d,
                                           grid_view<const std::uint32_t> a) {
        ++written;
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x) {
                dm += d.at(x, y) != dirs.at(r.x + x, r.y + y) ? 1 : 0;
                am += a.at(x, y) != acc.at(r.x + x, r.y + y) ? 1 : 0;
            }
    };
    flow_result out;
    out.stats = gm::flow_accumulation_tiled(MPI_COMM_WORLD, layout, read, write, options);
    out.dir_mismatches = sum_all(dm);
    out.acc_mismatches = sum_all(am);
    out.written = sum_all(written);
    return out;
}

template <class T>
void check_flow_equal_to_single_machine(std::initializer_list<terrain> kinds) {
    const T no_data = T(-9999);
    const std::ptrdiff_t w = 41, h = 29;
    const int shapes[][2] = {{1, 1}, {2, 2}, {3, 2}, {4, 4}};
    for (const terrain kind : kinds) {
        const grid<T> raw = make_map<T>(kind, w, h, 31 + static_cast<std::uint64_t>(kind), no_data);
        gorge::fill_options<T> fill;
        fill.no_data = no_data;
        grid<T> filled = raw;
        gorge::fill_depressions_epsilon(filled, fill);
        for (const bool use_filled : {false, true}) {
            const grid<T>& map = use_filled ? filled : raw;
            for (const gorge::d8_rule rule : {gorge::d8_rule::steepest, gorge::d8_rule::lowest}) {
                gorge::d8_options<T> d8;
                d8.rule = rule;
                d8.no_data = no_data;
                const grid<std::uint8_t> dirs = gorge::flow_directions(map, d8);
                const grid<std::uint32_t> acc = gorge::flow_accumulation(dirs);
                std::uint32_t largest = 0;
                for (std::ptrdiff_t y = 0; y < h; ++y)
                    for (std::ptrdiff_t x = 0; x < w; ++x) largest = std::max(largest, acc.at(x, y));
                if (use_filled) REQUIRE(largest > 40);  // rivers longer than a tile
                for (std::size_t si = 0; si < 4; ++si) {
                    const auto& s = shapes[si];
                    // Both retentions over the shapes and inputs, alternating (to keep the test short).
                    {
                        const gm::tile_retention keep = (si + (use_filled ? 1u : 0u)) % 2 == 0 ? gm::tile_retention::keep
                                                                                                : gm::tile_retention::recompute;
                        INFO("terrain " << static_cast<int>(kind) << ", filled " << use_filled << ", rule "
                                        << static_cast<int>(rule) << ", tiles " << s[0] << " x " << s[1]
                                        << ", recompute " << (keep == gm::tile_retention::recompute));
                        gm::tiled_flow_options<T> options;
                        options.rule = rule;
                        options.no_data = no_data;
                        options.retention = keep;
                        options.root = world_size() / 2;
                        const flow_result r = run_flow(map, dirs, acc, (w + s[0] - 1) / s[0], (h + s[1] - 1) / s[1], options);
                        CHECK(r.written == s[0] * s[1]);
                        CHECK(r.dir_mismatches == 0);
                        CHECK(r.acc_mismatches == 0);
                    }
                }
            }
        }
    }
}

}  // namespace

TEST_CASE("tiled D8 and accumulation equal the single-machine functions (float)", "[mpi][flow]") {
    check_flow_equal_to_single_machine<float>(
        {terrain::noise, terrain::smooth_pits, terrain::nested_basins, terrain::holes_and_flats});
}

TEST_CASE("tiled D8 and accumulation equal the single-machine functions (double)", "[mpi][flow]") {
    check_flow_equal_to_single_machine<double>({terrain::smooth_pits, terrain::holes_and_flats});
}

TEST_CASE("tiled accumulation: a river crossing every tile", "[mpi][flow]") {
    // A tilted plane draining to the far corner, with a 1-cell-wide tile grid edge case (tiles of
    // 5 x 4 cells on a 23 x 17 map): everything drains to (22, 16) through all tiles, so its
    // accumulation is the whole map.
    const std::ptrdiff_t w = 23, h = 17;
    grid<double> map(w, h);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) map.at(x, y) = static_cast<double>(3 * (w - x) + 2 * (h - y));
    const grid<std::uint8_t> dirs = gorge::flow_directions(map);
    const grid<std::uint32_t> acc = gorge::flow_accumulation(dirs);
    REQUIRE(acc.at(w - 1, h - 1) == static_cast<std::uint32_t>(w * h));
    const flow_result r = run_flow(map, dirs, acc, 5, 4, gm::tiled_flow_options<double>{});
    CHECK(r.dir_mismatches == 0);
    CHECK(r.acc_mismatches == 0);
    CHECK(r.written == 5 * 5);
}

TEST_CASE("tiled accumulation: bad input", "[mpi][flow]") {
    const grid<float> map = make_map<float>(terrain::noise, 12, 10, 3, 0.0f);
    const gm::tile_layout layout{12, 10, 5, 5};
    grid<float> bad = map;
    bad.at(3, 8) = std::numeric_limits<float>::quiet_NaN();  // tile (0, 1) = tile 3
    const gm::tile_reader<float> read = [&](const gm::tile_rect& r, grid_view<float> cells) {
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = bad.at(r.x + x, r.y + y);
    };
    int written = 0;
    const gm::flow_tile_writer write = [&](const gm::tile_rect&, grid_view<const std::uint8_t>,
                                           grid_view<const std::uint32_t>) { ++written; };
    std::string message;
    int rank = -2, tile = -2;
    try {
        gm::flow_accumulation_tiled(MPI_COMM_WORLD, layout, read, write);
    } catch (const gm::job_error& e) {
        message = e.what();
        rank = e.rank();
        tile = e.tile();
    }
    INFO(message);
    CHECK(rank == gm::tile_owner(3, world_size()));
    CHECK(tile == 3);
    CHECK(message.find("tile 3 (0, 1)") != std::string::npos);
    CHECK(message.find("(3, 8)") != std::string::npos);  // the cell, in map coordinates
    CHECK(written == 0);
}
