// gorge/grid/grid.hpp — heightmap grids: an owning grid<T> and a non-owning grid_view<T>.
//
// The grid algorithms (droplet erosion, drainage, biomes) work on row-major 2D arrays. Engines
// already own their heightmaps, so every algorithm takes a grid_view: a pointer, a width, a height
// and a row stride in elements (stride >= width lets a view address a sub-rectangle or a padded
// texture without copies). grid<T> owns its storage (stride == width) and converts to a view.
//
// Guarantees: sizes are checked on construction — zero or negative sizes, a stride below the
// width, width × height (or the addressed span) overflowing std::ptrdiff_t, and, for grid<T>,
// width × height × sizeof(T) bytes above PTRDIFF_MAX (the largest allocation) throw
// std::invalid_argument naming the parameter or the size. Element access is unchecked in release builds and
// asserted in debug builds; at() is always checked. check_finite() rejects NaN or infinite heights
// with the offending cell named. grid<T> storage of 2 MiB or more is 2 MiB-aligned and, on Linux,
// asks for transparent huge pages (see detail::large_block_allocator).
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gorge {

namespace detail {

/// Allocator of grid storage and of the grid algorithms' large working arrays. Those arrays are
/// tens of megabytes, read in scattered order (a flood or a flow path visits cells all over the
/// map) and often freshly allocated: with 4 KiB pages that costs a TLB miss per scattered access
/// and a page fault per 4 KiB on first touch. So blocks of 2 MiB or more are aligned to 2 MiB, where
/// transparent huge pages can back them, and those up to GORGE_HUGE_PAGE_MAX_BYTES (config.hpp)
/// are marked for them on Linux (madvise; a hint the kernel may ignore). Smaller blocks are
/// allocated as std::allocator would (honouring over-aligned T).
/// A large block is taken with plain operator new, 2 MiB more than asked for, and aligned inside
/// (the start of what operator new gave is kept just below the aligned block). An over-aligned
/// operator new would do the same, but glibc then asks the system for every such block afresh:
/// its mmap threshold rises, when a mapped block is freed, to that block's size after the
/// alignment, below the next request with the alignment's slack. A plain request of the same size
/// as the one freed comes from the heap instead, on pages already faulted in (a 4.2 MB block took
/// 180 µs afresh and 15 µs reused, on a virtual machine whose fresh huge pages are slow).
template <class T>
struct large_block_allocator {
    using value_type = T;
    static constexpr std::size_t huge_page = std::size_t(2) << 20;

    large_block_allocator() = default;
    template <class U>
    large_block_allocator(const large_block_allocator<U>&) {}  // NOLINT(google-explicit-constructor)

    T* allocate(std::size_t n) {
        // No object may be larger than PTRDIFF_MAX bytes, the 2 MiB slack of a large block included.
        constexpr std::size_t largest = std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) - huge_page;
        if (n > largest / sizeof(T)) throw std::bad_alloc();
        const std::size_t bytes = n * sizeof(T);
        if (bytes < huge_page) {
            if (over_aligned) return static_cast<T*>(::operator new(bytes, std::align_val_t(alignof(T))));
            return static_cast<T*>(::operator new(bytes));  // as std::allocator does
        }
        void* const raw = ::operator new(bytes + huge_page);
        // At least one pointer above raw (operator new aligns to more than a pointer).
        void* const p = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(raw) + huge_page) & ~std::uintptr_t(huge_page - 1));
        std::memcpy(static_cast<char*>(p) - sizeof raw, &raw, sizeof raw);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (bytes <= std::size_t(GORGE_HUGE_PAGE_MAX_BYTES))
            madvise(p, bytes, MADV_HUGEPAGE);  // only a hint: failure leaves ordinary pages
#endif
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) {
        if (n * sizeof(T) >= huge_page) {
            void* raw;
            std::memcpy(&raw, reinterpret_cast<const char*>(p) - sizeof raw, sizeof raw);
            ::operator delete(raw);
        } else if (over_aligned)
            ::operator delete(p, std::align_val_t(alignof(T)));
        else
            ::operator delete(p);
    }
    template <class U>
    bool operator==(const large_block_allocator<U>&) const { return true; }
    template <class U>
    bool operator!=(const large_block_allocator<U>&) const { return false; }

private:
    static constexpr bool over_aligned = alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;
};

/// large_block_allocator whose value-initialization (a vector's size constructor, resize) leaves
/// the elements unwritten, for working blocks whose every element is written before it is read:
/// such a block is then not written twice, and its pages are first touched by the threads that
/// fill it rather than all by the one that made it. assign and the constructors given a value
/// write as usual.
template <class T>
struct uninitialized_block_allocator : large_block_allocator<T> {
    static_assert(std::is_trivially_default_constructible<T>::value, "only for elements that need no constructor");
    uninitialized_block_allocator() = default;
    template <class U>
    uninitialized_block_allocator(const uninitialized_block_allocator<U>&) {}  // NOLINT(google-explicit-constructor)
    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;  // default-initialized: left as it is
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

/// Number of elements a view of (width, height, stride) spans: (height - 1) * stride + width.
/// Throws std::invalid_argument naming the parameter that is out of range or overflows.
inline std::size_t checked_grid_span(std::ptrdiff_t width, std::ptrdiff_t height, std::ptrdiff_t stride,
                                     const char* who) {
    // The messages are built only when thrown: views are made in hot loops.
    auto fail = [who](const std::string& what) { throw std::invalid_argument(std::string(who) + ": " + what); };
    if (width <= 0) fail("width must be > 0, got " + std::to_string(width));
    if (height <= 0) fail("height must be > 0, got " + std::to_string(height));
    if (stride < width)
        fail("stride must be >= width, got stride " + std::to_string(stride) + " for width " + std::to_string(width));
    const auto w = static_cast<std::size_t>(width), h = static_cast<std::size_t>(height),
               s = static_cast<std::size_t>(stride);
    // Index arithmetic is done in ptrdiff_t, so the span must fit there too.
    const std::size_t limit = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
    if (h - 1 > (limit - w) / s)
        fail("width x height (" + std::to_string(width) + " x " + std::to_string(height) + ", stride " +
             std::to_string(stride) + ") overflows the addressable size");
    return (h - 1) * s + w;
}

/// Number of elements of a packed width x height array of T, checked like checked_grid_span and
/// also against the largest possible allocation: the bytes, elements × sizeof(T), must fit in
/// std::ptrdiff_t (std::vector's own limit, and below std::size_t's). Throws
/// std::invalid_argument naming `who` and the size otherwise.
template <class T>
std::size_t checked_grid_elements(std::ptrdiff_t width, std::ptrdiff_t height, const char* who) {
    const std::size_t n = checked_grid_span(width, height, width, who);
    const std::size_t max_bytes = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());
    if (n > max_bytes / sizeof(T))
        throw std::invalid_argument(std::string(who) + ": width x height (" + std::to_string(width) + " x " +
                                    std::to_string(height) + ") cells of " + std::to_string(sizeof(T)) +
                                    " bytes exceed the largest allocation (" + std::to_string(max_bytes) +
                                    " bytes)");
    return n;
}

}  // namespace detail

/// Non-owning view of a row-major 2D array: element (x, y) is data[y * stride + x].
/// T may be const-qualified for read-only views.
template <class T>
class grid_view {
public:
    using value_type = std::remove_cv_t<T>;

    /// An empty view (no cells, null data): every grid algorithm rejects it with
    /// std::invalid_argument.
    grid_view() = default;
    /// View of caller memory. Throws std::invalid_argument for a null pointer, non-positive sizes,
    /// stride < width, or a span that overflows.
    grid_view(T* data, std::ptrdiff_t width, std::ptrdiff_t height, std::ptrdiff_t stride)
        : data_(data), width_(width), height_(height), stride_(stride) {
        detail::checked_grid_span(width, height, stride, "gorge::grid_view");
        if (data == nullptr) throw std::invalid_argument("gorge::grid_view: data must not be null");
    }
    /// Tightly packed view (stride == width).
    grid_view(T* data, std::ptrdiff_t width, std::ptrdiff_t height) : grid_view(data, width, height, width) {}
    /// A view of T converts to a view of const T.
    template <class U, class = std::enable_if_t<std::is_same<const U, T>::value>>
    grid_view(grid_view<U> other)  // NOLINT(google-explicit-constructor)
        : data_(other.data()), width_(other.width()), height_(other.height()), stride_(other.stride()) {}

    T* data() const { return data_; }
    std::ptrdiff_t width() const { return width_; }
    std::ptrdiff_t height() const { return height_; }
    std::ptrdiff_t stride() const { return stride_; }
    /// Number of cells, width * height.
    std::size_t size() const { return static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_); }
    /// True for a default-made view; a view made from data always has cells.
    bool empty() const { return data_ == nullptr; }
    bool contains(std::ptrdiff_t x, std::ptrdiff_t y) const { return x >= 0 && y >= 0 && x < width_ && y < height_; }

    /// Unchecked access (asserted in debug builds).
    T& operator()(std::ptrdiff_t x, std::ptrdiff_t y) const {
        GORGE_ASSERT(contains(x, y), "gorge::grid_view: cell out of range");
        return data_[y * stride_ + x];
    }
    /// Checked access: throws std::out_of_range naming the cell.
    T& at(std::ptrdiff_t x, std::ptrdiff_t y) const {
        if (!contains(x, y))
            throw std::out_of_range("gorge::grid_view: cell (" + std::to_string(x) + ", " + std::to_string(y) +
                                    ") outside " + std::to_string(width_) + " x " + std::to_string(height_));
        return data_[y * stride_ + x];
    }
    /// Pointer to the first element of row y.
    T* row(std::ptrdiff_t y) const {
        GORGE_ASSERT(y >= 0 && y < height_, "gorge::grid_view: row out of range");
        return data_ + y * stride_;
    }

    /// Throws std::invalid_argument naming the first cell that is NaN or infinite
    /// (floating-point T only; `what` names the grid in the message).
    void check_finite(const char* what = "height") const {
        static_assert(std::is_floating_point<value_type>::value, "check_finite needs a floating-point grid");
        for (std::ptrdiff_t y = 0; y < height_; ++y) {
            const T* r = row(y);
            for (std::ptrdiff_t x = 0; x < width_; ++x)
                if (!std::isfinite(r[x]))
                    throw std::invalid_argument(std::string("gorge: ") + what + " at cell (" + std::to_string(x) +
                                                ", " + std::to_string(y) + ") is not finite");
        }
    }

private:
    T* data_ = nullptr;
    std::ptrdiff_t width_ = 0, height_ = 0, stride_ = 0;
};

namespace detail {

/// Throws std::invalid_argument("<who>: <what> must not be empty") for an empty (default-made)
/// view: the grid algorithms' common check of their input.
template <class T>
void require_not_empty(const grid_view<T>& view, const char* who, const char* what = "heights") {
    if (view.empty()) throw std::invalid_argument(std::string(who) + ": " + what + " must not be empty");
}

}  // namespace detail

/// Owning row-major grid (stride == width), value-initialised or filled with a value.
template <class T>
class grid {
public:
    grid() = default;
    /// Throws std::invalid_argument for non-positive sizes or a width × height that overflows.
    /// Also throws it, naming gorge::grid and the size, when width × height × sizeof(T) bytes
    /// exceed the largest allocation (PTRDIFF_MAX bytes), instead of an anonymous length_error.
    grid(std::ptrdiff_t width, std::ptrdiff_t height, const T& fill = T())
        : width_(width), height_(height), cells_(detail::checked_grid_elements<T>(width, height, "gorge::grid"), fill) {}

    T* data() { return cells_.data(); }
    const T* data() const { return cells_.data(); }
    std::ptrdiff_t width() const { return width_; }
    std::ptrdiff_t height() const { return height_; }
    std::ptrdiff_t stride() const { return width_; }
    std::size_t size() const { return cells_.size(); }
    bool empty() const { return cells_.empty(); }
    bool contains(std::ptrdiff_t x, std::ptrdiff_t y) const { return x >= 0 && y >= 0 && x < width_ && y < height_; }

    T& operator()(std::ptrdiff_t x, std::ptrdiff_t y) {
        GORGE_ASSERT(contains(x, y), "gorge::grid: cell out of range");
        return cells_[static_cast<std::size_t>(y * width_ + x)];
    }
    const T& operator()(std::ptrdiff_t x, std::ptrdiff_t y) const {
        GORGE_ASSERT(contains(x, y), "gorge::grid: cell out of range");
        return cells_[static_cast<std::size_t>(y * width_ + x)];
    }
    T& at(std::ptrdiff_t x, std::ptrdiff_t y) { return view().at(x, y); }
    const T& at(std::ptrdiff_t x, std::ptrdiff_t y) const { return view().at(x, y); }

    /// View of the whole grid; an empty (default-made) view for an empty grid.
    grid_view<T> view() {
        return cells_.empty() ? grid_view<T>() : grid_view<T>(cells_.data(), width_, height_, width_);
    }
    grid_view<const T> view() const {
        return cells_.empty() ? grid_view<const T>() : grid_view<const T>(cells_.data(), width_, height_, width_);
    }
    operator grid_view<T>() { return view(); }              // NOLINT(google-explicit-constructor)
    operator grid_view<const T>() const { return view(); }  // NOLINT(google-explicit-constructor)

    using storage = std::vector<T, detail::large_block_allocator<T>>;
    typename storage::iterator begin() { return cells_.begin(); }
    typename storage::iterator end() { return cells_.end(); }
    typename storage::const_iterator begin() const { return cells_.begin(); }
    typename storage::const_iterator end() const { return cells_.end(); }

private:
    std::ptrdiff_t width_ = 0, height_ = 0;
    storage cells_;
};

}  // namespace gorge
