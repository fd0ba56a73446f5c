// gorge/io/heightmap_io.hpp — reading and writing heightmap files (the optional gorge::io component).
//
// This header belongs to the compiled library gorge::io (CMake: find_package(gorge COMPONENTS io),
// target gorge::io; built with -DGORGE_BUILD_IO=AUTO/ON). The codecs are Debian's well-kept
// libraries: libspng (PNG), tinyexr (OpenEXR) and, when gorge::io was built with it, GDAL
// (GeoTIFF and every GIS raster GDAL reads). The header itself needs only the C++ standard
// library and gorge's core headers.
//
// Everything lives in namespace gorge::io.
//
// Formats
//   read_png     8- or 16-bit grayscale PNG; RGB(A), grey+alpha and palette PNGs only when every
//                pixel is grey (R = G = B) and opaque (see read_png).
//   read_r16     headerless 16-bit little-endian, row-major, top row first (.r16, .raw).
//   read_exr     one float32 or half channel of a scanline OpenEXR file.
//   read_gdal    band 1 of any raster GDAL opens, with the band's no-data value.
//   write_png16, write_r16, write_exr, write_geotiff (float32, through GDAL), write_png8
//   (preview), write_rgba_png, write_biome_png, write_splat_png, write_normal_map_png.
//
// Height mapping (integer formats). The caller always chooses how heights become integer codes:
// height_mapping::absolute(lo, hi) maps lo to code 0 and hi to the largest code (65535 or 255);
// height_mapping::normalise() uses the data's own minimum and maximum. Either way, the writer
// returns the height_range it used, so nothing is normalised silently. Reading returns the raw
// codes as floats (0..65535 or 0..255, exact) unless read_options::range is given, in which case
// code c becomes lo + c / max_code * (hi - lo).
//
// Errors. A file that cannot be read or written throws io_error, whose one-line message names the
// file and what is wrong ("gorge::io: terrain.png: truncated PNG (...)"). Bad arguments (a
// non-finite height, an out-of-range value, a bad mapping or option) throw std::invalid_argument
// naming the parameter or the cell, before any file is created.
//
// Atomic writes. Every writer encodes the whole file in memory, writes it to a temporary file in
// the target's directory ("<name>.tmp-<pid>-<n>"), flushes it to disk (fsync on POSIX) and renames
// it over the target. A failure removes the temporary file: the target is either left as it was
// or fully replaced, never half-written. Readers open their input read-only.
//
// Thread safety: every function may be called from several threads at once on different files.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "../biome/biome.hpp"
#include "../detail/validate.hpp"
#include "../grid/grid.hpp"

namespace gorge {
namespace io {

/// A file could not be read or written. what() is one line: "gorge::io: <path>: <reason>".
class io_error : public std::runtime_error {
public:
    io_error(const std::string& path, const std::string& reason)
        : std::runtime_error("gorge::io: " + path + ": " + reason), path_(path) {}
    /// The file concerned, as given by the caller.
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
};

/// A closed height interval: lo maps to integer code 0, hi to the format's largest code.
struct height_range {
    float lo = 0.0f;  ///< height of code 0, in the heights' units (finite)
    float hi = 0.0f;  ///< height of the largest code (finite, >= lo; == lo only for a flat map)
};

/// What an absolute mapping does with heights outside [lo, hi].
enum class out_of_range : std::uint8_t {
    reject,  ///< throw std::invalid_argument naming the first such cell (default)
    clamp,   ///< write code 0 below lo and the largest code above hi
};

/// How a writer of an integer format turns heights into codes. There is deliberately no default:
/// make one with absolute() or normalise().
class height_mapping {
public:
    /// Heights lo..hi map linearly to codes 0..max_code (rounded to nearest); heights outside
    /// are rejected or clamped as `outside` says. lo and hi must be finite with lo < hi (else
    /// std::invalid_argument naming lo or hi).
    static height_mapping absolute(float lo, float hi, out_of_range outside = out_of_range::reject) {
        if (!std::isfinite(lo)) throw std::invalid_argument("gorge::io::height_mapping: invalid lo (must be finite)");
        if (!std::isfinite(hi) || !(hi > lo))
            throw std::invalid_argument("gorge::io::height_mapping: invalid hi (must be finite and > lo)");
        return height_mapping(false, height_range{lo, hi}, outside);
    }
    /// The data's minimum maps to code 0 and its maximum to the largest code; the writer returns
    /// that range. A flat map (minimum == maximum) writes code 0 everywhere and returns lo == hi.
    static height_mapping normalise() { return height_mapping(true, height_range{}, out_of_range::reject); }

    bool normalises() const noexcept { return normalise_; }
    /// The absolute range (meaningless when normalises()).
    height_range range() const noexcept { return range_; }
    out_of_range outside() const noexcept { return outside_; }

private:
    height_mapping(bool normalise, height_range range, out_of_range outside)
        : normalise_(normalise), range_(range), outside_(outside) {}
    bool normalise_;
    height_range range_;
    out_of_range outside_;
};

/// Largest number of cells a reader accepts by default: 2^30 (a 32768 x 32768 map, 4 GiB of
/// floats). Larger files need read_options::max_cells raised.
inline constexpr std::uint64_t default_max_cells = std::uint64_t(1) << 30;

/// Options of the readers.
struct read_options {
    /// Integer formats (PNG, .r16): when set, code c is returned as lo + c / max_code * (hi - lo)
    /// (lo < hi, both finite); default: the codes themselves (0..65535 or 0..255, exact).
    /// Float formats (EXR, GDAL) ignore it.
    std::optional<height_range> range;
    /// .r16/.raw only: the size in cells. Both 0 (default): the file must be square, side
    /// sqrt(bytes / 2). Else both > 0 and the file must hold exactly width x height x 2 bytes.
    std::ptrdiff_t width = 0;
    std::ptrdiff_t height = 0;
    /// Files with more cells than this are rejected (io_error "too large") before anything is
    /// allocated. Default default_max_cells; >= 1.
    std::uint64_t max_cells = default_max_cells;

    /// Name and rule of the first bad option; empty (== nullptr) when all are valid.
    invalid_parameter first_invalid() const {
        if (range && (!std::isfinite(range->lo) || !std::isfinite(range->hi) || !(range->hi > range->lo)))
            return "range (lo and hi must be finite with lo < hi)";
        if (width < 0 || height < 0 || (width == 0) != (height == 0))
            return "width, height (both 0 to infer a square size, or both > 0)";
        if (max_cells == 0) return "max_cells (must be >= 1)";
        return {};
    }
    /// Throws std::invalid_argument naming the first bad option.
    void validate() const { detail::validate(*this, "gorge::io::read_options"); }
};

/// Where a GeoTIFF's cells lie on the ground (north-up: rows run south, columns east). Written as
/// GDAL's geotransform (origin[0], cell_size[0], 0, origin[1], 0, -cell_size[1]).
struct geo_placement {
    /// Coordinates of the outer corner of cell (0, 0) (the north-west corner of the map), in the
    /// units of the (unset) coordinate reference system; finite. Default (0, 0).
    std::array<double, 2> origin{{0.0, 0.0}};
    /// Width (east) and height (south) of one cell, same units; finite and > 0. Default (1, 1).
    std::array<double, 2> cell_size{{1.0, 1.0}};
};

/// A heightmap read from a file.
struct heightmap {
    /// Heights, row-major, top row (the file's first row) first.
    grid<float> heights;
    /// Largest integer code of the source format: 65535 (16-bit PNG, .r16), 255 (8-bit PNG), or
    /// 0 for float formats (EXR, GDAL).
    std::uint32_t max_code = 0;
    /// The no-data value of a GDAL band (as float), to pass on as fill_options::no_data or
    /// flow_options::no_data; empty for other formats and for bands without one.
    std::optional<float> no_data;
    /// Where the cells lie (read_gdal only): the raster's geotransform when it has one and it is
    /// north-up (no rotation terms, cell width > 0, rows running south); empty for other formats,
    /// for rasters without a geotransform, and for rotated or south-up ones.
    std::optional<geo_placement> placement;
};

/// Reads a PNG heightmap. 8- and 16-bit grayscale are read as they are (max_code 255 or 65535).
/// Truecolour, grey+alpha and palette images are accepted only when every pixel is grey
/// (R = G = B) and fully opaque; their grey value is the height code (8- or 16-bit by the
/// file's bit depth). Anything else (a coloured or transparent pixel, 1/2/4-bit grayscale) is an
/// io_error naming the file and the reason. No gamma or colour correction is applied.
heightmap read_png(const std::string& path, const read_options& options = {});

/// Reads a headerless 16-bit little-endian heightmap (.r16, .raw): row-major, top row first.
/// Size from options.width/height, or inferred for a square file (else io_error).
heightmap read_r16(const std::string& path, const read_options& options = {});

/// Reads a scanline OpenEXR file: its only channel, or else its "Y" channel, or else "R"
/// (float32 exact; half converted exactly). Every value must be finite (io_error naming the
/// first bad cell). Tiled, deep and multi-part files are rejected.
heightmap read_exr(const std::string& path, const read_options& options = {});

/// Reads band 1 of a raster through GDAL (GeoTIFF, SRTM .hgt, ASCII grid...) as float32. The
/// band's no-data value is returned in heightmap::no_data; every other cell must be finite.
/// Scale/offset metadata is not applied. Throws io_error when gorge::io was built without GDAL
/// (see has_gdal()).
heightmap read_gdal(const std::string& path, const read_options& options = {});

/// True when gorge::io was built with GDAL (read_gdal works).
bool has_gdal() noexcept;

/// Reads a heightmap, choosing the reader by the file name's extension (case-insensitive): .png,
/// .r16 and .raw, .exr; anything else goes to GDAL when available, else io_error.
heightmap read_heightmap(const std::string& path, const read_options& options = {});

/// Writes a 16-bit grayscale PNG (lossless; what Unreal imports). Returns the range mapped to
/// codes 0..65535. Heights must be finite.
height_range write_png16(const std::string& path, grid_view<const float> heights, const height_mapping& mapping);

/// Writes a headerless 16-bit little-endian file (.r16/.raw; Unity, Unreal): row-major, top row
/// first, width x height x 2 bytes. Returns the range mapped to codes 0..65535.
height_range write_r16(const std::string& path, grid_view<const float> heights, const height_mapping& mapping);

/// Writes an 8-bit grayscale PNG preview (256 levels: not for terrain data). Returns the range
/// mapped to codes 0..255.
height_range write_png8(const std::string& path, grid_view<const float> heights, const height_mapping& mapping);

/// Writes a single-channel ("Y") float32 OpenEXR file, ZIP-compressed (lossless): heights are
/// stored exactly, in their own units. Heights must be finite, except cells equal to `no_data`
/// (every NaN cell when it is NaN), which are stored as they are (default: none). EXR has no
/// no-data tag: the value is not recorded, and read_exr rejects NaN cells.
void write_exr(const std::string& path, grid_view<const float> heights,
               const std::optional<float>& no_data = std::nullopt);

/// Options of write_geotiff.
struct geotiff_options {
    /// Written as the band's no-data value; cells equal to it (every NaN cell when it is NaN) may
    /// be non-finite and are stored as they are. Default: none (every cell must be finite).
    std::optional<float> no_data;
    /// Written as the geotransform when set. Default: none (GDAL then reports the identity
    /// transform: cell (x, y) at x, y).
    std::optional<geo_placement> placement;

    /// Name and rule of the first bad option; empty (== nullptr) when all are valid.
    invalid_parameter first_invalid() const {
        if (placement) {
            if (!std::isfinite(placement->origin[0]) || !std::isfinite(placement->origin[1]))
                return "placement.origin (must be finite)";
            for (const double c : placement->cell_size)
                if (!std::isfinite(c) || !(c > 0.0)) return "placement.cell_size (must be finite and > 0)";
        }
        return {};
    }
    /// Throws std::invalid_argument naming the first bad option.
    void validate() const { detail::validate(*this, "gorge::io::geotiff_options"); }
};

/// Writes a single-band float32 GeoTIFF through GDAL (GIS tools; lossless, DEFLATE-compressed,
/// heights in their own units), with the no-data value and geotransform of `options`; read it
/// back with read_gdal. Every cell must be finite unless it is the no-data value
/// (std::invalid_argument naming the cell). Written atomically like every writer (encoded in
/// memory, then a temporary file renamed over the target). Throws io_error ("built without
/// GDAL") when gorge::io lacks GDAL (see has_gdal()), before anything is written.
void write_geotiff(const std::string& path, grid_view<const float> heights, const geotiff_options& options = {});

/// An 8-bit sRGB colour with alpha (255 = opaque).
struct rgba8 {
    std::uint8_t r = 0, g = 0, b = 0, a = 255;
    friend bool operator==(const rgba8& x, const rgba8& y) {
        return x.r == y.r && x.g == y.g && x.b == y.b && x.a == y.a;
    }
    friend bool operator!=(const rgba8& x, const rgba8& y) { return !(x == y); }
};

/// Writes an 8-bit RGBA PNG.
void write_rgba_png(const std::string& path, grid_view<const rgba8> pixels);

/// Reads any PNG as 8-bit RGBA: grey becomes R = G = B, a missing alpha is 255 (opaque), the
/// palette's tRNS transparency applies, 16-bit channels are scaled to 8 bits.
grid<rgba8> read_rgba_png(const std::string& path, const read_options& options = {});

/// Writes a biome map as an RGBA PNG in biome_colour()'s palette, opaque. Every cell must hold
/// a valid biome (std::invalid_argument naming the cell otherwise).
void write_biome_png(const std::string& path, grid_view<const biome> biomes);

/// Writes a splat map (terrain layer weights) as an RGBA PNG: weights[0] in red ... weights[3]
/// in alpha, each weight in [0, 1] (std::invalid_argument naming the layer and cell otherwise)
/// written as round(w * 255). An empty view writes 0 in its channel; the non-empty views must
/// share one size (at least one is needed).
void write_splat_png(const std::string& path, const std::array<grid_view<const float>, 4>& weights);

/// Direction of a normal map's green channel.
enum class normal_green : std::uint8_t {
    up,    ///< +Y points up the image (towards row 0): OpenGL convention (Unity, Godot, Blender)
    down,  ///< +Y points down the image: DirectX convention (Unreal)
};

/// Options of write_normal_map_png.
struct normal_map_options {
    /// Horizontal distance between neighbouring cells, in the heights' units (default 1; finite, > 0).
    float cell_size = 1.0f;
    /// Green channel convention (default normal_green::up).
    normal_green green = normal_green::up;

    /// Name and rule of the first bad option; empty (== nullptr) when all are valid.
    invalid_parameter first_invalid() const {
        if (!std::isfinite(cell_size) || !(cell_size > 0.0f)) return "cell_size (must be finite and > 0)";
        if (green != normal_green::up && green != normal_green::down) return "green (must be up or down)";
        return {};
    }
    /// Throws std::invalid_argument naming the first bad option.
    void validate() const { detail::validate(*this, "gorge::io::normal_map_options"); }
};

/// Writes a tangent-space normal map as an 8-bit RGB PNG: n = normalise(-dh/dx, ±dh/dy, 1) from
/// central differences (one-sided at the border, zero across a one-cell axis), stored as
/// round((n * 0.5 + 0.5) * 255) per channel (flat: 128, 128, 255). Heights must be finite.
void write_normal_map_png(const std::string& path, grid_view<const float> heights,
                          const normal_map_options& options = {});

}  // namespace io
}  // namespace gorge
