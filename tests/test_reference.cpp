// Replays every row of tests/data/reference (an independent implementation of the spec) through
// gorge in double (within 1e-9 on every output) and in float (within the documented bounds).
#include <cmath>
#include <cstdio>

#include "support/catch.hpp"
#include "support/reference.hpp"

using gorge_test::csv_table;
using gorge_test::with_hash;
using gorge_test::worst_error;

namespace {

constexpr double double_tolerance = 1e-9;
// float bounds from the foundation issue: height delta and noise 2e-5, ridge map 5e-3.
constexpr double float_height_tolerance = 2e-5;
constexpr double float_ridge_tolerance = 5e-3;
// Slopes are height differences divided by a gully width of ~scale/32 at the finest octave,
// so their float error is about 1/scale * 2^octaves larger than the height's.
constexpr double float_slope_tolerance = 5e-3;
// Rows farther than this from the origin are compared in double only (see the data README).
constexpr double float_max_coordinate = 8.0;

template <class T>
void check_noise_rows(double tol_value, double tol_grad) {
    const csv_table t("noise.csv");
    worst_error ev{"value"}, edx{"dx"}, edy{"dy"};
    std::size_t compared = 0;
    for (std::size_t r = 0; r < t.size(); ++r) {
        const double px = t.number(r, "px"), py = t.number(r, "py");
        if (std::is_same<T, float>::value && std::max(std::fabs(px), std::fabs(py)) > float_max_coordinate) continue;
        gorge::fbm_params<T> fp;
        fp.frequency = T(t.number(r, "freq"));
        fp.octaves = static_cast<int>(t.number(r, "octaves"));
        fp.lacunarity = T(t.number(r, "lacunarity"));
        fp.gain = T(t.number(r, "gain"));
        const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
        const glm::vec<3, T> n = with_hash(t.text(r, "hash"), [&](auto h) {
            return gorge::fbm<decltype(h)>(glm::vec<2, T>(T(px), T(py)), fp, seed);
        });
        ev.add(n.x, t.number(r, "value"), r);
        edx.add(n.y, t.number(r, "dx"), r);
        edy.add(n.z, t.number(r, "dy"), r);
        ++compared;
    }
    const char* ctx = std::is_same<T, float>::value ? "noise.csv float" : "noise.csv double";
    ev.print(ctx), edx.print(ctx), edy.print(ctx);
    CHECK(compared > 0);
    CHECK(ev.error <= tol_value);
    CHECK(edx.error <= tol_grad);
    CHECK(edy.error <= tol_grad);
}

template <class T>
void check_phacelle_rows(double tol) {
    const csv_table t("phacelle.csv");
    worst_error ec{"c"}, es{"s"}, ex{"sidex"}, ey{"sidey"};
    for (std::size_t r = 0; r < t.size(); ++r) {
        const glm::vec<2, T> q(T(t.number(r, "qx")), T(t.number(r, "qy")));
        const glm::vec<2, T> dir(T(t.number(r, "dirx")), T(t.number(r, "diry")));
        const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
        const auto res = with_hash(t.text(r, "hash"), [&](auto h) {
            return gorge::phacelle<decltype(h)>(q, dir, T(t.number(r, "cell_freq")), T(t.number(r, "phase_offset")),
                                                T(t.number(r, "normalization")), seed);
        });
        ec.add(res.phase.x, t.number(r, "c"), r);
        es.add(res.phase.y, t.number(r, "s"), r);
        ex.add(res.side.x, t.number(r, "sidex"), r);
        ey.add(res.side.y, t.number(r, "sidey"), r);
    }
    const char* ctx = std::is_same<T, float>::value ? "phacelle.csv float" : "phacelle.csv double";
    ec.print(ctx), es.print(ctx), ex.print(ctx), ey.print(ctx);
    CHECK(ec.error <= tol);
    CHECK(es.error <= tol);
    CHECK(ex.error <= tol * 8);  // side is scaled by 2π cell_freq
    CHECK(ey.error <= tol * 8);
}

struct filter_tolerances {
    double height, slope, magnitude, ridge, fade;
};

template <class T>
void check_filter_rows(filter_tolerances tol) {
    const csv_table t("erosion_filter.csv");
    worst_error eh{"height_delta"}, esx{"slope_delta_x"}, esy{"slope_delta_y"}, em{"magnitude"},
        erm{"ridge_map"}, ef{"fade_target"};
    for (std::size_t r = 0; r < t.size(); ++r) {
        const auto params = gorge_test::erosion_params_of<T>(t, r);
        REQUIRE(params.first_invalid() == nullptr);
        const glm::vec<2, T> p(T(t.number(r, "px")), T(t.number(r, "py")));
        const glm::vec<3, T> h(T(t.number(r, "h")), T(t.number(r, "hx")), T(t.number(r, "hy")));
        const T fade_in = T(t.number(r, "fade_target_in"));
        const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
        const gorge::erosion_result<T> res = with_hash(t.text(r, "hash"), [&](auto hash) {
            return gorge::erosion_filter<decltype(hash)>(p, h, fade_in, params, seed);
        });
        eh.add(res.height_delta, t.number(r, "height_delta"), r);
        esx.add(res.slope_delta.x, t.number(r, "slope_delta_x"), r);
        esy.add(res.slope_delta.y, t.number(r, "slope_delta_y"), r);
        em.add(res.magnitude, t.number(r, "magnitude"), r);
        erm.add(res.ridge_map, t.number(r, "ridge_map"), r);
        ef.add(res.fade_target, t.number(r, "fade_target"), r);
    }
    const char* ctx = std::is_same<T, float>::value ? "erosion_filter.csv float" : "erosion_filter.csv double";
    for (const worst_error* e : {&eh, &esx, &esy, &em, &erm, &ef}) e->print(ctx);
    CHECK(eh.error <= tol.height);
    CHECK(esx.error <= tol.slope);
    CHECK(esy.error <= tol.slope);
    CHECK(em.error <= tol.magnitude);
    CHECK(erm.error <= tol.ridge);
    CHECK(ef.error <= tol.fade);
}

template <class T>
void check_demo_rows(double tol_height, double tol_ridge) {
    const csv_table t("demo.csv");
    worst_error eh{"eroded_height"}, erm{"ridge_map"};
    for (std::size_t r = 0; r < t.size(); ++r) {
        const glm::vec<2, T> p(T(t.number(r, "px")), T(t.number(r, "py")));
        const auto seed = static_cast<std::uint32_t>(t.number(r, "seed"));
        const gorge::demo_sample<T> s = with_hash(t.text(r, "hash"), [&](auto hash) {
            return gorge::demo_pipeline<decltype(hash)>(p, seed);
        });
        eh.add(s.height, t.number(r, "eroded_height"), r);
        erm.add(s.ridge_map, t.number(r, "ridge_map"), r);
    }
    const char* ctx = std::is_same<T, float>::value ? "demo.csv float" : "demo.csv double";
    eh.print(ctx), erm.print(ctx);
    CHECK(eh.error <= tol_height);
    CHECK(erm.error <= tol_ridge);
}

}  // namespace

TEST_CASE("gradient noise and fBm match the reference", "[reference][noise]") {
    check_noise_rows<double>(double_tolerance, double_tolerance);
    check_noise_rows<float>(float_height_tolerance, float_slope_tolerance);
}

TEST_CASE("Phacelle noise matches the reference", "[reference][phacelle]") {
    check_phacelle_rows<double>(double_tolerance);
    check_phacelle_rows<float>(float_height_tolerance);
}

TEST_CASE("erosion filter matches the reference", "[reference][filter]") {
    const double d = double_tolerance;
    check_filter_rows<double>({d, d, d, d, d});
    check_filter_rows<float>({float_height_tolerance, float_slope_tolerance, float_height_tolerance,
                              float_ridge_tolerance, float_ridge_tolerance});
}

TEST_CASE("demo pipeline matches the reference", "[reference][demo]") {
    check_demo_rows<double>(double_tolerance, double_tolerance);
    check_demo_rows<float>(float_height_tolerance, float_ridge_tolerance);
}
