// Forwarding header: gorge/demo_pipeline.hpp moved to gorge/filter/demo_pipeline.hpp (this path keeps compiling).
#pragma once
#include "filter/demo_pipeline.hpp"
