#include "contact/contact_law.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

namespace ncpkit {
namespace {

TEST_CASE("laws by index agree with the table's laws by name, over random tables") {
  std::mt19937 random(7);
  for (int seed = 0; seed < 200; ++seed) {
    std::uniform_int_distribution<int> count(1, 12);
    const int n = count(random);
    // Names drawn from a small set: some bodies share a name, some names have no body.
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) names.push_back("b" + std::to_string(random() % 8));
    ContactLawTable table;
    table.default_law.mu = 0.5;
    const int overrides = static_cast<int>(random() % 10);
    for (int k = 0; k < overrides; ++k) {
      ContactLaw law;
      law.mu = 0.01 * (k + 1);
      law.restitution = 0.05 * (k % 3);
      table.Set("b" + std::to_string(random() % 10), "b" + std::to_string(random() % 10), law);
    }
    const ContactLawsByIndex by_index(table, names);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        const ContactLaw& expected = table.Get(names[i], names[j]);
        const ContactLaw& got = by_index.Get(i, j);
        CHECK(got.mu == expected.mu);
        CHECK(got.restitution == expected.restitution);
      }
    }
  }
}

}  // namespace
}  // namespace ncpkit
