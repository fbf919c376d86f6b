#include "solvers/mcp/ncp_functions.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "solvers/base/constants.h"

namespace ncpkit {
namespace {

// phi_lambda and its partial derivatives.
void Pair(NcpFunction function, double lambda, double a, double b, double* phi, double* da,
          double* db) {
  FischerBurmeisterPair(a, b, phi, da, db);
  if (function != NcpFunction::PenalizedFischerBurmeister) return;
  const double ap = std::max(a, 0.0), bp = std::max(b, 0.0);
  *phi = lambda * *phi + (1.0 - lambda) * ap * bp;
  *da = lambda * *da + (1.0 - lambda) * (a > 0.0 ? bp : 0.0);
  *db = lambda * *db + (1.0 - lambda) * (b > 0.0 ? ap : 0.0);
}

}  // namespace

void FischerBurmeisterPair(double a, double b, double* phi, double* da, double* db) {
  const double r = std::hypot(a, b);
  if (r == 0.0) {
    *phi = 0.0;
    *da = *db = 1.0 - 1.0 / std::sqrt(2.0);
    return;
  }
  // a + b - r = 2ab / (a + b + r) when a + b > 0 (no cancellation).
  *phi = (a + b > 0.0) ? 2.0 * a * b / (a + b + r) : a + b - r;
  *da = 1.0 - a / r;
  *db = 1.0 - b / r;
}

NcpComponent EvaluateNcpComponent(NcpFunction function, double lambda, double z, double F, double l,
                                  double u) {
  NcpComponent c;
  if (l == u) {
    c.phi = z - l;
    c.da = 1.0;
    return c;
  }
  if (function == NcpFunction::MinMap) {
    const double x = z - F;
    if (x <= l) {
      c.phi = z - l;
      c.da = 1.0;
    } else if (x >= u) {
      c.phi = z - u;
      c.da = 1.0;
    } else {
      c.phi = F;
      c.db = 1.0;
    }
    return c;
  }
  const bool has_l = l > -kInf, has_u = u < kInf;
  if (!has_l && !has_u) {
    c.phi = F;
    c.db = 1.0;
  } else if (has_l && !has_u) {
    Pair(function, lambda, z - l, F, &c.phi, &c.da, &c.db);
  } else if (!has_l && has_u) {
    double phi, pa, pb;
    Pair(function, lambda, u - z, -F, &phi, &pa, &pb);
    c.phi = -phi;
    c.da = pa;
    c.db = pb;
  } else {
    double psi, sa, sb, phi, pa, pb;
    Pair(function, lambda, u - z, -F, &psi, &sa, &sb);
    Pair(function, lambda, z - l, -psi, &phi, &pa, &pb);
    c.phi = phi;
    c.da = pa + pb * sa;
    c.db = pb * sb;
  }
  return c;
}

}  // namespace ncpkit
