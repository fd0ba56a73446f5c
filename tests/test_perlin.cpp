// Perlin noise (table gradients): corner gradients derived independently from the hash policies'
// full hashes, the direction table against cos/sin, derivatives and Hessians against finite
// differences, range, the spread of the directions over the lattice, float/double agreement, and
// every batch width's table look-up against the scalar noise bit for bit (built without FMA
// contraction, so batch and scalar round alike). perlin_basis is checked with the other bases in
// test_noise_bases.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gorge/noise/perlin_noise.hpp>
#include <gorge/simd/simd.hpp>

#include "support/catch.hpp"
#include "support/gradient_check.hpp"
#include "support/simd_arches.hpp"

namespace {

constexpr double pi = 3.14159265358979323846;
constexpr int directions = 8;

enum class policy { pcg3d, prime_mix, prime_xor };

/// The direction a lattice point should get: the top 3 bits of the policy's whole hash word,
/// computed through the policy's one-point functions (not its split form).
std::uint32_t expected_direction(policy which, std::int32_t cx, std::int32_t cy, std::uint32_t seed) {
    const auto ux = static_cast<std::uint32_t>(cx), uy = static_cast<std::uint32_t>(cy);
    std::uint32_t word = 0;
    switch (which) {
        case policy::pcg3d: {  // the first lane of pcg3d(cx, cy, seed)
            std::uint32_t x = ux, y = uy, z = seed;
            gorge::detail::pcg3d(x, y, z);
            word = x;
            break;
        }
        case policy::prime_mix: word = gorge::detail::prime_mix(ux, uy, seed); break;
        case policy::prime_xor: word = gorge::detail::prime_xor(ux, uy, seed); break;
    }
    return word >> 29;
}

/// At a lattice point the fade and its slope are zero, so the noise is 0 and its gradient is the
/// corner's gradient exactly.
template <class Hash>
void check_lattice_gradients(policy which) {
    INFO("policy " << int(which));
    int seen[directions] = {};
    for (std::uint32_t seed : {0u, 1u, 0xDEADBEEFu}) {
        for (std::int32_t j = -40; j <= 40; j += 3) {
            for (std::int32_t i = -40; i <= 40; i += 7) {
                const glm::dvec3 n = gorge::perlin_noise<Hash>(glm::dvec2(i, j), seed);
                const std::uint32_t k = expected_direction(which, i, j, seed);
                CHECK(n.x == 0.0);
                CHECK(n.y == double(gorge::detail::perlin_directions<float>::x[k]));
                CHECK(n.z == double(gorge::detail::perlin_directions<float>::y[k]));
                ++seen[k];
            }
        }
    }
    for (int k = 0; k < directions; ++k) CHECK(seen[k] > 0);
}

/// Every lane of perlin_noise, perlin_noise_value and perlin_noise_d2 on batches of B equals the
/// scalar noise of that lane's point, bit for bit.
template <class B, class Hash>
void check_batches_against_scalars() {
    using S = gorge::detail::scalar_t<B>;
    constexpr std::size_t lanes = B::size;
    std::mt19937_64 rng(77);
    std::uniform_real_distribution<double> coord(-300.0, 300.0);
    int bad = 0;
    for (int round = 0; round < 200; ++round) {
        alignas(64) S xs[lanes], ys[lanes];
        for (std::size_t l = 0; l < lanes; ++l) xs[l] = S(coord(rng)), ys[l] = S(coord(rng));
        const glm::vec<2, B> p(B::load_unaligned(xs), B::load_unaligned(ys));
        const std::uint32_t seed = std::uint32_t(round) * 2654435761u;
        const glm::vec<3, B> n = gorge::perlin_noise<Hash>(p, seed);
        const B v = gorge::perlin_noise_value<Hash>(p, seed);
        const gorge::noise_d2<B> d2 = gorge::perlin_noise_d2<Hash>(p, seed);
        alignas(64) S out[9][lanes];
        const B parts[9] = {n.x, n.y, n.z, v, d2.value, d2.gradient.x, d2.dxx, d2.dxy, d2.dyy};
        for (int c = 0; c < 9; ++c) parts[c].store_aligned(out[c]);
        for (std::size_t l = 0; l < lanes; ++l) {
            const glm::vec<2, S> q(xs[l], ys[l]);
            const glm::vec<3, S> sn = gorge::perlin_noise<Hash>(q, seed);
            const gorge::noise_d2<S> sd = gorge::perlin_noise_d2<Hash>(q, seed);
            const S want[9] = {sn.x, sn.y, sn.z, sn.x, sd.value, sd.gradient.x, sd.dxx, sd.dxy, sd.dyy};
            for (int c = 0; c < 9; ++c)
                if (!(out[c][l] == want[c])) ++bad;
        }
    }
    CHECK(bad == 0);
}

struct batch_runner {
    template <class A>
    void run() {
        INFO("architecture " << A::name());
        check_batches_against_scalars<xsimd::batch<float, A>, gorge::prime_xor_hash>();
        check_batches_against_scalars<xsimd::batch<float, A>, gorge::pcg3d_hash>();
        check_batches_against_scalars<xsimd::batch<double, A>, gorge::prime_xor_hash>();
    }
};

}  // namespace

TEST_CASE("perlin: the direction table holds unit vectors at 22.5 + 45 k degrees", "[noise][perlin]") {
    for (int k = 0; k < directions; ++k) {
        const double angle = (22.5 + 45.0 * k) * pi / 180.0;
        INFO("direction " << k);
        CHECK(gorge::detail::perlin_directions<float>::x[k] == float(std::cos(angle)));
        CHECK(gorge::detail::perlin_directions<float>::y[k] == float(std::sin(angle)));
        // The double table is the float table widened.
        CHECK(gorge::detail::perlin_directions<double>::x[k] == double(gorge::detail::perlin_directions<float>::x[k]));
        CHECK(gorge::detail::perlin_directions<double>::y[k] == double(gorge::detail::perlin_directions<float>::y[k]));
    }
}

TEST_CASE("perlin: a lattice point's gradient is the table direction of its hash's top bits", "[noise][perlin]") {
    check_lattice_gradients<gorge::prime_xor_hash>(policy::prime_xor);
    check_lattice_gradients<gorge::prime_mix_hash>(policy::prime_mix);
    check_lattice_gradients<gorge::pcg3d_hash>(policy::pcg3d);
}

TEST_CASE("perlin: gradients and Hessians match finite differences", "[noise][perlin]") {
    for (std::uint32_t seed : {0u, 7u, 123456u}) {
        INFO("seed " << seed);
        const auto g = gorge_test::check_gradient([&](glm::dvec2 p) { return gorge::perlin_noise(p, seed); }, seed + 1,
                                                  -50, 50, 1000);
        const auto gp = gorge_test::check_gradient(
            [&](glm::dvec2 p) { return gorge::perlin_noise<gorge::pcg3d_hash>(p, seed); }, seed + 2, -50, 50, 1000);
        const auto h = gorge_test::check_hessian([&](glm::dvec2 p) { return gorge::perlin_noise_d2(p, seed); },
                                                 seed + 3, -30, 30, 1000);
        INFO("worst: gradient " << g.worst << ", gradient/pcg3d " << gp.worst << ", Hessian " << h.worst);
        CHECK(g.worst < 1e-7);
        CHECK(gp.worst < 1e-7);
        CHECK(h.worst < 1e-6);
    }
    // The d2 form's value and gradient are the plain form's.
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> coord(-100, 100);
    for (int i = 0; i < 500; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        const glm::dvec3 a = gorge::perlin_noise(p, 9u);
        const auto b = gorge::perlin_noise_d2(p, 9u);
        CHECK(a == glm::dvec3(b.value, b.gradient.x, b.gradient.y));
    }
}

TEST_CASE("perlin: values stay below 1 and use the range", "[noise][perlin][range]") {
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> coord(-1000, 1000);
    double most = 0;
    for (int i = 0; i < 200000; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        most = std::max(most, std::fabs(gorge::perlin_noise(p, std::uint32_t(i % 17)).x));
    }
    INFO("max |perlin| " << most);
    CHECK(most < 1.0);
    CHECK(most > 0.5);
}

TEST_CASE("perlin: the 8 directions are equally likely over the lattice", "[noise][perlin][hash]") {
    // Chi-square of the direction counts over a 256 x 256 block of lattice points (7 degrees of
    // freedom; 24.32 is the 0.1 % critical value), for the default policy and two seeds; and the
    // direction pairs of horizontal neighbours (63 degrees of freedom; 103.4 at 0.1 %).
    for (std::uint32_t seed : {0u, 2024u}) {
        INFO("seed " << seed);
        std::array<double, directions> counts{};
        std::array<double, directions * directions> pairs{};
        constexpr int side = 256;
        for (int j = 0; j < side; ++j) {
            std::uint32_t previous = 0;
            for (int i = 0; i < side; ++i) {
                const glm::dvec3 n = gorge::perlin_noise(glm::dvec2(i - side / 2, j - side / 2), seed);
                std::uint32_t k = 0;
                while (!(n.y == double(gorge::detail::perlin_directions<float>::x[k]) &&
                         n.z == double(gorge::detail::perlin_directions<float>::y[k])))
                    ++k;
                REQUIRE(k < directions);
                counts[k] += 1;
                if (i > 0) pairs[previous * directions + k] += 1;
                previous = k;
            }
        }
        const auto chi_square = [](const auto& observed) {
            double total = 0, chi = 0;
            for (double o : observed) total += o;
            const double expected = total / double(observed.size());
            for (double o : observed) chi += (o - expected) * (o - expected) / expected;
            return chi;
        };
        const double single = chi_square(counts), pair = chi_square(pairs);
        INFO("chi-square: directions " << single << ", neighbour pairs " << pair);
        CHECK(single < 24.32);
        CHECK(pair < 103.4);
    }
}

TEST_CASE("perlin: float and double agree", "[noise][perlin][types]") {
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<float> coord(-20.0f, 20.0f);
    double worst = 0;
    for (int i = 0; i < 2000; ++i) {
        const glm::vec2 pf(coord(rng), coord(rng));
        const glm::dvec3 d = glm::dvec3(gorge::perlin_noise(pf, 4u)) - gorge::perlin_noise(glm::dvec2(pf), 4u);
        worst = std::max({worst, std::fabs(d.x), std::fabs(d.y), std::fabs(d.z)});
    }
    CHECK(worst < 1e-5);
}

#if GORGE_HAS_XSIMD
TEST_CASE("perlin: batches of every width pick the same directions as scalars", "[noise][perlin][simd]") {
    gorge_test::for_each_arch(batch_runner{});
}
#endif
