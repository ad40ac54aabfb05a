#!/bin/sh
# Installs the orch node agent on this machine as a systemd service and joins the cluster.
#
#   sudo deploy/systemd/install-node.sh --server https://HOST:6443 --token <id>.<secret> \
#        [--ca-cert-hash sha256:<hex>] [--node-name NAME] [--args "--max-pods=50 ..."]
#
# Run it from a built checkout (`npm install && node scripts/build.mjs`). It copies the built
# tree to /opt/orch, installs the runtime dependencies there, writes /etc/orch/node-agent.env
# and enables orch-node-agent.service. Running it again updates the files and restarts.
set -eu

SERVER=''
TOKEN=''
HASH=''
NAME=''
ARGS=''
while [ $# -gt 0 ]; do
  case "$1" in
    --server) SERVER="$2"; shift 2 ;;
    --token) TOKEN="$2"; shift 2 ;;
    --ca-cert-hash) HASH="$2"; shift 2 ;;
    --node-name) NAME="$2"; shift 2 ;;
    --args) ARGS="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "install-node.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$SERVER" ] && [ -n "$TOKEN" ] || { echo 'install-node.sh: --server and --token are required' >&2; exit 2; }
echo "$TOKEN" | grep -Eq '^[a-z0-9]{6}\.[a-z0-9]{16}$' || { echo 'install-node.sh: --token must look like [a-z0-9]{6}.[a-z0-9]{16}' >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo 'install-node.sh: run as root (it writes /opt, /etc and /var/lib)' >&2; exit 1; }

NODE_BIN="$(command -v node || true)"
[ -n "$NODE_BIN" ] || { echo 'install-node.sh: node (>= 20) is not on PATH' >&2; exit 1; }
MAJOR="$("$NODE_BIN" -p 'process.versions.node.split(".")[0]')"
[ "$MAJOR" -ge 20 ] || { echo "install-node.sh: node $MAJOR is too old; 20 or later is needed" >&2; exit 1; }

SRC="$(cd "$(dirname "$0")/../.." && pwd)"
[ -f "$SRC/dist/apps/node-agent/src/main.js" ] || { echo "install-node.sh: $SRC/dist is not built: run node scripts/build.mjs first" >&2; exit 1; }

echo "installing the node agent from $SRC into /opt/orch"
mkdir -p /opt/orch
cp "$SRC/package.json" "$SRC/package-lock.json" /opt/orch/
rm -rf /opt/orch/dist
cp -R "$SRC/dist" /opt/orch/dist
# Runtime dependencies only; the agent needs no native module (better-sqlite3 is the gateway's).
(cd /opt/orch && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)

mkdir -p /etc/orch
umask 077
cat > /etc/orch/node-agent.env <<ENV
ORCH_NODE=$NODE_BIN
ORCH_SERVER=$SERVER
ORCH_TOKEN=$TOKEN
ORCH_CA_CERT_HASH=$HASH
ORCH_NODE_NAME=$NAME
ORCH_NODE_AGENT_ARGS=$ARGS
ENV
umask 022

install -m 0644 "$SRC/deploy/systemd/orch-node-agent.service" /etc/systemd/system/orch-node-agent.service
systemctl daemon-reload
systemctl enable orch-node-agent.service
systemctl restart orch-node-agent.service
echo 'orch-node-agent.service is running; follow it with: journalctl -u orch-node-agent -f'
