#!/usr/bin/env bash
# Assembles the whole file tree of the kdesched image (the Dockerfile's final FROM scratch stage)
# around a built binary. Runs inside the Dockerfile's rootfs stage, a Debian 12 whose installed
# packages are the image's runtime libraries and ca-certificates; not meant for a host.
#
#   scripts/image-rootfs.sh BINARY [OUT]    OUT defaults to /out (emptied first)
#
# OUT gets only: the binary at /usr/bin/kdesched and a /usr/bin/descheduler symlink; every shared
# library the binary loads (ldd), copied as real files under its soname into the directory it
# resolves to, and the dynamic loader at the binary's PT_INTERP path; Debian's merged-/usr
# symlinks (/bin -> usr/bin ...); the CA bundle plus the paths OpenSSL looks in by default; an
# /etc/passwd and /etc/group with root and nonroot (65532); /etc/nsswitch.conf (hosts: files dns);
# the tz database (/usr/share/zoneinfo).
# Then it runs the binary chrooted into OUT, so a missing library fails the build.
set -euo pipefail
BIN="${1:?usage: image-rootfs.sh BINARY [OUT]}"
OUT="${2:-/out}"

rm -rf "${OUT}"
mkdir -p "${OUT}/usr/bin" "${OUT}/etc/ssl/certs"

# Merged /usr as this Debian has it: each top-level directory that is a symlink here is one there.
for d in bin lib lib64; do
  if [ -L "/${d}" ]; then ln -s "$(readlink "/${d}")" "${OUT}/${d}"; fi
done

install -m 0755 "${BIN}" "${OUT}/usr/bin/kdesched"
ln -s kdesched "${OUT}/usr/bin/descheduler"

# copy_resolved PATH: PATH's file (symlinks followed) at PATH's directory, resolved, under OUT:
# /lib/x86_64-linux-gnu/libssl.so.3 -> OUT/usr/lib/x86_64-linux-gnu/libssl.so.3, a real file.
copy_resolved() {
  local dir
  dir="$(readlink -f "$(dirname "$1")")"
  mkdir -p "${OUT}${dir}"
  cp -L --preserve=mode "$1" "${OUT}${dir}/$(basename "$1")"
}

# ldd's lines: "libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x...)", the loader as
# "/lib64/ld-linux-x86-64.so.2 (0x...)", the vDSO without a path.
ldd_out="$(ldd "${BIN}")"
if grep -q 'not found' <<<"${ldd_out}"; then
  echo "image-rootfs: unresolved libraries:" >&2
  grep 'not found' <<<"${ldd_out}" >&2
  exit 1
fi
n=0
while read -r path; do
  copy_resolved "${path}"
  n=$((n + 1))
done < <(awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"${ldd_out}" | sort -u)

# CA bundle where Debian keeps it, and OpenSSL's defaults (OPENSSLDIR/cert.pem, OPENSSLDIR/certs)
# pointing at it: kdesched's Prometheus source reads X509_get_default_cert_file().
cp -L /etc/ssl/certs/ca-certificates.crt "${OUT}/etc/ssl/certs/ca-certificates.crt"
ssldir="$(openssl version -d | sed -n 's/^OPENSSLDIR: "\(.*\)"$/\1/p')"
[ -n "${ssldir}" ] || { echo "image-rootfs: no OPENSSLDIR from openssl version -d" >&2; exit 1; }
mkdir -p "${OUT}${ssldir}"
ln -s /etc/ssl/certs "${OUT}${ssldir}/certs"
ln -s /etc/ssl/certs/ca-certificates.crt "${OUT}${ssldir}/cert.pem"

# The tz database, for disruption budgets' timeZone (libdate-tz reads the system's, tzdata).
# Without right/ and posix/: the leap-second ("right/Europe/Berlin") and duplicate zone trees,
# half the files, which no cron schedule wants (a zone named so is refused at load: unknown).
mkdir -p "${OUT}/usr/share"
cp -a /usr/share/zoneinfo "${OUT}/usr/share/zoneinfo"
rm -rf "${OUT}/usr/share/zoneinfo/right" "${OUT}/usr/share/zoneinfo/posix"

# Users and groups: root, and nonroot, the image's USER (65532, distroless' number).
printf '%s\n' 'root:x:0:0:root:/root:/usr/sbin/nologin' \
  'nonroot:x:65532:65532:nonroot:/nonexistent:/usr/sbin/nologin' >"${OUT}/etc/passwd"
printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >"${OUT}/etc/group"
# Without this file glibc asks DNS before /etc/hosts and stops at its answer ("dns [!UNAVAIL=return]
# files"), so the pod's /etc/hosts (hostAliases, its own name) would not be read first.
printf '%s\n' 'passwd: files' 'group: files' 'hosts: files dns' >"${OUT}/etc/nsswitch.conf"
chmod 0644 "${OUT}/etc/passwd" "${OUT}/etc/group" "${OUT}/etc/nsswitch.conf"

# The tree alone must run the binary: its loader, libraries and paths, nothing from this stage.
chroot "${OUT}" /bin/kdesched version
chroot "${OUT}" /bin/descheduler version >/dev/null
echo "image-rootfs: ${OUT}: kdesched, ${n} libraries and loader, $(du -sh "${OUT}" | cut -f1)"
