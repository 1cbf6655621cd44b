#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Lay out the kernel's YNL CLI for the test VM, as one self-contained tree:
#
#   pack-ynl.sh YNL_SRC SPEC DEST
#
#   DEST/bin/python3                    the host's Debian python3
#   DEST/lib/python3.X/                 its standard library, less what
#                                       neither ynl nor jsonschema imports
#   DEST/lib/python3/dist-packages/     PyYAML, jsonschema and its imports
#   DEST/tools/net/ynl/{cli.py,lib/}    from YNL_SRC (linux-source-6.12)
#   DEST/Documentation/netlink/genetlink*.yaml, the schemas, and
#   DEST/Documentation/netlink/specs/qtimer.yaml (SPEC)
#
# The layout is the kernel tree's and a Python prefix's at once: cli.py
# finds the schema of a spec two directories up from it, as in the kernel
# tree, and python3 finds its library as DEST/lib/python3.X from where it
# sits, so nothing has to be set in the guest.  The payload goes below
# $(OUT)/lib, which is /usr/local/lib in the guest, where scripts/vm/run.sh
# also adds the shared libraries of every ELF file (python3 and the
# extension modules kept here).

set -euo pipefail

[ $# = 3 ] || { echo "usage: $0 YNL_SRC SPEC DEST" >&2; exit 2; }
src=$1 spec=$2 dest=$3
die() { echo "pack-ynl: $*" >&2; exit 1; }

# Debian's interpreter, not whatever python3 comes first on PATH: the one
# whose library and packages (python3-yaml, python3-jsonschema) setup.sh
# installs.
python=/usr/bin/python3
[ -x "$python" ] || die "$python is missing: run scripts/setup.sh"
[ -f "$src/tools/net/ynl/cli.py" ] ||
	die "$src/tools/net/ynl/cli.py is missing: run scripts/setup.sh (it unpacks linux-source-6.12)"
read -r ver stdlib < <("$python" -c \
	'import sys, sysconfig; print("%d.%d" % sys.version_info[:2], sysconfig.get_paths()["stdlib"])')

rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib/python3/dist-packages" "$dest/tools/net/ynl/lib" \
	"$dest/Documentation/netlink/specs"
cp -L "$python" "$dest/bin/python3"

# The standard library with its compiled files (so that the guest, under
# TCG, does not compile it at every start), but without its tests, GUI,
# build and packaging parts and the subsystems nothing here imports.
# Extension modules that link a library beyond libc, libm and libz are
# left out too (ssl, hashlib's OpenSSL, sqlite, curses, ...): what imports
# them falls back or does without, and their libraries would cost more
# than all the rest.
excludes=(
	--exclude="config-$ver-*" --exclude=test --exclude=idlelib --exclude=tkinter
	--exclude=turtledemo --exclude=lib2to3 --exclude=ensurepip --exclude=distutils
	--exclude=pydoc_data --exclude=site-packages --exclude=dist-packages
	--exclude=asyncio --exclude=multiprocessing --exclude=unittest --exclude=xml
	--exclude=xmlrpc --exclude=sqlite3 --exclude=curses --exclude=dbm
	--exclude=tomllib --exclude=venv --exclude=wsgiref --exclude=concurrent
	--exclude=ctypes --exclude=lib-dynload
)
rsync -a "${excludes[@]}" "$stdlib/" "$dest/lib/python$ver/"
mkdir -p "$dest/lib/python$ver/lib-dynload"
for so in "$stdlib"/lib-dynload/*.so; do
	case "$(basename "$so")" in _test* | _xx* | xx* | _ctypes*) continue ;; esac
	extra=$(ldd "$so" | awk '/=>/ { print $1 }' |
		grep -Ev '^(libc|libm|libz|libpthread|libdl)\.so' || true)
	[ -n "$extra" ] || cp "$so" "$dest/lib/python$ver/lib-dynload/"
done

# The Python packages cli.py imports, as Debian installed them.
for pkg in python3-yaml python3-jsonschema python3-attr python3-pyrsistent; do
	dpkg -L "$pkg" >/dev/null 2>&1 || die "$pkg is not installed: run scripts/setup.sh"
	dpkg -L "$pkg" | grep '^/usr/lib/python3/dist-packages/.' | while IFS= read -r f; do
		[ -f "$f" ] || continue
		rel=${f#/usr/lib/python3/dist-packages/}
		mkdir -p "$dest/lib/python3/dist-packages/$(dirname "$rel")"
		cp "$f" "$dest/lib/python3/dist-packages/$rel"
	done
done

# The CLI and its library, and the schemas it checks a spec against.
cp "$src/tools/net/ynl/cli.py" "$dest/tools/net/ynl/"
cp "$src"/tools/net/ynl/lib/*.py "$dest/tools/net/ynl/lib/"
cp "$src"/Documentation/netlink/genetlink*.yaml "$dest/Documentation/netlink/"
cp "$spec" "$dest/Documentation/netlink/specs/qtimer.yaml"

# What the guest will run must work here already, short of the kernel:
# load the spec and check it against its schema, which imports all that
# cli.py does.  (This also leaves the library's compiled files in DEST.)
env -i "$dest/bin/python3" -c '
import sys
sys.path.insert(0, sys.argv[1] + "/tools/net/ynl")
from lib import SpecFamily
SpecFamily(sys.argv[1] + "/Documentation/netlink/specs/qtimer.yaml")
' "$dest" || die "the packed ynl cannot load and validate $spec"
