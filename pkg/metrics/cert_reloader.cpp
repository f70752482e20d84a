#include "pkg/metrics/cert_reloader.h"

#include "pkg/base/log.h"

namespace kdesched::metrics {

CertificateReloader::CertificateReloader(CertificatePair fixed)
    : pair_(std::make_shared<const CertificatePair>(std::move(fixed))) {}

CertificateReloader::CertificateReloader(CertificatePair first, Files files)
    : pair_(std::make_shared<const CertificatePair>(std::move(first))), files_(std::move(files)) {
  lastCheck_ = files_->clock->now();
}

Result<std::shared_ptr<CertificateReloader>> CertificateReloader::fromFiles(const std::string& certFile,
                                                                            const std::string& keyFile,
                                                                            std::shared_ptr<Clock> clock,
                                                                            Clock::Duration checkInterval) {
  auto first = loadCertificateFiles(certFile, keyFile);
  if (!first) return first.status();
  return std::shared_ptr<CertificateReloader>(
      new CertificateReloader(std::move(*first), Files{certFile, keyFile, std::move(clock), checkInterval}));
}

std::shared_ptr<const CertificatePair> CertificateReloader::current() {
  std::lock_guard<std::mutex> lock(mu_);
  if (files_) {
    const Clock::TimePoint now = files_->clock->now();
    if (now - lastCheck_ >= files_->interval) {
      lastCheck_ = now;
      reload();
    }
  }
  return pair_;
}

void CertificateReloader::reload() {
  auto next = loadCertificateFiles(files_->cert, files_->key);
  if (!next) {
    if (next.error() != lastError_)
      log::warn("cannot reload the serving certificate; serving the previous one",
                {{"certFile", files_->cert}, {"keyFile", files_->key}, {"error", next.error()}});
    lastError_ = next.error();
    return;
  }
  lastError_.clear();
  if (next->certificatePem == pair_->certificatePem && next->privateKeyPem == pair_->privateKeyPem) return;
  pair_ = std::make_shared<const CertificatePair>(std::move(*next));
  log::info("loaded a new serving certificate", {{"certFile", files_->cert}, {"keyFile", files_->key}});
}

}  // namespace kdesched::metrics
