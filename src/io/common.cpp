// gorge::io: file access, atomic writes, height mappings, the .r16 format, normal, biome and
// splat maps, and the reader chosen by extension.
//
// SPDX-License-Identifier: MPL-2.0
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <system_error>

#if defined(__unix__) || defined(__APPLE__)
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define GORGE_IO_POSIX 1
#endif

#include "io_internal.hpp"

namespace gorge {
namespace io {
namespace detail {

namespace fs = std::filesystem;

namespace {

std::string cell_name(std::ptrdiff_t x, std::ptrdiff_t y) {
    return "cell (" + std::to_string(x) + ", " + std::to_string(y) + ")";
}

std::string errno_text(int err) { return std::generic_category().message(err); }

#if defined(GORGE_IO_POSIX)
/// Removes the temporary file on scope exit unless released.
struct temp_file {
    std::string path;
    int fd = -1;
    bool keep = false;
    ~temp_file() {
        if (fd >= 0) ::close(fd);
        if (!keep && !path.empty()) ::unlink(path.c_str());
    }
};
#endif

std::atomic<unsigned> temp_counter{0};

std::string temp_name(const std::string& path) {
#if defined(GORGE_IO_POSIX)
    const long pid = static_cast<long>(::getpid());
#else
    const long pid = 0;
#endif
    return path + ".tmp-" + std::to_string(pid) + "-" + std::to_string(temp_counter.fetch_add(1));
}

}  // namespace

std::vector<unsigned char> read_file(const std::string& path) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (st.type() == fs::file_type::not_found) throw io_error(path, "cannot open (no such file)");
    if (ec || !fs::exists(st)) throw io_error(path, "cannot open (" + ec.message() + ")");
    if (!fs::is_regular_file(st)) throw io_error(path, "cannot open (not a regular file)");
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) throw io_error(path, "cannot read its size (" + ec.message() + ")");
    if (size > static_cast<std::uintmax_t>(std::numeric_limits<std::streamsize>::max()))
        throw io_error(path, "file too large to read");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error(path, "cannot open for reading");
    std::vector<unsigned char> data;
    try {
        data.resize(static_cast<std::size_t>(size));
    } catch (const std::bad_alloc&) {
        throw io_error(path, "file of " + std::to_string(size) + " bytes too large to allocate");
    } catch (const std::length_error&) {
        throw io_error(path, "file of " + std::to_string(size) + " bytes too large to allocate");
    }
    in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(size));
    if (static_cast<std::uintmax_t>(in.gcount()) != size) throw io_error(path, "read failed (file changed or I/O error)");
    return data;
}

void write_file_atomic(const std::string& path, const unsigned char* data, std::size_t size) {
#if defined(GORGE_IO_POSIX)
    temp_file tmp;
    // O_EXCL: never reuse a file left by someone else; try a few names.
    constexpr int attempts = 64;
    int err = 0;
    for (int i = 0; i < attempts && tmp.fd < 0; ++i) {
        const std::string name = temp_name(path);
        tmp.fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (tmp.fd >= 0) tmp.path = name;
        else if ((err = errno) != EEXIST) break;
    }
    if (tmp.fd < 0) throw io_error(path, "cannot create a temporary file next to it (" + errno_text(err) + ")");
    std::size_t done = 0;
    while (done < size) {
        const std::size_t chunk = std::min<std::size_t>(size - done, std::size_t(1) << 30);
        const ::ssize_t n = ::write(tmp.fd, data + done, chunk);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw io_error(path, "write failed (" + errno_text(errno) + ")");
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(tmp.fd) != 0) throw io_error(path, "write failed on flush (" + errno_text(errno) + ")");
    const int fd = tmp.fd;
    tmp.fd = -1;
    if (::close(fd) != 0) throw io_error(path, "write failed on close (" + errno_text(errno) + ")");
    if (::rename(tmp.path.c_str(), path.c_str()) != 0)
        throw io_error(path, "cannot replace it (" + errno_text(errno) + ")");
    tmp.keep = true;
#else
    const std::string name = temp_name(path);
    std::FILE* f = std::fopen(name.c_str(), "wb");
    if (!f) throw io_error(path, "cannot create a temporary file next to it");
    const bool ok = std::fwrite(data, 1, size, f) == size && std::fflush(f) == 0;
    const bool closed = std::fclose(f) == 0;
    std::error_code ec;
    if (!ok || !closed) {
        fs::remove(name, ec);
        throw io_error(path, "write failed");
    }
    fs::rename(name, path, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(name, ignored);
        throw io_error(path, "cannot replace it (" + ec.message() + ")");
    }
#endif
}

void check_cells(const std::string& path, std::uint64_t width, std::uint64_t height, const read_options& options) {
    if (width == 0 || height == 0) throw io_error(path, "image has zero width or height");
    const std::string dims = std::to_string(width) + " x " + std::to_string(height);
    if (width > options.max_cells / height)
        throw io_error(path, "dimensions " + dims + " too large (more than max_cells = " +
                                 std::to_string(options.max_cells) + " cells; raise read_options::max_cells)");
    const auto limit = static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());
    if (width > limit / height / sizeof(float)) throw io_error(path, "dimensions " + dims + " too large to allocate");
}

grid<float> allocate_heights(const std::string& path, std::ptrdiff_t width, std::ptrdiff_t height) {
    try {
        return grid<float>(width, height);
    } catch (const std::bad_alloc&) {
    } catch (const std::length_error&) {
    }
    throw io_error(path, "dimensions " + std::to_string(width) + " x " + std::to_string(height) +
                             " too large to allocate");
}

void require_finite(grid_view<const float> heights, const char* who) {
    if (heights.empty()) throw std::invalid_argument(std::string(who) + ": heights must not be empty");
    for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
        const float* r = heights.row(y);
        for (std::ptrdiff_t x = 0; x < heights.width(); ++x)
            if (!std::isfinite(r[x]))
                throw std::invalid_argument(std::string(who) + ": height at " + cell_name(x, y) +
                                            " is not finite (NaN or infinite)");
    }
}

code_map::code_map(grid_view<const float> heights, const height_mapping& mapping, std::uint32_t max_code,
                   const char* who)
    : max_code_(max_code) {
    require_finite(heights, who);
    if (mapping.normalises()) {
        float lo = heights(0, 0), hi = lo;
        for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
            const float* r = heights.row(y);
            for (std::ptrdiff_t x = 0; x < heights.width(); ++x) lo = std::min(lo, r[x]), hi = std::max(hi, r[x]);
        }
        used_ = {lo, hi};
    } else {
        used_ = mapping.range();
        if (mapping.outside() == out_of_range::reject) {
            for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
                const float* r = heights.row(y);
                for (std::ptrdiff_t x = 0; x < heights.width(); ++x)
                    if (!(r[x] >= used_.lo && r[x] <= used_.hi)) {
                        char value[32];
                        std::snprintf(value, sizeof value, "%.9g", static_cast<double>(r[x]));
                        char range[80];
                        std::snprintf(range, sizeof range, "[%.9g, %.9g]", static_cast<double>(used_.lo),
                                      static_cast<double>(used_.hi));
                        throw std::invalid_argument(std::string(who) + ": height " + value + " at " + cell_name(x, y) +
                                                    " is outside the mapping's range " + range +
                                                    " (widen it, normalise, or use out_of_range::clamp)");
                    }
            }
        }
    }
    lo_ = static_cast<double>(used_.lo);
    const double span = static_cast<double>(used_.hi) - lo_;
    scale_ = span > 0.0 ? static_cast<double>(max_code) / span : 0.0;
}

std::uint32_t code_map::operator()(float v) const {
    const double c = std::floor((static_cast<double>(v) - lo_) * scale_ + 0.5);
    if (!(c > 0.0)) return 0;  // also below lo when clamping
    if (c >= static_cast<double>(max_code_)) return max_code_;
    return static_cast<std::uint32_t>(c);
}

code_reader::code_reader(const read_options& options, std::uint32_t max_code) {
    if (options.range) {
        mapped_ = true;
        lo_ = static_cast<double>(options.range->lo);
        step_ = (static_cast<double>(options.range->hi) - lo_) / static_cast<double>(max_code);
    }
}

}  // namespace detail

namespace {

constexpr std::uint32_t max_code16 = 65535;
constexpr std::size_t r16_bytes_per_cell = 2;

}  // namespace

heightmap read_r16(const std::string& path, const read_options& options) {
    options.validate();
    const std::vector<unsigned char> bytes = detail::read_file(path);
    const std::uint64_t size = bytes.size();
    std::uint64_t w = 0, h = 0;
    if (options.width == 0) {
        if (size == 0 || size % r16_bytes_per_cell != 0)
            throw io_error(path, ".r16 size is " + std::to_string(size) +
                                     " bytes, not a whole number of 16-bit cells; give width and height");
        const std::uint64_t cells = size / r16_bytes_per_cell;
        auto side = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(cells)));
        while (side * side > cells) --side;
        while ((side + 1) * (side + 1) <= cells) ++side;
        if (side * side != cells)
            throw io_error(path, ".r16 size is " + std::to_string(size) + " bytes (" + std::to_string(cells) +
                                     " cells), not a square; give width and height");
        w = h = side;
    } else {
        w = static_cast<std::uint64_t>(options.width);
        h = static_cast<std::uint64_t>(options.height);
        const bool overflow = w > std::numeric_limits<std::uint64_t>::max() / h / r16_bytes_per_cell;
        if (overflow || w * h * r16_bytes_per_cell != size)
            throw io_error(path, ".r16 size is " + std::to_string(size) + " bytes, expected " + std::to_string(w) +
                                     " x " + std::to_string(h) + " x 2 = " +
                                     (overflow ? std::string("more") : std::to_string(w * h * r16_bytes_per_cell)));
    }
    detail::check_cells(path, w, h, options);
    heightmap out;
    out.heights = detail::allocate_heights(path, static_cast<std::ptrdiff_t>(w), static_cast<std::ptrdiff_t>(h));
    out.max_code = max_code16;
    const detail::code_reader to_height(options, max_code16);
    std::size_t i = 0;
    for (float& v : out.heights) {
        const auto code = static_cast<std::uint32_t>(bytes[i] | (static_cast<std::uint32_t>(bytes[i + 1]) << 8));
        v = to_height(code);
        i += r16_bytes_per_cell;
    }
    return out;
}

height_range write_r16(const std::string& path, grid_view<const float> heights, const height_mapping& mapping) {
    const detail::code_map to_code(heights, mapping, max_code16, "gorge::io::write_r16");
    std::vector<unsigned char> bytes(heights.size() * r16_bytes_per_cell);
    std::size_t i = 0;
    for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
        const float* r = heights.row(y);
        for (std::ptrdiff_t x = 0; x < heights.width(); ++x) {
            const std::uint32_t c = to_code(r[x]);
            bytes[i] = static_cast<unsigned char>(c & 0xffu);  // little-endian: low byte first
            bytes[i + 1] = static_cast<unsigned char>(c >> 8);
            i += r16_bytes_per_cell;
        }
    }
    detail::write_file_atomic(path, bytes.data(), bytes.size());
    return to_code.used();
}

void write_biome_png(const std::string& path, grid_view<const biome> biomes) {
    const char* who = "gorge::io::write_biome_png";
    if (biomes.empty()) throw std::invalid_argument(std::string(who) + ": biomes must not be empty");
    std::vector<rgba8> px;
    px.reserve(biomes.size());
    for (std::ptrdiff_t y = 0; y < biomes.height(); ++y)
        for (std::ptrdiff_t x = 0; x < biomes.width(); ++x) {
            const biome b = biomes(x, y);
            if (static_cast<std::size_t>(b) >= biome_count)
                throw std::invalid_argument(std::string(who) + ": biome at cell (" + std::to_string(x) + ", " +
                                            std::to_string(y) + ") is not a valid biome value");
            const biome_rgb c = biome_colour(b);
            px.push_back(rgba8{c.r, c.g, c.b, 255});
        }
    write_rgba_png(path, grid_view<const rgba8>(px.data(), biomes.width(), biomes.height()));
}

void write_splat_png(const std::string& path, const std::array<grid_view<const float>, 4>& weights) {
    const char* who = "gorge::io::write_splat_png";
    std::ptrdiff_t w = 0, h = 0;
    for (const auto& layer : weights) {
        if (layer.empty()) continue;
        if (w == 0) w = layer.width(), h = layer.height();
        else if (layer.width() != w || layer.height() != h)
            throw std::invalid_argument(std::string(who) + ": weights must share one size");
    }
    if (w == 0) throw std::invalid_argument(std::string(who) + ": weights must not all be empty");
    constexpr float full = 255.0f;
    std::vector<rgba8> px(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), rgba8{0, 0, 0, 0});
    for (std::size_t layer = 0; layer < weights.size(); ++layer) {
        const auto& g = weights[layer];
        if (g.empty()) continue;
        for (std::ptrdiff_t y = 0; y < h; ++y)
            for (std::ptrdiff_t x = 0; x < w; ++x) {
                const float v = g(x, y);
                if (!(v >= 0.0f && v <= 1.0f))
                    throw std::invalid_argument(std::string(who) + ": weights[" + std::to_string(layer) + "] at cell (" +
                                                std::to_string(x) + ", " + std::to_string(y) +
                                                ") is not in [0, 1]");
                const auto c = static_cast<std::uint8_t>(std::floor(v * full + 0.5f));
                rgba8& p = px[static_cast<std::size_t>(y * w + x)];
                (layer == 0 ? p.r : layer == 1 ? p.g : layer == 2 ? p.b : p.a) = c;
            }
    }
    write_rgba_png(path, grid_view<const rgba8>(px.data(), w, h));
}

void write_normal_map_png(const std::string& path, grid_view<const float> heights, const normal_map_options& options) {
    options.validate();
    detail::require_finite(heights, "gorge::io::write_normal_map_png");
    const std::ptrdiff_t w = heights.width(), h = heights.height();
    const double cell = static_cast<double>(options.cell_size);
    const double green_sign = options.green == normal_green::up ? 1.0 : -1.0;
    // Derivative along one axis from the neighbours at i - 1 and i + 1 (one-sided at an edge).
    auto slope = [cell](double before, double here, double after, bool has_before, bool has_after) {
        if (has_before && has_after) return (after - before) / (2.0 * cell);
        if (has_after) return (after - here) / cell;
        if (has_before) return (here - before) / cell;
        return 0.0;
    };
    auto encode = [](double n) {
        constexpr double full = 255.0;
        const double c = std::floor((n * 0.5 + 0.5) * full + 0.5);
        return static_cast<std::uint8_t>(c < 0.0 ? 0.0 : c > full ? full : c);
    };
    std::vector<std::uint8_t> px(heights.size() * 3);
    std::size_t i = 0;
    for (std::ptrdiff_t y = 0; y < h; ++y)
        for (std::ptrdiff_t x = 0; x < w; ++x) {
            const double here = static_cast<double>(heights(x, y));
            const double dx = slope(x > 0 ? static_cast<double>(heights(x - 1, y)) : 0.0, here,
                                    x + 1 < w ? static_cast<double>(heights(x + 1, y)) : 0.0, x > 0, x + 1 < w);
            const double drow = slope(y > 0 ? static_cast<double>(heights(x, y - 1)) : 0.0, here,
                                      y + 1 < h ? static_cast<double>(heights(x, y + 1)) : 0.0, y > 0, y + 1 < h);
            // Surface z = h: normal (-dh/dX, -dh/dY, 1) with Y up the image (dh/dY = -dh/drow).
            const double nx = -dx, ny = green_sign * drow, nz = 1.0;
            const double len = std::sqrt(nx * nx + ny * ny + nz * nz);
            px[i++] = encode(nx / len);
            px[i++] = encode(ny / len);
            px[i++] = encode(nz / len);
        }
    detail::write_png(path, px.data(), px.size(), w, h, 3, 8);
}

namespace {

std::string lower_extension(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext;
}

}  // namespace

heightmap read_heightmap(const std::string& path, const read_options& options) {
    const std::string ext = lower_extension(path);
    if (ext == ".png") return read_png(path, options);
    if (ext == ".r16" || ext == ".raw") return read_r16(path, options);
    if (ext == ".exr") return read_exr(path, options);
    if (has_gdal()) return read_gdal(path, options);
    throw io_error(path, "unknown heightmap format '" + ext +
                             "' (.png, .r16, .raw and .exr are read; other rasters need GDAL, which this build lacks)");
}

}  // namespace io
}  // namespace gorge
