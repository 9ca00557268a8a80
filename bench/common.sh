# Helpers sourced by the bench scripts (not run on its own).

# bench_dir NAME: sets $dir to the working directory: $DB where set (kept, so that tables built
# once serve later runs), else a fresh temporary directory removed when the script exits.
bench_dir() {
  if [ -n "${DB:-}" ]; then
    dir="$DB"
  else
    dir="$(mktemp -d "${TMPDIR:-/tmp}/retra-$1-XXXXXX")"
    trap 'rm -rf "$dir"' EXIT
  fi
  mkdir -p "$dir"
}

# The machine the numbers come from.
machine() {
  echo "$(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
}

# timed CMD...: runs CMD, prints nothing, leaves wall seconds and peak RSS in $wall, $rss and the
# command's stdout in $dir/last.json (bench_dir first).
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$dir/time.txt" "$@" >"$dir/last.json"
  t1=$(date +%s.%N)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  rss=$(awk '{ printf "%.1f MiB", $1 / 1024 }' "$dir/time.txt")
}

# reference_workload: times the fixed workload every speed figure is reported beside (Awari
# 0..13 stones, one thread), since this machine class varies in speed from day to day; leaves
# the seconds in $wall. Needs $retra and $dir.
reference_workload() {
  timed "$retra" build awari --stones 0-13 --threads 1 --db "$dir/reference" --no-progress --json
  rm -rf "$dir/reference"
}
