// island — the Red Blob Games island recipe (warped fBm, redistribution, radial falloff) fed
// straight into the analytic erosion filter, written as images and a raw heightmap.
//
// Usage: island [size=1024] [seed=0]   (writes into the current directory)
//   island_relief.png        shaded relief: sea by depth, beaches, land tinted by altitude, the
//                            filter's ridge map brightening ridges and darkening creases
//   island_relief_input.png  the same render of the shaped noise before erosion
//   island_height.r16        16-bit little-endian raw eroded height (Unity / Unreal import)
//   island_ridge_map.png     the filter's ridge map (black creases, white ridges)
//   island_moisture.png      the moisture field of the same seed (dry ochre .. wet green), sea blue
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gorge/filter/erosion_filter.hpp>
#include <gorge/grid/grid.hpp>
#include <gorge/noise/island.hpp>

#include "image_io.hpp"

namespace {

/// The map shows [-map_half_extent, map_half_extent]^2 around an island of radius 1.
constexpr float map_half_extent = 1.25f;
/// Terrain height per unit of island elevation e, in the units of p: sets the slopes the erosion
/// filter sees (its gullies are erosion_params::scale = 0.15 wide in the same units).
constexpr float height_scale = 0.2f;
/// The erosion filter's fade target runs from -1 (valleys) at the sea floor e = 0 to +1 (peaks)
/// at this elevation, so the coast is mid-slope rather than a valley and keeps its place.
constexpr float peak_elevation = 0.8f;
/// apply_height_offset's (o, k): no extra shift, gullies cut down and ridges build up around the
/// input surface (the published demo's (-0.65, 0) would lower the whole island and its coast).
const glm::vec2 height_offset(0.0f, 0.0f);
/// Erosion is a land process: its effect fades out over this elevation band around sea level,
/// leaving the sea floor as the noise made it.
constexpr float shore_band_low = -0.04f, shore_band_high = 0.02f;
/// Elevation (e units) above sea level drawn as beach.
constexpr float beach_width = 0.025f;
/// How strongly the ridge map lightens ridges and darkens creases in the relief.
constexpr float ridge_tint = 0.25f;

using gorge_example::rgb;

rgb lerp(rgb a, rgb b, float t) { return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t}; }

/// Sea from shallow turquoise to deep blue by depth below sea level (e units).
rgb sea_colour(float depth) {
    return lerp({0.36f, 0.66f, 0.74f}, {0.08f, 0.20f, 0.42f}, std::clamp(depth / 0.25f, 0.0f, 1.0f));
}

}  // namespace

int main(int argc, char** argv) {
    const int size = argc > 1 ? std::atoi(argv[1]) : 1024;
    const auto seed = static_cast<std::uint32_t>(argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0);
    if (size < 2 || size > 16384) {
        std::fprintf(stderr, "island: size must be in 2..16384, got %s\n", argc > 1 ? argv[1] : "?");
        return 2;
    }

    // The recipe: warped fBm -> e in [0, 1] -> e^1.8 -> radial falloff (island_params defaults).
    // The filter adds the fine detail itself, so its input is a smoother fBm than Red Blob's
    // (gain 0.35 over 4 octaves instead of the defaults' 0.5 over 6).
    gorge::island_params<float> island;
    island.terrain.octaves = 4;
    island.terrain.gain = 0.35f;
    const auto elevation = gorge::island_height_field(island, seed);
    const auto moisture = gorge::island_moisture_field(island, seed);
    const gorge::erosion_params<float> erosion;  // the published defaults
    erosion.validate();

    const float spacing = 2.0f * map_half_extent / float(size);
    gorge::grid<float> height(size, size), input(size, size), ridge(size, size), wet(size, size), shaped(size, size);
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x) {
            const glm::vec2 p(-map_half_extent + (float(x) + 0.5f) * spacing, -map_half_extent + (float(y) + 0.5f) * spacing);
            const glm::vec3 e = elevation(p);  // (e, de/dx, de/dy)
            const glm::vec3 terrain = e * height_scale;
            // Gullies cut where the land is steep; the fade target marks the coast as valley
            // (-1) and the highest ground as peak (+1).
            const float fade = gorge::fade_target_from_altitude(e.x, 0.0f, peak_elevation);
            const gorge::erosion_result<float> r = gorge::erosion_filter(p, terrain, fade, erosion, seed);
            const float land = std::clamp((e.x - island.sea_level - shore_band_low) / (shore_band_high - shore_band_low), 0.0f, 1.0f);
            const float eroded = terrain.x + land * (gorge::apply_height_offset(terrain.x, r, fade, height_offset) - terrain.x);
            height(x, y) = eroded;
            input(x, y) = terrain.x;
            shaped(x, y) = eroded / height_scale;  // back to e units, for the sea level
            ridge(x, y) = land * r.ridge_map;
            wet(x, y) = moisture(p).x;
        }

    // Relief: sea by depth, a beach band, land tinted by altitude above the sea, hillshade, ridges.
    const float vertical_exaggeration = 1.0f / spacing;
    const auto render = [&](const gorge::grid<float>& h, bool with_ridges) {
        std::vector<rgb> px(std::size_t(size) * std::size_t(size));
        for (int y = 0; y < size; ++y)
            for (int x = 0; x < size; ++x) {
                const float e = h(x, y) / height_scale;
                const float above = e - island.sea_level;
                rgb c;
                if (above < 0.0f) {
                    c = sea_colour(-above);
                } else {
                    const float shade = 0.35f + 0.85f * gorge_example::hillshade(h.view(), x, y, vertical_exaggeration);
                    const rgb land = above < beach_width ? rgb{0.86f, 0.80f, 0.60f}
                                                         : gorge_example::altitude_tint(above / (1.0f - island.sea_level));
                    c = {land.r * shade, land.g * shade, land.b * shade};
                    if (with_ridges) {
                        const float k = ridge(x, y);
                        c = k > 0 ? lerp(c, {1.0f, 1.0f, 1.0f}, ridge_tint * k) : lerp(c, {0.0f, 0.0f, 0.0f}, -ridge_tint * k);
                    }
                }
                px[std::size_t(y) * std::size_t(size) + std::size_t(x)] = c;
            }
        return px;
    };

    // Moisture: dry ochre to wet green on land, the sea in blue.
    std::vector<rgb> moisture_px(std::size_t(size) * std::size_t(size));
    for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x)
            moisture_px[std::size_t(y) * std::size_t(size) + std::size_t(x)] =
                shaped(x, y) < island.sea_level ? rgb{0.12f, 0.28f, 0.52f}
                                                : lerp({0.80f, 0.70f, 0.42f}, {0.12f, 0.45f, 0.20f}, wet(x, y));

    const gorge_example::value_range range = gorge_example::range_of(height.view(), input.view());
    bool ok = true;
    ok &= gorge_example::write_rgb_png("island_relief.png", size, size, render(height, true));
    ok &= gorge_example::write_rgb_png("island_relief_input.png", size, size, render(input, false));
    ok &= gorge_example::write_r16("island_height.r16", height.view(), range);
    ok &= gorge_example::write_gray_png("island_ridge_map.png", ridge.view(), {-1.0f, 1.0f});
    ok &= gorge_example::write_rgb_png("island_moisture.png", size, size, moisture_px);
    if (!ok) return 1;
    std::printf("island: %dx%d map, seed %u, heights %.4f..%.4f (sea level %.3f)\n", size, size, seed, range.lo, range.hi,
                island.sea_level * height_scale);
    std::printf("wrote island_relief.png island_relief_input.png island_height.r16 island_ridge_map.png island_moisture.png\n");
    return 0;
}
