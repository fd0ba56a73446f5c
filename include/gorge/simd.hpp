// Forwarding header: gorge/simd.hpp moved to gorge/simd/simd.hpp (this path keeps compiling).
#pragma once
#include "simd/simd.hpp"
