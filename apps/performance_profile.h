// Dolan and Moré's performance profile of solvers over a set of problems, and an SVG figure of
// it (the figure the frictional contact community compares solvers with).
#ifndef NCPKIT_APPS_PERFORMANCE_PROFILE_H_
#define NCPKIT_APPS_PERFORMANCE_PROFILE_H_

#include <string>
#include <vector>

namespace ncpkit {

// One solver's result on one problem: its cost (seconds) counts only when it solved it.
struct ProfileResult {
  std::string problem, solver;
  double cost = 0.0;
  bool solved = false;
};

// rho_s(tau): the fraction of the problems that solver s solves within a factor tau of the
// best solver on that problem (Dolan & Moré 2002).
struct PerformanceProfile {
  std::vector<std::string> solvers;      // in first-seen order
  std::vector<double> taus;              // 1, every ratio reached, then a margin
  std::vector<std::vector<double>> rho;  // rho[s][k] at taus[k]
  int num_problems = 0;
};
PerformanceProfile ComputePerformanceProfile(const std::vector<ProfileResult>& results);

// A self-contained SVG (log2 tau axis, one step line per solver, a legend).
std::string PerformanceProfileSvg(const PerformanceProfile& profile, const std::string& title);

}  // namespace ncpkit

#endif  // NCPKIT_APPS_PERFORMANCE_PROFILE_H_
