#!/usr/bin/env bash
# nightly.sh: raysweep's nightly service. Run it from cron, a systemd timer or a
# Kubernetes CronJob; see `nightly.sh --help` and docs/operations.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR
readonly EXPORT_TOP=10
readonly KNOWN_VARS=(SWEEP_CONFIG SWEEP_GPUS SWEEP_LOG_DIR SWEEP_KEEP_DAYS SWEEP_MIN_FREE_GB
  SWEEP_NOTIFY_URL SWEEP_NOTIFY_CMD SWEEP_NOTIFY_ON_SUCCESS SWEEP_BEST_EXPORT
  SWEEP_REGRESSION_PCT SWEEP_WARM_START SWEEP_BIN SWEEP_RUN_ARGS
  RAY_ADDRESS RAY_AUTH_MODE RAY_AUTH_TOKEN RAY_AUTH_TOKEN_PATH RAYSWEEP_CONNECT_TIMEOUT_S)

# Exit codes, one per cause.
readonly EX_OK=0 EX_SWEEP_FAILED=1 EX_INVALID=2 EX_LOCK=3 EX_NO_SWEEP=4 EX_DISK=5 EX_GPUS=6
readonly EX_EXPORT=7 EX_ABNORMAL=8 EX_USAGE=64 EX_INTERRUPTED=130

usage() {
  cat <<'EOF'
Usage: nightly.sh [--help]

Runs one night of a raysweep sweep: takes a lock, checks the machine, resumes the
newest unfinished nightly run or starts nightly_YYYYmmdd_HHMMSS (UTC), exports the
best configurations, compares with the previous successful night, notifies, rotates
old runs and appends the night to history.jsonl (every night, failed ones too,
also when the sweep command itself does not run). Read the nights with
`sweep history $SWEEP_LOG_DIR`.

Settings (environment variables; also read from SWEEP_ENV_FILE, default
deploy/nightly.env beside this script when present; the environment wins over the file):
  SWEEP_CONFIG          the sweep.json to run (required)
  SWEEP_GPUS            passed to --gpus ('0,1', 'all', 'none'); checked before the night
  SWEEP_LOG_DIR         run directories, night logs and history.jsonl (default sweep_logs)
  SWEEP_KEEP_DAYS       delete nightly runs and logs older than this (default 14)
  SWEEP_MIN_FREE_GB     free disk needed in SWEEP_LOG_DIR to start (default 5)
  SWEEP_NOTIFY_URL      POST the notification JSON here
  SWEEP_NOTIFY_CMD      run this (sh -c) with the notification JSON on stdin
  SWEEP_NOTIFY_ON_SUCCESS  1: notify successful nights too (default 0)
  SWEEP_BEST_EXPORT     best configurations of the last successful night, written
                        atomically (default models/best_configs_latest.json)
  SWEEP_REGRESSION_PCT  a best worse than the previous night's by more than this
                        percent is a regression (default 5)
  SWEEP_WARM_START      1: evaluate the previous night's top configurations first,
                        at most half of the night's trials (default 1; 0 turns it off)
  SWEEP_BIN             the sweep command (default: sweep on PATH, else .venv/bin/sweep
                        beside this script)
  SWEEP_RUN_ARGS        extra arguments for sweep run/resume, e.g. '--address auto'
  RAY_AUTH_MODE, RAY_AUTH_TOKEN_PATH
                        a cluster's token (Ray's token authentication): 'token', and a
                        file holding the token that only this job's user reads (chmod 600)
  RAYSWEEP_CONNECT_TIMEOUT_S
                        give up joining a cluster after this many seconds (default 60):
                        the night fails (exit 2) naming the address and the likely causes

Notification JSON (on failure and on regression): {"event": "failed"|"regression"|
"succeeded", "run_dir", "exit_code", "reason", "best", "previous_best", "log_tail", ...}

Exit codes:
  0    the night succeeded (a regression too), or another night still runs (skipped)
  1    the sweep failed (no trial succeeded)
  2    invalid input: the sweep refused its config or flags, or found no cluster
       that answers at its address (or one that wants another token)
  3    lock trouble: the log directory or its lock file cannot be used
  4    the sweep command does not run (the reason names SWEEP_BIN)
  5    not enough free disk in SWEEP_LOG_DIR
  6    a GPU in SWEEP_GPUS does not exist
  7    the export could not be written
  8    the sweep ended abnormally (killed, crashed)
  64   nightly.sh's own settings are invalid
  130  interrupted (SIGTERM/SIGINT); the next night resumes the run
EOF
}

NIGHT_LOG=""
RUN_DIR=""
RESUMED=0
CHILD=""
GOT_SIGNAL=""
PAYLOAD=""

log() {
  local line
  line="[$(date -u +%Y-%m-%dT%H:%M:%SZ)] nightly: $*"
  printf '%s\n' "$line"
  if [[ -n $NIGHT_LOG ]]; then
    printf '%s\n' "$line" >>"$NIGHT_LOG" 2>/dev/null || true
  fi
}

usage_error() {
  printf 'nightly.sh: %s\n' "$1" >&2
  printf "Run 'nightly.sh --help' for the settings.\n" >&2
  exit "$EX_USAGE"
}

# shellcheck disable=SC2317  # invoked by the traps in main
on_signal() {
  GOT_SIGNAL="$1"
  if [[ -n $CHILD ]]; then
    kill -TERM "$CHILD" 2>/dev/null || true
  fi
}

load_env_file() {
  local file="${SWEEP_ENV_FILE:-}" explicit=1 name kv
  local -a saved=()
  if [[ -z $file ]]; then
    file="$SCRIPT_DIR/deploy/nightly.env"
    explicit=0
  fi
  if [[ ! -r $file || -d $file ]]; then
    if ((explicit)); then
      usage_error "SWEEP_ENV_FILE=$file: no such readable file"
    fi
    return 0
  fi
  for name in "${KNOWN_VARS[@]}"; do
    if [[ -n ${!name+x} ]]; then
      saved+=("$name=${!name}")
    fi
  done
  set -a
  # shellcheck source=/dev/null
  . "$file"
  set +a
  for kv in "${saved[@]}"; do
    export "${kv%%=*}=${kv#*=}"
  done
}

check_number() { # name value
  if [[ ! $2 =~ ^[0-9]+([.][0-9]+)?$ ]]; then
    usage_error "$1: expected a number >= 0 (got '$2')"
  fi
}

settings() {
  SWEEP_CONFIG="${SWEEP_CONFIG:-}"
  SWEEP_GPUS="${SWEEP_GPUS:-}"
  SWEEP_LOG_DIR="${SWEEP_LOG_DIR:-sweep_logs}"
  SWEEP_KEEP_DAYS="${SWEEP_KEEP_DAYS:-14}"
  SWEEP_MIN_FREE_GB="${SWEEP_MIN_FREE_GB:-5}"
  SWEEP_NOTIFY_URL="${SWEEP_NOTIFY_URL:-}"
  SWEEP_NOTIFY_CMD="${SWEEP_NOTIFY_CMD:-}"
  SWEEP_NOTIFY_ON_SUCCESS="${SWEEP_NOTIFY_ON_SUCCESS:-0}"
  SWEEP_BEST_EXPORT="${SWEEP_BEST_EXPORT:-models/best_configs_latest.json}"
  SWEEP_REGRESSION_PCT="${SWEEP_REGRESSION_PCT:-5}"
  SWEEP_WARM_START="${SWEEP_WARM_START:-1}"
  SWEEP_RUN_ARGS="${SWEEP_RUN_ARGS:-}"
  SWEEP_BIN_GIVEN="${SWEEP_BIN:-}"
  if [[ -z ${SWEEP_BIN:-} ]]; then
    SWEEP_BIN="$(command -v sweep || true)"
    SWEEP_BIN="${SWEEP_BIN:-$SCRIPT_DIR/.venv/bin/sweep}"
  fi
  [[ -n $SWEEP_CONFIG ]] || usage_error "SWEEP_CONFIG is not set: the sweep.json to run"
  check_number SWEEP_KEEP_DAYS "$SWEEP_KEEP_DAYS"
  check_number SWEEP_MIN_FREE_GB "$SWEEP_MIN_FREE_GB"
  check_number SWEEP_REGRESSION_PCT "$SWEEP_REGRESSION_PCT"
  case "${SWEEP_WARM_START,,}" in
    1 | on | yes | true) SWEEP_WARM_START=1 ;;
    0 | off | no | false) SWEEP_WARM_START=0 ;;
    *) usage_error "SWEEP_WARM_START: expected 1 or 0 (got '$SWEEP_WARM_START')" ;;
  esac
  case "$SWEEP_NOTIFY_ON_SUCCESS" in
    0 | 1) ;;
    *) usage_error "SWEEP_NOTIFY_ON_SUCCESS: expected 1 or 0 (got '$SWEEP_NOTIFY_ON_SUCCESS')" ;;
  esac
}

# The Python beside the sweep command (its virtualenv), else python3 on PATH.
find_python() {
  local bin dir
  bin="$(command -v "$SWEEP_BIN" 2>/dev/null || true)"
  dir="$(dirname "${bin:-/nonexistent}")"
  if [[ -x $dir/python3 ]]; then
    printf '%s\n' "$dir/python3"
  elif [[ -x $dir/python ]]; then
    printf '%s\n' "$dir/python"
  else
    command -v python3 || true
  fi
}

# A notification JSON without raysweep (when the sweep command itself cannot run).
fallback_payload() { # event exit_code reason
  local py
  py="$(find_python)"
  [[ -n $py ]] || return 1
  "$py" - "$1" "$2" "$3" "$RUN_DIR" "$NIGHT_LOG" >"$PAYLOAD" <<'PY'
import json, sys
event, code, reason, run_dir, log = sys.argv[1:6]
try:
    with open(log, encoding="utf-8", errors="replace") as fh:
        tail = "\n".join(fh.read().splitlines()[-50:])
except OSError:
    tail = ""
print(json.dumps({"event": event, "status": event, "run_dir": run_dir or None,
                  "exit_code": int(code), "reason": reason or None, "best": None,
                  "previous_best": None, "log": log or None, "log_tail": tail}))
PY
}

post_json() { # url file
  local py
  py="$(find_python)"
  if [[ -n $py ]]; then
    "$py" - "$1" "$2" <<'PY'
import sys, urllib.request
url, path = sys.argv[1], sys.argv[2]
with open(path, "rb") as fh:
    data = fh.read()
request = urllib.request.Request(
    url, data=data, method="POST", headers={"Content-Type": "application/json"}
)
with urllib.request.urlopen(request, timeout=20) as response:
    if not 200 <= response.status < 300:
        raise SystemExit(f"HTTP {response.status}")
PY
  elif command -v curl >/dev/null; then
    curl -fsS -m 20 -H 'Content-Type: application/json' --data-binary "@$2" "$1" >/dev/null
  else
    printf 'neither python3 nor curl is installed\n' >&2
    return 1
  fi
}

notify() { # event exit_code reason
  local code=0 out="${NIGHT_LOG:-/dev/stderr}"
  if [[ -z $SWEEP_NOTIFY_URL && -z $SWEEP_NOTIFY_CMD ]]; then
    return 0
  fi
  if [[ ! -s $PAYLOAD ]] && ! fallback_payload "$@"; then
    log "warning: no notification sent: its JSON could not be built"
    return 0
  fi
  if [[ -n $SWEEP_NOTIFY_URL ]]; then
    post_json "$SWEEP_NOTIFY_URL" "$PAYLOAD" >>"$out" 2>&1 || code=$?
    if ((code)); then
      log "warning: notification to $SWEEP_NOTIFY_URL failed (exit $code; see above)"
    else
      log "notified $SWEEP_NOTIFY_URL: $1"
    fi
  fi
  if [[ -n $SWEEP_NOTIFY_CMD ]]; then
    code=0
    timeout 120 sh -c "$SWEEP_NOTIFY_CMD" <"$PAYLOAD" >>"$out" 2>&1 || code=$?
    if ((code)); then
      log "warning: SWEEP_NOTIFY_CMD failed (exit $code)"
    else
      log "notified through SWEEP_NOTIFY_CMD: $1"
    fi
  fi
}

# A JSON string of $1 (backslashes, quotes and control characters escaped).
json_string() {
  local text="$1"
  text="${text//\\/\\\\}"
  text="${text//\"/\\\"}"
  text="${text//$'\n'/\\n}"
  text="${text//$'\r'/\\r}"
  text="${text//$'\t'/\\t}"
  printf '"%s"' "$text"
}

# The night's line in history.jsonl, written by bash alone: when the sweep command cannot
# run (`sweep nightly record` then cannot either), the night still shows in `sweep history`.
record_without_sweep() { # exit_code reason
  local status=failed run=null resumed=false wall line
  if (($1 == EX_INTERRUPTED)); then
    status=interrupted
  fi
  if [[ -n $RUN_DIR ]]; then
    run="$(json_string "$(basename "$RUN_DIR")")"
  fi
  if ((RESUMED)); then
    resumed=true
  fi
  wall="$(awk -v a="$NIGHT_STARTED" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}')"
  line="{\"date\": \"$NIGHT_DATE\", \"run\": $run, \"status\": \"$status\", \"exit_code\": $1, "
  line+="\"reason\": $(json_string "${2:-unknown}"), \"trials\": null, \"completed\": null, "
  line+="\"wall_s\": $wall, \"resumed\": $resumed, \"regression_pct\": $SWEEP_REGRESSION_PCT}"
  printf '%s\n' "$line" >>"$SWEEP_LOG_DIR/history.jsonl"
}

# Record the night, notify, rotate, exit. Never returns.
finish() { # exit_code reason
  local code="$1" reason="${2:-}" event verdict
  local -a args=(nightly record "$SWEEP_LOG_DIR" --exit-code "$code"
    --started "$NIGHT_STARTED" --regression-pct "$SWEEP_REGRESSION_PCT"
    --log "$NIGHT_LOG" --payload "$PAYLOAD")
  trap '' TERM INT # the night is over: finish recording it
  if [[ -n $RUN_DIR && -d $RUN_DIR ]]; then
    args+=(--run "$RUN_DIR")
  fi
  if [[ -n $reason ]]; then
    args+=(--reason "$reason")
    log "FAILED (exit $code): $reason"
  fi
  if ((RESUMED)); then
    args+=(--resumed)
  fi
  if ! verdict="$("$SWEEP_BIN" "${args[@]}" 2>>"$NIGHT_LOG")"; then
    if record_without_sweep "$code" "$reason"; then
      log "recorded the night in $SWEEP_LOG_DIR/history.jsonl without the sweep command"
    else
      log "warning: the night could not be recorded in $SWEEP_LOG_DIR/history.jsonl"
    fi
    event="failed"
    if ((code == 0)); then
      event="succeeded"
    fi
    rm -f "$PAYLOAD"
  else
    event="${verdict%%:*}"
  fi
  if [[ $event == regression ]]; then
    log "REGRESSION: ${verdict#regression: }"
  fi
  if [[ $event != succeeded || $SWEEP_NOTIFY_ON_SUCCESS == 1 ]]; then
    notify "$event" "$code" "$reason"
  fi
  rm -f "$PAYLOAD"
  if ((code != EX_INTERRUPTED)) && [[ $code != "$EX_NO_SWEEP" ]]; then
    "$SWEEP_BIN" nightly rotate "$SWEEP_LOG_DIR" --keep-days "$SWEEP_KEEP_DAYS" \
      >>"$NIGHT_LOG" 2>&1 || log "warning: rotation failed (see $NIGHT_LOG)"
  fi
  log "night over: $event (exit $code); log: $NIGHT_LOG"
  exit "$code"
}

take_lock() {
  local lock="$SWEEP_LOG_DIR/.nightly.lock" holder
  if ! exec {LOCK_FD}>>"$lock"; then
    NIGHT_LOG=""
    log "cannot open the lock file $lock"
    return 1
  fi
  if ! flock -n "$LOCK_FD"; then
    holder="$(head -n 1 "$lock" 2>/dev/null || true)"
    log "another night is still running (pid ${holder:-unknown}); nothing to do"
    exit "$EX_OK"
  fi
  printf '%s\n' "$$" >"$lock"
}

# SWEEP_BIN must name a command; say which setting to fix when it does not.
check_sweep_bin() {
  local how="SWEEP_BIN is not set, and there is no sweep on PATH nor $SCRIPT_DIR/.venv/bin/sweep"
  if [[ -n $SWEEP_BIN_GIVEN ]]; then
    how="SWEEP_BIN=$SWEEP_BIN_GIVEN"
  fi
  if ! command -v "$SWEEP_BIN" >/dev/null 2>&1; then
    finish "$EX_NO_SWEEP" "the sweep command does not run: $how: no such command; set \
SWEEP_BIN to the sweep of your install (e.g. /opt/raysweep/.venv/bin/sweep) or put sweep on PATH"
  fi
}

check_disk() {
  local avail_kb need_kb
  avail_kb="$(df -Pk "$SWEEP_LOG_DIR" | awk 'NR == 2 {print $4}')"
  need_kb="$(awk -v gb="$SWEEP_MIN_FREE_GB" 'BEGIN {printf "%d", gb * 1048576}')"
  if [[ -z $avail_kb ]] || ((avail_kb < need_kb)); then
    finish "$EX_DISK" "only $(awk -v kb="${avail_kb:-0}" 'BEGIN {printf "%.1f", kb / 1048576}') GB \
free in $SWEEP_LOG_DIR; SWEEP_MIN_FREE_GB=$SWEEP_MIN_FREE_GB"
  fi
}

# The sweep's last "error: ..." message from line $2 of file $1 on, with its indented lines.
last_error() {
  tail -n "+$2" "$1" | awk '
    /^error: / { msg = substr($0, 8); more = 1; next }
    more && /^  / { msg = msg "; " substr($0, 3); next }
    { more = 0 }
    END { print msg }'
}

run_sweep() {
  local -a cmd extra=()
  local code start again
  if [[ -n $SWEEP_RUN_ARGS ]]; then
    read -r -a extra <<<"$SWEEP_RUN_ARGS"
  fi
  if ((RESUMED)); then
    cmd=("$SWEEP_BIN" resume "$RUN_DIR")
  else
    cmd=("$SWEEP_BIN" run --config "$SWEEP_CONFIG" --storage "$SWEEP_LOG_DIR"
      --name "$(basename "$RUN_DIR")")
    if ((SWEEP_WARM_START)) && [[ -f $SWEEP_BEST_EXPORT ]]; then
      cmd+=(--warm-start "$SWEEP_BEST_EXPORT")
    elif ((SWEEP_WARM_START)); then
      log "warm start: no previous export at $SWEEP_BEST_EXPORT; the searcher starts cold"
    fi
  fi
  if [[ -n $SWEEP_GPUS ]]; then
    cmd+=(--gpus "$SWEEP_GPUS")
  fi
  cmd+=("${extra[@]}")
  log "\$ ${cmd[*]}"
  start="$(($(wc -l <"$NIGHT_LOG") + 1))"
  SWEEP_STARTED="$(date +%s.%N)"
  "${cmd[@]}" </dev/null >>"$NIGHT_LOG" 2>&1 &
  CHILD=$!
  while :; do
    code=0
    wait "$CHILD" || code=$?
    if ((code > 128)) && kill -0 "$CHILD" 2>/dev/null; then
      continue # a signal interrupted wait; it was passed on to the sweep
    fi
    if ((code > 128)) && [[ -n $GOT_SIGNAL ]]; then
      # wait ended on our own trap as the sweep exited: ask again for its real status
      again=0
      wait "$CHILD" 2>/dev/null || again=$?
      if ((again != 127)); then
        code=$again
      fi
    fi
    break
  done
  CHILD=""
  log "sweep exited $code after $(awk -v a="$SWEEP_STARTED" -v b="$(date +%s.%N)" \
    'BEGIN {printf "%.3f", b - a}') s"
  SWEEP_CODE="$code"
  SWEEP_ERROR="$(last_error "$NIGHT_LOG" "$start")"
}

main() {
  case "${1:-}" in
    -h | --help)
      usage
      exit "$EX_OK"
      ;;
    "") ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
  load_env_file
  settings
  NIGHT_STARTED="$(date +%s.%N)"
  NIGHT_DATE="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  local stamp pending
  stamp="$(date -u +%Y%m%d_%H%M%S)"
  trap 'on_signal SIGTERM' TERM
  trap 'on_signal SIGINT' INT

  if ! mkdir -p "$SWEEP_LOG_DIR" 2>/dev/null || ! take_lock; then
    log "FAILED (exit $EX_LOCK): cannot use $SWEEP_LOG_DIR for the lock and logs"
    PAYLOAD="$(mktemp)"
    notify failed "$EX_LOCK" "lock trouble: cannot use $SWEEP_LOG_DIR for the lock and logs"
    rm -f "$PAYLOAD"
    exit "$EX_LOCK"
  fi
  NIGHT_LOG="$SWEEP_LOG_DIR/nightly_$stamp.log"
  PAYLOAD="$SWEEP_LOG_DIR/.notification-$stamp.json"
  log "night starts (pid $$, config $SWEEP_CONFIG, log $NIGHT_LOG)"

  check_sweep_bin
  if ! pending="$("$SWEEP_BIN" nightly pending "$SWEEP_LOG_DIR" 2>>"$NIGHT_LOG")"; then
    finish "$EX_NO_SWEEP" "the sweep command does not run: SWEEP_BIN=$SWEEP_BIN failed \
(see $NIGHT_LOG); set SWEEP_BIN to the sweep of a working install"
  fi
  check_disk
  if [[ -n $SWEEP_GPUS ]]; then
    local gpu_error
    if ! gpu_error="$("$SWEEP_BIN" gpus --require "$SWEEP_GPUS" 2>&1 >/dev/null)"; then
      finish "$EX_GPUS" "SWEEP_GPUS=$SWEEP_GPUS: ${gpu_error#error: }"
    fi
  fi
  if [[ -n $pending ]]; then
    RUN_DIR="$pending"
    RESUMED=1
    log "resuming the unfinished run $RUN_DIR"
  else
    RUN_DIR="$SWEEP_LOG_DIR/nightly_$stamp"
    log "starting $RUN_DIR"
  fi
  if [[ -n $GOT_SIGNAL ]]; then
    finish "$EX_INTERRUPTED" "interrupted by $GOT_SIGNAL before the sweep started"
  fi

  run_sweep
  case "$SWEEP_CODE" in
    0) ;;
    1) finish "$EX_SWEEP_FAILED" "the sweep failed: ${SWEEP_ERROR:-no trial succeeded}" ;;
    2) finish "$EX_INVALID" "the sweep refused its input: ${SWEEP_ERROR:-see the log}" ;;
    130) finish "$EX_INTERRUPTED" "interrupted by ${GOT_SIGNAL:-a signal}; the next night \
resumes $RUN_DIR" ;;
    *) finish "$EX_ABNORMAL" "the sweep ended abnormally (exit $SWEEP_CODE)${SWEEP_ERROR:+: \
$SWEEP_ERROR}" ;;
  esac

  local export_error
  if ! export_error="$("$SWEEP_BIN" best "$RUN_DIR" --top "$EXPORT_TOP" \
    --export "$SWEEP_BEST_EXPORT" 2>&1 >/dev/null)"; then
    finish "$EX_EXPORT" "the export to $SWEEP_BEST_EXPORT failed: ${export_error#error: }"
  fi
  log "exported the top $EXPORT_TOP configurations to $SWEEP_BEST_EXPORT"
  finish "$EX_OK"
}

main "$@"
