// bench/grpc_floor.cc — the smallest C++ gRPC client of the controller: a
// channel to ADDRESS and one unary call (Rank of a metric nobody declares,
// which the controller answers NOT_FOUND before any query), linked like
// the `fleetbench` client (static gRPC, protobuf and OpenSSL). No flags,
// no output formatting, no CA lookup: what any fresh-process gRPC client
// pays on this machine, the floor under every CLI call.
//
//   FLEETBENCH_TOKEN=... fleetbench_grpc_floor unix:DB.sock
//   FLEETBENCH_TOKEN=... fleetbench_grpc_floor 127.0.0.1:7070 CA.pem
//   bench/cli_pairs.py 41 "fleetbench_grpc_floor unix:DB.sock"
//                         "fleetbench rank --metric no.such.metric --controller unix:DB.sock"
//
// Exits 0 when the call came back NOT_FOUND, as it should; 1 otherwise.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "common/transport.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s ADDRESS [CA.pem]  (token in $FLEETBENCH_TOKEN)\n", argv[0]);
    return 2;
  }
  const char* token = std::getenv("FLEETBENCH_TOKEN");
  if (token == nullptr) {
    std::fprintf(stderr, "set FLEETBENCH_TOKEN\n");
    return 2;
  }
  fleetbench::ClientTls tls;
  if (argc == 3) {
    std::ifstream ca(argv[2]);
    tls.ca_pem.assign(std::istreambuf_iterator<char>(ca), std::istreambuf_iterator<char>());
  }
  auto stub = fleetbench::v1::Fleet::NewStub(
      grpc::CreateChannel(argv[1], fleetbench::ChannelCredentialsFor(argv[1], tls)));
  grpc::ClientContext context;
  context.AddMetadata("authorization", std::string("Bearer ") + token);
  fleetbench::v1::RankRequest request;
  request.set_metric("no.such.metric");
  fleetbench::v1::RankResponse response;
  const grpc::Status status = stub->Rank(&context, request, &response);
  if (status.error_code() != grpc::StatusCode::NOT_FOUND) {
    std::fprintf(stderr, "expected NOT_FOUND, got %d: %s\n", status.error_code(),
                 status.error_message().c_str());
    return 1;
  }
  return 0;
}
