// Forwarding header: gorge/field.hpp moved to gorge/noise/field.hpp (this path keeps compiling).
#pragma once
#include "noise/field.hpp"
