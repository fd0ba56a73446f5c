// Forwarding header: gorge/value_noise.hpp moved to gorge/noise/value_noise.hpp (this path keeps compiling).
#pragma once
#include "noise/value_noise.hpp"
