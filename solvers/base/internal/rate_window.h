// The rate of an iterative method's best error over windows of its iterations: the stop that
// the rate_window options of NSGS and nsgs-velocity ask for, where a caller with other methods
// to try (the auto sequence) stops one whose rate would not reach the tolerance within its
// budget.
#ifndef NCPKIT_SOLVERS_BASE_INTERNAL_RATE_WINDOW_H_
#define NCPKIT_SOLVERS_BASE_INTERNAL_RATE_WINDOW_H_

#include <cmath>
#include <limits>
#include <string>

#include "solvers/base/internal/message_buffer.h"

namespace ncpkit::internal {

class RateWindow {
 public:
  // A window opened at iteration `start` with best error `start_error`.
  RateWindow(int start, double start_error) : start_(start), start_error_(start_error) {}

  // Ends the window at `iteration` once it spans at least `window` iterations (never for
  // window <= 0), then opens the next: true when the best error's rate over it would not reach
  // `tolerance` within the `max_iterations - iteration` left.
  bool Stalled(int window, double tolerance, int max_iterations, int iteration, double best_error) {
    if (window <= 0 || iteration - start_ < window) return false;
    measured_over_ = iteration - start_;
    const double rate = std::pow(best_error / start_error_, 1.0 / measured_over_);
    needed_ = rate < 1.0 ? std::log(tolerance / best_error) / std::log(rate)
                         : std::numeric_limits<double>::infinity();
    stalled_ = !(needed_ <= max_iterations - iteration);
    start_ = iteration;
    start_error_ = best_error;
    return stalled_;
  }
  bool stalled() const { return stalled_; }
  // Appends the reason of a stop, e.g. " (stopped: at its rate over the last 50 sweeps it would
  // need 2e+04 more)", with `unit` naming the iterations.
  void Explain(const char* unit, std::string* message) const {
    MessageBuffer text;
    text.Text(" (stopped: at its rate over the last ").Integer(measured_over_).Text(" ");
    text.Text(unit).Text(" it would need ").Number(needed_).Text(" more)");
    text.AppendTo(message);
  }

 private:
  int start_;
  double start_error_;
  bool stalled_ = false;
  int measured_over_ = 0;
  double needed_ = 0.0;
};

}  // namespace ncpkit::internal

#endif  // NCPKIT_SOLVERS_BASE_INTERNAL_RATE_WINDOW_H_
