// CSV text read back with libcsv (strict mode), for tests of what the project writes as CSV.
#pragma once
#include <gtest/gtest.h>

#include <csv.h>

#include <string>
#include <vector>

namespace ts_test {

/// One vector of fields per record, quotes undone.
inline std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  struct Acc {
    std::vector<std::vector<std::string>> rows{{}};
  } acc;
  csv_parser p;
  EXPECT_EQ(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI), 0);
  auto field = [](void* s, std::size_t n, void* data) {
    static_cast<Acc*>(data)->rows.back().emplace_back(static_cast<const char*>(s), n);
  };
  auto record = [](int, void* data) { static_cast<Acc*>(data)->rows.emplace_back(); };
  EXPECT_EQ(csv_parse(&p, text.data(), text.size(), field, record, &acc), text.size()) << csv_strerror(csv_error(&p));
  EXPECT_EQ(csv_fini(&p, field, record, &acc), 0);
  csv_free(&p);
  acc.rows.pop_back();  // the empty record opened after the last one
  return acc.rows;
}

}  // namespace ts_test
