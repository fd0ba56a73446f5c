// gorge/detail/intrinsics.hpp — x86 intrinsics (<immintrin.h>) for the kernels that use them
// directly, and the one guard around them and xsimd.
//
// GCC 12's AVX-512 intrinsics seed some results with _mm512_undefined_*(), and its
// -Wuninitialized then reports inside the system header wherever they are inlined (GCC bug
// 105593). GORGE_DETAIL_SYSTEM_SIMD_BEGIN / _END silence only those two warnings, only for what
// is included between them: here <immintrin.h>, in gorge/simd/simd.hpp xsimd. Whichever gorge
// header comes first, the intrinsics' definitions are read inside the guard.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#define GORGE_DETAIL_SYSTEM_SIMD_BEGIN                                  \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
        _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define GORGE_DETAIL_SYSTEM_SIMD_END _Pragma("GCC diagnostic pop")
#else
#define GORGE_DETAIL_SYSTEM_SIMD_BEGIN
#define GORGE_DETAIL_SYSTEM_SIMD_END
#endif

// SSE2 (every x86-64 compiler) and up: the compile flags decide which intrinsics are usable.
#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define GORGE_DETAIL_HAS_X86_INTRINSICS 1
GORGE_DETAIL_SYSTEM_SIMD_BEGIN
#include <immintrin.h>
GORGE_DETAIL_SYSTEM_SIMD_END
#else
#define GORGE_DETAIL_HAS_X86_INTRINSICS 0
#endif
