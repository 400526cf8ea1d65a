/*
 * cxxname.h: the parts of a demangled C++ name.
 */
#ifndef CMON_CORE_CXXNAME_H
#define CMON_CORE_CXXNAME_H

/* Where NAME's parameter list starts ("ns::A::f(int) const" -> "(int)
 * const"), or NULL when it has none ("main", "(anonymous namespace)::x",
 * "A::operator()"). */
const char *cxxname__params(const char *name);

#endif
