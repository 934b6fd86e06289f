"""nightly.sh and deploy/ checked by the tools that will read them.

shellcheck (Debian's package) for the script, systemd-analyze for the units, a
YAML parser for the manifests, the `sweep` CLI's own parser for every command
line, and `docker build` where a Docker engine runs. A missing tool is installed
with apt-get when possible; otherwise the test is skipped with the reason.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from raysweep.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
NIGHTLY = REPO / "nightly.sh"
DEPLOY = REPO / "deploy"
SETTINGS = [
    "SWEEP_CONFIG",
    "SWEEP_GPUS",
    "SWEEP_LOG_DIR",
    "SWEEP_KEEP_DAYS",
    "SWEEP_MIN_FREE_GB",
    "SWEEP_NOTIFY_URL",
    "SWEEP_NOTIFY_CMD",
    "SWEEP_BEST_EXPORT",
    "SWEEP_REGRESSION_PCT",
    "SWEEP_WARM_START",
    "SWEEP_BIN",
    "SWEEP_ENV_FILE",
]


def ensure_tool(tool: str, package: str) -> str:
    """The path of ``tool``, installing Debian's ``package`` when it is missing (else skip)."""
    found = shutil.which(tool)
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is None:
        pytest.skip(f"{tool} is not installed and there is no apt-get to install {package}")
    install = [apt, "install", "-y", "--no-install-recommends", package]
    env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    done = subprocess.run(install, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        subprocess.run([apt, "update"], capture_output=True, env=env, timeout=600)
        done = subprocess.run(install, capture_output=True, text=True, env=env, timeout=600)
    found = shutil.which(tool)
    if not found:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"{tool} missing and 'apt-get install {package}' failed: {tail[0]}")
    return found


def test_shellcheck_finds_nothing_in_nightly_sh() -> None:
    shellcheck = ensure_tool("shellcheck", "shellcheck")
    done = subprocess.run([shellcheck, str(NIGHTLY)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "", done.stdout
    assert "set -euo pipefail" in NIGHTLY.read_text()


def test_help_documents_every_setting_and_exit_code() -> None:
    done = subprocess.run(["bash", str(NIGHTLY), "--help"], capture_output=True, text=True)
    assert done.returncode == 0
    for name in SETTINGS:
        assert name in done.stdout, name
    for code in ("0", "1", "2", "3", "4", "5", "6", "7", "8", "64", "130"):
        assert re.search(rf"^  {code} +\S", done.stdout, re.MULTILINE), code


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "SWEEP_CONFIG is not set"),
        ({"SWEEP_CONFIG": "x.json", "SWEEP_KEEP_DAYS": "two"}, "SWEEP_KEEP_DAYS: expected"),
        ({"SWEEP_CONFIG": "x.json", "SWEEP_WARM_START": "maybe"}, "SWEEP_WARM_START: expected"),
        ({"SWEEP_ENV_FILE": "/nonexistent/nightly.env"}, "no such readable file"),
    ],
)
def test_bad_settings_exit_64_naming_the_setting(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    clean = {"PATH": "/usr/bin:/bin", "SWEEP_ENV_FILE": str(tmp_path / "none.env"), **env}
    (tmp_path / "none.env").touch()
    done = subprocess.run(
        ["bash", str(NIGHTLY)], capture_output=True, text=True, env=clean, cwd=tmp_path
    )
    assert done.returncode == 64 and message in done.stderr, done.stderr
    assert not (tmp_path / "sweep_logs").exists()  # nothing was started


def test_the_env_file_fills_in_and_the_environment_wins(tmp_path: Path) -> None:
    env_file = tmp_path / "nightly.env"
    env_file.write_text("SWEEP_CONFIG=from_file.json\nSWEEP_KEEP_DAYS=three\n")
    base = {"PATH": "/usr/bin:/bin", "SWEEP_ENV_FILE": str(env_file)}
    done = subprocess.run(["bash", str(NIGHTLY)], capture_output=True, text=True, env=base)
    assert done.returncode == 64 and "SWEEP_KEEP_DAYS: expected" in done.stderr
    done = subprocess.run(
        ["bash", str(NIGHTLY)],
        capture_output=True,
        text=True,
        env={**base, "SWEEP_KEEP_DAYS": "x2"},
    )
    assert "got 'x2'" in done.stderr  # the environment's value, not the file's


def test_systemd_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = ensure_tool("systemd-analyze", "systemd")
    for name in ("raysweep-nightly.service", "raysweep-nightly.timer"):
        text = (DEPLOY / name).read_text().replace("/opt/raysweep", str(REPO))
        (tmp_path / name).write_text(text)
    service = (DEPLOY / "raysweep-nightly.service").read_text()
    timer = (DEPLOY / "raysweep-nightly.timer").read_text()
    assert "\nKillMode=mixed\n" in service and "\nExecStart=/opt/raysweep/nightly.sh\n" in service
    assert "\nPersistent=true\n" in timer and "\nOnCalendar=*-*-* 02:00:00\n" in timer
    done = subprocess.run(
        [analyze, "verify", str(tmp_path / "raysweep-nightly.service"),
         str(tmp_path / "raysweep-nightly.timer")],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr  # a bad value is only a warning


def yaml_documents() -> Iterator[tuple[Path, Any]]:
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (it comes with ray)")
    files = sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yaml", ".yml"))
    assert files, "no YAML in deploy/"
    for path in files:
        for document in yaml.safe_load_all(path.read_text()):
            yield path, document


def nested_yaml(node: Any, key: str = "") -> Iterator[str]:
    """YAML kept in strings: a RayJob's runtimeEnvYAML, a ConfigMap's *.yaml entries."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from nested_yaml(v, str(k))
    elif isinstance(node, list):
        for v in node:
            yield from nested_yaml(v, key)
    elif isinstance(node, str) and (key == "runtimeEnvYAML" or key.endswith((".yaml", ".yml"))):
        yield node


def test_every_yaml_in_deploy_parses() -> None:
    import yaml

    kinds: dict[str, list[str]] = {}
    for path, document in yaml_documents():
        assert isinstance(document, dict), f"{path}: not a mapping"
        kinds.setdefault(path.name, []).append(str(document.get("kind")))
        for text in nested_yaml(document):
            assert isinstance(yaml.safe_load(text), dict), f"{path}: nested YAML"
    assert kinds["rayjob.yaml"] == ["RayJob"]
    assert kinds["raycronjob.yaml"] == ["RayCronJob"]
    assert "CronJob" in kinds["cronjob.yaml"] and "ConfigMap" in kinds["cronjob.yaml"]
    assert "provider" in yaml.safe_load((DEPLOY / "ray-cluster.yaml").read_text())


# -- command lines ----------------------------------------------------------------------

SWEEP_CALL = re.compile(r"(?:^|(?<=[\s\"'=(\[]))(?:[\w.~$/-]*/)?sweep\s+(?=[a-z])")
NIGHTLY_CALL = re.compile(r"(?:^|(?<=[\s\"'=(\[]))(?:[\w.~$/-]*/)?nightly\.sh\b")
SHELL_OPERATORS = {"&&", "||", ";", "|", ">", ">>", "<", "2>&1", "&"}


def command_lines(path: Path) -> list[str]:
    """The lines of a deploy file that run something.

    Every line outside comments, and in comments the example lines that start
    with ``$`` (joined with their backslash continuations). A Dockerfile's JSON
    CMD/ENTRYPOINT is turned into a shell line; of its other instructions only RUN runs.
    """
    lines: list[str] = []
    pending = ""
    for raw in path.read_text().splitlines():
        stripped = raw.strip()
        if pending:
            text = stripped.lstrip("#").strip()
            pending += " " + text.rstrip("\\").strip()
            if not text.endswith("\\"):
                lines.append(pending)
                pending = ""
            continue
        if stripped.startswith("#"):
            text = stripped.lstrip("#").strip()
            if text.startswith("$ "):
                if text.endswith("\\"):
                    pending = text[2:].rstrip("\\").strip()
                else:
                    lines.append(text[2:])
            continue
        if path.name != "Dockerfile":
            lines.append(stripped)
            continue
        match = re.match(r"(CMD|ENTRYPOINT)\s+(\[.*\])\s*$", stripped)
        if match:
            lines.append(shlex.join(json.loads(match.group(2))))
        elif stripped.startswith("RUN "):
            lines.append(stripped[4:])
    return lines


def invocations(line: str, pattern: re.Pattern[str]) -> list[list[str]]:
    """The argument lists of each call of the program ``pattern`` matches in ``line``."""
    calls = []
    for match in pattern.finditer(line):
        rest = line[match.end() :]
        try:
            words = shlex.split(rest)
        except ValueError:  # the command sits inside quotes that close after it
            words = shlex.split(rest.rstrip().rstrip("\"'"))
        args: list[str] = []
        for word in words:
            if word in SHELL_OPERATORS or word.startswith((">", "2>")):
                break
            args.append(word)
        calls.append(args)
    return calls


def parse_sweep(args: list[str]) -> str | None:
    """None when the sweep CLI's parser accepts ``args``, else its complaint."""
    try:
        build_parser().parse_args(args)
    except SystemExit as exc:
        return f"rejected (exit {exc.code})"
    return None


DEPLOY_FILES = sorted(p for p in DEPLOY.rglob("*") if p.is_file() and p.suffix != ".example")


@pytest.mark.parametrize("path", DEPLOY_FILES, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_command_line_parses_with_the_sweep_cli(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep_calls, nightly_calls = [], []
    for line in command_lines(path):
        sweep_calls += invocations(line, SWEEP_CALL)
        nightly_calls += invocations(line, NIGHTLY_CALL)
    for args in sweep_calls:
        problem = parse_sweep(args)
        assert problem is None, f"{path.name}: sweep {shlex.join(args)}: {problem}\n" + (
            capsys.readouterr().err
        )
    for args in nightly_calls:
        assert args in ([], ["--help"]), f"{path.name}: nightly.sh {shlex.join(args)}"
    expected = {
        "crontab": (0, 1),
        "raysweep-nightly.service": (0, 1),
        "Dockerfile": (3, 1),
        "ray-cluster.yaml": (2, 0),
        "rayjob.yaml": (1, 0),
        "raycronjob.yaml": (0, 1),
        "cronjob.yaml": (0, 1),
    }
    if path.name in expected:
        assert (len(sweep_calls), len(nightly_calls)) == expected[path.name], (
            sweep_calls,
            nightly_calls,
        )


def test_the_crontab_line_runs_at_two_and_appends_its_output() -> None:
    entries = [
        line
        for line in (DEPLOY / "crontab").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(entries) == 1
    fields = entries[0].split(None, 5)
    assert fields[:5] == ["0", "2", "*", "*", "*"]
    assert "nightly.sh >> " in fields[5] and fields[5].endswith("2>&1")


def docker_engine() -> str:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker command: the Dockerfile build needs a Docker engine")
    info = subprocess.run([docker, "info"], capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        reason = (info.stderr.strip().splitlines() or ["docker info failed"])[-1]
        pytest.skip(f"no Docker engine runs here ({reason})")
    return docker


@pytest.mark.slow
def test_the_dockerfile_builds_an_image_that_runs_sweep() -> None:
    docker = docker_engine()
    tag = "raysweep-test:cpu"
    build = subprocess.run(
        [docker, "build", "-f", str(DEPLOY / "Dockerfile"), "-t", tag, str(REPO)],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    try:
        help_out = subprocess.run(
            [docker, "run", "--rm", tag, "sweep", "--help"], capture_output=True, text=True
        )
        assert help_out.returncode == 0 and "history" in help_out.stdout
        night = subprocess.run(
            [docker, "run", "--rm", tag, "/opt/raysweep/nightly.sh", "--help"],
            capture_output=True,
            text=True,
        )
        assert night.returncode == 0 and "SWEEP_CONFIG" in night.stdout
    finally:
        subprocess.run([docker, "rmi", "-f", tag], capture_output=True)


def test_the_checker_catches_a_bad_command_line(tmp_path: Path) -> None:
    bad = tmp_path / "crontab"
    bad.write_text(
        "# $ sweep run --confg sweep.json\n"
        "0 2 * * * cd /srv && sweep best runs/x --top 3 && ./nightly.sh --now >> log 2>&1\n"
    )
    lines = command_lines(bad)
    calls = [args for line in lines for args in invocations(line, SWEEP_CALL)]
    assert calls == [["run", "--confg", "sweep.json"], ["best", "runs/x", "--top", "3"]]
    assert parse_sweep(calls[0]) is not None and parse_sweep(calls[1]) is None
    assert [a for line in lines for a in invocations(line, NIGHTLY_CALL)] == [["--now"]]
