// Forwarding header: gorge/tile.hpp moved to gorge/simd/tile.hpp (this path keeps compiling).
#pragma once
#include "simd/tile.hpp"
