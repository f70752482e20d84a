// LeaderElector as client-go: a renewal updates the Lease it read (fields kdesched does not know
// survive), and the lease counts from when the renewal that succeeded was started.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pkg/kube/leader_election.h"
#include "test/unit/kube/fakes.h"
#include "test/unit/kube/leader_election_fixture.h"

namespace kdesched::kube::testing {
namespace {

using Ms = std::chrono::milliseconds;

// A Lease someone labelled, annotated and owns, with spec fields of coordinated leader election.
std::string richLease(const std::string& rv) {
  return R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
         R"("metadata":{"name":"descheduler","namespace":"default","resourceVersion":")" +
         rv +
         R"(","labels":{"team":"platform"},"annotations":{"note":"keep"},)"
         R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"kdesched","uid":"u1"}],)"
         R"("managedFields":[{"manager":"kdesched","operation":"Update"}]},)"
         R"("spec":{"holderIdentity":"me","leaseDurationSeconds":1,"leaseTransitions":2,)"
         R"("strategy":"OldestEmulationVersion","preferredHolder":"me"}})";
}

TEST(LeaderElectorUpdate, ARenewalAndTheReleaseKeepWhatTheLeaseHolds) {
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  t.onSend(Scripted::json(richLease("7")));  // GET: ours already (a restart within the lease)
  t.onSend(Scripted::json(richLease("8")));  // PUT
  t.onSend(Scripted::json(richLease("9")));  // the release's PUT
  Client client(clientConfig(), std::move(transport), systemClock());
  auto clock = blockingClock();
  LeaderElector e(client, shortLease(), clock);
  Cancellation cancel;
  ASSERT_TRUE(e.acquire(cancel));
  e.release();
  auto sent = t.sent();
  ASSERT_EQ(sent.size(), 3u);
  for (std::size_t i : {1u, 2u}) {
    ASSERT_EQ(sent[i].method, "PUT") << i;
    const nlohmann::json put = nlohmann::json::parse(sent[i].body);
    EXPECT_EQ(put["metadata"]["labels"]["team"], "platform") << i;
    EXPECT_EQ(put["metadata"]["annotations"]["note"], "keep") << i;
    EXPECT_EQ(put["metadata"]["ownerReferences"][0]["name"], "kdesched") << i;
    EXPECT_FALSE(put["metadata"].contains("managedFields")) << i;
    EXPECT_EQ(put["spec"]["strategy"], "OldestEmulationVersion") << i;
    EXPECT_EQ(put["spec"]["preferredHolder"], "me") << i;
    EXPECT_EQ(put["spec"]["leaseTransitions"], 2) << i;
  }
  EXPECT_EQ(nlohmann::json::parse(sent[1].body)["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(nlohmann::json::parse(sent[1].body)["spec"]["holderIdentity"], "me");
  EXPECT_EQ(nlohmann::json::parse(sent[2].body)["metadata"]["resourceVersion"], "8") << "from the renewal's answer";
  EXPECT_EQ(nlohmann::json::parse(sent[2].body)["spec"]["holderIdentity"], "");
}

// A create that took 250 ms of a 300 ms renew deadline leaves 50 ms of leadership, not 300.
TEST(LeaderElectorUpdate, TheLeaseCountsFromTheAttemptsStart) {
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  auto clock = blockingClock();
  t.onSend(Scripted::json(R"({"kind":"Status","code":404,"reason":"NotFound"})", 404));
  Scripted created = Scripted::json(richLease("7"), 201);
  created.whileSent = [clock] { clock->advance(Ms(250)); };
  t.onSend(created);
  Client client(clientConfig(), std::move(transport), systemClock());
  LeaderElector e(client, shortLease(), clock);
  Cancellation cancel;
  ASSERT_TRUE(e.acquire(cancel));
  EXPECT_TRUE(e.isLeader());
  clock->advance(Ms(49));
  EXPECT_TRUE(e.isLeader()) << "299 ms since the attempt started";
  clock->advance(Ms(1));
  EXPECT_FALSE(e.isLeader()) << "300 ms since the attempt started, 50 ms since its answer";
}

}  // namespace
}  // namespace kdesched::kube::testing
