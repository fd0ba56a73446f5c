// Droplet erosion quality report: what the eroded terrain looks like, measured, against a baseline
// of Lague's published model (lague_baseline.hpp) on the same maps.
//
//   droplet_quality [--quick] [--images DIR]
//
// Measures (interior cells only for the first two):
//   pits       cells strictly lower than all 8 neighbours (speckle);
//   roughness  mean |discrete Laplacian| (4-neighbour), in heights per cell²;
//   eroded     material picked up (heights × world area; cells at cell_size 1);
//   lowest     lowest height after the run;
//   border     mean |change| in the 4-cell border band divided by the interior's.
// Sections: Lague's setting (value-noise fBm normalised to [0, 1], 256² with 70 k droplets and
// 1024² with 1 M), the ablation of the baseline, the edge-runaway map of the issue (16 droplets
// per cell), the presets on the reliefs they are meant for, and the resolution check (the same
// world at 512² with cell 1 and 1024² with cell 0.5: block-mean correlation and volume ratio).
// --quick leaves out the 1024² runs. --images DIR writes shaded-relief PNGs before and after.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gorge/gorge.hpp>

#include "image_io.hpp"
#include "lague_baseline.hpp"

namespace {

using map = gorge::grid<float>;

/// Value-noise fBm at world point p (map spans [0, 1]²), `octaves` octaves from `frequency`.
float value_fbm(glm::vec2 p, float frequency, int octaves, std::uint32_t seed) {
    float sum = 0, amp = 1, freq = frequency;
    for (int o = 0; o < octaves; ++o) {
        sum += amp * gorge::value_noise(p * freq, seed + std::uint32_t(o)).x;
        amp *= 0.5f;
        freq *= 2;
    }
    return sum;
}

void normalise(map& g) {
    const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
    const float low = *lo, range = *hi - *lo;
    for (float& h : g) h = (h - low) / range;
}

/// Lague's setting: value-noise fBm normalised to [0, 1]; `extent` is the map's span in noise
/// units per cell (1/side for the unit square).
map lague_map(int side, float cell_in_unit) {
    map g(side, side);
    for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) g(x, y) = value_fbm(glm::vec2(float(x), float(y)) * cell_in_unit, 3, 6, 7);
    normalise(g);
    return g;
}

/// The edge-runaway map: gradient fBm, heights 0.5 + 0.5·fbm (about [0.22, 1]).
map runaway_map(int side) {
    map g(side, side);
    for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x)
            g(x, y) = 0.5f + 0.5f * gorge::fbm(glm::vec2(float(x), float(y)) / float(side),
                                                gorge::fbm_params<float>{4, 6, 2, 0.5f})
                                        .x;
    return g;
}

struct quality {
    long pits = 0;
    double roughness = 0, eroded = 0, lowest = 0, border_ratio = 0, seconds = 0;
};

quality measure(const map& before, const map& after) {
    quality q;
    const int w = int(after.width()), h = int(after.height());
    double lap = 0;
    long inner = 0;
    for (int y = 1; y < h - 1; ++y)
        for (int x = 1; x < w - 1; ++x) {
            const float c = after(x, y);
            bool pit = true;
            for (int dy = -1; dy <= 1 && pit; ++dy)
                for (int dx = -1; dx <= 1; ++dx)
                    if ((dx || dy) && !(c < after(x + dx, y + dy))) {
                        pit = false;
                        break;
                    }
            q.pits += pit ? 1 : 0;
            lap += std::abs(double(after(x + 1, y)) + after(x - 1, y) + after(x, y + 1) + after(x, y - 1) - 4.0 * c);
            ++inner;
        }
    q.roughness = lap / double(inner);
    q.lowest = *std::min_element(after.begin(), after.end());
    constexpr int band = 4;
    double band_sum = 0, in_sum = 0;
    long band_n = 0, in_n = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double d = std::abs(double(after(x, y)) - before(x, y));
            if (x < band || y < band || x >= w - band || y >= h - band)
                band_sum += d, ++band_n;
            else
                in_sum += d, ++in_n;
        }
    q.border_ratio = (band_sum / double(band_n)) / std::max(in_sum / double(in_n), 1e-30);
    return q;
}

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string image_dir;

void render(const std::string& name, const map& g, float z_scale) {
    if (image_dir.empty()) return;
    const std::string path = image_dir + "/" + name + ".png";
    gorge_example::write_relief_png(path.c_str(), g.view(), gorge_example::range_of(g.view()), z_scale);
}

/// Panel size of the docs images (the top-left corner of each map).
constexpr int panel_side = 192;

/// Grayscale hillshade panels side by side (the top-left side × side cells of each map), 8 px
/// gaps, for docs/images: small files.
void write_panels(const std::string& name, const std::vector<const map*>& maps, int side, float z_scale) {
    if (image_dir.empty()) return;
    constexpr int gap = 8;
    const int w = int(maps.size()) * side + (int(maps.size()) - 1) * gap;
    std::vector<std::uint8_t> px(std::size_t(w) * std::size_t(side), 255);
    for (std::size_t m = 0; m < maps.size(); ++m)
        for (int y = 0; y < side; ++y)
            for (int x = 0; x < side; ++x) {
                const float shade = gorge_example::hillshade(maps[m]->view(), x, y, z_scale);
                px[std::size_t(y) * std::size_t(w) + std::size_t(int(m) * (side + gap) + x)] =
                    std::uint8_t(std::lround(std::clamp(0.1f + 0.9f * shade, 0.0f, 1.0f) * 255.0f));
            }
    const std::string path = image_dir + "/" + name + ".png";
    stbi_write_png(path.c_str(), w, side, 1, px.data(), w);
}

quality run_baseline(const map& source, std::uint64_t droplets, const gorge_bench::lague_params& p,
                     const gorge_bench::lague_variant& v, map* out = nullptr) {
    std::vector<float> cells(source.begin(), source.end());
    const double t0 = now();
    const gorge_bench::lague_totals totals =
        gorge_bench::lague_erode(cells, int(source.width()), int(source.height()), droplets, 1, p, v);
    const double t1 = now();
    map after = source;
    std::copy(cells.begin(), cells.end(), after.begin());
    quality q = measure(source, after);
    q.eroded = totals.eroded;
    q.seconds = t1 - t0;
    if (out) *out = after;
    return q;
}

quality run_gorge(const map& source, std::uint64_t droplets, const gorge::droplet_params<float>& p,
                  map* out = nullptr, gorge::droplet_options options = {}) {
    map after = source;
    const double t0 = now();
    const gorge::droplet_stats stats = gorge::erode_droplets(after, droplets, p, options);
    const double t1 = now();
    quality q = measure(source, after);
    q.eroded = stats.eroded;
    q.seconds = t1 - t0;
    if (out) *out = after;
    return q;
}

void header() {
    std::printf("| %-34s | %8s | %10s | %9s | %9s | %7s | %6s |\n", "run", "pits", "roughness", "eroded", "lowest",
                "border", "s");
    std::printf("|%s|%s|%s|%s|%s|%s|%s|\n", std::string(36, '-').c_str(), std::string(10, '-').c_str(),
                std::string(12, '-').c_str(), std::string(11, '-').c_str(), std::string(11, '-').c_str(),
                std::string(9, '-').c_str(), std::string(8, '-').c_str());
}
void row(const char* name, const quality& q) {
    std::printf("| %-34s | %8ld | %10.3e | %9.4g | %9.4g | %7.3f | %6.2f |\n", name, q.pits, q.roughness, q.eroded,
                q.lowest, q.border_ratio, q.seconds);
}
void ratio_row(const char* name, const quality& q, const quality& base) {
    std::printf("  %-32s pits %.2fx  roughness %.2fx  eroded %.2fx of the baseline\n", name,
                double(q.pits) / double(std::max(base.pits, 1L)), q.roughness / base.roughness, q.eroded / base.eroded);
}

/// Lague's setting at one size: before, baseline, gorge's defaults.
void lague_setting(int side, std::uint64_t droplets, bool ablation) {
    const map source = lague_map(side, 1.0f / float(side));
    std::printf("\n### Lague's setting: %d x %d, value-noise fBm in [0, 1], %llu droplets\n\n", side, side,
                static_cast<unsigned long long>(droplets));
    header();
    row("before", measure(source, source));
    map base_after, gorge_after;
    const quality base = run_baseline(source, droplets, {}, {}, &base_after);
    row("Lague as published (baseline)", base);
    if (ablation) {
        gorge_bench::lague_variant v;
        v.energy_speed = true;
        row("  + energy-conserving speed", run_baseline(source, droplets, {}, v));
        v = {};
        v.deposit_at_death = true;
        row("  + deposit at death (4 nodes)", run_baseline(source, droplets, {}, v));
        v = {};
        v.continuous_starts = true;
        row("  + continuous starts", run_baseline(source, droplets, {}, v));
    }
    const quality g = run_gorge(source, droplets, {}, &gorge_after);
    row("gorge, defaults", g);
    std::printf("\n");
    ratio_row("gorge, defaults:", g, base);
    const float z = float(side) * 0.35f;
    const std::string tag = std::to_string(side);
    render("lague_" + tag + "_before", source, z);
    render("lague_" + tag + "_baseline", base_after, z);
    render("lague_" + tag + "_gorge", gorge_after, z);
    if (side == 256) write_panels("droplet_small_map", {&source, &base_after, &gorge_after}, panel_side, z);
}

/// The presets on the reliefs they suit: steep relief (a value-noise fBm with a relief of 60 at
/// cell 1) under lague_small_map and steep_mountains; a wide [0, 1] map under
/// lague_large_terrain.
void presets() {
    std::printf("\n### Presets\n\n");
    header();
    const int side = 512;
    map steep(side, side);
    for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x)
            steep(x, y) = 60.0f * (0.5f + 0.5f * value_fbm(glm::vec2(float(x), float(y)) / float(side), 3, 6, 5));
    const std::uint64_t n = std::uint64_t(side) * side;
    map small_after, steep_after, large_after;
    row("steep relief 60, 512^2: before", measure(steep, steep));
    row("  lague_small_map, 1/cell", run_gorge(steep, n, gorge::droplet_params<float>::lague_small_map(), &small_after));
    row("  steep_mountains, 1/cell", run_gorge(steep, n, gorge::droplet_params<float>::steep_mountains(), &steep_after));
    write_panels("droplet_steep", {&steep, &small_after, &steep_after}, panel_side, 1.0f);
    render("steep_before", steep, 1.0f);
    render("steep_small_map", small_after, 1.0f);
    render("steep_mountains", steep_after, 1.0f);
    const map wide = lague_map(side, 1.0f / float(side));
    row("[0, 1] fBm, 512^2: before", measure(wide, wide));
    row("  lague_small_map, 1/cell", run_gorge(wide, n, gorge::droplet_params<float>::lague_small_map()));
    row("  lague_large_terrain, 1/cell", run_gorge(wide, n, gorge::droplet_params<float>::lague_large_terrain(), &large_after));
    write_panels("droplet_large_terrain", {&wide, &large_after}, panel_side, float(side) * 0.35f);
    render("large_before", wide, float(side) * 0.35f);
    render("large_terrain", large_after, float(side) * 0.35f);
}

void edge_runaway() {
    std::printf("\n### Edges: 256 x 256, 16 droplets per cell, defaults, outflow edge\n\n");
    header();
    const map runaway = runaway_map(256);
    const map unit = lague_map(256, 1.0f / 256.0f);
    const std::uint64_t n = 16ull * 256 * 256;
    map after;
    row("issue's fBm map [0.22, 1]: before", measure(runaway, runaway));
    row("issue's fBm map: baseline", run_baseline(runaway, n, {}, {}));
    row("issue's fBm map: gorge", run_gorge(runaway, n, {}, &after));
    render("edges_fbm_gorge", after, 256 * 0.35f);
    row("value fBm [0, 1]: baseline", run_baseline(unit, n, {}, {}));
    row("value fBm [0, 1]: gorge", run_gorge(unit, n, {}, &after));
    gorge::droplet_options tiled;
    tiled.schedule = gorge::droplet_schedule::tiled;
    row("value fBm [0, 1]: gorge tiled", run_gorge(unit, n, {}, nullptr, tiled));
    map tiny(2, 2);
    tiny(0, 0) = 1, tiny(1, 0) = 0.5f, tiny(0, 1) = 0.5f, tiny(1, 1) = 0;
    map t = tiny;
    gorge::erode_droplets(t, 1000);
    std::printf("\n2 x 2 map after 1000 droplets: lowest %.4g\n", double(*std::min_element(t.begin(), t.end())));
}

/// Block means of the change, `block` cells per side.
std::vector<double> block_means(const map& before, const map& after, int block) {
    const int bw = int(after.width()) / block, bh = int(after.height()) / block;
    std::vector<double> m(std::size_t(bw * bh), 0.0);
    for (int by = 0; by < bh; ++by)
        for (int bx = 0; bx < bw; ++bx) {
            double s = 0;
            for (int y = by * block; y < (by + 1) * block; ++y)
                for (int x = bx * block; x < (bx + 1) * block; ++x) s += double(after(x, y)) - before(x, y);
            m[std::size_t(by * bw + bx)] = s / double(block * block);
        }
    return m;
}

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
    double ma = 0, mb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
    ma /= double(a.size()), mb /= double(b.size());
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        sab += (a[i] - ma) * (b[i] - mb), saa += (a[i] - ma) * (a[i] - ma), sbb += (b[i] - mb) * (b[i] - mb);
    return sab / std::sqrt(saa * sbb);
}

/// The same world (512 × 512 units of a [0, 1]-height fBm relief scaled to 40 units) at cell 1 and
/// cell 0.5, with the same droplet count (same droplets per unit area) and world-unit parameters.
void resolution(int octaves, const gorge::droplet_params<float>& preset, const char* name) {
    std::printf("\n### Resolution (%s, %d octaves): one world at 512^2 (cell 1) and 1024^2 (cell 0.5), 262144 droplets\n\n", name, octaves);
    const float relief = 40;
    const auto world = [&](int side, float cell) {
        map g(side, side);
        for (int y = 0; y < side; ++y)
            for (int x = 0; x < side; ++x)
                g(x, y) = relief * (0.5f + 0.5f * value_fbm(glm::vec2(float(x), float(y)) * (cell / 512.0f), 3, octaves, 11));
        return g;
    };
    const map coarse = world(512, 1), fine = world(1024, 0.5f);
    gorge::droplet_params<float> p = preset;
    map coarse_after, fine_after;
    const std::uint64_t n = 512ull * 512;
    p.cell_size = 1;
    const quality qc = run_gorge(coarse, n, p, &coarse_after);
    p.cell_size = 0.5f;
    const quality qf = run_gorge(fine, n, p, &fine_after);
    // Block means over 16 world units: 16 cells at 512, 32 at 1024.
    const double r = correlation(block_means(coarse, coarse_after, 16), block_means(fine, fine_after, 32));
    std::printf("eroded volume: cell 1 %.4g, cell 0.5 %.4g, ratio %.3f; block-mean correlation %.3f\n", qc.eroded,
                qf.eroded, qf.eroded / qc.eroded, r);
    render("resolution_512_cell1", coarse_after, 1.0f);
    render("resolution_1024_cell05", fine_after, 2.0f);
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::string only;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--quick"))
            quick = true;
        else if (!std::strcmp(argv[i], "--images") && i + 1 < argc)
            image_dir = argv[++i];
        else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr, "usage: droplet_quality [--quick] [--images DIR] [--only lague|edges|presets|resolution]\n");
            return 2;
        }
    }
    const auto wanted = [&](const char* section) { return only.empty() || only == section; };
    std::printf("# Droplet erosion quality\n");
    if (wanted("lague")) {
        lague_setting(256, 70000, true);
        if (!quick) lague_setting(1024, 1000000, true);
    }
    if (wanted("edges")) edge_runaway();
    if (wanted("presets")) presets();
    if (wanted("resolution")) {
        resolution(5, gorge::droplet_params<float>::lague_small_map(), "lague_small_map");
        resolution(5, gorge::droplet_params<float>::steep_mountains(), "steep_mountains");
    }
    return 0;
}
