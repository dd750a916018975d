#!/usr/bin/env bash
# Status command of the cluster-generic profile: `status-slurm.sh <SLURM job id>` prints exactly one
# of success, failed or running, and always exits 0 (another exit code stops Snakemake with
# "Failed to obtain job status").
# The state comes from squeue (finished jobs stay there for MinJobAge, 300 s by default), then
# from sacct (clusters with accounting), then from scontrol.
jobid="${1%%;*}" # `sbatch --parsable` may print "<id>;<cluster>"
state=$(squeue -h -j "$jobid" --states=all -o %T 2>/dev/null | head -n1)
if [ -z "$state" ]; then
  state=$(sacct -n -X -P -j "$jobid" -o State 2>/dev/null | head -n1 | cut -d' ' -f1)
fi
if [ -z "$state" ]; then
  state=$(scontrol show job "$jobid" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n1)
fi
case "$state" in
COMPLETED) echo success ;;
PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUED | REQUEUE_HOLD | REQUEUE_FED | RESIZING | SIGNALING | STAGE_OUT | STOPPED | RESV_DEL_HOLD) echo running ;;
"") echo running ;; # not known (yet, or the controller is busy): ask again later
*) echo failed ;;   # FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, BOOT_FAIL, DEADLINE, PREEMPTED
esac
exit 0
