// Finite-difference checks of analytic derivatives, shared by the noise and field tests.
//
// Fourth-order central differences (f(x-2h) - 8 f(x-h) + 8 f(x+h) - f(x+2h)) / 12h: truncation
// error ~ h^4 |f^(5)| / 30, rounding error ~ 1.5 eps |f| / h. With h = 1e-6 both stay near 1e-9
// even for octaves of frequency ~100, whose derivatives grow like frequency^k (a plain two-point
// difference would be limited to ~1e-5 there by h^2 |f'''| / 6). Errors are taken relative to
// max(1, |gradient|), so steep high-frequency octaves are held to the same standard.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include <glm/glm.hpp>

#include <gorge/noise/gradient_noise.hpp>

namespace gorge_test {

constexpr double fd_step = 1e-6;

struct check_result {
    double worst = 0.0;  ///< largest relative error seen
    int checked = 0;     ///< points compared
    int skipped = 0;     ///< points the skip predicate excluded (near a documented kink)
};

/// Fourth-order central-difference gradient of the value (component x) of a field.
template <class F>
glm::dvec2 fd_gradient(const F& f, glm::dvec2 p, double h = fd_step) {
    const auto derivative = [&](glm::dvec2 e) {
        return (f(p - 2.0 * e).x - 8.0 * f(p - e).x + 8.0 * f(p + e).x - f(p + 2.0 * e).x) / (12.0 * h);
    };
    return {derivative(glm::dvec2(h, 0)), derivative(glm::dvec2(0, h))};
}

/// Compares f(p).yz with central differences of f(p).x at `points` uniform random points of
/// [lo, hi]^2, skipping those where skip(p) is true.
template <class F, class Skip>
check_result check_gradient(const F& f, Skip&& skip, std::uint64_t rng_seed, double lo, double hi, int points) {
    std::mt19937_64 rng(rng_seed);
    std::uniform_real_distribution<double> coord(lo, hi);
    check_result r;
    for (int i = 0; i < points; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        if (skip(p)) {
            ++r.skipped;
            continue;
        }
        const glm::dvec3 n = f(p);
        const double scale = std::max(1.0, std::hypot(n.y, n.z));
        // The smaller error of steps h and h/4 (the second only when the first is not already
        // tiny): a steep composed field (nested warps) can need the finer step to bring
        // truncation down, while rounding stays ~1e-9 at h/4; a wrong gradient matches neither.
        const auto error_with_step = [&](double h) {
            const glm::dvec2 fd = fd_gradient(f, p, h);
            return std::max(std::fabs(n.y - fd.x), std::fabs(n.z - fd.y)) / scale;
        };
        double err = error_with_step(fd_step);
        if (err > 1e-8) err = std::min(err, error_with_step(fd_step / 4));
        r.worst = std::max(r.worst, err);
        ++r.checked;
    }
    return r;
}

template <class F>
check_result check_gradient(const F& f, std::uint64_t rng_seed, double lo, double hi, int points) {
    return check_gradient(f, [](glm::dvec2) { return false; }, rng_seed, lo, hi, points);
}

/// Compares the Hessian of a noise_d2-returning function with central differences of its gradient.
template <class F>
check_result check_hessian(const F& f, std::uint64_t rng_seed, double lo, double hi, int points) {
    std::mt19937_64 rng(rng_seed);
    std::uniform_real_distribution<double> coord(lo, hi);
    check_result r;
    const double h = fd_step;
    for (int i = 0; i < points; ++i) {
        const glm::dvec2 p(coord(rng), coord(rng));
        const gorge::noise_d2<double> n = f(p);
        const auto derivative = [&](glm::dvec2 e) {
            return (f(p - 2.0 * e).gradient - 8.0 * f(p - e).gradient + 8.0 * f(p + e).gradient -
                    f(p + 2.0 * e).gradient) / (12.0 * h);
        };
        const glm::dvec2 gx = derivative(glm::dvec2(h, 0));
        const glm::dvec2 gy = derivative(glm::dvec2(0, h));
        const double scale = std::max({1.0, std::fabs(n.dxx), std::fabs(n.dxy), std::fabs(n.dyy)});
        const double err = std::max({std::fabs(n.dxx - gx.x), std::fabs(n.dxy - gx.y), std::fabs(n.dxy - gy.x),
                                     std::fabs(n.dyy - gy.y)});
        r.worst = std::max(r.worst, err / scale);
        ++r.checked;
    }
    return r;
}

}  // namespace gorge_test
