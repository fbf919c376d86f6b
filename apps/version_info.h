// The program's version and the git commit of the sources it was built from (written at build
// time by cmake/version_info.cmake; "unknown" outside a git checkout, "-dirty" appended when the
// tree had uncommitted changes).
#ifndef NCPKIT_APPS_VERSION_INFO_H_
#define NCPKIT_APPS_VERSION_INFO_H_

namespace ncpkit {

extern const char* const kVersion;
extern const char* const kCommit;

}  // namespace ncpkit

#endif  // NCPKIT_APPS_VERSION_INFO_H_
