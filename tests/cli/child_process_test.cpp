// `run` simulates the prefill in a forked child; however the parent dies,
// the child must not go on simulating without it.
#include <catch2/catch.hpp>

#include "run_wafersim.h"

using namespace wafersim::testing;

TEST_CASE("the prefill's child dies with a run killed by SIGKILL", "[cli][signals]") {
  const std::string quickstart = std::string(WAFERSIM_SOURCE_DIR) + "/workloads/experiments/quickstart.yaml";
  // The quickstart's prefill simulates for tens of seconds: the child is found
  // while it runs, then the parent is killed. The waits are bounds, not timings:
  // a slow machine only makes them last longer.
  const std::string script =
      shell_quoted(WAFERSIM_BINARY) + " run " + shell_quoted(quickstart) +
      " --quiet --set workload.decode_tokens=1 >/dev/null 2>&1 & parent=$!\n"
      "child=\n"
      "for i in $(seq 1200); do\n"
      "  child=$(cat /proc/$parent/task/*/children 2>/dev/null | tr -d ' ')\n"
      "  [ -n \"$child\" ] && break\n"
      "  kill -0 $parent 2>/dev/null || break\n"
      "  sleep 0.1\n"
      "done\n"
      "[ -n \"$child\" ] || { kill -9 $parent; echo 'no prefill child was seen'; exit 3; }\n"
      "kill -9 $parent; wait $parent 2>/dev/null\n"
      "for i in $(seq 300); do\n"
      "  [ -e /proc/$child ] && ! grep -q '^State:.*Z' /proc/$child/status 2>/dev/null || exit 0\n"
      "  sleep 0.1\n"
      "done\n"
      "kill -9 $child; echo \"child $child outlived its parent\"; exit 1";
  const Outcome outcome = run_shell(script);
  INFO(outcome.out << outcome.err);
  CHECK(outcome.exit_code == 0);
}
