// The serving certificate as upstream's dynamic serving content keeps it: --tls-cert-file and
// --tls-private-key-file are read again when they change (a cert-manager renewal, a rotated Secret
// volume), so a long-running daemon never serves an expired certificate. The check runs when a
// connection arrives, at most once per interval: a new pair is served from that connection on; a
// pair that does not load (half-written, a key for another certificate) is logged and the previous
// one is kept. A self-signed pair never changes.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "pkg/base/clock.h"
#include "pkg/metrics/tls.h"

namespace kdesched::metrics {

class CertificateReloader {
 public:
  // A pair that never changes (the self-signed one).
  explicit CertificateReloader(CertificatePair fixed);
  // The pair from the files, loaded now; an error names the file and what is wrong.
  static Result<std::shared_ptr<CertificateReloader>> fromFiles(const std::string& certFile, const std::string& keyFile,
                                                                std::shared_ptr<Clock> clock,
                                                                Clock::Duration checkInterval);

  // The pair to serve now. Reads the files again when the last check is at least one interval old.
  std::shared_ptr<const CertificatePair> current();

 private:
  struct Files {
    std::string cert;
    std::string key;
    std::shared_ptr<Clock> clock;
    Clock::Duration interval;
  };
  CertificateReloader(CertificatePair first, Files files);
  void reload();

  std::mutex mu_;
  std::shared_ptr<const CertificatePair> pair_;
  std::optional<Files> files_;
  Clock::TimePoint lastCheck_{};
  std::string lastError_;  // the last failure logged, so a broken file is reported once, not per check
};

}  // namespace kdesched::metrics
