// The peer guard of the benchmarks: a peer's run that returns is passed through, one that
// exceeds its memory or time limit, crashes or throws is reported so, and the caller goes on.
#include "bench/peer_guard.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ncpkit::bench {
namespace {

TEST_CASE("peer guard: a run within its limits returns its numbers") {
  const GuardedResult result = RunGuarded(
      [] {
        return std::vector<double>{1.5, -2.0, 3e300};
      },
      PeerLimits{1024, 30.0});
  REQUIRE(result.ok);
  CHECK(result.values == std::vector<double>{1.5, -2.0, 3e300});
}

TEST_CASE("peer guard: a run over its time limit is stopped and reported") {
  const auto start = std::chrono::steady_clock::now();
  const GuardedResult result = RunGuarded(
      [] {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return std::vector<double>{1.0};
      },
      PeerLimits{1024, 0.5});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_FALSE(result.ok);
  CHECK(result.why.find("over its time limit") != std::string::npos);
  CHECK(seconds < 10.0);
}

TEST_CASE("peer guard: a run over its memory limit is reported, not fatal") {
  if (!GuardLimitsMemory()) return;  // AddressSanitizer: time limits only
  const GuardedResult result = RunGuarded(
      [] {
        std::vector<std::vector<char>> blocks;
        for (int k = 0; k < 64; ++k) blocks.emplace_back(size_t{64} << 20, 'x');  // 4 GB
        return std::vector<double>{static_cast<double>(blocks.size())};
      },
      PeerLimits{256, 60.0});
  CHECK_FALSE(result.ok);
  CHECK(result.why.find("over its memory limit") != std::string::npos);
}

TEST_CASE("peer guard: a crash and an exception are reported with what happened") {
  const GuardedResult crashed = RunGuarded(
      []() -> std::vector<double> {
        std::abort();
        return {};
      },
      PeerLimits{1024, 30.0});
  CHECK_FALSE(crashed.ok);
  CHECK(crashed.why.find("signal 6") != std::string::npos);
  const GuardedResult threw = RunGuarded(
      []() -> std::vector<double> { throw std::runtime_error("mujoco warned: bad qacc"); },
      PeerLimits{1024, 30.0});
  CHECK_FALSE(threw.ok);
  CHECK(threw.why == "mujoco warned: bad qacc");
}

}  // namespace
}  // namespace ncpkit::bench
