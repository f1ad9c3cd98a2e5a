#!/usr/bin/env bash
# t13_names: sessionfs(7) "SESSIONS AND RUNS", names: 1 to 64 of [A-Za-z0-9._-],
# not starting with "."; anything else is refused (EINVAL), and a refused
# mkdir creates nothing.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

SD=$MNT/sessions
before=$(timeout 10 ls -a "$SD" | sort)

# "." and ".." are the directory's own entries: any error will do
assert_fails "mkdir sessions/.. is refused" mkdir -- "$SD/.."
assert_fails "mkdir sessions/. is refused" mkdir -- "$SD/."
# empty name: "sessions/" names sessions/ itself
assert_fails "mkdir sessions/'' is refused" mkdir -- "$SD/"''
# names that start with a dot
for n in ... ..a .hidden .x. '.-'; do
	assert_errno EINVAL "mkdir sessions/$n gives EINVAL" mkdir -- "$SD/$n"
done
# a/b: a is not there, so the lookup fails before any mkdir
assert_errno ENOENT "mkdir sessions/a/b gives ENOENT" mkdir -- "$SD/a/b"
assert_true "mkdir sessions/a/b creates nothing" "sessions/a exists" timeout 5 test ! -e "$SD/a"
# forbidden characters
for n in 'a b' 'a:b' 'a*b' 'a\b' 'a@b' 'é' 'a+b' 'a%b' $'a\tb'; do
	assert_errno EINVAL "mkdir sessions/$(sfs_q "$n") gives EINVAL" mkdir -- "$SD/$n"
done

# length: 65 refused, 64 fine
n64=$(printf 'n%.0s' {1..64})
n65=$(printf 'n%.0s' {1..65})
assert_eq 64 "${#n64}" "the 64-character name has 64 characters"
assert_errno EINVAL "a 65-character name gives EINVAL" mkdir -- "$SD/$n65"
assert_true "the 65-character session does not exist" "it exists" timeout 5 test ! -e "$SD/$n65"
check "a 64-character name is accepted" sfs_mkdir "$SD/$n64"
check "the 64-character session is a directory" test -d "$SD/$n64"
assert_run_ok "run in the 64-character session" "$SD/$n64" 'echo long' 10
assert_file_eq "$SD/$n64/stdout" $'long\n' "the 64-character session works"
check "rmdir the 64-character session" rmdir -- "$SD/$n64"

# valid names: every allowed character
for n in x 0 A-z_0.9 a..b a. _ -x; do
	if check "mkdir sessions/$n is accepted" sfs_mkdir "$SD/$n"; then
		check "rmdir sessions/$n" rmdir -- "$SD/$n"
	fi
done

# duplicates and missing sessions
check "mkdir sessions/dup" sfs_mkdir "$SD/dup"
assert_errno EEXIST "mkdir of an existing session gives EEXIST" mkdir -- "$SD/dup"
check "rmdir sessions/dup" rmdir -- "$SD/dup"
assert_errno ENOENT "rmdir of a missing session gives ENOENT" rmdir -- "$SD/nosuch"

# nothing that was refused shows up in sessions/
after=$(timeout 10 ls -a "$SD" | sort)
assert_eq "$before" "$after" "sessions/ lists the same entries as at the start"

sfs_done
