// Constants shared by every layer.
#ifndef NCPKIT_SOLVERS_BASE_CONSTANTS_H_
#define NCPKIT_SOLVERS_BASE_CONSTANTS_H_

#include <limits>

#include "solvers/base/constants.h"

namespace ncpkit {

// An absent bound of a complementarity problem (l_i = -kInf, u_i = kInf), and the value of a
// measure that has not been computed.
inline constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace ncpkit

#endif  // NCPKIT_SOLVERS_BASE_CONSTANTS_H_
