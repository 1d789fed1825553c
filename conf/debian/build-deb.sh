#!/bin/bash
# conf/debian/build-deb.sh VERSION WORKDIR OUT.deb: the Debian package, from
# the `make install` (PREFIX=/usr) that `make deb` staged in WORKDIR/debian/ring,
# plus what only the package carries: compressed man pages, stripped binaries,
# /etc/ring/example.ini (a conffile), the state directory /var/lib/ring, the
# README, the copyright (the MIT licence of LICENSE) and changelog, the ring user and the ringusers group (sysusers.d, made by DEBIAN/postinst), and DEBIAN/
# (control from control.in, conffiles, md5sums, postinst).
set -euo pipefail
(($# == 3)) || { echo "usage: build-deb.sh VERSION WORKDIR OUT.deb" >&2; exit 2; }
version=$1 work=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
root=$work/debian/ring
[[ -x $root/usr/sbin/ringd && -x $root/usr/bin/ringctl ]] ||
	{ echo "build-deb.sh: no staged install in $root (run make deb)" >&2; exit 1; }

# Debian policy: man pages gzipped with no name or time in them (-n), and
# no debugging symbols in the binaries.
gzip -9nf "$root"/usr/share/man/man*/*.[158]
strip --strip-unneeded --remove-section=.comment "$root/usr/sbin/ringd" "$root/usr/bin/ringctl"

install -d -m 0755 "$root/etc/ring" "$root/usr/share/doc/ring" "$root/DEBIAN"
install -m 0644 "$top/conf/example.ini" "$root/etc/ring/example.ini"
install -m 0644 "$top/README.md" "$root/usr/share/doc/ring/README.md"
# Debian policy 12.5 and 12.7: the copyright file (machine-readable, the
# top-level LICENSE's terms) and the changelog, gzipped with no name or time.
# The version has no Debian revision (ring is its own upstream: a native
# package), so the changelog is changelog.gz, not changelog.Debian.gz.
install -m 0644 "$here/copyright" "$root/usr/share/doc/ring/copyright"
gzip -9nc "$here/changelog" >"$root/usr/share/doc/ring/changelog.gz"
chmod 0644 "$root/usr/share/doc/ring/changelog.gz"
# state_dir's default parent (/var/lib/ring/<name>); ringd makes the rest.
# 0755 root's, as policy 10.9 wants of a shipped folder: what is secret is
# in state_dir, which ringd makes 0700. The unit (StateDirectory=ring,
# StateDirectoryMode=0710) makes it ring:ringusers 0710 at its first start.
install -d -m 0755 "$root/var/lib/ring"
# The unit's User=ring and Group=ringusers: declared for systemd-sysusers, made by the postinst.
install -D -m 0644 "$here/ring.sysusers" "$root/usr/lib/sysusers.d/ring.conf"

# Depends: the libraries the binaries link, as dpkg-shlibdeps finds them
# (it wants debian/control beside the staged tree, and DEBIAN/ in it to know
# the binaries are in their package's tree); the known list when
# dpkg-dev is missing. control.in adds adduser: the postinst calls it
# where systemd-sysusers is missing.
depends="libc6, libevent-2.1-7, libinih1, libjansson4, libsodium23"
if command -v dpkg-shlibdeps >/dev/null; then
	printf 'Source: ring\n\nPackage: ring\nArchitecture: any\n' >"$work/debian/control"
	depends=$(cd "$work" && dpkg-shlibdeps -O debian/ring/usr/sbin/ringd debian/ring/usr/bin/ringctl |
		sed -n 's/^shlibs:Depends=//p')
	rm -f "$work/debian/control"
	[[ -n $depends ]] || { echo "build-deb.sh: dpkg-shlibdeps found no libraries" >&2; exit 1; }
fi
arch=$(dpkg --print-architecture)
size=$(du -sk --apparent-size "$root" | cut -f1)

sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
	-e "s/@DEPENDS@/$depends/" "$here/control.in" >"$root/DEBIAN/control"
echo /etc/ring/example.ini >"$root/DEBIAN/conffiles"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
	xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root"/DEBIAN/*
install -m 0755 "$here/postinst" "$root/DEBIAN/postinst"

dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
echo "deb: $out ($(du -k "$out" | cut -f1) kB; Depends: $(dpkg-deb -f "$out" Depends))"
