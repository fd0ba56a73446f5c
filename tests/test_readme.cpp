// The README's tile and simulation snippets (the map filled with fBm and the progress callback
// counting instead of printing), with checks of what the README says
// they do: tiles seamless with their neighbours, volume conserved up to the outflow, every cell
// draining after the epsilon fill, rivers where the accumulation reaches the threshold.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <vector>

#include <gorge/gorge.hpp>
#include <gorge/simd/tile.hpp>

#include "support/catch.hpp"

namespace {

// README, "Fast on the CPU": the field and settings of the tile snippet.
const auto field = [](const auto& p) {  // called with float or SIMD batch coordinates
    using T = std::decay_t<decltype(p.x)>;
    const glm::vec<3, T> n = gorge::fbm(p, gorge::fbm_params<float>{3.0f, 4, 2.0f, 0.4f});
    return glm::vec<3, T>(T(0.5f) + T(0.1f) * n.x, T(0.1f) * n.y, T(0.1f) * n.z);  // (h, dh/dx, dh/dy)
};

std::vector<float> readme_tile(std::int64_t first_x, std::int64_t first_y, std::ptrdiff_t size) {
    gorge::tile_sampling<float> lattice;  // sample (i, j) sits at origin + spacing * (i, j), for every tile
    lattice.spacing = glm::vec2(1.0f / 512.0f);
    gorge::tile_settings<float> settings;  // default erosion parameters
    settings.valley_altitude = 0.45f;      // fade target rule (or return a gorge::height_sample)
    settings.peak_altitude = 0.55f;
    settings.height_offset = {-0.65f, 0.0f};
    settings.threads = 0;                  // all cores (default 1: the calling thread only)
    std::vector<float> height(std::size_t(size * size)), ridge(std::size_t(size * size));
    gorge::tile_buffers<float> out;
    out.height = gorge::grid_view<float>(height.data(), size, size);
    out.ridge_map = gorge::grid_view<float>(ridge.data(), size, size);
    gorge::erode_tile(field, lattice, first_x, first_y, out, settings);
    return height;
}

}  // namespace

TEST_CASE("README tile snippet: neighbouring tiles share their edge samples", "[docs][tile]") {
    const std::ptrdiff_t n = 64;
    // Tiles (3, -2) and (4, -2) of size n overlap nowhere; a tile one sample wider than n, starting
    // at the same place, must contain both, so their samples agree bit for bit.
    const std::vector<float> a = readme_tile(3 * n, -2 * n, n);
    const std::vector<float> wide = readme_tile(3 * n, -2 * n, n + 1);
    const std::vector<float> b = readme_tile(4 * n, -2 * n, n);
    std::size_t mismatches = 0;
    for (std::ptrdiff_t y = 0; y < n; ++y) {
        for (std::ptrdiff_t x = 0; x < n; ++x) mismatches += a[std::size_t(y * n + x)] != wide[std::size_t(y * (n + 1) + x)];
        mismatches += b[std::size_t(y * n)] != wide[std::size_t(y * (n + 1) + n)];
    }
    CHECK(mismatches == 0);
    // And the filter did something: eroded heights differ from the un-eroded field plus offset.
    const float h0 = field(glm::vec2(float(3 * n) / 512.0f, float(-2 * n) / 512.0f)).x;
    CHECK(std::fabs(a[0] - h0) > 1e-5f);
}

TEST_CASE("README thread_pool snippet: tiles on a pool are the same bits", "[docs][tile]") {
    const std::ptrdiff_t n = 256;
    const std::vector<float> want = readme_tile(4 * n, -2 * n, n);
    gorge::thread_pool pool(0);          // all cores: this thread and hardware_concurrency() - 1 more
    gorge::thread_pool_scope use(pool);  // threaded gorge calls on this thread run on the pool
    for (int call = 0; call < 3; ++call) CHECK(readme_tile(4 * n, -2 * n, n) == want);
}

TEST_CASE("README simulation snippet: conservation, drainage and rivers", "[docs][droplet][drainage]") {
    gorge::grid<float> h(128, 128);
    for (std::ptrdiff_t y = 0; y < h.height(); ++y)
        for (std::ptrdiff_t x = 0; x < h.width(); ++x)
            h(x, y) = 40.0f * (0.5f + gorge::fbm(glm::vec2(float(x), float(y)) / 128.0f,
                                                  gorge::fbm_params<float>{2.0f, 5, 2.0f, 0.5f}).x);
    double volume_before = 0;
    for (float v : h) volume_before += v;

    int progress_calls = 0;
    gorge::droplet_options o;
    o.schedule = gorge::droplet_schedule::tiled;  // parallel, same result for any thread count
    o.threads = 0;                                 // all cores (default 1, as for tiles)
    o.progress = [&](double done) { ++progress_calls; return done >= 0.0; };  // false cancels
    const gorge::droplet_stats s = gorge::erode_droplets(h, 20'000, gorge::droplet_params<float>{}, o);
    double volume_after = 0;
    for (float v : h) volume_after += v;
    CHECK(s.droplets == 20'000u);
    CHECK(progress_calls > 0);
    CHECK(s.eroded > 0.0);
    // "the terrain's volume changed by exactly what left over the edge": up to the float rounding
    // of the height updates, which is tiny next to the material the droplets moved.
    const double imbalance = (volume_after - volume_before) + s.outflow;
    INFO("eroded " << s.eroded << ", outflow " << s.outflow << ", imbalance " << imbalance);
    CHECK(std::fabs(imbalance) < 1e-6 * s.eroded);  // measured 1.7e-7

    gorge::fill_depressions_epsilon(h);                            // every cell now drains to the border
    const gorge::grid<std::uint8_t> dirs = gorge::flow_directions(h);  // D8, steepest descent
    const gorge::grid<std::uint32_t> acc = gorge::flow_accumulation(dirs);
    const auto rivers = gorge::river_mask(acc, 500u);              // cells draining at least 500 cells

    // Every cell drains: following the directions from any cell ends in a sink on the map border.
    std::size_t stuck = 0, river_cells = 0, wrong_river = 0;
    for (std::ptrdiff_t y = 0; y < h.height(); ++y)
        for (std::ptrdiff_t x = 0; x < h.width(); ++x) {
            std::ptrdiff_t cx = x, cy = y;
            for (std::size_t steps = 0; dirs(cx, cy) != gorge::d8_sink && steps < h.size(); ++steps) {
                const std::uint8_t code = dirs(cx, cy);
                cx += gorge::d8_dx[code];
                cy += gorge::d8_dy[code];
            }
            const bool on_border = cx == 0 || cy == 0 || cx == h.width() - 1 || cy == h.height() - 1;
            stuck += !(dirs(cx, cy) == gorge::d8_sink && on_border);
            river_cells += rivers(x, y);
            wrong_river += (rivers(x, y) != 0) != (acc(x, y) >= 500u);
        }
    CHECK(stuck == 0);
    CHECK(river_cells > 0);
    CHECK(wrong_river == 0);
}
