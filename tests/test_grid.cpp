// grid<T> and grid_view<T>: size checks (zero, negative, stride, overflow), strided addressing,
// checked access, the non-finite check naming the cell, and the storage's alignment and huge-page
// hint (GORGE_HUGE_PAGE_MAX_BYTES: this file is built twice, as it comes and with 0).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <sys/resource.h>
#endif

#include <gorge/grid/grid.hpp>
#include <gorge/grid/no_data.hpp>

#include "support/catch.hpp"
#include "support/errors.hpp"

namespace {

using gorge_test::contains;
using gorge_test::invalid_argument_message;

#if defined(__linux__)
/// The VmFlags line of the mapping that holds address p (/proc/self/smaps), or "" when none does.
std::string vm_flags_at(const void* p) {
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        const std::size_t dash = line.find('-'), space = line.find(' ');
        const bool header = dash != std::string::npos && space != std::string::npos && dash < space &&
                            line.find(':') > space;  // "begin-end perms ...", not "Name: value"
        if (header) {
            const std::uintptr_t begin = std::stoull(line.substr(0, dash), nullptr, 16);
            const std::uintptr_t end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
            inside = begin <= at && at < end;
        } else if (inside && line.rfind("VmFlags:", 0) == 0) {
            return line + " ";
        }
    }
    return "";
}
#endif

}  // namespace

TEST_CASE("grid rejects zero and negative sizes, naming the parameter", "[grid]") {
    CHECK(contains(invalid_argument_message([] { gorge::grid<float> g(0, 4); }), "width"));
    CHECK(contains(invalid_argument_message([] { gorge::grid<float> g(4, 0); }), "height"));
    CHECK(contains(invalid_argument_message([] { gorge::grid<float> g(-3, 4); }), "width"));
    CHECK(contains(invalid_argument_message([] { gorge::grid<float> g(4, -1); }), "height"));
    float cell = 0.0f;
    CHECK(contains(invalid_argument_message([&] { gorge::grid_view<float> v(&cell, 0, 1); }), "width"));
    CHECK(contains(invalid_argument_message([&] { gorge::grid_view<float> v(&cell, 1, -1); }), "height"));
    CHECK(contains(invalid_argument_message([] { gorge::grid_view<float> v(nullptr, 1, 1); }), "null"));
}

TEST_CASE("grid rejects a width x height that overflows instead of wrapping", "[grid]") {
    const std::ptrdiff_t huge = std::numeric_limits<std::ptrdiff_t>::max() / 2 + 1;
    // huge * 2 rows exceeds ptrdiff_t: must throw, not wrap to a small allocation.
    CHECK(contains(invalid_argument_message([&] { gorge::grid<std::uint8_t> g(huge, 3); }), "overflows"));
    CHECK(contains(invalid_argument_message([&] { gorge::grid<std::uint8_t> g(3, huge); }), "overflows"));
    float cell = 0.0f;
    CHECK(contains(invalid_argument_message([&] { gorge::grid_view<float> v(&cell, 2, huge, huge); }),
                   "overflows"));
    // The largest span that fits is accepted by the size check itself.
    const std::ptrdiff_t max = std::numeric_limits<std::ptrdiff_t>::max();
    CHECK(gorge::detail::checked_grid_span(max, 1, max, "test") == static_cast<std::size_t>(max));
    CHECK(contains(invalid_argument_message([&] { gorge::detail::checked_grid_span(max, 2, max, "test"); }),
                   "overflows"));
}

TEST_CASE("grid rejects a size whose bytes do not fit in memory, naming grid and size", "[grid]") {
    // 2^31 x 2^31 cells fit in ptrdiff_t, but 2^62 floats are 2^64 bytes: more than std::size_t
    // (and any allocator) can hold. The error names the grid and its size instead of leaving
    // std::vector to throw an unnamed std::length_error.
    const std::ptrdiff_t side = std::ptrdiff_t(1) << 31;
    const std::string message = invalid_argument_message([&] { gorge::grid<float> g(side, side); });
    CHECK(contains(message, "gorge::grid"));
    CHECK(contains(message, "2147483648 x 2147483648"));
    // Elements that fit but bytes that exceed the largest allocation (PTRDIFF_MAX bytes).
    const std::ptrdiff_t rows = std::numeric_limits<std::ptrdiff_t>::max() / 8 / side + 1;
    CHECK(contains(invalid_argument_message([&] { gorge::grid<double> g(side, rows); }), "gorge::grid"));
}

TEST_CASE("grid_view addresses a sub-rectangle through its stride", "[grid]") {
    // A 5 x 3 buffer holding 10 * y + x; a 2 x 2 view starting at (1, 1).
    std::vector<int> buffer(15);
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 5; ++x) buffer[std::size_t(y * 5 + x)] = 10 * y + x;
    CHECK(contains(invalid_argument_message([&] { gorge::grid_view<int> v(buffer.data(), 5, 3, 4); }), "stride"));
    gorge::grid_view<int> view(buffer.data() + 6, 2, 2, 5);
    CHECK(view(0, 0) == 11);
    CHECK(view(1, 0) == 12);
    CHECK(view(0, 1) == 21);
    CHECK(view(1, 1) == 22);
    CHECK(view.row(1)[1] == 22);
    CHECK(view.size() == 4u);
    view(1, 1) = -1;
    CHECK(buffer[12] == -1);
    // A const view converts from a mutable one and sees the same cells.
    gorge::grid_view<const int> read_only = view;
    CHECK(read_only(1, 1) == -1);
    CHECK(read_only.stride() == 5);
}

TEST_CASE("grid stores row-major, fills, and checks access", "[grid]") {
    gorge::grid<float> g(3, 2, 7.0f);
    CHECK(g.size() == 6u);
    CHECK(g.stride() == 3);
    for (float v : g) CHECK(v == 7.0f);
    g(2, 1) = 5.0f;
    CHECK(g.data()[1 * 3 + 2] == 5.0f);
    CHECK(g.view()(2, 1) == 5.0f);
    CHECK(g.at(2, 1) == 5.0f);
    CHECK_THROWS_AS(g.at(3, 0), std::out_of_range);
    CHECK_THROWS_AS(g.at(0, -1), std::out_of_range);
    CHECK_FALSE(g.contains(-1, 0));
    CHECK(g.contains(2, 1));
}

TEST_CASE("check_finite names the first non-finite cell", "[grid]") {
    gorge::grid<double> g(4, 3, 1.0);
    CHECK_NOTHROW(g.view().check_finite());
    g(2, 1) = std::numeric_limits<double>::quiet_NaN();
    g(3, 2) = std::numeric_limits<double>::infinity();
    const std::string message = invalid_argument_message([&] { g.view().check_finite("terrain"); });
    CHECK(contains(message, "(2, 1)"));
    CHECK(contains(message, "terrain"));
    g(2, 1) = 0.0;
    CHECK(contains(invalid_argument_message([&] { g.view().check_finite(); }), "(3, 2)"));
    // Through a strided view, cells are named in view coordinates; cells outside are not looked at.
    std::vector<float> buffer(12, 0.0f);
    buffer[5] = -std::numeric_limits<float>::infinity();  // (1, 1) of the 4-wide buffer
    buffer[3] = std::numeric_limits<float>::quiet_NaN();  // outside the 2 x 2 view at (1, 1)
    gorge::grid_view<const float> view(buffer.data() + 5, 2, 2, 4);
    CHECK(contains(invalid_argument_message([&] { view.check_finite(); }), "(0, 0)"));
}

TEST_CASE("heights_within: every cell finite and within the limit, or no-data", "[grid]") {
    using gorge::detail::heights_within;
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    constexpr float limit = 100.0f;
    // 37 wide: a whole number of SIMD-sized steps for no width, so every position is looked at.
    gorge::grid<float> g(37, 5, 1.0f);
    const std::optional<float> none, marker(-9999.0f), nan_marker(nan);
    CHECK(heights_within<float>(g.view(), limit, none));
    g(36, 4) = limit;  // on the limit: within
    g(0, 0) = -limit;
    CHECK(heights_within<float>(g.view(), limit, none));
    for (const float bad : {nan, inf, -inf, std::nextafter(limit, 2 * limit), -2 * limit}) {
        for (const std::ptrdiff_t x : {std::ptrdiff_t(0), std::ptrdiff_t(17), std::ptrdiff_t(36)}) {
            INFO("value " << bad << " at x " << x);
            gorge::grid<float> b = g;
            b(x, 3) = bad;
            CHECK_FALSE(heights_within<float>(b.view(), limit, none));
            CHECK_FALSE(heights_within<float>(b.view(), limit, marker));
            // A NaN no-data value makes NaN cells no-data, and nothing else.
            CHECK(heights_within<float>(b.view(), limit, nan_marker) == std::isnan(bad));
        }
    }
    gorge::grid<float> m = g;
    m(5, 2) = -9999.0f;  // beyond the limit, but the no-data value
    CHECK(heights_within<float>(m.view(), limit, marker));
    CHECK_FALSE(heights_within<float>(m.view(), limit, none));
    CHECK_FALSE(heights_within<float>(m.view(), limit, nan_marker));
}

TEST_CASE("large grids are 2 MiB aligned; small and over-aligned ones keep their alignment", "[grid]") {
    constexpr std::uintptr_t huge_page = std::uintptr_t(2) << 20;
    gorge::grid<float> large(1024, 1024, 1.5f);  // 4 MiB
    CHECK(reinterpret_cast<std::uintptr_t>(large.data()) % huge_page == 0);
    CHECK(large(1023, 1023) == 1.5f);
    gorge::grid<float> copy = large;  // copies allocate through the same allocator
    CHECK(reinterpret_cast<std::uintptr_t>(copy.data()) % huge_page == 0);
    CHECK(copy(512, 7) == 1.5f);
    struct alignas(64) wide {
        float lanes[16];
    };
    gorge::grid<wide> small(3, 2);
    CHECK(reinterpret_cast<std::uintptr_t>(small.data()) % 64 == 0);
}

#if defined(__linux__)
TEST_CASE("grids up to GORGE_HUGE_PAGE_MAX_BYTES are marked for transparent huge pages", "[grid]") {
    // madvise(MADV_HUGEPAGE) sets the mapping's "hg" flag whatever the system's policy, on a kernel
    // with transparent huge pages (the flag is never set otherwise).
    const bool kernel_has_them = std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
    const auto marked = [](const gorge::grid<float>& g) {
        const std::string flags = vm_flags_at(g.data());
        REQUIRE(!flags.empty());
        return contains(flags, " hg ");
    };
    const gorge::grid<float> small(16, 16, 0.0f);   // 1 KiB: never marked
    const gorge::grid<float> mid(1024, 1024, 1.5f);  // 4 MiB
    const gorge::grid<float> big(4096, 4096, 1.5f);  // 64 MiB
    constexpr std::size_t limit = std::size_t(GORGE_HUGE_PAGE_MAX_BYTES);
    CHECK(!marked(small));
    CHECK(marked(mid) == (kernel_has_them && limit >= (std::size_t(4) << 20)));
    CHECK(marked(big) == (kernel_has_them && limit >= (std::size_t(64) << 20)));
}
#endif

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST_CASE("a large block freed and asked for again comes back on pages already faulted in", "[grid]") {
    // glibc keeps a freed block of up to 32 MiB for the next request of its size, unless the
    // request carries an alignment (large_block_allocator aligns inside a plain one): a fresh
    // mapping of 16 MiB faults at least 8 times when touched (2 MiB pages), 4096 times (4 KiB).
    const auto faults = [] {
        rusage usage{};
        REQUIRE(getrusage(RUSAGE_SELF, &usage) == 0);
        return usage.ru_minflt;
    };
    const auto touch_one = [] {
        std::vector<float, gorge::detail::large_block_allocator<float>> block(std::size_t(4) << 20, 1.0f);  // 16 MiB
        REQUIRE(reinterpret_cast<std::uintptr_t>(block.data()) % (std::uintptr_t(2) << 20) == 0);
        return block[block.size() / 2];
    };
    touch_one();  // the first is a fresh mapping, and raises glibc's threshold to its size
    touch_one();
    const auto before = faults();
    CHECK(touch_one() == 1.0f);
    CHECK(faults() - before < 4);
}
#endif

TEST_CASE("a block too large for any object is refused, not wrapped around to a small one", "[grid]") {
    // Such sizes come from a width times a height that the caller did not check; a count whose
    // bytes, with the 2 MiB alignment slack, pass PTRDIFF_MAX must throw before anything is taken.
    gorge::detail::large_block_allocator<float> blocks;
    const std::size_t largest = std::size_t(std::numeric_limits<std::ptrdiff_t>::max());
    CHECK_THROWS_AS(blocks.allocate(largest / sizeof(float)), std::bad_alloc);
    CHECK_THROWS_AS(blocks.allocate(std::numeric_limits<std::size_t>::max() / sizeof(float)), std::bad_alloc);
    CHECK_THROWS_AS(blocks.allocate(std::numeric_limits<std::size_t>::max()), std::bad_alloc);
}
