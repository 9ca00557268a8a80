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
