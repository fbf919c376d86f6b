#include "readers/fclib_writer.h"

#include <hdf5.h>

#include <vector>

#include "solvers/base/input_error.h"

namespace ncpkit {
namespace {

// One file being written; every call that fails throws, naming the file and the dataset.
class Hdf5Output {
 public:
  explicit Hdf5Output(const std::string& path) : path_(path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // failures are reported here, not printed
    file_ = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file_ < 0) throw InputError(path, 0, "", "cannot be created");
  }
  ~Hdf5Output() {
    if (file_ >= 0) H5Fclose(file_);
  }
  Hdf5Output(const Hdf5Output&) = delete;
  Hdf5Output& operator=(const Hdf5Output&) = delete;
  void Close() {
    const herr_t status = H5Fclose(file_);
    file_ = -1;
    if (status < 0) throw InputError(path_, 0, "", "cannot be written");
  }
  void Group(const std::string& name) {
    const hid_t group = H5Gcreate2(file_, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (group < 0) throw InputError(path_, 0, name, "cannot be created");
    H5Gclose(group);
  }
  void Ints(const std::string& name, const std::vector<int>& values) {
    Write(name, H5T_NATIVE_INT, values.data(), values.size());
  }
  void Int(const std::string& name, int value) { Ints(name, {value}); }
  void Doubles(const std::string& name, const double* values, size_t count) {
    Write(name, H5T_NATIVE_DOUBLE, values, count);
  }
  void Vector(const std::string& name, const Eigen::VectorXd& v) {
    Doubles(name, v.data(), static_cast<size_t>(v.size()));
  }
  void Text(const std::string& name, const std::string& text) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, text.empty() ? 1 : text.size());
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t dataset =
        H5Dcreate2(file_, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const herr_t status = dataset < 0 ? -1
                                      : H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                                 text.empty() ? "" : text.c_str());
    if (dataset >= 0) H5Dclose(dataset);
    H5Sclose(space);
    H5Tclose(type);
    if (status < 0) throw InputError(path_, 0, name, "cannot be written");
  }
  // struct fclib_matrix as triplets: p the columns, i the rows (CSparse's convention).
  void Triplets(const std::string& group, int rows, int columns, const std::vector<int>& p,
                const std::vector<int>& i, const std::vector<double>& x) {
    Group(group);
    Int(group + "/m", rows);
    Int(group + "/n", columns);
    Int(group + "/nz", static_cast<int>(x.size()));
    Int(group + "/nzmax", static_cast<int>(x.size()));
    Ints(group + "/p", p);
    Ints(group + "/i", i);
    Doubles(group + "/x", x.data(), x.size());
  }

 private:
  void Write(const std::string& name, hid_t type, const void* data, size_t count) {
    const hsize_t dims[1] = {count};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t dataset =
        H5Dcreate2(file_, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const herr_t status =
        dataset < 0
            ? -1
            : (count > 0 ? H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : 0);
    if (dataset >= 0) H5Dclose(dataset);
    H5Sclose(space);
    if (status < 0) throw InputError(path_, 0, name, "cannot be written");
  }

  std::string path_;
  hid_t file_ = -1;
};

}  // namespace

void WriteFclibGlobal(const std::string& path, const GlobalFrictionContactProblem& problem,
                      const std::string& title, const Eigen::VectorXd* r) {
  Hdf5Output out(path);
  out.Group("/fclib_global");
  out.Int("/fclib_global/spacedim", 3);
  std::vector<int> p, i;
  std::vector<double> x;
  for (int k = 0; k < problem.num_blocks(); ++k) {
    const int o = problem.block_offset(k), b = problem.block_size(k);
    const double* M = problem.mass_data(k);
    for (int c = 0; c < b; ++c) {
      for (int row = 0; row < b; ++row) {
        p.push_back(o + c);
        i.push_back(o + row);
        x.push_back(M[c * b + row]);
      }
    }
  }
  out.Triplets("/fclib_global/M", problem.num_dofs(), problem.num_dofs(), p, i, x);
  p.clear();
  i.clear();
  x.clear();
  for (int a = 0; a < problem.num_contacts(); ++a) {
    for (int k = problem.piece_begin(a); k < problem.piece_begin(a + 1); ++k) {
      const int block = problem.piece_block(k), b = problem.block_size(block);
      const double* H = problem.piece_data(k);
      for (int c = 0; c < 3; ++c) {
        for (int row = 0; row < b; ++row) {
          p.push_back(3 * a + c);
          i.push_back(problem.block_offset(block) + row);
          x.push_back(H[c * b + row]);
        }
      }
    }
  }
  out.Triplets("/fclib_global/H", problem.num_dofs(), problem.size(), p, i, x);
  out.Group("/fclib_global/vectors");
  out.Vector("/fclib_global/vectors/f", problem.f());
  out.Vector("/fclib_global/vectors/w", problem.w());
  out.Vector("/fclib_global/vectors/mu", problem.mu());
  out.Group("/fclib_global/info");
  out.Text("/fclib_global/info/title", title);
  if (r != nullptr && r->size() == problem.size()) {
    Eigen::VectorXd v;
    problem.Velocity(*r, &v);
    out.Group("/solution");
    out.Vector("/solution/r", *r);
    out.Vector("/solution/v", v);
  }
  out.Close();
}

}  // namespace ncpkit
