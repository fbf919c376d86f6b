#include "integrators/mjcf/tree.h"

#include <tinyxml2.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <system_error>

#include "readers/text_scanner.h"
#include "solvers/base/input_error.h"

namespace ncpkit::internal {
namespace {

using tinyxml2::XMLDocument;
using tinyxml2::XMLElement;

// One path for each file, so that a cycle through "a.xml" and "./a.xml" is seen.
std::string Canonical(const std::string& path) {
  std::error_code error;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, error);
  return error ? path : canonical.string();
}

MjcfElement Convert(const XMLElement& element, const std::string& file) {
  MjcfElement out;
  out.name = element.Name();
  out.file = file;
  out.line = element.GetLineNum();
  for (const tinyxml2::XMLAttribute* a = element.FirstAttribute(); a != nullptr; a = a->Next()) {
    out.attributes.emplace_back(a->Name(), a->Value());
  }
  return out;
}

// Builds the tree, following includes; the documents stay alive only while they are read.
class TreeBuilder {
 public:
  explicit TreeBuilder(const std::string& source) : folder_(FolderOf(source)) {}

  MjcfElement Build(const std::string& text, const std::string& source) {
    bytes_ = static_cast<int64_t>(text.size());
    if (bytes_ > kMaxMjcfBytes) Fail(source, 0, "the file is larger than 256 MB");
    const std::unique_ptr<XMLDocument> doc = Parse(text, source);
    MjcfElement root = Convert(*doc->RootElement(), source);
    chain_.push_back(Canonical(source));
    AddChildren(*doc->RootElement(), source, 1, &root);
    return root;
  }

 private:
  [[noreturn]] static void Fail(const std::string& file, int line, const std::string& what) {
    throw InputError(file, line, "", what);
  }

  static std::unique_ptr<XMLDocument> Parse(const std::string& text, const std::string& file) {
    auto doc = std::make_unique<XMLDocument>();
    if (doc->Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS) {
      Fail(file, doc->ErrorLineNum(), std::string("not valid XML: ") + doc->ErrorStr());
    }
    const XMLElement* root = doc->RootElement();
    if (root == nullptr || std::string(root->Name()) != "mujoco") {
      Fail(file, root == nullptr ? 0 : root->GetLineNum(),
           "an MJCF file's root element is <mujoco>" +
               (root == nullptr ? std::string() : ", not <" + std::string(root->Name()) + ">"));
    }
    return doc;
  }

  void AddChildren(const XMLElement& parent, const std::string& file, int depth, MjcfElement* out) {
    for (const XMLElement* child = parent.FirstChildElement(); child != nullptr;
         child = child->NextSiblingElement()) {
      if (++elements_ > kMaxMjcfElements) {
        Fail(file, child->GetLineNum(), "more than 1,000,000 elements (includes counted)");
      }
      if (depth > kMaxMjcfElementDepth) {
        Fail(file, child->GetLineNum(), "elements nested more than 200 deep (includes counted)");
      }
      if (std::string(child->Name()) == "include") {
        Include(*child, file, depth, out);
        continue;
      }
      MjcfElement element = Convert(*child, file);
      AddChildren(*child, file, depth + 1, &element);
      out->children.push_back(std::move(element));
    }
  }

  // The children of the included file's root, in place of the include.
  void Include(const XMLElement& include, const std::string& file, int depth, MjcfElement* out) {
    const int line = include.GetLineNum();
    const char* name = include.Attribute("file");
    if (name == nullptr || *name == '\0' || include.FirstAttribute()->Next() != nullptr ||
        include.FirstChildElement() != nullptr) {
      Fail(file, line, "<include> takes one attribute, file, and no elements");
    }
    const std::string path = name[0] == '/' ? std::string(name) : folder_ + name;
    const std::string key = Canonical(path);
    const auto seen = std::find(chain_.begin(), chain_.end(), key);
    if (seen != chain_.end()) {
      std::string cycle;
      for (auto it = seen; it != chain_.end(); ++it) cycle += *it + " -> ";
      Fail(file, line, "cyclic include: " + cycle + key);
    }
    if (static_cast<int>(chain_.size()) > kMaxMjcfIncludeDepth) {
      Fail(file, line, "includes nested more than 16 deep");
    }
    std::string text;
    try {
      text = ReadTextFile(path);
    } catch (const InputError& e) {
      Fail(file, line, std::string("<include>: ") + e.what());
    }
    bytes_ += static_cast<int64_t>(text.size());
    if (bytes_ > kMaxMjcfBytes) Fail(file, line, "the model's files exceed 256 MB together");
    const std::unique_ptr<XMLDocument> doc = Parse(text, path);
    chain_.push_back(key);
    AddChildren(*doc->RootElement(), path, depth, out);
    chain_.pop_back();
  }

  std::string folder_;
  std::vector<std::string> chain_;  // the files being read, outermost first
  int64_t elements_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace

const std::string* MjcfElement::Find(const std::string& key) const {
  for (const auto& [name, value] : attributes) {
    if (name == key) return &value;
  }
  return nullptr;
}

std::string FolderOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

MjcfElement ParseMjcfTree(const std::string& text, const std::string& source) {
  return TreeBuilder(source).Build(text, source);
}

}  // namespace ncpkit::internal
