// The derivative of one explicit step (integrators/step_derivative.h; docs/derivatives.md
// "Steps"). The step is
//   free velocities   nu_f = nu + h M^-1 (m g, -omega x I omega) + M^-1 u
//   contacts          rows J(s) and offsets b(s) from each contact's features at the poses
//   impulses          r from the contact model's problem in the data (M, H = J^T, f = M nu_f,
//                     w = b, mu)
//   velocities        nu+ = M^-1 (H r + f)
//   poses             x+ = x + h v+, R+ = exp(h [omega+]x) R
// and its derivative chains the local derivatives of M, f (per body) and of J, b (per contact,
// through its features: in closed form where a face meets a point, else on Jets;
// contact/contact_feature.h) with the model's sensitivity of r (ExplicitContactModel::
// Sensitivity(): the frictional contact problem's for the cone, the LCP's for the pyramid and
// relaxed models; for the soft model, which poses no problem, each contact's impulse as a
// function of its own inputs: integrators/explicit/soft_derivative.h) and the exact pose update.
// The contacts are those the step found: a change that would add or remove one is beyond a
// derivative.
#ifndef NCPKIT_INTEGRATORS_EXPLICIT_STEP_DERIVATIVE_H_
#define NCPKIT_INTEGRATORS_EXPLICIT_STEP_DERIVATIVE_H_

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "contact/contact_law.h"
#include "dynamics/body.h"
#include "integrators/explicit/model.h"
#include "integrators/explicit/soft_derivative.h"
#include "integrators/explicit/workspace.h"
#include "integrators/step_derivative.h"

namespace ncpkit {

struct ExplicitStepperOptions;

namespace internal {

// What the step leaves behind that its derivative reads (the explicit stepper's members, by
// reference for the time of the construction).
struct ExplicitStepData {
  const std::vector<Body>& bodies;               // names, masses, fixed flags
  const std::vector<RigidBodyState>& start;      // each body's state at the start of the step
  const std::vector<Vector6d>& applied;          // the step's applied impulses (or empty)
  const std::vector<ExplicitContact>& contacts;  // with their impulses
  const ExplicitWorkspace& workspace;            // mass blocks and end-of-step twists
  const ContactLawsByIndex& laws;
  const ContactLawTable& law_table;
  const ExplicitStepperOptions& options;
  const ExplicitContactModel& model;  // the model that solved the step
};

// A contact's rows and offset (ExplicitStepDerivative's kContactOutputs: rows_a and rows_b
// column-major, then w) differentiated with respect to the inputs in `active` (of
// kContactInputs: x_a, theta_a, x_b, theta_b, nu_a, nu_b, e, h; one column each, in its order):
// in closed form where a face meets a point of the other body (a vertex, a sphere's nearest
// point, an edge's crossing of the face's side) without restitution and `active` holds only
// pose inputs and h, the last (`closed_form`), else on Jets. Its test compares the two.
void ContactRowsJacobian(const ContactSetting& setting, bool described,
                         const Eigen::Matrix<double, 26, 1>& nominal,
                         const std::vector<int>& active, bool closed_form,
                         Eigen::MatrixXd* jacobian);

// The closed form of a face contact's derivative (ContactRowsJacobian's, applied without forming
// it): its product with a change `in` of the inputs and its transpose's with `y`. Throws
// std::logic_error where the closed form does not apply. For tests.
void FaceContactProducts(const ContactSetting& setting, double h, const std::vector<int>& active,
                         const Eigen::Matrix<double, 26, 1>& in,
                         const Eigen::Matrix<double, 37, 1>& y, Eigen::Matrix<double, 37, 1>* out,
                         Eigen::Matrix<double, 26, 1>* gradient);

class FaceContactChange;  // step_derivative.cc

class ExplicitStepDerivative : public StepDerivative {
 public:
  // Throws InputError for a model without a sensitivity, or if its sensitivity is refused (the
  // reason).
  explicit ExplicitStepDerivative(const ExplicitStepData& step);
  ~ExplicitStepDerivative() override;

  Eigen::VectorXd Jvp(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                      const Eigen::VectorXd& du) const override;
  Eigen::MatrixXd JvpColumns(const Eigen::MatrixXd& ds, const Eigen::MatrixXd& dp,
                             const Eigen::MatrixXd& du) const override;
  Gradient Vjp(const Eigen::VectorXd& g) const override;

 private:
  // Per moving body: d[vec(M_i), f_i] / d[theta, v, omega, m, h, u_i] (42 x 17).
  static constexpr int kBodyInputs = 17, kBodyOutputs = 42;
  // Per contact: d[rows_a, rows_b, b] / d[x_a, theta_a, x_b, theta_b, nu_a, nu_b, e, h]
  // (37 x 26), the start twists through the restitution target.
  static constexpr int kContactInputs = 26, kContactOutputs = 37;
  struct BodyTerms {
    // Declared, defined in the .cc: a vector of them is sized without zeroing its 2.4 kB each
    // (value-initialization zeroes a struct whose constructor is not user-provided).
    BodyTerms();
    int body = -1;       // index in the stepper's list
    int mass_slot = -1;  // its "<name>.mass" in p
    // The 42 x 17 Jacobian by its nonzero parts: vec(M_i) depends on theta and m alone (36 x 4,
    // those four inputs), f_i on all 17 (a trajectory's gradient keeps every step's: 2 kB a
    // body instead of 5.7).
    Eigen::Matrix<double, 36, 4> mass_jacobian;
    Eigen::Matrix<double, 6, kBodyInputs> force_jacobian;
    void Set(const Eigen::Matrix<double, kBodyOutputs, kBodyInputs>& jacobian);
    Eigen::Matrix<double, kBodyOutputs, 1> Times(
        const Eigen::Matrix<double, kBodyInputs, 1>& in) const;
    Eigen::Matrix<double, kBodyInputs, 1> TransposeTimes(
        const Eigen::Matrix<double, kBodyOutputs, 1>& y) const;
    Eigen::Matrix<double, 6, 6> inverse_mass;
    PoseUpdateTerms pose;  // at the end-of-step twist
  };
  struct ContactTerms {
    ContactTerms();                // (as BodyTerms())
    int slot_a = -1, slot_b = -1;  // the bodies' moving slots (-1: fixed)
    int mu_slot = -1, restitution_slot = -1;
    bool described = true;    // its features are known (else no pose derivative)
    std::string name;         // "a-b #k" where its features are not known (for messages)
    Matrix36 rows_a, rows_b;  // its rows of u = J nu (zero for a fixed body)
    // Where a face meets a point without restitution, its closed form in faces_ (`face`, applied
    // to each change or gradient, no Jacobian formed); else (face = -1) the Jacobian's columns
    // for the inputs that can move (in `active`'s order; the others are zero): a contact with the
    // ground has 7 of the 26, so that a step of many contacts keeps little.
    int face = -1;
    std::vector<int> active;
    Eigen::MatrixXd jacobian;
  };
  // A contact's outputs' change for a change of its inputs, and its inputs' gradient for the
  // outputs'.
  Eigen::Matrix<double, kContactOutputs, 1> ContactTimes(
      const ContactTerms& c, const Eigen::Matrix<double, kContactInputs, 1>& in) const;
  Eigen::Matrix<double, kContactInputs, 1> ContactTransposeTimes(
      const ContactTerms& c, const Eigen::Matrix<double, kContactOutputs, 1>& y) const;

  void AddParameters(const ExplicitStepData& step);
  void LinearizeBodies(const ExplicitStepData& step);
  void LinearizeContacts(const ExplicitStepData& step);
  void BuildProblem(const ExplicitStepData& step);
  // The soft model's terms of contact c, and what its derivative keeps of the step (no problem).
  void LinearizeSoftContact(const ExplicitStepData& step, int c, const ContactSetting& setting);
  void KeepSoftStep(const ExplicitStepData& step);
  // The local input vectors of a change (ds, dp, du).
  Eigen::Matrix<double, kBodyInputs, 1> BodyInput(int k, const Eigen::VectorXd& ds,
                                                  const Eigen::VectorXd& dp,
                                                  const Eigen::VectorXd& du) const;
  Eigen::Matrix<double, kContactInputs, 1> ContactInput(const ContactTerms& c,
                                                        const Eigen::VectorXd& ds,
                                                        const Eigen::VectorXd& dp) const;
  // The soft model's dr (3 per contact) and change of the anchor offsets it leaves, for a change
  // (ds, dp).
  void SoftChange(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp, Eigen::VectorXd* dr,
                  Eigen::VectorXd* d_anchor) const;
  // Adds the soft model's terms to the gradient, from the gradients with respect to r (3 per
  // contact) and to the anchor offsets it leaves (empty: zero).
  void SoftGradient(const Eigen::VectorXd& g_r, const Eigen::VectorXd& g_anchor,
                    Gradient* out) const;
  // Adds a contact's gradient with respect to its inputs' poses and twists (the first 24 of
  // `g`, ContactInput()'s order) to the state's.
  static void AddContactState(const ContactTerms& c, const double* g, Gradient* out);
  // Throws InputError for a change of ds, dp and du entries that fits none of the inputs.
  void CheckChange(Eigen::Index ds, Eigen::Index dp, Eigen::Index du) const;
  // Throws InputError if ds (null: any change of a pose) moves a body of a contact whose
  // features are not known.
  void RequireDescribed(const Eigen::VectorXd* ds) const;
  // out = H x (6 per moving body), H^T v (3 per contact), M^-1 x: written into the caller's
  // vectors or columns, sized already, so that the columns of JvpColumns allocate nothing.
  void TimesH(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> out) const;
  void TimesHTranspose(const Eigen::Ref<const Eigen::VectorXd>& v,
                       Eigen::Ref<Eigen::VectorXd> out) const;
  void TimesInverseMass(const Eigen::Ref<const Eigen::VectorXd>& x,
                        Eigen::Ref<Eigen::VectorXd> out) const;
  // The change of the problem's data for a change (ds, dp, du), in the pieces Jvp combines:
  // inner = df - dM nu+ + dH r (per body), dF = dw + dH^T nu+ (per contact), dmu, and where the
  // model reads them the changes dW of each contact's Delassus block J_c M^-1 J_c^T (9 each).
  void DataChange(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp, const Eigen::VectorXd& du,
                  Eigen::VectorXd* inner, Eigen::VectorXd* dF, Eigen::VectorXd* dmu,
                  Eigen::VectorXd* dW) const;
  // ds+ from ds, dp and d nu+ (the pose update's derivative), into `out` (state_size()).
  void PoseUpdate(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp, const Eigen::VectorXd& dnu,
                  Eigen::Ref<Eigen::VectorXd> out) const;
  // The gradient's terms through M, f (per body) and J, b, mu (per contact) from F = dL/df and
  // the gradients of the contact problem's w, mu and (or empty) Delassus blocks W
  // (docs/derivatives.md "Steps").
  void DataGradient(const Eigen::VectorXd& F, const Eigen::VectorXd& w, const Eigen::VectorXd& mu,
                    const Eigen::VectorXd& W, Gradient* out) const;

  double h_ = 0.0;
  std::vector<BodyTerms> bodies_;
  std::vector<ContactTerms> contacts_;
  // The face contacts' closed forms (ContactTerms::face), kept together: one allocation a step.
  std::vector<FaceContactChange> faces_;
  int undescribed_ = 0;  // contacts without features
  Eigen::VectorXd r_, nu_plus_;
  std::unique_ptr<ExplicitImpulseSensitivity> sensitivity_;  // null for the soft model
  // The soft model's: per contact its terms, and its coefficients' slots in p.
  std::vector<SoftContactTerms> soft_;
  int stiffness_slot_ = -1, damping_slot_ = -1;
};

}  // namespace internal
}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_EXPLICIT_STEP_DERIVATIVE_H_
