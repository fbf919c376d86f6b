// The hand-written derivatives of the NCP functions against ceres::Jet, away from kinks.
#include "solvers/mcp/ncp_functions.h"

#include <ceres/jet.h>
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "solvers/base/constants.h"

namespace ncpkit {
namespace {

using Jet2 = ceres::Jet<double, 2>;

Jet2 Fb(Jet2 a, Jet2 b) { return a + b - sqrt(a * a + b * b); }
Jet2 PenalizedFb(Jet2 a, Jet2 b, double lambda) {
  using std::max;
  const Jet2 zero(0.0);
  return lambda * Fb(a, b) + (1.0 - lambda) * max(a, zero) * max(b, zero);
}
// The Billups box forms of ncp_functions.h, written directly with Jets.
Jet2 Reference(NcpFunction f, double lambda, Jet2 z, Jet2 F, double l, double u) {
  auto pair = [&](Jet2 a, Jet2 b) {
    return f == NcpFunction::PenalizedFischerBurmeister ? PenalizedFb(a, b, lambda) : Fb(a, b);
  };
  if (l > -kInf && u == kInf) return pair(z - l, F);
  if (l == -kInf && u < kInf) return -pair(u - z, -F);
  if (l == -kInf && u == kInf) return F;
  return pair(z - l, -pair(u - z, -F));
}

TEST_CASE("FB and penalized FB derivatives equal Jet derivatives away from kinks") {
  const double bounds[][2] = {{0, kInf}, {-1, kInf}, {-kInf, 2}, {-1, 2}, {-kInf, kInf}};
  const double points[][2] = {{0.3, 0.7}, {1.5, -0.4}, {-0.5, 2.0}, {0.9, 3.0}, {-2.0, -1.0}};
  for (NcpFunction f : {NcpFunction::FischerBurmeister, NcpFunction::PenalizedFischerBurmeister}) {
    for (const auto& b : bounds) {
      for (const auto& p : points) {
        CAPTURE(b[0]);
        CAPTURE(b[1]);
        CAPTURE(p[0]);
        CAPTURE(p[1]);
        const NcpComponent c = EvaluateNcpComponent(f, 0.8, p[0], p[1], b[0], b[1]);
        const Jet2 r = Reference(f, 0.8, Jet2(p[0], 0), Jet2(p[1], 1), b[0], b[1]);
        CHECK(c.phi == doctest::Approx(r.a).epsilon(1e-12));
        CHECK(c.da == doctest::Approx(r.v[0]).epsilon(1e-12));
        CHECK(c.db == doctest::Approx(r.v[1]).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("the FB function is zero exactly at complementary pairs and has no cancellation") {
  double phi, da, db;
  FischerBurmeisterPair(0.0, 5.0, &phi, &da, &db);
  CHECK(phi == 0.0);
  FischerBurmeisterPair(3.0, 0.0, &phi, &da, &db);
  CHECK(phi == 0.0);
  FischerBurmeisterPair(1e8, 1e-8, &phi, &da, &db);  // a + b - r would lose every digit
  CHECK(phi == doctest::Approx(1e-8).epsilon(1e-10));
  // Degenerate point: a valid element (1 - xi, 1 - eta) with xi^2 + eta^2 <= 1, no NaN.
  FischerBurmeisterPair(0.0, 0.0, &phi, &da, &db);
  CHECK(phi == 0.0);
  CHECK(std::pow(1 - da, 2) + std::pow(1 - db, 2) <= 1.0 + 1e-15);
}

TEST_CASE("min-map is the natural residual map") {
  // z - mid(l, u, z - F).
  CHECK(EvaluateNcpComponent(NcpFunction::MinMap, 1, 0.5, 2.0, 0, 1).phi == 0.5);
  CHECK(EvaluateNcpComponent(NcpFunction::MinMap, 1, 0.5, 0.1, 0, 1).phi == doctest::Approx(0.1));
  CHECK(EvaluateNcpComponent(NcpFunction::MinMap, 1, 1.0, -3.0, 0, 1).phi == 0.0);
  const NcpComponent fixed = EvaluateNcpComponent(NcpFunction::FischerBurmeister, 1, 2, 7, 1, 1);
  CHECK(fixed.phi == 1.0);
  CHECK(fixed.da == 1.0);
  CHECK(fixed.db == 0.0);
}

}  // namespace
}  // namespace ncpkit
