// Forwarding header: gorge/phacelle.hpp moved to gorge/filter/phacelle.hpp (this path keeps compiling).
#pragma once
#include "filter/phacelle.hpp"
