#include "models/tile_program.h"

#include <cstring>

namespace wafersim {

namespace {
bool same_work(const Work& a, const Work& b) {
  return a.flops == b.flops && a.read_bytes == b.read_bytes && a.write_bytes == b.write_bytes;
}
}  // namespace

bool Task::operator==(const Task& o) const {
  return op == o.op && dir == o.dir && category == o.category && dtype == o.dtype && tag == o.tag &&
         layer == o.layer && count == o.count && dx == o.dx && dy == o.dy && dwafer == o.dwafer &&
         relays == o.relays && bytes == o.bytes && expert == o.expert && moe_layer == o.moe_layer &&
         mark == o.mark && same_work(work, o.work) && same_work(work_per_position, o.work_per_position) &&
         kv_stride == o.kv_stride && kv_offset == o.kv_offset && kv_window == o.kv_window &&
         iteration_delta == o.iteration_delta;
}

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
