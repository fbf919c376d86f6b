// The Python extension ncpkit._ncpkit. It binds the solver registry and the scene loader, not
// individual solvers or steppers: a solver added to the registry, or a stepper the scene files
// can name, is reachable from Python without a new line here. ncpkit/__init__.py wraps it.
#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "integrators/scene.h"
#include "integrators/scene_runner.h"
#include "integrators/trajectory_derivatives.h"
#include "integrators/trajectory_table.h"
#include "readers/fclib_reader.h"
#include "readers/siconos_reader.h"
#include "solvers/base/input_error.h"
#include "solvers/base/status.h"
#include "solvers/friction/friction_problem.h"
#include "solvers/lcp/linear_problem.h"
#include "solvers/mcp/mcp.h"
#include "solvers/registry/solver_registry.h"
#include "solvers/sensitivity/friction_sensitivity.h"
#include "solvers/sensitivity/linear_sensitivity.h"
#include "solvers/sensitivity/mcp_sensitivity.h"

namespace py = pybind11;

namespace ncpkit {
namespace {

// A summary as Python sees it: the fields every solver reports, its full report and brief line.
struct PySummary {
  std::string solver, status, message;
  int iterations = 0, factorizations = 0;
  double natural_residual = 0.0, tolerance = 0.0, wall_time_seconds = 0.0;
  // Frictional contact problems: Siconos' normalization of the error (natural_residual is the
  // FCLib error); NaN for the other kinds.
  double siconos_error = std::numeric_limits<double>::quiet_NaN();
  bool solved = false;
  std::string full_report, brief_report;
};

PySummary ToPython(const SolverSummary& s) {
  PySummary p;
  p.solver = s.solver;
  p.status = ToString(s.status);
  p.message = s.message;
  p.iterations = s.iterations;
  p.factorizations = s.factorizations;
  p.natural_residual = s.natural_residual;
  p.tolerance = s.tolerance;
  p.wall_time_seconds = s.wall_time_seconds;
  p.solved = s.IsSolved();
  p.full_report = s.FullReport();
  p.brief_report = s.BriefReport();
  if (const auto* friction = dynamic_cast<const FrictionSolverSummary*>(&s)) {
    p.siconos_error = friction->siconos_error;
  }
  return p;
}

// SolverOptions from keyword arguments; an unknown name is an error naming the known ones.
SolverOptions OptionsFrom(const py::dict& kwargs) {
  SolverOptions o;
  using Setter = std::function<void(const py::handle&)>;
  const std::vector<std::pair<const char*, Setter>> setters = {
      {"tolerance", [&](const py::handle& v) { o.tolerance = v.cast<double>(); }},
      {"max_iterations", [&](const py::handle& v) { o.max_iterations = v.cast<int>(); }},
      {"warm_start", [&](const py::handle& v) { o.warm_start = v.cast<bool>(); }},
      {"record_history", [&](const py::handle& v) { o.record_history = v.cast<bool>(); }},
      {"project_onto_bounds", [&](const py::handle& v) { o.project_onto_bounds = v.cast<bool>(); }},
      {"start_acceptance", [&](const py::handle& v) { o.start_acceptance = v.cast<double>(); }},
      {"equilibrate", [&](const py::handle& v) { o.equilibrate = v.cast<bool>(); }},
      {"time_limit_seconds", [&](const py::handle& v) { o.time_limit_seconds = v.cast<double>(); }},
      {"seed",
       [&](const py::handle& v) {
         const auto seed = v.cast<long long>();
         if (seed < 0 || seed > 4294967295LL) {
           throw InputError("seed must be an integer in [0, 2^32 - 1], not " +
                            std::to_string(seed));
         }
         o.seed = static_cast<unsigned>(seed);
       }},
  };
  for (const auto& [key, value] : kwargs) {
    const std::string name = key.cast<std::string>();
    bool known = false;
    for (const auto& [option, set] : setters) {
      if (name != option) continue;
      known = true;
      try {
        set(value);
      } catch (const py::cast_error&) {
        throw InputError("option " + name + ": cannot take " + py::repr(value).cast<std::string>());
      }
    }
    if (!known) {
      std::string list;
      for (const auto& [option, set] : setters)
        list += (list.empty() ? "" : ", ") + std::string(option);
      throw InputError("unknown solver option '" + name + "'; the options are: " + list);
    }
  }
  return o;
}

// F and J as Python callables: F(z) -> array of n, J(z) -> a scipy.sparse matrix or a dense
// array (a dense J keeps all n x n entries, so its pattern is the same at every point). An
// exception in a callable is kept and raised after the solve; the solver sees "cannot be
// evaluated" from then on, which ends the solve quickly.
class PythonMcp : public MixedComplementarityProblem {
 public:
  PythonMcp(py::function F, py::function J, Eigen::VectorXd lower, Eigen::VectorXd upper,
            Eigen::VectorXd start)
      : F_(std::move(F)),
        J_(std::move(J)),
        lower_(std::move(lower)),
        upper_(std::move(upper)),
        start_(std::move(start)) {}
  int size() const override { return static_cast<int>(lower_.size()); }
  const Eigen::VectorXd& lower() const override { return lower_; }
  const Eigen::VectorXd& upper() const override { return upper_; }
  std::string name() const override { return "python"; }
  void DefaultStart(Eigen::VectorXd* z) const override { *z = start_; }

  bool Evaluate(const Eigen::VectorXd& z, Eigen::VectorXd* F,
                Eigen::SparseMatrix<double>* J) const override {
    if (error_ || !message_.empty()) return false;
    try {
      const Eigen::VectorXd value = F_(z).cast<Eigen::VectorXd>();
      if (value.size() != z.size()) {
        throw InputError("F returned " + std::to_string(value.size()) + " values for " +
                         std::to_string(z.size()) + " variables");
      }
      *F = value;
      if (J) *J = Jacobian(J_(z), static_cast<int>(z.size()));
    } catch (py::error_already_set& e) {
      error_ = std::make_unique<py::error_already_set>(std::move(e));
      return false;
    } catch (const py::cast_error& e) {
      message_ =
          std::string("F or J returned something that is not an array of numbers: ") + e.what();
      return false;
    } catch (const std::exception& e) {
      message_ = e.what();
      return false;
    }
    return F->allFinite();
  }

  // Raises what a callable raised (or its bad result) during the solve.
  void RethrowError() const {
    if (!message_.empty()) throw InputError(message_);
    if (!error_) return;
    error_->restore();
    throw py::error_already_set();
  }

 private:
  static Eigen::SparseMatrix<double> Jacobian(const py::object& value, int n) {
    Eigen::SparseMatrix<double> J;
    if (py::hasattr(value, "tocsc")) {
      J = value.cast<Eigen::SparseMatrix<double>>();
    } else {
      const Eigen::MatrixXd dense = value.cast<Eigen::MatrixXd>();
      if (dense.rows() != n || dense.cols() != n) {
        throw InputError("J returned a " + std::to_string(dense.rows()) + " x " +
                         std::to_string(dense.cols()) + " matrix for " + std::to_string(n) +
                         " variables");
      }
      std::vector<Eigen::Triplet<double>> t;
      t.reserve(static_cast<size_t>(n) * n);
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) t.emplace_back(i, j, dense(i, j));
      }
      J.resize(n, n);
      J.setFromTriplets(t.begin(), t.end());
    }
    if (J.rows() != n || J.cols() != n) {
      throw InputError("J returned a " + std::to_string(J.rows()) + " x " +
                       std::to_string(J.cols()) + " matrix for " + std::to_string(n) +
                       " variables");
    }
    J.makeCompressed();
    return J;
  }

  py::function F_, J_;
  Eigen::VectorXd lower_, upper_, start_;
  mutable std::unique_ptr<py::error_already_set> error_;
  mutable std::string message_;
};

Eigen::VectorXd FullOr(const std::optional<Eigen::VectorXd>& v, int n, double fill) {
  return v ? *v : Eigen::VectorXd::Constant(n, fill);
}

// A solve of a problem held in C++ alone, with Python's GIL released meanwhile, so that threads
// of the interpreter solve in parallel (the MCP solve calls back into Python and keeps it). The
// summary is the solver's own (a frictional one is a FrictionSolverSummary).
template <class Problem>
const SolverSummary& SolveWithoutGil(ComplementaritySolver& solver, const Problem& problem,
                                     Eigen::VectorXd* x) {
  py::gil_scoped_release release;
  return solver.Solve(problem, x);
}

py::tuple SolveLinear(const LinearComplementarityProblem& problem, const std::string& solver,
                      const std::optional<Eigen::VectorXd>& start, const py::dict& kwargs) {
  SolverOptions options = OptionsFrom(kwargs);
  if (start) options.warm_start = true;
  auto s = CreateSolver(solver, ProblemKind::Linear, options);
  Eigen::VectorXd z = start ? *start : Eigen::VectorXd();
  const SolverSummary& summary = SolveWithoutGil(*s, problem, &z);
  return py::make_tuple(z, ToPython(summary));
}

// An LCP / box MLCP with a dense (Eigen::MatrixXd) or sparse M; bounds default to [0, inf).
template <class Matrix>
py::tuple SolveMatrix(const Matrix& M, const Eigen::VectorXd& q,
                      const std::optional<Eigen::VectorXd>& lower,
                      const std::optional<Eigen::VectorXd>& upper, const std::string& solver,
                      const std::optional<Eigen::VectorXd>& start, const py::kwargs& kwargs) {
  const int n = static_cast<int>(q.size());
  const LinearComplementarityProblem problem(
      M, q, FullOr(lower, n, 0.0), FullOr(upper, n, std::numeric_limits<double>::infinity()));
  return SolveLinear(problem, solver, start, kwargs);
}

SensitivityOptions SensitivityOptionsFor(const std::string& degenerate_side) {
  SensitivityOptions options;
  if (degenerate_side == "free") {
    options.degenerate_side = DegenerateSide::Free;
  } else if (degenerate_side != "bound") {
    throw InputError("degenerate_side is \"" + degenerate_side +
                     "\"; it must be \"bound\" or \"free\"");
  }
  return options;
}

// The sensitivity of an LCP / box MLCP solution z (sparse M, the bounds given in full).
LinearSensitivity MakeLinearSensitivity(const Eigen::SparseMatrix<double>& M,
                                        const Eigen::VectorXd& q, const Eigen::VectorXd& lower,
                                        const Eigen::VectorXd& upper, const Eigen::VectorXd& z,
                                        const std::string& degenerate_side) {
  return LinearSensitivity(LinearComplementarityProblem(M, q, lower, upper), z,
                           SensitivityOptionsFor(degenerate_side));
}

// The sensitivity of the solution z of the MCP of Python callables F, J.
McpSensitivity MakeMcpSensitivity(py::function F, py::function J, const Eigen::VectorXd& lower,
                                  const Eigen::VectorXd& upper, const Eigen::VectorXd& z,
                                  const std::string& degenerate_side) {
  const PythonMcp problem(std::move(F), std::move(J), lower, upper, z);
  ValidateBounds(problem);
  const SensitivityOptions options = SensitivityOptionsFor(degenerate_side);
  try {
    McpSensitivity sensitivity(problem, z, options);
    problem.RethrowError();
    return sensitivity;
  } catch (const InputError&) {
    problem.RethrowError();  // the callable's own exception first, where it raised one
    throw;
  }
}

// The sensitivity of the solution r of FC(W, q, mu) (sparse W).
FrictionSensitivity MakeFrictionSensitivity(const Eigen::SparseMatrix<double>& W,
                                            const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
                                            const Eigen::VectorXd& r,
                                            const std::string& degenerate_side) {
  return FrictionSensitivity(FrictionContactProblem(W, q, mu), r,
                             SensitivityOptionsFor(degenerate_side));
}

FrictionSensitivity::Input FrictionInput(const std::string& name) {
  if (name == "q") return FrictionSensitivity::Input::q;
  if (name == "W") return FrictionSensitivity::Input::W;
  if (name == "mu") return FrictionSensitivity::Input::mu;
  throw InputError("no input \"" + name + "\": a frictional contact problem's are W, q, mu");
}

LinearSensitivity::Input LinearInput(const std::string& name) {
  if (name == "q") return LinearSensitivity::Input::q;
  if (name == "M") return LinearSensitivity::Input::M;
  if (name == "lower") return LinearSensitivity::Input::lower;
  if (name == "upper") return LinearSensitivity::Input::upper;
  throw InputError("no input \"" + name + "\": an LCP's are q, M, lower, upper");
}

// A frictional contact problem FC(W, q, mu), W sparse or dense.
template <class Matrix>
py::tuple SolveFriction(const Matrix& W, const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
                        const std::string& solver, const std::optional<Eigen::VectorXd>& start,
                        const py::kwargs& kwargs) {
  Eigen::SparseMatrix<double> sparse;
  if constexpr (std::is_same_v<Matrix, Eigen::MatrixXd>) {
    sparse = W.sparseView();
  } else {
    sparse = W;
  }
  const FrictionContactProblem problem(sparse, q, mu);
  SolverOptions options = OptionsFrom(kwargs);
  if (start) {
    if (start->size() != problem.size()) {
      throw InputError("start has " + std::to_string(start->size()) + " entries for " +
                       std::to_string(problem.size()) + " unknowns");
    }
    options.warm_start = true;
  }
  auto s = CreateSolver(solver, ProblemKind::Friction, options);
  Eigen::VectorXd r = start ? *start : Eigen::VectorXd();
  const SolverSummary& summary = SolveWithoutGil(*s, problem, &r);
  return py::make_tuple(r, ToPython(summary));
}

py::tuple SolveMixed(py::function F, py::function J, const Eigen::VectorXd& lower,
                     const Eigen::VectorXd& upper, const std::string& solver,
                     const std::optional<Eigen::VectorXd>& start, const py::kwargs& kwargs) {
  const int n = static_cast<int>(lower.size());
  if (upper.size() != n) {
    throw InputError("lower has " + std::to_string(n) + " entries, upper " +
                     std::to_string(upper.size()));
  }
  if (start && start->size() != n) {
    throw InputError("start has " + std::to_string(start->size()) + " entries for " +
                     std::to_string(n) + " variables");
  }
  const PythonMcp problem(std::move(F), std::move(J), lower, upper,
                          start ? *start : Eigen::VectorXd::Zero(n));
  ValidateBounds(problem);
  auto s = CreateSolver(solver, ProblemKind::Mixed, OptionsFrom(kwargs));
  Eigen::VectorXd z;  // from the start above (the problem's DefaultStart)
  const SolverSummary& summary = s->Solve(problem, &z);
  problem.RethrowError();
  return py::make_tuple(z, ToPython(summary));
}

py::dict SceneInfo(const Scene& scene) {
  py::dict d;
  d["name"] = scene.name;
  d["description"] = scene.description;
  d["stepper"] = scene.stepper();
  d["duration"] = scene.duration;
  d["h"] = scene.h();
  d["solver"] = scene.variant();
  std::vector<std::string> bodies;
  for (const Body& b : scene.bodies) bodies.push_back(b.name);
  d["bodies"] = bodies;
  d["default_variants"] = scene.DefaultVariants();
  return d;
}

py::dict StatsDict(const SimulationStats& stats) {
  py::dict d;
  for (const auto& [name, value] : StatsFields(stats)) {
    d[name] = std::visit(
        [](const auto& v) -> py::object {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
            return py::none();
          } else {
            return py::cast(v);
          }
        },
        value);
  }
  return d;
}

// Runs a scene: (column names, columns, solver status per step, statistics, the bodies, pairs
// and pair quantities of the columns).
py::tuple Simulate(Scene scene, const std::optional<std::string>& solver,
                   std::optional<double> duration, std::optional<int64_t> max_steps,
                   std::optional<int> threads, bool derivatives) {
  if (duration) {
    if (!(*duration > 0.0) || !std::isfinite(*duration)) {
      throw InputError("duration must be a positive number of seconds");
    }
    scene.duration = *duration;
  }
  if (max_steps) {
    if (*max_steps <= 0) throw InputError("max_steps must be positive");
    scene.max_steps = *max_steps;
  }
  if (threads) scene.mutable_settings().threads = *threads;  // the stepper checks the range
  const std::string variant = solver ? *solver : scene.variant();
  if (!scene.TakesVariant(variant)) Scene(scene).ApplyVariant(variant);  // throws, saying why
  TrajectoryTable table;
  std::shared_ptr<TrajectoryDerivatives> steps;
  if (derivatives) steps = std::make_shared<TrajectoryDerivatives>();
  // The steps run without the GIL, so that threads simulate in parallel; it is taken back every
  // 64 steps to see Ctrl-C.
  SimulationStats stats;
  {
    py::gil_scoped_release release;
    int64_t step = 0;
    stats = RunScene(scene, variant, [&](const StepRecord& record, const SceneRunner& runner) {
      table.Add(record, runner.stepper(), !runner.fired().empty());
      if (steps) steps->Add(runner.stepper());
      if (++step % 64 == 0) {
        py::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C
      }
    });
  }
  TrajectoryColumns columns = table.Columns();
  std::vector<py::array_t<double>> arrays;
  for (const std::vector<double>& c : columns.values) {
    arrays.emplace_back(static_cast<py::ssize_t>(c.size()), c.data());
  }
  py::dict layout;
  layout["bodies"] = columns.bodies;
  layout["pairs"] = columns.pairs;
  layout["pair_quantities"] = columns.pair_quantities;
  return py::make_tuple(columns.names, arrays, columns.status, StatsDict(stats), layout,
                        steps ? py::cast(steps) : py::none());
}

// Trajectory.gradient's reverse pass: weights {column: dL/dcolumn per row} -> ([(name, value)],
// undetermined steps, degenerate contacts).
py::tuple RunGradient(const TrajectoryDerivatives& d,
                      const std::map<std::string, Eigen::VectorXd>& weights,
                      const std::vector<std::string>& wrt) {
  TrajectoryDerivatives::Result r = d.Gradient(weights, wrt);
  py::list values;
  for (auto& [name, value] : r.values) values.append(py::make_tuple(name, value));
  return py::make_tuple(values, r.undetermined_steps, r.degenerate_contacts);
}

}  // namespace
}  // namespace ncpkit

PYBIND11_MODULE(_ncpkit, m) {
  using namespace ncpkit;
  m.doc() = "ncpkit: complementarity solvers and rigid-body contact simulation";

  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::invalid_argument& e) {  // InputError and the readers' ParseError
      input_error(e.what());
    }
  });

  py::class_<PySummary>(m, "Summary", "What a solve reports; the same fields for every solver.")
      .def_readonly("solver", &PySummary::solver)
      .def_readonly("status", &PySummary::status)
      .def_readonly("message", &PySummary::message)
      .def_readonly("iterations", &PySummary::iterations)
      .def_readonly("natural_residual", &PySummary::natural_residual)
      .def_readonly("tolerance", &PySummary::tolerance)
      .def_readonly("wall_time_seconds", &PySummary::wall_time_seconds)
      .def_readonly("factorizations", &PySummary::factorizations)
      .def_readonly("siconos_error", &PySummary::siconos_error)
      .def_readonly("solved", &PySummary::solved)
      .def_readonly("full_report", &PySummary::full_report)
      .def("__bool__", [](const PySummary& s) { return s.solved; })
      .def("__repr__", [](const PySummary& s) { return "<ncpkit.Summary " + s.brief_report + ">"; })
      .def("__str__", [](const PySummary& s) { return s.brief_report; });

  m.def(
      "solvers",
      []() {
        py::list rows;
        for (const SolverEntry& e : SolverRegistry()) {
          py::dict d;
          d["name"] = e.name;
          d["description"] = e.description;
          d["linear"] = e.Takes(ProblemKind::Linear);
          d["mixed"] = e.Takes(ProblemKind::Mixed);
          d["friction"] = e.Takes(ProblemKind::Friction);
          d["global_friction"] = e.Takes(ProblemKind::GlobalFriction);
          d["convex_model"] = e.convex_model;
          d["kinds"] = KindNames(e.kinds);
          rows.append(d);
        }
        return rows;
      },
      "The solver registry: one dict per solver (name, description, linear, mixed, friction, "
      "global_friction: the problem kinds it takes; convex_model: it solves the convex contact "
      "model of frictional contact problems, not their Coulomb cones; kinds: their names).");
  m.def("_solve_friction_sparse", &SolveFriction<Eigen::SparseMatrix<double>>, py::arg("W"),
        py::arg("q"), py::arg("mu"), py::arg("solver"), py::arg("start"));
  m.def("_solve_friction_dense", &SolveFriction<Eigen::MatrixXd>, py::arg("W"), py::arg("q"),
        py::arg("mu"), py::arg("solver"), py::arg("start"));
  m.def(
      "read_friction_problem",
      [](const std::string& path) {
        const FrictionContactProblem p =
            IsHdf5File(path) ? ReadFclibFile(path).problem : ReadSiconosFrictionContact(path);
        return py::make_tuple(p.W_columns(), p.q(), p.mu());
      },
      py::arg("path"),
      "Reads a frictional contact problem as `ncpkit solve` does (FCLib .hdf5, a global one "
      "reduced to local form; or a Siconos FC3D .dat): (W as scipy.sparse, q, mu).");
  m.def("_solve_dense", &SolveMatrix<Eigen::MatrixXd>, py::arg("M"), py::arg("q"), py::arg("lower"),
        py::arg("upper"), py::arg("solver"), py::arg("start"));
  m.def("_solve_sparse", &SolveMatrix<Eigen::SparseMatrix<double>>, py::arg("M"), py::arg("q"),
        py::arg("lower"), py::arg("upper"), py::arg("solver"), py::arg("start"));
  py::class_<LinearSensitivity>(m, "_LinearSensitivity")
      .def("jacobian", [](const LinearSensitivity& s,
                          const std::string& input) { return s.Jacobian(LinearInput(input)); })
      .def("vjp",
           [](const LinearSensitivity& s, const Eigen::VectorXd& g) {
             const LinearSensitivity::Gradient gradient = s.Vjp(g);
             return py::make_tuple(gradient.q, gradient.lower, gradient.upper, gradient.M_left);
           })
      .def("jvp",
           [](const LinearSensitivity& s, const Eigen::VectorXd& q, const Eigen::VectorXd& lower,
              const Eigen::VectorXd& upper, const Eigen::SparseMatrix<double>& M) {
             LinearSensitivity::Tangent tangent;
             tangent.q = q;
             tangent.lower = lower;
             tangent.upper = upper;
             tangent.M = M;
             return s.Jvp(tangent);
           })
      .def_property_readonly("degenerate", &LinearSensitivity::degenerate)
      .def_property_readonly("least_squares",
                             [](const LinearSensitivity& s) { return s.box().least_squares(); });
  m.def("_linear_sensitivity", &MakeLinearSensitivity, py::arg("M"), py::arg("q"), py::arg("lower"),
        py::arg("upper"), py::arg("z"), py::arg("degenerate_side"));
  py::class_<McpSensitivity>(m, "_McpSensitivity")
      .def("jacobian",
           [](const McpSensitivity& s, const std::string& input) {
             const int n = s.size();
             internal::RequireDenseJacobianSize(n, n, input.c_str());
             Eigen::MatrixXd out(n, n);
             const Eigen::VectorXd none;
             for (int i = 0; i < n; ++i) {
               const Eigen::VectorXd e = Eigen::VectorXd::Unit(n, i);
               if (input == "F") {
                 out.col(i) = s.Jvp(e);
               } else if (input == "lower") {
                 out.col(i) = s.Jvp(none, e);
               } else if (input == "upper") {
                 out.col(i) = s.Jvp(none, none, e);
               } else {
                 throw InputError("no input \"" + input + "\": an MCP's are F, lower, upper");
               }
             }
             return out;
           })
      .def("jvp", [](const McpSensitivity& s, const Eigen::VectorXd& dF, const Eigen::VectorXd& dl,
                     const Eigen::VectorXd& du) { return s.Jvp(dF, dl, du); })
      .def("vjp",
           [](const McpSensitivity& s, const Eigen::VectorXd& g) {
             const BoxSensitivity::Adjoint a = s.Vjp(g);
             return py::make_tuple(a.F, a.lower, a.upper);
           })
      .def_property_readonly("degenerate", &McpSensitivity::degenerate)
      .def_property_readonly("least_squares",
                             [](const McpSensitivity& s) { return s.box().least_squares(); });
  py::class_<FrictionSensitivity>(m, "_FrictionSensitivity")
      .def("jacobian", [](const FrictionSensitivity& s,
                          const std::string& input) { return s.Jacobian(FrictionInput(input)); })
      .def("jvp",
           [](const FrictionSensitivity& s, const Eigen::VectorXd& q, const Eigen::VectorXd& mu,
              const Eigen::SparseMatrix<double>& W) {
             FrictionSensitivity::Tangent tangent;
             tangent.q = q;
             tangent.mu = mu;
             tangent.W = W;
             return s.Jvp(tangent);
           })
      .def("vjp",
           [](const FrictionSensitivity& s, const Eigen::VectorXd& g) {
             const FrictionSensitivity::Gradient gradient = s.Vjp(g);
             return py::make_tuple(gradient.q, gradient.mu, gradient.W_left);
           })
      .def("states",
           [](const FrictionSensitivity& s) {
             std::vector<std::string> out;
             for (int a = 0; a < s.num_contacts(); ++a) {
               switch (s.state(a)) {
                 case FrictionSensitivity::ContactState::Apart:
                   out.emplace_back("apart");
                   break;
                 case FrictionSensitivity::ContactState::Sticking:
                   out.emplace_back("sticking");
                   break;
                 case FrictionSensitivity::ContactState::Sliding:
                   out.emplace_back("sliding");
                   break;
                 case FrictionSensitivity::ContactState::Frictionless:
                   out.emplace_back("frictionless");
                   break;
               }
             }
             return out;
           })
      .def_property_readonly("degenerate", &FrictionSensitivity::degenerate)
      .def_property_readonly("least_squares", &FrictionSensitivity::least_squares);
  m.def("_friction_sensitivity", &MakeFrictionSensitivity, py::arg("W"), py::arg("q"),
        py::arg("mu"), py::arg("r"), py::arg("degenerate_side"));
  m.def("_mcp_sensitivity", &MakeMcpSensitivity, py::arg("F"), py::arg("J"), py::arg("lower"),
        py::arg("upper"), py::arg("z"), py::arg("degenerate_side"));
  m.def("_solve_mcp", &SolveMixed, py::arg("F"), py::arg("J"), py::arg("lower"), py::arg("upper"),
        py::arg("solver"), py::arg("start"));
  m.def(
      "read_problem",
      [](const std::string& path, const std::string& q, const std::string& lower,
         const std::string& upper) {
        const LinearComplementarityProblem p = ReadProblemFile(path, q, lower, upper);
        return py::make_tuple(p.sparse_columns(), p.q(), p.lower(), p.upper());
      },
      py::arg("path"), py::arg("q") = "", py::arg("lower") = "", py::arg("upper") = "",
      "Reads a problem file as `ncpkit solve` does (Siconos .dat LCP, MLCP if the name holds "
      "'mlcp', Matrix Market with q / bound files): (M as scipy.sparse, q, lower, upper).");
  py::class_<Scene>(m, "_Scene");  // opaque: ncpkit.Scene wraps it
  m.def("_load_scene", &LoadScene, py::arg("path"));
  m.def("_parse_scene", &ParseScene, py::arg("text"), py::arg("source"));
  m.def("_scene_info", &SceneInfo, py::arg("scene"));
  py::class_<TrajectoryDerivatives, std::shared_ptr<TrajectoryDerivatives>>(
      m, "_TrajectoryDerivatives")
      .def("steps", &TrajectoryDerivatives::steps)
      .def("wrt_names", &TrajectoryDerivatives::WrtNames)
      .def("state_columns", &TrajectoryDerivatives::StateColumns)
      .def("gradient", &RunGradient, py::arg("weights"), py::arg("wrt"))
      .def("column_jacobians", &TrajectoryDerivatives::ColumnJacobians, py::arg("columns"),
           py::arg("wrt"))
      .def("step_info", [](const TrajectoryDerivatives& d, int k) {
        if (k < 0 || k >= d.steps()) throw InputError("no step " + std::to_string(k));
        const StepDerivative& s = d.step(k);
        return py::make_tuple(s.determined(), s.contact_modes(), s.degenerate_contacts());
      });
  m.def("_simulate", &Simulate, py::arg("scene"), py::arg("solver"), py::arg("duration"),
        py::arg("max_steps"), py::arg("threads"), py::arg("derivatives") = false);
  m.def("scene_directory", &SceneDirectory, "The folder of the bundled scene files.");
  m.def(
      "_scene_variant_error",
      [](const Scene& scene, const std::string& variant) -> std::string {
        try {  // as `compare` probes: the stepper made (qp-lcp needs regularization, ...)
          Scene probe(scene);
          probe.ApplyVariant(variant);
          MakeStepper(probe);
          return "";
        } catch (const InputError& e) {
          return e.what();
        }
      },
      py::arg("scene"), py::arg("variant"),
      "Why the scene takes no such solver variant (its stepper's grammar, or its own settings), "
      "or '' if it takes it.");
}
