#include "solvers/mcp/equilibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ncpkit {
namespace {

// 2^round(-log2(norm) / 2), the power of two nearest to 1 / sqrt(norm) on a log scale (1 for a
// zero or non-finite norm, and for norms in [1/2, 2]).
double InverseSqrtPowerOfTwo(double norm) {
  if (!(norm > 0.0) || !std::isfinite(norm)) return 1.0;
  return std::ldexp(1.0, static_cast<int>(std::lround(-0.5 * std::log2(norm))));
}

void Norms(const Eigen::SparseMatrix<double>& J, const Eigen::VectorXd* row,
           const Eigen::VectorXd* col, Eigen::VectorXd* row_norms, Eigen::VectorXd* col_norms) {
  row_norms->setZero(J.rows());
  col_norms->setZero(J.cols());
  for (Eigen::Index j = 0; j < J.outerSize(); ++j) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(J, j); it; ++it) {
      double a = std::abs(it.value());
      if (row) a *= (*row)[it.row()] * (*col)[j];
      (*row_norms)[it.row()] = std::max((*row_norms)[it.row()], a);
      (*col_norms)[j] = std::max((*col_norms)[j], a);
    }
  }
}

double Spread(const Eigen::VectorXd& norms) {
  double low = std::numeric_limits<double>::infinity(), high = 0.0;
  for (Eigen::Index i = 0; i < norms.size(); ++i) {
    if (norms[i] > 0.0) {
      low = std::min(low, norms[i]);
      high = std::max(high, norms[i]);
    }
  }
  return high > 0.0 ? high / low : 1.0;
}

}  // namespace

double EquilibrationSpread(const Eigen::SparseMatrix<double>& J, Eigen::VectorXd* row_norms,
                           Eigen::VectorXd* col_norms) {
  Norms(J, nullptr, nullptr, row_norms, col_norms);
  return std::max(Spread(*row_norms), Spread(*col_norms));
}

void RuizEquilibration(const Eigen::SparseMatrix<double>& J, Eigen::VectorXd* row,
                       Eigen::VectorXd* col, int iterations) {
  row->setOnes(J.rows());
  col->setOnes(J.cols());
  Eigen::VectorXd row_norms, col_norms;
  for (int k = 0; k < iterations; ++k) {
    Norms(J, row, col, &row_norms, &col_norms);
    bool balanced = true;
    for (Eigen::Index i = 0; i < row_norms.size(); ++i) {
      const double factor = InverseSqrtPowerOfTwo(row_norms[i]);
      balanced = balanced && factor == 1.0;
      (*row)[i] *= factor;
    }
    for (Eigen::Index j = 0; j < col_norms.size(); ++j) {
      const double factor = InverseSqrtPowerOfTwo(col_norms[j]);
      balanced = balanced && factor == 1.0;
      (*col)[j] *= factor;
    }
    if (balanced) break;
  }
}

ScaledMcp::ScaledMcp(const MixedComplementarityProblem& problem, const Eigen::VectorXd& row,
                     const Eigen::VectorXd& col)
    : problem_(problem),
      row_(row),
      col_(col),
      lower_(problem.lower().cwiseQuotient(col)),
      upper_(problem.upper().cwiseQuotient(col)),
      z_(problem.size()) {}

void ScaledMcp::DefaultStart(Eigen::VectorXd* y) const {
  problem_.DefaultStart(y);
  *y = y->cwiseQuotient(col_);
}

bool ScaledMcp::Evaluate(const Eigen::VectorXd& y, Eigen::VectorXd* G,
                         Eigen::SparseMatrix<double>* J) const {
  z_ = col_.cwiseProduct(y);
  if (!problem_.Evaluate(z_, G, J)) return false;
  *G = G->cwiseProduct(row_);
  if (J) {
    for (Eigen::Index j = 0; j < J->outerSize(); ++j) {
      for (Eigen::SparseMatrix<double>::InnerIterator it(*J, j); it; ++it) {
        it.valueRef() *= row_[it.row()] * col_[j];
      }
    }
  }
  return true;
}

}  // namespace ncpkit
