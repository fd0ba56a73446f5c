// Forwarding header: gorge/hash.hpp moved to gorge/noise/hash.hpp (this path keeps compiling).
#pragma once
#include "noise/hash.hpp"
