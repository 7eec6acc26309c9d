// The GPU reference (sim/gpu_reference/) against what its closed form must do
// whatever its constants: monotone in size, context and bandwidth, tensor
// parallelism bounded by its all-reduces, MoE reading only routed experts, and
// the capacity check. No expected figure is copied from its output.
#include "sim/gpu_reference/gpu_reference.h"

#include <string>

#include <catch2/catch.hpp>

#include "models/gpu.h"
#include "workloads/model_file.h"

using namespace wafersim;
using gpu_reference::Assumptions;
using gpu_reference::evaluate;

namespace {

GpuSystem system_of(const std::string& text) {
  GpuSystem system;
  REQUIRE(parse_gpu_system(text, &system).empty());
  return system;
}

workloads::ModelSpec model(const std::string& name) { return workloads::load_model(name).model; }

workloads::WorkloadSpec workload(uint64_t prompt, uint64_t decode = 8, uint32_t batch = 1) {
  workloads::WorkloadSpec w;
  w.batch = batch;
  w.prompt_tokens = prompt;
  w.decode_tokens = decode;
  return w;
}

}  // namespace

TEST_CASE("every GPU preset has its datasheet figures and source", "[gpu_reference]") {
  REQUIRE(gpu_presets().size() == 3);
  for (const GpuSpec& g : gpu_presets()) {
    INFO(g.name);
    CHECK(g.hbm_bytes > 0);
    CHECK(g.hbm_bytes_per_s > 0);
    CHECK(g.bf16_flops_per_s > 0);
    CHECK(g.nvlink_bytes_per_s > 0);
    CHECK(g.tdp_watts > 0);
    CHECK(g.source.rfind("https://", 0) == 0);
    // A narrower format is never slower than a wider one.
    CHECK(gpu_peak_flops_per_s(g, Dtype::FP8) >= gpu_peak_flops_per_s(g, Dtype::BF16));
    CHECK(gpu_peak_flops_per_s(g, Dtype::MXFP4) >= gpu_peak_flops_per_s(g, Dtype::FP8));
  }
}

TEST_CASE("GPU systems parse as GPUxN and anything else is refused with the accepted form", "[gpu_reference]") {
  GpuSystem s;
  CHECK(parse_gpu_system("b200x8", &s).empty());
  CHECK(s.gpu.name == "b200");
  CHECK(s.count == 8);
  CHECK(s.label() == "b200x8");
  for (const char* bad : {"b200", "x8", "b200x", "b200x0", "b200x73", "h200x8", "b200x8x", "b200xa", "B200x8", ""}) {
    INFO(bad);
    const std::string why = parse_gpu_system(bad, &s);
    CHECK(why.find("expected GPUxN") != std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
  }
}

TEST_CASE("decode time grows with model size and with context", "[gpu_reference]") {
  const GpuSystem h100x8 = system_of("h100x8");
  const auto small = evaluate(model("llama3.1-8b"), workload(1024), h100x8);
  const auto large = evaluate(model("llama3.1-70b"), workload(1024), h100x8);
  CHECK(large.decode.total_us > small.decode.total_us);
  CHECK(large.decode.hbm_bytes_per_gpu > small.decode.hbm_bytes_per_gpu);

  const auto long_context = evaluate(model("llama3.1-8b"), workload(32768), h100x8);
  CHECK(long_context.decode.total_us > small.decode.total_us);
  CHECK(long_context.decode.hbm_bytes_per_gpu > small.decode.hbm_bytes_per_gpu);
  CHECK(long_context.kv_bytes_per_gpu > small.kv_bytes_per_gpu);
}

TEST_CASE("halving HBM bandwidth doubles a bandwidth-bound decode's read time", "[gpu_reference]") {
  GpuSystem full = system_of("h100x1");
  GpuSystem half = full;
  half.gpu.hbm_bytes_per_s /= 2;
  const auto a = evaluate(model("llama3.1-8b"), workload(1024), full);
  const auto b = evaluate(model("llama3.1-8b"), workload(1024), half);
  REQUIRE(a.decode_bound == "HBM bandwidth");
  CHECK(b.decode.memory_us == Approx(2 * a.decode.memory_us));
  // Only the fixed per-layer cost does not scale: without it the step doubles.
  const double ratio = b.decode.total_us / a.decode.total_us;
  CHECK(ratio > 1.8);
  CHECK(ratio <= 2.0);
  Assumptions no_overhead;
  no_overhead.layer_overhead_us = 0;
  CHECK(evaluate(model("llama3.1-8b"), workload(1024), half, no_overhead).decode.total_us ==
        Approx(2 * evaluate(model("llama3.1-8b"), workload(1024), full, no_overhead).decode.total_us));
}

TEST_CASE("more GPUs lower the per-token time, never below the all-reduce floor", "[gpu_reference]") {
  const workloads::ModelSpec m = model("llama3.1-70b");
  const Assumptions a;
  double previous = 0;
  for (const char* text : {"h100x2", "h100x4", "h100x8"}) {
    INFO(text);
    const auto r = evaluate(m, workload(1024), system_of(text));
    if (previous > 0) CHECK(r.decode.total_us < previous);
    previous = r.decode.total_us;
    const double floor_us = 2.0 * m.n_layers * a.all_reduce_latency_us + m.n_layers * a.layer_overhead_us;
    CHECK(r.decode.all_reduce_us >= 2.0 * m.n_layers * a.all_reduce_latency_us);
    CHECK(r.decode.total_us > floor_us);
  }
  // One GPU has no all-reduce at all.
  CHECK(evaluate(model("llama3.1-8b"), workload(1024), system_of("h100x1")).decode.all_reduce_us == 0);
  // Far past the point where the reads stop mattering, the all-reduces and the fixed cost remain.
  const auto many = evaluate(m, workload(1024), system_of("h100x64"));
  CHECK(many.decode.total_us > many.decode.all_reduce_us + many.decode.overhead_us);
  CHECK(many.decode.all_reduce_us + many.decode.overhead_us > many.decode.memory_us);
}

TEST_CASE("an MoE decode reads the routed experts only, and more of them with a larger batch", "[gpu_reference]") {
  const workloads::ModelSpec moe = model("gpt-oss-20b");
  const double all_weights = double(workloads::count_params(moe).weight_bytes);
  const auto one = evaluate(moe, workload(128, 8, 1), system_of("h100x1"));
  CHECK(one.decode.hbm_bytes_per_gpu < 0.5 * all_weights);  // 4 of 32 experts per layer
  const auto many = evaluate(moe, workload(128, 8, 64), system_of("h100x1"));
  CHECK(many.decode.hbm_bytes_per_gpu > one.decode.hbm_bytes_per_gpu);
  // A dense model reads every weight it multiplies by: nearly all of them.
  const workloads::ModelSpec dense = model("llama3.1-8b");
  const auto d = evaluate(dense, workload(128), system_of("h100x1"));
  CHECK(d.decode.hbm_bytes_per_gpu > 0.9 * double(workloads::count_params(dense).weight_bytes));
}

TEST_CASE("a latent-attention cache is one head, which every GPU keeps whole", "[gpu_reference][mla]") {
  CHECK(evaluate(model("tiny-mla"), workload(128), system_of("h100x4")).kv_shards == 1);
  CHECK(evaluate(model("tiny-dense"), workload(128), system_of("h100x4")).kv_shards == 2);  // its two KV heads
}

TEST_CASE("a model larger than the GPUs' HBM does not fit; more GPUs hold it", "[gpu_reference]") {
  const workloads::ModelSpec m = model("llama3.1-405b");
  try {
    evaluate(m, workload(1024), system_of("h100x1"));
    FAIL("405B in bf16 fitted in one H100");
  } catch (const gpu_reference::DoesNotFitError& error) {
    const std::string message = error.what();
    CHECK(message.find("h100x1") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
  CHECK_NOTHROW(evaluate(m, workload(1024), system_of("b200x8")));
  // The KV cache counts too: a batch's cache can push a fitting model out.
  CHECK_NOTHROW(evaluate(model("llama3.1-8b"), workload(8192, 8, 1), system_of("h100x1")));
  CHECK_THROWS_AS(evaluate(model("llama3.1-8b"), workload(8192, 8, 256), system_of("h100x1")),
                  gpu_reference::DoesNotFitError);
}

TEST_CASE("a long prompt's prefill is compute-bound and the time to first token grows with it", "[gpu_reference]") {
  const GpuSystem b200x8 = system_of("b200x8");
  const auto short_prompt = evaluate(model("llama3.1-70b"), workload(512), b200x8);
  const auto long_prompt = evaluate(model("llama3.1-70b"), workload(8192), b200x8);
  REQUIRE(long_prompt.has_prefill);
  CHECK(long_prompt.prefill.compute_us > long_prompt.prefill.memory_us);
  CHECK(long_prompt.time_to_first_token_us > short_prompt.time_to_first_token_us);
  CHECK(long_prompt.time_to_first_token_us > long_prompt.prefill.total_us);  // then the first decode step
  workloads::WorkloadSpec no_prefill = workload(512);
  no_prefill.prefill = false;
  CHECK_FALSE(evaluate(model("llama3.1-70b"), no_prefill, b200x8).has_prefill);
}

TEST_CASE("tokens per second per kW divide the tokens by the GPUs' TDP", "[gpu_reference]") {
  const auto r = evaluate(model("llama3.1-8b"), workload(1024, 8, 4), system_of("a100x2"));
  CHECK(r.power_watts == Approx(2 * 400.0));
  CHECK(r.tokens_per_second == Approx(4 * r.tokens_per_second_per_user));
  CHECK(r.tokens_per_second_per_kw == Approx(r.tokens_per_second / 0.8));
  CHECK(r.joules_per_token == Approx(r.power_watts / r.tokens_per_second));
}
