// serve --explain: the overload experiment names what holds it back (its
// batch limit is reached, but doubling it does not help: items wait at the
// pipeline's entry), the class that loses requests and why, and a what-if
// that a re-run with the same --set reproduces; a light load binds nothing.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_json.h"

using namespace wafersim::testing;
using nlohmann::json;

namespace {

const std::string kServing = std::string(WAFERSIM_SOURCE_DIR) + "/workloads/experiments/serving/";

json serve(const std::string& file, std::vector<std::string> args) {
  args.insert(args.begin(), {"serve", kServing + file});
  return run_json(args);
}

}  // namespace

TEST_CASE("serve --explain names the overload's binding limit and the class that loses", "[cli][explain][serve]") {
  const json explained = serve("overload.yaml", {"--explain"})["explain"];
  CHECK(explained["admission_blocked"]["max_batch"].get<double>() >= 0.1);
  CHECK(explained["binding"] == "entry");  // doubling max_batch completes no more
  const json& what_if = explained["what_if"];
  REQUIRE(what_if["set"] == "serving.scheduler.max_batch=32");
  CHECK(what_if["completed"][1].get<double>() < what_if["completed"][0].get<double>() * 1.02);
  // The what-if is what serve gives with that --set.
  const json rerun = serve("overload.yaml", {"--set", "serving.scheduler.max_batch=32"});
  CHECK(rerun["serving"]["requests"]["completed"] == what_if["completed"][1]);
  CHECK(rerun["serving"]["goodput_rps"].get<double>() == Approx(what_if["goodput_rps"][1].get<double>()));
  // The background class loses requests to its full queue and to preemption.
  bool background = false;
  for (const json& c : explained["classes"])
    if (c["class"] == "background") {
      background = true;
      CHECK(c["rejected_queue_full"].get<uint64_t>() > 0);
      CHECK(c["preemptions"].get<uint64_t>() > 0);
    }
  CHECK(background);
  // Decode steps wait longer to enter the pipeline than they take in it.
  CHECK(explained["decode_token"]["waiting_ms"].get<double>() >
        explained["decode_token"]["in_pipeline_ms"].get<double>());
}

TEST_CASE("serve --explain finds nothing binding under a light load", "[cli][explain][serve]") {
  const json explained = serve("coding_assistant.yaml", {"--explain"})["explain"];
  CHECK(explained["binding"] == "none");
  CHECK(explained["admission_blocked"]["max_batch"].get<double>() < 0.1);
}
