// Internal helpers of gorge::mpi shared by its sources (not installed): thin wrappers over MPI's
// C API, collective failure handling, tile perimeters and byte buffers.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gorge/drainage/detail/tiled_fill.hpp"
#include "gorge/mpi/fill.hpp"
#include "gorge/mpi/tiled_world.hpp"

namespace gorge {
namespace mpi {
namespace internal {

// ---------------------------------------------------------------------------------------------
// Thin helpers over MPI's C API.

inline void check_mpi(int code, const char* what) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw std::runtime_error(std::string("gorge::mpi: ") + what + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

inline int as_count(std::size_t n, const char* what) {
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw std::runtime_error(std::string("gorge::mpi: ") + what + " exceeds 2^31 - 1 bytes (use smaller tiles or more ranks)");
    return static_cast<int>(n);
}

/// The first failure seen by this rank, if any, with the tile it concerned.
struct failure {
    bool failed = false;
    int tile = -1;
    std::string message;
    void record(int t, const std::string& what) {
        if (failed) return;
        failed = true;
        tile = t;
        message = what;
    }
};

/// Collective: when any rank has failed, every rank throws job_error carrying the message of the
/// lowest failing rank.
inline void agree(MPI_Comm comm, const failure& mine, const tile_layout& layout) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int candidate = mine.failed ? rank : size, first = size;
    check_mpi(MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    if (first == size) return;
    int header[2] = {mine.tile, 0};
    std::string text;
    if (rank == first) {
        text = "gorge::mpi: rank " + std::to_string(rank);
        if (mine.tile >= 0) {
            const tile_rect r = layout.tile(mine.tile);
            text += ", tile " + std::to_string(mine.tile) + " (" + std::to_string(r.tx) + ", " + std::to_string(r.ty) + ")";
        }
        text += ": " + mine.message;
        header[1] = static_cast<int>(std::min<std::size_t>(text.size(), 4096));
        text.resize(static_cast<std::size_t>(header[1]));
    }
    check_mpi(MPI_Bcast(header, 2, MPI_INT, first, comm), "MPI_Bcast");
    text.resize(static_cast<std::size_t>(header[1]));
    check_mpi(MPI_Bcast(&text[0], header[1], MPI_CHAR, first, comm), "MPI_Bcast");
    throw job_error(text, first, header[0]);
}

// ---------------------------------------------------------------------------------------------
// Perimeters: the cells of a tile on its outer ring, numbered in raster order (the same numbers
// as the single-machine tiled fill's, gorge/drainage/detail/tiled_fill.hpp).

using gorge::detail::perimeter_count;
using gorge::detail::perimeter_index;
template <class F>
void for_each_perimeter_cell(std::ptrdiff_t w, std::ptrdiff_t h, F&& f) {
    for (std::ptrdiff_t y = 0; y < h; ++y) {
        if (y == 0 || y == h - 1) {
            for (std::ptrdiff_t x = 0; x < w; ++x) f(x, y);
        } else {
            f(0, y);
            if (w > 1) f(w - 1, y);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rings: the cells around a tile, which its neighbouring tiles' perimeters hold.

using gorge::detail::for_each_ring_position;
using gorge::detail::ring_count;

/// Calls f(ring index, perimeter index) for the cells of tile `from`'s perimeter that lie on tile
/// `to`'s ring, in ring order: the piece of `from` that `to` needs. Sender and receiver walk the
/// same order, so a piece travels as bare values.
template <class F>
void for_each_shared_cell(const tile_rect& to, const tile_rect& from, F&& f) {
    for_each_ring_position(to.width, to.height, [&](std::size_t i, std::ptrdiff_t x, std::ptrdiff_t y) {
        const std::ptrdiff_t gx = to.x + x - from.x, gy = to.y + y - from.y;
        if (gx < 0 || gy < 0 || gx >= from.width || gy >= from.height) return;
        f(i, perimeter_index(gx, gy, from.width, from.height));
    });
}

/// Calls f(u) for each tile u among the 8 around tile r (inside the layout).
template <class F>
void for_each_neighbour_tile(const tile_layout& layout, const tile_rect& r, F&& f) {
    const std::ptrdiff_t nx = layout.tiles_x(), ny = layout.tiles_y();
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            const std::ptrdiff_t tx = r.tx + dx, ty = r.ty + dy;
            if ((dx == 0 && dy == 0) || tx < 0 || ty < 0 || tx >= nx || ty >= ny) continue;
            f(static_cast<int>(ty * nx + tx));
        }
}

// ---------------------------------------------------------------------------------------------
// Byte buffers for the gather and scatter.

struct writer {
    std::vector<unsigned char> bytes;
    template <class V>
    void put(const V& v) {
        static_assert(std::is_trivially_copyable<V>::value, "plain values only");
        const std::size_t at = bytes.size();
        bytes.resize(at + sizeof v);
        std::memcpy(bytes.data() + at, &v, sizeof v);
    }
};
struct reader {
    const unsigned char* p;
    const unsigned char* end;
    template <class V>
    V get() {
        V v;
        if (static_cast<std::size_t>(end - p) < sizeof v) throw std::runtime_error("gorge::mpi: malformed perimeter message");
        std::memcpy(&v, p, sizeof v);
        p += sizeof v;
        return v;
    }
};

/// Collective: every rank's bytes, concatenated in rank order, at `root` (empty elsewhere).
/// Fails together (job_error) when the total exceeds MPI's int counts.
inline std::vector<unsigned char> gather_bytes(MPI_Comm comm, int root, const std::vector<unsigned char>& mine,
                                               const tile_layout& layout, std::uint64_t& bytes_sent) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    failure fail;
    int count = 0;
    try {
        count = as_count(mine.size(), "a rank's message");
    } catch (const std::exception& e) {
        fail.record(-1, e.what());
    }
    agree(comm, fail, layout);
    std::vector<int> counts(rank == root ? static_cast<std::size_t>(size) : 0), displs(counts.size(), 0);
    check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm), "MPI_Gather");
    std::vector<unsigned char> all;
    if (rank == root) {
        std::size_t total = 0;
        for (int i = 0; i < size; ++i) {
            displs[static_cast<std::size_t>(i)] = static_cast<int>(std::min<std::size_t>(total, std::numeric_limits<int>::max()));
            total += static_cast<std::size_t>(counts[static_cast<std::size_t>(i)]);
        }
        if (total > static_cast<std::size_t>(std::numeric_limits<int>::max()))
            fail.record(-1, "the messages of all ranks exceed 2^31 - 1 bytes at the root (use larger tiles)");
        else
            all.resize(total);
    }
    agree(comm, fail, layout);
    check_mpi(MPI_Gatherv(mine.data(), count, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, root, comm),
              "MPI_Gatherv");
    if (rank != root) bytes_sent += static_cast<std::uint64_t>(count);
    return all;
}

/// Collective: `root` sends parts[r] to each rank r (parts is read on the root only); returns
/// this rank's part. The root must have checked the sizes (as_count) before.
inline std::vector<unsigned char> scatter_bytes(MPI_Comm comm, int root, const std::vector<std::vector<unsigned char>>& parts,
                                                std::uint64_t& bytes_sent) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    std::vector<int> counts, displs;
    std::vector<unsigned char> all;
    if (rank == root) {
        for (int r = 0; r < size; ++r) {
            const std::vector<unsigned char>& part = parts[static_cast<std::size_t>(r)];
            counts.push_back(static_cast<int>(part.size()));
            displs.push_back(static_cast<int>(all.size()));
            all.insert(all.end(), part.begin(), part.end());
            if (r != root) bytes_sent += part.size();
        }
    }
    int count = 0;
    check_mpi(MPI_Scatter(counts.data(), 1, MPI_INT, &count, 1, MPI_INT, root, comm), "MPI_Scatter");
    std::vector<unsigned char> mine(static_cast<std::size_t>(count));
    check_mpi(MPI_Scatterv(all.data(), counts.data(), displs.data(), MPI_BYTE, mine.data(), count, MPI_BYTE, root, comm),
              "MPI_Scatterv");
    return mine;
}

/// Collective: sends parts[q].bytes to each other rank q (parts has one writer per rank; this
/// rank's own part is not sent: the caller applies it) and returns what the others sent this
/// rank, in rank order. Fails together (job_error) when a rank's total exceeds MPI's int counts.
inline std::vector<unsigned char> exchange_bytes(MPI_Comm comm, const std::vector<writer>& parts, const tile_layout& layout,
                                                 std::uint64_t& bytes_sent) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    std::vector<int> send_counts(static_cast<std::size_t>(size), 0), recv_counts(send_counts.size(), 0);
    std::vector<int> send_displs(send_counts.size(), 0), recv_displs(send_counts.size(), 0);
    std::vector<unsigned char> send_all;
    failure fail;
    try {
        std::size_t total = 0;
        for (int q = 0; q < size; ++q)
            if (q != rank) total += parts[static_cast<std::size_t>(q)].bytes.size();
        as_count(total, "the bytes a rank sends its neighbours");
    } catch (const std::exception& e) {
        fail.record(-1, e.what());
    }
    agree(comm, fail, layout);
    for (int q = 0; q < size; ++q) {
        if (q == rank) continue;
        const std::vector<unsigned char>& b = parts[static_cast<std::size_t>(q)].bytes;
        send_displs[static_cast<std::size_t>(q)] = static_cast<int>(send_all.size());
        send_counts[static_cast<std::size_t>(q)] = static_cast<int>(b.size());
        send_all.insert(send_all.end(), b.begin(), b.end());
    }
    check_mpi(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm), "MPI_Alltoall");
    std::size_t received = 0;
    for (int q = 0; q < size; ++q) {
        recv_displs[static_cast<std::size_t>(q)] = static_cast<int>(std::min<std::size_t>(received, std::numeric_limits<int>::max()));
        received += static_cast<std::size_t>(recv_counts[static_cast<std::size_t>(q)]);
    }
    try {
        as_count(received, "the bytes a rank receives from its neighbours");
    } catch (const std::exception& e) {
        fail.record(-1, e.what());
    }
    agree(comm, fail, layout);
    std::vector<unsigned char> recv_all(received);
    check_mpi(MPI_Alltoallv(send_all.data(), send_counts.data(), send_displs.data(), MPI_BYTE, recv_all.data(),
                            recv_counts.data(), recv_displs.data(), MPI_BYTE, comm),
              "MPI_Alltoallv");
    bytes_sent += send_all.size();
    return recv_all;
}

}  // namespace internal
}  // namespace mpi
}  // namespace gorge
