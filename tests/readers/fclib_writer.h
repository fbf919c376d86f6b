// A minimal FCLib HDF5 writer for the tests: the files the reader must accept in every storage,
// and the malformed ones it must refuse, each dataset written (or left out) on purpose.
#ifndef NCPKIT_TESTS_READERS_FCLIB_WRITER_H_
#define NCPKIT_TESTS_READERS_FCLIB_WRITER_H_

#include <hdf5.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <cstdio>
#include <string>
#include <vector>

namespace ncpkit::testing {

class Hdf5Writer {
 public:
  explicit Hdf5Writer(const std::string& path)
      : path_(path), file_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {}
  ~Hdf5Writer() {
    if (file_ >= 0) H5Fclose(file_);
  }
  void Close() {
    if (file_ >= 0) H5Fclose(file_);
    file_ = -1;
  }
  // Creates every missing group of the path.
  void Group(const std::string& name) {
    size_t start = 1;
    while (true) {
      const size_t slash = name.find('/', start);
      const std::string prefix = name.substr(0, slash);
      if (H5Lexists(file_, prefix.c_str(), H5P_DEFAULT) <= 0) {
        H5Gclose(H5Gcreate2(file_, prefix.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
      }
      if (slash == std::string::npos) return;
      start = slash + 1;
    }
  }
  void Ints(const std::string& name, const std::vector<int>& values) {
    Write(name, H5T_NATIVE_INT, values.data(), values.size());
  }
  void Int(const std::string& name, int value) { Ints(name, {value}); }
  void Doubles(const std::string& name, const std::vector<double>& values) {
    Write(name, H5T_NATIVE_DOUBLE, values.data(), values.size());
  }
  void Vector(const std::string& name, const Eigen::VectorXd& v) {
    Doubles(name, std::vector<double>(v.data(), v.data() + v.size()));
  }
  // struct fclib_matrix: nz >= 0 triplets (p = columns, i = rows), -1 CSC, -2 CSR.
  void Matrix(const std::string& group, const Eigen::SparseMatrix<double>& A, int storage) {
    Group(group);
    std::vector<int> p, i;
    std::vector<double> x;
    if (storage >= 0) {
      for (int j = 0; j < A.outerSize(); ++j) {
        for (Eigen::SparseMatrix<double>::InnerIterator it(A, j); it; ++it) {
          p.push_back(static_cast<int>(it.col()));
          i.push_back(static_cast<int>(it.row()));
          x.push_back(it.value());
        }
      }
    } else if (storage == -1) {
      Eigen::SparseMatrix<double> C = A;
      C.makeCompressed();
      p.assign(C.outerIndexPtr(), C.outerIndexPtr() + C.cols() + 1);
      i.assign(C.innerIndexPtr(), C.innerIndexPtr() + C.nonZeros());
      x.assign(C.valuePtr(), C.valuePtr() + C.nonZeros());
    } else {
      Eigen::SparseMatrix<double, Eigen::RowMajor> R = A;
      R.makeCompressed();
      p.assign(R.outerIndexPtr(), R.outerIndexPtr() + R.rows() + 1);
      i.assign(R.innerIndexPtr(), R.innerIndexPtr() + R.nonZeros());
      x.assign(R.valuePtr(), R.valuePtr() + R.nonZeros());
    }
    Int(group + "/m", static_cast<int>(A.rows()));
    Int(group + "/n", static_cast<int>(A.cols()));
    Int(group + "/nz", storage >= 0 ? static_cast<int>(x.size()) : storage);
    Int(group + "/nzmax", static_cast<int>(x.size()));
    Ints(group + "/p", p);
    Ints(group + "/i", i);
    Doubles(group + "/x", x);
  }
  // A whole local problem, W in the given storage.
  void Local(const Eigen::SparseMatrix<double>& W, const Eigen::VectorXd& q,
             const Eigen::VectorXd& mu, int storage) {
    Group("/fclib_local/vectors");
    Int("/fclib_local/spacedim", 3);
    Matrix("/fclib_local/W", W, storage);
    Vector("/fclib_local/vectors/q", q);
    Vector("/fclib_local/vectors/mu", mu);
  }
  void Delete(const std::string& name) { H5Ldelete(file_, name.c_str(), H5P_DEFAULT); }

 private:
  void Write(const std::string& name, hid_t type, const void* data, size_t count) {
    const size_t slash = name.find_last_of('/');
    if (slash > 0) Group(name.substr(0, slash));
    if (H5Lexists(file_, name.c_str(), H5P_DEFAULT) > 0) Delete(name);
    const hsize_t dims[1] = {count};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t dataset =
        H5Dcreate2(file_, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (count > 0) H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(dataset);
    H5Sclose(space);
  }

  std::string path_;
  hid_t file_;
};

}  // namespace ncpkit::testing

#endif  // NCPKIT_TESTS_READERS_FCLIB_WRITER_H_
