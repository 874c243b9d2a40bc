// The header-only C++ wrapper.
#include "FakeModels.h"

#include "kiln/kiln.hpp"

#include <gtest/gtest.h>

#include <type_traits>

using fake::floatTensor;
using fake::Shape23;

namespace {

static_assert(!std::is_copy_constructible_v<kiln::Session>);
static_assert(std::is_nothrow_move_constructible_v<kiln::Session>);

TEST(KilnHpp, RunAndMove) {
  kiln::Session S(fake::addModel());
  ASSERT_TRUE(S.valid()) << S.createStatus().message();
  EXPECT_STREQ(S.model().name, "add");

  std::vector<float> A(6, 1), B(6, 2), Y(6);
  kiln_tensor In[] = {floatTensor("a", A, Shape23, 2),
                      floatTensor("b", B, Shape23, 2)};
  kiln_tensor Out[] = {floatTensor("y", Y, Shape23, 2)};
  kiln::Session Moved = std::move(S);
  EXPECT_FALSE(S.valid());
  kiln::Status St = Moved.run(In, 2, Out, 1);
  ASSERT_TRUE(St) << St.message();
  EXPECT_EQ(Y[0], 3);

  // Running a moved-from session fails cleanly.
  EXPECT_EQ(S.run(In, 2, Out, 1).code(), KILN_ERROR_INVALID_ARGUMENT);

  In[0].dtype = KILN_DTYPE_INT32;
  St = Moved.run(In, 2, Out, 1);
  EXPECT_FALSE(St.ok());
  EXPECT_EQ(St.code(), KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_EQ(St.message(), "input \"a\": expected dtype float32, got int32");
}

TEST(KilnHpp, CreateFailure) {
  kiln_model_info Info = *fake::addModel();
  Info.abi_version = 0;
  kiln::Session S;
  kiln::Status St = kiln::Session::create(&Info, S);
  EXPECT_EQ(St.code(), KILN_ERROR_ABI_MISMATCH);
  EXPECT_FALSE(S.valid());
  EXPECT_NE(St.message().find("ABI version 0"), std::string::npos);
}

TEST(KilnHpp, TraceAttach) {
  kiln::Session S(fake::addModel());
  kiln::Trace T;
  ASSERT_TRUE(T.attach(S));
  std::vector<float> A(6), B(6), Y(6);
  kiln_tensor In[] = {floatTensor(nullptr, A, Shape23, 2),
                      floatTensor(nullptr, B, Shape23, 2)};
  kiln_tensor Out[] = {floatTensor(nullptr, Y, Shape23, 2)};
  ASSERT_TRUE(S.run(In, 2, Out, 1));
  EXPECT_FALSE(T.write("/nonexistent-dir/t.json"));
}

} // namespace
