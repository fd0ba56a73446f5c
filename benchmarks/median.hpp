// The median of a benchmark's repeated measurements, shared by the drivers that take their own.
#pragma once

#include <algorithm>
#include <vector>

namespace gorge_bench {

/// The middle value of `v` (not empty) once sorted; of an even count, the upper of the two middle
/// values.
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace gorge_bench
