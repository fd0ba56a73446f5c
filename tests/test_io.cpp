// gorge::io: round trips (16-bit PNG and .r16 bit-exact, EXR exact), the .r16 byte layout and an
// EXR file written by hand, height mappings, every bad-file case with its one-line message, atomic
// writes, RGBA biome and splat maps, normal maps, and GDAL rasters with a no-data value.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gorge/drainage/depression_fill.hpp>
#include <gorge/grid/grid_field.hpp>
#include <gorge/io/heightmap_io.hpp>

#if defined(GORGE_TEST_IO_GDAL)
#include <gdal.h>
#endif

#include "support/catch.hpp"
#include "support/scratch_dir.hpp"
#include "support/errors.hpp"

namespace {

namespace fs = std::filesystem;
namespace io = gorge::io;
using gorge_test::contains;
using gorge_test::invalid_argument_message;

/// A scratch directory named after this test.
struct scratch_dir : gorge_test::scratch_dir {
    scratch_dir() : gorge_test::scratch_dir("gorge_test_io_") {}
};

std::vector<unsigned char> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::vector<unsigned char>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

/// Message of the io_error thrown by f, or "" when nothing (or something else) is thrown.
template <class F>
std::string io_error_message(F&& f) {
    try {
        f();
    } catch (const io::io_error& e) {
        return e.what();
    }
    return "";
}

/// Checks an io_error message: one line, naming the file and containing the reason.
void check_io_message(const std::string& message, const std::string& path, const std::string& reason) {
    INFO("message: '" << message << "'");
    CHECK(contains(message, path));
    CHECK(contains(message, reason));
    CHECK(message.find('\n') == std::string::npos);
}

/// A width x height grid of random integer codes 0..max_code, with 0 and max_code included.
gorge::grid<float> random_codes(std::ptrdiff_t w, std::ptrdiff_t h, std::uint32_t max_code, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::uint32_t> dist(0, max_code);
    gorge::grid<float> g(w, h);
    for (float& v : g) v = static_cast<float>(dist(rng));
    g(0, 0) = 0.0f;
    g(w - 1, h - 1) = static_cast<float>(max_code);
    return g;
}

bool same_bits(const gorge::grid<float>& a, const gorge::grid<float>& b) {
    return a.width() == b.width() && a.height() == b.height() &&
           std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// CRC-32 (ISO-HDLC, as PNG chunks use), to forge a valid PNG header in the tests.
std::uint32_t crc32(const unsigned char* p, std::size_t n) {
    std::uint32_t crc = 0xffffffffu;
    for (std::size_t i = 0; i < n; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xffffffffu;
}

void put_be32(std::vector<unsigned char>& b, std::size_t at, std::uint32_t v) {
    for (int k = 0; k < 4; ++k) b[at + static_cast<std::size_t>(k)] = static_cast<unsigned char>(v >> (24 - 8 * k));
}

// Little-endian appenders for the hand-written EXR file.
void put_le(std::vector<unsigned char>& b, std::uint64_t v, int bytes) {
    for (int k = 0; k < bytes; ++k) b.push_back(static_cast<unsigned char>(v >> (8 * k)));
}
void put_str(std::vector<unsigned char>& b, const char* s) {
    b.insert(b.end(), s, s + std::strlen(s) + 1);
}
void put_float(std::vector<unsigned char>& b, float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    put_le(b, u, 4);
}

/// An uncompressed single-channel ("Y", float32) scanline OpenEXR file of one row, written from
/// the OpenEXR file layout: magic and version, the required header attributes, the offset table
/// (one 64-bit offset per scanline) and one chunk (y, byte count, pixels).
std::vector<unsigned char> hand_written_exr(const std::vector<float>& row) {
    const auto w = static_cast<std::uint32_t>(row.size());
    std::vector<unsigned char> b;
    put_le(b, 20000630, 4);  // magic number 76 2f 31 01
    put_le(b, 2, 4);         // version 2, single-part scanline
    put_str(b, "channels");
    put_str(b, "chlist");
    put_le(b, 19, 4);  // "Y\0", pixel type, pLinear + 3 reserved, x and y sampling, list end
    put_str(b, "Y");
    put_le(b, 2, 4);  // FLOAT
    put_le(b, 0, 4);
    put_le(b, 1, 4);
    put_le(b, 1, 4);
    b.push_back(0);
    put_str(b, "compression");
    put_str(b, "compression");
    put_le(b, 1, 4);
    b.push_back(0);  // NO_COMPRESSION
    for (const char* window : {"dataWindow", "displayWindow"}) {
        put_str(b, window);
        put_str(b, "box2i");
        put_le(b, 16, 4);
        put_le(b, 0, 4);
        put_le(b, 0, 4);
        put_le(b, w - 1, 4);
        put_le(b, 0, 4);
    }
    put_str(b, "lineOrder");
    put_str(b, "lineOrder");
    put_le(b, 1, 4);
    b.push_back(0);  // INCREASING_Y
    put_str(b, "pixelAspectRatio");
    put_str(b, "float");
    put_le(b, 4, 4);
    put_float(b, 1.0f);
    put_str(b, "screenWindowCenter");
    put_str(b, "v2f");
    put_le(b, 8, 4);
    put_float(b, 0.0f);
    put_float(b, 0.0f);
    put_str(b, "screenWindowWidth");
    put_str(b, "float");
    put_le(b, 4, 4);
    put_float(b, 1.0f);
    b.push_back(0);  // end of header
    put_le(b, b.size() + 8, 8);  // offset table: the only chunk follows it
    put_le(b, 0, 4);             // y
    put_le(b, 4 * w, 4);         // pixel bytes
    for (float v : row) put_float(b, v);
    return b;
}

}  // namespace

TEST_CASE(".r16 byte layout matches a hand-written file, both ways", "[io]") {
    scratch_dir dir;
    // 3 x 2 codes, rows top first; each cell little-endian (low byte first).
    gorge::grid<float> codes(3, 2);
    const float values[6] = {0.0f, 1.0f, 256.0f, 65535.0f, 4660.0f /* 0x1234 */, 513.0f /* 0x0201 */};
    std::copy(values, values + 6, codes.begin());
    const std::vector<unsigned char> expected = {0x00, 0x00, 0x01, 0x00, 0x00, 0x01,
                                                 0xff, 0xff, 0x34, 0x12, 0x01, 0x02};
    const std::string written = dir.file("codes.r16");
    const io::height_range used = io::write_r16(written, codes, io::height_mapping::absolute(0.0f, 65535.0f));
    CHECK(used.lo == 0.0f);
    CHECK(used.hi == 65535.0f);
    CHECK(read_bytes(written) == expected);

    const std::string by_hand = dir.file("by_hand.r16");
    write_bytes(by_hand, expected);
    io::read_options size;
    size.width = 3;
    size.height = 2;
    const io::heightmap read = io::read_r16(by_hand, size);
    CHECK(read.max_code == 65535u);
    REQUIRE(read.heights.width() == 3);
    REQUIRE(read.heights.height() == 2);
    CHECK(std::equal(read.heights.begin(), read.heights.end(), values));
    // 6 cells are not a square: the size must be given.
    check_io_message(io_error_message([&] { io::read_r16(by_hand); }), by_hand, "not a square");
}

TEST_CASE(".r16 and 16-bit PNG round trips are bit-exact", "[io]") {
    scratch_dir dir;
    const gorge::grid<float> codes = random_codes(67, 45, 65535, 7);
    const auto raw = io::height_mapping::absolute(0.0f, 65535.0f);
    io::read_options size;
    size.width = 67;
    size.height = 45;

    io::write_r16(dir.file("a.r16"), codes, raw);
    CHECK(same_bits(io::read_r16(dir.file("a.r16"), size).heights, codes));
    io::write_png16(dir.file("a.png"), codes, raw);
    const io::heightmap png = io::read_png(dir.file("a.png"));
    CHECK(png.max_code == 65535u);
    CHECK(same_bits(png.heights, codes));
    CHECK_FALSE(png.no_data.has_value());

    // A square .r16 infers its size.
    const gorge::grid<float> square = random_codes(33, 33, 65535, 8);
    io::write_r16(dir.file("square.r16"), square, raw);
    CHECK(same_bits(io::read_r16(dir.file("square.r16")).heights, square));

    // Heights in metres through a range: read back within half a code step, and the codes of a
    // second write are the same bytes.
    gorge::grid<float> metres(40, 30);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-120.0f, 880.0f);
    for (float& v : metres) v = dist(rng);
    const auto range = io::height_mapping::absolute(-200.0f, 1000.0f);
    for (const char* name : {"m.png", "m.r16"}) {
        const bool is_png = std::string(name) == "m.png";
        const std::string path = dir.file(name), again = dir.file(std::string("again_") + name);
        const io::height_range used = is_png ? io::write_png16(path, metres, range) : io::write_r16(path, metres, range);
        io::read_options options;
        options.range = used;
        if (!is_png) options.width = 40, options.height = 30;
        const io::heightmap back = io::read_heightmap(path, options);
        const double step = 1200.0 / 65535.0;
        double worst = 0.0;
        for (std::ptrdiff_t y = 0; y < 30; ++y)
            for (std::ptrdiff_t x = 0; x < 40; ++x)
                worst = std::max(worst, std::fabs(double(back.heights(x, y)) - double(metres(x, y))));
        CHECK(worst <= step * 0.5 + 1e-4);
        if (is_png) io::write_png16(again, back.heights, range);
        else io::write_r16(again, back.heights, range);
        CHECK(read_bytes(again) == read_bytes(path));
    }
}

TEST_CASE("8-bit previews hold 256 levels", "[io]") {
    scratch_dir dir;
    const gorge::grid<float> codes = random_codes(20, 9, 255, 11);
    const io::height_range used = io::write_png8(dir.file("p.png"), codes, io::height_mapping::normalise());
    CHECK(used.lo == 0.0f);
    CHECK(used.hi == 255.0f);
    const io::heightmap back = io::read_png(dir.file("p.png"));
    CHECK(back.max_code == 255u);
    CHECK(same_bits(back.heights, codes));
}

TEST_CASE("height mappings: normalise reports its range, absolute rejects or clamps", "[io]") {
    scratch_dir dir;
    gorge::grid<float> h(4, 1);
    const float values[4] = {-3.0f, 1.0f, 5.0f, 2.0f};
    std::copy(values, values + 4, h.begin());
    const std::string path = dir.file("n.r16");
    const io::height_range used = io::write_r16(path, h, io::height_mapping::normalise());
    CHECK(used.lo == -3.0f);
    CHECK(used.hi == 5.0f);
    io::read_options size;
    size.width = 4;
    size.height = 1;
    const io::heightmap codes = io::read_r16(path, size);
    // (v + 3) / 8 * 65535, rounded: 0, 32767.5 -> 32768, 65535, 40959.375 -> 40959.
    CHECK(codes.heights(0, 0) == 0.0f);
    CHECK(codes.heights(1, 0) == 32768.0f);
    CHECK(codes.heights(2, 0) == 65535.0f);
    CHECK(codes.heights(3, 0) == 40959.0f);

    // A flat map: code 0 everywhere and lo == hi.
    const gorge::grid<float> flat(3, 3, 7.5f);
    const io::height_range flat_used = io::write_r16(path, flat, io::height_mapping::normalise());
    CHECK(flat_used.lo == 7.5f);
    CHECK(flat_used.hi == 7.5f);
    for (float v : io::read_r16(path).heights) CHECK(v == 0.0f);

    // Outside an absolute range: rejected by default, naming the cell, before any file exists.
    const std::string rejected = dir.file("rejected.png");
    const std::string message =
        invalid_argument_message([&] { io::write_png16(rejected, h, io::height_mapping::absolute(-1.0f, 4.0f)); });
    CHECK(contains(message, "cell (0, 0)"));
    CHECK(contains(message, "outside"));
    CHECK_FALSE(fs::exists(rejected));
    // ... or clamped when asked.
    io::write_r16(path, h, io::height_mapping::absolute(-1.0f, 4.0f, io::out_of_range::clamp));
    const io::heightmap clamped = io::read_r16(path, size);
    CHECK(clamped.heights(0, 0) == 0.0f);
    CHECK(clamped.heights(2, 0) == 65535.0f);
    CHECK(clamped.heights(1, 0) == 26214.0f);  // (1 + 1) / 5 * 65535 = 26214

    CHECK(contains(invalid_argument_message([] { io::height_mapping::absolute(2.0f, 1.0f); }), "hi"));
    CHECK(contains(invalid_argument_message([] { io::height_mapping::absolute(NAN, 1.0f); }), "lo"));
    CHECK(contains(invalid_argument_message([] { io::height_mapping::absolute(0.0f, INFINITY); }), "hi"));
    io::read_options bad;
    bad.range = io::height_range{1.0f, 1.0f};
    CHECK(contains(invalid_argument_message([&] { io::read_r16(path, bad); }), "range"));
    io::read_options half;
    half.width = 4;
    CHECK(contains(invalid_argument_message([&] { io::read_r16(path, half); }), "width, height"));
    // Non-finite heights are never written.
    gorge::grid<float> nan_map(2, 2, 1.0f);
    nan_map(1, 0) = NAN;
    CHECK(contains(invalid_argument_message([&] { io::write_r16(path, nan_map, io::height_mapping::normalise()); }),
                   "cell (1, 0)"));
}

TEST_CASE("EXR round trip is exact, and a hand-written EXR reads as written", "[io]") {
    scratch_dir dir;
    gorge::grid<float> h(31, 17);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-1e4f, 1e4f);
    for (float& v : h) v = dist(rng);
    h(0, 0) = std::numeric_limits<float>::max();
    h(1, 0) = -std::numeric_limits<float>::max();
    h(2, 0) = std::numeric_limits<float>::denorm_min();
    h(3, 0) = -0.0f;
    h(4, 0) = 1e-30f;
    io::write_exr(dir.file("h.exr"), h);
    const io::heightmap back = io::read_heightmap(dir.file("h.exr"));
    CHECK(back.max_code == 0u);
    CHECK(same_bits(back.heights, h));

    // A NaN no-data value lets NaN cells through (stored as they are: read_exr then names the
    // first one); without it they are refused before anything is written.
    gorge::grid<float> holes = h;
    holes(7, 3) = holes(9, 5) = std::numeric_limits<float>::quiet_NaN();
    CHECK(contains(invalid_argument_message([&] { io::write_exr(dir.file("holes.exr"), holes); }), "cell (7, 3)"));
    CHECK_FALSE(fs::exists(dir.file("holes.exr")));
    io::write_exr(dir.file("holes.exr"), holes, std::numeric_limits<float>::quiet_NaN());
    check_io_message(io_error_message([&] { io::read_exr(dir.file("holes.exr")); }), dir.file("holes.exr"),
                     "cell (7, 3)");
    // A finite no-data value does not admit NaN.
    CHECK(contains(invalid_argument_message([&] { io::write_exr(dir.file("holes2.exr"), holes, -9999.0f); }),
                   "cell (7, 3)"));

    const std::vector<float> row = {1.5f, -2.25f, 1e6f, 0.0f};
    write_bytes(dir.file("hand.exr"), hand_written_exr(row));
    const io::heightmap hand = io::read_exr(dir.file("hand.exr"));
    REQUIRE(hand.heights.width() == 4);
    REQUIRE(hand.heights.height() == 1);
    CHECK(std::equal(hand.heights.begin(), hand.heights.end(), row.begin()));
}

TEST_CASE("bad files: one-line io_error naming the file and the reason", "[io]") {
    scratch_dir dir;
    const gorge::grid<float> codes = random_codes(32, 24, 65535, 9);
    const std::string good = dir.file("good.png");
    io::write_png16(good, codes, io::height_mapping::absolute(0.0f, 65535.0f));
    const std::vector<unsigned char> png = read_bytes(good);
    REQUIRE(png.size() > 64);

    const std::string missing = dir.file("missing.png");
    check_io_message(io_error_message([&] { io::read_png(missing); }), missing, "cannot open");
    check_io_message(io_error_message([&] { io::read_heightmap(dir.file("missing.r16")); }), dir.file("missing.r16"),
                     "cannot open");
    check_io_message(io_error_message([&] { io::read_png(dir.path.string()); }), dir.path.string(), "not a regular file");

    const std::string truncated = dir.file("truncated.png");
    write_bytes(truncated, std::vector<unsigned char>(png.begin(), png.begin() + static_cast<std::ptrdiff_t>(png.size() / 2)));
    check_io_message(io_error_message([&] { io::read_png(truncated); }), truncated, "truncated PNG");

    // A flipped byte inside the image data breaks its chunk's CRC.
    const std::string corrupt = dir.file("corrupt.png");
    std::vector<unsigned char> flipped = png;
    flipped[png.size() - 20] ^= 0x5a;
    write_bytes(corrupt, flipped);
    check_io_message(io_error_message([&] { io::read_png(corrupt); }), corrupt, "corrupt PNG");

    const std::string text = dir.file("text.png");
    write_bytes(text, {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '\n'});
    check_io_message(io_error_message([&] { io::read_png(text); }), text, "not a PNG");

    // A valid header claiming 2^31 - 1 x 2^31 - 1 pixels: rejected before any allocation.
    const std::string huge = dir.file("huge.png");
    std::vector<unsigned char> forged = png;
    put_be32(forged, 16, 0x7fffffffu);  // IHDR width, after signature (8), length (4) and type (4)
    put_be32(forged, 20, 0x7fffffffu);
    put_be32(forged, 29, crc32(&forged[12], 17));  // CRC over type and 13 data bytes
    write_bytes(huge, forged);
    check_io_message(io_error_message([&] { io::read_png(huge); }), huge, "too large");
    // The same limit for every reader.
    io::write_r16(dir.file("big.r16"), codes, io::height_mapping::normalise());
    io::read_options small;
    small.width = 32;
    small.height = 24;
    small.max_cells = 100;
    check_io_message(io_error_message([&] { io::read_r16(dir.file("big.r16"), small); }), dir.file("big.r16"),
                     "too large");

    // .r16 whose size is not W x H x 2.
    const std::string short_r16 = dir.file("short.r16");
    write_bytes(short_r16, std::vector<unsigned char>(17, 0));
    io::read_options three;
    three.width = 3;
    three.height = 3;
    check_io_message(io_error_message([&] { io::read_r16(short_r16, three); }), short_r16, "expected 3 x 3 x 2 = 18");
    check_io_message(io_error_message([&] { io::read_r16(short_r16); }), short_r16, "not a whole number");
    write_bytes(short_r16, std::vector<unsigned char>(12, 0));
    check_io_message(io_error_message([&] { io::read_r16(short_r16); }), short_r16, "not a square");

    // Non-finite values in an EXR file.
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
        const std::string path = dir.file("bad.exr");
        write_bytes(path, hand_written_exr({1.0f, 2.0f, bad, 4.0f}));
        check_io_message(io_error_message([&] { io::read_exr(path); }), path, "non-finite value");
        check_io_message(io_error_message([&] { io::read_exr(path); }), path, "cell (2, 0)");
    }
    // A truncated or foreign EXR file.
    io::write_exr(dir.file("ok.exr"), codes);
    const std::vector<unsigned char> exr = read_bytes(dir.file("ok.exr"));
    const std::string cut = dir.file("cut.exr");
    write_bytes(cut, std::vector<unsigned char>(exr.begin(), exr.begin() + static_cast<std::ptrdiff_t>(exr.size() / 2)));
    check_io_message(io_error_message([&] { io::read_exr(cut); }), cut, "EXR");
    check_io_message(io_error_message([&] { io::read_exr(text); }), text, "not an OpenEXR file");
}

TEST_CASE("RGB(A) PNG heightmaps: grey and opaque pixels only", "[io]") {
    scratch_dir dir;
    gorge::grid<io::rgba8> px(3, 2);
    std::uint8_t grey = 10;
    for (io::rgba8& p : px) p = io::rgba8{grey, grey, grey, 255}, grey = static_cast<std::uint8_t>(grey + 40);
    const std::string path = dir.file("grey_rgba.png");
    io::write_rgba_png(path, px);
    const io::heightmap h = io::read_png(path);
    CHECK(h.max_code == 255u);
    const float expected[6] = {10, 50, 90, 130, 170, 210};
    CHECK(std::equal(h.heights.begin(), h.heights.end(), expected));

    px(2, 1).g = 0;
    io::write_rgba_png(path, px);
    check_io_message(io_error_message([&] { io::read_png(path); }), path, "non-grey pixel at pixel (2, 1)");
    px(2, 1).g = px(2, 1).r;
    px(1, 0).a = 128;
    io::write_rgba_png(path, px);
    check_io_message(io_error_message([&] { io::read_png(path); }), path, "transparent pixel at pixel (1, 0)");
}

TEST_CASE("biome and splat maps are RGBA PNGs that read back", "[io]") {
    scratch_dir dir;
    gorge::grid<gorge::biome> biomes(4, 4);
    std::size_t k = 0;
    for (gorge::biome& b : biomes) b = static_cast<gorge::biome>(k++ % gorge::biome_count);
    const std::string path = dir.file("biomes.png");
    io::write_biome_png(path, biomes);
    const gorge::grid<io::rgba8> back = io::read_rgba_png(path);
    REQUIRE(back.width() == 4);
    REQUIRE(back.height() == 4);
    for (std::ptrdiff_t y = 0; y < 4; ++y)
        for (std::ptrdiff_t x = 0; x < 4; ++x) {
            const gorge::biome_rgb c = gorge::biome_colour(biomes(x, y));
            CHECK(back(x, y) == io::rgba8{c.r, c.g, c.b, 255});
        }
    biomes(1, 2) = static_cast<gorge::biome>(200);
    CHECK(contains(invalid_argument_message([&] { io::write_biome_png(dir.file("bad.png"), biomes); }), "cell (1, 2)"));

    gorge::grid<float> w0(2, 1), w2(2, 1);
    w0(0, 0) = 1.0f, w0(1, 0) = 0.25f;
    w2(0, 0) = 0.0f, w2(1, 0) = 0.75f;
    io::write_splat_png(dir.file("splat.png"), {w0.view(), {}, w2.view(), {}});
    const gorge::grid<io::rgba8> splat = io::read_rgba_png(dir.file("splat.png"));
    CHECK(splat(0, 0) == io::rgba8{255, 0, 0, 0});
    CHECK(splat(1, 0) == io::rgba8{64, 0, 191, 0});  // round(63.75) = 64, round(191.25) = 191
    w2(1, 0) = 1.5f;
    CHECK(contains(invalid_argument_message([&] { io::write_splat_png(dir.file("bad.png"), {w0.view(), {}, w2.view(), {}}); }),
                   "weights[2] at cell (1, 0)"));
}

TEST_CASE("normal maps: flat, slopes in x and y, green up or down", "[io]") {
    scratch_dir dir;
    const std::string path = dir.file("normals.png");
    io::write_normal_map_png(path, gorge::grid<float>(5, 4, 3.0f));
    for (const io::rgba8& p : io::read_rgba_png(path)) CHECK(p == io::rgba8{128, 128, 255, 255});

    // h = 2 x with cells 2 units apart: dh/dx = 1, n = (-1, 0, 1) / sqrt(2), so red is
    // round((1 - 1 / sqrt(2)) / 2 * 255) = round(37.34) = 37 and blue round(217.66) = 218.
    gorge::grid<float> ramp_x(5, 3);
    for (std::ptrdiff_t y = 0; y < 3; ++y)
        for (std::ptrdiff_t x = 0; x < 5; ++x) ramp_x(x, y) = 2.0f * static_cast<float>(x);
    io::normal_map_options options;
    options.cell_size = 2.0f;
    io::write_normal_map_png(path, ramp_x, options);
    for (const io::rgba8& p : io::read_rgba_png(path)) CHECK(p == io::rgba8{37, 128, 218, 255});

    // Heights rising down the image (with the row): the slope faces up the image, so the normal
    // leans towards +Y (green > 128) in the OpenGL convention and the other way in DirectX's.
    gorge::grid<float> ramp_rows(3, 5);
    for (std::ptrdiff_t y = 0; y < 5; ++y)
        for (std::ptrdiff_t x = 0; x < 3; ++x) ramp_rows(x, y) = 2.0f * static_cast<float>(y);
    io::write_normal_map_png(path, ramp_rows, options);
    for (const io::rgba8& p : io::read_rgba_png(path)) CHECK(p == io::rgba8{128, 218, 218, 255});
    options.green = io::normal_green::down;
    io::write_normal_map_png(path, ramp_rows, options);
    for (const io::rgba8& p : io::read_rgba_png(path)) CHECK(p == io::rgba8{128, 37, 218, 255});

    options.cell_size = 0.0f;
    CHECK(contains(invalid_argument_message([&] { io::write_normal_map_png(path, ramp_rows, options); }), "cell_size"));
}

TEST_CASE("writes are atomic: a failure leaves no file and the target untouched", "[io]") {
    scratch_dir dir;
    const std::string target = dir.file("target.png");
    write_bytes(target, {'k', 'e', 'e', 'p'});
    gorge::grid<float> nan_map(4, 4, 1.0f);
    nan_map(3, 3) = NAN;
    CHECK_THROWS_AS(io::write_png16(target, nan_map, io::height_mapping::normalise()), std::invalid_argument);
    CHECK_THROWS_AS(io::write_exr(target, nan_map), std::invalid_argument);
    CHECK(read_bytes(target) == std::vector<unsigned char>{'k', 'e', 'e', 'p'});

    // The rename fails (the target is a directory): the temporary file is removed.
    const std::string blocked = dir.file("blocked.r16");
    fs::create_directory(blocked);
    const gorge::grid<float> ok(4, 4, 2.0f);
    check_io_message(io_error_message([&] { io::write_r16(blocked, ok, io::height_mapping::normalise()); }), blocked,
                     "cannot replace");
    CHECK(fs::is_directory(blocked));
    CHECK(dir.entries() == std::vector<std::string>{"blocked.r16", "target.png"});

    // A missing directory: nothing is created.
    const std::string nowhere = dir.file("no_such_dir/x.exr");
    check_io_message(io_error_message([&] { io::write_exr(nowhere, ok); }), nowhere, "cannot create");
    CHECK(dir.entries() == std::vector<std::string>{"blocked.r16", "target.png"});

    // A successful write replaces the target whole and leaves nothing else.
    io::write_png16(target, ok, io::height_mapping::normalise());
    CHECK(io::read_png(target).heights.width() == 4);
    CHECK(dir.entries() == std::vector<std::string>{"blocked.r16", "target.png"});
    // Reading never changes the input.
    const std::vector<unsigned char> before = read_bytes(target);
    io::read_png(target);
    CHECK(read_bytes(target) == before);
}

TEST_CASE("GDAL rasters: values and the no-data value, passed on to the depression fill", "[io][gdal]") {
    scratch_dir dir;
    const std::string path = dir.file("dem.tif");
#if defined(GORGE_TEST_IO_GDAL)
    REQUIRE(io::has_gdal());
    // A 5 x 4 SRTM-like Int16 GeoTIFF with no-data -32768, written through GDAL itself: a pit at
    // (2, 1) inside a rim, and a no-data hole at (4, 3).
    constexpr int w = 5, h = 4;
    const std::int16_t no_data = -32768;
    std::int16_t cells[w * h] = {
        50, 50, 50, 50, 50,  //
        50, 40, 10, 40, 50,  //
        50, 40, 40, 40, 50,  //
        50, 50, 50, 50, no_data,
    };
    GDALAllRegister();
    GDALDriverH driver = GDALGetDriverByName("GTiff");
    REQUIRE(driver != nullptr);
    GDALDatasetH ds = GDALCreate(driver, path.c_str(), w, h, 1, GDT_Int16, nullptr);
    REQUIRE(ds != nullptr);
    GDALRasterBandH band = GDALGetRasterBand(ds, 1);
    REQUIRE(GDALSetRasterNoDataValue(band, no_data) == CE_None);
    REQUIRE(GDALRasterIO(band, GF_Write, 0, 0, w, h, cells, w, h, GDT_Int16, 0, 0) == CE_None);
    GDALClose(ds);

    const io::heightmap dem = io::read_heightmap(path);
    REQUIRE(dem.heights.width() == w);
    REQUIRE(dem.heights.height() == h);
    REQUIRE(dem.no_data.has_value());
    CHECK(*dem.no_data == -32768.0f);
    for (int i = 0; i < w * h; ++i) CHECK(dem.heights.data()[i] == static_cast<float>(cells[i]));

    gorge::grid<float> filled = dem.heights;
    gorge::fill_options<float> fill;
    fill.no_data = dem.no_data;
    gorge::fill_depressions(filled, fill);
    CHECK(filled(2, 1) == 40.0f);       // the pit filled to its spill level
    CHECK(filled(4, 3) == -32768.0f);  // the no-data cell untouched
    CHECK(filled(0, 0) == 50.0f);

    // Missing and unreadable files.
    check_io_message(io_error_message([&] { io::read_gdal(dir.file("none.tif")); }), dir.file("none.tif"), "cannot open");
    write_bytes(dir.file("junk.tif"), {'j', 'u', 'n', 'k'});
    check_io_message(io_error_message([&] { io::read_gdal(dir.file("junk.tif")); }), dir.file("junk.tif"), "GDAL");
#else
    WARN("gorge::io was built without GDAL: the GeoTIFF cases are skipped (install libgdal-dev)");
    CHECK_FALSE(io::has_gdal());
    check_io_message(io_error_message([&] { io::read_gdal(path); }), path, "without GDAL");
    check_io_message(io_error_message([&] { io::read_heightmap(path); }), path, "unknown heightmap format");
#endif
}

TEST_CASE("GeoTIFF out: float32 round trip exact, no-data value and placement kept, written atomically",
          "[io][gdal]") {
    scratch_dir dir;
    const std::string path = dir.file("out.tif");
    // Heights that a 16-bit format could not hold exactly: random floats over a wide range, -0,
    // a subnormal, and no-data cells.
    gorge::grid<float> heights(37, 23);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> value(-4000.0f, 9000.0f);
    for (float& v : heights) v = value(rng);
    heights(1, 0) = -0.0f;
    heights(2, 0) = std::numeric_limits<float>::denorm_min();
    const float no_data = -9999.0f;
    heights(5, 7) = no_data;
    heights(36, 22) = no_data;
    io::geotiff_options options;
    options.no_data = no_data;
    options.placement = io::geo_placement{{{500000.0, 4649776.0}}, {{30.0, 25.0}}};

    // Bad input is rejected before anything is written, with or without GDAL.
    gorge::grid<float> bad = heights;
    bad(3, 4) = std::numeric_limits<float>::infinity();
    CHECK(contains(invalid_argument_message([&] { io::write_geotiff(path, bad.view(), options); }), "cell (3, 4)"));
    io::geotiff_options bad_cell = options;
    bad_cell.placement->cell_size[1] = 0.0;
    CHECK(contains(invalid_argument_message([&] { io::write_geotiff(path, heights.view(), bad_cell); }),
                   "placement.cell_size"));
    gorge::grid<float> nan_cell = heights;
    nan_cell(5, 7) = std::numeric_limits<float>::quiet_NaN();  // NaN without a NaN no-data value
    CHECK(contains(invalid_argument_message([&] { io::write_geotiff(path, nan_cell.view(), options); }), "cell (5, 7)"));
    CHECK_FALSE(fs::exists(path));

#if defined(GORGE_TEST_IO_GDAL)
    io::write_geotiff(path, heights.view(), options);
    const io::heightmap back = io::read_gdal(path);
    REQUIRE(back.heights.width() == 37);
    REQUIRE(back.heights.height() == 23);
    REQUIRE(back.no_data.has_value());
    CHECK(*back.no_data == no_data);
    CHECK(back.max_code == 0u);
    CHECK(std::memcmp(back.heights.data(), heights.data(), heights.size() * sizeof(float)) == 0);
    // The north-up geotransform comes back as the placement.
    REQUIRE(back.placement.has_value());
    CHECK(back.placement->origin == options.placement->origin);
    CHECK(back.placement->cell_size == options.placement->cell_size);
    // read_heightmap picks GDAL for .tif.
    CHECK(std::memcmp(io::read_heightmap(path).heights.data(), heights.data(), heights.size() * sizeof(float)) == 0);

    GDALDatasetH ds = GDALOpen(path.c_str(), GA_ReadOnly);
    REQUIRE(ds != nullptr);
    double transform[6] = {};
    CHECK(GDALGetGeoTransform(ds, transform) == CE_None);
    CHECK(GDALGetRasterDataType(GDALGetRasterBand(ds, 1)) == GDT_Float32);
    CHECK(GDALGetRasterCount(ds) == 1);
    GDALClose(ds);
    CHECK(transform[0] == 500000.0);
    CHECK(transform[1] == 30.0);
    CHECK(transform[2] == 0.0);
    CHECK(transform[3] == 4649776.0);
    CHECK(transform[4] == 0.0);
    CHECK(transform[5] == -25.0);

    // A NaN no-data value, and no placement; then the same file replaced atomically (no
    // temporary file left next to it).
    gorge::grid<float> holes = heights;
    holes(5, 7) = holes(36, 22) = std::numeric_limits<float>::quiet_NaN();
    io::geotiff_options nan_options;
    nan_options.no_data = std::numeric_limits<float>::quiet_NaN();
    io::write_geotiff(path, holes.view(), nan_options);
    const io::heightmap nan_back = io::read_gdal(path);
    REQUIRE(nan_back.no_data.has_value());
    CHECK(std::isnan(*nan_back.no_data));
    CHECK(std::isnan(nan_back.heights(5, 7)));
    CHECK(std::isnan(nan_back.heights(36, 22)));
    CHECK(nan_back.heights(0, 0) == heights(0, 0));
    CHECK(nan_back.heights(36, 21) == heights(36, 21));
    CHECK_FALSE(nan_back.placement.has_value());  // written without a geotransform

    // Without a no-data value: none is read back.
    gorge::grid<float> plain = heights;
    plain(5, 7) = plain(36, 22) = 1.0f;
    io::write_geotiff(path, plain.view());
    CHECK_FALSE(io::read_gdal(path).no_data.has_value());
    CHECK(std::memcmp(io::read_gdal(path).heights.data(), plain.data(), plain.size() * sizeof(float)) == 0);
    CHECK(dir.entries() == std::vector<std::string>{"out.tif"});

    // A directory that does not exist: io_error naming the file, nothing written.
    const std::string nowhere = dir.file("no_such_dir/out.tif");
    check_io_message(io_error_message([&] { io::write_geotiff(nowhere, plain.view()); }), nowhere, "temporary");
#else
    WARN("gorge::io was built without GDAL: the GeoTIFF round trip is skipped (install libgdal-dev)");
    check_io_message(io_error_message([&] { io::write_geotiff(path, heights.view(), options); }), path,
                     "without GDAL");
    CHECK_FALSE(fs::exists(path));
#endif
}

// README, "Heightmaps in, engine formats out": the snippet on a 16-bit PNG written here, checked at
// a node, where the field returns the stored code times the height scale exactly.
TEST_CASE("README snippet: a 16-bit PNG as a grid_field in world units", "[io][readme]") {
    scratch_dir dir;
    const gorge::grid<float> codes = random_codes(161, 161, 65535, 11);
    io::write_png16(dir.file("valley.png"), codes, io::height_mapping::absolute(0.0f, 65535.0f));

    gorge::io::heightmap in = gorge::io::read_heightmap(dir.file("valley.png"));  // 16-bit codes 0..65535
    auto place = gorge::grid_placement<float>::spanning(glm::vec2(4000.0f),      // 4 km across
                                                         in.heights.width(), in.heights.height());
    place.height_scale = 1200.0f / 65535.0f;                                      // code -> metres
    gorge::grid_field<float> terrain(in.heights, place);
    glm::vec3 h = terrain(glm::vec2(1250.0f, 730.0f));                            // (h, dh/dx, dh/dy)

    // 4000 m over 160 cells: 25 m a cell, so (1250, 730) lies inside cell (50, 29) and node (50, 30)
    // sits at (1250, 750).
    CHECK(std::isfinite(h.x));
    CHECK(std::isfinite(h.y));
    CHECK(std::isfinite(h.z));
    const glm::vec3 node = terrain(glm::vec2(1250.0f, 750.0f));
    CHECK(node.x == codes(50, 30) * place.height_scale);
}
