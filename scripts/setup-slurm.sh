#!/usr/bin/env bash
# Start a real Slurm cluster on this host, idempotently, for `executor: slurm` and its tests:
#  - installs Debian's slurm-wlm, slurmdbd, munge and mariadb-server when missing (needs root + apt);
#  - creates the munge key, writes /etc/slurm/slurm.conf and slurmdbd.conf for a cluster
#    `perfmine` of this host alone, on loopback only: one controller (slurmctld), two compute
#    nodes (pm1, pm2: two slurmd daemons on this host, `slurmd -N`, distinct ports), and the
#    accounting daemon (slurmdbd over MariaDB) so that `sacct` answers;
#  - starts munged, mariadb, slurmdbd, slurmctld and the slurmds in the background;
#  - waits until `sinfo` shows the nodes idle (PERFMINE_SLURM_WAIT seconds, default 90).
# Accounting: slurmdbd + MariaDB, not `accounting_storage/none`. Without slurmdbd, `sacct`
# answers nothing at all in Slurm 22.05 (the filetxt accounting plugin is gone), and the
# executor reads a finished job's state (COMPLETED, TIMEOUT, CANCELLED, NODE_FAIL) from sacct.
# Safe to run again: every step is skipped when already done. PERFMINE_SLURM_NODES=1 gives one node.
set -euo pipefail

log() { printf '[setup-slurm] %s\n' "$*" >&2; }
if [ "$(id -u)" != 0 ]; then
  log "must run as root (it installs packages and starts system daemons); try: sudo bash $0"
  exit 1
fi

nodes=${PERFMINE_SLURM_NODES:-2}
wait_s=${PERFMINE_SLURM_WAIT:-90}
conf_dir=/etc/slurm
state_dir=/var/spool/slurmctld
log_dir=/var/log/slurm
db_pass=perfmine-slurm-loopback

cluster_up() {
  local idle
  idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -c -E ' (idle|mix|alloc)$' || true)
  [ "$idle" -ge "$nodes" ]
}

need=()
command -v slurmctld >/dev/null 2>&1 || need+=(slurm-wlm)
command -v slurmdbd >/dev/null 2>&1 || need+=(slurmdbd)
command -v munged >/dev/null 2>&1 || need+=(munge)
command -v mariadbd >/dev/null 2>&1 || need+=(mariadb-server)
if [ "${#need[@]}" -gt 0 ]; then
  log "installing ${need[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  # apt-get update only once per machine: skip it when package lists are already present.
  if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then apt-get update -qq; fi
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi

mkdir -p "$conf_dir" "$state_dir" "$log_dir" /var/spool/slurmd /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
chmod 0755 /run/munge

# --- munge ---
if [ ! -s /etc/munge/munge.key ]; then
  log "creating the munge key"
  mkdir -p /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
fi
chown munge:munge /etc/munge /etc/munge/munge.key
chmod 0700 /etc/munge
chmod 0400 /etc/munge/munge.key
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  log "starting munged"
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 1 20); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.5; done
fi

# --- MariaDB and slurmdbd (accounting, for sacct) ---
if ! mariadb-admin ping >/dev/null 2>&1; then
  log "starting mariadb (loopback only)"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  [ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql >/dev/null
  # setsid: a session of its own, so that it outlives the caller's process group.
  setsid -f mariadbd-safe --user=mysql --bind-address=127.0.0.1 >"$log_dir/mariadb.log" 2>&1
  for _ in $(seq 1 60); do mariadb-admin ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
mariadb -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$db_pass';
  GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"

cat >"$conf_dir/slurmdbd.conf" <<EOF
# Written by perfmine scripts/setup-slurm.sh: accounting for a one-host test cluster.
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=root
LogFile=$log_dir/slurmdbd.log
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$db_pass
StorageLoc=slurm_acct_db
EOF
chmod 0600 "$conf_dir/slurmdbd.conf"

# --- slurm.conf ---
node_lines=""
for i in $(seq 1 "$nodes"); do
  node_lines+="NodeName=pm$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((17000 + i)) CPUs=2 RealMemory=4000 State=UNKNOWN"$'\n'
done
node_list=$(seq -s, -f 'pm%g' 1 "$nodes")
new_conf=$(mktemp)
cat >"$new_conf" <<EOF
# Written by perfmine scripts/setup-slurm.sh: a cluster of this host alone, loopback only.
ClusterName=perfmine
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=6817
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$state_dir
SlurmdSpoolDir=/var/spool/slurmd/%n
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd-%n.pid
SlurmctldLogFile=$log_dir/slurmctld.log
SlurmdLogFile=$log_dir/slurmd-%n.log
# Containers (gVisor, Docker) have no usable cgroup tree: track processes by their parent.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# The nodes share this host's cores; the declared CPUs and memory need not match the hardware.
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# a job without --mem gets this much per CPU (not the whole node), so that small jobs share a node
DefMemPerCPU=1000
SchedulerType=sched/backfill
# Accounting through slurmdbd, so that sacct answers for finished jobs.
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
JobCompType=jobcomp/none
# A job over its time limit is signalled and killed promptly (tests kill jobs by time limit).
KillWait=2
OverTimeLimit=0
# Finished jobs stay visible to squeue/scontrol for a while; sacct keeps them for good.
MinJobAge=300
MaxJobCount=20000
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
MpiDefault=none
$node_lines
PartitionName=debug Nodes=$node_list Default=YES MaxTime=INFINITE State=UP
EOF
conf_changed=0
if ! cmp -s "$new_conf" "$conf_dir/slurm.conf"; then conf_changed=1; mv "$new_conf" "$conf_dir/slurm.conf"; chmod 0644 "$conf_dir/slurm.conf"; else rm -f "$new_conf"; fi
if [ "$conf_changed" = 0 ] && cluster_up; then
  log "Slurm cluster already up: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"
  exit 0
fi

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

if ! pid_alive /run/slurmdbd.pid; then
  log "starting slurmdbd"
  slurmdbd
  for _ in $(seq 1 60); do sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.5; done
fi
if ! sacctmgr -n -P list cluster format=cluster 2>/dev/null | grep -qx perfmine; then
  sacctmgr -i add cluster perfmine >/dev/null
fi

if pid_alive /run/slurmctld.pid; then
  if [ "$conf_changed" = 1 ]; then log "slurm.conf changed: scontrol reconfigure"; scontrol reconfigure >/dev/null 2>&1 || true; fi
else
  log "starting slurmctld"
  slurmctld
fi
for i in $(seq 1 "$nodes"); do
  if ! pid_alive "/run/slurmd-pm$i.pid"; then
    log "starting slurmd for node pm$i"
    mkdir -p "/var/spool/slurmd/pm$i"
    slurmd -N "pm$i"
  fi
done

for _ in $(seq 1 "$((wait_s * 2))"); do
  if cluster_up; then
    # Nodes left down by an earlier crash come back.
    scontrol update nodename="$node_list" state=resume >/dev/null 2>&1 || true
    log "Slurm cluster up: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"
    exit 0
  fi
  # a node that was down (e.g. from an earlier unclean stop) is resumed once its slurmd answers
  scontrol update nodename="$node_list" state=resume >/dev/null 2>&1 || true
  sleep 0.5
done
log "the cluster did not come up within ${wait_s}s; sinfo says:"
sinfo -N >&2 || true
tail -n 20 "$log_dir/slurmctld.log" >&2 || true
exit 1
