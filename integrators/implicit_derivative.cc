#include "integrators/implicit_derivative.h"

#include <ceres/jet.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "contact/implicit_pair.h"
#include "integrators/internal/pose_jets.h"
#include "solvers/base/input_error.h"

namespace ncpkit::internal {
namespace {

// The layer's parameters in a pair's inputs, after x_f, theta_f, x_g, theta_g, h and mu.
constexpr int kFirstLayerInput = 14;
constexpr int kLayerParameters = 4;
constexpr const char* kLayerNames[kLayerParameters] = {
    "stiffness", "damping", "tangential_stiffness", "tangential_damping"};

// q turned by the world-frame theta: exp(theta) q, exact for the first derivatives at theta = 0.
template <class T>
void TurnedQuaternion(const Eigen::Quaterniond& q, const T* theta, T* out) {
  T dq[4];
  AxisAngleQuaternion(theta, dq);
  const T w(q.w()), x(q.x()), y(q.y()), z(q.z());
  out[0] = dq[0] * w - dq[1] * x - dq[2] * y - dq[3] * z;
  out[1] = dq[0] * x + dq[1] * w + dq[2] * z - dq[3] * y;
  out[2] = dq[0] * y - dq[1] * z + dq[2] * w + dq[3] * x;
  out[3] = dq[0] * z + dq[1] * y - dq[2] * x + dq[3] * w;
}

// The Newton-Euler residual of one body (dynamics/rigid_body.h NewtonEulerResidual, without the
// contact wrench) at its end twist nu_plus, from [theta, v, omega, m, h, u]: the start turn,
// twist, mass (the inertia scales with it, the weight m g too), h and the applied impulse.
template <class T>
void BodyResidual(const NewtonEulerStep& step, const Eigen::Vector3d& gravity,
                  const Eigen::Matrix<double, 6, 1>& nu_plus, const T* in, T* r) {
  const Vec3<T> theta(in[0], in[1], in[2]), v(in[3], in[4], in[5]), omega(in[6], in[7], in[8]);
  const T m = in[9], h = in[10];
  const Mat3<T> R = Turned(step.state.orientation.toRotationMatrix(), theta);
  const Mat3<T> inertia =
      R * (step.mass.body_inertia.cast<T>() * (m / T(step.mass.mass))) * R.transpose();
  const Vec3<T> v_plus = nu_plus.head<3>().cast<T>(), omega_plus = nu_plus.tail<3>().cast<T>();
  const Vec3<T> linear = m * (v_plus - v) - h * m * gravity.cast<T>();
  const Vec3<T> spin = inertia * omega_plus;
  const Vec3<T> angular =
      inertia * (omega_plus - omega) - h * step.torque.cast<T>() + h * omega_plus.cross(spin);
  for (int k = 0; k < 3; ++k) {
    r[k] = linear[k] - in[11 + k];
    r[3 + k] = angular[k] - in[14 + k];
  }
}

// The pair's smooth numbers as Jets, input c (in the order of ImplicitStepDerivative's pair
// inputs) seeded on dual part slot[c], or constant where slot[c] < 0.
template <class Jet>
PairNumbers<Jet> SeededNumbers(const ContactPairStep& s, const int* slot) {
  const auto seed = [slot](double value, int c) {
    return slot[c] >= 0 ? Jet(value, slot[c]) : Jet(value);
  };
  PairNumbers<Jet> d;
  d.h = seed(s.h, 12);
  const auto pose = [&seed](const RigidBodyState& state, int first, Jet* position,
                            Jet* quaternion) {
    Jet theta[3];
    for (int k = 0; k < 3; ++k) {
      position[k] = seed(state.position[k], first + k);
      theta[k] = seed(0.0, first + 3 + k);
    }
    TurnedQuaternion(state.orientation, theta, quaternion);
  };
  pose(s.state_f, 0, d.position_f, d.quaternion_f);
  pose(s.state_g, 6, d.position_g, d.quaternion_g);
  d.mu = seed(s.law.mu, 13);
  constexpr int kLayer = kFirstLayerInput;
  d.stiffness = seed(s.law.stiffness, kLayer);
  d.damping = seed(s.law.damping, kLayer + 1);
  d.tangential_stiffness = seed(s.law.tangential_stiffness, kLayer + 2);
  d.tangential_damping = seed(s.law.tangential_damping, kLayer + 3);
  d.previous_deflection = seed(s.previous_deflection, kLayer + 4);
  for (int k = 0; k < 3; ++k) d.elastic[k] = seed(s.elastic[k], kLayer + 5 + k);
  return d;
}

// The pair's rows (ImplicitContactResidual, in the order of its paired blocks [geometry, forces,
// nu_f (, nu_g)]) at the unknowns' values z (blocks at `offsets` of `sizes`), differentiated with
// respect to the inputs that can move (column[c] >= 0, their place in x) on Jets of N >= their
// number, into `entries` at rows row_at[row] that are not held.
template <int N>
void ScatterPairRows(const ContactPairStep& s, const Eigen::VectorXd& z,
                     const std::vector<int>& offsets, const std::vector<int>& sizes,
                     const int* column, int num_inputs, const std::vector<int>& row_at,
                     const std::vector<char>& held, std::vector<Eigen::Triplet<double>>* entries) {
  using Jet = ceres::Jet<double, N>;
  std::vector<std::vector<Jet>> values(offsets.size());
  std::vector<const Jet*> x(offsets.size());
  for (size_t b = 0; b < offsets.size(); ++b) {
    for (int k = 0; k < sizes[b]; ++k) values[b].push_back(Jet(z[offsets[b] + k]));
    x[b] = values[b].data();
  }
  std::vector<int> slot(num_inputs, -1), input;
  for (int c = 0; c < num_inputs; ++c) {
    if (column[c] < 0) continue;
    slot[c] = static_cast<int>(input.size());
    input.push_back(c);
  }
  const PairNumbers<Jet> d = SeededNumbers<Jet>(s, slot.data());
  std::vector<Jet> rows;
  VisitPairResidual(s, [&](auto tag) {
    using Residual = typename decltype(tag)::type;
    rows.resize(Residual::kNumResiduals);
    Residual::Evaluate(s, d, x.data(), rows.data());
  });
  for (size_t row = 0; row < rows.size(); ++row) {
    if (held[row_at[row]] != 0) continue;
    for (size_t k = 0; k < input.size(); ++k) {
      const double value = rows[row].v[static_cast<int>(k)];
      if (value != 0.0) entries->emplace_back(row_at[row], column[input[k]], value);
    }
  }
}

// J with the held rows replaced by identity rows (dz_i = 0), and F there set off the tie: +1 at
// the lower bound, -1 at the upper, 0 between.
Eigen::SparseMatrix<double> WithHeldRows(const Eigen::SparseMatrix<double>& J,
                                         const std::vector<char>& held, const Eigen::VectorXd& z,
                                         const ProblemBuilder& builder, Eigen::VectorXd* F) {
  const int n = static_cast<int>(z.size());
  bool any = false;
  for (int i = 0; i < n; ++i) {
    if (held[i] == 0) continue;
    any = true;
    double side = 0.0;
    if (z[i] <= builder.lower()[i]) side = 1.0;
    if (z[i] >= builder.upper()[i]) side = -1.0;
    (*F)[i] = side;
  }
  if (!any) return J;
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(J.nonZeros() + n);
  for (int col = 0; col < J.outerSize(); ++col) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(J, col); it; ++it) {
      if (held[it.row()] == 0) entries.emplace_back(it.row(), col, it.value());
    }
    if (held[col] != 0) entries.emplace_back(col, col, 1.0);
  }
  Eigen::SparseMatrix<double> out(n, n);
  out.setFromTriplets(entries.begin(), entries.end());
  return out;
}

}  // namespace

ImplicitMemoryLayout::ImplicitMemoryLayout(const std::vector<Body>& bodies,
                                           const ContactLawTable& table,
                                           const ContactLawsByIndex& laws) {
  const auto carries = [](const ContactLaw& law) {
    return law.compliant() && (law.damping > 0.0 || law.elastic_friction());
  };
  bool any = carries(table.default_law);
  for (const auto& entry : table.overrides()) any = any || carries(entry.second);
  if (!any) return;
  const int n = static_cast<int>(bodies.size());
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      if ((bodies[i].fixed && bodies[j].fixed) || !carries(laws.Get(i, j))) continue;
      const int f = bodies[i].fixed ? j : i, g = bodies[i].fixed ? i : j;
      index_.push_back({{f, g}, static_cast<int>(index_.size())});
      const std::string pair = bodies[f].name + "-" + bodies[g].name;
      for (const char* entry : {".deflection", ".elastic_t", ".elastic_o", ".elastic_r"}) {
        names.push_back(pair + entry);
      }
    }
  }
  std::sort(index_.begin(), index_.end());
}

int ImplicitMemoryLayout::Find(int f, int g) const {
  const auto it =
      std::lower_bound(index_.begin(), index_.end(), std::make_pair(f, g),
                       [](const std::pair<std::pair<int, int>, int>& entry,
                          const std::pair<int, int>& key) { return entry.first < key; });
  return it != index_.end() && it->first == std::make_pair(f, g) ? it->second : -1;
}

ImplicitStepDerivative::ImplicitStepDerivative(const ImplicitStepData& step) : h_(step.h) {
  entries_per_body_ = 12;
  slot_of_body_.assign(step.bodies.size(), -1);
  for (size_t i = 0; i < step.bodies.size(); ++i) {
    if (step.bodies[i].fixed) continue;
    slot_of_body_[i] = static_cast<int>(moving_bodies_.size());
    moving_bodies_.push_back(static_cast<int>(i));
  }
  command_size_ = 6 * static_cast<int>(moving_bodies_.size());
  if (step.memory != nullptr) extra_state_names_ = step.memory->names;
  bodies_.resize(moving_bodies_.size());
  AddParameters(step);
  int num_pairs = 0;
  for (const ImplicitIslandData& island : step.islands) {
    num_pairs += static_cast<int>(island.pairs.size());
  }
  contact_modes_.assign(num_pairs, 'a');
  for (const ImplicitIslandData& island : step.islands) AddIsland(step, island);
  std::sort(degenerate_contacts_.begin(), degenerate_contacts_.end());
  degenerate_contacts_.erase(std::unique(degenerate_contacts_.begin(), degenerate_contacts_.end()),
                             degenerate_contacts_.end());
}

ImplicitStepDerivative::~ImplicitStepDerivative() = default;

// "h", "mu" and, with a compliant default law, its layer's four coefficients; per override
// "mu(a,b)" (and its layer's); per moving body "<body>.mass".
void ImplicitStepDerivative::AddParameters(const ImplicitStepData& step) {
  parameter_names_ = {"h", "mu"};
  const auto add_layer = [this](const ContactLaw& law, const std::string& suffix) {
    if (!law.compliant()) return -1;
    const int first = static_cast<int>(parameter_names_.size());
    for (const char* name : kLayerNames) parameter_names_.push_back(name + suffix);
    return first;
  };
  layer_default_ = add_layer(step.law_table.default_law, "");
  for (const auto& [names, law] : step.law_table.overrides()) {
    Slots slots;
    slots.mu = static_cast<int>(parameter_names_.size());
    const std::string pair = "(" + names.first + "," + names.second + ")";
    parameter_names_.push_back("mu" + pair);
    slots.layer = add_layer(law, pair);
    override_slots_.emplace_back(names, slots);
  }
  mass_slot_.resize(moving_bodies_.size());
  for (size_t k = 0; k < moving_bodies_.size(); ++k) {
    mass_slot_[k] = static_cast<int>(parameter_names_.size());
    parameter_names_.push_back(step.bodies[moving_bodies_[k]].name + ".mass");
  }
}

ImplicitStepDerivative::Slots ImplicitStepDerivative::PairSlots(const ImplicitStepData& step, int f,
                                                                int g) const {
  const std::pair<std::string, std::string> names =
      std::minmax(step.bodies[f].name, step.bodies[g].name);
  for (const auto& [pair, slots] : override_slots_) {
    if (pair == names) return slots;
  }
  Slots slots;
  slots.layer = layer_default_;
  return slots;
}

std::string ImplicitStepDerivative::PairName(const ImplicitStepData& step,
                                             const ImplicitIslandData& data, int j) const {
  const auto [f, g] = data.pairs[j];
  return step.bodies[f].name + "-" + step.bodies[g].name + " #" +
         std::to_string(data.pair_index[j]);
}

void ImplicitStepDerivative::AddBodyRows(const ImplicitStepData& step,
                                         const ImplicitIslandData& data, int k,
                                         std::vector<Eigen::Triplet<double>>* entries) {
  using Jet = ceres::Jet<double, kBodyInputs>;
  const int slot = slot_of_body_[data.bodies[k]];
  const NewtonEulerStep& ne = *data.body_steps[k];
  const int offset = data.builder->block_offset(data.nu_block[k]);
  const Eigen::Matrix<double, 6, 1> nu_plus = data.z->segment<6>(offset);
  Jet in[kBodyInputs];
  for (int c = 0; c < 3; ++c) {
    in[c] = Jet(0.0, c);
    in[3 + c] = Jet(ne.state.linear_velocity[c], 3 + c);
    in[6 + c] = Jet(ne.state.angular_velocity[c], 6 + c);
  }
  in[9] = Jet(ne.mass.mass, 9);
  in[10] = Jet(ne.h, 10);
  for (int c = 0; c < 6; ++c) in[11 + c] = Jet(ne.applied_impulse[c], 11 + c);
  Jet r[6];
  BodyResidual(ne, step.gravity, nu_plus, in, r);
  // Input c of the body in x = [ds, dp, du].
  const int state = state_size(), parameters = parameter_size();
  int column[kBodyInputs];
  for (int c = 0; c < 9; ++c) column[c] = 12 * slot + 3 + c;
  column[9] = state + mass_slot_[slot];
  column[10] = state;
  for (int c = 0; c < 6; ++c) column[11 + c] = state + parameters + 6 * slot + c;
  for (int row = 0; row < 6; ++row) {
    for (int c = 0; c < kBodyInputs; ++c) {
      if (r[row].v[c] != 0.0) entries->emplace_back(offset + row, column[c], r[row].v[c]);
    }
  }
  bodies_[slot].Linearize(nu_plus, h_);
}

void ImplicitStepDerivative::PairColumns(const ImplicitStepData& step,
                                         const ImplicitIslandData& data, int j, int* column) const {
  const auto [f, g] = data.pairs[j];
  const Slots slots = PairSlots(step, f, g);
  const int state = state_size();
  const int slot_f = slot_of_body_[f], slot_g = data.pair_steps[j]->g_moves ? slot_of_body_[g] : -1;
  for (int c = 0; c < 6; ++c) {
    column[c] = 12 * slot_f + c;
    column[6 + c] = slot_g >= 0 ? 12 * slot_g + c : -1;
  }
  column[12] = state;
  column[13] = state + slots.mu;
  for (int c = 0; c < kLayerParameters; ++c) {
    column[kFirstLayerInput + c] = slots.layer >= 0 ? state + slots.layer + c : -1;
  }
  const int memory = data.reads_memory[j] != 0 ? data.memory_slot[j] : -1;
  const int first = 12 * static_cast<int>(moving_bodies_.size()) + 4 * memory;
  for (int c = 0; c < 4; ++c) {
    column[kFirstLayerInput + kLayerParameters + c] = memory >= 0 ? first + c : -1;
  }
}

// The layer's state after the step: its deflection, an unknown, and with Kelvin-Voigt friction
// on a pressed pair its elastic displacement (ElasticDisplacement) as a function of the pair's
// unknowns and inputs, differentiated on Jets over both.
ImplicitStepDerivative::Island::Memory ImplicitStepDerivative::PairMemory(
    const ImplicitStepData& step, const ImplicitIslandData& data, int j) {
  using Jet = ceres::Jet<double, kMemoryJet>;
  const ContactPairStep& s = *data.pair_steps[j];
  const ProblemBuilder& builder = *data.builder;
  const Eigen::VectorXd& z = *data.z;
  Island::Memory memory;
  memory.entry = 12 * static_cast<int>(moving_bodies_.size()) + 4 * data.memory_slot[j];
  const int forces = builder.block_offset(data.force_block[j]);
  memory.deflection = forces + ForceBlock::kDeflection;
  const double total = z[forces + ForceBlock::kNormal] + z[forces + ForceBlock::kLayerImpulse];
  if (!s.law.elastic_friction() || !(total > 0.0)) return memory;
  const auto nu_of = [&](int body) {
    const auto k = std::find(data.bodies.begin(), data.bodies.end(), body) - data.bodies.begin();
    return builder.block_offset(data.nu_block[k]);
  };
  const auto [f, g] = data.pairs[j];
  std::vector<int> blocks = {nu_of(f)}, sizes = {6};
  if (s.g_moves) {
    blocks.push_back(nu_of(g));
    sizes.push_back(6);
  }
  blocks.insert(blocks.end(), {builder.block_offset(data.geometry_block[j]), forces});
  sizes.insert(sizes.end(), {builder.block_size(data.geometry_block[j]),
                             builder.block_size(data.force_block[j])});
  std::vector<Jet> local;
  std::vector<const Jet*> at;
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int k = 0; k < sizes[b]; ++k) {
      memory.z_index.push_back(blocks[b] + k);
      local.push_back(Jet(z[blocks[b] + k], static_cast<int>(local.size())));
    }
  }
  const int nz = static_cast<int>(local.size());
  for (size_t b = 0, first = 0; b < blocks.size(); first += sizes[b], ++b) {
    at.push_back(local.data() + first);
  }
  int slot[kPairInputs];
  for (int c = 0; c < kPairInputs; ++c) slot[c] = nz + c;
  if (!s.g_moves) std::fill(slot + 6, slot + 12, -1);
  const PairNumbers<Jet> d = SeededNumbers<Jet>(s, slot);
  const PairFrame<Jet> frame(s, d, at[0], s.g_moves ? at[1] : nullptr, at[at.size() - 2]);
  Jet u[3];
  ElasticDisplacement(s, d, frame, at.back(), u);
  int column[kPairInputs];
  PairColumns(step, data, j, column);
  for (int c = 0; c < kPairInputs; ++c) {
    if (column[c] >= 0) memory.x_column.push_back(c);
  }
  memory.by_z.resize(3, nz);
  memory.by_x.resize(3, static_cast<Eigen::Index>(memory.x_column.size()));
  for (int a = 0; a < 3; ++a) {
    for (int k = 0; k < nz; ++k) memory.by_z(a, k) = u[a].v[k];
    for (size_t c = 0; c < memory.x_column.size(); ++c) {
      memory.by_x(a, static_cast<Eigen::Index>(c)) = u[a].v[nz + memory.x_column[c]];
    }
  }
  for (int& c : memory.x_column) c = column[c];
  return memory;
}

void ImplicitStepDerivative::AddPairRows(const ImplicitStepData& step,
                                         const ImplicitIslandData& data, int j,
                                         const std::vector<char>& held,
                                         std::vector<Eigen::Triplet<double>>* entries) {
  const ContactPairStep& s = *data.pair_steps[j];
  const ProblemBuilder& builder = *data.builder;
  const auto [f, g] = data.pairs[j];
  const int nu_f = builder.block_offset(
      data.nu_block[std::find(data.bodies.begin(), data.bodies.end(), f) - data.bodies.begin()]);
  int nu_g = -1;
  if (s.g_moves) {
    nu_g = builder.block_offset(
        data.nu_block[std::find(data.bodies.begin(), data.bodies.end(), g) - data.bodies.begin()]);
  }
  const int geometry = builder.block_offset(data.geometry_block[j]);
  const int forces = builder.block_offset(data.force_block[j]);
  const int geometry_size = builder.block_size(data.geometry_block[j]);
  const int force_size = builder.block_size(data.force_block[j]);
  std::vector<int> offsets = {nu_f}, sizes = {6};
  if (s.g_moves) {
    offsets.push_back(nu_g);
    sizes.push_back(6);
  }
  offsets.insert(offsets.end(), {geometry, forces});
  sizes.insert(sizes.end(), {geometry_size, force_size});
  // Each row's place in z: [geometry, forces, nu_f (, nu_g)].
  std::vector<int> row_at;
  for (int k = 0; k < geometry_size; ++k) row_at.push_back(geometry + k);
  for (int k = 0; k < force_size; ++k) row_at.push_back(forces + k);
  for (int k = 0; k < 6; ++k) row_at.push_back(nu_f + k);
  if (s.g_moves) {
    for (int k = 0; k < 6; ++k) row_at.push_back(nu_g + k);
  }
  int column[kPairInputs];
  PairColumns(step, data, j, column);
  // Jets sized to the inputs that can move: 8 for a rigid pair against the fixed ground (F's
  // pose, h, mu), 14 between moving bodies, up to 22 with a layer and its carried state.
  const int active =
      static_cast<int>(std::count_if(column, column + kPairInputs, [](int c) { return c >= 0; }));
  if (active <= 8) {
    ScatterPairRows<8>(s, *data.z, offsets, sizes, column, kPairInputs, row_at, held, entries);
  } else if (active <= 14) {
    ScatterPairRows<14>(s, *data.z, offsets, sizes, column, kPairInputs, row_at, held, entries);
  } else {
    ScatterPairRows<kPairInputs>(s, *data.z, offsets, sizes, column, kPairInputs, row_at, held,
                                 entries);
  }
}

// Degenerate indices name their pair (the twists are free and never degenerate), except the
// structural ties.
void ImplicitStepDerivative::NameDegenerate(const ImplicitStepData& step,
                                            const ImplicitIslandData& data,
                                            const std::vector<int>& degenerate,
                                            const std::vector<char>& structural) {
  const ProblemBuilder& builder = *data.builder;
  for (const int i : degenerate) {
    if (structural[i] != 0) continue;
    for (size_t j = 0; j < data.pairs.size(); ++j) {
      const int first = builder.block_offset(data.geometry_block[j]);
      const int last =
          builder.block_offset(data.force_block[j]) + builder.block_size(data.force_block[j]);
      if (i >= first && i < last) degenerate_contacts_.push_back(PairName(step, data, j));
    }
  }
}

// Pair j's mode; the indices it holds (a pair without normal impulse: all but p_n,
// implicit_derivative.h) and its structural tie: pressed, F's multiplier l_k1 of eq. (13) is zero
// and its row -f_k1(a1) too (a1 = a2 on F's surface), and both sides of that tie give the same
// derivative, (17) keeping a2 and so a1 on the surface.
void ImplicitStepDerivative::ClassifyPair(const ImplicitIslandData& data, int j, double tolerance,
                                          std::vector<char>* held, std::vector<char>* structural) {
  const ContactPairStep& s = *data.pair_steps[j];
  const ProblemBuilder& builder = *data.builder;
  const int forces = builder.block_offset(data.force_block[j]);
  const auto p = data.z->segment(forces, builder.block_size(data.force_block[j]));
  double total = p[ForceBlock::kNormal];
  if (s.law.compliant()) total += p[ForceBlock::kLayerImpulse];
  char& mode = contact_modes_[data.pair_index[j]];
  if (total <= tolerance) {
    mode = 'a';
    // A layer deflected without pressing (its damping holds it back) keeps its deflection, and
    // with it the nearest points, free: the next step reads it.
    if (s.law.compliant() && p[ForceBlock::kDeflection] > tolerance) {
      for (int c = ForceBlock::kTangent; c <= ForceBlock::kSlip; ++c) (*held)[forces + c] = 1;
      return;
    }
    for (const int block : {data.geometry_block[j], data.force_block[j]}) {
      const int first = builder.block_offset(block);
      for (int i = first; i < first + builder.block_size(block); ++i) (*held)[i] = 1;
    }
    (*held)[forces + ForceBlock::kNormal] = 0;
    return;
  }
  if (p[ForceBlock::kNormal] > tolerance) {
    (*structural)[builder.block_offset(data.geometry_block[j]) + 6 + s.k1] = 1;
  }
  if (s.law.mu == 0.0) {
    mode = 'f';
  } else if (s.law.elastic_friction()) {
    mode = p[ForceBlock::kSlip] >= 1.0 - tolerance ? 's' : 'l';
  } else {
    mode = p[ForceBlock::kSlip] <= tolerance ? 's' : 'l';
  }
}

void ImplicitStepDerivative::AddIsland(const ImplicitStepData& step,
                                       const ImplicitIslandData& data) {
  const ProblemBuilder& builder = *data.builder;
  const Eigen::VectorXd& z = *data.z;
  const int n = builder.size();
  Eigen::VectorXd F;
  Eigen::SparseMatrix<double> J;
  if (!builder.Evaluate(z, &F, &J)) {
    throw InputError(
        "implicit step derivative: the step's residuals are not finite at its solution");
  }
  const SensitivityOptions options;
  const double tolerance = options.degeneracy_tolerance * (1.0 + z.lpNorm<Eigen::Infinity>());
  std::vector<char> held(n, 0), structural(n, 0);
  for (size_t j = 0; j < data.pairs.size(); ++j) {
    ClassifyPair(data, static_cast<int>(j), tolerance, &held, &structural);
  }
  const Eigen::SparseMatrix<double> selected = WithHeldRows(J, held, z, builder, &F);
  Island island;
  island.size = n;
  island.sensitivity = std::make_unique<BoxSensitivity>(
      selected, F, z, builder.lower(), builder.upper(), 1.0 + F.lpNorm<Eigen::Infinity>(), options);
  std::vector<Eigen::Triplet<double>> entries;
  for (size_t k = 0; k < data.bodies.size(); ++k) {
    AddBodyRows(step, data, static_cast<int>(k), &entries);
    island.nu.emplace_back(slot_of_body_[data.bodies[k]], builder.block_offset(data.nu_block[k]));
  }
  for (size_t j = 0; j < data.pairs.size(); ++j) {
    AddPairRows(step, data, static_cast<int>(j), held, &entries);
    if (data.memory_slot[j] >= 0)
      island.memory.push_back(PairMemory(step, data, static_cast<int>(j)));
  }
  island.data_jacobian.resize(n, state_size() + parameter_size() + command_size());
  island.data_jacobian.setFromTriplets(entries.begin(), entries.end());
  NameDegenerate(step, data, island.sensitivity->degenerate(), structural);
  if (island.sensitivity->least_squares()) {
    const Eigen::MatrixXd free = island.sensitivity->UndeterminedDirections();
    for (const auto& [slot, offset] : island.nu) {
      if (free.middleRows(offset, 6).norm() > 1e-8) determined_ = false;
    }
  }
  islands_.push_back(std::move(island));
}

Eigen::VectorXd ImplicitStepDerivative::Inputs(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                                               const Eigen::VectorXd& du) const {
  const auto check = [](const Eigen::VectorXd& v, int size, const char* what) {
    if (v.size() != 0 && v.size() != size) {
      throw InputError(std::string("implicit step derivative: ") + what + " of " +
                       std::to_string(v.size()) + " entries for " + std::to_string(size));
    }
  };
  check(ds, state_size(), "a state change");
  check(dp, parameter_size(), "a parameter change");
  check(du, command_size(), "a command change");
  Eigen::VectorXd x = Eigen::VectorXd::Zero(state_size() + parameter_size() + command_size());
  if (ds.size() != 0) x.head(state_size()) = ds;
  if (dp.size() != 0) x.segment(state_size(), parameter_size()) = dp;
  if (du.size() != 0) x.tail(command_size()) = du;
  return x;
}

Eigen::VectorXd ImplicitStepDerivative::Jvp(const Eigen::VectorXd& ds, const Eigen::VectorXd& dp,
                                            const Eigen::VectorXd& du) const {
  const Eigen::VectorXd x = Inputs(ds, dp, du);
  const double dh = x[state_size()];
  Eigen::VectorXd out = Eigen::VectorXd::Zero(state_size());
  for (const Island& island : islands_) {
    const Eigen::VectorXd dF = island.data_jacobian * x;
    const Eigen::VectorXd dz =
        island.sensitivity->Tangent(dF, Eigen::VectorXd(), Eigen::VectorXd());
    for (const auto& [slot, offset] : island.nu) {
      out.segment<12>(12 * slot) = bodies_[slot].Jvp(
          x.segment<3>(12 * slot), x.segment<3>(12 * slot + 3), dh, h_, dz.segment<6>(offset));
    }
    for (const Island::Memory& m : island.memory) {
      out[m.entry] = dz[m.deflection];
      for (Eigen::Index k = 0; k < m.by_z.cols(); ++k)
        out.segment<3>(m.entry + 1) += m.by_z.col(k) * dz[m.z_index[k]];
      for (Eigen::Index k = 0; k < m.by_x.cols(); ++k)
        out.segment<3>(m.entry + 1) += m.by_x.col(k) * x[m.x_column[k]];
    }
  }
  return out;
}

StepDerivative::Gradient ImplicitStepDerivative::Vjp(const Eigen::VectorXd& g) const {
  if (g.size() != state_size()) {
    throw InputError("implicit step derivative: a gradient of " + std::to_string(g.size()) +
                     " entries for a state of " + std::to_string(state_size()));
  }
  Eigen::VectorXd gx = Eigen::VectorXd::Zero(state_size() + parameter_size() + command_size());
  for (const Island& island : islands_) {
    Eigen::VectorXd gz = Eigen::VectorXd::Zero(island.size);
    // Through the pose update: the start pose directly, h, and d nu+.
    for (const auto& [slot, offset] : island.nu) {
      const PoseUpdateTerms::Adjoint a =
          bodies_[slot].Vjp(g.segment<12>(12 * slot), h_, &gx[state_size()]);
      gx.segment<3>(12 * slot) += a.x;
      gx.segment<3>(12 * slot + 3) += a.theta;
      gz.segment<6>(offset) = a.nu_plus;
    }
    for (const Island::Memory& m : island.memory) {
      gz[m.deflection] += g[m.entry];
      const Eigen::Vector3d g_u = g.segment<3>(m.entry + 1);
      for (Eigen::Index k = 0; k < m.by_z.cols(); ++k) gz[m.z_index[k]] += m.by_z.col(k).dot(g_u);
      for (Eigen::Index k = 0; k < m.by_x.cols(); ++k) gx[m.x_column[k]] += m.by_x.col(k).dot(g_u);
    }
    const BoxSensitivity::Adjoint adjoint = island.sensitivity->Cotangent(gz);
    gx += island.data_jacobian.transpose() * adjoint.F;
  }
  Gradient out;
  out.state = gx.head(state_size());
  out.parameters = gx.segment(state_size(), parameter_size());
  out.commands = gx.tail(command_size());
  return out;
}

}  // namespace ncpkit::internal
