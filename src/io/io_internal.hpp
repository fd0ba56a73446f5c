// Internal helpers of gorge::io shared by its codec files (not installed).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <gorge/io/heightmap_io.hpp>

namespace gorge {
namespace io {
namespace detail {

/// The whole content of a regular file. io_error naming the file when it is missing, not a
/// regular file, or unreadable.
std::vector<unsigned char> read_file(const std::string& path);

/// Writes bytes to path atomically: a temporary file in the same directory, flushed, then renamed
/// over the target. On failure the temporary file is removed and io_error names the target.
void write_file_atomic(const std::string& path, const unsigned char* data, std::size_t size);

/// io_error unless width x height (both >= 1) is at most options.max_cells.
void check_cells(const std::string& path, std::uint64_t width, std::uint64_t height, const read_options& options);

/// A width x height float grid; io_error "too large to allocate" when the allocation fails.
grid<float> allocate_heights(const std::string& path, std::ptrdiff_t width, std::ptrdiff_t height);

/// Heights mapped to integer codes 0..max_code under a mapping (validated when made).
class code_map {
public:
    /// Checks every height (finite; inside the absolute range unless it clamps) and fixes the
    /// range. Throws std::invalid_argument naming `who` and the cell.
    code_map(grid_view<const float> heights, const height_mapping& mapping, std::uint32_t max_code, const char* who);
    std::uint32_t operator()(float v) const;
    height_range used() const { return used_; }

private:
    height_range used_;
    double lo_ = 0.0, scale_ = 0.0;
    std::uint32_t max_code_;
};

/// Converts read codes to heights: the codes themselves, or lo + c / max_code * (hi - lo).
class code_reader {
public:
    code_reader(const read_options& options, std::uint32_t max_code);
    float operator()(std::uint32_t code) const {
        return mapped_ ? static_cast<float>(lo_ + static_cast<double>(code) * step_) : static_cast<float>(code);
    }

private:
    bool mapped_ = false;
    double lo_ = 0.0, step_ = 1.0;
};

/// Throws std::invalid_argument naming `who` and the first non-finite cell.
void require_finite(grid_view<const float> heights, const char* who);

/// PNG encoding (png.cpp): pixels packed row-major in host byte order, channels 1 (grey), 3 (RGB)
/// or 4 (RGBA), bit depth 8 or 16; written atomically.
void write_png(const std::string& path, const void* pixels, std::size_t bytes, std::ptrdiff_t width,
               std::ptrdiff_t height, int channels, int bit_depth);

}  // namespace detail
}  // namespace io
}  // namespace gorge
