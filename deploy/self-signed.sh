#!/usr/bin/env bash
# Without cert-manager: a self-signed serving certificate for the webhook.
#   deploy/self-signed.sh [NAMESPACE] [DAYS]
# Makes a CA and a certificate for kubelint-ml-webhook.NAMESPACE.svc with openssl, stores them
# as the Secret kubelint-ml-webhook-tls, and writes the CA into the webhook configuration's
# caBundle. Apply deploy/ without certificate.yaml, then run this. Run it again before DAYS
# have passed: the pods load the new certificate without a restart.
set -euo pipefail
ns="${1:-kubelint-ml}"
days="${2:-365}"
svc="kubelint-ml-webhook"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$days" \
  -subj "/CN=kubelint-ml-ca" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$svc.$ns.svc" \
  -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
printf 'subjectAltName=DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local\n' "$svc" "$ns" "$svc" "$ns" > "$dir/ext"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
  -days "$days" -extfile "$dir/ext" -out "$dir/tls.crt" 2>/dev/null
kubectl -n "$ns" create secret tls "$svc-tls" --cert="$dir/tls.crt" --key="$dir/tls.key" \
  --dry-run=client -o yaml | kubectl apply -f -
ca="$(base64 < "$dir/ca.crt" | tr -d '\n')"
kubectl patch validatingwebhookconfiguration kubelint-ml --type=json \
  -p "[{\"op\": \"add\", \"path\": \"/webhooks/0/clientConfig/caBundle\", \"value\": \"$ca\"}]"
echo "kubelint-ml-webhook-tls and the webhook's caBundle updated (valid $days days)"
