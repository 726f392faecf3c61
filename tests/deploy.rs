//! deploy/: the manifests parse, and every environment variable they name is one the
//! code reads (and every one the code reads is documented in deploy/.env.example).

use gpu_advisor::config::ENV_VARS;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

fn read(p: &str) -> String {
    std::fs::read_to_string(deploy().join(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn is_var(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn known() -> BTreeSet<&'static str> {
    ENV_VARS.iter().copied().collect()
}

fn check(names: impl IntoIterator<Item = String>, file: &str) -> usize {
    let known = known();
    let mut n = 0;
    for name in names {
        assert!(
            known.contains(name.as_str()),
            "{file} names {name}, which the code does not read"
        );
        n += 1;
    }
    n
}

#[test]
fn env_example_documents_every_variable() {
    let names: BTreeSet<String> = read(".env.example")
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim().to_string()))
        .collect();
    check(names.clone(), ".env.example");
    for v in ENV_VARS {
        assert!(names.contains(*v), ".env.example lacks {v}");
    }
}

#[test]
fn compose_parses_and_names_known_variables() {
    let doc: serde_yaml::Value =
        serde_yaml::from_str(&read("compose.yaml")).expect("compose.yaml parses");
    let env = doc["services"]["gpu-advisor"]["environment"]
        .as_mapping()
        .expect("environment");
    let names = env.keys().filter_map(|k| k.as_str().map(String::from));
    assert!(check(names, "compose.yaml") >= 2);
    assert!(doc["services"]["redis"].is_mapping());
    // Redis keeps delivery ids and offsets across its restarts: persistent, on a volume.
    let command: Vec<&str> = doc["services"]["redis"]["command"]
        .as_sequence()
        .expect("redis command")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(
        command.windows(2).any(|w| w == ["--appendonly", "yes"]),
        "{command:?}"
    );
    assert!(doc["services"]["redis"]["volumes"].is_sequence());
}

#[test]
fn kubernetes_manifests_parse_and_name_known_variables() {
    let mut kinds = Vec::new();
    let mut names = Vec::new();
    for file in ["k8s/deployment.yaml", "k8s/secret.yaml"] {
        for doc in serde_yaml::Deserializer::from_str(&read(file)) {
            let v = serde_yaml::Value::deserialize(doc).unwrap_or_else(|e| panic!("{file}: {e}"));
            kinds.push(v["kind"].as_str().unwrap_or("").to_string());
            if let Some(data) = v["stringData"].as_mapping() {
                names.extend(data.keys().filter_map(|k| k.as_str().map(String::from)));
            }
            for c in v["spec"]["template"]["spec"]["containers"]
                .as_sequence()
                .into_iter()
                .flatten()
            {
                for e in c["env"].as_sequence().into_iter().flatten() {
                    names.push(e["name"].as_str().unwrap_or("").to_string());
                }
                // Ready only once every configured chat adapter is up.
                assert!(c["readinessProbe"]["httpGet"]["path"] == "/readyz");
                assert!(c["livenessProbe"]["httpGet"]["path"] == "/healthz");
            }
            if v["kind"] == "Deployment" {
                assert!(v["spec"]["replicas"].as_u64().unwrap_or(0) >= 2);
            }
        }
    }
    for k in ["Deployment", "Service", "HorizontalPodAutoscaler", "Secret"] {
        assert!(kinds.iter().any(|x| x == k), "{k} missing: {kinds:?}");
    }
    assert!(
        names.iter().any(|n| n == "GPU_ADVISOR_MAX_CONNECTIONS"),
        "the pod states its connection limit"
    );
    assert!(check(names, "k8s/") >= 5);
}

#[test]
fn systemd_file_limit_covers_the_connection_limit() {
    let unit = read("systemd/gpu-advisor.service");
    let value = |key: &str| -> u64 {
        unit.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{key} in the unit"))
    };
    let files = value("LimitNOFILE=");
    let conns = value("Environment=GPU_ADVISOR_MAX_CONNECTIONS=");
    assert!(
        files >= conns + 256,
        "LimitNOFILE={files} for {conns} connections"
    );
}

#[test]
fn dockerfile_and_systemd_name_known_variables() {
    let docker = read("Dockerfile");
    assert!(docker.contains("HEALTHCHECK") && docker.contains("USER advisor"));
    let env: Vec<String> = docker
        .lines()
        .filter_map(|l| l.strip_prefix("ENV "))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim().to_string()))
        .collect();
    check(env, "Dockerfile");
    let unit = read("systemd/gpu-advisor.service");
    let env: Vec<String> = unit
        .lines()
        .filter_map(|l| l.strip_prefix("Environment="))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim().to_string()))
        .filter(|k| is_var(k))
        .collect();
    assert!(check(env, "systemd unit") >= 1);
}

use serde::Deserialize;
