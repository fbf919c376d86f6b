#include "apps/performance_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "solvers/base/constants.h"

namespace ncpkit {
namespace {

std::string Escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2f", x);
  return buffer;
}

}  // namespace

PerformanceProfile ComputePerformanceProfile(const std::vector<ProfileResult>& results) {
  PerformanceProfile profile;
  std::vector<std::string> problems;
  for (const ProfileResult& r : results) {
    if (std::find(profile.solvers.begin(), profile.solvers.end(), r.solver) ==
        profile.solvers.end()) {
      profile.solvers.push_back(r.solver);
    }
    if (std::find(problems.begin(), problems.end(), r.problem) == problems.end()) {
      problems.push_back(r.problem);
    }
  }
  profile.num_problems = static_cast<int>(problems.size());
  std::map<std::pair<std::string, std::string>, double> cost;
  for (const ProfileResult& r : results) {
    const double value = r.solved && r.cost > 0.0 && std::isfinite(r.cost) ? r.cost : kInf;
    auto key = std::make_pair(r.problem, r.solver);
    cost[key] = cost.count(key) ? std::min(cost[key], value) : value;
  }
  const auto cost_of = [&](const std::string& p, const std::string& s) {
    const auto it = cost.find({p, s});
    return it == cost.end() ? kInf : it->second;
  };
  std::vector<std::vector<double>> ratios(profile.solvers.size());
  std::set<double> taus = {1.0};
  for (const std::string& p : problems) {
    double best = kInf;
    for (const std::string& s : profile.solvers) best = std::min(best, cost_of(p, s));
    for (size_t k = 0; k < profile.solvers.size(); ++k) {
      const double ratio = std::isfinite(best) ? cost_of(p, profile.solvers[k]) / best : kInf;
      ratios[k].push_back(ratio);
      if (std::isfinite(ratio)) taus.insert(ratio);
    }
  }
  const double top = *taus.rbegin();
  taus.insert(std::max(2.0, 1.25 * top));
  profile.taus.assign(taus.begin(), taus.end());
  for (const std::vector<double>& solver_ratios : ratios) {
    std::vector<double> rho;
    for (const double tau : profile.taus) {
      const double count =
          static_cast<double>(std::count_if(solver_ratios.begin(), solver_ratios.end(),
                                            [tau](double ratio) { return ratio <= tau; }));
      rho.push_back(problems.empty() ? 0.0 : count / problems.size());
    }
    profile.rho.push_back(rho);
  }
  return profile;
}

std::string PerformanceProfileSvg(const PerformanceProfile& profile, const std::string& title) {
  static const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                        "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  const double width = 720, height = 440, left = 70, right = 170, top = 40, bottom = 60;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const double max_log = std::max(1.0, std::log2(profile.taus.empty() ? 2.0 : profile.taus.back()));
  const auto x_of = [&](double tau) { return left + plot_w * std::log2(tau) / max_log; };
  const auto y_of = [&](double rho) { return top + plot_h * (1.0 - rho); };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left + plot_w / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">"
      << Escape(title) << "</text>\n";
  // Axes, grid and ticks: powers of two along tau, tenths along rho.
  for (int k = 0; k <= static_cast<int>(std::ceil(max_log)); ++k) {
    const double x = left + plot_w * k / max_log;
    if (x > left + plot_w + 0.5) break;
    svg << "<line x1=\"" << Number(x) << "\" y1=\"" << top << "\" x2=\"" << Number(x) << "\" y2=\""
        << top + plot_h << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << Number(x) << "\" y=\"" << top + plot_h + 18
        << "\" text-anchor=\"middle\">" << (1 << std::min(k, 30)) << "</text>\n";
  }
  for (int k = 0; k <= 10; k += 2) {
    const double y = y_of(k / 10.0);
    svg << "<line x1=\"" << left << "\" y1=\"" << Number(y) << "\" x2=\"" << left + plot_w
        << "\" y2=\"" << Number(y) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << left - 8 << "\" y=\"" << Number(y + 4) << "\" text-anchor=\"end\">"
        << Number(k / 10.0) << "</text>\n";
  }
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
      << plot_h << "\" fill=\"none\" stroke=\"black\"/>\n"
      << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 18
      << "\" text-anchor=\"middle\">τ: within a factor τ of the fastest solver (log scale)</text>\n"
      << "<text transform=\"translate(18 " << top + plot_h / 2
      << ") rotate(-90)\" text-anchor=\"middle\">fraction of the " << profile.num_problems
      << " problems solved</text>\n";
  for (size_t s = 0; s < profile.solvers.size(); ++s) {
    const char* color = kColors[s % (sizeof(kColors) / sizeof(kColors[0]))];
    std::ostringstream points;
    double previous = profile.rho[s].empty() ? 0.0 : profile.rho[s][0];
    points << Number(x_of(1.0)) << "," << Number(y_of(previous));
    for (size_t k = 1; k < profile.taus.size(); ++k) {
      const double x = x_of(profile.taus[k]);
      points << " " << Number(x) << "," << Number(y_of(previous)) << " " << Number(x) << ","
             << Number(y_of(profile.rho[s][k]));
      previous = profile.rho[s][k];
    }
    svg << "<polyline class=\"solver\" data-solver=\"" << Escape(profile.solvers[s])
        << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\""
        << points.str() << "\"/>\n";
    const double y = top + 10 + 20 * s;
    svg << "<line x1=\"" << left + plot_w + 12 << "\" y1=\"" << y << "\" x2=\""
        << left + plot_w + 36 << "\" y2=\"" << y << "\" stroke=\"" << color
        << "\" stroke-width=\"2\"/>\n"
        << "<text x=\"" << left + plot_w + 42 << "\" y=\"" << y + 4 << "\">"
        << Escape(profile.solvers[s]) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace ncpkit
