// Baseline for the droplet quality report: the droplet erosion model as Sebastian Lague published
// it ("Coding Adventure: Hydraulic Erosion", 2019, after Hans Theobald Beyer's 2015 thesis),
// written from its description, in float like the original, on a square or rectangular map:
//   - integer start positions, uniform over the nodes [0, W-2] × [0, H-2];
//   - per step: bilinear height and gradient at the droplet, direction = normalize(d·inertia -
//     g·(1 - inertia)), move one cell; stop on a zero direction or outside [0, W-1) × [0, H-1);
//     Δh = h(new) - h(old); capacity = max(-Δh·speed·water·capacity, min_capacity);
//   - going uphill or over capacity: deposit min(Δh, sediment) or (sediment - capacity)·deposit
//     bilinearly into the four nodes of the old cell; otherwise erode min((capacity -
//     sediment)·erode, -Δh) through the brush (weights 1 - d/r of the nodes closer than r to the
//     old cell's top-left node, clipped to the map and renormalised), never taking a node below 0;
//   - speed = sqrt(speed² + Δh·gravity) (his sign: descending slows the droplet; a negative
//     radicand gives NaN in C#, after which Mathf.Max returns min_capacity for the rest of the
//     droplet's life; reproduced here with the same comparison), water *= 1 - evaporate;
//   - the sediment a droplet still carries when it stops is discarded.
// The three switches of lague_variant turn on, one at a time, what gorge's model did differently
// (energy-conserving speed, deposit at death, continuous starts), for the ablation in the report.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gorge_bench {

/// Lague's parameters and defaults (Erosion.cs).
struct lague_params {
    int radius = 3;
    float inertia = 0.05f;
    float capacity = 4;
    float min_capacity = 0.01f;
    float erode = 0.3f;
    float deposit = 0.3f;
    float evaporate = 0.01f;
    float gravity = 4;
    int lifetime = 30;
    float initial_water = 1;
    float initial_speed = 1;
};

/// Departures from the published model, all off by default.
struct lague_variant {
    bool energy_speed = false;       ///< speed² - Δh·gravity (clamped at 0) instead of + Δh·gravity
    bool deposit_at_death = false;   ///< remaining sediment into the 4 nodes of the last cell
    bool continuous_starts = false;  ///< uniform real starts instead of integer nodes
};

struct lague_totals {
    double eroded = 0, deposited = 0, discarded = 0;
};

namespace lague_detail {
inline std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
}  // namespace lague_detail

/// Runs `droplets` droplets over the row-major map `h` of w × h_rows nodes.
inline lague_totals lague_erode(std::vector<float>& map, int w, int h_rows, std::uint64_t droplets,
                                std::uint64_t seed, const lague_params& p = {}, const lague_variant& v = {}) {
    struct tap {
        int dx, dy;
        float weight;
    };
    std::vector<tap> brush;
    float weight_sum = 0;
    for (int dy = -p.radius; dy <= p.radius; ++dy)
        for (int dx = -p.radius; dx <= p.radius; ++dx) {
            const float d2 = float(dx * dx + dy * dy);
            if (d2 < float(p.radius * p.radius)) {
                const float weight = 1 - std::sqrt(d2) / float(p.radius);
                brush.push_back({dx, dy, weight});
                weight_sum += weight;
            }
        }
    const auto at = [&](int x, int y) -> float& { return map[std::size_t(y) * std::size_t(w) + std::size_t(x)]; };
    struct sample {
        float height, gx, gy;
    };
    const auto height_and_gradient = [&](float px, float py) {
        const int x = int(px), y = int(py);
        const float fx = px - float(x), fy = py - float(y);
        const float nw = at(x, y), ne = at(x + 1, y), sw = at(x, y + 1), se = at(x + 1, y + 1);
        return sample{nw * (1 - fx) * (1 - fy) + ne * fx * (1 - fy) + sw * (1 - fx) * fy + se * fx * fy,
                      (ne - nw) * (1 - fy) + (se - sw) * fy, (sw - nw) * (1 - fx) + (se - ne) * fx};
    };

    lague_totals totals;
    for (std::uint64_t k = 0; k < droplets; ++k) {
        const std::uint64_t bits = lague_detail::mix(lague_detail::mix(seed) + (k + 1) * 0x9E3779B97F4A7C15ull);
        const auto lo = std::uint32_t(bits), hi = std::uint32_t(bits >> 32);
        float px, py;
        if (v.continuous_starts) {
            px = float(double(hi) / 4294967296.0 * double(w - 1));
            py = float(double(lo) / 4294967296.0 * double(h_rows - 1));
            if (px >= float(w - 1)) px = std::nextafter(float(w - 1), 0.0f);
            if (py >= float(h_rows - 1)) py = std::nextafter(float(h_rows - 1), 0.0f);
        } else {
            px = float(std::uint64_t(hi) * std::uint64_t(w - 1) >> 32);
            py = float(std::uint64_t(lo) * std::uint64_t(h_rows - 1) >> 32);
        }
        float dir_x = 0, dir_y = 0, speed = p.initial_speed, water = p.initial_water, sediment = 0;
        for (int step = 0; step < p.lifetime; ++step) {
            const int node_x = int(px), node_y = int(py);
            const float fx = px - float(node_x), fy = py - float(node_y);
            const sample s = height_and_gradient(px, py);
            dir_x = dir_x * p.inertia - s.gx * (1 - p.inertia);
            dir_y = dir_y * p.inertia - s.gy * (1 - p.inertia);
            const float len = std::sqrt(dir_x * dir_x + dir_y * dir_y);
            if (len != 0) {
                dir_x /= len;
                dir_y /= len;
            }
            px += dir_x;
            py += dir_y;
            if ((dir_x == 0 && dir_y == 0) || !(px >= 0 && px < float(w - 1) && py >= 0 && py < float(h_rows - 1))) {
                // the last in-map position is the previous one
                px -= dir_x;
                py -= dir_y;
                break;
            }
            const float dh = height_and_gradient(px, py).height - s.height;
            const float c = -dh * speed * water * p.capacity;
            const float capacity = c > p.min_capacity ? c : p.min_capacity;  // Mathf.Max: NaN -> min
            if (sediment > capacity || dh > 0) {
                const float amount = dh > 0 ? std::fmin(dh, sediment) : (sediment - capacity) * p.deposit;
                sediment -= amount;
                at(node_x, node_y) += amount * (1 - fx) * (1 - fy);
                at(node_x + 1, node_y) += amount * fx * (1 - fy);
                at(node_x, node_y + 1) += amount * (1 - fx) * fy;
                at(node_x + 1, node_y + 1) += amount * fx * fy;
                totals.deposited += double(amount);
            } else {
                const float amount = std::fmin((capacity - sediment) * p.erode, -dh);
                float inside = 0;
                for (const tap& t : brush) {
                    const int x = node_x + t.dx, y = node_y + t.dy;
                    if (x >= 0 && y >= 0 && x < w && y < h_rows) inside += t.weight;
                }
                const float scale = inside == weight_sum ? 1 / weight_sum : 1 / inside;
                for (const tap& t : brush) {
                    const int x = node_x + t.dx, y = node_y + t.dy;
                    if (!(x >= 0 && y >= 0 && x < w && y < h_rows)) continue;
                    const float want = amount * t.weight * scale;
                    float& cell = at(x, y);
                    const float take = cell < want ? cell : want;  // never below 0, as published
                    cell -= take;
                    sediment += take;
                    totals.eroded += double(take);
                }
            }
            if (v.energy_speed) {
                const float r = speed * speed - dh * p.gravity;
                speed = std::sqrt(r > 0 ? r : 0);
            } else {
                speed = std::sqrt(speed * speed + dh * p.gravity);  // NaN when negative, as in C#
            }
            water *= 1 - p.evaporate;
        }
        if (v.deposit_at_death && sediment > 0) {
            const int x = int(px), y = int(py);
            const float fx = px - float(x), fy = py - float(y);
            at(x, y) += sediment * (1 - fx) * (1 - fy);
            at(x + 1, y) += sediment * fx * (1 - fy);
            at(x, y + 1) += sediment * (1 - fx) * fy;
            at(x + 1, y + 1) += sediment * fx * fy;
            totals.deposited += double(sediment);
        } else {
            totals.discarded += double(sediment);
        }
    }
    return totals;
}

}  // namespace gorge_bench
