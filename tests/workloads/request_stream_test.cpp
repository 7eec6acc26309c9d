// The synthetic request streams: each distribution draws what it says, the
// arrival processes have the mean and burstiness asked for, sessions add up.
#include "workloads/serving/request_stream.h"

#include <cmath>
#include <map>

#include <catch2/catch.hpp>

using namespace wafersim::workloads;

namespace {

struct Moments {
  double mean = 0, cv2 = 0;  // squared coefficient of variation
};

Moments moments(const std::vector<double>& values) {
  double sum = 0, squares = 0;
  for (double v : values) sum += v;
  const double mean = sum / double(values.size());
  for (double v : values) squares += (v - mean) * (v - mean);
  return {mean, squares / double(values.size()) / (mean * mean)};
}

ServingSpec one_class(uint64_t requests, ArrivalProcess arrival, double rate, double burstiness) {
  ServingSpec spec;
  spec.classes[0].requests = requests;
  spec.classes[0].arrival = arrival;
  spec.classes[0].rate_per_s = rate;
  spec.classes[0].burstiness = burstiness;
  spec.classes[0].prompt.tokens = 10;
  spec.classes[0].output.tokens = 5;
  return spec;
}

std::vector<double> gaps(const RequestStream& stream) {
  std::vector<double> out;
  double previous = 0;
  for (const Session& session : stream.sessions) {
    out.push_back(session.turns[0].arrival_s - previous);
    previous = session.turns[0].arrival_s;
  }
  return out;
}

}  // namespace

TEST_CASE("Poisson arrivals have the asked rate and exponential gaps; gamma ones the asked burstiness",
          "[serving][stream]") {
  const Moments poisson = moments(gaps(synthetic_stream(one_class(20000, ArrivalProcess::Poisson, 50, 4))));
  CHECK(poisson.mean == Approx(1.0 / 50).epsilon(0.03));
  CHECK(poisson.cv2 == Approx(1).epsilon(0.05));
  const Moments gamma = moments(gaps(synthetic_stream(one_class(20000, ArrivalProcess::Gamma, 50, 4))));
  CHECK(gamma.mean == Approx(1.0 / 50).epsilon(0.05));
  CHECK(gamma.cv2 == Approx(4).epsilon(0.15));
  const Moments smooth = moments(gaps(synthetic_stream(one_class(20000, ArrivalProcess::Gamma, 50, 0.25))));
  CHECK(smooth.cv2 == Approx(0.25).epsilon(0.1));
}

TEST_CASE("length distributions draw within their bounds with the asked mean or weights", "[serving][stream]") {
  StreamRandom random(7);
  LengthSpec uniform{LengthDistribution::Uniform, 0, 10, 20, 0.5, {}, {}};
  std::map<uint64_t, int> seen;
  for (int i = 0; i < 20000; ++i) seen[random.length(uniform)]++;
  CHECK(seen.begin()->first == 10);
  CHECK(seen.rbegin()->first == 20);
  CHECK(seen.size() == 11);
  LengthSpec lognormal{LengthDistribution::Lognormal, 500, 1, 1000000, 0.6, {}, {}};
  std::vector<double> drawn;
  for (int i = 0; i < 40000; ++i) drawn.push_back(double(random.length(lognormal)));
  CHECK(moments(drawn).mean == Approx(500).epsilon(0.03));
  CHECK(moments(drawn).cv2 == Approx(std::exp(0.36) - 1).epsilon(0.1));  // lognormal: e^(sigma^2) - 1
  LengthSpec histogram{LengthDistribution::Histogram, 0, 1, 1, 0.5, {8, 64, 512}, {1, 0, 3}};
  std::map<uint64_t, int> bins;
  for (int i = 0; i < 40000; ++i) bins[random.length(histogram)]++;
  CHECK(bins.count(64) == 0);
  CHECK(double(bins[512]) / double(bins[8]) == Approx(3).epsilon(0.05));
}

TEST_CASE("sessions carry exactly the asked number of turns, the later ones sent after a think time",
          "[serving][stream]") {
  ServingSpec spec = one_class(23, ArrivalProcess::Poisson, 5, 4);
  spec.classes[0].turns = 5;
  spec.classes[1] = spec.classes[0];
  spec.classes[1].requests = 7;
  const RequestStream stream = synthetic_stream(spec);
  CHECK(stream.turns() == 30);
  CHECK(stream.sessions.size() == 5 + 2);  // 23 = 4 x 5 + 3, 7 = 5 + 2
  for (size_t i = 0; i < stream.sessions.size(); ++i) {
    const Session& session = stream.sessions[i];
    CHECK(session.turns[0].arrival_s >= 0);
    if (i > 0) CHECK(session.turns[0].arrival_s >= stream.sessions[i - 1].turns[0].arrival_s);
    for (size_t t = 1; t < session.turns.size(); ++t) CHECK(session.turns[t].arrival_s < 0);
  }
  // Adding the background class leaves the real-time stream as it was.
  ServingSpec alone = spec;
  alone.classes[1].requests = 0;
  std::vector<double> with, without;
  for (const Session& s : stream.sessions)
    if (s.request_class == RequestClass::Realtime) with.push_back(s.turns[0].arrival_s);
  for (const Session& s : synthetic_stream(alone).sessions) without.push_back(s.turns[0].arrival_s);
  CHECK(with == without);
}
