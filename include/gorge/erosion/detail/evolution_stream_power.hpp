// gorge/erosion/detail/evolution_stream_power.hpp — the implicit stream power solver of the
// landscape evolution model (Braun & Willett 2013): one cell's new height given its receiver's.
//
// Internal to gorge/erosion/landscape_evolution.hpp; see its header comment for the model.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <limits>

namespace gorge {
namespace detail {

/// Most iterations of the safeguarded Newton solve; each either takes a Newton step or halves
/// the bracket, so 200 reach the rounding level for any T (the bracket halves at least every
/// other iteration, and 2^-100 of a finite double range is below its ulp).
constexpr int evo_newton_iterations = 200;

/// Height above the receiver's water level after one implicit step, n = 1: the root of
/// x - x0 + f·x = 0, i.e. x0 / (1 + f), with f = dt·K·A^m / distance >= 0, written x0 · g with
/// g = evo_spl_linear_gain(f) = 1 / (1 + f): g does not depend on the receiver's new height, so
/// the division stays off the receiver-to-donor chain of the solve (f = inf gives g = 0).
template <class T>
inline T evo_spl_linear_gain(T f) {
    return T(1) / (T(1) + f);
}
template <class T>
inline T evo_spl_linear(T x0, T gain) {
    return x0 * gain;
}

/// Same for n = 2: the positive root of f·x² + x - x0 = 0, 2·x0 / (1 + √(1 + 4·f·x0)) (the
/// form without cancellation).
template <class T>
inline T evo_spl_quadratic(T x0, T f) {
    if (!(f < std::numeric_limits<T>::infinity())) return T(0);
    return T(2) * x0 / (T(1) + std::sqrt(T(1) + T(4) * f * x0));
}

/// Same for any n > 0: the root x in [0, x0] of g(x) = x - x0 + f·x^n, f = dt·K·A^m / distance^n,
/// by Newton's method kept inside a bracket (a step leaving it bisects instead). g is increasing
/// with g(0) = -x0 < 0 <= g(x0), so the root exists, is unique, and the result never leaves
/// [0, x0]: the cell never drops below its receiver and never rises.
template <class T>
inline T evo_spl_newton(T x0, T f, T n) {
    if (!(x0 > T(0))) return T(0);
    if (!(f < std::numeric_limits<T>::infinity())) return T(0);
    if (!(f > T(0))) return x0;
    T lo = T(0), hi = x0, x = x0;
    for (int it = 0; it < evo_newton_iterations; ++it) {
        const T p = std::pow(x, n - T(1));  // x^(n-1)
        const T g = x - x0 + f * p * x;
        if (g == T(0)) return x;
        if (g < T(0))
            lo = x;
        else
            hi = x;
        const T dg = T(1) + f * n * p;
        T next = x - g / dg;
        if (!(next > lo && next < hi)) next = lo + (hi - lo) * T(0.5);
        if (next == x || !(lo < next && next < hi)) return x;
        x = next;
    }
    return x;
}

}  // namespace detail
}  // namespace gorge
