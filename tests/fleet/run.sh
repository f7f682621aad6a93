#!/usr/bin/env bash
# Runs the fleet recipes of docs/fleet.md for real: an sshd of its own on
# 127.0.0.1 plays three Kafka nodes (ssh host aliases node-1, node-2,
# node-3), each with a copy of a committed capture as its log dirs. The
# static klf is copied onto each "node", `klf digest` runs there, the
# digests are gathered here, and `klf diff --format json` over them must
# give the same answer (and exit code) as over the node trees themselves.
#
#   usage: tests/fleet/run.sh STATIC_KLF [CENTRAL_KLF]
#
#   STATIC_KLF   the binary copied onto the nodes: the static build
#                (target/x86_64-unknown-linux-musl/dist/klf)
#   CENTRAL_KLF  the binary for the central steps (klf diff over the digests
#                and over the trees); default: STATIC_KLF
#
# Two passes: testdata/kafka/unclean (one log dir a node; committed records
# lost, diff exits 1) and testdata/kafka/jbod (two log dirs a node, d1 and
# d2, given together to make one digest; diff exits 0). The recipes: ssh
# (scp, ssh ... -o - > node-N.klfd), pssh (parallel-scp, parallel-ssh -o
# DIR), Ansible ad-hoc (copy, command, fetch flat=yes, file; first pass
# only) and the playbook tests/fleet/klf-digest.yml. Then it checks that the node
# trees are byte for byte as before (a manifest of every entry: type, size,
# mode, mtime, sha256), that each node ends without the binary and digest,
# and that Ansible wrote nothing under $HOME.
#
# Installs what is missing (as root, from Debian: openssh-server,
# openssh-client, pssh, python3-venv; while it installs, a policy-rc.d keeps
# the package's own sshd service from starting) and ansible-core from PyPI
# into a virtualenv in its temp dir. Its sshd listens on 127.0.0.1 only, on
# a free port, with its own host key, config, authorized_keys and PidFile in
# the temp dir; a system sshd is neither used nor touched. Everything is
# removed on exit (the sshd stopped by its process id).
set -euo pipefail

# ansible-core 2.19 runs on Python 3.11 to 3.13 (Debian 12 and 13)
ANSIBLE_CORE_VERSION=2.19.14
# what the recipes pass to klf digest on a node: one thread, 50 MB/s at most
DIGEST_OPTIONS=(--threads 1 --max-rate 50M)

usage() { sed -n 's/^#   usage: //p' "$0" >&2; }
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; exit 2; fi
for b in "$@"; do
  if [ ! -f "$b" ] || [ ! -x "$b" ]; then echo "not an executable file: $b" >&2; usage; exit 2; fi
done
static=$(realpath "$1")
central=$(realpath "${2:-$1}")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
started=$SECONDS

say() { echo "-- $*"; }
show() { printf '+'; printf ' %q' "$@"; echo; }
run() { show "$@"; "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---------------------------------------------------------------- installs
apt_install() {
  [ "$(id -u)" -eq 0 ] || fail "missing: $* (install them as root: apt-get install $*)"
  say "installing from Debian: $*"
  local t0=$SECONDS
  local policy=/usr/sbin/policy-rc.d made_policy='' rc=0 apt_log
  apt_log=$(mktemp)
  # openssh-server's maintainer scripts start the system's ssh service; a
  # policy-rc.d that answers 101 (action forbidden) keeps it stopped, as in
  # container images. One made here is removed right after.
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# klf tests/fleet/run.sh: no service starts while it installs\nexit 101\n' > "$policy"
    chmod 755 "$policy"
    made_policy=1
  fi
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } > "$apt_log" 2>&1 || rc=$?
  [ -z "$made_policy" ] || rm -f "$policy"
  [ "$rc" -eq 0 ] || { cat "$apt_log" >&2; rm -f "$apt_log"; fail "apt-get install $* exited $rc"; }
  rm -f "$apt_log"
  echo "   (apt-get: $((SECONDS - t0)) s)"
}
missing=()
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
for t in ssh scp ssh-keygen; do
  command -v "$t" >/dev/null || { missing+=(openssh-client); break; }
done
command -v parallel-ssh >/dev/null && command -v parallel-scp >/dev/null || missing+=(pssh)
# python3 runs the helpers here; /usr/bin/python3 is the nodes' Python for
# Ansible's modules (named, not discovered: discovery may pick a shim from
# PATH, such as pyenv's, that has no interpreter behind it)
[ -x /usr/bin/python3 ] && command -v python3 >/dev/null || missing+=(python3)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

# ---------------------------------------------------------------- temp dir
work=$(mktemp -d "${TMPDIR:-/tmp}/klf-fleet.XXXXXX")
chmod 755 "$work"
sshd_pid=
made_privsep=
home_ansible() { find "$HOME/.ansible" -printf '%p %y %s %T@\n' 2>/dev/null | LC_ALL=C sort || true; }
home_ansible_before=$(home_ansible)
cleanup() {
  local rc=$?
  if [ -n "$sshd_pid" ]; then
    kill "$sshd_pid" 2>/dev/null || true
    wait "$sshd_pid" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ -s "$work/sshd/log" ]; then
    echo "sshd's log (last lines):" >&2
    tail -20 "$work/sshd/log" >&2
  fi
  [ -z "$made_privsep" ] || rmdir /run/sshd 2>/dev/null || true
  rm -rf "$work"
  if [ "$rc" -eq 0 ]; then
    echo "fleet recipes: PASS in $((SECONDS - started)) s"
  else
    echo "fleet recipes: FAIL (exit $rc) after $((SECONDS - started)) s" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
say "work dir $work; static klf $static ($(stat -c %s "$static") bytes); central klf $central"
"$static" --version
"$central" --version

say "ansible-core $ANSIBLE_CORE_VERSION from PyPI into a virtualenv"
# Ansible's settings, all here: nothing read from or written to $HOME or
# /etc/ansible. The "nodes'" remote temp is in the temp dir too; no SSH
# ControlMaster (whose ControlPersist would outlive the run); pipelining
# (fewer connections a task); /usr/bin/python3 is the nodes' Python.
a=$work/ansible-env
mkdir -p "$a/home" "$a/local-tmp" "$a/remote-tmp" "$a/cp"
: > "$a/ansible.cfg"
export ANSIBLE_CONFIG=$a/ansible.cfg ANSIBLE_HOME=$a/home ANSIBLE_LOCAL_TEMP=$a/local-tmp \
  ANSIBLE_REMOTE_TEMP=$a/remote-tmp ANSIBLE_SSH_CONTROL_PATH_DIR=$a/cp \
  ANSIBLE_SSH_ARGS='-o ControlMaster=no' ANSIBLE_PIPELINING=True ANSIBLE_NOCOLOR=1 \
  ANSIBLE_RETRY_FILES_ENABLED=False ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 ANSIBLE_HOST_KEY_CHECKING=True
# Ansible refuses to run unless the locale's encoding is UTF-8 (a fresh
# machine or CI often has none set): C.UTF-8 is in every glibc
in_utf8() { LC_ALL=C.UTF-8 LANG=C.UTF-8 "$@"; }
t=$SECONDS
if ! python3 -m venv "$work/venv" 2>"$work/venv.err"; then
  rm -rf "$work/venv"
  apt_install python3-venv
  python3 -m venv "$work/venv"
fi
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir "ansible-core==$ANSIBLE_CORE_VERSION"
in_utf8 "$work/venv/bin/ansible" --version | sed -n 1p
echo "   (virtualenv and pip: $((SECONDS - t)) s)"

# ------------------------------------------------------------------- sshd
say "an sshd of its own on 127.0.0.1"
user=$(id -un)
mkdir -p "$work/sshd" "$work/client"
ssh-keygen -q -t ed25519 -N '' -C klf-fleet-host -f "$work/sshd/host_ed25519_key"
ssh-keygen -q -t ed25519 -N '' -C klf-fleet-client -f "$work/client/id_ed25519"
cp "$work/client/id_ed25519.pub" "$work/sshd/authorized_keys"
if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then
  # sshd run as root wants its privilege separation directory (Debian's
  # service makes it at start)
  mkdir -m 755 /run/sshd
  made_privsep=1
fi
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
ssh_cfg=$work/client/ssh_config
for _attempt in 1 2 3; do
  port=$(free_port)
  cat > "$work/sshd/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey $work/sshd/host_ed25519_key
PidFile $work/sshd/sshd.pid
AuthorizedKeysFile $work/sshd/authorized_keys
AllowUsers $user
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
PrintMotd no
# scp (SFTP protocol since OpenSSH 9) and Ansible's fetch need SFTP
Subsystem sftp internal-sftp
# parallel-ssh sends these: one command can name each node's own folder
AcceptEnv PSSH_HOST PSSH_NODENUM PSSH_NUMNODES
EOF
  /usr/sbin/sshd -t -f "$work/sshd/sshd_config"
  /usr/sbin/sshd -f "$work/sshd/sshd_config" -D -e 2>>"$work/sshd/log" &
  sshd_pid=$!
  printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$work/sshd/host_ed25519_key.pub")" > "$work/client/known_hosts"
  cat > "$ssh_cfg" <<EOF
Host node-1 node-2 node-3
  HostName 127.0.0.1
  Port $port
  User $user
  IdentityFile $work/client/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $work/client/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
  LogLevel ERROR
EOF
  # wait until it takes a login, 20 s at most
  deadline=$((SECONDS + 20))
  until ssh -F "$ssh_cfg" node-1 true 2>"$work/ssh-wait.err"; do
    if ! kill -0 "$sshd_pid" 2>/dev/null; then
      wait "$sshd_pid" 2>/dev/null || true
      sshd_pid=
      echo "sshd on port $port exited (port taken?), trying another" >&2
      continue 2
    fi
    [ "$SECONDS" -lt "$deadline" ] || { cat "$work/ssh-wait.err" >&2; fail "sshd on port $port took no login in 20 s"; }
    sleep 0.2
  done
  break
done
[ -n "$sshd_pid" ] || fail "sshd did not start"
echo "   sshd pid $sshd_pid on 127.0.0.1:$port; ssh -F $ssh_cfg node-1 true: ok"
hosts=(node-1 node-2 node-3)

# ---------------------------------------------------------------- helpers
# each "node" is a folder: NODE/kafka (its log dirs, a capture's broker-N)
# and NODE/tmp (its /tmp, where the binary and remote digests go)
declare -A logdirs
reldirs=()
setup_nodes() { # PASS SCENARIO LOGDIR... (relative to the broker folder; . = itself)
  local pass=$1 scenario=$2 n h d
  shift 2
  reldirs=("$@")
  for n in 1 2 3; do
    h=node-$n
    mkdir -p "$work/$pass/$h/tmp"
    cp -a "$repo/testdata/kafka/$scenario/broker-$n" "$work/$pass/$h/kafka"
    logdirs[$h]=
    for d in "$@"; do
      if [ "$d" = . ]; then logdirs[$h]+=" $work/$pass/$h/kafka"; else logdirs[$h]+=" $work/$pass/$h/kafka/$d"; fi
    done
    logdirs[$h]=${logdirs[$h]# }
  done
}
manifest() { # DIR: every entry's type, size, mode, mtime and, for files, sha256
  (cd "$1" && find . -printf '%y %s %m %T@ %p\n' | LC_ALL=C sort -k5 &&
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}
remote() { # HOST ARG...: the command run on HOST, each argument quoted
  local h=$1
  shift
  ssh -F "$ssh_cfg" "$h" "$(printf '%q ' "$@")"
}
check_clean_nodes() { # PASS: no binary, no digest left on any node
  local pass=$1 h left
  for h in "${hosts[@]}"; do
    left=$(find "$work/$pass/$h/tmp" -mindepth 1 -print)
    [ -z "$left" ] || fail "left on $h after the recipe: $left"
  done
}
# The central step of every recipe: klf diff over the gathered digests
# must give the answer of klf diff over the node trees.
compare() { # PASS RECIPE DIR_RC
  local pass=$1 recipe=$2 dir_rc=$3 rc=0 h specs=() digests=()
  for h in "${hosts[@]}"; do
    digests+=("$work/$pass/$recipe/$h.klfd")
    specs+=("$h=$work/$pass/$h/kafka=$work/$pass/$recipe/$h.klfd")
  done
  show "$central" diff --format json "${digests[@]}"
  "$central" diff --format json "${digests[@]}" > "$work/$pass/diff-$recipe.json" 2> "$work/$pass/diff-$recipe.err" || rc=$?
  if [ "$rc" -ne "$dir_rc" ]; then
    cat "$work/$pass/diff-$recipe.err" >&2
    fail "$pass/$recipe: klf diff exited $rc on the digests, $dir_rc on the directories"
  fi
  python3 "$here/same_answer.py" "$work/$pass/diff-dirs.json" "$work/$pass/diff-$recipe.json" "${specs[@]}" ||
    fail "$pass/$recipe: klf diff answers differently on the digests"
  echo "   $pass/$recipe: exit $rc on the digests as on the directories"
}

# ---------------------------------------------------------------- recipes
recipe_ssh() { # PASS
  local pass=$1 h pids=() i rc
  local out=$work/$pass/ssh
  mkdir -p "$out"
  say "$pass: ssh recipe (scp the binary, ssh NODE klf digest ... -o - > NODE.klfd, in parallel)"
  for h in "${hosts[@]}"; do
    run scp -q -F "$ssh_cfg" "$static" "$h:$work/$pass/$h/tmp/klf"
  done
  for h in "${hosts[@]}"; do
    # shellcheck disable=SC2086 # the log dirs are words
    show ssh -F "$ssh_cfg" "$h" "$work/$pass/$h/tmp/klf" digest "${DIGEST_OPTIONS[@]}" ${logdirs[$h]} -o - '>' "$out/$h.klfd"
    # shellcheck disable=SC2086
    remote "$h" "$work/$pass/$h/tmp/klf" digest "${DIGEST_OPTIONS[@]}" ${logdirs[$h]} -o - > "$out/$h.klfd" &
    pids+=($!)
  done
  for i in "${!hosts[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    [ "$rc" -eq 0 ] || fail "ssh ${hosts[$i]} klf digest exited $rc"
  done
  for h in "${hosts[@]}"; do
    run ssh -F "$ssh_cfg" "$h" rm -f "$work/$pass/$h/tmp/klf"
  done
  ls -l "$out"
}

recipe_pssh() { # PASS
  local pass=$1 h rc=0
  local out=$work/$pass/pssh shared=$work/$pass/pssh-tmp
  say "$pass: pssh recipe (parallel-scp the binary, parallel-ssh -o DIR klf digest ... -o -)"
  printf '%s\n' "${hosts[@]}" > "$work/$pass/hosts.txt"
  # On real nodes each has its own /tmp/klf; the three "nodes" here share
  # one disk, so the binary goes to one folder, copied one node at a time
  # (-p 1), and each node's log dirs are found through $PSSH_HOST, which
  # parallel-ssh sends to each node.
  mkdir -p "$shared"
  run parallel-scp -h "$work/$pass/hosts.txt" -x "-F $ssh_cfg" -p 1 "$static" "$shared/klf" >/dev/null
  local d dirs=''
  for d in "${reldirs[@]}"; do
    if [ "$d" = . ]; then dirs+=" $work/$pass/\$PSSH_HOST/kafka"; else dirs+=" $work/$pass/\$PSSH_HOST/kafka/$d"; fi
  done
  dirs=${dirs# }
  show parallel-ssh -h "$work/$pass/hosts.txt" -x "-F $ssh_cfg" -t 0 -o "$out" -e "$out.err" \
    "$shared/klf digest ${DIGEST_OPTIONS[*]} $dirs -o -"
  parallel-ssh -h "$work/$pass/hosts.txt" -x "-F $ssh_cfg" -t 0 -o "$out" -e "$out.err" \
    "$shared/klf digest ${DIGEST_OPTIONS[*]} $dirs -o -" || rc=$?
  [ "$rc" -eq 0 ] || { cat "$out.err"/* >&2; fail "parallel-ssh klf digest exited $rc"; }
  for h in "${hosts[@]}"; do mv "$out/$h" "$out/$h.klfd"; done
  run parallel-ssh -h "$work/$pass/hosts.txt" -x "-F $ssh_cfg" "rm -f $shared/klf" >/dev/null
  [ -z "$(find "$shared" -mindepth 1)" ] || fail "pssh recipe left the binary"
  ls -l "$out"
}

ansible_setup() { # PASS: the inventory
  local pass=$1 h
  {
    echo "[kafka]"
    for h in "${hosts[@]}"; do
      echo "$h ansible_host=127.0.0.1 klf_dirs='${logdirs[$h]}' klf_tmp=$work/$pass/$h/tmp"
    done
    echo
    echo "[kafka:vars]"
    echo "ansible_port=$port"
    echo "ansible_user=$user"
    echo "ansible_ssh_private_key_file=$work/client/id_ed25519"
    echo "ansible_ssh_common_args='-o UserKnownHostsFile=$work/client/known_hosts -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes'"
  } > "$work/$pass/inventory.ini"
}

ansible_adhoc() { # ARG... of ansible: shows it, prints each host's status line (all of it on failure)
  local rc=0 log=$work/ansible.log
  show ansible "$@"
  in_utf8 "$work/venv/bin/ansible" "$@" > "$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then cat "$log" >&2; fail "ansible $* exited $rc"; fi
  grep -E '^node-[0-9]+ \| ' "$log" | sed 's/^/   /'
}

recipe_ansible_adhoc() { # PASS
  local pass=$1
  local out=$work/$pass/ansible_adhoc inv=$work/$pass/inventory.ini
  mkdir -p "$out"
  say "$pass: Ansible ad-hoc recipe (copy, command klf digest -o {{ klf_tmp }}/HOST.klfd, fetch flat=yes, file absent)"
  ansible_adhoc kafka -i "$inv" -m ansible.builtin.copy -a "src=$static dest={{ klf_tmp }}/klf mode=0755"
  ansible_adhoc kafka -i "$inv" -m ansible.builtin.command \
    -a "{{ klf_tmp }}/klf digest ${DIGEST_OPTIONS[*]} {{ klf_dirs }} -o {{ klf_tmp }}/{{ inventory_hostname }}.klfd"
  ansible_adhoc kafka -i "$inv" -m ansible.builtin.fetch \
    -a "src={{ klf_tmp }}/{{ inventory_hostname }}.klfd dest=$out/ flat=yes"
  ansible_adhoc kafka -i "$inv" -m ansible.builtin.file -a "path={{ klf_tmp }}/klf state=absent"
  ansible_adhoc kafka -i "$inv" -m ansible.builtin.file -a "path={{ klf_tmp }}/{{ inventory_hostname }}.klfd state=absent"
  ls -l "$out"
}

recipe_ansible_playbook() { # PASS
  local pass=$1
  local out=$work/$pass/ansible_playbook
  mkdir -p "$out"
  say "$pass: Ansible playbook recipe (tests/fleet/klf-digest.yml)"
  run in_utf8 "$work/venv/bin/ansible-playbook" -i "$work/$pass/inventory.ini" "$here/klf-digest.yml" \
    -e "klf_binary=$static" -e "klf_digests=$out/" > "$work/$pass/playbook.log" ||
    { cat "$work/$pass/playbook.log" >&2; fail "ansible-playbook failed"; }
  grep -A4 '^PLAY RECAP' "$work/$pass/playbook.log"
  ls -l "$out"
}

run_pass() { # PASS SCENARIO "RECIPE..." LOGDIR...
  local pass=$1 scenario=$2 recipes=$3 started_pass=$SECONDS t dir_rc=0 h recipe trees=()
  shift 3
  say "pass $pass: testdata/kafka/$scenario, log dirs of a node: $*"
  setup_nodes "$pass" "$scenario" "$@"
  for h in "${hosts[@]}"; do
    manifest "$work/$pass/$h/kafka" > "$work/$pass/$h.before"
    trees+=("$work/$pass/$h/kafka")
    echo "   $h: ${logdirs[$h]}"
  done
  show "$central" diff --format json "${trees[@]}"
  "$central" diff --format json "${trees[@]}" > "$work/$pass/diff-dirs.json" 2> "$work/$pass/diff-dirs.err" || dir_rc=$?
  [ "$dir_rc" -le 1 ] || { cat "$work/$pass/diff-dirs.err" >&2; fail "klf diff on the directories exited $dir_rc"; }
  echo "   klf diff on the directories: exit $dir_rc"

  ansible_setup "$pass"
  for recipe in $recipes; do
    t=$SECONDS
    "recipe_$recipe" "$pass"
    echo "   ($recipe: $((SECONDS - t)) s)"
  done

  say "$pass: the central step, klf diff --format json over each recipe's digests"
  for recipe in $recipes; do
    compare "$pass" "$recipe" "$dir_rc"
  done
  for h in "${hosts[@]}"; do
    manifest "$work/$pass/$h/kafka" > "$work/$pass/$h.after"
    cmp -s "$work/$pass/$h.before" "$work/$pass/$h.after" ||
      { diff "$work/$pass/$h.before" "$work/$pass/$h.after" >&2 || true; fail "$pass: $h's log dirs changed"; }
  done
  check_clean_nodes "$pass"
  echo "   $pass: evidence unchanged on every node ($(grep -c '^f ' "$work/$pass/node-1.before") files on node-1); no binary or digest left on a node; $((SECONDS - started_pass)) s"
}

# every recipe on one log dir a node; on two (JBOD) all but the Ansible
# ad-hoc one, whose modules and klf_dirs the playbook runs the same way
run_pass unclean unclean "ssh pssh ansible_adhoc ansible_playbook" .
run_pass jbod jbod "ssh pssh ansible_playbook" d1 d2

[ "$(home_ansible)" = "$home_ansible_before" ] || fail "Ansible wrote under $HOME/.ansible"
