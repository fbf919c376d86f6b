#include "integrators/trajectory_table.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <utility>

namespace ncpkit {

std::string ExactNumber(double x) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), x);
  return std::string(buffer, result.ptr);
}

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

void TrajectoryTable::Add(const StepRecord& record, const Stepper& stepper, bool impulse) {
  const std::vector<Body>& bodies = stepper.bodies();
  if (names_.empty()) {
    for (const Body& b : bodies) names_.push_back(b.name);
    for (const Body& b : bodies) moving_.push_back(!b.fixed);
    for (const Actuator& a : stepper.actuators()) actuators_.push_back(a.name);
    for (const char* column : stepper.PairColumns()) pair_columns_.push_back(column);
    velocities_ = stepper.has_velocities();
  }
  Row row;
  row.t = record.time;
  for (const Body& b : bodies) {
    if (b.fixed) continue;
    const RigidBodyState& s = b.state;
    const double pose[7] = {s.position.x(),    s.position.y(),    s.position.z(),
                            s.orientation.w(), s.orientation.x(), s.orientation.y(),
                            s.orientation.z()};
    row.bodies.insert(row.bodies.end(), pose, pose + 7);
    if (!velocities_) continue;
    const double twist[6] = {s.linear_velocity.x(),  s.linear_velocity.y(),
                             s.linear_velocity.z(),  s.angular_velocity.x(),
                             s.angular_velocity.y(), s.angular_velocity.z()};
    row.bodies.insert(row.bodies.end(), twist, twist + 6);
    row.energy += MechanicalEnergy(b.mass, s, stepper.gravity());
  }
  for (size_t a = 0; a < record.actuator_positions.size(); ++a) {
    row.actuators.push_back(record.actuator_positions[a]);
    row.actuators.push_back(record.actuator_commands[a]);
  }
  stepper.TablePairs(record, &row.pairs);
  row.iterations = record.summary.iterations;
  row.residual = record.summary.natural_residual;
  row.time_us = record.step_seconds * 1e6;
  row.status = ToString(record.summary.status);
  row.impulse = impulse;
  rows_.push_back(std::move(row));
}

std::vector<std::string> TrajectoryTable::Header(
    std::map<std::pair<int, int>, int>* pair_column) const {
  // Pairs that ever had contact, in order of (a, b).
  for (const Row& row : rows_) {
    for (const PairRow& p : row.pairs) (*pair_column)[{p.body_a, p.body_b}] = 0;
  }
  int column = 0;
  for (auto& entry : *pair_column) entry.second = column++;
  std::vector<std::string> names{"t"};
  for (size_t b = 0; b < names_.size(); ++b) {
    if (!moving_[b]) continue;
    for (const char* q : {"x", "y", "z", "qw", "qx", "qy", "qz"})
      names.push_back(names_[b] + "." + q);
    if (!velocities_) continue;
    for (const char* q : {"vx", "vy", "vz", "wx", "wy", "wz"}) names.push_back(names_[b] + "." + q);
  }
  for (const std::string& a : actuators_) {
    names.push_back(a + ".q");
    names.push_back(a + ".q_cmd");
  }
  for (const auto& entry : *pair_column) {
    const std::string name = names_[entry.first.first] + "-" + names_[entry.first.second];
    for (const std::string& q : pair_columns_) names.push_back(name + "." + q);
  }
  for (const char* q :
       {"solver.iterations", "solver.residual", "solver.time_us", "solver.status"}) {
    names.push_back(q);
  }
  if (velocities_) {
    names.push_back("energy");
    names.push_back("impulse");
  }
  return names;
}

TrajectoryColumns TrajectoryTable::Columns() const {
  std::map<std::pair<int, int>, int> pair_column;
  TrajectoryColumns table;
  for (std::string& name : Header(&pair_column)) {
    if (name != "solver.status") table.names.push_back(std::move(name));
  }
  for (size_t b = 0; b < names_.size(); ++b) {
    if (moving_[b]) table.bodies.push_back(names_[b]);
  }
  for (const auto& entry : pair_column) {
    table.pairs.push_back(names_[entry.first.first] + "-" + names_[entry.first.second]);
  }
  table.pair_quantities = pair_columns_;
  table.values.assign(table.names.size(), std::vector<double>());
  for (auto& column : table.values) column.reserve(rows_.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Row& row : rows_) {
    std::vector<double> cells{row.t};
    cells.insert(cells.end(), row.bodies.begin(), row.bodies.end());
    cells.insert(cells.end(), row.actuators.begin(), row.actuators.end());
    const size_t pairs_at = cells.size();
    cells.resize(pairs_at + pair_column.size() * pair_columns_.size(), nan);
    for (const PairRow& p : row.pairs) {
      const size_t at = pairs_at + pair_column.at({p.body_a, p.body_b}) * pair_columns_.size();
      std::copy(p.values, p.values + pair_columns_.size(), cells.begin() + at);
    }
    cells.insert(cells.end(), {static_cast<double>(row.iterations), row.residual, row.time_us});
    if (velocities_) cells.insert(cells.end(), {row.energy, row.impulse ? 1.0 : 0.0});
    for (size_t c = 0; c < cells.size(); ++c) table.values[c].push_back(cells[c]);
    table.status.push_back(row.status);
  }
  return table;
}

void TrajectoryTable::WriteCsv(std::ostream& out) const {
  std::map<std::pair<int, int>, int> pair_column;
  const std::vector<std::string> header = Header(&pair_column);
  for (size_t c = 0; c < header.size(); ++c) out << (c ? "," : "") << CsvField(header[c]);
  out << "\n";
  const std::string empty_pair(pair_columns_.size(), ',');
  for (const Row& row : rows_) {
    out << ExactNumber(row.t);
    for (double v : row.bodies) out << "," << ExactNumber(v);
    for (double v : row.actuators) out << "," << ExactNumber(v);
    std::vector<const PairRow*> by_column(pair_column.size(), nullptr);
    for (const PairRow& p : row.pairs) by_column[pair_column.at({p.body_a, p.body_b})] = &p;
    for (const PairRow* p : by_column) {
      if (p == nullptr) {
        out << empty_pair;
        continue;
      }
      for (size_t q = 0; q < pair_columns_.size(); ++q) out << "," << ExactNumber(p->values[q]);
    }
    out << "," << row.iterations << "," << ExactNumber(row.residual) << ","
        << ExactNumber(row.time_us) << "," << row.status;
    if (velocities_) out << "," << ExactNumber(row.energy) << "," << (row.impulse ? 1 : 0);
    out << "\n";
  }
}

}  // namespace ncpkit
