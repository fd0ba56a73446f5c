// Batches of points for the tests that hold shared-hash SIMD paths (Phacelle's band of cells, the
// noise cells' corner rows) to each lane evaluated alone: runs along a cell row whose spacings give
// spans from none to many cells, the same runs with lane 0 not the westmost lane, with one lane in
// the next row, near the int32 wrap of the lattice columns, and with NaN lanes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace gorge_test {

/// Points of one batch, x and y per lane.
struct lane_batch {
    std::vector<float> x, y;
};

/// The batches of `lanes` points described above.
inline std::vector<lane_batch> band_batches(std::size_t lanes, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<lane_batch> batches;
    for (const float spacing : {0.0f, 0.01f, 0.1f, 0.2f, 0.3f, 0.6f, 1.0f, 1.7f}) {
        for (const float x0 : {0.37f, -5.61f, 2147483000.0f, -2147483000.0f}) {
            lane_batch run{std::vector<float>(lanes), std::vector<float>(lanes, 3.25f + unit(rng))};
            for (std::size_t l = 0; l < lanes; ++l) run.x[l] = x0 + spacing * float(l) + 0.01f * unit(rng);
            batches.push_back(run);
            lane_batch west = run;
            std::swap(west.x.front(), west.x.back());  // lane 0 is not the westmost
            batches.push_back(west);
            lane_batch rows = run;
            rows.y[lanes / 2] += 1.0f;  // one lane a row further north
            batches.push_back(rows);
        }
    }
    const float nan = std::numeric_limits<float>::quiet_NaN();
    lane_batch with_nan = batches.front();
    with_nan.x[1] = nan;
    batches.push_back(with_nan);
    batches.push_back({std::vector<float>(lanes, nan), std::vector<float>(lanes, nan)});
    return batches;
}

/// Lane `lane` of `b` alone: its point in that lane, every other lane far away in a row of its own
/// (so no lanes share a cell or a row).
inline lane_batch lane_alone(const lane_batch& b, std::size_t lane) {
    lane_batch alone{std::vector<float>(b.x.size()), std::vector<float>(b.x.size())};
    for (std::size_t k = 0; k < b.x.size(); ++k) {
        alone.x[k] = 1000.5f * float(k + 1);
        alone.y[k] = -777.25f * float(k + 1);
    }
    alone.x[lane] = b.x[lane];
    alone.y[lane] = b.y[lane];
    return alone;
}

}  // namespace gorge_test
