// Bit-exactness guards for the speed work on the erosion filter's float batches:
//   - simd_math::sincos against a lane-by-lane scalar evaluation of the same Cephes steps, with
//     the quadrant chosen by a plain switch (the batch code swaps and negates with bit operations);
//   - erode_tile (float and double batches, a sloped plane and the demo field, two seeds) against
//     a brute-force loop that calls erosion_filter once per point with the point in every lane:
//     the bits of every output must hash alike. The window loop skips a Phacelle cell only when it
//     is too far in every lane of a batch, so the two orders skip different cells; equal bits show
//     that the skip is exact and that no lane depends on its neighbours;
//   - phacelle on batches whose lanes share one band of cells (each window row hashed once for all
//     lanes, a lane permute per cell) against the same points one lane at a time among far-away
//     lanes (one hash per cell and lane), for every hash policy and SIMD width.
// Built with -ffp-contract=off (one rounding per operation, as the scalar reference assumes).
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "support/catch.hpp"
#include "support/lane_batches.hpp"
#include "support/simd_arches.hpp"

#include <gorge/filter/demo_pipeline.hpp>
#include <gorge/filter/erosion_filter.hpp>
#include <gorge/filter/phacelle.hpp>
#include <gorge/noise/hash.hpp>
#include <gorge/simd/simd.hpp>
#include <gorge/simd/tile.hpp>

namespace {

/// FNV-1a over the bytes of each value.
class bit_hash {
public:
    template <class S>
    void add(S v) {
        unsigned char bytes[sizeof(S)];
        std::memcpy(bytes, &v, sizeof(S));
        for (unsigned char b : bytes) {
            state_ ^= b;
            state_ *= prime;
        }
    }
    std::uint64_t value() const { return state_; }

private:
    static constexpr std::uint64_t prime = 1099511628211ull;
    std::uint64_t state_ = 1469598103934665603ull;
};

#if GORGE_HAS_XSIMD
/// sin and cos of x by the steps of simd_math::sincos, one float at a time.
void scalar_cephes_sincos(float x, float& s, float& c) {
    namespace sm = gorge::detail::simd_math;
    const float shifted = x * sm::two_over_pi + sm::round_magic;
    std::uint32_t k = 0;
    std::memcpy(&k, &shifted, sizeof k);
    const float kf = shifted - sm::round_magic;
    const float r = ((x - kf * sm::pio2_hi) - kf * sm::pio2_mid) - kf * sm::pio2_lo;
    const float z = r * r;
    const float ps = r + r * z * (sm::sin_c1 + z * (sm::sin_c2 + z * sm::sin_c3));
    const float pc = 1.0f - 0.5f * z + z * z * (sm::cos_c1 + z * (sm::cos_c2 + z * sm::cos_c3));
    switch (k % 4u) {
        case 0: s = ps; c = pc; break;
        case 1: s = pc; c = -ps; break;
        case 2: s = -ps; c = -pc; break;
        default: s = -pc; c = ps; break;
    }
    if (!(std::fabs(x) <= sm::sincos_reduction_limit)) {
        s = std::sin(x);
        c = std::cos(x);
    }
}

template <class S>
std::uint32_t bits_of(S v) {
    static_assert(sizeof(S) == sizeof(std::uint32_t), "float bits");
    std::uint32_t u = 0;
    std::memcpy(&u, &v, sizeof u);
    return u;
}
#endif

/// Lane 0 of a batch (the value itself for a scalar).
template <class B>
gorge::detail::scalar_t<B> first_lane(const B& b) {
    if constexpr (std::is_arithmetic<B>::value) {
        return b;
    } else {
        alignas(64) gorge::detail::scalar_t<B> buf[B::size];
        b.store_aligned(buf);
        return buf[0];
    }
}

/// The filter benchmark's input: a sloped plane.
struct sloped_plane {
    template <class T>
    gorge::height_sample<T> operator()(const glm::vec<2, T>& p) const {
        using S = gorge::detail::scalar_t<T>;
        return {glm::vec<3, T>(T(S(0.5)) + T(S(0.3)) * p.x, T(S(0.3)), T(S(-0.2))), T(S(0.0))};
    }
};

/// The published demo terrain as a field with its own fade target.
struct demo_field {
    template <class T>
    gorge::height_sample<T> operator()(const glm::vec<2, T>& p) const {
        using S = gorge::detail::scalar_t<T>;
        const glm::vec<3, T> n = gorge::fbm(p, gorge::demo::height_fbm<S>()) * T(S(gorge::demo::height_amplitude));
        const T fade = gorge::detail::clamp(n.x / T(S(gorge::demo::height_amplitude * gorge::demo::fade_range)),
                                            T(S(-1)), T(S(1)));
        const T half(S(0.5));
        return {glm::vec<3, T>(T(S(gorge::demo::base_height)) + half * n.x, half * n.y, half * n.z), fade};
    }
};

constexpr int tile_side = 64;
constexpr std::int64_t first_x = 3, first_y = 5;

template <class S>
gorge::tile_sampling<S> sampling() {
    gorge::tile_sampling<S> s;
    s.origin = glm::vec<2, S>(S(-0.3), S(0.7));
    s.spacing = glm::vec<2, S>(S(1.0 / 64.0), S(1.0 / 48.0));
    return s;
}

template <class S>
gorge::tile_settings<S> settings(std::uint32_t seed) {
    gorge::tile_settings<S> st;
    st.seed = seed;
    st.height_offset = glm::vec<2, S>(S(gorge::demo::height_offset_o), S(gorge::demo::height_offset_k));
    return st;
}

/// Hash of erode_tile's four outputs.
template <class S, class Field>
std::uint64_t tile_hash(const Field& field, std::uint32_t seed) {
    const std::size_t n = std::size_t(tile_side) * tile_side;
    std::vector<S> height(n), ridge(n), gx(n), gy(n);
    gorge::tile_buffers<S> out;
    out.height = gorge::grid_view<S>(height.data(), tile_side, tile_side);
    out.ridge_map = gorge::grid_view<S>(ridge.data(), tile_side, tile_side);
    out.gradient_x = gorge::grid_view<S>(gx.data(), tile_side, tile_side);
    out.gradient_y = gorge::grid_view<S>(gy.data(), tile_side, tile_side);
    gorge::erode_tile(field, sampling<S>(), first_x, first_y, out, settings<S>(seed));
    bit_hash h;
    for (const std::vector<S>* v : {&height, &ridge, &gx, &gy})
        for (S x : *v) h.add(x);
    return h.value();
}

/// The same outputs from erosion_filter called once per point, the point in every lane.
template <class S, class Field>
std::uint64_t brute_force_hash(const Field& field, std::uint32_t seed) {
    using B = gorge::simd_batch_t<S>;
    const gorge::tile_sampling<S> s = sampling<S>();
    const gorge::tile_settings<S> st = settings<S>(seed);
    const glm::vec<2, B> offset{B(st.height_offset.x), B(st.height_offset.y)};
    const std::size_t n = std::size_t(tile_side) * tile_side;
    std::vector<S> height(n), ridge(n), gx(n), gy(n);
    for (int j = 0; j < tile_side; ++j) {
        for (int i = 0; i < tile_side; ++i) {
            const S x = gorge::detail::lattice_coordinate(s.origin.x, s.spacing.x, first_x + i);
            const S y = gorge::detail::lattice_coordinate(s.origin.y, s.spacing.y, first_y + j);
            const glm::vec<2, B> p{B(x), B(y)};
            const gorge::height_sample<B> h = field(p);
            const gorge::erosion_result<B> r =
                gorge::erosion_filter(p, h.height_and_slope, h.fade_target, st.erosion, seed);
            const std::size_t at = std::size_t(j) * tile_side + std::size_t(i);
            height[at] = first_lane(gorge::apply_height_offset(h.height_and_slope.x, r, h.fade_target, offset));
            ridge[at] = first_lane(r.ridge_map);
            gx[at] = first_lane(h.height_and_slope.y + r.slope_delta.x);
            gy[at] = first_lane(h.height_and_slope.z + r.slope_delta.y);
        }
    }
    bit_hash h;
    for (const std::vector<S>* v : {&height, &ridge, &gx, &gy})
        for (S x : *v) h.add(x);
    return h.value();
}

}  // namespace

#if GORGE_HAS_XSIMD
TEST_CASE("filter bits: float sincos lanes equal the scalar Cephes steps bit for bit", "[filter_bits]") {
    using F = gorge::simd_float;
    constexpr std::size_t n = F::size;
    std::mt19937 rng(20261201u);
    std::uniform_real_distribution<float> wide(-40.0f, 40.0f);
    std::vector<float> xs;
    // Every quadrant boundary from -8 pi to 8 pi and its neighbours, random arguments, and lanes
    // past the reduction limit or not finite mixed with ordinary ones.
    for (int q = -16; q <= 16; ++q) {
        const float b = float(q) * 1.57079632679489662f;
        xs.insert(xs.end(), {b, std::nextafter(b, -100.0f), std::nextafter(b, 100.0f)});
    }
    for (int i = 0; i < 4000; ++i) xs.push_back(wide(rng));
    xs.insert(xs.end(), {0.0f, -0.0f, 8192.0f, -8192.0f, 8192.5f, 1e6f, -3e7f,
                         std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()});
    while (xs.size() % n != 0) xs.push_back(0.25f);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < xs.size(); i += n) {
        alignas(64) float in[n], s_out[n], c_out[n];
        for (std::size_t l = 0; l < n; ++l) in[l] = xs[i + l];
        F s, c;
        gorge::detail::simd_math::sincos(F::load_aligned(in), s, c);
        s.store_aligned(s_out);
        c.store_aligned(c_out);
        for (std::size_t l = 0; l < n; ++l) {
            float ws = 0.0f, wc = 0.0f;
            scalar_cephes_sincos(in[l], ws, wc);
            const bool same_s = bits_of(ws) == bits_of(s_out[l]) || (std::isnan(ws) && std::isnan(s_out[l]));
            const bool same_c = bits_of(wc) == bits_of(c_out[l]) || (std::isnan(wc) && std::isnan(c_out[l]));
            if (!same_s || !same_c) ++mismatches;
        }
    }
    CHECK(mismatches == 0);
}
#endif

TEST_CASE("filter bits: erode_tile equals erosion_filter point by point, bit for bit", "[filter_bits]") {
    for (const std::uint32_t seed : {0u, 9u}) {
        CAPTURE(seed);
        CHECK(tile_hash<float>(sloped_plane{}, seed) == brute_force_hash<float>(sloped_plane{}, seed));
        CHECK(tile_hash<float>(demo_field{}, seed) == brute_force_hash<float>(demo_field{}, seed));
        CHECK(tile_hash<double>(sloped_plane{}, seed) == brute_force_hash<double>(sloped_plane{}, seed));
        CHECK(tile_hash<double>(demo_field{}, seed) == brute_force_hash<double>(demo_field{}, seed));
    }
}

#if GORGE_HAS_XSIMD
namespace {

/// phacelle's two ways to a window's jitters must give the same bits: for each batch of points,
/// the whole batch (lanes in one band of cells take the shared row hashes) against every lane
/// evaluated alone, in a batch whose other lanes lie far away in other rows (so that batch hashes
/// cell by cell). Counts the batches that took the band, from the condition phacelle states.
struct band_runner {
    template <class A>
    void run() const {
        using B = xsimd::batch<float, A>;
        constexpr std::size_t n = B::size;
        using ops = gorge::detail::value_ops<B>;
        const std::vector<gorge_test::lane_batch> batches = gorge_test::band_batches(n, 20261202u);
        std::size_t banded = 0, mismatches = 0;
        for (const gorge_test::lane_batch& b : batches) {
            // The band condition as phacelle states it: every lane in lane 0's cell row, at most
            // n - 4 columns east of lane 0 (int32 columns, wrapping).
            const auto column = [](float v) { return std::uint32_t(gorge::detail::value_ops<float>::to_int(std::floor(v))); };
            bool band = true;
            for (std::size_t l = 0; l < n; ++l)
                band = band && column(b.x[l]) - column(b.x[0]) <= std::uint32_t(n - 4) && column(b.y[l]) == column(b.y[0]);
            banded += band && ops::lane_permute ? 1 : 0;
            check_lanes<B, gorge::pcg3d_hash>(b, 7u, mismatches);
            check_lanes<B, gorge::prime_mix_hash>(b, 7u, mismatches);
            check_lanes<B, gorge::prime_xor_hash>(b, 3u, mismatches);
            check_lanes<B, gorge::shadertoy_hash>(b, 0u, mismatches);
        }
        CAPTURE(n);
        CHECK(mismatches == 0);
        std::printf("  %zu-lane batches: %zu of %zu took the band\n", n, banded, batches.size());
        if (ops::lane_permute) CHECK(banded >= batches.size() / 6);  // the band path was exercised
    }

    template <class B, class Hash>
    static void check_lanes(const gorge_test::lane_batch& b, std::uint32_t seed, std::size_t& mismatches) {
        constexpr std::size_t n = B::size;
        const glm::vec<2, B> dir(B(0.6f), B(-0.8f));
        const auto eval = [&](const gorge_test::lane_batch& points, float* cx, float* cy) {
            const gorge::phacelle_result<B> r = gorge::phacelle<Hash>(
                glm::vec<2, B>(B::load_unaligned(points.x.data()), B::load_unaligned(points.y.data())), dir, B(0.7f),
                B(0.25f), B(0.5f), seed);
            r.phase.x.store_unaligned(cx);
            r.phase.y.store_unaligned(cy);
        };
        std::vector<float> all_x(n), all_y(n), cx(n), cy(n);
        eval(b, all_x.data(), all_y.data());
        for (std::size_t l = 0; l < n; ++l) {
            eval(gorge_test::lane_alone(b, l), cx.data(), cy.data());
            const bool same = (bits_of(cx[l]) == bits_of(all_x[l]) && bits_of(cy[l]) == bits_of(all_y[l])) ||
                              (std::isnan(all_x[l]) && std::isnan(cx[l]) && std::isnan(all_y[l]) && std::isnan(cy[l]));
            mismatches += same ? 0 : 1;
        }
    }
};

}  // namespace

TEST_CASE("filter bits: Phacelle's shared band hashes equal the hash of every cell and lane", "[filter_bits]") {
    gorge_test::for_each_arch(band_runner{});
}
#endif
