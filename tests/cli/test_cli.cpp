// The gorge command line, run end to end as an installed program (GORGE_CLI_PATH): `gorge filter`,
// `gorge fill`, `gorge thermal` and `gorge droplets` equal the library calls on the same grid bit
// for bit, presets round-trip, and every bad file and bad option exits with code 2 and a message
// naming it, writing nothing.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <gorge/biome/biome.hpp>
#include <gorge/drainage/depression_fill.hpp>
#include <gorge/drainage/flow.hpp>
#include <gorge/erosion/droplet.hpp>
#include <gorge/erosion/thermal.hpp>
#include <gorge/filter/demo_pipeline.hpp>
#include <gorge/grid/grid_field.hpp>
#include <gorge/io/heightmap_io.hpp>
#include <gorge/noise/island.hpp>
#include <gorge/simd/tile.hpp>

#include "support/catch.hpp"
#include "support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace io = gorge::io;

/// A scratch directory named after this test.
struct scratch_dir : gorge_test::scratch_dir {
    scratch_dir() : gorge_test::scratch_dir("gorge_test_cli_") {}
};

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct run_result {
    int code = -1;
    std::string out, err;
};

/// Runs the installed gorge with `args` (already quoted as needed) from the scratch directory.
run_result run_gorge(const scratch_dir& dir, const std::string& args) {
    const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
    const std::string command = "cd '" + dir.path.string() + "' && '" + GORGE_CLI_PATH + "' " + args + " >'" + out +
                                "' 2>'" + err + "'";
    const int status = std::system(command.c_str());
    run_result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_text(out);
    r.err = read_text(err);
    fs::remove(out);
    fs::remove(err);
    return r;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// A smooth test terrain of w x h nodes, heights in [0, 1], written as a 16-bit PNG.
void write_terrain_png(const std::string& path, std::ptrdiff_t w, std::ptrdiff_t h) {
    gorge::grid<float> g(w, h);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x)
            g(x, y) = 0.5f + 0.3f * std::sin(0.11f * static_cast<float>(x)) * std::cos(0.07f * static_cast<float>(y)) +
                      0.1f * std::sin(0.31f * static_cast<float>(x + 2 * y));
    io::write_png16(path, g.view(), io::height_mapping::absolute(0.0f, 1.0f));
}

/// The library's filter (hashed with Hash) over every node of a heightmap file, placed as `gorge
/// filter` documents: world size (1, (h - 1) / (w - 1)) unless given, heights code / 65535.
template <class Hash = gorge::pcg3d_hash>
gorge::grid<float> library_filter(const std::string& path, const gorge::tile_settings<float>& settings,
                                  glm::vec2 world = glm::vec2(0.0f)) {
    const io::heightmap map = io::read_heightmap(path);
    const std::ptrdiff_t w = map.heights.width(), h = map.heights.height();
    if (world == glm::vec2(0.0f)) world = glm::vec2(1.0f, static_cast<float>(h - 1) / static_cast<float>(w - 1));
    const auto placement = gorge::grid_placement<float>::spanning(world, w, h, glm::vec2(0.0f), 1.0f / 65535.0f);
    const gorge::grid_field<float> field(map.heights.view(), placement);
    gorge::tile_sampling<float> sampling;
    sampling.origin = placement.origin;
    sampling.spacing = placement.cell_size;
    gorge::grid<float> out(w, h);
    gorge::tile_buffers<float> buffers;
    buffers.height = out.view();
    gorge::erode_tile<Hash>(field, sampling, 0, 0, buffers, settings);
    return out;
}

bool same_bits(const gorge::grid<float>& a, const gorge::grid<float>& b) {
    return a.width() == b.width() && a.height() == b.height() &&
           std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// A command line that must be refused, and what its message must name.
struct refused_case {
    std::string args;
    std::string named;
};

/// Runs every case: exit code 2, the culprit named on stderr, the scratch directory left as
/// `before` (nothing written), and `also` (when given) still true.
void check_refused(const scratch_dir& dir, const std::vector<refused_case>& cases, const std::vector<std::string>& before,
                   const std::function<bool()>& also = {}) {
    for (const refused_case& c : cases) {
        INFO("gorge " << c.args);
        const run_result r = run_gorge(dir, c.args);
        CHECK(r.code == 2);
        INFO("stderr: " << r.err);
        CHECK(contains(r.err, c.named));
        CHECK(dir.entries() == before);
        if (also) CHECK(also());
    }
}

}  // namespace

TEST_CASE("gorge --version and --help", "[cli]") {
    scratch_dir dir;
    const run_result v = run_gorge(dir, "--version");
    CHECK(v.code == 0);
    CHECK(contains(v.out, std::string("gorge ") + GORGE_CLI_VERSION));
    const run_result h = run_gorge(dir, "filter --help");
    CHECK(h.code == 0);
    CHECK(contains(h.out, "--octaves"));
    CHECK(contains(h.out, "--preset"));
    const run_result none = run_gorge(dir, "");
    CHECK(none.code == 2);
}

TEST_CASE("gorge filter equals the library call bit for bit", "[cli]") {
    scratch_dir dir;
    // Not square and not a multiple of the band height: the default world size and the bands
    // of rows are both exercised.
    write_terrain_png(dir.file("in.png"), 97, 301);

    SECTION("default parameters, float output, several threads") {
        const run_result r = run_gorge(dir, "filter in.png out.exr --threads 3");
        REQUIRE(r.code == 0);
        const gorge::grid<float> expected = library_filter(dir.file("in.png"), gorge::tile_settings<float>{});
        CHECK(same_bits(io::read_heightmap(dir.file("out.exr")).heights, expected));
    }
    SECTION("every kind of option, 16-bit PNG output with an absolute range") {
        const run_result r = run_gorge(dir,
                                   "filter in.png out.png --world-size 2,5 --scale 0.2 --strength 0.3 --gully-weight 0.7 "
                                   "--detail 1.2 --rounding 0.2,0.05,0.1,1.5 --onset 1,1.5,2.5,1.25 --assumed-slope "
                                   "0.6,0.8 --octaves 4 --lacunarity 2.1 --gain 0.45 --cell-scale 0.8 --normalization "
                                   "0.4 --seed 77 --output-offset -0.1,0 --valley-altitude 0.2 --peak-altitude 0.9 "
                                   "--range -1,2");
        REQUIRE(r.code == 0);
        gorge::tile_settings<float> s;
        s.erosion.scale = 0.2f;
        s.erosion.strength = 0.3f;
        s.erosion.gully_weight = 0.7f;
        s.erosion.detail = 1.2f;
        s.erosion.rounding = glm::vec4(0.2f, 0.05f, 0.1f, 1.5f);
        s.erosion.onset = glm::vec4(1.0f, 1.5f, 2.5f, 1.25f);
        s.erosion.assumed_slope = glm::vec2(0.6f, 0.8f);
        s.erosion.octaves = 4;
        s.erosion.lacunarity = 2.1f;
        s.erosion.gain = 0.45f;
        s.erosion.cell_scale = 0.8f;
        s.erosion.normalization = 0.4f;
        s.seed = 77;
        s.height_offset = glm::vec2(-0.1f, 0.0f);
        s.valley_altitude = 0.2f;
        s.peak_altitude = 0.9f;
        const gorge::grid<float> expected = library_filter(dir.file("in.png"), s, glm::vec2(2.0f, 5.0f));
        io::write_png16(dir.file("expected.png"), expected.view(), io::height_mapping::absolute(-1.0f, 2.0f));
        const io::heightmap got = io::read_heightmap(dir.file("out.png"));
        const io::heightmap want = io::read_heightmap(dir.file("expected.png"));
        CHECK(same_bits(got.heights, want.heights));
        CHECK(contains(r.out, "out.png: codes 0..65535 = heights -1 .. 2"));
        // The filter changed the terrain (the comparison is not between two copies of the input).
        CHECK_FALSE(same_bits(got.heights, io::read_heightmap(dir.file("in.png")).heights));
    }
}

TEST_CASE("gorge filter presets round-trip", "[cli]") {
    scratch_dir dir;
    write_terrain_png(dir.file("in.png"), 64, 48);
    const run_result a =
        run_gorge(dir, "filter in.png a.exr --octaves 3 --rounding 0.3,0,0.2,2 --seed 5 --save-preset p.json");
    REQUIRE(a.code == 0);
    REQUIRE(fs::exists(dir.file("p.json")));
    CHECK(contains(read_text(dir.file("p.json")), "\"octaves\": 3"));
    const run_result b = run_gorge(dir, "filter in.png b.exr --preset p.json");
    REQUIRE(b.code == 0);
    CHECK(read_text(dir.file("a.exr")) == read_text(dir.file("b.exr")));
    const run_result d = run_gorge(dir, "filter in.png d.exr");
    REQUIRE(d.code == 0);
    CHECK(read_text(dir.file("a.exr")) != read_text(dir.file("d.exr")));

    // The command line wins over the preset.
    const run_result c = run_gorge(dir, "filter in.png c.exr --preset p.json --octaves 99");
    CHECK(c.code == 2);
    CHECK(contains(c.err, "--octaves"));
    CHECK_FALSE(fs::exists(dir.file("c.exr")));

    std::ofstream(dir.file("unknown.json")) << "{\"octave\": 3}";
    const run_result u = run_gorge(dir, "filter in.png u.exr --preset unknown.json");
    CHECK(u.code == 2);
    CHECK(contains(u.err, "unknown.json"));
    CHECK(contains(u.err, "unknown key 'octave'"));

    std::ofstream(dir.file("broken.json")) << "{\"octaves\": ";
    const run_result br = run_gorge(dir, "filter in.png u.exr --preset broken.json");
    CHECK(br.code == 2);
    CHECK(contains(br.err, "broken.json"));

    std::ofstream(dir.file("wrongtype.json")) << "{\"rounding\": 3}";
    const run_result wt = run_gorge(dir, "filter in.png u.exr --preset wrongtype.json");
    CHECK(wt.code == 2);
    CHECK(contains(wt.err, "'rounding'"));

    const run_result missing = run_gorge(dir, "filter in.png u.exr --preset missing.json");
    CHECK(missing.code == 2);
    CHECK(contains(missing.err, "missing.json"));
    CHECK_FALSE(fs::exists(dir.file("u.exr")));
}

TEST_CASE("gorge filter: bad files and options exit with 2, name the culprit and write nothing", "[cli]") {
    scratch_dir dir;
    write_terrain_png(dir.file("in.png"), 40, 30);
    std::ofstream(dir.file("keep.png")) << "previous content";
    {
        std::ofstream truncated(dir.file("truncated.png"), std::ios::binary);
        const std::string png = read_text(dir.file("in.png"));
        truncated << png.substr(0, png.size() / 2);
    }
    std::ofstream(dir.file("text.png")) << "not a png";
    const std::vector<std::string> before = dir.entries();

    check_refused(dir, {
        {"filter missing.png keep.png", "missing.png"},
        {"filter truncated.png keep.png", "truncated.png"},
        {"filter text.png keep.png", "text.png"},
        {"filter in.png keep.tga", "keep.tga"},
        {"filter in.png keep.png --ridge ridge.bmp", "ridge.bmp"},
        {"filter in.png keep.png --octaves 99", "--octaves"},
        {"filter in.png keep.png --octaves many", "--octaves"},
        {"filter in.png keep.png --scale -1", "--scale"},
        {"filter in.png keep.png --detail 0", "--detail"},
        {"filter in.png keep.png --normalization 2", "--normalization"},
        {"filter in.png keep.png --assumed-slope 0.7,3", "--assumed-slope"},
        {"filter in.png keep.png --onset 1,2,3", "--onset"},
        {"filter in.png keep.png --threads 5000", "--threads"},
        {"filter in.png keep.png --world-size 0,1", "--world-size"},
        {"filter in.png keep.png --range 2,1", "--range"},
        {"filter in.png keep.png --valley-altitude 1 --peak-altitude 1", "--valley-altitude"},
        {"filter in.png keep.png --no-such-option", "--no-such-option"},
        {"filter in.png", "OUT"},
        {"filter in.png keep.png --ridge no_such_dir/ridge.png", "no_such_dir/ridge.png"},
        {"filter in.png keep.png --save-preset no_such_dir/p.json", "no_such_dir/p.json"},
        {"no-such-subcommand", "no-such-subcommand"},
    }, before, [&] { return read_text(dir.file("keep.png")) == "previous content"; });
}

namespace {

/// The heights of a heightmap file in world units as the grid subcommands read them.
gorge::grid<float> world_heights(const std::string& path, float scale, float offset = 0.0f) {
    const io::heightmap map = io::read_heightmap(path);
    gorge::grid<float> g(map.heights.width(), map.heights.height());
    for (std::size_t i = 0; i < g.size(); ++i) g.data()[i] = offset + scale * map.heights.data()[i];
    return g;
}

}  // namespace

TEST_CASE("gorge fill, thermal and droplets equal the library calls bit for bit", "[cli]") {
    scratch_dir dir;
    write_terrain_png(dir.file("in.png"), 90, 70);
    const float scale = 1.0f / 65535.0f;
    const gorge::grid<float> input = world_heights(dir.file("in.png"), scale);

    SECTION("fill") {
        for (const char* method : {"epsilon", "plain"}) {
            INFO(method);
            const run_result r = run_gorge(dir, std::string("filter in.png f.exr --method ") + method);
            CHECK(r.code == 2);  // --method is not a filter option
            const run_result f = run_gorge(dir, std::string("fill in.png f.exr --method ") + method);
            REQUIRE(f.code == 0);
            CHECK(contains(f.out, "raised cells: "));
            gorge::grid<float> expected = input;
            if (std::string(method) == "epsilon")
                gorge::fill_depressions_epsilon(expected);
            else
                gorge::fill_depressions(expected);
            CHECK_FALSE(same_bits(expected, input));  // the terrain has pits
            CHECK(same_bits(io::read_heightmap(dir.file("f.exr")).heights, expected));
        }
        // A 16-bit output keeps the input's codes (its own range) by default.
        const run_result p = run_gorge(dir, "fill in.png f.png --method plain --threads 2");
        REQUIRE(p.code == 0);
        CHECK(contains(p.out, "f.png: codes 0..65535 = heights 0 .. 1"));
        gorge::grid<float> plain = input;
        gorge::fill_depressions(plain);
        io::write_png16(dir.file("want.png"), plain.view(), io::height_mapping::absolute(0.0f, 1.0f));
        CHECK(same_bits(io::read_heightmap(dir.file("f.png")).heights, io::read_heightmap(dir.file("want.png")).heights));
    }
    SECTION("thermal, any thread count") {
        const run_result r =
            run_gorge(dir, "thermal in.png t.exr --cell-size 0.002 --talus-slope 0.5 --rate 0.8 --passes 7 --threads 3 "
                           "--progress");
        REQUIRE(r.code == 0);
        CHECK(contains(r.err, "100%"));  // --progress draws the bar even when stderr is a file
        gorge::thermal_params<float> params;
        params.cell_size = 0.002f;
        params.talus_slope = 0.5f;
        params.rate = 0.8f;
        params.passes = 7;
        gorge::grid<float> expected = input;
        gorge::erode_thermal(expected, params);
        CHECK_FALSE(same_bits(expected, input));
        CHECK(same_bits(io::read_heightmap(dir.file("t.exr")).heights, expected));
    }
    SECTION("droplets: a model, serial and tiled schedules") {
        const run_result r = run_gorge(dir, "droplets in.png d.exr --model steep-mountains --inertia 0.4 --droplets 3000 "
                                            "--seed 9");
        REQUIRE(r.code == 0);
        gorge::droplet_params<float> params = gorge::droplet_params<float>::steep_mountains();
        params.inertia = 0.4f;
        gorge::droplet_options options;
        options.seed = 9;
        gorge::grid<float> expected = input;
        gorge::erode_droplets(expected, 3000, params, options);
        CHECK_FALSE(same_bits(expected, input));
        CHECK(same_bits(io::read_heightmap(dir.file("d.exr")).heights, expected));

        const run_result t =
            run_gorge(dir, "droplets in.png t.exr --schedule tiled --threads 2 --rounds 3 --edge deposit --save-preset p.json");
        REQUIRE(t.code == 0);
        options = gorge::droplet_options{};
        options.schedule = gorge::droplet_schedule::tiled;
        options.rounds = 3;
        options.edge = gorge::droplet_edge::deposit;
        expected = input;
        gorge::erode_droplets(expected, static_cast<std::uint64_t>(expected.size()), gorge::droplet_params<float>{}, options);
        CHECK(same_bits(io::read_heightmap(dir.file("t.exr")).heights, expected));
        // Its preset reproduces it (threads differ: same result for any).
        const run_result again = run_gorge(dir, "droplets in.png t2.exr --preset p.json --threads 1");
        REQUIRE(again.code == 0);
        CHECK(read_text(dir.file("t.exr")) == read_text(dir.file("t2.exr")));
    }
}

TEST_CASE("gorge fill, thermal and droplets: bad options exit with 2 and write nothing", "[cli]") {
    scratch_dir dir;
    write_terrain_png(dir.file("in.png"), 30, 20);
    check_refused(dir, {
        {"fill missing.png out.png", "missing.png"},
        {"fill in.png out.bmp", "out.bmp"},
        {"fill in.png out.png --method lakes", "--method"},
        {"fill in.png out.png --range 1,1", "--range"},
        {"fill in.png out.png --method plain --threads 2000", "--threads"},
        {"thermal in.png out.png --rate 0", "--rate"},
        {"thermal in.png out.png --passes -1", "--passes"},
        {"thermal in.png out.png --talus-slope -1", "--talus-slope"},
        {"thermal in.png out.png --cell-size 0", "--cell-size"},
        {"thermal in.png out.png --threads 2000", "--threads"},
        {"droplets in.png out.png --brush-radius 100", "--brush-radius"},
        {"droplets in.png out.png --lifetime 0", "--lifetime"},
        {"droplets in.png out.png --model gentle", "--model"},
        {"droplets in.png out.png --schedule random", "--schedule"},
        {"droplets in.png out.png --edge wrap", "--edge"},
        {"droplets in.png out.png --schedule tiled --rounds 0", "--rounds"},
        {"droplets in.png out.png --interleave maybe", "--interleave"},
    }, dir.entries());
}

TEST_CASE("gorge fill, rivers, thermal and droplets: a map the library refuses exits with 2, naming the file and cell", "[cli]") {
    scratch_dir dir;
    // A pit at (7, 4) walled in by the largest float: no epsilon step above the walls is finite
    // (std::overflow_error), and the walls are beyond the thermal and droplet height limits
    // (std::invalid_argument, naming the first such cell, (6, 3)).
    gorge::grid<float> g(30, 20);
    for (std::ptrdiff_t y = 0; y < g.height(); ++y)
        for (std::ptrdiff_t x = 0; x < g.width(); ++x) g(x, y) = 0.01f * static_cast<float>(x + 2 * y);
    for (std::ptrdiff_t y = 3; y <= 5; ++y)
        for (std::ptrdiff_t x = 6; x <= 8; ++x) g(x, y) = std::numeric_limits<float>::max();
    g(7, 4) = 0.0f;
    io::write_exr(dir.file("walled.exr"), g.view());
    check_refused(dir, {
        {"fill walled.exr out.exr", "walled.exr: gorge::fill_depressions_epsilon: raising cell (7, 4)"},
        {"rivers walled.exr mask.png", "walled.exr: gorge::fill_depressions_epsilon: raising cell (7, 4)"},
        {"thermal walled.exr out.exr", "walled.exr: gorge::erode_thermal: height at cell (6, 3)"},
        {"droplets walled.exr out.exr", "walled.exr: gorge::droplet_eroder: height at cell (6, 3)"},
    }, dir.entries());
    // The plain fill needs no step above the walls: it fills the pit to them.
    const run_result plain = run_gorge(dir, "fill walled.exr plain.exr --method plain");
    REQUIRE(plain.code == 0);
    CHECK(io::read_exr(dir.file("plain.exr")).heights(7, 4) == std::numeric_limits<float>::max());
}

TEST_CASE("gorge generate: neighbouring tiles share their edges bit for bit", "[cli]") {
    scratch_dir dir;
    for (const char* recipe : {"demo", "island"}) {
        INFO(recipe);
        const std::string common = std::string(" --recipe ") + recipe + " --size 65 --noise-seed 3 --seed 4";
        REQUIRE(run_gorge(dir, "generate t00.exr --tile-x 0 --tile-y 0" + common).code == 0);
        REQUIRE(run_gorge(dir, "generate t10.exr --tile-x 1 --tile-y 0 --threads 2" + common).code == 0);
        REQUIRE(run_gorge(dir, "generate t01.exr --tile-x 0 --tile-y 1 --threads 3" + common).code == 0);
        const std::string big_args = std::string("generate big.exr --recipe ") + recipe + " --size 129 --noise-seed 3 --seed 4";
        REQUIRE(run_gorge(dir, big_args).code == 0);
        const gorge::grid<float> t00 = io::read_heightmap(dir.file("t00.exr")).heights;
        const gorge::grid<float> t10 = io::read_heightmap(dir.file("t10.exr")).heights;
        const gorge::grid<float> t01 = io::read_heightmap(dir.file("t01.exr")).heights;
        const gorge::grid<float> big = io::read_heightmap(dir.file("big.exr")).heights;
        // Shared edges, and every tile equal to its part of one tile twice as large.
        bool edges = true, parts = true;
        for (std::ptrdiff_t i = 0; i < 65; ++i) {
            edges &= std::memcmp(&t00(64, i), &t10(0, i), sizeof(float)) == 0;
            edges &= std::memcmp(&t00(i, 64), &t01(i, 0), sizeof(float)) == 0;
            for (std::ptrdiff_t j = 0; j < 65; ++j) {
                parts &= std::memcmp(&t00(i, j), &big(i, j), sizeof(float)) == 0;
                parts &= std::memcmp(&t10(i, j), &big(64 + i, j), sizeof(float)) == 0;
                parts &= std::memcmp(&t01(i, j), &big(i, 64 + j), sizeof(float)) == 0;
            }
        }
        CHECK(edges);
        CHECK(parts);
        CHECK(t00(10, 10) != t10(10, 10));  // the tiles are different parts of the terrain
    }
    // The demo recipe is the published demo pipeline (scalar path: equal to batch rounding).
    const gorge::grid<float> t10 = io::read_heightmap(dir.file("t10.exr")).heights;
    REQUIRE(run_gorge(dir, "generate demo.exr --size 65 --tile-x 1").code == 0);
    const gorge::grid<float> demo = io::read_heightmap(dir.file("demo.exr")).heights;
    double worst = 0;
    for (std::ptrdiff_t j = 0; j < 65; j += 8)
        for (std::ptrdiff_t i = 0; i < 65; i += 8) {
            const glm::vec2 p(static_cast<float>(64 + i) / 1024.0f, static_cast<float>(j) / 1024.0f);
            worst = std::max(worst, std::fabs(double(demo(i, j)) - double(gorge::demo_pipeline(p).height)));
        }
    CHECK(worst <= 2e-6);
    CHECK(t10(0, 0) != demo(0, 0));  // island and demo differ
}

TEST_CASE("gorge generate: bad options exit with 2 and write nothing", "[cli]") {
    scratch_dir dir;
    check_refused(dir, {
        {"generate out.png --size 1", "--size"},
        {"generate out.png --size 20000", "--size"},
        {"generate out.png --tile-x 9223372036854775807", "--tile-x"},
        {"generate out.png --tile-y -9223372036854775807", "--tile-y"},
        {"generate out.png --recipe volcano", "--recipe"},
        {"generate out.png --spacing -1", "--spacing"},
        {"generate out.png --octaves 40", "--octaves"},
        {"generate out.tga", "out.tga"},
        {"generate out.png --range 1,0", "--range"},
    }, std::vector<std::string>());
}

TEST_CASE("gorge rivers: mask, accumulation and directions equal the library's", "[cli]") {
    scratch_dir dir;
    write_terrain_png(dir.file("in.png"), 80, 60);
    const run_result r =
        run_gorge(dir, "rivers in.png mask.png --accumulation acc.exr --directions dirs.png --threshold 40");
    REQUIRE(r.code == 0);
    gorge::grid<float> h = io::read_heightmap(dir.file("in.png")).heights;
    gorge::fill_depressions_epsilon(h);
    const gorge::grid<std::uint8_t> dirs = gorge::flow_directions(h);
    const gorge::grid<std::uint32_t> acc = gorge::flow_accumulation(dirs);
    const gorge::grid<std::uint8_t> mask = gorge::river_mask(acc, 40u);
    const io::heightmap got_mask = io::read_heightmap(dir.file("mask.png"));
    const io::heightmap got_dirs = io::read_heightmap(dir.file("dirs.png"));
    const io::heightmap got_acc = io::read_heightmap(dir.file("acc.exr"));
    bool same = got_mask.max_code == 255 && got_dirs.max_code == 255;
    std::size_t rivers = 0;
    for (std::ptrdiff_t y = 0; y < 60; ++y)
        for (std::ptrdiff_t x = 0; x < 80; ++x) {
            same &= got_mask.heights(x, y) == (mask(x, y) ? 255.0f : 0.0f);
            same &= got_dirs.heights(x, y) == static_cast<float>(dirs(x, y));
            same &= got_acc.heights(x, y) == static_cast<float>(acc(x, y));
            rivers += mask(x, y);
        }
    CHECK(same);
    CHECK(rivers > 0);
    CHECK(rivers < 80 * 60 / 2);
    CHECK(contains(r.out, "river cells: " + std::to_string(rivers) + " of 4800 (threshold 40 cells)"));

    check_refused(dir, {
        {"rivers in.png m.exr", "m.exr"},
        {"rivers in.png m.tif", "m.tif"},
        {"rivers in.png m.png --directions d.exr", "d.exr"},
        {"rivers in.png m.png --rule uphill", "--rule"},
        {"rivers missing.png m.png", "missing.png"},
        {"rivers in.png m.png --threshold -3", "--threshold"},
    }, dir.entries());
}

TEST_CASE("gorge biomes: the library's biome map as an RGBA PNG", "[cli]") {
    scratch_dir dir;
    write_terrain_png(dir.file("in.png"), 50, 40);
    gorge::grid<float> wet(50, 40);
    for (std::ptrdiff_t y = 0; y < 40; ++y)
        for (std::ptrdiff_t x = 0; x < 50; ++x) wet(x, y) = static_cast<float>(x) / 49.0f;
    io::write_png16(dir.file("wet.png"), wet.view(), io::height_mapping::absolute(0.0f, 1.0f));
    const run_result r = run_gorge(dir, "biomes in.png b.png --moisture wet.png --cell-size 0.05 --sea-level 0.2 "
                                        "--beach-top 0.22");
    REQUIRE(r.code == 0);
    const gorge::grid<float> elevation = world_heights(dir.file("in.png"), 1.0f / 65535.0f);
    const gorge::grid<float> moisture = world_heights(dir.file("wet.png"), 1.0f / 65535.0f);
    gorge::biome_params<float> params;
    params.sea_level = 0.2f;
    params.beach_top = 0.22f;
    const gorge::grid<gorge::biome> want = gorge::biome_map(elevation, moisture, 0.05f, params);
    io::write_biome_png(dir.file("want.png"), want.view());
    const gorge::grid<io::rgba8> got = io::read_rgba_png(dir.file("b.png"));
    const gorge::grid<io::rgba8> expected = io::read_rgba_png(dir.file("want.png"));
    REQUIRE(got.width() == 50);
    REQUIRE(got.height() == 40);
    CHECK(std::equal(got.begin(), got.end(), expected.begin()));
    bool several = false;
    for (const gorge::biome b : want) several |= b != want(0, 0);
    CHECK(several);
    CHECK(contains(r.out, "ocean: "));

    const run_result bad_size = run_gorge(dir, "biomes in.png c.png --moisture in_small.png");
    CHECK(bad_size.code == 2);
    CHECK(contains(bad_size.err, "in_small.png"));
    const run_result bad_order = run_gorge(dir, "biomes in.png c.png --sea-level 0.5 --beach-top 0.2");
    CHECK(bad_order.code == 2);
    CHECK(contains(bad_order.err, "elevation thresholds"));
    const run_result bad_ext = run_gorge(dir, "biomes in.png c.exr");
    CHECK(bad_ext.code == 2);
    CHECK(contains(bad_ext.err, "c.exr"));
    CHECK_FALSE(fs::exists(dir.file("c.png")));
}

namespace {

/// The preview `png` (8-bit, as written by --preview) holds the heights of `result` normalised:
/// code = round((h - min) * 255 / (max - min)), and stdout reports that range.
void check_preview(const std::string& png, const std::string& shown, const gorge::grid<float>& result,
                   const std::string& out) {
    const io::heightmap preview = io::read_png(png);
    REQUIRE(preview.max_code == 255u);
    REQUIRE(preview.heights.width() == result.width());
    REQUIRE(preview.heights.height() == result.height());
    const auto range = std::minmax_element(result.begin(), result.end());
    const double lo = *range.first, hi = *range.second;
    REQUIRE(hi > lo);
    bool same = true;
    std::size_t distinct_ends = 0;
    for (std::size_t i = 0; i < result.size(); ++i) {
        const double code = std::floor((double(result.data()[i]) - lo) * (255.0 / (hi - lo)) + 0.5);
        same &= preview.heights.data()[i] == static_cast<float>(code);
        distinct_ends += preview.heights.data()[i] == 0.0f || preview.heights.data()[i] == 255.0f ? 1u : 0u;
    }
    CHECK(same);
    CHECK(distinct_ends >= 2u);  // both ends of the range are used
    std::ostringstream line;
    line.precision(9);
    line << shown << ": 8-bit preview, codes 0..255 = heights " << float(lo) << " .. " << float(hi);
    INFO("stdout: " << out);
    CHECK(contains(out, line.str()));
}

}  // namespace

TEST_CASE("--preview writes a normalised 8-bit PNG of the result, committed with the other outputs", "[cli]") {
    scratch_dir dir;
    write_terrain_png(dir.file("in.png"), 70, 50);
    const char* commands[] = {
        "filter in.png out.exr --octaves 3",
        "generate out.exr --size 65",
        "fill in.png out.exr --method plain",
        "thermal in.png out.exr --passes 3 --cell-size 0.002",
        "droplets in.png out.exr --droplets 500",
    };
    for (const char* command : commands) {
        INFO("gorge " << command);
        const run_result r = run_gorge(dir, std::string(command) + " --preview preview.png");
        REQUIRE(r.code == 0);
        check_preview(dir.file("preview.png"), "preview.png", io::read_heightmap(dir.file("out.exr")).heights, r.out);
        fs::remove(dir.file("preview.png"));
        fs::remove(dir.file("out.exr"));

        // A preview that cannot be written: nothing is written at all (exit 2, named); one that is
        // not a PNG is refused before any work.
        check_refused(dir,
                      {{std::string(command) + " --preview no_such_dir/p.png", "no_such_dir/p.png"},
                       {std::string(command) + " --preview p.exr", "--preview"}},
                      dir.entries());
    }
}

TEST_CASE("--progress draws the bar of fill, rivers and biomes on stderr", "[cli]") {
    scratch_dir dir;
    // 300 x 300 = 90000 cells: more than one report interval of the fill.
    write_terrain_png(dir.file("in.png"), 300, 300);
    const run_result f = run_gorge(dir, "fill in.png f.exr --progress");
    REQUIRE(f.code == 0);
    CHECK(contains(f.err, "fill ["));
    CHECK(contains(f.err, "  0%"));
    CHECK(contains(f.err, "100%"));
    // A report between the ends, from the fill's own callback: after fill_progress_interval of the
    // 90000 cells, 72.8 % (29 of the 40 marks, shown as 72 %).
    CHECK(contains(f.err, " 72%"));
    const run_result quiet = run_gorge(dir, "fill in.png g.exr");
    REQUIRE(quiet.code == 0);
    CHECK(quiet.err.empty());  // no bar when stderr is not a terminal
    const run_result r = run_gorge(dir, "rivers in.png m.png --progress");
    REQUIRE(r.code == 0);
    CHECK(contains(r.err, "rivers ["));
    CHECK(contains(r.err, "100%"));
    CHECK(run_gorge(dir, "rivers in.png m2.png").err.empty());
    const run_result b = run_gorge(dir, "biomes in.png b.png --progress");
    REQUIRE(b.code == 0);
    CHECK(contains(b.err, "biomes ["));
    CHECK(contains(b.err, "100%"));
    CHECK(run_gorge(dir, "biomes in.png b2.png").err.empty());
}

TEST_CASE("--save-preset stores the output mapping; the preset alone reproduces the files byte for byte", "[cli]") {
    scratch_dir dir;
    write_terrain_png(dir.file("in.png"), 60, 45);
    struct preset_case {
        std::string first, again;  // a run with options that change the file, and the rerun from its preset
        std::vector<std::string> stored;  // what the preset must hold
    };
    const preset_case cases[] = {
        {"filter in.png a.png --range -1,2 --clamp --octaves 3 --ridge ra.png --save-preset p.json",
         "filter in.png b.png --ridge rb.png --preset p.json",
         {"\"range\": [\n    -1.0,\n    2.0\n  ]", "\"clamp\": true", "\"normalise\": false", "\"octaves\": 3"}},
        {"filter in.png a.png --normalise --normalization 0.2 --save-preset p.json", "filter in.png b.png --preset p.json",
         {"\"range\": []", "\"normalise\": true", "\"normalization\": 0.2"}},
        {"fill in.png a.png --normalise --method plain --save-preset p.json", "fill in.png b.png --preset p.json",
         {"\"normalise\": true", "\"method\": \"plain\""}},
        {"fill in.png a.r16 --range 0.2,0.6 --clamp --save-preset p.json", "fill in.png b.r16 --preset p.json",
         {"\"clamp\": true", "\"range\": [\n    0.2"}},
        {"generate a.png --size 33 --normalise --recipe island --save-preset p.json", "generate b.png --preset p.json",
         {"\"normalise\": true", "\"recipe\": \"island\""}},
        {"thermal in.png a.png --range -1,3 --passes 2 --save-preset p.json", "thermal in.png b.png --preset p.json",
         {"\"range\": [\n    -1.0,\n    3.0\n  ]", "\"passes\": 2"}},
    };
    for (const preset_case& c : cases) {
        INFO("gorge " << c.first);
        const run_result first = run_gorge(dir, c.first);
        REQUIRE(first.code == 0);
        const std::string preset = read_text(dir.file("p.json"));
        INFO("preset: " << preset);
        for (const std::string& part : c.stored) CHECK(contains(preset, part));
        const run_result again = run_gorge(dir, c.again);
        REQUIRE(again.code == 0);
        const bool r16 = fs::exists(dir.file("a.r16"));
        const std::string a = r16 ? "a.r16" : "a.png", b = r16 ? "b.r16" : "b.png";
        CHECK_FALSE(read_text(dir.file(a)).empty());
        CHECK(read_text(dir.file(a)) == read_text(dir.file(b)));
        if (fs::exists(dir.file("ra.png"))) CHECK(read_text(dir.file("ra.png")) == read_text(dir.file("rb.png")));
        for (const std::string& f : dir.entries())
            if (f != "in.png") fs::remove(dir.file(f));
    }

    // The command line wins over the preset's mapping, either way.
    REQUIRE(run_gorge(dir, "fill in.png a.png --range -1,2 --save-preset r.json").code == 0);
    REQUIRE(run_gorge(dir, "fill in.png n.png --normalise").code == 0);
    REQUIRE(run_gorge(dir, "fill in.png b.png --preset r.json --normalise").code == 0);
    CHECK(read_text(dir.file("b.png")) == read_text(dir.file("n.png")));
    REQUIRE(run_gorge(dir, "fill in.png m.png --normalise --save-preset n.json").code == 0);
    REQUIRE(run_gorge(dir, "fill in.png c.png --preset n.json --range -1,2").code == 0);
    CHECK(read_text(dir.file("c.png")) == read_text(dir.file("a.png")));
    // --clamp from the command line with the range from the preset.
    REQUIRE(run_gorge(dir, "fill in.png d.png --preset r.json --clamp").code == 0);
    CHECK(read_text(dir.file("d.png")) == read_text(dir.file("a.png")));  // nothing outside -1..2 to clamp

    // Bad mapping values in a preset name the file and the key.
    std::ofstream(dir.file("bad_range.json")) << "{\"range\": [1, 2, 3]}";
    const run_result bad = run_gorge(dir, "fill in.png e.png --preset bad_range.json");
    CHECK(bad.code == 2);
    CHECK(contains(bad.err, "bad_range.json"));
    CHECK(contains(bad.err, "'range'"));
    std::ofstream(dir.file("bad_clamp.json")) << "{\"clamp\": true}";
    const run_result clamp = run_gorge(dir, "fill in.png e.png --preset bad_clamp.json");
    CHECK(clamp.code == 2);
    CHECK(contains(clamp.err, "--clamp"));
    CHECK_FALSE(fs::exists(dir.file("e.png")));
}

TEST_CASE("GeoTIFF outputs (.tif, .tiff): float32 heights, exact", "[cli][gdal]") {
    scratch_dir dir;
    write_terrain_png(dir.file("in.png"), 50, 40);
    if (!io::has_gdal()) {
        WARN("gorge::io was built without GDAL: GeoTIFF outputs are refused");
        const run_result r = run_gorge(dir, "fill in.png out.tif");
        CHECK(r.code == 2);
        CHECK(contains(r.err, "out.tif"));
        CHECK(contains(r.err, "GDAL"));
        CHECK_FALSE(fs::exists(dir.file("out.tif")));
        return;
    }
    const run_result f = run_gorge(dir, "filter in.png out.tif --preview p.png");
    REQUIRE(f.code == 0);
    CHECK(contains(f.out, "out.tif: float32 GeoTIFF heights"));
    const gorge::grid<float> expected = library_filter(dir.file("in.png"), gorge::tile_settings<float>{});
    CHECK(same_bits(io::read_gdal(dir.file("out.tif")).heights, expected));
    const run_result t = run_gorge(dir, "fill in.png out.TIFF --method plain");
    REQUIRE(t.code == 0);
    gorge::grid<float> filled = world_heights(dir.file("in.png"), 1.0f / 65535.0f);
    gorge::fill_depressions(filled);
    CHECK(same_bits(io::read_gdal(dir.file("out.TIFF")).heights, filled));
    const run_result acc = run_gorge(dir, "rivers in.png m.png --accumulation acc.tif");
    REQUIRE(acc.code == 0);
    CHECK(io::read_gdal(dir.file("acc.tif")).heights.width() == 50);
}

namespace {

/// A 41 x 33 GeoTIFF in metres with pits, a block of no-data cells inside, a run of them on the
/// top edge, and a placement; returns the heights written.
gorge::grid<float> write_holed_geotiff(const std::string& path, float no_data) {
    gorge::grid<float> g(41, 33);
    for (std::ptrdiff_t y = 0; y < g.height(); ++y)
        for (std::ptrdiff_t x = 0; x < g.width(); ++x)
            g(x, y) = 800.0f + 300.0f * std::sin(0.23f * static_cast<float>(x)) * std::cos(0.17f * static_cast<float>(y)) +
                      60.0f * std::sin(0.9f * static_cast<float>(x + 2 * y));
    for (std::ptrdiff_t y = 12; y < 19; ++y)
        for (std::ptrdiff_t x = 15; x < 24; ++x) g(x, y) = no_data;
    for (std::ptrdiff_t x = 3; x < 9; ++x) g(x, 0) = no_data;
    io::geotiff_options options;
    options.no_data = no_data;
    options.placement = io::geo_placement{{{431000.0, 5201000.0}}, {{30.0, 30.0}}};
    io::write_geotiff(path, g.view(), options);
    return g;
}

bool is_hole(float v, float no_data) { return std::isnan(no_data) ? std::isnan(v) : v == no_data; }

}  // namespace

TEST_CASE("GeoTIFF inputs with no-data cells: fill and thermal keep them, outputs mark them", "[cli][gdal]") {
    if (!io::has_gdal()) {
        WARN("gorge::io was built without GDAL: GIS inputs are not read");
        return;
    }
    scratch_dir dir;
    for (const float no_data : {std::numeric_limits<float>::quiet_NaN(), -32768.0f}) {
        INFO("no-data value " << no_data);
        const gorge::grid<float> input = write_holed_geotiff(dir.file("holes.tif"), no_data);
        const std::size_t holes = 7 * 9 + 6;

        // fill, both methods, to a GeoTIFF: the library's fill with no_data set, bit for bit
        // (no-data cells included), with the no-data value and the placement written again.
        for (const char* method : {"epsilon", "plain"}) {
            INFO(method);
            const run_result r = run_gorge(dir, std::string("fill holes.tif f.tif --method ") + method);
            INFO("stderr: " << r.err);
            REQUIRE(r.code == 0);
            CHECK(contains(r.out, "(" + std::to_string(holes) + " no-data cells)"));
            gorge::grid<float> expected = input;
            gorge::fill_options<float> options;
            options.no_data = no_data;
            if (std::string(method) == "epsilon")
                gorge::fill_depressions_epsilon(expected, options);
            else
                gorge::fill_depressions(expected, options);
            CHECK_FALSE(same_bits(expected, input));  // the terrain has pits
            const io::heightmap back = io::read_gdal(dir.file("f.tif"));
            CHECK(same_bits(back.heights, expected));
            REQUIRE(back.no_data.has_value());
            CHECK(is_hole(*back.no_data, no_data));
            REQUIRE(back.placement.has_value());
            CHECK(back.placement->origin == std::array<double, 2>{{431000.0, 5201000.0}});
            CHECK(back.placement->cell_size == std::array<double, 2>{{30.0, 30.0}});
        }

        // thermal: the library's erosion with no_data set.
        const run_result t = run_gorge(dir, "thermal holes.tif t.tif --cell-size 30 --talus-slope 0.4 --passes 6");
        INFO("stderr: " << t.err);
        REQUIRE(t.code == 0);
        gorge::thermal_params<float> params;
        params.cell_size = 30.0f;
        params.talus_slope = 0.4f;
        params.passes = 6;
        params.no_data = no_data;
        gorge::grid<float> eroded = input;
        gorge::erode_thermal(eroded, params);
        CHECK_FALSE(same_bits(eroded, input));
        CHECK(same_bits(io::read_gdal(dir.file("t.tif")).heights, eroded));

        // A 16-bit PNG (and its preview): the range is that of the data cells, no-data cells are code 0.
        const run_result p = run_gorge(dir, "fill holes.tif f.png --method plain --preview p.png");
        INFO("stderr: " << p.err);
        REQUIRE(p.code == 0);
        gorge::grid<float> filled = input;
        gorge::fill_options<float> options;
        options.no_data = no_data;
        gorge::fill_depressions(filled, options);
        float lo = std::numeric_limits<float>::infinity(), hi = -lo;
        for (const float v : filled)
            if (!is_hole(v, no_data)) lo = std::min(lo, v), hi = std::max(hi, v);
        std::ostringstream range;
        range.precision(9);
        range << "f.png: codes 0..65535 = heights " << lo << " .. " << hi;
        CHECK(contains(p.out, range.str()));
        CHECK(contains(p.out, std::to_string(holes) + " no-data cells written as code 0"));
        gorge::grid<float> want = filled;
        for (float& v : want)
            if (is_hole(v, no_data)) v = lo;
        io::write_png16(dir.file("want.png"), want.view(), io::height_mapping::absolute(lo, hi));
        const io::heightmap png = io::read_png(dir.file("f.png"));
        CHECK(same_bits(png.heights, io::read_png(dir.file("want.png")).heights));
        const io::heightmap preview = io::read_png(dir.file("p.png"));
        std::size_t zero_holes = 0, zero_data = 0;
        float data_max = 0.0f;
        for (std::size_t i = 0; i < filled.size(); ++i) {
            const bool hole = is_hole(filled.data()[i], no_data);
            CHECK(hole == is_hole(input.data()[i], no_data));
            if (hole) zero_holes += png.heights.data()[i] == 0.0f && preview.heights.data()[i] == 0.0f;
            if (!hole) {
                zero_data += png.heights.data()[i] == 0.0f;
                data_max = std::max(data_max, png.heights.data()[i]);
            }
        }
        CHECK(zero_holes == holes);
        CHECK(zero_data >= 1);  // the lowest data cell
        CHECK(data_max == 65535.0f);

        // EXR stores the no-data value itself in the no-data cells.
        const run_result e = run_gorge(dir, "fill holes.tif f.exr --method plain");
        REQUIRE(e.code == 0);
        CHECK(contains(e.out, std::to_string(holes) + " no-data cells stored as"));
        if (!std::isnan(no_data)) CHECK(same_bits(io::read_exr(dir.file("f.exr")).heights, filled));

        // The computations without no-data support refuse the file, naming it, writing nothing.
        const std::vector<std::string> before = dir.entries();
        for (const char* command : {"droplets holes.tif d.exr", "filter holes.tif d.exr"}) {
            INFO(command);
            const run_result d = run_gorge(dir, command);
            CHECK(d.code == 2);
            CHECK(contains(d.err, "holes.tif"));
            CHECK(contains(d.err, std::to_string(holes) + " no-data cells"));
            CHECK(dir.entries() == before);
        }
    }

    // A map without no-data: the GeoTIFF output has no no-data value.
    write_terrain_png(dir.file("in.png"), 30, 20);
    REQUIRE(run_gorge(dir, "fill in.png plain.tif").code == 0);
    CHECK_FALSE(io::read_gdal(dir.file("plain.tif")).no_data.has_value());
}

TEST_CASE("--hash picks the hash of generate's noise and filter and of filter; presets keep it", "[cli]") {
    scratch_dir dir;
    const char* const hashes[] = {"pcg3d", "prime_mix", "prime_xor"};
    const auto heights = [&](const std::string& file) { return io::read_heightmap(dir.file(file)).heights; };

    SECTION("generate, demo recipe: each hash its own terrain; prime_xor is the library's demo with prime_xor_hash") {
        REQUIRE(run_gorge(dir, "generate default.exr --size 65 --tile-x 1").code == 0);
        for (const char* h : hashes)
            REQUIRE(run_gorge(dir, std::string("generate ") + h + ".exr --size 65 --tile-x 1 --hash " + h).code == 0);
        const gorge::grid<float> pcg3d = heights("pcg3d.exr"), mix = heights("prime_mix.exr"),
                                 xor_ = heights("prime_xor.exr");
        CHECK(same_bits(pcg3d, heights("default.exr")));  // the default is pcg3d
        CHECK_FALSE(same_bits(mix, pcg3d));
        CHECK_FALSE(same_bits(xor_, pcg3d));
        CHECK_FALSE(same_bits(xor_, mix));
        // The demo pipeline with gorge::prime_xor_hash (its fBm and its filter), one sample at a
        // time on the scalar path: equal to the batch path's rounding. The same samples under
        // pcg3d are far off, so the bound tells the hashes apart.
        double worst = 0, worst_pcg3d = 0;
        for (std::ptrdiff_t j = 0; j < 65; j += 8)
            for (std::ptrdiff_t i = 0; i < 65; i += 8) {
                const glm::vec2 p(static_cast<float>(64 + i) / 1024.0f, static_cast<float>(j) / 1024.0f);
                const double want = gorge::demo_pipeline<gorge::prime_xor_hash>(p).height;
                worst = std::max(worst, std::fabs(double(xor_(i, j)) - want));
                worst_pcg3d = std::max(worst_pcg3d, std::fabs(double(pcg3d(i, j)) - want));
            }
        CHECK(worst <= 2e-6);
        CHECK(worst_pcg3d > 1e-3);
    }
    SECTION("generate, island recipe: the island's noise and the filter both hashed with prime_xor_hash") {
        REQUIRE(run_gorge(dir, "generate island.exr --recipe island --size 40 --noise-seed 9 --hash prime_xor").code == 0);
        REQUIRE(run_gorge(dir, "generate island_pcg3d.exr --recipe island --size 40 --noise-seed 9").code == 0);
        // The recipe as generate.cpp documents it, written out against the library.
        gorge::island_params<float> ip;
        ip.terrain.octaves = 4;
        ip.terrain.gain = 0.35f;
        using basis = gorge::gradient_basis<gorge::prime_xor_hash>;
        const float relief = 0.2f, peak_elevation = 0.8f;
        const auto field = gorge::scale(gorge::island_height_field<float, basis>(ip, 9u), relief);
        gorge::tile_settings<float> s;
        s.height_offset = glm::vec2(0.0f);
        s.valley_altitude = 0.0f;
        s.peak_altitude = relief * peak_elevation;
        gorge::tile_sampling<float> sampling;
        sampling.origin = glm::vec2(-1.25f);
        sampling.spacing = glm::vec2(2.5f / 1024.0f);
        gorge::grid<float> want(40, 40);
        gorge::tile_buffers<float> out;
        out.height = want.view();
        gorge::erode_tile<gorge::prime_xor_hash>(field, sampling, 0, 0, out, s);
        CHECK(same_bits(heights("island.exr"), want));
        CHECK_FALSE(same_bits(heights("island_pcg3d.exr"), want));
    }
    SECTION("filter: the library's filter with each hash, bit for bit") {
        write_terrain_png(dir.file("in.png"), 50, 37);
        REQUIRE(run_gorge(dir, "filter in.png pcg3d.exr --hash pcg3d").code == 0);
        REQUIRE(run_gorge(dir, "filter in.png prime_mix.exr --hash prime_mix --threads 2").code == 0);
        REQUIRE(run_gorge(dir, "filter in.png prime_xor.exr --hash prime_xor").code == 0);
        const gorge::tile_settings<float> s{};
        CHECK(same_bits(heights("pcg3d.exr"), library_filter(dir.file("in.png"), s)));
        CHECK(same_bits(heights("prime_mix.exr"), library_filter<gorge::prime_mix_hash>(dir.file("in.png"), s)));
        const gorge::grid<float> xor_ = library_filter<gorge::prime_xor_hash>(dir.file("in.png"), s);
        CHECK(same_bits(heights("prime_xor.exr"), xor_));
        CHECK_FALSE(same_bits(heights("pcg3d.exr"), xor_));
    }
    SECTION("--save-preset writes the hash, --preset reads it back: the same files byte for byte") {
        write_terrain_png(dir.file("in.png"), 40, 30);
        const std::pair<std::string, std::string> runs[] = {
            {"generate a.png --size 33 --hash prime_xor --save-preset p.json", "generate b.png --preset p.json"},
            {"filter in.png a.png --hash prime_mix --save-preset p.json", "filter in.png b.png --preset p.json"},
        };
        for (const auto& run : runs) {
            INFO("gorge " << run.first);
            REQUIRE(run_gorge(dir, run.first).code == 0);
            const std::string preset = read_text(dir.file("p.json"));
            INFO("preset: " << preset);
            CHECK(contains(preset, run.first.find("prime_xor") != std::string::npos ? "\"hash\": \"prime_xor\""
                                                                                    : "\"hash\": \"prime_mix\""));
            REQUIRE(run_gorge(dir, run.second).code == 0);
            CHECK_FALSE(read_text(dir.file("a.png")).empty());
            CHECK(read_text(dir.file("a.png")) == read_text(dir.file("b.png")));
            // The command line wins over the preset: --hash pcg3d gives the default's file.
            REQUIRE(run_gorge(dir, run.second.substr(0, run.second.find(" b.png")) + " c.png --preset p.json --hash pcg3d")
                        .code == 0);
            REQUIRE(run_gorge(dir, run.second.substr(0, run.second.find(" b.png")) + " d.png " +
                                       (run.first.rfind("generate", 0) == 0 ? "--size 33" : ""))
                        .code == 0);
            CHECK(read_text(dir.file("c.png")) == read_text(dir.file("d.png")));
            CHECK(read_text(dir.file("c.png")) != read_text(dir.file("a.png")));
            for (const std::string& f : dir.entries())
                if (f != "in.png") fs::remove(dir.file(f));
        }
        // Without --hash the preset holds the default.
        REQUIRE(run_gorge(dir, "generate e.png --size 9 --save-preset d.json").code == 0);
        CHECK(contains(read_text(dir.file("d.json")), "\"hash\": \"pcg3d\""));
    }
    SECTION("--help lists --hash") {
        for (const char* sub : {"generate", "filter"}) {
            const run_result h = run_gorge(dir, std::string(sub) + " --help");
            CHECK(h.code == 0);
            CHECK(contains(h.out, "--hash"));
            CHECK(contains(h.out, "prime_xor"));
        }
    }
}

TEST_CASE("--hash: an unknown name exits with 2, names --hash and the choices, writes nothing", "[cli]") {
    scratch_dir dir;
    write_terrain_png(dir.file("in.png"), 20, 20);
    const std::vector<std::string> before = dir.entries();
    check_refused(dir, {
        {"generate out.png --size 9 --hash md5", "--hash"},
        {"generate out.png --size 9 --hash shadertoy", "--hash"},
        {"filter in.png out.png --hash PCG3D", "--hash"},
    }, before);
    for (const std::string args : {"generate out.png --size 9 --hash md5", "filter in.png out.png --hash md5"}) {
        const run_result r = run_gorge(dir, args);
        INFO("gorge " << args << "\nstderr: " << r.err);
        CHECK(contains(r.err, "pcg3d"));
        CHECK(contains(r.err, "prime_mix"));
        CHECK(contains(r.err, "prime_xor"));
    }
    // In a preset: the file, the key and the choices named, nothing written.
    std::ofstream(dir.file("bad_hash.json")) << "{\"hash\": \"md5\"}";
    std::ofstream(dir.file("number_hash.json")) << "{\"hash\": 3}";
    const std::vector<std::string> with_presets = dir.entries();
    for (const std::string args : {"generate out.png --size 9 --preset bad_hash.json",
                                   "filter in.png out.png --preset bad_hash.json"}) {
        const run_result r = run_gorge(dir, args);
        INFO("gorge " << args << "\nstderr: " << r.err);
        CHECK(r.code == 2);
        CHECK(contains(r.err, "bad_hash.json"));
        CHECK(contains(r.err, "'hash'"));
        CHECK(contains(r.err, "prime_xor"));
        CHECK(dir.entries() == with_presets);
    }
    const run_result number = run_gorge(dir, "generate out.png --size 9 --preset number_hash.json");
    CHECK(number.code == 2);
    CHECK(contains(number.err, "'hash'"));
    CHECK(dir.entries() == with_presets);
}
