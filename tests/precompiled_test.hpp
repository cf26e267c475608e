// The test objects' precompiled header: the library's (demi/precompiled.hpp) and GoogleTest,
// which every test reads and which costs as much to parse as the schema's classes.
#ifndef DEMI_TESTS_PRECOMPILED_TEST_HPP_
#define DEMI_TESTS_PRECOMPILED_TEST_HPP_

#include <gtest/gtest.h>

#include "demi/precompiled.hpp"

#endif  // DEMI_TESTS_PRECOMPILED_TEST_HPP_
