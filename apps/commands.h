// The subcommands of the ncpkit program. Each returns the process exit status:
// 0 every solver converged, 1 some solver did not, 2 usage or input error (thrown as
// UsageError, InputError or std::invalid_argument and reported by main).
#ifndef NCPKIT_APPS_COMMANDS_H_
#define NCPKIT_APPS_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

namespace ncpkit {

// ncpkit solve FILE [--q QFILE] [--solver NAME|all] [--tol T] [--max-iter N] [--json]
int RunSolveCommand(const std::vector<std::string>& args, std::ostream& out);
// ncpkit simulate SCENE [--solver NAME] [--duration T] [--out traj.csv] [--json]
int RunSimulateCommand(const std::vector<std::string>& args, std::ostream& out);
// ncpkit view SCENE TRAJ.csv --html OUT.html: the viewer page of a trajectory CSV.
int RunViewCommand(const std::vector<std::string>& args, std::ostream& out);
// ncpkit mjcf SCENE [--out model.xml]: the scene written as a MuJoCo MJCF model (WriteMjcf).
int RunMjcfCommand(const std::vector<std::string>& args, std::ostream& out);
// ncpkit compare SCENE... [--solvers a,b,...] [--csv FILE] [--duration T]
int RunCompareCommand(const std::vector<std::string>& args, std::ostream& out);
// ncpkit fclib DIR_OR_FILES... [--solvers a,b] [--tol T] [--time-limit S] [--csv F]
// [--profile F.svg] [--json]: every frictional contact problem with every chosen solver. Exit 0
// when each problem was solved by at least one solver, 1 otherwise.
int RunFclibCommand(const std::vector<std::string>& args, std::ostream& out);
// ncpkit lcp-demo: every bundled LCP with every LCP solver.
int RunLcpDemoCommand(const std::vector<std::string>& args, std::ostream& out);
// ncpkit solvers: the solver registry as a Markdown table (docs/solvers.md has it too).
int RunSolversCommand(const std::vector<std::string>& args, std::ostream& out);
// ncpkit campaign run|report ...: runs Python's ncpkit.campaign (docs/campaigns.md) with this
// program as the one its runs call; returns only on an error (thrown).
int RunCampaignCommand(const std::vector<std::string>& args, std::ostream& out);
// ncpkit version [--json]: the version and the commit of the sources.
int RunVersionCommand(const std::vector<std::string>& args, std::ostream& out);
// ncpkit (no arguments): the built-in demo, the paper scenes with every solver variant.
int RunDemoCommand(const std::vector<std::string>& args, std::ostream& out);

std::string UsageText();

}  // namespace ncpkit

#endif  // NCPKIT_APPS_COMMANDS_H_
