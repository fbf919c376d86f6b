#include "solvers/mcp_examples.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace ncpkit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Eigen::VectorXd Vec(std::initializer_list<double> values) {
  Eigen::VectorXd v(values.size());
  int i = 0;
  for (double x : values) v[i++] = x;
  return v;
}

// Kojima-Shindo (kojshin) and its Josephy variant differ in F2 and F3 only.
struct KojimaShindo {
  bool josephy;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const T* v = x[0];
    r[0] = T(3) * v[0] * v[0] + T(2) * v[0] * v[1] + T(2) * v[1] * v[1] + v[2] + T(3) * v[3] - T(6);
    r[1] =
        T(2) * v[0] * v[0] + v[0] + v[1] * v[1] + T(josephy ? 3 : 10) * v[2] + T(2) * v[3] - T(2);
    r[2] = T(3) * v[0] * v[0] + v[0] * v[1] + T(2) * v[1] * v[1] + T(2) * v[2] +
           T(josephy ? 3 : 9) * v[3] - T(josephy ? 1 : 9);
    r[3] = v[0] * v[0] + T(3) * v[1] * v[1] + T(2) * v[2] + T(3) * v[3] - T(3);
    return true;
  }
};

struct PathLinear {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const T* v = x[0];
    r[0] = -v[2] - v[3] + T(2);
    r[1] = v[2] - T(2) * v[3] + T(2);
    r[2] = v[0] - v[1] + T(2) * v[2] - T(2) * v[3] - T(2);
    r[3] = v[0] + T(2) * v[1] - T(2) * v[2] + T(4) * v[3] - T(6);
    return true;
  }
};

struct PathNonlinear {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const T* v = x[0];
    r[0] = -v[2] * v[2] - v[3] + T(2);
    r[1] = v[2] * v[2] * v[2] - T(2) * v[3] * v[3] + T(2);
    r[2] = v[0] * v[0] * v[0] * v[0] * v[0] - v[1] + T(2) * v[2] - T(2) * v[3] - T(2);
    r[3] = v[0] + T(2) * v[1] * v[1] * v[1] - T(2) * v[2] + T(4) * v[3] - T(6);
    return true;
  }
};

struct Billups {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    r[0] = (x[0][0] - T(1)) * (x[0][0] - T(1)) - T(1.01);
    return true;
  }
};

struct DoubleRoot {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    r[0] = x[0][0] * x[0][0] - T(2) * x[0][0] + T(1);
    return true;
  }
};

struct Rosenbrock {
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    const T* v = x[0];
    r[0] = T(200) * v[0] * (v[1] - v[0] * v[0]) + T(1) - v[0];
    r[1] = T(100) * (v[0] * v[0] - v[1]);
    return true;
  }
};

// Siconos MCP_2_test1: M tridiagonal (2 on the diagonal, 1 off it), q_i = 7 - i; split into an
// equality block (5 free variables) and an NCP block (5), each residual reading both.
struct TridiagonalRows {
  int first_row;
  template <class T>
  bool operator()(T const* const* x, T* r) const {
    for (int k = 0; k < 5; ++k) {
      const int i = first_row + k;
      auto value = [&](int j) { return j < 5 ? x[0][j] : x[1][j - 5]; };
      T sum = T(2) * value(i) + T(7 - i);
      if (i > 0) sum += value(i - 1);
      if (i < 9) sum += value(i + 1);
      r[k] = sum;
    }
    return true;
  }
};

McpExample Single(std::string name, int size, double lower, double upper) {
  McpExample e;
  e.name = std::move(name);
  e.problem = std::make_unique<ProblemBuilder>();
  e.problem->set_name(e.name);
  e.problem->AddVariableBlock(size, lower, upper, 0.0);
  return e;
}

}  // namespace

std::vector<McpExample> McpExamples() {
  std::vector<McpExample> examples;
  const std::vector<Eigen::VectorXd> mcplib_starts = {
      Vec({0, 0, 0, 0}), Vec({1, 1, 1, 1}), Vec({100, 100, 100, 100}), Vec({1, 0, 1, 0}),
      Vec({1, 0, 0, 0}), Vec({0, 1, 1, 0}), Vec({0, 1, 0, 1}),         Vec({1.25, 0, 0, 0.5})};
  {
    McpExample e = Single("kojshin", 4, 0.0, kInf);
    e.problem->AddResidualBlock<4, 4>(KojimaShindo{false}, 0, {0});
    e.starts = mcplib_starts;
    e.solutions = {Vec({std::sqrt(6.0) / 2, 0, 0, 0.5}), Vec({1, 0, 3, 0})};
    examples.push_back(std::move(e));
  }
  {
    McpExample e = Single("josephy", 4, 0.0, kInf);
    e.problem->AddResidualBlock<4, 4>(KojimaShindo{true}, 0, {0});
    e.starts = mcplib_starts;
    e.solutions = {Vec({std::sqrt(1.5), 0, 0, 0.5})};
    examples.push_back(std::move(e));
  }
  {
    McpExample e = Single("path_lcp", 4, 0.0, 10.0);
    e.problem->AddResidualBlock<4, 4>(PathLinear{}, 0, {0});
    e.starts = {Vec({0, 0, 0, 0}), Vec({-10, 10, -5, 5})};
    e.solutions = {Vec({2.8, 0, 0.8, 1.2})};
    examples.push_back(std::move(e));
  }
  {
    McpExample e = Single("path_nonlinear", 4, 0.0, 10.0);
    e.problem->AddResidualBlock<4, 4>(PathNonlinear{}, 0, {0});
    e.starts = {Vec({1, 1, 1, 1})};
    e.solutions = {Vec({1.28475, 0.972916, 0.909376, 1.17304})};
    examples.push_back(std::move(e));
  }
  {
    McpExample e = Single("billups", 1, 0.0, kInf);
    e.problem->AddResidualBlock<1, 1>(Billups{}, 0, {0});
    e.starts = {Vec({0})};
    e.solutions = {Vec({1 + std::sqrt(1.01)})};
    examples.push_back(std::move(e));
  }
  {
    McpExample e = Single("double_root", 1, -kInf, kInf);
    e.problem->AddResidualBlock<1, 1>(DoubleRoot{}, 0, {0});
    e.starts = {Vec({0})};
    e.solutions = {Vec({1})};
    examples.push_back(std::move(e));
  }
  {
    McpExample e = Single("rosenbrock_box", 2, 0.0, 0.0);
    // Fixed boxes (CompEcon draws them at random): one containing (1, 1), one that cuts it off.
    e.problem = std::make_unique<ProblemBuilder>();
    e.problem->set_name(e.name);
    e.problem->AddVariableBlock(Vec({-1, 0.5}), Vec({2, 3}), Vec({0.5, 2}));
    e.problem->AddResidualBlock<2, 2>(Rosenbrock{}, 0, {0});
    e.starts = {Vec({0.5, 2}), Vec({-1, 0.5}), Vec({2, 3})};
    // Several box solutions besides (1, 1) (e.g. at corners): checked by residual only.
    examples.push_back(std::move(e));
  }
  {
    McpExample e;
    e.name = "siconos_mcp10";
    e.problem = std::make_unique<ProblemBuilder>();
    e.problem->set_name(e.name);
    const int free = e.problem->AddVariableBlock(5, -kInf, kInf, 0.0);
    const int comp = e.problem->AddVariableBlock(5, 0.0, kInf, 0.0);
    e.problem->AddResidualBlock<5, 5, 5>(TridiagonalRows{0}, free, {free, comp});
    e.problem->AddResidualBlock<5, 5, 5>(TridiagonalRows{5}, comp, {free, comp});
    e.starts = {Eigen::VectorXd::Zero(10)};
    examples.push_back(std::move(e));  // no reference solution: checked by residual
  }
  return examples;
}

McpExample McpExampleByName(const std::string& name) {
  for (McpExample& e : McpExamples()) {
    if (e.name == name) return std::move(e);
  }
  throw std::invalid_argument("no MCP example named '" + name + "'");
}

}  // namespace ncpkit
