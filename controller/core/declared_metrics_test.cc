// DeclaredMetrics against a real SQLite file: what a hello declares is
// stored with its benchmark, the newest declaration of a name wins, a
// hello that repeats what this core stored writes nothing, and a fresh
// instance loads what the store holds. A metric declared at run time (a
// workload's own) keeps the unit and direction it was first stored with.
#include "controller/core/declared_metrics.h"

#include <filesystem>
#include <memory>
#include <string>

#include "common/ulid.h"
#include "gmock/gmock.h"
#include "storage/sqlite_store.h"

namespace fleetbench::controller {
namespace {

class DeclaredMetricsOnAStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("declared_metrics_" + NewUlid());
    std::filesystem::create_directories(dir_);
    storage::SqliteOptions options;
    options.path = (dir_ / "h.db").string();
    auto store = storage::OpenSqliteStore(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  static v1::Hello HelloDeclaring(const std::string& unit) {
    v1::Hello hello;
    hello.set_name("n1");
    v1::Capability* c = hello.add_capabilities();
    c->set_benchmark("gemm");
    v1::MetricDescriptor* d = c->add_metrics();
    d->set_name("gemm.cpu.fp32.tflops");
    d->set_unit(unit);
    d->set_direction(v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
    return hello;
  }
  std::string StoredUnit() {
    auto all = store_->ListMetricDescriptors();
    EXPECT_TRUE(all.ok()) << all.status();
    return all.ok() && all->size() == 1 ? (*all)[0].unit() : "(not one descriptor)";
  }

  std::filesystem::path dir_;
  std::unique_ptr<storage::Store> store_;
};

TEST_F(DeclaredMetricsOnAStoreTest, AHelloStoresWhatDiffersAndTheNewestDeclarationWins) {
  DeclaredMetrics metrics(store_.get());
  ASSERT_TRUE(metrics.Load().ok());
  metrics.Declare(HelloDeclaring("tflops"));
  EXPECT_EQ(StoredUnit(), "tflops");
  EXPECT_EQ(metrics.stored().at("gemm.cpu.fp32.tflops").benchmark(), "gemm")
      << "the capability names the benchmark when the descriptor does not";
  metrics.Declare(HelloDeclaring("TFLOP/s"));
  EXPECT_EQ(StoredUnit(), "TFLOP/s");

  DeclaredMetrics fresh(store_.get());
  ASSERT_TRUE(fresh.Load().ok());
  EXPECT_EQ(fresh.stored().at("gemm.cpu.fp32.tflops").unit(), "TFLOP/s");
}

TEST_F(DeclaredMetricsOnAStoreTest, AHelloThatRepeatsWhatWasStoredWritesNothing) {
  DeclaredMetrics metrics(store_.get());
  ASSERT_TRUE(metrics.Load().ok());
  metrics.Declare(HelloDeclaring("tflops"));
  // Another writer changes the stored descriptor behind this one's back:
  // only a write by `metrics` could bring "tflops" back.
  DeclaredMetrics other(store_.get());
  ASSERT_TRUE(other.Load().ok());
  other.Declare(HelloDeclaring("other"));
  ASSERT_EQ(StoredUnit(), "other");
  metrics.Declare(HelloDeclaring("tflops"));
  EXPECT_EQ(StoredUnit(), "other") << "a reconnecting fleet repeats its hellos: no write";
}

TEST_F(DeclaredMetricsOnAStoreTest, ARunTimeDeclarationCannotChangeAStoredUnitOrDirection) {
  DeclaredMetrics metrics(store_.get());
  ASSERT_TRUE(metrics.Load().ok());
  auto declared = [](const std::string& unit, v1::MetricDirection direction,
                     const std::string& description) {
    v1::MetricDescriptor d;
    d.set_name("workload.train.step_s");
    d.set_benchmark("workload");
    d.set_unit(unit);
    d.set_direction(direction);
    d.set_description(description);
    return d;
  };
  metrics.DeclareAtRunTime("n1", {declared("s", v1::METRIC_DIRECTION_LOWER_IS_BETTER, "a")});
  metrics.DeclareAtRunTime("n2", {declared("h", v1::METRIC_DIRECTION_LOWER_IS_BETTER, "b")});
  metrics.DeclareAtRunTime("n2", {declared("s", v1::METRIC_DIRECTION_HIGHER_IS_BETTER, "c")});
  auto all = store_->ListMetricDescriptors();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].unit(), "s");
  EXPECT_EQ((*all)[0].direction(), v1::METRIC_DIRECTION_LOWER_IS_BETTER);
  EXPECT_EQ((*all)[0].description(), "a");

  metrics.DeclareAtRunTime("n1", {declared("s", v1::METRIC_DIRECTION_LOWER_IS_BETTER, "d")});
  all = store_->ListMetricDescriptors();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ((*all)[0].description(), "d") << "the same unit and direction may say more";
}

}  // namespace
}  // namespace fleetbench::controller
