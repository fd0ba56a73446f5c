// Forwarding header: gorge/erosion_filter.hpp moved to gorge/filter/erosion_filter.hpp (this path keeps compiling).
#pragma once
#include "filter/erosion_filter.hpp"
