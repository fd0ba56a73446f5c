// Forwarding header: gorge/batch.hpp moved to gorge/simd/batch.hpp (this path keeps compiling).
#pragma once
#include "simd/batch.hpp"
