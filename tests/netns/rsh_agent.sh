#!/bin/bash
# mpirun's remote shell (plm_rsh_agent) for namespace-hosts: "rsh_agent.sh [opts] HOST CMD..."
# runs CMD in the host whose address is HOST (10.77.0.N -> host N-1) of fixture
# $CHORUS_NETNS_TAG, the way ssh would run it on a real node.
set -euo pipefail
while [[ $# -gt 0 && $1 == -* ]]; do shift; done  # ssh-style options mpirun may pass
host=$1; shift
case "$host" in
  10.77.0.*) idx=$(( ${host##*.} - 1 )) ;;
  *) echo "rsh_agent.sh: unknown namespace-host '$host'" >&2; exit 2 ;;
esac
exec "$(dirname "$0")/netns.sh" exec "$CHORUS_NETNS_TAG" "$idx" bash -c "$*"
