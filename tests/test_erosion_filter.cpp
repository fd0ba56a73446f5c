// Erosion filter properties beyond the reference rows: tile seams, parameter validation, helpers,
// and finiteness on awkward inputs.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <gorge/gorge.hpp>

#include "support/catch.hpp"

namespace {

/// Fills a w x h tile of the demo terrain whose first sample sits at lattice index (x0, y0) of a
/// global grid with the given spacing. Positions are computed from global indices, as a chunked
/// engine does, so tiles that overlap must agree bit for bit.
template <class T>
std::vector<T> demo_tile(int x0, int y0, int w, int h, T spacing) {
    std::vector<T> out(std::size_t(w) * std::size_t(h));
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const glm::vec<2, T> p(T(x0 + x) * spacing, T(y0 + y) * spacing);
            out[std::size_t(y) * std::size_t(w) + std::size_t(x)] = gorge::demo_pipeline(p).height;
        }
    return out;
}

}  // namespace

TEST_CASE("a grid evaluated as one tile equals the same grid as four tiles", "[filter][tiles]") {
    const int n = 48, half = n / 2;
    const float spacing = 1.0f / 64.0f;
    const int ox = -17, oy = 5;  // arbitrary global origin, including negative coordinates
    const std::vector<float> whole = demo_tile<float>(ox, oy, n, n, spacing);
    // Four tiles with different origins (and unequal sizes), stitched back together.
    const int split_x = half - 3, split_y = half + 5;
    struct tile { int x, y, w, h; };
    const tile tiles[] = {{0, 0, split_x, split_y},
                          {split_x, 0, n - split_x, split_y},
                          {0, split_y, split_x, n - split_y},
                          {split_x, split_y, n - split_x, n - split_y}};
    std::size_t mismatches = 0;
    for (const tile& t : tiles) {
        const std::vector<float> part = demo_tile<float>(ox + t.x, oy + t.y, t.w, t.h, spacing);
        for (int y = 0; y < t.h; ++y)
            for (int x = 0; x < t.w; ++x)
                mismatches += part[std::size_t(y * t.w + x)] != whole[std::size_t((t.y + y) * n + t.x + x)];
    }
    CHECK(mismatches == 0);
    // And the tile is not trivially constant.
    float lo = whole[0], hi = whole[0];
    for (float v : whole) lo = std::min(lo, v), hi = std::max(hi, v);
    CHECK(hi - lo > 0.01f);
}

TEST_CASE("erosion_params::validate names each bad parameter", "[filter][validation]") {
    using P = gorge::erosion_params<double>;
    const P ok;
    CHECK_NOTHROW(ok.validate());
    struct bad_case { const char* name; void (*spoil)(P&); };
    const bad_case cases[] = {
        {"scale", [](P& p) { p.scale = 0; }},
        {"scale", [](P& p) { p.scale = -1; }},
        {"scale", [](P& p) { p.scale = NAN; }},
        {"strength", [](P& p) { p.strength = INFINITY; }},
        {"gully_weight", [](P& p) { p.gully_weight = NAN; }},
        {"detail", [](P& p) { p.detail = -INFINITY; }},
        {"rounding", [](P& p) { p.rounding.w = NAN; }},
        {"onset", [](P& p) { p.onset.z = INFINITY; }},
        {"assumed_slope", [](P& p) { p.assumed_slope.y = NAN; }},
        {"octaves", [](P& p) { p.octaves = -1; }},
        {"octaves", [](P& p) { p.octaves = 33; }},
        {"lacunarity", [](P& p) { p.lacunarity = 0; }},
        {"gain", [](P& p) { p.gain = NAN; }},
        {"cell_scale", [](P& p) { p.cell_scale = 0; }},
        {"cell_scale", [](P& p) { p.cell_scale = -0.5; }},
        {"normalization", [](P& p) { p.normalization = -0.01; }},
        {"normalization", [](P& p) { p.normalization = 1.01; }},
        {"normalization", [](P& p) { p.normalization = NAN; }},
    };
    for (const bad_case& c : cases) {
        P p = ok;
        c.spoil(p);
        try {
            p.validate();
            FAIL("validate() accepted a bad " << c.name);
        } catch (const std::invalid_argument& e) {
            INFO("expected '" << c.name << "' in: " << e.what());
            CHECK(std::string(e.what()).find(c.name) != std::string::npos);
        }
    }
    P edge = ok;
    edge.octaves = 0;
    edge.normalization = 1;
    CHECK_NOTHROW(edge.validate());
    edge.octaves = 32;
    edge.normalization = 0;
    CHECK_NOTHROW(edge.validate());
}

TEST_CASE("filter outputs stay finite and bounded on awkward inputs", "[filter]") {
    gorge::erosion_params<double> params;
    params.normalization = 1.0;  // the case where the Phacelle blend can cancel out
    for (int i = 0; i < 2000; ++i) {
        const double t = i * 0.173;
        const glm::dvec2 p(std::sin(t) * 40.0, std::cos(t * 1.3) * 40.0);
        // Zero, tiny, huge and ordinary slopes; fade targets beyond the clamp.
        const double slopes[] = {0.0, 1e-30, 1e-12, 0.3, 1e6};
        const double s = slopes[i % 5];
        const glm::dvec3 h(0.5, s * std::cos(t), s * std::sin(t));
        const auto r = gorge::erosion_filter(p, h, 3.0 * std::sin(t * 0.7), params, std::uint32_t(i));
        REQUIRE(std::isfinite(r.height_delta));
        REQUIRE(std::isfinite(r.slope_delta.x));
        REQUIRE(std::isfinite(r.slope_delta.y));
        REQUIRE(std::isfinite(r.ridge_map));
        // |faded| <= max(|F|, gully_weight) <= 1 per octave, so |height_delta| <= magnitude.
        REQUIRE(std::fabs(r.height_delta) <= r.magnitude * (1 + 1e-12));
        REQUIRE(std::fabs(r.ridge_map) <= 1.0 + 1e-12);
        REQUIRE(std::fabs(r.fade_target) <= 1.0 + 1e-12);
    }
}

TEST_CASE("zero octaves leave the terrain untouched", "[filter]") {
    gorge::erosion_params<double> params;
    params.octaves = 0;
    const auto r = gorge::erosion_filter(glm::dvec2(1.5, -2.0), glm::dvec3(0.4, 0.2, -0.1), 0.3, params);
    CHECK(r.height_delta == 0.0);
    CHECK(r.slope_delta == glm::dvec2(0.0));
    CHECK(r.magnitude == 0.0);
    CHECK(r.fade_target == 0.3);
}

TEST_CASE("fade target and height offset helpers follow the spec", "[filter]") {
    CHECK(gorge::fade_target_from_altitude(0.25, 0.25, 0.75) == -1.0);
    CHECK(gorge::fade_target_from_altitude(0.75, 0.25, 0.75) == 1.0);
    CHECK(gorge::fade_target_from_altitude(0.5, 0.25, 0.75) == 0.0);
    CHECK(gorge::fade_target_from_altitude(-3.0, 0.25, 0.75) == -1.0);
    CHECK(gorge::fade_target_from_altitude(9.0, 0.25, 0.75) == 1.0);
    CHECK(gorge::fade_target_from_altitude(0.375, 0.25, 0.75) == Approx(-0.5));

    gorge::erosion_result<double> r{};
    r.height_delta = 0.01;
    r.magnitude = 0.1;
    // (o, k) = (-0.65, 0): shift by o * magnitude.
    CHECK(gorge::apply_height_offset(0.5, r, 0.8, glm::dvec2(-0.65, 0.0)) == Approx(0.5 + 0.01 - 0.065));
    // k = 1: shift by -F0c * magnitude, with F0 clamped to [-1, 1].
    CHECK(gorge::apply_height_offset(0.5, r, 2.0, glm::dvec2(-0.65, 1.0)) == Approx(0.5 + 0.01 - 0.1));
    CHECK(gorge::apply_height_offset(0.5, r, -0.5, glm::dvec2(0.0, 0.5)) == Approx(0.5 + 0.01 + 0.025));
}

TEST_CASE("the GLSL-named helpers keep GLSL semantics", "[math]") {
    using namespace gorge::detail;
    CHECK(sign(0.0) == 0.0);
    CHECK(sign(-0.0) == 0.0);
    CHECK(sign(-2.5f) == -1.0f);
    CHECK(sign(1e-30) == 1.0);
    CHECK(fract(-0.25) == 0.75);
    CHECK(smooth_start(0.0, 0.0) == 0.0);
    CHECK(smooth_start(0.05, 0.1) == Approx(0.0125));
    CHECK(smooth_start(0.3, 0.1) == Approx(0.25));
    CHECK(ease_out(2.0) == 1.0);
    CHECK(ease_out(0.5) == 0.75);
    CHECK(pow_inv(0.5, 3.0) == 0.875);
    const glm::dvec2 z = safe_normalize(glm::dvec2(0.0));
    CHECK(z == glm::dvec2(0.0));
    CHECK(length(safe_normalize(glm::dvec2(3.0, -4.0))) == Approx(1.0));
    CHECK(value_ops<float>::to_int(NAN) == INT32_MIN);
    CHECK(value_ops<double>::to_int(1e300) == 2147483520);
    CHECK(value_ops<double>::to_int(-7.0) == -7);
}

namespace {
// The usage snippet of README.md, verbatim: it must compile and be the demo pipeline.
float eroded_height(glm::vec2 p) {
    // Input terrain: fBm height with its exact gradient (value, d/dx, d/dy).
    gorge::fbm_params<float> hills;            // frequency 3, 3 octaves, lacunarity 2, gain 0.1
    const glm::vec3 n = gorge::fbm(p, hills) * 0.125f;
    const glm::vec3 terrain(0.5f + 0.5f * n.x, 0.5f * n.y, 0.5f * n.z);

    // Fade target: -1 in valleys, +1 on peaks.
    const float fade = gorge::fade_target_from_altitude(terrain.x, 0.4625f, 0.5375f);

    gorge::erosion_params<float> params;       // the published demo's defaults
    params.validate();                         // throws std::invalid_argument naming a bad parameter
    const gorge::erosion_result<float> r = gorge::erosion_filter(p, terrain, fade, params, /*seed*/ 7);
    return gorge::apply_height_offset(terrain.x, r, fade, glm::vec2(-0.65f, 0.0f));
}
}  // namespace

TEST_CASE("the README usage snippet computes the demo pipeline", "[filter][docs]") {
    // The snippet writes the demo's fade target with fade_target_from_altitude and passes seed 7
    // to the filter only; the demo pipeline seeds the fBm too, so compare with the same split.
    double worst = 0.0;
    for (int i = 0; i < 200; ++i) {
        const glm::vec2 p(0.013f * float(i), 1.0f - 0.007f * float(i));
        const glm::vec3 n = gorge::fbm(p, gorge::fbm_params<float>{}) * 0.125f;
        const float f0 = glm::clamp(n.x / (0.125f * 0.6f), -1.0f, 1.0f);
        const glm::vec3 terrain(0.5f + 0.5f * n.x, 0.5f * n.y, 0.5f * n.z);
        const auto r = gorge::erosion_filter(p, terrain, f0, gorge::erosion_params<float>{}, 7u);
        const float expected = gorge::apply_height_offset(terrain.x, r, f0, glm::vec2(-0.65f, 0.0f));
        worst = std::max(worst, double(std::fabs(eroded_height(p) - expected)));
    }
    INFO("worst difference " << worst);
    CHECK(worst < 1e-6);  // the two fade-target formulas differ only by float rounding
}
