#include "readers/fclib_reader.h"

#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "readers/text_scanner.h"
#include "solvers/base/input_error.h"
#include "solvers/linalg/sparse_cholesky.h"

namespace ncpkit {
namespace {

// Largest entry count a file may declare (internal::kMaxDim: the largest dimension).
constexpr int64_t kMaxEntries = 500'000'000;

// An HDF5 identifier closed on destruction.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// One open file and the checks every dataset read goes through.
class Hdf5Reader {
 public:
  explicit Hdf5Reader(const std::string& path)
      : path_(path), file_(Open(path, &file_bytes_), H5Fclose) {}

  [[noreturn]] void Fail(const std::string& dataset, const std::string& what) const {
    throw InputError(path_, 0, dataset, what);
  }

  // True if every link on the path exists (H5Lexists fails on a missing parent).
  bool Exists(const std::string& name) const {
    size_t start = 1;
    while (true) {
      const size_t slash = name.find('/', start);
      const std::string prefix = name.substr(0, slash);
      if (H5Lexists(file_.get(), prefix.c_str(), H5P_DEFAULT) <= 0) return false;
      if (slash == std::string::npos) return true;
      start = slash + 1;
    }
  }

  // The values of a numeric dataset as doubles (integer or floating point in the file), with
  // at least `min_count` and at most `max_count` elements; non-finite values are refused.
  std::vector<double> Doubles(const std::string& name, int64_t min_count, int64_t max_count) {
    std::vector<double> values;
    Read(name, min_count, max_count, H5T_NATIVE_DOUBLE, &values, false);
    for (size_t k = 0; k < values.size(); ++k) {
      if (!std::isfinite(values[k])) {
        std::ostringstream os;
        os << "entry " << k << " is " << values[k] << ", not a finite number";
        Fail(name, os.str());
      }
    }
    return values;
  }

  // The values of an integer dataset.
  std::vector<int64_t> Integers(const std::string& name, int64_t min_count, int64_t max_count) {
    std::vector<int64_t> values;
    Read(name, min_count, max_count, H5T_NATIVE_INT64, &values, true);
    return values;
  }

  // True if `count` 8-byte values could come from this file: at most 1000 times its size (a
  // compression ratio no honest FCLib file reaches) plus 1 MiB. Read() applies it to every
  // dataset; a matrix dimension must meet it too, since a vector of that size comes with it.
  bool FileCanHold(int64_t count) const {
    return count * static_cast<int64_t>(sizeof(double)) <= 1000 * file_bytes_ + (int64_t{1} << 20);
  }

  // A one-element integer dataset in [min, max].
  int64_t Integer(const std::string& name, int64_t min, int64_t max) {
    const int64_t value = Integers(name, 1, 1)[0];
    if (value < min || value > max) {
      std::ostringstream os;
      os << "is " << value << ", expected a value in [" << min << ", " << max << "]";
      Fail(name, os.str());
    }
    return value;
  }

  // A string dataset (fixed or variable length), or "" if it is absent or not a string.
  std::string OptionalString(const std::string& name) {
    if (!Exists(name)) return "";
    Handle dataset(H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!dataset.valid()) return "";
    Handle type(H5Dget_type(dataset.get()), H5Tclose);
    Handle space(H5Dget_space(dataset.get()), H5Sclose);
    if (!type.valid() || !space.valid() || H5Tget_class(type.get()) != H5T_STRING) return "";
    if (H5Sget_simple_extent_npoints(space.get()) != 1) return "";
    if (H5Tis_variable_str(type.get()) > 0) {
      char* text = nullptr;
      Handle memory(H5Tcopy(H5T_C_S1), H5Tclose);
      H5Tset_size(memory.get(), H5T_VARIABLE);
      if (H5Dread(dataset.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) < 0 ||
          text == nullptr) {
        return "";
      }
      std::string result(text, strnlen(text, 4096));
      H5free_memory(text);
      return result;
    }
    const size_t size = H5Tget_size(type.get());
    if (size == 0 || size > 4096) return "";
    std::string buffer(size, '\0');
    if (H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &buffer[0]) < 0) {
      return "";
    }
    return std::string(buffer.c_str());
  }

 private:
  template <class T>
  void Read(const std::string& name, int64_t min_count, int64_t max_count, hid_t memory_type,
            std::vector<T>* values, bool integer) {
    if (!Exists(name)) Fail(name, "is missing");
    Handle dataset(H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!dataset.valid()) Fail(name, "is not a dataset");
    Handle type(H5Dget_type(dataset.get()), H5Tclose);
    Handle space(H5Dget_space(dataset.get()), H5Sclose);
    if (!type.valid() || !space.valid()) Fail(name, "has no readable type or shape");
    const H5T_class_t type_class = H5Tget_class(type.get());
    if (type_class != H5T_INTEGER && (integer || type_class != H5T_FLOAT)) {
      Fail(name, integer ? "is not an integer dataset" : "is not a numeric dataset");
    }
    const hssize_t count = H5Sget_simple_extent_npoints(space.get());
    if (count < 0) Fail(name, "has no readable shape");
    if (count < min_count || count > max_count) {
      std::ostringstream os;
      os << "has " << count << " entries, expected ";
      if (min_count == max_count) {
        os << min_count;
      } else {
        os << min_count << " to " << max_count;
      }
      Fail(name, os.str());
    }
    // A dataset whose decompressed size is far beyond what the file stores is refused before
    // it is allocated (values are 8 bytes, doubles or int64).
    static_assert(sizeof(T) == sizeof(double), "FileCanHold counts 8-byte values");
    if (!FileCanHold(static_cast<int64_t>(count))) {
      Fail(name, "declares " + std::to_string(count) + " entries, more than the file can hold");
    }
    values->resize(static_cast<size_t>(count));
    if (count > 0 &&
        H5Dread(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values->data()) < 0) {
      Fail(name, "cannot be read (corrupt data or a type that does not convert)");
    }
  }

  // Opens the file after the checks that give better messages than HDF5's failure.
  static hid_t Open(const std::string& path, int64_t* bytes) {
    // HDF5 prints its error stack by default; ncpkit reports the failure itself.
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    struct stat info;
    if (stat(path.c_str(), &info) != 0) throw InputError(path, 0, "", "cannot be opened");
    if (!S_ISREG(info.st_mode)) throw InputError(path, 0, "", "is not a regular file");
    *bytes = static_cast<int64_t>(info.st_size);
    if (!IsHdf5File(path)) throw InputError(path, 0, "", "is not an HDF5 file");
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) throw InputError(path, 0, "", "cannot be opened by the HDF5 library");
    return file;
  }

  std::string path_;
  int64_t file_bytes_ = 0;
  Handle file_;
};

// struct fclib_matrix under `group` (FORMAT.md §4): triplets (nz >= 0; p = column and i = row
// of each entry, duplicates summed), compressed columns (nz = -1) or rows (nz = -2).
Eigen::SparseMatrix<double> ReadMatrix(Hdf5Reader& in, const std::string& group) {
  const int64_t m = in.Integer(group + "/m", 0, internal::kMaxDim);
  const int64_t n = in.Integer(group + "/n", 0, internal::kMaxDim);
  const int64_t nz = in.Integer(group + "/nz", -2, kMaxEntries);
  const int64_t nzmax = in.Integer(group + "/nzmax", 0, kMaxEntries);
  // Every dimension comes with a vector of that size in the file (q, f, w); one the file could
  // not hold is refused before the matrix's column starts are allocated.
  if (!in.FileCanHold(std::max(m, n))) {
    std::ostringstream os;
    os << "declares " << m << " x " << n << ", more than the file can hold";
    in.Fail(group, os.str());
  }
  std::vector<Eigen::Triplet<double>> triplets;
  auto check_index = [&](const std::string& dataset, int64_t k, int64_t value, int64_t size) {
    if (value < 0 || value >= size) {
      std::ostringstream os;
      os << "entry " << k << " is " << value << ", outside [0, " << size << ")";
      in.Fail(group + "/" + dataset, os.str());
    }
  };
  if (nz >= 0) {
    const std::vector<int64_t> columns = in.Integers(group + "/p", nz, kMaxEntries);
    const std::vector<int64_t> rows = in.Integers(group + "/i", nz, kMaxEntries);
    const std::vector<double> x = in.Doubles(group + "/x", nz, kMaxEntries);
    triplets.reserve(nz);
    for (int64_t k = 0; k < nz; ++k) {
      check_index("i", k, rows[k], m);
      check_index("p", k, columns[k], n);
      triplets.emplace_back(rows[k], columns[k], x[k]);
    }
  } else {
    const bool by_columns = nz == -1;
    const int64_t outer = by_columns ? n : m, inner = by_columns ? m : n;
    const std::vector<int64_t> starts = in.Integers(group + "/p", outer + 1, outer + 1);
    if (starts[0] != 0) in.Fail(group + "/p", "must start at 0");
    for (int64_t k = 1; k <= outer; ++k) {
      if (starts[k] < starts[k - 1]) {
        std::ostringstream os;
        os << "decreases at entry " << k << " (" << starts[k - 1] << " then " << starts[k] << ")";
        in.Fail(group + "/p", os.str());
      }
    }
    const int64_t count = starts[outer];
    if (count > nzmax) {
      std::ostringstream os;
      os << "ends at " << count << ", beyond nzmax = " << nzmax;
      in.Fail(group + "/p", os.str());
    }
    const std::vector<int64_t> indices = in.Integers(group + "/i", count, kMaxEntries);
    const std::vector<double> x = in.Doubles(group + "/x", count, kMaxEntries);
    triplets.reserve(count);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = starts[o]; k < starts[o + 1]; ++k) {
        check_index("i", k, indices[k], inner);
        if (by_columns) {
          triplets.emplace_back(indices[k], o, x[k]);
        } else {
          triplets.emplace_back(o, indices[k], x[k]);
        }
      }
    }
  }
  Eigen::SparseMatrix<double> matrix(m, n);
  matrix.setFromTriplets(triplets.begin(), triplets.end());
  return matrix;
}

Eigen::VectorXd ToVector(const std::vector<double>& values) {
  return Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
}

FrictionContactProblem MakeProblem(Hdf5Reader& in, const std::string& group,
                                   const Eigen::SparseMatrix<double>& W, Eigen::VectorXd q,
                                   Eigen::VectorXd mu) {
  try {
    return FrictionContactProblem(W, std::move(q), std::move(mu));
  } catch (const InputError& error) {
    in.Fail(group, error.what());
  }
}

void ReadLocal(Hdf5Reader& in, FclibFile* file) {
  const std::string group = "/fclib_local";
  in.Integer(group + "/spacedim", 3, 3);
  if (in.Exists(group + "/V") || in.Exists(group + "/R")) {
    in.Fail(group + "/V", "mixed local problems (V, R, s) are not solved by ncpkit");
  }
  const Eigen::SparseMatrix<double> W = ReadMatrix(in, group + "/W");
  const int64_t m = W.rows();
  if (W.cols() != m || m % 3 != 0) {
    std::ostringstream os;
    os << "is " << W.rows() << " x " << W.cols() << ", expected 3 n_c x 3 n_c";
    in.Fail(group + "/W", os.str());
  }
  const Eigen::VectorXd q = ToVector(in.Doubles(group + "/vectors/q", m, m));
  const Eigen::VectorXd mu = ToVector(in.Doubles(group + "/vectors/mu", m / 3, m / 3));
  file->problem = MakeProblem(in, group, W, q, mu);
  file->title = in.OptionalString(group + "/info/title");
}

void ReadGlobal(Hdf5Reader& in, FclibFile* file) {
  const std::string group = "/fclib_global";
  in.Integer(group + "/spacedim", 3, 3);
  if (in.Exists(group + "/G")) {
    in.Fail(group + "/G", "global problems with equality constraints are not solved by ncpkit");
  }
  const Eigen::SparseMatrix<double> M = ReadMatrix(in, group + "/M");
  const Eigen::SparseMatrix<double> H = ReadMatrix(in, group + "/H");
  const int64_t ndof = M.rows();
  if (M.cols() != ndof) in.Fail(group + "/M", "is not square");
  if (H.rows() != ndof || H.cols() % 3 != 0) {
    std::ostringstream os;
    os << "is " << H.rows() << " x " << H.cols() << ", expected " << ndof << " x 3 n_c";
    in.Fail(group + "/H", os.str());
  }
  const int64_t m = H.cols();
  const Eigen::VectorXd f = ToVector(in.Doubles(group + "/vectors/f", ndof, ndof));
  const Eigen::VectorXd w = ToVector(in.Doubles(group + "/vectors/w", m, m));
  const Eigen::VectorXd mu = ToVector(in.Doubles(group + "/vectors/mu", m / 3, m / 3));
  // W = H^T M^-1 H and q = H^T M^-1 f + w, with M = L L^T. M must be symmetric; a file that
  // stores one triangle only is completed from it.
  Eigen::SparseMatrix<double> full = M;
  const Eigen::SparseMatrix<double> lower = M.triangularView<Eigen::StrictlyLower>();
  const Eigen::SparseMatrix<double> upper = M.triangularView<Eigen::StrictlyUpper>();
  if (lower.nonZeros() == 0 && upper.nonZeros() > 0) {
    full = M + Eigen::SparseMatrix<double>(upper.transpose());
  } else if (upper.nonZeros() == 0 && lower.nonZeros() > 0) {
    full = M + Eigen::SparseMatrix<double>(lower.transpose());
  }
  const double asymmetry = (full - Eigen::SparseMatrix<double>(full.transpose())).norm();
  if (!(asymmetry <= 1e-12 * full.norm())) {
    in.Fail(group + "/M",
            "is not symmetric (||M - M^T|| = " + internal::NumberText(asymmetry) + ")");
  }
  SparseCholesky cholesky;
  cholesky.compute(full);
  if (cholesky.info() != Eigen::Success) {
    in.Fail(group + "/M",
            "is not symmetric positive definite (Cholesky failed" + cholesky.messages() + ")");
  }
  const Eigen::SparseMatrix<double> X = cholesky.solve(H);
  const Eigen::SparseMatrix<double> W = (Eigen::SparseMatrix<double>(H.transpose()) * X).pruned();
  const Eigen::VectorXd q = H.transpose() * cholesky.solve(f) + w;
  file->problem = MakeProblem(in, group, W, q, mu);
  file->from_global = true;
  file->num_degrees_of_freedom = static_cast<int>(ndof);
  file->title = in.OptionalString(group + "/info/title");
}

}  // namespace

bool IsHdf5File(const std::string& path) {
  static const char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  std::ifstream in(path, std::ios::binary);
  char head[8];
  return in.read(head, 8) && std::memcmp(head, kSignature, 8) == 0;
}

FclibFile ReadFclibFile(const std::string& path) {
  Hdf5Reader in(path);
  FclibFile file;
  if (in.Exists("/fclib_local")) {
    ReadLocal(in, &file);
  } else if (in.Exists("/fclib_global")) {
    ReadGlobal(in, &file);
  } else {
    in.Fail("/fclib_local", "is missing (neither /fclib_local nor /fclib_global is in the file)");
  }
  const int64_t m = file.problem.size();
  if (in.Exists("/solution/r")) {
    file.solution_r = ToVector(in.Doubles("/solution/r", m, m));
    if (!file.from_global && in.Exists("/solution/u"))
      file.solution_u = ToVector(in.Doubles("/solution/u", m, m));
  }
  if (in.Exists("/guesses/number_of_guesses")) {
    const int64_t guesses = in.Integer("/guesses/number_of_guesses", 0, 1000);
    for (int64_t k = 1; k <= guesses; ++k) {
      const std::string name = "/guesses/" + std::to_string(k) + "/r";
      file.guesses_r.push_back(ToVector(in.Doubles(name, m, m)));
    }
  }
  file.problem.name = internal::BaseName(path);
  return file;
}

}  // namespace ncpkit
