#!/usr/bin/env bash
# t50_users: issue 11, ownership with -o allow_other. Two real users (made
# here with useradd, removed with userdel -r at exit whatever happens) and
# root: every operation of one user on another's session and on root's
# (ls, cat of each file, write of cmd/env/ctl/cwd/timeout, rm of env/X,
# mkdir under runs/ and procs/, rmdir) is refused and changes nothing; a
# session's directory and files show its owner, the directory mode 0700;
# root env/, ctl and the default session are the mounter's; each user's
# runs and processes run as that user (uid, groups from the group db,
# HOME USER LOGNAME SHELL from passwd, no capabilities, no way back to
# root) and hold no descriptor of the daemon; a caller in a rootless user
# namespace is its host uid; the mount adds default_permissions itself;
# max_sessions_per_user; without allow_other other users get EACCES on
# the mount as before. As u1 and as nobody (uid 65534), t03's state checks
# and more: what one run leaves (cwd, variables exported or not, a
# function, an alias, set -o and shopt options, a trap) is there in the
# next runs, in the same shell (issue 26 item 6: the driver could not open
# its root-owned pipes again, and every run got a new shell). The same
# from a copy of the build in a 0700 directory that the users cannot
# enter (issue 26 item 15: their shells could not load sfsdrv.so from
# it); no command or shell holds the daemon's memfd of the driver.
# shellcheck disable=SC2016
SFS_T=${SFS_T:-10} # one operation; many run, so a hang must not cost 30 s each
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# The errnos the implementation is to give (adjust here, not below).
DENY_ERRNO=EACCES  # any operation on another user's session
RMDIR_ERRNO=EACCES # rmdir of it (a sticky sessions/ would make the kernel say EPERM)
LIMIT_ERRNO=EDQUOT # mkdir or clone past max_sessions_per_user
LIMIT=2            # max_sessions_per_user in the limit case

sfs_need useradd userdel groupadd groupdel setpriv unshare perl

U1=sfsu1_$$
U2=sfsu2_$$
GRP=sfsg_$$ # a supplementary group of U1 (initgroups must give it)
USERS_MADE=()
GROUP_MADE=

# ---------------------------------------------------------------- users

# uid_procs UID: pids of the processes whose real uid is UID
uid_procs() {
	local f uid
	for f in /proc/[0-9]*/status; do
		uid=$(awk '/^Uid:/ { print $2; exit }' "$f" 2>/dev/null)
		[ "$uid" = "$1" ] && { f=${f#/proc/}; printf '%s\n' "${f%/status}"; }
	done
	return 0
}

# drop_user NAME: kill its processes (by pid), userdel -r
drop_user() {
	local uid p
	uid=$(id -u "$1" 2>/dev/null) || return 0
	for p in $(uid_procs "$uid"); do kill -KILL "$p" 2>/dev/null; done
	sleep 0.1
	userdel -r "$1" >/dev/null 2>&1 || userdel -r -f "$1" >/dev/null 2>&1
	! id -u "$1" >/dev/null 2>&1
}

# users of t50 runs that were killed before their EXIT trap (their pid,
# in the name, no longer runs this file)
sweep_stale_users() {
	local name pid
	for name in $(getent passwd | cut -d: -f1 | grep -E '^sfsu[12]_[0-9]+$'); do
		pid=${name#sfsu?_}
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q t50_users && continue
		drop_user "$name" && note "removed the stale user $name"
	done
	for name in $(getent group | cut -d: -f1 | grep -E '^sfsg_[0-9]+$'); do
		pid=${name#sfsg_}
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q t50_users && continue
		groupdel "$name" 2>/dev/null
	done
}

# the EXIT trap: the daemon first (its shells run as the users), then the
# users and the group, then lib.sh's cleanup
# shellcheck disable=SC2317
t50_cleanup() {
	local rc=$? p u
	exec 1>&"$SFS_OUT" 2>&"$SFS_ERR"
	for p in "${SFS_BG_PIDS[@]}"; do sfs_alive "$p" && sfs_kill_tree "$p"; done
	[ -n "$SFS_PID" ] && sfs_umount
	[ -n "$UMNT" ] && { fusermount3 -u -z "$UMNT" 2>/dev/null || umount -l "$UMNT" 2>/dev/null; }
	sfs_user_fuse_undo
	[ -n "${UID_OF[u1]}" ] && rmdir "/dev/shm/sessionfs-${UID_OF[u1]}" 2>/dev/null
	for u in "${USERS_MADE[@]}"; do
		drop_user "$u" || fail "cleanup: userdel -r $u" "the user still exists"
	done
	[ -n "$GROUP_MADE" ] && { groupdel "$GROUP_MADE" 2>/dev/null || fail "cleanup: groupdel $GROUP_MADE" "failed"; }
	(exit "$rc")
	sfs_cleanup
}
trap t50_cleanup EXIT

# make_user NAME USERADD-ARG...: a user with a home and /bin/bash
make_user() {
	local name=$1
	shift
	if useradd -m -d "/home/$name" -s /bin/bash -U "$@" "$name" 2>"$SFS_TMP/useradd.err"; then
		USERS_MADE+=("$name")
		pass "useradd $name"
	else
		fail "useradd $name" "$(head -c 200 "$SFS_TMP/useradd.err")"
		exit 1
	fi
}

sweep_stale_users
groupadd "$GRP" 2>"$SFS_TMP/groupadd.err" || {
	fail "groupadd $GRP" "$(head -c 200 "$SFS_TMP/groupadd.err")"
	exit 1
}
GROUP_MADE=$GRP
make_user "$U1" -G "$GRP"
make_user "$U2"
declare -A UID_OF GID_OF HOME_OF NAME_OF
for who in u1 u2; do
	name=$U1
	[ "$who" = u2 ] && name=$U2
	NAME_OF[$who]=$name
	UID_OF[$who]=$(id -u "$name")
	GID_OF[$who]=$(id -g "$name")
	HOME_OF[$who]=$(getent passwd "$name" | cut -d: -f6)
done
NAME_OF[root]=root
UID_OF[root]=0
GID_OF[root]=0
# a user of the system's (no home: /nonexistent)
NAME_OF[nobody]=$(getent passwd 65534 | cut -d: -f1)
UID_OF[nobody]=65534
GID_OF[nobody]=$(getent passwd 65534 | cut -d: -f4)

# the users reach SFS_TMP/pub (markers, scratch); SFS_TMP stays unlistable
chmod 711 "$SFS_TMP"
PUB=$SFS_TMP/pub
mkdir -m 1777 "$PUB"

# asu WHO: AS=(the command prefix that runs a command as WHO: u1, u2 or
# root), in / (the test's cwd may be closed to the users), with the test's
# own environment (HOME=/root...: a run must take its values from passwd)
asu() {
	if [ "$1" = root ]; then
		AS=(env -C /)
	else
		AS=(setpriv --reuid="${UID_OF[$1]}" --regid="${GID_OF[$1]}" --init-groups -- env -C /)
	fi
}

# uwrite WHO FILE TEXT: write TEXT (as it is) to FILE as WHO
uwrite() {
	asu "$1"
	timeout -k 2 "$SFS_T" "${AS[@]}" bash -c 'printf "%s" "$2" >"$1"' _ "$2" "$3" 2>"$SFS_TMP/uwrite.err"
}

# uread WHO FILE: FILE's content, read as WHO (stderr in uread.err)
uread() {
	asu "$1"
	timeout -k 2 "${SFS_READ_T:-10}" "${AS[@]}" cat -- "$2" 2>"$SFS_TMP/uread.err"
}

# urun WHO DIR CMD: run CMD in the session DIR as WHO; prints its stdout
urun() {
	uwrite "$1" "$2/cmd" "$3"$'\n' || {
		echo "(the write of cmd failed: $(head -c 200 "$SFS_TMP/uwrite.err"))"
		return 1
	}
	uread "$1" "$2/stdout"
}

# owner_of PATH: "uid:gid mode" of PATH as root sees it (the kernel's
# view; the daemon's answer does not depend on who asks)
owner_of() { timeout 5 stat -c '%u:%g %a' -- "$1" 2>&1; }

# deny WHO MSG CMD...: CMD run as WHO fails with DENY_ERRNO
deny() {
	local who=$1 msg=$2
	shift 2
	asu "$who"
	assert_errno "$DENY_ERRNO" "$msg" "${AS[@]}" "$@"
}

# deny_write WHO MSG FILE TEXT: writing TEXT to FILE as WHO is refused
deny_write() {
	deny "$1" "$2" bash -c 'printf "%s" "$2" >"$1"' _ "$3" "$4"
}

# errno_text ERRNO: what tools print for it (lib.sh's, plus EDQUOT)
errno_text() {
	case $1 in
	EDQUOT) echo 'Disk quota exceeded' ;;
	*) sfs_errtext "$1" ;;
	esac
}

# ---------------------------------------------------------------- the matrix

# new_session WHO DIR: mkdir DIR as WHO, set env/X, run a command that
# leaves output on both streams
new_session() {
	local who=$1 dir=$2 rel
	rel=$(sfs_rel "$dir")
	asu "$who"
	check "$who: mkdir $rel" "${AS[@]}" mkdir -- "$dir"
	check "$who: echo secret-$who > $rel/env/X" uwrite "$who" "$dir/env/X" "secret-$who"$'\n'
	assert_eq "out-$who" "$(urun "$who" "$dir" "echo out-$who; echo err-$who >&2")" \
		"$who: a run in its own session $rel prints out-$who"
}

# snapshot WHO DIR: what the attacks must not change, as seen by the owner
snapshot() {
	local f
	for f in env/X timeout cwd; do printf '%s=%s\n' "$f" "$(uread "$1" "$2/$f")"; done
	asu "$1"
	printf 'runs=%s\n' "$(timeout 5 "${AS[@]}" ls "$2/runs" 2>&1 | tr '\n' ' ')"
	printf 'procs=%s\n' "$(timeout 5 "${AS[@]}" ls "$2/procs" 2>&1 | tr '\n' ' ')"
}

# attack WHO OWNER DIR: every operation of WHO on OWNER's session DIR is
# refused, and afterwards the session is as it was
attack() {
	local who=$1 owner=$2 dir=$3 f what before after mark
	what="$who on $owner's session $(sfs_rel "$dir")"
	mark=$PUB/ran.$who.$(basename "$dir")
	before=$(snapshot "$owner" "$dir")
	deny "$who" "$what: ls is $DENY_ERRNO" ls "$dir"
	deny "$who" "$what: stat of stdout is $DENY_ERRNO" stat "$dir/stdout"
	for f in cmd stdout stderr output stream exit status result.json cwd timeout error env/X runs/latest/stdout; do
		deny "$who" "$what: cat $f is $DENY_ERRNO" cat "$dir/$f"
	done
	for f in env runs procs; do deny "$who" "$what: ls $f/ is $DENY_ERRNO" ls "$dir/$f"; done
	deny_write "$who" "$what: write cmd is $DENY_ERRNO" "$dir/cmd" "touch '$mark'"$'\n'
	deny_write "$who" "$what: write env/X is $DENY_ERRNO" "$dir/env/X" $'stolen\n'
	deny_write "$who" "$what: write env/NEW is $DENY_ERRNO" "$dir/env/NEW" $'planted\n'
	deny "$who" "$what: rm env/X is $DENY_ERRNO" rm -f -- "$dir/env/X"
	deny_write "$who" "$what: write ctl is $DENY_ERRNO" "$dir/ctl" $'kill\n'
	deny_write "$who" "$what: write cwd is $DENY_ERRNO" "$dir/cwd" $'/\n'
	deny_write "$who" "$what: write timeout is $DENY_ERRNO" "$dir/timeout" $'1\n'
	deny "$who" "$what: mkdir runs/evil is $DENY_ERRNO" mkdir "$dir/runs/evil"
	deny "$who" "$what: mkdir procs/evil is $DENY_ERRNO" mkdir "$dir/procs/evil"
	asu "$who"
	assert_errno "$RMDIR_ERRNO" "$what: rmdir is $RMDIR_ERRNO" "${AS[@]}" rmdir "$dir"
	sleep 0.2
	assert_true "$what: nothing of the attacker ran" "$mark exists: the cmd write ran as uid $(stat -c %u "$mark" 2>&1)" \
		test ! -e "$mark"
	after=$(snapshot "$owner" "$dir")
	assert_eq "$before" "$after" "$what: the session is as it was (env/X timeout cwd runs/ procs/)"
	[ "$before" = "$after" ] || restore "$owner" "$dir"
}

# restore OWNER DIR: after attacks that got through (the feature not yet
# there), make the session usable again so that the next checks mean
# something
restore() {
	note "restoring $(sfs_rel "$2") for the checks that follow"
	rm -f -- "$PUB"/ran.*
	if ! uread "$1" "$2/cmd" >/dev/null; then
		new_session "$1" "$2"
		return
	fi
	uwrite "$1" "$2/timeout" $'0\n'
	uwrite "$1" "$2/env/X" "secret-$1"$'\n'
	asu "$1"
	timeout 5 "${AS[@]}" rm -f "$2/env/NEW"
	timeout 10 "${AS[@]}" rmdir "$2/procs/evil" 2>/dev/null
	[ -n "$CWD0" ] && uwrite "$1" "$2/cwd" "$CWD0"$'\n'
}

# ---------------------------------------------------------------- identity

# expect_identity WHO LABEL OUT: OUT (from the script ID_SCRIPT) shows
# WHO's uid, groups (group db) and passwd entry, no capabilities
ID_SCRIPT='id -u; id -G | tr " " "\n" | sort -n | tr "\n" " "; echo
printf "%s\n" "HOME=$HOME" "USER=$USER" "LOGNAME=$LOGNAME" "SHELL=$SHELL"
awk "/^CapEff:/ { print \"CapEff=\" \$2 }" /proc/self/status
perl -e "\$< = 0; \$> = 0; print \"setuid0=\$<:\$>\\n\""'
expect_identity() {
	local who=$1 label=$2 out=$3 name=${NAME_OF[$1]} home shell groups line
	home=$(getent passwd "$name" | cut -d: -f6)
	shell=$(getent passwd "$name" | cut -d: -f7)
	groups=$(id -G "$name" | tr ' ' '\n' | sort -n | tr '\n' ' ')
	mapfile -t line <<<"$out"
	assert_eq "${UID_OF[$who]}" "${line[0]}" "$label: id -u is $name's uid"
	assert_eq "$groups" "${line[1]:-}" "$label: id -G is \`id -G $name\` (the group db)"
	# (root's session is the mounter's: its environment stays as it is)
	[ "$who" = root ] && return 0
	assert_eq "HOME=$home" "${line[2]:-}" "$label: HOME from passwd"
	assert_eq "USER=$name" "${line[3]:-}" "$label: USER from passwd"
	assert_eq "LOGNAME=$name" "${line[4]:-}" "$label: LOGNAME from passwd"
	assert_eq "SHELL=$shell" "${line[5]:-}" "$label: SHELL from passwd"
	assert_eq "CapEff=0000000000000000" "${line[6]:-}" "$label: no effective capabilities"
	assert_eq "setuid0=${UID_OF[$who]}:${UID_OF[$who]}" "${line[7]:-}" "$label: setting uid 0 fails"
}

# expect_no_daemon_fds LABEL LISTING: LISTING (`ls -l /proc/self/fd` in a
# run) has 0, 1, 2 and ls's own directory descriptor, nothing else (0-2
# may be pipes: a process's stdout and stderr are the daemon's pipes)
expect_no_daemon_fds() {
	local label=$1 extra fuse
	extra=$(printf '%s\n' "$2" | awk '$(NF-1) == "->" && $(NF-2) !~ /^[012]$/ &&
		!($NF ~ /^\/proc\/[0-9]+\/fd$/ && !seen++) { printf "%s -> %s, ", $(NF-2), $NF }')
	assert_eq "" "$extra" "$label: ls -l /proc/self/fd lists only 0 1 2 and ls's own directory" ||
		note "$label: the listing was: $(printf '%s' "$2" | tr '\n' '|')"
	fuse=$(printf '%s\n' "$2" | grep -c -e '/dev/fuse')
	assert_eq 0 "$fuse" "$label: no /dev/fuse among them"
	assert_eq 0 "$(printf '%s\n' "$2" | grep -c -e 'memfd:')" "$label: no memfd (the daemon's copy of the driver) among them"
}

# ---------------------------------------------------------------- state across runs

# persist WHO DIR LABEL: t03's state checks and more as WHO in the session
# DIR (made here): what a run leaves is in the next runs, and the shell is
# the same one (its pid; the daemon's log says no shell ended)
PERSIST_SET='cd /tmp; export A=1; B=2; greet() { echo "hello, $1"; }
alias hi="echo alias-hi"; set -o noclobber; shopt -s extglob
trap "echo caught-usr1" USR1; echo $$'
PERSIST_GET='echo "$PWD $A $B"; greet again; hi
[[ $- == *C* ]] && echo noclobber; shopt -q extglob && echo extglob
trap -p USR1; echo $$'
PERSIST_WANT=$'/tmp 1 2\nhello, again\nalias-hi\nnoclobber\nextglob\ntrap -- \'echo caught-usr1\' SIGUSR1'
persist() {
	local who=$1 dir=$2 label="$3: $1's session" pid got n
	asu "$who"
	check "$label: mkdir $(sfs_rel "$dir")" "${AS[@]}" mkdir -- "$dir" || return 1
	pid=$(urun "$who" "$dir" "$PERSIST_SET")
	if [[ $pid =~ ^[1-9][0-9]*$ ]]; then pass "$label: the first run prints the shell's pid"; else
		fail "$label: the first run prints the shell's pid" "it printed $(sfs_q "$pid")"
		pid=none
	fi
	assert_eq "${UID_OF[$who]}" "$(urun "$who" "$dir" 'id -u')" "$label: the runs are $who's"
	got=$(urun "$who" "$dir" "$PERSIST_GET")
	assert_eq "$PERSIST_WANT" "${got%$'\n'*}" \
		"$label: cwd, exported and plain variables, a function, an alias, set -o and shopt options and a trap hold in the next runs"
	assert_eq "$pid" "${got##*$'\n'}" "$label: the shell's pid is the same in the next runs"
	assert_eq "caught-usr1" "$(urun "$who" "$dir" 'kill -USR1 $$')" "$label: the trap runs in a later run"
	# (a glob and [ -e ] in the shell itself: see the /dev/fuse check)
	assert_eq 0 "$(urun "$who" "$dir" 'n=0
for f in /proc/$$/fd/200 /proc/$$/task/*/fd/200; do [ -e "$f" ] && n=$((n + 1)); done; echo $n')" \
		"$label: the shell holds no fd 200 (where it got the daemon's memfd of the driver)"
	assert_eq "$pid" "$(urun "$who" "$dir" 'echo $$')" "$label: the shell's pid is still the same"
	# as root: the holder thread's pipes (control on 0, result on 201)
	# are the owner's, and no one else's to open
	got=$(for f in /proc/"$pid"/task/*/fd/0 /proc/"$pid"/task/*/fd/201; do
		[ -p "$f" ] && stat -L -c '%u %a' "$f"; done 2>/dev/null | sort -u | tr '\n' ' ')
	assert_eq "${UID_OF[$who]} 600 " "$got" "$label: the shell's pipes are $who's, mode 0600"
	# its program is a copy of bash she may run but not read: the kernel
	# makes such a process not dumpable from its exec on, so none of her
	# processes could trace it before its driver starts
	got=$(readlink "/proc/$pid/exe" 2>&1)
	assert_eq "0 111" "$(stat -c '%u %a' -- "$got" 2>&1)" "$label: the shell runs an exec-only copy of bash ($got)"
	assert_errno EACCES "$label: she cannot read that copy" "${AS[@]}" head -c 1 -- "$got"
	n=$(grep -c "session $(basename "$dir"): the shell ended" "$SFS_TMP/daemon.log")
	assert_eq 0 "$n" "$label: the log says no shell of it ended"
	timeout 10 "${AS[@]}" rmdir -- "$dir" 2>/dev/null
}

# ---------------------------------------------------------------- with allow_other

sfs_start_mount "allow_other" -o allow_other || exit 1
opts=$(awk -v m="$MNT" '$5 == m { for (i = 7; $i != "-"; i++); print $(i + 3) }' /proc/self/mountinfo)
assert_true "allow_other: the mount has default_permissions (added by sessionfs)" \
	"its super options are $opts" bash -c '[[ ,$1, == *,default_permissions,* ]]' _ "$opts"
assert_true "allow_other: the mount has allow_other" "its super options are $opts" \
	bash -c '[[ ,$1, == *,allow_other,* ]]' _ "$opts"

S1=$MNT/sessions/own1
S2=$MNT/sessions/own2
SR=$MNT/sessions/ownroot
D=$MNT/sessions/default
new_session u1 "$S1"
new_session u2 "$S2"
new_session root "$SR"
CWD0=$(uread u1 "$S1/cwd")

# owners, as root sees them
for pair in "u1 $S1" "u2 $S2" "root $SR"; do
	read -r who dir <<<"$pair"
	want="${UID_OF[$who]}:${GID_OF[$who]}"
	mode=700
	assert_eq "$want $mode" "$(owner_of "$dir")" "$who's session $(sfs_rel "$dir"): owner $want, mode $mode"
	for f in cmd stdout stderr output stream exit status result.json cwd timeout error ctl env env/X runs runs/1 procs; do
		got=$(owner_of "$dir/$f")
		assert_eq "$want" "${got% *}" "$who's session: $f belongs to $want"
	done
done
for f in "" env ctl sessions/default sessions/default/cmd; do
	got=$(owner_of "$MNT/$f")
	assert_eq "0:0" "${got% *}" "the mounter's: ${f:-the mount root} belongs to 0:0"
done
asu u1
got=$(timeout -k 2 "$SFS_T" "${AS[@]}" bash -c 'cat <>"$1"' _ "$MNT/sessions/clone" 2>&1)
if [ -n "$got" ] && [ -d "$MNT/sessions/${got%$'\n'}" ]; then
	got=${got%$'\n'}
	w="${UID_OF[u1]}:${GID_OF[u1]} 700"
	assert_eq "$w" "$(owner_of "$MNT/sessions/$got")" "a session u1 made with clone: owner u1, mode 700"
	timeout 10 "${AS[@]}" rmdir "$MNT/sessions/$got"
else
	fail "a session u1 made with clone: owner u1, mode 700" "cat <> sessions/clone as u1 gave $(sfs_q "$got")"
fi

# each user's runs and processes run as that user
for pair in "u1 $S1" "u2 $S2" "root $SR"; do
	read -r who dir <<<"$pair"
	expect_identity "$who" "$who's run" "$(urun "$who" "$dir" "$ID_SCRIPT")"
	asu "$who"
	if check "$who: mkdir procs/id" "${AS[@]}" mkdir "$dir/procs/id" &&
		check "$who: start procs/id" uwrite "$who" "$dir/procs/id/cmd" "$ID_SCRIPT"$'\n'; then
		uread "$who" "$dir/procs/id/exit" >/dev/null
		expect_identity "$who" "$who's process" "$(uread "$who" "$dir/procs/id/stdout")"
	fi
	timeout 10 "${AS[@]}" rmdir "$dir/procs/id" 2>/dev/null
	expect_no_daemon_fds "$who's run" "$(urun "$who" "$dir" 'ls -l /proc/self/fd')"
	# (a glob and test -ef in the shell itself: another process of the
	# owner's may not look into the shell's /proc files, see below)
	assert_eq 0 "$(urun "$who" "$dir" 'n=0; for f in /proc/$$/fd/* /proc/$$/task/*/fd/*; do [ "$f" -ef /dev/fuse ] && n=$((n + 1)); done; echo $n')" \
		"$who's session shell holds no /dev/fuse"
	if timeout 10 "${AS[@]}" mkdir "$dir/procs/fd" &&
		uwrite "$who" "$dir/procs/fd/cmd" $'ls -l /proc/self/fd\n'; then
		uread "$who" "$dir/procs/fd/exit" >/dev/null
		expect_no_daemon_fds "$who's process" "$(uread "$who" "$dir/procs/fd/stdout")"
	else
		fail "$who's process: ls -l /proc/self/fd" "could not start procs/fd: $(head -c 200 "$SFS_TMP/uwrite.err")"
	fi
	timeout 10 "${AS[@]}" rmdir "$dir/procs/fd" 2>/dev/null
done
# state across runs, as owners other than the daemon's user
persist u1 "$MNT/sessions/st-u1" "allow_other"
persist nobody "$MNT/sessions/st-nobody" "allow_other"

# A tracer of hers never gets hold of a new shell of hers: from its exec
# on it is not dumpable (an exec-only bash), so PTRACE_SEIZE fails in the
# window before its driver starts (which then kept it dumpable and let
# her open its pipes).
SEIZE=$SFS_TMP/seize
if ${CC:-cc} -O2 -o "$SEIZE" "$(dirname "$0")/helpers/seize.c" 2>"$SFS_TMP/cc.err"; then
	chmod 755 "$SEIZE" # (SFS_TMP is 0711)
	asu u1
	for n in 1 2; do timeout 10 "${AS[@]}" mkdir "$MNT/sessions/tr$n"; done
	for n in 1 2; do
		timeout -k 2 20 "${AS[@]}" bash -c 'end=$((SECONDS + 4)); while [ $SECONDS -lt $end ]; do echo exit >"$1/cmd"; done' \
			_ "$MNT/sessions/tr$n" 2>/dev/null &
		SFS_BG_PIDS+=($!)
	done
	got=$(timeout -k 2 20 "${AS[@]}" "$SEIZE" 4)
	wait "${SFS_BG_PIDS[@]: -2}" 2>/dev/null
	assert_true "tracer: she saw her new shells start" "seized/tried: $got" test "${got#* }" -gt 0
	assert_eq 0 "${got%% *}" "tracer: she seized none of her new shells (seized/tried: $got)"
	for n in 1 2; do timeout 10 "${AS[@]}" rmdir "$MNT/sessions/tr$n"; done
else
	fail "tracer: compile helpers/seize.c" "$(head -c 300 "$SFS_TMP/cc.err")"
fi
# a user's commands (processes other than the shell) cannot open the
# shell's /proc files, and so not its driver's pipes: no report forged
read -r -d '' FORGE <<'EOF'
ls /proc/$$/fd >/dev/null 2>&1 && echo listed
bash -c 'for f in /proc/$1/task/*/fd/201; do printf "R0\0/\0\0" >"$f" && echo wrote; done' _ $$ 2>/dev/null
(for f in /proc/$$/task/*/fd/201; do printf "R0\0/\0\0" >"$f" && echo wrote; done) 2>/dev/null
(exit 4)
EOF
assert_eq "" "$(urun u1 "$S1" "$FORGE")" "u1's run: its children cannot reach the shell's /proc fds"
assert_eq 4 "$(uread u1 "$S1/exit")" "u1's run: the status is its own"

# the daemon started with & from a script has SIGINT and SIGQUIT ignored:
# none of that (nor a blocked signal) reaches a run or a process
SIG_SCRIPT='awk '\''/^Sig(Ign|Blk):/ { printf "%s ", $2 }'\'' /proc/self/status; echo'
for pair in "u1 $S1" "root $SR"; do
	read -r who dir <<<"$pair"
	assert_eq "0000000000000000 0000000000000000 " "$(urun "$who" "$dir" "$SIG_SCRIPT")" \
		"$who's run: no signal ignored or blocked in its commands"
	asu "$who"
	if timeout 10 "${AS[@]}" mkdir "$dir/procs/sig" &&
		uwrite "$who" "$dir/procs/sig/cmd" "$SIG_SCRIPT"$'\n'; then
		uread "$who" "$dir/procs/sig/exit" >/dev/null
		assert_eq "0000000000000000 0000000000000000 " "$(uread "$who" "$dir/procs/sig/stdout")" \
			"$who's process: no signal ignored or blocked"
	else
		fail "$who's process: signals" "could not start procs/sig"
	fi
	timeout 10 "${AS[@]}" rmdir "$dir/procs/sig" 2>/dev/null
done
assert_eq "${HOME_OF[u1]}" "$(urun u1 "$S1" 'cd && pwd')" "u1's run: cd goes to its home"
assert_eq "${HOME_OF[u2]}" "$(urun u2 "$S2" 'cd && pwd')" "u2's run: cd goes to its home"

# the run's cgroup stays root's: its owner cannot raise its own limits
CG_SCRIPT='cg=$(awk -F: '\''$1 == "0" { print $3 }'\'' /proc/self/cgroup)
top=$(awk '\''{ for (i = 7; $i != "-"; i++); if ($(i + 1) == "cgroup2") { print $5; exit } }'\'' /proc/self/mountinfo)
d=$top$cg
if [ -z "$top" ] || [ ! -d "$d" ]; then echo none
elif [ -w "$d" ] || [ -w "$d/cgroup.procs" ] || [ -w "$d/pids.max" ] || [ -w "$d/memory.max" ]; then
	echo "writable $(stat -c %u "$d") $d"
else echo "root-only $(stat -c %u "$d")"; fi'
got=$(urun u1 "$S1" "$CG_SCRIPT")
if [ "$got" = none ]; then
	pass "u1's run: cgroup: skip (no cgroup2 directory of the run)"
else
	assert_eq "root-only 0" "$got" "u1's run: its cgroup directory is root's and not writable by u1"
fi

# the matrix
attack u2 u1 "$S1"
attack u1 u2 "$S2"
attack u1 root "$SR"
attack u2 root "$SR"
deny u1 "u1 on the default session: ls is $DENY_ERRNO" ls "$D"
deny u1 "u1 on the default session: cat stdout is $DENY_ERRNO" cat "$D/stdout"
deny_write u1 "u1 on the default session: write cmd is $DENY_ERRNO" "$D/cmd" "touch '$PUB/ran.default'"$'\n'
deny_write u1 "u1 on the default session: write env/X is $DENY_ERRNO" "$D/env/X" $'planted\n'
assert_true "u1 on the default session: nothing ran" "$PUB/ran.default exists" test ! -e "$PUB/ran.default"
deny_write u1 "u1: write root env/T50 is $DENY_ERRNO" "$MNT/env/T50" $'planted\n'
timeout 5 rm -f "$MNT/env/T50"
sfs_write "$MNT/env/T50R" $'root\n'
deny u1 "u1: rm root env/T50R is $DENY_ERRNO" rm -f "$MNT/env/T50R"
assert_file_eq "$MNT/env/T50R" $'root\n' "root env/T50R is still there"
timeout 5 rm -f "$MNT/env/T50R"
deny_write u1 "u1: write root ctl (killall) is $DENY_ERRNO" "$MNT/ctl" $'killall\n'
asu u1
check "u1 may still mkdir a session of its own" "${AS[@]}" mkdir "$MNT/sessions/u1b"
check "u1 may rmdir its own session" "${AS[@]}" rmdir "$MNT/sessions/u1b"

# a caller in a rootless user namespace is its host uid
NS=$MNT/sessions/nsown
asu u1
US=("${AS[@]}" unshare -U -r)
check "userns: u1 as root in its own user namespace: mkdir sessions/nsown" "${US[@]}" mkdir "$NS"
w="${UID_OF[u1]}:${GID_OF[u1]} 700"
assert_eq "$w" "$(owner_of "$NS")" "userns: the session belongs to u1's host uid (stat from the host)"
assert_eq "0" "$(timeout 10 "${US[@]}" stat -c %u "$NS" 2>&1)" "userns: inside, stat shows 0 (u1 mapped to root)"
check "userns: a run" timeout 10 "${US[@]}" bash -c 'echo "id -u" >"$1/cmd"' _ "$NS"
assert_eq "${UID_OF[u1]}" "$(timeout 10 "${US[@]}" cat "$NS/stdout" 2>&1)" "userns: the run runs as u1's host uid"
assert_eq "secret-u1" "$(timeout 10 "${US[@]}" cat "$S1/env/X" 2>&1)" \
	"userns: u1 in it still reads its own session own1 (env/X)"
for f in stdout env/X; do
	assert_errno "$DENY_ERRNO" "userns: u1 as root in it: cat root's $f is $DENY_ERRNO" "${US[@]}" cat "$SR/$f"
done
assert_errno "$DENY_ERRNO" "userns: ls root's session is $DENY_ERRNO" "${US[@]}" ls "$SR"
assert_errno "$DENY_ERRNO" "userns: write cmd of root's session is $DENY_ERRNO" "${US[@]}" \
	bash -c 'printf "touch %s\n" "$2" >"$1/cmd"' _ "$SR" "$PUB/ran.userns"
assert_errno "$DENY_ERRNO" "userns: mkdir procs/evil in root's session is $DENY_ERRNO" "${US[@]}" mkdir "$SR/procs/evil"
assert_errno "$RMDIR_ERRNO" "userns: rmdir root's session is $RMDIR_ERRNO" "${US[@]}" rmdir "$SR"
assert_errno "$DENY_ERRNO" "userns: cat u2's stdout is $DENY_ERRNO" "${US[@]}" cat "$S2/stdout"
assert_true "userns: nothing ran in root's session" "$PUB/ran.userns exists" test ! -e "$PUB/ran.userns"
sfs_check_umount "allow_other"

# ---------------------------------------------------------------- a build in a private directory

# the daemon, its driver and the context drivers copied into a directory
# of mode 0700 (a checkout in /root, or in mktemp -d): the users' shells
# cannot open the driver's path, and still run and keep their state
BIN_DIR=$(dirname "$SFS_BIN")
if [ -f "$BIN_DIR/sfsdrv.so" ]; then
	PRIV=$(mktemp -d "$SFS_TMP/priv.XXXXXX")
	cp "$SFS_BIN" "$PRIV/sessionfs"
	for f in sfsdrv.so sfsctx.py sfsctx.js sfschart.py sfsts.js; do
		[ -f "$BIN_DIR/$f" ] && cp "$BIN_DIR/$f" "$PRIV/"
	done
	assert_eq 700 "$(stat -c %a "$PRIV")" "private build: its directory has mode 0700"
	asu u1
	assert_errno EACCES "private build: u1 cannot open its sfsdrv.so" "${AS[@]}" cat "$PRIV/sfsdrv.so"
	SFS_BIN_MAIN=$SFS_BIN
	SFS_BIN=$PRIV/sessionfs
	if sfs_start_mount "private build" -o allow_other; then
		asu u1
		check "private build: u1 mkdir sessions/p-u1" "${AS[@]}" mkdir "$MNT/sessions/p-u1"
		assert_eq "out-u1" "$(urun u1 "$MNT/sessions/p-u1" 'echo out-u1')" \
			"private build: a run of u1's prints its output"
		assert_eq 0 "$(uread u1 "$MNT/sessions/p-u1/exit")" "private build: the run of u1's exits 0"
		expect_no_daemon_fds "private build: u1's run" "$(urun u1 "$MNT/sessions/p-u1" 'ls -l /proc/self/fd')"
		timeout 10 "${AS[@]}" rmdir "$MNT/sessions/p-u1"
		persist u1 "$MNT/sessions/st-u1" "private build"
		persist nobody "$MNT/sessions/st-nobody" "private build"
		# the code contexts' drivers are in that directory too
		asu u1
		check "private build: u1 mkdir sessions/c-u1" "${AS[@]}" mkdir "$MNT/sessions/c-u1"
		for lang in python javascript; do
			C=$MNT/sessions/c-u1/contexts/$lang
			asu u1
			timeout 10 "${AS[@]}" mkdir "$C"
			uwrite u1 "$C/language" "$lang"
			uwrite u1 "$C/cwd" /tmp
			uwrite u1 "$C/code" 'x = 41'
			uwrite u1 "$C/code" 'x + 1'
			assert_eq 42 "$(uread u1 "$C/result")" \
				"private build: a $lang context of u1's keeps x and answers 42 ($(uread u1 "$C/error" | head -c 200))"
		done
		timeout 10 "${AS[@]}" rmdir "$MNT/sessions/c-u1"
		# the module on disk replaced (an upgrade, a rebuild): the
		# daemon's shells still load the copy it read at its start
		printf 'not a shared object\n' >"$PRIV/sfsdrv.so"
		asu u1
		check "private build: u1 mkdir sessions/p-new" "${AS[@]}" mkdir "$MNT/sessions/p-new"
		# (exit: the next run's shell is started after the replacement,
		# not made ahead before it)
		urun u1 "$MNT/sessions/p-new" 'exit 3' >/dev/null
		assert_eq "still-u1" "$(urun u1 "$MNT/sessions/p-new" 'echo still-u1')" \
			"private build: after sfsdrv.so is replaced on disk, a new shell still runs"
		sfs_check_umount "private build"
	fi
	SFS_BIN=$SFS_BIN_MAIN
else
	note "skip private build: no sfsdrv.so next to $SFS_BIN (an installed daemon)"
fi

# ---------------------------------------------------------------- max_sessions_per_user

CFG=$SFS_TMP/limit.conf
printf '%s\n' "max_sessions_per_user = $LIMIT;" 'max_sessions = 100;' >"$CFG"
if sfs_start_mount "max_sessions_per_user = $LIMIT" -o allow_other -c "$CFG"; then
	asu u1
	for ((i = 1; i <= LIMIT; i++)); do
		check "limit: u1 mkdir sessions/a$i (session $i of $LIMIT)" "${AS[@]}" mkdir "$MNT/sessions/a$i"
	done
	assert_errno "$(errno_text "$LIMIT_ERRNO")" "limit: u1's session $((LIMIT + 1)) is $LIMIT_ERRNO" \
		"${AS[@]}" mkdir "$MNT/sessions/a$((LIMIT + 1))"
	assert_errno "$(errno_text "$LIMIT_ERRNO")" "limit: u1 opening sessions/clone to write is $LIMIT_ERRNO" \
		"${AS[@]}" bash -c 'cat <>"$1"' _ "$MNT/sessions/clone"
	assert_errno "$(errno_text "$LIMIT_ERRNO")" "limit: u1 in a user namespace is counted as u1 ($LIMIT_ERRNO)" \
		"${AS[@]}" unshare -U -r mkdir "$MNT/sessions/a-ns"
	asu u2
	check "limit: u2 can still mkdir sessions/b1" "${AS[@]}" mkdir "$MNT/sessions/b1"
	check "limit: root can still mkdir sessions/r1" sfs_mkdir "$MNT/sessions/r1"
	asu u1
	check "limit: u1 rmdir sessions/a1" "${AS[@]}" rmdir "$MNT/sessions/a1"
	check "limit: then u1 can mkdir again" "${AS[@]}" mkdir "$MNT/sessions/a$((LIMIT + 1))"
	sfs_check_umount "max_sessions_per_user = $LIMIT"
fi

# ---------------------------------------------------------------- without allow_other

if sfs_start_mount "without allow_other"; then
	D=$MNT/sessions/default
	deny u1 "without allow_other: u1 ls of the mount root is $DENY_ERRNO" ls "$MNT"
	deny u1 "without allow_other: u1 cat README is $DENY_ERRNO" cat "$MNT/README"
	deny u1 "without allow_other: u1 mkdir sessions/x is $DENY_ERRNO" mkdir "$MNT/sessions/x"
	asu u1
	assert_errno "$DENY_ERRNO" "without allow_other: u1 in a user namespace: ls is $DENY_ERRNO" \
		"${AS[@]}" unshare -U -r ls "$MNT"
	assert_eq "out-root" "$(sfs_run_out "$D" 'echo out-root')" "without allow_other: root still runs commands"
	assert_eq "0" "$(sfs_run_out "$D" 'id -u')" "without allow_other: runs are the mounter's (uid 0)"
	sfs_check_umount "without allow_other"
fi

# ---------------------------------------------------------------- a runtime directory taken first

# u1 makes RT/sessionfs (and a symlink for the next name) before root's
# daemon starts in RT: the daemon takes neither and says so
RTD=$PUB/rt
mkdir -m 1777 "$RTD"
asu u1
"${AS[@]}" mkdir -m 0777 "$RTD/sessionfs"
"${AS[@]}" ln -s "$PUB" "$RTD/sessionfs.1"
printf 'runtime_dir = "%s";\n' "$RTD" >"$SFS_TMP/rt.conf"
if sfs_start_mount "runtime_dir with u1's sessionfs in it" -c "$SFS_TMP/rt.conf"; then
	assert_eq rt "$(sfs_run_out "$MNT/sessions/default" 'echo rt')" "taken runtime dir: a run works"
	assert_eq "" "$(ls -A "$RTD/sessionfs")" "taken runtime dir: nothing of the daemon's in u1's directory"
	assert_true "taken runtime dir: the daemon's own is RT/sessionfs.2/PID" "$(ls "$RTD")" \
		test -d "$RTD/sessionfs.2/$SFS_SERVER"
	assert_file_match "$SFS_TMP/daemon.log" "sessionfs is not a directory of uid 0 that only it may write: not using it" \
		"taken runtime dir: the log says why"
	sfs_check_umount "taken runtime dir"
fi

# ---------------------------------------------------------------- a user's own daemon

# a user mounts sessionfs for itself (fusermount3): that user's commands,
# which run as the daemon's user, cannot open the daemon's /proc files
# (/dev/fuse, every shell's pipes), while their own stay theirs
if command -v fusermount3 >/dev/null && [ -u "$(command -v fusermount3)" ]; then
	# Debian's /dev/fuse is 0666; this machine's may be closer (put back
	# at exit)
	sfs_user_fuse_allow
	asu u1
	UMNT=$PUB/u1.mnt
	"${AS[@]}" mkdir "$UMNT"
	UBIN=$SFS_BIN
	# a build in a directory u1 cannot enter (/root): a copy u1 can run
	if ! "${AS[@]}" test -x "$SFS_BIN"; then
		UBIN=$PUB/ubuild/sessionfs
		mkdir -m 755 "$PUB/ubuild"
		cp "$SFS_BIN" "$(dirname "$SFS_BIN")"/sfs{drv.so,ctx.py,ctx.js} "$PUB/ubuild/" 2>/dev/null
		note "own daemon: u1 cannot run $SFS_BIN; runs a copy in $PUB/ubuild"
	fi
	"${AS[@]}" "$UBIN" -f "$UMNT" >"$SFS_TMP/u1daemon.log" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	UPID=$!
	SFS_BG_PIDS+=("$UPID")
	if check "own daemon: u1 mounts sessionfs itself" sfs_until 10 "${AS[@]}" test -d "$UMNT/sessions/default"; then
		# shellcheck disable=SC2016
		got=$(urun u1 "$UMNT/sessions/default" 'ls /proc/self/fd >/dev/null && echo own
ls /proc/'"$UPID"'/fd >/dev/null 2>&1 && echo listed
cat /proc/'"$UPID"'/environ >/dev/null 2>&1 && echo read; id -u')
		assert_eq "own ${UID_OF[u1]}" "$(printf '%s' "$got" | tr '\n' ' ')" \
			"own daemon: a run (as u1) cannot open the daemon's /proc files"
		check "own daemon: fusermount3 -u" timeout 10 "${AS[@]}" fusermount3 -u "$UMNT"
		check "own daemon: the daemon exits" sfs_wait_gone "$UPID" 5
		UMNT=
	else
		note "u1's daemon: $(tail -n 3 "$SFS_TMP/u1daemon.log")"
	fi
fi

SFS_DONE=1
exit 0
