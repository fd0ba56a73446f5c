// gorge/mpi/tiled_world.hpp — a world cut into a grid of tiles, and gorge's raw tile file format
// (part of the optional gorge::mpi component; this header itself needs no MPI).
//
// A tile_layout cuts a map of map_width x map_height cells into tiles of tile_width x
// tile_height cells, row-major: tile t = ty * tiles_x() + tx covers the cells x in
// [tx * tile_width, min((tx + 1) * tile_width, map_width)), likewise for y. The map size need not
// be a multiple of the tile size: the last column and row of tiles are narrower.
//
// Tiles are dealt to the ranks of a job like cards, a hand of `ranks` tiles at a time, each hand
// dealt starting one rank further on: tile t belongs to rank (t + t / ranks) % ranks
// (tile_owner; owned_tiles lists a rank's tiles). A fixed rule, so every rank knows every owner
// without communication; every rank gets the same number of tiles, give or take one, and when a
// row holds as many tiles as there are ranks, each rank gets one tile of every row and column
// (plain t % ranks would give each rank one column of the map, and neighbouring columns can differ
// a lot in how much filling they need).
//
// Raw tile files ("gorge tile", extension .gtile): a 24-byte little-endian header followed by
// the cells, row-major, top row first, little-endian IEEE 754:
//   bytes  0..7   magic "GORGTILE"
//   bytes  8..11  format version (1)
//   bytes 12..15  bytes per cell: 4 (float) or 8 (double)
//   bytes 16..19  width in cells (>= 1)
//   bytes 20..23  height in cells (>= 1)
// read_raw_tile checks every field and the file length, and throws tile_file_error (naming the
// file and what is wrong) for a missing, truncated, oversized or otherwise corrupt file.
// write_raw_tile writes the whole file or throws tile_file_error.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../detail/validate.hpp"
#include "../grid/grid.hpp"

namespace gorge {
namespace mpi {

/// The cells one tile covers, in map coordinates.
struct tile_rect {
    int index = 0;            ///< tile number, ty * tiles_x + tx
    int tx = 0, ty = 0;       ///< tile column and row
    std::ptrdiff_t x = 0;     ///< first map column of the tile
    std::ptrdiff_t y = 0;     ///< first map row of the tile
    std::ptrdiff_t width = 0;   ///< columns (>= 1)
    std::ptrdiff_t height = 0;  ///< rows (>= 1)
};

/// A map cut into a grid of tiles.
struct tile_layout {
    /// Map size in cells. Default 0 (must be set); >= 1 each.
    std::ptrdiff_t map_width = 0;
    std::ptrdiff_t map_height = 0;
    /// Tile size in cells. Default 0 (must be set); >= 1 each. Tiles at the right and bottom
    /// edges are narrower when the map size is not a multiple.
    std::ptrdiff_t tile_width = 0;
    std::ptrdiff_t tile_height = 0;

    /// Largest number of tiles a layout may have (tile numbers are int): 2^30.
    static constexpr std::ptrdiff_t max_tiles = std::ptrdiff_t(1) << 30;

    std::ptrdiff_t tiles_x() const { return (map_width + tile_width - 1) / tile_width; }
    std::ptrdiff_t tiles_y() const { return (map_height + tile_height - 1) / tile_height; }
    int tile_count() const { return static_cast<int>(tiles_x() * tiles_y()); }

    /// The cells of tile t (0 <= t < tile_count()).
    tile_rect tile(int t) const {
        const std::ptrdiff_t nx = tiles_x();
        tile_rect r;
        r.index = t;
        r.tx = static_cast<int>(t % nx);
        r.ty = static_cast<int>(t / nx);
        r.x = r.tx * tile_width;
        r.y = r.ty * tile_height;
        r.width = (r.x + tile_width <= map_width) ? tile_width : map_width - r.x;
        r.height = (r.y + tile_height <= map_height) ? tile_height : map_height - r.y;
        return r;
    }
    /// Number of the tile holding map cell (x, y) (inside the map).
    int tile_at(std::ptrdiff_t x, std::ptrdiff_t y) const {
        return static_cast<int>((y / tile_height) * tiles_x() + x / tile_width);
    }

    /// Name and rule of the first bad member; empty when all are valid.
    invalid_parameter first_invalid() const {
        if (map_width < 1) return "map_width (must be >= 1)";
        if (map_height < 1) return "map_height (must be >= 1)";
        if (tile_width < 1) return "tile_width (must be >= 1)";
        if (tile_height < 1) return "tile_height (must be >= 1)";
        if (tiles_x() > max_tiles / tiles_y()) return "tile_width, tile_height (at most 2^30 tiles)";
        return {};
    }
    /// Throws std::invalid_argument naming the first bad member.
    void validate() const { detail::validate(*this, "gorge::mpi::tile_layout"); }
};

/// The rank that handles tile t (t >= 0) in a job of `ranks` ranks (ranks >= 1):
/// (t + t / ranks) % ranks.
inline int tile_owner(int t, int ranks) {
    const long long tile = t, hand = ranks;
    return static_cast<int>((tile + tile / hand) % hand);
}

/// The tiles of a layout of `tile_count` tiles that rank `rank` handles, in increasing order.
inline std::vector<int> owned_tiles(int rank, int ranks, int tile_count) {
    std::vector<int> tiles;
    for (int t = 0; t < tile_count; ++t)
        if (tile_owner(t, ranks) == rank) tiles.push_back(t);
    return tiles;
}

/// A tile file could not be read or written. what(): "gorge::mpi: <path>: <reason>".
class tile_file_error : public std::runtime_error {
public:
    tile_file_error(const std::string& path, const std::string& reason)
        : std::runtime_error("gorge::mpi: " + path + ": " + reason), path_(path) {}
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
};

/// Size of the raw tile header in bytes.
inline constexpr std::size_t raw_tile_header_bytes = 24;
/// Largest tile a reader accepts: 2^31 cells.
inline constexpr std::uint64_t raw_tile_max_cells = std::uint64_t(1) << 31;

/// Writes `cells` as a raw tile file at `path` (replacing it). Throws tile_file_error (after
/// removing the file when it was created but could not be written in full).
void write_raw_tile(const std::string& path, grid_view<const float> cells);
void write_raw_tile(const std::string& path, grid_view<const double> cells);
/// Reads a raw tile file of float (read_raw_tile_float) or double cells. Throws tile_file_error
/// for a missing or corrupt file, or one whose cells are of the other type.
grid<float> read_raw_tile_float(const std::string& path);
grid<double> read_raw_tile_double(const std::string& path);

/// Name of tile (tx, ty) in a tile directory: "<dir>/tile_<tx>_<ty>.gtile".
std::string raw_tile_path(const std::string& dir, int tx, int ty);

}  // namespace mpi
}  // namespace gorge
