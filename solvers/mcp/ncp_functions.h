// NCP functions and an element of their generalized Jacobian, per component.
#ifndef NCPKIT_SOLVERS_MCP_NCP_FUNCTIONS_H_
#define NCPKIT_SOLVERS_MCP_NCP_FUNCTIONS_H_

namespace ncpkit {

enum class NcpFunction {
  FischerBurmeister,           // phi(a, b) = a + b - sqrt(a^2 + b^2)
  PenalizedFischerBurmeister,  // lambda phi_FB + (1 - lambda) max(a,0) max(b,0) (Chen, Chen &
                               // Kanzow 2000)
  MinMap,                      // z - mid(l, u, z - F): the natural residual map
};

// Phi_i(z_i, F_i) for bounds [l, u] and its derivative dPhi = da dz_i + db dF_i.
// Fischer-Burmeister variants use the box form of Billups (1995):
//   lower only: phi(z - l, F);  upper only: -phi(u - z, -F);
//   both:       phi(z - l, -phi(u - z, -F));  free: F;  fixed (l = u): z - l.
// At the kink a = b = 0 the element da = db = 1 - 1/sqrt(2) of the generalized Jacobian is
// used (any (1 - xi, 1 - eta) with xi^2 + eta^2 <= 1 is valid).
struct NcpComponent {
  double phi = 0.0, da = 0.0, db = 0.0;
};
NcpComponent EvaluateNcpComponent(NcpFunction function, double lambda, double z, double F, double l,
                                  double u);

// The scalar Fischer-Burmeister pair, computed without cancellation: phi, dphi/da, dphi/db.
void FischerBurmeisterPair(double a, double b, double* phi, double* da, double* db);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_MCP_NCP_FUNCTIONS_H_
