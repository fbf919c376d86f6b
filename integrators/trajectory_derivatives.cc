#include "integrators/trajectory_derivatives.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "integrators/trajectory_gradient.h"
#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

constexpr std::array<const char*, 13> kStateColumns = {"x",  "y",  "z",  "qw", "qx", "qy", "qz",
                                                       "vx", "vy", "vz", "wx", "wy", "wz"};
constexpr std::array<const char*, 4> kStartVectors = {"position", "rotation", "velocity",
                                                      "angular_velocity"};

// The names, comma-separated; a long list (a scene of many bodies has thousands of columns) is
// cut after its first kShown, saying how many there are.
std::string Joined(const std::vector<std::string>& names) {
  constexpr size_t kShown = 40;
  std::string text;
  for (size_t k = 0; k < names.size() && k < kShown; ++k) {
    text += (text.empty() ? "" : ", ") + names[k];
  }
  if (names.size() > kShown) text += ", ... (" + std::to_string(names.size()) + " in all)";
  return text;
}

// (body, quantity) of "<body>.<quantity>", splitting at the last dot; quantity empty if none.
std::pair<std::string, std::string> SplitName(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos) return {name, ""};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

// d(qw, qx, qy, qz)/d(theta) for the turn q' = exp(theta) q: 1/2 (0, theta) (x) q.
Eigen::Matrix<double, 4, 3> QuaternionByTurn(const Eigen::Quaterniond& q) {
  const Eigen::Vector3d v = q.vec();
  Eigen::Matrix3d cross;
  cross << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
  Eigen::Matrix<double, 4, 3> d;
  d.row(0) = -0.5 * v.transpose();
  d.bottomRows<3>() = 0.5 * (q.w() * Eigen::Matrix3d::Identity() - cross);
  return d;
}

}  // namespace

void TrajectoryDerivatives::Add(const Stepper& stepper) {
  std::unique_ptr<StepDerivative> d;
  try {
    d = stepper.LastStepDerivative();
  } catch (const InputError& e) {
    char time[32];
    std::snprintf(time, sizeof(time), "%.6g", stepper.time());
    throw InputError("step " + std::to_string(steps_.size() + 1) + " (t = " + time +
                     " s): " + e.what());
  }
  if (steps_.empty()) {
    entries_per_body_ = d->entries_per_body();
    for (int b : d->moving_bodies()) bodies_.push_back(stepper.bodies()[b].name);
    extras_ = d->extra_state_names();
    if (entries_per_body_ == 6) {
      for (const Actuator& a : stepper.actuators()) commands_.push_back(a.name + ".q_cmd");
    }
  }
  std::vector<Eigen::Quaterniond> orientations;
  for (int b : d->moving_bodies()) orientations.push_back(stepper.bodies()[b].state.orientation);
  orientations_.push_back(std::move(orientations));
  steps_.push_back(std::move(d));
}

std::vector<std::string> TrajectoryDerivatives::WrtNames() const {
  std::vector<std::string> names;
  if (!steps_.empty()) names = steps_.front()->parameter_names();
  for (const std::string& body : bodies_) {
    for (int v = 0; v < entries_per_body_ / 3; ++v) names.push_back(body + "." + kStartVectors[v]);
    if (entries_per_body_ == 12) names.push_back(body + ".impulse");
  }
  names.insert(names.end(), extras_.begin(), extras_.end());
  names.insert(names.end(), commands_.begin(), commands_.end());
  return names;
}

int TrajectoryDerivatives::ExtraEntry(const std::string& name) const {
  const auto found = std::find(extras_.begin(), extras_.end(), name);
  if (found == extras_.end()) return -1;
  return entries_per_body_ * static_cast<int>(bodies_.size()) +
         static_cast<int>(found - extras_.begin());
}

std::vector<std::string> TrajectoryDerivatives::StateColumns() const {
  std::vector<std::string> names;
  const int columns = entries_per_body_ == 12 ? 13 : 7;
  for (const std::string& body : bodies_) {
    for (int c = 0; c < columns; ++c) names.push_back(body + "." + kStateColumns[c]);
  }
  names.insert(names.end(), extras_.begin(), extras_.end());
  return names;
}

Eigen::RowVectorXd TrajectoryDerivatives::ColumnRow(const std::string& name, int k) const {
  Eigen::RowVectorXd row = Eigen::RowVectorXd::Zero(state_size());
  if (ExtraEntry(name) >= 0) {
    row(ExtraEntry(name)) = 1.0;
    return row;
  }
  const auto [body, quantity] = SplitName(name);
  const int slot =
      static_cast<int>(std::find(bodies_.begin(), bodies_.end(), body) - bodies_.begin());
  const int column = static_cast<int>(
      std::find(kStateColumns.begin(), kStateColumns.end(), quantity) - kStateColumns.begin());
  const int base = slot * entries_per_body_;
  if (column < 3) {
    row(base + column) = 1.0;
  } else if (column < 7) {
    row.segment<3>(base + 3) = QuaternionByTurn(orientations_[k][slot]).row(column - 3);
  } else {
    row(base + column - 1) = 1.0;  // vx .. wz: entries 6 .. 11
  }
  return row;
}

Eigen::VectorXd TrajectoryDerivatives::StateGradient(
    const std::map<std::string, Eigen::VectorXd>& weights, int k) const {
  Eigen::VectorXd g = Eigen::VectorXd::Zero(state_size());
  for (const auto& [name, w] : weights) g += w(k) * ColumnRow(name, k).transpose();
  return g;
}

void TrajectoryDerivatives::CheckNames(const std::vector<std::string>& columns,
                                       const std::vector<std::string>& wrt) const {
  const std::vector<std::string> state = StateColumns();
  for (const std::string& name : columns) {
    if (std::find(state.begin(), state.end(), name) == state.end()) {
      throw InputError("trajectory gradient: no state column '" + name +
                       "'; there are: " + Joined(state));
    }
  }
  const std::vector<std::string> names = WrtNames();
  for (const std::string& name : wrt) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw InputError("trajectory gradient: no derivative with respect to '" + name +
                       "'; there are: " + Joined(names));
    }
  }
}

std::vector<std::vector<Eigen::MatrixXd>> TrajectoryDerivatives::ColumnJacobians(
    const std::vector<std::string>& columns, const std::vector<std::string>& wrt) const {
  if (steps_.empty()) throw InputError("trajectory gradient: the run took no steps");
  CheckNames(columns, wrt);
  const std::vector<std::string>& parameters = steps_.front()->parameter_names();
  std::vector<std::vector<Eigen::MatrixXd>> result;
  for (const std::string& name : wrt) {
    // The seeds: one (ds_0, dp) per scalar of `name`.
    std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>> seeds;
    const auto parameter = std::find(parameters.begin(), parameters.end(), name);
    if (parameter != parameters.end()) {
      seeds.emplace_back(Eigen::VectorXd(),
                         Eigen::VectorXd::Unit(static_cast<int>(parameters.size()),
                                               static_cast<int>(parameter - parameters.begin())));
    } else if (ExtraEntry(name) >= 0) {
      seeds.emplace_back(Eigen::VectorXd::Unit(state_size(), ExtraEntry(name)), Eigen::VectorXd());
    } else {
      const auto [body, quantity] = SplitName(name);
      if (quantity == "impulse" || quantity == "q_cmd") {
        throw InputError("trajectory gradient: column Jacobians with respect to '" + name +
                         "' (a command per step) are not kept; use the gradient");
      }
      const int slot =
          static_cast<int>(std::find(bodies_.begin(), bodies_.end(), body) - bodies_.begin());
      const int v = static_cast<int>(
          std::find(kStartVectors.begin(), kStartVectors.end(), quantity) - kStartVectors.begin());
      for (int i = 0; i < 3; ++i) {
        seeds.emplace_back(
            Eigen::VectorXd::Unit(state_size(), slot * entries_per_body_ + 3 * v + i),
            Eigen::VectorXd());
      }
    }
    std::vector<Eigen::MatrixXd> per_column(columns.size(), Eigen::MatrixXd(steps(), seeds.size()));
    for (size_t j = 0; j < seeds.size(); ++j) {
      Eigen::VectorXd ds = seeds[j].first;
      for (int k = 0; k < steps(); ++k) {
        ds = steps_[k]->Jvp(ds, seeds[j].second, Eigen::VectorXd());
        for (size_t c = 0; c < columns.size(); ++c)
          per_column[c](k, j) = ColumnRow(columns[c], k).dot(ds.head(state_size()));
      }
    }
    result.push_back(std::move(per_column));
  }
  return result;
}

TrajectoryDerivatives::Result TrajectoryDerivatives::Gradient(
    const std::map<std::string, Eigen::VectorXd>& weights,
    const std::vector<std::string>& wrt) const {
  if (steps_.empty()) throw InputError("trajectory gradient: the run took no steps");
  std::vector<std::string> columns;
  for (const auto& [name, w] : weights) {
    columns.push_back(name);
    if (w.size() != steps()) {
      throw InputError("trajectory gradient: the weights of '" + name + "' have " +
                       std::to_string(w.size()) + " rows for a run of " + std::to_string(steps()) +
                       " steps");
    }
  }
  CheckNames(columns, wrt);
  std::vector<const StepDerivative*> steps;
  std::vector<Eigen::VectorXd> losses(1);
  for (int k = 0; k < this->steps(); ++k) {
    steps.push_back(steps_[k].get());
    losses.push_back(StateGradient(weights, k));
  }
  const TrajectoryGradientResult r = ReverseThrough(steps, losses);
  Result result;
  result.undetermined_steps = r.undetermined_steps;
  result.degenerate_contacts = r.degenerate_contacts;
  for (const std::string& name : wrt) {
    const auto parameter = std::find(r.parameter_names.begin(), r.parameter_names.end(), name);
    if (parameter != r.parameter_names.end()) {
      result.values.emplace_back(
          name,
          Eigen::MatrixXd::Constant(1, 1, r.parameters(parameter - r.parameter_names.begin())));
      continue;
    }
    if (ExtraEntry(name) >= 0) {
      result.values.emplace_back(
          name, Eigen::MatrixXd::Constant(1, 1, r.initial_state(ExtraEntry(name))));
      continue;
    }
    const auto command = std::find(commands_.begin(), commands_.end(), name);
    if (command != commands_.end()) {
      Eigen::MatrixXd values(steps.size(), 1);
      for (int k = 0; k < this->steps(); ++k)
        values(k, 0) = r.commands[k](command - commands_.begin());
      result.values.emplace_back(name, values);
      continue;
    }
    const auto [body, quantity] = SplitName(name);
    const int slot =
        static_cast<int>(std::find(bodies_.begin(), bodies_.end(), body) - bodies_.begin());
    if (quantity == "impulse") {
      Eigen::MatrixXd impulses(steps.size(), 6);
      for (int k = 0; k < this->steps(); ++k) {
        impulses.row(k) = r.commands[k].segment<6>(6 * slot).transpose();
      }
      result.values.emplace_back(name, impulses);
      continue;
    }
    const int v = static_cast<int>(std::find(kStartVectors.begin(), kStartVectors.end(), quantity) -
                                   kStartVectors.begin());
    result.values.emplace_back(name, r.initial_state.segment<3>(slot * entries_per_body_ + 3 * v));
  }
  return result;
}

}  // namespace ncpkit
