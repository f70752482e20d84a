// Real-world helpers for pkg/kube tests: temporary directories, test certificates made with the
// openssl CLI (never checked in), and the scripted HTTP stub (test/stub/kube_stub.py) as a child
// process bound to 127.0.0.1.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "test/unit/testing/eventually.h"
#include "test/unit/testing/paths.h"

extern char** environ;

namespace kdesched::kube::testing {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kdesched-kube-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    const fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
    return p.string();
  }

 private:
  fs::path path_;
};

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

inline std::string base64(const std::string& in) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], kAlphabet[v & 63]};
  }
  if (i + 1 == in.size()) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], '='};
  }
  return out;
}

// A CA, a server certificate it signed (for 127.0.0.1 and localhost), and a client
// certificate it signed, as PEM files in `dir`. EC P-256 keys: generated in milliseconds.
struct TlsMaterial {
  std::string caCert, caKey, serverCert, serverKey, clientCert, clientKey;

  // `san`: the names the server certificate is issued for; `serverCn`: its subject CN, which no
  // name check may read (Go's does not).
  static TlsMaterial generate(const TempDir& dir, const std::string& san = "IP:127.0.0.1,DNS:localhost",
                              const std::string& serverCn = "127.0.0.1") {
    TlsMaterial m;
    m.caCert = dir.file("ca.crt");
    m.caKey = dir.file("ca.key");
    m.serverCert = dir.file("server.crt");
    m.serverKey = dir.file("server.key");
    m.clientCert = dir.file("client.crt");
    m.clientKey = dir.file("client.key");
    const std::string ext = dir.write("server.ext", "subjectAltName=" + san + "\n");
    const std::string d = dir.path().string();
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=kdesched-test-ca "
        "-keyout " +
        m.caKey + " -out " + m.caCert);
    for (const auto& [name, cn] : {std::pair<std::string, std::string>{"server", serverCn}, {"client", "kdesched"}}) {
      run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=" + cn + " -keyout " + d + "/" +
          name + ".key -out " + d + "/" + name + ".csr");
      run("openssl x509 -req -in " + d + "/" + name + ".csr -CA " + m.caCert + " -CAkey " + m.caKey +
          " -CAcreateserial -days 1 " + (name == "server" ? "-extfile " + ext + " " : std::string()) + "-out " + d +
          "/" + name + ".crt");
    }
    return m;
  }

 private:
  static void run(const std::string& cmd) {
    const std::string quiet = cmd + " >/dev/null 2>&1";
    if (std::system(quiet.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
  }
};

// The stub as a child process. Its stdin is a pipe we hold: closing it (or our death) ends it.
class StubProcess {
 public:
  explicit StubProcess(const std::string& scriptPath, const std::string& tlsCert = "", const std::string& tlsKey = "",
                       const std::string& clientCa = "") {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    const std::string script = std::string(kdesched::testing::sourceDir()) + "/test/stub/kube_stub.py";
    std::vector<std::string> args = {"python3", script, "--script", scriptPath, "--lifetime", "60"};
    if (!tlsCert.empty()) args.insert(args.end(), {"--tls-cert", tlsCert, "--tls-key", tlsKey});
    if (!clientCa.empty()) args.insert(args.end(), {"--tls-client-ca", clientCa});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawnp(&pid_, "python3", &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    stdin_ = in[1];
    fcntl(stdin_, F_SETFD, FD_CLOEXEC);
    if (rc != 0) {
      close(out[0]);
      throw std::runtime_error("cannot start python3 for the stub");
    }
    FILE* f = fdopen(out[0], "r");
    char line[64] = {};
    if (!f || !fgets(line, sizeof line, f) || std::sscanf(line, "PORT %d", &port_) != 1) {
      if (f) fclose(f);
      throw std::runtime_error("the stub did not print its port");
    }
    fclose(f);
  }
  ~StubProcess() {
    close(stdin_);
    int status = 0;
    // It exits when its stdin closes; a stub that does not is killed.
    if (kdesched::testing::eventually([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, std::chrono::seconds(2)))
      return;
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
  }
  StubProcess(const StubProcess&) = delete;
  StubProcess& operator=(const StubProcess&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& scheme = "http") const { return scheme + "://127.0.0.1:" + std::to_string(port_); }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int port_ = 0;
};

}  // namespace kdesched::kube::testing
