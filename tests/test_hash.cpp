// Hashes against tests/data/reference/hash.csv: pcg3d bit-exact in every lane type; the shadertoy
// hash bit-exact too, because this test is built with -ffp-contract=off (see tests/CMakeLists.txt).
#include <cstdint>
#include <set>
#include <utility>

#include "support/catch.hpp"
#include "support/reference.hpp"

using gorge_test::csv_table;

TEST_CASE("hash2 reproduces the reference bit for bit", "[reference][hash]") {
    const csv_table t("hash.csv");
    std::size_t pcg_rows = 0, shadertoy_rows = 0, mismatches = 0;
    for (std::size_t r = 0; r < t.size(); ++r) {
        const auto cx = static_cast<std::int32_t>(t.number(r, "cx"));
        const auto cy = static_cast<std::int32_t>(t.number(r, "cy"));
        const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
        const std::string name = t.text(r, "hash");
        const glm::vec2 h = gorge_test::with_hash(name, [&](auto hash) { return decltype(hash)::hash2(cx, cy, seed); });
        // The reference printed the float result in double precision: compare exactly.
        if (double(h.x) != t.number(r, "x") || double(h.y) != t.number(r, "y")) {
            ++mismatches;
            UNSCOPED_INFO("row " << r + 2 << " " << name << " (" << cx << ", " << cy << ", " << seed << "): got ("
                                 << h.x << ", " << h.y << ")");
        }
        // The lane entry point in double must give the same value as the float one.
        const glm::dvec2 hd = gorge_test::with_hash(name, [&](auto hash) {
            return decltype(hash)::template lattice2<double>(static_cast<std::uint32_t>(cx),
                                                             static_cast<std::uint32_t>(cy), seed);
        });
        CHECK(hd.x == double(h.x));
        CHECK(hd.y == double(h.y));
        (name == "pcg3d" ? pcg_rows : shadertoy_rows) += 1;
    }
    CHECK(mismatches == 0);
    CHECK(pcg_rows > 0);
    CHECK(shadertoy_rows > 0);
}

TEST_CASE("hash2 stays in [-1, 1) and the seed changes pcg3d", "[hash]") {
    std::set<std::pair<float, float>> seen;
    for (std::int32_t y = -20; y < 20; ++y) {
        for (std::int32_t x = -20; x < 20; ++x) {
            for (std::uint32_t seed : {0u, 1u, 0xFFFFFFFFu}) {
                const glm::vec2 h = gorge::pcg3d_hash::hash2(x, y, seed);
                REQUIRE(h.x >= -1.0f);
                REQUIRE(h.x < 1.0f);
                REQUIRE(h.y >= -1.0f);
                REQUIRE(h.y < 1.0f);
                seen.insert({h.x, h.y});
            }
            const glm::vec2 s = gorge::shadertoy_hash::hash2(x, y, 0);
            REQUIRE(s.x >= -1.0f);
            REQUIRE(s.x <= 1.0f);
            CHECK(s == gorge::shadertoy_hash::hash2(x, y, 12345));  // seed ignored, as documented
        }
    }
    // 4800 (point, seed) pairs: a working hash gives (almost) no collisions.
    CHECK(seen.size() > 4790);
    // Extreme lattice coordinates are defined (wrap-around, no overflow).
    const glm::vec2 a = gorge::pcg3d_hash::hash2(INT32_MAX, INT32_MIN, 7);
    CHECK(a.x >= -1.0f);
    CHECK(a.x < 1.0f);
}
