// gorge::mpi: depression filling of tiled maps across ranks, against gorge::fill_depressions on
// the whole map (bit for bit), on 1 to 4 ranks (ctest runs this program through mpiexec).
//
// Every rank runs every test case; the collective calls happen in the same order everywhere.
// Checks that depend on other ranks' tiles are summed over all ranks first (MPI_Allreduce), so
// every rank asserts the same totals.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gorge/drainage/depression_fill.hpp"
#include "gorge/mpi/mpi.hpp"
#include "gorge/noise/fractal.hpp"
#include "support/catch.hpp"
#include "mpi/mpi_test_maps.hpp"

namespace {

using namespace gorge_mpi_test;

struct run_result {
    long long mismatches = 0;     // cells whose bits differ from the reference, all ranks
    long long written_tiles = 0;  // tiles written, all ranks
    long long raised = 0;         // cells raised, all ranks
    gm::tiled_fill_stats stats;   // this rank's
};

/// Which tiled fill run_tiled calls.
enum class fill_kind { plain, epsilon };

/// Fills `map` tiled over MPI_COMM_WORLD and compares every written tile with `expected`.
template <class T>
run_result run_tiled(const grid<T>& map, const grid<T>& expected, std::ptrdiff_t tw, std::ptrdiff_t th,
                     const gm::tiled_fill_options<T>& options, fill_kind kind = fill_kind::plain) {
    gm::tile_layout layout;
    layout.map_width = map.width();
    layout.map_height = map.height();
    layout.tile_width = tw;
    layout.tile_height = th;
    long long mismatches = 0, written = 0;
    const gm::tile_reader<T> read = [&](const gm::tile_rect& r, grid_view<T> cells) {
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = map.at(r.x + x, r.y + y);
    };
    const gm::tile_writer<T> write = [&](const gm::tile_rect& r, grid_view<const T> cells) {
        ++written;
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x)
                if (!same_bits(cells.at(x, y), expected.at(r.x + x, r.y + y))) ++mismatches;
    };
    run_result out;
    out.stats = kind == fill_kind::plain ? gm::fill_depressions_tiled(MPI_COMM_WORLD, layout, read, write, options)
                                         : gm::fill_depressions_epsilon_tiled(MPI_COMM_WORLD, layout, read, write, options);
    out.mismatches = sum_all(mismatches);
    out.written_tiles = sum_all(written);
    out.raised = sum_all(static_cast<long long>(out.stats.raised_cells));
    return out;
}

/// Every rank reports the same value (the rounds of an epsilon fill are collective).
bool same_on_every_rank(int v) {
    int lo = 0, hi = 0;
    MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

struct grid_shape {
    int tiles_x, tiles_y;
};

/// The tiled fill of `kind` equals its single-machine fill bit for bit on every terrain, tile
/// grid (1x1, 2x2, 3x2, 4x4) and both retentions.
template <class T>
void check_equal_to_single_machine(fill_kind fill) {
    const T no_data = T(-9999);
    const std::ptrdiff_t w = 41, h = 29;  // no tile grid below divides it evenly
    const grid_shape shapes[] = {{1, 1}, {2, 2}, {3, 2}, {4, 4}};
    const terrain kinds[] = {terrain::noise, terrain::smooth_pits, terrain::nested_basins, terrain::holes_and_flats};
    int most_rounds = 0;
    for (const terrain kind : kinds) {
        for (std::uint64_t seed = 1; seed <= 2; ++seed) {
            const grid<T> map = make_map<T>(kind, w, h, seed * 7919 + static_cast<std::uint64_t>(kind), no_data);
            gorge::fill_options<T> single;
            single.no_data = no_data;
            grid<T> expected = map;
            const auto reference = fill == fill_kind::plain ? gorge::fill_depressions(expected, single)
                                                            : gorge::fill_depressions_epsilon(expected, single);
            REQUIRE(reference.raised_cells > 0);  // the map has depressions to fill
            for (std::size_t si = 0; si < 4; ++si) {
                const grid_shape s = shapes[si];
                // Both retentions over the shapes and seeds, alternating (to keep the test short).
                const gm::tile_retention keep = (si + seed) % 2 == 0 ? gm::tile_retention::keep : gm::tile_retention::recompute;
                INFO("terrain " << static_cast<int>(kind) << ", seed " << seed << ", tiles " << s.tiles_x << " x "
                                << s.tiles_y << ", recompute " << (keep == gm::tile_retention::recompute));
                gm::tiled_fill_options<T> options;
                options.no_data = no_data;
                options.retention = keep;
                options.root = world_size() - 1;  // any rank may solve the graph (the epsilon fill has none)
                const run_result r = run_tiled(map, expected, (w + s.tiles_x - 1) / s.tiles_x, (h + s.tiles_y - 1) / s.tiles_y,
                                               options, fill);
                CHECK(r.written_tiles == s.tiles_x * s.tiles_y);
                CHECK(r.mismatches == 0);
                CHECK(r.raised == static_cast<long long>(reference.raised_cells));
                if (fill == fill_kind::epsilon) {
                    CHECK(same_on_every_rank(r.stats.rounds));
                    if (s.tiles_x * s.tiles_y == 1) CHECK(r.stats.rounds == 1);  // nothing to learn from neighbours
                    if (s.tiles_x * s.tiles_y > 1) CHECK(r.stats.rounds >= 2);   // at least one exchange that changes nothing
                    most_rounds = std::max(most_rounds, r.stats.rounds);
                }
            }
        }
    }
    if (fill == fill_kind::epsilon) CHECK(most_rounds > 2);  // some map needed values from beyond its neighbouring tiles
}

/// The tiled fill of `fill` with a NaN no-data value and without any, down to tiles of one cell.
void check_nan_and_no_no_data(fill_kind fill) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    grid<float> map = make_map<float>(terrain::holes_and_flats, 23, 31, 99, nan);
    gm::tiled_fill_options<float> options;
    gorge::fill_options<float> single;
    SECTION("NaN marks no-data") {
        options.no_data = nan;
        single.no_data = nan;
    }
    SECTION("no no-data value") {
        for (std::ptrdiff_t y = 0; y < map.height(); ++y)
            for (std::ptrdiff_t x = 0; x < map.width(); ++x)
                if (std::isnan(map.at(x, y))) map.at(x, y) = 1.5f;
    }
    grid<float> expected = map;
    const auto reference = fill == fill_kind::plain ? gorge::fill_depressions(expected, single)
                                                    : gorge::fill_depressions_epsilon(expected, single);
    REQUIRE(reference.raised_cells > 0);
    // The last: 23 x 31 tiles of one cell each, every cell its own tile.
    for (const grid_shape s : {grid_shape{2, 2}, grid_shape{3, 2}, grid_shape{4, 4}, grid_shape{5, 7}, grid_shape{23, 31}}) {
        INFO("tiles " << s.tiles_x << " x " << s.tiles_y);
        const run_result r = run_tiled(map, expected, (23 + s.tiles_x - 1) / s.tiles_x, (31 + s.tiles_y - 1) / s.tiles_y,
                                       options, fill);
        CHECK(r.mismatches == 0);
        CHECK(r.written_tiles == s.tiles_x * s.tiles_y);
    }
}

}  // namespace

TEST_CASE("tiled fill equals fill_depressions bit for bit (float)", "[mpi]") { check_equal_to_single_machine<float>(fill_kind::plain); }

TEST_CASE("tiled fill equals fill_depressions bit for bit (double)", "[mpi]") { check_equal_to_single_machine<double>(fill_kind::plain); }

TEST_CASE("tiled fill: NaN no-data and maps without no-data", "[mpi]") { check_nan_and_no_no_data(fill_kind::plain); }

TEST_CASE("tiled fill: a basin chain through every tile drains to its only outlet in the far tile", "[mpi]") {
    // Walls (height 100) everywhere, map edge included, except a serpentine corridor along the odd
    // rows that starts in tile (0, 0) and ends at the only low edge cell, in the last tile.
    // Along the corridor, floors (0..1) alternate with sills of random heights (5..25). Water at
    // corridor position p must cross every later sill, so its filled height is the largest height
    // from p to the end of the corridor (a suffix maximum): an independent expectation.
    const std::ptrdiff_t w = 40, h = 33;
    const float wall = 100.0f;
    grid<float> map(w, h, wall);
    std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> path;
    for (std::ptrdiff_t y = 1; y < h - 1; y += 2) {
        const bool east = (y / 2) % 2 == 0;
        for (std::ptrdiff_t i = 1; i < w - 1; ++i) path.emplace_back(east ? i : w - 1 - i, y);
        if (y + 2 < h - 1) path.emplace_back(east ? w - 2 : 1, y + 1);  // the turn through the wall row
    }
    path.emplace_back(path.back().first == 1 ? 0 : w - 1, path.back().second);  // the outlet on the edge
    rng r{4242};
    for (std::size_t k = 0; k < path.size(); ++k) {
        const bool sill = k % 7 == 6;
        map.at(path[k].first, path[k].second) =
            sill ? static_cast<float>(5.0 + 20.0 * r.uniform()) : static_cast<float>(r.uniform());
    }
    map.at(path.back().first, path.back().second) = 0.0f;
    grid<float> expected = map;
    float suffix = -1.0f;
    for (std::size_t k = path.size(); k-- > 0;) {
        float& c = expected.at(path[k].first, path[k].second);
        suffix = std::max(suffix, c);
        c = suffix;
    }
    grid<float> single = map;
    gorge::fill_depressions(single);
    long long single_mismatch = 0;
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) single_mismatch += same_bits(single.at(x, y), expected.at(x, y)) ? 0 : 1;
    REQUIRE(single_mismatch == 0);  // the expectation is right
    for (const grid_shape s : {grid_shape{1, 1}, grid_shape{2, 2}, grid_shape{3, 2}, grid_shape{4, 4}}) {
        const run_result res = run_tiled(map, expected, (w + s.tiles_x - 1) / s.tiles_x, (h + s.tiles_y - 1) / s.tiles_y,
                                         gm::tiled_fill_options<float>{});
        CHECK(res.mismatches == 0);
        CHECK(res.raised > 0);
    }
}

TEST_CASE("tiled fill sends perimeter data, not tile areas", "[mpi]") {
    const std::ptrdiff_t side = 192, tile = 96;  // 2 x 2 tiles of 96 x 96
    const grid<float> map = make_map<float>(terrain::smooth_pits, side, side, 5, -9999.0f);
    grid<float> expected = map;
    gorge::fill_options<float> single;
    single.no_data = -9999.0f;
    gorge::fill_depressions(expected, single);
    gm::tiled_fill_options<float> options;
    options.no_data = -9999.0f;
    const run_result r = run_tiled(map, expected, tile, tile, options);
    CHECK(r.mismatches == 0);
    const std::uint64_t area_bytes = static_cast<std::uint64_t>(r.stats.tiles) * tile * tile * sizeof(float);
    // Perimeter: 4 * 96 - 4 cells of (label, height) per tile, plus the spill graph.
    INFO("rank " << world_rank() << " sent " << r.stats.bytes_sent << " bytes for " << r.stats.tiles << " tiles");
    CHECK(r.stats.bytes_sent * 4 < area_bytes + (world_rank() == 0 ? area_bytes : 0) + 1);
}

TEST_CASE("tiled fill: a tile sends at most one spill edge per perimeter cell", "[mpi]") {
    // fBm plus fine noise (the benchmark's kind of map) puts many small watersheds against each
    // other inside a tile: its label graph has more edges than the tile has perimeter cells
    // (about 1.2 per cell on these 128 x 128 tiles), which the spanning forest cuts to fewer
    // than one.
    const std::ptrdiff_t tile = 128, w = 4 * tile, h = 4 * tile;
    grid<float> map(w, h);
    gorge::fbm_params<float> params;
    params.octaves = 8;
    params.gain = 0.5f;
    params.frequency = 4.0f;
    rng jitter{17};
    const float scale = 1.0f / 512.0f;
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const glm::vec2 p(static_cast<float>(x) * scale, static_cast<float>(y) * scale);
            map.at(x, y) = 1000.0f * gorge::fractal_sum_value(p, params, 7u) + 2.0f * static_cast<float>(jitter.uniform());
        }
    grid<float> expected = map;
    gorge::fill_depressions(expected);
    const run_result r = run_tiled(map, expected, tile, tile, gm::tiled_fill_options<float>{});
    CHECK(r.mismatches == 0);
    if (world_rank() != 0) {  // a rank's message: per tile, a header, the perimeter and the edges
        const std::uint64_t perimeter = 4 * tile - 4;
        const std::uint64_t header = sizeof(std::int32_t) + sizeof(std::uint64_t);
        const std::uint64_t per_cell = sizeof(std::uint32_t) + sizeof(float);      // label, height
        const std::uint64_t per_edge = 2 * sizeof(std::uint32_t) + sizeof(float);  // two labels, level
        const std::uint64_t bound = static_cast<std::uint64_t>(r.stats.tiles) * (header + perimeter * (per_cell + per_edge));
        INFO("rank " << world_rank() << " sent " << r.stats.bytes_sent << " bytes for " << r.stats.tiles << " tiles");
        CHECK(r.stats.bytes_sent <= bound);
    }
}

TEST_CASE("tiled fill: bad input", "[mpi]") {
    const grid<float> map = make_map<float>(terrain::noise, 12, 10, 3, 0.0f);
    gm::tile_layout layout{12, 10, 5, 0};
    const gm::tile_reader<float> read = [&](const gm::tile_rect& r, grid_view<float> cells) {
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = map.at(r.x + x, r.y + y);
    };
    const gm::tile_writer<float> write = [](const gm::tile_rect&, grid_view<const float>) {};
    SECTION("layout") {
        std::string message;
        try {
            gm::fill_depressions_tiled(MPI_COMM_WORLD, layout, read, write);
        } catch (const std::invalid_argument& e) {
            message = e.what();
        }
        CHECK(message.find("tile_height") != std::string::npos);
    }
    SECTION("root") {
        layout.tile_height = 5;
        gm::tiled_fill_options<float> options;
        options.root = world_size();
        std::string message;
        try {
            gm::fill_depressions_tiled(MPI_COMM_WORLD, layout, read, write, options);
        } catch (const std::invalid_argument& e) {
            message = e.what();
        }
        CHECK(message.find("root") != std::string::npos);
    }
    SECTION("dealing") {
        layout.tile_height = 5;
        auto message_of = [&](const gm::tiled_fill_options<float>& options, bool epsilon) {
            try {
                if (epsilon)
                    gm::fill_depressions_epsilon_tiled(MPI_COMM_WORLD, layout, read, write, options);
                else
                    gm::fill_depressions_tiled(MPI_COMM_WORLD, layout, read, write, options);
            } catch (const std::invalid_argument& e) {
                return std::string(e.what());
            }
            return std::string();
        };
        gm::tiled_fill_options<float> options;
        options.dealing = static_cast<gm::tile_dealing>(7);
        CHECK(message_of(options, false).find("invalid dealing") != std::string::npos);
        options.dealing = gm::tile_dealing::dynamic;
        options.memory_cap = std::size_t(1) << 30;  // keep (the default) and a cap: refused
        CHECK(message_of(options, false).find("invalid dealing") != std::string::npos);
        options.memory_cap = 0;
        CHECK(message_of(options, true).find("invalid dealing") != std::string::npos);  // the epsilon fill: fixed only
        CHECK(message_of(options, false).empty());
        options.retention = gm::tile_retention::recompute;
        options.memory_cap = std::size_t(1) << 30;
        CHECK(message_of(options, false).empty());
    }
    SECTION("a non-finite cell names its rank and tile on every rank") {
        layout.tile_height = 5;
        grid<float> bad = map;
        bad.at(11, 7) = std::numeric_limits<float>::infinity();  // tile (2, 1) = tile 5
        const gm::tile_reader<float> read_bad = [&](const gm::tile_rect& r, grid_view<float> cells) {
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = bad.at(r.x + x, r.y + y);
        };
        int written = 0;
        const gm::tile_writer<float> count_writes = [&](const gm::tile_rect&, grid_view<const float>) { ++written; };
        std::string message;
        int rank = -2, tile = -2;
        try {
            gm::fill_depressions_tiled(MPI_COMM_WORLD, layout, read_bad, count_writes);
        } catch (const gm::job_error& e) {
            message = e.what();
            rank = e.rank();
            tile = e.tile();
        }
        const int owner = gm::tile_owner(5, world_size());
        INFO(message);
        CHECK(rank == owner);
        CHECK(tile == 5);
        CHECK(message.find("rank " + std::to_string(owner) + ", tile 5 (2, 1)") != std::string::npos);
        CHECK(message.find("(11, 7)") != std::string::npos);  // the cell, in map coordinates
        CHECK(written == 0);  // nothing written once a failure is known
        // Dynamic dealing: whichever rank took tile 5 names it; the others stop taking tiles at
        // the failure check, and the job ends on every rank (no rank left waiting on the counter).
        gm::tiled_fill_options<float> dynamic;
        dynamic.dealing = gm::tile_dealing::dynamic;
        int read_here = 0;
        const gm::tile_reader<float> read_bad_counted = [&](const gm::tile_rect& r, grid_view<float> cells) {
            if (r.index == 5) read_here = 1;
            read_bad(r, cells);
        };
        message.clear();
        rank = tile = -2;
        try {
            gm::fill_depressions_tiled(MPI_COMM_WORLD, layout, read_bad_counted, count_writes, dynamic);
        } catch (const gm::job_error& e) {
            message = e.what();
            rank = e.rank();
            tile = e.tile();
        }
        INFO(message);
        CHECK(tile == 5);
        CHECK(sum_all(read_here) == 1);                // one rank read tile 5 ...
        CHECK(same_on_every_rank(rank));
        if (read_here) CHECK(rank == world_rank());  // ... and the error names that rank
        CHECK(message.find("(11, 7)") != std::string::npos);
        CHECK(written == 0);
    }
}

namespace {

/// A directory shared by all ranks (same machine): made by rank 0, its name broadcast.
struct shared_dir {
    std::string path;
    shared_dir() {
        char name[4096] = {0};
        if (world_rank() == 0) {
            std::string tmpl = (std::filesystem::temp_directory_path() / "gorge_test_mpi_XXXXXX").string();
            std::vector<char> buf(tmpl.begin(), tmpl.end());
            buf.push_back('\0');
            if (mkdtemp(buf.data()) != nullptr) std::strncpy(name, buf.data(), sizeof name - 1);
        }
        MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
        path = name;
    }
    ~shared_dir() {
        MPI_Barrier(MPI_COMM_WORLD);
        if (world_rank() == 0 && !path.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    }
    shared_dir(const shared_dir&) = delete;
    shared_dir& operator=(const shared_dir&) = delete;
};

/// Every file of a directory with its bytes, sorted by name.
std::vector<std::pair<std::string, std::string>> snapshot(const std::string& dir) {
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.is_directory()) {
            files.emplace_back(e.path().filename().string(), "(directory)");
            continue;
        }
        std::ifstream in(e.path(), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        files.emplace_back(e.path().filename().string(), bytes);
    }
    std::sort(files.begin(), files.end());
    return files;
}

/// Rank 0 writes `map`'s tiles into in_dir, plus an older output and a notes file into out_dir,
/// which a failed job must leave alone; every rank waits for it.
void write_tiles_and_old_outputs(const grid<float>& map, const gm::tile_layout& layout, const std::string& in_dir,
                                 const std::string& out_dir) {
    if (world_rank() == 0) {
        for (int t = 0; t < layout.tile_count(); ++t) {
            const gm::tile_rect r = layout.tile(t);
            grid<float> cells(r.width, r.height);
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = map.at(r.x + x, r.y + y);
            gm::write_raw_tile(gm::raw_tile_path(in_dir, r.tx, r.ty), cells.view());
        }
        std::ofstream(out_dir + "/tile_0_0.gtile", std::ios::binary) << "old output";
        std::ofstream(out_dir + "/notes.txt") << "kept";
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/// Runs a tile-file job expected to fail on tile 6 = (2, 1) of a 4 x 3 layout, owned by `owner`,
/// and checks that every rank's job_error names that rank, the tile, `named_path` and
/// `expect_in_message`, and that out_dir is as it was.
template <class Job>
void check_fails_on_tile_6(Job&& job, const std::string& out_dir, int owner, const std::string& named_path,
                           const std::string& expect_in_message) {
    const auto before = snapshot(out_dir);
    std::string message;
    int rank = -2, tile = -2;
    try {
        job();
    } catch (const gm::job_error& e) {
        message = e.what();
        rank = e.rank();
        tile = e.tile();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    INFO(message);
    CHECK(rank == owner);
    CHECK(tile == 6);
    CHECK(message.find("rank " + std::to_string(owner) + ", tile 6 (2, 1)") != std::string::npos);
    CHECK(message.find(named_path) != std::string::npos);
    CHECK(message.find(expect_in_message) != std::string::npos);
    CHECK(snapshot(out_dir) == before);  // the output directory as it was
}

/// The setup of the tile-file failure tests: a 30 x 22 map of `kind` (no-data -9999) in 4 x 3
/// tiles of 8 x 8, written to a shared input directory, an output directory with older files in
/// it (write_tiles_and_old_outputs), options with that no-data value, and tile 6 = (2, 1), the
/// one the tests break: its input path and the rank that owns it.
struct tile_file_job {
    static constexpr float no_data = -9999.0f;
    static constexpr int bad_tile = 6;
    const gm::tile_layout layout{30, 22, 8, 8};
    const grid<float> map;
    shared_dir in_dir, out_dir;
    gm::tiled_fill_options<float> options;
    const std::string bad_path;
    const int owner;
    tile_file_job(terrain kind, std::uint64_t seed)
        : map(make_map<float>(kind, layout.map_width, layout.map_height, seed, no_data)),
          bad_path(gm::raw_tile_path(in_dir.path, 2, 1)), owner(gm::tile_owner(bad_tile, world_size())) {
        REQUIRE(!in_dir.path.empty());
        REQUIRE(!out_dir.path.empty());
        write_tiles_and_old_outputs(map, layout, in_dir.path, out_dir.path);
        options.no_data = no_data;
    }
    /// fill(single) on a copy of the map, with single-machine options of that no-data value.
    template <class Fill>
    grid<float> filled(Fill&& fill) const {
        grid<float> out = map;
        gorge::fill_options<float> single;
        single.no_data = no_data;
        fill(out, single);
        return out;
    }
};

/// Cells of the output tiles in out_dir that differ from `expected`, over all ranks (each rank
/// reads the tiles it owns).
long long output_mismatches(const gm::tile_layout& layout, const std::string& out_dir, const grid<float>& expected) {
    long long mismatches = 0;
    for (int t : gm::owned_tiles(world_rank(), world_size(), layout.tile_count())) {
        const gm::tile_rect r = layout.tile(t);
        const grid<float> cells = gm::read_raw_tile_float(gm::raw_tile_path(out_dir, r.tx, r.ty));
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x)
                mismatches += same_bits(cells.at(x, y), expected.at(r.x + x, r.y + y)) ? 0 : 1;
    }
    return sum_all(mismatches);
}

}  // namespace

TEST_CASE("raw tile files: round trip and corrupt files", "[mpi]") {
    shared_dir dir;
    REQUIRE(!dir.path.empty());
    const std::string p = dir.path + "/r" + std::to_string(world_rank()) + ".gtile";
    grid<double> g(3, 2);
    for (std::ptrdiff_t y = 0; y < 2; ++y)
        for (std::ptrdiff_t x = 0; x < 3; ++x) g.at(x, y) = 0.25 * static_cast<double>(x - 7 * y);
    gm::write_raw_tile(p, g.view());
    const grid<double> back = gm::read_raw_tile_double(p);
    REQUIRE(back.width() == 3);
    REQUIRE(back.height() == 2);
    for (std::ptrdiff_t y = 0; y < 2; ++y)
        for (std::ptrdiff_t x = 0; x < 3; ++x) CHECK(back.at(x, y) == g.at(x, y));
    auto message = [](auto&& f) {
        try {
            f();
        } catch (const gm::tile_file_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(message([&] { gm::read_raw_tile_float(p); }).find("double cells") != std::string::npos);
    std::filesystem::resize_file(p, gm::raw_tile_header_bytes + 5 * sizeof(double));
    CHECK(message([&] { gm::read_raw_tile_double(p); }).find("truncated") != std::string::npos);
    {
        std::ofstream out(p, std::ios::binary | std::ios::trunc);
        out << "not a tile at all, but long enough";
    }
    CHECK(message([&] { gm::read_raw_tile_double(p); }).find("bad magic") != std::string::npos);
    CHECK(message([&] { gm::read_raw_tile_double(p + ".none"); }).find("cannot open") != std::string::npos);
}

TEST_CASE("tile files: outputs appear only when the whole job succeeds", "[mpi]") {
    tile_file_job job(terrain::smooth_pits, 11);
    const grid<float> expected =
        job.filled([](grid<float>& g, const gorge::fill_options<float>& o) { gorge::fill_depressions(g, o); });
    const gm::tile_layout& layout = job.layout;
    const shared_dir &in_dir = job.in_dir, &out_dir = job.out_dir;
    gm::tiled_fill_options<float>& options = job.options;
    const std::string& bad_path = job.bad_path;
    const int owner = job.owner;

    auto run_failing = [&](const std::string& expect_in_message, const std::string& named_path) {
        check_fails_on_tile_6(
            [&] { gm::fill_depressions_tile_files(MPI_COMM_WORLD, layout, in_dir.path, out_dir.path, options); },
            out_dir.path, owner, named_path, expect_in_message);
    };

    SECTION("missing tile") {
        MPI_Barrier(MPI_COMM_WORLD);
        if (world_rank() == 0) std::filesystem::remove(bad_path);
        MPI_Barrier(MPI_COMM_WORLD);
        run_failing("cannot open", bad_path);
        CHECK(!std::filesystem::exists(gm::staging_dir(out_dir.path)));  // staged files and directory removed
    }
    SECTION("corrupt tile") {
        MPI_Barrier(MPI_COMM_WORLD);
        if (world_rank() == 0) std::filesystem::resize_file(bad_path, 100);
        MPI_Barrier(MPI_COMM_WORLD);
        run_failing("truncated", bad_path);
        CHECK(!std::filesystem::exists(gm::staging_dir(out_dir.path)));  // staged files and directory removed
    }
    SECTION("a tile of the wrong size") {
        MPI_Barrier(MPI_COMM_WORLD);
        if (world_rank() == 0) gm::write_raw_tile(bad_path, grid<float>(7, 8, 1.0f).view());
        MPI_Barrier(MPI_COMM_WORLD);
        run_failing("the layout needs 8 x 8", bad_path);
        CHECK(!std::filesystem::exists(gm::staging_dir(out_dir.path)));  // staged files and directory removed
    }
    SECTION("an output that cannot be written, after other tiles were") {
        // A directory in the way of tile 6's staged output: the job fails while writing, after
        // the ranks staged outputs of earlier tiles, which must all be removed.
        const std::string staging = gm::staging_dir(out_dir.path);
        const std::string blocked = gm::raw_tile_path(staging, 2, 1);
        MPI_Barrier(MPI_COMM_WORLD);
        if (world_rank() == 0) std::filesystem::create_directories(blocked);
        MPI_Barrier(MPI_COMM_WORLD);
        run_failing("cannot create", blocked);
        if (world_rank() == 0) {
            const auto left = snapshot(staging);  // only the blocking directory
            REQUIRE(left.size() == 1);
            CHECK(left[0].first == "tile_2_1.gtile");
            CHECK(left[0].second == "(directory)");
            std::filesystem::remove_all(staging);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    SECTION("a memory cap no tile fits: invalid_argument, no staging directory left") {
        const auto before = snapshot(out_dir.path);
        gm::tiled_fill_options<float> small = options;
        small.memory_cap = 1000;
        std::string message;
        try {
            gm::fill_depressions_tile_files(MPI_COMM_WORLD, layout, in_dir.path, out_dir.path, small);
        } catch (const std::invalid_argument& e) {
            message = e.what();
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(message.find("memory_cap") != std::string::npos);
        CHECK(snapshot(out_dir.path) == before);
        CHECK(!std::filesystem::exists(gm::staging_dir(out_dir.path)));
    }
    SECTION("success: every tile replaced, equal to fill_depressions") {
        const gm::tiled_fill_stats stats =
            gm::fill_depressions_tile_files(MPI_COMM_WORLD, layout, in_dir.path, out_dir.path, options);
        CHECK(sum_all(stats.tiles) == layout.tile_count());
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(output_mismatches(layout, out_dir.path, expected) == 0);
        const auto after = snapshot(out_dir.path);
        CHECK(after.size() == static_cast<std::size_t>(layout.tile_count()) + 1);  // the tiles and notes.txt
        for (const auto& f : after) CHECK(f.first.find(".partial") == std::string::npos);
        CHECK(!std::filesystem::exists(gm::staging_dir(out_dir.path)));  // removed once empty
    }
    SECTION("success with dynamic dealing and recompute under a memory cap") {
        gm::tiled_fill_options<float> dynamic = options;
        dynamic.dealing = gm::tile_dealing::dynamic;
        dynamic.retention = gm::tile_retention::recompute;
        dynamic.memory_cap = std::size_t(1) << 20;
        const gm::tiled_fill_stats stats =
            gm::fill_depressions_tile_files(MPI_COMM_WORLD, layout, in_dir.path, out_dir.path, dynamic);
        CHECK(sum_all(stats.tiles) == layout.tile_count());
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(output_mismatches(layout, out_dir.path, expected) == 0);
        CHECK(snapshot(out_dir.path).size() == static_cast<std::size_t>(layout.tile_count()) + 1);
        CHECK(!std::filesystem::exists(gm::staging_dir(out_dir.path)));
    }
}

TEST_CASE("tiled fill, dynamic dealing: the same map; every tile read and written once, by one rank", "[mpi]") {
    const std::ptrdiff_t w = 37, h = 29;
    const float no_data = -9999.0f;
    int case_number = 0;
    for (const terrain kind : {terrain::noise, terrain::nested_basins, terrain::holes_and_flats}) {
        const grid<float> map = make_map<float>(kind, w, h, 5 + static_cast<std::uint64_t>(kind), no_data);
        grid<float> expected = map;
        gorge::fill_options<float> single;
        single.no_data = no_data;
        gorge::fill_depressions(expected, single);
        for (const grid_shape s : {grid_shape{1, 1}, grid_shape{3, 2}, grid_shape{4, 4}, grid_shape{5, 7}}) {
            const std::ptrdiff_t tw = (w + s.tiles_x - 1) / s.tiles_x, th = (h + s.tiles_y - 1) / s.tiles_y;
            const int tiles = gm::tile_layout{w, h, tw, th}.tile_count();
            ++case_number;
            INFO("terrain " << static_cast<int>(kind) << ", tiles " << s.tiles_x << " x " << s.tiles_y);
            gm::tiled_fill_options<float> options;
            options.no_data = no_data;
            options.dealing = gm::tile_dealing::dynamic;
            options.retention = case_number % 2 == 0 ? gm::tile_retention::keep : gm::tile_retention::recompute;
            options.root = case_number % world_size();
            std::vector<int> read_tiles, written_tiles;
            options.progress = [&](gm::fill_event e, int t) {
                if (e == gm::fill_event::tile_read) read_tiles.push_back(t);
                if (e == gm::fill_event::tile_written) written_tiles.push_back(t);
            };
            const run_result r = run_tiled(map, expected, tw, th, options);
            CHECK(r.mismatches == 0);
            CHECK(r.written_tiles == tiles);
            CHECK(r.stats.tiles == static_cast<int>(read_tiles.size()));
            CHECK(std::is_sorted(read_tiles.begin(), read_tiles.end()));
            CHECK(written_tiles == read_tiles);  // a rank finishes the tiles it filled
            std::vector<int> times_read(static_cast<std::size_t>(tiles), 0);
            for (int t : read_tiles) times_read[static_cast<std::size_t>(t)] += 1;
            MPI_Allreduce(MPI_IN_PLACE, times_read.data(), tiles, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            CHECK(std::count(times_read.begin(), times_read.end(), 1) == tiles);
        }
    }
}

TEST_CASE("tiled fill: tiles one cell wide or tall at the map's right and bottom edges", "[mpi]") {
    // 21 x 13 cells in tiles of 5 x 4: the last column of tiles is 1 cell wide, the last row 1
    // cell tall, and the corner tile a single cell.
    for (const terrain kind : {terrain::noise, terrain::holes_and_flats}) {
        const grid<float> map = make_map<float>(kind, 21, 13, 77, -9999.0f);
        gorge::fill_options<float> single;
        single.no_data = -9999.0f;
        grid<float> expected = map;
        REQUIRE(gorge::fill_depressions(expected, single).raised_cells > 0);
        gm::tiled_fill_options<float> options;
        options.no_data = -9999.0f;
        const run_result r = run_tiled(map, expected, 5, 4, options);
        CHECK(r.written_tiles == 5 * 4);
        CHECK(r.mismatches == 0);
        const gm::tile_layout layout{21, 13, 5, 4};
        CHECK(layout.tile(19).width == 1);
        CHECK(layout.tile(19).height == 1);
        CHECK(layout.tile_at(20, 12) == 19);
    }
}

TEST_CASE("tile files: the staging directory is a hidden sibling of the output directory", "[mpi]") {
    CHECK(gm::staging_dir("a/b/out") == "a/b/.out.gorge-staging");
    CHECK(gm::staging_dir("a/b/out/") == "a/b/.out.gorge-staging");
    CHECK(gm::staging_dir("/data/tiles") == "/data/.tiles.gorge-staging");
    const std::string here = gm::staging_dir(".");
    CHECK(here.find(".gorge-staging") != std::string::npos);
    CHECK(std::filesystem::path(here).parent_path() == std::filesystem::current_path().parent_path());
}

TEST_CASE("tiled fill: progress events in order, once per tile", "[mpi]") {
    const grid<float> map = make_map<float>(terrain::smooth_pits, 20, 14, 9, -9999.0f);
    const gm::tile_layout layout{20, 14, 6, 5};  // 4 x 3 tiles
    const gm::tile_reader<float> read = [&](const gm::tile_rect& r, grid_view<float> cells) {
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = map.at(r.x + x, r.y + y);
    };
    std::vector<int> written;
    const gm::tile_writer<float> write = [&](const gm::tile_rect& r, grid_view<const float>) { written.push_back(r.index); };
    std::vector<std::pair<gm::fill_event, int>> events;
    gm::tiled_fill_options<float> options;
    options.no_data = -9999.0f;
    options.progress = [&](gm::fill_event e, int t) { events.emplace_back(e, t); };
    gm::fill_depressions_tiled(MPI_COMM_WORLD, layout, read, write, options);
    std::vector<std::pair<gm::fill_event, int>> expected;
    const std::vector<int> mine = gm::owned_tiles(world_rank(), world_size(), layout.tile_count());
    for (int t : mine) expected.emplace_back(gm::fill_event::tile_read, t);
    expected.emplace_back(gm::fill_event::levels_solved, -1);
    for (int t : mine) expected.emplace_back(gm::fill_event::tile_written, t);
    CHECK(events == expected);
    CHECK(written == mine);
    SECTION("an exception from progress fails the job, naming the tile") {
        options.progress = [](gm::fill_event e, int t) {
            if (e == gm::fill_event::tile_read && t == 3) throw std::runtime_error("stop at tile 3");
        };
        std::string message;
        int tile = -2;
        try {
            gm::fill_depressions_tiled(MPI_COMM_WORLD, layout, read, write, options);
        } catch (const gm::job_error& e) {
            message = e.what();
            tile = e.tile();
        }
        CHECK(tile == 3);
        CHECK(message.find("stop at tile 3") != std::string::npos);
    }
}

TEST_CASE("tiled fill: memory cap", "[mpi]") {
    const std::ptrdiff_t side = 96, tile = 24;  // 4 x 4 tiles
    const grid<float> map = make_map<float>(terrain::smooth_pits, side, side, 21, -9999.0f);
    grid<float> expected = map;
    gorge::fill_options<float> single;
    single.no_data = -9999.0f;
    gorge::fill_depressions(expected, single);
    const std::size_t tile_bytes = static_cast<std::size_t>(gm::tiled_fill_tile_bytes<float>(tile, tile));
    auto message_of = [&](const gm::tiled_fill_options<float>& options, bool& invalid) {
        invalid = false;
        try {
            run_tiled(map, expected, tile, tile, options);
        } catch (const std::invalid_argument& e) {
            invalid = true;
            return std::string(e.what());
        } catch (const gm::job_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    gm::tiled_fill_options<float> options;
    options.no_data = -9999.0f;
    bool invalid = false;
    SECTION("a tile larger than the cap") {
        options.retention = gm::tile_retention::recompute;
        options.memory_cap = tile_bytes - 1;
        const std::string m = message_of(options, invalid);
        CHECK(invalid);
        CHECK(m.find("memory_cap") != std::string::npos);
        CHECK(m.find("smaller tiles") != std::string::npos);
    }
    SECTION("kept tiles beyond the cap") {
        options.retention = gm::tile_retention::keep;
        options.memory_cap = tile_bytes + 1;  // one tile fits, not one kept besides
        const std::string m = message_of(options, invalid);
        CHECK(invalid);
        CHECK(m.find("memory_cap") != std::string::npos);
        CHECK(m.find("recompute") != std::string::npos);
    }
    SECTION("a spill graph beyond the cap at the root") {
        // 256 tiles of 20 perimeter cells. A rank's tile check passes on any rank count: one tile
        // of 6 x 6 and the messages of all 256 tiles (at most 12 bytes and 20 a perimeter cell
        // each, fill.hpp) fit. The root's graph does not: 46 bytes a perimeter cell alone.
        gm::tile_layout small{side, side, 6, 6};
        options.retention = gm::tile_retention::recompute;
        options.memory_cap = static_cast<std::size_t>(gm::tiled_fill_tile_bytes<float>(6, 6)) + 256 * (12 + 20 * 20);
        std::string m;
        try {
            gm::fill_depressions_tiled(
                MPI_COMM_WORLD, small,
                [&](const gm::tile_rect& r, grid_view<float> cells) {
                    for (std::ptrdiff_t y = 0; y < r.height; ++y)
                        for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = map.at(r.x + x, r.y + y);
                },
                [](const gm::tile_rect&, grid_view<const float>) {}, options);
        } catch (const gm::job_error& e) {
            m = e.what();
        }
        CHECK(m.find("memory_cap") != std::string::npos);
        CHECK(m.find("spill graph") != std::string::npos);
        CHECK(m.find("larger tiles") != std::string::npos);
    }
    SECTION("a tile and the perimeter messages beyond the cap") {
        // Dynamic dealing may give one rank all 16 tiles, so every rank counts all their messages
        // (at most 12 bytes and 20 a perimeter cell each, fill.hpp; 92 perimeter cells a tile),
        // on any rank count.
        const std::size_t messages = 16 * (12 + 20 * 92);
        options.retention = gm::tile_retention::recompute;
        options.dealing = gm::tile_dealing::dynamic;
        options.memory_cap = tile_bytes + messages - 1;
        const std::string m = message_of(options, invalid);
        CHECK(invalid);
        CHECK(m.find("memory_cap") != std::string::npos);
        CHECK(m.find("more ranks") != std::string::npos);
        CHECK(m.find(std::to_string(tile_bytes + messages)) != std::string::npos);  // what it needs
    }
    SECTION("a tile's working set as the cap counts it, by hand") {
        // Grids: 4 sizeof(T) + 4 bytes a padded cell. Queues: two entries a padded cell (8 bytes
        // for float, 16 for double), rounded up to chunks of 64 KiB, 2 MiB, 4 MiB, 4 MiB, ...
        const std::uint64_t kib = 1024, mib = 1024 * kib;
        CHECK(gm::tiled_fill_tile_bytes<float>(6, 6) == 64 * 20 + 64 * kib);
        CHECK(gm::tiled_fill_tile_bytes<double>(6, 6) == 64 * 36 + 64 * kib);
        CHECK(gm::tiled_fill_tile_bytes<float>(510, 510) == 512 * 512 * 20 + 64 * kib + 2 * mib + 4 * mib);  // queues 4 MiB
        CHECK(gm::tiled_fill_tile_bytes<float>(330, 330) == 332 * 332 * 20 + 64 * kib + 2 * mib);  // 1.68 MiB
        CHECK(gm::tiled_fill_tile_bytes<double>(1022, 1022) == 1024 * 1024 * 36 + 64 * kib + 2 * mib + 8 * 4 * mib);
        CHECK_THROWS_AS(gm::tiled_fill_tile_bytes<float>(0, 5), std::invalid_argument);
        CHECK_THROWS_AS(gm::tiled_fill_tile_bytes<double>(5, -1), std::invalid_argument);
        // The epsilon fill's grids: 3 sizeof(T) + 2 bytes a padded cell; its queues likewise.
        CHECK(gm::tiled_epsilon_fill_tile_bytes<float>(6, 6) == 64 * 14 + 64 * kib);
        CHECK(gm::tiled_epsilon_fill_tile_bytes<float>(510, 510) == 512 * 512 * 14 + 64 * kib + 2 * mib + 4 * mib);
        CHECK(gm::tiled_epsilon_fill_tile_bytes<double>(1022, 1022) == 1024 * 1024 * 26 + 64 * kib + 2 * mib + 8 * 4 * mib);
        CHECK_THROWS_AS(gm::tiled_epsilon_fill_tile_bytes<float>(3, 0), std::invalid_argument);
    }
    SECTION("a cap that holds: the same result") {
        options.retention = gm::tile_retention::recompute;
        options.memory_cap = 4 * tile_bytes + 200000;
        const run_result r = run_tiled(map, expected, tile, tile, options);
        CHECK(r.mismatches == 0);
    }
}

// ---------------------------------------------------------------------------------------------
// Epsilon filling across tiles: gorge::fill_depressions_epsilon's surface, bit for bit.

namespace {

/// The epsilon surface by its definition alone (fill_depressions_epsilon's header comment), as an
/// independent reference: E = Z at outlets (map edge, next to no-data), +infinity elsewhere, then
/// E(c) = max(Z(c), succ(min over data neighbours E(n))) swept forwards and backwards until
/// nothing changes. Heights >= 0 and no finite no-data value near them: succ is std::nextafter.
grid<float> epsilon_by_definition(const grid<float>& z) {
    const std::ptrdiff_t w = z.width(), h = z.height();
    auto data = [&](std::ptrdiff_t x, std::ptrdiff_t y) { return !std::isnan(z.at(x, y)); };
    grid<float> e(w, h, std::numeric_limits<float>::infinity());
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            if (!data(x, y)) {
                e.at(x, y) = z.at(x, y);
                continue;
            }
            bool outlet = x == 0 || y == 0 || x == w - 1 || y == h - 1;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    const std::ptrdiff_t nx = x + dx, ny = y + dy;
                    if (nx >= 0 && ny >= 0 && nx < w && ny < h && !data(nx, ny)) outlet = true;
                }
            if (outlet) e.at(x, y) = z.at(x, y);
        }
    bool changed = true;
    for (int sweep = 0; changed; ++sweep) {
        changed = false;
        for (std::ptrdiff_t k = 0; k < w * h; ++k) {
            const std::ptrdiff_t i = sweep % 2 == 0 ? k : w * h - 1 - k;
            const std::ptrdiff_t x = i % w, y = i / w;
            if (!data(x, y) || x == 0 || y == 0 || x == w - 1 || y == h - 1) continue;
            float low = std::numeric_limits<float>::infinity();
            bool outlet = false;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    if (dx == 0 && dy == 0) continue;
                    if (!data(x + dx, y + dy)) outlet = true;
                    else low = std::min(low, e.at(x + dx, y + dy));
                }
            if (outlet || low == std::numeric_limits<float>::infinity()) continue;
            const float v = std::max(z.at(x, y), std::nextafter(low, std::numeric_limits<float>::infinity()));
            if (v < e.at(x, y)) {
                e.at(x, y) = v;
                changed = true;
            }
        }
    }
    return e;
}

}  // namespace

TEST_CASE("tiled epsilon fill equals fill_depressions_epsilon bit for bit (float)", "[mpi][epsilon]") {
    check_equal_to_single_machine<float>(fill_kind::epsilon);
}

TEST_CASE("tiled epsilon fill equals fill_depressions_epsilon bit for bit (double)", "[mpi][epsilon]") {
    check_equal_to_single_machine<double>(fill_kind::epsilon);
}

TEST_CASE("tiled epsilon fill: NaN no-data, no no-data, tiles one cell wide", "[mpi][epsilon]") {
    check_nan_and_no_no_data(fill_kind::epsilon);
}

TEST_CASE("tiled epsilon fill: flats in a basin chain through every tile drain to the only outlet, in the far tile",
          "[mpi][epsilon]") {
    // Walls (height 100) everywhere, map edge included, except a serpentine corridor along the odd
    // rows from tile (0, 0) to the only low edge cell, in the last tile. The corridor's floor is
    // flat (height 2) but for a few sills (3..6) and a pit (0) here and there: long flats that
    // cross every tile border on the way, each to be tilted one ulp per cell towards the outlet.
    // The expectation comes from the definition alone (epsilon_by_definition), and must equal
    // the single-machine fill before the tiled runs are compared with it.
    const std::ptrdiff_t w = 40, h = 33;
    grid<float> map(w, h, 100.0f);
    std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> path;
    for (std::ptrdiff_t y = 1; y < h - 1; y += 2) {
        const bool east = (y / 2) % 2 == 0;
        for (std::ptrdiff_t i = 1; i < w - 1; ++i) path.emplace_back(east ? i : w - 1 - i, y);
        if (y + 2 < h - 1) path.emplace_back(east ? w - 2 : 1, y + 1);  // the turn through the wall row
    }
    path.emplace_back(path.back().first == 1 ? 0 : w - 1, path.back().second);  // the outlet on the edge
    rng r{777};
    for (std::size_t k = 0; k < path.size(); ++k) {
        float v = 2.0f;
        if (k % 53 == 52) v = static_cast<float>(3.0 + 3.0 * r.uniform());  // a sill
        if (k % 31 == 17) v = 0.0f;                                          // a pit
        map.at(path[k].first, path[k].second) = v;
    }
    map.at(path.back().first, path.back().second) = 1.0f;  // the outlet, below the floor
    const grid<float> expected = epsilon_by_definition(map);
    {
        grid<float> single = map;
        gorge::fill_depressions_epsilon(single);
        long long single_mismatch = 0;
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) single_mismatch += same_bits(single.at(x, y), expected.at(x, y)) ? 0 : 1;
        REQUIRE(single_mismatch == 0);  // the expectation is right
        // The corridor's start drains over every sill on the way: it lies strictly above the
        // highest one.
        float highest = 0.0f;
        for (const auto& p : path) highest = std::max(highest, map.at(p.first, p.second));
        CHECK(expected.at(path.front().first, path.front().second) > highest);
    }
    for (const grid_shape s : {grid_shape{1, 1}, grid_shape{2, 2}, grid_shape{3, 2}, grid_shape{4, 4}}) {
        INFO("tiles " << s.tiles_x << " x " << s.tiles_y);
        for (const gm::tile_retention keep : {gm::tile_retention::keep, gm::tile_retention::recompute}) {
            gm::tiled_fill_options<float> options;
            options.retention = keep;
            const run_result res = run_tiled(map, expected, (w + s.tiles_x - 1) / s.tiles_x, (h + s.tiles_y - 1) / s.tiles_y,
                                             options, fill_kind::epsilon);
            CHECK(res.mismatches == 0);
            CHECK(res.raised > static_cast<long long>(path.size()) / 2);
            // The corridor enters every row of tiles from its far end: each tile border on the
            // way costs a round.
            if (s.tiles_x * s.tiles_y == 1) CHECK(res.stats.rounds == 1);
            if (s.tiles_x * s.tiles_y > 1) CHECK(res.stats.rounds > 2);
            if (s.tiles_x * s.tiles_y == 16) CHECK(res.stats.rounds >= 16);
        }
    }
}

TEST_CASE("tiled epsilon fill sends perimeter pieces, not tile areas", "[mpi][epsilon]") {
    const std::ptrdiff_t side = 192, tile = 48;  // 4 x 4 tiles of 48 x 48
    const grid<float> map = make_map<float>(terrain::smooth_pits, side, side, 5, -9999.0f);
    grid<float> expected = map;
    gorge::fill_options<float> single;
    single.no_data = -9999.0f;
    gorge::fill_depressions_epsilon(expected, single);
    gm::tiled_fill_options<float> options;
    options.no_data = -9999.0f;
    const run_result r = run_tiled(map, expected, tile, tile, options, fill_kind::epsilon);
    CHECK(r.mismatches == 0);
    // The bound of fill.hpp: per tile and round, 2 (w + h) + 4 values (its perimeter, corner
    // cells thrice) and 8 bytes of header for each of its 8 pieces.
    const std::uint64_t per_tile_round = (4 * tile + 4) * sizeof(float) + 8 * 8;
    INFO("rank " << world_rank() << " sent " << r.stats.bytes_sent << " bytes for " << r.stats.tiles << " tiles in "
                 << r.stats.rounds << " rounds");
    CHECK(r.stats.bytes_sent <= per_tile_round * static_cast<std::uint64_t>(r.stats.tiles * r.stats.rounds));
    const std::uint64_t area_bytes = static_cast<std::uint64_t>(r.stats.tiles) * tile * tile * sizeof(float);
    CHECK(r.stats.bytes_sent < area_bytes);
    if (world_size() > 1) CHECK(sum_all(static_cast<long long>(r.stats.bytes_sent)) > 0);  // they did talk
}

TEST_CASE("tiled epsilon fill: progress events, failures and memory cap as the plain fill", "[mpi][epsilon]") {
    const grid<float> map = make_map<float>(terrain::smooth_pits, 20, 14, 9, -9999.0f);
    const gm::tile_layout layout{20, 14, 6, 5};  // 4 x 3 tiles
    const gm::tile_reader<float> read = [&](const gm::tile_rect& r, grid_view<float> cells) {
        for (std::ptrdiff_t y = 0; y < r.height; ++y)
            for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = map.at(r.x + x, r.y + y);
    };
    std::vector<int> written;
    const gm::tile_writer<float> write = [&](const gm::tile_rect& r, grid_view<const float>) { written.push_back(r.index); };
    gm::tiled_fill_options<float> options;
    options.no_data = -9999.0f;
    const std::vector<int> mine = gm::owned_tiles(world_rank(), world_size(), layout.tile_count());
    SECTION("events in order, once per tile") {
        std::vector<std::pair<gm::fill_event, int>> events;
        options.progress = [&](gm::fill_event e, int t) { events.emplace_back(e, t); };
        options.retention = gm::tile_retention::recompute;
        int reads = 0;
        const gm::tile_reader<float> counting = [&](const gm::tile_rect& r, grid_view<float> cells) {
            ++reads;
            read(r, cells);
        };
        const gm::tiled_fill_stats stats = gm::fill_depressions_epsilon_tiled(MPI_COMM_WORLD, layout, counting, write, options);
        std::vector<std::pair<gm::fill_event, int>> expected;
        for (int t : mine) expected.emplace_back(gm::fill_event::tile_read, t);
        expected.emplace_back(gm::fill_event::levels_solved, -1);
        for (int t : mine) expected.emplace_back(gm::fill_event::tile_written, t);
        CHECK(events == expected);
        CHECK(written == mine);
        // recompute: read in round 0, at most once a round after, and once more to write
        CHECK(reads >= 2 * static_cast<int>(mine.size()));
        CHECK(reads <= static_cast<int>(mine.size()) * (stats.rounds + 1));
    }
    SECTION("a non-finite cell names its rank, tile and map cell; nothing is written") {
        grid<float> bad = map;
        bad.at(13, 6) = std::numeric_limits<float>::infinity();  // tile (2, 1) = tile 6
        const gm::tile_reader<float> read_bad = [&](const gm::tile_rect& r, grid_view<float> cells) {
            for (std::ptrdiff_t y = 0; y < r.height; ++y)
                for (std::ptrdiff_t x = 0; x < r.width; ++x) cells.at(x, y) = bad.at(r.x + x, r.y + y);
        };
        std::string message;
        int rank = -2, tile = -2;
        try {
            gm::fill_depressions_epsilon_tiled(MPI_COMM_WORLD, layout, read_bad, write, options);
        } catch (const gm::job_error& e) {
            message = e.what();
            rank = e.rank();
            tile = e.tile();
        }
        INFO(message);
        CHECK(rank == gm::tile_owner(6, world_size()));
        CHECK(tile == 6);
        CHECK(message.find("(13, 6)") != std::string::npos);
        CHECK(written.empty());
    }
    SECTION("a tile larger than the cap") {
        options.retention = gm::tile_retention::recompute;
        options.memory_cap = static_cast<std::size_t>(gm::tiled_epsilon_fill_tile_bytes<float>(6, 5)) - 1;
        std::string message;
        try {
            gm::fill_depressions_epsilon_tiled(MPI_COMM_WORLD, layout, read, write, options);
        } catch (const std::invalid_argument& e) {
            message = e.what();
        }
        CHECK(message.find("memory_cap") != std::string::npos);
        CHECK(message.find("smaller tiles") != std::string::npos);
        options.memory_cap += 100000;  // the tile and every tile's rings fit
        CHECK_NOTHROW(gm::fill_depressions_epsilon_tiled(MPI_COMM_WORLD, layout, read, write, options));
    }
}

TEST_CASE("epsilon tile files: outputs appear only when the whole job succeeds", "[mpi][epsilon]") {
    tile_file_job job(terrain::holes_and_flats, 12);
    const grid<float> expected = job.filled([](grid<float>& g, const gorge::fill_options<float>& o) {
        REQUIRE(gorge::fill_depressions_epsilon(g, o).raised_cells > 0);
    });
    const gm::tile_layout& layout = job.layout;
    const shared_dir &in_dir = job.in_dir, &out_dir = job.out_dir;
    gm::tiled_fill_options<float>& options = job.options;
    const std::string& bad_path = job.bad_path;
    const int owner = job.owner;
    const int bad_tile = tile_file_job::bad_tile;
    auto run_failing = [&](const std::string& expect_in_message) {
        check_fails_on_tile_6(
            [&] { gm::fill_depressions_epsilon_tile_files(MPI_COMM_WORLD, layout, in_dir.path, out_dir.path, options); },
            out_dir.path, owner, bad_path, expect_in_message);
        CHECK(!std::filesystem::exists(gm::staging_dir(out_dir.path)));  // staged files and directory removed
    };
    SECTION("missing tile") {
        MPI_Barrier(MPI_COMM_WORLD);
        if (world_rank() == 0) std::filesystem::remove(bad_path);
        MPI_Barrier(MPI_COMM_WORLD);
        run_failing("cannot open");
    }
    SECTION("corrupt tile") {
        MPI_Barrier(MPI_COMM_WORLD);
        if (world_rank() == 0) std::filesystem::resize_file(bad_path, 100);
        MPI_Barrier(MPI_COMM_WORLD);
        run_failing("truncated");
    }
    SECTION("a tile corrupted after round 0 (recompute reads it again)") {
        // The tile reads fine in round 0; the job fails on a later read, after other tiles'
        // outputs may have been staged: still nothing reaches the output directory.
        options.retention = gm::tile_retention::recompute;
        int reads_of_bad = 0;
        options.progress = [&](gm::fill_event e, int t) {
            if (e == gm::fill_event::tile_read && t == bad_tile && ++reads_of_bad == 1)
                std::filesystem::resize_file(bad_path, 100);
        };
        run_failing("truncated");
    }
    SECTION("success: every tile replaced, equal to fill_depressions_epsilon") {
        const gm::tiled_fill_stats stats =
            gm::fill_depressions_epsilon_tile_files(MPI_COMM_WORLD, layout, in_dir.path, out_dir.path, options);
        CHECK(sum_all(stats.tiles) == layout.tile_count());
        CHECK(stats.rounds >= 2);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(output_mismatches(layout, out_dir.path, expected) == 0);
        CHECK(snapshot(out_dir.path).size() == static_cast<std::size_t>(layout.tile_count()) + 1);  // the tiles and notes.txt
        CHECK(!std::filesystem::exists(gm::staging_dir(out_dir.path)));
    }
}
