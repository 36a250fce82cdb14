"""The peers' own environments, created on first use under a cache folder.

Each peer runs in its own interpreter, never in cepagg's: apache-flink pins its own pyarrow and
apache-beam, and CORE's bindings (``pycer``) exist for Python 3.13 only. Everything comes from
PyPI; Flink's jars (``flink-cep`` among them) ship inside the ``apache-flink`` package under
``pyflink/lib``, so no Maven repository is needed.

Layout of the cache (default ``~/.cache/cepagg/peers``; ``--cache`` or ``CEPAGG_PEERS_CACHE``)::

    flink/                 venv with apache-flink==2.3.0 (also runs flink_sql.py)
    core/                  venv (Python 3.13) with pycer==0.1.6 (runs core.py)
    flink-cep-<hash>/      CepCount.class compiled from flink_cep/CepCount.java

A venv counts as installed once its stamp file ``.cepagg-installed`` exists, so an interrupted
install is redone, not trusted.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

FLINK_VERSION = "2.3.0"
PYCER_VERSION = "0.1.6"
STAMP = ".cepagg-installed"
HERE = Path(__file__).resolve().parent
CEP_SOURCE = HERE / "flink_cep" / "CepCount.java"

#: JVM options Flink 2.x needs on Java 17 (reflection into java.util / java.lang).
JAVA_OPENS = ("--add-opens=java.base/java.util=ALL-UNNAMED",
              "--add-opens=java.base/java.lang=ALL-UNNAMED")

#: Sizes and times measured on the reference machine (2 cores, PyPI over the network).
EXPECTED = {
    "flink": f"apache-flink=={FLINK_VERSION}: about 850 MB on disk, 1-2 minutes",
    "core": f"pycer=={PYCER_VERSION}: about 60 MB on disk, under 30 seconds",
}


def default_cache() -> Path:
    return Path(os.environ.get("CEPAGG_PEERS_CACHE") or Path.home() / ".cache" / "cepagg" / "peers")


def say(msg: str) -> None:
    print(f"[peers] {msg}", file=sys.stderr, flush=True)


@dataclass
class Environments:
    """What is installed, where; and why a peer is unavailable."""

    cache: Path
    flink_python: Path | None = None
    flink_lib: Path | None = None
    cep_classes: Path | None = None
    java: str | None = None
    core_python: Path | None = None
    missing: dict[str, str] = field(default_factory=dict)

    def describe(self) -> list[str]:
        lines = [f"cache: {self.cache}"]
        if self.flink_python:
            lines.append(f"flink: {self.flink_python} (jars: {self.flink_lib})")
        if self.cep_classes:
            lines.append(f"flink-cep classes: {self.cep_classes}")
        if self.core_python:
            lines.append(f"core: {self.core_python}")
        for peer, why in self.missing.items():
            lines.append(f"{peer}: not available: {why}")
        return lines


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _installed(venv: Path) -> bool:
    return (venv / STAMP).exists() and _venv_python(venv).exists()


def du_mb(path: Path) -> float:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total / 1e6


def _pip_install(python: Path, requirement: str) -> None:
    """pip install, its progress lines passed through (minus this machine's index warnings)."""
    cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", requirement]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if "is ignored: it is neither a file nor a directory" in line:
            continue
        if line.startswith(("Collecting", "Downloading", "Installing", "Successfully", "ERROR")):
            print(f"[peers]   {line.rstrip()}", file=sys.stderr, flush=True)
    if proc.wait() != 0:
        raise RuntimeError(f"'{' '.join(cmd)}' failed (exit {proc.returncode})")


def _create_venv(base_python: str, venv: Path, requirement: str, what: str) -> None:
    t0 = time.monotonic()
    if venv.exists():
        say(f"removing the unfinished environment {venv}")
        shutil.rmtree(venv)
    say(f"creating venv {venv} with {base_python}")
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    say(f"installing {requirement} into it ({EXPECTED[what]}) ...")
    _pip_install(_venv_python(venv), requirement)
    (venv / STAMP).write_text(f"{requirement}\n")
    say(f"installed {requirement} in {time.monotonic() - t0:.0f} s; {du_mb(venv):.0f} MB on disk")


def _base_python_for_flink() -> str:
    """apache-flink 2.3 wheels exist for CPython 3.9-3.12: the interpreter behind this one."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    if (3, 9) <= sys.version_info[:2] <= (3, 12):
        return base
    for cand in ("python3.12", "python3.11", "python3.10"):
        path = shutil.which(cand)
        if path:
            return path
    raise RuntimeError("apache-flink needs CPython 3.9-3.12; none found (set CEPAGG_FLINK_PYTHON)")


def find_python313() -> str | None:
    """A CPython 3.13 for pycer: CEPAGG_PY313, pyenv's 3.13, or python3.13 on PATH.

    Each candidate is run once to check its version (a pyenv shim on PATH can exist for a
    version that is not active, and then fails).
    """
    cands = [os.environ.get("CEPAGG_PY313")]
    cands += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.13*/bin/python3.13")))
    cands += [shutil.which("python3.13"), "/usr/bin/python3.13", "/usr/local/bin/python3.13"]
    seen = set()
    for c in cands:
        if not c or c in seen or not os.path.exists(c):
            continue
        seen.add(c)
        try:
            out = subprocess.run([c, "-c", "import sys; print(sys.version_info[:2] == (3, 13))"],
                                 capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out == "True":
            return c
    return None


def _flink_lib(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import os, pyflink; print(os.path.dirname(pyflink.__file__))"],
                         check=True, capture_output=True, text=True).stdout.strip()
    return Path(out) / "lib"


def compile_cep(cache: Path, flink_lib: Path) -> Path:
    """Compile CepCount.java (once per version of its source) and return the class folder."""
    digest = hashlib.sha1(CEP_SOURCE.read_bytes()).hexdigest()[:12]
    out = cache / f"flink-cep-{digest}"
    if (out / "CepCount.class").exists():
        return out
    javac = shutil.which("javac")
    if javac is None:
        raise RuntimeError("javac not found (Java 17 JDK needed for the Flink CEP peer)")
    say(f"compiling {CEP_SOURCE.name} against {flink_lib} into {out}")
    tmp = out.with_suffix(".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    subprocess.run([javac, "-nowarn", "-d", str(tmp), "-cp", f"{flink_lib}/*", str(CEP_SOURCE)],
                   check=True)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def ensure(cache: Path | None = None, peers: tuple[str, ...] = ("flink-cep", "flink-sql", "core"),
           install: bool = True) -> Environments:
    """Locate (and, with ``install``, create) the environments the chosen peers need.

    A peer that cannot be set up is reported in ``missing`` with the reason; the others run.
    """
    cache = Path(cache) if cache else default_cache()
    cache.mkdir(parents=True, exist_ok=True)
    envs = Environments(cache=cache)
    envs.java = shutil.which("java")
    needs_flink = any(p.startswith("flink") for p in peers)
    if needs_flink:
        venv = cache / "flink"
        try:
            if not _installed(venv):
                if not install:
                    raise RuntimeError(f"not installed in {venv} (run without --no-install)")
                base = os.environ.get("CEPAGG_FLINK_PYTHON") or _base_python_for_flink()
                _create_venv(base, venv, f"apache-flink=={FLINK_VERSION}", "flink")
            envs.flink_python = _venv_python(venv)
            envs.flink_lib = _flink_lib(envs.flink_python)
        except Exception as e:  # noqa: BLE001 - reported, the other peers still run
            for p in peers:
                if p.startswith("flink"):
                    envs.missing[p] = str(e)
        if "flink-cep" in peers and envs.flink_lib is not None:
            try:
                if envs.java is None:
                    raise RuntimeError("java not found on PATH (Java 17 needed)")
                envs.cep_classes = compile_cep(cache, envs.flink_lib)
            except Exception as e:  # noqa: BLE001
                envs.missing["flink-cep"] = str(e)
    if "core" in peers:
        venv = cache / "core"
        try:
            if not _installed(venv):
                if not install:
                    raise RuntimeError(f"not installed in {venv} (run without --no-install)")
                py313 = find_python313()
                if py313 is None:
                    raise RuntimeError("pycer (CORE) installs only on CPython 3.13; none found "
                                       "(install one, or set CEPAGG_PY313=/path/to/python3.13)")
                _create_venv(py313, venv, f"pycer=={PYCER_VERSION}", "core")
            envs.core_python = _venv_python(venv)
        except Exception as e:  # noqa: BLE001
            envs.missing["core"] = str(e)
    return envs
