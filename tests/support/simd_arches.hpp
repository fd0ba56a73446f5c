// Runs a test body once per SIMD architecture a translation unit targets: the build's widest
// (xsimd::default_arch) and the narrower x86 widths it implies (AVX2, SSE2).
#pragma once

#include <type_traits>

#include <gorge/simd/simd.hpp>

#if GORGE_HAS_XSIMD
namespace gorge_test {

/// Calls f.template run<A>() for every architecture this translation unit targets.
template <class F>
void for_each_arch(F&& f) {
    f.template run<xsimd::default_arch>();
#if XSIMD_WITH_AVX2
    if (!std::is_same<xsimd::default_arch, xsimd::avx2>::value) f.template run<xsimd::avx2>();
#endif
#if XSIMD_WITH_SSE2
    if (!std::is_same<xsimd::default_arch, xsimd::sse2>::value) f.template run<xsimd::sse2>();
#endif
}

}  // namespace gorge_test
#endif
