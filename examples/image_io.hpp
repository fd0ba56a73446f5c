// Image output shared by the examples: 8-bit grayscale PNG, 16-bit little-endian raw (.r16, what
// Unity and Unreal import as heightmaps), and a shaded-relief colour render (altitude tint times a
// hillshade, the cartographic convention of a light from the north-west at 45° elevation).
//
// Each example is a single translation unit, so stb_image_write's implementation lives here.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wshadow"
#endif
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <gorge/grid/grid.hpp>

namespace gorge_example {

struct value_range {
    float lo, hi;
};

/// Smallest and largest value over one or more grids.
template <class... Views>
value_range range_of(const gorge::grid_view<const float>& first, const Views&... rest) {
    value_range r{first(0, 0), first(0, 0)};
    auto scan = [&r](const gorge::grid_view<const float>& g) {
        for (std::ptrdiff_t y = 0; y < g.height(); ++y)
            for (std::ptrdiff_t x = 0; x < g.width(); ++x) r.lo = std::min(r.lo, g(x, y)), r.hi = std::max(r.hi, g(x, y));
    };
    scan(first);
    (scan(rest), ...);
    return r;
}

/// v mapped from range to [0, 1], clamped.
inline float unit(float v, value_range r) {
    const float span = r.hi > r.lo ? r.hi - r.lo : 1.0f;
    return std::clamp((v - r.lo) / span, 0.0f, 1.0f);
}

inline bool report(bool ok, const char* path) {
    if (!ok) std::fprintf(stderr, "error: could not write %s\n", path);
    return ok;
}

inline bool write_gray_png(const char* path, gorge::grid_view<const float> g, value_range r) {
    std::vector<std::uint8_t> px(g.size());
    for (std::ptrdiff_t y = 0; y < g.height(); ++y)
        for (std::ptrdiff_t x = 0; x < g.width(); ++x)
            px[std::size_t(y * g.width() + x)] = std::uint8_t(std::lround(unit(g(x, y), r) * 255.0f));
    return report(stbi_write_png(path, int(g.width()), int(g.height()), 1, px.data(), int(g.width())) != 0, path);
}

/// 16-bit unsigned little-endian samples, row-major, no header.
inline bool write_r16(const char* path, gorge::grid_view<const float> g, value_range r) {
    std::FILE* f = std::fopen(path, "wb");
    if (!f) return report(false, path);
    std::vector<std::uint8_t> bytes(g.size() * 2);
    for (std::ptrdiff_t y = 0; y < g.height(); ++y)
        for (std::ptrdiff_t x = 0; x < g.width(); ++x) {
            const auto v = std::uint16_t(std::lround(unit(g(x, y), r) * 65535.0f));
            const std::size_t i = std::size_t(y * g.width() + x) * 2;
            bytes[i] = std::uint8_t(v & 0xFFu);
            bytes[i + 1] = std::uint8_t(v >> 8);
        }
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    return report(std::fclose(f) == 0 && ok, path);
}

struct rgb {
    float r, g, b;
};

/// Altitude tint for t in [0, 1]: lowland green, upland ochre, rock brown, pale summit.
inline rgb altitude_tint(float t) {
    static const rgb stops[] = {{0.20f, 0.36f, 0.18f}, {0.45f, 0.52f, 0.27f}, {0.66f, 0.58f, 0.38f},
                                {0.55f, 0.44f, 0.34f}, {0.90f, 0.88f, 0.85f}};
    const float s = std::clamp(t, 0.0f, 1.0f) * 4.0f;
    const int i = std::min(int(s), 3);
    const float f = s - float(i);
    return {stops[i].r + (stops[i + 1].r - stops[i].r) * f, stops[i].g + (stops[i + 1].g - stops[i].g) * f,
            stops[i].b + (stops[i + 1].b - stops[i].b) * f};
}

/// Lambertian hillshade in [0, 1] from central differences; z_scale converts height units to
/// cell units (vertical exaggeration). Light from azimuth 315° (north-west), elevation 45°.
inline float hillshade(gorge::grid_view<const float> g, std::ptrdiff_t x, std::ptrdiff_t y, float z_scale) {
    const std::ptrdiff_t x0 = std::max<std::ptrdiff_t>(x - 1, 0), x1 = std::min(x + 1, g.width() - 1);
    const std::ptrdiff_t y0 = std::max<std::ptrdiff_t>(y - 1, 0), y1 = std::min(y + 1, g.height() - 1);
    const float dzdx = (g(x1, y) - g(x0, y)) * z_scale / float(x1 - x0);
    const float dzdy = (g(x, y1) - g(x, y0)) * z_scale / float(y1 - y0);
    // Normal (-dzdx, -dzdy, 1); light direction with image y pointing south.
    const float lx = -0.5f, ly = -0.5f, lz = 0.70710678f;
    const float n = std::sqrt(dzdx * dzdx + dzdy * dzdy + 1.0f);
    return std::max(0.0f, (-dzdx * lx - dzdy * ly + lz) / n);
}

inline bool write_rgb_png(const char* path, std::ptrdiff_t w, std::ptrdiff_t h, const std::vector<rgb>& px) {
    std::vector<std::uint8_t> bytes(px.size() * 3);
    for (std::size_t i = 0; i < px.size(); ++i) {
        bytes[3 * i] = std::uint8_t(std::lround(std::clamp(px[i].r, 0.0f, 1.0f) * 255.0f));
        bytes[3 * i + 1] = std::uint8_t(std::lround(std::clamp(px[i].g, 0.0f, 1.0f) * 255.0f));
        bytes[3 * i + 2] = std::uint8_t(std::lround(std::clamp(px[i].b, 0.0f, 1.0f) * 255.0f));
    }
    return report(stbi_write_png(path, int(w), int(h), 3, bytes.data(), int(w * 3)) != 0, path);
}

/// Shaded relief: altitude tint (from range) times a softened hillshade.
inline bool write_relief_png(const char* path, gorge::grid_view<const float> g, value_range r, float z_scale) {
    std::vector<rgb> px(g.size());
    for (std::ptrdiff_t y = 0; y < g.height(); ++y)
        for (std::ptrdiff_t x = 0; x < g.width(); ++x) {
            const rgb c = altitude_tint(unit(g(x, y), r));
            const float shade = 0.25f + 0.95f * hillshade(g, x, y, z_scale);
            px[std::size_t(y * g.width() + x)] = {c.r * shade, c.g * shade, c.b * shade};
        }
    return write_rgb_png(path, g.width(), g.height(), px);
}

}  // namespace gorge_example
