#!/usr/bin/env bash
# Time `make test` of two commits on this machine, one after the other (issue 16: the suite
# at most half the wall time of the commit before the redesign).
#
#   scripts/time_suites.sh OLD NEW [WORKDIR]
#
# Each commit gets a clean clone of this repository in WORKDIR (default: a new temporary
# folder), beside a link `shared` to this checkout's `../shared`, as the team's worktrees
# sit. The set-up of each clone (`make`'s venv with the dev extra, pip's downloads) is done
# first and not timed; then `make test` of OLD and of NEW run one after the other, each
# timed as wall time. Prints both, their ratio NEW/OLD, the exit codes and the load
# average before each run (a loaded machine makes the numbers worth little: run it idle).
# The logs stay in WORKDIR. Extra arguments for pytest: PYTEST_ADDOPTS in the environment.
# Before each run the user's pytest temporary folders are emptied (see pytest_tmp).
# SETUP_ONLY=1: make the clones and their venvs and stop (on a busy machine, say), so that a
# later run of the same command with the same WORKDIR times them at once.
set -u

if [ $# -lt 2 ]; then
    echo "usage: scripts/time_suites.sh OLD NEW [WORKDIR]" >&2
    exit 2
fi
old=$1 new=$2
repo=$(git rev-parse --show-toplevel) || exit 2
shared=$(cd "$repo/.." && readlink -f shared) || true
if [ -z "$shared" ] || [ ! -d "$shared" ]; then
    echo "time_suites.sh: no ../shared beside $repo (the team's shared folder): the clones" \
         "need it beside them" >&2
    exit 2
fi
for c in "$old" "$new"; do
    git -C "$repo" rev-parse --verify --quiet "$c^{commit}" >/dev/null || {
        echo "time_suites.sh: $c is not a commit of $repo" >&2; exit 2; }
done
work=${3:-$(mktemp -d -t time-suites.XXXXXX)}
mkdir -p "$work" && ln -sfn "$shared" "$work/shared"

clone() {  # clone NAME COMMIT: a clean clone at COMMIT, its venv made (not timed)
    local dir="$work/$1"
    # a clone set up by SETUP_ONLY=1 and not run since is used as it is
    if [ -f "$work/$1.ready" ] && [ "$(git -C "$dir" rev-parse HEAD 2>/dev/null)" = \
            "$(git -C "$repo" rev-parse "$2^{commit}")" ]; then
        echo "set up before: $1 ($(git -C "$dir" log --oneline -1))"
        return
    fi
    rm -rf "$dir" "$work/$1.ready"
    git clone --quiet --no-hardlinks "$repo" "$dir" &&
        git -C "$dir" checkout --quiet --detach "$2" &&
        echo "setting up $1 ($(git -C "$dir" log --oneline -1))" &&
        make -C "$dir" .venv/.installed >"$work/$1.setup.log" 2>&1 &&
        touch "$work/$1.ready" || {
            echo "time_suites.sh: the set-up of $1 failed: see $work/$1.setup.log" >&2
            exit 2; }
}

now() { python3 -c 'import time; print(time.time())'; }

# pytest's temporary folders of this user: each session deletes those of earlier sessions
# but the last three, and a whole suite's (its fresh venv: about 14,000 files) took 16 s of
# I/O to delete. Emptied before each run, so that both start as on a fresh CI machine.
pytest_tmp=$(python3 -c 'import getpass, tempfile; print(tempfile.gettempdir() + "/pytest-of-" + getpass.getuser())')

run() {  # run NAME: `make test` in its clone; sets SECONDS_<NAME> and RC_<NAME>
    local dir="$work/$1" t0 t1 rc
    rm -rf "$pytest_tmp" "$work/$1.ready"  # run once: no longer a clean clone after
    echo "load average before $1: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
    t0=$(now)
    make -C "$dir" test >"$work/$1.test.log" 2>&1
    rc=$?
    t1=$(now)
    printf -v "SECONDS_$1" '%s' "$(python3 -c "print(round($t1 - $t0, 1))")"
    printf -v "RC_$1" '%s' "$rc"
    echo "$1: make test exited $rc after $(eval echo "\$SECONDS_$1") s" \
         "($(tail -n 1 "$work/$1.test.log"))"
}

clone old "$old"
clone new "$new"
if [ -n "${SETUP_ONLY:-}" ]; then
    echo "set up in $work; the same command without SETUP_ONLY times them"
    exit 0
fi
run old
run new
ratio=$(python3 -c "print(round($SECONDS_new / $SECONDS_old, 3))")
echo
printf '%-4s %-12s %10s s  exit %s\n' old "$(git -C "$repo" rev-parse --short "$old")" \
    "$SECONDS_old" "$RC_old"
printf '%-4s %-12s %10s s  exit %s\n' new "$(git -C "$repo" rev-parse --short "$new")" \
    "$SECONDS_new" "$RC_new"
echo "ratio new/old: $ratio (the goal: at most 0.5)"
echo "logs: $work"
[ "$RC_old" = 0 ] && [ "$RC_new" = 0 ]
