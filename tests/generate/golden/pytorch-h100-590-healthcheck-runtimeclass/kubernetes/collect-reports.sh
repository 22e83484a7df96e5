#!/usr/bin/env bash
# Copy the latest gpusetup diagnose report of every GPU node into one folder.
# Usage: kubernetes/collect-reports.sh [NAMESPACE] [OUTPUT_DIR]
set -euo pipefail
namespace="${1:-default}"
out="${2:-gpusetup-reports}"
mkdir -p "${out}"
kubectl get pods -n "${namespace}" -l app.kubernetes.io/name=gpusetup-diagnose \
  -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{"\n"}{end}' |
while read -r pod node; do
  if kubectl exec -n "${namespace}" "${pod}" -- cat "/reports/${node}.json" > "${out}/${node}.json"; then
    echo "saved ${out}/${node}.json"
  else
    echo "no report yet from ${node} (pod ${pod})" >&2
    rm -f "${out}/${node}.json"
  fi
done
