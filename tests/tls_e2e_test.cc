// TLS by default and one identity per node, end to end (docs/security.md). Real
// controller and agent processes, the CLI as users run it, and a recording
// TCP proxy between them standing for an attacker on the path.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/ca_fetch.h"
#include "common/pem_files.h"
#include "common/token.h"
#include "common/transport.h"
#include "common/x509.h"
#include "fleetbench/v1/agent_service.grpc.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"
#include "tests/tcp_recorder.h"

namespace fleetbench::testing {
namespace {

const std::vector<std::string> kQuickGemm = {
    "--param", "gemm.sizes=128", "--param", "gemm.min_seconds=0.2", "--param", "gemm.threads=1"};

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class TlsTest : public FleetTest {
 protected:
  void SetUp() override {
    FleetTest::SetUp();
    // Each test here says how its agents connect: enrolled
    // (StartEnrolledAgent), on the shared token, pinned or --insecure.
    enroll_agents_ = false;
  }
  std::string Token() { return env_.at("FLEETBENCH_TOKEN"); }
  Process* StartEnrolledAgent(const std::string& name, std::vector<std::string> labels = {}) {
    agent_flags_ = {"--enroll-token-file", enroll_file_};
    Process* p = StartAgent(name, labels);
    agent_flags_.clear();
    return p;
  }
  // An AgentGateway stub with this client identity (may be empty).
  std::unique_ptr<v1::AgentGateway::Stub> Gateway(const std::string& cert, const std::string& key) {
    ClientTls tls;
    tls.ca_pem = *ReadSmallFile(CaPath());
    tls.cert_pem = cert;
    tls.key_pem = key;
    return v1::AgentGateway::NewStub(
        grpc::CreateChannel(address_, ChannelCredentialsFor(address_, tls)));
  }
  // Opens a stream, says hello as `name`, answers the stream's status
  // (OK when it was welcomed).
  grpc::Status HelloAs(v1::AgentGateway::Stub& stub, const std::string& name,
                       const std::string& token = "") {
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata(kAuthMetadataKey, "Bearer " + token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    auto stream = stub.Connect(&context);
    v1::AgentMessage hello;
    hello.mutable_hello()->set_name(name);
    (*hello.mutable_hello()->mutable_labels())["price_per_hour"] = "0.0001";
    stream->Write(hello);
    v1::ControllerMessage first;
    if (stream->Read(&first) && first.has_welcome()) {
      context.TryCancel();
      stream->Finish();
      return grpc::Status::OK;
    }
    return stream->Finish();
  }
  // A certificate for `name` from this controller's CA, valid from
  // `not_before` for `validity`, with a fresh key.
  x509::KeyAndCert IssueDirectly(const std::string& name, absl::Time not_before,
                                 absl::Duration validity) {
    x509::KeyAndCert ca{*ReadSmallFile(db_path_ + ".tls/ca.key"), *ReadSmallFile(CaPath())};
    std::string key = *x509::NewPrivateKeyPem();
    std::string cert =
        *x509::SignClientCsr(ca, *x509::NewCsrPem(key, name), name, not_before, validity);
    return {key, cert};
  }
  v1::Node NodeNamed(const std::string& name) {
    v1::ListNodesResponse nodes;
    EXPECT_TRUE(CliJson({"nodes"}, &nodes));
    for (const v1::Node& n : nodes.nodes()) {
      if (n.name() == name) return n;
    }
    return v1::Node();
  }
};

// The bytes of `value` as protobuf writes a double (little-endian).
std::string DoubleBytes(double value) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &value, 8);
  return out;
}

TEST_F(TlsTest, ACaptureOfEnrollmentARunAndCliCallsHoldsNoTokenAndNoSample) {
  StartController();
  TcpRecorder wire(std::stoi(address_.substr(address_.rfind(':') + 1)));
  address_ = wire.address();  // every agent and CLI call goes through it
  StartEnrolledAgent("cap-1", {"region=secret-region"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(60)));
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson(Concat({"run", "--bench", "gemm", "--wait"}, kQuickGemm), &run, &code));
  ASSERT_EQ(code, 0);
  ASSERT_GT(run.samples_size(), 0);
  v1::Run stored;
  ASSERT_TRUE(CliJson({"results", run.run_id()}, &stored));

  const std::string captured = wire.Captured();
  EXPECT_GT(captured.size(), 10000u);  // the test saw the traffic
  EXPECT_FALSE(absl::StrContains(captured, Token())) << "the token travels in clear";
  EXPECT_FALSE(absl::StrContains(captured, "gemm.cpu.fp32.tflops"));
  EXPECT_FALSE(absl::StrContains(captured, "secret-region"));
  EXPECT_FALSE(absl::StrContains(captured, run.run_id()));
  for (const v1::Sample& s : stored.samples()) {
    EXPECT_FALSE(absl::StrContains(captured, DoubleBytes(s.value())))
        << s.metric() << " = " << s.value() << " travels in clear";
  }
}

TEST_F(TlsTest, APlaintextCaptureShowsWhatTlsHides) {
  // The control for the test above: with --insecure on both sides the same
  // proxy does see the token and the samples, so its absence means TLS.
  StartController({"--insecure"});
  env_.erase("FLEETBENCH_CA");
  TcpRecorder wire(std::stoi(address_.substr(address_.rfind(':') + 1)));
  address_ = wire.address();
  agent_flags_ = {"--insecure"};
  StartAgent("plain-1", {"region=secret-region"});
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(Cli({"nodes", "--insecure"}).out, "online"); },
                      absl::Seconds(30)));
  const std::string captured = wire.Captured();
  EXPECT_TRUE(absl::StrContains(captured, Token()));
  EXPECT_TRUE(absl::StrContains(captured, "secret-region"));
  EXPECT_NE(ReadSmallFile(dir_ + "/controller.log")->find("PLAINTEXT"), std::string::npos);
  EXPECT_NE(AgentLog("plain-1").find("PLAINTEXT"), std::string::npos);
}

TEST_F(TlsTest, InsecureOnOneSideOnlyFailsWithAClearError) {
  StartController();
  CommandResult plain = Cli({"nodes", "--insecure"});
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_NE(plain.err.find("drop --insecure"), std::string::npos) << plain.err;

  KillController(SIGTERM);
  StartController({"--insecure"});
  CommandResult tls = Cli({"nodes"});
  EXPECT_EQ(tls.exit_code, 1);
  EXPECT_NE(tls.err.find("started with --insecure"), std::string::npos) << tls.err;
  CommandResult enroll = RunCommand(
      {FLEETBENCH_BINARY, "agent", "--controller", address_, "--name", "x", "--state-dir",
       dir_ + "/x", "--insecure", "--enroll-token-file", enroll_file_},
      env_);
  EXPECT_EQ(enroll.exit_code, 2);
  EXPECT_NE(enroll.err.find("enrolling needs TLS"), std::string::npos) << enroll.err;
}

TEST_F(TlsTest, AnAgentPinsTheCaByFingerprintAndRefusesAnother) {
  StartController();
  const std::string fingerprint = x509::ParseCert(*ReadSmallFile(CaPath()))->fingerprint;
  env_.erase("FLEETBENCH_CA");
  agent_flags_ = {"--ca-fingerprint", "sha256:" + std::string(64, '0')};
  Process* wrong = StartAgent("pin-wrong", {});
  EXPECT_EQ(wrong->WaitFor(absl::Seconds(30)), 1);
  EXPECT_NE(AgentLog("pin-wrong").find("presents no CA with fingerprint"), std::string::npos)
      << AgentLog("pin-wrong");

  agent_flags_ = {"--ca-fingerprint", fingerprint, "--enroll-token-file", enroll_file_};
  StartAgent("pin-1", {});
  env_["FLEETBENCH_CA"] = CaPath();
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(60)));
  EXPECT_TRUE(FileExists(dir_ + "/agent-pin-1/identity/ca.pem"));
  EXPECT_TRUE(FileExists(dir_ + "/agent-pin-1/identity/cert.pem"));
}

TEST_F(TlsTest, TheHijackAsTriedIsRefusedAndTheRealNodeKeepsItsTask) {
  StartController();
  StartEnrolledAgent("real-1", {"price_per_hour=2"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(60)));
  // The real node's task: long enough to still run while it is attacked.
  v1::StartRunResponse started;
  ASSERT_TRUE(CliJson({"run", "--bench", "gemm", "--param", "gemm.sizes=256", "--param",
                       "gemm.min_seconds=60", "--param", "gemm.max_runs=100000", "--param",
                       "gemm.threads=1"},
                      &started));
  auto running = [&] {
    v1::Run run;
    return CliJson({"results", started.run_id()}, &run) && run.tasks_size() == 1 &&
           run.tasks(0).state() == v1::TASK_STATE_RUNNING;
  };
  ASSERT_TRUE(WaitFor(running, absl::Seconds(30)));

  // 1. The shared token, presenting the online node's name: refused.
  auto anonymous = Gateway("", "");
  grpc::Status with_token = HelloAs(*anonymous, "real-1", Token());
  EXPECT_EQ(with_token.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(with_token.error_message().find("certificate"), std::string::npos)
      << with_token.error_message();
  // The same as a real agent process in a state folder of its own.
  CommandResult second = RunCommand({FLEETBENCH_BINARY, "agent", "--controller", address_,
                                     "--name", "real-1", "--state-dir", dir_ + "/intruder"},
                                    env_);
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("has a certificate identity"), std::string::npos) << second.err;

  // 2. A valid enrollment token, for the enrolled name: refused.
  CommandResult take = RunCommand(
      {FLEETBENCH_BINARY, "agent", "--controller", address_, "--name", "real-1", "--state-dir",
       dir_ + "/intruder2", "--enroll-token-file", enroll_file_},
      env_);
  EXPECT_EQ(take.exit_code, 1);
  EXPECT_NE(take.err.find("already enrolled"), std::string::npos) << take.err;

  // 3. A valid enrollment token for a different name, then that name's
  // certificate saying hello as the online node: refused.
  v1::EnrollRequest request;
  request.set_node_name("evil-1");
  std::string evil_key = *x509::NewPrivateKeyPem();
  request.set_csr_pem(*x509::NewCsrPem(evil_key, "real-1"));
  v1::EnrollResponse enrolled;
  {
    grpc::ClientContext context;
    context.AddMetadata(kAuthMetadataKey, "Bearer " + Token());
    ASSERT_TRUE(anonymous->Enroll(&context, request, &enrolled).ok());
  }
  // The name is the one enrolled, whatever the CSR asked for.
  EXPECT_EQ(x509::ParseCert(enrolled.certificate_pem())->common_name, "evil-1");
  auto as_evil = Gateway(enrolled.certificate_pem(), evil_key);
  grpc::Status hijack = HelloAs(*as_evil, "real-1");
  EXPECT_EQ(hijack.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(hijack.error_message().find("node evil-1's"), std::string::npos)
      << hijack.error_message();
  // A certificate the test made from a CA of its own is not this one's.
  x509::KeyAndCert other_ca = *x509::NewCa("other", absl::Hours(1));
  std::string other_key = *x509::NewPrivateKeyPem();
  std::string other_cert = *x509::SignClientCsr(other_ca, *x509::NewCsrPem(other_key, "real-1"),
                                                "real-1", absl::Now(), absl::Hours(1));
  auto as_other = Gateway(other_cert, other_key);
  grpc::Status foreign = HelloAs(*as_other, "real-1");
  EXPECT_EQ(foreign.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(foreign.error_message().find("not from this controller's CA"), std::string::npos)
      << foreign.error_message();

  // The real node: still online, its task still running, its price its own.
  EXPECT_TRUE(running());
  v1::Node real = NodeNamed("real-1");
  EXPECT_EQ(real.status(), v1::NODE_STATUS_ONLINE);
  EXPECT_EQ(real.labels().at("price_per_hour"), "2");
  EXPECT_EQ(NodeNamed("evil-1").name(), "");  // enrolled, never said hello
  ASSERT_EQ(Cli({"cancel", started.run_id()}).exit_code, 0);
}

TEST_F(TlsTest, ExpiredRevokedAndForeignCertificatesAreRefusedWithTheReason) {
  StartController();
  // Expired: issued by the right CA, two days ago, for one day.
  x509::KeyAndCert expired =
      IssueDirectly("old-1", absl::Now() - absl::Hours(48), absl::Hours(24));
  auto as_expired = Gateway(expired.cert_pem, expired.key_pem);
  grpc::Status s = HelloAs(*as_expired, "old-1");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(s.error_message().find("expired at"), std::string::npos) << s.error_message();
  // The agent with it in its state folder says so before it dials.
  ASSERT_TRUE(EnsureDir(dir_ + "/agent-old-1", 0700).ok());
  ASSERT_TRUE(EnsureDir(dir_ + "/agent-old-1/identity", 0700).ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/agent-old-1/identity/cert.pem", expired.cert_pem, 0644).ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/agent-old-1/identity/key.pem", expired.key_pem, 0600).ok());
  EXPECT_EQ(StartAgent("old-1", {})->WaitFor(absl::Seconds(30)), 1);
  EXPECT_NE(AgentLog("old-1").find("certificate expired at"), std::string::npos)
      << AgentLog("old-1");

  // A certificate the CA signed but never enrolled (no identity stored).
  x509::KeyAndCert unenrolled = IssueDirectly("ghost-1", absl::Now(), absl::Hours(1));
  grpc::Status ghost = HelloAs(*Gateway(unenrolled.cert_pem, unenrolled.key_pem), "ghost-1");
  EXPECT_EQ(ghost.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(ghost.error_message().find("no identity"), std::string::npos)
      << ghost.error_message();

  // Revoked: the stream closes at once, the agent stops, and it stays out.
  Process* agent = StartEnrolledAgent("rev-1");
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(60)));
  CommandResult revoke = Cli({"nodes", "revoke", "rev-1"});
  ASSERT_EQ(revoke.exit_code, 0) << revoke.err;
  EXPECT_NE(revoke.out.find("its stream is closed"), std::string::npos) << revoke.out;
  EXPECT_EQ(agent->WaitFor(absl::Seconds(30)), 1);
  EXPECT_NE(AgentLog("rev-1").find("was revoked"), std::string::npos) << AgentLog("rev-1");
  EXPECT_TRUE(WaitFor([&] { return NodeNamed("rev-1").status() == v1::NODE_STATUS_OFFLINE; },
                      absl::Seconds(30)));
  agents_.erase("rev-1");
  EXPECT_EQ(StartAgent("rev-1", {})->WaitFor(absl::Seconds(30)), 1);
  EXPECT_NE(AgentLog("rev-1").find("was revoked at"), std::string::npos) << AgentLog("rev-1");
  CommandResult again = Cli({"nodes", "revoke", "rev-1"});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("no live identity"), std::string::npos) << again.err;
  // Re-enrolled with a new key, it is back.
  std::filesystem::remove_all(dir_ + "/agent-rev-1/identity");
  agents_.erase("rev-1");
  StartEnrolledAgent("rev-1");
  EXPECT_TRUE(WaitFor([&] { return NodeNamed("rev-1").status() == v1::NODE_STATUS_ONLINE; },
                      absl::Seconds(60)));
}

// Occurrences of `needle` in `text`.
int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(TlsTest, AnAgentRenewsItsCertificateOnItsOwnKeepsItsTaskAndTheOldOneEnds) {
  // 60 s certificates: renewed about 38 s after they are issued (2/3 of
  // their life, which starts 6 s back), so the first is still within its
  // validity when the test presents it after the switch.
  StartController({"--node-cert-validity", "60s"});
  const std::string identity = dir_ + "/agent-renew-1/identity";
  StartEnrolledAgent("renew-1");
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(60)));
  const x509::KeyAndCert first{*ReadSmallFile(identity + "/key.pem"),
                               *ReadSmallFile(identity + "/cert.pem")};
  const x509::CertInfo first_info = *x509::ParseCert(first.cert_pem);
  ASSERT_LT(first_info.not_after - first_info.not_before, absl::Seconds(70));
  v1::StartRunResponse started;
  // A task that runs across the renewal (and on, until it is cancelled).
  ASSERT_TRUE(CliJson({"run", "--bench", "gemm", "--param", "gemm.sizes=256", "--param",
                       "gemm.min_seconds=600", "--param", "gemm.max_runs=100000", "--param",
                       "gemm.threads=1"},
                      &started));
  auto task_state = [&] {
    v1::Run run;
    if (!CliJson({"results", started.run_id()}, &run) || run.tasks_size() != 1) {
      return v1::TASK_STATE_UNSPECIFIED;
    }
    return run.tasks(0).state();
  };
  ASSERT_TRUE(WaitFor([&] { return task_state() == v1::TASK_STATE_RUNNING; }, absl::Seconds(30)));

  // The agent renews on its own: a new certificate for a new key, same name.
  auto current_serial = [&] {
    absl::StatusOr<std::string> cert = ReadSmallFile(identity + "/cert.pem");
    absl::StatusOr<x509::CertInfo> info =
        cert.ok() ? x509::ParseCert(*cert) : absl::StatusOr<x509::CertInfo>(cert.status());
    return info.ok() ? info->serial_hex : std::string();
  };
  ASSERT_TRUE(WaitFor([&] { return !current_serial().empty() &&
                                   current_serial() != first_info.serial_hex; },
                      absl::Seconds(90)))
      << AgentLog("renew-1");
  const x509::KeyAndCert second{*ReadSmallFile(identity + "/key.pem"),
                                *ReadSmallFile(identity + "/cert.pem")};
  const x509::CertInfo second_info = *x509::ParseCert(second.cert_pem);
  EXPECT_EQ(second_info.common_name, "renew-1");
  EXPECT_TRUE(x509::KeyMatchesCert(second.key_pem, second.cert_pem));
  EXPECT_NE(second_info.public_key_fingerprint, first_info.public_key_fingerprint);
  EXPECT_FALSE(FileExists(identity + "/renew.key.pem"));
  EXPECT_FALSE(FileExists(identity + "/renew.cert.pem"));
  struct stat key_stat {};
  ASSERT_EQ(stat((identity + "/key.pem").c_str(), &key_stat), 0);
  EXPECT_EQ(key_stat.st_mode & 0777, 0600u);
  // The task runs on over the old certificate's stream: no reconnect yet.
  EXPECT_EQ(task_state(), v1::TASK_STATE_RUNNING);
  EXPECT_EQ(Count(AgentLog("renew-1"), "connected to"), 1) << AgentLog("renew-1");

  // The old stream still carries what the controller sends: the cancel
  // reaches the task. Once it ended, the agent dials with its new identity.
  ASSERT_EQ(Cli({"cancel", started.run_id()}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return task_state() == v1::TASK_STATE_CANCELLED; },
                      absl::Seconds(60)));
  ASSERT_TRUE(WaitFor([&] { return Count(AgentLog("renew-1"), "connected to") >= 2; },
                      absl::Seconds(30)))
      << AgentLog("renew-1");
  EXPECT_NE(AgentLog("renew-1").find("reconnecting with the renewed certificate"),
            std::string::npos);
  // The old certificate, still inside its validity, ended when the new
  // one was presented.
  ASSERT_LT(absl::Now(), first_info.not_after);
  grpc::Status old = HelloAs(*Gateway(first.cert_pem, first.key_pem), "renew-1");
  EXPECT_EQ(old.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(old.error_message().find("not its current one"), std::string::npos)
      << old.error_message();
  EXPECT_TRUE(WaitFor([&] { return NodeNamed("renew-1").status() == v1::NODE_STATUS_ONLINE; },
                      absl::Seconds(30)));
  v1::Run quick;
  int code = -1;
  ASSERT_TRUE(CliJson(Concat({"run", "--bench", "gemm", "--wait"}, kQuickGemm), &quick, &code));
  EXPECT_EQ(code, 0);
  EXPECT_GT(quick.samples_size(), 0);

  // A call without a certificate cannot renew anyone.
  grpc::ClientContext context;
  context.AddMetadata(kAuthMetadataKey, "Bearer " + Token());
  v1::RenewRequest request;
  request.set_csr_pem(*x509::NewCsrPem(*x509::NewPrivateKeyPem(), "renew-1"));
  v1::RenewResponse response;
  grpc::Status anonymous = Gateway("", "")->Renew(&context, request, &response);
  EXPECT_EQ(anonymous.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(anonymous.error_message().find("needs the node's certificate"), std::string::npos)
      << anonymous.error_message();
}

// The serial of the certificate the controller at `address` presents to a
// new connection now; "" when none could be read.
std::string ServedSerial(const std::string& address) {
  absl::StatusOr<std::vector<std::string>> chain = FetchPresentedChain(address, absl::Seconds(5));
  if (!chain.ok() || chain->empty()) return "";
  absl::StatusOr<x509::CertInfo> info = x509::ParseCert(chain->front());
  return info.ok() ? info->serial_hex : "";
}

TEST_F(TlsTest, ASighupServesANewServerCertificateAndKeepsTheStreams) {
  StartController();
  StartEnrolledAgent("hup-1");
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(60)));
  const std::string tls_dir = db_path_ + ".tls";
  const std::string before = ServedSerial(address_);
  ASSERT_EQ(before, x509::ParseCert(*ReadSmallFile(tls_dir + "/server.pem"))->serial_hex);

  // The operator's part: a certificate of their own from the same CA, for
  // the names the controller needs, in place of the old one.
  x509::KeyAndCert ca{*ReadSmallFile(tls_dir + "/ca.key"), *ReadSmallFile(CaPath())};
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  x509::KeyAndCert mine =
      *x509::NewServerCert(ca, {"127.0.0.1", "::1", "localhost", host}, absl::Hours(24 * 200));
  const std::string new_serial = x509::ParseCert(mine.cert_pem)->serial_hex;
  ASSERT_TRUE(WriteFileAtomically(tls_dir + "/server.key", mine.key_pem, 0600).ok());
  ASSERT_TRUE(WriteFileAtomically(tls_dir + "/server.pem", mine.cert_pem, 0644).ok());
  // Nothing changes until the controller is told.
  EXPECT_EQ(ServedSerial(address_), before);
  controller_->Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] { return ServedSerial(address_) == new_serial; }, absl::Seconds(30)))
      << ReadSmallFile(dir_ + "/controller.log").value_or("");
  EXPECT_TRUE(absl::StrContains(*ReadSmallFile(dir_ + "/controller.log"),
                                "TLS reloaded: serving certificate serial " + new_serial));
  struct stat serving {};
  ASSERT_EQ(stat((tls_dir + "/serving.pem").c_str(), &serving), 0);
  EXPECT_EQ(serving.st_mode & 0777, 0600u);

  // New connections verify it against the CA they had: the CLI works.
  CommandResult nodes = Cli({"nodes"});
  EXPECT_EQ(nodes.exit_code, 0) << nodes.err;
  // The agent's stream, opened on the old certificate, is still the one:
  // a run goes over it, and the agent never dialled again.
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson(Concat({"run", "--bench", "gemm", "--wait"}, kQuickGemm), &run, &code));
  EXPECT_EQ(code, 0);
  EXPECT_GT(run.samples_size(), 0);
  EXPECT_EQ(Count(AgentLog("hup-1"), "connected to"), 1) << AgentLog("hup-1");
  EXPECT_EQ(NodeNamed("hup-1").status(), v1::NODE_STATUS_ONLINE);

  // A new CA is not taken by a reload: what is served stays.
  x509::KeyAndCert other = *x509::NewCa("other", absl::Hours(24));
  const std::string ca_pem = *ReadSmallFile(CaPath());
  const std::string ca_key = *ReadSmallFile(tls_dir + "/ca.key");
  ASSERT_TRUE(WriteFileAtomically(tls_dir + "/ca.key", other.key_pem, 0600).ok());
  ASSERT_TRUE(WriteFileAtomically(CaPath(), other.cert_pem, 0644).ok());
  controller_->Signal(SIGHUP);
  EXPECT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(ReadSmallFile(dir_ + "/controller.log").value_or(""),
                                 "is not the CA this controller started with");
      },
      absl::Seconds(30)));
  ASSERT_TRUE(WriteFileAtomically(tls_dir + "/ca.key", ca_key, 0600).ok());
  ASSERT_TRUE(WriteFileAtomically(CaPath(), ca_pem, 0644).ok());
  EXPECT_EQ(ServedSerial(address_), new_serial);
  EXPECT_EQ(Cli({"nodes"}).exit_code, 0);
}

TEST_F(TlsTest, NodeCertValidityIsBoundsChecked) {
  for (const char* bad : {"5s", "400d", "soon"}) {
    CommandResult r = RunCommand({FLEETBENCH_BINARY, "controller", "--db", db_path_,
                                  "--listen", "127.0.0.1:0", "--node-cert-validity", bad},
                                 env_);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--node-cert-validity wants a duration from 20s to 397d"),
              std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace fleetbench::testing
