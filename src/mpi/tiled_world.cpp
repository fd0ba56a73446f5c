// Raw tile files of gorge::mpi (format in include/gorge/mpi/tiled_world.hpp).
//
// SPDX-License-Identifier: MPL-2.0
#include "gorge/mpi/tiled_world.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <type_traits>
#include <vector>

namespace gorge {
namespace mpi {
namespace {

constexpr char magic[8] = {'G', 'O', 'R', 'G', 'T', 'I', 'L', 'E'};
constexpr std::uint32_t format_version = 1;

void put_u32(unsigned char* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint32_t get_u32(const unsigned char* p) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
    return v;
}

// Cells are stored little-endian: on a little-endian machine (all gorge targets) that is memcpy.
template <class T>
using bits_of = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
void write_tile(const std::string& path, grid_view<const T> cells) {
    if (cells.width() < 1 || cells.height() < 1) throw tile_file_error(path, "empty tile");
    if (static_cast<std::uint64_t>(cells.width()) * static_cast<std::uint64_t>(cells.height()) > raw_tile_max_cells)
        throw tile_file_error(path, "tile larger than 2^31 cells");
    unsigned char header[raw_tile_header_bytes];
    std::memcpy(header, magic, sizeof magic);
    put_u32(header + 8, format_version);
    put_u32(header + 12, static_cast<std::uint32_t>(sizeof(T)));
    put_u32(header + 16, static_cast<std::uint32_t>(cells.width()));
    put_u32(header + 20, static_cast<std::uint32_t>(cells.height()));
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw tile_file_error(path, "cannot create the file");
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    std::vector<unsigned char> row(static_cast<std::size_t>(cells.width()) * sizeof(T));
    for (std::ptrdiff_t y = 0; y < cells.height(); ++y) {
        const T* r = cells.row(y);
        for (std::ptrdiff_t x = 0; x < cells.width(); ++x) {
            bits_of<T> b;
            std::memcpy(&b, &r[x], sizeof b);
            for (std::size_t i = 0; i < sizeof(T); ++i)
                row[static_cast<std::size_t>(x) * sizeof(T) + i] = static_cast<unsigned char>(b >> (8 * i));
        }
        out.write(reinterpret_cast<const char*>(row.data()), static_cast<std::streamsize>(row.size()));
    }
    out.flush();
    if (!out) {
        out.close();
        std::remove(path.c_str());  // no half-written tile left behind
        throw tile_file_error(path, "write failed");
    }
}

template <class T>
grid<T> read_tile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw tile_file_error(path, "cannot open the file (missing or unreadable)");
    unsigned char header[raw_tile_header_bytes];
    in.read(reinterpret_cast<char*>(header), sizeof header);
    if (in.gcount() != static_cast<std::streamsize>(sizeof header))
        throw tile_file_error(path, "truncated header (not a gorge tile)");
    if (std::memcmp(header, magic, sizeof magic) != 0) throw tile_file_error(path, "bad magic (not a gorge tile)");
    if (get_u32(header + 8) != format_version) throw tile_file_error(path, "unknown format version");
    const std::uint32_t cell_bytes = get_u32(header + 12);
    if (cell_bytes != 4 && cell_bytes != 8) throw tile_file_error(path, "bad cell size (must be 4 or 8 bytes)");
    if (cell_bytes != sizeof(T))
        throw tile_file_error(path, cell_bytes == 4 ? "holds float cells, double expected" : "holds double cells, float expected");
    const std::uint32_t w = get_u32(header + 16), h = get_u32(header + 20);
    if (w == 0 || h == 0) throw tile_file_error(path, "zero width or height");
    const std::uint64_t n = std::uint64_t(w) * h;
    if (n > raw_tile_max_cells) throw tile_file_error(path, "tile larger than 2^31 cells");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::uint64_t expected = raw_tile_header_bytes + n * sizeof(T);
    if (size < 0 || static_cast<std::uint64_t>(size) != expected)
        throw tile_file_error(path, "file is " + std::to_string(size) + " bytes, its header says " +
                                        std::to_string(expected) + " (truncated or corrupt)");
    in.seekg(static_cast<std::streamoff>(raw_tile_header_bytes), std::ios::beg);
    grid<T> cells(static_cast<std::ptrdiff_t>(w), static_cast<std::ptrdiff_t>(h));
    std::vector<unsigned char> row(std::size_t(w) * sizeof(T));
    for (std::ptrdiff_t y = 0; y < cells.height(); ++y) {
        in.read(reinterpret_cast<char*>(row.data()), static_cast<std::streamsize>(row.size()));
        if (!in) throw tile_file_error(path, "read failed");
        T* r = cells.view().row(y);
        for (std::ptrdiff_t x = 0; x < cells.width(); ++x) {
            bits_of<T> b = 0;
            for (std::size_t i = 0; i < sizeof(T); ++i)
                b |= static_cast<bits_of<T>>(row[static_cast<std::size_t>(x) * sizeof(T) + i]) << (8 * i);
            std::memcpy(&r[x], &b, sizeof b);
        }
    }
    return cells;
}

}  // namespace

void write_raw_tile(const std::string& path, grid_view<const float> cells) { write_tile<float>(path, cells); }
void write_raw_tile(const std::string& path, grid_view<const double> cells) { write_tile<double>(path, cells); }
grid<float> read_raw_tile_float(const std::string& path) { return read_tile<float>(path); }
grid<double> read_raw_tile_double(const std::string& path) { return read_tile<double>(path); }

std::string raw_tile_path(const std::string& dir, int tx, int ty) {
    return dir + "/tile_" + std::to_string(tx) + "_" + std::to_string(ty) + ".gtile";
}

}  // namespace mpi
}  // namespace gorge
