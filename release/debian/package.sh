#!/usr/bin/env bash
# release/debian/package.sh BIN ARCH DEBVERSION VERSION WORKDIR OUT.deb:
# packages the bandit-node binary BIN (built for ARCH) as a Debian package,
# reproducibly (SOURCE_DATE_EPOCH clamps every time; owners are root).
# release/build.sh calls it; release/debian/test-deb.sh checks its output.
#
#   /usr/bin/bandit-node                        the binary
#   /usr/lib/systemd/system/bandit-node.service deploy/systemd's hardened unit
#   /usr/lib/sysusers.d/bandit-node.conf        the system user it runs as
#   /usr/lib/tmpfiles.d/bandit-node.conf        its state directory
#   /usr/share/man/man1/bandit-node.1.gz        made from the binary's help
#   /usr/share/doc/bandit-node/                 copyright, changelog, README
#
# The maintainer scripts (postinst, prerm, postrm beside this file) create
# the user and /var/lib/bandit-node (0700, owned by it) with
# systemd-sysusers and systemd-tmpfiles, restart a running service on
# upgrade, and never touch the node's identity or records.
set -euo pipefail
bin=$1 arch=$2 debversion=$3 version=$4 work=$5 deb=$6
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
: "${SOURCE_DATE_EPOCH:?set SOURCE_DATE_EPOCH (release/build.sh does)}"
date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)

rm -rf "$work"
r="$work/root"
install -d -m 0755 "$r/DEBIAN" "$r/usr/bin" "$r/usr/lib/systemd/system" "$r/usr/lib/sysusers.d" \
  "$r/usr/lib/tmpfiles.d" "$r/usr/share/man/man1" "$r/usr/share/doc/bandit-node" "$r/usr/share/lintian/overrides"
install -m 0755 "$bin" "$r/usr/bin/bandit-node"
# The unit as deploy/systemd has it, for the packaged binary's path.
# The package has the man page: the unit points to it first.
sed -e 's|/usr/local/bin/bandit-node|/usr/bin/bandit-node|g' -e 's|^Documentation=|Documentation=man:bandit-node(1) |' \
  -e 's|^#   install -m 0755 bandit-node .*|#   apt install ./bandit-node_VERSION_ARCH.deb   (this package: binary, unit, user, state directory)|' \
  -e '/^#   install -m 0644 bandit-node.sysusers/d' -e '/^#   install -m 0644 bandit-node.service/d' \
  -e '/^#   install -d -o bandit-node/d' \
  "$repo/deploy/systemd/bandit-node.service" >"$r/usr/lib/systemd/system/bandit-node.service"
chmod 0644 "$r/usr/lib/systemd/system/bandit-node.service"
install -m 0644 "$repo/deploy/systemd/bandit-node.sysusers" "$r/usr/lib/sysusers.d/bandit-node.conf"
install -m 0644 "$here/bandit-node.tmpfiles" "$r/usr/lib/tmpfiles.d/bandit-node.conf"
install -m 0644 "$here/lintian-overrides" "$r/usr/share/lintian/overrides/bandit-node"

# The man page, from the help of a binary this machine can run: BIN when
# it is this machine's architecture, else one built for it.
helpbin=$bin
if [ "$arch" != "$(go env GOHOSTARCH)" ]; then
  helpbin="$work/bandit-node-help"
  (cd "$repo" && CGO_ENABLED=0 GOOS=linux GOARCH=$(go env GOHOSTARCH) go build -trimpath -o "$helpbin" ./cmd/bandit-node)
fi
"$here/../manpage.sh" "$helpbin" "$version" "$date" | gzip -9n >"$r/usr/share/man/man1/bandit-node.1.gz"

doc="$r/usr/share/doc/bandit-node"
gzip -9n <"$repo/CHANGELOG.md" >"$doc/CHANGELOG.md.gz"
install -m 0644 "$repo/README.md" "$doc/README.md"
gzip -9n <"$repo/docs/operations.md" >"$doc/operations.md.gz"
maintainer="bandit-node developers <bandit-node@users.noreply.github.com>"
{
  echo "bandit-node ($debversion) unstable; urgency=medium"
  echo
  echo "  * Release $version."
  echo "  * What changed, the wire versions it speaks and what an operator"
  echo "    must do on upgrade: see CHANGELOG.md.gz."
  echo
  echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$doc/changelog.gz"
install -m 0644 "$here/copyright" "$doc/copyright"
chmod 0644 "$doc"/*

for s in postinst prerm postrm; do
  install -m 0755 "$here/$s" "$r/DEBIAN/$s"
done
size=$(du -sk --apparent-size "$r/usr" | cut -f1)
cat >"$r/DEBIAN/control" <<CONTROL
Package: bandit-node
Version: $debversion
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: systemd | systemd-standalone-sysusers, systemd | systemd-standalone-tmpfiles
Recommends: systemd
Section: net
Priority: optional
Homepage: https://github.com/bandit-node/bandit-node
Description: private federated multi-armed bandits among organizations
 Each organization runs one bandit-node daemon; the daemons form a private
 libp2p network of known peers and run privacy-preserving multi-armed bandit
 protocols (SAMBA, a secure contextual bandit, multi-agent best-arm
 identification, P-FCB) while each organization's data stays on its own
 machine.
 .
 This package installs the daemon and its command line, a hardened systemd
 unit (not enabled: create the node with \`bandit-node init\` first) and the
 system user it runs as, with its state in /var/lib/bandit-node.
CONTROL
# The md5sums file dpkg checks installed files against.
(cd "$r" && find usr -type f | LC_ALL=C sort | xargs md5sum >DEBIAN/md5sums)
chmod 0644 "$r/DEBIAN/control" "$r/DEBIAN/md5sums"
# Times clamped to SOURCE_DATE_EPOCH, owners root (--root-owner-group).
find "$r" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
dpkg-deb --root-owner-group -Zxz --build "$r" "$deb" >/dev/null
echo "-- $(basename "$deb")" >&2
