#!/usr/bin/env bash
# t32_env_hold: requests about a session's env/ made between the end of a
# run and the shell's report of its variables are held until they are
# known, then answered with them; a held lookup (cat env/X) and a held
# read (of an env/X opened before) are interrupted at once by SIGINT.
# The window is made long on purpose: the configured shell is a stand-in
# that speaks the frame protocol (sessions/ARCHITECTURE.md) and, after a
# command holding the word HOLD, waits before it reports the variables.
# The real shell's report cannot be delayed by a command any more.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

HOLD=4 # seconds the stand-in shell waits before it reports its variables

# the stand-in: started as SHELL --noprofile --norc -c BOOT bash DRIVER DIR;
# reads "ID GEN FLAG SPIN KEY OPTS" lines (OPTS is - for a run without
# options of its own), applies the prelude, sources the command into the
# run's fifos, then writes the R and E frames (with the
# run's KEY) on 201
FAKE=$SFS_TMP/fakesh
cat >"$FAKE" <<'SH'
#!/bin/bash
dir=${!#}
pre() {
	local op n v
	while IFS= read -r -d '' op; do
		IFS= read -r -d '' n
		case $op in
		S) IFS= read -r -d '' v; export "$n=$v" ;;
		U) unset -v "$n" ;;
		C) cd -- "$n" ;;
		esac
	done <"$1"
}
while IFS=" " read -r id gen flag spin key opts; do
	[[ $flag == p ]] && pre "$dir/r$id.pre"
	. "$dir/r$id.cmd" </dev/null >"$dir/f$gen.o" 2>"$dir/f$gen.e"
	printf 'R%s %s\0%s\0\0' $? "$key" "$PWD" >&201
	grep -q HOLD "$dir/r$id.cmd" && sleep HOLD_S
	{ printf 'E0 %s\0%s\0' "$key" "$PWD"; export -p; printf '\0'; } >&201
done
SH
sed -i "s/HOLD_S/$HOLD/" "$FAKE"
chmod +x "$FAKE"
printf 'shell = "%s";\n' "$FAKE" >"$SFS_TMP/fake.conf"
sfs_start_mount "a stand-in shell" -c "$SFS_TMP/fake.conf" || exit 1

# intread FILE: opens FILE, prints "open", waits for SIGUSR1, then reads
# with a SIGINT handler (no SA_RESTART) and prints "eintr" or "read DATA"
INTREAD=$SFS_TMP/intread
cat >"$SFS_TMP/intread.c" <<'C'
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void on_int(int sig) { (void)sig; }
int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t set;
	char buf[256];
	ssize_t n;
	int fd, sig;

	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) < 0)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_int;
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("open\n");
	fflush(stdout);
	sigwait(&set, &sig);
	printf("reading\n");
	fflush(stdout);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0 && errno == EINTR)
		printf("eintr\n");
	else if (n < 0)
		printf("error %s\n", strerror(errno));
	else
		printf("read %.*s", (int)n, buf);
	return 0;
}
C
if ${CC:-cc} -O2 -o "$INTREAD" "$SFS_TMP/intread.c" 2>"$SFS_TMP/cc.err"; then
	pass "compile the read helper"
else
	fail "compile the read helper" "$(head -c 300 "$SFS_TMP/cc.err")"
	INTREAD=
fi

S=$MNT/sessions/hold
check "mkdir sessions/hold" sfs_mkdir "$S"
check "set env/FOO" sfs_write "$S/env/FOO" $'bar\n' 10
assert_run_ok "a warm-up run" "$S" 'true' 10
assert_file_eq "$S/env/FOO" $'bar\n' "env/FOO reads bar"

# wait_line FILE TEXT: until FILE has a line TEXT (3 s)
wait_line() { sfs_until 3 grep -qx "$2" "$1"; }

# the reader of the held read opens env/FOO while nothing is held
if [ -n "$INTREAD" ]; then
	"$INTREAD" "$S/env/FOO" >"$SFS_TMP/intread.out" 2>&1 &
	rp=$!
	SFS_BG_PIDS+=("$rp")
	wait_line "$SFS_TMP/intread.out" open ||
		fail "the read helper opens env/FOO" "it said: $(cat "$SFS_TMP/intread.out")"
fi

# the run ends at once; its variables come HOLD seconds later
t0=$(now_ms)
assert_run_ok "a run that delays the report of its variables" "$S" \
	': HOLD' 10

# a reader that waits: answered with the variables once they are known
timeout -k 2 20 cat "$S/env/FOO" >"$SFS_TMP/waiter.out" 2>&1 &
waiter=$!
SFS_BG_PIDS+=("$waiter")

# a held lookup: cat env/FOO, then SIGINT (the default action: it dies)
timeout -k 2 20 cat "$S/env/FOO" >"$SFS_TMP/cat.out" 2>&1 &
tp=$!
SFS_BG_PIDS+=("$tp")
catpid=
for ((i = 0; i < 20; i++)); do
	catpid=$(sfs_descendants "$tp" | head -n 1)
	[ -n "$catpid" ] && break
	sleep 0.05
done
sleep 0.3
if [ -n "$catpid" ] && sfs_alive "$catpid"; then
	pass "cat env/FOO is held while the variables are on their way"
	t1=$(now_ms)
	kill -INT "$catpid"
	if sfs_wait_gone "$tp" 2; then
		t2=$(now_ms)
		assert_lt $((t2 - t1)) 1000 "SIGINT ends the held cat env/FOO at once" " ms"
	else
		fail "SIGINT ends the held cat env/FOO at once" "still blocked 2 s later"
	fi
else
	fail "cat env/FOO is held while the variables are on their way" \
		"it returned after $(($(now_ms) - t0)) ms: $(cat "$SFS_TMP/cat.out")"
fi

# a held read of a file opened before: EINTR
if [ -n "$INTREAD" ] && sfs_alive "$rp"; then
	kill -USR1 "$rp"
	wait_line "$SFS_TMP/intread.out" reading
	sleep 0.3
	if sfs_alive "$rp"; then
		pass "a read of an open env/FOO is held too"
		kill -INT "$rp"
		if sfs_wait_gone "$rp" 1; then
			assert_file_match "$SFS_TMP/intread.out" '^eintr$' "SIGINT interrupts the held read with EINTR"
		else
			fail "SIGINT interrupts the held read with EINTR" "still blocked 1 s later"
		fi
	else
		fail "a read of an open env/FOO is held too" "it said: $(tr '\n' ' ' <"$SFS_TMP/intread.out")"
	fi
fi

# the waiter gets the value once the shell reports
if sfs_wait_gone "$waiter" $((HOLD + 5)); then
	t3=$(now_ms)
	assert_file_eq "$SFS_TMP/waiter.out" $'bar\n' "the held reader gets the value once it is known"
	assert_true "the held reader waited for the report" "it returned after $((t3 - t0)) ms" \
		test $((t3 - t0)) -ge 1000
else
	fail "the held reader gets the value once it is known" "still blocked"
fi
assert_file_eq "$S/env/FOO" $'bar\n' "env/FOO still reads bar"
assert_run_ok "the next run" "$S" 'echo "$FOO"' 10
assert_file_eq "$S/stdout" $'bar\n' "the next run sees FOO"

sfs_done
