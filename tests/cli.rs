//! The command-line contract, through the real binary: output shapes, exit codes, and that no
//! odd input makes it panic.

use std::process::{Command, Output};

mod harness;

use harness::FleetDir;

fn flotilla(args: &[&str]) -> Output {
    let state = tempfile::tempdir().expect("temp dir");
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .output()
        .expect("run flotilla")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn clusters_json_follows_the_contract() {
    let output = flotilla(&["clusters", "--demo", "-o", "json"]);
    // The demo has an unreachable cluster: some clusters failed, exit 3.
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    let items = value["items"].as_array().expect("an items array");
    assert!(
        items.iter().any(|item| item["health"] == "Unreachable"),
        "{items:?}"
    );
    assert!(
        items.len() >= 12,
        "at least 12 clusters, got {}",
        items.len()
    );
    for item in items {
        for key in [
            "name",
            "context",
            "labels",
            "taints",
            "provider",
            "region",
            "health",
            "version",
            "latencyMs",
            "message",
        ] {
            assert!(item.get(key).is_some(), "{key} missing in {item}");
        }
        assert!(item["labels"].is_object());
        assert!(item["taints"].is_array());
        let health = item["health"].as_str().expect("health is a string");
        assert!(
            [
                "Ready",
                "NotReady",
                "Unreachable",
                "Unauthorized",
                "Unknown"
            ]
            .contains(&health),
            "{health} is not a contract health"
        );
    }
    let not_ready = items
        .iter()
        .filter(|item| item["health"] != "Ready")
        .count();
    assert!(not_ready >= 1, "at least one cluster is not Ready");
    let unreachable = items
        .iter()
        .find(|item| item["health"] == "Unreachable")
        .expect("an unreachable cluster");
    assert!(
        unreachable["latencyMs"].is_null(),
        "no latency for a cluster that never answered"
    );
}

#[test]
fn clusters_yaml_and_table_say_the_same() {
    let yaml = flotilla(&["--demo", "clusters", "-o", "yaml"]);
    assert_eq!(yaml.status.code(), Some(3), "{}", stderr(&yaml));
    let parsed: serde_json::Value = serde_saphyr::from_slice(&yaml.stdout).expect("valid YAML");
    let json = flotilla(&["clusters", "--demo", "-o", "json"]);
    let from_json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("valid JSON");
    assert_eq!(parsed, from_json, "yaml is the same structure as json");

    let table = flotilla(&["clusters", "--demo"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.starts_with("NAME"), "{text}");
    assert!(text.contains("prod-eu-west-1") && text.contains("Unreachable"));
}

#[test]
fn the_same_seed_gives_the_same_clusters() {
    let first = flotilla(&["clusters", "--demo", "--demo-seed", "11", "-o", "json"]);
    let second = flotilla(&["clusters", "--demo", "--demo-seed", "11", "-o", "json"]);
    assert_eq!(first.stdout, second.stdout);
}

#[test]
fn demo_scale_synthesises_the_requested_fleet() {
    let output = flotilla(&["clusters", "--demo-scale", "300,5", "-o", "json"]);
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_eq!(value["items"].as_array().map(Vec::len), Some(300));
    let unreachable = value["items"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|item| item["health"] == "Unreachable");
    assert_eq!(
        output.status.code(),
        Some(if unreachable { 3 } else { 0 }),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_bad_flag_is_a_usage_error_with_exit_2() {
    let output = flotilla(&["--no-such-flag"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--no-such-flag"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_bad_selector_on_a_hub_is_an_input_error_before_any_hub_is_reached() {
    for command in ["status", "drift", "render"] {
        let output = flotilla(&[command, "--hub", "no-such-context", "-l", "app in (web"]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("-l/--selector \"app in (web\""),
            "{command}: {}",
            stderr(&output)
        );
        assert!(
            !stderr(&output).contains("no-such-context"),
            "{command}: the hub was not asked: {}",
            stderr(&output)
        );
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}{}", stdout(output), stderr(output)))
}

/// The rows of a `-o json` answer about one cluster and object name.
fn rows<'a>(value: &'a serde_json::Value, cluster: &str, name: &str) -> Vec<&'a serde_json::Value> {
    value["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|i| i["cluster"] == cluster && i["resource"]["name"] == name)
                .collect()
        })
        .unwrap_or_default()
}

/// The demo's scenario: `kubectl-scale` set Deployment/shop/inventory to 9 replicas on
/// prod-us-east-2, Service/shop/checkout is not applied yet, edge-store-0003 is unreachable.
const DRIFTED: &str = "prod-us-east-2";

#[test]
fn plan_on_the_demo_shows_diffs_the_conflict_and_the_unreachable_store() {
    let all = flotilla(&["plan", "--demo", "-o", "json"]);
    assert_eq!(all.status.code(), Some(3), "{}", stderr(&all));
    let value = json(&all);
    let conflict = rows(&value, DRIFTED, "inventory");
    assert_eq!(conflict[0]["action"], "conflict", "{conflict:?}");
    assert!(
        conflict[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("kubectl-scale")),
        "{conflict:?}"
    );
    let unreachable = rows(&value, "edge-store-0003", "inventory");
    assert_eq!(unreachable[0]["action"], "error", "{unreachable:?}");

    let scoped = flotilla(&["plan", "--demo", "--cluster", DRIFTED]);
    assert_eq!(scoped.status.code(), Some(1), "{}", stderr(&scoped));
    let text = stdout(&scoped);
    assert!(
        text.lines().any(|line| line.split_whitespace().eq([
            "create",
            "Service/shop/checkout",
            "prod-us-east-2"
        ])),
        "{text}"
    );
    assert!(text.contains("+kind: Service"), "{text}");
    assert!(text.contains("1 to create"), "{text}");

    let same_seed = flotilla(&["plan", "--demo", "-o", "json"]);
    assert_eq!(json(&same_seed), value, "the same seed plans the same");
}

#[test]
fn drift_on_the_demo_names_the_cluster_path_and_manager() {
    let all = flotilla(&["drift", "--demo", "-o", "json"]);
    assert_eq!(all.status.code(), Some(3), "{}", stderr(&all));
    // The unreachable store is one line, not one per object placed there.
    let errors: Vec<String> = stderr(&all)
        .lines()
        .filter(|line| line.starts_with("error:"))
        .map(str::to_string)
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("error: edge-store-0003: unreachable")
            && errors[0].ends_with("objects)"),
        "{errors:?}"
    );
    let value = json(&all);
    let drifted = rows(&value, DRIFTED, "inventory");
    let field = &drifted[0]["fields"][0];
    assert_eq!(field["path"], "/spec/replicas");
    assert_eq!(field["desired"], 3);
    assert_eq!(field["live"], 9);
    assert_eq!(field["manager"], "kubectl-scale");

    let scoped = flotilla(&["drift", "--demo", "--cluster", DRIFTED]);
    assert_eq!(scoped.status.code(), Some(1), "{}", stderr(&scoped));
    let text = stdout(&scoped);
    assert!(
        text.lines()
            .next()
            .is_some_and(|header| header.split_whitespace().eq([
                "CLUSTER", "RESOURCE", "PATH", "DESIRED", "LIVE", "CHANGED", "BY"
            ])),
        "{text}"
    );
    assert!(
        text.lines().any(|line| line.split_whitespace().eq([
            "prod-us-east-2",
            "Deployment/shop/inventory",
            "/spec/replicas",
            "3",
            "9",
            "kubectl-scale"
        ])),
        "{text}"
    );
    let clean = flotilla(&["drift", "--demo", "--cluster", "batch-ap-south-1"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
}

#[test]
fn apply_on_the_demo_asks_first_conflicts_and_forces_as_on_live_clusters() {
    let unasked = flotilla(&["apply", "--demo", "--cluster", DRIFTED]);
    assert_eq!(unasked.status.code(), Some(2), "{}", stderr(&unasked));
    assert!(stderr(&unasked).contains("--yes"), "{}", stderr(&unasked));
    let readonly = flotilla(&["apply", "--demo", "--readonly", "--yes"]);
    assert_eq!(readonly.status.code(), Some(2), "{}", stderr(&readonly));

    let plain = flotilla(&[
        "apply",
        "--demo",
        "--yes",
        "--cluster",
        DRIFTED,
        "-o",
        "json",
    ]);
    assert_eq!(plain.status.code(), Some(3), "{}", stderr(&plain));
    let value = json(&plain);
    assert_eq!(rows(&value, DRIFTED, "inventory")[0]["result"], "conflict");
    assert_eq!(
        rows(&value, DRIFTED, "checkout").len(),
        2,
        "Deployment and Service"
    );
    assert!(
        rows(&value, DRIFTED, "checkout")
            .iter()
            .all(|row| row["result"] == "applied"),
        "{value}"
    );

    let forced = flotilla(&[
        "apply",
        "--demo",
        "--yes",
        "--force-conflicts",
        "--cluster",
        DRIFTED,
    ]);
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert!(
        stdout(&forced).contains("8 applied, 0 pruned, 0 failed; 1 of 1 clusters complete"),
        "{}",
        stdout(&forced)
    );
    assert!(
        stderr(&forced).contains("starts afresh from --demo-seed in every run"),
        "{}",
        stderr(&forced)
    );

    let refused = flotilla(&[
        "apply",
        "--demo",
        "--yes",
        "--cluster",
        "prod-ap-south-1",
        "--resource",
        "Deployment/shop/checkout",
        "-o",
        "json",
    ]);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(
        stdout(&refused).contains("admission webhook"),
        "{}",
        stdout(&refused)
    );
}

#[test]
fn repair_on_the_demo_reverts_the_drift_and_never_writes_the_built_in_fleet() {
    let unasked = flotilla(&["repair", "--demo", "--revert"]);
    assert_eq!(unasked.status.code(), Some(2), "{}", stderr(&unasked));

    let revert = flotilla(&[
        "repair",
        "--demo",
        "--revert",
        "--cluster",
        DRIFTED,
        "--yes",
        "-o",
        "json",
    ]);
    assert_eq!(revert.status.code(), Some(0), "{}", stderr(&revert));
    let value = json(&revert);
    let row = rows(&value, DRIFTED, "inventory");
    assert_eq!(row.len(), 1, "{value}");
    assert_eq!(row[0]["path"], "/spec/replicas");
    assert_eq!(row[0]["manager"], "kubectl-scale");
    assert_eq!(row[0]["result"], "done");

    let adopt = flotilla(&[
        "repair",
        "--demo",
        "--adopt",
        "--cluster",
        DRIFTED,
        "--yes",
        "-o",
        "json",
    ]);
    assert_eq!(adopt.status.code(), Some(0), "{}", stderr(&adopt));
    let value = json(&adopt);
    let row = rows(&value, DRIFTED, "inventory");
    assert_eq!(row[0]["result"], "skipped", "{value}");
    assert!(
        row[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("demo/karmada-shop.yaml")),
        "{value}"
    );
    assert_eq!(value["files"], serde_json::json!([]));
    assert!(
        value["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains("nothing was saved")),
        "{value}"
    );

    let ignore = flotilla(&[
        "repair",
        "--demo",
        "--ignore",
        "--cluster",
        DRIFTED,
        "--yes",
    ]);
    assert_eq!(ignore.status.code(), Some(0), "{}", stderr(&ignore));
    assert!(
        stdout(&ignore).contains("Repair: 0 done, 1 skipped, 0 failed."),
        "{}",
        stdout(&ignore)
    );
}

#[test]
fn status_on_the_demo_lists_every_cell_with_the_contract_shape_and_exit_codes() {
    let all = flotilla(&["status", "--demo", "-o", "json"]);
    assert_eq!(all.status.code(), Some(3), "{}", stderr(&all));
    let value = json(&all);
    let items = value["items"].as_array().expect("an items array");
    for item in items {
        for key in ["cluster", "resource", "sync", "health", "reason", "since"] {
            assert!(item.get(key).is_some(), "{key} missing in {item}");
        }
    }
    let sync = |cluster: &str, name: &str| -> Vec<String> {
        rows(&value, cluster, name)
            .iter()
            .filter_map(|row| row["sync"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(sync(DRIFTED, "inventory"), ["Drifted"]);
    let drifted = rows(&value, DRIFTED, "inventory");
    assert!(
        drifted[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("/spec/replicas changed by kubectl-scale")),
        "{drifted:?}"
    );
    assert_eq!(sync(DRIFTED, "checkout"), ["InSync", "Pending"]);
    assert_eq!(sync("edge-store-0003", "inventory"), ["Unreachable"]);
    let health = |cluster: &str, kind: &str, name: &str| -> Vec<String> {
        rows(&value, cluster, name)
            .iter()
            .filter(|row| row["resource"]["kind"] == kind)
            .filter_map(|row| row["health"].as_str().map(str::to_string))
            .collect()
    };
    // The live Deployment is assessed; a kind without health has none; what the cluster
    // does not hold is Missing; an unreachable cluster cannot say.
    assert_eq!(health(DRIFTED, "Deployment", "checkout"), ["Healthy"]);
    assert_eq!(health(DRIFTED, "Service", "checkout"), ["Missing"]);
    assert_eq!(health(DRIFTED, "ConfigMap", "registry-config"), ["None"]);
    assert_eq!(
        health("edge-store-0003", "Deployment", "inventory"),
        ["Unknown"]
    );

    assert!(
        items.iter().any(
            |i| i["sync"] == "NotPlaced" && i["reason"].as_str().is_some_and(|r| !r.is_empty())
        ),
        "not-placed cells come with their reason"
    );

    let table = flotilla(&["status", "--demo", "--cluster", DRIFTED]);
    assert_eq!(table.status.code(), Some(1), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(text.starts_with("RESOURCE "), "{text}");
    assert!(
        text.contains("prod-us-east-2   1 Drifted, 1 Pending, 4 InSync"),
        "{text}"
    );
    assert!(text.contains("Status: "), "{text}");

    let in_sync = flotilla(&[
        "status",
        "--demo",
        "--readonly",
        "--cluster",
        "batch-ap-south-1",
    ]);
    assert_eq!(in_sync.status.code(), Some(0), "{}", stdout(&in_sync));

    let typo = flotilla(&["status", "--demo", "--cluster", "nope"]);
    assert_eq!(typo.status.code(), Some(2), "{}", stderr(&typo));
}

#[test]
fn a_misspelt_cluster_or_resource_gets_a_did_you_mean() {
    for (args, expected) in [
        (
            &["status", "--demo", "--cluster", "prod-us-east2"][..],
            "--cluster prod-us-east2: no such cluster in the fleet; did you mean prod-us-east-2?",
        ),
        (
            &["plan", "--demo", "--resource", "Deployment/shop/checkot"][..],
            "--resource Deployment/shop/checkot: no such resource in the fleet; did you mean Deployment/shop/checkout?",
        ),
        (
            &["render", "--demo", "--cluster", "prod-eu-wset-1"][..],
            "--cluster prod-eu-wset-1: no such cluster in the fleet; did you mean prod-eu-west-1?",
        ),
    ] {
        let output = flotilla(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains(expected),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stderr(&output).contains("known: "), "{}", stderr(&output));
    }
    // A name near none of the fleet's gets no guess.
    let far = flotilla(&["status", "--demo", "--cluster", "zzzzzzzz"]);
    assert!(!stderr(&far).contains("did you mean"), "{}", stderr(&far));
}

#[test]
fn resource_takes_kubectls_short_names_and_plurals() {
    let full = flotilla(&[
        "status",
        "--demo",
        "--resource",
        "Deployment/payments/ledger",
        "-o",
        "json",
    ]);
    for typed in ["deploy/payments/ledger", "deployments/payments/ledger"] {
        let short = flotilla(&["status", "--demo", "--resource", typed, "-o", "json"]);
        assert_eq!(
            short.status.code(),
            full.status.code(),
            "{typed}: {}",
            stderr(&short)
        );
        let items = |output: &Output| json(output)["items"].as_array().map(Vec::len);
        assert_eq!(items(&short), items(&full), "{typed}");
        assert!(items(&short).is_some_and(|n| n > 0), "{typed}");
    }
}

#[test]
fn status_of_one_resource_carries_its_masked_live_object_and_recent_events() {
    let degraded = flotilla(&[
        "status",
        "--demo",
        "--resource",
        "Deployment/payments/ledger",
        "--cluster",
        "prod-eu-west-2",
        "-o",
        "json",
    ]);
    assert_eq!(degraded.status.code(), Some(1), "{}", stderr(&degraded));
    let value = json(&degraded);
    let item = &value["items"][0];
    assert_eq!(item["health"], "Degraded", "{item}");
    assert_eq!(item["live"]["status"]["availableReplicas"], 1, "{item}");
    let events = item["events"].as_array().expect("the cell's Events");
    let reasons: Vec<&str> = events.iter().filter_map(|e| e["reason"].as_str()).collect();
    assert_eq!(
        reasons,
        ["BackOff", "ProgressDeadlineExceeded", "ScalingReplicaSet"],
        "newest first, the crashing pod's with the Deployment's: {item}"
    );
    assert_eq!(events[0]["type"], "Warning");
    assert!(
        events[0]["object"]
            .as_str()
            .is_some_and(|o| o.starts_with("Pod payments/ledger-"))
    );
    assert!(
        events[1]["ageSeconds"]
            .as_u64()
            .is_some_and(|age| age >= 240)
    );
    // The chain from the template to its pods, as the console's object view draws it: the
    // template and its policy where the fleet writes them, the object in its cell's state,
    // the crashing pod, the warnings among its Events.
    let chain = item["chain"].as_array().expect("the cell's chain");
    let steps: Vec<&str> = chain.iter().filter_map(|l| l["step"].as_str()).collect();
    assert_eq!(
        steps,
        ["template", "policy", "object", "pods", "events"],
        "{item}"
    );
    let (template, policy) = (&chain[0], &chain[1]);
    assert_eq!(template["name"], "Deployment/payments/ledger");
    assert!(
        template["at"]
            .as_str()
            .is_some_and(|at| at.starts_with("demo/") && at.contains(".yaml:")),
        "{template}"
    );
    assert_eq!(policy["status"], "placed here", "{policy}");
    assert_eq!(chain[2]["status"], "Degraded");
    assert!(
        chain[3]["status"]
            .as_str()
            .is_some_and(|s| s.contains("CrashLoopBackOff")),
        "{}",
        chain[3]
    );
    let warnings = events.iter().filter(|e| e["type"] == "Warning").count();
    assert_eq!(chain[4]["status"], format!("{warnings} warnings"));

    let table = flotilla(&[
        "status",
        "--demo",
        "--resource",
        "Deployment/payments/ledger",
        "--cluster",
        "prod-eu-west-2",
    ]);
    let text = stdout(&table);
    assert!(
        text.lines().next().is_some_and(|h| h.ends_with("EVENT")),
        "{text}"
    );
    assert!(
        text.contains("BackOff: Back-off restarting failed container ledger in pod ledger-"),
        "{text}"
    );

    let secret = flotilla(&[
        "status",
        "--demo",
        "--resource",
        "Secret/payments/ledger-db",
        "-o",
        "json",
    ]);
    let text = stdout(&secret);
    let secret_value = json(&secret);
    let placed = rows(&secret_value, "prod-eu-west-1", "ledger-db");
    assert_eq!(placed[0]["live"]["data"]["password"], "***", "{text}");
    assert!(
        !text.contains("not-a-real-password") && !text.contains("bm90LWEtcmVhbC1wYXNzd29yZA"),
        "{text}"
    );

    // Without --resource the shape stays as it was: no live objects, no Events, nothing
    // aggregated.
    let all = json(&flotilla(&[
        "status",
        "--demo",
        "--cluster",
        "prod-eu-west-2",
        "-o",
        "json",
    ]));
    assert!(all["items"].as_array().is_some_and(|items| {
        items
            .iter()
            .all(|i| i.get("live").is_none() && i.get("events").is_none())
    }));
    assert!(all.get("aggregated").is_none(), "{all}");
}

#[test]
fn status_of_a_named_resource_aggregates_its_members_live_status_as_karmada_would() {
    let output = flotilla(&[
        "status",
        "--demo",
        "--resource",
        "Deployment/shop/inventory",
        "-o",
        "json",
    ]);
    let value = json(&output);
    let aggregated = value["aggregated"]
        .as_array()
        .and_then(|list| list.first())
        .unwrap_or_else(|| panic!("no aggregated status: {value}"));
    assert_eq!(aggregated["resource"]["name"], "inventory");
    assert_eq!(aggregated["rule"], "apps/Deployment (built-in)");
    // The sum of what the live objects read for the cells report, cluster by cluster.
    let items = value["items"].as_array().expect("items");
    let summed = |field: &str| -> i64 {
        items
            .iter()
            .filter(|item| item["resource"]["name"] == "inventory")
            .filter_map(|item| item["live"]["status"][field].as_i64())
            .sum()
    };
    assert!(summed("readyReplicas") > 0, "{value}");
    assert_eq!(
        aggregated["status"]["readyReplicas"].as_i64(),
        Some(summed("readyReplicas")),
        "{value}"
    );
    assert_eq!(
        aggregated["status"]["replicas"].as_i64(),
        Some(summed("replicas")),
        "{value}"
    );
    let clusters = aggregated["clusters"].as_array().expect("clusters");
    assert!(clusters.len() > 1, "{aggregated}");
}

#[test]
fn a_missing_fleet_directory_is_an_input_error() {
    let output = flotilla(&["clusters", "--fleet", "/nonexistent/fleet"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("/nonexistent/fleet"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn odd_arguments_never_panic() {
    let odd: &[&[&str]] = &[
        &[""],
        &["-o"],
        &["-o", "xml", "clusters"],
        &["--demo-scale", "0,0", "clusters"],
        &["--demo-scale", "abc", "clusters"],
        &["--demo-scale", "18446744073709551616,1", "clusters"],
        &["--demo-seed", "-1", "clusters"],
        &["repair"],
        &["repair", "--revert", "--adopt"],
        &["render", "--cluster"],
        &["watch", "--interval", "soon"],
        &["clusters", "--context", "\u{7f}*"],
        &["\u{1b}[31m"],
        &["--fleet", "", "clusters"],
        &[
            "--theme",
            "",
            "--keymap",
            "../../etc/passwd",
            "clusters",
            "--demo",
        ],
        &["help", "nope"],
    ];
    for args in odd {
        let output = flotilla(args);
        let err = stderr(&output);
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        let code = output.status.code();
        // 3: the demo's clusters include an unreachable one.
        assert!(
            matches!(code, Some(0 | 2 | 3)),
            "{args:?} exited {code:?}: {err}"
        );
    }
}

#[test]
fn the_wall_without_clusters_says_how_to_name_them_before_touching_the_terminal() {
    let output = flotilla(&["watch", "--fleet", "/nonexistent/fleet"]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("no clusters"), "{text}");
    assert!(text.contains("--context GLOB"), "{text}");
    assert!(
        output.stdout.is_empty(),
        "nothing may be drawn: {:?}",
        output.stdout
    );
}

#[test]
fn repair_refuses_bad_input_and_never_mutates_without_yes_or_a_terminal() {
    let fleet = tempfile::tempdir().expect("temp dir");
    let dir = fleet.path().to_str().expect("utf-8 path");
    // `output()` gives the child no terminal: without --yes nothing may change.
    let output = flotilla(&["repair", "--revert", "--fleet", dir, "--cluster", "a"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no terminal to ask on") && stderr(&output).contains("--yes"),
        "{}",
        stderr(&output)
    );
    let output = flotilla(&["repair", "--ignore", "--path", "spec/replicas", "--yes"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--path \"spec/replicas\" is not a JSON pointer"),
        "{}",
        stderr(&output)
    );
    let output = flotilla(&["repair", "--adopt", "--resource", "web", "--yes"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("expected KIND/NAMESPACE/NAME"),
        "{}",
        stderr(&output)
    );
    let output = flotilla(&["repair", "--revert", "--readonly", "--yes"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--readonly"),
        "{}",
        stderr(&output)
    );
    let output = flotilla(&[
        "repair",
        "--ignore",
        "--yes",
        "--fleet",
        "/nonexistent/fleet",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("/nonexistent/fleet"),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_dir(fleet.path()).expect("list").count(),
        0,
        "nothing was written to the fleet directory"
    );
}

/// Runs flotilla with `env`, killed (and the test failed) if it has not finished within a
/// minute: what is under test is that it never hangs.
fn flotilla_bounded(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let state = tempfile::tempdir().expect("temp dir");
    let mut command = Command::new(env!("CARGO_BIN_EXE_flotilla"));
    command
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let child = command.spawn().expect("run flotilla");
    let id = child.id();
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match wait.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(output) => output.expect("wait for flotilla"),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &id.to_string()])
                .status();
            panic!("flotilla {args:?} did not finish");
        }
    }
}

/// A kubeconfig whose context `ctx` reaches `server` as a user with `user` (YAML flow map).
fn kubeconfig_file(dir: &std::path::Path, server: &str, user: &str, extra: &str) -> String {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"{server}\"{extra}}}\nusers:\n- name: u\n  user: {user}\ncontexts:\n- name: otp-ctx\n  context: {{cluster: c, user: u}}\n"
        ),
    )
    .expect("write kubeconfig");
    path.display().to_string()
}

fn plugin(dir: &std::path::Path, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("plugin.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write plugin");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!(
        "{{exec: {{apiVersion: client.authentication.k8s.io/v1, command: {}, interactiveMode: IfAvailable}}}}",
        path.display()
    )
}

fn clusters_json(kubeconfig: &str) -> (Output, serde_json::Value) {
    let output = flotilla_bounded(
        &[
            "--fleet",
            "/nonexistent",
            "--kubeconfig",
            kubeconfig,
            "--context",
            "otp-ctx",
            "clusters",
            "-o",
            "json",
        ],
        &[],
    );
    let json = serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
    (output, json)
}

/// `clusters -o json` with a kubeconfig (written in `dir`) whose user is a credential plugin
/// running `body`, for a server nothing serves: the output, its JSON, and the kubeconfig.
fn clusters_with_plugin(dir: &std::path::Path, body: &str) -> (Output, serde_json::Value, String) {
    let user = plugin(dir, body);
    let config = kubeconfig_file(dir, "https://127.0.0.1:9", &user, "");
    let (output, json) = clusters_json(&config);
    (output, json, config)
}

fn everything(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr(output)
    )
}

#[test]
fn a_credential_plugin_that_waits_for_a_person_ends_as_needs_login() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (output, json, _) =
        clusters_with_plugin(dir.path(), "printf 'OTP: ' >&2\nread otp\nsleep 300");
    let message = json["items"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("needs login") && message.contains("kubectl --context otp-ctx get ns"),
        "{}",
        everything(&output)
    );
}

#[test]
fn a_sleeping_credential_plugin_costs_only_its_deadline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (output, json, _) = clusters_with_plugin(dir.path(), "sleep 300");
    let message = json["items"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("needs login") && message.contains("otp-ctx"),
        "{}",
        everything(&output)
    );
}

#[test]
fn a_failing_plugin_never_shows_the_token_it_printed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (output, json, config) = clusters_with_plugin(
        dir.path(),
        "echo '{\"status\":{\"token\":\"tok-LEAKED-9f8e7d\"}}'\necho 'refresh failed' >&2\nexit 1",
    );
    let all = everything(&output);
    assert!(!all.contains("tok-LEAKED-9f8e7d"), "{all}");
    let message = json["items"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("needs login"), "{all}");
    let table = flotilla_bounded(
        &[
            "--fleet",
            "/nonexistent",
            "--kubeconfig",
            &config,
            "--context",
            "otp-ctx",
            "clusters",
        ],
        &[],
    );
    assert!(!everything(&table).contains("tok-LEAKED-9f8e7d"));
}

#[test]
fn a_proxy_password_never_appears() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = kubeconfig_file(
        dir.path(),
        "https://127.0.0.1:9",
        "{token: abcdef}",
        ", proxy-url: \"http://u:hunter2secret@127.0.0.1:9/\"",
    );
    let (output, json) = clusters_json(&config);
    let all = everything(&output);
    assert!(!all.contains("hunter2secret"), "{all}");
    assert!(json["items"][0]["message"].is_string(), "{all}");
}

#[test]
fn a_password_in_the_server_url_never_appears_in_output_or_log() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("flotilla.log");
    let config = kubeconfig_file(
        dir.path(),
        "https://admin:pa55w0rdXYZ@127.0.0.1:9",
        "{}",
        "",
    );
    let log_arg = log.display().to_string();
    let output = flotilla_bounded(
        &[
            "--fleet",
            "/nonexistent",
            "--kubeconfig",
            &config,
            "--context",
            "otp-ctx",
            "--log-file",
            &log_arg,
            "clusters",
            "-o",
            "json",
        ],
        &[("FLOTILLA_LOG", std::ffi::OsStr::new("trace"))],
    );
    let all = everything(&output);
    assert!(!all.contains("pa55w0rdXYZ"), "{all}");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!logged.contains("pa55w0rdXYZ"), "{logged}");
}

#[test]
fn kubeconfig_files_that_do_not_exist_are_skipped_as_kubectl_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let good = kubeconfig_file(dir.path(), "https://127.0.0.1:9", "{token: abcdef}", "");
    let missing = dir.path().join("missing").display().to_string();
    let joined = std::env::join_paths([good.as_str(), missing.as_str()]).expect("join");
    let output = flotilla_bounded(
        &[
            "--fleet",
            "/nonexistent",
            "--context",
            "otp-ctx",
            "clusters",
            "-o",
            "json",
        ],
        &[("KUBECONFIG", joined.as_os_str())],
    );
    // Listed, and unreachable (nothing serves it): exit 3.
    assert_eq!(output.status.code(), Some(3), "{}", everything(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(json["items"][0]["context"], "otp-ctx");
    assert!(stderr(&output).contains("missing"), "{}", stderr(&output));
    let explicit = flotilla_bounded(
        &[
            "--fleet",
            "/nonexistent",
            "--kubeconfig",
            &missing,
            "--context",
            "otp-ctx",
            "clusters",
        ],
        &[],
    );
    assert_eq!(explicit.status.code(), Some(2), "{}", everything(&explicit));
}

#[test]
fn bare_flotilla_without_a_fleet_suggests_the_demo() {
    let dir = tempfile::tempdir().expect("temp dir");
    for args in [&[][..], &["clusters"]] {
        let output = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .args(args)
            .current_dir(dir.path())
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env_remove("KUBECONFIG")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run flotilla");
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        let message = stderr(&output);
        assert!(
            message.contains("there is no fleet directory fleet"),
            "{message}"
        );
        assert!(message.contains("`flotilla demo`"), "{args:?}: {message}");
    }
}

#[test]
fn clusters_says_when_a_context_glob_selects_none_of_the_fleets_clusters() {
    // The README's first command on the karmada-placement sample: its clusters are m1..m6.
    let fleet =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fleets/karmada-placement");
    let fleet = fleet.display().to_string();
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("config");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
    )
    .expect("kubeconfig");
    let kubeconfig = kubeconfig.display().to_string();
    let output = flotilla(&[
        "--kubeconfig",
        &kubeconfig,
        "--fleet",
        &fleet,
        "--context",
        "prod-*",
        "--context",
        "staging",
        "clusters",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message
            .contains("--context prod-*, --context staging: selects none of the fleet's clusters"),
        "{message}"
    );
    assert!(message.contains("the fleet has: m1"), "{message}");
}

#[test]
fn a_cluster_no_context_reaches_has_no_access_and_clusters_exits_3() {
    let fleet = FleetDir::new().clusters(
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: far-away}\n",
    );
    let config = kubeconfig_file(fleet.root(), "https://127.0.0.1:9", "{token: t}", "");
    let fleet_arg = fleet.path().display().to_string();
    let output = flotilla_bounded(
        &["--fleet", &fleet_arg, "clusters", "-o", "json"],
        &[("KUBECONFIG", std::ffi::OsStr::new(&config))],
    );
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    let item = &value["items"][0];
    // Not Unreachable: there is nothing to reach it through, and the message says what to add.
    assert_eq!(item["health"], "NoAccess", "{item}");
    let message = item["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("no access") && message.contains("far-away"),
        "{message}"
    );
}
