// Source lines from the debug information (touchstone/source_lines.hpp): this file is built with
// -g, and each expected line is the __LINE__ of the code the address belongs to, so the answers can
// only come from reading this executable's DWARF.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "touchstone/source_lines.hpp"

using touchstone::source_line;
using touchstone::SourceLine;

namespace probe {

// The first instruction of a function belongs to the line that opens it.
constexpr int kNamedFunctionLine = __LINE__ + 1;
[[gnu::noinline]] int named_function(int x) {
  asm volatile("" : "+r"(x));  // keeps the body, and so the function, as written
  return x + 1;
}

// The address just after the call in its caller: the call's own address is one byte before.
[[gnu::noinline]] const void* return_address() { return __builtin_return_address(0); }

}  // namespace probe

extern "C" [[gnu::noinline]] int c_function(int x) {
  asm volatile("" : "+r"(x));
  return x * 2;
}
constexpr int kCFunctionLine = __LINE__ - 4;

namespace {

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

TEST(SourceLines, NamesTheFunctionFileAndLineOfAFunctionsEntry) {
  const SourceLine s = source_line(reinterpret_cast<const void*>(&probe::named_function));
  EXPECT_EQ(s.function, "probe::named_function(int)");
  EXPECT_EQ(base_name(s.file), "test_source_lines.cpp");
  EXPECT_EQ(s.file.front(), '/') << s.file;  // absolute, whatever path the compiler was given
  EXPECT_EQ(s.line, probe::kNamedFunctionLine);
  EXPECT_TRUE(s.has_line());
}

TEST(SourceLines, CFunctionsKeepTheirPlainName) {
  const SourceLine s = source_line(reinterpret_cast<const void*>(&c_function));
  EXPECT_EQ(s.function, "c_function");
  EXPECT_EQ(base_name(s.file), "test_source_lines.cpp");
  EXPECT_EQ(s.line, kCFunctionLine);
}

TEST(SourceLines, AReturnAddressLessOneIsTheLineOfTheCall) {
  const void* back = probe::return_address(); const int call_line = __LINE__;
  const SourceLine s = source_line(static_cast<const char*>(back) - 1);
  EXPECT_EQ(base_name(s.file), "test_source_lines.cpp");
  EXPECT_EQ(s.line, call_line);
  EXPECT_NE(s.function.find("AReturnAddressLessOneIsTheLineOfTheCall"), std::string::npos) << s.function;
}

TEST(SourceLines, TheModuleIsTheExecutableFile) {
  const SourceLine s = source_line(reinterpret_cast<const void*>(&c_function));
  char self[4096] = {};
  ASSERT_GT(::readlink("/proc/self/exe", self, sizeof self - 1), 0);
  EXPECT_EQ(s.module, self);
}

TEST(SourceLines, AnAddressOfNoModuleIsUnknown) {
  int on_the_stack = 0;
  const SourceLine s = source_line(&on_the_stack);
  EXPECT_TRUE(s.module.empty());
  EXPECT_TRUE(s.function.empty());
  EXPECT_FALSE(s.has_line());
  EXPECT_FALSE(source_line(nullptr).has_line());
}

// A shared library's function, looked up through its load bias: the C library's symbol tables
// name it even where it has no DWARF.
TEST(SourceLines, FunctionsOfSharedLibrariesAreNamed) {
  void* getpid_address = ::dlsym(RTLD_DEFAULT, "getpid");
  ASSERT_NE(getpid_address, nullptr);
  const SourceLine s = source_line(getpid_address);
  EXPECT_NE(s.module.find("libc"), std::string::npos) << s.module;
  EXPECT_NE(s.function.find("getpid"), std::string::npos) << s.function;
}

// Reports may be written from several host threads (--execution threads): the kept Dwfl is shared.
TEST(SourceLines, ThreadsGetTheSameAnswers) {
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (std::size_t t = 0; t < wrong.size(); ++t)
    threads.emplace_back([&wrong, t] {
      for (int i = 0; i < 200; ++i) {
        const SourceLine s = source_line(reinterpret_cast<const void*>(i % 2 ? &c_function : nullptr));
        if (i % 2 ? s.line != kCFunctionLine : s.has_line()) ++wrong[t];
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

}  // namespace
