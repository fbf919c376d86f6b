// Geometrically explicit, linearized contact for the quasistatic steppers (Trinkle, Berard & Pang
// 2005 eq. 20, Pang & Tedrake 2021 eqs. 1 and 7): contact points at the start of the step
// (distance.h), their friction frames, and the rows of every friction model in the step's
// displacement delta:
//   normal gap        phi + n . (displacement of B's point - A's)                 >= 0
//   DQC cone          (Trinkle, Berard & Pang 2005 eqs. 21-23) quadratic friction cone, slip sigma
//   DLC pyramid       (Trinkle, Berard & Pang 2005 eqs. 24-26) n_d friction directions d_j, slack
//   sigma Anitescu's cone   (Pang & Tedrake 2021 eq. 7) one row per direction, n + mu d_j
// Each row is u . (displacement of B's point - A's) with the body motions of a
// QuasistaticBalance (dynamics/quasistatic_balance.h): a sparse row in delta and a constant.
#ifndef NCPKIT_CONTACT_LINEARIZED_CONTACT_H_
#define NCPKIT_CONTACT_LINEARIZED_CONTACT_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <utility>
#include <vector>

#include "contact/distance.h"
#include "dynamics/body.h"
#include "dynamics/quasistatic_balance.h"
#include "solvers/linalg/internal/sparse_assembly.h"

namespace ncpkit {

using RowMajorSparse = Eigen::SparseMatrix<double, Eigen::RowMajor>;

// One contact point of a step with its friction frame: normal n (from A to B), tangents t and
// o, and the pyramid's directions (empty: frictionless).
struct LinearizedContact {
  int a = -1, b = -1;
  ContactPoint geometry;
  double mu = 0.0;
  Eigen::Vector3d t = Eigen::Vector3d::Zero(), o = Eigen::Vector3d::Zero();
  int num_tangents = 0;                     // DQC: 0 (frictionless), 1 (planar) or 2
  std::vector<Eigen::Vector3d> directions;  // DLC / Anitescu: d_j (empty: frictionless)
};

// Sets t, o and the directions of a contact: planar (plane_normal != 0 and n not along it):
// t = plane_normal x n, directions +-t; else t from the world axis least aligned with n and
// n_d directions at equal angles in the (t, o) plane.
void SetFrictionFrame(const Eigen::Vector3d& plane_normal, int friction_directions,
                      LinearizedContact* contact);

// Pang & Tedrake's (2021) contact selection A(q, eps): every point closer than `threshold` of every
// pair that has an unknown displacement, no two actuated bodies (no robot self-contact), no two
// fixed ones. `friction`: mu per ordered pair (a * n + b). Replaces *contacts, reusing its
// elements (a step with as many contacts as the last allocates nothing); *points is a
// workspace.
void FindLinearizedContacts(const std::vector<Body>& bodies, const std::vector<char>& actuated,
                            const QuasistaticBalance& balance, const ContactGeometry& geometry,
                            const std::vector<double>& friction, double threshold,
                            const Eigen::Vector3d& plane_normal, int friction_directions,
                            std::vector<ContactPoint>* points,
                            std::vector<LinearizedContact>* contacts);

// Rows u . (displacement of B's point - A's) in delta, one per (contact, u), and their
// constant parts (the prescribed motion, plus phi when with the distance). The builders below
// write into a ContactRows kept from step to step: rows whose pattern did not change are
// rebuilt without allocating.
struct ContactRows {
  RowMajorSparse J;
  Eigen::VectorXd constant;
  // Workspace: the (contact, u) of every row, their triplets, the assembly into J.
  std::vector<std::pair<int, Eigen::Vector3d>> directions;
  std::vector<Eigen::Triplet<double>> triplets;
  internal::TripletAssembly<RowMajorSparse> assembly;
};
// The rows of rows->directions.
void BuildContactRows(const std::vector<LinearizedContact>& contacts,
                      const QuasistaticBalance& balance, const std::vector<Body>& bodies,
                      bool with_distance, ContactRows* rows);

// The normal gaps phi + n . (...) of every contact.
void NormalRows(const std::vector<LinearizedContact>& contacts, const QuasistaticBalance& balance,
                const std::vector<Body>& bodies, ContactRows* rows);
// The tangential displacements along t (which = 0) or o (which = 1) of every contact.
void TangentRows(const std::vector<LinearizedContact>& contacts, const QuasistaticBalance& balance,
                 const std::vector<Body>& bodies, int which, ContactRows* rows);
// The DLC pyramid's rows d_j . (...) of the frictional contacts, and per contact the index of
// its first row (-1: frictionless).
void PyramidRows(const std::vector<LinearizedContact>& contacts, const QuasistaticBalance& balance,
                 const std::vector<Body>& bodies, std::vector<int>* first, ContactRows* rows);
// Anitescu's rows (n + mu d_j) . (...) with phi, one per direction (frictionless: n only), and
// per contact the index of its first row.
void AnitescuRows(const std::vector<LinearizedContact>& contacts, const QuasistaticBalance& balance,
                  const std::vector<Body>& bodies, std::vector<int>* first, ContactRows* rows);

// The DQC cone rows of one contact (Trinkle, Berard & Pang 2005 eqs. 21-23) at the normal force ln,
// tangential forces lt, lo, slip sigma and tangential displacements gt, go:
//   F_t = mu ln gt + lt sigma,  F_o = mu ln go + lo sigma,  F_sigma = mu^2 ln^2 - lt^2 - lo^2.
// Planar contacts have no o (lo = go = 0).
struct DqcConeRows {
  double t = 0.0, o = 0.0, sigma = 0.0;
};
DqcConeRows DqcCone(double mu, double ln, double lt, double lo, double sigma, double gt, double go);
// Its derivatives with respect to (ln, lt, lo, sigma); the ones with respect to delta are
// mu ln times the t and o rows.
struct DqcConeJacobian {
  double t_ln = 0.0, t_lt = 0.0, t_sigma = 0.0;
  double o_ln = 0.0, o_lo = 0.0, o_sigma = 0.0;
  double sigma_ln = 0.0, sigma_lt = 0.0, sigma_lo = 0.0;
};
DqcConeJacobian DqcConeDerivatives(double mu, double ln, double lt, double lo, double sigma,
                                   double gt, double go);

// The DLC pyramid's slack rows (Trinkle, Berard & Pang 2005 eq. 26) of contact i as triplets:
// sigma_i enters every direction row (+1 at (row_offset + first + j, slack)), and the slack row mu
// c_n - sum_j c_j (-1 at (slack, force_offset + first + j), mu at (slack, normal)).
void AddPyramidSlack(const LinearizedContact& contact, int first, int row_offset, int slack,
                     int normal, std::vector<Eigen::Triplet<double>>* triplets);

}  // namespace ncpkit

#endif  // NCPKIT_CONTACT_LINEARIZED_CONTACT_H_
