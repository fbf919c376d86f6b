// The small MCPs of ../shared/data/mcp/PROBLEMS.md, posed with the ProblemBuilder.
#ifndef NCPKIT_SOLVERS_MCP_EXAMPLES_H_
#define NCPKIT_SOLVERS_MCP_EXAMPLES_H_

#include <memory>
#include <string>
#include <vector>

#include "solvers/problem_builder.h"

namespace ncpkit {

struct McpExample {
  std::string name;
  std::unique_ptr<ProblemBuilder> problem;
  std::vector<Eigen::VectorXd> starts;     // starting points to test from
  std::vector<Eigen::VectorXd> solutions;  // known solutions (any of them is acceptable)
};

// kojshin, josephy, path_lcp (box [0, 10]), path_nonlinear, billups, double_root,
// rosenbrock_box, siconos_mcp10. See PROBLEMS.md for their sources and known answers.
std::vector<McpExample> McpExamples();
McpExample McpExampleByName(const std::string& name);

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_MCP_EXAMPLES_H_
