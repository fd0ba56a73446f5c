// Helpers shared by the tests that replay tests/data/reference: hash-policy dispatch by name, the
// filter parameters of a row, and a tracker that reports the worst error of a comparison.
#pragma once

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <gorge/gorge.hpp>

#include "csv.hpp"

namespace gorge_test {

/// Calls f(Hash{}) with the hash policy a reference row (or a test) names: pcg3d, shadertoy,
/// prime_mix or prime_xor (the last two have no reference rows: the shader parity tests run them on
/// the pcg3d rows' inputs).
template <class F>
decltype(auto) with_hash(const std::string& name, F&& f) {
    if (name == "pcg3d") return f(gorge::pcg3d_hash{});
    if (name == "shadertoy") return f(gorge::shadertoy_hash{});
    if (name == "prime_mix") return f(gorge::prime_mix_hash{});
    if (name == "prime_xor") return f(gorge::prime_xor_hash{});
    throw std::runtime_error("unknown hash '" + name + "' in reference data");
}

template <class T>
gorge::erosion_params<T> erosion_params_of(const csv_table& t, std::size_t row) {
    gorge::erosion_params<T> p;
    p.scale = T(t.number(row, "scale"));
    p.strength = T(t.number(row, "strength"));
    p.gully_weight = T(t.number(row, "gully_weight"));
    p.detail = T(t.number(row, "detail"));
    p.rounding = {T(t.number(row, "rounding_ridge")), T(t.number(row, "rounding_crease")),
                  T(t.number(row, "rounding_input")), T(t.number(row, "rounding_octave"))};
    p.onset = {T(t.number(row, "onset_initial")), T(t.number(row, "onset_octave")),
               T(t.number(row, "onset_ridge_initial")), T(t.number(row, "onset_ridge_octave"))};
    p.assumed_slope = {T(t.number(row, "assumed_slope_value")), T(t.number(row, "assumed_slope_amount"))};
    p.octaves = static_cast<int>(t.number(row, "octaves"));
    p.lacunarity = T(t.number(row, "lacunarity"));
    p.gain = T(t.number(row, "gain"));
    p.cell_scale = T(t.number(row, "cell_scale"));
    p.normalization = T(t.number(row, "normalization"));
    return p;
}

/// Worst absolute error of one output over many rows, with the row where it happened.
struct worst_error {
    const char* what;
    double error = 0.0;
    std::size_t row = 0;
    void add(double got, double want, std::size_t r) {
        const double e = std::fabs(got - want);
        if (!(e <= error)) {  // NaN counts as worst
            error = e;
            row = r;
        }
    }
    void print(const char* context) const {
        std::printf("  %-28s %-16s worst |error| %.3e (row %zu)\n", context, what, error, row + 2);
    }
};

}  // namespace gorge_test
