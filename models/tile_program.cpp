#include "models/tile_program.h"

namespace wafersim {

const char* category_name(Category category) {
  switch (category) {
    case Category::Compute: return "compute";
    case Category::Fabric: return "fabric";
    case Category::Reduce: return "reduce";
    case Category::OffWafer: return "offwafer";
    case Category::Contention: return "contention";
    case Category::kCount: break;
  }
  return "?";
}

}  // namespace wafersim
