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
// marked for transparent huge pages on Linux (madvise MADV_HUGEPAGE); default: every such block;
// 0 marks none. Huge pages spare a flood's scattered reads TLB misses (a 1024^2 epsilon fill ran
// 7-13 % faster on working copies that are reused from call to call), and a large map's
// whole-map arrays, fresh from the system on every call, fault in 512 times fewer pieces: on a
// virtual machine whose 4 KiB faults cost 10 us each, an 8192^2 fill took 55 ns a cell on small
// pages and 29 on huge ones. On a virtual machine whose host takes freed memory back and backs
// fresh huge pages slowly, the opposite holds for those fresh arrays (its first 8192^2 fill took
// three times as long); there, (32u << 20) marks only the working copies that glibc keeps between
// calls (benchmarks/README.md, "Huge pages for every large block again"). Every large block is
// aligned to 2 MiB, so a system whose policy is "always" backs them with huge pages unasked.
// Define it the same way in every translation unit.
#ifndef GORGE_HUGE_PAGE_MAX_BYTES
#define GORGE_HUGE_PAGE_MAX_BYTES (~0ull)
#endif

// GORGE_UNLIKELY(condition): a branch hint for conditions that almost never hold.
// GORGE_COLD_NOINLINE: rare paths kept out of line, so that the hot loop around them keeps its
// registers.
// GORGE_NOINLINE: a function kept out of line that is not rare, where the loop that calls it
// runs faster with its registers to itself.
#if defined(__GNUC__) || defined(__clang__)
#define GORGE_UNLIKELY(condition) __builtin_expect(!!(condition), 0)
#define GORGE_COLD_NOINLINE __attribute__((cold, noinline))
#define GORGE_NOINLINE __attribute__((noinline))
#else
#define GORGE_UNLIKELY(condition) (condition)
#define GORGE_COLD_NOINLINE
#define GORGE_NOINLINE
#endif
