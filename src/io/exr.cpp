// gorge::io: OpenEXR through tinyexr.
//
// SPDX-License-Identifier: MPL-2.0
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include <tinyexr.h>

#include <gorge/grid/no_data.hpp>

#include "io_internal.hpp"

namespace gorge {
namespace io {

namespace {

/// tinyexr's error text (freed), or a fallback.
std::string take_error(const char* err, const char* fallback) {
    std::string text = err ? err : fallback;
    if (err) FreeEXRErrorMessage(err);
    // Keep the message on one line.
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
}

struct header_guard {
    EXRHeader* h;
    ~header_guard() { FreeEXRHeader(h); }
};
struct image_guard {
    EXRImage* img;
    ~image_guard() { FreeEXRImage(img); }
};

}  // namespace

heightmap read_exr(const std::string& path, const read_options& options) {
    options.validate();
    const std::vector<unsigned char> bytes = detail::read_file(path);
    EXRVersion version{};
    if (ParseEXRVersionFromMemory(&version, bytes.data(), bytes.size()) != TINYEXR_SUCCESS)
        throw io_error(path, "not an OpenEXR file (bad magic number or version)");
    if (version.multipart || version.non_image) throw io_error(path, "multi-part and deep EXR files are not supported");
    EXRHeader header;
    InitEXRHeader(&header);
    const char* err = nullptr;
    if (ParseEXRHeaderFromMemory(&header, &version, bytes.data(), bytes.size(), &err) != TINYEXR_SUCCESS) {
        FreeEXRHeader(&header);
        throw io_error(path, "corrupt EXR header (" + take_error(err, "unreadable") + ")");
    }
    header_guard hg{&header};
    if (header.tiled) throw io_error(path, "tiled EXR files are not supported (scanline expected)");
    const auto& dw = header.data_window;
    const std::int64_t w = std::int64_t(dw.max_x) - dw.min_x + 1, h = std::int64_t(dw.max_y) - dw.min_y + 1;
    if (w <= 0 || h <= 0) throw io_error(path, "corrupt EXR header (empty data window)");
    detail::check_cells(path, static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), options);

    int channel = -1;
    if (header.num_channels == 1) channel = 0;
    for (const char* name : {"Y", "R"})
        for (int c = 0; c < header.num_channels && channel < 0; ++c)
            if (std::strcmp(header.channels[c].name, name) == 0) channel = c;
    if (channel < 0) {
        std::string names;
        for (int c = 0; c < header.num_channels; ++c) names += (c ? ", " : "") + std::string(header.channels[c].name);
        throw io_error(path, "EXR has no channel to read as heights (one channel, or Y or R, expected; found " + names + ")");
    }
    const int type = header.pixel_types[channel];
    if (type == TINYEXR_PIXELTYPE_UINT)
        throw io_error(path, std::string("EXR channel ") + header.channels[channel].name +
                                 " holds unsigned integers (float or half expected)");
    for (int c = 0; c < header.num_channels; ++c)
        if (header.pixel_types[c] == TINYEXR_PIXELTYPE_HALF) header.requested_pixel_types[c] = TINYEXR_PIXELTYPE_FLOAT;

    EXRImage image;
    InitEXRImage(&image);
    if (LoadEXRImageFromMemory(&image, &header, bytes.data(), bytes.size(), &err) != TINYEXR_SUCCESS) {
        FreeEXRImage(&image);
        throw io_error(path, "corrupt or truncated EXR (" + take_error(err, "unreadable pixel data") + ")");
    }
    image_guard ig{&image};
    if (!image.images || image.width != w || image.height != h)
        throw io_error(path, "corrupt EXR (pixel data does not match the data window)");

    heightmap out;
    out.heights = detail::allocate_heights(path, static_cast<std::ptrdiff_t>(w), static_cast<std::ptrdiff_t>(h));
    const auto* src = reinterpret_cast<const float*>(image.images[channel]);
    std::size_t i = 0;
    for (std::ptrdiff_t y = 0; y < out.heights.height(); ++y)
        for (std::ptrdiff_t x = 0; x < out.heights.width(); ++x, ++i) {
            const float v = src[i];
            if (!std::isfinite(v))
                throw io_error(path, "non-finite value (NaN or infinity) at cell (" + std::to_string(x) + ", " +
                                         std::to_string(y) + ")");
            out.heights(x, y) = v;
        }
    return out;
}

void write_exr(const std::string& path, grid_view<const float> heights, const std::optional<float>& no_data) {
    if (no_data) {
        if (heights.empty()) throw std::invalid_argument("gorge::io::write_exr: heights must not be empty");
        gorge::detail::check_heights(heights, no_data, "gorge::io::write_exr");
    } else {
        detail::require_finite(heights, "gorge::io::write_exr");
    }
    constexpr std::ptrdiff_t exr_max_side = std::numeric_limits<int>::max();
    if (heights.width() > exr_max_side || heights.height() > exr_max_side)
        throw io_error(path, "image too large for EXR");
    std::vector<float> px;
    px.reserve(heights.size());
    for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
        const float* r = heights.row(y);
        px.insert(px.end(), r, r + heights.width());
    }
    EXRHeader header;
    InitEXRHeader(&header);
    EXRChannelInfo channel{};
    std::strcpy(channel.name, "Y");
    int pixel_type = TINYEXR_PIXELTYPE_FLOAT, stored_type = TINYEXR_PIXELTYPE_FLOAT;
    header.num_channels = 1;
    header.channels = &channel;
    header.pixel_types = &pixel_type;
    header.requested_pixel_types = &stored_type;
    header.compression_type = TINYEXR_COMPRESSIONTYPE_ZIP;

    EXRImage image;
    InitEXRImage(&image);
    unsigned char* plane = reinterpret_cast<unsigned char*>(px.data());
    image.images = &plane;
    image.width = static_cast<int>(heights.width());
    image.height = static_cast<int>(heights.height());
    image.num_channels = 1;

    unsigned char* memory = nullptr;
    const char* err = nullptr;
    const std::size_t size = SaveEXRImageToMemory(&image, &header, &memory, &err);
    std::unique_ptr<unsigned char, decltype(&std::free)> owned(memory, &std::free);
    if (size == 0 || !memory) throw io_error(path, "EXR encoding failed (" + take_error(err, "no output") + ")");
    detail::write_file_atomic(path, memory, size);
}

}  // namespace io
}  // namespace gorge
