// The global form of the frictional contact problem (M, H, f, w, mu): its reduction to the local
// form, its validation, the errors it reports, and nsgs-velocity against the local solvers on
// the same problems.
#include "solvers/friction/global_friction_problem.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "solvers/base/input_error.h"
#include "solvers/friction/friction_auto.h"
#include "solvers/friction/friction_newton.h"
#include "solvers/friction/nonsmooth_gauss_seidel.h"
#include "solvers/friction/velocity_gauss_seidel.h"
#include "solvers/registry/solver_registry.h"
#include "tests/solvers/friction_scenes.h"

namespace ncpkit {
namespace {

TEST_CASE(
    "global frictional contact problem: the local form is W = H^T M^-1 H, q = H^T M^-1 f + w") {
  for (const int block : {6, 3, 1}) {
    CAPTURE(block);
    const test::RandomScene scene = test::MakeScene(7, 4, 0.4, 3, block);
    const GlobalFrictionContactProblem problem = test::Make(scene);
    CHECK(problem.num_blocks() == 4);
    CHECK(problem.num_dofs() == 4 * block);
    const Eigen::MatrixXd Minv = Eigen::MatrixXd(scene.M).inverse();
    const Eigen::MatrixXd H = scene.H;
    const Eigen::MatrixXd W = H.transpose() * Minv * H;
    const Eigen::VectorXd q = H.transpose() * Minv * scene.f + scene.w;
    FrictionContactProblem local;
    problem.Reduce(&local);
    CHECK((Eigen::MatrixXd(local.W_columns()) - W).cwiseAbs().maxCoeff() <= 1e-12 * W.norm());
    CHECK((local.q() - q).norm() <= 1e-12 * q.norm());
    CHECK(problem.local_q_norm() == doctest::Approx(q.norm()).epsilon(1e-12));
    // v and u at a point, against the dense formulas.
    Eigen::VectorXd r(21), v, u;
    for (int i = 0; i < 21; ++i) r[i] = std::sin(1.0 + i);
    problem.Velocity(r, &v);
    problem.ContactVelocity(v, &u);
    CHECK((v - Minv * (H * r + scene.f)).norm() <= 1e-12 * v.norm());
    CHECK((u - (W * r + q)).norm() <= 1e-11 * u.norm());
    // The same errors as the local form's at every point.
    const FrictionErrors global = ComputeFrictionErrors(problem, r);
    const FrictionErrors reduced = ComputeFrictionErrors(local, r);
    CHECK(global.fclib == doctest::Approx(reduced.fclib).epsilon(1e-12));
    CHECK(global.siconos == doctest::Approx(reduced.siconos).epsilon(1e-12));
  }
}

TEST_CASE("global frictional contact problem: a point of the wrong size has infinite errors") {
  const GlobalFrictionContactProblem problem = test::Make(test::MakeScene(4, 3, 0.3, 5));
  FrictionContactProblem local;
  problem.Reduce(&local);
  for (const Eigen::Index size : {Eigen::Index{0}, Eigen::Index{11}, Eigen::Index{13}}) {
    CAPTURE(size);
    const Eigen::VectorXd r = Eigen::VectorXd::Zero(size);
    for (const FrictionErrors& e :
         {ComputeFrictionErrors(problem, r), ComputeFrictionErrors(local, r)}) {
      CHECK(std::isinf(e.fclib));
      CHECK(std::isinf(e.siconos));
      CHECK(std::isinf(e.natural_map_norm));
    }
  }
}

TEST_CASE("global frictional contact problem: built block by block, as a time-stepper does") {
  // The same problem built with AddBlock / AddContact / AddContactBlock, four times into one
  // object (the storage reused; the last two after Reserve() of the sizes it takes and of sizes
  // it does not, negative and beyond kMaxBlockSize), equals the one built from the sparse
  // matrices.
  const test::RandomScene scene = test::MakeScene(5, 3, 0.5, 7);
  const GlobalFrictionContactProblem reference = test::Make(scene);
  GlobalFrictionContactProblem built;
  for (int round = 0; round < 4; ++round) {
    built.Clear();
    if (round == 2) built.Reserve(3, 5, 6);
    if (round == 3) built.Reserve(-1, -7, 1000);
    const Eigen::MatrixXd M = scene.M, H = scene.H;
    for (int k = 0; k < 3; ++k) {
      const Eigen::MatrixXd block = M.block(6 * k, 6 * k, 6, 6);
      if (round % 2 == 0) {
        built.AddBlock(block, scene.f.segment(6 * k, 6));
      } else {
        built.AddBlock(block, block.inverse(), scene.f.segment(6 * k, 6));
      }
    }
    for (int a = 0; a < 5; ++a) {
      built.AddContact(scene.mu[a], scene.w.segment<3>(3 * a));
      for (int k = 0; k < 3; ++k) {
        const Eigen::MatrixXd rows = H.block(6 * k, 3 * a, 6, 3);
        if (!rows.isZero(0.0)) built.AddContactBlock(k, rows);
      }
    }
    built.Finalize();
    Eigen::VectorXd r = Eigen::VectorXd::LinSpaced(15, -1.0, 2.0), v1, v2, u1, u2;
    reference.Velocity(r, &v1);
    built.Velocity(r, &v2);
    reference.ContactVelocity(v1, &u1);
    built.ContactVelocity(v2, &u2);
    CHECK((v1 - v2).norm() <= 1e-13 * v1.norm());
    CHECK((u1 - u2).norm() <= 1e-13 * u1.norm());
  }
}

TEST_CASE("global frictional contact problem: malformed data is refused, naming what") {
  const test::RandomScene scene = test::MakeScene(4, 3, 0.5, 11);
  const auto refuses = [](const test::RandomScene& s, const char* what) {
    CAPTURE(what);
    CHECK_THROWS_WITH_AS(test::Make(s), doctest::Contains(what), InputError);
  };
  test::RandomScene s = scene;
  s.mu[2] = -0.1;
  refuses(s, "mu(2)");
  s = scene;
  s.w[5] = NAN;
  refuses(s, "w(5)");
  // Each kind of bad entry alone, past the first contact (the checks pass over all contacts at
  // once before naming one).
  s = scene;
  s.mu[1] = NAN;
  refuses(s, "mu(1)");
  s = scene;
  s.mu[2] = INFINITY;
  refuses(s, "mu(2)");
  s = scene;
  s.w[7] = -INFINITY;
  refuses(s, "w(7)");
  s = scene;
  s.f[4] = INFINITY;
  refuses(s, "f(4)");
  s = scene;
  s.f.resize(17);
  refuses(s, "expected n x n");
  s = scene;
  s.M.coeffRef(0, 7) = 0.5;  // couples bodies 0 and 1: not block diagonal within 6 rows
  s.M.coeffRef(7, 0) = 0.5;
  CHECK_NOTHROW(test::Make(s));  // one 12-row block, still block diagonal
  s.M.coeffRef(0, 17) = 0.5;     // all three bodies in one block: 18 rows, still allowed
  s.M.coeffRef(17, 0) = 0.5;
  CHECK_NOTHROW(test::Make(s));
  s = scene;
  s.M.coeffRef(3, 3) = -50.0;  // not positive definite
  refuses(s, "not positive definite");
  s = scene;
  s.M.coeffRef(1, 2) += 1.0;  // not symmetric
  refuses(s, "symmetric");
  s = scene;
  s.H.coeffRef(2, 4) = NAN;
  refuses(s, "non-finite");
  // A block of M larger than kMaxBlockSize: the local form is the way.
  const int n = GlobalFrictionContactProblem::kMaxBlockSize + 1;
  Eigen::MatrixXd big = Eigen::MatrixXd::Identity(n, n);
  big(0, n - 1) = big(n - 1, 0) = 0.1;
  CHECK_THROWS_WITH_AS(
      GlobalFrictionContactProblem(big.sparseView(), Eigen::SparseMatrix<double>(n, 3),
                                   Eigen::VectorXd::Zero(n), Eigen::VectorXd::Zero(3),
                                   Eigen::VectorXd::Constant(1, 0.5)),
      doctest::Contains("local form"), InputError);
  // A contact whose rows name one block twice.
  GlobalFrictionContactProblem twice;
  twice.AddBlock(Eigen::MatrixXd::Identity(6, 6), Eigen::VectorXd::Zero(6));
  twice.AddBlock(Eigen::MatrixXd::Identity(6, 6), Eigen::VectorXd::Zero(6));
  for (int c = 0; c < 3; ++c) {
    twice.AddContact(0.5, Eigen::Vector3d::Zero());
    twice.AddContactBlock(0, Eigen::MatrixXd::Ones(6, 3));
    twice.AddContactBlock(c == 2 ? 0 : 1, Eigen::MatrixXd::Ones(6, 3));
  }
  CHECK_THROWS_WITH_AS(twice.Finalize(), doctest::Contains("contact 2 names block 0 twice"),
                       InputError);
  // A contact on three blocks: allowed when they differ, refused when one comes back.
  for (const int last : {2, 0}) {
    GlobalFrictionContactProblem three;
    for (int k = 0; k < 3; ++k) {
      three.AddBlock(Eigen::MatrixXd::Identity(6, 6), Eigen::VectorXd::Zero(6));
    }
    three.AddContact(0.5, Eigen::Vector3d::Zero());
    for (const int block : {0, 1, last}) three.AddContactBlock(block, Eigen::MatrixXd::Ones(6, 3));
    if (last == 2) {
      CHECK_NOTHROW(three.Finalize());
    } else {
      CHECK_THROWS_WITH_AS(three.Finalize(), doctest::Contains("contact 0 names block 0 twice"),
                           InputError);
    }
  }
  // A caller's inverse that is not one.
  GlobalFrictionContactProblem built;
  built.AddBlock(Eigen::MatrixXd::Identity(6, 6), 2.0 * Eigen::MatrixXd::Identity(6, 6),
                 Eigen::VectorXd::Zero(6));
  CHECK_THROWS_WITH_AS(built.Finalize(), doctest::Contains("not its inverse"), InputError);
  // A rigid body's diag(m I, inertia) with its exact inverse, the inertia indefinite.
  Eigen::MatrixXd indefinite = Eigen::MatrixXd::Identity(6, 6);
  indefinite(4, 4) = -2.0;
  GlobalFrictionContactProblem rigid;
  rigid.AddBlock(indefinite, indefinite.inverse(), Eigen::VectorXd::Zero(6));
  CHECK_THROWS_WITH_AS(rigid.Finalize(), doctest::Contains("not positive definite"), InputError);
  indefinite(4, 4) = 2.0;  // and positive definite: accepted
  GlobalFrictionContactProblem fine;
  fine.AddBlock(indefinite, indefinite.inverse(), Eigen::VectorXd::Zero(6));
  CHECK_NOTHROW(fine.Finalize());
  // Rigid bodies' blocks with their inverses, each spoiled in one place the checks on the two
  // 3 x 3 blocks read (and one in a corner they require to be zero).
  const auto finalized = [](const Eigen::MatrixXd& mass, const Eigen::MatrixXd& inverse) {
    GlobalFrictionContactProblem problem;
    problem.AddBlock(Eigen::MatrixXd::Identity(6, 6), Eigen::MatrixXd::Identity(6, 6),
                     Eigen::VectorXd::Zero(6));
    problem.AddBlock(mass, inverse, Eigen::VectorXd::Zero(6));
    problem.Finalize();
  };
  Eigen::MatrixXd body = Eigen::MatrixXd::Zero(6, 6);
  body.topLeftCorner<3, 3>() = 2.0 * Eigen::Matrix3d::Identity();
  body.bottomRightCorner<3, 3>() << 3.0, 0.5, 0.1, 0.5, 2.0, 0.2, 0.1, 0.2, 1.0;
  CHECK_NOTHROW(finalized(body, body.inverse()));
  Eigen::MatrixXd wrong = body.inverse();
  wrong(5, 4) *= 1.001;  // C^-1 alone off (and asymmetric: the inverse need not be symmetric)
  CHECK_THROWS_WITH_AS(finalized(body, wrong), doctest::Contains("not its inverse"), InputError);
  Eigen::MatrixXd skew = body;
  skew(3, 4) += 1e-6;  // C not symmetric
  CHECK_THROWS_WITH_AS(finalized(skew, skew.inverse()), doctest::Contains("symmetric"), InputError);
  Eigen::MatrixXd nan_inverse = body.inverse();
  nan_inverse(1, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(finalized(body, nan_inverse), InputError);
  Eigen::MatrixXd infinite = body;
  infinite(0, 0) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(finalized(infinite, body.inverse()), doctest::Contains("finite"),
                       InputError);
  Eigen::MatrixXd coupled = body;  // a corner not zero: the general checks accept it
  coupled(0, 4) = coupled(4, 0) = 0.3;
  CHECK_NOTHROW(finalized(coupled, coupled.inverse()));
  Eigen::MatrixXd negative = body;
  negative.bottomRightCorner<3, 3>() *= -1.0;
  CHECK_THROWS_WITH_AS(finalized(negative, negative.inverse()),
                       doctest::Contains("not positive definite"), InputError);
  // An inverse of the wrong size is refused before anything of its block is kept.
  GlobalFrictionContactProblem sizes;
  CHECK_THROWS_WITH_AS(
      sizes.AddBlock(body, Eigen::MatrixXd::Identity(5, 5), Eigen::VectorXd::Zero(6)),
      doctest::Contains("but its inverse 5 x 5"), InputError);
  CHECK(sizes.num_blocks() == 0);
}

TEST_CASE("nsgs-velocity: the same reactions as NSGS on the local form, and every solver agrees") {
  // A sweep of nsgs-velocity is one of NSGS on W up to rounding: the same iterates, so the same
  // answer and sweep count; every friction solver of the registry solves the global form
  // through its local one.
  int solved = 0;
  for (unsigned seed = 1; seed <= 10; ++seed) {
    CAPTURE(seed);
    const test::RandomScene scene = test::MakeScene(12, 6, 0.3, seed);
    const GlobalFrictionContactProblem problem = test::Make(scene);
    FrictionContactProblem local;
    problem.Reduce(&local);
    NonsmoothGaussSeidel::Options nsgs_options;
    nsgs_options.tolerance = 1e-10;
    nsgs_options.max_sweeps = 2000;
    Eigen::VectorXd r_local, r_global;
    const auto local_summary = NonsmoothGaussSeidel(nsgs_options).Solve(local, &r_local);
    VelocityGaussSeidel::Options options;
    options.tolerance = 1e-10;
    options.max_sweeps = 2000;
    const auto global_summary = VelocityGaussSeidel(options).Solve(problem, &r_global);
    CHECK(global_summary.IsSolved() == local_summary.IsSolved());
    if (!local_summary.IsSolved()) continue;
    ++solved;
    CHECK(global_summary.natural_residual <= 1e-10);
    CHECK(global_summary.natural_residual ==
          doctest::Approx(FclibError(local, r_global)).epsilon(1e-6));
    CHECK((r_global - r_local).norm() <= 1e-6 * (1.0 + r_local.norm()));
    // Sweep counts agree to the error checks' schedule (nsgs checks after every sweep).
    CHECK(global_summary.iterations >= local_summary.iterations);
    CHECK(global_summary.iterations <= 2 * local_summary.iterations + 20);
    for (const std::string& name : SolverNames(ProblemKind::GlobalFriction)) {
      CAPTURE(name);
      SolverOptions solver_options;
      solver_options.tolerance = 1e-8;
      const auto solver = CreateSolver(name, ProblemKind::GlobalFriction, solver_options);
      Eigen::VectorXd r;
      const SolverSummary& summary = solver->Solve(problem, &r);
      if (!summary.IsSolved()) continue;  // single solvers may fail; recorded on FCLib files
      CHECK(FclibError(local, r) <= 1e-8);
    }
  }
  CHECK(solved >= 8);
}

TEST_CASE("nsgs-velocity turns to backward and forward sweeps where one order cycles") {
  const GlobalFrictionContactProblem problem = test::SpinningOctagon();
  FrictionContactProblem local;
  problem.Reduce(&local);
  const std::string turn = "; backward and forward sweeps in turn from sweep ";
  for (const bool reverse : {false, true}) {
    CAPTURE(reverse);
    VelocityGaussSeidel::Options options;
    options.tolerance = 1e-8;
    options.max_sweeps = 2000;
    options.reverse_on_stall = reverse;
    Eigen::VectorXd r;
    const VelocityGaussSeidel::Summary summary = VelocityGaussSeidel(options).Solve(problem, &r);
    CAPTURE(summary.message);
    CHECK(summary.natural_residual == doctest::Approx(FclibError(local, r)).epsilon(1e-6));
    const size_t at = summary.message.find(turn);
    if (reverse) {
      CHECK(summary.IsSolved());
      REQUIRE(at != std::string::npos);
      // At the first check kCycleSweeps after the last that lowered the best error.
      const int turned = std::stoi(summary.message.substr(at + turn.size()));
      CHECK(turned > VelocityGaussSeidel::kCycleSweeps);
      CHECK(turned < summary.iterations);
      CHECK(summary.iterations < 4 * VelocityGaussSeidel::kCycleSweeps);
    } else {
      CHECK(summary.status == Status::MaxIterations);
      CHECK(summary.natural_residual > 1e-3);
      CHECK(at == std::string::npos);
    }
  }
  // (NSGS on the same problem, saved from the explicit stepper: fclib_problems_test.cc.)
}

TEST_CASE("nsgs-velocity: warm starts, budgets, non-finite starts, and local problems refused") {
  const test::RandomScene scene = test::MakeScene(10, 5, 0.5, 21);
  const GlobalFrictionContactProblem problem = test::Make(scene);
  VelocityGaussSeidel::Options options;
  options.tolerance = 1e-10;
  Eigen::VectorXd r;
  const auto first = VelocityGaussSeidel(options).Solve(problem, &r);
  REQUIRE(first.IsSolved());
  CHECK(first.take_off + first.sticking + first.sliding == 10);
  // From its own answer: no sweep.
  options.warm_start = true;
  Eigen::VectorXd again = r;
  const auto warm = VelocityGaussSeidel(options).Solve(problem, &again);
  CHECK(warm.IsSolved());
  CHECK(warm.iterations == 0);
  // One solver in turn on problems of two sizes, one solve ended by its warm start before any
  // sweep: every answer is a fresh solver's, to the bit.
  {
    const GlobalFrictionContactProblem small = test::Make(test::MakeScene(4, 2, 0.5, 22));
    VelocityGaussSeidel shared(options);
    const auto cold = [&](const GlobalFrictionContactProblem& p, VelocityGaussSeidel* solver) {
      Eigen::VectorXd z;
      const int sweeps = solver->Solve(p, &z).iterations;
      return std::make_pair(z, sweeps);
    };
    const auto small_first = cold(small, &shared);
    CHECK(small_first.second > 0);
    Eigen::VectorXd at_answer = r;
    CHECK(shared.Solve(problem, &at_answer).iterations == 0);
    CHECK(at_answer == r);
    VelocityGaussSeidel fresh(options);
    const auto large = cold(problem, &shared);
    CHECK(large == cold(problem, &fresh));
    CHECK(cold(small, &shared) == small_first);
  }
  // A budget of two sweeps from zero: not solved, says so with the error reached.
  options.warm_start = false;
  options.max_sweeps = 2;
  Eigen::VectorXd capped;
  const auto budget = VelocityGaussSeidel(options).Solve(problem, &capped);
  CHECK(budget.status == Status::MaxIterations);
  CHECK(budget.iterations == 2);
  CHECK(budget.message.find("after 2 sweeps") != std::string::npos);
  CHECK(budget.natural_residual == doctest::Approx(FclibError(
                                       [&] {
                                         FrictionContactProblem local;
                                         problem.Reduce(&local);
                                         return local;
                                       }(),
                                       capped)));
  // A non-finite start is replaced by zero.
  options.max_sweeps = 10000;
  options.warm_start = true;
  Eigen::VectorXd bad = Eigen::VectorXd::Constant(30, NAN);
  CHECK(VelocityGaussSeidel(options).Solve(problem, &bad).IsSolved());
  // Invalid options come back as InvalidInput.
  options.relaxation = 2.5;
  Eigen::VectorXd x;
  CHECK(VelocityGaussSeidel(options).Solve(problem, &x).status == Status::InvalidInput);
  // The registry: nsgs-velocity takes the global form only.
  CHECK(IsSolverName("nsgs-velocity", ProblemKind::GlobalFriction));
  CHECK_FALSE(IsSolverName("nsgs-velocity", ProblemKind::Friction));
  CHECK_THROWS_AS(CreateSolver("nsgs-velocity", ProblemKind::Friction, SolverOptions()),
                  InputError);
  const auto solver = CreateSolver("nsgs-velocity", ProblemKind::GlobalFriction, SolverOptions());
  FrictionContactProblem local;
  problem.Reduce(&local);
  CHECK(solver->Solve(local, &x).status == Status::InvalidInput);
  // No contacts: solved at once.
  GlobalFrictionContactProblem empty;
  empty.AddBlock(Eigen::MatrixXd::Identity(6, 6), Eigen::VectorXd::Ones(6));
  empty.Finalize();
  CHECK(solver->Solve(empty, &x).IsSolved());
}

// Calls check(problem, its local form, push) on test::BoxColumn(count, seed, push) for seeds 1-20
// and pushes 0 (held), 0.5 (half what friction holds) and 3 (sliding).
template <class Check>
void ForEachBoxColumn(int count, const Check& check) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    for (double push : {0.0, 0.5, 3.0}) {
      CAPTURE(seed);
      CAPTURE(push);
      const GlobalFrictionContactProblem problem = test::BoxColumn(count, seed, push);
      FrictionContactProblem local;
      problem.Reduce(&local);
      check(problem, local, push);
    }
  }
}

TEST_CASE("nsgs-velocity: manifolds, a box face's corners solved as one block where they stick") {
  // One box on the ground is one manifold: held, its block's sticking solution is the answer
  // and the first sweep ends the solve; contact by contact, the corners trade friction
  // impulses that cancel out and the sweeps crawl (8 to 41 sweeps here). Pushed at half what
  // friction holds, the least-norm impulses can leave a corner's cone (the push loads the front
  // corners; seed 6): then the corners are solved one by one. Pushed beyond it, the box slides
  // and the sweeps are those without blocks.
  int one_sweep = 0;
  ForEachBoxColumn(1, [&](const GlobalFrictionContactProblem& problem,
                          const FrictionContactProblem& local, double push) {
    VelocityGaussSeidel::Options options;
    options.tolerance = 1e-10;
    options.stick_islands = false;  // the blocks alone
    Eigen::VectorXd blocks, single;
    const auto with = VelocityGaussSeidel(options).Solve(problem, &blocks);
    REQUIRE(with.IsSolved());
    CHECK(FclibError(local, blocks) <= 1e-10);
    const int block_sweeps = with.iterations, block_sliding = with.sliding;
    options.manifolds = false;
    const auto without = VelocityGaussSeidel(options).Solve(problem, &single);
    REQUIRE(without.IsSolved());
    if (push == 0.0) {
      CHECK(block_sweeps == 1);
      CHECK(without.iterations >= 8);
    } else if (push < 1.0) {
      CHECK(block_sweeps <= without.iterations);
      one_sweep += block_sweeps == 1;
    } else {
      // Sliding: no block is taken, so the sweeps are those without blocks, bit for bit.
      CHECK(block_sliding >= 1);
      CHECK(with.sticking == 0);  // sliding or, unloaded, taking off
      CHECK(block_sweeps == without.iterations);
      CHECK(blocks == single);
    }
  });
  CHECK(one_sweep >= 18);
}

TEST_CASE("nsgs-velocity: velocities over 1 MB (the prefetching sweeps) solve each part") {
  // 22,000 blocks of 6 rows (v of 1.06 MB, past the size where the sweeps fetch velocities
  // ahead) hold 200 boxes on the ground, at rest or pushed into sliding, every 110th block; the
  // other blocks carry no contact. Each box's reactions must solve its own problem.
  constexpr int kBoxes = 200, kSpacing = 110;
  GlobalFrictionContactProblem joint;
  std::vector<GlobalFrictionContactProblem> parts;
  const Eigen::Matrix<double, 6, 6> identity = Eigen::Matrix<double, 6, 6>::Identity();
  for (int j = 0; j < kBoxes; ++j) {
    parts.push_back(test::BoxColumn(1, static_cast<unsigned>(j + 1), 1.5 * (j % 3)));
    const GlobalFrictionContactProblem& part = parts.back();
    REQUIRE(part.num_blocks() == 1);
    for (int k = 0; k < kSpacing; ++k) {
      if (k != kSpacing / 2) {
        joint.AddBlock(identity, identity, Eigen::Matrix<double, 6, 1>::Zero());
        continue;
      }
      joint.AddBlock(Eigen::Map<const Eigen::Matrix<double, 6, 6>>(part.mass_data(0)),
                     part.InverseMass(0), part.f());
    }
  }
  for (int j = 0; j < kBoxes; ++j) {
    const GlobalFrictionContactProblem& part = parts[static_cast<size_t>(j)];
    for (int c = 0; c < part.num_contacts(); ++c) {
      joint.AddContact(part.mu()[c], part.w().segment<3>(3 * c));
      for (int p = part.piece_begin(c); p < part.piece_begin(c + 1); ++p) {
        joint.AddContactBlock(j * kSpacing + kSpacing / 2, part.PieceRows(p));
      }
    }
  }
  joint.Finalize();
  REQUIRE(8.0 * joint.num_dofs() > 1024.0 * 1024.0);
  VelocityGaussSeidel::Options options;
  options.tolerance = 1e-12;
  Eigen::VectorXd r;
  const auto summary = VelocityGaussSeidel(options).Solve(joint, &r);
  REQUIRE(summary.IsSolved());
  int offset = 0;
  for (const GlobalFrictionContactProblem& part : parts) {
    FrictionContactProblem local;
    part.Reduce(&local);
    CHECK(FclibError(local, r.segment(offset, part.size())) <= 1e-9);
    offset += part.size();
  }
}

TEST_CASE("nsgs-velocity: 2048 contacts or more of spheres and cubes (scaled records) solve") {
  // 300 columns of two cubes, 2400 contacts: the size from which the sweeps apply M^-1 H as H
  // times scaled changes. Each column's reactions must solve its own problem, which alone (8
  // contacts) is solved with M^-1 H kept; both to the same tolerance.
  constexpr int kColumns = 300;
  const GlobalFrictionContactProblem joint = test::CubeColumns(0, kColumns);
  REQUIRE(joint.num_contacts() >= 2048);
  VelocityGaussSeidel::Options options;
  options.tolerance = 1e-12;
  Eigen::VectorXd r;
  const auto summary = VelocityGaussSeidel(options).Solve(joint, &r);
  REQUIRE(summary.IsSolved());
  FrictionContactProblem local;
  joint.Reduce(&local);
  CHECK(FclibError(local, r) <= 1e-10);
  for (int j = 0; j < kColumns; ++j) {
    const GlobalFrictionContactProblem part = test::CubeColumns(j, 1);
    part.Reduce(&local);
    CHECK(FclibError(local, r.segment(j * part.size(), part.size())) <= 1e-9);
    Eigen::VectorXd alone;
    CHECK(VelocityGaussSeidel(options).Solve(part, &alone).IsSolved());
    CHECK(FclibError(local, alone) <= 1e-9);
  }
}

TEST_CASE("nsgs-velocity: manifolds between two moving boxes solve to the same error measure") {
  // Two boxes: two manifolds, the top one between two moving bodies; the normal impulses still
  // pass from one to the other sweep by sweep. Solved with and without blocks, every seed.
  ForEachBoxColumn(2, [](const GlobalFrictionContactProblem& problem,
                         const FrictionContactProblem& local, double /*push*/) {
    VelocityGaussSeidel::Options options;
    options.tolerance = 1e-10;
    for (bool manifolds : {true, false}) {
      options.manifolds = manifolds;
      Eigen::VectorXd r;
      const auto summary = VelocityGaussSeidel(options).Solve(problem, &r);
      REQUIRE(summary.IsSolved());
      CHECK(FclibError(local, r) <= 1e-10);
    }
  });
}

TEST_CASE("nsgs-velocity: stick_islands, the least-norm sticking impulses where they solve") {
  // Two boxes, 20 seeds: held, every contact sticks and the least-norm impulses that make it so
  // solve the problem at the first point where every contact presses: after the first or
  // second sweep from zero (the sweeps alone pass the normal impulses between the boxes one
  // sweep at a time), before any sweep from a warm start that presses. Half-pushed, some are
  // solved so once the sweeps have stopped sliding their contacts (after how many sweeps
  // depends on the build's rounding: 2 to 12 here). Where the impulses leave a cone or the push
  // makes the top box slide, the attempt is undone: the sweeps, bit for bit those without it.
  int held_by_sticking = 0;
  ForEachBoxColumn(2, [&](const GlobalFrictionContactProblem& problem,
                          const FrictionContactProblem& local, double push) {
    VelocityGaussSeidel::Options options;
    options.tolerance = 1e-10;
    REQUIRE(options.stick_islands);  // the default
    Eigen::VectorXd swept, stuck;
    const auto with = VelocityGaussSeidel(options).Solve(problem, &stuck);
    options.stick_islands = false;
    const auto without = VelocityGaussSeidel(options).Solve(problem, &swept);
    REQUIRE(with.IsSolved());
    CHECK(FclibError(local, stuck) <= 1e-10);
    if (with.iterations < without.iterations) {
      CHECK(with.sticking == problem.num_contacts());
      if (push == 0.0) {
        CHECK(with.iterations <= 2);
        ++held_by_sticking;
      }
      // The impulses of least norm, -W^+ q (through the bodies: each box held in every direction).
      const Eigen::MatrixXd W(local.W_columns());
      const Eigen::VectorXd least_norm = -W.completeOrthogonalDecomposition().solve(local.q());
      CHECK((stuck - least_norm).norm() <= 1e-9 * least_norm.norm());
      // From a warm start where every contact presses: no sweep.
      options.stick_islands = true;
      options.warm_start = true;
      Eigen::VectorXd warm = 0.5 * stuck;
      const auto warmed = VelocityGaussSeidel(options).Solve(problem, &warm);
      CHECK(warmed.IsSolved());
      CHECK(warmed.iterations == 0);
      CHECK(FclibError(local, warm) <= 1e-10);
    } else {
      CHECK(with.iterations == without.iterations);
      CHECK(stuck == swept);
    }
    if (push == 3.0) CHECK(with.iterations == without.iterations);
  });
  CHECK(held_by_sticking == 20);
}

TEST_CASE("nsgs-velocity: stick_islands where a body is free to roll about its contacts") {
  // A box on one of its edges, four contacts on the line under its centre of mass: it may roll
  // about the line (A^T A singular), so the sticking impulses come from W's decomposition. The
  // least-norm ones share the weight equally, without friction, after the first sweep.
  GlobalFrictionContactProblem problem;
  Eigen::Matrix<double, 6, 1> f = Eigen::Matrix<double, 6, 1>::Zero();
  f.z() = -1.0;
  problem.AddBlock(Eigen::Matrix<double, 6, 6>::Identity(), f);
  const Eigen::Vector3d frame[3] = {Eigen::Vector3d::UnitZ(), Eigen::Vector3d::UnitX(),
                                    Eigen::Vector3d::UnitY()};
  for (double x : {-0.15, -0.05, 0.05, 0.15}) {
    problem.AddContact(0.5, Eigen::Vector3d::Zero());
    const Eigen::Vector3d p(x, 0.0, -0.5);
    Eigen::Matrix<double, 6, 3> H;
    for (int j = 0; j < 3; ++j) H.col(j) << frame[j], p.cross(frame[j]);
    problem.AddContactBlock(0, H);
  }
  problem.Finalize();
  FrictionContactProblem local;
  problem.Reduce(&local);
  VelocityGaussSeidel::Options options;
  options.tolerance = 1e-12;
  Eigen::VectorXd r;
  const auto summary = VelocityGaussSeidel(options).Solve(problem, &r);
  REQUIRE(summary.IsSolved());
  CHECK(summary.iterations <= 2);
  CHECK(summary.sticking == 4);
  CHECK(FclibError(local, r) <= 1e-12);
  for (int a = 0; a < 4; ++a) {
    CHECK(r[3 * a] == doctest::Approx(0.25).epsilon(1e-12));
    CHECK(std::abs(r[3 * a + 1]) + std::abs(r[3 * a + 2]) <= 1e-12);
  }
}

TEST_CASE("nsgs-velocity: runs of contacts that are not two rigid bodies' are solved one by one") {
  // Random pieces on the same two blocks (no rigid relation between them), and three contacts
  // on one line (a turn about it is free): blocks are refused, and the iterates are those of
  // the contact-by-contact sweeps, bit for bit.
  std::mt19937 rng(5);
  std::normal_distribution<double> normal;
  for (int kind = 0; kind < 2; ++kind) {
    CAPTURE(kind);
    GlobalFrictionContactProblem problem;
    Eigen::Matrix<double, 6, 6> M = Eigen::Matrix<double, 6, 6>::Identity();
    Eigen::Matrix<double, 6, 1> f = Eigen::Matrix<double, 6, 1>::Zero();
    f.z() = -1.0;
    problem.AddBlock(M, f);
    problem.AddBlock(2.0 * M, f);
    for (int a = 0; a < 4; ++a) {
      problem.AddContact(0.5, Eigen::Vector3d::Zero());
      Eigen::Matrix<double, 6, 3> H0, H1;
      if (kind == 0) {
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 3; ++j) H0(i, j) = normal(rng), H1(i, j) = normal(rng);
      } else {
        const Eigen::Vector3d p(0.1 * a, 0.0, -0.5);  // on the line y = 0, z = -0.5
        const Eigen::Vector3d frame[3] = {Eigen::Vector3d::UnitZ(), Eigen::Vector3d::UnitX(),
                                          Eigen::Vector3d::UnitY()};
        for (int j = 0; j < 3; ++j) {
          H1.col(j) << frame[j], p.cross(frame[j]);
          H0.col(j) = -H1.col(j);
        }
      }
      problem.AddContactBlock(0, H0);
      problem.AddContactBlock(1, H1);
    }
    problem.Finalize();
    VelocityGaussSeidel::Options options;
    options.tolerance = 1e-10;
    options.max_sweeps = 500;
    Eigen::VectorXd with, without;
    const auto blocks = VelocityGaussSeidel(options).Solve(problem, &with);
    const int block_sweeps = blocks.iterations;
    const double block_error = blocks.natural_residual;
    options.manifolds = false;
    const auto single = VelocityGaussSeidel(options).Solve(problem, &without);
    CHECK(block_sweeps == single.iterations);
    CHECK(block_error == single.natural_residual);
    CHECK(with == without);
  }
}

TEST_CASE("nsgs-velocity: anderson_memory starts each sweep from Anderson's combination") {
  // 30 contacts on 12 bodies at 1e-8: plain sweeps took 2932 in all on these 20 seeds, with
  // Anderson's combinations of the last 5 sweeps 776, fewer on every seed.
  int plain_sweeps = 0, anderson_sweeps = 0, fewer = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    const GlobalFrictionContactProblem problem = test::Make(test::MakeScene(30, 12, 0.4, seed));
    VelocityGaussSeidel::Options options;
    options.tolerance = 1e-8;
    options.max_sweeps = 5000;
    Eigen::VectorXd plain, accelerated;
    const int plain_count = VelocityGaussSeidel(options).Solve(problem, &plain).iterations;
    options.anderson_memory = 5;
    VelocityGaussSeidel solver(options);
    const VelocityGaussSeidel::Summary& summary = solver.Solve(problem, &accelerated);
    REQUIRE(summary.IsSolved());
    CHECK(ComputeFrictionErrors(problem, accelerated).fclib <= 1e-8);
    plain_sweeps += plain_count;
    anderson_sweeps += summary.iterations;
    fewer += summary.iterations < plain_count ? 1 : 0;
  }
  CHECK(fewer >= 18);
  CHECK(2 * anderson_sweeps <= plain_sweeps);
  // A resting column of two boxes (W singular), held, half held and pushed into sliding.
  ForEachBoxColumn(
      2, [](const GlobalFrictionContactProblem& problem, const FrictionContactProblem&, double) {
        VelocityGaussSeidel::Options options;
        options.tolerance = 1e-10;
        options.anderson_memory = 5;
        Eigen::VectorXd r;
        CHECK(VelocityGaussSeidel(options).Solve(problem, &r).IsSolved());
        CHECK(ComputeFrictionErrors(problem, r).fclib <= 1e-10);
      });
  VelocityGaussSeidel::Options bad;
  std::string why;
  for (int memory : {-1, VelocityGaussSeidel::kMaxAndersonMemory + 1}) {
    bad.anderson_memory = memory;
    CHECK_FALSE(bad.IsValid(&why));
    CHECK(why.find("anderson_memory") != std::string::npos);
  }
}

TEST_CASE("nsgs-velocity: rate_window stops a solve that would not reach the tolerance") {
  VelocityGaussSeidel::Options options;
  options.tolerance = 1e-10;
  // Forty contacts between eight bodies: the sweeps crawl. Measured over windows of at least
  // 50 sweeps, the rate says the budget is too small, and the solve stops long before it.
  const GlobalFrictionContactProblem slow = test::Make(test::MakeScene(40, 8, 0.5, 1));
  options.rate_window = 50;
  Eigen::VectorXd r;
  const VelocityGaussSeidel::Summary stopped = VelocityGaussSeidel(options).Solve(slow, &r);
  CAPTURE(stopped.message);
  CHECK(stopped.status == Status::MaxIterations);
  CHECK(stopped.iterations >= 50);
  CHECK(stopped.iterations < options.max_sweeps / 10);
  CHECK(stopped.message.find("stopped: at its rate over the last") != std::string::npos);
  // The rate was right: the whole budget does not solve it either.
  options.rate_window = 0;
  Eigen::VectorXd whole;
  const VelocityGaussSeidel::Summary full = VelocityGaussSeidel(options).Solve(slow, &whole);
  CHECK(full.status == Status::MaxIterations);
  CHECK(full.iterations == options.max_sweeps);
  // A problem the sweeps solve within the budget: the same sweeps, bit for bit, with or without
  // the window.
  const GlobalFrictionContactProblem quick = test::Make(test::MakeScene(20, 8, 0.5, 2));
  Eigen::VectorXd plain, windowed;
  const int sweeps = VelocityGaussSeidel(options).Solve(quick, &plain).iterations;
  options.rate_window = 50;
  const VelocityGaussSeidel::Summary same = VelocityGaussSeidel(options).Solve(quick, &windowed);
  CHECK(same.IsSolved());
  CHECK(same.iterations == sweeps);
  CHECK(windowed == plain);
  options.rate_window = -1;
  CHECK(VelocityGaussSeidel(options).Solve(quick, &windowed).status == Status::InvalidInput);
}

TEST_CASE("auto on the global form: nsgs-velocity first, the local-form sequence where it crawls") {
  FrictionAuto solver;
  solver.mutable_options().tolerance = 1e-10;
  // Solved by the sweeps on the global form.
  const GlobalFrictionContactProblem quick = test::Make(test::MakeScene(20, 8, 0.5, 2));
  Eigen::VectorXd r;
  const FrictionAuto::Summary first = solver.Solve(quick, &r);
  CHECK(first.IsSolved());
  CHECK(first.solved_by == "nsgs-velocity");
  CHECK(first.attempts == 1);
  FrictionContactProblem local;
  quick.Reduce(&local);
  CHECK(FclibError(local, r) <= 1e-10);
  // From its own answer: the start point solves it, and no attempt is made.
  solver.mutable_options().warm_start = true;
  const FrictionAuto::Summary warm = solver.Solve(quick, &r);
  CHECK(warm.IsSolved());
  CHECK(warm.attempts == 0);
  CHECK(warm.message.find("solved by the start point") == 0);
  // Where the sweeps crawl, their rate stops them and a local-form attempt solves it; the
  // answer is checked on the local form, independently of the solver.
  solver.mutable_options().warm_start = false;
  const GlobalFrictionContactProblem slow = test::Make(test::MakeScene(40, 8, 0.5, 1));
  Eigen::VectorXd x;
  const FrictionAuto::Summary second = solver.Solve(slow, &x);
  CAPTURE(second.path);
  CHECK(second.IsSolved());
  CHECK(second.path.find("nsgs-velocity: max_iterations") == 0);
  CHECK(second.path.find("stopped: at its rate") != std::string::npos);
  CHECK(second.solved_by != "nsgs-velocity");
  CHECK(second.attempts >= 2);
  slow.Reduce(&local);
  CHECK(FclibError(local, x) <= 1e-10);
  CHECK(second.natural_residual == doctest::Approx(FclibError(local, x)));
  // On the global form the Newton attempt starts from the start point, not from where the
  // sweeps stopped: its answer is fc-newton-fb's from r = 0, bit for bit. On the local form it
  // starts from NSGS's point, and its answer differs.
  REQUIRE(second.solved_by == "fc-newton-fb");
  FrictionNewton::Options newton;
  newton.function = FrictionNewton::Function::FischerBurmeister;
  newton.tolerance = 1e-10;
  Eigen::VectorXd from_zero;
  CHECK(FrictionNewton(newton).Solve(local, &from_zero).IsSolved());
  CHECK(x == from_zero);
  Eigen::VectorXd z;
  const FrictionAuto::Summary on_local = solver.Solve(local, &z);
  CAPTURE(on_local.path);
  REQUIRE(on_local.solved_by == "fc-newton-fb");
  CHECK(FclibError(local, z) <= 1e-10);
  CHECK(z != from_zero);
  // The registry's auto takes the global form the same way.
  SolverOptions options;
  options.tolerance = 1e-10;
  const auto registered = CreateSolver("auto", ProblemKind::GlobalFriction, options);
  Eigen::VectorXd y;
  const SolverSummary& summary = registered->Solve(slow, &y);
  CHECK(summary.IsSolved());
  CHECK(summary.message == second.message);
}

// FrictionNewton on `problem` in its local form, and through the bodies (global_form_contacts 0
// and global_form_fill 0: K for every direction).
struct BothForms {
  FrictionNewton::Summary local, global;
  Eigen::VectorXd r_local, r_global;
};

BothForms SolveBothForms(const GlobalFrictionContactProblem& problem,
                         FrictionNewton::Function function, double tolerance) {
  FrictionContactProblem local;
  problem.Reduce(&local);
  BothForms out;
  FrictionNewton newton;
  newton.mutable_options().function = function;
  newton.mutable_options().tolerance = tolerance;
  out.local = newton.Solve(local, &out.r_local);
  newton.mutable_options().global_form_contacts = 0;
  newton.mutable_options().global_form_fill = 0.0;
  out.global = newton.Solve(problem, local, &out.r_global);
  return out;
}

TEST_CASE("fc-newton through the bodies: the local solve's iterations, without forming J") {
  // The directions solve the same equations another way, so the iterations agree until rounding
  // tips a line search; the solutions, where unique, agree to the tolerance.
  int regular = 0, same_iterations = 0;
  for (const auto function :
       {FrictionNewton::Function::AlartCurnier, FrictionNewton::Function::FischerBurmeister}) {
    for (unsigned seed = 1; seed <= 12; ++seed) {
      CAPTURE(seed);
      CAPTURE(static_cast<int>(function));
      // 30 contacts on 12 bodies (W regular) and 40 on 6 (W of rank 36 in 120 rows).
      for (const int bodies : {12, 6}) {
        CAPTURE(bodies);
        const GlobalFrictionContactProblem problem =
            test::Make(test::MakeScene(bodies == 12 ? 30 : 40, bodies, 0.4, seed));
        const BothForms both = SolveBothForms(problem, function, 1e-10);
        CHECK((both.global.IsSolved() || !both.local.IsSolved()));
        if (!both.global.IsSolved()) continue;
        CHECK(ComputeFrictionErrors(problem, both.r_global).fclib <= 1e-10);
        if (bodies == 12 && both.local.IsSolved()) {
          ++regular;
          same_iterations += both.global.iterations == both.local.iterations ? 1 : 0;
          CHECK((both.r_global - both.r_local).norm() <= 1e-8 * (1.0 + both.r_local.norm()));
        }
      }
    }
  }
  CHECK(regular >= 20);
  CHECK(same_iterations >= regular - 2);
}

TEST_CASE("fc-newton through the bodies: boxes on four corners, where J is singular") {
  // Sticking corners make J = rho W, of the bodies' rank: the directions come from K + eps I.
  int regularized = 0;
  ForEachBoxColumn(
      2, [&](const GlobalFrictionContactProblem& problem, const FrictionContactProblem&, double) {
        for (const auto function : {FrictionNewton::Function::AlartCurnier,
                                    FrictionNewton::Function::FischerBurmeister}) {
          const BothForms both = SolveBothForms(problem, function, 1e-8);
          CHECK(both.local.IsSolved());
          CHECK(both.global.IsSolved());
          CHECK(ComputeFrictionErrors(problem, both.r_global).fclib <= 1e-8);
          regularized += both.global.regularized_steps;
        }
      });
  CHECK(regularized > 0);  // the singular case was met
}

// A chain: body k touches body k + 1 (contact k) and nothing else, so W is block tridiagonal
// and its LU fills no more than K's.
test::RandomScene ChainScene(int contacts, unsigned seed) {
  test::RandomScene scene = test::MakeScene(contacts, contacts + 1, 0.4, seed);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(scene.M.rows(), 3 * contacts);
  for (int a = 0; a < contacts; ++a)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 6; ++i) {
        H(6 * a + i, 3 * a + j) = normal(rng);
        H(6 * (a + 1) + i, 3 * a + j) = -normal(rng);
      }
  scene.H = H.sparseView();
  return scene;
}

TEST_CASE("fc-newton through the bodies: the default rule takes K where J's LU would fill more") {
  // 100 contacts among 20 bodies (each body in about 8: W couples most contacts with most; J's
  // predicted LU fill was 1.5 times K's or more on 11 of these 12 seeds), a chain of 150 (W
  // block tridiagonal), and 60 contacts (below global_form_contacts).
  const auto solve = [](const GlobalFrictionContactProblem& problem,
                        const FrictionNewton::Options& options, Eigen::VectorXd* r) {
    FrictionContactProblem local;
    problem.Reduce(&local);
    FrictionNewton newton(options);
    return newton.Solve(problem, local, r);
  };
  FrictionNewton::Options defaults;
  defaults.tolerance = 1e-10;
  int through_k = 0, compared = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    const GlobalFrictionContactProblem dense = test::Make(test::MakeScene(100, 20, 0.4, seed));
    const GlobalFrictionContactProblem chain = test::Make(ChainScene(150, seed));
    const GlobalFrictionContactProblem small = test::Make(test::MakeScene(60, 6, 0.4, seed));
    Eigen::VectorXd r_k, r_j;
    const FrictionNewton::Summary by_default = solve(dense, defaults, &r_k);
    through_k += by_default.global_form ? 1 : 0;
    FrictionNewton::Options only_j = defaults;
    only_j.global_form_fill = 1e9;  // no LU fills a billion times another's
    const FrictionNewton::Summary by_j = solve(dense, only_j, &r_j);
    CHECK_FALSE(by_j.global_form);
    if (by_default.global_form && by_default.IsSolved() && by_j.IsSolved()) {
      ++compared;
      CHECK(ComputeFrictionErrors(dense, r_k).fclib <= 1e-10);
      CHECK((r_k - r_j).norm() <= 1e-8 * (1.0 + r_j.norm()));
    }
    CHECK_FALSE(solve(chain, defaults, &r_j).global_form);
    FrictionNewton::Options always = defaults;
    always.global_form_fill = 0.0;
    CHECK(solve(chain, always, &r_k).global_form);
    CHECK_FALSE(solve(small, always, &r_k).global_form);
    always.global_form_contacts = 0;
    CHECK(solve(small, always, &r_k).global_form);
  }
  CHECK(through_k >= 10);
  CHECK(compared >= 4);
}

TEST_CASE("fc-newton through the bodies: mismatched forms and options are refused") {
  const GlobalFrictionContactProblem problem = test::Make(test::MakeScene(10, 4, 0.4, 5));
  const GlobalFrictionContactProblem other = test::Make(test::MakeScene(11, 4, 0.4, 5));
  FrictionContactProblem local;
  other.Reduce(&local);
  FrictionNewton newton;
  Eigen::VectorXd r;
  CHECK(newton.Solve(problem, local, &r).status == Status::InvalidInput);
  FrictionProximalPoint proximal;
  CHECK(proximal.Solve(problem, local, &r).status == Status::InvalidInput);
  newton.mutable_options().global_form_contacts = -1;
  std::string why;
  CHECK_FALSE(newton.options().IsValid(&why));
  CHECK(why.find("global_form_contacts") != std::string::npos);
  newton.mutable_options().global_form_contacts = 0;
  newton.mutable_options().global_form_fill = std::nan("");
  CHECK_FALSE(newton.options().IsValid(&why));
  // The global problem alone (reduced inside) is solved, and the proximal method through it.
  newton.mutable_options().global_form_fill = 0.0;
  newton.mutable_options().tolerance = 1e-10;
  CHECK(newton.Solve(problem, &r).IsSolved());
  CHECK(ComputeFrictionErrors(problem, r).fclib <= 1e-10);
  problem.Reduce(&local);
  proximal.mutable_options().tolerance = 1e-10;
  r.resize(0);
  CHECK(proximal.Solve(problem, local, &r).IsSolved());
  CHECK(ComputeFrictionErrors(problem, r).fclib <= 1e-10);
}

}  // namespace
}  // namespace ncpkit
