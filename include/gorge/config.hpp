// gorge/config.hpp — version, assertion and inlining macros shared by every gorge header.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#define GORGE_VERSION_MAJOR 0
#define GORGE_VERSION_MINOR 1
#define GORGE_VERSION_PATCH 0

// GORGE_ASSERT(cond, message): checks a per-point precondition in debug builds (NDEBUG not
// defined) and compiles to nothing otherwise. Define it before including gorge to route failures
// into an engine's own assertion handler. Parameter structs are checked at any optimisation level
// by their validate() member, which throws std::invalid_argument.
#ifndef GORGE_ASSERT
#include <cassert>
#define GORGE_ASSERT(cond, message) assert((cond) && (message))
#endif

// GORGE_FORCEINLINE: the kernels are small and called per sample; inlining lets the compiler keep
// the per-octave state in registers, for scalars and SIMD batches alike.
#if defined(_MSC_VER)
#define GORGE_FORCEINLINE __forceinline
#elif defined(__GNUC__)
#define GORGE_FORCEINLINE inline __attribute__((always_inline))
#else
#define GORGE_FORCEINLINE inline
#endif

// GORGE_RESTRICT: a pointer through which nothing else reached in its scope is written, so that
// a short fixed loop over it can become one vector operation.
#if defined(_MSC_VER) || defined(__GNUC__) || defined(__clang__)
#define GORGE_RESTRICT __restrict
#else
#define GORGE_RESTRICT
#endif

// GORGE_PREFETCH(p): a hint to start loading the cache line at address p (no effect elsewhere).
#if defined(__GNUC__) || defined(__clang__)
#define GORGE_PREFETCH(p) __builtin_prefetch(p)
#else
#define GORGE_PREFETCH(p) ((void)0)
#endif

// GORGE_HUGE_PAGE_MAX_BYTES: the grid algorithms' blocks from 2 MiB up to this many bytes are
// marked for transparent huge pages on Linux (madvise MADV_HUGEPAGE); default 32 MiB, 0 marks
// none. Blocks that size (a fill's working copies; a 2048^2 float grid is 16 MiB) are what
// allocators keep and hand out again from call to call (glibc's largest mmap threshold is 32 MiB),
// and huge pages spare their scattered reads TLB misses: a 1024^2 epsilon fill ran 7-13 % faster.
// Larger blocks (whole-map arrays of large maps) come fresh from the system on every call, and
// where a virtual machine's host takes freed memory back, fresh huge pages can fault in at a tenth
// of the speed of small ones: marked, an 8192^2 epsilon fill with statistics took three times as
// long on such a VM (benchmarks/README.md, "Huge pages for working blocks only"). Every large block
// is aligned to 2 MiB, so a system whose policy is "always" backs them with huge pages unasked.
// Define it the same way in every translation unit.
#ifndef GORGE_HUGE_PAGE_MAX_BYTES
#define GORGE_HUGE_PAGE_MAX_BYTES (32u << 20)
#endif

// GORGE_UNLIKELY(condition): a branch hint for conditions that almost never hold.
// GORGE_COLD_NOINLINE: rare paths kept out of line, so that the hot loop around them keeps its
// registers.
#if defined(__GNUC__) || defined(__clang__)
#define GORGE_UNLIKELY(condition) __builtin_expect(!!(condition), 0)
#define GORGE_COLD_NOINLINE __attribute__((cold, noinline))
#else
#define GORGE_UNLIKELY(condition) (condition)
#define GORGE_COLD_NOINLINE
#endif
