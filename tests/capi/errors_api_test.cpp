// Status codes are pinned, strings exist for each, the last error is per thread and never NULL.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "hcp/hcp.h"

namespace {

TEST(CapiErrors, StatusValuesArePinned) {
  EXPECT_EQ(HCP_OK, 0);
  EXPECT_EQ(HCP_ERR_INVALID_ARGUMENT, 1);
  EXPECT_EQ(HCP_ERR_INVALID_CONFIG, 2);
  EXPECT_EQ(HCP_ERR_BUFFER_TOO_SMALL, 3);
  EXPECT_EQ(HCP_ERR_OUT_OF_MEMORY, 4);
  EXPECT_EQ(HCP_ERR_IO, 5);
  EXPECT_EQ(HCP_ERR_PARSE, 6);
  EXPECT_EQ(HCP_ERR_UNSUPPORTED, 7);
  EXPECT_EQ(HCP_ERR_COMM, 8);
  EXPECT_EQ(HCP_ERR_TIMEOUT, 9);
  EXPECT_EQ(HCP_ERR_SHAPE, 10);
  EXPECT_EQ(HCP_ERR_NOT_FOUND, 11);
  EXPECT_EQ(HCP_ERR_INTERNAL, 12);
}

TEST(CapiErrors, StatusStringsNeverNull) {
  for (int s = -3; s < 40; ++s) {
    hcp_status status;
    std::memcpy(&status, &s, sizeof status);  // any int a C caller may pass
    const char* text = hcp_status_string(status);
    ASSERT_NE(text, nullptr);
    EXPECT_GT(std::strlen(text), 0u);
  }
  EXPECT_STREQ(hcp_status_string(HCP_ERR_INVALID_CONFIG), "invalid configuration");
  const int unknown = 999;
  hcp_status status;
  std::memcpy(&status, &unknown, sizeof status);
  EXPECT_STREQ(hcp_status_string(status), "unknown status");
}

TEST(CapiErrors, VersionMatchesTheProjectVersion) {
  // The loaded library against the package version CMake configured (HCP_PROJECT_VERSION), not a macro against
  // itself: the string said 0.1.0 while the number said 0.3.0.
  EXPECT_STREQ(hcp_version_string(), HCP_PROJECT_VERSION);
  unsigned major = 0, minor = 0, patch = 0;
  ASSERT_EQ(std::sscanf(HCP_PROJECT_VERSION, "%u.%u.%u", &major, &minor, &patch), 3);
  EXPECT_EQ(hcp_version_number(), major * 10000 + minor * 100 + patch);
  EXPECT_EQ(hcp_version_number(), static_cast<unsigned>(HCP_VERSION_NUMBER));
}

TEST(CapiErrors, LastErrorIsPerThreadAndNeverNull) {
  hcp_topology* t = nullptr;
  ASSERT_EQ(hcp_topology_create(&t, nullptr), HCP_ERR_INVALID_ARGUMENT);
  const std::string here = hcp_last_error();
  EXPECT_NE(here.find("hcp_topology_create: argument 'config' is NULL"), std::string::npos) << here;
  std::string other;
  std::thread([&] { other = hcp_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_EQ(std::string(hcp_last_error()), here);  // unchanged by the other thread and by successes
  EXPECT_EQ(hcp_version_number(), static_cast<unsigned>(HCP_VERSION_NUMBER));
  EXPECT_EQ(std::string(hcp_last_error()), here);
  hcp_free(nullptr);
}

}  // namespace
