// gorge/erosion/detail/evolution_diffusion.hpp — implicit hillslope diffusion of the landscape
// evolution model: one backward-Euler solve per row, then per column (locally one-dimensional
// splitting), each a tridiagonal system (Thomas algorithm), or a cyclic one (Sherman–Morrison)
// for a periodic line without base-level cells.
//
// Internal to gorge/erosion/landscape_evolution.hpp; see its header comment for the model.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "../../config.hpp"
#include "evolution_routing.hpp"

namespace gorge {
namespace detail {

/// The diffusion number D·dt / cell_size² of one step, as the implicit solve takes it (in T);
/// evolution_params::first_invalid bounds it by evolution_max_diffusion_number.
template <class T>
inline T evo_diffusion_number(T diffusivity, T time_step, T cell_size) {
    return diffusivity * time_step / (cell_size * cell_size);
}

/// Scratch of one line solve.
template <class T>
struct evo_line_scratch {
    std::vector<T> value, c, d, z;
    std::vector<std::uint8_t> kind;
    void resize(std::size_t n) {
        value.resize(n);
        c.resize(n);
        d.resize(n);
        z.resize(n);
        kind.resize(n);
    }
};

/// Solves (1 + a·nb_j)·v_j - a·v_{j-1} - a·v_{j+1} = r_j on cells v[0..len) of a segment (in
/// place: r in, v out), where nb_j counts the neighbours j has in the line, the neighbours
/// before the first and after the last cell being the fixed values `left` / `right` when
/// has_left / has_right (they enter the right-hand side) and absent otherwise (no flux).
/// c is scratch of len elements.
template <class T>
void evo_thomas(T* v, T* c, std::size_t len, T a, bool has_left, T left, bool has_right, T right) {
    if (len == 0) return;
    if (has_left) v[0] += a * left;
    if (has_right) v[len - 1] += a * right;
    const auto diag = [&](std::size_t j) {
        const T nb = T(int(j > 0 || has_left) + int(j + 1 < len || has_right));
        return T(1) + a * nb;
    };
    // Forward sweep: c_j = -a / m_j, v_j = (r_j + a·v_{j-1}) / m_j with m_j = diag_j + a·c_{j-1}.
    T m = diag(0);
    c[0] = -a / m;
    v[0] = v[0] / m;
    for (std::size_t j = 1; j < len; ++j) {
        m = diag(j) + a * c[j - 1];
        c[j] = -a / m;
        v[j] = (v[j] + a * v[j - 1]) / m;
    }
    for (std::size_t j = len - 1; j-- > 0;) v[j] -= c[j] * v[j + 1];
}

/// Solves the cyclic system (1 + 2a)·v_j - a·v_{j-1} - a·v_{j+1} = r_j (indices mod len) in
/// place, by the Sherman–Morrison formula around two Thomas solves.
template <class T>
void evo_cyclic(evo_line_scratch<T>& s, std::size_t len, T a) {
    T* v = s.value.data();
    if (len <= 1) return;
    if (len == 2) {
        // Both neighbours of each cell are the other cell: [[1+2a, -2a], [-2a, 1+2a]].
        const T p = T(1) + T(2) * a, q = T(2) * a;
        const T det = p * p - q * q;  // = 1 + 4a > 0
        const T v0 = (p * v[0] + q * v[1]) / det, v1 = (q * v[0] + p * v[1]) / det;
        v[0] = v0;
        v[1] = v1;
        return;
    }
    // A = B + u·wᵀ with u = (γ, 0, …, 0, -a)ᵀ, w = (1, 0, …, 0, -a/γ)ᵀ, γ = -(1 + 2a); B is
    // tridiagonal with diagonal 1 + 2a except B_00 = 1 + 2a - γ, B_ll = 1 + 2a - a²/γ.
    const T b = T(1) + T(2) * a, gamma = -b;
    T* z = s.z.data();
    T* c = s.c.data();
    const auto solve = [&](T* x, T b0, T bl) {
        T m = b0;
        c[0] = -a / m;
        x[0] = x[0] / m;
        for (std::size_t j = 1; j < len; ++j) {
            m = (j + 1 == len ? bl : b) + a * c[j - 1];
            c[j] = -a / m;
            x[j] = (x[j] + a * x[j - 1]) / m;
        }
        for (std::size_t j = len - 1; j-- > 0;) x[j] -= c[j] * x[j + 1];
    };
    const T b0 = b - gamma, bl = b - a * a / gamma;
    solve(v, b0, bl);
    for (std::size_t j = 0; j < len; ++j) z[j] = T(0);
    z[0] = gamma;
    z[len - 1] = -a;
    solve(z, b0, bl);
    const T beta_over_gamma = -a / gamma;
    const T factor = (v[0] + beta_over_gamma * v[len - 1]) / (T(1) + z[0] + beta_over_gamma * z[len - 1]);
    for (std::size_t j = 0; j < len; ++j) v[j] -= factor * z[j];
}

/// One implicit diffusion solve along a gathered line s.value[0..len) with kinds s.kind
/// (base-level cells fixed, no-data cells breaking the line), periodic when `wrap`. Returns the
/// height (× cells) that flowed into base-level cells: a·(v_free - v_base) summed over every
/// free cell next to a base cell along the line (the exact loss of the solved system).
template <class T>
double evo_diffuse_line(evo_line_scratch<T>& s, std::size_t len, T a, bool wrap) {
    T* v = s.value.data();
    const std::uint8_t* k = s.kind.data();
    std::size_t first_stop = len;  // first non-free cell
    for (std::size_t j = 0; j < len; ++j)
        if (k[j] != evo_free) {
            first_stop = j;
            break;
        }
    if (first_stop == len) {
        if (wrap)
            evo_cyclic(s, len, a);
        else
            evo_thomas(v, s.c.data(), len, a, false, T(0), false, T(0));
        return 0.0;
    }
    double out = 0;
    // Segments of free cells between stops; with wrap, the one across the line's ends is copied
    // into s.d (contiguous) and back.
    const auto segment = [&](std::size_t start, std::size_t count, std::size_t before, bool has_before,
                             std::size_t after, bool has_after) {
        if (count == 0) return;
        const bool left = has_before && k[before] == evo_base;
        const bool right = has_after && k[after] == evo_base;
        const T lv = left ? v[before] : T(0), rv = right ? v[after] : T(0);
        T* buf = s.d.data();
        for (std::size_t j = 0; j < count; ++j) buf[j] = v[(start + j) % len];
        evo_thomas(buf, s.c.data(), count, a, left, lv, right, rv);
        for (std::size_t j = 0; j < count; ++j) v[(start + j) % len] = buf[j];
        if (left) out += double(a) * (double(buf[0]) - double(lv));
        if (right) out += double(a) * (double(buf[count - 1]) - double(rv));
    };
    if (!wrap) {
        // Leading segment (closed edge before it), then between stops, then the trailing one.
        segment(0, first_stop, 0, false, first_stop, true);
        std::size_t prev = first_stop;
        for (std::size_t j = first_stop + 1; j <= len; ++j) {
            if (j == len) {
                segment(prev + 1, len - prev - 1, prev, true, 0, false);
                break;
            }
            if (k[j] != evo_free) {
                segment(prev + 1, j - prev - 1, prev, true, j, true);
                prev = j;
            }
        }
        return out;
    }
    // Periodic: walk once around the ring from the first stop.
    std::size_t prev = first_stop;
    for (std::size_t step = 1; step <= len; ++step) {
        const std::size_t j = (first_stop + step) % len;
        if (k[j] != evo_free) {
            const std::size_t count = step - 1 - ((prev + len - first_stop) % len);
            segment((prev + 1) % len, count, prev, true, j, true);
            prev = j;
        }
    }
    return out;
}

/// Coefficients of cell j's equation in a line whose ends are closed (not periodic):
/// lower·x_(j-1) + diag·x_j + upper·x_(j+1) = rhs; an identity row for base-level and no-data
/// cells (they keep their value), and base-level neighbours moved into the right-hand side.
template <class T>
struct evo_row_eq {
    T lower, diag, upper, rhs;
};
template <class T>
GORGE_FORCEINLINE evo_row_eq<T> evo_equation(std::uint8_t self, bool has_prev, std::uint8_t prev, T prev_v,
                                             bool has_next, std::uint8_t next, T next_v, T v, T a) {
    if (self != evo_free) return {T(0), T(1), T(0), v};
    const bool p_free = has_prev && prev == evo_free, n_free = has_next && next == evo_free;
    const bool p_base = has_prev && prev == evo_base, n_base = has_next && next == evo_base;
    const T nb = T(int(p_free || p_base) + int(n_free || n_base));
    T rhs = v;
    if (p_base) rhs += a * prev_v;
    if (n_base) rhs += a * next_v;
    return {p_free ? -a : T(0), T(1) + a * nb, n_free ? -a : T(0), rhs};
}

/// One implicit diffusion solve along a contiguous, non-periodic line v[0..len) with kinds k,
/// in place (Thomas algorithm over identity rows at stops); c is scratch of len elements.
/// Returns the height (× cells) that flowed into base-level cells.
template <class T>
double evo_diffuse_open_line(T* v, const std::uint8_t* k, T* c, std::size_t len, T a) {
    T prev_c = T(0), prev_d = T(0);
    for (std::size_t j = 0; j < len; ++j) {
        const bool hp = j > 0, hn = j + 1 < len;
        const evo_row_eq<T> e = evo_equation<T>(k[j], hp, hp ? k[j - 1] : std::uint8_t(evo_void), hp ? v[j - 1] : T(0),
                                               hn, hn ? k[j + 1] : std::uint8_t(evo_void), hn ? v[j + 1] : T(0),
                                               v[j], a);
        const T denom = e.diag - e.lower * prev_c;
        prev_c = e.upper / denom;
        prev_d = (e.rhs - e.lower * prev_d) / denom;
        c[j] = prev_c;
        v[j] = prev_d;
    }
    for (std::size_t j = len - 1; j-- > 0;) v[j] -= c[j] * v[j + 1];
    double out = 0;
    for (std::size_t j = 0; j < len; ++j) {
        if (k[j] != evo_free) continue;
        if (j > 0 && k[j - 1] == evo_base) out += double(a) * (double(v[j]) - double(v[j - 1]));
        if (j + 1 < len && k[j + 1] == evo_base) out += double(a) * (double(v[j]) - double(v[j + 1]));
    }
    return out;
}

/// The LU factors of every open (non-periodic) line solve along one axis of a map, which stay
/// the same from step to step (they depend on a and the cell kinds along the line only): the
/// forward sweep is x_j = v_j·m_j - l_j·x_(j-1) (m = 1/pivot, l = lower/pivot) and the backward
/// one x_j -= c_j·x_(j+1) (c = upper/pivot). Base-level cells are identity rows (m = 1,
/// l = c = 0: they keep their height) that their free neighbours stay coupled to (the
/// neighbour's l or c is -a/pivot, so the base height enters through the sweeps), and so are
/// no-data cells, whose free neighbours do not exist (zero coefficients, never multiplied).
/// Lines with the same kinds share their factors: the factors are stored once per distinct
/// line pattern (`len` values each), and most maps have only a few patterns (every inner line
/// of a map with fixed edges has the same one), so the sweeps read their factors from cache.
template <class T>
struct evo_line_factors {
    std::size_t len = 0;             ///< cells per line
    std::vector<T> m, l, c;          ///< per pattern p: entries [p·len, (p + 1)·len)
    std::vector<evo_index> pattern;  ///< per line: its pattern
    /// Runs of consecutive lines with one pattern: lines [run_start[r], run_start[r + 1]) have
    /// pattern pattern[run_start[r]]; run_start ends with the number of lines.
    std::vector<std::size_t> run_start;
    /// The free/base-level pairs of adjacent cells along each line, in line order (for each free
    /// cell: the pair with the cell before it, then with the cell after it): line i's pairs are
    /// [pair_start[i], pair_start[i + 1]).
    std::vector<std::size_t> pair_start;
    std::vector<evo_index> pair_free, pair_base;
    bool empty() const { return pattern.empty(); }
};

/// Height (× cells) that flowed into base-level cells along solved line `line` of map h:
/// a·(h_free - h_base) summed over the line's free/base-level pairs.
template <class T>
double evo_line_outflow(const T* h, const evo_line_factors<T>& fz, std::size_t line, T a) {
    double out = 0;
    for (std::size_t q = fz.pair_start[line]; q < fz.pair_start[line + 1]; ++q)
        out += double(a) * (double(h[fz.pair_free[q]]) - double(h[fz.pair_base[q]]));
    return out;
}

/// Factors of the lines along x (rows, when `rows`) or along y (columns) of a width × height
/// map with kinds `kind`, diffusion number a.
template <class T>
void evo_factor_lines(const std::uint8_t* kind, std::ptrdiff_t width, std::ptrdiff_t height, bool rows, T a,
                      evo_line_factors<T>& out) {
    const std::ptrdiff_t lines = rows ? height : width, len = rows ? width : height;
    const std::ptrdiff_t stride = rows ? 1 : width;
    out.len = std::size_t(len);
    out.m.clear();
    out.l.clear();
    out.c.clear();
    out.pattern.assign(std::size_t(lines), 0);
    out.run_start.clear();
    out.pair_start.assign(1, 0);
    out.pair_free.clear();
    out.pair_base.clear();
    std::unordered_map<std::string, evo_index> seen;
    std::string key(std::size_t(len), '\0');
    for (std::ptrdiff_t line = 0; line < lines; ++line) {
        const std::ptrdiff_t first = rows ? line * width : line;
        for (std::ptrdiff_t j = 0; j < len; ++j) key[std::size_t(j)] = char(kind[std::size_t(first + j * stride)]);
        const auto found = seen.find(key);
        evo_index p = 0;
        if (found != seen.end()) {
            p = found->second;
        } else {
            p = static_cast<evo_index>(seen.size());
            seen.emplace(key, p);
            T prev_c = T(0);
            for (std::ptrdiff_t j = 0; j < len; ++j) {
                const auto self = std::uint8_t(key[std::size_t(j)]);
                if (self != evo_free) {
                    out.m.push_back(T(1));
                    out.l.push_back(T(0));
                    out.c.push_back(T(0));
                    prev_c = T(0);
                    continue;
                }
                const bool has_prev = j > 0 && std::uint8_t(key[std::size_t(j - 1)]) != evo_void;
                const bool has_next = j + 1 < len && std::uint8_t(key[std::size_t(j + 1)]) != evo_void;
                const T lower = has_prev ? -a : T(0), upper = has_next ? -a : T(0);
                const T diag = T(1) + a * T(int(has_prev) + int(has_next));
                const T pivot = diag - lower * prev_c;
                prev_c = upper / pivot;
                out.m.push_back(T(1) / pivot);
                out.l.push_back(lower / pivot);
                out.c.push_back(prev_c);
            }
        }
        for (std::ptrdiff_t j = 0; j < len; ++j) {
            if (std::uint8_t(key[std::size_t(j)]) != evo_free) continue;
            const auto cell = static_cast<evo_index>(first + j * stride);
            if (j > 0 && std::uint8_t(key[std::size_t(j - 1)]) == evo_base) {
                out.pair_free.push_back(cell);
                out.pair_base.push_back(static_cast<evo_index>(first + (j - 1) * stride));
            }
            if (j + 1 < len && std::uint8_t(key[std::size_t(j + 1)]) == evo_base) {
                out.pair_free.push_back(cell);
                out.pair_base.push_back(static_cast<evo_index>(first + (j + 1) * stride));
            }
        }
        out.pair_start.push_back(out.pair_free.size());
        out.pattern[std::size_t(line)] = p;
        if (line == 0 || p != out.pattern[std::size_t(line - 1)]) out.run_start.push_back(std::size_t(line));
    }
    out.run_start.push_back(std::size_t(lines));
}

/// Rows [y0, y1) of a row-major map solved with their factors (fz), in place. Rows are solved
/// `evo_row_batch` at a time, interleaved, so their recurrences overlap. A coefficient of 0
/// never multiplies a neighbour (no-data values may be NaN or infinite).
constexpr std::ptrdiff_t evo_row_batch = 4;
template <class T>
void evo_solve_rows(T* h, const evo_line_factors<T>& fz, std::ptrdiff_t width, std::ptrdiff_t y0, std::ptrdiff_t y1) {
    for (std::ptrdiff_t yb = y0; yb < y1; yb += evo_row_batch) {
        const std::ptrdiff_t nr = std::min(evo_row_batch, y1 - yb);
        const T* m[evo_row_batch] = {};
        const T* l[evo_row_batch] = {};
        const T* c[evo_row_batch] = {};
        T* v[evo_row_batch] = {};
        for (std::ptrdiff_t r = 0; r < nr; ++r) {
            const std::size_t o = std::size_t(fz.pattern[std::size_t(yb + r)]) * fz.len;
            m[r] = fz.m.data() + o;
            l[r] = fz.l.data() + o;
            c[r] = fz.c.data() + o;
            v[r] = h + (yb + r) * width;
        }
        T x[evo_row_batch] = {};
        for (std::ptrdiff_t j = 0; j < width; ++j)
            for (std::ptrdiff_t r = 0; r < nr; ++r) {
                const T lower = l[r][j];
                const T carried = lower != T(0) ? lower * x[r] : T(0);
                x[r] = v[r][j] * m[r][j] - carried;
                v[r][j] = x[r];
            }
        for (std::ptrdiff_t j = width - 1; j-- > 0;)
            for (std::ptrdiff_t r = 0; r < nr; ++r) {
                const T upper = c[r][j];
                v[r][j] -= upper != T(0) ? upper * v[r][j + 1] : T(0);
            }
    }
}

/// Columns [x0, x1) of a row-major map solved with their factors (fz), in place, all columns at
/// once row by row, each run of columns with one pattern with its factors broadcast
/// (contiguous, vectorisable).
template <class T>
void evo_solve_columns(T* h, const evo_line_factors<T>& fz, std::ptrdiff_t width, std::ptrdiff_t height,
                       std::ptrdiff_t x0, std::ptrdiff_t x1) {
    // The runs meeting [x0, x1), clipped.
    struct piece {
        std::ptrdiff_t begin, end;
        std::size_t at;  // the pattern's first factor
    };
    std::vector<piece> pieces;
    for (std::size_t r = 0; r + 1 < fz.run_start.size(); ++r) {
        const std::ptrdiff_t b = std::max(x0, std::ptrdiff_t(fz.run_start[r]));
        const std::ptrdiff_t e = std::min(x1, std::ptrdiff_t(fz.run_start[r + 1]));
        if (b < e) pieces.push_back({b, e, std::size_t(fz.pattern[fz.run_start[r]]) * fz.len});
    }
    const T* m = fz.m.data();
    const T* l = fz.l.data();
    const T* c = fz.c.data();
    for (std::ptrdiff_t y = 0; y < height; ++y) {
        T* row = h + y * width;
        const T* up = row - width;
        for (const piece& q : pieces) {
            const std::size_t i = q.at + std::size_t(y);
            const T mul = m[i], lower = l[i];
            if (lower != T(0)) {
                for (std::ptrdiff_t x = q.begin; x < q.end; ++x) row[x] = row[x] * mul - lower * up[x];
            } else if (mul != T(1)) {
                for (std::ptrdiff_t x = q.begin; x < q.end; ++x) row[x] = row[x] * mul;
            }
        }
    }
    for (std::ptrdiff_t y = height - 1; y-- > 0;) {
        T* row = h + y * width;
        const T* down = row + width;
        for (const piece& q : pieces) {
            const T upper = c[q.at + std::size_t(y)];
            if (upper != T(0))
                for (std::ptrdiff_t x = q.begin; x < q.end; ++x) row[x] -= upper * down[x];
        }
    }
}

}  // namespace detail
}  // namespace gorge
