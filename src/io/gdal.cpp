// gorge::io: GIS rasters through GDAL (when gorge::io is built with it; GORGE_IO_WITH_GDAL).
//
// SPDX-License-Identifier: MPL-2.0
#include <atomic>
#include <climits>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "io_internal.hpp"

#if defined(GORGE_IO_WITH_GDAL)
#include <cpl_error.h>
#include <cpl_string.h>
#include <cpl_vsi.h>
#include <gdal.h>
#endif

namespace gorge {
namespace io {

namespace {

/// write_geotiff's argument checks, made with or without GDAL: the options, a non-empty grid, and
/// every cell finite unless it is the no-data value.
void check_geotiff_input(grid_view<const float> heights, const geotiff_options& options) {
    options.validate();
    const char* who = "gorge::io::write_geotiff";
    if (heights.empty()) throw std::invalid_argument(std::string(who) + ": heights must not be empty");
    const bool nan_no_data = options.no_data && std::isnan(*options.no_data);
    for (std::ptrdiff_t y = 0; y < heights.height(); ++y) {
        const float* r = heights.row(y);
        for (std::ptrdiff_t x = 0; x < heights.width(); ++x) {
            const float v = r[x];
            if (std::isfinite(v) || (nan_no_data && std::isnan(v)) || (options.no_data && v == *options.no_data))
                continue;
            throw std::invalid_argument(std::string(who) + ": height at cell (" + std::to_string(x) + ", " +
                                        std::to_string(y) + ") is not finite and not the no-data value");
        }
    }
}

}  // namespace

#if defined(GORGE_IO_WITH_GDAL)

bool has_gdal() noexcept { return true; }

namespace {

/// Silences GDAL's own error printing for the calling thread; the last message goes into ours.
struct quiet_errors {
    quiet_errors() {
        CPLPushErrorHandler(CPLQuietErrorHandler);
        CPLErrorReset();
    }
    ~quiet_errors() { CPLPopErrorHandler(); }
    quiet_errors(const quiet_errors&) = delete;
    quiet_errors& operator=(const quiet_errors&) = delete;
};

std::string last_gdal_error(const char* fallback) {
    const char* msg = CPLGetLastErrorMsg();
    std::string text = (msg && *msg) ? msg : fallback;
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    return text;
}

struct dataset_closer {
    void operator()(void* ds) const { GDALClose(ds); }
};

/// The float that marks no-data cells when the band's value `nd` is not exactly a float.
bool exact_in_float(double nd) {
    return std::isnan(nd) ||
           (std::fabs(nd) <= static_cast<double>(std::numeric_limits<float>::max()) &&
            static_cast<double>(static_cast<float>(nd)) == nd);
}

/// Registers GDAL's drivers once per process.
void register_gdal() {
    static std::once_flag registered;
    std::call_once(registered, [] { GDALAllRegister(); });
}

/// Removes a /vsimem/ file on scope exit.
struct vsimem_file {
    std::string name;
    ~vsimem_file() { VSIUnlink(name.c_str()); }
};

std::atomic<unsigned> vsimem_counter{0};

}  // namespace

void write_geotiff(const std::string& path, grid_view<const float> heights, const geotiff_options& options) {
    check_geotiff_input(heights, options);
    if (heights.width() > INT_MAX || heights.height() > INT_MAX) throw io_error(path, "image too large for GeoTIFF");
    const int w = static_cast<int>(heights.width()), h = static_cast<int>(heights.height());
    register_gdal();
    const quiet_errors quiet;
    GDALDriverH driver = GDALGetDriverByName("GTiff");
    if (!driver) throw io_error(path, "this GDAL has no GeoTIFF driver");
    // Encoded in memory, then written atomically like every other format.
    const vsimem_file mem{"/vsimem/gorge_io_geotiff_" + std::to_string(vsimem_counter.fetch_add(1)) + ".tif"};
    char** create_options = CSLSetNameValue(nullptr, "COMPRESS", "DEFLATE");
    create_options = CSLSetNameValue(create_options, "BIGTIFF", "IF_SAFER");
    std::unique_ptr<void, dataset_closer> ds(GDALCreate(driver, mem.name.c_str(), w, h, 1, GDT_Float32, create_options));
    CSLDestroy(create_options);
    if (!ds) throw io_error(path, "GDAL cannot create the GeoTIFF (" + last_gdal_error("unknown error") + ")");
    GDALRasterBandH band = GDALGetRasterBand(ds.get(), 1);
    if (options.no_data && GDALSetRasterNoDataValue(band, static_cast<double>(*options.no_data)) != CE_None)
        throw io_error(path, "GDAL cannot set the no-data value (" + last_gdal_error("unknown error") + ")");
    if (options.placement) {
        const geo_placement& p = *options.placement;
        double transform[6] = {p.origin[0], p.cell_size[0], 0.0, p.origin[1], 0.0, -p.cell_size[1]};
        if (GDALSetGeoTransform(ds.get(), transform) != CE_None)
            throw io_error(path, "GDAL cannot set the geotransform (" + last_gdal_error("unknown error") + ")");
    }
    for (int y = 0; y < h; ++y) {
        float* row = const_cast<float*>(heights.row(y));  // GF_Write only reads it
        if (GDALRasterIO(band, GF_Write, 0, y, w, 1, row, w, 1, GDT_Float32, 0, 0) != CE_None)
            throw io_error(path, "GDAL write failed at row " + std::to_string(y) + " (" +
                                     last_gdal_error("I/O error") + ")");
    }
    ds.reset();  // flushes the encoder into the memory file
    if (CPLGetLastErrorType() >= CE_Failure)
        throw io_error(path, "GDAL cannot finish the GeoTIFF (" + last_gdal_error("I/O error") + ")");
    vsi_l_offset size = 0;
    const GByte* bytes = VSIGetMemFileBuffer(mem.name.c_str(), &size, FALSE);
    if (!bytes) throw io_error(path, "GDAL produced no GeoTIFF");
    detail::write_file_atomic(path, bytes, static_cast<std::size_t>(size));
}

heightmap read_gdal(const std::string& path, const read_options& options) {
    options.validate();
    register_gdal();
    // GDAL also reads virtual paths (/vsizip/...); only plain paths are checked beforehand.
    if (path.rfind("/vsi", 0) != 0) {
        std::error_code ec;
        if (std::filesystem::status(path, ec).type() == std::filesystem::file_type::not_found)
            throw io_error(path, "cannot open (no such file)");
    }
    const quiet_errors quiet;
    std::unique_ptr<void, dataset_closer> ds(GDALOpen(path.c_str(), GA_ReadOnly));
    if (!ds) throw io_error(path, "GDAL cannot read it (" + last_gdal_error("unrecognised format") + ")");
    if (GDALGetRasterCount(ds.get()) < 1) throw io_error(path, "raster has no band");
    GDALRasterBandH band = GDALGetRasterBand(ds.get(), 1);
    const int w = GDALGetRasterXSize(ds.get()), h = GDALGetRasterYSize(ds.get());
    if (w <= 0 || h <= 0) throw io_error(path, "image has zero width or height");
    detail::check_cells(path, static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), options);

    int has_no_data = 0;
    const double nd = GDALGetRasterNoDataValue(band, &has_no_data);
    const bool float_band = GDALGetRasterDataType(band) == GDT_Float32;
    const auto fmax = static_cast<double>(std::numeric_limits<float>::max());
    // A cell is no-data when it equals the band's value (compared as float in a float32 band, as
    // GDAL does; NaN matches NaN).
    auto is_no_data = [&](double v) {
        if (!has_no_data) return false;
        if (std::isnan(nd)) return std::isnan(v);
        if (v == nd) return true;
        return float_band && std::fabs(nd) <= fmax && static_cast<float>(v) == static_cast<float>(nd);
    };

    heightmap out;
    out.heights = detail::allocate_heights(path, w, h);
    std::vector<double> row(static_cast<std::size_t>(w));
    // The marker is the no-data value itself when a float holds it exactly and no data cell
    // rounds onto it; else NaN (a second pass).
    for (int attempt = 0; attempt < 2; ++attempt) {
        const bool nan_marker = attempt == 1 || !exact_in_float(nd);
        const float marker = nan_marker ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(nd);
        bool collision = false;
        for (int y = 0; y < h && !collision; ++y) {
            if (GDALRasterIO(band, GF_Read, 0, y, w, 1, row.data(), w, 1, GDT_Float64, 0, 0) != CE_None)
                throw io_error(path, "GDAL read failed at row " + std::to_string(y) + " (" +
                                         last_gdal_error("I/O error") + ")");
            float* dst = out.heights.view().row(y);
            for (int x = 0; x < w; ++x) {
                const double v = row[static_cast<std::size_t>(x)];
                if (is_no_data(v)) {
                    dst[x] = marker;
                    continue;
                }
                if (!std::isfinite(v) || std::fabs(v) > fmax)
                    throw io_error(path, "value at cell (" + std::to_string(x) + ", " + std::to_string(y) + ") is " +
                                             (std::isfinite(v) ? "outside the float range" : "not finite (NaN or infinity)") +
                                             " and is not the no-data value");
                dst[x] = static_cast<float>(v);
                if (has_no_data && !nan_marker && dst[x] == marker) collision = true;
            }
        }
        if (!collision) {
            if (has_no_data) out.no_data = marker;
            // Only a north-up geotransform is a geo_placement (t[2] and t[4] are the rotation terms).
            double t[6] = {};
            if (GDALGetGeoTransform(ds.get(), t) == CE_None && t[2] == 0.0 && t[4] == 0.0 && t[1] > 0.0 &&
                t[5] < 0.0 && std::isfinite(t[0]) && std::isfinite(t[3]) && std::isfinite(t[1]) && std::isfinite(t[5]))
                out.placement = geo_placement{{{t[0], t[3]}}, {{t[1], -t[5]}}};
            return out;
        }
    }
    return out;  // not reached: the NaN marker never collides
}

#else

bool has_gdal() noexcept { return false; }

void write_geotiff(const std::string& path, grid_view<const float> heights, const geotiff_options& options) {
    check_geotiff_input(heights, options);
    throw io_error(path, "this gorge::io was built without GDAL (Debian: libgdal-dev), so GeoTIFF cannot be written");
}

heightmap read_gdal(const std::string& path, const read_options& options) {
    options.validate();
    throw io_error(path, "this gorge::io was built without GDAL (Debian: libgdal-dev), so GIS rasters cannot be read");
}

#endif

}  // namespace io
}  // namespace gorge
