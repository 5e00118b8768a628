#include "runtime/tensor_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "graph/tensor_diff.h"

namespace shoal {
namespace {

// A ReLU's output: about half the values zero.
Tensor Sparse(int64_t n, uint64_t seed) {
  Tensor t(Shape{1, n});
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0, 1);
  for (float& v : t.data) v = std::max(0.0f, nd(rng));
  return t;
}

Tensor Dense(int64_t n, uint64_t seed) {
  Tensor t(Shape{1, n});
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0, 1);
  for (float& v : t.data) v = nd(rng);
  return t;
}

TEST(TensorCodec, Lz4CompressesSparseValuesLosslessly) {
  const Tensor t = Sparse(20000, 1);
  rpc::TensorMessage m;
  EncodeTensor(t, WireSettings{WireDtype::kF32, true}, &m);
  EXPECT_EQ(m.compression(), rpc::TensorMessage::LZ4);
  EXPECT_EQ(m.raw_bytes(), 4 * 20000);
  // Half zeros: well under the raw bytes (about 0.6 of them).
  EXPECT_LT(m.data().size(), 0.8 * 4 * 20000);
  const WireSize size = WireSizeOf(m, 20000);
  EXPECT_FALSE(size.exact);
  EXPECT_EQ(size.bytes, 80000);
  auto back = TensorFromMessage(m, t.shape);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->data, t.data);  // bit for bit
}

TEST(TensorCodec, DenseValuesAndPlansWithoutLz4GoRaw) {
  rpc::TensorMessage m;
  EncodeTensor(Dense(5000, 2), WireSettings{WireDtype::kF32, true}, &m);
  EXPECT_EQ(m.compression(), rpc::TensorMessage::NONE);
  EXPECT_EQ(m.data().size(), 20000u);
  EncodeTensor(Sparse(5000, 3), WireSettings{}, &m);
  EXPECT_EQ(m.compression(), rpc::TensorMessage::NONE);
  EXPECT_TRUE(WireSizeOf(m, 5000).exact);
}

TEST(TensorCodec, Int8TransfersGoAsAByteAValue) {
  Tensor q(Shape{1, 2, 3});
  q.data = {-128.f, -1.f, 0.f, 1.f, 64.f, 127.f};
  rpc::TensorMessage m;
  EncodeTensor(q, WireSettings{WireDtype::kInt8, false}, &m);
  EXPECT_EQ(m.encoding(), rpc::TensorMessage::INT8);
  EXPECT_EQ(m.data().size(), 6u);
  EXPECT_EQ(EncodedValueBytes(m), 1);
  auto back = TensorFromMessage(m, q.shape);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->data, q.data);
  // A wrong size is refused; values that are not int8 go as float32.
  EXPECT_FALSE(TensorFromMessage(m, Shape{1, 7}).ok());
  for (float bad : {0.5f, 128.f, -129.f, NAN}) {
    Tensor t = q;
    t.data[2] = bad;
    EncodeTensor(t, WireSettings{WireDtype::kInt8, false}, &m);
    EXPECT_EQ(m.encoding(), rpc::TensorMessage::FLOAT32) << bad;
    auto b = TensorFromMessage(m, t.shape);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(std::memcmp(b->data.data(), t.data.data(), 24), 0) << bad;
  }
  // Sparse int8 values compress like floats do.
  Tensor z(Shape{1, 4096});
  for (size_t i = 0; i < z.data.size(); i += 3) z.data[i] = -7.f;
  EncodeTensor(z, WireSettings{WireDtype::kInt8, true}, &m);
  EXPECT_EQ(m.compression(), rpc::TensorMessage::LZ4);
  auto zb = TensorFromMessage(m, z.shape);
  ASSERT_TRUE(zb.ok());
  EXPECT_EQ(zb->data, z.data);
}

TEST(TensorCodec, HalfPrecisionRoundsToNearest) {
  Tensor t(Shape{1, 6});
  t.data = {1.0f, 1.0f + 1.0f / 4096, 3.14159265f, -65504.0f, 1e-3f, 0.0f};
  for (WireDtype d : {WireDtype::kF16, WireDtype::kBF16}) {
    rpc::TensorMessage m;
    EncodeTensor(t, WireSettings{d, false}, &m);
    EXPECT_EQ(m.data().size(), 12u);
    auto back = TensorFromMessage(m, t.shape);
    ASSERT_TRUE(back.ok()) << back.status().message();
    // Relative precision: 2^-11 (f16) or 2^-8 (bf16), half a unit of it.
    const double eps = d == WireDtype::kF16 ? 1.0 / 2048 : 1.0 / 256;
    for (size_t i = 0; i < t.data.size(); ++i) {
      EXPECT_LE(std::abs(back->data[i] - t.data[i]),
                eps * std::abs(t.data[i]) + 1e-7)
          << WireDtypeName(d) << " value " << t.data[i];
    }
    // What an in-process run does is what the wire does.
    Tensor rounded = t;
    RoundToWireDtype(d, &rounded);
    EXPECT_EQ(rounded.data, back->data) << WireDtypeName(d);
  }
  // Ties go to even: 1 + 2^-11 is halfway between two f16 values.
  Tensor tie(Shape{1, 1});
  tie.data = {1.0f + 1.0f / 2048};
  RoundToWireDtype(WireDtype::kF16, &tie);
  EXPECT_EQ(tie.data[0], 1.0f);
  Tensor nan(Shape{1, 1});
  nan.data = {std::numeric_limits<float>::quiet_NaN()};
  RoundToWireDtype(WireDtype::kBF16, &nan);
  EXPECT_TRUE(std::isnan(nan.data[0]));
}

TEST(TensorCodec, HalvesCompressToo) {
  const Tensor t = Sparse(20000, 4);
  rpc::TensorMessage m;
  EncodeTensor(t, WireSettings{WireDtype::kBF16, true}, &m);
  EXPECT_EQ(m.compression(), rpc::TensorMessage::LZ4);
  EXPECT_EQ(m.raw_bytes(), 2 * 20000);
  auto back = TensorFromMessage(m, t.shape);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_LE(MaxRelDiff(*back, t), 1.0 / 256);
}

// What a peer sends is checked against the region the plan gives it
// before anything is allocated from it.
TEST(TensorCodec, HostileMessagesAreRefusedByName) {
  const Tensor t = Sparse(4096, 5);
  rpc::TensorMessage good;
  EncodeTensor(t, WireSettings{WireDtype::kF32, true}, &good);
  ASSERT_EQ(good.compression(), rpc::TensorMessage::LZ4);

  rpc::TensorMessage big = good;
  big.set_raw_bytes(int64_t{1} << 40);  // a terabyte, please
  auto r = TensorFromMessage(big, t.shape);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("holds"), std::string::npos);

  rpc::TensorMessage corrupt = good;
  std::string data = corrupt.data();
  for (size_t i = 0; i < data.size(); i += 7) data[i] ^= 0x5a;
  corrupt.set_data(data);
  r = TensorFromMessage(corrupt, t.shape);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("corrupt"), std::string::npos)
      << r.status().message();

  rpc::TensorMessage truncated = good;
  truncated.set_data(good.data().substr(0, good.data().size() / 2));
  EXPECT_FALSE(TensorFromMessage(truncated, t.shape).ok());

  rpc::TensorMessage unknown = good;
  unknown.set_compression(static_cast<rpc::TensorMessage::Compression>(9));
  r = TensorFromMessage(unknown, t.shape);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("compression 9"), std::string::npos);

  rpc::TensorMessage half;
  EncodeTensor(t, WireSettings{WireDtype::kF16, false}, &half);
  half.mutable_data()->pop_back();
  EXPECT_FALSE(TensorFromMessage(half, t.shape).ok());
  half.set_encoding(static_cast<rpc::TensorMessage::Encoding>(7));
  EXPECT_EQ(EncodedValueBytes(half), 0);
  EXPECT_FALSE(TensorFromMessage(half, t.shape).ok());
}

}  // namespace
}  // namespace shoal
