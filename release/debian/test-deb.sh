#!/usr/bin/env bash
# release/debian/test-deb.sh DEB: tests a bandit-node .deb as an operator
# installs it, in a throwaway root (nothing of this machine changes but a
# temporary directory; run as root, which dpkg and chroot need):
#
#   1. its contents: every file, with its mode and owner (dpkg-deb -c);
#   2. lintian reports no error;
#   3. dpkg installs it into the root (dpkg --root, its maintainer scripts
#      run from outside with DPKG_ROOT): the system user exists there and
#      owns /var/lib/bandit-node, 0700;
#   4. the unit verifies (systemd-analyze verify) and its hardening rates
#      OK or better (systemd-analyze security --offline, exposure < 2);
#      the man page renders without a warning;
#   5. the installed binary, as the bandit-node user, chrooted into the
#      root, runs `init` and `run`: the daemon serves its API (`id`) and
#      stops cleanly on SIGTERM;
#   6. an upgrade (the same package as version +1) keeps the node's
#      identity, token and config; a purge keeps the state directory.
#
# Ports: $BANDIT_DEB_TEST_PORT (default 27460) and the one after it, below
# the kernel's ephemeral range, on 127.0.0.1 only.
set -euo pipefail
deb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
port=${BANDIT_DEB_TEST_PORT:-27460}
fail() { echo "test-deb.sh: FAIL: $*" >&2; exit 1; }
ok() { echo "test-deb.sh: ok: $*" >&2; }
[ "$(id -u)" = 0 ] || fail "run as root (dpkg --root and chroot need it)"
work=$(mktemp -d -t bandit-deb.XXXXXX)
daemon=
cleanup() {
  [ -z "$daemon" ] || kill "$daemon" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# 1. Contents.
listing=$(dpkg-deb -c "$deb" | awk '{ print $1, $2, $6 }')
for want in \
  "-rwxr-xr-x root/root ./usr/bin/bandit-node" \
  "-rw-r--r-- root/root ./usr/lib/systemd/system/bandit-node.service" \
  "-rw-r--r-- root/root ./usr/lib/sysusers.d/bandit-node.conf" \
  "-rw-r--r-- root/root ./usr/lib/tmpfiles.d/bandit-node.conf" \
  "-rw-r--r-- root/root ./usr/share/man/man1/bandit-node.1.gz" \
  "-rw-r--r-- root/root ./usr/share/doc/bandit-node/copyright" \
  "-rw-r--r-- root/root ./usr/share/doc/bandit-node/changelog.gz" \
  "-rw-r--r-- root/root ./usr/share/doc/bandit-node/CHANGELOG.md.gz"; do
  grep -qxF -- "$want" <<<"$listing" || fail "the package lacks $want; it holds:
$listing"
done
if grep -v '^d' <<<"$listing" | grep -vE '^-rw[-x]r-[-x]r-[-x] root/root \./usr/' >/dev/null; then
  fail "a file outside /usr, or not root's, or writable by others:
$(grep -v '^d' <<<"$listing" | grep -vE '^-rw[-x]r-[-x]r-[-x] root/root \./usr/')"
fi
ok "contents: $(grep -vc '^d' <<<"$listing") files under /usr, root's, modes 0644/0755"

# 2. Lintian.
if command -v lintian >/dev/null; then
  rc=0
  out=$(lintian --fail-on error --tag-display-limit 0 "$deb" 2>&1) || rc=$?
  out=$(grep -v 'running with root privileges' <<<"$out" || true)
  [ "$rc" = 0 ] || fail "lintian (exit $rc):
$out"
  ok "lintian: no error${out:+ (${out//$'\n'/; })}"
else
  fail "lintian is not installed (apt-get install lintian)"
fi

# 3. Install into a throwaway root.
r=$work/root
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/etc"
touch "$r/var/lib/dpkg/status" "$r/var/lib/dpkg/available"
dpkg_root() {
  # Its dependencies (systemd's sysusers and tmpfiles) are this machine's,
  # which the maintainer scripts run with --root.
  dpkg --root="$r" --force-script-chrootless --force-depends --log=/dev/null "$@" >"$work/dpkg.log" 2>&1 ||
    { cat "$work/dpkg.log" >&2; fail "dpkg $*"; }
}
dpkg_root -i "$deb"
uid=$(awk -F: '$1 == "bandit-node" { print $3 }' "$r/etc/passwd")
gid=$(awk -F: '$1 == "bandit-node" { print $3 }' "$r/etc/group")
[ -n "$uid" ] && [ -n "$gid" ] || fail "no bandit-node user or group in the root's /etc/passwd, /etc/group"
state=$(stat -c '%a %u:%g' "$r/var/lib/bandit-node")
[ "$state" = "700 $uid:$gid" ] || fail "/var/lib/bandit-node is $state, want 700 $uid:$gid"
ok "installed: user bandit-node ($uid:$gid) owns /var/lib/bandit-node, 0700"

# 4. The unit and the man page.
mkdir -p "$work/unit"
sed "s|/usr/bin/bandit-node|$r/usr/bin/bandit-node|g" "$r/usr/lib/systemd/system/bandit-node.service" >"$work/unit/bandit-node.service"
systemd-analyze verify --man=no "$work/unit/bandit-node.service" || fail "systemd-analyze verify"
exposure=$(systemd-analyze security --offline=true --root="$r" bandit-node.service 2>/dev/null |
  sed -n 's/.*Overall exposure level for bandit-node.service: \([0-9.]*\).*/\1/p')
[ -n "$exposure" ] || fail "systemd-analyze security gave no exposure level"
awk -v e="$exposure" 'BEGIN { exit !(e < 2) }' || fail "exposure level $exposure; want below 2 (OK)"
warnings=$(man --warnings -l "$r/usr/share/man/man1/bandit-node.1.gz" 2>&1 >/dev/null || true)
[ -z "$warnings" ] || fail "the man page: $warnings"
ok "unit verifies; exposure $exposure; the man page renders cleanly"

# 5. The installed binary runs init and run in the root, as its user.
as_node() { chroot --userspec="$uid:$gid" "$r" /usr/bin/bandit-node "$@"; }
as_node init --dir /var/lib/bandit-node --name acme --listen "/ip4/127.0.0.1/tcp/$port" \
  --api "127.0.0.1:$((port + 1))" >"$work/init.log" 2>&1 || { cat "$work/init.log" >&2; fail "init"; }
# Not through as_node: $! must be the daemon's PID (chroot execs it).
chroot --userspec="$uid:$gid" "$r" /usr/bin/bandit-node run --config /var/lib/bandit-node/config.toml >"$work/daemon.log" 2>&1 &
daemon=$!
# Started once it logs so (`id` alone would answer from the files).
for _ in $(seq 150); do
  grep -q 'msg="node started"' "$work/daemon.log" && break
  kill -0 "$daemon" 2>/dev/null || { cat "$work/daemon.log" >&2; fail "the daemon exited"; }
  sleep 0.1
done
grep -q 'msg="node started"' "$work/daemon.log" || { cat "$work/daemon.log" >&2; fail "the daemon did not start within 15 s"; }
as_node peers --config /var/lib/bandit-node/config.toml --json >"$work/peers.json" 2>"$work/peers.err" ||
  { cat "$work/peers.err" "$work/daemon.log" >&2; fail "the daemon's API did not answer peers"; }
as_node version --json | grep -q '"version"' || fail "version --json"
kill -TERM "$daemon"
rc=0
wait "$daemon" || rc=$?
[ "$rc" = 0 ] || { cat "$work/daemon.log" >&2; fail "the daemon exited $rc on SIGTERM"; }
daemon=
ok "the installed binary ran init and run as bandit-node; its API answered; it stopped on SIGTERM"

# 6. Upgrade and purge keep the node.
keep="identity.key api.token config.toml"
before=$(cd "$r/var/lib/bandit-node" && sha256sum $keep)
version=$(dpkg-deb -f "$deb" Version)
dpkg-deb -R "$deb" "$work/next"
sed -i "s/^Version: .*/Version: $version+1/" "$work/next/DEBIAN/control"
dpkg-deb --root-owner-group --build "$work/next" "$work/next.deb" >/dev/null
dpkg_root -i "$work/next.deb"
[ "$(dpkg-query --admindir="$r/var/lib/dpkg" -W -f '${Version}' bandit-node)" = "$version+1" ] || fail "the upgrade did not install"
after=$(cd "$r/var/lib/bandit-node" && sha256sum $keep)
[ "$before" = "$after" ] || fail "the upgrade changed the node's files:
$before
$after"
dpkg_root --purge bandit-node
[ ! -e "$r/usr/bin/bandit-node" ] || fail "the purge left /usr/bin/bandit-node"
after=$(cd "$r/var/lib/bandit-node" && sha256sum $keep)
[ "$before" = "$after" ] || fail "the purge removed the node's identity, token or config"
ok "an upgrade to $version+1 and a purge kept identity.key, api.token and config.toml"
echo "test-deb.sh: PASS: $(basename "$deb")" >&2
