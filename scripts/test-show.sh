#!/usr/bin/env bash
# The terminal viewer (`drop7 show`) used as a person would: started in a tmux
# pane, driven with send-keys (arrows, End, Home, space, q), read back with
# capture-pane. Also snapshots the --plain dump and checks bad input.
# Needs tmux (scripts/setup-tmux.sh). Usage: scripts/test-show.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/drop7-bin.sh
BIN="$DROP7_BIN"
WORK="$(mktemp -d)"
SESSION="drop7-show-$$"
# A tmux server of this run's own (-L), kept alive by an idle session: the
# last `kill-session` would otherwise stop the server, and the next
# `new-session` could reach it while it shuts down ("server exited
# unexpectedly", seen once in CI).
tmux() { command tmux -L "drop7-show-$$" "$@"; }
cleanup() { tmux kill-server 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
tmux new-session -d -s keeper "sleep 100000"

fail() { echo "FAIL: $*"; echo "--- pane:"; tmux capture-pane -p -t "$SESSION" 2>/dev/null || true; exit 1; }

# Waits (up to 10 s) until the pane shows $1.
wait_for() {
  for _ in $(seq 100); do
    if tmux capture-pane -p -t "$SESSION" 2>/dev/null | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  fail "pane never showed: $1"
}

# --plain: a stable text dump.
"$BIN" show --seed 1 --policy center --plain > "$WORK/plain.txt"
head -1 "$WORK/plain.txt" | grep -qx "seed 0x00000001, policy center, driver headless: 25 moves" || fail "plain header"
grep -qx "move 25/25  score 68327  level 5  rise in 0  next -" "$WORK/plain.txt" || fail "plain last frame"
[ "$(grep -c '^move ' "$WORK/plain.txt")" = 26 ] || fail "plain frame count"
[ "$(grep -cx '  0 1 2 3 4 5 6' "$WORK/plain.txt")" = 26 ] || fail "plain column numbers"
# Neither a tape nor a seed: a usage error (status 2) naming both.
rc=0; "$BIN" show > /dev/null 2> "$WORK/err.txt" || rc=$?
[ "$rc" = 2 ] && grep -qF "<TAPE|--seed <SEED>>" "$WORK/err.txt" || fail "show without a source: $rc $(cat "$WORK/err.txt")"

# A tape from a scripted round, shown interactively.
"$BIN" play --round testdata/rounds/gauntlet-01.json --policy greedy --tapes "$WORK/tapes" > /dev/null
TAPE="$WORK/tapes/gauntlet-01.tape.json"
"$BIN" show "$TAPE" --plain | grep -q "^move 40/40  score 120136  level 8" || fail "tape plain"
# The tape's own labels head the dump.
"$BIN" show "$TAPE" --plain | head -1 | grep -qF "(round gauntlet-01, policy greedy, driver latent): 40 moves" || fail "tape labels: $("$BIN" show "$TAPE" --plain | head -1)"

tmux new-session -d -s "$SESSION" -x 110 -y 30 "$BIN show $TAPE --speed 20 --wave-ms 5; echo VIEWER-EXITED \$?; sleep 30"
wait_for "move 0/40  score 0"
wait_for "opening position"
wait_for "└ 0  1  2  3  4  5  6 ┘"
tmux send-keys -t "$SESSION" Right
wait_for "move 1/40"
tmux send-keys -t "$SESSION" Right Right
wait_for "move 3/40"
tmux send-keys -t "$SESSION" Left
wait_for "move 2/40"
tmux send-keys -t "$SESSION" End
wait_for "move 40/40  score 120136  level 8"
wait_for "GAME OVER (blocked-rise)"
tmux send-keys -t "$SESSION" Home
wait_for "move 0/40"
# Play at 20 ms a move: it reaches the end by itself.
tmux send-keys -t "$SESSION" Space
wait_for "move 40/40"
wait_for "paused"
# Coloured discs and grays are on screen (escape codes kept with -e).
tmux capture-pane -p -e -t "$SESSION" | grep -q $'\e\[' || fail "no colours"
tmux capture-pane -p -t "$SESSION" | grep -q " ■ " || fail "no solid grays drawn"
tmux send-keys -t "$SESSION" q
wait_for "VIEWER-EXITED 0"

# A seeded game with a policy, interactively.
tmux kill-session -t "$SESSION"
tmux new-session -d -s "$SESSION" -x 110 -y 30 "$BIN show --seed 7 --policy random; echo VIEWER-EXITED \$?; sleep 30"
wait_for "seed 0x00000007, policy random"
tmux send-keys -t "$SESSION" Right
wait_for "move 1/"
tmux send-keys -t "$SESSION" q
wait_for "VIEWER-EXITED 0"

# Ctrl-C quits too (raw mode delivers it as a key) and the terminal is
# restored (canonical mode and echo back on).
tmux kill-session -t "$SESSION"
tmux new-session -d -s "$SESSION" -x 110 -y 30 "$BIN show --seed 3 --policy center; echo VIEWER-EXITED \$?; stty -a | grep -o -- ' -\\?icanon\\| -\\?echo '; sleep 30"
wait_for "seed 0x00000003, policy center"
tmux send-keys -t "$SESSION" C-c
wait_for "VIEWER-EXITED 0"
wait_for " icanon"
wait_for " echo"
# SIGTERM, SIGHUP or SIGINT from outside (a kill, a closed ssh session):
# the terminal is restored (main screen, cursor shown, canonical mode and
# echo), and the exit status is 128 + the signal's number.
for sig in TERM HUP INT; do
  tmux kill-session -t "$SESSION"
  tmux new-session -d -s "$SESSION" -x 110 -y 30 "$BIN show --seed 4 --policy center; echo VIEWER-EXITED \$?; stty -a | grep -o -- ' -\\?icanon\\| -\\?echo '; sleep 30"
  wait_for "seed 0x00000004, policy center"
  shell=$(tmux display -p -t "$SESSION" '#{pane_pid}')
  viewer=$(pgrep -P "$shell" drop7) || fail "no viewer process under the pane's shell"
  kill -"$sig" "$viewer"
  case $sig in TERM) want=143 ;; HUP) want=129 ;; INT) want=130 ;; esac
  wait_for "VIEWER-EXITED $want"
  wait_for " icanon"
  wait_for " echo"
  [ "$(tmux display -p -t "$SESSION" '#{alternate_on} #{cursor_flag}')" = "0 1" ] \
    || fail "SIG$sig left the alternate screen on or the cursor hidden: $(tmux display -p -t "$SESSION" '#{alternate_on} #{cursor_flag}')"
done
# A tiny terminal does not crash the viewer: it says so (keys still work),
# draws the game after a resize and quits normally.
tmux kill-session -t "$SESSION"
tmux new-session -d -s "$SESSION" -x 20 -y 5 "$BIN show --seed 3 --policy center; echo VIEWER-EXITED \$?; sleep 30"
wait_for "terminal too"
tmux send-keys -t "$SESSION" Right End
tmux resize-window -t "$SESSION" -x 110 -y 30
wait_for "GAME OVER"
tmux send-keys -t "$SESSION" q
wait_for "VIEWER-EXITED 0"

# A standard 80x24 terminal shows the whole legend and key help (wrapped).
tmux kill-session -t "$SESSION"
tmux new-session -d -s "$SESSION" -x 80 -y 24 "$BIN show --seed 3 --policy center; echo VIEWER-EXITED \$?; sleep 30"
wait_for "underlined: gray hit"
wait_for "q quit"
tmux send-keys -t "$SESSION" q
wait_for "VIEWER-EXITED 0"

# A searching policy plays the whole game first and says so meanwhile; keys
# typed in the meantime are dropped (a queued q does not quit the viewer).
tmux kill-session -t "$SESSION"
tmux new-session -d -s "$SESSION" -x 110 -y 30 "$BIN show --seed 1 --policy fair:d4s5 --max-moves 30; echo VIEWER-EXITED \$?; sleep 30"
wait_for "playing the game before showing it (fair:d4s5 searches every move)"
tmux send-keys -t "$SESSION" q
wait_for "seed 0x00000001, policy fair:d4s5"
sleep 1
tmux capture-pane -p -t "$SESSION" | grep -qF "VIEWER-EXITED" && fail "a key typed before the viewer appeared quit it"
tmux send-keys -t "$SESSION" q
wait_for "VIEWER-EXITED 0"

# A step forward animates the move: the disc landing, then each wave's pops
# (1.5 s a frame here so that capture-pane sees each one); a key ends it.
tmux kill-session -t "$SESSION"
tmux new-session -d -s "$SESSION" -x 110 -y 30 "$BIN show $TAPE --wave-ms 1500; echo VIEWER-EXITED \$?; sleep 30"
wait_for "move 0/40"
tmux send-keys -t "$SESSION" Right
wait_for "▶ the disc lands"
# While the move is animated the header keeps the score before it.
wait_for "move 1/40  score 0 (+"
wait_for "▶ wave 1: 1 pop, 1 gray hit"
wait_for "▶ wave 1: the discs above fall"
tmux send-keys -t "$SESSION" Right
wait_for "move 2/40"
tmux send-keys -t "$SESSION" q
wait_for "VIEWER-EXITED 0"

# SIGQUIT from outside restores the terminal too (exit 131).
tmux kill-session -t "$SESSION"
tmux new-session -d -s "$SESSION" -x 110 -y 30 "$BIN show --seed 4 --policy center; echo VIEWER-EXITED \$?; sleep 30"
wait_for "seed 0x00000004, policy center"
kill -QUIT "$(pgrep -P "$(tmux display -p -t "$SESSION" '#{pane_pid}')" drop7)"
wait_for "VIEWER-EXITED 131"
[ "$(tmux display -p -t "$SESSION" '#{alternate_on} #{cursor_flag}')" = "0 1" ] || fail "SIGQUIT left the terminal in the viewer's state"
# The terminal goes away (a closed ssh session; here the whole tmux server):
# the viewer ends (it once went on spinning on the closed terminal,
# SIGTERM caught and never acted on). Last: the server is gone after it.
tmux kill-session -t "$SESSION"
tmux new-session -d -s "$SESSION" -x 110 -y 30 "$BIN show --seed 4 --policy center; sleep 30"
wait_for "seed 0x00000004, policy center"
viewer=$(pgrep -P "$(tmux display -p -t "$SESSION" '#{pane_pid}')" drop7) || fail "no viewer process"
tmux kill-server
for _ in $(seq 50); do kill -0 "$viewer" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$viewer" 2>/dev/null; then kill -9 "$viewer"; fail "the viewer outlived its terminal"; fi

# Bad input: one clear error line, non-zero exit, no panic.
echo '{"format":"drop7-recorded-game-v2"' > "$WORK/bad.json"
if "$BIN" show "$WORK/bad.json" 2> "$WORK/err.txt"; then fail "bad tape accepted"; fi
grep -q "^error: tape .*invalid-format" "$WORK/err.txt" || fail "bad tape error: $(cat "$WORK/err.txt")"
if "$BIN" show --seed 1 > /dev/null 2> "$WORK/err.txt"; then fail "non-terminal accepted"; fi
grep -q "needs a terminal" "$WORK/err.txt" || fail "non-terminal error"
echo "test-show: ok"
