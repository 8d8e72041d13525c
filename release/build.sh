#!/usr/bin/env bash
# release/build.sh: build a release of bandit-node from the checked-out
# commit, reproducibly, into DIST (default dist/):
#
#   bandit-node_VERSION_linux_ARCH             static binaries (amd64, arm64)
#   bandit-node_VERSION_linux_ARCH.cdx.json    a CycloneDX SBOM of each
#   bandit-node_VERSION_ARCH.deb               Debian packages: the binary, the
#                                              hardened systemd unit, the
#                                              sysusers file, a man page
#   SHA256SUMS                                 of all of the above
#
# Usage:
#   release/build.sh                 # at a tagged commit (vX.Y.Z), clean tree
#   release/build.sh --snapshot      # any commit: version X.Y.Z-snapshot.REV
#   options: --arch amd64[,arm64]  --out DIR  --no-sbom
#
# Reproducible: two builds of one commit give byte-identical files. Every
# time in them is the commit's (SOURCE_DATE_EPOCH), paths are trimmed, the
# build ID is content-derived, the SBOMs carry no serial number or
# timestamp, and dpkg-deb clamps its archive's times. The binaries are
# built by the Go toolchain go.mod names (go1.27.3), static (CGO_ENABLED=0)
# with the time zone database (-tags timetzdata, for the FROM scratch image:
# deploy/Dockerfile), stripped (-s -w). `bandit-node version --json` of a
# release binary names its version, commit and commit time.
#
# Needs: go, git, dpkg-deb, gzip, sha256sum; cyclonedx-gomod v1.10.0 is
# built from the module proxy, unless --no-sbom.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."
root=$PWD

snapshot=0 arches=amd64,arm64 out=dist sbom=1
while [ $# -gt 0 ]; do
  case $1 in
    --snapshot) snapshot=1 ;;
    --arch) arches=$2; shift ;;
    --out) out=$2; shift ;;
    --no-sbom) sbom=0 ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "release/build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# A checkout owned by another user (a CI runner's) is still this build's:
# git, and go's VCS stamping through it, must not refuse it as dubious.
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0="$root"
if ! git rev-parse --verify -q HEAD >/dev/null; then
  echo "release/build.sh: $root is not a git checkout with a commit; a release is built from one" >&2
  exit 1
fi
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "release/build.sh: the work tree has uncommitted changes; a release is built from a commit alone" >&2
  exit 1
fi
rev=$(git rev-parse HEAD)
short=$(git rev-parse --short=7 HEAD)
export SOURCE_DATE_EPOCH=$(git log -1 --format=%ct HEAD)
if tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
  version=${tag#v}
  debversion=$version
elif [ "$snapshot" = 1 ]; then
  base=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null || echo v0.1.0)
  base=${base#v}
  version="$base-snapshot.$short"
  # Sorts before the release it leads to: 0.2.0~snapshot.abc < 0.2.0.
  debversion="$base~snapshot.$short"
else
  echo "release/build.sh: commit $short has no release tag (vX.Y.Z); tag it, or build a --snapshot" >&2
  exit 1
fi
case $version in
  *[!0-9A-Za-z.+~-]*) echo "release/build.sh: version $version has characters a Debian version cannot hold" >&2; exit 1 ;;
esac

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d -t bandit-release.XXXXXX)
trap 'rm -rf "$work"' EXIT

if [ "$sbom" = 1 ]; then
  # Built for this machine once: `go run` would build it for GOARCH.
  GOBIN="$work/tools" go install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
fi
echo "== bandit-node $version ($short, $(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)) into $out" >&2
files=()
IFS=, read -r -a archlist <<<"$arches"
for arch in "${archlist[@]}"; do
  case $arch in amd64|arm64) ;; *) echo "release/build.sh: --arch $arch: want amd64 or arm64" >&2; exit 2 ;; esac
  bin="bandit-node_${version}_linux_${arch}"
  echo "-- $bin" >&2
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -buildvcs=true -tags timetzdata \
    -ldflags "-s -w -buildid= -X github.com/bandit-node/bandit-node/cmd/bandit-node/cli.Version=$version" \
    -o "$out/$bin" ./cmd/bandit-node
  files+=("$bin")
  if [ "$sbom" = 1 ]; then
    CGO_ENABLED=0 GOOS=linux GOARCH=$arch GOFLAGS=-tags=timetzdata "$work/tools/cyclonedx-gomod" app \
      -json -licenses -std -noserial -notimestamp -main cmd/bandit-node -output "$out/$bin.cdx.json" "$root"
    files+=("$bin.cdx.json")
  fi
  deb="bandit-node_${debversion}_${arch}.deb"
  release/debian/package.sh "$out/$bin" "$arch" "$debversion" "$version" "$work/deb-$arch" "$out/$deb"
  files+=("$deb")
done
(cd "$out" && sha256sum "${files[@]}" >SHA256SUMS)
echo "== done: $out" >&2
(cd "$out" && ls -l "${files[@]}" SHA256SUMS) >&2
