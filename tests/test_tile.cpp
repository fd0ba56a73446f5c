// Batch API over arrays (gorge/simd/batch.hpp) and the tile API (gorge/simd/tile.hpp): results must not
// depend on a point's place in a batch, on the tile split or on the thread count (bit for bit),
// and must agree with the scalar kernels (worst errors printed). Also the documented errors.
// Last, gorge's threads (gorge/detail/parallel.hpp) as tiles and the tiled droplet schedule use
// them: guided chunks, exceptions, threads started once per call, no thread left running, and
// the tiled droplet schedule against its definition (colours one after another).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <climits>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/finite_grid.hpp"
#include "support/thread_counts.hpp"
#include "support/thread_start_failure.hpp"

#include <gorge/simd/batch.hpp>
#include <gorge/filter/demo_pipeline.hpp>
#include <gorge/simd/tile.hpp>
#include <gorge/erosion/droplet.hpp>
#include <gorge/erosion/thermal.hpp>

namespace {

// Batch versus scalar agreement: |a - b| <= tolerance * max(1, |b|); see tests/test_simd.cpp for
// why this mixed relative/absolute measure is the meaningful one for outputs that cross zero.
constexpr double agreement_tolerance = 2e-6;

double agreement_error(double got, double want) { return std::fabs(got - want) / std::max(1.0, std::fabs(want)); }

constexpr std::size_t lanes = gorge::simd_lanes<float>();

/// A height field usable with scalars and batches: 4-octave fBm around 0.5, with its gradient.
struct fbm_field {
    gorge::fbm_params<float> params;
    fbm_field() {
        params.frequency = 2.0f;
        params.octaves = 4;
        params.gain = 0.4f;
    }
    template <class T>
    glm::vec<3, T> operator()(const glm::vec<2, T>& p) const {
        const glm::vec<3, T> n = gorge::fbm(p, params, 21u);
        return glm::vec<3, T>(T(0.5f) + T(0.3f) * n.x, T(0.3f) * n.y, T(0.3f) * n.z);
    }
};

/// Output buffers of one tile, owned, with an optional row padding (stride > width).
struct tile_data {
    std::ptrdiff_t w, h, stride;
    std::vector<float> height, ridge, gx, gy;
    tile_data(std::ptrdiff_t width, std::ptrdiff_t rows, std::ptrdiff_t pad = 0)
        : w(width), h(rows), stride(width + pad), height(std::size_t(stride * rows), -7.0f), ridge(height), gx(height),
          gy(height) {}
    gorge::tile_buffers<float> buffers() {
        gorge::tile_buffers<float> b;
        b.height = gorge::grid_view<float>(height.data(), w, h, stride);
        b.ridge_map = gorge::grid_view<float>(ridge.data(), w, h, stride);
        b.gradient_x = gorge::grid_view<float>(gx.data(), w, h, stride);
        b.gradient_y = gorge::grid_view<float>(gy.data(), w, h, stride);
        return b;
    }
    float at(const std::vector<float>& v, std::ptrdiff_t x, std::ptrdiff_t y) const {
        return v[std::size_t(y * stride + x)];
    }
};

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

gorge::tile_settings<float> demo_like_settings() {
    gorge::tile_settings<float> s;
    s.valley_altitude = 0.4f;
    s.peak_altitude = 0.6f;
    s.height_offset = {-0.65f, 0.0f};
    s.seed = 5;
    return s;
}

gorge::tile_sampling<float> sampling() {
    gorge::tile_sampling<float> s;
    s.origin = {-0.3f, 0.7f};
    s.spacing = {1.0f / 97.0f, 1.0f / 89.0f};
    return s;
}

}  // namespace

TEST_CASE("tile: any split, width, origin and thread count gives the same bits", "[tile]") {
    const fbm_field field;
    const auto smp = sampling();
    auto settings = demo_like_settings();
    // Reference: one 61 x 140 tile whose first sample is the global sample (-9, 4), one thread.
    // Its 8540 points are worth 3 threads (gorge::tile_points_per_thread).
    const std::int64_t ref_x = -9, ref_y = 4;
    tile_data ref(61, 140);
    gorge::erode_tile(field, smp, ref_x, ref_y, ref.buffers(), settings);

    struct piece {
        std::ptrdiff_t x, y, w, h;  // relative to the reference tile
        unsigned threads;
        std::ptrdiff_t pad;
    };
    // Widths around the batch width put every point into every lane position; 7 threads asked for
    // a small piece run on one; the paddings exercise strided buffers.
    const std::vector<piece> pieces = {
        {0, 0, 61, 140, 2, 0}, {0, 0, 61, 140, 3, 5}, {0, 0, 61, 140, 7, 1},  {0, 0, 61, 140, 0, 0},
        {1, 0, 1, 1, 1, 0},    {3, 2, 5, 5, 7, 0},    {17, 1, 33, 9, 3, 2},   {60, 22, 1, 1, 2, 0},
        {7, 3, std::ptrdiff_t(lanes) - 1, 4, 2, 0},   {5, 6, std::ptrdiff_t(lanes) + 1, 7, 1, 3},
        {2, 11, 2 * std::ptrdiff_t(lanes) + 3, 12, 7, 0}};
    std::size_t compared = 0, differing = 0;
    for (const piece& pc : pieces) {
        if (pc.w <= 0 || pc.x + pc.w > ref.w || pc.y + pc.h > ref.h) continue;  // lanes - 1 == 0 without SIMD
        tile_data t(pc.w, pc.h, pc.pad);
        settings.threads = pc.threads;
        gorge::erode_tile(field, smp, ref_x + pc.x, ref_y + pc.y, t.buffers(), settings);
        for (std::ptrdiff_t y = 0; y < pc.h; ++y)
            for (std::ptrdiff_t x = 0; x < pc.w; ++x) {
                const bool same = same_bits(t.at(t.height, x, y), ref.at(ref.height, pc.x + x, pc.y + y)) &&
                                  same_bits(t.at(t.ridge, x, y), ref.at(ref.ridge, pc.x + x, pc.y + y)) &&
                                  same_bits(t.at(t.gx, x, y), ref.at(ref.gx, pc.x + x, pc.y + y)) &&
                                  same_bits(t.at(t.gy, x, y), ref.at(ref.gy, pc.x + x, pc.y + y));
                differing += same ? 0 : 1;
                ++compared;
            }
        // Row padding is never written.
        if (pc.pad > 0) CHECK(t.height[std::size_t(pc.w)] == -7.0f);
    }
    std::printf("  tile splits: %zu samples compared bit for bit over %zu pieces, %zu differ (batch width %zu)\n",
                compared, pieces.size(), differing, lanes);
    CHECK(compared > 2000);
    CHECK(differing == 0);
}

TEST_CASE("tile: agrees with the scalar kernels sample by sample", "[tile]") {
    const fbm_field field;
    const auto smp = sampling();
    const auto settings = demo_like_settings();
    tile_data t(37, 19);
    gorge::erode_tile(field, smp, 100, -50, t.buffers(), settings);
    double e_height = 0, e_ridge = 0, e_gx = 0, e_gy = 0;
    for (std::ptrdiff_t y = 0; y < t.h; ++y)
        for (std::ptrdiff_t x = 0; x < t.w; ++x) {
            // Independent restatement of the documented lattice rule and fade rule.
            const glm::vec2 p(float(std::fma(double(smp.spacing.x), double(100 + x), double(smp.origin.x))),
                              float(std::fma(double(smp.spacing.y), double(-50 + y), double(smp.origin.y))));
            const glm::vec3 h = field(p);
            const float fade = gorge::fade_target_from_altitude(h.x, 0.4f, 0.6f);
            const auto r = gorge::erosion_filter(p, h, fade, settings.erosion, settings.seed);
            const float height = gorge::apply_height_offset(h.x, r, fade, glm::vec2(-0.65f, 0.0f));
            e_height = std::max(e_height, agreement_error(t.at(t.height, x, y), height));
            e_ridge = std::max(e_ridge, agreement_error(t.at(t.ridge, x, y), r.ridge_map));
            e_gx = std::max(e_gx, agreement_error(t.at(t.gx, x, y), h.y + r.slope_delta.x));
            e_gy = std::max(e_gy, agreement_error(t.at(t.gy, x, y), h.z + r.slope_delta.y));
        }
    std::printf("  tile vs scalar: worst error height %.3e, ridge %.3e, gradient %.3e / %.3e\n", e_height, e_ridge,
                e_gx, e_gy);
    CHECK(e_height <= agreement_tolerance);
    CHECK(e_ridge <= agreement_tolerance);
    CHECK(e_gx <= agreement_tolerance);
    CHECK(e_gy <= agreement_tolerance);
}

TEST_CASE("tile: a field may supply its own fade target; the demo pipeline as a tile", "[tile]") {
    // The published demo (gorge/filter/demo_pipeline.hpp) restated as a field with its fade target.
    const auto demo_field = [](const auto& p) {
        using T = std::decay_t<decltype(p.x)>;
        const gorge::fbm_params<float> fp = gorge::demo::height_fbm<float>();
        const glm::vec<3, T> n = gorge::fbm(p, fp) * T(0.125f);
        const T fade = gorge::detail::clamp(n.x / T(0.125f * 0.6f), T(-1), T(1));
        return gorge::height_sample<T>{glm::vec<3, T>(T(0.5f) + T(0.5f) * n.x, T(0.5f) * n.y, T(0.5f) * n.z), fade};
    };
    gorge::tile_settings<float> settings;
    settings.height_offset = {-0.65f, 0.0f};
    settings.threads = 2;
    gorge::tile_sampling<float> smp;
    smp.spacing = {1.0f / 64.0f, 1.0f / 64.0f};
    tile_data t(29, 13);
    gorge::erode_tile(demo_field, smp, 3, 8, t.buffers(), settings);
    double e_height = 0, e_ridge = 0;
    for (std::ptrdiff_t y = 0; y < t.h; ++y)
        for (std::ptrdiff_t x = 0; x < t.w; ++x) {
            const auto s = gorge::demo_pipeline(glm::vec2(float(3 + x) / 64.0f, float(8 + y) / 64.0f));
            e_height = std::max(e_height, agreement_error(t.at(t.height, x, y), s.height));
            e_ridge = std::max(e_ridge, agreement_error(t.at(t.ridge, x, y), s.ridge_map));
        }
    std::printf("  demo tile vs scalar demo_pipeline: worst error height %.3e, ridge %.3e\n", e_height, e_ridge);
    CHECK(e_height <= agreement_tolerance);
    CHECK(e_ridge <= agreement_tolerance);

    // A vec3 field and the same field returning the documented fade rule itself: identical bits.
    const fbm_field field;
    const auto with_rule = [&](const auto& p) {
        using T = std::decay_t<decltype(p.x)>;
        const glm::vec<3, T> h = field(p);
        return gorge::height_sample<T>{h, gorge::fade_target_from_altitude(h.x, T(0.4f), T(0.6f))};
    };
    auto s2 = demo_like_settings();
    tile_data a(19, 5), b(19, 5);
    gorge::erode_tile(field, sampling(), 0, 0, a.buffers(), s2);
    s2.valley_altitude = 10.0f;  // ignored for height_sample fields
    gorge::erode_tile(with_rule, sampling(), 0, 0, b.buffers(), s2);
    CHECK(a.height == b.height);
    CHECK(a.ridge == b.ridge);
}

TEST_CASE("tile: evaluate_tile fills the raw field", "[tile]") {
    const fbm_field field;
    const auto smp = sampling();
    tile_data t(21, 6);
    auto b = t.buffers();
    b.ridge_map = {};
    gorge::evaluate_tile(field, smp, -4, 2, b, 3);
    double e = 0;
    for (std::ptrdiff_t y = 0; y < t.h; ++y)
        for (std::ptrdiff_t x = 0; x < t.w; ++x) {
            const glm::vec2 p(gorge::detail::lattice_coordinate(smp.origin.x, smp.spacing.x, -4 + x),
                              gorge::detail::lattice_coordinate(smp.origin.y, smp.spacing.y, 2 + y));
            const glm::vec3 h = field(p);
            e = std::max({e, agreement_error(t.at(t.height, x, y), h.x), agreement_error(t.at(t.gx, x, y), h.y),
                          agreement_error(t.at(t.gy, x, y), h.z)});
        }
    std::printf("  evaluate_tile vs scalar field: worst error %.3e\n", e);
    CHECK(e <= agreement_tolerance);
    CHECK(t.ridge[0] == -7.0f);  // not an output of evaluate_tile
}

TEST_CASE("batch: erosion_filter_points is independent of n and of a point's index", "[batch]") {
    const std::size_t n = 3 * lanes + 5;
    std::vector<float> x(n), y(n), h(n), sx(n), sy(n), fade(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = 0.37f * float(i) - 2.0f, y[i] = 0.11f * float(i * i % 17);
        h[i] = 0.5f, sx[i] = 0.4f - 0.05f * float(i % 9), sy[i] = 0.3f * float(i % 4) - 0.5f;
        fade[i] = float(i % 5) * 0.5f - 1.0f;
    }
    const gorge::erosion_params<float> params;
    const auto run = [&](std::size_t first, std::size_t count, std::vector<float>& delta, std::vector<float>& ridge) {
        delta.assign(count, 0.0f), ridge.assign(count, 0.0f);
        gorge::erosion_points_input<float> in;
        in.x = x.data() + first, in.y = y.data() + first, in.height = h.data() + first;
        in.slope_x = sx.data() + first, in.slope_y = sy.data() + first, in.fade_target = fade.data() + first;
        in.n = count;
        gorge::erosion_points_output<float> out;
        out.height_delta = delta.data(), out.ridge_map = ridge.data();
        gorge::erosion_filter_points(in, params, out, 4u);
    };
    std::vector<float> all_delta, all_ridge;
    run(0, n, all_delta, all_ridge);
    double e = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto r = gorge::erosion_filter(glm::vec2(x[i], y[i]), glm::vec3(h[i], sx[i], sy[i]), fade[i], params, 4u);
        e = std::max({e, agreement_error(all_delta[i], r.height_delta), agreement_error(all_ridge[i], r.ridge_map)});
    }
    std::printf("  erosion_filter_points vs scalar: worst error %.3e over %zu points\n", e, n);
    CHECK(e <= agreement_tolerance);
    std::size_t differing = 0;
    for (std::size_t first : {std::size_t(0), std::size_t(1), std::size_t(3), lanes - 1, lanes + 2})
        for (std::size_t count : {std::size_t(1), std::size_t(2), lanes - 1, lanes, lanes + 1, n / 2}) {
            if (count == 0 || first + count > n) continue;
            std::vector<float> d, r;
            run(first, count, d, r);
            for (std::size_t i = 0; i < count; ++i)
                differing += same_bits(d[i], all_delta[first + i]) && same_bits(r[i], all_ridge[first + i]) ? 0 : 1;
        }
    CHECK(differing == 0);
}

TEST_CASE("tile and batch: invalid input throws naming the parameter", "[tile][batch]") {
    const fbm_field field;
    tile_data t(8, 4);
    const auto b = t.buffers();
    auto smp = sampling();
    gorge::tile_settings<float> s;
    const auto message_of = [&](auto&& call) -> std::string {
        try {
            call();
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "no exception";
    };
    const auto erode = [&] { gorge::erode_tile(field, smp, 0, 0, b, s); };
    smp.spacing.x = 0.0f;
    CHECK(contains(message_of(erode), "spacing"));
    smp.spacing.x = std::nanf("");
    CHECK(contains(message_of(erode), "spacing"));
    smp = sampling();
    smp.origin.y = INFINITY;
    CHECK(contains(message_of(erode), "origin"));
    smp = sampling();
    s.valley_altitude = s.peak_altitude;
    CHECK(contains(message_of(erode), "valley_altitude"));
    s = {};
    s.erosion.octaves = 40;
    CHECK(contains(message_of(erode), "octaves"));
    s = {};
    s.height_offset.x = NAN;
    CHECK(contains(message_of(erode), "height_offset"));
    s = {};
    tile_data other(8, 5);
    auto mismatched = b;
    mismatched.ridge_map = other.buffers().ridge_map;
    CHECK(contains(message_of([&] { gorge::erode_tile(field, smp, 0, 0, mismatched, s); }), "ridge_map"));
    CHECK(contains(message_of([&] { gorge::erode_tile(field, smp, 0, 0, gorge::tile_buffers<float>{}, s); }),
                   "no output buffer"));
    CHECK(contains(message_of([&] { gorge::evaluate_tile(field, smp, 0, 0, b); }), "ridge_map"));

    CHECK(contains(message_of([&] { gorge::erode_tile(field, smp, INT64_MAX - 3, 0, b, s); }), "first_x"));
    gorge::tile_buffers<float> height_only;
    height_only.height = b.height;
    CHECK(contains(message_of([&] { gorge::evaluate_tile(field, smp, 0, INT64_MAX, height_only); }), "first_y"));

    gorge::erosion_points_input<float> in;
    in.n = 3;
    CHECK(contains(message_of([&] { gorge::erosion_filter_points(in, gorge::erosion_params<float>{}, {}); }),
                   "must not be null"));

    // An exception thrown by the field on a worker thread reaches the caller (a tile worth 3
    // threads: every worker throws at its first batch).
    s.threads = 3;
    const auto throwing = [](const auto& p) -> glm::vec<3, std::decay_t<decltype(p.x)>> {
        (void)p;
        throw std::runtime_error("field failed");
    };
    tile_data large(64, 2 * std::ptrdiff_t(gorge::tile_points_per_thread) / 64 + 1);
    CHECK_THROWS_AS(gorge::erode_tile(throwing, smp, 0, 0, large.buffers(), s), std::runtime_error);
}

TEST_CASE("tile: double tiles are deterministic and match the scalar double kernels", "[tile]") {
    const auto field = [](const auto& p) {
        using T = std::decay_t<decltype(p.x)>;
        gorge::fbm_params<double> fp;
        fp.octaves = 4;
        const glm::vec<3, T> n = gorge::fbm(p, fp, 3u);
        return glm::vec<3, T>(T(0.5) + T(0.3) * n.x, T(0.3) * n.y, T(0.3) * n.z);
    };
    gorge::tile_sampling<double> smp;
    smp.origin = {1.5, -0.25};
    smp.spacing = {1.0 / 50.0, 1.0 / 40.0};
    gorge::tile_settings<double> settings;
    settings.valley_altitude = 0.4;
    settings.peak_altitude = 0.6;
    const auto fill = [&](std::int64_t x0, std::int64_t y0, std::ptrdiff_t w, std::ptrdiff_t h, unsigned threads) {
        std::vector<double> out(std::size_t(w * h));
        gorge::tile_buffers<double> b;
        b.height = gorge::grid_view<double>(out.data(), w, h);
        settings.threads = threads;
        gorge::erode_tile(field, smp, x0, y0, b, settings);
        return out;
    };
    const std::vector<double> whole = fill(0, 0, 23, 7, 1);
    // 23 x 400 points are worth 3 threads (gorge::tile_points_per_thread).
    const std::vector<double> tall = fill(0, 0, 23, 400, 1), threaded = fill(0, 0, 23, 400, 3);
    const std::vector<double> part = fill(5, 2, 11, 4, 2);  // a sub-tile at (5, 2), 11 x 4
    CHECK(tall == threaded);
    CHECK(std::equal(whole.begin(), whole.end(), tall.begin()));  // its first 7 rows
    std::size_t differing = 0;
    double e = 0;
    for (std::ptrdiff_t y = 0; y < 7; ++y)
        for (std::ptrdiff_t x = 0; x < 23; ++x) {
            const double got = whole[std::size_t(y * 23 + x)];
            if (x >= 5 && x < 16 && y >= 2 && y < 6)
                differing += got == part[std::size_t((y - 2) * 11 + x - 5)] ? 0 : 1;
            const glm::dvec2 p(smp.origin.x + smp.spacing.x * double(x), smp.origin.y + smp.spacing.y * double(y));
            const glm::dvec3 h = field(p);
            const double fade = gorge::fade_target_from_altitude(h.x, 0.4, 0.6);
            const auto r = gorge::erosion_filter(p, h, fade, settings.erosion, settings.seed);
            e = std::max(e, agreement_error(got, h.x + r.height_delta));
        }
    std::printf("  double tile vs scalar double: worst error %.3e\n", e);
    CHECK(differing == 0);
    CHECK(e <= 1e-12);
}

namespace {

/// A height field written for scalars only (the newcomer's `[](glm::vec2 p)`), and the same
/// arithmetic as a generic field for batches. Additions and multiplications only, so, without
/// contraction (this file is built with -ffp-contract=off), both give the same bits.
glm::vec3 scalar_only_field(glm::vec2 p) {
    return glm::vec3(0.5f + 0.25f * p.x - 0.125f * p.y * p.y, 0.25f, -0.25f * p.y);
}
struct batched_twin {
    template <class T>
    glm::vec<3, T> operator()(const glm::vec<2, T>& p) const {
        return glm::vec<3, T>(T(0.5f) + T(0.25f) * p.x - T(0.125f) * p.y * p.y, T(0.25f), T(-0.25f) * p.y);
    }
};
/// A functor with one non-template call operator taking a scalar point, returning its own fade.
struct scalar_sample_field {
    gorge::height_sample<float> operator()(const glm::vec2& p) const {
        return {scalar_only_field(p), 0.5f * p.x - 0.25f};
    }
};

}  // namespace

TEST_CASE("tile: a scalar-only field [](glm::vec2) is called per lane, same bits as its batched twin", "[tile]") {
    // Repro: before, a field taking glm::vec2 compiled without xsimd only; with xsimd it failed in
    // tile.hpp (glm's converting constructor from a batch point).
    const auto lambda = [](glm::vec2 p) { return scalar_only_field(p); };
    const auto smp = sampling();
    auto settings = demo_like_settings();
    // Rows enough for 3 threads (gorge::tile_points_per_thread).
    const std::ptrdiff_t width = 2 * std::ptrdiff_t(lanes) + 3;
    const std::ptrdiff_t rows = 2 * std::ptrdiff_t(gorge::tile_points_per_thread) / width + 1;
    tile_data want(width, rows), got(width, rows, 2);
    settings.threads = 1;
    gorge::erode_tile(batched_twin{}, smp, -5, 7, want.buffers(), settings);
    settings.threads = 3;
    gorge::erode_tile(lambda, smp, -5, 7, got.buffers(), settings);
    std::size_t differing = 0;
    for (std::ptrdiff_t y = 0; y < want.h; ++y)
        for (std::ptrdiff_t x = 0; x < want.w; ++x)
            differing += same_bits(got.at(got.height, x, y), want.at(want.height, x, y)) &&
                                 same_bits(got.at(got.ridge, x, y), want.at(want.ridge, x, y)) &&
                                 same_bits(got.at(got.gx, x, y), want.at(want.gx, x, y)) &&
                                 same_bits(got.at(got.gy, x, y), want.at(want.gy, x, y))
                             ? 0
                             : 1;
    CHECK(differing == 0);
    CHECK(want.height[0] != -7.0f);

    // A scalar field that supplies its fade target: against the scalar kernels point by point.
    tile_data t(std::ptrdiff_t(lanes) + 1, 3);
    gorge::erode_tile(scalar_sample_field{}, smp, 2, -1, t.buffers(), settings);
    double e = 0;
    for (std::ptrdiff_t y = 0; y < t.h; ++y)
        for (std::ptrdiff_t x = 0; x < t.w; ++x) {
            const glm::vec2 p(gorge::detail::lattice_coordinate(smp.origin.x, smp.spacing.x, 2 + x),
                              gorge::detail::lattice_coordinate(smp.origin.y, smp.spacing.y, -1 + y));
            const gorge::height_sample<float> h = scalar_sample_field{}(p);
            const auto r = gorge::erosion_filter(p, h.height_and_slope, h.fade_target, settings.erosion, settings.seed);
            e = std::max(e, agreement_error(t.at(t.height, x, y),
                                            gorge::apply_height_offset(h.height_and_slope.x, r, h.fade_target,
                                                                       settings.height_offset)));
        }
    CHECK(e <= agreement_tolerance);

    // evaluate_tile takes it too.
    tile_data raw(7, 2);
    auto b = raw.buffers();
    b.ridge_map = {};
    gorge::evaluate_tile(lambda, smp, 0, 0, b, 2);
    const glm::vec3 first = scalar_only_field(glm::vec2(smp.origin.x, smp.origin.y));
    CHECK(raw.height[0] == first.x);
    CHECK(raw.gy[0] == first.z);
}

TEST_CASE("tile: thread counts follow gorge's one rule", "[tile]") {
    // Repro: threads = UINT_MAX used to start one thread per row; now above max_threads is invalid.
    const fbm_field field;
    tile_data t(5, 40);
    gorge::tile_settings<float> s;
    CHECK(s.threads == 1u);  // default: the calling thread only, like droplet_options::threads
    s.threads = UINT_MAX;
    CHECK(s.first_invalid() != nullptr);
    std::string message;
    try {
        gorge::erode_tile(field, sampling(), 0, 0, t.buffers(), s);
    } catch (const std::invalid_argument& e) {
        message = e.what();
    }
    CHECK(contains(message, "threads"));
    auto b = t.buffers();
    b.ridge_map = {};
    CHECK_THROWS_AS(gorge::evaluate_tile(field, sampling(), 0, 0, b, gorge::max_threads + 1), std::invalid_argument);
    s.threads = gorge::max_threads;  // valid; 200 points run on the calling thread alone
    CHECK(s.first_invalid() == nullptr);
    CHECK_NOTHROW(gorge::erode_tile(field, sampling(), 0, 0, t.buffers(), s));

    using gorge::detail::resolve_threads;
    const unsigned hardware = std::max(1u, std::min(std::thread::hardware_concurrency(), gorge::max_threads));
    CHECK(resolve_threads(0, 1u << 20) == hardware);
    CHECK(resolve_threads(1, 1u << 20) == 1u);
    CHECK(resolve_threads(7, 3) == 3u);
    CHECK(resolve_threads(7, 0) == 1u);
    CHECK(resolve_threads(gorge::max_threads, UINT64_MAX) == gorge::max_threads);
    CHECK(resolve_threads(UINT_MAX, UINT64_MAX) == gorge::max_threads);
}

#if defined(__GLIBC__)
TEST_CASE("tile: a thread that cannot start leaves its rows to the others", "[tile]") {
    // Make every new std::thread fail (a default stack no address space can hold), then ask for
    // 8 threads: the tile must come out as with one.
    const fbm_field field;
    const auto smp = sampling();
    auto settings = demo_like_settings();
    // 23 x 360 points: worth 3 threads, so helpers are asked for.
    tile_data want(23, 360), got(23, 360);
    gorge::erode_tile(field, smp, 4, 4, want.buffers(), settings);

    std::string error;
    bool thread_failed = false;
    {
        const gorge_test::thread_start_failure no_threads;
        REQUIRE(no_threads.configured());
        thread_failed = no_threads.active();
        settings.threads = 8;
        try {
            gorge::erode_tile(field, smp, 4, 4, got.buffers(), settings);
        } catch (const std::exception& e) {
            error = e.what();
        }
    }
    if (!thread_failed) {
        WARN("threads still start with a huge default stack here; fallback not exercised");
        return;
    }
    CHECK(error.empty());
    CHECK(got.height == want.height);
    CHECK(got.ridge == want.ridge);
    CHECK(got.gx == want.gx);
}
#endif

// ---------------------------------------------------------------------------------------------
// gorge's threads (gorge/detail/parallel.hpp) and their two users.
namespace {

/// Smooth hills with fine detail, heights in about [0, 1] (a droplet test map).
gorge::grid<float> droplet_hills(int w, int h) {
    gorge::grid<float> g(w, h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            g(x, y) = 0.5f + 0.25f * std::sin(0.07f * float(x)) * std::cos(0.05f * float(y)) +
                      0.05f * std::sin(0.9f * float(x + 2 * y));
    return g;
}

bool same_map(const gorge::grid<float>& a, const gorge::grid<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// The tiled droplet schedule as documented (gorge/erosion/droplet.hpp), written out directly:
/// rounds one after another, in each the four colours one after another, in each the tiles of
/// that colour in row-major order, each tile's share of the round (floor of the round's count
/// times the start area before it over the total) from its first droplet index on.
gorge::droplet_stats tiled_by_definition(gorge::grid<float>& map, std::uint64_t count,
                                         const gorge::droplet_params<float>& params,
                                         const gorge::droplet_options& options) {
    namespace d = gorge::detail;
    const gorge::grid_view<float> view(map.data(), map.width(), map.height(), map.width());
    const d::droplet_brush_table<float> brush(d::droplet_brush_cells(params), map.width(), map.height(), map.width());
    const d::droplet_kernel<float> k = d::make_droplet_kernel(view, params, brush, options.edge);
    const d::droplet_tile_plan plan = d::make_droplet_tile_plan(k.width, k.height, k.travel, k.brush_span);
    std::vector<d::droplet_totals> sums(plan.tiles.size(), d::droplet_totals{0, 0, 0, 0});
    for (unsigned round = 0; round < options.rounds; ++round) {
        const std::uint64_t first = count / options.rounds * round + count % options.rounds * round / options.rounds;
        const std::uint64_t next =
            count / options.rounds * (round + 1) + count % options.rounds * (round + 1) / options.rounds;
        const std::uint64_t n = next - first;
        const auto share = [&](std::size_t i) -> std::uint64_t {
            if (i == plan.tiles.size()) return n;
            return std::min<std::uint64_t>(
                n, static_cast<std::uint64_t>(std::floor(double(n) * plan.tiles[i].area_before / plan.total_area)));
        };
        for (int colour = 0; colour < 4; ++colour)
            for (std::size_t i = 0; i < plan.tiles.size(); ++i) {
                const std::ptrdiff_t tx = std::ptrdiff_t(i) % plan.columns, ty = std::ptrdiff_t(i) / plan.columns;
                if (int((tx & 1) | ((ty & 1) << 1)) != colour) continue;
                const d::droplet_tile& t = plan.tiles[i];
                const d::droplet_box<float> box{float(t.bx0), float(t.bx1), float(t.by0), float(t.by1)};
                const auto rect = d::make_droplet_start_rect<float>(t.x0, t.x1, t.y0, t.y1);
                // In blocks of droplet_chunk, as the schedule runs them (pairs restart per block).
                for (std::uint64_t j = share(i); j < share(i + 1); j += d::droplet_chunk)
                    d::run_droplet_range(k, box, options.seed, first + j,
                                         first + std::min(share(i + 1), j + d::droplet_chunk), rect, options.interleave,
                                         [&](const gorge::droplet_result<float>& r) { sums[i].add(r); });
            }
    }
    gorge::droplet_stats stats;
    stats.droplets = count;
    for (const d::droplet_totals& s : sums) s.add_to(stats);
    return stats;
}

}  // namespace

TEST_CASE("threads: guided chunks cover every item once, shrinking to the minimum", "[threads]") {
    using gorge::detail::parallel_chunks;
    struct run_case {
        std::uint64_t count, min_chunk;
        unsigned workers;
    };
    for (const run_case c : {run_case{0, 4, 3}, run_case{1, 4, 3}, run_case{5, 1, 16}, run_case{1000, 7, 1},
                             run_case{1000, 7, 2}, run_case{4099, 16, 7}, run_case{20000, 1, 16}, run_case{300, 0, 4}}) {
        INFO("count " << c.count << ", min " << c.min_chunk << ", workers " << c.workers);
        std::vector<std::atomic<int>> seen(c.count);
        std::atomic<bool> bad_chunk{false};
        const std::uint64_t floor_chunk = std::max<std::uint64_t>(1, c.min_chunk);
        const std::uint64_t largest = std::max(floor_chunk, c.count / (gorge::detail::guided_share * c.workers));
        parallel_chunks(c.count, c.workers, c.min_chunk, [&](std::uint64_t begin, std::uint64_t end) {
            // Each chunk is min_chunk items or more (only the last may be cut short) and no larger
            // than the first one.
            const std::uint64_t size = end - begin;
            if (begin >= end || end > c.count || (size < floor_chunk && end != c.count) ||
                (c.workers > 1 && size > largest))
                bad_chunk = true;
            for (std::uint64_t i = begin; i < end; ++i) seen[i].fetch_add(1);
        });
        CHECK(!bad_chunk);
        CHECK(std::all_of(seen.begin(), seen.end(), [](const std::atomic<int>& n) { return n.load() == 1; }));
    }
}

TEST_CASE("threads: guided chunks start no more workers than there are chunks", "[threads]") {
    using gorge::detail::parallel_chunks;
    struct run_case {
        std::uint64_t count, min_chunk;
        unsigned workers, most;  // most: the workers that can run (chunks of min_chunk items)
    };
    for (const run_case c : {run_case{3, 4, 8, 1}, run_case{64, 64, 8, 1}, run_case{130, 64, 8, 3},
                             run_case{1000, 1, 4, 4}}) {
        INFO("count " << c.count << ", min " << c.min_chunk << ", workers " << c.workers);
        std::mutex mutex;
        std::set<std::thread::id> seen;
#if GORGE_TEST_COUNTS_THREADS
        const unsigned long started = threads_started.load();
#endif
        parallel_chunks(c.count, c.workers, c.min_chunk, [&](std::uint64_t, std::uint64_t) {
            const std::lock_guard<std::mutex> lock(mutex);
            seen.insert(std::this_thread::get_id());
        });
#if GORGE_TEST_COUNTS_THREADS
        CHECK(threads_started.load() - started <= c.most - 1);
#endif
        CHECK(seen.size() <= c.most);
        if (c.most == 1) CHECK(seen.count(std::this_thread::get_id()) == 1);
    }
}

TEST_CASE("threads: thermal erosion uses at most one thread per thermal_thread_cells cells, started once", "[threads]") {
#if GORGE_TEST_COUNTS_THREADS
    // Repro: a 256^2 map took 0.79 ms for 8 passes on one thread and 1.27 ms on two (threads were
    // started for each pass, and each of its two bands had one). The threads now start once per
    // call (detail::call_thread_pool), not once per pass.
    gorge::thermal_params<float> params;
    params.passes = 3;
    gorge::thermal_options options;
    options.threads = 16;
    for (const std::ptrdiff_t side : {std::ptrdiff_t(256), std::ptrdiff_t(512)}) {
        INFO("side " << side);
        gorge::grid<float> map(side, side);
        for (std::ptrdiff_t y = 0; y < side; ++y)
            for (std::ptrdiff_t x = 0; x < side; ++x) map(x, y) = float((x * 7 + y * 13) % 29);
        const std::ptrdiff_t worth = (side * side + gorge::thermal_thread_cells - 1) / gorge::thermal_thread_cells;
        const unsigned long started = threads_started.load();
        gorge::erode_thermal(map, params, options);
        // The passes and the final measure share worth - 1 threads, started once.
        CHECK(threads_started.load() - started == (unsigned long)(worth - 1));
    }
#else
    WARN("thread starts are not counted in this build (sanitizer or not glibc)");
#endif
}

TEST_CASE("threads: an exception in one worker reaches the caller, stops the others, leaves no thread", "[threads]") {
    using gorge::detail::parallel_chunks;
    const long threads_before = live_threads();
    constexpr std::uint64_t count = 1u << 20;
    std::atomic<std::uint64_t> done{0};
    std::atomic<int> in_piece{0};
    std::atomic<bool> thrown{false};
    std::string message;
    try {
        parallel_chunks(count, 8, 64, [&](std::uint64_t begin, std::uint64_t end) {
            in_piece.fetch_add(1);
            // The first chunk taken after the first has finished throws (on whichever worker).
            if (done.load() > 0 && !thrown.exchange(true)) {
                in_piece.fetch_sub(1);
                throw std::runtime_error("piece failed");
            }
            std::this_thread::sleep_for(std::chrono::microseconds(50));
            done.fetch_add(end - begin);
            in_piece.fetch_sub(1);
        });
    } catch (const std::runtime_error& e) {
        message = e.what();
    }
    CHECK(message == "piece failed");
    CHECK(in_piece.load() == 0);  // every worker had returned before the rethrow
    // The others stopped at their next take: far from all items were done (the first chunks
    // are count / 16 each, so at most 8 of them plus those running at the throw).
    CHECK(done.load() < count);
    if (threads_before > 0) CHECK(live_threads_settling_at(threads_before) == threads_before);
}

TEST_CASE("threads: tiles start their threads once per call; any thread count, same bits", "[threads][tile]") {
    const fbm_field field;
    const auto smp = sampling();
    auto settings = demo_like_settings();
    // 1000 wide: about 16 batches a row, so guided chunks end inside rows.
    tile_data want(1000, 30);
    gorge::erode_tile(field, smp, -3, 2, want.buffers(), settings);
    for (const unsigned threads : {2u, 3u, 7u, 16u}) {
        INFO("threads " << threads);
        tile_data got(1000, 30);
        settings.threads = threads;
#if GORGE_TEST_COUNTS_THREADS
        const unsigned long started = threads_started.load();
#endif
        gorge::erode_tile(field, smp, -3, 2, got.buffers(), settings);
#if GORGE_TEST_COUNTS_THREADS
        // 30,000 points are worth 8 threads (gorge::tile_points_per_thread), the caller included.
        const unsigned worth = unsigned((30000 + gorge::tile_points_per_thread - 1) / gorge::tile_points_per_thread);
        CHECK(threads_started.load() - started <= std::min(threads, worth) - 1);
#endif
        CHECK(got.height == want.height);
        CHECK(got.ridge == want.ridge);
        CHECK(got.gx == want.gx);
        CHECK(got.gy == want.gy);
    }
}

TEST_CASE("threads: a tile uses at most one thread per tile_points_per_thread points", "[threads][tile]") {
    // Repro: a 16 x 16 tile took 15 µs on one thread and 43 µs on two (a thread's start and join
    // cost more than its share of the work); on 16 threads, 100 times as long as on one.
    std::mutex mutex;
    std::set<std::thread::id> seen;
    const auto recording = [&](glm::vec2 p) {
        {
            const std::lock_guard<std::mutex> lock(mutex);
            seen.insert(std::this_thread::get_id());
        }
        return glm::vec3(0.5f + 0.3f * p.x, 0.3f, -0.2f);
    };
    const auto smp = sampling();
    auto settings = demo_like_settings();
    settings.threads = 16;
    const std::ptrdiff_t side = 64;  // 4096 points: exactly one thread's worth
    REQUIRE(std::uint64_t(side * side) == gorge::tile_points_per_thread);
    for (const bool evaluate : {false, true}) {
        INFO((evaluate ? "evaluate_tile" : "erode_tile"));
        // Fills a tile of `rows` rows; returns the threads started meanwhile (0 where not counted).
        const auto fill = [&](std::ptrdiff_t rows) -> unsigned long {
            seen.clear();
            tile_data t(side, rows);
            auto b = t.buffers();
#if GORGE_TEST_COUNTS_THREADS
            const unsigned long started = threads_started.load();
#endif
            if (evaluate) {
                b.ridge_map = {};
                gorge::evaluate_tile(recording, smp, 0, 0, b, settings.threads);
            } else {
                gorge::erode_tile(recording, smp, 0, 0, b, settings);
            }
#if GORGE_TEST_COUNTS_THREADS
            return threads_started.load() - started;
#else
            return 0;
#endif
        };
        CHECK(fill(side) == 0);
        CHECK(seen.size() == 1);
        CHECK(seen.count(std::this_thread::get_id()) == 1);
        // One row more: two threads' worth, so at most one is started.
        CHECK(fill(side + 1) <= 1);
        CHECK(seen.size() <= 2);
    }
}

TEST_CASE("threads: tiled droplets follow the colour order on 1, 2, 3, 7 and 16 threads", "[threads][droplet]") {
    // 256 x 256, lifetime 5: travel 6, margin 6 + 3 + 7 = 16, so 255 / 32 = 7 x 7 tiles (49, at
    // most 16 of a colour); 3 rounds. Every thread count must give the map of the definition.
    gorge::droplet_params<float> p;
    p.lifetime = 5;
    const gorge::grid<float> source = droplet_hills(256, 256);
    gorge::droplet_options o;
    o.schedule = gorge::droplet_schedule::tiled;
    o.rounds = 3;
    o.seed = 11;
    constexpr std::uint64_t count = 30011;
    gorge::grid<float> want = source;
    const gorge::droplet_stats expected = tiled_by_definition(want, count, p, o);
    CHECK(!same_map(want, source));
    for (const unsigned threads : {1u, 2u, 3u, 7u, 16u}) {
        INFO("threads " << threads);
        gorge::grid<float> got = source;
        o.threads = threads;
#if GORGE_TEST_COUNTS_THREADS
        const unsigned long started = threads_started.load();
#endif
        const gorge::droplet_stats s = gorge::erode_droplets(got, count, p, o);
#if GORGE_TEST_COUNTS_THREADS
        // Started once per call, not once per colour and round (that was 3 x 4 times as many).
        CHECK(threads_started.load() - started <= threads - 1);
#endif
        CHECK(same_map(got, want));
        CHECK(s.droplets == count);
        CHECK(s.eroded == expected.eroded);
        CHECK(s.deposited == expected.deposited);
        CHECK(s.outflow == expected.outflow);
        CHECK(s.left_map == expected.left_map);
    }
}

TEST_CASE("threads: tiled droplets give each worker a block of tiles, as square as the count allows", "[threads][droplet]") {
    // 12 x 12 tiles: the 1024^2 benchmark map with default parameters.
    gorge::detail::droplet_tile_plan plan;
    plan.columns = 12;
    plan.rows = 12;
    plan.tiles.resize(144);
    struct expectation {
        unsigned workers, block_columns, block_rows;
    };
    for (const expectation e : {expectation{1, 1, 1}, expectation{2, 2, 1}, expectation{7, 7, 1}, expectation{12, 4, 3},
                                expectation{16, 4, 4}}) {
        INFO("workers " << e.workers);
        std::vector<std::set<std::size_t>> blocks(e.workers);
        for (std::size_t i = 0; i < plan.tiles.size(); ++i) {
            const unsigned w = plan.owner(i, e.workers);
            REQUIRE(w < e.workers);
            blocks[w].insert(i);
        }
        for (unsigned w = 0; w < e.workers; ++w) {
            INFO("worker " << w);
            // The block is the rectangle of its tiles' columns and rows, and every worker has one
            // of the same size up to one tile along each axis.
            std::ptrdiff_t x0 = 99, x1 = -1, y0 = 99, y1 = -1;
            for (const std::size_t i : blocks[w]) {
                const auto x = std::ptrdiff_t(i) % plan.columns, y = std::ptrdiff_t(i) / plan.columns;
                x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
            }
            CHECK(std::size_t((x1 - x0 + 1) * (y1 - y0 + 1)) == blocks[w].size());
            CHECK(std::abs((x1 - x0 + 1) - std::ptrdiff_t(12 / e.block_columns)) <= 1);
            CHECK(std::abs((y1 - y0 + 1) - std::ptrdiff_t(12 / e.block_rows)) <= 1);
        }
    }
    // More workers than tiles along an axis: every tile still has a valid owner.
    gorge::detail::droplet_tile_plan small;
    small.columns = 2;
    small.rows = 3;
    small.tiles.resize(6);
    for (std::size_t i = 0; i < small.tiles.size(); ++i) CHECK(small.owner(i, 64) < 64u);
}

TEST_CASE("threads: tiled droplets on 16 threads cancel early, pass exceptions on, leave no thread", "[threads][droplet]") {
    gorge::droplet_params<float> p;
    p.lifetime = 5;
    gorge::droplet_options o;
    o.schedule = gorge::droplet_schedule::tiled;
    o.threads = 16;
    const long threads_before = live_threads();
    constexpr std::uint64_t huge = 1000000000;
    SECTION("a cancel stops every worker within its block of droplets") {
        gorge::grid<float> g = droplet_hills(256, 256);
        std::vector<double> seen;
        o.progress = [&](double f) {
            seen.push_back(f);
            return seen.size() < 3;
        };
        const gorge::droplet_stats s = gorge::erode_droplets(g, huge, p, o);
        CHECK(s.cancelled);
        REQUIRE(seen.size() == 3u);
        const auto reported = static_cast<std::uint64_t>(std::llround(seen.back() * double(huge)));
        INFO("reported " << reported << ", ran " << s.droplets);
        // After the false, each of the 15 other threads finishes at most its block of droplets.
        // What they run between the report's count and the callback's return comes on top: on a
        // busy machine (16 threads here may share 2 cores) the caller can wait several time
        // slices, so 8 report intervals are allowed for it; a worker that went on to the end of
        // its tile's share (a third of 1e9 over 49 tiles, millions) would still fail.
        CHECK(reported >= 2 * gorge::detail::droplet_report_interval_max);
        CHECK(s.droplets >= reported);
        CHECK(s.droplets <= reported + 15 * gorge::detail::droplet_chunk + 8 * gorge::detail::droplet_report_interval_max);
    }
    SECTION("an exception from the callback arrives after every worker stopped") {
        gorge::grid<float> g = droplet_hills(256, 256);
        int reports = 0;
        o.progress = [&](double) -> bool {
            if (++reports == 3) throw std::runtime_error("callback failed");
            return true;
        };
        std::string message;
        try {
            gorge::erode_droplets(g, huge, p, o);
        } catch (const std::runtime_error& e) {
            message = e.what();
        }
        CHECK(message == "callback failed");
        CHECK(gorge_test::all_finite(g));
    }
    if (threads_before > 0) CHECK(live_threads_settling_at(threads_before) == threads_before);
}
