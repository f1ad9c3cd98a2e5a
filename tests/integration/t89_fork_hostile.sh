#!/usr/bin/env bash
# t89_fork_hostile: `fork NAME` (issue 24) against a hostile owner. A
# session's own shell answers the daemon's fork request with the pid of
# the shell it forked, and its owner may load code into it (enable -f):
# here a builtin that takes the request first and names root's session
# shell (moved, "PID m", or not). The daemon takes only a new child of
# its own that is the owner's and that it does not know yet: the fork
# fails with ECHILD and a line in error, root's shell stays where it was,
# alive; the source and a plain fork still work. Then 200 forks and
# rmdirs of another user's session while its source runs commands: the
# daemon answers health within 1 s throughout, keeps its descriptors,
# leaves no process and no session directory; a forked shell holds its
# protocol pipes and nothing else of the daemon's or the source's.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_need gcc python3 setpriv pkg-config
BASH_CFLAGS=$(pkg-config --cflags bash 2>/dev/null) || {
	pass "skip: no bash headers (bash.pc)"
	SFS_DONE=1
	exit 0
}

sfs_start_mount "allow_other" -o allow_other || exit 1
chmod 755 "$SFS_TMP"
S=$MNT/sessions
NOB=(setpriv --reuid=65534 --regid=65534 --clear-groups -- env -C /)
FORK=(bash -c 'printf "fork %s\n" "$2" >"$1"' _)
fork_as() { timeout -k 2 10 "${NOB[@]}" "${FORK[@]}" "$S/$1/ctl" "$2"; }
run_as() { timeout -k 2 10 "${NOB[@]}" bash -c 'printf "%s\n" "$2" >"$1/cmd" && cat "$1/stdout" "$1/stderr"' _ "$S/$1" "$2"; }

# hijack PATH ANSWER MARK: a thread of the shell connects to the daemon's
# fork socket as soon as it listens (racing the driver's own connect),
# takes the request, answers ANSWER and then makes the file MARK (not
# when the daemon took the driver's connection and closed this one)
cat >"$SFS_TMP/hijack.c" <<'EOF'
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "builtins.h"
#include "shell.h"

static struct sockaddr_un a = { .sun_family = AF_UNIX };
static char answer[64], mark[4096];

static void *grab(void *arg)
{
	(void)arg;
	for (long i = 0; i < 2000000; i++) {
		int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		char buf[4096];

		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0) {
			/* a request: the daemon took this connection */
			bool took = recv(s, buf, sizeof(buf), 0) > 0;

			send(s, answer, strlen(answer), MSG_NOSIGNAL);
			close(s);
			if (took)
				close(open(mark, O_WRONLY | O_CREAT | O_CLOEXEC,
					   0600));
			return NULL;
		}
		close(s);
		sched_yield();
	}
	return NULL;
}

static int hijack_builtin(WORD_LIST *l)
{
	pthread_t t;

	if (!l || !l->next || !l->next->next)
		return 2;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", l->word->word);
	snprintf(answer, sizeof(answer), "%s", l->next->word->word);
	snprintf(mark, sizeof(mark), "%s", l->next->next->word->word);
	return pthread_create(&t, NULL, grab, NULL) ? 1 : 0;
}

static char *hijack_doc[] = { "hijack PATH ANSWER MARK", NULL };
struct builtin hijack_struct = { "hijack", hijack_builtin, BUILTIN_ENABLED,
				 hijack_doc, "hijack PATH ANSWER MARK", 0 };
EOF
# shellcheck disable=SC2086
check "the hostile builtin compiles" gcc -shared $BASH_CFLAGS -O1 -o "$SFS_TMP/hijack.so" "$SFS_TMP/hijack.c" -lpthread
chmod 755 "$SFS_TMP/hijack.so"

# ---------------------------------------------------------------- a forged answer

check "root: mkdir sessions/victim" sfs_mkdir "$S/victim"
V=$(sfs_run_out "$S/victim" 'echo $$')
VCG=$(tail -n 1 "/proc/$V/cgroup" 2>/dev/null)
note "root's victim shell $V in $VCG"
check "nobody: mkdir sessions/src" timeout 10 "${NOB[@]}" mkdir "$S/src"
# the fork socket is in the session's directory, that of its fifos
mkdir -m 1777 "$SFS_TMP/mark"
ARM='enable -f '"$SFS_TMP"'/hijack.so hijack && d=$(readlink /proc/self/fd/2) && hijack "${d%/*}/fork" "ANSWER" '"$SFS_TMP"'/mark/m && echo armed'
# attack FORK ANSWER: forks src as FORK with the builtin armed, again
# while the driver's own connect wins (a plain fork then, removed), up
# to 20 times; ECHILD once the builtin's answer was taken
attack() {
	local t
	for ((t = 0; t < 20; t++)); do
		rm -f "$SFS_TMP/mark/m"
		[ "$(run_as src "${ARM/ANSWER/$2}")" = armed ] || return 2
		"${NOB[@]}" "${FORK[@]}" "$S/src/ctl" "$1" 2>"$SFS_TMP/attack.err"
		rc=$?
		[ -e "$SFS_TMP/mark/m" ] && break
		[ -d "$S/$1" ] && timeout -k 2 20 "${NOB[@]}" rmdir "$S/$1"
		sleep 0.2 # the builtin's thread of a lost race gives up
	done
	note "attack $1 \"$2\": $((t + 1)) tries, status $rc: $(cat "$SFS_TMP/attack.err")"
	[ -e "$SFS_TMP/mark/m" ] && [ "$rc" -ne 0 ] && grep -q "No child processes" "$SFS_TMP/attack.err"
}
i=0
for answer in "$V m" "$V"; do
	i=$((i + 1))
	assert_true "a fork answered \"$answer\" (root's shell): ECHILD" "see the note" attack "evil$i" "$answer"
	assert_file_match "$S/src/error" "fork evil$i: No child processes" "a line in src's error"
	assert_true "no session evil$i" "it exists" test ! -e "$S/evil$i"
	assert_eq "$VCG" "$(tail -n 1 "/proc/$V/cgroup" 2>/dev/null)" "root's shell is still in its own cgroup"
done
assert_eq "$V" "$(sfs_run_out "$S/victim" 'echo $$')" "root's session keeps its shell"
assert_eq "ok" "$(run_as src 'echo ok')" "src still runs"
check "a plain fork of src works after" fork_as src good
GP=$(run_as good 'echo $$')
assert_true "good's shell is a new one" "good $GP, src, victim $V" test -n "$GP" -a "$GP" != "$V"
check "nobody: rmdir sessions/good" timeout -k 2 20 "${NOB[@]}" rmdir "$S/good"

# ---------------------------------------------------------------- many forks

check "src: set some state" run_as src 'f() { echo "fn $1"; }; export EX=1; sleep 300 & :'
FD0=$(ls "/proc/$SFS_PID/fd" | wc -l)
KIDS0=$(pgrep -c -P "$SFS_PID")
# the runtime directory: the one whose live file the daemon holds
RT=$(for f in "/proc/$SFS_PID/fd/"*; do l=$(readlink "$f"); [[ $l == */live ]] && echo "${l%/live}"; done | head -n 1)
DIRS0=$(ls "$RT" | wc -l)
timeout -k 2 120 "${NOB[@]}" bash -c 'for i in $(seq 100); do printf "echo %s\n" "$i" >"$1/cmd" || echo "run $i failed"; done' _ "$S/src" >"$SFS_TMP/runs.out" 2>&1 &
RUNS=$!
timeout -k 2 300 "${NOB[@]}" bash -c 'for i in $(seq 200); do
	printf "fork m%s\n" "$i" >"$1/src/ctl" || { echo "fork $i failed"; continue; }
	[ "$(printf "f %s\n" "$i" >"$1/m$i/cmd" && cat "$1/m$i/stdout")" = "fn $i" ] || echo "m$i: no state"
	rmdir "$1/m$i" || echo "rmdir $i failed"
done' _ "$S" >"$SFS_TMP/forks.out" 2>&1 &
FORKS=$!
slow=0 n=0
while sfs_alive "$FORKS"; do
	t0=$(date +%s%N)
	timeout 5 cat "$MNT/health" >/dev/null || slow=$((slow + 1000))
	t=$((($(date +%s%N) - t0) / 1000000))
	[ "$t" -ge 1000 ] && slow=$((slow + 1))
	n=$((n + 1))
	sleep 0.05
done
wait "$FORKS"
wait "$RUNS"
assert_eq "" "$(cat "$SFS_TMP/forks.out")" "200 forks, runs and rmdirs of nobody's session: no failure"
assert_eq "" "$(cat "$SFS_TMP/runs.out")" "100 runs of the source meanwhile: no failure"
assert_eq 0 "$slow" "health answered within 1 s each of $n reads meanwhile"
fds_back() { [ "$(ls "/proc/$SFS_PID/fd" | wc -l)" -le "$FD0" ]; }
assert_true "the daemon's descriptors as before" "$FD0 before, $(ls "/proc/$SFS_PID/fd" | wc -l) after" \
	sfs_until 20 fds_back
assert_eq "$KIDS0" "$(pgrep -c -P "$SFS_PID")" "no child of the daemon's left"
assert_eq "$DIRS0" "$(ls "$RT" | wc -l)" "no session directory left in the runtime directory ($RT)"
check "a fork m0" fork_as src m0
MP=$(run_as m0 'echo $BASHPID')
FDS=$(ls "/proc/$MP/fd" | sort -n | tr '\n' ' ')
assert_eq "0 1 2 201 " "$FDS" "the forked shell holds its pipes on 0 and 201, /dev/null on 1 and 2, nothing else"
assert_true "its pipes are not src's" "src's shell has them too" \
	bash -c 'for f in 0 201; do l=$(readlink /proc/$1/fd/$f); [ -n "$l" ] && ! ls -l /proc/$2/fd /proc/$2/task/*/fd 2>/dev/null | grep -qF "$l" || exit 1; done' _ "$MP" "$(run_as src 'echo $$')"
assert_eq "$(tail -n 1 /proc/"$(run_as src 'echo $$')"/cgroup | sed 's,/[^/]*$,,')" \
	"$(tail -n 1 "/proc/$MP/cgroup" | sed 's,/[^/]*$,,')" "m0's shell is in a session cgroup beside src's"
assert_true "m0's shell is not in src's cgroup" "it is" \
	test "$(tail -n 1 "/proc/$MP/cgroup")" != "$(tail -n 1 /proc/"$(run_as src 'echo $$')"/cgroup)"
check "nobody: rmdir m0 and src" timeout -k 2 20 "${NOB[@]}" rmdir "$S/m0" "$S/src"
check "root: rmdir victim" timeout -k 2 20 rmdir "$S/victim"
sfs_done
