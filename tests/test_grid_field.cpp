// grid_field (gorge/grid/grid_field.hpp): a heightmap as a differentiable field. Node values come
// back exactly, gradients match finite differences and are continuous across cell borders,
// quadratics are reproduced, the border rule holds, batches give the scalar bits, the tile API
// takes it, and a filtered 512² heightmap of an analytic field matches filtering the field itself
// within the interpolation error bound propagated through the filter.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/catch.hpp"

#include <gorge/gorge.hpp>
#include <gorge/grid/grid_field.hpp>
#include <gorge/simd/simd.hpp>
#include <gorge/simd/tile.hpp>

namespace {

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

template <class S>
bool same_bits(S a, S b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

/// A w x h grid of pseudo-random heights in [-amplitude, amplitude], stored with a row padding
/// (stride = w + pad) whose elements are NaN: the field must never read them.
template <class S>
struct padded_grid {
    std::ptrdiff_t w, h, stride;
    std::vector<S> cells;
    padded_grid(std::ptrdiff_t width, std::ptrdiff_t height, std::ptrdiff_t pad, std::uint32_t seed, S amplitude = S(1))
        : w(width), h(height), stride(width + pad),
          cells(std::size_t(stride * height), std::numeric_limits<S>::quiet_NaN()) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) at(x, y) = S(u(rng)) * amplitude;
    }
    S& at(std::ptrdiff_t x, std::ptrdiff_t y) { return cells[std::size_t(y * stride + x)]; }
    gorge::grid_view<const S> view() const { return gorge::grid_view<const S>(cells.data(), w, h, stride); }
};

/// A placement with dyadic origin, cell sizes and scale, so that node positions and their
/// division back to node units are exact.
template <class S>
gorge::grid_placement<S> dyadic_placement() {
    gorge::grid_placement<S> pl;
    pl.origin = glm::vec<2, S>(S(-3.5), S(2.25));
    pl.cell_size = glm::vec<2, S>(S(0.25), S(0.5));
    pl.height_scale = S(1.5);
    pl.height_offset = S(-2);
    return pl;
}

/// A non-dyadic placement (anisotropic cells), for the derivative tests.
gorge::grid_placement<double> odd_placement() {
    gorge::grid_placement<double> pl;
    pl.origin = glm::dvec2(0.3, -1.7);
    pl.cell_size = glm::dvec2(0.37, 0.23);
    pl.height_scale = -2.3;
    pl.height_offset = 0.7;
    return pl;
}

template <class S>
void check_nodes_exact() {
    const padded_grid<S> g(13, 9, 3, 7u);
    const auto pl = dyadic_placement<S>();
    const gorge::grid_field<S> f(g.view(), pl);
    std::size_t wrong = 0;
    for (std::ptrdiff_t y = 0; y < g.h; ++y)
        for (std::ptrdiff_t x = 0; x < g.w; ++x) {
            const glm::vec<2, S> p(pl.origin.x + pl.cell_size.x * S(x), pl.origin.y + pl.cell_size.y * S(y));
            const S want = pl.height_offset + pl.height_scale * g.view()(x, y);
            wrong += same_bits(f(p).x, want) ? 0 : 1;
        }
    CHECK(wrong == 0);
    // The extent's corners are the corner nodes.
    CHECK(f.extent_min() == pl.origin);
    CHECK(f.extent_max() == pl.origin + pl.cell_size * glm::vec<2, S>(S(12), S(8)));
}

}  // namespace

TEST_CASE("grid_field: reproduces the node values exactly, world placement included", "[grid_field]") {
    check_nodes_exact<float>();
    check_nodes_exact<double>();
    // Unit placement: stored values themselves.
    const padded_grid<double> g(6, 5, 0, 3u);
    const gorge::grid_field<double> f(g.view());
    for (std::ptrdiff_t y = 0; y < g.h; ++y)
        for (std::ptrdiff_t x = 0; x < g.w; ++x) CHECK(f(glm::dvec2(double(x), double(y))).x == g.view()(x, y));
}

TEST_CASE("grid_field: grid_placement::spanning puts the corner nodes on the world rectangle", "[grid_field]") {
    const auto pl = gorge::grid_placement<double>::spanning(glm::dvec2(100.0, 30.0), 11, 4, glm::dvec2(-50.0, 5.0),
                                                            0.5, 10.0);
    CHECK(pl.cell_size.x == 10.0);
    CHECK(pl.cell_size.y == 10.0);
    CHECK(pl.origin == glm::dvec2(-50.0, 5.0));
    CHECK(pl.height_scale == 0.5);
    CHECK(pl.height_offset == 10.0);
    gorge::grid<double> heights(11, 4, 2.0);
    const gorge::grid_field<double> f(heights, pl);
    CHECK(f.extent_max() == glm::dvec2(50.0, 35.0));
    CHECK(f(glm::dvec2(50.0, 35.0)).x == 11.0);
    // One node along an axis: any positive cell size; the axis is constant.
    const auto one = gorge::grid_placement<float>::spanning(glm::vec2(4.0f, 2.0f), 1, 3);
    CHECK(one.cell_size == glm::vec2(4.0f, 1.0f));
    CHECK_THROWS_WITH(gorge::grid_placement<float>::spanning(glm::vec2(0.0f, 1.0f), 3, 3),
                      Catch::Contains("world_size"));
    CHECK_THROWS_WITH(gorge::grid_placement<float>::spanning(glm::vec2(1.0f), 0, 3), Catch::Contains("width"));
    CHECK_THROWS_WITH(gorge::grid_placement<float>::spanning(glm::vec2(1.0f), 3, -1), Catch::Contains("height"));
}

TEST_CASE("grid_field: quadratics are reproduced in interior cells, planes everywhere", "[grid_field]") {
    // Catmull-Rom reproduces polynomials of degree <= 2 (an independent property of the scheme:
    // its weights sum to 1 and have first moment t and second moment t^2). The border cells'
    // linear ghost nodes keep degree <= 1 exact there.
    const auto quad = [](double x, double y) {
        return glm::dvec3(0.3 + 0.7 * x - 1.1 * y + 0.05 * x * x - 0.08 * x * y + 0.03 * y * y,
                          0.7 + 0.1 * x - 0.08 * y, -1.1 - 0.08 * x + 0.06 * y);
    };
    const auto plane = [](double x, double y) { return glm::dvec3(0.3 + 0.7 * x - 1.1 * y, 0.7, -1.1); };
    const std::ptrdiff_t w = 9, h = 7;
    gorge::grid<double> gq(w, h), gp(w, h);
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            gq(x, y) = quad(double(x), double(y)).x;
            gp(x, y) = plane(double(x), double(y)).x;
        }
    const gorge::grid_field<double> fq(gq), fp(gp);
    double eq = 0, ep = 0;
    for (int i = 0; i <= 80; ++i)
        for (int j = 0; j <= 60; ++j) {
            const double x = 8.0 * i / 80.0, y = 6.0 * j / 60.0;
            const glm::dvec3 d = fp(glm::dvec2(x, y)) - plane(x, y);
            ep = std::max({ep, std::fabs(d.x), std::fabs(d.y), std::fabs(d.z)});
            if (x >= 1.0 && x <= 7.0 && y >= 1.0 && y <= 5.0) {
                const glm::dvec3 e = fq(glm::dvec2(x, y)) - quad(x, y);
                eq = std::max({eq, std::fabs(e.x), std::fabs(e.y), std::fabs(e.z)});
            }
        }
    CHECK(eq <= 1e-13);
    CHECK(ep <= 1e-13);
}

TEST_CASE("grid_field: gradients match central finite differences (double)", "[grid_field]") {
    const padded_grid<double> g(11, 8, 2, 11u);
    const auto pl = odd_placement();
    const gorge::grid_field<double> f(g.view(), pl);
    // Central differences with step e (world units) err by at most e^2/6 |f'''| inside a cell and
    // by e/4 |jump of f''| where the step straddles a cell border (the field is C1, not C2), plus
    // rounding 2 eps |h| / e. With heights ~ 2.3, cells ~ 0.3: f'' ~ 2.3 * 10 / 0.3^2 ~ 300,
    // so e = 1e-7 gives at most ~1e-5 from the border term and ~5e-9 from rounding.
    const double e = 1e-7, tolerance = 1e-4;
    std::mt19937 rng(5u);
    std::uniform_real_distribution<double> ux(f.extent_min().x, f.extent_max().x), uy(f.extent_min().y,
                                                                                      f.extent_max().y);
    double worst = 0, largest = 0;
    for (int n = 0; n < 2000; ++n) {
        const glm::dvec2 p(ux(rng), uy(rng));
        const glm::dvec3 v = f(p);
        const double fx = (f(p + glm::dvec2(e, 0)).x - f(p - glm::dvec2(e, 0)).x) / (2 * e);
        const double fy = (f(p + glm::dvec2(0, e)).x - f(p - glm::dvec2(0, e)).x) / (2 * e);
        worst = std::max({worst, std::fabs(fx - v.y), std::fabs(fy - v.z)});
        largest = std::max({largest, std::fabs(v.y), std::fabs(v.z)});
    }
    std::printf("  grid_field gradient vs central differences: worst %.3e (largest slope %.3g)\n", worst, largest);
    CHECK(worst <= tolerance);
    CHECK(largest > 1.0);  // the slopes are not trivially small
}

TEST_CASE("grid_field: value and gradient are continuous across cell borders", "[grid_field]") {
    const padded_grid<double> g(10, 9, 1, 13u);
    const auto pl = odd_placement();
    const gorge::grid_field<double> f(g.view(), pl);
    // Limits from both sides of every interior node line, at distance d (world units) from it:
    // a C1 field differs by O(d) in value and gradient; a gradient that jumped (a C0 scheme such
    // as bilinear interpolation) would differ by O(1).
    const double d = 1e-9;
    double value_gap = 0, gradient_gap = 0, jump_second = 0;
    std::mt19937 rng(17u);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int k = 1; k < 9; ++k)
        for (int n = 0; n < 50; ++n) {
            // Across x = node line k (1..8), at a random y; then across y = node line (k - 1 mod 7) + 1.
            const double x = pl.origin.x + pl.cell_size.x * k, y = pl.origin.y + pl.cell_size.y * 8 * unit(rng);
            const glm::dvec3 l = f(glm::dvec2(x - d, y)), r = f(glm::dvec2(x + d, y));
            value_gap = std::max(value_gap, std::fabs(l.x - r.x));
            gradient_gap = std::max({gradient_gap, std::fabs(l.y - r.y), std::fabs(l.z - r.z)});
            const double x2 = pl.origin.x + pl.cell_size.x * 9 * unit(rng), y2 = pl.origin.y + pl.cell_size.y * ((k - 1) % 7 + 1);
            const glm::dvec3 b = f(glm::dvec2(x2, y2 - d)), t = f(glm::dvec2(x2, y2 + d));
            value_gap = std::max(value_gap, std::fabs(b.x - t.x));
            gradient_gap = std::max({gradient_gap, std::fabs(b.y - t.y), std::fabs(b.z - t.z)});
            // The second derivative does jump (C1, not C2): shows the test looks close enough.
            const double h = 1e-4;
            const double left = (f(glm::dvec2(x - h, y)).y - f(glm::dvec2(x - 2 * h, y)).y) / h;
            const double right = (f(glm::dvec2(x + 2 * h, y)).y - f(glm::dvec2(x + h, y)).y) / h;
            jump_second = std::max(jump_second, std::fabs(left - right));
        }
    std::printf("  grid_field across cell borders: value gap %.3e, gradient gap %.3e, f'' jump %.3g\n", value_gap,
                gradient_gap, jump_second);
    // |f'| ~ 30 and |f''| ~ 1e3 here: 2 d times those, plus rounding of the position (1e-16).
    CHECK(value_gap <= 1e-6);
    CHECK(gradient_gap <= 1e-4);
    CHECK(jump_second > 1.0);
}

TEST_CASE("grid_field: border rule, tiny grids, non-finite positions", "[grid_field]") {
    const padded_grid<double> g(7, 6, 0, 19u);
    const auto pl = dyadic_placement<double>();  // exact extent: positions on it are node lines
    const gorge::grid_field<double> f(g.view(), pl);
    const glm::dvec2 lo = f.extent_min(), hi = f.extent_max();
    // Outside: the value of the clamped position, the gradient across the border 0, along it kept.
    for (double y : {lo.y + 0.1, lo.y + 0.77, hi.y - 0.01}) {
        const glm::dvec3 in = f(glm::dvec2(hi.x, y)), out = f(glm::dvec2(hi.x + 3.0, y));
        CHECK(out.x == in.x);
        CHECK(out.y == 0.0);
        CHECK(out.z == in.z);
        const glm::dvec3 in_lo = f(glm::dvec2(lo.x, y)), out_lo = f(glm::dvec2(lo.x - 1e300, y));
        CHECK(out_lo.x == in_lo.x);
        CHECK(out_lo.y == 0.0);
        CHECK(out_lo.z == in_lo.z);
    }
    const glm::dvec3 corner = f(glm::dvec2(hi.x + 1.0, lo.y - 1.0));
    CHECK(corner.x == pl.height_offset + pl.height_scale * g.view()(6, 0));
    CHECK(corner.y == 0.0);
    CHECK(corner.z == 0.0);
    // On the border line: the one-sided gradient from inside (the limit of the inside values).
    const glm::dvec3 edge = f(glm::dvec2(hi.x, lo.y + 0.5)), near = f(glm::dvec2(hi.x - 1e-9, lo.y + 0.5));
    CHECK(std::fabs(edge.y - near.y) <= 1e-5);
    CHECK(edge.y != 0.0);
    // Border cells: the tangent at the border node is the one-sided difference (linear ghost).
    const double one_sided = pl.height_scale * (g.view()(1, 2) - g.view()(0, 2)) / pl.cell_size.x;
    CHECK(std::fabs(f(glm::dvec2(lo.x, lo.y + 2 * pl.cell_size.y)).y - one_sided) <= 1e-12);
    const double last_sided = pl.height_scale * (g.view()(6, 3) - g.view()(5, 3)) / pl.cell_size.x;
    CHECK(std::fabs(f(glm::dvec2(hi.x, lo.y + 3 * pl.cell_size.y)).y - last_sided) <= 1e-12);
    // Infinite positions clamp; NaN gives NaN.
    const glm::dvec3 inf = f(glm::dvec2(std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()));
    CHECK(inf.x == f(glm::dvec2(hi.x, lo.y)).x);
    CHECK(inf.y == 0.0);
    const glm::dvec3 nan = f(glm::dvec2(std::numeric_limits<double>::quiet_NaN(), lo.y));
    CHECK(std::isnan(nan.x));
    CHECK(std::isnan(nan.y));

    // A 1 x 1 grid is a constant; a 2 x 1 grid is linear in x and constant in y.
    const double single = 4.0;
    const gorge::grid_field<double> c(gorge::grid_view<const double>(&single, 1, 1));
    CHECK(c(glm::dvec2(0.3, -2.0)) == glm::dvec3(4.0, 0.0, 0.0));
    CHECK(c(glm::dvec2(0.0, 0.0)) == glm::dvec3(4.0, 0.0, 0.0));
    const double pair[2] = {1.0, 3.0};
    const gorge::grid_field<double> lin(gorge::grid_view<const double>(pair, 2, 1));
    for (double x : {0.0, 0.25, 0.5, 0.9, 1.0}) {
        const glm::dvec3 v = lin(glm::dvec2(x, 0.0));
        CHECK(std::fabs(v.x - (1.0 + 2.0 * x)) <= 1e-15);
        CHECK(std::fabs(v.y - 2.0) <= 1e-15);
        CHECK(v.z == 0.0);
    }
}

namespace {

/// Batch results must equal the scalar calls bit for bit (same operations; this file is built
/// without multiply-add contraction), for points inside, outside, on nodes and NaN.
template <class S>
void check_batch_equals_scalar() {
    using B = gorge::simd_batch_t<S>;
    constexpr std::size_t lanes = gorge::simd_lanes<S>();
    const padded_grid<S> g(37, 23, 5, 29u, S(3));
    const auto pl = dyadic_placement<S>();
    const gorge::grid_field<S> f(g.view(), pl);
    std::mt19937 rng(31u);
    std::uniform_real_distribution<double> ux(double(pl.origin.x) - 1.0, double(f.extent_max().x) + 1.0),
        uy(double(pl.origin.y) - 1.0, double(f.extent_max().y) + 1.0);
    std::size_t compared = 0, differing = 0;
    for (int n = 0; n < 400; ++n) {
        S xs[lanes], ys[lanes], h[lanes], dx[lanes], dy[lanes];
        for (std::size_t l = 0; l < lanes; ++l) {
            xs[l] = S(ux(rng)), ys[l] = S(uy(rng));
            if ((n + int(l)) % 7 == 0) xs[l] = pl.origin.x + pl.cell_size.x * S((n + int(l)) % 37);  // nodes
            if (n % 50 == 3 && l == 0) xs[l] = std::numeric_limits<S>::quiet_NaN();
        }
        const glm::vec<3, B> r = f(glm::vec<2, B>(gorge::detail::value_ops<B>::load(xs), gorge::detail::value_ops<B>::load(ys)));
        gorge::detail::value_ops<B>::store(r.x, h);
        gorge::detail::value_ops<B>::store(r.y, dx);
        gorge::detail::value_ops<B>::store(r.z, dy);
        for (std::size_t l = 0; l < lanes; ++l) {
            const glm::vec<3, S> s = f(glm::vec<2, S>(xs[l], ys[l]));
            differing += (same_bits(s.x, h[l]) && same_bits(s.y, dx[l]) && same_bits(s.z, dy[l])) ? 0 : 1;
            ++compared;
        }
    }
    CHECK(compared == 400 * lanes);
    CHECK(differing == 0);
}

}  // namespace

TEST_CASE("grid_field: SIMD batches give the scalar results bit for bit", "[grid_field][simd]") {
    std::printf("  grid_field batches: %zu float lanes, %zu double lanes\n", gorge::simd_lanes<float>(),
                gorge::simd_lanes<double>());
    check_batch_equals_scalar<float>();
    check_batch_equals_scalar<double>();
}

TEST_CASE("grid_field: invalid grids and placements throw naming the problem", "[grid_field][validation]") {
    gorge::grid<float> heights(4, 3, 1.0f);
    const auto message = [&](const gorge::grid_placement<float>& pl) -> std::string {
        try {
            const gorge::grid_field<float> f(heights, pl);
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "";
    };
    gorge::grid_placement<float> pl;
    CHECK(message(pl).empty());
    pl.origin.y = std::numeric_limits<float>::infinity();
    CHECK(contains(message(pl), "gorge::grid_placement: invalid origin"));
    pl = {};
    pl.cell_size.x = 0.0f;
    CHECK(contains(message(pl), "invalid cell_size"));
    pl.cell_size.x = -1.0f;
    CHECK(contains(message(pl), "invalid cell_size"));
    pl.cell_size = glm::vec2(std::numeric_limits<float>::quiet_NaN());
    CHECK(contains(message(pl), "invalid cell_size"));
    pl = {};
    pl.height_scale = std::numeric_limits<float>::quiet_NaN();
    CHECK(contains(message(pl), "invalid height_scale"));
    pl.height_scale = 1e30f;
    pl.cell_size = glm::vec2(1e-10f);
    CHECK(contains(message(pl), "invalid height_scale"));
    pl = {};
    pl.height_offset = std::numeric_limits<float>::infinity();
    CHECK(contains(message(pl), "invalid height_offset"));
    pl.height_offset = 1e36f;
    CHECK(contains(message(pl), "invalid height_offset"));

    // Non-finite cells are named; no-data must be filled first.
    heights(2, 1) = std::numeric_limits<float>::quiet_NaN();
    CHECK(contains(message({}), "gorge::grid_field: height at cell (2, 1) is not finite"));
    heights(2, 1) = -std::numeric_limits<float>::infinity();
    CHECK(contains(message({}), "cell (2, 1)"));
    // Heights whose scaled value or slope could overflow.
    heights(2, 1) = 1e34f;
    CHECK(contains(message({}), "gorge::grid_field: heights"));
    heights(2, 1) = 1e30f;
    CHECK(message({}).empty());
    pl = {};
    pl.height_scale = 1e4f;
    CHECK(contains(message(pl), "gorge::grid_field: heights"));
    pl.height_scale = 1.0f;
    pl.cell_size = glm::vec2(1e-4f);
    CHECK(contains(message(pl), "gorge::grid_field: heights"));

    // Empty view; sizes the 32-bit indices cannot address (no cell is read before these checks).
    CHECK_THROWS_WITH(gorge::grid_field<float>(gorge::grid_view<const float>()), Catch::Contains("must not be empty"));
    const float cell = 0.0f;
    CHECK_THROWS_WITH(gorge::grid_field<float>(gorge::grid_view<const float>(&cell, 1, 2, std::ptrdiff_t(1) << 31)),
                      Catch::Contains("INT32_MAX"));
    CHECK_THROWS_WITH(gorge::grid_field<float>(gorge::grid_view<const float>(&cell, (std::ptrdiff_t(1) << 24) + 1, 1)),
                      Catch::Contains("2^24"));
    CHECK_THROWS_WITH(gorge::grid_field<float>(gorge::grid_view<const float>(&cell, 1, (std::ptrdiff_t(1) << 24) + 1)),
                      Catch::Contains("2^24"));
}

TEST_CASE("grid_field: deduces its scalar type and composes with field combinators", "[grid_field]") {
    gorge::grid<double> heights(5, 5);
    for (std::ptrdiff_t y = 0; y < 5; ++y)
        for (std::ptrdiff_t x = 0; x < 5; ++x) heights(x, y) = double(x * y);
    const gorge::grid_field from_grid(heights);
    const gorge::grid_field from_view(heights.view(), gorge::grid_placement<double>{});
    static_assert(std::is_same<decltype(from_grid), const gorge::grid_field<double>>::value, "deduced from grid");
    static_assert(std::is_same<decltype(from_view), const gorge::grid_field<double>>::value, "deduced from view");
    // 2 f + 1 through the combinators, exact gradient scaled too.
    const auto composed = gorge::offset(gorge::scale(from_grid, 2.0), 1.0);
    const glm::dvec3 a = from_grid(glm::dvec2(2.0, 3.0)), b = composed(glm::dvec2(2.0, 3.0));
    CHECK(a == glm::dvec3(6.0, 3.0, 2.0));  // x y at an interior node: gradient (y, x)
    CHECK(b == glm::dvec3(13.0, 6.0, 4.0));
}

namespace {

/// An analytic terrain with rigorous derivative bounds: a sum of plane waves
/// a sin(kx x + ky y + phase). Any partial derivative of order (i in x, j in y) is bounded by
/// sum a |kx|^i |ky|^j.
struct wave {
    double a, kx, ky, phase;
};
constexpr double two_pi = 6.283185307179586;
const wave terrain_waves[] = {
    {0.100, two_pi * 1.3, two_pi * 0.4, 0.3},   {0.060, -two_pi * 0.9, two_pi * 2.1, 1.1},
    {0.030, two_pi * 3.7, two_pi * 1.9, 2.0},   {0.015, -two_pi * 2.2, two_pi * 6.3, 0.5},
    {0.008, two_pi * 11.0, -two_pi * 7.0, 1.7},
};
struct wave_terrain {
    template <class T>
    glm::vec<3, T> operator()(glm::vec<2, T> p) const {
        glm::vec<3, T> r(T(0), T(0), T(0));
        for (const wave& w : terrain_waves) {
            const T arg = T(w.kx) * p.x + T(w.ky) * p.y + T(w.phase);
            const T s = gorge::detail::sin(arg), c = gorge::detail::cos(arg);
            r += glm::vec<3, T>(T(w.a) * s, T(w.a * w.kx) * c, T(w.a * w.ky) * c);
        }
        return r;
    }
    /// sup |d^(i+j) f / dx^i dy^j|.
    static double derivative_bound(int i, int j) {
        double m = 0;
        for (const wave& w : terrain_waves) m += w.a * std::pow(std::fabs(w.kx), i) * std::pow(std::fabs(w.ky), j);
        return m;
    }
};

}  // namespace

namespace {

/// Catmull-Rom constants of one axis, t in [0, 1] (weights as in grid_field.hpp), maximised over
/// t on a fine grid: the Lebesgue constant L = max sum |w_k|, and c0 = max sum |w_k| |k - 1 - t|^3 / 6,
/// c1 = max sum |w'_k| |k - 1 - t|^3 / 6 (see the derivation below). They come out as L = 5/4,
/// c0 = 3/32 (both at t = 1/2) and c1 ~ 0.2848.
struct catmull_rom_constants {
    double lebesgue = 0, c0 = 0, c1 = 0;
    catmull_rom_constants() {
        const int steps = 20000;
        for (int i = 0; i <= steps; ++i) {
            const double t = double(i) / steps;
            const double w[4] = {t * (t * (2 - t) - 1) / 2, (t * t * (3 * t - 5) + 2) / 2,
                                 t * (t * (4 - 3 * t) + 1) / 2, t * t * (t - 1) / 2};
            const double dw[4] = {(t * (4 - 3 * t) - 1) / 2, t * (9 * t - 10) / 2, (t * (8 - 9 * t) + 1) / 2,
                                  t * (3 * t - 2) / 2};
            double l = 0, s0 = 0, s1 = 0;
            for (int k = 0; k < 4; ++k) {
                const double d3 = std::pow(std::fabs(k - 1 - t), 3);
                l += std::fabs(w[k]);
                s0 += std::fabs(w[k]) * d3 / 6;
                s1 += std::fabs(dw[k]) * d3 / 6;
            }
            lebesgue = std::max(lebesgue, l), c0 = std::max(c0, s0), c1 = std::max(c1, s1);
        }
    }
};

}  // namespace

// The filtered heightmap against the filtered analytic field.
//
// Interpolation error (1D first, node spacing h, t the position in the cell, nodes x_k = (k - 1) h
// relative to the cell's first node, k = 0..3). Catmull-Rom reproduces quadratics, so with Taylor's
// theorem around x, f(x_k) = q(x_k) + R_k, q the quadratic Taylor polynomial and
// |R_k| <= M3 |x_k - x|^3 / 6 (M3 = sup |f'''|):
//     I f(x) - f(x) = sum_k w_k R_k,            |I f - f|   <= c0 M3 h^3,
//     (I f)'(x) - f'(x) = sum_k w'_k R_k / h,   |(I f)' - f'| <= c1 M3 h^2,
// with c0 = max_t sum |w_k| |k - 1 - t|^3 / 6 = 3/32 and c1 = max_t sum |w'_k| |k - 1 - t|^3 / 6
// (catmull_rom_constants). In 2D, I = Ix Iy, and Ix, Iy commute with the derivatives along the
// other axis; with L = max sum |w_k| = 5/4 the norm of a 1D interpolation:
//     |Ix Iy f - f| <= |(Ix - 1) Iy f| + |(Iy - 1) f| <= c0 h^3 (L Mxxx + Myyy)              = dh
//     |dx(Ix Iy f) - fx| <= |(dx Ix - dx) Iy f| + |(Iy - 1) fx| <= c1 h^2 L Mxxx + c0 h^3 Mxyyy = dgx
// and dgy likewise, Mij the sup of the derivative of order i in x, j in y. These hold where the
// stencil has no ghost node (interior cells); the wave terrain has exact bounds for every Mij.
// The test checks them at every point first: they are the derivation, not an assumption.
//
// Through the filter: at a fixed p the eroded height is E(h, gx, gy) = h + height_delta(p, (h, gx,
// gy), fade(h)), and the grid field's inputs lie in the box |Δh| <= dh, |Δgx| <= dgx, |Δgy| <= dgy
// around the analytic ones. To first order |ΔE| <= sum_i |dE/dx_i| d_i, and the test measures each
// term by the filter itself at that point: |dE/dx_i| d_i ~ |E(x + d_i e_i) - E(x - d_i e_i)| / 2 (a
// secant across the box, which also sees a jump of the filter inside the box: its sign(sin)
// steering is discontinuous). Tolerance per point: 2 x that sum (+ 1e-12 for rounding); the factor
// 2 is an empirical safety factor for the second-order terms and for secants that underestimate a
// derivative; the worst measured ratio |ΔE| / sum is about 0.7 (printed). The eroded gradient
// (input slope + slope_delta) is checked the same way.
TEST_CASE("grid_field: a filtered 512^2 heightmap matches the filtered analytic field", "[grid_field][filter]") {
    const std::ptrdiff_t n = 512;
    const wave_terrain analytic;
    const auto pl = gorge::grid_placement<double>::spanning(glm::dvec2(1.0), n, n);  // [0, 1]^2, h = 1/511
    gorge::grid<double> samples(n, n);
    for (std::ptrdiff_t y = 0; y < n; ++y)
        for (std::ptrdiff_t x = 0; x < n; ++x)
            samples(x, y) = analytic(glm::dvec2(pl.cell_size.x * double(x), pl.cell_size.y * double(y))).x;
    const gorge::grid_field<double> field(samples, pl);

    const catmull_rom_constants cr;
    CHECK(std::fabs(cr.lebesgue - 1.25) <= 1e-12);
    CHECK(std::fabs(cr.c0 - 3.0 / 32.0) <= 1e-12);
    const double h = pl.cell_size.x, L = cr.lebesgue;
    const double M30 = wave_terrain::derivative_bound(3, 0), M03 = wave_terrain::derivative_bound(0, 3);
    const double dh = cr.c0 * h * h * h * (L * M30 + M03);
    const double dgx = cr.c1 * h * h * L * M30 + cr.c0 * h * h * h * wave_terrain::derivative_bound(1, 3);
    const double dgy = cr.c1 * h * h * L * M03 + cr.c0 * h * h * h * wave_terrain::derivative_bound(3, 1);
    const double rounding = 1e-12;

    gorge::erosion_params<double> params;  // the published demo's
    const double valley = -0.2, peak = 0.2;
    struct eroded {
        double h, gx, gy;
    };
    const auto erode = [&](glm::dvec2 p, glm::dvec3 x) {
        const double fade = gorge::fade_target_from_altitude(x.x, valley, peak);
        const gorge::erosion_result<double> r = gorge::erosion_filter(p, x, fade, params, 7u);
        return eroded{x.x + r.height_delta, x.y + r.slope_delta.x, x.z + r.slope_delta.y};
    };

    std::mt19937 rng(3u);
    std::uniform_real_distribution<double> u(0.01, 0.99);  // interior cells: 5 nodes from the border
    const int points = 20000;
    int interp_outside = 0, filter_outside = 0;
    double worst_ratio = 0, worst_height = 0, largest_delta = 0;
    for (int i = 0; i < points; ++i) {
        const glm::dvec2 p(u(rng), u(rng));
        const glm::dvec3 a = analytic(p), g = field(p);
        interp_outside += (std::fabs(g.x - a.x) <= dh + rounding && std::fabs(g.y - a.y) <= dgx + rounding &&
                           std::fabs(g.z - a.z) <= dgy + rounding)
                              ? 0
                              : 1;
        const eroded e0 = erode(p, a), e1 = erode(p, g);
        const glm::dvec3 box[3] = {glm::dvec3(dh, 0, 0), glm::dvec3(0, dgx, 0), glm::dvec3(0, 0, dgy)};
        double sh = 0, sgx = 0, sgy = 0;
        for (const glm::dvec3& d : box) {
            const eroded hi = erode(p, a + d), lo = erode(p, a - d);
            sh += std::fabs(hi.h - lo.h) / 2, sgx += std::fabs(hi.gx - lo.gx) / 2, sgy += std::fabs(hi.gy - lo.gy) / 2;
        }
        const double safety = 2.0;
        const bool ok = std::fabs(e1.h - e0.h) <= safety * sh + rounding &&
                        std::fabs(e1.gx - e0.gx) <= safety * sgx + rounding &&
                        std::fabs(e1.gy - e0.gy) <= safety * sgy + rounding;
        filter_outside += ok ? 0 : 1;
        worst_ratio = std::max({worst_ratio, std::fabs(e1.h - e0.h) / (sh + rounding),
                                std::fabs(e1.gx - e0.gx) / (sgx + rounding), std::fabs(e1.gy - e0.gy) / (sgy + rounding)});
        worst_height = std::max(worst_height, std::fabs(e1.h - e0.h));
        largest_delta = std::max(largest_delta, std::fabs(e0.h - a.x));
    }
    std::printf("  filtered 512^2 heightmap: interpolation bounds dh %.2e dg (%.2e, %.2e); worst |dE| %.2e "
                "(erosion up to %.2f); worst |dE| / first-order bound %.3f\n",
                dh, dgx, dgy, worst_height, largest_delta, worst_ratio);
    CHECK(interp_outside == 0);
    CHECK(filter_outside == 0);
    CHECK(largest_delta > 0.02);  // the filter did erode
}

TEST_CASE("grid_field: erode_tile and evaluate_tile take a grid_field", "[grid_field][tile]") {
    const std::ptrdiff_t n = 128;
    const wave_terrain analytic;
    const auto pl = gorge::grid_placement<float>::spanning(glm::vec2(1.0f), n, n);
    gorge::grid<float> samples(n, n);
    for (std::ptrdiff_t y = 0; y < n; ++y)
        for (std::ptrdiff_t x = 0; x < n; ++x)
            samples(x, y) = float(analytic(glm::dvec2(double(x) / double(n - 1), double(y) / double(n - 1))).x);
    const gorge::grid_field<float> field(samples, pl);

    // A tile reaching beyond the grid on every side (the border rule inside the tile API).
    gorge::tile_sampling<float> smp;
    smp.origin = glm::vec2(-0.05f, -0.04f);
    smp.spacing = glm::vec2(1.0f / 97.0f, 1.0f / 89.0f);
    const std::ptrdiff_t w = 113, rows = 101;
    gorge::tile_settings<float> settings;
    settings.valley_altitude = -0.2f;
    settings.peak_altitude = 0.2f;
    settings.height_offset = glm::vec2(-0.65f, 0.0f);
    settings.seed = 9;
    std::vector<float> eh(std::size_t(w * rows)), egx(eh.size()), egy(eh.size()), eh2(eh.size());
    std::vector<float> rh(eh.size()), rgx(eh.size()), rgy(eh.size());
    gorge::tile_buffers<float> eroded, raw, eroded2;
    eroded.height = gorge::grid_view<float>(eh.data(), w, rows);
    eroded.gradient_x = gorge::grid_view<float>(egx.data(), w, rows);
    eroded.gradient_y = gorge::grid_view<float>(egy.data(), w, rows);
    eroded2.height = gorge::grid_view<float>(eh2.data(), w, rows);
    raw.height = gorge::grid_view<float>(rh.data(), w, rows);
    raw.gradient_x = gorge::grid_view<float>(rgx.data(), w, rows);
    raw.gradient_y = gorge::grid_view<float>(rgy.data(), w, rows);
    gorge::erode_tile(field, smp, 0, 0, eroded, settings);
    settings.threads = 3;
    gorge::erode_tile(field, smp, 0, 0, eroded2, settings);
    gorge::evaluate_tile(field, smp, 0, 0, raw);
    CHECK(eh == eh2);  // any thread count, same bits

    // Against the scalar kernels sample by sample: the raw field bit for bit (same operations),
    // the eroded terrain within the batch/scalar agreement of the filter (2e-6, tests/test_tile.cpp).
    std::size_t raw_differing = 0;
    double worst = 0, eroded_range = 0;
    for (std::ptrdiff_t j = 0; j < rows; ++j)
        for (std::ptrdiff_t i = 0; i < w; ++i) {
            const std::size_t k = std::size_t(j * w + i);
            const glm::vec2 p(gorge::detail::lattice_coordinate(smp.origin.x, smp.spacing.x, i),
                              gorge::detail::lattice_coordinate(smp.origin.y, smp.spacing.y, j));
            const glm::vec3 v = field(p);
            raw_differing += (same_bits(v.x, rh[k]) && same_bits(v.y, rgx[k]) && same_bits(v.z, rgy[k])) ? 0 : 1;
            const float fade = gorge::fade_target_from_altitude(v.x, settings.valley_altitude, settings.peak_altitude);
            const auto r = gorge::erosion_filter(p, v, fade, settings.erosion, settings.seed);
            const float want = gorge::apply_height_offset(v.x, r, fade, settings.height_offset);
            const auto err = [](float got, float ref) {
                return std::fabs(double(got) - double(ref)) / std::max(1.0, std::fabs(double(ref)));
            };
            worst = std::max({worst, err(eh[k], want), err(egx[k], v.y + r.slope_delta.x),
                              err(egy[k], v.z + r.slope_delta.y)});
            eroded_range = std::max(eroded_range, std::fabs(double(eh[k]) - double(v.x)));
        }
    std::printf("  erode_tile over a grid_field vs scalar kernels: worst error %.3e\n", worst);
    CHECK(raw_differing == 0);
    CHECK(worst <= 2e-6);
    CHECK(eroded_range > 0.01);
}
