#pragma once
// The mapping.* section: strategy knobs of the layer-partitioning compiler.
#include <cstdint>

namespace wafersim {
namespace config { class Config; class Schema; }

namespace mapping {

struct MappingOptions {
  double region_aspect = 1.0;      // preferred columns / rows of a layer region
  uint32_t reduce_fanin = 2;       // children per node of reduction trees
  bool multicast_rows = true;      // input vectors travel along rows (else along columns)
  double sram_fill = 1.0;          // fraction of usable SRAM the compiler may fill
  uint64_t activation_buffer_bytes = 0;  // reserved per tile for activations
};

void declare_mapping_params(config::Schema& schema);
MappingOptions mapping_options_from_config(const config::Config& config);

}  // namespace mapping
}  // namespace wafersim
