// The one trajectory writer: a table of every step of a run, as CSV.
#ifndef NCPKIT_INTEGRATORS_TRAJECTORY_TABLE_H_
#define NCPKIT_INTEGRATORS_TRAJECTORY_TABLE_H_

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "integrators/stepper.h"

namespace ncpkit {

// Columns: t; per moving body x, y, z, qw, qx, qy, qz and, for steppers with velocities, vx,
// vy, vz, wx, wy, wz; per actuator q and q_cmd; per pair that ever had contact the stepper's
// PairColumns() (empty while the pair has none); solver iterations, residual, time_us, status;
// for steppers with velocities energy (kinetic + gravitational potential of the moving bodies,
// J) and impulse (1 if a scripted impulse acted in the step). Numbers are written as the
// shortest decimal that reads back as the same double.
// The table as numbers, column by column (for the Python package): the CSV's columns but
// solver.status, whose text is kept apart; NaN where a pair had no contact (empty in the CSV).
struct TrajectoryColumns {
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;  // values[c][row] of names[c]
  std::vector<std::string> status;          // solver.status per row
  // The moving bodies, the pairs that had contact ("a-b") and the quantities of each pair.
  std::vector<std::string> bodies, pairs, pair_quantities;
};

class TrajectoryTable {
 public:
  // `impulse`: a scripted impulse acted in the step.
  void Add(const StepRecord& record, const Stepper& stepper, bool impulse);
  void WriteCsv(std::ostream& out) const;
  TrajectoryColumns Columns() const;

 private:
  // The CSV header's names, solver.status included, and the table column of each pair.
  std::vector<std::string> Header(std::map<std::pair<int, int>, int>* pair_column) const;

  struct Row {
    double t = 0.0;
    std::vector<double> bodies, actuators;
    std::vector<PairRow> pairs;
    int iterations = 0;
    double residual = 0.0, time_us = 0.0;
    std::string status;
    double energy = 0.0;
    bool impulse = false;
  };
  std::vector<std::string> names_, actuators_, pair_columns_;
  std::vector<bool> moving_;
  bool velocities_ = false;
  std::vector<Row> rows_;
};

// A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or a
// line break; names come from users' scene files.
std::string CsvField(const std::string& text);
// The shortest decimal that reads back as the same double: a trajectory far from the origin
// (x = 1e5 m) keeps every digit the stepper computed (12 significant digits lost 5e-7 m there).
std::string ExactNumber(double x);

}  // namespace ncpkit

#endif  // NCPKIT_INTEGRATORS_TRAJECTORY_TABLE_H_
