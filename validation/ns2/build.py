#!/usr/bin/env python3
"""Build ns-2.35 from Debian's source tarball with the project's own ns-2 modules.

    python3 validation/ns2/build.py [--jobs N] [--force] [--tarball PATH] [--out DIR]

Result: out/peers/ns2/bin/ns and out/peers/ns2/build.json (ns version, SHA-256 of the
tarball, of this script and of every module file, the source fixes applied, the compiler,
the Debian packages, the build's wall time). The build log is out/peers/ns2/build.log.

* Source: Debian's ns2_2.35+dfsg.orig.tar.xz (SHA-256 checked), taken from --tarball, from
  out/peers/ns2/cache/, from /tmp, or downloaded from deb.debian.org into the cache.
* It is unpacked into out/peers/ns2/src/ns-2.35, patched by the explicit edits of
  SOURCE_FIXES below (what gcc 12 and Debian's Tcl 8.6 / tclcl need, each with its reason),
  configured against Debian's tcl, otcl and tclcl (packages in PACKAGES) and built with
  `make ns` (niced, --jobs parallel jobs; default 2).
* Modules: every directory validation/ns2/modules/<name>/ contributes its *.cc and *.h
  (copied into the tree as dcfair/<name>/ and added to Makefile.in's OBJ_CC) and an optional
  <name>.tcl of Tcl defaults (appended to tcl/lib/ns-default.tcl, which ns-2 compiles into
  the binary). A module's sources include their own headers with "name.h" and ns-2's by name
  ("queue.h", "ip.h", ...); they are compiled as ns-2 is (C++98, see SOURCE_FIXES).
* Idempotent: with nothing changed it says so and does nothing. A changed, added or removed
  module rebuilds incrementally (that module's objects, the Tcl defaults if they changed, the
  link). A changed tarball, source fix, configure option, compiler or Debian package version
  (or --force) rebuilds from a fresh tree; another change of build.py reruns the module step
  and make (normally nothing to compile).
* Exit status: 0 built or up to date; 2 a Debian package is missing (named, with the apt-get
  command), the tarball is unavailable or wrong, or bad arguments; 1 the build failed (the end
  of the log is printed).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent          # validation/ns2
REPO = HERE.parents[1]
MODULES = HERE / "modules"
DEFAULT_OUT = REPO / "out" / "peers" / "ns2"

TARBALL = "ns2_2.35+dfsg.orig.tar.xz"
URL = "http://deb.debian.org/debian/pool/main/n/ns2/" + TARBALL
SHA256 = "a3a097194c87fedbf2a7d3c8520790dc8688874cad0373af2db0ed33e463d52e"
TOP = "ns-2.35"
TCL_VER = "8.6"
MOD_DIR = "dcfair"                               # modules' directory inside the ns-2 tree

#: Debian packages the build needs (what `make peers` installs): name -> what to look for.
PACKAGES = ["g++", "make", "tcl-dev", "libotcl1-dev", "libtclcl1-dev", "tclcl"]

# ------------------------------------------------------------------------------------------
# Source fixes: (file, old text, new text, occurrences, why). Each `old` must occur exactly
# `occurrences` times in the pristine tarball's file, else the build stops (a different
# tarball). They are applied once, to a freshly unpacked tree, before configure.
SOURCE_FIXES = [
    ("Makefile.in",
     "CCOPT\t= @V_CCOPT@ \n",
     "CCOPT\t= -O2 @V_CCOPT@ -DUSE_INTERP_RESULT\n", 1,
     "-O2: configure's probe 'that g++ can handle -O2' tests __GNUC_MINOR__ < 8 and so leaves "
     "gcc 12.2 unoptimized. -DUSE_INTERP_RESULT: Tcl 8.6 hides Tcl_Interp::result unless it is "
     "defined, and Debian's tclcl.h (and ns-2) still use it."),
    ("Makefile.in",
     "\t$(CPP) -c $(CFLAGS) $(INCLUDES) -o $@ $*.cc\n",
     "\t$(CPP) -c -std=gnu++98 $(CFLAGS) $(INCLUDES) -o $@ $*.cc\n", 1,
     "ns-2.35 is C++98 code; gcc 12 defaults to C++17, where std::max meets TracedInt "
     "(tcp/tcp-fack.cc, tcp-fs.cc, tcp-linux.cc) and std::hash collides with mdart's hash "
     "(mdart/mdart_adp.cc). Only the C++ rule: C files keep gcc's default."),
    ("Makefile.in",
     "\t@V_LIB_X11@ \\\n",
     "", 1,
     "ns is built without Tk (configure --with-tk=no, `make ns` only): nothing in it calls X11, "
     "so it is not linked against libX11/libXext (Debian's own ns binary is not either)."),
    ("linkstate/ls.h",
     "void eraseAll() { erase(baseMap::begin(), baseMap::end()); }",
     "void eraseAll() { baseMap::erase(baseMap::begin(), baseMap::end()); }", 1,
     "two-phase name lookup (gcc >= 4.7): a member of the dependent base class must be named "
     "through it."),
    ("pushback/ident-tree.h",
     "char * key = Tcl_GetHashKey(hashTable_, he);",
     "char * key = (char *)Tcl_GetHashKey(hashTable_, he);", 1,
     "Tcl 8.6's Tcl_GetHashKey yields void*, which C++ does not convert to char* implicitly."),
    ("webcache/pagepool.cc",
     "char* retVal = Tcl_GetHashKey(namemap_, he);",
     "char* retVal = (char *)Tcl_GetHashKey(namemap_, he);", 1,
     "as above (Tcl 8.6's Tcl_GetHashKey yields void*)."),
    ("tools/queue-monitor.h",
     "#if defined(HAVE_INT64)\n",
     "#if defined(HAVE_INT64) && defined(TCLCL_BIND_INT64)\n", 2,
     "Debian's libtclcl is built without HAVE_INT64, so it has no "
     "TclObject::bind(const char*, int64_t*), which the 64-bit queue-monitor counters need (link "
     "error). They fall back to ns-2's own 32-bit branch, as in Debian's ns binary (its "
     "barrivals_ wraps at 2^31 too: checked)."),
    ("tools/flowmon.cc",
     "#if defined(HAVE_INT64)\n",
     "#if defined(HAVE_INT64) && defined(TCLCL_BIND_INT64)\n", 1,
     "the flow monitor prints those counters: its format must follow their type (above)."),
    ("packmime/packmime_OL.h",
     "\tint64_t maxpkts_;",
     "\tint maxpkts_;", 1,
     "same missing int64_t binding (maxpkts_ is bound to Tcl)."),
]

DEFAULTS_TCL = "tcl/lib/ns-default.tcl"
PRISTINE = ".dcfair-orig"                 # suffix of the fixed, module-free copies


class BuildError(Exception):
    """The build failed (exit 1)."""


class SetupError(Exception):
    """Missing package, tarball or bad input (exit 2)."""


# ------------------------------------------------------------------------------------------
def say(msg: str) -> None:
    print(f"ns2 build: {msg}", flush=True)


def sha256_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_bytes(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def run(cmd: List[str], cwd: Path, log: Path, what: str) -> None:
    with open(log, "a") as lf:
        lf.write(f"\n$ {' '.join(cmd)}   (in {cwd})\n")
        lf.flush()
        r = subprocess.run(cmd, cwd=cwd, stdout=lf, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        raise BuildError(f"{what} failed (exit {r.returncode})")


def write_if_changed(p: Path, data: bytes) -> bool:
    if p.is_file() and p.read_bytes() == data:
        return False
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, p)
    return True


# ------------------------------------------------------------------------------------------
# Host: Debian packages
def multiarch() -> str:
    for cc in ("gcc", "g++"):
        try:
            r = subprocess.run([cc, "-print-multiarch"], capture_output=True, text=True, timeout=30)
            if r.returncode == 0 and r.stdout.strip():
                return r.stdout.strip()
        except OSError:
            pass
    return "x86_64-linux-gnu"


def host_files(ma: str) -> Dict[str, Dict[str, Path]]:
    lib = Path("/usr/lib") / ma
    return {
        "tcl-dev": {
            "tcl_generic": Path(f"/usr/include/tcl{TCL_VER}/tcl-private/generic"),
            "tcl_unix": Path(f"/usr/include/tcl{TCL_VER}/tcl-private/unix"),
            "tclInt.h": Path(f"/usr/include/tcl{TCL_VER}/tcl-private/generic/tclInt.h"),
            "libtcl": lib / f"libtcl{TCL_VER}.so",
            "tcl_library": Path(f"/usr/share/tcltk/tcl{TCL_VER}"),
            "init.tcl": Path(f"/usr/share/tcltk/tcl{TCL_VER}/init.tcl"),
            "tclsh": Path(f"/usr/bin/tclsh{TCL_VER}"),
        },
        "libotcl1-dev": {"otcl.h": Path("/usr/include/otcl.h"), "libotcl": lib / "libotcl.so"},
        "libtclcl1-dev": {"tclcl_include": Path("/usr/include/tclcl"),
                          "tclcl.h": Path("/usr/include/tclcl/tclcl.h"), "libtclcl": lib / "libtclcl.so"},
        "tclcl": {"tcl2c++": Path("/usr/bin/tcl2c++")},
    }


def check_packages(ma: str) -> Dict[str, Dict[str, Path]]:
    files = host_files(ma)
    missing = []
    for tool in ("g++", "make"):
        if shutil.which(tool) is None:
            missing.append(tool)
    for pkg, need in files.items():
        if not all(p.exists() for p in need.values()):
            missing.append(pkg)
    if missing:
        raise SetupError("missing Debian package(s): " + " ".join(missing) +
                         "\n  install them with: apt-get install " + " ".join(PACKAGES) +
                         "   (or: make peers)")
    return files


def package_versions() -> Dict[str, str]:
    out = {}
    for pkg in PACKAGES:
        try:
            r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True,
                               timeout=30)
            out[pkg] = r.stdout.strip() if r.returncode == 0 else "not-from-dpkg"
        except OSError:
            out[pkg] = "no-dpkg"
    return out


def compiler_version() -> str:
    r = subprocess.run(["g++", "--version"], capture_output=True, text=True)
    return r.stdout.splitlines()[0].strip() if r.stdout else "unknown"


# ------------------------------------------------------------------------------------------
# Tarball
def find_tarball(out: Path, given: Optional[str]) -> Path:
    cands = [Path(given)] if given else [out / "cache" / TARBALL, Path("/tmp") / TARBALL]
    for c in cands:
        if c.is_file():
            digest = sha256_file(c)
            if digest == SHA256:
                say(f"source tarball {c} (sha256 ok)")
                return c
            if given:
                raise SetupError(f"{c}: sha256 {digest}, expected {SHA256}")
            say(f"ignoring {c}: sha256 {digest[:12]}... is not the expected one")
    dest = out / "cache" / TARBALL
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    say(f"downloading {URL}")
    try:
        with urllib.request.urlopen(URL, timeout=120) as r, open(tmp, "wb") as f:
            shutil.copyfileobj(r, f, 1 << 20)
    except OSError as e:
        raise SetupError(f"cannot download {URL}: {e}")
    digest = sha256_file(tmp)
    if digest != SHA256:
        tmp.unlink()
        raise SetupError(f"downloaded {URL}: sha256 {digest}, expected {SHA256}")
    os.replace(tmp, dest)
    say(f"saved {dest} (sha256 ok)")
    return dest


# ------------------------------------------------------------------------------------------
# Modules
def read_modules() -> Dict[str, Dict[str, bytes]]:
    """name -> {file name: content} of validation/ns2/modules/<name>/ (*.cc, *.h, <name>.tcl)."""
    mods: Dict[str, Dict[str, bytes]] = {}
    if not MODULES.is_dir():
        return mods
    for d in sorted(MODULES.iterdir()):
        if not d.is_dir() or d.name.startswith("."):
            continue
        if not d.name.replace("_", "").replace("-", "").isalnum():
            raise SetupError(f"module directory name {d.name!r}: use letters, digits, - and _")
        files = {}
        for f in sorted(d.iterdir()):
            if f.is_file() and (f.suffix in (".cc", ".h") or f.name == f"{d.name}.tcl"):
                files[f.name] = f.read_bytes()
        if not any(n.endswith(".cc") for n in files):
            raise SetupError(f"module {d.name}: no .cc file in {d}")
        mods[d.name] = files
    return mods


def module_digests(mods: Dict[str, Dict[str, bytes]]) -> Dict[str, Dict[str, str]]:
    return {m: {f: sha256_bytes(b) for f, b in files.items()} for m, files in mods.items()}


def integrate_modules(tree: Path, mods: Dict[str, Dict[str, bytes]]) -> bool:
    """Brings the tree's module sources, Makefile.in and ns-default.tcl in line with
    ``mods``; True when anything changed (then the ns binary must be relinked)."""
    changed = False
    root = tree / MOD_DIR
    root.mkdir(exist_ok=True)
    for d in sorted(root.iterdir()):
        if d.is_dir() and d.name not in mods:
            say(f"module {d.name}: removed")
            shutil.rmtree(d)
            changed = True
    objs = []
    for name, files in mods.items():
        d = root / name
        d.mkdir(exist_ok=True)
        mod_changed = False
        srcs = {f: b for f, b in files.items() if f.endswith((".cc", ".h"))}
        for f in sorted(d.iterdir()):
            if f.suffix in (".cc", ".h") and f.name not in srcs:
                f.unlink()
                mod_changed = True
        for f, b in srcs.items():
            if write_if_changed(d / f, b):
                mod_changed = True
        if mod_changed:
            # make knows no header dependencies: rebuild every object of the module
            for o in d.glob("*.o"):
                o.unlink()
            say(f"module {name}: sources updated ({', '.join(sorted(srcs))})")
            changed = True
        objs += [f"{MOD_DIR}/{name}/{f[:-3]}.o" for f in sorted(srcs) if f.endswith(".cc")]

    # Makefile.in: the module objects first in OBJ_CC
    base = (tree / ("Makefile.in" + PRISTINE)).read_text()
    marker = "OBJ_CC = \\\n"
    if base.count(marker) != 1:
        raise BuildError("Makefile.in: OBJ_CC not found once")
    add = "".join(f"\t{o} \\\n" for o in objs)
    mk = base.replace(marker, marker + add)
    if write_if_changed(tree / "Makefile.in", mk.encode()):
        changed = True

    # ns-default.tcl: the modules' defaults appended
    tcl = (tree / (DEFAULTS_TCL + PRISTINE)).read_bytes()
    for name, files in mods.items():
        t = files.get(f"{name}.tcl")
        if t is not None:
            tcl += (f"\n# ---- dcfair module {name}: validation/ns2/modules/{name}/{name}.tcl ----\n").encode()
            tcl += t if t.endswith(b"\n") else t + b"\n"
    if write_if_changed(tree / DEFAULTS_TCL, tcl):
        say("Tcl defaults (tcl/lib/ns-default.tcl) updated")
        changed = True
    return changed


# ------------------------------------------------------------------------------------------
# Tree: unpack, fix, stage Debian's libraries, configure
def unpack(tarball: Path, src: Path) -> Path:
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    say(f"unpacking {tarball.name} into {src}")
    with tarfile.open(tarball, "r:xz") as tf:
        for m in tf.getmembers():
            if m.name.startswith("/") or ".." in Path(m.name).parts or not m.name.startswith(TOP):
                raise SetupError(f"unexpected member {m.name!r} in {tarball}")
        if hasattr(tarfile, "data_filter"):
            tf.extractall(src, filter="data")
        else:
            tf.extractall(src)
    return src / TOP


def apply_fixes(tree: Path) -> List[str]:
    applied = []
    for path, old, new, count, why in SOURCE_FIXES:
        p = tree / path
        text = p.read_text(errors="surrogateescape")
        n = text.count(old)
        if n != count:
            raise BuildError(f"source fix for {path}: expected {count} occurrence(s) of {old!r}, found {n}")
        p.write_text(text.replace(old, new), errors="surrogateescape")
        applied.append(f"{path}: {why}")
    say(f"applied {len(SOURCE_FIXES)} source fixes")
    # module-free copies that integrate_modules() starts from
    for f in ("Makefile.in", DEFAULTS_TCL):
        shutil.copyfile(tree / f, tree / (f + PRISTINE))
    return applied


def stage_deps(out: Path, files: Dict[str, Dict[str, Path]]) -> Dict[str, Path]:
    """ns-2's configure looks for libraries in /usr/lib, not in Debian's multiarch directory,
    and for headers in fixed layouts: give it one directory per package, made of symlinks to
    the installed files (out/peers/ns2/deps)."""
    deps = out / "deps"
    if deps.exists():
        shutil.rmtree(deps)
    t, o, c = files["tcl-dev"], files["libotcl1-dev"], files["libtclcl1-dev"]
    links = {
        "tcl/generic": t["tcl_generic"], "tcl/unix": t["tcl_unix"],
        f"tcl/lib/libtcl{TCL_VER}.so": t["libtcl"], f"tcl/lib/tcl{TCL_VER}": t["tcl_library"],
        "otcl/include/otcl.h": o["otcl.h"], "otcl/lib/libotcl.so": o["libotcl"],
        "tclcl/lib/libtclcl.so": c["libtclcl"], "tclcl/bin/tcl2c++": files["tclcl"]["tcl2c++"],
    }
    for h in sorted(c["tclcl_include"].iterdir()):
        links[f"tclcl/include/{h.name}"] = h
    for rel, target in links.items():
        p = deps / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.symlink_to(target)
    (deps / "nox11").mkdir()
    return {"tcl": deps / "tcl", "otcl": deps / "otcl", "tclcl": deps / "tclcl", "nox11": deps / "nox11"}


def configure_args(d: Dict[str, Path]) -> List[str]:
    return [f"--with-tcl={d['tcl']}", f"--with-tcl-ver={TCL_VER}", "--with-tk=no",
            f"--with-otcl={d['otcl']}", f"--with-tclcl={d['tclcl']}",
            # no X11: configure insists on finding X; point it at an empty directory
            f"--x-includes={d['nox11']}", f"--x-libraries={d['nox11']}"]


# ------------------------------------------------------------------------------------------
def make_ns(tree: Path, jobs: int, log: Path) -> None:
    nice = ["nice", "-n", "10"] if shutil.which("nice") else []
    # how many compilations are due, for the progress lines
    dry = subprocess.run(["make", "-n", "ns"], cwd=tree, capture_output=True, text=True)
    total = sum(1 for line in dry.stdout.splitlines() if line.startswith(("g++ -c", "gcc -c")))
    say(f"make -j{jobs} ns: {total} file(s) to compile" if total else f"make -j{jobs} ns: nothing to compile")
    cmd = nice + ["make", f"-j{jobs}", "ns"]
    done = 0
    last = time.monotonic()
    with open(log, "a") as lf:
        lf.write(f"\n$ {' '.join(cmd)}   (in {tree})\n")
        lf.flush()
        proc = subprocess.Popen(cmd, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
        assert proc.stdout is not None
        for line in proc.stdout:
            lf.write(line)
            if line.startswith(("g++ -c", "gcc -c")):
                done += 1
                now = time.monotonic()
                if now - last >= 15 or done == total:
                    say(f"compiled {done}/{total}")
                    last = now
            elif " -o ns " in line:
                say("linking ns")
        rc = proc.wait()
    if rc != 0:
        raise BuildError(f"make failed (exit {rc})")


def ns_version(binary: Path) -> str:
    r = subprocess.run([str(binary)], input="puts [ns-version]\nexit 0\n", capture_output=True, text=True,
                       timeout=60, cwd="/")
    if r.returncode != 0 or not r.stdout.strip():
        raise BuildError(f"the built ns does not start: {(r.stderr or r.stdout).strip()[-400:]}")
    return r.stdout.strip().splitlines()[-1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", "-j", type=int, default=2, help="parallel compilations (default 2)")
    ap.add_argument("--force", action="store_true", help="rebuild from a fresh tree")
    ap.add_argument("--tarball", help=f"path of {TARBALL} (default: the cache, /tmp, or download)")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output directory (default out/peers/ns2)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        print("build.py: --jobs must be >= 1", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    lock = open(out / ".build.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)     # one build at a time in this directory
    try:
        return build(args, out)
    except SetupError as e:
        print(f"build.py: {e}", file=sys.stderr)
        return 2
    except BuildError as e:
        log = out / "build.log"
        tail = ""
        if log.is_file():
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        print(f"build.py: {e}\n--- end of {log} ---\n{tail}", file=sys.stderr)
        return 1


def build(args, out: Path) -> int:
    t0 = time.monotonic()
    ma = multiarch()
    files = check_packages(ma)
    mods = read_modules()
    digests = module_digests(mods)
    me = sha256_file(Path(__file__))
    pkgs = package_versions()
    cxx = compiler_version()
    src = out / "src"
    tree = src / TOP
    binary = out / "bin" / "ns"
    info_path = out / "build.json"
    # What the unpacked, fixed and configured tree depends on: when it changes, the build starts
    # from a fresh tree; any other change of build.py only reruns the module step and make.
    base = {"tarball_sha256": SHA256, "fixes": [list(f[:4]) for f in SOURCE_FIXES],
            "configure": configure_args({k: out / "deps" / k for k in ("tcl", "otcl", "tclcl", "nox11")}),
            "tcl": TCL_VER, "mod_dir": MOD_DIR, "out": str(out), "compiler": cxx, "packages": pkgs}
    base_key = sha256_bytes(json.dumps(base, sort_keys=True).encode())
    old = {}
    if info_path.is_file():
        try:
            old = json.loads(info_path.read_text())
        except ValueError:
            old = {}

    names = ", ".join(mods) or "none"
    if (not args.force and old.get("base_key") == base_key and old.get("modules") == digests
            and old.get("build_py_sha256") == me and binary.is_file() and old.get("binary_sha256") == sha256_file(binary)):
        say(f"up to date: {binary} (ns {old.get('ns_version')}, modules: {names}); nothing to do")
        return 0

    log = out / "build.log"
    marker = src / ".dcfair-base"
    cold = args.force or not (marker.is_file() and marker.read_text().strip() == base_key and tree.is_dir())
    log.write_text(f"ns2 build.py log, {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    if cold:
        say(f"cold build (modules: {names}; jobs {args.jobs})")
        tarball = find_tarball(out, args.tarball)
        if marker.exists():
            marker.unlink()
        tree = unpack(tarball, src)
        fixes = apply_fixes(tree)
        integrate_modules(tree, mods)
        deps = stage_deps(out, files)
        cfg = configure_args(deps)
        say("configure " + " ".join(a.replace(str(out) + "/", "") for a in cfg))
        run(["./configure"] + cfg, tree, log, "configure")
        marker.write_text(base_key + "\n")
    else:
        say(f"incremental build (modules: {names}; jobs {args.jobs})")
        fixes = old.get("source_fixes") or [f"{p}: {w}" for p, _, _, _, w in SOURCE_FIXES]
        cfg = old.get("configure") or []
        if integrate_modules(tree, mods):
            # relink even if only objects were removed (make would not notice)
            (tree / "ns").unlink(missing_ok=True)
    mf, mfin = tree / "Makefile", tree / "Makefile.in"
    if not mf.is_file() or mf.stat().st_mtime < mfin.stat().st_mtime:
        run(["./config.status", "--file=Makefile"], tree, log, "config.status")
    make_ns(tree, args.jobs, log)

    binary.parent.mkdir(parents=True, exist_ok=True)
    tmp = binary.with_name("ns.tmp")
    shutil.copy2(tree / "ns", tmp)
    os.replace(tmp, binary)
    version = ns_version(binary)
    wall = round(time.monotonic() - t0, 1)
    info = {
        "format": 1,
        "ns_version": version,
        "binary": str(binary.relative_to(REPO)) if binary.is_relative_to(REPO) else str(binary),
        "binary_sha256": sha256_file(binary),
        "tarball": {"name": TARBALL, "url": URL, "sha256": SHA256},
        "build_py_sha256": me,
        "modules": digests,
        "source_fixes": fixes,
        "configure": [a.replace(str(out) + "/", "") for a in cfg],
        "compiler": cxx,
        "debian_packages": pkgs,
        "base_key": base_key,
        "build": {"kind": "cold" if cold else "incremental", "wall_s": wall, "jobs": args.jobs,
                  "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")},
        "cold_build": ({"wall_s": wall, "jobs": args.jobs} if cold else old.get("cold_build")),
    }
    write_if_changed(info_path, (json.dumps(info, indent=1, sort_keys=True) + "\n").encode())
    say(f"built {binary} (ns {version}; modules: {names}) in {wall} s ({'cold' if cold else 'incremental'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
