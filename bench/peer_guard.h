// Peer libraries run under limits: one peer that grows without bound (Siconos' proximal solver
// reached 24 GB on an FCLib rock pile) or never returns must fail its own benchmark, not take the
// whole comparison down. The first, untimed run of a peer benchmark goes through RunGuarded in a
// child process; the timed runs repeat only what it showed to finish within the limits.
#ifndef NCPKIT_BENCH_PEER_GUARD_H_
#define NCPKIT_BENCH_PEER_GUARD_H_

#include <functional>
#include <string>
#include <vector>

namespace ncpkit::bench {

struct PeerLimits {
  // Address space of the child (MB); NCPKIT_PEER_MEMORY_MB, default 8192: a third of a 24 GB
  // machine, and room for MuJoCo's dense constraint arena on the 200-box pile (over 4 GB of
  // address space), which it reserves whole.
  long memory_mb = 8192;
  // Wall time of the child (s); NCPKIT_PEER_TIME_LIMIT, default 120.
  double seconds = 120.0;
  static PeerLimits FromEnvironment();
};

struct GuardedResult {
  bool ok = false;
  std::string why;             // when not ok: the limit exceeded, the signal or the exception
  std::vector<double> values;  // what `work` returned, when ok
};

// Runs `work` in a forked child under `limits` and returns its numbers. A child that exceeds the
// time limit is killed; one that exceeds the memory limit fails its allocation (bad_alloc, or a
// signal from C code that does not check malloc) and is reported so. Built with AddressSanitizer
// (whose shadow memory needs the whole address space) only the time is limited.
GuardedResult RunGuarded(const std::function<std::vector<double>()>& work,
                         const PeerLimits& limits);

// Whether RunGuarded limits memory in this build (false under AddressSanitizer).
bool GuardLimitsMemory();

}  // namespace ncpkit::bench

#endif  // NCPKIT_BENCH_PEER_GUARD_H_
