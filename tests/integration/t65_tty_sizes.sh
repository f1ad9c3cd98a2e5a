#!/usr/bin/env bash
# t65_tty_sizes: what crashed libvterm 0.1.4 (and with it the daemon, every
# user's sessions, the mount answering ENOTCONN) at the sizes tty/size
# accepts: combining marks that libvterm counts two columns wide (U+302A-
# U+302F, U+3099, U+309A) after a character, a wide character at the last
# column, marks after wide characters, and enough marks after a letter to
# be wider than any screen (`printf 'a\xe3\x80\xaa'` at 2 columns, 40
# marks at 80), at 2..4 x 2..4 and larger; then a resize to fewer rows
# with a line below the cursor (libvterm took the cursor above the
# screen, where the next character went; the end of a character cut by
# the resize too) and with a scroll region below the new height (a line
# feed moved a negative count). After each: the terminal answers
# (a marker printed after it is on the screen), health is ok, screen has
# one line per row, cursor is on it, and another session's terminal
# works. At 80 columns the marks that fit are kept on the screen as
# libvterm shows them. Every wait is on a condition (expect, or a poll
# with a deadline).
# shellcheck disable=SC2016,SC2317  # functions called through sfs_until
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/narrow
T=$S/tty
T2=$MNT/sessions/other/tty
check "mkdir sessions/narrow" sfs_mkdir "$S"
check "mkdir sessions/other" sfs_mkdir "$MNT/sessions/other"

# type_line TEXT [TTYDIR]: TEXT and Enter, written to tty/input
type_line() { sfs_write "${2:-$T}/input" "$1"$'\n' 10; }

# assert_expect LABEL ERE [TTYDIR]: expect finds a line matching ERE
assert_expect() {
	local d=${3:-$T}
	if sfs_write "$d/expect" "$2 15000"$'\n' 5 &&
		timeout -k 2 25 cat "$d/expect" >/dev/null 2>"$SFS_TMP/expect.err"; then
		pass "$1"
	else
		fail "$1" "no line matches /$2/: $(head -c 200 "$SFS_TMP/expect.err"); screen: $(timeout 5 cat "$d/screen" | tr '\n' '|' | head -c 300)"
		return 1
	fi
}

# The sequences, printed by a script so that the typed line is short.
CRASH=$SFS_TMP/crash.sh
cat >"$CRASH" <<'EOF'
printf 'a\xe3\x80\xaa\n'
printf '\xe4\xb8\xad\xe3\x82\x99\xe3\x82\x9a\n'
printf 'x\xe4\xb8\xad\xe3\x80\xab\xe3\x80\xac\n'
printf '\xe3\x80\xaa\xe3\x80\xab\xe3\x80\xad\n'
printf 'a'; printf '\xe3\x80\xaf%.0s' $(seq 501); printf '\n'
printf '\xe3\x81\x8b\xe3\x82\x99\n'
EOF
chmod 644 "$CRASH"

# alive LABEL COLS ROWS: health is ok, screen has ROWS lines, the cursor
# is on the screen, the other session's terminal echoes a line
N=0
alive() {
	local label=$1 cols=$2 rows=$3 row col
	N=$((N + 1))
	assert_eq ok "$(timeout 5 head -n 1 "$MNT/health" 2>&1)" "$label: health is ok"
	assert_eq "$rows" "$(timeout 5 cat "$T/screen" 2>/dev/null | wc -l)" "$label: screen has $rows lines"
	read -r row col _ < <(timeout 5 cat "$T/cursor" 2>/dev/null)
	assert_true "$label: the cursor is on the screen" "cursor '$row $col'" \
		test "${row:-0}" -ge 1 -a "${row:-0}" -le "$rows" -a "${col:-0}" -ge 1 -a "${col:-0}" -le "$cols"
	type_line "echo \"other\"\"-$N\"" "$T2"
	assert_expect "$label: the other session's terminal works" "^other-$N\$" "$T2"
}

type_line 'echo "oth""er-up"' "$T2"
assert_expect "the other terminal starts" '^other-up$' "$T2"
type_line 'PS1=""; echo "st""arted"'
assert_expect "the terminal starts" '^started$'

# 1. the marks, wide characters at the last column, at every small size
# and a few larger; a two-letter marker after them fits 2 columns
M=0
L=ABCDEFGHIJKLMNOPQRSTUVWXYZ
for size in "2 2" "2 3" "2 4" "3 2" "3 3" "3 4" "4 2" "4 3" "4 4" "5 2" "7 3" "80 24" "132 6"; do
	read -r c r <<<"$size"
	set -- "$c" "$r"
	M=$((M + 1))
	marker=${L:M-1:1}$((M % 10))
	check "size $1 $2" sfs_write "$T/size" "$1 $2"$'\n'
	type_line "bash $CRASH; echo \"${marker:0:1}\"\"${marker:1}\""
	assert_expect "$1x$2: the marks and wide characters printed, the terminal answers" "^$marker\$"
	alive "$1x$2" "$1" "$2"
done

# 2. at 80 columns the marks that fit are on the screen as libvterm shows
# them: a letter or a wide character with its marks, NFD kana
check "size 80 24" sfs_write "$T/size" $'80 24\n'
type_line "clear; bash $CRASH; echo \"at\"\"-80\""
assert_expect "80x24: the marks printed" '^at-80$'
scr=$(timeout 5 cat "$T/screen")
for want in $'a\xe3\x80\xaa' $'\xe3\x80\xaa\xe3\x80\xab\xe3\x80\xad' $'\xe4\xb8\xad\xe3\x82\x99\xe3\x82\x9a' $'x\xe4\xb8\xad\xe3\x80\xab\xe3\x80\xac' $'\xe3\x81\x8b\xe3\x82\x99'; do
	assert_true "80x24: the line $(printf '%q' "$want") is on the screen as printed" \
		"screen: $(printf '%q' "$scr" | head -c 300)" grep -qxF -- "$want" <<<"$scr"
done

# 3. resizes to fewer rows or columns that libvterm left wrong
# cursor_at ROW COL: tty/cursor says so
cursor_at() { [ "$(timeout 5 cat "$T/cursor" 2>/dev/null)" = "$1 $2 visible" ]; }
# shrink LABEL BEFORE ROW COL SIZE AFTER: at 80x24 print BEFORE, which
# leaves the cursor at ROW COL, and wait in a read (so that nothing else
# is printed); once the cursor is there write SIZE, then end the read and
# print AFTER and a two-letter marker
shrink() {
	local label=$1
	M=$((M + 1))
	check "$label: size 80 24" sfs_write "$T/size" $'80 24\n'
	type_line "clear; printf '$2'; read -r _"
	assert_true "$label: printed (the cursor at $3 $4)" "cursor $(timeout 5 cat "$T/cursor")" \
		sfs_until 15 cursor_at "$3" "$4"
	check "$label: size $5" sfs_write "$T/size" "$5"$'\n'
	type_line "" # read returns
	marker=${L:M-1:1}$((M % 10)) # it fits 2 columns
	type_line "printf '$6'; printf '\\e[r\\e[H\\e[2J'; echo \"${marker:0:1}\"\"${marker:1}\""
	assert_expect "$label: the terminal answers" "^$marker\$"
	alive "$label" "${5% *}" "${5#* }"
}
shrink "a line below the cursor, 24 to 10 rows" '\e[24Hx\e[2;3H' 2 3 "80 10" '\e[2Ksome text\e[L\e[M'
shrink "a character cut by the resize, 24 to 10 rows" '\e[24Hx\e[2;3H\xe3\x80' 2 3 "80 10" '\xaaabc'
shrink "a scroll region below 10 rows" '\e[20;24r\e[24;5H' 24 5 "80 10" '\n\n\e[M\eM\eD\e[L'
shrink "a line below the cursor, to 2x2" '\e[24H\xe4\xb8\xad\e[H' 1 1 "2 2" 'a\xe3\x80\xaa\e[L\e[M'

sfs_done
