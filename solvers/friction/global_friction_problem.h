// The 3D frictional contact problem in FCLib's global form (../shared/data/fclib/FORMAT.md §2)
// with a block-diagonal M, the form a multibody time step takes before W is formed:
//
//   M v = H r + f,   u = H^T v + w,   K*_mu ∋ u + mu ||u_T|| e_N  ⊥  r ∈ K_mu  (every contact),
//
// v the n velocities (here: the end-of-step twists of the bodies), r and u as in the local form
// (friction_problem.h). Eliminating v gives the local problem FC(W, q, mu) with W = H^T M^-1 H
// and q = H^T M^-1 f + w; the two have the same solutions r and the same error measure (the
// FCLib error of the local problem: ||F_nat(r)|| / (1 + ||q||)), so global and local solvers
// compare on one figure.
//
// M is block diagonal: square symmetric positive definite blocks of at most kMaxBlockSize rows
// (a rigid body's 6 x 6 mass matrix, a particle's 3 x 3, ...). Each contact's columns of H are
// given by the blocks they touch (a contact between two bodies touches two). Solvers that keep v
// instead of u (nsgs-velocity) never form W: a sweep costs the nonzeros of H, not those of W,
// which grow with the square of the contacts per body.
#ifndef NCPKIT_SOLVERS_FRICTION_GLOBAL_FRICTION_PROBLEM_H_
#define NCPKIT_SOLVERS_FRICTION_GLOBAL_FRICTION_PROBLEM_H_

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <string>
#include <vector>

#include "solvers/friction/friction_problem.h"

namespace ncpkit {

class GlobalFrictionContactProblem {
 public:
  static constexpr int kMaxBlockSize = 64;

  GlobalFrictionContactProblem() = default;  // no degrees of freedom, no contacts
  // From sparse matrices (n x n M, n x 3 n_c H): M's diagonal blocks are found from its
  // pattern. Throws InputError for mismatched sizes, non-finite values, mu < 0, an M that is not
  // block diagonal with blocks of at most kMaxBlockSize rows, or a block that is not symmetric
  // positive definite.
  GlobalFrictionContactProblem(const Eigen::SparseMatrix<double>& M,
                               const Eigen::SparseMatrix<double>& H, const Eigen::VectorXd& f,
                               const Eigen::VectorXd& w, const Eigen::VectorXd& mu);

  // Building in place, as a time-stepper does once per step (storage is reused: a problem no
  // larger than the last allocates nothing): Clear(), AddBlock() for every block of M, then per
  // contact AddContact() followed by AddContactBlock() for each block its columns of H touch;
  // Finalize() validates and factorizes. Using an unfinalized problem is a broken contract.
  void Clear();
  // Storage for num_blocks blocks of block_size rows and num_contacts contacts that touch two
  // blocks each, reserved at once: a problem built once (not reused from step to step) then
  // fills its arrays without growing them.
  void Reserve(int num_blocks, int num_contacts, int block_size);
  // Appends a diagonal block of M (b x b, 1 <= b <= kMaxBlockSize) and its b entries of f;
  // returns its index. Finalize() inverts the block by its Cholesky factorization.
  int AddBlock(const Eigen::Ref<const Eigen::MatrixXd>& mass,
               const Eigen::Ref<const Eigen::VectorXd>& f);
  // The same with the block's inverse as the caller knows it (a rigid body's diag(1/m,
  // R I^-1 R^T) is exact where a factorization rounds); Finalize() checks that
  // ||M_k M_k^-1 - I||_max <= 1e-12 b ||M_k||_max ||M_k^-1||_max and still that M_k is
  // positive definite.
  int AddBlock(const Eigen::Ref<const Eigen::MatrixXd>& mass,
               const Eigen::Ref<const Eigen::MatrixXd>& inverse,
               const Eigen::Ref<const Eigen::VectorXd>& f);
  // Appends a contact with its friction coefficient and its three entries of w.
  void AddContact(double mu, const Eigen::Vector3d& w);
  // The rows of the latest contact's three columns of H that lie in `block` (b x 3).
  void AddContactBlock(int block, const Eigen::Ref<const Eigen::MatrixXd>& H_rows);
  // Checks sizes, finiteness, mu >= 0, each block symmetric (to 1e-12 relative) and positive
  // definite, no block named twice by one contact; throws InputError naming the entry. Then
  // inverts the blocks and computes ||q|| of the local form.
  void Finalize();

  int num_contacts() const { return static_cast<int>(mu_.size()); }
  int size() const { return 3 * num_contacts(); }  // 3 n_c
  int num_dofs() const {
    return static_cast<int>(block_offset_.empty() ? 0 : block_offset_.back());
  }
  int num_blocks() const { return static_cast<int>(block_offset_.size()) - 1; }
  int block_offset(int k) const { return block_offset_[k]; }
  int block_size(int k) const { return block_offset_[k + 1] - block_offset_[k]; }
  // M_k^-1 (b x b, column-major), after Finalize().
  Eigen::Map<const Eigen::MatrixXd> InverseMass(int k) const;
  // The pieces of H of contact c: [piece_begin(c), piece_begin(c + 1)).
  int piece_begin(int c) const { return piece_begin_[c]; }
  int piece_block(int p) const { return piece_block_[p]; }
  // H's rows of piece p (b x 3, column-major; b = block_size(piece_block(p))).
  Eigen::Map<const Eigen::MatrixXd> PieceRows(int p) const;
  const double* piece_data(int p) const { return piece_values_.data() + piece_offset_[p]; }
  const double* inverse_mass_data(int k) const { return inverse_mass_.data() + mass_offset_[k]; }
  const double* mass_data(int k) const { return mass_.data() + mass_offset_[k]; }  // M_k
  const Eigen::VectorXd& f() const { return f_; }
  const Eigen::VectorXd& w() const { return w_; }
  const Eigen::VectorXd& mu() const { return mu_; }
  // ||q|| of the local form, q = H^T M^-1 f + w: the FCLib error's normalization.
  double local_q_norm() const { return local_q_norm_; }
  // q = H^T M^-1 f + w, the local form's (after Finalize()).
  const Eigen::VectorXd& local_q() const { return q_; }
  // M^-1 f: the velocities without reactions (after Finalize()).
  const Eigen::VectorXd& free_velocity() const { return free_velocity_; }

  // v = M^-1 (H r + f) (r empty: r = 0).
  void Velocity(const Eigen::VectorXd& r, Eigen::VectorXd* v) const;
  // u = H^T v + w.
  void ContactVelocity(const Eigen::VectorXd& v, Eigen::VectorXd* u) const;
  // The local form FC(W, q, mu), W = H^T M^-1 H, q = H^T M^-1 f + w, into *local (the
  // workspace's storage reused from one call to the next).
  void Reduce(FrictionContactProblem* local) const;
  // W = H^T M^-1 H alone, in compressed column storage (a matrix of its own: what a sensitivity
  // keeps, without the local form's row-major copy and checks).
  Eigen::SparseMatrix<double> Delassus() const;

  std::string name;  // for reports; not validated

 private:
  // AddBlock()'s checks, and the block's values and offsets but its inverse; returns its index.
  int AppendBlock(const Eigen::Ref<const Eigen::MatrixXd>& mass,
                  const Eigen::Ref<const Eigen::VectorXd>& f);
  // Finalize()'s checks, each throwing InputError with the entry it names.
  bool ContactsPass() const;             // ValidateContacts' checks at once: true if all pass
  void ValidateContacts() const;         // mu, w, no block named twice by a contact
  void ValidateRowsAndForces() const;    // H's pieces and f finite
  void FinalizeMassBlock(int k);         // M_k finite, symmetric, positive definite; M_k^-1
  std::vector<int> block_offset_ = {0};  // block k: rows [offset[k], offset[k + 1])
  std::vector<int> mass_offset_ = {0};   // into mass_: block k's b x b values
  std::vector<double> mass_, inverse_mass_;
  std::vector<char> inverse_given_;     // per block
  std::vector<int> piece_begin_ = {0};  // per contact, into the piece arrays
  std::vector<int> piece_block_, piece_offset_;
  std::vector<double> piece_values_;  // each piece b x 3, column-major
  Eigen::VectorXd f_, w_, mu_;
  std::vector<double> f_values_, w_values_, mu_values_;  // while building
  double local_q_norm_ = 0.0;
  Eigen::VectorXd free_velocity_, q_;  // M^-1 f and the local form's q, from Finalize()
  bool finalized_ = true;
  // Reduce()'s and Delassus()' workspace.
  mutable std::vector<std::vector<int>> pieces_of_block_;
  mutable std::vector<double> products_;  // M_k^-1 H_p per piece
  mutable Eigen::SparseMatrix<double> W_;
  mutable std::vector<int> contact_of_;  // per piece
  // Per contact its neighbours' range in neighbours_ (AssembleW()), and a neighbour's place in
  // the list of the contact being assembled.
  mutable std::vector<int> neighbour_begin_, neighbours_, position_;
  // The pieces' products M_k^-1 H_p and the lists AssembleW() reads.
  void PrepareReduction() const;
  // W = H^T M^-1 H into *W from the pieces' products.
  void AssembleW(Eigen::SparseMatrix<double>* W) const;
};

namespace internal {

// Kernels on a piece (b x 3, column-major) and its block's b entries of a vector; rigid
// bodies' 6-row blocks take fixed-size paths.
// u += H^T v.
inline void AddPieceTransposeProduct(const double* H, int b, const double* v, Eigen::Vector3d* u) {
  if (b == 6) {
    u->noalias() += Eigen::Map<const Eigen::Matrix<double, 6, 3>>(H).transpose() *
                    Eigen::Map<const Eigen::Matrix<double, 6, 1>>(v);
  } else {
    u->noalias() += Eigen::Map<const Eigen::MatrixXd>(H, b, 3).transpose() *
                    Eigen::Map<const Eigen::VectorXd>(v, b);
  }
}
// v += H d.
inline void AddPieceProduct(const double* H, int b, const Eigen::Vector3d& d, double* v) {
  if (b == 6) {
    Eigen::Map<Eigen::Matrix<double, 6, 1>>(v).noalias() +=
        Eigen::Map<const Eigen::Matrix<double, 6, 3>>(H) * d;
  } else {
    Eigen::Map<Eigen::VectorXd>(v, b).noalias() += Eigen::Map<const Eigen::MatrixXd>(H, b, 3) * d;
  }
}
// out = A H for a block's b x b matrix A.
inline void PieceLeftProduct(const double* A, const double* H, int b, double* out) {
  if (b == 6) {
    Eigen::Map<Eigen::Matrix<double, 6, 3>>(out).noalias() =
        Eigen::Map<const Eigen::Matrix<double, 6, 6>>(A) *
        Eigen::Map<const Eigen::Matrix<double, 6, 3>>(H);
  } else {
    Eigen::Map<Eigen::MatrixXd>(out, b, 3).noalias() =
        Eigen::Map<const Eigen::MatrixXd>(A, b, b) * Eigen::Map<const Eigen::MatrixXd>(H, b, 3);
  }
}
// X^T Y for two pieces of one block.
inline Eigen::Matrix3d PieceInnerProduct(const double* X, const double* Y, int b) {
  if (b == 6) {
    return Eigen::Map<const Eigen::Matrix<double, 6, 3>>(X).transpose() *
           Eigen::Map<const Eigen::Matrix<double, 6, 3>>(Y);
  }
  return Eigen::Map<const Eigen::MatrixXd>(X, b, 3).transpose() *
         Eigen::Map<const Eigen::MatrixXd>(Y, b, 3);
}

}  // namespace internal

// The error measures of a point r (friction_problem.h's, of the local form).
FrictionErrors ComputeFrictionErrors(const GlobalFrictionContactProblem& problem,
                                     const Eigen::VectorXd& r);
// The same with u = H^T v + w for v = M^-1 (H r + f) already in `u`.
FrictionErrors ComputeFrictionErrors(const GlobalFrictionContactProblem& problem,
                                     const Eigen::VectorXd& r, const Eigen::VectorXd& u);
// Counts the contact states of r and sets the two errors (DescribeFrictionPoint of the local
// form), u as above.
void DescribeFrictionPoint(const GlobalFrictionContactProblem& problem, const Eigen::VectorXd& r,
                           const Eigen::VectorXd& u, FrictionSolverSummary* summary);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_FRICTION_GLOBAL_FRICTION_PROBLEM_H_
