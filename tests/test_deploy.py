"""The deployment recipes under deploy/: Kubernetes manifests checked against the real 1.37 schemas
(kubernetes-validate, offline), the Dockerfile read and cross-checked against gocode itself, and
the HAProxy config checked by haproxy. No cluster or Docker engine is needed."""

from __future__ import annotations

import copy
import fnmatch
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import click
import kubernetes_validate
import pytest
import yaml

from gocode.cli import main as cli
from gocode.compile.modcache import MIN_GO
from gocode.serve.ops import HEALTH_PATH, READY_PATH
from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"
K8S_VERSION = "1.37.0"
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))


def docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def manifest(kind: str) -> dict:
    found = [d for p in MANIFESTS for d in docs(p) if d["kind"] == kind]
    assert len(found) == 1, kind
    return found[0]


def serve_options() -> set[str]:
    serve = cli.get_command(click.Context(cli), "serve")  # the group loads its commands when named
    assert serve is not None
    return {opt for p in serve.params for opt in p.opts}


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def instructions(name: str) -> list[str]:
    return [rest for word, rest in dockerfile() if word == name]


# --- Kubernetes -----------------------------------------------------------------------------


def test_there_are_the_manifests_a_deployment_needs():
    assert {d["kind"] for p in MANIFESTS for d in docs(p)} >= {"Deployment", "Service", "PodDisruptionBudget"}


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_manifest_is_valid_for_kubernetes(path):
    for doc in docs(path):
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_the_schema_checker_catches_mistakes():
    """A misspelt field and a wrong type fail: the check above can fail."""
    deployment = manifest("Deployment")
    typo = copy.deepcopy(deployment)
    typo["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = typo["spec"]["template"]["spec"]["containers"][
        0
    ].pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(typo, K8S_VERSION, strict=True)
    wrong = copy.deepcopy(deployment)
    wrong["spec"]["replicas"] = "three"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(wrong, K8S_VERSION, strict=True)


def test_deployment_probes_security_and_state_dir():
    spec = manifest("Deployment")["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    port = container["ports"][0]
    assert container["readinessProbe"]["httpGet"] == {"path": READY_PATH, "port": port["name"]}
    assert container["livenessProbe"]["httpGet"] == {"path": HEALTH_PATH, "port": port["name"]}
    assert str(port["containerPort"]) == instructions("EXPOSE")[0]
    # Non-root (the image's user), read-only root filesystem, writable state and tmp on emptyDirs.
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert str(spec["securityContext"]["runAsUser"]) in " ".join(instructions("RUN"))
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    env = {e["name"]: e for e in container["env"]}
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    for path in (env["GOCODE_STATE_DIR"]["value"], "/tmp"):
        assert "emptyDir" in volumes[mounts[path]], path
    # The token comes from a Secret, never from the manifest.
    assert env["GOCODE_TOKEN"]["valueFrom"]["secretKeyRef"]["key"]
    assert "value" not in env["GOCODE_TOKEN"]
    assert container["resources"]["requests"] and container["resources"]["limits"]
    # Every argument is an option `gocode serve` has.
    assert {a.split("=")[0] for a in container["args"]} <= serve_options()


def test_service_and_pdb_select_the_deployment_pods():
    labels = manifest("Deployment")["spec"]["template"]["metadata"]["labels"]
    service = manifest("Service")["spec"]
    assert service["selector"].items() <= labels.items()
    assert service["ports"][0]["targetPort"] == "http"
    assert manifest("PodDisruptionBudget")["spec"]["selector"]["matchLabels"].items() <= labels.items()


# --- Dockerfile -----------------------------------------------------------------------------


def test_dockerfile_base_image_has_a_go_gocode_accepts():
    (base,) = instructions("FROM")
    m = re.match(r"golang:(\d+)\.(\d+)", base)
    assert m and (int(m.group(1)), int(m.group(2))) >= MIN_GO, base


def test_dockerfile_copies_files_that_exist_and_are_not_ignored():
    ignored = [
        ln.strip() for ln in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines() if ln.strip()[:1] not in "#"
    ]
    for args in instructions("COPY"):
        *sources, _dest = shlex.split(args)
        for src in sources:
            assert (ROOT / src).exists(), src
            assert not any(fnmatch.fnmatch(src, pat) for pat in ignored), src
    # What pip installs from the copy is what the wheel needs.
    assert {"pyproject.toml", "go_templates", "gocode", "go.mod.tmpl", "go.sum.tmpl"} <= {
        s for args in instructions("COPY") for s in shlex.split(args)[:-1]
    }


def test_dockerfile_runs_gocode_commands_that_exist():
    commands = [c.strip(" ()") for run in instructions("RUN") for c in re.split(r"&&|\|\||\|", run)]
    # Each gocode command (after any VAR=value prefixes) names a real subcommand.
    used = [m.group(1) for c in commands if (m := re.match(r"(?:\w+=\S*\s+)*gocode (\w[\w-]*)", c))]
    assert {"warmup", "exec"} <= set(used)
    for sub in used:
        assert sub in cli.list_commands(click.Context(cli)), sub
    entry = yaml.safe_load(instructions("ENTRYPOINT")[0]) + yaml.safe_load(instructions("CMD")[0])
    assert entry[:2] == ["gocode", "serve"]
    assert {a for a in entry[2:] if a.startswith("--")} <= serve_options()
    assert entry[entry.index("--port") + 1] == instructions("EXPOSE")[0]


def test_dockerfile_env_names_are_read_by_gocode():
    source = "".join(p.read_text() for p in (ROOT / "gocode").rglob("*.py"))
    names = re.findall(r"\b(GOCODE_[A-Z_]+)=", " ".join(instructions("ENV")))
    assert {"GOCODE_CACHE_DIR", "GOCODE_STATE_DIR"} <= set(names)
    for name in names:
        assert f'"{name}"' in source, name


def test_dockerfile_runs_as_non_root_with_a_health_check():
    users = instructions("USER")
    assert users and users[-1] not in ("root", "0")
    (check,) = instructions("HEALTHCHECK")
    assert f"127.0.0.1:{instructions('EXPOSE')[0]}{HEALTH_PATH}" in check
    # The cache is warmed and then frozen; the state dir is separate.
    runs = " ".join(instructions("RUN"))
    assert runs.index("gocode warmup") < runs.index("chmod -R a-w")


# --- load balancers -------------------------------------------------------------------------


def test_haproxy_config_is_valid():
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.fail("haproxy is not installed: run `make setup`")
    proc = subprocess.run(
        [haproxy, "-c", "-f", str(DEPLOY / "haproxy" / "haproxy.cfg")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (DEPLOY / "haproxy" / "haproxy.cfg").read_text()
    assert f"uri {READY_PATH}" in text and "balance roundrobin" in text and "retry-on conn-failure" in text
