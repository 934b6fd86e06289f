"""The GPU checks on an offline GPU host: pack the wheels here, install and run there.

A tool, not a benchmark: it runs the GPU tests and ``python -m benchmarks.run gpu`` elsewhere.
It lives outside ``src/`` and ``benchmarks/`` because the host runs it as a
plain file with the standard library alone, before raysweep is installed.

A GPU host often has CUDA and PyTorch but no package index. On a machine with
one, from the project's environment:

    python tools/gpu_host.py pack WHEELS --python 3.12 [--have HOST_PACKAGES]

downloads, for the host's Python, the wheels raysweep needs at run time (Ray
Tune without the dashboard extras, the searchers, the GBM libraries; never
torch or the CUDA libraries) except those the host already has (``--have``: a
file of names, as ``pip list`` or ``pip freeze`` prints them or separated by
commas). Wheels are stored uncompressed and xz-compressed, large ones split,
and grouped into folders ``WHEELS/bundle-NN`` of at most ``--bundle-mb`` MiB
each, for transfers with a size limit. On the host, with this repository
checked out and the bundle folders copied into one folder (or their files):

    python3 tools/gpu_host.py check WHEELS OUT [--quick]

(standard library only) rebuilds and verifies the wheels, installs them into a
new virtual environment that sees the host's own packages, torch included, and
runs ``pytest -m gpu`` and ``python -m benchmarks.run gpu`` (``--only tests|bench``
for one of them; a second call reuses the environment; ``--workers N`` runs the
tests in N pytest-xdist processes, the MPS ones alone after them), writing the
logs, the JUnit XML and the benchmark's JSON to OUT.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MANIFEST = "manifest.json"
WORK_DIR = Path("/tmp/raysweep-gpu-host")  # on the host: rebuilt wheels and the venv
MiB = 2**20
PLATFORMS = ("manylinux_2_28", "manylinux_2_27", "manylinux_2_17", "manylinux2014", "manylinux1")
# Never carried: the host's PyTorch build and CUDA libraries are the ones to test
# (nvidia-ml-py, the NVML bindings raysweep uses, is carried when the host lacks it).
NEVER = re.compile(r"^(torch|triton|nvidia-(?!ml-py$).*|raysweep)$")
# Ray's ``default`` extra is the dashboard's; the checks run without it.
SKIPPED_EXTRAS = frozenset({"default"})
# Start and stop MPS daemons and fill the card's memory: run alone, after the others.
MPS_TESTS = "tests/e2e/test_mps_gpu.py"


def normalize(name: str) -> str:
    """A distribution name as pip compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


# The GBM libraries are extras of raysweep; a GPU host checks all three (torch it has).
GPU_HOST_EXTRAS = frozenset({"lightgbm", "xgboost", "catboost"})


def runtime_closure(root: str = "raysweep") -> dict[str, str]:
    """name -> installed version of what ``root`` needs at run time, ``root`` excluded.

    Packages matching ``NEVER`` are left out with everything only they need.
    """
    from importlib import metadata

    from packaging.requirements import Requirement

    found: dict[str, str] = {}

    def visit(name: str, extras: frozenset[str]) -> None:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            return
        found[normalize(dist.metadata["Name"])] = dist.version
        for text in dist.requires or []:
            req = Requirement(text)
            wanted = req.marker is None or any(
                req.marker.evaluate({"extra": e}) for e in ("", *extras)
            )
            dep = normalize(req.name)
            if wanted and dep not in found and not NEVER.match(dep):
                visit(req.name, frozenset(req.extras) - SKIPPED_EXTRAS)

    visit(root, GPU_HOST_EXTRAS)
    found.pop(normalize(root), None)
    return found


def read_have(path: Path | None) -> set[str]:
    """Normalized names in a ``pip list``/``pip freeze`` output or a comma-separated list."""
    if path is None:
        return set()
    names = set()
    for token in re.split(r"[,\n]", path.read_text(encoding="utf-8")):
        token = token.strip()
        if token and not token.startswith(("Package", "---", "#")):
            names.add(normalize(re.split(r"[\s=<>@]", token)[0]))
    return names


def pack(dest: Path, python: str, have: set[str], bundle_mb: float) -> dict[str, Any]:
    """Download, compress, split and bundle the wheels; returns the manifest."""
    wanted = {name: version for name, version in runtime_closure().items() if name not in have}
    downloads = dest / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    platform_args = [a for p in PLATFORMS for a in ("--platform", f"{p}_x86_64")]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
         "--only-binary=:all:", "--python-version", python, "--implementation", "cp",
         *platform_args, "-d", str(downloads),
         *(f"{name}=={version}" for name, version in sorted(wanted.items()))],
        check=True,
    )  # fmt: skip
    manifest = bundle(sorted(downloads.glob("*.whl")), dest, int(bundle_mb * MiB), python)
    shutil.rmtree(downloads)
    return manifest


def bundle(wheels: Sequence[Path], dest: Path, limit: int, python: str = "") -> dict[str, Any]:
    """Write each wheel, stored then xz-compressed, in parts filling ``dest/bundle-NN``.

    Every bundle folder holds at most ``limit`` bytes of parts, and a copy of the
    manifest: per wheel its name, the sha256 of its stored copy (what ``unpack``
    rebuilds) and its parts; the bytes per bundle; the Python it was packed for.
    """
    for stale in dest.glob("bundle-*"):  # a previous pack's parts must not mix in
        shutil.rmtree(stale)
    entries: list[dict[str, Any]] = []
    sizes = [0]
    for wheel in wheels:
        stored = stored_copy(wheel)
        data = lzma.compress(stored, preset=6)
        print(f"{wheel.name}: {wheel.stat().st_size / MiB:.1f} -> {len(data) / MiB:.1f} MiB",
              file=sys.stderr, flush=True)  # fmt: skip
        parts: list[str] = []
        while data:
            room = limit - sizes[-1]
            if sizes[-1] and room < min(len(data), MiB):  # too little room: a new bundle
                sizes.append(0)
                room = limit
            folder = dest / f"bundle-{len(sizes):02d}"
            folder.mkdir(parents=True, exist_ok=True)
            part = f"{wheel.name}.xz.{len(parts):02d}"
            (folder / part).write_bytes(data[:room])
            sizes[-1] += len(data[:room])
            parts.append(part)
            data = data[room:]
        entries.append({"wheel": wheel.name, "sha256": sha256(stored), "parts": parts})
    manifest = {"python": python, "wheels": entries, "bundle_bytes": sizes}
    for folder in dest.glob("bundle-*"):
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def stored_copy(wheel: Path) -> bytes:
    """The wheel's bytes with every member stored: xz compresses those far better."""
    import io

    out = io.BytesIO()
    with zipfile.ZipFile(wheel) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            info.compress_type = zipfile.ZIP_STORED
            zout.writestr(info, data)
    return out.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def unpack(source: Path, dest: Path) -> list[Path]:
    """Rebuild the manifest's wheels into ``dest`` from the parts under ``source``.

    ``source`` holds the bundle folders (``bundle-NN/``) or their files side by side.
    """
    files = {p.name: p for p in [*source.glob("bundle-*/*"), *source.glob("*")] if p.is_file()}
    if MANIFEST not in files:
        raise SystemExit(f"no {MANIFEST} in {source} or its bundle-* folders")
    manifest = json.loads(files[MANIFEST].read_text(encoding="utf-8"))
    dest.mkdir(parents=True, exist_ok=True)
    built = []
    for entry in manifest["wheels"]:
        missing = [p for p in entry["parts"] if p not in files]
        if missing:
            raise SystemExit(f"{entry['wheel']}: parts {missing} are not in {source}")
        try:
            data = lzma.decompress(b"".join(files[p].read_bytes() for p in entry["parts"]))
        except lzma.LZMAError as exc:
            raise SystemExit(f"{entry['wheel']}: a part is damaged ({exc})") from exc
        if sha256(data) != entry["sha256"]:
            raise SystemExit(f"{entry['wheel']}: rebuilt from {entry['parts']}, checksum differs")
        target = dest / entry["wheel"]
        target.write_bytes(data)
        built.append(target)
    return built


def make_env(venv: Path, wheels: list[Path]) -> Path:
    """A virtual environment with ``wheels`` that also sees this Python's packages and src/."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
         "--no-compile", "--target", str(site), *map(str, wheels)],
        check=True,
    )  # fmt: skip
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    # After the venv's own site-packages; addsitedir also runs the .pth files found there.
    lines = [str(REPO / "src"), *(f"import site; site.addsitedir({p!r})" for p in sorted(paths))]
    (site / "raysweep_host.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return python


def pytest_runs(test_paths: Sequence[str] = (), workers: int = 1) -> list[tuple[str, list[str]]]:
    """The pytest commands (log name, arguments) that run the ``gpu`` tests.

    One run with ``workers`` 1. With more, the tests but the MPS ones in ``workers``
    pytest-xdist processes (a test file per process), then the MPS ones alone.
    """
    base = ["-m", "pytest", "-m", "gpu", "-v", "-rA", "-p", "no:cacheprovider"]
    if workers <= 1:
        return [("pytest", [*base, "--junitxml={out}/junit.xml", *test_paths])]
    mps = [p for p in test_paths if p.split("::")[0].rstrip("/") == MPS_TESTS]
    others = [p for p in test_paths if p not in mps]
    runs = []
    if others or not test_paths:
        runs.append(("pytest", [*base, "-n", str(workers), "--dist", "loadfile",
                                f"--ignore={MPS_TESTS}", "--junitxml={out}/junit.xml",
                                *others]))  # fmt: skip
    if mps or not test_paths:
        runs.append(
            ("pytest-mps", [*base, "--junitxml={out}/junit-mps.xml", *(mps or [MPS_TESTS])])
        )
    return runs


def check(
    wheels_dir: Path,
    out: Path,
    quick: bool,
    only: str | None = None,
    repeats: int | None = None,
    test_paths: Sequence[str] = (),
    workers: int = 1,
) -> int:
    """Install, then run ``pytest -m gpu`` and the GPU benchmark (``only``: one of them).

    ``repeats``: the benchmark's repeats (its default 3 takes about 50 minutes on an H100).
    ``test_paths``: test files or node ids to run instead of every ``gpu`` test.
    ``workers``: pytest-xdist processes for the tests (:func:`pytest_runs`).

    Returns 0 when what ran passed. The environment is kept in WORK_DIR, so a
    later call with ``--only`` on the same host reuses it.
    """
    out.mkdir(parents=True, exist_ok=True)
    python = WORK_DIR / "venv" / "bin" / "python"
    if not python.is_file():
        python = make_env(WORK_DIR / "venv", unpack(wheels_dir, WORK_DIR / "wheels"))

    def step(name: str, args: Sequence[str]) -> int:
        print(f"== {name}: {' '.join(args)}", flush=True)
        with (out / f"{name}.log").open("w", encoding="utf-8") as log:
            proc = subprocess.Popen(
                [str(python), *args], cwd=REPO, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stdout.write(line)
                log.write(line)
        return proc.wait()

    if workers > 1 and only in (None, "tests"):
        probe = subprocess.run([str(python), "-c", "import xdist"], capture_output=True)
        if probe.returncode:
            print("--workers needs pytest-xdist on the host (or --workers 1)", file=sys.stderr)
            return 2
    step("gpus", ["-m", "raysweep.cli", "gpus"])
    tests = bench = None
    if only in (None, "tests"):
        codes = [step(name, [a.replace("{out}", str(out)) for a in args])
                 for name, args in pytest_runs(test_paths, workers)]  # fmt: skip
        tests = next((code for code in codes if code), 0)
    if only in (None, "bench"):
        bench_args = [
            *(["--quick"] if quick else []),
            *(["--repeats", str(repeats)] if repeats else []),
        ]
        bench = step("bench_gpu", ["-m", "benchmarks.run", "gpu", *bench_args])
    result = REPO / "benchmarks" / "results" / ("gpu.quick.json" if quick else "gpu.json")
    if result.is_file():
        shutil.copy(result, out / result.name)
    print(f"== pytest exit {tests}, benchmark exit {bench} (None: not run); files in {out}")
    return tests or bench or 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 tools/gpu_host.py pack|check ...``."""
    parser = argparse.ArgumentParser(prog="tools/gpu_host.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="download and bundle the wheels (on a machine with an index)")
    p.add_argument("dest", type=Path)
    p.add_argument("--python", default="3.12", help="the host's Python version (3.12)")
    p.add_argument("--have", type=Path, help="file naming the packages the host already has")
    p.add_argument("--bundle-mb", type=float, default=60.0, help="MiB per bundle folder (60)")
    c = sub.add_parser("check", help="install the wheels and run the GPU checks (on the host)")
    c.add_argument("wheels", type=Path, help="folder with the bundle-NN folders (or their files)")
    c.add_argument("out", type=Path, help="folder for logs and results")
    c.add_argument("--quick", action="store_true", help="the benchmark's --quick size")
    c.add_argument("--only", choices=("tests", "bench"), help="run only the tests or the benchmark")
    c.add_argument("--repeats", type=int, help="the benchmark's repeats (default 3, ~50 min)")
    c.add_argument("--tests", nargs="+", default=(), help="these test files only (of the gpu ones)")
    c.add_argument("--workers", type=int, default=1,
                   help="run the tests in N pytest-xdist processes, the MPS ones alone after "
                        "them (N=3: about 5 minutes on an H100 instead of 10)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.command == "pack":
        manifest = pack(args.dest, args.python, read_have(args.have), args.bundle_mb)
        sizes = ", ".join(f"{b / MiB:.1f}" for b in manifest["bundle_bytes"])
        print(f"{len(manifest['wheels'])} wheels in {len(manifest['bundle_bytes'])} bundles "
              f"({sizes} MiB) under {args.dest}")  # fmt: skip
        return 0
    if args.workers < 1:
        parser.error(f"--workers: at least 1 (got {args.workers})")
    return check(
        args.wheels, args.out, args.quick, args.only, args.repeats, args.tests, args.workers
    )


if __name__ == "__main__":
    sys.exit(main())
