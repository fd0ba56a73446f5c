// Hashes against tests/data/reference/hash.csv: pcg3d bit-exact in every lane type; the shadertoy
// hash bit-exact too, because this test is built with -ffp-contract=off (see tests/CMakeLists.txt).
// prime_mix_hash against rows of an independent transcription, and the quality statistics of both
// exact hashes (uniformity, no correlation between neighbours, components or seeds).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

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

// ---- prime_mix_hash ------------------------------------------------------------------------------

namespace {

/// prime_mix_hash reference rows, computed by an independent transcription of its definition in
/// Python integers (explicit mod 2^32 after every product):
///   fin(h) = h ^= h >> 16; h *= 0x7FEB352D; h ^= h >> 15; h *= 0x846CA68B; h ^= h >> 16
///   rotl16(v) = (v << 16) | (v >> 16)
///   bits   = fin((cx * 0x9E3779B1) ^ rotl16(cy * 0x85EBCA77) ^ fin(seed ^ 0x27D4EB2F))
///   x = (bits >> 16) / 2^15 - 1,  y = (bits & 0xFFFF) / 2^15 - 1
struct prime_mix_row {
    std::int32_t cx, cy;
    std::uint32_t seed, bits;
    float x, y;
};
constexpr prime_mix_row prime_mix_rows[] = {
    {0, 0, 0u, 0x0153293Bu, -0.989654541015625f, -0.677886962890625f},
    {1, 0, 0u, 0xB2E694A2u, 0.39764404296875f, 0.16119384765625f},
    {0, 1, 0u, 0x1426E0DFu, -0.84259033203125f, 0.756805419921875f},
    {-1, -1, 0u, 0x5C7F48EAu, -0.277374267578125f, -0.43035888671875f},
    {12345, -678, 7u, 0x2DD6A3CBu, -0.64190673828125f, 0.279632568359375f},
    {-2147483647 - 1, 2147483647, 4294967295u, 0x65E8DECAu, -0.203857421875f, 0.74053955078125f},
    {3, 4, 1337u, 0xE2553717u, 0.768218994140625f, -0.569610595703125f},
};

/// Pearson correlation of two equally long samples.
double correlation(const std::vector<double>& a, const std::vector<double>& b) {
    const double n = double(a.size());
    double ma = 0, mb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
    ma /= n, mb /= n;
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    return sab / std::sqrt(saa * sbb);
}

/// Chi-square statistic of `values` in [-1, 1) over `bins` equal bins.
double chi_square(const std::vector<double>& values, int bins) {
    std::vector<double> count(std::size_t(bins), 0.0);
    for (double v : values) count[std::size_t(std::min(bins - 1, int((v + 1.0) * 0.5 * bins)))] += 1.0;
    const double expected = double(values.size()) / bins;
    double chi2 = 0;
    for (double c : count) chi2 += (c - expected) * (c - expected) / expected;
    return chi2;
}

/// The six lowest bits of a 16-bit component (value + 1) 2^15, mapped back to [-1, 1): a hash whose
/// last mixing step is a multiply has its weakest bits there.
std::vector<double> low_bits(const std::vector<double>& values) {
    std::vector<double> low;
    low.reserve(values.size());
    for (double v : values) low.push_back(std::fmod(std::floor((v + 1.0) * 32768.0), 64.0) / 32.0 - 1.0);
    return low;
}

/// Hash components over a side x side block of lattice points at (x0, y0), component `which`.
template <class Hash>
std::vector<double> lattice_values(std::int32_t x0, std::int32_t y0, int side, std::uint32_t seed, int which) {
    std::vector<double> v;
    v.reserve(std::size_t(side) * std::size_t(side));
    for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) {
            const glm::vec2 h = Hash::hash2(x0 + x, y0 + y, seed);
            v.push_back(which == 0 ? h.x : h.y);
        }
    return v;
}

}  // namespace

namespace {
/// Checks a 16-bit-component policy against its reference rows: the 32-bit result (bits(cx, cy,
/// seed)), hash2 in float and lattice2 in double.
template <class Hash, class Bits, std::size_t N>
void check_reference_rows(const prime_mix_row (&rows)[N], Bits bits) {
    for (const prime_mix_row& r : rows) {
        CAPTURE(r.cx, r.cy, r.seed);
        const auto cx = static_cast<std::uint32_t>(r.cx), cy = static_cast<std::uint32_t>(r.cy);
        CHECK(bits(cx, cy, r.seed) == r.bits);
        const glm::vec2 h = Hash::hash2(r.cx, r.cy, r.seed);
        CHECK(h.x == r.x);
        CHECK(h.y == r.y);
        const glm::dvec2 hd = Hash::template lattice2<double>(cx, cy, r.seed);
        CHECK(hd.x == double(r.x));
        CHECK(hd.y == double(r.y));
    }
}
}  // namespace

TEST_CASE("prime_mix_hash reproduces its definition bit for bit", "[hash]") {
    check_reference_rows<gorge::prime_mix_hash>(prime_mix_rows, gorge::detail::prime_mix<std::uint32_t>);
}

/// prime_xor_hash reference rows, from the same kind of independent transcription:
///   a = (cx * 0x9E3779B1) ^ fin(seed ^ 0x27D4EB2F) ^ rotl16(cy * 0x85EBCA77)
///   h = a * 0x7FEB352D; h ^= h >> 16
///   x = (h & 0xFFFF0000, read as a signed 32-bit integer) / 2^31,  y = (h & 0xFFFF) / 2^15 - 1
constexpr prime_mix_row prime_xor_rows[] = {
    {0, 0, 0u, 0x9FDDAFA5u, -0.751068115234375f, 0.372222900390625f},
    {1, 0, 0u, 0x8587AC72u, -0.956817626953125f, 0.34722900390625f},
    {0, 1, 0u, 0xA69C10EBu, -0.6983642578125f, -0.867828369140625f},
    {-1, -1, 0u, 0x31426DC5u, 0.38482666015625f, -0.142425537109375f},
    {12345, -678, 7u, 0x535D2035u, 0.651275634765625f, -0.748382568359375f},
    {-2147483647 - 1, 2147483647, 4294967295u, 0x306A0451u, 0.37823486328125f, -0.966278076171875f},
    {3, 4, 1337u, 0x91D4EF77u, -0.8607177734375f, 0.870819091796875f},
};

TEST_CASE("prime_xor_hash reproduces its definition bit for bit", "[hash]") {
    check_reference_rows<gorge::prime_xor_hash>(prime_xor_rows, gorge::detail::prime_xor<std::uint32_t>);
}

namespace {
/// A policy with lattice2 only (no split form): kernels must fall back to it.
template <class Hash>
struct lattice2_only {
    template <class T>
    static gorge::detail::vec2<T> lattice2(gorge::detail::uint_t<T> cx, gorge::detail::uint_t<T> cy, std::uint32_t seed) {
        return Hash::template lattice2<T>(cx, cy, seed);
    }
    static glm::vec2 hash2(std::int32_t cx, std::int32_t cy, std::uint32_t seed) { return Hash::hash2(cx, cy, seed); }
};
}  // namespace

// The kernels hash through the split form (a column and a row part, then one combine per lattice
// point); a policy without it goes through lattice2. Both must give the same noise bit for bit.
TEMPLATE_TEST_CASE("the split form of a hash gives the noise of its lattice2", "[hash]", gorge::pcg3d_hash,
                   gorge::prime_mix_hash, gorge::prime_xor_hash) {
    using whole = lattice2_only<TestType>;
    STATIC_REQUIRE(!std::is_same<gorge::detail::hash_split<TestType>, gorge::detail::hash_split<whole>>::value);
    for (int i = 0; i < 4096; ++i) {
        const glm::dvec2 q(-40.0 + 0.0371 * i, 17.0 - 0.0213 * i + 1e-3 * (i % 7));
        const std::uint32_t seed = 2654435761u * std::uint32_t(i);
        CAPTURE(q.x, q.y, seed);
        const glm::vec2 qf(q);
        CHECK(gorge::gradient_noise<TestType>(qf, seed) == gorge::gradient_noise<whole>(qf, seed));
        CHECK(gorge::gradient_noise<TestType>(q, seed) == gorge::gradient_noise<whole>(q, seed));
        CHECK(gorge::value_noise<TestType>(qf, seed) == gorge::value_noise<whole>(qf, seed));
        const glm::vec2 dir(0.6f, -0.8f);
        const auto a = gorge::phacelle<TestType>(qf, dir, 0.7f, 0.25f, 0.5f, seed);
        const auto b = gorge::phacelle<whole>(qf, dir, 0.7f, 0.25f, 0.5f, seed);
        CHECK(a.phase == b.phase);
    }
}

// The pairs (axis_x_pair, axis_y_pair: two neighbouring lines from one multiply) are the axes of
// c and c + 1, also where c + 1 wraps around 2^32 and at the signed limits.
TEMPLATE_TEST_CASE("axis pairs are the axes of two neighbouring lines", "[hash]", gorge::pcg3d_hash,
                   gorge::prime_mix_hash, gorge::prime_xor_hash) {
    STATIC_REQUIRE(gorge::detail::has_axis_pairs<TestType>::value);
    std::vector<std::uint32_t> coords = {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
    for (std::uint32_t i = 0; i < 2000; ++i) coords.push_back(i * 2654435761u);
    for (std::uint32_t seed : {0u, 5u, 0xDEADBEEFu})
        for (std::uint32_t c : coords) {
            CAPTURE(c, seed);
            std::uint32_t x0 = 0, x1 = 0, y0 = 0, y1 = 0;
            TestType::axis_x_pair(c, seed, x0, x1);
            TestType::axis_y_pair(c, seed, y0, y1);
            CHECK(x0 == TestType::axis_x(c, seed));
            CHECK(x1 == TestType::axis_x(c + 1u, seed));
            CHECK(y0 == TestType::axis_y(c, seed));
            CHECK(y1 == TestType::axis_y(c + 1u, seed));
        }
    // A policy without pairs goes through two axis calls.
    STATIC_REQUIRE(!gorge::detail::has_axis_pairs<lattice2_only<TestType>>::value);
    std::uint32_t a = 0, b = 0;
    gorge::detail::axis_x_pair<lattice2_only<TestType>>(0xFFFFFFFFu, 3u, a, b);
    CHECK(a == 0xFFFFFFFFu);
    CHECK(b == 0u);
}

TEST_CASE("prime_mix_hash does not repeat along diagonals far apart", "[hash]") {
    // Two linear terms xored together would repeat with period (2^31, 2^31) and half-repeat at
    // (2^30, +-2^30); the rotated y product prevents it (in prime_xor too). pcg3d is held to the
    // same check.
    const std::int64_t shifts[][2] = {{1LL << 31, 1LL << 31}, {1LL << 30, 1LL << 30}, {1LL << 30, -(1LL << 30)},
                                      {1LL << 29, 1LL << 29}, {1LL << 31, 0}, {0, 1LL << 31}};
    for (const auto& shift : shifts) {
        int same_mix = 0, same_pcg = 0, same_xor = 0;
        for (std::int32_t y = -32; y < 32; ++y)
            for (std::int32_t x = -32; x < 32; ++x) {
                const auto sx = static_cast<std::int32_t>(static_cast<std::uint32_t>(x) + static_cast<std::uint32_t>(shift[0]));
                const auto sy = static_cast<std::int32_t>(static_cast<std::uint32_t>(y) + static_cast<std::uint32_t>(shift[1]));
                same_mix += gorge::prime_mix_hash::hash2(x, y, 3u) == gorge::prime_mix_hash::hash2(sx, sy, 3u);
                same_pcg += gorge::pcg3d_hash::hash2(x, y, 3u) == gorge::pcg3d_hash::hash2(sx, sy, 3u);
                same_xor += gorge::prime_xor_hash::hash2(x, y, 3u) == gorge::prime_xor_hash::hash2(sx, sy, 3u);
            }
        CAPTURE(shift[0], shift[1]);
        CHECK(same_mix <= 1);  // 4096 pairs: an accidental equal pair has probability about 2^-20
        CHECK(same_pcg <= 1);
        CHECK(same_xor <= 1);
    }
}

// Quality of the lattice values, the same statistics for every exact policy: each component, and
// the lowest six of its 16 leading bits, is uniform on [-1, 1) (chi-square over 64 bins; 63 degrees of freedom, mean 63, standard deviation
// 11.2: the bound 130 is six standard deviations), and neighbouring points, the two components of
// a point and neighbouring seeds are uncorrelated (262,144 pairs: a correlation's standard error is
// 1/512 = 0.002; the bound 0.012 is six of them). A hash with lattice artefacts (values repeating
// along a row, a diagonal or a knight's move) fails the correlation checks.
TEMPLATE_TEST_CASE("exact hashes are uniform and uncorrelated", "[hash]", gorge::prime_mix_hash, gorge::pcg3d_hash,
                   gorge::prime_xor_hash) {
    constexpr int side = 512;
    constexpr double chi_bound = 130.0, correlation_bound = 0.012;
    for (const std::uint32_t seed : {0u, 1u, 0xDEADBEEFu}) {
        for (const auto& origin : {std::pair<std::int32_t, std::int32_t>{-256, -256}, {1 << 20, -(1 << 24)}}) {
            CAPTURE(seed, origin.first, origin.second);
            const auto x = lattice_values<TestType>(origin.first, origin.second, side, seed, 0);
            const auto y = lattice_values<TestType>(origin.first, origin.second, side, seed, 1);
            CHECK(chi_square(x, 64) < chi_bound);
            CHECK(chi_square(y, 64) < chi_bound);
            CHECK(chi_square(low_bits(x), 64) < chi_bound);
            CHECK(chi_square(low_bits(y), 64) < chi_bound);
            CHECK(std::fabs(correlation(x, y)) < correlation_bound);
            for (const auto& offset : {std::pair<int, int>{1, 0}, {0, 1}, {1, 1}, {1, -1}, {2, 1}, {-1, 2}, {16, 0}, {0, 16}}) {
                CAPTURE(offset.first, offset.second);
                const auto shifted_x = lattice_values<TestType>(origin.first + offset.first,
                                                                origin.second + offset.second, side, seed, 0);
                const auto shifted_y = lattice_values<TestType>(origin.first + offset.first,
                                                                origin.second + offset.second, side, seed, 1);
                CHECK(std::fabs(correlation(x, shifted_x)) < correlation_bound);
                CHECK(std::fabs(correlation(y, shifted_y)) < correlation_bound);
                CHECK(std::fabs(correlation(x, shifted_y)) < correlation_bound);
            }
            const auto next_seed = lattice_values<TestType>(origin.first, origin.second, side, seed + 1u, 0);
            CHECK(std::fabs(correlation(x, next_seed)) < correlation_bound);
        }
    }
}
