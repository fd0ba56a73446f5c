// Forwarding header: gorge/noise.hpp moved to gorge/noise/gradient_noise.hpp (this path keeps compiling).
#pragma once
#include "noise/gradient_noise.hpp"
