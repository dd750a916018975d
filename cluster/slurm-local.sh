#!/usr/bin/env bash
# A real single-node SLURM cluster on localhost, from Debian's packages, to test cluster execution
# (tests/test_slurm.py, .ci/run). Debian 12 (Slurm 22.05), run as root; systemd is not needed.
#
#   bash cluster/slurm-local.sh up [--accounting]   install what is missing, start, wait until idle
#   bash cluster/slurm-local.sh down                stop what `up` started, by PID, and wait
#   bash cluster/slurm-local.sh status              exit 0 when the node answers and is usable
#
# Both verbs are idempotent: `up` on a running cluster checks it and returns, `down` on a stopped
# one does nothing. The cluster: munged, slurmctld and slurmd (one node: this machine, all its
# CPUs, partition `debug`). `--accounting` adds MariaDB and slurmdbd so that `sacct` works; without
# it, Snakemake's SLURM plugin must use `--slurm-status-command squeue` (finished jobs stay in
# `squeue --states=all` for MinJobAge=300 s), as workflow/profiles/slurm-local does.
#
# It refuses to touch a slurm.conf that it did not write (a machine with its own SLURM).
# `down` stops only the daemons that `up` started (listed in $STATE), each by its PID file.
set -euo pipefail

cmd=${1:-}
acct=${2:-}
NODE=$(hostname -s)
LOGDIR=/var/log/slurm
CONF=/etc/slurm/slurm.conf
STATE=/run/replaylab-slurm # one line per daemon that `up` started: <name> <pid file>
MARKER="# Written by replaylab cluster/slurm-local.sh"

usage() {
  echo "usage: bash cluster/slurm-local.sh up [--accounting] | down | status" >&2
  exit 2
}

say() { printf 'slurm-local: %s\n' "$*" >&2; }

wait_for() { # wait_for SECONDS CMD...: until CMD succeeds, or fail after SECONDS
  local limit=$1 end
  shift
  end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= end)); then
      say "timed out after ${limit}s waiting for: $*"
      return 1
    fi
    sleep 0.3
  done
}

alive() { # alive PIDFILE: the process of the PID file is running
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

started() { # started NAME PIDFILE: remember that `up` started this daemon
  mkdir -p "$STATE"
  echo "$2" >"$STATE/$1"
}

stop_pidfile() { # stop_pidfile NAME PIDFILE: SIGTERM its PID, wait up to 30 s for it to exit
  local name=$1 file=$2 pid
  if [ -s "$file" ]; then
    pid=$(cat "$file")
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 300); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if kill -0 "$pid" 2>/dev/null; then
        say "$name (pid $pid) did not stop after 30 s"
        return 1
      fi
      say "stopped $name (pid $pid)"
    fi
    rm -f "$file"
  fi
  rm -f "$STATE/$name"
}

node_idle() {
  sinfo -h -n "$NODE" -o %T 2>/dev/null | grep -Eqx 'idle|mixed|allocated'
}

need_root() {
  if [ "$(id -u)" != 0 ]; then
    say "must run as root (it installs Debian packages and starts daemons)"
    exit 1
  fi
}

install_packages() {
  local pkgs="munge slurmctld slurmd slurm-client" missing p
  [ "$acct" = --accounting ] && pkgs="$pkgs slurmdbd mariadb-server"
  missing=$(for p in $pkgs; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"; done)
  if [ -n "$missing" ]; then
    if ! command -v apt-get >/dev/null; then
      say "missing packages ($(echo $missing)) and no apt-get to install them"
      exit 1
    fi
    say "installing $(echo $missing)"
    apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
}

write_conf() { # the slurm.conf of this machine, to stdout
  local cpus mem accounting
  cpus=$(nproc)
  mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
  mem=$((mem - 1024))
  ((mem > 20000)) && mem=20000
  ((mem < 1000)) && mem=1000
  if [ "$acct" = --accounting ]; then
    accounting="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobAcctGatherType=jobacct_gather/linux"
  else
    accounting="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
  fi
  cat <<EOF
$MARKER: a single-node test cluster.
ClusterName=replaylab
SlurmctldHost=${NODE}(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=${LOGDIR}/slurmctld.log
SlurmdLogFile=${LOGDIR}/slurmd.log
MailProg=/bin/true
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=500
ReturnToService=2
MinJobAge=300
JobCompType=jobcomp/none
${accounting}
NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  [ -s /etc/munge/munge.key ] || mungekey --create --keyfile /etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key
  chmod 600 /etc/munge/munge.key
  install -d -o munge -g munge -m 0755 /run/munge
  if ! (munge -n | unmunge) >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    started munged /run/munge/munged.pid
    wait_for 10 sh -c 'munge -n | unmunge'
  fi
}

start_accounting() {
  install -d -o mysql -g mysql /run/mysqld
  if ! mariadb-admin ping >/dev/null 2>&1; then
    # mariadbd stays in the foreground: detach it so that it holds no caller's pipe open
    setsid /usr/sbin/mariadbd --user=mysql </dev/null >"$LOGDIR/mariadb.log" 2>&1 &
    started mariadbd /run/mysqld/mysqld.pid
    wait_for 60 mariadb-admin ping
  fi
  mariadb -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db;
    CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurm';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  install -m 600 -o slurm -g slurm /dev/stdin /etc/slurm/slurmdbd.conf <<EOF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=slurm
LogFile=${LOGDIR}/slurmdbd.log
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
EOF
  if ! alive /run/slurmdbd.pid; then
    /usr/sbin/slurmdbd
    started slurmdbd /run/slurmdbd.pid
  fi
  wait_for 60 sacctmgr -n list cluster
}

up() {
  need_root
  case "$acct" in "" | --accounting) ;; *) usage ;; esac
  if [ -e "$CONF" ] && ! head -n1 "$CONF" | grep -qF "$MARKER"; then
    say "$CONF exists and was not written by this script: this machine has its own SLURM; nothing done"
    exit 1
  fi
  install_packages
  install -d -o slurm -g slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd "$LOGDIR"
  start_munge
  local conf
  conf=$(write_conf)
  if [ -e "$CONF" ] && [ "$conf" = "$(cat "$CONF")" ] && alive /run/slurmctld.pid && alive /run/slurmd.pid &&
    { [ "$acct" != --accounting ] || alive /run/slurmdbd.pid; } && node_idle; then
    say "already up"
    sinfo
    return 0
  fi
  # a changed configuration: restart both daemons from it (a node with another slurm.conf is
  # refused by the controller for a while)
  stop_pidfile slurmd /run/slurmd.pid
  stop_pidfile slurmctld /run/slurmctld.pid
  printf '%s\n' "$conf" >"$CONF"
  [ "$acct" = --accounting ] && start_accounting
  /usr/sbin/slurmctld -c # -c: start with no jobs from an earlier run
  started slurmctld /run/slurmctld.pid
  /usr/sbin/slurmd
  started slurmd /run/slurmd.pid
  wait_for 60 node_idle
  srun --time=1 --quiet true # a job really runs
  say "up: node $NODE, partition debug$([ "$acct" = --accounting ] && echo ', with accounting (sacct)')"
  sinfo
}

down() {
  need_root
  if alive /run/slurmctld.pid; then
    scancel --user="$(id -un)" 2>/dev/null || true
  fi
  local name
  for name in slurmd slurmctld slurmdbd mariadbd munged; do
    if [ -e "$STATE/$name" ]; then
      stop_pidfile "$name" "$(cat "$STATE/$name")"
    fi
  done
  rmdir "$STATE" 2>/dev/null || true
  # Without a controller, a slurm.conf makes every client command wait ~10 s for it, and the
  # SLURM executor plugin runs `scontrol show config` whenever Snakemake starts: remove ours
  # (`up` writes it again), so that Snakemake starts at its usual speed once the cluster is down.
  if [ -e "$CONF" ] && head -n1 "$CONF" | grep -qF "$MARKER"; then
    rm -f "$CONF" /etc/slurm/slurmdbd.conf
  fi
  say "down"
}

case "$cmd" in
up) up ;;
down) down ;;
status) node_idle ;;
*) usage ;;
esac
