#include "models/tile_program.h"

namespace wafersim {

bool Task::operator==(const Task& other) const { return fields() == other.fields(); }

}  // namespace wafersim
