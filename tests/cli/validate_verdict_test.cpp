// `validate` gives the verdict of the command that would use the file: each
// bad experiment below goes through validate and through serve, run or
// analytic, and both must exit alike with the same one line, located at the
// experiment's key or at the trace's file and line.
#include <filesystem>
#include <map>

#include <catch2/catch.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;

namespace {

std::string head(const std::string& model = "tiny-dense") {
  return "hardware: tiny\nmodel: " + model +
         "\nworkload: {prompt_tokens: 64, decode_tokens: 4, prefill_chunk_tokens: 32}\n";
}
const std::string kHead = head();
const std::string kTraceHeader = "arrival_s,prompt_tokens,output_tokens,class\n";

struct VerdictCase {
  std::string name;
  std::string command;  // the command the file is for
  std::string experiment;
  std::map<std::string, std::string> files;  // beside the experiment (a name ending in '/' is a folder)
  std::vector<std::string> located;          // what the one line must hold ("exp.yaml:5:15: serving.trace_file")
};

std::vector<VerdictCase> verdict_cases() {
  const std::string trace_at = kHead + "serving:\n  trace_file: ";
  return {
      {"a trace file with the wrong extension",
       "serve",
       trace_at + "trace.txt\n",
       {{"trace.txt", kTraceHeader + "0,16,4,realtime\n"}},
       {"exp.yaml:5:15: serving.trace_file: ", "trace.txt: a trace file must end in .csv or .jsonl"}},
      {"a trace file that is missing",
       "serve",
       trace_at + "missing.csv\n",
       {},
       {"exp.yaml:5:15: serving.trace_file: ", "missing.csv: cannot open the trace file"}},
      {"a trace file that is a folder",
       "serve",
       trace_at + "folder.csv\n",
       {{"folder.csv/", ""}},
       {"exp.yaml:5:15: serving.trace_file: ", "folder.csv: cannot read the trace file: not a regular file"}},
      {"a trace with unsorted arrivals",
       "serve",
       trace_at + "trace.csv\n",
       {{"trace.csv", kTraceHeader + "0.5,16,4,realtime\n0.2,16,4,realtime\n"}},
       {"trace.csv:3: arrivals are not sorted: 0.2 s comes after 0.5 s (line 2)"}},
      {"a trace line longer than the model's context",
       "serve",
       trace_at + "trace.csv\n",
       {{"trace.csv", kTraceHeader + "0,5000,4,realtime\n"}},
       {"trace.csv:2: prompt_tokens = 5000 tokens exceeds the model's max_positions (4096)"}},
      {"a trace arrival the serving clock cannot hold",
       "serve",
       trace_at + "trace.jsonl\n",
       {{"trace.jsonl",
         "{\"arrival_s\": 0, \"prompt_tokens\": 16, \"output_tokens\": 4, \"class\": \"realtime\"}\n"
         "{\"arrival_s\": 1e300, \"prompt_tokens\": 16, \"output_tokens\": 4, \"class\": \"realtime\"}\n"}},
       {"trace.jsonl:2: arrival_s = ", "past the 864000 s"}},
      {"a trace that holds no request",
       "serve",
       trace_at + "trace.csv\n",
       {{"trace.csv", kTraceHeader}},
       {"trace.csv: the trace holds no request"}},
      {"a synthetic class with a zero rate",
       "serve",
       kHead + "serving:\n  realtime: {requests: 10, rate_per_s: 0}\n",
       {},
       {"exp.yaml:5:40: serving.realtime.rate_per_s: the arrival rate must be above 0 requests/s"}},
      {"a synthetic class whose arrivals span past ten days",
       "serve",
       kHead + "serving:\n  realtime: {requests: 10, rate_per_s: 1.0e-20}\n",
       {},
       {"exp.yaml:5:40: serving.realtime.rate_per_s: ", "past the 864000 s (10 days)"}},
      {"a prompt longer than the model's context",
       "serve",
       kHead + "serving:\n  realtime:\n    requests: 10\n    prompt: {distribution: fixed, tokens: 5000}\n",
       {},
       {"exp.yaml:7:43: serving.realtime.prompt.tokens: a length of 5000 tokens exceeds"}},
      {"a window no request arrives in",
       "serve",
       kHead + "serving:\n  duration_s: 0.001\n  realtime: {requests: 10, rate_per_s: 0.01}\n",
       {},
       {"exp.yaml:5:15: serving.duration_s: no request arrives in the first 0.001 s"}},
      {"a functional check on int4 weights (analytic)",
       "analytic",
       head("{preset: tiny-dense, weight_dtype: int4}") + "sim: {functional: true}\n",
       {},
       {"exp.yaml:4:19: sim.functional: the functional check cannot run: int4 weights are not emulated"}},
      {"a functional check on an fp8 KV cache (run)",
       "run",
       head("{preset: tiny-dense, kv_dtype: fp8}") + "sim: {functional: true}\n",
       {},
       {"exp.yaml:4:19: sim.functional: the functional check cannot run: fp8 activations or KV entries"}},
  };
}

// The experiment and its files in a fresh folder; returns the experiment's path.
std::string write_case(const Scratch& scratch, const VerdictCase& c) {
  for (const auto& [name, text] : c.files) {
    if (name.back() == '/')
      std::filesystem::create_directories(scratch.path() / name);
    else
      scratch.write(name, text);
  }
  return scratch.write("exp.yaml", c.experiment);
}

}  // namespace

TEST_CASE("validate refuses what serve, run and analytic refuse, with the same located line", "[cli][validate]") {
  for (const VerdictCase& c : verdict_cases()) {
    Scratch scratch;
    const std::string experiment = write_case(scratch, c);
    const Outcome command = run_wafersim({c.command, experiment, "--quiet"});
    const Outcome validate = run_wafersim({"validate", experiment});
    INFO(c.name << "\n" << c.command << ": " << command.err << "validate: " << validate.err);
    CHECK(command.exit_code == 2);
    CHECK(is_one_line(command.err));
    for (const std::string& part : c.located) CHECK_THAT(command.err, Catch::Contains(part));
    CHECK(validate.exit_code == command.exit_code);
    CHECK(validate.err == command.err);
    CHECK(validate.out.empty());
  }
}

TEST_CASE("validate passes what serve passes", "[cli][validate]") {
  // The same experiments with the fault taken out: the checks refuse the fault, not the section.
  const std::string serving = std::string(WAFERSIM_TEST_DATA) + "/serving";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{serving + "/tiny-serve.yaml"},
        {serving + "/tiny-serve.yaml", "--set", "serving.trace_file=" + serving + "/trace.csv"},
        {serving + "/tiny-serve.yaml", "--set", "serving.trace_file=" + serving + "/trace.jsonl"},
        {serving + "/tiny-serve.yaml", "--set", "serving.duration_s=0.5"}}) {
    std::vector<std::string> serve = {"serve", "--quiet"}, validate = {"validate"};
    serve.insert(serve.end(), args.begin(), args.end());
    validate.insert(validate.end(), args.begin(), args.end());
    const Outcome served = run_wafersim(serve), validated = run_wafersim(validate);
    INFO(args.back() << "\nserve: " << served.err << "validate: " << validated.err);
    CHECK(served.exit_code == 0);
    CHECK(validated.exit_code == 0);
  }
}

TEST_CASE("validate gives serve's verdict on every bad serving file", "[cli][validate]") {
  const std::filesystem::path folder = std::string(WAFERSIM_TEST_DATA) + "/serving/bad";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    const Outcome served = run_wafersim({"serve", entry.path().string(), "--quiet"});
    const Outcome validated = run_wafersim({"validate", entry.path().string()});
    INFO(entry.path().filename().string() << "\nserve: " << served.err << "validate: " << validated.err);
    CHECK(served.exit_code == 2);
    CHECK(validated.exit_code == served.exit_code);
    CHECK(validated.err == served.err);
  }
  CHECK(files >= 10);
}
